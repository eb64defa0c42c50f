/*
 * pub_coll.c: broadcasts (bsp_gsend, bsp_lsend and their hp forms), the
 * reduce family (bsp_[gl]reduce, allreduce, scan, allscan: contributions
 * sent straight to the members that need them, matched and folded when the
 * superstep's delivery is taken) and the predefined operators.
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Reduce family: matching and folding after delivery                    */
/* ------------------------------------------------------------------ */

static const char *const kind_names[2][4] = {
    { "bsp_lreduce", "bsp_lallreduce", "bsp_lscan", "bsp_lallscan" },
    { "bsp_greduce", "bsp_gallreduce", "bsp_gscan", "bsp_gallscan" },
};

static const char *kind_word(int kind)
{
    static const char *const w[4] = { "reduce", "allreduce", "scan", "allscan" };
    return kind >= 0 && kind < 4 ? w[kind] : "unknown";
}

PUB_HIDDEN void pub_free_calls(struct pub_obj *o)
{
    for (size_t i = 0; i < o->ncalls; ++i) {
        free(o->calls[i].members);
        free(o->calls[i].own);
        free(o->calls[i].contrib);
    }
    o->ncalls = 0;
}

static void fold_calls(struct pub_obj *o, const char *prim)
{
    for (size_t c = 0; c < o->ncalls; ++c) {
        struct pub_call *k = &o->calls[c];
        for (int j = 0; j < k->n; ++j) {
            if (k->contrib[j] == NULL) {
                int want = 0;
                switch (k->kind) {
                case PUB_REDUCE: want = k->me == k->n - 1; break;
                case PUB_SCAN: want = j < k->me; break;
                default: want = 1;
                }
                if (want)
                    pub_die_shared(o, prim, "process %d made no reduce-family call matching "
                            "this process's %s (call %u over the same member list, "
                            "%d members) in superstep %llu", k->members[j],
                            kind_names[k->gform][k->kind], k->k, k->n,
                            (unsigned long long)o->step - 1);
            }
        }
        if (k->count == 0) continue;
        size_t bytes = (size_t)k->count * k->op.size;
        char *rb = k->rbuf;
        switch (k->kind) {
        case PUB_REDUCE:
            if (k->me != k->n - 1) break;
            /* fall through */
        case PUB_ALLREDUCE:
            memcpy(rb, k->contrib[0], bytes);
            for (int j = 1; j < k->n; ++j) k->op.func(k->param, rb, k->contrib[j], k->count);
            break;
        case PUB_SCAN:
            memcpy(rb, k->contrib[0], bytes);
            for (int j = 1; j <= k->me; ++j) k->op.func(k->param, rb, k->contrib[j], k->count);
            break;
        case PUB_ALLSCAN:
            memcpy(rb, k->contrib[0], bytes);
            for (int j = 1; j < k->n; ++j) {
                memcpy(rb + (size_t)j * bytes, rb + (size_t)(j - 1) * bytes, bytes);
                k->op.func(k->param, rb + (size_t)j * bytes, k->contrib[j], k->count);
            }
            break;
        }
    }
}

