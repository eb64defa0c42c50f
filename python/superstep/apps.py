"""The applications of Superstep as calls on NumPy / SciPy data.

Each call is the C library call of examples/<app>/ (bsp_ip, bsp_sample_sort,
bsp_radix_sort, bsp_fft, bsp_spmv, bsp_pagerank), with the GIL released.

* ``apps.pagerank(A, ctx=ctx)`` inside an SPMD function: a collective call
  of every process of the run; the call's BSPlib run spans the run's
  processes (threads, MPI ranks, or processes joined by comm= or meet=).
  Process 0's arguments are the input (the others may pass None); process 0
  gets the result, the others None.
* ``apps.pagerank(A, p=4)`` from sequential code on threads: the call runs
  its own SPMD section of p threads (p=None: one per core).
* The same sequential call on the MPI engine (every rank runs the script,
  ``bsprun --engine mpi``): every rank calls it, it spans min(p, ranks)
  ranks as superstep.run does (rank 0's arguments are the input) and every
  rank it spans gets the result (the others None).
"""
import numpy as np

from . import _core

__all__ = ["inprod", "sort", "fft", "ifft", "spmv", "pagerank"]


def _vec(name, a, dtype):
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError("%s must be one-dimensional, shape is %s" % (name, a.shape))
    if a.dtype != dtype:
        if not np.can_cast(a.dtype, dtype, casting="same_kind"):
            raise TypeError("%s has dtype %s; %s is needed" % (name, a.dtype, np.dtype(dtype)))
        a = a.astype(dtype)
    return np.ascontiguousarray(a)


def _dispatch(name, ctx, p, prepare, call, finish):
    """Run one application call.

    prepare() checks and converts the caller's arguments (raising on bad
    ones) and returns the job; call(job, ctx) runs the C call and returns
    its raw result; finish(job, raw) makes the Python result."""
    if ctx is None and _core.engine() == "mpi" and _core._in_run() is None:
        # sequential code on MPI ranks: one run over min(p, ranks) ranks (the
        # rule of superstep.run; ranks it does not take get None)
        return _core.run(lambda c: c.broadcast(_dispatch(name, c, None, prepare, call,
                                                         finish), root=0), p=p)
    if ctx is None:
        _core._warn_p(p)     # threads: min(p, the machine's p), as superstep.run
        job = prepare()
        return finish(job, call(job, None))
    if not isinstance(ctx, _core.Context):
        raise TypeError("apps.%s: ctx must be a superstep.Context, got %s"
                        % (name, type(ctx).__name__))
    if p is not None and p != ctx.nprocs:
        raise ValueError("apps.%s (process %d of %d): p=%r, but with ctx the call spans the "
                         "run's %d processes; leave p out" % (name, ctx.pid, ctx.nprocs, p,
                                                             ctx.nprocs))
    # process 0 checks its arguments; every process learns the outcome, so
    # that all enter the C call or all raise
    job, err = None, None
    if ctx.pid == 0:
        try:
            job = prepare()
        except Exception as e:          # raised below, after the others know
            err = e
    refused = ctx.broadcast(None if err is None else "%s: %s" % (type(err).__name__, err),
                            root=0)
    if err is not None:
        raise err
    if refused is not None:
        raise _core.SuperstepError("apps.%s (process %d of %d): process 0's arguments were "
                                   "refused (%s)" % (name, ctx.pid, ctx.nprocs, refused))
    raw = call(job, ctx)
    return finish(job, raw) if ctx.pid == 0 else None


_F64 = np.zeros(0, dtype=np.float64)
_U32 = np.zeros(0, dtype=np.uint32)
_U64 = np.zeros(0, dtype=np.uint64)


def inprod(x, y, p=None, ctx=None):
    """<x, y> of two float64 vectors (bsp_ip)."""
    def prepare():
        a = _vec("x", x, np.float64)
        b = _vec("y", y, np.float64)
        if a.size != b.size:
            raise ValueError("inprod: x has %d elements, y has %d" % (a.size, b.size))
        return a, b

    def call(job, c):
        a, b = job if job is not None else (_F64, _F64)
        return _core._app_inprod(a, b, p, c)

    return _dispatch("inprod", ctx, p, prepare, call, lambda job, r: r)


def sort(keys, p=None, method="sample", ctx=None):
    """A sorted copy of keys (uint32 values): method 'sample' (sample sort,
    bsp_sample_sort) or 'radix' (bsp_radix_sort)."""
    def prepare():
        a = np.asarray(keys)
        if a.ndim != 1:
            raise ValueError("sort: keys must be one-dimensional, shape is %s" % (a.shape,))
        if a.dtype != np.uint32:
            if not (np.issubdtype(a.dtype, np.integer) and a.size == 0 or
                    np.can_cast(a.dtype, np.uint32, casting="safe") or
                    (np.issubdtype(a.dtype, np.integer) and a.size and a.min() >= 0
                     and a.max() <= 0xffffffff)):
                raise TypeError("sort: the C sort handles uint32 keys; got dtype %s with "
                                "values outside 0 .. 2**32-1" % a.dtype)
        if method not in ("sample", "radix"):
            raise ValueError("sort: method must be 'sample' or 'radix', got %r" % (method,))
        return a, np.array(a, dtype=np.uint32, copy=True, order="C")

    def call(job, c):
        out = job[1] if job is not None else _U32
        return _core._app_sort(out, p, method == "radix", c)

    def finish(job, rc):
        a, out = job
        if rc != 0:
            raise RuntimeError("sort: the C library call failed (%d)" % rc)
        if a.dtype != np.uint32 and np.issubdtype(a.dtype, np.integer):
            return out.astype(a.dtype, copy=False)
        return out

    return _dispatch("sort", ctx, p, prepare, call, finish)


