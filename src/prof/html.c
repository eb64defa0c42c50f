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

/* a time for an axis label: "10 ms", "2.5 us" */
static const char *axis_time(char *buf, size_t len, double t)
{
    double a = fabs(t);
    if (a >= 1) snprintf(buf, len, "%.4g s", t);
    else if (a >= 1e-3) snprintf(buf, len, "%.4g ms", t * 1e3);
    else if (a >= 1e-6) snprintf(buf, len, "%.4g us", t * 1e6);
    else snprintf(buf, len, "%.4g ns", t * 1e9);
    return buf;
}

/* a "nice" tick spacing (1, 2 or 5 times a power of 10) for at most
 * `most` ticks over `range` */
static double nice_step(double range, int most)
{
    if (!(range > 0)) return 1;
    double raw = range / most, e = pow(10, floor(log10(raw))), m = raw / e;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e;
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

/* superstep numbers under a chart of nb bars of b supersteps each (the
 * rows from S->nstart on), the bars' area ending at y */
static void x_steps(FILE *f, const struct pf_section *S, size_t b, size_t nb, double y)
{
    const size_t n0 = S->nstart, n = S->nsteps - n0;
    const double w = W_SVG - ML - MR, bw = w / (double)(nb ? nb : 1);
    size_t step = (size_t)nice_step((double)n, 12);
    if (step < 1) step = 1;
    for (size_t k = 0; k < n; k += step) {
        double x = ML + bw * ((double)(k / b) + 0.5);
        char lab[32];
        fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#555'/>"
                "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='10'>%s</text>",
                x, x, y, y + 4, x, y + 14, pf_step_label(S, n0 + k, lab, sizeof lab));
    }
    if (b > 1)
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>superstep (each bar: %zu)</text>",
                W_SVG - MR, y + 28, b);
    else
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>superstep</text>", W_SVG - MR, y + 28);
}

/* the most expensive supersteps marked above their bars, linked to their
 * row of the table */
static void mark_top(FILE *f, const struct pf_section *S, size_t no, size_t b, size_t nb,
        const double *ytop, size_t nmark)
{
    size_t idx[5];
    size_t m = pf_top_steps(S, idx, nmark < 5 ? nmark : 5);
    const double bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1);
    for (size_t i = 0; i < m; ++i) {
        size_t bar = (idx[i] - S->nstart) / b, j = 0;
        while (j < i && (idx[j] - S->nstart) / b != bar) ++j;
        if (j < i) continue;   /* a bar marked already */
        double x = ML + bw * ((double)bar + 0.5), y = ytop[bar] - 3;
        char lab[32];
        if (y < MT + 10) y = MT + 10;
        fprintf(f, "<a href='#s%zu-k%zu'><text x='%.1f' y='%.1f' text-anchor='middle' font-size='10' "
                "fill='#b71c1c'>&#9660;%s</text></a>", no, idx[i], x, y,
                pf_step_label(S, idx[i], lab, sizeof lab));
    }
}

/* Time per superstep after the start-up on a linear axis from 0: a bar's
 * height is its time, stacked from the mean computation, the imbalance
 * (max - mean computation) and the exchange (time - max computation), each
 * part as long as its value on the axis; the prediction (max computation +
 * g·h + l) is a dark tick across each bar. Bars, parts and ticks carry
 * their values in seconds (data-v) for tests. */
