// <lpf/collectives.h>: checklist items 77-88 of spec/lpf-core.md §14, for
// P = 1, 2, 3, 4, 8, plus subsets (init_strided). Every data check is
// exact; every operation runs inside a window that checks the message-queue
// bound of §10 superstep by superstep and counts the internal syncs, whose
// digest must agree on all processes (item 88).
#include <lpf/collectives.h>
#include <lpf/abort.h>

#include "coll_ext.h"
#include "coll_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using ct::Proc;
using ct::Result;
using ct::fill;

const size_t kBig = size_t(1) << 19;     // 2^19 bytes
const size_t kBigPrime = 524287;         // 2^19 - 1, prime
const size_t kSmallPrimes[] = { 1, 2, 3, 7, 13, 1021 };
const sstep_coll_algorithm kAlgos[] = { SSTEP_COLL_AUTO, SSTEP_COLL_DIRECT, SSTEP_COLL_TWO_PHASE };

// message-queue bounds of §10
size_t q_bcast(size_t P) { return std::max(P + 1, 2 * P > 3 ? 2 * P - 3 : 0); }
size_t q_gather(size_t P) { return P - 1; }
size_t q_allgather(size_t P) { return 2 * P; }
size_t q_alltoall(size_t P) { return 2 * P - 2; }
size_t q_reduce(size_t P) { return P - 1; }
size_t q_allreduce(size_t P) { return 2 * P - 2; }
size_t q_combine(size_t P) { return 2 * P; }

// registers `size` bytes globally, zero size allowed
lpf_memslot_t reg_global(Proc &pr, void *p, size_t n)
{
    lpf_memslot_t s = LPF_INVALID_MEMSLOT;
    EXPECT_EQ(LPF_SUCCESS, lpf_register_global(pr.ctx, p, n, &s));
    return s;
}
lpf_memslot_t reg_local(Proc &pr, void *p, size_t n)
{
    lpf_memslot_t s = LPF_INVALID_MEMSLOT;
    EXPECT_EQ(LPF_SUCCESS, lpf_register_local(pr.ctx, p, n, &s));
    return s;
}

void expect_ok(lpf_err_t rc, const Result &r, lpf_pid_t P)
{
    EXPECT_EQ(LPF_SUCCESS, rc);
    EXPECT_EQ(1, r.ran);
    EXPECT_GE(r.nprocs, 1);
    EXPECT_LE(r.nprocs, static_cast<long>(P));
    EXPECT_EQ(0, r.errors);
    EXPECT_EQ(0, r.sync_mismatch) << "processes made different numbers of syncs";
    EXPECT_EQ(0, r.violations) << "a superstep exceeded the message-queue bound";
    EXPECT_GT(r.windows, 0);
}

class Coll : public ::testing::TestWithParam<unsigned> {};

// ---- item 77: all-zero buffer sizes: success, no slot, no sync ----------

void spmd_init_zero(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    // capacity 0 for registrations: any registration would abort
    pr.begin(0);
    lpf_coll_t coll = LPF_INVALID_COLL;
    lpf_err_t rc = lpf_collectives_init(ctx, s, p, 1, 0, 0, &coll);
    size_t syncs = ct::window_syncs();
    pr.check(rc == LPF_SUCCESS, "init with zero sizes returned %d", rc);
    pr.check(syncs == 0, "init with zero sizes made %zu syncs", syncs);
    pr.check(coll.slot == LPF_INVALID_MEMSLOT, "init with zero sizes has a slot");
    pr.check(coll.buffer == nullptr, "init with zero sizes has a buffer");
    pr.check(coll.P == p && coll.s == s, "P %u s %u", coll.P, coll.s);
    pr.check(lpf_collectives_get_context(coll) == ctx, "get_context");
    for (lpf_pid_t k = 0; k < p; ++k)
        pr.check(coll.translate[k] == k && coll.inv_translate[k] == k, "translate %u", k);
    // zero-size operations and operations without buffer needs still work
    pr.check(lpf_broadcast(coll, LPF_INVALID_MEMSLOT, LPF_INVALID_MEMSLOT, 0, 0) == LPF_SUCCESS, "bcast 0");
    pr.check(lpf_reduce(coll, nullptr, LPF_INVALID_MEMSLOT, 0, nullptr, 0) == LPF_SUCCESS, "reduce 0");
    pr.check(lpf_allcombine(coll, nullptr, LPF_INVALID_MEMSLOT, 0, 8, nullptr) == LPF_SUCCESS, "allcombine 0");
    pr.check(ct::window_syncs() == 0, "zero-size operations synced");
    pr.check(lpf_collectives_destroy(coll) == LPF_SUCCESS, "destroy");
    pr.sync();
    pr.end();
    pr.finish(args);
}

TEST_P(Coll, Item77_InitWithZeroBuffersUsesNoSlotAndNoSync)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_init_zero, &r), r, GetParam());
}

// ---- item 78: four objects with register capacity 4 --------------------

void add_longs(size_t n, const void *a, void *v)
{
    const long *x = static_cast<const long *>(a);
    long *acc = static_cast<long *>(v);
    for (size_t i = 0; i < n; ++i) *acc += x[i];
}

