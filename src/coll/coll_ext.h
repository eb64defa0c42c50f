/*
 * Superstep extensions of the collectives library (not part of the LPF
 * contract; for tests and benchmarks). Uses only public types.
 */
#ifndef SSTEP_COLL_EXT_H
#define SSTEP_COLL_EXT_H

#include <lpf/collectives.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Algorithm families. AUTO picks by the machine parameters (g, l of
 * lpf_probe); DIRECT and TWO_PHASE force a family wherever it applies
 * (broadcast with P >= 3 and size >= P-1; combine/allcombine with
 * num >= P); elsewhere the only algorithm is used. */
enum sstep_coll_algorithm {
    SSTEP_COLL_AUTO = 0,
    SSTEP_COLL_DIRECT = 1,
    SSTEP_COLL_TWO_PHASE = 2
};

/* Force the algorithm family of one collectives object. Must be called
 * with the same value on every process of the object (members and
 * non-members), between operations. */
void sstep_coll_set_algorithm(lpf_coll_t coll, enum sstep_coll_algorithm algo);

/* The family `coll` uses for a broadcast of `size` bytes, and for a
 * combine/allcombine of `num` elements of `size` bytes. */
enum sstep_coll_algorithm sstep_coll_broadcast_algorithm(lpf_coll_t coll, size_t size);
enum sstep_coll_algorithm sstep_coll_combine_algorithm(lpf_coll_t coll, size_t num, size_t size);

#ifdef __cplusplus
}
#endif

#endif
