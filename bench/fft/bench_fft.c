/*
 * bench_fft: the BSP FFT (forward, cyclic distribution, FFTW local kernels)
 * against FFTW on the whole vector with 1 thread and with T threads
 * (fftw3_threads; T = P by default), for n = 2^min .. 2^max. One JSON
 * object per line and size:
 *   {"bench":"fft","n":..,"p":..,"threads":..,"planner":"measure","samples":..,
 *    "t_fftw1":..,"t_fftw_threads":..,"t_bsp":..,"speedup_bsp":t_fftw1/t_bsp,
 *    "bsp_vs_fftw_threads":t_fftw_threads/t_bsp,"gflops_bsp":..,
 *    "gflops_fftw_threads":..,"supersteps":..}
 * Times are medians (seconds per transform; min_*: the fastest sample);
 * Gflop/s counts 5 n log2 n.
 * FFTW baselines are out-of-place (their faster mode); the BSP FFT is in
 * place on its local part, timed at pid 0 from a common start (a sync) to
 * the end of a sync after the transform. Planning is untimed. The three
 * codes are measured in turns (rounds; plans are made again, from FFTW's
 * wisdom), so that a change in the machine's load affects them alike.
 * Usage: bench_fft [-p P] [-t THREADS] [-min LOG2] [-max LOG2] [-rounds R]
 *                  [-estimate] [-generic] [-buffered] [-nofuse] [-push] [-pull] [-fpull] [-rows]
 *                  [-copy] [-profile] [-wisdom FILE] [-huge]
 * -copy: the codes that read the others' buffers copy them with
 * bsp_direct_get on the pthread engine too (BSPFFT_COPY_REMOTE; "variant"
 * gets "+copy"); by default they read them in place there.
 * -wisdom FILE imports FFTW wisdom from FILE (when it exists) and exports
 * it there at the end: later runs skip the long FFTW_MEASURE planning of
 * the large sizes, and runs that share the file use the same FFTW plans
 * (less spread between runs that compare two builds).
 * -huge advises huge pages for the FFTW baselines' arrays and the BSP
 * code's x too (the BSP FFT's own big buffers always get them; with THP in
 * "madvise" mode nothing else does): like for like.
 * -profile adds "phases_max": the largest over the processes of the seconds
 * per transform in the local passes before the redistribution, the
 * redistribution (puts + sync, which includes waiting for the slowest), the
 * twiddle/unpack, and the local passes after it.
 */
#include "bspfft.h"
#include "inprod.h"

#include <app_util.h>
#include <bsp.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSIZES 40

static int huge_all;   /* -huge */

typedef struct config {
    unsigned P, flags;
    int threads, lo, hi, rounds, round;
    double *t_bsp[MAXSIZES];   /* rounds * reps samples per size; NULL: unsupported */
    int L[MAXSIZES];
    const char *code[MAXSIZES];   /* bspfft_code: the code that ran */
    double prof[MAXSIZES][4];  /* with -profile: the slowest process's seconds per transform and phase */
} config;

static _Thread_local config *cfg_current;

/* samples per round: about 2^26 / n in all (21 .. 601), spread over the rounds */
static int reps_for(size_t n, int rounds)
{
    size_t r = ((size_t)1 << 26) / n;
    r = r < 21 ? 21 : r > 601 ? 601 : r;
    r = (r + (size_t)rounds - 1) / (size_t)rounds;
    return r < 3 ? 3 : (int)r;
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i) m = v[i] < m ? v[i] : m;
    return m;
}

static void fill(double *x, size_t first, size_t stride, size_t count)
{
    for (size_t t = 0; t < count; ++t) {
        uint64_t st = (first + stride * t) * 2;
        x[2 * t] = app_rand01(&st) - 0.5;
        x[2 * t + 1] = app_rand01(&st) - 0.5;
    }
}

