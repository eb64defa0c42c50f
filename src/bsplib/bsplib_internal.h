/*
 * BSPlib layer internals: the bsplib_t object and the inline fast paths that
 * both <lpf/bsplib.h> (error codes) and <bsp.h> (run-time errors) use.
 *
 * Built on the public core (lpf_register_global, lpf_deregister, ...) plus
 * the layers' fast path of sstep_ext.h. See docs/bsplib.md for the design.
 */
#ifndef SSTEP_BSPLIB_INTERNAL_H
#define SSTEP_BSPLIB_INTERNAL_H

#include <lpf/core.h>
#include <lpf/bsplib.h>
#include "../core/sstep_ext.h"
#include "../core/copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
# define BSPL_LIKELY(x) __builtin_expect(!!(x), 1)
# define BSPL_UNLIKELY(x) __builtin_expect(!!(x), 0)
# define BSPL_HIDDEN __attribute__((visibility("hidden")))
#else
# define BSPL_LIKELY(x) (x)
# define BSPL_UNLIKELY(x) (x)
# define BSPL_HIDDEN
#endif

#define BSPL_NIL UINT32_MAX

/* One registration (one global slot of the core). */
struct bspl_reg {
    const void *addr;        /* identifier on this process */
    size_t size;             /* size registered here */
    size_t *rsize;           /* [nprocs]: size each process registered (SIZE_MAX: unknown) */
    lpf_memslot_t h;         /* core slot (LPF_INVALID_MEMSLOT while deferred) */
    uint32_t below;          /* next older active registration of addr */
    uint32_t next_free;      /* pool free list */
};

/* Hash-map entry: an address with at least one active registration. */
struct bspl_name {
    const void *addr;
    uint32_t top;            /* newest active registration (BSPL_NIL: empty entry) */
    uint32_t cursor;         /* registration the next pop of this superstep removes */
    uint64_t cursor_epoch;   /* superstep the cursor belongs to */
};

/* A message sent with bsplib_hpsend: its payload is copied into staging
 * memory at the sync; its tag (a few bytes) at the call, into hptags, so
 * that a program may reuse one tag variable for several hpsends. */
struct bspl_hpmsg {
    size_t tag_off;          /* in hptags */
    const void *payload;
    size_t size;
    lpf_pid_t pid;
};

/* Messages travel in bundles: one core message per destination and chunk,
 * holding a header and records [uint64 payload size][tag, padded to 8]
 * [payload, padded to 8]. Sending a message appends a record; the bundles
 * are queued when full and at the sync. */
struct bspl_bundle_hdr {
    uint64_t count;          /* records */
    uint64_t bytes;          /* payload bytes */
};
#define BSPL_BHDR ((size_t)sizeof(struct bspl_bundle_hdr))

struct bspl_out {
    char *base;              /* open bundle (NULL: none) */
    size_t used, cap;
    size_t next_cap;         /* size of the next bundle */
};

/* Large puts are staged in layer memory that is reused every superstep (the
 * core's staging alternates between two arenas; for big blocks the reuse
 * keeps the copy in cache) and queued unbuffered from there. */
#define BSPL_BIG_PUT ((size_t)4096)
struct bspl_chunk {
    struct bspl_chunk *next;
    size_t cap;
    max_align_t data[];
};

/* Why the last sync failed (for <bsp.h>'s messages). */
struct bspl_mismatch {
    lpf_pid_t peer;          /* the process that differed (LPF_MAX_P: none) */
    int kind_here, kind_peer;            /* BSPL_KIND_* */
    size_t push_here, push_peer;         /* push counts (mod 2^20) */
    size_t pop_here, pop_peer;           /* pop counts (mod 2^10) */
    int tag_set_here, tag_set_peer;      /* requested a new tag size */
    size_t tag_here, tag_peer;           /* requested tag sizes */
};

