/*
 * bench_mpi -- the MPI engine against plain MPI doing the same work, in the
 * same run, on the same ranks (JSON lines on stdout).
 *
 *   bsprun --engine mpi -n 2 bench_mpi [--only NAME] [--reps R] [--touch]
 *
 * Rank 0 runs main and starts one SPMD section over all ranks; inside it
 * both LPF and plain MPI (on MPI_COMM_WORLD) are timed, alternating batch
 * by batch, and the medians are reported:
 *   empty_sync       lpf_sync with no requests       vs MPI_Barrier
 *   total_exchange   one put of B bytes to every process (itself included),
 *                    B = 64 KiB .. 8 MiB             vs MPI_Alltoallv of
 *                                                       the same bytes
 *   fine_puts        2^20 puts of 8 bytes to the next process, scattered
 *                    destinations (no two adjacent)   vs packing (offset,
 *                    value) pairs by hand + MPI_Alltoall of the counts +
 *                    MPI_Alltoallv + unpacking, and vs MPI_Put in a fence
 *                    epoch (RMA)
 *   fine_puts_adjacent  the same with adjacent destinations (merged)
 *   bsp_send         2^20 bsp_send of 8 bytes to the next process, then
 *                    bsp_move of every message   vs packing by hand +
 *                    MPI_Alltoall + MPI_Alltoallv + reading the payloads
 *   direct_get       bsp_direct_get of 8 B .. 1 MiB from pid 1 (which waits
 *                    in a sync)     vs MPI_Get in a passive-target epoch
 *                    (lock, get, unlock) on a window made over the area
 *                    (MPI_Win_create), and on a dynamic window with the
 *                    area attached (what an engine could expose its
 *                    registrations through), and memcpy of the same bytes;
 *                    "hosts": how many hosts the ranks run on; "cma":
 *                    whether the engine reads by process_vm_readv (all
 *                    ranks on one host, SUPERSTEP_MPI_SHM and
 *                    SUPERSTEP_MPI_CMA not 0, the kernel lets it), else
 *                    the owner answers a message
 *   place            lpf_put (and bsp_put) of b = 4 KiB .. 8 MiB to the
 *                    next process, one put per superstep, with source and
 *                    destination placed as bench/common/bench_place.h says
 *                    (malloc, page, alias, skew) vs MPI_Sendrecv of the same
 *                    buffers (one message to the next process: what an
 *                    engine built on messages does) and memcpy from source
 *                    to destination on every rank at once (one copy); run
 *                    it with and without GLIBC_TUNABLES=glibc.cpu.
 *                    x86_rep_movsb_threshold=4294967295 ("rep_movsb_tunable")
 * Public headers only (plus <mpi.h>).
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/core.h>
#include <mpi.h>
#ifdef BENCH_HAVE_BSP
#include <bsp.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_baseline.h"
#include "../common/bench_place.h"

/* MPI_Win_create on MPI_COMM_WORLD; 0 on every rank where it failed on
 * one. (Open MPI's default one-sided component may refuse ranks on several
 * hosts, where osc pt2pt works: those figures are then null.) */
static int win_create(void *base, size_t size, int disp, MPI_Win *win)
{
    *win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ok = MPI_Win_create(base, (MPI_Aint)size, disp, MPI_INFO_NULL, MPI_COMM_WORLD, win)
            == MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!ok && rank == 0)
        fprintf(stderr, "bench_mpi: MPI_Win_create failed on these ranks: no MPI RMA figures "
                "(Open MPI across hosts: --mpi-args \"--mca osc pt2pt\")\n");
    return ok;
}

/* A dynamic window (MPI_Win_create_dynamic) with area attached, as an
 * engine would expose registered memory to MPI_Get; addr[q] is where q's
 * area lies (the target displacement). 0 on every rank where it failed on
 * one. */
