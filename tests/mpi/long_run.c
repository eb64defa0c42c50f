/*
 * long_run [SECONDS [MARKER]] -- every process syncs in a loop for about
 * SECONDS seconds (default 60): one superstep, then 10 ms asleep, a fixed
 * number of times, so that every process takes the same number of
 * supersteps. Process 0 prints "started" once after the first sync, for
 * signals.sh, which then sends bsprun a signal and checks that the job ends
 * and leaves no process behind. MARKER is ignored: it makes the command line
 * unique, for pgrep.
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/core.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    /* pid 0 tells everybody the number of supersteps (on MPI, processes
       share no memory and only pid 0 has the input) */
    long steps = s == 0 ? *(const long *)args.input : 0;
    lpf_memslot_t ms;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, p);
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    lpf_register_global(ctx, &steps, sizeof steps, &ms);
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    if (s == 0)
        for (lpf_pid_t k = 1; k < p; ++k)
            lpf_put(ctx, ms, 0, k, ms, 0, sizeof steps, LPF_MSG_DEFAULT);
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    lpf_deregister(ctx, ms);
    if (s == 0) {
        printf("started\n");
        fflush(stdout);
    }
    const struct timespec nap = { 0, 10 * 1000 * 1000 };
    for (long i = 0; i < steps; ++i) {
        nanosleep(&nap, NULL);
        if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) return;
    }
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? atol(argv[1]) : 60;
    if (seconds < 0) seconds = 0;
    long steps = seconds * 100;
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &steps;
    a.input_size = sizeof steps;
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, a);
    printf("finished\n");
    return rc == LPF_SUCCESS ? 0 : 1;
}
