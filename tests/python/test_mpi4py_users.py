"""What mpi4py's users meet first: the calls by mpi4py's names (beside
mpi4py in one run on MPI ranks), one rule for p on every engine, failures
that name the process and show the program's lines, whole output lines."""
import os
import re
import subprocess
import sys
import warnings

import pytest

import superstep
from test_mpi import BSPRUN

HERE = os.path.dirname(os.path.abspath(__file__))
mpi_only = pytest.mark.skipif(not (BSPRUN and superstep.have_mpi()),
                              reason="needs bsprun and the MPI engine")


def prog(name, *args, engine=None, n=None, t=None, env=None, timeout=180):
    e = dict(os.environ)
    e.pop("SUPERSTEP_ENGINE", None)
    e["SUPERSTEP_SYNC_TIMEOUT"] = "60"
    e.update(env or {})
    cmd = [sys.executable, os.path.join(HERE, name)] + list(args)
    if engine:
        cmd = [BSPRUN, "--engine", engine, "-n", str(n)] + (["-t", str(t)] if t else []) + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


# ---------------------------------------------------------------- the calls

def test_calls_threads():
    r = prog("mpi4py_calls.py", env={"LPF_MAX_PROCS": "3"})
    assert r.returncode == 0 and "DONE bad=0" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("SAME ") == 3 * 16


@mpi_only
def test_calls_beside_mpi4py():
    pytest.importorskip("mpi4py")
    r = prog("mpi4py_calls.py", engine="mpi", n=3)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("REFERENCE mpi4py") == 3 and r.stdout.count("DONE bad=0") == 3
    assert "DIFF" not in r.stdout


@mpi_only
def test_calls_hybrid():
    r = prog("mpi4py_calls.py", engine="hybrid", n=4, t=2)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("DONE bad=0") == 2 and "DIFF" not in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("SAME ") == 2 * 16


def test_allreduce_python_numbers():
    def spmd(ctx):
        return (ctx.allreduce(ctx.pid), ctx.allreduce(1 << 80), ctx.allreduce(0.5),
                ctx.scan(ctx.pid), ctx.exscan(ctx.pid), ctx.bcast(ctx.pid, root=1),
                ctx.rank, ctx.size)
    s, big, f, sc, ex, b, rank, size = superstep.run(spmd, p=2)
    assert type(s) is int and s == sum(range(size))
    assert type(big) is int and big == size << 80
    assert type(f) is float and f == 0.5 * size
    assert (sc, ex, b, rank) == (0, None, 1, 0)


# ---------------------------------------------------------------- p

