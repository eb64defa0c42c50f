/*
 * The MPI engine: applying what arrived at a sync (serving gets, taking
 * messages, applying puts), the process's own requests included.
 */
#define _GNU_SOURCE
#include "mpi_group.h"

/* ------------------------------------------------------------------ */
/* Applying                                                             */
/* ------------------------------------------------------------------ */

static int cmp_bigx_ptr(const void *a, const void *b)
{
    const struct bigx *x = *(const struct bigx *const *)a, *y = *(const struct bigx *const *)b;
    return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

/* Give every transfer whose destination overlaps another one a scratch
 * buffer, so that concurrent receives never mix bytes of two requests. */
void mpi_mark_overlaps(struct mpi_group *g, struct bigv *v)
{
    if (v->n < 2) return;
    struct bigx **s = sstep_arena_alloc(&g->tmp, v->n * sizeof *s);
    if (!s) sstep_fatal(NULL, "lpf_sync", "out of memory (overlap check)");
    for (size_t i = 0; i < v->n; ++i) s[i] = &v->e[i];
    qsort(s, v->n, sizeof *s, cmp_bigx_ptr);
    struct bigx *far = s[0];
    for (size_t i = 1; i < v->n; ++i) {
        struct bigx *x = s[i];
        if (x->ptr < far->ptr + far->size) {
            x->tmp = x->ptr;   /* mark */
            far->tmp = far->ptr;
        }
        if (x->ptr + x->size > far->ptr + far->size) far = x;
    }
    for (size_t i = 0; i < v->n; ++i) {
        struct bigx *x = &v->e[i];
        if (!x->tmp) continue;
        x->tmp = sstep_arena_alloc(&g->tmp, x->size);
        if (!x->tmp) sstep_fatal(NULL, "lpf_sync", "out of memory (%zu-byte scratch buffer)", x->size);
    }
}

static SSTEP_NORETURN void range_error(struct sstep_ctx *ctx, int put, lpf_pid_t issuer,
        uint32_t slot, size_t off, size_t size)
{
    const char *name = put ? (ctx->put_name ? ctx->put_name : "lpf_put")
                           : (ctx->get_name ? ctx->get_name : "lpf_get");
    sstep_remote_range_error(ctx, name, issuer, slot, off, size);
}

/* Serve the gets q asks of us: small ones copied into one reply, big ones
 * sent straight from our memory. */
void mpi_serve_gets(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end, size_t small, int par)
{
    struct sstep_slot_array *a = sstep_slots(&ctx->globals);
    char *o = NULL;
    if (small) {
        if (mbuf_reserve(&g->rout[q], small))
            sstep_fatal(ctx, "lpf_sync", "out of memory (%zu bytes of get replies)", small);
        o = g->rout[q].p;
    }
    char *o0 = o;
    size_t nbig = 0;
    const char *p0 = p;
    while (p < end) {
        uint32_t slot, fl;
        size_t off, n;
        p = get_rec(p, &slot, &off, &n, &fl);
        const struct sstep_slot *e = slot < a->size ? &a->e[slot] : sstep_lpfext.noc_entry(ctx, slot);
        if (SSTEP_UNLIKELY(!e || e->state != SSTEP_SLOT_GLOBAL || off > e->size || n > e->size - off))
            range_error(ctx, 0, q, slot, off, n);
        if (fl & REC_DIRECT) { nbig++; continue; }
        if (SSTEP_UNLIKELY((size_t)(o - o0) + n > small))
            sstep_fatal(ctx, "lpf_sync", "protocol error: get replies exceed the announced size");
        sstep_copy(o, e->base + off, n);
        o += n;
    }
    if (small) {
        mpi_post_send(&g->rget, o0, small, q, TAG(T_GDATA, par), g->comm);
        g->sent++;
    }
    if (!nbig) return;
    g->sent += nbig;
    for (p = p0; p < end;) {
        uint32_t slot, fl;
        size_t off, n;
        p = get_rec(p, &slot, &off, &n, &fl);
        if (fl & REC_DIRECT)
            mpi_post_send(&g->rget, (slot < a->size ? a->e[slot].base : sstep_lpfext.noc_entry(ctx, slot)->base)
                    + off, n, q, TAG(T_GDATA, par), g->comm);
    }
}

/* Messages q sent us: into the inbox (small ones point into the body, when
 * 8-byte aligned: the body packs records of 8 and 12 bytes and data of any
 * length, so a message can start at any offset; those are copied to an
 * aligned buffer, as readers cast message data to structs and doubles,
 * and the pthread engine's messages are aligned). */
void mpi_take_msgs(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end, int par)
{
    struct sstep_inbox *in = &ctx->inbox;
    struct sstep_msg *m = in->msgs + in->n;
    while (p < end) {
        uint32_t w;
        memcpy(&w, p, 4);
        if (SSTEP_LIKELY(w & MSG_RUN)) {
            uint32_t count = w & MSG_RUN_MAX, z;
            memcpy(&z, p + 4, 4);
            p += 8;
            for (uint32_t k = 0; k < count; ++k, ++m) {
                m->data = p;
                m->size = z;
                if (SSTEP_UNLIKELY(((uintptr_t)p & 7) != 0 && z != 0)) {
                    char *a = sstep_arena_alloc(&g->rmsg[par], z);
                    if (!a) sstep_fatal(ctx, "lpf_sync", "out of memory (%u-byte message)", z);
                    sstep_copy(a, p, z);
                    m->data = a;
                }
                p += z;
            }
        } else {
            uint64_t z;
            memcpy(&z, p + 4, 8);
            p += 12;
            char *buf = sstep_arena_alloc(&g->rmsg[par], z ? (size_t)z : 1);
            if (!buf) sstep_fatal(ctx, "lpf_sync", "out of memory (%llu-byte message)",
                    (unsigned long long)z);
            mpi_post_recv(&g->rmisc, buf, (size_t)z, q, TAG(T_MDATA, par), g->comm);
            m->data = buf;
            m->size = (size_t)z;
            ++m;
        }
    }
    in->n = (size_t)(m - in->msgs);
}

/* Small puts from q's body, in issue order; direct ones are collected. */
void mpi_apply_puts(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end)
{
    struct sstep_slot_array *a = sstep_slots(&ctx->globals);
    uint32_t cs = UINT32_MAX;
    char *cb = NULL;
    size_t cz = 0;
    /* a few records ahead, prefetch the destination: scattered small puts
     * are bound by the latency of their stores */
    const char *la = p;
    int ahead = 0;
    while (p < end) {
        while (ahead < 8 && la < end) {
            uint64_t hw;
            memcpy(&hw, la, 8);
            uint32_t w1 = (uint32_t)(hw >> 32);
            if (SSTEP_LIKELY(!(w1 & REC_LONG))) {
                if ((w1 >> 16) == cs && (uint32_t)hw < cz) __builtin_prefetch(cb + (uint32_t)hw, 1);
                la += 8 + (w1 & 0xffffu);
            } else {
                uint64_t z;
                memcpy(&z, la + 20, 8);
                la += LONG_REC + (((uint32_t)hw & REC_DIRECT)
                        ? (((uint32_t)hw & REC_SPLIT) ? 16 : 0) : (size_t)z);
            }
            ahead++;
        }
        uint32_t slot, fl;
        size_t off, n;
        p = get_rec(p, &slot, &off, &n, &fl);
        ahead--;
        if (SSTEP_UNLIKELY(slot != cs)) {
            const struct sstep_slot *e = slot < a->size ? &a->e[slot] : sstep_lpfext.noc_entry(ctx, slot);
            if (!e || e->state != SSTEP_SLOT_GLOBAL)
                range_error(ctx, 1, q, slot, off, n);
            cs = slot;
            cb = e->base;
            cz = e->size;
        }
        if (SSTEP_UNLIKELY(off > cz || n > cz - off)) range_error(ctx, 1, q, slot, off, n);
        if (SSTEP_LIKELY(!(fl & REC_DIRECT))) {
            sstep_copy(cb + off, p, n);
            p += n;
        } else if (!(fl & REC_SPLIT)) {
            bigv_add(&g->bput, cb + off, n, q, T_PDATA);
        } else {
            /* we read the first half from the source; the source writes
             * the second (or sends it, mpi_split_in) */
            uint64_t w[2];
            memcpy(w, p, 16);
            p += 16;
            const size_t h = n / 2;
            bigv_add(&g->bput, cb + off, h, q, X_PREAD);
            g->bput.e[g->bput.n - 1].raddr = w[0];
            bigv_add(&g->bput, cb + off + h, n - h, q, T_PSPLIT);
            g->bput.e[g->bput.n - 1].raddr = w[1];
            g->nsplit_in++;
        }
    }
}

/* requests a process issues to itself */
void mpi_self_gets(struct sstep_ctx *ctx)
{
    const struct sstep_queue *q = &ctx->q;
    for (uint32_t i = q->peers[ctx->pid].head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
        const struct sstep_req *r = &q->reqs[i];
        char *from = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (SSTEP_UNLIKELY(!from)) range_error(ctx, 0, ctx->pid, r->slot, r->off, r->size);
        sstep_copy(r->local, from, r->size);
    }
}

void mpi_self_puts(struct sstep_ctx *ctx)
{
    const struct sstep_queue *q = &ctx->q;
    for (uint32_t i = q->peers[ctx->pid].head[SSTEP_PUT]; i != SSTEP_NIL; i = q->reqs[i].next) {
        const struct sstep_req *r = &q->reqs[i];
        char *to = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (SSTEP_UNLIKELY(!to)) range_error(ctx, 1, ctx->pid, r->slot, r->off, r->size);
        sstep_copy(to, r->local, r->size);
    }
}

void mpi_self_msgs(struct sstep_ctx *ctx)
{
    const struct sstep_queue *q = &ctx->q;
    struct sstep_inbox *in = &ctx->inbox;
    for (uint32_t i = q->peers[ctx->pid].head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next) {
        struct sstep_msg *m = &in->msgs[in->n++];
        m->data = q->reqs[i].local;
        m->size = q->reqs[i].size;
    }
}

/* scatter the small get replies from q into their destinations */
void mpi_scatter_gets(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q)
{
    const struct sstep_queue *qu = &ctx->q;
    const char *p = g->rin[q].p;
    const size_t big = g->big;
    for (uint32_t i = qu->peers[q].head[SSTEP_GET]; i != SSTEP_NIL; i = qu->reqs[i].next) {
        const struct sstep_req *r = &qu->reqs[i];
        if (r->size >= big) continue;
        sstep_copy(r->local, p, r->size);
        p += r->size;
    }
}