static int win_dynamic(void *area, size_t size, MPI_Win *win, MPI_Aint *addr)
{
    *win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ok = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win) == MPI_SUCCESS;
    if (ok) MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    if (ok) ok = MPI_Win_attach(*win, area, (MPI_Aint)size) == MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Aint mine = 0;
    MPI_Get_address(area, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    if (!ok && *win != MPI_WIN_NULL) {
        MPI_Win_free(win);
        *win = MPI_WIN_NULL;
    }
    return ok;
}

/* how many hosts (MPI's shared-memory nodes) the ranks of MPI_COMM_WORLD
 * run on */
static int world_hosts(void)
{
    MPI_Comm node;
    int leader = 0, hosts = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank = 0;
    MPI_Comm_rank(node, &nrank);
    leader = nrank == 0;
    MPI_Allreduce(&leader, &hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    return hosts;
}

/* whether the MPI engine's bsp_direct_get reads the owner's memory itself
 * (process_vm_readv) on these ranks: the engine's own conditions */
static int direct_get_by_cma(int hosts)
{
    const char *shm = getenv("SUPERSTEP_MPI_SHM"), *cma = getenv("SUPERSTEP_MPI_CMA");
    if (hosts != 1 || (shm && strcmp(shm, "0") == 0) || (cma && strcmp(cma, "0") == 0)) return 0;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1) scope = 1;
        fclose(f);
    }
    return scope == 0;
}

struct opts {
    char only[64];
    int reps;
    int touch;   /* place: rewrite the source before every put */
};
static struct opts O = { "", 7, 0 };

static int want(const char *name) { return O.only[0] == '\0' || strcmp(O.only, name) == 0; }

