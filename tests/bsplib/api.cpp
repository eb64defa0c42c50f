// The bsplib_* object API of <lpf/bsplib.h> (lpf-core.md §11.2; checklist
// items 92-106 of lpf-core.md §14), run through lpf_exec for P = 1, 2, 3,
// 4, 8: with gtest on the pthread engine (test_bsplib_api), with
// bsp_shim.hpp on distributed engines (bsp_checks_api).
#include <lpf/bsplib.h>
#include <lpf/core.h>

#ifdef BSPTEST_USE_SHIM
# include "bsp_shim.hpp"
#else
# include <gtest/gtest.h>
#endif

#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <vector>

namespace {

using Body = std::function<void(lpf_t, lpf_pid_t, lpf_pid_t)>;

#ifdef BSPTEST_SHIM
// On a distributed engine the other processes never ran the test: pid 0
// tells them its index; they run their own instance of the test up to
// exec(), which hands them their context and then unwinds back here.
struct Sibling {
    lpf_t ctx;
    lpf_pid_t s, p;
    bool active;
};
thread_local Sibling sib;
struct SiblingDone {};

int share_index(lpf_t ctx, lpf_pid_t s, lpf_pid_t p)
{
    int idx = s == 0 ? shim::current_index() : -1;
    lpf_memslot_t slot;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, &idx, sizeof idx, &slot);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s != 0) lpf_get(ctx, 0, slot, 0, slot, 0, sizeof idx, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_deregister(ctx, slot);
    return idx;
}
#endif

void trampoline(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
#ifdef BSPTEST_SHIM
    const int idx = share_index(ctx, s, p);
    if (s != 0) {
        sib = { ctx, s, p, true };
        try {
            shim::run_sibling(idx);
        } catch (const SiblingDone &) {
        }
        sib.active = false;
        return;
    }
#endif
    // every process reads the body through the pointer pid 0 got (threads)
    static const Body *shared;
    if (s == 0) __atomic_store_n(&shared, static_cast<const Body *>(args.input), __ATOMIC_RELEASE);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    const Body *b = __atomic_load_n(&shared, __ATOMIC_ACQUIRE);
    (*b)(ctx, s, p);
}

lpf_err_t exec(lpf_pid_t P, const Body &body)
{
#ifdef BSPTEST_SHIM
    if (sib.active) {
        lpf_sync(sib.ctx, LPF_SYNC_DEFAULT);   // pid 0's sync before its body
        body(sib.ctx, sib.s, sib.p);
        throw SiblingDone();
    }
#endif
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &body;
    a.input_size = sizeof body;
    return lpf_exec(LPF_ROOT, P, trampoline, a);
}

bsplib_t make(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, size_t max_hp = SIZE_MAX, int safe = 1)
{
    bsplib_t b = nullptr;
    EXPECT_EQ(BSPLIB_SUCCESS, bsplib_create(ctx, s, p, safe, max_hp, &b));
    return b;
}

class BsplibApi : public ::testing::TestWithParam<unsigned> {};

