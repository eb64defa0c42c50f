/*
 * The pthread engine's hook, rehook and lpf_pthread_initialize: sections on
 * threads that already exist.
 */
#include "pt_group.h"
#include "../../core/output.h"

#include <lpf/pthread.h>
#include <pthread.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Hook and rehook: a section on threads that already exist             */
/* ------------------------------------------------------------------ */

/* Run spmd as process `pid` of group g (hook / rehook); every participant
 * calls this, the last one out frees the group. */
static lpf_err_t pt_run_hooked(struct pt_group *g, lpf_pid_t pid,
        lpf_spmd_t spmd, lpf_args_t args)
{
    struct pt_proc *me = &g->procs[pid];
    struct sstep_ctx *ctx = sstep_ctx_create(pid, g->P, &sstep_pthread_engine, g);
    if (!ctx) {
        /* peers will see us gone at their first sync */
        pt_leave(g, pid, NULL);
        pt_wait_all_gone(g);
        pt_group_release(g);
        return LPF_ERR_FATAL;
    }
    ctx->free_p = 1;
    ctx->in_hook = 1;
    ctx->engine_proc = me;
    me->ctx = ctx;
    long tag = sstep_out_tag();
    sstep_out_enter(tag >= 0 ? tag : (long)pid);
    spmd(ctx, pid, g->P, args);
    sstep_out_leave();
    pt_leave(g, pid, ctx);
    lpf_err_t rc = pt_wait_all_gone(g);
    pt_group_release(g);
    return rc;
}

lpf_err_t pt_rehook(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args)
{
    struct pt_group *g = ctx->group;
    if (ctx->pid == 0)
        atomic_store_explicit(&g->child, pt_group_new(g->P), memory_order_relaxed);
    uint64_t all;
    if (pt_barrier(g, ctx->pid, F_REHOOK, 0, &all, NULL)) {
        /* a peer left or did something else: the parent section failed */
        if (ctx->pid == 0) pt_group_free(atomic_load_explicit(&g->child, memory_order_relaxed));
        ctx->failed = 1;
        pt_leave(g, ctx->pid, ctx);
        return LPF_ERR_FATAL;
    }
    struct pt_group *child = atomic_load_explicit(&g->child, memory_order_relaxed);
    if (!child) return LPF_ERR_OUT_OF_MEMORY;   /* the same on every process */
    return pt_run_hooked(child, ctx->pid, spmd, args);
}

/* lpf_pthread_initialize: a rendezvous of nprocs threads. Only one group may
 * be inside it at a time (the API names no group). */
struct pt_init_shared {
    lpf_pid_t nprocs;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    lpf_pid_t arrived;
    uint64_t hooks_created;      /* hook generations with a group */
    struct pt_group *current;    /* group of the latest generation */
    _Atomic int refs;            /* init objects alive */
};

struct pt_init {
    struct sstep_init_header hdr;
    struct pt_init_shared *sh;
    lpf_pid_t pid;
    uint64_t hooks;              /* hooks this thread has started */
};

static pthread_mutex_t rendezvous_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rendezvous_cond = PTHREAD_COND_INITIALIZER;
static struct pt_init_shared *forming;
static lpf_pid_t forming_left;   /* threads yet to leave the rendezvous */

lpf_err_t lpf_pthread_initialize(lpf_pid_t pid, lpf_pid_t nprocs, lpf_init_t *init)
{
    if (init == NULL || nprocs == 0 || pid >= nprocs) return LPF_ERR_FATAL;
    struct pt_init *mine = calloc(1, sizeof *mine);
    if (!mine) return LPF_ERR_OUT_OF_MEMORY;
    mine->hdr.magic = SSTEP_INIT_MAGIC;
    mine->hdr.engine = &sstep_pthread_engine;
    mine->pid = pid;

    pthread_mutex_lock(&rendezvous_lock);
    /* wait until a previous group has fully left the rendezvous */
    while (forming && (forming->arrived == forming->nprocs || forming->nprocs != nprocs))
        pthread_cond_wait(&rendezvous_cond, &rendezvous_lock);
    if (!forming) {
        struct pt_init_shared *sh = calloc(1, sizeof *sh);
        if (!sh) {
            pthread_mutex_unlock(&rendezvous_lock);
            free(mine);
            return LPF_ERR_OUT_OF_MEMORY;
        }
        sh->nprocs = nprocs;
        pthread_mutex_init(&sh->lock, NULL);
        pthread_cond_init(&sh->cond, NULL);
        atomic_store_explicit(&sh->refs, (int)nprocs, memory_order_relaxed);
        forming = sh;
        forming_left = nprocs;
    }
    struct pt_init_shared *sh = forming;
    sh->arrived++;
    if (sh->arrived == nprocs) pthread_cond_broadcast(&rendezvous_cond);
    while (sh->arrived < nprocs) pthread_cond_wait(&rendezvous_cond, &rendezvous_lock);
    if (--forming_left == 0) {
        forming = NULL;
        pthread_cond_broadcast(&rendezvous_cond);
    }
    pthread_mutex_unlock(&rendezvous_lock);
    mine->sh = sh;
    *init = mine;
    return LPF_SUCCESS;
}

lpf_err_t lpf_pthread_finalize(lpf_init_t init)
{
    struct pt_init *mine = init;
    if (!mine || mine->hdr.magic != SSTEP_INIT_MAGIC || mine->hdr.engine != &sstep_pthread_engine)
        return LPF_ERR_FATAL;
    struct pt_init_shared *sh = mine->sh;
    mine->hdr.magic = 0;
    free(mine);
    if (atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&sh->lock);
        pthread_cond_destroy(&sh->cond);
        free(sh);
    }
    return LPF_SUCCESS;
}

lpf_err_t pt_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
{
    struct pt_init *mine = init;
    struct pt_init_shared *sh = mine->sh;
    uint64_t gen = ++mine->hooks;
    /* the first thread to start hook number `gen` makes its group; no thread
     * can start hook gen+1 before all have finished hook gen */
    pthread_mutex_lock(&sh->lock);
    if (sh->hooks_created < gen) {
        sh->current = pt_group_new(sh->nprocs);
        sh->hooks_created = gen;
    }
    struct pt_group *g = sh->current;
    pthread_mutex_unlock(&sh->lock);
    if (!g) return LPF_ERR_FATAL;
    /* the user's threads now act as BSP processes: count them for the
     * spin-or-yield decision (the caller of the program is counted already) */
    if (mine->pid != 0) atomic_fetch_add_explicit(&pt_live_procs, 1, memory_order_relaxed);
    lpf_err_t rc = pt_run_hooked(g, mine->pid, spmd, args);
    if (mine->pid != 0) atomic_fetch_sub_explicit(&pt_live_procs, 1, memory_order_relaxed);
    return rc;
}
