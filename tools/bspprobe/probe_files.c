/*
 * bspprobe's timing-free half (probe_model.h): The gnuplot files and the parameters file lpf_probe reads.
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
/* gnuplot                                                              */
/* ------------------------------------------------------------------ */

/* the series drawn, in panel order */
static size_t plotted(const struct pm_results *res, const struct pm_series **out)
{
    size_t n = 0;
    for (int pat = 0; pat < PAT_COUNT; ++pat)
        for (size_t i = 0; i < res->nseries; ++i)
            if (res->series[i].kind == PM_PATTERN && res->series[i].pattern == pat)
                out[n++] = &res->series[i];
    for (size_t i = 0; i < res->nseries; ++i)
        if (res->series[i].kind == PM_BSPBENCH || res->series[i].kind == PM_LPF
                || res->series[i].kind == PM_AS_TE)
            out[n++] = &res->series[i];
    return n;
}

static void plot_body(FILE *g, const struct pm_results *res, const struct pm_series **ser, size_t ns,
        long copy_index)
{
    int cols = ns <= 4 ? (int)ns : ns <= 9 ? 3 : 4;
    int rows = (int)((ns + (size_t)cols - 1) / (size_t)cols);
    fprintf(g, "set multiplot layout %d,%d title \"bspprobe: T(h) per superstep, engine %s, p = %u\\n"
               "points: measured with 95%% CI; red: the pattern's own affine fit; green dashed: g(m) h + l(m) "
               "from the LPF-way figures; grey: memcpy baseline;\\ndotted: latency-bound | bandwidth-bound "
               "(h = l/g); orange dash-dot: where the data leave the cache\" font ',11'\n",
            rows, cols, res->engine, res->p);
    for (size_t k = 0; k < ns; ++k) {
        const struct pm_series *se = ser[k];
        double gfit = NAN, lfit = NAN, hbw = NAN;
        char title[160];
        if (se->kind == PM_PATTERN) {
            const struct pm_pattern_result *R = &res->pat[se->pattern];
            gfit = R->fit.g;
            lfit = R->fit.l;
            hbw = R->h_bw;
            snprintf(title, sizeof title, "%s: R^2 %.4f, T/model %.2f..%.2f", se->name,
                    R->fit.r2, R->ratio_min, R->ratio_max);
        } else if (se->kind == PM_LPF) {
            int q = 0;
            while (q < res->nlpf - 1 && res->lpf[q].w != se->w) ++q;
            gfit = res->lpf[q].g.est;
            lfit = res->lpf[q].l.est;
            if (gfit > 0) hbw = lfit / gfit;
            char wb[32];
            snprintf(title, sizeof title, "LPF way, total exchange, %s words", pm_fmt_bytes(wb, sizeof wb, se->w));
        } else if (se->kind == PM_BSPBENCH) {
            gfit = res->bsp_g.est / 8;
            lfit = res->bsp_l.est;
            if (gfit > 0) hbw = lfit / gfit;
            snprintf(title, sizeof title, "bspbench way, one-word puts (R^2 %.4f)", res->bsp_fit.r2);
        } else {
            snprintf(title, sizeof title, "As suite total exchange (ints)");
        }
        fprintf(g, "set title \"%s\"\n", title);
        fprintf(g, "unset arrow\n");
        /* bspbench plots its linear range of h linearly; the rest spans decades */
        if (se->kind == PM_BSPBENCH) fprintf(g, "unset logscale\nset format y '%%.1s%%cs'\n");
        else fprintf(g, "set logscale xy\nset format y '%%.0s%%cs'\n");
        if (isfinite(hbw) && hbw > 0)
            fprintf(g, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead dt 3 lc rgb '#888888'\n", hbw, hbw);
        if (se->kind == PM_PATTERN && res->cache_h > 0)
            fprintf(g, "set arrow from %.6g, graph 0 to %.6g, graph 1 nohead dt 4 lc rgb '#ff7f0e'\n",
                    res->cache_h, res->cache_h);
        fprintf(g, "plot 'probe.dat' index %zu using 1:2:3:4 with yerrorbars pt 7 ps 0.5 lc rgb '#1f77b4' notitle",
                k);
        if (isfinite(gfit) && isfinite(lfit))
            fprintf(g, ", %.9g*x + %.9g lw 1.5 lc rgb '#d62728' notitle", gfit, lfit);
        if (se->kind == PM_PATTERN) {
            fprintf(g, ", 'probe.dat' index %zu using 1:5 with lines dt 2 lc rgb '#2ca02c' notitle", k);
            if (copy_index >= 0)
                fprintf(g, ", 'probe.dat' index %ld using 1:2 with lines lc rgb '#aaaaaa' notitle", copy_index);
        }
        fprintf(g, "\n");
    }
    fprintf(g, "unset multiplot\n");
}

int pm_write_plot_files(const char *dir, const struct pm_results *res)
{
    char path[4200];
    const struct pm_series *ser[64];
    size_t ns = plotted(res, ser);
    if (ns == 0) return 0;
    snprintf(path, sizeof path, "%s/probe.dat", dir);
    FILE *d = fopen(path, "w");
    if (!d) return -1;
    fprintf(d, "# bspprobe data: one block per panel; columns h_bytes t lo hi predicted\n");
    for (size_t k = 0; k < ns; ++k) {
        fprintf(d, "# %s\n", ser[k]->name);
        int any = 0;
        for (size_t i = 0; i < ser[k]->npts; ++i) {
            const struct pm_point *pt = &ser[k]->pt[i];
            if (!(pt->h > 0) || !(pt->est > 0)) continue;
            fprintf(d, "%.9g %.9g %.9g %.9g %.9g\n", pt->h, pt->est, pt->lo, pt->hi,
                    isfinite(pt->pred) ? pt->pred : pt->est);
            any = 1;
        }
        if (!any) fprintf(d, "1 NaN NaN NaN NaN\n");
        fprintf(d, "\n\n");
    }
    /* the copy baseline, drawn in the pattern panels */
    long copy_index = -1;
    for (size_t i = 0; i < res->nseries; ++i) {
        const struct pm_series *se = &res->series[i];
        if (se->kind != PM_COPY) continue;
        fprintf(d, "# %s\n", se->name);
        int any = 0;
        for (size_t q = 0; q < se->npts; ++q)
            if (se->pt[q].h > 0 && se->pt[q].est > 0) {
                fprintf(d, "%.9g %.9g %.9g %.9g %.9g\n", se->pt[q].h, se->pt[q].est, se->pt[q].lo,
                        se->pt[q].hi, se->pt[q].est);
                any = 1;
            }
        if (!any) fprintf(d, "1 NaN NaN NaN NaN\n");
        fprintf(d, "\n\n");
        copy_index = (long)ns;
        break;
    }
    if (fclose(d)) return -1;

    snprintf(path, sizeof path, "%s/probe.gp", dir);
    FILE *g = fopen(path, "w");
    if (!g) return -1;
    int cols = ns <= 4 ? (int)ns : ns <= 9 ? 3 : 4;
    int rows = (int)((ns + (size_t)cols - 1) / (size_t)cols);
    fprintf(g, "# bspprobe plot: run 'gnuplot probe.gp' in this directory\n");
    fprintf(g, "set logscale xy\nset format x '%%.0s%%cB'\nset format y '%%.0s%%cs'\n");
    fprintf(g, "set xlabel 'h (bytes per process)' offset 0,0.5\nset ylabel 'T (s)' offset 1,0\n");
    fprintf(g, "set grid lc rgb '#dddddd'\nset tics font ',8'\nset title font ',9'\n");
    fprintf(g, "set terminal svg size %d,%d dynamic font 'sans,9' background '#ffffff'\n",
            420 * cols, 330 * rows);
    fprintf(g, "set output 'probe.svg'\n");
    plot_body(g, res, ser, ns, copy_index);
    fprintf(g, "set terminal pngcairo size %d,%d font 'sans,9'\nset output 'probe.png'\n",
            420 * cols, 330 * rows);
    plot_body(g, res, ser, ns, copy_index);
    fprintf(g, "set output\n");
    if (fclose(g)) return -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Parameters file                                                      */
/* ------------------------------------------------------------------ */

int pm_default_params_path(char *buf, size_t len)
{
    return sstep_param_path(buf, len) ? 0 : -1;
}

long pm_load_params(const char *path, struct sstep_param_row *rows, size_t cap)
{
    char why[256], line[SSTEP_PARAM_LINE_MAX];
    size_t len = 0, pos = 0, n = 0;
    int eno;
    char *buf = sstep_param_slurp(path, &len, &eno, why, sizeof why);
    if (!buf) return -1;
    while (sstep_param_line(buf, len, &pos, line))
        if (n < cap && sstep_param_parse(line, &rows[n])) ++n;
    free(buf);
    return (long)sstep_param_normalize(rows, n);
}

int pm_mkdirs(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) && errno != EEXIST) return -1;
    return 0;
}

