// PageRank: one small, fast case (also run under ASan/UBSan and TSan).
#include "pagerank.h"

#include <gtest/gtest.h>

#include <vector>

TEST(PagerankSmoke, ThreeProcesses)
{
    sp_crs A;
    ASSERT_EQ(0, sp_powerlaw(500, 4.0, 2.5, 1, &A));
    pr_opts o = pr_default_opts();
    std::vector<double> r(500), ref(500);
    pr_info bi, si;
    ASSERT_EQ(0, pagerank_seq(&A, &o, ref.data(), &si));
    for (int v = 0; v < (spmv_hp_available() ? 2 : 1); ++v) {
        o.v = spmv_variant(v);
        ASSERT_EQ(0, bsp_pagerank(&A, nullptr, &o, r.data(), 3, &bi));
        EXPECT_EQ(si.iters, bi.iters);
        for (size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(ref[i], r[i], o.tol) << i;
    }
    sp_free(&A);
}
