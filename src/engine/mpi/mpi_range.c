/*
 * The MPI engine's PUB extensions (pub.md §12.2): E1 (sync over a range of
 * pids, matched by stamp), E2 (oblivious sync) and E4 (no hang). The core's
 * part (checks, batches, mailboxes, deliveries, scopes) is src/core/pubext.c.
 *
 * Every packet travels on the section communicator with tag T_RANGE and is
 * received with MPI_Improbe/MPI_Mrecv into memory of its own; its first 8
 * bytes say what it is. Packets are kept until the E1/E2 they belong to
 * takes them (early ones wait, by stamp). MPI's non-overtaking order (one
 * sender, one tag) is what the protocol relies on: whatever a process sent
 * before a packet is there when that packet is.
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
#include "mpi_group.h"
#include "../../core/pubext_internal.h"

#include <limits.h>

#define BLOCKED_NS 100000000ull     /* pid 0 starts rounds after 0.1 s */
#define ROUND_GAP_NS 50000000ull    /* rounds at least this far apart */
#define SLOW_EVERY_NS 1000000ull    /* slow-path checks at most this often */
#define FAILED_GRACE_NS 1000000000ull /* a member that failed (and has not left):
                                         its error usually ends the job first */

enum {
    RP_BATCH = 0x52420001u, RP_ARRIVE, RP_REPLY, RP_GONE, RP_PROBE, RP_ANSWER, RP_VERDICT
};

struct rhdr {
    uint64_t type;
    uint64_t object, step;
    uint32_t kind, flags;
    uint64_t check;
    uint64_t nput, nget;
    uint64_t put_bytes;
};
_Static_assert(sizeof(struct rhdr) == 64, "range packet header is 64 bytes");

#define RF_CHECK 1u      /* ARRIVE: the sender's check is nonzero */
#define RF_FINAL 2u      /* GONE: the sender left the section: its last packet */

/* put and get records of an ARRIVE: a put's data follows, padded to 8 */
struct rrec {
    uint32_t slot, pad_;
    uint64_t off, size;
};

/* ANSWER, VERDICT, GONE: a process's state (ANSWER, GONE: its sent
 * vector [P] follows) */
struct rrep {
    uint64_t round, in_wait, serial, sent_total, recv_total;
    uint64_t object, step, arrived, expect;
    uint32_t kind, lo, n, pid;
};

struct pnode {
    struct pnode *next;
    char *buf;
    size_t len;
    lpf_pid_t src;
};

struct mpi_range {
    lpf_pid_t P, me;
    uint64_t *sent, *recv;         /* [P] data packets to / from each process */
    uint64_t sent_total, recv_total;
    int sent_any;                  /* any packet sent: a final GONE is due */
    int failed;                    /* a GONE was sent */
    int leaving;
    unsigned char *gone;           /* [P] GONE received (1: failed, 2: left) */
    uint64_t *gone_at;             /* [P] when a failure GONE came */
    unsigned char *fin;            /* [P] final GONE received */
    unsigned char *need;           /* [P] a final GONE is announced */
    struct pnode *early;           /* ARRIVE and REPLY packets not taken */
    uint64_t npk, nbatch;          /* packets kept / batches received so far */
    MPI_Request *sreq;             /* open sends and their buffers */
    char **sbuf;
    size_t ns, scap;
    /* the wait in progress (for ANSWERs) */
    int in_wait;
    uint64_t serial;
    struct rrep w;
    /* the verdict */
    int deadlock;
    struct rrep verdict;
    /* pid 0: the rounds */
    uint64_t round;
    int open;
    uint64_t t_round;
    int have_prev;
    uint64_t ngone_prev;
    unsigned char *answered;       /* [P] */
    struct rrep *cur, *prev;       /* [P] */
    uint64_t *insum;               /* [P] this round: packets sent to each */
    uint64_t *gone_sent;           /* [P] the same from gone processes */
    unsigned char *counted;        /* [P] gone process counted in gone_sent */
    struct mpi_watch wt;
    unsigned char *wstate;         /* [P] watchdog scratch */
};

