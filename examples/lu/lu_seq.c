/* Sequential LU with partial pivoting (the reference), test matrices and
 * the residual check. */
#define _POSIX_C_SOURCE 200809L
#include "lu.h"

#include <math.h>
#include <string.h>

#include "app_util.h"

int lu_seq(size_t n, double *a, size_t *perm)
{
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t k = 0; k < n; k++) {
        /* pivot search: largest |a[i][k]|, i >= k, first one on ties */
        size_t r = k;
        double best = fabs(a[k * n + k]);
        for (size_t i = k + 1; i < n; i++) {
            double v = fabs(a[i * n + k]);
            if (v > best) {
                best = v;
                r = i;
            }
        }
        if (best == 0.0)
            return -1;
        if (r != k) {
            double *rk = a + k * n, *rr = a + r * n;
            for (size_t j = 0; j < n; j++) {
                double t = rk[j];
                rk[j] = rr[j];
                rr[j] = t;
            }
            size_t t = perm[k];
            perm[k] = perm[r];
            perm[r] = t;
        }
        const double piv = a[k * n + k];
        const double *restrict uk = a + k * n;
        for (size_t i = k + 1; i < n; i++) {
            double *restrict ri = a + i * n;
            const double l = ri[k] / piv;
            ri[k] = l;
            for (size_t j = k + 1; j < n; j++)
                ri[j] -= l * uk[j];
        }
    }
    return 0;
}

double lu_matrix_entry(uint64_t seed, size_t n, size_t i, size_t j)
{
    uint64_t s = seed + (uint64_t)(i * n + j) * 0x9e3779b97f4a7c15ull;
    return app_rand01(&s) - 0.5;
}

void lu_random_matrix(size_t n, uint64_t seed, double *a)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            a[i * n + j] = lu_matrix_entry(seed, n, i, j);
}

double lu_residual(size_t n, const double *a, const double *lu, const size_t *perm)
{
    double amax = 0.0, err = 0.0;
    for (size_t i = 0; i < n * n; i++)
        if (fabs(a[i]) > amax)
            amax = fabs(a[i]);
    for (size_t i = 0; i < n; i++) {
        const double *ai = a + perm[i] * n;
        for (size_t j = 0; j < n; j++) {
            /* (L*U)[i][j] = sum_{k <= min(i,j)} L[i][k] U[k][j], L[i][i] = 1 */
            size_t kmax = i < j ? i : j;
            double s = 0.0;
            for (size_t k = 0; k < kmax; k++)
                s += lu[i * n + k] * lu[k * n + j];
            s += (i <= j) ? lu[i * n + j] : lu[i * n + j] * lu[j * n + j];
            double d = fabs(ai[j] - s);
            if (d > err)
                err = d;
        }
    }
    if (amax == 0.0)
        return err;
    return err / ((double)n * amax);
}
