/*
 * PUB extensions E1-E4 (pub.md §12.2): the core's part. Argument and
 * request checks, the local cases (a range of one), stamped batches,
 * mailboxes and deliveries, and the object scopes (E3). The engines do the
 * range syncs (struct sstep_engine.sync_range). See docs/internals.md.
 */
#include "pubext_internal.h"
#include "profile.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Per-process extension state                                          */
/* ------------------------------------------------------------------ */

static int drain_inbound(struct sstep_mailbox *m);

struct sstep_ext *sstep_ext_get(struct sstep_ctx *ctx)
{
    struct sstep_ext *x = atomic_load_explicit(&ctx->ext, memory_order_acquire);
    if (SSTEP_LIKELY(x != NULL)) return x;
    /* the mailbox's lines are aligned */
    const size_t bytes = (sizeof(struct sstep_ext) + 63) & ~(size_t)63;
    struct sstep_ext *n = aligned_alloc(64, bytes);
    if (n) memset(n, 0, bytes);
    if (!n) sstep_fatal(ctx, "sstep_sync_range", "out of memory (mailbox)");
    struct sstep_ext *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&ctx->ext, &expected, n,
                memory_order_acq_rel, memory_order_acquire))
        return n;
    free(n);
    return expected;
}

static void free_queue(struct sstep_queue *q)
{
    free(q->reqs);
    free(q->peers);
    free(q->touched);
}

