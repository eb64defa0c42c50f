# Included by _core.pyx: the collectives of a Context.
#
# Every collective starts with one registration sync (Context._register_many)
# that tells every process each process's buffer sizes, dtypes, a hash of
# the arguments that must agree (procs, root, op) and how the process's data
# travels (its mode):
#   M_ARRAY   a NumPy array of plain data: the fast path, straight from and
#             into the arrays' memory;
#   M_SCALAR  a number (an array of shape ()), the same unless the members'
#             numbers have different types: then they travel as objects;
#   M_OBJECT  anything else, as a pickled frame (_frames.pxi);
#   M_FAILED  the process's own arguments were wrong: it still takes part in
#             the sync (so every process stays in step), then raises its own
#             error, and the others raise one naming it.
# When every member's data is an array, the arrays move as before; when some
# are objects and some arrays, a second registration sends everything as
# objects. A primitive always registers the same number of arrays, whatever
# the path, so the global registrations stay in step.

cdef enum:
    M_ARRAY = 1
    M_OBJECT = 2
    M_SCALAR = 3
    M_FAILED = 4

_NUMBERS = (bool, int, float, complex, np.number, np.bool_)
_PYOPS = {"sum": operator.add, "prod": operator.mul, "min": min, "max": max}


cdef object _empty():
    return np.empty(0, dtype=np.uint8)


cdef object _plain(object a, bint numbers):
    """a as a C-contiguous array of plain data, or None when it travels as an object."""
    if isinstance(a, np.ndarray):
        if (<cnp.ndarray>a).dtype.hasobject:
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
        mem = list(range(self.nprocs))
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

cdef object _broadcast(Context self, object a, object root, object procs):
    cdef str prim = "ctx.broadcast"
    self._check(prim)
    cdef int mode = M_ARRAY
    try:
        mem, me = _members(self, prim, procs, root)
        src = _empty()
        if me >= 0:
            plain = _plain(a, False)
            if plain is None:
                mode = M_OBJECT
                if self.pid == root:
                    src = _encode(a)
            elif self.pid == root:
                src = plain
            else:
                src = self._array_arg(prim, "array", a, None, True)
    except Exception:
        _coll_fail(self, prim, 1)
        raise
    cdef int64_t chk = _checkval(1, mem, root, None)
    res = self._register_many(prim, [src], chk, mode)
    sl, table = res[0], res[1]
    cdef int rmode = table[root][7]
    cdef int how
    if rmode == M_ARRAY:
        how = _mode(self, prim, table, mem, [sl])
    else:
        _mode(self, prim, table, [root], [sl])      # the checks only
        how = M_OBJECT
    if how == 0:
        # root sent an array, some member passes an object: root's array as an object
        (<Slot>sl).free()
        src = _encode(a) if self.pid == root else _empty()
        res = self._register_many(prim, [src], chk, M_OBJECT)
        sl, table = res[0], res[1]
        how = M_OBJECT
    cdef cnp.ndarray arr
    if how == M_ARRAY:
        arr = <cnp.ndarray>src
        if me >= 0 and self.pid != root and arr.nbytes:
            lpf_get(self._ctx, root, (<Slot>sl)._h, 0, (<Slot>sl)._h, 0, arr.nbytes,
                    LPF_MSG_DEFAULT)
            self._nissued += 1
        (<Slot>sl).free()
        self._lowsync(prim)
        return a if me >= 0 else None
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


cdef object _gather(Context self, object a, object root, object procs, bint to_all,
                    object outarg):
    cdef str prim = "ctx.allgather" if to_all else "ctx.gather"
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P
    try:
        mem, me = _members(self, prim, procs, root)
        P = len(mem)
        src = _empty()
        if me >= 0:
            src = _plain(a, True)
            if src is None:
                mode = M_OBJECT
                src = _encode(a)
            elif not isinstance(a, np.ndarray):
                mode = M_SCALAR
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    receives = me >= 0 and (to_all or self.pid == root)
    try:
        out = (_out_arg(self, prim, outarg, (P,) + src.shape, src.dtype, src)
               if receives and mode != M_OBJECT else _empty())
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    cdef int64_t chk = _checkval(3 if to_all else 2, mem, root, None)
    res = self._register_many(prim, [src, out], chk, mode)
    s_src, s_out, table = res[0], res[1], res[2]
    cdef int how = _mode(self, prim, table, mem, [s_src, s_out])
    if how == 0:
        (<Slot>s_src).free()
        (<Slot>s_out).free()
        src = _encode(a) if me >= 0 else _empty()
        res = self._register_many(prim, [src, _empty()], chk, M_OBJECT)
        s_src, s_out, table = res[0], res[1], res[2]
        how = M_OBJECT
    cdef size_t nb
    if how == M_OBJECT:
        (<Slot>s_out).free()
        frames = _fetch(self, prim, <Slot>s_src, table, list(mem) if receives else [])
        return [_decode(f) for f in frames] if receives else None
    nb = (<cnp.ndarray>src).nbytes
    if me >= 0 and nb:
        if receives:
            _copy_block(out, me * nb, src, 0, nb)
        if to_all:
            self._room(prim, P, 0)
            for q in mem:
                if q != self.pid:
                    lpf_put(self._ctx, (<Slot>s_src)._h, 0, q, (<Slot>s_out)._h, me * nb, nb,
                            LPF_MSG_DEFAULT)
            self._nissued += P - 1
        elif self.pid != root:
            lpf_put(self._ctx, (<Slot>s_src)._h, 0, root, (<Slot>s_out)._h, me * nb, nb,
                    LPF_MSG_DEFAULT)
            self._nissued += 1
    (<Slot>s_src).free()
    (<Slot>s_out).free()
    self._lowsync(prim)
    return out if receives else None


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


