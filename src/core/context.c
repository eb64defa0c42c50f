/*
 * Context life cycle, slot tables, request queue, arena and inbox.
 * Engine independent.
 */
#include "core_internal.h"
#include "profile.h"
#include "checked.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Slot tables                                                          */
/* ------------------------------------------------------------------ */

static struct sstep_slot_array *slot_array_new(uint32_t n)
{
    struct sstep_slot_array *a = calloc(1, sizeof *a + (size_t)n * sizeof(struct sstep_slot));
    if (a) a->size = n;
    return a;
}

static int slot_table_init(struct sstep_slot_table *t)
{
    memset(t, 0, sizeof *t);
    struct sstep_slot_array *a = slot_array_new(0);
    if (!a) return -1;
    atomic_store_explicit(&t->arr, a, memory_order_relaxed);
    return 0;
}

static void slot_table_free(struct sstep_slot_table *t)
{
    free(atomic_load_explicit(&t->arr, memory_order_relaxed));
    free(t->free_stack);
    free(t->pending);
    free(t->pending_stack);
    free(t->retired);
    memset(t, 0, sizeof *t);
}

/* Allocate room for n entries, to be installed at the next sync.
 * Returns 0 or -1 (out of memory, nothing changed). */
static int slot_table_prepare(struct sstep_slot_table *t, size_t n)
{
    struct sstep_slot_array *cur = sstep_slots(t);
    if (n <= cur->size) return 0;
    if (t->pending && t->pending->size >= n) return 0;
    if (n > UINT32_MAX / 2) return -1;  /* index must fit in 31 bits */
    struct sstep_slot_array *a = slot_array_new((uint32_t)n);
    uint32_t *st = malloc(n * sizeof *st);
    if (!a || !st) { free(a); free(st); return -1; }
    free(t->pending);
    free(t->pending_stack);
    t->pending = a;
    t->pending_stack = st;
    return 0;
}

/* Install a pending array (at a sync): copy, publish, retire the old one. */
static void slot_table_install(struct sstep_slot_table *t)
{
    free(t->retired);
    t->retired = NULL;
    if (!t->pending) return;
    struct sstep_slot_array *cur = sstep_slots(t);
    if (cur->size) memcpy(t->pending->e, cur->e, (size_t)cur->size * sizeof(struct sstep_slot));
    if (t->nfree) memcpy(t->pending_stack, t->free_stack, (size_t)t->nfree * sizeof(uint32_t));
    free(t->free_stack);
    t->free_stack = t->pending_stack;
    atomic_store_explicit(&t->arr, t->pending, memory_order_release);
    t->retired = cur;
    t->pending = NULL;
    t->pending_stack = NULL;
}

/* ------------------------------------------------------------------ */
/* Arena                                                                */
/* ------------------------------------------------------------------ */

void *sstep_arena_alloc(struct sstep_arena *a, size_t n)
{
    const size_t align = sizeof(max_align_t);
    size_t need = (n + align - 1) / align * align;
    if (need < n) return NULL;
    struct sstep_arena_block *b = a->head;
    if (SSTEP_LIKELY(b && b->cap - b->used >= need)) {
        void *p = (char *)b->data + b->used;
        b->used += need;
        return p;
    }
    /* take a spare block that fits, or make a new one twice as large */
    struct sstep_arena_block **pp = &a->spare;
    while (*pp && (*pp)->cap < need) pp = &(*pp)->next;
    struct sstep_arena_block *nb = *pp;
    if (nb) {
        *pp = nb->next;
    } else {
        size_t cap = b ? b->cap * 2 : 64 * 1024;
        if (cap < need) cap = need;
        if (cap > SIZE_MAX - sizeof *nb) return NULL;
        nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->cap = cap;
    }
    nb->used = need;
    nb->next = b;
    a->head = nb;
    return nb->data;
}