def test_p_threads_warns_when_capped():
    cap = superstep.run(lambda ctx: ctx.nprocs)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = superstep.run(lambda ctx: ctx.nprocs, p=cap + 5)
    assert got == cap
    assert len(w) == 1 and issubclass(w[0].category, superstep.ProcessCountWarning)
    assert w[0].filename == __file__          # the caller's line
    assert "p=%d asked for, the run has %d processes" % (cap + 5, cap) in str(w[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert superstep.run(lambda ctx: ctx.nprocs, p=1) == 1


@mpi_only
def test_p_mpi():
    r = prog("p_rule.py", engine="mpi", n=3)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    for line in ("RANK 0 P 2 -> (2, 2) warned=0", "RANK 2 P 2 -> None warned=0",
                 "RANK 1 P 1 -> None warned=0", "RANK 0 P 64 -> (3, 3) warned=1 p_rule.py:",
                 "RANK 1 P 64 -> (3, 3) warned=0", "RANK 2 P None -> (3, 3) warned=0"):
        assert line in out, out + r.stderr
    assert "p=64 asked for, the run has 3 processes (the MPI job has 3 ranks" in out


@mpi_only
def test_p_mpi_ranks_disagree():
    code = ("import superstep\n"
            "r = superstep.mpi_world()[0]\n"
            "try:\n"
            "    superstep.run(lambda ctx: 1, p=1 + r)\n"
            "except ValueError as e:\n"
            "    print('CAUGHT', e, flush=True)\n"
            "print('NEXT', r, superstep.run(lambda ctx: ctx.allreduce(1)), flush=True)\n")
    e = dict(os.environ)
    e.pop("SUPERSTEP_ENGINE", None)
    r = subprocess.run([BSPRUN, "--engine", "mpi", "-n", "2", sys.executable, "-c", code],
                       capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode == 0, r.stdout + r.stderr
    for rank in (0, 1):
        assert "CAUGHT superstep.run: rank %d of 2: the ranks' runs would have from 1 to 2 " \
               "processes (this rank: p=%d, %d)" % (rank, rank + 1, rank + 1) in r.stdout, r.stdout
        assert "NEXT %d 2" % rank in r.stdout


@mpi_only
def test_p_hybrid():
    r = prog("p_rule.py", engine="hybrid", n=4, t=2)
    assert r.returncode == 0, r.stdout + r.stderr
    for line in ("RANK 0 P 1 -> (1, 1) warned=0", "RANK 1 P 1 -> None",
                 "RANK 0 P 2 -> (2, 2) warned=0", "RANK 1 P 2 -> None",
                 "RANK 0 P 64 -> (4, 4) warned=1", "RANK 1 P None -> (4, 4)"):
        assert line in r.stdout, r.stdout + r.stderr


# ---------------------------------------------------------------- failures

def _check_failures(out, err, mpi):
    assert "CAUGHT early 0: SyncError: ctx.sync (process 0 of 2): lpf_sync failed in " \
           "superstep 0: process 1 returned from its SPMD function after 0 supersteps" in out
    if mpi:
        assert "CAUGHT boom 0: SyncError: ctx.sync (process 0 of 2): lpf_sync failed in " \
               "superstep 1: process 1 raised ValueError: boom on process 1" in out
        assert "CAUGHT boom 1: ValueError: boom on process 1 [superstep: raised by " \
               "process 1 of 2]" in out
        assert "CAUGHT early 1: SyncError: superstep.run (process 1)" in out
    else:
        assert "CAUGHT boom 0: ValueError: boom on process 1 [superstep: raised by " \
               "process 1 of 2]" in out
    # the program's frames, not the binding's
    for line in out.splitlines():
        if line.startswith("FRAMES"):
            assert ".pxi" not in line and ".pyx" not in line, line
            assert line.split(": ")[1].startswith("fail_prog.py"), line
    assert "FRAMES boom %d: fail_prog.py _api.py fail_prog.py" % (1 if mpi else 0) in out
    assert "NEXT 0 2" in out
    # caught: nothing printed by the package
    assert "Traceback" not in err and "uncaught" not in err, err


def test_failures_threads():
    r = prog("fail_prog.py", env={"LPF_MAX_PROCS": "2"})
    assert r.returncode == 0, r.stdout + r.stderr
    _check_failures(r.stdout, r.stderr, False)


@mpi_only
def test_failures_mpi():
    r = prog("fail_prog.py", engine="mpi", n=2)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_failures(r.stdout, r.stderr, True)
    assert "NEXT 1 2" in r.stdout


# ---------------------------------------------------------------- output lines

def test_unbuffered_stdout_writes_whole_lines_on_mpi():
    # python3 -u on an MPI rank: print's text and newline leave in one write
    code = ("import sys, io, superstep; "
            "print(sys.stdout.line_buffering, type(sys.stdout.buffer).__name__)")
    e = dict(os.environ, SUPERSTEP_ENGINE="mpi")
    r = subprocess.run([sys.executable, "-u", "-c", code], capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.stdout.strip() == "True BufferedWriter", r.stdout + r.stderr
    e.pop("SUPERSTEP_ENGINE")      # threads: one process, left as it is
    r = subprocess.run([sys.executable, "-u", "-c", code], capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.stdout.strip() == "False FileIO", r.stdout + r.stderr


@mpi_only
def test_lines_whole_under_bsprun():
    r = prog("lines_prog.py", engine="mpi", n=2, env={"PYTHONUNBUFFERED": "1"})
    assert r.returncode == 0, r.stderr
    bad = [ln for ln in r.stdout.splitlines()
           if not (ln.startswith("DONE rank") or
                   (ln.startswith("LINE rank ") and ln.endswith(" END") and ln.count("LINE") == 1))]
    assert not bad, bad[:5]
    assert r.stdout.count(" END\n") == 6000


# ---------------------------------------------------------------- profile

def _check_profile(d, out):
    summary = open(os.path.join(d, "summary.txt")).read()
    html = open(os.path.join(d, "report.html")).read()
    assert "in PyInit__core" not in summary
    assert "supersteps by the call that ended them" in summary, summary
    # 20 syncs in step() at line 6, 5 allreduce calls at line 14
    lines = [ln.split() for ln in summary.splitlines() if ln.strip().endswith(" in step")]
    assert lines and lines[0][0] == "20" and lines[0][-3] == "prof_prog.py:6", summary
    assert "prof_prog.py:14 in spmd" in summary and "prof_prog.py:15 in spmd" in summary
    assert "Supersteps by the call that ended them" in html
    assert "<code>prof_prog.py:6</code>" in html


def test_profile_python_lines_threads(tmp_path):
    d = str(tmp_path / "prof")
    e = dict(os.environ, SUPERSTEP_PROFILE=d, LPF_MAX_PROCS="2")
    e.pop("SUPERSTEP_ENGINE", None)
    r = subprocess.run([sys.executable, os.path.join(HERE, "prof_prog.py")], capture_output=True,
                       text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    _check_profile(d, r.stderr)


@mpi_only
def test_profile_python_lines_mpi(tmp_path):
    d = str(tmp_path / "prof")
    r = subprocess.run([BSPRUN, "--engine", "mpi", "-n", "2", "--profile", d, sys.executable,
                        os.path.join(HERE, "prof_prog.py")], capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_profile(d, r.stderr)


@mpi_only
def test_failures_hybrid():
    # p=2 on 2 ranks of 2 threads: the run takes rank 0's two threads (as on
    # threads); rank 1 is not in it and gets None
    r = prog("fail_prog.py", engine="hybrid", n=4, t=2)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_failures(r.stdout, r.stderr, False)
    assert "NOERROR early 1" in r.stdout and "NEXT 1 None" in r.stdout


@mpi_only
def test_failures_hybrid_across_ranks():
    r = prog("fail_hybrid.py", engine="hybrid", n=4, t=2)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    # rank 0 runs processes 0 and 1: whichever thread's failed sync is raised
    # first names itself; the cause must be named either way
    assert re.search(r"CAUGHT boom 0 SyncError \| superstep: raised by process [01] of 4 / "
                     r"superstep: the run failed because process 2 raised ValueError: "
                     r"boom on process 2", out), out
    assert "CAUGHT boom 1 ValueError | boom on process 2" in out, out
    assert "superstep: the run failed because process 3 returned from its SPMD function after " \
           "0 supersteps" in out, out
    assert "NEXT 0 4" in out and "NEXT 1 4" in out
