/*
 * Open MPI's rendezvous server (ompi-server) for lpf_mpi_initialize_over_tcp
 * (mpi_tcp_server.c). Open MPI 4 connects separately started jobs
 * (MPI_Comm_connect/accept) only when every job's runtime was told the
 * address of one ompi-server before its MPI_Init.
 */
#ifndef SSTEP_MPI_TCP_SERVER_H
#define SSTEP_MPI_TCP_SERVER_H

#include "mpi_internal.h"

#include <stddef.h>

/* Start a private ompi-server (for processes that have not initialised MPI
 * yet); its address into uri. Its pid, or 0 (uri empty) when it failed.
 * mpi_tcp_stop_server (mpi_internal.h) stops it. */
SSTEP_HIDDEN long mpi_tcp_start_server(char *uri, size_t len);

/* Whether the program's own MPI_Init was given this host's shared
 * ompi-server (1), or not (0: another MPI, a job started by mpirun, a
 * server configured by the user, or it could not be started). */
SSTEP_HIDDEN int mpi_tcp_rendezvous_used(void);

/* MPI_Init_thread without the rendezvous (the library's own calls). */
SSTEP_HIDDEN int mpi_tcp_pmpi_init_thread(int required, int *provided);

#endif
