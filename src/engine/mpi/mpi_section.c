/*
 * The MPI engine: sections (entering, leaving, nesting), exec, hook and
 * rehook, direct gets, abort; the engine's table of operations.
 */
#define _GNU_SOURCE
#include "mpi_group.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

static struct mpi_group *top_section;   /* innermost section of this process */

int mpi_sections_active(void)
{
    return top_section != NULL;
}

/* ------------------------------------------------------------------ */
/* Leaving a section                                                    */
/* ------------------------------------------------------------------ */

/* The sparse sync's leaving: barriers saying "gone" until one finds every
 * process gone (one in a sync or rehook meanwhile fails it, and leaves
 * too). Its result: all did the same number of supersteps, none failed. */
static const unsigned char gone_byte = 1;

static void answer_gone(struct mpi_group *g, lpf_pid_t q)
{
    MPI_Isend(&gone_byte, 1, MPI_BYTE, (int)q, T_GONEREP, g->comm, reqv_push(&g->rdg));
}

int mpi_sparse_gone(struct mpi_group *g, lpf_pid_t q)
{
    if (SSTEP_UNLIKELY(!g->gask)) {
        g->gask = calloc(g->P, 1);
        g->gans = calloc(g->P, 1);
        g->gaskr = malloc(2 * g->P * sizeof *g->gaskr);
        if (!g->gask || !g->gans || !g->gaskr)
            sstep_fatal(g->ctx, "sstep_sync_range", "out of memory (who has left)");
        for (lpf_pid_t k = 0; k < 2 * g->P; ++k) g->gaskr[k] = MPI_REQUEST_NULL;
    }
    if (g->gask[q] == 0) {
        static const struct dgreq ask = { DG_ASK, DG_ASK, 0, 0, 0 };
        MPI_Irecv(&g->gans[q], 1, MPI_BYTE, (int)q, T_GONEREP, g->comm, &g->gaskr[2 * q + 1]);
        MPI_Issend(&ask, sizeof ask, MPI_BYTE, (int)q, T_DGREQ, g->comm, &g->gaskr[2 * q]);
        g->gask[q] = 1;
        return 0;
    }
    if (g->gask[q] == 1) {
        int done = 0;
        MPI_Test(&g->gaskr[2 * q + 1], &done, MPI_STATUS_IGNORE);
        if (!done) return 0;
        g->gask[q] = 2;
    }
    return 1;
}

/* leaving with the sparse sync: answer who asked whether we left, and
 * (half 0) have our own questions taken before the barriers (a process
 * in a sync or leaving takes them), or (half 1) answered after them
 * (every process answers when it leaves) */
static void sparse_answers(struct mpi_group *g, int half)
{
    g->leaving = 1;
    for (size_t i = 0; i < g->nask; ++i) answer_gone(g, g->askers[i]);
    g->nask = 0;
    if (!g->gask) return;
    struct reqv v = { NULL, 0, 0 };
    for (lpf_pid_t q = 0; q < g->P; ++q)
        if (g->gaskr[2 * q + half] != MPI_REQUEST_NULL) *reqv_push(&v) = g->gaskr[2 * q + half];
    mpi_wait_all(g, &v);
    free(v.r);
    for (lpf_pid_t q = 0; q < g->P; ++q) g->gaskr[2 * q + half] = MPI_REQUEST_NULL;
}

static lpf_err_t leave_sparse(struct mpi_group *g, struct sstep_ctx *ctx, int ranged)
{
    sparse_answers(g, 0);
    const uint64_t steps = ctx->superstep - ctx->range_steps;
    const uint32_t fl = B_GONE | (ctx->failed ? B_FAILED : 0) | (ranged ? B_RANGE : 0);
    struct bmsg m = { steps, steps, g->pid, g->pid, fl, fl }, res;
    do {
        mpi_pool_post(g, g->episode, 0);
        mpi_sparse_barrier(g, &m, &res);
        mpi_pool_stop(g);
    } while (!(res.all & B_GONE));
    sparse_answers(g, 1);
    lpf_err_t rc = (res.any & B_FAILED) || res.vmin != res.vmax ? LPF_ERR_FATAL : LPF_SUCCESS;
    if (res.any & B_RANGE) {
        /* who sent range packets: their final ones must be received */
        unsigned char mine = ranged ? 1 : 0, *all = malloc(g->P);
        if (!all) sstep_fatal(ctx, "lpf_exec", "out of memory (leaving the section)");
        MPI_Allgather(&mine, 1, MPI_BYTE, all, 1, MPI_BYTE, g->comm);
        for (lpf_pid_t q = 0; q < g->P; ++q)
            if (q != g->pid && all[q]) mpi_range_need(g, q);
        free(all);
    }
    mpi_range_drain(g);
    mpi_serve_dgets(g);
    mpi_wait_all(g, &g->rdg);
    return rc;
}

