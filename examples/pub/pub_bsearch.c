/*
 * Parallel binary search on a search butterfly with <pub.h>: the PUB paper's
 * Programs 1, 2 and 3 (3 with bsp_sync and with bsp_oblsync). See
 * pub_apps.h. The routines keep the paper's shape; what the paper omits
 * (declarations, the state its globals hold) lives in struct pub_bs, so that
 * the processes of the pthread engine share nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "pub_apps.h"

#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bsp_abort("pub_bsearch: out of memory (%zu bytes)\n", bytes);
    return p;
}

static void *xrealloc(void *old, size_t bytes)
{
    void *p = realloc(old, bytes ? bytes : 1);
    if (!p)
        bsp_abort("pub_bsearch: out of memory (%zu bytes)\n", bytes);
    return p;
}

const char *pub_bs_form_name(int form)
{
    switch (form) {
    case PUB_BS_SEND: return "send";
    case PUB_BS_HPSEND: return "hpsend";
    case PUB_BS_PARTITION: return "partition";
    case PUB_BS_OBLSYNC: return "oblsync";
    default: return NULL;
    }
}

int pub_bs_form_of(const char *name)
{
    static const char *alias[] = { "", "1", "2", "3a", "3b" };
    for (int f = PUB_BS_SEND; f <= PUB_BS_OBLSYNC; f++)
        if (!strcmp(name, pub_bs_form_name(f)) || !strcmp(name, alias[f]))
            return f;
    return -1;
}

/* room for `need` queries in flight */
static void reserve(struct pub_bs *bs, int need)
{
    if (need > bs->cap) {
        bs->cap = need > 2 * bs->cap ? need : 2 * bs->cap;
        bs->query = xrealloc(bs->query, (size_t)bs->cap * sizeof *bs->query);
    }
}

static void reserve_temp(struct pub_bs *bs, int need)
{
    if (need > bs->tcap) {
        bs->tcap = need > 2 * bs->tcap ? need : 2 * bs->tcap;
        bs->temp = xrealloc(bs->temp, (size_t)bs->tcap * sizeof *bs->temp);
    }
}

int pub_bs_setup(struct pub_bs *bs, pbsp bsp, int form, const int *key, int n, const int *query,
                 int m)
{
    const int p = bsp_nprocs(bsp), mypid = bsp_pid(bsp);
    memset(bs, 0, sizeof *bs);
    if ((p & (p - 1)) != 0 || form < PUB_BS_SEND || form > PUB_BS_OBLSYNC || n < 1 || m < 0)
        return -2;
    bs->bsp = bsp;
    bs->form = form;
    while ((1 << bs->dims) < p)
        bs->dims++;
    bs->n = n;
    bs->key = key;
    /* every process learns every block's size and last key: one broadcast
     * each, p messages each (so form 3b can end it with bsp_oblsync) */
    const int mine[2] = { n, key[n - 1] };
    bsp_gsend(bsp, 0, p - 1, mine, sizeof mine);
    bs->cap = m > 16 ? m : 16;
    bs->query = xmalloc((size_t)bs->cap * sizeof *bs->query);
    bs->tcap = bs->cap;
    bs->temp = xmalloc((size_t)bs->tcap * sizeof *bs->temp);
    for (int i = 0; i < m; i++) {
        bs->query[i].key = query[i];
        bs->query[i].src = mypid;
        bs->query[i].idx = i;
    }
    bs->m = m;
    if (form == PUB_BS_OBLSYNC)
        bsp_oblsync(bsp, p);
    else
        bsp_sync(bsp);
    int *last = xmalloc((size_t)p * sizeof *last);
    bs->base = 0;
    for (int q = 0; q < p; q++) {
        const int *info = bspmsg_data(bsp_findmsg(bsp, q, 0));
        last[q] = info[1];
        if (q < mypid)
            bs->base += info[0];
    }
    /* gkey[dim]: the processes that agree with mypid above bit dim are
     * lo .. lo + 2^(dim+1) - 1; the left half ends at lo + 2^dim - 1 */
    bs->gkey = xmalloc((size_t)(bs->dims ? bs->dims : 1) * sizeof *bs->gkey);
    for (int dim = 0; dim < bs->dims; dim++) {
        const int lo = mypid & ~((2 << dim) - 1);
        bs->gkey[dim] = last[lo + (1 << dim) - 1];
    }
    free(last);
    return 0;
}

#define inLeftHalf(dim, pid) ((((pid) >> (dim)) & 1) == 0)
#define inRightHalf(dim, pid) ((((pid) >> (dim)) & 1) == 1)
#define Opposite(dim, pid) ((pid) ^ (1 << (dim)))

