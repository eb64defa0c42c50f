/*
 * The pthread engine's PUB extensions (pub.md §12.2): E1 (sync over a range
 * of pids, matched by stamp), E2 (oblivious sync) and E4 (no hang).
 *
 * E1 barrier (sections of up to PT_PAIR_MAXP processes): point-to-point
 * arrival lines, one per ordered pair of processes. The k-th arrival of q
 * at a barrier that p takes part in writes its stamp, phase, flags and
 * check value into slot k mod 2 of the line q -> p and then the count k;
 * p waits until the count of every other member's line to p reaches its
 * own k and the slot names the same stamp and phase. q cannot make its
 * (k+2)-th such arrival before p has made its (k+1)-th, so two slots are
 * enough; members must make their common barriers in the same order (any
 * other order deadlocks, as it would with any barrier). A barrier among
 * n processes moves n - 1 lines to each, nothing shared by all.
 * Larger sections: arrivals meet in an entry keyed by (stamp, phase) in a
 * small table of the section (a mutex guards the list; waiters spin on the
 * entry's atomic count without it); the last member to leave frees it.
 * A sync is  [ship messages] -> phase 0 -> [gets] -> [phase 1]
 * -> [puts] -> [phase 2], the bracketed steps only when some member of the
 * range queued requests of that kind (the OR of the flags travels with
 * phase 0). Messages are pushed onto the receivers' mailboxes before the
 * sender arrives, so after phase 0 everything shipped to the caller for
 * this stamp is there.
 *
 * E2 needs no barrier: the batches shipped to the caller and one look at
 * its own mailbox are the whole synchronisation.
 *
 * Every process publishes what it waits in (stamp, kind, range, counts) in
 * a record of its own cache line (a seqlock). Waiters check their range's
 * records and gone bits on the slow path: a member gone, or waiting in a
 * later step of the same object or the other kind for this stamp, ends the
 * wait at once (after re-checking that the wait is not complete).
 *
 * Deadlock (E4): each process counts in its record every state change it
 * makes that a wait can depend on (arrivals, shipped batches); `events` is
 * the sum over the section (counters only grow: a sum read before and one
 * read after are equal only if nothing changed in between). A waiter
 * blocked for 0.1 s publishes the sum it read before it last found its
 * condition false. Any such waiter may probe (trylock): if every process
 * of the section is gone or blocked with that same value, and two probes
 * at least 50 ms apart see the same sum, nothing can change any more:
 * deadlock, reported to every blocked waiter.
 *
 * An ordinary sync (lpf_sync, bsp_sync) in a section that has used range
 * syncs takes part too once it has waited 0.1 s (pt_range_plain_*): its
 * record says kind PT_PLAIN and blocked. It cannot complete while any
 * process waits in E1/E2, so a section where every process is blocked, at
 * least one in E1/E2 and nothing changes, is a deadlock: one process in
 * the ordinary sync and another in a zero-cost, tagged or PUB sync of the
 * same superstep. The report names a range waiter, and one ordinary waiter
 * in rep_plain; the ordinary waiters wait to be ended.
 */
#include "pthread_internal.h"
#include "../../core/pubext_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PT_RLINE 128
#define BLOCKED_NS 100000000ull    /* 0.1 s before taking part in detection */
#define PROBE_GAP_NS 50000000ull   /* two probes this far apart */
#define SLOW_EVERY_NS 1000000ull   /* slow-path checks at most this often */
#define PT_PAIR_MAXP 64            /* pair lines up to this many processes */
#define PT_CELL_MAXP 32            /* message cells up to this many processes */
#define PT_CELLS 8                 /* cells per ordered pair */
#define PT_CELL 256                /* bytes per cell: seq, then a batch */
#define PT_CELL_BATCH (PT_CELL - 16)
#define PT_PLAIN 7u                /* a record's kind: an ordinary sync */
_Static_assert(PT_CELL_BATCH <= SSTEP_BATCH_SMALL, "a cell's batch fits a small block");

struct pt_rec {
    _Atomic uint64_t seq;          /* seqlock: odd while being written */
    _Atomic uint64_t object, step;
    _Atomic uint32_t kind, waiting;
    _Atomic uint32_t lo, n;
    _Atomic uint64_t arrived, expect;
    _Atomic uint64_t checked;      /* events+1 at the last failed check; 0: not blocked */
    _Atomic uint64_t ev;           /* state changes made by this process */
} __attribute__((aligned(PT_RLINE)));

/* the arrival lines q -> p: q's k-th arrival at a barrier with p in slot
 * k & 1 (seq = k, written last), with q's small puts to p in phase 0 */
#define PT_INL_BYTES 80
struct pt_pslot {
    _Atomic uint64_t seq;
    _Atomic uint64_t object, step;
    _Atomic uint64_t tag;          /* phase << 32 | flags */
    uint64_t used;                 /* bytes of puts in data */
    char data[PT_INL_BYTES];       /* { slot, size, off } and the bytes, 8-aligned */
    _Atomic uint64_t check;        /* last: read only where a check is in use
                                      (flag bit 0 of either side), so that a
                                      barrier with one small put reads one
                                      64-byte line */
} __attribute__((aligned(PT_RLINE)));
_Static_assert(sizeof(struct pt_pslot) == PT_RLINE, "an arrival slot is 128 bytes");
struct pt_pair {
    struct pt_pslot s[2];
};
/* A small batch from q to p travels in one of the cells of the ring q -> p
 * instead of the mailbox: q writes it and then seq = its number + 1; p
 * copies it out (into its mailbox list) and publishes how many it took in
 * ack; q reads ack only when the ring looks full, and ships through the
 * mailbox when it is. */
