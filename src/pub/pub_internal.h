/*
 * PUB layer internals (pub.md §12.1): runs, BSP objects, registrations,
 * reduce-family calls. One lpf_t per process and run, shared by all its
 * objects; each object is a core scope (E3) whose supersteps are E1/E2
 * syncs stamped (object identity, step).
 *
 * A run is one core section of P processes. Every thread keeps in
 * thread-local storage the stack of runs it takes part in; a run holds the
 * caller's stack of live objects (root at the bottom). An object is known
 * by its address: the tbsp storage holds a pointer to the library's record,
 * its index in the stack and a nonce, so that checking an argument is O(1)
 * and never dereferences storage that is not a live object.
 *
 * Requests are queued in the core at the call; bsp_partition / bsp_dup open
 * a core scope (E3) that sets the parent's pending requests aside, bsp_done
 * closes it. bsp_sync is E1 over the object's range, bsp_oblsync E2; both are
 * stamped (object identity, step). Deliveries stay where the engine put them
 * (sstep_inbox_of) until the object's next synchronisation or bsp_done.
 *
 * The layer's files, by responsibility:
 *   pub_errors.c   run-time errors (the one line of pub.md's conventions)
 *   pub_objects.c  objects: O(1) validity, bsp_partition / bsp_dup / bsp_done
 *   pub_run.c      runs (pub_exec), enquiries, bsp_time, bsp_abort
 *   pub_sync.c     registrations and synchronisation (bsp_sync, bsp_oblsync)
 *   pub_msg.c      the message buffer and message passing
 *   pub_drma.c     DRMA: registration requests, puts and gets
 *   pub_coll.c     collectives, the reduce family (its delivery and folding)
 *                  and the predefined operators
 * This header holds what they share: the records, the hidden functions each
 * file lends the others (pub_ prefix) and the O(1) checks inlined on every
 * primitive's path.
 */
#ifndef SSTEP_PUB_INTERNAL_H
#define SSTEP_PUB_INTERNAL_H

#include <pub.h>
#include <lpf/core.h>
#include "../core/sstep_ext.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
# define PUB_LIKELY(x) __builtin_expect(!!(x), 1)
# define PUB_UNLIKELY(x) __builtin_expect(!!(x), 0)
# define PUB_NORETURN __attribute__((noreturn))
# define PUB_COLD __attribute__((noinline, cold))
# define PUB_HIDDEN __attribute__((visibility("hidden")))
# define PUB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
# define PUB_LIKELY(x) (x)
# define PUB_UNLIKELY(x) (x)
# define PUB_NORETURN
# define PUB_COLD
# define PUB_HIDDEN
# define PUB_PRINTF(a, b)
#endif

#define PUB_NIL UINT32_MAX

/* message handle (pbspmsg) */
struct pub_msg {
    void *data;
    size_t size;
    int src;                 /* sender pid in the receiving object's group */
};

/* one registration of an object */
struct pub_reg {
    const void *addr;
    size_t size;
    lpf_memslot_t slot;      /* core slot (registered at the sync entry) */
    uint32_t below;          /* next older registration of addr (PUB_NIL) */
    int popped;              /* popped in this superstep (still serves it) */
    uint32_t next_free;
};

struct pub_name {            /* hash entry: address -> newest registration */
    const void *addr;
    uint32_t top;            /* PUB_NIL: entry unused */
};

enum { PUB_REDUCE = 0, PUB_ALLREDUCE = 1, PUB_SCAN = 2, PUB_ALLSCAN = 3 };

/* one reduce-family call of the current superstep */
struct pub_call {
    int kind;
    int gform;               /* 1: (first, last) form */
    int n, me;               /* members, caller's index */
    int *members;            /* group pids, member order */
    uint64_t lhash;          /* hash of the ordered member list */
    uint32_t k;              /* index among this superstep's calls with lhash */
    int count;
    tbspop op;
    void *param;
    void *rbuf;
    char *own;               /* the caller's contribution, copied at the call */
    const char **contrib;    /* [n], filled at delivery */
    int due;                 /* contributions this member receives */
};

/* Core message header. Plain messages: PUB_HDR bytes, then the payload;
 * contributions: PUB_CHDR bytes, then count * size bytes. */
