# Included by _core.pyx after _coll.pxi: reduce and allreduce.

# ---------------------------------------------------------------- reduce, allreduce

cdef int _reduce_puts(Context self, object src, list mem, object root, size_t me, size_t n,
                      size_t isz, bint all_, bint two) except -1:
    cdef lpf_memslot_t h
    cdef size_t k, P = len(mem), nb = n * isz, L, lo, hi
    if nb == 0 or (not all_ and not two and self.pid == root):
        return 0
    h = _reg_local(self, src)
    if two:
        L = (n + P - 1) // P
        for k in range(P):
            lo = (n * k) // P
            hi = (n * (k + 1)) // P
            if mem[k] != self.pid and hi > lo:
                lpf_put(self._ctx, h, lo * isz, <lpf_pid_t>mem[k], self._gbuf_h, me * L * isz,
                        (hi - lo) * isz, LPF_MSG_DEFAULT)
                self._nissued += 1
    elif all_:
        for q in mem:
            if q != self.pid:
                lpf_put(self._ctx, h, 0, <lpf_pid_t>q, self._gbuf_h, me * nb, nb,
                        LPF_MSG_DEFAULT)
        self._nissued += P - 1
    else:
        lpf_put(self._ctx, h, 0, <lpf_pid_t>root, self._gbuf_h, me * nb, nb, LPF_MSG_DEFAULT)
        self._nissued += 1
    return 0


