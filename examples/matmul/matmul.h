/*
 * Dense matrix multiplication C = A*B with <bsp.h>: the RMA paper's Mult
 * suite. MatMul (put) and MatMulG (get) are Cannon-style algorithms on a
 * q x q process grid: in round l = 0..q-1 every process receives one block
 * of A and one block of B, from the processes that the paper's formulas
 * name, and adds their product to its block of C. Variants with the
 * unbuffered bsp_hpput / bsp_hpget use the same schedule.
 *
 * Process pid = pj*q + pi owns block (pi, pj) (block row pi, block column
 * pj) of A, B and C, as in the paper. Blocks are nb x nb, row-major. With p
 * processes, q = floor(sqrt(p)): if p is not a square, processes q*q..p-1
 * hold no blocks and only take part in the synchronisations.
 *
 * For p not a square the library call uses instead the same scheme on a
 * p x 1 grid (a ring): process k owns rows block k of A, B and C (block
 * distribution of the rows); in round l it receives the rows block
 * (k + l) mod p of B, by put from its owner or by get, and adds the product
 * of the matching columns of its A rows with it. p rounds, n^2 (1 - 1/p)
 * words received per process, every process computes.
 *
 * All matrices are n x n, row-major (element (i,j) at [i*n + j]).
 */
#ifndef SUPERSTEP_APP_MATMUL_H
#define SUPERSTEP_APP_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mm_variant {
    MM_PUT = 0,   /* MatMul: bsp_put (buffered) */
    MM_GET = 1,   /* MatMulG: bsp_get (buffered) */
    MM_HPPUT = 2, /* MatMul with bsp_hpput */
    MM_HPGET = 3  /* MatMulG with bsp_hpget */
};

/* ---- sequential code -------------------------------------------------------- */

/* c += a*b for n x n row-major matrices: the cache-blocked loop (tiles of
 * 128 in k, 512 in j; the i-k-j order inside), also the local kernel of
 * the BSP versions */
void mm_block_add(size_t n, const double *a, const double *b, double *c);
/* c (m x n, row stride ldc) += a (m x kk, stride lda) * b (kk x n, stride
 * ldb): the same blocked loop for rectangular parts */
void mm_gemm_add(size_t m, size_t n, size_t kk, const double *a, size_t lda,
                 const double *b, size_t ldb, double *c, size_t ldc);
/* C = A*B, blocked (the sequential baseline) */
void mm_blocked(size_t n, const double *A, const double *B, double *C);
/* C = A*B, the textbook i-j-k triple loop (reference for the tests) */
void mm_naive(size_t n, const double *A, const double *B, double *C);
/* entry (i,j) of the reproducible test matrix `seed`: uniform in [-1, 1) */
double mm_entry(uint64_t seed, size_t n, size_t i, size_t j);
void mm_random_matrix(size_t n, uint64_t seed, double *A);
/* relative difference: max_ij |X_ij - Y_ij| / max(1, max_ij |Y_ij|) */
double mm_max_rel_diff(size_t n, const double *X, const double *Y);

/* ---- BSP ------------------------------------------------------------------------ */

/* q = floor(sqrt(p)) */
unsigned mm_grid(unsigned p);

/* Inside an SPMD section, every process calls it. Processes with
 * pid < q*q pass their blocks a, b (nb x nb, read only, not modified until
 * the call returns) and c (output, overwritten with the block of A*B);
 * the others pass NULL. q + 2 supersteps; pushes and pops its own
 * registrations. */
void bsp_matmul_spmd(size_t nb, const double *a, const double *b, double *c, int variant);

/* Ring version, inside an SPMD section: process k holds the rows
 * [rs_k, rs_k + m_k) of A, B and C (row-major, n columns; rs_k, m_k as in
 * mm_rows), passes a, b (read only) and c (output). p + 2 supersteps. */
void bsp_matmul_ring_spmd(size_t n, const double *a, const double *b, double *c, int variant);
/* rows of process k in the ring's block distribution: m_k = n/p (+1 for
 * k < n mod p), starting at *first */
size_t mm_rows(size_t n, unsigned p, unsigned k, size_t *first);

/* Library call: C = A*B on P processes (started with bsp_init/bsp_begin);
 * Cannon on the q x q grid if P = q*q, else the ring on all P processes;
 * pid 0 pads n up to a multiple of q (Cannon), distributes the blocks, and
 * gathers C. 0 on success, -2 on bad arguments. Callable from inside an SPMD
 * section (each caller starts a nested run). */
int bsp_matmul(unsigned P, size_t n, const double *A, const double *B, double *C, int variant);
/* the ring on all P processes, whatever P */
int bsp_matmul_ring(unsigned P, size_t n, const double *A, const double *B, double *C, int variant);

#ifdef __cplusplus
}
#endif

#endif
