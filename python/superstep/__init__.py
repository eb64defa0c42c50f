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

from ._core import (  # noqa: E402
    run, engine, have_mpi, have_fft, mpi_world,
    Context, Slot, Machine, Message, Persistent,
    SuperstepError, SyncError, Aborted, CapacityError, BSPError,
)
from . import apps  # noqa: E402,F401

__version__ = "0.1.0"
__all__ = ["run", "engine", "have_mpi", "have_fft", "mpi_world", "Context", "Slot",
           "Persistent", "Machine", "Message", "SuperstepError", "SyncError", "Aborted", "CapacityError",
           "BSPError",
           "apps"]
