/*
 * The MPI engine's PUB extensions, the transport (mpi_range.c has the
 * protocol and the waits): the per-section state, sending packets and
 * progressing the sends, receiving and dispatching what arrives, peers
 * gone, and pid 0's quiescence rounds for E4.
 */
#define _GNU_SOURCE
#include "mpi_range_internal.h"

/* ------------------------------------------------------------------ */
/* State                                                                */
/* ------------------------------------------------------------------ */

void mr_range_free(struct mpi_range *rs)
{
    if (!rs) return;
    for (struct pnode *p = rs->early, *n; p; p = n) {
        n = p->next;
        free(p->buf);
        free(p);
    }
    for (size_t i = 0; i < rs->ns; ++i) free(rs->sbuf[i]);
    free(rs->sreq);
    free(rs->sbuf);
    free(rs->sent);
    free(rs->recv);
    free(rs->gone);
    free(rs->gone_at);
    free(rs->fin);
    free(rs->need);
    free(rs->answered);
    free(rs->cur);
    free(rs->prev);
    free(rs->insum);
    free(rs->gone_sent);
    free(rs->counted);
    free(rs->wstate);
    free(rs);
}

struct mpi_range *mr_range_new(struct sstep_ctx *ctx, lpf_pid_t P, lpf_pid_t me)
{
    struct mpi_range *rs = calloc(1, sizeof *rs);
    if (rs) {
        rs->P = P;
        rs->me = me;
        rs->sent = calloc(P, sizeof *rs->sent);
        rs->recv = calloc(P, sizeof *rs->recv);
        rs->gone = calloc(P, 1);
        rs->gone_at = calloc(P, sizeof *rs->gone_at);
        rs->fin = calloc(P, 1);
        rs->need = calloc(P, 1);
        rs->wstate = calloc(P, 1);
    }
    if (!rs || !rs->sent || !rs->recv || !rs->gone || !rs->gone_at || !rs->fin || !rs->need || !rs->wstate)
        sstep_fatal(ctx, "sstep_sync_range", "out of memory (range state)");
    return rs;
}

struct mpi_range *mr_range_of(struct mpi_group *g)
{
    if (SSTEP_LIKELY(g->range != NULL)) return g->range;
    g->range = mr_range_new(g->ctx, g->P, g->pid);
    /* the hybrid engine's rank level receives its range packets itself,
     * from MPI (hy_range.c) */
    g->range->by_mpi = sstep_mpi.hybrid_T != 0;
    return g->range;
}

/* ------------------------------------------------------------------ */
/* Sending                                                              */
/* ------------------------------------------------------------------ */

void mr_progress_sends(struct mpi_range *rs)
{
    if (!rs->ns) return;   /* another transport (rs->net) keeps none */
    size_t k = 0;
    for (size_t i = 0; i < rs->ns; ++i) {
        int done = 0;
        MPI_Test(&rs->sreq[i], &done, MPI_STATUS_IGNORE);
        if (done) {
            free(rs->sbuf[i]);
            continue;
        }
        rs->sreq[k] = rs->sreq[i];
        rs->sbuf[k] = rs->sbuf[i];
        k++;
    }
    rs->ns = k;
}

/* send buf (malloc'ed, freed once sent) to q; data: counts for E4 */
void mr_rsend(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q, char *buf, size_t len,
        int data)
{
    if (rs->net) {
        rs->net->send(rs, q, buf, len);
        rs->sent_any = 1;
        if (data) {
            rs->sent[q]++;
            rs->sent_total++;
        }
        return;
    }
    const int ring = !rs->by_mpi && g->shm && g->shm->ring;
    if (ring && mr_ring_put(g, q, buf, len)) {
        free(buf);
        rs->sent_any = 1;
        if (data) {
            rs->sent[q]++;
            rs->sent_total++;
        }
        return;
    }
    if (SSTEP_UNLIKELY(len > (size_t)INT_MAX))
        sstep_fatal(g->ctx, "sstep_sync_range", "a range packet of %zu bytes to process %u "
                "exceeds the MPI engine's limit of %d bytes", len, q, INT_MAX);
    if (rs->ns == rs->scap) {
        size_t c = rs->scap ? 2 * rs->scap : 32;
        MPI_Request *r = realloc(rs->sreq, c * sizeof *r);
        if (r) rs->sreq = r;
        char **b = realloc(rs->sbuf, c * sizeof *b);
        if (b) rs->sbuf = b;
        if (!r || !b) sstep_fatal(g->ctx, "sstep_sync_range", "out of memory (send list)");
        rs->scap = c;
    }
    MPI_Isend(buf, (int)len, MPI_BYTE, (int)q, T_RANGE, g->comm, &rs->sreq[rs->ns]);
    rs->sbuf[rs->ns++] = buf;
    if (ring) mr_ring_by_mpi(g, q);
    rs->sent_any = 1;
    if (data) {
        rs->sent[q]++;
        rs->sent_total++;
    }
}

