// Checklist items 36-46: memory registration (global and local) and
// deregistration.
#include "lpf_test.hpp"

#include <cstring>
#include <vector>

namespace {

using sstest::Checker;
using sstest::Outcome;

// Item 36: registrations on LPF_ROOT, and a put to pid 0.
TEST(RegisterRoot, Item36_RootRegistrationsAndPut)
{
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_memory_register(LPF_ROOT, 2));
    ASSERT_EQ(LPF_SUCCESS, lpf_resize_message_queue(LPF_ROOT, 2));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    char src[16] = "root says hello", dst[16] = { 0 };
    lpf_memslot_t ls, gs;
    ASSERT_EQ(LPF_SUCCESS, lpf_register_global(LPF_ROOT, dst, sizeof dst, &gs));
    ASSERT_EQ(LPF_SUCCESS, lpf_register_local(LPF_ROOT, src, sizeof src, &ls));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    ASSERT_EQ(LPF_SUCCESS, lpf_put(LPF_ROOT, ls, 0, 0, gs, 0, sizeof src, LPF_MSG_DEFAULT));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    EXPECT_STREQ("root says hello", dst);
    // and a get from pid 0 back into the local area
    std::memset(src, 0, sizeof src);
    ASSERT_EQ(LPF_SUCCESS, lpf_get(LPF_ROOT, 0, gs, 5, ls, 0, 4, LPF_MSG_DEFAULT));
    ASSERT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
    EXPECT_EQ(0, std::memcmp(src, "says", 4));
    EXPECT_EQ(LPF_SUCCESS, lpf_deregister(LPF_ROOT, gs));
    EXPECT_EQ(LPF_SUCCESS, lpf_deregister(LPF_ROOT, ls));
    EXPECT_EQ(LPF_SUCCESS, lpf_sync(LPF_ROOT, LPF_SYNC_DEFAULT));
}