/* Tell every peer we left, then receive from every peer until its own
 * "gone". Returns the section's result as every process sees it. */
static lpf_err_t leave(struct mpi_group *g, struct sstep_ctx *ctx)
{
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    const int par = (int)(e & 1);
    lpf_err_t rc = ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
    if (P == 1) return rc;
    /* range syncs (mpi_range.c): our final range packet goes first */
    const int ranged = mpi_range_depart(g);
    if (g->sparse) return leave_sparse(g, ctx, ranged);
    if (g->shm) {
        struct shm_line *ml = line_of(g, me);
        const int gp = (int)(g->gen & 1);
        ml->final_steps[gp] = ctx->superstep - ctx->range_steps;
        ml->final_failed[gp] = ctx->failed ? 1u : 0u;
        ml->final_range[gp] = (uint64_t)ranged;
        /* a word of this section (the very first sync may not have
         * happened: then it still belongs to an older one) */
        for (int k = 0; k < 2; ++k) {
            uint64_t old = atomic_load_explicit(&ml->word[k], memory_order_relaxed);
            uint64_t nw = (old >> 40) == (g->gen & 0xffffffu) ? old | W_GONE
                                                             : mkword(g->gen, UINT64_MAX, W_GONE);
            atomic_store_explicit(&ml->word[k], nw, memory_order_release);
        }
        struct mpi_wait w;
        mpi_wait_init(&w, NAP_SYNC_NS);
        unsigned it = 0;
        struct mpi_watch wt = { 0, 0 };
        const uint64_t mine_gen = g->gen & 0xffffffu;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me) continue;
            const struct shm_line *l = line_of(g, q);
            for (;;) {
                uint64_t v = atomic_load_explicit(&l->word[0], memory_order_acquire);
                uint64_t vg = v >> 40;
                if ((vg == mine_gen && (v & W_GONE)) || vg == ((g->gen + 1) & 0xffffffu)) break;
                if ((++it & 255) == 0) mpi_serve_dgets(g);
                if ((it & 1023) == 0) {
                    /* the watchdog: who has finished the section */
                    for (lpf_pid_t r = 0; r < P; ++r) {
                        uint64_t x = atomic_load_explicit(&line_of(g, r)->word[0], memory_order_acquire);
                        g->wflags_state[r] = r == me || ((x >> 40) == mine_gen && (x & W_GONE))
                                || (x >> 40) == ((g->gen + 1) & 0xffffffu) ? SSTEP_ARR_YES : SSTEP_ARR_NOT;
                    }
                    mpi_sync_watch(g, &wt, g->wflags_state);
                }
                mpi_wait_step(&w);
            }
            if (l->final_failed[gp] || l->final_steps[gp] != ctx->superstep - ctx->range_steps) rc = LPF_ERR_FATAL;
            if (l->final_range[gp]) mpi_range_need(g, q);
        }
        mpi_range_drain(g);
        mpi_serve_dgets(g);
        mpi_wait_all(g, &g->rdg);
        return rc;
    }
    struct fhdr gone;
    memset(&gone, 0, sizeof gone);
    gone.episode = e;
    gone.check = ctx->superstep - ctx->range_steps;
    gone.flags = H_GONE | H_EMPTY | (ctx->failed ? H_FAILED : 0) | (ranged ? H_RANGE : 0);
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        MPI_Isend(&gone, sizeof gone, MPI_BYTE, (int)q, TAG(T_FIRST, par), g->comm,
                reqv_push(&g->sfirst));
    }
    lpf_pid_t left = P - 1;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    struct mpi_watch wt = { 0, 0 };
    unsigned it = 0;
    for (;;) {
        int progress = 0;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me || g->got[q] != 1) continue;
            const struct fhdr *h = (const struct fhdr *)first_buf(g, par, q);
            progress = 1;
            if (h->flags & H_GONE) {
                g->got[q] = 2;
                left--;
                if ((h->flags & H_FAILED) || h->check != ctx->superstep - ctx->range_steps) rc = LPF_ERR_FATAL;
                if (h->flags & H_RANGE) mpi_range_need(g, q);
            } else {
                /* its message of the exchange we did not complete: drop it */
                g->got[q] = 0;
                MPI_Irecv(first_buf(g, par, q), (int)g->E, MPI_BYTE, (int)q, TAG(T_FIRST, par),
                        g->comm, &g->rfirst[q]);
            }
        }
        if (!left) break;
        int n = 0;
        MPI_Testsome((int)P, g->rfirst, &n, g->idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED) n = 0;
        for (int i = 0; i < n; ++i) g->got[g->idx[i]] = 1;
        if (!n) mpi_serve_dgets(g);
        if (!n && !progress) {
            mpi_wait_step(&w);
            if ((++it & 1023) == 0) {
                for (lpf_pid_t q = 0; q < P; ++q)
                    g->wflags_state[q] = q == me || g->got[q] == 2 ? SSTEP_ARR_YES : SSTEP_ARR_NOT;
                mpi_sync_watch(g, &wt, g->wflags_state);
            }
        }
    }
    mpi_range_drain(g);
    /* direct gets a peer sent before its "gone" have arrived by now */
    mpi_serve_dgets(g);
    mpi_wait_all(g, &g->sfirst);
    mpi_wait_all(g, &g->rdg);
    return rc;
}

