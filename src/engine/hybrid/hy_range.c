/*
 * The hybrid engine's PUB extensions (pub.md §12.2): E1 (sync over a range
 * of pids, matched by stamp), E2 (oblivious sync) and E4 (no hang) in
 * sections of several ranks of several threads. The protocol is the MPI
 * engine's (src/engine/mpi/mpi_range.c): every thread runs it as a process
 * of its own (its pid in the section, a struct mpi_range over all P pids),
 * over another transport (struct mr_net):
 *
 *   - a packet for a thread of the same rank goes on that thread's inbound
 *     list (a lock per thread), in order;
 *   - a packet for a thread of another rank travels on the rank-level
 *     section's communicator with tag T_RANGE, sent by the rank-level range
 *     state (the MPI engine's, g->range) under hy_mpi_lock; the upper half
 *     of its first word names the target and source threads. Whichever
 *     thread of the receiving rank polls (under hy_mpi_lock) moves it to its
 *     target's list. MPI's order between two ranks on one tag and the
 *     lists' order keep the packets of one sender to one receiver in order,
 *     which is all the protocol needs.
 *
 * Gone: a thread of the same rank by its `gone` flag (its packets are on
 * the lists before it sets it); a thread of another rank by the GONE packet
 * (RF_LEFT, with its counts for E4) that a thread sends to every peer when
 * it leaves once its rank uses range syncs (the rank's first range sync
 * sends those of threads that left before), else by its rank leaving the
 * rank-level section. The rank level leaves as an MPI section that sent
 * range packets (mpi_range_depart / mpi_range_drain: a final GONE per rank,
 * received by every other), so no packet stays on the communicator.
 */
#include "hybrid_internal.h"
#include "../mpi/mpi_range_internal.h"

#define ROUTED (1ull << 63)
#define TBITS 15
#define TMAX ((1u << TBITS) - 1)

struct hy_pk {
    struct hy_pk *next;
    char *buf;
    size_t len;
    lpf_pid_t src;
};

/* one thread's part */
struct hy_rthread {
    pthread_mutex_t lock;          /* the inbound list */
    struct hy_pk *head, *tail;
    _Atomic uint64_t nin;          /* packets ever put on it */
    uint64_t ntaken;               /* ... taken by the owner */
    struct mpi_range *rs;          /* the protocol's state (pid rs->me) */
    int announced;                 /* its departure was sent */
};

struct hy_ranges {
    struct hy_rank *rk;
    struct mpi_group *g;           /* rank level (NULL: one rank) */
    struct mpi_range *grs;         /* its range state: sends, final GONEs */
    struct hy_rthread *t;          /* [nt] */
};

static void list_put(struct hy_rthread *t, char *buf, size_t len, lpf_pid_t src,
        struct sstep_ctx *ctx)
{
    struct hy_pk *p = malloc(sizeof *p);
    if (!p) sstep_fatal(ctx, "sstep_sync_range", "out of memory (range packet list)");
    p->next = NULL;
    p->buf = buf;
    p->len = len;
    p->src = src;
    pthread_mutex_lock(&t->lock);
    if (t->tail) t->tail->next = p;
    else t->head = p;
    t->tail = p;
    atomic_fetch_add_explicit(&t->nin, 1, memory_order_release);
    pthread_mutex_unlock(&t->lock);
}

static void net_send(struct mpi_range *rs, lpf_pid_t q, char *buf, size_t len)
{
    struct hy_ranges *hr = rs->net_arg;
    struct hy_rank *rk = hr->rk;
    struct sstep_ctx *ctx = rk->th[rs->me - rk->base].ctx;
    if (q - rk->base < rk->nt) {
        list_put(&hr->t[q - rk->base], buf, len, rs->me, ctx);
        return;
    }
    uint64_t w;
    memcpy(&w, buf, 8);
    w = (w & 0xffffffffu) | ROUTED | (uint64_t)(q % rk->T) << 32
            | (uint64_t)(rs->me % rk->T) << (32 + TBITS);
    memcpy(buf, &w, 8);
    pthread_mutex_lock(&hy_mpi_lock);
    mr_rsend(hr->g, hr->grs, q / rk->T, buf, len, 0);
    pthread_mutex_unlock(&hy_mpi_lock);
}

