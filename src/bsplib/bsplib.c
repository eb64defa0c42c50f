/*
 * <lpf/bsplib.h>: BSPlib as an object on the core, with error codes.
 *
 * Registrations: every bsplib_push_reg registers a global slot of the core
 * at once (when the agreed capacity allows; else it is deferred to the
 * sync), so the k-th push of every process gets the same core slot. A hash
 * map sends each identifier to its stack of active registrations. Pops are
 * applied (lpf_deregister) after the sync's data exchange, so popped slots
 * keep working for the whole superstep.
 *
 * Agreement: the 64-bit check value of sstep_sync_ext carries, packed, the
 * kind of sync (sync / end / admin / out of memory), the number of pushes,
 * the number and identity (hash of slot indices) of the pops and a
 * requested tag size. It is 0 for a plain sync, which then costs exactly an
 * lpf_sync. Any difference is seen by every process at the same sync; all
 * of them then roll the superstep's pushes, pops and tag change back.
 */
#define _GNU_SOURCE
#include "bsplib_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_CAP 64

/* check value layout (the top 4 bits belong to the core) */
#define CK_KIND_SHIFT 58
#define CK_PUSH_SHIFT 38
#define CK_POP_SHIFT 18
#define CK_FIELD_MASK ((uint64_t)0xfffff)
#define CK_TAG_MASK ((uint64_t)0x3ffff)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* ------------------------------------------------------------------ */
/* Registration pool                                                    */
/* ------------------------------------------------------------------ */

static int pool_grow(struct BSPlib *b)
{
    uint32_t n = b->nregs_alloc ? b->nregs_alloc * 2 : 64;
    if (n <= b->nregs_alloc || n >= BSPL_NIL) return -1;
    struct bspl_reg *r = realloc(b->regs, (size_t)n * sizeof *r);
    if (!r) return -1;
    for (uint32_t i = b->nregs_alloc; i < n; ++i) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].h = LPF_INVALID_MEMSLOT;
        r[i].next_free = i + 1 < n ? i + 1 : b->reg_free;
    }
    b->reg_free = b->nregs_alloc;
    b->nregs_alloc = n;
    b->regs = r;
    b->cache_reg = NULL;   /* pointers into the pool moved */
    return 0;
}

static uint32_t reg_new(struct BSPlib *b)
{
    if (b->reg_free == BSPL_NIL && pool_grow(b)) return BSPL_NIL;
    uint32_t i = b->reg_free;
    b->reg_free = b->regs[i].next_free;
    b->regs[i].next_free = BSPL_NIL;
    b->regs[i].below = BSPL_NIL;
    b->regs[i].h = LPF_INVALID_MEMSLOT;
    return i;
}

static void reg_free(struct BSPlib *b, uint32_t i)
{
    /* keep the rsize array for reuse */
    b->regs[i].addr = NULL;
    b->regs[i].h = LPF_INVALID_MEMSLOT;
    b->regs[i].next_free = b->reg_free;
    b->reg_free = i;
}

static inline uint32_t slot_index(lpf_memslot_t h)
{
    return (uint32_t)((h & 0xffffffffu) >> 1);
}

/* ------------------------------------------------------------------ */
/* Name map: identifier -> stack of active registrations                */
/* ------------------------------------------------------------------ */

static inline size_t name_hash(const void *a, size_t mask)
{
    return (size_t)mix64((uint64_t)(uintptr_t)a) & mask;
}

static struct bspl_name *name_find(struct BSPlib *b, const void *addr)
{
    size_t mask = b->names_cap - 1;
    for (size_t i = name_hash(addr, mask);; i = (i + 1) & mask) {
        struct bspl_name *e = &b->names[i];
        if (e->top == BSPL_NIL) return NULL;
        if (e->addr == addr) return e;
    }
}

static int names_rehash(struct BSPlib *b, size_t cap)
{
    struct bspl_name *n = malloc(cap * sizeof *n);
    if (!n) return -1;
    for (size_t i = 0; i < cap; ++i) n[i].top = BSPL_NIL;
    size_t mask = cap - 1;
    for (size_t i = 0; i < b->names_cap; ++i) {
        struct bspl_name *e = &b->names[i];
        if (e->top == BSPL_NIL) continue;
        size_t j = name_hash(e->addr, mask);
        while (n[j].top != BSPL_NIL) j = (j + 1) & mask;
        n[j] = *e;
    }
    free(b->names);
    b->names = n;
    b->names_cap = cap;
    return 0;
}

