/*
 * The pthread engine's sync (the design is in pthread_engine.c's head
 * comment): the get phase, the push phase, messages.
 */
#include "pt_group.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Sync                                                                 */
/* ------------------------------------------------------------------ */

/* the 7 words after a process's arrival word of parity `par` (a line per
 * process only): puts of the one-barrier path, or a summary of its gets */
static inline char *inline_of(struct pt_group *g, lpf_pid_t src, int par)
{
    return (char *)&g->words[(size_t)src * g->stride + (size_t)par * (g->stride >> 1) + 1];
}

/* A summary of what a process's gets read, in its arrival line: when they
 * all read one other process `src`, in one slot, the hull [lo, hi) of
 * their offsets: { SUM_TAG | src, slot, lo, hi }; else 0 (look at the
 * queue). A source deciding whether to stage reads it with the arrival,
 * instead of missing on the reader's queue. */
#define SUM_TAG ((uint64_t)1 << 63)
#define SUM_MAX_GETS 64
static void write_read_summary(struct pt_group *g, const struct sstep_ctx *ctx, int par,
        lpf_pid_t src)
{
    const struct sstep_queue *q = &ctx->q;
    uint64_t rec[4] = { 0, 0, 0, 0 };
    if (src < g->P && q->peers[src].count[SSTEP_GET] <= SUM_MAX_GETS) {
        uint32_t i = q->peers[src].head[SSTEP_GET];
        const uint32_t slot = q->reqs[i].slot;
        uint64_t lo = UINT64_MAX, hi = 0;
        for (; i != SSTEP_NIL; i = q->reqs[i].next) {
            const struct sstep_req *r = &q->reqs[i];
            if (r->slot != slot) break;
            if (!r->size) continue;
            if (r->off < lo) lo = r->off;
            if (r->off + r->size > hi) hi = r->off + r->size;
        }
        if (i == SSTEP_NIL) {
            rec[0] = SUM_TAG | src;
            rec[1] = slot;
            rec[2] = hi ? lo : 0;
            rec[3] = hi;
        }
    }
    memcpy(inline_of(g, ctx->pid, par), rec, sizeof rec);
}

/* Execute the gets `me` issued to `src`: read src's memory and write ours,
 * or, when `stage` is given, copy into it (in list order) and write ours
 * later (unstage_gets). */
static char *do_gets(struct sstep_ctx *me, struct sstep_ctx *src, char *stage)
{
    struct sstep_queue *q = &me->q;
    struct sstep_req *reqs = q->reqs;
    for (uint32_t i = q->peers[src->pid].head[SSTEP_GET]; i != SSTEP_NIL; i = reqs[i].next) {
        struct sstep_req *r = &reqs[i];
        char *from = sstep_resolve_global(src, r->slot, r->off, r->size);
        if (SSTEP_UNLIKELY(!from))
            sstep_remote_range_error(src, me->get_name ? me->get_name : "lpf_get",
                    me->pid, r->slot, r->off, r->size);
        if (stage) {
            sstep_copy(stage, from, r->size);
            stage += r->size;
        } else {
            sstep_copy(r->local, from, r->size);
        }
    }
    return stage;
}

/* Write the staged values of the gets `me` issued to `src` (same order). */
static const char *unstage_gets(struct sstep_ctx *me, lpf_pid_t src, const char *stage)
{
    struct sstep_queue *q = &me->q;
    struct sstep_req *reqs = q->reqs;
    for (uint32_t i = q->peers[src].head[SSTEP_GET]; i != SSTEP_NIL; i = reqs[i].next) {
        sstep_copy(reqs[i].local, stage, reqs[i].size);
        stage += reqs[i].size;
    }
    return stage;
}

/* Up to this many get destinations are compared one by one with what is
 * read of our memory; beyond, their hull is */
#define PT_DEST_EXACT 8
/* Beyond this many gets reading our memory, stage without looking */
#define PT_READS_SCAN 256

/* Does a get of process `rd` read our memory where one of our gets
 * writes? `*budget` bounds the requests looked at (then: yes). */