void spmd_four(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    pr.caps(4, 0);
    pr.begin(0);
    lpf_coll_t c[4];
    for (int i = 0; i < 4; ++i) {
        lpf_err_t rc = lpf_collectives_init(ctx, s, p, 1, sizeof(long), 16 * (i + 1), &c[i]);
        pr.check(rc == LPF_SUCCESS, "init %d returned %d", i, rc);
        pr.check(c[i].slot != LPF_INVALID_MEMSLOT, "object %d has no slot", i);
    }
    pr.check(ct::window_syncs() == 4, "4 inits made %zu syncs", ct::window_syncs());
    for (int i = 0; i < 4; ++i)
        pr.check(lpf_collectives_destroy(c[i]) == LPF_SUCCESS, "destroy %d", i);
    pr.sync();
    pr.end();

    // again, and use all four at once (each needs the slot of its element)
    pr.caps(8, 2 * p);
    long v[4];
    lpf_memslot_t vs[4];
    for (int i = 0; i < 4; ++i) {
        lpf_collectives_init(ctx, s, p, 1, sizeof(long), 0, &c[i]);
        v[i] = (i + 1) * 1000 + s;
        vs[i] = reg_global(pr, &v[i], sizeof v[i]);
    }
    pr.sync();
    for (int i = 0; i < 4; ++i) {
        pr.begin(q_allreduce(p));
        lpf_allreduce(c[i], &v[i], vs[i], sizeof(long), add_longs);
        pr.sync();
        pr.end();
        long want = (i + 1) * 1000L * p + static_cast<long>(p) * (p - 1) / 2;
        pr.check(v[i] == want, "object %d: allreduce %ld, want %ld", i, v[i], want);
    }
    for (int i = 0; i < 4; ++i) {
        lpf_deregister(ctx, vs[i]);
        lpf_collectives_destroy(c[i]);
    }
    pr.finish(args);
}

TEST_P(Coll, Item78_FourObjectsWithRegisterCapacityFour)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_four, &r), r, GetParam());
}

// ---- items 79, 80: overflowing buffer sizes ----------------------------

void spmd_overflow(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    pr.begin(0);
    lpf_coll_t coll = LPF_INVALID_COLL;
    lpf_err_t rc = lpf_collectives_init(ctx, s, p, 1, SIZE_MAX, 0, &coll);
    pr.check(rc == LPF_ERR_OUT_OF_MEMORY, "max_elem_size SIZE_MAX: rc %d", rc);
    rc = lpf_collectives_init(ctx, s, p, 1, 0, SIZE_MAX, &coll);
    pr.check(rc == LPF_ERR_OUT_OF_MEMORY, "max_byte_size SIZE_MAX: rc %d", rc);
    if (p > 1) {
        rc = lpf_collectives_init(ctx, s, p, 1, SIZE_MAX / p + 1, 0, &coll);
        pr.check(rc == LPF_ERR_OUT_OF_MEMORY, "max_elem_size SIZE_MAX/p+1: rc %d", rc);
        rc = lpf_collectives_init(ctx, s, p, 1, 1, SIZE_MAX / p + 1, &coll);
        pr.check(rc == LPF_ERR_OUT_OF_MEMORY, "max_byte_size SIZE_MAX/p+1: rc %d", rc);
        rc = lpf_collectives_init_strided(ctx, s, p, 0, p, 1, 1, SIZE_MAX / p + 1, 0, &coll);
        pr.check(rc == LPF_ERR_OUT_OF_MEMORY, "strided SIZE_MAX/p+1: rc %d", rc);
    }
    pr.check(ct::window_syncs() == 0, "failed inits synced");
    pr.end();
    // nothing was registered (capacity 0 would have aborted); a normal
    // init works afterwards
    pr.caps(1, 0);
    rc = lpf_collectives_init(ctx, s, p, 1, 8, 8, &coll);
    pr.check(rc == LPF_SUCCESS, "init after failures: rc %d", rc);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Items79_80_OverflowingSizesGiveOutOfMemory)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_overflow, &r), r, GetParam());
}

// ---- item 81: broadcast ------------------------------------------------

struct BcastCase { size_t size; lpf_pid_t root; sstep_coll_algorithm algo; bool same; };

