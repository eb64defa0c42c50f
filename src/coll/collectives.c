/*
 * <lpf/collectives.h> on the public core <lpf/core.h> only, so it runs on
 * every engine.
 *
 * Design rules (see docs/collectives.md):
 *  - A process's internal buffer is written only by requests that process
 *    issues itself (gets into it) and is read only locally, after the sync
 *    that filled it. No other process ever reads it; so an operation may
 *    start in the superstep in which the previous one finished with it.
 *  - Every choice that changes the number of internal syncs depends only on
 *    arguments that must match on all members (size, num, P) and on g and l
 *    of lpf_probe, which are bit-identical everywhere.
 *  - Reductions and combines fold the members' contributions in member
 *    order 0, 1, ..., P-1 on every process, so all processes that compute
 *    a result compute the same bits.
 */
#include <lpf/core.h>
#include <lpf/collectives.h>
#include <lpf/abort.h>
#include "../core/sstep_ext.h"   /* sstep_abort_quiet */

#include "coll_ext.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const lpf_coll_t LPF_INVALID_COLL = { NULL, NULL, NULL, NULL, SIZE_MAX, 0, 0 };

#define COLL_MAGIC 0x436f6c6cu /* "Coll" */

typedef double (*machine_fn)(lpf_pid_t, size_t, lpf_sync_attr_t);

/* Private state, allocated together with the translation tables:
 * coll.translate == meta->pids, coll.inv_translate == meta->pids + P. */
struct coll_meta {
    unsigned magic;
    int algo;               /* enum sstep_coll_algorithm */
    machine_fn g, l;        /* from lpf_probe at init */
    size_t block;           /* max(max_elem_size, max_byte_size) */
    size_t buffer_size;     /* P * block (0 on non-members) */
    lpf_pid_t nprocs;       /* p given at init (processes of the context) */
    lpf_pid_t pad_;
    lpf_pid_t pids[];       /* translate[P], then inv_translate[nprocs] */
};

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/* A programming error: one line naming the function, the caller and the
 * values, then the whole program ends like lpf_abort (status 6). */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 3, 4)))
#endif
static void coll_fail(lpf_t ctx, const char *fn, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char site[640];
    sstep_call_site(site, sizeof site);
    fflush(stdout);
    fprintf(stderr, "superstep: %s: %s%s\n", fn, line, site);
    fflush(stderr);
    sstep_abort_quiet(ctx);
    abort(); /* lpf_abort does not return; keep the compiler informed */
}

static struct coll_meta *meta_of(lpf_coll_t coll, const char *fn)
{
    if (coll.translate == NULL)
        coll_fail(coll.ctx, fn, "invalid collectives object (LPF_INVALID_COLL, "
                "a failed init, or destroyed)");
    struct coll_meta *m = (struct coll_meta *)(void *)
        ((char *)coll.translate - offsetof(struct coll_meta, pids));
    if (m->magic != COLL_MAGIC)
        coll_fail(coll.ctx, fn, "invalid collectives object (destroyed or corrupt)");
    return m;
}

static void check_root(lpf_coll_t coll, const char *fn, lpf_pid_t root)
{
    if (root >= coll.P)
        coll_fail(coll.ctx, fn, "root %u is out of range: the object has %u members "
                "(root is a member index, not a pid)", root, coll.P);
}

/* P blocks of `size` bytes must be addressable */
static void check_span(lpf_coll_t coll, const char *fn, size_t size)
{
    if (coll.P && size > SIZE_MAX / coll.P)
        coll_fail(coll.ctx, fn, "size %zu times %u members overflows", size, coll.P);
}

/* ------------------------------------------------------------------ */
/* Cost model and algorithm choice                                      */
/* ------------------------------------------------------------------ */

/* Time of a superstep on the context's processes in which the largest
 * h-relation is h bytes and no message is smaller than m bytes. */
static double step_cost(const struct coll_meta *m, double h, size_t minmsg, int with_l)
{
    double t = h * m->g(m->nprocs, minmsg, LPF_SYNC_DEFAULT);
    if (with_l) t += m->l(m->nprocs, minmsg, LPF_SYNC_DEFAULT);
    return t;
}

