# Included by _core.pyx: the first superstep of every collective (ctx.broadcast,
# gather, allgather, alltoall, scatter, reduce, allreduce) and the collective
# buffer that makes a collective on arrays one superstep.
#
# The collective buffer is one internal array per process, registered
# globally once and kept between calls; its size is the same on every
# process (it only grows, by every process together). In a collective's
# first superstep each process
#   - registers two buffers globally: its pickled frame when its data travel
#     as an object, else its argument; and its result array, or an empty one
#     (so that every process registers the same number of buffers, whatever
#     the path);
#   - sends its row of the registration table: its data's size, dtype and
#     shape, the hash of the arguments that must agree (procs, root, op), its
#     mode (_coll.pxi), the collective buffer the call needs, and whether it
#     sent its data;
#   - when its data are an array and the collective buffers are large enough,
#     puts its data into the receivers' collective buffers (straight from
#     its array's memory).
# After the sync every process reads the same table. When every member
# passed an array of the agreed size and dtype, the data are in the
# collective buffers and are copied into the results (one superstep in
# all; over every process the copies run in sstep_py_sync_gil, before the
# GIL is taken back). When the buffers were too small, every process grows
# its own (one registration superstep) and the data are put again. When
# the copy would be large (BIG_COPY), nothing is put in the first superstep
# and the data move in a second one, straight between the arrays it
# registered. Objects go on as frames (_fetch). A member's own arrays
# (argument, result, out=) are registered for that call only: nothing of
# the caller's stays registered between calls, so a later call with other
# arrays, shapes or dtypes, or with a new array at a freed array's address,
# cannot meet a stale registration.

cdef enum:
    G_MIN = 65536      # the collective buffer's smallest size
    BIG_COPY = 32768   # from this many bytes to copy out of the collective buffer
                       # per process, the data move between the registered arrays
    SHAPE_MAX = 7      # dimensions of a row's shape in the table (scatter)

# the table's columns in a collective's first superstep
cdef enum:
    C_NBYTES = 0
    C_ITEMSIZE = 1
    C_DTYPE = 2
    C_NEED = 3         # collective buffer the call needs (the same at every member)
    C_SENT = 4         # 1: the data were put in this superstep
    C_FLAG = 5         # allreduce: 1 when in two phases
    C_NDIM = 8         # then the shape (scatter's root: a row's)


cdef inline lpf_memslot_t _reg_local(Context self, object a):
    """A local registration of the C-contiguous array a until the next sync
    (the caller made room)."""
    cdef lpf_memslot_t h
    lpf_register_local(self._ctx, _data(<cnp.ndarray>a), cnp.PyArray_NBYTES(<cnp.ndarray>a), &h)
    self._nregs += 1
    if self._nregs > self._nregs_peak:
        self._nregs_peak = self._nregs
    self._tmp.append(h)
    self._keep.append(a)
    return h