static void svg_time(FILE *f, const struct pf_section *S, size_t no)
{
    const size_t n0 = S->nstart, n = S->nsteps - n0, b = bin_of(n), nb = (n + b - 1) / b;
    double *tb = calloc(nb ? nb : 1, sizeof *tb), *pb = calloc(nb ? nb : 1, sizeof *pb);
    double *ytop = calloc(nb ? nb : 1, sizeof *ytop);
    if (!tb || !pb || !ytop) { free(tb); free(pb); free(ytop); return; }
    double vmax = 0;
    for (size_t i = 0; i < nb; ++i) {
        for (size_t k = n0 + i * b; k < S->nsteps && k < n0 + (i + 1) * b; ++k) {
            tb[i] += S->st[k].time;
            pb[i] += S->st[k].comp_max + S->st[k].pred_comm;
        }
        if (tb[i] > vmax) vmax = tb[i];
        if (pb[i] > vmax) vmax = pb[i];
    }
    /* ticks of a "nice" step; the axis ends at the first tick at or above
     * the tallest bar */
    const double step = nice_step(vmax > 0 ? vmax : 1e-6, 5);
    double ymax = step;
    while (ymax < vmax * (1 - 1e-12)) ymax += step;
    const double hh = H_SVG - MT - MB, bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1);
    const double px = hh / ymax;   /* pixels per second */
#define YLIN(v) (MT + hh - (v) * px)
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' "
            "class='time-chart'>", W_SVG, H_SVG);
    for (double v = 0; v <= ymax * (1 + 1e-9); v += step) {
        double y = YLIN(v);
        char lab[32];
        fprintf(f, "<line class='tick' data-v='%.9g' x1='%d' x2='%d' y1='%.3f' y2='%.3f' stroke='#ddd'/>",
                v, ML, W_SVG - MR, y, y);
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%s</text>", ML - 4, y + 4,
                axis_time(lab, sizeof lab, v < step * 1e-6 ? 0 : v));
    }
    fprintf(f, "<g>");
    for (size_t i = 0; i < nb; ++i) {
        double cm = 0, im = 0, ex = 0;
        for (size_t k = n0 + i * b; k < S->nsteps && k < n0 + (i + 1) * b; ++k) {
            const struct pf_sstep *x = &S->st[k];
            double e = x->time - x->comp_max;
            cm += x->comp_mean;
            im += x->comp_max - x->comp_mean;
            ex += e > 0 ? e : 0;
        }
        const double x0 = ML + bw * (double)i, base = MT + hh;
        const double parts[3] = { cm, im, ex };
        static const char *col[3] = { "#4caf50", "#ff9800", "#e53935" };
        static const char *cls[3] = { "comp", "imbal", "exch" };
        double y = base;
        for (int j = 0; j < 3; ++j) {
            double hgt = parts[j] * px;
            if (!(hgt > 0)) continue;
            y -= hgt;
            fprintf(f, "<rect class='%s' data-bar='%zu' data-v='%.9g' x='%.2f' y='%.3f' width='%.2f' "
                    "height='%.3f' fill='%s'/>", cls[j], i, parts[j], x0, y, bw > 1.5 ? bw - 0.5 : bw, hgt,
                    col[j]);
        }
        ytop[i] = y;
        /* one transparent rectangle per bar carries the tooltip */
        char t1[32], t2[32], t3[32], t4[32], t5[32], lab[32];
        fprintf(f, "<rect class='bar' data-bar='%zu' data-v='%.9g' x='%.2f' y='%d' width='%.2f' height='%.0f' "
                "fill-opacity='0'><title>superstep %s%s: %s (mean computation %s, imbalance %s, exchange %s; "
                "predicted %s)</title></rect>", i, tb[i], x0, MT, bw, hh,
                pf_step_label(S, n0 + i * b, lab, sizeof lab), b > 1 ? " and on" : "",
                pf_fmt_time(t1, sizeof t1, tb[i]), pf_fmt_time(t2, sizeof t2, cm),
                pf_fmt_time(t3, sizeof t3, im), pf_fmt_time(t4, sizeof t4, ex),
                pf_fmt_time(t5, sizeof t5, pb[i]));
    }
    fprintf(f, "</g><path class='pred' fill='none' stroke='#0d2b6b' stroke-width='1.2' d='");
    for (size_t i = 0; i < nb; ++i) {
        if (!(pb[i] > 0)) continue;
        double w = bw > 3 ? bw - 1 : bw;
        fprintf(f, "M%.2f %.3fh%.2f", ML + bw * (double)i, YLIN(pb[i]), w);
    }
    fprintf(f, "'/>");
