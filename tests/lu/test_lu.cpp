// BSP LU decomposition (examples/lu) against the sequential reference, for
// several process counts and grid shapes (p = 1, 2, 3, 4, 6, 8; square,
// tall, wide), matrices smaller than the grid, and a singular matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "lu.h"

namespace {

struct LuCase {
    unsigned P, M, N;
    size_t n;
};

void PrintTo(const LuCase &c, std::ostream *os)
{
    *os << "P" << c.P << "_" << c.M << "x" << c.N << "_n" << c.n;
}

void check_against_sequential(const LuCase &c, uint64_t seed)
{
    const size_t n = c.n;
    std::vector<double> a(n * n), lu(n * n), ref(n * n);
    std::vector<size_t> perm(n + 1), pref(n + 1);
    lu_random_matrix(n, seed, a.data());
    lu = a;
    ref = a;
    ASSERT_EQ(0, lu_seq(n, ref.data(), pref.data()));
    ASSERT_EQ(0, bsplu(c.P, c.M, c.N, n, lu.data(), perm.data()));
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(pref[i], perm[i]) << "pivot of column " << i;
    for (size_t i = 0; i < n * n; i++)
        ASSERT_NEAR(ref[i], lu[i], 1e-12) << "entry " << i / n << "," << i % n;
    EXPECT_LT(lu_residual(n, a.data(), lu.data(), perm.data()), 1e-13);
}

class BspLu : public ::testing::TestWithParam<LuCase> {};

TEST_P(BspLu, MatchesSequential)
{
    check_against_sequential(GetParam(), 1234 + GetParam().n);
}

#ifdef LU_TEST_SMALL
INSTANTIATE_TEST_SUITE_P(Small, BspLu, ::testing::Values(LuCase{ 4, 2, 2, 13 }, LuCase{ 2, 1, 2, 11 }));
#else
INSTANTIATE_TEST_SUITE_P(Grids, BspLu,
    ::testing::Values(LuCase{ 1, 1, 1, 1 }, LuCase{ 1, 1, 1, 40 },
                      LuCase{ 2, 2, 1, 33 }, LuCase{ 2, 1, 2, 33 },
                      LuCase{ 3, 3, 1, 31 }, LuCase{ 3, 1, 3, 29 },
                      LuCase{ 4, 2, 2, 30 }, LuCase{ 4, 4, 1, 27 }, LuCase{ 4, 1, 4, 26 },
                      LuCase{ 6, 3, 2, 23 }, LuCase{ 8, 4, 2, 21 }, LuCase{ 8, 2, 4, 18 },
                      LuCase{ 5, 1, 5, 23 }, LuCase{ 8, 1, 8, 19 }, LuCase{ 1, 1, 1, 17 },
                      LuCase{ 4, 2, 2, 3 },  // fewer rows than processes in places
                      LuCase{ 8, 4, 2, 2 }));

TEST(BspLuGrid, DefaultGrids)
{
    const unsigned want[][3] = { { 1, 1, 1 }, { 2, 1, 2 }, { 3, 1, 3 }, { 4, 2, 2 },
                                 { 6, 2, 3 }, { 8, 2, 4 }, { 9, 3, 3 }, { 7, 1, 7 } };
    for (const auto &w : want) {
        unsigned M = 0, N = 0;
        bsplu_grid(w[0], &M, &N);
        EXPECT_EQ(w[1], M) << "P=" << w[0];
        EXPECT_EQ(w[2], N) << "P=" << w[0];
    }
}

TEST(BspLuArgs, AutomaticGridAndBadArguments)
{
    check_against_sequential(LuCase{ 3, 0, 0, 20 }, 7);
    check_against_sequential(LuCase{ 4, 0, 0, 15 }, 8);
    std::vector<double> a(4, 1.0);
    std::vector<size_t> perm(2);
    EXPECT_EQ(-2, bsplu(0, 0, 0, 2, a.data(), perm.data()));
    EXPECT_EQ(-2, bsplu(4, 3, 1, 2, a.data(), perm.data()));
}

TEST(BspLuSingular, ReportedLikeTheSequentialCode)
{
    // column 5 is zero: both versions stop at column 5
    const size_t n = 12;
    std::vector<double> a(n * n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            a[i * n + j] = (j == 5) ? 0.0 : lu_matrix_entry(3, n, i, j);
    for (unsigned P : { 1u, 2u, 4u, 3u }) {
        std::vector<double> lu = a, ref = a;
        std::vector<size_t> perm(n), pref(n);
        EXPECT_EQ(-1, lu_seq(n, ref.data(), pref.data()));
        EXPECT_EQ(-1, bsplu(P, 0, 0, n, lu.data(), perm.data())) << "P=" << P;
    }
}
#endif

}  // namespace
