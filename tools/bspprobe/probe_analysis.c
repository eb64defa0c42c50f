/*
 * bspprobe's timing-free half (probe_model.h): The analysis of the samples: estimates, bootstrap intervals, the g and l
 * of each way, the per-pattern verdicts, and whether the fit may be saved.
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
/* Analysis                                                             */
/* ------------------------------------------------------------------ */

#define TRIM 0.25   /* the interquartile mean: robust to bursts of noise */

/* estimate of one resample of a point's samples (buf: room for 2 n) */
static double resample(const struct pm_point *pt, struct pm_rng *r, double *buf)
{
    double *have = buf + pt->n;   /* the samples taken (a budget may stop early) */
    size_t n = 0;
    for (size_t k = 0; k < pt->n; ++k) if (isfinite(pt->t[k])) have[n++] = pt->t[k];
    if (n == 0) return NAN;
    for (size_t k = 0; k < n; ++k) buf[k] = have[pm_rng_below(r, n)];
    return pm_trimmed_sorted(buf, n, TRIM);
}

static double point_estimate(const struct pm_point *pt, double *buf)
{
    size_t n = 0;
    for (size_t k = 0; k < pt->n; ++k) if (isfinite(pt->t[k])) buf[n++] = pt->t[k];
    return n ? pm_trimmed_sorted(buf, n, TRIM) : NAN;
}

/* 2.5% and 97.5% quantiles of v[0..n) (finite values only) */
static void interval(double *v, size_t n, double *lo, double *hi)
{
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) if (isfinite(v[i])) v[m++] = v[i];
    if (m == 0) { *lo = *hi = NAN; return; }
    qsort(v, m, sizeof *v, pm_cmp_double);
    *lo = v[(size_t)(0.025 * (double)(m - 1) + 0.5)];
    *hi = v[(size_t)(0.975 * (double)(m - 1) + 0.5)];
}

static size_t max_samples(const struct pm_results *res)
{
    size_t m = 1;
    for (size_t i = 0; i < res->nseries; ++i)
        for (size_t j = 0; j < res->series[i].npts; ++j)
            if (res->series[i].pt[j].n > m) m = res->series[i].pt[j].n;
    return m;
}

struct pm_point *pm_point_at(struct pm_series *se, double x)
{
    for (size_t i = 0; i < se->npts; ++i) if (se->pt[i].x == x) return &se->pt[i];
    return NULL;
}

/* bspbench least squares over points with lo <= x <= hi (x in words) */
static void bsp_fit(const struct pm_series *se, const double *est, double lo, double hi,
        struct pm_fit *f)
{
    double xs[512], ts[512];
    size_t n = 0;
    for (size_t i = 0; i < se->npts && n < 512; ++i) {
        if (se->pt[i].x < lo || se->pt[i].x > hi || !isfinite(est[i])) continue;
        xs[n] = se->pt[i].x;
        ts[n++] = est[i];
    }
    if (pm_fit_affine(xs, ts, NULL, n, f)) f->g = f->l = f->r2 = NAN;
}

static void lpf_points(struct pm_series *se, double p, struct pm_point **k4, double *nmax)
{
    double nm = 0;
    for (size_t i = 0; i < se->npts; ++i) if (se->pt[i].x > nm) nm = se->pt[i].x;
    k4[0] = pm_point_at(se, 0);
    k4[1] = pm_point_at(se, p);
    k4[2] = pm_point_at(se, 2 * p);
    k4[3] = pm_point_at(se, nm);
    *nmax = nm;
}

