/*
 * BSP LU decomposition with partial pivoting on an M x N cyclic grid.
 *
 * Process s + t*M owns the entries (i,j) with i % M == s and j % N == t.
 * Stage k (column k, owned by process column kc = k % N, row k by process
 * row kr = k % M) takes two supersteps:
 *
 *   S1  processes of column kc find their local candidate pivot in column k
 *       (largest |a_ik|, i >= k; first one on ties) and put (value, row,
 *       a_kk) to every process, M triples per process.           sync
 *   S2  every process picks the same pivot row r and value from the M
 *       candidates (ties: smallest row, as the sequential code). Column kc
 *       turns its part of column k into multipliers (already in the
 *       post-swap order) and puts them along its process row; the owners of
 *       rows k and r swap them (puts between the two process rows, or a
 *       local swap); the owner of row r, the new pivot row, puts its part
 *       of it (columns > k) along its process column.             sync
 *   then (computation of S1 of the next stage) the rank-1 update
 *       a_ij -= l_i * u_j for i, j > k.
 *
 * With one process row (M = 1) column k lies whole in process kc, the
 * swap and the pivot row are local, and a stage is one superstep: process
 * kc picks the pivot, forms the multipliers and puts them (with r) to
 * everybody; then every process swaps and updates.
 *
 * Per stage: 2 syncs (1 if M = 1), h <= max(3p, 3M, nlr*N + nlc, nlc*M) words. (BSPedupack's
 * bsplu uses more supersteps per stage: it broadcasts the pivot candidates
 * only along the process column, so the row swap waits another superstep.)
 */
#define _POSIX_C_SOURCE 200809L
#include "lu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#define DSZ sizeof(double)

void bsplu_grid(unsigned P, unsigned *M, unsigned *N)
{
    unsigned n = 1;
    for (unsigned d = 1; (unsigned long)d * d <= P; d++)
        if (P % d == 0)
            n = d;
    *M = n;
    *N = P / n;
}

size_t bsplu_nloc(size_t n, unsigned M, unsigned s)
{
    return (n + M - 1 - s) / M;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bsp_abort("bsplu: out of memory (%zu bytes)\n", bytes);
    return p;
}

