// BSP FFT: one small, fast case (also run under ASan/UBSan and TSan).
#include "bspfft.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bsp.h>
#include <cmath>
#include <cstdlib>
#include <string>
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

// The codes that read with bsp_direct_get through the SPMD plan API,
// forward then backward: the two-pass code (BSPFFT_ROWS: slabs, streaming
// stores, tiles) and the fused code with the exchange at the end
// (BSPFFT_FUSED_PULL: chunks of the others' blocks).
namespace {
double rows_err = -1;   // set by pid 0
bool rows_run = false;
unsigned rows_flags = BSPFFT_ROWS;
std::string rows_code;   // bspfft_code on pid 0

double input(size_t i, int part) { return std::sin(0.11 * double(i) + part) + 0.01 * double(i % 13); }

void rows_entry()
{
    bsp_begin(rows_run ? 2 : bsp_nprocs());
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    // on MPI only pid 0 ran the test body: the flags come from it
    unsigned flags = rows_flags;
    bsp_push_reg(&flags, sizeof flags);
    bsp_sync();
    if (s == 0)
        for (unsigned q = 1; q < p; ++q) bsp_put(q, &flags, &flags, 0, sizeof flags);
    bsp_sync();
    bsp_pop_reg(&flags);
    const size_t n = 4096, N = n / p;
    std::vector<double> ref(2 * n), x(2 * N);
    for (size_t i = 0; i < n; ++i) {
        ref[2 * i] = input(i, 0);
        ref[2 * i + 1] = input(i, 1);
    }
    for (size_t t = 0; t < N; ++t) {   // cyclic: x[t] = global s + p t
        x[2 * t] = ref[2 * (s + p * t)];
        x[2 * t + 1] = ref[2 * (s + p * t) + 1];
    }
    const std::vector<double> x0 = x;
    for (unsigned q = 0; q < p; ++q) {   // FFTW's planner is not thread-safe: one at a time
        if (q == s && fft_seq(ref.data(), n, -1) != 0) bsp_abort("fft_seq failed\n");
        bsp_sync();
    }
    bspfft_plan *pl = bspfft_plan_create(n, flags);
    if (!pl) bsp_abort("no plan\n");
    if (s == 0 && rows_run) rows_code = bspfft_code(pl);
    bspfft_execute(pl, x.data(), -1);
    double err = 0;
    for (size_t t = 0; t < N; ++t)
        for (int c = 0; c < 2; ++c)
            err = std::max(err, std::fabs(x[2 * t + c] - ref[2 * (s + p * t) + c]) / double(n));
    bspfft_execute(pl, x.data(), +1);
    for (size_t i = 0; i < 2 * N; ++i) err = std::max(err, std::fabs(x[i] / double(n) - x0[i]));
    bspfft_plan_destroy(pl);
    std::vector<double> all(p);
    bsp_push_reg(all.data(), p * sizeof(double));
    bsp_sync();
    bsp_put(0, &err, all.data(), s * sizeof(double), sizeof(double));
    bsp_sync();
    bsp_pop_reg(all.data());
    if (s == 0 && rows_run) rows_err = *std::max_element(all.begin(), all.end());
    bsp_end();
}

void run_code(unsigned flags)
{
    rows_flags = flags;
    rows_err = -1;
    rows_run = true;
    bsp_init(rows_entry, 0, nullptr);
    rows_entry();
    rows_run = false;
}
} // namespace

TEST(FftSmoke, TwoPassCodeForwardAndBackward)
{
    run_code(BSPFFT_ROWS);
    EXPECT_EQ("rows", rows_code);
    ASSERT_GE(rows_err, 0.0);
    EXPECT_LT(rows_err, 1e-13);
}

TEST(FftSmoke, FusedPullCodeForwardAndBackward)
{
    run_code(BSPFFT_FUSED_PULL);
    EXPECT_EQ("fused-pull", rows_code);
    ASSERT_GE(rows_err, 0.0);
    EXPECT_LT(rows_err, 1e-13);
}

// The same three codes copying the others' data with bsp_direct_get (what
// MPI does; on the pthread engine they read it in place by default)
TEST(FftSmoke, CopyRemoteCodesForwardAndBackward)
{
    for (unsigned code : { unsigned(BSPFFT_ROWS), unsigned(BSPFFT_FUSED_PULL), unsigned(BSPFFT_PULL) }) {
        run_code(code | BSPFFT_COPY_REMOTE);
        ASSERT_GE(rows_err, 0.0) << code;
        EXPECT_LT(rows_err, 1e-13) << code;
    }
}

// The code chosen by default below 16 MiB: the fused code with the exchange
// at the end where bsp_direct_get reads memory at once (threads), the push
// code on the MPI and hybrid engines (SUPERSTEP_ENGINE, set by bsprun)
TEST(FftSmoke, DefaultCodeByEngine)
{
    run_code(BSPFFT_ESTIMATE);
    const char *e = std::getenv("SUPERSTEP_ENGINE");
    const bool threads = !e || !*e || std::string(e) == "pthread";
    EXPECT_EQ(threads ? "fused-pull" : "fused-push", rows_code);
    ASSERT_GE(rows_err, 0.0);
    EXPECT_LT(rows_err, 1e-13);
}
