/* The public headers compile as C (C11 here, C99-compatible code) with and
 * without the DLL visibility macros, and the constants read the same from C. */
#define _LPFLIB_DLL 1
#include <lpf/core.h>
#include <lpf/core.h>   /* include guards */
#include <lpf/pthread.h>
#include <lpf/abort.h>
#include <lpf/static_dispatch.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#if _LPF_VERSION != 202000L
# error "_LPF_VERSION must be 202000L"
#endif
#ifndef _LPF_INCLUSIVE_MEMORY
# error "_LPF_INCLUSIVE_MEMORY must be defined"
#endif
#ifdef _LPF_EXCLUSIVE_MEMORY
# error "_LPF_EXCLUSIVE_MEMORY must not be defined"
#endif

_Static_assert(sizeof(lpf_t) == sizeof(void *), "lpf_t is a pointer");
_Static_assert(sizeof(lpf_memslot_t) == sizeof(size_t), "lpf_memslot_t is size_t");
_Static_assert(offsetof(lpf_args_t, input) < offsetof(lpf_args_t, input_size), "args order");
_Static_assert(offsetof(lpf_args_t, input_size) < offsetof(lpf_args_t, output), "args order");
_Static_assert(offsetof(lpf_args_t, output) < offsetof(lpf_args_t, output_size), "args order");
_Static_assert(offsetof(lpf_args_t, output_size) < offsetof(lpf_args_t, f_symbols), "args order");
_Static_assert(offsetof(lpf_args_t, f_symbols) < offsetof(lpf_args_t, f_size), "args order");
_Static_assert(offsetof(lpf_machine_t, p) == 0, "machine order");
_Static_assert(offsetof(lpf_machine_t, free_p) < offsetof(lpf_machine_t, g), "machine order");
_Static_assert(offsetof(lpf_machine_t, g) < offsetof(lpf_machine_t, l), "machine order");

/* an SPMD function with four const parameters */
static void c_spmd(const lpf_t ctx, const lpf_pid_t pid, const lpf_pid_t nprocs,
        const lpf_args_t args)
{
    (void)ctx; (void)pid; (void)nprocs; (void)args;
}

/* the struct tags exist */
static struct lpf_args tagged_args;
static struct lpf_machine tagged_machine;

/* Returns 0 if every check passes, else the number of the failed check. */
int sstest_c_header_checks(void);
int sstest_c_header_checks(void)
{
    lpf_spmd_t none = NULL;
    lpf_spmd_t f = c_spmd;
    lpf_t a = NULL;
    int x = 0;
    lpf_t b = &x;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    tagged_args = LPF_NO_ARGS;
    tagged_machine = m;
    if (none != NULL || f == NULL) return 1;
    if (a != LPF_NONE || b == LPF_NONE) return 2;
    if (LPF_SUCCESS == LPF_ERR_OUT_OF_MEMORY || LPF_SUCCESS == LPF_ERR_FATAL
            || LPF_ERR_OUT_OF_MEMORY == LPF_ERR_FATAL) return 3;
    if (&LPF_SUCCESS == &LPF_ERR_FATAL || &LPF_SUCCESS == &LPF_ERR_OUT_OF_MEMORY) return 4;
    if (LPF_MAX_P != UINT_MAX) return 5;
    if (LPF_INVALID_MEMSLOT != SIZE_MAX) return 6;
    if (LPF_NO_ARGS.input != NULL || LPF_NO_ARGS.input_size != 0 || LPF_NO_ARGS.output != NULL
            || LPF_NO_ARGS.output_size != 0 || LPF_NO_ARGS.f_symbols != NULL
            || LPF_NO_ARGS.f_size != 0) return 7;
    if (m.p != 0 || m.free_p != 0 || m.g != NULL || m.l != NULL) return 8;
    if (LPF_ROOT == NULL || LPF_ROOT == LPF_NONE) return 9;
    if (LPF_INIT_NONE != NULL) return 10;
    if (LPF_HAS_ABORT == 0) return 11;
    if (LPF_SYNC_DEFAULT != 0 || LPF_MSG_DEFAULT != 0) return 12;
    if (tagged_machine.p != 0 || tagged_args.f_size != 0) return 13;
    return 0;
}
