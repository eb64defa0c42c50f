/*
 * The superstep profiler (prof.h): the HTML report with inline SVG.
 */
#define _GNU_SOURCE
#include "prof_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* HTML report with inline SVG                                          */
/* ------------------------------------------------------------------ */

#define W_SVG 960
#define H_SVG 260
#define ML 70   /* margins */
#define MR 20
#define MT 20
#define MB 40

static void html_esc(FILE *f, const char *s)
{
    for (; *s; ++s) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* a "nice" upper bound for an axis */
static double nice_max(double v)
{
    if (!(v > 0)) return 1;
    double e = pow(10, floor(log10(v)));
    double m = v / e;
    double n = m <= 1 ? 1 : m <= 1.5 ? 1.5 : m <= 2 ? 2 : m <= 3 ? 3 : m <= 5 ? 5 : m <= 7.5 ? 7.5 : 10;
    return n * e;
}

static void y_axis(FILE *f, double ymax, const char *unit, double scale, int h)
{
    for (int i = 0; i <= 4; ++i) {
        double v = ymax * i / 4;
        double y = MT + (h - MT - MB) * (1 - (double)i / 4);
        fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>", ML, W_SVG - MR, y, y);
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%.3g%s</text>", ML - 4, y + 4,
                v * scale, unit);
    }
}

/* supersteps per bar, so that at most 480 bars are drawn */
static size_t bin_of(size_t n)
{
    size_t b = 1;
    while (n / b > 480) ++b;
    return b;
}

static void svg_time(FILE *f, const struct pf_section *S)
{
    size_t n = S->nsteps, b = bin_of(n), nb = (n + b - 1) / b;
    double ymax = 0;
    for (size_t i = 0; i < nb; ++i) {
        double t = 0, p = 0;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) {
            t += S->st[k].time;
            p += S->st[k].comp_max + S->st[k].pred_comm;
        }
        if (t > ymax) ymax = t;
        if (p > ymax) ymax = p;
    }
    ymax = nice_max(ymax);
    double sc = ymax >= 1 ? 1 : ymax >= 1e-3 ? 1e3 : 1e6;
    const char *unit = ymax >= 1 ? " s" : ymax >= 1e-3 ? " ms" : " us";
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>",
            W_SVG, H_SVG);
    y_axis(f, ymax, unit, sc, H_SVG);
    double bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1);
    double hh = H_SVG - MT - MB;
    fprintf(f, "<g>");
    for (size_t i = 0; i < nb; ++i) {
        double cm = 0, im = 0, ex = 0, t = 0;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) {
            const struct pf_sstep *x = &S->st[k];
            double e = x->time - x->comp_max;
            cm += x->comp_mean;
            im += x->comp_max - x->comp_mean;
            ex += e > 0 ? e : 0;
            t += x->time;
        }
        double x0 = ML + bw * (double)i, y = MT + hh;
        double parts[3] = { cm, im, ex };
        static const char *col[3] = { "#4caf50", "#ff9800", "#e53935" };
        for (int j = 0; j < 3; ++j) {
            double hgt = hh * parts[j] / ymax;
            if (hgt <= 0) continue;
            y -= hgt;
            fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'><title>step %zu%s: %s %.3g us</title></rect>",
                    x0, y, bw > 1.5 ? bw - 0.5 : bw, hgt, col[j], i * b, b > 1 ? "+" : "",
                    j == 0 ? "mean computation" : j == 1 ? "imbalance" : "exchange", parts[j] * 1e6);
        }
    }
    fprintf(f, "</g><polyline fill='none' stroke='#1565c0' stroke-width='1.5' points='");
    for (size_t i = 0; i < nb; ++i) {
        double p = 0;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) p += S->st[k].comp_max + S->st[k].pred_comm;
        fprintf(f, "%.2f,%.2f ", ML + bw * ((double)i + 0.5), MT + hh * (1 - p / ymax));
    }
    fprintf(f, "'/>");
    fprintf(f, "<text x='%d' y='%d' font-size='11'>superstep%s (%zu per bar)</text>", ML, H_SVG - 8,
            b > 1 ? "s" : "", b);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#4caf50'/><text x='%d' y='13' font-size='11'>mean computation</text>",
            W_SVG - 520, W_SVG - 506);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#ff9800'/><text x='%d' y='13' font-size='11'>imbalance</text>",
            W_SVG - 400, W_SVG - 386);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#e53935'/><text x='%d' y='13' font-size='11'>exchange</text>",
            W_SVG - 320, W_SVG - 306);
    fprintf(f, "<line x1='%d' x2='%d' y1='9' y2='9' stroke='#1565c0' stroke-width='2'/><text x='%d' y='13' font-size='11'>predicted: max comp + g&#183;h + l</text>",
            W_SVG - 240, W_SVG - 222, W_SVG - 216);
    fprintf(f, "</svg>\n");
}

