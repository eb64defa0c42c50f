/*
 * <lpf/noc.h>: non-coherent registration. A noc slot is an entry of its
 * owner's noc table; its handle carries the owner's pid and the entry
 * (index and generation), so that any process that got the handle's bytes
 * can name the area in a request, and the owner resolves it where the
 * request is applied (sstep_resolve_global falls through to
 * sstep_noc_resolve for indices with SSTEP_NOC_BIT), on every engine.
 * Also the slot checks of every extension request.
 */
#include "lpfext.h"
#include "checked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char zero_size_area;
static const char noc_magic[8] = { 'S', 'S', 'N', 'O', 'C', 'S', 'L', '1' };

static inline int is_noc(lpf_memslot_t h)
{
    return h != LPF_INVALID_MEMSLOT && !(h & SSTEP_SLOT_LOCAL_BIT)
        && ((uint32_t)(h & 0xffffffffu) >> 1 & SSTEP_NOC_BIT);
}

static inline lpf_pid_t noc_owner(lpf_memslot_t h) { return (lpf_pid_t)(h >> 32); }
static inline uint32_t noc_wire(lpf_memslot_t h) { return (uint32_t)(h & 0xffffffffu) >> 1; }
static inline uint32_t wire_index(uint32_t w) { return w & LX_NOC_MAX; }
static inline uint32_t wire_gen(uint32_t w) { return (w >> LX_NOC_IDX_BITS) & 0xffu; }

/* The hybrid engine's rank-level context names entry i of its thread u as
 * index i*T + u (hy_sync.c): the thread's context and its own index. NULL
 * for a thread the rank does not have. */
static struct sstep_ctx *noc_route(struct sstep_ctx *owner, uint32_t *slot)
{
    if (SSTEP_LIKELY(!owner->rank_thread)) return owner;
    const lpf_pid_t T = owner->rank_stride;
    const uint32_t idx = wire_index(*slot);
    *slot = (*slot & ~(uint32_t)LX_NOC_MAX) | idx / T;
    return owner->rank_thread(owner->rank_thread_arg, idx % T);
}

/* the owner's noc entry that a slot index names (its state not checked),
 * NULL when there is none: the engines fall through to this where a
 * request's index is not of a global slot */
const struct sstep_slot *sstep_noc_entry(struct sstep_ctx *owner, uint32_t slot)
{
    if (!(slot & SSTEP_NOC_BIT)) return NULL;
    if (!(owner = noc_route(owner, &slot))) return NULL;
    struct sstep_lext *x = atomic_load_explicit(&owner->lext, memory_order_acquire);
    if (!x) return NULL;
    struct sstep_slot_array *a = atomic_load_explicit(&x->noc, memory_order_acquire);
    const uint32_t i = wire_index(slot);
    if (!a || i >= a->size || a->e[i].gen != wire_gen(slot)) return NULL;
    return &a->e[i];
}

char *sstep_noc_resolve(struct sstep_ctx *owner, uint32_t slot, size_t off, size_t size)
{
    const struct sstep_slot *e = sstep_noc_entry(owner, slot);
    if (!e || e->state != SSTEP_SLOT_GLOBAL) return NULL;
    if (off > e->size || size > e->size - off) return NULL;
    return e->base + off;
}

void sstep_noc_range_error(struct sstep_ctx *owner, const char *primitive, lpf_pid_t issuer,
        uint32_t slot, size_t off, size_t size)
{
    char who[64];
    snprintf(who, sizeof who, "process %u", issuer);
    if (owner->rank_thread) {
        /* found by the hybrid engine's rank-level context: the issuer is a
         * rank; the line names the owning thread's process */
        const lpf_pid_t T = owner->rank_stride, r = issuer;
        struct sstep_ctx *th = noc_route(owner, &slot);
        if (!th)
            sstep_fatal(owner, primitive, "request issued by a process of rank %u names a noc "
                    "slot of a thread this rank does not have", r);
        snprintf(who, sizeof who, "a process of rank %u (processes %u-%u)", r, r * T,
                r * T + T - 1);
        owner = th;
    }
    struct sstep_lext *x = atomic_load_explicit(&owner->lext, memory_order_acquire);
    struct sstep_slot_array *a = x ? atomic_load_explicit(&x->noc, memory_order_acquire) : NULL;
    const uint32_t i = wire_index(slot);
    if (!a || i >= a->size || a->e[i].state != SSTEP_SLOT_GLOBAL || a->e[i].gen != wire_gen(slot))
        sstep_fatal(owner, primitive, "request issued by %s names noc slot %u (generation %u) "
                "of process %u, which is not registered there (never registered, or "
                "deregistered)", who, i, wire_gen(slot), owner->pid);
    sstep_fatal(owner, primitive, "request issued by %s: offset %zu + size %zu exceeds the %zu "
            "bytes that process %u registered in noc slot %u", who, off, size, a->e[i].size,
            owner->pid, i);
}