int pm_save_params(const char *path, const struct sstep_param_row *rows, size_t n,
        const char *comment, char *err, size_t errlen)
{
    /* every row must be one that lpf_probe accepts */
    for (size_t i = 0; i < n; ++i) {
        char line[SSTEP_PARAM_LINE_MAX], why[256];
        struct sstep_param_row r;
        snprintf(line, sizeof line, "%s %u %.17g %.17g %.17g\n", rows[i].engine, rows[i].p,
                rows[i].m, rows[i].g, rows[i].l);
        if (sstep_param_check(line, &r, why, sizeof why) != 1)
            return pm_errf(err, errlen, "not saved to %s: the row for p = %u, %.0f-byte messages "
                    "would be rejected by lpf_probe: %s", path, rows[i].p, rows[i].m, why);
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (pm_mkdirs(dir)) return pm_errf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
    }
    /* keep the other rows (other engines, other p) as they were written */
    char *kept = NULL;
    size_t klen = 0;
    struct stat ost;
    if (stat(path, &ost) == 0 && !S_ISREG(ost.st_mode))
        return pm_errf(err, errlen, "not saved to %s: not a regular file", path);
    char why[256], *obuf = NULL;
    size_t olen = 0, opos = 0;
    int eno = 0;
    obuf = sstep_param_slurp(path, &olen, &eno, why, sizeof why);
    if (!obuf && eno != ENOENT)
        return pm_errf(err, errlen, "not saved to %s: %s", path, why);
    if (obuf) {
        FILE *mem = open_memstream(&kept, &klen);
        if (!mem) { free(obuf); return pm_errf(err, errlen, "out of memory"); }
        char line[SSTEP_PARAM_LINE_MAX];
        while (sstep_param_line(obuf, olen, &opos, line)) {
            struct sstep_param_row r;
            if (!sstep_param_parse(line, &r)) continue;
            int replaced = 0;
            for (size_t i = 0; i < n; ++i)
                if (!strcmp(r.engine, rows[i].engine) && r.p == rows[i].p) replaced = 1;
            if (!replaced) fputs(line, mem);
            if (!replaced && line[strlen(line) - 1] != '\n') fputc('\n', mem);
        }
        free(obuf);
        fclose(mem);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) { free(kept); return pm_errf(err, errlen, "cannot write %s: %s", tmp, strerror(errno)); }
    fprintf(f, "# Superstep machine parameters, read by lpf_probe (src/core/machine.c).\n"
               "# engine p msg_size g_seconds_per_byte l_seconds\n");
    if (comment && *comment) fprintf(f, "# %s\n", comment);
    if (kept) fputs(kept, f);
    free(kept);
    for (size_t i = 0; i < n; ++i)
        fprintf(f, "%s %u %.17g %.17g %.17g\n", rows[i].engine, rows[i].p, rows[i].m,
                rows[i].g, rows[i].l);
    if (fclose(f)) { unlink(tmp); return pm_errf(err, errlen, "cannot write %s", tmp); }
    if (rename(tmp, path)) {
        unlink(tmp);
        return pm_errf(err, errlen, "cannot replace %s: %s", path, strerror(errno));
    }
    return 0;
}
