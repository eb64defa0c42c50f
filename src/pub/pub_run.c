/*
 * pub_run.c: runs: pub_exec starts P processes (a core section) and runs the
 * SPMD function on each with a root object; the end of the run is a
 * collective over that root object. Also the enquiries (bsp_maxprocs,
 * bsp_pid, bsp_nprocs), bsp_time and bsp_abort. Owns the thread-local run
 * stack (pub_tls_run).
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the innermost run this thread takes part in (NULL: none) */
PUB_HIDDEN __thread struct pub_run *pub_tls_run;

/* ------------------------------------------------------------------ */
/* Runs                                                                 */
/* ------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define PUB_REG_CAP0 ((size_t)1024)

static void run_body(lpf_t ctx, int pid, int P, pub_spmd_t spmd, void *arg)
{
    struct pub_run run;
    memset(&run, 0, sizeof run);
    run.ctx = ctx;
    run.pid = pid;
    run.P = P;
    run.parent = pub_tls_run;
    pub_tls_run = &run;
    sstep_set_names(ctx, "bsp_put", "bsp_get");
    if (lpf_resize_memory_register(ctx, PUB_REG_CAP0) != LPF_SUCCESS)
        pub_die(NULL, "pub_exec", "out of memory (register capacity %zu)", PUB_REG_CAP0);
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        pub_die(NULL, "pub_exec", "could not start the run (a process failed)");
    sstep_layer_step(ctx);
    run.core_cap = PUB_REG_CAP0;
    tbsp root;
    struct pub_obj *o = pub_obj_new(&run, "pub_exec", &root, 0, 0, 0, P, pid);
    run.t0 = now();
    spmd(&root, arg);

    /* the end of the run: collective over the root object */
    static const char prim[] = "pub_exec";
    if (run.depth != 1 || pub_lookup(&run, &root) != o) {
        if (run.depth > 1) {
            struct pub_obj *t = run.stack[1];
            pub_die(NULL, "pub_exec", "the SPMD function returned with a live child object "
                    "(group %d..%d, %s): bsp_done every object it creates", t->lo,
                    t->lo + t->p - 1, t->kind == 2 ? "from bsp_dup" : "from bsp_partition");
        }
        pub_die(NULL, "pub_exec", "the root object was damaged (its storage was overwritten)");
    }
    /* requests still pending on the root object are discarded */
    sstep_scope_push(ctx);
    pub_release_inbox(o);
    struct sstep_stamp st = { o->id, o->step };
    struct sstep_sync_info info;
    memset(&info, 0, sizeof info);
    info.check = PUB_CHECK_END;
    info.peer = LPF_MAX_P;
    lpf_err_t rc = sstep_sync_range(ctx, 0, (lpf_pid_t)P, st, &info);
    if (rc != LPF_SUCCESS) pub_sync_failed(o, prim, &info, st, 0, 1);
    if (info.mismatch) pub_check_mismatch(o, prim, &info, info.check, 1);
    pub_release_inbox(o);
    pub_regs_drop(o);
    run.depth = 0;
    pub_obj_free(o);
    free(run.stack);
    pub_tls_run = run.parent;
}

static void sibling_entry(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    pub_spmd_t spmd = (pub_spmd_t)args.f_symbols[0];
    run_body(ctx, (int)pid, (int)nprocs, spmd, NULL);
}

void pub_exec(int P, pub_spmd_t spmd, void *arg)
{
    struct pub_run *outer = pub_tls_run;
    if (P < 1) pub_die(NULL, "pub_exec", "P is %d (a run needs at least one process)", P);
    if (spmd == NULL) pub_die(NULL, "pub_exec", "the SPMD function is NULL");
    lpf_func_t fsyms[1] = { (lpf_func_t)spmd };
    lpf_args_t args = LPF_NO_ARGS;
    args.f_symbols = fsyms;
    args.f_size = 1;
    lpf_t ctx0 = NULL;
    lpf_err_t rc = sstep_exec_begin(outer ? outer->ctx : LPF_ROOT, (lpf_pid_t)P, sibling_entry,
            args, &ctx0);
    if (rc != LPF_SUCCESS) {
        if (rc == LPF_ERR_OUT_OF_MEMORY)
            pub_die(NULL, "pub_exec", "could not start %d processes (out of memory or threads)", P);
        pub_die(NULL, "pub_exec", "could not start %d processes (more than this job has, or the "
                "enclosing run has failed)", P);
    }
    run_body(ctx0, 0, P, spmd, arg);
    rc = sstep_exec_end(ctx0);
    if (rc != LPF_SUCCESS)
        pub_die(NULL, "pub_exec", "the run failed (a process left it early, or an error)");
}

int pub_maxprocs(void)
{
    static atomic_int cached;
    int c = atomic_load(&cached);
    if (c > 0) return c;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    int p = 1;
    if (lpf_probe(LPF_ROOT, &m) == LPF_SUCCESS && m.p > 0)
        p = m.p > (lpf_pid_t)INT_MAX ? INT_MAX : (int)m.p;
    atomic_store(&cached, p);
    return p;
}

int pub_pid(pbsp bsp)
{
    return pub_obj_any("bsp_pid", bsp)->s;
}

int pub_nprocs(pbsp bsp)
{
    return pub_obj_any("bsp_nprocs", bsp)->p;
}

double pub_time(void)
{
    struct pub_run *r = pub_run_or_die("bsp_time");
    double t = now() - r->t0;
    return t > 0 ? t : 1e-9;
}

void pub_abort(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    pub_vdie(NULL, "bsp_abort", format ? format : "(no message)", ap);
}