void spmd_bcast(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    std::vector<BcastCase> cases;
    std::vector<lpf_pid_t> roots = { 0, p / 2, p - 1 };
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    for (size_t n : kSmallPrimes)
        for (lpf_pid_t r : roots)
            for (auto a : kAlgos)
                for (bool same : { true, false }) cases.push_back({ n, r, a, same });
    for (size_t n : { kBig, kBigPrime })
        for (auto a : kAlgos)
            for (bool same : { true, false }) cases.push_back({ n, p / 2, a, same });

    std::vector<unsigned char> src(kBig), dst(kBig);
    // registers: coll (none: zero sizes), src, dst
    pr.caps(2, q_bcast(p));
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, 0, 0, &coll);
    lpf_memslot_t src_slot = reg_global(pr, src.data(), src.size());
    // dst: a local slot at non-roots; a global one at the root so that we
    // can see that nothing is written there
    lpf_memslot_t dst_local = reg_local(pr, dst.data(), dst.size());
    pr.sync();

    unsigned seed = 1;
    for (const BcastCase &c : cases) {
        ++seed;
        sstep_coll_set_algorithm(coll, c.algo);
        const bool root = s == c.root;
        if (root) fill(src.data(), c.size, seed);
        else std::memset(src.data(), 0xA5, c.size);
        std::memset(dst.data(), 0x5A, c.size);
        lpf_memslot_t d = c.same ? src_slot : (root && s % 2 == 0 ? LPF_INVALID_MEMSLOT : dst_local);
        sstep_coll_algorithm used = sstep_coll_broadcast_algorithm(coll, c.size);
        pr.begin(q_bcast(p));
        lpf_err_t rc = lpf_broadcast(coll, src_slot, d, c.size, c.root);
        size_t syncs = ct::window_syncs();
        pr.sync();
        pr.end();
        pr.check(rc == LPF_SUCCESS, "broadcast rc %d", rc);
        size_t want_syncs = (used == SSTEP_COLL_TWO_PHASE) ? 1 : 0;
        pr.check(syncs == want_syncs, "broadcast of %zu made %zu syncs, algorithm %d",
                c.size, syncs, used);
        if (c.algo == SSTEP_COLL_TWO_PHASE && p >= 3 && c.size >= p - 1)
            pr.check(used == SSTEP_COLL_TWO_PHASE, "two-phase not used");
        if (c.algo == SSTEP_COLL_DIRECT)
            pr.check(used == SSTEP_COLL_DIRECT, "direct not used");
        if (root) {
            size_t at = ct::first_diff(src.data(), c.size, seed);
            pr.check(at == c.size, "root's src changed at %zu (size %zu)", at, c.size);
            at = ct::first_not(dst.data(), c.size, 0x5A);
            pr.check(at == c.size, "root's dst written at %zu (size %zu)", at, c.size);
        } else {
            const unsigned char *got = c.same ? src.data() : dst.data();
            size_t at = ct::first_diff(got, c.size, seed);
            pr.check(at == c.size, "broadcast size %zu root %u algo %d same %d: byte %zu wrong",
                    c.size, c.root, used, c.same, at);
        }
    }
    lpf_deregister(ctx, dst_local);
    lpf_deregister(ctx, src_slot);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Item81_BroadcastPrimeAndLargeSizes)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_bcast, &r), r, GetParam());
}

// ---- item 82: gather and scatter ---------------------------------------

void spmd_gather_scatter(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    std::vector<unsigned char> mine(kBig), all(p * kBig);
    pr.caps(3, q_gather(p));
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, 0, 0, &coll);
    lpf_memslot_t mine_g = reg_global(pr, mine.data(), mine.size());
    lpf_memslot_t mine_l = reg_local(pr, mine.data(), mine.size());
    lpf_memslot_t all_g = reg_global(pr, all.data(), all.size());
    pr.sync();

    unsigned seed = 100;
    for (size_t size : { kBig, size_t(13), size_t(1) }) {
        for (lpf_pid_t root : { lpf_pid_t(0), p / 2, p - 1 }) {
            if (size == kBig && root != p / 2) continue; // one root for the big size
            // gather: src local at odd pids, global at even ones, invalid at root
            ++seed;
            fill(mine.data(), size, seed + s * 7919);
            std::memset(all.data(), 0xEE, p * size);
            lpf_memslot_t src = s == root ? LPF_INVALID_MEMSLOT : (s % 2 ? mine_l : mine_g);
            pr.begin(q_gather(p));
            lpf_err_t rc = lpf_gather(coll, src, all_g, size, root);
            pr.check(ct::window_syncs() == 0, "gather synced");
            pr.sync();
            pr.end();
            pr.check(rc == LPF_SUCCESS, "gather rc %d", rc);
            for (lpf_pid_t k = 0; k < p; ++k) {
                const unsigned char *blk = all.data() + k * size;
                size_t at;
                if (s == root && k != root) {
                    at = ct::first_diff(blk, size, seed + k * 7919);
                    pr.check(at == size, "gather size %zu root %u: block %u byte %zu", size, root, k, at);
                } else {
                    at = ct::first_not(blk, size, 0xEE);
                    pr.check(at == size, "gather size %zu root %u: block %u written at pid %u",
                            size, root, k, s);
                }
            }
            size_t at = ct::first_diff(mine.data(), size, seed + s * 7919);
            pr.check(at == size, "gather changed src");

            // scatter: dst local at odd pids, global at even ones
            ++seed;
            if (s == root) fill(all.data(), p * size, seed);
            else std::memset(all.data(), 0xEE, p * size);
            std::memset(mine.data(), 0x11, size);
            lpf_memslot_t dst = s % 2 ? mine_l : mine_g;
            pr.begin(q_gather(p));
            rc = lpf_scatter(coll, all_g, dst, size, root);
            pr.check(ct::window_syncs() == 0, "scatter synced");
            pr.sync();
            pr.end();
            pr.check(rc == LPF_SUCCESS, "scatter rc %d", rc);
            if (s == root) {
                at = ct::first_not(mine.data(), size, 0x11);
                pr.check(at == size, "scatter wrote at the root");
                at = ct::first_diff(all.data(), p * size, seed);
                pr.check(at == p * size, "scatter changed root's src");
            } else {
                std::vector<unsigned char> want(p * size);
                fill(want.data(), p * size, seed);
                pr.check(std::memcmp(mine.data(), want.data() + s * size, size) == 0,
                        "scatter size %zu root %u: wrong block", size, root);
            }
        }
    }
    lpf_deregister(ctx, all_g);
    lpf_deregister(ctx, mine_l);
    lpf_deregister(ctx, mine_g);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Item82_GatherScatterLargeBlocks)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_gather_scatter, &r), r, GetParam());
}

