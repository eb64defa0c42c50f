/*
 * <lpf/pthread.h> -- hook existing POSIX threads into an LPF SPMD section.
 *
 * nprocs existing threads each call lpf_pthread_initialize with a distinct
 * pid (a rendezvous), then lpf_hook(init, spmd, args) any number of times,
 * then lpf_pthread_finalize(init).
 */
#ifndef LPF_PTHREAD_H
#define LPF_PTHREAD_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

extern _LPFLIB_API
lpf_err_t lpf_pthread_initialize( lpf_pid_t pid, lpf_pid_t nprocs,
        lpf_init_t * init );

extern _LPFLIB_API
lpf_err_t lpf_pthread_finalize( lpf_init_t init );

#ifdef __cplusplus
}
#endif

#endif
