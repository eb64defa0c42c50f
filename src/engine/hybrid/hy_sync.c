/*
 * The hybrid engine's sync (design: docs/hybrid.md).
 *
 * The T threads of a rank meet in barriers driven by the rank's leader
 * (thread 0, the thread that owns the rank's MPI context): the others
 * publish their arrival and wait for the leader's release; the leader waits
 * for their arrivals, does what is needed between, and releases. A sync:
 *
 *   A  every thread arrives with flags saying what its queue holds. If some
 *      thread gets from another thread of the rank, the leader releases at
 *      once and every thread copies its gets' source data aside (reads
 *      only), then arrives again (B).
 *   X  the leader alone (the others wait): it appends every request for
 *      another rank of every thread to the rank-level MPI context's queue
 *      (slot k of thread u becomes slot k*T+u there; messages get an 8-byte
 *      header naming receiver and sender), runs the MPI engine's sync on it
 *      (one combined first message per rank pair; gets from us are served
 *      before any put lands), and hands the messages that arrived to their
 *      threads. Then it releases.
 *   C  if any request stays inside the rank: every thread executes the puts
 *      and messages that target it and copies its staged gets into place,
 *      then a last barrier (D) keeps put sources unchanged until they are
 *      read.
 *
 * Every get reads its source before any write of the superstep (staging
 * before X, remote gets served inside X before its puts), as the pthread
 * and MPI engines guarantee. Other ranks' direct gets of what the sync
 * wrote wait until it is complete here: with puts inside the rank, the MPI
 * engine's sync holds the publishing back (hold_pub) and the leader
 * publishes after D (mpi_episode_publish). An empty sync is one gather,
 * the MPI engine's sync, one release.
 */
#include "hybrid_internal.h"

#include <limits.h>
#include <stdio.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SPIN_NS 20000ull        /* spin this long when every thread has a core */
#define YIELD_NS 1000000ull     /* oversubscribed: yield this long */
#define SLEEP_NS 10000000L      /* a sleeper re-checks at least this often */
/* The leader serves other ranks' direct gets while it waits for its
 * threads. It naps 50 us at first, doubling up to SERVE_NAP_MAX_NS (the
 * longest nap of the MPI engine's waits); after a request it answered it
 * polls without napping for SERVE_HOT_NS where every thread has a core (a
 * reader reads in bursts), spinning as the MPI engine's waits do (a
 * sched_yield beside a computing thread of the rank can hand that thread
 * whole time slices). When the leader looked only
 * every 1 ms, an 8-byte read from a rank whose other thread computed took
 * 2.2-3.3 ms on one host (SUPERSTEP_MPI_SHM=0); now 0.3-0.5 ms
 * (bench/hybrid/bench_hybrid_dget.c, 2 x 2 on 2 cores under load 4-5). */
#define SERVE_NAP_MIN_NS 50000L
#define SERVE_NAP_MAX_NS 200000L
#define SERVE_HOT_NS 50000ull

/* ------------------------------------------------------------------ */
/* Waiting                                                              */
/* ------------------------------------------------------------------ */

/* Whoever publishes something a thread may wait for calls this: a waiter
 * counts itself in `sleepers` before its last look (seq_cst on both sides:
 * no lost wake-up). */
