/*
 * PageRank with dangling nodes and a convergence test: the sequential
 * reference and the BSP iteration on the 2D SpMV.
 */
#include "pagerank.h"

#include <app_util.h>
#include <inprod.h>

#include <bsp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

pr_opts pr_default_opts(void)
{
    pr_opts o = { 0.85, 1e-10, 1000, spmv_default_variant() };
    return o;
}

int pr_inverse_degrees(const sp_crs *A, double *dinv)
{
    for (size_t i = 0; i < A->m; ++i) {
        size_t d = A->rowptr[i + 1] - A->rowptr[i];
        dinv[i] = d ? 1.0 / (double)d : 0.0;
    }
    return 0;
}

int pagerank_seq_prepared(const sp_crs *G, const double *dinv, const pr_opts *o, double *r,
                          pr_info *info)
{
    const size_t n = G->m;
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x) return -1;
    const double t0 = app_now();
    for (size_t i = 0; i < n; ++i) r[i] = 1.0 / (double)n;
    int it = 0;
    double diff = 0;
    while (it < o->maxit) {
        double S = 0;
        for (size_t j = 0; j < n; ++j) {
            if (dinv[j] == 0.0) S += r[j];
            x[j] = r[j] * dinv[j];
        }
        const double c = (o->alpha * S + 1.0 - o->alpha) / (double)n;
        diff = 0;
        for (size_t i = 0; i < n; ++i) {
            double s = 0;
            for (size_t k = G->rowptr[i]; k < G->rowptr[i + 1]; ++k) s += G->val[k] * x[G->col[k]];
            const double rn = o->alpha * s + c;
            diff += fabs(rn - r[i]);
            r[i] = rn;
        }
        ++it;
        if (diff < o->tol) break;
    }
    if (info) {
        info->iters = it;
        info->diff = diff;
        info->seconds = app_now() - t0;
    }
    free(x);
    return 0;
}

/* G = A^T with all values 1 (the pattern is what counts) */
static int pr_graph(const sp_crs *A, sp_crs *G)
{
    if (sp_transpose(A, G) != 0) return -1;
    for (size_t k = 0; k < G->nnz; ++k) G->val[k] = 1.0;
    return 0;
}

int pagerank_seq(const sp_crs *A, const pr_opts *o, double *r, pr_info *info)
{
    if (A->m != A->n) return -1;
    sp_crs G;
    double *dinv = malloc((A->m ? A->m : 1) * sizeof *dinv);
    if (!dinv || pr_graph(A, &G) != 0) {
        free(dinv);
        return -1;
    }
    pr_inverse_degrees(A, dinv);
    int rc = pagerank_seq_prepared(&G, dinv, o, r, info);
    sp_free(&G);
    free(dinv);
    return rc;
}

/* One iteration per superstep, when no process sends partial sums (row
 * partitions: every process owns whole rows of G). The update of r of one
 * iteration also makes the next x and the local dangling sum, in the same
 * pass; the superstep then carries the reduction of (S, diff) and the
 * ghosts of the new x: with SPMV_GETPUT, bsp_get (read at the sync's
 * entry, after the owners wrote x); with SPMV_HP, the owners write the new x
 * into a second registered buffer while the others still read the current
 * one with bsp_direct_get, and the two buffers swap at every sync.
 * inplace (SPMV_HP, every process reads x in place: spmv_inplace_x): the
 * update of r rides in the product's loop (rows are the owned nodes, in
 * x's order: no y pass); after a sync (nobody reads x any more) the owners
 * write the next x from r, as the shared-memory loop does, and the second
 * sync carries the reduction. One x buffer instead of two: at p = 2 the
 * iteration ran about 10% faster so (fewer lines of x compete for the
 * cache), for one more sync (0.1 us). */
