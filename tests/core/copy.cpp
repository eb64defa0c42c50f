// The library's bulk copy (src/core/copy.c, compiled in here) against
// memmove for every placement of source and destination within 64 bytes
// and 4 KiB, overlapping ranges included; then lpf_put and bsp_put of
// blocks whose source and destination lie at the placements where glibc's
// `rep movsb` is slow (destination 1-63 bytes after the source modulo
// 4 KiB), which go through it.
#include <bsp.h>
#include <lpf/core.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" {
#include "copy.h"
}

namespace {

void fill(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i) p[i] = char((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

// copies n bytes from big+s to big+d with sstep_copy_bulk and with memmove
// into a second buffer, and compares the whole buffers (bytes around the
// destination must stay as they were)
void check_one(size_t cap, size_t s, size_t d, size_t n)
{
    static std::vector<char> a, b;
    a.resize(cap);
    b.resize(cap);
    fill(a.data(), cap, unsigned(n + s + d));
    std::memcpy(b.data(), a.data(), cap);
    sstep_copy_bulk(a.data() + d, a.data() + s, n);
    std::memmove(b.data() + d, b.data() + s, n);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), cap), 0) << "n " << n << " src " << s << " dst " << d;
}

TEST(Copy, EveryPlacementAndSize)
{
    const size_t sizes[] = { 1, 100, 127, 128, 129, 2047, 2048, 2049, 4095, 4096, 4097, 8191,
        12345, 65536 + 13, (size_t(4) << 20) + 77 };
    for (size_t n : sizes) {
        const size_t cap = 2 * n + 8192 + 256;
        const size_t far = n + 4096;   // ranges apart, same page offset
        for (size_t s = 0; s < 64; s += (n > 70000 ? 21 : 3))
            for (size_t k = 0; k < 64; k += (n > 70000 ? 13 : 5)) {
                check_one(cap, s, far + k, n);       // destination k after the source
                check_one(cap, far + k, s, n);       // the source k after the destination
            }
        if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(Copy, Overlapping)
{
    const size_t sizes[] = { 2048, 4096 + 5, 65536 + 3 };
    for (size_t n : sizes)
        for (size_t shift : { size_t(1), size_t(8), size_t(33), size_t(64), size_t(4095), n - 1 }) {
            check_one(n + shift + 64, 0, shift, n);  // forward overlap
            check_one(n + shift + 64, shift, 0, n);  // backward overlap
            if (::testing::Test::HasFatalFailure()) return;
        }
}

TEST(Copy, KindIsKnown)
{
    const char *k = sstep_copy_kind();
    EXPECT_TRUE(std::strcmp(k, "avx2") == 0 || std::strcmp(k, "sse2") == 0
                || std::strcmp(k, "memmove") == 0) << k;
}

// ---------------------------------------------------------------------
// through the library

constexpr size_t kBlock = 64 << 10;
std::atomic<int> bad{ 0 };
int skew;   // destination offset past a page boundary (source page-aligned)

void lpf_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    char *sb = static_cast<char *>(std::aligned_alloc(4096, kBlock + 4096));
    char *db = static_cast<char *>(std::aligned_alloc(4096, kBlock + 4096));
    char *src = sb, *dst = db + skew;
    std::memset(src, int(s) + 1, kBlock);
    std::memset(db, 0, kBlock + 4096);
    lpf_memslot_t ss, ds;
    if (lpf_resize_memory_register(ctx, 2) || lpf_resize_message_queue(ctx, 2)
            || lpf_sync(ctx, LPF_SYNC_DEFAULT) || lpf_register_local(ctx, src, kBlock, &ss)
            || lpf_register_global(ctx, dst, kBlock, &ds) || lpf_sync(ctx, LPF_SYNC_DEFAULT)
            || lpf_put(ctx, ss, 0, (s + 1) % p, ds, 0, kBlock, LPF_MSG_DEFAULT)
            || lpf_sync(ctx, LPF_SYNC_DEFAULT))
        bad = 1;
    const char want = char((s + p - 1) % p + 1);
    for (size_t i = 0; i < kBlock; ++i)
        if (dst[i] != want) { bad = 1; break; }
    if ((skew && db[skew - 1] != 0) || db[skew + kBlock] != 0) bad = 1;
    lpf_deregister(ctx, ss);
    lpf_deregister(ctx, ds);
    std::free(sb);
    std::free(db);
}

TEST(Copy, LpfPutAtSkewedPlacements)
{
    for (skew = 0; skew < 64; skew += 7) {
        bad = 0;
        ASSERT_EQ(lpf_exec(LPF_ROOT, 2, lpf_spmd, LPF_NO_ARGS), LPF_SUCCESS);
        EXPECT_EQ(bad.load(), 0) << "lpf_put, destination " << skew << " bytes past a page";
    }
}

void bsp_spmd()
{
    bsp_begin(2);
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    char *sb = static_cast<char *>(std::aligned_alloc(4096, kBlock + 4096));
    char *db = static_cast<char *>(std::aligned_alloc(4096, kBlock + 4096));
    char *src = sb + (skew * 5) % 64, *dst = db + skew;
    std::memset(src, int(s) + 1, kBlock);
    std::memset(db, 0, kBlock + 4096);
    bsp_push_reg(dst, kBlock);
    bsp_sync();
    bsp_put((s + 1) % p, src, dst, 0, kBlock);
    std::memset(src, 0x55, kBlock);   // bsp_put copied the data when called
    bsp_sync();
    const char want = char((s + p - 1) % p + 1);
    for (size_t i = 0; i < kBlock; ++i)
        if (dst[i] != want) { bad = 1; break; }
    if ((skew && db[skew - 1] != 0) || db[skew + kBlock] != 0) bad = 1;
    bsp_pop_reg(dst);
    bsp_sync();
    std::free(sb);
    std::free(db);
    bsp_end();
}

TEST(Copy, BspPutAtSkewedPlacements)
{
    for (skew = 0; skew < 64; skew += 7) {
        bad = 0;
        bsp_init(bsp_spmd, 0, nullptr);
        bsp_spmd();
        EXPECT_EQ(bad.load(), 0) << "bsp_put, destination " << skew << " bytes past a page";
    }
}

} // namespace
