/* <lpf/collectives.h> and <lpf/bsmp.h> compile as strict C99 and have the
 * declarations of the contract (spec/lpf-core.md §10, §11.1). */
#include <lpf/collectives.h>
#include <lpf/bsmp.h>
#include <lpf/collectives.h> /* include guards */
#include <lpf/bsmp.h>

#include <stddef.h>
#include <stdint.h>

#if _LPF_COLLECTIVES_VERSION != 201500L
# error "_LPF_COLLECTIVES_VERSION"
#endif
#if _LPF_BMSP_VERSION != 201500L
# error "_LPF_BMSP_VERSION"
#endif

/* exact signatures: assigning to typed pointers fails on any mismatch */
static lpf_err_t (*const f_init)(lpf_t, lpf_pid_t, lpf_pid_t, size_t, size_t, size_t,
        lpf_coll_t *) = lpf_collectives_init;
static lpf_err_t (*const f_init_strided)(lpf_t, lpf_pid_t, lpf_pid_t, lpf_pid_t, lpf_pid_t,
        lpf_pid_t, size_t, size_t, size_t, lpf_coll_t *) = lpf_collectives_init_strided;
static lpf_t (*const f_ctx)(lpf_coll_t) = lpf_collectives_get_context;
static lpf_err_t (*const f_destroy)(lpf_coll_t) = lpf_collectives_destroy;
static lpf_err_t (*const f_bcast)(lpf_coll_t, lpf_memslot_t, lpf_memslot_t, size_t, lpf_pid_t) = lpf_broadcast;
static lpf_err_t (*const f_gather)(lpf_coll_t, lpf_memslot_t, lpf_memslot_t, size_t, lpf_pid_t) = lpf_gather;
static lpf_err_t (*const f_scatter)(lpf_coll_t, lpf_memslot_t, lpf_memslot_t, size_t, lpf_pid_t) = lpf_scatter;
static lpf_err_t (*const f_allgather)(lpf_coll_t, lpf_memslot_t, lpf_memslot_t, size_t, bool) = lpf_allgather;
static lpf_err_t (*const f_alltoall)(lpf_coll_t, lpf_memslot_t, lpf_memslot_t, size_t) = lpf_alltoall;
static lpf_err_t (*const f_reduce)(lpf_coll_t, void *restrict, lpf_memslot_t, size_t,
        lpf_reducer_t, lpf_pid_t) = lpf_reduce;
static lpf_err_t (*const f_allreduce)(lpf_coll_t, void *restrict, lpf_memslot_t, size_t,
        lpf_reducer_t) = lpf_allreduce;
static lpf_err_t (*const f_combine)(lpf_coll_t, void *restrict, lpf_memslot_t, size_t, size_t,
        lpf_combiner_t, lpf_pid_t) = lpf_combine;
static lpf_err_t (*const f_allcombine)(lpf_coll_t, void *restrict, lpf_memslot_t, size_t, size_t,
        lpf_combiner_t) = lpf_allcombine;
static lpf_err_t (*const f_create)(const lpf_t, const lpf_pid_t, const lpf_pid_t, const size_t,
        const size_t, const size_t, lpf_bsmp_t *const) = lpf_bsmp_create;
static lpf_err_t (*const f_bdestroy)(lpf_bsmp_t *const) = lpf_bsmp_destroy;
static lpf_err_t (*const f_send)(const lpf_bsmp_t, const lpf_pid_t, const lpf_memslot_t,
        const size_t, const lpf_memslot_t, const size_t, const size_t) = lpf_send;
static lpf_err_t (*const f_bsync)(lpf_bsmp_t, lpf_sync_attr_t) = lpf_bsmp_sync;
static lpf_err_t (*const f_syncall)(lpf_bsmp_t *const, const size_t, lpf_sync_attr_t) = lpf_bsmp_syncall;
static lpf_err_t (*const f_move)(lpf_bsmp_t, void **const, void **const, size_t *const) = lpf_move;

static void red(size_t n, const void *a, void *v) { (void)n; (void)a; (void)v; }
static void comb(size_t n, const void *c, void *i) { (void)n; (void)c; (void)i; }

/* field order of lpf_coll_t and struct lpf_bsmp_buffer */
#define BEFORE(T, a, b) (offsetof(T, a) < offsetof(T, b))

int coll_c99_header_check(void)
{
    int bad = 0;
    const void *fs[] = { (const void *)(uintptr_t)f_init, (const void *)(uintptr_t)f_init_strided,
        (const void *)(uintptr_t)f_ctx, (const void *)(uintptr_t)f_destroy,
        (const void *)(uintptr_t)f_bcast, (const void *)(uintptr_t)f_gather,
        (const void *)(uintptr_t)f_scatter, (const void *)(uintptr_t)f_allgather,
        (const void *)(uintptr_t)f_alltoall, (const void *)(uintptr_t)f_reduce,
        (const void *)(uintptr_t)f_allreduce, (const void *)(uintptr_t)f_combine,
        (const void *)(uintptr_t)f_allcombine, (const void *)(uintptr_t)f_create,
        (const void *)(uintptr_t)f_bdestroy, (const void *)(uintptr_t)f_send,
        (const void *)(uintptr_t)f_bsync, (const void *)(uintptr_t)f_syncall,
        (const void *)(uintptr_t)f_move };
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; ++i) bad += fs[i] == NULL;
    lpf_reducer_t r = red;
    lpf_combiner_t c = comb;
    bad += r == NULL || c == NULL;

    bad += !(offsetof(lpf_coll_t, ctx) == 0 && BEFORE(lpf_coll_t, ctx, inv_translate)
            && BEFORE(lpf_coll_t, inv_translate, translate) && BEFORE(lpf_coll_t, translate, buffer)
            && BEFORE(lpf_coll_t, buffer, slot) && BEFORE(lpf_coll_t, slot, P)
            && BEFORE(lpf_coll_t, P, s));
    typedef struct lpf_bsmp_buffer B;
    bad += !(offsetof(B, buffer_size) == 0 && BEFORE(B, buffer_size, tag_size)
            && BEFORE(B, tag_size, queued) && BEFORE(B, queued, remote_pos)
            && BEFORE(B, remote_pos, local_pos) && BEFORE(B, local_pos, headers)
            && BEFORE(B, headers, message_queue) && BEFORE(B, message_queue, in_slot)
            && BEFORE(B, in_slot, out_slot) && BEFORE(B, out_slot, rpos_slot)
            && BEFORE(B, rpos_slot, lpos_slot) && BEFORE(B, lpos_slot, s) && BEFORE(B, s, p)
            && BEFORE(B, p, pid_pos) && BEFORE(B, pid_pos, mode) && BEFORE(B, mode, ctx));

    /* constants are objects with addresses */
    const lpf_coll_t *ic = &LPF_INVALID_COLL;
    const lpf_bsmp_t *ib = &LPF_INVALID_BSMP;
    const lpf_err_t *ef = &LPF_ERR_BSMP_FULL, *ei = &LPF_ERR_BSMP_INVAL;
    const size_t *is = &LPF_INVALID_SIZE;
    const lpf_memslot_t *im = &LPF_INVALID_MEMSLOT;
    bad += ic->translate != NULL || *ib != NULL || *ef != 777 || *ei != 778
        || *is != SIZE_MAX || *im != SIZE_MAX;
    enum lpf_bsmp_mode m = READ;
    bad += m != 0 || WRITE != 1;
    bool t = true;
    bad += !t;
    return bad;
}
