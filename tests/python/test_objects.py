"""Collectives and messages on picklable objects and scalars (threads)."""
import numpy as np
import pytest

import superstep

P = 4


def test_broadcast_objects_and_scalars():
    def spmd(ctx):
        obj = {"n": 3, "a": np.arange(5.0)} if ctx.pid == 1 else None
        got = ctx.broadcast(obj, root=1)
        assert got["n"] == 3 and got["a"].tolist() == [0, 1, 2, 3, 4]
        if ctx.pid == 1:
            assert got is obj                  # root gets its own object
        else:
            got["a"][0] = 7                    # a writable copy of its own
        x = ctx.broadcast(np.float64(3.0) if ctx.pid == 0 else None)
        assert x == 3.0 and isinstance(x, np.float64)
        assert ctx.broadcast("text" if ctx.pid == 0 else 0) == "text"
        # root sends an array, the others pass None: they get a copy
        arr = ctx.broadcast(np.arange(3) if ctx.pid == 0 else None)
        assert arr.tolist() == [0, 1, 2]
        # arrays everywhere: in place, as before
        b = np.full(4, ctx.pid)
        assert ctx.broadcast(b, root=2) is b and (b == 2).all()
        return "ok"
    assert superstep.run(spmd, p=P) == "ok"


def test_gather_allgather_objects():
    def spmd(ctx):
        g = ctx.gather({"pid": ctx.pid}, root=0)
        if ctx.pid == 0:
            assert g == [{"pid": q} for q in range(ctx.nprocs)]
        else:
            assert g is None
        ag = ctx.allgather(("x", ctx.pid, np.full(2, ctx.pid)))
        assert [t[1] for t in ag] == list(range(ctx.nprocs))
        assert all((t[2] == q).all() for q, t in enumerate(ag))
        # numbers: an array of them
        nums = ctx.allgather(ctx.pid * 1.5)
        assert isinstance(nums, np.ndarray) and nums.tolist() == [q * 1.5 for q in range(P)]
        # numbers of different types: as objects, in member order
        mixed = ctx.allgather(ctx.pid if ctx.pid % 2 else float(ctx.pid))
        assert list(mixed) == [0.0, 1, 2.0, 3]
        # an array on some processes, an object on others
        mix = ctx.allgather(np.arange(2) if ctx.pid == 0 else [ctx.pid])
        assert mix[0].tolist() == [0, 1] and mix[1:] == [[1], [2], [3]]
        # a subset
        sub = ctx.allgather("p%d" % ctx.pid, procs=[1, 3])
        assert sub == (["p1", "p3"] if ctx.pid in (1, 3) else None)
        return "ok"
    assert superstep.run(spmd, p=P) == "ok"


def test_reduce_objects_and_numpy_scalars():
    def spmd(ctx):
        assert ctx.allreduce([ctx.pid]) == list(range(ctx.nprocs))          # list +
        assert ctx.allreduce(np.int32(ctx.pid), op="max") == ctx.nprocs - 1
        big = 2 ** 70 + ctx.pid                                              # beyond int64
        assert ctx.allreduce(big) == sum(2 ** 70 + q for q in range(ctx.nprocs))
        r = ctx.reduce({ctx.pid}, op=lambda x, y: x | y, root=2)
        assert r == (set(range(ctx.nprocs)) if ctx.pid == 2 else None)
        assert ctx.allreduce("ab"[ctx.pid % 2], op="min") == "a"
        return "ok"
    assert superstep.run(spmd, p=P) == "ok"