void sstep_ext_free(struct sstep_ctx *ctx)
{
    struct sstep_ext *x = atomic_load_explicit(&ctx->ext, memory_order_acquire);
    if (!x) return;
    if (x->engine_free) x->engine_free(x->engine);
    drain_inbound(&x->mbox);
    for (struct sstep_batch *b = x->mbox.head, *nb; b; b = nb) {
        nb = b->next;
        free(b);
    }
    for (struct sstep_delivery *d = x->deliv, *nd; d; d = nd) {
        nd = d->next;
        for (struct sstep_batch *b = d->batches, *nb; b; b = nb) {
            nb = b->next;
            free(b);
        }
        free(d->msgs);
        free(d);
    }
    if (x->spare) {
        free(x->spare->msgs);
        free(x->spare);
    }
    for (struct sstep_batch *b = x->bfree, *nb; b; b = nb) {
        nb = b->next;
        free(b);
    }
    /* scopes still open: their queues and staging */
    for (size_t i = 0; i < x->depth; ++i) {
        free_queue(&x->scopes[i].q);
        sstep_arena_free(&x->scopes[i].cur);
        sstep_arena_free(&x->scopes[i].old);
    }
    free(x->scopes);
    for (size_t i = 0; i < x->npool; ++i) free_queue(&x->qpool[i]);
    free(x->qpool);
    free(x);
    atomic_store_explicit(&ctx->ext, NULL, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* Batches and mailboxes                                                */
/* ------------------------------------------------------------------ */

struct sstep_batch *sstep_batch_small(struct sstep_ctx *ctx)
{
    struct sstep_ext *x = sstep_ext_get(ctx);
    struct sstep_batch *b = x->bfree;
    if (SSTEP_LIKELY(b != NULL)) {
        x->bfree = b->next;
        x->nbfree--;
    } else {
        b = malloc(SSTEP_BATCH_SMALL);
        if (!b) return NULL;
    }
    return b;
}

/* a batch the receiver is done with: a small block goes back for reuse */
static inline void batch_release(struct sstep_ext *x, struct sstep_batch *b)
{
    if (b->pooled && x->nbfree < 64) {
        b->next = x->bfree;
        x->bfree = b;
        x->nbfree++;
        return;
    }
    free(b);
}

size_t sstep_batch_bytes(const struct sstep_ctx *ctx, lpf_pid_t dst)
{
    const struct sstep_queue *q = &ctx->q;
    const struct sstep_peer_lists *pl = &q->peers[dst];
    const uint32_t n = pl->count[SSTEP_MSG];
    if (n == 0) return 0;
    size_t bytes = sstep_batch_data_off(n);
    for (uint32_t i = pl->head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next)
        bytes += (q->reqs[i].size + 15) & ~(size_t)15;
    return bytes;
}

void sstep_batch_fill(const struct sstep_ctx *ctx, lpf_pid_t dst, struct sstep_stamp s,
        int kind, struct sstep_batch *b, size_t bytes)
{
    const struct sstep_queue *q = &ctx->q;
    const struct sstep_peer_lists *pl = &q->peers[dst];
    const uint32_t n = pl->count[SSTEP_MSG];
    memset(b, 0, sizeof *b);
    b->object = s.object;
    b->step = s.step;
    b->src = ctx->pid;
    b->kind = (uint32_t)kind;
    b->nmsgs = n;
    b->bytes = bytes;
    uint64_t *sz = (uint64_t *)(b + 1);
    char *d = (char *)b + sstep_batch_data_off(n);
    for (uint32_t i = pl->head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next) {
        const struct sstep_req *r = &q->reqs[i];
        *sz++ = r->size;
        if (r->size) memcpy(d, r->local, r->size);
        d += (r->size + 15) & ~(size_t)15;
    }
}

struct sstep_batch *sstep_batch_build(struct sstep_ctx *ctx, lpf_pid_t dst,
        struct sstep_stamp s, int kind, int *oom)
{
    const size_t bytes = sstep_batch_bytes(ctx, dst);
    if (bytes == 0) return NULL;
    struct sstep_batch *b = malloc(bytes);
    if (!b) { *oom = 1; return NULL; }
    sstep_batch_fill(ctx, dst, s, kind, b, bytes);
    return b;
}

void sstep_mailbox_put(struct sstep_ctx *dst, struct sstep_batch *b)
{
    struct sstep_mailbox *m = &sstep_ext_get(dst)->mbox;
    struct sstep_batch *h = atomic_load_explicit(&m->inbound, memory_order_relaxed);
    do b->next = h;
    while (!atomic_compare_exchange_weak_explicit(&m->inbound, &h, b,
                memory_order_release, memory_order_relaxed));
}

void sstep_mailbox_append(struct sstep_ctx *ctx, struct sstep_batch *b)
{
    struct sstep_mailbox *m = &sstep_ext_get(ctx)->mbox;
    b->next = NULL;
    if (m->tail) m->tail->next = b;
    else m->head = b;
    m->tail = b;
}

static int drain_inbound(struct sstep_mailbox *m)
{
    if (!atomic_load_explicit(&m->inbound, memory_order_relaxed)) return 0;
    struct sstep_batch *b = atomic_exchange_explicit(&m->inbound, NULL, memory_order_acquire);
    if (!b) return 0;
    /* newest first: reverse onto the end of the list */
    struct sstep_batch *rev = NULL, *last = b;
    while (b) {
        struct sstep_batch *nb = b->next;
        b->next = rev;
        rev = b;
        b = nb;
    }
    if (m->tail) m->tail->next = rev;
    else m->head = rev;
    m->tail = last;
    return 1;
}

int sstep_mailbox_drain(struct sstep_ctx *ctx)
{
    struct sstep_ext *x = sstep_ext_get(ctx);
    int (*engine_drain)(struct sstep_ctx *) =
        atomic_load_explicit(&x->engine_drain, memory_order_acquire);
    int got = engine_drain ? engine_drain(ctx) : 0;
    return drain_inbound(&x->mbox) | got;
}

size_t sstep_mailbox_count(struct sstep_ctx *ctx, struct sstep_stamp s, int kind,
        lpf_pid_t *bad_src)
{
    struct sstep_mailbox *m = &sstep_ext_get(ctx)->mbox;
    size_t n = 0;
    *bad_src = LPF_MAX_P;
    sstep_mailbox_drain(ctx);
    for (const struct sstep_batch *b = m->head; b; b = b->next) {
        if (b->object != s.object || b->step != s.step) continue;
        n += b->nmsgs;
        if ((int)b->kind != kind && *bad_src == LPF_MAX_P) *bad_src = b->src;
    }
    return n;
}

int sstep_deliver(struct sstep_ctx *ctx, struct sstep_stamp s, int kind,
        struct sstep_sync_info *info)
{
    struct sstep_ext *x = sstep_ext_get(ctx);
    struct sstep_mailbox *m = &x->mbox;
    struct sstep_batch *taken = NULL, **tt = &taken;
    size_t n = 0;
    sstep_mailbox_drain(ctx);
    struct sstep_batch **pp = &m->head, *prev = NULL;
    while (*pp) {
        struct sstep_batch *b = *pp;
        if (b->object == s.object && b->step == s.step) {
            *pp = b->next;
            if (m->tail == b) m->tail = prev;
            b->next = NULL;
            *tt = b;
            tt = &b->next;
            n += b->nmsgs;
            continue;
        }
        if (b->object == s.object && b->step < s.step && info->cause == SSTEP_CAUSE_OK) {
            info->cause = SSTEP_CAUSE_LATE;
            info->peer = b->src;
            info->peer_stamp.object = b->object;
            info->peer_stamp.step = b->step;
            info->peer_kind = (int)b->kind;
        }
        prev = b;
        pp = &b->next;
    }
    info->arrived = n;
    if (!taken) return 0;
    /* stable sort of the batches by source (insertion: few batches) */
    struct sstep_batch *sorted = NULL;
    for (struct sstep_batch *b = taken, *nb; b; b = nb) {
        nb = b->next;
        struct sstep_batch **q = &sorted;
        while (*q && (*q)->src <= b->src) q = &(*q)->next;
        b->next = *q;
        *q = b;
        if ((int)b->kind != kind && info->cause == SSTEP_CAUSE_OK) {
            info->cause = SSTEP_CAUSE_MISMATCH;
            info->peer = b->src;
            info->peer_stamp = s;
            info->peer_kind = (int)b->kind;
        }
    }
    struct sstep_delivery *d = x->spare;
    struct sstep_msg *msgs = NULL;
    if (d && d->cap >= n) {
        x->spare = NULL;
        msgs = d->msgs;
    } else {
        d = calloc(1, sizeof *d);
        msgs = malloc((n ? n : 1) * sizeof *msgs);
        if (!d || !msgs) {
            free(d);
            free(msgs);
            for (struct sstep_batch *b = sorted, *nb; b; b = nb) { nb = b->next; free(b); }
            return -1;
        }
        d->cap = n ? n : 1;
    }
    size_t k = 0;
    for (struct sstep_batch *b = sorted; b; b = b->next) {
        const uint64_t *sz = sstep_batch_sizes(b);
        const char *p = (const char *)b + sstep_batch_data_off(b->nmsgs);
        for (uint64_t i = 0; i < b->nmsgs; ++i) {
            msgs[k].data = p;
            msgs[k].size = (size_t)sz[i];
            msgs[k].src = b->src;
            ++k;
            p += (sz[i] + 15) & ~(uint64_t)15;
        }
    }
    d->stamp = s;
    d->n = n;
    d->msgs = msgs;
    d->batches = sorted;
    d->next = x->deliv;
    x->deliv = d;
    return 0;
}

const struct sstep_msg *sstep_inbox_of(lpf_t c, struct sstep_stamp stamp, size_t *count)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "sstep_inbox_of");
    *count = 0;
    struct sstep_ext *x = atomic_load_explicit(&ctx->ext, memory_order_acquire);
    if (!x) return NULL;
    for (struct sstep_delivery *d = x->deliv; d; d = d->next)
        if (sstep_stamp_eq(d->stamp, stamp)) {
            *count = d->n;
            return d->n ? d->msgs : NULL;
        }
    return NULL;
}

