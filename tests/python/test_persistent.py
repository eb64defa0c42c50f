"""Persistent collectives: ctx.alltoall_init / ctx.allgather_init register
once; each call is one superstep."""
import numpy as np
import pytest

import superstep


def test_alltoall_and_allgather_handles():
    def spmd(ctx):
        p, s = ctx.nprocs, ctx.pid
        a = np.zeros((p, 3), dtype=np.int64)
        g = np.zeros(2)
        res = []
        with ctx.alltoall_init(a) as h, ctx.allgather_init(g) as hg:
            assert isinstance(h, superstep.Persistent) and h.out.shape == (p, 3)
            for it in range(4):
                a[:] = 100 * it + 10 * s + np.arange(p)[:, None]   # new contents each time
                g[:] = (it, s)
                step = ctx.step
                r = h()
                assert ctx.step == step + 1                     # one superstep
                assert r is h.out
                res.append((r[:, 0].tolist(), hg().tolist()))
        return res

    res = superstep.run(spmd, p=3)
    P = len(res[0][0])
    for it, (col, gat) in enumerate(res):
        # at process 0: row k came from process k, its row 0
        assert col == [100 * it + 10 * k for k in range(P)]
        assert gat == [[it, k] for k in range(P)]


def test_out_given_and_argument_errors_on_every_process():
    def spmd(ctx):
        p = ctx.nprocs
        out = np.empty((p, 2), dtype=np.float32)
        with ctx.alltoall_init(np.ones((p, 2), dtype=np.float32), out=out) as h:
            assert h() is out and (out == 1).all()
        errs = []
        try:   # process 1's array has another size: every process raises
            ctx.allgather_init(np.zeros(2 + (ctx.pid == 1)))
        except (ValueError, superstep.SuperstepError) as e:
            errs.append(str(e))
        try:   # process 0's argument is wrong: it raises its own, the others name it
            ctx.alltoall_init(np.zeros((p + (ctx.pid == 0), 1)))
        except (ValueError, superstep.SuperstepError) as e:
            errs.append(type(e).__name__ + ": " + str(e))
        return ctx.allgather(errs)

    got = superstep.run(spmd, p=2)
    for pid, errs in enumerate(got):
        assert len(errs) == 2, errs
        assert "different sizes" in errs[0]
    assert "first dimension must be nprocs = 2" in got[0][1]
    assert "process 0 failed on its own arguments" in got[1][1]


def test_a_process_calling_something_else_is_named():
    def spmd(ctx):
        h = ctx.allgather_init(np.zeros(1))
        try:
            if ctx.pid == 0:
                h()
            else:
                ctx.allgather(np.zeros(1))
        except (superstep.SuperstepError, ValueError) as e:
            return str(e)
        return "no error"

    msg = superstep.run(spmd, p=2)
    assert "process 1 did not call this persistent collective" in msg


def test_objects_are_refused():
    with pytest.raises(TypeError, match="must be a NumPy array"):
        superstep.run(lambda ctx: ctx.alltoall_init([1, 2]), p=1)