#undef YLIN
    fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#555'/>", ML, W_SVG - MR, MT + hh, MT + hh);
    x_steps(f, S, b, nb, MT + hh);
    mark_top(f, S, no, b, nb, ytop, 5);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#4caf50'/><text x='%d' y='13' font-size='11'>mean computation</text>",
            W_SVG - 600, W_SVG - 586);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#ff9800'/><text x='%d' y='13' font-size='11'>imbalance</text>",
            W_SVG - 470, W_SVG - 456);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#e53935'/><text x='%d' y='13' font-size='11'>exchange</text>",
            W_SVG - 385, W_SVG - 371);
    fprintf(f, "<line x1='%d' x2='%d' y1='9' y2='9' stroke='#0d2b6b' stroke-width='1.5'/><text x='%d' y='13' font-size='11'>predicted: max comp + g&#183;h + l</text>",
            W_SVG - 300, W_SVG - 282, W_SVG - 276);
    fprintf(f, "</svg>\n");
    free(tb);
    free(pb);
    free(ytop);
}

/* Time per superstep after the start-up on a log scale, unstacked: each bar
 * reaches its time on the axis (the typical supersteps show beside a few
 * slow ones); the prediction is a dark tick. Bars and ticks carry their
 * values in seconds (data-v) for tests. */
static void svg_time_log(FILE *f, const struct pf_section *S)
{
    const size_t n0 = S->nstart, n = S->nsteps - n0, b = bin_of(n), nb = (n + b - 1) / b;
    double *tb = calloc(nb ? nb : 1, sizeof *tb), *pb = calloc(nb ? nb : 1, sizeof *pb);
    if (!tb || !pb) { free(tb); free(pb); return; }
    double ymax = 0, ymin = INFINITY;
    for (size_t i = 0; i < nb; ++i) {
        for (size_t k = n0 + i * b; k < S->nsteps && k < n0 + (i + 1) * b; ++k) {
            tb[i] += S->st[k].time;
            pb[i] += S->st[k].comp_max + S->st[k].pred_comm;
        }
        if (tb[i] > ymax) ymax = tb[i];
        if (pb[i] > ymax) ymax = pb[i];
        if (tb[i] > 0 && tb[i] < ymin) ymin = tb[i];
        if (pb[i] > 0 && pb[i] < ymin) ymin = pb[i];
    }
    if (!(ymax > 0)) ymax = 1e-6;
    if (!(ymin < ymax)) ymin = ymax / 10;
    /* whole decades, at most 7 of them; a bar below the lowest is drawn
     * at the axis (height 0) */
    double dhi = ceil(log10(ymax) - 1e-9), dlo = floor(log10(ymin));
    if (dhi - dlo > 7) dlo = dhi - 7;
    if (dhi - dlo < 1) dlo = dhi - 1;
    const double hh = H_SVG - MT - MB, bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1);