static int reads_meet(const struct sstep_ctx *rd, struct sstep_ctx *ctx, const char *hlo,
        const char *hhi, const char *const *dlo, const char *const *dhi, unsigned nd,
        int exact, unsigned *budget)
{
    const struct sstep_queue *rq = &rd->q;
    for (uint32_t i = rq->peers[ctx->pid].head[SSTEP_GET]; i != SSTEP_NIL; i = rq->reqs[i].next) {
        const struct sstep_req *r = &rq->reqs[i];
        if (!*budget) return 1;
        --*budget;
        /* an invalid range is reported by its reader; it reads nothing */
        const char *a = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (!a || !r->size) continue;
        const char *b = a + r->size;
        if (b <= hlo || a >= hhi) continue;
        if (!exact) return 1;
        for (unsigned d = 0; d < nd; ++d)
            if (b > dlo[d] && a < dhi[d]) return 1;
    }
    return 0;
}

/* Must the gets of `ctx` be staged? Only when one of their destinations
 * is also the source of a get of this superstep: a get of one of the
 * `readers` members (of [lo, lo + n), or members[0..n-1]) that read our memory, or one of our
 * own gets reading ourselves. The members' queues stay as they are until
 * the sync's last barrier, so they can be read here; with e != 0 (the
 * episode of barrier A, when processes have arrival lines of their own),
 * the readers' summaries in their arrival lines are used where there are
 * some. Errs on the side of staging. */
static int gets_must_stage(struct pt_group *g, struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, uint64_t readers, uint64_t e)
{
    const struct sstep_queue *q = &ctx->q;
    const char *dlo[PT_DEST_EXACT], *dhi[PT_DEST_EXACT];
    const char *hlo = (const char *)UINTPTR_MAX, *hhi = NULL;
    unsigned nd = 0, exact = 1;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        for (uint32_t k = q->peers[q->touched[i]].head[SSTEP_GET]; k != SSTEP_NIL;
                k = q->reqs[k].next) {
            const struct sstep_req *r = &q->reqs[k];
            if (!r->size) continue;
            const char *a = r->local, *b = r->local + r->size;
            if (a < hlo) hlo = a;
            if (b > hhi) hhi = b;
            if (nd < PT_DEST_EXACT) { dlo[nd] = a; dhi[nd] = b; nd++; }
            else exact = 0;
        }
    }
    if (!hhi) return 0;   /* nothing is written */
    unsigned budget = PT_READS_SCAN;
    if (reads_meet(ctx, ctx, hlo, hhi, dlo, dhi, nd, exact, &budget)) return 1;
    const int sums = e && g->stride > PT_INLINE_WORDS + 2;
    for (lpf_pid_t k = 0; k < n && readers; ++k) {
        const lpf_pid_t qd = members ? members[k] : lo + k;
        if (qd == ctx->pid) continue;
        if (sums) {
            /* no gets: reads nothing (its summary is an old one) */
            if (!(atomic_load_explicit(pt_word(g, qd, e), memory_order_relaxed) & F_GET))
                continue;
            uint64_t rec[4];
            memcpy(rec, inline_of(g, qd, (int)(e & 1)), sizeof rec);
            if (rec[0] & SUM_TAG) {
                if ((rec[0] & ~SUM_TAG) != ctx->pid) continue;
                readers--;
                if (rec[3] == rec[2]) continue;
                const char *a = sstep_resolve_global(ctx, (uint32_t)rec[1], rec[2], rec[3] - rec[2]);
                if (!a) return 1;   /* its reader reports the error */
                const char *b = a + (rec[3] - rec[2]);
                if (b <= hlo || a >= hhi) continue;
                if (!exact) return 1;
                for (unsigned d = 0; d < nd; ++d)
                    if (b > dlo[d] && a < dhi[d]) return 1;
                continue;
            }
        }
        const struct sstep_ctx *rd = g->procs[qd].ctx;
        if (rd->q.peers[ctx->pid].head[SSTEP_GET] == SSTEP_NIL) continue;
        readers--;
        if (reads_meet(rd, ctx, hlo, hhi, dlo, dhi, nd, exact, &budget)) return 1;
    }
    return 0;
}

