// <lpf/bsmp.h>: checklist items 89-91 of spec/lpf-core.md §14, for
// P = 1, 2, 3, 4, 8, with exact tag and payload checks, the message-queue
// accounting of docs/collectives.md (3 entries per message at the sender and
// 3 per message at the receiver) checked superstep by superstep, and exactly
// one lpf_sync per lpf_bsmp_sync / lpf_bsmp_syncall.
#include <lpf/bsmp.h>

#include "coll_test_util.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using ct::Proc;
using ct::Result;
using ct::fill;

void expect_ok(lpf_err_t rc, const Result &r, lpf_pid_t P)
{
    EXPECT_EQ(LPF_SUCCESS, rc);
    EXPECT_EQ(1, r.ran);
    EXPECT_LE(r.nprocs, static_cast<long>(P));
    EXPECT_EQ(0, r.errors);
    EXPECT_EQ(0, r.sync_mismatch);
    EXPECT_EQ(0, r.violations) << "a superstep exceeded the message-queue bound";
}

struct Tag {
    uint32_t src, dst, seq, round;
};

// payload size of message j from src to dst in a round (0 included)
size_t psize(lpf_pid_t src, lpf_pid_t dst, unsigned j, unsigned round)
{
    return (src * 7 + dst * 3 + j * 11 + round * 5) % 53;
}
unsigned pseed(lpf_pid_t src, lpf_pid_t dst, unsigned j, unsigned round)
{
    return src * 100003u + dst * 1009u + j * 17u + round * 7919u;
}

class Bsmp : public ::testing::TestWithParam<unsigned> {};

// ---- items 89, 90: round trip; empty queue ------------------------------