static void bsp_part(void)
{
    config *c = cfg_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    if (s != 0) c = NULL;
    int par[4] = { c ? c->lo : 0, c ? c->hi : 0, c ? (int)c->flags : 0, c ? c->rounds : 1 };
    app_broadcast(par, sizeof par);
    for (int lg = par[0]; lg <= par[1]; ++lg) {
        const size_t n = (size_t)1 << lg, N = n / p;
        bspfft_plan *pl = bspfft_plan_create(n, (unsigned)par[2] | BSPFFT_FORWARD_ONLY);
        if (!pl) {
            if (c) c->L[lg] = 0;
            continue;
        }
        /* cache-line aligned (FFTW's alignment is 32 bytes): the two-pass
         * code streams its output to whole lines of x */
        double *x = NULL;
        if (posix_memalign((void **)&x, 64, 2 * N * sizeof *x) != 0) bsp_abort("out of memory\n");
        if (huge_all) app_huge_advise(x, 2 * N * sizeof *x);
        fill(x, s, p, N);   /* cyclic: x[t] = global s + p t */
        const int reps = reps_for(n, par[3]);
        double *t = malloc((size_t)reps * sizeof *t);
        for (int r = -2; r < reps; ++r) {
            bsp_sync();
            const double t0 = bsp_time();
            bspfft_execute(pl, x, -1);
            bsp_sync();
            if (r >= 0) t[r] = bsp_time() - t0;
        }
        if (c) {
            memcpy(c->t_bsp[lg] + (size_t)c->round * reps, t, (size_t)reps * sizeof *t);
            c->L[lg] = bspfft_passes(n, p);
            c->code[lg] = bspfft_code(pl);   /* a string literal: outlives the plan */
        }
        if ((unsigned)par[2] & BSPFFT_PROFILE) {
            /* the slowest process's time in each phase */
            double ph[4], all[4 * 64];
            bspfft_profile(pl, ph);
            bsp_push_reg(all, sizeof all);
            bsp_sync();
            if (s < 64) bsp_put(0, ph, all, 4 * s * sizeof(double), sizeof ph);
            bsp_sync();
            bsp_pop_reg(all);
            if (c)
                for (int i = 0; i < 4; ++i) {
                    double mx = 0;
                    for (unsigned q = 0; q < p && q < 64; ++q) mx = all[4 * q + i] > mx ? all[4 * q + i] : mx;
                    c->prof[lg][i] = mx / (reps + 2);
                }
        }
        free(t);
        free(x);
        bspfft_plan_destroy(pl);
    }
    bsp_end();
}

static void time_fftw(size_t n, int threads, unsigned planner, int reps, double *t)
{
    fftw_plan_with_nthreads(threads);
    fftw_complex *in = fftw_malloc(n * sizeof *in), *out = fftw_malloc(n * sizeof *out);
    if (huge_all) {
        app_huge_advise(in, n * sizeof *in);
        app_huge_advise(out, n * sizeof *out);
    }
    fftw_plan pl = fftw_plan_dft_1d((int)n, in, out, FFTW_FORWARD, planner);
    fill((double *)in, 0, 1, n);
    for (int r = -2; r < reps; ++r) {
        double t0 = app_now();
        fftw_execute(pl);
        if (r >= 0) t[r] = app_now() - t0;
    }
    fftw_destroy_plan(pl);
    fftw_free(in);
    fftw_free(out);
    fftw_plan_with_nthreads(1);
}

