// Checklist items 47-50, 52 and 57-63 (requests issued before a nested
// exec are in hook.cpp): lpf_put, lpf_get and lpf_sync.
#include "lpf_test.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using sstest::Checker;
using sstest::Outcome;

void setup(Checker &c, lpf_t ctx, size_t regs, size_t msgs)
{
    SS_OK(c, lpf_resize_memory_register(ctx, regs));
    SS_OK(c, lpf_resize_message_queue(ctx, msgs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
}

// Item 47: a ring put of an int is delivered by the sync, not before.
void spmd_ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 2);
    int mine = int(s) * 3 + 1, got = -1;
    lpf_memslot_t ls, gs;
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_register_global(ctx, &got, sizeof got, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    // our engines move data inside lpf_sync only
    SS_CHECK_EQ(c, got, -1);
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, got, int((s + p - 1) % p) * 3 + 1);
    SS_CHECK_EQ(c, mine, int(s) * 3 + 1);
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

unsigned char pat(unsigned who, size_t i) { return static_cast<unsigned char>(who * 37 + i * 11 + 1); }

// Items 48 and 49: non-zero offsets land on exactly the right bytes; the
// source is not modified; nothing else is touched. Also offsets at the end
// of an area (size 0 at offset == size, last byte).
void spmd_offsets(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 8);
    unsigned char src[64], dst[64];
    for (size_t i = 0; i < 64; ++i) {
        src[i] = pat(s, i);
        dst[i] = 0xee;
    }
    lpf_memslot_t ls, gs;
    SS_OK(c, lpf_register_local(ctx, src, sizeof src, &ls));
    SS_OK(c, lpf_register_global(ctx, dst, sizeof dst, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    SS_OK(c, lpf_put(ctx, ls, 5, right, gs, 17, 23, LPF_MSG_DEFAULT));    // dst[17..40)
    SS_OK(c, lpf_put(ctx, ls, 63, right, gs, 63, 1, LPF_MSG_DEFAULT));    // the last byte
    SS_OK(c, lpf_put(ctx, ls, 64, right, gs, 64, 0, LPF_MSG_DEFAULT));    // empty, at the end
    SS_OK(c, lpf_put(ctx, ls, 0, right, gs, 0, 0, LPF_MSG_DEFAULT));      // empty
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (size_t i = 0; i < 64; ++i) {
        SS_CHECK_EQ(c, src[i], pat(s, i));   // item 49
        unsigned char want = 0xee;
        if (i >= 17 && i < 40) want = pat(left, i - 17 + 5);
        if (i == 63) want = pat(left, 63);
        SS_CHECK_EQ(c, dst[i], want);
    }
    // gets with offsets, from the right neighbour's src... src is local
    // there, so get from its dst (global) into our src: [40, 63) of the
    // right neighbour's dst (untouched 0xee) and its byte 63
    SS_OK(c, lpf_get(ctx, right, gs, 17, ls, 1, 23, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_get(ctx, right, gs, 64, ls, 64, 0, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, src[0], pat(s, 0));
    for (size_t i = 1; i < 24; ++i) SS_CHECK_EQ(c, src[i], pat(s, i - 1 + 5));
    for (size_t i = 24; i < 64; ++i) SS_CHECK_EQ(c, src[i], pat(s, i));
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

// Item 50: all-to-all with p gets per process and queue 2p transposes.
void spmd_transpose(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 2 * p);
    std::vector<uint32_t> row(p), col(p, ~0u);
    for (lpf_pid_t k = 0; k < p; ++k) row[k] = s * 1000 + k;
    lpf_memslot_t gr, lc;
    SS_OK(c, lpf_register_global(ctx, row.data(), p * sizeof(uint32_t), &gr));
    SS_OK(c, lpf_register_local(ctx, col.data(), p * sizeof(uint32_t), &lc));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k)
        SS_OK(c, lpf_get(ctx, k, gr, s * sizeof(uint32_t), lc, k * sizeof(uint32_t),
                sizeof(uint32_t), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k) {
        SS_CHECK_EQ(c, col[k], k * 1000 + s);
        SS_CHECK_EQ(c, row[k], s * 1000 + k);
    }
    SS_OK(c, lpf_deregister(ctx, gr));
    SS_OK(c, lpf_deregister(ctx, lc));
    sstest::finish(ctx, s, p, args, c);
}

// Item 52: blocks of ~100 KB to every process over several supersteps.
void spmd_big_blocks(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t B = 100 * 1000 + 7;
    setup(c, ctx, 2, 2 * p);
    std::vector<unsigned char> out(B), in(B * p);
    lpf_memslot_t lo, gi;
    SS_OK(c, lpf_register_local(ctx, out.data(), B, &lo));
    SS_OK(c, lpf_register_global(ctx, in.data(), B * p, &gi));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    unsigned bad = 0;
    for (unsigned step = 0; step < 4; ++step) {
        for (size_t i = 0; i < B; ++i) out[i] = static_cast<unsigned char>(s + 3 * step + i * 7);
        for (lpf_pid_t k = 0; k < p; ++k) {
            const lpf_pid_t to = (s + k) % p;
            SS_OK(c, lpf_put(ctx, lo, 0, to, gi, s * B, B, LPF_MSG_DEFAULT));
        }
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (lpf_pid_t k = 0; k < p; ++k)
            for (size_t i = 0; i < B; ++i)
                if (in[k * B + i] != static_cast<unsigned char>(k + 3 * step + i * 7)) bad++;
    }
    SS_CHECK_EQ(c, bad, 0u);
    SS_OK(c, lpf_deregister(ctx, lo));
    SS_OK(c, lpf_deregister(ctx, gi));
    sstest::finish(ctx, s, p, args, c);
}

// Item 57: processes that nobody targets keep their memory; only pid 0 is
// written to.
void spmd_untargeted(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, p + 1);
    std::vector<uint32_t> area(p, 0xdead0000u + s);
    uint32_t mine = 0xbeef0000u + s;
    lpf_memslot_t ga, lm;
    SS_OK(c, lpf_register_global(ctx, area.data(), p * sizeof(uint32_t), &ga));
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &lm));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, lm, 0, 0, ga, s * sizeof(uint32_t), sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k)
        SS_CHECK_EQ(c, area[k], s == 0 ? 0xbeef0000u + k : 0xdead0000u + s);
    SS_OK(c, lpf_deregister(ctx, ga));
    SS_OK(c, lpf_deregister(ctx, lm));
    sstest::finish(ctx, s, p, args, c);
}

