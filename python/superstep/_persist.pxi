# Included by _core.pyx: persistent collectives (ctx.alltoall_init,
# ctx.allgather_init). The arrays are registered once, by the init's
# registration sync, which also checks the arguments as a collective does;
# each call is then one superstep: the data puts and, in the same superstep,
# every process's row of the registration table (this handle's key), so
# that a process calling something else in that superstep is named (by the
# processes that called the handle, and by those in another collective)
# instead of the wrong data passing silently.

cdef enum:
    M_PERSIST = 5     # a row of a persistent call (the table's mode column)


cdef class Persistent:
    """A persistent collective (ctx.alltoall_init, ctx.allgather_init): call
    it (``h()``, collective) to move the current contents of its argument
    into ``h.out`` in one superstep; ``h.free()`` (collective, or leaving a
    ``with`` block) deregisters the arrays."""
    cdef Context _ctx
    cdef str _prim
    cdef object _src, _out
    cdef Slot _s_src, _s_out
    cdef int64_t _key
    cdef size_t _blk
    cdef bint _alltoall, _alive

    @property
    def out(self):
        """The result array (the same object at every call)."""
        return self._out

    @property
    def alive(self):
        return self._alive

    def __call__(self):
        cdef Context c = self._ctx
        cdef str prim = self._prim
        c._check(prim)
        if not self._alive:
            raise ValueError("%s: the persistent collective was freed" % c._who(prim))
        cdef size_t P = c.nprocs, me = c.pid, blk = self._blk, k
        cdef int64_t *mm = <int64_t *>cnp.PyArray_DATA(c._mymeta)
        c._room(prim, 2 * P, 0)
        memset(mm, 0, META * sizeof(int64_t))
        mm[6] = self._key
        mm[7] = M_PERSIST
        cdef lpf_memslot_t hs = self._s_src._h, ho = self._s_out._h
        for k in range(P):
            lpf_put(c._ctx, c._mymeta_h, 0, <lpf_pid_t>k, c._meta_h,
                    me * META * sizeof(int64_t), META * sizeof(int64_t), LPF_MSG_DEFAULT)
        if blk:
            if self._alltoall:
                _copy_block(self._out, me * blk, self._src, me * blk, blk)
                for k in range(P):
                    if k != me:
                        lpf_put(c._ctx, hs, k * blk, <lpf_pid_t>k, ho, me * blk, blk,
                                LPF_MSG_DEFAULT)
            else:
                _copy_block(self._out, me * blk, self._src, 0, blk)
                for k in range(P):
                    if k != me:
                        lpf_put(c._ctx, hs, 0, <lpf_pid_t>k, ho, me * blk, blk, LPF_MSG_DEFAULT)
        c._nissued += 2 * P - 1
        c._lowsync(prim)
        cdef int64_t *t = <int64_t *>cnp.PyArray_DATA(c._meta)
        cdef size_t q
        cdef long long bad = -1
        for q in range(P):
            if t[q * META + 7] != M_PERSIST or t[q * META + 6] != self._key:
                bad = <long long>q
                break
        memset(t, 0, c._meta.nbytes)
        if bad >= 0:
            raise SuperstepError("%s: process %d did not call this persistent collective in "
                                 "this superstep (it called ctx.sync, another collective, or "
                                 "returned); the result is not defined" % (c._who(prim), bad))
        return self._out

    def free(self):
        """Collective: deregister the arrays (effective with the next sync)."""
        if self._alive:
            self._alive = False
            self._s_src.free()
            self._s_out.free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._alive and self._ctx._valid and not self._ctx._run.aborted and \
           not self._ctx._failed:
            self.free()
        return False

    def __repr__(self):
        return "<superstep.Persistent %s%s>" % (self._prim, "" if self._alive else " (freed)")


cdef object _persistent(Context self, str prim, object a, object outarg, bint alltoall):
    """ctx.alltoall_init / ctx.allgather_init: one registration sync."""
    self._check(prim)
    cdef size_t P = self.nprocs
    try:
        if not isinstance(a, np.ndarray):
            raise TypeError("%s: the argument must be a NumPy array (persistent collectives "
                            "move arrays), got %s" % (self._who(prim), type(a).__name__))
        src = <object>self._array_arg(prim, "the argument", a, None, False)
        if alltoall:
            if src.ndim == 0 or src.shape[0] != P:
                raise ValueError("%s: the array's first dimension must be nprocs = %d, shape "
                                 "is %s" % (self._who(prim), P, src.shape))
            shape = src.shape
        else:
            shape = (P,) + src.shape
        out = _out_arg(self, prim, outarg, shape, src.dtype, src)
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    # the key: the same on every process (inits are collective, in order)
    self._npersist += 1
    cdef int64_t chk = _checkval(20 + (1 if alltoall else 0), list(range(P)), None, None)
    chk = <int64_t>((int(chk) ^ (int(self._npersist) * 0x9e3779b97f4a7c15))
                    & 0x7fffffffffffffff)
    res = self._register_many(prim, [src, out], chk, M_ARRAY)
    s_src, s_out, table = res[0], res[1], res[2]
    cdef int how = _mode(self, prim, table, list(range(P)), [s_src, s_out])
    cdef Persistent h = Persistent.__new__(Persistent)
    h._ctx = self
    h._prim = prim.replace("_init", "") + " (persistent)"
    h._src = src
    h._out = out
    h._s_src = <Slot>s_src
    h._s_out = <Slot>s_out
    h._key = chk
    h._blk = (<cnp.ndarray>src).nbytes // P if alltoall else (<cnp.ndarray>src).nbytes
    h._alltoall = alltoall
    h._alive = True
    return h
