/*
 * bspprobe's timing-free half (probe_model.h): probe.json.
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
/* JSON                                                                 */
/* ------------------------------------------------------------------ */

struct js { FILE *f; int depth; int first[32]; };

static void js_sep(struct js *j, const char *key)
{
    if (j->depth > 0) {
        if (!j->first[j->depth]) fputc(',', j->f);
        j->first[j->depth] = 0;
        fprintf(j->f, "\n%*s", 2 * j->depth, "");
    }
    if (key) fprintf(j->f, "\"%s\": ", key);
}

static void js_open(struct js *j, const char *key, char c)
{
    js_sep(j, key);
    fputc(c, j->f);
    j->first[++j->depth] = 1;
}

static void js_close(struct js *j, char c)
{
    int empty = j->first[j->depth];
    --j->depth;
    if (!empty) fprintf(j->f, "\n%*s", 2 * j->depth, "");
    fputc(c, j->f);
}

static void js_num(struct js *j, const char *key, double v)
{
    js_sep(j, key);
    if (isfinite(v)) fprintf(j->f, "%.9g", v);
    else fputs("null", j->f);
}

static void js_int(struct js *j, const char *key, long long v)
{
    js_sep(j, key);
    fprintf(j->f, "%lld", v);
}

static void js_bool(struct js *j, const char *key, int v)
{
    js_sep(j, key);
    fputs(v ? "true" : "false", j->f);
}

static void js_str(struct js *j, const char *key, const char *s)
{
    js_sep(j, key);
    fputc('"', j->f);
    for (; *s; ++s) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(j->f, "\\%c", ch);
        else if (ch < 0x20) fprintf(j->f, "\\u%04x", ch);
        else fputc(ch, j->f);
    }
    fputc('"', j->f);
}

static void js_ci(struct js *j, const char *key, struct pm_ci c)
{
    js_open(j, key, '{');
    js_num(j, "value", c.est);
    js_num(j, "lo", c.lo);
    js_num(j, "hi", c.hi);
    js_close(j, '}');
}

static void js_fit(struct js *j, const char *key, const struct pm_fit *fit)
{
    js_open(j, key, '{');
    js_num(j, "g", fit->g);
    js_num(j, "l", fit->l);
    js_num(j, "r2", fit->r2);
    js_int(j, "points", (long long)fit->n);
    js_close(j, '}');
}

static void js_points(struct js *j, const struct pm_series *se, int with_pred)
{
    js_open(j, "points", '[');
    for (size_t i = 0; i < se->npts; ++i) {
        const struct pm_point *pt = &se->pt[i];
        js_open(j, NULL, '{');
        js_num(j, "x", pt->x);
        js_num(j, "h_bytes", pt->h);
        js_num(j, "min_msg_bytes", pt->msg);
        js_num(j, "msgs", pt->msgs);
        js_int(j, "reps", pt->reps);
        js_int(j, "samples", (long long)pt->n);
        js_num(j, "t", pt->est);
        js_num(j, "lo", pt->lo);
        js_num(j, "hi", pt->hi);
        if (with_pred) {
            js_num(j, "predicted", pt->pred);
            js_num(j, "ratio", pt->est / pt->pred);
        }
        js_open(j, "raw", '[');
        for (size_t k = 0; k < pt->n; ++k) js_num(j, NULL, pt->t[k]);
        js_close(j, ']');
        js_close(j, '}');
    }
    js_close(j, ']');
}

