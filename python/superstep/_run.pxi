# The engine and the run: which engine, MPI set-up, superstep.run on threads,
# MPI ranks, hybrid ranks of threads, over a communicator or a TCP meeting.
# Included by _core.pyx at this place (its declarations come before).

# ---------------------------------------------------------------------------
# Engine state
# ---------------------------------------------------------------------------

cdef object _g_run = None            # the run in progress (runs are serialised)
_run_lock = threading.RLock()
_tls = threading.local()
cdef lpf_init_t _mpi_init = NULL
cdef int _mpi_rank = 0
cdef int _mpi_size = 1
cdef bint _mpi_ready = False
cdef object _app_lock = threading.Lock()

_CHECKED = os.environ.get("SUPERSTEP_CHECK", "0") not in ("", "0")
_NCORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_OPS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
_OPCODE = {"sum": 1, "prod": 2, "min": 3, "max": 4}


def engine():
    """'mpi' or 'hybrid' when SUPERSTEP_ENGINE says so (as bsprun --engine sets
    it), else 'pthread'."""
    if sstep_py_engine_is_hybrid():
        return "hybrid"
    return "mpi" if sstep_py_engine_is_mpi() else "pthread"


def have_mpi():
    return bool(sstep_py_have_mpi())


def have_fft():
    return bool(sstep_py_have_fft())


cdef _mpi_setup():
    global _mpi_init, _mpi_rank, _mpi_size, _mpi_ready
    if _mpi_ready:
        return
    if not sstep_py_have_mpi():
        raise SuperstepError("SUPERSTEP_ENGINE=mpi but this superstep was built without "
                             "the MPI engine")
    cdef int r = 0, s = 1
    if sstep_py_mpi_init(&_mpi_init, &r, &s) != 0:
        raise SuperstepError("superstep: could not initialise MPI (lpf_mpi_initialize_with_mpicomm)")
    _mpi_rank = r
    _mpi_size = s
    _mpi_ready = True
    atexit.register(_mpi_finalize)


def _mpi_finalize():
    global _mpi_init, _mpi_ready
    if _mpi_ready:
        sys.stdout.flush()
        sys.stderr.flush()
        sstep_py_mpi_finalize(_mpi_init)
        _mpi_init = NULL
        _mpi_ready = False


def _in_run():
    """The Context of the SPMD function this thread runs, else None."""
    return getattr(_tls, "ctx", None)


def mpi_world():
    """(rank, size) of MPI_COMM_WORLD on the MPI and hybrid engines (initialising
    MPI), else (0, 1)."""
    if not (sstep_py_engine_is_mpi() or sstep_py_engine_is_hybrid()):
        return (0, 1)
    _mpi_setup()
    return (_mpi_rank, _mpi_size)


cdef class _Run:
    cdef public object fn, args, kwargs, result, exc, lock, fatal
    cdef public int exc_pid, exc_nprocs
    cdef public bint aborted, mpi, noabort
    cdef public int T          # threads per rank (hybrid engine), else 1

    def __init__(self, fn, args, kwargs, mpi):
        self.T = 1
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.result = None
        self.exc = None
        self.fatal = None         # the first BSPError of the run
        self.lock = threading.Lock()
        self.exc_pid = -1
        self.aborted = False
        self.mpi = mpi
        self.noabort = False

    def fail(self, int pid, int nprocs, e):
        cdef bint first
        with self.lock:
            first = (self.exc is None and not isinstance(e, Aborted)
                     and not (self.aborted and isinstance(e, SyncError)))
            self.aborted = True
            if first:
                self.exc = e
                self.exc_pid = pid
                self.exc_nprocs = nprocs
        if not first:
            return
        text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        sys.stdout.flush()
        sys.stderr.write("superstep: process %d of %d: uncaught exception in the SPMD "
                         "function; the run ends\n%s" % (pid, nprocs, text))
        sys.stderr.flush()
        if self.mpi and not self.noabort and not isinstance(e, (SyncError, BSPError)):
            # every rank ends now, also one in a long local computation (a
            # BSPError ends the run as a failed sync does: the other ranks'
            # syncs fail and raise the same BSPError, whose facts were sent)
            sstep_py_mpi_abort(1)


cdef void _c_spmd(lpf_t lctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args) noexcept nogil:
    with gil:
        sstep_py_enter()
        _spmd_body(lctx, pid, nprocs)
        sstep_py_leave()


cdef int _spmd_body(lpf_t lctx, lpf_pid_t pid, lpf_pid_t nprocs) noexcept:
    cdef _Run run = <_Run>_g_run
    cdef Context ctx = Context.__new__(Context)
    ctx._run = run
    ctx._ctx = lctx
    ctx.pid = pid
    ctx.nprocs = nprocs
    prev = getattr(_tls, "ctx", None)
    _tls.ctx = ctx
    try:
        try:
            ctx._setup()
            res = run.fn(ctx, *run.args, **run.kwargs)
            # on MPI: each rank's own process (hybrid: its first thread)
            if pid == 0 or (run.mpi and pid % run.T == 0):
                run.result = res
        except BaseException as e:
            run.fail(pid, nprocs, e)
    finally:
        ctx._valid = False
        ctx._drop()
        _tls.ctx = prev
    return 0


