"""Checks of the collectives' cached collective buffer, run on threads
(test_coll_cache.py) and on MPI ranks (mpi_prog.py cache): many calls with
different arrays, shapes, dtypes and sizes (growing and shrinking), an
array freed and another allocated at its address, out=, procs subsets,
mismatched arguments, objects beside arrays; no registration stays behind."""
import gc

import numpy as np

DTYPES = [np.float64, np.int32, np.uint8, np.complex128, np.float32, np.int64]
SIZES = [1, 3, 1000, 9000, 70000, 5, 200000, 17, 8192 * 3, 0]


def vals(n, q, dt):
    """Process q's data: the same formula on every process."""
    return ((np.arange(n) % 50) + q).astype(dt)


def one_round(ctx, it, n):
    p, me = ctx.nprocs, ctx.pid
    dt = DTYPES[it % len(DTYPES)]
    root = it % p
    mine = vals(n, me, dt)
    # broadcast: in place
    b = mine.copy()
    assert ctx.broadcast(b, root=root) is b
    assert np.array_equal(b, vals(n, root, dt))
    # gather, allgather (new result and out=)
    every = np.stack([vals(n, q, dt) for q in range(p)])
    g = ctx.gather(mine, root=root)
    assert (g is None) if me != root else np.array_equal(g, every)
    assert np.array_equal(ctx.allgather(mine), every)
    out = np.empty((p, n), dtype=dt)
    assert ctx.allgather(mine, out=out) is out and np.array_equal(out, every)
    # alltoall: row q goes to q; row q of the result came from q
    k = max(n // p, 1)
    a = np.stack([vals(k, me * p + q, dt) for q in range(p)])
    want = np.stack([vals(k, q * p + me, dt) for q in range(p)])
    assert np.array_equal(ctx.alltoall(a), want)
    o2 = np.empty_like(a)
    assert ctx.alltoall(a, out=o2) is o2 and np.array_equal(o2, want)
    # scatter: root's rows (new result and out=)
    rows = np.stack([vals(k, 7 * q, dt) for q in range(p)])
    got = ctx.scatter(rows if me == root else None, root=root)
    assert got.dtype == dt and np.array_equal(got, vals(k, 7 * me, dt))
    o1 = np.zeros(k, dtype=dt)
    assert ctx.scatter(rows if me == root else None, root=root, out=o1) is o1
    assert np.array_equal(o1, vals(k, 7 * me, dt))
    # reduce, allreduce (two phases from 64 KiB)
    total = sum(vals(n, q, dt) for q in range(p)).astype(dt)
    assert np.array_equal(ctx.allreduce(mine), total)
    r = ctx.reduce(mine, op="max", root=root)
    assert (r is None) if me != root else np.array_equal(r, vals(n, p - 1, dt))
    o3 = np.empty(n, dtype=dt)
    r3 = ctx.allreduce(mine, out=o3)
    assert r3 is o3 and np.array_equal(o3, total), (r3, o3, total, n, dt)


def address_reuse(ctx):
    """An array freed and a new one (other values) likely at its address."""
    p, me = ctx.nprocs, ctx.pid
    for rnd in range(4):
        x = np.full(20000, float(me + rnd))
        assert ctx.allgather(x)[:, 0].tolist() == [float(q + rnd) for q in range(p)]
        del x
        gc.collect()
        y = np.full(20000, -float(me + rnd))
        assert ctx.allreduce(y)[0] == -sum(float(q + rnd) for q in range(p))
        b = np.full(20000, float(me))
        ctx.broadcast(b, root=p - 1)
        assert (b == p - 1).all()


def mismatches(ctx):
    p, me = ctx.nprocs, ctx.pid
    if p < 2:
        return
    # different sizes: every process raises, the context goes on
    try:
        ctx.allgather(np.zeros(10 + me))
        raise AssertionError("no error")
    except ValueError as e:
        assert "different sizes" in str(e), e
    try:
        ctx.alltoall(np.zeros((p, 3), dtype=np.float64 if me else np.int64))
        raise AssertionError("no error")
    except TypeError as e:
        assert "different dtypes" in str(e), e
    # root sends an object, a member passes an array: the array is untouched
    keep = np.arange(70000.0)
    got = ctx.broadcast({"k": 1} if me == 0 else keep, root=0)
    assert got == {"k": 1}
    assert np.array_equal(keep, np.arange(70000.0))
    assert ctx.allreduce(np.ones(5))[0] == p


def subsets(ctx):
    p, me = ctx.nprocs, ctx.pid
    procs = [0, p - 1] if p > 1 else [0]
    a = np.full(40000, float(me))
    r = ctx.allreduce(a, procs=procs)           # two phases, non-members in step
    if me in procs:
        assert (r == sum(procs)).all()
    else:
        assert r is None
    g = ctx.allgather(np.full(3, me), procs=procs)
    if me in procs:
        assert g[:, 0].tolist() == procs
    ctx.sync()
    assert ctx.allreduce(1) == p


FOLD_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int16, np.int8, np.uint64,
               np.uint32, np.uint16, np.uint8, np.bool_, np.float16, np.complex64,
               np.dtype(">f8")]