/* The get phase. Every get reads its source as it was when the sync was
 * entered (BSPlib §5), even when that source is the destination of another
 * get. A process none of whose get destinations is read by a get of this
 * superstep writes them directly; otherwise it first copies its sources
 * aside, waits until every reader of its memory has read, then writes.
 * Reads never wait, so the waits cannot form a cycle. */
int pt_get_phase(struct pt_group *g, struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, uint64_t e)
{
    const lpf_pid_t pid = ctx->pid;
    struct sstep_queue *q = &ctx->q;
    struct pt_getcount *mine = &g->gc[pid];
    /* every reader of this superstep counted itself before barrier A */
    const uint64_t readers = atomic_load_explicit(&mine->readers, memory_order_relaxed);
    const uint64_t fresh = readers - g->own[pid].readers_seen;
    g->own[pid].readers_seen = readers;
    if (!(q->kinds & (1u << SSTEP_GET))) return 0;
    const int stage = gets_must_stage(g, ctx, lo, n, members, fresh, e);
    char *buf = NULL;
    if (stage) {
        size_t bytes = 0;
        for (lpf_pid_t i = 0; i < q->ntouched; ++i)
            bytes += q->peers[q->touched[i]].bytes[SSTEP_GET];
        buf = bytes ? sstep_arena_alloc(&ctx->arena[ctx->superstep & 1], bytes) : NULL;
        if (bytes && !buf) return -1;
    }
    char *p = buf;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t s = q->touched[i];
        if (q->peers[s].head[SSTEP_GET] == SSTEP_NIL) continue;
        p = do_gets(ctx, g->procs[s].ctx, stage ? p : NULL);
        if (s != pid) atomic_fetch_add_explicit(&g->gc[s].done, 1, memory_order_release);
    }
    if (!stage) return 0;
    /* every peer that reads us has read */
    /* (readers are in this phase already and never wait: a short wait) */
    for (unsigned i = 0; atomic_load_explicit(&mine->done, memory_order_acquire) != readers; ++i) {
        if (i < 256) sstep_cpu_relax();
        else sched_yield();
    }
    const char *r = buf;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t s = q->touched[i];
        if (q->peers[s].head[SSTEP_GET] != SSTEP_NIL) r = unstage_gets(ctx, s, r);
    }
    return 0;
}

/* Apply the puts `me` issued to `dst`, writing dst's memory directly. The
 * caller holds dst's lock, so batches of different sources to one
 * destination are serialised whole. */
static void push_puts(struct sstep_ctx *me, struct sstep_ctx *dst)
{
    const struct sstep_queue *q = &me->q;
    const struct sstep_req *reqs = q->reqs;
    struct sstep_slot_array *a = sstep_slots(&dst->globals);
    for (uint32_t i = q->peers[dst->pid].head[SSTEP_PUT]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        const struct sstep_slot *e = r->slot < a->size ? &a->e[r->slot] : sstep_lpfext.noc_entry(dst, r->slot);
        if (SSTEP_UNLIKELY(!e || e->state != SSTEP_SLOT_GLOBAL
                    || r->off > e->size || r->size > e->size - r->off))
            sstep_remote_range_error(dst, me->put_name ? me->put_name : "lpf_put",
                    me->pid, r->slot, r->off, r->size);
        sstep_copy(e->base + r->off, r->local, r->size);
    }
}

