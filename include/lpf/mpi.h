/*
 * <lpf/mpi.h> -- the MPI engine's initialisation interface.
 *
 * LPF_MPI_AUTO_INITIALIZE (weak, default 1): the library initialises MPI
 * before main, rank 0 runs main and the other ranks serve lpf_exec.
 * A program that defines `const int LPF_MPI_AUTO_INITIALIZE = 0;` runs main
 * on every rank and hooks in with one of the initialisers below.
 */
#ifndef LPF_MPI_H
#define LPF_MPI_H

/* C++: only MPI's C API is wanted. Open MPI 4 and MPICH otherwise declare
 * their C++ bindings (MPI::Comm, ...), which need a library of their own
 * (libmpi_cxx) at link time. */
#if defined(__cplusplus)
# ifndef OMPI_SKIP_MPICXX
#  define OMPI_SKIP_MPICXX 1
# endif
# ifndef MPICH_SKIP_MPICXX
#  define MPICH_SKIP_MPICXX 1
# endif
#endif
#include <mpi.h>
#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

extern _LPFLIB_VAR const int LPF_MPI_AUTO_INITIALIZE;

extern _LPFLIB_API
lpf_err_t lpf_mpi_initialize_with_mpicomm( MPI_Comm comm, lpf_init_t * init );

extern _LPFLIB_API
lpf_err_t lpf_mpi_initialize_over_tcp( const char * server, const char * port,
        int timeout, lpf_pid_t pid, lpf_pid_t nprocs, lpf_init_t * init );

extern _LPFLIB_API
lpf_err_t lpf_mpi_finalize( lpf_init_t init );

#ifdef __cplusplus
}
#endif

#endif