/* Broadcast of `size` bytes over P members (P >= 2, size >= 1).
 *   direct:    every non-root gets the whole object from the root in the
 *              caller's superstep: h = (P-1)*size, no internal sync.
 *   two-phase: the object is cut into P-1 blocks (one per non-root);
 *              superstep 1 (ends with an internal sync): the root puts
 *              block j into non-root j's src; superstep 2 (ends with the
 *              caller's sync): every non-root gets the other blocks.
 *              h ~ size in each superstep.
 * The caller's sync is paid in both cases; the two-phase algorithm adds
 * one l. It needs P >= 3 and size >= P-1 (no empty block). */
static int bcast_two_phase(const struct coll_meta *m, lpf_pid_t P, size_t size)
{
    if (P < 3 || size < (size_t)(P - 1)) return 0;
    if (m->algo == SSTEP_COLL_DIRECT) return 0;
    if (m->algo == SSTEP_COLL_TWO_PHASE) return 1;
    size_t b = size / (P - 1); /* smallest block */
    double direct = step_cost(m, (double)(P - 1) * (double)size, size, 0);
    double two = step_cost(m, (double)size, b, 1) + step_cost(m, (double)size, b, 0);
    return two < direct;
}

/* Combine / allcombine of N = num*size bytes over P members (P >= 2).
 *   direct:    the root (every member, for allcombine) gets the P-1 other
 *              arrays, sync, folds locally: h = (P-1)*N, one sync.
 *   two-phase: reduce-scatter + gather (allgather): member k gets block k
 *              (num/P elements) of every other array, sync, folds block
 *              k, then puts it to the root (to everyone), completed by
 *              the caller's sync: h ~ (P-1)/P*N in both supersteps.
 * Both make exactly one internal sync. Two-phase needs num >= P. */