static void push_section(struct mpi_group *g, struct sstep_ctx *ctx)
{
    g->ctx = ctx;
    g->outer = top_section;
    top_section = g;
}

static void pop_section(struct mpi_group *g)
{
    if (top_section == g) top_section = g->outer;
}

/* SUPERSTEP_MPI_STATS=1: one line per process and section on stderr */
static int want_stats(void)
{
    const char *v = getenv("SUPERSTEP_MPI_STATS");
    return v && *v && strcmp(v, "0") != 0;
}

/* pid leaves: drain, release group and context */
static lpf_err_t section_end(struct sstep_ctx *ctx)
{
    struct mpi_group *g = ctx->group;
    lpf_err_t rc = leave(g, ctx);
    if (want_stats())
        fprintf(stderr, "superstep mpi: process %u of %u (%s sync): %llu syncs, %llu messages "
                "sent in them; at most %llu in one sync without new registrations\n",
                g->pid, g->P, g->shm ? "on-node" : g->sparse ? "sparse" : "dense",
                (unsigned long long)g->nsyncs, (unsigned long long)g->sent,
                (unsigned long long)g->sync_max);
    pop_section(g);
    if (g->has_bwin) MPI_Win_free(&g->bwin);   /* every process gets here */
    mpi_group_free(g);
    sstep_ctx_destroy(ctx);
    return rc;
}

/* The program exits inside sections: leave them (in the failure state),
 * so that peers' syncs fail instead of waiting for us. */
void mpi_leave_all_sections(void)
{
    while (top_section) {
        struct mpi_group *g = top_section;
        top_section = g->outer;
        g->ctx->failed = 1;
        (void)leave(g, g->ctx);
    }
}

#ifdef SUPERSTEP_SMPI
/* MPI_Allreduce(MPI_MIN) of n <= 4 ints by recursive doubling over
 * point-to-point messages (tag T_START). Under SMPI 3.32 the first
 * MPI_Allreduce or MPI_Bcast on a communicator with its usual selectors
 * (ompi, mpich, mvapich2) first detects the hosts' layout: two ring
 * allgathers over all p processes, p^2 messages, at a real cost that grows
 * as p^3 (20 s at p = 512, hours at 4,096; docs/scale.md). This costs
 * 2 log2 p messages per process. */