cdef bint _a_begin(Context self, str prim, object frame, object arr, int64_t chk, int mode,
                   size_t need, size_t nput, object shape=None, int64_t flag=0,
                   object second=None, bint big=False) except -1:
    """A collective's first superstep up to its data: registers `frame` (the
    pickled object, or the argument) and `second` (the result, or nothing)
    globally, puts this process's row of the table. Returns whether this
    process puts its array data now (into collective buffers of `need`
    bytes; never when `big`: large data move in a second superstep between
    the registered arrays, without the copy out of the collective buffer):
    the caller then issues at most nput puts from _reg_local(arr)."""
    cdef size_t p = self.nprocs, j
    cdef lpf_pid_t d
    cdef lpf_memslot_t h
    cdef int64_t *mm = <int64_t *>cnp.PyArray_DATA(self._mymeta)
    cdef cnp.ndarray f = <cnp.ndarray>frame
    cdef cnp.ndarray x = <cnp.ndarray>(frame if arr is None else arr)
    cdef cnp.ndarray f2 = <cnp.ndarray>(_E0 if second is None else second)
    cdef bint send = ((mode == M_ARRAY or mode == M_SCALAR) and self._gbuf is not None
                      and need <= self._gcap and not big)
    self._room(prim, p + (nput if send else 0), 3 if send else 2)
    lpf_register_global(self._ctx, _data(f), cnp.PyArray_NBYTES(f), &h)
    self._afh = h
    lpf_register_global(self._ctx, _data(f2), cnp.PyArray_NBYTES(f2), &h)
    self._afh2 = h
    self._nregs += 2
    if self._nregs > self._nregs_peak:
        self._nregs_peak = self._nregs
    self._keep.append(frame)
    self._keep.append(f2)
    memset(mm, 0, META * sizeof(int64_t))
    mm[C_NBYTES] = cnp.PyArray_NBYTES(x)
    mm[C_ITEMSIZE] = cnp.PyArray_ITEMSIZE(x)
    mm[C_DTYPE] = cnp.PyArray_TYPE(x)
    mm[C_NEED] = <int64_t>need
    mm[C_SENT] = send
    mm[C_FLAG] = flag
    mm[6] = chk
    mm[7] = mode
    if shape is not None:
        mm[C_NDIM] = len(shape)
        for j in range(len(shape)):
            mm[C_NDIM + 1 + j] = shape[j]
    for d in range(p):
        lpf_put(self._ctx, self._mymeta_h, 0, d, self._meta_h,
                self.pid * META * sizeof(int64_t), META * sizeof(int64_t), LPF_MSG_DEFAULT)
    self._nissued += p
    return send


cdef int _a_end(Context self, str prim, sstep_py_post *po=NULL, bint keep=False) except -1:
    """The sync of a collective's first superstep. With po (a call over
    every process whose data were sent): returns 1 when sstep_py_sync_gil
    found the call complete and made po's copies (the table is then
    cleared, the frame dropped unless keep: the caller then drops it after
    its second superstep). Else 0: the frame stays registered (_a_drop or
    _a_slot) and the table is read by _fast_ok or _a_table."""
    try:
        self._lowsync(prim, po)
    except BaseException:
        self._deferred.append((self._afh, None))
        self._deferred.append((self._afh2, None))
        raise
    if po != NULL and po.ok:
        memset(cnp.PyArray_DATA(self._meta), 0, cnp.PyArray_NBYTES(self._meta))
        if not keep:
            _a_drop(self)
        return 1
    return 0


cdef inline sstep_py_post *_post(Context self, sstep_py_post *po, int64_t chk, size_t ncp):
    """po for _a_end, with ncp copies in self._cps (the caller fills them)."""
    po.table = <int64_t *>cnp.PyArray_DATA(self._meta)
    po.nprocs = self.nprocs
    po.meta = META
    po.chk = chk
    po.sent = 1
    po.cp = self._cps
    po.ncp = ncp
    po.fold = NULL
    po.ok = 0
    return po


cdef inline sstep_py_post *_post_big(Context self, sstep_py_post *po, int64_t chk):
    """po for _a_end when the data move in a second superstep (nothing was
    sent): the call is complete when every process says so."""
    _post(self, po, chk, 0)
    po.sent = 0
    return po


cdef inline void _cp(Context self, size_t i, char *dst, const char *src, size_t n) noexcept:
    self._cps[i].dst = dst
    self._cps[i].src = src
    self._cps[i].n = n


cdef object _a_table(Context self):
    """The table of the first superstep as a list of rows (then cleared)."""
    table = self._meta.tolist()
    memset(cnp.PyArray_DATA(self._meta), 0, cnp.PyArray_NBYTES(self._meta))
    return table


