/*
 * Checked mode (SUPERSTEP_CHECK=1|strict; docs/checked.md): the costlier
 * checks of lpf-core.md §12 and bsplib.md §8, and the determinism checker.
 * The request path branches once on ctx->checked; everything else lives
 * here. Off, none of this runs.
 */
#ifndef SSTEP_CHECKED_H
#define SSTEP_CHECKED_H

#include "core_internal.h"

/* SUPERSTEP_CHECK: 0 off, 1 on, 2 strict (read once) */
SSTEP_HIDDEN int sstep_chk_mode(void);

/* checked_heap.c (the shared library only; absent: 0 everywhere): the
 * identity of the heap block starting at p, equal on every process that
 * made it by the same call in the same order; 0 when not known */
SSTEP_HIDDEN __attribute__((weak)) uint64_t sstep_heap_key(const void *p);

/* context life cycle: sets ctx->checked and ctx->chk */
SSTEP_HIDDEN void sstep_chk_attach(struct sstep_ctx *ctx);
SSTEP_HIDDEN void sstep_chk_detach(struct sstep_ctx *ctx);

/* request flags */
#define SSTEP_CHK_USER 1u  /* lpf_put / lpf_get: counts against the capacity */
#define SSTEP_CHK_PTR 2u   /* a layer's raw-pointer put/get (bsp_hpput, ...) */

/* A request was just queued (index ctx->q.n - 1): remote bounds at the call,
 * bookkeeping for the sync. lslot: the local slot (user requests) or
 * LPF_INVALID_MEMSLOT. */
SSTEP_HIDDEN void sstep_chk_request(struct sstep_ctx *ctx, const char *prim, int kind,
        unsigned flags, lpf_pid_t pid, uint32_t slot, size_t off, size_t size,
        lpf_memslot_t lslot);
/* remote bounds only (buffered puts) */
SSTEP_HIDDEN void sstep_chk_remote(struct sstep_ctx *ctx, const char *prim, int kind,
        lpf_pid_t pid, uint32_t slot, size_t off, size_t size);

/* the size process pid registered for a global slot, as told at the syncs
 * (SIZE_MAX: unknown); lets layers return their bounds error where the
 * engine cannot tell the size, instead of the abort at the call */
SSTEP_HIDDEN size_t sstep_chk_remote_size(const struct sstep_ctx *ctx, lpf_pid_t pid,
        uint32_t slot);

/* global (de)registrations, and the use check of lpf_deregister (called
 * before the slot is freed) */
SSTEP_HIDDEN void sstep_chk_register(struct sstep_ctx *ctx, uint32_t idx, size_t size);
SSTEP_HIDDEN void sstep_chk_deregister(struct sstep_ctx *ctx, lpf_memslot_t h, int local,
        uint32_t idx);

/* the sync: before the exchange (may run an internal metadata superstep;
 * returns its error) and after a successful exchange */
SSTEP_HIDDEN lpf_err_t sstep_chk_sync_begin(struct sstep_ctx *ctx);
SSTEP_HIDDEN void sstep_chk_sync_end(struct sstep_ctx *ctx);

#endif
