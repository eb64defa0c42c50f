// Checklist items 53-56: write conflicts (arbitrary-order CRCW, §5.4).
// After the sync every destination area must equal the result of applying
// the requests that touched it whole, one after another, in one order:
// complete overlaps give the whole area from one request, partial overlaps
// give every sub-range covered by the same set of requests from one of them
// (consistently with one total order), uncovered bytes stay untouched.
//
// Every source byte encodes the request that carries it: byte x of source
// `id` is code(id, x), and `id` can be decoded from (x, byte). Block sizes
// are odd so that torn words would show.
#include "lpf_test.hpp"

#include <cstring>
#include <vector>

namespace {

using sstest::Checker;
using sstest::Outcome;

constexpr size_t B = 333;          // block size
constexpr unsigned char kUntouched = 0xe7;
constexpr size_t kGuard = 64;      // guard bytes around every destination

unsigned char code(unsigned id, size_t x) { return static_cast<unsigned char>(id * 67 + x * 13 + 5); }

int decode(size_t x, unsigned char b)
{
    // 67 * 107 = 7169 = 28 * 256 + 1: 107 is the inverse of 67 mod 256
    return static_cast<unsigned char>((b - x * 13 - 5) * 107);
}

// A destination area with guards on both sides.
struct Dest {
    explicit Dest(size_t n) : buf(n + 2 * kGuard, kUntouched), size(n) {}
    unsigned char *area() { return buf.data() + kGuard; }
    std::vector<unsigned char> buf;
    size_t size;
};

// Source of [off, off+n) from process/request `id`, positions as in the
// destination (x is the destination position).
void fill_source(std::vector<unsigned char> &src, unsigned id)
{
    for (size_t x = 0; x < src.size(); ++x) src[x] = code(id, x);
}

// The id of block [from, from+n) of d, or -1 if its bytes come from more
// than one request, or -2 if it is untouched.
int block_id(Dest &d, size_t from, size_t n)
{
    const unsigned char *a = d.area();
    bool untouched = true;
    for (size_t i = 0; i < n; ++i) untouched &= a[from + i] == kUntouched;
    if (untouched) return -2;
    int id = decode(from, a[from]);
    for (size_t i = 1; i < n; ++i)
        if (decode(from + i, a[from + i]) != id) return -1;
    return id;
}

void check_guards(Checker &c, Dest &d)
{
    for (size_t i = 0; i < kGuard; ++i) {
        SS_CHECK_EQ(c, d.buf[i], kUntouched);
        SS_CHECK_EQ(c, d.buf[kGuard + d.size + i], kUntouched);
    }
}

void setup(Checker &c, lpf_t ctx, size_t regs, size_t msgs)
{
    SS_OK(c, lpf_resize_memory_register(ctx, regs));
    SS_OK(c, lpf_resize_message_queue(ctx, msgs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
}

// ---------------------------------------------------------------------
// Item 53: complete overlaps
// ---------------------------------------------------------------------

// Every process gets the whole area from every process into one
// destination (p gets), puts its whole area into every process's second
// destination (p puts), and puts two more copies (different sources of its
// own) into a third destination of its right neighbour.
void spmd_complete(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t N = 4096 + 13;
    setup(c, ctx, 6, 4 * p + 6);
    std::vector<unsigned char> src(N), own[2] = { std::vector<unsigned char>(N),
        std::vector<unsigned char>(N) };
    fill_source(src, s);
    for (unsigned r = 0; r < 2; ++r) fill_source(own[r], 100 + 3 * s + r);
    Dest dg(N), dp(N), dm(N);
    lpf_memslot_t gsrc, lown[2], ldg, gdp, gdm;
    SS_OK(c, lpf_register_global(ctx, src.data(), N, &gsrc));
    for (unsigned r = 0; r < 2; ++r) SS_OK(c, lpf_register_local(ctx, own[r].data(), N, &lown[r]));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_register_local(ctx, dg.area(), N, &ldg));
    SS_OK(c, lpf_register_global(ctx, dp.area(), N, &gdp));
    SS_OK(c, lpf_register_global(ctx, dm.area(), N, &gdm));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k) {
        SS_OK(c, lpf_get(ctx, (s + k) % p, gsrc, 0, ldg, 0, N, LPF_MSG_DEFAULT));
        SS_OK(c, lpf_put(ctx, gsrc, 0, (s + k) % p, gdp, 0, N, LPF_MSG_DEFAULT));
    }
    for (unsigned r = 0; r < 2; ++r)
        SS_OK(c, lpf_put(ctx, lown[r], 0, (s + 1) % p, gdm, 0, N, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const int wg = block_id(dg, 0, N), wp = block_id(dp, 0, N), wm = block_id(dm, 0, N);
    SS_CHECK(c, wg >= 0 && wg < int(p));
    SS_CHECK(c, wp >= 0 && wp < int(p));
    const int left = int((s + p - 1) % p);
    SS_CHECK(c, wm == 100 + 3 * left || wm == 100 + 3 * left + 1);
    check_guards(c, dg);
    check_guards(c, dp);
    check_guards(c, dm);
    for (size_t x = 0; x < N; ++x) SS_CHECK_EQ(c, src[x], code(s, x));
    SS_OK(c, lpf_deregister(ctx, gsrc));
    for (unsigned r = 0; r < 2; ++r) SS_OK(c, lpf_deregister(ctx, lown[r]));
    SS_OK(c, lpf_deregister(ctx, ldg));
    SS_OK(c, lpf_deregister(ctx, gdp));
    SS_OK(c, lpf_deregister(ctx, gdm));
    sstest::finish(ctx, s, p, args, c);
}

// ---------------------------------------------------------------------
// Item 54: pyramid (nested) overlapping gets
// ---------------------------------------------------------------------

// The area has 2p blocks; request k (a get from process k) covers blocks
// [k, 2p-k). Block b and its mirror 2p-1-b are covered by requests
// 0..min(b, 2p-1-b): they must hold data of the same request, and the
// winners w(c) of the nested sets {0..c} must come from one total order,
// i.e. w(c) is w(c-1) or c.
void spmd_pyramid(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t nb = 2 * p, N = nb * B;
    setup(c, ctx, 2, 2 * p);
    std::vector<unsigned char> src(N);
    fill_source(src, s);
    Dest d(N);
    lpf_memslot_t gsrc, ld;
    SS_OK(c, lpf_register_global(ctx, src.data(), N, &gsrc));
    SS_OK(c, lpf_register_local(ctx, d.area(), N, &ld));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    // issue in a process-dependent order
    for (lpf_pid_t i = 0; i < p; ++i) {
        const lpf_pid_t k = (s + i) % p;
        SS_OK(c, lpf_get(ctx, k, gsrc, k * B, ld, k * B, (nb - 2 * k) * B, LPF_MSG_DEFAULT));
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int prev = -1;
    for (size_t b = 0; b < p; ++b) {
        const int w = block_id(d, b * B, B), mirror = block_id(d, (nb - 1 - b) * B, B);
        SS_CHECK(c, w >= 0 && w <= int(b));
        SS_CHECK_EQ(c, w, mirror);
        if (b == 0) SS_CHECK_EQ(c, w, 0);
        else SS_CHECK(c, w == prev || w == int(b));
        prev = w;
    }
    check_guards(c, d);
    SS_OK(c, lpf_deregister(ctx, gsrc));
    SS_OK(c, lpf_deregister(ctx, ld));
    sstest::finish(ctx, s, p, args, c);
}

// ---------------------------------------------------------------------
// Items 55 and 56: roof tiling
// ---------------------------------------------------------------------

// The destination has p+2 blocks; tile k covers blocks [k, k+2). Block 0
// comes from tile 0, block j in [1, p) from tile j-1 or j, block p from
// tile p-1, block p+1 is untouched. (Any choice of the pairwise winners is
// consistent with a total order, the constraints forming a chain.)
void check_roof(Checker &c, Dest &d, lpf_pid_t p)
{
    const size_t nb = p + 2;
    SS_CHECK_EQ(c, block_id(d, 0, B), 0);
    for (size_t j = 1; j < p; ++j) {
        const int w = block_id(d, j * B, B);
        SS_CHECK(c, w == int(j) - 1 || w == int(j));
    }
    SS_CHECK_EQ(c, block_id(d, p * B, B), int(p) - 1);
    SS_CHECK_EQ(c, block_id(d, (nb - 1) * B, B), -2);
    check_guards(c, d);
}

// Item 55: every process puts its tile into every process's destination.
void spmd_roof_puts(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t nb = p + 2, N = nb * B;
    setup(c, ctx, 2, 2 * p);
    std::vector<unsigned char> src(N);
    fill_source(src, s);
    Dest d(N);
    lpf_memslot_t ls, gd;
    SS_OK(c, lpf_register_local(ctx, src.data(), N, &ls));
    SS_OK(c, lpf_register_global(ctx, d.area(), N, &gd));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t i = 0; i < p; ++i)
        SS_OK(c, lpf_put(ctx, ls, s * B, (s + i) % p, gd, s * B, 2 * B, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    check_roof(c, d, p);
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gd));
    sstest::finish(ctx, s, p, args, c);
}

// Item 56: the same tiles, but even tiles are put by their owner and odd
// tiles are fetched by the destination with a get; plus a complete overlap
// of puts and gets on a second destination.
void spmd_roof_mixed(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t nb = p + 2, N = nb * B;
    setup(c, ctx, 4, 4 * p);
    std::vector<unsigned char> src(N);
    fill_source(src, s);
    Dest d(N), full(N);
    lpf_memslot_t gs, gd, gfull;
    SS_OK(c, lpf_register_global(ctx, src.data(), N, &gs));
    SS_OK(c, lpf_register_global(ctx, d.area(), N, &gd));
    SS_OK(c, lpf_register_global(ctx, full.area(), N, &gfull));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t i = 0; i < p; ++i) {
        const lpf_pid_t k = (s + i) % p;
        if (s % 2 == 0) {   // our tile goes to everybody by put
            SS_OK(c, lpf_put(ctx, gs, s * B, k, gd, s * B, 2 * B, LPF_MSG_DEFAULT));
            SS_OK(c, lpf_put(ctx, gs, 0, k, gfull, 0, N, LPF_MSG_DEFAULT));
        }
        if (k % 2 == 1) {   // odd tiles we fetch
            SS_OK(c, lpf_get(ctx, k, gs, k * B, gd, k * B, 2 * B, LPF_MSG_DEFAULT));
            SS_OK(c, lpf_get(ctx, k, gs, 0, gfull, 0, N, LPF_MSG_DEFAULT));
        }
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    check_roof(c, d, p);
    const int w = block_id(full, 0, N);
    SS_CHECK(c, w >= 0 && w < int(p));
    check_guards(c, full);
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, gd));
    SS_OK(c, lpf_deregister(ctx, gfull));
    sstest::finish(ctx, s, p, args, c);
}

// Overlaps issued by one process: three puts of its own to the right
// neighbour, [0,3B) from source r0, [B,2B) from r1, [2B,4B) from r2.
void spmd_own_overlaps(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t N = 5 * B;
    setup(c, ctx, 4, 6);
    std::vector<unsigned char> r[3] = { std::vector<unsigned char>(N),
        std::vector<unsigned char>(N), std::vector<unsigned char>(N) };
    for (unsigned i = 0; i < 3; ++i) fill_source(r[i], 10 * s + i);
    Dest d(N);
    lpf_memslot_t lr[3], gd;
    for (unsigned i = 0; i < 3; ++i) SS_OK(c, lpf_register_local(ctx, r[i].data(), N, &lr[i]));
    SS_OK(c, lpf_register_global(ctx, d.area(), N, &gd));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p;
    SS_OK(c, lpf_put(ctx, lr[0], 0, right, gd, 0, 3 * B, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_put(ctx, lr[1], B, right, gd, B, B, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_put(ctx, lr[2], 2 * B, right, gd, 2 * B, 2 * B, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const int L = 10 * int((s + p - 1) % p);
    SS_CHECK_EQ(c, block_id(d, 0, B), L);
    const int b1 = block_id(d, B, B), b2 = block_id(d, 2 * B, B);
    SS_CHECK(c, b1 == L || b1 == L + 1);
    SS_CHECK(c, b2 == L || b2 == L + 2);
    SS_CHECK_EQ(c, block_id(d, 3 * B, B), L + 2);
    SS_CHECK_EQ(c, block_id(d, 4 * B, B), -2);
    check_guards(c, d);
    for (unsigned i = 0; i < 3; ++i) SS_OK(c, lpf_deregister(ctx, lr[i]));
    SS_OK(c, lpf_deregister(ctx, gd));
    sstest::finish(ctx, s, p, args, c);
}

class Conflict : public sstest::Procs {};

TEST_P(Conflict, Item53_CompleteOverlap) { EXPECT_TRUE(sstest::run(P(), spmd_complete)); }
TEST_P(Conflict, Item54_PyramidGets) { EXPECT_TRUE(sstest::run(P(), spmd_pyramid)); }
TEST_P(Conflict, Item55_RoofTilingPuts) { EXPECT_TRUE(sstest::run(P(), spmd_roof_puts)); }
TEST_P(Conflict, Item56_MixedPutsAndGets) { EXPECT_TRUE(sstest::run(P(), spmd_roof_mixed)); }
TEST_P(Conflict, OverlapsFromOneProcess) { EXPECT_TRUE(sstest::run(P(), spmd_own_overlaps)); }

SS_INSTANTIATE(Conflict);

} // namespace