def _fft(x, p, sign, ctx, name):
    if not _core.have_fft():
        raise NotImplementedError("fft: superstep was built without FFTW (libfftw3-dev)")

    def prepare():
        a = np.array(x, dtype=np.complex128, copy=True, order="C")
        if a.ndim != 1:
            raise ValueError("fft: x must be one-dimensional, shape is %s" % (a.shape,))
        return a

    def call(a, c):
        return _core._app_fft(a.view(np.float64) if a is not None else _F64, sign, p, c)

    def finish(a, rc):
        if rc != 0:
            raise ValueError("fft: length %d on this number of processes is not supported "
                             "by the BSP FFT (bsp_fft returned %d; n must be a multiple of "
                             "p*p with n/p a power of two for the fast path)" % (a.size, rc))
        if sign > 0 and a.size:
            a /= a.size
        return a

    return _dispatch(name, ctx, p, prepare, call, finish)


def fft(x, p=None, ctx=None):
    """The discrete Fourier transform of x (as numpy.fft.fft) (bsp_fft)."""
    return _fft(x, p, -1, ctx, "fft")


def ifft(x, p=None, ctx=None):
    """The inverse transform (as numpy.fft.ifft, scaled by 1/n)."""
    return _fft(x, p, +1, ctx, "ifft")


def _csr(A, square=False):
    try:
        import scipy.sparse as sps
    except ImportError as e:  # pragma: no cover
        raise ImportError("spmv and pagerank need scipy") from e
    if not sps.issparse(A):
        A = sps.csr_matrix(np.asarray(A))
    A = sps.csr_matrix(A)
    A.sum_duplicates()
    A.sort_indices()
    m, n = A.shape
    if square and m != n:
        raise ValueError("the matrix must be square, shape is %s" % (A.shape,))
    if n > 0xffffffff:
        raise ValueError("at most 2**32 columns")
    rowptr = np.ascontiguousarray(A.indptr, dtype=np.uint64)
    col = np.ascontiguousarray(A.indices, dtype=np.uint32)
    val = np.ascontiguousarray(A.data, dtype=np.float64)
    return m, n, rowptr, col, val


def spmv(A, x, p=None, partition="rows", ctx=None):
    """y = A x for a scipy.sparse matrix A (CSR) (bsp_spmv); partition:
    'rows', 'cols' or '2d'."""
    def prepare():
        m, n, rowptr, col, val = _csr(A)
        v = _vec("x", x, np.float64)
        if v.size != n:
            raise ValueError("spmv: x has %d elements, A has %d columns" % (v.size, n))
        if partition not in ("rows", "cols", "2d"):
            raise ValueError("spmv: partition must be 'rows', 'cols' or '2d'")
        return m, n, rowptr, col, val, v, np.zeros(m, dtype=np.float64)

    def call(job, c):
        if job is None:
            job = (0, 0, np.zeros(1, dtype=np.uint64), _U32, _F64, _F64, _F64)
        return _core._app_spmv(*job, p, partition if partition in ("rows", "cols", "2d")
                               else "rows", c)

    def finish(job, rc):
        if rc != 0:
            raise RuntimeError("spmv: bsp_spmv failed (%d)" % rc)
        return job[6]

    return _dispatch("spmv", ctx, p, prepare, call, finish)


def pagerank(A, p=None, alpha=0.85, tol=1e-10, maxit=1000, return_info=False, ctx=None):
    """PageRank of the directed graph with adjacency matrix A (A[i, j] != 0: an
    edge i -> j) (bsp_pagerank). Returns the ranks (summing to 1), and with
    return_info=True also {'iters', 'diff', 'seconds'}."""
    def prepare():
        n, _, rowptr, col, val = _csr(A, square=True)
        return n, rowptr, col, val, np.zeros(n, dtype=np.float64)

    def call(job, c):
        if job is None:
            job = (0, np.zeros(1, dtype=np.uint64), _U32, _F64, _F64)
        return _core._app_pagerank(*job, p, float(alpha), float(tol), int(maxit), c)

    def finish(job, raw):
        rc, info = raw
        if rc != 0:
            raise RuntimeError("pagerank: bsp_pagerank failed (%d)" % rc)
        return (job[4], info) if return_info else job[4]

    return _dispatch("pagerank", ctx, p, prepare, call, finish)