/* ------------------------------------------------------------------ */
/* State                                                                */
/* ------------------------------------------------------------------ */

static void range_free(struct mpi_range *rs)
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

static struct mpi_range *range_of(struct mpi_group *g)
{
    if (SSTEP_LIKELY(g->range != NULL)) return g->range;
    const lpf_pid_t P = g->P;
    struct mpi_range *rs = calloc(1, sizeof *rs);
    if (rs) {
        rs->P = P;
        rs->me = g->pid;
        rs->sent = calloc(P, sizeof *rs->sent);
        rs->recv = calloc(P, sizeof *rs->recv);
        rs->gone = calloc(P, 1);
        rs->gone_at = calloc(P, sizeof *rs->gone_at);
        rs->fin = calloc(P, 1);
        rs->need = calloc(P, 1);
        rs->wstate = calloc(P, 1);
    }
    if (!rs || !rs->sent || !rs->recv || !rs->gone || !rs->gone_at || !rs->fin || !rs->need || !rs->wstate)
        sstep_fatal(g->ctx, "sstep_sync_range", "out of memory (range state)");
    g->range = rs;
    return rs;
}

/* ------------------------------------------------------------------ */
/* Sending                                                              */
/* ------------------------------------------------------------------ */

static void progress_sends(struct mpi_range *rs)
{
    if (!rs->ns) return;
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
static void rsend(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q, char *buf, size_t len,
        int data)
{
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
    rs->sent_any = 1;
    if (data) {
        rs->sent[q]++;
        rs->sent_total++;
    }
}

static char *palloc(struct mpi_group *g, size_t n)
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
    char *b = palloc(g, *len);
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

static void send_gone(struct mpi_group *g, struct mpi_range *rs, int final)
{
    for (lpf_pid_t q = 0; q < rs->P; ++q) {
        if (q == rs->me) continue;
        size_t len;
        char *b = state_packet(g, rs, RP_GONE, final ? RF_FINAL : 0, 0, &len);
        rsend(g, rs, q, b, len, 0);
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
    rsend(g, rs, q, b, len, 0);
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

static void dispatch(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t q, char *buf, size_t len)
{
    uint64_t type = 0;
    if (len >= 8) memcpy(&type, buf, 8);
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
        note_gone(rs, q, buf, len, (h.flags & RF_FINAL) != 0);
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
static void rpoll_from(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx, int src)
{
    for (;;) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_Improbe(src, T_RANGE, g->comm, &flag, &m, &st);
        if (!flag) return;
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        char *buf = palloc(g, (size_t)cnt);
        MPI_Mrecv(buf, cnt, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        dispatch(g, rs, ctx, (lpf_pid_t)st.MPI_SOURCE, buf, (size_t)cnt);
        /* after its final packet a peer may be in the next section on
         * this communicator: what follows is not ours */
        if (src != MPI_ANY_SOURCE && rs->fin[src]) return;
    }
}

static void rpoll(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx)
{
    rpoll_from(g, rs, ctx, MPI_ANY_SOURCE);
}

/* q has left the section or failed. A process that sent range packets is
 * gone only by its GONE packet (which follows all of them); one that sent
 * none, by the section's "gone" header or arrival word. */
static int peer_gone(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q)
{
    if (rs->gone[q]) return 1;
    if (g->shm) {
        const struct shm_line *l = line_of(g, q);
        uint64_t v = atomic_load_explicit(&l->word[0], memory_order_acquire);
        uint64_t vg = v >> 40, mine = g->gen & 0xffffffu;
        if ((vg == mine && (v & W_GONE)) || vg == ((g->gen + 1) & 0xffffffu))
            return !l->final_range[(int)(g->gen & 1)];
        return 0;
    }
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
        if (peer_gone(g, rs, q)) continue;
        char *b = palloc(g, sizeof(struct rhdr));
        struct rhdr h;
        memset(&h, 0, sizeof h);
        h.type = RP_PROBE;
        h.step = rs->round;
        memcpy(b, &h, sizeof h);
        rsend(g, rs, q, b, sizeof h, 0);
    }
}

/* a complete round: deadlock? */
static void round_judge(struct mpi_group *g, struct mpi_range *rs)
{
    const lpf_pid_t P = rs->P;
    uint64_t ngone = 0;
    int ok = 1;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q && peer_gone(g, rs, q)) { ngone++; continue; }
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
            if (d && peer_gone(g, rs, d)) continue;
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
    /* the report: the lowest pid blocked in E2, else the lowest blocked */
    const struct rrep *pick = NULL, *first = NULL;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q && peer_gone(g, rs, q)) continue;
        const struct rrep *c = &rs->prev[q];
        if (!first) first = c;
        if (c->kind == SSTEP_E2) { pick = c; break; }
    }
    if (!pick) pick = first;
    rs->verdict = *pick;
    rs->deadlock = 1;
    for (lpf_pid_t q = 1; q < P; ++q) {
        if (peer_gone(g, rs, q)) continue;
        size_t len = sizeof(struct rhdr) + sizeof(struct rrep);
        char *b = palloc(g, len);
        struct rhdr h;
        memset(&h, 0, sizeof h);
        h.type = RP_VERDICT;
        memcpy(b, &h, sizeof h);
        memcpy(b + sizeof h, &rs->verdict, sizeof rs->verdict);
        rsend(g, rs, q, b, len, 0);
    }
}

