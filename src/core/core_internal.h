/*
 * Superstep core internals: the per-process context, slot tables, request
 * queues and the engine interface. Engine independent; every engine and the
 * layers' fast paths (sstep_ext.h) build on this.
 *
 * Ownership rule that makes the shared-memory engine race-free: during the
 * computation phase only the owner touches its context; during a sync other
 * processes may *read* the queues, slot tables and arenas of a context, but
 * only between barriers, and nobody writes another process's context.
 */
#ifndef SSTEP_CORE_INTERNAL_H
#define SSTEP_CORE_INTERNAL_H

#include <lpf/core.h>
#include "sstep_ext.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define SSTEP_CACHELINE 64
#define SSTEP_CTX_MAGIC 0x53535450u /* "SSTP" */
#define SSTEP_CTX_DEAD 0x44454144u  /* "DEAD": its section has ended */
#define SSTEP_NIL UINT32_MAX       /* end of a request list */

#if defined(__GNUC__)
# define SSTEP_LIKELY(x) __builtin_expect(!!(x), 1)
# define SSTEP_UNLIKELY(x) __builtin_expect(!!(x), 0)
# define SSTEP_HIDDEN __attribute__((visibility("hidden")))
# define SSTEP_NORETURN __attribute__((noreturn))
# define SSTEP_PRINTF(a, b) __attribute__((format(printf, a, b)))
# define SSTEP_NOINLINE __attribute__((noinline, cold))
#else
# define SSTEP_NOINLINE
# define SSTEP_LIKELY(x) (x)
# define SSTEP_UNLIKELY(x) (x)
# define SSTEP_HIDDEN
# define SSTEP_NORETURN
# define SSTEP_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------ */
/* Memory slots                                                         */
/* ------------------------------------------------------------------ */

/* A handle is (generation << 32) | (index << 1) | is_local. Globals and
 * locals have separate index spaces: the k-th live global registration gets
 * the same index on every process (deterministic LIFO allocator), while
 * locals may differ per process. The generation detects stale handles. */
#define SSTEP_SLOT_LOCAL_BIT ((lpf_memslot_t)1)

enum sstep_slot_state {
    SSTEP_SLOT_FREE = 0,
    SSTEP_SLOT_LOCAL = 1,
    SSTEP_SLOT_GLOBAL = 2
};

struct sstep_slot {
    char *base;
    size_t size;
    uint32_t gen;        /* generation of the current or last registration */
    uint32_t state;      /* enum sstep_slot_state */
    uint64_t active_from;/* globals: first superstep in which it is usable */
};

/* The array and its size swap together: peers read a table during a sync
 * (and in bsp_direct_get), so it is replaced, never realloc'ed in place; the
 * old one is retired and freed one sync later. */
struct sstep_slot_array {
    uint32_t size;
    struct sstep_slot e[];
};

struct sstep_slot_table {
    _Atomic(struct sstep_slot_array *) arr;
    uint32_t fresh;           /* next never-used index */
    uint32_t nfree;           /* entries on free_stack */
    uint32_t *free_stack;     /* LIFO of released indices, arr->size long */
    struct sstep_slot_array *pending;  /* grown array waiting for the sync */
    uint32_t *pending_stack;
    struct sstep_slot_array *retired;  /* freed at the next sync */
    uint32_t floor;           /* E3 scope: free_stack entries below are hidden */
};

/* ------------------------------------------------------------------ */
/* Requests                                                             */
/* ------------------------------------------------------------------ */

/* One put, get or message. `local` is the address on the issuing process
 * (put source, get destination, message payload); (slot, off) name the area
 * on the peer. Requests to one peer form a singly linked list in issue
 * order through `next` (an index into the issuer's request array). */
struct sstep_req {
    char *local;
    size_t size;
    size_t off;
    uint32_t slot;   /* global slot index (unused for messages) */
    uint32_t next;
};