/* index the delivery of stamp; dispatch contributions; fold */
PUB_HIDDEN void pub_take_delivery(struct pub_obj *o, const char *prim, struct sstep_stamp st)
{
    struct pub_run *r = o->run;
    size_t cnt = 0;
    const struct sstep_msg *m = sstep_inbox_of(r->ctx, st, &cnt);
    o->has_inbox = 1;
    o->inbox_stamp = st;
    if (cnt > o->msgs_alloc) {
        o->msgs = pub_xrealloc(o, prim, o->msgs, cnt, sizeof *o->msgs);
        o->msgs_alloc = cnt;
    }
    /* calls by (lhash, k): open addressing */
    size_t hcap = 0;
    uint32_t *ht = NULL;
    if (o->ncalls) {
        hcap = 8;
        while (hcap < 2 * o->ncalls) hcap *= 2;
        ht = malloc(hcap * sizeof *ht);
        if (!ht) pub_die_oom(o, prim, hcap * sizeof *ht);
        for (size_t i = 0; i < hcap; ++i) ht[i] = PUB_NIL;
        for (size_t c = 0; c < o->ncalls; ++c) {
            struct pub_call *k = &o->calls[c];
            k->contrib = calloc((size_t)k->n, sizeof *k->contrib);
            if (!k->contrib) pub_die_oom(o, prim, (size_t)k->n * sizeof *k->contrib);
            k->contrib[k->me] = k->own;
            size_t h = (size_t)pub_hcomb(k->lhash, k->k) & (hcap - 1);
            while (ht[h] != PUB_NIL) h = (h + 1) & (hcap - 1);
            ht[h] = (uint32_t)c;
        }
    }
    size_t nm = 0;
    int sorted = 1;
    for (size_t i = 0; i < cnt; ++i) {
        const char *d = m[i].data;
        int src = (int)m[i].src - o->lo;
        uint32_t tag;
        if (m[i].size < PUB_HDR)
            pub_die(o, prim, "internal error: short message (%zu bytes)", m[i].size);
        memcpy(&tag, d, 4);
        if (PUB_LIKELY(tag == PUB_TAG_MSG)) {
            size_t sz = m[i].size - PUB_HDR;
            struct pub_msg *h = &o->msgs[nm++];
            h->data = pub_aligned_payload(o, prim, d, PUB_HDR, sz);
            h->size = sz;
            h->src = src;
            if (nm > 1 && h[-1].src > src) sorted = 0;
            continue;
        }
        struct pub_chdr hd;
        if (tag != PUB_TAG_CONTRIB || m[i].size < PUB_CHDR)
            pub_die(o, prim, "internal error: unknown message from process %d", src);
        memcpy(&hd, d, sizeof hd);
        struct pub_call *k = NULL;
        if (ht) {
            size_t h = (size_t)pub_hcomb(hd.lhash, hd.k) & (hcap - 1);
            while (ht[h] != PUB_NIL) {
                struct pub_call *c = &o->calls[ht[h]];
                if (c->lhash == hd.lhash && c->k == hd.k) { k = c; break; }
                h = (h + 1) & (hcap - 1);
            }
        }
        if (k == NULL)
            pub_die_shared(o, prim, "process %d made a reduce-family call (%s over %d members, "
                    "its call %u over that member list) in superstep %llu that this process "
                    "did not make", src, kind_word(hd.kind), hd.n, hd.k,
                    (unsigned long long)st.step);
        if (hd.kind != k->kind || hd.count != k->count || hd.size != k->op.size)
            pub_die_shared(o, prim, "mismatched reduce-family calls in superstep %llu: process %d "
                    "made a %s of %d elements of %llu bytes, process %d a %s of %d elements "
                    "of %zu bytes (call %u over the same member list)",
                    (unsigned long long)st.step, src, kind_word(hd.kind), hd.count,
                    (unsigned long long)hd.size, o->s, kind_word(k->kind), k->count,
                    k->op.size, k->k);
        if (hd.idx < 0 || hd.idx >= k->n || k->contrib[hd.idx] != NULL)
            pub_die(o, prim, "internal error: contribution %d of process %d", hd.idx, src);
        size_t bytes = (size_t)k->count * k->op.size;
        k->contrib[hd.idx] = pub_aligned_payload(o, prim, d, PUB_CHDR, bytes);
    }
    free(ht);
    o->nmsgs = nm;
    if (!sorted) pub_sort_by_src(o, prim);
    if (o->ncalls) fold_calls(o, prim);
}

/* ------------------------------------------------------------------ */
/* Collectives                                                          */
/* ------------------------------------------------------------------ */

/* validate a member set; returns n, fills *members (NULL for g-forms:
 * members are first..last) */
