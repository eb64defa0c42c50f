/*
 * <lpf/collectives.h> -- collective communication on (subsets of) the
 * processes of an LPF context, built on the public core <lpf/core.h> only.
 *
 * Every operation is collective over the members of an lpf_coll_t; its
 * result is guaranteed after the caller's next lpf_sync. Some operations
 * call lpf_sync internally (broadcast 0 or 1 times, reduce, allreduce,
 * combine and allcombine once, the others never); the count is the same on
 * every member. Algorithms, their selection rule and the message-queue
 * capacities they need are described in docs/collectives.md.
 */
#ifndef LPF_COLLECTIVES_H
#define LPF_COLLECTIVES_H

#include <lpf/core.h>
#include <stdbool.h>

#define _LPF_COLLECTIVES_VERSION 201500L

/* C99 `restrict` is not a C++ keyword: spell it __restrict__ temporarily */
#ifdef __cplusplus
# ifndef restrict
#  define restrict __restrict__
#  define _LPF_COLLECTIVES_UNDEF_RESTRICT
# endif
extern "C" {
#endif

typedef struct lpf_coll {
    lpf_t ctx;                   /* the context given at init */
    lpf_pid_t * inv_translate;   /* pid -> member index (LPF_MAX_P: none) */
    lpf_pid_t * translate;       /* member index -> pid */
    void * buffer;               /* internal buffer (NULL when empty) */
    lpf_memslot_t slot;          /* its global slot (LPF_INVALID_MEMSLOT) */
    lpf_pid_t P;                 /* number of members */
    lpf_pid_t s;                 /* own member index (LPF_MAX_P: none) */
} lpf_coll_t;

/* fold n consecutive elements at `array` into *value */
typedef void (*lpf_reducer_t) ( size_t n, const void * array, void * value );

/* element-wise into[i] = into[i] (+) combine[i], for i < n */
typedef void (*lpf_combiner_t) ( size_t n, const void * combine, void * into );

extern _LPFLIB_VAR const lpf_coll_t LPF_INVALID_COLL;

extern _LPFLIB_API
lpf_err_t lpf_collectives_init( lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
        size_t max_calls, size_t max_elem_size, size_t max_byte_size,
        lpf_coll_t * coll );

extern _LPFLIB_API
lpf_err_t lpf_collectives_init_strided( lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
        lpf_pid_t lo, lpf_pid_t hi, lpf_pid_t str, size_t max_calls,
        size_t max_elem_size, size_t max_byte_size, lpf_coll_t * coll );

extern _LPFLIB_API
lpf_t lpf_collectives_get_context( lpf_coll_t coll );

extern _LPFLIB_API
lpf_err_t lpf_collectives_destroy( lpf_coll_t coll );

extern _LPFLIB_API
lpf_err_t lpf_broadcast( lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, lpf_pid_t root );

extern _LPFLIB_API
lpf_err_t lpf_gather( lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, lpf_pid_t root );

extern _LPFLIB_API
lpf_err_t lpf_scatter( lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, lpf_pid_t root );

extern _LPFLIB_API
lpf_err_t lpf_allgather( lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, bool exclude_myself );

extern _LPFLIB_API
lpf_err_t lpf_alltoall( lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size );

extern _LPFLIB_API
lpf_err_t lpf_reduce( lpf_coll_t coll, void * restrict element,
        lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer,
        lpf_pid_t root );

extern _LPFLIB_API
lpf_err_t lpf_allreduce( lpf_coll_t coll, void * restrict element,
        lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer );

extern _LPFLIB_API
lpf_err_t lpf_combine( lpf_coll_t coll, void * restrict array,
        lpf_memslot_t slot, size_t num, size_t size, lpf_combiner_t combiner,
        lpf_pid_t root );

extern _LPFLIB_API
lpf_err_t lpf_allcombine( lpf_coll_t coll, void * restrict array,
        lpf_memslot_t slot, size_t num, size_t size, lpf_combiner_t combiner );

#ifdef __cplusplus
}
# ifdef _LPF_COLLECTIVES_UNDEF_RESTRICT
#  undef restrict
#  undef _LPF_COLLECTIVES_UNDEF_RESTRICT
# endif
#endif

#endif /* LPF_COLLECTIVES_H */