enum sstep_req_kind { SSTEP_PUT = 0, SSTEP_GET = 1, SSTEP_MSG = 2, SSTEP_NKINDS = 3 };

/* Per peer: head and tail of each kind's list. */
struct sstep_peer_lists {
    uint32_t head[SSTEP_NKINDS];
    uint32_t tail[SSTEP_NKINDS];
    uint32_t count[SSTEP_NKINDS];
    uint32_t pad_;
    size_t bytes[SSTEP_NKINDS];
};

struct sstep_queue {
    /* read by peers during a sync; written only when the array grows */
    struct sstep_req *reqs;
    struct sstep_peer_lists *peers;  /* [nprocs] */
    lpf_pid_t *touched;   /* peers with a non-empty list */
    size_t alloc;      /* allocated entries of reqs */
    size_t limit;      /* user capacity in force (lpf_put/lpf_get) */
    /* written on every request: its own cache line, so that peers reading
     * the pointers above do not miss on it */
    _Alignas(SSTEP_CACHELINE) size_t n;  /* requests queued in this superstep */
    size_t nuser;      /* user requests issued (count against limit) */
    lpf_pid_t ntouched;
    unsigned kinds;       /* bit k set: some request of kind k queued */
};

/* A chunked bump allocator whose memory never moves: payloads of buffered
 * puts and messages live here until peers have read them. */
struct sstep_arena_block {
    struct sstep_arena_block *next;
    size_t cap, used;
    max_align_t data[];
};

struct sstep_arena {
    struct sstep_arena_block *head;   /* block being filled */
    struct sstep_arena_block *spare;  /* reusable blocks */
};

struct sstep_inbox {
    struct sstep_msg *msgs;
    size_t n, alloc, next;   /* next: index of the first unread message */
};

/* ------------------------------------------------------------------ */
/* Context                                                              */
/* ------------------------------------------------------------------ */

struct sstep_engine;

struct sstep_ctx {
    struct sstep_queue q;   /* first: its read-mostly part shares the context's first line */
    uint32_t magic;
    lpf_pid_t pid;
    lpf_pid_t nprocs;
    lpf_pid_t free_p;
    const struct sstep_engine *engine;
    void *group;            /* engine-private state shared by the section */
    void *engine_proc;      /* engine-private per-process state */
    struct sstep_prof *prof;/* superstep profiler (profile.c); NULL when off */
    int failed;             /* failure state (§5.7) */
    int checked;            /* checked mode (checked.c): the request path's one test */
    int hold_regs;          /* supersteps end without activating registrations and
                             * resizes (LPF's tagged and zero-cost syncs) */
    int in_hook;            /* started by hook/rehook: free_p == 1 */
    struct sstep_chk *chk;  /* checked mode's state; NULL when off */
    double cpu_lo, cpu_span;/* slice of the machine's CPUs this process owns */

    struct sstep_slot_table globals;
    struct sstep_slot_table locals;
    size_t reg_limit;       /* register capacity in force */
    size_t reg_pending;     /* requested capacity (SIZE_MAX: none) */
    size_t nregs;           /* live registrations */
    size_t msg_pending;     /* requested queue capacity (SIZE_MAX: none) */