/* bars of one value per superstep (max over a bin) */
static void svg_bars(FILE *f, const struct pf_section *S, int which, const char *color)
{
    size_t n = S->nsteps, b = bin_of(n), nb = (n + b - 1) / b;
    const int h = 200;
    double ymax = 0;
    for (size_t k = 0; k < n; ++k) {
        double v = which == 0 ? (double)S->st[k].h : S->st[k].imbalance;
        if (v > ymax) ymax = v;
    }
    /* h on a log scale (bytes from 1 to the next power of 10): the
     * h-relations of one program span many orders of magnitude */
    int decades = 0;
    if (which == 0) {
        while (pow(10, decades) < ymax + 1) ++decades;
        if (decades < 1) decades = 1;
        ymax = decades;
    } else {
        ymax = nice_max(ymax);
    }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>", W_SVG, h);
    if (which == 0) {
        for (int i = 0; i <= decades; ++i) {
            double y = MT + (h - MT - MB) * (1 - (double)i / decades);
            char lab[32];
            pf_fmt_bytes(lab, sizeof lab, pow(10, i));
            fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>", ML, W_SVG - MR, y, y);
            fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%s</text>", ML - 4, y + 4,
                    i == 0 ? "0-1 B" : lab);
        }
    } else {
        y_axis(f, ymax, "", 1, h);
    }
    double bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1), hh = h - MT - MB;
    for (size_t i = 0; i < nb; ++i) {
        double v = 0;
        size_t at = i * b;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) {
            double x = which == 0 ? (double)S->st[k].h : S->st[k].imbalance;
            if (x > v) { v = x; at = k; }
        }
        double hgt = which == 0 ? hh * log10(v + 1) / ymax : hh * v / ymax;
        fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'><title>step %zu: %.6g</title></rect>",
                ML + bw * (double)i, MT + hh - hgt, bw > 1.5 ? bw - 0.5 : bw, hgt, color, at, v);
    }
    if (which == 1 && ymax > 1) {
        double y = MT + hh * (1 - 1 / ymax);
        fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#333' stroke-dasharray='4 3'/>", ML, W_SVG - MR, y, y);
    }
    fprintf(f, "<text x='%d' y='%d' font-size='11'>superstep%s (max of %zu per bar)</text></svg>\n", ML, h - 8,
            b > 1 ? "s" : "", b);
}

