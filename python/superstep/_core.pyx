# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""
superstep._core: the Cython binding of Superstep's LPF core.

Everything a Python SPMD function does goes through a Context (one per
process of a run). Arguments are checked here, before the C library is
called, because the library ends the whole program on misuse; a failed
check raises a Python exception on the calling process with the facts the
C message would give.
"""
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memset, memcpy
from cpython.pyport cimport PY_SSIZE_T_MAX
cdef extern from "Python.h":
    # PyList_SetSlice(l, lo, hi, NULL): a list emptied in place
    int _list_cut "PyList_SetSlice"(object l, Py_ssize_t lo, Py_ssize_t hi, void *v) except -1
cimport numpy as cnp
import numpy as np
import os
import sys
import pickle
import operator
import json
import threading
import traceback
import atexit
import warnings
from collections import namedtuple

cnp.import_array()

cdef extern from "sstep_py.h" nogil:
    ctypedef void *lpf_t
    ctypedef unsigned lpf_pid_t
    ctypedef int lpf_err_t
    ctypedef void *lpf_init_t
    ctypedef int lpf_sync_attr_t
    ctypedef int lpf_msg_attr_t
    ctypedef size_t lpf_memslot_t
    ctypedef void (*lpf_func_t)()
    ctypedef struct lpf_args_t:
        const void *input
        size_t input_size
        void *output
        size_t output_size
        const lpf_func_t *f_symbols
        size_t f_size
    ctypedef double (*lpf_param_fn)(lpf_pid_t, size_t, lpf_sync_attr_t)
    ctypedef struct lpf_machine_t:
        lpf_pid_t p
        lpf_pid_t free_p
        lpf_param_fn g
        lpf_param_fn l
    ctypedef void (*lpf_spmd_t)(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t)

    lpf_err_t LPF_SUCCESS
    lpf_err_t LPF_ERR_OUT_OF_MEMORY
    lpf_err_t LPF_ERR_FATAL
    lpf_t LPF_ROOT
    lpf_args_t LPF_NO_ARGS
    lpf_pid_t LPF_MAX_P
    lpf_sync_attr_t LPF_SYNC_DEFAULT
    lpf_msg_attr_t LPF_MSG_DEFAULT
    lpf_memslot_t LPF_INVALID_MEMSLOT
    lpf_machine_t LPF_INVALID_MACHINE

    lpf_err_t lpf_exec(lpf_t ctx, lpf_pid_t P, lpf_spmd_t spmd, lpf_args_t args)
    lpf_err_t lpf_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
    lpf_err_t lpf_register_global(lpf_t ctx, void *pointer, size_t size, lpf_memslot_t *memslot)
    lpf_err_t lpf_register_local(lpf_t ctx, void *pointer, size_t size, lpf_memslot_t *memslot)
    lpf_err_t lpf_deregister(lpf_t ctx, lpf_memslot_t memslot)
    lpf_err_t lpf_put(lpf_t ctx, lpf_memslot_t src_slot, size_t src_offset, lpf_pid_t dst_pid,
                      lpf_memslot_t dst_slot, size_t dst_offset, size_t size, lpf_msg_attr_t attr)
    lpf_err_t lpf_get(lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot, size_t src_offset,
                      lpf_memslot_t dst_slot, size_t dst_offset, size_t size, lpf_msg_attr_t attr)
    lpf_err_t lpf_sync(lpf_t ctx, lpf_sync_attr_t attr)
    lpf_err_t lpf_probe(lpf_t ctx, lpf_machine_t *params)
    lpf_err_t lpf_resize_memory_register(lpf_t ctx, size_t max_regs)
    lpf_err_t lpf_resize_message_queue(lpf_t ctx, size_t max_msgs)

    int sstep_py_have_mpi()
    int sstep_py_mpi_init(lpf_init_t *init, int *rank, int *size)
    void sstep_py_mpi_abort(int code)
    void sstep_py_mpi_finalize(lpf_init_t init)
    int sstep_py_comm_init(long long fhandle, lpf_init_t *init)
    int sstep_py_meet_init(const char *host, const char *port, int timeout_ms,
                           unsigned pid, unsigned nprocs, lpf_init_t *init)
    void sstep_py_init_free(lpf_init_t init)
    int sstep_py_sub_init(int n, lpf_init_t *init, long long *fhandle)
    int sstep_py_agree(int n, int *lo, int *hi)
    int sstep_py_gather_why(long long fhandle, const char *mine, int cap, char *all)
    void sstep_py_note_begin(int kind, long long fhandle, unsigned run_no)
    void sstep_py_note_end()
    void sstep_py_note_send(const char *text, int len, unsigned self, unsigned nprocs)
    int sstep_py_note_recv(char *buf, int cap, int wait_ms)
    int sstep_py_engine_is_mpi()
    int sstep_py_engine_is_hybrid()
    lpf_err_t sstep_py_hybrid_hook(lpf_init_t mpi, unsigned t, unsigned T, int rank, int size,
                                   lpf_spmd_t spmd)
    unsigned sstep_py_hybrid_threads()
    int sstep_py_have_fft()
    int SSTEP_PY_RECOVERED
    cdef struct sstep_py_report:
        unsigned pid, nprocs
        char primitive[64]
        char message[1024]
    void sstep_py_install_hook()
    const sstep_py_report *sstep_py_last_report()
    lpf_err_t sstep_py_sync(lpf_t ctx, int guarded)
    cdef struct sstep_py_copy:
        char *dst
        const char *src
        size_t n
    cdef struct sstep_py_fold:
        int op, kind
        size_t n
        char *dst
        char *also
        const char *const *src
        unsigned nsrc
    cdef struct sstep_py_post:
        const int64_t *table
        unsigned nprocs, meta
        int64_t chk
        int sent
        const sstep_py_copy *cp
        size_t ncp
        const sstep_py_fold *fold
        int ok
    lpf_err_t sstep_py_sync_gil(lpf_t ctx, int guarded, int spin, sstep_py_post *po)
    void sstep_py_enter()
    void sstep_py_leave()
    void sstep_layer_step(lpf_t ctx)
    int sstep_prof_on()
    void sstep_prof_pysite(const char *site)

    # applications (examples/*/): library calls from sequential code
    double bsp_ip(const double *x, const double *y, size_t n, unsigned P)
    int bsp_fft(double *x, size_t n, int sign, unsigned P)
    int bsp_sample_sort(unsigned P, uint32_t *keys, size_t n)
    int bsp_radix_sort(unsigned P, uint32_t *keys, size_t n, int opt)
    ctypedef struct sp_crs:
        size_t m, n, nnz
        size_t *rowptr
        uint32_t *col
        double *val
    ctypedef struct sp_part:
        unsigned P
        unsigned *owner_nz
        unsigned *owner_x
        unsigned *owner_y
    ctypedef enum sp_part_kind:
        SP_PART_ROWS, SP_PART_COLS, SP_PART_2D
    ctypedef enum spmv_variant:
        SPMV_GETPUT, SPMV_HP
    int sp_partition(const sp_crs *A, unsigned P, sp_part_kind kind, sp_part *part)
    void sp_part_free(sp_part *part)
    spmv_variant spmv_default_variant()
    int bsp_spmv(const sp_crs *A, const sp_part *part, const double *x, double *y,
                 unsigned P, spmv_variant v)
    ctypedef struct pr_opts:
        double alpha
        double tol
        int maxit
        spmv_variant v
    ctypedef struct pr_info:
        int iters
        double diff
        double seconds
    pr_opts pr_default_opts()
    int bsp_pagerank(const sp_crs *A, const sp_part *part, const pr_opts *o, double *r,
                     unsigned P, pr_info *info)


# ---------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------

class SuperstepError(RuntimeError):
    """Base class of the errors of the superstep package."""


class SyncError(SuperstepError):
    """lpf_sync failed (LPF_ERR_FATAL): the processes called sync a different
    number of times, one returned from its SPMD function early, or one failed."""


class ProcessCountWarning(RuntimeWarning):
    """superstep.run: the run has another number of processes than the p asked
    for (the engine has fewer; see superstep.run)."""


class Aborted(SuperstepError):
    """Raised in the other processes of a run after one process raised: the
    run is ending. Never printed; the caller of run() gets the first error."""


class BSPError(SuperstepError):
    """A fatal error found by the C library in a sync (a checked-mode report,
    a misuse that the binding's own checks do not catch) inside
    superstep.run, on threads and on MPI ranks. Raised in every process of
    the run and by run() to its caller; the run cannot go on. Attributes:
    pid and nprocs (the process that found it), primitive, and c_message
    (the library's own text)."""

    def __init__(self, text, pid=-1, nprocs=0, primitive="", c_message=""):
        super().__init__(text)
        self.pid = pid
        self.nprocs = nprocs
        self.primitive = primitive
        self.c_message = c_message


class CapacityError(SuperstepError):
    """More requests or registrations in one superstep than the capacity (it
    grows automatically at the next sync)."""


Message = namedtuple("Message", ["source", "tag", "payload"])

include "_run.pxi"


# ---------------------------------------------------------------------------
# Slots and the machine
# ---------------------------------------------------------------------------

include "_slots.pxi"


# ---------------------------------------------------------------------------
# The context of one process
# ---------------------------------------------------------------------------

cdef enum:
    META = 16         # int64 per process in the registration table
    BIG = 16384       # in checked mode, put/get of this many bytes and more release the GIL

cdef str _dtype_name(int64_t num, int64_t itemsize):
    """The name of a dtype from its type number (as the registration tables carry it)."""
    try:
        d = cnp.PyArray_DescrFromType(<int>num)
        return "%s" % (<object>d,) if d.itemsize == itemsize or itemsize == 0 else \
            "%s (itemsize %d)" % (<object>d, itemsize)
    except Exception:
        return "dtype number %d (itemsize %d)" % (num, itemsize)


cdef inline char *_data(cnp.ndarray a):
    return <char *>cnp.PyArray_DATA(a)


cdef class Context:
    """The context of one process of a run: ctx.pid, ctx.nprocs, sync, probe,
    DRMA on NumPy arrays, BSMP messages and collectives."""
    cdef lpf_t _ctx
    cdef readonly unsigned pid, nprocs
    cdef _Run _run
    cdef bint _valid, _failed, _checked
    cdef long long _step
    cdef long long _lsteps      # of them, the package's own (setup, registrations)
    cdef size_t _qcap, _rcap, _qpend, _rpend, _nissued, _nregs, _nregs_peak, _nissued_want
    cdef list _tmp            # local slots of this superstep's put sources / get targets
    cdef list _keep           # the arrays behind them
    cdef list _deferred       # (handle, array) of freed global slots
    cdef cnp.ndarray _meta, _mymeta, _inhdr, _outhdr
    cdef lpf_memslot_t _meta_h, _mymeta_h, _inhdr_h, _outhdr_h
    cdef list _outq           # per destination: bytearray of records
    cdef size_t _nsent
    cdef list _inbox
    cdef object _pending_outbox
    cdef dict _named          # global slot index -> (array, what registered it)
    cdef object _scr          # scratch memory of the reductions, kept between calls
    cdef long long _npersist  # persistent collectives made so far (their keys)
    cdef object _gbuf         # the collective buffer (_fast.pxi), registered globally
    cdef lpf_memslot_t _gbuf_h
    cdef size_t _gcap         # its size: the same on every process
    cdef lpf_memslot_t _afh   # the two buffers registered by a collective's first
    cdef lpf_memslot_t _afh2  # superstep (_fast.pxi)
    cdef list _allmem         # [0, 1, .., nprocs-1]
    cdef dict _chkc           # the collectives' argument hashes over every process
    cdef object _cpbuf        # memory of _cps
    cdef sstep_py_copy *_cps  # a collective's copies after its sync (nprocs + 1)
    cdef sstep_py_fold _fold  # a reduction's fold after its sync (_reduce.pxi)
    cdef object _fsrcbuf      # memory of _fsrc
    cdef const char **_fsrc   # the fold's rows (nprocs)

    # ---- life cycle -------------------------------------------------------

    cdef _setup(self):
        cdef size_t p = self.nprocs
        self._tmp = []
        self._keep = []
        self._deferred = []
        self._inbox = []
        self._named = {}
        self._outq = None
        self._nsent = 0
        self._step = 0
        self._lsteps = 0
        self._qcap = 0
        self._rcap = 0
        self._nissued = 0
        self._nissued_want = 0
        self._nregs = 0
        self._nregs_peak = 0
        self._npersist = 0
        self._gbuf = None
        self._gcap = 0
        self._allmem = None
        self._chkc = {}
        self._cpbuf = np.zeros((p + 1) * sizeof(sstep_py_copy), dtype=np.uint8)
        self._cps = <sstep_py_copy *>cnp.PyArray_DATA(<cnp.ndarray>self._cpbuf)
        self._fsrcbuf = np.zeros(max(p, 2) * sizeof(char *), dtype=np.uint8)
        self._fsrc = <const char **>cnp.PyArray_DATA(<cnp.ndarray>self._fsrcbuf)
        self._valid = True
        self._failed = False
        self._checked = _CHECKED
        self._qpend = max(<size_t>1024, 8 * p)
        self._rpend = 256
        if (lpf_resize_message_queue(self._ctx, self._qpend) != LPF_SUCCESS or
                lpf_resize_memory_register(self._ctx, self._rpend) != LPF_SUCCESS):
            raise MemoryError("superstep: could not reserve the request queue")
        self._lowsync("ctx.setup")
        self._meta = np.zeros((p, META), dtype=np.int64)
        self._mymeta = np.zeros(META, dtype=np.int64)
        self._inhdr = np.zeros((p, 2), dtype=np.int64)
        self._outhdr = np.zeros((p, 2), dtype=np.int64)
        lpf_register_global(self._ctx, _data(self._meta), self._meta.nbytes, &self._meta_h)
        lpf_register_global(self._ctx, _data(self._inhdr), self._inhdr.nbytes, &self._inhdr_h)
        lpf_register_local(self._ctx, _data(self._mymeta), self._mymeta.nbytes, &self._mymeta_h)
        lpf_register_local(self._ctx, _data(self._outhdr), self._outhdr.nbytes, &self._outhdr_h)
        self._nregs = 4
        self._lowsync("ctx.setup")

    cdef _drop(self):
        self._cps = NULL
        self._cpbuf = None
        self._fsrc = NULL
        self._fsrcbuf = None
        self._tmp = None
        self._keep = None
        self._deferred = None
        self._inbox = None
        self._named = None
        self._scr = None
        self._gbuf = None
        self._outq = None

    cdef object _scratch(self, object dtype, tuple shape):
        """An internal array of this shape (contents undefined), from memory kept
        between calls (a fresh large array costs its page faults each time)."""
        cdef size_t nb = np.dtype(dtype).itemsize
        for d in shape:
            nb *= <size_t>d
        if self._scr is None or (<cnp.ndarray>self._scr).nbytes < nb:
            self._scr = np.empty(max(nb, 2 * (0 if self._scr is None else self._scr.nbytes)),
                                 dtype=np.uint8)
        return self._scr[:nb].view(dtype).reshape(shape)

    cdef str _who(self, str prim):
        return "%s (process %d of %d)" % (prim, self.pid, self.nprocs)

    cdef int _check(self, str prim) except -1:
        if not self._valid:
            raise SuperstepError("%s: this context belongs to an SPMD function that has "
                                 "returned" % prim)
        if self._run.fatal is not None and (self._run.aborted or self._failed):
            raise _bsp_error_here(self._run.fatal, self, prim)
        if self._run.aborted:
            e = self._run.exc
            raise Aborted("%s: the run is ending: process %s raised %s" % (
                self._who(prim), self._run.exc_pid if e is not None else "?",
                type(e).__name__ if e is not None else "an error"))
        if self._failed:
            raise SyncError("%s: an earlier sync failed (LPF_ERR_FATAL); the context "
                            "can no longer be used" % self._who(prim))
        return 0

    cdef int _room(self, str prim, size_t nreq, size_t nreg) except -1:
        if self._nissued + nreq > self._qcap or self._nregs + nreg > self._rcap:
            # what was asked for is reserved at the next sync
            self._nissued_want = max(self._nissued_want, self._nissued + nreq)
            self._nregs_peak = max(self._nregs_peak, self._nregs + nreg)
        if self._nissued + nreq > self._qcap:
            raise CapacityError("%s: message queue capacity exceeded: %d requests issued in "
                                "this superstep, capacity %d (it grows automatically at the "
                                "next sync)" % (self._who(prim), self._nissued + nreq, self._qcap))
        if self._nregs + nreg > self._rcap:
            raise CapacityError("%s: memory register capacity exceeded: %d registrations, "
                                "capacity %d (it grows automatically at the next sync)"
                                % (self._who(prim), self._nregs + nreg, self._rcap))
        return 0

    cdef _layer_step(self):
        """The sync just made was the package's own: superstep numbers in the
        library's messages (checked mode, watchdog) count the user's only."""
        sstep_layer_step(self._ctx)
        self._lsteps += 1

    cdef int _lowsync(self, str prim, sstep_py_post *po=NULL) except -1:
        cdef lpf_err_t rc
        cdef size_t want
        cdef lpf_memslot_t h
        # grow the capacities for the next superstep when half used
        if self._nissued_want > self._nissued:
            self._nissued = self._nissued_want
        self._nissued_want = 0
        if self._nissued * 2 > self._qcap:
            want = max(self._qcap * 2, self._nissued * 4)
            if lpf_resize_message_queue(self._ctx, want) == LPF_SUCCESS:
                self._qpend = want
        if self._nregs_peak * 2 > self._rcap:
            want = max(self._rcap * 2, self._nregs_peak * 4)
            if lpf_resize_memory_register(self._ctx, want) == LPF_SUCCESS:
                self._rpend = want
        cdef int guarded = 1      # a fatal report of the library becomes a BSPError
        # spin for the GIL only when every process has a core of its own
        if _PROF:
            _prof_site()
        rc = sstep_py_sync_gil(self._ctx, guarded,
                               not self._run.mpi and 1 < self.nprocs <= _NCORES, po)
        if _PROF:
            sstep_prof_pysite(NULL)
        self._step += 1
        self._nissued = 0
        if rc != LPF_SUCCESS:
            # the context is failed: its registrations stay (the arrays of
            # this superstep too, for the report), nothing more is asked of it
            self._failed = True
            if rc == SSTEP_PY_RECOVERED:
                e = _bsp_error_from_report(self, prim)
                with self._run.lock:
                    if self._run.fatal is None:
                        self._run.fatal = e
                if self._run.mpi:
                    _note_send(self, e)
                raise e
            why = None
            if self._run.fatal is None and self._run.mpi:
                e = _note_recv(self)
                if isinstance(e, BSPError):
                    self._run.fatal = e
                elif e is not None:
                    why = e
            if self._run.fatal is not None:
                raise _bsp_error_here(self._run.fatal, self, prim)
            if why is None:
                why = _local_failure(self._run, self.pid)
            if why is not None:
                raise SyncError("%s: lpf_sync failed in superstep %d: %s"
                                % (self._who(prim), self._step - 1 - self._lsteps, why))
            raise SyncError("%s: lpf_sync returned LPF_ERR_FATAL after %d supersteps: the "
                            "processes called sync a different number of times (one may have "
                            "returned from its SPMD function early) or one failed"
                            % (self._who(prim), self._step - 1 - self._lsteps))
        # the lists are emptied in place (new lists each superstep would
        # feed the cyclic garbage collector)
        if self._tmp:
            for h in self._tmp:
                lpf_deregister(self._ctx, h)
            self._nregs -= len(self._tmp)
            _list_cut(self._tmp, 0, PY_SSIZE_T_MAX, NULL)
        if self._keep:
            _list_cut(self._keep, 0, PY_SSIZE_T_MAX, NULL)
        if self._deferred:
            for h, _ in self._deferred:
                lpf_deregister(self._ctx, h)
            self._nregs -= len(self._deferred)
            _list_cut(self._deferred, 0, PY_SSIZE_T_MAX, NULL)
        self._nregs_peak = self._nregs
        if prim == "ctx.setup":
            self._layer_step()
        if self._qpend > self._qcap:
            self._qcap = self._qpend
        if self._rpend > self._rcap:
            self._rcap = self._rpend
        return 0

    # ---- argument checks --------------------------------------------------

    cdef lpf_pid_t _pid_arg(self, str prim, str what, object pid) except? 0xffffffff:
        if not isinstance(pid, (int, np.integer)) or isinstance(pid, bool):
            raise TypeError("%s: %s must be an int, got %s" % (self._who(prim), what,
                                                                 type(pid).__name__))
        if pid < 0 or pid >= self.nprocs:
            raise IndexError("%s: %s %d is out of range (nprocs %d)" % (
                self._who(prim), what, pid, self.nprocs))
        return <lpf_pid_t>pid

    cdef Slot _slot_arg(self, str prim, object slot):
        if not isinstance(slot, Slot):
            raise TypeError("%s: slot must be a superstep.Slot (from ctx.register), got %s"
                            % (self._who(prim), type(slot).__name__))
        cdef Slot s = <Slot>slot
        if s._ctx is not self:
            raise ValueError("%s: the slot was registered in another context" % self._who(prim))
        if not s._alive:
            raise ValueError("%s: the slot was deregistered" % self._who(prim))
        return s

    cdef cnp.ndarray _array_arg(self, str prim, str what, object a, object dtype, bint writable):
        if not isinstance(a, np.ndarray):
            if writable:
                raise TypeError("%s: %s must be a NumPy array, got %s" % (
                    self._who(prim), what, type(a).__name__))
            a = np.asarray(a, dtype=dtype)
        cdef cnp.ndarray arr = <cnp.ndarray>a
        if dtype is not None and arr.dtype != dtype:
            raise TypeError("%s: %s has dtype %s but the slot holds %s" % (
                self._who(prim), what, arr.dtype, dtype))
        if not cnp.PyArray_IS_C_CONTIGUOUS(arr):
            raise ValueError("%s: %s is not C-contiguous (strides %s); use "
                             "np.ascontiguousarray" % (self._who(prim), what, (<object>arr).strides))
        if writable and not cnp.PyArray_ISWRITEABLE(arr):
            raise ValueError("%s: %s is read-only" % (self._who(prim), what))
        if cnp.PyDataType_FLAGS(arr.descr) & 1:       # NPY_ITEM_HASOBJECT
            raise TypeError("%s: %s holds Python objects; only plain data can be "
                            "registered or moved" % (self._who(prim), what))
        return arr

    cdef Py_ssize_t _offset_arg(self, str prim, object offset) except -1:
        if not isinstance(offset, (int, np.integer)) or isinstance(offset, bool):
            raise TypeError("%s: offset must be an int, got %s" % (self._who(prim),
                                                                  type(offset).__name__))
        if offset < 0:
            raise IndexError("%s: offset %d is negative" % (self._who(prim), offset))
        return <Py_ssize_t>offset

    # ---- properties, sync, probe -----------------------------------------

    @property
    def step(self):
        """Supersteps completed so far (internal syncs of register and the
        collectives included)."""
        return self._step

    def sync(self):
        """End the superstep: every put and get of it is complete, messages
        sent in it can be read with messages()."""
        self._check("ctx.sync")
        if self._nsent:
            self._post_messages()
        self._lowsync("ctx.sync")
        cdef int64_t *h = <int64_t *>cnp.PyArray_DATA(self._inhdr)
        cdef size_t i
        cdef bint any_msg = False
        for i in range(2 * self.nprocs):
            if h[i] != 0:
                any_msg = True
                break
        if any_msg:
            self._deliver()
        elif self._inbox:
            self._inbox = []

    def probe(self):
        """lpf_probe: a Machine with p, free_p, g() and l()."""
        self._check("ctx.probe")
        cdef Machine m = Machine.__new__(Machine)
        cdef lpf_err_t rc
        m._m = LPF_INVALID_MACHINE
        with nogil:
            rc = lpf_probe(self._ctx, &m._m)
        if rc != LPF_SUCCESS:
            raise SuperstepError("%s: lpf_probe failed" % self._who("ctx.probe"))
        m.p = m._m.p
        m.free_p = m._m.free_p
        return m

    def __repr__(self):
        return "<superstep.Context pid %d of %d>" % (self.pid, self.nprocs)

    def _registrations(self):
        """(for tests) live registrations of this process, the size of its
        collective buffer in bytes, and the arrays kept until the next sync."""
        return {"live": self._nregs, "collective_buffer": self._gcap,
                "kept": len(self._keep)}

    # ---- registration -----------------------------------------------------

    cdef list _register_many(self, str prim, list arrays, int64_t check, int mode=1):
        """Collective: global registrations of up to two arrays plus one sync, which
        exchanges every process's sizes and dtypes (and `check`, which must agree,
        and `mode`: how the collective's data travels, see _coll.pxi)."""
        cdef size_t p = self.nprocs, k = len(arrays), j
        cdef lpf_memslot_t h
        cdef cnp.ndarray a
        cdef int64_t *mm = <int64_t *>cnp.PyArray_DATA(self._mymeta)
        self._room(prim, p, k)
        handles = []
        memset(mm, 0, META * sizeof(int64_t))
        for j in range(k):
            a = <cnp.ndarray>arrays[j]
            lpf_register_global(self._ctx, _data(a), a.nbytes, &h)
            handles.append(h)
            self._named[(h & 0xffffffff) >> 1] = (a, prim)
            mm[3 * j] = a.nbytes
            mm[3 * j + 1] = a.itemsize
            mm[3 * j + 2] = a.dtype.num
        mm[6] = check
        mm[7] = mode
        self._nregs += k
        self._nregs_peak = max(self._nregs_peak, self._nregs)
        cdef lpf_pid_t d
        for d in range(p):
            lpf_put(self._ctx, self._mymeta_h, 0, d, self._meta_h,
                    self.pid * META * sizeof(int64_t), META * sizeof(int64_t), LPF_MSG_DEFAULT)
        self._nissued += p
        try:
            self._lowsync(prim)
        except BaseException:
            for h in handles:
                self._deferred.append((h, None))
            raise
        self._layer_step()
        # the table as lists: indexing them is far cheaper than a NumPy array's
        table = self._meta.tolist()
        memset(cnp.PyArray_DATA(self._meta), 0, self._meta.nbytes)
        slots = []
        cdef Py_ssize_t isz
        for j in range(k):
            a = <cnp.ndarray>arrays[j]
            isz = max(a.itemsize, 1)
            s = Slot.__new__(Slot)
            (<Slot>s)._ctx = self
            (<Slot>s)._h = handles[j]
            (<Slot>s)._array = a
            (<Slot>s).dtype = a.dtype
            (<Slot>s)._itemsize = a.itemsize
            (<Slot>s)._counts = [row[3 * j] // isz for row in table]
            (<Slot>s)._alive = True
            (<Slot>s)._used_step = -1
            slots.append(s)
        slots.append(table)
        return slots

    def register(self, array):
        """Collective: register a C-contiguous writable NumPy array globally (one
        sync). Every process must register the same dtype (sizes may differ).
        Returns a Slot, also usable as ``with ctx.register(a) as slot:``."""
        self._check("ctx.register")
        cdef cnp.ndarray a = self._array_arg("ctx.register", "array", array, None, True)
        res = self._register_many("ctx.register", [a], 0)
        table = res[1]
        cdef Slot s = <Slot>res[0]
        absent = [q for q in range(self.nprocs) if table[q][7] != 1 or table[q][6] != 0]
        if absent:
            s.free()
            q = absent[0]
            raise SuperstepError("%s: process %d did not call ctx.register in this superstep "
                                 "(it called %s)" % (
                                     self._who("ctx.register"), q,
                                     "ctx.sync, or returned" if table[q][7] == 0
                                     else "a collective"))
        bad = [q for q in range(self.nprocs) if table[q][2] != a.dtype.num or table[q][1] != a.itemsize]
        if bad:
            s.free()
            q = bad[0]
            raise TypeError("%s: the processes registered different dtypes: process %d %s, "
                            "process %d %s" % (
                                self._who("ctx.register"), self.pid, a.dtype, q,
                                _dtype_name(table[q][2], table[q][1])))
        return s

    def deregister(self, Slot slot):
        """Collective: the same as slot.free()."""
        self._check("ctx.deregister")
        self._slot_arg("ctx.deregister", slot).free()

    # ---- DRMA ----------------------------------------------------------------

    cdef _bounds(self, str prim, lpf_pid_t d, Slot s, Py_ssize_t off, Py_ssize_t n):
        cdef long long cnt = s._counts[d]
        if off + n > cnt:
            raise IndexError("%s: offset %d + size %d is out of bounds: process %d registered "
                             "%d elements of %s (%d bytes)" % (
                                 self._who(prim), off, n, d, cnt, s.dtype, cnt * s._itemsize))

    cdef lpf_memslot_t _drma_local(self, str prim, lpf_pid_t d, Slot s, cnp.ndarray a,
                                   Py_ssize_t off) except? 0:
        """The checks and bookkeeping of put and get: bounds at the peer, queue
        room, and a local registration of `a` kept until the sync."""
        self._bounds(prim, d, s, off, a.size)
        self._room(prim, 1, 1)
        cdef lpf_memslot_t h
        lpf_register_local(self._ctx, _data(a), a.nbytes, &h)
        self._nregs += 1
        if self._nregs > self._nregs_peak:
            self._nregs_peak = self._nregs
        self._tmp.append(h)
        self._keep.append(a)
        self._nissued += 1
        s._used_step = self._step
        return h

    def put(self, src, dst_pid, slot, offset=0, copy=False):
        """Copy the array src into process dst_pid's registered array `slot`,
        starting at element `offset`; complete after the next sync. The data
        are read from src at the sync (no copy is made now): do not change src
        before it, or pass copy=True to send src's values of now."""
        self._check("ctx.put")
        cdef lpf_pid_t d
        cdef Slot s
        cdef cnp.ndarray a
        cdef Py_ssize_t off
        # the usual arguments (ints, a live slot of this context, a C-contiguous
        # array of the slot's dtype) are checked in C; anything else goes
        # through the general checks, which say what is wrong
        if (type(dst_pid) is int and type(offset) is int and type(slot) is Slot
                and cnp.PyArray_Check(src) and not copy):
            s = <Slot>slot
            a = <cnp.ndarray>src
            if (0 <= <long long>dst_pid < <long long>self.nprocs and <long long>offset >= 0
                    and s._ctx is self and s._alive and cnp.PyArray_IS_C_CONTIGUOUS(a)
                    and (<void *>cnp.PyArray_DESCR(a) == <void *>s.dtype
                         or cnp.PyArray_EquivTypes(a.descr, <cnp.dtype>s.dtype))):
                d = <lpf_pid_t>dst_pid
                off = <Py_ssize_t>offset
            else:
                d = self._pid_arg("ctx.put", "dst_pid", dst_pid)
                s = self._slot_arg("ctx.put", slot)
                a = self._array_arg("ctx.put", "src", src, s.dtype, False)
                off = self._offset_arg("ctx.put", offset)
        else:
            d = self._pid_arg("ctx.put", "dst_pid", dst_pid)
            s = self._slot_arg("ctx.put", slot)
            a = self._array_arg("ctx.put", "src", src, s.dtype, False)
            if copy and a is src:
                a = a.copy()
            off = self._offset_arg("ctx.put", offset)
        if cnp.PyArray_SIZE(a) == 0:
            self._bounds("ctx.put", d, s, off, 0)
            return
        cdef lpf_memslot_t h = self._drma_local("ctx.put", d, s, a, off)
        cdef size_t nb = cnp.PyArray_NBYTES(a)
        cdef size_t doff = off * s._itemsize
        if nb >= BIG and self._checked:
            with nogil:     # checked mode hashes the source now
                lpf_put(self._ctx, h, 0, d, s._h, doff, nb, LPF_MSG_DEFAULT)
        else:
            lpf_put(self._ctx, h, 0, d, s._h, doff, nb, LPF_MSG_DEFAULT)

    def get(self, src_pid, slot, offset, out):
        """Copy elements offset .. offset+out.size of process src_pid's registered
        array `slot` into the array out; complete after the next sync. Returns out."""
        self._check("ctx.get")
        cdef lpf_pid_t d = self._pid_arg("ctx.get", "src_pid", src_pid)
        cdef Slot s = self._slot_arg("ctx.get", slot)
        cdef cnp.ndarray a = self._array_arg("ctx.get", "out", out, s.dtype, True)
        cdef Py_ssize_t off = self._offset_arg("ctx.get", offset)
        if a.size == 0:
            self._bounds("ctx.get", d, s, off, 0)
            return out
        cdef lpf_memslot_t h = self._drma_local("ctx.get", d, s, a, off)
        cdef size_t nb = a.nbytes
        cdef size_t soff = off * s._itemsize
        if nb >= BIG and self._checked:
            with nogil:
                lpf_get(self._ctx, d, s._h, soff, h, 0, nb, LPF_MSG_DEFAULT)
        else:
            lpf_get(self._ctx, d, s._h, soff, h, 0, nb, LPF_MSG_DEFAULT)
        return out

    # ---- BSMP ----------------------------------------------------------------

    def send(self, dst_pid, payload, tag=0):
        """Send a message to dst_pid, readable there with messages() after the
        next sync. NumPy arrays travel as raw data (the receiver gets an array of
        the same dtype and shape); anything else is pickled. The payload is
        copied now."""
        self._check("ctx.send")
        cdef lpf_pid_t d = self._pid_arg("ctx.send", "dst_pid", dst_pid)
        if not isinstance(tag, (int, np.integer)) or isinstance(tag, bool):
            raise TypeError("%s: tag must be an int, got %s" % (self._who("ctx.send"),
                                                               type(tag).__name__))
        if self._outq is None:
            self._outq = [None] * self.nprocs
        buf = self._outq[d]
        if buf is None:
            buf = self._outq[d] = bytearray()
        if isinstance(payload, np.ndarray) and not payload.dtype.hasobject:
            arr = np.ascontiguousarray(payload)
            hdr = pickle.dumps((arr.dtype, arr.shape), protocol=pickle.HIGHEST_PROTOCOL)
            data = memoryview(arr).cast("B") if arr.nbytes else b""
            kind = 0
        else:
            hdr = b""
            data = memoryview(_encode(payload))
            kind = 1
        hl = len(hdr)
        dl = len(data)
        buf += np.array([int(tag), kind, hl, dl], dtype=np.int64).tobytes()
        buf += hdr
        buf += b"\0" * ((-hl) % 8)
        buf += data
        buf += b"\0" * ((-dl) % 8)
        self._nsent += 1

    cdef _post_messages(self):
        cdef size_t p = self.nprocs, total = 0
        cdef int64_t *oh = <int64_t *>cnp.PyArray_DATA(self._outhdr)
        cdef lpf_pid_t d
        sizes = [0 if b is None else len(b) for b in self._outq]
        total = sum(sizes)
        outbox = np.empty(total, dtype=np.uint8)
        pos = 0
        for d in range(p):
            oh[2 * d] = pos
            oh[2 * d + 1] = sizes[d] + 1
            if sizes[d]:
                outbox[pos:pos + sizes[d]] = np.frombuffer(self._outq[d], dtype=np.uint8)
                pos += sizes[d]
        self._room("ctx.sync", p, 0)
        for d in range(p):
            lpf_put(self._ctx, self._outhdr_h, 2 * d * sizeof(int64_t), d, self._inhdr_h,
                    2 * self.pid * sizeof(int64_t), 2 * sizeof(int64_t), LPF_MSG_DEFAULT)
        self._nissued += p
        self._pending_outbox = outbox
        self._outq = None
        self._nsent = 0

    cdef _deliver(self):
        cdef size_t p = self.nprocs
        cdef int64_t *h = <int64_t *>cnp.PyArray_DATA(self._inhdr)
        cdef lpf_pid_t s
        cdef lpf_memslot_t gh, lh
        srcs = []
        total = 0
        for s in range(p):
            if h[2 * s + 1] > 1:
                srcs.append((s, h[2 * s], h[2 * s + 1] - 1, total))
                total += h[2 * s + 1] - 1
        memset(h, 0, 2 * p * sizeof(int64_t))
        outbox = self._pending_outbox
        self._pending_outbox = None
        if outbox is None:
            outbox = np.empty(0, dtype=np.uint8)
        self._room("ctx.sync", 0, 2)
        lpf_register_global(self._ctx, _data(outbox), outbox.nbytes, &gh)
        self._nregs += 1
        self._nregs_peak = max(self._nregs_peak, self._nregs + 1)
        self._lowsync("ctx.sync")
        inbox = np.empty(total, dtype=np.uint8)
        lpf_register_local(self._ctx, _data(inbox), inbox.nbytes, &lh)
        self._nregs += 1
        self._room("ctx.sync", len(srcs), 0)
        for (s, off, ln, at) in srcs:
            lpf_get(self._ctx, s, gh, off, lh, at, ln, LPF_MSG_DEFAULT)
        self._nissued += len(srcs)
        self._tmp.append(lh)
        self._deferred.append((gh, outbox))
        self._keep.append(inbox)
        self._lowsync("ctx.sync")
        msgs = []
        for (s, off, ln, at) in srcs:
            pos = at
            end = at + ln
            while pos < end:
                rec = inbox[pos:pos + 32].view(np.int64)
                tag, kind, hl, dl = int(rec[0]), int(rec[1]), int(rec[2]), int(rec[3])
                pos += 32
                hdr = inbox[pos:pos + hl]
                pos += hl + ((-hl) % 8)
                data = inbox[pos:pos + dl]
                pos += dl + ((-dl) % 8)
                if kind == 0:
                    dt, shape = pickle.loads(hdr.tobytes())
                    payload = data.view(dt).reshape(shape)
                else:
                    payload = _decode(data)
                msgs.append(Message(int(s), tag, payload))
        self._inbox = msgs

    def messages(self, tag=None):
        """The messages delivered by the last sync, as Message(source, tag,
        payload) in the order of the sources' pids, then of sending; with tag,
        only those with that tag."""
        self._check("ctx.messages")
        if tag is None:
            return list(self._inbox)
        return [m for m in self._inbox if m.tag == tag]

    # ---- collectives (their bodies: _coll.pxi) ----------------------------

    def broadcast(self, a, root=0, procs=None):
        """Collective (every process calls, with the same root and procs). If every
        member passes a NumPy array, root's array is copied into each member's
        array in place and `a` is returned. Otherwise root's `a` may be any
        picklable object (the others pass anything, e.g. None) and every member
        returns a copy of it (root returns its own object)."""
        return _broadcast(self, a, root, procs)

    def gather(self, a, root=0, procs=None, out=None):
        """Collective: root gets an array of shape (len(procs),) + a.shape whose
        row k is member k's a (arrays and numbers); for any other picklable
        objects, a list in member order. The others get None."""
        return _gather(self, a, root, procs, False, out)

    def allgather(self, a, procs=None, out=None):
        """Collective: like gather, with the result on every member;
        non-members get None."""
        return _gather(self, a, None, procs, True, out)

    def alltoall(self, a, procs=None, out=None):
        """Collective: a is an array of shape (len(procs), ...) or a sequence of
        len(procs) picklable objects; item k goes to member k. Returns an array
        of the same shape (or a list) whose item k came from member k."""
        return _alltoall(self, a, procs, out)

    def scatter(self, a, root=0, procs=None, out=None):
        """Collective: root passes an array of shape (len(procs), ...) or a
        sequence of len(procs) picklable objects; member k gets item k (a
        copy; into out= when given and the item is an array of its shape and
        dtype). The others' `a` is ignored; non-members get None."""
        return _scatter(self, a, root, procs, out)

    def reduce(self, a, op="sum", root=0, procs=None, out=None):
        """Collective: root gets op folded over the members' values (in member
        order); the others get None. Arrays and numbers are folded element-wise
        in C and NumPy; other objects are folded in Python. op: 'sum', 'prod',
        'min', 'max' or a callable f(x, y)."""
        return _py_number(a, _reduce(self, "ctx.reduce", a, _mpi_op(op), root, procs, False, out))

    def allreduce(self, a, op="sum", procs=None, out=None):
        """Collective: every member gets op folded over the members' values (in
        member order); non-members get None.

        gather, allgather, alltoall, reduce and allreduce take out=: an array
        (C-contiguous, writable, of the result's shape and dtype) that receives
        the result when the data are arrays; reusing it saves allocating (and
        faulting in) a new result each call."""
        return _py_number(a, _reduce(self, "ctx.allreduce", a, _mpi_op(op), None, procs, True,
                                     out))

    # ---- mpi4py's names (its lower-case calls) ------------------------------

    @property
    def rank(self):
        """This process (mpi4py's comm.rank): ctx.pid."""
        return self.pid

    @property
    def size(self):
        """How many processes (mpi4py's comm.size): ctx.nprocs."""
        return self.nprocs

    def bcast(self, obj, root=0, procs=None):
        """Collective, as mpi4py's comm.bcast: every member returns root's obj
        (root its own object, the others a copy; their argument is ignored
        unless it is an array of root's shape and dtype, which is filled in
        place). ctx.broadcast under mpi4py's name; an object other than an
        array travels as its pickle in two supersteps of the array path
        (its size, then its bytes)."""
        return _bcast(self, obj, root, procs)

    def barrier(self):
        """Collective, as mpi4py's comm.barrier: returns once every process has
        called it. In BSP terms it is ctx.sync(): it also ends the superstep
        (puts, gets and messages of this superstep complete)."""
        self.sync()

    def scan(self, a, op="sum", procs=None):
        """Collective, as mpi4py's comm.scan: member k gets op folded over the
        values of members 0..k (inclusive prefix, in member order). Numbers
        and arrays as in allreduce (Python ints fold exactly); other objects
        with op applied to them in Python. Non-members get None."""
        return _scan(self, "ctx.scan", a, op, procs, False)

    def exscan(self, a, op="sum", procs=None):
        """Collective, as mpi4py's comm.exscan: member k gets op folded over the
        values of members 0..k-1; member 0 gets None (as in mpi4py)."""
        return _scan(self, "ctx.exscan", a, op, procs, True)

    def alltoall_init(self, a, out=None):
        """Collective: a persistent alltoall of the array a (shape (nprocs, ...))
        into out (a new array when None). Registers both once (one sync, which
        checks the arguments as alltoall does); each call h() is then one
        superstep moving a's current contents, and returns h.out. Free it with
        h.free() or a ``with`` block. All processes take part (no procs=)."""
        return _persistent(self, "ctx.alltoall_init", a, out, True)

    def allgather_init(self, a, out=None):
        """Collective: a persistent allgather of the array a into out (shape
        (nprocs,) + a.shape); as alltoall_init."""
        return _persistent(self, "ctx.allgather_init", a, out, False)


include "_profsite.pxi"
include "_objcoll.pxi"


include "_frames.pxi"
include "_report.pxi"
include "_fast.pxi"
include "_coll.pxi"
include "_reduce.pxi"
include "_apps.pxi"
include "_persist.pxi"
