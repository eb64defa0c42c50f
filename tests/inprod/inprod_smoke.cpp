// Inner product: one small, fast case (also run under ASan/UBSan and TSan).
#include "inprod.h"

#include <app_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

TEST(InprodSmoke, ThreeProcesses)
{
    const size_t n = 1001;
    std::vector<double> x(n), y(n);
    uint64_t rng = 7;
    double abs = 0;
    for (size_t i = 0; i < n; ++i) {
        x[i] = app_rand01(&rng) - 0.5;
        y[i] = app_rand01(&rng) - 0.5;
        abs += std::fabs(x[i] * y[i]);
    }
    EXPECT_NEAR(ip_seq(x.data(), y.data(), n), bsp_ip(x.data(), y.data(), n, 3), 1e-13 * abs);
}