def fold_vals(n, q, dt):
    """Process q's data for fold_checks: wrapping products and sums, NaN and
    signed zeros for the floating types."""
    x = ((np.arange(n) * 7 + 3 * q) % 23 - 11)
    dt = np.dtype(dt)
    if dt.kind in "fc":
        v = (x * 0.37).astype(dt)
        if n > 10:
            v[(q + 1) % 5::5] = -0.0
            v[(q + 2) % 5::5] = 0.0
            v[q % 7::7 * (q + 2)] = np.nan
        return v
    if dt.kind == "b":
        return x > q
    if dt.kind == "u":
        return (x + 11 + 200 * q).astype(np.int64).astype(dt)
    return (x * (1 + 40 * q)).astype(dt)


def same(got, want):
    """The same values, dtypes and shapes; NaN where NaN, signed zeros alike."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind == "c":
        return same(got.real, want.real) and same(got.imag, want.imag)
    if got.dtype.kind != "f":
        return np.array_equal(got, want)
    m = np.isnan(want)
    return (np.array_equal(np.isnan(got), m) and np.array_equal(got[~m], want[~m])
            and np.array_equal(np.signbit(got[~m]), np.signbit(want[~m])))


def fold_checks(ctx):
    """reduce and allreduce of every op on many dtypes (one and two phases)
    give NumPy's fold of the rows in pid order, bit for bit."""
    p, me = ctx.nprocs, ctx.pid
    ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
    for dt in FOLD_DTYPES:
        for n in (5, 3 * 8192 + 1, 70001):
            rows = [fold_vals(n, q, dt) for q in range(p)]
            for op, f in ufunc.items():
                want = rows[0].copy()
                for r in rows[1:]:
                    f(want, r, out=want)
                got = ctx.allreduce(rows[me], op=op)
                assert same(got, want), (dt, n, op, "allreduce")
                out = np.empty(n, dtype=dt)
                root = n % p
                r = ctx.reduce(rows[me], op=op, root=root, out=out if me == root else None)
                if me == root:
                    assert r is out and same(out, want), (dt, n, op, "reduce")
                else:
                    assert r is None
    # numbers
    assert ctx.allreduce(np.int8(100), op="sum") == np.array(100 * p).astype(np.int8)
    assert ctx.allreduce(float(me), op="max") == float(p - 1)


def cache_checks(ctx):
    ctx.allreduce(np.zeros(4))                  # the collective buffer exists
    live = ctx._registrations()["live"]
    for it, n in enumerate(SIZES):
        one_round(ctx, it, n)
    fold_checks(ctx)
    address_reuse(ctx)
    mismatches(ctx)
    subsets(ctx)
    # results of calls that put nothing (root of a gather) are not kept
    for _ in range(50):
        ctx.gather(np.ones(20000), root=0)
    ctx.sync()
    regs = ctx._registrations()
    # nothing of the caller's stays registered (or referenced) between calls
    assert regs["live"] == live and regs["kept"] == 0, (regs, live)
    # the buffer is as large as the largest call needed (allgather of
    # 200000 complex numbers at p processes), at most 1.5 times that
    assert regs["collective_buffer"] <= int(1.5 * ctx.nprocs * 200000 * 16) + 65536, regs
    return "cached ok"
