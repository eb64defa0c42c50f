/*
 * bench_bsplib: BSPlib (<bsp.h>) costs beside the machine's limits measured
 * in the same run. One JSON object per line:
 *
 *   memcpy        P threads each copying b bytes concurrently (the limit)
 *   sync_empty    empty bsp_sync vs empty lpf_sync (interleaved rounds)
 *   put_coarse    bsp_put of a block of b bytes to every other process,
 *                 one superstep; beside lpf_put of the same (ratio_to_lpf:
 *                 time over lpf's), memcpy of (P-1)*b by one thread alone
 *                 (memcpy1) and by P threads at once (memcpyp)
 *   hpput_coarse  the same with bsp_hpput
 *   get_coarse    the same with bsp_get
 *   put_fine      8-byte bsp_puts (one per word) vs 8-byte lpf_puts:
 *                 nanoseconds per put, issue to arrival
 *   send_move     bsp_send of 8-byte payloads to every other process,
 *                 bsp_sync, bsp_move of all of them: messages per second
 *                 per process (sent + received once each)
 *   send_hpmove   the same with bsp_hpmove
 *
 * Usage: bench_bsplib [-p P] [--quick] [--only NAME] [--size BYTES]
 * (--size: the coarse exchanges of this block size only)
 * Public headers only.
 */
#define _GNU_SOURCE
#include <bsp.h>
#include <lpf/core.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/bench_baseline.h"

static unsigned P = 2;
static int quick;
static const char *only;
static size_t only_size;   /* coarse exchanges: only this block size (0: all) */

static int want(const char *name)
{
    return only == NULL || strcmp(only, name) == 0;
}

/* ------------------------------------------------------------------ */
/* empty syncs                                                          */
/* ------------------------------------------------------------------ */

enum { BATCHES = 40, PER_BATCH = 1000 };
static double sync_t[BATCHES];   /* written by pid 0 */

