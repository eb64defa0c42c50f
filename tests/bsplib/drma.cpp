// BSPlib DRMA on the pthread engine: registration stack, buffered put, get
// before put, hp variants, direct get (bsplib.md §5, §6; checklist items 33
// to 52 and 57-62 where they are not errors, 92 and 93). Run-time errors are
// in errors.cpp.
#include "bsp_test.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <vector>

using bsptest::run;

namespace {

// item 34: ring put of 2 words at an offset; changing the source after the
// call does not change what arrives
TEST_P(BspP, RingPutTwoWordsAtOffset)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        long dst[4] = { -1, -1, -1, -1 };
        bsp_push_reg(dst, sizeof dst);
        bsp_sync();
        long src[2] = { 10L * s, 10L * s + 1 };
        bsp_put((s + 1) % P, src, dst, sizeof(long), 2 * sizeof(long));
        src[0] = src[1] = -7;                      // buffered: no effect
        EXPECT_EQ(-1, dst[1]);                     // nothing lands before the sync
        bsp_sync();
        const unsigned from = (s + P - 1) % P;
        EXPECT_EQ(-1, dst[0]);
        EXPECT_EQ(10L * from, dst[1]);
        EXPECT_EQ(10L * from + 1, dst[2]);
        EXPECT_EQ(-1, dst[3]);
        bsp_pop_reg(dst);
        bsp_sync();
    });
}

// large puts (staged apart from small ones) are buffered too, several per
// superstep and per destination, mixed with small ones, over many supersteps
TEST_P(BspP, LargePutsAreBuffered)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        const size_t big = 3 * 4096 + 8, n = 3 * big;   // beyond the large-put threshold
        std::vector<unsigned char> dst(n * P, 0), src(big);
        bsp_push_reg(dst.data(), dst.size());
        bsp_sync();
        for (int step = 0; step < 4; ++step) {
            for (unsigned q = 0; q < P; ++q)
                for (int k = 0; k < 3; ++k) {
                    std::fill(src.begin(), src.end(), static_cast<unsigned char>(s * 16 + k + step));
                    bsp_put(q, src.data(), dst.data(), s * n + k * big, big);
                    unsigned char tiny = static_cast<unsigned char>(200 + k);
                    if (k == 1) bsp_put(q, &tiny, dst.data(), s * n + k * big, 1);   // small, same bytes
                }
            std::fill(src.begin(), src.end(), 0xee);   // buffered: no effect
            bsp_sync();
            for (unsigned q = 0; q < P; ++q)
                for (int k = 0; k < 3; ++k) {
                    const unsigned char want = static_cast<unsigned char>(q * 16 + k + step);
                    const size_t at = q * n + k * big;
                    // overlapping puts of one superstep: either serialisation
                    if (k == 1) EXPECT_TRUE(dst[at] == want || dst[at] == 201);
                    else EXPECT_EQ(want, dst[at]);
                    EXPECT_EQ(want, dst[at + 1]);
                    EXPECT_EQ(want, dst[at + big - 1]);
                }
        }
        bsp_pop_reg(dst.data());
        bsp_sync();
    });
}

// item 35: a put to oneself lands at the sync, not before
TEST_P(BspP, PutToSelfAppliedAtSync)
{
    run(GetParam(), [] {
        int x = 1, v = 2;
        bsp_push_reg(&x, sizeof x);
        bsp_sync();
        bsp_put(bsp_pid(), &v, &x, 0, sizeof v);
        EXPECT_EQ(1, x);
        bsp_sync();
        EXPECT_EQ(2, x);
        bsp_pop_reg(&x);
        bsp_sync();
    });
}

