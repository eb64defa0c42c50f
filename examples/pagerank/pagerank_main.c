/*
 * PageRank of a graph on P processes, compared with the sequential loop.
 * Usage: bsppagerank [-p P] [-m GRAPH] [-part rows|cols|2d] [-v getput|hp]
 *                    [-alpha A] [-tol T] [-maxit N] [-top K]
 *   GRAPH: powerlaw:N[:DEG[:GAMMA]] (default powerlaw:100000), a Matrix
 *   Market file (a_ij != 0: link i -> j), or lap2d:/lap3d: (as graphs)
 */
#include "pagerank.h"

#include <app_util.h>
#include <bsp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-p P] [-m GRAPH] [-part rows|cols|2d] [-v getput|hp] [-alpha A] [-tol T] [-maxit N] [-top K]",
            "PageRank of a graph on P processes, compared with the sequential loop.");
    unsigned P = bsp_nprocs();
    const char *spec = "powerlaw:100000";
    int kind = SP_PART_ROWS, top = 5;
    pr_opts o = pr_default_opts();
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "-p") == 0) P = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(a, "-m") == 0) spec = v;
        else if (strcmp(a, "-part") == 0 && sp_part_kind_from_name(v) >= 0) kind = sp_part_kind_from_name(v);
        else if (strcmp(a, "-v") == 0 && strcmp(v, "getput") == 0) o.v = SPMV_GETPUT;
        else if (strcmp(a, "-v") == 0 && strcmp(v, "hp") == 0) o.v = SPMV_HP;
        else if (strcmp(a, "-alpha") == 0) o.alpha = atof(v);
        else if (strcmp(a, "-tol") == 0) o.tol = atof(v);
        else if (strcmp(a, "-maxit") == 0) o.maxit = atoi(v);
        else if (strcmp(a, "-top") == 0) top = atoi(v);
        else {
            fprintf(stderr, "usage: %s [-p P] [-m GRAPH] [-part rows|cols|2d] [-v getput|hp] "
                            "[-alpha A] [-tol T] [-maxit N] [-top K]\n", argv[0]);
            return 2;
        }
    }
    if (P == 0) P = 1;
    char err[512];
    sp_crs A, G;
    if (sp_make(spec, &A, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (A.m != A.n || sp_transpose(&A, &G) != 0) {
        fprintf(stderr, "%s: a graph needs a square matrix\n", spec);
        return 1;
    }
    size_t dangling = 0;
    for (size_t i = 0; i < A.m; ++i) dangling += A.rowptr[i] == A.rowptr[i + 1];
    sp_part part;
    if (sp_partition(&G, P, (sp_part_kind)kind, &part) != 0) return 1;
    printf("%s: %zu nodes, %zu links, %zu dangling nodes; %s partition of G = A^T over %u processes\n",
           spec, A.n, A.nnz, dangling, sp_part_kind_name((sp_part_kind)kind), P);
    double *r = malloc(A.n * sizeof *r), *ref = malloc(A.n * sizeof *ref);
    pr_info bi = { 0, 0, 0 }, si = { 0, 0, 0 };
    int rc = bsp_pagerank(&A, &part, &o, r, P, &bi);
    pagerank_seq(&A, &o, ref, &si);
    double maxd = 0, sum = 0;
    for (size_t i = 0; i < A.n; ++i) {
        maxd = fmax(maxd, fabs(r[i] - ref[i]));
        sum += r[i];
    }
    printf("BSP PageRank (%s): %s, %d iterations (sequential %d), last ||r'-r||_1 = %.2e, "
           "sum r = %.15f, max |r - r_seq| = %.2e\n",
           o.v == SPMV_HP ? "direct_get/hpsend" : "get/put", rc == 0 ? "ok" : "FAILED", bi.iters,
           si.iters, bi.diff, sum, maxd);
    printf("iterations took %.3f ms with %u processes, %.3f ms sequentially\n", bi.seconds * 1e3, P,
           si.seconds * 1e3);
    for (int k = 0; k < top && rc == 0; ++k) {   /* the top-ranked nodes */
        size_t best = 0;
        for (size_t i = 1; i < A.n; ++i)
            if (r[i] > r[best]) best = i;
        printf("  #%d: node %zu, rank %.6e\n", k + 1, best, r[best]);
        r[best] = -1;
    }
    sp_part_free(&part);
    sp_free(&A);
    sp_free(&G);
    free(r);
    free(ref);
    return rc == 0 && maxd <= fmax(10 * o.tol, 1e-12) ? 0 : 1;
}