static void lpf_sync_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)p;
    (void)args;
    for (int i = 0; i < 1000; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (int b = 0; b < BATCHES; ++b) {
        double t0 = now();
        for (int i = 0; i < PER_BATCH; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (s == 0) sync_t[b] = (now() - t0) / PER_BATCH;
    }
}

static void bsp_sync_spmd(void)
{
    bsp_begin(P);
    for (int i = 0; i < 1000; ++i) bsp_sync();
    for (int b = 0; b < BATCHES; ++b) {
        double t0 = now();
        for (int i = 0; i < PER_BATCH; ++i) bsp_sync();
        if (bsp_pid() == 0) sync_t[b] = (now() - t0) / PER_BATCH;
    }
    bsp_end();
}

static void bench_sync(void)
{
    int rounds = quick ? 3 : 10;
    double *lt = malloc(sizeof(double) * BATCHES * (size_t)rounds);
    double *bt = malloc(sizeof(double) * BATCHES * (size_t)rounds);
    for (int r = 0; r < rounds; ++r) {
        lpf_exec(LPF_ROOT, P, lpf_sync_spmd, LPF_NO_ARGS);
        memcpy(lt + r * BATCHES, sync_t, sizeof sync_t);
        bsp_init(bsp_sync_spmd, 0, NULL);
        bsp_sync_spmd();
        memcpy(bt + r * BATCHES, sync_t, sizeof sync_t);
    }
    double lm = median(lt, BATCHES * rounds), bm = median(bt, BATCHES * rounds);
    printf("{\"bench\":\"sync_empty\",\"engine\":\"pthread\",\"p\":%u,\"bsp_sync_ns\":%.1f,"
           "\"lpf_sync_ns\":%.1f,\"ratio_to_lpf_sync\":%.3f,\"bsp_sync_min_ns\":%.1f,"
           "\"lpf_sync_min_ns\":%.1f}\n", P, bm * 1e9, lm * 1e9, bm / lm, bt[0] * 1e9, lt[0] * 1e9);
    fflush(stdout);
    free(lt);
    free(bt);
}

/* ------------------------------------------------------------------ */
/* DRMA and BSMP exchanges (one bsp run per measurement)                */
/* ------------------------------------------------------------------ */

enum op { OP_PUT, OP_HPPUT, OP_GET, OP_SEND_MOVE, OP_SEND_HPMOVE };

static struct {
    enum op op;
    size_t b;        /* bytes per destination */
    size_t word;     /* bytes per request */
    int reps;
    double seconds;  /* out: median seconds per superstep */
    int bad;
} X;

static void xchg_spmd(void)
{
    bsp_begin(P);
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    const size_t b = X.b, word = X.word, nwords = b / word;
    char *src = malloc(b * p), *dst = malloc(b * p);
    memset(src, (int)s + 1, b * p);
    memset(dst, 0, b * p);
    bsp_push_reg(src, b * p);
    bsp_push_reg(dst, b * p);
    bsp_sync();
    unsigned *peer = malloc(sizeof *peer * p);
    size_t *soff = malloc(sizeof *soff * p), *doff = malloc(sizeof *doff * p);
    for (unsigned k = 0; k + 1 < p; ++k) {
        peer[k] = (s + 1 + k) % p;
        soff[k] = (size_t)peer[k] * b;
        doff[k] = (size_t)s * b;
    }
    double *t = malloc(sizeof(double) * (size_t)X.reps);
    long sum = 0;
    for (int r = -2; r < X.reps; ++r) {
        double t0 = now();
        switch (X.op) {
        case OP_PUT:
            for (size_t w = 0; w < nwords; ++w)
                for (unsigned k = 0; k + 1 < p; ++k)
                    bsp_put(peer[k], src + soff[k] + w * word, dst, doff[k] + w * word, word);
            bsp_sync();
            break;
        case OP_HPPUT:
            for (size_t w = 0; w < nwords; ++w)
                for (unsigned k = 0; k + 1 < p; ++k)
                    bsp_hpput(peer[k], src + soff[k] + w * word, dst, doff[k] + w * word, word);
            bsp_sync();
            break;
        case OP_GET:
            for (size_t w = 0; w < nwords; ++w)
                for (unsigned k = 0; k + 1 < p; ++k)
                    bsp_get(peer[k], src, doff[k] + w * word, dst + soff[k] + w * word, word);
            bsp_sync();
            break;
        case OP_SEND_MOVE:
        case OP_SEND_HPMOVE: {
            for (size_t w = 0; w < nwords; ++w)
                for (unsigned k = 0; k + 1 < p; ++k)
                    bsp_send(peer[k], NULL, src + soff[k] + w * word, word);
            bsp_sync();
            bsp_nprocs_t n;
            bsp_qsize(&n, NULL);
            if (X.op == OP_SEND_MOVE) {
                uint64_t v;
                for (bsp_nprocs_t i = 0; i < n; ++i) {
                    bsp_move(&v, sizeof v);
                    sum += (long)(v & 0xff);
                }
            } else {
                void *tag, *pl;
                for (bsp_nprocs_t i = 0; i < n; ++i) {
                    bsp_hpmove(&tag, &pl);
                    sum += *(const unsigned char *)pl;
                }
            }
            break;
        }
        }
        if (r >= 0) t[r] = now() - t0;
    }
    /* verify */
    int bad = 0;
    if (X.op == OP_SEND_MOVE || X.op == OP_SEND_HPMOVE) {
        long want = 0;
        for (unsigned q = 0; q < p; ++q) if (q != s) want += (long)(q + 1) * (long)nwords;
        if (sum != want * (X.reps + 2)) bad = 1;
    } else {
        for (unsigned q = 0; q < p; ++q) {
            if (q == s) continue;
            char want = X.op == OP_GET ? (char)(q + 1) : (char)(q + 1);
            size_t at = X.op == OP_GET ? (size_t)q * b : (size_t)q * b;
            if (dst[at] != want || dst[at + b - 1] != want) bad = 1;
        }
    }
    if (bad) __atomic_store_n(&X.bad, 1, __ATOMIC_RELAXED);
    if (s == 0) X.seconds = median(t, X.reps);
    bsp_pop_reg(dst);
    bsp_pop_reg(src);
    bsp_sync();
    free(t);
    free(peer);
    free(soff);
    free(doff);
    free(src);
    free(dst);
    bsp_end();
}

static double run_xchg(enum op op, size_t b, size_t word, int reps)
{
    X.op = op;
    X.b = b;
    X.word = word;
    X.reps = reps;
    X.bad = 0;
    bsp_init(xchg_spmd, 0, NULL);
    xchg_spmd();
    if (X.bad) fprintf(stderr, "bench_bsplib: wrong data (op %d, b %zu)\n", (int)op, b);
    return X.seconds;
}

static double run_lpf(size_t b, size_t word, int get, int reps);

/* block sizes of the coarse exchanges (as bench_core) */
static const size_t coarse_sizes[] = { 64, 1024, 4096, (size_t)32 << 10, (size_t)64 << 10,
    (size_t)256 << 10, (size_t)1 << 20, (size_t)4 << 20, (size_t)8 << 20 };

/* one superstep of bsp_put/bsp_hpput/bsp_get of a block of b bytes to
 * every other process, beside the same with lpf_put/lpf_get and memcpy of
 * (P-1)*b by one thread alone and by P threads at once, all in this run */
static void bench_coarse(enum op op, const char *name)
{
    const size_t hi = quick ? ((size_t)1 << 20) : ((size_t)8 << 20);
    for (size_t i = 0; i < sizeof coarse_sizes / sizeof *coarse_sizes; ++i) {
        const size_t b = coarse_sizes[i];
        if (b > hi) break;
        if (only_size && b != only_size) continue;
        int reps = b >= ((size_t)1 << 20) ? 30 : 200;
        if (quick) reps /= 5;
        double t = run_xchg(op, b, b, reps);
        double lt = run_lpf(b, b, op == OP_GET, reps);
        double m1 = memcpy_time(1, b * (P - 1), reps);
        double mp = memcpy_time(P, b * (P - 1), reps);
        double h = (double)b * (P - 1);
        printf("{\"bench\":\"%s\",\"engine\":\"pthread\",\"p\":%u,\"block_bytes\":%zu,"
               "\"h_bytes\":%.0f,\"superstep_us\":%.3f,\"gbytes_per_s\":%.3f,"
               "\"lpf_us\":%.3f,\"ratio_to_lpf\":%.3f,"
               "\"memcpy1_us\":%.3f,\"memcpy1_gbytes_per_s\":%.3f,"
               "\"memcpyp_us\":%.3f,\"memcpyp_gbytes_per_s\":%.3f,"
               "\"ratio_to_memcpy1\":%.3f,\"ratio_to_memcpyp\":%.3f}\n",
               name, P, b, h, t * 1e6, h / t * 1e-9, lt * 1e6, t / lt,
               m1 * 1e6, h / m1 * 1e-9, mp * 1e6, h / mp * 1e-9, m1 / t, mp / t);
        fflush(stdout);
    }
}

/* the same exchanges with lpf_put / lpf_get, for reference */
static struct { size_t b, word; int get, reps; double seconds; } LX;

static void lpf_xchg_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    const size_t b = LX.b, word = LX.word, nwords = b / word;
    char *src = malloc(b * p), *dst = malloc(b * p);
    memset(src, (int)s + 1, b * p);
    lpf_memslot_t ss, ds;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2 * (p - 1) * nwords + 2);
    memset(dst, 0, b * p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, src, b * p, &ss);
    lpf_register_global(ctx, dst, b * p, &ds);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    double *t = malloc(sizeof(double) * (size_t)LX.reps);
    for (int r = -2; r < LX.reps; ++r) {
        double t0 = now();
        for (size_t w = 0; w < nwords; ++w)
            for (lpf_pid_t k = 0; k + 1 < p; ++k) {
                lpf_pid_t q = (s + 1 + k) % p;
                if (LX.get)
                    lpf_get(ctx, q, ss, s * b + w * word, ds, q * b + w * word, word,
                            LPF_MSG_DEFAULT);
                else
                    lpf_put(ctx, ss, q * b + w * word, q, ds, s * b + w * word, word,
                            LPF_MSG_DEFAULT);
            }
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (r >= 0) t[r] = now() - t0;
    }
    if (s == 0) LX.seconds = median(t, LX.reps);
    lpf_deregister(ctx, ss);
    lpf_deregister(ctx, ds);
    free(t);
    free(src);
    free(dst);
}

