// Helpers for the LPF core tests.
//
// Tests are written engine-agnostically: an SPMD function records its
// checks in a per-process Checker; at the end it calls finish(), which
// gathers every process's Report at pid 0 (through lpf_rehook, so the test's
// own context, capacities and registrations are not disturbed) and pid 0
// writes an Outcome into args.output. The gtest body (which runs on the main
// thread only) then asserts on the Outcome. Nothing here relies on the
// processes sharing an address space, except where a test says so and asks
// shared_memory_engine() first.
#pragma once

#include <lpf/core.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace sstest {

constexpr unsigned kMaxReportedProcs = 64;   // per-pid values kept in Outcome
constexpr unsigned kValues = 4;              // test-defined values per process

// What one process tells pid 0 at the end of a test.
struct Report {
    uint32_t pid;
    uint32_t nprocs;
    uint32_t ran;        // 1: this process reached finish()
    uint32_t failures;   // failed checks
    uint64_t v[kValues]; // test-defined values
    char first[232];     // first failed check
};

// What pid 0 writes into args.output.
struct Outcome {
    uint32_t nprocs;     // as received by pid 0
    uint32_t reported;   // processes whose Report reached pid 0
    uint32_t failures;   // failed checks, all processes together
    int gather_rc;       // result of the lpf_rehook that gathered the reports
    char first[512];     // first failed check, with its process
    uint64_t v[kMaxReportedProcs][kValues];
};

// Per-process record of checks inside an SPMD function.
class Checker {
public:
    Checker(lpf_pid_t s, lpf_pid_t p)
    {
        std::memset(&r, 0, sizeof r);
        r.pid = s;
        r.nprocs = p;
        r.ran = 1;
    }
    void fail(const char *file, int line, const std::string &what)
    {
        if (r.failures++ == 0) {
            const char *base = std::strrchr(file, '/');
            std::snprintf(r.first, sizeof r.first, "%s:%d: %s", base ? base + 1 : file,
                    line, what.c_str());
        }
    }
    bool ok() const { return r.failures == 0; }
    void set(unsigned i, uint64_t value) { r.v[i] = value; }
    Report r;
};

template <typename A, typename B>
std::string describe_ne(const char *ea, const char *eb, const A &a, const B &b)
{
    std::ostringstream os;
    os << ea << " == " << eb << " failed: " << +a << " vs " << +b;
    return os.str();
}

#define SS_CHECK(chk, cond)                                                         \
    do {                                                                            \
        if (!(cond)) (chk).fail(__FILE__, __LINE__, "check failed: " #cond);      \
    } while (0)

#define SS_CHECK_EQ(chk, a, b)                                                      \
    do {                                                                            \
        const auto ss_a_ = (a);                                                     \
        const auto ss_b_ = (b);                                                     \
        if (!(ss_a_ == ss_b_))                                                      \
            (chk).fail(__FILE__, __LINE__, ::sstest::describe_ne(#a, #b, ss_a_, ss_b_)); \
    } while (0)

// every primitive returns LPF_SUCCESS when its preconditions hold
#define SS_OK(chk, expr) SS_CHECK_EQ(chk, LPF_SUCCESS, (expr))

// ---------------------------------------------------------------------
// Gathering at pid 0 through a fresh context (lpf_rehook)
// ---------------------------------------------------------------------

struct GatherIO {
    const void *mine;
    size_t n;
    void *all;   // pid 0: n * nprocs bytes
};

inline void gather_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    const GatherIO *io = static_cast<const GatherIO *>(args.input);
    lpf_memslot_t src = LPF_INVALID_MEMSLOT, dst = LPF_INVALID_MEMSLOT;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, p);   // pid 0 is targeted by p-1 puts
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    lpf_register_local(ctx, const_cast<void *>(io->mine), io->n, &src);
    lpf_register_global(ctx, s == 0 ? io->all : nullptr, s == 0 ? io->n * p : 0, &dst);
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    if (s == 0)
        std::memcpy(io->all, io->mine, io->n);
    else
        lpf_put(ctx, src, 0, 0, dst, s * io->n, io->n, LPF_MSG_DEFAULT);
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    lpf_deregister(ctx, src);
    lpf_deregister(ctx, dst);
}

// Collective over the processes of ctx: pid 0 receives every process's n
// bytes at all[k*n]. Uses a fresh context; ctx itself is untouched.
inline lpf_err_t gather(lpf_t ctx, const void *mine, size_t n, void *all)
{
    GatherIO io{ mine, n, all };
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &io;
    a.input_size = sizeof io;
    return lpf_rehook(ctx, gather_spmd, a);
}

// Collective: pid 0 writes the Outcome of the test into args.output.
inline void finish(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, const lpf_args_t &args,
        const Checker &chk)
{
    std::vector<Report> all(s == 0 ? p : 0);
    lpf_err_t rc = gather(ctx, &chk.r, sizeof(Report), s == 0 ? all.data() : nullptr);
    if (s != 0) return;
    Outcome *o = static_cast<Outcome *>(args.output);
    if (o == nullptr || args.output_size < sizeof(Outcome)) return;
    std::memset(o, 0, sizeof *o);
    o->nprocs = p;
    o->gather_rc = rc;
    if (rc != LPF_SUCCESS) {
        all.assign(1, chk.r);
        std::snprintf(o->first, sizeof o->first, "gathering the reports failed (%d)", rc);
    }
    for (size_t k = 0; k < all.size(); ++k) {
        const Report &r = all[k];
        if (!r.ran) continue;
        o->reported++;
        o->failures += r.failures;
        if (r.pid != k && !o->first[0]) {
            std::snprintf(o->first, sizeof o->first, "report %zu came from pid %u", k, r.pid);
            o->failures++;
        }
        if (r.failures && !o->first[0])
            std::snprintf(o->first, sizeof o->first, "process %u of %u: %s", r.pid,
                    r.nprocs, r.first);
        if (k < kMaxReportedProcs) std::memcpy(o->v[k], r.v, sizeof r.v);
    }
}

// ---------------------------------------------------------------------
// The gtest side
// ---------------------------------------------------------------------

inline lpf_machine_t root_machine()
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(LPF_ROOT, &m);
    return m;
}

