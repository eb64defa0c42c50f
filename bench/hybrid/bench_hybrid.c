/*
 * bench_hybrid -- the same LPF supersteps on any engine, so that the hybrid
 * engine can be compared with the pthread and MPI engines in one run
 * (bench/hybrid/run.sh runs it on each). JSON lines on stdout.
 *
 *   bsprun --engine E -n P [-t T] bench_hybrid [--only NAME] [--reps R]
 *
 *   empty_sync      lpf_sync with no requests (µs per sync)
 *   one_put         a superstep with one 8-byte put per process, to the
 *                   next process (µs per superstep)
 *   put_coarse      one put of 1 MiB per process to the next process (µs
 *                   per superstep, and GB/s of data moved per process)
 *   put_fine        2^16 puts of 8 bytes per process to the next process,
 *                   scattered destinations (ns per put)
 *   total_exchange  one put of B bytes from every process to every process
 *                   (itself included), B = 64 KiB and 1 MiB (µs per
 *                   superstep, GB/s of data each process sends)
 *
 * Each figure: the median over R batches of pid 0's time per superstep
 * (every batch starts and ends with a sync, so pid 0's time is the
 * section's). Public headers only.
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/core.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

static int reps = 9;
static char only[64];
static const char *engine_label(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e && *e ? e : "pthread";
}

static int want(const char *n) { return !only[0] || !strcmp(only, n); }


static void header(lpf_pid_t p, const char *what)
{
    const char *t = getenv("SUPERSTEP_HYBRID_THREADS");
    printf("{\"bench\":\"hybrid\",\"engine\":\"%s\",\"p\":%u,\"threads_per_rank\":%s,\"what\":\"%s\"",
            engine_label(), p, t && !strcmp(engine_label(), "hybrid") ? t : "null", what);
}

static void sync_(lpf_t ctx) { lpf_sync(ctx, LPF_SYNC_DEFAULT); }

struct opts {
    int reps;
    char only[64];
};

/* the options reach pid 0 only (the other processes may not have run
 * main): it hands them on */
static void share_opts(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    struct opts o = { reps, "" };
    if (s == 0 && args.input_size == sizeof o) memcpy(&o, args.input, sizeof o);
    lpf_memslot_t os;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, p);
    sync_(ctx);
    lpf_register_global(ctx, &o, sizeof o, &os);
    sync_(ctx);
    if (s == 0)
        for (lpf_pid_t q = 1; q < p; ++q) lpf_put(ctx, os, 0, q, os, 0, sizeof o, LPF_MSG_DEFAULT);
    sync_(ctx);
    lpf_deregister(ctx, os);
    reps = o.reps;
    memcpy(only, o.only, sizeof only);
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    share_opts(ctx, s, p, args);
    const size_t fine = (size_t)1 << 16, coarse = (size_t)1 << 20;
    const size_t tx_max = (size_t)1 << 20;
    size_t bytes = coarse > fine * 8 * 2 ? coarse : fine * 16;
    if (p * tx_max > bytes) bytes = p * tx_max;
    char *src = malloc(bytes), *dst = malloc(bytes);
    memset(src, (int)s + 1, bytes);
    memset(dst, 0, bytes);
    lpf_resize_memory_register(ctx, 4);
    lpf_resize_message_queue(ctx, 2 * fine + 2 * p + 8);
    sync_(ctx);
    lpf_memslot_t ss, ds;
    lpf_register_global(ctx, src, bytes, &ss);
    lpf_register_global(ctx, dst, bytes, &ds);
    sync_(ctx);
    double *t = calloc((size_t)reps, sizeof *t);
    const lpf_pid_t next = (s + 1) % p;

    if (want("empty_sync")) {
        const int n = 2000;
        for (int r = 0; r < reps; ++r) {
            sync_(ctx);
            double t0 = now_s();
            for (int k = 0; k < n; ++k) sync_(ctx);
            t[r] = (now_s() - t0) / n;
        }
        if (s == 0) {
            header(p, "empty_sync");
            printf(",\"us\":%.3f}\n", 1e6 * median(t, reps));
        }
    }
    if (want("one_put")) {
        const int n = 2000;
        for (int r = 0; r < reps; ++r) {
            sync_(ctx);
            double t0 = now_s();
            for (int k = 0; k < n; ++k) {
                lpf_put(ctx, ss, 0, next, ds, 8 * s, 8, LPF_MSG_DEFAULT);
                sync_(ctx);
            }
            t[r] = (now_s() - t0) / n;
        }
        if (s == 0) {
            header(p, "one_put");
            printf(",\"us\":%.3f}\n", 1e6 * median(t, reps));
        }
    }
    if (want("put_coarse")) {
        const int n = 20;
        for (int r = 0; r < reps; ++r) {
            sync_(ctx);
            double t0 = now_s();
            for (int k = 0; k < n; ++k) {
                lpf_put(ctx, ss, 0, next, ds, 0, coarse, LPF_MSG_DEFAULT);
                sync_(ctx);
            }
            t[r] = (now_s() - t0) / n;
        }
        if (s == 0) {
            double m = median(t, reps);
            header(p, "put_coarse");
            printf(",\"bytes\":%zu,\"us\":%.2f,\"GBps\":%.3f}\n", coarse, 1e6 * m, coarse / m / 1e9);
        }
    }
    if (want("put_fine")) {
        for (int r = 0; r < reps; ++r) {
            sync_(ctx);
            double t0 = now_s();
            /* every other word: no two destinations adjacent */
            for (size_t k = 0; k < fine; ++k)
                lpf_put(ctx, ss, 8 * k, next, ds, 16 * k, 8, LPF_MSG_DEFAULT);
            sync_(ctx);
            t[r] = (now_s() - t0) / (double)fine;
        }
        if (s == 0) {
            header(p, "put_fine");
            printf(",\"puts_per_process\":%zu,\"ns_per_put\":%.2f}\n", fine, 1e9 * median(t, reps));
        }
    }
    if (want("total_exchange")) {
        for (size_t b = (size_t)64 << 10; b <= tx_max; b *= 16) {
            const int n = b <= ((size_t)64 << 10) ? 50 : 10;
            for (int r = 0; r < reps; ++r) {
                sync_(ctx);
                double t0 = now_s();
                for (int k = 0; k < n; ++k) {
                    for (lpf_pid_t q = 0; q < p; ++q)
                        lpf_put(ctx, ss, q * b, q, ds, s * b, b, LPF_MSG_DEFAULT);
                    sync_(ctx);
                }
                t[r] = (now_s() - t0) / n;
            }
            if (s == 0) {
                double m = median(t, reps);
                header(p, "total_exchange");
                printf(",\"block_bytes\":%zu,\"us\":%.2f,\"GBps_per_process\":%.3f}\n", b, 1e6 * m,
                        (double)(p * b) / m / 1e9);
            }
        }
    }
    fflush(stdout);
    lpf_deregister(ctx, ss);
    lpf_deregister(ctx, ds);
    free(t);
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) snprintf(only, sizeof only, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--only NAME] [--reps R]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    struct opts o = { reps, "" };
    memcpy(o.only, only, sizeof o.only);
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &o;
    a.input_size = sizeof o;
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, a);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "bench_hybrid: lpf_exec failed (%d)\n", rc);
        return 1;
    }
    return 0;
}
