/*
 * The MPI engine's PUB extensions (pub.md §12.2): E1 (sync over a range of
 * pids, matched by stamp), E2 (oblivious sync) and E4 (no hang). The core's
 * part (checks, batches, mailboxes, deliveries, scopes) is src/core/pubext.c.
 *
 * Every packet travels on the section communicator with tag T_RANGE and is
 * received with MPI_Improbe/MPI_Mrecv into memory of its own, or, on one
 * node, through a ring in shared memory (mpi_range_shm.c, which keeps the
 * same per-pair order); its first 8 bytes say what it is. Packets are kept
 * until the E1/E2 they belong to takes them (early ones wait, by stamp).
 * Per-pair order (MPI's non-overtaking order: one sender, one tag) is what
 * the protocol relies on: whatever a process sent before a packet is there
 * when that packet is.
 *
 *   BATCH    a struct sstep_batch (core format): the sender's messages for
 *            the receiver stamped (object, step); goes to the receiver's
 *            mailbox at once
 *   ARRIVE   E1 arrival: stamp, check, the puts (with data) and get requests
 *            for the receiver; to every other member of the range, after the
 *            BATCHes
 *   REPLY    E1: the data of the receiver's gets, in request order
 *   GONE     the sender failed in an E1/E2, or (final) left the section: its
 *            last packet; carries its counts (E4)
 *   PROBE, ANSWER, VERDICT   the quiescence detection (E4), below
 *
 * E1 = [BATCHes] -> ARRIVE to every member -> wait for every member's
 * ARRIVE (that is the barrier; the messages shipped to us are then in the
 * mailbox) -> serve the gets asked of us (REPLY) and our own gets -> wait
 * for the REPLYs to our gets, scatter them -> apply the puts, source by
 * source, ours last. Every get thus reads before any put of the superstep
 * lands at its source, and where a get and a put write the same bytes the
 * put's data remains. E2 = [BATCHes], then wait until `expect` messages
 * stamped `stamp` are in the mailbox; sends that are still open progress in
 * later calls (and at the end of the section).
 *
 * Waits check on a slow path (about every millisecond): a member gone (its
 * GONE packet, or, for a process that never sent a range packet, the
 * section's "gone" header / arrival word) fails an E1 with cause GONE; a
 * member that sent us something of a later step of the object without
 * arriving at this one, or is in the other kind for this stamp, fails it
 * with cause MISMATCH. A failing process sends GONE to every peer.
 *
 * Deadlock (E4), the four-counter method through pid 0: every process
 * counts the data packets (BATCH, ARRIVE, REPLY) it sent to and received
 * from each peer. Pid 0, once blocked in a wait for 0.1 s, runs rounds: it
 * sends PROBE(k) to every peer that is not gone; a process answers (from
 * wherever it receives range packets) with whether it is in a wait, which
 * one (a serial number), its totals and its packets sent to each process.
 * When two successive complete rounds, at least 50 ms apart, find every
 * live process in the same wait with the same totals, and every live
 * process has received exactly what was sent to it (the sums of the sent
 * vectors, the final vectors of gone processes included, equal its
 * received total), nothing is in flight and nobody can move: pid 0 sends
 * VERDICT with the report (the lowest pid blocked in E2, with its counts,
 * else the lowest blocked pid) and every blocked wait fails with cause
 * DEADLOCK. (The time at which pid 0 sends PROBE(k) lies within every
 * process's interval between its answers k-1 and k, so the counts are one
 * consistent cut.) Without pid 0 blocked in a range wait nothing is
 * declared: the watchdog (SUPERSTEP_SYNC_WARN/TIMEOUT) covers the rest.
 *
 * Leaving the section (mpi_section.c, leave()): a process that sent any
 * range packet sends a final GONE to every peer and announces it with
 * H_RANGE in its "gone" header (final_range on the on-node path); after
 * every peer is gone, each process receives until every announced final
 * GONE (so no range packet is left for the next section on the
 * communicator) and waits for its own sends.
 */
#define _GNU_SOURCE
#include "mpi_range_internal.h"

