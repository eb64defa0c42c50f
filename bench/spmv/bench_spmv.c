/*
 * bench_spmv: the BSP 2D SpMV (both algorithms, several partitions) against
 * the plain CRS loop and an OpenMP CRS loop (parallel for over rows, static
 * schedule) on the same number of threads. One JSON object per line and
 * (matrix, partition, algorithm):
 *   {"bench":"spmv","matrix":..,"m":..,"nnz":..,"p":..,"part":..,"variant":..,
 *    "volume":..,"max_nnz":..,"samples":..,"t_seq":..,"t_omp":..,"t_bsp":..,
 *    "speedup_bsp":t_seq/t_bsp,"speedup_omp":t_seq/t_omp,"bsp_vs_omp":t_omp/t_bsp,
 *    "gflops_bsp":2 nnz / t_bsp}
 * Times are medians (seconds per product; min_*: the fastest sample). The BSP time is measured at
 * pid 0 from a common start (a sync) to the end of the product's last
 * superstep, with the distributed data in place (distribution untimed).
 * Usage: bench_spmv [-p P] [-reps R] [-m MATRIX]... [-part rows|cols|2d]... [-v getput|hp]...
 *                   [-omp-huge 0|1]
 *   defaults: -m lap2d:2048 -m lap3d:160 -m powerlaw:2000000:8, -part rows -part 2d, both -v,
 *   -omp-huge 0. -omp-huge 1 gives the x of the sequential and OpenMP loops the huge pages
 *   that the BSP code's x gets on the pthread engine (app_huge_alloc): like for like.
 */
#include "inprod.h"
#include "sparse.h"
#include "spmv.h"

#include <app_util.h>
#include <bsp.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run_args {
    unsigned P;
    int reps;
    const sp_crs *A;
    const sp_part *part;
    const double *x;
    spmv_variant v;
    double *t;   /* reps samples */
    double *y;   /* result, to check against the sequential one */
} run_args;

static _Thread_local run_args *run_current;

static void bsp_run(void)
{
    run_args *c = run_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    if (bsp_pid() != 0) c = NULL;
    int par[2] = { c ? c->reps : 0, c ? (int)c->v : 0 };
    app_broadcast(par, sizeof par);
    spmv_local L;
    if (spmv_setup(&L, c ? c->A : NULL, c ? c->part : NULL) != 0) bsp_abort("setup failed\n");
    spmv_set_x(&L, c ? c->x : NULL);
    const int reps = par[0];
    for (int r = -3; r < reps; ++r) {
        bsp_sync();
        const double t0 = bsp_time();
        spmv_mv(&L, (spmv_variant)par[1]);
        /* pid 0 leaves the product's last sync after every process entered
         * it: this is the slowest process's time */
        const double t1 = bsp_time();
        if (r >= 0 && c) c->t[r] = t1 - t0;
    }
    spmv_gather_y(&L, L.y, c ? c->y : NULL);
    spmv_free(&L);
    bsp_end();
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i) m = v[i] < m ? v[i] : m;
    return m;
}

static void spmv_omp(const sp_crs *A, const double *x, double *y)
{
    const size_t *rp = A->rowptr;
    const uint32_t *col = A->col;
    const double *val = A->val;
    const long m = (long)A->m;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < m; ++i) {
        double s = 0.0;
        for (size_t k = rp[i]; k < rp[i + 1]; ++k) s += val[k] * x[col[k]];
        y[i] = s;
    }
}

