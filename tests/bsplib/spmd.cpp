// BSPlib SPMD control on the pthread engine: bsp_init/bsp_begin/bsp_end,
// bsp_nprocs, bsp_pid, bsp_time, nested runs (bsplib.md §4, checklist items
// 8, 10, 13-15, 18, 19, 21-26). The main-as-SPMD shape (items 9-12) and the
// run-time errors are in errors.cpp (subprocesses).
#include "bsp_test.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using bsptest::run;

namespace {

// item 8
TEST(BspSpmd, NprocsOutsideIsAtLeastOne)
{
    EXPECT_GE(bsp_nprocs(), 1u);
}

// items 10, 19: pids are exactly 0..P-1; nprocs is P inside and the
// outside value again afterwards
TEST_P(BspP, PidsAreDistinctAndNprocsIsP)
{
    const unsigned P = GetParam();
    const bsp_pid_t outside = bsp_nprocs();
    std::mutex m;
    std::multiset<unsigned> pids;
    run(P, [&] {
        EXPECT_EQ(P, bsp_nprocs());
        std::lock_guard<std::mutex> g(m);
        pids.insert(bsp_pid());
    });
    ASSERT_EQ(P, pids.size());
    unsigned k = 0;
    for (unsigned s : pids) EXPECT_EQ(k++, s);
    EXPECT_EQ(outside, bsp_nprocs());
}

// item 10 with P = bsp_nprocs()
TEST(BspSpmd, BeginWithAllProcessors)
{
    const bsp_pid_t P = bsp_nprocs();
    std::atomic<unsigned> n{0}, sum{0};
    run(P, [&] {
        n++;
        sum += bsp_pid();
    });
    EXPECT_EQ(P, n.load());
    EXPECT_EQ(P * (P - 1) / 2, sum.load());
}

// items 13, 14: code around the SPMD call runs once; pid 0 is the caller's
// thread and keeps its stack frame
std::atomic<int> before_begin{0};
pthread_t caller;
int p13_locals_ok;

void spmd13()
{
    before_begin++;                                  // every process
    const int initiator = pthread_equal(pthread_self(), caller) ? 1 : 0;
    int local = initiator ? 4711 : -1;
    bsp_begin(3);
    if (bsp_pid() == 0) p13_locals_ok = initiator == 1 && local == 4711;
    else EXPECT_EQ(0, initiator);
    bsp_end();
}

TEST(BspSpmd, InitThenCallRunsOutsideCodeOnce)
{
    caller = pthread_self();
    before_begin = 0;
    p13_locals_ok = 0;
    int after = 0;
    bsp_init(&spmd13, 0, nullptr);
    spmd13();
    after++;
    EXPECT_EQ(3, before_begin.load());
    EXPECT_EQ(1, after);
    EXPECT_EQ(1, p13_locals_ok);
    EXPECT_TRUE(pthread_equal(pthread_self(), caller));
}

// item 15: more processes than processors
TEST(BspSpmd, OversubscriptionRunsExactlyP)
{
    const bsp_pid_t P = bsp_nprocs() + 3;
    std::atomic<unsigned> n{0};
    run(P, [&] {
        EXPECT_EQ(P, bsp_nprocs());
        n++;
        bsp_sync();
    });
    EXPECT_EQ(P, n.load());
}

// item 18: two successive runs, each prepared by bsp_init
std::atomic<int> runs_a{0}, runs_b{0};
void spmd18a() { bsp_begin(2); runs_a++; bsp_sync(); bsp_end(); }
void spmd18b() { bsp_begin(3); runs_b++; bsp_sync(); bsp_end(); }

TEST(BspSpmd, TwoSuccessiveRuns)
{
    runs_a = runs_b = 0;
    bsp_init(&spmd18a, 0, nullptr);
    spmd18a();
    bsp_init(&spmd18b, 0, nullptr);
    spmd18b();
    spmd18b();   // the init stays valid for another run
    EXPECT_EQ(2, runs_a.load());
    EXPECT_EQ(6, runs_b.load());
}

// item 21: bsp_time is positive and non-decreasing
TEST_P(BspP, TimeIsPositiveAndNonDecreasing)
{
    run(GetParam(), [] {
        double t0 = bsp_time();
        EXPECT_GT(t0, 0.0);
        bsp_sync();
        double last = bsp_time();
        EXPECT_GT(last, 0.0);
        EXPECT_GE(last, t0);
        for (int i = 0; i < 1000; ++i) {
            double t = bsp_time();
            EXPECT_GE(t, last);
            last = t;
        }
    });
}

// ---- nested runs (items 22-26) ------------------------------------------

struct NestedState {
    std::atomic<int> inner_count{0};
    std::atomic<int> inner_bad{0};
};
NestedState *ns;
thread_local unsigned inner_size;

void inner_spmd()
{
    bsp_begin(inner_size);
    const unsigned Q = bsp_nprocs(), s = bsp_pid();
    if ((s == 0 && Q != inner_size) || s >= Q) ns->inner_bad++;
    // a ring put inside the inner run: only inner processes take part
    unsigned v = s, got = 1000;
    bsp_push_reg(&got, sizeof got);
    bsp_sync();
    bsp_put((s + 1) % Q, &v, &got, 0, sizeof v);
    bsp_sync();
    if (got != (s + Q - 1) % Q) ns->inner_bad++;
    bsp_pop_reg(&got);
    bsp_sync();
    ns->inner_count++;
    bsp_end();
}

// items 22, 23, 24, 25: every outer process starts its own inner run of a
// size depending on its pid; outer registrations and a pending outer put
// survive the inner run
TEST_P(BspP, NestedRunsOfDifferentSizes)
{
    const unsigned P = GetParam();
    NestedState st;
    ns = &st;
    int expected_inner = 0;
    for (unsigned s = 0; s < P; ++s) expected_inner += 1 + static_cast<int>(s % 3);
    run(P, [&] {
        const unsigned s = bsp_pid();
        unsigned outer_val = 100 + s, recv = 0;
        bsp_push_reg(&recv, sizeof recv);
        bsp_sync();
        // an outer request issued before the nested run
        bsp_put((s + 1) % P, &outer_val, &recv, 0, sizeof outer_val);
        inner_size = 1 + s % 3;
        bsp_init(&inner_spmd, 0, nullptr);
        inner_spmd();
        // back in the outer run
        EXPECT_EQ(s, bsp_pid());
        EXPECT_EQ(P, bsp_nprocs());
        EXPECT_EQ(0u, recv);          // the outer put is still pending
        bsp_sync();
        EXPECT_EQ(100 + (s + P - 1) % P, recv);
        // the outer registration still works
        unsigned again = 200 + s;
        bsp_put((s + 1) % P, &again, &recv, 0, sizeof again);
        bsp_sync();
        EXPECT_EQ(200 + (s + P - 1) % P, recv);
        bsp_pop_reg(&recv);
        bsp_sync();
    });
    EXPECT_EQ(expected_inner, st.inner_count.load());
    EXPECT_EQ(0, st.inner_bad.load());
}

// item 26: an inner bsp_sync does not wait for outer processes that do not
// nest: pid 0 runs an inner run of many supersteps while the others wait at
// their next outer sync
std::atomic<int> inner_syncs{0};
void long_inner()
{
    bsp_begin(2);
    for (int i = 0; i < 200; ++i) {
        bsp_sync();
        if (bsp_pid() == 0) inner_syncs++;
    }
    bsp_end();
}

TEST_P(BspP, InnerSyncDoesNotWaitForOuterProcesses)
{
    const unsigned P = GetParam();
    inner_syncs = 0;
    run(P, [&] {
        if (bsp_pid() == 0) {
            bsp_init(&long_inner, 0, nullptr);
            long_inner();
            EXPECT_EQ(200, inner_syncs.load());
        }
        bsp_sync();
        EXPECT_EQ(200, inner_syncs.load());
    });
}

// nesting depth: a run inside a run inside a run
std::atomic<int> depth_reached{0};
thread_local int my_depth;
void deep_spmd()
{
    bsp_begin(2);
    const int d = my_depth;
    if (d == 3) depth_reached++;
    if (bsp_pid() == 0 && d < 3) {
        my_depth = d + 1;
        bsp_init(&deep_spmd, 0, nullptr);
        deep_spmd();
        my_depth = d;
    }
    bsp_sync();
    EXPECT_EQ(2u, bsp_nprocs());
    bsp_end();
}

TEST(BspSpmd, NestingThreeLevelsDeep)
{
    depth_reached = 0;
    my_depth = 1;
    bsp_init(&deep_spmd, 0, nullptr);
    deep_spmd();
    // level 1 pid 0 nests (level 2, 2 processes), whose pid 0 nests (level 3,
    // counted by its pid 0, the only one that knows its depth)
    EXPECT_EQ(1, depth_reached.load());
}

INSTANTIATE_TEST_SUITE_P(P, BspP, bsptest::procs());

} // namespace
