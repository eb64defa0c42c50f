"""The collectives' collective buffer on threads (coll_checks.py): results
stay right over many calls with different arrays, shapes and dtypes; no
registration stays behind; mismatched arguments raise on every process."""
import os
import sys

import pytest

import superstep

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coll_checks import cache_checks  # noqa: E402


@pytest.mark.parametrize("p", [1, 2, 3])
def test_collective_buffer_threads(p):
    assert superstep.run(cache_checks, p=p) == "cached ok"


def test_one_superstep_per_collective_on_arrays():
    """Once the buffer is large enough, a collective on arrays is one
    superstep (objects take more)."""
    import numpy as np

    def spmd(ctx):
        a = np.ones((ctx.nprocs, 1000))
        ctx.alltoall(a)
        ctx.allreduce(np.ones(40000))
        steps = []
        for call in (lambda: ctx.alltoall(a), lambda: ctx.allgather(a[0]),
                     lambda: ctx.broadcast(a[0]), lambda: ctx.gather(a[0]),
                     lambda: ctx.scatter(a), lambda: ctx.reduce(a[0])):
            s = ctx.step
            call()
            steps.append(ctx.step - s)
        s = ctx.step
        ctx.allreduce(np.ones(40000))           # two phases: two supersteps
        steps.append(ctx.step - s)
        return steps
    assert superstep.run(spmd, p=3) == [1, 1, 1, 1, 1, 1, 2]
