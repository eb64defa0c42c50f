// Checklist items 14-25: lpf_exec, its arguments and output, and the
// failure state (§5.7) after mismatched syncs. No test may hang: a process
// that leaves early makes its peers' syncs fail.
#include "lpf_test.hpp"

#include <atomic>
#include <cstring>

namespace {

using sstest::Checker;
using sstest::Outcome;

// ---------------------------------------------------------------------
// Items 14-16: how many processes run, with which pids
// ---------------------------------------------------------------------

std::atomic<int> single_calls{ 0 };
std::atomic<unsigned> single_pid{ 99 }, single_nprocs{ 99 };

void spmd_single(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)ctx;
    // pid 0 runs in the caller's address space (_LPF_INCLUSIVE_MEMORY)
    single_calls++;
    single_pid = s;
    single_nprocs = p;
    if (args.input || args.output || args.input_size || args.output_size || args.f_size)
        single_calls += 100;
}

TEST(Exec, Item14_OneProcess)
{
    single_calls = 0;
    ASSERT_EQ(LPF_SUCCESS, lpf_exec(LPF_ROOT, 1, spmd_single, LPF_NO_ARGS));
    EXPECT_EQ(1, single_calls.load());
    EXPECT_EQ(0u, single_pid.load());
    EXPECT_EQ(1u, single_nprocs.load());
}

void spmd_pids(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_CHECK(c, s < p);
    c.set(0, s);
    c.set(1, p);
    sstest::finish(ctx, s, p, args, c);
}

void expect_distinct_pids(const Outcome &o)
{
    std::vector<int> seen(o.nprocs, 0);
    for (unsigned k = 0; k < o.nprocs; ++k) {
        ASSERT_LT(o.v[k][0], o.nprocs);
        EXPECT_EQ(o.nprocs, o.v[k][1]);
        seen[o.v[k][0]]++;
    }
    for (unsigned k = 0; k < o.nprocs; ++k) EXPECT_EQ(1, seen[k]) << "pid " << k;
}

TEST(Exec, Item15_MaxP)
{
    Outcome o;
    ASSERT_TRUE(sstest::run(LPF_MAX_P, spmd_pids, o));
    EXPECT_EQ(sstest::machine_p(), o.nprocs);
    expect_distinct_pids(o);
}

TEST(Exec, Item16_TwoProcesses)
{
    SS_NEED_PROCS(2u);
    Outcome o;
    ASSERT_TRUE(sstest::run(2, spmd_pids, o));
    EXPECT_EQ(2u, o.nprocs);
    expect_distinct_pids(o);
}

// P beyond the free processors runs free_p processes.
TEST(Exec, MoreThanAvailable)
{
    const lpf_pid_t F = sstest::root_machine().free_p;
    Outcome o;
    ASSERT_TRUE(sstest::run(2 * F + 1, spmd_pids, o));
    EXPECT_EQ(F, o.nprocs);
    expect_distinct_pids(o);
}

class ExecP : public sstest::Procs {};

TEST_P(ExecP, Item15_DistinctPids)
{
    Outcome o;
    ASSERT_TRUE(sstest::run(P(), spmd_pids, o));
    EXPECT_EQ(nprocs(), o.nprocs);
    expect_distinct_pids(o);
}

// ---------------------------------------------------------------------
// Items 17-21: arguments and output
// ---------------------------------------------------------------------

extern "C" void sym_a() {}
extern "C" void sym_b() {}
extern "C" void sym_c() {}

struct Input {
    const void *self;   // the address pid 0 must see
    size_t size;
    uint64_t magic;
    char text[40];
};

struct Output {
    Outcome o;          // filled by finish()
    uint64_t written;   // written by pid 0 before finish()
};

void spmd_args(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    // item 19: every pid receives f_size and the caller's functions
    SS_CHECK_EQ(c, args.f_size, size_t(3));
    if (args.f_size == 3 && args.f_symbols) {
        SS_CHECK(c, args.f_symbols[0] == reinterpret_cast<lpf_func_t>(&sym_a));
        SS_CHECK(c, args.f_symbols[1] == reinterpret_cast<lpf_func_t>(&sym_b));
        SS_CHECK(c, args.f_symbols[2] == reinterpret_cast<lpf_func_t>(&sym_c));
        for (size_t i = 0; i < 3; ++i) args.f_symbols[i]();   // callable
    }
    if (s == 0) {
        // item 17: pid 0 receives input/output exactly as given
        const Input *in = static_cast<const Input *>(args.input);
        SS_CHECK(c, in != nullptr);
        if (in) {
            SS_CHECK(c, in->self == args.input);
            SS_CHECK_EQ(c, args.input_size, in->size);
            SS_CHECK_EQ(c, in->magic, uint64_t(0x1234567890abcdefull));
            SS_CHECK(c, std::strcmp(in->text, "input of pid 0") == 0);
        }
        SS_CHECK_EQ(c, args.output_size, sizeof(Output));
    } else {
        // item 18: the others receive no input or output
        SS_CHECK(c, args.input == nullptr);
        SS_CHECK_EQ(c, args.input_size, size_t(0));
        SS_CHECK(c, args.output == nullptr);
        SS_CHECK_EQ(c, args.output_size, size_t(0));
    }
    lpf_args_t fin = args;
    if (s == 0) {
        Output *out = static_cast<Output *>(args.output);
        out->written = 0xfeedfacecafebeefull;   // item 20
        fin.output = &out->o;
        fin.output_size = sizeof out->o;
    }
    sstest::finish(ctx, s, p, fin, c);
}

