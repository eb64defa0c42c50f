# Included by _core.pyx.
# ---------------------------------------------------------------------------
# Applications (library calls). Without a context each call runs its own
# SPMD section of p threads; with one (inside superstep.run) the call's
# BSPlib run joins that context (sstep_bsp_attach), so it spans the run's
# processes on every engine. Every process then calls it; process 0's
# arguments are the input and process 0 gets the result.
# ---------------------------------------------------------------------------

cdef extern from "bsp.h" nogil:
    void sstep_bsp_attach(void *ctx, unsigned pid, unsigned nprocs)

cdef enum:
    APP_MAX_OWN_REGS = 32     # BSPlib sizes the register for its own slots only


cdef class _AppSection:
    """The context manager around one application call: the lock of the
    sequential calls, or the attachment to a run's context (and afterwards
    the context's capacities and names restored by one sync)."""
    cdef Context ctx
    cdef str prim
    cdef bint locked

    def __cinit__(self, ctx, str prim):
        self.ctx = ctx
        self.prim = prim
        self.locked = False

    def __enter__(self):
        cdef Context c = self.ctx
        if c is None:
            _app_lock.acquire()
            self.locked = True
            return self
        c._check(self.prim)
        if c._nregs > APP_MAX_OWN_REGS:
            raise CapacityError("%s: %d registrations are live in this context (slots, "
                                "collective buffers); an application call needs at most %d "
                                "(free slots first)" % (c._who(self.prim), c._nregs,
                                                        APP_MAX_OWN_REGS))
        sstep_bsp_attach(c._ctx, c.pid, c.nprocs)
        return self

    def __exit__(self, *exc):
        cdef Context c = self.ctx
        if self.locked:
            _app_lock.release()
            return False
        # BSPlib left the register and queue capacities at its own sizes
        if (lpf_resize_message_queue(c._ctx, max(c._qcap, c._qpend)) != LPF_SUCCESS or
                lpf_resize_memory_register(c._ctx, max(c._rcap, c._rpend)) != LPF_SUCCESS):
            raise MemoryError("%s: could not restore the request queue" % c._who(self.prim))
        c._lowsync(self.prim)
        return False


cdef unsigned _app_nprocs(object ctx, object p) except? 0xffffffff:
    if ctx is None:
        return _app_p(p)
    return (<Context>ctx).nprocs

cdef unsigned _app_p(object p) except? 0xffffffff:
    if p is None:
        return 0
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or p < 1:
        raise ValueError("p must be a positive int or None, got %r" % (p,))
    return <unsigned>p


def _app_inprod(cnp.ndarray x, cnp.ndarray y, p, ctx=None):
    cdef unsigned P = _app_nprocs(ctx, p)
    cdef double r
    cdef size_t n = x.size
    cdef const double *xp = <const double *>cnp.PyArray_DATA(x)
    cdef const double *yp = <const double *>cnp.PyArray_DATA(y)
    with _AppSection(ctx, "apps.inprod"):
        with nogil:
            r = bsp_ip(xp, yp, n, P)
    return r


def _app_sort(cnp.ndarray keys, p, bint radix, ctx=None):
    cdef unsigned P = _app_nprocs(ctx, p)
    cdef int rc
    cdef size_t n = keys.size
    cdef uint32_t *k = <uint32_t *>cnp.PyArray_DATA(keys)
    if P == 0:
        P = os.cpu_count() or 1
    with _AppSection(ctx, "apps.sort"):
        with nogil:
            if radix:
                rc = bsp_radix_sort(P, k, n, 1)
            else:
                rc = bsp_sample_sort(P, k, n)
    return rc


def _app_fft(cnp.ndarray x, int sign, p, ctx=None):
    cdef unsigned P = _app_nprocs(ctx, p)
    cdef int rc
    cdef size_t n = x.size // 2          # x: the complex vector viewed as doubles
    cdef double *xp = <double *>cnp.PyArray_DATA(x)
    with _AppSection(ctx, "apps.fft"):
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
              cnp.ndarray x, cnp.ndarray y, p, str partition, ctx=None):
    cdef unsigned P = _app_nprocs(ctx, p)
    cdef sp_crs A = _crs(m, n, rowptr, col, val)
    cdef sp_part part
    cdef int rc
    cdef sp_part_kind kind = _PARTS[partition]
    if P == 0:
        P = os.cpu_count() or 1
    cdef sp_part *pp = &part
    memset(&part, 0, sizeof(part))
    if ctx is not None and (<Context>ctx).pid != 0:
        pp = NULL           # process 0 partitions (the others' arguments are not used)
    elif sp_partition(&A, P, kind, &part) != 0:
        raise MemoryError("spmv: partitioning failed")
    try:
        with _AppSection(ctx, "apps.spmv"):
            with nogil:
                rc = bsp_spmv(&A, pp, <const double *>cnp.PyArray_DATA(x),
                              <double *>cnp.PyArray_DATA(y), P, spmv_default_variant())
    finally:
        if pp != NULL:
            sp_part_free(&part)
    return rc


def _app_pagerank(size_t n, cnp.ndarray rowptr, cnp.ndarray col, cnp.ndarray val,
                  cnp.ndarray r, p, double alpha, double tol, int maxit, ctx=None):
    cdef unsigned P = _app_nprocs(ctx, p)
    cdef sp_crs A = _crs(n, n, rowptr, col, val)
    cdef pr_opts o = pr_default_opts()
    cdef pr_info info
    cdef int rc
    o.alpha = alpha
    o.tol = tol
    o.maxit = maxit
    if P == 0:
        P = os.cpu_count() or 1
    with _AppSection(ctx, "apps.pagerank"):
        with nogil:
            rc = bsp_pagerank(&A, NULL, &o, <double *>cnp.PyArray_DATA(r), P, &info)
    return rc, {"iters": info.iters, "diff": info.diff, "seconds": info.seconds}
