"""superstep.run(spmd, meet=(host, port), pid=k, nprocs=n): processes started
by someone else (here: subprocesses) meet over TCP and form one run."""
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import superstep

pytestmark = pytest.mark.skipif(not superstep.have_mpi(), reason="needs the MPI engine")

PROG = textwrap.dedent("""
    import sys, numpy as np, superstep
    k, n, port, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    def spmd(ctx):
        g = ctx.allgather({"pid": ctx.pid})
        s = ctx.allreduce(np.arange(4.0) + ctx.pid).tolist()
        if mode == "raise" and ctx.pid == 1:
            raise ValueError("boom in process 1")
        ctx.sync()
        return ctx.pid, ctx.nprocs, s, [d["pid"] for d in g]
    try:
        res = superstep.run(spmd, meet=("127.0.0.1", port), pid=k, nprocs=n, timeout=float(sys.argv[5]))
        print("RESULT", k, res, flush=True)
    except Exception as e:
        print("RAISED", k, type(e).__name__, e, flush=True)
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(n, mode, ks=None, timeout=30):
    env = dict(os.environ)
    env.pop("SUPERSTEP_ENGINE", None)
    env["SUPERSTEP_TCP_SECRET"] = "test-secret"
    env["SUPERSTEP_SYNC_TIMEOUT"] = "60"
    port = str(free_port())
    procs = [subprocess.Popen([sys.executable, "-c", PROG, str(k), str(n), port, mode,
                               str(timeout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env)
             for k in (range(n) if ks is None else ks)]
    return [p.communicate(timeout=120) + (p.returncode,) for p in procs]


def test_meet_forms_one_run():
    outs = start(2, "ok")
    for k, (out, err, rc) in enumerate(outs):
        assert rc == 0, out + err
        assert "RESULT %d (%d, 2, [1.0, 3.0, 5.0, 7.0], [0, 1])" % (k, k) in out, out + err


def test_meet_exception_in_one_process_no_hang():
    outs = start(2, "raise")
    assert "RAISED 1 ValueError boom in process 1" in outs[1][0], outs[1]
    assert "RAISED 0 SyncError" in outs[0][0], outs[0]


def test_meet_missing_process_times_out_with_a_message():
    (out, err, rc), = start(2, "ok", ks=[0], timeout=1.5)
    assert "RAISED 0 SuperstepError" in out and "meeting" in out, out + err
    assert "only 1 of 2 processes arrived" in err, err