#define PUB_TAG_MSG     0x5055424du   /* "PUBM" */
#define PUB_TAG_CONTRIB 0x50554243u   /* "PUBC" */
struct pub_chdr {
    uint32_t tag;
    int32_t kind;
    int32_t count;
    int32_t idx;             /* sender's member index */
    uint64_t size;           /* element size */
    uint64_t lhash;
    uint32_t k;
    int32_t n;
    uint64_t pad;
};
#define PUB_HDR ((size_t)16)
#define PUB_CHDR ((size_t)sizeof(struct pub_chdr))

struct pub_run;

struct pub_obj {
    tbsp *storage;
    uint64_t nonce;
    struct pub_run *run;
    int depth;               /* index in the run's stack */
    int kind;                /* 0 root, 1 partition, 2 dup */
    uint64_t id;             /* identity (stamps) */
    uint64_t step;           /* current superstep */
    uint64_t ncreated;       /* children created so far */
    int lo, p, s;            /* group: run pids lo..lo+p-1; caller's pid s */

    /* ---- this superstep ---- */
    size_t nreq;             /* pending requests (for bsp_done) */
    size_t nput, nhpput, nget, nhpget;
    size_t nself;            /* messages to self (p == 1 oblsync check) */
    struct pub_call *calls;
    size_t ncalls, calls_alloc;
    uint32_t *marks;         /* [p] table checks (lazily) */
    uint32_t mark_gen;

    /* ---- message buffer: last delivery ---- */
    int has_inbox;
    struct sstep_stamp inbox_stamp;
    struct pub_msg *msgs;
    size_t nmsgs, msgs_alloc;
    char **copies;           /* data copied for alignment (freed at release) */
    size_t ncopies, copies_alloc;

    /* ---- registrations ---- */
    struct pub_reg *regs;
    uint32_t nregs_alloc, reg_free;
    struct pub_name *names;
    size_t names_cap, names_used;
    uint32_t *pushes;        /* pushed this superstep (not registered yet) */
    size_t npush, push_alloc;
    uint32_t *pops;          /* popped this superstep */
    size_t npop, pop_alloc;
    size_t push_since, pop_since;   /* since the previous bsp_sync */
    size_t live_regs;        /* registered with the core */
};

struct pub_run {
    lpf_t ctx;
    int pid, P;
    double t0;
    struct pub_obj **stack;
    int depth, stack_alloc;
    size_t core_regs, core_cap;
    struct pub_run *parent;  /* enclosing run of this thread */
    uint64_t nonce_next;
};

/* ------------------------------------------------------------------ */
/* Shared across the layer's files                                      */
/* ------------------------------------------------------------------ */

/* pub_run.c: the innermost run this thread takes part in (NULL: none) */
extern PUB_HIDDEN __thread struct pub_run *pub_tls_run;

/* pub_errors.c: every error prints one line and ends the program */
PUB_HIDDEN PUB_NORETURN void pub_emit(lpf_t ctx, const char *line);
PUB_HIDDEN PUB_NORETURN void pub_vdie(const struct pub_obj *o, const char *prim,
        const char *fmt, va_list ap);
PUB_HIDDEN PUB_NORETURN PUB_COLD PUB_PRINTF(3, 4)
void pub_die(const struct pub_obj *o, const char *prim, const char *fmt, ...);
PUB_HIDDEN PUB_NORETURN PUB_COLD PUB_PRINTF(3, 4)
void pub_die_shared(const struct pub_obj *o, const char *prim, const char *fmt, ...);
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_die_oom(const struct pub_obj *o, const char *prim,
        size_t bytes);

/* pub_objects.c */
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_die_not_live(const char *prim, pbsp bsp);
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_die_inactive(const char *prim, struct pub_obj *o);
PUB_HIDDEN void *pub_xrealloc(struct pub_obj *o, const char *prim, void *p, size_t n,
        size_t sz);
PUB_HIDDEN struct pub_obj *pub_obj_new(struct pub_run *r, const char *prim, pbsp storage,
        int kind, uint64_t id, int lo, int p, int s);
PUB_HIDDEN void pub_obj_free(struct pub_obj *o);

/* pub_msg.c */
PUB_HIDDEN void pub_release_inbox(struct pub_obj *o);
PUB_HIDDEN char *pub_aligned_payload(struct pub_obj *o, const char *prim, const char *data,
        size_t off, size_t size);
