/*
 * <rma.h> -- a small, library-independent interface for remote memory
 * access (RMA): the same C program compiles, unchanged, against Superstep's
 * BSPlib (every engine), against PUB, and against plain MPI-3 one-sided
 * communication (no Superstep at all). docs/rma.md describes it.
 *
 * Choose the mapping with one macro when compiling (default: BSPlib):
 *   -DRMA_BSPLIB   <bsp.h>  (link with Superstep; bsprun picks the engine)
 *   -DRMA_PUB      <pub.h>  (link with Superstep)
 *   -DRMA_LPF      <lpf/core.h>  (link with Superstep)
 *   -DRMA_MPI      <mpi.h>  (mpicc; MPI_Win_create, fences or passive target)
 *
 * The program's shape (as in BSPlib's "main is the SPMD section"):
 *
 *   int main(int argc, char **argv) {
 *       LIBEGIN(LINPROCS());
 *       ... LIREGISTER(buf, len); LIINIT(); LICOMMIT();
 *       ... LIPUT(dpid, src, buf, off, len); LISYNC(); LIBARRIER(); ...
 *       LIDEREGISTER(buf);
 *       LIEND();
 *       return 0;   // BSPlib, MPI: only process 0 continues after LIEND;
 *   }               // PUB, LPF: every process returns, process 0's value counts
 *
 * Primitives (all collective except LIPUT/LIOPUT, LIGET/LIOGET, LIPID,
 * LINPROCS, LITIME and LIABORT):
 *   LIBEGIN(P) / LIEND()          start / end the parallel part. P is the
 *                                 number of processes BSPlib/PUB start; MPI
 *                                 runs on the ranks mpirun started.
 *   LINPROCS() / LIPID()          number of processes / this process (int)
 *   LITIME()                      wall-clock seconds (double)
 *   LIABORT(fmt, ...)             one line on stderr, the whole program ends
 *   LIREGISTER(addr, len)         make addr[0..len) remotely accessible; the
 *                                 k-th registration of every process belongs
 *                                 together (addresses may differ)
 *   LIINIT() / LICOMMIT()         open the communication epoch / complete the
 *                                 registrations; both before the first LIPUT
 *   LIPUT(dpid, src, dst, off, len)   len bytes from src to dst+off at dpid
 *   LIGET(spid, src, off, dst, len)   len bytes from src+off at spid to dst
 *   LISYNC()                      complete every put and get issued since the
 *                                 last sync: the data are in place, sources
 *                                 and destinations free again (a superstep
 *                                 ends: BSPlib's sync, MPI's fence)
 *   LIBARRIER()                   a barrier; right after LISYNC it costs
 *                                 nothing (the paper's pair LISYNC();
 *                                 LIBARRIER() is one superstep everywhere)
 *   LIDEREGISTER(addr)            undo the newest registration of addr
 * Labeled windows (one window per destination address):
 *   LIOREGISTER(addr, len), LIOINIT(addr), LIOCOMMIT(), LIOPUT(...),
 *   LIOGET(...), LIOSYNC(addr), LIOBARRIER(): as above, but on MPI
 *   LIOINIT and LIOSYNC open / complete only the window of addr (BSPlib,
 *   PUB and LPF have one superstep for every area: LIOSYNC is their sync).
 *
 * The contract is the intersection of the libraries' (MPI's is the
 * strictest): between two syncs, the source of a put and the destination
 * of a get are not touched by local code, and a registered area is either
 * accessed remotely (by puts or gets) or locally, not both: data that
 * arrived in one superstep are read in the next one only if no process
 * puts into the same bytes there (use two buffers in turn, as the suites
 * of bench/rma do). A get reads what the area held at the last sync.
 */
#ifndef SUPERSTEP_RMA_H
#define SUPERSTEP_RMA_H

#if (defined(RMA_MPI) + defined(RMA_PUB) + defined(RMA_LPF) + defined(RMA_BSPLIB)) > 1
# error "<rma.h>: define at most one of RMA_BSPLIB, RMA_PUB, RMA_LPF and RMA_MPI"
#endif
#if !defined(RMA_MPI) && !defined(RMA_PUB) && !defined(RMA_LPF) && !defined(RMA_BSPLIB)
# define RMA_BSPLIB 1
#endif

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__cplusplus)
# define RMA_TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
# define RMA_TLS _Thread_local
#else
# define RMA_TLS __thread
#endif

/* ======================================================================= */
#if defined(RMA_BSPLIB)
/* Fig. 1 and Fig. 3: BSPlib. LIPUT/LIGET are the unbuffered bsp_hpput /
 * bsp_hpget (the interface's contract allows them); -DRMA_BSP_BUFFERED
 * selects the buffered bsp_put / bsp_get. */
#include <bsp.h>

#define RMA_LIBRARY "bsplib"

#define LIBEGIN(P)      (bsp_begin((bsp_pid_t)(P)), rma_seq_reset())
#define LIEND()         bsp_end()
#define LINPROCS()      ((int)bsp_nprocs())
#define LIPID()         ((int)bsp_pid())
#define LITIME()        bsp_time()
#define LIABORT(...)    bsp_abort("LIABORT: " __VA_ARGS__)