enum { BSPL_KIND_SYNC = 0, BSPL_KIND_END = 1, BSPL_KIND_ADMIN = 2, BSPL_KIND_OOM = 3 };

struct BSPlib {
    /* ---- hot: put / get / send ---- */
    lpf_t ctx;
    lpf_pid_t pid, nprocs;
    const void *cache_addr;          /* last identifier looked up */
    struct bspl_reg *cache_reg;      /* its newest active registration (NULL: none) */
    struct bspl_reg *regs;           /* registration pool */
    size_t tag_cur;                  /* tag size of this superstep */
    size_t hp_left;                  /* hp requests still allowed unbuffered */
    int safemode;
    int dirty;                       /* pushes, pops, tag change or hp sends pending */

    /* ---- staging of large puts: reused every superstep (cache-warm) ---- */
    struct bspl_chunk *pstage;       /* chunks, newest first */
    size_t pstage_used;              /* bytes used in the newest chunk */

    /* ---- messages being sent: one bundle per destination ---- */
    struct bspl_out *out;            /* [nprocs] */
    lpf_pid_t *out_list;             /* destinations with an open bundle */
    size_t nout;

    /* ---- received messages: the bundles of the core's inbox ---- */
    int in_stale;                    /* the view must be refreshed from the core */
    const struct sstep_msg *in_msgs; /* bundles */
    size_t in_n;                     /* bundles */
    size_t in_ci, in_off;            /* next record: bundle, offset in it */
    size_t in_left;                  /* messages not yet moved */
    size_t in_bytes;                 /* their payload bytes */
    size_t in_tag;                   /* tag size of the received messages */
    size_t in_tpad;                  /* ... rounded up to 8 */

    /* ---- registrations ---- */
    uint32_t nregs_alloc;
    uint32_t reg_free;               /* pool free list head */
    struct bspl_name *names;         /* open addressing, power of two */
    size_t names_cap, names_used;
    uint32_t *pushes;                /* registrations pushed this superstep */
    size_t npush, push_alloc;
    uint32_t *pops;                  /* registrations popped this superstep */
    size_t npop, pop_alloc;
    uint64_t pop_sig;                /* hash of the popped slots, in order */
    uint64_t epoch;                  /* completed syncs (pop cursors) */
    size_t core_live;                /* core slots this object holds */
    size_t cap;                      /* register capacity all processes agree on */
    size_t ndeferred;                /* pushes waiting for capacity */
    size_t *unknown_rsize;           /* [nprocs] of SIZE_MAX */

    /* ---- tags, hp sends ---- */
    size_t tag_next;
    struct bspl_hpmsg *hpmsgs;
    size_t nhp, hp_alloc;
    char *hptags;            /* tags of this superstep's hp messages */
    size_t hptags_used, hptags_cap;
    size_t max_hp;

    /* ---- saved inbox (after an extra sync) ---- */
    struct sstep_msg *saved_msgs;
    char *saved_data;

    /* ---- time ---- */
    double t0;
    double last_time;

    struct bspl_mismatch mm;
    int failed;
};

/* ------------------------------------------------------------------ */
/* Internal entry points (src/bsplib/bsplib.c)                          */
/* ------------------------------------------------------------------ */

BSPL_HIDDEN struct bspl_reg *bspl_lookup_slow(struct BSPlib *b, const void *addr);
BSPL_HIDDEN bsplib_err_t bspl_sync_slow(struct BSPlib *b, int kind);
BSPL_HIDDEN bsplib_err_t bspl_classify(struct BSPlib *b, uint64_t mine, uint64_t peer,
        lpf_pid_t who);
/* bsplib_destroy in two steps: the collective end, then the release */
BSPL_HIDDEN bsplib_err_t bspl_finish(struct BSPlib *b);
BSPL_HIDDEN void bspl_release(struct BSPlib *b);
/* was addr pushed in this superstep (not active yet)? */
BSPL_HIDDEN int bspl_pending_push(const struct BSPlib *b, const void *addr);
BSPL_HIDDEN void bspl_refresh_inbox(struct BSPlib *b);
BSPL_HIDDEN bsplib_err_t bspl_hpsend_slow(struct BSPlib *b, lpf_pid_t pid,
        const void *tag, const void *payload, size_t size);