cdef bint _fast_ok(Context self, list mem, int64_t chk):
    """Whether the first superstep completed the collective on arrays: every
    process called it with the same arguments and none failed, every
    member's data are an array (or a number) of the same size and dtype,
    and all were sent. Then the table is cleared and the frame dropped; else
    the table stays for _a_table (the general path)."""
    cdef int64_t *t = <int64_t *>cnp.PyArray_DATA(self._meta)
    cdef int64_t *r
    cdef int64_t *ref = t + <size_t>mem[0] * META
    cdef size_t q, P = self.nprocs
    cdef int64_t m0 = ref[7]
    if m0 != M_ARRAY and m0 != M_SCALAR:
        return False
    for q in range(P):
        r = t + q * META
        if r[6] != chk or r[C_SENT] == 0 or r[7] == M_FAILED or r[7] == 0:
            return False
    for x in mem:
        r = t + <size_t>x * META
        if r[7] != m0 or r[0] != ref[0] or r[1] != ref[1] or r[2] != ref[2]:
            return False
    memset(t, 0, P * META * sizeof(int64_t))
    _a_drop(self)
    return True


cdef int _a_drop(Context self) except -1:
    """Deregister the first superstep's frame (every process does, in the
    same order: the decision comes from the table)."""
    lpf_deregister(self._ctx, self._afh)
    lpf_deregister(self._ctx, self._afh2)
    self._nregs -= 2
    self._nregs_peak = max(self._nregs_peak, self._nregs)
    return 0


cdef Slot _a_slot(Context self, object frame, object table):
    """The first superstep's frame as a Slot (the object path reads it; the
    second buffer is deregistered now)."""
    lpf_deregister(self._ctx, self._afh2)
    self._nregs -= 1
    cdef Slot s = Slot.__new__(Slot)
    s._ctx = self
    s._h = self._afh
    s._array = frame
    s.dtype = (<cnp.ndarray>frame).dtype
    s._itemsize = 1
    s._counts = [row[C_NBYTES] for row in table]
    s._alive = True
    s._used_step = -1
    return s


cdef int _a_fail(Context self, str prim) except -1:
    """This process's arguments were wrong: take part in the first superstep
    (mode M_FAILED) so that every process stays in step; the caller then
    raises its error, the others raise one naming this process."""
    fr = _empty()
    _a_begin(self, prim, fr, None, 0, M_FAILED, 0, 0)
    _a_end(self, prim)
    _a_table(self)
    _a_drop(self)
    return 0


cdef int _a_check(Context self, str prim, object table, list mem) except -1:
    """_mode's checks (failures, absent processes, arguments) with the frame
    dropped when they raise. Returns _mode's verdict."""
    try:
        return _mode(self, prim, table, mem, [])
    except BaseException:
        _a_drop(self)
        raise


cdef bint _all_sent(object table):
    for row in table:
        if not row[C_SENT]:
            return False
    return True


cdef int _grow(Context self, str prim, object table) except -1:
    """Every process together: a collective buffer as large as the largest
    need in the table (one registration superstep) when the present one is
    too small. The old one is deregistered at once (it is in no request)."""
    cdef size_t need = 0, cap
    cdef lpf_memslot_t h
    for row in table:
        if <size_t>row[C_NEED] > need:
            need = <size_t>row[C_NEED]
    if self._gbuf is not None and need <= self._gcap:
        return 0
    cap = max(need, <size_t>G_MIN, self._gcap + self._gcap // 2)
    self._room(prim, 0, 1)
    g = np.empty(cap, dtype=np.uint8)
    lpf_register_global(self._ctx, _data(g), cap, &h)
    self._nregs += 1
    if self._gbuf is not None:
        lpf_deregister(self._ctx, self._gbuf_h)
        self._nregs -= 1
    self._nregs_peak = max(self._nregs_peak, self._nregs)
    self._gbuf = g
    self._gbuf_h = h
    self._gcap = cap
    self._named[(h & 0xffffffff) >> 1] = (g, "collective buffer")
    self._lowsync(prim)
    self._layer_step()
    return 0


cdef inline char *_gdata(Context self):
    return <char *>cnp.PyArray_DATA(<cnp.ndarray>self._gbuf)


cdef object _gview(Context self, size_t off, size_t n, object dtype):
    """n elements of dtype in the collective buffer at byte off."""
    cdef size_t isz = (<cnp.dtype>dtype).itemsize
    return self._gbuf[off:off + n * isz].view(dtype)
