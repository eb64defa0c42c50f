/* Sequential binary search and the reproducible inputs. */
#define _POSIX_C_SOURCE 200809L
#include "bsearch.h"

#include "app_util.h"

size_t bs_lower_bound(const uint32_t *t, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void bs_seq(const uint32_t *table, size_t N, const uint32_t *queries, size_t M, size_t *out)
{
    for (size_t i = 0; i < M; i++)
        out[i] = bs_lower_bound(table, N, queries[i]);
}

uint32_t bs_table_entry(uint64_t seed, size_t i)
{
    uint64_t s = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(2 * i + (app_rand64(&s) >> 63));
}

uint32_t bs_query(uint64_t seed, size_t N, size_t i)
{
    uint64_t s = (seed ^ 0x5bd1e995u) + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(app_rand64(&s) % (2 * (uint64_t)N + 2));
}
