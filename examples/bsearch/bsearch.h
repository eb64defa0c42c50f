/*
 * Parallel binary search on a search butterfly (PUB library paper, Section
 * 2, Programs 1 and 2), with <bsp.h>.
 *
 * A sorted table of N keys is distributed in blocks over the p processes,
 * and so are M queries. For each query the answer is its lower bound: the
 * number of table keys smaller than it (the index of the first key >= it).
 * Every query is routed through the butterfly to the process whose block
 * holds its answer: at each level the current range of processes is split
 * into a left and a right half; a query goes left if it is <= the last key
 * of the left half (the replicated splitter, `gkey` in the paper), and
 * crosses to the partner process in the other half when it is on the wrong
 * side. After ceil(log2 p) levels the owner searches its block locally, and
 * the answers travel back to the processes that asked, in one superstep.
 *
 * For p a power of two the halves are the butterfly's (partner = pid with
 * bit d flipped, as in the paper); for other p the range [lo, hi) splits at
 * mid = lo + (hi - lo)/2 and the right half, one larger, maps its last
 * process onto the first of the left half.
 */
#ifndef SUPERSTEP_APP_BSEARCH_H
#define SUPERSTEP_APP_BSEARCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bs_variant {
    BS_PROG1 = 1,  /* Program 1: one bsp_send per query that crosses */
    BS_PROG2A = 2, /* Program 2a: queries packed, one bsp_send per level */
    BS_PROG2B = 3  /* Program 2b: queries packed, one bsp_hpsend per level */
};

/* ---- sequential code -------------------------------------------------------- */

/* first i in [0, n) with t[i] >= key, or n */
size_t bs_lower_bound(const uint32_t *t, size_t n, uint32_t key);
/* out[i] = bs_lower_bound(table, N, queries[i]) */
void bs_seq(const uint32_t *table, size_t N, const uint32_t *queries, size_t M, size_t *out);

/* reproducible inputs: table entry i = 2i + (0 or 1), strictly increasing
 * (N < 2^31); query i uniform in [0, 2N + 2) (hits, misses, and keys beyond
 * both ends) */
uint32_t bs_table_entry(uint64_t seed, size_t i);
uint32_t bs_query(uint64_t seed, size_t N, size_t i);

/* ---- BSP ------------------------------------------------------------------------ */

/* Inside an SPMD section, every process calls it with its block of the
 * table (nt keys; the blocks in pid order form the sorted table) and its
 * queries (nq); out[i] receives the global lower bound of queries[i].
 * ceil(log2 p) + 4 supersteps. Pushes and pops its own registrations; sets
 * the tag size to 0 for its own messages and restores the caller's at the
 * end (messages the caller left unread are discarded by its syncs). */
void bsp_bsearch_spmd(const uint32_t *table, size_t nt, const uint32_t *queries, size_t nq,
                      size_t *out, int variant);

/* Library call from sequential code: P processes; pid 0 distributes table
 * and queries in blocks, gathers the answers into out. 0, or -2 on bad
 * arguments. Callable from inside an SPMD section
 * (each caller starts a nested run). */
int bsp_bsearch(unsigned P, const uint32_t *table, size_t N, const uint32_t *queries, size_t M,
                size_t *out, int variant);

#ifdef __cplusplus
}
#endif

#endif
