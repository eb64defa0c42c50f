// Test harness for the collectives and BSMP libraries.
//
// * Request/sync accounting: the test programs define lpf_put, lpf_get and
//   lpf_sync themselves (interpose.cpp) and forward to the library's; the
//   executables export them (ENABLE_EXPORTS), so the library's own calls
//   bind to them too. Per process and superstep they count requests issued
//   and, when all processes share one address space (pthread engine),
//   requests targeting the process; a "window" checks every superstep's
//   issued + targeted against a capacity bound and counts the syncs made.
// * Engine-agnostic results: each process counts its own errors; finish()
//   gathers the counts (and a digest of the sync counts of every window) to
//   pid 0 with core puts, and pid 0 writes the summary to args.output. Tests
//   only use the nprocs they receive.
#ifndef SSTEP_TESTS_COLL_UTIL_H
#define SSTEP_TESTS_COLL_UTIL_H

#include <lpf/core.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "patterns assume little endian");

namespace ct {

constexpr lpf_pid_t kMaxP = 64;

// Attach the accounting to this process's context; call first thing in
// every SPMD function (before any sync), on every process.
void attach(lpf_t ctx, lpf_pid_t s, lpf_pid_t p);
// Reset the shared counters; call in the main thread before lpf_exec.
void reset_shared();
// True when requests targeting a process are counted (shared memory).
bool counts_targeted();

struct Window {
    size_t max_use = 0;      // largest issued + targeted of a superstep
    size_t violations = 0;   // supersteps over the bound
    size_t syncs = 0;        // lpf_sync calls in the window
};
// Start a window at the beginning of a superstep (right after a sync).
void window_begin(size_t bound);
// Syncs made since window_begin.
size_t window_syncs();
Window window_end();

// The summary pid 0 writes to args.output.
struct Result {
    long ran = 0;            // pid 0 reached the end
    long nprocs = 0;
    long errors = 0;         // data errors, summed over processes
    long sync_mismatch = 0;  // processes whose sync digest differs from pid 0's
    long violations = 0;     // supersteps over a capacity bound, summed
    long windows = 0;        // windows checked by pid 0
};

class Proc {
public:
    Proc(lpf_t ctx, lpf_pid_t s, lpf_pid_t p) : ctx(ctx), s(s), p(p) { attach(ctx, s, p); }

    // Count an error (and print the first few).
    bool check(bool ok, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
    {
        if (ok) return true;
        if (++errors <= 8) {
            char line[512];
            va_list ap;
            va_start(ap, fmt);
            std::vsnprintf(line, sizeof line, fmt, ap);
            va_end(ap);
            std::fprintf(stderr, "[pid %u of %u] %s\n", s, p, line);
        }
        return false;
    }

    // Open a window with a capacity bound for what follows.
    void begin(size_t bound) { window_begin(bound); }
    // Close it (after the caller's sync); records syncs for the digest.
    Window end()
    {
        Window w = window_end();
        digest = digest * 1000003u + w.syncs + 1;
        violations += static_cast<long>(w.violations);
        ++windows;
        return w;
    }

    // Resize both capacities and sync (all processes, same values).
    void caps(size_t regs, size_t msgs)
    {
        lpf_resize_memory_register(ctx, regs);
        lpf_resize_message_queue(ctx, msgs);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
    }
    void sync() { lpf_sync(ctx, LPF_SYNC_DEFAULT); }

    // Gather the counts to pid 0; pid 0 writes a Result to args.output.
    // Needs at most 62 live registrations of the caller.
    void finish(lpf_args_t args);

    lpf_t ctx;
    lpf_pid_t s, p;
    long errors = 0;
    long violations = 0;
    long windows = 0;
    uint64_t digest = 1;
};

// Run spmd on P processes; returns lpf_exec's code and fills *r.
lpf_err_t run(lpf_pid_t P, lpf_spmd_t spmd, Result *r, const void *in = nullptr,
        size_t in_size = 0);

// Deterministic byte patterns, produced and checked a 64-bit word at a time
// (sanitizer builds instrument every access: bytewise loops would dominate).
inline uint64_t pat_word(size_t w, unsigned seed)
{
    uint64_t x = (static_cast<uint64_t>(w) + 1) * 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull);
    return x ^ (x >> 29);
}
inline unsigned char pat(size_t i, unsigned seed)
{
    uint64_t x = pat_word(i / 8, seed);
    return static_cast<unsigned char>(x >> (8 * (i % 8)));
}
inline void fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *b = static_cast<unsigned char *>(buf);
    size_t w = 0;
    for (; 8 * w + 8 <= n; ++w) {
        uint64_t x = pat_word(w, seed);
        std::memcpy(b + 8 * w, &x, 8); // little-endian byte order as pat()
    }
    for (size_t i = 8 * w; i < n; ++i) b[i] = pat(i, seed);
}
// Offset of the first byte that differs from pattern `seed`, or n.
inline size_t first_diff(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *b = static_cast<const unsigned char *>(buf);
    size_t w = 0;
    for (; 8 * w + 8 <= n; ++w) {
        uint64_t x;
        std::memcpy(&x, b + 8 * w, 8);
        if (x != pat_word(w, seed)) break;
    }
    for (size_t i = 8 * w; i < n; ++i)
        if (b[i] != pat(i, seed)) return i;
    return n;
}
inline size_t first_not(const void *buf, size_t n, unsigned char v)
{
    const unsigned char *b = static_cast<const unsigned char *>(buf);
    uint64_t vv = 0x0101010101010101ull * v;
    size_t w = 0;
    for (; 8 * w + 8 <= n; ++w) {
        uint64_t x;
        std::memcpy(&x, b + 8 * w, 8);
        if (x != vv) break;
    }
    for (size_t i = 8 * w; i < n; ++i)
        if (b[i] != v) return i;
    return n;
}

} // namespace ct

#endif
