/*
 * The pthread engine: one POSIX thread per BSP process, shared memory.
 *
 * A sync is   barrier A -> [gets] -> [barrier] -> [puts, messages] -> barrier B
 * where the bracketed steps happen only if some process queued requests of
 * that kind (the OR of all processes' flags travels with barrier A, so every
 * process takes the same decision). An empty sync is one barrier.
 *
 * Gets are pulled: the issuer reads the source process's memory and writes
 * its own. Puts are pushed: the issuer writes its batch into the destination
 * while holding the destination's lock, so its request records never leave
 * its cache (only the payload crosses cores) and the batches of different
 * sources to one destination take turns: overlapping writes leave the result
 * of one serialisation of whole requests. All gets finish before any put
 * starts (BSPlib's rule: a get sees the value from before the superstep's
 * puts, and a put wins over a get writing the same bytes). Messages are
 * collected by their receiver.
 *
 * The barrier: every process publishes its arrival (episode, flags) in a word
 * of a shared array (all words in one or two cache lines for small P) and
 * reads everybody else's. All processes therefore see the same flags and
 * checks and decide alike, and a process that has left the section (gone
 * bit) is seen by everyone waiting for it: sync returns LPF_ERR_FATAL
 * instead of hanging. Waiting spins briefly, then yields the core, then
 * sleeps with a growing (bounded) nap, so more processes than cores stays
 * fast and idle waits do not burn a core. Processes are pinned to their
 * slice of the CPUs (affinity.c).
 */
#include "pthread_internal.h"

#include <lpf/pthread.h>

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PT_LINE 128

/* An arrival word: (episode << 8) | flags | gone. Each process has two, by
 * episode parity, so a fast process arriving at episode e+1 cannot overwrite
 * what a slow one still has to read of episode e. For small P all words
 * share one or two cache lines: on this class of machine a barrier whose
 * flags live in one line costs a fraction of one that moves a line per
 * process. Beyond PT_PACKED_MAX processes each gets its own line. */
#define PT_GONE ((uint64_t)1)
#define F_PUT ((uint64_t)2 << SSTEP_PUT)
#define F_GET ((uint64_t)2 << SSTEP_GET)
#define F_MSG ((uint64_t)2 << SSTEP_MSG)
#define F_CHECK ((uint64_t)1 << 5)    /* some process carries a check value */
#define F_REHOOK ((uint64_t)1 << 6)   /* this episode is a rehook, not a sync */
#define EP_SHIFT 8
#define PT_PACKED_MAX 8

/* per-process line: check values and what the process left with */
struct pt_proc {
    _Atomic uint64_t check[2];      /* by episode parity */
    uint64_t episode;               /* owner only */
    struct sstep_ctx *ctx;          /* set before the first arrival */
    uint64_t final_syncs;           /* written before the gone bit */
    int final_failed;
} __attribute__((aligned(PT_LINE)));

/* Gets that read a process's memory (pid != owner), counted by the readers:
 * `readers` before barrier A, `done` after each reader has read. Both only
 * grow, so no reset can race with a reader of the next sync. The owner
 * must not write its own get destinations before done == readers: a peer
 * may still be reading those bytes as the sources of its gets. */
struct pt_getcount {
    _Atomic uint64_t readers;
    _Atomic uint64_t done;
} __attribute__((aligned(PT_LINE)));

/* Waiters that block in the kernel count themselves here and sleep on
 * `seq`; an arrival that sees sleepers bumps `seq` and wakes them. */
struct pt_sleep {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleepers;
} __attribute__((aligned(PT_LINE)));

struct pt_group {
    lpf_pid_t P;
    unsigned stride;                  /* words between two processes' pairs */
    _Atomic uint64_t *words;          /* arrival words, [P * stride] */
    _Atomic int refs;                 /* processes still using the group */
    _Atomic int gate;                 /* exec start gate: 0 wait, 1 go, 2 cancel */
    lpf_spmd_t spmd;                  /* what siblings run */
    lpf_args_t args;                  /* siblings' args */
    pthread_t *threads;
    struct pt_group *_Atomic child;   /* rehook: new group published by pid 0 */
    _Atomic int *locks;               /* per destination, one line each: push phase */
    struct pt_sleep *sleep;           /* futex word and sleeper count, own line */
    lpf_pid_t *pend;                  /* [P][P] scratch for the push phase */
    int pinned0;                      /* exec: pid 0's affinity was changed */
    cpu_set_t saved0;                 /* ... and is restored from this */
    struct pt_proc *procs;            /* [P] */
    struct pt_getcount *gc;           /* [P] gets reading each process */
    _Atomic uint64_t stall_warned;    /* watchdog: episode last reported + 1 */
    _Atomic int stall_fatal;          /* watchdog: somebody is giving up */
    struct pt_range *_Atomic range;   /* E1/E2 state (pt_range.c), lazily */
};

static inline _Atomic uint64_t *pt_word(struct pt_group *g, lpf_pid_t q, uint64_t e)
{
    return &g->words[(size_t)q * g->stride + (e & 1)];
}

/* BSP processes alive in this program (for the spin-or-yield decision) */
static _Atomic unsigned live_procs = 1;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Waiting                                                              */
/* ------------------------------------------------------------------ */

#define SPIN_NS 30000ull      /* spin this long when every process has a core */
#define YIELD_NS 2000000ull   /* oversubscribed: yield the core this long */
#define YIELD_SLICE_NS 100000ull /* ... unless one yield took this long */
#define SLEEP_MAX_NS 10000000L /* a sleeper re-checks at least this often */