static void coordinate(struct mpi_group *g, struct mpi_range *rs, uint64_t waited, uint64_t now)
{
    if (waited < BLOCKED_NS || rs->deadlock) return;
    rounds_alloc(g, rs);
    if (rs->open) {
        for (lpf_pid_t q = 1; q < rs->P; ++q)
            if (!rs->answered[q] && !peer_gone(g, rs, q)) return;
        round_judge(g, rs);
        return;
    }
    if (now - rs->t_round >= ROUND_GAP_NS) round_start(g, rs, now);
}

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
    size_t expect;
    int mode;
    struct pnode **have;          /* [n] the packet of each member (ARRIVE, REPLY) */
    const unsigned char *want;    /* [n] M_REPLY: a reply is due from lo+k */
    lpf_pid_t missing;
    uint64_t seen_pk, seen_batch;
    size_t count;                 /* M_COUNT */
    struct sstep_sync_info *info;
    int cause;
};

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
        lpf_pid_t k = p->src - w->lo;
        if (h.type == type && stamp_is(&h, w->s) && p->src >= w->lo && k < w->n
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
    return q >= w->lo && q - w->lo < w->n;
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
        if (w->kind == SSTEP_E1 && h.step > w->s.step && !w->have[p->src - w->lo]) {
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
    pthread_mutex_lock(&m->lock);
    for (const struct sstep_batch *b = m->head; b; b = b->next) {
        if (b->object != w->s.object || !in_range(w, b->src) || w->have[b->src - w->lo]) continue;
        if (b->step > w->s.step || (b->step == w->s.step && b->kind != SSTEP_E1)) {
            set_mismatch(w, b->src, b->object, b->step, (int)b->kind);
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

/* a member gone: 1 (cause set). E2: every other member gone and too few
 * messages: deadlock (nobody can send any more). */
static int gone_problem(struct waitst *w)
{
    struct mpi_range *rs = w->rs;
    lpf_pid_t alive = 0;
    for (lpf_pid_t k = 0; k < w->n; ++k) {
        lpf_pid_t q = w->lo + k;
        if (q == rs->me) continue;
        if (w->mode == M_COUNT) {
            if (!peer_gone(w->g, rs, q)) alive++;
            continue;
        }
        if (w->have[k] || (w->mode == M_REPLY && !w->want[k])) continue;
        /* a member that failed in its own range sync prints its error and
         * ends the job, usually: one line, not one per member */
        if (rs->gone[q] == 1 && mpi_now_ns() - rs->gone_at[q] < FAILED_GRACE_NS) continue;
        if (peer_gone(w->g, rs, q)) {
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
    unsigned char *st = rs->wstate;
    for (lpf_pid_t k = 0; k < w->n; ++k) {
        lpf_pid_t q = w->lo + k;
        if (q == rs->me) st[k] = SSTEP_ARR_YES;
        else if (w->mode != M_COUNT && (w->have[k] || (w->mode == M_REPLY && !w->want[k])))
            st[k] = SSTEP_ARR_YES;
        else st[k] = peer_gone(w->g, rs, q) ? SSTEP_ARR_LEFT : SSTEP_ARR_NOT;
    }
    mpi_watch_range(w->g, &rs->wt, w->lo, w->n, st);
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
        rpoll(g, rs, w->ctx);
        if (cond_met(w)) { rc = w->cause ? W_FAIL : W_DONE; break; }
        mpi_wait_serve(g, &mw, it, 15);
        uint64_t now = mpi_now_ns();
        if (now - last_slow >= SLOW_EVERY_NS) {
            last_slow = now;
            progress_sends(rs);
            if (rs->deadlock) { fill_deadlock(w); rc = W_FAIL; break; }
            const struct sstep_sync_info saved = *w->info;
            if (gone_problem(w) || mismatch(w)) {
                /* complete after all? */
                rpoll(g, rs, w->ctx);
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
                coordinate(g, rs, now - t0, now);
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
        rsend(g, rs, d, (char *)b, (size_t)b->bytes, 1);
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
    char *b = palloc(g, total);
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
    char *b = palloc(g, total);
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
    rsend(g, rs, q, b, total, 1);
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
    const lpf_pid_t lo = w->lo, n = w->n, me = ctx->pid;
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
        lpf_pid_t q = lo + (me - lo + k) % n;
        size_t len;
        char *b = arrival(g, ctx, q, w->s, info->check, &len);
        rsend(g, rs, q, b, len, 1);
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
                info->peer = lo + k;
                info->peer_check = h.check;
                break;
            }
        }
    }
    /* gets: serve, ours, then the replies to ours */
    for (lpf_pid_t k = 1; k < n; ++k) {
        lpf_pid_t q = lo + (me - lo + k) % n;
        serve_gets(g, rs, ctx, q, w->have[q - lo]->buf, w->s);
    }
    const struct sstep_queue *qu = &ctx->q;
    if (qu->peers[me].head[SSTEP_GET] != SSTEP_NIL) mpi_self_gets(ctx);
    lpf_pid_t nrep = 0;
    if (qu->kinds & (1u << SSTEP_GET))
        for (lpf_pid_t k = 0; k < n; ++k)
            if (lo + k != me && qu->peers[lo + k].count[SSTEP_GET]) {
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
                if (want[k]) scatter_reply(ctx, lo + k, reps[k]);
        free_have(reps, n);
        free(reps);
        w->have = arr;
        if (rc != W_DONE) goto out;
    }
    /* puts, source by source, ours last */
    for (lpf_pid_t k = 1; k <= n; ++k) {
        lpf_pid_t q = lo + (me - lo + k) % n;
        if (q == me) {
            if (qu->peers[me].head[SSTEP_PUT] != SSTEP_NIL) mpi_self_puts(ctx);
            continue;
        }
        apply_puts(ctx, q, w->have[q - lo]->buf);
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
        struct sstep_stamp stamp, int kind, size_t expect, struct sstep_sync_info *info)
{
    struct mpi_group *g = ctx->group;
    struct mpi_range *rs = range_of(g);
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
    w.expect = expect;
    w.info = info;
    rs->w.arrived = 0;
    progress_sends(rs);
    rpoll(g, rs, ctx);
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
        send_gone(g, rs, 0);
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
    progress_sends(rs);
    if (!rs->sent_any) return 0;
    send_gone(g, rs, 1);
    return 1;
}

void mpi_range_need(struct mpi_group *g, lpf_pid_t q)
{
    struct mpi_range *rs = range_of(g);
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
                rpoll_from(g, rs, g->ctx, (int)q);
                if (!rs->fin[q]) done = 0;
            }
        progress_sends(rs);
        if (done && rs->ns == 0) break;
        mpi_wait_serve(g, &mw, it, 15);
        mpi_wait_step(&mw);
    }
    range_free(rs);
    g->range = NULL;
}
