/*
 * <lpf/bsmp.h> -- bulk-synchronous message passing on the public core
 * <lpf/core.h>.
 *
 * An lpf_bsmp_t alternates between WRITE mode (lpf_send queues messages) and
 * READ mode (lpf_move pops the messages received); each lpf_bsmp_sync (or
 * lpf_bsmp_syncall) switches the mode with exactly one lpf_sync. Limits,
 * message-queue needs and memory use are described in docs/collectives.md.
 */
#ifndef LPF_BSMP_H
#define LPF_BSMP_H

#include <lpf/core.h>

#define _LPF_BMSP_VERSION 201500L

/* C99 `restrict` is not a C++ keyword: spell it __restrict__ temporarily */
#ifdef __cplusplus
# ifndef restrict
#  define restrict __restrict__
#  define _LPF_BSMP_UNDEF_RESTRICT
# endif
extern "C" {
#endif

enum lpf_bsmp_mode { READ, WRITE };

/* Public for compatibility; programs must not depend on the members. */
struct lpf_bsmp_buffer {
    size_t buffer_size, tag_size, queued;
    size_t * restrict remote_pos;
    size_t * restrict local_pos;
    size_t * restrict headers;
    char * restrict message_queue;
    lpf_memslot_t in_slot, out_slot, rpos_slot, lpos_slot;
    lpf_pid_t s, p, pid_pos;
    enum lpf_bsmp_mode mode;
    lpf_t ctx;
};

typedef struct lpf_bsmp_buffer * lpf_bsmp_t;

extern _LPFLIB_VAR const lpf_bsmp_t LPF_INVALID_BSMP;
extern _LPFLIB_VAR const lpf_err_t LPF_ERR_BSMP_FULL;
extern _LPFLIB_VAR const lpf_err_t LPF_ERR_BSMP_INVAL;
extern _LPFLIB_VAR const size_t LPF_INVALID_SIZE;
extern _LPFLIB_VAR const lpf_memslot_t LPF_INVALID_MEMSLOT; /* as in core.h */

extern _LPFLIB_API
lpf_err_t lpf_bsmp_create( const lpf_t ctx, const lpf_pid_t s, const lpf_pid_t p,
        const size_t buffer_size, const size_t tag_size,
        const size_t max_messages, lpf_bsmp_t * const bsmp );

extern _LPFLIB_API
lpf_err_t lpf_bsmp_destroy( lpf_bsmp_t * const bsmp );

extern _LPFLIB_API
lpf_err_t lpf_send( const lpf_bsmp_t bsmp, const lpf_pid_t pid,
        const lpf_memslot_t tag, const size_t tag_offset,
        const lpf_memslot_t payload, const size_t payload_offset,
        const size_t payload_size );

extern _LPFLIB_API
lpf_err_t lpf_bsmp_sync( lpf_bsmp_t bsmp, lpf_sync_attr_t hint );

extern _LPFLIB_API
lpf_err_t lpf_bsmp_syncall( lpf_bsmp_t * const bsmp, const size_t num_objects,
        lpf_sync_attr_t hint );

extern _LPFLIB_API
lpf_err_t lpf_move( lpf_bsmp_t bsmp, void * * const tag_p,
        void * * const payload_p, size_t * const size );

#ifdef __cplusplus
}
# ifdef _LPF_BSMP_UNDEF_RESTRICT
#  undef restrict
#  undef _LPF_BSMP_UNDEF_RESTRICT
# endif
#endif

#endif /* LPF_BSMP_H */
