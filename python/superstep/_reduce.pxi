# Included by _core.pyx after _coll.pxi: reduce and allreduce.

# ---------------------------------------------------------------- reduce, allreduce

cdef int _reduce_puts(Context self, object src, list mem, object root, size_t me, size_t n,
                      size_t isz, bint all_, bint two) except -1:
    cdef lpf_memslot_t h
    cdef size_t k, P = len(mem), nb = n * isz, L, lo, hi
    if nb == 0 or (not all_ and self.pid == root):
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
            if src is None:
                mode = M_OBJECT
                frame = _encode(a)
                src = _empty()
            else:
                scalar = src.ndim == 0
                if not isinstance(a, np.ndarray):
                    mode = M_SCALAR
                n = (<cnp.ndarray>src).size
                isz = (<cnp.ndarray>src).itemsize
                nb = n * isz
        active = me >= 0 and (all_ or self.pid == root)
        two = (all_ and me >= 0 and mode != M_OBJECT and isinstance(op, str) and P > 1
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
    elif me >= 0:
        need = P * nb
    cdef bint send = _a_begin(self, prim, frame, src if mode != M_OBJECT else None, chk, mode,
                              need, P, None, two)
    cdef sstep_py_post po
    cdef sstep_py_post *pp = NULL
    if send and me >= 0:
        _reduce_puts(self, src, mem, root, ume, n, isz, all_, two)
        if procs is None:
            pp = _post(self, &po, chk, 0)
    cdef bint done = _a_end(self, prim, pp)
    cdef size_t lo, hi, ln, klo, khi
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
            # two phases: member k folded block k in its collective buffer;
            # every member gets the others' blocks straight into its result
            if me >= 0:
                if out is None:
                    out = np.empty(src.shape, dtype=src.dtype)
                lo = (n * ume) // P
                hi = (n * (ume + 1)) // P
                ln = hi - lo
                flat_src = src.reshape(-1)
                flat_out = out.reshape(-1)
                if ln:
                    blk = _gview(self, ume * L * isz, ln, src.dtype)
                    rows = [flat_src[lo:hi] if mem[k] == self.pid
                            else _gview(self, k * L * isz, ln, src.dtype) for k in range(P)]
                    ob = flat_out[lo:hi]
                    f(rows[0], rows[1], out=ob)
                    for k in range(2, P):
                        f(ob, rows[k], out=ob)
                    np.copyto(blk, ob)
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
            return out if me >= 0 else None
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


def _fold(f, rows):
    acc = np.array(rows[0], copy=True)
    if isinstance(f, np.ufunc):
        for r in rows[1:]:
            f(acc, r, out=acc)
        return acc
    for r in rows[1:]:
        acc = np.asarray(f(acc, r), dtype=acc.dtype)
    return acc
