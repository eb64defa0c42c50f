/*
 * The pthread engine's shared state and the functions its files share:
 *
 *   pthread_engine.c  waiting and the barrier, groups, exec, direct get,
 *                     abort, the engine's table, services for pt_range.c
 *   pt_sync.c         the sync: gets, puts, messages
 *   pt_hook.c         hook, rehook, lpf_pthread_initialize
 *   pt_range.c        the PUB extensions' range syncs
 *   affinity.c        pinning
 */
#ifndef SSTEP_PT_GROUP_H
#define SSTEP_PT_GROUP_H

#include "pthread_internal.h"

#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PT_LINE 128

/* An arrival word: (episode << 8) | flags | gone. Each process has two, by
 * episode parity, so a fast process arriving at episode e+1 cannot overwrite
 * what a slow one still has to read of episode e. For small P all words
 * share one or two cache lines: on this class of machine a barrier whose
 * flags live in one line costs a fraction of one that moves a line per
 * process. Beyond PT_PACKED_MAX processes each gets its own line. */
#define PT_GONE ((uint64_t)1)
#define F_PUT ((uint64_t)2 << SSTEP_PUT)
#define F_GET ((uint64_t)2 << SSTEP_GET)
#define F_MSG ((uint64_t)2 << SSTEP_MSG)
#define F_CHECK ((uint64_t)1 << 5)    /* some process carries a check value */
#define F_REHOOK ((uint64_t)1 << 6)   /* this episode is a rehook, not a sync */
#define F_NOMBOX ((uint64_t)1 << 4)   /* has puts that are not in its mailboxes */
#define F_INLINE ((uint64_t)1 << 7)   /* its puts lie in its own arrival line */
/* With a line per process (P = 2, P > PT_PACKED_MAX) the 7 words after a
 * process's arrival word of each parity carry small puts to one
 * destination: they share the arrival's 64-byte line and so reach the
 * reader with the arrival itself */
#define PT_INLINE_WORDS 7
/* bits 8..23: the destinations whose mailbox holds this process's puts
 * (pt_sync.c: the one-barrier path for small puts, P <= PT_MBOX_MAXP) */
#define MASK_SHIFT 8
#define PT_MBOX_MAXP 16
#define PT_MBOX_CAP 2048              /* bytes per (source, destination, parity) */
#define EP_SHIFT 24
#define PT_PACKED_MAX 8   /* up to this P the words share lines (except P = 2) */

/* per-process line: check values and what the process left with */
struct pt_proc {
    _Atomic uint64_t check[2];      /* by episode parity */
    struct sstep_ctx *ctx;          /* set before the first arrival */
    uint64_t final_syncs;           /* written before the gone bit */
    int final_failed;
} __attribute__((aligned(PT_LINE)));

/* What only the owner touches, on a line of its own: peers read pt_proc
 * (its ctx) at every sync with requests, which a counter written at every
 * barrier there would make them miss. */
struct pt_own {
    uint64_t episode;
    uint64_t mail;                  /* last barrier: sources with puts in a mailbox for us */
    uint64_t mail_inline;           /* ... of those, in their arrival line */
    uint64_t readers_seen;          /* gc.readers at the last get phase */
    uint64_t spin_ns;               /* how long pt_barrier's waits spin (0: SPIN_NS) */
} __attribute__((aligned(PT_LINE)));

/* Gets that read a process's memory (pid != owner), counted by the readers:
 * `readers` before barrier A, `done` after each reader has read. Both only
 * grow, so no reset can race with a reader of the next sync. The owner
 * must not write its own get destinations before done == readers: a peer
 * may still be reading those bytes as the sources of its gets. */
struct pt_getcount {
    _Atomic uint64_t readers;
    _Atomic uint64_t done;
} __attribute__((aligned(PT_LINE)));

/* Waiters that block in the kernel count themselves here and sleep on
 * `seq`; an arrival that sees sleepers bumps `seq` and wakes them. */
struct pt_sleep {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleepers;
} __attribute__((aligned(PT_LINE)));