TEST(BsplibApi, ErrorCodeValues)
{
    EXPECT_EQ(0, BSPLIB_SUCCESS);
    EXPECT_EQ(1, BSPLIB_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(2, BSPLIB_ERR_MEMORY_NOT_REGISTERED);
    EXPECT_EQ(3, BSPLIB_ERR_PUSHREG_MISMATCH);
    EXPECT_EQ(4, BSPLIB_ERR_POPREG_MISMATCH);
    EXPECT_EQ(5, BSPLIB_ERR_TAGSIZE_MISMATCH);
    EXPECT_EQ(6, BSPLIB_ERR_NULL_POINTER);
    EXPECT_EQ(7, BSPLIB_ERR_PID_OUT_OF_RANGE);
    EXPECT_EQ(8, BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE);
    EXPECT_EQ(9, BSPLIB_ERR_EMPTY_MESSAGE_QUEUE);
    EXPECT_EQ(10, BSPLIB_ERR_FATAL);
}

// items 92, 93
TEST_P(BsplibApi, PidNprocsAndTime)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        EXPECT_EQ(s, bsplib_pid(b));
        EXPECT_EQ(p, bsplib_nprocs(b));
        double last = bsplib_time(b);
        EXPECT_GT(last, 0.0);
        for (int i = 0; i < 1000; ++i) {
            double t = bsplib_time(b);
            EXPECT_GT(t, last);
            last = t;
        }
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// items 94, 95: error codes of put/get/push/pop in the documented order
TEST_P(BsplibApi, ErrorCodes)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        int x[4] = {}, y[4] = {}, src[4] = { 1, 2, 3, 4 };
        const lpf_pid_t bad = static_cast<lpf_pid_t>(-1);
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_push_reg(b, nullptr, 4));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_push_reg(b, x, sizeof x));
        // pushed in this superstep: not registered yet
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_put(b, 0, src, x, 0, 4));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_pop_reg(b, x));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        // item 95: zero bytes, anything goes
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, bad, nullptr, nullptr, SIZE_MAX, 0));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_get(b, bad, y, SIZE_MAX, nullptr, 0));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_hpput(b, bad, nullptr, y, 7, 0));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_hpget(b, bad, nullptr, 7, nullptr, 0));
        // NULL first, then registration, then pid, then bounds
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_put(b, bad, nullptr, y, 0, 4));
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_put(b, bad, src, nullptr, 0, 4));
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_get(b, bad, nullptr, 0, y, 4));
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_get(b, bad, x, 0, nullptr, 4));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_put(b, bad, src, y, 0, 4));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_get(b, bad, y, 0, src, 4));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_hpput(b, 0, src, &x[1], 0, 4));
        EXPECT_EQ(BSPLIB_ERR_PID_OUT_OF_RANGE, bsplib_put(b, bad, src, x, 0, 4));
        EXPECT_EQ(BSPLIB_ERR_PID_OUT_OF_RANGE, bsplib_put(b, p, src, x, 0, 4));
        EXPECT_EQ(BSPLIB_ERR_PID_OUT_OF_RANGE, bsplib_get(b, bad, x, 0, y, 4));
        EXPECT_EQ(BSPLIB_ERR_PID_OUT_OF_RANGE, bsplib_hpget(b, p, x, 0, y, 4));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_put(b, 0, src, x, 12, 8));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_get(b, 0, x, SIZE_MAX - 2, y, 4));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_hpput(b, 0, src, x, 0, 17));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_direct_get(b, 0, x, 16, y, 1));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_pop_reg(b, y));
        // n+1 pops after n pushes fail on the last one
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_pop_reg(b, x));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_pop_reg(b, x));
        // BSMP argument errors
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_send(b, 0, nullptr, nullptr, 4));
        EXPECT_EQ(BSPLIB_ERR_PID_OUT_OF_RANGE, bsplib_send(b, bad, nullptr, src, 4));
        EXPECT_EQ(BSPLIB_ERR_PID_OUT_OF_RANGE, bsplib_hpsend(b, p, nullptr, src, 4));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_ERR_EMPTY_MESSAGE_QUEUE, bsplib_move(b, y, 4));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_set_tagsize(b, 4) == 0 ? BSPLIB_SUCCESS : BSPLIB_ERR_FATAL);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_send(b, 0, nullptr, src, 4));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_send(b, s, src, src, 4));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_ERR_NULL_POINTER, bsplib_move(b, nullptr, 4));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_move(b, nullptr, 0));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// item 96: push or pop on only some processes