static inline void rma_lib_sync(const char *prim) { (void)prim; bsp_sync(); }
static inline void rma_lib_misuse(const char *prim, unsigned long ops)
{
    bsp_abort("rma: %s: %lu puts and gets since the last LISYNC are not complete: call LISYNC() "
              "before LIBARRIER()\n", prim, ops);
}

#ifdef RMA_BSP_BUFFERED
# define LIPUT(dpid, src, dst, off, len) (rma_seq.ops++, \
    bsp_put((bsp_pid_t)(dpid), (src), (dst), (bsp_size_t)(off), (bsp_size_t)(len)))
# define LIGET(spid, src, off, dst, len) (rma_seq.ops++, \
    bsp_get((bsp_pid_t)(spid), (src), (bsp_size_t)(off), (dst), (bsp_size_t)(len)))
#else
# define LIPUT(dpid, src, dst, off, len) (rma_seq.ops++, \
    bsp_hpput((bsp_pid_t)(dpid), (src), (dst), (bsp_size_t)(off), (bsp_size_t)(len)))
# define LIGET(spid, src, off, dst, len) (rma_seq.ops++, \
    bsp_hpget((bsp_pid_t)(spid), (src), (bsp_size_t)(off), (dst), (bsp_size_t)(len)))
#endif
#define LIREGISTER(addr, len)  (rma_seq_register(), bsp_push_reg((addr), (bsp_size_t)(len)))
#define LIDEREGISTER(addr)     (rma_seq_deregister(), bsp_pop_reg(addr))

/* ======================================================================= */
#elif defined(RMA_PUB)
/* Fig. 1 and Fig. 3 on PUB: the calls take the run's root object. PUB
 * starts processes with pub_exec(P, spmd, arg), so this mapping supplies
 * main(): it starts pub_maxprocs() processes (bsprun -n P), each runs the
 * program's main (renamed rma_pub_main); LIBEGIN(P) must ask for that
 * many. On the MPI engine the processes other than 0 get argc = 0. */
#include <pub.h>

#define RMA_LIBRARY "pub"

typedef struct rma_pub_state {
    pbsp bsp;           /* the root object of the run */
    int argc;
    char **argv;
    int status;         /* process 0's return value of main */
} rma_pub_state_t;

__attribute__((weak)) RMA_TLS rma_pub_state_t rma_pub_st;

/* the program's main, declared without a prototype: int main(void) and
 * int main(int, char **) are both accepted (it is called with argc, argv) */
int rma_pub_main();

static inline void rma_pub_spmd(pbsp bsp, void *arg)
{
    rma_pub_st.bsp = bsp;
    int st;
    if (arg) {
        rma_pub_state_t *a = (rma_pub_state_t *)arg;
        st = rma_pub_main(a->argc, a->argv);
        a->status = st;
    } else {
        static char *noargs[1] = { NULL };
        (void)rma_pub_main(0, noargs);
    }
}

__attribute__((weak)) int main(int argc, char **argv)
{
    rma_pub_state_t a = { NULL, argc, argv, 0 };
    pub_exec(pub_maxprocs(), rma_pub_spmd, &a);
    return a.status;
}
#define main rma_pub_main

static inline void rma_pub_begin(int P)
{
    if (P != bsp_nprocs(rma_pub_st.bsp))
        bsp_abort("rma: LIBEGIN (process %d of %d): asked for %d processes; the PUB mapping "
                  "runs the %d that bsprun -n started\n", bsp_pid(rma_pub_st.bsp),
                  bsp_nprocs(rma_pub_st.bsp), P, bsp_nprocs(rma_pub_st.bsp));
}

#define LIBEGIN(P)      (rma_pub_begin((int)(P)), rma_seq_reset())
#define LIEND()         ((void)0)
#define LINPROCS()      bsp_nprocs(rma_pub_st.bsp)
#define LIPID()         bsp_pid(rma_pub_st.bsp)
#define LITIME()        bsp_time()
#define LIABORT(...)    bsp_abort("LIABORT: " __VA_ARGS__)

static inline void rma_lib_sync(const char *prim) { (void)prim; bsp_sync(rma_pub_st.bsp); }
static inline void rma_lib_misuse(const char *prim, unsigned long ops)
{
    bsp_abort("rma: %s: %lu puts and gets since the last LISYNC are not complete: call LISYNC() "
              "before LIBARRIER()\n", prim, ops);
}

#ifdef RMA_BSP_BUFFERED
# define LIPUT(dpid, src, dst, off, len) (rma_seq.ops++, \
    bsp_put(rma_pub_st.bsp, (int)(dpid), (src), (dst), (size_t)(off), (size_t)(len)))
# define LIGET(spid, src, off, dst, len) (rma_seq.ops++, \
    bsp_get(rma_pub_st.bsp, (int)(spid), (src), (size_t)(off), (dst), (size_t)(len)))
#else
# define LIPUT(dpid, src, dst, off, len) (rma_seq.ops++, \
    bsp_hpput(rma_pub_st.bsp, (int)(dpid), (src), (dst), (size_t)(off), (size_t)(len)))
