/*
 * <bsp.h>: the BSPlib primitives (MulticoreBSP flavour and Oxford
 * compatibility flavour) on the bsplib_t object.
 *
 * Every thread keeps, in thread-local storage, the stack of runs it takes
 * part in (innermost first) and the current run's bsplib_t. bsp_begin in
 * the initiating process starts the siblings with sstep_exec_begin and
 * continues as pid 0; siblings enter a trampoline that calls the SPMD
 * function (or main(0, NULL)), join the run in their bsp_begin and leave
 * it in bsp_end by unwinding back to the trampoline (destructors of C++
 * locals run, as under MulticoreBSP's pthread_exit). Error codes of the
 * object become run-time errors: one line on stderr, and the whole program
 * exits with a non-zero status (lpf_abort).
 */
#define _GNU_SOURCE
#include <bsp.h>
#include <lpf/abort.h>
#include "bsplib_internal.h"

#include <limits.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

/* the default-flavour names must not be renamed in this file */
#if defined(MCBSP_COMPATIBILITY_MODE)
# error "bsp.c must be compiled in the default flavour"
#endif
#undef bsp_hpmove

#define NORETURN __attribute__((noreturn))
#define COLD __attribute__((noinline, cold))

/* main, for the SPMD-section-is-main shape (weak: the library also loads
 * into programs whose main is elsewhere) */
extern int main(int, char **) __attribute__((weak));

struct bsp_initinfo {
    void (*spmd)(void);
    int set;
};

/* one run this thread takes part in */
struct bsp_frame {
    struct BSPlib *lib;
    lpf_t ctx;
    lpf_pid_t pid, nprocs;
    struct bsp_frame *parent;     /* enclosing run of this thread */
    jmp_buf *exit_jb;             /* siblings: bsp_end jumps back here */
    struct bsp_initinfo init;     /* bsp_init inside this run (nested run) */
    int implicit_main;            /* pid 0 of a main-as-SPMD run */
    int attached;                 /* joined an existing context (sstep_bsp_attach) */
    lpf_func_t fsyms[4];          /* pid 0: what the siblings run */
};

struct bsp_tls {
    struct BSPlib *lib;           /* innermost run's object; NULL outside */
    struct bsp_frame *cur;
    struct bsp_initinfo init;     /* bsp_init outside any run */
    /* a sibling between its start and its bsp_begin */
    int joining;
    lpf_t join_ctx;
    lpf_pid_t join_pid, join_nprocs;
    jmp_buf *join_jb;
    int main_done;                /* the main-as-SPMD run has ended */
    /* sstep_bsp_attach: the next bsp_begin joins this context */
    int attach;
    lpf_t attach_ctx;
    lpf_pid_t attach_pid, attach_nprocs;
};

static __thread struct bsp_tls T __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------ */
/* Run-time errors                                                      */
/* ------------------------------------------------------------------ */

static atomic_int reporting;

static NORETURN void vdie(const char *prim, const char *fmt, va_list ap)
{
    struct bsp_frame *f = T.cur;
    if (atomic_exchange(&reporting, 1) != 0) {
        /* another thread of this program reports and ends it */
        for (;;) pause();
    }
    char line[2048];
    int n;
    if (f)
        n = snprintf(line, sizeof line, "superstep: %s (process %u of %u): ", prim,
                f->pid, f->nprocs);
    else if (T.joining)
        n = snprintf(line, sizeof line, "superstep: %s (process %u of %u, before bsp_begin): ",
                prim, T.join_pid, T.join_nprocs);
    else
        n = snprintf(line, sizeof line, "superstep: %s (outside any SPMD section): ", prim);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
    char site[640];
    sstep_call_site(site, sizeof site);
    fflush(stdout);
    fprintf(stderr, "%s%s\n", line, site);
    fflush(stderr);
    sstep_abort_quiet(f ? f->ctx : T.joining ? T.join_ctx : LPF_ROOT);
    _exit(6);
}

static NORETURN COLD __attribute__((format(printf, 2, 3)))
void die(const char *prim, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie(prim, fmt, ap);
}

static NORETURN COLD void die_outside(const char *prim)
{
    if (T.joining)
        die(prim, "called before bsp_begin (statements before bsp_begin may not use "
                "BSP primitives other than bsp_init, bsp_nprocs and bsp_abort)");
    die(prim, "called outside an SPMD section (no bsp_begin in this process, or after bsp_end)");
}