TEST_P(BsplibApi, PushPopCountMismatch)
{
    const unsigned P = GetParam();
    if (P < 2) GTEST_SKIP() << "needs two processes";
    ASSERT_EQ(LPF_SUCCESS, exec(P, [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        int x = 0, y = 0;
        if (s % 2 == 0) bsplib_push_reg(b, &x, sizeof x);
        EXPECT_EQ(BSPLIB_ERR_PUSHREG_MISMATCH, bsplib_sync(b));
        // rolled back everywhere: a symmetric push works now
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_push_reg(b, &y, sizeof y));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        int v = 5;
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, (s + 1) % p, &v, &y, 0, sizeof v));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_put(b, 0, &v, &x, 0, sizeof v));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(5, y);
        if (s == 1) bsplib_pop_reg(b, &y);
        EXPECT_EQ(BSPLIB_ERR_POPREG_MISMATCH, bsplib_sync(b));
        // still registered everywhere
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, (s + 1) % p, &v, &y, 0, sizeof v));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_pop_reg(b, &y));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// item 97: pops naming different registrations on different processes
TEST_P(BsplibApi, AmbiguousPops)
{
    const unsigned P = GetParam();
    if (P < 2) GTEST_SKIP() << "needs two processes";
    ASSERT_EQ(LPF_SUCCESS, exec(P, [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        int x = 0, y = 0;
        bsplib_push_reg(b, &x, sizeof x);
        bsplib_push_reg(b, &y, sizeof y);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        bsplib_pop_reg(b, s == 0 ? &x : &y);
        EXPECT_EQ(BSPLIB_ERR_POPREG_MISMATCH, bsplib_sync(b));
        bsplib_pop_reg(b, &y);
        bsplib_pop_reg(b, &x);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// item 98: different tag sizes; destroy afterwards succeeds
TEST_P(BsplibApi, TagSizeMismatch)
{
    const unsigned P = GetParam();
    if (P < 2) GTEST_SKIP() << "needs two processes";
    ASSERT_EQ(LPF_SUCCESS, exec(P, [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        bsplib_set_tagsize(b, s == p - 1 ? 8 : 4);
        EXPECT_EQ(BSPLIB_ERR_TAGSIZE_MISMATCH, bsplib_sync(b));
        EXPECT_EQ(0u, bsplib_set_tagsize(b, 0));   // unchanged
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// item 99: get before put; put beats get
TEST_P(BsplibApi, GetBeforePutAndPutWins)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        int a = 10 + static_cast<int>(s), d = -1, got = -1;
        bsplib_push_reg(b, &a, sizeof a);
        bsplib_push_reg(b, &d, sizeof d);
        bsplib_sync(b);
        const lpf_pid_t r = (s + 1) % p;
        int fresh = 50, mark = 90 + static_cast<int>(s);
        bsplib_get(b, r, &a, 0, &got, sizeof got);
        bsplib_put(b, s, &fresh, &a, 0, sizeof fresh);
        bsplib_get(b, r, &a, 0, &d, sizeof d);
        bsplib_put(b, r, &mark, &d, 0, sizeof mark);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(10 + static_cast<int>(r), got);
        EXPECT_EQ(50, a);
        EXPECT_EQ(90 + static_cast<int>((s + p - 1) % p), d);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// items 100, 101: popped registrations stay usable until the sync; the
// newest active one bounds the access; extents change only at the sync
TEST_P(BsplibApi, StackedExtents)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        long arr[8] = {}, src[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        const lpf_pid_t r = (s + 1) % p;
        bsplib_push_reg(b, arr, 2 * sizeof(long));
        bsplib_sync(b);
        bsplib_push_reg(b, arr, 8 * sizeof(long));   // growing
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_put(b, r, src, arr, 0, 3 * sizeof(long)));
        bsplib_sync(b);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, r, src, arr, 0, 8 * sizeof(long)));
        bsplib_push_reg(b, arr, sizeof(long));       // shrinking
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(8, arr[7]);
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_put(b, r, src, arr, 0, 2 * sizeof(long)));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_pop_reg(b, arr));
        // popped, still the one in use: still 1 long
        EXPECT_EQ(BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE, bsplib_put(b, r, src, arr, 0, 2 * sizeof(long)));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, r, src + 2, arr, 0, sizeof(long)));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(3, arr[0]);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, r, src, arr, 0, 8 * sizeof(long)));   // 8 again
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// item 102: a sync that meets a destroy: FATAL from those syncs and from
// every destroy, no hang
TEST_P(BsplibApi, SyncOnOnlySomeProcesses)
{
    const unsigned P = GetParam();
    if (P < 2) GTEST_SKIP() << "needs two processes";
    lpf_err_t rc = exec(P, [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        if (s == p - 1) {
            EXPECT_EQ(BSPLIB_ERR_FATAL, bsplib_destroy(b));
            return;
        }
        EXPECT_EQ(BSPLIB_ERR_FATAL, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_ERR_FATAL, bsplib_destroy(b));
    });
    (void)rc;   // the section itself may report the failure
}