/* Program 1: a bsp_send per query that crosses */
static void bin_search1(struct pub_bs *bs, int dim, int m)
{
    pbsp bsp = bs->bsp;
    const int mypid = bsp_pid(bsp);
    const int *gkey = bs->gkey;
    struct pub_bs_query *query = bs->query;
    int i, new_m;
    for (i = new_m = 0; i < m; i++)
        if ((query[i].key <= gkey[dim] && inRightHalf(dim, mypid))
            || (query[i].key > gkey[dim] && inLeftHalf(dim, mypid)))
            bsp_send(bsp, Opposite(dim, mypid), &query[i], sizeof(query[i]));
        else
            query[new_m++] = query[i];
    bsp_sync(bsp);
    reserve(bs, new_m + bsp_nmsgs(bsp));
    query = bs->query;
    for (i = 0; i < bsp_nmsgs(bsp); i++) {
        pbspmsg msg = bsp_getmsg(bsp, i);
        query[new_m++] = *(struct pub_bs_query *)bspmsg_data(msg);
    }
    bs->m = new_m;
    if (dim > 0)
        bin_search1(bs, dim - 1, new_m);
}

/* Program 2 (2b): the crossing queries packed, one bsp_hpsend per level */
static void bin_search2(struct pub_bs *bs, int dim, int m)
{
    pbsp bsp = bs->bsp;
    const int mypid = bsp_pid(bsp);
    const int *gkey = bs->gkey;
    reserve_temp(bs, m);
    struct pub_bs_query *query = bs->query, *temp = bs->temp;
    int i, new_m, other;
    for (i = new_m = other = 0; i < m; i++)
        if ((query[i].key <= gkey[dim] && inRightHalf(dim, mypid))
            || (query[i].key > gkey[dim] && inLeftHalf(dim, mypid)))
            temp[other++] = query[i];
        else
            query[new_m++] = query[i];
    bsp_hpsend(bsp, Opposite(dim, mypid), temp, (size_t)other * sizeof(*temp));
    bsp_sync(bsp);
    pbspmsg msg = bsp_getmsg(bsp, 0);
    reserve(bs, new_m + (int)(bspmsg_size(msg) / sizeof(*query)));
    query = bs->query;
    memcpy(&query[new_m], bspmsg_data(msg), bspmsg_size(msg));
    new_m += (int)(bspmsg_size(msg) / sizeof(*query));
    bs->m = new_m;
    if (dim > 0)
        bin_search2(bs, dim - 1, new_m);
}

/* Program 3: halves of the caller's group, then a partition into them;
 * bsp_oblsync(bsp, 1) instead of bsp_sync in form 3b (every process gets
 * exactly one message, empty when nothing crosses) */
static void bin_search3(struct pub_bs *bs, pbsp bsp, int dim, int m)
{
    const int mypid = bsp_pid(bsp), nprocs = bsp_nprocs(bsp);
    const int *gkey = bs->gkey;
    reserve_temp(bs, m);
    struct pub_bs_query *query = bs->query, *temp = bs->temp;
    int i, new_m, other;
    for (i = new_m = other = 0; i < m; i++)
        if ((query[i].key <= gkey[dim] && mypid >= nprocs / 2)
            || (query[i].key > gkey[dim] && mypid < nprocs / 2))
            temp[other++] = query[i];
        else
            query[new_m++] = query[i];
    bsp_hpsend(bsp, (mypid + nprocs / 2) % nprocs, temp, (size_t)other * sizeof(*temp));
    if (bs->form == PUB_BS_OBLSYNC)
        bsp_oblsync(bsp, 1);
    else
        bsp_sync(bsp);
    pbspmsg msg = bsp_getmsg(bsp, 0);
    reserve(bs, new_m + (int)(bspmsg_size(msg) / sizeof(*query)));
    query = bs->query;
    memcpy(&query[new_m], bspmsg_data(msg), bspmsg_size(msg));
    new_m += (int)(bspmsg_size(msg) / sizeof(*query));
    bs->m = new_m;
    if (dim > 0) {
        tbsp sub;
        pbsp subbsp = &sub;
        int part[2];
        part[0] = nprocs / 2;
        part[1] = nprocs;
        bsp_partition(bsp, subbsp, 2, part);
        bin_search3(bs, subbsp, dim - 1, new_m);
        bsp_done(subbsp);
    }
}

int pub_bs_route(struct pub_bs *bs, int search)
{
    if (bs->dims > 0) {
        if (bs->form == PUB_BS_SEND)
            bin_search1(bs, bs->dims - 1, bs->m);
        else if (bs->form == PUB_BS_HPSEND)
            bin_search2(bs, bs->dims - 1, bs->m);
        else
            bin_search3(bs, bs->bsp, bs->dims - 1, bs->m);
    }
    if (search) {
        bs->answer = xrealloc(bs->answer, (size_t)(bs->m ? bs->m : 1) * sizeof *bs->answer);
        for (int i = 0; i < bs->m; i++)
            bs->answer[i] = bs->base + pub_bs_lower_bound(bs->key, bs->n, bs->query[i].key);
    }
    return bs->m;
}

