/*
 * Forward and backward BSP FFT of a random complex vector on P processes,
 * compared with FFTW on the whole vector.
 * Usage: bspfft [-p P] [-n n]      (default n = 2^16)
 */
#include "bspfft.h"

#include <app_util.h>
#include <bsp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-p P] [-n n]",
            "Forward and backward BSP FFT of a random complex vector of length n (default 2^16) on P processes, compared with FFTW.");
    unsigned P = bsp_nprocs();
    size_t n = (size_t)1 << 16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-p") == 0) P = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-n") == 0) n = (size_t)strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-p P] [-n n]\n", argv[0]);
            return 2;
        }
    }
    if (P == 0) P = 1;
    int L = bspfft_passes(n, P);
    if (!L) {
        fprintf(stderr, "n = %zu on %u processes is not supported (P must divide n and n must be "
                        "a product of factors of n/P)\n", n, P);
        return 1;
    }
    double *x = malloc(2 * n * sizeof *x), *ref = malloc(2 * n * sizeof *x), *x0 = malloc(2 * n * sizeof *x);
    if (!x || !ref || !x0) return 1;
    uint64_t rng = 3;
    for (size_t i = 0; i < 2 * n; ++i) x0[i] = app_rand01(&rng) - 0.5;
    memcpy(x, x0, 2 * n * sizeof *x);
    memcpy(ref, x0, 2 * n * sizeof *x);
    fft_seq(ref, n, -1);
    double t0 = app_now();
    int rc = bsp_fft(x, n, -1, P);
    double t1 = app_now();
    double err = 0, norm = 0;
    for (size_t i = 0; i < 2 * n; ++i) {
        err = fmax(err, fabs(x[i] - ref[i]));
        norm = fmax(norm, fabs(ref[i]));
    }
    rc |= bsp_fft(x, n, +1, P);
    double back = 0;
    for (size_t i = 0; i < 2 * n; ++i) back = fmax(back, fabs(x[i] / (double)n - x0[i]));
    printf("BSP FFT, n = %zu, %u processes, %d local passes (%d redistribution supersteps)\n", n, P,
           L, L - 1);
    printf("forward: max error against FFTW %.2e (relative %.2e); backward(forward(x))/n - x: "
           "%.2e; %.3f ms including distribution\n",
           err, err / (norm > 0 ? norm : 1), back, (t1 - t0) * 1e3);
    free(x); free(ref); free(x0);
    return rc == 0 && err <= 1e-10 * (norm > 0 ? norm : 1) && back < 1e-10 ? 0 : 1;
}
