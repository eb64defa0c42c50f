/*
 * tcp_test SERVER PORT TIMEOUT_MS PID NPROCS [expect-timeout|expect-reject]
 *
 * One of NPROCS independently started processes (no mpirun) that meet over
 * TCP with lpf_mpi_initialize_over_tcp (items 72, 73) and run a ring put
 * together. With "expect-timeout" the meeting must fail with LPF_ERR_FATAL
 * after about TIMEOUT_MS (the others never come); with "expect-reject" it
 * must fail with LPF_ERR_FATAL well before TIMEOUT_MS (a wrong secret, a
 * refused secret file); the program then leaves with _exit, as the contract
 * asks. Exit status 0 when all went as expected.
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/core.h>
#include <lpf/mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int *got_out = args.output;
    int mine = 100 + (int)s, got = -1;
    lpf_memslot_t ls, gs;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &mine, sizeof mine, &ls);
    lpf_register_global(ctx, &got, sizeof got, &gs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    *got_out = got;
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gs);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: tcp_test SERVER PORT TIMEOUT_MS PID NPROCS "
                "[expect-timeout|expect-reject]\n");
        return 2;
    }
    const char *server = argv[1], *port = argv[2];
    int timeout = atoi(argv[3]);
    lpf_pid_t pid = (lpf_pid_t)atoi(argv[4]), nprocs = (lpf_pid_t)atoi(argv[5]);
    int expect_timeout = argc > 6 && strcmp(argv[6], "expect-timeout") == 0;
    int expect_reject = argc > 6 && strcmp(argv[6], "expect-reject") == 0;
    lpf_init_t init = LPF_INIT_NONE;
    double t0 = now();
    lpf_err_t rc = lpf_mpi_initialize_over_tcp(server, port, timeout, pid, nprocs, &init);
    double dt = now() - t0;
    if (expect_timeout) {
        int ok = rc == LPF_ERR_FATAL && dt >= 0.9 * timeout / 1000.0 && dt < timeout / 1000.0 + 10.0;
        printf("process %u: meeting failed as expected after %.2f s: %s\n", pid, dt, ok ? "ok" : "FAILED");
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    if (expect_reject) {
        int ok = rc == LPF_ERR_FATAL && dt < 0.5 * timeout / 1000.0;
        printf("process %u: meeting refused as expected after %.2f s: %s\n", pid, dt, ok ? "ok" : "FAILED");
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    if (rc != LPF_SUCCESS) {
        printf("process %u: lpf_mpi_initialize_over_tcp returned %d\n", pid, rc);
        fflush(stdout);
        _exit(3);   /* e.g. the port was taken: the driver tries another */
    }
    int got = -1;
    lpf_args_t a = { NULL, 0, &got, sizeof got, NULL, 0 };
    lpf_err_t hr = lpf_hook(init, ring, a);
    int want = 100 + (int)((pid + nprocs - 1) % nprocs);
    int ok = hr == LPF_SUCCESS && got == want;
    printf("process %u of %u met over TCP in %.2f s, ring put: got %d: %s\n", pid, nprocs, dt, got,
            ok ? "ok" : "FAILED");
    fflush(stdout);
    if (lpf_mpi_finalize(init) != LPF_SUCCESS) ok = 0;
    MPI_Finalize();
    return ok ? 0 : 1;
}
