/*
 * <lpf/bsmp.h>: bulk-synchronous message passing on the public core
 * <lpf/core.h> only.
 *
 * Layout. Every process owns an in-buffer (message_queue, one global slot)
 * of p regions, region j receiving the messages process j sends to it:
 *
 *   region j = [count][size_1 .. size_max][pad to A] [data area]
 *   data area = message 1 = [tag, padded to A][payload, padded to A], ...
 *
 * (A = alignment of max_align_t). A region holds everything one sender may
 * send in a superstep: max_messages headers and tags, buffer_size payload
 * bytes plus padding. The sender alone decides where its messages go in
 * the receiver's region j = its own pid, so delivery needs no negotiation
 * and exactly one lpf_sync.
 *
 * lpf_send puts the tag and the payload straight from the caller's slots
 * (2 requests). lpf_bsmp_sync (WRITE -> READ) puts, to every process that
 * was sent messages, one block [count, sizes...] built in the staging array
 * `headers` (a local slot), then syncs. So a message costs at most 3
 * message-queue entries at the sender and 3 at the receiver. A region whose
 * sender sent nothing keeps count 0: the receiver zeroes all counts on the
 * READ -> WRITE switch, in the READ superstep, when no process sends.
 *
 * Fields of struct lpf_bsmp_buffer as used here:
 *   WRITE mode: remote_pos[d] = bytes used in d's data area of our region,
 *               local_pos[d]  = messages queued for d; queued = total.
 *   READ mode:  pid_pos = region being read, local_pos[j] = messages of
 *               region j already moved, remote_pos[j] = byte offset of the
 *               next one in its data area.
 *   in_slot = message_queue (global), out_slot = headers (local);
 *   rpos_slot and lpos_slot are not registered (LPF_INVALID_MEMSLOT).
 */
#include <lpf/core.h>
#include <lpf/bsmp.h>
#include <lpf/abort.h>
#include "../core/sstep_ext.h"   /* sstep_abort_quiet */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const lpf_bsmp_t LPF_INVALID_BSMP = NULL;
const lpf_err_t LPF_ERR_BSMP_FULL = 777;
const lpf_err_t LPF_ERR_BSMP_INVAL = 778;
const size_t LPF_INVALID_SIZE = SIZE_MAX;

#define BSMP_MAGIC 0x42736d70u /* "Bsmp" */
#define ALIGN ((size_t)_Alignof(max_align_t))

struct bsmp_impl {
    struct lpf_bsmp_buffer pub;   /* first: lpf_bsmp_t points here */
    unsigned magic;
    int broken;                   /* an inner sync failed */
    size_t max_messages;
    size_t bytes_queued;          /* payload bytes queued this superstep */
    size_t tag_pad;               /* tag_size rounded up to ALIGN */
    size_t data0;                 /* offset of the data area in a region */
    size_t region;                /* bytes of one region */
    size_t *sizes;                /* WRITE: payload size of queued message i */
    lpf_pid_t *dests;             /* WRITE: destination of queued message i */
    size_t *start;                /* WRITE: start of d's block in headers */
};

static inline struct bsmp_impl *impl_of(lpf_bsmp_t b)
{
    struct bsmp_impl *x = (struct bsmp_impl *)b;
    return (x != NULL && x->magic == BSMP_MAGIC) ? x : NULL;
}

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 3, 4)))
#endif
static void bsmp_fail(lpf_t ctx, const char *fn, const char *fmt, ...)
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
    abort();
}

/* round x up to a multiple of ALIGN; 0 on overflow (x > 0) */
static inline size_t round_up(size_t x)
{
    if (x > SIZE_MAX - (ALIGN - 1)) return 0;
    return (x + ALIGN - 1) & ~(ALIGN - 1);
}

/* a + b and a * b with overflow detection */
static inline int add_ok(size_t a, size_t b, size_t *r) { *r = a + b; return *r >= a; }
static inline int mul_ok(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *r = a * b;
    return 1;
}

static inline size_t *count_word(const struct bsmp_impl *x, lpf_pid_t j)
{
    return (size_t *)(void *)(x->pub.message_queue + (size_t)j * x->region);
}