cdef object _reduce(Context self, str prim, object a, object op, object root, object procs,
                    bint all_, object outarg):
    self._check(prim)
    cdef int mode = M_ARRAY
    cdef size_t P = 0, n = 0, isz = 0, nb = 0, ume = 0, L = 0, need = 0, k
    cdef bint scalar = False, two = False, active = False
    out = None
    try:
        f = _opfun(self, prim, op)
        mem, me = _members(self, prim, procs, root)
        P = len(mem)
        src = _empty()
        frame = src
        if me >= 0:
            ume = me
            src = _plain(a, True)
            if src is not None and type(a) is int and not _int_fast(a, op, P):
                src = None      # Python ints whose fold may leave int64: exact, as objects
            if src is None:
                mode = M_OBJECT
                frame = _encode(a)
                src = _empty()
            else:
                scalar = cnp.PyArray_NDIM(<cnp.ndarray>src) == 0
                if not cnp.PyArray_Check(a):
                    mode = M_SCALAR
                n = cnp.PyArray_SIZE(<cnp.ndarray>src)
                isz = cnp.PyArray_ITEMSIZE(<cnp.ndarray>src)
                nb = n * isz
        active = me >= 0 and (all_ or self.pid == root)
        two = (me >= 0 and mode != M_OBJECT and isinstance(op, str) and P > 1
               and n >= P and nb >= _TWO_MIN)
        if active and mode != M_OBJECT and outarg is not None:
            out = _out_like(self, prim, outarg, src, -1)
    except Exception:
        _a_fail(self, prim)
        raise
    cdef int64_t chk = _chk(self, 5 if all_ else 6, procs, mem, root, op)
    if two:
        L = (n + P - 1) // P
        need = P * L * isz
        if active and out is None:
            out = np.empty(src.shape, dtype=src.dtype)
    elif me >= 0:
        need = P * nb
    # in two phases the result is registered too: the others put their
    # blocks straight into it
    cdef bint send = _a_begin(self, prim, frame, src if mode != M_OBJECT else None, chk, mode,
                              need, P, None, two, out if (two and active) else None)
    cdef sstep_py_post po
    cdef sstep_py_post *pp = NULL
    cdef int kind = 0
    cdef size_t lo, hi, ln, klo, khi
    if send and me >= 0:
        _reduce_puts(self, src, mem, root, ume, n, isz, all_, two)
        if procs is None:
            pp = _post(self, &po, chk, 0)
            if isinstance(op, str) and n and P > 1 and (two or active):
                kind = _fold_kind(src)
            if kind:
                # the fold in C right after the sync (sstep_py.h)
                if two:
                    # block ume: into the result, or at reduce's other
                    # members into the collective buffer (whence it is put
                    # into root's result)
                    lo = (n * ume) // P
                    hi = (n * (ume + 1)) // P
                    for k in range(P):
                        self._fsrc[k] = (_data(<cnp.ndarray>src) + lo * isz if k == ume
                                         else _gdata(self) + k * L * isz)
                    self._fold.n = hi - lo
                    self._fold.also = NULL
                    if active:
                        self._fold.dst = _data(<cnp.ndarray>out) + lo * isz
                    else:
                        self._fold.dst = _gdata(self) + ume * L * isz
                else:
                    for k in range(P):
                        self._fsrc[k] = (_data(<cnp.ndarray>src) if k == ume
                                         else _gdata(self) + k * nb)
                    self._fold.n = n
                    if out is None or scalar:   # a number: never into out=
                        cres = np.empty(src.shape, dtype=src.dtype)
                    else:
                        cres = out
                    self._fold.dst = _data(<cnp.ndarray>cres)
                    self._fold.also = NULL
                self._fold.op = _OPCODE[op]
                self._fold.kind = kind
                self._fold.src = self._fsrc
                self._fold.nsrc = P
                po.fold = &self._fold
    cdef bint done = _a_end(self, prim, pp, two)
    cdef bint cfold = done and kind != 0
    if cfold and not two:
        return cres.reshape(-1)[0] if scalar else cres
    cdef lpf_memslot_t h
    cdef int how = M_ARRAY
    cdef bint two_all = two if done else (<int64_t *>cnp.PyArray_DATA(self._meta))[
        <size_t>mem[0] * META + C_FLAG] != 0
    if not done and (mode == M_OBJECT or not _fast_ok(self, mem, chk)):
        table = _a_table(self)
        how = _a_check(self, prim, table, mem)
        if how == M_ARRAY:
            _a_drop(self)
            if not _all_sent(table):
                _grow(self, prim, table)
                if me >= 0:
                    self._room(prim, P, 1)
                    _reduce_puts(self, src, mem, root, ume, n, isz, all_, two)
                self._lowsync(prim)
    if how == M_ARRAY:
        if two_all:
            # two phases: member k folds block k (into its result, or at
            # reduce's other members into its collective buffer); every
            # member of allreduce, or reduce's root, receives the others'
            # blocks straight into its result: put by them when the first
            # superstep completed the call (it registered the results), else
            # got from their collective buffers
            if me >= 0:
                lo = (n * ume) // P
                hi = (n * (ume + 1)) // P
                ln = hi - lo
                if ln and not cfold:
                    flat_src = src.reshape(-1)
                    blk = _gview(self, ume * L * isz, ln, src.dtype)
                    rows = [flat_src[lo:hi] if mem[k] == self.pid
                            else _gview(self, k * L * isz, ln, src.dtype) for k in range(P)]
                    ob = out.reshape(-1)[lo:hi] if active else blk
                    f(rows[0], rows[1], out=ob)
                    for k in range(2, P):
                        f(ob, rows[k], out=ob)
                    if all_ and not done:
                        np.copyto(blk, ob)
                if done:
                    # the others' results are registered (the first superstep's
                    # second buffer): block ume straight into them
                    self._room(prim, P, 0)
                    for k in range(P):
                        if mem[k] != self.pid and ln and (all_ or mem[k] == root):
                            if active:
                                lpf_put(self._ctx, self._afh2, lo * isz, <lpf_pid_t>mem[k],
                                        self._afh2, lo * isz, ln * isz, LPF_MSG_DEFAULT)
                            else:
                                lpf_put(self._ctx, self._gbuf_h, ume * L * isz,
                                        <lpf_pid_t>mem[k], self._afh2, lo * isz, ln * isz,
                                        LPF_MSG_DEFAULT)
                            self._nissued += 1
                elif active:
                    self._room(prim, P, 1)
                    h = _reg_local(self, out)
                    for k in range(P):
                        klo = (n * k) // P
                        khi = (n * (k + 1)) // P
                        if mem[k] != self.pid and khi > klo:
                            lpf_get(self._ctx, <lpf_pid_t>mem[k], self._gbuf_h, k * L * isz, h,
                                    klo * isz, (khi - klo) * isz, LPF_MSG_DEFAULT)
                            self._nissued += 1
            self._lowsync(prim)
            if done:
                _a_drop(self)
            return out if active else None
        if not active:
            return None
        if n == 0:
            result = out if (out is not None and not scalar) else src.copy()
        elif isinstance(f, np.ufunc):
            rows = [src.reshape(-1) if mem[k] == self.pid
                    else _gview(self, k * nb, n, src.dtype) for k in range(P)]
            if out is not None and not scalar:
                acc = out.reshape(-1)
                result = out
            else:
                acc = np.empty(n, dtype=src.dtype)
                result = acc.reshape(src.shape)
            if P == 1:
                np.copyto(acc, rows[0])
            else:
                f(rows[0], rows[1], out=acc)
                for k in range(2, P):
                    f(acc, rows[k], out=acc)
        else:
            # a callable op might return one of its arguments: rows of their own
            rows = [src.reshape(-1) if mem[k] == self.pid
                    else _gview(self, k * nb, n, src.dtype).copy() for k in range(P)]
            result = _fold(f, rows).reshape(src.shape)
            if out is not None and not scalar:
                out[...] = result
                result = out
        if scalar:
            return result.reshape(-1)[0]
        return result
    if how == 0:
        _a_drop(self)
        src = _encode(a) if me >= 0 else _empty()
        res = self._register_many(prim, [src], chk, M_OBJECT)
        sl, table = res[0], res[1]
    else:
        sl = _a_slot(self, frame, table)
    frames = _fetch(self, prim, <Slot>sl, table, list(mem) if active else [])
    if not active:
        return None
    g = _PYOPS[op] if isinstance(op, str) else op
    acc = _decode(frames[0])
    for fr in frames[1:]:
        acc = g(acc, _decode(fr))
    return acc