static inline void hy_wake(struct hy_rank *rk)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (SSTEP_UNLIKELY(atomic_load_explicit(&rk->sleepers, memory_order_relaxed))) {
        atomic_fetch_add_explicit(&rk->seq, 1, memory_order_release);
        syscall(SYS_futex, (uint32_t *)&rk->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
}

/* the leader's gather of barrier b: 1 all arrived, -1 one left before it */
static int all_arrived(struct hy_rank *rk, uint64_t b)
{
    for (lpf_pid_t t = 1; t < rk->nt; ++t) {
        struct hy_thread *x = &rk->th[t];
        if (atomic_load_explicit(&x->arrived, memory_order_acquire) >= b) continue;
        if (!atomic_load_explicit(&x->gone, memory_order_acquire)) return 0;
        if (atomic_load_explicit(&x->arrived, memory_order_acquire) < b) return -1;
    }
    return 1;
}

/* a thread's wait for release b: 1 released, -1 the leader left without */
static int released(struct hy_rank *rk, uint64_t b)
{
    if (atomic_load_explicit(&rk->rel, memory_order_acquire) >= b) return 1;
    if (!atomic_load_explicit(&rk->th[0].gone, memory_order_acquire)) return 0;
    return atomic_load_explicit(&rk->rel, memory_order_acquire) >= b ? 1 : -1;
}

/* The watchdog: one line per barrier, from the leader (who has not arrived
 * of its threads) or from a thread whose leader has not arrived. */
static SSTEP_NOINLINE void hy_stalled(struct hy_rank *rk, struct hy_thread *me, uint64_t b,
        uint64_t waited)
{
    const struct sstep_watchdog *wd = sstep_watchdog();
    const int fatal = wd->timeout_ns && waited >= wd->timeout_ns;
    if (!fatal && (!wd->warn_ns || waited < wd->warn_ns)) return;
    if (me != &rk->th[0] && atomic_load_explicit(&rk->th[0].arrived, memory_order_acquire) >= b)
        return;   /* the leader is in the sync: it (or the MPI engine) reports */
    if (!fatal && atomic_exchange(&rk->stall_warned, b) == b) return;
    const lpf_pid_t P = rk->P;
    unsigned char *state = malloc(P);
    uint64_t *steps = calloc(P, sizeof *steps);
    if (state && steps) {
        memset(state, SSTEP_ARR_YES, P);   /* other ranks: the MPI engine watches them */
        for (lpf_pid_t t = 0; t < rk->nt; ++t) {
            struct hy_thread *x = &rk->th[t];
            int in = atomic_load_explicit(&x->arrived, memory_order_acquire) >= b;
            state[rk->base + t] = in ? SSTEP_ARR_YES
                    : atomic_load_explicit(&x->gone, memory_order_acquire) ? SSTEP_ARR_LEFT
                    : SSTEP_ARR_NOT;
            steps[rk->base + t] = __atomic_load_n(&x->ctx->superstep, __ATOMIC_RELAXED);
        }
        sstep_sync_stalled(me->ctx, waited, P, state, steps, fatal);
    }
    free(state);
    free(steps);
}

/* Spin while every thread has a core, yield briefly while they outnumber
 * the cores, then block (woken by hy_wake). The leader keeps serving other
 * ranks' direct gets while it waits for its threads. */
static int hy_wait(struct hy_rank *rk, struct hy_thread *me, uint64_t b,
        int (*pred)(struct hy_rank *, uint64_t))
{
    int r = pred(rk, b);
    if (r) return r;
    const int leader = me == &rk->th[0];
    const uint64_t t0 = sstep_now_ns();
    if (!rk->oversub) {
        for (unsigned i = 1;; ++i) {
            sstep_cpu_relax();
            if ((r = pred(rk, b))) return r;
            if ((i & 255) == 0 && sstep_now_ns() - t0 > SPIN_NS) break;
        }
    } else {
        for (;;) {
            sched_yield();
            if ((r = pred(rk, b))) return r;
            if (sstep_now_ns() - t0 > YIELD_NS) break;
        }
    }
    const struct sstep_watchdog *wd = sstep_watchdog();
    const int serve = leader && rk->rank != NULL;
    long nap = serve ? SERVE_NAP_MIN_NS : SLEEP_NS;
    uint64_t served_at = 0;
    for (;;) {
        if (serve && pthread_mutex_trylock(&hy_mpi_lock) == 0) {
            int n = mpi_serve_dgets(rk->rank->group);
            pthread_mutex_unlock(&hy_mpi_lock);
            if (n) {
                served_at = sstep_now_ns();
                nap = SERVE_NAP_MIN_NS;
            }
        }
        if (served_at && !rk->oversub && sstep_now_ns() - served_at < SERVE_HOT_NS) {
            sstep_cpu_relax();
        } else {
            uint32_t seq = atomic_load_explicit(&rk->seq, memory_order_acquire);
            atomic_fetch_add_explicit(&rk->sleepers, 1, memory_order_seq_cst);
            atomic_thread_fence(memory_order_seq_cst);
            if ((r = pred(rk, b))) {
                atomic_fetch_sub_explicit(&rk->sleepers, 1, memory_order_relaxed);
                return r;
            }
            struct timespec ts = { 0, nap };
            syscall(SYS_futex, (uint32_t *)&rk->seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
            atomic_fetch_sub_explicit(&rk->sleepers, 1, memory_order_relaxed);
            if (serve && nap < SERVE_NAP_MAX_NS) nap *= 2;
        }
        if ((r = pred(rk, b))) return r;
        /* a section with range syncs: after 0.1 s this wait takes part in
         * their deadlock detection (hy_range.c) */
        if (SSTEP_UNLIKELY(atomic_load_explicit(&rk->ranges, memory_order_relaxed) != NULL)) {
            hy_range_plain_tick(rk, me, b);
            if ((r = pred(rk, b))) return r;
        }
        if (SSTEP_UNLIKELY(wd->first_ns)) {
            uint64_t waited = sstep_now_ns() - t0;
            if (waited >= wd->first_ns) hy_stalled(rk, me, b, waited);
        }
    }
}

/* a thread other than the leader: arrive at the next barrier, wait for its
 * release; 0 or -1 (the leader left) */
static int hy_pass(struct hy_rank *rk, struct hy_thread *me)
{
    uint64_t b = ++me->nbar;
    atomic_store_explicit(&me->arrived, b, memory_order_release);
    hy_wake(rk);
    return hy_wait(rk, me, b, released) < 0 ? -1 : 0;
}

/* the leader: wait for the others at the next barrier (0, or -1: one of
 * them left); it releases them with hy_release */
static int hy_gather(struct hy_rank *rk)
{
    struct hy_thread *me = &rk->th[0];
    uint64_t b = ++me->nbar;
    atomic_store_explicit(&me->arrived, b, memory_order_release);
    return hy_wait(rk, me, b, all_arrived) < 0 ? -1 : 0;
}

static void hy_release(struct hy_rank *rk)
{
    atomic_store_explicit(&rk->rel, rk->th[0].nbar, memory_order_release);
    hy_wake(rk);
}

/* gone = 1: waiters give up on us; gone = 2, the last touch of the rank:
 * a leader that did not start us may free it */
void hy_leave(struct hy_rank *rk, struct hy_thread *me)
{
    hy_range_depart(rk, me);
    atomic_store_explicit(&me->gone, 1, memory_order_release);
    atomic_fetch_add_explicit(&rk->seq, 1, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&rk->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    atomic_store_explicit(&me->gone, 2, memory_order_release);
}

static int all_gone(struct hy_rank *rk, uint64_t b)
{
    (void)b;
    for (lpf_pid_t t = 1; t < rk->nt; ++t)
        if (!atomic_load_explicit(&rk->th[t].gone, memory_order_acquire)) return 0;
    return 1;
}

void hy_wait_all_gone(struct hy_rank *rk)
{
    (void)hy_wait(rk, &rk->th[0], 0, all_gone);
    for (lpf_pid_t t = 1; t < rk->nt; ++t)
        while (atomic_load_explicit(&rk->th[t].gone, memory_order_acquire) != 2) sched_yield();
}

int hy_meet(struct hy_rank *rk, struct hy_thread *me, void (*made)(void *), void *arg)
{
    if (me != &rk->th[0]) return hy_pass(rk, me);
    if (hy_gather(rk)) {
        rk->child = NULL;
        hy_release(rk);
        return -1;
    }
    made(arg);
    return 0;
}

void hy_meet_release(struct hy_rank *rk)
{
    hy_release(rk);
}

/* ------------------------------------------------------------------ */
/* Requests inside the rank                                             */
/* ------------------------------------------------------------------ */

static inline int in_rank(const struct hy_rank *rk, lpf_pid_t q)
{
    return q - rk->base < rk->nt;   /* unsigned: q < base wraps */
}

static unsigned classify(struct hy_rank *rk, const struct sstep_ctx *ctx)
{
    unsigned f = 0;
    const struct sstep_queue *q = &ctx->q;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t p = q->touched[i];
        if (!in_rank(rk, p)) continue;
        const struct sstep_peer_lists *pl = &q->peers[p];
        f |= HY_INTRA;
        if (pl->count[SSTEP_GET]) f |= HY_INTRA_GET;
        if (pl->count[SSTEP_PUT]) f |= HY_INTRA_PUT;
    }
    return f;
}

static SSTEP_NORETURN void bad_range(struct sstep_ctx *owner, const char *name,
        const char *dflt, lpf_pid_t issuer, const struct sstep_req *r)
{
    sstep_remote_range_error(owner, name ? name : dflt, issuer, r->slot, r->off, r->size);
}

/* copy the sources of this thread's gets inside the rank aside */
static void stage_gets(struct hy_rank *rk, struct hy_thread *me)
{
    struct sstep_ctx *ctx = me->ctx;
    const struct sstep_queue *q = &ctx->q;
    size_t total = 0;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t p = q->touched[i];
        if (in_rank(rk, p)) total += q->peers[p].bytes[SSTEP_GET];
    }
    if (total > me->stage_cap) {
        char *s = malloc(total);
        if (!s) sstep_fatal(ctx, "lpf_sync", "out of memory (%zu bytes for gets)", total);
        free(me->stage);
        me->stage = s;
        me->stage_cap = total;
    }
    char *o = me->stage;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t p = q->touched[i];
        if (!in_rank(rk, p)) continue;
        struct sstep_ctx *src = rk->th[p - rk->base].ctx;
        for (uint32_t k = q->peers[p].head[SSTEP_GET]; k != SSTEP_NIL; k = q->reqs[k].next) {
            const struct sstep_req *r = &q->reqs[k];
            const char *from = sstep_resolve_global(src, r->slot, r->off, r->size);
            if (SSTEP_UNLIKELY(!from)) bad_range(src, ctx->get_name, "lpf_get", ctx->pid, r);
            sstep_copy(o, from, r->size);
            o += r->size;
        }
    }
}