// Item 58: puts and gets to oneself (each counts twice against the queue:
// 2 puts + 2 gets need 8).
void spmd_self(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 8);
    uint64_t g[4] = { 100u + s, 200u + s, 0, 0 };   // [0],[1] sources; [2],[3] destinations
    uint64_t l[2] = { 0, 0 };
    lpf_memslot_t gs, ls;
    SS_OK(c, lpf_register_global(ctx, g, sizeof g, &gs));
    SS_OK(c, lpf_register_local(ctx, l, sizeof l, &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, gs, 0, s, gs, 2 * sizeof(uint64_t), sizeof(uint64_t), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_get(ctx, s, gs, sizeof(uint64_t), gs, 3 * sizeof(uint64_t), sizeof(uint64_t),
            LPF_MSG_DEFAULT));
    SS_OK(c, lpf_get(ctx, s, gs, 0, ls, 0, 2 * sizeof(uint64_t), LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, g[2], uint64_t(100u + s));
    SS_CHECK_EQ(c, g[3], uint64_t(200u + s));
    SS_CHECK_EQ(c, l[0], uint64_t(100u + s));
    SS_CHECK_EQ(c, l[1], uint64_t(200u + s));
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

// Item 60: a global slot registered with a different size on every process;
// each put fills exactly the destination's size; bytes beyond are never
// touched.
void spmd_sizes_differ(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 2);
    const size_t maxsz = 8 * (p + 1);
    std::vector<unsigned char> area(maxsz + 16, 0x5a), src(maxsz);
    const size_t mysz = 8 * (s + 1) - (s % 3);   // differs per process
    for (size_t i = 0; i < maxsz; ++i) src[i] = pat(s, i);
    lpf_memslot_t ga, ls;
    SS_OK(c, lpf_register_global(ctx, area.data(), mysz, &ga));
    SS_OK(c, lpf_register_local(ctx, src.data(), maxsz, &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p, left = (s + p - 1) % p;
    const size_t rsz = 8 * (right + 1) - (right % 3);
    SS_OK(c, lpf_put(ctx, ls, 0, right, ga, 0, rsz, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (size_t i = 0; i < area.size(); ++i)
        SS_CHECK_EQ(c, area[i], i < mysz ? pat(left, i) : 0x5a);
    SS_OK(c, lpf_deregister(ctx, ga));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

// Item 61: put and get return LPF_SUCCESS at once. On a shared-memory
// engine, pid 0 issues requests to every peer while the peers wait, outside
// any LPF call, until pid 0 says its calls have returned: a put or get that
// blocked on a peer would never return. (The peers' wait is bounded so that
// a wrong implementation fails instead of hanging.)
std::atomic<int> issued_flag{ 0 };

void spmd_nonblocking(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 4 * p);
    std::vector<uint32_t> g(2 * p, 0);   // [0,p): put destinations, [p,2p): get sources
    for (lpf_pid_t k = 0; k < p; ++k) g[p + k] = s * 100 + k;
    std::vector<uint32_t> l(2 * p, 0);
    for (lpf_pid_t k = 0; k < p; ++k) l[k] = s + 7;
    lpf_memslot_t gs, ls;
    SS_OK(c, lpf_register_global(ctx, g.data(), g.size() * sizeof(uint32_t), &gs));
    SS_OK(c, lpf_register_local(ctx, l.data(), l.size() * sizeof(uint32_t), &ls));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const bool shared = sstest::shared_memory_engine();
    if (s == 0) {
        for (lpf_pid_t k = 0; k < p; ++k) {
            SS_OK(c, lpf_put(ctx, ls, k * sizeof(uint32_t), k, gs, 0, sizeof(uint32_t),
                    LPF_MSG_DEFAULT));
            SS_OK(c, lpf_get(ctx, k, gs, (p + 0) * sizeof(uint32_t), ls,
                    (p + k) * sizeof(uint32_t), sizeof(uint32_t), LPF_MSG_DEFAULT));
        }
        if (shared) issued_flag.store(1);
    } else if (shared) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!issued_flag.load() && std::chrono::steady_clock::now() < until)
            std::this_thread::yield();
        SS_CHECK(c, issued_flag.load() == 1);
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, g[0], 7u);
    if (s == 0)
        for (lpf_pid_t k = 0; k < p; ++k) SS_CHECK_EQ(c, l[p + k], k * 100);
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

// Item 62: when lpf_sync returns, every request touching the caller is
// complete: destinations hold the data, and sources may be reused at once
// without changing what was delivered.
void spmd_completion(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 4, 4 * p);
    std::vector<uint64_t> src(p), dst(p, 0), served(p), fetched(p, 0);
    lpf_memslot_t ls, gd, gserv, lf;
    SS_OK(c, lpf_register_local(ctx, src.data(), p * sizeof(uint64_t), &ls));
    SS_OK(c, lpf_register_global(ctx, dst.data(), p * sizeof(uint64_t), &gd));
    SS_OK(c, lpf_register_global(ctx, served.data(), p * sizeof(uint64_t), &gserv));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_register_local(ctx, fetched.data(), p * sizeof(uint64_t), &lf));
    for (unsigned round = 0; round < 5; ++round) {
        for (lpf_pid_t k = 0; k < p; ++k) {
            src[k] = (uint64_t(round) << 40) | (uint64_t(s) << 20) | k;
            served[k] = (uint64_t(round) << 40) | (uint64_t(s) << 20) | (k + 1000);
        }
        for (lpf_pid_t k = 0; k < p; ++k) {
            SS_OK(c, lpf_put(ctx, ls, k * sizeof(uint64_t), k, gd, s * sizeof(uint64_t),
                    sizeof(uint64_t), LPF_MSG_DEFAULT));
            SS_OK(c, lpf_get(ctx, k, gserv, s * sizeof(uint64_t), lf, k * sizeof(uint64_t),
                    sizeof(uint64_t), LPF_MSG_DEFAULT));
        }
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        // reuse the sources at once
        for (lpf_pid_t k = 0; k < p; ++k) src[k] = served[k] = ~uint64_t(0);
        for (lpf_pid_t k = 0; k < p; ++k) {
            SS_CHECK_EQ(c, dst[k], (uint64_t(round) << 40) | (uint64_t(k) << 20) | s);
            SS_CHECK_EQ(c, fetched[k], (uint64_t(round) << 40) | (uint64_t(k) << 20) | (s + 1000));
        }
        // an empty superstep: nothing changes any more
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (lpf_pid_t k = 0; k < p; ++k)
            SS_CHECK_EQ(c, dst[k], (uint64_t(round) << 40) | (uint64_t(k) << 20) | s);
    }
    for (lpf_memslot_t m : { ls, gd, gserv, lf }) SS_OK(c, lpf_deregister(ctx, m));
    sstest::finish(ctx, s, p, args, c);
}

// Many small requests in one superstep (1-byte puts interleaved over a
// destination, from every process) and unknown message attributes, which
// behave like the default.
void spmd_many_small(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    const size_t n = 500;   // bytes each process puts to its right neighbour
    setup(c, ctx, 2, 2 * n);
    std::vector<unsigned char> src(n), dst(2 * n, 0xcc);
    for (size_t i = 0; i < n; ++i) src[i] = pat(s, i);
    lpf_memslot_t ls, gd;
    SS_OK(c, lpf_register_local(ctx, src.data(), n, &ls));
    SS_OK(c, lpf_register_global(ctx, dst.data(), 2 * n, &gd));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_msg_attr_t attr = 12345;
    for (size_t i = 0; i < n; ++i) {
        SS_OK(c, lpf_put(ctx, ls, i, (s + 1) % p, gd, 2 * i + 1, 1, attr));
        attr = int(i);   // attributes are copied at the call
    }
    SS_OK(c, lpf_sync(ctx, 777));   // an unknown sync attribute, too
    const lpf_pid_t left = (s + p - 1) % p;
    for (size_t i = 0; i < n; ++i) {
        SS_CHECK_EQ(c, dst[2 * i], 0xcc);
        SS_CHECK_EQ(c, dst[2 * i + 1], pat(left, i));
    }
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gd));
    sstest::finish(ctx, s, p, args, c);
}