void sstep_arena_reset(struct sstep_arena *a)
{
    struct sstep_arena_block *b = a->head;
    while (b) {
        struct sstep_arena_block *next = b->next;
        b->used = 0;
        b->next = a->spare;
        a->spare = b;
        b = next;
    }
    a->head = NULL;
}

void sstep_arena_free(struct sstep_arena *a)
{
    sstep_arena_reset(a);
    struct sstep_arena_block *b = a->spare;
    while (b) {
        struct sstep_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->spare = NULL;
}

/* ------------------------------------------------------------------ */
/* Inbox                                                                */
/* ------------------------------------------------------------------ */

int sstep_inbox_reserve(struct sstep_inbox *in, size_t n)
{
    if (in->n + n <= in->alloc) return 0;
    size_t want = in->alloc ? in->alloc : 64;
    while (want < in->n + n) {
        if (want > SIZE_MAX / 2 / sizeof(struct sstep_msg)) return -1;
        want *= 2;
    }
    struct sstep_msg *m = realloc(in->msgs, want * sizeof *m);
    if (!m) return -1;
    in->msgs = m;
    in->alloc = want;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Request queue                                                        */
/* ------------------------------------------------------------------ */

/* Make room for `want` requests. Safe during the computation phase only
 * (peers read the array during a sync). Returns 0 or -1. */
int sstep_queue_grow(struct sstep_ctx *ctx, size_t want)
{
    struct sstep_queue *q = &ctx->q;
    if (want <= q->alloc) return 0;
    if (want > (size_t)SSTEP_NIL) return -1;  /* list links are 32 bit */
    size_t n = q->alloc ? q->alloc : 64;
    while (n < want) n = n > (size_t)SSTEP_NIL / 2 ? (size_t)SSTEP_NIL : n * 2;
    struct sstep_req *r = realloc(q->reqs, n * sizeof *r);
    if (!r) return -1;
    q->reqs = r;
    q->alloc = n;
    return 0;
}

void sstep_queue_reset(struct sstep_ctx *ctx)
{
    struct sstep_queue *q = &ctx->q;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        struct sstep_peer_lists *pl = &q->peers[q->touched[i]];
        for (int k = 0; k < SSTEP_NKINDS; ++k) {
            pl->head[k] = SSTEP_NIL;
            pl->tail[k] = SSTEP_NIL;
            pl->count[k] = 0;
            pl->bytes[k] = 0;
        }
    }
    q->ntouched = 0;
    q->n = 0;
    q->nuser = 0;
    q->kinds = 0;
}

/* ------------------------------------------------------------------ */
/* Context                                                              */
/* ------------------------------------------------------------------ */

struct sstep_ctx *sstep_ctx_create(lpf_pid_t pid, lpf_pid_t nprocs,
        const struct sstep_engine *engine, void *group)
{
    struct sstep_ctx *ctx = aligned_alloc(SSTEP_CACHELINE,
            (sizeof *ctx + SSTEP_CACHELINE - 1) / SSTEP_CACHELINE * SSTEP_CACHELINE);
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    ctx->magic = SSTEP_CTX_MAGIC;
    ctx->fork_gen = __atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED);
    ctx->pid = pid;
    ctx->nprocs = nprocs;
    ctx->free_p = 1;
    ctx->cpu_lo = 0.0;
    ctx->cpu_span = 1.0;
    ctx->engine = engine;
    ctx->group = group;
    ctx->reg_pending = SIZE_MAX;
    ctx->msg_pending = SIZE_MAX;
    ctx->q.peers = malloc((size_t)nprocs * sizeof *ctx->q.peers);
    ctx->q.touched = malloc((size_t)nprocs * sizeof *ctx->q.touched);
    if (!ctx->q.peers || !ctx->q.touched
            || slot_table_init(&ctx->globals) || slot_table_init(&ctx->locals)) {
        sstep_ctx_destroy(ctx);
        return NULL;
    }
    for (lpf_pid_t i = 0; i < nprocs; ++i) {
        struct sstep_peer_lists *pl = &ctx->q.peers[i];
        memset(pl, 0, sizeof *pl);
        for (int k = 0; k < SSTEP_NKINDS; ++k) pl->head[k] = pl->tail[k] = SSTEP_NIL;
    }
    sstep_prof_attach(ctx);
    if (SSTEP_UNLIKELY(sstep_chk_mode())) sstep_chk_attach(ctx);
    return ctx;
}