# define LIGET(spid, src, off, dst, len) (rma_seq.ops++, \
    bsp_hpget(rma_pub_st.bsp, (int)(spid), (src), (size_t)(off), (dst), (size_t)(len)))
#endif
#define LIREGISTER(addr, len) \
    (rma_seq_register(), bsp_push_reg(rma_pub_st.bsp, (addr), (size_t)(len)))
#define LIDEREGISTER(addr)     (rma_seq_deregister(), bsp_pop_reg(rma_pub_st.bsp, (addr)))

/* ======================================================================= */
#elif defined(RMA_LPF)
/* LPF (<lpf/core.h>): LIREGISTER is lpf_register_global (active after
 * LICOMMIT's lpf_sync); the source of a put and the destination of a get
 * need a slot too: the part of a registered area of this process that
 * holds them, else a local registration (lpf_register_local) that lasts
 * until the end of the superstep. LIBARRIER is lpf_sync. The capacities of
 * the memory register and the message queue follow what the last
 * supersteps used (start: RMA_LPF_SLOTS, default 1024, for both). Like
 * the PUB mapping it supplies main(): lpf_exec(LPF_ROOT, LPF_MAX_P, ...)
 * runs the program's main (renamed rma_lpf_main) on every process. */
#include <lpf/core.h>
#include <lpf/abort.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#define RMA_LIBRARY "lpf"

typedef struct rma_lpf_reg {
    const char *addr;
    size_t len;
    lpf_memslot_t slot;
} rma_lpf_reg_t;

typedef struct rma_lpf_state {
    lpf_t ctx;
    int pid, nprocs;
    rma_lpf_reg_t *g;           /* global registrations, oldest first */
    int ng, gcap;
    lpf_memslot_t *loc;         /* local registrations of this superstep */
    size_t nloc, loccap;
    size_t regcap, msgcap;      /* capacities asked for */
    size_t msgs, msgs_hw, loc_hw;
    int last;
} rma_lpf_state_t;

__attribute__((weak)) RMA_TLS rma_lpf_state_t rma_lpf_st;
/* process 0's arguments, set by main() before lpf_exec */
__attribute__((weak)) int rma_lpf_argc;
__attribute__((weak)) char **rma_lpf_argv;
__attribute__((weak)) int rma_lpf_status;

/* the program's main, declared without a prototype: int main(void) and
 * int main(int, char **) are both accepted (it is called with argc, argv) */
int rma_lpf_main();

__attribute__((noreturn, format(printf, 2, 3)))
static inline void rma_lpf_die(const char *prim, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t k = strlen(msg);
    while (k > 0 && msg[k - 1] == '\n')
        msg[--k] = '\0';
    fprintf(stderr, "rma: %s (process %d of %d): %s\n", prim, rma_lpf_st.pid,
            rma_lpf_st.nprocs, msg);
    fflush(stderr);
    if (rma_lpf_st.ctx)
        lpf_abort(rma_lpf_st.ctx);
    exit(6);
}

static inline void rma_lpf_resize(void)
{
    size_t want_reg = (size_t)rma_lpf_st.ng + 2 * rma_lpf_st.loc_hw + 64;
    size_t want_msg = 2 * (size_t)rma_lpf_st.nprocs * rma_lpf_st.msgs_hw + 64;
    if (want_reg > rma_lpf_st.regcap) {
        if (lpf_resize_memory_register(rma_lpf_st.ctx, 2 * want_reg) != LPF_SUCCESS)
            rma_lpf_die("LIBARRIER", "out of memory (memory register of %zu slots)", 2 * want_reg);
        rma_lpf_st.regcap = 2 * want_reg;
    }
    if (want_msg > rma_lpf_st.msgcap) {
        if (lpf_resize_message_queue(rma_lpf_st.ctx, 2 * want_msg) != LPF_SUCCESS)
            rma_lpf_die("LIBARRIER", "out of memory (message queue of %zu)", 2 * want_msg);
        rma_lpf_st.msgcap = 2 * want_msg;
    }
}