void spmd_roundtrip(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const unsigned m = 3;                    // messages to every process
    const size_t nmsg = static_cast<size_t>(m) * p;
    const size_t maxpay = 53;
    std::vector<Tag> tags(nmsg);
    std::vector<unsigned char> pool(nmsg * maxpay);
    // 2 slots of ours + 4 reserved for the object
    pr.caps(6, 6 * nmsg);
    lpf_memslot_t tag_slot, pool_slot;
    lpf_register_local(ctx, tags.data(), tags.size() * sizeof(Tag), &tag_slot);
    lpf_register_global(ctx, pool.data(), pool.size(), &pool_slot);

    pr.begin(6 * nmsg);
    lpf_bsmp_t b = LPF_INVALID_BSMP;
    lpf_err_t rc = lpf_bsmp_create(ctx, s, p, nmsg * maxpay, sizeof(Tag), nmsg, &b);
    pr.check(rc == LPF_SUCCESS && b != LPF_INVALID_BSMP, "create rc %d", rc);
    pr.check(ct::window_syncs() == 1, "create made %zu syncs", ct::window_syncs());
    pr.end();

    for (unsigned round = 0; round < 4; ++round) {
        // WRITE: m messages to every process, including ourselves
        pr.begin(6 * nmsg);
        size_t i = 0;
        for (unsigned j = 0; j < m; ++j) {
            for (lpf_pid_t q = 0; q < p; ++q, ++i) {
                lpf_pid_t d = (s + q) % p;
                tags[i] = Tag{ s, d, j, round };
                size_t n = psize(s, d, j, round);
                fill(pool.data() + i * maxpay, n, pseed(s, d, j, round));
                rc = lpf_send(b, d, tag_slot, i * sizeof(Tag), pool_slot, i * maxpay, n);
                pr.check(rc == LPF_SUCCESS, "send %zu rc %d", i, rc);
            }
        }
        rc = lpf_bsmp_sync(b, LPF_SYNC_DEFAULT);
        pr.check(rc == LPF_SUCCESS, "bsmp_sync rc %d", rc);
        pr.check(ct::window_syncs() == 1, "bsmp_sync made %zu syncs", ct::window_syncs());
        pr.end();

        // READ: every message exactly once, intact
        std::vector<int> seen(nmsg, 0);
        size_t got = 0;
        for (;;) {
            void *tp = nullptr, *pp = nullptr;
            size_t n = 0;
            rc = lpf_move(b, &tp, &pp, &n);
            pr.check(rc == LPF_SUCCESS, "move rc %d", rc);
            if (n == LPF_INVALID_SIZE) {
                pr.check(tp == nullptr && pp == nullptr, "empty move left pointers set");
                break;
            }
            ++got;
            Tag t;
            std::memcpy(&t, tp, sizeof t);
            if (!pr.check(t.dst == s && t.src < p && t.seq < m && t.round == round,
                        "bad tag {%u,%u,%u,%u}", t.src, t.dst, t.seq, t.round))
                continue;
            int cnt = ++seen[t.seq * p + t.src];
            pr.check(cnt == 1, "message {src %u, seq %u} delivered %d times", t.src, t.seq, cnt);
            size_t want = psize(t.src, s, t.seq, round);
            pr.check(n == want, "payload size %zu, want %zu", n, want);
            if (n == want)
                pr.check(ct::first_diff(pp, n, pseed(t.src, s, t.seq, round)) == n,
                        "payload of {src %u, seq %u} corrupt", t.src, t.seq);
            pr.check(reinterpret_cast<uintptr_t>(pp) % alignof(std::max_align_t) == 0,
                    "payload not aligned");
            pr.check(reinterpret_cast<uintptr_t>(tp) % alignof(std::max_align_t) == 0,
                    "tag not aligned");
        }
        pr.check(got == nmsg, "round %u: received %zu messages, want %zu", round, got, nmsg);
        // item 90: empty stays empty
        void *tp = &tp, *pp = &pp;
        size_t n = 0;
        rc = lpf_move(b, &tp, &pp, &n);
        pr.check(rc == LPF_SUCCESS && n == LPF_INVALID_SIZE && tp == nullptr && pp == nullptr,
                "second empty move: rc %d size %zu", rc, n);
        // send in READ mode is refused
        pr.check(lpf_send(b, 0, tag_slot, 0, pool_slot, 0, 1) == LPF_ERR_BSMP_INVAL,
                "send in READ mode accepted");

        pr.begin(6 * nmsg);
        rc = lpf_bsmp_sync(b, LPF_SYNC_DEFAULT); // READ -> WRITE
        pr.check(rc == LPF_SUCCESS && ct::window_syncs() == 1, "READ->WRITE sync");
        pr.end();
        // nothing to read in WRITE mode
        rc = lpf_move(b, &tp, &pp, &n);
        pr.check(rc == LPF_SUCCESS && n == LPF_INVALID_SIZE && !tp && !pp, "move in WRITE mode");
    }

    // fewer messages than before, partly unread: no stale deliveries
    const lpf_pid_t to = (s + 1) % p, from = (s + p - 1) % p;
    for (unsigned round = 10; round < 13; ++round) {
        const unsigned k = round - 9; // 1, 2, 3 messages to the right neighbour
        for (unsigned j = 0; j < k; ++j) {
            tags[j] = Tag{ s, to, j, round };
            fill(pool.data() + j * maxpay, psize(s, to, j, round), pseed(s, to, j, round));
            lpf_send(b, to, tag_slot, j * sizeof(Tag), pool_slot, j * maxpay, psize(s, to, j, round));
        }
        lpf_bsmp_sync(b, LPF_SYNC_DEFAULT);
        for (unsigned j = 0; j < k; ++j) {
            void *tp, *pp;
            size_t n;
            lpf_move(b, &tp, &pp, &n);
            if (!pr.check(n != LPF_INVALID_SIZE, "round %u: message %u missing", round, j)) break;
            Tag t;
            std::memcpy(&t, tp, sizeof t);
            pr.check(t.src == from && t.dst == s && t.seq == j && t.round == round,
                    "round %u: got tag {%u,%u,%u,%u}", round, t.src, t.dst, t.seq, t.round);
            pr.check(n == psize(from, s, j, round)
                    && ct::first_diff(pp, n, pseed(from, s, j, round)) == n, "payload");
            if (round == 12 && j == 0) break; // leave messages unread
        }
        if (round != 12) {
            void *tp, *pp;
            size_t n;
            lpf_move(b, &tp, &pp, &n);
            pr.check(n == LPF_INVALID_SIZE, "round %u: stale message delivered", round);
        }
        lpf_bsmp_sync(b, LPF_SYNC_DEFAULT);
    }
    // an empty superstep discards the unread messages of round 12
    lpf_bsmp_sync(b, LPF_SYNC_DEFAULT);
    {
        void *tp, *pp;
        size_t n;
        lpf_move(b, &tp, &pp, &n);
        pr.check(n == LPF_INVALID_SIZE, "discarded messages reappeared");
    }
    lpf_bsmp_sync(b, LPF_SYNC_DEFAULT);

    pr.check(lpf_bsmp_destroy(&b) == LPF_SUCCESS, "destroy");
    pr.check(b == LPF_INVALID_BSMP, "destroy did not reset the handle");
    lpf_deregister(ctx, pool_slot);
    lpf_deregister(ctx, tag_slot);
    pr.finish(args);
}

