// Parallel binary search on a search butterfly (examples/bsearch), Programs
// 1, 2a and 2b, against the sequential binary search (and libc bsearch for
// the hits), for p = 1..8 (powers of two and not), tables with and without
// duplicates, tables smaller than p, and empty tables or query sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <bsp.h>

#include "bsearch.h"

namespace {

struct BsCase {
    int variant;
    unsigned P;
    size_t N, M;
    bool dups;
};

void PrintTo(const BsCase &c, std::ostream *os)
{
    static const char *name[] = { "", "prog1", "prog2a", "prog2b" };
    *os << name[c.variant] << "_P" << c.P << "_N" << c.N << "_M" << c.M << (c.dups ? "_dups" : "");
}

int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

class BspBsearch : public ::testing::TestWithParam<BsCase> {};

TEST_P(BspBsearch, SameAnswersAsSequentialSearch)
{
    const BsCase c = GetParam();
    std::vector<uint32_t> table(c.N + 1), q(c.M + 1);
    for (size_t i = 0; i < c.N; i++)
        table[i] = c.dups ? 10 + bs_query(7, 20, i) : bs_table_entry(7, i) + 5;
    std::sort(table.begin(), table.begin() + c.N);
    const uint32_t top = c.N ? table[c.N - 1] + 3 : 9;
    for (size_t i = 0; i < c.M; i++)
        q[i] = bs_query(8, top, i) % (top + 1);  // below, inside and above the table
    std::vector<size_t> out(c.M + 1, 12345), ref(c.M + 1);
    ASSERT_EQ(0, bsp_bsearch(c.P, table.data(), c.N, q.data(), c.M, out.data(), c.variant));
    bs_seq(table.data(), c.N, q.data(), c.M, ref.data());
    for (size_t i = 0; i < c.M; i++) {
        ASSERT_EQ(ref[i], out[i]) << "query " << i << " = " << q[i];
        // cross-check with libc bsearch: a hit is found exactly where the
        // lower bound points (or at an equal key)
        const void *hit = c.N ? std::bsearch(&q[i], table.data(), c.N, sizeof(uint32_t), cmp_u32) : nullptr;
        if (hit)
            ASSERT_EQ(q[i], table[out[i]]);
        else
            ASSERT_TRUE(out[i] == c.N || table[out[i]] != q[i]);
    }
}

std::vector<BsCase> all_cases()
{
    std::vector<BsCase> v;
    for (int var : { BS_PROG1, BS_PROG2A, BS_PROG2B }) {
#ifdef BS_TEST_SMALL
        v.push_back({ var, 3, 500, 300, false });
#else
        for (unsigned P = 1; P <= 8; P++) {
            v.push_back({ var, P, 4000, 1500, false });
            v.push_back({ var, P, 777, 1001, true });
        }
        v.push_back({ var, 5, 3, 200, false });  // fewer table keys than processes
        v.push_back({ var, 4, 0, 50, false });   // empty table
        v.push_back({ var, 3, 100, 0, false });  // no queries
#endif
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, BspBsearch, ::testing::ValuesIn(all_cases()));

#ifndef BS_TEST_SMALL
// The SPMD-level routine restores the caller's tag size and leaves its
// registrations usable.
struct TagJob {
    bool ok;
};
thread_local TagJob *tag_job = nullptr;

void tag_spmd()
{
    TagJob *job = tag_job;
    bsp_begin(job ? 3 : 1);
    const unsigned pid = bsp_pid(), p = bsp_nprocs();
    bsp_size_t ts = 8;
    bsp_set_tagsize(&ts);
    int reg = 0;
    bsp_push_reg(&reg, sizeof reg);
    bsp_sync();
    uint32_t table[4], qs[3];
    size_t out[3];
    for (unsigned i = 0; i < 4; i++)
        table[i] = 10 * (4 * pid + i);
    for (unsigned i = 0; i < 3; i++)
        qs[i] = 7 * (3 * pid + i) + 1;
    bsp_bsearch_spmd(table, 4, qs, 3, out, BS_PROG2B);
    bool good = true;
    for (unsigned i = 0; i < 3; i++)
        good = good && out[i] == (size_t)(qs[i] + 9) / 10;  // keys 0,10,20,...
    bsp_size_t now = 0;
    bsp_set_tagsize(&now);
    good = good && now == 8;
    int one = 1;
    bsp_put((pid + 1) % p, &one, &reg, 0, sizeof one);
    bsp_sync();
    good = good && reg == 1;
    // collect the verdicts at pid 0
    int verdict = good ? 1 : 0, all[3] = { 0, 0, 0 };
    bsp_push_reg(all, sizeof all);
    bsp_sync();
    bsp_put(0, &verdict, all, pid * sizeof(int), sizeof(int));
    bsp_sync();
    if (pid == 0)
        job->ok = all[0] && all[1] && all[2];
    bsp_end();
}

TEST(BspBsearchSpmd, KeepsCallersTagSizeAndRegistrations)
{
    TagJob job{ false };
    tag_job = &job;
    bsp_init(tag_spmd, 0, nullptr);
    tag_spmd();
    tag_job = nullptr;
    EXPECT_TRUE(job.ok);
}

TEST(BspBsearchArgs, BadArguments)
{
    uint32_t t = 1;
    size_t o = 0;
    EXPECT_EQ(-2, bsp_bsearch(0, &t, 1, &t, 1, &o, BS_PROG2B));
    EXPECT_EQ(-2, bsp_bsearch(2, &t, 1, &t, 1, &o, 9));
    EXPECT_EQ(-2, bsp_bsearch(2, &t, 1, nullptr, 1, &o, BS_PROG1));
}
#endif

}  // namespace