/* ------------------------------------------------------------------ */
/* Waiting                                                              */
/* ------------------------------------------------------------------ */

enum { M_ARRIVE = 0, M_REPLY = 1, M_COUNT = 2 };
enum { W_DONE = 1, W_FAIL = 2 };

struct waitst {
    struct mpi_group *g;
    struct mpi_range *rs;
    struct sstep_ctx *ctx;
    struct sstep_stamp s;
    int kind;
    lpf_pid_t lo, n;
    const lpf_pid_t *mem;         /* the members (NULL: lo..lo+n-1) */
    lpf_pid_t idx;                /* the caller's index among them */
    size_t expect;
    int mode;
    struct pnode **have;          /* [n] the packet of each member (ARRIVE, REPLY) */
    const unsigned char *want;    /* [n] M_REPLY: a reply is due from member k */
    lpf_pid_t missing;
    uint64_t seen_pk, seen_batch;
    size_t count;                 /* M_COUNT */
    struct sstep_sync_info *info;
    int cause;
};

static inline lpf_pid_t member_at(const struct waitst *w, lpf_pid_t k)
{
    return w->mem ? w->mem[k] : w->lo + k;
}

/* q's index among the members; n when it is none */
static lpf_pid_t member_idx(const struct waitst *w, lpf_pid_t q)
{
    if (!w->mem) return q >= w->lo && q - w->lo < w->n ? q - w->lo : w->n;
    lpf_pid_t a = 0, b = w->n;
    while (a < b) {
        const lpf_pid_t m = a + (b - a) / 2;
        if (w->mem[m] < q) a = m + 1;
        else b = m;
    }
    return a < w->n && w->mem[a] == q ? a : w->n;
}

static int stamp_is(const struct rhdr *h, struct sstep_stamp s)
{
    return h->object == s.object && h->step == s.step;
}

/* move the kept packets of this wait into have[] */
static void take(struct waitst *w)
{
    struct mpi_range *rs = w->rs;
    const uint64_t type = w->mode == M_ARRIVE ? RP_ARRIVE : RP_REPLY;
    for (struct pnode **pp = &rs->early; *pp;) {
        struct pnode *p = *pp;
        struct rhdr h;
        memcpy(&h, p->buf, sizeof h);
        lpf_pid_t k = member_idx(w, p->src);
        if (h.type == type && stamp_is(&h, w->s) && k < w->n
                && !w->have[k] && (w->mode == M_ARRIVE || w->want[k])) {
            *pp = p->next;
            w->have[k] = p;
            w->missing--;
            continue;
        }
        pp = &p->next;
    }
    w->seen_pk = rs->npk;
}

static int in_range(const struct waitst *w, lpf_pid_t q)
{
    return member_idx(w, q) < w->n;
}

static void set_mismatch(struct waitst *w, lpf_pid_t q, uint64_t object, uint64_t step, int kind)
{
    w->cause = SSTEP_CAUSE_MISMATCH;
    w->info->peer = q;
    w->info->peer_stamp.object = object;
    w->info->peer_stamp.step = step;
    w->info->peer_kind = kind == SSTEP_E2 ? SSTEP_KIND_OBLSYNC : SSTEP_KIND_SYNC;
}

/* a member that cannot meet us: E1: it sent us something of a later step
 * of this object without arriving here, or messages of E2 for this stamp;
 * E2: it arrived in E1 for this stamp. */
static int mismatch(struct waitst *w)
{
    struct mpi_range *rs = w->rs;
    if (w->mode == M_REPLY) return 0;
    for (struct pnode *p = rs->early; p; p = p->next) {
        struct rhdr h;
        memcpy(&h, p->buf, sizeof h);
        if (h.type != RP_ARRIVE || h.object != w->s.object || !in_range(w, p->src)) continue;
        if (w->kind == SSTEP_E1 && h.step > w->s.step && !w->have[member_idx(w, p->src)]) {
            set_mismatch(w, p->src, h.object, h.step, SSTEP_E1);
            return 1;
        }
        if (w->kind == SSTEP_E2 && h.step == w->s.step) {
            set_mismatch(w, p->src, h.object, h.step, SSTEP_E1);
            return 1;
        }
    }
    if (w->kind != SSTEP_E1) return 0;
    struct sstep_mailbox *m = &sstep_ext_get(w->ctx)->mbox;
    int found = 0;
    sstep_mailbox_drain(w->ctx);
    for (const struct sstep_batch *b = m->head; b; b = b->next) {
        if (b->object != w->s.object || !in_range(w, b->src) || w->have[member_idx(w, b->src)]) continue;
        if (b->step > w->s.step || (b->step == w->s.step && b->kind != SSTEP_E1)) {
            set_mismatch(w, b->src, b->object, b->step, (int)b->kind);
            found = 1;
            break;
        }
    }
    return found;
}