/* under hy_mpi_lock: what arrived from other ranks, to its threads' lists */
static void route(struct hy_ranges *hr, struct sstep_ctx *ctx)
{
    struct hy_rank *rk = hr->rk;
    struct mpi_group *g = hr->g;
    mr_progress_sends(hr->grs);
    for (;;) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, T_RANGE, g->comm, &flag, &m, &st);
        if (!flag) return;
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        char *buf = mr_palloc(g, (size_t)cnt);
        MPI_Mrecv(buf, cnt, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        const lpf_pid_t from_rank = (lpf_pid_t)st.MPI_SOURCE;
        uint64_t w = 0;
        if (cnt >= 8) memcpy(&w, buf, 8);
        if (!(w & ROUTED)) {
            /* the rank level's own: a rank's final GONE */
            mr_dispatch(g, hr->grs, g->ctx, from_rank, buf, (size_t)cnt);
            continue;
        }
        const unsigned to = (unsigned)(w >> 32) & TMAX, from = (unsigned)(w >> (32 + TBITS)) & TMAX;
        if (SSTEP_UNLIKELY(to >= rk->nt || from >= rk->T))
            sstep_fatal(ctx, "sstep_sync_range", "protocol error: a range packet from rank %u "
                    "for thread %u of %u", from_rank, to, rk->nt);
        w &= 0xffffffffu;
        memcpy(buf, &w, 8);
        list_put(&hr->t[to], buf, (size_t)cnt, from_rank * rk->T + from, ctx);
    }
}

static void net_poll(struct mpi_range *rs, struct sstep_ctx *ctx)
{
    struct hy_ranges *hr = rs->net_arg;
    struct hy_rank *rk = hr->rk;
    if (hr->g && pthread_mutex_trylock(&hy_mpi_lock) == 0) {
        route(hr, ctx);
        pthread_mutex_unlock(&hy_mpi_lock);
    }
    struct hy_rthread *t = &hr->t[rs->me - rk->base];
    if (atomic_load_explicit(&t->nin, memory_order_acquire) == t->ntaken) return;
    pthread_mutex_lock(&t->lock);
    struct hy_pk *p = t->head;
    t->head = t->tail = NULL;
    pthread_mutex_unlock(&t->lock);
    while (p) {
        struct hy_pk *next = p->next;
        t->ntaken++;
        mr_dispatch(hr->g, rs, ctx, p->src, p->buf, p->len);
        free(p);
        p = next;
    }
}

static int net_gone(struct mpi_range *rs, lpf_pid_t q)
{
    struct hy_ranges *hr = rs->net_arg;
    struct hy_rank *rk = hr->rk;
    if (q - rk->base < rk->nt)
        return atomic_load_explicit(&rk->th[q - rk->base].gone, memory_order_acquire) != 0;
    if (!hr->g) return 0;
    pthread_mutex_lock(&hy_mpi_lock);
    int r = mr_peer_gone(hr->g, hr->grs, q / rk->T);
    pthread_mutex_unlock(&hy_mpi_lock);
    return r;
}

static void net_serve(struct mpi_range *rs, struct mpi_wait *mw, unsigned it)
{
    struct hy_ranges *hr = rs->net_arg;
    if (!hr->g || (!mw->idle && (it & 15) != 15)) return;
    if (pthread_mutex_trylock(&hy_mpi_lock) == 0) {
        mpi_wait_serve(hr->g, mw, it, 15);
        pthread_mutex_unlock(&hy_mpi_lock);
    }
}

static const struct mr_net hy_net = { net_send, net_poll, net_gone, net_serve };

/* under rk->range_lock: thread t has left: its GONE to every peer */
static void announce(struct hy_ranges *hr, lpf_pid_t t)
{
    struct hy_rthread *x = &hr->t[t];
    if (x->announced) return;
    x->announced = 1;
    x->rs->leaving = 1;
    mr_send_gone(hr->g, x->rs, RF_LEFT);
}