/* find or insert (with top still BSPL_NIL: the caller sets it) */
static struct bspl_name *name_insert(struct BSPlib *b, const void *addr, int *created)
{
    struct bspl_name *e = name_find(b, addr);
    *created = 0;
    if (e) return e;
    if ((b->names_used + 1) * 2 > b->names_cap && names_rehash(b, b->names_cap * 2))
        return NULL;
    size_t mask = b->names_cap - 1;
    size_t i = name_hash(addr, mask);
    while (b->names[i].top != BSPL_NIL) i = (i + 1) & mask;
    e = &b->names[i];
    e->addr = addr;
    e->cursor = BSPL_NIL;
    e->cursor_epoch = UINT64_MAX;
    b->names_used++;
    *created = 1;
    return e;
}

/* remove an entry (linear probing: backward-shift deletion) */
static void name_delete(struct BSPlib *b, struct bspl_name *e)
{
    size_t mask = b->names_cap - 1;
    size_t i = (size_t)(e - b->names);
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        struct bspl_name *f = &b->names[j];
        if (f->top == BSPL_NIL) break;
        size_t k = name_hash(f->addr, mask);
        /* f may move to i if its home k is not cyclically in (i, j] */
        if ((i <= j) ? (k <= i || k > j) : (k <= i && k > j)) {
            b->names[i] = *f;
            i = j;
        }
    }
    b->names[i].top = BSPL_NIL;
    b->names_used--;
}

struct bspl_reg *bspl_lookup_slow(struct BSPlib *b, const void *addr)
{
    struct bspl_name *e = name_find(b, addr);
    if (!e) return NULL;
    struct bspl_reg *r = &b->regs[e->top];
    b->cache_addr = addr;
    b->cache_reg = r;
    return r;
}

/* ------------------------------------------------------------------ */
/* Create, destroy, time, pid, nprocs                                   */
/* ------------------------------------------------------------------ */

bsplib_err_t bsplib_create(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, int safemode,
        size_t max_hp_regs, bsplib_t *bsplib)
{
    if (bsplib == NULL || nprocs == 0 || pid >= nprocs) return BSPLIB_ERR_FATAL;
    *bsplib = NULL;
    struct BSPlib *b = calloc(1, sizeof *b);
    if (!b) return BSPLIB_ERR_OUT_OF_MEMORY;
    b->ctx = ctx;
    b->pid = pid;
    b->nprocs = nprocs;
    b->safemode = safemode != 0;
    b->max_hp = max_hp_regs;
    b->hp_left = max_hp_regs;
    b->reg_free = BSPL_NIL;
    b->in_stale = 1;
    b->in_bytes = SIZE_MAX;
    b->mm.peer = LPF_MAX_P;
    b->names_cap = 64;
    b->names = malloc(b->names_cap * sizeof *b->names);
    b->unknown_rsize = malloc((size_t)nprocs * sizeof *b->unknown_rsize);
    b->out = calloc(nprocs, sizeof *b->out);
    b->out_list = malloc((size_t)nprocs * sizeof *b->out_list);
    if (!b->names || !b->unknown_rsize || !b->out || !b->out_list) {
        free(b->names);
        free(b->unknown_rsize);
        free(b->out);
        free(b->out_list);
        free(b);
        return BSPLIB_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < b->names_cap; ++i) b->names[i].top = BSPL_NIL;
    for (lpf_pid_t q = 0; q < nprocs; ++q) b->unknown_rsize[q] = SIZE_MAX;
    b->cap = MIN_CAP;
    lpf_err_t rc = lpf_resize_memory_register(ctx, b->cap);
    /* collective: sync even after a local failure so that peers do not wait */
    lpf_err_t rs = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (rc != LPF_SUCCESS || rs != LPF_SUCCESS) {
        free(b->names);
        free(b->unknown_rsize);
        free(b->out);
        free(b->out_list);
        free(b);
        return rc == LPF_ERR_OUT_OF_MEMORY ? BSPLIB_ERR_OUT_OF_MEMORY : BSPLIB_ERR_FATAL;
    }
    sstep_layer_step(ctx);   /* the user's first superstep is the next one */
    sstep_set_names(ctx, "bsplib_put", "bsplib_get");
    b->t0 = now_s();
    *bsplib = b;
    return BSPLIB_SUCCESS;
}