struct pt_cell {
    _Atomic uint64_t seq;
    uint64_t pad_;
    char batch[PT_CELL_BATCH];
} __attribute__((aligned(PT_RLINE)));
struct pt_ack {
    _Atomic uint64_t taken;
} __attribute__((aligned(PT_RLINE)));

/* flags of phase 0 beyond the request kinds: some member has puts that are
 * not all in its arrival lines */
#define PT_F_NOINL ((uint64_t)1 << 16)

struct pt_entry {
    struct pt_entry *next;
    uint64_t object, step;
    uint32_t phase;
    lpf_pid_t n;
    _Atomic lpf_pid_t count, departed;
    _Atomic uint64_t flags;
    _Atomic uint64_t checks[];     /* [n]: agreement values, by member index */
};

struct pt_range {
    lpf_pid_t P;
    pthread_mutex_t lock;          /* the entry list */
    struct pt_entry *entries;
    struct pt_pair *pairs;         /* [P * P]: pairs[q * P + p] is q -> p; NULL: entries */
    uint64_t *karr;                /* [P][kstride]: p's arrivals with q (p's row, p only) */
    size_t kstride;
    struct pt_cell *cells;         /* [P * P][PT_CELLS]: ring q -> p at q * P + p; NULL: none */
    struct pt_ack *acks;           /* [P * P]: cells of q -> p that p took */
    uint64_t *csent, *cack, *ctaken; /* [P][kstride]: cells q sent to p, p's ack q saw,
                                      * cells p took from q (each row: its process only) */
    _Alignas(PT_RLINE) pthread_mutex_t dl_lock;
    uint64_t dl_events, dl_time;   /* last probe that found all blocked */
    int dl_seen;
    _Atomic int deadlock;          /* declared; report below */
    lpf_pid_t rep_pid, rep_lo, rep_n;
    int rep_kind;
    uint64_t rep_object, rep_step, rep_arrived, rep_expect;
    lpf_pid_t rep_plain;           /* 1 + a process in an ordinary sync (0: none) */
    lpf_pid_t rep_other;           /* 1 + one in another range wait (0: none) */
    int rep_other_kind;
    uint64_t rep_other_object;
    struct pt_rec *recs;           /* [P] */
};

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

struct pt_range *pt_range_new(lpf_pid_t P)
{
    struct pt_range *r = aligned_alloc(PT_RLINE, (sizeof *r + PT_RLINE - 1) / PT_RLINE * PT_RLINE);
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->P = P;
    r->recs = aligned_alloc(PT_RLINE, (size_t)P * sizeof *r->recs);
    if (!r->recs) { free(r); return NULL; }
    memset(r->recs, 0, (size_t)P * sizeof *r->recs);
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->dl_lock, NULL);
    if (P <= PT_PAIR_MAXP) {
        r->kstride = ((size_t)P + 15) & ~(size_t)15;
        r->pairs = aligned_alloc(PT_RLINE, (size_t)P * P * sizeof *r->pairs);
        r->karr = aligned_alloc(PT_RLINE, (size_t)P * r->kstride * sizeof *r->karr);
        if (!r->pairs || !r->karr) {
            pt_range_free(r);
            return NULL;
        }
        memset(r->pairs, 0, (size_t)P * P * sizeof *r->pairs);
        memset(r->karr, 0, (size_t)P * r->kstride * sizeof *r->karr);
    }
    if (P <= PT_CELL_MAXP) {
        const size_t rows = (size_t)P * r->kstride * sizeof(uint64_t);
        r->cells = aligned_alloc(PT_RLINE, (size_t)P * P * PT_CELLS * sizeof *r->cells);
        r->acks = aligned_alloc(PT_RLINE, (size_t)P * P * sizeof *r->acks);
        r->csent = aligned_alloc(PT_RLINE, rows);
        r->cack = aligned_alloc(PT_RLINE, rows);
        r->ctaken = aligned_alloc(PT_RLINE, rows);
        if (!r->cells || !r->acks || !r->csent || !r->cack || !r->ctaken) {
            pt_range_free(r);
            return NULL;
        }
        memset(r->cells, 0, (size_t)P * P * PT_CELLS * sizeof *r->cells);
        memset(r->acks, 0, (size_t)P * P * sizeof *r->acks);
        memset(r->csent, 0, rows);
        memset(r->cack, 0, rows);
        memset(r->ctaken, 0, rows);
    }
    return r;
}

void pt_range_free(struct pt_range *r)
{
    if (!r) return;
    for (struct pt_entry *e = r->entries, *n; e; e = n) {
        n = e->next;
        free(e);
    }
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->dl_lock);
    free(r->pairs);
    free(r->karr);
    free(r->cells);
    free(r->acks);
    free(r->csent);
    free(r->cack);
    free(r->ctaken);
    free(r->recs);
    free(r);
}

/* a state change of this process that waits may depend on */
static inline void bump_events(struct pt_range *r, lpf_pid_t pid)
{
    /* a plain release store: a full fence here would wait for the lines
     * just written to peers (the probes look twice, 50 ms apart) */
    _Atomic uint64_t *e = &r->recs[pid].ev;
    atomic_store_explicit(e, atomic_load_explicit(e, memory_order_relaxed) + 1,
            memory_order_release);
}

