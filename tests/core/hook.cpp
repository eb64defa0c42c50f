// Checklist items 63-69: lpf_rehook, nested sections and pending parent
// requests, and lpf_hook on user-created threads through
// lpf_pthread_initialize / lpf_pthread_finalize.
#include "lpf_test.hpp"

#include <lpf/pthread.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using sstest::Checker;
using sstest::Outcome;

// A small self-contained communication round on ctx: every process puts
// tag*1000+s to its right neighbour. Needs a fresh or resizable context.
void ring_round(Checker &c, lpf_t ctx, lpf_pid_t s, lpf_pid_t p, int tag)
{
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int mine = tag * 1000 + int(s), got = -1;
    lpf_memslot_t ls, gs;
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_register_global(ctx, &got, sizeof got, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, got, tag * 1000 + int((s + p - 1) % p));
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
}

// ---------------------------------------------------------------------
// lpf_rehook
// ---------------------------------------------------------------------

struct ChildIO {
    lpf_pid_t parent_pid, parent_nprocs;
    const void *self;       // the address the child must see as args.input
    Outcome o;              // the child's report (pid 0)
    int ran;                // set by the child, on every process
    int tag;
};

// The child runs on a fresh context: same pid and nprocs, free_p 1, its own
// args, capacities 0 (nothing registered: its first registration needs a
// resize and a sync), and it communicates on its own.
void spmd_child(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    ChildIO *io = static_cast<ChildIO *>(const_cast<void *>(args.input));
    SS_CHECK(c, io != nullptr);
    if (io) {
        SS_CHECK(c, io->self == args.input);
        SS_CHECK_EQ(c, args.input_size, sizeof(ChildIO));
        SS_CHECK(c, args.output == &io->o);
        SS_CHECK_EQ(c, args.output_size, sizeof(Outcome));
        SS_CHECK_EQ(c, s, io->parent_pid);
        SS_CHECK_EQ(c, p, io->parent_nprocs);
        io->ran = 1;
    }
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    SS_CHECK_EQ(c, m.free_p, 1u);
    SS_CHECK_EQ(c, m.p, sstest::machine_p());
    ring_round(c, ctx, s, p, io ? io->tag : 0);
    sstest::finish(ctx, s, p, args, c);
}

void check_child(Checker &c, ChildIO &io, lpf_pid_t s, lpf_pid_t p)
{
    SS_CHECK_EQ(c, io.ran, 1);
    if (s == 0) {
        SS_CHECK_EQ(c, io.o.nprocs, p);
        SS_CHECK_EQ(c, io.o.reported, p);
        SS_CHECK_EQ(c, io.o.failures, 0u);
        if (io.o.failures) c.fail(__FILE__, __LINE__, std::string("child: ") + io.o.first);
    }
}

lpf_err_t rehook_child(lpf_t ctx, ChildIO &io, lpf_pid_t s, lpf_pid_t p, int tag)
{
    std::memset(&io, 0, sizeof io);
    io.parent_pid = s;
    io.parent_nprocs = p;
    io.self = &io;
    io.tag = tag;
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &io;
    a.input_size = sizeof io;
    a.output = &io.o;
    a.output_size = sizeof io.o;
    return lpf_rehook(ctx, spmd_child, a);
}

