/*
 * Small C helpers of the Cython module superstep._core: the MPI calls
 * (present only when the library was built with the MPI engine) and the
 * engine choice, the GIL at a sync.
 */
#ifndef SSTEP_PY_H
#define SSTEP_PY_H

#include <Python.h>
#include <lpf/core.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <lpf/abort.h>
#include <setjmp.h>
#include <stdio.h>

/* the library's (src/core/sstep_ext.h): a sync of the package's own */
void sstep_layer_step(lpf_t ctx);
/* the library's (src/core/profile.c): profiling on; the Python call site of
 * this thread's next supersteps ("LINE FUNCTION FILE", NULL: none) */
int sstep_prof_on(void);
void sstep_prof_pysite(const char *site);
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* NumPy's headers pull in <complex.h>, whose macro I clashes with the
 * parameter names of sparse.h */
#ifdef I
#undef I
#endif
#include "inprod.h"
#include "sort.h"
#include "spmv.h"
#include "pagerank.h"
#ifdef SSTEP_PY_HAVE_FFT
#include "bspfft.h"
#endif

#ifdef SSTEP_PY_HAVE_MPI
#include <mpi.h>
#include <lpf/mpi.h>

static int sstep_py_have_mpi(void) { return 1; }

/* initialise MPI when needed, then an lpf_init_t over MPI_COMM_WORLD */
static int sstep_py_mpi_init(lpf_init_t *init, int *rank, int *size)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Finalized(&fin);
    if (fin) return -1;
    if (!inited) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, init) == LPF_SUCCESS ? 0 : -1;
}

static void sstep_py_mpi_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    _Exit(code);
}

static void sstep_py_subs_free(void);

static void sstep_py_mpi_finalize(lpf_init_t init)
{
    int fin = 0, inited = 0;
    sstep_py_subs_free();
    if (init) lpf_mpi_finalize(init);
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (inited && !fin) MPI_Finalize();
}

/* an lpf_init_t over a communicator of the caller (its Fortran handle, as
 * mpi4py's Comm.py2f() gives it); MPI must be initialised */
static int sstep_py_comm_init(long long fhandle, lpf_init_t *init)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Finalized(&fin);
    if (!inited || fin) return -2;
    MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fhandle);
    if (c == MPI_COMM_NULL) return -3;
    return lpf_mpi_initialize_with_mpicomm(c, init) == LPF_SUCCESS ? 0 : -1;
}

/* processes started by someone else meet over TCP (docs/mpi.md) */
static int sstep_py_meet_init(const char *host, const char *port, int timeout_ms,
        unsigned pid, unsigned nprocs, lpf_init_t *init)
{
    return lpf_mpi_initialize_over_tcp(host, port, timeout_ms, pid, nprocs, init)
        == LPF_SUCCESS ? 0 : -1;
}

static void sstep_py_init_free(lpf_init_t init) { lpf_mpi_finalize(init); }

/* A run over ranks 0 .. n-1 of MPI_COMM_WORLD (superstep.run(p=n) with more
 * ranks): every rank calls it (MPI_Comm_split is collective); the members
 * get an lpf_init_t over their communicator and its Fortran handle (for the
 * fatal reports), the others *init = NULL. Kept per n until the end. */
#define SSTEP_PY_SUBS 16
static struct { int n; MPI_Comm comm; lpf_init_t init; } sstep_py_subs[SSTEP_PY_SUBS];
static int sstep_py_nsubs;

static int sstep_py_sub_init(int n, lpf_init_t *init, long long *fhandle)
{
    int rank = 0;
    *init = NULL;
    *fhandle = 0;
    for (int i = 0; i < sstep_py_nsubs; ++i)
        if (sstep_py_subs[i].n == n) {
            *init = sstep_py_subs[i].init;
            if (*init) *fhandle = (long long)MPI_Comm_c2f(sstep_py_subs[i].comm);
            return 0;
        }
    if (sstep_py_nsubs == SSTEP_PY_SUBS) return -2;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm c = MPI_COMM_NULL;
    if (MPI_Comm_split(MPI_COMM_WORLD, rank < n ? 0 : MPI_UNDEFINED, rank, &c) != MPI_SUCCESS)
        return -1;
    lpf_init_t in = NULL;
    if (c != MPI_COMM_NULL && lpf_mpi_initialize_with_mpicomm(c, &in) != LPF_SUCCESS) {
        MPI_Comm_free(&c);
        return -1;
    }
    sstep_py_subs[sstep_py_nsubs].n = n;
    sstep_py_subs[sstep_py_nsubs].comm = c;
    sstep_py_subs[sstep_py_nsubs].init = in;
    sstep_py_nsubs++;
    *init = in;
    if (in) *fhandle = (long long)MPI_Comm_c2f(c);
    return 0;
}