TEST_P(ExecP, Items17to20_Args)
{
    Input in;
    std::memset(&in, 0, sizeof in);
    in.self = &in;
    in.size = sizeof in;
    in.magic = 0x1234567890abcdefull;
    std::strcpy(in.text, "input of pid 0");
    Output out;
    std::memset(&out, 0, sizeof out);
    const lpf_func_t syms[3] = { &sym_a, &sym_b, &sym_c };
    lpf_args_t a;
    a.input = &in;
    a.input_size = sizeof in;
    a.output = &out;
    a.output_size = sizeof out;
    a.f_symbols = syms;
    a.f_size = 3;
    lpf_err_t rc = lpf_exec(LPF_ROOT, P(), spmd_args, a);
    EXPECT_TRUE(sstest::clean(rc, out.o, P()));
    EXPECT_EQ(0xfeedfacecafebeefull, out.written);
    // the input was not modified
    EXPECT_EQ(0x1234567890abcdefull, in.magic);
    EXPECT_STREQ("input of pid 0", in.text);
}

// Item 21: two consecutive execs with different args each see their own.
void spmd_echo(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)ctx;
    (void)p;
    if (s != 0) return;
    const int *in = static_cast<const int *>(args.input);
    int *out = static_cast<int *>(args.output);
    if (in && out && args.input_size == sizeof(int) && args.output_size == 2 * sizeof(int)) {
        out[0] = *in * 10;
        out[1] = static_cast<int>(args.f_size);
    }
}

TEST_P(ExecP, Item21_ConsecutiveExecs)
{
    int in1 = 1, in2 = 2;
    int out1[2] = { 0, 0 }, out2[2] = { 0, 0 };
    const lpf_func_t syms[2] = { &sym_a, &sym_b };
    lpf_args_t a1 = { &in1, sizeof in1, out1, sizeof out1, syms, 1 };
    lpf_args_t a2 = { &in2, sizeof in2, out2, sizeof out2, syms, 2 };
    ASSERT_EQ(LPF_SUCCESS, lpf_exec(LPF_ROOT, P(), spmd_echo, a1));
    ASSERT_EQ(LPF_SUCCESS, lpf_exec(LPF_ROOT, P(), spmd_echo, a2));
    EXPECT_EQ(10, out1[0]);
    EXPECT_EQ(1, out1[1]);
    EXPECT_EQ(20, out2[0]);
    EXPECT_EQ(2, out2[1]);
}

// Item 25: processes that sync equally often (with different work and
// different requests in between) make lpf_exec succeed.
void spmd_equal_syncs(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_message_queue(ctx, 2 * p));
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    std::vector<unsigned> box(p, 0);
    unsigned mine = s + 1;
    lpf_memslot_t gs, ls;
    SS_OK(c, lpf_register_global(ctx, box.data(), p * sizeof(unsigned), &gs));
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    for (int step = 0; step < 10; ++step) {
        SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if ((s + step) % 3 == 0)   // some processes send, others don't
            for (lpf_pid_t k = 0; k < p; ++k)
                SS_OK(c, lpf_put(ctx, ls, 0, k, gs, s * sizeof(unsigned), sizeof mine,
                        LPF_MSG_DEFAULT));
    }
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_deregister(ctx, gs));
    SS_OK(c, lpf_deregister(ctx, ls));
    sstest::finish(ctx, s, p, args, c);
}

TEST_P(ExecP, Item25_EqualSyncsSucceed)
{
    EXPECT_TRUE(sstest::run(P(), spmd_equal_syncs));
}

SS_INSTANTIATE(ExecP);

// ---------------------------------------------------------------------
// Items 22-24: mismatched syncs end in LPF_ERR_FATAL, never in a hang
// ---------------------------------------------------------------------

// What pid 0 observed (the only channel that survives a failed section
// on every engine).
struct FatalOut {
    int wrote;         // written first thing by pid 0 (item 22)
    int sync_rc[3];    // pid 0's syncs
    int later_sync;    // another sync in the failure state
    int later_exec;    // a nested exec in the failure state
    int later_rehook;  // a rehook in the failure state
};

