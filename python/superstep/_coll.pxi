# Included by _core.pyx: the collectives of a Context.
#
# Every collective starts with one superstep (_fast.pxi) that tells every
# process each process's buffer sizes, dtypes, a hash of the arguments that
# must agree (procs, root, op) and how the process's data travels (its
# mode):
#   M_ARRAY   a NumPy array of plain data: the fast path, straight from the
#             arrays' memory (into the collective buffers, or for large data
#             straight into the results in a second superstep);
#   M_SCALAR  a number (an array of shape ()), the same unless the members'
#             numbers have different types: then they travel as objects;
#   M_OBJECT  anything else, as a pickled frame (_frames.pxi), registered by
#             that first superstep;
#   M_FAILED  the process's own arguments were wrong: it still takes part in
#             the superstep (so every process stays in step), then raises its
#             own error, and the others raise one naming it.
# When every member's data is an array, the data travel in that first
# superstep; when some are objects and some arrays, a registration sends
# everything as objects. A primitive always registers the same number of
# buffers, whatever the path, so the global registrations stay in step.

cdef enum:
    M_ARRAY = 1
    M_OBJECT = 2
    M_SCALAR = 3
    M_FAILED = 4

_NUMBERS = (bool, int, float, complex, np.number, np.bool_)
_TWO_MIN = 262144     # reduce, allreduce in two phases from this many bytes
_PYOPS = {"sum": operator.add, "prod": operator.mul, "min": min, "max": max}


_E0 = np.empty(0, dtype=np.uint8)


cdef inline object _empty():
    """A zero-size array (one for all: nothing is ever written into it)."""
    return _E0


cdef object _plain(object a, bint numbers):
    """a as a C-contiguous array of plain data, or None when it travels as an object."""
    if cnp.PyArray_Check(a):
        if cnp.PyDataType_FLAGS((<cnp.ndarray>a).descr) & 1:     # NPY_ITEM_HASOBJECT
            return None
        if cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a):
            return a
        return np.ascontiguousarray(a)
    if numbers and isinstance(a, _NUMBERS):
        arr = np.asarray(a)
        if arr.dtype.hasobject:      # an int beyond 64 bits
            return None
        return arr
    return None


cdef tuple _members(Context self, str prim, object procs, object root):
    cdef list mem
    if procs is None:
        if self._allmem is None:
            self._allmem = list(range(self.nprocs))
        mem = self._allmem      # never changed by its users
        me = self.pid
    else:
        try:
            mem = [int(q) for q in procs]
        except TypeError:
            raise TypeError("%s: procs must be a sequence of pids (or None for all)"
                            % self._who(prim))
        if not mem:
            raise ValueError("%s: procs is empty" % self._who(prim))
        for q in mem:
            if q < 0 or q >= self.nprocs:
                raise IndexError("%s: pid %d in procs is out of range (nprocs %d)"
                                 % (self._who(prim), q, self.nprocs))
        if len(set(mem)) != len(mem):
            raise ValueError("%s: procs names a pid twice" % self._who(prim))
        me = mem.index(self.pid) if self.pid in mem else -1
    if root is not None:
        self._pid_arg(prim, "root", root)
        if root not in mem:
            raise ValueError("%s: root %d is not one of procs" % (self._who(prim), root))
    return mem, me


cdef int64_t _chk(Context self, int code, object procs, object mem, object root, object op):
    """_checkval, kept per context for the calls over every process."""
    if procs is not None:
        return _checkval(code, mem, root, op)
    cdef long oc = (<int>_OPCODE.get(op, 5)) if isinstance(op, str) else 0
    key = ((-1 if root is None else <long>root) + 1) * 128 + oc * 16 + code
    v = self._chkc.get(key)
    if v is None:
        v = self._chkc[key] = _checkval(code, mem, root, op)
    return v


cdef int64_t _checkval(int code, object mem, object root, object op):
    cdef uint64_t x = <uint64_t>hash((code, tuple(mem), -1 if root is None else int(root),
                                      _OPCODE.get(op, -1) if isinstance(op, str) else -1))
    return <int64_t>(x & 0x7fffffffffffffff)


cdef object _opfun(Context self, str prim, object op):
    if isinstance(op, str):
        if op not in _OPS:
            raise ValueError("%s: op must be 'sum', 'prod', 'min', 'max' or a callable, "
                             "got %r" % (self._who(prim), op))
        return _OPS[op]
    if not callable(op):
        raise TypeError("%s: op must be 'sum', 'prod', 'min', 'max' or a callable"
                        % self._who(prim))
    return op