static inline int arrived(uint64_t w, uint64_t e)
{
    return (w >> EP_SHIFT) >= e || (w & PT_GONE);
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
    struct timespec ts = { 0, SLEEP_MAX_NS };
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Blocked waiters are woken by the processes they wait for: every process
 * publishes its arrival (or gone bit) and, once it has passed the barrier
 * (or left), wakes the sleepers if there are any. A waiter counts itself
 * before its last look at the word it waits on. Either the waiter sees the
 * word or the word's owner sees the count (no lost wake-up) if a full fence
 * separates store and load on both sides. The fence is asymmetric: an
 * arrival, which happens at every sync, pays only a compiler barrier, and
 * the waiter, which is about to block anyway, runs membarrier(), which
 * puts a full fence into every running thread of the process (a full fence
 * in the arrival costs ~45 ns of a ~100 ns sync; membarrier ~0.2 µs here).
 * Kernels without membarrier get the plain fence on the arrival side.
 * Waking when passing rather than when arriving means sleepers wake once,
 * when the barrier is complete, instead of at every arrival. */
static _Atomic int pt_membarrier_ok;

/* Registration belongs to the address space: a child made by fork (e.g. a
 * death test) starts unregistered and registers again. */
static void pt_membarrier_register(void)
{
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    int ok = q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED)
            && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    atomic_store_explicit(&pt_membarrier_ok, ok, memory_order_relaxed);
}

__attribute__((constructor)) static void pt_membarrier_init(void)
{
    pt_membarrier_register();
    pthread_atfork(NULL, NULL, pt_membarrier_register);
}

static inline void pt_publish_fence(void)
{
    if (atomic_load_explicit(&pt_membarrier_ok, memory_order_relaxed))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

static inline void pt_sleeper_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&pt_membarrier_ok, memory_order_relaxed)
            && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        /* cannot happen once registered; if it does, arrivals fence from
         * now on (a wake-up lost meanwhile costs one 10 ms re-check) */
        atomic_store_explicit(&pt_membarrier_ok, 0, memory_order_relaxed);
}

static inline void pt_wake(struct pt_group *g)
{
    if (SSTEP_UNLIKELY(atomic_load_explicit(&g->sleep->sleepers, memory_order_relaxed))) {
        atomic_fetch_add_explicit(&g->sleep->seq, 1, memory_order_release);
        futex_wake_all(&g->sleep->seq);
    }
}

/* Wait until the word shows episode e or the gone bit; returns the word.
 * Spin while every process has a core of its own (a peer is about to
 * arrive); yield briefly while processes outnumber cores (a peer needs our
 * core); then block in the kernel, so that a machine loaded by other
 * programs gets its cores back and we are woken as soon as the peer
 * arrives (a yielding waiter would stay runnable and make the peer wait
 * for whole time slices). */
/* The watchdog (core/watchdog.c): process pid has waited `waited` ns for
 * episode e. Reports once per episode; gives up past the timeout. */
static SSTEP_NOINLINE void pt_stalled(struct pt_group *g, lpf_pid_t pid, uint64_t e,
        uint64_t waited)
{
    const struct sstep_watchdog *wd = sstep_watchdog();
    const int fatal = wd->timeout_ns && waited >= wd->timeout_ns;
    if (!fatal && (!wd->warn_ns || waited < wd->warn_ns)) return;
    if (fatal ? atomic_exchange(&g->stall_fatal, 1) != 0
              : atomic_exchange(&g->stall_warned, e + 1) == e + 1)
        return;
    const lpf_pid_t P = g->P;
    unsigned char *state = calloc(P, 1);
    uint64_t *steps = calloc(P, sizeof *steps);
    if (!state || !steps) {
        free(state);
        free(steps);
        return;
    }
    const int at_end = e == (UINT64_MAX >> EP_SHIFT);
    for (lpf_pid_t q = 0; q < P; ++q) {
        uint64_t w = atomic_load_explicit(pt_word(g, q, e), memory_order_acquire);
        if (at_end) state[q] = (w & PT_GONE) ? SSTEP_ARR_YES : SSTEP_ARR_NOT;
        else if ((w >> EP_SHIFT) >= e) state[q] = SSTEP_ARR_YES;
        else state[q] = (w & PT_GONE) ? SSTEP_ARR_LEFT : SSTEP_ARR_NOT;
        /* a diagnostic read of another thread's counter */
        struct sstep_ctx *c = g->procs[q].ctx;
        steps[q] = c ? __atomic_load_n(&c->superstep, __ATOMIC_RELAXED) : 0;
    }
    sstep_sync_stalled(g->procs[pid].ctx, waited, P, state, steps, fatal);
    free(state);
    free(steps);
}