static void free_impl(struct bsmp_impl *x)
{
    if (!x) return;
    free(x->pub.remote_pos);
    free(x->pub.local_pos);
    free(x->pub.headers);
    free(x->pub.message_queue);
    free(x->sizes);
    free(x->dests);
    free(x->start);
    x->magic = 0;
    free(x);
}

lpf_err_t lpf_bsmp_create(const lpf_t ctx, const lpf_pid_t s, const lpf_pid_t p,
        const size_t buffer_size, const size_t tag_size, const size_t max_messages,
        lpf_bsmp_t *const bsmp)
{
    if (bsmp == NULL) bsmp_fail(ctx, "lpf_bsmp_create", "bsmp is NULL");
    *bsmp = LPF_INVALID_BSMP;
    if (p == 0 || s >= p)
        bsmp_fail(ctx, "lpf_bsmp_create", "pid s = %u is out of range (p = %u)", s, p);

    /* region = round(8 * (1 + max_messages)) + max_messages * (tag_pad +
     * ALIGN - 1) + buffer_size, rounded; in-buffer = p regions */
    size_t tag_pad = tag_size ? round_up(tag_size) : 0;
    size_t hdr, data0, per_msg, msgs, region, total, nhead;
    if ((tag_size && !tag_pad)
            || !add_ok(max_messages, 1, &nhead)
            || !mul_ok(nhead, sizeof(size_t), &hdr)
            || !(data0 = round_up(hdr))
            || !add_ok(tag_pad, ALIGN - 1, &per_msg)
            || !mul_ok(max_messages, per_msg, &msgs)
            || !add_ok(data0, msgs, &region)
            || !add_ok(region, buffer_size, &region)
            || !(region = round_up(region))
            || !mul_ok(region, p, &total)
            || !add_ok(max_messages, p, &nhead)
            || !mul_ok(nhead, sizeof(size_t), &hdr)
            || total > (size_t)PTRDIFF_MAX || hdr > (size_t)PTRDIFF_MAX)
        return LPF_ERR_OUT_OF_MEMORY; /* no object exceeds PTRDIFF_MAX */

    struct bsmp_impl *x = calloc(1, sizeof *x);
    if (x == NULL) return LPF_ERR_OUT_OF_MEMORY;
    struct lpf_bsmp_buffer *b = &x->pub;
    x->magic = BSMP_MAGIC;
    x->max_messages = max_messages;
    x->tag_pad = tag_pad;
    x->data0 = data0;
    x->region = region;
    b->buffer_size = buffer_size;
    b->tag_size = tag_size;
    b->s = s;
    b->p = p;
    b->ctx = ctx;
    b->mode = WRITE;
    b->in_slot = b->out_slot = b->rpos_slot = b->lpos_slot = LPF_INVALID_MEMSLOT;
    b->remote_pos = calloc(p, sizeof(size_t));
    b->local_pos = calloc(p, sizeof(size_t));
    x->start = calloc(p, sizeof(size_t));
    b->headers = malloc(hdr);
    x->sizes = malloc(max_messages ? max_messages * sizeof(size_t) : 1);
    x->dests = malloc(max_messages ? max_messages * sizeof(lpf_pid_t) : 1);
    b->message_queue = malloc(total);
    if (!b->remote_pos || !b->local_pos || !x->start || !b->headers || !x->sizes
            || !x->dests || !b->message_queue) {
        free_impl(x);
        return LPF_ERR_OUT_OF_MEMORY;
    }
    for (lpf_pid_t j = 0; j < p; ++j) *count_word(x, j) = 0;

    lpf_err_t rc = lpf_register_global(ctx, b->message_queue, total, &b->in_slot);
    if (rc == LPF_SUCCESS) {
        rc = lpf_register_local(ctx, b->headers, hdr, &b->out_slot);
        if (rc != LPF_SUCCESS) (void)lpf_deregister(ctx, b->in_slot);
    }
    if (rc == LPF_SUCCESS) {
        rc = lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (rc != LPF_SUCCESS) {
            (void)lpf_deregister(ctx, b->out_slot);
            (void)lpf_deregister(ctx, b->in_slot);
        }
    }
    if (rc != LPF_SUCCESS) {
        free_impl(x);
        return rc;
    }
    *bsmp = b;
    return LPF_SUCCESS;
}