static int member_set(struct pub_obj *o, const char *prim, int gform, int first, int last,
        const int *table, int n)
{
    if (gform) {
        if (first < 0) pub_die(o, prim, "first = %d is negative", first);
        if (last >= o->p)
            pub_die(o, prim, "last = %d is out of range (the group has %d processes)", last, o->p);
        if (first > last) pub_die(o, prim, "first = %d is greater than last = %d", first, last);
        return last - first + 1;
    }
    if (n < 1) pub_die(o, prim, "n is %d (a member set needs at least one member)", n);
    if (table == NULL) pub_die(o, prim, "table is NULL (n is %d)", n);
    if (o->marks == NULL) {
        o->marks = calloc((size_t)o->p, sizeof *o->marks);
        if (!o->marks) pub_die_oom(o, prim, (size_t)o->p * sizeof *o->marks);
    }
    if (++o->mark_gen == 0) {
        memset(o->marks, 0, (size_t)o->p * sizeof *o->marks);
        o->mark_gen = 1;
    }
    for (int i = 0; i < n; ++i) {
        int v = table[i];
        if (v < 0 || v >= o->p)
            pub_die(o, prim, "table[%d] = %d is out of range (the group has %d processes)", i, v,
                    o->p);
        if (o->marks[v] == o->mark_gen) {
            int j = 0;
            while (table[j] != v) ++j;
            pub_die(o, prim, "table[%d] = %d repeats table[%d] (members must be distinct)", i,
                    v, j);
        }
        o->marks[v] = o->mark_gen;
    }
    return n;
}

static inline int member_at(int gform, int first, const int *table, int i)
{
    return gform ? first + i : table[i];
}

static void bcast(const char *prim, pbsp bsp, int gform, int first, int last, const int *table,
        int n, const void *buf, size_t size)
{
    struct pub_obj *o = pub_obj_active(prim, bsp);
    n = member_set(o, prim, gform, first, last, table, n);
    if (buf == NULL && size > 0) pub_die(o, prim, "buf is NULL (size %zu)", size);
    for (int i = 0; i < n; ++i) pub_send_one(o, prim, member_at(gform, first, table, i), buf, size);
}

void pub_gsend(pbsp bsp, int first, int last, const void *buf, size_t size)
{
    bcast("bsp_gsend", bsp, 1, first, last, NULL, 0, buf, size);
}

void pub_lsend(pbsp bsp, const int *table, int n, const void *buf, size_t size)
{
    bcast("bsp_lsend", bsp, 0, 0, 0, table, n, buf, size);
}

void pub_hpgsend(pbsp bsp, int first, int last, const void *buf, size_t size)
{
    bcast("bsp_hpgsend", bsp, 1, first, last, NULL, 0, buf, size);
}

void pub_hplsend(pbsp bsp, const int *table, int n, const void *buf, size_t size)
{
    bcast("bsp_hplsend", bsp, 0, 0, 0, table, n, buf, size);
}

