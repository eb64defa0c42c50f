/*
 * The twelve primitives of <lpf/core.h>: O(1) argument checks, slot tables
 * and request queueing; the engine of the context does the rest.
 */
#include "core_internal.h"
#include "sstep_ext.h"
#include "profile.h"
#include "checked.h"

#include <lpf/abort.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>

_Static_assert(sizeof(size_t) >= 8, "Superstep needs a 64-bit size_t");

/* ------------------------------------------------------------------ */
/* Constants                                                            */
/* ------------------------------------------------------------------ */

static char root_marker;

const lpf_err_t LPF_SUCCESS = 0;
const lpf_err_t LPF_ERR_OUT_OF_MEMORY = 1;
const lpf_err_t LPF_ERR_FATAL = 2;
const lpf_t LPF_ROOT = &root_marker;
const lpf_t LPF_NONE = NULL;
const lpf_init_t LPF_INIT_NONE = NULL;
const lpf_args_t LPF_NO_ARGS = { NULL, 0, NULL, 0, NULL, 0 };
const lpf_pid_t LPF_MAX_P = UINT_MAX;
const lpf_sync_attr_t LPF_SYNC_DEFAULT = 0;
const lpf_msg_attr_t LPF_MSG_DEFAULT = 0;
const lpf_memslot_t LPF_INVALID_MEMSLOT = SIZE_MAX;
const lpf_machine_t LPF_INVALID_MACHINE = { 0, 0, NULL, NULL };
const int LPF_HAS_ABORT = 1;

/* ------------------------------------------------------------------ */
/* Engine selection and the root context                                */
/* ------------------------------------------------------------------ */

static const struct sstep_engine *_Atomic default_engine;

/* engines compiled into this library, by the name SUPERSTEP_ENGINE uses */
const struct sstep_engine *sstep_engine_by_name(const char *name)
{
    if (!name || !*name || strcasecmp(name, "pthread") == 0) return &sstep_pthread_engine;
#ifdef SUPERSTEP_HAVE_MPI
    if (strcasecmp(name, "mpi") == 0) return &sstep_mpi_engine;
    if (strcasecmp(name, "hybrid") == 0) return &sstep_hybrid_engine;
#endif
    return NULL;
}

/* The engine new sections start on: set by an engine's start-up code (e.g.
 * the MPI engine when launched under MPI), else SUPERSTEP_ENGINE, else the
 * pthread engine. */
const struct sstep_engine *sstep_default_engine(void)
{
    const struct sstep_engine *e = atomic_load_explicit(&default_engine, memory_order_acquire);
    if (SSTEP_LIKELY(e != NULL)) return e;
    const char *name = getenv("SUPERSTEP_ENGINE");
    e = sstep_engine_by_name(name);
    if (!e) {
        sstep_warn("SUPERSTEP_ENGINE=%s is not an engine of this build; using pthread", name);
        e = &sstep_pthread_engine;
    }
    const struct sstep_engine *expected = NULL;
    atomic_compare_exchange_strong(&default_engine, &expected, e);
    return atomic_load_explicit(&default_engine, memory_order_acquire);
}

void sstep_set_default_engine(const struct sstep_engine *e)
{
    atomic_store_explicit(&default_engine, e, memory_order_release);
}

static pthread_once_t root_once = PTHREAD_ONCE_INIT;
static struct sstep_ctx *root_ctx;

static void root_init(void)
{
    const struct sstep_engine *e = sstep_default_engine();
    root_ctx = sstep_ctx_create(0, 1, e, NULL);
    if (!root_ctx) sstep_fatal(NULL, "lpf_init", "out of memory creating LPF_ROOT");
    root_ctx->free_p = e->machine_p ? e->machine_p() : sstep_machine_p();
}

struct sstep_ctx *sstep_root_ctx(void)
{
    pthread_once(&root_once, root_init);
    return root_ctx;
}

/* Map an lpf_t to its context; a bad handle is a clear error. */
static inline struct sstep_ctx *ctx_of(lpf_t c, const char *primitive)
{
    if (c == LPF_ROOT) return sstep_root_ctx();
    struct sstep_ctx *x = (struct sstep_ctx *)c;
    if (SSTEP_UNLIKELY(x == NULL || x->magic != SSTEP_CTX_MAGIC)) {
        if (x && x->magic == SSTEP_CTX_DEAD)
            sstep_fatal(NULL, primitive, "context %p belongs to an SPMD section that "
                    "has ended (process %u of %u, after %llu supersteps); an lpf_t is "
                    "valid only inside the SPMD function it was passed to", c, x->pid,
                    x->nprocs, (unsigned long long)x->superstep);
        sstep_fatal(NULL, primitive, "invalid context %p (LPF_NONE, or not a context)", c);
    }
    return x;
}

struct sstep_ctx *sstep_ctx_of(lpf_t c, const char *primitive)
{
    return ctx_of(c, primitive);
}

/* share of F processors for process s of a section of P (lower pids take
 * the remainder) */
lpf_pid_t sstep_share(lpf_pid_t F, lpf_pid_t P, lpf_pid_t s)
{
    unsigned long long x = ((unsigned long long)F + P - 1 - s) / P;
    return x == 0 ? 1 : (lpf_pid_t)x;
}

/* ------------------------------------------------------------------ */
/* Slots                                                                */
/* ------------------------------------------------------------------ */

static inline lpf_memslot_t make_handle(uint32_t gen, uint32_t idx, int local)
{
    return ((lpf_memslot_t)gen << 32) | ((lpf_memslot_t)idx << 1) | (local ? 1u : 0u);
}