static inline void rma_lpf_sync(const char *prim)
{
    if (lpf_sync(rma_lpf_st.ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        rma_lpf_die(prim, "lpf_sync failed");
    for (size_t i = 0; i < rma_lpf_st.nloc; i++)
        lpf_deregister(rma_lpf_st.ctx, rma_lpf_st.loc[i]);
    if (rma_lpf_st.nloc > rma_lpf_st.loc_hw)
        rma_lpf_st.loc_hw = rma_lpf_st.nloc;
    if (rma_lpf_st.msgs > rma_lpf_st.msgs_hw)
        rma_lpf_st.msgs_hw = rma_lpf_st.msgs;
    rma_lpf_st.nloc = 0;
    rma_lpf_st.msgs = 0;
    rma_lpf_resize();
}

static inline void rma_lpf_spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    (void)args;
    memset(&rma_lpf_st, 0, sizeof rma_lpf_st);
    rma_lpf_st.ctx = ctx;
    rma_lpf_st.pid = (int)pid;
    rma_lpf_st.nprocs = (int)nprocs;
    rma_lpf_st.last = -1;
    const char *e = getenv("RMA_LPF_SLOTS");
    size_t cap = e ? (size_t)strtoull(e, NULL, 10) : 1024;
    if (cap < 16)
        cap = 16;
    rma_lpf_st.regcap = rma_lpf_st.msgcap = cap;
    if (lpf_resize_memory_register(ctx, cap) != LPF_SUCCESS ||
        lpf_resize_message_queue(ctx, cap) != LPF_SUCCESS)
        rma_lpf_die("LIBEGIN", "out of memory (%zu slots and messages)", cap);
    rma_lpf_sync("LIBEGIN");
    static char *noargs[1] = { NULL };
    int st = pid == 0 ? rma_lpf_main(rma_lpf_argc, rma_lpf_argv) : rma_lpf_main(0, noargs);
    if (pid == 0)
        rma_lpf_status = st;
    free(rma_lpf_st.g);
    free(rma_lpf_st.loc);
    memset(&rma_lpf_st, 0, sizeof rma_lpf_st);
}

__attribute__((weak)) int main(int argc, char **argv)
{
    rma_lpf_argc = argc;
    rma_lpf_argv = argv;
    if (lpf_exec(LPF_ROOT, LPF_MAX_P, rma_lpf_spmd, LPF_NO_ARGS) != LPF_SUCCESS) {
        fprintf(stderr, "rma: lpf_exec failed\n");
        return 6;
    }
    return rma_lpf_status;
}
#define main rma_lpf_main

static inline void rma_lpf_begin(int P)
{
    if (P != rma_lpf_st.nprocs)
        rma_lpf_die("LIBEGIN", "asked for %d processes; the LPF mapping runs the %d that "
                    "bsprun -n started", P, rma_lpf_st.nprocs);
}

static inline double rma_lpf_time(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int rma_lpf_find(const char *prim, const void *addr)
{
    int i = rma_lpf_st.last;
    if (i >= 0 && i < rma_lpf_st.ng && rma_lpf_st.g[i].addr == (const char *)addr)
        return i;
    for (i = rma_lpf_st.ng - 1; i >= 0; i--)
        if (rma_lpf_st.g[i].addr == (const char *)addr) {
            rma_lpf_st.last = i;
            return i;
        }
    rma_lpf_die(prim, "address %p is not registered (LIREGISTER it first)", addr);
}

static inline void rma_lpf_register(const void *addr, size_t len)
{
    if (rma_lpf_st.ng == rma_lpf_st.gcap) {
        int cap = rma_lpf_st.gcap ? 2 * rma_lpf_st.gcap : 16;
        rma_lpf_reg_t *ng = (rma_lpf_reg_t *)realloc(rma_lpf_st.g, (size_t)cap * sizeof *ng);
        if (!ng)
            rma_lpf_die("LIREGISTER", "out of memory (%d registrations)", cap);
        rma_lpf_st.g = ng;
        rma_lpf_st.gcap = cap;
    }
    if ((size_t)rma_lpf_st.ng + rma_lpf_st.nloc + 1 > rma_lpf_st.regcap)
        rma_lpf_die("LIREGISTER", "%d registrations and %zu local slots fill the memory "
                    "register (%zu): LIDEREGISTER some, or raise RMA_LPF_SLOTS",
                    rma_lpf_st.ng, rma_lpf_st.nloc, rma_lpf_st.regcap);
    rma_lpf_reg_t *r = &rma_lpf_st.g[rma_lpf_st.ng];
    r->addr = (const char *)addr;
    r->len = len;
    if (lpf_register_global(rma_lpf_st.ctx, (void *)addr, len, &r->slot) != LPF_SUCCESS)
        rma_lpf_die("LIREGISTER", "lpf_register_global of %zu bytes at %p failed", len, addr);
    rma_lpf_st.ng++;
}

static inline void rma_lpf_deregister(const void *addr)
{
    int i = rma_lpf_find("LIDEREGISTER", addr);
    lpf_deregister(rma_lpf_st.ctx, rma_lpf_st.g[i].slot);
    memmove(&rma_lpf_st.g[i], &rma_lpf_st.g[i + 1],
            (size_t)(rma_lpf_st.ng - i - 1) * sizeof rma_lpf_st.g[0]);
    rma_lpf_st.ng--;
    rma_lpf_st.last = -1;
}

/* a slot and offset for local memory [p, p+len) */
static inline lpf_memslot_t rma_lpf_local(const char *prim, const void *p, size_t len,
                                          size_t *off)
{
    const char *c = (const char *)p;
    for (int i = rma_lpf_st.ng - 1; i >= 0; i--) {
        const rma_lpf_reg_t *r = &rma_lpf_st.g[i];
        if (c >= r->addr && c + len <= r->addr + r->len && r->len > 0) {
            *off = (size_t)(c - r->addr);
            return r->slot;
        }
    }
    if (rma_lpf_st.nloc == rma_lpf_st.loccap) {
        size_t cap = rma_lpf_st.loccap ? 2 * rma_lpf_st.loccap : 64;
        lpf_memslot_t *nl = (lpf_memslot_t *)realloc(rma_lpf_st.loc, cap * sizeof *nl);
        if (!nl)
            rma_lpf_die(prim, "out of memory");
        rma_lpf_st.loc = nl;
        rma_lpf_st.loccap = cap;
    }
    if ((size_t)rma_lpf_st.ng + rma_lpf_st.nloc + 1 > rma_lpf_st.regcap)
        rma_lpf_die(prim, "more than %zu puts and gets from or to unregistered memory in one "
                    "superstep: raise RMA_LPF_SLOTS", rma_lpf_st.regcap - (size_t)rma_lpf_st.ng);
    lpf_memslot_t s;
    if (lpf_register_local(rma_lpf_st.ctx, (void *)p, len, &s) != LPF_SUCCESS)
        rma_lpf_die(prim, "lpf_register_local of %zu bytes at %p failed", len, p);
    rma_lpf_st.loc[rma_lpf_st.nloc++] = s;
    *off = 0;
    return s;
}

static inline void rma_lpf_msg(const char *prim, int pid)
{
    if (pid < 0 || pid >= rma_lpf_st.nprocs)
        rma_lpf_die(prim, "process %d does not exist (%d processes)", pid, rma_lpf_st.nprocs);
    if (++rma_lpf_st.msgs > rma_lpf_st.msgcap)
        rma_lpf_die(prim, "more than %zu puts and gets in one superstep: raise RMA_LPF_SLOTS",
                    rma_lpf_st.msgcap);
}

static inline void rma_lpf_put(int dpid, const void *src, const void *dst, size_t off, size_t len)
{
    rma_lpf_msg("LIPUT", dpid);
    const lpf_memslot_t d = rma_lpf_st.g[rma_lpf_find("LIPUT", dst)].slot;
    if (len == 0)
        return;
    size_t soff;
    const lpf_memslot_t s = rma_lpf_local("LIPUT", src, len, &soff);
    if (lpf_put(rma_lpf_st.ctx, s, soff, (lpf_pid_t)dpid, d, off, len, LPF_MSG_DEFAULT)
        != LPF_SUCCESS)
        rma_lpf_die("LIPUT", "lpf_put of %zu bytes to offset %zu of %p at process %d failed",
                    len, off, dst, dpid);
}

static inline void rma_lpf_get(int spid, const void *src, size_t off, void *dst, size_t len)
{
    rma_lpf_msg("LIGET", spid);
    const lpf_memslot_t s = rma_lpf_st.g[rma_lpf_find("LIGET", src)].slot;
    if (len == 0)
        return;
    size_t doff;
    const lpf_memslot_t d = rma_lpf_local("LIGET", dst, len, &doff);
    if (lpf_get(rma_lpf_st.ctx, (lpf_pid_t)spid, s, off, d, doff, len, LPF_MSG_DEFAULT)
        != LPF_SUCCESS)
        rma_lpf_die("LIGET", "lpf_get of %zu bytes from offset %zu of %p at process %d failed",
                    len, off, src, spid);
}

#define LIBEGIN(P)      (rma_lpf_begin((int)(P)), rma_seq_reset())
#define LIEND()         ((void)0)
#define LINPROCS()      rma_lpf_st.nprocs
#define LIPID()         rma_lpf_st.pid
#define LITIME()        rma_lpf_time()
#define LIABORT(...)    rma_lpf_die("LIABORT", "" __VA_ARGS__)

static inline void rma_lib_sync(const char *prim) { rma_lpf_sync(prim); }
static inline void rma_lib_misuse(const char *prim, unsigned long ops)
{
    rma_lpf_die(prim, "%lu puts and gets since the last LISYNC are not complete: call LISYNC() "
                "before LIBARRIER()", ops);
}

#define LIREGISTER(addr, len)  (rma_seq_register(), rma_lpf_register((addr), (size_t)(len)))
#define LIDEREGISTER(addr)     (rma_seq_deregister(), rma_lpf_deregister(addr))
#define LIPUT(dpid, src, dst, off, len) (rma_seq.ops++, \
    rma_lpf_put((int)(dpid), (src), (dst), (size_t)(off), (size_t)(len)))
#define LIGET(spid, src, off, dst, len) (rma_seq.ops++, \
    rma_lpf_get((int)(spid), (src), (size_t)(off), (dst), (size_t)(len)))