/* ------------------------------------------------------------------ */
/* Registration                                                         */
/* ------------------------------------------------------------------ */

/* the noc table (and its side arrays) with room for max_regs entries */
static lpf_err_t noc_table_grow(struct sstep_lext *x, size_t max_regs)
{
    if (max_regs > LX_NOC_MAX) return LPF_ERR_OUT_OF_MEMORY;
    struct sstep_slot_array *old = atomic_load_explicit(&x->noc, memory_order_relaxed);
    const uint32_t oldn = old ? old->size : 0;
    if (max_regs > oldn) {
        struct sstep_slot_array *a = calloc(1, sizeof *a + max_regs * sizeof(struct sstep_slot));
        lpf_memslot_t *al = realloc(x->alias, max_regs * sizeof *al);
        if (al) x->alias = al;
        uint32_t *fr = al ? realloc(x->noc_free, max_regs * sizeof *fr) : NULL;
        if (fr) x->noc_free = fr;
        struct sstep_slot_array **rt = realloc(x->retired, (x->nretired + 1) * sizeof *rt);
        if (rt) x->retired = rt;
        if (!a || !al || !fr || !rt) { free(a); return LPF_ERR_OUT_OF_MEMORY; }
        a->size = (uint32_t)max_regs;
        if (oldn) memcpy(a->e, old->e, oldn * sizeof(struct sstep_slot));
        atomic_store_explicit(&x->noc, a, memory_order_release);
        /* peers may be reading the old table (pthread): freed with the context */
        if (old) x->retired[x->nretired++] = old;
    }
    return LPF_SUCCESS;
}

lpf_err_t lpf_noc_resize_memory_register(lpf_t c, size_t max_regs)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "lpf_noc_resize_memory_register");
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (max_regs > LX_NOC_MAX) return LPF_ERR_OUT_OF_MEMORY;
    struct sstep_lext *x = lx_get(ctx);
    lpf_err_t rc = noc_table_grow(x, max_regs);
    if (rc != LPF_SUCCESS) return rc;
    x->noc_cap = max_regs;
    return LPF_SUCCESS;
}