void pm_analyse(struct pm_results *res, unsigned boot)
{
    const double P = res->p;
    if (boot < 20) boot = 20;
    size_t ms = max_samples(res);
    double *buf = malloc(2 * ms * sizeof *buf);
    double *bv = malloc((size_t)boot * sizeof *bv);
    double *bv2 = malloc((size_t)boot * sizeof *bv2);
    if (!buf || !bv || !bv2) { free(buf); free(bv); free(bv2); res->failed = 1; return; }
    struct pm_rng rng = { pm_mix(res->cfg.seed, 0xb007) };

    /* every point: estimate and interval */
    for (size_t i = 0; i < res->nseries; ++i)
        for (size_t j = 0; j < res->series[i].npts; ++j) {
            struct pm_point *pt = &res->series[i].pt[j];
            pt->est = point_estimate(pt, buf);
            for (unsigned b = 0; b < boot; ++b) bv[b] = resample(pt, &rng, buf);
            interval(bv, boot, &pt->lo, &pt->hi);
        }

    res->r = res->r_by_n[PM_R_NS - 1];

    /* bspbench: least squares over h = p .. hmax words (and 0 .. p) */
    res->bsp_g = res->bsp_l = (struct pm_ci){ NAN, NAN, NAN };
    struct pm_series *bs = pm_find_series(res, PM_BSPBENCH, -1, 0);
    if (bs && bs->npts) {
        double *est = malloc(bs->npts * sizeof *est);
        if (est) {
            for (size_t i = 0; i < bs->npts; ++i) est[i] = bs->pt[i].est;
            bsp_fit(bs, est, P, INFINITY, &res->bsp_fit);
            bsp_fit(bs, est, 0, P, &res->bsp_fit0);
            for (unsigned b = 0; b < boot; ++b) {
                for (size_t i = 0; i < bs->npts; ++i) est[i] = resample(&bs->pt[i], &rng, buf);
                struct pm_fit f;
                bsp_fit(bs, est, P, INFINITY, &f);
                bv[b] = f.g;
                bv2[b] = f.l;
            }
            res->bsp_g.est = res->bsp_fit.g;
            res->bsp_l.est = res->bsp_fit.l;
            interval(bv, boot, &res->bsp_g.lo, &res->bsp_g.hi);
            interval(bv2, boot, &res->bsp_l.lo, &res->bsp_l.hi);
            free(est);
        }
    }

    /* LPF way, per word size */
    res->nlpf = 0;
    res->nrows = 0;
    for (int k = 0; k < PM_NWORDS; ++k) {
        struct pm_series *se = pm_find_series(res, PM_LPF, -1, pm_word_sizes[k]);
        if (!se) continue;
        struct pm_lpf_result *L = &res->lpf[res->nlpf++];
        memset(L, 0, sizeof *L);
        L->w = se->w;
        struct pm_point *k4[4];
        lpf_points(se, P, k4, &L->nmax);
        L->g = L->l = (struct pm_ci){ NAN, NAN, NAN };
        if (k4[0] && k4[1] && k4[2] && k4[3]) {
            double g, l;
            pm_lpf_estimate(k4[0]->est, k4[1]->est, k4[2]->est, k4[3]->est, P, L->nmax, &g, &l);
            L->g.est = g / L->w;
            L->l.est = l;
            for (unsigned b = 0; b < boot; ++b) {
                double e[4];
                for (int q = 0; q < 4; ++q) e[q] = resample(k4[q], &rng, buf);
                pm_lpf_estimate(e[0], e[1], e[2], e[3], P, L->nmax, &g, &l);
                bv[b] = g / L->w;
                bv2[b] = l;
            }
            interval(bv, boot, &L->g.lo, &L->g.hi);
            interval(bv2, boot, &L->l.lo, &L->l.hi);
        }
        /* least-squares slope over h >= 2p, in bytes */
        double hs[128], ts[128];
        size_t n = 0;
        for (size_t i = 0; i < se->npts && n < 128; ++i)
            if (se->pt[i].x >= 2 * P && isfinite(se->pt[i].est)) {
                hs[n] = se->pt[i].h;
                ts[n++] = se->pt[i].est;
            }
        if (pm_fit_affine(hs, ts, NULL, n, &L->slope)) L->slope.g = L->slope.l = L->slope.r2 = NAN;
        /* the row lpf_probe will return */
        double gs = L->g.est;
        if (!(gs > 0) || !isfinite(gs)) gs = L->slope.g;
        L->fit_factor = NAN;
        if (gs > 0 && isfinite(gs) && L->l.est > 0 && isfinite(L->l.est)) {
            struct sstep_param_row *r = &res->rows[res->nrows++];
            snprintf(r->engine, sizeof r->engine, "%s", res->engine);
            r->p = res->p;
            r->m = L->w;
            r->g = gs;
            r->l = L->l.est;
            /* how far the row misses the series' own points */
            for (size_t i = 0; i < se->npts; ++i) {
                const struct pm_point *pt = &se->pt[i];
                if (!(pt->x >= 2 * P) || !(pt->est > 0)) continue;
                double q = pt->est / (gs * pt->h + L->l.est);
                if (!(q <= L->fit_factor)) L->fit_factor = q;
            }
        }
    }

    /* As suite tests */
    struct pm_series *at = pm_find_series(res, PM_AS_TEST, -1, 0);
    for (int q = 0; q < 5; ++q) {
        struct pm_point *pt = at ? pm_point_at(at, q + 1) : NULL;
        res->as_test[q] = pt ? (struct pm_ci){ pt->est, pt->lo, pt->hi }
                             : (struct pm_ci){ NAN, NAN, NAN };
    }

    /* the memory regimes, from the copy baseline: a volume is "in cache"
     * while copying it costs less than 3/4 of the largest volume's cost per
     * byte (beyond the empty sync) */
    res->cache_h = NAN;
    struct pm_series *cp = pm_find_series(res, PM_COPY, -1, 0);
    double far_spb = NAN, copy_t0 = NAN;
    if (cp && cp->npts >= 2) {
        struct pm_point *z = pm_point_at(cp, 0), *far = &cp->pt[cp->npts - 1];
        copy_t0 = z ? z->est : 0;
        far_spb = (far->est - copy_t0) / far->h;
        /* the largest such volume (small volumes are all sync, and noisy) */
        res->cache_h = 0;
        for (size_t i = 0; i < cp->npts; ++i) {
            struct pm_point *pt = &cp->pt[i];
            if (pt->h > 0 && (pt->est - copy_t0) / pt->h < 0.75 * far_spb) res->cache_h = pt->h;
        }
    }

    /* patterns: own affine fit, prediction from the rows, verdicts */
    for (int pat = 0; pat < PAT_COUNT; ++pat) {
        struct pm_pattern_result *R = &res->pat[pat];
        memset(R, 0, sizeof *R);
        R->fit.g = R->fit.l = R->fit.r2 = NAN;
        R->oc_fit = R->fit;
        R->h_bw = R->ratio_min = R->ratio_med = R->ratio_max = R->fit_err = NAN;
        R->oc_ratio_min = R->oc_ratio_max = R->oc_fit_err = R->copy_min = R->copy_max = NAN;
        struct pm_series *se = pm_find_series(res, PM_PATTERN, pat, 0);
        if (!se || se->npts == 0) continue;
        size_t np = se->npts;
        double *hs = malloc(np * sizeof *hs), *ts = malloc(np * sizeof *ts),
               *ws = malloc(np * sizeof *ws), *ratios = malloc(np * sizeof *ratios);
        if (!hs || !ts || !ws || !ratios) { free(hs); free(ts); free(ws); free(ratios); continue; }
        /* own fit over h > 0 (h = 0 is the empty sync, which engines may do
         * in one barrier), relative least squares: every h counts alike */
        size_t n = 0;
        for (size_t i = 0; i < np; ++i) {
            struct pm_point *pt = &se->pt[i];
            if (!(pt->est > 0) || !(pt->h > 0)) continue;
            hs[n] = pt->h;
            ts[n] = pt->est;
            ws[n++] = 1.0 / (pt->est * pt->est);
        }
        pm_fit_affine(hs, ts, ws, n, &R->fit);
        /* the same over the out-of-cache points, to tell the machine's
         * memory hierarchy from the library */
        size_t noc = 0;
        for (size_t i = 0; i < np; ++i) {
            struct pm_point *pt = &se->pt[i];
            if (!(pt->est > 0) || !(pt->h > 0) || !(pt->h > res->cache_h)) continue;
            hs[noc] = pt->h;
            ts[noc] = pt->est;
            ws[noc++] = 1.0 / (pt->est * pt->est);
        }
        pm_fit_affine(hs, ts, ws, noc, &R->oc_fit);
        size_t nr = 0;
        double err = 0, oc_err = 0;
        R->h_bw = INFINITY;
        R->oc_ratio_min = R->copy_min = INFINITY;
        R->oc_ratio_max = R->copy_max = -INFINITY;
        for (size_t i = 0; i < np && res->nrows; ++i) {
            struct pm_point *pt = &se->pt[i];
            double g, l;
            sstep_param_at(res->rows, res->nrows, (size_t)pt->msg, &g, &l);
            pt->pred = g * pt->h + l;
            if (!(pt->h > 0) || g * pt->h < l || !(pt->est > 0)) continue;
            if (pt->h < R->h_bw) R->h_bw = pt->h;
            double ratio = pt->est / pt->pred;
            ratios[nr++] = ratio;
            if (ratio > 1.25) R->n_above++;
            if (pt->lo > 1.25 * pt->pred) R->n_slow++;
            double fe = fabs(pt->est / (R->fit.g * pt->h + R->fit.l) - 1.0);
            if (fe > err || !isfinite(fe)) err = fe;
            struct pm_point *c = cp ? pm_point_at(cp, pt->x) : NULL;
            if (c && c->est > 0) {
                double cr = pt->est / c->est;
                if (cr < R->copy_min) R->copy_min = cr;
                if (cr > R->copy_max) R->copy_max = cr;
            }
            if (pt->h > res->cache_h) {
                R->n_oc++;
                if (ratio < R->oc_ratio_min) R->oc_ratio_min = ratio;
                if (ratio > R->oc_ratio_max) R->oc_ratio_max = ratio;
                double oe = fabs(pt->est / (R->oc_fit.g * pt->h + R->oc_fit.l) - 1.0);
                if (oe > oc_err || !isfinite(oe)) oc_err = oe;
            }
        }
        R->n_bw = nr;
        if (!isfinite(R->copy_min)) R->copy_min = R->copy_max = NAN;
        if (R->n_oc) R->oc_fit_err = oc_err;
        else R->oc_ratio_min = R->oc_ratio_max = NAN;
        if (nr) {
            double mn = ratios[0], mx = ratios[0];
            for (size_t i = 1; i < nr; ++i) {
                if (ratios[i] < mn) mn = ratios[i];
                if (ratios[i] > mx) mx = ratios[i];
            }
            R->ratio_min = mn;
            R->ratio_max = mx;
            R->ratio_med = pm_median(ratios, nr);
            R->fit_err = err;
            R->affine = err <= 0.25;
            R->within = mn >= 0.75 && mx <= 1.25;
        } else {
            R->h_bw = NAN;
        }
        free(hs); free(ts); free(ws); free(ratios);
    }
    free(buf);
    free(bv);
    free(bv2);
}