// items 36, 37, 38: gets read the source as it was at sync entry; where a
// get and a put write the same bytes the put wins; a get overwrites a local
// change of its destination
TEST_P(BspP, GetSeesValueAtSyncEntryAndPutWins)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), right = (s + 1) % P, left = (s + P - 1) % P;
        int a = 100 + static_cast<int>(s);     // read by the left neighbour's get
        int both = -1;                          // written by a get and a put
        int loc = -1;                           // get destination changed locally
        bsp_push_reg(&a, sizeof a);
        bsp_push_reg(&both, sizeof both);
        bsp_sync();
        // item 36: get right's a; right's own put into its a lands in the same sync
        int got = -1;
        bsp_get(right, &a, 0, &got, sizeof got);
        int fresh = 500 + static_cast<int>(s);
        bsp_put(s, &fresh, &a, 0, sizeof fresh);
        // item 37: get into `both` from the right, and the left puts into `both`
        bsp_get(right, &a, 0, &both, sizeof both);
        int mark = 900 + static_cast<int>(s);
        bsp_put(right, &mark, &both, 0, sizeof mark);
        // item 38
        bsp_get(right, &a, 0, &loc, sizeof loc);
        loc = 12345;
        EXPECT_EQ(-1, got);                     // not yet
        bsp_sync();
        EXPECT_EQ(100 + static_cast<int>(right), got);
        EXPECT_EQ(500 + static_cast<int>(s), a);
        EXPECT_EQ(900 + static_cast<int>(left), both);
        EXPECT_EQ(100 + static_cast<int>(right), loc);
        bsp_pop_reg(&both);
        bsp_pop_reg(&a);
        bsp_sync();
    });
}

// a get whose source and destination are the same bytes is a no-op
TEST_P(BspP, GetOntoItselfIsNoop)
{
    run(GetParam(), [] {
        int n = bsp_pid() == 0 ? 77 : 0;
        bsp_push_reg(&n, sizeof n);
        bsp_sync();
        bsp_get(0, &n, 0, &n, sizeof n);   // BSPedupack's broadcast idiom
        bsp_sync();
        EXPECT_EQ(77, n);
        bsp_pop_reg(&n);
        bsp_sync();
    });
}

// item 39: overlapping puts of whole blocks: the result is one whole put
TEST_P(BspP, OverlappingPutsLeaveOneWholePut)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        std::vector<uint32_t> area(256, 0);
        bsp_push_reg(area.data(), area.size() * sizeof(uint32_t));
        bsp_sync();
        std::vector<uint32_t> mine(256, s + 1);
        for (unsigned q = 0; q < P; ++q)
            bsp_put(q, mine.data(), area.data(), 0, mine.size() * sizeof(uint32_t));
        bsp_sync();
        const uint32_t w = area[0];
        EXPECT_GE(w, 1u);
        EXPECT_LE(w, P);
        for (uint32_t v : area) EXPECT_EQ(w, v);
        bsp_pop_reg(area.data());
        bsp_sync();
    });
}

// item 40: zero-size requests are no-ops, whatever the pointers
TEST_P(BspP, ZeroSizeRequestsAreNoops)
{
    run(GetParam(), [] {
        int unreg = 5;
        bsp_put(0, nullptr, nullptr, 0, 0);
        bsp_put(0, &unreg, &unreg, 99, 0);
        bsp_get(0, nullptr, 0, nullptr, 0);
        bsp_get(0, &unreg, 1000, &unreg, 0);
        bsp_hpput(0, nullptr, &unreg, 0, 0);
        bsp_hpget(0, &unreg, 0, nullptr, 0);
        bsp_direct_get(0, &unreg, 0, &unreg, 0);
        bsp_sync();
        EXPECT_EQ(5, unreg);
    });
}

