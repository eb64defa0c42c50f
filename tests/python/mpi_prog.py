"""Run by test_mpi.py as: bsprun --engine mpi -n N python3 mpi_prog.py MODE
(or --engine hybrid -n N -t T). Every rank runs this script; superstep.run
spans the ranks (and their threads)."""
import os
import sys
import numpy as np
import superstep

mode = sys.argv[1]


def checks(ctx):
    p, s = ctx.nprocs, ctx.pid
    assert superstep.engine() in ("mpi", "hybrid")
    dst = np.zeros(p, dtype=np.int64)
    with ctx.register(dst) as slot:
        for q in range(p):
            ctx.put(np.array([s + 1]), q, slot, offset=s)
        ctx.sync()
        assert dst.tolist() == list(range(1, p + 1)), dst
        out = np.zeros(1, dtype=np.int64)
        ctx.get((s + 1) % p, slot, 0, out)
        ctx.sync()
        assert out[0] == 1
        try:
            ctx.put(np.zeros(1, dtype=np.int64), p, slot)
            raise AssertionError("no error")
        except IndexError as e:
            assert "dst_pid %d is out of range (nprocs %d)" % (p, p) in str(e)
        try:
            ctx.put(np.zeros(3, dtype=np.int64), 0, slot, offset=p - 1)
            raise AssertionError("no error")
        except IndexError as e:
            assert "out of bounds" in str(e)
    big = np.zeros(1 << 16)    # a large put releases the GIL
    with ctx.register(big) as bs:
        ctx.put(np.full(1 << 15, s, dtype=np.float64), (s + 1) % p, bs, offset=0)
        ctx.sync()
        assert big[0] == (s - 1) % p
    ctx.send((s + 1) % p, np.arange(4) * s, tag=3)
    ctx.send((s + 1) % p, ("obj", s))
    ctx.sync()
    ms = ctx.messages()
    assert [m.source for m in ms] == [(s - 1) % p] * 2
    assert ms[0].payload.tolist() == [0, (s - 1) % p * 1, (s - 1) % p * 2, (s - 1) % p * 3]
    assert ms[1].payload == ("obj", (s - 1) % p)
    tot = ctx.allreduce(np.arange(200000.0) + s)
    assert tot[5] == 5 * p + sum(range(p))
    assert ctx.allreduce(s, op="max") == p - 1
    assert ctx.allreduce(np.array([s + 1]), op=lambda a, b: a * b)[0] == np.prod(range(1, p + 1))
    r = ctx.reduce(np.array([s]), root=p - 1)
    assert (r is None) == (s != p - 1)
    b = np.full(2, s)
    ctx.broadcast(b, root=p - 1)
    assert (b == p - 1).all()
    g = ctx.gather(np.array([s]), root=0)
    assert (g is None) == (s != 0)
    assert ctx.allgather(np.array([s])).ravel().tolist() == list(range(p))
    assert ctx.alltoall(np.arange(p) + 10 * s).tolist() == [10 * q + s for q in range(p)]
    if p > 1:
        try:
            ctx.allreduce(np.zeros(s + 1))
            raise AssertionError("no error")
        except ValueError as e:
            assert "different sizes" in str(e)
    # objects and scalars, as on threads
    assert ctx.allgather({"r": s}) == [{"r": q} for q in range(p)]
    assert ctx.broadcast(("t", np.arange(3)) if s == 0 else None)[1].tolist() == [0, 1, 2]
    assert ctx.alltoall([(s, q) for q in range(p)]) == [(q, s) for q in range(p)]
    assert ctx.allreduce([s]) == list(range(p))
    assert ctx.scatter(list(range(p)) if s == 0 else None) == s
    with ctx.alltoall_init(np.arange(p) + 10 * s) as h:     # persistent: one superstep
        for it in range(3):
            h.out[:] = -1
            assert h().tolist() == [10 * q + s for q in range(p)]
    m = ctx.probe()
    assert m.p >= p and m.g() > 0
    return "ok"


def source_changed_before_sync(ctx):
    """SUPERSTEP_CHECK=1 reports it: process 1 changes a put's source before
    the sync"""
    dst = np.zeros(4)
    with ctx.register(dst) as slot:
        src = np.arange(4.0)
        ctx.put(src, (ctx.pid + 1) % ctx.nprocs, slot)
        if ctx.pid == 1:
            src[0] = 5.0
        ctx.sync()


if mode == "ok":
    rank, size = superstep.mpi_world()
    res = superstep.run(checks)
    res2 = superstep.run(lambda ctx: ctx.pid * 10)     # hooks again
    print("OK rank %d of %d: %r %r" % (rank, size, res, res2), flush=True)