// Puts and gets mixed in one superstep between all pairs, to disjoint
// areas; a global slot serves as a local source and destination too.
void spmd_mixed_pairs(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 4 * p);
    // area: [0,p) put targets, [p,2p) get sources, [2p,3p) get targets,
    // [3p] put source
    std::vector<uint32_t> a(3 * p + 1, 0);
    for (lpf_pid_t k = 0; k < p; ++k) a[p + k] = 5000 + 100 * s + k;
    a[3 * p] = 9000 + s;
    lpf_memslot_t g;
    SS_OK(c, lpf_register_global(ctx, a.data(), a.size() * sizeof(uint32_t), &g));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k) {
        const lpf_pid_t to = (s + k) % p;
        SS_OK(c, lpf_put(ctx, g, 3 * p * sizeof(uint32_t), to, g, s * sizeof(uint32_t),
                sizeof(uint32_t), LPF_MSG_DEFAULT));
        SS_OK(c, lpf_get(ctx, to, g, (p + s) * sizeof(uint32_t), g, (2 * p + to) * sizeof(uint32_t),
                sizeof(uint32_t), LPF_MSG_DEFAULT));
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k) {
        SS_CHECK_EQ(c, a[k], 9000 + k);
        SS_CHECK_EQ(c, a[p + k], 5000 + 100 * s + k);
        SS_CHECK_EQ(c, a[2 * p + k], 5000 + 100 * k + s);
    }
    SS_OK(c, lpf_deregister(ctx, g));
    sstest::finish(ctx, s, p, args, c);
}