static uint64_t pt_wait(struct pt_group *g, _Atomic uint64_t *word, uint64_t e, lpf_pid_t pid)
{
    uint64_t w = atomic_load_explicit(word, memory_order_acquire);
    if (arrived(w, e)) return w;
    int spin = atomic_load_explicit(&live_procs, memory_order_relaxed) <= sstep_online_cores();
    /* a peer that is about to arrive is seen without a clock read first */
    if (spin) {
        for (unsigned i = 0; i < 64; ++i) {
            cpu_relax();
            w = atomic_load_explicit(word, memory_order_acquire);
            if (arrived(w, e)) return w;
        }
    }
    uint64_t t0 = now_ns();
    if (spin) {
        for (unsigned i = 1;; ++i) {
            cpu_relax();
            w = atomic_load_explicit(word, memory_order_acquire);
            if (arrived(w, e)) return w;
            if ((i & 255) == 0 && now_ns() - t0 > SPIN_NS) break;
        }
    } else {
        /* A yield that returns late means another task ran a whole time
         * slice on this core (real work, or another program): then
         * blocking is better than queueing for the core again. */
        for (uint64_t t1 = t0;;) {
            sched_yield();
            w = atomic_load_explicit(word, memory_order_acquire);
            if (arrived(w, e)) return w;
            uint64_t t2 = now_ns();
            if (t2 - t1 > YIELD_SLICE_NS || t2 - t0 > YIELD_NS) break;
            t1 = t2;
        }
    }
    struct pt_sleep *z = g->sleep;
    const struct sstep_watchdog *wd = sstep_watchdog();
    for (;;) {
        uint32_t seq = atomic_load_explicit(&z->seq, memory_order_acquire);
        atomic_fetch_add_explicit(&z->sleepers, 1, memory_order_seq_cst);
        pt_sleeper_fence();
        w = atomic_load_explicit(word, memory_order_seq_cst);
        if (arrived(w, e)) {
            atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
            return w;
        }
        futex_wait(&z->seq, seq);
        atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
        w = atomic_load_explicit(word, memory_order_acquire);
        if (arrived(w, e)) return w;
        if (SSTEP_UNLIKELY(wd->first_ns)) {
            uint64_t waited = now_ns() - t0;
            if (waited >= wd->first_ns) pt_stalled(g, pid, e, waited);
        }
    }
}

/* One barrier episode. `flags` travel with the arrival; *or_flags receives
 * their OR over all processes. A non-zero check value is compared with
 * everybody's (info records the first difference). Returns 0, or -1 if the
 * section failed: a peer left before arriving, or some processes are in a
 * rehook while others sync. Every process sees the same words, so every
 * process takes the same decision. */
static int pt_barrier(struct pt_group *g, lpf_pid_t pid, uint64_t flags,
        uint64_t check, uint64_t *or_flags, struct sstep_sync_info *info)
{
    const lpf_pid_t P = g->P;
    struct pt_proc *me = &g->procs[pid];
    uint64_t e = ++me->episode;
    unsigned par = (unsigned)(e & 1);
    if (check) {
        flags |= F_CHECK;
        atomic_store_explicit(&me->check[par], check, memory_order_relaxed);
    }
    atomic_store_explicit(pt_word(g, pid, e), (e << EP_SHIFT) | flags, memory_order_release);
    pt_publish_fence();
    uint64_t all_or = flags, all_and = flags;
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = pid + k;
        if (q >= P) q -= P;
        _Atomic uint64_t *word = pt_word(g, q, e);
        uint64_t w = atomic_load_explicit(word, memory_order_acquire);
        if (SSTEP_UNLIKELY((w >> EP_SHIFT) < e)) {
            w = pt_wait(g, word, e, pid);
            if ((w >> EP_SHIFT) < e) return -1;   /* gone without arriving */
        }
        all_or |= w;
        all_and &= w;
    }
    pt_wake(g);
    all_or &= 0xfe;
    if (SSTEP_UNLIKELY((all_or ^ all_and) & F_REHOOK)) return -1;
    if (SSTEP_UNLIKELY(all_or & F_CHECK) && info) {
        for (lpf_pid_t q = 0; q < P; ++q) {
            uint64_t c = q == pid ? check
                : (atomic_load_explicit(pt_word(g, q, e), memory_order_acquire) & F_CHECK)
                    ? atomic_load_explicit(&g->procs[q].check[par], memory_order_relaxed) : 0;
            if (c != check && !info->mismatch) {
                info->mismatch = 1;
                info->peer = q;
                info->peer_check = c;
            }
        }
    }
    *or_flags = all_or;
    return 0;
}

/* Mark this process as having left the section (it arrives nowhere any
 * more): waiters for a later episode see the gone bit and fail. */
static void pt_leave(struct pt_group *g, lpf_pid_t pid, struct sstep_ctx *ctx)
{
    /* Leave once: a process whose sync failed has left already, and peers
     * that saw its gone bit may be reading final_* right now. Only the
     * owner sets its own gone bits. */
    if (atomic_load_explicit(pt_word(g, pid, 1), memory_order_relaxed) & PT_GONE) return;
    struct pt_proc *me = &g->procs[pid];
    me->final_syncs = ctx ? ctx->superstep - ctx->range_steps : 0;
    me->final_failed = ctx ? ctx->failed : 1;
    atomic_fetch_or_explicit(pt_word(g, pid, 0), PT_GONE, memory_order_release);
    atomic_fetch_or_explicit(pt_word(g, pid, 1), PT_GONE, memory_order_release);
    pt_publish_fence();
    pt_wake(g);
}

/* Wait until every process of the group has left; then the group's result:
 * success iff nobody failed and everybody synced equally often. */