lpf_err_t lpf_bsmp_destroy(lpf_bsmp_t *const bsmp)
{
    if (bsmp == NULL) return LPF_SUCCESS;
    struct bsmp_impl *x = impl_of(*bsmp);
    if (x != NULL) {
        struct lpf_bsmp_buffer *b = &x->pub;
        (void)lpf_deregister(b->ctx, b->out_slot);
        (void)lpf_deregister(b->ctx, b->in_slot);
        free_impl(x);
    }
    *bsmp = LPF_INVALID_BSMP;
    return LPF_SUCCESS;
}

lpf_err_t lpf_send(const lpf_bsmp_t bsmp, const lpf_pid_t pid,
        const lpf_memslot_t tag, const size_t tag_offset,
        const lpf_memslot_t payload, const size_t payload_offset,
        const size_t payload_size)
{
    struct bsmp_impl *x = impl_of(bsmp);
    if (x == NULL || x->broken || bsmp->mode != WRITE || pid >= bsmp->p)
        return LPF_ERR_BSMP_INVAL;
    if (bsmp->queued >= x->max_messages
            || payload_size > bsmp->buffer_size - x->bytes_queued)
        return LPF_ERR_BSMP_FULL;
    /* fits: this sender's data in pid's region is bounded by the limits */
    const size_t at = (size_t)bsmp->s * x->region + x->data0 + bsmp->remote_pos[pid];
    lpf_err_t rc;
    if (bsmp->tag_size) {
        rc = lpf_put(bsmp->ctx, tag, tag_offset, pid, bsmp->in_slot, at,
                bsmp->tag_size, LPF_MSG_DEFAULT);
        if (rc != LPF_SUCCESS) return rc;
    }
    if (payload_size) {
        rc = lpf_put(bsmp->ctx, payload, payload_offset, pid, bsmp->in_slot,
                at + x->tag_pad, payload_size, LPF_MSG_DEFAULT);
        if (rc != LPF_SUCCESS) return rc;
    }
    x->sizes[bsmp->queued] = payload_size;
    x->dests[bsmp->queued] = pid;
    bsmp->queued++;
    x->bytes_queued += payload_size;
    bsmp->local_pos[pid]++;
    bsmp->remote_pos[pid] += x->tag_pad + round_up(payload_size);
    return LPF_SUCCESS;
}

/* Before the sync: WRITE -> READ sends the header blocks; READ -> WRITE
 * empties the regions (no process sends during a READ superstep). */
static lpf_err_t bsmp_before(struct bsmp_impl *x)
{
    struct lpf_bsmp_buffer *b = &x->pub;
    const lpf_pid_t p = b->p;
    if (b->mode == READ) {
        for (lpf_pid_t j = 0; j < p; ++j) *count_word(x, j) = 0;
        return LPF_SUCCESS;
    }
    if (b->queued == 0) return LPF_SUCCESS;
    /* headers = for each destination d with messages: [count, sizes...] */
    size_t pos = 0;
    for (lpf_pid_t d = 0; d < p; ++d) {
        x->start[d] = pos;
        if (b->local_pos[d]) {
            b->headers[pos] = b->local_pos[d];
            pos += 1 + b->local_pos[d];
        }
    }
    for (lpf_pid_t d = 0; d < p; ++d) b->remote_pos[d] = x->start[d] + 1; /* fill cursor */
    for (size_t i = 0; i < b->queued; ++i) b->headers[b->remote_pos[x->dests[i]]++] = x->sizes[i];
    for (lpf_pid_t i = 1; i <= p; ++i) {
        lpf_pid_t d = (b->s + i) % p;
        if (b->local_pos[d] == 0) continue;
        lpf_err_t rc = lpf_put(b->ctx, b->out_slot, x->start[d] * sizeof(size_t), d,
                b->in_slot, (size_t)b->s * x->region,
                (1 + b->local_pos[d]) * sizeof(size_t), LPF_MSG_DEFAULT);
        if (rc != LPF_SUCCESS) return rc;
    }
    return LPF_SUCCESS;
}

