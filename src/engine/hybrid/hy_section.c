/*
 * The hybrid engine's sections: exec, nested sections, hook
 * (<lpf/hybrid.h>), direct get, abort. The sync is in hy_sync.c; the
 * design in docs/hybrid.md.
 *
 * bsprun --engine hybrid -n P --threads-per-rank T starts ceil(P/T) MPI
 * ranks with SUPERSTEP_ENGINE=hybrid; the MPI engine's start-up runs main on
 * rank 0 and keeps the others serving (mpi_boot.c). An lpf_exec of P
 * processes from the root context then starts a rank-level MPI section of
 * R = ceil(P/T) ranks whose SPMD function (hy_rank_main) starts the rank's
 * threads; pids are rank-major (rank r: r*T .. r*T+T-1, the last rank may
 * have fewer). With one rank the section is an ordinary pthread section,
 * with one thread per rank an ordinary MPI section (the hybrid sync would
 * only add barriers); SUPERSTEP_HYBRID_GENERAL=1 runs the hybrid sync in
 * those cases too (tests). Sections nested in a hybrid section run on
 * threads of their rank (the pthread engine).
 */
#include "hybrid_internal.h"
#include "../../core/profile.h"
#include "../../core/checked.h"
#include "../../core/output.h"

#include <lpf/hybrid.h>
#include <lpf/mpi.h>
#include <stdio.h>
#include <unistd.h>

pthread_mutex_t hy_mpi_lock = PTHREAD_MUTEX_INITIALIZER;

/* a hybrid section spans this process's ranks (only one at a time) */
static _Atomic int hy_active;

struct hy_cfg {
    uint32_t P, T, F, pad_;
};

static int force_general(void)
{
    const char *v = getenv("SUPERSTEP_HYBRID_GENERAL");
    return v && *v && strcmp(v, "0") != 0;
}

static int want_stats(void)
{
    const char *v = getenv("SUPERSTEP_HYBRID_STATS");
    return v && *v && strcmp(v, "0") != 0;
}

/* The rank-level context is the engine's own: no profile part, no checks
 * of its own (the threads' contexts carry them). */
static void internalize(struct sstep_ctx *R, lpf_pid_t T, lpf_pid_t P)
{
    R->rank_stride = T;
    R->rank_P = P;
    sstep_prof_drop(R);
    if (R->chk) sstep_chk_detach(R);
    R->checked = 0;
    R->chk = NULL;
    R->q.limit = SIZE_MAX;
}

/* the rank-level context's way to its threads' noc slots (lx_noc.c) */
static struct sstep_ctx *rank_thread(void *arg, lpf_pid_t u)
{
    struct hy_rank *rk = arg;
    return u < rk->nt ? rk->th[u].ctx : NULL;
}

