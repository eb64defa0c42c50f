import numpy as np
import superstep


def step(ctx, a):
    ctx.sync()


def spmd(ctx):
    a = np.zeros(1000)
    for i in range(20):
        step(ctx, a)
    for i in range(5):
        ctx.allreduce(a)
    return ctx.bcast(1)


superstep.run(spmd, p=2)
