// The engine/core extensions E1-E4 the PUB layer needs (pub.md §12.2,
// src/core/sstep_ext.h): range syncs by stamp, oblivious syncs, stamped
// deliveries, object scopes, no hang. Checks run inside the SPMD functions
// (gtest assertions are thread safe; on MPI a failure on any rank is
// printed and caught by the test's fail pattern), so nothing relies on
// shared memory.
#include <lpf/core.h>

#include "core/sstep_ext.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

sstep_stamp St(uint64_t o, uint64_t s)
{
    sstep_stamp t;
    t.object = o;
    t.step = s;
    return t;
}

sstep_sync_info Info(uint64_t check = 0)
{
    sstep_sync_info i;
    std::memset(&i, 0, sizeof i);
    i.check = check;
    return i;
}

void Send(lpf_t ctx, lpf_pid_t dst, const std::string &s)
{
    void *buf;
    ASSERT_EQ(LPF_SUCCESS, sstep_send_buf(ctx, dst, s.size(), &buf));
    std::memcpy(buf, s.data(), s.size());
}

std::string Str(const sstep_msg &m) { return std::string(m.data, m.size); }

lpf_pid_t Procs(lpf_pid_t want)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(LPF_ROOT, &m);
    return want;
}

lpf_err_t RunP(lpf_pid_t P, lpf_spmd_t f, void *arg = nullptr, size_t argsize = 0)
{
    lpf_args_t a = LPF_NO_ARGS;
    a.input = arg;
    a.input_size = argsize;
    return lpf_exec(LPF_ROOT, Procs(P), f, a);
}

// ---- E1: a half syncs while the other half syncs independently, more often

void spmd_halves(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(ctx, 4));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_message_queue(ctx, 4 * p));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    std::vector<uint64_t> box(p, 0);
    lpf_memslot_t slot;
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(ctx, box.data(), p * sizeof(uint64_t), &slot));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (p == 1) {
        // a range of one is local
        uint64_t v = 42;
        ASSERT_EQ(LPF_SUCCESS, sstep_put_copy(ctx, &v, 0, slot, 0, sizeof v));
        Send(ctx, 0, "self");
        sstep_sync_info i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, 1, St(9, 1), &i));
        EXPECT_EQ(42u, box[0]);
        size_t n;
        const sstep_msg *m = sstep_inbox_of(ctx, St(9, 1), &n);
        ASSERT_EQ(1u, n);
        EXPECT_EQ("self", Str(m[0]));
        EXPECT_EQ(0u, m[0].src);
        sstep_inbox_release(ctx, St(9, 1));
        return;
    }
    const lpf_pid_t h = p / 2;
    const lpf_pid_t lo = s < h ? 0 : h, n = s < h ? h : p - h;
    const uint64_t obj = s < h ? 11 : 12;
    const int rounds = s < h ? 3 : 10;
    for (int k = 1; k <= rounds; ++k) {
        // put into the next member of the range, message to the previous one
        lpf_pid_t nx = lo + (s - lo + 1) % n, pv = lo + (s - lo + n - 1) % n;
        uint64_t v = 1000 * k + s;
        ASSERT_EQ(LPF_SUCCESS, sstep_put_copy(ctx, &v, nx, slot, s * sizeof(uint64_t), sizeof v));
        Send(ctx, pv, std::to_string(k) + ":" + std::to_string(s));
        sstep_sync_info i = Info(obj * 100 + k);
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, lo, n, St(obj, k), &i)) << "cause " << i.cause;
        EXPECT_EQ(0, i.mismatch);
        lpf_pid_t from = lo + (s - lo + n - 1) % n;
        EXPECT_EQ(1000u * k + from, box[from]);
        size_t cnt;
        const sstep_msg *m = sstep_inbox_of(ctx, St(obj, k), &cnt);
        ASSERT_EQ(1u, cnt);
        EXPECT_EQ(std::to_string(k) + ":" + std::to_string(nx), Str(m[0]));
        EXPECT_EQ(nx, m[0].src);
        sstep_inbox_release(ctx, St(obj, k));
    }
    // everyone together, with the agreement value
    sstep_sync_info i = Info(77);
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(1, 1), &i));
    EXPECT_EQ(0, i.mismatch);
    // a disagreeing value is reported, the sync still completes
    i = Info(s == p - 1 ? 5 : 6);
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(1, 2), &i));
    EXPECT_EQ(1, i.mismatch);
    // and the plain sync still works afterwards
    ASSERT_EQ(LPF_SUCCESS, lpf_deregister(ctx, slot));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
}

// ---- E1: disjoint pairs sync concurrently, with gets