elif mode == "cache":
    # the collectives' collective buffer over the ranks (coll_checks.py)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from coll_checks import cache_checks
    rank, size = superstep.mpi_world()
    print("CACHE rank %d of %d: %s" % (rank, size, superstep.run(cache_checks)), flush=True)
elif mode == "raise":
    def spmd(ctx):
        ctx.sync()
        if ctx.pid == 1:
            raise ValueError("boom on one rank")
        for _ in range(5):     # the others' next sync fails, naming process 1
            ctx.sync()
    superstep.run(spmd)        # raised on every rank: uncaught, the job ends
    print("NOT REACHED", flush=True)
elif mode == "checked_comm":
    # the same over an mpi4py communicator (a run per half of the ranks)
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
    half = MPI.COMM_WORLD.Split(rank % 2, rank)

    spmd = source_changed_before_sync
    try:
        superstep.run(spmd, comm=half)
        print("NOT REACHED", flush=True)
    except superstep.BSPError as e:
        print("BSPERROR rank %d: pid=%d: %s" % (rank, e.pid, e), flush=True)
elif mode == "checked_every":
    # the same report, caught by run() on every rank
    spmd = source_changed_before_sync
    rank = superstep.mpi_world()[0]
    try:
        superstep.run(spmd)
        print("NOT REACHED", flush=True)
    except superstep.BSPError as e:
        print("BSPERROR rank %d: pid=%d nprocs=%d primitive=%s: %s"
              % (rank, e.pid, e.nprocs, e.primitive, e), flush=True)
    # the next run works
    print("AFTER rank %d: %r" % (rank, int(superstep.run(lambda ctx: ctx.allreduce(1)))), flush=True)
elif mode == "mismatch":
    def spmd(ctx):
        for _ in range(ctx.pid + 1):
            ctx.sync()
    try:
        superstep.run(spmd)
    except superstep.SyncError as e:
        print("SYNCERROR rank %d: %s" % (superstep.mpi_world()[0], e), flush=True)
        sys.exit(3)
elif mode == "apps":
    rank, size = superstep.mpi_world()
    import scipy.sparse as sps
    # sequential calls on every rank span the ranks: rank 0's arguments
    # are the input, every rank gets the result
    x = np.arange(1000.0) if rank == 0 else np.ones(1000)
    assert superstep.apps.inprod(x, x) == np.arange(1000.0) @ np.arange(1000.0)
    k = np.arange(1000, dtype=np.uint32)[::-1].copy()
    assert (superstep.apps.sort(k if rank == 0 else None, p=size) == np.sort(k)).all()
    G = sps.random(60, 60, density=0.08, format="csr", random_state=3)
    r_seq = superstep.apps.pagerank(G if rank == 0 else None)

    # inside a run: ctx= (the others' arguments are not used)
    def spmd(ctx):
        mine = ctx.pid == 0
        A = sps.random(50, 40, density=0.1, format="csr", random_state=5)
        v = np.arange(40.0)
        y = superstep.apps.spmv(A if mine else None, v if mine else None, ctx=ctx)
        r = superstep.apps.pagerank(G if mine else None, ctx=ctx)
        z = np.arange(16.0) + 0j
        f = (superstep.apps.fft(z if mine else None, ctx=ctx)
             if superstep.have_fft() and ctx.nprocs in (1, 2, 4) else None)
        if mine:
            assert np.allclose(y, A @ v) and np.allclose(r, r_seq)
            assert f is None or np.allclose(f, np.fft.fft(z))
        else:
            assert y is None and r is None and f is None
        return ctx.allreduce(1)
    assert superstep.run(spmd) == size
    assert abs(r_seq.sum() - 1.0) < 1e-9
    print("APPS rank %d" % rank, flush=True)
elif mode == "comm":
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    # the whole world, then halves: each half is a run of its own
    r1 = superstep.run(lambda ctx: (ctx.pid, ctx.nprocs, ctx.allgather(ctx.pid).tolist()),
                       comm=world)
    half = world.Split(rank % 2, rank)
    r2 = superstep.run(lambda ctx: ctx.allreduce([rank]), comm=half)
    # an application call spans the communicator's processes
    r3 = superstep.run(lambda ctx: superstep.apps.inprod(np.arange(4.0), np.ones(4), ctx=ctx),
                       comm=half)
    assert r3 == (6.0 if half.Get_rank() == 0 else None), r3
    print("COMM rank %d: %r %r" % (rank, r1, sorted(r2)), flush=True)
elif mode == "checked":
    # SUPERSTEP_CHECK=1: rank 1 changes a put's source before the sync
    spmd = source_changed_before_sync
    superstep.run(spmd)
    print("NOT REACHED", flush=True)