static void unstage_gets(struct hy_rank *rk, struct hy_thread *me)
{
    const struct sstep_queue *q = &me->ctx->q;
    const char *s = me->stage;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t p = q->touched[i];
        if (!in_rank(rk, p)) continue;
        for (uint32_t k = q->peers[p].head[SSTEP_GET]; k != SSTEP_NIL; k = q->reqs[k].next) {
            const struct sstep_req *r = &q->reqs[k];
            sstep_copy(r->local, s, r->size);
            s += r->size;
        }
    }
}

/* the puts and messages the rank's threads (this one included) sent me */
static void take_from_rank(struct hy_rank *rk, struct hy_thread *me)
{
    struct sstep_ctx *ctx = me->ctx;
    const lpf_pid_t pid = ctx->pid;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        const struct sstep_ctx *c = rk->th[t].ctx;
        const struct sstep_peer_lists *pl = &c->q.peers[pid];
        for (uint32_t k = pl->head[SSTEP_PUT]; k != SSTEP_NIL; k = c->q.reqs[k].next) {
            const struct sstep_req *r = &c->q.reqs[k];
            char *to = sstep_resolve_global(ctx, r->slot, r->off, r->size);
            if (SSTEP_UNLIKELY(!to)) bad_range(ctx, c->put_name, "lpf_put", c->pid, r);
            sstep_copy(to, r->local, r->size);
        }
        if (pl->count[SSTEP_MSG]) {
            if (sstep_inbox_reserve(&ctx->inbox, pl->count[SSTEP_MSG]))
                sstep_fatal(ctx, "lpf_sync", "out of memory (message list)");
            for (uint32_t k = pl->head[SSTEP_MSG]; k != SSTEP_NIL; k = c->q.reqs[k].next) {
                struct sstep_msg *m = &ctx->inbox.msgs[ctx->inbox.n++];
                m->data = c->q.reqs[k].local;
                m->size = c->q.reqs[k].size;
                m->src = c->pid;
            }
        }
    }
}