static void describe_slot_error(struct sstep_ctx *ctx, const char *prim,
        const char *what, lpf_memslot_t h)
{
    if (h == LPF_INVALID_MEMSLOT)
        sstep_fatal(ctx, prim, "%s is LPF_INVALID_MEMSLOT", what);
    struct sstep_slot_table *t = (h & SSTEP_SLOT_LOCAL_BIT) ? &ctx->locals : &ctx->globals;
    struct sstep_slot_array *a = sstep_slots(t);
    uint32_t idx = (uint32_t)((h & 0xffffffffu) >> 1);
    uint32_t gen = (uint32_t)(h >> 32);
    if (idx >= a->size || gen == 0 || gen > a->e[idx].gen)
        sstep_fatal(ctx, prim, "%s %#zx is not a memory slot of this context (no "
                "lpf_register_* of this context returned it)", what, (size_t)h);
    if (a->e[idx].gen != gen || a->e[idx].state == SSTEP_SLOT_FREE)
        sstep_fatal(ctx, prim, "%s %#zx was deregistered (stale slot)", what, (size_t)h);
    sstep_fatal(ctx, prim, "%s %#zx is invalid", what, (size_t)h);
}

/* Validate a handle used as a local area (put source / get destination)
 * and return the address of [off, off+size). */
static inline char *local_area(struct sstep_ctx *ctx, const char *prim,
        const char *what, lpf_memslot_t h, size_t off, size_t size)
{
    struct sstep_slot_table *t = (h & SSTEP_SLOT_LOCAL_BIT) ? &ctx->locals : &ctx->globals;
    struct sstep_slot_array *a = sstep_slots(t);
    uint32_t idx = (uint32_t)((h & 0xffffffffu) >> 1);
    uint32_t gen = (uint32_t)(h >> 32);
    if (SSTEP_UNLIKELY(idx >= a->size || a->e[idx].gen != gen || gen == 0
                || a->e[idx].state == SSTEP_SLOT_FREE))
        describe_slot_error(ctx, prim, what, h);
    struct sstep_slot *e = &a->e[idx];
    if (SSTEP_UNLIKELY(e->state == SSTEP_SLOT_GLOBAL && e->active_from > ctx->superstep))
        sstep_fatal(ctx, prim, "%s %#zx is a global slot registered in this "
                "superstep; it is usable only after the next lpf_sync", what, (size_t)h);
    if (SSTEP_UNLIKELY(off > e->size || size > e->size - off))
        sstep_fatal(ctx, prim, "%s: offset %zu + size %zu exceeds the %zu registered bytes",
                what, off, size, e->size);
    return e->base + off;
}

/* Validate a handle naming a remote area (put destination / get source):
 * it must be an activated global slot. Returns its index. The remote
 * process's own registration bounds the range; it is checked where the
 * request executes (its size may differ per process). */
static inline uint32_t remote_slot(struct sstep_ctx *ctx, const char *prim,
        const char *what, lpf_memslot_t h)
{
    if (SSTEP_UNLIKELY(h & SSTEP_SLOT_LOCAL_BIT)) {
        if (h == LPF_INVALID_MEMSLOT) describe_slot_error(ctx, prim, what, h);
        /* a live local slot, or something else (never handed out, stale) */
        struct sstep_slot_array *la = sstep_slots(&ctx->locals);
        uint32_t li = (uint32_t)((h & 0xffffffffu) >> 1), lg = (uint32_t)(h >> 32);
        if (lg == 0 || li >= la->size || la->e[li].gen != lg || la->e[li].state != SSTEP_SLOT_LOCAL)
            describe_slot_error(ctx, prim, what, h);
        sstep_fatal(ctx, prim, "%s %#zx is a local slot; a remote area needs a "
                "slot from lpf_register_global", what, (size_t)h);
    }
    struct sstep_slot_array *a = sstep_slots(&ctx->globals);
    uint32_t idx = (uint32_t)((h & 0xffffffffu) >> 1);
    uint32_t gen = (uint32_t)(h >> 32);
    if (SSTEP_UNLIKELY(idx >= a->size || a->e[idx].gen != gen || gen == 0
                || a->e[idx].state != SSTEP_SLOT_GLOBAL))
        describe_slot_error(ctx, prim, what, h);
    if (SSTEP_UNLIKELY(a->e[idx].active_from > ctx->superstep))
        sstep_fatal(ctx, prim, "%s %#zx was registered in this superstep; it is "
                "usable only after the next lpf_sync", what, (size_t)h);
    return idx;
}

static lpf_err_t do_register(lpf_t c, void *pointer, size_t size,
        lpf_memslot_t *memslot, int local, const char *prim)
{
    struct sstep_ctx *ctx = ctx_of(c, prim);
    if (SSTEP_UNLIKELY(memslot == NULL))
        sstep_fatal(ctx, prim, "memslot is NULL");
    if (SSTEP_UNLIKELY(pointer == NULL && size != 0))
        sstep_fatal(ctx, prim, "pointer is NULL but size is %zu", size);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (SSTEP_UNLIKELY(ctx->nregs >= ctx->reg_limit))
        sstep_fatal(ctx, prim, "memory register capacity exceeded: %zu registrations "
                "live, capacity %zu (call lpf_resize_memory_register and lpf_sync first)",
                ctx->nregs, ctx->reg_limit);
    struct sstep_slot_table *t = local ? &ctx->locals : &ctx->globals;
    struct sstep_slot_array *a = sstep_slots(t);
    uint32_t idx = t->nfree > t->floor ? t->free_stack[--t->nfree] : t->fresh++;
    if (SSTEP_UNLIKELY(idx >= a->size)) {
        /* only inside an E3 scope (sstep_scope_push), whose indices start
         * above every index of the enclosing scopes */
        t->fresh--;
        sstep_fatal(ctx, prim, "memory register capacity exceeded: slot index %u in an "
                "object scope, capacity %zu (call lpf_resize_memory_register and sync first)",
                idx, ctx->reg_limit);
    }
    struct sstep_slot *e = &a->e[idx];
    uint32_t gen = e->gen + 1;
    if (gen == 0 || gen == UINT32_MAX) gen = 1;
    /* A zero-size registration may pass NULL. Keep a non-NULL base so that
     * resolving its (empty) area never returns the NULL that
     * sstep_resolve_global uses for "invalid"; no byte of it is accessed. */
    static char zero_size_area;
    e->base = pointer ? (char *)pointer : &zero_size_area;
    e->size = size;
    e->gen = gen;
    e->active_from = local ? 0 : ctx->superstep + 1;
    e->state = local ? SSTEP_SLOT_LOCAL : SSTEP_SLOT_GLOBAL;
    ctx->nregs++;
    if (!local) ctx->pending_globals++;
    if (SSTEP_UNLIKELY(ctx->checked) && !local) sstep_chk_register(ctx, idx, size);
    *memslot = make_handle(gen, idx, local);
    return LPF_SUCCESS;
}

