"""superstep.run's p on every engine: n = min(p, what the engine has), a
ProcessCountWarning when n != p, and ranks a run does not take return None.
Prints one line per run: "P <p> -> <result> warned=<0/1>"."""
import warnings

import superstep

rank = superstep.mpi_world()[0]
for p in (1, 2, 64, None):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = superstep.run(lambda ctx: (ctx.nprocs, ctx.allreduce(1)), p=p)
    warned = [x for x in w if issubclass(x.category, superstep.ProcessCountWarning)]
    where = "|".join("%s:%d" % (x.filename.rsplit("/", 1)[-1], x.lineno) for x in warned)
    print("RANK %d P %s -> %s warned=%d %s" % (rank, p, res, len(warned), where), flush=True)
    if warned:
        print("TEXT %s" % warned[0].message, flush=True)