static int combine_two_phase(const struct coll_meta *m, lpf_pid_t P, size_t num, size_t size)
{
    if (P < 2 || num < P) return 0;
    if (m->algo == SSTEP_COLL_DIRECT) return 0;
    if (m->algo == SSTEP_COLL_TWO_PHASE) return 1;
    size_t N = num * size;
    size_t bmin = (num / P) * size;
    size_t bmax = (num / P + (num % P != 0)) * size;
    double direct = step_cost(m, (double)(P - 1) * (double)N, N, 1);
    double two = step_cost(m, (double)(P - 1) * (double)bmax, bmin, 1)
        + step_cost(m, (double)(P - 1) * (double)bmax, bmin, 0);
    return two < direct;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */
/* ------------------------------------------------------------------ */

static lpf_err_t coll_init(const char *fn, lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
        lpf_pid_t lo, lpf_pid_t hi, lpf_pid_t str, size_t max_elem_size,
        size_t max_byte_size, lpf_coll_t *coll)
{
    if (coll == NULL) coll_fail(ctx, fn, "coll is NULL");
    if (p == 0) coll_fail(ctx, fn, "p is 0");
    /* s >= p: a process of the context beyond the first p; it is no member
     * but takes part in the collective registration and syncs */
    if (str == 0) coll_fail(ctx, fn, "stride is 0");

    lpf_pid_t P = 0;
    if (hi > p) hi = p;
    if (lo < hi) P = (hi - lo - 1) / str + 1;

    size_t block = max_elem_size > max_byte_size ? max_elem_size : max_byte_size;
    if (P != 0 && block > SIZE_MAX / P) return LPF_ERR_OUT_OF_MEMORY;
    size_t bytes = (size_t)P * block;
    /* no object can be larger than PTRDIFF_MAX: do not even ask malloc */
    if (bytes > (size_t)PTRDIFF_MAX) return LPF_ERR_OUT_OF_MEMORY;

    lpf_machine_t mach = LPF_INVALID_MACHINE;
    lpf_err_t rc = lpf_probe(ctx, &mach);
    if (rc != LPF_SUCCESS) return rc;

    struct coll_meta *m = malloc(sizeof *m + ((size_t)P + p) * sizeof(lpf_pid_t));
    if (m == NULL) return LPF_ERR_OUT_OF_MEMORY;
    m->magic = COLL_MAGIC;
    m->algo = SSTEP_COLL_AUTO;
    m->g = mach.g;
    m->l = mach.l;
    m->block = block;
    m->nprocs = p;
    m->pad_ = 0;
    lpf_pid_t *translate = m->pids, *inv = m->pids + P;
    for (lpf_pid_t i = 0; i < p; ++i) inv[i] = LPF_MAX_P;
    for (lpf_pid_t k = 0; k < P; ++k) {
        translate[k] = lo + k * str;
        inv[lo + k * str] = k;
    }
    lpf_pid_t me = s < p ? inv[s] : LPF_MAX_P;

    void *buffer = NULL;
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    m->buffer_size = 0;
    if (bytes != 0) {
        /* Collective: every process of the context registers (non-members
         * an empty area) and syncs, keeping global slots matched. */
        if (me != LPF_MAX_P) {
            buffer = malloc(bytes);
            if (buffer == NULL) {
                free(m);
                return LPF_ERR_OUT_OF_MEMORY;
            }
            m->buffer_size = bytes;
        }
        rc = lpf_register_global(ctx, buffer, m->buffer_size, &slot);
        if (rc == LPF_SUCCESS) {
            rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
            if (rc != LPF_SUCCESS) (void)lpf_deregister(ctx, slot);
        }
        if (rc != LPF_SUCCESS) {
            free(buffer);
            free(m);
            return rc;
        }
    }

    coll->ctx = ctx;
    coll->inv_translate = inv;
    coll->translate = translate;
    coll->buffer = buffer;
    coll->slot = slot;
    coll->P = P;
    coll->s = me;
    return LPF_SUCCESS;
}

lpf_err_t lpf_collectives_init(lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
        size_t max_calls, size_t max_elem_size, size_t max_byte_size,
        lpf_coll_t *coll)
{
    (void)max_calls; /* no per-superstep state: any number of calls works */
    return coll_init("lpf_collectives_init", ctx, s, p, 0, p, 1,
            max_elem_size, max_byte_size, coll);
}

lpf_err_t lpf_collectives_init_strided(lpf_t ctx, lpf_pid_t s, lpf_pid_t p,
        lpf_pid_t lo, lpf_pid_t hi, lpf_pid_t str, size_t max_calls,
        size_t max_elem_size, size_t max_byte_size, lpf_coll_t *coll)
{
    (void)max_calls;
    return coll_init("lpf_collectives_init_strided", ctx, s, p, lo, hi, str,
            max_elem_size, max_byte_size, coll);
}

lpf_t lpf_collectives_get_context(lpf_coll_t coll)
{
    return coll.ctx;
}

lpf_err_t lpf_collectives_destroy(lpf_coll_t coll)
{
    struct coll_meta *m = meta_of(coll, "lpf_collectives_destroy");
    lpf_err_t rc = LPF_SUCCESS;
    if (coll.slot != LPF_INVALID_MEMSLOT) rc = lpf_deregister(coll.ctx, coll.slot);
    free(coll.buffer);
    m->magic = 0;
    free(m);
    return rc;
}

void sstep_coll_set_algorithm(lpf_coll_t coll, enum sstep_coll_algorithm algo)
{
    meta_of(coll, "sstep_coll_set_algorithm")->algo = (int)algo;
}

enum sstep_coll_algorithm sstep_coll_broadcast_algorithm(lpf_coll_t coll, size_t size)
{
    struct coll_meta *m = meta_of(coll, "sstep_coll_broadcast_algorithm");
    if (size == 0 || coll.P < 2) return SSTEP_COLL_DIRECT;
    return bcast_two_phase(m, coll.P, size) ? SSTEP_COLL_TWO_PHASE : SSTEP_COLL_DIRECT;
}

enum sstep_coll_algorithm sstep_coll_combine_algorithm(lpf_coll_t coll, size_t num, size_t size)
{
    struct coll_meta *m = meta_of(coll, "sstep_coll_combine_algorithm");
    if (num == 0 || size == 0 || coll.P < 2 || num > SIZE_MAX / size) return SSTEP_COLL_DIRECT;
    return combine_two_phase(m, coll.P, num, size) ? SSTEP_COLL_TWO_PHASE : SSTEP_COLL_DIRECT;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

/* Byte range of block j when `total` units are cut into n nearly equal
 * blocks (the first total % n blocks are one unit larger). */
static inline size_t block_lo(size_t total, size_t n, size_t j)
{
    size_t q = total / n, r = total % n;
    return j * q + (j < r ? j : r);
}

static inline size_t block_len(size_t total, size_t n, size_t j)
{
    return total / n + (j < total % n ? 1 : 0);
}

#define PUT(c, ss, so, pid, ds, dof, sz) \
    do { lpf_err_t e_ = lpf_put((c), (ss), (so), (pid), (ds), (dof), (sz), LPF_MSG_DEFAULT); \
         if (e_ != LPF_SUCCESS) return e_; } while (0)
#define GET(c, pid, ss, so, ds, dof, sz) \
    do { lpf_err_t e_ = lpf_get((c), (pid), (ss), (so), (ds), (dof), (sz), LPF_MSG_DEFAULT); \
         if (e_ != LPF_SUCCESS) return e_; } while (0)

/* ------------------------------------------------------------------ */
/* Data movement without internal syncs                                 */
/* ------------------------------------------------------------------ */

lpf_err_t lpf_broadcast(lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, lpf_pid_t root)
{
    struct coll_meta *m = meta_of(coll, "lpf_broadcast");
    check_root(coll, "lpf_broadcast", root);
    const lpf_pid_t P = coll.P, me = coll.s;
    if (size == 0 || P <= 1) return LPF_SUCCESS;
    const int two = bcast_two_phase(m, P, size);
    if (me == LPF_MAX_P) /* non-member: only take part in the syncs */
        return two ? lpf_sync(coll.ctx, LPF_SYNC_DEFAULT) : LPF_SUCCESS;
    const lpf_t ctx = coll.ctx;
    const lpf_pid_t *tr = coll.translate;

    if (!two) {
        if (me != root) GET(ctx, tr[root], src, 0, dst, 0, size);
        return LPF_SUCCESS;
    }

    /* two-phase: block j belongs to the j-th non-root, member j + (j >= root) */
    const size_t n = P - 1;
    if (me == root) {
        for (size_t j = 0; j < n; ++j) {
            lpf_pid_t k = (lpf_pid_t)(j < root ? j : j + 1);
            size_t lo = block_lo(size, n, j);
            PUT(ctx, src, lo, tr[k], src, lo, block_len(size, n, j));
        }
    }
    lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (rc != LPF_SUCCESS) return rc;
    if (me != root) {
        const size_t mine = me < root ? me : me - 1;
        /* start after our own block so that the sources are spread */
        for (size_t i = 1; i < n; ++i) {
            size_t j = (mine + i) % n;
            lpf_pid_t k = (lpf_pid_t)(j < root ? j : j + 1);
            size_t lo = block_lo(size, n, j);
            GET(ctx, tr[k], src, lo, dst, lo, block_len(size, n, j));
        }
        if (src != dst) {
            size_t lo = block_lo(size, n, mine);
            GET(ctx, tr[root], src, lo, dst, lo, block_len(size, n, mine));
        }
    }
    return LPF_SUCCESS;
}

lpf_err_t lpf_gather(lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, lpf_pid_t root)
{
    (void)meta_of(coll, "lpf_gather");
    check_root(coll, "lpf_gather", root);
    check_span(coll, "lpf_gather", size);
    const lpf_pid_t me = coll.s;
    if (size == 0 || coll.P <= 1 || me == LPF_MAX_P || me == root) return LPF_SUCCESS;
    PUT(coll.ctx, src, 0, coll.translate[root], dst, (size_t)me * size, size);
    return LPF_SUCCESS;
}

lpf_err_t lpf_scatter(lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, lpf_pid_t root)
{
    (void)meta_of(coll, "lpf_scatter");
    check_root(coll, "lpf_scatter", root);
    check_span(coll, "lpf_scatter", size);
    const lpf_pid_t me = coll.s;
    if (size == 0 || coll.P <= 1 || me == LPF_MAX_P || me == root) return LPF_SUCCESS;
    GET(coll.ctx, coll.translate[root], src, (size_t)me * size, dst, 0, size);
    return LPF_SUCCESS;
}

lpf_err_t lpf_allgather(lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size, bool exclude_myself)
{
    (void)meta_of(coll, "lpf_allgather");
    check_span(coll, "lpf_allgather", size);
    const lpf_pid_t P = coll.P, me = coll.s;
    if (size == 0 || P <= 1 || me == LPF_MAX_P) return LPF_SUCCESS;
    const size_t off = (size_t)me * size;
    for (lpf_pid_t i = 1; i < P; ++i) {
        lpf_pid_t k = (me + i) % P;
        PUT(coll.ctx, src, 0, coll.translate[k], dst, off, size);
    }
    if (!exclude_myself) PUT(coll.ctx, src, 0, coll.translate[me], dst, off, size);
    return LPF_SUCCESS;
}

lpf_err_t lpf_alltoall(lpf_coll_t coll, lpf_memslot_t src, lpf_memslot_t dst,
        size_t size)
{
    (void)meta_of(coll, "lpf_alltoall");
    check_span(coll, "lpf_alltoall", size);
    const lpf_pid_t P = coll.P, me = coll.s;
    if (size == 0 || P <= 1 || me == LPF_MAX_P) return LPF_SUCCESS;
    for (lpf_pid_t i = 1; i < P; ++i) {
        lpf_pid_t k = (me + i) % P;
        PUT(coll.ctx, src, (size_t)k * size, coll.translate[k], dst, (size_t)me * size, size);
    }
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Reductions (one internal sync)                                       */
/* ------------------------------------------------------------------ */

static lpf_err_t do_reduce(lpf_coll_t coll, const char *fn, void *element,
        lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer,
        lpf_pid_t root, int all)
{
    struct coll_meta *m = meta_of(coll, fn);
    if (!all) check_root(coll, fn, root);
    const lpf_pid_t P = coll.P, me = coll.s;
    if (size == 0 || P <= 1) return LPF_SUCCESS;
    if (size > m->block)
        coll_fail(coll.ctx, fn, "size %zu exceeds the max_elem_size/max_byte_size "
                "(%zu) given at init", size, m->block);
    if (me == LPF_MAX_P) return lpf_sync(coll.ctx, LPF_SYNC_DEFAULT);
    const int active = all || me == root;
    if (active && reducer == NULL) coll_fail(coll.ctx, fn, "reducer is NULL");
    if (active && element == NULL) coll_fail(coll.ctx, fn, "element is NULL");

    /* the active processes fetch every other member's element into block k
     * of their own buffer */
    if (active) {
        for (lpf_pid_t i = 1; i < P; ++i) {
            lpf_pid_t k = (me + i) % P;
            GET(coll.ctx, coll.translate[k], element_slot, 0, coll.slot, (size_t)k * size, size);
        }
    }
    lpf_err_t rc = lpf_sync(coll.ctx, LPF_SYNC_DEFAULT);
    if (rc != LPF_SUCCESS || !active) return rc;
    char *buf = coll.buffer;
    memcpy(buf + (size_t)me * size, element, size);
    memcpy(element, buf, size);
    reducer(P - 1, buf + size, element);
    return LPF_SUCCESS;
}

lpf_err_t lpf_reduce(lpf_coll_t coll, void *restrict element,
        lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer,
        lpf_pid_t root)
{
    return do_reduce(coll, "lpf_reduce", element, element_slot, size, reducer, root, 0);
}

lpf_err_t lpf_allreduce(lpf_coll_t coll, void *restrict element,
        lpf_memslot_t element_slot, size_t size, lpf_reducer_t reducer)
{
    return do_reduce(coll, "lpf_allreduce", element, element_slot, size, reducer, 0, 1);
}

static lpf_err_t do_combine(lpf_coll_t coll, const char *fn, void *array,
        lpf_memslot_t slot, size_t num, size_t size, lpf_combiner_t combiner,
        lpf_pid_t root, int all)
{
    struct coll_meta *m = meta_of(coll, fn);
    if (!all) check_root(coll, fn, root);
    const lpf_pid_t P = coll.P, me = coll.s;
    if (num == 0 || size == 0 || P <= 1) return LPF_SUCCESS;
    if (num > SIZE_MAX / size || num * size > m->block)
        coll_fail(coll.ctx, fn, "num %zu x size %zu bytes exceeds the "
                "max_byte_size/max_elem_size (%zu) given at init", num, size, m->block);
    const size_t N = num * size;
    const int two = combine_two_phase(m, P, num, size);
    if (me == LPF_MAX_P) return lpf_sync(coll.ctx, LPF_SYNC_DEFAULT);
    if (combiner == NULL) coll_fail(coll.ctx, fn, "combiner is NULL");
    if (array == NULL) coll_fail(coll.ctx, fn, "array is NULL");
    const lpf_t ctx = coll.ctx;
    const lpf_pid_t *tr = coll.translate;
    char *buf = coll.buffer, *arr = array;

    if (!two) {
        const int active = all || me == root;
        if (active) {
            for (lpf_pid_t i = 1; i < P; ++i) {
                lpf_pid_t k = (me + i) % P;
                GET(ctx, tr[k], slot, 0, coll.slot, (size_t)k * N, N);
            }
        }
        lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (rc != LPF_SUCCESS || !active) return rc;
        memcpy(buf + (size_t)me * N, arr, N);
        memcpy(arr, buf, N);
        for (lpf_pid_t k = 1; k < P; ++k) combiner(num, buf + (size_t)k * N, arr);
        return LPF_SUCCESS;
    }

    /* two-phase: member k folds elements [lo_k, lo_k + n_k) */
    const size_t stride = (num / P + (num % P != 0)) * size;
    const size_t lo = block_lo(num, P, me) * size;
    const size_t n_me = block_len(num, P, me);
    const size_t len = n_me * size;
    for (lpf_pid_t i = 1; i < P; ++i) {
        lpf_pid_t k = (me + i) % P;
        GET(ctx, tr[k], slot, lo, coll.slot, (size_t)k * stride, len);
    }
    lpf_err_t rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (rc != LPF_SUCCESS) return rc;
    memcpy(buf + (size_t)me * stride, arr + lo, len);
    memcpy(arr + lo, buf, len);
    for (lpf_pid_t k = 1; k < P; ++k) combiner(n_me, buf + (size_t)k * stride, arr + lo);
    if (all) {
        for (lpf_pid_t i = 1; i < P; ++i) {
            lpf_pid_t k = (me + i) % P;
            PUT(ctx, slot, lo, tr[k], slot, lo, len);
        }
    } else if (me != root) {
        PUT(ctx, slot, lo, tr[root], slot, lo, len);
    }
    return LPF_SUCCESS;
}

lpf_err_t lpf_combine(lpf_coll_t coll, void *restrict array, lpf_memslot_t slot,
        size_t num, size_t size, lpf_combiner_t combiner, lpf_pid_t root)
{
    return do_combine(coll, "lpf_combine", array, slot, num, size, combiner, root, 0);
}

lpf_err_t lpf_allcombine(lpf_coll_t coll, void *restrict array, lpf_memslot_t slot,
        size_t num, size_t size, lpf_combiner_t combiner)
{
    return do_combine(coll, "lpf_allcombine", array, slot, num, size, combiner, 0, 1);
}