/* ------------------------------------------------------------------ */
/* Between ranks (the leader)                                           */
/* ------------------------------------------------------------------ */

/* The rank-level context's slot table mirrors the threads' global slots:
 * entry k*T+u is thread u's slot k (the MPI engine resolves remote puts
 * and gets, and announces new registrations, with it). */
static int hy_mirror(struct hy_rank *rk)
{
    uint32_t K = 0;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        struct sstep_slot_table *tb = &rk->th[t].ctx->globals;
        struct sstep_slot_array *a = sstep_slots(tb);
        uint32_t hi = tb->fresh < a->size ? tb->fresh : a->size;
        if (hi > K) K = hi;
    }
    size_t n = (size_t)K * rk->T;
    if (n >= UINT32_MAX) return -1;
    struct sstep_slot_array *m = calloc(1, sizeof *m + (n ? n : 1) * sizeof m->e[0]);
    if (!m) return -1;
    m->size = (uint32_t)n;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        struct sstep_slot_table *tb = &rk->th[t].ctx->globals;
        struct sstep_slot_array *a = sstep_slots(tb);
        uint32_t hi = tb->fresh < a->size ? tb->fresh : a->size;
        const uint64_t now = rk->th[t].ctx->superstep;
        for (uint32_t k = 0; k < hi; ++k) {
            struct sstep_slot *e = &m->e[(size_t)k * rk->T + t];
            *e = a->e[k];
            /* the rank-level context counts its own syncs (checked mode's
             * internal supersteps too): a registration of this superstep
             * becomes active with the rank-level sync that follows, so that
             * the MPI engine announces it (remote sizes known everywhere) */
            e->active_from = e->active_from > now ? rk->rank->superstep + 1 : 0;
        }
    }
    struct sstep_slot_table *rt = &rk->rank->globals;
    struct sstep_slot_array *old = atomic_exchange_explicit(&rt->arr, m, memory_order_acq_rel);
    free(old);
    rt->fresh = (uint32_t)n;
    return 0;
}

