/*
 * bspsort: sorts n random 32-bit keys on P BSP processes.
 *
 *   bspsort [-n keys] [-p P] [-a radix|radixopt|sample] [-s seed] [-r range]
 *
 * Pid 0 makes the keys (uniform 32-bit, or uniform in [0, range)), the
 * library call distributes them in blocks, sorts (radix sort of the RMA
 * paper, or sample sort) and gathers them back; the program checks the
 * result against qsort and prints the times.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "sort.h"

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-n keys] [-p P] [-a radix|radixopt|sample] [-s seed] [-r range]",
            "Sorts n random 32-bit keys on P processes and checks the result.");
    size_t n = 1000000;
    unsigned P = bsp_nprocs();
    const char *algo = "radix";
    uint64_t seed = 1;
    uint32_t range = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-p"))
            P = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-a"))
            algo = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-r"))
            range = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-n keys] [-p P] [-a radix|radixopt|sample] [-s seed] [-r range]\n",
                    argv[0]);
            return 2;
        }
    }
    int which = !strcmp(algo, "radix") ? 0 : !strcmp(algo, "radixopt") ? 1
              : !strcmp(algo, "sample") ? 2 : -1;
    if (which < 0 || P == 0) {
        fprintf(stderr, "bspsort: unknown algorithm '%s' or P = 0\n", algo);
        return 2;
    }
    uint32_t *in = malloc((n ? n : 1) * sizeof *in), *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!in || !keys) {
        fprintf(stderr, "bspsort: out of memory\n");
        return 1;
    }
    sort_random_keys(in, n, seed, range);
    memcpy(keys, in, n * sizeof *keys);

    double t0 = app_now();
    int st = which == 2 ? bsp_sample_sort(P, keys, n) : bsp_radix_sort(P, keys, n, which == 1);
    double tpar = app_now() - t0;

    uint32_t *ref = malloc((n ? n : 1) * sizeof *ref);
    if (!ref) {
        fprintf(stderr, "bspsort: out of memory\n");
        return 1;
    }
    memcpy(ref, in, n * sizeof *ref);
    t0 = app_now();
    sort_qsort(ref, n);
    double tq = app_now() - t0;
    int ok = st == 0 && sort_is_sorted(keys, n) && !memcmp(ref, keys, n * sizeof *keys);
    printf("bspsort: %s n=%zu P=%u: %.4f s (library call incl. distribution), qsort %.4f s\n",
           algo, n, P, tpar, tq);
    printf("%s\n", ok ? "OK: sorted, and the same keys as qsort" : "FAILED");
    free(ref);
    free(keys);
    free(in);
    return ok ? 0 : 1;
}
