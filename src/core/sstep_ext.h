/*
 * Superstep's internal fast path for the layers built on the core (BSPlib,
 * collectives, PUB extensions). See docs/internals.md.
 *
 * These calls take raw pointers instead of local slots, never count against
 * the user's message-queue capacity (the queue grows as needed), and add
 * buffered message passing. Ordering guarantee of every engine, which the
 * BSPlib layer relies on: within one sync, every get reads its source before
 * any put of the same superstep is applied, and where a put and a get write
 * the same bytes the put's data remains.
 */
#ifndef SSTEP_EXT_H
#define SSTEP_EXT_H

#include <lpf/core.h>
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the context behind an lpf_t (aborts with a message if invalid) */
struct sstep_ctx;
struct sstep_ctx *sstep_ctx_of(lpf_t ctx, const char *primitive);

/* processor share of process s in a section of P started with F free */
lpf_pid_t sstep_share(lpf_pid_t F, lpf_pid_t P, lpf_pid_t s);

/* Start a section of exactly P processes (no clamping to free_p): siblings
 * run sibling_spmd; the caller continues as pid 0 with context *ctx0 and
 * must later call sstep_exec_end(*ctx0), which waits for the siblings. */
lpf_err_t sstep_exec_begin(lpf_t parent, lpf_pid_t P, lpf_spmd_t sibling_spmd,
        lpf_args_t args, lpf_t *ctx0);
lpf_err_t sstep_exec_end(lpf_t ctx0);

/* A sync that also checks a 64-bit value for agreement. On disagreement the
 * superstep still completes (data moved, registrations activated) and
 * `mismatch` is set, with the first differing peer and its value, on every
 * process. The top 4 bits are reserved for the core. */
/* One superstep of one PUB object (pub.md §12.2): identifies an E1/E2 sync
 * and every message shipped by it. */
struct sstep_stamp {
    uint64_t object;
    uint64_t step;
};

/* info->cause after sstep_sync_range / sstep_oblsync (E1/E2). */
enum sstep_cause {
    SSTEP_CAUSE_OK = 0,        /* no problem found */
    SSTEP_CAUSE_GONE = 1,      /* a range member left the section (or its
                                  spmd returned) before arriving: info->peer */
    SSTEP_CAUSE_MISMATCH = 2,  /* a member arrived with another step of the
                                  same object, or with the other kind (E1 vs
                                  E2) for this stamp: info->peer, and its
                                  stamp / kind in info->peer_stamp/peer_kind */
    SSTEP_CAUSE_DEADLOCK = 3,  /* quiescence (E4): every process of the
                                  section blocked, nothing in flight; the
                                  chosen report is in info->peer* */
    SSTEP_CAUSE_LATE = 4,      /* a kept message names this object with a
                                  smaller step: info->peer (its source) and
                                  info->peer_stamp (its stamp) */
    SSTEP_CAUSE_EXTRA = 5      /* E2: more than `expect` messages stamped
                                  `stamp` arrived (info->arrived says how
                                  many); the first extra's source: info->peer */
};

/* kinds of wait, for info->peer_kind */
enum { SSTEP_KIND_SYNC = 0 /* E1 or lpf_sync */, SSTEP_KIND_OBLSYNC = 1 /* E2 */ };

struct sstep_sync_info {
    uint64_t check;          /* in: must be equal on all processes */
    uint64_t peer_check;     /* out: value of the first differing peer */
    lpf_pid_t peer;          /* out: that peer (LPF_MAX_P: none); with a cause
                                other than OK: the process the cause names */
    int mismatch;            /* out: some process had a different check */
    /* ---- E1/E2 only (sstep_sync_ext leaves them untouched) ---- */
    int cause;               /* out: enum sstep_cause */
    size_t arrived;          /* out: E2: messages stamped `stamp` that reached
                                the caller; E1: messages delivered */
    /* out, cause MISMATCH / LATE / DEADLOCK: the report about info->peer */
    struct sstep_stamp peer_stamp; /* the stamp it arrived with / waits for /
                                      the late message's stamp */
    int peer_kind;           /* SSTEP_KIND_*: what it waits in (DEADLOCK,
                                MISMATCH) */
    lpf_pid_t peer_lo, peer_n;     /* DEADLOCK: the range of its wait */
    size_t peer_arrived, peer_expect; /* DEADLOCK, E2 wait: its counts */
    int report;              /* DEADLOCK: 1 at exactly one process of the
                                section (the one the report names, or pid 0
                                where the engine reports there): the one
                                that should print */
    lpf_pid_t peer_plain;    /* DEADLOCK: 1 + a process blocked in an
                                ordinary sync (lpf_sync, bsp_sync) of the
                                section; 0: none (or not known) */
    lpf_pid_t peer_other;    /* DEADLOCK: 1 + a process blocked in another
                                E1/E2 than the report's (another object or
                                kind); 0: none (or not known) */
    int peer_other_kind;     /* its SSTEP_KIND_* */
    uint64_t peer_other_object; /* and its stamp's object */
};
lpf_err_t sstep_sync_ext(lpf_t ctx, struct sstep_sync_info *info);

