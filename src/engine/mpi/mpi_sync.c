/*
 * The MPI engine: one BSP process per MPI rank. The sync.
 *
 * A sync of episode e (docs/mpi.md has the full design):
 *
 *  1. Every process sends every peer ONE first message: a 64-byte header
 *     (episode number, the agreement value `check`, section sizes) followed,
 *     when it fits in the peer's pre-posted receive buffer, by the combined
 *     body of everything it has for that peer: new global registrations,
 *     all small puts with their data (compact 8-byte headers, adjacent puts
 *     to one slot merged into one record), get requests and small messages.
 *     The receives for episode e were posted at the end of episode e-1, so
 *     the message lands directly in a buffer of ours; tags carry the episode
 *     parity, which keeps a fast process's next superstep apart.
 *  2. Once the first messages of all peers are in (that is the barrier; a
 *     peer that left the section sends "gone" instead and everybody's sync
 *     fails, nobody hangs), the superstep is certain to complete, and only
 *     now the rest moves: bodies too large for the first message, requests
 *     of `big` bytes and more straight from and into user memory (no
 *     staging copy; receives into overlapping destinations go through a
 *     scratch buffer so that each request lands whole), get replies.
 *     Sends are posted in the Latin-square order pid+1, pid+2, ... so that
 *     not every process addresses the same destination at once.
 *  3. Each process applies what lands in its memory, in one order: gets
 *     first (every get reads its source before any put of the superstep is
 *     applied there), then puts source by source in issue order (small ones
 *     from the received bodies, then the direct ones). Write conflicts are
 *     thereby resolved as one serialisation. Remote ranges are checked by
 *     the process owning the memory.
 *
 * A process leaving its SPMD function sends every peer a "gone" header
 * with its number of completed supersteps and then drains the section:
 * it receives from every peer until that peer's "gone", so no message is
 * left unmatched and the next section can reuse the communicator. The
 * section's result (all processes synced equally often, none failed) is
 * known to every process at that point.
 *
 * The sparse sync (sparse_first; on the message path from
 * SUPERSTEP_MPI_SPARSE_MIN processes on) replaces steps 1 and 2: a first
 * message (MPI_Issend) only to the peers we have something for, then a
 * dissemination barrier (mpi_exchange.c) that carries the agreement
 * values and "gone"; leaving and rehooks are barriers too (mpi_section.c).
 * Steps 3 to 6 then run over the peers we send to or heard from only.
 */
#define _GNU_SOURCE
#include "mpi_group.h"

/* The first message for q into g->out[q] (message path): its length to
 * send now; a body too large for it is sent separately (osep). */
static inline size_t encode_first(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        uint64_t e, uint64_t check, size_t nreg, int *any)
{
    size_t len = mpi_encode(g, ctx, q, e, check, nreg, g->out[q].p);
    const struct fhdr *h = (const struct fhdr *)g->out[q].p;
    if (h->flags & H_SEPARATE) {
        g->osep[q] = len - sizeof *h;
        *any = 1;
        return sizeof *h;
    }
    g->osep[q] = 0;
    if (!(h->flags & H_EMPTY)) *any = 1;
    return len;
}

/* ------------------------------------------------------------------ */
/* Sync                                                                 */
/* ------------------------------------------------------------------ */

static int cmp_dist(const void *a, const void *b, void *arg)
{
    const lpf_pid_t me = *(const lpf_pid_t *)arg, P = ((const lpf_pid_t *)arg)[1];
    lpf_pid_t x = *(const lpf_pid_t *)a, y = *(const lpf_pid_t *)b;
    x = x > me ? x - me : x + P - me;
    y = y > me ? y - me : y + P - me;
    return x < y ? -1 : x > y;
}

/* The sparse exchange (docs/mpi.md, "The sparse sync"): a first message
 * only to the peers we have something for, synchronous (MPI_Issend: it completes once its receiver
 * took it); the barrier, entered once all of ours were taken, carries the
 * agreement values and "gone". At its end every first message to us is
 * in. g->ord: the peers we send to or heard from, in Latin-square order.
 * -1: the sync fails on every process (a process left, or rehooks). */
