/*
 * Parallel sorting of 32-bit unsigned keys with <bsp.h>.
 *
 * - Radix sort as in the RMA paper's Rdx suite (RDXSORT): four rounds of
 *   parallel count sort on 8-bit digits, least significant first; per round
 *   a local count, a parallel prefix over all (digit, process) counts, a
 *   local stable count sort, and the routing of every digit's run of keys to
 *   its final place by put (RDXSORTOPT: process k starts the routing at digit
 *   256k/p, spreading the first requests over the destinations).
 * - Sample sort by regular sampling (PSRS): local sort, p regular samples per
 *   process, p-1 global splitters, one all-to-all of the buckets by put, and
 *   a p-way merge.
 * - Sequential references: LSD radix sort, qsort, and checks.
 */
#ifndef SUPERSTEP_APP_SORT_H
#define SUPERSTEP_APP_SORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sequential code, inputs and checks ----------------------------------- */

/* LSD radix sort, 4 passes of 8 bits (histograms of all four digits in one
 * pass); tmp: n keys of scratch space, or NULL to allocate. */
void sort_radix_seq(uint32_t *a, size_t n, uint32_t *tmp);
/* qsort with an integer comparison */
void sort_qsort(uint32_t *a, size_t n);
int sort_cmp_u32(const void *x, const void *y);

/* key i of the reproducible input `seed`: uniform 32-bit; with
 * range != 0, uniform in [0, range) (many duplicates for small ranges) */
uint32_t sort_key(uint64_t seed, uint32_t range, size_t i);
void sort_random_keys(uint32_t *a, size_t n, uint64_t seed, uint32_t range);

/* 1 if a[0..n) is non-decreasing */
int sort_is_sorted(const uint32_t *a, size_t n);
/* 1 if out is in[] sorted: same multiset (compared against qsort of a copy
 * of in) and non-decreasing */
int sort_check(const uint32_t *in, const uint32_t *out, size_t n);

/* ---- BSP, inside an SPMD section (every process calls) --------------------- */

/* Radix sort. On entry process k holds nlocal keys (any sizes); on return it
 * holds the same number of keys: the ranks sum_{j<k} n_j ... of the sorted
 * sequence (the input's block distribution). opt != 0: RDXSORTOPT routing
 * order. 10 supersteps; pushes and pops its own registrations. */
void bsp_radix_sort_spmd(uint32_t *keys, size_t nlocal, int opt);

/* Sample sort. keys (nlocal) are sorted locally in place; returns a
 * malloc'ed array of *nout keys, this process's part of the sorted sequence,
 * which starts at global rank *first (parts in pid order). 5 supersteps. */
uint32_t *bsp_sample_sort_spmd(uint32_t *keys, size_t nlocal, size_t *nout, size_t *first);

/* ---- library calls from sequential code ------------------------------------ */

/* Sort keys[0..n) in place on P processes: pid 0 distributes blocks, the
 * processes sort, pid 0 gathers the result into keys. 0 on success, -2 on
 * bad arguments. Callable from inside an SPMD section
 * (each caller starts a nested run). */
int bsp_radix_sort(unsigned P, uint32_t *keys, size_t n, int opt);
int bsp_sample_sort(unsigned P, uint32_t *keys, size_t n);

#ifdef __cplusplus
}
#endif

#endif
