# Included by _core.pyx.
# ---------------------------------------------------------------------------
# Applications (library calls; they run their own SPMD sections on threads)
# ---------------------------------------------------------------------------

cdef unsigned _app_p(object p) except? 0xffffffff:
    if p is None:
        return 0
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or p < 1:
        raise ValueError("p must be a positive int or None, got %r" % (p,))
    return <unsigned>p


def _app_inprod(cnp.ndarray x, cnp.ndarray y, p):
    cdef unsigned P = _app_p(p)
    cdef double r
    cdef size_t n = x.size
    cdef const double *xp = <const double *>cnp.PyArray_DATA(x)
    cdef const double *yp = <const double *>cnp.PyArray_DATA(y)
    with _app_lock:
        with nogil:
            r = bsp_ip(xp, yp, n, P)
    return r


def _app_sort(cnp.ndarray keys, p, bint radix):
    cdef unsigned P = _app_p(p)
    cdef int rc
    cdef size_t n = keys.size
    cdef uint32_t *k = <uint32_t *>cnp.PyArray_DATA(keys)
    if P == 0:
        P = os.cpu_count() or 1
    with _app_lock:
        with nogil:
            if radix:
                rc = bsp_radix_sort(P, k, n, 1)
            else:
                rc = bsp_sample_sort(P, k, n)
    return rc


def _app_fft(cnp.ndarray x, int sign, p):
    cdef unsigned P = _app_p(p)
    cdef int rc
    cdef size_t n = x.size // 2          # x: the complex vector viewed as doubles
    cdef double *xp = <double *>cnp.PyArray_DATA(x)
    with _app_lock:
        with nogil:
            rc = bsp_fft(xp, n, sign, P)
    return rc


cdef sp_crs _crs(size_t m, size_t n, cnp.ndarray rowptr, cnp.ndarray col, cnp.ndarray val):
    cdef sp_crs A
    A.m = m
    A.n = n
    A.nnz = col.size
    A.rowptr = <size_t *>cnp.PyArray_DATA(rowptr)
    A.col = <uint32_t *>cnp.PyArray_DATA(col)
    A.val = <double *>cnp.PyArray_DATA(val)
    return A


_PARTS = {"rows": SP_PART_ROWS, "cols": SP_PART_COLS, "2d": SP_PART_2D}


def _app_spmv(size_t m, size_t n, cnp.ndarray rowptr, cnp.ndarray col, cnp.ndarray val,
              cnp.ndarray x, cnp.ndarray y, p, str partition):
    cdef unsigned P = _app_p(p)
    cdef sp_crs A = _crs(m, n, rowptr, col, val)
    cdef sp_part part
    cdef int rc
    cdef sp_part_kind kind = _PARTS[partition]
    if P == 0:
        P = os.cpu_count() or 1
    if sp_partition(&A, P, kind, &part) != 0:
        raise MemoryError("spmv: partitioning failed")
    with _app_lock:
        with nogil:
            rc = bsp_spmv(&A, &part, <const double *>cnp.PyArray_DATA(x),
                          <double *>cnp.PyArray_DATA(y), P, spmv_default_variant())
    sp_part_free(&part)
    return rc


def _app_pagerank(size_t n, cnp.ndarray rowptr, cnp.ndarray col, cnp.ndarray val,
                  cnp.ndarray r, p, double alpha, double tol, int maxit):
    cdef unsigned P = _app_p(p)
    cdef sp_crs A = _crs(n, n, rowptr, col, val)
    cdef pr_opts o = pr_default_opts()
    cdef pr_info info
    cdef int rc
    o.alpha = alpha
    o.tol = tol
    o.maxit = maxit
    if P == 0:
        P = os.cpu_count() or 1
    with _app_lock:
        with nogil:
            rc = bsp_pagerank(&A, NULL, &o, <double *>cnp.PyArray_DATA(r), P, &info)
    return rc, {"iters": info.iters, "diff": info.diff, "seconds": info.seconds}
