// Checklist items 8-13: lpf_probe, g and l, processor shares of (nested)
// lpf_exec.
#include "lpf_test.hpp"

#include <cmath>
#include <cstring>

namespace {

using sstest::Checker;
using sstest::Outcome;

// Item 8: the root sees the whole machine.
TEST(Probe, Item08_Root)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    ASSERT_EQ(LPF_SUCCESS, lpf_probe(LPF_ROOT, &m));
    EXPECT_GE(m.p, 1u);
    EXPECT_EQ(m.p, m.free_p);
    EXPECT_NE(nullptr, m.g);
    EXPECT_NE(nullptr, m.l);
    // constant for the program's lifetime
    lpf_machine_t m2 = LPF_INVALID_MACHINE;
    ASSERT_EQ(LPF_SUCCESS, lpf_probe(LPF_ROOT, &m2));
    EXPECT_EQ(m.p, m2.p);
    EXPECT_EQ(m.free_p, m2.free_p);
}

// Item 9: g and l are finite and > 0 for p' = 1 and p' = p, m = 0 and
// m = SIZE_MAX (and some values in between); a non-default attribute never
// gives larger values than the default.
TEST(Probe, Item09_GAndLPositive)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    ASSERT_EQ(LPF_SUCCESS, lpf_probe(LPF_ROOT, &m));
    const lpf_pid_t ps[] = { 1, 2, m.p / 2 ? m.p / 2 : 1, m.p };
    const size_t ms[] = { 0, 1, 8, 4096, size_t(1) << 20, SIZE_MAX / 2, SIZE_MAX };
    for (lpf_pid_t p : ps) {
        if (p > m.p) continue;
        for (size_t sz : ms) {
            double g = m.g(p, sz, LPF_SYNC_DEFAULT);
            double l = m.l(p, sz, LPF_SYNC_DEFAULT);
            EXPECT_TRUE(std::isfinite(g)) << "p=" << p << " m=" << sz;
            EXPECT_TRUE(std::isfinite(l)) << "p=" << p << " m=" << sz;
            EXPECT_GT(g, 0.0) << "p=" << p << " m=" << sz;
            EXPECT_GT(l, 0.0) << "p=" << p << " m=" << sz;
            for (lpf_sync_attr_t attr : { 1, 2, 42 }) {
                EXPECT_LE(m.g(p, sz, attr), g) << "attr " << attr;
                EXPECT_LE(m.l(p, sz, attr), l) << "attr " << attr;
            }
        }
    }
}

// A fingerprint of g and l over a set of arguments (bit patterns).
uint64_t gl_fingerprint(const lpf_machine_t &m)
{
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](double d) {
        unsigned char b[sizeof d];
        std::memcpy(b, &d, sizeof d);
        for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
    };
    const size_t ms[] = { 0, 1, 7, 64, 4096, size_t(1) << 24, SIZE_MAX };
    for (lpf_pid_t p = 1; p <= m.p && p <= 64; ++p)
        for (size_t sz : ms) {
            mix(m.g(p, sz, LPF_SYNC_DEFAULT));
            mix(m.l(p, sz, LPF_SYNC_DEFAULT));
        }
    return h;
}

// Item 10 (and the constancy of p): every process computes bit-identical
// g and l for identical arguments and sees the same p.
void spmd_identical_gl(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    c.set(0, gl_fingerprint(m));
    c.set(1, m.p);
    c.set(2, m.g(p, 100, LPF_SYNC_DEFAULT) > 0 && m.l(p, 100, LPF_SYNC_DEFAULT) > 0);
    sstest::finish(ctx, s, p, args, c);
}

class ProbeP : public sstest::Procs {};

TEST_P(ProbeP, Item10_IdenticalGAndL)
{
    Outcome o;
    ASSERT_TRUE(sstest::run(P(), spmd_identical_gl, o));
    const lpf_machine_t root = sstest::root_machine();
    for (unsigned k = 0; k < o.nprocs; ++k) {
        EXPECT_EQ(gl_fingerprint(root), o.v[k][0]) << "process " << k;
        EXPECT_EQ(root.p, o.v[k][1]) << "process " << k;
        EXPECT_EQ(1u, o.v[k][2]) << "process " << k;
    }
}

// Items 11 and 12: inside a section every process sees the machine's p and
// its share floor((F + P' - 1 - s) / P') of the F free processors.
void spmd_probe_share(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    SS_CHECK(c, m.free_p >= 1);
    SS_CHECK(c, m.g != nullptr && m.l != nullptr);
    c.set(0, m.p);
    c.set(1, m.free_p);
    sstest::finish(ctx, s, p, args, c);
}

void expect_shares(const Outcome &o, lpf_pid_t F)
{
    const lpf_pid_t Pp = o.nprocs;
    uint64_t sum = 0;
    for (lpf_pid_t s = 0; s < Pp; ++s) {
        EXPECT_EQ(sstest::machine_p(), o.v[s][0]) << "p seen by process " << s;
        EXPECT_EQ((F + Pp - 1 - s) / Pp, o.v[s][1]) << "free_p of process " << s << " of " << Pp;
        sum += o.v[s][1];
    }
    EXPECT_EQ(F, sum) << "the shares must sum to the free processors";
}

