"""Tests of the Python package superstep on the pthread engine (threads);
test_mpi.py runs mpi_prog.py under bsprun --engine mpi.

Run: LPF_MAX_PROCS=4 pytest tests/python (scripts/test_python.sh does)."""
import re
import numpy as np
import pytest

import superstep
from superstep import apps

P = 4   # LPF_MAX_PROCS=4 lets 4 threads run on a smaller machine


def run(f, p=P, **kw):
    return superstep.run(f, p=p, **kw)


def allresults(f, p=P):
    """run f on every process and return the list of all processes' results"""
    def spmd(ctx):
        r = f(ctx)
        out = ctx.gather(np.array([0]), root=0)   # keeps every process in the run
        del out
        res = [None] * ctx.nprocs
        for m in _exchange(ctx, r):
            res[m.source] = m.payload
        return res
    return superstep.run(spmd, p=p)


def _exchange(ctx, obj):
    ctx.send(0, obj)
    ctx.sync()
    return ctx.messages()


# ---------------------------------------------------------------- basics

def test_run_pid_nprocs_and_result():
    res = allresults(lambda ctx: (ctx.pid, ctx.nprocs))
    assert res == [(q, P) for q in range(P)]


def test_run_returns_process_0_result_and_args():
    def spmd(ctx, a, b=0):
        return (ctx.pid, a, b)
    assert superstep.run(spmd, p=2, args=(5,), kwargs={"b": 7}) == (0, 5, 7)
    assert superstep.run(spmd, p=2, args=[1]) == (0, 1, 0)


def test_run_default_p():
    n = superstep.run(lambda ctx: ctx.nprocs)
    assert n >= 1


def test_run_bad_arguments():
    with pytest.raises(TypeError):
        superstep.run(42)
    with pytest.raises(ValueError):
        superstep.run(lambda ctx: 0, p=0)
    with pytest.raises(ValueError):
        superstep.run(lambda ctx: 0, p="2")


def test_nested_run_is_refused():
    def spmd(ctx):
        with pytest.raises(superstep.SuperstepError, match="nested"):
            superstep.run(lambda c: 0, p=1)
        return "ok"
    assert run(spmd, p=2) == "ok"


def test_engine_and_flags():
    assert superstep.engine() == "pthread"
    assert isinstance(superstep.have_mpi(), bool)
    assert superstep.mpi_world() == (0, 1)


def test_sync_and_step():
    def spmd(ctx):
        s0 = ctx.step
        for _ in range(5):
            ctx.sync()
        return ctx.step - s0
    assert run(spmd) == 5


def test_probe():
    def spmd(ctx):
        m = ctx.probe()
        return m.p, m.free_p, m.g(), m.l(), m.g(1024, p=2), repr(m)
    p, free_p, g, l, g2, r = run(spmd, p=2)
    assert p >= 1 and free_p >= 1 and g > 0 and l > 0 and g2 > 0
    assert r.startswith("Machine(")


def test_context_invalid_after_return():
    keep = []
    run(lambda ctx: keep.append(ctx), p=1)
    with pytest.raises(superstep.SuperstepError, match="returned"):
        keep[0].sync()


# ---------------------------------------------------------------- DRMA

def test_register_put_total_exchange():
    def spmd(ctx):
        p, s = ctx.nprocs, ctx.pid
        dst = np.full(3 * p, -1, dtype=np.int64)
        with ctx.register(dst) as slot:
            assert slot.counts == [3 * p] * p and slot.dtype == np.int64 and slot.alive
            src = np.array([s, 10 * s, 100 * s], dtype=np.int64)
            for q in range(p):
                ctx.put(src, q, slot, offset=3 * s)
            ctx.sync()
        assert not slot.alive
        return dst
    out = allresults(spmd)
    expect = np.array([[q, 10 * q, 100 * q] for q in range(P)]).ravel()
    for r in out:
        assert (r == expect).all()