static void smpi_allmin(int *v, int n, MPI_Comm comm)
{
    int me = 0, p = 1, t[4];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    int pw = 1;
    while (2 * pw <= p) pw *= 2;
    if (me >= pw) {   /* folded onto me - pw, which answers at the end */
        MPI_Send(v, n, MPI_INT, me - pw, T_START, comm);
        MPI_Recv(v, n, MPI_INT, me - pw, T_START, comm, MPI_STATUS_IGNORE);
        return;
    }
    if (me + pw < p) {
        MPI_Recv(t, n, MPI_INT, me + pw, T_START, comm, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; ++i) if (t[i] < v[i]) v[i] = t[i];
    }
    for (int m = 1; m < pw; m *= 2) {
        MPI_Sendrecv(v, n, MPI_INT, me ^ m, T_START, t, n, MPI_INT, me ^ m, T_START, comm,
                MPI_STATUS_IGNORE);
        for (int i = 0; i < n; ++i) if (t[i] < v[i]) v[i] = t[i];
    }
    if (me + pw < p) MPI_Send(v, n, MPI_INT, me + pw, T_START, comm);
}
#endif

/* Every process of a starting section: its group and context, or, where
 * one process lacks the memory for them (or for the shared-memory window:
 * shm is MPI_SHM_NOMEM), NULL on every process: the section returns
 * LPF_ERR_OUT_OF_MEMORY without running. */
static struct sstep_ctx *section_start(MPI_Comm comm, struct mpi_shm *shm, lpf_pid_t pid,
        lpf_pid_t P)
{
    struct mpi_group *g = shm == MPI_SHM_NOMEM ? NULL
            : mpi_group_new(comm, pid, P, sstep_mpi.oversub, shm);
    struct sstep_ctx *ctx = g ? sstep_ctx_create(pid, P, &sstep_mpi_engine, g) : NULL;
    /* and every process syncs the same way (SUPERSTEP_MPI_SPARSE*) */
    const int sp = g ? g->sparse : 0;
    int v[3] = { ctx != NULL, g ? sp : 1, g ? !sp : 1 };
#ifdef SUPERSTEP_SMPI
    smpi_allmin(v, 3, comm);
#else
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MIN, comm);
#endif
    int ok = v[0];
    if (ok && !v[1] && !v[2]) {
        if (pid == 0)
            sstep_warn("lpf_exec: SUPERSTEP_MPI_SPARSE or SUPERSTEP_MPI_SPARSE_MIN differ between "
                    "the %u processes of a section (some would use the sparse sync, some not); "
                    "the section does not run", P);
        ok = 0;
    }
    if (ok) return ctx;
    if (ctx) sstep_ctx_destroy(ctx);
    if (g) {
        /* its first receives are posted: take them back */
        for (lpf_pid_t q = 0; q < P; ++q)
            if (g->rfirst[q] != MPI_REQUEST_NULL) {
                MPI_Cancel(&g->rfirst[q]);
                MPI_Wait(&g->rfirst[q], MPI_STATUS_IGNORE);
            }
        mpi_group_free(g);
    }
    return NULL;
}

lpf_err_t mpi_run_section(MPI_Comm comm, struct mpi_shm *shm, lpf_pid_t pid, lpf_pid_t P,
        lpf_pid_t free_p, int in_hook, lpf_spmd_t spmd, lpf_args_t args)
{
    struct sstep_ctx *ctx = section_start(comm, shm, pid, P);
    if (!ctx) return LPF_ERR_OUT_OF_MEMORY;
    struct mpi_group *g = ctx->group;
    ctx->free_p = free_p;
    ctx->in_hook = in_hook;
    push_section(g, ctx);
    spmd(ctx, pid, P, args);
    return section_end(ctx);
}

/* ------------------------------------------------------------------ */
/* exec, rehook, hook                                                   */
/* ------------------------------------------------------------------ */

/* One section over the ranks at a time: the thread that runs it holds
 * top_lock from the exec command to the section's end. Another thread of
 * rank 0 that starts a top-level section meanwhile (or a thread of the
 * section itself) gets its section on threads of rank 0 instead. */
static pthread_mutex_t top_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t top_owner;
static atomic_int top_held;

int mpi_top_acquire(void)
{
    if (pthread_mutex_trylock(&top_lock) != 0) {
        static atomic_int said;
        if (!(atomic_load(&top_held) && pthread_equal(top_owner, pthread_self()))
                && !atomic_exchange(&said, 1))
            sstep_warn("lpf_exec: another thread of rank 0 is running a section over the "
                    "MPI ranks; a section started meanwhile runs as threads of rank 0 "
                    "(said once)");
        return 0;
    }
    top_owner = pthread_self();
    atomic_store(&top_held, 1);
    return 1;
}

void mpi_top_release(void)
{
    atomic_store(&top_held, 0);
    pthread_mutex_unlock(&top_lock);
}