char *mr_palloc(struct mpi_group *g, size_t n)
{
    char *p = malloc(n ? n : 1);
    if (!p) sstep_fatal(g->ctx, "sstep_sync_range", "out of memory (a %zu-byte range packet)", n);
    return p;
}

/* our state and sent vector: GONE and ANSWER packets */
static char *state_packet(struct mpi_group *g, struct mpi_range *rs, uint32_t type,
        uint32_t flags, uint64_t round, size_t *len)
{
    *len = sizeof(struct rhdr) + sizeof(struct rrep) + (size_t)rs->P * 8;
    char *b = mr_palloc(g, *len);
    struct rhdr h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.flags = flags;
    memcpy(b, &h, sizeof h);
    struct rrep r = rs->w;
    r.round = round;
    r.in_wait = (uint64_t)rs->in_wait;
    r.serial = rs->serial;
    r.sent_total = rs->sent_total;
    r.recv_total = rs->recv_total;
    r.pid = rs->me;
    memcpy(b + sizeof h, &r, sizeof r);
    memcpy(b + sizeof h + sizeof r, rs->sent, (size_t)rs->P * 8);
    return b;
}

void mr_send_gone(struct mpi_group *g, struct mpi_range *rs, uint32_t flags)
{
    for (lpf_pid_t q = 0; q < rs->P; ++q) {
        if (q == rs->me) continue;
        size_t len;
        char *b = state_packet(g, rs, RP_GONE, flags, 0, &len);
        mr_rsend(g, rs, q, b, len, 0);
    }
}

/* ------------------------------------------------------------------ */
/* Receiving                                                            */
/* ------------------------------------------------------------------ */

static void note_gone(struct mpi_range *rs, lpf_pid_t q, const char *buf, size_t len, int final)
{
    if (final) {
        rs->gone[q] = 2;
    } else if (!rs->gone[q]) {
        rs->gone[q] = 1;
        rs->gone_at[q] = mpi_now_ns();
    }
    if (rs->me != 0 || !rs->gone_sent || rs->counted[q]) return;
    if (len < sizeof(struct rhdr) + sizeof(struct rrep) + (size_t)rs->P * 8) return;
    const char *v = buf + sizeof(struct rhdr) + sizeof(struct rrep);
    for (lpf_pid_t d = 0; d < rs->P; ++d) {
        uint64_t x;
        memcpy(&x, v + (size_t)d * 8, 8);
        rs->gone_sent[d] += x;
    }
    rs->counted[q] = 1;
}

static void answer(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q, uint64_t round)
{
    size_t len;
    char *b = state_packet(g, rs, RP_ANSWER, 0, round, &len);
    mr_rsend(g, rs, q, b, len, 0);
}

static void take_answer(struct mpi_range *rs, lpf_pid_t q, const char *buf, size_t len)
{
    if (rs->me != 0 || !rs->open || !rs->cur) return;
    if (len < sizeof(struct rhdr) + sizeof(struct rrep) + (size_t)rs->P * 8) return;
    struct rrep r;
    memcpy(&r, buf + sizeof(struct rhdr), sizeof r);
    if (r.round != rs->round || rs->answered[q]) return;
    rs->answered[q] = 1;
    rs->cur[q] = r;
    const char *v = buf + sizeof(struct rhdr) + sizeof r;
    for (lpf_pid_t d = 0; d < rs->P; ++d) {
        uint64_t x;
        memcpy(&x, v + (size_t)d * 8, 8);
        rs->insum[d] += x;
    }
}

