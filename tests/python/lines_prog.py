"""Every rank prints many lines (in two write calls each when stdout is
unbuffered, without the package's fix); the test checks each line arrives
whole."""
import superstep

rank = superstep.mpi_world()[0]
pad = "x" * (40 + 13 * rank)
for i in range(3000):
    print("LINE rank %d item %d %s END" % (rank, i, pad))
superstep.run(lambda ctx: ctx.sync())
print("DONE rank %d" % rank)