static int sparse_first(struct mpi_group *g, struct sstep_ctx *ctx, struct sstep_sync_info *info,
        size_t nreg, int *anyp)
{
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    if (g->farena.head) sstep_arena_reset(&g->farena);
    if (++g->astamp == 0) {
        memset(g->amark, 0, P * sizeof *g->amark);
        g->astamp = 1;
    }
    g->nord = 0;
    const lpf_pid_t *S = ctx->q.touched;
    const lpf_pid_t ns = ctx->q.ntouched;
    size_t nbig = 0, nbigget = 0;
    for (lpf_pid_t i = 0; i < ns; ++i) {
        const lpf_pid_t q = S[i];
        if (q == me) continue;
        const struct sstep_peer_lists *pl = &ctx->q.peers[q];
        if (mbuf_reserve(&g->out[q], mpi_out_bound(g, pl, nreg))) return -2;
        nbig += pl->count[SSTEP_PUT] + pl->count[SSTEP_MSG];
        nbigget += pl->count[SSTEP_GET];
    }
    if (SSTEP_UNLIKELY(ctx->q.n) && (bigv_reserve(&g->bsend, nbig) || bigv_reserve(&g->bget, nbigget)))
        return -2;
    mpi_pool_post(g, e, 1);
    int any = 0;
    const int tag = STAG_FIRST((int)(e & 1), g->secpar);
    for (lpf_pid_t i = 0; i < ns; ++i) {
        const lpf_pid_t q = S[i];
        if (q == me) continue;
        size_t len = encode_first(g, ctx, q, e, info->check, nreg, &any);
        MPI_Issend(g->out[q].p, (int)len, MPI_BYTE, (int)q, tag, g->comm, reqv_push(&g->sfirst));
        g->sent++;
        mpi_ord_add(g, q);
    }
    g->nsend = g->nord;
    struct bmsg m = { info->check, info->check, me, me, B_SYNC, B_SYNC }, res;
    mpi_sparse_barrier(g, &m, &res);
    mpi_pool_stop(g);
    if (res.any != B_SYNC) {
        for (lpf_pid_t i = 0; i < g->nord; ++i) g->got[g->ord[i]] = 0;
        return -1;
    }
    if (res.vmin != res.vmax && !info->mismatch) {
        info->mismatch = 1;
        if (info->check != res.vmin) {
            info->peer = res.pmin;
            info->peer_check = res.vmin;
        } else {
            info->peer = res.pmax;
            info->peer_check = res.vmax;
        }
    }
    for (lpf_pid_t i = 0; i < g->nord; ++i) {
        const lpf_pid_t q = g->ord[i];
        if (g->got[q]) {
            g->got[q] = 0;
            if (!(g->hdr[q]->flags & H_EMPTY)) any = 1;
            continue;
        }
        struct fhdr *x = sstep_arena_alloc(&g->farena, sizeof *x);
        if (!x) sstep_fatal(ctx, "lpf_sync", "out of memory (a first-message header)");
        memset(x, 0, sizeof *x);
        x->episode = e;
        x->check = info->check;
        x->flags = H_EMPTY;
        g->hdr[q] = x;
    }
    if (g->nord > 1) {
        lpf_pid_t arg[2] = { me, P };
        qsort_r(g->ord, g->nord, sizeof *g->ord, cmp_dist, arg);
    }
    *anyp = any;
    return 0;
}

static lpf_err_t sync_body(struct sstep_ctx *ctx, struct sstep_sync_info *info);

/* the sync, and what SUPERSTEP_MPI_STATS reports of it */
lpf_err_t mpi_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct mpi_group *g = ctx->group;
    const uint64_t s0 = g->sent;
    const int regs = ctx->pending_globals != 0;
    lpf_err_t rc = sync_body(ctx, info);
    g->nsyncs++;
    if (!regs && g->sent - s0 > g->sync_max) g->sync_max = g->sent - s0;
    return rc;
}