int main(int argc, char **argv)
{
    unsigned P = 2;
    int reps = 0, rounds = 3, omp_huge = 0;
    const char *mats[16];
    int nmat = 0, parts[8], npart = 0, vars[2], nvar = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "-p") == 0) P = (unsigned)atoi(v);
        else if (strcmp(a, "-reps") == 0) reps = atoi(v);
        else if (strcmp(a, "-rounds") == 0) rounds = atoi(v) > 0 ? atoi(v) : 1;
        else if (strcmp(a, "-m") == 0 && nmat < 16) mats[nmat++] = v;
        else if (strcmp(a, "-omp-huge") == 0) omp_huge = atoi(v) != 0;
        else if (strcmp(a, "-part") == 0 && npart < 8 && sp_part_kind_from_name(v) >= 0)
            parts[npart++] = sp_part_kind_from_name(v);
        else if (strcmp(a, "-v") == 0 && nvar < 2 && (!strcmp(v, "hp") || !strcmp(v, "getput")))
            vars[nvar++] = strcmp(v, "hp") == 0 ? SPMV_HP : SPMV_GETPUT;
        else {
            fprintf(stderr, "usage: %s [-p P] [-reps R] [-rounds N] [-m MATRIX]... "
                            "[-part rows|cols|2d]... [-v getput|hp]... [-omp-huge 0|1]\n", argv[0]);
            return 2;
        }
    }
    if (nmat == 0) {
        mats[nmat++] = "lap2d:2048";
        mats[nmat++] = "lap3d:160";
        mats[nmat++] = "powerlaw:2000000:8";
    }
    if (npart == 0) {
        parts[npart++] = SP_PART_ROWS;
        parts[npart++] = SP_PART_2D;
    }
    if (nvar == 0) {
        vars[nvar++] = SPMV_HP;
        vars[nvar++] = SPMV_GETPUT;
    }
    if (P == 0) P = 1;
    omp_set_num_threads((int)P);
    for (int mi = 0; mi < nmat; ++mi) {
        char err[512];
        sp_crs A;
        if (sp_make(mats[mi], &A, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        if (strncmp(mats[mi], "powerlaw:", 9) == 0) sp_randomize_values(&A, 7);
        int R = reps > 0 ? reps : (int)(1e9 / (double)(A.nnz + 1) / rounds);
        if (reps <= 0) R = R < 15 ? 15 : R > 501 ? 501 : R;
        app_huge xmem = { NULL, 0 };
        double *x = omp_huge ? app_huge_alloc(A.n * sizeof *x, &xmem) : malloc(A.n * sizeof *x);
        double *y = malloc(A.m * sizeof *y), *yb = malloc(A.m * sizeof *yb);
        uint64_t rng = 5;
        for (size_t j = 0; j < A.n; ++j) x[j] = app_rand01(&rng);
        double *tb[8][2];
        sp_part_stats st[8];
        sp_part part[8];
        double maxerr = 0;
        double *ts = malloc((size_t)R * rounds * sizeof *ts), *to = malloc((size_t)R * rounds * sizeof *to);
        for (int pi = 0; pi < npart; ++pi) {
            if (sp_partition(&A, P, (sp_part_kind)parts[pi], &part[pi]) != 0 ||
                sp_part_evaluate(&A, &part[pi], &st[pi]) != 0)
                return 1;
            for (int vi = 0; vi < nvar; ++vi) tb[pi][vi] = malloc((size_t)R * rounds * sizeof(double));
        }
        for (int round = 0; round < rounds; ++round) {
            for (int pi = 0; pi < npart; ++pi)
                for (int vi = 0; vi < nvar; ++vi) {
                    run_args ra = { P, R, &A, &part[pi], x, (spmv_variant)vars[vi],
                                    tb[pi][vi] + (size_t)round * R, yb };
                    run_current = &ra;
                    bsp_init(bsp_run, argc, argv);
                    bsp_run();
                    run_current = NULL;
                    sp_spmv(&A, x, y);
                    for (size_t i = 0; i < A.m; ++i) {
                        double e = y[i] - yb[i];
                        e = e < 0 ? -e : e;
                        if (e > maxerr) maxerr = e;
                    }
                }
            for (int r = -3; r < R; ++r) {
                double t0 = app_now();
                sp_spmv(&A, x, y);
                double t1 = app_now();
                spmv_omp(&A, x, yb);
                double t2 = app_now();
                if (r >= 0) {
                    ts[(size_t)round * R + r] = t1 - t0;
                    to[(size_t)round * R + r] = t2 - t1;
                }
            }
        }
        const int K = R * rounds;
        const double m_seq = minimum(ts, K), m_omp = minimum(to, K);
        const double t_seq = app_median(ts, K), t_omp = app_median(to, K);
        for (int pi = 0; pi < npart; ++pi) {
            for (int vi = 0; vi < nvar; ++vi) {
                const double m = minimum(tb[pi][vi], K);
                const double t = app_median(tb[pi][vi], K);
                printf("{\"bench\":\"spmv\",\"matrix\":\"%s\",\"m\":%zu,\"nnz\":%zu,\"p\":%u,"
                       "\"part\":\"%s\",\"variant\":\"%s\",\"volume\":%zu,\"max_nnz\":%zu,\"samples\":%d,"
                       "\"omp_huge\":%d,\"t_seq\":%.4e,\"t_omp\":%.4e,\"t_bsp\":%.4e,\"speedup_bsp\":%.3f,"
                       "\"speedup_omp\":%.3f,\"bsp_vs_omp\":%.3f,\"gflops_bsp\":%.3f,\"max_err\":%.1e,"
                       "\"min_seq\":%.4e,\"min_omp\":%.4e,\"min_bsp\":%.4e}\n",
                       mats[mi], A.m, A.nnz, P, sp_part_kind_name((sp_part_kind)parts[pi]),
                       vars[vi] == SPMV_HP ? "hp" : "getput", st[pi].volume, st[pi].max_nnz, K, omp_huge, t_seq,
                       t_omp, t, t_seq / t, t_seq / t_omp, t_omp / t, 2.0 * (double)A.nnz / t * 1e-9,
                       maxerr, m_seq, m_omp, m);
                fflush(stdout);
                free(tb[pi][vi]);
            }
            sp_part_free(&part[pi]);
        }
        free(ts); free(to); free(y); free(yb);
        if (omp_huge) app_huge_free(&xmem);
        else free(x);
        sp_free(&A);
    }
    return 0;
}