struct pt_group {
    lpf_pid_t P;
    unsigned stride;                  /* words between two processes' pairs */
    _Atomic uint64_t *words;          /* arrival words, [P * stride] */
    _Atomic int refs;                 /* processes still using the group */
    _Atomic int gate;                 /* exec start gate: 0 wait, 1 go, 2 cancel */
    lpf_spmd_t spmd;                  /* what siblings run */
    lpf_args_t args;                  /* siblings' args */
    long out_tag;                     /* exec: the processes' output tag (output.h):
                                       * the starter's, or -1: each its pid */
    pthread_t *threads;
    struct pt_group *_Atomic child;   /* rehook: new group published by pid 0 */
    _Atomic int *locks;               /* per destination, one line each: push phase */
    struct pt_sleep *sleep;           /* futex word and sleeper count, own line */
    lpf_pid_t *pend;                  /* [P][pend_stride] scratch for the push phase */
    size_t pend_stride;               /* a process's row: whole lines (written at every
                                       * sync with puts, by its owner only) */
    int pinned0;                      /* exec: pid 0's affinity was changed */
    cpu_set_t saved0;                 /* ... and is restored from this */
    struct pt_proc *procs;            /* [P] */
    struct pt_getcount *gc;           /* [P] gets reading each process */
    _Atomic uint64_t stall_warned;    /* watchdog: episode last reported + 1 */
    _Atomic int stall_fatal;          /* watchdog: somebody is giving up */
    struct pt_range *_Atomic range;   /* E1/E2 state (pt_range.c), lazily */
    char **mbox;                      /* [P] each source's mailboxes [P][2][CAP], lazily */
    struct pt_own *own;               /* [P] */
};

static inline _Atomic uint64_t *pt_word(struct pt_group *g, lpf_pid_t q, uint64_t e)
{
    /* stride 2: the pair shares a line; stride 16: each parity's word opens
     * its own 64-byte line, followed by that parity's inline puts */
    return &g->words[(size_t)q * g->stride + (e & 1) * (g->stride >> 1)];
}

/* BSP processes alive in this program (for the spin-or-yield decision) */
SSTEP_HIDDEN extern _Atomic unsigned pt_live_procs;


#define SPIN_NS 30000ull      /* spin this long when every process has a core */
#define SPIN_BULK_MAX_NS 1000000ull /* ... up to this long after moving much data */
#define YIELD_NS 2000000ull   /* oversubscribed: yield the core this long */
#define YIELD_SLICE_NS 100000ull /* ... unless one yield took this long */
#define SLEEP_MAX_NS 10000000L /* a sleeper re-checks at least this often */

static inline int arrived(uint64_t w, uint64_t e)
{
    return (w >> EP_SHIFT) >= e || (w & PT_GONE);
}


static inline void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
    struct timespec ts = { 0, SLEEP_MAX_NS };
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static inline void futex_wake_all(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}


/* membarrier registered: arrivals need only a compiler barrier (see
 * pthread_engine.c) */
SSTEP_HIDDEN extern _Atomic int pt_membarrier_ok;

static inline void pt_publish_fence(void)
{
    if (atomic_load_explicit(&pt_membarrier_ok, memory_order_relaxed))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

static inline void pt_sleeper_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&pt_membarrier_ok, memory_order_relaxed)
            && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        /* cannot happen once registered; if it does, arrivals fence from
         * now on (a wake-up lost meanwhile costs one 10 ms re-check) */
        atomic_store_explicit(&pt_membarrier_ok, 0, memory_order_relaxed);
}

static inline void pt_wake(struct pt_group *g)
{
    if (SSTEP_UNLIKELY(atomic_load_explicit(&g->sleep->sleepers, memory_order_relaxed))) {
        atomic_fetch_add_explicit(&g->sleep->seq, 1, memory_order_release);
        futex_wake_all(&g->sleep->seq);
    }
}


/* pthread_engine.c */
SSTEP_HIDDEN uint64_t pt_wait(struct pt_group *g, _Atomic uint64_t *word, uint64_t e, lpf_pid_t pid,
        uint64_t spin_ns);
SSTEP_HIDDEN int pt_barrier(struct pt_group *g, lpf_pid_t pid, uint64_t flags,
        uint64_t check, uint64_t *or_flags, struct sstep_sync_info *info);
SSTEP_HIDDEN void pt_leave(struct pt_group *g, lpf_pid_t pid, struct sstep_ctx *ctx);
SSTEP_HIDDEN lpf_err_t pt_wait_all_gone(struct pt_group *g);
SSTEP_HIDDEN struct pt_group *pt_group_new(lpf_pid_t P);
SSTEP_HIDDEN void pt_group_free(struct pt_group *g);
SSTEP_HIDDEN void pt_group_release(struct pt_group *g);

/* pt_sync.c */
SSTEP_HIDDEN lpf_err_t pt_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info);
SSTEP_HIDDEN int pt_get_phase(struct pt_group *g, struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, uint64_t e);
SSTEP_HIDDEN void pt_push(struct pt_group *g, struct sstep_ctx *me);

/* pt_hook.c */
SSTEP_HIDDEN lpf_err_t pt_rehook(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args);
SSTEP_HIDDEN lpf_err_t pt_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args);

#endif