void spmd_pairs(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(ctx, 4));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    uint64_t mine = 0, got = 0;
    lpf_memslot_t slot;
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(ctx, &mine, sizeof mine, &slot));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t lo = s & ~1u, n = (lo + 1 < p) ? 2 : 1;
    const lpf_pid_t other = n == 2 ? (s ^ 1u) : s;
    const int rounds = 5 + 7 * (int)(lo / 2);
    for (int k = 1; k <= rounds; ++k) {
        mine = 10 * k + s;
        ASSERT_EQ(LPF_SUCCESS, sstep_get_ptr(ctx, other, slot, 0, &got, sizeof got));
        sstep_sync_info i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, lo, n, St(200 + lo, k), &i));
        EXPECT_EQ(10u * k + other, got);
    }
    sstep_sync_info i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(2, 1), &i));
    ASSERT_EQ(LPF_SUCCESS, lpf_deregister(ctx, slot));
}

// ---- E1: stamps that cannot meet

void spmd_step_mismatch(lpf_t ctx, lpf_pid_t s, lpf_pid_t, lpf_args_t)
{
    sstep_sync_info i = Info();
    auto t0 = Clock::now();
    // pid 1 is one step ahead in object 5
    lpf_err_t rc = sstep_sync_range(ctx, 0, 2, St(5, s == 0 ? 1 : 2), &i);
    EXPECT_EQ(LPF_ERR_FATAL, rc);
    if (s == 0) {
        EXPECT_EQ(SSTEP_CAUSE_MISMATCH, i.cause);
        EXPECT_EQ(1u, i.peer);
        EXPECT_EQ(2u, i.peer_stamp.step);
    } else if (s == 1) {
        EXPECT_TRUE(i.cause == SSTEP_CAUSE_GONE || i.cause == SSTEP_CAUSE_MISMATCH) << i.cause;
    }
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
}

void spmd_kind_mismatch(lpf_t ctx, lpf_pid_t s, lpf_pid_t, lpf_args_t)
{
    sstep_sync_info i = Info();
    auto t0 = Clock::now();
    lpf_err_t rc = s == 0 ? sstep_sync_range(ctx, 0, 2, St(6, 1), &i)
                          : sstep_oblsync(ctx, 0, 2, St(6, 1), 1, &i);
    EXPECT_EQ(LPF_ERR_FATAL, rc);
    EXPECT_TRUE(i.cause == SSTEP_CAUSE_MISMATCH || i.cause == SSTEP_CAUSE_GONE) << i.cause;
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
}

// ---- E4: a member that left makes the range sync fail at once

void spmd_gone(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    if (s == p - 1) return;   // leaves without syncing
    sstep_sync_info i = Info();
    auto t0 = Clock::now();
    EXPECT_EQ(LPF_ERR_FATAL, sstep_sync_range(ctx, 0, p, St(3, 1), &i));
    EXPECT_TRUE(i.cause == SSTEP_CAUSE_GONE) << i.cause;
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
}

// ---- E2: expect counts, early messages kept, extra messages

void spmd_obl(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    // everybody sends everybody (itself included) one message of step 1
    for (lpf_pid_t d = 0; d < p; ++d) Send(ctx, d, "a" + std::to_string(s));
    sstep_sync_info i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_oblsync(ctx, 0, p, St(7, 1), p, &i)) << i.cause;
    EXPECT_EQ((size_t)p, i.arrived);
    size_t n;
    const sstep_msg *m = sstep_inbox_of(ctx, St(7, 1), &n);
    ASSERT_EQ((size_t)p, n);
    for (lpf_pid_t k = 0; k < p; ++k) {
        EXPECT_EQ(k, m[k].src);
        EXPECT_EQ("a" + std::to_string(k), Str(m[k]));
    }
    sstep_inbox_release(ctx, St(7, 1));
    if (p == 1) return;
    // pid 0 runs two steps ahead of pid 1: its messages of steps 2 and 3
    // wait for pid 1 and count only for their own step
    if (s == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (uint64_t k = 2; k <= 3; ++k) {
        if (s == 0) Send(ctx, 1, "s" + std::to_string(k));
        i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_oblsync(ctx, 0, p, St(7, k), s == 1 ? 1 : 0, &i)) << i.cause;
        if (s == 1) {
            EXPECT_EQ(1u, i.arrived);
            m = sstep_inbox_of(ctx, St(7, k), &n);
            ASSERT_EQ(1u, n);
            EXPECT_EQ("s" + std::to_string(k), Str(m[0]));
        }
        sstep_inbox_release(ctx, St(7, k));
    }
    // two messages where one is expected: extra
    if (s == 0) {
        Send(ctx, 1, "x1");
        Send(ctx, 1, "x2");
    }
    if (s == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    i = Info();
    lpf_err_t rc = sstep_oblsync(ctx, 0, p, St(7, 4), s == 1 ? 1 : 0, &i);
    if (s == 1) {
        EXPECT_EQ(LPF_ERR_FATAL, rc);
        EXPECT_EQ(SSTEP_CAUSE_EXTRA, i.cause);
        EXPECT_EQ(2u, i.arrived);
    } else {
        EXPECT_EQ(LPF_SUCCESS, rc);
    }
    sstep_inbox_release(ctx, St(7, 4));
    // a late message: pid 1 has taken step 5 of object 8 (expecting
    // nothing) before pid 0 sends for it; pid 1 finds it at step 6
    i = Info();
    if (s == 1) {
        ASSERT_EQ(LPF_SUCCESS, sstep_oblsync(ctx, 0, p, St(8, 5), 0, &i)) << i.cause;
        i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(10, 1), &i)) << i.cause;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        i = Info();
        EXPECT_EQ(LPF_ERR_FATAL, sstep_oblsync(ctx, 0, p, St(8, 6), 0, &i));
        EXPECT_EQ(SSTEP_CAUSE_LATE, i.cause);
        EXPECT_EQ(0u, i.peer);
        EXPECT_EQ(5u, i.peer_stamp.step);
    } else {
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(10, 1), &i)) << i.cause;
        if (s == 0) Send(ctx, 1, "late");
        i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_oblsync(ctx, 0, p, St(8, 5), 0, &i)) << i.cause;
    }
}