/* ======================================================================= */
#elif defined(RMA_MPI)
/* Fig. 2 and Fig. 4: MPI-3 one-sided communication. Every registration is
 * a window (MPI_Win_create on the caller's memory), found again by its
 * address (the labeled windows' liinsert / lisearch / lidelete). Two ways
 * to complete an epoch, chosen at LIBEGIN by RMA_MPI_SYNC:
 *   fence    (default) LIINIT, LISYNC: MPI_Win_fence on every window
 *            (LIOINIT, LIOSYNC: on the labeled one); LIBARRIER right after
 *            a sync is a no-op (a fence has synchronised every process),
 *            else MPI_Barrier.
 *   passive  every window is locked (MPI_Win_lock_all) from its creation;
 *            LISYNC: MPI_Win_flush_all of the windows this process used,
 *            one MPI_Barrier, MPI_Win_sync of every window.
 * Misuse (an unregistered address, an MPI error in a put or get) gives one
 * line on stderr and MPI_Abort with status 6. */
#include <mpi.h>
#include <stdarg.h>
#include <string.h>

#define RMA_LIBRARY "mpi"

typedef struct rma_mpi_win {
    const void *addr;
    size_t len;
    MPI_Win win;
    int open;       /* fence mode: an epoch is open */
    int used;       /* passive mode: puts or gets since the last flush */
} rma_mpi_win_t;