/* queue the full bundle to pid (if any) and open one with room for `need` */
BSPL_HIDDEN bsplib_err_t bspl_out_grow(struct BSPlib *b, lpf_pid_t pid, size_t need);
/* staging of `size` bytes for a large put (NULL: out of memory) */
BSPL_HIDDEN char *bspl_pstage_grow(struct BSPlib *b, size_t size);
/* after a sync: the large puts' staging is free again */
BSPL_HIDDEN void bspl_pstage_reset(struct BSPlib *b);
/* queue every open bundle (before a sync) */
BSPL_HIDDEN bsplib_err_t bspl_out_flush(struct BSPlib *b);

/* The newest active registration of addr, or NULL. */
static inline struct bspl_reg *bspl_lookup(struct BSPlib *b, const void *addr)
{
    if (BSPL_LIKELY(addr == b->cache_addr && b->cache_reg != NULL)) return b->cache_reg;
    return bspl_lookup_slow(b, addr);
}

static inline void bspl_copy(void *dst, const void *src, size_t n)
{
    switch (n) {
    case 8: { uint64_t v; memcpy(&v, src, 8); memcpy(dst, &v, 8); return; }
    case 4: { uint32_t v; memcpy(&v, src, 4); memcpy(dst, &v, 4); return; }
    case 16: { uint64_t v[2]; memcpy(v, src, 16); memcpy(dst, v, 16); return; }
    default:
        if (n >= SSTEP_COPY_BULK_MIN) sstep_copy_bulk((char *)dst, (const char *)src, n);
        else if (n) memcpy(dst, src, n);
    }
}

/* Checks shared by put/get/hpput/hpget/direct_get, in the order of
 * lpf-core.md §11.2. `ident` names the remote area (put: dst, get: src);
 * `local` is the other pointer. */
static inline bsplib_err_t bspl_check(struct BSPlib *b, lpf_pid_t pid, const void *local,
        const void *ident, size_t offset, size_t nbytes, struct bspl_reg **out)
{
    if (BSPL_UNLIKELY(local == NULL || ident == NULL)) return BSPLIB_ERR_NULL_POINTER;
    struct bspl_reg *r = bspl_lookup(b, ident);
    if (BSPL_UNLIKELY(r == NULL)) return BSPLIB_ERR_MEMORY_NOT_REGISTERED;
    if (BSPL_UNLIKELY(pid >= b->nprocs)) return BSPLIB_ERR_PID_OUT_OF_RANGE;
    size_t rs = r->rsize[pid];
    if (BSPL_UNLIKELY((offset > rs || nbytes > rs - offset) && b->safemode))
        return BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE;
    *out = r;
    return BSPLIB_SUCCESS;
}

