/*
 * bench_core: the LPF core's basic costs, each beside the machine's own
 * limit measured in the same run. Prints one JSON object per line.
 *
 *   sync_empty     empty lpf_sync (median and min of batch means) vs an
 *                  OpenMP barrier with the same number of threads
 *   put_coarse     total exchange, one put per destination, block b per
 *                  destination (64 B - 8 MiB), vs memcpy of (p-1)*b by one
 *                  thread alone (memcpy1) and by p threads at once
 *                  (memcpyp), measured right after it
 *   get_coarse     the same with lpf_get
 *   put_fine       total exchange of 8-byte puts, one put per word:
 *                  nanoseconds per put, issue to arrival
 *   put_one        a superstep with one 8-byte put per process (to the
 *                  next one) beside the empty sync, batches alternating in
 *                  the same run: the small superstep's cost as a ratio
 *   memcpy         the memcpy baseline itself
 *
 * Usage: bench_core [-p P] [--quick] [--only NAME] [--size BYTES]
 * (--size: the coarse exchanges of this block size only)
 * Run with OMP_WAIT_POLICY=active for the barrier baseline (bench/run_core.sh
 * does). Uses only public headers.
 */
#define _GNU_SOURCE
#include <lpf/core.h>

#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_baseline.h"

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i) if (v[i] < m) m = v[i];
    return m;
}

struct config {
    unsigned P;
    int quick;
    const char *only;
    size_t size;   /* coarse exchanges: only this block size (0: all) */
};

static struct config cfg = { 2, 0, NULL, 0 };

static int want(const char *name)
{
    return cfg.only == NULL || strcmp(cfg.only, name) == 0;
}

/* ------------------------------------------------------------------ */
/* Machine baselines                                                    */
/* ------------------------------------------------------------------ */

/* median seconds per OpenMP barrier, P threads */
static double omp_barrier_time(unsigned P, int batches, int per_batch, double *min_out)
{
    double *t = malloc(sizeof(double) * (size_t)batches);
    #pragma omp parallel num_threads((int)P)
    {
        for (int i = 0; i < 1000; ++i) {
            #pragma omp barrier
        }
        for (int b = 0; b < batches; ++b) {
            #pragma omp barrier
            double t0 = now();
            for (int i = 0; i < per_batch; ++i) {
                #pragma omp barrier
            }
            if (omp_get_thread_num() == 0) t[b] = (now() - t0) / per_batch;
        }
    }
    *min_out = minimum(t, batches);
    double m = median(t, batches);
    free(t);
    return m;
}

/* ------------------------------------------------------------------ */
/* LPF measurements                                                     */
/* ------------------------------------------------------------------ */

struct sync_result { double median, min; };