static inline int pt_trylock(struct pt_group *g, lpf_pid_t d)
{
    _Atomic int *l = &g->locks[(size_t)d * (PT_LINE / sizeof(int))];
    return atomic_load_explicit(l, memory_order_relaxed) == 0
        && atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

static inline void pt_unlock(struct pt_group *g, lpf_pid_t d)
{
    atomic_store_explicit(&g->locks[(size_t)d * (PT_LINE / sizeof(int))], 0, memory_order_release);
}

/* Push phase: every process writes its own puts into their destinations.
 * The requests stay in the issuer's cache (only the payload crosses cores);
 * a destination's lock makes concurrent writers take turns, a busy
 * destination is skipped and retried. */
void pt_push(struct pt_group *g, struct sstep_ctx *me)
{
    lpf_pid_t *pend = g->pend + (size_t)me->pid * g->pend_stride;
    const struct sstep_queue *q = &me->q;
    lpf_pid_t n = 0;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t d = q->touched[i];
        if (q->peers[d].head[SSTEP_PUT] != SSTEP_NIL) pend[n++] = d;
    }
    int yield = atomic_load_explicit(&pt_live_procs, memory_order_relaxed) > sstep_online_cores();
    while (n) {
        for (lpf_pid_t i = 0; i < n;) {
            lpf_pid_t d = pend[i];
            if (pt_trylock(g, d)) {
                push_puts(me, g->procs[d].ctx);
                pt_unlock(g, d);
                pend[i] = pend[--n];
            } else {
                ++i;
            }
        }
        if (n) {
            if (yield) sched_yield();
            else sstep_cpu_relax();
        }
    }
}

/* Collect the messages `src` sent to `me` into our inbox. */
static int do_msgs(struct sstep_ctx *me, struct sstep_ctx *src)
{
    const struct sstep_queue *q = &src->q;
    const struct sstep_peer_lists *pl = &q->peers[me->pid];
    if (pl->count[SSTEP_MSG] == 0) return 0;
    if (sstep_inbox_reserve(&me->inbox, pl->count[SSTEP_MSG])) return -1;
    struct sstep_msg *m = me->inbox.msgs + me->inbox.n;
    for (uint32_t i = pl->head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next, ++m) {
        m->data = q->reqs[i].local;
        m->size = q->reqs[i].size;
    }
    me->inbox.n += pl->count[SSTEP_MSG];
    return 0;
}

/* ------------------------------------------------------------------ */
/* Small puts in one barrier                                            */
/* ------------------------------------------------------------------ */

/* A superstep whose only requests are small puts costs one barrier: each
 * source copies its puts (records and data) into a mailbox per destination
 * before it arrives, and announces the destinations in its arrival word;
 * after the barrier each process applies what its mailboxes hold and
 * returns. No second barrier is needed: the sources' memory and queues are
 * no longer read, the mailbox of this parity is written again only two
 * syncs later (after the next barrier, which the reader reaches once it
 * has read), and nobody reads a destination's memory in such a superstep
 * (no gets). Any get, message, or put too large for a mailbox anywhere
 * makes every process take the general path (the flags travel with the
 * barrier, so all decide alike). */
struct mbox_rec {
    uint32_t slot;
    uint32_t size;
    uint64_t off;
};

static inline char *mbox_of(struct pt_group *g, lpf_pid_t src, lpf_pid_t dst, int par)
{
    return g->mbox[src] + ((size_t)dst * 2 + (size_t)par) * PT_MBOX_CAP;
}

/* records and data of the puts to d, from o on; returns the end */
static char *pack_puts(const struct sstep_queue *q, lpf_pid_t d, char *o)
{
    for (uint32_t k = q->peers[d].head[SSTEP_PUT]; k != SSTEP_NIL; k = q->reqs[k].next) {
        const struct sstep_req *r = &q->reqs[k];
        struct mbox_rec h = { r->slot, (uint32_t)r->size, r->off };
        memcpy(o, &h, sizeof h);
        o += sizeof h;
        sstep_copy(o, r->local, r->size);
        o += (r->size + 7) & ~(size_t)7;
    }
    return o;
}

/* Pack this process's puts for other processes into its mailboxes (or, when
 * they are few and for one process, into its arrival line: *inl = 1);
 * returns the destination mask, or 0 when they do not fit (general path). */
