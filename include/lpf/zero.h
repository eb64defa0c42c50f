/*
 * <lpf/zero.h> -- zero-cost synchronisation: each process states how many
 * messages it sends and receives in a superstep and leaves the superstep
 * without a barrier (spec/lpf-ext.md §4; docs/lpf-extensions.md).
 */
#ifndef LPF_ZERO_H
#define LPF_ZERO_H

#include <lpf/core.h>

#define LPF_ZERO_COST_SYNC 202500L

#ifdef __cplusplus
extern "C" {
#endif

extern _LPFLIB_API lpf_err_t lpf_zero_create_mattr(lpf_t ctx, lpf_msg_attr_t *attr);
extern _LPFLIB_API lpf_err_t lpf_zero_create_sattr(lpf_t ctx, lpf_sync_attr_t *attr);
extern _LPFLIB_API lpf_err_t lpf_zero_destroy_mattr(lpf_t ctx, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_zero_destroy_sattr(lpf_t ctx, lpf_sync_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_zero_set_expected(lpf_t ctx, size_t expected_sent,
        size_t expected_rcvd, lpf_sync_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_zero_get_expected(lpf_t ctx, lpf_sync_attr_t attr,
        size_t *expected_sent, size_t *expected_rcvd);
extern _LPFLIB_API lpf_err_t lpf_zero_get_status(lpf_t ctx, lpf_sync_attr_t attr,
        size_t *rcvd, size_t *sent);

#ifdef __cplusplus
}
#endif

#endif
