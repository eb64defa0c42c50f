"""The calls mpi4py's users look for (bcast, barrier, scan, exscan,
allreduce of Python numbers), run by superstep and, where mpi4py is there
and the engine is MPI, by mpi4py on the same ranks in the same run: the
results must be equal. Prints "SAME <name> ..." per call, "DONE" at the end.

    python3 mpi4py_calls.py            (threads: p=3, against the expected values)
    bsprun --engine mpi -n 3 python3 mpi4py_calls.py
    bsprun --engine hybrid -n 4 -t 2 python3 mpi4py_calls.py   (against the expected values)
"""
import sys

import numpy as np

import superstep

BIG = 1 << 70


def values(rank):
    return {
        "int": rank + 1,
        "big": BIG + rank,
        "neg": -(rank * 7),
        "float": 0.5 * rank,
        "list": [rank],
        "array": np.arange(3.0) + rank,
    }


def calls(c, rank, size):
    """The same calls through an mpi4py-like object c (ctx, or a comm)."""
    v = values(rank)
    out = {}
    out["bcast"] = c.bcast({"cfg": 1, "from": rank} if rank == 0 else None, root=0)
    out["bcast1"] = c.bcast("x%d" % rank, root=size - 1)
    c.barrier()
    out["allreduce_int"] = c.allreduce(v["int"])
    out["allreduce_big"] = c.allreduce(v["big"])
    out["allreduce_prod"] = c.allreduce(v["int"], op=_op(c, "prod"))
    out["allreduce_max"] = c.allreduce(v["neg"], op=_op(c, "max"))
    out["allreduce_float"] = c.allreduce(v["float"])
    out["allreduce_list"] = c.allreduce(v["list"])
    out["scan_int"] = c.scan(v["int"])
    out["scan_big"] = c.scan(v["big"])
    out["scan_prod"] = c.scan(v["int"], op=_op(c, "prod"))
    out["scan_list"] = c.scan(v["list"])
    out["exscan_int"] = c.exscan(v["int"])
    out["exscan_min"] = c.exscan(v["neg"], op=_op(c, "min"))
    out["scan_array"] = c.scan(v["array"])
    out["reduce_int"] = c.reduce(v["int"], root=0)
    return out


def _op(c, name):
    if isinstance(c, superstep.Context):
        return name
    from mpi4py import MPI
    return {"sum": MPI.SUM, "prod": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX}[name]


def expected(rank, size):
    """mpi4py's lower-case semantics, computed here (threads)."""
    vs = [values(q) for q in range(size)]

    def fold(key, f, upto):
        acc = vs[0][key]
        for q in range(1, upto):
            acc = f(acc, vs[q][key])
        return acc
    add = lambda a, b: a + b          # noqa: E731
    mul = lambda a, b: a * b          # noqa: E731
    return {
        "bcast": {"cfg": 1, "from": 0},
        "bcast1": "x%d" % (size - 1),
        "allreduce_int": fold("int", add, size),
        "allreduce_big": fold("big", add, size),
        "allreduce_prod": fold("int", mul, size),
        "allreduce_max": fold("neg", max, size),
        "allreduce_float": fold("float", add, size),
        "allreduce_list": fold("list", add, size),
        "scan_int": fold("int", add, rank + 1),
        "scan_big": fold("big", add, rank + 1),
        "scan_prod": fold("int", mul, rank + 1),
        "scan_list": fold("list", add, rank + 1),
        "exscan_int": fold("int", add, rank) if rank else None,
        "exscan_min": fold("neg", min, rank) if rank else None,
        "scan_array": fold("array", add, rank + 1),
        "reduce_int": fold("int", add, size) if rank == 0 else None,
    }


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def compare(rank, mine, ref):
    bad = 0
    for k in sorted(ref):
        if same(mine[k], ref[k]):
            print("SAME %s rank %d" % (k, rank), flush=True)
        else:
            bad += 1
            print("DIFF %s rank %d: superstep %r (%s), reference %r (%s)"
                  % (k, rank, mine[k], type(mine[k]).__name__, ref[k], type(ref[k]).__name__),
                  flush=True)
    return bad


def main():
    eng = superstep.engine()
    if eng == "pthread":
        res = superstep.run(lambda ctx: ctx.gather(calls(ctx, ctx.pid, ctx.nprocs)))
        bad = sum(compare(r, res[r], expected(r, len(res))) for r in range(len(res)))
    elif eng == "hybrid":
        # each rank's run() returns its first thread's results (pid r*T)
        pid, n, mine = superstep.run(lambda ctx: (ctx.pid, ctx.nprocs,
                                                  calls(ctx, ctx.pid, ctx.nprocs)))
        print("REFERENCE computed (hybrid)", flush=True)
        bad = compare(pid, mine, expected(pid, n))
    else:
        rank, size = superstep.mpi_world()
        mine = superstep.run(lambda ctx: calls(ctx, ctx.pid, ctx.nprocs))
        try:
            from mpi4py import MPI
        except ImportError:
            ref = expected(rank, size)
            print("REFERENCE computed (no mpi4py)", flush=True)
        else:
            ref = calls(MPI.COMM_WORLD, rank, size)
            print("REFERENCE mpi4py", flush=True)
        bad = compare(rank, mine, ref)
    print("DONE bad=%d" % bad, flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