static double run_lpf(size_t b, size_t word, int get, int reps)
{
    LX.b = b;
    LX.word = word;
    LX.get = get;
    LX.reps = reps;
    lpf_exec(LPF_ROOT, P, lpf_xchg_spmd, LPF_NO_ARGS);
    return LX.seconds;
}

static void bench_fine(void)
{
    size_t lo = 512, hi = quick ? ((size_t)1 << 18) : ((size_t)4 << 20);
    for (size_t b = lo; b <= hi; b *= 8) {
        int reps = b >= ((size_t)1 << 20) ? 10 : 50;
        double t = run_xchg(OP_PUT, b, 8, reps);
        double lt = run_lpf(b, 8, 0, reps);
        double nputs = (double)(b / 8) * (P - 1);
        printf("{\"bench\":\"put_fine\",\"engine\":\"pthread\",\"p\":%u,\"word_bytes\":8,"
               "\"puts_per_process\":%.0f,\"superstep_us\":%.3f,\"ns_per_put\":%.3f,"
               "\"lpf_put_ns_per_put\":%.3f}\n", P, nputs, t * 1e6, t / nputs * 1e9,
               lt / nputs * 1e9);
        fflush(stdout);
    }
}

static void bench_msgs(enum op op, const char *name)
{
    size_t lo = 512, hi = quick ? ((size_t)1 << 18) : ((size_t)4 << 20);
    for (size_t b = lo; b <= hi; b *= 8) {
        int reps = b >= ((size_t)1 << 20) ? 10 : 50;
        double t = run_xchg(op, b, 8, reps);
        double nmsg = (double)(b / 8) * (P - 1);
        printf("{\"bench\":\"%s\",\"engine\":\"pthread\",\"p\":%u,\"payload_bytes\":8,"
               "\"messages_per_process\":%.0f,\"superstep_us\":%.3f,\"ns_per_message\":%.3f,"
               "\"million_messages_per_s\":%.2f}\n", name, P, nmsg, t * 1e6,
               t / nmsg * 1e9, nmsg / t * 1e-6);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc) P = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) only_size = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: %s [-p P] [--quick] [--size BYTES] [--only sync_empty|put_coarse|"
                    "hpput_coarse|get_coarse|put_fine|send_move|send_hpmove|memcpy]\n", argv[0]);
            return 2;
        }
    }
    if (P < 2) P = 2;
    if (want("memcpy")) {
        for (size_t b = 64; b <= (quick ? ((size_t)1 << 20) : ((size_t)8 << 20)); b *= 4) {
            int reps = b >= ((size_t)1 << 20) ? 30 : 200;
            double m = memcpy_time(P, b, reps);
            printf("{\"bench\":\"memcpy\",\"threads\":%u,\"bytes\":%zu,\"us\":%.3f,"
                   "\"gbytes_per_s_per_thread\":%.3f}\n", P, b, m * 1e6, (double)b / m * 1e-9);
            fflush(stdout);
        }
    }
    if (want("sync_empty")) bench_sync();
    if (want("put_coarse")) bench_coarse(OP_PUT, "put_coarse");
    if (want("hpput_coarse")) bench_coarse(OP_HPPUT, "hpput_coarse");
    if (want("get_coarse")) bench_coarse(OP_GET, "get_coarse");
    if (want("put_fine")) bench_fine();
    if (want("send_move")) bench_msgs(OP_SEND_MOVE, "send_move");
    if (want("send_hpmove")) bench_msgs(OP_SEND_HPMOVE, "send_hpmove");
    return 0;
}
