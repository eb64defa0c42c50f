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
    cdef public object fn, args, kwargs, result, exc, lock, fatal, returned, remote
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
        self.returned = {}        # pid -> its supersteps, of this OS process's processes
        self.remote = None        # hybrid: why another rank's processes failed
        self.lock = threading.Lock()
        self.exc_pid = -1
        self.aborted = False
        self.mpi = mpi
        self.noabort = False

    def fail(self, int pid, int nprocs, e):
        """Process pid raised e out of its SPMD function. Nothing is printed
        here: run() raises the first such exception to its caller (with its
        traceback), which may catch it. On MPI the other ranks are told, so
        that their next sync's SyncError names this process."""
        cdef bint first
        with self.lock:
            first = (self.exc is None and not isinstance(e, Aborted)
                     and not (self.aborted and isinstance(e, SyncError)))
            self.aborted = True
            if first:
                self.exc = e
                self.exc_pid = pid
                self.exc_nprocs = nprocs
        if first and self.mpi and not isinstance(e, (SyncError, BSPError, Aborted)):
            _note_post(self, pid, nprocs, {"k": "exc", "pid": pid, "nprocs": nprocs,
                                           "what": _exc_line(e)})


cdef str _exc_line(e):
    text = str(e).splitlines()[0] if str(e) else ""
    if len(text) > 300:
        text = text[:300] + "..."
    return "%s: %s" % (type(e).__name__, text) if text else type(e).__name__


def _trim_tb(e):
    """e's traceback without the package's own frames (the binding's .pyx and
    .pxi): what is left shows the program's lines, the last being its call
    into superstep."""
    tb = e.__traceback__
    keep = []
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not (fn.endswith(".pyx") or fn.endswith(".pxi")
                or fn.endswith(os.path.join("superstep", "_api.py"))):
            keep.append(tb)
        tb = tb.tb_next
    for i in range(len(keep) - 1):
        keep[i].tb_next = keep[i + 1]
    if keep:
        keep[len(keep) - 1].tb_next = None   # (no wraparound in this module)
        e.__traceback__ = keep[0]
    else:
        e.__traceback__ = None
    return e


def _local_failure(_Run run, int pid):
    """Why this process's sync failed, as far as this OS process knows it:
    another process raised, or returned from its SPMD function."""
    with run.lock:
        e = run.exc
        if e is not None and run.exc_pid != pid and not isinstance(e, (SyncError, Aborted)):
            return "process %d raised %s" % (run.exc_pid, _exc_line(e))
        gone = sorted((q, n) for q, n in run.returned.items() if q != pid)
    if gone:
        return "; ".join("process %d returned from its SPMD function after %d supersteps"
                         % (q, n) for q, n in gone[:4]) + (" (and %d more)" % (len(gone) - 4)
                                                            if len(gone) > 4 else "")
    return None


cdef void _c_spmd(lpf_t lctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args) noexcept nogil:
    with gil:
        sstep_py_enter()
        _spmd_body(lctx, pid, nprocs)
        sstep_py_leave()


cdef int _spmd_body(lpf_t lctx, lpf_pid_t pid, lpf_pid_t nprocs) noexcept:
    cdef _Run run = <_Run>_g_run
    cdef Context ctx = Context.__new__(Context)
    cdef long long steps
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
            # the other processes' syncs name this one if they sync again
            steps = ctx._step - ctx._lsteps
            if not ctx._failed:   # (one that caught its failed sync did not leave first)
                with run.lock:
                    run.returned[pid] = steps
            if run.mpi and nprocs > <unsigned>run.T and not ctx._failed:
                _note_post(run, pid, nprocs, {"k": "ret", "pid": pid, "nprocs": nprocs,
                                              "steps": steps})
        except BaseException as e:
            _trim_tb(e)
            run.fail(pid, nprocs, e)
    finally:
        ctx._valid = False
        ctx._drop()
        _tls.ctx = prev
    return 0