lpf_err_t lpf_register_global(lpf_t ctx, void *pointer, size_t size, lpf_memslot_t *memslot)
{
    return do_register(ctx, pointer, size, memslot, 0, "lpf_register_global");
}

lpf_err_t lpf_register_local(lpf_t ctx, void *pointer, size_t size, lpf_memslot_t *memslot)
{
    return do_register(ctx, pointer, size, memslot, 1, "lpf_register_local");
}

lpf_err_t lpf_deregister(lpf_t c, lpf_memslot_t h)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_deregister");
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    int local = (h & SSTEP_SLOT_LOCAL_BIT) != 0;
    struct sstep_slot_table *t = local ? &ctx->locals : &ctx->globals;
    struct sstep_slot_array *a = sstep_slots(t);
    uint32_t idx = (uint32_t)((h & 0xffffffffu) >> 1);
    uint32_t gen = (uint32_t)(h >> 32);
    if (SSTEP_UNLIKELY(!local && (idx & SSTEP_NOC_BIT) && idx >= a->size))
        return sstep_lpfext.noc_deregister(ctx, h);   /* <lpf/noc.h>: local, immediate */
    if (SSTEP_UNLIKELY(h == LPF_INVALID_MEMSLOT || idx >= a->size || gen == 0
                || a->e[idx].gen != gen || a->e[idx].state == SSTEP_SLOT_FREE))
        describe_slot_error(ctx, "lpf_deregister", "memslot", h);
    if (SSTEP_UNLIKELY(ctx->checked)) sstep_chk_deregister(ctx, h, local, idx);
    a->e[idx].state = SSTEP_SLOT_FREE;
    a->e[idx].base = NULL;
    a->e[idx].size = 0;
    t->free_stack[t->nfree++] = idx;
    ctx->nregs--;
    if (!local) ctx->pending_globals++;
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Capacities                                                           */
/* ------------------------------------------------------------------ */

SSTEP_HIDDEN int sstep_slots_prepare(struct sstep_ctx *ctx, size_t n);

lpf_err_t lpf_resize_memory_register(lpf_t c, size_t max_regs)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_resize_memory_register");
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (max_regs > ctx->reg_limit) {
        /* byte size must not overflow; indices must fit in 31 bits */
        if (max_regs > (size_t)(UINT32_MAX / 2)
                || max_regs > SIZE_MAX / (2 * sizeof(struct sstep_slot) + 2 * sizeof(uint32_t)))
            return LPF_ERR_OUT_OF_MEMORY;
        if (sstep_slots_prepare(ctx, max_regs)) return LPF_ERR_OUT_OF_MEMORY;
    }
    ctx->reg_pending = max_regs;
    return LPF_SUCCESS;
}

lpf_err_t lpf_resize_message_queue(lpf_t c, size_t max_msgs)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_resize_message_queue");
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (max_msgs > ctx->q.limit) {
        if (max_msgs >= (size_t)SSTEP_NIL || max_msgs > SIZE_MAX / sizeof(struct sstep_req))
            return LPF_ERR_OUT_OF_MEMORY;
        if (sstep_queue_grow(ctx, max_msgs)) return LPF_ERR_OUT_OF_MEMORY;
    }
    ctx->msg_pending = max_msgs;
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Requests                                                             */
/* ------------------------------------------------------------------ */

/* room for one internal (layer) request: the queue grows as needed */
static inline int internal_room(struct sstep_ctx *ctx)
{
    if (SSTEP_LIKELY(ctx->q.n < ctx->q.alloc)) return 0;
    return sstep_queue_grow(ctx, ctx->q.n + 1);
}

static inline void user_room(struct sstep_ctx *ctx, const char *prim)
{
    if (SSTEP_UNLIKELY(ctx->q.nuser >= ctx->q.limit))
        sstep_fatal(ctx, prim, "message queue capacity exceeded: %zu requests "
                "issued in this superstep, capacity %zu (call "
                "lpf_resize_message_queue and lpf_sync first)", ctx->q.nuser, ctx->q.limit);
    /* layers may share the array with internal requests */
    if (SSTEP_UNLIKELY(ctx->q.n >= ctx->q.alloc) && internal_room(ctx))
        sstep_fatal(ctx, prim, "out of memory growing the request queue");
    ctx->q.nuser++;
}

/* Fast validity tests for the hot paths: no calls, no messages. When one
 * fails, the cold path repeats the checks with full diagnostics. */
static inline char *try_local(struct sstep_ctx *ctx, lpf_memslot_t h, size_t off, size_t size)
{
    struct sstep_slot_table *t = (h & SSTEP_SLOT_LOCAL_BIT) ? &ctx->locals : &ctx->globals;
    struct sstep_slot_array *a = atomic_load_explicit(&t->arr, memory_order_relaxed);
    uint32_t idx = (uint32_t)h >> 1;
    if (SSTEP_UNLIKELY(idx >= a->size)) return NULL;
    const struct sstep_slot *e = &a->e[idx];
    if (SSTEP_UNLIKELY(e->gen != (uint32_t)(h >> 32) || e->state == SSTEP_SLOT_FREE
                || e->active_from > ctx->superstep || off > e->size || size > e->size - off))
        return NULL;
    return e->base + off;
}

static inline int try_remote(struct sstep_ctx *ctx, lpf_memslot_t h, uint32_t *idx_out)
{
    struct sstep_slot_array *a = atomic_load_explicit(&ctx->globals.arr, memory_order_relaxed);
    uint32_t idx = (uint32_t)h >> 1;
    if (SSTEP_UNLIKELY((h & SSTEP_SLOT_LOCAL_BIT) || idx >= a->size)) return 0;
    const struct sstep_slot *e = &a->e[idx];
    if (SSTEP_UNLIKELY(e->gen != (uint32_t)(h >> 32) || e->state != SSTEP_SLOT_GLOBAL
                || e->active_from > ctx->superstep))
        return 0;
    *idx_out = idx;
    return 1;
}