cdef bint _int_fast(object a, object op, size_t P):
    """A Python int that the int64 fold of `op` over P members gives exactly
    whatever the others pass (each process decides alone: the others may
    pass ints that go as objects, and the collective then folds objects)."""
    if op == "min" or op == "max":
        return -(1 << 63) <= a < (1 << 63)
    if op == "sum":
        lim = ((1 << 63) - 1) // (P if P > 0 else 1)
        return -lim <= a <= lim
    return False


def _fold(f, rows):
    acc = np.array(rows[0], copy=True)
    if isinstance(f, np.ufunc):
        for r in rows[1:]:
            f(acc, r, out=acc)
        return acc
    for r in rows[1:]:
        acc = np.asarray(f(acc, r), dtype=acc.dtype)
    return acc


cdef int _fold_kind(object a):
    """The kind of the C fold (sstep_py.h) for the array a's dtype, or 0 when
    NumPy folds it (bool, complex, half, other byte orders...)."""
    cdef cnp.ndarray x = <cnp.ndarray>a
    cdef int t = cnp.PyArray_TYPE(x)
    cdef int isz = cnp.PyArray_ITEMSIZE(x)
    if not cnp.PyArray_ISNOTSWAPPED(x):
        return 0
    if t == cnp.NPY_DOUBLE:
        return 1
    if t == cnp.NPY_FLOAT:
        return 2
    if (t == cnp.NPY_BYTE or t == cnp.NPY_SHORT or t == cnp.NPY_INT or t == cnp.NPY_LONG
            or t == cnp.NPY_LONGLONG):
        return 3 if isz == 8 else 4 if isz == 4 else 5 if isz == 2 else 6 if isz == 1 else 0
    if (t == cnp.NPY_UBYTE or t == cnp.NPY_USHORT or t == cnp.NPY_UINT or t == cnp.NPY_ULONG
            or t == cnp.NPY_ULONGLONG):
        return 7 if isz == 8 else 8 if isz == 4 else 9 if isz == 2 else 10 if isz == 1 else 0
    return 0
