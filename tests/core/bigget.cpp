// Checklist item 51: a get of more than INT_MAX bytes copies every byte.
//
// The source (at the last process) is a read-only view that repeats a
// 3 MiB pattern: one memfd mapped again and again, so that it costs almost
// no memory or page faults. 3 MiB divides neither 2^31 nor 2^32, so a copy
// that wrapped or restarted at such a boundary would show. The destination
// (at pid 0) is ordinary anonymous memory, compared against pid 0's own view of the
// same pattern. Skipped (not failed) when the memory cannot be had, or when
// SUPERSTEP_TEST_SKIP_BIG is set.
#include "lpf_test.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace {

constexpr size_t kSize = (size_t(1) << 31) + 4099;   // > INT_MAX, odd tail
constexpr size_t kSrcOff = 8, kDstOff = 13;
constexpr size_t kGuard = 64;
constexpr size_t kPeriod = size_t(3) << 20;
constexpr size_t kViewLen = ((kSrcOff + kSize + kPeriod - 1) / kPeriod) * kPeriod;

inline uint64_t word(size_t i) { return (i + 1) * 0x9E3779B97F4A7C15ull ^ (i >> 11); }

// A read-only view of kViewLen bytes repeating the pattern; nullptr on
// failure.
unsigned char *make_view()
{
    int fd = memfd_create("sstest-bigget", MFD_CLOEXEC);
    if (fd < 0) return nullptr;
    unsigned char *base = nullptr;
    if (ftruncate(fd, off_t(kPeriod)) == 0) {
        void *w = mmap(nullptr, kPeriod, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (w != MAP_FAILED) {
            uint64_t *words = static_cast<uint64_t *>(w);
            for (size_t i = 0; i < kPeriod / 8; ++i) words[i] = word(i);
            munmap(w, kPeriod);
            void *r = mmap(nullptr, kViewLen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
            if (r != MAP_FAILED) {
                base = static_cast<unsigned char *>(r);
                for (size_t off = 0; off < kViewLen && base; off += kPeriod)
                    if (mmap(base + off, kPeriod, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
                                fd, 0) == MAP_FAILED) {
                        munmap(base, kViewLen);
                        base = nullptr;
                    }
            }
        }
    }
    close(fd);
    return base;
}

struct BigOut {
    sstest::Outcome o;
    int skipped;
    int equal;            // the copied bytes equal the source
    size_t first_diff;    // first differing byte, if not
    uint64_t bad_guard;
};

// The source lives at pid p-1, the destination at pid 0 (the same process
// when p == 1).
void spmd_big_get(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    sstest::Checker c(s, p);
    const lpf_pid_t owner = p - 1;
    const size_t dbytes = kDstOff + kSize + kGuard;
    unsigned char *view = nullptr, *dst = nullptr;
    if (s == owner || s == 0) view = make_view();
    if (s == 0) {
        // pre-faulted: first-touch page faults dominate the run time otherwise
        void *m = mmap(nullptr, dbytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m != MAP_FAILED) dst = static_cast<unsigned char *>(m);
    }
    // agree on whether everything could be allocated
    unsigned char ok = (s != owner || view) && (s != 0 || (view && dst));
    unsigned char all_ok[2] = { 1, 1 };
    lpf_memslot_t okl, okg;
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 4));   // pid 0: 2 issued + up to 2 targeted
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_register_local(ctx, &ok, 1, &okl));
    SS_OK(c, lpf_register_global(ctx, all_ok, 2, &okg));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s == 0 || s == owner)
        for (lpf_pid_t k : { lpf_pid_t(0), owner })
            SS_OK(c, lpf_put(ctx, okl, 0, k, okg, s == 0 ? 0 : 1, 1, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_deregister(ctx, okl));
    SS_OK(c, lpf_deregister(ctx, okg));
    const bool go = all_ok[0] && all_ok[1];
    BigOut *out = s == 0 ? static_cast<BigOut *>(args.output) : nullptr;
    if (out) out->skipped = !go;
    if (go) {
        if (s == 0) {
            std::memset(dst, 0xab, kDstOff);
            std::memset(dst + kDstOff + kSize, 0xab, kGuard);
        }
        lpf_memslot_t gs = LPF_INVALID_MEMSLOT, ld = LPF_INVALID_MEMSLOT;
        SS_OK(c, lpf_register_global(ctx, s == owner ? view : nullptr, s == owner ? kViewLen : 0, &gs));
        if (s == 0) SS_OK(c, lpf_register_local(ctx, dst, dbytes, &ld));
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (s == 0) SS_OK(c, lpf_get(ctx, owner, gs, kSrcOff, ld, kDstOff, kSize, LPF_MSG_DEFAULT));
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (s == 0) {
            out->equal = std::memcmp(dst + kDstOff, view + kSrcOff, kSize) == 0;
            if (!out->equal) {
                size_t i = 0;
                while (i < kSize && dst[kDstOff + i] == view[kSrcOff + i]) ++i;
                out->first_diff = i;
            }
            uint64_t guard = 0;
            for (size_t i = 0; i < kDstOff; ++i) guard += dst[i] != 0xab;
            for (size_t i = 0; i < kGuard; ++i) guard += dst[kDstOff + kSize + i] != 0xab;
            out->bad_guard = guard;
            SS_OK(c, lpf_deregister(ctx, ld));
        }
        SS_OK(c, lpf_deregister(ctx, gs));
    }
    if (view) munmap(view, kViewLen);
    if (dst) munmap(dst, dbytes);
    lpf_args_t fin = args;
    if (out) {
        fin.output = &out->o;
        fin.output_size = sizeof out->o;
    }
    sstest::finish(ctx, s, p, fin, c);
}

TEST(BigGet, Item51_MoreThanIntMaxBytes)
{
    static_assert(kSize > size_t(INT_MAX), "the get must exceed INT_MAX bytes");
    static_assert((size_t(1) << 31) % kPeriod != 0, "the period must not divide 2^31");
    if (std::getenv("SUPERSTEP_TEST_SKIP_BIG")) GTEST_SKIP() << "SUPERSTEP_TEST_SKIP_BIG is set";
    BigOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    const lpf_pid_t P = 2;   // source and destination on different processes
    lpf_err_t rc = lpf_exec(LPF_ROOT, P, spmd_big_get, a);
    ASSERT_TRUE(sstest::clean(rc, out.o, P));
    if (out.skipped) GTEST_SKIP() << "could not allocate " << kSize << " bytes";
    EXPECT_TRUE(out.equal) << "first differing byte: " << out.first_diff;
    EXPECT_EQ(0u, out.bad_guard);
}

} // namespace
