/*
 * bspprobe's timing-free half (probe_model.h): The text summary.
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
/* Summary                                                              */
/* ------------------------------------------------------------------ */

/* a duration with a unit that keeps 3-4 significant digits */
const char *pm_fmt_time(char *b, size_t len, double s)
{
    if (!isfinite(s)) snprintf(b, len, "n/a");
    else if (fabs(s) < 1e-6) snprintf(b, len, "%.1f ns", s * 1e9);
    else if (fabs(s) < 1e-3) snprintf(b, len, "%.2f us", s * 1e6);
    else if (fabs(s) < 1) snprintf(b, len, "%.2f ms", s * 1e3);
    else snprintf(b, len, "%.3f s", s);
    return b;
}

const char *pm_fmt_bytes(char *b, size_t len, double x)
{
    if (!isfinite(x)) snprintf(b, len, "n/a");
    else if (x >= 1048576 && fmod(x, 1048576) == 0) snprintf(b, len, "%g MiB", x / 1048576);
    else if (x >= 1024 && fmod(x, 1024) == 0) snprintf(b, len, "%g KiB", x / 1024);
    else if (x >= 1048576) snprintf(b, len, "%.1f MiB", x / 1048576);
    else if (x >= 1024) snprintf(b, len, "%.1f KiB", x / 1024);
    else snprintf(b, len, "%g B", x);
    return b;
}

int pm_busy_warning(const struct pm_results *res)
{
    return (isfinite(res->others_cpu) && res->others_cpu > 0.10)
        || (isfinite(res->steal) && res->steal > 0.10);
}

const char *pm_pattern_verdict(const struct pm_pattern_result *R)
{
    if (!R->n_bw) return "no bandwidth-bound points";
    if (R->n_slow) return "SLOWER than the model";
    if (R->n_above) return "above the model only within noise";
    if (R->within) return R->affine ? "model holds, affine" : "model holds (within 25%)";
    if (R->n_oc && R->oc_ratio_min >= 0.75 && R->oc_ratio_max <= 1.25)
        return "holds out of cache; faster in cache (memory hierarchy)";
    return "faster than the model";
}