static inline struct sstep_ctx *fast_ctx(lpf_t c)
{
    if (SSTEP_UNLIKELY(c == (lpf_t)&root_marker)) return sstep_root_ctx();
    struct sstep_ctx *x = (struct sstep_ctx *)c;
    if (SSTEP_UNLIKELY(x == NULL || x->magic != SSTEP_CTX_MAGIC)) return NULL;
    return x;
}

/* cold paths: every check with its message (one of them fails, or the
 * request array must grow) */
static __attribute__((noinline, cold)) lpf_err_t put_slow(lpf_t c, lpf_memslot_t src_slot,
        size_t src_offset, lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_put");
    if (SSTEP_UNLIKELY(dst_pid >= ctx->nprocs))
        sstep_fatal(ctx, "lpf_put", "dst_pid %u is out of range (nprocs %u)", dst_pid, ctx->nprocs);
    char *src = local_area(ctx, "lpf_put", "src_slot", src_slot, src_offset, size);
    uint32_t idx = remote_slot(ctx, "lpf_put", "dst_slot", dst_slot);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    user_room(ctx, "lpf_put");
    sstep_enqueue(ctx, SSTEP_PUT, dst_pid, src, idx, dst_offset, size);
    if (SSTEP_UNLIKELY(ctx->checked))
        sstep_chk_request(ctx, "lpf_put", SSTEP_PUT, SSTEP_CHK_USER, dst_pid, idx,
                dst_offset, size, src_slot);
    return LPF_SUCCESS;
}

static __attribute__((noinline, cold)) lpf_err_t get_slow(lpf_t c, lpf_pid_t src_pid,
        lpf_memslot_t src_slot, size_t src_offset, lpf_memslot_t dst_slot, size_t dst_offset, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_get");
    if (SSTEP_UNLIKELY(src_pid >= ctx->nprocs))
        sstep_fatal(ctx, "lpf_get", "src_pid %u is out of range (nprocs %u)", src_pid, ctx->nprocs);
    uint32_t idx = remote_slot(ctx, "lpf_get", "src_slot", src_slot);
    char *dst = local_area(ctx, "lpf_get", "dst_slot", dst_slot, dst_offset, size);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    user_room(ctx, "lpf_get");
    sstep_enqueue(ctx, SSTEP_GET, src_pid, dst, idx, src_offset, size);
    if (SSTEP_UNLIKELY(ctx->checked))
        sstep_chk_request(ctx, "lpf_get", SSTEP_GET, SSTEP_CHK_USER, src_pid, idx,
                src_offset, size, dst_slot);
    return LPF_SUCCESS;
}

/* room for a user request: under the capacity and inside the array (and
 * neither failed nor checked: those take the cold path) */
static inline int fast_room(const struct sstep_ctx *ctx)
{
    return ctx->q.nuser < ctx->q.limit && ctx->q.n < ctx->q.alloc
            && !(ctx->failed | ctx->checked);
}

lpf_err_t lpf_put(lpf_t c, lpf_memslot_t src_slot, size_t src_offset,
        lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset,
        size_t size, lpf_msg_attr_t attr)
{
    if (SSTEP_UNLIKELY(attr != LPF_MSG_DEFAULT))   /* <lpf/tags.h>, <lpf/zero.h> */
        return sstep_lpfext.put(c, src_slot, src_offset, dst_pid, dst_slot, dst_offset, size,
                attr, 0);
    struct sstep_ctx *ctx = fast_ctx(c);
    char *src;
    uint32_t idx;
    if (SSTEP_LIKELY(ctx && dst_pid < ctx->nprocs
                && (src = try_local(ctx, src_slot, src_offset, size)) != NULL
                && try_remote(ctx, dst_slot, &idx) && fast_room(ctx))) {
        ctx->q.nuser++;
        sstep_enqueue(ctx, SSTEP_PUT, dst_pid, src, idx, dst_offset, size);
        return LPF_SUCCESS;
    }
    return put_slow(c, src_slot, src_offset, dst_pid, dst_slot, dst_offset, size);
}

lpf_err_t lpf_get(lpf_t c, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_offset, lpf_memslot_t dst_slot, size_t dst_offset,
        size_t size, lpf_msg_attr_t attr)
{
    if (SSTEP_UNLIKELY(attr != LPF_MSG_DEFAULT))
        return sstep_lpfext.put(c, dst_slot, dst_offset, src_pid, src_slot, src_offset, size,
                attr, 1);
    struct sstep_ctx *ctx = fast_ctx(c);
    char *dst;
    uint32_t idx;
    if (SSTEP_LIKELY(ctx && src_pid < ctx->nprocs
                && try_remote(ctx, src_slot, &idx)
                && (dst = try_local(ctx, dst_slot, dst_offset, size)) != NULL
                && fast_room(ctx))) {
        ctx->q.nuser++;
        sstep_enqueue(ctx, SSTEP_GET, src_pid, dst, idx, src_offset, size);
        return LPF_SUCCESS;
    }
    return get_slow(c, src_pid, src_slot, src_offset, dst_slot, dst_offset, size);
}

/* ------------------------------------------------------------------ */
/* The layers' fast path (sstep_ext.h)                                  */
/* ------------------------------------------------------------------ */

lpf_err_t sstep_put_ptr(lpf_t c, const void *src, lpf_pid_t dst_pid,
        lpf_memslot_t dst_slot, size_t dst_off, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "put");
    const char *name = ctx->put_name ? ctx->put_name : "lpf_put";
    if (SSTEP_UNLIKELY(dst_pid >= ctx->nprocs))
        sstep_fatal(ctx, name, "destination pid %u is out of range (nprocs %u)", dst_pid, ctx->nprocs);
    uint32_t idx = remote_slot(ctx, name, "destination slot", dst_slot);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (SSTEP_UNLIKELY(internal_room(ctx))) return LPF_ERR_OUT_OF_MEMORY;
    sstep_enqueue(ctx, SSTEP_PUT, dst_pid, (char *)src, idx, dst_off, size);
    if (SSTEP_UNLIKELY(ctx->checked))
        sstep_chk_request(ctx, name, SSTEP_PUT, SSTEP_CHK_PTR, dst_pid, idx, dst_off, size,
                LPF_INVALID_MEMSLOT);
    return LPF_SUCCESS;
}

