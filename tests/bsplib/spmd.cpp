// BSPlib SPMD control: bsp_init/bsp_begin/bsp_end, bsp_nprocs, bsp_pid,
// bsp_time, nested runs (bsplib.md §4, checklist items 8, 10, 13-15, 18, 19,
// 21-26). The main-as-SPMD shape (items 9-12) is in programs.cpp and the
// run-time errors are in errors.cpp (subprocesses).
//
// Engine-agnostic (see bsp_test.hpp): results travel through BSPlib to
// pid 0, which alone writes what the sequential part checks.
#include "bsp_test.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <set>

using bsptest::gather;
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
    std::vector<uint64_t> pids;
    run(P, [&] {
        EXPECT_EQ(P, bsp_nprocs());
        std::vector<uint64_t> all = gather(bsp_pid() + 1000);
        if (bsp_pid() == 0) pids = all;
    });
    ASSERT_EQ(P, pids.size());
    std::sort(pids.begin(), pids.end());
    for (unsigned s = 0; s < P; ++s) EXPECT_EQ(1000u + s, pids[s]);
    EXPECT_EQ(outside, bsp_nprocs());
}

// item 10 with P = bsp_nprocs()
TEST(BspSpmd, BeginWithAllProcessors)
{
    const bsp_pid_t P = bsp_nprocs();
    uint64_t n = 0, sum = 0;
    run(P, [&] {
        std::vector<uint64_t> all = gather(bsp_pid());
        if (bsp_pid() == 0) {
            n = all.size();
            for (uint64_t v : all) sum += v;
        }
    });
    EXPECT_EQ(P, n);
    EXPECT_EQ(uint64_t(P) * (P - 1) / 2, sum);
}

// items 13, 14: code around the SPMD call runs once (the statements before
// bsp_begin run in every process); pid 0 is the caller's thread and keeps
// its stack frame
pthread_t caller;
thread_local uint64_t before_begin;
uint64_t p13_before_total;
int p13_locals_ok;

void spmd13()
{
    before_begin++;                                  // every process, before bsp_begin
    const int initiator = pthread_equal(pthread_self(), caller) ? 1 : 0;
    int local = initiator ? 4711 : -1;
    bsp_begin(3);
    std::vector<uint64_t> all = gather(before_begin);
    if (bsp_pid() == 0) {
        p13_locals_ok = initiator == 1 && local == 4711;
        p13_before_total = 0;
        for (uint64_t v : all) p13_before_total += v;
    } else {
        EXPECT_EQ(0, initiator);
    }
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
    EXPECT_EQ(3u, p13_before_total);
    EXPECT_EQ(1, after);
    EXPECT_EQ(1, p13_locals_ok);
    EXPECT_TRUE(pthread_equal(pthread_self(), caller));
}

// item 15: more processes than processors
TEST(BspSpmd, OversubscriptionRunsExactlyP)
{
    const bsp_pid_t P = bsp_nprocs() + 3;
    uint64_t n = 0;
    uint64_t seen = 0;
    run(P, [&] {
        // (only pid 0 computed P: on a distributed engine the other
        // processes evaluate the test's sequential code inside the run)
        std::vector<uint64_t> all = gather(1);
        if (bsp_pid() == 0) {
            seen = bsp_nprocs();
            for (uint64_t v : all) n += v;
        }
    });
    EXPECT_EQ(P, seen);
    EXPECT_EQ(P, n);
}

// item 18: two successive runs, each prepared by bsp_init
uint64_t runs_a, runs_b;   // written by pid 0 only
void spmd18a()
{
    bsp_begin(2);
    std::vector<uint64_t> all = gather(1);
    if (bsp_pid() == 0) runs_a += all[0] + all[1];
    bsp_end();
}
void spmd18b()
{
    bsp_begin(3);
    std::vector<uint64_t> all = gather(1);
    if (bsp_pid() == 0) runs_b += all[0] + all[1] + all[2];
    bsp_end();
}

