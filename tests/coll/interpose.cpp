// Accounting wrappers around lpf_put / lpf_get / lpf_sync, and the
// engine-agnostic result gathering of coll_test_util.h.
#include "coll_test_util.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace ct {
namespace {

// requests targeting each pid, by superstep parity (shared memory only)
std::atomic<unsigned> g_targeted[2][kMaxP];

struct Local {
    lpf_t ctx = nullptr;
    lpf_pid_t pid = 0, nprocs = 0;
    bool shared = false;
    uint64_t superstep = 0;
    size_t issued = 0, self = 0;
    bool win = false;
    size_t bound = 0;
    Window w;
};
thread_local Local tl;

bool engine_is_shared()
{
    const char *e = std::getenv("SUPERSTEP_ENGINE");
    return e == nullptr || *e == '\0' || std::strcmp(e, "pthread") == 0;
}

void note(lpf_t ctx, lpf_pid_t peer)
{
    if (ctx != tl.ctx) return;
    ++tl.issued;
    if (peer == tl.pid) ++tl.self;
    if (tl.shared && peer < kMaxP)
        g_targeted[tl.superstep & 1][peer].fetch_add(1, std::memory_order_relaxed);
}

void after_sync(lpf_t ctx)
{
    if (ctx != tl.ctx) return;
    size_t targeted = tl.self;
    if (tl.shared && tl.pid < kMaxP)
        targeted = g_targeted[tl.superstep & 1][tl.pid].exchange(0, std::memory_order_relaxed);
    size_t use = tl.issued + targeted;
    if (tl.win) {
        ++tl.w.syncs;
        if (use > tl.w.max_use) tl.w.max_use = use;
        if (use > tl.bound) {
            ++tl.w.violations;
            std::fprintf(stderr, "[pid %u of %u] superstep %llu used %zu message-queue "
                    "entries (issued %zu + targeted %zu), bound %zu\n", tl.pid, tl.nprocs,
                    static_cast<unsigned long long>(tl.superstep), use, tl.issued,
                    targeted, tl.bound);
        }
    }
    tl.issued = tl.self = 0;
    ++tl.superstep;
}

template <class F> F real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        std::fprintf(stderr, "interpose: %s not found: %s\n", name, dlerror());
        std::abort();
    }
    return reinterpret_cast<F>(f);
}

} // namespace

void attach(lpf_t ctx, lpf_pid_t s, lpf_pid_t p)
{
    tl = Local();
    tl.ctx = ctx;
    tl.pid = s;
    tl.nprocs = p;
    tl.shared = engine_is_shared() && p <= kMaxP;
}

void reset_shared()
{
    for (auto &row : g_targeted)
        for (auto &c : row) c.store(0, std::memory_order_relaxed);
}

bool counts_targeted() { return tl.shared; }

void window_begin(size_t bound)
{
    tl.win = true;
    tl.bound = bound;
    tl.w = Window();
}

size_t window_syncs() { return tl.w.syncs; }

Window window_end()
{
    tl.win = false;
    return tl.w;
}

namespace {
struct Report {
    long errors, violations, windows;
    uint64_t digest;
};
} // namespace

void Proc::finish(lpf_args_t args)
{
    caps(64, 2 * static_cast<size_t>(p) + 8);
    std::vector<Report> all(s == 0 ? p : 0);
    Report mine{ errors, violations, windows, digest };
    lpf_memslot_t all_slot, mine_slot;
    lpf_register_global(ctx, all.data(), all.size() * sizeof(Report), &all_slot);
    lpf_register_local(ctx, &mine, sizeof mine, &mine_slot);
    sync();
    lpf_put(ctx, mine_slot, 0, 0, all_slot, s * sizeof(Report), sizeof(Report), LPF_MSG_DEFAULT);
    sync();
    if (s == 0 && args.output != nullptr && args.output_size == sizeof(Result)) {
        Result r;
        r.ran = 1;
        r.nprocs = p;
        r.windows = windows;
        for (lpf_pid_t k = 0; k < p; ++k) {
            r.errors += all[k].errors;
            r.violations += all[k].violations;
            if (all[k].digest != digest || all[k].windows != windows) ++r.sync_mismatch;
        }
        std::memcpy(args.output, &r, sizeof r);
    }
    lpf_deregister(ctx, mine_slot);
    lpf_deregister(ctx, all_slot);
}

lpf_err_t run(lpf_pid_t P, lpf_spmd_t spmd, Result *r, const void *in, size_t in_size)
{
    *r = Result();
    reset_shared();
    lpf_args_t args = LPF_NO_ARGS;
    args.input = in;
    args.input_size = in_size;
    args.output = r;
    args.output_size = sizeof *r;
    return lpf_exec(LPF_ROOT, P, spmd, args);
}

} // namespace ct

// ---- the wrappers -------------------------------------------------------

extern "C" lpf_err_t lpf_put(lpf_t ctx, lpf_memslot_t src_slot, size_t src_offset,
        lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset, size_t size,
        lpf_msg_attr_t attr)
{
    using F = lpf_err_t (*)(lpf_t, lpf_memslot_t, size_t, lpf_pid_t, lpf_memslot_t,
            size_t, size_t, lpf_msg_attr_t);
    static const F f = ct::real<F>("lpf_put");
    ct::note(ctx, dst_pid);
    return f(ctx, src_slot, src_offset, dst_pid, dst_slot, dst_offset, size, attr);
}

extern "C" lpf_err_t lpf_get(lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot,
        size_t src_offset, lpf_memslot_t dst_slot, size_t dst_offset, size_t size,
        lpf_msg_attr_t attr)
{
    using F = lpf_err_t (*)(lpf_t, lpf_pid_t, lpf_memslot_t, size_t, lpf_memslot_t,
            size_t, size_t, lpf_msg_attr_t);
    static const F f = ct::real<F>("lpf_get");
    ct::note(ctx, src_pid);
    return f(ctx, src_pid, src_slot, src_offset, dst_slot, dst_offset, size, attr);
}

extern "C" lpf_err_t lpf_sync(lpf_t ctx, lpf_sync_attr_t attr)
{
    using F = lpf_err_t (*)(lpf_t, lpf_sync_attr_t);
    static const F f = ct::real<F>("lpf_sync");
    lpf_err_t rc = f(ctx, attr);
    ct::after_sync(ctx);
    return rc;
}
