/*
 * The MPI engine: encoding what a process sends each peer at a sync
 * (registrations, puts with their data, get requests, messages).
 */
#define _GNU_SOURCE
#include "mpi_group.h"

/* Where q's memory for (slot, off, n) is, as q's registration exchange
 * said (0: not known, or not all inside the area) */
static uint64_t split_dst(const struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q,
        uint32_t slot, size_t off, size_t n)
{
    if (ctx->range_steps) return 0;
    const struct rsize *r = &g->rsz[q];
    if (slot >= r->n || r->s[slot] == SIZE_MAX || !r->a[slot] || off > r->s[slot]
            || n > r->s[slot] - off)
        return 0;
    return r->a[slot] + off;
}

/* put data into the body: on one node, big copies are timed (their speed
 * says whether the readers' cores are far from ours) */
static inline void body_copy(struct mpi_group *g, char *d, const char *s, size_t n)
{
    if (SSTEP_LIKELY(n < g->far_put || g->far_put >= g->big_put || !g->shm)) {
        sstep_copy(d, s, n);
        return;
    }
    const uint64_t t0 = mpi_now_ns();
    sstep_copy(d, s, n);
    mpi_note_body_copy(g, n, mpi_now_ns() - t0);
}

/* Puts to q in issue order; adjacent puts into one slot are merged into
 * one record, and the data of puts whose sources are adjacent too is
 * copied in one piece. */
static char *enc_puts(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q, char *p)
{
    const struct sstep_req *reqs = ctx->q.reqs;
    const size_t big = g->big;
    /* (while our copies into the body are slow: from far_put on directly,
     * mpi_note_body_copy) */
    const size_t big_put = SSTEP_UNLIKELY(g->far_until) ? g->far_put : g->big_put;
    char *last = NULL;        /* compact record that may still grow */
    uint32_t lslot = 0, lsize = 0;
    size_t lend = 0;
    char *pdst = NULL;        /* pending copy */
    const char *psrc = NULL;
    size_t plen = 0;
    for (uint32_t i = ctx->q.peers[q].head[SSTEP_PUT]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        __builtin_prefetch(r + 8);
        const size_t n = r->size;
        int body = n < big;
        if (SSTEP_UNLIKELY(!body) && n < big_put && n <= g->body_left) {
            g->body_left -= n;
            body = 1;
        }
        if (SSTEP_LIKELY(body)) {
            if (last && r->slot == lslot && r->off == lend && lsize + n <= 0xffffu) {
                lsize += (uint32_t)n;
                lend += n;
            } else {
                if (last) {
                    uint32_t w1 = (lslot << 16) | lsize;
                    memcpy(last + 4, &w1, 4);
                }
                if (r->slot < 0x7fffu && n <= 0xffffu && r->off <= UINT32_MAX) {
                    uint64_t hw = (uint64_t)(uint32_t)r->off
                        | ((uint64_t)((r->slot << 16) | (uint32_t)n) << 32);
                    memcpy(p, &hw, 8);
                    last = p;
                    lslot = r->slot;
                    lsize = (uint32_t)n;
                    lend = r->off + n;
                    p += 8;
                } else {
                    p = put_long(p, r->slot, r->off, n, 0);
                    last = NULL;
                }
            }
            if (plen && psrc + plen == r->local && pdst + plen == p) {
                plen += n;
            } else {
                if (plen) body_copy(g, pdst, psrc, plen);
                pdst = p;
                psrc = r->local;
                plen = n;
            }
            p += n;
        } else {
            if (last) {
                uint32_t w1 = (lslot << 16) | lsize;
                memcpy(last + 4, &w1, 4);
            }
            last = NULL;
            const uint64_t dst = g->cma_put ? split_dst(g, ctx, q, r->slot, r->off, n) : 0;
            if (dst) {
                /* the source address, and where we would write the second half */
                const size_t h = n / 2;
                uint64_t w[2] = { (uint64_t)(uintptr_t)r->local, dst + h };
                p = put_long(p, r->slot, r->off, n, REC_DIRECT | REC_SPLIT);
                memcpy(p, w, 16);
                p += 16;
                bigv_add(&g->bsplit, (char *)r->local + h, n - h, q, T_PSPLIT);
                g->bsplit.e[g->bsplit.n - 1].raddr = dst + h;
            } else {
                p = put_long(p, r->slot, r->off, n, REC_DIRECT);
                bigv_add(&g->bsend, r->local, n, q, T_PDATA);
            }
        }
    }
    if (last) {
        uint32_t w1 = (lslot << 16) | lsize;
        memcpy(last + 4, &w1, 4);
    }
    if (plen) body_copy(g, pdst, psrc, plen);
    return p;
}

/* Get requests to q; small replies come back in one message. */
static char *enc_gets(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q, char *p,
        size_t *small)
{
    const struct sstep_req *reqs = ctx->q.reqs;
    const size_t big = g->big;
    size_t s = 0;
    for (uint32_t i = ctx->q.peers[q].head[SSTEP_GET]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        const size_t n = r->size;
        if (n < big) {
            if (r->slot < 0x7fffu && n <= 0xffffu && r->off <= UINT32_MAX) {
                uint64_t hw = (uint64_t)(uint32_t)r->off
                    | ((uint64_t)((r->slot << 16) | (uint32_t)n) << 32);
                memcpy(p, &hw, 8);
                p += 8;
            } else {
                p = put_long(p, r->slot, r->off, n, 0);
            }
            s += n;
        } else {
            p = put_long(p, r->slot, r->off, n, REC_DIRECT);
            bigv_add(&g->bget, r->local, n, q, T_GDATA);
        }
    }
    *small = s;
    return p;
}

