/* Internal helpers of the pthread engine. */
#ifndef SSTEP_PTHREAD_INTERNAL_H
#define SSTEP_PTHREAD_INTERNAL_H

#define _GNU_SOURCE
#include "../../core/core_internal.h"

#include <pthread.h>
#include <sched.h>

/* affinity.c: CPU for a slice starting at fraction lo of the machine
 * (-1: no pinning) */
SSTEP_HIDDEN int pt_cpus_for(double lo, double span, unsigned P, unsigned s, cpu_set_t *set);
SSTEP_HIDDEN int pt_pin_attr(pthread_attr_t *attr, const cpu_set_t *set);
SSTEP_HIDDEN int pt_pin_self(const cpu_set_t *set, cpu_set_t *saved);
SSTEP_HIDDEN void pt_unpin_self(const cpu_set_t *saved);

/* pt_range.c: E1/E2 (PUB extensions) on this engine */
struct pt_range;
SSTEP_HIDDEN struct pt_range *pt_range_new(lpf_pid_t P);
SSTEP_HIDDEN void pt_range_free(struct pt_range *r);
SSTEP_HIDDEN lpf_err_t pt_sync_range(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect, struct sstep_sync_info *info);
/* an ordinary sync blocked for 0.1 s in a section with range syncs takes
 * part in their deadlock detection: call with *entered 0 first, then again
 * after every wake-up (returns 1 once a deadlock is declared); done when
 * the wait ends (if *entered) */
SSTEP_HIDDEN int pt_range_plain_blocked(struct sstep_ctx *ctx, int *entered);
SSTEP_HIDDEN void pt_range_plain_done(struct sstep_ctx *ctx);
SSTEP_HIDDEN int pt_range_deadlocked(struct sstep_ctx *ctx);

/* pthread_engine.c: what pt_range.c uses of the engine */
SSTEP_HIDDEN struct pt_range *pt_x_range(struct sstep_ctx *ctx);
SSTEP_HIDDEN struct sstep_ctx *pt_x_ctx(struct sstep_ctx *ctx, lpf_pid_t q);
SSTEP_HIDDEN int pt_x_gone(struct sstep_ctx *ctx, lpf_pid_t q);
SSTEP_HIDDEN void pt_x_wake(struct sstep_ctx *ctx);
SSTEP_HIDDEN void pt_x_leave(struct sstep_ctx *ctx);
SSTEP_HIDDEN void pt_x_count_readers(struct sstep_ctx *ctx);
SSTEP_HIDDEN int pt_x_get_phase(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members);
SSTEP_HIDDEN void pt_x_push(struct sstep_ctx *ctx);
SSTEP_HIDDEN void pt_x_stalled(struct sstep_ctx *ctx, uint64_t waited, lpf_pid_t n,
        const unsigned char *state, const uint64_t *steps);
SSTEP_HIDDEN int pt_x_wait(struct sstep_ctx *ctx, int (*pred)(void *, uint64_t), void *arg);

#endif