/* The profiler: a layer's entry point that ends supersteps (bsp_sync)
 * notes where the program called it before, and forgets it after, so that
 * the report names that line of the program rather than the layer's own
 * calls of sstep_sync_ext. */
extern __thread const void *sstep_prof_caller __attribute__((visibility("hidden")));
#define SSTEP_PROF_NOTE_CALLER() (sstep_prof_caller = __builtin_return_address(0))
#define SSTEP_PROF_CALLER_DONE() (sstep_prof_caller = NULL)

/* Put `size` bytes from `src` (which must stay unchanged until the sync
 * ends) into dst_pid's registration of the global slot. */
lpf_err_t sstep_put_ptr(lpf_t ctx, const void *src, lpf_pid_t dst_pid,
        lpf_memslot_t dst_slot, size_t dst_off, size_t size);

/* Get `size` bytes of src_pid's registration of the global slot into dst. */
lpf_err_t sstep_get_ptr(lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_off, void *dst, size_t size);

/* Library memory that stays valid and unchanged until the end of the
 * superstep after the next sync (for buffered puts and messages). NULL when
 * out of memory. */
void *sstep_stage(lpf_t ctx, size_t size);

/* Queue a message of `size` bytes at `msg` (memory from sstep_stage) for
 * dst_pid; after the next sync it is in dst_pid's inbox. */
lpf_err_t sstep_send(lpf_t ctx, lpf_pid_t dst_pid, const void *msg, size_t size);

/* Buffered put in one call (bsp_put): checks pid and slot like
 * sstep_put_ptr, queues a put of `size` bytes and returns in *buf staging
 * memory (as from sstep_stage) that the caller fills before the next sync. */
lpf_err_t sstep_put_buf(lpf_t ctx, lpf_pid_t dst_pid, lpf_memslot_t dst_slot,
        size_t dst_off, size_t size, void **buf);

/* sstep_put_buf plus the copy of `size` bytes from src, in one call. A put
 * that continues the previous put to the same peer and slot (next offset)
 * extends that request (write combining). */
lpf_err_t sstep_put_copy(lpf_t ctx, const void *src, lpf_pid_t dst_pid,
        lpf_memslot_t dst_slot, size_t dst_off, size_t size);

/* Buffered message in one call (bsp_send): queues a message of `size` bytes
 * for dst_pid and returns in *buf its staging memory, to be filled before
 * the next sync. */
lpf_err_t sstep_send_buf(lpf_t ctx, lpf_pid_t dst_pid, size_t size, void **buf);

/* Messages received at the last sync (valid until the next one). */
struct sstep_msg {
    const char *data;
    size_t size;
    lpf_pid_t src;   /* the sender (pid of ctx): set by sstep_inbox_of only */
};
const struct sstep_msg *sstep_inbox(lpf_t ctx, size_t *count);

/* Read src_pid's registered memory now, without a sync (bsp_direct_get).
 * Returns LPF_ERR_FATAL if the engine cannot do that. */
lpf_err_t sstep_direct_get(lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_off, void *dst, size_t size);

/* Size that process `pid` registered for a global slot, if the engine can
 * tell without communication (shared memory); SIZE_MAX otherwise. */
size_t sstep_remote_size(lpf_t ctx, lpf_pid_t pid, lpf_memslot_t slot);

/* The sync just completed was the layer's own (bsplib_create's, an extra
 * sync for registrations, Python's register): superstep numbers in
 * messages (checked mode, the watchdog) leave it out, so that they count
 * the user's supersteps from 0. */
void sstep_layer_step(lpf_t ctx);

/* Name the primitives reported when the sync finds a bad remote range. */
void sstep_set_names(lpf_t ctx, const char *put_name, const char *get_name);


/* ------------------------------------------------------------------ */
/* PUB extensions E1-E4 (pub.md §12.2; docs/internals.md)             */
/* ------------------------------------------------------------------ */