static struct hy_ranges *ranges_of(struct hy_rank *rk, struct sstep_ctx *ctx)
{
    struct hy_ranges *hr = atomic_load_explicit(&rk->ranges, memory_order_acquire);
    if (SSTEP_LIKELY(hr != NULL)) return hr;
    pthread_mutex_lock(&rk->range_lock);
    hr = atomic_load_explicit(&rk->ranges, memory_order_relaxed);
    if (hr) {
        pthread_mutex_unlock(&rk->range_lock);
        return hr;
    }
    if (rk->T > TMAX)
        sstep_fatal(ctx, "bsp_sync / bsp_oblsync", "PUB's subset and oblivious syncs on the "
                "hybrid engine support at most %u threads per rank (this section has %u)",
                TMAX, rk->T);
    hr = calloc(1, sizeof *hr);
    struct hy_rthread *t = hr ? calloc(rk->nt, sizeof *t) : NULL;
    if (!t) sstep_fatal(ctx, "sstep_sync_range", "out of memory (range state)");
    hr->rk = rk;
    hr->t = t;
    if (rk->rank) {
        hr->g = rk->rank->group;
        pthread_mutex_lock(&hy_mpi_lock);
        hr->grs = mr_range_of(hr->g);
        pthread_mutex_unlock(&hy_mpi_lock);
    }
    for (lpf_pid_t u = 0; u < rk->nt; ++u) {
        pthread_mutex_init(&t[u].lock, NULL);
        t[u].rs = mr_range_new(ctx, rk->P, rk->base + u);
        t[u].rs->net = &hy_net;
        t[u].rs->net_arg = hr;
    }
    atomic_store_explicit(&rk->ranges, hr, memory_order_release);
    for (lpf_pid_t u = 0; u < rk->nt; ++u)
        if (rk->th[u].rleft) announce(hr, u);
    pthread_mutex_unlock(&rk->range_lock);
    return hr;
}

lpf_err_t hy_sync_range(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect,
        struct sstep_sync_info *info)
{
    struct hy_thread *me = ctx->engine_proc;
    struct hy_rank *rk = me->rk;
    struct hy_ranges *hr = ranges_of(rk, ctx);
    return mr_sync(hr->g, hr->t[me - rk->th].rs, ctx, lo, n, members, stamp, kind, expect,
            info);
}

void hy_range_depart(struct hy_rank *rk, struct hy_thread *me)
{
    pthread_mutex_lock(&rk->range_lock);
    me->rleft = 1;
    struct hy_ranges *hr = atomic_load_explicit(&rk->ranges, memory_order_relaxed);
    if (hr) announce(hr, (lpf_pid_t)(me - rk->th));
    pthread_mutex_unlock(&rk->range_lock);
}

void hy_range_free(struct hy_rank *rk)
{
    struct hy_ranges *hr = atomic_load_explicit(&rk->ranges, memory_order_acquire);
    if (!hr) return;
    for (lpf_pid_t u = 0; u < rk->nt; ++u) {
        struct hy_rthread *t = &hr->t[u];
        for (struct hy_pk *p = t->head, *n; p; p = n) {
            n = p->next;
            free(p->buf);
            free(p);
        }
        mr_range_free(t->rs);
        pthread_mutex_destroy(&t->lock);
    }
    free(hr->t);
    free(hr);
    atomic_store_explicit(&rk->ranges, NULL, memory_order_relaxed);
}

void hy_range_plain_tick(struct hy_rank *rk, struct hy_thread *me, uint64_t key)
{
    struct hy_ranges *hr = atomic_load_explicit(&rk->ranges, memory_order_acquire);
    if (!hr || !me->ctx || me->rleft) return;
    mr_plain_tick(hr->g, hr->t[me - rk->th].rs, me->ctx, key);
}

void hy_rank_plain_tick(struct sstep_ctx *rank_ctx, uint64_t key)
{
    struct hy_rank *rk = rank_ctx->rank_thread_arg;
    hy_range_plain_tick(rk, &rk->th[0], key);
}
