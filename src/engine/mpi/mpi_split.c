/*
 * The MPI engine on one node: split puts. A put of big_put bytes or more
 * (1 MiB) moves through the kernel's cross-memory attach, which copies at
 * about a quarter of memcpy's speed (it pins every page). Where MPI lets
 * the receiver's core do the whole copy, a split put has both cores copy
 * one half each at the same time:
 *
 *   - the source's record carries its address and the address where it
 *     would write the second half (what the destination's registration
 *     exchange told it);
 *   - the destination, once its gets and the puts through the body are
 *     applied, says in its arrival line whether the sources may write
 *     their second halves into its memory (yes unless a second half
 *     overlaps another direct put, which then goes through scratch, or a
 *     source's address is not the destination's), then reads the first
 *     halves with process_vm_readv and counts them in each source's line;
 *   - the source waits for that word, writes its second halves with
 *     process_vm_writev and counts them in the destination's line, or
 *     sends them (T_PSPLIT) when told so;
 *   - nobody leaves the sync before its split halves are in and the
 *     destinations read its first halves (the source's memory may change
 *     right after the sync).
 * The counters only grow, so no sync resets them. Used when every pair of
 * processes could read each other's memory at start-up (mpi_shm_create);
 * SUPERSTEP_MPI_SPLIT=0 turns it off.
 */
#define _GNU_SOURCE
#include "mpi_group.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

/* copy n bytes between our `local` and q's `remote` */
static void cma_copy(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q, char *local,
        uint64_t remote, size_t n, int write)
{
    while (n) {
        struct iovec l = { local, n }, r = { (void *)(uintptr_t)remote, n };
        ssize_t k = write ? process_vm_writev((pid_t)g->shm->ospid[q], &l, 1, &r, 1, 0)
                          : process_vm_readv((pid_t)g->shm->ospid[q], &l, 1, &r, 1, 0);
        if (k <= 0)
            sstep_fatal(ctx, "lpf_sync", "%s the memory of process %u failed (%s); "
                    "SUPERSTEP_MPI_SPLIT=0 moves large puts by MPI messages",
                    write ? "process_vm_writev into" : "process_vm_readv from", q,
                    k < 0 ? strerror(errno) : "nothing copied");
        local += k;
        remote += (uint64_t)k;
        n -= (size_t)k;
    }
}

/* wait until *w reaches at least `want` (a counter another process raises) */
static void wait_count(struct mpi_group *g, _Atomic uint64_t *w, uint64_t want)
{
    struct mpi_wait mw;
    mpi_wait_init(&mw, NAP_SYNC_NS);
    for (unsigned it = 1; atomic_load_explicit(w, memory_order_acquire) < want; ++it) {
        mpi_wait_serve(g, &mw, it, 15);
        mpi_wait_step(&mw);
    }
}

void mpi_split_in(struct mpi_group *g, struct sstep_ctx *ctx, int par)
{
    int write = 1;
    for (size_t i = 0; i < g->bput.n; ++i) {
        const struct bigx *x = &g->bput.e[i];
        if (x->tag == T_PSPLIT && (x->tmp || x->raddr != (uint64_t)(uintptr_t)x->ptr)) write = 0;
    }
    g->split_write = write;
    atomic_store_explicit(&line_of(g, g->pid)->split[par],
            mkword(g->gen, g->episode, (unsigned)write), memory_order_release);
    for (size_t i = 0; i < g->bput.n; ++i) {
        struct bigx *x = &g->bput.e[i];
        char *to = x->tmp ? x->tmp : x->ptr;
        if (x->tag == X_PREAD) {
            cma_copy(g, ctx, x->q, to, x->raddr, x->size, 0);
            atomic_fetch_add_explicit(&line_of(g, x->q)->readdone, 1, memory_order_release);
        } else if (x->tag == T_PSPLIT && !write) {
            mpi_post_recv(&g->rmisc, to, x->size, x->q, TAG(T_PSPLIT, par), g->comm);
        }
    }
}

void mpi_split_out(struct mpi_group *g, struct sstep_ctx *ctx, int par)
{
    const uint64_t want = mkword(g->gen, g->episode, 0);
    lpf_pid_t last = (lpf_pid_t)-1;
    int write = 0;
    for (size_t i = 0; i < g->bsplit.n; ++i) {
        const struct bigx *x = &g->bsplit.e[i];
        if (x->q != last) {
            _Atomic uint64_t *w = &line_of(g, x->q)->split[par];
            uint64_t v;
            struct mpi_wait mw;
            mpi_wait_init(&mw, NAP_SYNC_NS);
            for (unsigned it = 1; ((v = atomic_load_explicit(w, memory_order_acquire)) & ~(uint64_t)0xff)
                    != want; ++it) {
                mpi_wait_serve(g, &mw, it, 15);
                mpi_wait_step(&mw);
            }
            write = (int)(v & 1);
            last = x->q;
        }
        if (write) {
            cma_copy(g, ctx, x->q, x->ptr, x->raddr, x->size, 1);
            atomic_fetch_add_explicit(&line_of(g, x->q)->splitdone, 1, memory_order_release);
        } else {
            mpi_post_send(&g->rmisc, x->ptr, x->size, x->q, TAG(T_PSPLIT, par), g->comm);
            g->sent++;
        }
    }
}

void mpi_split_end(struct mpi_group *g, struct sstep_ctx *ctx)
{
    (void)ctx;
    struct shm_line *me = line_of(g, g->pid);
    if (g->nsplit_in && g->split_write) {
        g->split_seen += g->nsplit_in;
        wait_count(g, &me->splitdone, g->split_seen);
    }
    if (g->bsplit.n) {
        g->read_seen += g->bsplit.n;
        wait_count(g, &me->readdone, g->read_seen);
    }
}