static void reduce_call(int kind, int gform, pbsp bsp, int first, int last, const int *table,
        int n, const void *sbuf, void *rbuf, int count, pbspop op, void *param)
{
    const char *prim = kind_names[gform][kind];
    struct pub_obj *o = pub_obj_active(prim, bsp);
    n = member_set(o, prim, gform, first, last, table, n);
    if (count < 0) pub_die(o, prim, "count is %d (must be >= 0)", count);
    if (op == NULL) pub_die(o, prim, "op is NULL");
    if (op->func == NULL) pub_die(o, prim, "op->func is NULL");
    if (op->size == 0) pub_die(o, prim, "op->size is 0 (the element size)");
    int me = -1;
    uint64_t lh = pub_mix64((uint64_t)n);
    for (int i = 0; i < n; ++i) {
        int v = member_at(gform, first, table, i);
        if (v == o->s) me = i;
        lh = pub_hcomb(lh, (uint64_t)v);
    }
    if (me < 0) pub_die(o, prim, "the caller (pid %d) is not a member of the set", o->s);
    int gets = kind != PUB_REDUCE || me == n - 1;
    if (count > 0 && sbuf == NULL) pub_die(o, prim, "sbuf is NULL (count %d)", count);
    if (count > 0 && gets && rbuf == NULL)
        pub_die(o, prim, "rbuf is NULL (count %d) at a member that gets a result", count);
    if ((size_t)count > SIZE_MAX / op->size / (size_t)n) pub_die_oom(o, prim, SIZE_MAX);
    size_t bytes = (size_t)count * op->size;

    if (o->ncalls == o->calls_alloc) {
        o->calls_alloc = o->calls_alloc ? 2 * o->calls_alloc : 8;
        o->calls = pub_xrealloc(o, prim, o->calls, o->calls_alloc, sizeof *o->calls);
    }
    struct pub_call *k = &o->calls[o->ncalls];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->gform = gform;
    k->n = n;
    k->me = me;
    k->lhash = lh;
    uint32_t idx = 0;
    for (size_t c = 0; c < o->ncalls; ++c)   /* call number over this member list */
        if (o->calls[c].lhash == lh) idx++;
    k->k = idx;
    k->count = count;
    k->op = *op;
    k->param = param;
    k->rbuf = rbuf;
    k->members = malloc((size_t)n * sizeof *k->members);
    k->own = malloc(bytes ? bytes : 1);
    if (!k->members || !k->own) pub_die_oom(o, prim, bytes + (size_t)n * sizeof(int));
    for (int i = 0; i < n; ++i) k->members[i] = member_at(gform, first, table, i);
    if (bytes) memcpy(k->own, sbuf, bytes);
    switch (kind) {
    case PUB_REDUCE: k->due = me == n - 1 ? n - 1 : 0; break;
    case PUB_SCAN: k->due = me; break;
    default: k->due = n - 1;
    }
    o->ncalls++;
    o->nreq++;

    /* direct algorithm: contributions straight to the members that need them */
    struct pub_chdr hd;
    memset(&hd, 0, sizeof hd);
    hd.tag = PUB_TAG_CONTRIB;
    hd.kind = kind;
    hd.count = count;
    hd.idx = me;
    hd.size = op->size;
    hd.lhash = lh;
    hd.k = idx;
    hd.n = n;
    for (int j = 0; j < n; ++j) {
        int to;
        switch (kind) {
        case PUB_REDUCE: to = j == n - 1 && me != n - 1; break;
        case PUB_SCAN: to = j > me; break;
        default: to = j != me;
        }
        if (!to) continue;
        void *m;
        lpf_err_t rc = sstep_send_buf(o->run->ctx, (lpf_pid_t)(o->lo + k->members[j]),
                PUB_CHDR + bytes, &m);
        if (rc != LPF_SUCCESS) pub_drma_failed(o, prim, rc, PUB_CHDR + bytes);
        memcpy(m, &hd, sizeof hd);
        if (bytes) memcpy((char *)m + PUB_CHDR, k->own, bytes);
    }
}

#define REDUCE_FNS(name, kind) \
void pub_g##name(pbsp bsp, int first, int last, const void *sbuf, void *rbuf, int count, \
        pbspop op, void *param) \
{ reduce_call(kind, 1, bsp, first, last, NULL, 0, sbuf, rbuf, count, op, param); } \
void pub_l##name(pbsp bsp, const int *table, int n, const void *sbuf, void *rbuf, int count, \
        pbspop op, void *param) \
{ reduce_call(kind, 0, bsp, 0, 0, table, n, sbuf, rbuf, count, op, param); }

REDUCE_FNS(reduce, PUB_REDUCE)
REDUCE_FNS(allreduce, PUB_ALLREDUCE)
REDUCE_FNS(scan, PUB_SCAN)
REDUCE_FNS(allscan, PUB_ALLSCAN)

/* ------------------------------------------------------------------ */
/* Predefined operators                                                 */
/* ------------------------------------------------------------------ */

#define OP_INT(name, T, U, expr) \
static void op_##name(void *param, void *acc, const void *in, int count) \
{ \
    (void)param; \
    T *a = acc; const T *b = in; \
    for (int i = 0; i < count; ++i) { T x = a[i], y = b[i]; a[i] = (expr); } \
} \
const tbspop pub_op_##name = { sizeof(T), op_##name };

OP_INT(addint, int, unsigned, (int)((unsigned)x + (unsigned)y))
OP_INT(mulint, int, unsigned, (int)((unsigned)x * (unsigned)y))
OP_INT(maxint, int, unsigned, x > y ? x : y)
OP_INT(minint, int, unsigned, x < y ? x : y)
OP_INT(addlong, long, unsigned long, (long)((unsigned long)x + (unsigned long)y))
OP_INT(mullong, long, unsigned long, (long)((unsigned long)x * (unsigned long)y))
OP_INT(maxlong, long, unsigned long, x > y ? x : y)
OP_INT(minlong, long, unsigned long, x < y ? x : y)
OP_INT(adddouble, double, double, x + y)
OP_INT(muldouble, double, double, x * y)
OP_INT(maxdouble, double, double, fmax(x, y))
OP_INT(mindouble, double, double, fmin(x, y))