// item 103: 1000 stacked pushes of one address, then balanced pops
TEST_P(BsplibApi, ThousandStackedPushes)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        char area[1000];
        int pushed = 0;
        for (int i = 0; i < 1000; ++i) {
            bsplib_err_t e = bsplib_push_reg(b, area, static_cast<size_t>(i + 1));
            EXPECT_TRUE(e == BSPLIB_SUCCESS || e == BSPLIB_ERR_OUT_OF_MEMORY);
            pushed += e == BSPLIB_SUCCESS;
        }
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        char v[1000] = {};
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_put(b, (s + 1) % p, v, area, 0, static_cast<size_t>(pushed)));
        for (int i = 0; i < pushed; ++i) EXPECT_EQ(BSPLIB_SUCCESS, bsplib_pop_reg(b, area));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_pop_reg(b, area));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_ERR_MEMORY_NOT_REGISTERED, bsplib_put(b, 0, v, area, 0, 1));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// item 104: hpput / hpget / hpsend of 100 growing messages with max_hp_regs
// 0, 10 and SIZE_MAX
class BsplibHp : public ::testing::TestWithParam<std::tuple<unsigned, size_t>> {};

TEST_P(BsplibHp, HundredGrowingMessages)
{
    const unsigned P = std::get<0>(GetParam());
    const size_t maxhp = std::get<1>(GetParam());
    ASSERT_EQ(LPF_SUCCESS, exec(P, [maxhp](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p, maxhp);
        const size_t total = 5050;
        std::vector<unsigned char> src(total), dst(total, 0), got(total, 0);
        for (size_t i = 0; i < total; ++i) src[i] = static_cast<unsigned char>(i * 3 + s);
        bsplib_push_reg(b, src.data(), total);
        bsplib_push_reg(b, dst.data(), total);
        bsplib_set_tagsize(b, sizeof(int));
        bsplib_sync(b);
        const lpf_pid_t r = (s + 1) % p;
        std::vector<int> tags(100);
        size_t off = 0;
        for (size_t k = 1; k <= 100; ++k) {
            tags[k - 1] = static_cast<int>(k);
            EXPECT_EQ(BSPLIB_SUCCESS, bsplib_hpput(b, r, src.data() + off, dst.data(), off, k));
            EXPECT_EQ(BSPLIB_SUCCESS, bsplib_hpget(b, r, src.data(), off, got.data() + off, k));
            EXPECT_EQ(BSPLIB_SUCCESS, bsplib_hpsend(b, r, &tags[k - 1], src.data() + off, k));
            off += k;
        }
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        const lpf_pid_t l = (s + p - 1) % p;
        for (size_t i = 0; i < total; ++i) {
            ASSERT_EQ(static_cast<unsigned char>(i * 3 + l), dst[i]);
            ASSERT_EQ(static_cast<unsigned char>(i * 3 + r), got[i]);
        }
        size_t n = 0;
        bsplib_qsize(b, &n, nullptr);
        EXPECT_EQ(100u, n);
        std::set<int> seen;
        for (size_t i = 0; i < n; ++i) {
            const void *t = nullptr, *pl = nullptr;
            size_t sz = bsplib_hpmove(b, &t, &pl);
            int k;
            std::memcpy(&k, t, sizeof k);
            EXPECT_EQ(static_cast<size_t>(k), sz);
            const size_t o = static_cast<size_t>(k - 1) * static_cast<size_t>(k) / 2;
            const unsigned char *q = static_cast<const unsigned char *>(pl);
            for (size_t j = 0; j < sz; ++j) ASSERT_EQ(static_cast<unsigned char>((o + j) * 3 + l), q[j]);
            seen.insert(k);
        }
        EXPECT_EQ(100u, seen.size());
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// items 105, 106
TEST_P(BsplibApi, TagSizesAndQueue)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        EXPECT_EQ(0u, bsplib_set_tagsize(b, 2));
        EXPECT_EQ(0u, bsplib_set_tagsize(b, 4));
        bsplib_sync(b);
        EXPECT_EQ(4u, bsplib_set_tagsize(b, 8));    // in force: 4; next: 8
        int tag = 700 + static_cast<int>(s);
        for (int k = 1; k <= 3; ++k) {
            std::vector<char> pay(static_cast<size_t>(k), 'a');
            bsplib_send(b, (s + 1) % p, &tag, pay.data(), pay.size());
        }
        size_t n = 9, bytes = 9;
        bsplib_qsize(b, &n, &bytes);
        EXPECT_EQ(0u, n);
        EXPECT_EQ(0u, bytes);
        bsplib_sync(b);
        EXPECT_EQ(8u, bsplib_set_tagsize(b, 8));
        bsplib_qsize(b, &n, &bytes);
        EXPECT_EQ(3u, n);
        EXPECT_EQ(6u, bytes);
        size_t left = 6;
        for (int k = 0; k < 3; ++k) {
            size_t st = 0;
            char t[8];
            std::memset(t, 0x11, sizeof t);
            EXPECT_EQ(BSPLIB_SUCCESS, bsplib_get_tag(b, &st, t));
            int tg;
            std::memcpy(&tg, t, 4);
            EXPECT_EQ(700 + static_cast<int>((s + p - 1) % p), tg);
            EXPECT_EQ(0x11, t[4]);    // the old, 4-byte tag
            char buf[4];
            EXPECT_EQ(BSPLIB_SUCCESS, bsplib_move(b, buf, sizeof buf));
            left -= st;
            bsplib_qsize(b, &n, &bytes);
            EXPECT_EQ(static_cast<size_t>(2 - k), n);
            EXPECT_EQ(left, bytes);
        }
        const void *tp = &tag, *pp = &tag;
        EXPECT_EQ(SIZE_MAX, bsplib_hpmove(b, &tp, &pp));
        EXPECT_EQ(static_cast<const void *>(&tag), tp);
        size_t st = 0;
        bsplib_get_tag(b, &st, nullptr);
        EXPECT_EQ(SIZE_MAX, st);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

// destroy leaves the context clean: the caller can use raw core calls again
TEST_P(BsplibApi, ContextUsableAfterDestroy)
{
    ASSERT_EQ(LPF_SUCCESS, exec(GetParam(), [](lpf_t ctx, lpf_pid_t s, lpf_pid_t p) {
        bsplib_t b = make(ctx, s, p);
        int x = 0;
        bsplib_push_reg(b, &x, sizeof x);
        bsplib_sync(b);
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
        EXPECT_EQ(LPF_SUCCESS, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        b = make(ctx, s, p);      // and a new object on the same context
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_sync(b));
        EXPECT_EQ(BSPLIB_SUCCESS, bsplib_destroy(b));
    }));
}

INSTANTIATE_TEST_SUITE_P(P, BsplibApi, ::testing::Values(1u, 2u, 3u, 4u, 8u));
INSTANTIATE_TEST_SUITE_P(P, BsplibHp, ::testing::Combine(::testing::Values(1u, 2u, 3u, 4u, 8u),
        ::testing::Values(size_t(0), size_t(10), SIZE_MAX)));

} // namespace