// Per-process observations; read only on shared-memory engines.
constexpr unsigned kObs = 64;
std::atomic<int> obs_sync[kObs][3];
std::atomic<int> obs_done[kObs];

void reset_obs()
{
    for (unsigned k = 0; k < kObs; ++k) {
        for (auto &x : obs_sync[k]) x = -1;
        obs_done[k] = 0;
    }
}

void spmd_noop(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t) {}

// Everybody syncs three times, except `leaver`, who returns at once.
template <int Leaver>   // 0: pid 0 leaves; 1: the last pid leaves
void spmd_leave_early(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    const lpf_pid_t leaver = Leaver == 0 ? 0 : p - 1;
    FatalOut *out = s == 0 ? static_cast<FatalOut *>(args.output) : nullptr;
    if (out) out->wrote = 42;
    if (s == leaver) {
        if (s < kObs) obs_done[s] = 1;
        return;
    }
    for (int i = 0; i < 3; ++i) {
        lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (out) out->sync_rc[i] = rc;
        if (s < kObs) obs_sync[s][i] = rc;
    }
    if (out) {
        out->later_sync = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        out->later_exec = lpf_exec(ctx, 1, spmd_noop, LPF_NO_ARGS);
        out->later_rehook = lpf_rehook(ctx, spmd_noop, LPF_NO_ARGS);
    }
    if (s < kObs) obs_done[s] = 1;
}

class Fatal : public sstest::Procs {};

// Item 23 (and 22): a sibling leaves early.
TEST_P(Fatal, Item23_SiblingLeavesEarly)
{
    SS_NEED_PROCS(2u);
    reset_obs();
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_leave_early<1>, a));
    EXPECT_EQ(42, out.wrote) << "item 22: pid 0's output is visible on FATAL";
    for (int i = 0; i < 3; ++i) EXPECT_EQ(LPF_ERR_FATAL, out.sync_rc[i]) << "sync " << i;
    EXPECT_EQ(LPF_ERR_FATAL, out.later_sync);
    EXPECT_EQ(LPF_ERR_FATAL, out.later_exec);
    EXPECT_EQ(LPF_ERR_FATAL, out.later_rehook);
    if (sstest::shared_memory_engine()) {
        const lpf_pid_t n = nprocs();
        for (lpf_pid_t s = 0; s < n; ++s) {
            EXPECT_EQ(1, obs_done[s].load()) << "process " << s << " returned";
            if (s == n - 1) continue;
            // nobody can complete a sync without the leaver
            for (int i = 0; i < 3; ++i)
                EXPECT_EQ(LPF_ERR_FATAL, obs_sync[s][i].load()) << "process " << s << " sync " << i;
        }
    }
}

// Item 24: pid 0 leaves early while the others sync.
TEST_P(Fatal, Item24_Pid0LeavesEarly)
{
    SS_NEED_PROCS(2u);
    reset_obs();
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_leave_early<0>, a));
    EXPECT_EQ(42, out.wrote) << "item 22";
    if (sstest::shared_memory_engine()) {
        for (lpf_pid_t s = 1; s < nprocs(); ++s) {
            EXPECT_EQ(1, obs_done[s].load()) << "process " << s << " returned";
            for (int i = 0; i < 3; ++i)
                EXPECT_EQ(LPF_ERR_FATAL, obs_sync[s][i].load()) << "process " << s << " sync " << i;
        }
    }
}

// All sync once together; then the last process syncs once more, alone.
void spmd_extra_sync(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    FatalOut *out = s == 0 ? static_cast<FatalOut *>(args.output) : nullptr;
    lpf_err_t first = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (out) {
        out->wrote = 7;
        out->sync_rc[0] = first;
    }
    if (s < kObs) obs_sync[s][0] = first;
    if (s == p - 1) {
        lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (s < kObs) obs_sync[s][1] = rc;
    }
    if (s < kObs) obs_done[s] = 1;
}

TEST_P(Fatal, Item23_ExtraSyncAtTheEnd)
{
    SS_NEED_PROCS(2u);
    reset_obs();
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_extra_sync, a));
    EXPECT_EQ(7, out.wrote);
    EXPECT_EQ(LPF_SUCCESS, out.sync_rc[0]);
    if (sstest::shared_memory_engine()) {
        const lpf_pid_t n = nprocs();
        EXPECT_EQ(LPF_ERR_FATAL, obs_sync[n - 1][1].load());
        for (lpf_pid_t s = 0; s < n; ++s) EXPECT_EQ(1, obs_done[s].load());
    }
}