def test_put_of_views_and_scalars_and_empty():
    def spmd(ctx):
        a = np.zeros(10)
        slot = ctx.register(a)
        big = np.arange(20.0)
        nxt = (ctx.pid + 1) % ctx.nprocs
        ctx.put(big[5:8], nxt, slot, offset=0)      # contiguous view
        ctx.put([1.5, 2.5], nxt, slot, offset=8)    # list: converted to the slot's dtype
        ctx.put(np.zeros(0), nxt, slot, offset=10)  # empty: nothing to do
        ctx.sync()
        slot.free()
        ctx.sync()
        return a
    a = run(spmd)
    assert list(a[:3]) == [5, 6, 7] and list(a[8:]) == [1.5, 2.5]


def test_get():
    def spmd(ctx):
        a = np.arange(8, dtype=np.float32) + 100 * ctx.pid
        slot = ctx.register(a)
        out = np.zeros(3, dtype=np.float32)
        q = (ctx.pid + 1) % ctx.nprocs
        r = ctx.get(q, slot, 2, out)
        assert r is out
        ctx.sync()
        return out, q
    out, q = run(spmd)
    assert list(out) == [100 * q + 2, 100 * q + 3, 100 * q + 4]


def test_register_different_sizes():
    def spmd(ctx):
        a = np.zeros(ctx.pid + 1, dtype=np.int32)
        slot = ctx.register(a)
        return slot.counts
    assert run(spmd) == [q + 1 for q in range(P)]


def test_register_errors():
    def spmd(ctx):
        who = "process %d of %d" % (ctx.pid, ctx.nprocs)
        with pytest.raises(TypeError, match="NumPy array"):
            ctx.register([1, 2, 3])
        with pytest.raises(ValueError, match="not C-contiguous"):
            ctx.register(np.zeros((4, 4))[:, 1])
        ro = np.zeros(4)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only.*" if False else "read-only"):
            ctx.register(ro)
        with pytest.raises(TypeError, match="Python objects"):
            ctx.register(np.array([None, 1], dtype=object))
        # dtype disagreement across processes: TypeError on every process
        a = np.zeros(2, dtype=np.float64 if ctx.pid == 0 else np.int32)
        with pytest.raises(TypeError, match="different dtypes"):
            ctx.register(a)
        return who
    assert run(spmd) == "process 0 of %d" % P


def test_put_get_errors_have_the_facts():
    def spmd(ctx):
        a = np.zeros(4)
        slot = ctx.register(a)
        p = ctx.nprocs
        with pytest.raises(IndexError, match=r"ctx.put \(process %d of %d\): dst_pid %d is "
                           r"out of range \(nprocs %d\)" % (ctx.pid, p, p, p)):
            ctx.put(np.zeros(1), p, slot)
        with pytest.raises(IndexError, match="out of range"):
            ctx.put(np.zeros(1), -1, slot)
        with pytest.raises(TypeError, match="must be an int"):
            ctx.put(np.zeros(1), 0.5, slot)
        with pytest.raises(IndexError, match=r"offset 2 \+ size 3 is out of bounds: process 0 "
                           r"registered 4 elements of float64 \(32 bytes\)"):
            ctx.put(np.zeros(3), 0, slot, offset=2)
        with pytest.raises(IndexError, match="negative"):
            ctx.put(np.zeros(1), 0, slot, offset=-1)
        with pytest.raises(TypeError, match="offset must be an int"):
            ctx.put(np.zeros(1), 0, slot, offset=1.0)
        with pytest.raises(TypeError, match="dtype int32 but the slot holds float64"):
            ctx.put(np.zeros(1, dtype=np.int32), 0, slot)
        with pytest.raises(ValueError, match="not C-contiguous"):
            ctx.put(np.zeros(8)[::2], 0, slot)
        with pytest.raises(TypeError, match="superstep.Slot"):
            ctx.put(np.zeros(1), 0, 3)
        with pytest.raises(IndexError, match="src_pid"):
            ctx.get(p + 3, slot, 0, np.zeros(1))
        with pytest.raises(IndexError, match="out of bounds"):
            ctx.get(0, slot, 3, np.zeros(2))
        ro = np.zeros(1)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="out is read-only"):
            ctx.get(0, slot, 0, ro)
        with pytest.raises(TypeError, match="must be a NumPy array"):
            ctx.get(0, slot, 0, [0.0])
        slot.free()
        slot.free()      # twice: nothing
        with pytest.raises(ValueError, match="deregistered"):
            ctx.put(np.zeros(1), 0, slot)
        with pytest.raises(ValueError, match="deregistered"):
            ctx.deregister(slot)
        ctx.sync()
        return "ok"
    assert run(spmd) == "ok"