cdef object _alltoall(Context self, object a, object procs, object outarg):
    cdef str prim = "ctx.alltoall"
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P
    try:
        mem, me = _members(self, prim, procs, None)
        P = len(mem)
        src = _empty()
        if me >= 0:
            src = _plain(a, False)
            if src is None:
                mode = M_OBJECT
                src = _encode_many(_items(self, prim, a, P, "the argument"))
            elif src.ndim == 0 or src.shape[0] != P:
                raise ValueError("%s: the array's first dimension must be len(procs) = %d, "
                                 "shape is %s" % (self._who(prim), P, src.shape))
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    try:
        out = (_out_arg(self, prim, outarg, src.shape, src.dtype, src)
               if (me >= 0 and mode == M_ARRAY) else _empty())
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    cdef int64_t chk = _checkval(4, mem, None, None)
    res = self._register_many(prim, [src, out], chk, mode)
    s_src, s_out, table = res[0], res[1], res[2]
    cdef int how = _mode(self, prim, table, mem, [s_src, s_out])
    if how == 0:
        (<Slot>s_src).free()
        (<Slot>s_out).free()
        src = _encode_many(_items(self, prim, a, P, "the argument")) if me >= 0 else _empty()
        res = self._register_many(prim, [src, _empty()], chk, M_OBJECT)
        s_src, s_out, table = res[0], res[1], res[2]
        how = M_OBJECT
    if how == M_OBJECT:
        (<Slot>s_out).free()
        frames = _fetch_items(self, prim, <Slot>s_src, list(mem) if me >= 0 else [], P,
                              me if me >= 0 else 0)
        return [_decode(f) for f in frames] if me >= 0 else None
    cdef size_t blk = (<cnp.ndarray>src).nbytes // P if me >= 0 else 0
    cdef size_t k
    if me >= 0 and blk:
        _copy_block(out, me * blk, src, me * blk, blk)
        self._room(prim, P, 0)
        for k in range(P):
            if mem[k] != self.pid:
                lpf_put(self._ctx, (<Slot>s_src)._h, k * blk, mem[k], (<Slot>s_out)._h,
                        me * blk, blk, LPF_MSG_DEFAULT)
        self._nissued += P - 1
    (<Slot>s_src).free()
    (<Slot>s_out).free()
    self._lowsync(prim)
    return out if me >= 0 else None


cdef object _scatter(Context self, object a, object root, object procs):
    cdef str prim = "ctx.scatter"
    self._check(prim)
    cdef size_t P
    try:
        mem, me = _members(self, prim, procs, root)
        P = len(mem)
        src = _empty()
        if self.pid == root:
            items = _items(self, prim, a, P, "root's argument")
            if isinstance(a, np.ndarray):
                items = [np.array(x) for x in items]    # rows as arrays of their own
            src = _encode_many(items)
    except Exception:
        _coll_fail(self, prim, 1)
        raise
    res = self._register_many(prim, [src], _checkval(7, mem, root, None), M_OBJECT)
    sl, table = res[0], res[1]
    _mode(self, prim, table, [root], [sl])
    frames = _fetch_items(self, prim, <Slot>sl, [root] if me >= 0 else [], P,
                          me if me >= 0 else 0)
    return _decode(frames[0]) if me >= 0 else None


# ---------------------------------------------------------------- reduce, allreduce