// ---- item 83: allgather, also in place ----------------------------------

void spmd_allgather(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const size_t sizes[] = { 1, 7, 1021, kBig / 4 };
    std::vector<unsigned char> src(kBig / 4), dst(p * (kBig / 4));
    pr.caps(4, q_allgather(p));
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, 0, 0, &coll);
    lpf_memslot_t src_l = reg_local(pr, src.data(), src.size());
    lpf_memslot_t dst_g = reg_global(pr, dst.data(), dst.size());
    pr.sync();
    unsigned seed = 300;
    for (size_t size : sizes) {
        for (bool exclude : { false, true }) {
            for (bool inplace : { false, true }) {
                if (inplace && !exclude) continue; // in place: own block is the source
                ++seed;
                std::memset(dst.data(), 0x77, p * size);
                lpf_memslot_t alias = LPF_INVALID_MEMSLOT, sl = src_l;
                if (inplace) {
                    fill(dst.data() + s * size, size, seed + s * 31);
                    alias = reg_local(pr, dst.data() + s * size, size);
                    sl = alias;
                } else {
                    fill(src.data(), size, seed + s * 31);
                }
                pr.begin(q_allgather(p));
                lpf_err_t rc = lpf_allgather(coll, sl, dst_g, size, exclude);
                pr.check(ct::window_syncs() == 0, "allgather synced");
                pr.sync();
                pr.end();
                pr.check(rc == LPF_SUCCESS, "allgather rc %d", rc);
                for (lpf_pid_t k = 0; k < p; ++k) {
                    const unsigned char *blk = dst.data() + k * size;
                    size_t at;
                    if (k != s || inplace || (!exclude && p > 1)) {
                        at = ct::first_diff(blk, size, seed + k * 31);
                    } else {
                        at = ct::first_not(blk, size, 0x77);
                    }
                    pr.check(at == size, "allgather size %zu exclude %d inplace %d: block %u byte %zu",
                            size, exclude, inplace, k, at);
                }
                if (inplace) lpf_deregister(ctx, alias);
            }
        }
    }
    lpf_deregister(ctx, dst_g);
    lpf_deregister(ctx, src_l);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Item83_AllgatherAlsoInPlace)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_allgather, &r), r, GetParam());
}

// ---- item 84: alltoall --------------------------------------------------

void spmd_alltoall(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const size_t maxsize = 65537;
    std::vector<unsigned char> src(p * maxsize), dst(p * maxsize);
    pr.caps(3, q_alltoall(p));
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, 0, 0, &coll);
    lpf_memslot_t src_g = reg_global(pr, src.data(), src.size());
    lpf_memslot_t dst_g = reg_global(pr, dst.data(), dst.size());
    pr.sync();
    unsigned seed = 500;
    for (size_t size : { size_t(1), size_t(8), size_t(101), maxsize }) {
        ++seed;
        // block k of s's src carries seed (s, k)
        for (lpf_pid_t k = 0; k < p; ++k) fill(src.data() + k * size, size, seed * 977 + s * 64 + k);
        std::memset(dst.data(), 0x33, p * size);
        pr.begin(q_alltoall(p));
        lpf_err_t rc = lpf_alltoall(coll, src_g, dst_g, size);
        pr.check(ct::window_syncs() == 0, "alltoall synced");
        pr.sync();
        pr.end();
        pr.check(rc == LPF_SUCCESS, "alltoall rc %d", rc);
        for (lpf_pid_t k = 0; k < p; ++k) {
            size_t at;
            if (k == s) at = ct::first_not(dst.data() + k * size, size, 0x33);
            else at = ct::first_diff(dst.data() + k * size, size, seed * 977 + k * 64 + s);
            pr.check(at == size, "alltoall size %zu: block from %u byte %zu%s", size, k, at,
                    k == s ? " (diagonal written)" : "");
            at = ct::first_diff(src.data() + k * size, size, seed * 977 + s * 64 + k);
            pr.check(at == size, "alltoall changed src block %u", k);
        }
    }
    lpf_deregister(ctx, dst_g);
    lpf_deregister(ctx, src_g);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Item84_AlltoallDiagonalUntouched)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_alltoall, &r), r, GetParam());
}

// ---- items 85, 86: reduce and allreduce --------------------------------

void min_doubles(size_t n, const void *a, void *v)
{
    const double *x = static_cast<const double *>(a);
    double *m = static_cast<double *>(v);
    for (size_t i = 0; i < n; ++i)
        if (x[i] < *m) *m = x[i];
}

void sum_doubles(size_t n, const void *a, void *v)
{
    const double *x = static_cast<const double *>(a);
    double *m = static_cast<double *>(v);
    for (size_t i = 0; i < n; ++i) *m += x[i];
}