#define YLOG(v) (MT + hh * (1 - ((v) > 0 && log10(v) > dlo ? (log10(v) - dlo) / (dhi - dlo) : 0)))
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' "
            "class='time-log'>", W_SVG, H_SVG);
    for (double d = dlo; d <= dhi + 1e-9; d += 1) {
        double y = YLOG(pow(10, d));
        char lab[32];
        fprintf(f, "<line class='tick' data-v='%.9g' x1='%d' x2='%d' y1='%.3f' y2='%.3f' stroke='#ddd'/>",
                pow(10, d), ML, W_SVG - MR, y, y);
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%s</text>", ML - 4, y + 4,
                axis_time(lab, sizeof lab, pow(10, d)));
    }
    for (size_t i = 0; i < nb; ++i) {
        const double top = YLOG(tb[i]), base = MT + hh;
        char t1[32], t2[32], lab[32];
        fprintf(f, "<rect class='bar' data-bar='%zu' data-v='%.9g' x='%.2f' y='%.3f' width='%.2f' height='%.3f' "
                "fill='#78909c'><title>superstep %s%s: %s (predicted %s)</title></rect>", i, tb[i],
                ML + bw * (double)i, top, bw > 1.5 ? bw - 0.5 : bw, base - top,
                pf_step_label(S, n0 + i * b, lab, sizeof lab), b > 1 ? " and on" : "",
                pf_fmt_time(t1, sizeof t1, tb[i]), pf_fmt_time(t2, sizeof t2, pb[i]));
    }
    fprintf(f, "<path class='pred' fill='none' stroke='#0d2b6b' stroke-width='1.2' d='");
    for (size_t i = 0; i < nb; ++i) {
        if (!(pb[i] > 0)) continue;
        fprintf(f, "M%.2f %.3fh%.2f", ML + bw * (double)i, YLOG(pb[i]), bw > 3 ? bw - 1 : bw);
    }
    fprintf(f, "'/>");
#undef YLOG
    fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#555'/>", ML, W_SVG - MR, MT + hh, MT + hh);
    x_steps(f, S, b, nb, MT + hh);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#78909c'/><text x='%d' y='13' font-size='11'>time</text>",
            W_SVG - 330, W_SVG - 316);
    fprintf(f, "<line x1='%d' x2='%d' y1='9' y2='9' stroke='#0d2b6b' stroke-width='1.5'/><text x='%d' y='13' font-size='11'>predicted: max comp + g&#183;h + l</text>",
            W_SVG - 280, W_SVG - 262, W_SVG - 256);
    fprintf(f, "</svg>\n");
    free(tb);
    free(pb);
}

/* bars of one value per superstep after the start-up (max over a bin) */
static void svg_bars(FILE *f, const struct pf_section *S, int which, const char *color)
{
    const size_t n0 = S->nstart, n = S->nsteps - n0, b = bin_of(n), nb = (n + b - 1) / b;
    const int h = 200;
    double ymax = 0;
    for (size_t k = n0; k < S->nsteps; ++k) {
        double v = which == 0 ? (double)S->st[k].h : S->st[k].imbalance;
        if (v > ymax) ymax = v;
    }
    /* h on a log scale (bytes from 1 to the next power of 10): the
     * h-relations of one program span many orders of magnitude; one value
     * per bar, not stacked */
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
        size_t at = n0 + i * b;
        for (size_t k = n0 + i * b; k < S->nsteps && k < n0 + (i + 1) * b; ++k) {
            double x = which == 0 ? (double)S->st[k].h : S->st[k].imbalance;
            if (x > v) { v = x; at = k; }
        }
        double hgt = which == 0 ? hh * log10(v + 1) / ymax : hh * v / ymax;
        char lab[32];
        fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'><title>superstep %s: %.6g</title></rect>",
                ML + bw * (double)i, MT + hh - hgt, bw > 1.5 ? bw - 0.5 : bw, hgt, color,
                pf_step_label(S, at, lab, sizeof lab), v);
    }
    if (which == 1 && ymax > 1) {
        double y = MT + hh * (1 - 1 / ymax);
        fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#333' stroke-dasharray='4 3'/>", ML, W_SVG - MR, y, y);
        if (ymax > PF_IMBALANCE_MIN) {
            y = MT + hh * (1 - PF_IMBALANCE_MIN / ymax);
            fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#e65100' stroke-dasharray='2 3'/>"
                    "<text x='%d' y='%.1f' text-anchor='end' font-size='10' fill='#e65100'>%.2f: called imbalance</text>",
                    ML, W_SVG - MR, y, y, W_SVG - MR, y - 3, PF_IMBALANCE_MIN);
        }
    }
    fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#555'/>", ML, W_SVG - MR, MT + hh, MT + hh);
    x_steps(f, S, b, nb, MT + hh);
    fprintf(f, "</svg>\n");
}