cdef int _coll_fail(Context self, str prim, int k) except -1:
    """This process's arguments were wrong: take part in the registration sync
    (k empty arrays, mode M_FAILED) so that every process stays in step; the
    caller then raises its error."""
    res = self._register_many(prim, [_empty() for _ in range(k)], 0, M_FAILED)
    for s in res[:k]:
        (<Slot>s).free()
    return 0


cdef int _mode(Context self, str prim, object table, list mem, list slots) except -1:
    """After a collective's registration sync: M_ARRAY when every member's data
    is an array (their dtypes and sizes agree, else every process raises),
    M_OBJECT when every member's data travels as an object, 0 when they must
    be sent again as objects. Raises on every process when the processes
    disagree on the arguments or one of them failed on its own."""
    cdef lpf_pid_t q
    cdef int m
    try:
        for q in range(self.nprocs):
            if table[q][7] == M_FAILED:
                raise SuperstepError("%s: process %d failed on its own arguments (its "
                                     "exception says why); the collective was not done"
                                     % (self._who(prim), q))
            if table[q][7] == 0:
                raise SuperstepError("%s: process %d did not call a collective in this "
                                     "superstep (it called ctx.sync, or returned)"
                                     % (self._who(prim), q))
        for q in range(self.nprocs):
            if table[q][6] != table[self.pid][6]:
                raise ValueError("%s: the processes called it with different arguments "
                                 "(procs, root or op): process %d differs from process %d"
                                 % (self._who(prim), q, self.pid))
        modes = set([table[q][7] for q in mem])
        if modes == {M_OBJECT}:
            return M_OBJECT
        if M_OBJECT in modes:
            return 0
        ref = mem[0]
        for q in mem:
            if table[q][2] != table[ref][2] or table[q][1] != table[ref][1] or \
               table[q][0] != table[ref][0]:
                if modes == {M_SCALAR}:
                    return 0        # numbers of different types: as objects
            if table[q][2] != table[ref][2] or table[q][1] != table[ref][1]:
                raise TypeError("%s: the members' arrays have different dtypes (process %d "
                                "and process %d)" % (self._who(prim), ref, q))
            if table[q][0] != table[ref][0]:
                raise ValueError("%s: the members' arrays have different sizes: process %d "
                                 "has %d bytes, process %d has %d bytes" % (
                                     self._who(prim), ref, table[ref][0], q, table[q][0]))
        return M_ARRAY
    except BaseException:
        for s in slots:
            (<Slot>s).free()
        raise


cdef list _fetch(Context self, str prim, Slot s, object table, list srcs):
    """Get the whole registered buffer of `s` at each process of srcs into
    one local buffer; frees s and syncs. Returns uint8 views, one per source
    (this process's own: its registered array)."""
    cdef size_t total = 0, pos = 0, n
    cdef lpf_memslot_t lh
    cdef lpf_pid_t q
    sizes = []
    for q in srcs:
        n = 0 if q == self.pid else <size_t>table[q][0]
        sizes.append(n)
        total += n
    buf = np.empty(total, dtype=np.uint8)
    if total:
        self._room(prim, len(srcs), 1)
        lpf_register_local(self._ctx, _data(buf), total, &lh)
        self._nregs += 1
        self._nregs_peak = max(self._nregs_peak, self._nregs)
        self._tmp.append(lh)
        self._keep.append(buf)
        for j in range(len(srcs)):
            n = sizes[j]
            if n:
                lpf_get(self._ctx, <lpf_pid_t>srcs[j], s._h, 0, lh, pos, n, LPF_MSG_DEFAULT)
                self._nissued += 1
            pos += n
    s.free()
    self._lowsync(prim)
    out = []
    pos = 0
    for j in range(len(srcs)):
        if srcs[j] == self.pid:
            out.append(s._array)
        else:
            out.append(buf[pos:pos + sizes[j]])
            pos += sizes[j]
    return out


# ---------------------------------------------------------------- broadcast

