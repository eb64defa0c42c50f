// C++, <lpf/mpi.h> and MPI's C API: the program initialises MPI itself
// (run with lpfrun -no-auto-init), hooks LPF onto MPI_COMM_WORLD.
#include <lpf/core.h>
#include <lpf/mpi.h>
#include <cstdio>

extern "C" const int LPF_MPI_AUTO_INITIALIZE = 0;

static void spmd(lpf_t, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    *static_cast<unsigned *>(args.output) = s * 100 + p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    lpf_init_t init = LPF_INIT_NONE;
    unsigned got = 0;
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &got;
    args.output_size = sizeof got;
    int ok = lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init) == LPF_SUCCESS
          && lpf_hook(init, spmd, args) == LPF_SUCCESS
          && got == unsigned(rank) * 100 + unsigned(size);
    if (init != LPF_INIT_NONE) lpf_mpi_finalize(init);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) std::printf("x_mpi: %s on %d ranks\n", all ? "ok" : "wrong", size);
    MPI_Finalize();
    return all ? 0 : 1;
}
