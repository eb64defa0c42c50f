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
            if (r->size) memcpy(stage, from, r->size);   /* zero-size: from may be NULL */
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
        if (reqs[i].size) memcpy(reqs[i].local, stage, reqs[i].size);
        stage += reqs[i].size;
    }
    return stage;
}

/* The get phase. Every get reads its source as it was when the sync was
 * entered (BSPlib §5), even when that source is the destination of another
 * process's get. A process whose memory nobody else reads writes its get
 * destinations directly; one that is read by a peer first copies its
 * sources aside, waits until every reader of its memory has read, then
 * writes. Reads never wait, so the waits cannot form a cycle. */
int pt_get_phase(struct pt_group *g, struct sstep_ctx *ctx)
{
    const lpf_pid_t pid = ctx->pid;
    struct sstep_queue *q = &ctx->q;
    struct pt_getcount *mine = &g->gc[pid];
    const uint64_t readers = atomic_load_explicit(&mine->readers, memory_order_relaxed);
    const int have = (q->kinds & (1u << SSTEP_GET)) != 0;
    if (!have) return 0;
    const int stage = readers != atomic_load_explicit(&mine->done, memory_order_acquire);
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
        if (i < 256) cpu_relax();
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
        const struct sstep_slot *e = r->slot < a->size ? &a->e[r->slot] : NULL;
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
void pt_push(struct pt_group *g, struct sstep_ctx *me, lpf_pid_t *pend)
{
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
            else cpu_relax();
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

lpf_err_t pt_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct pt_group *g = ctx->group;
    const lpf_pid_t P = g->P, pid = ctx->pid;
    uint64_t all;
    if (SSTEP_UNLIKELY(ctx->q.kinds & (1u << SSTEP_GET))) {
        /* tell every process we read that we will (pt_get_phase) */
        const struct sstep_queue *q = &ctx->q;
        for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
            lpf_pid_t s = q->touched[i];
            if (s != pid && q->peers[s].head[SSTEP_GET] != SSTEP_NIL)
                atomic_fetch_add_explicit(&g->gc[s].readers, 1, memory_order_relaxed);
        }
    }
    if (pt_barrier(g, pid, (uint64_t)ctx->q.kinds << 1, info->check, &all, info)) goto fail;
    ctx->inbox.n = ctx->inbox.next = 0;
    if (SSTEP_LIKELY(all == 0)) return LPF_SUCCESS;

    if (all & F_GET) {
        if (pt_get_phase(g, ctx)) goto fail;
        /* every get must have read its source before any put lands */
        uint64_t none;
        if ((all & F_PUT) && pt_barrier(g, pid, 0, 0, &none, NULL)) goto fail;
    }
    int oom = 0;
    if (ctx->q.kinds & (1u << SSTEP_PUT)) pt_push(g, ctx, g->pend + (size_t)pid * P);
    if (all & F_MSG) {
        for (lpf_pid_t k = 0; k < P; ++k) {
            lpf_pid_t s = pid + 1 + k;
            while (s >= P) s -= P;
            oom |= do_msgs(ctx, g->procs[s].ctx);
        }
    }
    uint64_t dummy;
    if (pt_barrier(g, pid, 0, 0, &dummy, NULL)) goto fail;
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