int bsplu_spmd(unsigned M, unsigned N, size_t n, double *a, size_t *perm)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    if (M * N != p)
        bsp_abort("bsplu_spmd: grid %u x %u does not match %u processes\n", M, N, p);
    const unsigned s = pid % M, t = pid / M;
    const size_t nlr = bsplu_nloc(n, M, s), nlc = bsplu_nloc(n, N, t);

    double *cand = xmalloc(3 * M * DSZ);   /* (value, row or -1, a_kk) per process row */
    double rinfo[2] = { -1.0, 0.0 };        /* M == 1: (pivot row or -1, pivot) */
    double *lcol = xmalloc(nlr * DSZ);      /* multipliers of my rows */
    double *lrow = xmalloc(nlc * DSZ);      /* pivot row, my columns */
    double *rowbuf = xmalloc(nlc * DSZ);    /* row arriving by the swap */
    bsp_push_reg(cand, 3 * M * DSZ);
    bsp_push_reg(rinfo, sizeof rinfo);
    bsp_push_reg(lcol, nlr * DSZ);
    bsp_push_reg(lrow, nlc * DSZ);
    bsp_push_reg(rowbuf, nlc * DSZ);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    bsp_sync();

    int status = 0;
    for (size_t k = 0; k < n; k++) {
        const unsigned kr = (unsigned)(k % M), kc = (unsigned)(k % N);
        const size_t lstart = (k + M - 1 - s) / M; /* my rows with i < k  */
        const size_t lstart1 = (k + M - s) / M;    /* my rows with i <= k */
        const size_t cstart1 = (k + N - t) / N;    /* my cols with j <= k */
        const size_t lk = k / N;                   /* local index of column k (t == kc) */

        if (M == 1) {
            /* one process row: column k lies whole in process kc, which
             * finds the pivot and the multipliers alone; every process
             * holds whole columns, so the swap and the pivot row are local:
             * one superstep per stage */
            if (t == kc) {
                size_t r = k;
                double bv = fabs(a[k * nlc + lk]);
                for (size_t i = k + 1; i < n; i++)
                    if (fabs(a[i * nlc + lk]) > bv) {
                        bv = fabs(a[i * nlc + lk]);
                        r = i;
                    }
                const double piv = a[r * nlc + lk], akk = a[k * nlc + lk];
                rinfo[0] = (piv == 0.0) ? -1.0 : (double)r;
                rinfo[1] = piv;
                if (piv != 0.0) {
                    /* pre-swap layout as in S2 below */
                    for (size_t i = k; i < n; i++)
                        if (i != r)
                            a[i * nlc + lk] = (i == k) ? akk / piv : a[i * nlc + lk] / piv;
                    for (size_t i = k + 1; i < n; i++)
                        lcol[i] = (i == r) ? akk / piv : a[i * nlc + lk];
                }
                for (unsigned t2 = 0; t2 < N; t2++)
                    if (t2 != t) {
                        bsp_put(t2, rinfo, rinfo, 0, sizeof rinfo);
                        if (piv != 0.0 && k + 1 < n)
                            bsp_put(t2, lcol + k + 1, lcol, (k + 1) * DSZ, (n - k - 1) * DSZ);
                    }
            }
            bsp_sync();
            if (rinfo[0] < 0.0) {
                status = -1;
                break;
            }
            const size_t r = (size_t)rinfo[0];
            if (r != k) {
                size_t tmp = perm[k];
                perm[k] = perm[r];
                perm[r] = tmp;
                double *x = a + k * nlc, *y = a + r * nlc;
                for (size_t lj = 0; lj < nlc; lj++) {
                    double v = x[lj];
                    x[lj] = y[lj];
                    y[lj] = v;
                }
            }
            const double *restrict u = a + k * nlc;
            for (size_t i = k + 1; i < n; i++) {
                double *restrict ai = a + i * nlc;
                const double l = lcol[i];
                for (size_t lj = cstart1; lj < nlc; lj++)
                    ai[lj] -= l * u[lj];
            }
            continue;
        }

        /* S1: local pivot candidate, to every process */
        if (t == kc) {
            double e[3] = { 0.0, -1.0, 0.0 };
            if (lstart < nlr) {
                size_t best = lstart;
                double bv = fabs(a[lstart * nlc + lk]);
                for (size_t li = lstart + 1; li < nlr; li++) {
                    double v = fabs(a[li * nlc + lk]);
                    if (v > bv) {
                        bv = v;
                        best = li;
                    }
                }
                e[0] = a[best * nlc + lk];
                e[1] = (double)(best * M + s);
                if (s == kr)
                    e[2] = a[lstart * nlc + lk]; /* my row lstart is row k */
            }
            for (unsigned q = 0; q < p; q++)
                bsp_put(q, e, cand, (size_t)s * 3 * DSZ, 3 * DSZ);
        }
        bsp_sync();

        /* S2: the pivot, the same everywhere */
        double piv = 0.0, rd = -1.0;
        for (unsigned s2 = 0; s2 < M; s2++) {
            const double *c = cand + 3 * s2;
            if (c[1] < 0.0)
                continue;
            if (rd < 0.0 || fabs(c[0]) > fabs(piv) || (fabs(c[0]) == fabs(piv) && c[1] < rd)) {
                piv = c[0];
                rd = c[1];
            }
        }
        if (piv == 0.0) {
            status = -1;
            break;
        }
        const size_t r = (size_t)rd;
        const unsigned rr = (unsigned)(r % M);
        {
            size_t tmp = perm[k];
            perm[k] = perm[r];
            perm[r] = tmp;
        }
        /* column kc: multipliers, along the process row. Column k in the
         * pre-swap layout: row r keeps the pivot (it moves to row k), row k
         * gets its multiplier (it moves to row r), the others are divided;
         * this happens before the rows are swapped below */
        if (t == kc) {
            const double akk = cand[3 * kr + 2];
            for (size_t li = lstart; li < nlr; li++) {
                const size_t gi = li * M + s;
                double *x = a + li * nlc + lk;
                if (gi == r)
                    continue;
                *x = (gi == k) ? akk / piv : *x / piv;
            }
            /* multipliers in the post-swap layout, rows > k */
            for (size_t li = lstart1; li < nlr; li++) {
                const size_t gi = li * M + s;
                lcol[li] = (gi == r) ? akk / piv : a[li * nlc + lk];
            }
            if (lstart1 < nlr)
                for (unsigned t2 = 0; t2 < N; t2++)
                    if (t2 != t)
                        bsp_put(s + t2 * M, lcol + lstart1, lcol, lstart1 * DSZ,
                                (nlr - lstart1) * DSZ);
        }
        /* old row r is the new row k: along the process column */
        if (s == rr && cstart1 < nlc)
            for (unsigned s2 = 0; s2 < M; s2++)
                bsp_put(s2 + t * M, a + (r / M) * nlc + cstart1, lrow, cstart1 * DSZ,
                        (nlc - cstart1) * DSZ);
        /* swap rows k and r */
        const int local_swap = (r != k && s == kr && s == rr);
        if (local_swap) {
            double *x = a + (k / M) * nlc, *y = a + (r / M) * nlc;
            for (size_t lj = 0; lj < nlc; lj++) {
                double tmp = x[lj];
                x[lj] = y[lj];
                y[lj] = tmp;
            }
        } else if (r != k && s == kr) {
            bsp_put(rr + t * M, a + (k / M) * nlc, rowbuf, 0, nlc * DSZ);
        } else if (r != k && s == rr) {
            bsp_put(kr + t * M, a + (r / M) * nlc, rowbuf, 0, nlc * DSZ);
        }
        bsp_sync();

        /* computation: finish the swap, rank-1 update of the trailing part */
        if (r != k && !local_swap) {
            if (s == kr)
                memcpy(a + (k / M) * nlc, rowbuf, nlc * DSZ);
            else if (s == rr)
                memcpy(a + (r / M) * nlc, rowbuf, nlc * DSZ);
        }
        const double *restrict u = lrow;
        for (size_t li = lstart1; li < nlr; li++) {
            double *restrict ai = a + li * nlc;
            const double l = lcol[li];
            for (size_t lj = cstart1; lj < nlc; lj++)
                ai[lj] -= l * u[lj];
        }
    }

    bsp_pop_reg(rowbuf);
    bsp_pop_reg(lrow);
    bsp_pop_reg(lcol);
    bsp_pop_reg(rinfo);
    bsp_pop_reg(cand);
    bsp_sync();
    free(rowbuf);
    free(lrow);
    free(lcol);
    free(cand);
    return status;
}

