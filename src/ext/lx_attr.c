/*
 * Attributes (spec/lpf-ext.md §2) and tags (§3): the per-context state, the
 * attribute handles shared by <lpf/tags.h> and <lpf/zero.h>, tag creation
 * (a collective exchange of the active flags over a subset sync of all
 * processes, which also checks the creation order) and the phase lists of
 * tagged requests.
 */
#include "lpfext.h"
#include "checked.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const lpf_tag_t LPF_INVALID_TAG = UINT32_MAX;

/* handle = LX_HANDLE_BIT | (serial & 0x3ff) << 20 | (index + 1) */
#define LX_HANDLE_BIT 0x40000000
#define LX_ATTR_MAX ((1u << 20) - 2)

static _Atomic uint32_t lx_serials;

struct sstep_lext *lx_get(struct sstep_ctx *ctx)
{
    struct sstep_lext *x = atomic_load_explicit(&ctx->lext, memory_order_relaxed);
    if (SSTEP_LIKELY(x != NULL)) return x;
    x = calloc(1, sizeof *x);
    if (!x) sstep_fatal(ctx, "lpf extensions", "out of memory");
    x->serial = atomic_fetch_add_explicit(&lx_serials, 1, memory_order_relaxed) & 0x3ffu;
    x->tag_cap_pending = SIZE_MAX;
    atomic_store_explicit(&ctx->lext, x, memory_order_release);
    return x;
}

void sstep_lext_free(struct sstep_ctx *ctx)
{
    struct sstep_lext *x = atomic_load_explicit(&ctx->lext, memory_order_acquire);
    if (!x) return;
    for (size_t i = 0; i < x->ntags; ++i) {
        free(x->tags[i].member);
        free(x->tags[i].reqs);
    }
    free(x->tags);
    free(x->attrs);
    free(atomic_load_explicit(&x->noc, memory_order_relaxed));
    for (size_t i = 0; i < x->nretired; ++i) free(x->retired[i]);
    free(x->retired);
    free(x->alias);
    free(x->noc_free);
    free(x);
    atomic_store_explicit(&ctx->lext, NULL, memory_order_relaxed);
}

void lx_unsupported(struct sstep_ctx *ctx, const char *prim, const char *what)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&once))
        for (;;) pause();
    sstep_fatal(ctx, prim, "%s, which the %s engine does not offer across its ranks (use the "
            "pthread or mpi engine)", what, ctx->engine->name);
}

/* ------------------------------------------------------------------ */
/* Attributes                                                           */
/* ------------------------------------------------------------------ */

static const char *kind_name(uint32_t kind)
{
    return kind == LX_ATTR_MSG ? "message attribute" : "sync attribute";
}

static int attr_new(struct sstep_ctx *ctx, const char *prim, uint32_t kind, int *out)
{
    if (SSTEP_UNLIKELY(out == NULL)) sstep_fatal(ctx, prim, "attr is NULL");
    struct sstep_lext *x = lx_get(ctx);
    size_t i = x->nattrs;
    if (i >= LX_ATTR_MAX) {   /* reuse a destroyed one */
        for (i = 0; i < x->nattrs && x->attrs[i].kind != LX_ATTR_FREE; ++i) {}
        if (i == x->nattrs) return LPF_ERR_OUT_OF_MEMORY;
    } else {
        if (i == x->attrcap) {
            size_t nc = x->attrcap ? 2 * x->attrcap : 8;
            struct lx_attr *a = realloc(x->attrs, nc * sizeof *a);
            if (!a) return LPF_ERR_OUT_OF_MEMORY;
            x->attrs = a;
            x->attrcap = nc;
        }
        x->nattrs++;
    }
    x->attrs[i] = (struct lx_attr){ kind, UINT32_MAX, 0, 0 };
    *out = (int)(LX_HANDLE_BIT | x->serial << 20 | (uint32_t)(i + 1));
    return LPF_SUCCESS;
}