int main(int argc, char **argv)
{
    config c;
    memset(&c, 0, sizeof c);
    c.P = 2;
    c.threads = 0;
    c.lo = 16;
    c.hi = 24;
    c.rounds = 8;
    c.flags = BSPFFT_MEASURE;
    const char *wisdom = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (strcmp(a, "-p") == 0) { c.P = (unsigned)atoi(v); ++i; }
        else if (strcmp(a, "-t") == 0) { c.threads = atoi(v); ++i; }
        else if (strcmp(a, "-min") == 0) { c.lo = atoi(v); ++i; }
        else if (strcmp(a, "-max") == 0) { c.hi = atoi(v); ++i; }
        else if (strcmp(a, "-rounds") == 0) { c.rounds = atoi(v); ++i; }
        else if (strcmp(a, "-estimate") == 0) c.flags &= ~(unsigned)BSPFFT_MEASURE;
        else if (strcmp(a, "-generic") == 0) c.flags |= BSPFFT_GENERIC;
        else if (strcmp(a, "-buffered") == 0) c.flags |= BSPFFT_BUFFERED;
        else if (strcmp(a, "-profile") == 0) c.flags |= BSPFFT_PROFILE;
        else if (strcmp(a, "-nofuse") == 0) c.flags |= BSPFFT_NOFUSE;
        else if (strcmp(a, "-push") == 0) c.flags |= BSPFFT_PUSH;
        else if (strcmp(a, "-huge") == 0) huge_all = 1;
        else if (strcmp(a, "-pull") == 0) c.flags |= BSPFFT_PULL;
        else if (strcmp(a, "-fpull") == 0) c.flags |= BSPFFT_FUSED_PULL;
        else if (strcmp(a, "-rows") == 0) c.flags |= BSPFFT_ROWS;
        else if (strcmp(a, "-copy") == 0) c.flags |= BSPFFT_COPY_REMOTE;
        else if (strcmp(a, "-wisdom") == 0) { wisdom = v; ++i; }
        else {
            fprintf(stderr, "usage: %s [-p P] [-t THREADS] [-min LOG2] [-max LOG2] [-rounds R] "
                            "[-estimate] [-generic] [-buffered] [-nofuse] [-push] [-pull] [-fpull] [-rows] [-copy] "
                            "[-profile] [-wisdom FILE] [-huge]\n", argv[0]);
            return 2;
        }
    }
    if (c.lo < 2 || c.hi >= MAXSIZES || c.lo > c.hi || c.P == 0 || c.rounds < 1) return 2;
    if (c.threads <= 0) c.threads = (int)c.P;
    if (!fftw_init_threads()) return 1;
    fftw_plan_with_nthreads(1);
    if (wisdom) fftw_import_wisdom_from_filename(wisdom);   /* a missing file is no error */
    const unsigned planner = (c.flags & BSPFFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE;
    double *t_1[MAXSIZES], *t_t[MAXSIZES];
    for (int lg = c.lo; lg <= c.hi; ++lg) {
        const size_t k = (size_t)c.rounds * reps_for((size_t)1 << lg, c.rounds);
        c.t_bsp[lg] = malloc(k * sizeof(double));
        t_1[lg] = malloc(k * sizeof(double));
        t_t[lg] = malloc(k * sizeof(double));
        if (!c.t_bsp[lg] || !t_1[lg] || !t_t[lg]) return 1;
    }
    for (c.round = 0; c.round < c.rounds; ++c.round) {
        cfg_current = &c;
        bsp_init(bsp_part, argc, argv);
        bsp_part();
        cfg_current = NULL;
        for (int lg = c.lo; lg <= c.hi; ++lg) {
            const size_t n = (size_t)1 << lg;
            const int reps = reps_for(n, c.rounds);
            time_fftw(n, 1, planner, reps, t_1[lg] + (size_t)c.round * reps);
            time_fftw(n, c.threads, planner, reps, t_t[lg] + (size_t)c.round * reps);
        }
    }
    for (int lg = c.lo; lg <= c.hi; ++lg) {
        const size_t n = (size_t)1 << lg;
        const int k = c.rounds * reps_for(n, c.rounds);
        if (c.L[lg] == 0) {
            printf("{\"bench\":\"fft\",\"n\":%zu,\"p\":%u,\"unsupported\":true}\n", n, c.P);
            continue;
        }
        const double m1 = minimum(t_1[lg], k), mt = minimum(t_t[lg], k), mb = minimum(c.t_bsp[lg], k);
        const double t1 = app_median(t_1[lg], k), tt = app_median(t_t[lg], k);
        const double tb = app_median(c.t_bsp[lg], k), flops = 5.0 * (double)n * (double)lg;
        printf("{\"bench\":\"fft\",\"n\":%zu,\"p\":%u,\"threads\":%d,\"planner\":\"%s\",\"variant\":\"%s%s\","
               "\"huge_all\":%d,\"samples\":%d,\"t_fftw1\":%.4e,\"t_fftw_threads\":%.4e,\"t_bsp\":%.4e,"
               "\"speedup_bsp\":%.3f,\"speedup_fftw_threads\":%.3f,\"bsp_vs_fftw_threads\":%.3f,"
               "\"gflops_bsp\":%.2f,\"gflops_fftw_threads\":%.2f,\"supersteps\":%d,"
               "\"min_fftw1\":%.4e,\"min_fftw_threads\":%.4e,\"min_bsp\":%.4e,\"min_bsp_vs_fftw_threads\":%.3f",
               n, c.P, c.threads, planner == FFTW_MEASURE ? "measure" : "estimate",
               c.code[lg], (c.flags & BSPFFT_COPY_REMOTE) ? "+copy" : "",
               huge_all, k, t1, tt, tb, t1 / tb, t1 / tt, tt / tb, flops / tb * 1e-9, flops / tt * 1e-9,
               c.L[lg] - 1, m1, mt, mb, mt / mb);
        if (c.flags & BSPFFT_PROFILE)
            printf(",\"phases_max\":[%.3e,%.3e,%.3e,%.3e]", c.prof[lg][0], c.prof[lg][1],
                   c.prof[lg][2], c.prof[lg][3]);
        printf("}\n");
        fflush(stdout);
        free(c.t_bsp[lg]);
        free(t_1[lg]);
        free(t_t[lg]);
    }
    if (wisdom && !fftw_export_wisdom_to_filename(wisdom))
        fprintf(stderr, "bench_fft: cannot write wisdom to %s\n", wisdom);
    fftw_cleanup_threads();
    return 0;
}