// Items 63-65: the parent's registrations, capacities and pending requests
// survive a rehook untouched and complete at the parent's next sync.
void spmd_rehook_parent(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 3));
    SS_OK(c, lpf_resize_message_queue(ctx, 4));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int mine = int(s) + 1, got[2] = { -1, -1 };
    lpf_memslot_t ls, gs;
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_register_global(ctx, got, sizeof got, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    // item 63: a request pending in the parent's superstep
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    ChildIO io;
    SS_OK(c, rehook_child(ctx, io, s, p, 7));   // item 65
    check_child(c, io, s, p);
    SS_CHECK_EQ(c, got[0], -1);   // still pending
    // more requests after the rehook, in the same parent superstep
    SS_OK(c, lpf_put(ctx, ls, 0, (s + p - 1) % p, gs, sizeof(int), sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, got[0], int((s + p - 1) % p) + 1);
    SS_CHECK_EQ(c, got[1], int((s + 1) % p) + 1);
    // item 64: parent slots still usable after the rehook, with the
    // parent's capacities
    mine += 100;
    SS_OK(c, rehook_child(ctx, io, s, p, 8));
    check_child(c, io, s, p);
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + p - 1) % p, gs, sizeof(int), sizeof mine, LPF_MSG_DEFAULT));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, got[0], int((s + p - 1) % p) + 101);
    SS_CHECK_EQ(c, got[1], int((s + 1) % p) + 101);
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

// Rehook many times in a row, and a rehook inside a rehook.
void spmd_rehook_inner(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    ChildIO io;
    SS_OK(c, rehook_child(ctx, io, s, p, 3));
    check_child(c, io, s, p);
    ring_round(c, ctx, s, p, 4);
    sstest::finish(ctx, s, p, args, c);
}

void spmd_rehook_many(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    for (int i = 0; i < 20; ++i) {
        ChildIO io;
        SS_OK(c, rehook_child(ctx, io, s, p, i));
        check_child(c, io, s, p);
    }
    Outcome inner;
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &inner;
    a.output_size = sizeof inner;
    SS_OK(c, lpf_rehook(ctx, spmd_rehook_inner, s == 0 ? a : LPF_NO_ARGS));
    if (s == 0) {
        SS_CHECK_EQ(c, inner.reported, p);
        SS_CHECK_EQ(c, inner.failures, 0u);
    }
    sstest::finish(ctx, s, p, args, c);
}

// A child section with mismatched syncs: the rehook returns FATAL on every
// process and nobody hangs.
void spmd_child_leaves(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    if (s == p - 1) return;
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

std::atomic<int> child_fatal_rc[64];

void spmd_rehook_fatal(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    lpf_err_t rc = lpf_rehook(ctx, spmd_child_leaves, LPF_NO_ARGS);
    if (s < 64) child_fatal_rc[s] = rc;
    if (s == 0 && args.output) *static_cast<int *>(args.output) = rc;
    (void)p;
}

class Rehook : public sstest::Procs {};

TEST_P(Rehook, Items63to65_ParentUntouched)
{
    EXPECT_TRUE(sstest::run(P(), spmd_rehook_parent));
}

TEST_P(Rehook, RepeatedAndNested) { EXPECT_TRUE(sstest::run(P(), spmd_rehook_many)); }

TEST_P(Rehook, ChildWithMismatchedSyncs)
{
    if (nprocs() < 2) GTEST_SKIP() << "needs two processes";
    for (auto &x : child_fatal_rc) x = -1;
    int rc0 = -1;
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &rc0;
    a.output_size = sizeof rc0;
    // whether the parent section survives is not specified; it must return
    lpf_err_t rc = lpf_exec(LPF_ROOT, P(), spmd_rehook_fatal, a);
    EXPECT_TRUE(rc == LPF_SUCCESS || rc == LPF_ERR_FATAL) << rc;
    EXPECT_EQ(LPF_ERR_FATAL, rc0);
    if (sstest::shared_memory_engine()) {
        for (lpf_pid_t s = 0; s < nprocs(); ++s) EXPECT_EQ(LPF_ERR_FATAL, child_fatal_rc[s].load());
    }
}

// Rehook on LPF_ROOT (one process).
TEST(RehookRoot, OnRoot)
{
    ChildIO io;
    Checker c(0, 1);
    EXPECT_EQ(LPF_SUCCESS, rehook_child(LPF_ROOT, io, 0, 1, 5));
    check_child(c, io, 0, 1);
    EXPECT_EQ(0u, c.r.failures) << c.r.first;
}

// Item 63 for nested exec: requests issued before a nested lpf_exec
// complete at the parent's next sync; the nested section (on the process's
// free processors) communicates on its own.
void spmd_nested_inner(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    ring_round(c, ctx, s, p, 9);
    sstest::finish(ctx, s, p, args, c);
}

void spmd_nested_pending(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    SS_OK(c, lpf_resize_memory_register(ctx, 2));
    SS_OK(c, lpf_resize_message_queue(ctx, 2));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int mine = int(s) + 40, got = -1;
    lpf_memslot_t ls, gs;
    SS_OK(c, lpf_register_local(ctx, &mine, sizeof mine, &ls));
    SS_OK(c, lpf_register_global(ctx, &got, sizeof got, &gs));
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_OK(c, lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT));
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    Outcome o;
    SS_OK(c, sstest::exec_outcome(ctx, LPF_MAX_P, spmd_nested_inner, o));
    SS_CHECK_EQ(c, o.nprocs, m.free_p);
    SS_CHECK_EQ(c, o.reported, m.free_p);
    SS_CHECK_EQ(c, o.failures, 0u);
    SS_OK(c, lpf_sync(ctx, LPF_SYNC_DEFAULT));
    SS_CHECK_EQ(c, got, int((s + p - 1) % p) + 40);
    SS_OK(c, lpf_deregister(ctx, ls));
    SS_OK(c, lpf_deregister(ctx, gs));
    sstest::finish(ctx, s, p, args, c);
}

