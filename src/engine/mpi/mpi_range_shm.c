/*
 * The MPI engine's PUB extensions on one node: the range protocol's packets
 * (mpi_range.c) through rings in the node's shared segment instead of MPI
 * messages.
 *
 * Every ordered pair (from, to) has a ring of `ring` bytes in the
 * receiver's segment (struct mpi_shm: ring, roff), cut into 64-byte cells,
 * and a control area of two lines: `take` (the receiver's position: cells
 * consumed so far, which the sender reads to know the free room) and `nmpi`
 * (how many packets to the receiver the sender has sent by MPI instead).
 * A packet that fits (its 32-byte header and its bytes, at most half the
 * ring) takes consecutive cells: the sender writes the header's sequence
 * number and length and the bytes (wrapping at the ring's end), then
 * publishes the first cell by storing its ring position + 1 in the
 * header's first word (release). A packet too large for the ring, or one
 * that finds the ring full (the receiver is computing, or in another
 * kind of sync), travels as an MPI message (tag T_RANGE) and the sender
 * raises `nmpi` after posting it.
 *
 * Per pair every packet has a sequence number, ring or MPI alike. The
 * receiver takes the packet with the next number: from the ring when the
 * cell at its position is published with that number; else, when `nmpi`
 * says that an MPI packet is unreceived (read first, acquire: every packet
 * placed in the ring before that MPI packet is then visible), it looks at
 * the ring once more and, if the number is not there, the next packet is
 * the first unreceived MPI message from that sender (MPI keeps one
 * sender's messages of one tag in order). So each pair's packets arrive in
 * the order they were sent, as mpi_range.c relies on, and nothing waits
 * for room: a full ring never blocks the sender.
 *
 * The receiver clears the first word of every cell it consumed before it
 * releases them, so a stale word (old bytes of a packet's body) never
 * looks published. The rings and both sides' counters live as long as the
 * window (struct mpi_shm), across the sections run on it: a peer that has
 * left a section may already have placed packets of the next one behind
 * its final GONE, and the next section's range state reads on from there.
 */
#define _GNU_SOURCE
#include "mpi_range_internal.h"

#include <stdatomic.h>

#define RC_CELL 64
#define RC_HDR 32

struct rcell {
    _Atomic uint64_t pub;   /* ring position + 1 of the packet starting here */
    uint64_t seq;           /* its number among the pair's packets */
    uint64_t len;
    uint64_t pad_;
};
_Static_assert(sizeof(struct rcell) == RC_HDR, "ring packet header is 32 bytes");

struct rctl {
    _Atomic uint64_t take;  /* written by the receiver */
    char pad_[56];
    _Atomic uint64_t nmpi;  /* written by the sender */
    char pad2_[56];
};
_Static_assert(sizeof(struct rctl) == MPI_RING_CTL, "ring control is two lines");

/* the ring from `from` to `owner` (in owner's segment) */
static inline char *ring_at(const struct mpi_shm *s, lpf_pid_t owner, lpf_pid_t from)
{
    return s->seg[owner] + s->roff + (size_t)from * (MPI_RING_CTL + s->ring);
}

static inline size_t cells_of(size_t len)
{
    return (RC_HDR + len + RC_CELL - 1) / RC_CELL;
}

int mr_ring_put(struct mpi_group *g, lpf_pid_t q, const char *buf, size_t len)
{
    struct mpi_shm *s = g->shm;
    struct mpi_ring *l = &s->rl[q];
    if (RC_HDR + len > s->ring / 2) return 0;
    const uint64_t nc = s->ring / RC_CELL, need = cells_of(len);
    char *base = ring_at(s, q, g->pid);
    struct rctl *c = (struct rctl *)base;
    char *cells = base + MPI_RING_CTL;
    if (l->put + need - l->took > nc) {
        l->took = atomic_load_explicit(&c->take, memory_order_acquire);
        if (l->put + need - l->took > nc) return 0;
    }
    const size_t at = (size_t)(l->put % nc) * RC_CELL;
    struct rcell *h = (struct rcell *)(cells + at);
    h->seq = l->seq;
    h->len = len;
    const size_t d = at + RC_HDR, first = len < s->ring - d ? len : s->ring - d;
    memcpy(cells + d, buf, first);
    if (first < len) memcpy(cells, buf + first, len - first);
    atomic_store_explicit(&h->pub, l->put + 1, memory_order_release);
    l->put += need;
    l->seq++;
    return 1;
}