static inline struct BSPlib *lib_or_die(const char *prim)
{
    struct BSPlib *b = T.lib;
    if (BSPL_UNLIKELY(b == NULL)) die_outside(prim);
    return b;
}

static NORETURN COLD void die_oom(const char *prim)
{
    die(prim, "out of memory");
}

/* out of memory for a request of `bytes` bytes (what was asked for) */
static NORETURN COLD void die_oom_size(const char *prim, const char *what, size_t bytes)
{
    die(prim, "out of memory: could not buffer %s of %zu bytes", what, bytes);
}

/* A tag size no machine could hold is a mistake, refused at the call. */
static void check_tagsize(const char *prim, size_t size)
{
    static size_t mem_cached;   /* every thread computes the same value */
    size_t mem = __atomic_load_n(&mem_cached, __ATOMIC_RELAXED);
    if (!mem) {
        long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);
        mem = pages > 0 && pg > 0 ? (size_t)pages * (size_t)pg : SIZE_MAX / 2;
        __atomic_store_n(&mem_cached, mem, __ATOMIC_RELAXED);
    }
    if (size > mem)
        die(prim, "tag size %zu bytes is more than this machine's memory (%zu bytes)", size, mem);
}

/* Errors of put/get/hpput/hpget/direct_get. `remote` is the identifying
 * pointer (put: destination, get: source), `local` the other one. */
static NORETURN COLD void drma_error(struct BSPlib *b, const char *prim, bsplib_err_t e,
        lpf_pid_t pid, const void *local, const void *remote, size_t offset, size_t size,
        int is_put)
{
    const char *lname = is_put ? "source" : "destination";
    const char *rname = is_put ? "destination" : "source";
    switch (e) {
    case BSPLIB_ERR_NULL_POINTER:
        if (local == NULL)
            die(prim, "%s is NULL (size %zu)", lname, size);
        die(prim, "%s is NULL (size %zu); NULL cannot identify a registration", rname, size);
    case BSPLIB_ERR_MEMORY_NOT_REGISTERED:
        if (bspl_pending_push(b, remote))
            die(prim, "%s %p was registered in this superstep; a registration can be used "
                    "only after the next bsp_sync", rname, remote);
        die(prim, "%s %p is not registered (bsp_push_reg it first; interior pointers do not "
                "identify a registration)", rname, remote);
    case BSPLIB_ERR_PID_OUT_OF_RANGE:
        die(prim, "pid %u is out of range (bsp_nprocs() is %u)", pid, b->nprocs);
    case BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE: {
        struct bspl_reg *r = bspl_lookup(b, remote);
        size_t rs = r ? r->rsize[pid] : 0;
        die(prim, "offset %zu + size %zu is out of bounds: process %u registered %zu bytes "
                "for %s %p%s", offset, size, pid, rs, rname, remote,
                rs == 0 ? " (a NULL or empty registration)" : "");
    }
    case BSPLIB_ERR_OUT_OF_MEMORY:
        die_oom_size(prim, "a request", size);
    default:
        if (b->failed)
            die(prim, "the run has failed (a process left it or an earlier error)");
        die(prim, "the engine cannot complete this request (error %d)", (int)e);
    }
}

/* Errors found by bsp_sync or bsp_end. A disagreement is seen by every
 * process of the run at the same sync: process 0 reports it, the others
 * wait for the end of the program (on a distributed engine they are
 * separate programs that would each print a line); if that does not come
 * within seconds they report it themselves, so nothing ever hangs. */