void sstep_inbox_release(lpf_t c, struct sstep_stamp stamp)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "sstep_inbox_release");
    struct sstep_ext *x = atomic_load_explicit(&ctx->ext, memory_order_acquire);
    if (!x) return;
    for (struct sstep_delivery **pp = &x->deliv; *pp; pp = &(*pp)->next) {
        struct sstep_delivery *d = *pp;
        if (!sstep_stamp_eq(d->stamp, stamp)) continue;
        *pp = d->next;
        for (struct sstep_batch *b = d->batches, *nb; b; b = nb) {
            nb = b->next;
            batch_release(x, b);
        }
        if (!x->spare && d->cap <= 64) {
            x->spare = d;
            return;
        }
        free(d->msgs);
        free(d);
        return;
    }
}

/* ------------------------------------------------------------------ */
/* E1 / E2                                                              */
/* ------------------------------------------------------------------ */

/* Requests of the caller to itself: gets first, then puts. */
void sstep_self_exchange(struct sstep_ctx *ctx)
{
    struct sstep_queue *q = &ctx->q;
    struct sstep_peer_lists *pl = &q->peers[ctx->pid];
    for (uint32_t i = pl->head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
        struct sstep_req *r = &q->reqs[i];
        char *from = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (!from) sstep_remote_range_error(ctx, ctx->get_name ? ctx->get_name : "lpf_get",
                ctx->pid, r->slot, r->off, r->size);
        sstep_copy(r->local, from, r->size);
    }
    for (uint32_t i = pl->head[SSTEP_PUT]; i != SSTEP_NIL; i = q->reqs[i].next) {
        struct sstep_req *r = &q->reqs[i];
        char *to = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (!to) sstep_remote_range_error(ctx, ctx->put_name ? ctx->put_name : "lpf_put",
                ctx->pid, r->slot, r->off, r->size);
        sstep_copy(to, r->local, r->size);
    }
}