/* A bad range at a process of another rank, found here: the line the
 * owner prints for a bad range inside a rank (sstep_remote_range_error),
 * so that one mistake reads the same wherever its target runs. */
static SSTEP_NORETURN SSTEP_NOINLINE void range_error_remote(const struct sstep_ctx *c, int kind,
        lpf_pid_t owner, const struct sstep_req *r, size_t have)
{
    const char *name = kind == SSTEP_PUT ? (c->put_name ? c->put_name : "lpf_put")
                                         : (c->get_name ? c->get_name : "lpf_get");
    fflush(stdout);
    fprintf(stderr, "superstep: %s (process %u of %u): request issued by process %u: offset "
            "%zu + size %zu exceeds the %zu bytes that process %u registered in global slot "
            "%u\n", name, owner, c->nprocs, c->pid, r->off, r->size, have, owner, r->slot);
    fflush(stderr);
    c->engine->abort((struct sstep_ctx *)c, 6);
    _exit(6);
}

struct hy_msghdr {
    uint32_t to;    /* receiving thread's index in its rank */
    uint32_t from;  /* sender's pid */
};

/* the gets inside the rank land after every source was read (staging,
 * and the MPI sync's serving of other ranks' gets) and before any put:
 * from the MPI sync's hook, or at once when no rank-level sync runs */