void mr_dispatch(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t q, char *buf, size_t len)
{
    uint64_t type = 0;
    if (len >= 8) memcpy(&type, buf, 8);
    type &= 0xffffffffu;   /* the hybrid engine routes by the upper half */
    switch (type) {
    case RP_BATCH: {
        rs->recv[q]++;
        rs->recv_total++;
        struct sstep_batch *b = (struct sstep_batch *)buf;
        if (len < sizeof *b || b->bytes != len)
            sstep_fatal(ctx, "sstep_sync_range", "protocol error: a bad message batch from "
                    "process %u", q);
        b->next = NULL;
        sstep_mailbox_put(ctx, b);
        rs->nbatch++;
        return;
    }
    case RP_ARRIVE:
    case RP_REPLY: {
        rs->recv[q]++;
        rs->recv_total++;
        struct pnode *p = malloc(sizeof *p);
        if (!p) sstep_fatal(ctx, "sstep_sync_range", "out of memory");
        p->buf = buf;
        p->len = len;
        p->src = q;
        p->next = rs->early;
        rs->early = p;
        rs->npk++;
        return;
    }
    case RP_GONE: {
        struct rhdr h;
        memcpy(&h, buf, sizeof h);
        note_gone(rs, q, buf, len, (h.flags & (RF_FINAL | RF_LEFT)) != 0);
        if (h.flags & RF_FINAL) rs->fin[q] = 1;
        break;
    }
    case RP_PROBE: {
        struct rhdr h;
        memcpy(&h, buf, sizeof h);
        if (!rs->leaving && !rs->failed) answer(g, rs, q, h.step);
        break;
    }
    case RP_ANSWER:
        take_answer(rs, q, buf, len);
        break;
    case RP_VERDICT:
        if (len >= sizeof(struct rhdr) + sizeof(struct rrep) && !rs->deadlock) {
            memcpy(&rs->verdict, buf + sizeof(struct rhdr), sizeof rs->verdict);
            rs->deadlock = 1;
        }
        break;
    default:
        sstep_fatal(ctx, "sstep_sync_range", "protocol error: an unknown range packet from "
                "process %u", q);
    }
    free(buf);
}

/* receive every range packet from src that is there (src: a pid, or
 * MPI_ANY_SOURCE while the section runs) */
void mr_rpoll_from(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx, int src)
{
    if (rs->net) {
        rs->net->poll(rs, ctx);
        return;
    }
    if (!rs->by_mpi && g->shm && g->shm->ring) {
        mr_ring_poll(g, rs, ctx, src);
        return;
    }
    for (;;) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_Improbe(src, T_RANGE, g->comm, &flag, &m, &st);
        if (!flag) return;
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        char *buf = mr_palloc(g, (size_t)cnt);
        MPI_Mrecv(buf, cnt, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        mr_dispatch(g, rs, ctx, (lpf_pid_t)st.MPI_SOURCE, buf, (size_t)cnt);
        /* after its final packet a peer may be in the next section on
         * this communicator: what follows is not ours */
        if (src != MPI_ANY_SOURCE && rs->fin[src]) return;
    }
}

void mr_rpoll(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx)
{
    mr_rpoll_from(g, rs, ctx, MPI_ANY_SOURCE);
}

/* q has left the section or failed. A process that sent range packets is
 * gone only by its GONE packet (which follows all of them); one that sent
 * none, by the section's "gone" header or arrival word. */