static lpf_err_t sync_body(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct mpi_group *g = ctx->group;
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    const int par = (int)(e & 1);
    MPI_Comm comm = g->comm;
    ctx->inbox.n = ctx->inbox.next = 0;
    g->bsend.n = g->bget.n = g->bput.n = g->bsplit.n = 0;
    g->nsplit_in = 0;
    g->body_left = g->body_budget;
    /* our copies into the body were slow 256 syncs ago: try it again */
    if (SSTEP_UNLIKELY(g->far_until) && e >= g->far_until) g->far_until = 0;

    /* 0. room for everything we send, before anything is sent: an
     * allocation failure now fails this process only */
    size_t nreg = 0;
    /* (the sparse sync sends no registrations: remote sizes stay unknown
     * there, and the owner checks every range) */
    if (SSTEP_UNLIKELY(ctx->pending_globals) && !g->sparse) {
        nreg = mpi_collect_regs(g, ctx);
        if (nreg == SIZE_MAX) return LPF_ERR_FATAL;
    }
    int any = 0;
    const lpf_pid_t *ord = g->ordall;
    lpf_pid_t nord = P - 1;
    if (g->sparse) {
        /* (out of memory fails before anything is sent: only us) */
        if (sparse_first(g, ctx, info, nreg, &any)) return LPF_ERR_FATAL;
        ord = g->ord;
        nord = g->nord;
        goto data;
    }
    size_t nbig = 0, nbigget = 0;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q == me) continue;
        const struct sstep_peer_lists *pl = &ctx->q.peers[q];
        if (!g->shm && mbuf_reserve(&g->out[q], mpi_out_bound(g, pl, nreg))) return LPF_ERR_FATAL;
        nbig += pl->count[SSTEP_PUT] + pl->count[SSTEP_MSG];
        nbigget += pl->count[SSTEP_GET];
    }
    if (SSTEP_UNLIKELY(ctx->q.n) && (bigv_reserve(&g->bsend, nbig) || bigv_reserve(&g->bget, nbigget)))
        return LPF_ERR_FATAL;

    /* 1. one first message to every peer, in Latin-square order */
    g->sent += P - 1;
    if (g->shm) {
        /* into our mailboxes (bodies too large for them: into our body
         * segment), then one arrival word */
        char *half = g->has_bwin ? g->bseg[me] + (size_t)par * g->bcap : NULL;
        size_t used = 0;
        for (lpf_pid_t k = 1; k < P; ++k) {
            lpf_pid_t q = me + k;
            if (q >= P) q -= P;
            const struct sstep_peer_lists *pl = &ctx->q.peers[q];
            char *mb = mailbox(g, me, q, par);
            size_t bound = mpi_out_bound(g, pl, nreg);
            g->osep[q] = 0;
            g->blen[q] = 0;
            g->bsrc[q] = NULL;
            if (bound <= g->E) {
                size_t len = mpi_encode(g, ctx, q, e, info->check, nreg, mb);
                (void)len;
                if (!(((const struct fhdr *)mb)->flags & H_EMPTY)) any = 1;
                continue;
            }
            size_t off = (used + 63) & ~(size_t)63;
            int inseg = half && off + bound <= g->bcap;
            /* nothing is published yet: failing here fails only us */
            if (!inseg && mbuf_reserve(&g->out[q], bound)) return LPF_ERR_FATAL;
            char *base = inseg ? half + off : g->out[q].p;
            size_t len = mpi_encode(g, ctx, q, e, info->check, nreg, base);
            struct fhdr *h = (struct fhdr *)base;
            any = 1;
            if (!(h->flags & H_SEPARATE)) {
                memcpy(mb, base, len);   /* the bound was pessimistic */
                continue;
            }
            if (!inseg && half && off + len <= g->bcap) {
                memcpy(half + off, base, len);
                inseg = 1;
            }
            h->flags = (h->flags & ~H_SEPARATE) | H_SHMBODY;
            h->body_off = off + sizeof *h;
            memcpy(mb, h, sizeof *h);
            g->boff[q] = off;
            g->blen[q] = len;
            g->bsrc[q] = inseg ? NULL : base;
            used = off + len;
        }
        struct shm_line *ml = line_of(g, me);
        ml->check[par] = info->check;
        ml->need[par] = used;
        atomic_store_explicit(&ml->word[par], mkword(g->gen, e, any ? 0 : W_EMPTY),
                memory_order_release);
        /* 2. everybody's arrival */
        if (mpi_node_wait_first(g, e, 0)) return LPF_ERR_FATAL;
        size_t need = used;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me) continue;
            const struct fhdr *h;
            if (g->wflags[q] & W_EMPTY) {
                struct fhdr *x = &g->ehdr[q];
                memset(x, 0, sizeof *x);
                x->episode = e;
                x->check = line_of(g, q)->check[par];
                x->flags = H_EMPTY;
                h = x;
            } else {
                h = (const struct fhdr *)mailbox(g, q, me, par);
                any = 1;
                size_t n = line_of(g, q)->need[par];
                if (n > need) need = n;
            }
            g->hdr[q] = h;
            if (h->check != info->check && !info->mismatch) {
                info->mismatch = 1;
                info->peer = q;
                info->peer_check = h->check;
            }
        }
        /* a body did not fit in its owner's segment: everybody grows */
        if (SSTEP_UNLIKELY(need > g->bcap)) mpi_grow_bodies(g, ctx, need, par);
    } else {
        for (lpf_pid_t k = 1; k < P; ++k) {
            lpf_pid_t q = me + k;
            if (q >= P) q -= P;
            size_t len = encode_first(g, ctx, q, e, info->check, nreg, &any);
            MPI_Isend(g->out[q].p, (int)len, MPI_BYTE, (int)q, TAG(T_FIRST, par), comm,
                    reqv_push(&g->sfirst));
        }
        /* 2. everybody's first message */
        if (mpi_wait_first(g, ctx, e, 0)) return LPF_ERR_FATAL;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me) continue;
            const struct fhdr *h = (const struct fhdr *)first_buf(g, par, q);
            g->hdr[q] = h;
            if (!(h->flags & H_EMPTY)) any = 1;
            if (h->check != info->check && !info->mismatch) {
                info->mismatch = 1;
                info->peer = q;
                info->peer_check = h->check;
            }
        }
        mpi_prepost_next(g, e);
    }