// ---- deliveries: order per source, lifetime until release

void spmd_inbox(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    // sources in reverse pid order of issue; pid 0 receives
    for (int k = 0; k < 3; ++k) Send(ctx, 0, std::to_string(s) + "/" + std::to_string(k));
    sstep_sync_info i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(4, 1), &i));
    size_t n = 0;
    const sstep_msg *m = sstep_inbox_of(ctx, St(4, 1), &n);
    std::vector<std::string> keep;
    if (s == 0) {
        ASSERT_EQ(3u * p, n);
        for (lpf_pid_t q = 0; q < p; ++q)
            for (int k = 0; k < 3; ++k) {
                EXPECT_EQ(q, m[3 * q + k].src);
                EXPECT_EQ(std::to_string(q) + "/" + std::to_string(k), Str(m[3 * q + k]));
            }
    } else {
        EXPECT_EQ(0u, n);
    }
    // later syncs (with new messages from the same senders) leave it alone
    for (int r = 2; r <= 4; ++r) {
        Send(ctx, 0, "later");
        i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(4, r), &i));
        sstep_inbox_release(ctx, St(4, r));
    }
    size_t n2;
    const sstep_msg *m2 = sstep_inbox_of(ctx, St(4, 1), &n2);
    EXPECT_EQ(n, n2);
    EXPECT_EQ(m, m2);
    if (s == 0) {
        for (lpf_pid_t q = 0; q < p; ++q) EXPECT_EQ(std::to_string(q) + "/0", Str(m2[3 * q]));
    }
    sstep_inbox_release(ctx, St(4, 1));
    EXPECT_EQ(nullptr, sstep_inbox_of(ctx, St(4, 1), &n2));
    EXPECT_EQ(0u, n2);
}

// ---- E3: scopes set pending requests aside; slot indices

uint32_t Index(lpf_memslot_t h) { return (uint32_t)((h & 0xffffffffu) >> 1); }