static void pagerank_rows(spmv_local *L, const double *dinv, const pr_opts *o, double *r,
                          ip_reducer *red, double *x2, int inplace, int *iters, double *diff)
{
    const size_t nown = L->nown_x, n = L->n;
    const spmv_variant v = o->v;
    double *xs[2] = { L->x, x2 };
    double glob[2] = { 0, 0 }, S_loc = 0;
    for (size_t t = 0; t < nown; ++t) {
        if (dinv[t] == 0.0) S_loc += r[t];
        L->x[t] = r[t] * dinv[t];
    }
    const double first[2] = { S_loc, 0 };
    ip_reducer_put(red, first);
    if (v != SPMV_HP) spmv_fanin_get(L);
    bsp_sync();
    ip_reducer_sum(red, glob);
    int it = 0, cur = 0;
    while (it < o->maxit) {
        /* the owners wrote x before the last sync */
        const double c = (o->alpha * glob[0] + 1.0 - o->alpha) / (double)n;
        double diff_loc = 0;
        S_loc = 0;
        if (inplace) {
            const double *xall = spmv_inplace_x(L);
            const size_t *rp = L->rowptr;
            const uint32_t *colz = L->colz;
            const double *val = L->val;
            for (size_t t = 0; t < nown; ++t) {
                double s = 0.0;
                for (size_t k = rp[t]; k < rp[t + 1]; ++k)
                    s += val[k] * xall[colz[k]];
                const double rn = o->alpha * s + c;
                diff_loc += fabs(rn - r[t]);
                r[t] = rn;
            }
            bsp_sync();   /* nobody reads x any more: the owners may write the next one */
            for (size_t t = 0; t < nown; ++t) {
                if (dinv[t] == 0.0) S_loc += r[t];
                L->x[t] = r[t] * dinv[t];
            }
        } else {
            if (v == SPMV_HP) spmv_local_kernel_hp(L);
            else spmv_local_kernel(L);
            double *xn = v == SPMV_HP ? xs[cur ^ 1] : L->x;
            const double *y = L->y;
            for (size_t t = 0; t < nown; ++t) {
                const double rn = o->alpha * y[t] + c;
                diff_loc += fabs(rn - r[t]);
                r[t] = rn;
                if (dinv[t] == 0.0) S_loc += rn;
                xn[t] = rn * dinv[t];
            }
        }
        const double vals[2] = { S_loc, diff_loc };
        ip_reducer_put(red, vals);
        if (!inplace && v == SPMV_HP) L->x = xs[cur ^= 1];
        else if (v != SPMV_HP) spmv_fanin_get(L);
        bsp_sync();
        ip_reducer_sum(red, glob);   /* identical on every process */
        ++it;
        if (glob[1] < o->tol) break;
    }
    L->x = xs[0];
    *iters = it;
    *diff = glob[1];
}

int pagerank_spmd(spmv_local *L, const double *dinv, const pr_opts *o, double *r, pr_info *info)
{
    const size_t nown = L->nown_x, n = L->n;
    const spmv_variant v = o->v;
    ip_reducer red;
    if (ip_reducer_init(&red, 2) != 0) bsp_abort("pagerank: out of memory on pid %u\n", bsp_pid());
    bsp_sync();
    /* does any process send partial sums (not with row partitions), and
     * does any process copy ghosts instead of reading x in place? */
    const double fo[2] = { (double)L->nfanout, spmv_inplace_x(L) ? 0.0 : 1.0 };
    double glob[2] = { 0, 0 };
    ip_reducer_put(&red, fo);
    bsp_sync();
    ip_reducer_sum(&red, glob);
    const int rows = glob[0] == 0.0;
    const int inplace = rows && v == SPMV_HP && glob[1] == 0.0 && L->nrows >= nown;
    glob[0] = glob[1] = 0;
    double *x2 = NULL;   /* the second x buffer of pagerank_rows with SPMV_HP */
    if (rows && v == SPMV_HP && !inplace) {
        x2 = malloc((L->ncols ? L->ncols : 1) * sizeof *x2);
        if (!x2) bsp_abort("pagerank: out of memory on pid %u\n", bsp_pid());
        memset(x2, 0, L->ncols * sizeof *x2);
        bsp_push_reg(x2, L->ncols * sizeof *x2);
        bsp_sync();
    }
    const double t0 = bsp_time();
    double diff_loc = 0;
    int it = 0;
    if (rows) {
        pagerank_rows(L, dinv, o, r, &red, x2, inplace, &it, &glob[1]);
    } else {
        for (;;) {
            /* superstep 1: x of the owned nodes, dangling sum, reduction of
             * (S, diff of the last iteration); the get variant's fan-in */
            double S_loc = 0;
            for (size_t t = 0; t < nown; ++t) {
                if (dinv[t] == 0.0) S_loc += r[t];
                L->x[t] = r[t] * dinv[t];
            }
            const double vals[2] = { S_loc, diff_loc };
            ip_reducer_put(&red, vals);
            if (v != SPMV_HP) spmv_fanin_get(L);
            bsp_sync();
            ip_reducer_sum(&red, glob);   /* identical on every process */
            if ((it > 0 && glob[1] < o->tol) || it >= o->maxit) break;
            /* superstep 2: y = G x; then r' and the local diff */
            if (v == SPMV_HP) spmv_local_kernel_hp(L);
            else spmv_local_kernel(L);
            spmv_fanout(L, v);
            bsp_sync();
            spmv_accumulate(L, v);
            const double c = (o->alpha * glob[0] + 1.0 - o->alpha) / (double)n;
            diff_loc = 0;
            for (size_t t = 0; t < nown; ++t) {
                const double rn = o->alpha * L->y[t] + c;
                diff_loc += fabs(rn - r[t]);
                r[t] = rn;
            }
            ++it;
        }
    }
    const double t1 = bsp_time();
    if (x2) {
        bsp_pop_reg(x2);
        bsp_sync();
        free(x2);
    }
    ip_reducer_free(&red);
    if (info) {
        info->iters = it;
        info->diff = glob[1];
        info->seconds = t1 - t0;
    }
    return 0;
}

