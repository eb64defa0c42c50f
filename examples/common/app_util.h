/*
 * Small helpers shared by the example applications and their benchmarks:
 * a monotonic timer, a reproducible random generator, median of repeated
 * timings, and zeroed arrays on huge pages. Header-only; public C only.
 */
#ifndef SUPERSTEP_APP_UTIL_H
#define SUPERSTEP_APP_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* For a main whose options are "-name value" pairs: -h or --help anywhere
 * prints "usage: PROG ARGS" and `what` on stdout and exits 0; an option
 * without its value prints the usage on stderr and exits 2. */
static inline void app_pairs_usage(int argc, char **argv, const char *args, const char *what)
{
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: %s %s\n%s\n", argv[0], args, what);
            exit(0);
        }
    if ((argc - 1) % 2) {
        fprintf(stderr, "%s: %s needs a value\nusage: %s %s\n", argv[0], argv[argc - 1], argv[0], args);
        exit(2);
    }
}

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

/* A zeroed array of `bytes` for random access (the x of a sparse product):
 * on Linux, 2 MiB aligned and advised for transparent huge pages, so that
 * gathers over megabytes miss the TLB far less (with THP in "madvise"
 * mode, as on Debian, plain malloc gets 4 KiB pages). Elsewhere, or when
 * smaller than one huge page, calloc. Release with app_huge_free. */
typedef struct app_huge {
    void *map;      /* what to release */
    size_t len;     /* mapping length; 0: map came from calloc */
} app_huge;

static inline void *app_huge_alloc(size_t bytes, app_huge *h)
{
    h->map = NULL;
    h->len = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge) {
        const size_t len = bytes + huge;
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            char *a = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
            (void)madvise(a, bytes, MADV_HUGEPAGE);   /* advice only: failure is harmless */
            h->map = m;
            h->len = len;
            return a;
        }
    }
#endif
    h->map = calloc(bytes ? bytes : 1, 1);
    return h->map;
}

/* Advise huge pages for the 2 MiB-aligned interior of an existing buffer
 * (from fftw_malloc, say); advice only. */
static inline void app_huge_advise(void *m, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t a = ((uintptr_t)m + huge - 1) & ~(huge - 1);
    const uintptr_t e = ((uintptr_t)m + bytes) & ~(huge - 1);
    if (m && e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)m;
    (void)bytes;
#endif
}

static inline void app_huge_free(app_huge *h)
{
#if defined(__linux__)
    if (h->len) munmap(h->map, h->len);
    else free(h->map);
#else
    free(h->map);
#endif
    h->map = NULL;
    h->len = 0;
}

#endif