static uint64_t mbox_pack(struct pt_group *g, struct sstep_ctx *ctx, int par, int *inl)
{
    const lpf_pid_t P = g->P, pid = ctx->pid;
    const struct sstep_queue *q = &ctx->q;
    *inl = 0;
    if (g->stride > PT_INLINE_WORDS + 2 && q->ntouched <= 2) {
        lpf_pid_t d = P, n = 0;
        for (lpf_pid_t i = 0; i < q->ntouched; ++i)
            if (q->touched[i] != pid && q->peers[q->touched[i]].head[SSTEP_PUT] != SSTEP_NIL) {
                d = q->touched[i];
                n++;
            }
        if (n == 1) {
            const struct sstep_peer_lists *pl = &q->peers[d];
            size_t need = 8 + (size_t)pl->count[SSTEP_PUT] * sizeof(struct mbox_rec)
                    + pl->bytes[SSTEP_PUT] + (size_t)pl->count[SSTEP_PUT] * 7;
            if (need <= PT_INLINE_WORDS * 8) {
                char *b = inline_of(g, pid, par);
                uint64_t used = (uint64_t)(pack_puts(q, d, b + 8) - b);
                memcpy(b, &used, sizeof used);
                *inl = 1;
                return (uint64_t)1 << d;
            }
        }
    }
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        const struct sstep_peer_lists *pl = &q->peers[q->touched[i]];
        if (pl->bytes[SSTEP_PUT] + (size_t)pl->count[SSTEP_PUT] * (sizeof(struct mbox_rec) + 7)
                + 8 > PT_MBOX_CAP)
            return 0;
    }
    if (SSTEP_UNLIKELY(!g->mbox[pid])) {
        /* only we write it; readers see it after the barrier */
        g->mbox[pid] = aligned_alloc(PT_LINE, (size_t)P * 2 * PT_MBOX_CAP);
        if (!g->mbox[pid]) return 0;
    }
    uint64_t mask = 0;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        const lpf_pid_t d = q->touched[i];
        if (d == pid || q->peers[d].head[SSTEP_PUT] == SSTEP_NIL) continue;
        char *b = mbox_of(g, pid, d, par), *o = pack_puts(q, d, b + 8);
        uint64_t used = (uint64_t)(o - b);
        memcpy(b, &used, sizeof used);
        mask |= (uint64_t)1 << d;
    }
    return mask;
}

/* Apply the puts src left for us: in its arrival line, or its mailbox. */
static void mbox_apply(struct pt_group *g, struct sstep_ctx *me, lpf_pid_t src, int par, int inl)
{
    const char *b = inl ? inline_of(g, src, par) : mbox_of(g, src, me->pid, par);
    uint64_t used;
    memcpy(&used, b, sizeof used);
    struct sstep_slot_array *a = sstep_slots(&me->globals);
    for (const char *o = b + 8, *end = b + used; o < end;) {
        struct mbox_rec h;
        memcpy(&h, o, sizeof h);
        o += sizeof h;
        const struct sstep_slot *e = h.slot < a->size ? &a->e[h.slot] : sstep_lpfext.noc_entry(me, h.slot);
        if (SSTEP_UNLIKELY(!e || e->state != SSTEP_SLOT_GLOBAL
                    || h.off > e->size || h.size > e->size - h.off))
            sstep_remote_range_error(me, g->procs[src].ctx->put_name
                    ? g->procs[src].ctx->put_name : "lpf_put", src, h.slot, (size_t)h.off, h.size);
        sstep_copy(e->base + h.off, o, h.size);
        o += ((size_t)h.size + 7) & ~(size_t)7;
    }
}

/* Before barrier A, a process with gets: tell every process it reads
 * that it will (pt_get_phase), and summarise what it reads. Out of line:
 * pt_sync's path for syncs without gets stays short. */
static __attribute__((noinline)) void announce_gets(struct pt_group *g, struct sstep_ctx *ctx, uint64_t e)
{
    const struct sstep_queue *q = &ctx->q;
    const lpf_pid_t P = g->P, pid = ctx->pid;
    lpf_pid_t nsrc = 0, only = P;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t s = q->touched[i];
        if (s != pid && q->peers[s].head[SSTEP_GET] != SSTEP_NIL) {
            atomic_fetch_add_explicit(&g->gc[s].readers, 1, memory_order_relaxed);
            nsrc++;
            only = s;
        }
    }
    if (g->stride > PT_INLINE_WORDS + 2)
        write_read_summary(g, ctx, (int)(e & 1), nsrc == 1 ? only : P);
}

/* The waits of the rest of a sync with puts or gets are for peers moving
 * data, most likely about as much as we do: spin for longer than the
 * default, in proportion, rather than sleep and pay a wake-up (tens of us
 * on a virtual machine) after copies of a few MiB whose times differ by
 * more than the default spin. */