// 13-byte elements, reduced byte-wise with max
struct Odd { unsigned char b[13]; };
void max_bytes(size_t n, const void *a, void *v)
{
    const Odd *x = static_cast<const Odd *>(a);
    Odd *m = static_cast<Odd *>(v);
    for (size_t i = 0; i < n; ++i)
        for (int j = 0; j < 13; ++j) m->b[j] = std::max(m->b[j], x[i].b[j]);
}

double value_of(lpf_pid_t k, int round) { return 1000.25 - 3.5 * ((k * 5 + round) % 11) + 0.1 * k; }

void spmd_reduce(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    pr.caps(3, q_allreduce(p));
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, sizeof(Odd), 0, &coll);
    double x = 0;
    Odd o;
    lpf_memslot_t xs = reg_global(pr, &x, sizeof x);
    lpf_memslot_t os = reg_global(pr, &o, sizeof o);
    pr.sync();
    for (int round = 0; round < 6; ++round) {
        for (lpf_pid_t root : { lpf_pid_t(0), p / 2, p - 1 }) {
            // item 85: min over doubles at the root, queue p-1
            x = value_of(s, round);
            double want = value_of(0, round);
            for (lpf_pid_t k = 1; k < p; ++k) want = std::min(want, value_of(k, round));
            pr.begin(q_reduce(p));
            lpf_err_t rc = lpf_reduce(coll, &x, xs, sizeof x, min_doubles, root);
            size_t syncs = ct::window_syncs();
            pr.sync();
            pr.end();
            pr.check(rc == LPF_SUCCESS, "reduce rc %d", rc);
            pr.check(syncs == (p > 1 ? 1u : 0u), "reduce made %zu syncs", syncs);
            if (s == root) pr.check(x == want, "reduce root %u: %.17g, want %.17g", root, x, want);
            else pr.check(x == value_of(s, round), "reduce changed a non-root element");

            // odd-sized elements
            for (int j = 0; j < 13; ++j) o.b[j] = static_cast<unsigned char>((s * 37 + j * 11 + round) % 251);
            pr.begin(q_reduce(p));
            rc = lpf_reduce(coll, &o, os, sizeof o, max_bytes, root);
            pr.sync();
            pr.end();
            if (s == root) {
                for (int j = 0; j < 13; ++j) {
                    unsigned char w = 0;
                    for (lpf_pid_t k = 0; k < p; ++k)
                        w = std::max(w, static_cast<unsigned char>((k * 37 + j * 11 + round) % 251));
                    pr.check(o.b[j] == w, "reduce of 13-byte elements: byte %d %u want %u", j, o.b[j], w);
                }
            }
        }
        // item 86: allreduce, everywhere; the sum of fractional doubles is
        // folded in member order on every process: bit-identical results
        x = value_of(s, round) / 3.0;
        double want = value_of(0, round) / 3.0;
        std::vector<double> rest;
        for (lpf_pid_t k = 1; k < p; ++k) rest.push_back(value_of(k, round) / 3.0);
        sum_doubles(rest.size(), rest.data(), &want);
        pr.begin(q_allreduce(p));
        lpf_err_t rc = lpf_allreduce(coll, &x, xs, sizeof x, sum_doubles);
        size_t syncs = ct::window_syncs();
        pr.sync();
        pr.end();
        pr.check(rc == LPF_SUCCESS, "allreduce rc %d", rc);
        pr.check(syncs == (p > 1 ? 1u : 0u), "allreduce made %zu syncs", syncs);
        pr.check(std::memcmp(&x, &want, sizeof x) == 0, "allreduce sum %.17g, want %.17g", x, want);

        x = value_of(s, round);
        want = value_of(0, round);
        for (lpf_pid_t k = 1; k < p; ++k) want = std::min(want, value_of(k, round));
        pr.begin(q_allreduce(p));
        lpf_allreduce(coll, &x, xs, sizeof x, min_doubles);
        pr.sync();
        pr.end();
        pr.check(x == want, "allreduce min %.17g, want %.17g", x, want);
    }
    lpf_deregister(ctx, os);
    lpf_deregister(ctx, xs);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Items85_86_ReduceAndAllreduce)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_reduce, &r), r, GetParam());
}

// ---- item 87: combine (root p/2) and allcombine ------------------------

void add_doubles(size_t n, const void *c, void *into)
{
    const double *a = static_cast<const double *>(c);
    double *b = static_cast<double *>(into);
    for (size_t i = 0; i < n; ++i) b[i] += a[i];
}

double elem(lpf_pid_t k, size_t i, unsigned seed, bool frac)
{
    double v = static_cast<double>((k * 131 + i * 7 + seed) % 1000);
    return frac ? v / 7.0 + 0.001 * k : v;
}

