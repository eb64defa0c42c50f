"""superstep.apps called inside a run (ctx=...): the application's BSPlib
run joins the run's context and spans its processes."""
import numpy as np
import pytest

import superstep
from superstep import apps


def _run(fn, p=3):
    return superstep.run(fn, p=p)


def test_inprod_and_sort_span_the_run():
    x = np.arange(1000.0)
    k = np.random.default_rng(1).integers(0, 1 << 30, 5000).astype(np.uint32)

    def spmd(ctx):
        mine = ctx.pid == 0
        ip = apps.inprod(x if mine else None, x if mine else None, ctx=ctx)
        s1 = apps.sort(k if mine else None, ctx=ctx)
        s2 = apps.sort(k if mine else None, method="radix", ctx=ctx)
        # the context goes on as before: DRMA, collectives
        tot = ctx.allreduce(ctx.pid)
        return ctx.nprocs, ip, s1, s2, tot

    P, ip, s1, s2, tot = _run(spmd)
    assert ip == x @ x and tot == P * (P - 1) // 2
    assert (s1 == np.sort(k)).all() and (s2 == np.sort(k)).all()


def test_others_get_none_and_many_calls_in_a_row():
    def spmd(ctx):
        out = [apps.inprod(np.ones(10) * i, np.ones(10), ctx=ctx) for i in range(5)]
        nones = ctx.allgather(out[0] is None)
        a = np.zeros(ctx.nprocs)
        with ctx.register(a) as slot:           # the context goes on
            ctx.put(np.array([1.0]), 0, slot, offset=ctx.pid)
            ctx.sync()
            return out, list(nones), a.sum()

    out, nones, total = superstep.run(spmd, p=2)
    assert out == [0.0, 10.0, 20.0, 30.0, 40.0] and total == 2.0
    assert nones == [False, True]


def test_spmv_pagerank_fft_span_the_run():
    sps = pytest.importorskip("scipy.sparse")
    A = sps.random(200, 150, density=0.05, format="csr", random_state=4)
    x = np.random.default_rng(5).random(150)
    G = sps.random(80, 80, density=0.06, format="csr", random_state=6)
    z = np.random.default_rng(7).random(64) + 0j

    def spmd(ctx):
        mine = ctx.pid == 0
        y = apps.spmv(A if mine else None, x if mine else None, partition="cols", ctx=ctx)
        r = apps.pagerank(G if mine else None, ctx=ctx)
        f = apps.fft(z if mine else None, ctx=ctx) if superstep.have_fft() else None
        return y, r, f

    y, r, f = superstep.run(spmd, p=2)
    assert np.allclose(y, A @ x)
    assert np.allclose(r, apps.pagerank(G, p=1))
    if f is not None:
        assert np.allclose(f, np.fft.fft(z))


def test_bad_arguments_of_process_0_raise_everywhere():
    def spmd(ctx):
        try:
            apps.inprod(np.ones(3) if ctx.pid == 0 else None, np.ones(4), ctx=ctx)
        except ValueError as e:
            return ("root", str(e))
        except superstep.SuperstepError as e:
            return ("other", str(e))

    got = superstep.run(lambda ctx: ctx.allgather(spmd(ctx)), p=3)
    assert got[0] == ("root", "inprod: x has 3 elements, y has 4")
    for kind, text in got[1:]:
        assert kind == "other" and "process 0's arguments were refused" in text
        assert "x has 3 elements" in text
    with pytest.raises(ValueError, match="leave p out"):
        superstep.run(lambda ctx: apps.inprod([1.0], [1.0], p=5, ctx=ctx), p=1)
    with pytest.raises(TypeError, match="superstep.Context"):
        apps.inprod([1.0], [1.0], ctx=3)


def test_too_many_live_registrations_raise_on_every_process():
    def spmd(ctx):
        slots = [ctx.register(np.zeros(1)) for _ in range(30)]
        try:
            apps.inprod([1.0], [1.0], ctx=ctx)
        except superstep.CapacityError as e:
            msg = str(e)
        for s in slots:
            s.free()
        # with the slots freed the call works
        return msg, apps.inprod([1.0], [2.0], ctx=ctx)

    msg, ip = superstep.run(spmd, p=2)
    assert "34 registrations are live" in msg and "at most 32" in msg and ip == 2.0


def test_in_checked_mode(tmp_path):
    import subprocess
    import sys
    import os
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import numpy as np, superstep\n"
        "from superstep import apps\n"
        "def spmd(ctx):\n"
        "    k = np.arange(1000, dtype=np.uint32)[::-1].copy()\n"
        "    s = apps.sort(k, ctx=ctx)\n"
        "    ip = apps.inprod(np.arange(10.0), np.ones(10), ctx=ctx)\n"
        "    return ip, s[:3].tolist() if s is not None else None\n"
        "print(superstep.run(spmd, p=2))\n")
    env = dict(os.environ, SUPERSTEP_CHECK="1")
    env.pop("SUPERSTEP_ENGINE", None)
    r = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0 and "(45.0, [0, 1, 2])" in r.stdout, r.stdout + r.stderr