lpf_err_t lpf_noc_register(lpf_t c, void *pointer, size_t size, lpf_memslot_t *memslot)
{
    const char *prim = "lpf_noc_register";
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    if (SSTEP_UNLIKELY(memslot == NULL)) sstep_fatal(ctx, prim, "memslot is NULL");
    if (SSTEP_UNLIKELY(pointer == NULL && size != 0))
        sstep_fatal(ctx, prim, "pointer is NULL but size is %zu", size);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    struct sstep_lext *x = lx_get(ctx);
    /* LPF keeps noc and core registrations in one register: a noc
     * registration may use the capacity of either resize (the core
     * register's room in force, lpf_resize_memory_register and a sync) */
    const size_t core_room = ctx->reg_limit > ctx->nregs ? ctx->reg_limit - ctx->nregs : 0;
    const size_t cap = x->noc_cap + core_room;
    if (SSTEP_UNLIKELY(x->noc_live >= cap))
        sstep_fatal(ctx, prim, "register capacity exceeded: %zu noc registrations live, "
                "capacity %zu (%zu of lpf_noc_resize_memory_register, %zu left of "
                "lpf_resize_memory_register); resize first", x->noc_live, cap, x->noc_cap,
                core_room);
    struct sstep_slot_array *a = atomic_load_explicit(&x->noc, memory_order_relaxed);
    if (!x->noc_nfree && (!a || x->noc_fresh >= a->size)) {
        size_t want = a ? (size_t)a->size * 2 : 16;
        if (want < (size_t)x->noc_fresh + 1) want = (size_t)x->noc_fresh + 1;
        if (want > LX_NOC_MAX) want = LX_NOC_MAX;
        if (x->noc_fresh >= want || noc_table_grow(x, want) != LPF_SUCCESS)
            return LPF_ERR_OUT_OF_MEMORY;
        a = atomic_load_explicit(&x->noc, memory_order_relaxed);
    }
    uint32_t i = x->noc_nfree ? x->noc_free[--x->noc_nfree] : x->noc_fresh++;
    struct sstep_slot *e = &a->e[i];
    uint32_t gen = e->gen % 255u + 1u;
    e->base = pointer ? (char *)pointer : &zero_size_area;
    e->size = size;
    e->gen = gen;
    e->active_from = 0;
    x->alias[i] = LPF_INVALID_MEMSLOT;
    atomic_thread_fence(memory_order_release);
    e->state = SSTEP_SLOT_GLOBAL;
    x->noc_live++;
    *memslot = ((lpf_memslot_t)ctx->pid << 32)
        | ((lpf_memslot_t)(SSTEP_NOC_BIT | gen << LX_NOC_IDX_BITS | i) << 1);
    return LPF_SUCCESS;
}

/* the caller's own noc entry of h, or a fatal line */
static struct sstep_slot *own_entry(struct sstep_ctx *ctx, const char *prim, const char *what,
        lpf_memslot_t h, uint32_t *idx)
{
    struct sstep_lext *x = atomic_load_explicit(&ctx->lext, memory_order_relaxed);
    struct sstep_slot_array *a = x ? atomic_load_explicit(&x->noc, memory_order_relaxed) : NULL;
    const uint32_t w = noc_wire(h), i = wire_index(w);
    if (noc_owner(h) != ctx->pid)
        sstep_fatal(ctx, prim, "%s %#zx is a noc slot of process %u, not of this process",
                what, (size_t)h, noc_owner(h));
    if (!a || i >= a->size || a->e[i].gen != wire_gen(w) || a->e[i].state != SSTEP_SLOT_GLOBAL)
        sstep_fatal(ctx, prim, "%s %#zx is no live noc slot of this process (never "
                "registered, or deregistered)", what, (size_t)h);
    *idx = i;
    return &a->e[i];
}

static lpf_err_t noc_deregister(struct sstep_ctx *ctx, const char *prim, lpf_memslot_t h)
{
    uint32_t i;
    struct sstep_slot *e = own_entry(ctx, prim, "memslot", h, &i);
    struct sstep_lext *x = ctx->lext;
    e->state = SSTEP_SLOT_FREE;
    x->alias[i] = LPF_INVALID_MEMSLOT;
    x->noc_free[x->noc_nfree++] = i;
    x->noc_live--;
    return LPF_SUCCESS;
}

lpf_err_t sstep_noc_deregister(struct sstep_ctx *ctx, lpf_memslot_t h)
{
    return noc_deregister(ctx, "lpf_deregister", h);
}

/* LPF's name: a noc slot, local and immediate; a core slot as lpf_deregister
 * (LPF keeps both in one register) */
lpf_err_t lpf_noc_deregister(lpf_t c, lpf_memslot_t memslot)
{
    const char *prim = "lpf_noc_deregister";
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (!is_noc(memslot)) return lpf_deregister(c, memslot);
    return noc_deregister(ctx, prim, memslot);
}