PUB_HIDDEN void pub_sort_by_src(struct pub_obj *o, const char *prim);
PUB_HIDDEN void pub_send_one(struct pub_obj *o, const char *prim, int dest, const void *buf,
        size_t size);

/* pub_coll.c */
PUB_HIDDEN void pub_free_calls(struct pub_obj *o);
PUB_HIDDEN void pub_take_delivery(struct pub_obj *o, const char *prim, struct sstep_stamp st);

/* pub_sync.c */
PUB_HIDDEN uint32_t pub_reg_alloc(struct pub_obj *o, const char *prim);
PUB_HIDDEN void pub_push_list(struct pub_obj *o, const char *prim, uint32_t **a, size_t *n,
        size_t *alloc, uint32_t v);
PUB_HIDDEN void pub_regs_drop(struct pub_obj *o);
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_sync_failed(struct pub_obj *o, const char *prim,
        struct sstep_sync_info *info, struct sstep_stamp st, size_t expect_core, int ended);
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_check_mismatch(struct pub_obj *o, const char *prim,
        const struct sstep_sync_info *info, uint64_t mine, int ended);

/* the end-of-run bit of a synchronisation's check word */
#define PUB_CHECK_END ((uint64_t)1 << 40)

/* pub_drma.c */
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_drma_failed(struct pub_obj *o, const char *prim,
        lpf_err_t rc, size_t size);

/* ------------------------------------------------------------------ */
/* Objects: O(1) validity (inlined on every primitive's path)           */
/* ------------------------------------------------------------------ */

#define PUB_ST_OBJ(b)   ((b)->pub_private_[0])
#define PUB_ST_NONCE(b) ((b)->pub_private_[1])
#define PUB_ST_DEPTH(b) ((b)->pub_private_[2])
#define PUB_ST_RUN(b)   ((b)->pub_private_[3])

static inline struct pub_run *pub_run_or_die(const char *prim)
{
    struct pub_run *r = pub_tls_run;
    if (PUB_UNLIKELY(r == NULL))
        pub_die(NULL, prim, "called outside a run (no pub_exec active in this thread)");
    return r;
}

/* the live object of this process stored at bsp, or NULL */
static inline struct pub_obj *pub_lookup(struct pub_run *r, pbsp bsp)
{
    if (bsp == NULL) return NULL;
    uintptr_t d = (uintptr_t)PUB_ST_DEPTH(bsp);
    if (PUB_ST_RUN(bsp) != (void *)r || d >= (uintptr_t)r->depth) return NULL;
    struct pub_obj *o = r->stack[d];
    if (o != PUB_ST_OBJ(bsp) || o->storage != bsp || (uintptr_t)PUB_ST_NONCE(bsp) != o->nonce)
        return NULL;
    return o;
}

/* any live object (enquiries, buffer reads) */
static inline struct pub_obj *pub_obj_any(const char *prim, pbsp bsp)
{
    struct pub_run *r = pub_run_or_die(prim);
    struct pub_obj *o = pub_lookup(r, bsp);
    if (PUB_UNLIKELY(o == NULL)) pub_die_not_live(prim, bsp);
    return o;
}

/* the active object (every other primitive) */
static inline struct pub_obj *pub_obj_active(const char *prim, pbsp bsp)
{
    struct pub_obj *o = pub_obj_any(prim, bsp);
    if (PUB_UNLIKELY(o->depth != o->run->depth - 1)) pub_die_inactive(prim, o);
    return o;
}

/* ------------------------------------------------------------------ */
/* Hashing and registration look-up                                     */
/* ------------------------------------------------------------------ */

static inline uint64_t pub_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t pub_hcomb(uint64_t h, uint64_t v)
{
    return pub_mix64(h ^ pub_mix64(v));
}

static inline size_t pub_name_slot(const struct pub_obj *o, const void *addr)
{
    size_t mask = o->names_cap - 1;
    size_t h = (size_t)pub_mix64((uintptr_t)addr) & mask;
    while (o->names[h].top != PUB_NIL && o->names[h].addr != addr) h = (h + 1) & mask;
    return h;
}

/* newest registered (core) registration of addr, or NULL */
static inline struct pub_reg *pub_reg_lookup(const struct pub_obj *o, const void *addr)
{
    if (o->names_used == 0) return NULL;
    size_t h = pub_name_slot(o, addr);
    uint32_t t = o->names[h].top;
    return t == PUB_NIL ? NULL : &o->regs[t];
}

#endif
