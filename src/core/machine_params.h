/*
 * The saved machine parameters (written by `bspprobe --save`) and how g and
 * l are read from them. Pure functions of their arguments: machine.c uses
 * them for lpf_probe, and the probe tool uses the very same code to predict
 * costs, so the probe's predictions are exactly what lpf_probe returns.
 *
 * File format: one row per line, "engine p msg_size g l", where g is in
 * seconds per byte and l in seconds for a superstep on p processes in which
 * every message is at least msg_size bytes. '#' starts a comment line.
 *
 * Lookup for a query (p', m) among the rows of one engine:
 *  - p: the smallest measured p >= p' (costs grow with p, so this is the
 *    conservative choice); beyond the largest measured p, the largest (the
 *    caller scales it, see machine.c).
 *  - m (m = 0 counts as 1): between two measured sizes m_i <= m < m_j,
 *    g and l are interpolated linearly in 1/m, i.e. along the model
 *    g(m) = g_byte + o_msg/m through the two rows (exact at the rows);
 *    above the largest size, the largest size's row; below the smallest
 *    size m_0, g = g_0 * m_0 / m (all of a small message's cost counted as
 *    per-message cost: an upper bound) and l = l_0.
 * Results are finite and > 0 whenever the rows are (parsing guarantees it).
 */
#ifndef SSTEP_MACHINE_PARAMS_H
#define SSTEP_MACHINE_PARAMS_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SSTEP_PARAM_ENGINE_LEN 16

struct sstep_param_row {
    char engine[SSTEP_PARAM_ENGINE_LEN];
    unsigned p;
    double m;   /* message size in bytes, >= 1 */
    double g;   /* seconds per byte, finite > 0 */
    double l;   /* seconds, finite > 0 */
};

/* Where the file is: $SUPERSTEP_PARAMS, else $HOME/.superstep/params.txt.
 * Returns buf, or NULL when neither variable is set. */
static inline const char *sstep_param_path(char *buf, size_t len)
{
    const char *env = getenv("SUPERSTEP_PARAMS");
    if (env && *env) { snprintf(buf, len, "%s", env); return buf; }
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    snprintf(buf, len, "%s/.superstep/params.txt", home);
    return buf;
}

/* Parse one line. Returns 1 for a valid row, 0 for a comment, a blank or a
 * malformed line (p == 0, non-finite or non-positive g or l, negative m). */
static inline int sstep_param_parse(const char *line, struct sstep_param_row *r)
{
    while (*line == ' ' || *line == '\t') ++line;
    if (*line == '#' || *line == '\0' || *line == '\n') return 0;
    struct sstep_param_row x;
    char tail[2];
    int n = sscanf(line, "%15s %u %lf %lf %lf %1s", x.engine, &x.p, &x.m, &x.g, &x.l, tail);
    if (n != 5) return 0;
    if (x.p == 0 || !isfinite(x.m) || x.m < 0) return 0;
    if (!isfinite(x.g) || !(x.g > 0) || !isfinite(x.l) || !(x.l > 0)) return 0;
    if (x.m < 1) x.m = 1;
    *r = x;
    return 1;
}

static inline int sstep_param_before(const struct sstep_param_row *a,
        const struct sstep_param_row *b)
{
    int c = strcmp(a->engine, b->engine);
    if (c) return c < 0;
    if (a->p != b->p) return a->p < b->p;
    return a->m < b->m;
}

/* Sort rows by (engine, p, m) and drop duplicates of a key, keeping the one
 * that came last in the input (a later save overrides). Returns the new count. */
static inline size_t sstep_param_normalize(struct sstep_param_row *rows, size_t n)
{
    /* stable insertion sort: tables are small */
    for (size_t i = 1; i < n; ++i) {
        struct sstep_param_row x = rows[i];
        size_t j = i;
        while (j > 0 && sstep_param_before(&x, &rows[j - 1])) {
            rows[j] = rows[j - 1];
            --j;
        }
        rows[j] = x;
    }
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
        if (out > 0 && !sstep_param_before(&rows[out - 1], &rows[i])) rows[out - 1] = rows[i];
        else rows[out++] = rows[i];
    }
    return out;
}

/* In normalized rows, find the rows of `engine` measured at the p to use for
 * a query on p' processes: *first and *count delimit them (sorted by m).
 * Returns that p, or 0 if the engine has no rows. */
static inline unsigned sstep_param_select(const struct sstep_param_row *rows, size_t n,
        const char *engine, unsigned p, size_t *first, size_t *count)
{
    size_t lo = n, hi = n;   /* the engine's rows: [lo, hi) */
    for (size_t i = 0; i < n; ++i) {
        if (strcmp(rows[i].engine, engine) != 0) continue;
        if (lo == n) lo = i;
        hi = i + 1;
    }
    if (lo == n) return 0;
    unsigned use = rows[hi - 1].p;   /* largest, unless some p >= p' exists */
    for (size_t i = lo; i < hi; ++i)
        if (rows[i].p >= p) { use = rows[i].p; break; }
    size_t f = lo;
    while (rows[f].p != use) ++f;
    size_t c = 0;
    while (f + c < hi && rows[f + c].p == use) ++c;
    *first = f;
    *count = c;
    return use;
}

/* g and l at message size m from `count` rows of one engine and p, sorted
 * by m (see the lookup rules above). */
static inline void sstep_param_at(const struct sstep_param_row *r, size_t count,
        size_t m, double *g, double *l)
{
    double mm = m == 0 ? 1.0 : (double)m;
    if (mm <= r[0].m) {
        *g = mm < r[0].m ? r[0].g * (r[0].m / mm) : r[0].g;
        *l = r[0].l;
        return;
    }
    size_t i = 0;
    while (i + 1 < count && r[i + 1].m <= mm) ++i;
    if (i + 1 == count || mm == r[i].m) {
        *g = r[i].g;
        *l = r[i].l;
        return;
    }
    double t = (1.0 / r[i].m - 1.0 / mm) / (1.0 / r[i].m - 1.0 / r[i + 1].m);
    *g = r[i].g + t * (r[i + 1].g - r[i].g);
    *l = r[i].l + t * (r[i + 1].l - r[i].l);
}

#endif