static struct hy_rank *rank_new(const struct hy_cfg *c, lpf_pid_t R, lpf_pid_t r,
        struct sstep_ctx *rankctx, lpf_spmd_t spmd, lpf_args_t args)
{
    struct hy_rank *rk = aligned_alloc(SSTEP_CACHELINE,
            (sizeof *rk + SSTEP_CACHELINE - 1) / SSTEP_CACHELINE * SSTEP_CACHELINE);
    if (!rk) return NULL;
    memset(rk, 0, sizeof *rk);
    pthread_mutex_init(&rk->range_lock, NULL);
    rk->P = c->P;
    rk->T = c->T;
    rk->R = R;
    rk->r = r;
    rk->base = r * c->T;
    rk->nt = c->P - rk->base < c->T ? c->P - rk->base : c->T;
    rk->rank = rankctx;
    rk->spmd = spmd;
    rk->args = args;
    rk->args.input = NULL;
    rk->args.input_size = 0;
    rk->args.output = NULL;
    rk->args.output_size = 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned local = sstep_mpi.local_size ? sstep_mpi.local_size : 1;
    rk->oversub = sstep_mpi.oversub || (cores > 0 && (long)local * rk->nt > cores);
    size_t tb = (size_t)rk->nt * sizeof *rk->th;
    rk->th = aligned_alloc(SSTEP_CACHELINE, tb);
    if (!rk->th) {
        pthread_mutex_destroy(&rk->range_lock);
        free(rk);
        return NULL;
    }
    memset(rk->th, 0, tb);
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        lpf_pid_t pid = rk->base + t;
        struct sstep_ctx *ctx = sstep_ctx_create(pid, c->P, &sstep_hybrid_engine, rk);
        if (!ctx) {
            for (lpf_pid_t s = 0; s < t; ++s) sstep_ctx_destroy(rk->th[s].ctx);
            free(rk->th);
            pthread_mutex_destroy(&rk->range_lock);
            free(rk);
            return NULL;
        }
        ctx->free_p = c->F >= c->P ? sstep_share(c->F, c->P, pid) : 1;
        ctx->engine_proc = &rk->th[t];
        rk->th[t].ctx = ctx;
        rk->th[t].rk = rk;
    }
    if (rankctx) {
        rankctx->rank_thread = rank_thread;
        rankctx->rank_thread_arg = rk;
    }
    return rk;
}

static void *thread_main(void *arg)
{
    struct hy_thread *me = arg;
    struct hy_rank *rk = me->rk;
    sstep_out_enter(me->ctx->pid);
    rk->spmd(me->ctx, me->ctx->pid, rk->P, rk->args);
    sstep_out_leave();
    hy_leave(rk, me);
    return NULL;
}

/* start threads 1..nt-1; one that cannot start counts as gone at once, so
 * that the section fails instead of hanging */
static void start_threads(struct hy_rank *rk)
{
    for (lpf_pid_t t = 1; t < rk->nt; ++t) {
        struct hy_thread *x = &rk->th[t];
        if (pthread_create(&x->tid, NULL, thread_main, x) == 0) {
            x->started = 1;
        } else {
            sstep_warn("hybrid engine: rank %u could not start thread %u of %u (out of "
                    "memory): the section returns LPF_ERR_OUT_OF_MEMORY", rk->r, t, rk->nt);
            rk->nostart = 1;
            hy_leave(rk, x);
        }
    }
}

/* thread 0 left its SPMD function: wait for the others, the section's
 * result on this rank, free everything */
static lpf_err_t rank_finish(struct hy_rank *rk, int joined)
{
    hy_leave(rk, &rk->th[0]);
    if (joined) {
        for (lpf_pid_t t = 1; t < rk->nt; ++t)
            if (rk->th[t].started) pthread_join(rk->th[t].tid, NULL);
    } else {
        hy_wait_all_gone(rk);
    }
    lpf_err_t rc = LPF_SUCCESS;
    const struct sstep_ctx *c0 = rk->th[0].ctx;
    const uint64_t s0 = c0->superstep - c0->range_steps;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        const struct sstep_ctx *c = rk->th[t].ctx;
        if (c->failed || c->superstep - c->range_steps != s0) rc = LPF_ERR_FATAL;
    }
    if (rk->rank && want_stats()) {
        const struct mpi_group *g = rk->rank->group;
        fprintf(stderr, "superstep hybrid: rank %u of %u, %u threads: %llu syncs, "
                "%llu messages to other ranks (%.2f per sync and peer)\n",
                rk->r, rk->R, rk->nt, (unsigned long long)rk->syncs,
                (unsigned long long)g->sent,
                rk->syncs && rk->R > 1 ? (double)g->sent / (double)rk->syncs / (rk->R - 1) : 0.0);
    }
    if (rk->nostart) rc = LPF_ERR_OUT_OF_MEMORY;
    if (rc != LPF_SUCCESS && rk->rank) rk->rank->failed = 1;
    hy_range_free(rk);
    pthread_mutex_destroy(&rk->range_lock);
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        free(rk->th[t].stage);
        sstep_ctx_destroy(rk->th[t].ctx);
    }
    free(rk->th);
    free(rk->checks);
    free(rk);
    return rc;
}

