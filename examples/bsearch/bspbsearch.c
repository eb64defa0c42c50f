/*
 * Parallel binary search on a search butterfly (PUB paper, Programs 1-2).
 */
#define _POSIX_C_SOURCE 200809L
#include "bsearch.h"

#include <stdlib.h>
#include <string.h>

#include <bsp.h>

/* a query on its way: the key, and where its answer must go */
struct bs_rec {
    uint32_t key;
    uint32_t src; /* pid that asked */
    uint64_t idx; /* its local index there */
};

struct bs_ans {
    uint64_t idx;
    uint64_t pos;
};

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bsp_abort("bspbsearch: out of memory (%zu bytes)\n", bytes);
    return p;
}

static void *xrealloc(void *old, size_t bytes)
{
    void *p = realloc(old, bytes ? bytes : 1);
    if (!p)
        bsp_abort("bspbsearch: out of memory (%zu bytes)\n", bytes);
    return p;
}

void bsp_bsearch_spmd(const uint32_t *table, size_t nt, const uint32_t *queries, size_t nq,
                      size_t *out, int variant)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    if (variant < BS_PROG1 || variant > BS_PROG2B)
        bsp_abort("bsp_bsearch_spmd: unknown variant %d\n", variant);

    /* our messages have no tag; the caller's tag size comes back at the end */
    bsp_size_t oldtag = 0;
    bsp_set_tagsize(&oldtag);
    uint64_t *info = xmalloc(2 * p * sizeof *info); /* per process: block size, last key */
    bsp_push_reg(info, 2 * p * sizeof *info);
    bsp_sync();

    const uint64_t mine[2] = { nt, nt ? table[nt - 1] : 0 };
    for (unsigned q = 0; q < p; q++)
        bsp_put(q, mine, info, 2 * pid * sizeof *info, sizeof mine);
    size_t n = nq, cap = nq > 16 ? nq : 16;
    struct bs_rec *rec = xmalloc(cap * sizeof *rec);
    struct bs_rec *temp = xmalloc(cap * sizeof *temp);
    size_t tcap = cap;
    for (size_t i = 0; i < nq; i++) {
        rec[i].key = queries[i];
        rec[i].src = pid;
        rec[i].idx = i;
    }
    bsp_sync();

    size_t *tstart = xmalloc((p + 1) * sizeof *tstart);
    tstart[0] = 0;
    for (unsigned q = 0; q < p; q++)
        tstart[q + 1] = tstart[q] + (size_t)info[2 * q];

    /* the butterfly: ceil(log2 p) levels; a process whose range has
     * shrunk to itself just synchronises */
    unsigned levels = 0;
    while ((1ul << levels) < p)
        levels++;
    unsigned lo = 0, hi = p;
    for (unsigned lev = 0; lev < levels; lev++) {
        if (hi - lo > 1) {
            const unsigned mid = lo + (hi - lo) / 2;
            /* gkey: the last table key left of mid (none: everything goes right) */
            int has_gkey = 0;
            uint32_t gkey = 0;
            for (unsigned k = mid; k-- > 0;)
                if (info[2 * k] > 0) {
                    has_gkey = 1;
                    gkey = (uint32_t)info[2 * k + 1];
                    break;
                }
            const int in_left = pid < mid;
            const unsigned partner = in_left ? mid + (pid - lo) : lo + (pid - mid) % (mid - lo);
            size_t keep = 0, other = 0;
            if (tcap < n) {
                tcap = n;
                temp = xrealloc(temp, tcap * sizeof *temp);
            }
            for (size_t i = 0; i < n; i++) {
                const int go_left = has_gkey && rec[i].key <= gkey;
                if (go_left == in_left)
                    rec[keep++] = rec[i];
                else if (variant == BS_PROG1)
                    bsp_send(partner, NULL, &rec[i], sizeof rec[i]);
                else
                    temp[other++] = rec[i];
            }
            if (other > 0 && variant == BS_PROG2A)
                bsp_send(partner, NULL, temp, other * sizeof *temp);
            else if (other > 0 && variant == BS_PROG2B)
                bsp_hpsend(partner, NULL, temp, other * sizeof *temp); /* temp untouched until the sync */
            n = keep;
            if (in_left)
                hi = mid;
            else
                lo = mid;
        }
        bsp_sync();
        bsp_nprocs_t nmsg = 0;
        bsp_size_t bytes = 0;
        bsp_qsize(&nmsg, &bytes);
        if (n + bytes / sizeof *rec > cap) {
            cap = n + bytes / sizeof *rec;
            rec = xrealloc(rec, cap * sizeof *rec);
        }
        for (bsp_nprocs_t m = 0; m < nmsg; m++) {
            void *tag = NULL, *payload = NULL;
            bsp_size_t sz = bsp_hpmove(&tag, &payload);
            memcpy(rec + n, payload, sz);
            n += sz / sizeof *rec;
        }
    }

    /* local search, answers back to where they were asked */
    const size_t base = tstart[pid];
    size_t *cnt = xmalloc((p + 1) * sizeof *cnt);
    memset(cnt, 0, (p + 1) * sizeof *cnt);
    for (size_t i = 0; i < n; i++)
        if (rec[i].src != pid)
            cnt[rec[i].src + 1]++;
    for (unsigned q = 0; q < p; q++)
        cnt[q + 1] += cnt[q];
    struct bs_ans *ans = xmalloc(n * sizeof *ans);
    for (size_t i = 0; i < n; i++) {
        const size_t pos = base + bs_lower_bound(table, nt, rec[i].key);
        if (rec[i].src == pid) {
            out[rec[i].idx] = pos;
        } else {
            struct bs_ans *a = &ans[cnt[rec[i].src]++];
            a->idx = rec[i].idx;
            a->pos = pos;
        }
    }
    /* cnt[q] is now the end of q's answers, cnt[q - 1] (or 0) their start */
    for (unsigned q = 0; q < p; q++) {
        const size_t from = q ? cnt[q - 1] : 0, len = cnt[q] - from;
        if (q == pid || len == 0)
            continue;
        if (variant == BS_PROG2B)
            bsp_hpsend(q, NULL, ans + from, len * sizeof *ans);
        else
            bsp_send(q, NULL, ans + from, len * sizeof *ans);
    }
    bsp_sync();
    {
        bsp_nprocs_t nmsg = 0;
        bsp_qsize(&nmsg, NULL);
        for (bsp_nprocs_t m = 0; m < nmsg; m++) {
            void *tag = NULL, *payload = NULL;
            bsp_size_t sz = bsp_hpmove(&tag, &payload);
            const struct bs_ans *a = payload;
            for (size_t i = 0; i < sz / sizeof *a; i++) {
                struct bs_ans x;
                memcpy(&x, a + i, sizeof x); /* the payload may be unaligned */
                out[x.idx] = (size_t)x.pos;
            }
        }
    }
    bsp_size_t restore = oldtag;
    bsp_set_tagsize(&restore);
    bsp_pop_reg(info);
    bsp_sync();
    free(ans);
    free(cnt);
    free(tstart);
    free(temp);
    free(rec);
    free(info);
}

