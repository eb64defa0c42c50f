// BSPlib item 93, second half: one bsp_put of more than 2^31 bytes. About
// 4.3 GB of memory are touched (staging copy and destination); the test
// skips itself when the mappings fail or SUPERSTEP_TEST_SKIP_BIG is set.
// Not run under the sanitizers.
#include "bsp_test.hpp"

#include <sys/mman.h>

#include <cstdlib>

using bsptest::run;

namespace {

// item 93: one put of more than 2^31 bytes (about 6.5 GB of memory with the
// staging copy; skipped when memory is short or SUPERSTEP_TEST_SKIP_BIG is set)
TEST(BspDrma, HugePut)
{
    if (std::getenv("SUPERSTEP_TEST_SKIP_BIG")) GTEST_SKIP() << "SUPERSTEP_TEST_SKIP_BIG set";
    const size_t n = (size_t(1) << 31) + 4096;
    void *s = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *d = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED || d == MAP_FAILED) GTEST_SKIP() << "cannot map 2 x 2 GiB";
    // huge pages where the kernel offers them: fewer page faults
    madvise(s, n, MADV_HUGEPAGE);
    madvise(d, n, MADV_HUGEPAGE);
    unsigned char *src = static_cast<unsigned char *>(s), *dst = static_cast<unsigned char *>(d);
    src[0] = 1;
    src[n / 2] = 2;
    src[n - 1] = 3;
    run(1, [&] {
        bsp_push_reg(dst, n);
        bsp_sync();
        bsp_put(0, src, dst, 0, n);
        bsp_sync();
        bsp_pop_reg(dst);
        bsp_sync();
    });
    EXPECT_EQ(1, dst[0]);
    EXPECT_EQ(2, dst[n / 2]);
    EXPECT_EQ(3, dst[n - 1]);
    EXPECT_EQ(0, dst[12345]);
    munmap(s, n);
    munmap(d, n);
}

} // namespace
