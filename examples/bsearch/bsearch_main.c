/*
 * bspbsearch: M queries in a sorted table of N keys on P BSP processes
 * (parallel binary search on a search butterfly, PUB Programs 1-2).
 *
 *   bspbsearch [-N table] [-M queries] [-p P] [-v 1|2a|2b] [-s seed]
 *
 * Pid 0 makes the table and the queries; the library call distributes both
 * in blocks, routes the queries through the butterfly, searches locally and
 * gathers the answers (lower bounds); the program compares them with the
 * sequential binary search.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "bsearch.h"

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-N table] [-M queries] [-p P] [-v 1|2a|2b] [-s seed]",
            "M queries in a sorted table of N keys on P BSP processes (parallel binary search), checked against the sequential search.");
    size_t N = 1u << 20, M = 1u << 18;
    unsigned P = bsp_nprocs();
    const char *vname = "2b";
    uint64_t seed = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-N"))
            N = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-M"))
            M = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-p"))
            P = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-v"))
            vname = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-N table] [-M queries] [-p P] [-v 1|2a|2b] [-s seed]\n", argv[0]);
            return 2;
        }
    }
    const int variant = !strcmp(vname, "1") ? BS_PROG1 : !strcmp(vname, "2a") ? BS_PROG2A
                      : !strcmp(vname, "2b") ? BS_PROG2B : -1;
    if (variant < 0 || P == 0 || N >= (1ull << 31)) {
        fprintf(stderr, "bspbsearch: unknown variant '%s', P = 0, or N >= 2^31\n", vname);
        return 2;
    }
    uint32_t *table = malloc((N ? N : 1) * sizeof *table), *q = malloc((M ? M : 1) * sizeof *q);
    size_t *out = malloc((M ? M : 1) * sizeof *out), *ref = malloc((M ? M : 1) * sizeof *ref);
    if (!table || !q || !out || !ref) {
        fprintf(stderr, "bspbsearch: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < N; i++)
        table[i] = bs_table_entry(seed, i);
    for (size_t i = 0; i < M; i++)
        q[i] = bs_query(seed, N, i);

    double t0 = app_now();
    int st = bsp_bsearch(P, table, N, q, M, out, variant);
    double tpar = app_now() - t0;
    t0 = app_now();
    bs_seq(table, N, q, M, ref);
    double tseq = app_now() - t0;
    int ok = st == 0 && (M == 0 || !memcmp(out, ref, M * sizeof *out));
    printf("bspbsearch: program %s N=%zu M=%zu P=%u: %.4f s incl. distribution, sequential %.4f s\n",
           vname, N, M, P, tpar, tseq);
    printf("%s\n", ok ? "OK: the same answers as the sequential binary search" : "FAILED");
    free(table);
    free(q);
    free(out);
    free(ref);
    return ok ? 0 : 1;
}
