// Cannon-style MatMul / MatMulG (examples/matmul) in their four variants
// (put, get, hpput, hpget) against the textbook triple loop: Cannon for
// p = 1, 4, 9 (q x q), the ring (Cannon on a p x 1 grid) for p = 2, 3, 5, 7,
// 8 and forced for p = 1, 4; n divisible by q and not (padding), n smaller
// than the grid, n = 0.
#include <gtest/gtest.h>

#include <vector>

#include "matmul.h"

namespace {

struct MmCase {
    int variant;
    unsigned P;
    size_t n;
    bool force_ring;  // bsp_matmul_ring instead of bsp_matmul
};

void PrintTo(const MmCase &c, std::ostream *os)
{
    static const char *name[] = { "put", "get", "hpput", "hpget" };
    *os << name[c.variant] << "_P" << c.P << "_n" << c.n << (c.force_ring ? "_ring" : "");
}

class BspMatmul : public ::testing::TestWithParam<MmCase> {};

TEST_P(BspMatmul, MatchesTripleLoop)
{
    const MmCase c = GetParam();
    const size_t n = c.n;
    std::vector<double> A(n * n + 1), B(n * n + 1), C(n * n + 1, -7.0), R(n * n + 1), S(n * n + 1);
    mm_random_matrix(n, 11, A.data());
    mm_random_matrix(n, 12, B.data());
    ASSERT_EQ(0, c.force_ring ? bsp_matmul_ring(c.P, n, A.data(), B.data(), C.data(), c.variant)
                             : bsp_matmul(c.P, n, A.data(), B.data(), C.data(), c.variant));
    mm_naive(n, A.data(), B.data(), R.data());
    mm_blocked(n, A.data(), B.data(), S.data());
    EXPECT_LT(mm_max_rel_diff(n, C.data(), R.data()), 1e-13);
    EXPECT_LT(mm_max_rel_diff(n, S.data(), R.data()), 1e-13);
}

std::vector<MmCase> all_cases()
{
    std::vector<MmCase> v;
    for (int var : { MM_PUT, MM_GET, MM_HPPUT, MM_HPGET }) {
#ifdef MM_TEST_SMALL
        v.push_back({ var, 4, 10, false });  // Cannon 2x2
        v.push_back({ var, 3, 10, false });  // ring
#else
        // squares: Cannon on q x q; others: the ring on all p
        for (unsigned P : { 1u, 2u, 3u, 4u, 5u, 8u, 9u }) {
            v.push_back({ var, P, 36, false });  // divisible by q = 1, 2, 3
            v.push_back({ var, P, 25, false });  // padded for q = 2, 3; uneven rows
        }
        v.push_back({ var, 9, 2, false });   // fewer rows than grid rows
        v.push_back({ var, 4, 0, false });   // empty matrices
        v.push_back({ var, 7, 3, false });   // ring: processes without rows
        v.push_back({ var, 1, 20, true });   // the ring forced on squares
        v.push_back({ var, 4, 23, true });
#endif
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, BspMatmul, ::testing::ValuesIn(all_cases()));

#ifndef MM_TEST_SMALL
TEST(BspMatmulSeq, BlockedLoopOverTileBorders)
{
    const size_t n = 300;  // crosses the 128 and 512 tile borders unevenly
    std::vector<double> A(n * n), B(n * n), R(n * n), S(n * n);
    mm_random_matrix(n, 1, A.data());
    mm_random_matrix(n, 2, B.data());
    mm_naive(n, A.data(), B.data(), R.data());
    mm_blocked(n, A.data(), B.data(), S.data());
    EXPECT_LT(mm_max_rel_diff(n, S.data(), R.data()), 1e-13);
}

TEST(BspMatmulArgs, Grid)
{
    EXPECT_EQ(1u, mm_grid(1));
    EXPECT_EQ(1u, mm_grid(3));
    EXPECT_EQ(2u, mm_grid(4));
    EXPECT_EQ(2u, mm_grid(8));
    EXPECT_EQ(3u, mm_grid(9));
    EXPECT_EQ(4u, mm_grid(16));
    double x = 0;
    EXPECT_EQ(-2, bsp_matmul(0, 1, &x, &x, &x, MM_PUT));
    EXPECT_EQ(-2, bsp_matmul(1, 1, &x, &x, &x, 7));
}
#endif

}  // namespace