struct lx_attr *lx_attr_of(struct sstep_ctx *ctx, const char *prim, int handle, uint32_t kind)
{
    if (handle == 0) return NULL;
    struct sstep_lext *x = atomic_load_explicit(&ctx->lext, memory_order_relaxed);
    const uint32_t h = (uint32_t)handle, i = (h & 0xfffffu) - 1u;
    /* lpf-core.md: lpf_put, lpf_get and lpf_sync treat unknown attribute
     * values like the default; values of the extensions' form are checked */
    if (kind & LX_ATTR_LENIENT) {
        kind &= ~LX_ATTR_LENIENT;
        if (!(h & LX_HANDLE_BIT) || (h >> 31)) return NULL;
    }
    if (SSTEP_UNLIKELY(!(h & LX_HANDLE_BIT) || (h >> 31) || x == NULL
                || ((h >> 20) & 0x3ffu) != x->serial || i >= x->nattrs))
        sstep_fatal(ctx, prim, "%s %d was not made by this context (lpf_tag_create_*attr or "
                "lpf_zero_create_*attr of this context)", kind_name(kind), handle);
    struct lx_attr *a = &x->attrs[i];
    if (SSTEP_UNLIKELY(a->kind == LX_ATTR_FREE))
        sstep_fatal(ctx, prim, "%s %d was destroyed", kind_name(kind), handle);
    if (SSTEP_UNLIKELY(a->kind != kind))
        sstep_fatal(ctx, prim, "attribute %d is a %s, not a %s", handle, kind_name(a->kind),
                kind_name(kind));
    return a;
}

static lpf_err_t attr_destroy(lpf_t c, const char *prim, int handle, uint32_t kind)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    if (SSTEP_UNLIKELY(handle == 0))
        sstep_fatal(ctx, prim, "the default %s cannot be destroyed", kind_name(kind));
    lx_attr_of(ctx, prim, handle, kind)->kind = LX_ATTR_FREE;
    return LPF_SUCCESS;
}

#define CTX(prim) struct sstep_ctx *ctx = sstep_ctx_of(c, prim)

lpf_err_t lpf_tag_create_mattr(lpf_t c, lpf_msg_attr_t *attr)
{ CTX("lpf_tag_create_mattr"); return attr_new(ctx, "lpf_tag_create_mattr", LX_ATTR_MSG, attr); }
lpf_err_t lpf_tag_create_sattr(lpf_t c, lpf_sync_attr_t *attr)
{ CTX("lpf_tag_create_sattr"); return attr_new(ctx, "lpf_tag_create_sattr", LX_ATTR_SYNC, attr); }
lpf_err_t lpf_zero_create_mattr(lpf_t c, lpf_msg_attr_t *attr)
{ CTX("lpf_zero_create_mattr"); return attr_new(ctx, "lpf_zero_create_mattr", LX_ATTR_MSG, attr); }
lpf_err_t lpf_zero_create_sattr(lpf_t c, lpf_sync_attr_t *attr)
{ CTX("lpf_zero_create_sattr"); return attr_new(ctx, "lpf_zero_create_sattr", LX_ATTR_SYNC, attr); }
lpf_err_t lpf_tag_destroy_mattr(lpf_t c, lpf_msg_attr_t attr)
{ return attr_destroy(c, "lpf_tag_destroy_mattr", attr, LX_ATTR_MSG); }
lpf_err_t lpf_tag_destroy_sattr(lpf_t c, lpf_sync_attr_t attr)
{ return attr_destroy(c, "lpf_tag_destroy_sattr", attr, LX_ATTR_SYNC); }
lpf_err_t lpf_zero_destroy_mattr(lpf_t c, lpf_msg_attr_t attr)
{ return attr_destroy(c, "lpf_zero_destroy_mattr", attr, LX_ATTR_MSG); }
lpf_err_t lpf_zero_destroy_sattr(lpf_t c, lpf_sync_attr_t attr)
{ return attr_destroy(c, "lpf_zero_destroy_sattr", attr, LX_ATTR_SYNC); }

static lpf_err_t tag_get(lpf_t c, const char *prim, int attr, uint32_t kind, lpf_tag_t *tag)
{
    CTX(prim);
    if (SSTEP_UNLIKELY(tag == NULL)) sstep_fatal(ctx, prim, "tag is NULL");
    struct lx_attr *a = lx_attr_of(ctx, prim, attr, kind);
    *tag = a ? a->tag : LPF_INVALID_TAG;
    return LPF_SUCCESS;
}