inline lpf_pid_t machine_p() { return root_machine().p; }

// processes an lpf_exec(LPF_ROOT, P, ...) runs
inline lpf_pid_t procs_for(lpf_pid_t P) { return std::min(P, root_machine().free_p); }

// True when every process of a section shares this address space (the
// pthread engine); only then may a test pass results through statics.
inline bool shared_memory_engine()
{
    const char *e = std::getenv("SUPERSTEP_ENGINE");
    return e == nullptr || *e == '\0' || std::strcmp(e, "pthread") == 0;
}

inline lpf_err_t exec_outcome(lpf_t ctx, lpf_pid_t P, lpf_spmd_t f, Outcome &o,
        const void *in = nullptr, size_t in_size = 0)
{
    std::memset(&o, 0, sizeof o);
    lpf_args_t a = LPF_NO_ARGS;
    a.input = in;
    a.input_size = in_size;
    a.output = &o;
    a.output_size = sizeof o;
    return lpf_exec(ctx, P, f, a);
}

// Everything went well: exec succeeded, every process reported, no check
// failed.
inline ::testing::AssertionResult clean(lpf_err_t rc, const Outcome &o, lpf_pid_t P)
{
    if (rc != LPF_SUCCESS)
        return ::testing::AssertionFailure() << "lpf_exec returned " << rc
                                             << (o.first[0] ? "; " : "") << o.first;
    if (o.nprocs != procs_for(P))
        return ::testing::AssertionFailure() << "ran " << o.nprocs << " processes, expected "
                                             << procs_for(P);
    if (o.gather_rc != LPF_SUCCESS)
        return ::testing::AssertionFailure() << "gathering the reports returned " << o.gather_rc;
    if (o.reported != o.nprocs)
        return ::testing::AssertionFailure() << "only " << o.reported << " of " << o.nprocs
                                             << " processes reported";
    if (o.failures)
        return ::testing::AssertionFailure() << o.failures << " failed check(s); first: "
                                             << o.first;
    return ::testing::AssertionSuccess();
}

// Run f on P processes from LPF_ROOT and check the result is clean.
inline ::testing::AssertionResult run(lpf_pid_t P, lpf_spmd_t f, Outcome &o,
        const void *in = nullptr, size_t in_size = 0)
{
    lpf_err_t rc = exec_outcome(LPF_ROOT, P, f, o, in, in_size);
    return clean(rc, o, P);
}

inline ::testing::AssertionResult run(lpf_pid_t P, lpf_spmd_t f)
{
    Outcome o;
    return run(P, f, o);
}

// Value-parameterised over the number of processes.
class Procs : public ::testing::TestWithParam<lpf_pid_t> {
protected:
    lpf_pid_t P() const { return GetParam(); }
    lpf_pid_t nprocs() const { return procs_for(GetParam()); }
};

inline std::string procs_name(const ::testing::TestParamInfo<lpf_pid_t> &i)
{
    return "P" + std::to_string(i.param);
}

#define SS_ALL_P ::testing::Values(1u, 2u, 3u, 4u, 8u)
#define SS_MULTI_P ::testing::Values(2u, 3u, 4u, 8u)

#define SS_INSTANTIATE(Suite) INSTANTIATE_TEST_SUITE_P(P, Suite, SS_ALL_P, ::sstest::procs_name)
#define SS_INSTANTIATE_MULTI(Suite) \
    INSTANTIATE_TEST_SUITE_P(P, Suite, SS_MULTI_P, ::sstest::procs_name)

// Skip a multi-process test when the engine cannot run two processes.
#define SS_NEED_PROCS(n)                                                            \
    do {                                                                            \
        if (::sstest::procs_for(n) < (n)) GTEST_SKIP() << "needs " << (n) << " processes"; \
    } while (0)

} // namespace sstest
