/*
 * pub_xysort: XY-sort (PUB paper, Program 4) of s keys on P = s*s
 * processes, compared with a sequential stable sort.
 *
 *   pub_xysort [-p P] [key ...]        (default: P = 4, random keys)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "pub_apps.h"

int main(int argc, char **argv)
{
    int P = 4, argi = 1;
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: %s [-p P] [key ...]   (P a square: 1, 4, 9, 16, ...)\n"
               "XY-sort of sqrt(P) keys on P processes with <pub.h>, compared with a sequential sort.\n",
               argv[0]);
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "-p")) {
        P = atoi(argv[2]);
        argi = 3;
    }
    const int s = pub_isqrt(P);
    if (s < 1) {
        fprintf(stderr, "usage: %s [-p P] [key ...]   (P a square: 1, 4, 9, 16, ...)\n", argv[0]);
        return 2;
    }
    int *keys = malloc((size_t)s * sizeof *keys), *out = malloc((size_t)s * sizeof *out);
    int *ref = malloc((size_t)s * sizeof *ref);
    if (!keys || !out || !ref)
        return 1;
    uint64_t state = 11;
    for (int i = 0; i < s; i++)
        keys[i] = argi + i < argc ? atoi(argv[argi + i]) : (int)(app_rand64(&state) % 201) - 100;
    pub_xy_seq(keys, s, ref);
    int st = pub_xy_sort(P, keys, out);
    const int ok = st == 0 && !memcmp(out, ref, (size_t)s * sizeof *out);
    printf("pub_xysort: P=%d keys:", P);
    for (int i = 0; i < s; i++)
        printf(" %d", keys[i]);
    printf("\n  sorted:");
    for (int i = 0; i < s; i++)
        printf(" %d", out[i]);
    printf("\n%s\n", ok ? "OK: the order of the sequential sort" : "FAILED");
    free(keys);
    free(out);
    free(ref);
    return ok ? 0 : 1;
}