cdef int _bcast_puts(Context self, object src, list mem, size_t nb) except -1:
    cdef lpf_memslot_t h
    if nb == 0:
        return 0
    h = _reg_local(self, src)
    for q in mem:
        if q != self.pid:
            lpf_put(self._ctx, h, 0, <lpf_pid_t>q, self._gbuf_h, 0, nb, LPF_MSG_DEFAULT)
    self._nissued += len(mem) - 1
    return 0


cdef int _bcast_big(Context self, str prim, list mem, object root, size_t nb) except -1:
    """Large data, a second superstep: straight from root's array into the
    members' (registered by the first superstep, which this drops)."""
    if self.pid == root and nb:
        self._room(prim, len(mem), 0)
        for q in mem:
            if q != self.pid:
                lpf_put(self._ctx, self._afh, 0, <lpf_pid_t>q, self._afh, 0, nb,
                        LPF_MSG_DEFAULT)
                self._nissued += 1
    self._lowsync(prim)
    _a_drop(self)
    return 0


cdef object _broadcast(Context self, object a, object root, object procs):
    cdef str prim = "ctx.broadcast"
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t nb = 0
    try:
        mem, me = _members(self, prim, procs, root)
        src = _empty()
        frame = src
        if me >= 0:
            plain = _plain(a, False)
            if plain is None:
                mode = M_OBJECT
                if self.pid == root:
                    frame = _encode(a)
            elif self.pid == root:
                src = plain
            else:
                src = self._array_arg(prim, "array", a, None, True)
    except Exception:
        _a_fail(self, prim)
        raise
    cdef int64_t chk = _chk(self, 1, procs, mem, root, None)
    if mode == M_ARRAY:
        nb = cnp.PyArray_NBYTES(<cnp.ndarray>src)
    cdef bint big = nb >= BIG_COPY
    cdef bint send = _a_begin(self, prim, src if mode == M_ARRAY else frame,
                              src if mode == M_ARRAY else None, chk, mode, nb, len(mem),
                              None, 0, None, big)
    cdef sstep_py_post po
    cdef sstep_py_post *pp = NULL
    if send:
        if self.pid == root:
            _bcast_puts(self, src, mem, nb)
        if procs is None:
            if self.pid != root:
                _cp(self, 0, _data(<cnp.ndarray>src), _gdata(self), nb)
            pp = _post(self, &po, chk, 0 if self.pid == root else 1)
    elif big and procs is None and mode == M_ARRAY:
        pp = _post_big(self, &po, chk)
    if _a_end(self, prim, pp, big):
        if big:
            _bcast_big(self, prim, mem, root, nb)
        return a
    if mode == M_ARRAY and _fast_ok(self, mem, chk):
        if me >= 0 and self.pid != root and nb:
            memcpy(_data(<cnp.ndarray>src), _gdata(self), nb)
        return a if me >= 0 else None
    table = _a_table(self)
    cdef int rmode = table[root][7]
    cdef int how
    if rmode == M_ARRAY:
        how = _a_check(self, prim, table, mem)
    else:
        _a_check(self, prim, table, [root])      # the checks only
        how = M_OBJECT
    if how == M_ARRAY:
        if <size_t>table[root][C_NBYTES] >= BIG_COPY:
            _bcast_big(self, prim, mem, root, nb)
            return a if me >= 0 else None
        _a_drop(self)
        if not _all_sent(table):
            _grow(self, prim, table)
            if self.pid == root:
                self._room(prim, len(mem), 1)
                _bcast_puts(self, src, mem, nb)
            self._lowsync(prim)
        if me >= 0 and self.pid != root and nb:
            memcpy(_data(<cnp.ndarray>src), _gdata(self), nb)
        return a if me >= 0 else None
    if how == 0:
        # root sent an array, some member passes an object: root's array as an object
        _a_drop(self)
        src = _encode(a) if self.pid == root else _empty()
        res = self._register_many(prim, [src], chk, M_OBJECT)
        sl, table = res[0], res[1]
    else:
        sl = _a_slot(self, frame, table)
    srcs = [root] if (me >= 0 and self.pid != root) else []
    frames = _fetch(self, prim, <Slot>sl, table, srcs)
    if me < 0:
        return None
    if self.pid == root:
        return a
    obj = _decode(frames[0])
    if isinstance(a, np.ndarray) and isinstance(obj, np.ndarray) and \
       a.shape == obj.shape and a.dtype == obj.dtype and a.flags.writeable:
        a[...] = obj
        return a
    return obj


