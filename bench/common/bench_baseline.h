/*
 * Shared by the benchmarks: the clock, medians and the memcpy
 * baseline (P threads each copying `bytes` concurrently) that library
 * figures are compared with. Header-only (static inline: a benchmark uses
 * what it needs).
 */
#ifndef SUPERSTEP_BENCH_BASELINE_H
#define SUPERSTEP_BENCH_BASELINE_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A spinning barrier for the copiers: they start their copies together, as
 * the processes of a superstep do (a blocking barrier wakes them one after
 * the other, so that their copies overlap less than a superstep's and the
 * limit comes out too high). Yields now and then, for P > cores. */
struct spin_barrier {
    unsigned n;
    unsigned _Atomic count;
    unsigned _Atomic gen;
};

static inline void spin_barrier_wait(struct spin_barrier *b)
{
    unsigned g = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->gen, g + 1, __ATOMIC_RELEASE);
        return;
    }
    for (unsigned i = 1; __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == g; ++i)
        if ((i & 1023) == 0) sched_yield();
}

/* median seconds for P threads each copying `bytes` concurrently (the
 * slowest thread of each round counts). Plain pthreads: OpenMP threads with
 * OMP_WAIT_POLICY=active keep spinning after a region and would steal cores
 * from the measurements that follow. */
struct copier {
    struct spin_barrier *bar;
    size_t bytes;
    int reps;
    double *t;   /* [reps] per thread */
};

static inline void *copier_main(void *arg)
{
    struct copier *c = arg;
    /* source and destination 2 KiB apart within a page: a placement where
     * glibc's memcpy is fast on every CPU (with the destination 1 to 15
     * bytes after the source modulo 4 KiB its `rep movsb` path runs ~15 x
     * slower on AMD Zen cores; bench_place measures memcpy and the puts
     * with the placements a program may have) */
    char *src0 = malloc(c->bytes + 4096), *dst0 = malloc(c->bytes + 4096);
    char *src = src0, *dst = dst0 + (((uintptr_t)src0 - (uintptr_t)dst0 + 2048) & 4095);
    memset(src, 1, c->bytes);
    memset(dst, 2, c->bytes);
    for (int r = -2; r < c->reps; ++r) {
        spin_barrier_wait(c->bar);
        double t0 = now();
        memcpy(dst, src, c->bytes);
        if (r >= 0) c->t[r] = now() - t0;
    }
    free(src0);
    free(dst0);
    return NULL;
}

static inline double memcpy_time(unsigned P, size_t bytes, int reps)
{
    struct spin_barrier bar = { P, 0, 0 };
    struct copier *c = calloc(P, sizeof *c);
    pthread_t *th = calloc(P, sizeof *th);
    for (unsigned i = 0; i < P; ++i) {
        c[i] = (struct copier){ &bar, bytes, reps, calloc((size_t)reps, sizeof(double)) };
        if (i) pthread_create(&th[i], NULL, copier_main, &c[i]);
    }
    copier_main(&c[0]);
    for (unsigned i = 1; i < P; ++i) pthread_join(th[i], NULL);
    double *t = calloc((size_t)reps, sizeof(double));
    for (int r = 0; r < reps; ++r)
        for (unsigned i = 0; i < P; ++i) if (c[i].t[r] > t[r]) t[r] = c[i].t[r];
    double m = median(t, reps);
    for (unsigned i = 0; i < P; ++i) free(c[i].t);
    free(c);
    free(th);
    free(t);
    return m;
}

#endif