lpf_err_t lpf_noc_serialize_slot(lpf_t c, lpf_memslot_t slot, char **buff, size_t *buff_size)
{
    const char *prim = "lpf_noc_serialize_slot";
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    if (SSTEP_UNLIKELY(buff == NULL || buff_size == NULL))
        sstep_fatal(ctx, prim, "buff or buff_size is NULL");
    if (SSTEP_UNLIKELY(!is_noc(slot)))
        sstep_fatal(ctx, prim, "slot %#zx is not a noc slot (lpf_noc_register)", (size_t)slot);
    lpf_memslot_t h = slot;
    if (noc_owner(slot) == ctx->pid) {
        uint32_t i;
        own_entry(ctx, prim, "slot", slot, &i);
        if (ctx->lext->alias[i] != LPF_INVALID_MEMSLOT) h = ctx->lext->alias[i];
    }
    char *b = malloc(16);
    if (!b) return LPF_ERR_OUT_OF_MEMORY;
    memcpy(b, noc_magic, 8);
    uint64_t v = h;
    memcpy(b + 8, &v, 8);
    *buff = b;
    *buff_size = 16;
    return LPF_SUCCESS;
}

lpf_err_t lpf_noc_deserialize_slot(lpf_t c, char *buff, lpf_memslot_t slot)
{
    const char *prim = "lpf_noc_deserialize_slot";
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    if (SSTEP_UNLIKELY(buff == NULL)) sstep_fatal(ctx, prim, "buff is NULL");
    if (SSTEP_UNLIKELY(memcmp(buff, noc_magic, 8) != 0))
        sstep_fatal(ctx, prim, "buff does not hold a slot from lpf_noc_serialize_slot");
    uint64_t v;
    memcpy(&v, buff + 8, 8);
    if (SSTEP_UNLIKELY(!is_noc((lpf_memslot_t)v) || noc_owner((lpf_memslot_t)v) >= ctx->nprocs))
        sstep_fatal(ctx, prim, "buff holds %#llx, no noc slot of a process of this context",
                (unsigned long long)v);
    if (SSTEP_UNLIKELY(!is_noc(slot)))
        sstep_fatal(ctx, prim, "slot %#zx is not a noc slot (lpf_noc_register)", (size_t)slot);
    /* a slot registered with an area of its own names the other area from
     * now on (its own is no longer reachable through it) */
    uint32_t i;
    own_entry(ctx, prim, "slot", slot, &i);
    ctx->lext->alias[i] = (lpf_memslot_t)v;
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Slot checks of extension requests                                    */
/* ------------------------------------------------------------------ */

char *lx_local_area(struct sstep_ctx *ctx, const char *prim, const char *what,
        lpf_memslot_t h, size_t off, size_t size)
{
    struct sstep_slot *e;
    if (is_noc(h)) {
        uint32_t i;
        e = own_entry(ctx, prim, what, h, &i);
        if (SSTEP_UNLIKELY(ctx->lext->alias[i] != LPF_INVALID_MEMSLOT))
            sstep_fatal(ctx, prim, "%s %#zx names an area of process %u (deserialized); a "
                    "local area must be this process's own", what, (size_t)h,
                    noc_owner(ctx->lext->alias[i]));
    } else {
        struct sstep_slot_table *t = (h & SSTEP_SLOT_LOCAL_BIT) ? &ctx->locals : &ctx->globals;
        struct sstep_slot_array *a = sstep_slots(t);
        uint32_t i = (uint32_t)((h & 0xffffffffu) >> 1), gen = (uint32_t)(h >> 32);
        if (SSTEP_UNLIKELY(h == LPF_INVALID_MEMSLOT || i >= a->size || gen == 0
                    || a->e[i].gen != gen || a->e[i].state == SSTEP_SLOT_FREE))
            sstep_fatal(ctx, prim, "%s %#zx is no live memory slot of this context", what,
                    (size_t)h);
        e = &a->e[i];
        if (SSTEP_UNLIKELY(e->state == SSTEP_SLOT_GLOBAL && e->active_from > ctx->superstep))
            sstep_fatal(ctx, prim, "%s %#zx is a global slot registered in this superstep; "
                    "it is usable only after the next lpf_sync", what, (size_t)h);
    }
    if (SSTEP_UNLIKELY(off > e->size || size > e->size - off))
        sstep_fatal(ctx, prim, "%s: offset %zu + size %zu exceeds the %zu registered bytes",
                what, off, size, e->size);
    return e->base + off;
}

uint32_t lx_remote_idx(struct sstep_ctx *ctx, const char *prim, const char *what,
        lpf_memslot_t h, lpf_pid_t pid)
{
    if (SSTEP_UNLIKELY(pid >= ctx->nprocs))
        sstep_fatal(ctx, prim, "pid %u is out of range (nprocs %u)", pid, ctx->nprocs);
    if (is_noc(h)) {
        lpf_memslot_t r = h;
        if (noc_owner(h) == ctx->pid) {
            uint32_t i;
            own_entry(ctx, prim, what, h, &i);
            if (ctx->lext->alias[i] != LPF_INVALID_MEMSLOT) r = ctx->lext->alias[i];
        }
        if (SSTEP_UNLIKELY(noc_owner(r) != pid))
            sstep_fatal(ctx, prim, "%s %#zx names a noc area of process %u, not of process "
                    "%u that the request addresses", what, (size_t)h, noc_owner(r), pid);
        return noc_wire(r);
    }
    if (SSTEP_UNLIKELY(h & SSTEP_SLOT_LOCAL_BIT))
        sstep_fatal(ctx, prim, "%s %#zx is not a global or noc slot; a remote area needs "
                "one", what, (size_t)h);
    struct sstep_slot_array *a = sstep_slots(&ctx->globals);
    uint32_t i = (uint32_t)((h & 0xffffffffu) >> 1), gen = (uint32_t)(h >> 32);
    if (SSTEP_UNLIKELY(i >= a->size || gen == 0 || a->e[i].gen != gen
                || a->e[i].state != SSTEP_SLOT_GLOBAL))
        sstep_fatal(ctx, prim, "%s %#zx is no live global slot of this context", what,
                (size_t)h);
    if (SSTEP_UNLIKELY(a->e[i].active_from > ctx->superstep))
        sstep_fatal(ctx, prim, "%s %#zx was registered in this superstep; it is usable "
                "only after the next lpf_sync", what, (size_t)h);
    return i;
}

static lpf_err_t noc_request(lpf_t c, const char *prim, int kind, lpf_memslot_t lslot,
        size_t loff, lpf_pid_t pid, lpf_memslot_t rslot, size_t roff, size_t size,
        lpf_msg_attr_t attr)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, prim);
    uint32_t idx = lx_remote_idx(ctx, prim, kind == SSTEP_PUT ? "dst_slot" : "src_slot",
            rslot, pid);
    char *local = lx_local_area(ctx, prim, kind == SSTEP_PUT ? "src_slot" : "dst_slot",
            lslot, loff, size);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    return lx_enqueue(ctx, prim, kind, pid, local, idx, roff, size, lslot, attr);
}