lpf_err_t sstep_get_ptr(lpf_t c, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_off, void *dst, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "get");
    const char *name = ctx->get_name ? ctx->get_name : "lpf_get";
    if (SSTEP_UNLIKELY(src_pid >= ctx->nprocs))
        sstep_fatal(ctx, name, "source pid %u is out of range (nprocs %u)", src_pid, ctx->nprocs);
    uint32_t idx = remote_slot(ctx, name, "source slot", src_slot);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (SSTEP_UNLIKELY(internal_room(ctx))) return LPF_ERR_OUT_OF_MEMORY;
    sstep_enqueue(ctx, SSTEP_GET, src_pid, (char *)dst, idx, src_off, size);
    if (SSTEP_UNLIKELY(ctx->checked))
        sstep_chk_request(ctx, name, SSTEP_GET, SSTEP_CHK_PTR, src_pid, idx, src_off, size,
                LPF_INVALID_MEMSLOT);
    return LPF_SUCCESS;
}

/* The staging arena holds byte-granular put data (see stage_bytes) besides
 * aligned blocks: re-align its top before an aligned allocation. */
static inline void arena_realign(struct sstep_arena *a)
{
    struct sstep_arena_block *b = a->head;
    if (b) {
        const size_t align = sizeof(max_align_t);
        size_t at = (b->used + align - 1) & ~(align - 1);
        b->used = at < b->cap ? at : b->cap;
    }
}

void *sstep_stage(lpf_t c, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "stage");
    arena_realign(&ctx->arena[ctx->superstep & 1]);
    return sstep_arena_alloc(&ctx->arena[ctx->superstep & 1], size ? size : 1);
}

lpf_err_t sstep_send(lpf_t c, lpf_pid_t dst_pid, const void *msg, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "send");
    if (SSTEP_UNLIKELY(dst_pid >= ctx->nprocs))
        sstep_fatal(ctx, "send", "destination pid %u is out of range (nprocs %u)", dst_pid, ctx->nprocs);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (SSTEP_UNLIKELY(internal_room(ctx))) return LPF_ERR_OUT_OF_MEMORY;
    sstep_enqueue(ctx, SSTEP_MSG, dst_pid, (char *)msg, 0, 0, size);
    return LPF_SUCCESS;
}

/* Staging memory for the fast paths below: the arena's bump fast path,
 * inline (same rounding as sstep_arena_alloc). */
static inline char *stage_inline(struct sstep_ctx *ctx, size_t size)
{
    struct sstep_arena *a = &ctx->arena[ctx->superstep & 1];
    const size_t align = sizeof(max_align_t);
    size_t need = (size + align - 1) & ~(align - 1);
    struct sstep_arena_block *b = a->head;
    if (SSTEP_LIKELY(b != NULL)) {
        size_t at = (b->used + align - 1) & ~(align - 1);
        if (SSTEP_LIKELY(need >= size && need != 0 && at <= b->cap && b->cap - at >= need)) {
            char *p = (char *)b->data + at;
            b->used = at + need;
            return p;
        }
    }
    arena_realign(a);
    return sstep_arena_alloc(a, size ? size : 1);
}

/* Staging for put data, byte-granular (a memcpy source needs no alignment)
 * so that the data of consecutive puts lies back to back. */
static inline char *stage_bytes(struct sstep_arena *a, size_t size)
{
    struct sstep_arena_block *b = a->head;
    if (SSTEP_LIKELY(b && size && b->cap - b->used >= size)) {
        char *p = (char *)b->data + b->used;
        b->used += size;
        return p;
    }
    return sstep_arena_alloc(a, size ? size : 1);
}

/* Buffered put in one call (BSPlib's bsp_put): checks like sstep_put_ptr,
 * queues the put and returns in *buf staging memory of `size` bytes that
 * the caller fills before the next sync. */
static inline lpf_err_t put_buf(lpf_t c, lpf_pid_t dst_pid, lpf_memslot_t dst_slot,
        size_t dst_off, size_t size, void **buf)
{
    struct sstep_ctx *ctx = fast_ctx(c);
    uint32_t idx;
    if (SSTEP_UNLIKELY(!ctx || dst_pid >= ctx->nprocs || !try_remote(ctx, dst_slot, &idx)
                || (ctx->failed | ctx->checked) || ctx->q.n >= ctx->q.alloc)) {
        /* cold: full checks with messages, or the queue grows */
        ctx = ctx_of(c, "put");
        const char *name = ctx->put_name ? ctx->put_name : "lpf_put";
        if (SSTEP_UNLIKELY(dst_pid >= ctx->nprocs))
            sstep_fatal(ctx, name, "destination pid %u is out of range (nprocs %u)", dst_pid, ctx->nprocs);
        idx = remote_slot(ctx, name, "destination slot", dst_slot);
        if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
        if (SSTEP_UNLIKELY(internal_room(ctx))) return LPF_ERR_OUT_OF_MEMORY;
        if (SSTEP_UNLIKELY(ctx->checked))
            sstep_chk_remote(ctx, name, SSTEP_PUT, dst_pid, idx, dst_off, size);
    }
    struct sstep_arena *a = &ctx->arena[ctx->superstep & 1];
    /* write combining: a put that continues this peer's last put (same
     * slot, next offset) while its data continues the staged data just
     * extends that request -- one request and one copy at the sync for a
     * run of fine-grained puts */
    struct sstep_peer_lists *pl = &ctx->q.peers[dst_pid];
    const uint32_t last = pl->tail[SSTEP_PUT];
    struct sstep_arena_block *top = a->head;
    if (last != SSTEP_NIL && top != NULL) {
        struct sstep_req *r = &ctx->q.reqs[last];
        if (r->slot == idx && r->off + r->size == dst_off
                && r->local + r->size == (char *)top->data + top->used
                && top->cap - top->used >= size) {
            char *p = (char *)top->data + top->used;
            top->used += size;
            r->size += size;
            pl->bytes[SSTEP_PUT] += size;
            *buf = p;
            return LPF_SUCCESS;
        }
    }
    char *p = stage_bytes(a, size);
    if (SSTEP_UNLIKELY(p == NULL)) return LPF_ERR_OUT_OF_MEMORY;
    sstep_enqueue(ctx, SSTEP_PUT, dst_pid, p, idx, dst_off, size);
    *buf = p;
    return LPF_SUCCESS;
}