TEST(BspSpmd, TwoSuccessiveRuns)
{
    runs_a = runs_b = 0;
    bsp_init(&spmd18a, 0, nullptr);
    spmd18a();
    bsp_init(&spmd18b, 0, nullptr);
    spmd18b();
    spmd18b();   // the init stays valid for another run
    EXPECT_EQ(2u, runs_a);
    EXPECT_EQ(6u, runs_b);
}

// bsp_end in a process other than 0 leaves the SPMD function like
// pthread_exit: destructors of C++ locals still alive run (no leaks)
std::atomic<unsigned> dtor_runs;
struct CountsDestruction {
    ~CountsDestruction() { dtor_runs++; }
};
void spmd_with_live_locals()
{
    CountsDestruction alive;
    std::vector<uint64_t> heap(100, 1);   // a leak would be reported by ASan
    bsp_begin(4);
    std::vector<uint64_t> all = gather(heap[0]);
    bsp_end();
    EXPECT_EQ(4u, dtor_runs.load() + 1);   // pid 0's object is still alive here
    EXPECT_EQ(4u, all[0] + all[1] + all[2] + all[3]);
}

TEST(BspSpmd, EndRunsDestructorsOfLocalsInOtherProcesses)
{
    dtor_runs = 0;
    bsp_init(&spmd_with_live_locals, 0, nullptr);
    spmd_with_live_locals();
    EXPECT_EQ(4u, dtor_runs.load());
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

// what an inner run's pid 0 found out (the outer process is the same thread)
thread_local unsigned inner_size;
thread_local uint64_t inner_count, inner_bad;

void inner_spmd()
{
    bsp_begin(inner_size);
    const unsigned Q = bsp_nprocs(), s = bsp_pid();
    uint64_t bad = s >= Q;
    // a ring put inside the inner run: only inner processes take part
    unsigned v = s, got = 1000;
    bsp_push_reg(&got, sizeof got);
    bsp_sync();
    bsp_put((s + 1) % Q, &v, &got, 0, sizeof v);
    bsp_sync();
    if (got != (s + Q - 1) % Q) bad++;
    bsp_pop_reg(&got);
    bsp_sync();
    std::vector<uint64_t> n = gather(1), b = gather(bad);
    if (s == 0) {
        if (Q != inner_size) b[0]++;
        inner_count = inner_bad = 0;
        for (unsigned q = 0; q < Q; ++q) {
            inner_count += n[q];
            inner_bad += b[q];
        }
    }
    bsp_end();
}

// items 22, 23, 24, 25: every outer process starts its own inner run of a
// size depending on its pid; outer registrations and a pending outer put
// survive the inner run
TEST_P(BspP, NestedRunsOfDifferentSizes)
{
    const unsigned P = GetParam();
    uint64_t total = 0, bad = 0;
    uint64_t expected = 0;
    for (unsigned s = 0; s < P; ++s) expected += 1 + s % 3;
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
        std::vector<uint64_t> c = gather(inner_count), b = gather(inner_bad);
        if (s == 0)
            for (unsigned q = 0; q < P; ++q) {
                total += c[q];
                bad += b[q];
            }
    });
    EXPECT_EQ(expected, total);
    EXPECT_EQ(0u, bad);
}

// item 26: an inner bsp_sync does not wait for outer processes that do not
// nest: pid 0 runs an inner run of many supersteps while the others wait at
// their next outer sync (if inner syncs involved them, this would hang)
thread_local int inner_syncs;
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
    run(P, [&] {
        if (bsp_pid() == 0) {
            inner_syncs = 0;
            bsp_init(&long_inner, 0, nullptr);
            long_inner();
            EXPECT_EQ(200, inner_syncs);
        }
        bsp_sync();
        EXPECT_EQ(P, bsp_nprocs());
    });
}

// nesting depth: a run inside a run inside a run
thread_local int my_depth, depth_reached;
void deep_spmd()
{
    bsp_begin(2);
    const int d = my_depth;   // known to each level's pid 0 (the same thread)
    if (bsp_pid() == 0 && d == 3) depth_reached++;
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
    EXPECT_EQ(1, depth_reached);
}

INSTANTIATE_TEST_SUITE_P(P, BspP, bsptest::procs());

} // namespace
