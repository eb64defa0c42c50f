// Linked with LPF's debug layer (-llpf_debug, target_link_lpf(... DEBUG)).
// Two processes put to the same bytes of process 0 in one superstep:
// checked mode warns about it (docs/checked.md), otherwise nothing is said.
#include <lpf/core.h>

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t, lpf_args_t)
{
    unsigned mine = s, target = 0;
    lpf_memslot_t a, b;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 4);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &mine, sizeof mine, &a);
    lpf_register_global(ctx, &target, sizeof target, &b);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, a, 0, 0, b, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

int main()
{
    return lpf_exec(LPF_ROOT, 2, spmd, LPF_NO_ARGS) == LPF_SUCCESS ? 0 : 1;
}