/* the section's sum of state changes */
static uint64_t events_sum(struct pt_range *r)
{
    uint64_t sum = 0;
    for (lpf_pid_t q = 0; q < r->P; ++q)
        sum += atomic_load_explicit(&r->recs[q].ev, memory_order_seq_cst);
    return sum;
}

/* ------------------------------------------------------------------ */
/* Records                                                              */
/* ------------------------------------------------------------------ */

static void rec_enter(struct pt_rec *m, struct sstep_stamp s, int kind, lpf_pid_t lo,
        lpf_pid_t n, size_t expect)
{
    uint64_t q = atomic_load_explicit(&m->seq, memory_order_relaxed);
    atomic_store_explicit(&m->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&m->object, s.object, memory_order_relaxed);
    atomic_store_explicit(&m->step, s.step, memory_order_relaxed);
    atomic_store_explicit(&m->kind, (uint32_t)kind, memory_order_relaxed);
    atomic_store_explicit(&m->lo, lo, memory_order_relaxed);
    atomic_store_explicit(&m->n, n, memory_order_relaxed);
    atomic_store_explicit(&m->arrived, 0, memory_order_relaxed);
    atomic_store_explicit(&m->expect, expect, memory_order_relaxed);
    atomic_store_explicit(&m->checked, 0, memory_order_relaxed);
    atomic_store_explicit(&m->waiting, 1, memory_order_relaxed);
    atomic_store_explicit(&m->seq, q + 2, memory_order_release);
}

static void rec_leave(struct pt_rec *m)
{
    atomic_store_explicit(&m->checked, 0, memory_order_relaxed);
    atomic_store_explicit(&m->waiting, 0, memory_order_release);
}

struct rec_view {
    uint64_t object, step, arrived, expect;
    uint32_t kind, waiting, lo, n;
};

static void rec_read(struct pt_rec *m, struct rec_view *v)
{
    for (;;) {
        uint64_t a = atomic_load_explicit(&m->seq, memory_order_acquire);
        if (a & 1) { sched_yield(); continue; }
        v->object = atomic_load_explicit(&m->object, memory_order_relaxed);
        v->step = atomic_load_explicit(&m->step, memory_order_relaxed);
        v->kind = atomic_load_explicit(&m->kind, memory_order_relaxed);
        v->lo = atomic_load_explicit(&m->lo, memory_order_relaxed);
        v->n = atomic_load_explicit(&m->n, memory_order_relaxed);
        v->arrived = atomic_load_explicit(&m->arrived, memory_order_relaxed);
        v->expect = atomic_load_explicit(&m->expect, memory_order_relaxed);
        v->waiting = atomic_load_explicit(&m->waiting, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&m->seq, memory_order_relaxed) == a) return;
    }
}

/* ------------------------------------------------------------------ */
/* Message cells                                                        */
/* ------------------------------------------------------------------ */

/* the receiver: copy what q left in the ring q -> ctx into its mailbox list */
static int cells_take(struct pt_range *r, struct sstep_ctx *ctx, lpf_pid_t q)
{
    const lpf_pid_t me = ctx->pid, P = r->P;
    uint64_t *tk = &r->ctaken[(size_t)me * r->kstride + q];
    struct pt_cell *ring = &r->cells[((size_t)q * P + me) * PT_CELLS];
    uint64_t t = *tk;
    const uint64_t t0 = t;
    for (;; ++t) {
        struct pt_cell *c = &ring[t % PT_CELLS];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != t + 1) break;
        const struct sstep_batch *b = (const struct sstep_batch *)c->batch;
        const size_t bytes = (size_t)b->bytes;
        struct sstep_batch *nb = sstep_batch_small(ctx);
        if (!nb) sstep_fatal(ctx, "sstep_sync_range", "out of memory (a %zu-byte batch)", bytes);
        memcpy(nb, b, bytes);
        nb->pooled = 1;
        sstep_mailbox_append(ctx, nb);
    }
    if (t == t0) return 0;
    *tk = t;
    atomic_store_explicit(&r->acks[(size_t)q * P + me].taken, t, memory_order_release);
    return 1;
}

/* sstep_ext.engine_drain: every ring to ctx */
static int cells_drain(struct sstep_ctx *ctx)
{
    struct pt_range *r = pt_x_range(ctx);
    int got = 0;
    if (!r->cells) return 0;   /* a later section of this context, without cells */
    for (lpf_pid_t q = 0; q < r->P; ++q)
        if (q != ctx->pid) got |= cells_take(r, ctx, q);
    return got;
}

static void cells_hook(struct sstep_ctx *ctx)
{
    struct sstep_ext *x = sstep_ext_get(ctx);
    if (!atomic_load_explicit(&x->engine_drain, memory_order_acquire))
        atomic_store_explicit(&x->engine_drain, cells_drain, memory_order_release);
}

