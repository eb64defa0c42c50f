/*
 * LU decomposition with partial pivoting.
 *
 * Sequential reference (lu_seq.c) and a BSP version on a two-dimensional
 * cyclic distribution over an M x N process grid (bsplu.c), in the style of
 * Bisseling's BSPedupack bsplu, written for <bsp.h> (MulticoreBSP flavour).
 *
 * Matrices are n x n, row-major, element (i,j) at a[i*n + j]. On return the
 * strict lower triangle holds L (unit diagonal not stored), the upper
 * triangle U, and perm[i] is the row of the input that became row i, so that
 * P*A = L*U with (P*A)[i][*] = A[perm[i]][*].
 *
 * Pivot rule (both versions): the entry of largest absolute value in column
 * k at or below the diagonal; ties go to the smallest row index. The BSP
 * version performs the same floating-point operations in the same order as
 * lu_seq, so both give the same pivots and (without FMA contraction) the
 * same bits.
 */
#ifndef SUPERSTEP_APP_LU_H
#define SUPERSTEP_APP_LU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sequential reference ----------------------------------------------- */

/* In-place LU with partial pivoting; 0 on success, -1 if a pivot is 0 (the
 * factorisation stops at that column; perm holds the swaps so far). */
int lu_seq(size_t n, double *a, size_t *perm);

/* Entry (i,j) of the reproducible test matrix: uniform in [-0.5, 0.5). */
double lu_matrix_entry(uint64_t seed, size_t n, size_t i, size_t j);
void lu_random_matrix(size_t n, uint64_t seed, double *a);

/* max_ij |(P*A - L*U)_ij| / (n * max_ij |A_ij|): about 1e-16 for a good
 * factorisation. O(n^3). */
double lu_residual(size_t n, const double *a, const double *lu, const size_t *perm);

/* ---- BSP version --------------------------------------------------------- */

/* The grid chosen for P processes when M = N = 0 is passed: M = the largest
 * divisor of P not above sqrt(P), N = P / M (2 -> 1x2, 3 -> 1x3, 4 -> 2x2,
 * 8 -> 2x4). With one process row a stage takes one superstep, not two. */
void bsplu_grid(unsigned P, unsigned *M, unsigned *N);

/* Number of the n global indices i with i % M == s (local length). */
size_t bsplu_nloc(size_t n, unsigned M, unsigned s);

/* Library call from sequential code (or from inside an SPMD section, as a
 * nested run): starts P processes with bsp_init/bsp_begin/bsp_end, pid 0
 * distributes a over an M x N grid (M*N == P; M = N = 0 chooses with
 * bsplu_grid), factorises, and gathers the result back into a and perm.
 * Returns 0, -1 if the matrix is singular, -2 on bad arguments. Callable from inside
 * an SPMD section (each caller starts a nested run). */
int bsplu(unsigned P, unsigned M, unsigned N, size_t n, double *a, size_t *perm);

/* SPMD-level routine, for callers that are already inside an SPMD section
 * with bsp_nprocs() == M*N: every process calls it. Process s + t*M holds the
 * rows i with i % M == s and the columns j with j % N == t, as a row-major
 * nloc(n,M,s) x nloc(n,N,t) array `local` (local (li,lj) = global
 * (li*M+s, lj*N+t)). perm (length n) is output on every process. Returns 0
 * or -1 (singular) on every process. Pushes and pops its own registrations
 * (the caller's stay valid) and sends no BSMP messages; its bsp_syncs (2 per
 * column, plus 2) discard messages the caller left unread. */
int bsplu_spmd(unsigned M, unsigned N, size_t n, double *local, size_t *perm);

#ifdef __cplusplus
}
#endif

#endif