int mr_peer_gone(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q)
{
    if (rs->gone[q]) return 1;
    if (rs->net) return rs->net->gone(rs, q);
    if (g->shm) {
        const struct shm_line *l = line_of(g, q);
        uint64_t v = atomic_load_explicit(&l->word[0], memory_order_acquire);
        uint64_t vg = v >> 40, mine = g->gen & 0xffffffu;
        if ((vg == mine && (v & W_GONE)) || vg == ((g->gen + 1) & 0xffffffu))
            return !l->final_range[(int)(g->gen & 1)];
        return 0;
    }
    if (g->sparse) return mpi_sparse_gone(g, q);   /* no "gone" header: ask */
    if (!g->got[q] && g->rfirst[q] != MPI_REQUEST_NULL) {
        int flag = 0;
        MPI_Test(&g->rfirst[q], &flag, MPI_STATUS_IGNORE);
        if (flag) g->got[q] = 1;
    }
    if (g->got[q] == 1) {
        const struct fhdr *h = (const struct fhdr *)first_buf(g, (int)(g->episode & 1), q);
        if (h->flags & H_GONE) return !(h->flags & H_RANGE);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* E4: pid 0's rounds                                                   */
/* ------------------------------------------------------------------ */

static void rounds_alloc(struct mpi_group *g, struct mpi_range *rs)
{
    if (rs->cur) return;
    const lpf_pid_t P = rs->P;
    rs->answered = calloc(P, 1);
    rs->cur = calloc(P, sizeof *rs->cur);
    rs->prev = calloc(P, sizeof *rs->prev);
    rs->insum = calloc(P, sizeof *rs->insum);
    rs->gone_sent = calloc(P, sizeof *rs->gone_sent);
    rs->counted = calloc(P, 1);
    if (!rs->answered || !rs->cur || !rs->prev || !rs->insum || !rs->gone_sent || !rs->counted)
        sstep_fatal(g->ctx, "sstep_sync_range", "out of memory (deadlock detection)");
}

static void round_start(struct mpi_group *g, struct mpi_range *rs, uint64_t now)
{
    rs->round++;
    rs->open = 1;
    rs->t_round = now;
    memset(rs->answered, 0, rs->P);
    memset(rs->insum, 0, (size_t)rs->P * sizeof *rs->insum);
    /* our own answer: now, while the probes leave */
    struct rrep r = rs->w;
    r.round = rs->round;
    r.in_wait = (uint64_t)rs->in_wait;
    r.serial = rs->serial;
    r.sent_total = rs->sent_total;
    r.recv_total = rs->recv_total;
    r.pid = 0;
    rs->cur[0] = r;
    rs->answered[0] = 1;
    for (lpf_pid_t d = 0; d < rs->P; ++d) rs->insum[d] += rs->sent[d];
    for (lpf_pid_t q = 1; q < rs->P; ++q) {
        if (mr_peer_gone(g, rs, q)) continue;
        char *b = mr_palloc(g, sizeof(struct rhdr));
        struct rhdr h;
        memset(&h, 0, sizeof h);
        h.type = RP_PROBE;
        h.step = rs->round;
        memcpy(b, &h, sizeof h);
        mr_rsend(g, rs, q, b, sizeof h, 0);
    }
}

/* a complete round: deadlock? */
static void round_judge(struct mpi_group *g, struct mpi_range *rs)
{
    const lpf_pid_t P = rs->P;
    uint64_t ngone = 0;
    int ok = 1;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q && mr_peer_gone(g, rs, q)) { ngone++; continue; }
        const struct rrep *c = &rs->cur[q];
        if (!c->in_wait) ok = 0;
        if (!rs->have_prev) { ok = 0; continue; }
        const struct rrep *p = &rs->prev[q];
        if (!p->in_wait || p->serial != c->serial || p->sent_total != c->sent_total
                || p->recv_total != c->recv_total)
            ok = 0;
    }
    if (ok && ngone != rs->ngone_prev) ok = 0;
    if (ok) {
        for (lpf_pid_t d = 0; d < P && ok; ++d) {
            if (d && mr_peer_gone(g, rs, d)) continue;
            if (rs->insum[d] + rs->gone_sent[d] != rs->cur[d].recv_total) ok = 0;
        }
    }
    /* this round becomes the previous one */
    struct rrep *t = rs->prev;
    rs->prev = rs->cur;
    rs->cur = t;
    rs->have_prev = 1;
    rs->ngone_prev = ngone;
    rs->open = 0;
    if (!ok) return;
    /* the report: the lowest pid blocked in E2, else the lowest blocked in
     * E1; beside it one process in an ordinary sync and one in another
     * range wait. Every process in an ordinary sync: no deadlock of ours
     * (that barrier completes) */
    const struct rrep *pick = NULL, *first = NULL;
    uint32_t plain = 0;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q && mr_peer_gone(g, rs, q)) continue;
        const struct rrep *c = &rs->prev[q];
        if (c->kind == MR_PLAIN) {
            if (!plain) plain = q + 1;
            continue;
        }
        if (!first) first = c;
        if (c->kind == SSTEP_E2 && !pick) pick = c;
    }
    if (!pick) pick = first;
    if (!pick) return;
    rs->verdict = *pick;
    rs->verdict.plain = plain;
    rs->verdict.other = 0;
    for (lpf_pid_t q = 0; q < P && !rs->verdict.other; ++q) {
        if (q && mr_peer_gone(g, rs, q)) continue;
        const struct rrep *c = &rs->prev[q];
        if (c == pick || c->kind == MR_PLAIN
                || (c->object == pick->object && c->kind == pick->kind))
            continue;
        rs->verdict.other = q + 1;
        rs->verdict.other_kind = c->kind;
        rs->verdict.other_object = c->object;
    }
    rs->deadlock = 1;
    for (lpf_pid_t q = 1; q < P; ++q) {
        if (mr_peer_gone(g, rs, q)) continue;
        size_t len = sizeof(struct rhdr) + sizeof(struct rrep);
        char *b = mr_palloc(g, len);
        struct rhdr h;
        memset(&h, 0, sizeof h);
        h.type = RP_VERDICT;
        memcpy(b, &h, sizeof h);
        memcpy(b + sizeof h, &rs->verdict, sizeof rs->verdict);
        mr_rsend(g, rs, q, b, len, 0);
    }
}

void mr_coordinate(struct mpi_group *g, struct mpi_range *rs, uint64_t waited, uint64_t now)
{
    if (waited < BLOCKED_NS || rs->deadlock) return;
    rounds_alloc(g, rs);
    if (rs->open) {
        for (lpf_pid_t q = 1; q < rs->P; ++q)
            if (!rs->answered[q] && !mr_peer_gone(g, rs, q)) return;
        round_judge(g, rs);
        return;
    }
    if (now - rs->t_round >= ROUND_GAP_NS) round_start(g, rs, now);
}