void spmd_combine(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const size_t maxnum = 16411; // prime
    std::vector<double> a(maxnum), want(maxnum), part(maxnum);
    pr.caps(2, q_combine(p));
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, 0, maxnum * sizeof(double), &coll);
    lpf_memslot_t as = reg_global(pr, a.data(), a.size() * sizeof(double));
    pr.sync();
    unsigned seed = 7;
    for (size_t num : { size_t(1), size_t(7), size_t(13), size_t(1021), maxnum }) {
        for (auto algo : kAlgos) {
            sstep_coll_set_algorithm(coll, algo);
            for (bool all : { false, true }) {
                for (bool frac : { false, true }) {
                    ++seed;
                    for (size_t i = 0; i < num; ++i) {
                        a[i] = elem(s, i, seed, frac);
                        want[i] = elem(0, i, seed, frac);
                    }
                    // expected: fold in member order (bit-exact for fractions)
                    for (lpf_pid_t k = 1; k < p; ++k) {
                        for (size_t i = 0; i < num; ++i) part[i] = elem(k, i, seed, frac);
                        add_doubles(num, part.data(), want.data());
                    }
                    const lpf_pid_t root = p / 2;
                    pr.begin(q_combine(p));
                    lpf_err_t rc = all
                        ? lpf_allcombine(coll, a.data(), as, num, sizeof(double), add_doubles)
                        : lpf_combine(coll, a.data(), as, num, sizeof(double), add_doubles, root);
                    size_t syncs = ct::window_syncs();
                    pr.sync();
                    pr.end();
                    pr.check(rc == LPF_SUCCESS, "combine rc %d", rc);
                    pr.check(syncs == (p > 1 ? 1u : 0u), "combine made %zu syncs", syncs);
                    if (all || s == root) {
                        size_t bad = num;
                        for (size_t i = 0; i < num && bad == num; ++i)
                            if (std::memcmp(&a[i], &want[i], sizeof(double)) != 0) bad = i;
                        pr.check(bad == num, "%s num %zu algo %d frac %d: element %zu is %.17g, want %.17g",
                                all ? "allcombine" : "combine", num,
                                sstep_coll_combine_algorithm(coll, num, sizeof(double)), frac, bad,
                                bad < num ? a[bad] : 0.0, bad < num ? want[bad] : 0.0);
                    }
                }
            }
        }
    }
    lpf_deregister(ctx, as);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Item87_CombineAndAllcombine)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_combine, &r), r, GetParam());
}

// ---- item 88: the same number of internal syncs everywhere -------------

// Every operation once, in one program; each window's sync count is
// compared across processes (digest) and against the documented counts.
void spmd_sync_counts(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const size_t n = 4099;
    std::vector<double> a(p * n), b(p * n);
    double x = s;
    pr.caps(4, 4 * p);
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, sizeof(double), n * sizeof(double), &coll);
    lpf_memslot_t as = reg_global(pr, a.data(), a.size() * sizeof(double));
    lpf_memslot_t bs = reg_global(pr, b.data(), b.size() * sizeof(double));
    lpf_memslot_t xs = reg_global(pr, &x, sizeof x);
    pr.sync();
    const size_t one = p > 1 ? 1 : 0;
    auto expect = [&](const char *what, size_t want) {
        size_t got = ct::window_syncs();
        pr.sync();
        pr.end();
        pr.check(got == want, "%s made %zu internal syncs, want %zu", what, got, want);
    };
    for (auto algo : kAlgos) {
        sstep_coll_set_algorithm(coll, algo);
        for (size_t bytes : { size_t(8), n * sizeof(double) }) {
            pr.begin(4 * p);
            lpf_broadcast(coll, as, as, bytes, 0);
            expect("broadcast",
                    sstep_coll_broadcast_algorithm(coll, bytes) == SSTEP_COLL_TWO_PHASE ? 1 : 0);
        }
        pr.begin(4 * p); lpf_gather(coll, as, bs, n, 0); expect("gather", 0);
        pr.begin(4 * p); lpf_scatter(coll, as, bs, n, 0); expect("scatter", 0);
        pr.begin(4 * p); lpf_allgather(coll, as, bs, n, false); expect("allgather", 0);
        pr.begin(4 * p); lpf_alltoall(coll, as, bs, n); expect("alltoall", 0);
        pr.begin(4 * p); lpf_reduce(coll, &x, xs, sizeof x, sum_doubles, p - 1); expect("reduce", one);
        pr.begin(4 * p); lpf_allreduce(coll, &x, xs, sizeof x, sum_doubles); expect("allreduce", one);
        for (size_t num : { size_t(1), n }) {
            pr.begin(4 * p);
            lpf_combine(coll, a.data(), as, num, sizeof(double), add_doubles, 0);
            expect("combine", one);
            pr.begin(4 * p);
            lpf_allcombine(coll, a.data(), as, num, sizeof(double), add_doubles);
            expect("allcombine", one);
        }
    }
    lpf_deregister(ctx, xs);
    lpf_deregister(ctx, bs);
    lpf_deregister(ctx, as);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, Item88_SameNumberOfInternalSyncsEverywhere)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_sync_counts, &r), r, GetParam());
}

// ---- several non-syncing collectives in one superstep -------------------

