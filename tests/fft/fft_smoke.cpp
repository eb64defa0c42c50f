// BSP FFT: one small, fast case (also run under ASan/UBSan and TSan).
#include "bspfft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

TEST(FftSmoke, FourProcessesOneRedistribution)
{
    const size_t n = 256;
    std::vector<double> x(2 * n), ref(2 * n);
    for (size_t i = 0; i < 2 * n; ++i) x[i] = ref[i] = std::sin(0.37 * double(i)) + 0.1 * double(i % 7);
    ASSERT_EQ(0, fft_seq(ref.data(), n, -1));
    ASSERT_EQ(0, bsp_fft(x.data(), n, -1, 4));
    for (size_t i = 0; i < 2 * n; ++i) EXPECT_NEAR(ref[i], x[i], 1e-12) << i;
}
