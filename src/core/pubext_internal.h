/*
 * PUB extensions E1-E4 (pub.md §12.2): the core's part, shared with the
 * engines. Stamped messages travel as batches: one per (sender, receiver,
 * stamp), position independent (a header, the sizes, the payloads), so that
 * the MPI engine can ship one as bytes and the pthread engine can hand one
 * over by pointer. Senders push batches onto the receiver's mailbox without
 * a lock (a stack: one compare-and-swap); only the receiver takes them off
 * (sstep_mailbox_drain: into its own list, in push order) and keeps them
 * until its E1/E2 for the batch's stamp takes them into a delivery, which
 * lives until sstep_inbox_release.
 */
#ifndef SSTEP_PUBEXT_INTERNAL_H
#define SSTEP_PUBEXT_INTERNAL_H

#include "core_internal.h"
#include <pthread.h>

enum { SSTEP_E1 = 0, SSTEP_E2 = 1 };

struct sstep_batch {
    struct sstep_batch *next;   /* receiver's list (not meaningful on the wire) */
    uint64_t object, step;
    uint32_t src, kind;         /* sender's pid, SSTEP_E1 / SSTEP_E2 */
    uint64_t nmsgs;
    uint64_t bytes;             /* whole batch, header included */
    uint64_t pooled;            /* receiver's: a block of sstep_batch_small
                                   (0 on the wire) */
    uint64_t pad_;
    /* uint64_t size[nmsgs]; then the payloads, each 16-byte aligned */
};
_Static_assert(sizeof(struct sstep_batch) == 64, "batch header is 64 bytes");

static inline const uint64_t *sstep_batch_sizes(const struct sstep_batch *b)
{
    return (const uint64_t *)(b + 1);
}

static inline size_t sstep_batch_data_off(uint64_t nmsgs)
{
    return (sizeof(struct sstep_batch) + nmsgs * 8 + 15) & ~(size_t)15;
}

struct sstep_mailbox {
    /* pushed by senders, newest first; waiters poll it for non-NULL */
    _Alignas(64) struct sstep_batch *_Atomic inbound;
    /* the receiver's own, oldest first (only it touches them) */
    _Alignas(64) struct sstep_batch *head, *tail;
};

struct sstep_delivery {
    struct sstep_delivery *next;
    struct sstep_stamp stamp;
    size_t n, cap;               /* messages, and room in msgs */
    struct sstep_msg *msgs;
    struct sstep_batch *batches;
};

struct sstep_scope {
    struct sstep_queue q;        /* the set-aside queue */
    struct sstep_arena cur, old; /* its staging (current, previous superstep) */
    uint32_t fresh, nfree, floor;/* global slot allocator at the push */
};

struct sstep_ext {
    struct sstep_mailbox mbox;
    struct sstep_delivery *deliv;
    struct sstep_delivery *spare;   /* a released delivery, kept for the next */
    struct sstep_scope *scopes;
    size_t depth, cap;
    struct sstep_queue *qpool;   /* empty queues for scopes */
    size_t npool, poolcap;
    void *engine;                /* engine's per-process range state */
    void (*engine_free)(void *);
    /* released blocks of sstep_batch_small, for the next (owner only) */
    struct sstep_batch *bfree;
    size_t nbfree;
    /* batches the engine holds for this receiver outside the mailbox:
     * moved into it by sstep_mailbox_drain (set by any thread, once; read
     * by senders: on a line of its own, away from what the owner writes
     * every superstep) */
    _Alignas(64) int (*_Atomic engine_drain)(struct sstep_ctx *ctx);   /* 1: moved some */
};

/* A block of SSTEP_BATCH_SMALL bytes for a batch that the receiver copies
 * into its own list (the pthread engine's message cells): reused after
 * sstep_inbox_release, so that a small exchange per superstep allocates
 * nothing. Called by the receiver only; NULL when out of memory. */
#define SSTEP_BATCH_SMALL 256
SSTEP_HIDDEN struct sstep_batch *sstep_batch_small(struct sstep_ctx *ctx);

SSTEP_HIDDEN struct sstep_ext *sstep_ext_get(struct sstep_ctx *ctx);
SSTEP_HIDDEN void sstep_ext_free(struct sstep_ctx *ctx);

/* batch of ctx's queued messages to dst, stamped; NULL when there are none
 * (*oom set when out of memory) */
SSTEP_HIDDEN struct sstep_batch *sstep_batch_build(struct sstep_ctx *ctx, lpf_pid_t dst,
        struct sstep_stamp s, int kind, int *oom);
/* the same in two steps: its size (0: no messages to dst), then written
 * into `bytes` bytes at b */
SSTEP_HIDDEN size_t sstep_batch_bytes(const struct sstep_ctx *ctx, lpf_pid_t dst);
SSTEP_HIDDEN void sstep_batch_fill(const struct sstep_ctx *ctx, lpf_pid_t dst,
        struct sstep_stamp s, int kind, struct sstep_batch *b, size_t bytes);
/* the receiver: append a batch to its own list (the engine's drain) */
SSTEP_HIDDEN void sstep_mailbox_append(struct sstep_ctx *ctx, struct sstep_batch *b);
/* hand a batch to dst's mailbox (any thread) */
SSTEP_HIDDEN void sstep_mailbox_put(struct sstep_ctx *dst, struct sstep_batch *b);
/* the receiver: move what was pushed, and what the engine holds for it,
 * to its own list (head..tail); returns 1 if anything was */
SSTEP_HIDDEN int sstep_mailbox_drain(struct sstep_ctx *ctx);
/* has anything been pushed since the last drain? (any thread) */
static inline int sstep_mailbox_pending(struct sstep_mailbox *m)
{
    return atomic_load_explicit(&m->inbound, memory_order_acquire) != NULL;
}
/* messages stamped s in ctx's mailbox; *bad_src: the source of a batch
 * stamped s of the other kind (LPF_MAX_P: none) */
SSTEP_HIDDEN size_t sstep_mailbox_count(struct sstep_ctx *ctx, struct sstep_stamp s, int kind,
        lpf_pid_t *bad_src);
/* take the batches stamped s into a delivery; sets info->arrived and, for
 * late messages or batches of the other kind, info->cause. Returns 0 or -1
 * (out of memory). */
SSTEP_HIDDEN int sstep_deliver(struct sstep_ctx *ctx, struct sstep_stamp s, int kind,
        struct sstep_sync_info *info);
/* the local part of E1/E2 (requests to the caller itself) */
SSTEP_HIDDEN void sstep_self_exchange(struct sstep_ctx *ctx);

static inline int sstep_stamp_eq(struct sstep_stamp a, struct sstep_stamp b)
{
    return a.object == b.object && a.step == b.step;
}

#endif
