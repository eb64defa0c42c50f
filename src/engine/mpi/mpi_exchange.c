/*
 * The MPI engine: waiting (spin, yield, nap), and the first-message exchange
 * of a sync, by MPI messages or through shared memory on one node.
 */
#define _GNU_SOURCE
#include "mpi_group.h"

#include <sched.h>
#include <stdio.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Waiting                                                              */
/* ------------------------------------------------------------------ */

uint64_t mpi_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#define SPIN_NS 50000ull       /* spin this long when every process has a core */
#define YIELD_NS 5000000ull    /* then yield the core this long */
/* With more processes than cores, yield (no spin) this long before
 * napping. (50 ms for a while: the FFT tests on 4 ranks and 2 cores ran
 * 8-16 s with 5 ms. The cause was elsewhere: a rank napping in an on-node
 * sync served peers' bsp_direct_get only every 1024th step, up to 0.2 s
 * per read, and the FFT ran its pull code on MPI. Both fixed: 2.3 s with
 * 5 ms.) */
#define YIELD_OVERSUB_NS 5000000ull

void mpi_wait_init(struct mpi_wait *w, long nap_max_ns)
{
    w->t0 = 0;
    w->n = 0;
    w->idle = 0;
    w->nap = 2000;
    w->nap_max = nap_max_ns;
}

void mpi_wait_step(struct mpi_wait *w)
{
    int oversub = sstep_mpi.oversub;
    if (++w->n < 64 && !oversub) return;
    uint64_t t = mpi_now_ns();
    if (!w->t0) { w->t0 = t; return; }
    uint64_t d = t - w->t0;
    if (!oversub && d < SPIN_NS) return;
    w->idle = 1;
    if (d < (oversub ? YIELD_OVERSUB_NS : YIELD_NS)) { sched_yield(); return; }
    struct timespec ts = { 0, w->nap };
    nanosleep(&ts, NULL);
    if (w->nap < w->nap_max) w->nap *= 2;
}

/* A wait's turn to serve peers' bsp_direct_get: every step once it yields
 * or naps (a step then lasts microseconds or more), else every (mask+1)th
 * step: mask 0 where each step calls MPI anyway (a probe costs about as
 * much; at every 16th spinning step an 8-byte read through the owner took
 * 3-5 us instead of 0.6), more where a step is a load from shared memory.
 * A request served starts the wait afresh (spin, then yield): a reader
 * reads in bursts, and its next request must not find us in a nap (at
 * every 16th nap step a read across nodes took 4-5 ms). */
void mpi_wait_serve(struct mpi_group *g, struct mpi_wait *w, unsigned it, unsigned mask)
{
    if (!w->idle && (it & mask) != mask) return;
    if (mpi_serve_dgets(g)) {
        w->t0 = 0;
        w->idle = 0;
        w->nap = 2000;
    }
}

/* A wait's turn to consult the watchdog: every 1024th step, and every 16th
 * once it yields or naps (1024 napping steps on a loaded host can outlast
 * SUPERSTEP_SYNC_WARN: across hosts a 1 s warning never came in 4 s). */
int mpi_wait_watch_due(const struct mpi_wait *w, unsigned it)
{
    return (it & 1023) == 0 || (w->idle && (it & 15) == 0);
}

/* The watchdog (core/watchdog.c), called now and then by the waits of a
 * sync: state[q] is what this process knows of q's arrival. */
SSTEP_HIDDEN void mpi_range_plain_tick(struct mpi_group *g);   /* mpi_range.c */
void mpi_sync_watch(struct mpi_group *g, struct mpi_watch *wt, const unsigned char *state)
{
    /* a section with range syncs: an ordinary sync's wait of 0.1 s or more
     * takes part in their deadlock detection */
    if (g->range) mpi_range_plain_tick(g);
    mpi_watch_range(g, wt, 0, g->P, state);
}

void mpi_watch_range(struct mpi_group *g, struct mpi_watch *wt, lpf_pid_t lo, lpf_pid_t n,
        const unsigned char *state)
{
    mpi_watch_range_as(g->ctx, g->pid, wt, lo, n, state);
}