static void unstage_all(void *arg)
{
    struct hy_rank *rk = arg;
    if (!rk->plan_stage || rk->unstaged) return;
    rk->unstaged = 1;
    for (lpf_pid_t t = 0; t < rk->nt; ++t)
        if (rk->th[t].flags & HY_INTRA_GET) unstage_gets(rk, &rk->th[t]);
}

static lpf_err_t hy_between_ranks(struct hy_rank *rk, uint64_t check, int hold,
        struct sstep_sync_info *info)
{
    struct sstep_ctx *R = rk->rank;
    const lpf_pid_t T = rk->T;
    int regs = 0;
    size_t n = 0;
    uint64_t rsteps = 0;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        const struct sstep_ctx *c = rk->th[t].ctx;
        regs |= c->pending_globals != 0;
        rsteps += c->range_steps;
        for (lpf_pid_t i = 0; i < c->q.ntouched; ++i) {
            lpf_pid_t p = c->q.touched[i];
            if (in_rank(rk, p)) continue;
            const struct sstep_peer_lists *pl = &c->q.peers[p];
            n += pl->count[SSTEP_PUT] + pl->count[SSTEP_GET] + pl->count[SSTEP_MSG];
        }
    }
    /* registrations that PUB's range syncs (hy_range.c) activated: the
     * mirror follows them too */
    if (rsteps != rk->mirror_rsteps) {
        regs = 1;
        rk->mirror_rsteps = rsteps;
    }
    if (regs && hy_mirror(rk)) return LPF_ERR_OUT_OF_MEMORY;
    if (n && R->q.n + n > R->q.alloc && sstep_queue_grow(R, R->q.n + n))
        return LPF_ERR_OUT_OF_MEMORY;
    struct sstep_arena *arena = &R->arena[R->superstep & 1];
    for (lpf_pid_t t = 0; n && t < rk->nt; ++t) {
        const struct sstep_ctx *c = rk->th[t].ctx;
        for (lpf_pid_t i = 0; i < c->q.ntouched; ++i) {
            lpf_pid_t p = c->q.touched[i];
            if (in_rank(rk, p)) continue;
            const lpf_pid_t rr = p / T, u = p % T;
            const struct sstep_peer_lists *pl = &c->q.peers[p];
            for (int kind = SSTEP_PUT; kind <= SSTEP_GET; ++kind)
                for (uint32_t k = pl->head[kind]; k != SSTEP_NIL; k = c->q.reqs[k].next) {
                    const struct sstep_req *r = &c->q.reqs[k];
                    const uint32_t idx = hy_rank_slot((struct sstep_ctx *)c,
                            kind == SSTEP_PUT ? "lpf_put" : "lpf_get", T, r->slot, p);
                    /* a bad range is reported here, in this section's pids
                     * (the owner would name the rank-level context's) */
                    size_t have = sstep_mpi_engine.remote_size(R, rr, idx);
                    if (SSTEP_UNLIKELY(have != SIZE_MAX && (r->off > have || r->size > have - r->off)))
                        range_error_remote(c, kind, p, r, have);
                    sstep_enqueue(R, kind, rr, r->local, idx, r->off, r->size);
                }
            for (uint32_t k = pl->head[SSTEP_MSG]; k != SSTEP_NIL; k = c->q.reqs[k].next) {
                const struct sstep_req *r = &c->q.reqs[k];
                char *buf = sstep_arena_alloc(arena, r->size + sizeof(struct hy_msghdr));
                if (!buf) return LPF_ERR_OUT_OF_MEMORY;
                struct hy_msghdr h = { (uint32_t)u, (uint32_t)c->pid };
                memcpy(buf, &h, sizeof h);
                if (r->size) memcpy(buf + sizeof h, r->local, r->size);
                sstep_enqueue(R, SSTEP_MSG, rr, buf, 0, 0, r->size + sizeof h);
            }
        }
    }
    R->pending_globals = (size_t)regs;
    /* the rank-level context's messages (the MPI engine's watchdog) number
     * the user's supersteps, as the threads' do */
    const struct sstep_ctx *c0 = rk->th[0].ctx;
    const uint64_t us = c0->superstep - c0->layer_steps;
    R->layer_steps = R->superstep > us ? R->superstep - us : 0;
    struct sstep_sync_info ri;
    memset(&ri, 0, sizeof ri);
    ri.check = check;
    ri.peer = LPF_MAX_P;
    ri.peer_check = check;
    struct mpi_group *g = R->group;
    g->before_puts = unstage_all;
    g->before_puts_arg = rk;
    g->hold_pub = hold;
    lpf_err_t rc = sstep_mpi_engine.sync(R, &ri);
    g->hold_pub = 0;
    g->before_puts = NULL;
    if (rc != LPF_SUCCESS) {
        R->failed = 1;
        return rc;
    }
    if (ri.mismatch && !info->mismatch) {
        info->mismatch = 1;
        info->peer = ri.peer < rk->R ? ri.peer * T : ri.peer;
        info->peer_check = ri.peer_check;
    }
    /* messages from other ranks, to their threads */
    for (size_t i = 0; i < R->inbox.n; ++i) {
        const struct sstep_msg *m = &R->inbox.msgs[i];
        struct hy_msghdr h;
        if (SSTEP_UNLIKELY(m->size < sizeof h)) return LPF_ERR_FATAL;
        memcpy(&h, m->data, sizeof h);
        if (SSTEP_UNLIKELY(h.to >= rk->nt)) return LPF_ERR_FATAL;
        struct sstep_inbox *in = &rk->th[h.to].ctx->inbox;
        if (sstep_inbox_reserve(in, 1)) return LPF_ERR_OUT_OF_MEMORY;
        struct sstep_msg *d = &in->msgs[in->n++];
        d->data = m->data + sizeof h;
        d->size = m->size - sizeof h;
        d->src = h.from;
    }
    sstep_ctx_end_superstep(R);
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The sync                                                             */
/* ------------------------------------------------------------------ */

