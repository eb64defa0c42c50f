"""Failures across the ranks of the hybrid engine (bsprun --engine hybrid -n 4
-t 2): process 2 (rank 1) raises, then process 3 (rank 1) returns early;
rank 0's threads only see their syncs fail, and run() there names the cause
in a note. Prints "CAUGHT <case> <rank> <type> | <notes>"."""
import superstep


def boom(ctx):
    ctx.sync()
    if ctx.pid == 2:
        raise ValueError("boom on process 2")
    ctx.sync()


def early(ctx):
    if ctx.pid == 3:
        return
    ctx.sync()


rank = superstep.mpi_world()[0]
for f in (boom, early):
    try:
        superstep.run(f)
        print("NOERROR", f.__name__, rank, flush=True)
    except superstep.SuperstepError as e:
        print("CAUGHT", f.__name__, rank, type(e).__name__, "|",
              " / ".join(getattr(e, "__notes__", [])), flush=True)
    except ValueError as e:
        print("CAUGHT", f.__name__, rank, type(e).__name__, "|", e, flush=True)
print("NEXT", rank, superstep.run(lambda ctx: ctx.allreduce(1)), flush=True)