void mpi_watch_range_as(struct sstep_ctx *ctx, lpf_pid_t me, struct mpi_watch *wt, lpf_pid_t lo,
        lpf_pid_t n, const unsigned char *state)
{
    const struct sstep_watchdog *wd = sstep_watchdog();
    if (!wd->first_ns) return;
    uint64_t t = mpi_now_ns();
    if (!wt->t0) { wt->t0 = t; return; }
    uint64_t waited = t - wt->t0;
    if (waited < wd->first_ns) return;
    /* one line per job, not per rank: the lowest arrived process speaks;
     * the others give up too, a little later, should it be gone */
    lpf_pid_t speaker = 0;
    while (speaker < n && state[speaker] != SSTEP_ARR_YES) ++speaker;
    const int me_speaks = lo + speaker == me;
    const uint64_t grace = me_speaks ? 0 : 5000000000ull;
    const int fatal = wd->timeout_ns && waited >= wd->timeout_ns + grace;
    if (!fatal && (wt->warned || !wd->warn_ns || waited < wd->warn_ns)) return;
    wt->warned = 1;
    if (fatal || me_speaks) sstep_sync_stalled(ctx, waited, n, state, NULL, fatal);
}

/* this process's view of who has arrived at episode e */
static void node_arrivals(struct mpi_group *g, uint64_t e, unsigned char *state)
{
    const int par = (int)(e & 1);
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        if (q == g->pid) { state[q] = SSTEP_ARR_YES; continue; }
        uint64_t v = atomic_load_explicit(&line_of(g, q)->word[par], memory_order_acquire);
        int st = word_state(v, g->gen, e);
        state[q] = st == 0 ? SSTEP_ARR_NOT : st == 2 ? SSTEP_ARR_LEFT : SSTEP_ARR_YES;
    }
}

/* Wait for every request of v; meanwhile serve peers' direct gets (a peer
 * blocked in bsp_direct_get on us must not wait for our next sync). */
void mpi_wait_all(struct mpi_group *g, struct reqv *v)
{
    if (v->n == 0) return;
    int flag = 0;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (unsigned i = 1;; ++i) {
        MPI_Testall((int)v->n, v->r, &flag, MPI_STATUSES_IGNORE);
        if (flag) break;
        mpi_wait_serve(g, &w, i, 0);
        mpi_wait_step(&w);
    }
    v->n = 0;
}

/* post transfers of n bytes in chunks of at most CHUNK (n may be 0: one
 * empty message) */
void mpi_post_send(struct reqv *v, const char *buf, size_t n, lpf_pid_t q, int tag, MPI_Comm c)
{
    do {
        size_t len = n > CHUNK ? CHUNK : n;
        MPI_Isend(buf, (int)len, MPI_BYTE, (int)q, tag, c, reqv_push(v));
        buf += len;
        n -= len;
    } while (n > 0);
}

void mpi_post_recv(struct reqv *v, char *buf, size_t n, lpf_pid_t q, int tag, MPI_Comm c)
{
    do {
        size_t len = n > CHUNK ? CHUNK : n;
        MPI_Irecv(buf, (int)len, MPI_BYTE, (int)q, tag, c, reqv_push(v));
        buf += len;
        n -= len;
    } while (n > 0);
}

/* Wait until every peer arrived at episode e; -1 if one left the section
 * or does something else (a rehook while we sync, or the reverse). */
int mpi_node_wait_first(struct mpi_group *g, uint64_t e, unsigned rehook)
{
    const lpf_pid_t P = g->P, me = g->pid;
    const int par = (int)(e & 1);
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    struct mpi_watch wt = { 0, 0 };
    unsigned it = 0;
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        _Atomic uint64_t *wp = &line_of(g, q)->word[par];
        uint64_t v;
        int st;
        while ((st = word_state(v = atomic_load_explicit(wp, memory_order_acquire), g->gen, e)) == 0) {
            /* peers' direct gets: at every step once we yield or nap
             * (at every 1024th nap a bsp_direct_get on us took up to
             * 0.2 s), else now and then */
            mpi_wait_serve(g, &w, ++it, 63);
            if (mpi_wait_watch_due(&w, it)) {
                node_arrivals(g, e, g->wflags_state);
                mpi_sync_watch(g, &wt, g->wflags_state);
            }
            mpi_wait_step(&w);
        }
        if (st != 1 || (v & W_REHOOK) != rehook) return -1;
        g->wflags[q] = (unsigned char)(v & 0xff);
    }
    return 0;
}

/* All processes of the section together (the decision comes from the
 * arrival lines everybody has read): a body window of at least `need`
 * bytes per half. Bodies already laid out move over. */
