/*
 * Buffer placements for the bulk-put benchmarks (bench_place on threads,
 * bench_mpi on ranks): where a user's program may have its source and
 * destination, including the ones glibc's `rep movsb` copy is slow for.
 *
 *   malloc   plain malloc(b) each (what a program usually does)
 *   page     both page-aligned (aligned_alloc(4096, ...))
 *   alias    both 8 bytes past a page boundary: destination minus source
 *            is 0 modulo 4 KiB, neither vector-aligned
 *   skew     source page-aligned, destination 8 bytes past a page
 *            boundary (glibc's `rep movsb` is slow there on AMD cores)
 */
#ifndef BENCH_PLACE_H
#define BENCH_PLACE_H

#include <stdlib.h>

enum place { PL_MALLOC, PL_PAGE, PL_ALIAS, PL_SKEW, PL_N };
static const char *const place_name[PL_N] = { "malloc", "page", "alias", "skew" };

/* a buffer of b bytes with placement pl; role 0: source, 1: destination.
 * *base is what to free. */
static inline char *place_alloc(enum place pl, int role, size_t b, void **base)
{
    char *p;
    switch (pl) {
    case PL_MALLOC:
        p = malloc(b);
        *base = p;
        return p;
    case PL_PAGE:
        p = aligned_alloc(4096, (b + 4095) & ~(size_t)4095);
        *base = p;
        return p;
    case PL_ALIAS:
    case PL_SKEW:
    default:
        p = aligned_alloc(4096, (b + 8 + 4095) & ~(size_t)4095);
        *base = p;
        return p && (pl == PL_ALIAS || role == 1) ? p + 8 : p;
    }
}

#endif
