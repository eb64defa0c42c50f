"""superstep.dask: BSP runs over the partitions that Dask workers hold.

    from dask.distributed import Client, LocalCluster
    import dask.array as da, superstep.dask as sd

    client = Client(LocalCluster(n_workers=4, processes=True))
    x = da.random.random(1_000_000, chunks=100_000)
    y = sd.sort(x)                               # a Dask array, globally sorted

    def spmd(ctx, parts):                        # parts: this worker's chunks of x
        local = sum(float(p.sum()) for p in parts)
        return ctx.allreduce(local)
    sd.run(spmd, x)                              # one result per BSP process

One BSP process runs per Dask worker (pid = the worker's place in the
sorted list of worker addresses). Each gets, for every collection passed,
the list of the partitions that its worker holds (in partition order), so
the data are not moved before the run. The processes meet over TCP
(superstep.run(meet=...)): each worker starts one helper process for the
run, hands it its partitions and the function (cloudpickle), and returns its
result. A process that fails fails the run: the others' syncs fail (at the
latest after sync_timeout seconds), every task raises, and run() raises the
first error. Needs ``pip install superstep[dask]`` (dask, distributed).
"""
import os
import pickle
import secrets
import socket
import subprocess
import sys

import numpy as np

from ._core import SuperstepError

__all__ = ["run", "sort", "pagerank"]


def _client(client):
    if client is not None:
        return client
    from distributed import get_client
    return get_client()


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _host_of(addr):
    # "tcp://127.0.0.1:40123" -> "127.0.0.1"
    rest = addr.split("://", 1)[-1]
    return rest.rsplit(":", 1)[0].strip("[]")


def _partitions(client, coll):
    """futures of the collection's partitions, in partition order"""
    from distributed import wait
    if hasattr(coll, "to_delayed"):
        parts = coll.to_delayed()
        parts = list(np.asarray(parts, dtype=object).ravel()) if hasattr(parts, "ravel") \
            else list(parts)
    else:
        parts = list(coll)      # futures already
    futs = client.compute(parts)
    wait(futs)
    return futs


def _die_with_parent():
    """In the helper process (Linux): end when the worker that started it dies."""
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _bsp_task(pid, nprocs, host, port, secret, payload, timeout, sync_timeout, *parts):
    """Runs on a worker: one BSP process in a helper process of its own."""
    import cloudpickle
    env = dict(os.environ)
    env.pop("SUPERSTEP_ENGINE", None)
    env["SUPERSTEP_TCP_SECRET"] = secret
    env["SUPERSTEP_SYNC_TIMEOUT"] = str(sync_timeout)
    data = cloudpickle.dumps((pid, nprocs, host, port, timeout, payload, parts), protocol=5)
    p = subprocess.run([sys.executable, "-m", "superstep._dask_proc"], input=data,
                       capture_output=True, env=env, preexec_fn=_die_with_parent)
    try:
        status, value = pickle.loads(p.stdout)
    except Exception:
        status, value = "err", "the BSP process ended with status %d" % p.returncode
    if status == "ok" and p.returncode == 0:
        return value
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    raise SuperstepError("superstep.dask: BSP process %d of %d failed: %s%s" % (
        pid, nprocs, value, ("\n" + "\n".join(err[-12:])) if err else ""))


def run(spmd, *collections, client=None, args=(), kwargs=None, timeout=60.0,
        sync_timeout=120.0, gather=True):
    """Run spmd(ctx, parts_1, ..., parts_m, *args, **kwargs) as one BSP process per
    Dask worker; parts_i is the list of the partitions of collections[i] held
    by that worker (NumPy arrays for a Dask array, pandas frames for a
    dataframe; Dask futures work too). Returns the processes' results in pid
    order (gather=False: their Dask futures)."""
    import cloudpickle
    client = _client(client)
    workers = sorted(client.scheduler_info()["workers"])
    if not workers:
        raise SuperstepError("superstep.dask.run: the Dask cluster has no workers")
    n = len(workers)
    index = {w: k for k, w in enumerate(workers)}
    mine = [[[] for _ in collections] for _ in workers]
    for c, coll in enumerate(collections):
        futs = _partitions(client, coll)
        who = client.who_has(futs)
        for f in futs:
            holders = sorted(who.get(f.key, ()), key=lambda w: index.get(w, n))
            k = index.get(holders[0], 0) if holders else 0
            mine[k][c].append(f)
    host = _host_of(workers[0])
    port = client.run(_free_port, workers=[workers[0]])[workers[0]]
    secret = secrets.token_hex(32)
    payload = cloudpickle.dumps((spmd, tuple(args), dict(kwargs or {})), protocol=5)
    tasks = [client.submit(_bsp_task, k, n, host, port, secret, payload, timeout,
                           sync_timeout, *mine[k], workers=[w], allow_other_workers=False,
                           pure=False, retries=0)
             for k, w in enumerate(workers)]
    if not gather:
        return tasks
    return client.gather(tasks)


