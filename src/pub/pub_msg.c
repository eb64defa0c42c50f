/*
 * pub_msg.c: the message buffer and message passing: indexing a delivery's
 * plain messages (aligned, sorted by source) until the object's next
 * synchronisation, bsp_send / bsp_hpsend, and the buffer reads (bsp_nmsgs,
 * bsp_getmsg, bsp_findmsg, bspmsg_*).
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <limits.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Message buffer                                                       */
/* ------------------------------------------------------------------ */

PUB_HIDDEN void pub_release_inbox(struct pub_obj *o)
{
    if (o->has_inbox) {
        sstep_inbox_release(o->run->ctx, o->inbox_stamp);
        o->has_inbox = 0;
    }
    for (size_t i = 0; i < o->ncopies; ++i) free(o->copies[i]);
    o->ncopies = 0;
    o->nmsgs = 0;
}

/* payload at data + off, aligned to max_align_t (copied if the engine
 * delivered it elsewhere) */
PUB_HIDDEN char *pub_aligned_payload(struct pub_obj *o, const char *prim, const char *data,
        size_t off, size_t size)
{
    const char *p = data + off;
    if (PUB_LIKELY(((uintptr_t)p & (alignof(max_align_t) - 1)) == 0)) return (char *)(uintptr_t)p;
    char *c = aligned_alloc(alignof(max_align_t),
            (size + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t)
            + alignof(max_align_t));
    if (!c) pub_die_oom(o, prim, size);
    memcpy(c, p, size);
    if (o->ncopies == o->copies_alloc) {
        o->copies_alloc = o->copies_alloc ? 2 * o->copies_alloc : 16;
        o->copies = pub_xrealloc(o, prim, o->copies, o->copies_alloc, sizeof *o->copies);
    }
    o->copies[o->ncopies++] = c;
    return c;
}

/* stable counting sort by source (only if the engine did not group them) */
PUB_HIDDEN void pub_sort_by_src(struct pub_obj *o, const char *prim)
{
    size_t n = o->nmsgs, *cnt = calloc((size_t)o->p + 1, sizeof *cnt);
    struct pub_msg *t = malloc((n ? n : 1) * sizeof *t);
    if (!cnt || !t) pub_die_oom(o, prim, n * sizeof *t);
    for (size_t i = 0; i < n; ++i) cnt[o->msgs[i].src + 1]++;
    for (int i = 0; i < o->p; ++i) cnt[i + 1] += cnt[i];
    for (size_t i = 0; i < n; ++i) t[cnt[o->msgs[i].src]++] = o->msgs[i];
    memcpy(o->msgs, t, n * sizeof *t);
    free(t);
    free(cnt);
}

/* ------------------------------------------------------------------ */
/* Message passing and the message buffer                               */
/* ------------------------------------------------------------------ */

PUB_HIDDEN void pub_send_one(struct pub_obj *o, const char *prim, int dest, const void *buf,
        size_t size)
{
    void *m;
    if (PUB_UNLIKELY(size > SIZE_MAX - PUB_HDR)) pub_die_oom(o, prim, size);
    lpf_err_t rc = sstep_send_buf(o->run->ctx, (lpf_pid_t)(o->lo + dest), size + PUB_HDR, &m);
    if (PUB_UNLIKELY(rc != LPF_SUCCESS)) {
        if (rc == LPF_ERR_OUT_OF_MEMORY) pub_die_oom(o, prim, size + PUB_HDR);
        pub_die(o, prim, "the run has failed");
    }
    uint32_t tag = PUB_TAG_MSG;
    memcpy(m, &tag, 4);
    if (size) memcpy((char *)m + PUB_HDR, buf, size);
    o->nreq++;
    if (dest == o->s) o->nself++;
}

static inline void check_dest(struct pub_obj *o, const char *prim, int dest, const void *buf,
        size_t size)
{
    if (PUB_UNLIKELY(dest < 0 || dest >= o->p))
        pub_die(o, prim, "dest %d is out of range (the group has %d processes)", dest, o->p);
    if (PUB_UNLIKELY(buf == NULL && size > 0)) pub_die(o, prim, "buf is NULL (size %zu)", size);
}

void pub_send(pbsp bsp, int dest, const void *buf, size_t size)
{
    static const char prim[] = "bsp_send";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    check_dest(o, prim, dest, buf, size);
    pub_send_one(o, prim, dest, buf, size);
}

void pub_hpsend(pbsp bsp, int dest, const void *buf, size_t size)
{
    /* the core has no unbuffered message yet: copied at the call (allowed:
     * the program keeps buf unchanged anyway) */
    static const char prim[] = "bsp_hpsend";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    check_dest(o, prim, dest, buf, size);
    pub_send_one(o, prim, dest, buf, size);
}

int pub_nmsgs(pbsp bsp)
{
    struct pub_obj *o = pub_obj_any("bsp_nmsgs", bsp);
    return o->nmsgs > (size_t)INT_MAX ? INT_MAX : (int)o->nmsgs;
}

pbspmsg pub_getmsg(pbsp bsp, int i)
{
    static const char prim[] = "bsp_getmsg";
    struct pub_obj *o = pub_obj_any(prim, bsp);
    if (PUB_UNLIKELY(i < 0 || (size_t)i >= o->nmsgs))
        pub_die(o, prim, "i = %d is out of range (bsp_nmsgs is %zu)", i, o->nmsgs);
    return &o->msgs[i];
}

pbspmsg pub_findmsg(pbsp bsp, int src, int i)
{
    static const char prim[] = "bsp_findmsg";
    struct pub_obj *o = pub_obj_any(prim, bsp);
    if (PUB_UNLIKELY(src < 0 || src >= o->p))
        pub_die(o, prim, "src %d is out of range (the group has %d processes)", src, o->p);
    if (i < 0) return NULL;
    size_t lo = 0, hi = o->nmsgs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->msgs[mid].src < src) lo = mid + 1;
        else hi = mid;
    }
    size_t j = lo + (size_t)i;
    if (j < lo || j >= o->nmsgs || o->msgs[j].src != src) return NULL;
    return &o->msgs[j];
}

void *pubmsg_data(pbspmsg msg)
{
    if (PUB_UNLIKELY(msg == NULL)) pub_die(NULL, "bspmsg_data", "msg is NULL");
    return msg->data;
}

size_t pubmsg_size(pbspmsg msg)
{
    if (PUB_UNLIKELY(msg == NULL)) pub_die(NULL, "bspmsg_size", "msg is NULL");
    return msg->size;
}

int pubmsg_src(pbspmsg msg)
{
    if (PUB_UNLIKELY(msg == NULL)) pub_die(NULL, "bspmsg_src", "msg is NULL");
    return msg->src;
}