/* ------------------------------------------------------------------ */
/* exec                                                                 */
/* ------------------------------------------------------------------ */

/* ranks other than 0: the rank-level section's SPMD function */
static void hy_rank_main(lpf_t c, lpf_pid_t r, lpf_pid_t R, lpf_args_t args)
{
    struct sstep_ctx *rankctx = (struct sstep_ctx *)c;
    struct mpi_group *g = rankctx->group;
    struct hy_cfg cfg;
    if (MPI_Bcast(&cfg, sizeof cfg, MPI_BYTE, 0, g->comm) != MPI_SUCCESS || args.f_size < 1
            || cfg.T == 0 || (uint64_t)r * cfg.T >= cfg.P) {
        rankctx->failed = 1;
        return;
    }
    internalize(rankctx, cfg.T, cfg.P);
    lpf_spmd_t spmd = (lpf_spmd_t)args.f_symbols[0];
    lpf_args_t ua = { NULL, 0, NULL, 0, args.f_size > 1 ? args.f_symbols + 1 : NULL,
            args.f_size - 1 };
    struct hy_rank *rk = spmd ? rank_new(&cfg, R, r, rankctx, spmd, ua) : NULL;
    if (!rk) {
        sstep_warn("hybrid engine: rank %u cannot start its threads (out of memory, or "
                "the SPMD function is not in this program)", r);
        rankctx->failed = 1;
        return;
    }
    atomic_store(&hy_active, 1);
    start_threads(rk);
    sstep_out_enter(rk->base);
    spmd(rk->th[0].ctx, rk->base, rk->P, ua);
    (void)rank_finish(rk, 1);
    sstep_out_leave();
    atomic_store(&hy_active, 0);
}

static lpf_err_t hy_exec_begin(struct sstep_ctx *parent, lpf_pid_t P, lpf_spmd_t spmd,
        lpf_args_t args, struct sstep_ctx **ctx0)
{
    if (parent != sstep_root_ctx() || !sstep_mpi.master || !sstep_mpi.hybrid_T
            || atomic_load(&hy_active) || P <= 1
            || __atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED))
        return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
    lpf_pid_t size = (lpf_pid_t)sstep_mpi.size;
    lpf_pid_t T = sstep_mpi.hybrid_T;
    if (P > size * T) T = (P + size - 1) / size;
    lpf_pid_t R = (P + T - 1) / T;
    if (!force_general()) {
        if (R == 1) return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
        if (T == 1) return sstep_mpi_engine.exec_begin(parent, P, spmd, args, ctx0);
    }
    struct hy_cfg cfg = { P, T, parent->free_p, 0 };
    struct sstep_ctx *rankctx = NULL;
    if (R > 1) {
        lpf_func_t *fs = malloc((args.f_size + 1) * sizeof *fs);
        if (!fs) return LPF_ERR_OUT_OF_MEMORY;
        fs[0] = (lpf_func_t)spmd;
        for (size_t i = 0; i < args.f_size; ++i) fs[1 + i] = args.f_symbols[i];
        lpf_args_t ra = { NULL, 0, NULL, 0, fs, args.f_size + 1 };
        /* another thread's section holds the ranks: this one on threads */
        if (!mpi_top_acquire()) {
            free(fs);
            return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
        }
        lpf_err_t rc = mpi_exec_begin_locked(parent, R, hy_rank_main, ra, &rankctx);
        free(fs);
        if (rc != LPF_SUCCESS) {
            mpi_top_release();
            return rc;
        }
        internalize(rankctx, T, P);
        struct mpi_group *g = rankctx->group;
        MPI_Bcast(&cfg, sizeof cfg, MPI_BYTE, 0, g->comm);
    }
    struct hy_rank *rk = rank_new(&cfg, R, 0, rankctx, spmd, args);
    if (!rk) {
        if (rankctx) {
            rankctx->failed = 1;
            (void)sstep_mpi_engine.exec_end(rankctx);
        }
        return LPF_ERR_OUT_OF_MEMORY;
    }
    atomic_store(&hy_active, 1);
    start_threads(rk);
    sstep_out_enter(rk->base);
    *ctx0 = rk->th[0].ctx;
    return LPF_SUCCESS;
}

