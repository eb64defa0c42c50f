// BSP radix sort (RMA paper) and sample sort (examples/sort) against qsort:
// sortedness and the same multiset, for p = 1, 2, 3, 4, 5, 8, uniform keys,
// heavy duplicates, fewer keys than processes, no keys, and (SPMD-level
// calls) uneven and empty local blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <bsp.h>

#include "sort.h"

namespace {

enum Algo { RADIX, RADIX_OPT, SAMPLE };

struct SortCase {
    Algo algo;
    unsigned P;
    size_t n;
    uint32_t range;  // 0: full 32-bit keys
};

void PrintTo(const SortCase &c, std::ostream *os)
{
    static const char *name[] = { "radix", "radixopt", "sample" };
    *os << name[c.algo] << "_P" << c.P << "_n" << c.n << "_r" << c.range;
}

class BspSort : public ::testing::TestWithParam<SortCase> {};

TEST_P(BspSort, SortedPermutationOfTheInput)
{
    const SortCase c = GetParam();
    std::vector<uint32_t> in(c.n + 1), keys(c.n + 1);
    sort_random_keys(in.data(), c.n, 99 + c.n, c.range);
    keys = in;
    int st = c.algo == SAMPLE ? bsp_sample_sort(c.P, keys.data(), c.n)
                              : bsp_radix_sort(c.P, keys.data(), c.n, c.algo == RADIX_OPT);
    ASSERT_EQ(0, st);
    EXPECT_TRUE(sort_is_sorted(keys.data(), c.n));
    std::vector<uint32_t> ref(in.begin(), in.begin() + c.n);
    sort_qsort(ref.data(), c.n);
    for (size_t i = 0; i < c.n; i++)
        ASSERT_EQ(ref[i], keys[i]) << "position " << i;
}

std::vector<SortCase> all_cases()
{
    std::vector<SortCase> v;
    for (Algo a : { RADIX, RADIX_OPT, SAMPLE }) {
#ifdef SORT_TEST_SMALL
        v.push_back({ a, 3, 1001, 0 });
#else
        for (unsigned P : { 1u, 2u, 3u, 4u, 5u, 8u }) {
            v.push_back({ a, P, 5000, 0 });     // uniform 32-bit keys
            v.push_back({ a, P, 3001, 100 });   // many duplicates
        }
        v.push_back({ a, 4, 3, 0 });             // fewer keys than processes
        v.push_back({ a, 3, 0, 0 });             // no keys
        v.push_back({ a, 4, 2000, 1 });          // all keys equal
        v.push_back({ a, 2, 70000, 0 });         // several keys per digit value
#endif
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, BspSort, ::testing::ValuesIn(all_cases()));

#ifndef SORT_TEST_SMALL
// ---- SPMD-level calls with uneven local sizes --------------------------------

size_t local_size(unsigned k) { return (k % 3 == 1) ? 0 : 40 + 23 * (size_t)k; }
size_t local_start(unsigned k)
{
    size_t s = 0;
    for (unsigned j = 0; j < k; j++)
        s += local_size(j);
    return s;
}

struct UnevenJob {
    unsigned P;
    std::vector<uint32_t> *out;  // pid 0: the gathered result
};
thread_local UnevenJob *uneven_job = nullptr;

// each process makes its own block (keys from a global index: the same input
// for every p), sorts through the SPMD-level routine, and puts its part of
// the result into pid 0's array
template <int ALGO>
void uneven_spmd()
{
    UnevenJob *job = uneven_job;
    bsp_begin(job ? job->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    const size_t nl = local_size(pid), n = local_start(p);
    char dummy = 0;
    void *gid = pid == 0 ? (void *)job->out->data() : (void *)&dummy;
    bsp_push_reg(gid, pid == 0 ? n * sizeof(uint32_t) : 0);
    // the other processes end inside bsp_end(): no destructor may be pending
    {
        std::vector<uint32_t> keys(nl + 1);
        for (size_t i = 0; i < nl; i++)
            keys[i] = sort_key(5, 500, local_start(pid) + i);
        bsp_sync();
        if (ALGO == SAMPLE) {
            size_t nout = 0, first = 0;
            uint32_t *out = bsp_sample_sort_spmd(keys.data(), nl, &nout, &first);
            if (nout)
                bsp_put(0, out, gid, first * sizeof(uint32_t), nout * sizeof(uint32_t));
            free(out);
        } else {
            bsp_radix_sort_spmd(keys.data(), nl, ALGO == RADIX_OPT);
            if (nl)
                bsp_put(0, keys.data(), gid, local_start(pid) * sizeof(uint32_t), nl * sizeof(uint32_t));
        }
        bsp_sync();
    }
    bsp_pop_reg(gid);
    bsp_end();
}

template <int ALGO>
void run_uneven(unsigned P)
{
    const size_t n = local_start(P);
    std::vector<uint32_t> out(n + 1, 0xdeadbeefu), ref(n);
    for (size_t i = 0; i < n; i++)
        ref[i] = sort_key(5, 500, i);
    std::sort(ref.begin(), ref.end());
    UnevenJob job{ P, &out };
    uneven_job = &job;
    bsp_init(uneven_spmd<ALGO>, 0, nullptr);
    uneven_spmd<ALGO>();
    uneven_job = nullptr;
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(ref[i], out[i]) << "P=" << P << " position " << i;
}

TEST(BspSortSpmd, RadixUnevenBlocks)
{
    for (unsigned P : { 1u, 2u, 4u, 7u })
        run_uneven<RADIX>(P);
}

TEST(BspSortSpmd, RadixOptUnevenBlocks)
{
    for (unsigned P : { 3u, 5u })
        run_uneven<RADIX_OPT>(P);
}

TEST(BspSortSpmd, SampleUnevenBlocks)
{
    for (unsigned P : { 1u, 2u, 4u, 7u })
        run_uneven<SAMPLE>(P);
}

TEST(BspSortSeq, RadixMatchesQsort)
{
    for (uint32_t range : { 0u, 7u, 100000u }) {
        std::vector<uint32_t> a(12345), b;
        sort_random_keys(a.data(), a.size(), 3, range);
        b = a;
        sort_radix_seq(a.data(), a.size(), nullptr);
        sort_qsort(b.data(), b.size());
        EXPECT_EQ(b, a);
        EXPECT_TRUE(sort_check(b.data(), a.data(), a.size()));
    }
    EXPECT_EQ(-2, bsp_radix_sort(0, nullptr, 0, 0));
    EXPECT_EQ(-2, bsp_sample_sort(2, nullptr, 5));
}

// The library calls work from inside an SPMD section: every process of an
// outer run of 3 sorts its own array with a nested run of 2 processes.
struct NestedJob {
    bool ok;
};
thread_local NestedJob *nested_job = nullptr;

void nested_spmd()
{
    NestedJob *job = nested_job;
    bsp_begin(job ? 3 : 1);
    const unsigned pid = bsp_pid();
    int good = 1;
    {
        const size_t n = 1000 + 100 * pid;
        std::vector<uint32_t> a(n), b(n), ref(n);
        sort_random_keys(a.data(), n, 40 + pid, 0);
        b = a;
        ref = a;
        std::sort(ref.begin(), ref.end());
        good = bsp_radix_sort(2, a.data(), n, 0) == 0 && a == ref &&
               bsp_sample_sort(2, b.data(), n) == 0 && b == ref;
    }
    int all[3] = { 0, 0, 0 };
    bsp_push_reg(all, sizeof all);
    bsp_sync();
    bsp_put(0, &good, all, pid * sizeof(int), sizeof(int));
    bsp_sync();
    if (pid == 0)
        job->ok = all[0] && all[1] && all[2];
    bsp_pop_reg(all);
    bsp_end();
}

TEST(BspSortNested, LibraryCallsInsideAnSpmdSection)
{
    NestedJob job{ false };
    nested_job = &job;
    bsp_init(nested_spmd, 0, nullptr);
    nested_spmd();
    nested_job = nullptr;
    EXPECT_TRUE(job.ok);
}
#endif

}  // namespace
