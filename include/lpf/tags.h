/*
 * <lpf/tags.h> -- tags: a sync that ends one communication phase among the
 * tag's active processes only (spec/lpf-ext.md §3; docs/lpf-extensions.md).
 */
#ifndef LPF_TAGS_H
#define LPF_TAGS_H

#include <lpf/core.h>
#ifdef __cplusplus
# include <cstdint>
#else
# include <stdint.h>
# include <stdbool.h>
#endif

#define _LPF_TAGS_VERSION 202500L

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t lpf_tag_t;

extern _LPFLIB_VAR const lpf_tag_t LPF_INVALID_TAG;   /* UINT32_MAX */

extern _LPFLIB_API lpf_err_t lpf_resize_tag_register(lpf_t ctx, size_t max_tags);
extern _LPFLIB_API lpf_err_t lpf_tag_create(lpf_t ctx, bool active, lpf_tag_t *tag);
extern _LPFLIB_API lpf_err_t lpf_tag_destroy(lpf_t ctx, lpf_tag_t tag);
extern _LPFLIB_API lpf_err_t lpf_tag_create_mattr(lpf_t ctx, lpf_msg_attr_t *attr);
extern _LPFLIB_API lpf_err_t lpf_tag_create_sattr(lpf_t ctx, lpf_sync_attr_t *attr);
extern _LPFLIB_API lpf_err_t lpf_tag_destroy_mattr(lpf_t ctx, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_tag_destroy_sattr(lpf_t ctx, lpf_sync_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_tag_get_mattr(lpf_t ctx, lpf_msg_attr_t attr, lpf_tag_t *tag);
extern _LPFLIB_API lpf_err_t lpf_tag_set_mattr(lpf_t ctx, lpf_tag_t tag, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_tag_get_sattr(lpf_t ctx, lpf_sync_attr_t attr, lpf_tag_t *tag);
extern _LPFLIB_API lpf_err_t lpf_tag_set_sattr(lpf_t ctx, lpf_tag_t tag, lpf_sync_attr_t attr);

#ifdef __cplusplus
}
#endif

#endif