static void info_reset(struct sstep_sync_info *info, struct sstep_stamp stamp)
{
    info->mismatch = 0;
    info->peer = LPF_MAX_P;
    info->peer_check = info->check;
    info->cause = SSTEP_CAUSE_OK;
    info->arrived = 0;
    info->peer_stamp = stamp;
    info->peer_kind = 0;
    info->peer_lo = info->peer_n = 0;
    info->peer_arrived = info->peer_expect = 0;
    info->report = 0;
}

/* is q among the members (the range lo..lo+n-1 when members is NULL;
 * else n pids in increasing order)? */
static int is_member(lpf_pid_t lo, lpf_pid_t n, const lpf_pid_t *members, lpf_pid_t q)
{
    if (!members) return q >= lo && q - lo < n;
    lpf_pid_t a = 0, b = n;
    while (a < b) {
        const lpf_pid_t m = a + (b - a) / 2;
        if (members[m] < q) a = m + 1;
        else b = m;
    }
    return a < n && members[a] == q;
}

/* argument and request checks common to E1 and E2 */
static struct sstep_ctx *range_checks(lpf_t c, const char *prim, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, int kind, struct sstep_sync_info *info)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    if (SSTEP_UNLIKELY(info == NULL)) sstep_fatal(ctx, prim, "info is NULL");
    if (members) {
        if (SSTEP_UNLIKELY(n == 0 || n > ctx->nprocs))
            sstep_fatal(ctx, prim, "a member set of %u processes in a section of %u", n,
                    ctx->nprocs);
        for (lpf_pid_t k = 0; k < n; ++k)
            if (SSTEP_UNLIKELY(members[k] >= ctx->nprocs || (k && members[k] <= members[k - 1])))
                sstep_fatal(ctx, prim, "member %u of the set is process %u: members must be "
                        "increasing pids below %u", k, members[k], ctx->nprocs);
        if (SSTEP_UNLIKELY(!is_member(lo, n, members, ctx->pid)))
            sstep_fatal(ctx, prim, "process %u is not in the member set (%u processes, "
                    "%u..%u) it syncs", ctx->pid, n, members[0], members[n - 1]);
    } else {
        if (SSTEP_UNLIKELY(n == 0 || lo >= ctx->nprocs || n > ctx->nprocs - lo))
            sstep_fatal(ctx, prim, "range %u..%u is not within the %u processes", lo,
                    lo + n - 1, ctx->nprocs);
        if (SSTEP_UNLIKELY(ctx->pid < lo || ctx->pid >= lo + n))
            sstep_fatal(ctx, prim, "process %u is not in the range %u..%u it syncs", ctx->pid,
                    lo, lo + n - 1);
    }
    const struct sstep_queue *q = &ctx->q;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t d = q->touched[i];
        if (SSTEP_UNLIKELY(!is_member(lo, n, members, d))) {
            if (members)
                sstep_fatal(ctx, prim, "a request to process %u, outside the member set "
                        "(%u processes, %u..%u) of this sync", d, n, members[0],
                        members[n - 1]);
            sstep_fatal(ctx, prim, "a request to process %u, outside the range %u..%u "
                    "of this sync", d, lo, lo + n - 1);
        }
        if (kind == SSTEP_E2) {
            const struct sstep_peer_lists *pl = &q->peers[d];
            if (SSTEP_UNLIKELY(pl->count[SSTEP_PUT] || pl->count[SSTEP_GET]))
                sstep_fatal(ctx, prim, "%u put(s) and %u get(s) to process %u are pending: "
                        "DRMA is not allowed in a superstep ended by an oblivious sync",
                        pl->count[SSTEP_PUT], pl->count[SSTEP_GET], d);
        }
    }
    return ctx;
}