static NORETURN COLD void sync_error(struct BSPlib *b, const char *prim, bsplib_err_t e)
{
    const struct bspl_mismatch *m = &b->mm;
    if (b->pid != 0 && m->peer != LPF_MAX_P) {
        for (int i = 0; i < 100; ++i) {
            struct timespec ts = { 0, 50000000 };
            nanosleep(&ts, NULL);
        }
    }
    switch (e) {
    case BSPLIB_ERR_PUSHREG_MISMATCH:
        die(prim, "processes registered different numbers of variables in this superstep: "
                "%zu bsp_push_reg here, %zu at process %u", m->push_here, m->push_peer, m->peer);
    case BSPLIB_ERR_POPREG_MISMATCH:
        if (m->pop_here != m->pop_peer)
            die(prim, "processes deregistered different numbers of variables in this superstep: "
                    "%zu bsp_pop_reg here, %zu at process %u", m->pop_here, m->pop_peer, m->peer);
        die(prim, "bsp_pop_reg calls of this superstep name different registrations here "
                "and at process %u (pops must follow the same order everywhere)", m->peer);
    case BSPLIB_ERR_TAGSIZE_MISMATCH:
        die(prim, "processes requested different tag sizes: %zu here, %zu at process %u",
                m->tag_here, m->tag_peer, m->peer);
    case BSPLIB_ERR_OUT_OF_MEMORY:
        die_oom(prim);
    default:
        if (m->peer != LPF_MAX_P && m->kind_here != m->kind_peer) {
            const char *there = m->kind_peer == BSPL_KIND_END ? "bsp_end" : "bsp_sync";
            die(prim, "mismatched bsp_sync and bsp_end: process %u is in %s while this "
                    "process is in %s", m->peer, there, prim);
        }
        die(prim, "mismatched bsp_sync and bsp_end: another process of this run has left "
                "it (it ended, returned from the SPMD function or failed)");
    }
}

/* ------------------------------------------------------------------ */
/* SPMD control                                                         */
/* ------------------------------------------------------------------ */

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    return atoi(v);
}

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return *end ? dflt : (size_t)x;
}

static void frame_enter(struct bsp_frame *f, const char *prim)
{
    struct BSPlib *lib = NULL;
    bsplib_err_t e = bsplib_create(f->ctx, f->pid, f->nprocs,
            env_int("LPF_BSPLIB_SAFETY_MODE", 1), env_size("LPF_BSPLIB_MAX_HP_REGS", SIZE_MAX), &lib);
    f->parent = T.cur;
    T.cur = f;
    if (e != BSPLIB_SUCCESS) {
        if (e == BSPLIB_ERR_OUT_OF_MEMORY) die_oom(prim);
        die(prim, "could not start the run (a process failed)");
    }
    sstep_set_names(f->ctx, "bsp_put", "bsp_get");
    f->lib = lib;
    T.lib = lib;
}

static void join(void)
{
    struct bsp_frame *f = calloc(1, sizeof *f);
    if (!f) die_oom("bsp_begin");
    f->ctx = T.join_ctx;
    f->pid = T.join_pid;
    f->nprocs = T.join_nprocs;
    f->exit_jb = T.join_jb;
    T.joining = 0;
    frame_enter(f, "bsp_begin");
}

/*
 * A sibling leaves its run in bsp_end the way pthread_exit leaves a thread:
 * a forced unwind runs the cleanups (C++ destructors) of every frame between
 * bsp_end and the trampoline, then a longjmp lands in the trampoline. The
 * exception object lives in thread-local storage because cleanups reuse
 * the stack below them. Without unwind information the unwinder gives up
 * and we jump directly (locals of the SPMD function are then not destroyed).
 */
static _Thread_local struct exit_unwind {
    struct _Unwind_Exception exc;
    jmp_buf *jb;
} exit_state;

static _Unwind_Reason_Code exit_stop(int version, _Unwind_Action actions,
        _Unwind_Exception_Class cls, struct _Unwind_Exception *exc,
        struct _Unwind_Context *uctx, void *arg)
{
    (void)version; (void)cls; (void)exc;
    struct exit_unwind *u = arg;
    /* frames called by the trampoline have their CFA at or below its
     * jmp_buf; the first frame above it is the trampoline itself */
    if ((actions & _UA_END_OF_STACK) || _Unwind_GetCFA(uctx) > (_Unwind_Word)(uintptr_t)u->jb)
        longjmp(*u->jb, 1);
    return _URC_NO_REASON;
}

static void exit_cleanup(_Unwind_Reason_Code rc, struct _Unwind_Exception *exc)
{
    (void)rc; (void)exc;
}

static _Noreturn void leave_to_trampoline(jmp_buf *jb)
{
    struct exit_unwind *u = &exit_state;
    memset(&u->exc, 0, sizeof u->exc);
    memcpy(&u->exc.exception_class, "SSTPBSPE", sizeof u->exc.exception_class);
    u->exc.exception_cleanup = exit_cleanup;
    u->jb = jb;
    _Unwind_ForcedUnwind(&u->exc, exit_stop, u);
    longjmp(*jb, 1);
}

