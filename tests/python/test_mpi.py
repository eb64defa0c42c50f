"""superstep under bsprun --engine mpi: every rank runs the Python script."""
import os
import shutil
import subprocess
import sys

import pytest

import superstep

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _bsprun():
    cands = [os.environ.get("SUPERSTEP_BSPRUN"), os.path.join(ROOT, "build", "tools", "bsprun", "bsprun"),
             shutil.which("bsprun")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


BSPRUN = _bsprun()
pytestmark = pytest.mark.skipif(not (BSPRUN and superstep.have_mpi()),
                                reason="needs bsprun and the MPI engine")


def mpirun(n, mode, timeout=120, **extra_env):
    env = dict(os.environ)
    env.update(extra_env)
    env.pop("SUPERSTEP_ENGINE", None)
    env["SUPERSTEP_SYNC_TIMEOUT"] = "60"
    cmd = [BSPRUN, "--engine", "mpi", "-n", str(n), sys.executable, os.path.join(HERE, "mpi_prog.py"), mode]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_mpi_every_call(n):
    r = mpirun(n, "ok")
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(n):
        # on MPI, run() returns each rank's own process's result
        assert "OK rank %d of %d: 'ok' %d" % (rank, n, rank * 10) in r.stdout


@pytest.mark.parametrize("n", [2, 3])
def test_mpi_collective_buffer(n):
    r = mpirun(n, "cache")
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(n):
        assert "CACHE rank %d of %d: cached ok" % (rank, n) in r.stdout, r.stdout + r.stderr


def test_mpi_exception_ends_the_job():
    r = mpirun(3, "raise")
    assert r.returncode != 0
    assert "NOT REACHED" not in r.stdout
    # the uncaught exception's traceback shows the program's line, and names
    # the process; the other ranks' SyncError names it too
    assert "ValueError: boom on one rank" in r.stderr, r.stderr
    assert "superstep: raised by process 1 of 3" in r.stderr, r.stderr
    assert 'mpi_prog.py", line' in r.stderr and ".pxi" not in r.stderr, r.stderr


def test_mpi_mismatched_syncs_raise():
    r = mpirun(2, "mismatch")
    assert r.returncode == 3, r.stdout + r.stderr
    # rank 1 syncs once more: its SyncError names process 0, which returned
    assert "SYNCERROR rank 1: ctx.sync (process 1 of 2): lpf_sync failed in superstep 1: " \
           "process 0 returned from its SPMD function after 1 supersteps" in r.stdout, r.stdout


@pytest.mark.parametrize("n", [2, 3])
def test_mpi_apps_span_the_ranks(n):
    pytest.importorskip("scipy")
    r = mpirun(n, "apps")
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(n):
        assert "APPS rank %d" % rank in r.stdout, r.stdout + r.stderr


def test_mpi_run_over_an_mpi4py_communicator():
    pytest.importorskip("mpi4py")
    r = mpirun(3, "comm")
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(3):
        line = "COMM rank %d: (%d, 3, [0, 1, 2]) %r" % (
            rank, rank, [0, 2] if rank % 2 == 0 else [1])
        assert line in r.stdout, r.stdout + r.stderr


def test_mpi_checked_mode_report_is_a_bsp_error_on_every_rank():
    r = mpirun(3, "checked_every", SUPERSTEP_CHECK="1")
    assert r.returncode == 0 and "NOT REACHED" not in r.stdout, r.stdout + r.stderr
    for rank in range(3):
        line = [l for l in r.stdout.splitlines() if l.startswith("BSPERROR rank %d:" % rank)]
        assert line, r.stdout + r.stderr
        # every rank: the facts of the process that found it, in Python terms
        assert "pid=1 nprocs=3 primitive=ctx.put" in line[0], line[0]
        assert "ctx.put (process 1 of 3): checked mode: the source of a ctx.put " \
               "(float64 array of shape (4,), 4 elements)" in line[0], line[0]
        assert "AFTER rank %d: 3" % rank in r.stdout, r.stdout + r.stderr


def test_mpi_checked_mode_report_over_a_communicator_on_every_rank():
    pytest.importorskip("mpi4py")
    r = mpirun(4, "checked_comm", SUPERSTEP_CHECK="1")
    assert r.returncode == 0 and "NOT REACHED" not in r.stdout, r.stdout + r.stderr
    for rank in range(4):
        assert "BSPERROR rank %d: pid=1: " % rank in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("checked mode: the source of a ctx.put") == 4, r.stdout


def test_mpi_checked_mode_report_is_a_bsp_error_in_python_terms():
    r = mpirun(2, "checked", SUPERSTEP_CHECK="1")
    assert r.returncode != 0 and "NOT REACHED" not in r.stdout
    assert "BSPError: ctx.put (process 1 of 2): checked mode: the source of a ctx.put " \
           "(float64 array of shape (4,), 4 elements)" in r.stderr, r.stderr
    # the other rank raises it too, with the same facts
    assert "BSPError: ctx.sync (process 0 of 2): the run failed: ctx.put (process 1 of 2): " \
           "checked mode" in r.stderr, r.stderr


def hybridrun(n, t, mode, timeout=120):
    env = dict(os.environ)
    env.pop("SUPERSTEP_ENGINE", None)
    env["SUPERSTEP_SYNC_TIMEOUT"] = "60"
    cmd = [BSPRUN, "--engine", "hybrid", "-n", str(n), "-t", str(t), sys.executable,
           os.path.join(HERE, "mpi_prog.py"), mode]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("n,t", [(2, 2), (2, 1), (4, 2), (6, 3)])
def test_hybrid_every_call(n, t):
    """bsprun --engine hybrid: every rank runs the script, run() spans the
    threads of every rank (pids rank-major); each rank gets its first
    thread's result"""
    r = hybridrun(n, t, "ok")
    assert r.returncode == 0, r.stdout + r.stderr
    R = n // t
    for rank in range(R):
        assert "OK rank %d of %d: 'ok' %d" % (rank, R, rank * t * 10) in r.stdout, r.stdout


def test_hybrid_collective_buffer():
    """the collectives' collective buffer over 2 ranks of 2 threads"""
    r = hybridrun(4, 2, "cache")
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in range(2):
        assert "CACHE rank %d of 2: cached ok" % rank in r.stdout, r.stdout + r.stderr


def test_hybrid_exception_ends_the_job():
    r = hybridrun(4, 2, "raise")
    assert r.returncode != 0
    assert "NOT REACHED" not in r.stdout
    assert "ValueError: boom on one rank" in r.stderr