static lpf_err_t range_exchange(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect,
        struct sstep_sync_info *info)
{
    lpf_err_t rc;
    if (n == 1) {
        /* alone: nobody else can take part or send */
        sstep_self_exchange(ctx);
        int oom = 0;
        struct sstep_batch *b = sstep_batch_build(ctx, ctx->pid, stamp, kind, &oom);
        if (oom) { ctx->failed = 1; return LPF_ERR_OUT_OF_MEMORY; }
        if (b) sstep_mailbox_put(ctx, b);
        if (sstep_deliver(ctx, stamp, kind, info)) { ctx->failed = 1; return LPF_ERR_OUT_OF_MEMORY; }
        if (kind == SSTEP_E2 && info->cause == SSTEP_CAUSE_OK && info->arrived != expect) {
            info->peer = ctx->pid;
            info->peer_kind = SSTEP_KIND_OBLSYNC;
            info->peer_lo = lo;
            info->peer_n = 1;
            info->peer_arrived = info->arrived;
            info->peer_expect = expect;
            info->cause = info->arrived > expect ? SSTEP_CAUSE_EXTRA : SSTEP_CAUSE_DEADLOCK;
            info->report = 1;
            if (info->cause == SSTEP_CAUSE_DEADLOCK) {
                /* the wait could never end: like an engine's failed wait */
                ctx->failed = 1;
                return LPF_ERR_FATAL;
            }
        }
        rc = LPF_SUCCESS;
    } else if (!ctx->engine->sync_range) {
        return LPF_ERR_FATAL;
    } else {
        rc = ctx->engine->sync_range(ctx, lo, n, members, stamp, kind, expect, info);
        if (rc != LPF_SUCCESS && (info->cause == SSTEP_CAUSE_OK
                    || info->cause == SSTEP_CAUSE_GONE || info->cause == SSTEP_CAUSE_MISMATCH
                    || info->cause == SSTEP_CAUSE_DEADLOCK)) {
            /* the exchange did not complete: the engine has left the section */
            ctx->failed = 1;
            return LPF_ERR_FATAL;
        }
    }
    sstep_ctx_end_superstep(ctx);
    ctx->range_steps++;
    return info->cause == SSTEP_CAUSE_OK ? rc : LPF_ERR_FATAL;
}

static lpf_err_t range_sync(lpf_t c, const char *prim, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect,
        struct sstep_sync_info *info, const void *site)
{
    struct sstep_ctx *ctx = range_checks(c, prim, lo, n, members, kind, info);
    info_reset(info, stamp);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (SSTEP_LIKELY(ctx->prof == NULL))
        return range_exchange(ctx, lo, n, members, stamp, kind, expect, info);
    /* the profiler records PUB's supersteps too, marked as range syncs */
    sstep_prof_sync_begin(ctx, kind == SSTEP_E2 ? SSTEP_PROF_E2 : SSTEP_PROF_E1, site);
    lpf_err_t rc = range_exchange(ctx, lo, n, members, stamp, kind, expect, info);
    sstep_prof_sync_end(ctx, rc);
    return rc;
}