/* per-process timeline: computation, waiting and exchange of each sync */
static void svg_timeline(FILE *f, const struct pf_section *S)
{
    const unsigned P = S->P;
    const int row = P <= 16 ? 22 : P <= 64 ? 8 : 3;
    const int h = MT + MB + row * (int)P;
    /* at most ~40000 rectangles: a window of supersteps around the slowest */
    size_t n = S->nsteps, lo = 0, hi = n;
    size_t cap = 40000 / (2 * (P ? P : 1));
    if (cap < 1) cap = 1;
    if (n > cap) {
        size_t idx[1];
        pf_top_steps(S, idx, 1);
        lo = idx[0] > cap / 2 ? idx[0] - cap / 2 : 0;
        hi = lo + cap < n ? lo + cap : n;
    }
    double t0 = lo ? S->st[lo].begin : S->start, t1 = hi < n ? S->st[hi - 1].end : S->end;
    if (!(t1 > t0)) t1 = t0 + 1e-9;
    double xs = (W_SVG - ML - MR) / (t1 - t0);
    fprintf(f, "<p>%s</p>", lo || hi < n ? "Only a window of supersteps around the slowest one is drawn." : "");
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>", W_SVG, h);
    for (unsigned s = 0; s < P; ++s) {
        const struct pf_part *p = S->part[s];
        double y = MT + row * (double)s;
        if (row >= 8) fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%u</text>", ML - 4, y + row * 0.7, s);
        if (!p) continue;
        fprintf(f, "<rect x='%d' y='%.1f' width='%.1f' height='%.1f' fill='#4caf50'/>", ML, y,
                (double)(W_SVG - ML - MR), row * 0.8);
        for (size_t k = lo; k < hi && k < p->nsteps; ++k) {
            const struct pf_step *t = &p->steps[k];
            double a = p->start + t->t0, b = p->start + t->t1;
            double wait = k < S->nsteps ? (b - a) - S->st[k].comm : 0;
            if (wait < 0) wait = 0;
            if (a < t0) a = t0;
            if (b > t1) b = t1;
            if (b <= a) continue;
            double xa = ML + (a - t0) * xs, xw = ML + (a + wait - t0) * xs, xb = ML + (b - t0) * xs;
            if (xw > xb) xw = xb;
            if (xw - xa >= 0.05)
                fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='#bdbdbd'><title>process %u step %zu: waiting %.3g us</title></rect>",
                        xa, y, xw - xa, row * 0.8, s, k, wait * 1e6);
            if (xb - xw >= 0.05)
                fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='#e53935'><title>process %u step %zu: exchange %.3g us</title></rect>",
                        xw, y, xb - xw, row * 0.8, s, k, (b - a - wait) * 1e6);
        }
    }
    char a[32], b[32];
    fprintf(f, "<text x='%d' y='%d' font-size='11'>time %s .. %s after the run started; green computation, grey waiting, red exchange</text>",
            ML, h - 8, pf_fmt_time(a, sizeof a, t0), pf_fmt_time(b, sizeof b, t1));
    fprintf(f, "</svg>\n");
}

static void html_section(FILE *f, const struct pf_section *S, size_t no)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "<h2 id='s%zu'>Section ", no);
    html_esc(f, S->key);
    fprintf(f, "</h2>\n<p>%u processes on the %s engine, %zu supersteps, %s; %s",
            S->P, S->ref->engine, S->nsteps, pf_fmt_time(a, sizeof a, S->total),
            S->top ? "top level" : "nested in ");
    if (!S->top) { html_esc(f, S->parent); fprintf(f, " (process %d)", S->ref->parent_pid); }
    fprintf(f, ".</p>\n");
    if (S->present < S->P) fprintf(f, "<p class='warn'>Only %u of %u parts were found.</p>", S->present, S->P);
    if (S->unequal) fprintf(f, "<p class='warn'>The processes recorded different numbers of supersteps; the first %zu are merged.</p>", S->nsteps);
    fprintf(f, "<table><tr><th>computation</th><th>communication</th><th>waiting</th><th>predicted (recorded g, l)</th><th>measured</th></tr>"
            "<tr><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td><td>%s</td><td>%s</td></tr></table>\n",
            pf_pct(S->comp, S->life), pf_pct(S->comm, S->life), pf_pct(S->wait, S->life),
            pf_fmt_time(a, sizeof a, S->pred), pf_fmt_time(b, sizeof b, S->total));
    if (!S->nsteps) return;
    fprintf(f, "<h3>Time per superstep, measured against predicted</h3>\n");
    svg_time(f, S);
    fprintf(f, "<h3>h per superstep (max bytes a process sends or receives; log scale)</h3>\n");
    svg_bars(f, S, 0, "#7e57c2");
    fprintf(f, "<h3>Load imbalance per superstep (max / mean computation; dashed: balanced)</h3>\n");
    svg_bars(f, S, 1, "#ff9800");
    fprintf(f, "<h3>Timeline per process</h3>\n");
    svg_timeline(f, S);
    size_t idx[10];
    size_t n = pf_top_steps(S, idx, 10);
    fprintf(f, "<h3>The %zu most expensive supersteps</h3>\n<table><tr><th>step</th><th>layer</th><th>time</th>"
            "<th>max computation</th><th>imbalance</th><th>exchange</th><th>h</th><th>requests</th>"
            "<th>g&#183;h + l</th><th>cause</th></tr>\n", n);
    for (size_t i = 0; i < n; ++i) {
        const struct pf_sstep *x = &S->st[idx[i]];
        double ex = x->time - x->comp_max;
        fprintf(f, "<tr><td>%zu</td><td>%s</td><td>%s</td><td>%s</td><td>%.2f</td><td>%s</td><td>%s</td>"
                "<td>%llu</td><td>%s</td><td class='c-%s'>%s</td></tr>\n", idx[i], x->layer,
                pf_fmt_time(a, sizeof a, x->time), pf_fmt_time(b, sizeof b, x->comp_max), x->imbalance,
                pf_fmt_time(c, sizeof c, ex > 0 ? ex : 0), pf_fmt_bytes(d, sizeof d, (double)x->h),
                (unsigned long long)x->reqs, pf_fmt_time(e, sizeof e, x->pred_comm), x->cause, x->cause);
    }
    fprintf(f, "</table>\n");
}

