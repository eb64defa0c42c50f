/*
 * bench_pagerank: BSP PageRank (both SpMV algorithms) against the
 * sequential power iteration and an OpenMP version of the same loops, on a
 * random power-law graph, all to the same tolerance. One JSON object per
 * line and (graph, partition, algorithm):
 *   {"bench":"pagerank","graph":..,"n":..,"links":..,"p":..,"part":..,"variant":..,
 *    "iters":..,"t_seq":..,"t_omp":..,"t_bsp":..,"speedup_bsp":t_seq/t_bsp,
 *    "speedup_omp":t_seq/t_omp,"bsp_vs_omp":t_omp/t_bsp,"max_diff":..}
 * t_* are median times of the whole iteration (setup, transposition and
 * distribution untimed) over rounds that take turns, so that a change in
 * the machine's load affects all codes alike. max_diff: largest
 * |r_bsp - r_seq|; min_*: the fastest round.
 * Usage: bench_pagerank [-p P] [-rounds R] [-tol T] [-m GRAPH]... [-part rows|2d]... [-v hp|getput]...
 *                       [-omp-huge 0|1]
 *   defaults: -m powerlaw:1000000:8, -part rows, both -v, tol 1e-10, -omp-huge 0
 * -omp-huge 1 gives the OpenMP code's x the huge pages that the BSP code's
 * x gets on the pthread engine (app_huge_alloc), for a like-for-like
 * comparison; 0 (default) is the plain malloc a user's loop would have.
 */
#include "pagerank.h"

#include <app_util.h>
#include <bsp.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i) m = v[i] < m ? v[i] : m;
    return m;
}