static lpf_err_t pt_wait_all_gone(struct pt_group *g)
{
    lpf_err_t rc = LPF_SUCCESS;
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        _Atomic uint64_t *word = pt_word(g, q, 1);
        while (!(pt_wait(g, word, UINT64_MAX >> EP_SHIFT, 0) & PT_GONE)) {}
        /* the gone bit of the other word was set first */
        (void)atomic_load_explicit(pt_word(g, q, 0), memory_order_acquire);
        struct pt_proc *o = &g->procs[q];
        if (o->final_failed || o->final_syncs != g->procs[0].final_syncs) rc = LPF_ERR_FATAL;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Groups                                                               */
/* ------------------------------------------------------------------ */

static struct pt_group *pt_group_new(lpf_pid_t P)
{
    struct pt_group *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->P = P;
    g->stride = P <= PT_PACKED_MAX ? 2 : PT_LINE / sizeof(uint64_t);
    size_t wbytes = ((size_t)P * g->stride * sizeof(uint64_t) + PT_LINE - 1) / PT_LINE * PT_LINE;
    g->words = aligned_alloc(PT_LINE, wbytes);
    g->procs = aligned_alloc(PT_LINE, (size_t)P * sizeof(struct pt_proc));
    g->threads = calloc(P, sizeof(pthread_t));
    g->locks = aligned_alloc(PT_LINE, (size_t)P * PT_LINE);
    g->pend = malloc((size_t)P * P * sizeof(lpf_pid_t));
    g->sleep = aligned_alloc(PT_LINE, sizeof *g->sleep);
    g->gc = aligned_alloc(PT_LINE, (size_t)P * sizeof(struct pt_getcount));
    if (!g->words || !g->procs || !g->threads || !g->locks || !g->pend || !g->sleep || !g->gc) {
        free(g->gc);
        free(g->sleep);
        free((void *)g->locks);
        free(g->pend);
        free(g->words);
        free(g->procs);
        free(g->threads);
        free(g);
        return NULL;
    }
    memset((void *)g->words, 0, wbytes);
    memset((void *)g->locks, 0, (size_t)P * PT_LINE);
    memset(g->sleep, 0, sizeof *g->sleep);
    memset(g->procs, 0, (size_t)P * sizeof(struct pt_proc));
    memset((void *)g->gc, 0, (size_t)P * sizeof(struct pt_getcount));
    atomic_store_explicit(&g->refs, (int)P, memory_order_relaxed);
    return g;
}

static void pt_group_free(struct pt_group *g)
{
    if (!g) return;
    pt_range_free(atomic_load_explicit(&g->range, memory_order_relaxed));
    for (lpf_pid_t s = 0; s < g->P; ++s) sstep_ctx_destroy(g->procs[s].ctx);
    free((void *)g->words);
    free((void *)g->locks);
    free(g->pend);
    free(g->sleep);
    free((void *)g->gc);
    free(g->procs);
    free(g->threads);
    free(g);
}

/* Drop one reference; the last process frees the group and all contexts
 * (peers may read a context's arena until everyone has left). */
static void pt_group_release(struct pt_group *g)
{
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        pt_group_free(g);
}

/* ------------------------------------------------------------------ */
/* Sync                                                                 */
/* ------------------------------------------------------------------ */

/* Execute the gets `me` issued to `src`: read src's memory and write ours,
 * or, when `stage` is given, copy into it (in list order) and write ours
 * later (unstage_gets). */
static char *do_gets(struct sstep_ctx *me, struct sstep_ctx *src, char *stage)
{
    struct sstep_queue *q = &me->q;
    struct sstep_req *reqs = q->reqs;
    for (uint32_t i = q->peers[src->pid].head[SSTEP_GET]; i != SSTEP_NIL; i = reqs[i].next) {
        struct sstep_req *r = &reqs[i];
        char *from = sstep_resolve_global(src, r->slot, r->off, r->size);
        if (SSTEP_UNLIKELY(!from))
            sstep_remote_range_error(src, me->get_name ? me->get_name : "lpf_get",
                    me->pid, r->slot, r->off, r->size);
        if (stage) {
            if (r->size) memcpy(stage, from, r->size);   /* zero-size: from may be NULL */
            stage += r->size;
        } else {
            sstep_copy(r->local, from, r->size);
        }
    }
    return stage;
}

/* Write the staged values of the gets `me` issued to `src` (same order). */
static const char *unstage_gets(struct sstep_ctx *me, lpf_pid_t src, const char *stage)
{
    struct sstep_queue *q = &me->q;
    struct sstep_req *reqs = q->reqs;
    for (uint32_t i = q->peers[src].head[SSTEP_GET]; i != SSTEP_NIL; i = reqs[i].next) {
        if (reqs[i].size) memcpy(reqs[i].local, stage, reqs[i].size);
        stage += reqs[i].size;
    }
    return stage;
}

/* The get phase. Every get reads its source as it was when the sync was
 * entered (BSPlib §5), even when that source is the destination of another
 * process's get. A process whose memory nobody else reads writes its get
 * destinations directly; one that is read by a peer first copies its
 * sources aside, waits until every reader of its memory has read, then
 * writes. Reads never wait, so the waits cannot form a cycle. */
static int pt_get_phase(struct pt_group *g, struct sstep_ctx *ctx)
{
    const lpf_pid_t pid = ctx->pid;
    struct sstep_queue *q = &ctx->q;
    struct pt_getcount *mine = &g->gc[pid];
    const uint64_t readers = atomic_load_explicit(&mine->readers, memory_order_relaxed);
    const int have = (q->kinds & (1u << SSTEP_GET)) != 0;
    if (!have) return 0;
    const int stage = readers != atomic_load_explicit(&mine->done, memory_order_acquire);
    char *buf = NULL;
    if (stage) {
        size_t bytes = 0;
        for (lpf_pid_t i = 0; i < q->ntouched; ++i)
            bytes += q->peers[q->touched[i]].bytes[SSTEP_GET];
        buf = bytes ? sstep_arena_alloc(&ctx->arena[ctx->superstep & 1], bytes) : NULL;
        if (bytes && !buf) return -1;
    }
    char *p = buf;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t s = q->touched[i];
        if (q->peers[s].head[SSTEP_GET] == SSTEP_NIL) continue;
        p = do_gets(ctx, g->procs[s].ctx, stage ? p : NULL);
        if (s != pid) atomic_fetch_add_explicit(&g->gc[s].done, 1, memory_order_release);
    }
    if (!stage) return 0;
    /* every peer that reads us has read */
    /* (readers are in this phase already and never wait: a short wait) */
    for (unsigned i = 0; atomic_load_explicit(&mine->done, memory_order_acquire) != readers; ++i) {
        if (i < 256) cpu_relax();
        else sched_yield();
    }
    const char *r = buf;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t s = q->touched[i];
        if (q->peers[s].head[SSTEP_GET] != SSTEP_NIL) r = unstage_gets(ctx, s, r);
    }
    return 0;
}

