// PageRank with dangling nodes and a convergence test: known cases, the
// sequential reference's invariants, and the BSP iteration against it for
// P = 1..8, three partitions, both SpMV algorithms.
#include "pagerank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <tuple>
#include <vector>

namespace {

struct Graph {
    sp_crs A{};
    ~Graph() { sp_free(&A); }
};

void edges(Graph &g, size_t n, const std::vector<std::pair<uint32_t, uint32_t>> &e)
{
    std::vector<uint32_t> I, J;
    for (auto &p : e) {
        I.push_back(p.first);
        J.push_back(p.second);
    }
    ASSERT_EQ(0, sp_from_coo(n, n, e.size(), I.data(), J.data(), nullptr, 0, &g.A));
}

TEST(PagerankSeq, CycleAndEmptyGraphAreUniform)
{
    Graph cyc, none;
    edges(cyc, 5, { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 0 } });
    edges(none, 4, {});
    pr_opts o = pr_default_opts();
    std::vector<double> r(5);
    pr_info info;
    ASSERT_EQ(0, pagerank_seq(&cyc.A, &o, r.data(), &info));
    for (double v : r) EXPECT_NEAR(0.2, v, 1e-15);
    EXPECT_EQ(1, info.iters);   // the start vector is the fixed point
    ASSERT_EQ(0, pagerank_seq(&none.A, &o, r.data(), &info));   // all dangling
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(0.25, r[i], 1e-15);
}

TEST(PagerankSeq, TwoNodesClosedForm)
{
    // 0 -> 1, node 1 dangling: with c = (alpha r1 + 1 - alpha) / 2,
    // r0 = c and r1 = alpha r0 + c, so r1 - r0 = alpha r0; r0 + r1 = 1
    // gives r0 = 1 / (2 + alpha)
    Graph g;
    edges(g, 2, { { 0, 1 } });
    pr_opts o = pr_default_opts();
    o.tol = 1e-15;
    std::vector<double> r(2);
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, r.data(), nullptr));
    const double r0 = 1.0 / (2.0 + o.alpha);
    EXPECT_NEAR(r0, r[0], 1e-13);
    EXPECT_NEAR(1.0 - r0, r[1], 1e-13);
}

TEST(PagerankSeq, PowerLawInvariants)
{
    Graph g;
    ASSERT_EQ(0, sp_powerlaw(3000, 5.0, 2.3, 8, &g.A));
    pr_opts o = pr_default_opts();
    std::vector<double> r(3000);
    pr_info info;
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, r.data(), &info));
    EXPECT_LT(info.diff, o.tol);
    EXPECT_GT(info.iters, 5);
    EXPECT_LT(info.iters, o.maxit);
    EXPECT_NEAR(1.0, std::accumulate(r.begin(), r.end(), 0.0), 1e-12);
    const double floor = (1 - o.alpha) / 3000;
    for (double v : r) EXPECT_GE(v, floor * (1 - 1e-12));
    o.maxit = 3;   // the iteration limit
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, r.data(), &info));
    EXPECT_EQ(3, info.iters);
}

// ---- BSP against the sequential reference --------------------------------

using Case = std::tuple<unsigned, int, int>;   // P, partition kind, SpMV variant
class PagerankBsp : public ::testing::TestWithParam<Case> {};

TEST_P(PagerankBsp, MatchesSequential)
{
    const unsigned P = std::get<0>(GetParam());
    if (std::get<2>(GetParam()) == SPMV_HP && !spmv_hp_available())
        GTEST_SKIP() << "this engine has no bsp_direct_get";
    Graph g;
    ASSERT_EQ(0, sp_powerlaw(2000, 6.0, 2.4, 21, &g.A));
    sp_crs G;
    ASSERT_EQ(0, sp_transpose(&g.A, &G));
    sp_part part;
    ASSERT_EQ(0, sp_partition(&G, P, sp_part_kind(std::get<1>(GetParam())), &part));
    pr_opts o = pr_default_opts();
    o.v = spmv_variant(std::get<2>(GetParam()));
    std::vector<double> r(2000, -1.0), ref(2000);
    pr_info bi, si;
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, ref.data(), &si));
    ASSERT_EQ(0, bsp_pagerank(&g.A, &part, &o, r.data(), P, &bi));
    EXPECT_NEAR(si.iters, bi.iters, 1);
    EXPECT_LT(bi.diff, o.tol);
    for (size_t i = 0; i < r.size(); ++i) ASSERT_NEAR(ref[i], r[i], o.tol) << i;
    sp_part_free(&part);
    sp_free(&G);
}