static lpf_err_t hy_exec_end(struct sstep_ctx *ctx0)
{
    struct hy_thread *me = ctx0->engine_proc;
    struct hy_rank *rk = me->rk;
    struct sstep_ctx *rankctx = rk->rank;
    lpf_err_t rc = rank_finish(rk, 1);
    sstep_out_leave();   /* (after the rank's other threads) */
    if (rankctx) {
        lpf_err_t r2 = sstep_mpi_engine.exec_end(rankctx);
        if (r2 != LPF_SUCCESS && rc == LPF_SUCCESS) rc = r2;
    }
    atomic_store(&hy_active, 0);
    return rc;
}

/* ------------------------------------------------------------------ */
/* lpf_rehook: a new section on the same threads and ranks              */
/* ------------------------------------------------------------------ */

struct rehook_run {
    struct hy_rank *old;
    lpf_spmd_t spmd;
    lpf_args_t args;
    lpf_err_t rc;
    int released;
};

/* the leader: make the new section's rank, let the others in, run as its
 * first thread */
static void rehook_rank(struct rehook_run *h, struct sstep_ctx *rankctx)
{
    struct hy_rank *old = h->old;
    struct hy_cfg cfg = { old->P, old->T, old->P, 0 };
    if (rankctx) internalize(rankctx, cfg.T, cfg.P);
    struct hy_rank *rk = rank_new(&cfg, old->R, old->r, rankctx, h->spmd, h->args);
    old->child = rk;
    h->released = 1;
    hy_meet_release(old);
    if (!rk) {
        if (rankctx) rankctx->failed = 1;
        h->rc = LPF_ERR_OUT_OF_MEMORY;
        return;
    }
    for (lpf_pid_t t = 0; t < rk->nt; ++t) rk->th[t].ctx->in_hook = 1;
    h->spmd(rk->th[0].ctx, rk->base, rk->P, h->args);
    h->rc = rank_finish(rk, 0);
}

static void rehook_rank_main(lpf_t c, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)s; (void)p;
    rehook_rank((struct rehook_run *)a.input, (struct sstep_ctx *)c);
}

static void rehook_made(void *arg)
{
    struct rehook_run *h = arg;
    if (h->old->rank) {
        /* every rank's leader rehooks the rank-level section */
        lpf_args_t ra = { h, sizeof *h, NULL, 0, NULL, 0 };
        lpf_err_t rc = sstep_mpi_engine.rehook(h->old->rank, rehook_rank_main, ra);
        if (rc != LPF_SUCCESS) h->rc = rc;
    } else {
        rehook_rank(h, NULL);
    }
    if (!h->released) {
        h->old->child = NULL;
        hy_meet_release(h->old);
        if (h->rc == LPF_SUCCESS) h->rc = LPF_ERR_FATAL;
    }
}

static lpf_err_t hy_rehook(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args)
{
    struct hy_thread *me = ctx->engine_proc;
    struct hy_rank *rk = me->rk;
    if (me == &rk->th[0]) {
        struct rehook_run h = { rk, spmd, args, LPF_SUCCESS, 0 };
        if (hy_meet(rk, me, rehook_made, &h)) {
            ctx->failed = 1;
            return LPF_ERR_FATAL;
        }
        return h.rc;
    }
    if (hy_meet(rk, me, NULL, NULL)) {
        ctx->failed = 1;
        return LPF_ERR_FATAL;
    }
    struct hy_rank *child = rk->child;
    if (!child) return LPF_ERR_FATAL;
    struct hy_thread *x = &child->th[me - rk->th];
    spmd(x->ctx, x->ctx->pid, child->P, args);
    lpf_err_t rc = x->ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
    hy_leave(child, x);   /* after this, the leader may free the new rank */
    return rc;
}