/* every rank of MPI_COMM_WORLD says how many processes its run() asks for
 * (collective): the smallest and largest, so that ranks that disagree all
 * stop instead of waiting in different communicators */
static MPI_Comm sstep_py_agree_comm = MPI_COMM_NULL;

static int sstep_py_agree(int n, int *lo, int *hi)
{
    if (sstep_py_agree_comm == MPI_COMM_NULL
            && MPI_Comm_dup(MPI_COMM_WORLD, &sstep_py_agree_comm) != MPI_SUCCESS)
        return -1;
    int v[2] = { n, -n };
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, sstep_py_agree_comm) != MPI_SUCCESS)
        return -1;
    *hi = v[0];
    *lo = -v[1];
    return 0;
}

/* After a hybrid run, its threads joined (only this thread calls MPI):
 * every rank of the run (the communicator fhandle, or MPI_COMM_WORLD when
 * 0) gives a line of cap bytes (why its processes failed, or empty) and
 * gets every rank's in all[nranks * cap]. */
static int sstep_py_gather_why(long long fhandle, const char *mine, int cap, char *all)
{
    MPI_Comm c = fhandle ? MPI_Comm_f2c((MPI_Fint)fhandle) : sstep_py_agree_comm;
    if (c == MPI_COMM_NULL || cap <= 1) return -1;
    char *buf = calloc((size_t)cap, 1);
    if (!buf) return -1;
    size_t n = strlen(mine);
    if (n > (size_t)cap - 1) n = (size_t)cap - 1;
    memcpy(buf, mine, n);
    int rc = MPI_Allgather(buf, cap, MPI_CHAR, all, cap, MPI_CHAR, c);
    free(buf);
    return rc == MPI_SUCCESS ? 0 : -1;
}

static void sstep_py_subs_free(void)
{
    if (sstep_py_agree_comm != MPI_COMM_NULL) MPI_Comm_free(&sstep_py_agree_comm);
    for (int i = 0; i < sstep_py_nsubs; ++i) {
        if (sstep_py_subs[i].init) lpf_mpi_finalize(sstep_py_subs[i].init);
        if (sstep_py_subs[i].comm != MPI_COMM_NULL) MPI_Comm_free(&sstep_py_subs[i].comm);
    }
    sstep_py_nsubs = 0;
}
#include <lpf/hybrid.h>
#include <lpf/pthread.h>

/* the hybrid engine: thread t of the T threads of this rank (rank of size
 * ranks) joins one run over every thread of every rank (<lpf/hybrid.h>);
 * thread 0 brings the MPI lpf_init_t */
static lpf_err_t sstep_py_hybrid_hook(lpf_init_t mpi, unsigned t, unsigned T, int rank,
        int size, lpf_spmd_t spmd)
{
    lpf_init_t ti = NULL, hi = NULL;
    lpf_err_t rc = lpf_pthread_initialize(t, T, &ti);
    if (rc != LPF_SUCCESS) return rc;
    rc = lpf_hybrid_initialize(ti, t == 0 ? mpi : LPF_INIT_NONE, t, T, (lpf_pid_t)rank,
            (lpf_pid_t)size, &hi);
    if (rc == LPF_SUCCESS) {
        rc = lpf_hook(hi, spmd, LPF_NO_ARGS);
        lpf_hybrid_finalize(hi);
    }
    lpf_pthread_finalize(ti);
    return rc;
}

/* Fatal reports on MPI ranks: the rank whose sync found one sends the
 * report's facts to the other processes of the run before it leaves its
 * SPMD function (whose end makes their syncs fail); they look for it when
 * their sync fails. The notes travel on a duplicate of the run's
 * communicator (none for runs over a TCP meeting), tagged by run. */
static MPI_Comm sstep_py_note_world = MPI_COMM_NULL;   /* kept across runs */
static MPI_Comm sstep_py_note_comm = MPI_COMM_NULL;    /* this run's */
static int sstep_py_note_tag;