lpf_err_t lpf_noc_put(lpf_t c, lpf_memslot_t src_slot, size_t src_offset, lpf_pid_t dst_pid,
        lpf_memslot_t dst_slot, size_t dst_offset, size_t size, lpf_msg_attr_t attr)
{
    return noc_request(c, "lpf_noc_put", SSTEP_PUT, src_slot, src_offset, dst_pid, dst_slot,
            dst_offset, size, attr);
}

lpf_err_t lpf_noc_get(lpf_t c, lpf_pid_t src_pid, lpf_memslot_t src_slot, size_t src_offset,
        lpf_memslot_t dst_slot, size_t dst_offset, size_t size, lpf_msg_attr_t attr)
{
    return noc_request(c, "lpf_noc_get", SSTEP_GET, dst_slot, dst_offset, src_pid, src_slot,
            src_offset, size, attr);
}

/* lpf_put / lpf_get with an attribute other than the default */
lpf_err_t sstep_lext_put(lpf_t c, lpf_memslot_t lslot, size_t loff, lpf_pid_t pid,
        lpf_memslot_t rslot, size_t roff, size_t size, lpf_msg_attr_t attr, int get)
{
    return noc_request(c, get ? "lpf_get" : "lpf_put", get ? SSTEP_GET : SSTEP_PUT, lslot,
            loff, pid, rslot, roff, size, attr);
}
