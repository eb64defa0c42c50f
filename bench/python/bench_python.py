"""Benchmarks of the Python package superstep (JSON lines on stdout).

  python3 bench_python.py [--p 2] [--only NAME]                  threads
  bsprun --engine mpi -n 2 python3 bench_python.py [--mpi4py]    MPI ranks

  sync_empty      ctx.sync() with no requests: median and minimum of batch means (us)
  put_exchange    total exchange with ctx.put, one array of b = 64 KiB,
                  256 KiB, 1 MiB to every other process (h = (p-1) b): GB/s
                  as bench_core's put_coarse (median batch, and best batch as
                  bench_core reports)
  alltoall        ctx.alltoall of 64 KiB .. 8 MiB per process (a new result
                  array each call, out= reused, and the persistent
                  ctx.alltoall_init), and the same with a registration
                  kept by hand (ctx.put + ctx.sync);
                  with --mpi4py: comm.Alltoall on the same NumPy buffers
  allreduce       ctx.allreduce of 1 Mi doubles (sum; new result, out=); with --mpi4py:
                  comm.Allreduce
  collectives     every collective on float64 arrays of 64 KiB and 1 MiB per
                  process (broadcast: root's array; gather, allgather, reduce,
                  allreduce: each process's argument; scatter: each process's
                  row; alltoall: each process's argument, p blocks), the plain
                  call (a new result) and with out= (the result array reused);
                  with --mpi4py: the same NumPy buffers through comm.Bcast,
                  Gather, Allgather, Scatter, Alltoall, Reduce, Allreduce
  lowercase       the calls by mpi4py's lower-case names on Python objects:
                  ctx.bcast of a small dict, ctx.allreduce, ctx.scan and
                  ctx.exscan of a Python int, ctx.barrier (us per call);
                  with --mpi4py: comm.bcast, allreduce, scan, exscan, barrier
"""
import argparse
import json
import time

import numpy as np
import superstep

ap = argparse.ArgumentParser()
ap.add_argument("--p", type=int, default=2)
ap.add_argument("--only", default=None)
ap.add_argument("--mpi4py", action="store_true")
ap.add_argument("--reps", type=int, default=0)
ap.add_argument("--coll", default=None, help="collectives: only these (comma-separated)")
opt = ap.parse_args()


def want(name):
    return opt.only is None or opt.only == name


def batch_times(ctx, fn, batch, nb):
    """the mean time of fn() in each of nb batches (seconds); the batches are
    separated by a sync so that every process times the same thing"""
    ts = []
    for _ in range(nb):
        ctx.sync()
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        ts.append((time.perf_counter() - t) / batch)
    return ts


def median_batches(ctx, fn, batch, nb):
    """median over nb batches of the mean time of fn() in a batch (seconds)"""
    return float(np.median(batch_times(ctx, fn, batch, nb)))


def emit(ctx, **kw):
    if ctx.pid == 0:
        kw.setdefault("engine", superstep.engine())
        kw.setdefault("p", ctx.nprocs)
        print(json.dumps(kw), flush=True)