void mpi_grow_bodies(struct mpi_group *g, struct sstep_ctx *ctx, size_t need, int par)
{
    size_t cap = g->bcap * 2;
    if (cap < need) cap = need;
    if (cap < ((size_t)1 << 20)) cap = (size_t)1 << 20;
    cap = (cap + 4095) & ~(size_t)4095;
    char *base = NULL;
    MPI_Win win;
    if (MPI_Win_allocate_shared((MPI_Aint)(2 * cap), 64, MPI_INFO_NULL, g->comm, &base, &win)
            != MPI_SUCCESS)
        sstep_fatal(ctx, "lpf_sync", "out of memory (a %zu-byte shared body segment)", 2 * cap);
    char **seg = malloc(g->P * sizeof *seg);
    if (!seg) sstep_fatal(ctx, "lpf_sync", "out of memory");
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, (int)q, &sz, &du, &seg[q]);
    }
    char *half = seg[g->pid] + (size_t)par * cap;
    char *old = g->has_bwin ? g->bseg[g->pid] + (size_t)par * g->bcap : NULL;
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        if (!g->blen[q]) continue;
        const char *from = g->bsrc[q] ? g->bsrc[q] : old + g->boff[q];
        memcpy(half + g->boff[q], from, g->blen[q]);
        g->bsrc[q] = NULL;
    }
    /* nobody reads a body before its owner moved it */
    MPI_Barrier(g->comm);
    if (g->has_bwin) MPI_Win_free(&g->bwin);
    free(g->bseg);
    g->bseg = seg;
    g->bwin = win;
    g->bcap = cap;
    g->has_bwin = 1;
}

/* ------------------------------------------------------------------ */
/* The first-message exchange                                           */
/* ------------------------------------------------------------------ */

/* 0: header of q is the expected one; 1: q left or does something else */
static int mpi_bad_header(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q, uint64_t e,
        uint32_t rehook)
{
    const struct fhdr *h = (const struct fhdr *)first_buf(g, (int)(e & 1), q);
    if (h->flags & H_GONE) return 1;
    if (SSTEP_UNLIKELY(h->episode != e))
        sstep_fatal(ctx, "lpf_sync", "protocol error: process %u is in exchange %llu, this "
                "process in %llu", q, (unsigned long long)h->episode, (unsigned long long)e);
    if ((h->flags & H_REHOOK) != rehook) return 1;
    return 0;
}

/* Wait for the first message of every peer. Returns -1 as soon as a peer
 * turns out to have left the section (or to be in a rehook while we sync,
 * or the other way round): this exchange then fails on every process. */
int mpi_wait_first(struct mpi_group *g, struct sstep_ctx *ctx, uint64_t e, uint32_t rehook)
{
    const lpf_pid_t P = g->P, me = g->pid;
    lpf_pid_t missing = 0;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q == me) continue;
        if (!g->got[q]) missing++;
        else if (mpi_bad_header(g, ctx, q, e, rehook)) return -1;
    }
    if (!missing) return 0;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    struct mpi_watch wt = { 0, 0 };
    for (unsigned it = 1;; ++it) {
        int n = 0;
        MPI_Testsome((int)P, g->rfirst, &n, g->idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED) n = 0;
        if (!n) mpi_wait_serve(g, &w, it, 0);
        /* mark every completed receive before judging any (the drain
         * relies on got[] when this exchange fails) */
        for (int i = 0; i < n; ++i) g->got[g->idx[i]] = 1;
        for (int i = 0; i < n; ++i) {
            missing--;
            if (mpi_bad_header(g, ctx, (lpf_pid_t)g->idx[i], e, rehook)) return -1;
        }
        if (!missing) return 0;
        if (!n) {
            mpi_wait_step(&w);
            if (mpi_wait_watch_due(&w, it)) {
                for (lpf_pid_t q = 0; q < P; ++q)
                    g->wflags_state[q] = q == me || g->got[q] ? SSTEP_ARR_YES : SSTEP_ARR_NOT;
                mpi_sync_watch(g, &wt, g->wflags_state);
            }
        }
    }
}

/* After a successful exchange: post the receives of the next episode. */
void mpi_prepost_next(struct mpi_group *g, uint64_t e)
{
    const int npar = (int)((e + 1) & 1);
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        if (q == g->pid) continue;
        g->got[q] = 0;
        MPI_Irecv(first_buf(g, npar, q), (int)g->E, MPI_BYTE, (int)q, TAG(T_FIRST, npar),
                g->comm, &g->rfirst[q]);
    }
}

/* ------------------------------------------------------------------ */
/* The sparse sync: first messages to whom it concerns, then a barrier   */
/* ------------------------------------------------------------------ */