/* a member gone: 1 (cause set). E2: every other member gone and too few
 * messages: deadlock (nobody can send any more). */
static int gone_problem(struct waitst *w)
{
    struct mpi_range *rs = w->rs;
    lpf_pid_t alive = 0;
    for (lpf_pid_t k = 0; k < w->n; ++k) {
        lpf_pid_t q = member_at(w, k);
        if (q == rs->me) continue;
        if (w->mode == M_COUNT) {
            if (!mr_peer_gone(w->g, rs, q)) alive++;
            continue;
        }
        if (w->have[k] || (w->mode == M_REPLY && !w->want[k])) continue;
        /* a member that failed in its own range sync prints its error and
         * ends the job, usually: one line, not one per member */
        if (rs->gone[q] == 1 && mpi_now_ns() - rs->gone_at[q] < FAILED_GRACE_NS) continue;
        if (mr_peer_gone(w->g, rs, q)) {
            w->cause = SSTEP_CAUSE_GONE;
            w->info->peer = q;
            return 1;
        }
    }
    if (w->mode == M_COUNT && !alive) {
        struct sstep_sync_info *info = w->info;
        w->cause = SSTEP_CAUSE_DEADLOCK;
        info->peer = rs->me;
        info->peer_kind = SSTEP_KIND_OBLSYNC;
        info->peer_stamp = w->s;
        info->peer_lo = w->lo;
        info->peer_n = w->n;
        info->peer_arrived = w->count;
        info->peer_expect = w->expect;
        info->report = 1;
        return 1;
    }
    return 0;
}

static int cond_met(struct waitst *w)
{
    struct mpi_range *rs = w->rs;
    if (w->mode != M_COUNT) {
        if (rs->npk != w->seen_pk) take(w);
        return w->missing == 0;
    }
    if (rs->nbatch != w->seen_batch) {
        lpf_pid_t bad;
        w->seen_batch = rs->nbatch;
        w->count = sstep_mailbox_count(w->ctx, w->s, SSTEP_E2, &bad);
        rs->w.arrived = w->count;
        if (bad != LPF_MAX_P) {
            set_mismatch(w, bad, w->s.object, w->s.step, SSTEP_E1);
            return 1;
        }
    }
    return w->count >= w->expect;
}

static void watch(struct waitst *w)
{
    struct mpi_range *rs = w->rs;
    /* by pid (wstate has P entries): the line names the members, not
     * their positions in the member set */
    unsigned char *st = rs->wstate;
    memset(st, SSTEP_ARR_OUT, rs->P);
    for (lpf_pid_t k = 0; k < w->n; ++k) {
        lpf_pid_t q = member_at(w, k);
        if (q == rs->me) st[q] = SSTEP_ARR_YES;
        else if (w->mode != M_COUNT && (w->have[k] || (w->mode == M_REPLY && !w->want[k])))
            st[q] = SSTEP_ARR_YES;
        else st[q] = mr_peer_gone(w->g, rs, q) ? SSTEP_ARR_LEFT : SSTEP_ARR_NOT;
    }
    mpi_watch_range_as(w->ctx, rs->me, &rs->wt, 0, rs->P, st);
}