TEST_P(Bsmp, Items89_90_RoundTripDeliversEveryMessageOnce)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_roundtrip, &r), r, GetParam());
}

// ---- item 91: beyond the limits -----------------------------------------

void spmd_full(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    unsigned char data[128];
    std::memset(data, static_cast<int>(s + 1), sizeof data);
    pr.caps(1 + 8, 64);
    lpf_memslot_t ds;
    lpf_register_local(ctx, data, sizeof data, &ds);
    lpf_bsmp_t cnt = LPF_INVALID_BSMP, bytes = LPF_INVALID_BSMP;
    // tag size 0: the tag slot is never read
    lpf_bsmp_create(ctx, s, p, 1000, 0, 2, &cnt);
    lpf_bsmp_create(ctx, s, p, 100, 0, 100, &bytes);
    const lpf_pid_t to = (s + 1) % p;

    // 5 messages each way, at most 3 entries per message at either end
    pr.begin(3 * (5 + 5));
    // message limit: 2
    pr.check(lpf_send(cnt, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 40) == LPF_SUCCESS, "cnt 1");
    pr.check(lpf_send(cnt, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 0) == LPF_SUCCESS, "cnt 2");
    lpf_bsmp_t objs[2] = { cnt, bytes };
    pr.check(lpf_send(cnt, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 1) == LPF_ERR_BSMP_FULL, "cnt 3 not FULL");
    pr.check(lpf_send(cnt, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 0) == LPF_ERR_BSMP_FULL, "cnt 4 not FULL");
    // byte limit: 100
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 60) == LPF_SUCCESS, "bytes 60");
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 41) == LPF_ERR_BSMP_FULL, "bytes 41 not FULL");
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 128) == LPF_ERR_BSMP_FULL, "bytes 128 not FULL");
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 40) == LPF_SUCCESS, "bytes 40 (fills)");
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 1) == LPF_ERR_BSMP_FULL, "bytes 1 not FULL");
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 0) == LPF_SUCCESS, "bytes 0 still fits");
    // invalid uses
    pr.check(lpf_send(bytes, p, LPF_INVALID_MEMSLOT, 0, ds, 0, 1) == LPF_ERR_BSMP_INVAL, "pid p");
    pr.check(lpf_send(LPF_INVALID_BSMP, 0, LPF_INVALID_MEMSLOT, 0, ds, 0, 1) == LPF_ERR_BSMP_INVAL, "NULL");
    // both objects with one sync
    pr.check(lpf_bsmp_syncall(objs, 2, LPF_SYNC_DEFAULT) == LPF_SUCCESS, "syncall");
    pr.check(ct::window_syncs() == 1, "syncall made %zu syncs", ct::window_syncs());
    ct::Window w = pr.end();
    // refused sends issued nothing: per object and direction, one put per
    // non-empty payload plus one header block: (1 + 1) + (2 + 1) = 5
    pr.check(w.max_use == (ct::counts_targeted() || p == 1 ? 10u : 5u), "max use %zu", w.max_use);

    const lpf_pid_t from = (s + p - 1) % p;
    const size_t want_cnt[] = { 40, 0 }, want_bytes[] = { 60, 40, 0 };
    void *tp, *pp;
    size_t n;
    for (size_t w0 : want_cnt) {
        lpf_move(cnt, &tp, &pp, &n);
        pr.check(n == w0, "count-limited object: size %zu want %zu", n, w0);
        if (n == w0)
            pr.check(ct::first_not(pp, n, static_cast<unsigned char>(from + 1)) == n, "payload");
    }
    lpf_move(cnt, &tp, &pp, &n);
    pr.check(n == LPF_INVALID_SIZE, "count-limited object delivered a refused message");
    for (size_t w0 : want_bytes) {
        lpf_move(bytes, &tp, &pp, &n);
        pr.check(n == w0, "byte-limited object: size %zu want %zu", n, w0);
    }
    lpf_move(bytes, &tp, &pp, &n);
    pr.check(n == LPF_INVALID_SIZE, "byte-limited object delivered a refused message");

    // the limits are per superstep: after two syncs both accept again
    lpf_bsmp_syncall(objs, 2, LPF_SYNC_DEFAULT);
    pr.check(lpf_send(cnt, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 1) == LPF_SUCCESS, "cnt after reset");
    pr.check(lpf_send(bytes, to, LPF_INVALID_MEMSLOT, 0, ds, 0, 100) == LPF_SUCCESS, "bytes after reset");
    lpf_bsmp_syncall(objs, 2, LPF_SYNC_DEFAULT);
    lpf_move(bytes, &tp, &pp, &n);
    pr.check(n == 100, "full-size message after reset: %zu", n);

    lpf_bsmp_destroy(&bytes);
    lpf_bsmp_destroy(&cnt);
    lpf_deregister(ctx, ds);
    pr.finish(args);
}

