/* Sequential sorting references, inputs and checks. */
#define _POSIX_C_SOURCE 200809L
#include "sort.h"

#include <stdlib.h>
#include <string.h>

#include "app_util.h"

void sort_radix_seq(uint32_t *a, size_t n, uint32_t *tmp)
{
    if (n < 2)
        return;
    uint32_t *own = NULL;
    if (!tmp) {
        own = tmp = malloc(n * sizeof *tmp);
        if (!tmp) { /* no memory for the scratch array: fall back */
            sort_qsort(a, n);
            return;
        }
    }
    size_t cnt[4][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = a[i];
        cnt[0][k & 255]++;
        cnt[1][(k >> 8) & 255]++;
        cnt[2][(k >> 16) & 255]++;
        cnt[3][k >> 24]++;
    }
    uint32_t *src = a, *dst = tmp;
    for (int r = 0; r < 4; r++) {
        const unsigned sh = 8u * (unsigned)r;
        size_t off[256], sum = 0;
        for (int d = 0; d < 256; d++) {
            off[d] = sum;
            sum += cnt[r][d];
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t k = src[i];
            dst[off[(k >> sh) & 255]++] = k;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    /* four passes: the result is back in a */
    free(own);
}

int sort_cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

void sort_qsort(uint32_t *a, size_t n)
{
    if (n < 2)
        return;
    qsort(a, n, sizeof *a, sort_cmp_u32);
}

uint32_t sort_key(uint64_t seed, uint32_t range, size_t i)
{
    uint64_t s = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    uint64_t r = app_rand64(&s);
    return range ? (uint32_t)(r % range) : (uint32_t)(r >> 32);
}

void sort_random_keys(uint32_t *a, size_t n, uint64_t seed, uint32_t range)
{
    for (size_t i = 0; i < n; i++)
        a[i] = sort_key(seed, range, i);
}

int sort_is_sorted(const uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (a[i - 1] > a[i])
            return 0;
    return 1;
}

int sort_check(const uint32_t *in, const uint32_t *out, size_t n)
{
    if (!sort_is_sorted(out, n))
        return 0;
    uint32_t *ref = malloc((n ? n : 1) * sizeof *ref);
    if (!ref)
        return 0;
    if (n)
        memcpy(ref, in, n * sizeof *ref);
    sort_qsort(ref, n);
    int ok = n == 0 || !memcmp(ref, out, n * sizeof *ref);
    free(ref);
    return ok;
}
