/*
 * Small helpers shared by the example applications and their benchmarks:
 * a monotonic timer, a reproducible random generator, and median of
 * repeated timings. Header-only; public C only.
 */
#ifndef SUPERSTEP_APP_UTIL_H
#define SUPERSTEP_APP_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* seconds from a monotonic clock */
static inline double app_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* splitmix64: reproducible, the same sequence on every engine */
static inline uint64_t app_rand64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform double in [0, 1) */
static inline double app_rand01(uint64_t *state)
{
    return (double)(app_rand64(state) >> 11) * (1.0 / 9007199254740992.0);
}

static inline int app_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median of n values (reorders v) */
static inline double app_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, app_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
