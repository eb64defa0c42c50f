/*
 * pub_bsearch: parallel binary search on a search butterfly with <pub.h>
 * (PUB paper, Programs 1-3), compared with the sequential binary search.
 *
 *   pub_bsearch [-p P] [-n keys/proc] [-m queries/proc] [-f send|hpsend|partition|oblsync|all] [-s seed]
 *
 * P must be a power of two (default: the largest one <= pub_maxprocs()).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "pub_apps.h"

int main(int argc, char **argv)
{
    app_pairs_usage(argc, argv, "[-p P] [-n keys/proc] [-m queries/proc] [-f send|hpsend|partition|oblsync|all] [-s seed]",
            "Parallel binary search on a search butterfly with <pub.h>, compared with the sequential binary search.");
    int P = 1, n = 1 << 16, m = 1 << 14;
    const char *fname = "all";
    unsigned long long seed = 5;
    while (2 * P <= pub_maxprocs())
        P *= 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-p"))
            P = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-m"))
            m = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-f"))
            fname = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [-p P] [-n keys/proc] [-m queries/proc] "
                            "[-f send|hpsend|partition|oblsync|all] [-s seed]\n", argv[0]);
            return 2;
        }
    }
    const int all = !strcmp(fname, "all"), form = all ? PUB_BS_SEND : pub_bs_form_of(fname);
    if (form < 0 || P < 1 || (P & (P - 1)) || n < 1 || m < 0 || (long long)n * P >= (1ll << 29) ||
        (long long)m * P >= (1ll << 29)) {
        fprintf(stderr, "pub_bsearch: unknown form '%s', P not a power of two, or sizes out of range\n",
                fname);
        return 2;
    }
    const int N = n * P, M = m * P;
    int *table = malloc((size_t)N * sizeof *table), *q = malloc((size_t)(M ? M : 1) * sizeof *q);
    int *out = malloc((size_t)(M ? M : 1) * sizeof *out), *ref = malloc((size_t)(M ? M : 1) * sizeof *ref);
    if (!table || !q || !out || !ref) {
        fprintf(stderr, "pub_bsearch: out of memory\n");
        return 1;
    }
    for (int i = 0; i < N; i++)
        table[i] = pub_bs_table_entry(seed, i, -N);
    for (int i = 0; i < M; i++)
        q[i] = pub_bs_query(seed, N, i, -N);
    double t0 = app_now();
    pub_bs_seq(table, N, q, M, ref);
    const double tseq = app_now() - t0;
    int ok = 1;
    for (int f = all ? PUB_BS_SEND : form; f <= (all ? PUB_BS_OBLSYNC : form); f++) {
        memset(out, 0xff, (size_t)(M ? M : 1) * sizeof *out);
        t0 = app_now();
        int st = pub_bsearch(P, f, table, n, q, m, out);
        const double tpar = app_now() - t0;
        const int good = st == 0 && (M == 0 || !memcmp(out, ref, (size_t)M * sizeof *out));
        ok = ok && good;
        printf("pub_bsearch: %-9s P=%d n=%d m=%d: %.4f s incl. distribution (sequential %.4f s): %s\n",
               pub_bs_form_name(f), P, n, m, tpar, tseq,
               good ? "OK, the answers of the sequential binary search" : "FAILED");
    }
    free(table);
    free(q);
    free(out);
    free(ref);
    return ok ? 0 : 1;
}