static void spmd_sync(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)p;
    struct sync_result *out = args.output;
    int batches = cfg.quick ? 20 : 200, per = cfg.quick ? 100 : 1000;
    if (p > 4) per /= 20;
    double *t = malloc(sizeof(double) * (size_t)batches);
    for (int i = 0; i < 1000; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (int b = 0; b < batches; ++b) {
        double t0 = now();
        for (int i = 0; i < per; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
        t[b] = (now() - t0) / per;
    }
    if (s == 0) {
        out->min = minimum(t, batches);
        out->median = median(t, batches);
    }
    free(t);
}

/* total exchange: block `b` bytes to every other process, by puts/gets of
 * `word` bytes (word == b: one request per destination) */
struct xchg_args {
    size_t b, word;
    int get;
    int reps;
    double seconds;   /* out: median seconds per superstep */
};

static void spmd_xchg(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    struct xchg_args *out = args.output;
    /* only pid 0 has the input: the others fetch it */
    struct xchg_args xa_local;
    if (s == 0) memcpy(&xa_local, args.input, sizeof xa_local);
    lpf_memslot_t xs;
    lpf_resize_memory_register(ctx, 3);
    lpf_resize_message_queue(ctx, 2 * p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, &xa_local, sizeof xa_local, &xs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s != 0) lpf_get(ctx, 0, xs, 0, xs, 0, sizeof xa_local, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_deregister(ctx, xs);
    const struct xchg_args *xa = &xa_local;
    const size_t b = xa->b, word = xa->word;
    const size_t nwords = b / word;
    char *src = malloc(b * p), *dst = malloc(b * p);
    memset(src, (int)s + 1, b * p);
    memset(dst, 0, b * p);
    lpf_memslot_t ss, ds;
    size_t nreq = (size_t)(p - 1) * nwords;
    lpf_resize_message_queue(ctx, 2 * nreq + 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, src, b * p, &ss);
    lpf_register_global(ctx, dst, b * p, &ds);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    /* peer k (k = 0..p-2) is (s+1+k) mod p; put: my block for it sits at
     * soff in src and lands at doff in its dst; get: the mirror image */
    lpf_pid_t *peer = malloc(sizeof *peer * p);
    size_t *soff = malloc(sizeof *soff * p), *doff = malloc(sizeof *doff * p);
    for (lpf_pid_t k = 0; k + 1 < p; ++k) {
        peer[k] = (s + 1 + k) % p;
        soff[k] = (size_t)peer[k] * b;
        doff[k] = (size_t)s * b;
    }
    double *t = malloc(sizeof(double) * (size_t)xa->reps);
    for (int r = -2; r < xa->reps; ++r) {
        double t0 = now();
        if (!xa->get) {
            /* round robin over destinations so every pair is busy; offsets
             * precomputed so the loop costs no more than the puts */
            for (size_t w = 0; w < nwords; ++w) {
                const size_t wo = w * word;
                for (lpf_pid_t k = 0; k + 1 < p; ++k)
                    lpf_put(ctx, ss, soff[k] + wo, peer[k], ds, doff[k] + wo, word,
                            LPF_MSG_DEFAULT);
            }
        } else {
            for (size_t w = 0; w < nwords; ++w) {
                const size_t wo = w * word;
                for (lpf_pid_t k = 0; k + 1 < p; ++k)
                    lpf_get(ctx, peer[k], ss, doff[k] + wo, ds, soff[k] + wo, word,
                            LPF_MSG_DEFAULT);
            }
        }
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (r >= 0) t[r] = now() - t0;
    }
    /* verify */
    int bad = 0;
    for (lpf_pid_t q = 0; q < p; ++q)
        if (q != s && (dst[q * b] != (char)(q + 1) || dst[q * b + b - 1] != (char)(q + 1))) bad = 1;
    if (bad) fprintf(stderr, "bench_core: wrong data at process %u\n", s);
    /* the slowest process defines the superstep: take pid 0's median after
     * a max-reduction by write conflict is overkill; each superstep ends
     * with a barrier, so all processes see nearly the same times */
    if (s == 0) out->seconds = median(t, xa->reps);
    lpf_deregister(ctx, ss);
    lpf_deregister(ctx, ds);
    free(t);
    free(peer);
    free(soff);
    free(doff);
    free(src);
    free(dst);
}

struct one_result { double empty, one; };

static void spmd_one(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    struct one_result *out = args.output;
    int batches = cfg.quick ? 20 : 200, per = cfg.quick ? 100 : 1000;
    if (p > 4) per /= 20;
    uint64_t v = s, in = 0;
    lpf_memslot_t vs, is;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &v, sizeof v, &vs);
    lpf_register_global(ctx, &in, sizeof in, &is);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    const lpf_pid_t next = (s + 1) % p;
    double *te = malloc(sizeof(double) * (size_t)batches);
    double *tp = malloc(sizeof(double) * (size_t)batches);
    for (int i = 0; i < 1000; ++i) {
        lpf_put(ctx, vs, 0, next, is, 0, sizeof v, LPF_MSG_DEFAULT);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
    }
    for (int b = 0; b < batches; ++b) {
        double t0 = now();
        for (int i = 0; i < per; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
        double t1 = now();
        for (int i = 0; i < per; ++i) {
            lpf_put(ctx, vs, 0, next, is, 0, sizeof v, LPF_MSG_DEFAULT);
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
        }
        te[b] = (t1 - t0) / per;
        tp[b] = (now() - t1) / per;
    }
    if (in != (s + p - 1) % p) fprintf(stderr, "bench_core: wrong data at process %u\n", s);
    if (s == 0) {
        out->empty = median(te, batches);
        out->one = median(tp, batches);
    }
    lpf_deregister(ctx, vs);
    lpf_deregister(ctx, is);
    free(te);
    free(tp);
}

static void measure_one(unsigned P)
{
    struct one_result r;
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &r;
    a.output_size = sizeof r;
    if (lpf_exec(LPF_ROOT, P, spmd_one, a) != LPF_SUCCESS) {
        fprintf(stderr, "lpf_exec failed\n");
        exit(1);
    }
    printf("{\"bench\":\"put_one\",\"engine\":\"pthread\",\"p\":%u,"
           "\"empty_sync_ns\":%.1f,\"one_put_superstep_ns\":%.1f,\"ratio_to_empty\":%.3f}\n",
           P, r.empty * 1e9, r.one * 1e9, r.one / r.empty);
    fflush(stdout);
}

static struct sync_result measure_sync(unsigned P)
{
    struct sync_result r;
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &r;
    a.output_size = sizeof r;
    if (lpf_exec(LPF_ROOT, P, spmd_sync, a) != LPF_SUCCESS) {
        fprintf(stderr, "lpf_exec failed\n");
        exit(1);
    }
    return r;
}

/* printed last: the OpenMP baseline leaves spinning threads behind */
static void print_sync(unsigned P, struct sync_result r)
{
    double omin, omed = omp_barrier_time(P, cfg.quick ? 20 : 200, P > 4 ? 50 : 1000, &omin);
    printf("{\"bench\":\"sync_empty\",\"engine\":\"pthread\",\"p\":%u,"
           "\"median_ns\":%.1f,\"min_ns\":%.1f,\"omp_barrier_median_ns\":%.1f,"
           "\"omp_barrier_min_ns\":%.1f,\"ratio_to_omp\":%.3f}\n",
           P, r.median * 1e9, r.min * 1e9, omed * 1e9, omin * 1e9, r.median / omed);
    fflush(stdout);
}

static double run_xchg(unsigned P, size_t b, size_t word, int get, int reps)
{
    struct xchg_args xa = { b, word, get, reps, 0 };
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &xa;
    a.input_size = sizeof xa;
    a.output = &xa;
    a.output_size = sizeof xa;
    if (lpf_exec(LPF_ROOT, P, spmd_xchg, a) != LPF_SUCCESS) {
        fprintf(stderr, "lpf_exec failed\n");
        exit(1);
    }
    return xa.seconds;
}

/* block sizes of the coarse exchanges: the small ones show the superstep's
 * fixed cost, 32 KiB - 8 MiB its bandwidth */
static const size_t coarse_sizes[] = { 64, 1024, 4096, (size_t)32 << 10, (size_t)64 << 10,
    (size_t)256 << 10, (size_t)1 << 20, (size_t)4 << 20, (size_t)8 << 20 };

static void print_coarse(unsigned P, int get)
{
    const char *name = get ? "get_coarse" : "put_coarse";
    const size_t hi = cfg.quick ? ((size_t)1 << 20) : ((size_t)8 << 20);
    for (size_t i = 0; i < sizeof coarse_sizes / sizeof *coarse_sizes; ++i) {
        const size_t b = coarse_sizes[i];
        if (b > hi) break;
        if (cfg.size && b != cfg.size) continue;
        int reps = b >= ((size_t)1 << 20) ? 30 : 200;
        if (cfg.quick) reps /= 5;
        double t = run_xchg(P, b, b, get, reps);
        /* every process receives (P-1) blocks of b: compare with one thread
         * copying (P-1)*b alone, and with P threads doing so at once */
        const double h = (double)b * (P - 1);
        double m1 = memcpy_time(1, b * (P - 1), reps);
        double mp = memcpy_time(P, b * (P - 1), reps);
        printf("{\"bench\":\"%s\",\"engine\":\"pthread\",\"p\":%u,\"block_bytes\":%zu,"
               "\"h_bytes\":%.0f,\"superstep_us\":%.3f,\"gbytes_per_s\":%.3f,"
               "\"memcpy1_us\":%.3f,\"memcpy1_gbytes_per_s\":%.3f,"
               "\"memcpyp_us\":%.3f,\"memcpyp_gbytes_per_s\":%.3f,"
               "\"ratio_to_memcpy1\":%.3f,\"ratio_to_memcpyp\":%.3f}\n",
               name, P, b, h, t * 1e6, h / t * 1e-9, m1 * 1e6, h / m1 * 1e-9,
               mp * 1e6, h / mp * 1e-9, m1 / t, mp / t);
        fflush(stdout);
    }
}

static void print_fine(unsigned P)
{
    size_t lo = 64, hi = cfg.quick ? ((size_t)1 << 18) : ((size_t)4 << 20);
    for (size_t b = lo; b <= hi; b *= 8) {
        int reps = b >= ((size_t)1 << 20) ? 10 : 50;
        double t = run_xchg(P, b, 8, 0, reps);
        double nputs = (double)(b / 8) * (P - 1);
        printf("{\"bench\":\"put_fine\",\"engine\":\"pthread\",\"p\":%u,\"word_bytes\":8,"
               "\"h_bytes\":%.0f,\"puts_per_process\":%.0f,\"superstep_us\":%.3f,"
               "\"ns_per_put\":%.3f}\n", P, nputs * 8, nputs, t * 1e6, t / nputs * 1e9);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc) cfg.P = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) cfg.quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) cfg.only = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) cfg.size = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: %s [-p P] [--quick] [--size BYTES] [--only sync_empty|put_coarse|get_coarse|put_fine|put_one]\n", argv[0]);
            return 2;
        }
    }
    if (cfg.P < 1) cfg.P = 1;
    /* let P exceed the core count (oversubscription is measured too) */
    setenv("LPF_MAX_PROCS", "1024", 0);
    struct sync_result sr = { 0, 0 };
    if (want("sync_empty")) sr = measure_sync(cfg.P);
    if (want("put_one")) measure_one(cfg.P);
    if (cfg.P > 1 && want("put_coarse")) print_coarse(cfg.P, 0);
    if (cfg.P > 1 && want("get_coarse")) print_coarse(cfg.P, 1);
    if (cfg.P > 1 && want("put_fine")) print_fine(cfg.P);
    if (want("sync_empty")) print_sync(cfg.P, sr);
    return 0;
}