/* E1 -- sync over the range of pids lo..lo+n-1 of ctx (the caller among
 * them), identified by `stamp` (all members pass the same stamp).
 * Executes the requests in the caller's queue (not those set aside by
 * sstep_scope_push; every one must target the range, else a run-time error
 * naming the pid and the range) and the range members' requests to the
 * caller, with the ordering, conflict and 64-bit agreement (info->check)
 * rules of sstep_sync_ext; barrier among the range only: outsiders are
 * neither waited for nor disturbed, disjoint ranges sync concurrently, and
 * arrivals are matched by stamp, not by counting syncs. Messages (sstep_send
 * and friends) shipped by this sync carry `stamp`; the ones stamped `stamp`
 * addressed to the caller are then in sstep_inbox_of(ctx, stamp). Ends the
 * caller's core superstep (registrations activate, staging advances).
 * n == 1 is local.
 * Returns LPF_SUCCESS with info->cause == SSTEP_CAUSE_OK, or LPF_ERR_FATAL
 * with info->cause saying why (a member gone, another step of the same
 * object or E2 for this stamp, deadlock (E4), a late message). `info` must
 * not be NULL. */
lpf_err_t sstep_sync_range(lpf_t ctx, lpf_pid_t lo, lpf_pid_t n,
        struct sstep_stamp stamp, struct sstep_sync_info *info);

/* E2 -- oblivious sync: no barrier. Ships the caller's queued messages
 * stamped `stamp` (every one must target lo..lo+n-1; a queued put or get is
 * a run-time error) without waiting for any receiver, then waits until
 * `expect` messages stamped `stamp` have reached the caller (info->arrived).
 * More than expect: LPF_ERR_FATAL, cause SSTEP_CAUSE_EXTRA (the messages are
 * still delivered). Ends the caller's core superstep like E1 (info->check is
 * not compared). Returns LPF_ERR_FATAL with cause DEADLOCK, LATE or MISMATCH
 * (a member arrived in E1 for this stamp) on those errors. */
lpf_err_t sstep_oblsync(lpf_t ctx, lpf_pid_t lo, lpf_pid_t n,
        struct sstep_stamp stamp, size_t expect, struct sstep_sync_info *info);

/* E1 / E2 over any member set: `members` holds n pids in increasing order
 * (a run of consecutive pids goes as the range). Everything else as
 * sstep_sync_range / sstep_oblsync; info->peer_lo is the first member. */
lpf_err_t sstep_sync_set(lpf_t ctx, const lpf_pid_t *members, lpf_pid_t n,
        struct sstep_stamp stamp, struct sstep_sync_info *info);
lpf_err_t sstep_oblsync_set(lpf_t ctx, const lpf_pid_t *members, lpf_pid_t n,
        struct sstep_stamp stamp, size_t expect, struct sstep_sync_info *info);

/* The messages stamped `stamp` that the caller's E1/E2 for `stamp` took:
 * grouped by source in increasing pid order, each source's in issue order;
 * ->src is the sender's pid in ctx. Data valid and unchanged until
 * sstep_inbox_release(ctx, stamp), whatever later syncs do. NULL with
 * *count == 0 when there are none (or the stamp was never taken). */
const struct sstep_msg *sstep_inbox_of(lpf_t ctx, struct sstep_stamp stamp,
        size_t *count);

/* Free the delivery of `stamp` (no-op when there is none). */
void sstep_inbox_release(lpf_t ctx, struct sstep_stamp stamp);

/* E3 -- object scopes (core only). sstep_scope_push sets the caller's
 * queued requests and their staged data aside and starts a slot scope:
 * global slots registered in it get indices above every index the enclosing
 * scopes use, depending only on the state at the push. sstep_scope_pop
 * (queue empty, the scope's global slots all deregistered, else a run-time
 * error) ends the scope, restores the enclosing slot allocator exactly, and
 * puts the set-aside requests back. Both Θ(1). Scopes nest. */
void sstep_scope_push(lpf_t ctx);
void sstep_scope_pop(lpf_t ctx);

/* E4 -- no hang: see docs/internals.md. An E1/E2 wait that can never end
 * returns LPF_ERR_FATAL with cause SSTEP_CAUSE_GONE (a member left) or, by
 * quiescence detection (every process of the section blocked in E1/E2 for
 * >= 0.1 s, nothing in flight), SSTEP_CAUSE_DEADLOCK: every blocked wait of
 * the section returns it with the same report in info->peer* (the lowest
 * pid blocked in E2 with its counts, else the lowest blocked pid), and
 * info->report == 1 at exactly one of them. */

/* End the whole program like lpf_abort (status 6, every process), for a
 * layer that has printed its own line already: prints nothing. */
void sstep_abort_quiet(lpf_t ctx);

/* " (called at FILE:LINE in FUNC)" for a layer's error line: the user's call
 * into the library, found on the stack (empty when it cannot be told) */
void sstep_call_site(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
