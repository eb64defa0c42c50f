/*
 * The pthread engine: one POSIX thread per BSP process, shared memory.
 *
 * A sync is   barrier A -> [gets] -> [barrier] -> [puts, messages] -> barrier B
 * where the bracketed steps happen only if some process queued requests of
 * that kind (the OR of all processes' flags travels with barrier A, so every
 * process takes the same decision). An empty sync is one barrier; so is a
 * sync whose only requests are small puts (pt_sync.c: they travel in
 * mailboxes written before barrier A and are applied by their destinations
 * after it).
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
#include "pt_group.h"
#include "../../core/output.h"

#include <lpf/pthread.h>

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic unsigned pt_live_procs = 1;   /* BSP processes alive in this program */

/* ------------------------------------------------------------------ */
/* Waiting                                                              */
/* ------------------------------------------------------------------ */

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
_Atomic int pt_membarrier_ok;

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

/* an ordinary sync blocked this long takes part in the range syncs'
 * deadlock detection (pt_range.c) */
#define PT_PLAIN_BLOCKED_NS 100000000ull

uint64_t pt_wait(struct pt_group *g, _Atomic uint64_t *word, uint64_t e, lpf_pid_t pid,
        uint64_t spin_ns)
{
    uint64_t w = atomic_load_explicit(word, memory_order_acquire);
    if (arrived(w, e)) return w;
    int spin = atomic_load_explicit(&pt_live_procs, memory_order_relaxed) <= sstep_online_cores();
    /* a peer that is about to arrive is seen without a clock read first */
    if (spin) {
        for (unsigned i = 0; i < 64; ++i) {
            sstep_cpu_relax();
            w = atomic_load_explicit(word, memory_order_acquire);
            if (arrived(w, e)) return w;
        }
    }
    uint64_t t0 = sstep_now_ns();
    if (spin) {
        for (unsigned i = 1;; ++i) {
            sstep_cpu_relax();
            w = atomic_load_explicit(word, memory_order_acquire);
            if (arrived(w, e)) return w;
            if ((i & 255) == 0 && sstep_now_ns() - t0 > spin_ns) break;
        }
    } else {
        /* A yield that returns late means another task ran a whole time
         * slice on this core (real work, or another program): then
         * blocking is better than queueing for the core again. */
        for (uint64_t t1 = t0;;) {
            sched_yield();
            w = atomic_load_explicit(word, memory_order_acquire);
            if (arrived(w, e)) return w;
            uint64_t t2 = sstep_now_ns();
            if (t2 - t1 > YIELD_SLICE_NS || t2 - t0 > YIELD_NS) break;
            t1 = t2;
        }
    }
    struct pt_sleep *z = g->sleep;
    const struct sstep_watchdog *wd = sstep_watchdog();
    /* a section with range syncs: after 0.1 s this wait takes part in
     * their deadlock detection (pt_range.c) */
    struct sstep_ctx *ctx = e != (UINT64_MAX >> EP_SHIFT) ? g->procs[pid].ctx : NULL;
    int in_range = 0;
    for (;;) {
        if (SSTEP_UNLIKELY(atomic_load_explicit(&g->range, memory_order_acquire) != NULL)
                && ctx && sstep_now_ns() - t0 >= PT_PLAIN_BLOCKED_NS)
            pt_range_plain_blocked(ctx, &in_range);
        uint32_t seq = atomic_load_explicit(&z->seq, memory_order_acquire);
        atomic_fetch_add_explicit(&z->sleepers, 1, memory_order_seq_cst);
        pt_sleeper_fence();
        w = atomic_load_explicit(word, memory_order_seq_cst);
        if (arrived(w, e)) {
            atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
            if (in_range) pt_range_plain_done(ctx);
            return w;
        }
        futex_wait(&z->seq, seq);
        atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
        w = atomic_load_explicit(word, memory_order_acquire);
        if (arrived(w, e)) {
            if (in_range) pt_range_plain_done(ctx);
            return w;
        }
        if (SSTEP_UNLIKELY(wd->first_ns)) {
            uint64_t waited = sstep_now_ns() - t0;
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
int pt_barrier(struct pt_group *g, lpf_pid_t pid, uint64_t flags,
        uint64_t check, uint64_t *or_flags, struct sstep_sync_info *info)
{
    const lpf_pid_t P = g->P;
    struct pt_proc *me = &g->procs[pid];
    struct pt_own *own = &g->own[pid];
    uint64_t e = ++own->episode;
    unsigned par = (unsigned)(e & 1);
    if (check) {
        flags |= F_CHECK;
        atomic_store_explicit(&me->check[par], check, memory_order_relaxed);
    }
    atomic_store_explicit(pt_word(g, pid, e), (e << EP_SHIFT) | flags, memory_order_release);
    pt_publish_fence();
    uint64_t all_or = flags, all_and = flags, mail = 0, mail_inline = 0;
    const uint64_t mine = (uint64_t)1 << (MASK_SHIFT + pid);
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = pid + k;
        if (q >= P) q -= P;
        _Atomic uint64_t *word = pt_word(g, q, e);
        uint64_t w = atomic_load_explicit(word, memory_order_acquire);
        if (SSTEP_UNLIKELY((w >> EP_SHIFT) < e)) {
            w = pt_wait(g, word, e, pid, own->spin_ns ? own->spin_ns : SPIN_NS);
            if ((w >> EP_SHIFT) < e) {
                /* gone without arriving; when it left a range sync that
                 * found a deadlock with this one, it reports and ends the
                 * run: wait for that rather than fail without a word */
                if (atomic_load_explicit(&g->range, memory_order_acquire) && me->ctx
                        && pt_range_deadlocked(me->ctx))
                    for (int i = 0; i < 100; ++i) usleep(50000);
                return -1;
            }
        }
        all_or |= w;
        all_and &= w;
        if (w & mine) {
            mail |= (uint64_t)1 << q;
            if (w & F_INLINE) mail_inline |= (uint64_t)1 << q;
        }
    }
    own->mail = mail;
    own->mail_inline = mail_inline;
    pt_wake(g);
    all_or &= 0x7e;   /* the flags; destination masks stay in the words */
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
void pt_leave(struct pt_group *g, lpf_pid_t pid, struct sstep_ctx *ctx)
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
lpf_err_t pt_wait_all_gone(struct pt_group *g)
{
    lpf_err_t rc = LPF_SUCCESS;
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        _Atomic uint64_t *word = pt_word(g, q, 1);
        while (!(pt_wait(g, word, UINT64_MAX >> EP_SHIFT, 0, SPIN_NS) & PT_GONE)) {}
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

struct pt_group *pt_group_new(lpf_pid_t P)
{
    struct pt_group *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->P = P;
    /* P = 2: a line each, so that small puts ride in the arrival line
     * (F_INLINE): a superstep with one 8-byte put 106 vs 116 ns, an empty
     * one 66 vs 61 ns (2-vCPU AMD EPYC guest, same run) */
    g->stride = P <= PT_PACKED_MAX && P != 2 ? 2 : PT_LINE / sizeof(uint64_t);
    size_t wbytes = ((size_t)P * g->stride * sizeof(uint64_t) + PT_LINE - 1) / PT_LINE * PT_LINE;
    g->words = aligned_alloc(PT_LINE, wbytes);
    g->procs = aligned_alloc(PT_LINE, (size_t)P * sizeof(struct pt_proc));
    g->threads = calloc(P, sizeof(pthread_t));
    g->locks = aligned_alloc(PT_LINE, (size_t)P * PT_LINE);
    g->pend_stride = ((size_t)P * sizeof(lpf_pid_t) + PT_LINE - 1) / PT_LINE * PT_LINE
            / sizeof(lpf_pid_t);
    g->pend = aligned_alloc(PT_LINE, (size_t)P * g->pend_stride * sizeof(lpf_pid_t));
    g->sleep = aligned_alloc(PT_LINE, sizeof *g->sleep);
    g->gc = aligned_alloc(PT_LINE, (size_t)P * sizeof(struct pt_getcount));
    /* read by every destination at every small-put sync: its own lines */
    size_t mb = ((size_t)P * sizeof *g->mbox + PT_LINE - 1) / PT_LINE * PT_LINE;
    g->mbox = aligned_alloc(PT_LINE, mb);
    if (g->mbox) memset(g->mbox, 0, mb);
    g->own = aligned_alloc(PT_LINE, (size_t)P * sizeof *g->own);
    if (g->own) memset(g->own, 0, (size_t)P * sizeof *g->own);
    if (!g->words || !g->procs || !g->threads || !g->locks || !g->pend || !g->sleep || !g->gc
            || !g->mbox || !g->own) {
        free(g->own);
        free(g->mbox);
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

void pt_group_free(struct pt_group *g)
{
    if (!g) return;
    pt_range_free(atomic_load_explicit(&g->range, memory_order_relaxed));
    for (lpf_pid_t s = 0; s < g->P; ++s) {
        sstep_ctx_destroy(g->procs[s].ctx);
        free(g->mbox[s]);
    }
    free(g->mbox);
    free(g->own);
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
void pt_group_release(struct pt_group *g)
{
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        pt_group_free(g);
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
        sstep_out_enter(g->out_tag >= 0 ? g->out_tag : (long)ctx->pid);
        g->spmd(ctx, ctx->pid, g->P, g->args);
        sstep_out_leave();
        pt_leave(g, ctx->pid, ctx);
    }
    atomic_fetch_sub_explicit(&pt_live_procs, 1, memory_order_relaxed);
    return NULL;
}

static lpf_err_t pt_exec_begin(struct sstep_ctx *parent, lpf_pid_t P,
        lpf_spmd_t spmd, lpf_args_t args, struct sstep_ctx **ctx0)
{
#ifdef SUPERSTEP_SMPI
    /* SimGrid's SMPI simulates MPI ranks, not threads: a thread it does not
     * know stops the simulation at its first clock read (docs/scale.md) */
    if (P > 1) {
        sstep_warn("lpf_exec: a section of %u processes on threads (process %u of %u) is not "
                "available in an SMPI build: only MPI ranks are simulated", P, parent->pid,
                parent->nprocs);
        return LPF_ERR_FATAL;
    }
#endif
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
    g->out_tag = sstep_out_tag();
    g->args.input = NULL;
    g->args.input_size = 0;
    g->args.output = NULL;
    g->args.output_size = 0;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    lpf_pid_t started = 1;
    int err = 0;
    atomic_fetch_add_explicit(&pt_live_procs, P - 1, memory_order_relaxed);
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
        atomic_fetch_sub_explicit(&pt_live_procs, P - started, memory_order_relaxed);
        pt_group_free(g);
        return LPF_ERR_OUT_OF_MEMORY;
    }
    /* the caller runs pid 0 on the first CPU of the slice, until exec_end */
    g->pinned0 = pt_cpus_for(parent->cpu_lo, parent->cpu_span, P, 0, &cpus)
            && pt_pin_self(&cpus, &g->saved0) == 0;
    sstep_out_enter(g->out_tag >= 0 ? g->out_tag : 0);
    atomic_store_explicit(&g->gate, 1, memory_order_release);
    *ctx0 = g->procs[0].ctx;
    return LPF_SUCCESS;
}

static lpf_err_t pt_exec_end(struct sstep_ctx *ctx0)
{
    struct pt_group *g = ctx0->group;
    pt_leave(g, 0, ctx0);
    for (lpf_pid_t s = 1; s < g->P; ++s) pthread_join(g->threads[s], NULL);
    /* (after the others: the last one out gives the program its streams
     * back) */
    sstep_out_leave();
    if (g->pinned0) pt_unpin_self(&g->saved0);
    lpf_err_t rc = pt_wait_all_gone(g);
    pt_group_free(g);
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
    sstep_copy(dst, from, size);
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
    sstep_out_flush_self();
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

int pt_x_get_phase(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n, const lpf_pid_t *members)
{
    return pt_get_phase(ctx->group, ctx, lo, n, members, 0);
}

void pt_x_push(struct sstep_ctx *ctx)
{
    struct pt_group *g = ctx->group;
    if (ctx->q.kinds & (1u << SSTEP_PUT)) pt_push(g, ctx);
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
    int spin = atomic_load_explicit(&pt_live_procs, memory_order_relaxed) <= sstep_online_cores();
    /* a peer that is about to arrive is seen without a clock read first */
    if (spin)
        for (unsigned i = 0; i < 64; ++i) {
            sstep_cpu_relax();
            if ((r = pred(arg, 0))) return r;
        }
    uint64_t t0 = sstep_now_ns();
    if (spin) {
        for (unsigned i = 1;; ++i) {
            sstep_cpu_relax();
            if ((r = pred(arg, 0))) return r;
            if ((i & 255) == 0 && sstep_now_ns() - t0 > SPIN_NS) break;
        }
    } else {
        for (uint64_t t1 = t0;;) {
            sched_yield();
            uint64_t t2 = sstep_now_ns();
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
        if ((r = pred(arg, sstep_now_ns() - t0))) {
            atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
            return r;
        }
        futex_wait(&z->seq, seq);
        atomic_fetch_sub_explicit(&z->sleepers, 1, memory_order_relaxed);
        if ((r = pred(arg, sstep_now_ns() - t0))) return r;
    }
}