int pf_html(FILE *f, const struct pf_run *R)
{
    char a[32];
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Superstep profile ");
    html_esc(f, R->run);
    fprintf(f, "</title><style>body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}"
            "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;"
            "font-size:13px;text-align:right}th{background:#f3f3f3}.warn{color:#b71c1c}"
            "td.c-imbalance{color:#e65100}td.c-communication{color:#c62828}td.c-latency{color:#6a1b9a}"
            "pre{background:#f7f7f7;padding:.5em;font-size:12px;overflow-x:auto}</style></head><body>\n");
    fprintf(f, "<h1>Superstep profile</h1>\n<p>Run <code>");
    html_esc(f, R->run);
    fprintf(f, "</code> in <code>");
    html_esc(f, R->dir);
    char doc[4096];
    pf_doc_dir(doc, sizeof doc, 1);
    fprintf(f, "</code>: %zu section(s), %s in top-level sections. How to read this: <a href='file://",
            R->nsec, pf_fmt_time(a, sizeof a, R->total));
    html_esc(f, doc);
    fprintf(f, "/profiler.md'>");
    html_esc(f, doc);
    fprintf(f, "/profiler.md</a>.</p>\n");
    fprintf(f, "<table><tr><th>section</th><th>processes</th><th>supersteps</th><th>time</th><th>computation</th>"
            "<th>communication</th><th>waiting</th><th>predicted</th></tr>\n");
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        char b[32], c[32];
        fprintf(f, "<tr><td style='text-align:left'><a href='#s%zu'>", i);
        html_esc(f, S->key);
        fprintf(f, "</a>%s</td><td>%u</td><td>%zu</td><td>%s</td><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td><td>%s</td></tr>\n",
                S->top ? "" : " (nested)", S->P, S->nsteps, pf_fmt_time(b, sizeof b, S->total),
                pf_pct(S->comp, S->life), pf_pct(S->comm, S->life), pf_pct(S->wait, S->life),
                pf_fmt_time(c, sizeof c, S->pred));
        if (i == 199 && R->nsec > 200) {
            fprintf(f, "<tr><td colspan='8'>... %zu more</td></tr>", R->nsec - 200);
            break;
        }
    }
    fprintf(f, "</table>\n");
    /* charts for the longest sections (up to 6) */
    size_t order[6], no = 0;
    for (size_t i = 0; i < R->nsec; ++i) {
        size_t j = no < 6 ? no++ : 6;
        if (j == 6) {
            if (R->sec[i].total <= R->sec[order[5]].total) continue;
            j = 5;
        }
        while (j > 0 && R->sec[order[j - 1]].total < R->sec[i].total) { order[j] = order[j - 1]; --j; }
        order[j] = i;
    }
    for (size_t i = 0; i < no; ++i) html_section(f, &R->sec[order[i]], order[i]);
    fprintf(f, "<h2>Summary (as printed at the end of the run)</h2>\n<pre>");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m) {
        pf_summary(m, R);
        fclose(m);
        html_esc(f, buf);
        free(buf);
    }
    fprintf(f, "</pre>\n</body></html>\n");
    return ferror(f) ? -1 : 0;
}