static char *enc_msgs(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q, char *p)
{
    const struct sstep_req *reqs = ctx->q.reqs;
    const size_t big = g->big;
    char *run = NULL;          /* header of the run being extended */
    uint32_t rcount = 0;
    size_t rsize = 0;
    for (uint32_t i = ctx->q.peers[q].head[SSTEP_MSG]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        const size_t n = r->size;
        if (SSTEP_LIKELY(n < big && n < REC_LONG)) {
            if (SSTEP_UNLIKELY(!run || n != rsize || rcount == MSG_RUN_MAX)) {
                run = p;
                rcount = 0;
                rsize = n;
                uint32_t z = (uint32_t)n;
                memcpy(p + 4, &z, 4);
                p += 8;
            }
            rcount++;
            uint32_t w = rcount | MSG_RUN;
            memcpy(run, &w, 4);
            sstep_copy(p, r->local, n);
            p += n;
        } else {
            uint32_t w = REC_LONG;
            uint64_t z = n;
            memcpy(p, &w, 4);
            memcpy(p + 4, &z, 8);
            p += 12;
            run = NULL;
            bigv_add(&g->bsend, r->local, n, q, T_MDATA);
        }
    }
    return p;
}

/* upper bound of the first message + body for q */
size_t mpi_out_bound(const struct mpi_group *g, const struct sstep_peer_lists *pl, size_t nreg)
{
    size_t b = sizeof(struct fhdr) + nreg * sizeof(struct regrec);
    size_t lim = g->big - 1, plim = g->big_put - 1;
    size_t np = pl->count[SSTEP_PUT], ng = pl->count[SSTEP_GET], nm = pl->count[SSTEP_MSG];
    b += (np + ng) * LONG_REC + np * 16 + nm * 12 + 8;
    size_t dp = pl->bytes[SSTEP_PUT], dm = pl->bytes[SSTEP_MSG];
    b += dp < np * plim ? dp : np * plim;
    b += dm < nm * lim ? dm : nm * lim;
    return b;
}

/* Encode the first message (header and body) for q into g->out[q]. */
size_t mpi_encode(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q,
        uint64_t e, uint64_t check, size_t nreg, char *base)
{
    const struct sstep_peer_lists *pl = &ctx->q.peers[q];
    struct fhdr *h = (struct fhdr *)base;
    char *p = base + sizeof *h;
    h->episode = e;
    h->check = check;
    h->flags = 0;
    h->nreg = (uint32_t)nreg;
    h->nget = pl->count[SSTEP_GET];
    h->nmsg = pl->count[SSTEP_MSG];
    if (nreg) {
        memcpy(p, g->regs, nreg * sizeof(struct regrec));
        p += nreg * sizeof(struct regrec);
    }
    char *s = p;
    if (pl->head[SSTEP_PUT] != SSTEP_NIL) p = enc_puts(g, ctx, q, p);
    h->put_bytes = (uint64_t)(p - s);
    s = p;
    size_t small = 0;
    if (pl->head[SSTEP_GET] != SSTEP_NIL) p = enc_gets(g, ctx, q, p, &small);
    h->get_bytes = (uint64_t)(p - s);
    g->gsmall[q] = small;
    h->gsmall = small;
    h->body_off = 0;   /* set by the on-node path; defined bytes on the wire */
    s = p;
    if (pl->head[SSTEP_MSG] != SSTEP_NIL) p = enc_msgs(g, ctx, q, p);
    h->msg_bytes = (uint64_t)(p - s);
    size_t total = (size_t)(p - base);
    if (total == sizeof *h) h->flags |= H_EMPTY;
    else if (total > g->E) h->flags |= H_SEPARATE;
    return total;
}

/* Global registrations that become active at this sync: (slot, size). */
size_t mpi_collect_regs(struct mpi_group *g, const struct sstep_ctx *ctx)
{
    struct sstep_slot_array *a = sstep_slots((struct sstep_slot_table *)&ctx->globals);
    uint32_t hi = ctx->globals.fresh < a->size ? ctx->globals.fresh : a->size;
    uint64_t act = ctx->superstep + 1;
    size_t n = 0;
    for (uint32_t i = 0; i < hi; ++i) {
        const struct sstep_slot *e = &a->e[i];
        if (e->state != SSTEP_SLOT_GLOBAL || e->active_from != act) continue;
        if (n == g->regcap) {
            size_t c = g->regcap ? g->regcap * 2 : 16;
            struct regrec *r = realloc(g->regs, c * sizeof *r);
            if (!r) return SIZE_MAX;
            g->regs = r;
            g->regcap = c;
        }
        g->regs[n].slot = i;
        g->regs[n].pad_ = 0;
        g->regs[n].size = e->size;
        g->regs[n].addr = (uint64_t)(uintptr_t)e->base;
        n++;
    }
    return n;
}