/* kind 0: MPI_COMM_WORLD, 1: the communicator fhandle, else none */
static void sstep_py_note_begin(int kind, long long fhandle, unsigned run_no)
{
    sstep_py_note_comm = MPI_COMM_NULL;
    sstep_py_note_tag = 4000 + (int)(run_no % 4096);
    if (kind == 0) {
        if (sstep_py_note_world == MPI_COMM_NULL
                && MPI_Comm_dup(MPI_COMM_WORLD, &sstep_py_note_world) != MPI_SUCCESS)
            sstep_py_note_world = MPI_COMM_NULL;
        sstep_py_note_comm = sstep_py_note_world;
        /* reports of earlier runs nobody read (a process that returned
         * tells the others so, in case they still sync): dropped */
        for (int guard = 0; sstep_py_note_comm != MPI_COMM_NULL && guard < 4096; ++guard) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, sstep_py_note_comm, &flag, &st);
            if (!flag || st.MPI_TAG == sstep_py_note_tag) break;
            int n = 0;
            MPI_Get_count(&st, MPI_CHAR, &n);
            char *tmp = malloc(n > 0 ? (size_t)n : 1);
            if (!tmp) break;
            MPI_Recv(tmp, n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, sstep_py_note_comm,
                     MPI_STATUS_IGNORE);
            free(tmp);
        }
    } else if (kind == 1) {
        MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fhandle);
        if (c == MPI_COMM_NULL || MPI_Comm_dup(c, &sstep_py_note_comm) != MPI_SUCCESS)
            sstep_py_note_comm = MPI_COMM_NULL;
    }
}

static void sstep_py_note_end(void)
{
    if (sstep_py_note_comm != MPI_COMM_NULL && sstep_py_note_comm != sstep_py_note_world)
        MPI_Comm_free(&sstep_py_note_comm);
    sstep_py_note_comm = MPI_COMM_NULL;
}

/* to every other rank of the run; the copies are freed once their sends
 * completed (tested at the next report) */
#define SSTEP_PY_NOTES 256
static struct { MPI_Request rq; char *buf; } sstep_py_notes[SSTEP_PY_NOTES];
static int sstep_py_nnotes;

static void sstep_py_note_send(const char *text, int len, unsigned self, unsigned nprocs)
{
    if (sstep_py_note_comm == MPI_COMM_NULL || len <= 0) return;
    int k = 0;
    for (int i = 0; i < sstep_py_nnotes; ++i) {
        int done = 0;
        MPI_Test(&sstep_py_notes[i].rq, &done, MPI_STATUS_IGNORE);
        if (done) free(sstep_py_notes[i].buf);
        else sstep_py_notes[k++] = sstep_py_notes[i];
    }
    sstep_py_nnotes = k;
    for (unsigned q = 0; q < nprocs; ++q) {
        if (q == self) continue;
        char *copy = malloc((size_t)len);
        if (!copy) return;
        memcpy(copy, text, (size_t)len);
        MPI_Request rq;
        if (MPI_Isend(copy, len, MPI_CHAR, (int)q, sstep_py_note_tag, sstep_py_note_comm, &rq)
                != MPI_SUCCESS) {
            free(copy);
            continue;
        }
        if (sstep_py_nnotes < SSTEP_PY_NOTES) {
            sstep_py_notes[sstep_py_nnotes].rq = rq;
            sstep_py_notes[sstep_py_nnotes].buf = copy;
            sstep_py_nnotes++;
        } else {
            MPI_Request_free(&rq);   /* completes on its own; its copy stays */
        }
    }
}

/* a report from another process, waiting up to wait_ms: its length (at
 * most cap bytes kept), or -1 */