void bspl_release(struct BSPlib *b)
{
    for (uint32_t i = 0; i < b->nregs_alloc; ++i) {
        if (b->regs[i].h != LPF_INVALID_MEMSLOT) lpf_deregister(b->ctx, b->regs[i].h);
        if (b->regs[i].rsize != b->unknown_rsize) free(b->regs[i].rsize);
    }
    free(b->regs);
    free(b->names);
    free(b->pushes);
    free(b->pops);
    free(b->hpmsgs);
    free(b->hptags);
    free(b->saved_msgs);
    free(b->saved_data);
    bspl_pstage_reset(b);
    free(b->pstage);
    free(b->unknown_rsize);
    free(b->out);
    free(b->out_list);
    free(b);
}

double bsplib_time(bsplib_t b)
{
    double t = now_s() - b->t0;
    if (!(t > b->last_time)) t = nextafter(b->last_time, INFINITY);
    b->last_time = t;
    return t;
}

lpf_pid_t bsplib_nprocs(bsplib_t b) { return b->nprocs; }
lpf_pid_t bsplib_pid(bsplib_t b) { return b->pid; }

/* ------------------------------------------------------------------ */
/* Registration                                                         */
/* ------------------------------------------------------------------ */

bsplib_err_t bsplib_push_reg(bsplib_t b, const void *ident, size_t size)
{
    if (ident == NULL && size != 0) return BSPLIB_ERR_NULL_POINTER;
    if (b->npush == b->push_alloc) {
        size_t n = b->push_alloc ? b->push_alloc * 2 : 16;
        uint32_t *p = realloc(b->pushes, n * sizeof *p);
        if (!p) return BSPLIB_ERR_OUT_OF_MEMORY;
        b->pushes = p;
        b->push_alloc = n;
    }
    uint32_t i = reg_new(b);
    if (i == BSPL_NIL) return BSPLIB_ERR_OUT_OF_MEMORY;
    struct bspl_reg *r = &b->regs[i];
    r->addr = ident;
    r->size = size;
    if (b->core_live < b->cap && b->ndeferred == 0) {
        lpf_err_t rc = lpf_register_global(b->ctx, (void *)(uintptr_t)ident, size, &r->h);
        if (rc != LPF_SUCCESS) {
            r->h = LPF_INVALID_MEMSLOT;
            reg_free(b, i);
            return rc == LPF_ERR_OUT_OF_MEMORY ? BSPLIB_ERR_OUT_OF_MEMORY : BSPLIB_ERR_FATAL;
        }
        b->core_live++;
    } else {
        b->ndeferred++;   /* registered at the sync, after the capacity grew */
    }
    b->pushes[b->npush++] = i;
    b->dirty = 1;
    return BSPLIB_SUCCESS;
}

bsplib_err_t bsplib_pop_reg(bsplib_t b, const void *ident)
{
    struct bspl_name *e = name_find(b, ident);
    if (!e) return BSPLIB_ERR_MEMORY_NOT_REGISTERED;
    if (e->cursor_epoch != b->epoch) {
        e->cursor_epoch = b->epoch;
        e->cursor = e->top;
    }
    if (e->cursor == BSPL_NIL) return BSPLIB_ERR_MEMORY_NOT_REGISTERED;
    if (b->npop == b->pop_alloc) {
        size_t n = b->pop_alloc ? b->pop_alloc * 2 : 16;
        uint32_t *p = realloc(b->pops, n * sizeof *p);
        if (!p) return BSPLIB_ERR_OUT_OF_MEMORY;
        b->pops = p;
        b->pop_alloc = n;
    }
    uint32_t i = e->cursor;
    e->cursor = b->regs[i].below;
    b->pops[b->npop++] = i;
    b->pop_sig = mix64(b->pop_sig ^ (0x9e3779b97f4a7c15ULL + slot_index(b->regs[i].h)));
    b->dirty = 1;
    return BSPLIB_SUCCESS;
}

