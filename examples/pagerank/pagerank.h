/*
 * PageRank by power iteration with dangling nodes and a convergence test
 * (LPF paper, Sect. 4.3; Langville and Meyer's canonical formulation), in
 * BSP on top of the 2D SpMV.
 *
 * Graph: an n x n adjacency matrix A, a_ij != 0 for a link i -> j (values
 * are ignored). With d_j the out-degree of j, G = A^T and x_j = r_j / d_j
 * (0 for a dangling node, d_j = 0), one iteration is
 *     S      = sum of r_j over the dangling nodes j
 *     r'_i   = alpha (G x)_i + (alpha S + 1 - alpha) / n
 *     diff   = || r' - r ||_1
 * starting from r = 1/n, until diff < tol (or maxit iterations). The sum
 * of r stays 1.
 *
 * BSP: G is distributed by a partition whose x and y distributions agree
 * (owner_x == owner_y, as every sp_partition scheme gives for square
 * matrices), so r_i, x_i and y_i of a node live on one process. When no
 * process sends partial sums (row partitions of G, the default), one
 * iteration is one superstep: the local SpMV (after the fan-in by
 * bsp_direct_get with SPMV_HP, from the x buffer the owners wrote before the
 * last sync; two x buffers alternate), then one pass that makes r', the
 * local diff, the next x and the local dangling sum, and puts (S, diff) to
 * every process (Algorithm 2); with SPMV_GETPUT the ghost x of the next
 * iteration are requested with bsp_get in the same superstep. Otherwise
 * (2D partitions) one iteration takes two supersteps: (1) compute x and the
 * local dangling sum, put (S, previous diff) to every process, and, with
 * SPMV_GETPUT, request the ghost x; (2) SpMV (fan-in by bsp_direct_get with
 * SPMV_HP), fan-out; then r' and the local diff. The convergence test reads
 * the reduced diff after a sync: every process decides alike, after as many
 * iterations as the sequential reference.
 */
#ifndef SUPERSTEP_APP_PAGERANK_H
#define SUPERSTEP_APP_PAGERANK_H

#include "sparse.h"
#include "spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pr_opts {
    double alpha;       /* damping factor, e.g. 0.85 */
    double tol;         /* stop when ||r' - r||_1 < tol (0: run maxit iterations) */
    int maxit;          /* at most this many iterations */
    spmv_variant v;     /* SpMV algorithm */
} pr_opts;

/* alpha 0.85, tol 1e-10, maxit 1000, spmv_default_variant() */
pr_opts pr_default_opts(void);

typedef struct pr_info {
    int iters;          /* iterations done */
    double diff;        /* ||r - r_previous||_1 of the last one */
    double seconds;     /* time of the iterations (BSP: at pid 0, without setup) */
} pr_info;

/* The 1/out-degree of every node (0 for dangling nodes), from A. */
int pr_inverse_degrees(const sp_crs *A, double *dinv);

/* Sequential reference on the prepared data: G = A^T and dinv. r gets the
 * ranks (n entries). Returns 0. */
int pagerank_seq_prepared(const sp_crs *G, const double *dinv, const pr_opts *o, double *r,
                          pr_info *info);
/* Sequential reference from A (builds G and dinv first). Returns 0 or -1. */
int pagerank_seq(const sp_crs *A, const pr_opts *o, double *r, pr_info *info);

/* Collective, inside an SPMD section: the iteration on distributed data.
 * L: spmv_setup of G with owner_x == owner_y; dinv: the owned nodes'
 * 1/out-degree (L->nown_x entries, owned order); r: in: a start vector
 * (e.g. all 1/n), out: the ranks of the owned nodes. The options must be
 * the same on every process. Returns 0; info (may be NULL) is the same on
 * every process. */
int pagerank_spmd(spmv_local *L, const double *dinv, const pr_opts *o, double *r, pr_info *info);

/* Library call: the ranks r (n entries) of the graph A (at the caller) on P
 * processes; part is a partition of G = A^T with owner_x == owner_y, or
 * NULL for row blocks. Runs its own bsp_init / bsp_begin / bsp_end.
 * Returns 0, or -1 (bad partition, out of memory). */
int bsp_pagerank(const sp_crs *A, const sp_part *part, const pr_opts *o, double *r, unsigned P,
                 pr_info *info);

#ifdef __cplusplus
}
#endif

#endif