static __attribute__((noinline)) void set_bulk_spin(struct pt_group *g, struct sstep_ctx *ctx)
{
    size_t moved = 0;
    const struct sstep_queue *q = &ctx->q;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        const struct sstep_peer_lists *pl = &q->peers[q->touched[i]];
        moved += pl->bytes[SSTEP_PUT] + pl->bytes[SSTEP_GET];
    }
    uint64_t spin = SPIN_NS + moved / 8;   /* as if copying at 8 bytes/ns */
    g->own[ctx->pid].spin_ns = spin < SPIN_BULK_MAX_NS ? spin : SPIN_BULK_MAX_NS;
}

lpf_err_t pt_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct pt_group *g = ctx->group;
    const lpf_pid_t P = g->P, pid = ctx->pid;
    uint64_t all;
    const uint64_t e = g->own[pid].episode + 1;   /* the barrier's episode */
    if (SSTEP_UNLIKELY(ctx->q.kinds & (1u << SSTEP_GET))) announce_gets(g, ctx, e);
    uint64_t flags = (uint64_t)ctx->q.kinds << 1;
    if (ctx->q.kinds & (1u << SSTEP_PUT)) {
        int inl = 0;
        uint64_t mask = ctx->q.kinds == (1u << SSTEP_PUT) && P <= PT_MBOX_MAXP
                ? mbox_pack(g, ctx, (int)(e & 1), &inl) : 0;
        if (inl) flags |= F_INLINE;
        /* (a mask of 0 with puts: all of them are to ourselves, or they do
         * not fit) */
        int self_only = ctx->q.ntouched == 1 && ctx->q.touched[0] == pid;
        if (mask) flags |= mask << MASK_SHIFT;
        else if (!self_only) flags |= F_NOMBOX;
    }
    if (pt_barrier(g, pid, flags, info->check, &all, info)) goto fail;
    ctx->inbox.n = ctx->inbox.next = 0;
    if (SSTEP_LIKELY(all == 0)) return LPF_SUCCESS;
    if ((all & ~F_CHECK) == F_PUT) {
        /* only small puts, all in mailboxes (or to their issuers) */
        const int par = (int)(e & 1);
        const struct pt_own *own = &g->own[pid];
        for (uint64_t m = own->mail; m; m &= m - 1) {
            lpf_pid_t s = (lpf_pid_t)__builtin_ctzll(m);
            mbox_apply(g, ctx, s, par, (int)((own->mail_inline >> s) & 1));
        }
        if (ctx->q.peers[pid].head[SSTEP_PUT] != SSTEP_NIL) push_puts(ctx, ctx);
        return LPF_SUCCESS;
    }

    const int moves = (all & (F_PUT | F_GET)) != 0;
    if (moves) set_bulk_spin(g, ctx);
    if (all & F_GET) {
        if (pt_get_phase(g, ctx, 0, P, NULL, e)) goto fail;
        /* every get must have read its source before any put lands */
        uint64_t none;
        if ((all & F_PUT) && pt_barrier(g, pid, 0, 0, &none, NULL)) goto fail;
    }
    int oom = 0;
    if (ctx->q.kinds & (1u << SSTEP_PUT)) pt_push(g, ctx);
    if (all & F_MSG) {
        for (lpf_pid_t k = 0; k < P; ++k) {
            lpf_pid_t s = pid + 1 + k;
            while (s >= P) s -= P;
            oom |= do_msgs(ctx, g->procs[s].ctx);
        }
    }
    uint64_t dummy;
    const int b = pt_barrier(g, pid, 0, 0, &dummy, NULL);
    if (moves) g->own[pid].spin_ns = 0;
    if (b) goto fail;
    if (oom) goto fail;
    return LPF_SUCCESS;
fail:
    /* Leaving now is safe: either every process fails at this barrier (a
     * peer left, or operations differ) or we already passed the last one.
     * Peers then see us gone at their next sync instead of waiting. */
    ctx->failed = 1;
    pt_leave(g, pid, ctx);
    return LPF_ERR_FATAL;
}
