# Included by _core.pyx: Python objects as byte frames, for the collectives
# and the messages.
#
# A frame is one uint8 array: a header of int64 words (the number of
# out-of-band buffers, the length of the pickle, each buffer's length), the
# pickle (protocol 5), then each out-of-band buffer, every part starting at a
# multiple of 64 bytes and the frame padded to one. Pickle protocol 5 hands
# large contiguous buffers (NumPy arrays inside the object) to the callback
# instead of copying them into the pickle: they are copied once, into the
# frame, and the receiver's arrays are views of the received frame (no copy
# when unpickling).

cdef enum:
    FRAME_ALIGN = 64

cdef inline size_t _al(size_t n):
    return (n + FRAME_ALIGN - 1) // FRAME_ALIGN * FRAME_ALIGN


cdef object _encode(object obj):
    bufs = []
    main = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    raws = [b.raw() for b in bufs]
    cdef size_t nb = len(raws), hl = 8 * (2 + nb), ml = len(main)
    cdef size_t pos = _al(hl + ml)
    offs = []
    for r in raws:
        offs.append(pos)
        pos = _al(pos + r.nbytes)
    out = np.empty(pos, dtype=np.uint8)
    h = out[:hl].view(np.int64)
    h[0] = nb
    h[1] = ml
    for j in range(nb):
        h[2 + j] = raws[j].nbytes
    out[hl:hl + ml] = np.frombuffer(main, dtype=np.uint8)
    out[hl + ml:_al(hl + ml)] = 0
    for j in range(nb):
        o = offs[j]
        n = raws[j].nbytes
        if n:
            out[o:o + n] = np.frombuffer(raws[j], dtype=np.uint8)
    return out


cdef object _decode(object frame):
    """The object of a frame (a uint8 array); its arrays are views of frame."""
    h = frame[:16].view(np.int64)
    cdef size_t nb = <size_t>h[0], ml = <size_t>h[1], hl = 8 * (2 + nb)
    lens = frame[16:hl].view(np.int64)
    cdef size_t pos = _al(hl + ml)
    bufs = []
    for j in range(nb):
        n = int(lens[j])
        bufs.append(frame[pos:pos + n])
        pos = _al(pos + n)
    return pickle.loads(frame[hl:hl + ml], buffers=bufs)


cdef object _encode_many(list items):
    """Several objects in one buffer (alltoall, scatter): int64 offsets of the
    P frames and of their end, then the frames."""
    frames = [_encode(x) for x in items]
    cdef size_t P = len(frames)
    cdef size_t pos = _al(8 * (P + 1))
    offs = np.empty(P + 1, dtype=np.int64)
    for j in range(P):
        offs[j] = pos
        pos += frames[j].nbytes
    offs[P] = pos
    out = np.empty(pos, dtype=np.uint8)
    out[:8 * (P + 1)] = offs.view(np.uint8)
    out[8 * (P + 1):_al(8 * (P + 1))] = 0
    for j in range(P):
        out[offs[j]:offs[j + 1]] = frames[j]
    return out
