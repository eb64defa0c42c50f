// Inner product (Algorithm 2): the library call and the SPMD-level
// functions against the sequential loop, for P = 1, 2, 3, 4, 5, 8.
#include "inprod.h"

#include <app_util.h>
#include <bsp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

namespace {

void fill(std::vector<double> &v, uint64_t seed)
{
    uint64_t rng = seed;
    for (double &a : v) a = app_rand01(&rng) - 0.5;
}

double abs_dot(const std::vector<double> &x, const std::vector<double> &y)
{
    double s = 0;
    for (size_t i = 0; i < x.size(); ++i) s += std::fabs(x[i] * y[i]);
    return s;
}

class InprodLib : public ::testing::TestWithParam<std::tuple<unsigned, size_t>> {};

TEST_P(InprodLib, MatchesSequential)
{
    const unsigned P = std::get<0>(GetParam());
    const size_t n = std::get<1>(GetParam());
    std::vector<double> x(n), y(n);
    fill(x, 1 + n);
    fill(y, 2 + n);
    double seq = ip_seq(x.data(), y.data(), n);
    double bsp = bsp_ip(x.data(), y.data(), n, P);
    EXPECT_NEAR(seq, bsp, 1e-13 * abs_dot(x, y) + 1e-300);
}

INSTANTIATE_TEST_SUITE_P(PN, InprodLib,
    ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u, 5u, 8u),
                       ::testing::Values(size_t(0), size_t(1), size_t(7), size_t(1000),
                                         size_t(100003))));

TEST(Inprod, ExactOnIntegers)
{
    // x = y = 1..n: every partial sum is an exact integer below 2^53
    const size_t n = 20000;
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = double(i + 1);
    const double exact = double(n) * double(n + 1) * double(2 * n + 1) / 6.0;
    for (unsigned P : {1u, 2u, 3u, 4u, 8u}) EXPECT_EQ(exact, bsp_ip(x.data(), x.data(), n, P)) << P;
}

// ---- SPMD level: cyclic distribution generated locally; every process
// must obtain the bit-identical result; reducer with k values; broadcast.

struct SpmdOut {
    unsigned P;
    size_t n;
    double result[16];     // per pid
    double sums[16][3];    // reducer results per pid
    uint64_t bcast[16];
};
thread_local SpmdOut *spmd_out;

void spmd_entry()
{
    SpmdOut *o = spmd_out;
    bsp_begin(o ? o->P : bsp_nprocs());
    {   // own scope: siblings leave through bsp_end without unwinding
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    if (s != 0) o = nullptr;
    uint64_t n = o ? o->n : 0, token = o ? 0xfeedbeefULL : 0;
    app_broadcast(&n, sizeof n);
    app_broadcast(&token, sizeof token);
    // cyclic: x_i = i + 1, y_i = 1 (integer partial sums: exact)
    size_t np = n / p + (s < n % p ? 1 : 0);
    std::vector<double> x(np), y(np);
    for (size_t t = 0; t < np; ++t) {
        x[t] = double(s + t * p + 1);
        y[t] = 1.0;
    }
    ip_reducer r1, r3;
    if (ip_reducer_init(&r1, 1) != 0 || ip_reducer_init(&r3, 3) != 0) bsp_abort("out of memory\n");
    // results of all pids to pid 0
    std::vector<double> res(p), sums(3 * p);
    std::vector<uint64_t> toks(p);
    bsp_push_reg(res.data(), p * sizeof(double));
    bsp_push_reg(sums.data(), 3 * p * sizeof(double));
    bsp_push_reg(toks.data(), p * sizeof(uint64_t));
    bsp_sync();
    double a = ip_spmd(x.data(), y.data(), np, &r1);
    double v[3] = { double(s), 1.0, double(s) * double(s) }, out[3];
    ip_reducer_put(&r3, v);
    bsp_sync();
    ip_reducer_sum(&r3, out);
    bsp_put(0, &a, res.data(), s * sizeof(double), sizeof(double));
    bsp_put(0, out, sums.data(), 3 * s * sizeof(double), 3 * sizeof(double));
    bsp_put(0, &token, toks.data(), s * sizeof(uint64_t), sizeof(uint64_t));
    bsp_sync();
    if (o)
        for (unsigned q = 0; q < p; ++q) {
            o->result[q] = res[q];
            for (int i = 0; i < 3; ++i) o->sums[q][i] = sums[3 * q + i];
            o->bcast[q] = toks[q];
        }
    bsp_pop_reg(res.data());
    bsp_pop_reg(sums.data());
    bsp_pop_reg(toks.data());
    ip_reducer_free(&r1);
    ip_reducer_free(&r3);
    bsp_sync();
    }
    bsp_end();
}

class InprodSpmd : public ::testing::TestWithParam<unsigned> {};

TEST_P(InprodSpmd, AllProcessesAgree)
{
    SpmdOut o{};
    o.P = GetParam();
    o.n = 12345;
    spmd_out = &o;
    bsp_init(spmd_entry, 0, nullptr);
    spmd_entry();
    spmd_out = nullptr;
    const double n = double(o.n);
    const unsigned p = o.P;
    for (unsigned q = 0; q < p; ++q) {
        EXPECT_EQ(n * (n + 1) / 2, o.result[q]) << "pid " << q;
        EXPECT_EQ(o.result[0], o.result[q]);
        EXPECT_EQ(double(p) * (p - 1) / 2, o.sums[q][0]);
        EXPECT_EQ(double(p), o.sums[q][1]);
        EXPECT_EQ(double(p - 1) * p * (2 * p - 1) / 6, o.sums[q][2]);
        EXPECT_EQ(0xfeedbeefULL, o.bcast[q]);
    }
}

INSTANTIATE_TEST_SUITE_P(P, InprodSpmd, ::testing::Values(1u, 2u, 3u, 4u, 7u, 8u));

} // namespace