/* ship a batch of `bytes` to d in a cell; 0 when the ring is full */
static int cells_ship(struct pt_range *r, struct sstep_ctx *ctx, lpf_pid_t d,
        struct sstep_stamp s, int kind, size_t bytes)
{
    const lpf_pid_t me = ctx->pid, P = r->P;
    const size_t row = (size_t)me * r->kstride;
    const uint64_t h = r->csent[row + d];
    if (h - r->cack[row + d] >= PT_CELLS) {
        r->cack[row + d] = atomic_load_explicit(&r->acks[(size_t)me * P + d].taken,
                memory_order_acquire);
        if (h - r->cack[row + d] >= PT_CELLS) return 0;
    }
    if (h == 0) cells_hook(pt_x_ctx(ctx, d));   /* the first cell to d: it drains cells */
    struct pt_cell *c = &r->cells[((size_t)me * P + d) * PT_CELLS + h % PT_CELLS];
    sstep_batch_fill(ctx, d, s, kind, (struct sstep_batch *)c->batch, bytes);
    atomic_store_explicit(&c->seq, h + 1, memory_order_release);
    r->csent[row + d] = h + 1;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Waiting with the slow-path checks                                    */
/* ------------------------------------------------------------------ */

struct waitst {
    struct sstep_ctx *ctx;
    struct pt_range *r;
    struct sstep_stamp s;
    int kind;
    lpf_pid_t lo, n;
    const lpf_pid_t *mem;          /* the members (NULL: lo..lo+n-1) */
    lpf_pid_t idx;                 /* the caller's index among them */
    size_t expect;
    struct pt_entry *e;            /* E1 (entries): the entry waited on */
    uint32_t phase;                /* E1 (pairs): the phase waited in */
    lpf_pid_t next;                /* E1 (pairs): members before this one have arrived */
    uint64_t tagv;                 /* E1 (pairs): phase << 32 | flags of the caller */
    uint64_t or_flags;             /* E1 (pairs): OR of the arrived members' flags */
    uint64_t check;                /* E1 (pairs): the caller's check value */
    size_t have;                   /* E2: messages counted */
    int counted;                   /* E2: have counts the batches drained so far */
    uint64_t last_slow;
    int warned;
    struct sstep_sync_info *info;
    int cause;
};

enum { W_DONE = 1, W_FAIL = 2 };

static inline lpf_pid_t member_at(const struct waitst *w, lpf_pid_t k)
{
    return w->mem ? w->mem[k] : w->lo + k;
}

/* E1 on pair lines: has every member arrived at this phase? */
static int pairs_met(struct waitst *w)
{
    struct pt_range *r = w->r;
    const lpf_pid_t me = w->ctx->pid, P = r->P;
    const uint64_t *kk = &r->karr[(size_t)me * r->kstride];
    for (; w->next < w->n; ++w->next) {
        const lpf_pid_t q = member_at(w, w->next);
        if (q == me) continue;
        const uint64_t k = kk[q];
        struct pt_pslot *sl = &r->pairs[(size_t)q * P + me].s[k & 1];
        if (atomic_load_explicit(&sl->seq, memory_order_acquire) != k) return 0;
        const uint64_t obj = atomic_load_explicit(&sl->object, memory_order_relaxed);
        const uint64_t step = atomic_load_explicit(&sl->step, memory_order_relaxed);
        const uint64_t tag = atomic_load_explicit(&sl->tag, memory_order_relaxed);
        if (SSTEP_UNLIKELY(obj != w->s.object)) return 0;   /* another object: never */
        if (SSTEP_UNLIKELY(step != w->s.step || (tag >> 32) != (w->tagv >> 32))) {
            w->cause = SSTEP_CAUSE_MISMATCH;
            w->info->peer = q;
            w->info->peer_stamp.object = obj;
            w->info->peer_stamp.step = step;
            w->info->peer_kind = SSTEP_KIND_SYNC;
            return 1;
        }
        w->or_flags |= tag & 0xffffffffu;
        if (!((tag & 1) || w->check)) continue;   /* neither side checks */
        const uint64_t c = atomic_load_explicit(&sl->check, memory_order_relaxed);
        if (c != w->check && !w->info->mismatch) {
            w->info->mismatch = 1;
            w->info->peer = q;
            w->info->peer_check = c;
        }
    }
    return 1;
}

static int cond_met(struct waitst *w)
{
    if (w->kind == SSTEP_E1) {
        if (w->r->pairs) return pairs_met(w);
        return atomic_load_explicit(&w->e->count, memory_order_acquire) == w->n;
    }
    struct sstep_mailbox *m = &sstep_ext_get(w->ctx)->mbox;
    int got = 0;
    if (w->r->cells)
        for (lpf_pid_t k = 0; k < w->n; ++k)
            if (member_at(w, k) != w->ctx->pid) got |= cells_take(w->r, w->ctx, member_at(w, k));
    if (!w->counted || got || sstep_mailbox_pending(m)) {
        lpf_pid_t bad;
        w->counted = 1;
        w->have = sstep_mailbox_count(w->ctx, w->s, w->kind, &bad);
        atomic_store_explicit(&w->r->recs[w->ctx->pid].arrived, w->have, memory_order_relaxed);
        if (bad != LPF_MAX_P) {
            w->cause = SSTEP_CAUSE_MISMATCH;
            w->info->peer = bad;
            w->info->peer_stamp = w->s;
            w->info->peer_kind = SSTEP_KIND_SYNC;
            return 1;
        }
    }
    return w->have >= w->expect;
}

static void fill_deadlock(struct waitst *w)
{
    struct pt_range *r = w->r;
    struct sstep_sync_info *info = w->info;
    w->cause = SSTEP_CAUSE_DEADLOCK;
    info->peer = r->rep_pid;
    info->peer_kind = r->rep_kind;
    info->peer_stamp.object = r->rep_object;
    info->peer_stamp.step = r->rep_step;
    info->peer_lo = r->rep_lo;
    info->peer_n = r->rep_n;
    info->peer_arrived = r->rep_arrived;
    info->peer_expect = r->rep_expect;
    info->peer_plain = r->rep_plain;
    info->peer_other = r->rep_other;
    info->peer_other_kind = r->rep_other_kind;
    info->peer_other_object = r->rep_other_object;
    info->report = 0;
}

/* every process gone or blocked having seen `ev` events: deadlock? */
static void probe(struct waitst *w, uint64_t ev)
{
    struct pt_range *r = w->r;
    if (pthread_mutex_trylock(&r->dl_lock) != 0) return;
    if (atomic_load_explicit(&r->deadlock, memory_order_acquire)) goto out;
    const lpf_pid_t P = r->P;
    int all = 1;
    for (lpf_pid_t q = 0; q < P && all; ++q) {
        if (pt_x_gone(w->ctx, q)) continue;
        struct pt_rec *m = &r->recs[q];
        if (!atomic_load_explicit(&m->waiting, memory_order_acquire)
                || atomic_load_explicit(&m->checked, memory_order_acquire) != ev + 1)
            all = 0;
    }
    if (all && events_sum(r) != ev) all = 0;
    uint64_t now = mono_ns();
    if (!all) {
        r->dl_seen = 0;
    } else if (!r->dl_seen || r->dl_events != ev) {
        r->dl_seen = 1;
        r->dl_events = ev;
        r->dl_time = now;
    } else if (now - r->dl_time >= PROBE_GAP_NS) {
        /* the report: the lowest pid blocked in E2, else the lowest blocked
         * in E1 (a process in an ordinary sync is named beside it) */
        lpf_pid_t pick = LPF_MAX_P, first = LPF_MAX_P;
        struct rec_view v, pv, fv;
        memset(&pv, 0, sizeof pv);
        memset(&fv, 0, sizeof fv);
        r->rep_plain = 0;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (pt_x_gone(w->ctx, q)) continue;
            rec_read(&r->recs[q], &v);
            if (v.kind == PT_PLAIN) {
                if (!r->rep_plain) r->rep_plain = q + 1;
                continue;
            }
            if (first == LPF_MAX_P) { first = q; fv = v; }
            if (v.kind == SSTEP_E2 && pick == LPF_MAX_P) { pick = q; pv = v; }
        }
        if (pick == LPF_MAX_P) { pick = first; pv = fv; }
        r->rep_other = 0;
        for (lpf_pid_t q = 0; q < P && !r->rep_other; ++q) {
            if (q == pick || pt_x_gone(w->ctx, q)) continue;
            rec_read(&r->recs[q], &v);
            if (v.kind == PT_PLAIN || (v.object == pv.object && v.kind == pv.kind)) continue;
            r->rep_other = q + 1;
            r->rep_other_kind = v.kind == SSTEP_E2 ? SSTEP_KIND_OBLSYNC : SSTEP_KIND_SYNC;
            r->rep_other_object = v.object;
        }
        r->rep_pid = pick;
        r->rep_kind = pv.kind == SSTEP_E2 ? SSTEP_KIND_OBLSYNC : SSTEP_KIND_SYNC;
        r->rep_object = pv.object;
        r->rep_step = pv.step;
        r->rep_lo = pv.lo;
        r->rep_n = pv.n;
        r->rep_arrived = pv.arrived;
        r->rep_expect = pv.expect;
        atomic_store_explicit(&r->deadlock, 1, memory_order_release);
    }
out:
    pthread_mutex_unlock(&r->dl_lock);
    if (atomic_load_explicit(&r->deadlock, memory_order_acquire)) pt_x_wake(w->ctx);
}

