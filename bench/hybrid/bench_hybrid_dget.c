/*
 * bench_hybrid_dget -- bsp_direct_get between ranks of the hybrid engine
 * while the owner's rank waits for one of its threads (JSON lines on
 * stdout).
 *
 *   bsprun --engine hybrid -n 4 -t 2 bench_hybrid_dget [--reps R] [--ms M]
 *
 * Process 0 (rank 0) reads process 2 (thread 0 of rank 1, its leader)
 * for M ms (default 200), in two settings, batch by batch:
 *   owner_syncs      every other process waits in the next sync: rank 1's
 *                    leader waits in the MPI engine's sync
 *   thread_computes  process 3 (rank 1's other thread) computes meanwhile
 *                    (a busy loop of M + 100 ms): rank 1's leader waits
 *                    for it, and answers other ranks' direct gets from
 *                    that wait
 * Sizes 8 B and 64 KiB; the median over R batches of the time per read.
 * On other engines or shapes it runs the same reads (process 3 may then
 * be on another rank).
 */
#define _POSIX_C_SOURCE 200809L
#include <bsp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

static int reps = 5;
static int ms = 200;


static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    const bsp_pid_t p = bsp_nprocs(), s = bsp_pid();
    if (p < 4) {
        if (s == 0) fprintf(stderr, "bench_hybrid_dget: needs 4 processes (-n 4 -t 2)\n");
        bsp_end();
        return;
    }
    /* the options reach the other processes from process 0 (on MPI only
     * rank 0 reads the command line) */
    int opt[2] = { reps, ms };
    bsp_push_reg(opt, sizeof opt);
    bsp_sync();
    if (s == 0)
        for (bsp_pid_t q = 1; q < p; ++q) bsp_put(q, opt, opt, 0, sizeof opt);
    bsp_sync();
    bsp_pop_reg(opt);
    const int nrep = opt[0], dur = opt[1];
    const size_t maxb = 65536, sizes[] = { 8, 65536 };
    char *area = malloc(maxb), *dst = malloc(maxb);
    memset(area, (int)s + 1, maxb);
    bsp_push_reg(area, (bsp_size_t)maxb);
    bsp_sync();
    double *t[2] = { malloc(nrep * sizeof(double)), malloc(nrep * sizeof(double)) };
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z) {
        const size_t b = sizes[z];
        int good = 1;
        for (int r = -1; r < nrep; ++r) {
            for (int mode = 0; mode < 2; ++mode) {
                bsp_sync();
                if (s == 0) {
                    long n = 0;
                    const double t0 = now_s(), end = t0 + dur * 1e-3;
                    double t1;
                    do {
                        bsp_direct_get(2, area, 0, dst, (bsp_size_t)b);
                        n++;
                        t1 = now_s();
                    } while (t1 < end);
                    good = good && dst[0] == 3 && dst[b - 1] == 3;
                    if (r >= 0) t[mode][r] = (t1 - t0) / (double)n;
                } else if (s == 3 && mode == 1) {
                    volatile unsigned long x = 0;
                    const double end = now_s() + (dur + 100) * 1e-3;
                    while (now_s() < end)
                        for (int i = 0; i < 1000; ++i) x += (unsigned long)i;
                }
            }
        }
        if (s == 0) {
            const char *engine = getenv("SUPERSTEP_ENGINE");
            printf("{\"bench\":\"hybrid_dget\",\"engine\":\"%s\",\"p\":%u,\"bytes\":%zu,"
                   "\"owner_syncs_us\":%.3f,\"thread_computes_us\":%.3f,\"correct\":%s}\n",
                    engine && *engine ? engine : "pthread", p, b, median(t[0], nrep) * 1e6,
                    median(t[1], nrep) * 1e6, good ? "true" : "false");
            fflush(stdout);
        }
    }
    bsp_pop_reg(area);
    bsp_sync();
    free(area);
    free(dst);
    free(t[0]);
    free(t[1]);
    bsp_end();
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) ms = atoi(argv[++i]);
    }
    if (reps < 1) reps = 1;
    if (ms < 1) ms = 1;
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