# ---------------------------------------------------------------- gather, allgather

cdef object _out_like(Context self, str prim, object out, object src, Py_ssize_t lead):
    """_out_arg for a result of src's dtype and shape, or of shape (lead,) +
    src's shape when lead >= 0: the usual case checked in C."""
    cdef cnp.ndarray s = <cnp.ndarray>src
    cdef cnp.ndarray o
    cdef int nd = cnp.PyArray_NDIM(s), k, d = 1 if lead >= 0 else 0
    cdef cnp.npy_intp *sd = cnp.PyArray_DIMS(s)
    cdef cnp.npy_intp *od
    if out is None:
        return np.empty(((lead,) + src.shape) if lead >= 0 else src.shape, dtype=src.dtype)
    if cnp.PyArray_Check(out):
        o = <cnp.ndarray>out
        if (cnp.PyArray_NDIM(o) == nd + d and cnp.PyArray_IS_C_CONTIGUOUS(o)
                and cnp.PyArray_ISWRITEABLE(o) and cnp.PyArray_EquivTypes(o.descr, s.descr)
                and not (cnp.PyDataType_FLAGS(o.descr) & 1) and not _overlap(o, s)):
            od = cnp.PyArray_DIMS(o)
            if d == 0 or od[0] == lead:
                for k in range(nd):
                    if od[k + d] != sd[k]:
                        break
                else:
                    return out
    return _out_arg(self, prim, out, ((lead,) + src.shape) if lead >= 0 else src.shape,
                    src.dtype, src)


