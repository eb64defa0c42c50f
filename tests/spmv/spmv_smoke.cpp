// 2D SpMV: one small, fast case per algorithm (also run under ASan/UBSan and TSan).
#include "sparse.h"
#include "spmv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

TEST(SpmvSmoke, Lap2dFourProcesses2D)
{
    sp_crs A;
    ASSERT_EQ(0, sp_lap2d(9, 7, &A));
    sp_part part;
    ASSERT_EQ(0, sp_partition(&A, 4, SP_PART_2D, &part));
    std::vector<double> x(A.n), y(A.m), yref(A.m);
    for (size_t j = 0; j < A.n; ++j) x[j] = 1.0 + 0.01 * double(j);
    sp_spmv(&A, x.data(), yref.data());
    for (int v = 0; v < (spmv_hp_available() ? 2 : 1); ++v) {
        ASSERT_EQ(0, bsp_spmv(&A, &part, x.data(), y.data(), 4, spmv_variant(v)));
        for (size_t i = 0; i < A.m; ++i) EXPECT_NEAR(yref[i], y[i], 1e-13) << i;
    }
    sp_part_free(&part);
    sp_free(&A);
}