static void fill_deadlock(struct waitst *w)
{
    const struct rrep *r = &w->rs->verdict;
    struct sstep_sync_info *info = w->info;
    w->cause = SSTEP_CAUSE_DEADLOCK;
    info->peer = r->pid;
    info->peer_kind = r->kind == SSTEP_E2 ? SSTEP_KIND_OBLSYNC : SSTEP_KIND_SYNC;
    info->peer_stamp.object = r->object;
    info->peer_stamp.step = r->step;
    info->peer_lo = r->lo;
    info->peer_n = r->n;
    info->peer_arrived = (size_t)r->arrived;
    info->peer_expect = (size_t)r->expect;
    info->peer_plain = r->plain;
    info->peer_other = r->other;
    info->peer_other_kind = r->other_kind == SSTEP_E2 ? SSTEP_KIND_OBLSYNC : SSTEP_KIND_SYNC;
    info->peer_other_object = r->other_object;
    info->report = r->pid == w->rs->me;
}

static int do_wait(struct waitst *w)
{
    struct mpi_group *g = w->g;
    struct mpi_range *rs = w->rs;
    rs->serial++;
    rs->in_wait = 1;
    rs->w.object = w->s.object;
    rs->w.step = w->s.step;
    rs->w.kind = (uint32_t)w->kind;
    rs->w.lo = w->lo;
    rs->w.n = w->n;
    rs->w.expect = w->expect;
    rs->w.arrived = w->count;
    rs->wt.t0 = 0;
    rs->wt.warned = 0;
    if (rs->cur) {
        /* pid 0: rounds start afresh in every wait */
        rs->open = 0;
        rs->have_prev = 0;
    }
    struct mpi_wait mw;
    mpi_wait_init(&mw, NAP_SYNC_NS);
    const uint64_t t0 = mpi_now_ns();
    uint64_t last_slow = t0;
    int rc = 0;
    for (unsigned it = 0;; ++it) {
        mr_rpoll(g, rs, w->ctx);
        if (cond_met(w)) { rc = w->cause ? W_FAIL : W_DONE; break; }
        if (rs->net) rs->net->serve(rs, &mw, it);
        else mpi_wait_serve(g, &mw, it, 15);
        uint64_t now = mpi_now_ns();
        if (now - last_slow >= SLOW_EVERY_NS) {
            last_slow = now;
            mr_progress_sends(rs);
            if (rs->deadlock) { fill_deadlock(w); rc = W_FAIL; break; }
            const struct sstep_sync_info saved = *w->info;
            if (gone_problem(w) || mismatch(w)) {
                /* complete after all? */
                mr_rpoll(g, rs, w->ctx);
                int c = w->cause;
                w->cause = 0;
                if (cond_met(w) && !w->cause) {
                    *w->info = saved;
                    rc = W_DONE;
                    break;
                }
                if (!w->cause) w->cause = c;
                rc = W_FAIL;
                break;
            }
            if (rs->me == 0) {
                mr_coordinate(g, rs, now - t0, now);
                if (rs->deadlock) { fill_deadlock(w); rc = W_FAIL; break; }
            }
            watch(w);
        }
        mpi_wait_step(&mw);
    }
    rs->in_wait = 0;
    return rc;
}

/* ------------------------------------------------------------------ */
/* E1 and E2                                                            */
/* ------------------------------------------------------------------ */

/* ship the queued messages (a batch per receiver; ours to our mailbox) */
static int ship(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        struct sstep_stamp s, int kind)
{
    const struct sstep_queue *q = &ctx->q;
    if (!(q->kinds & (1u << SSTEP_MSG))) return 0;
    int oom = 0;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t d = q->touched[i];
        struct sstep_batch *b = sstep_batch_build(ctx, d, s, kind, &oom);
        if (oom) return -1;
        if (!b) continue;
        if (d == ctx->pid) {
            sstep_mailbox_put(ctx, b);
            continue;
        }
        uint64_t type = RP_BATCH;
        memcpy((char *)b, &type, 8);   /* the list pointer: not meaningful on the wire */
        mr_rsend(g, rs, d, (char *)b, (size_t)b->bytes, 1);
    }
    return 0;
}