// item 33 (positive part): sizes may differ per process; the remote size
// bounds the access
TEST_P(BspP, RegistrationSizesDifferPerProcess)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        std::vector<char> buf(64, 0);
        bsp_push_reg(buf.data(), 4 + 4 * s);     // process q registered 4 + 4q bytes
        bsp_sync();
        const unsigned t = (s + 1) % P;
        std::vector<char> src(4 + 4 * t, static_cast<char>(s + 1));
        bsp_put(t, src.data(), buf.data(), 0, src.size());   // exactly the remote size
        bsp_sync();
        const unsigned from = (s + P - 1) % P;
        for (unsigned i = 0; i < 4 + 4 * s; ++i) EXPECT_EQ(static_cast<char>(from + 1), buf[i]);
        bsp_pop_reg(buf.data());
        bsp_sync();
    });
}

// item 44 (positive part) and NULL registrations: a process that will never
// be accessed registers NULL; self-puts into one's own non-NULL slot work
TEST_P(BspP, NullRegistrationOnSomeProcesses)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        int x[2] = { -1, -1 };
        // odd processes register NULL: only even ones are accessed
        bsp_push_reg(s % 2 ? nullptr : x, s % 2 ? 0 : sizeof x);
        bsp_sync();
        int v = static_cast<int>(s);
        if (s % 2 == 0) {
            bsp_put(s, &v, x, 0, sizeof v);                            // self-put
            if (s + 2 < P) bsp_put(s + 2, &v, x, sizeof(int), sizeof v);
        }
        bsp_sync();
        if (s % 2 == 0) {
            EXPECT_EQ(static_cast<int>(s), x[0]);
            EXPECT_EQ(s >= 2 ? static_cast<int>(s - 2) : -1, x[1]);
        }
        bsp_pop_reg(s % 2 ? nullptr : x);
        bsp_sync();
    });
}

// item 45: push_reg(NULL, 0) once and twice, popped with pop_reg(NULL)
TEST_P(BspP, NullRegistrationsStackAndPop)
{
    run(GetParam(), [] {
        bsp_push_reg(nullptr, 0);
        bsp_sync();
        bsp_push_reg(nullptr, 0);
        bsp_push_reg(nullptr, 123);   // NULL with a size counts as size 0
        bsp_sync();
        bsp_pop_reg(nullptr);
        bsp_pop_reg(nullptr);
        bsp_sync();
        bsp_pop_reg(nullptr);
        bsp_sync();
    });
}

// item 46: identifiers are never dereferenced
TEST_P(BspP, BogusAddressesAsIdentifiers)
{
    run(GetParam(), [] {
        for (uintptr_t a = 1; a <= 31; a += 2) bsp_push_reg(reinterpret_cast<void *>(a), 1000 + a);
        bsp_sync();
        for (uintptr_t a = 31; a >= 1 && a <= 31; a -= 2) bsp_pop_reg(reinterpret_cast<void *>(a));
        bsp_sync();
    });
}

// item 47: 31 addresses x 33 stacked registrations, pushed in one superstep
// and popped in another interleaving, in two rounds
TEST_P(BspP, ManyStackedRegistrations)
{
    run(GetParam(), [] {
        static thread_local char area[31];   // one per process (thread)
        for (int round = 0; round < 2; ++round) {
            for (int k = 0; k < 33; ++k)
                for (int a = 0; a < 31; ++a) bsp_push_reg(&area[a], 1 + k);
            bsp_sync();
            // the newest registration of each address is the widest (33 bytes)
            char v[33] = {};
            bsp_put(bsp_pid(), v, &area[0], 0, 31);
            bsp_sync();
            for (int a = 30; a >= 0; --a)
                for (int k = 0; k < 33; ++k) bsp_pop_reg(&area[(a * 7 + k) % 31]);
            bsp_sync();
        }
        // all gone: still nothing registered, a new push works
        bsp_push_reg(&area[3], 1);
        bsp_sync();
        bsp_pop_reg(&area[3]);
        bsp_sync();
    });
}