/* pair lines: has q made its arrival at the barrier `me` waits in? */
static int pair_arrived(struct pt_range *r, lpf_pid_t me, lpf_pid_t q)
{
    const uint64_t k = r->karr[(size_t)me * r->kstride + q];
    const struct pt_pslot *sl = &r->pairs[(size_t)q * r->P + me].s[k & 1];
    return atomic_load_explicit(&sl->seq, memory_order_acquire) == k;
}

/* A member gone, or waiting where it cannot meet us: the cause, else 0. */
static int range_problem(struct waitst *w)
{
    struct pt_range *r = w->r;
    struct rec_view v;
    for (lpf_pid_t k = 0; k < w->n; ++k) {
        lpf_pid_t q = member_at(w, k);
        if (q == w->ctx->pid) continue;
        if (w->kind == SSTEP_E1 && pt_x_gone(w->ctx, q)) {
            /* on pair lines a member that arrived here may have passed the
             * barrier and left while another member's line to us is still
             * being written (it writes its lines one after the other) */
            if (r->pairs && pair_arrived(r, w->ctx->pid, q)) continue;
            w->info->peer = q;
            return SSTEP_CAUSE_GONE;
        }
        rec_read(&r->recs[q], &v);
        if (!v.waiting || v.object != w->s.object) continue;
        /* likewise a member that arrived here, passed the barrier and
         * waits in a later step of the object already (the barrier will
         * complete; its line, checked by pairs_met, names the step) */
        if (w->kind == SSTEP_E1 && v.step > w->s.step && r->pairs
                && pair_arrived(r, w->ctx->pid, q))
            continue;
        if ((w->kind == SSTEP_E1 && v.step > w->s.step)
                || (v.step == w->s.step && (int)v.kind != w->kind)) {
            w->info->peer = q;
            w->info->peer_stamp.object = v.object;
            w->info->peer_stamp.step = v.step;
            w->info->peer_kind = v.kind == SSTEP_E2 ? SSTEP_KIND_OBLSYNC : SSTEP_KIND_SYNC;
            return SSTEP_CAUSE_MISMATCH;
        }
    }
    return 0;
}