/* the arrival packet for q: our puts to q with their data, our gets from q */
static char *arrival(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        struct sstep_stamp s, uint64_t check, size_t *len)
{
    const struct sstep_queue *qu = &ctx->q;
    const struct sstep_peer_lists *pl = &qu->peers[q];
    size_t pb = 0;
    for (uint32_t i = pl->head[SSTEP_PUT]; i != SSTEP_NIL; i = qu->reqs[i].next)
        pb += sizeof(struct rrec) + ((qu->reqs[i].size + 7) & ~(size_t)7);
    size_t total = sizeof(struct rhdr) + pb + (size_t)pl->count[SSTEP_GET] * sizeof(struct rrec);
    char *b = mr_palloc(g, total);
    struct rhdr h;
    memset(&h, 0, sizeof h);
    h.type = RP_ARRIVE;
    h.object = s.object;
    h.step = s.step;
    h.kind = SSTEP_E1;
    h.flags = check ? RF_CHECK : 0;
    h.check = check;
    h.nput = pl->count[SSTEP_PUT];
    h.nget = pl->count[SSTEP_GET];
    h.put_bytes = pb;
    memcpy(b, &h, sizeof h);
    char *p = b + sizeof h;
    for (uint32_t i = pl->head[SSTEP_PUT]; i != SSTEP_NIL; i = qu->reqs[i].next) {
        const struct sstep_req *r = &qu->reqs[i];
        struct rrec rr = { r->slot, 0, r->off, r->size };
        memcpy(p, &rr, sizeof rr);
        p += sizeof rr;
        if (r->size) memcpy(p, r->local, r->size);
        size_t pad = ((r->size + 7) & ~(size_t)7) - r->size;
        if (pad) memset(p + r->size, 0, pad);
        p += r->size + pad;
    }
    for (uint32_t i = pl->head[SSTEP_GET]; i != SSTEP_NIL; i = qu->reqs[i].next) {
        const struct sstep_req *r = &qu->reqs[i];
        struct rrec rr = { r->slot, 0, r->off, r->size };
        memcpy(p, &rr, sizeof rr);
        p += sizeof rr;
    }
    *len = total;
    return b;
}

static const char *get_name(const struct sstep_ctx *ctx)
{
    return ctx->get_name ? ctx->get_name : "lpf_get";
}

static const char *put_name(const struct sstep_ctx *ctx)
{
    return ctx->put_name ? ctx->put_name : "lpf_put";
}

/* answer the gets q asks of us (read now: before any put lands here) */
static void serve_gets(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t q, const char *pkt, struct sstep_stamp s)
{
    struct rhdr h;
    memcpy(&h, pkt, sizeof h);
    if (!h.nget) return;
    const char *recs = pkt + sizeof h + h.put_bytes;
    size_t total = sizeof(struct rhdr);
    for (uint64_t i = 0; i < h.nget; ++i) {
        struct rrec rr;
        memcpy(&rr, recs + i * sizeof rr, sizeof rr);
        total += (size_t)rr.size;
    }
    char *b = mr_palloc(g, total);
    struct rhdr o;
    memset(&o, 0, sizeof o);
    o.type = RP_REPLY;
    o.object = s.object;
    o.step = s.step;
    o.kind = SSTEP_E1;
    memcpy(b, &o, sizeof o);
    char *p = b + sizeof o;
    for (uint64_t i = 0; i < h.nget; ++i) {
        struct rrec rr;
        memcpy(&rr, recs + i * sizeof rr, sizeof rr);
        const char *from = sstep_resolve_global(ctx, rr.slot, (size_t)rr.off, (size_t)rr.size);
        if (!from) sstep_remote_range_error(ctx, get_name(ctx), q, rr.slot, (size_t)rr.off,
                (size_t)rr.size);
        if (rr.size) memcpy(p, from, (size_t)rr.size);
        p += rr.size;
    }
    mr_rsend(g, rs, q, b, total, 1);
}

static void scatter_reply(struct sstep_ctx *ctx, lpf_pid_t q, const struct pnode *pk)
{
    const struct sstep_queue *qu = &ctx->q;
    const char *p = pk->buf + sizeof(struct rhdr);
    const char *end = pk->buf + pk->len;
    for (uint32_t i = qu->peers[q].head[SSTEP_GET]; i != SSTEP_NIL; i = qu->reqs[i].next) {
        const struct sstep_req *r = &qu->reqs[i];
        if (SSTEP_UNLIKELY((size_t)(end - p) < r->size))
            sstep_fatal(ctx, "sstep_sync_range", "protocol error: short get reply from "
                    "process %u", q);
        sstep_copy(r->local, p, r->size);
        p += r->size;
    }
}

