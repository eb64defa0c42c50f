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

/* Extension: a process-wide hook for fatal library errors (a misuse
 * report, a checked-mode report). It is called on the thread that found
 * the error, with the process (LPF_MAX_P when no context is known), the
 * primitive and the report without its "superstep: ..." prefix, before
 * anything is printed. The hook may leave by longjmp to a point of that
 * thread outside the library: the context is marked failed first, so its
 * syncs return LPF_ERR_FATAL from then on and its peers' syncs fail once
 * the process leaves its SPMD function. If the hook returns, the line is
 * printed and the program ends as without a hook. NULL removes it. */
typedef void (*sstep_fatal_hook_t)( lpf_pid_t pid, lpf_pid_t nprocs,
        const char *primitive, const char *message );
extern _LPFLIB_API
void sstep_set_fatal_hook( sstep_fatal_hook_t hook );

#ifdef __cplusplus
}
#endif

#endif