TEST(Probe, Item11_MaxP)
{
    Outcome o;
    const lpf_machine_t root = sstest::root_machine();
    ASSERT_TRUE(sstest::run(LPF_MAX_P, spmd_probe_share, o));
    EXPECT_EQ(root.free_p, o.nprocs);
    for (lpf_pid_t s = 0; s < o.nprocs; ++s) {
        EXPECT_EQ(root.p, o.v[s][0]);
        EXPECT_EQ(1u, o.v[s][1]) << "process " << s;
    }
}

// Item 12 for P = p/2 (shares of 2 or 3), and the same formula for other P.
class Shares : public ::testing::TestWithParam<int> {};

TEST_P(Shares, Item12_Formula)
{
    const lpf_pid_t F = sstest::root_machine().free_p;
    // parameter: -1 means p/2, -2 means p-1, else a literal P
    lpf_pid_t P = GetParam() == -1 ? F / 2 : GetParam() == -2 ? F - 1 : lpf_pid_t(GetParam());
    if (P == 0) GTEST_SKIP() << "machine too small";
    Outcome o;
    ASSERT_TRUE(sstest::run(P, spmd_probe_share, o));
    expect_shares(o, F);
}

INSTANTIATE_TEST_SUITE_P(P, Shares, ::testing::Values(-1, -2, 1, 2, 3, 5, 7),
        [](const ::testing::TestParamInfo<int> &i) {
            return i.param == -1 ? std::string("HalfP")
                    : i.param == -2 ? std::string("PMinus1") : "P" + std::to_string(i.param);
        });

// Item 13: a nested lpf_exec runs min(P, free_p) processes and returns
// success; the nested processes share the parent's free_p by the same
// formula; nesting goes on down to sections of one process.
void spmd_nested_leaf(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    c.set(0, m.free_p);
    // the nested section communicates on its own
    lpf_pid_t got = p;
    lpf_pid_t mine = s;
    lpf_memslot_t gs = LPF_INVALID_MEMSLOT, ls = LPF_INVALID_MEMSLOT;
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_register_global(ctx, &got, sizeof got, &gs));
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, got, (s + p - 1) % p);
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

void spmd_nested_outer(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    const lpf_pid_t F = m.free_p;
    const lpf_pid_t asks[] = { 1, 2, F, F + 3, LPF_MAX_P };
    for (lpf_pid_t Q : asks) {
        Outcome o;
        lpf_err_t rc = sstest::exec_outcome(ctx, Q, spmd_nested_leaf, o);
        SS_OK(c, rc);
        const lpf_pid_t want = Q < F ? Q : F;
        SS_CHECK_EQ(c, o.nprocs, want);
        SS_CHECK_EQ(c, o.reported, want);
        SS_CHECK_EQ(c, o.failures, 0u);
        if (o.failures) c.fail(__FILE__, __LINE__, std::string("nested: ") + o.first);
        uint64_t sum = 0;
        for (lpf_pid_t k = 0; k < o.nprocs && k < sstest::kMaxReportedProcs; ++k) {
            SS_CHECK_EQ(c, o.v[k][0], (F + want - 1 - k) / want);
            sum += o.v[k][0];
        }
        SS_CHECK_EQ(c, sum, uint64_t(F));
    }
    c.set(0, F);
    sstest::finish(ctx, s, p, args, c);
}

TEST_P(ProbeP, Item13_NestedExec)
{
    Outcome o;
    ASSERT_TRUE(sstest::run(P(), spmd_nested_outer, o));
}

// Three levels: root -> P -> all free -> all free (1 each).
void spmd_level3(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    SS_CHECK_EQ(c, m.free_p, 1u);
    Outcome o;
    SS_OK(c, sstest::exec_outcome(ctx, LPF_MAX_P, spmd_nested_leaf, o));
    SS_CHECK_EQ(c, o.nprocs, 1u);
    SS_CHECK_EQ(c, o.failures, 0u);
    sstest::finish(ctx, s, p, args, c);
}

void spmd_level2(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    Outcome o;
    SS_OK(c, sstest::exec_outcome(ctx, LPF_MAX_P, spmd_level3, o));
    SS_CHECK_EQ(c, o.nprocs, m.free_p);
    SS_CHECK_EQ(c, o.reported, m.free_p);
    SS_CHECK_EQ(c, o.failures, 0u);
    if (o.failures) c.fail(__FILE__, __LINE__, std::string("nested: ") + o.first);
    sstest::finish(ctx, s, p, args, c);
}

TEST_P(ProbeP, Item13_ThreeLevels)
{
    Outcome o;
    ASSERT_TRUE(sstest::run(P(), spmd_level2, o));
}

SS_INSTANTIATE(ProbeP);

} // namespace