static void apply_puts(struct sstep_ctx *ctx, lpf_pid_t q, const char *pkt)
{
    struct rhdr h;
    memcpy(&h, pkt, sizeof h);
    const char *p = pkt + sizeof h;
    for (uint64_t i = 0; i < h.nput; ++i) {
        struct rrec rr;
        memcpy(&rr, p, sizeof rr);
        p += sizeof rr;
        char *to = sstep_resolve_global(ctx, rr.slot, (size_t)rr.off, (size_t)rr.size);
        if (!to) sstep_remote_range_error(ctx, put_name(ctx), q, rr.slot, (size_t)rr.off,
                (size_t)rr.size);
        sstep_copy(to, p, (size_t)rr.size);
        p += (rr.size + 7) & ~(uint64_t)7;
    }
}

static void free_have(struct pnode **have, lpf_pid_t n)
{
    for (lpf_pid_t k = 0; k < n; ++k) {
        if (!have[k]) continue;
        free(have[k]->buf);
        free(have[k]);
        have[k] = NULL;
    }
}

static lpf_err_t e1(struct waitst *w)
{
    struct mpi_group *g = w->g;
    struct mpi_range *rs = w->rs;
    struct sstep_ctx *ctx = w->ctx;
    struct sstep_sync_info *info = w->info;
    const lpf_pid_t n = w->n, me = ctx->pid, idx = w->idx;
    w->have = calloc(n, sizeof *w->have);
    unsigned char *want = calloc(n, 1);
    if (!w->have || !want) {
        free(w->have);
        free(want);
        return LPF_ERR_OUT_OF_MEMORY;
    }
    int rc = W_FAIL;
    if (ship(g, rs, ctx, w->s, SSTEP_E1)) goto out;
    for (lpf_pid_t k = 1; k < n; ++k) {
        lpf_pid_t q = member_at(w, (idx + k) % n);
        size_t len;
        char *b = arrival(g, ctx, q, w->s, info->check, &len);
        mr_rsend(g, rs, q, b, len, 1);
    }
    /* the barrier: every member's arrival */
    w->mode = M_ARRIVE;
    w->missing = n - 1;
    w->seen_pk = UINT64_MAX;
    if ((rc = do_wait(w)) != W_DONE) goto out;
    int anycheck = info->check != 0;
    for (lpf_pid_t k = 0; k < n; ++k) {
        if (!w->have[k]) continue;
        struct rhdr h;
        memcpy(&h, w->have[k]->buf, sizeof h);
        if (h.flags & RF_CHECK) anycheck = 1;
    }
    if (anycheck) {
        for (lpf_pid_t k = 0; k < n; ++k) {
            if (!w->have[k]) continue;
            struct rhdr h;
            memcpy(&h, w->have[k]->buf, sizeof h);
            if (h.check != info->check) {
                info->mismatch = 1;
                info->peer = member_at(w, k);
                info->peer_check = h.check;
                break;
            }
        }
    }
    /* gets: serve, ours, then the replies to ours */
    for (lpf_pid_t k = 1; k < n; ++k) {
        lpf_pid_t q = member_at(w, (idx + k) % n);
        serve_gets(g, rs, ctx, q, w->have[(idx + k) % n]->buf, w->s);
    }
    const struct sstep_queue *qu = &ctx->q;
    if (qu->peers[me].head[SSTEP_GET] != SSTEP_NIL) mpi_self_gets(ctx);
    lpf_pid_t nrep = 0;
    if (qu->kinds & (1u << SSTEP_GET))
        for (lpf_pid_t k = 0; k < n; ++k)
            if (member_at(w, k) != me && qu->peers[member_at(w, k)].count[SSTEP_GET]) {
                want[k] = 1;
                nrep++;
            }
    if (nrep) {
        struct pnode **arr = w->have;
        struct pnode **reps = calloc(n, sizeof *reps);
        if (!reps) { rc = W_FAIL; goto out; }
        w->have = reps;
        w->want = want;
        w->mode = M_REPLY;
        w->missing = nrep;
        w->seen_pk = UINT64_MAX;
        rc = do_wait(w);
        if (rc == W_DONE)
            for (lpf_pid_t k = 0; k < n; ++k)
                if (want[k]) scatter_reply(ctx, member_at(w, k), reps[k]);
        free_have(reps, n);
        free(reps);
        w->have = arr;
        if (rc != W_DONE) goto out;
    }
    /* puts, source by source, ours last */
    for (lpf_pid_t k = 1; k <= n; ++k) {
        lpf_pid_t q = member_at(w, (idx + k) % n);
        if (q == me) {
            if (qu->peers[me].head[SSTEP_PUT] != SSTEP_NIL) mpi_self_puts(ctx);
            continue;
        }
        apply_puts(ctx, q, w->have[(idx + k) % n]->buf);
    }
    rc = W_DONE;
out:
    free_have(w->have, n);
    free(w->have);
    w->have = NULL;
    free(want);
    return rc == W_DONE ? LPF_SUCCESS : LPF_ERR_FATAL;
}

