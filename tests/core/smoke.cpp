// Smoke test: a ring put on the pthread engine for several process counts.
#include <lpf/core.h>
#include <gtest/gtest.h>

namespace {

void ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int *ok = static_cast<int *>(args.output);
    int mine = static_cast<int>(s), got = -1;
    lpf_memslot_t ms, gs;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &mine, sizeof mine, &ms);
    lpf_register_global(ctx, &got, sizeof got, &gs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, ms, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s == 0 && ok) *ok = got == static_cast<int>(p - 1);
}

class Smoke : public ::testing::TestWithParam<unsigned> {};

TEST_P(Smoke, RingPut)
{
    int ok = 0;
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &ok;
    args.output_size = sizeof ok;
    ASSERT_EQ(LPF_SUCCESS, lpf_exec(LPF_ROOT, GetParam(), ring, args));
    EXPECT_EQ(1, ok);
}

INSTANTIATE_TEST_SUITE_P(P, Smoke, ::testing::Values(1u, 2u, 3u, 4u, 8u));

} // namespace
