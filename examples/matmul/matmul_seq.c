/* Sequential matrix multiplication: the blocked loop and the reference. */
#define _POSIX_C_SOURCE 200809L
#include "matmul.h"

#include <math.h>
#include <string.h>

#include "app_util.h"

#define MM_TK 128
#define MM_TJ 512

void mm_gemm_add(size_t m, size_t n, size_t kk, const double *restrict a, size_t lda,
                 const double *restrict b, size_t ldb, double *restrict c, size_t ldc)
{
    for (size_t k0 = 0; k0 < kk; k0 += MM_TK) {
        const size_t ke = k0 + MM_TK < kk ? k0 + MM_TK : kk;
        for (size_t jj = 0; jj < n; jj += MM_TJ) {
            const size_t je = jj + MM_TJ < n ? jj + MM_TJ : n;
            for (size_t i = 0; i < m; i++) {
                double *restrict ci = c + i * ldc;
                const double *ai = a + i * lda;
                for (size_t k = k0; k < ke; k++) {
                    const double aik = ai[k];
                    const double *restrict bk = b + k * ldb;
                    for (size_t j = jj; j < je; j++)
                        ci[j] += aik * bk[j];
                }
            }
        }
    }
}

void mm_block_add(size_t n, const double *a, const double *b, double *c)
{
    mm_gemm_add(n, n, n, a, n, b, n, c, n);
}

void mm_blocked(size_t n, const double *A, const double *B, double *C)
{
    memset(C, 0, n * n * sizeof *C);
    mm_block_add(n, A, B, C);
}

void mm_naive(size_t n, const double *A, const double *B, double *C)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0.0;
            for (size_t k = 0; k < n; k++)
                s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}

double mm_entry(uint64_t seed, size_t n, size_t i, size_t j)
{
    uint64_t s = seed + (uint64_t)(i * n + j) * 0x9e3779b97f4a7c15ull;
    return 2.0 * app_rand01(&s) - 1.0;
}

void mm_random_matrix(size_t n, uint64_t seed, double *A)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            A[i * n + j] = mm_entry(seed, n, i, j);
}

double mm_max_rel_diff(size_t n, const double *X, const double *Y)
{
    double ymax = 1.0, d = 0.0;
    for (size_t i = 0; i < n * n; i++) {
        if (fabs(Y[i]) > ymax)
            ymax = fabs(Y[i]);
        if (fabs(X[i] - Y[i]) > d)
            d = fabs(X[i] - Y[i]);
    }
    return d / ymax;
}
