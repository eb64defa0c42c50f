/*
 * <lpf/noc.h> -- non-coherent registration: memory registered locally,
 * without a sync, whose slot travels to other processes as plain bytes
 * (spec/lpf-ext.md §5; docs/lpf-extensions.md).
 */
#ifndef LPF_NOC_H
#define LPF_NOC_H

#include <lpf/core.h>

#define _LPF_NOC_VERSION 202400L

#ifdef __cplusplus
extern "C" {
#endif

extern _LPFLIB_API lpf_err_t lpf_noc_resize_memory_register(lpf_t ctx, size_t max_regs);
extern _LPFLIB_API lpf_err_t lpf_noc_register(lpf_t ctx, void *pointer, size_t size,
        lpf_memslot_t *memslot);
extern _LPFLIB_API lpf_err_t lpf_noc_put(lpf_t ctx, lpf_memslot_t src_slot,
        size_t src_offset, lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset,
        size_t size, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_noc_get(lpf_t ctx, lpf_pid_t src_pid,
        lpf_memslot_t src_slot, size_t src_offset, lpf_memslot_t dst_slot,
        size_t dst_offset, size_t size, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_noc_serialize_slot(lpf_t ctx, lpf_memslot_t slot,
        char **buff, size_t *buff_size);
extern _LPFLIB_API lpf_err_t lpf_noc_deserialize_slot(lpf_t ctx, char *buff,
        lpf_memslot_t slot);
extern _LPFLIB_API lpf_err_t lpf_noc_deregister(lpf_t ctx, lpf_memslot_t memslot);

#ifdef __cplusplus
}
#endif

#endif
