/* Items 1, 4, 6, 7 in C11: the MulticoreBSP flavour's types, constants,
 * the no-op checkpointing macros, and the address of every primitive. */
#include <bsp.h>

#include <stdint.h>

_Static_assert(_Generic(bsp_pid(), unsigned int: 1, default: 0), "bsp_pid returns unsigned int");
_Static_assert(_Generic(bsp_nprocs(), unsigned int: 1, default: 0), "bsp_nprocs returns unsigned int");
_Static_assert(_Generic(bsp_size_unavailable, const size_t: 1, size_t: 1, default: 0), "size_t sizes");
_Static_assert(sizeof(bsp_pid_t) == sizeof(unsigned int), "bsp_pid_t");
_Static_assert(sizeof(bsp_nprocs_t) == sizeof(unsigned int), "bsp_nprocs_t");
_Static_assert(sizeof(bsp_size_t) == sizeof(size_t), "bsp_size_t");
_Static_assert((bsp_size_t)-1 == SIZE_MAX, "SIZE_MAX");

/* every primitive is an ordinary function with the contract's signature */
static void (*const p_init)(void (*)(void), int, char **) = bsp_init;
static void (*const p_begin)(const bsp_pid_t) = bsp_begin;
static void (*const p_end)(void) = bsp_end;
static bsp_pid_t (*const p_nprocs)(void) = bsp_nprocs;
static bsp_pid_t (*const p_pid)(void) = bsp_pid;
static void (*const p_sync)(void) = bsp_sync;
static void (*const p_abort)(const char *const, ...) = bsp_abort;
static void (*const p_vabort)(const char *const, va_list) = bsp_vabort;
static double (*const p_time)(void) = bsp_time;
static void (*const p_push_reg)(const void *const, const bsp_size_t) = bsp_push_reg;
static void (*const p_pop_reg)(const void *const) = bsp_pop_reg;
static void (*const p_put)(const bsp_pid_t, const void *const, const void *const, const bsp_size_t,
        const bsp_size_t) = bsp_put;
static void (*const p_get)(const bsp_pid_t, const void *const, const bsp_size_t, void *const,
        const bsp_size_t) = bsp_get;
static void (*const p_hpput)(const bsp_pid_t, const void *const, const void *const, const bsp_size_t,
        const bsp_size_t) = bsp_hpput;
static void (*const p_hpget)(const bsp_pid_t, const void *const, const bsp_size_t, void *const,
        const bsp_size_t) = bsp_hpget;
static void (*const p_set_tagsize)(bsp_size_t *const) = bsp_set_tagsize;
static void (*const p_send)(const bsp_pid_t, const void *const, const void *const, const bsp_size_t) = bsp_send;
static void (*const p_hpsend)(const bsp_pid_t, const void *const, const void *const, const bsp_size_t) = bsp_hpsend;
static void (*const p_qsize)(bsp_nprocs_t *const, bsp_size_t *const) = bsp_qsize;
static void (*const p_get_tag)(bsp_size_t *const, void *const) = bsp_get_tag;
static void (*const p_move)(void *const, const bsp_size_t) = bsp_move;
static bsp_size_t (*const p_hpmove)(void **const, void **const) = bsp_hpmove;
static void (*const p_direct_get)(const bsp_pid_t, const void *const, const bsp_size_t, void *const,
        const bsp_size_t) = bsp_direct_get;
/* the BSPlib 1.0 spellings */
static void (*const p_pushregister)(const void *const, const bsp_size_t) = bsp_pushregister;
static void (*const p_popregister)(const void *const) = bsp_popregister;

/* bsp_hpmove accepts const void ** as well (never called here) */
bsp_size_t sstep_test_hpmove_const(void);
bsp_size_t sstep_test_hpmove_const(void)
{
    const void *t, *p;
    void *u, *q;
    if (bsp_nprocs() == 0) return bsp_hpmove(&u, &q);
    return bsp_nprocs() == 12345 ? bsp_hpmove(&t, &p) : 0;
}

int sstep_test_headers_default(void);
int sstep_test_headers_default(void)
{
    mcbsp_enable_checkpointing();
    mcbsp_disable_checkpointing();
    const void *all[] = {
        (const void *)p_init, (const void *)p_begin, (const void *)p_end, (const void *)p_nprocs,
        (const void *)p_pid, (const void *)p_sync, (const void *)p_abort, (const void *)p_vabort,
        (const void *)p_time, (const void *)p_push_reg, (const void *)p_pop_reg, (const void *)p_put,
        (const void *)p_get, (const void *)p_hpput, (const void *)p_hpget, (const void *)p_set_tagsize,
        (const void *)p_send, (const void *)p_hpsend, (const void *)p_qsize, (const void *)p_get_tag,
        (const void *)p_move, (const void *)p_hpmove, (const void *)p_direct_get,
        (const void *)p_pushregister, (const void *)p_popregister,
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) bad += all[i] == 0;
    bad += bsp_size_unavailable != SIZE_MAX;
    bad += p_push_reg != p_pushregister;
    return bad;
}