TEST_P(Rehook, Item63_PendingAcrossNestedExec)
{
    EXPECT_TRUE(sstest::run(P(), spmd_nested_pending));
}

SS_INSTANTIATE(Rehook);

// ---------------------------------------------------------------------
// lpf_hook with user-created threads (pthread engine)
// ---------------------------------------------------------------------

using sstest::Report;

struct HookIO {
    lpf_pid_t pid, nprocs;
    const void *self;
    int round;
    Report *report;   // this thread's report
};

void spmd_hooked(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    Checker c(s, p);
    HookIO *io = static_cast<HookIO *>(const_cast<void *>(args.input));
    // item 67: pid and nprocs as initialised, args passed through unchanged
    SS_CHECK(c, io != nullptr && io->self == args.input);
    SS_CHECK_EQ(c, args.input_size, sizeof(HookIO));
    SS_CHECK(c, args.output == io);
    SS_CHECK_EQ(c, args.f_size, size_t(0));
    if (io) {
        SS_CHECK_EQ(c, s, io->pid);
        SS_CHECK_EQ(c, p, io->nprocs);
    }
    lpf_machine_t m = LPF_INVALID_MACHINE;
    SS_OK(c, lpf_probe(ctx, &m));
    SS_CHECK_EQ(c, m.free_p, 1u);
    // a nested exec inside a hook runs one process
    Outcome o;
    SS_OK(c, sstest::exec_outcome(ctx, LPF_MAX_P, spmd_nested_inner, o));
    SS_CHECK_EQ(c, o.nprocs, 1u);
    SS_CHECK_EQ(c, o.failures, 0u);
    ring_round(c, ctx, s, p, io ? io->round : 0);
    // rehook inside a hook
    ChildIO cio;
    SS_OK(c, rehook_child(ctx, cio, s, p, 6));
    check_child(c, cio, s, p);
    // pass the report out through args; keep the first failing one
    if (io && io->report && io->report->failures == 0) *io->report = c.r;
}