void mr_ring_by_mpi(struct mpi_group *g, lpf_pid_t q)
{
    struct mpi_shm *s = g->shm;
    struct mpi_ring *l = &s->rl[q];
    struct rctl *c = (struct rctl *)ring_at(s, q, g->pid);
    l->seq++;
    l->nmpi++;
    atomic_store_explicit(&c->nmpi, l->nmpi, memory_order_release);
}

/* the pair's next packet from the ring, if it is there: dispatched */
static int ring_take(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t q)
{
    struct mpi_shm *s = g->shm;
    struct mpi_ring *l = &s->rl[q];
    const uint64_t nc = s->ring / RC_CELL;
    char *base = ring_at(s, g->pid, q);
    struct rctl *c = (struct rctl *)base;
    char *cells = base + MPI_RING_CTL;
    const size_t at = (size_t)(l->take % nc) * RC_CELL;
    struct rcell *h = (struct rcell *)(cells + at);
    if (atomic_load_explicit(&h->pub, memory_order_acquire) != l->take + 1 || h->seq != l->next)
        return 0;
    const size_t len = (size_t)h->len;
    if (SSTEP_UNLIKELY(RC_HDR + len > s->ring / 2))
        sstep_fatal(ctx, "sstep_sync_range", "protocol error: a bad ring packet from process %u", q);
    char *buf = mr_palloc(g, len);
    const size_t d = at + RC_HDR, first = len < s->ring - d ? len : s->ring - d;
    memcpy(buf, cells + d, first);
    if (first < len) memcpy(buf + first, cells, len - first);
    const uint64_t need = cells_of(len);
    for (uint64_t k = 0; k < need; ++k) {
        struct rcell *x = (struct rcell *)(cells + (size_t)((l->take + k) % nc) * RC_CELL);
        atomic_store_explicit(&x->pub, 0, memory_order_relaxed);
    }
    l->take += need;
    l->next++;
    atomic_store_explicit(&c->take, l->take, memory_order_release);
    mr_dispatch(g, rs, ctx, q, buf, len);
    return 1;
}

/* receive q's packets that are there, in order; none after its final one */
static void ring_poll_one(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t q)
{
    struct mpi_shm *s = g->shm;
    struct mpi_ring *l = &s->rl[q];
    const struct rctl *c = (const struct rctl *)ring_at(s, g->pid, q);
    while (!rs->fin[q]) {
        if (ring_take(g, rs, ctx, q)) continue;
        if (atomic_load_explicit(&c->nmpi, memory_order_acquire) == l->mrecv) return;
        if (ring_take(g, rs, ctx, q)) continue;
        /* the next packet is the first MPI message from q not yet received */
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_Improbe((int)q, T_RANGE, g->comm, &flag, &m, &st);
        if (!flag) return;
        int cnt = 0;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        char *buf = mr_palloc(g, (size_t)cnt);
        MPI_Mrecv(buf, cnt, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        l->mrecv++;
        l->next++;
        mr_dispatch(g, rs, ctx, q, buf, (size_t)cnt);
    }
}

void mr_ring_poll(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx, int src)
{
    if (src != MPI_ANY_SOURCE) {
        ring_poll_one(g, rs, ctx, (lpf_pid_t)src);
        return;
    }
    for (lpf_pid_t q = 0; q < rs->P; ++q)
        if (q != rs->me) ring_poll_one(g, rs, ctx, q);
}