void pm_print_summary(FILE *f, const struct pm_results *res)
{
    char a[32], b[32], c[32], d[32], e[32], ff[32];
    fprintf(f, "bspprobe: engine %s, p = %u (%u cores), last-level cache %s, seed %llu%s, %.1f s\n",
            res->engine, res->p, res->cores, pm_fmt_bytes(a, sizeof a, (double)res->llc_bytes),
            (unsigned long long)res->cfg.seed, res->cfg.quick ? ", quick" : "", res->wall_seconds);
    fprintf(f, "  estimates are interquartile means of samples taken in random order; [lo, hi]\n"
               "  are 95%% bootstrap intervals. Times are per superstep, measured on process 0.\n");
    if (isfinite(res->others_cpu))
        fprintf(f, "  other processes used %.0f%% of the machine's CPU time during the run%s%s\n",
                100 * res->others_cpu, isfinite(res->steal) && res->steal > 0.01 ? ", the hypervisor " : "",
                isfinite(res->steal) && res->steal > 0.01 ? "stole some too" : "");
    if (res->tasks_done < res->tasks)
        fprintf(f, "  the time budget (--budget %g s) stopped the run after %zu of %zu samples\n",
                res->cfg.budget, res->tasks_done, res->tasks);
    if (pm_busy_warning(res))
        fprintf(f, "  WARNING: the machine was busy; these figures describe a loaded machine.\n"
                   "  Run again when it is idle.\n");
    if (res->cfg.parts & PM_PART_R) {
        fprintf(f, "\nr, computation rate (DAXPY, as bspbench; mean over processes)\n");
        fprintf(f, "  r = %.1f Mflop/s at n = 1024 (min %.1f, max %.1f over processes)\n",
                res->r / 1e6, res->r_min / 1e6, res->r_max / 1e6);
        fprintf(f, "  by n:");
        for (int i = 0; i < PM_R_NS; ++i) fprintf(f, " %d:%.0f", 1 << i, res->r_by_n[i] / 1e6);
        fprintf(f, " Mflop/s\n  memcpy (LPF's r):");
        for (int k = 0; k < PM_NWORDS; ++k)
            fprintf(f, " %s %.3f ns/B%s", pm_fmt_bytes(a, sizeof a, pm_word_sizes[k]),
                    res->memcpy_spb[k] * 1e9, k + 1 < PM_NWORDS ? "," : "\n");
    }
    if (isfinite(res->bsp_g.est)) {
        const struct pm_series *bs = NULL;
        for (size_t i = 0; i < res->nseries; ++i) if (res->series[i].kind == PM_BSPBENCH) bs = &res->series[i];
        double hmax = bs && bs->npts ? bs->pt[bs->npts - 1].x : 0;
        fprintf(f, "\ng and l, the bspbench way (h-relations of one-word (8 B) puts, least squares\n"
                   "  over h = p .. %.0f words)\n", hmax);
        fprintf(f, "  g = %s/word [%s, %s]  = %.4f ns/B",
                pm_fmt_time(a, sizeof a, res->bsp_g.est), pm_fmt_time(b, sizeof b, res->bsp_g.lo),
                pm_fmt_time(c, sizeof c, res->bsp_g.hi), res->bsp_g.est / 8 * 1e9);
        if (isfinite(res->r)) fprintf(f, "  = %.1f flop/word", res->bsp_g.est * res->r);
        fprintf(f, "\n  l = %s [%s, %s]", pm_fmt_time(a, sizeof a, res->bsp_l.est),
                pm_fmt_time(b, sizeof b, res->bsp_l.lo), pm_fmt_time(c, sizeof c, res->bsp_l.hi));
        if (isfinite(res->r)) fprintf(f, "  = %.0f flop", res->bsp_l.est * res->r);
        fprintf(f, "\n  R^2 = %.5f;  range h = 0 .. p: g = %s/word, l = %s\n", res->bsp_fit.r2,
                pm_fmt_time(a, sizeof a, res->bsp_fit0.g), pm_fmt_time(b, sizeof b, res->bsp_fit0.l));
    }
    if (res->nlpf) {
        fprintf(f, "\ng and l, the LPF way (total exchanges; g = (T(nmax)-T(2p))/(nmax-2p),\n"
                   "  l = max(T(0), 2T(p)-T(2p)); n_max = %s per process, at most %zu messages)\n",
                pm_fmt_bytes(a, sizeof a, res->cfg.volume), res->cfg.max_msgs);
        fprintf(f, "  %-8s %10s  %-30s %-30s %8s %10s\n", "word", "n_max", "g (ns/B) [95% CI]",
                "l [95% CI]", "g/r", "l (words)");
        for (int k = 0; k < res->nlpf; ++k) {
            const struct pm_lpf_result *L = &res->lpf[k];
            char gs[64], ls[64];
            snprintf(gs, sizeof gs, "%.4f [%.4f, %.4f]", L->g.est * 1e9, L->g.lo * 1e9, L->g.hi * 1e9);
            snprintf(ls, sizeof ls, "%s [%s, %s]", pm_fmt_time(a, sizeof a, L->l.est),
                    pm_fmt_time(b, sizeof b, L->l.lo), pm_fmt_time(c, sizeof c, L->l.hi));
            int k2 = 0;
            while (k2 < PM_NWORDS - 1 && pm_word_sizes[k2] != L->w) ++k2;
            double r = res->memcpy_spb[k2];
            fprintf(f, "  %-8s %10.0f  %-30s %-30s %8.2f %10.3g\n", pm_fmt_bytes(d, sizeof d, L->w),
                    L->nmax, gs, ls, L->g.est / r, L->l.est / (L->g.est * L->w));
        }
        fprintf(f, "  (g/r: g over memcpy's seconds per byte; l in words: l / (g w), as LPF's Table 3)\n");
    }
    if (res->cfg.parts & PM_PART_AS) {
        fprintf(f, "\nAs suite (Gerbessiotis & Lee), p = %u\n", res->p);
        for (int q = 0; q < 5; ++q)
            fprintf(f, "  Test %d  %-28s %s [%s, %s]\n", q + 1, pm_as_test_names[q],
                    pm_fmt_time(a, sizeof a, res->as_test[q].est), pm_fmt_time(b, sizeof b, res->as_test[q].lo),
                    pm_fmt_time(c, sizeof c, res->as_test[q].hi));
        const struct pm_series *te = NULL;
        for (size_t i = 0; i < res->nseries; ++i) if (res->series[i].kind == PM_AS_TE) te = &res->series[i];
        if (te) {
            fprintf(f, "  total exchange, h ints per process:  h: time (time/h)\n   ");
            for (size_t i = 0; i < te->npts; ++i)
                fprintf(f, " %.0f: %s (%s)%s", te->pt[i].x, pm_fmt_time(a, sizeof a, te->pt[i].est),
                        pm_fmt_time(b, sizeof b, te->pt[i].est / te->pt[i].x),
                        i + 1 < te->npts ? (i % 3 == 2 ? "\n   " : ",") : "\n");
        }
    }
    if (res->cfg.parts & PM_PART_PATTERNS) {
        const struct pm_series *cp = NULL;
        for (size_t i = 0; i < res->nseries; ++i) if (res->series[i].kind == PM_COPY) cp = &res->series[i];
        fprintf(f, "\nModel compliance: T(h) measured vs g(m) h + l(m) predicted from the LPF-way\n"
                   "  figures (m = smallest message of the superstep)\n");
        if (cp && cp->npts) {
            const struct pm_point *z = cp->npts && cp->pt[0].x == 0 ? &cp->pt[0] : NULL;
            fprintf(f, "  machine: memcpy of h bytes by every process at once, ns/B:");
            int col = 0;
            for (size_t i = 0; i < cp->npts; ++i) {
                const struct pm_point *pt = &cp->pt[i];
                double x = pt->x;
                if (!(x >= 65536) || fmod(log2(x), 2.0) != 0) continue;   /* 64K, 256K, 1M, ... */
                fprintf(f, "%s %s %.3f", col++ % 5 ? "," : "\n   ", pm_fmt_bytes(a, sizeof a, x),
                        (pt->est - (z ? z->est : 0)) / pt->h * 1e9);
            }
            fprintf(f, "\n  in cache (memcpy per byte < 3/4 of the largest h's) up to h = %s\n",
                    pm_fmt_bytes(a, sizeof a, res->cache_h));
        }
        const struct pm_series *te = NULL;
        for (size_t i = 0; i < res->nseries; ++i)
            if (res->series[i].kind == PM_PATTERN && res->series[i].pattern == PAT_TOTAL_EXCHANGE)
                te = &res->series[i];
        if (te && te->npts && te->pt[0].x == 0) {
            fprintf(f, "  total exchange, (T(h) - T(0))/h in ns/B:");
            int col = 0;
            for (size_t i = 1; i < te->npts; ++i) {
                const struct pm_point *pt = &te->pt[i];
                if (!(pt->x >= 65536) || fmod(log2(pt->x), 2.0) != 0) continue;
                fprintf(f, "%s %s %.3f", col++ % 5 ? "," : "\n   ", pm_fmt_bytes(a, sizeof a, pt->x),
                        (pt->est - te->pt[0].est) / pt->h * 1e9);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "  Over the bandwidth-bound points (g(m) h >= l(m)): ratio = measured/predicted,\n"
                   "  all of them and those out of cache; T/copy = measured / memcpy baseline;\n"
                   "  R^2 and fit err (largest |T/fit - 1|) of the pattern's own affine fit over h > 0\n"
                   "  (relative least squares), all points / out of cache.\n");
        fprintf(f, "  %-15s %8s %9s %9s  %-16s %-11s %-11s %-13s %s\n", "pattern", "R^2",
                "fit g", "fit l", "ratio min/med/max", "out of cache", "T/copy", "fit err all/oc", "verdict");
        for (int pat = 0; pat < PAT_COUNT; ++pat) {
            const struct pm_pattern_result *R = &res->pat[pat];
            int found = 0;
            for (size_t i = 0; i < res->nseries; ++i)
                if (res->series[i].kind == PM_PATTERN && res->series[i].pattern == pat) found = 1;
            if (!found) continue;
            char rs[40], os[32], cs[32], es[32];
            snprintf(rs, sizeof rs, "%.2f/%.2f/%.2f", R->ratio_min, R->ratio_med, R->ratio_max);
            snprintf(os, sizeof os, "%.2f..%.2f", R->oc_ratio_min, R->oc_ratio_max);
            snprintf(cs, sizeof cs, "%.2f..%.2f", R->copy_min, R->copy_max);
            snprintf(es, sizeof es, "%.0f%%/%.0f%%", 100 * R->fit_err, 100 * R->oc_fit_err);
            fprintf(f, "  %-15s %8.4f %7.4fns %9s  %-16s %-11s %-11s %-13s %s\n", pm_pattern_name(pat),
                    R->fit.r2, R->fit.g * 1e9, pm_fmt_time(e, sizeof e, R->fit.l), rs, os, cs, es,
                    pm_pattern_verdict(R));
        }
        fprintf(f, "  Bandwidth-bound from h = ");
        int first = 1;
        for (int pat = 0; pat < PAT_COUNT; ++pat)
            if (isfinite(res->pat[pat].h_bw)) {
                fprintf(f, "%s%s %s", first ? "" : ", ", pm_pattern_name(pat),
                        pm_fmt_bytes(ff, sizeof ff, res->pat[pat].h_bw));
                first = 0;
            }
        fprintf(f, "\n");
    }
    if (res->nrows) {
        fprintf(f, "\nParameters for lpf_probe (engine %s, p = %u):\n", res->engine, res->p);
        for (size_t i = 0; i < res->nrows; ++i)
            fprintf(f, "  msg >= %-8s g = %.4f ns/B  l = %s\n", pm_fmt_bytes(a, sizeof a, res->rows[i].m),
                    res->rows[i].g * 1e9, pm_fmt_time(b, sizeof b, res->rows[i].l));
    }
    struct pm_fit_check chk;
    pm_check_fits(res, &chk);
    if (chk.refuse || chk.warn) {
        fprintf(f, "\nWARNING: %s\n", chk.refuse ? "these figures are not fit to save (--save refuses them):"
                                               : "some fits are not physical:");
        for (const char *l = chk.text; *l;) {
            const char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            fprintf(f, "  %.*s\n", (int)n, l);
            l += n + (e ? 1 : 0);
        }
        pm_fit_advice(f, res);
    }
}
