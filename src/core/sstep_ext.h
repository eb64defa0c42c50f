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
struct sstep_sync_info {
    uint64_t check;          /* in: must be equal on all processes */
    uint64_t peer_check;     /* out: value of the first differing peer */
    lpf_pid_t peer;          /* out: that peer (LPF_MAX_P: none) */
    int mismatch;            /* out: some process had a different check */
};
lpf_err_t sstep_sync_ext(lpf_t ctx, struct sstep_sync_info *info);

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
};
const struct sstep_msg *sstep_inbox(lpf_t ctx, size_t *count);

/* Read src_pid's registered memory now, without a sync (bsp_direct_get).
 * Returns LPF_ERR_FATAL if the engine cannot do that. */
lpf_err_t sstep_direct_get(lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_off, void *dst, size_t size);

/* Size that process `pid` registered for a global slot, if the engine can
 * tell without communication (shared memory); SIZE_MAX otherwise. */
size_t sstep_remote_size(lpf_t ctx, lpf_pid_t pid, lpf_memslot_t slot);

/* Name the primitives reported when the sync finds a bad remote range. */
void sstep_set_names(lpf_t ctx, const char *put_name, const char *get_name);

#ifdef __cplusplus
}
#endif

/* End the whole program like lpf_abort (status 6, every process), for a
 * layer that has printed its own line already: prints nothing. */
void sstep_abort_quiet(lpf_t ctx);

#endif