static int sstep_py_note_recv(char *buf, int cap, int wait_ms)
{
    if (sstep_py_note_comm == MPI_COMM_NULL) return -1;
    double t0 = MPI_Wtime();
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, sstep_py_note_tag, sstep_py_note_comm, &flag, &st);
        if (flag) {
            int n = 0;
            MPI_Get_count(&st, MPI_CHAR, &n);
            char *tmp = malloc(n > 0 ? (size_t)n : 1);
            if (!tmp) return -1;
            MPI_Recv(tmp, n, MPI_CHAR, st.MPI_SOURCE, sstep_py_note_tag, sstep_py_note_comm,
                     MPI_STATUS_IGNORE);
            if (n > cap) n = cap;
            memcpy(buf, tmp, (size_t)n);
            free(tmp);
            return n;
        }
        if ((MPI_Wtime() - t0) * 1000.0 >= wait_ms) return -1;
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
}
#else
static int sstep_py_have_mpi(void) { return 0; }
static int sstep_py_mpi_init(lpf_init_t *init, int *rank, int *size)
{
    (void)init; *rank = 0; *size = 1;
    return -1;
}
static void sstep_py_mpi_abort(int code) { _Exit(code); }
static void sstep_py_mpi_finalize(lpf_init_t init) { (void)init; }
static int sstep_py_comm_init(long long fhandle, lpf_init_t *init)
{
    (void)fhandle; (void)init;
    return -4;
}
static int sstep_py_sub_init(int n, lpf_init_t *init, long long *fhandle)
{
    (void)n; *init = NULL; *fhandle = 0;
    return -4;
}
static int sstep_py_agree(int n, int *lo, int *hi)
{
    *lo = *hi = n;
    return 0;
}
static int sstep_py_gather_why(long long fhandle, const char *mine, int cap, char *all)
{
    (void)fhandle; (void)mine; (void)cap; (void)all;
    return -1;
}
static int sstep_py_meet_init(const char *host, const char *port, int timeout_ms,
        unsigned pid, unsigned nprocs, lpf_init_t *init)
{
    (void)host; (void)port; (void)timeout_ms; (void)pid; (void)nprocs; (void)init;
    return -4;
}
static void sstep_py_init_free(lpf_init_t init) { (void)init; }
static lpf_err_t sstep_py_hybrid_hook(lpf_init_t mpi, unsigned t, unsigned T, int rank,
        int size, lpf_spmd_t spmd)
{
    (void)mpi; (void)t; (void)T; (void)rank; (void)size; (void)spmd;
    return LPF_ERR_FATAL;
}
static void sstep_py_note_begin(int kind, long long fhandle, unsigned run_no)
{
    (void)kind; (void)fhandle; (void)run_no;
}
static void sstep_py_note_end(void) {}
static void sstep_py_note_send(const char *text, int len, unsigned self, unsigned nprocs)
{
    (void)text; (void)len; (void)self; (void)nprocs;
}
static int sstep_py_note_recv(char *buf, int cap, int wait_ms)
{
    (void)buf; (void)cap; (void)wait_ms;
    return -1;
}
#endif


/* Fatal library errors inside superstep.run on threads (a checked-mode
 * report...) become Python exceptions: the library's fatal hook copies the
 * report and, when the thread is inside sstep_py_sync, leaves the library
 * by longjmp (the context is then failed, its peers' syncs fail once the
 * process leaves its SPMD function). Elsewhere (the applications' own
 * threads, calls other than the sync) the hook returns and the program ends
 * as in C. */
#define SSTEP_PY_RECOVERED (-77)

struct sstep_py_report {
    unsigned pid, nprocs;
    char primitive[64];
    char message[1024];
};

static _Thread_local jmp_buf *sstep_py_jb;
static _Thread_local struct sstep_py_report sstep_py_mine;   /* this thread's report */

static void sstep_py_fatal_hook(lpf_pid_t pid, lpf_pid_t nprocs, const char *primitive,
        const char *message)
{
    jmp_buf *jb = sstep_py_jb;
    if (!jb) return;
    sstep_py_mine.pid = pid;
    sstep_py_mine.nprocs = nprocs;
    snprintf(sstep_py_mine.primitive, sizeof sstep_py_mine.primitive, "%s", primitive);
    snprintf(sstep_py_mine.message, sizeof sstep_py_mine.message, "%s", message);
    sstep_py_jb = NULL;
    longjmp(*jb, 1);
}

static void sstep_py_install_hook(void) { sstep_set_fatal_hook(sstep_py_fatal_hook); }

static const struct sstep_py_report *sstep_py_last_report(void) { return &sstep_py_mine; }

/* lpf_sync; SSTEP_PY_RECOVERED when guarded and the library reported a
 * fatal error (then sstep_py_report() says what) */
static lpf_err_t sstep_py_sync(lpf_t ctx, int guarded)
{
    jmp_buf jb;
    if (!guarded) return lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (setjmp(jb)) return SSTEP_PY_RECOVERED;
    sstep_py_jb = &jb;
    lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    sstep_py_jb = NULL;
    return rc;
}

/* The GIL at a sync on threads. Only one thread runs Python at a time, so
 * every superstep hands the GIL from process to process. A thread woken by
 * CPython's GIL (a condition variable) takes several microseconds to run;
 * instead, a thread whose sync is done spins until no process of the run is
 * in Python (sstep_py_in_python: the processes that hold the GIL or are
 * taking it) and claims the turn, so that it takes a GIL that was just
 * dropped. After SSTEP_PY_SPIN rounds (a process computing in Python for
 * long) it waits for the GIL as usual. */