/* ------------------------------------------------------------------ */
/* <lpf/hybrid.h>: hook threads of existing MPI ranks                   */
/* ------------------------------------------------------------------ */

/* The threads of a node meet in lpf_hybrid_initialize (one group at a
 * time per process); at every lpf_hook, thread 0 starts the rank-level
 * MPI section and publishes the rank, the others wait for it. */
struct hy_meet {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    lpf_pid_t nthreads, arrived, left;
    uint64_t hooks;            /* hooks thread 0 has published */
    struct hy_rank *rk;        /* the current hook's rank */
    lpf_err_t rc;              /* thread 0's failure to start it */
    int refs;
};

struct hy_init {
    struct sstep_init_header hdr;
    struct hy_meet *meet;
    lpf_init_t mpi;
    lpf_pid_t tid, nthreads, node, nnodes;
    uint64_t hooks;            /* hooks this thread has joined */
};

static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meet_cond = PTHREAD_COND_INITIALIZER;
static struct hy_meet *forming;

lpf_err_t lpf_hybrid_initialize(lpf_init_t thread, lpf_init_t mpi, lpf_pid_t threadId,
        lpf_pid_t nThreads, lpf_pid_t nodeId, lpf_pid_t nNodes, lpf_init_t *init)
{
    const struct sstep_init_header *th = thread;
    const struct sstep_init_header *mh = mpi;
    if (init == NULL || nThreads == 0 || threadId >= nThreads || nNodes == 0 || nodeId >= nNodes
            || (uint64_t)nThreads * nNodes > LPF_MAX_P) {
        sstep_warn("lpf_hybrid_initialize: invalid arguments (thread %u of %u, node %u of %u)",
                threadId, nThreads, nodeId, nNodes);
        return LPF_ERR_FATAL;
    }
    if (th == LPF_INIT_NONE || th->magic != SSTEP_INIT_MAGIC
            || th->engine != &sstep_pthread_engine) {
        sstep_warn("lpf_hybrid_initialize: thread %u: `thread` is not an lpf_init_t of "
                "lpf_pthread_initialize", threadId);
        return LPF_ERR_FATAL;
    }
    if (threadId == 0 && nNodes > 1) {
        if (mh == LPF_INIT_NONE || mh->magic != SSTEP_INIT_MAGIC
                || mh->engine != &sstep_mpi_engine) {
            sstep_warn("lpf_hybrid_initialize: node %u: `mpi` of thread 0 is not an lpf_init_t "
                    "of lpf_mpi_initialize_*", nodeId);
            return LPF_ERR_FATAL;
        }
        const struct mpi_init *x = mpi;
        if (x->pid != nodeId || x->nprocs != nNodes) {
            sstep_warn("lpf_hybrid_initialize: node %u of %u, but the MPI communicator says "
                    "rank %u of %u", nodeId, nNodes, x->pid, x->nprocs);
            return LPF_ERR_FATAL;
        }
    }
    struct hy_init *me = calloc(1, sizeof *me);
    if (!me) return LPF_ERR_OUT_OF_MEMORY;
    me->hdr.magic = SSTEP_INIT_MAGIC;
    me->hdr.engine = &sstep_hybrid_engine;
    me->mpi = threadId == 0 ? mpi : LPF_INIT_NONE;
    me->tid = threadId;
    me->nthreads = nThreads;
    me->node = nodeId;
    me->nnodes = nNodes;
    pthread_mutex_lock(&meet_lock);
    while (forming && (forming->arrived == forming->nthreads || forming->nthreads != nThreads))
        pthread_cond_wait(&meet_cond, &meet_lock);
    if (!forming) {
        struct hy_meet *m = calloc(1, sizeof *m);
        if (!m) {
            pthread_mutex_unlock(&meet_lock);
            free(me);
            return LPF_ERR_OUT_OF_MEMORY;
        }
        pthread_mutex_init(&m->lock, NULL);
        pthread_cond_init(&m->cond, NULL);
        m->nthreads = nThreads;
        m->refs = (int)nThreads;
        forming = m;
    }
    struct hy_meet *m = forming;
    me->meet = m;
    if (++m->arrived == nThreads) pthread_cond_broadcast(&meet_cond);
    while (m->arrived < nThreads) pthread_cond_wait(&meet_cond, &meet_lock);
    if (++m->left == nThreads) {
        forming = NULL;
        pthread_cond_broadcast(&meet_cond);
    }
    pthread_mutex_unlock(&meet_lock);
    *init = me;
    return LPF_SUCCESS;
}