def test_alltoall_and_scatter_objects():
    def spmd(ctx):
        p, s = ctx.nprocs, ctx.pid
        got = ctx.alltoall([("from", s, "to", q) for q in range(p)])
        assert got == [("from", q, "to", s) for q in range(p)]
        arrs = ctx.alltoall([np.full(q + 1, s) for q in range(p)])
        assert [a.tolist() for a in arrs] == [[q] * (s + 1) for q in range(p)]
        # arrays on some processes, lists on others
        mix = ctx.alltoall(np.arange(p) + 10 * s if s == 0 else [10 * s + q for q in range(p)])
        assert [int(x) for x in mix] == [10 * q + s for q in range(p)]
        sc = ctx.scatter([{"k": q} for q in range(p)] if s == 1 else None, root=1)
        assert sc == {"k": s}
        rows = ctx.scatter(np.arange(2 * p).reshape(p, 2) if s == 0 else None)
        assert rows.tolist() == [2 * s, 2 * s + 1]
        with pytest.raises(ValueError, match="items"):
            ctx.alltoall([1] * (p + 1))
        return "ok"
    assert superstep.run(spmd, p=P) == "ok"


def test_large_array_inside_object_is_not_copied_on_receipt():
    def spmd(ctx):
        big = np.arange(1 << 18, dtype=np.float64) + ctx.pid
        got = ctx.allgather({"big": big, "pid": ctx.pid})
        for q, d in enumerate(got):
            assert d["pid"] == q and d["big"][5] == 5 + q
            # a view of the received frame, not an array of its own
            assert d["big"].base is not None and d["big"].flags.writeable
        return "ok"
    assert superstep.run(spmd, p=2) == "ok"


def test_messages_objects_with_arrays_and_scalars():
    def spmd(ctx):
        nxt = (ctx.pid + 1) % ctx.nprocs
        ctx.send(nxt, {"a": np.arange(1000) * ctx.pid, "s": "x"}, tag=1)
        ctx.send(nxt, np.float32(2.5), tag=2)
        ctx.send(nxt, 7)
        ctx.sync()
        prv = (ctx.pid - 1) % ctx.nprocs
        m1, = ctx.messages(tag=1)
        assert m1.source == prv and m1.payload["a"][3] == 3 * prv and m1.payload["s"] == "x"
        m2, = ctx.messages(tag=2)
        assert m2.payload == np.float32(2.5) and isinstance(m2.payload, np.float32)
        assert ctx.messages(tag=0)[0].payload == 7
        return "ok"
    assert superstep.run(spmd, p=P) == "ok"


def test_register_when_one_process_does_not():
    def spmd(ctx):
        if ctx.pid == 1:
            ctx.sync()
            return "skipped"
        with pytest.raises(superstep.SuperstepError,
                           match="process 1 did not call ctx.register in this superstep "
                                 r"\(it called ctx.sync"):
            ctx.register(np.zeros(2))
        return "ok"
    assert superstep.run(spmd, p=2) == "ok"


def test_out_arguments_receive_the_results():
    def spmd(ctx):
        p, s = ctx.nprocs, ctx.pid
        big = np.arange(20000.0) + s            # two-phase allreduce
        out = np.empty_like(big)
        assert ctx.allreduce(big, out=out) is out
        assert out[3] == 3 * p + sum(range(p))
        small = np.full(3, s + 1.0)
        o2 = np.empty(3)
        assert ctx.allreduce(small, op="max", out=o2) is o2 and (o2 == p).all()
        r = np.empty(3)
        got = ctx.reduce(small, root=1, out=r)
        assert (got is r) if s == 1 else got is None
        ag = np.empty((p, 2), dtype=np.int64)
        assert ctx.allgather(np.array([s, -s]), out=ag) is ag
        assert ag[:, 0].tolist() == list(range(p))
        a2 = np.empty((p, 2))
        assert ctx.alltoall(np.full((p, 2), float(s)), out=a2) is a2
        assert a2[:, 0].tolist() == [float(q) for q in range(p)]
        with pytest.raises(ValueError, match="out has shape"):
            ctx.allgather(np.array([s]), out=np.empty(5, dtype=np.int64))
        with pytest.raises(ValueError, match="shares memory"):
            ctx.allreduce(big, out=big)
        return "ok"
    assert superstep.run(spmd, p=P) == "ok"
