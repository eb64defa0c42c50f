/* A program outside the project: sums the pids of 2 processes with puts. */
#include <lpf/core.h>
#include <stdio.h>

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    unsigned pids[64] = { 0 }, me = s;
    lpf_memslot_t a, b;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, p + 1);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, pids, sizeof pids, &a);
    lpf_register_local(ctx, &me, sizeof me, &b);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, b, 0, 0, a, s * sizeof me, sizeof me, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s == 0) {
        unsigned sum = 0;
        for (lpf_pid_t k = 0; k < p; ++k) sum += pids[k];
        *(int *)args.output = sum == p * (p - 1) / 2;
    }
}

int main(void)
{
    int ok = 0;
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &ok;
    args.output_size = sizeof ok;
    if (lpf_exec(LPF_ROOT, 2, spmd, args) != LPF_SUCCESS || !ok) {
        printf("wrong\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