static inline bsplib_err_t bspl_put(struct BSPlib *b, lpf_pid_t pid, const void *src,
        const void *dst, size_t offset, size_t nbytes)
{
    if (BSPL_UNLIKELY(nbytes == 0)) return BSPLIB_SUCCESS;
    struct bspl_reg *r;
    bsplib_err_t e = bspl_check(b, pid, src, dst, offset, nbytes, &r);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) return e;
    if (BSPL_UNLIKELY(nbytes >= BSPL_BIG_PUT)) {
        struct bspl_chunk *c = b->pstage;
        char *buf;
        if (c && c->cap - b->pstage_used >= nbytes) {
            buf = (char *)c->data + b->pstage_used;
            b->pstage_used += (nbytes + 63) & ~(size_t)63;
            if (b->pstage_used > c->cap) b->pstage_used = c->cap;
        } else if ((buf = bspl_pstage_grow(b, nbytes)) == NULL) {
            return BSPLIB_ERR_OUT_OF_MEMORY;
        }
        bspl_copy(buf, src, nbytes);
        lpf_err_t rc = sstep_put_ptr(b->ctx, buf, pid, r->h, offset, nbytes);
        if (BSPL_UNLIKELY(rc != 0 /* LPF_SUCCESS */))
            return rc == LPF_ERR_OUT_OF_MEMORY ? BSPLIB_ERR_OUT_OF_MEMORY : BSPLIB_ERR_FATAL;
        b->dirty = 1;   /* the staging is reset at the sync */
        return BSPLIB_SUCCESS;
    }
    lpf_err_t rc = sstep_put_copy(b->ctx, src, pid, r->h, offset, nbytes);
    if (BSPL_UNLIKELY(rc != 0 /* LPF_SUCCESS */))
        return rc == LPF_ERR_OUT_OF_MEMORY ? BSPLIB_ERR_OUT_OF_MEMORY : BSPLIB_ERR_FATAL;
    return BSPLIB_SUCCESS;
}

static inline bsplib_err_t bspl_hpput(struct BSPlib *b, lpf_pid_t pid, const void *src,
        const void *dst, size_t offset, size_t nbytes)
{
    if (BSPL_UNLIKELY(nbytes == 0)) return BSPLIB_SUCCESS;
    if (BSPL_UNLIKELY(b->hp_left == 0)) return bspl_put(b, pid, src, dst, offset, nbytes);
    struct bspl_reg *r;
    bsplib_err_t e = bspl_check(b, pid, src, dst, offset, nbytes, &r);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) return e;
    b->hp_left--;
    lpf_err_t rc = sstep_put_ptr(b->ctx, src, pid, r->h, offset, nbytes);
    if (BSPL_UNLIKELY(rc != LPF_SUCCESS))
        return rc == LPF_ERR_OUT_OF_MEMORY ? BSPLIB_ERR_OUT_OF_MEMORY : BSPLIB_ERR_FATAL;
    return BSPLIB_SUCCESS;
}

/* get and hpget are the same on every engine: the data is read during the
 * sync, before any put of the superstep lands, and written into dst then. */
static inline bsplib_err_t bspl_get(struct BSPlib *b, lpf_pid_t pid, const void *src,
        size_t offset, void *dst, size_t nbytes)
{
    if (BSPL_UNLIKELY(nbytes == 0)) return BSPLIB_SUCCESS;
    struct bspl_reg *r;
    bsplib_err_t e = bspl_check(b, pid, dst, src, offset, nbytes, &r);
    if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) return e;
    /* a get of bytes onto themselves (BSPedupack's broadcast idiom on its
     * root) is a no-op: it must not write memory that peers read */
    if (BSPL_UNLIKELY(pid == b->pid && (const char *)r->addr + offset == (const char *)dst))
        return BSPLIB_SUCCESS;
    lpf_err_t rc = sstep_get_ptr(b->ctx, pid, r->h, offset, dst, nbytes);
    if (BSPL_UNLIKELY(rc != LPF_SUCCESS))
        return rc == LPF_ERR_OUT_OF_MEMORY ? BSPLIB_ERR_OUT_OF_MEMORY : BSPLIB_ERR_FATAL;
    return BSPLIB_SUCCESS;
}