/* Per-process timeline of supersteps lo .. hi-1: computation, waiting and
 * exchange of each sync, time ticks below, and with few supersteps their
 * numbers above. */
static void svg_timeline(FILE *f, const struct pf_section *S, size_t lo, size_t hi)
{
    const unsigned P = S->P;
    const int row = P <= 16 ? 22 : P <= 64 ? 8 : 3;
    const size_t n = S->nsteps;
    const int label = hi - lo <= 40;
    const int top = MT + (label ? 12 : 0);
    const int h = top + MB + row * (int)P;
    double t0 = lo ? S->st[lo].begin : S->start, t1 = hi < n ? S->st[hi - 1].end : S->end;
    if (!(t1 > t0)) t1 = t0 + 1e-9;
    double xs = (W_SVG - ML - MR) / (t1 - t0);
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>", W_SVG, h);
    for (unsigned s = 0; s < P; ++s) {
        const struct pf_part *p = S->part[s];
        double y = top + row * (double)s;
        if (row >= 8) fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%u</text>", ML - 4, y + row * 0.7, s);
        if (!p) continue;
        fprintf(f, "<rect x='%d' y='%.1f' width='%.1f' height='%.1f' fill='#4caf50'/>", ML, y,
                (double)(W_SVG - ML - MR), row * 0.8);
        for (size_t k = lo; k < hi && k < p->nsteps; ++k) {
            const struct pf_step *t = &p->steps[k];
            double a = p->start + t->t0, b = p->start + t->t1;
            double wait = k < n ? (b - a) - S->st[k].comm : 0;
            if (wait < 0) wait = 0;
            if (a < t0) a = t0;
            if (b > t1) b = t1;
            if (b <= a) continue;
            double xa = ML + (a - t0) * xs, xw = ML + (a + wait - t0) * xs, xb = ML + (b - t0) * xs;
            if (xw > xb) xw = xb;
            if (xw - xa >= 0.05)
                fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='#bdbdbd'><title>process %u superstep %zu: waiting %.3g us</title></rect>",
                        xa, y, xw - xa, row * 0.8, s, k, wait * 1e6);
            if (xb - xw >= 0.05)
                fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='#e53935'><title>process %u superstep %zu: exchange %.3g us</title></rect>",
                        xw, y, xb - xw, row * 0.8, s, k, (b - a - wait) * 1e6);
        }
    }
    /* superstep numbers at their middle (few supersteps) */
    for (size_t k = lo; label && k < hi; ++k) {
        double a = S->st[k].begin, b = S->st[k].end;
        if (a < t0) a = t0;
        if (b > t1) b = t1;
        double xm = ML + (0.5 * (a + b) - t0) * xs, xe = ML + (b - t0) * xs;
        fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#999' stroke-width='0.5'/>", xe, xe, MT,
                top + row * (int)P);
        char lab[32];
        pf_step_label(S, k, lab, sizeof lab);
        if ((b - a) * xs >= 5.0 * (double)strlen(lab) + 4)
            fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle' font-size='9'>%s</text>", xm, MT + 8, lab);
    }
    /* time ticks */
    double yb = top + row * (double)P;
    double step = nice_step(t1 - t0, 10);
    for (double t = ceil(t0 / step) * step; t <= t1 + 1e-12; t += step) {
        double x = ML + (t - t0) * xs;
        char lab[32];
        if (x > W_SVG - MR - 12) break;   /* no room for the label */
        fprintf(f, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#555'/>"
                "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='10'>%s</text>",
                x, x, yb, yb + 4, x, yb + 14, axis_time(lab, sizeof lab, fabs(t) < 1e-3 * step ? 0 : t));
    }
    char a[32], b[32], la[32], lb[32];
    fprintf(f, "<text x='%d' y='%d' font-size='11'>time after the run started (supersteps %s to %s, %s .. %s); green computation, grey waiting, red exchange</text>",
            ML, h - 6, pf_step_label(S, lo, la, sizeof la), pf_step_label(S, hi ? hi - 1 : 0, lb, sizeof lb),
            pf_fmt_time(a, sizeof a, t0), pf_fmt_time(b, sizeof b, t1));
    fprintf(f, "</svg>\n");
}