// Issue 9, item 1: every get reads its source as it was when the sync was
// entered, also when that source is the destination of another get of the
// same superstep. Every process gets its right neighbour's y into its own y
// (a ring of such chains; at p = 2 the two gets read each other's
// destination), many times, so that a race shows.
void spmd_get_chain(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    setup(c, ctx, 2, 4);
    uint64_t y[3] = { 0, 0, 0 };   // y[1] is the value; guards around it
    lpf_memslot_t g;
    SS_OK(c, lpf_register_global(ctx, y, sizeof y, &g));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p;
    unsigned wrong = 0;
    for (uint64_t it = 1; it <= 400; ++it) {
        y[1] = it * 1000 + s;
        SS_OK(c, lpf_get(ctx, right, g, sizeof(uint64_t), g, sizeof(uint64_t), sizeof(uint64_t),
                LPF_MSG_DEFAULT));
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (y[1] != it * 1000 + right) ++wrong;
        if (y[0] != 0 || y[2] != 0) ++wrong;
    }
    SS_CHECK_EQ(c, wrong, 0u);
    SS_OK(c, lpf_deregister(ctx, g));
    sstest::finish(ctx, s, p, args, c);
}

// A get's destination that is the source of another get of the same
// superstep (the left neighbour's, or at p = 1 one of our own): get k
// reads the right neighbour's a[k] into our a[k + 1], a chain through n
// words (in list order at p = 1, so writing as it reads would be wrong). With n = 3 the destinations are compared one by one with what is
// read, with n = 20 by their hull; both must see every source as at the
// sync's entry, and the words outside the chain untouched.
void get_chain_words(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args, unsigned n)
{
    Checker c(s, p);
    setup(c, ctx, 2, 2 * n + 2);
    std::vector<uint64_t> a(n + 4);
    lpf_memslot_t g;
    SS_OK(c, lpf_register_global(ctx, a.data(), a.size() * sizeof(uint64_t), &g));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t right = (s + 1) % p;
    unsigned wrong = 0;
    for (uint64_t it = 1; it <= 100; ++it) {
        for (size_t i = 0; i < a.size(); ++i) a[i] = it * 100000 + s * 1000 + i;
        for (unsigned k = 0; k < n; ++k)
            SS_OK(c, lpf_get(ctx, right, g, k * sizeof(uint64_t), g, (k + 1) * sizeof(uint64_t),
                    sizeof(uint64_t), LPF_MSG_DEFAULT));
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (size_t i = 0; i < a.size(); ++i) {
            uint64_t want = i >= 1 && i <= n ? it * 100000 + right * 1000 + i - 1
                                             : it * 100000 + s * 1000 + i;
            if (a[i] != want) ++wrong;
        }
    }
    SS_CHECK_EQ(c, wrong, 0u);
    SS_OK(c, lpf_deregister(ctx, g));
    sstest::finish(ctx, s, p, args, c);
}