/* ---- library call: distribute from pid 0, factorise, gather ------------- */

struct lu_job {
    unsigned P, M, N;
    size_t n;
    double *a;
    size_t *perm;
    int status;
};

/* set by the caller (who becomes pid 0) for the duration of its run */
static _Thread_local struct lu_job *lu_job_tl;

static void bsplu_entry(void)
{
    struct lu_job *job = lu_job_tl; /* NULL in the other processes */
    bsp_begin(job ? job->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid();

    uint64_t hdr[3] = { 0, 0, 0 };
    if (pid == 0) {
        hdr[0] = job->n;
        hdr[1] = job->M;
        hdr[2] = job->N;
        for (unsigned q = 1; q < p; q++)
            bsp_send(q, NULL, hdr, sizeof hdr);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(hdr, sizeof hdr);
    const size_t n = (size_t)hdr[0];
    const unsigned M = (unsigned)hdr[1], N = (unsigned)hdr[2];
    const unsigned s = pid % M, t = pid / M;
    const size_t nlr = bsplu_nloc(n, M, s), nlc = bsplu_nloc(n, N, t);

    double *local = xmalloc(nlr * nlc * DSZ);
    size_t *perm = xmalloc(n * sizeof(size_t));
    bsp_push_reg(local, nlr * nlc * DSZ);
    bsp_sync();

    if (pid == 0) {
        const size_t maxblk = bsplu_nloc(n, M, 0) * bsplu_nloc(n, N, 0);
        double *pack = xmalloc(maxblk * DSZ);
        for (unsigned q = 0; q < p; q++) {
            const unsigned sq = q % M, tq = q / M;
            const size_t nr = bsplu_nloc(n, M, sq), nc = bsplu_nloc(n, N, tq);
            double *dst = (q == 0) ? local : pack;
            for (size_t li = 0; li < nr; li++)
                for (size_t lj = 0; lj < nc; lj++)
                    dst[li * nc + lj] = job->a[(li * M + sq) * n + lj * N + tq];
            if (q != 0)
                bsp_put(q, pack, local, 0, nr * nc * DSZ); /* buffered: pack is reusable */
        }
        free(pack);
    }
    bsp_sync();
    bsp_pop_reg(local);

    const int status = bsplu_spmd(M, N, n, local, perm);

    /* gather the local blocks, in pid order, into a buffer at pid 0 */
    char dummy = 0;
    double *gbuf = NULL;
    void *gid = &dummy;
    if (pid == 0) {
        gbuf = xmalloc(n * n * DSZ);
        gid = gbuf;
    }
    bsp_push_reg(gid, pid == 0 ? n * n * DSZ : 0);
    bsp_sync();
    size_t off = 0;
    for (unsigned q = 0; q < pid; q++)
        off += bsplu_nloc(n, M, q % M) * bsplu_nloc(n, N, q / M);
    if (nlr * nlc > 0)
        bsp_put(0, local, gid, off * DSZ, nlr * nlc * DSZ);
    bsp_sync();
    if (pid == 0) {
        size_t o = 0;
        for (unsigned q = 0; q < p; q++) {
            const unsigned sq = q % M, tq = q / M;
            const size_t nr = bsplu_nloc(n, M, sq), nc = bsplu_nloc(n, N, tq);
            for (size_t li = 0; li < nr; li++)
                for (size_t lj = 0; lj < nc; lj++)
                    job->a[(li * M + sq) * n + lj * N + tq] = gbuf[o + li * nc + lj];
            o += nr * nc;
        }
        if (n)
            memcpy(job->perm, perm, n * sizeof(size_t));
        job->status = status;
    }
    bsp_pop_reg(gid);
    free(gbuf);
    free(perm);
    free(local);
    bsp_end();
}

int bsplu(unsigned P, unsigned M, unsigned N, size_t n, double *a, size_t *perm)
{
    if (P == 0 || (n > 0 && (a == NULL || perm == NULL)))
        return -2;
    if (M == 0 && N == 0)
        bsplu_grid(P, &M, &N);
    if ((unsigned long)M * N != P)
        return -2;
    struct lu_job job = { P, M, N, n, a, perm, 0 };
    struct lu_job *saved = lu_job_tl;
    lu_job_tl = &job;
    bsp_init(bsplu_entry, 0, NULL);
    bsplu_entry();
    lu_job_tl = saved;
    return job.status;
}