static void html_section(FILE *f, const struct pf_section *S, size_t no)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "<h2 id='s%zu'>Section ", no);
    html_esc(f, S->key);
    fprintf(f, "</h2>\n<p>%u processes on the %s engine, %zu supersteps, %s; %s",
            S->P, S->ref->engine, S->nuser, pf_fmt_time(a, sizeof a, S->total),
            S->top ? "top level" : "nested in ");
    if (!S->top) { html_esc(f, S->parent); fprintf(f, " (process %d)", S->ref->parent_pid); }
    fprintf(f, ".</p>\n");
    if (S->nstart) {
        const struct pf_step *t = &S->ref->steps[S->nstart - 1];
        char where[600] = "the library";
        if (t->site >= 0) pf_where(&S->ref->sites[t->site], where, sizeof where);
        fprintf(f, "<p class='startup'>Start-up: %s, the library's own sync%s before the program's first "
                "superstep (<code>", pf_fmt_time(a, sizeof a, S->startup), S->nstart == 1 ? "" : "s");
        html_esc(f, where);
        fprintf(f, "</code>: starting the processes, <code>bsp_begin</code>'s registrations). It is "
                "not a superstep of the program: the tables and charts below leave it out, and "
                "supersteps are numbered from the first after it, as checked mode numbers them.</p>\n");
    } else if (S->startup > 0) {
        fprintf(f, "<p class='startup'>Start-up: %s, starting the section's processes before the program's "
                "code ran. Superstep 0's computation is counted from its end; the tables and charts "
                "below leave it out.</p>\n", pf_fmt_time(a, sizeof a, S->startup));
    }
    if (S->nsteps - S->nstart > S->nuser)
        fprintf(f, "<p class='note'>%zu sync%s the layers made for themselves after the start-up "
                "(BSPlib's sync that activates registrations pushed in a superstep) %s numbered "
                "<i>N</i>+: after superstep <i>N</i>.</p>\n", S->nsteps - S->nstart - S->nuser,
                S->nsteps - S->nstart - S->nuser == 1 ? "" : "s",
                S->nsteps - S->nstart - S->nuser == 1 ? "is" : "are");
    {
        char ov[400];
        if (pf_oversubscribed(S, ov, sizeof ov)) {
            fprintf(f, "<p class='warn oversub'>Processes outnumbered the cores: ");
            html_esc(f, ov);
            fprintf(f, ". Syncs then wait for time slices (\"slow sync\"), and the times are not "
                    "those of a machine with a core per process.</p>\n");
        }
    }
    if (S->present < S->P) fprintf(f, "<p class='warn'>Only %u of %u parts were found.</p>", S->present, S->P);
    if (S->unequal) fprintf(f, "<p class='warn'>The processes recorded different numbers of supersteps; the first %zu are merged.</p>", S->nsteps);
    fprintf(f, "<table><tr><th>computation</th><th>communication</th><th>waiting</th><th>predicted (recorded g, l)</th><th>measured%s</th></tr>"
            "<tr><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td><td>%s</td><td>%s</td></tr></table>\n",
            S->startup > 0 ? " after the start-up" : "",
            pf_pct(S->comp, S->life), pf_pct(S->comm, S->life), pf_pct(S->wait, S->life),
            pf_fmt_time(a, sizeof a, S->pred), pf_fmt_time(b, sizeof b, S->total - S->startup));
    if (S->nsteps <= S->nstart) return;
    size_t idx[10];
    size_t n = pf_top_steps(S, idx, 10);
    fprintf(f, "<h3>The %zu most expensive supersteps</h3>\n<table><tr><th>superstep</th><th>ended by the sync at</th>"
            "<th>layer</th><th>time</th><th>max computation</th><th>imbalance</th><th>exchange</th><th>h</th>"
            "<th>requests</th><th>g&#183;h + l</th><th>likely cause</th></tr>\n", n);
    for (size_t i = 0; i < n; ++i) {
        const struct pf_sstep *x = &S->st[idx[i]];
        const struct pf_step *t = &S->ref->steps[idx[i]];
        const struct pf_site *site = t->site >= 0 ? &S->ref->sites[t->site] : NULL;
        double ex = x->time - x->comp_max;
        char where[600], lab[32];
        fprintf(f, "<tr id='s%zu-k%zu'><td>%s</td><td style='text-align:left'", no, idx[i],
                pf_step_label(S, idx[i], lab, sizeof lab));
        if (site) {
            fprintf(f, " title='");
            if (site->line > 0) { html_esc(f, site->file); fprintf(f, ":%d, ", site->line); }
            html_esc(f, site->func[0] && strcmp(site->func, "?") ? site->func : site->name);
            fprintf(f, "'><code>");
            html_esc(f, pf_where(site, where, sizeof where));
            fprintf(f, "</code>");
        } else {
            fprintf(f, ">?");
        }
        fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%.2f</td><td>%s</td><td>%s</td>"
                "<td>%llu</td><td>%s</td><td class='c-%s'>%s</td></tr>\n", x->layer,
                pf_fmt_time(a, sizeof a, x->time), pf_fmt_time(b, sizeof b, x->comp_max), x->imbalance,
                pf_fmt_time(c, sizeof c, ex > 0 ? ex : 0), pf_fmt_bytes(d, sizeof d, (double)x->h),
                (unsigned long long)x->reqs, pf_fmt_time(e, sizeof e, x->pred_comm), x->cause, x->cause);
    }
    fprintf(f, "</table>\n<p class='note'>Time: the longest any process spent in the superstep, from "
            "its leaving the previous sync to its leaving this one, on its own clock (so never less "
            "than max computation). Exchange: time &#8722; max computation. Imbalance: max / mean "
            "computation. Likely cause: the largest of the mean computation, the imbalance "
            "(the slowest process's excess over the mean) and the exchange split "
            "into communication (g&#183;h) and latency (l), where imbalance %.2f or more makes a "
            "computing superstep \"imbalance\"; \"slow sync\" when the exchange took over four "
            "times g&#183;h + l. The line is that of the call that ended the superstep (addr2line; "
            "compile with -g for lines).</p>\n", PF_IMBALANCE_MIN);
    {   /* the time of the supersteps each call site ended (C or Python) */
        const struct pf_part *r = S->ref;
        size_t *cnt = r && r->nsites ? calloc(r->nsites, sizeof *cnt) : NULL;
        double *tim = r && r->nsites ? calloc(r->nsites, sizeof *tim) : NULL;
        size_t sidx[PF_SITES_SHOWN + 1];
        size_t ns = cnt && tim ? pf_site_totals(S, sidx, PF_SITES_SHOWN + 1, cnt, tim) : 0;
        if (ns) {
            fprintf(f, "<h3>Supersteps by the call that ended them</h3>\n<table class='sites'><tr><th>call</th>"
                    "<th>function</th><th>supersteps</th><th>time</th><th>mean</th><th>share</th></tr>\n");
            size_t crest = 0;
            double trest = 0;
            for (unsigned i = 0; i < r->nsites; ++i) { crest += cnt[i]; trest += tim[i]; }
            for (size_t i = 0; i < ns && i < PF_SITES_SHOWN; ++i) {
                const struct pf_site *site = &r->sites[sidx[i]];
                char where[600];
                crest -= cnt[sidx[i]];
                trest -= tim[sidx[i]];
                fprintf(f, "<tr><td style='text-align:left' title='");
                html_esc(f, site->line > 0 ? site->file : site->name);
                fprintf(f, "'><code>");
                html_esc(f, pf_where(site, where, sizeof where));
                fprintf(f, "</code></td><td style='text-align:left'><code>");
                html_esc(f, site->func[0] && strcmp(site->func, "?") ? site->func : "");
                fprintf(f, "</code></td><td>%zu</td><td>%s</td><td>%s</td><td>%.1f%%</td></tr>\n", cnt[sidx[i]],
                        pf_fmt_time(a, sizeof a, tim[sidx[i]]),
                        pf_fmt_time(b, sizeof b, tim[sidx[i]] / (double)cnt[sidx[i]]),
                        pf_pct(tim[sidx[i]], S->steps_time));
            }
            if (ns > PF_SITES_SHOWN)
                fprintf(f, "<tr><td style='text-align:left'>further calls</td><td></td><td>%zu</td><td>%s</td>"
                        "<td>%s</td><td>%.1f%%</td></tr>\n", crest, pf_fmt_time(a, sizeof a, trest),
                        pf_fmt_time(b, sizeof b, crest ? trest / (double)crest : 0),
                        pf_pct(trest, S->steps_time));
            fprintf(f, "</table>\n<p class='note'>Share: of the sum of the supersteps' times (the "
                    "start-up left out).</p>\n");
        }
        free(cnt);
        free(tim);
    }
    fprintf(f, "<h3>Time per superstep, measured against predicted (linear scale from 0, each part as long "
            "as its value; &#9660; the most expensive)</h3>\n");
    svg_time(f, S, no);
    fprintf(f, "<h3>Time per superstep on a log scale (not stacked: each bar reaches its time)</h3>\n");
    svg_time_log(f, S);
    fprintf(f, "<h3>h per superstep (max bytes a process sends or receives; log scale)</h3>\n");
    svg_bars(f, S, 0, "#7e57c2");
    fprintf(f, "<h3>Load imbalance per superstep (max / mean computation; dashed: balanced)</h3>\n");
    svg_bars(f, S, 1, "#ff9800");
    /* the timeline: all of it (at most ~40000 rectangles), and zoomed in
     * around the slowest superstep */
    size_t cap = 40000 / (2 * (S->P ? S->P : 1));
    if (cap < 1) cap = 1;
    size_t slow = idx[0], lo = 0, hi = S->nsteps;
    if (hi > cap) {
        lo = slow > cap / 2 ? slow - cap / 2 : 0;
        hi = lo + cap < S->nsteps ? lo + cap : S->nsteps;
    }
    fprintf(f, "<h3>Timeline per process%s</h3>\n", lo || hi < S->nsteps ? " (a window around the slowest superstep)" : "");
    svg_timeline(f, S, lo, hi);
    if (S->nsteps - S->nstart > 24) {
        /* the first superstep is often set-up (registrations, first touch):
         * zoom in on the slowest after it */
        size_t z = S->nstart + 1;
        for (size_t k = z + 1; k < S->nsteps; ++k) if (S->st[k].time > S->st[z].time) z = k;
        size_t zlo = z > 6 ? z - 6 : 0, zhi = zlo + 13 < S->nsteps ? zlo + 13 : S->nsteps;
        char lab[32];
        fprintf(f, "<h3>Timeline around superstep %s, the slowest after the first</h3>\n",
                pf_step_label(S, z, lab, sizeof lab));
        svg_timeline(f, S, zlo, zhi);
    }
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
            "pre{background:#f7f7f7;padding:.5em;font-size:12px;overflow-x:auto}.note{font-size:12px;color:#555}"
            "tr:target{background:#fff3e0}</style></head><body>\n");
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
                S->top ? "" : " (nested)", S->P, S->nuser, pf_fmt_time(b, sizeof b, S->total),
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