def _hybrid_run(_Run r, p):
    """bsprun --engine hybrid -n R*T -t T python3 prog.py: every rank runs the
    script; its T threads (this one and T-1 started here) hook into one run
    over all R*T threads, pids rank-major."""
    _mpi_setup()
    cdef unsigned T = sstep_py_hybrid_threads()
    if p is not None and p < _mpi_size * T:
        raise ValueError("superstep.run: p=%d but the hybrid job has %d ranks of %d threads "
                         "(bsprun -n, -t), and a run spans all of them; use p=None"
                         % (p, _mpi_size, T))
    r.T = T
    rcs = [LPF_SUCCESS] * T

    def member(unsigned t):
        cdef lpf_err_t x
        cdef int rank = _mpi_rank, size = _mpi_size
        with nogil:
            x = sstep_py_hybrid_hook(_mpi_init, t, T, rank, size, _c_spmd)
        rcs[t] = x

    threads = [threading.Thread(target=member, args=(t,)) for t in range(1, T)]
    for th in threads:
        th.start()
    member(0)
    for th in threads:
        th.join()
    for x in rcs:
        if x != LPF_SUCCESS:
            return x
    return LPF_SUCCESS


def _run_result(_Run r, lpf_err_t rc, str why):
    """What run() gives its caller once the section is over: the exception a
    process raised, SyncError when the section failed, else the result."""
    if r.exc is not None:
        e = r.exc
        try:
            e.add_note("superstep: raised by process %d of %d (traceback printed above)"
                       % (r.exc_pid, r.exc_nprocs))
        except AttributeError:
            pass
        raise e.with_traceback(None)
    if rc != LPF_SUCCESS:
        raise SyncError("superstep.run: the SPMD section failed (LPF_ERR_FATAL): processes "
                        "called sync a different number of times, " + why)
    return r.result


def run(spmd, p=None, args=(), kwargs=None, *, comm=None, meet=None, pid=None, nprocs=None,
        timeout=60.0):
    """Run spmd(ctx, *args, **kwargs) on p processes and return process 0's result.

    On the pthread engine the processes are threads of this Python process
    (p=None: one per core, LPF_MAX_PROCS caps it). Under
    ``bsprun --engine mpi -n P python3 prog.py`` every rank runs the script
    and run() spans the P ranks (p must be None or P).

    comm: an mpi4py communicator; the run spans its processes (each calls
    run with its comm). meet=(host, port), pid=k, nprocs=n: n processes
    started by someone else meet over TCP at process 0's (host, port)
    within `timeout` seconds (docs/mpi.md). In both cases each process's
    run() returns its own result, and an exception ends only the process
    that raised it (the others get SyncError at their next sync).
    """
    global _g_run
    if not callable(spmd):
        raise TypeError("superstep.run: spmd must be callable, got %r" % (type(spmd).__name__,))
    if comm is not None or meet is not None:
        return _run_joined(spmd, p, args, kwargs, comm, meet, pid, nprocs, timeout)
    if pid is not None or nprocs is not None:
        raise ValueError("superstep.run: pid and nprocs go with meet=(host, port)")
    if p is not None:
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or p < 1:
            raise ValueError("superstep.run: p must be a positive int or None, got %r" % (p,))
    if getattr(_tls, "ctx", None) is not None:
        raise SuperstepError("superstep.run: called inside an SPMD function (nested runs "
                             "are not supported)")
    if not isinstance(args, tuple):
        args = tuple(args)
    cdef bint hybrid = sstep_py_engine_is_hybrid()
    cdef bint mpi = sstep_py_engine_is_mpi() or hybrid
    cdef lpf_err_t rc
    cdef lpf_pid_t P
    cdef _Run r = _Run(spmd, args, kwargs or {}, mpi)
    with _run_lock:
        _g_run = r
        try:
            if hybrid:
                rc = _hybrid_run(r, p)
            elif mpi:
                _mpi_setup()
                # p is an upper bound, as on threads (and in lpf_exec)
                if p is not None and p < _mpi_size:
                    raise ValueError("superstep.run: p=%d but the MPI job has %d ranks "
                                     "(bsprun -n), and a run spans all of them; use "
                                     "p=None" % (p, _mpi_size))
                _note_begin(0, 0)
                try:
                    with nogil:
                        rc = lpf_hook(_mpi_init, _c_spmd, LPF_NO_ARGS)
                finally:
                    sstep_py_note_end()
            else:
                P = LPF_MAX_P if p is None else <lpf_pid_t>p
                with nogil:
                    rc = lpf_exec(LPF_ROOT, P, _c_spmd, LPF_NO_ARGS)
        finally:
            _g_run = None
    return _run_result(r, rc, "or returned early")