/* what a sibling runs: the SPMD function (or main) until bsp_end jumps back */
static void trampoline(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    void (*spmd)(void) = (void (*)(void))args.f_symbols[0];
    void (*with)(void *) = (void (*)(void *))args.f_symbols[1];
    void *arg = args.f_size >= 4 ? (void *)(uintptr_t)args.f_symbols[2] : NULL;
    jmp_buf jb;
    struct bsp_tls saved = T;
    memset(&T, 0, sizeof T);
    T.joining = 1;
    T.join_ctx = ctx;
    T.join_pid = pid;
    T.join_nprocs = nprocs;
    T.join_jb = &jb;
    if (setjmp(jb) == 0) {
        if (with) {
            /* the argument is an address in the initiator's memory: usable
             * only where the processes share it */
            if (args.f_size < 4 || (uintptr_t)args.f_symbols[3] != (uintptr_t)getpid())
                die("bsp_begin", "this run's processes do not share memory (distributed "
                        "engine): mcbsp::BSP_program needs the pthread engine");
            join();
            with(arg);
        } else if (spmd) {
            spmd();
        } else {
            main(0, NULL);
        }
        if (T.joining)
            die("bsp_begin", "the SPMD function returned without calling bsp_begin");
        die("bsp_end", "the SPMD function returned without calling bsp_end");
    }
    T = saved;
}

static void start(bsp_pid_t P, void (*spmd)(void), void (*with)(void *), void *arg,
        int implicit_main)
{
    struct bsp_frame *f = calloc(1, sizeof *f);
    if (!f) die_oom("bsp_begin");
    /* what siblings run: function pointers (translated by distributed
     * engines); a wrapper's argument and our process id only with `with` */
    f->fsyms[0] = (lpf_func_t)spmd;
    f->fsyms[1] = (lpf_func_t)with;
    f->fsyms[2] = (lpf_func_t)(uintptr_t)arg;
    f->fsyms[3] = (lpf_func_t)(uintptr_t)getpid();
    f->implicit_main = implicit_main;
    lpf_args_t args = LPF_NO_ARGS;
    args.f_symbols = f->fsyms;
    args.f_size = with ? 4 : 2;
    lpf_t parent = T.cur ? T.cur->ctx : LPF_ROOT;
    lpf_t ctx0 = NULL;
    lpf_err_t rc = sstep_exec_begin(parent, P, trampoline, args, &ctx0);
    if (rc != LPF_SUCCESS) {
        free(f);
        if (rc == LPF_ERR_OUT_OF_MEMORY)
            die("bsp_begin", "could not start %u processes (out of memory or threads)", P);
        die("bsp_begin", "could not start %u processes (the enclosing run has failed)", P);
    }
    f->ctx = ctx0;
    f->pid = 0;
    f->nprocs = P;
    frame_enter(f, "bsp_begin");
}

void bsp_init(void (*spmd)(void), int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (spmd == NULL) die("bsp_init", "the SPMD function is NULL");
    struct bsp_initinfo *ini = T.cur ? &T.cur->init : &T.init;
    ini->spmd = spmd;
    ini->set = 1;
}

void sstep_bsp_attach(void *ctx, unsigned pid, unsigned nprocs)
{
    if (nprocs == 0 || pid >= nprocs)
        die("sstep_bsp_attach", "pid %u is out of range (nprocs %u)", pid, nprocs);
    T.attach = 1;
    T.attach_ctx = ctx;
    T.attach_pid = pid;
    T.attach_nprocs = nprocs;
}

void bsp_begin(const bsp_pid_t P)
{
    if (T.joining) {   /* a sibling: P is the initiator's business */
        join();
        return;
    }
    if (T.attach) {    /* every process of the existing context is here */
        struct bsp_frame *f = calloc(1, sizeof *f);
        if (!f) die_oom("bsp_begin");
        f->ctx = T.attach_ctx;
        f->pid = T.attach_pid;
        f->nprocs = T.attach_nprocs;
        f->attached = 1;
        T.attach = 0;
        frame_enter(f, "bsp_begin");
        return;
    }
    if (P == 0) die("bsp_begin", "P is 0 (a run needs at least one process)");
    struct bsp_initinfo *ini = T.cur ? &T.cur->init : &T.init;
    if (ini->set) {
        start(P, ini->spmd, NULL, NULL, 0);
        return;
    }
    if (T.cur)
        die("bsp_begin", "a nested run needs bsp_init(spmd, ...) before its bsp_begin");
    if (T.main_done)
        die("bsp_begin", "main has already run its SPMD section; further runs need "
                "bsp_init with a separate SPMD function");
    if (!main)
        die("bsp_begin", "no bsp_init and no main function to run as the SPMD section");
    start(P, NULL, NULL, NULL, 1);
}

