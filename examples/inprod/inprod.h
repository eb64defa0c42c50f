/*
 * BSP inner product (MulticoreBSP for C paper, Algorithm 2) and the small
 * collectives the other applications build on it.
 *
 * Algorithm 2: every process computes the inner product of its local parts
 * of x and y, bsp_puts that partial sum into slot bsp_pid() of every
 * process's buffer (p words out, p words in: a balanced (p-1)-relation),
 * and after one bsp_sync every process adds the p partial sums in pid order,
 * so all processes hold the same, bit-identical result.
 *
 * Functions marked "collective" are called inside an SPMD section by every
 * process; bsp_ip is a library call usable from sequential code.
 */
#ifndef SUPERSTEP_APP_INPROD_H
#define SUPERSTEP_APP_INPROD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A reduction buffer for k values: k * p doubles, registered. */
typedef struct ip_reducer {
    double *buf;
    size_t k;
    unsigned p, s;
} ip_reducer;

/* Collective: allocates and registers the buffer; usable after the next
 * bsp_sync (the caller's). Returns 0, or -1 when out of memory (then the
 * registration is of NULL and the reducer must not be used). */
int ip_reducer_init(ip_reducer *r, size_t k);
/* Issues the puts of vals[0..k) to every process; the caller then syncs
 * (possibly together with other communication). */
void ip_reducer_put(const ip_reducer *r, const double *vals);
/* After that sync: out[i] = sum over pids 0..p-1 (in pid order) of vals[i]. */
void ip_reducer_sum(const ip_reducer *r, double *out);
/* Collective: deregisters (effective at the next sync) and frees. */
void ip_reducer_free(ip_reducer *r);

/* Collective, Algorithm 2: <x, y> over all processes, where x and y are
 * this process's np local components (any distribution, the same for x and
 * y). One superstep. r must have k >= 1. */
double ip_spmd(const double *x, const double *y, size_t np, const ip_reducer *r);

/* Sequential reference: the plain loop. */
double ip_seq(const double *x, const double *y, size_t n);

/* Library call: <x, y> of two vectors of length n on P processes. Runs its
 * own bsp_init / bsp_begin / bsp_end (from sequential code, or from inside
 * an SPMD section as a nested run). The caller's x and y are block
 * distributed with bsp_put, then Algorithm 2 runs once. */
double bsp_ip(const double *x, const double *y, size_t n, unsigned P);

/* ---- helpers for the other applications ---------------------------------- */

/* Collective: copies size bytes at buf from pid 0 to every process (buf is
 * any memory of the caller; on pid 0 it is the source). Two supersteps. */
void app_broadcast(void *buf, size_t size);

/* Block distribution of n items over p processes: process s owns
 * [app_block_start(n, p, s), app_block_start(n, p, s + 1)). */
static inline size_t app_block_start(size_t n, unsigned p, unsigned s)
{
    return (size_t)((unsigned long long)n / p * s +
                    ((unsigned long long)n % p < s ? (unsigned long long)n % p : s));
}

#ifdef __cplusplus
}
#endif

#endif