/* make registration i the newest active one of its identifier */
static int activate(struct BSPlib *b, uint32_t i)
{
    int created;
    const void *addr = b->regs[i].addr;
    struct bspl_name *e = name_insert(b, addr, &created);
    if (!e) return -1;
    struct bspl_reg *r = &b->regs[i];
    r->below = created ? BSPL_NIL : e->top;
    e->top = i;
    if (!r->rsize) {
        r->rsize = malloc((size_t)b->nprocs * sizeof *r->rsize);
        if (!r->rsize) {
            r->rsize = b->unknown_rsize;
            return 0;
        }
    }
    if (r->rsize == b->unknown_rsize) return 0;
    /* sizes the peers registered (shared memory: read now; else unknown
     * and checked where the request executes) */
    for (lpf_pid_t q = 0; q < b->nprocs; ++q)
        r->rsize[q] = q == b->pid ? r->size : sstep_remote_size(b->ctx, q, r->h);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Sync                                                                 */
/* ------------------------------------------------------------------ */

static uint64_t make_check(const struct BSPlib *b, int kind)
{
    uint64_t c = (uint64_t)kind << CK_KIND_SHIFT;
    if (kind == BSPL_KIND_END || kind == BSPL_KIND_ADMIN) return c;
    c |= ((uint64_t)b->npush & CK_FIELD_MASK) << CK_PUSH_SHIFT;
    if (b->npop)
        c |= ((((uint64_t)b->npop & 0x3ff) << 10) | (b->pop_sig & 0x3ff) | 1) << CK_POP_SHIFT;
    if (b->tag_next != b->tag_cur)
        c |= (((uint64_t)b->tag_next & (CK_TAG_MASK >> 1)) << 1) | 1;
    return c;
}

/* Classify a disagreement between our check and the peer's. */
bsplib_err_t bspl_classify(struct BSPlib *b, uint64_t mine, uint64_t peer, lpf_pid_t who)
{
    struct bspl_mismatch *m = &b->mm;
    m->peer = who;
    m->kind_here = (int)((mine >> CK_KIND_SHIFT) & 3);
    m->kind_peer = (int)((peer >> CK_KIND_SHIFT) & 3);
    m->push_here = (size_t)((mine >> CK_PUSH_SHIFT) & CK_FIELD_MASK);
    m->push_peer = (size_t)((peer >> CK_PUSH_SHIFT) & CK_FIELD_MASK);
    m->pop_here = (size_t)((mine >> (CK_POP_SHIFT + 10)) & 0x3ff);
    m->pop_peer = (size_t)((peer >> (CK_POP_SHIFT + 10)) & 0x3ff);
    m->tag_set_here = (int)(mine & 1);
    m->tag_set_peer = (int)(peer & 1);
    m->tag_here = m->tag_set_here ? (size_t)((mine & CK_TAG_MASK) >> 1) : b->tag_cur;
    m->tag_peer = m->tag_set_peer ? (size_t)((peer & CK_TAG_MASK) >> 1) : b->tag_cur;
    if (m->kind_here != m->kind_peer) {
        if (m->kind_here == BSPL_KIND_OOM || m->kind_peer == BSPL_KIND_OOM)
            return BSPLIB_ERR_OUT_OF_MEMORY;
        return BSPLIB_ERR_FATAL;
    }
    if (((mine ^ peer) >> CK_PUSH_SHIFT) & CK_FIELD_MASK) return BSPLIB_ERR_PUSHREG_MISMATCH;
    if (((mine ^ peer) >> CK_POP_SHIFT) & CK_FIELD_MASK) return BSPLIB_ERR_POPREG_MISMATCH;
    if ((mine ^ peer) & CK_TAG_MASK) return BSPLIB_ERR_TAGSIZE_MISMATCH;
    return BSPLIB_ERR_FATAL;
}

/* state every sync leaves behind */
static inline void superstep_done(struct BSPlib *b)
{
    b->in_stale = 1;
    b->in_tag = b->tag_cur;
    b->hp_left = b->max_hp;
    b->epoch++;
}

/* undo this superstep's pushes, pops and tag change (all processes do) */
static void rollback(struct BSPlib *b)
{
    for (size_t k = b->npush; k-- > 0;) {
        uint32_t i = b->pushes[k];
        if (b->regs[i].h != LPF_INVALID_MEMSLOT) {
            lpf_deregister(b->ctx, b->regs[i].h);
            b->core_live--;
        }
        reg_free(b, i);
    }
    b->npush = b->npop = b->ndeferred = 0;
    b->pop_sig = 0;
    b->tag_next = b->tag_cur;
    b->dirty = b->nhp != 0;
}

/* Copy the received bundles out of the core (an extra sync follows). */
static int save_inbox(struct BSPlib *b)
{
    bspl_refresh_inbox(b);
    size_t n = b->in_n, bytes = 0;
    for (size_t k = 0; k < n; ++k) bytes += b->in_msgs[k].size;
    struct sstep_msg *m = malloc((n ? n : 1) * sizeof *m);
    char *d = malloc(bytes ? bytes : 1);
    if (!m || !d) { free(m); free(d); return -1; }
    size_t at = 0;
    for (size_t k = 0; k < n; ++k) {
        bspl_copy(d + at, b->in_msgs[k].data, b->in_msgs[k].size);
        m[k].data = d + at;
        m[k].size = b->in_msgs[k].size;
        at += b->in_msgs[k].size;   /* bundle sizes are multiples of 8 */
    }
    b->saved_msgs = m;
    b->saved_data = d;
    b->in_msgs = m;
    return 0;   /* the view stays valid (in_stale == 0) until the next sync */
}

/* ------------------------------------------------------------------ */
/* Staging of large puts                                                */
/* ------------------------------------------------------------------ */

char *bspl_pstage_grow(struct BSPlib *b, size_t size)
{
    size_t cap = b->pstage ? 2 * b->pstage->cap : ((size_t)1 << 20);
    if (cap < size) cap = size;
    if (cap > SIZE_MAX - sizeof(struct bspl_chunk) - 64) return NULL;
    struct bspl_chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->cap = cap;
    c->next = b->pstage;
    b->pstage = c;
    b->pstage_used = (size + 63) & ~(size_t)63;
    if (b->pstage_used > cap) b->pstage_used = cap;
    return (char *)c->data;
}

void bspl_pstage_reset(struct BSPlib *b)
{
    /* keep the newest (largest) chunk for the next superstep */
    if (b->pstage) {
        struct bspl_chunk *c = b->pstage->next;
        while (c) {
            struct bspl_chunk *n = c->next;
            free(c);
            c = n;
        }
        b->pstage->next = NULL;
    }
    b->pstage_used = 0;
}

/* ------------------------------------------------------------------ */
/* Message bundles                                                      */
/* ------------------------------------------------------------------ */

bsplib_err_t bspl_out_grow(struct BSPlib *b, lpf_pid_t pid, size_t need)
{
    struct bspl_out *o = &b->out[pid];
    if (o->base) {
        /* full: queue it, the next one twice as large (up to 1 MiB) */
        if (sstep_send(b->ctx, pid, o->base, o->used) != LPF_SUCCESS) return BSPLIB_ERR_OUT_OF_MEMORY;
        if (o->next_cap < ((size_t)1 << 20)) o->next_cap = o->cap * 2;
    } else {
        b->out_list[b->nout++] = pid;
    }
    size_t cap = o->next_cap < 512 ? 512 : o->next_cap;
    if (cap < need + BSPL_BHDR) cap = need + BSPL_BHDR;
    char *base = sstep_stage(b->ctx, cap);
    if (!base) {
        /* keep a valid (empty) bundle so that the sync can queue it */
        o->cap = o->used = 0;
        base = sstep_stage(b->ctx, BSPL_BHDR);
        if (base) {
            memset(base, 0, BSPL_BHDR);
            o->base = base;
            o->used = o->cap = BSPL_BHDR;
        } else {
            o->base = NULL;
            for (size_t k = 0; k < b->nout; ++k)
                if (b->out_list[k] == pid) b->out_list[k] = b->out_list[--b->nout];
        }
        return BSPLIB_ERR_OUT_OF_MEMORY;
    }
    struct bspl_bundle_hdr *h = (struct bspl_bundle_hdr *)(void *)base;
    h->count = 0;
    h->bytes = 0;
    o->base = base;
    o->used = BSPL_BHDR;
    o->cap = cap;
    if (o->next_cap < cap) o->next_cap = cap;
    return BSPLIB_SUCCESS;
}

bsplib_err_t bspl_out_flush(struct BSPlib *b)
{
    bsplib_err_t e = BSPLIB_SUCCESS;
    for (size_t k = 0; k < b->nout; ++k) {
        struct bspl_out *o = &b->out[b->out_list[k]];
        if (sstep_send(b->ctx, b->out_list[k], o->base, o->used) != LPF_SUCCESS)
            e = BSPLIB_ERR_OUT_OF_MEMORY;
        /* the next superstep's first bundle: about what this one needed */
        size_t want = 2 * o->used;
        o->next_cap = want > ((size_t)1 << 20) ? ((size_t)1 << 20) : want;
        o->base = NULL;
        o->used = o->cap = 0;
    }
    b->nout = 0;
    return e;
}

bsplib_err_t bspl_sync_slow(struct BSPlib *b, int kind)
{
    /* hp messages: copied now, read by their owner during the sync */
    int oom = 0;
    for (size_t k = 0; k < b->nhp; ++k) {
        const struct bspl_hpmsg *h = &b->hpmsgs[k];
        if (bspl_send(b, h->pid, b->hptags ? b->hptags + h->tag_off : NULL, h->payload, h->size)
                != BSPLIB_SUCCESS)
            oom = 1;
    }
    b->nhp = 0;
    b->hptags_used = 0;
    if (b->nout && bspl_out_flush(b) != BSPLIB_SUCCESS) oom = 1;

    /* register capacity for after this sync, from values all processes
     * share when they agree (checked by this very sync) */
    size_t cap = b->cap;
    if (kind == BSPL_KIND_SYNC) {
        size_t live_after = b->core_live + b->ndeferred - b->npop;
        while (live_after > cap / 2 && cap < (SIZE_MAX >> 2)) cap *= 2;
        if (cap > b->cap && lpf_resize_memory_register(b->ctx, cap) != LPF_SUCCESS) oom = 1;
    }
    if (oom && kind == BSPL_KIND_SYNC) kind = BSPL_KIND_OOM;

    struct sstep_sync_info info;
    info.check = make_check(b, kind);
    lpf_err_t rc = sstep_sync_ext(b->ctx, &info);
    bspl_pstage_reset(b);
    if (rc != LPF_SUCCESS) {
        rollback(b);
        superstep_done(b);
        b->failed = 1;
        return BSPLIB_ERR_FATAL;
    }
    if (info.mismatch || kind == BSPL_KIND_OOM) {
        bsplib_err_t e = info.mismatch
            ? bspl_classify(b, info.check, info.peer_check, info.peer) : BSPLIB_ERR_OUT_OF_MEMORY;
        rollback(b);
        superstep_done(b);
        return e;
    }
    if (kind != BSPL_KIND_SYNC) {   /* END: the caller releases everything */
        superstep_done(b);
        return BSPLIB_SUCCESS;
    }

    /* agreed: switch the tag size, apply pops, activate pushes */
    size_t old_tag = b->tag_cur;
    b->tag_cur = b->tag_next;
    b->cap = cap;
    bsplib_err_t err = BSPLIB_SUCCESS;
    for (size_t k = 0; k < b->npop; ++k) {
        uint32_t i = b->pops[k];
        struct bspl_reg *r = &b->regs[i];
        struct bspl_name *e = name_find(b, r->addr);
        /* pops of one identifier remove its newest registrations in order */
        e->top = r->below;
        if (e->top == BSPL_NIL) name_delete(b, e);
        lpf_deregister(b->ctx, r->h);
        b->core_live--;
        reg_free(b, i);
    }
    size_t k = 0;
    for (; k < b->npush && b->regs[b->pushes[k]].h != LPF_INVALID_MEMSLOT; ++k)
        if (activate(b, b->pushes[k])) err = BSPLIB_ERR_OUT_OF_MEMORY;
    b->in_tag = old_tag;
    b->in_stale = 1;
    if (k < b->npush) {
        /* deferred pushes: register now that the capacity grew, and
         * activate them with an extra sync; keep the received messages */
        for (size_t j = k; j < b->npush; ++j) {
            struct bspl_reg *r = &b->regs[b->pushes[j]];
            if (lpf_register_global(b->ctx, (void *)(uintptr_t)r->addr, r->size, &r->h)
                    != LPF_SUCCESS) {
                r->h = LPF_INVALID_MEMSLOT;
                err = BSPLIB_ERR_OUT_OF_MEMORY;
            } else {
                b->core_live++;
            }
        }
        if (save_inbox(b)) err = BSPLIB_ERR_OUT_OF_MEMORY;
        info.check = make_check(b, BSPL_KIND_ADMIN);
        rc = sstep_sync_ext(b->ctx, &info);
        if (rc == LPF_SUCCESS) sstep_layer_step(b->ctx);
        if (rc != LPF_SUCCESS || info.mismatch) {
            b->failed = 1;
            err = BSPLIB_ERR_FATAL;
        }
        for (; k < b->npush; ++k)
            if (b->regs[b->pushes[k]].h != LPF_INVALID_MEMSLOT && activate(b, b->pushes[k]))
                err = BSPLIB_ERR_OUT_OF_MEMORY;
    }
    b->npush = b->npop = b->ndeferred = 0;
    b->pop_sig = 0;
    b->dirty = 0;
    b->cache_reg = NULL;
    b->hp_left = b->max_hp;
    b->epoch++;
    return err;
}

bsplib_err_t bsplib_sync(bsplib_t b)
{
    SSTEP_PROF_NOTE_CALLER();
    bsplib_err_t e = bspl_sync(b);
    SSTEP_PROF_CALLER_DONE();
    return e;
}

bsplib_err_t bspl_finish(struct BSPlib *b)
{
    return bspl_sync_slow(b, BSPL_KIND_END) == BSPLIB_SUCCESS ? BSPLIB_SUCCESS : BSPLIB_ERR_FATAL;
}

bsplib_err_t bsplib_destroy(bsplib_t b)
{
    if (b == NULL) return BSPLIB_ERR_FATAL;
    bsplib_err_t e = bspl_finish(b);
    bspl_release(b);
    return e;
}

int bspl_pending_push(const struct BSPlib *b, const void *addr)
{
    for (size_t k = 0; k < b->npush; ++k)
        if (b->regs[b->pushes[k]].addr == addr) return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* DRMA                                                                 */
/* ------------------------------------------------------------------ */

bsplib_err_t bsplib_put(bsplib_t b, lpf_pid_t dst_pid, const void *src, void *dst,
        size_t offset, size_t nbytes)
{
    return bspl_put(b, dst_pid, src, dst, offset, nbytes);
}

bsplib_err_t bsplib_hpput(bsplib_t b, lpf_pid_t dst_pid, const void *src, void *dst,
        size_t offset, size_t nbytes)
{
    return bspl_hpput(b, dst_pid, src, dst, offset, nbytes);
}

bsplib_err_t bsplib_get(bsplib_t b, lpf_pid_t src_pid, const void *src, size_t offset,
        void *dst, size_t nbytes)
{
    return bspl_get(b, src_pid, src, offset, dst, nbytes);
}

bsplib_err_t bsplib_hpget(bsplib_t b, lpf_pid_t src_pid, const void *src, size_t offset,
        void *dst, size_t nbytes)
{
    if (b->hp_left) b->hp_left--;
    return bspl_get(b, src_pid, src, offset, dst, nbytes);
}

bsplib_err_t bsplib_direct_get(bsplib_t b, lpf_pid_t src_pid, const void *src,
        size_t offset, void *dst, size_t nbytes)
{
    if (nbytes == 0) return BSPLIB_SUCCESS;
    struct bspl_reg *r;
    bsplib_err_t e = bspl_check(b, src_pid, dst, src, offset, nbytes, &r);
    if (e != BSPLIB_SUCCESS) return e;
    return sstep_direct_get(b->ctx, src_pid, r->h, offset, dst, nbytes) == LPF_SUCCESS
        ? BSPLIB_SUCCESS : BSPLIB_ERR_FATAL;
}

/* ------------------------------------------------------------------ */
/* BSMP                                                                 */
/* ------------------------------------------------------------------ */

size_t bsplib_set_tagsize(bsplib_t b, size_t tagsize)
{
    b->tag_next = tagsize;
    b->dirty = 1;
    return b->tag_cur;
}

bsplib_err_t bsplib_send(bsplib_t b, lpf_pid_t dst_pid, const void *tag,
        const void *payload, size_t nbytes)
{
    return bspl_send(b, dst_pid, tag, payload, nbytes);
}

bsplib_err_t bspl_hpsend_slow(struct BSPlib *b, lpf_pid_t pid, const void *tag,
        const void *payload, size_t nbytes)
{
    if ((tag == NULL && b->tag_cur != 0) || (payload == NULL && nbytes != 0))
        return BSPLIB_ERR_NULL_POINTER;
    if (pid >= b->nprocs) return BSPLIB_ERR_PID_OUT_OF_RANGE;
    if (b->nhp == b->hp_alloc) {
        size_t n = b->hp_alloc ? b->hp_alloc * 2 : 64;
        struct bspl_hpmsg *m = realloc(b->hpmsgs, n * sizeof *m);
        if (!m) return BSPLIB_ERR_OUT_OF_MEMORY;
        b->hpmsgs = m;
        b->hp_alloc = n;
    }
    const size_t tsz = b->tag_cur;
    if (b->hptags_used + tsz > b->hptags_cap) {
        size_t n = b->hptags_cap ? b->hptags_cap * 2 : 256;
        while (n < b->hptags_used + tsz) n *= 2;
        char *t = realloc(b->hptags, n);
        if (!t) return BSPLIB_ERR_OUT_OF_MEMORY;
        b->hptags = t;
        b->hptags_cap = n;
    }
    struct bspl_hpmsg *m = &b->hpmsgs[b->nhp++];
    m->tag_off = b->hptags_used;
    if (tsz) memcpy(b->hptags + b->hptags_used, tag, tsz);
    b->hptags_used += tsz;
    m->payload = payload;
    m->size = nbytes;
    m->pid = pid;
    b->hp_left--;
    b->dirty = 1;
    return BSPLIB_SUCCESS;
}

bsplib_err_t bsplib_hpsend(bsplib_t b, lpf_pid_t dst_pid, const void *tag,
        const void *payload, size_t nbytes)
{
    return bspl_hpsend(b, dst_pid, tag, payload, nbytes);
}

void bspl_refresh_inbox(struct BSPlib *b)
{
    size_t n;
    const struct sstep_msg *m = sstep_inbox(b->ctx, &n);
    if (b->saved_msgs) {
        free(b->saved_msgs);
        free(b->saved_data);
        b->saved_msgs = NULL;
        b->saved_data = NULL;
    }
    size_t count = 0, bytes = 0;
    for (size_t k = 0; k < n; ++k) {
        const struct bspl_bundle_hdr *h = (const struct bspl_bundle_hdr *)(const void *)m[k].data;
        count += (size_t)h->count;
        bytes += (size_t)h->bytes;
    }
    b->in_msgs = m;
    b->in_n = n;
    b->in_ci = 0;
    b->in_off = BSPL_BHDR;
    b->in_left = count;
    b->in_bytes = bytes;
    b->in_tpad = (b->in_tag + 7) & ~(size_t)7;
    b->in_stale = 0;
}

bsplib_err_t bsplib_qsize(bsplib_t b, size_t *nmessages, size_t *accum_bytes)
{
    bspl_inbox(b);
    if (nmessages) *nmessages = b->in_left;
    if (accum_bytes) *accum_bytes = b->in_bytes;
    return BSPLIB_SUCCESS;
}

bsplib_err_t bsplib_get_tag(bsplib_t b, size_t *status, void *tag)
{
    size_t size;
    const char *rec = bspl_peek(b, &size);
    if (!rec) {
        if (status) *status = SIZE_MAX;
        return BSPLIB_SUCCESS;
    }
    if (status) *status = size;
    if (tag && b->in_tag) memcpy(tag, rec + 8, b->in_tag);
    return BSPLIB_SUCCESS;
}

bsplib_err_t bsplib_move(bsplib_t b, void *payload, size_t reception_bytes)
{
    size_t size;
    if (!bspl_peek(b, &size)) return BSPLIB_ERR_EMPTY_MESSAGE_QUEUE;
    if (payload == NULL && reception_bytes > 0) return BSPLIB_ERR_NULL_POINTER;
    const char *t, *p;
    if (!bspl_pop_msg(b, &t, &p, &size)) return BSPLIB_ERR_EMPTY_MESSAGE_QUEUE;
    size_t n = size < reception_bytes ? size : reception_bytes;
    bspl_copy(payload, p, n);
    return BSPLIB_SUCCESS;
}

size_t bsplib_hpmove(bsplib_t b, const void **tag_ptr, const void **payload_ptr)
{
    const char *t, *p;
    size_t size;
    if (!bspl_pop_msg(b, &t, &p, &size)) return SIZE_MAX;
    if (tag_ptr) *tag_ptr = b->in_tag ? t : NULL;
    if (payload_ptr) *payload_ptr = p;
    return size;
}