/* bsp_begin(P) / lpf_exec with more processes than the job has ranks */
static void say_beyond_ranks(lpf_pid_t P)
{
    static atomic_int said;
    if (atomic_exchange(&said, 1)) return;
    sstep_warn("lpf_exec: %u processes asked for and the job has %d MPI ranks: all %u run "
            "as threads of rank 0 (bsprun -n %u gives each its own rank; said once)",
            P, sstep_mpi.size, P, P);
}

static lpf_err_t mp_exec_begin(struct sstep_ctx *parent, lpf_pid_t P, lpf_spmd_t spmd,
        lpf_args_t args, struct sstep_ctx **ctx0)
{
    /* Only the master's root context spans ranks; a nested section runs on
     * threads inside this rank. */
    if (!sstep_mpi.master || parent != sstep_root_ctx() || P <= 1)
        return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
    /* a forked child of rank 0 is no MPI process: its runs are its own */
    if (__atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED))
        return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
    if ((int)P > sstep_mpi.size) {
        say_beyond_ranks(P);
        return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
    }
    if (!mpi_top_acquire())
        return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
    lpf_err_t rc = mpi_exec_begin_locked(parent, P, spmd, args, ctx0);
    if (rc != LPF_SUCCESS) mpi_top_release();
    return rc;
}

lpf_err_t mpi_exec_begin_locked(struct sstep_ctx *parent, lpf_pid_t P, lpf_spmd_t spmd,
        lpf_args_t args, struct sstep_ctx **ctx0)
{
    lpf_pid_t F = parent->free_p;
    if (mpi_send_exec(P, F, spmd, args)) return LPF_ERR_FATAL;
    MPI_Comm comm = mpi_section_comm(P);
    struct sstep_ctx *ctx = section_start(comm, mpi_section_shm(P), 0, P);
    if (!ctx) return LPF_ERR_OUT_OF_MEMORY;
    struct mpi_group *g = ctx->group;
    ctx->free_p = F >= P ? sstep_share(F, P, 0) : 1;
    push_section(g, ctx);
    *ctx0 = ctx;
    return LPF_SUCCESS;
}

static lpf_err_t mp_exec_end(struct sstep_ctx *ctx0)
{
    lpf_err_t rc = section_end(ctx0);
    mpi_top_release();
    return rc;
}

/* after the rehook exchange: the superstep counts, and spmd runs as a new
 * section on a copy of the communicator */
static lpf_err_t rehook_section(struct mpi_group *g, struct sstep_ctx *ctx,
        lpf_spmd_t spmd, lpf_args_t args)
{
    mpi_episode_done(g);
    MPI_Comm child;
    if (MPI_Comm_dup(g->comm, &child) != MPI_SUCCESS) {
        ctx->failed = 1;
        return LPF_ERR_FATAL;
    }
    lpf_err_t rc = mpi_run_section(child, NULL, g->pid, g->P, 1, 1, spmd, args);
    MPI_Comm_free(&child);
    return rc;
}

static lpf_err_t mp_rehook(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args)
{
    struct mpi_group *g = ctx->group;
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    const int par = (int)(e & 1);
    /* every process must be rehooking: one header-only exchange */
    if (g->sparse) {
        struct bmsg m = { 0, 0, me, me, B_REHOOK, B_REHOOK }, res;
        mpi_pool_post(g, e, 0);
        mpi_sparse_barrier(g, &m, &res);
        mpi_pool_stop(g);
        if (res.any != B_REHOOK) {
            ctx->failed = 1;
            return LPF_ERR_FATAL;
        }
        return rehook_section(g, ctx, spmd, args);
    }
    if (g->shm) {
        atomic_store_explicit(&line_of(g, me)->word[par], mkword(g->gen, e, W_EMPTY | W_REHOOK),
                memory_order_release);
        if (mpi_node_wait_first(g, e, W_REHOOK)) {
            ctx->failed = 1;
            return LPF_ERR_FATAL;
        }
        return rehook_section(g, ctx, spmd, args);
    }
    struct fhdr h;
    memset(&h, 0, sizeof h);
    h.episode = e;
    h.flags = H_REHOOK | H_EMPTY;
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        MPI_Isend(&h, sizeof h, MPI_BYTE, (int)q, TAG(T_FIRST, par), g->comm,
                reqv_push(&g->sfirst));
    }
    if (mpi_wait_first(g, ctx, e, H_REHOOK)) {
        /* our header must leave before the stack variable goes */
        ctx->failed = 1;
        mpi_wait_all(g, &g->sfirst);
        return LPF_ERR_FATAL;
    }
    mpi_prepost_next(g, e);
    mpi_wait_all(g, &g->sfirst);
    return rehook_section(g, ctx, spmd, args);
}

