"""Failures as a caller sees them, the same on threads and MPI ranks: a
process that returns early and one that raises; the caller catches the
error around superstep.run and goes on. Prints "CAUGHT <case> <rank>:
<type>: <text>" and "FRAMES <case> <rank>: <files of the traceback>"."""
import traceback

import superstep


def early(ctx):
    if ctx.pid == 1:
        return "left"
    ctx.sync()
    return "synced"


def boom(ctx):
    ctx.sync()
    if ctx.pid == 1:
        raise ValueError("boom on process 1")
    ctx.sync()


rank = superstep.mpi_world()[0]
for case in (early, boom):
    try:
        superstep.run(case, p=2)
        print("NOERROR %s %d" % (case.__name__, rank), flush=True)
    except superstep.SuperstepError as e:
        print("CAUGHT %s %d: %s: %s" % (case.__name__, rank, type(e).__name__, e), flush=True)
        files = [f.filename.rsplit("/", 1)[-1] for f in traceback.extract_tb(e.__traceback__)]
        print("FRAMES %s %d: %s" % (case.__name__, rank, " ".join(files)), flush=True)
    except ValueError as e:
        print("CAUGHT %s %d: %s: %s [%s]" % (case.__name__, rank, type(e).__name__, e,
                                             " ".join(getattr(e, "__notes__", []))), flush=True)
        files = [f.filename.rsplit("/", 1)[-1] for f in traceback.extract_tb(e.__traceback__)]
        print("FRAMES %s %d: %s" % (case.__name__, rank, " ".join(files)), flush=True)
print("NEXT %d %s" % (rank, superstep.run(lambda ctx: ctx.allreduce(1), p=2)), flush=True)
