/* Items 2, 3, 4, 7 in C: the Oxford flavour, selected by
 * MCBSP_COMPATIBILITY_MODE (or LPF_USE_MCBSP_API == 0, see
 * headers_lpf_api.c): int types, Oxford signatures, addresses. */
#ifndef SSTEP_TEST_NO_DEFINE
# define MCBSP_COMPATIBILITY_MODE
#endif
#ifndef SSTEP_TEST_SUFFIX
# define SSTEP_TEST_SUFFIX oxford
#endif
#include <bsp.h>

#include <stdint.h>

_Static_assert(_Generic(bsp_pid(), int: 1, default: 0), "bsp_pid returns int");
_Static_assert(_Generic(bsp_nprocs(), int: 1, default: 0), "bsp_nprocs returns int");
_Static_assert(sizeof(bsp_pid_t) == sizeof(unsigned int), "typedefs stay");
_Static_assert(sizeof(bsp_size_t) == sizeof(size_t), "typedefs stay");
_Static_assert((bsp_size_t)-1 == SIZE_MAX, "SIZE_MAX");

static void (*const p_init)(void (*)(void), int, char **) = bsp_init;
static void (*const p_begin)(int) = bsp_begin;
static void (*const p_end)(void) = bsp_end;
static int (*const p_nprocs)(void) = bsp_nprocs;
static int (*const p_pid)(void) = bsp_pid;
static void (*const p_sync)(void) = bsp_sync;
static void (*const p_abort)(const char *, ...) = bsp_abort;
static void (*const p_vabort)(const char *, va_list) = bsp_vabort;
static double (*const p_time)(void) = bsp_time;
static void (*const p_push_reg)(const void *, int) = bsp_push_reg;
static void (*const p_pop_reg)(const void *) = bsp_pop_reg;
static void (*const p_pushregister)(const void *, int) = bsp_pushregister;
static void (*const p_popregister)(const void *) = bsp_popregister;
static void (*const p_put)(int, const void *, const void *, int, int) = bsp_put;
static void (*const p_get)(int, const void *, int, void *, int) = bsp_get;
static void (*const p_hpput)(int, const void *, const void *, int, int) = bsp_hpput;
static void (*const p_hpget)(int, const void *, int, void *, int) = bsp_hpget;
static void (*const p_set_tagsize)(int *) = bsp_set_tagsize;
static void (*const p_send)(int, const void *, const void *, int) = bsp_send;
static void (*const p_hpsend)(int, const void *, const void *, int) = bsp_hpsend;
static void (*const p_qsize)(int *, int *) = bsp_qsize;
static void (*const p_get_tag)(int *, void *) = bsp_get_tag;
static void (*const p_move)(void *, int) = bsp_move;
static int (*const p_hpmove)(void **, void **) = bsp_hpmove;
static void (*const p_direct_get)(const bsp_pid_t, const void *const, const bsp_size_t, void *const,
        const bsp_size_t) = bsp_direct_get;

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

int CAT(sstep_test_headers_, SSTEP_TEST_SUFFIX)(void);
int CAT(sstep_test_headers_, SSTEP_TEST_SUFFIX)(void)
{
    mcbsp_enable_checkpointing();
    const void *all[] = {
        (const void *)p_init, (const void *)p_begin, (const void *)p_end, (const void *)p_nprocs,
        (const void *)p_pid, (const void *)p_sync, (const void *)p_abort, (const void *)p_vabort,
        (const void *)p_time, (const void *)p_push_reg, (const void *)p_pop_reg,
        (const void *)p_pushregister, (const void *)p_popregister, (const void *)p_put,
        (const void *)p_get, (const void *)p_hpput, (const void *)p_hpget, (const void *)p_set_tagsize,
        (const void *)p_send, (const void *)p_hpsend, (const void *)p_qsize, (const void *)p_get_tag,
        (const void *)p_move, (const void *)p_hpmove, (const void *)p_direct_get,
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) bad += all[i] == 0;
    if (bsp_nprocs() == 12345) {   /* compiles, never runs: LPF-style const void ** */
        const void *t, *p;
        bad += bsp_hpmove(&t, &p);
    }
    return bad;
}
