/*
 * bspmatmul: C = A*B on P BSP processes (Cannon-style MatMul / MatMulG of
 * the RMA paper).
 *
 *   bspmatmul [-n size] [-p P] [-v put|get|hpput|hpget] [-s seed]
 *
 * Pid 0 makes two reproducible random n x n matrices; the library call
 * distributes them over a q x q grid if P = q*q (Cannon), else in row
 * blocks over a ring of P, multiplies and gathers C; the program compares
 * C with the blocked sequential loop.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "matmul.h"

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-n size] [-p P] [-v put|get|hpput|hpget] [-s seed]",
            "C = A*B of random n x n matrices on P processes, checked against the sequential product.");
    size_t n = 400;
    unsigned P = bsp_nprocs();
    const char *vname = "put";
    uint64_t seed = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-p"))
            P = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-v"))
            vname = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-n size] [-p P] [-v put|get|hpput|hpget] [-s seed]\n", argv[0]);
            return 2;
        }
    }
    const int variant = !strcmp(vname, "put") ? MM_PUT : !strcmp(vname, "get") ? MM_GET
                      : !strcmp(vname, "hpput") ? MM_HPPUT : !strcmp(vname, "hpget") ? MM_HPGET : -1;
    if (variant < 0 || P == 0) {
        fprintf(stderr, "bspmatmul: unknown variant '%s' or P = 0\n", vname);
        return 2;
    }
    const size_t bytes = (n ? n * n : 1) * sizeof(double);
    double *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), *R = malloc(bytes);
    if (!A || !B || !C || !R) {
        fprintf(stderr, "bspmatmul: out of memory\n");
        return 1;
    }
    mm_random_matrix(n, seed, A);
    mm_random_matrix(n, seed + 1, B);

    double t0 = app_now();
    int st = bsp_matmul(P, n, A, B, C, variant);
    double tpar = app_now() - t0;
    t0 = app_now();
    mm_blocked(n, A, B, R);
    double tseq = app_now() - t0;
    double d = mm_max_rel_diff(n, C, R);
    unsigned q = mm_grid(P);
    if (q * q == P)
        printf("bspmatmul: %s n=%zu P=%u (Cannon on a %ux%u grid)", vname, n, P, q, q);
    else
        printf("bspmatmul: %s n=%zu P=%u (P is not a square: ring of %u)", vname, n, P, P);
    printf(": %.4f s incl. distribution, blocked sequential %.4f s\n", tpar, tseq);
    int ok = st == 0 && d < 1e-12;
    printf("max relative difference to the sequential product %.3g: %s\n", d, ok ? "OK" : "FAILED");
    free(A);
    free(B);
    free(C);
    free(R);
    return ok ? 0 : 1;
}