static lpf_err_t tag_set(lpf_t c, const char *prim, lpf_tag_t tag, int attr, uint32_t kind)
{
    CTX(prim);
    if (SSTEP_UNLIKELY(attr == 0))
        sstep_fatal(ctx, prim, "the default %s cannot carry a tag", kind_name(kind));
    struct lx_attr *a = lx_attr_of(ctx, prim, attr, kind);
    if (tag != LPF_INVALID_TAG) lx_tag_of(ctx, prim, tag);
    a->tag = tag;
    return LPF_SUCCESS;
}

lpf_err_t lpf_tag_get_mattr(lpf_t c, lpf_msg_attr_t attr, lpf_tag_t *tag)
{ return tag_get(c, "lpf_tag_get_mattr", attr, LX_ATTR_MSG, tag); }
lpf_err_t lpf_tag_get_sattr(lpf_t c, lpf_sync_attr_t attr, lpf_tag_t *tag)
{ return tag_get(c, "lpf_tag_get_sattr", attr, LX_ATTR_SYNC, tag); }
lpf_err_t lpf_tag_set_mattr(lpf_t c, lpf_tag_t tag, lpf_msg_attr_t attr)
{ return tag_set(c, "lpf_tag_set_mattr", tag, attr, LX_ATTR_MSG); }
lpf_err_t lpf_tag_set_sattr(lpf_t c, lpf_tag_t tag, lpf_sync_attr_t attr)
{ return tag_set(c, "lpf_tag_set_sattr", tag, attr, LX_ATTR_SYNC); }

lpf_err_t lpf_zero_set_expected(lpf_t c, size_t expected_sent, size_t expected_rcvd,
        lpf_sync_attr_t attr)
{
    CTX("lpf_zero_set_expected");
    if (SSTEP_UNLIKELY(attr == 0))
        sstep_fatal(ctx, "lpf_zero_set_expected", "the default sync attribute cannot carry "
                "expected counts");
    struct lx_attr *a = lx_attr_of(ctx, "lpf_zero_set_expected", attr, LX_ATTR_SYNC);
    a->es = expected_sent;
    a->er = expected_rcvd;
    return LPF_SUCCESS;
}

