/*
 * faults_test MODE -- a process fails in the middle of a run while the
 * others keep syncing; the whole job must end (run it through bsprun with
 * the MPI engine; faults.sh checks the exit status, the message and that it
 * ends within seconds).
 *   abort    process 1 prints a line and calls lpf_abort
 *   sigkill  process 1 is killed with SIGKILL
 *   exit     process 1 calls exit(3)
 *   segv     process 1 writes through a NULL pointer
 *   status   nothing fails; main returns 5 (the launcher's status is 5)
 *   exit0    process 0 calls exit(0) inside the section: the others' syncs
 *            fail instead of waiting, and the job ends with status 0
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/abort.h>
#include <lpf/core.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const modes[] = { "abort", "sigkill", "exit", "segv", "status", "exit0" };

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    /* pid 0 tells everybody the mode (processes share no memory) */
    int m = s == 0 ? *(const int *)args.input : -1;
    lpf_memslot_t ms;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, &m, sizeof m, &ms);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s == 0)
        for (lpf_pid_t k = 1; k < p; ++k) lpf_put(ctx, ms, 0, k, ms, 0, sizeof m, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    const char *mode = modes[m];
    for (int i = 0; i < 5; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_pid_t victim = strcmp(mode, "exit0") == 0 ? 0 : 1 % p;
    if (s == victim) {
        if (strcmp(mode, "abort") == 0) {
            fprintf(stderr, "process %u of %u aborts on purpose\n", s, p);
            lpf_abort(ctx);
        } else if (strcmp(mode, "sigkill") == 0) {
            raise(SIGKILL);
        } else if (strcmp(mode, "exit") == 0) {
            fprintf(stderr, "process %u of %u exits with status 3\n", s, p);
            exit(3);
        } else if (strcmp(mode, "segv") == 0) {
            volatile int *nil = NULL;
            *nil = 1;
        } else if (strcmp(mode, "exit0") == 0) {
            printf("process 0 exits inside the section\n");
            exit(0);
        }
    }
    if (strcmp(mode, "status") == 0) return;
    /* the others sync until their sync fails (or they are ended) */
    long n = 0;
    while (lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS) ++n;
    printf("process %u: sync failed after %ld more supersteps\n", s, n);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "status";
    int m = 0;
    while (m < 6 && strcmp(modes[m], mode) != 0) ++m;
    if (m == 6) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &m;
    a.input_size = sizeof m;
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, a);
    printf("lpf_exec returned %d\n", rc);
    return strcmp(mode, "status") == 0 && rc == LPF_SUCCESS ? 5 : 0;
}