// item 48: a stacked registration with a larger size allows a wider put
// after the sync; item 49: a smaller one restricts, popping it restores
TEST_P(BspP, StackedRegistrationChangesTheExtentAfterTheSync)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), t = (s + 1) % P;
        int arr[8] = {};
        int src[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        bsp_push_reg(arr, 2 * sizeof(int));
        bsp_sync();
        bsp_push_reg(arr, 8 * sizeof(int));     // wider, active after the sync
        bsp_put(t, src, arr, 0, 2 * sizeof(int));
        bsp_sync();
        bsp_put(t, src, arr, 0, 8 * sizeof(int));
        bsp_sync();
        EXPECT_EQ(8, arr[7]);
        bsp_push_reg(arr, 1 * sizeof(int));     // narrower
        bsp_sync();
        bsp_put(t, src, arr, 0, sizeof(int));
        bsp_pop_reg(arr);                        // the narrow one goes at the sync
        bsp_sync();
        bsp_put(t, src, arr, 4 * sizeof(int), 4 * sizeof(int));   // 8 ints again
        bsp_sync();
        EXPECT_EQ(1, arr[4]);
        bsp_pop_reg(arr);
        bsp_pop_reg(arr);
        bsp_sync();
    });
}

// items 50, 51: popped registrations stay in use for the rest of the
// superstep; with two pops of a doubly registered address the newest one
// (the wide one) is still the one used
TEST_P(BspP, PoppedRegistrationUsableUntilTheSync)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), t = (s + 1) % P;
        long arr[4] = {};
        long src[4] = { 1, 2, 3, 4 };
        bsp_push_reg(arr, sizeof(long));
        bsp_push_reg(arr, 4 * sizeof(long));
        bsp_sync();
        bsp_pop_reg(arr);
        bsp_pop_reg(arr);
        bsp_put(t, src, arr, 0, 4 * sizeof(long));   // wide: the newest is used
        bsp_sync();
        EXPECT_EQ(4, arr[3]);
        // item 51 on a single registration
        bsp_push_reg(arr, sizeof arr);
        bsp_sync();
        bsp_pop_reg(arr);
        long nine = 9;
        bsp_put(t, &nine, arr, 0, sizeof nine);
        bsp_sync();
        EXPECT_EQ(9, arr[0]);
    });
}

// item 52: pops of different addresses need not follow stack order
TEST_P(BspP, PopsOutOfStackOrder)
{
    const unsigned P = GetParam();
    run(P, [P] {
        int a = 0, b = 0, c = 0;
        bsp_push_reg(&a, sizeof a);
        bsp_push_reg(&b, sizeof b);
        bsp_push_reg(&c, sizeof c);
        bsp_sync();
        bsp_pop_reg(&a);
        bsp_sync();
        // b and c still work
        int v = 3;
        bsp_put((bsp_pid() + 1) % P, &v, &c, 0, sizeof v);
        bsp_put((bsp_pid() + 1) % P, &v, &b, 0, sizeof v);
        bsp_sync();
        EXPECT_EQ(3, b);
        EXPECT_EQ(3, c);
        bsp_pop_reg(&c);
        bsp_pop_reg(&b);
        bsp_sync();
        // a new push after out-of-order pops gets a consistent slot everywhere
        bsp_push_reg(&a, sizeof a);
        bsp_sync();
        bsp_put((bsp_pid() + 1) % P, &v, &a, 0, sizeof v);
        bsp_sync();
        EXPECT_EQ(3, a);
        bsp_pop_reg(&a);
        bsp_sync();
    });
}

// item 57: 100 hpputs of growing size into disjoint ranges
TEST_P(BspP, HpputHundredGrowingMessages)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), t = (s + 1) % P, from = (s + P - 1) % P;
        const size_t total = 100 * 101 / 2;
        std::vector<unsigned char> src(total), dst(total, 0xee);
        for (size_t i = 0; i < total; ++i) src[i] = static_cast<unsigned char>(s * 31 + i);
        bsp_push_reg(dst.data(), total);
        bsp_sync();
        size_t off = 0;
        for (size_t k = 1; k <= 100; ++k) {
            bsp_hpput(t, src.data() + off, dst.data(), off, k);
            off += k;
        }
        bsp_sync();
        for (size_t i = 0; i < total; ++i)
            ASSERT_EQ(static_cast<unsigned char>(from * 31 + i), dst[i]) << "byte " << i;
        bsp_pop_reg(dst.data());
        bsp_sync();
    });
}

