/*
 * bench_copy: the library's bulk copy (sstep_copy_bulk, src/core/copy.c,
 * compiled in) beside the C library's memcpy, one thread, warm caches, for
 * the placements of source and destination a program may produce:
 *
 *   malloc   two plain malloc(b) buffers
 *   page     both page-aligned
 *   alias    destination minus source = 0 modulo 4 KiB, both 8 bytes past
 *            a page boundary
 *   skew+k   source page-aligned, destination k = 1..63 bytes past a page
 *            boundary: one row with the minimum, the 10th percentile (the
 *            6th slowest k: a slow band of k shows there, a few timings
 *            spoilt by other processes do not) and the median over k
 *   skew-k   destination page-aligned, source k bytes past: the same
 *
 * One JSON line per placement and size: GB/s of memcpy and of the
 * library's copy (the best of 3 timings of a loop of copies) and their
 * ratio. Run it with and without
 * GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4294967295 (glibc then
 * never uses `rep movsb`); the line says which ("rep_movsb_tunable").
 *
 * Usage: bench_copy [--quick]
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_baseline.h"
#include "copy.h"

static int quick;

typedef void (*copy_fn)(char *, const char *, size_t);

static void use_memcpy(char *d, const char *s, size_t n) { memcpy(d, s, n); }

static double gbs(copy_fn volatile f, char *d, const char *s, size_t n)
{
    size_t total = (size_t)(quick ? 4 : 16) << 20;
    int reps = (int)(total / n) + 2;
    double best = 1e30;
    for (int t = 0; t < 3; ++t) {
        double t0 = now();
        for (int r = 0; r < reps; ++r) f(d, s, n);
        double dt = (now() - t0) / reps;
        if (dt < best) best = dt;
    }
    return (double)n / best * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void row(const char *tun, const char *pl, size_t n, const double *m, const double *c,
        int sweep)
{
    /* m, c: memcpy's and the library's GB/s; sweep: min, 10th percentile, median */
    if (sweep)
        printf("{\"bench\":\"copy\",\"placement\":\"%s\",\"bytes\":%zu,\"rep_movsb_tunable\":\"%s\","
               "\"kind\":\"%s\",\"memcpy_min_gbytes_per_s\":%.2f,\"memcpy_p10_gbytes_per_s\":%.2f,"
               "\"memcpy_gbytes_per_s\":%.2f,\"sstep_min_gbytes_per_s\":%.2f,"
               "\"sstep_p10_gbytes_per_s\":%.2f,\"sstep_gbytes_per_s\":%.2f,\"ratio_p10\":%.3f}\n",
               pl, n, tun, sstep_copy_kind(), m[0], m[1], m[2], c[0], c[1], c[2], c[1] / m[1]);
    else
        printf("{\"bench\":\"copy\",\"placement\":\"%s\",\"bytes\":%zu,\"rep_movsb_tunable\":\"%s\","
               "\"kind\":\"%s\",\"memcpy_gbytes_per_s\":%.2f,\"sstep_gbytes_per_s\":%.2f,"
               "\"ratio\":%.3f}\n", pl, n, tun, sstep_copy_kind(), m[2], c[2], c[2] / m[2]);
}

static void verify(char *big, size_t cap)
{
    for (size_t n = 2048; n < 9000; n += 61)
        for (size_t a = 0; a < 64; a += 7) {
            char *s = big + 64 + a, *d = big + cap / 2 + 3 * a;
            for (size_t i = 0; i < n; ++i) s[i] = (char)(i * 7 + n);
            memset(d - 32, 0, n + 64);
            sstep_copy_bulk(d, s, n);
            if (memcmp(d, s, n) != 0 || d[-1] != 0 || d[n] != 0) {
                fprintf(stderr, "bench_copy: sstep_copy_bulk copied %zu bytes wrongly (offset %zu)\n", n, a);
                exit(1);
            }
        }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 2;
        }
    }
    const char *env = getenv("GLIBC_TUNABLES");
    const char *tun = env && strstr(env, "x86_rep_movsb_threshold") ? "set" : "default";
    const size_t maxn = (size_t)1 << 20, cap = 2 * (maxn + 8192);
    char *big = aligned_alloc(4096, cap);
    if (!big) return 1;
    memset(big, 1, cap);
    verify(big, cap);
    static const size_t sizes[] = { 4096, 16384, 65536, 262144, 1048576 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
        const size_t n = sizes[k];
        char *ms = malloc(n), *md = malloc(n);
        memset(ms, 1, n);
        memset(md, 2, n);
        double m[3] = { 0, 0, gbs(use_memcpy, md, ms, n) }, c[3] = { 0, 0, gbs(sstep_copy_bulk, md, ms, n) };
        row(tun, "malloc", n, m, c, 0);
        free(ms);
        free(md);
        char *s = big, *d = big + cap / 2;
        m[2] = gbs(use_memcpy, d, s, n);
        c[2] = gbs(sstep_copy_bulk, d, s, n);
        row(tun, "page", n, m, c, 0);
        m[2] = gbs(use_memcpy, d + 8, s + 8, n);
        c[2] = gbs(sstep_copy_bulk, d + 8, s + 8, n);
        row(tun, "alias", n, m, c, 0);
        for (int neg = 0; neg < 2; ++neg) {
            double mk[63], ck[63];
            int nk = 0;
            for (int off = 1; off < 64; off += quick ? 7 : 1, ++nk) {
                char *ss = s + (neg ? off : 0), *dd = d + (neg ? 0 : off);
                mk[nk] = gbs(use_memcpy, dd, ss, n);
                ck[nk] = gbs(sstep_copy_bulk, dd, ss, n);
            }
            qsort(mk, (size_t)nk, sizeof *mk, cmp_d);
            qsort(ck, (size_t)nk, sizeof *ck, cmp_d);
            const double ms3[3] = { mk[0], mk[nk / 10], mk[nk / 2] };
            const double cs3[3] = { ck[0], ck[nk / 10], ck[nk / 2] };
            row(tun, neg ? "skew-k" : "skew+k", n, ms3, cs3, 1);
        }
        fflush(stdout);
    }
    free(big);
    return 0;
}