    struct sstep_arena arena[2];   /* by superstep parity */
    struct sstep_inbox inbox;
    size_t pending_globals; /* global (de)registrations this superstep */
    uint64_t superstep;     /* number of completed syncs: written at every sync,
                               so not on the line of `globals`, which peers
                               read at every sync with puts or gets */
    uint64_t range_steps;   /* supersteps ended by E1/E2: members of a section
                               that uses them need not sync equally often, so
                               engines compare superstep - range_steps at the
                               end (written at every range sync: not on the
                               line of `ext`, which senders read) */
    const char *put_name;   /* primitive named in errors found at the sync */
    const char *get_name;
    struct sstep_ext *_Atomic ext; /* PUB extensions E1-E4 (pubext.c), lazily */
    lpf_pid_t rank_stride;  /* the hybrid engine's rank-level context: its process
                               q runs pids q*rank_stride.. of rank_P (0: not one) */
    lpf_pid_t rank_P;
    /* and the context of its thread u (noc slots of the threads resolve
     * through it, lx_noc.c); NULL: not a rank-level context */
    struct sstep_ctx *(*rank_thread)(void *arg, lpf_pid_t u);
    void *rank_thread_arg;
    unsigned fork_gen;      /* sstep_fork_gen when made: a forked child's copy differs */
    uint64_t layer_steps;   /* syncs a layer made for itself (sstep_layer_step):
                               messages number the user's supersteps,
                               superstep - layer_steps, from 0 */
    struct sstep_lext *_Atomic lext; /* LPF extensions (src/ext): tags, zero-cost
                               syncs, noc slots; NULL until one is used */
};

/* forks this process descends from (0 in the process that started); a
 * context made before a fork belongs to the parent: the child's syncs on it
 * end the child with one line (sstep_forked_use) */
SSTEP_HIDDEN extern unsigned sstep_fork_gen;
SSTEP_HIDDEN SSTEP_NORETURN void sstep_forked_use(struct sstep_ctx *ctx, const char *prim);

/* the user's superstep number for messages (0-based) */
static inline unsigned long long sstep_user_step(const struct sstep_ctx *ctx)
{
    return (unsigned long long)(ctx->superstep - ctx->layer_steps);
}

/* ------------------------------------------------------------------ */
/* Engine interface                                                     */
/* ------------------------------------------------------------------ */

/* Every lpf_init_t of every engine starts with this header, so lpf_hook can
 * find the engine that made it. */
#define SSTEP_INIT_MAGIC 0x53534e49u /* "SSNI" */
struct sstep_init_header {
    uint32_t magic;
    const struct sstep_engine *engine;
};

struct sstep_engine {
    const char *name;
    /* processors of the whole runtime (lpf_machine_t.p) */
    lpf_pid_t (*machine_p)(void);
    /* run spmd on the processes of an lpf_init_t made by this engine */
    lpf_err_t (*hook)(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args);
    /* Start a section of P processes; the caller becomes pid 0 and gets its
     * context in *ctx0; siblings run `spmd`. */
    lpf_err_t (*exec_begin)(struct sstep_ctx *parent, lpf_pid_t P,
            lpf_spmd_t spmd, lpf_args_t args, struct sstep_ctx **ctx0);
    /* pid 0 leaves the section: wait for the siblings, release everything */
    lpf_err_t (*exec_end)(struct sstep_ctx *ctx0);
    lpf_err_t (*rehook)(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args);
    /* end the superstep: execute every queued request */
    lpf_err_t (*sync)(struct sstep_ctx *ctx, struct sstep_sync_info *info);
    /* read remote registered memory now (bsp_direct_get); may be NULL */
    lpf_err_t (*direct_get)(struct sstep_ctx *ctx, lpf_pid_t pid,
            uint32_t slot, size_t off, void *dst, size_t size);
    /* size pid registered for a global slot, SIZE_MAX if unknown; may be NULL */
    size_t (*remote_size)(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot);
    /* E1 (kind 0) / E2 (kind 1) over n >= 2 members: with members NULL the
     * pids lo..lo+n-1, else members[0..n-1] (increasing, not a run of
     * consecutive pids; lo == members[0]); pubext.c checked the arguments
     * and requests. May be NULL */
    lpf_err_t (*sync_range)(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
            const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect,
            struct sstep_sync_info *info);
    /* end the whole program after a fatal error (does not return) */
    void (*abort)(struct sstep_ctx *ctx, int status);
};

/* ------------------------------------------------------------------ */
/* Core services used by the engines and the public API                 */
/* ------------------------------------------------------------------ */