// Item 37: a global registration is usable after one sync, and neither
// registering nor the sync touches the memory.
void spmd_global_after_sync(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    unsigned char area[100], got[100];
    for (int i = 0; i < 100; ++i) area[i] = static_cast<unsigned char>(s * 7 + i);
    std::memset(got, 0xee, sizeof got);
    lpf_memslot_t gs, ls;
    SS_OK(c, lpf_register_global(ctx, area, sizeof area, &gs));
    SS_OK(c, lpf_register_local(ctx, got, sizeof got, &ls));
    for (int i = 0; i < 100; ++i) SS_CHECK_EQ(c, area[i], static_cast<unsigned char>(s * 7 + i));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (int i = 0; i < 100; ++i) SS_CHECK_EQ(c, area[i], static_cast<unsigned char>(s * 7 + i));
    for (int i = 0; i < 100; ++i) SS_CHECK_EQ(c, got[i], 0xee);
    const lpf_pid_t right = (s + 1) % p;
    SS_OK(c, lpf_get(ctx, right, gs, 0, ls, 0, sizeof area, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (int i = 0; i < 100; ++i) SS_CHECK_EQ(c, got[i], static_cast<unsigned char>(right * 7 + i));
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

// Item 38: a local registration is usable at once as a put source (and as
// a get destination).
void spmd_local_immediate(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 3));
    SS_OK(c, lpf_resize_message_queue(ctx, 4));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int box[2] = { -1, int(s) * 11 };   // [0]: put destination, [1]: get source
    lpf_memslot_t gs;
    SS_OK(c, lpf_register_global(ctx, box, sizeof box, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int mine = int(s) + 5, fetched = -1;
    lpf_memslot_t ls, ld;
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_register_local(ctx, &fetched, sizeof fetched, &ld));
    SS_OK(c, lpf_get(ctx, (s + 1) % p, gs, sizeof(int), ld, 0, sizeof fetched, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, box[0], int((s + p - 1) % p) + 5);
    SS_CHECK_EQ(c, fetched, int((s + 1) % p) * 11);
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, ld));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

// Item 39: different numbers of local registrations per process, interleaved
// with the global ones, do not disturb the matching of global slots.
void spmd_locals_differ(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const unsigned nloc = (s * 5) % 7;   // 0..6 locals, differing
    SS_OK(c, lpf_resize_memory_register(ctx, 2 * nloc + 4));
    SS_OK(c, lpf_resize_message_queue(ctx, 4));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    std::vector<char> junk(2 * nloc + 1);
    std::vector<lpf_memslot_t> locals;
    auto add_locals = [&](unsigned n) {
        for (unsigned i = 0; i < n; ++i) {
            lpf_memslot_t m;
            SS_OK(c, lpf_register_local(ctx, &junk[locals.size()], 1, &m));
            locals.push_back(m);
        }
    };
    int a = -1, b = -1;
    int src[2] = { int(s) * 10 + 1, int(s) * 10 + 2 };
    lpf_memslot_t ga, gb, ls;
    add_locals(nloc);
    SS_OK(c, lpf_register_global(ctx, &a, sizeof a, &ga));
    add_locals(nloc % 3);
    SS_OK(c, lpf_register_global(ctx, &b, sizeof b, &gb));
    SS_OK(c, lpf_register_local(ctx, src, sizeof src, &ls));
    // drop some locals again, in a process-dependent order
    while (locals.size() > nloc / 2) {
        SS_OK(c, lpf_deregister(ctx, locals.back()));
        locals.pop_back();
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    SS_OK(c, lpf_put(ctx, ls, 0, right, ga, 0, sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, sizeof(int), right, gb, 0, sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, a, int(left) * 10 + 1);
    SS_CHECK_EQ(c, b, int(left) * 10 + 2);
    for (lpf_memslot_t m : locals) SS_OK(c, lpf_deregister(ctx, m));
    SS_OK(c, lpf_deregister(ctx, ga));
    SS_OK(c, lpf_deregister(ctx, gb));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

// Item 40: 1000 register/deregister cycles of 4 global slots in one
// superstep with capacity 4; the table is sound afterwards.
void spmd_cycles(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 4));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int area[4] = { -1, -1, -1, -1 };
    lpf_memslot_t m[4];
    for (int round = 0; round < 1000; ++round) {
        for (int i = 0; i < 4; ++i) SS_OK(c, lpf_register_global(ctx, &area[i], sizeof(int), &m[i]));
        // deregister in a round-dependent order
        for (int i = 0; i < 4; ++i) SS_OK(c, lpf_deregister(ctx, m[(i + round) % 4]));
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (int i = 0; i < 4; ++i) SS_OK(c, lpf_register_global(ctx, &area[i], sizeof(int), &m[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    area[0] = int(s) + 1;
    // from area[0] (global, usable locally) to area[3] of the right neighbour
    SS_OK(c, lpf_put(ctx, m[0], 0, (s + 1) % p, m[3], 0, sizeof(int), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, area[3], int((s + p - 1) % p) + 1);
    SS_CHECK_EQ(c, area[1], -1);
    SS_CHECK_EQ(c, area[2], -1);
    for (int i = 0; i < 4; ++i) SS_OK(c, lpf_deregister(ctx, m[i]));
    sstest::finish(ctx, s, p, args, c);
}

// Item 41: register 16 globals, deregister 15, resize to 2, deregister the
// last: no error.
void spmd_16_15_2(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 16));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    char area[16];
    lpf_memslot_t m[16];
    for (int i = 0; i < 16; ++i) SS_OK(c, lpf_register_global(ctx, area + i, 1, &m[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (int i = 0; i < 15; ++i) SS_OK(c, lpf_deregister(ctx, m[i]));
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_deregister(ctx, m[15]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    // capacity 2 is in force now
    SS_OK(c, lpf_register_global(ctx, area, 1, &m[0]));
    SS_OK(c, lpf_register_local(ctx, area + 1, 1, &m[1]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_deregister(ctx, m[0]));
    SS_OK(c, lpf_deregister(ctx, m[1]));
    sstest::finish(ctx, s, p, args, c);
}

// Item 42: deregistering a local slot does not affect the communication of
// other slots (also slots registered after it, which may reuse its index).
void spmd_dereg_local(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 4));
    SS_OK(c, lpf_resize_message_queue(ctx, 4));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int a = int(s) + 100, b = int(s) + 200, d = -1;
    int dst[2] = { -1, int(s) + 300 };   // [0]: put destination, [1]: get source
    lpf_memslot_t la, lb, ld, gs;
    SS_OK(c, lpf_register_local(ctx, &a, sizeof a, &la));
    SS_OK(c, lpf_register_local(ctx, &b, sizeof b, &lb));
    SS_OK(c, lpf_register_global(ctx, dst, sizeof dst, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_deregister(ctx, la));
    SS_OK(c, lpf_register_local(ctx, &d, sizeof d, &ld));   // may reuse la's index
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    SS_OK(c, lpf_put(ctx, lb, 0, right, gs, 0, sizeof b, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_get(ctx, left, gs, sizeof(int), ld, 0, sizeof d, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, dst[0], int(left) + 200);
    SS_CHECK_EQ(c, d, int(left) + 300);
    SS_CHECK_EQ(c, dst[1], int(s) + 300);
    SS_CHECK_EQ(c, a, int(s) + 100);
    SS_OK(c, lpf_deregister(ctx, lb));
    SS_OK(c, lpf_deregister(ctx, ld));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

// Item 43: register, communicate, deregister, 1000 times: the same result
// every round. Round r+1's slots are registered in round r's superstep (so
// one sync per round activates them and delivers round r's data); round r's
// slots are deregistered in the next superstep, where nothing uses them.
void spmd_rounds(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 4));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    const unsigned rounds = 1000;
    uint64_t mine[2], got[2];
    lpf_memslot_t gs[2], ls[2];
    unsigned bad = 0;
    auto reg = [&](unsigned r) {
        const unsigned k = r % 2;
        mine[k] = (uint64_t(s) << 32) | r;
        got[k] = ~uint64_t(0);
        if (lpf_register_global(ctx, &got[k], sizeof got[k], &gs[k]) != LPF_SUCCESS) bad++;
        if (lpf_register_local(ctx, &mine[k], sizeof mine[k], &ls[k]) != LPF_SUCCESS) bad++;
    };
    reg(0);
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (unsigned r = 0; r < rounds; ++r) {
        const unsigned k = r % 2;
        if (lpf_put(ctx, ls[k], 0, right, gs[k], 0, sizeof mine[k], LPF_MSG_DEFAULT) != LPF_SUCCESS)
            bad++;
        if (r + 1 < rounds) reg(r + 1);
        if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) bad++;
        if (got[k] != ((uint64_t(left) << 32) | r)) bad++;
        if (lpf_deregister(ctx, gs[k]) != LPF_SUCCESS) bad++;
        if (lpf_deregister(ctx, ls[k]) != LPF_SUCCESS) bad++;
    }
    SS_CHECK_EQ(c, bad, 0u);
    sstest::finish(ctx, s, p, args, c);
}

// Item 45 is checked by every SS_OK around a registration call. Item 46:
// zero-size and NULL registrations succeed; a zero-size slot takes part in
// zero-size requests only; pointers of zero-size registrations are mere
// identifiers.
void spmd_zero_size(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 6));
    SS_OK(c, lpf_resize_message_queue(ctx, 8));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_memslot_t g0, l0, gid, lid, gsz, lsz;
    SS_OK(c, lpf_register_global(ctx, nullptr, 0, &g0));
    SS_OK(c, lpf_register_local(ctx, nullptr, 0, &l0));
    // never dereferenced: an identifier only
    void *ident = reinterpret_cast<void *>(uintptr_t(0x1000) + s);
    SS_OK(c, lpf_register_global(ctx, ident, 0, &gid));
    SS_OK(c, lpf_register_local(ctx, ident, 0, &lid));
    // some processes register size 0 for a slot that others register with
    // a size
    int v = -1;
    SS_OK(c, lpf_register_global(ctx, s % 2 ? nullptr : &v, s % 2 ? 0 : sizeof v, &gsz));
    int src = int(s);
    SS_OK(c, lpf_register_local(ctx, &src, sizeof src, &lsz));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p;
    // zero-size requests on zero-size slots are legal and move nothing
    SS_OK(c, lpf_put(ctx, l0, 0, right, g0, 0, 0, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_put(ctx, lid, 0, right, gid, 0, 0, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_get(ctx, right, g0, 0, l0, 0, 0, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_get(ctx, right, gsz, 0, lsz, sizeof src, 0, LPF_MSG_DEFAULT));   // at the end
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, v, -1);
    SS_CHECK_EQ(c, src, int(s));
    // a real put into the slot where the destination registered a size:
    // odd s (size 0) puts to s-1 (even, one int)
    if (s % 2 == 1) SS_OK(c, lpf_put(ctx, lsz, 0, s - 1, gsz, 0, sizeof src, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s % 2 == 0) SS_CHECK_EQ(c, v, s + 1 < p ? int(s) + 1 : -1);
    for (lpf_memslot_t m : { g0, l0, gid, lid, gsz, lsz }) SS_OK(c, lpf_deregister(ctx, m));
    sstest::finish(ctx, s, p, args, c);
}

// A global slot may be deregistered in the superstep it was registered in
// (§6.6); handles stay stable when other slots come and go.
void spmd_dereg_same_step(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 8));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int keep = -1, tmp = 0, src = int(s) * 2;
    lpf_memslot_t gk, gt, ls;
    SS_OK(c, lpf_register_global(ctx, &tmp, sizeof tmp, &gt));
    SS_OK(c, lpf_register_global(ctx, &keep, sizeof keep, &gk));
    SS_OK(c, lpf_deregister(ctx, gt));
    SS_OK(c, lpf_register_local(ctx, &src, sizeof src, &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    // more slots come and go; gk stays valid
    lpf_memslot_t more[5];
    for (int i = 0; i < 5; ++i) SS_OK(c, lpf_register_global(ctx, &tmp, sizeof tmp, &more[i]));
    for (int i = 4; i >= 0; i -= 2) SS_OK(c, lpf_deregister(ctx, more[i]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gk, 0, sizeof src, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, keep, int((s + p - 1) % p) * 2);
    SS_OK(c, lpf_deregister(ctx, more[1]));
    SS_OK(c, lpf_deregister(ctx, more[3]));
    SS_OK(c, lpf_deregister(ctx, gk));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

class Register : public sstest::Procs {};

TEST_P(Register, Item37_GlobalUsableAfterOneSync)
{
    EXPECT_TRUE(sstest::run(P(), spmd_global_after_sync));
}
TEST_P(Register, Item38_LocalUsableAtOnce) { EXPECT_TRUE(sstest::run(P(), spmd_local_immediate)); }
TEST_P(Register, Item39_LocalCountsDiffer) { EXPECT_TRUE(sstest::run(P(), spmd_locals_differ)); }
TEST_P(Register, Item40_ThousandCyclesInOneSuperstep)
{
    EXPECT_TRUE(sstest::run(P(), spmd_cycles));
}
TEST_P(Register, Item41_Sixteen15Two) { EXPECT_TRUE(sstest::run(P(), spmd_16_15_2)); }
TEST_P(Register, Item42_DeregisterLocal) { EXPECT_TRUE(sstest::run(P(), spmd_dereg_local)); }
TEST_P(Register, Item43_ThousandRounds) { EXPECT_TRUE(sstest::run(P(), spmd_rounds)); }
TEST_P(Register, Item46_ZeroSize) { EXPECT_TRUE(sstest::run(P(), spmd_zero_size)); }
TEST_P(Register, DeregisterInSameSuperstep)
{
    EXPECT_TRUE(sstest::run(P(), spmd_dereg_same_step));
}

SS_INSTANTIATE(Register);

} // namespace