static int wait_pred(void *arg, uint64_t waited)
{
    struct waitst *w = arg;
    struct pt_range *r = w->r;
    /* events is read before the condition, but only by a waiter that may
     * take part in deadlock detection: it reads every record's line */
    const int blocked = waited >= BLOCKED_NS;
    uint64_t ev = blocked ? events_sum(r) : 0;
    if (cond_met(w)) return w->cause ? W_FAIL : W_DONE;
    if (waited == 0) return 0;
    uint64_t now = mono_ns();
    if (now - w->last_slow < SLOW_EVERY_NS) return 0;
    w->last_slow = now;
    if (atomic_load_explicit(&r->deadlock, memory_order_acquire)) {
        fill_deadlock(w);
        return W_FAIL;
    }
    int c = range_problem(w);
    if (c) {
        /* complete after all? (members leave only a complete barrier) */
        if (cond_met(w)) return w->cause ? W_FAIL : W_DONE;
        w->cause = c;
        return W_FAIL;
    }
    if (blocked) {
        atomic_store_explicit(&r->recs[w->ctx->pid].checked, ev + 1, memory_order_seq_cst);
        probe(w, ev);
        if (atomic_load_explicit(&r->deadlock, memory_order_acquire)) {
            fill_deadlock(w);
            return W_FAIL;
        }
    }
    const struct sstep_watchdog *wd = sstep_watchdog();
    if (SSTEP_UNLIKELY(wd->first_ns) && waited >= wd->first_ns
            && (!w->warned || (wd->timeout_ns && waited >= wd->timeout_ns))) {
        w->warned = 1;
        /* by pid: the line names the members, not their positions */
        const lpf_pid_t P = w->ctx->nprocs;
        unsigned char *state = malloc(P);
        uint64_t *steps = calloc(P, sizeof *steps);
        if (state && steps) {
            struct rec_view v;
            memset(state, SSTEP_ARR_OUT, P);
            for (lpf_pid_t k = 0; k < w->n; ++k) {
                lpf_pid_t q = member_at(w, k);
                rec_read(&r->recs[q], &v);
                struct sstep_ctx *c2 = pt_x_ctx(w->ctx, q);
                steps[q] = c2 ? __atomic_load_n(&c2->superstep, __ATOMIC_RELAXED) : 0;
                state[q] = pt_x_gone(w->ctx, q) ? SSTEP_ARR_LEFT
                        : (v.waiting && v.object == w->s.object && v.step == w->s.step)
                            ? SSTEP_ARR_YES : SSTEP_ARR_NOT;
            }
            pt_x_stalled(w->ctx, waited, P, state, steps);
        }
        free(state);
        free(steps);
    }
    return 0;
}

static int do_wait(struct waitst *w)
{
    w->last_slow = 0;
    return pt_x_wait(w->ctx, wait_pred, w);
}

/* ------------------------------------------------------------------ */
/* E1 barrier entries                                                   */
/* ------------------------------------------------------------------ */

static struct pt_entry *arrive(struct pt_range *r, struct sstep_stamp s, uint32_t phase,
        lpf_pid_t n, lpf_pid_t idx, uint64_t flags, uint64_t check)
{
    pthread_mutex_lock(&r->lock);
    struct pt_entry *e = r->entries;
    while (e && !(e->object == s.object && e->step == s.step && e->phase == phase)) e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e + (size_t)n * sizeof(uint64_t));
        if (!e) { pthread_mutex_unlock(&r->lock); return NULL; }
        e->object = s.object;
        e->step = s.step;
        e->phase = phase;
        e->n = n;
        e->next = r->entries;
        r->entries = e;
    }
    if (idx < e->n) atomic_store_explicit(&e->checks[idx], check, memory_order_relaxed);
    atomic_fetch_or_explicit(&e->flags, flags, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->count, 1, memory_order_release);
    pthread_mutex_unlock(&r->lock);
    return e;
}

static void depart(struct pt_range *r, struct pt_entry *e)
{
    /* read n before departing: once the last member has departed, e is freed */
    const lpf_pid_t n = e->n;
    if (atomic_fetch_add_explicit(&e->departed, 1, memory_order_acq_rel) + 1 != n) return;
    pthread_mutex_lock(&r->lock);
    for (struct pt_entry **pp = &r->entries; *pp; pp = &(*pp)->next)
        if (*pp == e) { *pp = e->next; break; }
    pthread_mutex_unlock(&r->lock);
    free(e);
}

struct inl_rec {
    uint32_t slot, size;
    uint64_t off;
};

/* bytes that the puts to d take in an arrival line */
static size_t inl_need(const struct sstep_queue *q, lpf_pid_t d)
{
    const struct sstep_peer_lists *pl = &q->peers[d];
    return pl->bytes[SSTEP_PUT] + (size_t)pl->count[SSTEP_PUT] * (sizeof(struct inl_rec) + 7);
}

static void inl_pack(const struct sstep_queue *q, lpf_pid_t d, struct pt_pslot *sl)
{
    char *o = sl->data;
    for (uint32_t k = q->peers[d].head[SSTEP_PUT]; k != SSTEP_NIL; k = q->reqs[k].next) {
        const struct sstep_req *r = &q->reqs[k];
        struct inl_rec h = { r->slot, (uint32_t)r->size, r->off };
        memcpy(o, &h, sizeof h);
        o += sizeof h;
        sstep_copy(o, r->local, r->size);
        o += (r->size + 7) & ~(size_t)7;
    }
    sl->used = (uint64_t)(o - sl->data);
}