// item 58: 100 hpgets of growing size; bytes outside the ranges untouched
TEST_P(BspP, HpgetHundredGrowingMessages)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), t = (s + 1) % P;
        const size_t total = 100 * 101 / 2 + 100;
        std::vector<unsigned char> src(total), dst(total, 0xee);
        for (size_t i = 0; i < total; ++i) src[i] = static_cast<unsigned char>(s * 17 + i);
        bsp_push_reg(src.data(), total);
        bsp_sync();
        size_t off = 0;
        for (size_t k = 1; k <= 100; ++k) {
            // range k lands at [off + k, off + 2k): disjoint, with gaps
            bsp_hpget(t, src.data(), off, dst.data() + off + k, k);
            off += k;
        }
        bsp_sync();
        std::vector<unsigned char> expect(total, 0xee);
        off = 0;
        for (size_t k = 1; k <= 100; ++k) {
            for (size_t i = 0; i < k; ++i)
                expect[off + k + i] = static_cast<unsigned char>(t * 17 + off + i);
            off += k;
        }
        EXPECT_EQ(expect, dst);
        bsp_pop_reg(src.data());
        bsp_sync();
    });
}

// item 59: every process hpgets / hpputs its own slot of an array at pid 0
TEST_P(BspP, HpPerPidSlots)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        std::vector<long> slots(P, -1), readback(P, -1);
        bsp_push_reg(slots.data(), P * sizeof(long));
        bsp_sync();
        long mine = 1000 + s;
        bsp_hpput(0, &mine, slots.data(), s * sizeof(long), sizeof(long));
        bsp_sync();
        if (s == 0) {
            for (unsigned q = 0; q < P; ++q) EXPECT_EQ(1000 + static_cast<long>(q), slots[q]);
        }
        long got = -1;
        for (unsigned q = 0; q < P; ++q)
            bsp_hpget(0, slots.data(), q * sizeof(long), &readback[q], sizeof(long));
        bsp_hpget(0, slots.data(), s * sizeof(long), &got, sizeof(long));
        bsp_sync();
        EXPECT_EQ(1000 + static_cast<long>(s), got);
        for (unsigned q = 0; q < P; ++q) EXPECT_EQ(1000 + static_cast<long>(q), readback[q]);
        bsp_pop_reg(slots.data());
        bsp_sync();
    });
}

// item 61: direct_get from both neighbours, no sync needed
TEST_P(BspP, DirectGetFromNeighbours)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        long data[3] = { 10L * s, 10L * s + 1, 10L * s + 2 };
        bsp_push_reg(data, sizeof data);
        bsp_sync();
        long l = -1, r[2] = { -1, -1 };
        const unsigned left = (s + P - 1) % P, right = (s + 1) % P;
        bsp_direct_get(left, data, 0, &l, sizeof l);
        bsp_direct_get(right, data, sizeof(long), r, 2 * sizeof(long));
        EXPECT_EQ(10L * left, l);
        EXPECT_EQ(10L * right + 1, r[0]);
        EXPECT_EQ(10L * right + 2, r[1]);
        bsp_sync();    // nobody changes data before everybody has read it
        bsp_pop_reg(data);
        bsp_sync();
    });
}