lpf_err_t sstep_sync_range(lpf_t c, lpf_pid_t lo, lpf_pid_t n,
        struct sstep_stamp stamp, struct sstep_sync_info *info)
{
    return range_sync(c, "sstep_sync_range", lo, n, NULL, stamp, SSTEP_E1, 0, info,
            __builtin_return_address(0));
}

lpf_err_t sstep_oblsync(lpf_t c, lpf_pid_t lo, lpf_pid_t n,
        struct sstep_stamp stamp, size_t expect, struct sstep_sync_info *info)
{
    return range_sync(c, "sstep_oblsync", lo, n, NULL, stamp, SSTEP_E2, expect, info,
            __builtin_return_address(0));
}

/* a set that is a range goes as one (the engines' cheaper form) */
static const lpf_pid_t *set_form(const lpf_pid_t *members, lpf_pid_t n, lpf_pid_t *lo)
{
    *lo = n ? members[0] : 0;
    if (n && members[n - 1] >= members[0] && members[n - 1] - members[0] == n - 1)
        return NULL;
    return members;
}

lpf_err_t sstep_sync_set(lpf_t c, const lpf_pid_t *members, lpf_pid_t n,
        struct sstep_stamp stamp, struct sstep_sync_info *info)
{
    lpf_pid_t lo;
    const lpf_pid_t *m = set_form(members, n, &lo);
    return range_sync(c, "sstep_sync_set", lo, n, m, stamp, SSTEP_E1, 0, info,
            __builtin_return_address(0));
}

lpf_err_t sstep_oblsync_set(lpf_t c, const lpf_pid_t *members, lpf_pid_t n,
        struct sstep_stamp stamp, size_t expect, struct sstep_sync_info *info)
{
    lpf_pid_t lo;
    const lpf_pid_t *m = set_form(members, n, &lo);
    return range_sync(c, "sstep_oblsync_set", lo, n, m, stamp, SSTEP_E2, expect, info,
            __builtin_return_address(0));
}

/* ------------------------------------------------------------------ */
/* E3: object scopes                                                    */
/* ------------------------------------------------------------------ */

/* arrays holding struct sstep_queue (cache-line aligned members) */
static void *aligned_grow(void *old, size_t old_bytes, size_t new_bytes)
{
    new_bytes = (new_bytes + SSTEP_CACHELINE - 1) / SSTEP_CACHELINE * SSTEP_CACHELINE;
    void *p = aligned_alloc(SSTEP_CACHELINE, new_bytes);
    if (!p) return NULL;
    if (old_bytes) memcpy(p, old, old_bytes);
    free(old);
    return p;
}

/* an empty queue for ctx: from the pool (reset already), else new */
static int fresh_queue(struct sstep_ctx *ctx, struct sstep_ext *x, struct sstep_queue *out)
{
    if (x->npool) {
        *out = x->qpool[--x->npool];
        return 0;
    }
    memset(out, 0, sizeof *out);
    out->peers = malloc((size_t)ctx->nprocs * sizeof *out->peers);
    out->touched = malloc((size_t)ctx->nprocs * sizeof *out->touched);
    if (!out->peers || !out->touched) {
        free(out->peers);
        free(out->touched);
        return -1;
    }
    for (lpf_pid_t i = 0; i < ctx->nprocs; ++i) {
        struct sstep_peer_lists *pl = &out->peers[i];
        memset(pl, 0, sizeof *pl);
        for (int k = 0; k < SSTEP_NKINDS; ++k) pl->head[k] = pl->tail[k] = SSTEP_NIL;
    }
    return 0;
}

