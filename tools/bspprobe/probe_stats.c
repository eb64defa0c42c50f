/*
 * bspprobe's timing-free half (probe_model.h): Random numbers and statistics: the bootstrap's generator, trimmed means,
 * medians and the affine least-squares fit.
 */
#define _GNU_SOURCE
#include "probe_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Random numbers                                                       */
/* ------------------------------------------------------------------ */

uint64_t pm_rng_next(struct pm_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double pm_rng_unit(struct pm_rng *r)
{
    return (double)(pm_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t pm_mix(uint64_t a, uint64_t b)
{
    struct pm_rng r = { a ^ (b * 0xff51afd7ed558ccdull) };
    return pm_rng_next(&r);
}

size_t pm_rng_below(struct pm_rng *r, size_t n)
{
    return n ? (size_t)(pm_rng_next(r) % n) : 0;
}

/* ------------------------------------------------------------------ */
/* Statistics and fits                                                  */
/* ------------------------------------------------------------------ */

int pm_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* trimmed mean of x[0..n) sorted in place */
double pm_trimmed_sorted(double *x, size_t n, double trim)
{
    if (n == 0) return NAN;
    qsort(x, n, sizeof *x, pm_cmp_double);
    size_t k = (size_t)(trim * (double)n + 0.5);
    if (2 * k >= n) k = (n - 1) / 2;
    double s = 0;
    for (size_t i = k; i < n - k; ++i) s += x[i];
    return s / (double)(n - 2 * k);
}

double pm_trimmed_mean(const double *x, size_t n, double trim)
{
    if (n == 0) return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, x, n * sizeof *c);
    double m = pm_trimmed_sorted(c, n, trim);
    free(c);
    return m;
}

double pm_median(const double *x, size_t n)
{
    if (n == 0) return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, x, n * sizeof *c);
    qsort(c, n, sizeof *c, pm_cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

int pm_fit_affine(const double *h, const double *t, const double *w, size_t n,
        struct pm_fit *out)
{
    out->g = out->l = out->r2 = NAN;
    out->n = n;
    double S = 0, Sx = 0, Sy = 0;
    for (size_t i = 0; i < n; ++i) {
        double wi = w ? w[i] : 1.0;
        S += wi;
        Sx += wi * h[i];
        Sy += wi * t[i];
    }
    if (!(S > 0)) return -1;
    double hm = Sx / S, tm = Sy / S, Sxx = 0, Sxy = 0, Syy = 0;
    for (size_t i = 0; i < n; ++i) {
        double wi = w ? w[i] : 1.0, dx = h[i] - hm, dy = t[i] - tm;
        Sxx += wi * dx * dx;
        Sxy += wi * dx * dy;
        Syy += wi * dy * dy;
    }
    if (!(Sxx > 0)) return -1;
    out->g = Sxy / Sxx;
    out->l = tm - out->g * hm;
    double res = 0;
    for (size_t i = 0; i < n; ++i) {
        double wi = w ? w[i] : 1.0, e = t[i] - out->g * h[i] - out->l;
        res += wi * e * e;
    }
    out->r2 = Syy > 0 ? 1.0 - res / Syy : 1.0;
    return 0;
}

void pm_lpf_estimate(double T0, double Tp, double T2p, double Tn, double p,
        double nmax, double *g, double *l)
{
    *g = nmax > 2 * p ? (Tn - T2p) / (nmax - 2 * p) : NAN;
    double a = 2 * Tp - T2p;
    *l = a > T0 ? a : T0;
}