// Items 66-68: P user threads initialise with distinct pids, hook several
// times with one init each, and finalise; all succeed.
void hook_group(lpf_pid_t P, int hooks, std::vector<Report> &reports, std::vector<int> &rcs)
{
    reports.assign(P, Report{});
    rcs.assign(P * (hooks + 2), -1);
    std::vector<std::thread> threads;
    for (lpf_pid_t t = 0; t < P; ++t) {
        threads.emplace_back([t, P, hooks, &reports, &rcs]() {
            lpf_init_t init = LPF_INIT_NONE;
            rcs[t * (hooks + 2)] = lpf_pthread_initialize(t, P, &init);
            for (int h = 0; h < hooks; ++h) {
                HookIO io;
                std::memset(&io, 0, sizeof io);
                io.pid = t;
                io.nprocs = P;
                io.self = &io;
                io.round = h;
                io.report = &reports[t];
                lpf_args_t a = LPF_NO_ARGS;
                a.input = &io;
                a.input_size = sizeof io;
                a.output = &io;
                a.output_size = sizeof io;
                rcs[t * (hooks + 2) + 1 + h] = lpf_hook(init, spmd_hooked, a);
            }
            rcs[t * (hooks + 2) + hooks + 1] = lpf_pthread_finalize(init);
        });
    }
    for (auto &th : threads) th.join();
}

class Hook : public sstest::Procs {};

TEST_P(Hook, Items66to68_UserThreads)
{
    const lpf_pid_t n = P();
    std::vector<Report> reports;
    std::vector<int> rcs;
    // two groups, one after the other, each hooking three times
    for (int group = 0; group < 2; ++group) {
        hook_group(n, 3, reports, rcs);
        for (size_t i = 0; i < rcs.size(); ++i) EXPECT_EQ(LPF_SUCCESS, rcs[i]) << "call " << i;
        for (lpf_pid_t t = 0; t < n; ++t) {
            EXPECT_EQ(1u, reports[t].ran) << "thread " << t;
            EXPECT_EQ(0u, reports[t].failures) << "thread " << t << ": " << reports[t].first;
        }
    }
}

// A hooked section with mismatched syncs: every hook returns FATAL, no hang.
void spmd_hooked_leaves(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    if (s == p - 1) return;
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

TEST_P(Hook, MismatchedSyncsInHook)
{
    const lpf_pid_t n = P();
    if (n < 2) GTEST_SKIP() << "needs two threads";
    std::vector<int> rc(n, -1), fin(n, -1);
    std::vector<std::thread> threads;
    for (lpf_pid_t t = 0; t < n; ++t)
        threads.emplace_back([t, n, &rc, &fin]() {
            lpf_init_t init = LPF_INIT_NONE;
            if (lpf_pthread_initialize(t, n, &init) != LPF_SUCCESS) return;
            rc[t] = lpf_hook(init, spmd_hooked_leaves, LPF_NO_ARGS);
            fin[t] = lpf_pthread_finalize(init);
        });
    for (auto &th : threads) th.join();
    for (lpf_pid_t t = 0; t < n; ++t) {
        EXPECT_EQ(LPF_ERR_FATAL, rc[t]) << "thread " << t;
        EXPECT_EQ(LPF_SUCCESS, fin[t]) << "thread " << t;
    }
}

SS_INSTANTIATE(Hook);

// lpf_pthread_initialize rejects impossible arguments without touching
// *init; finalising LPF_INIT_NONE fails cleanly.
TEST(HookInit, BadArguments)
{
    int marker = 0;
    lpf_init_t init = &marker;
    EXPECT_EQ(LPF_ERR_FATAL, lpf_pthread_initialize(2, 2, &init));
    EXPECT_EQ(LPF_ERR_FATAL, lpf_pthread_initialize(0, 0, &init));
    EXPECT_EQ(static_cast<void *>(&marker), init);
    EXPECT_EQ(LPF_ERR_FATAL, lpf_pthread_finalize(LPF_INIT_NONE));
}

// Item 69: hooking LPF_INIT_NONE fails cleanly.
std::atomic<int> none_ran{ 0 };
void spmd_never(lpf_t, lpf_pid_t, lpf_pid_t, lpf_args_t) { none_ran = 1; }

TEST(HookNone, Item69_InitNone)
{
    EXPECT_EQ(LPF_ERR_FATAL, lpf_hook(LPF_INIT_NONE, spmd_never, LPF_NO_ARGS));
    EXPECT_EQ(0, none_ran.load());
}

} // namespace