cdef object _reduce(Context self, str prim, object a, object op, object root, object procs,
                    bint all_, object outarg):
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P
    cdef bint scalar = False
    try:
        f = _opfun(self, prim, op)
        mem, me = _members(self, prim, procs, root)
        P = len(mem)
        src = _empty()
        if me >= 0:
            src = _plain(a, True)
            if src is None:
                mode = M_OBJECT
                src = _encode(a)
            else:
                scalar = src.ndim == 0
                if not isinstance(a, np.ndarray):
                    mode = M_SCALAR
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    cdef cnp.ndarray csrc = <cnp.ndarray>src
    cdef size_t n = csrc.size if me >= 0 else 0
    cdef size_t isz = csrc.itemsize
    cdef bint two = (all_ and mode != M_OBJECT and isinstance(op, str) and P > 1 and n >= P
                     and csrc.nbytes >= 65536)
    active = me >= 0 and (all_ or self.pid == root)
    try:
        out = (_out_arg(self, prim, outarg, src.shape, src.dtype, src) if (two and me >= 0)
               else _empty())
        if outarg is not None and active and mode != M_OBJECT and not two:
            _out_arg(self, prim, outarg, src.shape, src.dtype, src)       # the checks
    except Exception:
        _coll_fail(self, prim, 2)
        raise
    cdef int64_t chk = _checkval(5 if all_ else 6, mem, root, op)
    res = self._register_many(prim, [src, out], chk, mode)
    s_src, s_out, table = res[0], res[1], res[2]
    cdef int how = _mode(self, prim, table, mem, [s_src, s_out])
    if how == 0:
        (<Slot>s_src).free()
        (<Slot>s_out).free()
        src = _encode(a) if me >= 0 else _empty()
        res = self._register_many(prim, [src, _empty()], chk, M_OBJECT)
        s_src, s_out, table = res[0], res[1], res[2]
        how = M_OBJECT
    if how == M_OBJECT:
        (<Slot>s_out).free()
        frames = _fetch(self, prim, <Slot>s_src, table, list(mem) if active else [])
        if not active:
            return None
        g = _PYOPS[op] if isinstance(op, str) else op
        acc = _decode(frames[0])
        for fr in frames[1:]:
            acc = g(acc, _decode(fr))
        return acc
    cdef size_t k, lo, hi, ln
    cdef lpf_memslot_t lh
    result = None
    if not two:
        if active and n:
            # a callable op might return one of its arguments: fresh memory then
            buf = (self._scratch(src.dtype, (P, n)) if isinstance(f, np.ufunc)
                   else np.empty((P, n), dtype=src.dtype))
            self._room(prim, P, 1)
            lpf_register_local(self._ctx, _data(buf), buf.nbytes, &lh)
            self._nregs += 1
            self._nregs_peak = max(self._nregs_peak, self._nregs)
            self._tmp.append(lh)
            self._keep.append(buf)
            for k in range(P):
                if mem[k] != self.pid:
                    lpf_get(self._ctx, mem[k], (<Slot>s_src)._h, 0, lh, k * n * isz,
                            n * isz, LPF_MSG_DEFAULT)
            self._nissued += P - 1
        (<Slot>s_src).free()
        (<Slot>s_out).free()
        self._lowsync(prim)
        if active:
            if n:
                rows = [src.reshape(-1) if mem[k] == self.pid else buf[k] for k in range(P)]
                result = _fold(f, rows).reshape(src.shape)
            else:
                result = src.copy()
            if outarg is not None and not scalar:
                outarg[...] = result
                result = outarg
    else:
        # two phases: member k folds block k, then sends it to every member
        lo = (n * me) // P
        hi = (n * (me + 1)) // P
        ln = hi - lo
        buf = self._scratch(src.dtype, (P, ln))
        if ln:
            self._room(prim, P, 1)
            lpf_register_local(self._ctx, _data(buf), buf.nbytes, &lh)
            self._nregs += 1
            self._nregs_peak = max(self._nregs_peak, self._nregs)
            self._tmp.append(lh)
            self._keep.append(buf)
            for k in range(P):
                if mem[k] != self.pid:
                    lpf_get(self._ctx, mem[k], (<Slot>s_src)._h, lo * isz, lh, k * ln * isz,
                            ln * isz, LPF_MSG_DEFAULT)
            self._nissued += P - 1
        self._lowsync(prim)
        flat_src = src.reshape(-1)
        flat_out = out.reshape(-1)
        if ln:
            blk = flat_out[lo:hi]
            rows = [flat_src[lo:hi] if mem[k] == self.pid else buf[k] for k in range(P)]
            blk[...] = rows[0]
            for k in range(1, P):
                f(blk, rows[k], out=blk)
            self._room(prim, P, 0)
            for k in range(P):
                if mem[k] != self.pid:
                    lpf_put(self._ctx, (<Slot>s_out)._h, lo * isz, mem[k], (<Slot>s_out)._h,
                            lo * isz, ln * isz, LPF_MSG_DEFAULT)
            self._nissued += P - 1
        (<Slot>s_src).free()
        (<Slot>s_out).free()
        self._lowsync(prim)
        result = out
    if result is not None and scalar:
        return result.reshape(-1)[0]
    return result


def _fold(f, rows):
    acc = np.array(rows[0], copy=True)
    if isinstance(f, np.ufunc):
        for r in rows[1:]:
            f(acc, r, out=acc)
        return acc
    for r in rows[1:]:
        acc = np.asarray(f(acc, r), dtype=acc.dtype)
    return acc