// Processes disagree in the middle: odd pids sync once more than even ones
// before everybody tries to go on. Nobody may hang; exec reports FATAL.
void spmd_uneven(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)p;
    FatalOut *out = s == 0 ? static_cast<FatalOut *>(args.output) : nullptr;
    if (out) out->wrote = 5;
    int n = (s % 2) ? 4 : 3;
    for (int i = 0; i < n; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s < kObs) obs_done[s] = 1;
}

TEST_P(Fatal, Item23_UnevenSyncCounts)
{
    SS_NEED_PROCS(2u);
    reset_obs();
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_uneven, a));
    EXPECT_EQ(5, out.wrote);
}

// Pending requests when a peer leaves: pid 0 has queued puts to the leaver;
// the sync fails instead of touching memory of a process that has left.
void spmd_leave_with_pending(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    FatalOut *out = s == 0 ? static_cast<FatalOut *>(args.output) : nullptr;
    std::vector<int> box(p, 0);
    int mine = int(s);
    lpf_memslot_t gs = LPF_INVALID_MEMSLOT, ls = LPF_INVALID_MEMSLOT;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2 * p);
    lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, box.data(), p * sizeof(int), &gs);
    lpf_register_local(ctx, &mine, sizeof mine, &ls);
    if (rc == LPF_SUCCESS) rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (out) out->sync_rc[0] = rc;
    if (s == p - 1) return;   // leaves with registrations live
    for (lpf_pid_t k = 0; k < p; ++k)
        lpf_put(ctx, ls, 0, k, gs, s * sizeof(int), sizeof(int), LPF_MSG_DEFAULT);
    rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (out) {
        out->wrote = 9;
        out->sync_rc[1] = rc;
    }
}

TEST_P(Fatal, Item23_LeaverHasPendingRequests)
{
    SS_NEED_PROCS(2u);
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_leave_with_pending, a));
    EXPECT_EQ(9, out.wrote);
    EXPECT_EQ(LPF_SUCCESS, out.sync_rc[0]);
    EXPECT_EQ(LPF_ERR_FATAL, out.sync_rc[1]);
}

// Some processes enter lpf_rehook while the others sync: the section fails
// everywhere, nobody hangs.
void spmd_rehook_vs_sync(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)p;
    FatalOut *out = s == 0 ? static_cast<FatalOut *>(args.output) : nullptr;
    lpf_err_t rc = s == 0 ? lpf_rehook(ctx, spmd_noop, LPF_NO_ARGS)
                          : lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (out) {
        out->wrote = 3;
        out->sync_rc[0] = rc;
    }
    if (s < kObs) obs_sync[s][0] = rc;
}

TEST_P(Fatal, Item23_RehookWhileOthersSync)
{
    SS_NEED_PROCS(2u);
    reset_obs();
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_rehook_vs_sync, a));
    EXPECT_EQ(3, out.wrote);
    EXPECT_EQ(LPF_ERR_FATAL, out.sync_rc[0]);
    if (sstest::shared_memory_engine()) {
        for (lpf_pid_t s = 0; s < nprocs(); ++s) EXPECT_EQ(LPF_ERR_FATAL, obs_sync[s][0].load());
    }
}

// After a failed section, the next one starts clean.
TEST_P(Fatal, Item25_NextExecAfterFatalSucceeds)
{
    SS_NEED_PROCS(2u);
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_leave_early<1>, a));
    EXPECT_TRUE(sstest::run(P(), spmd_equal_syncs));
    EXPECT_EQ(LPF_ERR_FATAL, lpf_exec(LPF_ROOT, P(), spmd_leave_early<0>, a));
    EXPECT_TRUE(sstest::run(P(), spmd_equal_syncs));
}

// A nested section that fails makes its lpf_exec return FATAL; the parent
// section goes on.
void spmd_nested_fatal(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    FatalOut out;
    std::memset(&out, 0, sizeof out);
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &out;
    a.output_size = sizeof out;
    lpf_err_t rc = lpf_exec(ctx, LPF_MAX_P, spmd_leave_early<1>, a);
    if (m.free_p >= 2) {
        SS_CHECK_EQ(c, rc, LPF_ERR_FATAL);
        SS_CHECK_EQ(c, out.sync_rc[0], LPF_ERR_FATAL);
    } else {
        SS_CHECK_EQ(c, rc, LPF_SUCCESS);   // one process: nobody to disagree with
    }
    SS_CHECK_EQ(c, out.wrote, 42);
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    sstest::finish(ctx, s, p, args, c);
}

TEST_P(Fatal, Item23_NestedSectionFails)
{
    EXPECT_TRUE(sstest::run(P(), spmd_nested_fatal));
}

INSTANTIATE_TEST_SUITE_P(P, Fatal, SS_MULTI_P, sstest::procs_name);

} // namespace