typedef struct rma_mpi_state {
    rma_mpi_win_t *w;
    int n, cap;
    int pid, nprocs;
    int passive;
    int synced;     /* the last collective call was a sync */
    int last;       /* index of the last window found (lisearch's cache) */
    int begun;
} rma_mpi_state_t;

__attribute__((weak)) rma_mpi_state_t rma_mpi_st;

__attribute__((noreturn, format(printf, 2, 3)))
static inline void rma_mpi_die(const char *prim, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t k = strlen(msg);
    while (k > 0 && msg[k - 1] == '\n')
        msg[--k] = '\0';
    fprintf(stderr, "rma: %s (process %d of %d): %s\n", prim, rma_mpi_st.pid,
            rma_mpi_st.nprocs, msg);
    fflush(stderr);
    int init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Abort(MPI_COMM_WORLD, 6);
    exit(6);
}

#if defined(OPEN_MPI) && !defined(RMA_MPI_KEEP_OSC)
extern int setenv(const char *name, const char *value, int overwrite);
#endif

static inline void rma_mpi_init(void)
{
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
#if defined(OPEN_MPI) && !defined(RMA_MPI_KEEP_OSC)
        /* Open MPI 4.1 picks its UCX one-sided component for a single
         * process even where UCX has no device, and MPI_Win_create fails;
         * the other components (rdma over shared memory or the network,
         * pt2pt) serve every size. An OMPI_MCA_osc of the user's wins. */
        setenv("OMPI_MCA_osc", "^ucx", 0);
#endif
        int prov;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &prov);
    }
    if (!rma_mpi_st.begun) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rma_mpi_st.pid);
        MPI_Comm_size(MPI_COMM_WORLD, &rma_mpi_st.nprocs);
        const char *m = getenv("RMA_MPI_SYNC");
        rma_mpi_st.passive = (m && !strcmp(m, "passive"));
        if (m && strcmp(m, "passive") && strcmp(m, "fence"))
            rma_mpi_die("LIBEGIN", "RMA_MPI_SYNC is '%s'; use fence or passive", m);
        rma_mpi_st.last = -1;
        rma_mpi_st.begun = 1;
    }
}

static inline int rma_mpi_nprocs(void) { rma_mpi_init(); return rma_mpi_st.nprocs; }
static inline int rma_mpi_pid(void) { rma_mpi_init(); return rma_mpi_st.pid; }
static inline void rma_mpi_begin(int P) { (void)P; rma_mpi_init(); rma_mpi_st.synced = 0; }

/* lisearch: the newest window of addr */
static inline int rma_mpi_find(const char *prim, const void *addr)
{
    int i = rma_mpi_st.last;
    if (i >= 0 && i < rma_mpi_st.n && rma_mpi_st.w[i].addr == addr)
        return i;
    for (i = rma_mpi_st.n - 1; i >= 0; i--)
        if (rma_mpi_st.w[i].addr == addr) {
            rma_mpi_st.last = i;
            return i;
        }
    rma_mpi_die(prim, "address %p is not registered (LIREGISTER it first)", addr);
}

/* liinsert */
static inline void rma_mpi_register(const void *addr, size_t len)
{
    rma_mpi_init();
    if (rma_mpi_st.n == rma_mpi_st.cap) {
        int cap = rma_mpi_st.cap ? 2 * rma_mpi_st.cap : 16;
        rma_mpi_win_t *nw = (rma_mpi_win_t *)realloc(rma_mpi_st.w, (size_t)cap * sizeof *nw);
        if (!nw)
            rma_mpi_die("LIREGISTER", "out of memory (%d windows)", cap);
        rma_mpi_st.w = nw;
        rma_mpi_st.cap = cap;
    }
    rma_mpi_win_t *w = &rma_mpi_st.w[rma_mpi_st.n];
    memset(w, 0, sizeof *w);
    w->addr = addr;
    w->len = len;
    MPI_Info info;
    MPI_Info_create(&info);
    if (!rma_mpi_st.passive)
        MPI_Info_set(info, "no_locks", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    int rc = MPI_Win_create((void *)addr, (MPI_Aint)len, 1, info, MPI_COMM_WORLD, &w->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS)
        rma_mpi_die("LIREGISTER", "MPI_Win_create of %zu bytes at %p failed", len, addr);
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    if (rma_mpi_st.passive)
        MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win);
    rma_mpi_st.n++;
    rma_mpi_st.synced = 0;
}