void spmd_mixed(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const size_t n = 97;
    std::vector<unsigned char> a(p * n), g(p * n), t(p * n), ag(p * n), x(n);
    const size_t bound = q_gather(p) + q_alltoall(p) + q_allgather(p) + q_bcast(p);
    pr.caps(6, bound);
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 4, 0, 0, &coll);
    lpf_memslot_t as = reg_global(pr, a.data(), a.size());
    lpf_memslot_t gs = reg_global(pr, g.data(), g.size());
    lpf_memslot_t ts = reg_global(pr, t.data(), t.size());
    lpf_memslot_t ags = reg_global(pr, ag.data(), ag.size());
    lpf_memslot_t xs = reg_global(pr, x.data(), x.size());
    pr.sync();
    for (lpf_pid_t k = 0; k < p; ++k) fill(a.data() + k * n, n, 40 + s * 16 + k);
    fill(x.data(), n, s == 0 ? 9999u : 1u);
    sstep_coll_set_algorithm(coll, SSTEP_COLL_DIRECT);
    pr.begin(bound);
    lpf_gather(coll, as, gs, n, p - 1);
    lpf_alltoall(coll, as, ts, n);
    lpf_allgather(coll, as, ags, n, true);
    lpf_broadcast(coll, xs, xs, n, 0);
    pr.check(ct::window_syncs() == 0, "non-syncing collectives synced");
    pr.sync();
    pr.end();
    for (lpf_pid_t k = 0; k < p; ++k) {
        if (s == p - 1 && k != s)
            pr.check(ct::first_diff(g.data() + k * n, n, 40 + k * 16) == n, "gather block %u", k);
        if (k != s) {
            pr.check(ct::first_diff(t.data() + k * n, n, 40 + k * 16 + s) == n, "alltoall block %u", k);
            pr.check(ct::first_diff(ag.data() + k * n, n, 40 + k * 16) == n, "allgather block %u", k);
        }
    }
    pr.check(ct::first_diff(x.data(), n, 9999u) == n, "broadcast");
    for (lpf_memslot_t m : { xs, ags, ts, gs, as }) lpf_deregister(ctx, m);
    lpf_collectives_destroy(coll);
    pr.finish(args);
}

TEST_P(Coll, NonSyncingCollectivesShareOneSuperstep)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_mixed, &r), r, GetParam());
}

// ---- subsets: init_strided ---------------------------------------------

void spmd_strided(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    struct Sub { lpf_pid_t lo, hi, str; };
    const Sub subs[] = { { 0, p, 1 }, { 1, p, 2 }, { 0, p, 2 }, { p / 2, p, 1 }, { 0, p, 3 },
        { p - 1, p + 5, 1 } };
    const size_t n = 4096 + 7;
    std::vector<double> a(p * n), b(p * n);
    double x = 0;
    pr.caps(4, 4 * p);
    lpf_memslot_t as = reg_global(pr, a.data(), a.size() * sizeof(double));
    lpf_memslot_t bs = reg_global(pr, b.data(), b.size() * sizeof(double));
    lpf_memslot_t xs = reg_global(pr, &x, sizeof x);
    pr.sync();
    unsigned seed = 1;
    for (const Sub &sub : subs) {
        lpf_coll_t coll;
        lpf_err_t rc = lpf_collectives_init_strided(ctx, s, p, sub.lo, sub.hi, sub.str, 1,
                sizeof(double), n * sizeof(double), &coll);
        pr.check(rc == LPF_SUCCESS, "init_strided rc %d", rc);
        // membership
        std::vector<lpf_pid_t> members;
        for (lpf_pid_t q = sub.lo; q < std::min(sub.hi, p); q += sub.str) members.push_back(q);
        const lpf_pid_t P = static_cast<lpf_pid_t>(members.size());
        pr.check(coll.P == P, "subset (%u,%u,%u): P %u want %u", sub.lo, sub.hi, sub.str, coll.P, P);
        lpf_pid_t me = LPF_MAX_P;
        for (lpf_pid_t k = 0; k < P; ++k) {
            pr.check(coll.translate[k] == members[k], "translate[%u]", k);
            if (members[k] == s) me = k;
        }
        for (lpf_pid_t q = 0; q < p; ++q) {
            lpf_pid_t want = LPF_MAX_P;
            for (lpf_pid_t k = 0; k < P; ++k) if (members[k] == q) want = k;
            pr.check(coll.inv_translate[q] == want, "inv_translate[%u] %u want %u", q,
                    coll.inv_translate[q], want);
        }
        pr.check(coll.s == me, "coll.s %u want %u", coll.s, me);
        const bool member = me != LPF_MAX_P;

        for (auto algo : kAlgos) {
            if (P == 0) break; // no members: nothing to call
            sstep_coll_set_algorithm(coll, algo);
            ++seed;
            // broadcast from member root P-1 (may sync: everyone calls)
            const size_t bytes = n * sizeof(double);
            if (member && me == P - 1) fill(a.data(), bytes, seed);
            else std::memset(a.data(), 0x44, bytes);
            pr.begin(4 * p);
            lpf_broadcast(coll, as, as, bytes, P - 1);
            pr.sync();
            pr.end();
            size_t at = member ? ct::first_diff(a.data(), bytes, seed) : ct::first_not(a.data(), bytes, 0x44);
            pr.check(at == bytes, "subset (%u,%u,%u) algo %d broadcast byte %zu (member %d)",
                    sub.lo, sub.hi, sub.str, algo, at, member);

            // allreduce of member indices
            x = member ? static_cast<double>(me + 1) : -5.0;
            pr.begin(4 * p);
            lpf_allreduce(coll, &x, xs, sizeof x, sum_doubles);
            pr.sync();
            pr.end();
            double want = member ? P * (P + 1) / 2.0 : -5.0;
            pr.check(x == want, "subset allreduce %g want %g (member %d)", x, want, member);

            // allcombine
            for (size_t i = 0; i < n; ++i) a[i] = member ? static_cast<double>(i + me) : -1.0;
            pr.begin(4 * p);
            lpf_allcombine(coll, a.data(), as, n, sizeof(double), add_doubles);
            pr.sync();
            pr.end();
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; ++i) {
                double w = member ? static_cast<double>(P * i) + P * (P - 1) / 2.0 : -1.0;
                if (a[i] != w) bad = i;
            }
            pr.check(bad == n, "subset allcombine element %zu (member %d)", bad, member);

            // allgather among members; non-members untouched
            for (size_t i = 0; i < n; ++i) a[i] = member ? me * 1000.0 + i : -1.0;
            std::fill(b.begin(), b.end(), -2.0);
            pr.begin(4 * p);
            lpf_allgather(coll, as, bs, n * sizeof(double), false);
            pr.sync();
            pr.end();
            bad = b.size();
            for (size_t i = 0; i < b.size() && bad == b.size(); ++i) {
                // P == 1: nothing happens, not even the own block's copy
                double w = (member && P > 1 && i < P * n) ? (i / n) * 1000.0 + i % n : -2.0;
                if (b[i] != w) bad = i;
            }
            pr.check(bad == b.size(), "subset allgather element %zu (member %d)", bad, member);
        }
        lpf_collectives_destroy(coll);
    }
    lpf_deregister(ctx, xs);
    lpf_deregister(ctx, bs);
    lpf_deregister(ctx, as);
    pr.finish(args);
}

