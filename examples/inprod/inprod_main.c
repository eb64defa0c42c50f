/*
 * Inner product of two random vectors on P processes (Algorithm 2 of the
 * MulticoreBSP for C paper), compared with the sequential loop.
 * Usage: bspinprod [-p P] [-n n] [-s seed]
 */
#include "inprod.h"

#include <app_util.h>
#include <bsp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-p P] [-n n] [-s seed]",
            "Inner product of two random vectors of length n on P processes, compared with the sequential loop.");
    unsigned P = bsp_nprocs();
    size_t n = 1000000;
    uint64_t seed = 42;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-p") == 0) P = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-n") == 0) n = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-s") == 0) seed = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-p P] [-n n] [-s seed]\n", argv[0]);
            return 2;
        }
    }
    if (P == 0) P = 1;
    double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
    if (!x || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t rng = seed;
    for (size_t i = 0; i < n; ++i) {
        x[i] = app_rand01(&rng) - 0.5;
        y[i] = app_rand01(&rng) - 0.5;
    }
    double t0 = app_now();
    double bsp = bsp_ip(x, y, n, P);
    double t1 = app_now();
    double seq = ip_seq(x, y, n);
    double t2 = app_now();
    double err = fabs(bsp - seq) / (fabs(seq) > 1e-300 ? fabs(seq) : 1.0);
    printf("<x,y> with %u processes: %.17g (sequential %.17g, relative difference %.2e)\n",
           P, bsp, seq, err);
    printf("time: %.3f ms including distribution from pid 0 (sequential loop %.3f ms)\n",
           (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    free(x);
    free(y);
    return err < 1e-10 ? 0 : 1;
}
