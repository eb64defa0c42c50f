# Included by _core.pyx: the helpers of the collectives on Python objects
# (operators, numbers, broadcast, scans).

cdef object _mpi_op(object op):
    """mpi4py's MPI.SUM, PROD, MIN and MAX as the names of the ops."""
    if isinstance(op, str) or op is None:
        return op
    m = sys.modules.get("mpi4py.MPI")
    if m is not None:
        for name, key in (("SUM", "sum"), ("PROD", "prod"), ("MIN", "min"), ("MAX", "max")):
            try:
                if op == getattr(m, name):
                    return key
            except Exception:
                pass
    return op


cdef object _py_number(object a, object r):
    """A Python int or float in, a Python int or float out (as mpi4py's
    lower-case calls give), not a NumPy scalar."""
    if r is None:
        return r
    if type(a) is int and isinstance(r, np.integer):
        return int(r)
    if type(a) is float and isinstance(r, np.floating):
        return float(r)
    return r


cdef object _bcast(Context self, object obj, object root, object procs):
    """ctx.bcast: arrays at root (and subsets) as ctx.broadcast; any other
    object as its pickle: root broadcasts its size, then its bytes, each
    through the collectives' array path (one superstep each)."""
    if procs is not None or cnp.PyArray_Check(obj):
        return _broadcast(self, obj, root, procs)
    cdef bint isroot = False
    try:
        isroot = self.pid == root
    except Exception:
        pass
    hdr = np.zeros(1, dtype=np.int64)
    data = None
    err = None
    if isroot:
        if cnp.PyArray_Check(obj):
            hdr[0] = -1
        else:
            try:
                data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
                hdr[0] = len(data)
            except Exception as e:
                err = e
                hdr[0] = -2
    _broadcast(self, hdr, root, None)
    n = int(hdr[0])
    if n == -1:
        return _broadcast(self, obj, root, None)
    if n == -2:
        if err is not None:
            raise err
        raise SuperstepError("%s: the root (process %d) could not pickle its object"
                             % (self._who("ctx.bcast"), root))
    buf = np.frombuffer(bytearray(data), dtype=np.uint8) if isroot else \
        np.empty(n, dtype=np.uint8)
    _broadcast(self, buf, root, None)
    if isroot:
        return obj
    return pickle.loads(buf)


cdef object _scan(Context self, str prim, object a, object op, object procs, bint ex):
    op = _mpi_op(op)
    _opfun(self, prim, op)
    if procs is None:
        me = self.pid
    else:
        try:
            mem = [int(q) for q in procs]
        except TypeError:
            raise TypeError("%s: procs must be a sequence of pids (or None for all)"
                            % self._who(prim))
        me = mem.index(self.pid) if self.pid in mem else -1
    rows = self.allgather(a, procs=procs)
    if rows is None or me < 0:
        return None
    n = me if ex else me + 1
    if n == 0:
        return None
    if type(a) is int or type(a) is float:
        # Python numbers: each value travelled alone (int64, float64, or an
        # object beyond int64), the fold is Python's: exact, as in mpi4py
        conv = int if type(a) is int else float
        vals = [conv(v) if isinstance(v, (np.generic, np.ndarray)) else v for v in rows[:n]]
        g = _PYOPS[op] if isinstance(op, str) else op
        acc = vals[0]
        for v in vals[1:]:
            acc = g(acc, v)
        return acc
    if isinstance(rows, np.ndarray):
        acc = _scan_rows(self, prim, op, rows, n)
        return acc[()] if acc.ndim == 0 else acc
    g = _PYOPS[op] if isinstance(op, str) else op
    acc = rows[0]
    for v in rows[1:n]:
        acc = g(acc, v)
    return acc


cdef object _scan_rows(Context self, str prim, object op, object rows, size_t n):
    f = _opfun(self, prim, op)
    acc = np.array(rows[0], copy=True)
    for k in range(1, n):
        if isinstance(f, np.ufunc):
            f(acc, rows[k], out=acc)
        else:
            acc = np.asarray(f(acc, rows[k]), dtype=acc.dtype)
    return acc