/* Apply the puts `me` issued to `dst`, writing dst's memory directly. The
 * caller holds dst's lock, so batches of different sources to one
 * destination are serialised whole. */
static void push_puts(struct sstep_ctx *me, struct sstep_ctx *dst)
{
    const struct sstep_queue *q = &me->q;
    const struct sstep_req *reqs = q->reqs;
    struct sstep_slot_array *a = sstep_slots(&dst->globals);
    for (uint32_t i = q->peers[dst->pid].head[SSTEP_PUT]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        const struct sstep_slot *e = r->slot < a->size ? &a->e[r->slot] : NULL;
        if (SSTEP_UNLIKELY(!e || e->state != SSTEP_SLOT_GLOBAL
                    || r->off > e->size || r->size > e->size - r->off))
            sstep_remote_range_error(dst, me->put_name ? me->put_name : "lpf_put",
                    me->pid, r->slot, r->off, r->size);
        sstep_copy(e->base + r->off, r->local, r->size);
    }
}

static inline int pt_trylock(struct pt_group *g, lpf_pid_t d)
{
    _Atomic int *l = &g->locks[(size_t)d * (PT_LINE / sizeof(int))];
    return atomic_load_explicit(l, memory_order_relaxed) == 0
        && atomic_exchange_explicit(l, 1, memory_order_acquire) == 0;
}

static inline void pt_unlock(struct pt_group *g, lpf_pid_t d)
{
    atomic_store_explicit(&g->locks[(size_t)d * (PT_LINE / sizeof(int))], 0, memory_order_release);
}

/* Push phase: every process writes its own puts into their destinations.
 * The requests stay in the issuer's cache (only the payload crosses cores);
 * a destination's lock makes concurrent writers take turns, a busy
 * destination is skipped and retried. */
static void do_push(struct pt_group *g, struct sstep_ctx *me, lpf_pid_t *pend)
{
    const struct sstep_queue *q = &me->q;
    lpf_pid_t n = 0;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t d = q->touched[i];
        if (q->peers[d].head[SSTEP_PUT] != SSTEP_NIL) pend[n++] = d;
    }
    int yield = atomic_load_explicit(&live_procs, memory_order_relaxed) > sstep_online_cores();
    while (n) {
        for (lpf_pid_t i = 0; i < n;) {
            lpf_pid_t d = pend[i];
            if (pt_trylock(g, d)) {
                push_puts(me, g->procs[d].ctx);
                pt_unlock(g, d);
                pend[i] = pend[--n];
            } else {
                ++i;
            }
        }
        if (n) {
            if (yield) sched_yield();
            else cpu_relax();
        }
    }
}

/* Collect the messages `src` sent to `me` into our inbox. */
static int do_msgs(struct sstep_ctx *me, struct sstep_ctx *src)
{
    const struct sstep_queue *q = &src->q;
    const struct sstep_peer_lists *pl = &q->peers[me->pid];
    if (pl->count[SSTEP_MSG] == 0) return 0;
    if (sstep_inbox_reserve(&me->inbox, pl->count[SSTEP_MSG])) return -1;
    struct sstep_msg *m = me->inbox.msgs + me->inbox.n;
    for (uint32_t i = pl->head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next, ++m) {
        m->data = q->reqs[i].local;
        m->size = q->reqs[i].size;
    }
    me->inbox.n += pl->count[SSTEP_MSG];
    return 0;
}

static lpf_err_t pt_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct pt_group *g = ctx->group;
    const lpf_pid_t P = g->P, pid = ctx->pid;
    uint64_t all;
    if (SSTEP_UNLIKELY(ctx->q.kinds & (1u << SSTEP_GET))) {
        /* tell every process we read that we will (pt_get_phase) */
        const struct sstep_queue *q = &ctx->q;
        for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
            lpf_pid_t s = q->touched[i];
            if (s != pid && q->peers[s].head[SSTEP_GET] != SSTEP_NIL)
                atomic_fetch_add_explicit(&g->gc[s].readers, 1, memory_order_relaxed);
        }
    }
    if (pt_barrier(g, pid, (uint64_t)ctx->q.kinds << 1, info->check, &all, info)) goto fail;
    ctx->inbox.n = ctx->inbox.next = 0;
    if (SSTEP_LIKELY(all == 0)) return LPF_SUCCESS;

    if (all & F_GET) {
        if (pt_get_phase(g, ctx)) goto fail;
        /* every get must have read its source before any put lands */
        uint64_t none;
        if ((all & F_PUT) && pt_barrier(g, pid, 0, 0, &none, NULL)) goto fail;
    }
    int oom = 0;
    if (ctx->q.kinds & (1u << SSTEP_PUT)) do_push(g, ctx, g->pend + (size_t)pid * P);
    if (all & F_MSG) {
        for (lpf_pid_t k = 0; k < P; ++k) {
            lpf_pid_t s = pid + 1 + k;
            while (s >= P) s -= P;
            oom |= do_msgs(ctx, g->procs[s].ctx);
        }
    }
    uint64_t dummy;
    if (pt_barrier(g, pid, 0, 0, &dummy, NULL)) goto fail;
    if (oom) goto fail;
    return LPF_SUCCESS;