void spmd_scope(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(ctx, 16));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    uint64_t a = 0, b = 0, c = 0;
    lpf_memslot_t sa, sb, sc;
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(ctx, &a, sizeof a, &sa));
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(ctx, &b, sizeof b, &sb));
    sstep_sync_info i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(1, 1), &i));
    ASSERT_EQ(LPF_SUCCESS, lpf_deregister(ctx, sa));   // index 0 free in the parent
    // parent requests: a put and a message, pending while the scope lives
    const lpf_pid_t nx = (s + 1) % p;
    uint64_t v = 500 + s;
    ASSERT_EQ(LPF_SUCCESS, sstep_put_copy(ctx, &v, nx, sb, 0, sizeof v));
    Send(ctx, nx, "parent" + std::to_string(s));
    sstep_scope_push(ctx);
    // the child: its own slot above every parent index, own syncs
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(ctx, &c, sizeof c, &sc));
    EXPECT_EQ(2u, Index(sc));
    const lpf_pid_t h = p > 1 ? p / 2 : 1;
    const lpf_pid_t lo = s < h ? 0 : h, n = s < h ? h : p - h;
    i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, lo, n, St(50 + lo, 0), &i)) << i.cause;
    for (uint64_t k = 1; k <= 3; ++k) {
        uint64_t w = 900 + k;
        lpf_pid_t d = lo + (s - lo + 1) % n;
        ASSERT_EQ(LPF_SUCCESS, sstep_put_copy(ctx, &w, d, sc, 0, sizeof w));
        Send(ctx, d, "child");
        i = Info();
        ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, lo, n, St(50 + lo, k), &i)) << i.cause;
        EXPECT_EQ(900u + k, c);
        EXPECT_EQ(0u, b);   // the parent's put is still pending
        size_t cnt;
        const sstep_msg *m = sstep_inbox_of(ctx, St(50 + lo, k), &cnt);
        ASSERT_EQ(1u, cnt);
        EXPECT_EQ("child", Str(m[0]));
        sstep_inbox_release(ctx, St(50 + lo, k));
    }
    ASSERT_EQ(LPF_SUCCESS, lpf_deregister(ctx, sc));
    sstep_scope_pop(ctx);
    // the parent's requests execute at its next sync
    i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(1, 2), &i)) << i.cause;
    EXPECT_EQ(500u + (s + p - 1) % p, b);
    size_t cnt;
    const sstep_msg *m = sstep_inbox_of(ctx, St(1, 2), &cnt);
    ASSERT_EQ(1u, cnt);
    EXPECT_EQ("parent" + std::to_string((s + p - 1) % p), Str(m[0]));
    sstep_inbox_release(ctx, St(1, 2));
    // the parent's allocator is as before the push: index 0 is reused
    lpf_memslot_t sd;
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(ctx, &a, sizeof a, &sd));
    EXPECT_EQ(0u, Index(sd));
    ASSERT_EQ(LPF_SUCCESS, lpf_deregister(ctx, sd));
    ASSERT_EQ(LPF_SUCCESS, lpf_deregister(ctx, sb));
    i = Info();
    ASSERT_EQ(LPF_SUCCESS, sstep_sync_range(ctx, 0, p, St(1, 3), &i));
}

// ---- E4: deadlock by quiescence

void spmd_deadlock(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    sstep_sync_info i = Info();
    auto t0 = Clock::now();
    // everybody waits for one message nobody sends
    EXPECT_EQ(LPF_ERR_FATAL, sstep_oblsync(ctx, 0, p, St(9, 1), 1, &i));
    EXPECT_EQ(SSTEP_CAUSE_DEADLOCK, i.cause);
    EXPECT_EQ(SSTEP_KIND_OBLSYNC, i.peer_kind);
    EXPECT_EQ(0u, i.peer_arrived);
    EXPECT_EQ(1u, i.peer_expect);
    EXPECT_EQ(9u, i.peer_stamp.object);
    EXPECT_LT(Clock::now() - t0, std::chrono::seconds(p == 1 ? 1 : 5));
    (void)s;
}

// lpf_exec runs at most the machine's processes (one rank under
// `bsprun --engine mpi -n 1`): tests of a member leaving, and the pair tests, need two
bool TwoProcs()
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    return lpf_probe(LPF_ROOT, &m) == LPF_SUCCESS && m.p >= 2;
}

class PubExt : public ::testing::TestWithParam<lpf_pid_t> {};

TEST_P(PubExt, HalvesSyncIndependently)
{
    EXPECT_EQ(LPF_SUCCESS, RunP(GetParam(), spmd_halves));
}

TEST_P(PubExt, DisjointPairsConcurrently)
{
    EXPECT_EQ(LPF_SUCCESS, RunP(GetParam(), spmd_pairs));
}

TEST_P(PubExt, ObliviousCounts)
{
    EXPECT_EQ(LPF_SUCCESS, RunP(GetParam(), spmd_obl));
}

TEST_P(PubExt, InboxOrderAndLifetime)
{
    EXPECT_EQ(LPF_SUCCESS, RunP(GetParam(), spmd_inbox));
}

TEST_P(PubExt, ScopesSetRequestsAside)
{
    EXPECT_EQ(LPF_SUCCESS, RunP(GetParam(), spmd_scope));
}

TEST_P(PubExt, DeadlockDetected)
{
    EXPECT_EQ(LPF_ERR_FATAL, RunP(GetParam(), spmd_deadlock));
}

TEST_P(PubExt, MemberGoneFailsAtOnce)
{
    if (GetParam() < 2 || !TwoProcs()) GTEST_SKIP();
    EXPECT_EQ(LPF_ERR_FATAL, RunP(GetParam(), spmd_gone));
}

INSTANTIATE_TEST_SUITE_P(P, PubExt, ::testing::Values(1u, 2u, 3u, 4u, 8u));

TEST(PubExtPair, StepMismatch)
{
    if (!TwoProcs()) GTEST_SKIP();
    EXPECT_EQ(LPF_ERR_FATAL, RunP(2, spmd_step_mismatch));
}

TEST(PubExtPair, KindMismatch)
{
    if (!TwoProcs()) GTEST_SKIP();
    EXPECT_EQ(LPF_ERR_FATAL, RunP(2, spmd_kind_mismatch));
}

}  // namespace
