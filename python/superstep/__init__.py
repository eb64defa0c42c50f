"""superstep: Bulk Synchronous Parallel programs over NumPy arrays.

    import numpy as np, superstep

    def spmd(ctx):
        x = np.full(4, ctx.pid, dtype=np.float64)
        with ctx.register(np.zeros(4 * ctx.nprocs)) as slot:
            for q in range(ctx.nprocs):
                ctx.put(x, q, slot, offset=4 * ctx.pid)
            ctx.sync()
            return slot.array.sum()

    print(superstep.run(spmd, p=4))

On threads (the default engine) run() starts p threads; under
``bsprun --engine mpi -n P python3 prog.py`` every rank runs the script and
run() spans the ranks. See docs/python.md.
"""
import os as _os

# Every MPI rank runs the Python script (as with mpi4py) and hooks into the
# run with lpf_hook: the library must not take rank > 0 into its service
# loop when it is loaded (see docs/mpi.md, "What runs where").
_os.environ["SUPERSTEP_MPI_NO_AUTO_INIT"] = "1"


def _whole_lines():
    """On MPI ranks (several processes write to one stream that the launcher
    merges), unbuffered text streams (python3 -u, PYTHONUNBUFFERED=1) write
    print's text and its newline in two write(2) calls, and another rank's
    line can land in between. Such streams get a buffer that is flushed at
    each newline: every line leaves in one write."""
    import atexit
    import io
    import sys
    if engine() not in ("mpi", "hybrid"):     # as bsprun or a plain mpirun sets it
        return
    for name in ("stdout", "stderr"):
        s = getattr(sys, name)
        if s is None or s is not getattr(sys, "__%s__" % name):
            continue
        if not isinstance(getattr(s, "buffer", None), io.FileIO):
            continue
        try:
            s.flush()
            raw = io.FileIO(s.fileno(), "w", closefd=False)
            new = io.TextIOWrapper(io.BufferedWriter(raw, 1 << 16), encoding=s.encoding,
                                   errors=s.errors, line_buffering=True)
        except (OSError, ValueError, AttributeError):
            continue
        setattr(sys, name, new)
        atexit.register(new.flush)     # a last line without its newline


from ._core import (  # noqa: E402
    engine, have_mpi, have_fft, mpi_world,
    Context, Slot, Machine, Message, Persistent,
    SuperstepError, SyncError, Aborted, CapacityError, BSPError, ProcessCountWarning,
)
from ._api import run  # noqa: E402

_whole_lines()

from . import apps  # noqa: E402,F401

__version__ = "0.1.0"
__all__ = ["run", "engine", "have_mpi", "have_fft", "mpi_world", "Context", "Slot",
           "Persistent", "Machine", "Message", "SuperstepError", "SyncError", "Aborted", "CapacityError",
           "BSPError", "ProcessCountWarning",
           "apps"]
