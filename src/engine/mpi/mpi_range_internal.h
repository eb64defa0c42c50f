/*
 * The MPI engine's PUB extensions, shared between mpi_range.c (the waits,
 * E1 and E2) and mpi_range_net.c (the packets, their sending and
 * receiving, and E4's rounds). The protocol is described at the top of
 * mpi_range.c.
 */
#ifndef MPI_RANGE_INTERNAL_H
#define MPI_RANGE_INTERNAL_H

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
#define RF_LEFT 4u       /* GONE (hybrid engine): the sender, a thread, left the
                            section; its rank's packets go on (not a final one) */

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
    /* the verdict: 1 + a process blocked in an ordinary sync, 1 + one in
     * another range wait than the report's (0: none), that one's kind and
     * object */
    uint32_t plain, other, other_kind, pad_;
    uint64_t other_object;
};
/* rrep.kind of a process blocked in an ordinary sync (mpi_range_plain_tick) */
#define MR_PLAIN 7u

struct pnode {
    struct pnode *next;
    char *buf;
    size_t len;
    lpf_pid_t src;
};

struct mpi_range;

/* Another transport for the protocol (the hybrid engine's threads: pids
 * routed through their ranks); NULL in struct mpi_range: the MPI engine's
 * own (one process per rank, packets on the section communicator). */
struct mr_net {
    /* hand buf (malloc'ed, the receiver frees it) to q; in order per pair */
    void (*send)(struct mpi_range *rs, lpf_pid_t q, char *buf, size_t len);
    /* receive what has arrived for us: mr_dispatch for each */
    void (*poll)(struct mpi_range *rs, struct sstep_ctx *ctx);
    /* q left without a GONE packet to us (it follows all of its packets) */
    int (*gone)(struct mpi_range *rs, lpf_pid_t q);
    /* a wait's turn to serve other ranks' direct gets */
    void (*serve)(struct mpi_range *rs, struct mpi_wait *mw, unsigned it);
};

struct mpi_range {
    lpf_pid_t P, me;
    const struct mr_net *net;      /* NULL: MPI_Isend / MPI_Improbe on g->comm */
    void *net_arg;
    int by_mpi;                    /* on MPI even on one node (no rings): the hybrid
                                      engine's rank level receives them itself */
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
    /* an ordinary sync's wait (mpi_range_plain_tick): its episode, start,
     * and whether it is blocked (in the deadlock detection) */
    int plain_on, plain_in;
    uint64_t plain_ep, plain_t0;
};

SSTEP_HIDDEN void mr_range_free(struct mpi_range *rs);
/* a wait of an ordinary sync (key: tells one wait from the next), called
 * now and then: after 0.1 s it takes part in E4 as kind MR_PLAIN; returns
 * after a while once a deadlock is declared (a range waiter reports) */
SSTEP_HIDDEN void mr_plain_tick(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        uint64_t key);
/* the hybrid engine (hy_range.c): its leader thread waits in the sync of
 * rank-level context rank_ctx */
SSTEP_HIDDEN void hy_rank_plain_tick(struct sstep_ctx *rank_ctx, uint64_t key);
SSTEP_HIDDEN struct mpi_range *mr_range_new(struct sstep_ctx *ctx, lpf_pid_t P, lpf_pid_t me);
SSTEP_HIDDEN struct mpi_range *mr_range_of(struct mpi_group *g);
SSTEP_HIDDEN void mr_progress_sends(struct mpi_range *rs);
SSTEP_HIDDEN void mr_rsend(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q, char *buf, size_t len, int data);
SSTEP_HIDDEN char *mr_palloc(struct mpi_group *g, size_t n);
/* GONE to every peer; flags: 0 (failed), RF_FINAL or RF_LEFT */
SSTEP_HIDDEN void mr_send_gone(struct mpi_group *g, struct mpi_range *rs, uint32_t flags);
SSTEP_HIDDEN void mr_dispatch(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t q, char *buf, size_t len);
SSTEP_HIDDEN void mr_rpoll_from(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx, int src);
SSTEP_HIDDEN void mr_rpoll(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx);
/* mpi_range_shm.c: the packets on one node (g->shm->ring nonzero). put:
 * 1 if buf went into the ring to q (the caller frees it), 0: the caller
 * sends it by MPI and then calls mr_ring_by_mpi. poll: as mr_rpoll_from. */
SSTEP_HIDDEN int mr_ring_put(struct mpi_group *g, lpf_pid_t q, const char *buf, size_t len);
SSTEP_HIDDEN void mr_ring_by_mpi(struct mpi_group *g, lpf_pid_t q);
SSTEP_HIDDEN void mr_ring_poll(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        int src);
SSTEP_HIDDEN int mr_peer_gone(struct mpi_group *g, struct mpi_range *rs, lpf_pid_t q);
SSTEP_HIDDEN void mr_coordinate(struct mpi_group *g, struct mpi_range *rs, uint64_t waited, uint64_t now);
/* E1 / E2 of ctx (pid rs->me) with the range state rs (mpi_sync_range is
 * this with the section's own) */
SSTEP_HIDDEN lpf_err_t mr_sync(struct mpi_group *g, struct mpi_range *rs, struct sstep_ctx *ctx,
        lpf_pid_t lo, lpf_pid_t n, const lpf_pid_t *members, struct sstep_stamp stamp,
        int kind, size_t expect, struct sstep_sync_info *info);

#endif
