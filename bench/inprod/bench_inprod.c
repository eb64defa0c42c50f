/*
 * bench_inprod: the BSP inner product (Algorithm 2) on block-distributed
 * vectors against the sequential loop and an OpenMP loop running the same
 * kernel (eight partial sums) on the same number of threads. One JSON
 * object per line and size:
 *   {"bench":"inprod","n":..,"p":..,"samples":..,"t_seq":..,"t_omp":..,
 *    "t_bsp":..,"speedup_bsp":t_seq/t_bsp,"speedup_omp":t_seq/t_omp,
 *    "bsp_vs_omp":t_omp/t_bsp,"gflops_bsp":..}
 * Times are medians in seconds of one inner product (min_*: the fastest sample); t_bsp is measured at
 * pid 0 from a common start (a sync) to the end of Algorithm 2's sync.
 * Every process first-touches its own block (data generation is untimed).
 * The three codes are measured in turns (rounds) so that a change in the
 * machine's load affects them alike; medians are over all rounds.
 * Usage: bench_inprod [-p P] [-min LOG2] [-max LOG2] [-rounds R]   (default 2, 16, 25, 3)
 */
#include "inprod.h"

#include <app_util.h>
#include <bsp.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSIZES 40

typedef struct config {
    unsigned P;
    int lo, hi, rounds, round;
    double *t_bsp[MAXSIZES];   /* rounds * reps samples per size */
} config;

static _Thread_local config *cfg_current;

static int reps_for(size_t n)
{
    size_t r = ((size_t)1 << 27) / n;
    return r < 15 ? 15 : r > 2001 ? 2001 : (int)r;
}

static double value(size_t i, int which)
{
    /* cheap, reproducible, independent of the distribution */
    uint64_t st = (uint64_t)i * 2 + (uint64_t)which;
    return app_rand01(&st) - 0.5;
}

static void bsp_part(void)
{
    config *c = cfg_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    if (s != 0) c = NULL;
    int range[2] = { c ? c->lo : 0, c ? c->hi : 0 };
    app_broadcast(range, sizeof range);
    ip_reducer red;
    if (ip_reducer_init(&red, 1) != 0) bsp_abort("out of memory\n");
    bsp_sync();
    for (int lg = range[0]; lg <= range[1]; ++lg) {
        const size_t n = (size_t)1 << lg, lo = app_block_start(n, p, s);
        const size_t np = app_block_start(n, p, s + 1) - lo;
        double *x = malloc(np * sizeof *x), *y = malloc(np * sizeof *y);
        if (!x || !y) bsp_abort("out of memory\n");
        for (size_t i = 0; i < np; ++i) {
            x[i] = value(lo + i, 0);
            y[i] = value(lo + i, 1);
        }
        const int reps = reps_for(n);
        double *t = malloc((size_t)reps * sizeof *t), sink = 0;
        for (int r = -2; r < reps; ++r) {   /* two warm-up rounds */
            bsp_sync();
            const double t0 = bsp_time();
            sink += ip_spmd(x, y, np, &red);
            if (r >= 0) t[r] = bsp_time() - t0;
        }
        if (c) memcpy(c->t_bsp[lg] + (size_t)c->round * reps, t, (size_t)reps * sizeof *t);
        if (sink == 12345.678) printf("#");   /* keep the result alive */
        free(t);
        free(x);
        free(y);
    }
    ip_reducer_free(&red);
    bsp_end();
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i) m = v[i] < m ? v[i] : m;
    return m;
}

static double omp_ip(const double *x, const double *y, size_t n)
{
    double s = 0;
#pragma omp parallel reduction(+ : s)
    {
        const unsigned nt = (unsigned)omp_get_num_threads(), t = (unsigned)omp_get_thread_num();
        const size_t lo = app_block_start(n, nt, t), hi = app_block_start(n, nt, t + 1);
        s += ip_seq(x + lo, y + lo, hi - lo);
    }
    return s;
}

int main(int argc, char **argv)
{
    config c;
    memset(&c, 0, sizeof c);
    c.P = 2;
    c.lo = 16;
    c.hi = 25;
    c.rounds = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-p") == 0) c.P = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-min") == 0) c.lo = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-max") == 0) c.hi = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-rounds") == 0) c.rounds = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [-p P] [-min LOG2] [-max LOG2] [-rounds R]\n", argv[0]);
            return 2;
        }
    }
    if (c.lo < 4 || c.hi >= MAXSIZES || c.lo > c.hi || c.P == 0 || c.rounds < 1) return 2;
    omp_set_num_threads((int)c.P);
    double *t_seq[MAXSIZES], *t_omp[MAXSIZES];
    for (int lg = c.lo; lg <= c.hi; ++lg) {
        const size_t k = (size_t)c.rounds * reps_for((size_t)1 << lg);
        c.t_bsp[lg] = malloc(k * sizeof(double));
        t_seq[lg] = malloc(k * sizeof(double));
        t_omp[lg] = malloc(k * sizeof(double));
        if (!c.t_bsp[lg] || !t_seq[lg] || !t_omp[lg]) return 1;
    }
    for (c.round = 0; c.round < c.rounds; ++c.round) {
        /* BSP (its threads are gone before OpenMP's team works) */
        cfg_current = &c;
        bsp_init(bsp_part, argc, argv);
        bsp_part();
        cfg_current = NULL;
        for (int lg = c.lo; lg <= c.hi; ++lg) {
            const size_t n = (size_t)1 << lg;
            double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
            if (!x || !y) return 1;
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n; ++i) {   /* first touch by the team, as the loop reads it */
                x[i] = value(i, 0);
                y[i] = value(i, 1);
            }
            const int reps = reps_for(n);
            double *ts = t_seq[lg] + (size_t)c.round * reps, *to = t_omp[lg] + (size_t)c.round * reps;
            double sink = 0;
            for (int r = -2; r < reps; ++r) {
                double t0 = app_now();
                sink += ip_seq(x, y, n);
                double t1 = app_now();
                sink += omp_ip(x, y, n);
                double t2 = app_now();
                if (r >= 0) {
                    ts[r] = t1 - t0;
                    to[r] = t2 - t1;
                }
            }
            if (sink == 12345.678) printf("#");
            free(x);
            free(y);
        }
    }
    for (int lg = c.lo; lg <= c.hi; ++lg) {
        const size_t n = (size_t)1 << lg;
        const int reps = reps_for(n), k = c.rounds * reps;
        const double ms = minimum(t_seq[lg], k), mo = minimum(t_omp[lg], k), mb = minimum(c.t_bsp[lg], k);
        const double ts = app_median(t_seq[lg], k), to = app_median(t_omp[lg], k);
        const double tb = app_median(c.t_bsp[lg], k);
        printf("{\"bench\":\"inprod\",\"n\":%zu,\"p\":%u,\"samples\":%d,\"t_seq\":%.4e,\"t_omp\":%.4e,"
               "\"t_bsp\":%.4e,\"speedup_bsp\":%.3f,\"speedup_omp\":%.3f,\"bsp_vs_omp\":%.3f,"
               "\"gflops_bsp\":%.3f,\"min_seq\":%.4e,\"min_omp\":%.4e,\"min_bsp\":%.4e}\n",
               n, c.P, k, ts, to, tb, ts / tb, ts / to, to / tb, 2.0 * (double)n / tb * 1e-9, ms, mo, mb);
        free(c.t_bsp[lg]);
        free(t_seq[lg]);
        free(t_omp[lg]);
    }
    return 0;
}
