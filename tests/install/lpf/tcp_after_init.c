/*
 * tcp_after_init PORT PID NPROCS: one of NPROCS separately started jobs that
 * call MPI_Init first, then meet over TCP (lpf_mpi_initialize_over_tcp on
 * 127.0.0.1:PORT) and run lpf_hook together: a put ring. Prints
 * "tcp_after_init PID: ok" on stderr when the ring delivered the left
 * neighbour's pid.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>
#include <stdio.h>
#include <stdlib.h>

const int LPF_MPI_AUTO_INITIALIZE = 0;

static void ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    unsigned mine = s, got = ~0u;
    lpf_memslot_t a, b;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &mine, sizeof mine, &a);
    lpf_register_global(ctx, &got, sizeof got, &b);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, a, 0, (s + 1) % p, b, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    *(int *)args.output = got == (s + p - 1) % p;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tcp_after_init PORT PID NPROCS\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    lpf_pid_t pid = (lpf_pid_t)atoi(argv[2]), nprocs = (lpf_pid_t)atoi(argv[3]);
    lpf_init_t init = LPF_INIT_NONE;
    if (lpf_mpi_initialize_over_tcp("127.0.0.1", argv[1], 30000, pid, nprocs, &init)
            != LPF_SUCCESS) {
        fprintf(stderr, "tcp_after_init %u: lpf_mpi_initialize_over_tcp failed\n", pid);
        return 1;
    }
    int ok = 0;
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &ok;
    args.output_size = sizeof ok;
    lpf_err_t rc = lpf_hook(init, ring, args);
    lpf_mpi_finalize(init);
    MPI_Finalize();
    fprintf(stderr, "tcp_after_init %u: %s\n", pid, rc == LPF_SUCCESS && ok ? "ok" : "wrong");
    return rc == LPF_SUCCESS && ok ? 0 : 1;
}