lpf_err_t lpf_hybrid_finalize(lpf_init_t init)
{
    struct hy_init *me = init;
    if (!me || me->hdr.magic != SSTEP_INIT_MAGIC || me->hdr.engine != &sstep_hybrid_engine)
        return LPF_ERR_FATAL;
    struct hy_meet *m = me->meet;
    pthread_mutex_lock(&m->lock);
    int last = --m->refs == 0;
    pthread_mutex_unlock(&m->lock);
    if (last) {
        pthread_mutex_destroy(&m->lock);
        pthread_cond_destroy(&m->cond);
        free(m);
    }
    me->hdr.magic = 0;
    free(me);
    return LPF_SUCCESS;
}

struct hook_run {
    struct hy_init *me;
    lpf_spmd_t spmd;
    lpf_args_t args;
};

/* thread 0 of a node: make the rank, publish it, run as its first thread */
static void hook_rank(struct hy_init *me, struct sstep_ctx *rankctx, lpf_spmd_t spmd,
        lpf_args_t args)
{
    struct hy_meet *m = me->meet;
    struct hy_cfg cfg = { me->nthreads * me->nnodes, me->nthreads, me->nthreads * me->nnodes, 0 };
    if (rankctx) internalize(rankctx, cfg.T, cfg.P);
    struct hy_rank *rk = rank_new(&cfg, me->nnodes, me->node, rankctx, spmd, args);
    pthread_mutex_lock(&m->lock);
    m->rk = rk;
    m->rc = rk ? LPF_SUCCESS : LPF_ERR_OUT_OF_MEMORY;
    m->hooks++;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    if (!rk) {
        if (rankctx) rankctx->failed = 1;
        return;
    }
    for (lpf_pid_t t = 1; t < rk->nt; ++t) rk->th[t].started = 0;
    spmd(rk->th[0].ctx, rk->base, rk->P, args);
    lpf_err_t rc = rank_finish(rk, 0);
    if (rc != LPF_SUCCESS && rankctx) rankctx->failed = 1;
    m->rc = rc;
}

static void hook_rank_main(lpf_t c, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)s; (void)p;
    const struct hook_run *h = args.input;
    hook_rank(h->me, (struct sstep_ctx *)c, h->spmd, h->args);
}