/* ---- library call ------------------------------------------------------------ */

typedef struct pr_call {
    const sp_crs *A;
    const sp_part *part;
    pr_opts o;
    double *r;
    unsigned P;
    pr_info info;
    int rc;
} pr_call;

static _Thread_local pr_call *pr_current;

static void pr_entry(void)
{
    pr_call *c = pr_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    const unsigned s = bsp_pid();
    if (s != 0) c = NULL;
    pr_opts o = c ? c->o : pr_default_opts();
    app_broadcast(&o, sizeof o);
    /* pid 0: G = A^T, 1/out-degrees, the partition */
    sp_crs G;
    sp_part own;
    memset(&G, 0, sizeof G);
    memset(&own, 0, sizeof own);
    double *dinv_all = NULL;
    const sp_part *part = NULL;
    if (c && c->A->m == c->A->n && pr_graph(c->A, &G) == 0 &&
        (dinv_all = malloc((c->A->m ? c->A->m : 1) * sizeof *dinv_all)) != NULL) {
        pr_inverse_degrees(c->A, dinv_all);
        part = c->part;
        if (!part && sp_partition(&G, bsp_nprocs(), SP_PART_ROWS, &own) == 0) part = &own;
        if (part && part->P == bsp_nprocs() && part->owner_x && part->owner_y &&
            memcmp(part->owner_x, part->owner_y, G.n * sizeof *part->owner_x) != 0)
            part = NULL;   /* x and y distributions must agree */
    }
    spmv_local L;
    int rc = spmv_setup(&L, c ? &G : NULL, part);
    sp_part_free(&own);
    sp_free(&G);
    if (rc == 0) {
        double *dinv = malloc((L.nown_x ? L.nown_x : 1) * sizeof *dinv);
        double *r = malloc((L.nown_x ? L.nown_x : 1) * sizeof *r);
        if (!dinv || !r) bsp_abort("bsp_pagerank: out of memory on pid %u\n", s);
        spmv_scatter_x(&L, dinv_all, dinv);
        for (size_t t = 0; t < L.nown_x; ++t) r[t] = 1.0 / (double)L.n;
        pr_info info;
        pagerank_spmd(&L, dinv, &o, r, &info);
        spmv_gather_x(&L, r, c ? c->r : NULL);
        if (c) c->info = info;
        spmv_free(&L);
        free(dinv);
        free(r);
    }
    free(dinv_all);
    if (c) c->rc = rc;
    bsp_end();
}

int bsp_pagerank(const sp_crs *A, const sp_part *part, const pr_opts *o, double *r, unsigned P,
                 pr_info *info)
{
    pr_call c;
    memset(&c, 0, sizeof c);
    c.A = A;
    c.part = part;
    c.o = o ? *o : pr_default_opts();
    c.r = r;
    c.P = P ? P : bsp_nprocs();
    c.rc = -1;
    pr_call *prev = pr_current;
    pr_current = &c;
    bsp_init(pr_entry, 0, NULL);
    pr_entry();
    pr_current = prev;
    if (info && c.rc == 0) *info = c.info;
    return c.rc;
}