/* ---- library call ---------------------------------------------------------------- */

struct bs_job {
    unsigned P;
    int variant;
    const uint32_t *table, *queries;
    size_t N, M;
    size_t *out;
};

static _Thread_local struct bs_job *bs_job_tl;

static size_t block_len(size_t n, unsigned p, unsigned k)
{
    return n / p + (k < n % p);
}

static size_t block_start(size_t n, unsigned p, unsigned k)
{
    return k * (n / p) + (k < n % p ? k : n % p);
}

static void bspbsearch_entry(void)
{
    struct bs_job *job = bs_job_tl; /* NULL in the other processes */
    bsp_begin(job ? job->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid();

    uint64_t hdr[3] = { 0, 0, 0 };
    if (pid == 0) {
        hdr[0] = job->N;
        hdr[1] = job->M;
        hdr[2] = (uint64_t)job->variant;
        for (unsigned q = 1; q < p; q++)
            bsp_send(q, NULL, hdr, sizeof hdr);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(hdr, sizeof hdr);
    const size_t N = (size_t)hdr[0], M = (size_t)hdr[1];
    const int variant = (int)hdr[2];
    const size_t nt = block_len(N, p, pid), nq = block_len(M, p, pid);

    uint32_t *table = xmalloc(nt * sizeof *table), *queries = xmalloc(nq * sizeof *queries);
    size_t *out = xmalloc(nq * sizeof *out);
    char dummy = 0;
    void *gid = (pid == 0) ? (void *)job->out : (void *)&dummy; /* gather area */
    bsp_push_reg(table, nt * sizeof *table);
    bsp_push_reg(queries, nq * sizeof *queries);
    bsp_push_reg(gid, pid == 0 ? M * sizeof(size_t) : 0);
    bsp_sync();
    if (pid == 0) {
        if (nt)
            memcpy(table, job->table, nt * sizeof *table);
        if (nq)
            memcpy(queries, job->queries, nq * sizeof *queries);
        for (unsigned q = 1; q < p; q++) {
            const size_t tl = block_len(N, p, q), ql = block_len(M, p, q);
            if (tl)
                bsp_hpput(q, job->table + block_start(N, p, q), table, 0, tl * sizeof *table);
            if (ql)
                bsp_hpput(q, job->queries + block_start(M, p, q), queries, 0, ql * sizeof *queries);
        }
    }
    bsp_sync();

    bsp_bsearch_spmd(table, nt, queries, nq, out, variant);

    if (pid == 0 && nq)
        memcpy(job->out, out, nq * sizeof *out);
    else if (nq)
        bsp_hpput(0, out, gid, block_start(M, p, pid) * sizeof *out, nq * sizeof *out);
    bsp_sync();
    bsp_pop_reg(gid);
    bsp_pop_reg(queries);
    bsp_pop_reg(table);
    free(out);
    free(queries);
    free(table);
    bsp_end();
}

int bsp_bsearch(unsigned P, const uint32_t *table, size_t N, const uint32_t *queries, size_t M,
                size_t *out, int variant)
{
    if (P == 0 || variant < BS_PROG1 || variant > BS_PROG2B || (N > 0 && table == NULL) ||
        (M > 0 && (queries == NULL || out == NULL)))
        return -2;
    struct bs_job job = { P, variant, table, queries, N, M, out };
    struct bs_job *saved = bs_job_tl;
    bs_job_tl = &job;
    bsp_init(bspbsearch_entry, 0, NULL);
    bspbsearch_entry();
    bs_job_tl = saved;
    return 0;
}