static int pagerank_omp(const sp_crs *G, const double *dinv, const pr_opts *o, double *r, double *x,
                        pr_info *info)
{
    const long n = (long)G->m;
    const double t0 = app_now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) r[i] = 1.0 / (double)n;
    int it = 0;
    double diff = 0;
    while (it < o->maxit) {
        double S = 0;
#pragma omp parallel for schedule(static) reduction(+ : S)
        for (long j = 0; j < n; ++j) {
            if (dinv[j] == 0.0) S += r[j];
            x[j] = r[j] * dinv[j];
        }
        const double c = (o->alpha * S + 1.0 - o->alpha) / (double)n;
        diff = 0;
#pragma omp parallel for schedule(static) reduction(+ : diff)
        for (long i = 0; i < n; ++i) {
            double s = 0;
            for (size_t k = G->rowptr[i]; k < G->rowptr[i + 1]; ++k) s += G->val[k] * x[G->col[k]];
            const double rn = o->alpha * s + c;
            diff += fabs(rn - r[i]);
            r[i] = rn;
        }
        ++it;
        if (diff < o->tol) break;
    }
    info->iters = it;
    info->diff = diff;
    info->seconds = app_now() - t0;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned P = 2;
    int rounds = 3, nmat = 0, npart = 0, nvar = 0, parts[4], vars[2], omp_huge = 0;
    double tol = 1e-10;
    const char *mats[8];
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "-p") == 0) P = (unsigned)atoi(v);
        else if (strcmp(a, "-rounds") == 0) rounds = atoi(v) > 0 ? atoi(v) : 1;
        else if (strcmp(a, "-tol") == 0) tol = atof(v);
        else if (strcmp(a, "-omp-huge") == 0) omp_huge = atoi(v) != 0;
        else if (strcmp(a, "-m") == 0 && nmat < 8) mats[nmat++] = v;
        else if (strcmp(a, "-part") == 0 && npart < 4 && sp_part_kind_from_name(v) >= 0)
            parts[npart++] = sp_part_kind_from_name(v);
        else if (strcmp(a, "-v") == 0 && nvar < 2 && (!strcmp(v, "hp") || !strcmp(v, "getput")))
            vars[nvar++] = strcmp(v, "hp") == 0 ? SPMV_HP : SPMV_GETPUT;
        else {
            fprintf(stderr, "usage: %s [-p P] [-rounds R] [-tol T] [-m GRAPH]... [-part rows|2d]... "
                            "[-v hp|getput]... [-omp-huge 0|1]\n", argv[0]);
            return 2;
        }
    }
    if (nmat == 0) mats[nmat++] = "powerlaw:1000000:8";
    if (npart == 0) parts[npart++] = SP_PART_ROWS;
    if (nvar == 0) {
        vars[nvar++] = SPMV_HP;
        vars[nvar++] = SPMV_GETPUT;
    }
    if (P == 0) P = 1;
    omp_set_num_threads((int)P);
    for (int mi = 0; mi < nmat; ++mi) {
        char err[512];
        sp_crs A, G;
        if (sp_make(mats[mi], &A, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (A.m != A.n || sp_transpose(&A, &G) != 0) return 1;
        for (size_t k = 0; k < G.nnz; ++k) G.val[k] = 1.0;
        const size_t n = A.n;
        double *dinv = malloc(n * sizeof *dinv), *r = malloc(n * sizeof *r), *ref = malloc(n * sizeof *r);
        app_huge xmem = { NULL, 0 };
        double *x = omp_huge ? app_huge_alloc(n * sizeof *x, &xmem) : malloc(n * sizeof *x);
        pr_inverse_degrees(&A, dinv);
        pr_opts o = pr_default_opts();
        o.tol = tol;
        double *tseq = malloc((size_t)rounds * sizeof(double)), *tomp = malloc((size_t)rounds * sizeof(double));
        double *tb[4][2], maxdiff[4][2];
        int iters = 0, bit[4][2];
        sp_part part[4];
        for (int pi = 0; pi < npart; ++pi) {
            if (sp_partition(&G, P, (sp_part_kind)parts[pi], &part[pi]) != 0) return 1;
            for (int vi = 0; vi < nvar; ++vi) {
                tb[pi][vi] = malloc((size_t)rounds * sizeof(double));
                maxdiff[pi][vi] = 0;
            }
        }
        for (int round = 0; round < rounds; ++round) {
            pr_info si, oi;
            pagerank_seq_prepared(&G, dinv, &o, ref, &si);
            tseq[round] = si.seconds;
            iters = si.iters;
            for (int pi = 0; pi < npart; ++pi)
                for (int vi = 0; vi < nvar; ++vi) {
                    pr_info bi;
                    o.v = (spmv_variant)vars[vi];
                    if (bsp_pagerank(&A, &part[pi], &o, r, P, &bi) != 0) return 1;
                    tb[pi][vi][round] = bi.seconds;
                    bit[pi][vi] = bi.iters;
                    for (size_t i = 0; i < n; ++i) maxdiff[pi][vi] = fmax(maxdiff[pi][vi], fabs(r[i] - ref[i]));
                }
            pagerank_omp(&G, dinv, &o, r, x, &oi);
            tomp[round] = oi.seconds;
        }
        const double ts = app_median(tseq, rounds), to = app_median(tomp, rounds);
        for (int pi = 0; pi < npart; ++pi) {
            for (int vi = 0; vi < nvar; ++vi) {
                const double t = app_median(tb[pi][vi], rounds);
                printf("{\"bench\":\"pagerank\",\"graph\":\"%s\",\"n\":%zu,\"links\":%zu,\"p\":%u,"
                       "\"part\":\"%s\",\"variant\":\"%s\",\"tol\":%.0e,\"iters\":%d,\"iters_bsp\":%d,"
                       "\"rounds\":%d,\"omp_huge\":%d,\"t_seq\":%.4e,\"t_omp\":%.4e,\"t_bsp\":%.4e,\"speedup_bsp\":%.3f,"
                       "\"speedup_omp\":%.3f,\"bsp_vs_omp\":%.3f,\"max_diff\":%.1e,"
                       "\"min_seq\":%.4e,\"min_omp\":%.4e,\"min_bsp\":%.4e}\n",
                       mats[mi], n, A.nnz, P, sp_part_kind_name((sp_part_kind)parts[pi]),
                       vars[vi] == SPMV_HP ? "hp" : "getput", tol, iters, bit[pi][vi], rounds, omp_huge, ts, to, t,
                       ts / t, ts / to, to / t, maxdiff[pi][vi], minimum(tseq, rounds),
                       minimum(tomp, rounds), minimum(tb[pi][vi], rounds));
                fflush(stdout);
                free(tb[pi][vi]);
            }
            sp_part_free(&part[pi]);
        }
        free(tseq); free(tomp); free(dinv); free(r); free(ref);
        if (omp_huge) app_huge_free(&xmem);
        else free(x);
        sp_free(&A);
        sp_free(&G);
    }
    return 0;
}