def _run_joined(spmd, p, args, kwargs, comm, meet, pid, nprocs, timeout):
    """run() over an mpi4py communicator or a TCP meeting (one lpf_hook)."""
    global _g_run
    cdef lpf_init_t init = NULL
    cdef int rcinit
    cdef lpf_err_t rc
    cdef long long fh
    cdef bytes bhost, bport
    cdef const char *chost
    cdef const char *cport
    cdef int tmo
    cdef unsigned k, n
    if comm is not None and meet is not None:
        raise ValueError("superstep.run: give comm or meet, not both")
    if p is not None:
        raise ValueError("superstep.run: p goes with threads; with comm or meet the run spans "
                         "the communicator's or the meeting's processes")
    if getattr(_tls, "ctx", None) is not None:
        raise SuperstepError("superstep.run: called inside an SPMD function (nested runs "
                             "are not supported)")
    if not sstep_py_have_mpi():
        raise SuperstepError("superstep.run: comm and meet need the MPI engine, and this "
                             "superstep was built without it")
    if comm is not None:
        try:
            fh = comm.py2f()
        except AttributeError:
            raise TypeError("superstep.run: comm must be an mpi4py communicator, got %s"
                            % type(comm).__name__)
        rcinit = sstep_py_comm_init(fh, &init)
        if rcinit == -2:
            raise SuperstepError("superstep.run: MPI is not initialised (import mpi4py.MPI "
                                 "first)")
        if rcinit != 0:
            raise SuperstepError("superstep.run: lpf_mpi_initialize_with_mpicomm failed on "
                                 "this communicator")
    else:
        try:
            host, port = meet
        except (TypeError, ValueError):
            raise TypeError("superstep.run: meet must be (host, port), got %r" % (meet,))
        for name, v in (("pid", pid), ("nprocs", nprocs)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
                raise ValueError("superstep.run: meet needs pid and nprocs (ints), got %s=%r"
                                 % (name, v))
        if nprocs < 1 or pid >= nprocs:
            raise ValueError("superstep.run: pid %d is out of range (nprocs %d)" % (pid, nprocs))
        bhost = str(host).encode()
        bport = str(port).encode()
        chost = bhost
        cport = bport
        tmo = int(max(0.0, float(timeout)) * 1000)
        k = pid
        n = nprocs
        sys.stdout.flush()
        sys.stderr.flush()
        with nogil:
            rcinit = sstep_py_meet_init(chost, cport, tmo, k, n, &init)
        if rcinit != 0:
            raise SuperstepError("superstep.run: process %d of %d: the meeting at %s:%s "
                                 "failed (the line above says why)" % (pid, nprocs, host, port))
        global _meet_atexit
        if not _meet_atexit:
            atexit.register(sstep_py_mpi_finalize_atexit)
            _meet_atexit = True
    if not isinstance(args, tuple):
        args = tuple(args)
    cdef _Run r = _Run(spmd, args, kwargs or {}, True)
    r.noabort = True
    with _run_lock:
        _g_run = r
        try:
            if comm is not None:
                _note_begin(1, fh)
            else:
                _note_begin(2, 0)
            with nogil:
                rc = lpf_hook(init, _c_spmd, LPF_NO_ARGS)
        finally:
            _g_run = None
            sstep_py_note_end()
            sstep_py_init_free(init)
    return _run_result(r, rc, "returned early or failed")


cdef bint _meet_atexit = False
cdef unsigned _run_no = 0

cdef enum:
    _NOTE_CAP = 16384       # bytes of a fatal report sent to the other MPI processes
    _NOTE_WAIT_MS = 1000    # how long a failed sync looks for one


cdef _note_begin(int kind, long long fh):
    """The channel of fatal reports between the MPI processes of this run."""
    global _run_no
    if kind == 0:       # runs over the world, counted alike on every rank (the
        _run_no += 1    # others have a communicator of their own)
    sstep_py_note_begin(kind, fh, _run_no)


cdef _note_send(Context ctx, object e):
    """Tell the other processes of an MPI run the facts of this BSPError."""
    cdef bytes b = json.dumps([str(e), e.pid, e.nprocs, e.primitive,
                               e.c_message]).encode("utf-8")[:_NOTE_CAP]
    sstep_py_note_send(b, len(b), ctx.pid, ctx.nprocs)


cdef object _note_recv(Context ctx):
    """The BSPError another process of an MPI run sent, or None."""
    cdef bytearray buf = bytearray(_NOTE_CAP)
    cdef char *cb = buf
    cdef int n
    with nogil:
        n = sstep_py_note_recv(cb, _NOTE_CAP, _NOTE_WAIT_MS)
    if n <= 0:
        return None
    try:
        text, pid, nprocs, prim, cmsg = json.loads(bytes(buf[:n]).decode("utf-8", "replace"))
    except Exception:
        return None
    return BSPError(text, pid=pid, nprocs=nprocs, primitive=prim, c_message=cmsg)


def sstep_py_mpi_finalize_atexit():
    sys.stdout.flush()
    sys.stderr.flush()
    sstep_py_mpi_finalize(NULL)