#define SSTEP_PY_SPIN 4096

static atomic_int sstep_py_in_python;

static void sstep_py_enter(void) { atomic_fetch_add(&sstep_py_in_python, 1); }
static void sstep_py_leave(void) { atomic_fetch_sub(&sstep_py_in_python, 1); }

static inline void sstep_py_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A collective's first superstep on arrays (_fast.pxi): right after the
 * sync, before the GIL is taken back, look whether the table says that the
 * call is complete (every process called it with the same arguments, none
 * failed, every member's data are arrays of the same size and dtype, all
 * were sent: _fast_ok's test) and then copy the results out of the
 * collective buffer, so that the processes of a run on threads copy at
 * the same time instead of one after the other. The column numbers and
 * modes are those of _fast.pxi and _coll.pxi. */
struct sstep_py_copy {
    char *dst;
    const char *src;
    size_t n;
};

/* A reduction's fold in C (reduce, allreduce over every process): dst =
 * src[0] op src[1] op ... op src[nsrc - 1], element by element in that
 * order, as NumPy's ufuncs fold the rows (op: _OPCODE's sum, prod, min,
 * max; min and max propagate NaN and give the second operand of equal ones,
 * as np.minimum and np.maximum do; integers wrap). Then, when also is not
 * NULL, dst is copied there. Blocks of FOLD_BLK elements, so that the
 * partial result stays in the cache while the rows are folded into it. */
enum { SSTEP_PY_F64 = 1, SSTEP_PY_F32, SSTEP_PY_I64, SSTEP_PY_I32, SSTEP_PY_I16, SSTEP_PY_I8,
       SSTEP_PY_U64, SSTEP_PY_U32, SSTEP_PY_U16, SSTEP_PY_U8 };
struct sstep_py_fold {
    int op, kind;
    size_t n;                   /* elements */
    char *dst;
    char *also;
    const char *const *src;
    unsigned nsrc;              /* at least 1 */
};

#define SSTEP_PY_FOLD_BLK 4096
#define SSTEP_PY_FOLD_OP(T, U, o, x, y, op)                                                   \
    switch (op) {                                                                             \
    case 1: for (size_t i = 0; i < e; ++i) o[i] = (T)((U)x[i] + (U)y[i]); break;               \
    case 2: for (size_t i = 0; i < e; ++i) o[i] = (T)((U)x[i] * (U)y[i]); break;               \
    case 3: for (size_t i = 0; i < e; ++i) o[i] = (x[i] < y[i] || x[i] != x[i]) ? x[i] : y[i]; \
            break;                                                                            \
    default: for (size_t i = 0; i < e; ++i) o[i] = (x[i] > y[i] || x[i] != x[i]) ? x[i] : y[i]; \
             break;                                                                           \
    }
#define SSTEP_PY_FOLD_FN(NAME, T, U)                                                          \
static void NAME(int op, char *dst, const char *const *src, unsigned m, size_t n)             \
{                                                                                             \
    for (size_t b = 0; b < n; b += SSTEP_PY_FOLD_BLK) {                                       \
        size_t e = n - b < SSTEP_PY_FOLD_BLK ? n - b : SSTEP_PY_FOLD_BLK;                     \
        T *restrict o = (T *)dst + b;                                                         \
        const T *restrict x = (const T *)src[0] + b;                                          \
        if (m == 1) { memcpy(o, x, e * sizeof(T)); continue; }                                \
        const T *restrict y = (const T *)src[1] + b;                                          \
        SSTEP_PY_FOLD_OP(T, U, o, x, y, op)                                                   \
        for (unsigned k = 2; k < m; ++k) {                                                    \
            const T *restrict z = (const T *)src[k] + b;                                      \
            SSTEP_PY_FOLD_OP(T, U, o, o, z, op)                                               \
        }                                                                                     \
    }                                                                                         \
}
SSTEP_PY_FOLD_FN(sstep_py_fold_f64, double, double)
SSTEP_PY_FOLD_FN(sstep_py_fold_f32, float, float)
SSTEP_PY_FOLD_FN(sstep_py_fold_i64, int64_t, uint64_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_i32, int32_t, uint32_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_i16, int16_t, uint32_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_i8, int8_t, uint32_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_u64, uint64_t, uint64_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_u32, uint32_t, uint32_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_u16, uint16_t, uint32_t)
SSTEP_PY_FOLD_FN(sstep_py_fold_u8, uint8_t, uint32_t)

static void sstep_py_fold_run(const struct sstep_py_fold *f)
{
    static void (*const fn[])(int, char *, const char *const *, unsigned, size_t) = {
        NULL, sstep_py_fold_f64, sstep_py_fold_f32, sstep_py_fold_i64, sstep_py_fold_i32,
        sstep_py_fold_i16, sstep_py_fold_i8, sstep_py_fold_u64, sstep_py_fold_u32,
        sstep_py_fold_u16, sstep_py_fold_u8 };
    static const size_t isz[] = { 0, 8, 4, 8, 4, 2, 1, 8, 4, 2, 1 };
    if (f->n == 0 || f->kind < SSTEP_PY_F64 || f->kind > SSTEP_PY_U8) return;
    fn[f->kind](f->op, f->dst, f->src, f->nsrc, f->n);
    if (f->also) memcpy(f->also, f->dst, f->n * isz[f->kind]);
}

struct sstep_py_post {
    const int64_t *table;       /* nprocs rows of meta int64 */
    unsigned nprocs, meta;
    int64_t chk;
    int sent;                   /* the sent column every row must have (1; 0 for the
                                   data moving in a second superstep; -1: none) */
    const struct sstep_py_copy *cp;
    size_t ncp;
    const struct sstep_py_fold *fold;   /* or NULL: after the copies */
    int ok;                     /* out: the call is complete, the copies made */
};

static int sstep_py_fast_ok(const struct sstep_py_post *po)
{
    const int64_t *t = po->table;
    const int64_t m0 = t[7];
    if (m0 != 1 && m0 != 3) return 0;          /* M_ARRAY, M_SCALAR */
    for (unsigned q = 0; q < po->nprocs; ++q) {
        const int64_t *r = t + (size_t)q * po->meta;
        if (r[6] != po->chk || r[4] != po->sent || r[7] != m0 || r[0] != t[0] || r[1] != t[1]
                || r[2] != t[2])
            return 0;
    }
    return 1;
}

/* sstep_py_sync, called with the GIL held; returns with it held. po: NULL,
 * or a collective's first superstep over every process (see above). */
static lpf_err_t sstep_py_sync_gil(lpf_t ctx, int guarded, int spin, struct sstep_py_post *po)
{
    PyThreadState *ts = PyEval_SaveThread();
    atomic_fetch_sub_explicit(&sstep_py_in_python, 1, memory_order_release);
    lpf_err_t rc = sstep_py_sync(ctx, guarded);
    if (po) {
        po->ok = rc == LPF_SUCCESS && sstep_py_fast_ok(po);
        if (po->ok)
            for (size_t i = 0; i < po->ncp; ++i)
                if (po->cp[i].n) memcpy(po->cp[i].dst, po->cp[i].src, po->cp[i].n);
        if (po->ok && po->fold) sstep_py_fold_run(po->fold);
    }
    if (spin) {
        for (int i = 0; i < SSTEP_PY_SPIN; ++i) {
            int zero = 0;
            if (atomic_load_explicit(&sstep_py_in_python, memory_order_relaxed) == 0
                    && atomic_compare_exchange_weak(&sstep_py_in_python, &zero, 1))
                goto claimed;
            if ((i & 255) == 255) sched_yield();
            else sstep_py_relax();
        }
    }
    atomic_fetch_add(&sstep_py_in_python, 1);
claimed:
    PyEval_RestoreThread(ts);
    return rc;
}

/* threads per rank on the hybrid engine (bsprun -t sets it) */
static unsigned sstep_py_hybrid_threads(void)
{
    const char *v = getenv("SUPERSTEP_HYBRID_THREADS");
    long t = v && *v ? strtol(v, NULL, 10) : 1;
    return t >= 1 && t <= 4096 ? (unsigned)t : 1;
}

/* SUPERSTEP_ENGINE=mpi (any case), as the library reads it */
static int sstep_py_engine_is_mpi(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e && strcasecmp(e, "mpi") == 0;
}

static int sstep_py_engine_is_hybrid(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e && strcasecmp(e, "hybrid") == 0;
}

#ifdef SSTEP_PY_HAVE_FFT
static int sstep_py_have_fft(void) { return 1; }
#else
static int sstep_py_have_fft(void) { return 0; }
/* not built: the module still links */
static int bsp_fft(double *x, size_t n, int sign, unsigned P)
{
    (void)x; (void)n; (void)sign; (void)P;
    return -2;
}
#endif

#endif