lpf_err_t sstep_put_buf(lpf_t c, lpf_pid_t dst_pid, lpf_memslot_t dst_slot,
        size_t dst_off, size_t size, void **buf)
{
    return put_buf(c, dst_pid, dst_slot, dst_off, size, buf);
}

/* sstep_put_buf and the copy of `size` bytes from src into the staging
 * memory, in one call */
lpf_err_t sstep_put_copy(lpf_t c, const void *src, lpf_pid_t dst_pid,
        lpf_memslot_t dst_slot, size_t dst_off, size_t size)
{
    void *buf;
    lpf_err_t rc = put_buf(c, dst_pid, dst_slot, dst_off, size, &buf);
    if (SSTEP_LIKELY(rc == LPF_SUCCESS)) sstep_copy(buf, src, size);
    return rc;
}

/* Buffered message in one call: queues a message of `size` bytes for
 * dst_pid and returns in *buf its staging memory, to be filled before the
 * next sync. */
lpf_err_t sstep_send_buf(lpf_t c, lpf_pid_t dst_pid, size_t size, void **buf)
{
    struct sstep_ctx *ctx = fast_ctx(c);
    if (SSTEP_UNLIKELY(!ctx || dst_pid >= ctx->nprocs || ctx->failed
                || ctx->q.n >= ctx->q.alloc)) {
        ctx = ctx_of(c, "send");
        if (SSTEP_UNLIKELY(dst_pid >= ctx->nprocs))
            sstep_fatal(ctx, "send", "destination pid %u is out of range (nprocs %u)", dst_pid, ctx->nprocs);
        if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
        if (SSTEP_UNLIKELY(internal_room(ctx))) return LPF_ERR_OUT_OF_MEMORY;
    }
    char *p = stage_inline(ctx, size);
    if (SSTEP_UNLIKELY(p == NULL)) return LPF_ERR_OUT_OF_MEMORY;
    sstep_enqueue(ctx, SSTEP_MSG, dst_pid, p, 0, 0, size);
    *buf = p;
    return LPF_SUCCESS;
}

const struct sstep_msg *sstep_inbox(lpf_t c, size_t *count)
{
    struct sstep_ctx *ctx = ctx_of(c, "inbox");
    *count = ctx->inbox.n;
    return ctx->inbox.msgs;
}

lpf_err_t sstep_direct_get(lpf_t c, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_off, void *dst, size_t size)
{
    struct sstep_ctx *ctx = ctx_of(c, "direct_get");
    const char *name = "bsp_direct_get";
    if (SSTEP_UNLIKELY(src_pid >= ctx->nprocs))
        sstep_fatal(ctx, name, "source pid %u is out of range (nprocs %u)", src_pid, ctx->nprocs);
    uint32_t idx = remote_slot(ctx, name, "source slot", src_slot);
    if (ctx->nprocs == 1) {
        char *from = sstep_resolve_global(ctx, idx, src_off, size);
        if (!from) sstep_remote_range_error(ctx, name, ctx->pid, idx, src_off, size);
        sstep_copy(dst, from, size);
        return LPF_SUCCESS;
    }
    if (!ctx->engine->direct_get) return LPF_ERR_FATAL;
    if (SSTEP_UNLIKELY(ctx->fork_gen != __atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED)))
        sstep_forked_use(ctx, name);
    return ctx->engine->direct_get(ctx, src_pid, idx, src_off, dst, size);
}

size_t sstep_remote_size(lpf_t c, lpf_pid_t pid, lpf_memslot_t slot)
{
    struct sstep_ctx *ctx = ctx_of(c, "remote_size");
    if (pid >= ctx->nprocs || (slot & SSTEP_SLOT_LOCAL_BIT)) return SIZE_MAX;
    uint32_t idx = (uint32_t)((slot & 0xffffffffu) >> 1);
    if (pid == ctx->pid || ctx->nprocs == 1) {
        struct sstep_slot_array *a = sstep_slots(&ctx->globals);
        return idx < a->size ? a->e[idx].size : SIZE_MAX;
    }
    size_t r = ctx->engine->remote_size ? ctx->engine->remote_size(ctx, pid, idx) : SIZE_MAX;
    if (r == SIZE_MAX && SSTEP_UNLIKELY(ctx->checked)) r = sstep_chk_remote_size(ctx, pid, idx);
    return r;
}

void sstep_layer_step(lpf_t c)
{
    struct sstep_ctx *ctx = ctx_of(c, "layer_step");
    if (ctx->layer_steps < ctx->superstep) {
        ctx->layer_steps++;
        if (ctx->prof) sstep_prof_layer_step(ctx);
    }
}

void sstep_set_names(lpf_t c, const char *put_name, const char *get_name)
{
    struct sstep_ctx *ctx = ctx_of(c, "set_names");
    ctx->put_name = put_name;
    ctx->get_name = get_name;
}

/* ------------------------------------------------------------------ */
/* Sync                                                                 */
/* ------------------------------------------------------------------ */

/* The get `r` of a process alone: its source, or an error. */
static char *solo_source(struct sstep_ctx *ctx, const struct sstep_req *r)
{
    char *from = sstep_resolve_global(ctx, r->slot, r->off, r->size);
    if (!from) sstep_remote_range_error(ctx, ctx->get_name ? ctx->get_name : "lpf_get",
            0, r->slot, r->off, r->size);
    return from;
}

/* One process alone: execute its own requests (gets first, then puts).
 * Every get reads its source as at the sync's entry: when the hull of the
 * gets' destinations meets that of their sources, the sources are copied
 * aside first. */