fail:
    /* Leaving now is safe: either every process fails at this barrier (a
     * peer left, or operations differ) or we already passed the last one.
     * Peers then see us gone at their next sync instead of waiting. */
    ctx->failed = 1;
    pt_leave(g, pid, ctx);
    return LPF_ERR_FATAL;
}

/* ------------------------------------------------------------------ */
/* exec                                                                 */
/* ------------------------------------------------------------------ */

static void *pt_sibling_main(void *arg)
{
    struct pt_proc *me = arg;
    struct sstep_ctx *ctx = me->ctx;
    struct pt_group *g = ctx->group;
    int gate;
    while ((gate = atomic_load_explicit(&g->gate, memory_order_acquire)) == 0)
        sched_yield();
    if (gate == 1) {
        g->spmd(ctx, ctx->pid, g->P, g->args);
        pt_leave(g, ctx->pid, ctx);
    }
    atomic_fetch_sub_explicit(&live_procs, 1, memory_order_relaxed);
    return NULL;
}

static lpf_err_t pt_exec_begin(struct sstep_ctx *parent, lpf_pid_t P,
        lpf_spmd_t spmd, lpf_args_t args, struct sstep_ctx **ctx0)
{
    struct pt_group *g = pt_group_new(P);
    if (!g) return LPF_ERR_OUT_OF_MEMORY;
    lpf_pid_t F = parent->free_p;
    for (lpf_pid_t s = 0; s < P; ++s) {
        struct sstep_ctx *c = sstep_ctx_create(s, P, &sstep_pthread_engine, g);
        if (!c) { pt_group_free(g); return LPF_ERR_OUT_OF_MEMORY; }
        c->free_p = F >= P ? sstep_share(F, P, s) : 1;
        c->cpu_span = parent->cpu_span / P;
        c->cpu_lo = parent->cpu_lo + parent->cpu_span * s / P;
        c->engine_proc = &g->procs[s];
        g->procs[s].ctx = c;
    }
    g->spmd = spmd;
    g->args = args;
    g->args.input = NULL;
    g->args.input_size = 0;
    g->args.output = NULL;
    g->args.output_size = 0;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    lpf_pid_t started = 1;
    int err = 0;
    atomic_fetch_add_explicit(&live_procs, P - 1, memory_order_relaxed);
    cpu_set_t cpus;
    for (lpf_pid_t s = 1; s < P; ++s) {
        if (pt_cpus_for(parent->cpu_lo, parent->cpu_span, P, s, &cpus)) pt_pin_attr(&attr, &cpus);
        err = pthread_create(&g->threads[s], &attr, pt_sibling_main, &g->procs[s]);
        if (err) break;
        started++;
    }
    pthread_attr_destroy(&attr);
    if (err) {
        /* nothing has run yet: cancel the started threads */
        atomic_store_explicit(&g->gate, 2, memory_order_release);
        for (lpf_pid_t s = 1; s < started; ++s) pthread_join(g->threads[s], NULL);
        atomic_fetch_sub_explicit(&live_procs, P - started, memory_order_relaxed);
        pt_group_free(g);
        return LPF_ERR_OUT_OF_MEMORY;
    }
    /* the caller runs pid 0 on the first CPU of the slice, until exec_end */
    g->pinned0 = pt_cpus_for(parent->cpu_lo, parent->cpu_span, P, 0, &cpus)
            && pt_pin_self(&cpus, &g->saved0) == 0;
    atomic_store_explicit(&g->gate, 1, memory_order_release);
    *ctx0 = g->procs[0].ctx;
    return LPF_SUCCESS;
}