/* After a sync in which the agreement values differed: every process's
 * value is in rk->checks; report the first process (in pid order) whose
 * value differs from ours, as the other engines do. */
static void report_mismatch(struct hy_rank *rk, struct hy_thread *me, struct sstep_sync_info *info)
{
    for (lpf_pid_t q = 0; q < rk->P; ++q)
        if (rk->checks[q] != me->check) {
            info->mismatch = 1;
            info->peer = q;
            info->peer_check = rk->checks[q];
            return;
        }
}

/* the leader: everybody's agreement value, from every rank (only after a
 * sync that found a difference: every rank then knows there was one) */
static int gather_checks(struct hy_rank *rk)
{
    if (!rk->checks && !(rk->checks = malloc(rk->P * sizeof *rk->checks))) return -1;
    uint64_t *mine = rk->checks + rk->base;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) mine[t] = rk->th[t].check;
    if (!rk->rank) return 0;
    int *cnt = malloc(2 * rk->R * sizeof *cnt);
    if (!cnt) return -1;
    for (lpf_pid_t r = 0; r < rk->R; ++r) {
        lpf_pid_t b = r * rk->T, n = rk->P - b < rk->T ? rk->P - b : rk->T;
        cnt[r] = (int)n;
        cnt[rk->R + r] = (int)b;
    }
    struct mpi_group *g = rk->rank->group;
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rk->checks, cnt, cnt + rk->R,
            MPI_UINT64_T, g->comm);
    free(cnt);
    return rc == MPI_SUCCESS ? 0 : -1;
}