lpf_err_t mpi_sync_range(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect,
        struct sstep_sync_info *info)
{
    struct mpi_group *g = ctx->group;
    return mr_sync(g, mr_range_of(g), ctx, lo, n, members, stamp, kind, expect, info);
}

lpf_err_t mr_sync(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t lo, lpf_pid_t n, const lpf_pid_t *members, struct sstep_stamp stamp,
        int kind, size_t expect, struct sstep_sync_info *info)
{
    (void)sstep_ext_get(ctx);
    struct waitst w;
    memset(&w, 0, sizeof w);
    w.g = g;
    w.rs = rs;
    w.ctx = ctx;
    w.s = stamp;
    w.kind = kind;
    w.lo = lo;
    w.n = n;
    w.mem = members;
    w.idx = member_idx(&w, ctx->pid);
    w.expect = expect;
    w.info = info;
    rs->w.arrived = 0;
    mr_progress_sends(rs);
    mr_rpoll(g, rs, ctx);
    lpf_err_t rc;
    if (kind == SSTEP_E2) {
        if (ship(g, rs, ctx, stamp, kind)) {
            rc = LPF_ERR_OUT_OF_MEMORY;
            goto fail;
        }
        w.mode = M_COUNT;
        w.seen_batch = UINT64_MAX;
        if (do_wait(&w) != W_DONE) {
            rc = LPF_ERR_FATAL;
            goto fail;
        }
        if (sstep_deliver(ctx, stamp, kind, info)) return LPF_ERR_OUT_OF_MEMORY;
        if (info->cause == SSTEP_CAUSE_MISMATCH) {
            rc = LPF_ERR_FATAL;
            goto fail;
        }
        if (info->cause == SSTEP_CAUSE_OK && info->arrived > expect) {
            info->cause = SSTEP_CAUSE_EXTRA;
            /* the first extra message's source */
            size_t nm;
            const struct sstep_msg *m = sstep_inbox_of(ctx, stamp, &nm);
            if (m && nm > expect) info->peer = m[expect].src;
            return LPF_ERR_FATAL;
        }
        return info->cause == SSTEP_CAUSE_OK ? LPF_SUCCESS : LPF_ERR_FATAL;
    }
    rc = e1(&w);
    if (rc != LPF_SUCCESS) goto fail;
    if (sstep_deliver(ctx, stamp, kind, info)) return LPF_ERR_OUT_OF_MEMORY;
    if (info->cause == SSTEP_CAUSE_MISMATCH) {
        rc = LPF_ERR_FATAL;
        goto fail;
    }
    return info->cause == SSTEP_CAUSE_OK ? LPF_SUCCESS : LPF_ERR_FATAL;
fail:
    if (w.cause) info->cause = w.cause;
    /* we leave the section's range syncs: members waiting for us fail */
    if (!rs->failed) {
        rs->failed = 1;
        mr_send_gone(g, rs, 0);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Leaving the section                                                  */
/* ------------------------------------------------------------------ */

int mpi_range_depart(struct mpi_group *g)
{
    struct mpi_range *rs = g->range;
    if (!rs) return 0;
    rs->leaving = 1;
    mr_progress_sends(rs);
    if (!rs->sent_any) return 0;
    mr_send_gone(g, rs, RF_FINAL);
    return 1;
}

void mpi_range_need(struct mpi_group *g, lpf_pid_t q)
{
    struct mpi_range *rs = mr_range_of(g);
    rs->leaving = 1;
    rs->need[q] = 1;
}

void mpi_range_drain(struct mpi_group *g)
{
    struct mpi_range *rs = g->range;
    if (!rs) return;
    struct mpi_wait mw;
    mpi_wait_init(&mw, NAP_SYNC_NS);
    for (unsigned it = 0;; ++it) {
        int done = 1;
        for (lpf_pid_t q = 0; q < rs->P; ++q)
            if (rs->need[q] && !rs->fin[q]) {
                mr_rpoll_from(g, rs, g->ctx, (int)q);
                if (!rs->fin[q]) done = 0;
            }
        mr_progress_sends(rs);
        if (done && rs->ns == 0) break;
        mpi_wait_serve(g, &mw, it, 15);
        mpi_wait_step(&mw);
    }
    mr_range_free(rs);
    g->range = NULL;
}

/* ------------------------------------------------------------------ */
/* Ordinary syncs in the deadlock detection                             */
/* ------------------------------------------------------------------ */

/* Called now and then by the waits of an ordinary sync (with the
 * watchdog). In a section that has used range syncs, a wait of 0.1 s or
 * more takes part in E4: during the call this process answers probes as
 * blocked in kind MR_PLAIN (pid 0 runs the rounds). An ordinary sync
 * cannot complete while any process waits in E1/E2, so every process
 * blocked, one at least in E1/E2 and nothing in flight is a deadlock: one
 * process in an ordinary sync and another in a zero-cost, tagged or PUB
 * sync of the same superstep. The verdict names a range waiter, which
 * reports; this process waits to be ended. */
void mr_plain_tick(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        uint64_t key)
{
    if (!rs || rs->leaving || rs->failed || !ctx) return;
    const uint64_t now = mpi_now_ns();
    if (!rs->plain_on || rs->plain_ep != key) {
        rs->plain_on = 1;
        rs->plain_in = 0;
        rs->plain_ep = key;
        rs->plain_t0 = now;
        return;
    }
    if (now - rs->plain_t0 < BLOCKED_NS) return;
    if (!rs->plain_in) {
        rs->plain_in = 1;
        rs->serial++;
        memset(&rs->w, 0, sizeof rs->w);
        rs->w.kind = MR_PLAIN;
        rs->w.n = rs->P;
        if (rs->cur) {
            rs->open = 0;
            rs->have_prev = 0;
        }
    }
    rs->in_wait = 1;
    mr_rpoll(g, rs, ctx);
    if (!rs->net) mr_progress_sends(rs);
    if (rs->me == 0 && !rs->deadlock) mr_coordinate(g, rs, now - rs->plain_t0, now);
    rs->in_wait = 0;
    if (rs->deadlock) {
        /* a range waiter reports and ends the run */
        for (int i = 0; i < 100; ++i) {
            struct timespec ts = { 0, 50000000 };
            nanosleep(&ts, NULL);
            if (!rs->net) mr_progress_sends(rs);
        }
    }
}

void mpi_range_plain_tick(struct mpi_group *g)
{
    struct mpi_range *rs = g->range;
    if (!rs) return;
    /* the hybrid engine's rank level (by_mpi) only carries its threads'
     * packets: the thread in this sync (its leader) takes part itself */
    if (rs->by_mpi) {
        if (g->ctx && g->ctx->rank_thread_arg)
            hy_rank_plain_tick(g->ctx, g->episode | (1ull << 63));
        return;
    }
    mr_plain_tick(g, rs, g->ctx, g->episode);
}