static lpf_err_t pt_exec_end(struct sstep_ctx *ctx0)
{
    struct pt_group *g = ctx0->group;
    pt_leave(g, 0, ctx0);
    for (lpf_pid_t s = 1; s < g->P; ++s) pthread_join(g->threads[s], NULL);
    if (g->pinned0) pt_unpin_self(&g->saved0);
    lpf_err_t rc = pt_wait_all_gone(g);
    pt_group_free(g);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Hook and rehook: a section on threads that already exist             */
/* ------------------------------------------------------------------ */

/* Run spmd as process `pid` of group g (hook / rehook); every participant
 * calls this, the last one out frees the group. */
static lpf_err_t pt_run_hooked(struct pt_group *g, lpf_pid_t pid,
        lpf_spmd_t spmd, lpf_args_t args)
{
    struct pt_proc *me = &g->procs[pid];
    struct sstep_ctx *ctx = sstep_ctx_create(pid, g->P, &sstep_pthread_engine, g);
    if (!ctx) {
        /* peers will see us gone at their first sync */
        pt_leave(g, pid, NULL);
        pt_wait_all_gone(g);
        pt_group_release(g);
        return LPF_ERR_FATAL;
    }
    ctx->free_p = 1;
    ctx->in_hook = 1;
    ctx->engine_proc = me;
    me->ctx = ctx;
    spmd(ctx, pid, g->P, args);
    pt_leave(g, pid, ctx);
    lpf_err_t rc = pt_wait_all_gone(g);
    pt_group_release(g);
    return rc;
}

static lpf_err_t pt_rehook(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args)
{
    struct pt_group *g = ctx->group;
    if (ctx->pid == 0)
        atomic_store_explicit(&g->child, pt_group_new(g->P), memory_order_relaxed);
    uint64_t all;
    if (pt_barrier(g, ctx->pid, F_REHOOK, 0, &all, NULL)) {
        /* a peer left or did something else: the parent section failed */
        if (ctx->pid == 0) pt_group_free(atomic_load_explicit(&g->child, memory_order_relaxed));
        ctx->failed = 1;
        pt_leave(g, ctx->pid, ctx);
        return LPF_ERR_FATAL;
    }
    struct pt_group *child = atomic_load_explicit(&g->child, memory_order_relaxed);
    if (!child) return LPF_ERR_OUT_OF_MEMORY;   /* the same on every process */
    return pt_run_hooked(child, ctx->pid, spmd, args);
}

/* lpf_pthread_initialize: a rendezvous of nprocs threads. Only one group may
 * be inside it at a time (the API names no group). */
struct pt_init_shared {
    lpf_pid_t nprocs;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    lpf_pid_t arrived;
    uint64_t hooks_created;      /* hook generations with a group */
    struct pt_group *current;    /* group of the latest generation */
    _Atomic int refs;            /* init objects alive */
};

struct pt_init {
    struct sstep_init_header hdr;
    struct pt_init_shared *sh;
    lpf_pid_t pid;
    uint64_t hooks;              /* hooks this thread has started */
};

static pthread_mutex_t rendezvous_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rendezvous_cond = PTHREAD_COND_INITIALIZER;
static struct pt_init_shared *forming;
static lpf_pid_t forming_left;   /* threads yet to leave the rendezvous */

lpf_err_t lpf_pthread_initialize(lpf_pid_t pid, lpf_pid_t nprocs, lpf_init_t *init)
{
    if (init == NULL || nprocs == 0 || pid >= nprocs) return LPF_ERR_FATAL;
    struct pt_init *mine = calloc(1, sizeof *mine);
    if (!mine) return LPF_ERR_OUT_OF_MEMORY;
    mine->hdr.magic = SSTEP_INIT_MAGIC;
    mine->hdr.engine = &sstep_pthread_engine;
    mine->pid = pid;

    pthread_mutex_lock(&rendezvous_lock);
    /* wait until a previous group has fully left the rendezvous */
    while (forming && (forming->arrived == forming->nprocs || forming->nprocs != nprocs))
        pthread_cond_wait(&rendezvous_cond, &rendezvous_lock);
    if (!forming) {
        struct pt_init_shared *sh = calloc(1, sizeof *sh);
        if (!sh) {
            pthread_mutex_unlock(&rendezvous_lock);
            free(mine);
            return LPF_ERR_OUT_OF_MEMORY;
        }
        sh->nprocs = nprocs;
        pthread_mutex_init(&sh->lock, NULL);
        pthread_cond_init(&sh->cond, NULL);
        atomic_store_explicit(&sh->refs, (int)nprocs, memory_order_relaxed);
        forming = sh;
        forming_left = nprocs;
    }
    struct pt_init_shared *sh = forming;
    sh->arrived++;
    if (sh->arrived == nprocs) pthread_cond_broadcast(&rendezvous_cond);
    while (sh->arrived < nprocs) pthread_cond_wait(&rendezvous_cond, &rendezvous_lock);
    if (--forming_left == 0) {
        forming = NULL;
        pthread_cond_broadcast(&rendezvous_cond);
    }
    pthread_mutex_unlock(&rendezvous_lock);
    mine->sh = sh;
    *init = mine;
    return LPF_SUCCESS;
}

lpf_err_t lpf_pthread_finalize(lpf_init_t init)
{
    struct pt_init *mine = init;
    if (!mine || mine->hdr.magic != SSTEP_INIT_MAGIC || mine->hdr.engine != &sstep_pthread_engine)
        return LPF_ERR_FATAL;
    struct pt_init_shared *sh = mine->sh;
    mine->hdr.magic = 0;
    free(mine);
    if (atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&sh->lock);
        pthread_cond_destroy(&sh->cond);
        free(sh);
    }
    return LPF_SUCCESS;
}

static lpf_err_t pt_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
{
    struct pt_init *mine = init;
    struct pt_init_shared *sh = mine->sh;
    uint64_t gen = ++mine->hooks;
    /* the first thread to start hook number `gen` makes its group; no thread
     * can start hook gen+1 before all have finished hook gen */
    pthread_mutex_lock(&sh->lock);
    if (sh->hooks_created < gen) {
        sh->current = pt_group_new(sh->nprocs);
        sh->hooks_created = gen;
    }
    struct pt_group *g = sh->current;
    pthread_mutex_unlock(&sh->lock);
    if (!g) return LPF_ERR_FATAL;
    /* the user's threads now act as BSP processes: count them for the
     * spin-or-yield decision (the caller of the program is counted already) */
    if (mine->pid != 0) atomic_fetch_add_explicit(&live_procs, 1, memory_order_relaxed);
    lpf_err_t rc = pt_run_hooked(g, mine->pid, spmd, args);
    if (mine->pid != 0) atomic_fetch_sub_explicit(&live_procs, 1, memory_order_relaxed);
    return rc;
}

/* ------------------------------------------------------------------ */
/* direct get, remote size, abort                                       */
/* ------------------------------------------------------------------ */

static lpf_err_t pt_direct_get(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot,
        size_t off, void *dst, size_t size)
{
    struct pt_group *g = ctx->group;
    struct sstep_ctx *src = g->procs[pid].ctx;
    char *from = sstep_resolve_global(src, slot, off, size);
    if (!from) sstep_remote_range_error(src, "bsp_direct_get", ctx->pid, slot, off, size);
    memmove(dst, from, size);
    return LPF_SUCCESS;
}