static lpf_err_t hy_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
{
    struct hy_init *me = init;
    struct hy_meet *m = me->meet;
    uint64_t hook = ++me->hooks;
    if (me->tid == 0) {
        if (me->nnodes == 1) {
            hook_rank(me, NULL, spmd, args);
            return m->rc;
        }
        struct hook_run h = { me, spmd, args };
        lpf_args_t ra = { &h, sizeof h, NULL, 0, NULL, 0 };
        lpf_err_t rc = sstep_mpi_engine.hook(me->mpi, hook_rank_main, ra);
        if (rc != LPF_SUCCESS) return rc;
        return m->rc;
    }
    pthread_mutex_lock(&m->lock);
    while (m->hooks < hook) pthread_cond_wait(&m->cond, &m->lock);
    struct hy_rank *rk = m->rk;
    pthread_mutex_unlock(&m->lock);
    if (!rk) return LPF_ERR_FATAL;
    struct hy_thread *x = &rk->th[me->tid];
    struct sstep_ctx *ctx = x->ctx;
    spmd(ctx, ctx->pid, rk->P, args);
    lpf_err_t rc = ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
    hy_leave(rk, x);   /* after this, thread 0 may free the rank */
    return rc;
}

/* ------------------------------------------------------------------ */
/* direct get, remote size, abort, machine                              */
/* ------------------------------------------------------------------ */

static lpf_err_t hy_direct_get(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot,
        size_t off, void *dst, size_t size)
{
    struct hy_rank *rk = ((struct hy_thread *)ctx->engine_proc)->rk;
    if (pid - rk->base < rk->nt) {
        struct sstep_ctx *src = rk->th[pid - rk->base].ctx;
        char *from = sstep_resolve_global(src, slot, off, size);
        if (!from) sstep_remote_range_error(src, "bsp_direct_get", ctx->pid, slot, off, size);
        sstep_copy(dst, from, size);
        return LPF_SUCCESS;
    }
    /* another rank: through the rank-level context, which one thread at a
     * time may use outside the leader's sync */
    const uint32_t rs = hy_rank_slot(ctx, "bsp_direct_get", rk->T, slot, pid);
    pthread_mutex_lock(&hy_mpi_lock);
    lpf_err_t rc = sstep_mpi_engine.direct_get(rk->rank, pid / rk->T, rs, off, dst, size);
    pthread_mutex_unlock(&hy_mpi_lock);
    return rc;
}

static size_t hy_remote_size(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot)
{
    struct hy_rank *rk = ((struct hy_thread *)ctx->engine_proc)->rk;
    if (pid - rk->base < rk->nt) {
        struct sstep_slot_array *a = sstep_slots(&rk->th[pid - rk->base].ctx->globals);
        return slot < a->size && a->e[slot].state == SSTEP_SLOT_GLOBAL ? a->e[slot].size : SIZE_MAX;
    }
    /* noc slots are never announced: their owners check them */
    if (!rk->rank || (slot & SSTEP_NOC_BIT) || (uint64_t)slot * rk->T >= UINT32_MAX)
        return SIZE_MAX;
    return sstep_mpi_engine.remote_size(rk->rank, pid / rk->T, slot * rk->T + pid % rk->T);
}

/* Exactly one thread of this process ends it: MPI_Abort (like any MPI
 * call at MPI_THREAD_SERIALIZED) must not run in two threads at once, and
 * two threads that find an error at the same moment both get here. The
 * others wait to be ended with the process (their line is printed). */
static void hy_abort(struct sstep_ctx *ctx, int status)
{
    static _Atomic int ending;
    sstep_out_flush_self();
    if (atomic_exchange(&ending, 1)) {
        for (;;) pause();
    }
    sstep_mpi_engine.abort(ctx, status);
}

static lpf_pid_t hy_machine_p(void)
{
    if (sstep_mpi.started && sstep_mpi.size > 0 && sstep_mpi.hybrid_T)
        return (lpf_pid_t)sstep_mpi.hybrid_P;
    return sstep_machine_p();
}

const struct sstep_engine sstep_hybrid_engine = {
    .name = "hybrid",
    .machine_p = hy_machine_p,
    .hook = hy_hook,
    .exec_begin = hy_exec_begin,
    .exec_end = hy_exec_end,
    .rehook = hy_rehook,
    .sync = hy_sync,
    .direct_get = hy_direct_get,
    .remote_size = hy_remote_size,
    .sync_range = hy_sync_range,
    .abort = hy_abort,
};