void sstep_scope_push(lpf_t c)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "sstep_scope_push");
    struct sstep_ext *x = sstep_ext_get(ctx);
    if (x->depth == x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 8;
        struct sstep_scope *s = aligned_grow(x->scopes, x->cap * sizeof *s, nc * sizeof *s);
        if (!s) sstep_fatal(ctx, "sstep_scope_push", "out of memory");
        x->scopes = s;
        x->cap = nc;
    }
    struct sstep_scope *s = &x->scopes[x->depth];
    struct sstep_queue nq;
    if (fresh_queue(ctx, x, &nq)) sstep_fatal(ctx, "sstep_scope_push", "out of memory");
    nq.limit = ctx->q.limit;
    s->q = ctx->q;
    ctx->q = nq;
    /* the staging of the set-aside requests (current superstep) and of the
     * previous one (peers may still read it) */
    const unsigned cur = (unsigned)(ctx->superstep & 1);
    s->cur = ctx->arena[cur];
    s->old = ctx->arena[cur ^ 1];
    memset(&ctx->arena[0], 0, sizeof ctx->arena[0]);
    memset(&ctx->arena[1], 0, sizeof ctx->arena[1]);
    /* the scope reuses the parent's spare blocks, each list in the arena of
     * its own parity (so a block becomes reusable in the same superstep as
     * it would have in the parent); sstep_scope_pop hands them back with
     * the scope's blocks. Without this, every scope that stages data made
     * new blocks and the parent's spares grew with each push/pop. */
    ctx->arena[cur].spare = s->cur.spare;
    ctx->arena[cur ^ 1].spare = s->old.spare;
    s->cur.spare = NULL;
    s->old.spare = NULL;
    struct sstep_slot_table *t = &ctx->globals;
    s->fresh = t->fresh;
    s->nfree = t->nfree;
    s->floor = t->floor;
    t->floor = t->nfree;
    x->depth++;
}

void sstep_scope_pop(lpf_t c)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "sstep_scope_pop");
    struct sstep_ext *x = atomic_load_explicit(&ctx->ext, memory_order_acquire);
    if (!x || x->depth == 0) sstep_fatal(ctx, "sstep_scope_pop", "no scope to end");
    struct sstep_scope *s = &x->scopes[x->depth - 1];
    if (ctx->q.n)
        sstep_fatal(ctx, "sstep_scope_pop", "the scope would discard %zu pending requests",
                ctx->q.n);
    struct sstep_slot_table *t = &ctx->globals;
    if (t->fresh - s->fresh != t->nfree - t->floor)
        sstep_fatal(ctx, "sstep_scope_pop", "%u global registration(s) of the scope are "
                "still live", (t->fresh - s->fresh) - (t->nfree - t->floor));
    t->fresh = s->fresh;
    t->nfree = s->nfree;
    t->floor = s->floor;
    /* the scope's queue goes to the pool (empty: reset already) */
    if (x->npool == x->poolcap) {
        size_t nc = x->poolcap ? 2 * x->poolcap : 4;
        struct sstep_queue *p = aligned_grow(x->qpool, x->poolcap * sizeof *p, nc * sizeof *p);
        if (!p) sstep_fatal(ctx, "sstep_scope_pop", "out of memory");
        x->qpool = p;
        x->poolcap = nc;
    }
    x->qpool[x->npool++] = ctx->q;
    ctx->q = s->q;
    /* The scope's staging: its last superstep's data may still be read by
     * peers that have not yet left their last sync with us; keep the
     * blocks as spares of the restored arenas (they are reset by then). */
    const unsigned cur = (unsigned)(ctx->superstep & 1);
    struct sstep_arena scope_a[2] = { ctx->arena[0], ctx->arena[1] };
    ctx->arena[cur] = s->cur;
    ctx->arena[cur ^ 1] = s->old;
    for (int k = 0; k < 2; ++k) {
        /* append the scope's blocks (head and spares) to the spares; the
         * spares of the current parity are reusable now and stay in the
         * current arena (so the next scope, pushed in this parity, finds
         * them: scopes no longer make new blocks every push/pop) */
        struct sstep_arena_block *lists[2] = { scope_a[k].head, scope_a[k].spare };
        for (int j = 0; j < 2; ++j) {
            const unsigned to = (j == 1 && (unsigned)k == cur) ? cur : cur ^ 1;
            for (struct sstep_arena_block *b = lists[j], *nb; b; b = nb) {
                nb = b->next;
                b->used = 0;
                b->next = ctx->arena[to].spare;
                ctx->arena[to].spare = b;
            }
        }
    }
    x->depth--;
}
