# Included by _core.pyx: Slot (a global registration) and Machine (lpf_probe's
# figures).

cdef class Slot:
    """A global registration of a NumPy array (ctx.register). A context
    manager: ``with ctx.register(a) as slot:`` deregisters on exit."""
    cdef Context _ctx
    cdef lpf_memslot_t _h
    cdef object _array
    cdef public object dtype
    cdef Py_ssize_t _itemsize
    cdef object _counts          # int64[p]: elements registered by each process
    cdef bint _alive
    cdef long long _used_step

    @property
    def array(self):
        return self._array

    @property
    def counts(self):
        """Number of elements each process registered (a list indexed by pid)."""
        return [int(c) for c in self._counts]

    @property
    def alive(self):
        return self._alive

    def free(self):
        """Collective: deregister (takes effect with the next sync)."""
        if self._alive:
            self._ctx._check("slot.free")
            self._alive = False
            self._ctx._deferred.append((self._h, self._array))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._alive and self._ctx._valid and not self._ctx._run.aborted and \
           not self._ctx._failed:
            self.free()
        return False

    def __repr__(self):
        return "<superstep.Slot %s%s counts=%s%s>" % (
            self.dtype, "", self.counts, "" if self._alive else " (freed)")


cdef class Machine:
    """lpf_probe: p, free_p and the BSP parameters g(min_msg_size) and l(min_msg_size)
    in seconds per byte / seconds."""
    cdef lpf_machine_t _m
    cdef public unsigned p, free_p

    def g(self, size_t min_msg_size=8, p=None):
        cdef lpf_pid_t q = self.p if p is None else <lpf_pid_t>p
        return self._m.g(q, min_msg_size, LPF_SYNC_DEFAULT)

    def l(self, size_t min_msg_size=8, p=None):
        cdef lpf_pid_t q = self.p if p is None else <lpf_pid_t>p
        return self._m.l(q, min_msg_size, LPF_SYNC_DEFAULT)

    def __repr__(self):
        return "Machine(p=%d, free_p=%d, g=%.3g s/B, l=%.3g s)" % (
            self.p, self.free_p, self.g(), self.l())