static lpf_err_t mp_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
{
    struct mpi_init *x = init;
    if (x->nprocs == 1) {
        struct sstep_ctx *ctx = sstep_ctx_create(0, 1, &sstep_mpi_engine, NULL);
        if (!ctx) return LPF_ERR_OUT_OF_MEMORY;
        ctx->in_hook = 1;
        spmd(ctx, 0, 1, args);
        lpf_err_t rc = ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
        sstep_ctx_destroy(ctx);
        return rc;
    }
    int oversub = sstep_mpi.oversub;
    sstep_mpi.oversub = x->oversub;
    lpf_err_t rc = mpi_run_section(x->comm, x->shm, x->pid, x->nprocs, 1, 1, spmd, args);
    sstep_mpi.oversub = oversub;
    return rc;
}

/* ------------------------------------------------------------------ */
/* direct get, remote size, abort, machine                              */
/* ------------------------------------------------------------------ */

/* A direct get's reply: in one message (chunks of CHUNK), or where the
 * reader asks for it (dgreq.piece) in pieces of that many bytes. On one
 * node Open MPI's shared-memory transport sends at most about 4 KiB
 * eagerly; a larger message takes its rendezvous protocol, which cost 4 KiB
 * direct gets 2.6-7.6 us where an eager reply of 4000 + 96 bytes took 0.8
 * (an MPI_Get 1.8). Up to 32 KiB, eager pieces are faster than one
 * rendezvous message (16 KiB: 1.4 us against 3.3); from 64 KiB on, not.
 * Across hosts (TCP, whose eager limit is 64 KiB) pieces only cost: 16 KiB
 * in 4 pieces took 49 us against 31. Both sides post the same pieces (the
 * reader decides and says so in its request). */
#define DG_PIECE 4000u
#define DG_PIECES_MAX ((size_t)32 << 10)

static uint32_t dg_piece(size_t size)
{
    const int one_node = sstep_mpi.started && sstep_mpi.size > 1
            && sstep_mpi.local_size == (unsigned)sstep_mpi.size;
    return one_node && size > DG_PIECE && size <= DG_PIECES_MAX ? DG_PIECE : 0;
}

static void dg_post(struct reqv *v, char *buf, size_t n, uint32_t piece, lpf_pid_t q,
        MPI_Comm c, int send)
{
    if (!piece) {
        if (send) mpi_post_send(v, buf, n, q, T_DGREP, c);
        else mpi_post_recv(v, buf, n, q, T_DGREP, c);
        return;
    }
    while (n) {
        size_t len = n > piece ? piece : n;
        if (send) MPI_Isend(buf, (int)len, MPI_BYTE, (int)q, T_DGREP, c, reqv_push(v));
        else MPI_Irecv(buf, (int)len, MPI_BYTE, (int)q, T_DGREP, c, reqv_push(v));
        buf += len;
        n -= len;
    }
}

/* read our memory for q's direct get r and send it (bounds are checked
 * here, at the owner) */
static void dg_answer(struct mpi_group *g, lpf_pid_t q, const struct dgreq *r)
{
    char *from = sstep_resolve_global(g->ctx, r->slot, (size_t)r->off, (size_t)r->size);
    if (!from)
        sstep_remote_range_error(g->ctx, "bsp_direct_get", q, r->slot, (size_t)r->off,
                (size_t)r->size);
    dg_post(&g->rdg, from, (size_t)r->size, r->piece, q, g->comm, 1);
}

static void dg_test_replies(struct mpi_group *g)
{
    if (g->rdg.n) {
        int done = 0;
        MPI_Testall((int)g->rdg.n, g->rdg.r, &done, MPI_STATUSES_IGNORE);
        if (done) g->rdg.n = 0;
    }
}