void sstep_bsp_begin_with(const bsp_pid_t P, void (*sibling)(void *), void *arg)
{
    if (P == 0) die("bsp_begin", "P is 0 (a run needs at least one process)");
    if (sibling == NULL) die("bsp_begin", "the sibling entry point is NULL");
    start(P, NULL, sibling, arg, 0);
}

void bsp_end(void)
{
    struct bsp_frame *f = T.cur;
    if (f == NULL) {
        if (T.joining) die("bsp_end", "called before bsp_begin");
        die("bsp_end", "no matching bsp_begin (called outside an SPMD section)");
    }
    struct BSPlib *b = f->lib;
    SSTEP_PROF_NOTE_CALLER();
    bsplib_err_t e = bspl_finish(b);
    SSTEP_PROF_CALLER_DONE();
    if (e != BSPLIB_SUCCESS) sync_error(b, "bsp_end", b->mm.peer != LPF_MAX_P ? BSPLIB_ERR_FATAL : e);
    bspl_release(b);
    T.cur = f->parent;
    T.lib = f->parent ? f->parent->lib : NULL;
    if (f->attached) {   /* the context goes on, with its own names */
        sstep_set_names(f->ctx, NULL, NULL);
        free(f);
        return;
    }
    if (f->pid != 0) {
        jmp_buf *jb = f->exit_jb;
        free(f);
        leave_to_trampoline(jb);
    }
    lpf_err_t rc = sstep_exec_end(f->ctx);
    if (f->implicit_main) T.main_done = 1;
    free(f);
    if (rc != LPF_SUCCESS)
        die("bsp_end", "the run failed (a process left it without bsp_end, or an error)");
}

bsp_pid_t bsp_nprocs(void)
{
    struct bsp_frame *f = T.cur;
    if (BSPL_LIKELY(f != NULL)) return f->nprocs;
    if (T.joining) return T.join_nprocs;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    if (lpf_probe(LPF_ROOT, &m) != LPF_SUCCESS || m.p == 0) return 1;
    return m.p;
}

bsp_pid_t bsp_pid(void)
{
    struct bsp_frame *f = T.cur;
    if (BSPL_UNLIKELY(f == NULL)) die_outside("bsp_pid");
    return f->pid;
}

double bsp_time(void)
{
    return bsplib_time(lib_or_die("bsp_time"));
}

void bsp_sync(void)
{
    SSTEP_PROF_NOTE_CALLER();
    struct BSPlib *b = lib_or_die("bsp_sync");
    bsplib_err_t e = bspl_sync(b);
    SSTEP_PROF_CALLER_DONE();
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) sync_error(b, "bsp_sync", e);
}

void bsp_vabort(const char *const error_message, va_list args)
{
    vdie("bsp_abort", error_message ? error_message : "(no message)", args);
}

void bsp_abort(const char *const error_message, ...)
{
    va_list ap;
    va_start(ap, error_message);
    bsp_vabort(error_message, ap);
}

/* ------------------------------------------------------------------ */
/* DRMA                                                                 */
/* ------------------------------------------------------------------ */

void bsp_push_reg(const void *const address, const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_push_reg");
    /* NULL: "never accessed through this slot", any size counts as 0 */
    bsplib_err_t e = bsplib_push_reg(b, address, address ? size : 0);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) {
        if (e == BSPLIB_ERR_OUT_OF_MEMORY) die_oom("bsp_push_reg");
        die("bsp_push_reg", "the run has failed");
    }
}

void bsp_pop_reg(const void *const address)
{
    struct BSPlib *b = lib_or_die("bsp_pop_reg");
    bsplib_err_t e = bsplib_pop_reg(b, address);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) {
        if (e == BSPLIB_ERR_OUT_OF_MEMORY) die_oom("bsp_pop_reg");
        if (bspl_pending_push(b, address))
            die("bsp_pop_reg", "address %p has no active registration left to pop (it was "
                    "registered in this superstep: registrations become active at the next "
                    "bsp_sync)", address);
        die("bsp_pop_reg", "address %p has no active registration left to pop (never "
                "registered, or popped as often as it was pushed)", address);
    }
}