SSTEP_HIDDEN extern const struct sstep_engine sstep_pthread_engine;
#ifdef SUPERSTEP_HAVE_MPI
SSTEP_HIDDEN extern const struct sstep_engine sstep_mpi_engine;
SSTEP_HIDDEN extern const struct sstep_engine sstep_hybrid_engine;
#endif
SSTEP_HIDDEN const struct sstep_engine *sstep_engine_by_name(const char *name);

/* the engine new sections start on (selected at startup) */
SSTEP_HIDDEN const struct sstep_engine *sstep_default_engine(void);
SSTEP_HIDDEN void sstep_set_default_engine(const struct sstep_engine *e);

/* machine */
SSTEP_HIDDEN lpf_pid_t sstep_machine_p(void);
SSTEP_HIDDEN unsigned sstep_online_cores(void);

/* context life cycle */
SSTEP_HIDDEN struct sstep_ctx *sstep_ctx_create(lpf_pid_t pid, lpf_pid_t nprocs,
        const struct sstep_engine *engine, void *group);
SSTEP_HIDDEN void sstep_ctx_destroy(struct sstep_ctx *ctx);
SSTEP_HIDDEN struct sstep_ctx *sstep_root_ctx(void);

/* after a successful exchange: activate pending capacities, reset queues */
SSTEP_HIDDEN void sstep_ctx_end_superstep(struct sstep_ctx *ctx);

/* request queue */
SSTEP_HIDDEN int sstep_queue_grow(struct sstep_ctx *ctx, size_t want);
SSTEP_HIDDEN void sstep_queue_reset(struct sstep_ctx *ctx);

/* arena */
SSTEP_HIDDEN void *sstep_arena_alloc(struct sstep_arena *a, size_t n);
SSTEP_HIDDEN void sstep_arena_reset(struct sstep_arena *a);
SSTEP_HIDDEN void sstep_arena_free(struct sstep_arena *a);

/* inbox */
SSTEP_HIDDEN int sstep_inbox_reserve(struct sstep_inbox *in, size_t n);

/* errors: print one line and end the program like lpf_abort (status 6) */
SSTEP_HIDDEN SSTEP_NORETURN SSTEP_PRINTF(3, 4)
void sstep_fatal(struct sstep_ctx *ctx, const char *primitive, const char *fmt, ...);
SSTEP_HIDDEN void sstep_warn(const char *fmt, ...) SSTEP_PRINTF(1, 2);

/* The sync watchdog (watchdog.c): SUPERSTEP_SYNC_WARN / SUPERSTEP_SYNC_TIMEOUT
 * in ns (0 = off); first_ns: the earlier of the two that is on. */
struct sstep_watchdog {
    uint64_t warn_ns, timeout_ns, first_ns;
};
SSTEP_HIDDEN const struct sstep_watchdog *sstep_watchdog(void);
/* arrival state of a process, as an engine sees it in a stalled sync */
/* OUT: not a member of the sync waited in (a subset sync); not listed */
enum { SSTEP_ARR_NOT = 0, SSTEP_ARR_YES = 1, SSTEP_ARR_LEFT = 2, SSTEP_ARR_OUT = 3 };
/* Report a sync that has waited waited_ns: one line; fatal: then end every
 * process (status 6). steps[q] (or NULL): supersteps q has completed. */
SSTEP_HIDDEN void sstep_sync_stalled(struct sstep_ctx *ctx, uint64_t waited_ns, lpf_pid_t P,
        const unsigned char *state, const uint64_t *steps, int fatal);

static inline struct sstep_slot_array *sstep_slots(struct sstep_slot_table *t)
{
    return atomic_load_explicit(&t->arr, memory_order_acquire);
}

/* waiting loops of the engines */
static inline void sstep_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline uint64_t sstep_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* sstep_copy and sstep_copy_bulk */
#include "copy.h"