void spmd_get_chain_3(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    get_chain_words(ctx, s, p, args, 3);
}

void spmd_get_chain_20(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    get_chain_words(ctx, s, p, args, 20);
}

class PutGet : public sstest::Procs {};

TEST_P(PutGet, Item47_RingPut) { EXPECT_TRUE(sstest::run(P(), spmd_ring)); }
TEST_P(PutGet, Items48and49_Offsets) { EXPECT_TRUE(sstest::run(P(), spmd_offsets)); }
TEST_P(PutGet, Item50_AllToAllTranspose) { EXPECT_TRUE(sstest::run(P(), spmd_transpose)); }
TEST_P(PutGet, Item52_HundredKilobyteBlocks) { EXPECT_TRUE(sstest::run(P(), spmd_big_blocks)); }
TEST_P(PutGet, Item57_UntargetedUnchanged) { EXPECT_TRUE(sstest::run(P(), spmd_untargeted)); }
TEST_P(PutGet, Item58_SelfPutAndGet) { EXPECT_TRUE(sstest::run(P(), spmd_self)); }
TEST_P(PutGet, Item60_SizesDifferPerProcess) { EXPECT_TRUE(sstest::run(P(), spmd_sizes_differ)); }
TEST_P(PutGet, Item61_NeverBlocks)
{
    issued_flag = 0;
    EXPECT_TRUE(sstest::run(P(), spmd_nonblocking));
}
TEST_P(PutGet, Item62_SyncCompletesRequests) { EXPECT_TRUE(sstest::run(P(), spmd_completion)); }
TEST_P(PutGet, ManySmallPutsAndAttributes) { EXPECT_TRUE(sstest::run(P(), spmd_many_small)); }
TEST_P(PutGet, MixedPutsAndGetsAllPairs) { EXPECT_TRUE(sstest::run(P(), spmd_mixed_pairs)); }
TEST_P(PutGet, GetReadsTheSourceAsAtSyncEntry) { EXPECT_TRUE(sstest::run(P(), spmd_get_chain)); }
TEST_P(PutGet, GetChainThroughFewDestinations) { EXPECT_TRUE(sstest::run(P(), spmd_get_chain_3)); }
TEST_P(PutGet, GetChainThroughManyDestinations) { EXPECT_TRUE(sstest::run(P(), spmd_get_chain_20)); }

SS_INSTANTIATE(PutGet);

// Beyond 8 processes every process has an arrival line of its own, and a
// process whose gets read one other process summarises them there: the
// chains (one source each) and all pairs (several sources: no summary).
TEST(PutGetWide, GetChainsAndAllPairsAtTwelve)
{
    EXPECT_TRUE(sstest::run(12, spmd_get_chain_3));
    EXPECT_TRUE(sstest::run(12, spmd_get_chain_20));
    EXPECT_TRUE(sstest::run(12, spmd_mixed_pairs));
    EXPECT_TRUE(sstest::run(12, spmd_get_chain));
}

} // namespace