static inline bsplib_err_t bspl_send(struct BSPlib *b, lpf_pid_t pid, const void *tag,
        const void *payload, size_t nbytes)
{
    const size_t t = b->tag_cur;
    if (BSPL_UNLIKELY((tag == NULL && t != 0) || (payload == NULL && nbytes != 0)))
        return BSPLIB_ERR_NULL_POINTER;
    if (BSPL_UNLIKELY(pid >= b->nprocs)) return BSPLIB_ERR_PID_OUT_OF_RANGE;
    const size_t tp = (t + 7) & ~(size_t)7;
    if (BSPL_UNLIKELY(nbytes > SIZE_MAX / 2 - tp)) return BSPLIB_ERR_OUT_OF_MEMORY;
    const size_t need = 8 + tp + ((nbytes + 7) & ~(size_t)7);
    struct bspl_out *o = &b->out[pid];
    if (BSPL_UNLIKELY(o->cap - o->used < need)) {
        bsplib_err_t e = bspl_out_grow(b, pid, need);
        if (BSPL_UNLIKELY(e != BSPLIB_SUCCESS)) return e;
    }
    char *rec = o->base + o->used;
    const uint64_t sz = nbytes;
    memcpy(rec, &sz, 8);
    if (t) memcpy(rec + 8, tag, t);
    bspl_copy(rec + 8 + tp, payload, nbytes);
    o->used += need;
    struct bspl_bundle_hdr *h = (struct bspl_bundle_hdr *)(void *)o->base;
    h->count++;
    h->bytes += nbytes;
    return BSPLIB_SUCCESS;
}

static inline bsplib_err_t bspl_hpsend(struct BSPlib *b, lpf_pid_t pid, const void *tag,
        const void *payload, size_t nbytes)
{
    if (BSPL_UNLIKELY(b->hp_left == 0)) return bspl_send(b, pid, tag, payload, nbytes);
    return bspl_hpsend_slow(b, pid, tag, payload, nbytes);
}

/* bsplib_sync: a plain superstep end costs one sstep_sync_ext (check 0) */
static inline bsplib_err_t bspl_sync(struct BSPlib *b)
{
    if (BSPL_LIKELY(!b->dirty)) {
        if (b->nout && BSPL_UNLIKELY(bspl_out_flush(b) != BSPLIB_SUCCESS)) b->dirty = 1;
    }
    if (BSPL_LIKELY(!b->dirty)) {
        struct sstep_sync_info info;
        info.check = 0;
        lpf_err_t rc = sstep_sync_ext(b->ctx, &info);
        b->in_stale = 1;
        b->in_tag = b->tag_cur;
        b->hp_left = b->max_hp;
        b->epoch++;
        if (BSPL_UNLIKELY(rc != LPF_SUCCESS)) {
            b->failed = 1;
            return BSPLIB_ERR_FATAL;
        }
        if (BSPL_UNLIKELY(info.mismatch))
            return bspl_classify(b, 0, info.peer_check, info.peer);
        return BSPLIB_SUCCESS;
    }
    return bspl_sync_slow(b, BSPL_KIND_SYNC);
}

static inline void bspl_inbox(struct BSPlib *b)
{
    if (BSPL_UNLIKELY(b->in_stale)) bspl_refresh_inbox(b);
}

/* The first queued message: its record (tag at +8, payload at +8+in_tpad)
 * and payload size; NULL if the queue is empty. */
static inline const char *bspl_peek(struct BSPlib *b, size_t *size)
{
    bspl_inbox(b);
    if (BSPL_UNLIKELY(b->in_left == 0)) return NULL;
    while (b->in_off >= b->in_msgs[b->in_ci].size) {
        b->in_ci++;
        b->in_off = BSPL_BHDR;
    }
    const char *rec = b->in_msgs[b->in_ci].data + b->in_off;
    uint64_t sz;
    memcpy(&sz, rec, 8);
    *size = (size_t)sz;
    return rec;
}

/* Dequeue the first message: pointers to its tag and payload, its size.
 * Returns 0 if the queue is empty. */
static inline int bspl_pop_msg(struct BSPlib *b, const char **tag, const char **payload,
        size_t *size)
{
    const char *rec = bspl_peek(b, size);
    if (BSPL_UNLIKELY(rec == NULL)) return 0;
    *tag = rec + 8;
    *payload = rec + 8 + b->in_tpad;
    b->in_off += 8 + b->in_tpad + ((*size + 7) & ~(size_t)7);
    b->in_left--;
    b->in_bytes -= *size;
    return 1;
}

#endif
