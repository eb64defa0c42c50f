/*
 * <lpf/core.h> -- the LPF-compatible core of Superstep.
 *
 * Twelve primitives with BSP cost guarantees: lpf_exec, lpf_hook, lpf_rehook,
 * lpf_register_global, lpf_register_local, lpf_deregister, lpf_put, lpf_get,
 * lpf_sync, lpf_probe, lpf_resize_memory_register, lpf_resize_message_queue.
 *
 * Names, types and constants follow the LPF contract (spec/lpf-core.md) so
 * that existing LPF programs compile unmodified against this header.
 */
#ifndef LPF_CORE_H
#define LPF_CORE_H

#ifdef __cplusplus
# include <cstddef>
# include <climits>
#else
# include <stddef.h>
# include <limits.h>
#endif

/* symbol-visibility helpers (must compile with or without _LPFLIB_DLL) */
#ifndef _LPFLIB_API
# if defined(_LPFLIB_DLL) && defined(__GNUC__)
#  define _LPFLIB_API __attribute__((visibility("default")))
# else
#  define _LPFLIB_API
# endif
#endif
#ifndef _LPFLIB_VAR
# define _LPFLIB_VAR _LPFLIB_API
#endif
#ifndef _LPFLIB_LOCAL
# if defined(__GNUC__)
#  define _LPFLIB_LOCAL __attribute__((visibility("hidden")))
# else
#  define _LPFLIB_LOCAL
# endif
#endif

#define _LPF_VERSION 202000L
#define _LPF_INCLUSIVE_MEMORY 202000L

#include <lpf/static_dispatch.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void * lpf_t;
typedef unsigned lpf_pid_t;
typedef int lpf_err_t;
typedef void * lpf_init_t;
typedef int lpf_sync_attr_t;
typedef int lpf_msg_attr_t;
#ifdef __cplusplus
typedef std::size_t lpf_memslot_t;
#else
typedef size_t lpf_memslot_t;
#endif
typedef void (*lpf_func_t) ();

typedef struct lpf_args {
    const void * input;
    size_t input_size;
    void * output;
    size_t output_size;
    const lpf_func_t * f_symbols;
    size_t f_size;
} lpf_args_t;

typedef struct lpf_machine {
    lpf_pid_t p;
    lpf_pid_t free_p;
    double (*g) (lpf_pid_t p, size_t min_msg_size, lpf_sync_attr_t attr);
    double (*l) (lpf_pid_t p, size_t min_msg_size, lpf_sync_attr_t attr);
} lpf_machine_t;

typedef void (*lpf_spmd_t) ( const lpf_t ctx, const lpf_pid_t pid,
        const lpf_pid_t nprocs, const lpf_args_t args );

extern _LPFLIB_VAR const lpf_err_t LPF_SUCCESS;
extern _LPFLIB_VAR const lpf_err_t LPF_ERR_OUT_OF_MEMORY;
extern _LPFLIB_VAR const lpf_err_t LPF_ERR_FATAL;
extern _LPFLIB_VAR const lpf_t LPF_ROOT;
extern _LPFLIB_VAR const lpf_t LPF_NONE;
extern _LPFLIB_VAR const lpf_init_t LPF_INIT_NONE;
extern _LPFLIB_VAR const lpf_args_t LPF_NO_ARGS;
extern _LPFLIB_VAR const lpf_pid_t LPF_MAX_P;
extern _LPFLIB_VAR const lpf_sync_attr_t LPF_SYNC_DEFAULT;
extern _LPFLIB_VAR const lpf_msg_attr_t LPF_MSG_DEFAULT;
extern _LPFLIB_VAR const lpf_memslot_t LPF_INVALID_MEMSLOT;
extern _LPFLIB_VAR const lpf_machine_t LPF_INVALID_MACHINE;

extern _LPFLIB_API
lpf_err_t lpf_exec( lpf_t ctx, lpf_pid_t P, lpf_spmd_t spmd, lpf_args_t args );

extern _LPFLIB_API
lpf_err_t lpf_hook( lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args );

extern _LPFLIB_API
lpf_err_t lpf_rehook( lpf_t ctx, lpf_spmd_t spmd, lpf_args_t args );

extern _LPFLIB_API
lpf_err_t lpf_register_global( lpf_t ctx, void * pointer, size_t size,
        lpf_memslot_t * memslot );

extern _LPFLIB_API
lpf_err_t lpf_register_local( lpf_t ctx, void * pointer, size_t size,
        lpf_memslot_t * memslot );

extern _LPFLIB_API
lpf_err_t lpf_deregister( lpf_t ctx, lpf_memslot_t memslot );

extern _LPFLIB_API
lpf_err_t lpf_put( lpf_t ctx, lpf_memslot_t src_slot, size_t src_offset,
        lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset,
        size_t size, lpf_msg_attr_t attr );

extern _LPFLIB_API
lpf_err_t lpf_get( lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_offset, lpf_memslot_t dst_slot, size_t dst_offset,
        size_t size, lpf_msg_attr_t attr );

extern _LPFLIB_API
lpf_err_t lpf_sync( lpf_t ctx, lpf_sync_attr_t attr );

extern _LPFLIB_API
lpf_err_t lpf_probe( lpf_t ctx, lpf_machine_t * params );

extern _LPFLIB_API
lpf_err_t lpf_resize_memory_register( lpf_t ctx, size_t max_regs );

extern _LPFLIB_API
lpf_err_t lpf_resize_message_queue( lpf_t ctx, size_t max_msgs );

#ifdef __cplusplus
}
#endif

#endif /* LPF_CORE_H */