def test_slot_of_another_context():
    keep = []

    def first(ctx):
        keep.append(ctx.register(np.zeros(2)))

    def second(ctx):
        with pytest.raises(ValueError, match="another context"):
            ctx.put(np.zeros(1), 0, keep[0])
        return "ok"
    run(first, p=1)
    assert run(second, p=1) == "ok"
    assert "Slot" in repr(keep[0])


def test_capacity_grows_and_overflow_is_an_error():
    def spmd(ctx):
        a = np.zeros(1)
        slot = ctx.register(a)
        x = np.ones(1)
        with pytest.raises(superstep.CapacityError, match="capacity exceeded"):
            for _ in range(100000):
                ctx.put(x, ctx.pid, slot)
        ctx.sync()
        # the capacity grew: many puts in one superstep now work
        for _ in range(900):
            ctx.put(x, ctx.pid, slot)
        ctx.sync()
        return a[0]
    assert run(spmd, p=2) == 1.0


# ---------------------------------------------------------------- BSMP

def test_messages_arrays_and_objects():
    def spmd(ctx):
        p, s = ctx.nprocs, ctx.pid
        assert ctx.messages() == []
        for q in range(p):
            ctx.send(q, np.arange(s + 1, dtype=np.int16).reshape(1, -1), tag=s)
            ctx.send(q, {"from": s, "list": [1, 2]}, tag=100)
        ctx.send(0, np.zeros(0), tag=7)
        ctx.sync()
        ms = ctx.messages()
        arrays = ctx.messages(tag=0)
        assert len(ms) == 2 * p + (p if s == 0 else 0)
        objs = [m for m in ms if m.tag == 100]
        assert [m.payload["from"] for m in objs] == list(range(p))
        arr = [m for m in ms if m.tag < 100 and m.tag != 7]
        assert [m.source for m in arr] == list(range(p))
        for m in arr:
            assert m.payload.dtype == np.int16 and m.payload.shape == (1, m.source + 1)
            assert list(m.payload.ravel()) == list(range(m.source + 1))
        assert len(arrays) == 1 and arrays[0].source == 0
        ctx.sync()
        assert ctx.messages() == []          # cleared by the next sync
        return len(ms)
    assert run(spmd) == 3 * P


def test_send_errors():
    def spmd(ctx):
        with pytest.raises(IndexError, match="out of range"):
            ctx.send(ctx.nprocs, 1)
        with pytest.raises(TypeError, match="tag must be an int"):
            ctx.send(0, 1, tag="x")
        ctx.sync()
        return "ok"
    assert run(spmd) == "ok"


def test_object_array_message_is_pickled():
    def spmd(ctx):
        ctx.send(0, np.array([None, "x"], dtype=object))
        ctx.sync()
        return [list(m.payload) for m in ctx.messages()]
    assert run(spmd, p=2) == [[None, "x"], [None, "x"]]


# ---------------------------------------------------------------- collectives

@pytest.mark.parametrize("n", [1, 5, 100000])
def test_allreduce_ops(n):
    def spmd(ctx):
        a = np.arange(n, dtype=np.float64) + ctx.pid
        return {op: ctx.allreduce(a, op=op) for op in ("sum", "prod", "min", "max")}
    r = run(spmd)
    base = np.arange(n, dtype=np.float64)
    stack = np.stack([base + q for q in range(P)])
    assert np.allclose(r["sum"], stack.sum(0))
    assert np.allclose(r["prod"], stack.prod(0))
    assert (r["min"] == stack.min(0)).all() and (r["max"] == stack.max(0)).all()