/* Append a request of kind k for peer `pid`; the queue has room. */
static inline void sstep_enqueue(struct sstep_ctx *ctx, int k, lpf_pid_t pid,
        char *local, uint32_t slot, size_t off, size_t size)
{
    struct sstep_queue *q = &ctx->q;
    uint32_t i = (uint32_t)q->n++;
    struct sstep_req *r = &q->reqs[i];
    r->local = local;
    r->size = size;
    r->off = off;
    r->slot = slot;
    r->next = SSTEP_NIL;
    struct sstep_peer_lists *pl = &q->peers[pid];
    if (pl->tail[k] == SSTEP_NIL) {
        if ((pl->head[SSTEP_PUT] & pl->head[SSTEP_GET] & pl->head[SSTEP_MSG]) == SSTEP_NIL)
            q->touched[q->ntouched++] = pid;
        pl->head[k] = i;
    } else {
        q->reqs[pl->tail[k]].next = i;
    }
    pl->tail[k] = i;
    pl->count[k]++;
    pl->bytes[k] += size;
    q->kinds |= 1u << k;
}

/* LPF extensions (src/ext/lpfext.h): a slot index with this bit names a noc
 * registration of its owner (lpf_noc_register) */
#define SSTEP_NOC_BIT 0x40000000u
#define SSTEP_NOC_INDEX 0x3fffffu      /* the entry's index; 8 bits of generation above */
/* The core and the engines reach the extensions through this one table,
 * which src/ext fills (lx_table.c), as they reach the engines through
 * theirs: they know no function of src/ext. */
struct sstep_lpfext {
    /* a noc slot's entry at its owner, and its area (NULL if out of range) */
    const struct sstep_slot *(*noc_entry)(struct sstep_ctx *owner, uint32_t slot);
    char *(*noc_resolve)(struct sstep_ctx *owner, uint32_t slot, size_t off, size_t size);
    SSTEP_NORETURN void (*noc_range_error)(struct sstep_ctx *owner, const char *primitive,
            lpf_pid_t issuer, uint32_t slot, size_t off, size_t size);
    lpf_err_t (*noc_deregister)(struct sstep_ctx *ctx, lpf_memslot_t h);
    /* a context's extension state freed */
    void (*free)(struct sstep_ctx *ctx);
    /* before an untagged sync: queue every tag's pending requests */
    void (*flush)(struct sstep_ctx *ctx);
    /* lpf_sync, lpf_put and lpf_get with an extension's attribute */
    lpf_err_t (*sync)(lpf_t ctx, lpf_sync_attr_t attr, const void *site);
    lpf_err_t (*put)(lpf_t ctx, lpf_memslot_t src_slot, size_t src_offset,
            lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset, size_t size,
            lpf_msg_attr_t attr, int get);
};
SSTEP_HIDDEN extern const struct sstep_lpfext sstep_lpfext;

/* Resolve the remote area (slot, off, size) on the process owning `owner`.
 * Returns NULL (after printing nothing) if the slot or range is invalid;
 * engines then call sstep_fatal with the details. */
static inline char *sstep_resolve_global(struct sstep_ctx *owner, uint32_t slot,
        size_t off, size_t size)
{
    struct sstep_slot_array *a = sstep_slots(&owner->globals);
    if (SSTEP_UNLIKELY(a == NULL || slot >= a->size))
        return (slot & SSTEP_NOC_BIT) ? sstep_lpfext.noc_resolve(owner, slot, off, size) : NULL;
    struct sstep_slot *e = &a->e[slot];
    if (SSTEP_UNLIKELY(e->state != SSTEP_SLOT_GLOBAL)) return NULL;
    if (SSTEP_UNLIKELY(off > e->size || size > e->size - off)) return NULL;
    return e->base + off;
}

/* Describe why (slot, off, size) is invalid at `owner` and abort. */
SSTEP_HIDDEN SSTEP_NORETURN void sstep_remote_range_error(struct sstep_ctx *owner,
        const char *primitive, lpf_pid_t issuer, uint32_t slot, size_t off,
        size_t size);

#endif