// item 62: a local direct_get with overlapping areas behaves like memmove
TEST_P(BspP, DirectGetOverlappingLocalIsMemmove)
{
    run(GetParam(), [] {
        char buf[16];
        for (int i = 0; i < 16; ++i) buf[i] = static_cast<char>(i);
        bsp_push_reg(buf, sizeof buf);
        bsp_sync();
        bsp_direct_get(bsp_pid(), buf, 0, buf + 4, 8);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(i, buf[i]);
        for (int i = 0; i < 8; ++i) EXPECT_EQ(i, buf[4 + i]);
        for (int i = 12; i < 16; ++i) EXPECT_EQ(i, buf[i]);
        bsp_direct_get(bsp_pid(), buf, 0, buf, 16);   // identical areas: no-op
        EXPECT_EQ(0, buf[0]);
        bsp_sync();
        bsp_pop_reg(buf);
        bsp_sync();
    });
}

// registrations pushed and popped in every superstep, many supersteps: the
// slots stay consistent between processes (the k-th push is the same slot)
TEST_P(BspP, RegistrationChurn)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        std::vector<long> bufs(40, 0);
        for (int step = 0; step < 40; ++step) {
            bsp_push_reg(&bufs[step], sizeof(long));
            if (step >= 3) bsp_pop_reg(&bufs[step - 3]);
            bsp_sync();
            long v = step * 100 + static_cast<long>(s);
            bsp_put((s + 1) % P, &v, &bufs[step], 0, sizeof v);
            bsp_sync();
            EXPECT_EQ(step * 100 + static_cast<long>((s + P - 1) % P), bufs[step]);
        }
        for (int step = 37; step < 40; ++step) bsp_pop_reg(&bufs[step]);
        bsp_sync();
    });
}

// item 92 (functional part): many live registrations; empty syncs stay cheap
// (the cost bound itself is shown by bench_bsplib; here a sync that walked
// the registrations would exceed the test's timeout)
TEST(BspDrma, EmptySyncsWithManyRegistrations)
{
    run(2, [] {
        std::vector<char> area(50000, 0);
        for (int i = 0; i < 50000; ++i) bsp_push_reg(&area[i], 1);
        bsp_sync();
        for (int i = 0; i < 20000; ++i) bsp_sync();
        char v = 7;
        bsp_put(1 - bsp_pid(), &v, &area[49999], 0, 1);
        bsp_sync();
        EXPECT_EQ(7, area[49999]);
        for (int i = 49999; i >= 0; --i) bsp_pop_reg(&area[i]);
        bsp_sync();
    });
}

// item 93: one superstep with many tiny puts
TEST_P(BspP, ManyTinyPuts)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), t = (s + 1) % P;
        const size_t n = 200000 / P;
        std::vector<unsigned char> dst(n, 0);
        bsp_push_reg(dst.data(), n);
        bsp_sync();
        for (size_t i = 0; i < n; ++i) {
            unsigned char v = static_cast<unsigned char>(i * 7 + s);
            bsp_put(t, &v, dst.data(), i, 1);
        }
        bsp_sync();
        const unsigned from = (s + P - 1) % P;
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) bad += dst[i] != static_cast<unsigned char>(i * 7 + from);
        EXPECT_EQ(0u, bad);
        bsp_pop_reg(dst.data());
        bsp_sync();
    });
}

// issue 9, item 1: a get reads its source as it was at the sync's entry,
// also when another get of the same superstep writes that source (every
// process gets its right neighbour's y into its own y); repeated so that a
// race would show; bsp_get and bsp_hpget
TEST_P(BspP, GetReadsSourceThatAnotherGetWrites)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid(), right = (s + 1) % P;
        long y = -1;
        bsp_push_reg(&y, sizeof y);
        bsp_sync();
        unsigned bad = 0;
        for (long it = 1; it <= 300; ++it) {
            y = it * 1000 + s;
            if (it & 1) bsp_get(right, &y, 0, &y, sizeof y);
            else bsp_hpget(right, &y, 0, &y, sizeof y);
            bsp_sync();
            bad += y != it * 1000 + (long)right;
        }
        EXPECT_EQ(0u, bad);
        bsp_pop_reg(&y);
        bsp_sync();
    });
}

INSTANTIATE_TEST_SUITE_P(P, BspP, bsptest::procs());

} // namespace