TEST_P(Bsmp, Item91_SendingBeyondLimitsIsFullWithoutEffect)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_full, &r), r, GetParam());
}

// ---- creation failures ---------------------------------------------------

void spmd_create_oom(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    pr.begin(0); // register capacity 0: a registration would abort
    lpf_bsmp_t b = reinterpret_cast<lpf_bsmp_t>(&b);
    lpf_err_t rc = lpf_bsmp_create(ctx, s, p, SIZE_MAX, 8, 4, &b);
    pr.check(rc == LPF_ERR_OUT_OF_MEMORY && b == LPF_INVALID_BSMP, "buffer SIZE_MAX: rc %d", rc);
    b = reinterpret_cast<lpf_bsmp_t>(&b);
    rc = lpf_bsmp_create(ctx, s, p, 16, SIZE_MAX - 3, 4, &b);
    pr.check(rc == LPF_ERR_OUT_OF_MEMORY && b == LPF_INVALID_BSMP, "tag SIZE_MAX-3: rc %d", rc);
    rc = lpf_bsmp_create(ctx, s, p, 16, 8, SIZE_MAX / 8, &b);
    pr.check(rc == LPF_ERR_OUT_OF_MEMORY && b == LPF_INVALID_BSMP, "messages SIZE_MAX/8: rc %d", rc);
    pr.check(ct::window_syncs() == 0, "failed creates synced");
    pr.end();
    pr.check(lpf_bsmp_destroy(&b) == LPF_SUCCESS, "destroy of an invalid handle");
    pr.check(lpf_bsmp_sync(LPF_INVALID_BSMP, LPF_SYNC_DEFAULT) == LPF_ERR_BSMP_INVAL, "sync NULL");
    // afterwards a real object works, also with zero limits
    pr.caps(4, 8);
    rc = lpf_bsmp_create(ctx, s, p, 0, 0, 0, &b);
    pr.check(rc == LPF_SUCCESS, "create with zero limits: rc %d", rc);
    pr.check(lpf_send(b, 0, LPF_INVALID_MEMSLOT, 0, LPF_INVALID_MEMSLOT, 0, 0) == LPF_ERR_BSMP_FULL,
            "zero message limit");
    lpf_bsmp_sync(b, LPF_SYNC_DEFAULT);
    void *tp, *pp;
    size_t n;
    lpf_move(b, &tp, &pp, &n);
    pr.check(n == LPF_INVALID_SIZE, "message from nowhere");
    lpf_bsmp_destroy(&b);
    pr.finish(args);
}

TEST_P(Bsmp, CreateFailuresRollBack)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_create_oom, &r), r, GetParam());
}

INSTANTIATE_TEST_SUITE_P(P, Bsmp, ::testing::Values(1u, 2u, 3u, 4u, 8u),
        [](const ::testing::TestParamInfo<unsigned> &i) { return "P" + std::to_string(i.param); });

TEST(BsmpConstants, Values)
{
    EXPECT_EQ(201500L, _LPF_BMSP_VERSION);
    EXPECT_EQ(777, LPF_ERR_BSMP_FULL);
    EXPECT_EQ(778, LPF_ERR_BSMP_INVAL);
    EXPECT_EQ(SIZE_MAX, LPF_INVALID_SIZE);
    EXPECT_EQ(nullptr, LPF_INVALID_BSMP);
    EXPECT_EQ(SIZE_MAX, LPF_INVALID_MEMSLOT);
    EXPECT_EQ(0, static_cast<int>(READ));
    EXPECT_EQ(1, static_cast<int>(WRITE));
}

} // namespace