def test_allreduce_scalar_callable_and_int():
    def spmd(ctx):
        s = ctx.allreduce(ctx.pid + 1)
        c = ctx.allreduce(np.array([ctx.pid, 1]), op=lambda x, y: x * 10 + y)
        return s, c
    s, c = run(spmd)
    assert s == sum(range(1, P + 1)) and np.ndim(s) == 0
    expect0 = 0
    for q in range(1, P):
        expect0 = expect0 * 10 + q
    assert c[0] == expect0


def test_reduce_root_and_subset():
    def spmd(ctx):
        a = np.array([ctx.pid, 1.0])
        r = ctx.reduce(a, op="max", root=1)
        sub = ctx.allreduce(a, procs=[0, 2])
        return r, sub, ctx.pid
    res = allresults(spmd)
    for r, sub, pid in res:
        if pid == 1:
            assert list(r) == [P - 1, 1.0]
        else:
            assert r is None
        if pid in (0, 2):
            assert list(sub) == [2.0, 2.0]
        else:
            assert sub is None


def test_broadcast_gather_allgather_alltoall():
    def spmd(ctx):
        p, s = ctx.nprocs, ctx.pid
        b = np.full(3, s, dtype=np.int32)
        ctx.broadcast(b, root=2)
        g = ctx.gather(np.array([s, s * s]), root=1)
        ag = ctx.allgather(np.array([s]))
        sub = ctx.allgather(np.array([s]), procs=range(1, p, 2))
        a2a = ctx.alltoall(np.arange(p) * 10 + s)
        return b, g, ag, sub, a2a, s
    for b, g, ag, sub, a2a, s in allresults(spmd):
        assert (b == 2).all()
        if s == 1:
            assert g.tolist() == [[q, q * q] for q in range(P)]
        else:
            assert g is None
        assert ag.ravel().tolist() == list(range(P))
        assert (sub is None) == (s % 2 == 0)
        if sub is not None:
            assert sub.ravel().tolist() == list(range(1, P, 2))
        assert a2a.tolist() == [10 * s + q for q in range(P)]


def test_collective_errors():
    def spmd(ctx):
        with pytest.raises(ValueError, match="op must be"):
            ctx.allreduce(np.zeros(2), op="avg")
        with pytest.raises(TypeError, match="op must be"):
            ctx.allreduce(np.zeros(2), op=3)
        with pytest.raises(IndexError, match="root"):
            ctx.broadcast(np.zeros(2), root=ctx.nprocs)
        with pytest.raises(ValueError, match="not one of procs"):
            ctx.reduce(np.zeros(2), root=1, procs=[0])
        with pytest.raises(ValueError, match="procs is empty"):
            ctx.allgather(np.zeros(1), procs=[])
        with pytest.raises(ValueError, match="twice"):
            ctx.allgather(np.zeros(1), procs=[0, 0])
        with pytest.raises(IndexError, match="in procs is out of range"):
            ctx.allgather(np.zeros(1), procs=[99])
        with pytest.raises(TypeError, match="sequence"):
            ctx.allgather(np.zeros(1), procs=5)
        with pytest.raises(ValueError, match="first dimension"):
            ctx.alltoall(np.zeros(ctx.nprocs + 1))
        # the processes disagree: an error everywhere, no hang
        with pytest.raises(ValueError, match="different sizes"):
            ctx.allreduce(np.zeros(ctx.pid + 1))
        with pytest.raises(ValueError, match="different arguments"):
            ctx.broadcast(np.zeros(2), root=ctx.pid % 2)
        with pytest.raises(TypeError, match="different dtypes"):
            ctx.allgather(np.zeros(2, dtype=np.float32 if ctx.pid else np.float64))
        # an error on one process's own arguments: that process raises it,
        # the others raise one naming it, and the run goes on in step
        ro = np.zeros(2)
        ro.flags.writeable = ctx.pid == 0
        if ctx.pid != 0:
            with pytest.raises(ValueError, match="read-only"):
                ctx.broadcast(ro, root=0)
        else:
            with pytest.raises(superstep.SuperstepError, match="process 1 failed on its own"):
                ctx.broadcast(ro, root=0)
        with pytest.raises((ValueError, superstep.SuperstepError)):
            ctx.allreduce(np.zeros(2), op="avg" if ctx.pid == 1 else "sum")
        assert ctx.allreduce(1) == ctx.nprocs
        return "ok"
    assert run(spmd, p=2) == "ok"