/* Serve the direct gets peers sent us: read our memory now and send it.
 * A reader that completed an exchange we are still in (its sync returned
 * while we apply the puts it made to us, or others made) waits until we
 * completed it too: its request is kept and answered by mpi_episode_done
 * (or, in the hybrid engine, once the rank's threads applied their puts
 * to each other: mpi_episode_publish).
 * Returns how many requests came. */
void mpi_dg_take(struct mpi_group *g, lpf_pid_t q, const struct dgreq *rp)
{
    const struct dgreq r = *rp;
    if (SSTEP_UNLIKELY(r.slot == DG_ASK && r.piece == DG_ASK)) {
        /* has this process left? (the sparse sync's range waits) */
        if (g->leaving) {
            answer_gone(g, q);
            return;
        }
        if (g->nask == g->askcap) {
            size_t c = g->askcap ? 2 * g->askcap : 8;
            lpf_pid_t *a = realloc(g->askers, c * sizeof *a);
            if (!a) sstep_fatal(g->ctx, "sstep_sync_range", "out of memory");
            g->askers = a;
            g->askcap = c;
        }
        g->askers[g->nask++] = q;
        return;
    }
    if (r.ep > g->episode_pub) {
        if (g->ndgw == g->dgwcap) {
            size_t c = g->dgwcap ? 2 * g->dgwcap : 8;
            struct dgwait *w = realloc(g->dgw, c * sizeof *w);
            if (!w) sstep_fatal(g->ctx, "bsp_direct_get", "out of memory");
            g->dgw = w;
            g->dgwcap = c;
        }
        g->dgw[g->ndgw].r = r;
        g->dgw[g->ndgw].q = q;
        g->ndgw++;
        return;
    }
    dg_answer(g, q, &r);
}

int mpi_serve_dgets(struct mpi_group *g)
{
    int served = 0;
    for (;;) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, T_DGREQ, g->comm, &flag, &m, &st);
        if (!flag) break;
        struct dgreq r;
        MPI_Mrecv(&r, sizeof r, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        served++;
        mpi_dg_take(g, (lpf_pid_t)st.MPI_SOURCE, &r);
    }
    dg_test_replies(g);
    return served;
}

void mpi_episode_done(struct mpi_group *g)
{
    g->episode++;
    if (SSTEP_LIKELY(!g->hold_pub)) mpi_episode_publish(g);
}

void mpi_episode_publish(struct mpi_group *g)
{
    if (g->episode_pub == g->episode) return;
    g->episode_pub = g->episode;
    if (g->shm)
        atomic_store_explicit(&line_of(g, g->pid)->applied, mkword(g->gen, g->episode, 0),
                memory_order_release);
    if (SSTEP_UNLIKELY(g->ndgw)) {
        size_t k = 0;
        for (size_t i = 0; i < g->ndgw; ++i) {
            if (g->dgw[i].r.ep > g->episode) g->dgw[k++] = g->dgw[i];
            else dg_answer(g, g->dgw[i].q, &g->dgw[i].r);
        }
        g->ndgw = k;
        dg_test_replies(g);
    }
}

/* On one node: wait until the owner pid completed every exchange we did
 * (its memory holds their puts). 0: it did; 1: its line belongs to
 * another section (ask it by message instead). */
static int cma_wait_owner(struct mpi_group *g, lpf_pid_t pid)
{
    if (g->dgseen[pid] == g->episode + 1) return 0;
    const struct shm_line *l = line_of(g, pid);
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (;;) {
        uint64_t a = atomic_load_explicit(&l->applied, memory_order_acquire);
        if ((a >> 40) != (g->gen & 0xffffffu)) return 1;
        uint32_t done = (uint32_t)(a >> 8);
        if ((int32_t)(done - (uint32_t)g->episode) >= 0) {
            g->dgseen[pid] = g->episode + 1;
            return 0;
        }
        mpi_serve_dgets(g);
        mpi_wait_step(&w);
    }
}

/* bsp_direct_get on one node: read the owner's memory now with
 * process_vm_readv (cross-memory attach), as the pthread engine reads
 * shared memory, without waiting for the owner to answer. Only where the
 * owner's registration of slot is known from the registration exchange
 * (registrations are collective: the caller's own slot is valid, so the
 * owner's is the one it sent) and the range lies inside it; anything else
 * goes the message way, whose owner-side check reports errors. Returns 1
 * when done. A failing call (no permission, say) turns the path off for
 * the section. */
