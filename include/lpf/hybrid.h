/*
 * <lpf/hybrid.h> -- the hybrid engine's initialisation interface: threads
 * inside MPI ranks, hooked into one SPMD section of nNodes x nThreads
 * processes (pid = nodeId * nThreads + threadId). docs/hybrid.md.
 *
 * For a program that already runs MPI and threads: every thread of every
 * rank calls lpf_hybrid_initialize with
 *   thread  its lpf_init_t from lpf_pthread_initialize(threadId, nThreads)
 *           (the threads of a rank meet there),
 *   mpi     on thread 0: the rank's lpf_init_t from lpf_mpi_initialize_*
 *           (rank nodeId of nNodes; may be LPF_INIT_NONE when nNodes is 1);
 *           on other threads ignored (pass LPF_INIT_NONE),
 * then lpf_hook(init, spmd, args) any number of times (all threads of all
 * ranks), then lpf_hybrid_finalize(init) before finalising the two inits.
 * The spec's typed contexts (lpf-core.md §9.3) are lpf_init_t here: every
 * engine's init object carries its engine, so one type serves all.
 */
#ifndef LPF_HYBRID_H
#define LPF_HYBRID_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the two engines' init objects, by role */
typedef lpf_init_t lpf_hybrid_thread_init_t;
typedef lpf_init_t lpf_hybrid_mpi_init_t;

extern _LPFLIB_API
lpf_err_t lpf_hybrid_initialize( lpf_hybrid_thread_init_t thread,
        lpf_hybrid_mpi_init_t mpi, lpf_pid_t threadId, lpf_pid_t nThreads,
        lpf_pid_t nodeId, lpf_pid_t nNodes, lpf_init_t * init );

extern _LPFLIB_API
lpf_err_t lpf_hybrid_finalize( lpf_init_t init );

#ifdef __cplusplus
}
#endif

#endif