/* After a successful sync: switch the mode and reset the cursors. */
static void bsmp_after(struct bsmp_impl *x)
{
    struct lpf_bsmp_buffer *b = &x->pub;
    for (lpf_pid_t j = 0; j < b->p; ++j) b->remote_pos[j] = b->local_pos[j] = 0;
    b->queued = 0;
    b->pid_pos = 0;
    x->bytes_queued = 0;
    if (b->mode == WRITE) {
        b->mode = READ;
        /* a count that no sender could have written means corruption:
         * treat the region as empty rather than read past it */
        for (lpf_pid_t j = 0; j < b->p; ++j)
            if (*count_word(x, j) > x->max_messages) *count_word(x, j) = 0;
    } else {
        b->mode = WRITE;
    }
}

lpf_err_t lpf_bsmp_syncall(lpf_bsmp_t *const bsmp, const size_t num_objects,
        lpf_sync_attr_t hint)
{
    if (bsmp == NULL || num_objects == 0) return LPF_ERR_BSMP_INVAL;
    struct bsmp_impl *first = impl_of(bsmp[0]);
    if (first == NULL) return LPF_ERR_BSMP_INVAL;
    for (size_t i = 0; i < num_objects; ++i) {
        struct bsmp_impl *x = impl_of(bsmp[i]);
        if (x == NULL) return LPF_ERR_BSMP_INVAL;
        if (x->pub.ctx != first->pub.ctx)
            bsmp_fail(first->pub.ctx, "lpf_bsmp_syncall", "objects %zu and 0 belong "
                    "to different contexts; one sync cannot serve both", i);
    }
    lpf_err_t rc = LPF_SUCCESS;
    for (size_t i = 0; i < num_objects && rc == LPF_SUCCESS; ++i) {
        struct bsmp_impl *x = impl_of(bsmp[i]);
        if (!x->broken) rc = bsmp_before(x);
    }
    if (rc == LPF_SUCCESS) rc = lpf_sync(first->pub.ctx, hint);
    for (size_t i = 0; i < num_objects; ++i) {
        struct bsmp_impl *x = impl_of(bsmp[i]);
        if (rc != LPF_SUCCESS) x->broken = 1;
        else if (!x->broken) bsmp_after(x);
    }
    if (rc != LPF_SUCCESS) return LPF_ERR_FATAL;
    return LPF_SUCCESS;
}

lpf_err_t lpf_bsmp_sync(lpf_bsmp_t bsmp, lpf_sync_attr_t hint)
{
    lpf_bsmp_t one = bsmp;
    return lpf_bsmp_syncall(&one, 1, hint);
}

lpf_err_t lpf_move(lpf_bsmp_t bsmp, void **const tag_p, void **const payload_p,
        size_t *const size)
{
    struct bsmp_impl *x = impl_of(bsmp);
    if (x != NULL && !x->broken && bsmp->mode == READ) {
        while (bsmp->pid_pos < bsmp->p) {
            const lpf_pid_t j = bsmp->pid_pos;
            const size_t *hdr = count_word(x, j);
            const size_t i = bsmp->local_pos[j];
            if (i < hdr[0]) {
                char *msg = bsmp->message_queue + (size_t)j * x->region + x->data0
                    + bsmp->remote_pos[j];
                const size_t sz = hdr[1 + i];
                const size_t step = x->tag_pad + round_up(sz);
                if (sz <= bsmp->buffer_size
                        && bsmp->remote_pos[j] + step <= x->region - x->data0) {
                    bsmp->local_pos[j] = i + 1;
                    bsmp->remote_pos[j] += step;
                    if (tag_p) *tag_p = msg;
                    if (payload_p) *payload_p = msg + x->tag_pad;
                    if (size) *size = sz;
                    return LPF_SUCCESS;
                }
            }
            bsmp->pid_pos = j + 1;
        }
    }
    if (tag_p) *tag_p = NULL;
    if (payload_p) *payload_p = NULL;
    if (size) *size = LPF_INVALID_SIZE;
    return LPF_SUCCESS;
}