# ---------------------------------------------------------------- failures

def test_exception_in_one_process_raises_in_caller(capfd):
    def spmd(ctx):
        ctx.sync()
        if ctx.pid == 1:
            raise KeyError("boom")
        for _ in range(10):
            ctx.sync()
    with pytest.raises(KeyError, match="boom") as ei:
        run(spmd)
    # caught by the caller: nothing printed; the note names the process
    assert capfd.readouterr().err == ""
    assert "superstep: raised by process 1 of %d" % P in ei.value.__notes__


def test_exception_ends_processes_in_local_work(capfd):
    def spmd(ctx):
        if ctx.pid == 0:
            raise RuntimeError("first")
        import time
        t = time.time()
        while time.time() - t < 0.3:
            pass
        ctx.register(np.zeros(1))   # raises Aborted here: never printed
    with pytest.raises(RuntimeError, match="first"):
        run(spmd, p=2)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Aborted" not in err


def test_early_return_gives_sync_error(capfd):
    def spmd(ctx):
        if ctx.pid == 0:
            return "early"
        with pytest.raises(superstep.SyncError, match="process 0 returned from its SPMD "
                           "function after 0 supersteps"):
            ctx.sync()
        with pytest.raises(superstep.SyncError, match="earlier sync failed"):
            ctx.sync()
        return "caught"
    with pytest.raises(superstep.SyncError):
        run(spmd, p=2)


def test_mismatched_syncs_uncaught(capfd):
    def spmd(ctx):
        for _ in range(ctx.pid + 1):
            ctx.sync()
    with pytest.raises(superstep.SyncError, match="process 0 returned from its SPMD "
                       "function after 1 supersteps"):
        run(spmd, p=2)
    assert "Traceback" not in capfd.readouterr().err      # caught: nothing printed


def test_run_after_failure_works():
    def bad(ctx):
        raise ValueError("x")
    with pytest.raises(ValueError):
        run(bad, p=2)
    assert run(lambda ctx: ctx.nprocs, p=2) == 2


# ---------------------------------------------------------------- applications

def test_app_inprod():
    x = np.random.default_rng(1).random(1001)
    assert apps.inprod(x, 2 * x, p=2) == pytest.approx(2 * x @ x)
    assert apps.inprod([1, 2], [3, 4]) == 11.0
    with pytest.raises(ValueError):
        apps.inprod(np.ones(3), np.ones(4))
    with pytest.raises(ValueError):
        apps.inprod(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError):
        apps.inprod(np.ones(2, dtype=complex), np.ones(2))
    with pytest.raises(ValueError):
        apps.inprod(np.ones(2), np.ones(2), p=0)


@pytest.mark.parametrize("method", ["sample", "radix"])
def test_app_sort(method):
    k = np.random.default_rng(2).integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    assert (apps.sort(k, p=3, method=method) == np.sort(k)).all()
    small = np.array([5, 3, 9], dtype=np.int64)
    assert apps.sort(small, p=2).tolist() == [3, 5, 9]
    assert apps.sort(np.zeros(0, dtype=np.uint32)).size == 0
    with pytest.raises(TypeError):
        apps.sort(np.array([-1, 2]))
    with pytest.raises(ValueError):
        apps.sort(k, method="bogo")
    with pytest.raises(ValueError):
        apps.sort(np.zeros((2, 2), dtype=np.uint32))