void pub_bs_answers(struct pub_bs *bs, int *out)
{
    pbsp bsp = bs->bsp;
    const int p = bsp_nprocs(bsp), mypid = bsp_pid(bsp);
    /* (index, answer) pairs grouped by the process that asked */
    int *start = xmalloc((size_t)(p + 1) * sizeof *start);
    memset(start, 0, (size_t)(p + 1) * sizeof *start);
    for (int i = 0; i < bs->m; i++)
        start[bs->query[i].src + 1]++;
    for (int q = 0; q < p; q++)
        start[q + 1] += start[q];
    int *pos = xmalloc((size_t)(p + 1) * sizeof *pos);
    memcpy(pos, start, (size_t)(p + 1) * sizeof *pos);
    int *pairs = xmalloc((size_t)(2 * bs->m + 1) * sizeof *pairs);
    for (int i = 0; i < bs->m; i++) {
        const int k = pos[bs->query[i].src]++;
        pairs[2 * k] = bs->query[i].idx;
        pairs[2 * k + 1] = bs->answer[i];
    }
    /* one message to every process, empty when it asked nothing here */
    for (int q = 0; q < p; q++)
        bsp_hpsend(bsp, q, pairs + 2 * start[q], (size_t)(start[q + 1] - start[q]) * 2 * sizeof(int));
    if (bs->form == PUB_BS_OBLSYNC)
        bsp_oblsync(bsp, p);
    else
        bsp_sync(bsp);
    for (int i = 0; i < bsp_nmsgs(bsp); i++) {
        pbspmsg msg = bsp_getmsg(bsp, i);
        const int *a = bspmsg_data(msg);
        const int k = (int)(bspmsg_size(msg) / (2 * sizeof(int)));
        for (int j = 0; j < k; j++)
            out[a[2 * j]] = a[2 * j + 1];
    }
    (void)mypid;
    free(pairs);
    free(pos);
    free(start);
}

void pub_bs_free(struct pub_bs *bs)
{
    free(bs->gkey);
    free(bs->query);
    free(bs->temp);
    free(bs->answer);
    memset(bs, 0, sizeof *bs);
}

int pub_bsearch_spmd(pbsp bsp, int form, const int *key, int n, const int *query, int m, int *out)
{
    struct pub_bs bs;
    if (pub_bs_setup(&bs, bsp, form, key, n, query, m) != 0)
        return -2;
    pub_bs_route(&bs, 1);
    pub_bs_answers(&bs, out);
    pub_bs_free(&bs);
    return 0;
}

/* ---- library call ------------------------------------------------------------------ */

struct bs_job {
    int form, n, m;
    const int *table, *queries;
    int *out;
};

static void bsearch_entry(pbsp bsp, void *arg)
{
    struct bs_job *job = arg; /* pid 0 only */
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    if (s == 0) {
        const int hdr[3] = { job->form, job->n, job->m };
        bsp_gsend(bsp, 0, p - 1, hdr, sizeof hdr);
        for (int q = 0; q < p; q++) {
            bsp_hpsend(bsp, q, job->table + (size_t)q * job->n, (size_t)job->n * sizeof(int));
            bsp_hpsend(bsp, q, job->m ? job->queries + (size_t)q * job->m : NULL,
                       (size_t)job->m * sizeof(int));
        }
    }
    bsp_oblsync(bsp, 3); /* the header, the table block, the queries */
    const int *hdr = bspmsg_data(bsp_findmsg(bsp, 0, 0));
    const int form = hdr[0], n = hdr[1], m = hdr[2];
    int *key = xmalloc((size_t)n * sizeof *key), *query = xmalloc((size_t)(m ? m : 1) * sizeof *query);
    int *out = xmalloc((size_t)(m ? m : 1) * sizeof *out);
    memcpy(key, bspmsg_data(bsp_findmsg(bsp, 0, 1)), (size_t)n * sizeof *key);
    memcpy(query, bspmsg_data(bsp_findmsg(bsp, 0, 2)), (size_t)m * sizeof *query);

    pub_bsearch_spmd(bsp, form, key, n, query, m, out);

    bsp_hpsend(bsp, 0, out, (size_t)m * sizeof *out);
    bsp_oblsync(bsp, s == 0 ? p : 0);
    if (s == 0)
        for (int q = 0; q < p; q++)
            memcpy(job->out + (size_t)q * m, bspmsg_data(bsp_findmsg(bsp, q, 0)), (size_t)m * sizeof(int));
    bsp_sync(bsp); /* out stays untouched until every hpsend is delivered */
    free(out);
    free(query);
    free(key);
}

int pub_bsearch(int P, int form, const int *table, int n, const int *queries, int m, int *out)
{
    if (P < 1 || (P & (P - 1)) != 0 || form < PUB_BS_SEND || form > PUB_BS_OBLSYNC || n < 1 || m < 0 ||
        table == NULL || (m > 0 && (queries == NULL || out == NULL)))
        return -2;
    struct bs_job job = { form, n, m, table, queries, out };
    pub_exec(P, bsearch_entry, &job);
    return 0;
}