static int cma_direct_get(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t pid,
        uint32_t slot, size_t off, void *dst, size_t size)
{
    if (!g->cma || ctx->range_steps) return 0;
    const struct rsize *r = &g->rsz[pid];
    if (slot >= r->n || r->s[slot] == SIZE_MAX || !r->a[slot] || off > r->s[slot]
            || size > r->s[slot] - off)
        return 0;
    if (size == 0) return 1;   /* the range is valid (off at the end at most) */
    if (cma_wait_owner(g, pid)) return 0;
    char *to = dst;
    uint64_t from = r->a[slot] + off;
    size_t left = size;
    while (left) {
        struct iovec l = { to, left }, rem = { (void *)(uintptr_t)from, left };
        ssize_t n = process_vm_readv((pid_t)g->shm->ospid[pid], &l, 1, &rem, 1, 0);
        if (n <= 0) {
            if (left != size) sstep_fatal(ctx, "bsp_direct_get", "process_vm_readv from "
                    "process %u failed after %zu of %zu bytes", pid, size - left, size);
            g->cma = 0;   /* e.g. EPERM where ptrace is restricted: messages from now on */
            return 0;
        }
        to += n;
        from += (uint64_t)n;
        left -= (size_t)n;
    }
    return 1;
}

/* bsp_direct_get: on one node read the owner's memory at once
 * (cma_direct_get); else ask the owner, which answers from its wait loops
 * (its next sync at the latest), and serve others' requests while waiting. */
static lpf_err_t mp_direct_get(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot,
        size_t off, void *dst, size_t size)
{
    struct mpi_group *g = ctx->group;
    if (pid == ctx->pid || !g) {
        char *from = sstep_resolve_global(ctx, slot, off, size);
        if (!from) sstep_remote_range_error(ctx, "bsp_direct_get", ctx->pid, slot, off, size);
        memmove(dst, from, size);
        return LPF_SUCCESS;
    }
    if (cma_direct_get(g, ctx, pid, slot, off, dst, size)) return LPF_SUCCESS;
    struct reqv v = { NULL, 0, 0 };
    const uint32_t piece = dg_piece(size);
    dg_post(&v, dst, size, piece, pid, g->comm, 0);
    struct dgreq r = { slot, piece, off, size, g->episode };
    MPI_Send(&r, sizeof r, MPI_BYTE, (int)pid, T_DGREQ, g->comm);
    int flag = 0;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (;;) {
        MPI_Testall((int)v.n, v.r, &flag, MPI_STATUSES_IGNORE);
        if (flag) break;
        mpi_serve_dgets(g);
        mpi_wait_step(&w);
    }
    free(v.r);
    return LPF_SUCCESS;
}

static size_t mp_remote_size(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot)
{
    struct mpi_group *g = ctx->group;
    if (!g || pid >= g->P) return SIZE_MAX;
    /* range syncs (E1/E2) do not exchange registrations: what we know may
     * be stale once they are used (the owner checks at the sync) */
    if (ctx->range_steps) return SIZE_MAX;
    /* the sparse sync exchanges no registrations */
    if (g->sparse) return SIZE_MAX;
    const struct rsize *r = &g->rsz[pid];
    return slot < r->n ? r->s[slot] : SIZE_MAX;
}

static void mp_abort(struct sstep_ctx *ctx, int status)
{
    (void)ctx;
    fflush(stdout);
    fflush(stderr);
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Finalized(&fin);
    if (inited && !fin) {
        /* give the launcher a moment to forward what this process printed
         * (the message saying why) before it tears the job down */
        struct timespec ts = { 0, 100000000 };
        nanosleep(&ts, NULL);
        MPI_Abort(MPI_COMM_WORLD, status);
    }
    _exit(status);
}

static lpf_pid_t mp_machine_p(void)
{
    if (sstep_mpi.started && sstep_mpi.size > 0) return (lpf_pid_t)sstep_mpi.size;
    return sstep_machine_p();
}

const struct sstep_engine sstep_mpi_engine = {
    .name = "mpi",
    .machine_p = mp_machine_p,
    .hook = mp_hook,
    .exec_begin = mp_exec_begin,
    .exec_end = mp_exec_end,
    .rehook = mp_rehook,
    .sync = mpi_sync,
    .direct_get = mp_direct_get,
    .remote_size = mp_remote_size,
    .sync_range = mpi_sync_range,
    .abort = mp_abort,
};