cdef object _out_arg(Context self, str prim, object out, tuple shape, object dtype,
                     object src):
    """out= of a collective: the array the result goes into (else a new one)."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    arr = self._array_arg(prim, "out", out, dtype, True)
    if (<object>arr).shape != shape:
        raise ValueError("%s: out has shape %s, the result has shape %s"
                         % (self._who(prim), (<object>arr).shape, shape))
    if _overlap(arr, src):
        raise ValueError("%s: out shares memory with the argument" % self._who(prim))
    return arr


cdef bint _overlap(object x, object y):
    """Whether the memory of two C-contiguous arrays overlaps."""
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef cnp.ndarray b = <cnp.ndarray>y
    cdef size_t a0 = <size_t>cnp.PyArray_DATA(a), b0 = <size_t>cnp.PyArray_DATA(b)
    cdef size_t na = <size_t>cnp.PyArray_NBYTES(a), nb = <size_t>cnp.PyArray_NBYTES(b)
    return na != 0 and nb != 0 and a0 < b0 + nb and b0 < a0 + na


cdef inline void _copy_block(object dst, size_t doff, object src, size_t soff,
                             size_t n) noexcept:
    """n bytes of C-contiguous src at byte soff into C-contiguous dst at doff."""
    if n:
        memcpy(<char *>cnp.PyArray_DATA(<cnp.ndarray>dst) + doff,
               <char *>cnp.PyArray_DATA(<cnp.ndarray>src) + soff, n)


cdef int _gather_puts(Context self, object src, list mem, object root, size_t me, size_t nb,
                      bint to_all) except -1:
    cdef lpf_memslot_t h
    if nb == 0 or (not to_all and self.pid == root):
        return 0
    h = _reg_local(self, src)
    if to_all:
        for q in mem:
            if q != self.pid:
                lpf_put(self._ctx, h, 0, <lpf_pid_t>q, self._gbuf_h, me * nb, nb,
                        LPF_MSG_DEFAULT)
        self._nissued += len(mem) - 1
    else:
        lpf_put(self._ctx, h, 0, <lpf_pid_t>root, self._gbuf_h, me * nb, nb, LPF_MSG_DEFAULT)
        self._nissued += 1
    return 0


cdef object _gather_big(Context self, str prim, object src, object out, list mem, object root,
                        size_t ume, size_t nb, bint to_all, bint receives):
    """Large data, a second superstep: straight from the arguments into the
    results (registered by the first superstep, which this drops)."""
    if nb:
        if receives:
            memcpy(_data(<cnp.ndarray>out) + ume * nb, _data(<cnp.ndarray>src), nb)
        self._room(prim, len(mem), 0)
        for q in mem:
            if q != self.pid and (to_all or q == root):
                lpf_put(self._ctx, self._afh, 0, <lpf_pid_t>q, self._afh2, ume * nb, nb,
                        LPF_MSG_DEFAULT)
                self._nissued += 1
    self._lowsync(prim)
    _a_drop(self)
    return out if receives else None


cdef object _gather(Context self, object a, object root, object procs, bint to_all,
                    object outarg):
    cdef str prim = "ctx.allgather" if to_all else "ctx.gather"
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P = 0, nb = 0, k, ume = 0
    cdef bint receives = False
    out = None
    try:
        mem, me = _members(self, prim, procs, root)
        P = len(mem)
        src = _empty()
        frame = src
        if me >= 0:
            ume = me
            src = _plain(a, True)
            if src is None:
                mode = M_OBJECT
                frame = _encode(a)
                src = _empty()
            elif not cnp.PyArray_Check(a):
                mode = M_SCALAR
        receives = me >= 0 and (to_all or self.pid == root)
        if receives and mode != M_OBJECT:
            out = _out_like(self, prim, outarg, src, P)
    except Exception:
        _a_fail(self, prim)
        raise
    cdef int64_t chk = _chk(self, 3 if to_all else 2, procs, mem, root, None)
    if me >= 0 and mode != M_OBJECT:
        nb = cnp.PyArray_NBYTES(<cnp.ndarray>src)
    cdef bint big = (P - 1) * nb >= BIG_COPY
    cdef bint send = _a_begin(self, prim, frame if mode == M_OBJECT else src,
                              src if mode != M_OBJECT else None, chk, mode, P * nb, P, None, 0,
                              out, big)
    cdef char *o
    cdef char *g
    cdef sstep_py_post po
    cdef sstep_py_post *pp = NULL
    if send and me >= 0:
        _gather_puts(self, src, mem, root, ume, nb, to_all)
        if procs is None:
            if receives:
                o = _data(<cnp.ndarray>out)
                g = _gdata(self)
                for k in range(P):
                    _cp(self, k, o + k * nb,
                        _data(<cnp.ndarray>src) if k == ume else g + k * nb, nb)
            pp = _post(self, &po, chk, P if receives else 0)
    elif big and procs is None and mode != M_OBJECT:
        pp = _post_big(self, &po, chk)
    if _a_end(self, prim, pp, big):
        if big:
            return _gather_big(self, prim, src, out, mem, root, ume, nb, to_all, receives)
        return out if receives else None
    cdef int how = M_ARRAY
    if mode == M_OBJECT or not _fast_ok(self, mem, chk):
        table = _a_table(self)
        how = _a_check(self, prim, table, mem)
        if how == M_ARRAY and (P - 1) * <size_t>table[mem[0]][C_NBYTES] >= BIG_COPY:
            return _gather_big(self, prim, src, out, mem, root, ume, nb if me >= 0 else 0,
                               to_all, receives)
        if how == M_ARRAY:
            _a_drop(self)
            if not _all_sent(table):
                _grow(self, prim, table)
                if me >= 0:
                    self._room(prim, P, 1)
                    _gather_puts(self, src, mem, root, ume, nb, to_all)
                self._lowsync(prim)
    if how == M_ARRAY:
        if not receives:
            return None
        if nb:
            o = _data(<cnp.ndarray>out)
            g = _gdata(self)
            for k in range(P):
                if k == ume:
                    memcpy(o + k * nb, _data(<cnp.ndarray>src), nb)
                else:
                    memcpy(o + k * nb, g + k * nb, nb)
        return out
    if how == 0:
        _a_drop(self)
        src = _encode(a) if me >= 0 else _empty()
        res = self._register_many(prim, [src], chk, M_OBJECT)
        sl, table = res[0], res[1]
    else:
        sl = _a_slot(self, frame, table)
    frames = _fetch(self, prim, <Slot>sl, table, list(mem) if receives else [])
    return [_decode(f) for f in frames] if receives else None


# ---------------------------------------------------------------- alltoall, scatter

cdef list _items(Context self, str prim, object a, size_t P, str what):
    if isinstance(a, np.ndarray):
        if a.ndim == 0 or a.shape[0] != P:
            raise ValueError("%s: %s's first dimension must be len(procs) = %d, shape is %s"
                             % (self._who(prim), what, P, a.shape))
        return [a[k] for k in range(P)]
    try:
        items = list(a)
    except TypeError:
        raise TypeError("%s: %s must be an array of shape (len(procs), ...) or a sequence "
                        "of len(procs) objects, got %s" % (self._who(prim), what,
                                                           type(a).__name__))
    if len(items) != P:
        raise ValueError("%s: %s has %d items, len(procs) is %d" % (
            self._who(prim), what, len(items), P))
    return items


cdef list _fetch_items(Context self, str prim, Slot s, list srcs, size_t P, size_t me):
    """Item `me` of the _encode_many buffers of s at the processes srcs: one
    sync for their offsets, one for the items. Frees s."""
    cdef size_t k, n = len(srcs), total = 0, pos = 0
    cdef size_t hb = 8 * (P + 1)
    cdef lpf_memslot_t lh
    hdr = np.zeros((max(n, 1), P + 1), dtype=np.int64)
    if n:
        self._room(prim, n, 1)
        lpf_register_local(self._ctx, _data(hdr), hdr.nbytes, &lh)
        self._nregs += 1
        self._nregs_peak = max(self._nregs_peak, self._nregs)
        self._tmp.append(lh)
        self._keep.append(hdr)
        for k in range(n):
            if srcs[k] == self.pid:
                hdr[k] = s._array[:hb].view(np.int64)
            else:
                lpf_get(self._ctx, <lpf_pid_t>srcs[k], s._h, 0, lh, k * hb, hb,
                        LPF_MSG_DEFAULT)
                self._nissued += 1
    self._lowsync(prim)
    lens = [int(hdr[k, me + 1] - hdr[k, me]) if n else 0 for k in range(n)]
    for k in range(n):
        if srcs[k] != self.pid:
            total += lens[k]
    buf = np.empty(total, dtype=np.uint8)
    if total:
        self._room(prim, n, 1)
        lpf_register_local(self._ctx, _data(buf), total, &lh)
        self._nregs += 1
        self._nregs_peak = max(self._nregs_peak, self._nregs)
        self._tmp.append(lh)
        self._keep.append(buf)
    out = []
    for k in range(n):
        if srcs[k] == self.pid:
            out.append(s._array[hdr[k, me]:hdr[k, me + 1]])
        else:
            if lens[k]:
                lpf_get(self._ctx, <lpf_pid_t>srcs[k], s._h, <size_t>hdr[k, me], lh, pos,
                        lens[k], LPF_MSG_DEFAULT)
                self._nissued += 1
            out.append(buf[pos:pos + lens[k]])
            pos += lens[k]
    s.free()
    self._lowsync(prim)
    return out


cdef int _a2a_puts(Context self, object src, list mem, size_t me, size_t blk) except -1:
    cdef lpf_memslot_t h
    cdef size_t k, P = len(mem)
    if blk == 0:
        return 0
    h = _reg_local(self, src)
    for k in range(P):
        if mem[k] != self.pid:
            lpf_put(self._ctx, h, k * blk, <lpf_pid_t>mem[k], self._gbuf_h, me * blk, blk,
                    LPF_MSG_DEFAULT)
    self._nissued += P - 1
    return 0


cdef object _a2a_big(Context self, str prim, object src, object out, list mem, size_t ume,
                     size_t blk):
    """Large data, a second superstep: straight from the arguments into the
    results (registered by the first superstep, which this drops)."""
    cdef size_t k, P = len(mem)
    if blk:
        memcpy(_data(<cnp.ndarray>out) + ume * blk, _data(<cnp.ndarray>src) + ume * blk, blk)
        self._room(prim, P, 0)
        for k in range(P):
            if mem[k] != self.pid:
                lpf_put(self._ctx, self._afh, k * blk, <lpf_pid_t>mem[k], self._afh2,
                        ume * blk, blk, LPF_MSG_DEFAULT)
        self._nissued += P - 1
    self._lowsync(prim)
    _a_drop(self)
    return out if self.pid in mem else None


cdef object _alltoall(Context self, object a, object procs, object outarg):
    cdef str prim = "ctx.alltoall"
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P = 0, nb = 0, blk = 0, k, ume = 0
    out = None
    try:
        mem, me = _members(self, prim, procs, None)
        P = len(mem)
        src = _empty()
        frame = src
        if me >= 0:
            ume = me
            src = _plain(a, False)
            if src is None:
                mode = M_OBJECT
                frame = _encode_many(_items(self, prim, a, P, "the argument"))
                src = _empty()
            elif (cnp.PyArray_NDIM(<cnp.ndarray>src) == 0
                  or <size_t>cnp.PyArray_DIMS(<cnp.ndarray>src)[0] != P):
                raise ValueError("%s: the array's first dimension must be len(procs) = %d, "
                                 "shape is %s" % (self._who(prim), P, src.shape))
            else:
                out = _out_like(self, prim, outarg, src, -1)
    except Exception:
        _a_fail(self, prim)
        raise
    cdef int64_t chk = _chk(self, 4, procs, mem, None, None)
    if me >= 0 and mode == M_ARRAY:
        nb = cnp.PyArray_NBYTES(<cnp.ndarray>src)
        blk = nb // P
    cdef bint big = blk * (P - 1) >= BIG_COPY
    cdef bint send = _a_begin(self, prim, src if mode == M_ARRAY else frame,
                              src if mode == M_ARRAY else None, chk, mode, nb, P, None, 0, out,
                              big)
    cdef char *o
    cdef char *g
    cdef sstep_py_post po
    cdef sstep_py_post *pp = NULL
    if send and me >= 0:
        _a2a_puts(self, src, mem, ume, blk)
        if procs is None:
            o = _data(<cnp.ndarray>out)
            g = _gdata(self)
            for k in range(P):
                _cp(self, k, o + k * blk,
                    (_data(<cnp.ndarray>src) if k == ume else g) + k * blk, blk)
            pp = _post(self, &po, chk, P)
    elif big and procs is None and mode == M_ARRAY:
        pp = _post_big(self, &po, chk)
    if _a_end(self, prim, pp, big):
        if big:
            return _a2a_big(self, prim, src, out, mem, ume, blk)
        return out
    cdef int how = M_ARRAY
    if mode == M_OBJECT or not _fast_ok(self, mem, chk):
        table = _a_table(self)
        how = _a_check(self, prim, table, mem)
        if how == M_ARRAY and (P - 1) * (<size_t>table[mem[0]][C_NBYTES] // P) >= BIG_COPY:
            return _a2a_big(self, prim, src, out, mem, ume, blk if me >= 0 else 0)
        if how == M_ARRAY:
            _a_drop(self)
            if not _all_sent(table):
                _grow(self, prim, table)
                if me >= 0:
                    self._room(prim, P, 1)
                    _a2a_puts(self, src, mem, ume, blk)
                self._lowsync(prim)
    if how == M_ARRAY:
        if me < 0:
            return None
        if blk:
            o = _data(<cnp.ndarray>out)
            g = _gdata(self)
            for k in range(P):
                if k == ume:
                    memcpy(o + k * blk, _data(<cnp.ndarray>src) + k * blk, blk)
                else:
                    memcpy(o + k * blk, g + k * blk, blk)
        return out
    if how == 0:
        _a_drop(self)
        src = _encode_many(_items(self, prim, a, P, "the argument")) if me >= 0 else _empty()
        res = self._register_many(prim, [src], chk, M_OBJECT)
        sl, table = res[0], res[1]
    else:
        sl = _a_slot(self, frame, table)
    frames = _fetch_items(self, prim, <Slot>sl, table_srcs(mem, me), P, ume)
    return [_decode(f) for f in frames] if me >= 0 else None


cdef list table_srcs(list mem, object me):
    return list(mem) if me >= 0 else []


cdef int _scatter_puts(Context self, object src, list mem, size_t rownb) except -1:
    cdef lpf_memslot_t h
    cdef size_t k, P = len(mem)
    if rownb == 0:
        return 0
    h = _reg_local(self, src)
    for k in range(P):
        if mem[k] != self.pid:
            lpf_put(self._ctx, h, k * rownb, <lpf_pid_t>mem[k], self._gbuf_h, 0, rownb,
                    LPF_MSG_DEFAULT)
    self._nissued += P - 1
    return 0


cdef bint _builtin_dtype(object a):
    """Whether a's dtype is the one its type number names (what a row of the
    table can say: no byte order, size or fields of its own)."""
    cdef cnp.ndarray x = <cnp.ndarray>a
    cdef cnp.dtype d = cnp.PyArray_DescrFromType(cnp.PyArray_TYPE(x))
    return d is <object>x.descr or <object>d == x.dtype


cdef object _scatter_res(Context self, str prim, object out, int64_t *rr):
    """The result of scatter for root's row rr of the table: out when it
    has the row's shape and dtype (else ValueError), or a new array."""
    cdef int nd = <int>rr[C_NDIM], k
    cdef cnp.npy_intp dims[SHAPE_MAX]
    for k in range(nd):
        dims[k] = <cnp.npy_intp>rr[C_NDIM + 1 + k]
    if out is None:
        return cnp.PyArray_EMPTY(nd, dims, <int>rr[C_DTYPE], 0)
    cdef cnp.ndarray o = <cnp.ndarray>out
    if (cnp.PyArray_TYPE(o) == rr[C_DTYPE] and cnp.PyArray_ISNOTSWAPPED(o)
            and cnp.PyArray_NDIM(o) == nd):
        for k in range(nd):
            if cnp.PyArray_DIMS(o)[k] != dims[k]:
                break
        else:
            return out
    dt = <object>cnp.PyArray_DescrFromType(<int>rr[C_DTYPE])
    shape = tuple([dims[k] for k in range(nd)])
    if out.dtype != dt or out.shape != shape:
        raise ValueError("%s: out has shape %s and dtype %s, the row has shape %s "
                         "and dtype %s" % (self._who(prim), out.shape, out.dtype, shape, dt))
    return out