void mpi_ord_add(struct mpi_group *g, lpf_pid_t q)
{
    if (g->amark[q] == g->astamp) return;
    g->amark[q] = g->astamp;
    g->ord[g->nord++] = q;
}

/* one more any-source receive (0: no memory for its buffer) */
static int pool_add(struct mpi_group *g)
{
    const int i = g->npool + 1;
    if (!g->poolbuf[i] && !(g->poolbuf[i] = aligned_alloc(64, g->E))) return 0;
    MPI_Irecv(g->poolbuf[i], (int)g->E, MPI_BYTE, MPI_ANY_SOURCE, g->pooltag, g->comm, &g->pool[i]);
    g->npool = i;
    return 1;
}

/* A sync posts as many receives as the last one took first messages
 * (from 2 to POOL_MAX), leaving and rehooks 2 (they drop what comes). */
void mpi_pool_post(struct mpi_group *g, uint64_t e, int keep)
{
    const int tag = STAG_FIRST((int)(e & 1), g->secpar);
    g->pool_keep = keep;
    g->pool_e = e;
    g->pooltag = tag;
    g->pool_got = 0;
    g->npool = 0;
    const int n = keep ? g->pool_want : 2;
    while (g->npool < n && pool_add(g)) {}
}

/* pool receive i completed with status st: keep its message (a sync) or
 * drop it (a process leaving or rehooking: the barrier fails the sync of
 * its sender), then post it again unless stopping */
static void pool_took(struct mpi_group *g, int i, const MPI_Status *st, int repost)
{
    const lpf_pid_t q = (lpf_pid_t)st->MPI_SOURCE;
    int cnt = 0;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    if (g->pool_keep) {
        const struct fhdr *h = (const struct fhdr *)g->poolbuf[i];
        if (SSTEP_UNLIKELY(q >= g->P || q == g->pid || (size_t)cnt < sizeof *h
                || h->episode != g->pool_e || (h->flags & (H_GONE | H_REHOOK))
                || (g->got[q] & 1)))
            sstep_fatal(g->ctx, "lpf_sync", "protocol error: a first message of %d bytes from "
                    "process %u for exchange %llu while this process is in exchange %llu",
                    cnt, q, (unsigned long long)((size_t)cnt >= sizeof *h ? h->episode : 0),
                    (unsigned long long)g->pool_e);
        char *b = sstep_arena_alloc(&g->farena, (size_t)cnt);
        if (!b) sstep_fatal(g->ctx, "lpf_sync", "out of memory (a %d-byte first message)", cnt);
        memcpy(b, g->poolbuf[i], (size_t)cnt);
        g->hdr[q] = (const struct fhdr *)b;
        if (g->amark[q] != g->astamp) {
            /* a peer we send nothing: nothing of ours to it this sync */
            g->gsmall[q] = 0;
            g->osep[q] = 0;
        }
        g->got[q] |= 1;
        mpi_ord_add(g, q);
        g->pool_got++;
    }
    if (repost) {
        MPI_Irecv(g->poolbuf[i], (int)g->E, MPI_BYTE, MPI_ANY_SOURCE, g->pooltag, g->comm,
                &g->pool[i]);
        /* many come (POOL_GROW of them so far): as many receives as came,
         * up to POOL_MAX (fewer cost less, as the receives a sync posts
         * and cancels are not free either) */
        if (g->pool_keep && g->pool_got >= POOL_GROW)
            while (g->npool < (int)g->pool_got && g->npool < POOL_MAX && pool_add(g)) {}
    }
}

/* take back the pool's receives; one that a first message matched
 * meanwhile completes with it */
void mpi_pool_stop(struct mpi_group *g)
{
    for (int i = 1; i <= g->npool; ++i) {
        if (g->pool[i] == MPI_REQUEST_NULL) continue;
        MPI_Status st;
        int cancelled = 0;
        MPI_Cancel(&g->pool[i]);
        MPI_Wait(&g->pool[i], &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled) pool_took(g, i, &st, 0);
        g->pool[i] = MPI_REQUEST_NULL;
    }
    g->npool = 0;
    g->pooltag = -1;
    if (g->pool_keep)
        g->pool_want = g->pool_got < POOL_GROW ? 2 : g->pool_got > POOL_MAX ? POOL_MAX : (int)g->pool_got;
}

/* test the pool (and the barrier receive pool[0], when posted): how many
 * completed; *bar set when the barrier receive did */