static size_t pt_remote_size(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot)
{
    struct pt_group *g = ctx->group;
    struct sstep_slot_array *a = sstep_slots(&g->procs[pid].ctx->globals);
    return slot < a->size && a->e[slot].state == SSTEP_SLOT_GLOBAL ? a->e[slot].size : SIZE_MAX;
}

static void pt_abort(struct sstep_ctx *ctx, int status)
{
    (void)ctx;
    fflush(stdout);
    fflush(stderr);
    _exit(status);
}

const struct sstep_engine sstep_pthread_engine = {
    .name = "pthread",
    .machine_p = sstep_machine_p,
    .hook = pt_hook,
    .exec_begin = pt_exec_begin,
    .exec_end = pt_exec_end,
    .rehook = pt_rehook,
    .sync = pt_sync,
    .direct_get = pt_direct_get,
    .remote_size = pt_remote_size,
    .sync_range = pt_sync_range,
    .abort = pt_abort,
};

/* ------------------------------------------------------------------ */
/* Services for the range syncs (pt_range.c)                            */
/* ------------------------------------------------------------------ */

struct pt_range *pt_x_range(struct sstep_ctx *ctx)
{
    struct pt_group *g = ctx->group;
    struct pt_range *r = atomic_load_explicit(&g->range, memory_order_acquire);
    if (SSTEP_LIKELY(r != NULL)) return r;
    struct pt_range *n = pt_range_new(g->P);
    if (!n) sstep_fatal(ctx, "sstep_sync_range", "out of memory");
    struct pt_range *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&g->range, &expected, n,
                memory_order_acq_rel, memory_order_acquire))
        return n;
    pt_range_free(n);
    return expected;
}

struct sstep_ctx *pt_x_ctx(struct sstep_ctx *ctx, lpf_pid_t q)
{
    struct pt_group *g = ctx->group;
    return g->procs[q].ctx;
}

int pt_x_gone(struct sstep_ctx *ctx, lpf_pid_t q)
{
    struct pt_group *g = ctx->group;
    return (atomic_load_explicit(pt_word(g, q, 1), memory_order_acquire) & PT_GONE) != 0;
}

void pt_x_wake(struct sstep_ctx *ctx)
{
    pt_publish_fence();
    pt_wake(ctx->group);
}

void pt_x_leave(struct sstep_ctx *ctx)
{
    ctx->failed = 1;
    pt_leave(ctx->group, ctx->pid, ctx);
}

void pt_x_count_readers(struct sstep_ctx *ctx)
{
    struct pt_group *g = ctx->group;
    const struct sstep_queue *q = &ctx->q;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        lpf_pid_t s = q->touched[i];
        if (s != ctx->pid && q->peers[s].head[SSTEP_GET] != SSTEP_NIL)
            atomic_fetch_add_explicit(&g->gc[s].readers, 1, memory_order_relaxed);
    }
}

int pt_x_get_phase(struct sstep_ctx *ctx)
{
    return pt_get_phase(ctx->group, ctx);
}

void pt_x_push(struct sstep_ctx *ctx)
{
    struct pt_group *g = ctx->group;
    if (ctx->q.kinds & (1u << SSTEP_PUT)) do_push(g, ctx, g->pend + (size_t)ctx->pid * g->P);
}

void pt_x_stalled(struct sstep_ctx *ctx, uint64_t waited, lpf_pid_t n,
        const unsigned char *state, const uint64_t *steps)
{
    struct pt_group *g = ctx->group;
    const struct sstep_watchdog *wd = sstep_watchdog();
    const int fatal = wd->timeout_ns && waited >= wd->timeout_ns;
    if (fatal && atomic_exchange(&g->stall_fatal, 1) != 0) return;
    sstep_sync_stalled(ctx, waited, n, state, steps, fatal);
}

/* Wait until pred(arg, waited_ns) returns non-zero, with the strategy of
 * pt_wait: spin (every process has a core), else yield, then sleep on the
 * group's futex (woken by pt_x_wake; re-checks at least every 10 ms). */
int pt_x_wait(struct sstep_ctx *ctx, int (*pred)(void *, uint64_t), void *arg)
{
    struct pt_group *g = ctx->group;
    int r = pred(arg, 0);
    if (r) return r;
    int spin = atomic_load_explicit(&live_procs, memory_order_relaxed) <= sstep_online_cores();
    uint64_t t0 = now_ns();
    if (spin) {
        for (unsigned i = 1;; ++i) {
            cpu_relax();
            if ((r = pred(arg, 0))) return r;
            if ((i & 255) == 0 && now_ns() - t0 > SPIN_NS) break;
        }
    } else {
        for (uint64_t t1 = t0;;) {
            sched_yield();
            uint64_t t2 = now_ns();
            if ((r = pred(arg, t2 - t0))) return r;
            if (t2 - t1 > YIELD_SLICE_NS || t2 - t0 > YIELD_NS) break;
            t1 = t2;
        }
    }
    struct pt_sleep *z = g->sleep;
    for (;;) {
        uint32_t seq = atomic_load_explicit(&z->seq, memory_order_acquire);
        atomic_fetch_add_explicit(&z->sleepers, 1, memory_order_seq_cst);
        pt_sleeper_fence();
        if ((r = pred(arg, now_ns() - t0))) {
            atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
            return r;
        }
        futex_wait(&z->seq, seq);
        atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
        if ((r = pred(arg, now_ns() - t0))) return r;
    }
}