cdef object _scatter(Context self, object a, object root, object procs, object outarg):
    cdef str prim = "ctx.scatter"
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P = 0, rownb = 0, ume = 0, nb
    rowshape = None
    out = None
    try:
        mem, me = _members(self, prim, procs, root)
        P = len(mem)
        if me >= 0:
            ume = me
        src = _empty()
        frame = src
        if self.pid == root:
            plain = _plain(a, False) if cnp.PyArray_Check(a) else None
            if (plain is not None and cnp.PyArray_NDIM(<cnp.ndarray>plain) >= 1
                    and <size_t>cnp.PyArray_DIMS(<cnp.ndarray>plain)[0] == P
                    and cnp.PyArray_NDIM(<cnp.ndarray>plain) - 1 <= SHAPE_MAX
                    and _builtin_dtype(plain)):
                src = plain
                rowshape = plain.shape[1:]
                rownb = cnp.PyArray_NBYTES(<cnp.ndarray>src) // P
            else:
                mode = M_OBJECT
                items = _items(self, prim, a, P, "root's argument")
                if isinstance(a, np.ndarray):
                    items = [np.array(x) for x in items]    # rows as arrays of their own
                frame = _encode_many(items)
        if me >= 0 and outarg is not None:
            out = <object>self._array_arg(prim, "out", outarg, None, True)
    except Exception:
        _a_fail(self, prim)
        raise
    cdef int64_t chk = _chk(self, 7, procs, mem, root, None)
    if _a_begin(self, prim, frame, src if mode == M_ARRAY else None, chk, mode, rownb, P,
                rowshape) and self.pid == root:
        _scatter_puts(self, src, mem, rownb)
    _a_end(self, prim)
    cdef int how = M_ARRAY
    cdef int64_t rr[META]      # root's row
    memcpy(rr, <int64_t *>cnp.PyArray_DATA(self._meta) + <size_t>root * META,
           META * sizeof(int64_t))
    if not _fast_ok(self, [root], chk):
        table = _a_table(self)
        how = _a_check(self, prim, table, [root])
        if how == M_ARRAY:
            _a_drop(self)
            if not _all_sent(table):
                _grow(self, prim, table)
                if self.pid == root:
                    self._room(prim, P, 1)
                    _scatter_puts(self, src, mem, rownb)
                self._lowsync(prim)
    if how == M_ARRAY:
        if me < 0:
            return None
        nb = <size_t>rr[C_NBYTES] // P
        res = _scatter_res(self, prim, out, rr)
        if nb:
            if self.pid == root:
                memcpy(_data(<cnp.ndarray>res), _data(<cnp.ndarray>src) + ume * nb, nb)
            else:
                memcpy(_data(<cnp.ndarray>res), _gdata(self), nb)
        return res
    sl = _a_slot(self, frame, table)
    frames = _fetch_items(self, prim, <Slot>sl, [root] if me >= 0 else [], P, ume)
    if me < 0:
        return None
    obj = _decode(frames[0])
    if out is not None and isinstance(obj, np.ndarray) and obj.shape == out.shape and \
       obj.dtype == out.dtype:
        out[...] = obj
        return out
    return obj
