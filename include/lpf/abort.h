/*
 * <lpf/abort.h> -- abnormal termination of an LPF program.
 *
 * lpf_abort does not return: the calling process ends, every other process
 * ends at the latest at its next sync, and the program exits with status 6
 * on the pthread engine (MPI_Abort with code 6 on the MPI engine).
 */
#ifndef LPF_ABORT_H
#define LPF_ABORT_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

extern _LPFLIB_VAR const int LPF_HAS_ABORT;

extern _LPFLIB_API
lpf_err_t lpf_abort( lpf_t ctx );

#ifdef __cplusplus
}
#endif

#endif