static lpf_err_t thread_sync(struct hy_rank *rk, struct hy_thread *me, struct sstep_sync_info *info)
{
    if (hy_pass(rk, me)) return LPF_ERR_FATAL;                 /* A */
    if (rk->plan_stage) {
        stage_gets(rk, me);
        if (hy_pass(rk, me)) return LPF_ERR_FATAL;             /* B */
    }
    lpf_err_t rc = rk->plan_rc;
    if (rk->plan_mismatch) report_mismatch(rk, me, info);
    if (rk->plan_apply) {
        take_from_rank(rk, me);
        if (hy_pass(rk, me)) return LPF_ERR_FATAL;             /* D */
    }
    return rc;
}

static lpf_err_t leader_sync(struct hy_rank *rk, struct hy_thread *me, struct sstep_sync_info *info)
{
    /* the plan is rewritten only once everybody has arrived: until then a
     * thread may still be reading the last one */
    int failed = hy_gather(rk);                                 /* A */
    rk->plan_stage = rk->plan_apply = 0;
    rk->plan_mismatch = 0;
    if (failed) {
        rk->plan_rc = LPF_ERR_FATAL;
        hy_release(rk);
        if (rk->rank) rk->rank->failed = 1;
        return LPF_ERR_FATAL;
    }
    unsigned flags = 0;
    int local_mm = 0;
    uint64_t mix = 0x9e3779b97f4a7c15ull;
    for (lpf_pid_t t = 0; t < rk->nt; ++t) {
        const struct hy_thread *x = &rk->th[t];
        flags |= x->flags;
        local_mm |= x->check != me->check;
        mix = (mix ^ x->check) * 0x100000001b3ull;
    }
    if (flags & HY_INTRA_GET) {
        rk->plan_stage = 1;
        hy_release(rk);
        stage_gets(rk, me);
        if (hy_gather(rk)) {                                    /* B */
            rk->plan_rc = LPF_ERR_FATAL;
            hy_release(rk);
            if (rk->rank) rk->rank->failed = 1;
            return LPF_ERR_FATAL;
        }
    }
    lpf_err_t rc = LPF_SUCCESS;
    int mm = local_mm;
    rk->unstaged = 0;
    if (rk->rank) {
        /* threads that disagree among themselves: a value that differs from
         * every rank whose threads agree, so that all ranks learn of it */
        struct sstep_sync_info ri = *info;
        ri.mismatch = 0;
        rc = hy_between_ranks(rk, local_mm ? mix | 1u << 31 : me->check,
                (flags & HY_INTRA_PUT) != 0, &ri);
        mm |= ri.mismatch;
        rk->syncs++;
    }
    if (rc == LPF_SUCCESS) {
        unstage_all(rk);   /* when the MPI sync's hook did not run */
        if (mm) {
            if (gather_checks(rk)) rc = LPF_ERR_FATAL;
            else rk->plan_mismatch = 1;
        }
    }
    rk->plan_rc = rc;
    rk->plan_apply = rc == LPF_SUCCESS && (flags & HY_INTRA);
    /* other ranks' direct gets see this sync's effects (are answered, or
     * on one node read our memory) only once the puts inside the rank
     * landed too: after D when there are any (hy_between_ranks held the
     * publishing back), else now */
    struct mpi_group *g = rk->rank ? rk->rank->group : NULL;
    if (g && !rk->plan_apply) mpi_episode_publish(g);
    hy_release(rk);                                             /* A or B */
    if (rk->plan_mismatch) report_mismatch(rk, me, info);
    if (rk->plan_apply) {
        take_from_rank(rk, me);
        int left = hy_gather(rk);                               /* D */
        if (g) mpi_episode_publish(g);
        if (left) return LPF_ERR_FATAL;
        hy_release(rk);
    }
    return rc;
}

lpf_err_t hy_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct hy_thread *me = ctx->engine_proc;
    struct hy_rank *rk = me->rk;
    ctx->inbox.n = ctx->inbox.next = 0;
    me->check = info->check;
    me->flags = ctx->q.ntouched ? classify(rk, ctx) : 0;
    return me == &rk->th[0] ? leader_sync(rk, me, info) : thread_sync(rk, me, info);
}