/* lidelete */
static inline void rma_mpi_deregister(const void *addr)
{
    int i = rma_mpi_find("LIDEREGISTER", addr);
    rma_mpi_win_t *w = &rma_mpi_st.w[i];
    if (rma_mpi_st.passive)
        MPI_Win_unlock_all(w->win);
    else if (w->open)
        MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
    MPI_Win_free(&w->win);
    memmove(w, w + 1, (size_t)(rma_mpi_st.n - i - 1) * sizeof *w);
    rma_mpi_st.n--;
    rma_mpi_st.last = -1;
    rma_mpi_st.synced = 0;
}

/* fence mode: open the epochs of the windows not yet open */
static inline void rma_mpi_open_all(void)
{
    if (!rma_mpi_st.passive)
        for (int i = 0; i < rma_mpi_st.n; i++)
            if (!rma_mpi_st.w[i].open) {
                MPI_Win_fence(MPI_MODE_NOPRECEDE, rma_mpi_st.w[i].win);
                rma_mpi_st.w[i].open = 1;
            }
    rma_mpi_st.synced = 0;
}

static inline void rma_mpi_open(const void *addr)
{
    rma_mpi_win_t *w = &rma_mpi_st.w[rma_mpi_find("LIOINIT", addr)];
    if (!rma_mpi_st.passive && !w->open) {
        MPI_Win_fence(MPI_MODE_NOPRECEDE, w->win);
        w->open = 1;
    }
    rma_mpi_st.synced = 0;
}

static inline rma_mpi_win_t *rma_mpi_access(const char *prim, int pid, const void *addr,
                                            size_t off, size_t len)
{
    rma_mpi_win_t *w = &rma_mpi_st.w[rma_mpi_find(prim, addr)];
    if (pid < 0 || pid >= rma_mpi_st.nprocs)
        rma_mpi_die(prim, "process %d does not exist (%d processes)", pid, rma_mpi_st.nprocs);
    if (!rma_mpi_st.passive && !w->open)
        rma_mpi_die(prim, "the window of %p is not open: call LIINIT/LIOINIT or LICOMMIT first",
                    addr);
    if (len > (size_t)0x7fffffff)
        rma_mpi_die(prim, "%zu bytes in one call (at most 2^31 - 1)", len);
    (void)off;
    w->used = 1;
    return w;
}

static inline void rma_mpi_put(int dpid, const void *src, const void *dst, size_t off, size_t len)
{
    rma_mpi_win_t *w = rma_mpi_access("LIPUT", dpid, dst, off, len);
    if (len == 0)
        return;
    int rc = MPI_Put(src, (int)len, MPI_BYTE, dpid, (MPI_Aint)off, (int)len, MPI_BYTE, w->win);
    if (rc != MPI_SUCCESS)
        rma_mpi_die("LIPUT", "MPI_Put of %zu bytes to offset %zu of %p at process %d failed "
                    "(past the registered area?)", len, off, dst, dpid);
}

static inline void rma_mpi_get(int spid, const void *src, size_t off, void *dst, size_t len)
{
    rma_mpi_win_t *w = rma_mpi_access("LIGET", spid, src, off, len);
    if (len == 0)
        return;
    int rc = MPI_Get(dst, (int)len, MPI_BYTE, spid, (MPI_Aint)off, (int)len, MPI_BYTE, w->win);
    if (rc != MPI_SUCCESS)
        rma_mpi_die("LIGET", "MPI_Get of %zu bytes from offset %zu of %p at process %d failed "
                    "(past the registered area?)", len, off, src, spid);
}

static inline void rma_mpi_complete(rma_mpi_win_t *w)
{
    if (rma_mpi_st.passive) {
        if (w->used)
            MPI_Win_flush_all(w->win);
    } else {
        if (MPI_Win_fence(0, w->win) != MPI_SUCCESS)
            rma_mpi_die("LISYNC", "MPI_Win_fence failed (a put or get past a registered area?)");
        w->open = 1;
    }
    w->used = 0;
}

static inline void rma_mpi_sync(void)
{
    for (int i = 0; i < rma_mpi_st.n; i++)
        rma_mpi_complete(&rma_mpi_st.w[i]);
    if (rma_mpi_st.passive) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < rma_mpi_st.n; i++)
            MPI_Win_sync(rma_mpi_st.w[i].win);
    } else if (rma_mpi_st.n == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    rma_mpi_st.synced = 1;
}

static inline void rma_mpi_osync(const void *addr)
{
    rma_mpi_win_t *w = &rma_mpi_st.w[rma_mpi_find("LIOSYNC", addr)];
    rma_mpi_complete(w);
    if (rma_mpi_st.passive) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(w->win);
    }
    rma_mpi_st.synced = 1;
}