# ---------------------------------------------------------------- algorithms

def _sort_spmd(ctx, parts):
    keys = np.sort(np.concatenate(parts)) if parts else np.empty(0)
    p = ctx.nprocs
    if p == 1:
        return keys
    # regular samples -> p-1 splitters, the same on every process
    if keys.size:
        samples = keys[np.linspace(0, keys.size - 1, p).astype(np.int64)]
    else:
        samples = np.empty(0, dtype=keys.dtype)
    every = np.sort(np.concatenate([s for (s,) in ctx.allgather((samples,))]))
    splitters = every[np.linspace(0, every.size - 1, p + 1).astype(np.int64)[1:-1]] \
        if every.size else every
    bounds = np.searchsorted(keys, splitters, side="right")
    pieces = np.split(keys, bounds)
    got = ctx.alltoall(pieces)
    return np.sort(np.concatenate(got))


def sort(x, client=None, **kw):
    """A Dask array: the 1-d Dask array x sorted by a BSP sample sort (one
    process per worker, the data moved once)."""
    import dask.array as da
    client = _client(client)
    futs = run(_sort_spmd, x, client=client, gather=False, **kw)
    sizes = client.gather([client.submit(len, f, pure=False) for f in futs])
    chunks = [da.from_delayed(f, shape=(s,), dtype=x.dtype) for f, s in zip(futs, sizes)]
    return da.concatenate(chunks)


def pagerank(A, client=None, alpha=0.85, tol=1e-10, maxit=1000, **kw):
    """PageRank of the graph whose adjacency is the Dask array A (A[i, j] != 0
    for a link i -> j; row chunks are the partitions), by BSP processes on
    the workers. Returns (rank vector as a NumPy array, iterations)."""
    import dask
    client = _client(client)
    n = A.shape[0]
    starts = np.cumsum((0,) + A.chunks[0])
    blocks = A.to_delayed()
    blocks = blocks[:, 0] if blocks.ndim == 2 else blocks
    if A.ndim != 2 or A.shape[1] != n or len(A.chunks[1]) != 1:
        raise ValueError("superstep.dask.pagerank: A must be square and chunked by rows only")
    parts = [dask.delayed(_links_in)(d, int(starts[i]), n) for i, d in enumerate(blocks)]
    res = run(_pagerank_spmd_links, parts, client=client,
              args=(n, alpha, tol, maxit), **kw)
    return res[0]


def _links_in(a, lo, n):
    """The links of a chunk of rows of A starting at row lo: (lo, src, dst)."""
    import scipy.sparse as sp
    s = sp.coo_matrix(np.asarray(a) if not sp.issparse(a) else a)
    return (lo, s.row.astype(np.int64) + lo, s.col.astype(np.int64))


def _pagerank_spmd_links(ctx, parts, n, alpha, tol, maxit):
    """parts: this worker's (lo, src, dst) link lists. Each process owns the
    links it holds; every iteration it scatters r[src]/outdeg[src] to dst and
    an allreduce assembles the new vector."""
    src = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, np.int64)
    dst = np.concatenate([p[2] for p in parts]) if parts else np.empty(0, np.int64)
    outdeg = ctx.allreduce(np.bincount(src, minlength=n).astype(np.float64))
    inv = np.where(outdeg > 0, 1.0 / np.maximum(outdeg, 1.0), 0.0)
    dangling = outdeg == 0
    r = np.full(n, 1.0 / n)
    it = 0
    for it in range(1, maxit + 1):
        contrib = np.bincount(dst, weights=r[src] * inv[src], minlength=n)
        contrib = ctx.allreduce(contrib)
        new = alpha * (contrib + r[dangling].sum() / n) + (1.0 - alpha) / n
        diff = float(np.abs(new - r).sum())
        r = new
        if diff < tol:
            break
    return r, it