void bsp_put(const bsp_pid_t pid, const void *const source, const void *const destination,
        const bsp_size_t offset, const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_put");
    bsplib_err_t e = bspl_put(b, pid, source, destination, offset, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_put", e, pid, source, destination, offset, size, 1);
}

void bsp_hpput(const bsp_pid_t pid, const void *const source, const void *const destination,
        const bsp_size_t offset, const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_hpput");
    bsplib_err_t e = bspl_hpput(b, pid, source, destination, offset, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_hpput", e, pid, source, destination, offset, size, 1);
}

void bsp_get(const bsp_pid_t pid, const void *const source, const bsp_size_t offset,
        void *const destination, const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_get");
    bsplib_err_t e = bspl_get(b, pid, source, offset, destination, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_get", e, pid, destination, source, offset, size, 0);
}

void bsp_hpget(const bsp_pid_t pid, const void *const source, const bsp_size_t offset,
        void *const destination, const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_hpget");
    if (b->hp_left) b->hp_left--;
    bsplib_err_t e = bspl_get(b, pid, source, offset, destination, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_hpget", e, pid, destination, source, offset, size, 0);
}

void bsp_direct_get(const bsp_pid_t pid, const void *const source, const bsp_size_t offset,
        void *const destination, const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_direct_get");
    bsplib_err_t e = bsplib_direct_get(b, pid, source, offset, destination, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) {
        if (e == BSPLIB_ERR_FATAL && !b->failed)
            die("bsp_direct_get", "this engine cannot read the memory of process %u "
                    "directly; use bsp_get and bsp_sync", pid);
        drma_error(b, "bsp_direct_get", e, pid, destination, source, offset, size, 0);
    }
}

/* ------------------------------------------------------------------ */
/* BSMP                                                                 */
/* ------------------------------------------------------------------ */

void bsp_set_tagsize(bsp_size_t *const size)
{
    struct BSPlib *b = lib_or_die("bsp_set_tagsize");
    if (size == NULL) die("bsp_set_tagsize", "size is NULL");
    check_tagsize("bsp_set_tagsize", *size);
    *size = bsplib_set_tagsize(b, *size);
}

static NORETURN COLD void send_error(struct BSPlib *b, const char *prim, bsplib_err_t e,
        lpf_pid_t pid, const void *tag, size_t size)
{
    switch (e) {
    case BSPLIB_ERR_NULL_POINTER:
        if (tag == NULL && b->tag_cur != 0)
            die(prim, "tag is NULL but the tag size is %zu", b->tag_cur);
        die(prim, "payload is NULL (size %zu)", size);
    case BSPLIB_ERR_PID_OUT_OF_RANGE:
        die(prim, "pid %u is out of range (bsp_nprocs() is %u)", pid, b->nprocs);
    case BSPLIB_ERR_OUT_OF_MEMORY:
        die(prim, "out of memory: could not buffer a message of %zu payload bytes and a "
                "%zu-byte tag", size, b->tag_cur);
    default:
        die(prim, "the run has failed");
    }
}

void bsp_send(const bsp_pid_t pid, const void *const tag, const void *const payload,
        const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_send");
    bsplib_err_t e = bspl_send(b, pid, tag, payload, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) send_error(b, "bsp_send", e, pid, tag, size);
}

void bsp_hpsend(const bsp_pid_t pid, const void *const tag, const void *const payload,
        const bsp_size_t size)
{
    struct BSPlib *b = lib_or_die("bsp_hpsend");
    bsplib_err_t e = bspl_hpsend(b, pid, tag, payload, size);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) send_error(b, "bsp_hpsend", e, pid, tag, size);
}

void bsp_qsize(bsp_nprocs_t *const packets, bsp_size_t *const accumulated_size)
{
    struct BSPlib *b = lib_or_die("bsp_qsize");
    bspl_inbox(b);
    size_t n = b->in_left;
    if (packets) {
        if (n > UINT_MAX) die("bsp_qsize", "%zu messages do not fit in bsp_nprocs_t", n);
        *packets = (bsp_nprocs_t)n;
    }
    if (accumulated_size) *accumulated_size = b->in_bytes;
}

void bsp_get_tag(bsp_size_t *const status, void *const tag)
{
    struct BSPlib *b = lib_or_die("bsp_get_tag");
    if (status == NULL) die("bsp_get_tag", "status is NULL");
    size_t size;
    const char *rec = bspl_peek(b, &size);
    if (rec == NULL) {
        *status = SIZE_MAX;
        return;
    }
    if (b->in_tag) {
        if (tag == NULL) die("bsp_get_tag", "tag is NULL but the tag size is %zu", b->in_tag);
        memcpy(tag, rec + 8, b->in_tag);
    }
    *status = size;
}

void bsp_move(void *const payload, const bsp_size_t max_copy_size)
{
    struct BSPlib *b = lib_or_die("bsp_move");
    const char *t, *p;
    size_t size;
    if (BSPL_UNLIKELY(payload == NULL && max_copy_size > 0)) {
        if (!bspl_peek(b, &size)) return;
        die("bsp_move", "payload is NULL (max_copy_size %zu)", max_copy_size);
    }
    if (!bspl_pop_msg(b, &t, &p, &size)) return;
    size_t n = size < max_copy_size ? size : max_copy_size;
    bspl_copy(payload, p, n);
}

bsp_size_t (bsp_hpmove)(void **const p_tag, void **const p_payload)
{
    struct BSPlib *b = lib_or_die("bsp_hpmove");
    const char *t, *p;
    size_t size;
    if (!bspl_pop_msg(b, &t, &p, &size)) return SIZE_MAX;
    if (p_tag) *p_tag = (void *)(uintptr_t)t;
    if (p_payload) *p_payload = (void *)(uintptr_t)p;
    return size;
}

/* ------------------------------------------------------------------ */
/* Oxford BSPlib flavour (MCBSP_COMPATIBILITY_MODE): int types, -1      */
/* ------------------------------------------------------------------ */

static inline void nonneg(const char *prim, const char *what, int v)
{
    if (BSPL_UNLIKELY(v < 0)) die(prim, "%s is negative (%d)", what, v);
}

static inline int fits_int(const char *prim, const char *what, size_t v)
{
    if (BSPL_UNLIKELY(v > INT_MAX)) die(prim, "%s %zu does not fit in an int", what, v);
    return (int)v;
}

void sstep_oxbsp_begin(int maxprocs)
{
    if (maxprocs < 1 && !T.joining)
        die("bsp_begin", "maxprocs is %d (a run needs at least one process)", maxprocs);
    bsp_begin((bsp_pid_t)(maxprocs < 1 ? 1 : maxprocs));
}

int sstep_oxbsp_nprocs(void)
{
    bsp_pid_t p = bsp_nprocs();
    return p > INT_MAX ? INT_MAX : (int)p;
}

int sstep_oxbsp_pid(void)
{
    return (int)bsp_pid();
}

void sstep_oxbsp_push_reg(const void *ident, int size)
{
    lib_or_die("bsp_push_reg");
    nonneg("bsp_push_reg", "size", size);
    bsp_push_reg(ident, (size_t)size);
}

void sstep_oxbsp_pop_reg(const void *ident)
{
    bsp_pop_reg(ident);
}

static inline void drma_args(const char *prim, int pid, int offset, int nbytes)
{
    nonneg(prim, "pid", pid);
    nonneg(prim, "offset", offset);
    (void)nbytes;
}

void sstep_oxbsp_put(int pid, const void *src, const void *dst, int offset, int nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_put");
    nonneg("bsp_put", "nbytes", nbytes);
    if (nbytes == 0) return;
    drma_args("bsp_put", pid, offset, nbytes);
    bsplib_err_t e = bspl_put(b, (lpf_pid_t)pid, src, dst, (size_t)offset, (size_t)nbytes);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_put", e, (lpf_pid_t)pid, src, dst, (size_t)offset, (size_t)nbytes, 1);
}

void sstep_oxbsp_hpput(int pid, const void *src, const void *dst, int offset, int nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_hpput");
    nonneg("bsp_hpput", "nbytes", nbytes);
    if (nbytes == 0) return;
    drma_args("bsp_hpput", pid, offset, nbytes);
    bsplib_err_t e = bspl_hpput(b, (lpf_pid_t)pid, src, dst, (size_t)offset, (size_t)nbytes);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_hpput", e, (lpf_pid_t)pid, src, dst, (size_t)offset, (size_t)nbytes, 1);
}

void sstep_oxbsp_get(int pid, const void *src, int offset, void *dst, int nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_get");
    nonneg("bsp_get", "nbytes", nbytes);
    if (nbytes == 0) return;
    drma_args("bsp_get", pid, offset, nbytes);
    bsplib_err_t e = bspl_get(b, (lpf_pid_t)pid, src, (size_t)offset, dst, (size_t)nbytes);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_get", e, (lpf_pid_t)pid, dst, src, (size_t)offset, (size_t)nbytes, 0);
}

void sstep_oxbsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_hpget");
    nonneg("bsp_hpget", "nbytes", nbytes);
    if (nbytes == 0) return;
    drma_args("bsp_hpget", pid, offset, nbytes);
    if (b->hp_left) b->hp_left--;
    bsplib_err_t e = bspl_get(b, (lpf_pid_t)pid, src, (size_t)offset, dst, (size_t)nbytes);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        drma_error(b, "bsp_hpget", e, (lpf_pid_t)pid, dst, src, (size_t)offset, (size_t)nbytes, 0);
}

void sstep_oxbsp_set_tagsize(int *tag_nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_set_tagsize");
    if (tag_nbytes == NULL) die("bsp_set_tagsize", "tag_nbytes is NULL");
    nonneg("bsp_set_tagsize", "the tag size", *tag_nbytes);
    check_tagsize("bsp_set_tagsize", (size_t)*tag_nbytes);
    size_t old = bsplib_set_tagsize(b, (size_t)*tag_nbytes);
    *tag_nbytes = fits_int("bsp_set_tagsize", "the previous tag size", old);
}

void sstep_oxbsp_send(int pid, const void *tag, const void *payload, int payload_nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_send");
    nonneg("bsp_send", "pid", pid);
    nonneg("bsp_send", "payload_nbytes", payload_nbytes);
    bsplib_err_t e = bspl_send(b, (lpf_pid_t)pid, tag, payload, (size_t)payload_nbytes);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        send_error(b, "bsp_send", e, (lpf_pid_t)pid, tag, (size_t)payload_nbytes);
}

void sstep_oxbsp_hpsend(int pid, const void *tag, const void *payload, int payload_nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_hpsend");
    nonneg("bsp_hpsend", "pid", pid);
    nonneg("bsp_hpsend", "payload_nbytes", payload_nbytes);
    bsplib_err_t e = bspl_hpsend(b, (lpf_pid_t)pid, tag, payload, (size_t)payload_nbytes);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS))
        send_error(b, "bsp_hpsend", e, (lpf_pid_t)pid, tag, (size_t)payload_nbytes);
}