static inline void rma_mpi_barrier(const char *prim)
{
    if (!rma_mpi_st.synced) {
        for (int i = 0; i < rma_mpi_st.n; i++)
            if (rma_mpi_st.w[i].used)
                rma_mpi_die(prim, "puts or gets since the last LISYNC are not complete (window "
                            "of %p): call LISYNC() before LIBARRIER()", rma_mpi_st.w[i].addr);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    rma_mpi_st.synced = 0;
}

static inline void rma_mpi_end(void)
{
    while (rma_mpi_st.n > 0)
        rma_mpi_deregister(rma_mpi_st.w[rma_mpi_st.n - 1].addr);
    free(rma_mpi_st.w);
    rma_mpi_st.w = NULL;
    rma_mpi_st.cap = 0;
    int pid = rma_mpi_st.pid;
    MPI_Finalize();
    if (pid != 0)   /* as BSPlib: only process 0 continues after LIEND */
        exit(0);
}

#define LIBEGIN(P)      rma_mpi_begin((int)(P))
#define LIEND()         rma_mpi_end()
#define LINPROCS()      rma_mpi_nprocs()
#define LIPID()         rma_mpi_pid()
#define LITIME()        MPI_Wtime()
#define LIABORT(...)    rma_mpi_die("LIABORT", "" __VA_ARGS__)

#define LIREGISTER(addr, len)  rma_mpi_register((addr), (size_t)(len))
#define LIINIT()               rma_mpi_open_all()
#define LICOMMIT()             rma_mpi_open_all()
#define LIDEREGISTER(addr)     rma_mpi_deregister(addr)
#define LIPUT(dpid, src, dst, off, len) \
    rma_mpi_put((int)(dpid), (src), (dst), (size_t)(off), (size_t)(len))
#define LIGET(spid, src, off, dst, len) \
    rma_mpi_get((int)(spid), (src), (size_t)(off), (dst), (size_t)(len))
#define LISYNC()               rma_mpi_sync()
#define LIBARRIER()            rma_mpi_barrier("LIBARRIER")

#define LIOREGISTER(addr, len)            rma_mpi_register((addr), (size_t)(len))
#define LIOINIT(addr)                     rma_mpi_open(addr)
#define LIOCOMMIT()                       ((void)0)
#define LIOPUT(dpid, src, dst, off, len)  LIPUT(dpid, src, dst, off, len)
#define LIOGET(spid, src, off, dst, len)  LIGET(spid, src, off, dst, len)
#define LIOSYNC(addr)                     rma_mpi_osync(addr)
#define LIOBARRIER()                      rma_mpi_barrier("LIOBARRIER")

#endif /* mapping */

/* ======================================================================= */
#if !defined(RMA_MPI)
/* BSPlib, PUB and LPF: one sync covers every area. Which calls sync
 * follows from the sequence of collective calls alone (so every process
 * agrees): LIINIT or LICOMMIT after registrations is the sync that makes
 * them active (the second of the two is then free); LISYNC is the sync
 * that ends the superstep (the data are in place, sources free, as after
 * MPI's fence); LIBARRIER right after it is free, on its own it is a sync,
 * and one with puts or gets outstanding since the last LISYNC is a misuse
 * (on MPI a barrier would not complete them). */
typedef struct rma_seq {
    int synced;             /* the last collective call was a LISYNC */
    int pending;            /* registrations not yet active */
    unsigned long ops;      /* puts and gets since the last sync */
} rma_seq_t;

__attribute__((weak)) RMA_TLS rma_seq_t rma_seq;

static inline void rma_seq_reset(void) { memset(&rma_seq, 0, sizeof rma_seq); }
static inline void rma_seq_register(void) { rma_seq.synced = 0; rma_seq.pending = 1; }
static inline void rma_seq_deregister(void) { rma_seq.synced = 0; }
static inline void rma_seq_commit(const char *prim)
{
    if (rma_seq.pending) {
        rma_lib_sync(prim);
        rma_seq.pending = 0;
        rma_seq.ops = 0;
    }
    rma_seq.synced = 0;
}
static inline void rma_seq_sync(const char *prim)
{
    rma_lib_sync(prim);
    rma_seq.pending = 0;
    rma_seq.ops = 0;
    rma_seq.synced = 1;
}
static inline void rma_seq_barrier(const char *prim)
{
    if (!rma_seq.synced) {
        if (rma_seq.ops)
            rma_lib_misuse(prim, rma_seq.ops);
        rma_lib_sync(prim);
        rma_seq.pending = 0;
    }
    rma_seq.synced = 0;
}

#define LIINIT()        rma_seq_commit("LIINIT")
#define LICOMMIT()      rma_seq_commit("LICOMMIT")
#define LISYNC()        rma_seq_sync("LISYNC")
#define LIBARRIER()     rma_seq_barrier("LIBARRIER")
/* labeled windows: the same calls; LIOSYNC(addr) completes every area */
#define LIOREGISTER(addr, len)            LIREGISTER(addr, len)
#define LIOINIT(addr)                     ((void)(addr), rma_seq_commit("LIOINIT"))
#define LIOCOMMIT()                       rma_seq_commit("LIOCOMMIT")
#define LIOPUT(dpid, src, dst, off, len)  LIPUT(dpid, src, dst, off, len)
#define LIOGET(spid, src, off, dst, len)  LIGET(spid, src, off, dst, len)
#define LIOSYNC(addr)                     ((void)(addr), rma_seq_sync("LIOSYNC"))
#define LIOBARRIER()                      rma_seq_barrier("LIOBARRIER")
#endif

#endif /* SUPERSTEP_RMA_H */