data:;
    const struct sstep_peer_lists *mine = &ctx->q.peers[me];
    if (SSTEP_LIKELY(!any) && mine->head[SSTEP_PUT] == SSTEP_NIL
            && mine->head[SSTEP_GET] == SSTEP_NIL && mine->head[SSTEP_MSG] == SSTEP_NIL) {
        if (g->sfirst.n) mpi_wait_all(g, &g->sfirst);
        mpi_episode_done(g);
        return LPF_SUCCESS;
    }

    /* 3. bodies, get replies, direct puts and messages */
    if (g->rmsg[par].head) sstep_arena_reset(&g->rmsg[par]);
    for (lpf_pid_t k = 0; k < nord; ++k) {
        const lpf_pid_t q = ord[k];
        const struct fhdr *h = g->hdr[q];
        if (h->flags & H_SHMBODY) {
            g->bodyp[q] = g->bseg[q] + (size_t)par * g->bcap + h->body_off;
        } else if (h->flags & H_SEPARATE) {
            size_t bs = h->nreg * sizeof(struct regrec) + h->put_bytes + h->get_bytes + h->msg_bytes;
            if (mbuf_reserve(&g->body[par][q], bs))
                sstep_fatal(ctx, "lpf_sync", "out of memory (%zu-byte receive buffer)", bs);
            mpi_post_recv(&g->rbody, g->body[par][q].p, bs, q, TAG(T_BODY, par), comm);
            g->bodyp[q] = g->body[par][q].p;
        } else {
            g->bodyp[q] = (const char *)h + sizeof *h;
        }
        if (g->osep[q]) {
            mpi_post_send(&g->rmisc, g->out[q].p + sizeof(struct fhdr), g->osep[q], q,
                    TAG(T_BODY, par), comm);
            g->sent++;
        }
    }
    for (lpf_pid_t k = 0; k < nord; ++k) {
        const lpf_pid_t q = ord[k];
        if (!g->gsmall[q]) continue;
        if (mbuf_reserve(&g->rin[q], g->gsmall[q]))
            sstep_fatal(ctx, "lpf_sync", "out of memory (%zu bytes of get replies)", g->gsmall[q]);
        mpi_post_recv(&g->rget, g->rin[q].p, g->gsmall[q], q, TAG(T_GDATA, par), comm);
    }
    mpi_mark_overlaps(g, &g->bget);
    for (size_t i = 0; i < g->bget.n; ++i) {
        struct bigx *x = &g->bget.e[i];
        mpi_post_recv(&g->rget, x->tmp ? x->tmp : x->ptr, x->size, x->q, TAG(T_GDATA, par), comm);
    }
    for (size_t i = 0; i < g->bsend.n; ++i) {
        struct bigx *x = &g->bsend.e[i];
        mpi_post_send(&g->rmisc, x->ptr, x->size, x->q, TAG(x->tag, par), comm);
    }
    g->sent += g->bsend.n;
    mpi_wait_all(g, &g->rbody);

    size_t nmsg = mine->count[SSTEP_MSG];
    for (lpf_pid_t k = 0; k < nord; ++k) nmsg += g->hdr[ord[k]]->nmsg;
    if (nmsg && sstep_inbox_reserve(&ctx->inbox, nmsg))
        sstep_fatal(ctx, "lpf_sync", "out of memory (inbox of %zu messages)", nmsg);

    /* 4. registrations, get requests, messages of every peer */
    for (lpf_pid_t k = 0; k < nord; ++k) {
        const lpf_pid_t q = ord[k];
        const struct fhdr *h = g->hdr[q];
        const char *b = g->bodyp[q];
        if (h->nreg) {
            struct rsize *rs = &g->rsz[q];
            const struct regrec *rr = (const struct regrec *)b;
            for (uint32_t i = 0; i < h->nreg; ++i) {
                struct regrec r;
                memcpy(&r, rr + i, sizeof r);
                if (r.slot >= rs->n) {
                    uint32_t n = rs->n ? rs->n : 16;
                    while (n <= r.slot) n *= 2;
                    size_t *s = realloc(rs->s, (size_t)n * sizeof *s);
                    if (s) rs->s = s;
                    uint64_t *a = s ? realloc(rs->a, (size_t)n * sizeof *a) : NULL;
                    if (!s || !a) sstep_fatal(ctx, "lpf_sync", "out of memory (registration table)");
                    rs->a = a;
                    for (uint32_t j = rs->n; j < n; ++j) {
                        s[j] = SIZE_MAX;
                        a[j] = 0;
                    }
                    rs->n = n;
                }
                rs->s[r.slot] = (size_t)r.size;
                rs->a[r.slot] = r.addr;
            }
            b += h->nreg * sizeof(struct regrec);
        }
        const char *gets = b + h->put_bytes;
        if (h->get_bytes) mpi_serve_gets(g, ctx, q, gets, gets + h->get_bytes, h->gsmall, par);
        const char *msgs = gets + h->get_bytes;
        if (h->msg_bytes) mpi_take_msgs(g, ctx, q, msgs, msgs + h->msg_bytes, par);
    }
    if (mine->head[SSTEP_MSG] != SSTEP_NIL) mpi_self_msgs(ctx);

    /* 5. gets: every source read, every reply in, before any put lands */
    mpi_wait_all(g, &g->rget);
    for (size_t i = 0; i < g->bget.n; ++i) {
        struct bigx *x = &g->bget.e[i];
        if (x->tmp) memcpy(x->ptr, x->tmp, x->size);
    }
    for (lpf_pid_t k = 0; k < nord; ++k)
        if (g->gsmall[ord[k]]) mpi_scatter_gets(g, ctx, ord[k]);
    if (mine->head[SSTEP_GET] != SSTEP_NIL) mpi_self_gets(ctx);
    if (g->before_puts) g->before_puts(g->before_puts_arg);

    /* 6. puts, source by source (ourselves last), then the direct ones */
    for (lpf_pid_t k = 0; k < nord; ++k) {
        const lpf_pid_t q = ord[k];
        const struct fhdr *h = g->hdr[q];
        if (!h->put_bytes) continue;
        const char *b = g->bodyp[q] + h->nreg * sizeof(struct regrec);
        mpi_apply_puts(g, ctx, q, b, b + h->put_bytes);
    }
    if (mine->head[SSTEP_PUT] != SSTEP_NIL) mpi_self_puts(ctx);
    mpi_mark_overlaps(g, &g->bput);
    for (size_t i = 0; i < g->bput.n; ++i) {
        struct bigx *x = &g->bput.e[i];
        if (SSTEP_UNLIKELY(x->tag != T_PDATA)) continue;   /* split: mpi_split_in */
        mpi_post_recv(&g->rmisc, x->tmp ? x->tmp : x->ptr, x->size, x->q, TAG(T_PDATA, par), comm);
    }
    if (SSTEP_UNLIKELY(g->nsplit_in)) mpi_split_in(g, ctx, par);
    if (SSTEP_UNLIKELY(g->bsplit.n)) mpi_split_out(g, ctx, par);
    mpi_wait_all(g, &g->rmisc);
    if (SSTEP_UNLIKELY(g->nsplit_in || g->bsplit.n)) mpi_split_end(g, ctx);
    for (size_t i = 0; i < g->bput.n; ++i) {
        struct bigx *x = &g->bput.e[i];
        if (x->tmp) memcpy(x->ptr, x->tmp, x->size);
    }
    mpi_wait_all(g, &g->sfirst);
    if (g->rdg.n) mpi_wait_all(g, &g->rdg);
    if (g->tmp.head) sstep_arena_reset(&g->tmp);
    mpi_episode_done(g);
    return LPF_SUCCESS;
}