// SPMV_HP's two row-partition paths: in place (one x buffer, two syncs per
// iteration) and, with SUPERSTEP_SPMV_INPLACE=0, ghost copies with two x
// buffers (one sync per iteration)
TEST(Pagerank, RowPartitionHpWithAndWithoutInPlaceReads)
{
    if (!spmv_hp_available()) GTEST_SKIP() << "this engine has no bsp_direct_get";
    Graph g;
    ASSERT_EQ(0, sp_powerlaw(3000, 7.0, 2.3, 5, &g.A));
    pr_opts o = pr_default_opts();
    o.v = SPMV_HP;
    std::vector<double> ref(3000);
    pr_info si;
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, ref.data(), &si));
    for (unsigned P : { 2u, 3u, 5u })
        for (const char *inplace : { "1", "0" }) {
            setenv("SUPERSTEP_SPMV_INPLACE", inplace, 1);
            std::vector<double> r(3000, -1.0);
            pr_info bi;
            ASSERT_EQ(0, bsp_pagerank(&g.A, nullptr, &o, r.data(), P, &bi));
            EXPECT_EQ(si.iters, bi.iters) << "P " << P << " in place " << inplace;
            for (size_t i = 0; i < r.size(); ++i)
                ASSERT_NEAR(ref[i], r[i], o.tol) << i << " P " << P << " in place " << inplace;
        }
    unsetenv("SUPERSTEP_SPMV_INPLACE");
}

INSTANTIATE_TEST_SUITE_P(All, PagerankBsp,
                         ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u, 5u, 8u),
                                            ::testing::Values(0, 1, 2), ::testing::Values(0, 1)));

TEST(Pagerank, FixedIterationCountAndDefaultPartition)
{
    Graph g;
    ASSERT_EQ(0, sp_powerlaw(1500, 4.0, 2.5, 2, &g.A));
    pr_opts o = pr_default_opts();
    o.tol = 0;   // never converged: exactly maxit iterations
    o.maxit = 7;
    std::vector<double> r(1500), ref(1500);
    pr_info bi, si;
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, ref.data(), &si));
    for (unsigned P : { 1u, 3u, 4u }) {
        ASSERT_EQ(0, bsp_pagerank(&g.A, nullptr, &o, r.data(), P, &bi));
        EXPECT_EQ(7, bi.iters);
        for (size_t i = 0; i < r.size(); ++i) ASSERT_NEAR(ref[i], r[i], 1e-15) << i;
    }
}

TEST(Pagerank, SmallGraphsAndMoreProcessesThanNodes)
{
    Graph g;
    edges(g, 3, { { 0, 1 }, { 1, 0 }, { 1, 2 } });
    pr_opts o = pr_default_opts();
    std::vector<double> r(3), ref(3);
    ASSERT_EQ(0, pagerank_seq(&g.A, &o, ref.data(), nullptr));
    for (unsigned P : { 2u, 8u })
        for (int v = 0; v < (spmv_hp_available() ? 2 : 1); ++v) {
            o.v = spmv_variant(v);
            ASSERT_EQ(0, bsp_pagerank(&g.A, nullptr, &o, r.data(), P, nullptr));
            for (int i = 0; i < 3; ++i) EXPECT_NEAR(ref[i], r[i], 1e-12);
        }
}

TEST(Pagerank, PartitionWithDifferentXAndYOwnersIsRejected)
{
    Graph g;
    edges(g, 4, { { 0, 1 }, { 1, 2 }, { 2, 3 } });
    sp_crs G;
    ASSERT_EQ(0, sp_transpose(&g.A, &G));
    sp_part part;
    ASSERT_EQ(0, sp_partition(&G, 2, SP_PART_ROWS, &part));
    part.owner_x[0] = 1 - part.owner_y[0];
    std::vector<double> r(4);
    EXPECT_EQ(-1, bsp_pagerank(&g.A, &part, nullptr, r.data(), 2, nullptr));
    sp_part_free(&part);
    sp_free(&G);
}

} // namespace
