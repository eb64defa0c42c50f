// BSP FFT: the library call and the SPMD-level plan against FFTW on the
// whole vector, forward and backward, for P = 1..8, p <= sqrt(n) (one
// redistribution) and p > sqrt(n) (several), both redistribution codes,
// buffered and unbuffered puts, the pull (bsp_direct_get), fused push and
// unfused one-redistribution codes, and unaligned local arrays.
#include "bspfft.h"
#include "inprod.h"

#include <app_util.h>
#include <bsp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

namespace {

std::vector<double> rand_cvec(size_t n, uint64_t seed)
{
    std::vector<double> v(2 * n);
    uint64_t rng = seed;
    for (double &a : v) a = app_rand01(&rng) - 0.5;
    return v;
}

double maxabs(const std::vector<double> &v)
{
    double m = 0;
    for (double a : v) m = std::max(m, std::fabs(a));
    return m;
}

void expect_close(const std::vector<double> &ref, const std::vector<double> &got, const char *what)
{
    ASSERT_EQ(ref.size(), got.size());
    const double tol = 1e-13 * std::max(1.0, maxabs(ref));
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(ref[i], got[i], tol) << what << " at " << i;
}

TEST(FftPlan, SupportedSizes)
{
    EXPECT_EQ(1, bspfft_passes(1024, 1));
    EXPECT_EQ(2, bspfft_passes(1024, 2));
    EXPECT_EQ(2, bspfft_passes(64, 8));     // p^2 | n
    EXPECT_EQ(3, bspfft_passes(32, 8));     // p > sqrt(n)
    EXPECT_EQ(4, bspfft_passes(16, 8));
    EXPECT_EQ(3, bspfft_passes(8, 4));
    EXPECT_EQ(2, bspfft_passes(576, 3));    // 576 = 9 * 64
    EXPECT_EQ(2, bspfft_passes(72, 6));
    EXPECT_EQ(0, bspfft_passes(1024, 3));   // p does not divide n
    EXPECT_EQ(0, bspfft_passes(12, 4));     // 12 is not a product of factors of 3
    EXPECT_EQ(0, bspfft_passes(16, 16));    // one element per process
    EXPECT_EQ(0, bspfft_passes(2, 2));
    EXPECT_EQ(0, bspfft_passes(0, 1));
}

// ---- library call --------------------------------------------------------

using Case = std::tuple<unsigned, size_t>;
class FftLib : public ::testing::TestWithParam<Case> {};

TEST_P(FftLib, ForwardAndBackwardMatchFftw)
{
    const unsigned P = std::get<0>(GetParam());
    const size_t n = std::get<1>(GetParam());
    ASSERT_NE(0, bspfft_passes(n, P));
    const std::vector<double> x0 = rand_cvec(n, n * 31 + P);
    std::vector<double> ref = x0, x = x0;
    ASSERT_EQ(0, fft_seq(ref.data(), n, -1));
    ASSERT_EQ(0, bsp_fft(x.data(), n, -1, P));
    expect_close(ref, x, "forward");
    ASSERT_EQ(0, fft_seq(ref.data(), n, +1));
    ASSERT_EQ(0, bsp_fft(x.data(), n, +1, P));
    expect_close(ref, x, "backward");
    for (size_t i = 0; i < 2 * n; ++i) ASSERT_NEAR(x0[i], x[i] / double(n), 1e-14) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, FftLib,
    ::testing::Values(Case{ 1, 1 }, Case{ 1, 6 }, Case{ 1, 1024 },
                      Case{ 2, 4 }, Case{ 2, 8 }, Case{ 2, 1024 }, Case{ 2, 1 << 14 },
                      Case{ 3, 18 }, Case{ 3, 576 }, Case{ 3, 9 * 256 },
                      Case{ 4, 8 }, Case{ 4, 16 }, Case{ 4, 32 }, Case{ 4, 4096 },
                      Case{ 5, 50 }, Case{ 5, 400 },
                      Case{ 6, 72 }, Case{ 6, 288 },
                      Case{ 8, 16 }, Case{ 8, 32 }, Case{ 8, 128 }, Case{ 8, 512 }, Case{ 8, 8192 }));

TEST(Fft, UnsupportedSizeIsAnError)
{
    std::vector<double> x(2 * 12, 1.0);
    EXPECT_EQ(-1, bsp_fft(x.data(), 12, -1, 4));
    EXPECT_EQ(-1, bsp_fft(x.data(), 12, -1, 5));
    EXPECT_EQ(1.0, x[0]);   // untouched
}

// ---- SPMD level: a plan used for several transforms -----------------------

struct SpmdArgs {
    unsigned P;
    size_t n;
    unsigned flags;
    int unaligned;
    const std::vector<double> *x0;
    std::vector<double> fwd, back2;   // results at pid 0
};
thread_local SpmdArgs *spmd_args;

void gather_to(double *local, size_t N, unsigned p, unsigned s, std::vector<double> *out)
{
    // each process sends its cyclic part to pid 0 through a registered buffer
    std::vector<double> all(s == 0 ? 2 * N * p : 1);
    bsp_push_reg(all.data(), s == 0 ? all.size() * sizeof(double) : 0);
    bsp_sync();
    bsp_put(0, local, all.data(), size_t(s) * 2 * N * sizeof(double), 2 * N * sizeof(double));
    bsp_sync();
    if (out) {
        out->assign(2 * N * p, 0.0);
        for (unsigned q = 0; q < p; ++q)
            for (size_t t = 0; t < N; ++t) {
                (*out)[2 * (q + p * t)] = all[2 * (q * N + t)];
                (*out)[2 * (q + p * t) + 1] = all[2 * (q * N + t) + 1];
            }
    }
    bsp_pop_reg(all.data());
    bsp_sync();
}

void spmd_entry()
{
    SpmdArgs *a = spmd_args;
    bsp_begin(a ? a->P : bsp_nprocs());
    {
        const unsigned p = bsp_nprocs(), s = bsp_pid();
        if (s != 0) a = nullptr;
        // parameters to everybody
        size_t par[3] = { a ? a->n : 0, a ? a->flags : 0u, a ? size_t(a->unaligned) : 0u };
        app_broadcast(par, sizeof par);
        const size_t n = par[0], N = n / p;
        // every process builds its cyclic part of the same x0 itself
        const std::vector<double> x0 = rand_cvec(n, 77);
        std::vector<double> buf(2 * N + 1);
        double *x = buf.data() + par[2];   // +1 double: not FFTW-aligned
        for (size_t t = 0; t < N; ++t) {
            x[2 * t] = x0[2 * (s + p * t)];
            x[2 * t + 1] = x0[2 * (s + p * t) + 1];
        }
        bspfft_plan *pl = bspfft_plan_create(n, unsigned(par[1]));
        if (!pl) bsp_abort("plan failed\n");
        bspfft_execute(pl, x, -1);
        gather_to(x, N, p, s, a ? &a->fwd : nullptr);
        // backward, forward, backward again with the same plan
        bspfft_execute(pl, x, +1);
        bspfft_execute(pl, x, -1);
        bspfft_execute(pl, x, +1);
        gather_to(x, N, p, s, a ? &a->back2 : nullptr);
        bspfft_plan_destroy(pl);
    }
    bsp_end();
}

using SCase = std::tuple<unsigned, size_t, unsigned, int>;
class FftSpmd : public ::testing::TestWithParam<SCase> {};

TEST_P(FftSpmd, RepeatedTransformsWithOnePlan)
{
    SpmdArgs a{};
    a.P = std::get<0>(GetParam());
    a.n = std::get<1>(GetParam());
    a.flags = std::get<2>(GetParam());
    a.unaligned = std::get<3>(GetParam());
    const std::vector<double> x0 = rand_cvec(a.n, 77);
    std::vector<double> ref = x0;
    ASSERT_EQ(0, fft_seq(ref.data(), a.n, -1));
    spmd_args = &a;
    bsp_init(spmd_entry, 0, nullptr);
    spmd_entry();
    spmd_args = nullptr;
    expect_close(ref, a.fwd, "forward");
    const double nn = double(a.n) * double(a.n);
    for (size_t i = 0; i < 2 * a.n; ++i) ASSERT_NEAR(x0[i], a.back2[i] / nn, 1e-14) << i;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, FftSpmd,
    ::testing::Combine(::testing::Values(1u, 2u, 4u, 8u), ::testing::Values(size_t(64), size_t(2048)),
                       ::testing::Values(unsigned(BSPFFT_ESTIMATE), unsigned(BSPFFT_GENERIC),
                                         unsigned(BSPFFT_NOFUSE), unsigned(BSPFFT_BUFFERED),
                                         unsigned(BSPFFT_NOFUSE | BSPFFT_BUFFERED | BSPFFT_PROFILE),
                                         unsigned(BSPFFT_PUSH), unsigned(BSPFFT_PULL),
                                         unsigned(BSPFFT_PULL | BSPFFT_PROFILE),
                                         unsigned(BSPFFT_ROWS | BSPFFT_PROFILE),
                                         unsigned(BSPFFT_GENERIC | BSPFFT_BUFFERED)),
                       ::testing::Values(0, 1)));

INSTANTIATE_TEST_SUITE_P(
    NonPowerOfTwo, FftSpmd,
    ::testing::Values(SCase{ 3, 576, BSPFFT_ESTIMATE, 0 }, SCase{ 3, 576, BSPFFT_GENERIC, 1 },
                      SCase{ 6, 288, BSPFFT_MEASURE, 0 }, SCase{ 8, 32, BSPFFT_BUFFERED, 1 }));

// The pull code reads the others' outputs in chunks of 4096/p^2 elements
// per block and forms its twiddles from runs of about sqrt(n/p): sizes with
// several chunks, a partial last chunk (p = 3: B = 2048 is no multiple of
// the chunk, 455), n/p no power of two (p = 3, 5) and p = 2, 3, 4, 5, 8,
// forced with BSPFFT_PULL (the default picks push, pull or the two-pass code
// by size) up to n = 2^18; the push code and the fused code with the
// exchange at the end (BSPFFT_FUSED_PULL, chunks of 4096/p; the default
// on the pthread engine below 16 MiB) on some of the sizes. On the pthread
// engine these codes read the others' buffers in place; with
// BSPFFT_COPY_REMOTE through bsp_direct_get copies (as on MPI). The
// two-pass code (BSPFFT_ROWS; by default at n = 2^21, p = 2) with
// blocks of R = 8 rows here and R = 4 in the Flags cases n = 64, p = 2 and
// n = 2048, p = 8 (one tile per slab row).
INSTANTIATE_TEST_SUITE_P(
    PullChunks, FftSpmd,
    ::testing::Values(SCase{ 2, size_t(1) << 16, BSPFFT_PULL, 0 },
                      SCase{ 2, size_t(1) << 16, BSPFFT_PUSH, 1 },
                      SCase{ 2, size_t(1) << 16, BSPFFT_ESTIMATE, 1 },
                      SCase{ 3, 9 * 2048, BSPFFT_PULL, 1 },
                      SCase{ 3, 9 * 2048, BSPFFT_PROFILE, 0 },
                      SCase{ 4, size_t(1) << 14, BSPFFT_PULL, 0 },
                      SCase{ 4, size_t(1) << 14, BSPFFT_PUSH, 0 },
                      SCase{ 5, 25 * 64, BSPFFT_PULL, 1 },
                      SCase{ 8, 8192, BSPFFT_PULL, 1 },
                      SCase{ 8, 8192, BSPFFT_PULL | BSPFFT_PROFILE, 0 },
                      SCase{ 8, 8192, BSPFFT_PUSH | BSPFFT_BUFFERED, 0 },
                      SCase{ 2, size_t(1) << 16, BSPFFT_FUSED_PULL, 1 },
                      SCase{ 4, size_t(1) << 14, BSPFFT_FUSED_PULL | BSPFFT_PROFILE, 0 },
                      SCase{ 8, 8192, BSPFFT_FUSED_PULL, 1 },
                      SCase{ 8, 64, BSPFFT_FUSED_PULL, 0 },   // blocks of one element
                      SCase{ 2, 64, BSPFFT_FUSED_PULL, 1 },
                      SCase{ 2, size_t(1) << 16, BSPFFT_ROWS, 0 },
                      SCase{ 4, size_t(1) << 14, BSPFFT_ROWS, 1 },
                      SCase{ 8, 8192, BSPFFT_ROWS, 0 },
                      SCase{ 2, size_t(1) << 18, BSPFFT_PULL, 1 },
                      SCase{ 2, size_t(1) << 21, BSPFFT_ESTIMATE, 0 },
                      SCase{ 2, size_t(1) << 21, BSPFFT_ESTIMATE, 1 },
                      // the same codes copying the others' data with
                      // bsp_direct_get instead of reading it in place
                      SCase{ 2, size_t(1) << 16, BSPFFT_PULL | BSPFFT_COPY_REMOTE, 1 },
                      SCase{ 3, 9 * 2048, BSPFFT_PULL | BSPFFT_COPY_REMOTE, 0 },
                      SCase{ 2, size_t(1) << 16, BSPFFT_FUSED_PULL | BSPFFT_COPY_REMOTE, 0 },
                      SCase{ 8, 8192, BSPFFT_FUSED_PULL | BSPFFT_COPY_REMOTE, 1 },
                      SCase{ 4, size_t(1) << 14, BSPFFT_ROWS | BSPFFT_COPY_REMOTE, 0 },
                      SCase{ 2, size_t(1) << 21, BSPFFT_COPY_REMOTE, 1 }));

} // namespace