/* the puts member q left for us in its line of our last common phase 0 */
static void inl_apply(struct pt_range *r, struct sstep_ctx *me, lpf_pid_t q)
{
    const uint64_t k = r->karr[(size_t)me->pid * r->kstride + q];
    const struct pt_pslot *sl = &r->pairs[(size_t)q * r->P + me->pid].s[k & 1];
    for (const char *o = sl->data, *end = sl->data + sl->used; o < end;) {
        struct inl_rec h;
        memcpy(&h, o, sizeof h);
        o += sizeof h;
        char *to = sstep_resolve_global(me, h.slot, (size_t)h.off, h.size);
        if (SSTEP_UNLIKELY(!to)) {
            const struct sstep_ctx *src = pt_x_ctx(me, q);
            sstep_remote_range_error(me, src->put_name ? src->put_name : "lpf_put", q, h.slot,
                    (size_t)h.off, h.size);
        }
        sstep_copy(to, o, h.size);
        o += ((size_t)h.size + 7) & ~(size_t)7;
    }
}

/* one barrier on pair lines (see the head comment); with `puts`, phase 0
 * also carries the caller's puts to each member (all fit: flags say) */
static int barrier_pairs(struct waitst *w, uint32_t phase, uint64_t flags, uint64_t check,
        uint64_t *or_flags, const struct sstep_queue *puts)
{
    struct pt_range *r = w->r;
    const lpf_pid_t me = w->ctx->pid, P = r->P;
    uint64_t *kk = &r->karr[(size_t)me * r->kstride];
    const uint64_t tagv = (uint64_t)phase << 32 | flags;
    for (lpf_pid_t i = 0; i < w->n; ++i) {
        const lpf_pid_t q = member_at(w, i);
        if (q == me) continue;
        const uint64_t k = ++kk[q];
        struct pt_pslot *sl = &r->pairs[(size_t)me * P + q].s[k & 1];
        atomic_store_explicit(&sl->object, w->s.object, memory_order_relaxed);
        atomic_store_explicit(&sl->step, w->s.step, memory_order_relaxed);
        atomic_store_explicit(&sl->tag, tagv, memory_order_relaxed);
        atomic_store_explicit(&sl->check, check, memory_order_relaxed);
        /* (a line without puts says so: the reader of a phase 0 whose
         * puts all fit applies every member's line) */
        if (puts && puts->peers[q].head[SSTEP_PUT] != SSTEP_NIL) inl_pack(puts, q, sl);
        else sl->used = 0;
        atomic_store_explicit(&sl->seq, k, memory_order_release);
    }
    bump_events(r, me);
    pt_x_wake(w->ctx);
    w->phase = phase;
    w->next = 0;
    w->tagv = tagv;
    w->or_flags = flags;
    w->check = check;
    if (do_wait(w) != W_DONE) return -1;
    *or_flags = w->or_flags;
    return 0;
}

static int barrier(struct waitst *w, uint32_t phase, uint64_t flags, uint64_t check,
        uint64_t *or_flags)
{
    struct pt_range *r = w->r;
    if (r->pairs) return barrier_pairs(w, phase, flags, check, or_flags, NULL);
    w->e = arrive(r, w->s, phase, w->n, w->idx, flags, check);
    if (!w->e) return -1;
    bump_events(r, w->ctx->pid);
    pt_x_wake(w->ctx);
    if (do_wait(w) != W_DONE) return -1;
    struct pt_entry *e = w->e;
    *or_flags = atomic_load_explicit(&e->flags, memory_order_relaxed);
    if (phase == 0 && (*or_flags & 1)) {
        struct sstep_sync_info *info = w->info;
        for (lpf_pid_t k = 0; k < w->n; ++k) {
            uint64_t c = atomic_load_explicit(&e->checks[k], memory_order_relaxed);
            if (c != check && !info->mismatch) {
                info->mismatch = 1;
                info->peer = member_at(w, k);
                info->peer_check = c;
            }
        }
    }
    depart(r, e);
    return 0;
}

/* ------------------------------------------------------------------ */
/* E1 and E2                                                            */
/* ------------------------------------------------------------------ */

static int ship(struct sstep_ctx *ctx, struct pt_range *r, struct sstep_stamp s, int kind)
{
    const struct sstep_queue *q = &ctx->q;
    if (!(q->kinds & (1u << SSTEP_MSG))) return 0;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t d = q->touched[i];
        const size_t bytes = sstep_batch_bytes(ctx, d);
        if (!bytes) continue;
        if (r->cells && d != ctx->pid && bytes <= PT_CELL_BATCH
                && cells_ship(r, ctx, d, s, kind, bytes))
            continue;
        struct sstep_batch *b = malloc(bytes);
        if (!b) return -1;
        sstep_batch_fill(ctx, d, s, kind, b, bytes);
        sstep_mailbox_put(pt_x_ctx(ctx, d), b);
    }
    bump_events(r, ctx->pid);
    pt_x_wake(ctx);
    return 0;
}