static lpf_err_t solo_exchange(struct sstep_ctx *ctx)
{
    struct sstep_queue *q = &ctx->q;
    struct sstep_peer_lists *pl = &q->peers[0];
    ctx->inbox.n = ctx->inbox.next = 0;
    char *stage = NULL;
    if (pl->count[SSTEP_GET] > 1) {
        const char *slo = (const char *)UINTPTR_MAX, *shi = NULL;
        const char *dlo = (const char *)UINTPTR_MAX, *dhi = NULL;
        for (uint32_t i = pl->head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
            const struct sstep_req *r = &q->reqs[i];
            const char *from = solo_source(ctx, r);
            if (!r->size) continue;
            if (from < slo) slo = from;
            if (from + r->size > shi) shi = from + r->size;
            if (r->local < dlo) dlo = r->local;
            if (r->local + r->size > dhi) dhi = r->local + r->size;
        }
        if (shi && dhi > slo && dlo < shi) {
            stage = sstep_arena_alloc(&ctx->arena[ctx->superstep & 1], pl->bytes[SSTEP_GET]);
            if (!stage) return LPF_ERR_OUT_OF_MEMORY;
            char *o = stage;
            for (uint32_t i = pl->head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
                const struct sstep_req *r = &q->reqs[i];
                if (r->size) sstep_copy(o, solo_source(ctx, r), r->size);
                o += r->size;
            }
        }
    }
    for (uint32_t i = pl->head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
        struct sstep_req *r = &q->reqs[i];
        if (stage) {
            sstep_copy(r->local, stage, r->size);
            stage += r->size;
        } else {
            sstep_copy(r->local, solo_source(ctx, r), r->size);
        }
    }
    for (uint32_t i = pl->head[SSTEP_PUT]; i != SSTEP_NIL; i = q->reqs[i].next) {
        struct sstep_req *r = &q->reqs[i];
        char *to = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (!to) sstep_remote_range_error(ctx, ctx->put_name ? ctx->put_name : "lpf_put",
                0, r->slot, r->off, r->size);
        sstep_copy(to, r->local, r->size);
    }
    if (pl->count[SSTEP_MSG]) {
        if (sstep_inbox_reserve(&ctx->inbox, pl->count[SSTEP_MSG])) return LPF_ERR_OUT_OF_MEMORY;
        for (uint32_t i = pl->head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next) {
            struct sstep_msg *m = &ctx->inbox.msgs[ctx->inbox.n++];
            m->data = q->reqs[i].local;
            m->size = q->reqs[i].size;
        }
    }
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Forked children                                                      */
/* ------------------------------------------------------------------ */

unsigned sstep_fork_gen;
static pid_t fork_parent_pid;

static void note_fork_prepare(void)
{
    fork_parent_pid = getpid();
}

static void note_fork_child(void)
{
    __atomic_add_fetch(&sstep_fork_gen, 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(note_fork_prepare, NULL, note_fork_child);
}

/* A forked child uses a context of its parent's run: it is no process of
 * the run (its peers would take it for the parent, or wait for it for
 * ever). It alone ends, saying so; the parent's run goes on. */
void sstep_forked_use(struct sstep_ctx *ctx, const char *prim)
{
    fflush(stdout);
    fprintf(stderr, "superstep: %s (process %u of %u): called in a forked child (os pid %ld) "
            "of the process that joined the run (os pid %ld); only that process may use "
            "the run: the child ends with exit status 6\n", prim, ctx->pid, ctx->nprocs,
            (long)getpid(), (long)fork_parent_pid);
    fflush(stderr);
    _exit(6);
}

/* origin and site: which entry point, called from where (the profiler) */
static inline __attribute__((always_inline)) lpf_err_t sync_impl(lpf_t c,
        struct sstep_sync_info *info, int origin, const void *site)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_sync");
    if (SSTEP_UNLIKELY(ctx->fork_gen != __atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED)))
        sstep_forked_use(ctx, origin == SSTEP_PROF_LPF ? "lpf_sync" : "bsp_sync");
    info->mismatch = 0;
    info->peer = LPF_MAX_P;
    info->peer_check = info->check;
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    /* an untagged sync ends every tag's phase too */
    if (SSTEP_UNLIKELY(atomic_load_explicit(&ctx->lext, memory_order_relaxed) != NULL))
        sstep_lpfext.flush(ctx);
    if (SSTEP_UNLIKELY(ctx->prof != NULL)) sstep_prof_sync_begin(ctx, origin, site);
    lpf_err_t rc = LPF_SUCCESS;
    if (SSTEP_UNLIKELY(ctx->checked)) rc = sstep_chk_sync_begin(ctx);
    if (SSTEP_LIKELY(rc == LPF_SUCCESS))
        rc = ctx->nprocs == 1 ? solo_exchange(ctx) : ctx->engine->sync(ctx, info);
    if (SSTEP_UNLIKELY(rc != LPF_SUCCESS)) {
        ctx->failed = 1;
        if (ctx->prof) sstep_prof_sync_end(ctx, LPF_ERR_FATAL);
        return LPF_ERR_FATAL;
    }
    if (SSTEP_UNLIKELY(ctx->checked)) sstep_chk_sync_end(ctx);
    sstep_ctx_end_superstep(ctx);
    if (SSTEP_UNLIKELY(ctx->prof != NULL)) sstep_prof_sync_end(ctx, LPF_SUCCESS);
    return LPF_SUCCESS;
}

lpf_err_t sstep_sync_ext(lpf_t c, struct sstep_sync_info *info)
{
    return sync_impl(c, info, SSTEP_PROF_EXT, __builtin_return_address(0));
}

lpf_err_t lpf_sync(lpf_t c, lpf_sync_attr_t attr)
{
    if (SSTEP_UNLIKELY(attr != LPF_SYNC_DEFAULT))   /* <lpf/tags.h>, <lpf/zero.h> */
        return sstep_lpfext.sync(c, attr, __builtin_return_address(0));
    struct sstep_sync_info info;
    info.check = 0;
    return sync_impl(c, &info, SSTEP_PROF_LPF, __builtin_return_address(0));
}

/* ------------------------------------------------------------------ */
/* Sections                                                             */
/* ------------------------------------------------------------------ */