/* the slowest process's time of a batch */
static double tmax(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void setup(lpf_t ctx, size_t regs, size_t msgs)
{
    lpf_resize_memory_register(ctx, regs);
    lpf_resize_message_queue(ctx, msgs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

/* ------------------------------------------------------------------ */

static void bench_empty_sync(lpf_t ctx, lpf_pid_t s, lpf_pid_t p)
{
    const int N = 20000;
    double *tl = malloc(O.reps * sizeof *tl), *tm = malloc(O.reps * sizeof *tm);
    for (int i = 0; i < 2000; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (int i = 0; i < 2000; ++i) MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < O.reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < N; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
        tl[r] = tmax(MPI_Wtime() - t) / N;
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        for (int i = 0; i < N; ++i) MPI_Barrier(MPI_COMM_WORLD);
        tm[r] = tmax(MPI_Wtime() - t) / N;
    }
    double l = median(tl, O.reps), m = median(tm, O.reps);
    if (s == 0)
        printf("{\"bench\":\"mpi\",\"what\":\"empty_sync\",\"p\":%u,\"lpf_sync_us\":%.3f,"
               "\"mpi_barrier_us\":%.3f,\"ratio_lpf_over_barrier\":%.3f}\n",
                p, l * 1e6, m * 1e6, l / m);
    fflush(stdout);
    free(tl);
    free(tm);
}

static void bench_total_exchange(lpf_t ctx, lpf_pid_t s, lpf_pid_t p)
{
    const size_t maxB = (size_t)8 << 20;
    char *src = malloc(maxB * p), *dst = malloc(maxB * p), *mdst = malloc(maxB * p);
    for (size_t i = 0; i < maxB * p; ++i) src[i] = (char)(s * 7 + i);
    memset(dst, 0, maxB * p);
    memset(mdst, 0, maxB * p);
    setup(ctx, 2, 2 * p);
    lpf_memslot_t ls, gd;
    lpf_register_local(ctx, src, maxB * p, &ls);
    lpf_register_global(ctx, dst, maxB * p, &gd);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    int *cnt = malloc(p * sizeof *cnt), *dsp = malloc(p * sizeof *dsp);
    double *tl = malloc(O.reps * sizeof *tl), *tm = malloc(O.reps * sizeof *tm);
    for (size_t B = (size_t)64 << 10; B <= maxB; B *= 2) {
        for (lpf_pid_t k = 0; k < p; ++k) {
            cnt[k] = (int)B;
            dsp[k] = (int)(k * B);
        }
        int iters = (int)((size_t)(64 << 20) / (B * p));
        if (iters < 3) iters = 3;
        for (int w = 0; w < 2; ++w) {
            for (lpf_pid_t k = 0; k < p; ++k)
                lpf_put(ctx, ls, k * B, k, gd, s * B, B, LPF_MSG_DEFAULT);
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
            MPI_Alltoallv(src, cnt, dsp, MPI_BYTE, mdst, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
        }
        /* the same bytes arrived both ways */
        int same = memcmp(dst, mdst, B * p) == 0;
        for (int r = 0; r < O.reps; ++r) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < iters; ++i) {
                for (lpf_pid_t k = 0; k < p; ++k) {
                    lpf_pid_t q = (s + k) % p;
                    lpf_put(ctx, ls, q * B, q, gd, s * B, B, LPF_MSG_DEFAULT);
                }
                lpf_sync(ctx, LPF_SYNC_DEFAULT);
            }
            tl[r] = tmax(MPI_Wtime() - t) / iters;
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            for (int i = 0; i < iters; ++i)
                MPI_Alltoallv(src, cnt, dsp, MPI_BYTE, mdst, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
            tm[r] = tmax(MPI_Wtime() - t) / iters;
        }
        double l = median(tl, O.reps), m = median(tm, O.reps);
        double bytes = (double)B * p;   /* sent (and received) per process */
        if (s == 0)
            printf("{\"bench\":\"mpi\",\"what\":\"total_exchange\",\"p\":%u,\"block_bytes\":%zu,"
                   "\"lpf_us\":%.1f,\"mpi_alltoallv_us\":%.1f,\"lpf_gbs\":%.3f,"
                   "\"mpi_gbs\":%.3f,\"ratio_lpf_over_alltoallv_throughput\":%.3f,\"same_data\":%s}\n",
                    p, B, l * 1e6, m * 1e6, bytes / l / 1e9, bytes / m / 1e9, m / l,
                    same ? "true" : "false");
        fflush(stdout);
    }
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gd);
    free(src);
    free(dst);
    free(mdst);
    free(cnt);
    free(dsp);
    free(tl);
    free(tm);
}

/* fine-grained puts: n puts of 8 bytes to the next process */
static void bench_fine_puts(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, int adjacent)
{
    const size_t n = (size_t)1 << 20;
    const lpf_pid_t to = (s + 1) % p;
    uint64_t *src = malloc(n * sizeof *src), *dst = malloc(n * sizeof *dst);
    uint32_t *pos = malloc(n * sizeof *pos);
    for (size_t i = 0; i < n; ++i) {
        src[i] = ((uint64_t)s << 40) | i;
        /* a permutation that never puts two consecutive requests next to
         * each other, or the identity */
        pos[i] = adjacent ? (uint32_t)i : (uint32_t)((i * 7919u) & (n - 1));
    }
    memset(dst, 0, n * sizeof *dst);
    setup(ctx, 2, 2 * n + 2);
    lpf_memslot_t ls, gd;
    lpf_register_local(ctx, src, n * sizeof *src, &ls);
    lpf_register_global(ctx, dst, n * sizeof *dst, &gd);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    /* the hand-packed MPI equivalent */
    uint64_t *pack = malloc(2 * n * sizeof *pack), *unpack = malloc(2 * n * sizeof *unpack);
    uint64_t *mdst = malloc(n * sizeof *mdst);
    int *scnt = calloc(p, sizeof *scnt), *rcnt = calloc(p, sizeof *rcnt);
    int *sdsp = calloc(p, sizeof *sdsp), *rdsp = calloc(p, sizeof *rdsp);
    double *tl = malloc(O.reps * sizeof *tl), *tm = malloc(O.reps * sizeof *tm);
    int same = 1;
    for (int r = -1; r < O.reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (size_t i = 0; i < n; ++i)
            lpf_put(ctx, ls, i * 8, to, gd, (size_t)pos[i] * 8, 8, LPF_MSG_DEFAULT);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        double l = tmax(MPI_Wtime() - t) / n;
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        /* pack (offset, value) records for the destination */
        for (lpf_pid_t k = 0; k < p; ++k) scnt[k] = 0;
        for (size_t i = 0; i < n; ++i) {
            pack[2 * i] = pos[i];
            pack[2 * i + 1] = src[i];
        }
        scnt[to] = (int)(2 * n);
        sdsp[to] = 0;
        MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD);
        int tot = 0;
        for (lpf_pid_t k = 0; k < p; ++k) {
            rdsp[k] = tot;
            tot += rcnt[k];
        }
        MPI_Alltoallv(pack, scnt, sdsp, MPI_UINT64_T, unpack, rcnt, rdsp, MPI_UINT64_T, MPI_COMM_WORLD);
        for (int i = 0; i < tot; i += 2) mdst[unpack[i]] = unpack[i + 1];
        double m = tmax(MPI_Wtime() - t) / n;
        if (r < 0) {
            same = memcmp(dst, mdst, n * sizeof *dst) == 0;
            continue;
        }
        tl[r] = l;
        tm[r] = m;
    }
    double l = median(tl, O.reps), m = median(tm, O.reps);
    /* MPI RMA: one MPI_Put per element in a fence epoch (fewer elements:
     * it is slow) */
    const size_t nr = (size_t)1 << 16;
    MPI_Win win;
    const int have_win = win_create(mdst, n * sizeof *mdst, 8, &win);
    double trma[3] = { 0, 0, 0 };
    for (int r = 0; r < 3 && have_win; ++r) {
        MPI_Win_fence(0, win);
        double t = MPI_Wtime();
        for (size_t i = 0; i < nr; ++i)
            MPI_Put(&src[i], 8, MPI_BYTE, (int)to, (MPI_Aint)pos[i], 8, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        trma[r] = tmax(MPI_Wtime() - t) / nr;
    }
    if (have_win) MPI_Win_free(&win);
    char rma[32] = "null";
    if (have_win) snprintf(rma, sizeof rma, "%.2f", median(trma, 3) * 1e9);
    if (s == 0)
        printf("{\"bench\":\"mpi\",\"what\":\"%s\",\"p\":%u,\"puts_per_process\":%zu,"
               "\"lpf_ns_per_put\":%.2f,\"mpi_packed_alltoallv_ns_per_put\":%.2f,"
               "\"mpi_rma_put_fence_ns_per_put\":%s,\"ratio_lpf_over_packed\":%.3f,"
               "\"same_data\":%s}\n",
                adjacent ? "fine_puts_adjacent" : "fine_puts", p, n, l * 1e9, m * 1e9, rma,
                l / m, same ? "true" : "false");
    fflush(stdout);
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gd);
    free(src);
    free(dst);
    free(pos);
    free(pack);
    free(unpack);
    free(mdst);
    free(scnt);
    free(rcnt);
    free(sdsp);
    free(rdsp);
    free(tl);
    free(tm);
}

/* ------------------------------------------------------------------ */
/* bulk puts by buffer placement                                        */

static const size_t place_sizes[] = { (size_t)4 << 10, (size_t)16 << 10, (size_t)64 << 10,
    (size_t)256 << 10, (size_t)1 << 20, (size_t)4 << 20, (size_t)8 << 20 };

/* supersteps per timed batch */
static int place_iters(size_t b)
{
    size_t n = ((size_t)32 << 20) / b;
    return n < 4 ? 4 : n > 2000 ? 2000 : (int)n;
}

/* "set" where every rank runs glibc's memcpy without `rep movsb`,
 * "default" where none does, "mixed" otherwise */
static const char *place_tunable(void)
{
    const char *env = getenv("GLIBC_TUNABLES");
    int set = env && strstr(env, "x86_rep_movsb_threshold") != NULL, lo = 0, hi = 0;
    MPI_Allreduce(&set, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&set, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo ? "set" : hi ? "mixed" : "default";
}

/* --touch: a program computes what it puts; the source's cache lines are
 * then written by this process before every put, and whoever copies them
 * next fetches them from this core (without it the references read
 * sources that stay in every cache from one step to the next) */
static void place_touch(char *src, size_t b, lpf_pid_t s)
{
    if (!O.touch) return;
    for (size_t i = 0; i < b; i += 64) ((volatile char *)src)[i] = (char)(s + 1);
}

/* the references for one placement and size, batch r: MPI_Sendrecv of b
 * bytes to the next process and memcpy of b bytes on every rank at once;
 * the slowest rank's time per step */
static void place_refs(char *src, char *dst, size_t b, lpf_pid_t s, lpf_pid_t p,
                       int iters, double *tsr, double *tmc)
{
    const int next = (int)((s + 1) % p), prev = (int)((s + p - 1) % p);
    void *(*volatile cp)(void *, const void *, size_t) = memcpy;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
        place_touch(src, b, s);
        MPI_Sendrecv(src, (int)b, MPI_BYTE, next, 7, dst, (int)b, MPI_BYTE, prev, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    *tsr = tmax(MPI_Wtime() - t) / iters;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
        place_touch(src, b, s);
        cp(dst, src, b);
    }
    *tmc = tmax(MPI_Wtime() - t) / iters;
}

static void place_row(const char *op, lpf_pid_t s, lpf_pid_t p, const char *tun, enum place pl,
                      size_t b, double put, double sr, double mc, int ok)
{
    if (s == 0)
        printf("{\"bench\":\"mpi\",\"what\":\"place\",\"op\":\"%s\",\"p\":%u,"
               "\"placement\":\"%s\",\"block_bytes\":%zu,\"rep_movsb_tunable\":\"%s\","
               "\"put_gbs\":%.3f,\"sendrecv_gbs\":%.3f,\"memcpy_gbs\":%.3f,"
               "\"ratio_to_sendrecv\":%.3f,\"ratio_to_memcpy\":%.3f,\"touch\":%s,\"correct\":%s}\n",
               op, p, place_name[pl], b, tun, b / put * 1e-9, b / sr * 1e-9, b / mc * 1e-9,
               sr / put, mc / put, O.touch ? "true" : "false", ok ? "true" : "false");
    fflush(stdout);
}

/* whether dst holds what process `from` put there (every byte from + 1) on
 * every rank */
static int place_ok(const char *dst, size_t b, lpf_pid_t from)
{
    int ok = 1;
    for (size_t i = 0; i < b; i += 61) ok &= dst[i] == (char)(from + 1);
    ok &= dst[b - 1] == (char)(from + 1);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* one API's bulk put for the sweep below: open registers the buffers (and
 * syncs), step puts b bytes from src to the next process's dst and syncs,
 * close deregisters */
struct place_api {
    const char *op;
    void (*open)(void *st, char *src, char *dst, size_t b);
    void (*step)(void *st, size_t b);
    void (*close)(void *st);
};

/* every placement and size: the put beside MPI_Sendrecv and memcpy */
static void place_sweep(const struct place_api *api, void *st, lpf_pid_t s, lpf_pid_t p)
{
    const char *tun = place_tunable();
    double *tl = malloc(O.reps * sizeof *tl), *ts = malloc(O.reps * sizeof *ts),
           *tc = malloc(O.reps * sizeof *tc);
    for (int pl = 0; pl < PL_N; ++pl) {
        for (size_t k = 0; k < sizeof place_sizes / sizeof *place_sizes; ++k) {
            const size_t b = place_sizes[k];
            const int iters = place_iters(b);
            void *bs, *bd;
            char *src = place_alloc((enum place)pl, 0, b, &bs),
                 *dst = place_alloc((enum place)pl, 1, b, &bd);
            memset(src, (int)s + 1, b);
            memset(dst, 0, b);
            api->open(st, src, dst, b);
            for (int w = 0; w < 2; ++w) api->step(st, b);
            int ok = place_ok(dst, b, (s + p - 1) % p);
            for (int r = 0; r < O.reps; ++r) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t = MPI_Wtime();
                for (int i = 0; i < iters; ++i) {
                    place_touch(src, b, s);
                    api->step(st, b);
                }
                tl[r] = tmax(MPI_Wtime() - t) / iters;
                place_refs(src, dst, b, s, p, iters, &ts[r], &tc[r]);
            }
            place_row(api->op, s, p, tun, (enum place)pl, b, median(tl, O.reps),
                      median(ts, O.reps), median(tc, O.reps), ok);
            api->close(st);
            free(bs);
            free(bd);
        }
    }
    free(tl);
    free(ts);
    free(tc);
}

struct lpf_place {
    lpf_t ctx;
    lpf_pid_t next;
    lpf_memslot_t ls, gd;
};

static void lpf_place_open(void *v, char *src, char *dst, size_t b)
{
    struct lpf_place *x = v;
    lpf_register_local(x->ctx, src, b, &x->ls);
    lpf_register_global(x->ctx, dst, b, &x->gd);
    lpf_sync(x->ctx, LPF_SYNC_DEFAULT);
}

static void lpf_place_step(void *v, size_t b)
{
    struct lpf_place *x = v;
    lpf_put(x->ctx, x->ls, 0, x->next, x->gd, 0, b, LPF_MSG_DEFAULT);
    lpf_sync(x->ctx, LPF_SYNC_DEFAULT);
}

static void lpf_place_close(void *v)
{
    struct lpf_place *x = v;
    lpf_deregister(x->ctx, x->ls);
    lpf_deregister(x->ctx, x->gd);
    lpf_sync(x->ctx, LPF_SYNC_DEFAULT);
}

static void bench_place(lpf_t ctx, lpf_pid_t s, lpf_pid_t p)
{
    static const struct place_api api = { "lpf_put", lpf_place_open, lpf_place_step,
        lpf_place_close };
    struct lpf_place x = { ctx, (s + 1) % p, LPF_INVALID_MEMSLOT, LPF_INVALID_MEMSLOT };
    setup(ctx, 2, 2);
    place_sweep(&api, &x, s, p);
}

static void bench_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    MPI_Bcast(&O, sizeof O, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (want("empty_sync")) bench_empty_sync(ctx, s, p);
    if (want("total_exchange")) bench_total_exchange(ctx, s, p);
    if (want("fine_puts")) bench_fine_puts(ctx, s, p, 0);
    if (want("fine_puts_adjacent")) bench_fine_puts(ctx, s, p, 1);
    if (want("place")) bench_place(ctx, s, p);
}

/* ------------------------------------------------------------------ */
#ifdef BENCH_HAVE_BSP
struct bsp_place {
    bsp_pid_t next;
    char *src, *dst;
};

static void bsp_place_open(void *v, char *src, char *dst, size_t b)
{
    struct bsp_place *x = v;
    x->src = src;
    x->dst = dst;
    bsp_push_reg(dst, (bsp_size_t)b);
    bsp_sync();
}

static void bsp_place_step(void *v, size_t b)
{
    struct bsp_place *x = v;
    bsp_put(x->next, x->src, x->dst, 0, (bsp_size_t)b);
    bsp_sync();
}

static void bsp_place_close(void *v)
{
    struct bsp_place *x = v;
    bsp_pop_reg(x->dst);
    bsp_sync();
}

static void bsp_bench(void)
{
    bsp_begin(bsp_nprocs());
    const bsp_pid_t p = bsp_nprocs(), s = bsp_pid(), to = (s + 1) % p;
    MPI_Bcast(&O, sizeof O, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (want("bsp_send")) {
        const size_t m = (size_t)1 << 20;
        uint64_t *pack = malloc(m * sizeof *pack), *unpack = malloc(m * sizeof *unpack);
        int *scnt = calloc(p, sizeof *scnt), *rcnt = calloc(p, sizeof *rcnt);
        int *sdsp = calloc(p, sizeof *sdsp), *rdsp = calloc(p, sizeof *rdsp);
        double *tl = malloc(O.reps * sizeof *tl), *tm = malloc(O.reps * sizeof *tm);
        uint64_t sum_l = 0, sum_m = 0;
        for (int r = -1; r < O.reps; ++r) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (size_t i = 0; i < m; ++i) {
                uint64_t v = i;
                bsp_send(to, NULL, &v, sizeof v);
            }
            bsp_sync();
            bsp_nprocs_t np = 0;
            bsp_qsize(&np, NULL);
            uint64_t acc = 0;
            for (bsp_nprocs_t i = 0; i < np; ++i) {
                uint64_t v;
                bsp_move(&v, sizeof v);
                acc += v;
            }
            double l = tmax(MPI_Wtime() - t);
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            for (bsp_pid_t k = 0; k < p; ++k) scnt[k] = 0;
            for (size_t i = 0; i < m; ++i) pack[i] = i;
            scnt[to] = (int)m;
            MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, MPI_COMM_WORLD);
            int tot = 0;
            for (bsp_pid_t k = 0; k < p; ++k) {
                rdsp[k] = tot;
                tot += rcnt[k];
            }
            MPI_Alltoallv(pack, scnt, sdsp, MPI_UINT64_T, unpack, rcnt, rdsp, MPI_UINT64_T, MPI_COMM_WORLD);
            uint64_t macc = 0;
            for (int i = 0; i < tot; ++i) macc += unpack[i];
            double mt = tmax(MPI_Wtime() - t);
            if (r < 0) {
                sum_l = acc;
                sum_m = macc;
                continue;
            }
            tl[r] = l;
            tm[r] = mt;
        }
        double l = median(tl, O.reps), mm = median(tm, O.reps);
        if (s == 0)
            printf("{\"bench\":\"mpi\",\"what\":\"bsp_send\",\"p\":%u,\"messages_per_process\":%zu,"
                   "\"payload_bytes\":8,\"bsp_msgs_per_s\":%.4g,\"mpi_packed_msgs_per_s\":%.4g,"
                   "\"bsp_ns_per_msg\":%.2f,\"ratio_bsp_over_packed_rate\":%.3f,\"same_sum\":%s}\n",
                    p, m, m / l, m / mm, l / m * 1e9, mm / l, sum_l == sum_m ? "true" : "false");
        fflush(stdout);
        free(pack);
        free(unpack);
        free(scnt);
        free(rcnt);
        free(sdsp);
        free(rdsp);
        free(tl);
        free(tm);
    }
    if (want("place") && p > 1) {
        static const struct place_api api = { "bsp_put", bsp_place_open, bsp_place_step,
            bsp_place_close };
        struct bsp_place x = { (bsp_pid_t)to, NULL, NULL };
        place_sweep(&api, &x, (lpf_pid_t)s, (lpf_pid_t)p);
    }
    if (want("direct_get") && p > 1) {
        /* pid 0 reads pid 1's registered area while pid 1 waits in the
         * next sync; MPI_Get in a passive-target epoch on the same memory,
         * and memcpy of the same bytes, in the same run */
        const size_t maxb = (size_t)1 << 20, sizes[] = { 8, 4096, 16384, 65536, 262144, (size_t)1 << 20 };
        char *area = malloc(maxb), *dst = malloc(maxb);
        memset(area, (int)s + 1, maxb);
        bsp_push_reg(area, maxb);
        bsp_sync();
        MPI_Win win;
        const int have_win = win_create(area, maxb, 1, &win);
        MPI_Win dwin;
        MPI_Aint *daddr = malloc(p * sizeof *daddr);
        const int have_dwin = win_dynamic(area, maxb, &dwin, daddr);
        double *tl = malloc(O.reps * sizeof *tl), *tm = malloc(O.reps * sizeof *tm);
        double *tc = malloc(O.reps * sizeof *tc), *td = malloc(O.reps * sizeof *td);
        const int hosts = world_hosts(), cma = direct_get_by_cma(hosts);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z) {
            const size_t b = sizes[z];
            const int k = b <= 4096 ? 2000 : b <= 65536 ? 500 : b <= 262144 ? 100 : 50;
            int good = 1;
            for (int r = -1; r < O.reps; ++r) {
                double l = 0, m = 0, c = 0, d = 0;
                bsp_sync();
                if (s == 0) {
                    double t = now();
                    for (int i = 0; i < k; ++i) bsp_direct_get(1, area, 0, dst, (bsp_size_t)b);
                    l = (now() - t) / k;
                    good = good && dst[0] == 2 && dst[b - 1] == 2;
                }
                bsp_sync();
                MPI_Barrier(MPI_COMM_WORLD);
                if (s == 0 && have_win) {
                    double t = now();
                    for (int i = 0; i < k; ++i) {
                        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                        MPI_Get(dst, (int)b, MPI_BYTE, 1, 0, (int)b, MPI_BYTE, win);
                        MPI_Win_unlock(1, win);
                    }
                    m = (now() - t) / k;
                }
                if (s == 0 && have_dwin) {
                    double t = now();
                    for (int i = 0; i < k; ++i) {
                        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, dwin);
                        MPI_Get(dst, (int)b, MPI_BYTE, 1, daddr[1], (int)b, MPI_BYTE, dwin);
                        MPI_Win_unlock(1, dwin);
                    }
                    d = (now() - t) / k;
                    good = good && dst[0] == 2 && dst[b - 1] == 2;
                }
                if (s == 0) {
                    double t = now();
                    for (int i = 0; i < k; ++i) {
                        memcpy(dst, area, b);
                        __asm__ __volatile__("" : : "r"(dst) : "memory");
                    }
                    c = (now() - t) / k;
                }
                MPI_Barrier(MPI_COMM_WORLD);
                if (r >= 0) {
                    tl[r] = l;
                    tm[r] = m;
                    tc[r] = c;
                    td[r] = d;
                }
            }
            if (s == 0) {
                const double l = median(tl, O.reps), m = median(tm, O.reps), c = median(tc, O.reps);
                const double d = median(td, O.reps);
                char mg[32] = "null", ratio[32] = "null", dg[32] = "null";
                if (have_win) {
                    snprintf(mg, sizeof mg, "%.3f", m * 1e6);
                    snprintf(ratio, sizeof ratio, "%.3f", m / l);
                }
                if (have_dwin) snprintf(dg, sizeof dg, "%.3f", d * 1e6);
                printf("{\"bench\":\"mpi\",\"what\":\"direct_get\",\"p\":%u,\"bytes\":%zu,"
                       "\"hosts\":%d,\"cma\":%s,\"bsp_direct_get_us\":%.3f,\"mpi_get_lock_us\":%s,"
                       "\"mpi_get_dynamic_us\":%s,\"memcpy_us\":%.3f,"
                       "\"ratio_mpi_get_over_bsp\":%s,\"correct\":%s}\n",
                       p, b, hosts, cma ? "true" : "false", l * 1e6, mg, dg, c * 1e6, ratio,
                       good ? "true" : "false");
                fflush(stdout);
            }
        }
        if (have_win) MPI_Win_free(&win);
        if (have_dwin) {
            MPI_Win_detach(dwin, area);
            MPI_Win_free(&dwin);
        }
        free(daddr);
        free(td);
        bsp_pop_reg(area);
        bsp_sync();
        free(area);
        free(dst);
        free(tl);
        free(tm);
        free(tc);
    }
    bsp_end();
}
#endif

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            snprintf(O.only, sizeof O.only, "%s", argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            O.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--touch") == 0)
            O.touch = 1;
    }
    if (O.reps < 1) O.reps = 1;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        fprintf(stderr, "bench_mpi: run it on the MPI engine: bsprun --engine mpi -n 2 %s\n", argv[0]);
        return 2;
    }
#ifdef BENCH_HAVE_BSP
    bsp_init(bsp_bench, argc, argv);
#endif
    lpf_args_t a = LPF_NO_ARGS;
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, bench_spmd, a);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "bench_mpi: lpf_exec failed (%d)\n", rc);
        return 1;
    }
#ifdef BENCH_HAVE_BSP
    if (want("bsp_send") || want("direct_get") || want("place")) bsp_bench();
#endif
    return 0;
}