static int pool_poll(struct mpi_group *g, int *bar)
{
    int idx[POOL_MAX + 1], n = 0;
    MPI_Status st[POOL_MAX + 1];
    MPI_Testsome(g->npool + 1, g->pool, &n, idx, st);
    if (n == MPI_UNDEFINED) return 0;
    for (int k = 0; k < n; ++k) {
        if (idx[k] == 0) *bar = 1;
        else pool_took(g, idx[k], &st[k], 1);
    }
    return n;
}

static void bcombine(struct bmsg *a, const struct bmsg *b)
{
    if (b->vmin < a->vmin || (b->vmin == a->vmin && b->pmin < a->pmin)) {
        a->vmin = b->vmin;
        a->pmin = b->pmin;
    }
    if (b->vmax > a->vmax || (b->vmax == a->vmax && b->pmax < a->pmax)) {
        a->vmax = b->vmax;
        a->pmax = b->pmax;
    }
    a->any |= b->any;
    a->all &= b->all;
}

/* The watchdog of the sparse sync: this process knows only whom it waits
 * for (z): a peer that has not matched our first message (round < 0: it
 * is in no sync), or our partner in a round of the barrier. Those that
 * wait for a peer that has not arrived at all (first messages, round 0)
 * speak; the others give up too, a little later. */
static void sparse_watch(struct mpi_group *g, struct mpi_watch *wt, lpf_pid_t z, int round)
{
    if (g->range) mpi_range_plain_tick(g);   /* as in mpi_sync_watch */
    const struct sstep_watchdog *wd = sstep_watchdog();
    if (!wd->first_ns) return;
    uint64_t t = mpi_now_ns();
    if (!wt->t0) { wt->t0 = t; return; }
    uint64_t waited = t - wt->t0;
    if (waited < wd->first_ns) return;
    const int direct = round <= 0;
    const uint64_t grace = direct ? 0 : 5000000000ull;
    const int fatal = wd->timeout_ns && waited >= wd->timeout_ns + grace;
    if (!fatal && (wt->warned || !wd->warn_ns || waited < wd->warn_ns || !direct)) return;
    wt->warned = 1;
    char why[160];
    if (round < 0)
        snprintf(why, sizeof why, "it has not taken this process's first message (it is in no sync)");
    else
        snprintf(why, sizeof why, "this process's partner in round %d of %u of the sync's "
                "barrier%s", round + 1, g->nrounds,
                round ? ": it or a process it waits for has not arrived" : "");
    const double s = (double)waited / 1e9;
    const unsigned long long step = sstep_user_step(g->ctx);
    if (fatal)
        sstep_fatal(g->ctx, "sync", "gave up after waiting %.0f s (SUPERSTEP_SYNC_TIMEOUT) in "
                "the sync ending superstep %llu: not arrived: %u (%s)", s, step, z, why);
    sstep_warn("sync: process %u of %u has waited %.0f s in the sync ending superstep %llu: "
            "not arrived: %u (%s)", g->pid, g->P, s, step, z, why);
}

/* Block in MPI until a first message, the barrier's receive, one of
 * extra[0..n) (n <= 60) or a direct-get request completes (g->block);
 * handles what completed; returns how many of extra did. */
static int block_once(struct mpi_group *g, MPI_Request *extra, int n, int *bar)
{
    MPI_Request a[POOL_MAX + 2 + 60];
    int idx[POOL_MAX + 2 + 60], k = 0, done = 0;
    MPI_Status st[POOL_MAX + 2 + 60];
    if (g->dgr == MPI_REQUEST_NULL)
        MPI_Irecv(&g->dgbuf, sizeof g->dgbuf, MPI_BYTE, MPI_ANY_SOURCE, T_DGREQ, g->comm, &g->dgr);
    /* the pool's receives, the barrier's, the direct gets', extra */
    const int np = g->npool, b = np, dg = np + 1, x = np + 2;
    for (int i = 0; i < np; ++i) a[i] = g->pool[1 + i];
    a[b] = g->pool[0];
    a[dg] = g->dgr;
    for (int i = 0; i < n; ++i) a[x + i] = extra[i];
    MPI_Waitsome(x + n, a, &k, idx, st);
    for (int i = 0; i < np; ++i) g->pool[1 + i] = a[i];
    g->pool[0] = a[b];
    g->dgr = a[dg];
    for (int i = 0; i < n; ++i) extra[i] = a[x + i];
    if (k == MPI_UNDEFINED) return 0;
    for (int i = 0; i < k; ++i) {
        if (idx[i] < np) {
            pool_took(g, 1 + idx[i], &st[i], 1);
        } else if (idx[i] == b) {
            *bar = 1;
        } else if (idx[i] == dg) {
            struct dgreq r = g->dgbuf;
            MPI_Irecv(&g->dgbuf, sizeof g->dgbuf, MPI_BYTE, MPI_ANY_SOURCE, T_DGREQ, g->comm,
                    &g->dgr);
            mpi_dg_take(g, (lpf_pid_t)st[i].MPI_SOURCE, &r);
        } else {
            done++;
        }
    }
    return done;
}