/* ------------------------------------------------------------------ */
/* Whether the fit may be saved                                         */
/* ------------------------------------------------------------------ */

static void check_line(struct pm_fit_check *c, const char *fmt, ...)
{
    size_t n = strlen(c->text);
    if (n + 1 >= sizeof c->text) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text + n, sizeof c->text - n, fmt, ap);
    va_end(ap);
    n = strlen(c->text);
    if (n + 1 < sizeof c->text) { c->text[n] = '\n'; c->text[n + 1] = '\0'; }
}

void pm_check_fits(const struct pm_results *res, struct pm_fit_check *c)
{
    memset(c, 0, sizeof *c);
    char b[32];
    for (int k = 0; k < res->nlpf; ++k) {
        const struct pm_lpf_result *L = &res->lpf[k];
        if (!(L->g.est > 0) || !(L->l.est > 0) || !isfinite(L->g.est) || !isfinite(L->l.est)) {
            c->refuse++;
            check_line(c, "LPF way, %s words: g = %.4g ns/B, l = %.4g us: not physical "
                    "(both must be positive)", pm_fmt_bytes(b, sizeof b, L->w), L->g.est * 1e9, L->l.est * 1e6);
        } else if (!(L->g.lo > 0) || L->g.hi > PM_G_SPREAD_MAX * L->g.lo) {
            c->refuse++;
            if (!(L->g.lo > 0))
                check_line(c, "LPF way, %s words: g = %.4g ns/B is uncertain: its 95%% interval "
                        "[%.4g, %.4g] reaches zero", pm_fmt_bytes(b, sizeof b, L->w),
                        L->g.est * 1e9, L->g.lo * 1e9, L->g.hi * 1e9);
            else
                check_line(c, "LPF way, %s words: g = %.4g ns/B is uncertain: its 95%% interval "
                        "[%.4g, %.4g] spans more than a factor of %g", pm_fmt_bytes(b, sizeof b, L->w),
                        L->g.est * 1e9, L->g.lo * 1e9, L->g.hi * 1e9, PM_G_SPREAD_MAX);
        } else if (L->fit_factor > PM_FIT_FACTOR_MAX) {
            c->refuse++;
            check_line(c, "LPF way, %s words: a measured point is %.1f times g*h + l "
                    "(more than %g)", pm_fmt_bytes(b, sizeof b, L->w), L->fit_factor, PM_FIT_FACTOR_MAX);
        }
    }
    if (isfinite(res->bsp_g.est) && (res->bsp_g.est < 0 || res->bsp_l.est < 0)) {
        c->warn++;
        check_line(c, "bspbench way: g = %.4g ns/word, l = %.4g us: not physical (negative)",
                res->bsp_g.est * 1e9, res->bsp_l.est * 1e6);
    }
    for (int pat = 0; pat < PAT_COUNT; ++pat) {
        const struct pm_pattern_result *R = &res->pat[pat];
        if (!isfinite(R->fit.g) || (R->fit.g >= 0 && R->fit.l >= 0)) continue;
        c->warn++;
        check_line(c, "pattern %s: its own fit has g = %.4g ns/B, l = %.4g us: not physical "
                "(negative; fit err %.0f%%)", pm_pattern_name(pat), R->fit.g * 1e9, R->fit.l * 1e6,
                100 * R->fit_err);
    }
}

void pm_fit_advice(FILE *f, const struct pm_results *res)
{
    fprintf(f, "  For better figures: more samples (--samples, --key-samples and --budget 0%s),\n"
               "  and a quieter machine (no other programs running",
            res->cfg.quick ? ", and no --quick" : "");
    if (isfinite(res->others_cpu))
        fprintf(f, "; others used %.0f%% of the CPU time during this run", 100 * res->others_cpu);
    fprintf(f, ").\n");
}

void pm_test_bad_fit(struct pm_results *res)
{
    struct pm_series *se = pm_find_series(res, PM_LPF, -1, 8);
    if (!se || !se->npts) return;
    /* the largest volume as fast as the empty superstep: T(nmax) < T(2p) */
    const struct pm_point *z = pm_point_at(se, 0);
    double t0 = z && z->n && isfinite(z->t[0]) ? z->t[0] : 1e-6;
    struct pm_point *far = &se->pt[0];
    for (size_t i = 1; i < se->npts; ++i) if (se->pt[i].x > far->x) far = &se->pt[i];
    for (size_t k = 0; k < far->n; ++k) far->t[k] = 0.5 * t0;
}
