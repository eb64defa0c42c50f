/* Sequential references of the PUB programs and their reproducible inputs. */
#define _POSIX_C_SOURCE 200809L
#include "pub_apps.h"

#include <stdlib.h>
#include <string.h>

#include "app_util.h"

int pub_bs_lower_bound(const int *t, int n, int key)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (t[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void pub_bs_seq(const int *table, int N, const int *queries, int M, int *out)
{
    for (int i = 0; i < M; i++)
        out[i] = pub_bs_lower_bound(table, N, queries[i]);
}

int pub_bs_table_entry(unsigned long long seed, int i, int base)
{
    uint64_t s = seed + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    return base + 2 * i + (int)(app_rand64(&s) >> 63);
}

int pub_bs_query(unsigned long long seed, int N, int i, int base)
{
    uint64_t s = (seed ^ 0x5bd1e995u) + (uint64_t)i * 0x9e3779b97f4a7c15ull;
    return base - 2 + (int)(app_rand64(&s) % (2 * (uint64_t)N + 4));
}

void pub_xy_seq(const int *keys, int s, int *out)
{
    /* insertion sort: stable, and s is small (s*s processes) */
    for (int i = 0; i < s; i++) {
        int j = i;
        while (j > 0 && out[j - 1] > keys[i]) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = keys[i];
    }
}

int pub_isqrt(int p)
{
    if (p < 1)
        return -1;
    int r = 0;
    while ((r + 1) * (r + 1) <= p)
        r++;
    return r * r == p ? r : -1;
}
