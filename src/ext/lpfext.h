/*
 * LPF's extensions (tags, zero-cost syncs, noc slots): the state kept per
 * context (struct sstep_lext, made on first use) and what the three files
 * share. lx_attr.c: attributes and tags; lx_sync.c: tagged and zero-cost
 * syncs; lx_noc.c: noc slots and the slot checks of extension requests.
 */
#ifndef SSTEP_LPFEXT_H
#define SSTEP_LPFEXT_H

#include "core_internal.h"
#include <lpf/tags.h>
#include <lpf/zero.h>
#include <lpf/noc.h>
#include <string.h>

/* the subset and oblivious syncs tags and zero-cost syncs run on (every
 * engine has them) */
static inline int lx_no_range(const struct sstep_ctx *ctx)
{
    return ctx->engine->sync_range == NULL;
}

enum { LX_ATTR_FREE = 0, LX_ATTR_MSG = 1, LX_ATTR_SYNC = 2,
       LX_ATTR_LENIENT = 0x100 /* | kind: other values mean the default */ };

struct lx_attr {
    uint32_t kind;       /* LX_ATTR_* */
    lpf_tag_t tag;       /* LPF_INVALID_TAG: none */
    size_t es, er;       /* expected sent / received (sync attributes) */
};

/* a tagged request waiting for its phase's sync */
struct lx_req {
    char *local;
    size_t size, off;
    uint32_t slot;
    lpf_pid_t pid;
    int kind;            /* SSTEP_PUT / SSTEP_GET */
};

struct lx_tag {
    int live, active;
    uint64_t object;     /* stamp object of its syncs (equal everywhere) */
    uint64_t steps;      /* its syncs done here */
    lpf_pid_t lo, n;     /* its first active pid, and how many */
    lpf_pid_t nactive;
    int contiguous;      /* the active set is lo..lo+n-1 */
    unsigned char *member;   /* [nprocs] */
    lpf_pid_t *mlist;        /* [nactive] the active pids, increasing (in member's block) */
    struct lx_req *reqs;
    size_t nreq, cap;
};

/* stamp objects (sstep_stamp.object) of the extensions' syncs */
#define LX_OBJ_ZERO   0x4c5a000000000000ull  /* untagged zero-cost syncs */
#define LX_OBJ_TAG    0x4c54000000000000ull  /* | creation number of the tag */
#define LX_OBJ_CREATE 0x4c43000000000000ull  /* lpf_tag_create's exchange */

/* noc handles: (owner pid << 32) | ((SSTEP_NOC_BIT | gen << 22 | index) << 1) */
#define LX_NOC_IDX_BITS 22
#define LX_NOC_MAX ((1u << LX_NOC_IDX_BITS) - 1)
_Static_assert(LX_NOC_MAX == SSTEP_NOC_INDEX, "the core knows where a noc index ends");

struct sstep_lext {
    uint32_t serial;         /* tells attributes of other contexts apart */
    struct lx_attr *attrs;
    size_t nattrs, attrcap;
    struct lx_tag *tags;
    size_t ntags;            /* ids in use so far (0..ntags-1) */
    size_t tagalloc;         /* entries allocated in tags */
    size_t tag_cap, tag_cap_pending, tags_live;
    uint64_t tag_creates, tag_hist;
    size_t tagged_pending;
    uint64_t zero_steps;     /* untagged zero-cost syncs done */
    /* noc registrations: read by peers (sstep_noc_resolve) on pthread */
    _Atomic(struct sstep_slot_array *) noc;
    lpf_memslot_t *alias;    /* deserialized slots: the remote handle */
    uint32_t *noc_free;
    uint32_t noc_fresh, noc_nfree;
    size_t noc_cap, noc_live;
    struct sstep_slot_array **retired;
    size_t nretired;
};

SSTEP_HIDDEN struct sstep_lext *lx_get(struct sstep_ctx *ctx);
/* the engine lacks what an extension needs: one line and the end of the
 * run; only the first thread of an OS process that gets here reports (the
 * others wait for the end: concurrent aborts of one rank's threads are not
 * safe on the hybrid engine) */
SSTEP_HIDDEN SSTEP_NORETURN void lx_unsupported(struct sstep_ctx *ctx, const char *prim,
        const char *what);
/* the attribute behind a handle (kind LX_ATTR_MSG or _SYNC); NULL for the
 * default; a misuse ends the program */
SSTEP_HIDDEN struct lx_attr *lx_attr_of(struct sstep_ctx *ctx, const char *prim,
        int handle, uint32_t kind);
SSTEP_HIDDEN struct lx_tag *lx_tag_of(struct sstep_ctx *ctx, const char *prim, lpf_tag_t tag);

/* slot checks of extension requests: a local area (core local/global slot
 * or own noc slot), and the index that names a remote area at pid */
SSTEP_HIDDEN char *lx_local_area(struct sstep_ctx *ctx, const char *prim, const char *what,
        lpf_memslot_t h, size_t off, size_t size);
SSTEP_HIDDEN uint32_t lx_remote_idx(struct sstep_ctx *ctx, const char *prim, const char *what,
        lpf_memslot_t h, lpf_pid_t pid);
/* what the core reaches through sstep_lpfext (lx_table.c) */
SSTEP_HIDDEN const struct sstep_slot *sstep_noc_entry(struct sstep_ctx *owner, uint32_t slot);
SSTEP_HIDDEN char *sstep_noc_resolve(struct sstep_ctx *owner, uint32_t slot,
        size_t off, size_t size);
SSTEP_HIDDEN SSTEP_NORETURN void sstep_noc_range_error(struct sstep_ctx *owner,
        const char *primitive, lpf_pid_t issuer, uint32_t slot, size_t off, size_t size);
SSTEP_HIDDEN void sstep_lext_free(struct sstep_ctx *ctx);
SSTEP_HIDDEN lpf_err_t sstep_noc_deregister(struct sstep_ctx *ctx, lpf_memslot_t h);
SSTEP_HIDDEN void sstep_lext_flush(struct sstep_ctx *ctx);
SSTEP_HIDDEN lpf_err_t sstep_lext_sync(lpf_t ctx, lpf_sync_attr_t attr, const void *site);
SSTEP_HIDDEN lpf_err_t sstep_lext_put(lpf_t ctx, lpf_memslot_t src_slot, size_t src_offset,
        lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset, size_t size,
        lpf_msg_attr_t attr, int get);

/* queue a checked request: into its tag's phase or the core queue */
SSTEP_HIDDEN lpf_err_t lx_enqueue(struct sstep_ctx *ctx, const char *prim, int kind,
        lpf_pid_t pid, char *local, uint32_t idx, size_t off, size_t size,
        lpf_memslot_t lslot, lpf_msg_attr_t attr);

#endif