lpf_err_t pt_sync_range(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect, struct sstep_sync_info *info)
{
    struct pt_range *r = pt_x_range(ctx);
    struct pt_rec *me = &r->recs[ctx->pid];
    struct waitst w;
    memset(&w, 0, sizeof w);
    w.ctx = ctx;
    w.r = r;
    w.s = stamp;
    w.kind = kind;
    w.lo = lo;
    w.mem = members;
    w.idx = ctx->pid - lo;
    if (members)
        for (w.idx = 0; members[w.idx] != ctx->pid; ++w.idx) {}
    w.n = n;
    w.expect = expect;
    w.info = info;
    (void)sstep_ext_get(ctx);   /* our mailbox exists before anybody ships */
    if (r->cells) cells_hook(ctx);
    rec_enter(me, stamp, kind, lo, n, expect);
    if (ship(ctx, r, stamp, kind)) goto fail;

    if (kind == SSTEP_E2) {
        if (do_wait(&w) != W_DONE) goto fail;
        rec_leave(me);
        if (sstep_deliver(ctx, stamp, kind, info)) goto fail;
        if (info->cause == SSTEP_CAUSE_OK && info->arrived > expect) {
            info->cause = SSTEP_CAUSE_EXTRA;
            return LPF_ERR_FATAL;
        }
        return info->cause == SSTEP_CAUSE_OK ? LPF_SUCCESS : LPF_ERR_FATAL;
    }

    const unsigned kinds = ctx->q.kinds;
    if (kinds & (1u << SSTEP_GET)) pt_x_count_readers(ctx);
    uint64_t all = 0, none;
    uint64_t f = ((uint64_t)kinds << 1) | (info->check ? 1u : 0u);
    const uint64_t F_GET = (uint64_t)2 << SSTEP_GET, F_PUT = (uint64_t)2 << SSTEP_PUT;
    if (r->pairs && (kinds & (1u << SSTEP_PUT))) {
        /* small puts travel in the arrival lines of phase 0 */
        int fit = !(kinds & (1u << SSTEP_GET));
        const struct sstep_queue *q = &ctx->q;
        for (lpf_pid_t i = 0; i < q->ntouched && fit; ++i)
            if (q->touched[i] != ctx->pid && inl_need(q, q->touched[i]) > PT_INL_BYTES) fit = 0;
        if (!fit) f |= PT_F_NOINL;
        if (barrier_pairs(&w, 0, f, info->check, &all, fit ? q : NULL)) goto fail;
    } else if (barrier(&w, 0, f, info->check, &all)) {
        goto fail;
    }
    if (r->pairs && (all & (F_GET | F_PUT | PT_F_NOINL)) == F_PUT) {
        /* one barrier: every put is in a line (or to its issuer); the
         * lines of this phase are written again only after our next
         * arrival */
        for (lpf_pid_t i = 0; i < n; ++i)
            if (member_at(&w, i) != ctx->pid) inl_apply(r, ctx, member_at(&w, i));
        sstep_self_exchange(ctx);
    } else {
        if (all & F_GET) {
            if (pt_x_get_phase(ctx, lo, n, members)) goto fail;
            if ((all & F_PUT) && barrier(&w, 1, 0, 0, &none)) goto fail;
        }
        pt_x_push(ctx);
        if ((all & (F_GET | F_PUT)) && barrier(&w, 2, 0, 0, &none)) goto fail;
    }
    rec_leave(me);
    if (sstep_deliver(ctx, stamp, kind, info)) goto fail;
    return info->cause == SSTEP_CAUSE_OK ? LPF_SUCCESS : LPF_ERR_FATAL;
fail:
    if (w.cause) info->cause = w.cause;
    if (w.cause == SSTEP_CAUSE_DEADLOCK) {
        /* one process reports: the one the report names */
        info->report = ctx->pid == r->rep_pid;
    }
    /* the record stays: members still waiting see what we waited in (our
     * gone bit keeps us out of the deadlock probes) */
    pt_x_leave(ctx);
    return LPF_ERR_FATAL;
}

/* ------------------------------------------------------------------ */
/* Ordinary syncs in the deadlock detection                             */
/* ------------------------------------------------------------------ */

/* An ordinary sync of ctx has waited 0.1 s or more for its barrier. The
 * caller reads the barrier words after this returns (and calls again if
 * they are still short): the events sum is read first, so a later
 * arrival or shipment shows in it. Returns 1 once a deadlock has been
 * declared (a range waiter reports it and ends the program). */
int pt_range_plain_blocked(struct sstep_ctx *ctx, int *entered)
{
    struct pt_range *r = pt_x_range(ctx);
    struct pt_rec *me = &r->recs[ctx->pid];
    if (!*entered) {
        /* an object no range sync uses: members' checks never match it */
        const struct sstep_stamp none = { UINT64_MAX, UINT64_MAX };
        rec_enter(me, none, (int)PT_PLAIN, 0, ctx->nprocs, 0);
        atomic_store_explicit(&me->checked, 0, memory_order_relaxed);
        *entered = 1;
    }
    if (atomic_load_explicit(&r->deadlock, memory_order_acquire)) return 1;
    const uint64_t ev = events_sum(r);
    atomic_store_explicit(&me->checked, ev + 1, memory_order_seq_cst);
    return 0;
}

void pt_range_plain_done(struct sstep_ctx *ctx)
{
    struct pt_range *r = pt_x_range(ctx);
    rec_leave(&r->recs[ctx->pid]);
}

int pt_range_deadlocked(struct sstep_ctx *ctx)
{
    struct pt_range *r = pt_x_range(ctx);
    return atomic_load_explicit(&r->deadlock, memory_order_acquire) != 0;
}