static void check_args(struct sstep_ctx *ctx, const char *prim, lpf_spmd_t spmd, lpf_args_t args)
{
    if (SSTEP_UNLIKELY(spmd == NULL)) sstep_fatal(ctx, prim, "spmd is NULL");
    if (SSTEP_UNLIKELY(args.input == NULL && args.input_size != 0))
        sstep_fatal(ctx, prim, "args.input is NULL but input_size is %zu", args.input_size);
    if (SSTEP_UNLIKELY(args.output == NULL && args.output_size != 0))
        sstep_fatal(ctx, prim, "args.output is NULL but output_size is %zu", args.output_size);
    if (SSTEP_UNLIKELY(args.f_symbols == NULL && args.f_size != 0))
        sstep_fatal(ctx, prim, "args.f_symbols is NULL but f_size is %zu", args.f_size);
}

lpf_err_t sstep_exec_begin(lpf_t c, lpf_pid_t P, lpf_spmd_t sibling_spmd,
        lpf_args_t args, lpf_t *ctx0)
{
    struct sstep_ctx *parent = ctx_of(c, "lpf_exec");
    if (SSTEP_UNLIKELY(parent->failed)) return LPF_ERR_FATAL;
    struct sstep_ctx *child = NULL;
    const struct sstep_engine *e = parent->engine;
    sstep_prof_exec_enter(parent);
    lpf_err_t rc = e->exec_begin(parent, P, sibling_spmd, args, &child);
    sstep_prof_exec_leave();
    if (rc == LPF_SUCCESS) *ctx0 = child;
    return rc;
}

lpf_err_t sstep_exec_end(lpf_t c0)
{
    struct sstep_ctx *ctx0 = ctx_of(c0, "lpf_exec");
    return ctx0->engine->exec_end(ctx0);
}

lpf_err_t lpf_exec(lpf_t c, lpf_pid_t P, lpf_spmd_t spmd, lpf_args_t args)
{
    struct sstep_ctx *parent = ctx_of(c, "lpf_exec");
    check_args(parent, "lpf_exec", spmd, args);
    if (SSTEP_UNLIKELY(P == 0)) sstep_fatal(parent, "lpf_exec", "P is 0");
    if (SSTEP_UNLIKELY(parent->failed)) return LPF_ERR_FATAL;
    lpf_pid_t np = P < parent->free_p ? P : parent->free_p;
    lpf_t ctx0 = NULL;
    lpf_err_t rc = sstep_exec_begin(c, np, spmd, args, &ctx0);
    if (rc != LPF_SUCCESS) return rc;
    spmd(ctx0, 0, np, args);
    return sstep_exec_end(ctx0);
}

lpf_err_t lpf_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
{
    const struct sstep_init_header *h = init;
    if (init == LPF_INIT_NONE || h->magic != SSTEP_INIT_MAGIC || !h->engine || !h->engine->hook)
        return LPF_ERR_FATAL;
    check_args(NULL, "lpf_hook", spmd, args);
    return h->engine->hook(init, spmd, args);
}

lpf_err_t lpf_rehook(lpf_t c, lpf_spmd_t spmd, lpf_args_t args)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_rehook");
    check_args(ctx, "lpf_rehook", spmd, args);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (ctx->nprocs == 1 || !ctx->engine->rehook) {
        /* one process: a fresh context on the same engine, run in place */
        struct sstep_ctx *fresh = sstep_ctx_create(ctx->pid, 1, ctx->engine, NULL);
        if (!fresh) return LPF_ERR_OUT_OF_MEMORY;
        fresh->in_hook = 1;
        spmd(fresh, 0, 1, args);
        int failed = fresh->failed;
        sstep_ctx_destroy(fresh);
        return failed ? LPF_ERR_FATAL : LPF_SUCCESS;
    }
    return ctx->engine->rehook(ctx, spmd, args);
}

/* ------------------------------------------------------------------ */
/* Probe and abort                                                      */
/* ------------------------------------------------------------------ */

SSTEP_HIDDEN void sstep_fill_machine(lpf_machine_t *m);

lpf_err_t lpf_probe(lpf_t c, lpf_machine_t *params)
{
    struct sstep_ctx *ctx = ctx_of(c, "lpf_probe");
    if (SSTEP_UNLIKELY(params == NULL)) sstep_fatal(ctx, "lpf_probe", "params is NULL");
    const struct sstep_engine *e = ctx->engine;
    params->p = e->machine_p ? e->machine_p() : sstep_machine_p();
    params->free_p = ctx->free_p;
    sstep_fill_machine(params);
    return LPF_SUCCESS;
}

void sstep_abort_quiet(lpf_t c)
{
    struct sstep_ctx *ctx = (c == LPF_ROOT) ? sstep_root_ctx() : (struct sstep_ctx *)c;
    if (ctx && ctx->magic != SSTEP_CTX_MAGIC) ctx = NULL;
    const struct sstep_engine *e = ctx ? ctx->engine : sstep_default_engine();
    fflush(NULL);
    if (e && e->abort) e->abort(ctx, 6);
    _exit(6);
}

lpf_err_t lpf_abort(lpf_t c)
{
    struct sstep_ctx *ctx = (c == LPF_ROOT) ? sstep_root_ctx() : (struct sstep_ctx *)c;
    if (ctx && ctx->magic != SSTEP_CTX_MAGIC) ctx = NULL;
    const struct sstep_engine *e = ctx ? ctx->engine : sstep_default_engine();
    fflush(NULL);
    /* one line, so that a job that ends says why (docs/mpi.md); once per
     * program when several of its threads abort together */
    static _Atomic int said;
    if (atomic_exchange(&said, 1)) {
        /* another thread of this program is saying it and ending the
         * program: let it (ending first could cut its line off) */
        for (;;) pause();
    } else if (ctx)
        fprintf(stderr, "superstep: lpf_abort (process %u of %u): the program aborted; "
                "every process ends with exit status 6\n", ctx->pid, ctx->nprocs);
    else
        fprintf(stderr, "superstep: lpf_abort: the program aborted; every process ends "
                "with exit status 6\n");
    fflush(stderr);
    if (e && e->abort) e->abort(ctx, 6);
    _exit(6);
}