def _hybrid_run(_Run r, p):
    """bsprun --engine hybrid -n R*T -t T python3 prog.py: every rank runs the
    script; its T threads (this one and T-1 started here) hook into one run
    over all R*T threads, pids rank-major. With p < R*T the run takes whole
    ranks: T * min(R, p // T) threads, or p threads of rank 0 when p < T.
    Returns -1 on a rank the run does not take."""
    _mpi_setup()
    cdef unsigned T = sstep_py_hybrid_threads()
    cdef unsigned Tn = T
    cdef int R = _mpi_size
    cdef lpf_init_t init = _mpi_init
    cdef long long fh = 0
    if p is not None and p < _mpi_size * T:
        if p < T:
            Tn = p
            R = 1
        else:
            R = min(_mpi_size, p // T)
    _agree_p(R * Tn, p)
    if _mpi_rank == 0:
        _p_warning(p, R * Tn, "the hybrid job has %d ranks of %d threads (bsprun -n, -t), "
                   "and a run takes whole ranks" % (_mpi_size, T))
    if R < _mpi_size:
        if sstep_py_sub_init(R, &init, &fh) != 0:
            raise SuperstepError("superstep.run: rank %d of %d: could not make the "
                                 "communicator of ranks 0..%d (MPI_Comm_split)"
                                 % (_mpi_rank, _mpi_size, R - 1))
        if init == NULL:
            return -1
    r.T = Tn
    rcs = [LPF_SUCCESS] * Tn
    cdef lpf_init_t cinit = init
    cdef int crank = _mpi_rank, csize = R

    def member(unsigned t):
        cdef lpf_err_t x
        with nogil:
            x = sstep_py_hybrid_hook(cinit, t, Tn, crank, csize, _c_spmd)
        rcs[t] = x

    # no notes between ranks here: the threads of a rank would call MPI at
    # the same time as the engine (MPI_THREAD_SERIALIZED)
    threads = [threading.Thread(target=member, args=(t,)) for t in range(1, Tn)]
    for th in threads:
        th.start()
    member(0)
    for th in threads:
        th.join()
    cdef lpf_err_t rc = LPF_SUCCESS
    for x in rcs:
        if x != LPF_SUCCESS:
            rc = x
            break
    if R > 1:
        _hybrid_why(r, rc, fh, R)
    return rc


cdef enum:
    _WHY_CAP = 512


cdef _hybrid_why(_Run r, lpf_err_t rc, long long fh, int R):
    """After a hybrid run, once its threads have joined: the ranks tell each
    other why their processes failed (one allgather of a line each), so that
    a rank whose syncs merely failed names the process that caused it."""
    mine = ""
    e = r.exc
    if e is not None and not isinstance(e, (SyncError, Aborted, BSPError)):
        mine = "process %d raised %s" % (r.exc_pid, _exc_line(e))
    elif (e is not None or rc != LPF_SUCCESS) and r.returned:
        q, n = sorted(r.returned.items())[0]
        mine = "process %d returned from its SPMD function after %d supersteps" % (q, n)
    cdef bytes b = mine.encode("utf-8", "replace")[:_WHY_CAP - 1]
    cdef bytearray allb = bytearray(_WHY_CAP * R)
    if sstep_py_gather_why(fh, b, _WHY_CAP, allb) != 0:
        return
    if mine or (e is None and rc == LPF_SUCCESS):
        return
    for k in range(R):
        if k == _mpi_rank:
            continue
        t = bytes(allb[k * _WHY_CAP:(k + 1) * _WHY_CAP]).split(b"\0", 1)[0]
        if t:
            r.remote = t.decode("utf-8", "replace")
            return


def _run_result(_Run r, lpf_err_t rc, str why):
    """What run() gives its caller once the section is over: the exception a
    process raised, SyncError when the section failed, else the result."""
    cdef int me = -1
    if r.exc is not None:
        e = r.exc
        try:
            e.add_note("superstep: raised by process %d of %d" % (r.exc_pid, r.exc_nprocs))
            if r.remote is not None:
                e.add_note("superstep: the run failed because %s" % r.remote)
        except AttributeError:
            pass
        raise e
    if rc != LPF_SUCCESS and r.remote is not None:
        raise SyncError("superstep.run: the run failed because %s" % r.remote)
    if rc != LPF_SUCCESS:
        mine = sorted(r.returned.items())
        if mine:
            q, n = mine[0]
            raise SyncError("superstep.run (process %d): the run failed after this process "
                            "returned from its SPMD function after %d supersteps: another "
                            "process synced a different number of times or failed"
                            % (q, n))
        raise SyncError("superstep.run: the SPMD section failed (LPF_ERR_FATAL): processes "
                        "called sync a different number of times, " + why)
    return r.result


cdef _agree_p(int n, p):
    """Every rank's run() must ask for the same number of processes: checked
    with one allreduce, so that ranks that disagree all raise."""
    cdef int lo = n, hi = n
    if _mpi_size <= 1:
        return
    if sstep_py_agree(n, &lo, &hi) != 0:
        raise SuperstepError("superstep.run: rank %d of %d: MPI_Allreduce failed"
                             % (_mpi_rank, _mpi_size))
    if lo != hi:
        raise ValueError("superstep.run: rank %d of %d: the ranks' runs would have from %d to "
                         "%d processes (this rank: p=%r, %d); every rank calls run() with the "
                         "same p" % (_mpi_rank, _mpi_size, lo, hi, p, n))


def _machine_p():
    """How many processes a run on threads can have (the machine's p: the
    cores, LPF_MAX_PROCS, bsprun -n on threads)."""
    cdef lpf_machine_t m = LPF_INVALID_MACHINE
    if lpf_probe(LPF_ROOT, &m) != LPF_SUCCESS or m.p < 1:
        return 1
    return m.p


cdef _p_warning(p, int n, str what, int level=2, str who="superstep.run"):
    if p is not None and p != n:
        warnings.warn("%s: p=%d asked for, the run has %d processes (%s)"
                      % (who, p, n, what), ProcessCountWarning, stacklevel=level)


def _warn_p(p):
    """superstep.apps on threads: the warning of superstep.run's rule (for
    the program's line: apps' function and _dispatch are two frames)."""
    if p is not None and isinstance(p, (int, np.integer)) and p > 0:
        _p_warning(int(p), min(int(p), _machine_p()), "this machine runs %d processes on "
                   "threads: its cores, LPF_MAX_PROCS or bsprun -n" % _machine_p(), 3,
                   "superstep.apps")


def run(spmd, p=None, args=(), kwargs=None, *, comm=None, meet=None, pid=None, nprocs=None,
        timeout=60.0):
    """Run spmd(ctx, *args, **kwargs) on p processes and return process 0's result.

    p, on every engine: the run has n = min(p, N) processes, where N is what
    the engine has: on threads the machine's p (the cores, or LPF_MAX_PROCS,
    or bsprun -n); under ``bsprun --engine mpi -n R python3 prog.py`` (every
    rank runs the script, as with mpi4py) the R ranks; under
    ``bsprun --engine hybrid -n R*T -t T`` R ranks of T threads, where a run
    takes whole ranks (n = T * min(R, p // T), or p threads of rank 0 when
    p < T). p=None means n = N. When n differs from p a ProcessCountWarning
    says so (once, from the process that runs pid 0). On MPI and hybrid,
    every rank calls run() with the same p; the ranks the run does not take
    return None at once, the others their own process's result (rank 0:
    process 0's).

    comm: an mpi4py communicator; the run spans its processes (each calls
    run with its comm). meet=(host, port), pid=k, nprocs=n: n processes
    started by someone else meet over TCP at process 0's (host, port)
    within `timeout` seconds (docs/mpi.md). In both cases each process's
    run() returns its own result.

    An exception raised by a process ends the run: run() raises it to its
    caller (the first one, with its traceback and a note naming the
    process), and the other processes' next superstep call fails
    (SyncError, naming that process). Nothing is printed by the package,
    so a caller that catches the exception goes on; on MPI every rank's
    run() raises (the SyncError on the others).
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
        p = int(p)
    if getattr(_tls, "ctx", None) is not None:
        raise SuperstepError("superstep.run: called inside an SPMD function (nested runs "
                             "are not supported)")
    if not isinstance(args, tuple):
        args = tuple(args)
    cdef bint hybrid = sstep_py_engine_is_hybrid()
    cdef bint mpi = sstep_py_engine_is_mpi() or hybrid
    cdef lpf_err_t rc
    cdef lpf_pid_t P
    cdef lpf_init_t init = NULL
    cdef long long fh = 0
    cdef int n
    cdef _Run r = _Run(spmd, args, kwargs or {}, mpi)
    with _run_lock:
        _g_run = r
        try:
            if hybrid:
                rc = _hybrid_run(r, p)
                if rc == -1:          # a rank the run does not take
                    return None
            elif mpi:
                _mpi_setup()
                n = _mpi_size if p is None else min(p, _mpi_size)
                _agree_p(n, p)
                if _mpi_rank == 0:
                    _p_warning(p, n, "the MPI job has %d ranks (bsprun -n)" % _mpi_size)
                if n == _mpi_size:
                    init = _mpi_init
                    _note_begin(0, 0)
                else:
                    if sstep_py_sub_init(n, &init, &fh) != 0:
                        raise SuperstepError("superstep.run: rank %d of %d: could not make the "
                                             "communicator of ranks 0..%d (MPI_Comm_split; at "
                                             "most 16 different p in one job)"
                                             % (_mpi_rank, _mpi_size, n - 1))
                    if init == NULL:
                        return None
                    _note_begin(1, fh)
                try:
                    with nogil:
                        rc = lpf_hook(init, _c_spmd, LPF_NO_ARGS)
                finally:
                    sstep_py_note_end()
            else:
                n = _machine_p()
                if p is not None and p < n:
                    n = p
                _p_warning(p, n, "this machine runs %d processes on threads: its cores, "
                           "LPF_MAX_PROCS or bsprun -n" % _machine_p())
                P = <lpf_pid_t>n
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


cdef _note_post(_Run run, int pid, int nprocs, dict note):
    """Send a note (JSON) to the other ranks of an MPI run: a BSPError's facts,
    an exception a process raised, or a process that returned."""
    cdef int T = run.T if run.T > 0 else 1
    cdef bytes b = json.dumps(note).encode("utf-8")[:_NOTE_CAP]
    sstep_py_note_send(b, len(b), pid // T, nprocs // T)


cdef _note_send(Context ctx, object e):
    """Tell the other processes of an MPI run the facts of this BSPError."""
    _note_post(ctx._run, ctx.pid, ctx.nprocs,
               {"k": "bsp", "text": str(e), "pid": e.pid, "nprocs": e.nprocs,
                "primitive": e.primitive, "c_message": e.c_message})


cdef object _note_recv(Context ctx):
    """Why this process's sync failed, from the notes of the other ranks of an
    MPI run: a BSPError, else a text (a process raised, or returned from its
    SPMD function), else None."""
    cdef bytearray buf = bytearray(_NOTE_CAP)
    cdef char *cb = buf
    cdef int n, wait = _NOTE_WAIT_MS
    best = None
    rank = 9
    while True:
        with nogil:
            n = sstep_py_note_recv(cb, _NOTE_CAP, wait)
        if n <= 0:
            break
        wait = 20        # the others' notes were sent at the same time
        try:
            d = json.loads(bytes(buf[:n]).decode("utf-8", "replace"))
            k = d["k"]
            if k == "bsp" and rank > 0:
                best = BSPError(d["text"], pid=d["pid"], nprocs=d["nprocs"],
                                primitive=d["primitive"], c_message=d["c_message"])
                rank = 0
            elif k == "exc" and rank > 1:
                best = "process %d raised %s" % (d["pid"], d["what"])
                rank = 1
            elif k == "ret" and rank > 2:
                best = ("process %d returned from its SPMD function after %d supersteps"
                        % (d["pid"], d["steps"]))
                rank = 2
        except Exception:
            pass
        if rank == 0:
            break
    return best


def sstep_py_mpi_finalize_atexit():
    sys.stdout.flush()
    sys.stderr.flush()
    sstep_py_mpi_finalize(NULL)