/* An ended context keeps its struct (marked dead) for a while, so that a
 * program that uses its lpf_t after the section ended gets a clear error
 * instead of reading freed memory. The last CTX_QUARANTINE ended contexts
 * are kept; older ones are freed (bounded memory, a few hundred KiB). */
#define CTX_QUARANTINE 1024
static pthread_mutex_t quarantine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sstep_ctx *quarantine[CTX_QUARANTINE];
static size_t quarantine_next;

static void retire_ctx(struct sstep_ctx *ctx)
{
    ctx->magic = SSTEP_CTX_DEAD;
    ctx->q.reqs = NULL;
    ctx->q.peers = NULL;
    ctx->q.touched = NULL;
    ctx->inbox.msgs = NULL;
    pthread_mutex_lock(&quarantine_lock);
    struct sstep_ctx *old = quarantine[quarantine_next];
    quarantine[quarantine_next] = ctx;
    quarantine_next = (quarantine_next + 1) % CTX_QUARANTINE;
    pthread_mutex_unlock(&quarantine_lock);
    free(old);
}

SSTEP_HIDDEN void sstep_ext_free(struct sstep_ctx *ctx);

void sstep_ctx_destroy(struct sstep_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->prof) sstep_prof_detach(ctx);
    if (ctx->chk) sstep_chk_detach(ctx);
    sstep_ext_free(ctx);
    sstep_lpfext.free(ctx);
    slot_table_free(&ctx->globals);
    slot_table_free(&ctx->locals);
    free(ctx->q.reqs);
    free(ctx->q.peers);
    free(ctx->q.touched);
    sstep_arena_free(&ctx->arena[0]);
    sstep_arena_free(&ctx->arena[1]);
    free(ctx->inbox.msgs);
    retire_ctx(ctx);
}

/* Called by every engine once the exchange of a superstep is complete on
 * this process (after the last barrier: nobody reads our state any more). */
void sstep_ctx_end_superstep(struct sstep_ctx *ctx)
{
    if (ctx->q.n) sstep_queue_reset(ctx);
    ctx->q.nuser = 0;
    if (SSTEP_UNLIKELY((ctx->reg_pending != SIZE_MAX || ctx->msg_pending != SIZE_MAX
                || ctx->globals.retired || ctx->locals.retired) && !ctx->hold_regs)) {
        if (ctx->reg_pending != SIZE_MAX) {
            ctx->reg_limit = ctx->reg_pending;
            ctx->reg_pending = SIZE_MAX;
        }
        slot_table_install(&ctx->globals);
        slot_table_install(&ctx->locals);
        if (ctx->msg_pending != SIZE_MAX) {
            ctx->q.limit = ctx->msg_pending;
            ctx->msg_pending = SIZE_MAX;
        }
    }
    ctx->superstep++;
    /* the arena of the superstep before last has been read by everyone */
    struct sstep_arena *a = &ctx->arena[ctx->superstep & 1];
    if (a->head) sstep_arena_reset(a);
    if (!ctx->hold_regs) ctx->pending_globals = 0;
}

/* exported for the resize primitives */
SSTEP_HIDDEN int sstep_slots_prepare(struct sstep_ctx *ctx, size_t n);
int sstep_slots_prepare(struct sstep_ctx *ctx, size_t n)
{
    if (slot_table_prepare(&ctx->globals, n)) return -1;
    if (slot_table_prepare(&ctx->locals, n)) return -1;
    return 0;
}
