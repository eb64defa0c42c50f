/*
 * Hello world on the LPF core: every process says hello, then process 0
 * collects the pids of all processes with one put each and prints them.
 *
 *   ./hello_lpf [P]      (default: all processors)
 */
#include <lpf/core.h>

#include <stdio.h>
#include <stdlib.h>

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    printf("Hello from process %u of %u\n", s, p);

    unsigned *pids = calloc(p, sizeof *pids);
    unsigned me = s;
    lpf_memslot_t pids_slot, me_slot;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, p + 1);      /* p puts arrive at process 0, its own
                                                  counted twice (issued and received) */
    lpf_sync(ctx, LPF_SYNC_DEFAULT);

    lpf_register_global(ctx, pids, p * sizeof *pids, &pids_slot);
    lpf_register_local(ctx, &me, sizeof me, &me_slot);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* the global slot is now usable */

    lpf_put(ctx, me_slot, 0, 0, pids_slot, s * sizeof me, sizeof me, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);

    if (s == 0) {
        printf("process 0 collected:");
        for (lpf_pid_t k = 0; k < p; ++k) printf(" %u", pids[k]);
        printf("\n");
    }
    lpf_deregister(ctx, me_slot);
    lpf_deregister(ctx, pids_slot);
    free(pids);
}

int main(int argc, char **argv)
{
    lpf_pid_t P = argc > 1 ? (lpf_pid_t)atoi(argv[1]) : LPF_MAX_P;
    lpf_err_t rc = lpf_exec(LPF_ROOT, P, spmd, LPF_NO_ARGS);
    if (rc != LPF_SUCCESS) {
        fprintf(stderr, "lpf_exec failed\n");
        return 1;
    }
    return 0;
}
