// Checklist items 26-35, 44 and 59: memory-register and message-queue
// capacities, out-of-memory on absurd sizes, delayed shrinking, and the
// counting rule (issued + targeted <= minimum capacity).
#include "lpf_test.hpp"

#include <cstring>
#include <vector>

namespace {

using sstest::Checker;
using sstest::Outcome;

const size_t kAbsurd[] = { SIZE_MAX, SIZE_MAX / 10, SIZE_MAX - 3, SIZE_MAX / 2 + 1,
    SIZE_MAX / 16 };

// ---------------------------------------------------------------------
// Items 26-31 on LPF_ROOT
// ---------------------------------------------------------------------

TEST(CapacityRoot, Item26_ZeroOnRoot)
{
    EXPECT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, 0));
    EXPECT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, 0));
    EXPECT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    EXPECT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
}

// Use `regs` registrations and `msgs` requests on LPF_ROOT (1 process).
void root_use(size_t regs, size_t msgs)
{
    ASSERT_GE(regs, 2u);
    std::vector<int> area(regs, 0);
    std::vector<lpf_memslot_t> slots(regs);
    // regs-1 global destinations and one local source
    int src = 77;
    for (size_t i = 0; i + 1 < regs; ++i)
        ASSERT_EQ(LPF_SUCCESS, lpf_register_global(LPF_ROOT, &area[i], sizeof(int), &slots[i]));
    ASSERT_EQ(LPF_SUCCESS, lpf_register_local(LPF_ROOT, &src, sizeof src, &slots[regs - 1]));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    // a put to oneself counts twice: msgs/2 puts
    for (size_t k = 0; k < msgs / 2; ++k)
        EXPECT_EQ(LPF_SUCCESS, lpf_put(LPF_ROOT, slots[regs - 1], 0, 0, slots[k % (regs - 1)],
                0, sizeof(int), LPF_MSG_DEFAULT));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    for (size_t k = 0; k < msgs / 2 && k < regs - 1; ++k) EXPECT_EQ(77, area[k]);
    for (size_t i = 0; i < regs; ++i) EXPECT_EQ(LPF_SUCCESS, lpf_deregister(LPF_ROOT, slots[i]));
}

TEST(CapacityRoot, Item27_FiveAndSevenOnRoot)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, 5));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, 7));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    root_use(7, 5);
}

TEST(CapacityRoot, Items28to30_AbsurdSizesOnRoot)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, 4));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, 3));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    for (size_t n : kAbsurd) {
        EXPECT_EQ(LPF_ERR_OUT_OF_MEMORY, lpf_resize_message_queue(LPF_ROOT, n)) << n;
        EXPECT_EQ(LPF_ERR_OUT_OF_MEMORY, lpf_resize_memory_register(LPF_ROOT, n)) << n;
    }
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    // item 30: the previous capacity still works
    root_use(3, 4);
}

TEST(CapacityRoot, Item31_ShrinkOnRoot)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, 100));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, 100));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    for (size_t n : { size_t(99), size_t(50), size_t(7), size_t(3), size_t(0) }) {
        EXPECT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, n));
        EXPECT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, n));
    }
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, 6));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, 4));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    root_use(4, 6);
}

// ---------------------------------------------------------------------
// In parallel
// ---------------------------------------------------------------------