def bench(ctx):
    p = ctx.nprocs
    if want("sync_empty"):
        for _ in range(200):
            ctx.sync()
        ts = batch_times(ctx, ctx.sync, 2000, 15)
        emit(ctx, bench="sync_empty", median_us=round(float(np.median(ts)) * 1e6, 3),
             min_us=round(min(ts) * 1e6, 3))
    if want("put_exchange"):
        # as bench_core's put_coarse: one block of b bytes to every other
        # process (h = (p-1) b), GB/s = h / superstep time
        for b in (64 << 10, 256 << 10, 1 << 20):
            dst = np.zeros(p * b, dtype=np.uint8)
            src = np.ones(b, dtype=np.uint8)
            peers = [(ctx.pid + 1 + k) % p for k in range(p - 1)]
            with ctx.register(dst) as slot:
                off = ctx.pid * b

                def step():
                    for q in peers:
                        ctx.put(src, q, slot, offset=off)
                    ctx.sync()
                step()
                ts = batch_times(ctx, step, 200 if b < 1 << 20 else 20, 15)
            t, tb = float(np.median(ts)), min(ts)
            h = b * (p - 1)
            # bench_core's put_coarse reports the best batch: best_* compare with it
            emit(ctx, bench="put_exchange", block_bytes=b, h_bytes=h,
                 superstep_us=round(t * 1e6, 2), gbytes_per_s=round(h / t / 1e9, 3),
                 best_superstep_us=round(tb * 1e6, 2), best_gbytes_per_s=round(h / tb / 1e9, 3))
    comm = None
    if opt.mpi4py:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    if want("alltoall"):
        b = 64 << 10
        while b <= 8 << 20:
            n = b // 8
            a = np.full((p, n // p), ctx.pid, dtype=np.float64)
            reps = 20 if b <= 1 << 20 else 5
            t1 = median_batches(ctx, lambda: ctx.alltoall(a), reps, 5)
            res = np.empty_like(a)      # reused, as mpi4py's receive buffer
            t1o = median_batches(ctx, lambda: ctx.alltoall(a, out=res), reps, 5)
            with ctx.alltoall_init(a) as h:       # registered once
                t1p = median_batches(ctx, h, reps, 5)
            out = np.empty_like(a)
            with ctx.register(out) as slot:
                def manual():
                    for q in range(p):
                        ctx.put(a[q], q, slot, offset=ctx.pid * (n // p))
                    ctx.sync()
                t2 = median_batches(ctx, manual, reps, 5)
            row = dict(bench="alltoall", bytes_per_process=b, ctx_alltoall_us=round(t1 * 1e6, 1),
                       ctx_alltoall_out_us=round(t1o * 1e6, 1),
                       ctx_alltoall_init_us=round(t1p * 1e6, 1),
                       put_registered_us=round(t2 * 1e6, 1))
            if comm is not None:
                r = np.empty_like(a)
                comm.Barrier()
                ts = []
                for _ in range(5):
                    comm.Barrier()
                    t = time.perf_counter()
                    for _ in range(reps):
                        comm.Alltoall(a, r)
                    ts.append((time.perf_counter() - t) / reps)
                row["mpi4py_Alltoall_us"] = round(float(np.median(ts)) * 1e6, 1)
            emit(ctx, **row)
            b *= 4
    if want("allreduce"):
        a = np.random.default_rng(ctx.pid).random(1 << 20)
        t1 = median_batches(ctx, lambda: ctx.allreduce(a), 5, 7)
        res = np.empty_like(a)
        t1o = median_batches(ctx, lambda: ctx.allreduce(a, out=res), 5, 7)
        row = dict(bench="allreduce", doubles=1 << 20, ctx_allreduce_us=round(t1 * 1e6, 1),
                   ctx_allreduce_out_us=round(t1o * 1e6, 1))
        if comm is not None:
            from mpi4py import MPI
            r = np.empty_like(a)
            ts = []
            for _ in range(7):
                comm.Barrier()
                t = time.perf_counter()
                for _ in range(5):
                    comm.Allreduce(a, r, op=MPI.SUM)
                ts.append((time.perf_counter() - t) / 5)
            row["mpi4py_Allreduce_us"] = round(float(np.median(ts)) * 1e6, 1)
        emit(ctx, **row)


def bench_collectives(ctx, comm):
    p, me = ctx.nprocs, ctx.pid
    for b in (64 << 10, 1 << 20):
        n = b // 8
        reps = 40 if b < 1 << 20 else 10
        a = np.full(n, float(me + 1))
        big = np.full((p, n), float(me + 1))          # scatter's root argument
        tot = np.empty(p * n)
        sq = np.full((p, n // p), float(me))           # alltoall
        r_g = np.empty((p, n))
        r_a = np.empty_like(sq)
        r_1 = np.empty(n)
        cases = [
            ("broadcast", lambda: ctx.broadcast(a), None,
             (lambda: comm.Bcast(a, root=0)) if comm else None),
            ("gather", lambda: ctx.gather(a), lambda: ctx.gather(a, out=r_g),
             (lambda: comm.Gather(a, r_g, root=0)) if comm else None),
            ("allgather", lambda: ctx.allgather(a), lambda: ctx.allgather(a, out=r_g),
             (lambda: comm.Allgather(a, r_g)) if comm else None),
            ("scatter", lambda: ctx.scatter(big), lambda: ctx.scatter(big, out=r_1),
             (lambda: comm.Scatter(big, r_1, root=0)) if comm else None),
            ("alltoall", lambda: ctx.alltoall(sq), lambda: ctx.alltoall(sq, out=r_a),
             (lambda: comm.Alltoall(sq, r_a)) if comm else None),
            ("reduce", lambda: ctx.reduce(a), lambda: ctx.reduce(a, out=r_1),
             (lambda: comm.Reduce(a, r_1, root=0)) if comm else None),
            ("allreduce", lambda: ctx.allreduce(a), lambda: ctx.allreduce(a, out=r_1),
             (lambda: comm.Allreduce(a, r_1)) if comm else None),
        ]
        for name, plain, with_out, mpi in cases:
            if opt.coll and name not in opt.coll.split(","):
                continue
            plain()
            row = dict(bench="collective", op=name, bytes_per_process=b,
                       ctx_us=round(median_batches(ctx, plain, reps, 7) * 1e6, 1))
            if with_out is not None:
                try:
                    with_out()
                except TypeError:       # a superstep without this out=
                    with_out = None
            if with_out is not None:
                row["ctx_out_us"] = round(median_batches(ctx, with_out, reps, 7) * 1e6, 1)
            if mpi is not None:
                mpi()
                ts = []
                for _ in range(7):
                    comm.Barrier()
                    t = time.perf_counter()
                    for _ in range(reps):
                        mpi()
                    ts.append((time.perf_counter() - t) / reps)
                row["mpi4py_us"] = round(float(np.median(ts)) * 1e6, 1)
            emit(ctx, **row)


def bench_lowercase(ctx, comm):
    me = ctx.pid
    cfg = {"n": 1000, "name": "run", "tol": 1e-9}
    cases = [
        ("bcast", lambda: ctx.bcast(cfg if me == 0 else None),
         (lambda: comm.bcast(cfg if me == 0 else None)) if comm else None),
        ("allreduce_int", lambda: ctx.allreduce(me + 1),
         (lambda: comm.allreduce(me + 1)) if comm else None),
        ("scan_int", lambda: ctx.scan(me + 1), (lambda: comm.scan(me + 1)) if comm else None),
        ("exscan_int", lambda: ctx.exscan(me + 1),
         (lambda: comm.exscan(me + 1)) if comm else None),
        ("barrier", lambda: ctx.barrier(), (lambda: comm.barrier()) if comm else None),
    ]
    reps = 200
    for name, mine, mpi in cases:
        mine()
        row = dict(bench="lowercase", op=name, ctx_us=round(median_batches(ctx, mine, reps, 7)
                                                           * 1e6, 2))
        if mpi is not None:
            mpi()
            ts = []
            for _ in range(7):
                comm.Barrier()
                t = time.perf_counter()
                for _ in range(reps):
                    mpi()
                ts.append((time.perf_counter() - t) / reps)
            row["mpi4py_us"] = round(float(np.median(ts)) * 1e6, 2)
        emit(ctx, **row)


def bench_all(ctx):
    bench(ctx)
    comm = None
    if opt.mpi4py and (want("collectives") or want("lowercase")):
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    if want("collectives"):
        bench_collectives(ctx, comm)
    if want("lowercase"):
        bench_lowercase(ctx, comm)


superstep.run(bench_all, p=None if superstep.engine() == "mpi" else opt.p)