void sstep_oxbsp_qsize(int *nmessages, int *accum_nbytes)
{
    struct BSPlib *b = lib_or_die("bsp_qsize");
    if (nmessages == NULL) die("bsp_qsize", "nmessages is NULL");
    bspl_inbox(b);
    *nmessages = fits_int("bsp_qsize", "the message count", b->in_left);
    if (accum_nbytes)
        *accum_nbytes = fits_int("bsp_qsize", "the queued byte count", b->in_bytes);
}

void sstep_oxbsp_get_tag(int *status, void *tag)
{
    struct BSPlib *b = lib_or_die("bsp_get_tag");
    if (status == NULL) die("bsp_get_tag", "status is NULL");
    size_t size;
    if (!bspl_peek(b, &size)) {
        *status = -1;
        return;
    }
    size_t s;
    bsp_get_tag(&s, tag);
    *status = fits_int("bsp_get_tag", "the payload size", s);
}

void sstep_oxbsp_move(void *payload, int reception_bytes)
{
    lib_or_die("bsp_move");
    nonneg("bsp_move", "reception_bytes", reception_bytes);
    bsp_move(payload, (size_t)reception_bytes);
}

int sstep_oxbsp_hpmove(void **tag_ptr, void **payload_ptr)
{
    struct BSPlib *b = lib_or_die("bsp_hpmove");
    size_t size;
    if (!bspl_peek(b, &size)) return -1;
    fits_int("bsp_hpmove", "the payload size", size);
    return (int)(bsp_hpmove)(tag_ptr, payload_ptr);
}