void pm_write_json(FILE *f, const struct pm_results *res)
{
    struct js j = { f, 0, { 0 } };
    js_open(&j, NULL, '{');
    js_str(&j, "tool", "bspprobe");
    js_int(&j, "format", 1);
    js_str(&j, "engine", res->engine);
    js_int(&j, "p", res->p);
    js_int(&j, "cores", res->cores);
    js_num(&j, "llc_bytes", (double)res->llc_bytes);
    js_bool(&j, "quick", res->cfg.quick);
    js_num(&j, "seed", (double)res->cfg.seed);
    js_num(&j, "wall_seconds", res->wall_seconds);
    js_int(&j, "samples_planned", (long long)res->tasks);
    js_int(&j, "samples_taken", (long long)res->tasks_done);
    js_num(&j, "others_cpu_share", res->others_cpu);
    js_num(&j, "steal_share", res->steal);
    js_bool(&j, "busy_warning", pm_busy_warning(res));
    js_bool(&j, "failed", res->failed);
    js_str(&j, "units", "seconds, bytes; g in seconds per byte unless named otherwise");

    if (res->cfg.parts & PM_PART_R) {
        js_open(&j, "r", '{');
        js_num(&j, "daxpy_flops", res->r);
        js_num(&j, "daxpy_flops_min", res->r_min);
        js_num(&j, "daxpy_flops_max", res->r_max);
        js_open(&j, "daxpy_by_n", '[');
        for (int i = 0; i < PM_R_NS; ++i) {
            js_open(&j, NULL, '{');
            js_int(&j, "n", 1 << i);
            js_num(&j, "flops", res->r_by_n[i]);
            js_close(&j, '}');
        }
        js_close(&j, ']');
        js_open(&j, "memcpy_seconds_per_byte", '[');
        for (int k = 0; k < PM_NWORDS; ++k) {
            js_open(&j, NULL, '{');
            js_num(&j, "word_bytes", pm_word_sizes[k]);
            js_num(&j, "seconds_per_byte", res->memcpy_spb[k]);
            js_close(&j, '}');
        }
        js_close(&j, ']');
        js_close(&j, '}');
    }

    for (size_t i = 0; i < res->nseries; ++i) {
        const struct pm_series *se = &res->series[i];
        if (se->kind != PM_BSPBENCH) continue;
        js_open(&j, "bspbench", '{');
        js_num(&j, "word_bytes", 8);
        js_ci(&j, "g_seconds_per_word", res->bsp_g);
        js_num(&j, "g_seconds_per_byte", res->bsp_g.est / 8);
        js_ci(&j, "l_seconds", res->bsp_l);
        js_num(&j, "g_flops_per_word", res->bsp_g.est * res->r);
        js_num(&j, "l_flops", res->bsp_l.est * res->r);
        js_fit(&j, "fit_p_to_hmax", &res->bsp_fit);
        js_fit(&j, "fit_0_to_p", &res->bsp_fit0);
        js_points(&j, se, 0);
        js_close(&j, '}');
    }

    if (res->nlpf) {
        js_open(&j, "lpf", '[');
        for (int k = 0; k < res->nlpf; ++k) {
            const struct pm_lpf_result *L = &res->lpf[k];
            js_open(&j, NULL, '{');
            js_num(&j, "word_bytes", L->w);
            js_num(&j, "nmax_words", L->nmax);
            js_ci(&j, "g_seconds_per_byte", L->g);
            js_ci(&j, "l_seconds", L->l);
            js_fit(&j, "least_squares_h_ge_2p", &L->slope);
            for (size_t i = 0; i < res->nseries; ++i)
                if (res->series[i].kind == PM_LPF && res->series[i].w == L->w)
                    js_points(&j, &res->series[i], 0);
            js_close(&j, '}');
        }
        js_close(&j, ']');
    }

    if (res->cfg.parts & PM_PART_AS) {
        js_open(&j, "as_suite", '{');
        js_open(&j, "tests", '[');
        for (int q = 0; q < 5; ++q) {
            js_open(&j, NULL, '{');
            js_int(&j, "test", q + 1);
            js_str(&j, "name", pm_as_test_names[q]);
            js_ci(&j, "seconds", res->as_test[q]);
            js_close(&j, '}');
        }
        js_close(&j, ']');
        for (size_t i = 0; i < res->nseries; ++i) {
            const struct pm_series *se = &res->series[i];
            if (se->kind != PM_AS_TE) continue;
            js_open(&j, "total_exchange", '[');
            for (size_t q = 0; q < se->npts; ++q) {
                js_open(&j, NULL, '{');
                js_num(&j, "h_ints", se->pt[q].x);
                js_num(&j, "seconds", se->pt[q].est);
                js_num(&j, "lo", se->pt[q].lo);
                js_num(&j, "hi", se->pt[q].hi);
                js_num(&j, "seconds_per_int", se->pt[q].est / se->pt[q].x);
                js_close(&j, '}');
            }
            js_close(&j, ']');
        }
        js_close(&j, '}');
    }

    if (res->cfg.parts & PM_PART_PATTERNS) {
        for (size_t i = 0; i < res->nseries; ++i) {
            const struct pm_series *se = &res->series[i];
            if (se->kind != PM_COPY) continue;
            js_open(&j, "copy_baseline", '{');
            js_str(&j, "description", "every process memcpy's h bytes locally, then an empty sync");
            js_num(&j, "in_cache_up_to_bytes", res->cache_h);
            js_points(&j, se, 0);
            js_close(&j, '}');
        }
        js_open(&j, "compliance", '[');
        for (size_t i = 0; i < res->nseries; ++i) {
            const struct pm_series *se = &res->series[i];
            if (se->kind != PM_PATTERN) continue;
            const struct pm_pattern_result *R = &res->pat[se->pattern];
            js_open(&j, NULL, '{');
            js_str(&j, "pattern", se->name);
            js_str(&j, "description", pm_pattern_text(se->pattern));
            js_fit(&j, "fit", &R->fit);
            js_num(&j, "bandwidth_bound_from_bytes", R->h_bw);
            js_int(&j, "bandwidth_bound_points", (long long)R->n_bw);
            js_open(&j, "ratio", '{');
            js_num(&j, "min", R->ratio_min);
            js_num(&j, "median", R->ratio_med);
            js_num(&j, "max", R->ratio_max);
            js_close(&j, '}');
            js_num(&j, "fit_max_rel_error", R->fit_err);
            js_bool(&j, "affine", R->affine);
            js_bool(&j, "within_25_percent", R->within);
            js_int(&j, "points_above_model", (long long)R->n_above);
            js_int(&j, "points_significantly_above_model", (long long)R->n_slow);
            js_open(&j, "out_of_cache", '{');
            js_int(&j, "points", (long long)R->n_oc);
            js_num(&j, "ratio_min", R->oc_ratio_min);
            js_num(&j, "ratio_max", R->oc_ratio_max);
            js_fit(&j, "fit", &R->oc_fit);
            js_num(&j, "fit_max_rel_error", R->oc_fit_err);
            js_close(&j, '}');
            js_open(&j, "vs_copy_baseline", '{');
            js_num(&j, "min", R->copy_min);
            js_num(&j, "max", R->copy_max);
            js_close(&j, '}');
            js_str(&j, "verdict", pm_pattern_verdict(R));
            js_points(&j, se, 1);
            js_close(&j, '}');
        }
        js_close(&j, ']');
    }

    js_open(&j, "params_rows", '[');
    for (size_t i = 0; i < res->nrows; ++i) {
        js_open(&j, NULL, '{');
        js_str(&j, "engine", res->rows[i].engine);
        js_int(&j, "p", res->rows[i].p);
        js_num(&j, "msg_size", res->rows[i].m);
        js_num(&j, "g", res->rows[i].g);
        js_num(&j, "l", res->rows[i].l);
        js_close(&j, '}');
    }
    js_close(&j, ']');
    js_close(&j, '}');
    fputc('\n', f);
}