lpf_err_t lpf_zero_get_expected(lpf_t c, lpf_sync_attr_t attr, size_t *expected_sent,
        size_t *expected_rcvd)
{
    CTX("lpf_zero_get_expected");
    if (SSTEP_UNLIKELY(!expected_sent || !expected_rcvd))
        sstep_fatal(ctx, "lpf_zero_get_expected", "expected_sent or expected_rcvd is NULL");
    struct lx_attr *a = lx_attr_of(ctx, "lpf_zero_get_expected", attr, LX_ATTR_SYNC);
    *expected_sent = a ? a->es : 0;
    *expected_rcvd = a ? a->er : 0;
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Tags                                                                 */
/* ------------------------------------------------------------------ */

struct lx_tag *lx_tag_of(struct sstep_ctx *ctx, const char *prim, lpf_tag_t tag)
{
    struct sstep_lext *x = atomic_load_explicit(&ctx->lext, memory_order_relaxed);
    if (SSTEP_UNLIKELY(tag == LPF_INVALID_TAG))
        sstep_fatal(ctx, prim, "tag is LPF_INVALID_TAG");
    if (SSTEP_UNLIKELY(!x || tag >= x->ntags))
        sstep_fatal(ctx, prim, "tag %u was never created in this context", tag);
    if (SSTEP_UNLIKELY(!x->tags[tag].live))
        sstep_fatal(ctx, prim, "tag %u was destroyed", tag);
    return &x->tags[tag];
}

lpf_err_t lpf_resize_tag_register(lpf_t c, size_t max_tags)
{
    CTX("lpf_resize_tag_register");
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (max_tags >= UINT32_MAX) return LPF_ERR_OUT_OF_MEMORY;
    struct sstep_lext *x = lx_get(ctx);
    if (max_tags > x->tagalloc) {
        struct lx_tag *t = realloc(x->tags, max_tags * sizeof *t);
        if (!t) return LPF_ERR_OUT_OF_MEMORY;
        x->tags = t;
        x->tagalloc = max_tags;   /* entries beyond ntags stay unused until a create */
    }
    x->tag_cap_pending = max_tags;
    return LPF_SUCCESS;
}

static uint64_t hist_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

lpf_err_t lpf_tag_create(lpf_t c, bool active, lpf_tag_t *tag)
{
    const char *prim = "lpf_tag_create";
    CTX(prim);
    if (SSTEP_UNLIKELY(tag == NULL)) sstep_fatal(ctx, prim, "tag is NULL");
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    struct sstep_lext *x = lx_get(ctx);
    if (SSTEP_UNLIKELY(x->tags_live >= x->tag_cap))
        sstep_fatal(ctx, prim, "tag capacity exceeded: %zu tags live, capacity %zu (call "
                "lpf_resize_tag_register and lpf_sync first)", x->tags_live, x->tag_cap);
    const lpf_pid_t P = ctx->nprocs;
    if (SSTEP_UNLIKELY(P > 1 && lx_no_range(ctx)))
        lx_unsupported(ctx, prim, "tags need subset syncs");
    /* the lowest free id: the same everywhere (same order of creates) */
    size_t id = 0;
    while (id < x->ntags && x->tags[id].live) ++id;
    /* the flags [P], then the active pids in increasing order */
    const size_t moff = ((size_t)P + sizeof(lpf_pid_t) - 1) & ~(sizeof(lpf_pid_t) - 1);
    unsigned char *member = calloc(moff + (size_t)P * sizeof(lpf_pid_t), 1);
    if (!member) return LPF_ERR_OUT_OF_MEMORY;
    member[ctx->pid] = active ? 1 : 0;
    x->tag_hist = hist_mix(x->tag_hist, 1000 + id);
    const struct sstep_stamp st = { LX_OBJ_CREATE, x->tag_creates };
    if (P > 1) {
        /* everyone learns every active flag; the check value catches
         * different create/destroy orders */
        sstep_scope_push(c);
        for (lpf_pid_t d = 0; d < P; ++d) {
            if (d == ctx->pid) continue;
            void *buf;
            if (sstep_send_buf(c, d, 1, &buf) != LPF_SUCCESS)
                sstep_fatal(ctx, prim, "out of memory");
            *(unsigned char *)buf = member[ctx->pid];
        }
        struct sstep_sync_info info;
        memset(&info, 0, sizeof info);
        info.check = x->tag_hist;
        ctx->hold_regs = 1;   /* not a sync: registrations wait for one */
        lpf_err_t rc = sstep_sync_range(c, 0, P, st, &info);
        ctx->hold_regs = 0;
        if (rc != LPF_SUCCESS || info.mismatch)
            sstep_fatal(ctx, prim, "the tag creations and destructions of the processes "
                    "differ: this process's %llu-th create (tag %zu) does not match process "
                    "%u's (tags must be created and destroyed by all processes in the same "
                    "order)%s", (unsigned long long)x->tag_creates + 1, id,
                    info.peer == LPF_MAX_P ? 0 : info.peer,
                    info.cause == SSTEP_CAUSE_GONE ? ", or a process has left" : "");
        size_t n;
        const struct sstep_msg *m = sstep_inbox_of(c, st, &n);
        for (size_t i = 0; i < n; ++i)
            if (m[i].src < P && m[i].size == 1) member[m[i].src] = (unsigned char)m[i].data[0];
        sstep_inbox_release(c, st);
        sstep_scope_pop(c);
    }
    if (id == x->ntags) x->ntags++;
    struct lx_tag *t = &x->tags[id];
    memset(t, 0, sizeof *t);
    t->live = 1;
    t->active = active ? 1 : 0;
    t->object = LX_OBJ_TAG | x->tag_creates;
    t->member = member;
    t->mlist = (lpf_pid_t *)(void *)(member + moff);
    lpf_pid_t first = LPF_MAX_P, last = 0;
    for (lpf_pid_t q = 0; q < P; ++q)
        if (member[q]) {
            if (first == LPF_MAX_P) first = q;
            last = q;
            t->mlist[t->nactive++] = q;
        }
    t->contiguous = t->nactive > 0 && last - first + 1 == t->nactive;
    t->lo = first == LPF_MAX_P ? 0 : first;
    t->n = t->nactive;
    x->tag_creates++;
    x->tags_live++;
    *tag = (lpf_tag_t)id;
    return LPF_SUCCESS;
}

lpf_err_t lpf_tag_destroy(lpf_t c, lpf_tag_t tag)
{
    const char *prim = "lpf_tag_destroy";
    CTX(prim);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    struct lx_tag *t = lx_tag_of(ctx, prim, tag);
    struct sstep_lext *x = ctx->lext;
    if (SSTEP_UNLIKELY(t->nreq))
        sstep_fatal(ctx, prim, "tag %u still has %zu pending request(s) of this process "
                "(sync them first)", tag, t->nreq);
    free(t->member);
    free(t->reqs);
    t->member = NULL;
    t->mlist = NULL;
    t->reqs = NULL;
    t->live = 0;
    x->tags_live--;
    x->tag_hist = hist_mix(x->tag_hist, 2000 + tag);
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Requests                                                             */
/* ------------------------------------------------------------------ */

lpf_err_t lx_enqueue(struct sstep_ctx *ctx, const char *prim, int kind, lpf_pid_t pid,
        char *local, uint32_t idx, size_t off, size_t size, lpf_memslot_t lslot,
        lpf_msg_attr_t attr)
{
    struct lx_attr *a = lx_attr_of(ctx, prim, attr, LX_ATTR_MSG | LX_ATTR_LENIENT);
    if (a == NULL || a->tag == LPF_INVALID_TAG) {
        struct sstep_queue *q = &ctx->q;
        if (SSTEP_UNLIKELY(q->nuser >= q->limit))
            sstep_fatal(ctx, prim, "message queue capacity exceeded: %zu requests issued in "
                    "this superstep, capacity %zu (call lpf_resize_message_queue and lpf_sync "
                    "first)", q->nuser, q->limit);
        if (SSTEP_UNLIKELY(q->n >= q->alloc) && sstep_queue_grow(ctx, q->n + 1))
            sstep_fatal(ctx, prim, "out of memory growing the request queue");
        q->nuser++;
        sstep_enqueue(ctx, kind, pid, local, idx, off, size);
        if (SSTEP_UNLIKELY(ctx->checked))
            sstep_chk_request(ctx, prim, kind, SSTEP_CHK_USER, pid, idx, off, size, lslot);
        return LPF_SUCCESS;
    }
    struct lx_tag *t = lx_tag_of(ctx, prim, a->tag);
    if (SSTEP_UNLIKELY(!t->active))
        sstep_fatal(ctx, prim, "superstep %llu: process %u is not active in tag %u, so it "
                "may not issue requests of its phase", (unsigned long long)ctx->superstep,
                ctx->pid, a->tag);
    if (SSTEP_UNLIKELY(!t->member[pid]))
        sstep_fatal(ctx, prim, "superstep %llu: a request of tag %u to process %u, which is "
                "not active in that tag", (unsigned long long)ctx->superstep, a->tag, pid);
    if (t->nreq == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 16;
        struct lx_req *r = realloc(t->reqs, nc * sizeof *r);
        if (!r) sstep_fatal(ctx, prim, "out of memory");
        t->reqs = r;
        t->cap = nc;
    }
    t->reqs[t->nreq++] = (struct lx_req){ local, size, off, idx, pid, kind };
    ctx->lext->tagged_pending++;
    return LPF_SUCCESS;
}

/* move a tag's pending requests into the core queue */
SSTEP_HIDDEN void lx_tag_to_queue(struct sstep_ctx *ctx, struct lx_tag *t);
void lx_tag_to_queue(struct sstep_ctx *ctx, struct lx_tag *t)
{
    if (!t->nreq) return;
    struct sstep_queue *q = &ctx->q;
    if (q->n + t->nreq > q->alloc && sstep_queue_grow(ctx, q->n + t->nreq))
        sstep_fatal(ctx, "lpf_sync", "out of memory growing the request queue");
    for (size_t i = 0; i < t->nreq; ++i) {
        const struct lx_req *r = &t->reqs[i];
        sstep_enqueue(ctx, r->kind, r->pid, r->local, r->slot, r->off, r->size);
    }
    ctx->lext->tagged_pending -= t->nreq;
    t->nreq = 0;
}

void sstep_lext_flush(struct sstep_ctx *ctx)
{
    struct sstep_lext *x = ctx->lext;
    if (x->tag_cap_pending != SIZE_MAX) {
        x->tag_cap = x->tag_cap_pending;
        x->tag_cap_pending = SIZE_MAX;
    }
    if (!x->tagged_pending) return;
    for (size_t i = 0; i < x->ntags; ++i)
        if (x->tags[i].live) lx_tag_to_queue(ctx, &x->tags[i]);
}
