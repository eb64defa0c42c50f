/*
 * The hybrid engine: P = R x T BSP processes, T threads in each of R MPI
 * ranks, pids rank-major (rank r runs r*T .. r*T+T-1). docs/hybrid.md has
 * the design; in short:
 *
 *   hy_section.c  sections: exec (a rank-level MPI section whose ranks
 *                 start T threads each), nested sections, hook
 *                 (<lpf/hybrid.h>), direct get, abort
 *   hy_sync.c     the sync: the rank's threads meet (a leader-driven
 *                 barrier), the leader moves every request between ranks
 *                 through the MPI engine's sync of the rank-level context
 *                 (one combined message per rank pair), the threads execute
 *                 the requests inside the rank as the pthread engine does
 *
 * Built from the two engines' parts: the rank-level context is an ordinary
 * context of the MPI engine (its queue, slot table and inbox are filled and
 * read by the leader), so the exchange between ranks is the MPI engine's,
 * shared-memory mailboxes on one node included.
 */
#ifndef SSTEP_HYBRID_INTERNAL_H
#define SSTEP_HYBRID_INTERNAL_H

#define _GNU_SOURCE
#include "../mpi/mpi_group.h"

#include <pthread.h>

/* what a thread's queue holds, published at the first barrier */
enum {
    HY_INTRA_GET = 1u,   /* gets from threads of this rank (staged) */
    HY_INTRA = 2u,       /* any request to a thread of this rank */
    HY_INTRA_PUT = 4u,   /* puts to threads of this rank */
};

/* One thread of a rank (one BSP process); its own cache lines. */
struct hy_thread {
    _Alignas(SSTEP_CACHELINE) _Atomic uint64_t arrived; /* barriers arrived at */
    _Atomic int gone;          /* left its SPMD function */
    unsigned flags;            /* HY_*, this sync */
    uint64_t check;            /* the sync's agreement value */
    uint64_t nbar;             /* barriers this thread has passed (own copy) */
    char *stage;               /* data of its gets inside the rank */
    size_t stage_cap;
    struct sstep_ctx *ctx;
    struct hy_rank *rk;
    pthread_t tid;
    int started;
    int rleft;                 /* left, as the range syncs know (hy_range.c) */
};

struct hy_ranges;

/* The threads of one rank in one section. */
struct hy_rank {
    lpf_pid_t P;               /* processes of the section */
    lpf_pid_t T;               /* pid stride: threads per rank */
    lpf_pid_t R, r;            /* ranks of the section, this rank */
    lpf_pid_t nt, base;        /* threads on this rank, pid of the first */
    struct sstep_ctx *rank;    /* rank-level MPI context (NULL: R == 1) */
    struct hy_thread *th;      /* [nt] */
    lpf_spmd_t spmd;
    lpf_args_t args;           /* for threads other than the first */
    int oversub;               /* threads of the job outnumber cores */
    /* the leader's (thread 0's) release: barriers it has completed */
    _Alignas(SSTEP_CACHELINE) _Atomic uint64_t rel;
    _Atomic uint32_t seq;      /* futex word: bumped when anyone arrives or leaves */
    _Atomic uint32_t sleepers;
    /* the plan, written by the leader before a release */
    _Alignas(SSTEP_CACHELINE) int plan_stage, plan_apply;
    lpf_err_t plan_rc;
    int plan_mismatch;         /* agreement values differed: see checks */
    int unstaged;              /* this sync's staged gets have landed */
    uint64_t *checks;          /* [P] everybody's agreement value, after a mismatch */
    struct hy_rank *child;     /* lpf_rehook: the new section's rank (leader's) */
    _Atomic uint64_t stall_warned;
    int nostart;               /* a thread could not be started: out of memory */
    uint64_t syncs;            /* rank-level syncs (SUPERSTEP_HYBRID_STATS) */
    uint64_t mirror_rsteps;    /* the threads' range syncs at the last mirror */
    /* PUB's range syncs (hy_range.c): made on first use */
    pthread_mutex_t range_lock;
    struct hy_ranges *_Atomic ranges;
};

/* hy_sync.c */
SSTEP_HIDDEN lpf_err_t hy_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info);
/* a thread leaves the section (wakes whoever waits for it) */
SSTEP_HIDDEN void hy_leave(struct hy_rank *rk, struct hy_thread *me);
/* the leader waits until every other thread has left */
SSTEP_HIDDEN void hy_wait_all_gone(struct hy_rank *rk);

/* lpf_rehook's meeting: every thread arrives; the leader runs `made` (which
 * sets rk->child) between gather and release. 0, or -1 when one left. */
SSTEP_HIDDEN int hy_meet(struct hy_rank *rk, struct hy_thread *me, void (*made)(void *), void *arg);
/* ... `made` lets the others go on with this (once) */
SSTEP_HIDDEN void hy_meet_release(struct hy_rank *rk);

/* hy_range.c: PUB's range and oblivious syncs (E1, E2, E4) */
SSTEP_HIDDEN lpf_err_t hy_sync_range(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect,
        struct sstep_sync_info *info);
/* a thread leaves: its last range packet to every peer (hy_leave) */
SSTEP_HIDDEN void hy_range_depart(struct hy_rank *rk, struct hy_thread *me);
/* an ordinary sync's wait of thread me (key: its barrier), now and then:
 * after 0.1 s it takes part in the range syncs' deadlock detection */
SSTEP_HIDDEN void hy_range_plain_tick(struct hy_rank *rk, struct hy_thread *me, uint64_t key);
/* the rank ends (every thread gone): free the range state */
SSTEP_HIDDEN void hy_range_free(struct hy_rank *rk);

/* hy_section.c */
SSTEP_HIDDEN extern pthread_mutex_t hy_mpi_lock;   /* MPI calls outside the leader's sync */

/* Slot `slot` of process pid (another rank's thread u = pid % T) as the
 * rank-level context names it: global slot k is k*T + u (the mirror), noc
 * slot index i is i*T + u with the same generation (lx_noc.c routes it
 * back). A noc index that does not fit ends the run with a line. */
static inline uint32_t hy_rank_slot(struct sstep_ctx *ctx, const char *prim, lpf_pid_t T,
        uint32_t slot, lpf_pid_t pid)
{
    const lpf_pid_t u = pid % T;
    if (!(slot & SSTEP_NOC_BIT)) return slot * T + u;
    const uint64_t i = (uint64_t)(slot & SSTEP_NOC_INDEX) * T + u;
    if (SSTEP_UNLIKELY(i > SSTEP_NOC_INDEX))
        sstep_fatal(ctx, prim, "noc slot %u of process %u: the hybrid engine with %u threads "
                "per rank reaches noc slots below %u of another rank's processes",
                slot & SSTEP_NOC_INDEX, pid, T, (SSTEP_NOC_INDEX + 1) / T);
    return (slot & ~SSTEP_NOC_INDEX) | (uint32_t)i;
}

static inline lpf_pid_t hy_rank_of(const struct hy_rank *rk, lpf_pid_t pid)
{
    return pid / rk->T;
}

#endif
