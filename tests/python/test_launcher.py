"""superstep straight under mpirun (no bsprun): the library picks the MPI
engine from the launcher's environment, so `mpirun -n 2 python3 prog.py`
is one run of 2 processes (docs/mpi.md, "Plain mpirun")."""
import os
import shutil
import subprocess
import sys

import pytest

import superstep

MPIRUN = shutil.which("mpirun") or shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(not (MPIRUN and superstep.have_mpi()),
                                reason="needs mpirun and the MPI engine")

PROG = """
import superstep
def spmd(ctx):
    print("launcher: process %d of %d on %s" % (ctx.pid, ctx.nprocs, superstep.engine()), flush=True)
superstep.run(spmd)
"""


def _mpirun(n, **extra):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_", "SLURM_")) or k == "SUPERSTEP_ENGINE":
            del env[k]
    env.update(extra)
    cmd = [MPIRUN, "-n", str(n)]
    ver = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in ver or "OpenRTE" in ver:
        cmd += ["--oversubscribe"]
        if os.geteuid() == 0:
            cmd += ["--allow-run-as-root"]
    cmd += [sys.executable, "-c", PROG]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_plain_mpirun_is_one_run():
    r = _mpirun(2)
    assert r.returncode == 0, r.stderr
    for s in range(2):
        assert "launcher: process %d of 2 on mpi" % s in r.stdout, r.stdout + r.stderr


def test_contradicting_engine_stops():
    r = _mpirun(2, SUPERSTEP_ENGINE="pthread")
    assert r.returncode != 0
    assert "launcher: process" not in r.stdout
    lines = [l for l in r.stderr.splitlines() if l.startswith("superstep: ")]
    assert len(lines) == 1 and "SUPERSTEP_ENGINE=pthread" in lines[0], r.stderr