/* the end of a blocking wait: the direct-get receive back (a request it
 * took meanwhile is served) */
static void block_end(struct mpi_group *g)
{
    if (g->dgr == MPI_REQUEST_NULL) return;
    MPI_Status st;
    int cancelled = 0;
    MPI_Cancel(&g->dgr);
    MPI_Wait(&g->dgr, &st);
    MPI_Test_cancelled(&st, &cancelled);
    g->dgr = MPI_REQUEST_NULL;
    if (!cancelled) mpi_dg_take(g, (lpf_pid_t)st.MPI_SOURCE, &g->dgbuf);
}

void mpi_sparse_barrier(struct mpi_group *g, const struct bmsg *mine, struct bmsg *res)
{
    const lpf_pid_t P = g->P, me = g->pid;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    struct mpi_watch wt = { 0, 0 };
    unsigned it = 0;
    int bar = 0;
    /* 1. every first message of ours matched (their receivers are in a
     * sync, or leaving); meanwhile take those sent to us */
    lpf_pid_t left = (lpf_pid_t)g->sfirst.n;
    while (left) {
        int n = 0, idx[64];
        int cnt = g->sfirst.n < 64 ? (int)g->sfirst.n : 64;
        /* the first 64 outstanding ones at a time (completed requests
         * are MPI_REQUEST_NULL and skipped) */
        size_t base = 0;
        while (base < g->sfirst.n && g->sfirst.r[base] == MPI_REQUEST_NULL) ++base;
        if (base + (size_t)cnt > g->sfirst.n) cnt = (int)(g->sfirst.n - base);
        if (g->block == 2 || (g->block && w.idle)) {
            if (cnt > 60) cnt = 60;
            left -= (lpf_pid_t)block_once(g, g->sfirst.r + base, cnt, &bar);
            continue;
        }
        MPI_Testsome(cnt, g->sfirst.r + base, &n, idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED) n = 0;
        left -= (lpf_pid_t)n;
        int p = pool_poll(g, &bar);
        if (n || p) continue;
        ++it;
        mpi_wait_serve(g, &w, it, 0);
        mpi_wait_step(&w);
        if (mpi_wait_watch_due(&w, it)) sparse_watch(g, &wt, g->ord[base], -1);
    }
    g->sfirst.n = 0;
    /* 2. the rounds: round r sends what we know to me + 2^r and receives
     * from me - 2^r (then we know of 2^(r+1) processes) */
    struct bmsg acc = *mine;
    for (unsigned r = 0; r < g->nrounds; ++r) {
        const lpf_pid_t d = (lpf_pid_t)(((uint64_t)1 << r) % P);
        const lpf_pid_t to = me + d < P ? me + d : me + d - P;
        const lpf_pid_t from = me >= d ? me - d : me + P - d;
        g->bout[r] = acc;
        MPI_Isend(&g->bout[r], sizeof acc, MPI_BYTE, (int)to, STAG_BAR(r, g->secpar), g->comm,
                reqv_push(&g->rbar));
        g->sent++;
        MPI_Irecv(&g->bin[r], sizeof acc, MPI_BYTE, (int)from, STAG_BAR(r, g->secpar), g->comm,
                &g->pool[0]);
        bar = 0;
        mpi_wait_init(&w, NAP_SYNC_NS);
        while (!bar) {
            if (g->block == 2 || (g->block && w.idle)) {
                block_once(g, NULL, 0, &bar);
                continue;
            }
            if (pool_poll(g, &bar)) continue;
            ++it;
            mpi_wait_serve(g, &w, it, 0);
            mpi_wait_step(&w);
            if (mpi_wait_watch_due(&w, it)) sparse_watch(g, &wt, from, (int)r);
        }
        bcombine(&acc, &g->bin[r]);
    }
    block_end(g);
    *res = acc;
    mpi_wait_all(g, &g->rbar);
    g->nbar++;
}