TEST_P(Coll, StridedSubsets)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_strided, &r), r, GetParam());
}

// lpf_collectives_init with p smaller than the context: pids >= p take part
// in the registration and the syncs as non-members
void spmd_first_q(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Proc pr(ctx, s, p);
    const lpf_pid_t q = p > 1 ? p - 1 : 1;
    double x = s + 1.0;
    pr.caps(2, 2 * p);
    lpf_memslot_t xs = reg_global(pr, &x, sizeof x);
    lpf_coll_t coll;
    pr.begin(0);
    lpf_err_t rc = lpf_collectives_init(ctx, s, q, 1, sizeof x, 0, &coll);
    pr.check(rc == LPF_SUCCESS && ct::window_syncs() == 1, "init rc %d", rc);
    pr.end();
    const bool member = s < q;
    pr.check(coll.P == q && coll.s == (member ? s : LPF_MAX_P), "P %u s %u", coll.P, coll.s);
    pr.begin(2 * q);
    lpf_allreduce(coll, &x, xs, sizeof x, sum_doubles);
    pr.sync();
    pr.end();
    double want = member ? q * (q + 1) / 2.0 : s + 1.0;
    pr.check(x == want, "allreduce over the first %u: %g want %g", q, x, want);
    lpf_collectives_destroy(coll);
    lpf_deregister(ctx, xs);
    pr.finish(args);
}

TEST_P(Coll, InitOverTheFirstProcessesOnly)
{
    Result r;
    expect_ok(ct::run(GetParam(), spmd_first_q, &r), r, GetParam());
}

INSTANTIATE_TEST_SUITE_P(P, Coll, ::testing::Values(1u, 2u, 3u, 4u, 8u),
        [](const ::testing::TestParamInfo<unsigned> &i) { return "P" + std::to_string(i.param); });

// ---- constants and programming errors -----------------------------------

TEST(CollConstants, InvalidCollAndVersion)
{
    EXPECT_EQ(201500L, _LPF_COLLECTIVES_VERSION);
    EXPECT_EQ(nullptr, LPF_INVALID_COLL.translate);
    EXPECT_EQ(nullptr, LPF_INVALID_COLL.inv_translate);
    EXPECT_EQ(nullptr, LPF_INVALID_COLL.buffer);
    EXPECT_EQ(LPF_INVALID_MEMSLOT, LPF_INVALID_COLL.slot);
    lpf_coll_t c = LPF_INVALID_COLL;
    c.ctx = LPF_ROOT;
    EXPECT_EQ(LPF_ROOT, lpf_collectives_get_context(c));
}

void spmd_bad_root(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    lpf_coll_t coll;
    lpf_collectives_init(ctx, s, p, 1, 0, 0, &coll);
    lpf_gather(coll, LPF_INVALID_MEMSLOT, LPF_INVALID_MEMSLOT, 8, p); // root == P
}

TEST(CollDeathTest, RootOutOfRangeAborts)
{
    const char *e = std::getenv("SUPERSTEP_ENGINE");
    if (e && *e && std::strcmp(e, "pthread") != 0) GTEST_SKIP() << "death test on the pthread engine only";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(lpf_exec(LPF_ROOT, 2, spmd_bad_root, LPF_NO_ARGS),
            ::testing::ExitedWithCode(6), "lpf_gather.*root 2 is out of range");
}

} // namespace