def test_app_fft():
    if not superstep.have_fft():
        pytest.skip("built without FFTW")
    x = np.random.default_rng(3).random(256) + 1j
    assert np.allclose(apps.fft(x, p=2), np.fft.fft(x))
    assert np.allclose(apps.ifft(x, p=4), np.fft.ifft(x))
    with pytest.raises(ValueError):
        apps.fft(np.ones((2, 2)))
    with pytest.raises(ValueError):
        apps.fft(np.ones(6), p=4)


def test_app_spmv_and_pagerank():
    sps = pytest.importorskip("scipy.sparse")
    A = sps.random(300, 200, density=0.05, format="csr", random_state=4)
    x = np.random.default_rng(5).random(200)
    for part in ("rows", "cols", "2d"):
        assert np.allclose(apps.spmv(A, x, p=4, partition=part), A @ x)
    assert np.allclose(apps.spmv(A.toarray(), x, p=2), A @ x)
    with pytest.raises(ValueError):
        apps.spmv(A, np.ones(3))
    with pytest.raises(ValueError):
        apps.spmv(A, x, partition="diag")
    G = sps.random(100, 100, density=0.05, format="csr", random_state=6)
    r, info = apps.pagerank(G, p=2, return_info=True)
    assert r.sum() == pytest.approx(1.0) and info["iters"] >= 1
    # against a dense power iteration (dangling nodes spread uniformly)
    Ad = (G.toarray() != 0).astype(float)
    n = Ad.shape[0]
    deg = Ad.sum(1)
    ref = np.full(n, 1.0 / n)
    for _ in range(1000):
        contrib = np.where(deg > 0, ref / np.where(deg > 0, deg, 1), 0.0)
        new = 0.85 * (Ad.T @ contrib + ref[deg == 0].sum() / n) + 0.15 / n
        if np.abs(new - ref).sum() < 1e-12:
            break
        ref = new
    assert np.allclose(r, ref, atol=1e-8)
    with pytest.raises(ValueError):
        apps.pagerank(A)


def test_engine_names_hybrid(monkeypatch):
    # runs on the hybrid engine are in test_mpi.py (through bsprun)
    monkeypatch.setenv("SUPERSTEP_ENGINE", "hybrid")
    assert superstep.engine() == "hybrid"


# ------------------------------------------------ superstep numbers in messages

def test_checked_mode_numbers_the_users_supersteps(tmp_path):
    """Checked mode's messages count the program's supersteps from 0: the
    package's own syncs (set-up, register) are left out. A read-write
    conflict in the superstep after one ctx.sync is "in superstep 1"."""
    import os
    import subprocess
    import sys
    prog = tmp_path / "conflict.py"
    prog.write_text(
        "import numpy as np, superstep\n"
        "def spmd(ctx):\n"
        "    a = np.zeros(4)\n"
        "    slot = ctx.register(a)\n"
        "    ctx.sync()\n"
        "    if ctx.pid == 1:\n"
        "        ctx.put(np.ones(2), 0, slot, 0)\n"
        "    if ctx.pid == 0:\n"
        "        ctx.put(a[:2].copy(), 1, slot, 0)\n"
        "        ctx.get(1, slot, 0, a[0:2])\n"
        "    ctx.sync()\n"
        "superstep.run(spmd, p=2)\n")
    env = dict(os.environ, SUPERSTEP_CHECK="1")
    r = subprocess.run([sys.executable, str(prog)], env=env, capture_output=True,
                       text=True, timeout=60)
    # the report is a BSPError raised by run() (exit 1 from the uncaught exception)
    assert r.returncode != 0, r.stderr
    assert "BSPError" in r.stderr, r.stderr
    assert re.search(r"in superstep 1[: ]", r.stderr), r.stderr
