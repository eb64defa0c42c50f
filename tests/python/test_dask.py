"""superstep.dask over dask.distributed.LocalCluster (worker processes)."""
import numpy as np
import pytest

import superstep

pytest.importorskip("distributed")
pytestmark = pytest.mark.skipif(not superstep.have_mpi(), reason="needs the MPI engine")


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_run_over_the_partitions_each_worker_holds(client):
    import dask.array as da
    import superstep.dask as sd
    x = da.arange(1000, chunks=100)

    def spmd(ctx, parts):
        local = sum(int(p.sum()) for p in parts)
        return ctx.pid, ctx.nprocs, len(parts), ctx.allreduce(local)
    res = sd.run(spmd, x, client=client)
    assert [r[0] for r in res] == [0, 1, 2] and all(r[1] == 3 for r in res)
    assert sum(r[2] for r in res) == 10
    assert all(r[3] == 999 * 1000 // 2 for r in res)


def test_bsp_sort_of_a_dask_array(client):
    import dask.array as da
    import superstep.dask as sd
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 30, 20000)
    y = sd.sort(da.from_array(a, chunks=3000), client=client)
    assert isinstance(y, da.Array)
    assert (y.compute() == np.sort(a)).all()


def test_bsp_pagerank_of_a_dask_array(client):
    import dask.array as da
    import superstep.dask as sd
    rng = np.random.default_rng(2)
    n = 300
    A = (rng.random((n, n)) < 0.02).astype(np.float64)
    A[5] = 0                                     # a dangling page
    r, it = sd.pagerank(da.from_array(A, chunks=(70, n)), client=client, tol=1e-12)
    # the NumPy reference
    out = A.sum(axis=1)
    inv = np.where(out > 0, 1.0 / np.maximum(out, 1), 0.0)
    ref = np.full(n, 1.0 / n)
    for _ in range(1000):
        new = 0.85 * (A.T @ (ref * inv) + ref[out == 0].sum() / n) + 0.15 / n
        done = np.abs(new - ref).sum() < 1e-12
        ref = new
        if done:
            break
    assert np.allclose(r, ref, atol=1e-12) and abs(r.sum() - 1) < 1e-9


def test_a_failing_process_fails_the_run(client):
    import dask.array as da
    import superstep.dask as sd
    x = da.arange(30, chunks=10)

    def spmd(ctx, parts):
        ctx.sync()
        if ctx.pid == 1:
            raise ValueError("boom in BSP process 1")
        ctx.sync()
        return 0
    with pytest.raises(superstep.SuperstepError, match="BSP process"):
        sd.run(spmd, x, client=client, sync_timeout=30)


def test_a_killed_worker_fails_the_run_without_a_hang(client):
    import os
    import signal
    import time
    import dask.array as da
    import superstep.dask as sd
    x = da.arange(30, chunks=10)

    def spmd(ctx, parts):
        ctx.sync()
        if ctx.pid == 2:
            os.kill(os.getppid(), signal.SIGKILL)   # the Dask worker of process 2
            time.sleep(30)
        for _ in range(1000):
            ctx.sync()
            time.sleep(0.01)
        return 0
    t = time.time()
    with pytest.raises(Exception, match="BSP process|KilledWorker|lost") as info:
        sd.run(spmd, x, client=client, sync_timeout=5)
    print("ERROR:", info.value)
    assert time.time() - t < 60
