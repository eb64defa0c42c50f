# Included by _core.pyx: the C library's fatal reports as superstep.BSPError,
# in Python terms (arrays, slots, element offsets instead of addresses,
# slot numbers and bytes).

import re as _re

sstep_py_install_hook()

_C_NAMES = {"lpf_put": "ctx.put", "lpf_get": "ctx.get", "lpf_sync": "ctx.sync",
            "lpf_register_global": "ctx.register", "lpf_deregister": "slot.free"}

_RE_SRC = _re.compile(
    r"the source of a put issued in superstep (\d+) \(to process (\d+), global slot (\d+), "
    r"offset (\d+), (\d+) bytes, source (0x[0-9a-f]+|\(nil\))\) was written after the call "
    r"and before the sync.*")
_RE_RANGE = _re.compile(r"bytes \[(\d+), (\d+)\) of (global|local) slot (\d+) "
                        r"\((0x[0-9a-f]+), (\d+) bytes\)")
_RE_SLOT = _re.compile(r"(global|local) slot (\d+) \((0x[0-9a-f]+), (\d+) bytes\)")
_RE_REQ = _re.compile(r"\(global slot (\d+), offset (\d+), (\d+) bytes( in adjacent requests)?\)")


cdef str _arr_text(object a, str what):
    s = "%s array of shape %s" % (a.dtype, a.shape)
    if what == "ctx.register":
        return s + ", registered by ctx.register,"
    if what:
        return s + ", a buffer of %s," % what
    return s


cdef tuple _find(Context ctx, size_t addr, object slot_index):
    """(array, what) of this process whose memory holds addr, else (None, '')."""
    cands = []
    if ctx._named is not None:
        if slot_index is not None and slot_index in ctx._named:
            cands.append(ctx._named[slot_index])
        cands.extend(ctx._named.values())
    if ctx._keep is not None:
        cands.extend((a, "") for a in ctx._keep)
    cdef size_t lo, n
    for a, what in cands:
        if not isinstance(a, np.ndarray):
            continue
        lo = <size_t>cnp.PyArray_DATA(<cnp.ndarray>a)
        n = (<cnp.ndarray>a).nbytes
        if lo <= addr < lo + max(n, 1):
            return a, what
    return None, ""


cdef str _elems(object a, size_t b0, size_t b1):
    cdef size_t isz = a.itemsize if a is not None else 1
    if a is None or b0 % isz or b1 % isz:
        return "bytes [%d, %d)" % (b0, b1)
    return "elements [%d, %d)" % (b0 // isz, b1 // isz)


cdef str _translate(Context ctx, str msg):
    m = _RE_SRC.match(msg)
    if m:
        step, dst, slot, off, size, src = m.groups()
        a, what = _find(ctx, int(src, 16) if src.startswith("0x") else 0, None)
        s_arr, s_what = (ctx._named.get(int(slot), (None, "")) if ctx._named is not None
                         else (None, ""))
        isz = s_arr.itemsize if s_arr is not None else 1
        dest = ("%s of the slot at process %s (here the %s)" % (
                    _elems(s_arr, int(off), int(off) + int(size)), dst,
                    _arr_text(s_arr, s_what).rstrip(","))
                if s_arr is not None else "global slot %s, offset %s bytes at process %s"
                % (slot, off, dst))
        return ("checked mode: the source of a ctx.put (%s, %d elements) to %s was changed "
                "after ctx.put and before the sync. ctx.put does not copy its source: the "
                "data leave at the sync. Do not change the source until then, or pass "
                "copy=True" % (_arr_text(a, "") if a is not None else "an array",
                               int(size) // isz, dest))

    def rng(mm):
        b0, b1, kind, idx, addr, nb = mm.groups()
        a, what = _find(ctx, int(addr, 16), int(idx) if kind == "global" else None)
        if a is None:
            return mm.group(0)
        return "%s of the %s" % (_elems(a, int(b0), int(b1)), _arr_text(a, what))

    def slt(mm):
        kind, idx, addr, nb = mm.groups()
        a, what = _find(ctx, int(addr, 16), int(idx) if kind == "global" else None)
        return mm.group(0) if a is None else "the " + _arr_text(a, what)

    def req(mm):
        idx, off, nb, adj = mm.groups()
        a, what = (ctx._named.get(int(idx), (None, "")) if ctx._named is not None
                   else (None, ""))
        if a is None:
            return mm.group(0)
        return "(%s of the slot that is here the %s%s)" % (
            _elems(a, int(off), int(off) + int(nb)), _arr_text(a, what).rstrip(","),
            adj or "")

    msg = _RE_REQ.sub(req, msg)
    msg = _RE_RANGE.sub(rng, msg)
    msg = _RE_SLOT.sub(slt, msg)
    for c, py in _C_NAMES.items():
        msg = msg.replace(c, py)
    return msg


cdef object _bsp_error_from_report(Context ctx, str prim):
    """This thread's report (the library's fatal hook copied it) as a BSPError."""
    cdef const sstep_py_report *r = sstep_py_last_report()
    cmsg = (<bytes>r.message).decode("utf-8", "replace")
    cprim = (<bytes>r.primitive).decode("utf-8", "replace")
    try:
        text = _translate(ctx, cmsg)
    except Exception:
        text = cmsg
    pyprim = _C_NAMES.get(cprim, prim)
    return BSPError("%s (process %d of %d): %s" % (pyprim, r.pid, r.nprocs, text),
                    pid=r.pid, nprocs=r.nprocs, primitive=pyprim, c_message=cmsg)


cdef object _bsp_error_here(object e, Context ctx, str prim):
    """The run's BSPError as raised in another process: the same facts."""
    text = str(e)
    if e.pid != ctx.pid:
        text = "%s: the run failed: %s" % (ctx._who(prim), text)
    return BSPError(text, pid=e.pid, nprocs=e.nprocs, primitive=e.primitive,
                    c_message=e.c_message)