// Ring communication that uses exactly `regs` registrations (regs-1 global
// destinations and one local source) and `msgs` >= 2 queue entries per
// process: each process puts msgs/2 ints to its right neighbour (issued
// msgs/2 + targeted msgs/2).
void ring_use(Checker &c, lpf_t ctx, lpf_pid_t s, lpf_pid_t p, size_t regs, size_t msgs)
{
    if (regs < 2 || msgs < 2) {
        c.fail(__FILE__, __LINE__, "ring_use needs 2 registrations and 2 messages");
        return;
    }
    const size_t nglob = regs - 1, nput = msgs / 2;
    std::vector<int> area(nglob * nput, -1);
    std::vector<int> src(nput);
    std::vector<lpf_memslot_t> slots(nglob);
    lpf_memslot_t ls = LPF_INVALID_MEMSLOT;
    for (size_t k = 0; k < nput; ++k) src[k] = int(1000 * s + k);
    for (size_t i = 0; i < nglob; ++i)
        SS_OK(c, lpf_register_global(ctx, &area[i * nput], nput * sizeof(int), &slots[i]));
    SS_OK(c, lpf_register_local(ctx, src.data(), nput * sizeof(int), &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    for (size_t k = 0; k < nput; ++k)
        SS_OK(c, lpf_put(ctx, ls, k * sizeof(int), right, slots[k % nglob], k * sizeof(int),
                sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (size_t k = 0; k < nput; ++k)
        SS_CHECK_EQ(c, area[(k % nglob) * nput + k], int(1000 * left + k));
    for (size_t i = 0; i < nglob; ++i) SS_OK(c, lpf_deregister(ctx, slots[i]));
    SS_OK(c, lpf_deregister(ctx, ls));
}

// Item 27 in parallel.
void spmd_five_seven(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_message_queue(ctx, 5));
    SS_OK(c, lpf_resize_memory_register(ctx, 7));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    ring_use(c, ctx, s, p, 7, 5);
    sstest::finish(ctx, s, p, args, c);
}

// Items 28-30 in parallel: absurd sizes give OUT_OF_MEMORY with no effect;
// the previous capacity stays, also a successful request of the same
// superstep that is still pending.
void spmd_absurd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_message_queue(ctx, 4));
    SS_OK(c, lpf_resize_memory_register(ctx, 3));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (size_t n : kAbsurd) {
        SS_CHECK_EQ(c, lpf_resize_message_queue(ctx, n), LPF_ERR_OUT_OF_MEMORY);
        SS_CHECK_EQ(c, lpf_resize_memory_register(ctx, n), LPF_ERR_OUT_OF_MEMORY);
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    ring_use(c, ctx, s, p, 3, 4);   // item 30
    // a pending request survives a later failed one
    SS_OK(c, lpf_resize_message_queue(ctx, 8));
    SS_OK(c, lpf_resize_memory_register(ctx, 6));
    SS_CHECK_EQ(c, lpf_resize_message_queue(ctx, SIZE_MAX - 3), LPF_ERR_OUT_OF_MEMORY);
    SS_CHECK_EQ(c, lpf_resize_memory_register(ctx, SIZE_MAX - 3), LPF_ERR_OUT_OF_MEMORY);
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    ring_use(c, ctx, s, p, 6, 8);
    sstest::finish(ctx, s, p, args, c);
}

// Item 31: shrinking always succeeds (also below what was ever asked, also
// repeatedly in one superstep); the last request before the sync wins.
void spmd_shrink(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_message_queue(ctx, 64));
    SS_OK(c, lpf_resize_memory_register(ctx, 64));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (size_t n : { size_t(63), size_t(10), size_t(1), size_t(0), size_t(5) }) {
        SS_OK(c, lpf_resize_message_queue(ctx, n));
        SS_OK(c, lpf_resize_memory_register(ctx, n));
    }
    SS_OK(c, lpf_resize_message_queue(ctx, 4));   // last one wins
    SS_OK(c, lpf_resize_memory_register(ctx, 3));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    ring_use(c, ctx, s, p, 3, 4);
    sstest::finish(ctx, s, p, args, c);
}

// Item 32: a queue shrink takes effect only after the sync: 16 puts after
// resize(0) in the same superstep still work.
void spmd_delayed_queue_shrink(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_message_queue(ctx, 32));   // 16 issued + 16 targeted
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int src[16], dst[16];
    for (int k = 0; k < 16; ++k) {
        src[k] = int(s * 100 + k);
        dst[k] = -1;
    }
    lpf_memslot_t ls, gs;
    SS_OK(c, lpf_register_local(ctx, src, sizeof src, &ls));
    SS_OK(c, lpf_register_global(ctx, dst, sizeof dst, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_resize_message_queue(ctx, 0));
    for (int k = 0; k < 16; ++k)
        SS_OK(c, lpf_put(ctx, ls, k * sizeof(int), (s + 1) % p, gs, k * sizeof(int),
                sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (int k = 0; k < 16; ++k) SS_CHECK_EQ(c, dst[k], int(((s + p - 1) % p) * 100 + k));
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));   // an empty superstep with capacity 0
    sstest::finish(ctx, s, p, args, c);
}

// Item 33: a register shrink is delayed too: resize(0) and then 16
// deregistrations in the same superstep; registrations made earlier in the
// same superstep still fit the old capacity.
void spmd_delayed_reg_shrink(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 16));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    char area[16];
    lpf_memslot_t slots[16];
    for (int i = 0; i < 16; ++i)
        SS_OK(c, i % 2 ? lpf_register_global(ctx, area + i, 1, &slots[i])
                       : lpf_register_local(ctx, area + i, 1, &slots[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_resize_memory_register(ctx, 0));
    for (int i = 0; i < 16; ++i) SS_OK(c, lpf_deregister(ctx, slots[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    // again, with registrations in the shrinking superstep itself
    SS_OK(c, lpf_resize_memory_register(ctx, 4));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_resize_memory_register(ctx, 1));
    for (int i = 0; i < 4; ++i) SS_OK(c, lpf_register_global(ctx, area + i, 1, &slots[i]));
    for (int i = 0; i < 3; ++i) SS_OK(c, lpf_deregister(ctx, slots[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_deregister(ctx, slots[3]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    sstest::finish(ctx, s, p, args, c);
}

// Item 34: growth requested in a superstep is usable after the sync (that
// it is not usable before is checked by the misuse test
// register_before_sync), and registrations live across the growth keep
// working.
void spmd_growth(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int keep = -1, mine = int(s) + 10;
    lpf_memslot_t kg, kl;
    SS_OK(c, lpf_register_global(ctx, &keep, sizeof keep, &kg));
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &kl));
    // grow in several steps while the two registrations live
    for (size_t regs : { size_t(5), size_t(40), size_t(300) }) {
        SS_OK(c, lpf_resize_memory_register(ctx, regs));
        SS_OK(c, lpf_resize_message_queue(ctx, regs));
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        ring_use(c, ctx, s, p, regs - 2, regs);
    }
    // the old handles survived every table growth
    SS_OK(c, lpf_put(ctx, kl, 0, (s + 1) % p, kg, 0, sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, keep, int((s + p - 1) % p) + 10);
    SS_OK(c, lpf_deregister(ctx, kg));
    SS_OK(c, lpf_deregister(ctx, kl));
    sstest::finish(ctx, s, p, args, c);
}

// Item 35: shrinking after deregistering keeps the remaining handles valid.
void spmd_shrink_after_dereg(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 6));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int g[4] = { -1, -1, -1, -1 };
    int l[2] = { int(s), int(s) + 100 };
    lpf_memslot_t gs[4], ls[2];
    for (int i = 0; i < 4; ++i) SS_OK(c, lpf_register_global(ctx, &g[i], sizeof(int), &gs[i]));
    for (int i = 0; i < 2; ++i) SS_OK(c, lpf_register_local(ctx, &l[i], sizeof(int), &ls[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    // keep globals 1 and 3 and local 1
    SS_OK(c, lpf_deregister(ctx, gs[0]));
    SS_OK(c, lpf_deregister(ctx, gs[2]));
    SS_OK(c, lpf_deregister(ctx, ls[0]));
    SS_OK(c, lpf_resize_memory_register(ctx, 3));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    SS_OK(c, lpf_put(ctx, ls[1], 0, right, gs[3], 0, sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, gs[3], 0, right, gs[1], 0, sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, g[3], int(left) + 100);
    SS_CHECK_EQ(c, g[1], int((left + p - 1) % p) + 100);
    SS_CHECK_EQ(c, g[0], -1);
    SS_CHECK_EQ(c, g[2], -1);
    SS_OK(c, lpf_deregister(ctx, gs[1]));
    SS_OK(c, lpf_deregister(ctx, gs[3]));
    SS_OK(c, lpf_deregister(ctx, ls[1]));
    sstest::finish(ctx, s, p, args, c);
}

// Item 44: deregistration frees its unit at once, for globals and locals,
// many times within one superstep.
void spmd_dereg_frees(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 1));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    char x[8];
    lpf_memslot_t m;
    for (int i = 0; i < 50; ++i) {
        SS_OK(c, lpf_register_local(ctx, x, sizeof x, &m));
        SS_OK(c, lpf_deregister(ctx, m));
        SS_OK(c, lpf_register_global(ctx, x, sizeof x, &m));
        SS_OK(c, lpf_deregister(ctx, m));
    }
    // the last unit is usable for a working slot: [0] our value (a get's
    // source), [1] the left neighbour's (our get's destination)
    int v[2] = { int(s) * 3, -1 };
    SS_OK(c, lpf_register_global(ctx, v, sizeof v, &m));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_get(ctx, (s + p - 1) % p, m, 0, m, sizeof(int), sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, v[0], int(s) * 3);
    SS_CHECK_EQ(c, v[1], int((s + p - 1) % p) * 3);
    SS_OK(c, lpf_deregister(ctx, m));
    sstest::finish(ctx, s, p, args, c);
}

// Item 59: issued + targeted <= the minimum capacity suffices: pid 0 gets
// from every process (itself included, which counts twice), queue p+1 at
// pid 0 while the others ask for more (the minimum is what counts).
void spmd_counting_rule(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_message_queue(ctx, s == 0 ? p + 1 : 3 * p + s));
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    uint64_t mine = 0xabc000u + s;
    std::vector<uint64_t> all(s == 0 ? p : 1, 0);
    lpf_memslot_t gs, ls;
    SS_OK(c, lpf_register_global(ctx, &mine, sizeof mine, &gs));
    SS_OK(c, lpf_register_local(ctx, all.data(), all.size() * sizeof(uint64_t), &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s == 0)
        for (lpf_pid_t k = 0; k < p; ++k)
            SS_OK(c, lpf_get(ctx, k, gs, 0, ls, k * sizeof(uint64_t), sizeof(uint64_t),
                    LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s == 0)
        for (lpf_pid_t k = 0; k < p; ++k) SS_CHECK_EQ(c, all[k], uint64_t(0xabc000u + k));
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

// Capacities may differ per process (§13): each process registers as many
// slots as it asked for.
void spmd_different_capacities(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t mine = 2 + s;
    SS_OK(c, lpf_resize_memory_register(ctx, mine + 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    std::vector<char> x(mine);
    std::vector<lpf_memslot_t> ls(mine);
    for (size_t i = 0; i < mine; ++i) SS_OK(c, lpf_register_local(ctx, &x[i], 1, &ls[i]));
    ring_use(c, ctx, s, p, 2, 2);   // one global + one local more
    for (size_t i = 0; i < mine; ++i) SS_OK(c, lpf_deregister(ctx, ls[i]));
    sstest::finish(ctx, s, p, args, c);
}

// §5.5: the library's own bookkeeping (e.g. exchanging global
// registrations inside the sync) uses none of the user's queue capacity:
// with a queue of exactly 2 (one put issued, one targeted), globals come
// and go in the same superstep as the put.
void spmd_bookkeeping(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 8));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int mine = int(s) + 3, got = -1;
    char junk[6];
    lpf_memslot_t ls, gs, extra[6];
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_register_global(ctx, &got, sizeof got, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (int round = 0; round < 3; ++round) {
        SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
        for (int i = 0; i < 6; ++i) SS_OK(c, lpf_register_global(ctx, junk + i, 1, &extra[i]));
        for (int i = 0; i < 6; i += 2) SS_OK(c, lpf_deregister(ctx, extra[i]));
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        SS_CHECK_EQ(c, got, int((s + p - 1) % p) + 3);
        for (int i = 1; i < 6; i += 2) SS_OK(c, lpf_deregister(ctx, extra[i]));
    }
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

class Capacity : public sstest::Procs {};

TEST_P(Capacity, Item27_FiveAndSeven) { EXPECT_TRUE(sstest::run(P(), spmd_five_seven)); }
TEST_P(Capacity, Items28to30_AbsurdSizes) { EXPECT_TRUE(sstest::run(P(), spmd_absurd)); }
TEST_P(Capacity, Item31_Shrink) { EXPECT_TRUE(sstest::run(P(), spmd_shrink)); }
TEST_P(Capacity, Item32_DelayedQueueShrink)
{
    EXPECT_TRUE(sstest::run(P(), spmd_delayed_queue_shrink));
}
TEST_P(Capacity, Item33_DelayedRegisterShrink)
{
    EXPECT_TRUE(sstest::run(P(), spmd_delayed_reg_shrink));
}
TEST_P(Capacity, Item34_GrowthAfterSync) { EXPECT_TRUE(sstest::run(P(), spmd_growth)); }
TEST_P(Capacity, Item35_ShrinkAfterDeregister)
{
    EXPECT_TRUE(sstest::run(P(), spmd_shrink_after_dereg));
}
TEST_P(Capacity, Item44_DeregisterFreesAtOnce) { EXPECT_TRUE(sstest::run(P(), spmd_dereg_frees)); }
TEST_P(Capacity, Item59_CountingRule) { EXPECT_TRUE(sstest::run(P(), spmd_counting_rule)); }
TEST_P(Capacity, BookkeepingUsesNoUserCapacity)
{
    EXPECT_TRUE(sstest::run(P(), spmd_bookkeeping));
}
TEST_P(Capacity, DifferentCapacitiesPerProcess)
{
    EXPECT_TRUE(sstest::run(P(), spmd_different_capacities));
}

SS_INSTANTIATE(Capacity);

} // namespace
