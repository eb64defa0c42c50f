"""The applications of Superstep as calls on NumPy / SciPy data.

Each call is the C library call of examples/<app>/ (bsp_ip, bsp_sample_sort,
bsp_radix_sort, bsp_fft, bsp_spmv, bsp_pagerank): it starts its own SPMD
section of p processes on threads of the calling process (p=None: one per
core), with the GIL released. They are sequential-code calls: on the MPI
engine each rank that calls one runs it on its own threads (call them from
one rank, or inside nothing else).
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


def inprod(x, y, p=None):
    """<x, y> of two float64 vectors on p processes (bsp_ip)."""
    x = _vec("x", x, np.float64)
    y = _vec("y", y, np.float64)
    if x.size != y.size:
        raise ValueError("inprod: x has %d elements, y has %d" % (x.size, y.size))
    return _core._app_inprod(x, y, p)


def sort(keys, p=None, method="sample"):
    """A sorted copy of keys (uint32) on p processes: method 'sample' (sample
    sort, bsp_sample_sort) or 'radix' (bsp_radix_sort)."""
    a = np.asarray(keys)
    if a.ndim != 1:
        raise ValueError("sort: keys must be one-dimensional, shape is %s" % (a.shape,))
    if a.dtype != np.uint32:
        if not (np.issubdtype(a.dtype, np.integer) and a.size == 0 or
                np.can_cast(a.dtype, np.uint32, casting="safe") or
                (np.issubdtype(a.dtype, np.integer) and a.size and a.min() >= 0
                 and a.max() <= 0xffffffff)):
            raise TypeError("sort: the C sort handles uint32 keys; got dtype %s with values "
                            "outside 0 .. 2**32-1" % a.dtype)
    out = np.array(a, dtype=np.uint32, copy=True, order="C")
    if method not in ("sample", "radix"):
        raise ValueError("sort: method must be 'sample' or 'radix', got %r" % (method,))
    rc = _core._app_sort(out, p, method == "radix")
    if rc != 0:
        raise RuntimeError("sort: the C library call failed (%d)" % rc)
    return out.astype(a.dtype, copy=False) if a.dtype != np.uint32 and np.issubdtype(a.dtype, np.integer) else out


def _fft(x, p, sign):
    if not _core.have_fft():
        raise NotImplementedError("fft: superstep was built without FFTW (libfftw3-dev)")
    a = np.array(x, dtype=np.complex128, copy=True, order="C")
    if a.ndim != 1:
        raise ValueError("fft: x must be one-dimensional, shape is %s" % (a.shape,))
    buf = a.view(np.float64)
    rc = _core._app_fft(buf, sign, p)
    if rc != 0:
        raise ValueError("fft: length %d on this number of processes is not supported by "
                         "the BSP FFT (bsp_fft returned %d; n must be a multiple of p*p "
                         "with n/p a power of two for the fast path)" % (a.size, rc))
    return a


def fft(x, p=None):
    """The discrete Fourier transform of x (as numpy.fft.fft) on p processes (bsp_fft)."""
    return _fft(x, p, -1)


def ifft(x, p=None):
    """The inverse transform (as numpy.fft.ifft, scaled by 1/n) on p processes."""
    a = _fft(x, p, +1)
    if a.size:
        a /= a.size
    return a


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


def spmv(A, x, p=None, partition="rows"):
    """y = A x for a scipy.sparse matrix A (CSR) on p processes (bsp_spmv);
    partition: 'rows', 'cols' or '2d'."""
    m, n, rowptr, col, val = _csr(A)
    x = _vec("x", x, np.float64)
    if x.size != n:
        raise ValueError("spmv: x has %d elements, A has %d columns" % (x.size, n))
    if partition not in ("rows", "cols", "2d"):
        raise ValueError("spmv: partition must be 'rows', 'cols' or '2d'")
    y = np.zeros(m, dtype=np.float64)
    rc = _core._app_spmv(m, n, rowptr, col, val, x, y, p, partition)
    if rc != 0:
        raise RuntimeError("spmv: bsp_spmv failed (%d)" % rc)
    return y


def pagerank(A, p=None, alpha=0.85, tol=1e-10, maxit=1000, return_info=False):
    """PageRank of the directed graph with adjacency matrix A (A[i, j] != 0: an
    edge i -> j) on p processes (bsp_pagerank). Returns the ranks (summing
    to 1), and with return_info=True also {'iters', 'diff', 'seconds'}."""
    n, _, rowptr, col, val = _csr(A, square=True)
    r = np.zeros(n, dtype=np.float64)
    rc, info = _core._app_pagerank(n, rowptr, col, val, r, p, float(alpha), float(tol), int(maxit))
    if rc != 0:
        raise RuntimeError("pagerank: bsp_pagerank failed (%d)" % rc)
    return (r, info) if return_info else r
