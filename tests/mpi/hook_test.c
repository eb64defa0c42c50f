/*
 * hook_test -- an MPI program that uses Superstep from inside (items 70,
 * 71 and 74 of the contract): it defines LPF_MPI_AUTO_INITIALIZE = 0, so
 * every rank runs main; it calls MPI_Init itself and hooks SPMD functions
 * into MPI_COMM_WORLD and into a sub-communicator that only some ranks
 * join. Run: bsprun --engine mpi -n N hook_test (N >= 1). Exit status 0
 * when every check passed on this rank.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int LPF_MPI_AUTO_INITIALIZE = 0;   /* item 74: overrides the library's */

static int fails;
#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fails++;                                                                \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
        }                                                                           \
    } while (0)

struct ring_io {
    int world_rank;
    int got;       /* out: the value the left neighbour put */
    int hooked_input_ok;
    lpf_pid_t pid, nprocs;
};

/* item 70: a ring put; args are this process's own, unmodified */
static void ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    struct ring_io *io = args.output;
    io->hooked_input_ok = args.input == (const void *)io && args.input_size == sizeof *io;
    io->pid = s;
    io->nprocs = p;
    int mine = io->world_rank * 10, got = -1;
    lpf_memslot_t ls, gs;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &mine, sizeof mine, &ls);
    lpf_register_global(ctx, &got, sizeof got, &gs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    io->got = got;
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gs);
}

/* inside a hooked section: rehook and a nested exec work too */
static void nested(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)s;
    (void)p;
    int *ok = args.output;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    *ok = lpf_probe(ctx, &m) == LPF_SUCCESS && m.free_p == 1;
}

static void outer(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)s;
    (void)p;
    int *ok = args.output;
    int a = 0, b = 0;
    lpf_args_t x = LPF_NO_ARGS;
    x.output = &a;
    x.output_size = sizeof a;
    lpf_err_t r1 = lpf_rehook(ctx, nested, x);
    x.output = &b;
    lpf_err_t r2 = lpf_exec(ctx, 4, nested, x);
    lpf_err_t r3 = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    *ok = r1 == LPF_SUCCESS && r2 == LPF_SUCCESS && r3 == LPF_SUCCESS && a && b;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* item 69-like: an invalid init is refused */
    CHECK(lpf_hook(LPF_INIT_NONE, ring, LPF_NO_ARGS) == LPF_ERR_FATAL);

    /* item 70: MPI_COMM_WORLD, hooked three times */
    lpf_init_t init = LPF_INIT_NONE;
    CHECK(lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init) == LPF_SUCCESS);
    for (int round = 0; round < 3; ++round) {
        struct ring_io io;
        memset(&io, 0, sizeof io);
        io.world_rank = rank;
        lpf_args_t a = { &io, sizeof io, &io, sizeof io, NULL, 0 };
        CHECK(lpf_hook(init, ring, a) == LPF_SUCCESS);
        CHECK(io.hooked_input_ok);
        CHECK(io.pid == (lpf_pid_t)rank && io.nprocs == (lpf_pid_t)size);
        CHECK(io.got == ((rank + size - 1) % size) * 10);
    }
    int ok = 0;
    lpf_args_t oa = { NULL, 0, &ok, sizeof ok, NULL, 0 };
    CHECK(lpf_hook(init, outer, oa) == LPF_SUCCESS);
    CHECK(ok);
    CHECK(lpf_mpi_finalize(init) == LPF_SUCCESS);

    /* item 71: a sub-communicator of the even ranks; odd ranks do not take
     * part (they only check in at the barrier below) */
    MPI_Comm even;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, &even);
    if (even != MPI_COMM_NULL) {
        lpf_init_t sub = LPF_INIT_NONE;
        CHECK(lpf_mpi_initialize_with_mpicomm(even, &sub) == LPF_SUCCESS);
        struct ring_io io;
        memset(&io, 0, sizeof io);
        io.world_rank = rank;
        lpf_args_t a = { &io, sizeof io, &io, sizeof io, NULL, 0 };
        CHECK(lpf_hook(sub, ring, a) == LPF_SUCCESS);
        int nsub = (size + 1) / 2;
        CHECK(io.nprocs == (lpf_pid_t)nsub && io.pid == (lpf_pid_t)(rank / 2));
        CHECK(io.got == ((rank / 2 + nsub - 1) % nsub) * 2 * 10);
        CHECK(lpf_mpi_finalize(sub) == LPF_SUCCESS);
        MPI_Comm_free(&even);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("hook_test on %d ranks: %s\n", size, all ? "FAILED" : "ok");
    MPI_Finalize();
    return fails ? 1 : 0;
}
