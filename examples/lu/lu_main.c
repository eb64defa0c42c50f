/*
 * bsplu: LU decomposition with partial pivoting on P BSP processes.
 *
 *   bsplu [-n size] [-p P] [-M rows -N cols] [-s seed]
 *
 * Pid 0 makes a reproducible random n x n matrix, bsplu() distributes it
 * cyclically over an M x N grid, factorises it and gathers L\U and the
 * permutation back. The program checks the result against the sequential
 * reference (same pivots, |P*A - L*U| small) and prints the times.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "lu.h"

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-n size] [-p P] [-M rows -N cols] [-s seed]",
            "LU decomposition with partial pivoting of a random n x n matrix on P processes (an M x N grid), checked against the sequential code.");
    size_t n = 300;
    unsigned P = bsp_nprocs(), M = 0, N = 0;
    uint64_t seed = 42;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-p"))
            P = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-M"))
            M = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-N"))
            N = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-s"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-n size] [-p P] [-M rows -N cols] [-s seed]\n", argv[0]);
            return 2;
        }
    }
    if (P == 0 || (M == 0) != (N == 0)) {
        fprintf(stderr, "bsplu: give P >= 1 and both -M and -N (or neither)\n");
        return 2;
    }
    if (M == 0)
        bsplu_grid(P, &M, &N);

    double *a = malloc(n * n * sizeof *a), *lu = malloc(n * n * sizeof *lu),
           *ref = malloc(n * n * sizeof *ref);
    size_t *perm = malloc(n * sizeof *perm), *pref = malloc(n * sizeof *pref);
    if (!a || !lu || !ref || !perm || !pref) {
        fprintf(stderr, "bsplu: out of memory\n");
        return 1;
    }
    lu_random_matrix(n, seed, a);
    memcpy(lu, a, n * n * sizeof *a);
    memcpy(ref, a, n * n * sizeof *a);

    double t0 = app_now();
    int st = bsplu(P, M, N, n, lu, perm);
    double tpar = app_now() - t0;
    t0 = app_now();
    int sref = lu_seq(n, ref, pref);
    double tseq = app_now() - t0;

    int same_piv = (st == sref) && !memcmp(perm, pref, n * sizeof *perm);
    double maxdiff = 0.0;
    for (size_t i = 0; i < n * n; i++) {
        double d = lu[i] - ref[i];
        if (d < 0)
            d = -d;
        if (d > maxdiff)
            maxdiff = d;
    }
    double res = (st == 0) ? lu_residual(n, a, lu, perm) : 0.0;
    printf("bsplu: n=%zu P=%u grid=%ux%u status=%d  time %.4f s (sequential %.4f s)\n",
           n, P, M, N, st, tpar, tseq);
    printf("  same pivots as the sequential code: %s; max |LU - LU_seq| = %.3g; "
           "residual |PA-LU|/(n|A|) = %.3g\n", same_piv ? "yes" : "NO", maxdiff, res);
    int ok = same_piv && maxdiff <= 1e-10 && res <= 1e-12;
    printf("%s\n", ok ? "OK" : "FAILED");
    free(a);
    free(lu);
    free(ref);
    free(perm);
    free(pref);
    return ok ? 0 : 1;
}
