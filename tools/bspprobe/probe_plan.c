/*
 * bspprobe's timing-free half (probe_model.h): The measurement plan: the traffic of every experiment, the series and
 * their points, the random order of the samples.
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

const double pm_word_sizes[PM_NWORDS] = { 8, 64, 1024, 1048576 };
const char *const pm_as_test_names[5] = {
    "empty sync", "computation + sync", "total exchange of p ints",
    "one int 0 -> p-1", "scatter of one int from 0" };


/* ------------------------------------------------------------------ */
/* Traffic                                                              */
/* ------------------------------------------------------------------ */

int pm_traffic_init(struct pm_traffic *t, unsigned p)
{
    memset(t, 0, sizeof *t);
    t->p = p;
    t->M = calloc(2 * (size_t)p * p, sizeof *t->M);   /* M, then the destination offsets */
    return t->M ? 0 : -1;
}

void pm_traffic_free(struct pm_traffic *t)
{
    free(t->M);
    t->M = NULL;
}

static size_t entry_msgs(const struct pm_traffic *t, size_t bytes)
{
    if (bytes == 0) return 0;
    return t->chunk ? (bytes + t->chunk - 1) / t->chunk : 1;
}

void pm_traffic_finish(struct pm_traffic *t)
{
    const unsigned p = t->p;
    size_t *base = t->M + (size_t)p * p;
    t->h = t->msgs = t->min_msg = t->max_row = t->max_col = 0;
    for (unsigned s = 0; s < p; ++s) {
        size_t row = 0, col = 0, mrow = 0, mcol = 0;
        for (unsigned d = 0; d < p; ++d) {
            size_t out = t->M[(size_t)s * p + d], in = t->M[(size_t)d * p + s];
            row += out;
            col += in;
            mrow += entry_msgs(t, out);
            mcol += entry_msgs(t, in);
            if (out) {
                size_t m = t->chunk && out > t->chunk
                    ? (out % t->chunk ? out % t->chunk : t->chunk) : out;
                if (!t->min_msg || m < t->min_msg) t->min_msg = m;
            }
        }
        if (row > t->max_row) t->max_row = row;
        if (col > t->max_col) t->max_col = col;
        if (mrow > t->msgs) t->msgs = mrow;
        if (mcol > t->msgs) t->msgs = mcol;
    }
    t->h = t->max_row > t->max_col ? t->max_row : t->max_col;
    for (unsigned d = 0; d < p; ++d) {
        size_t acc = 0;
        for (unsigned s = 0; s < p; ++s) {
            base[(size_t)s * p + d] = t->overlap ? 0 : acc;
            acc += t->M[(size_t)s * p + d];
        }
    }
}

size_t pm_traffic_count(const struct pm_traffic *t, unsigned s)
{
    size_t n = 0;
    for (unsigned d = 0; d < t->p; ++d) n += entry_msgs(t, t->M[(size_t)s * t->p + d]);
    return n;
}

struct put_list { struct pm_put *out; size_t n; };

static int collect(void *arg, unsigned dst, size_t src_off, size_t dst_off, size_t size)
{
    struct put_list *l = arg;
    l->out[l->n++] = (struct pm_put){ dst, src_off, dst_off, size };
    return 0;
}

size_t pm_traffic_puts(const struct pm_traffic *t, unsigned s, struct pm_put *out)
{
    struct put_list l = { out, 0 };
    pm_traffic_for_each(t, s, collect, &l);
    return l.n;
}

/* ------------------------------------------------------------------ */
/* The plan                                                             */
/* ------------------------------------------------------------------ */

static const char *const pat_names[PAT_COUNT] = {
    "total-exchange", "ring", "one-to-all", "all-to-one", "random-sparse",
    "tiny-puts", "big-puts", "overlapping" };
static const char *const pat_texts[PAT_COUNT] = {
    "every process sends h/p bytes to every process (itself included), one put each",
    "every process sends h bytes to the next, one put",
    "process 0 sends h/(p-1) bytes to every other process, one put each",
    "every process but 0 sends h/(p-1) bytes to process 0, one put each",
    "a random sparse matrix of message sizes scaled to h, one put per entry",
    "every process sends h/(p-1) bytes to every other one in 8-byte puts",
    "the same traffic as tiny-puts in one put per destination",
    "like all-to-one, but all writes land on the same bytes of process 0" };

const char *pm_pattern_name(int pattern)
{
    return pattern >= 0 && pattern < PAT_COUNT ? pat_names[pattern] : "?";
}

const char *pm_pattern_text(int pattern)
{
    return pattern >= 0 && pattern < PAT_COUNT ? pat_texts[pattern] : "?";
}

static size_t words8(double bytes)
{
    return bytes <= 0 ? 0 : (size_t)(bytes / 8.0) * 8;
}

int pm_point_traffic(const struct pm_series *se, size_t i, unsigned p, uint64_t seed,
        struct pm_traffic *t)
{
    if (pm_traffic_init(t, p)) return -1;
    const double x = se->pt[i].x;
    size_t *M = t->M;
#define AT(s, d) M[(size_t)(s) * p + (d)]
    const unsigned others = p > 1 ? p - 1 : 1;
    switch (se->kind) {
    case PM_BSPBENCH: {
        /* word i goes to (s + 1 + i % (p-1)) % p, as in bspbench */
        size_t h = (size_t)x;
        for (unsigned s = 0; s < p; ++s)
            for (unsigned k = 0; k < others; ++k) {
                size_t cnt = h / others + (k < h % others ? 1 : 0);
                AT(s, p > 1 ? (s + 1 + k) % p : 0) += 8 * cnt;
            }
        t->chunk = 8;
        break;
    }
    case PM_LPF: {
        /* word j goes to (s + 1 + j) % p: round robin, self included */
        size_t h = (size_t)x, w = (size_t)se->w;
        for (unsigned s = 0; s < p; ++s)
            for (unsigned k = 0; k < p; ++k) {
                size_t cnt = h / p + (k < h % p ? 1 : 0);
                AT(s, (s + 1 + k) % p) += w * cnt;
            }
        t->chunk = w;
        break;
    }
    case PM_AS_TEST:
        switch ((int)x) {
        case 1: break;
        case 2: t->compute = 1; break;
        case 3: for (unsigned s = 0; s < p; ++s) for (unsigned d = 0; d < p; ++d) AT(s, d) = 4; break;
        case 4: AT(0, p - 1) = 4; break;
        case 5: for (unsigned d = 1; d < p; ++d) AT(0, d) = 4; break;
        default: break;
        }
        break;
    case PM_AS_TE: {
        size_t per = 4 * ((size_t)x / p);
        for (unsigned s = 0; s < p; ++s) for (unsigned d = 0; d < p; ++d) AT(s, d) = per;
        break;
    }
    case PM_COPY:
        t->copy = words8(x);
        break;
    case PM_PATTERN: {
        size_t all = words8(x), per_p = words8(x / p), per_o = words8(x / others);
        switch (se->pattern) {
        case PAT_TOTAL_EXCHANGE:
            for (unsigned s = 0; s < p; ++s) for (unsigned d = 0; d < p; ++d) AT(s, d) = per_p;
            break;
        case PAT_RING:
            for (unsigned s = 0; s < p; ++s) AT(s, (s + 1) % p) = all;
            break;
        case PAT_ONE_TO_ALL:
            if (p == 1) AT(0, 0) = all;
            for (unsigned d = 1; d < p; ++d) AT(0, d) = per_o;
            break;
        case PAT_OVERLAP:
            t->overlap = 1;
            /* fall through */
        case PAT_ALL_TO_ONE:
            if (p == 1) AT(0, 0) = all;
            for (unsigned s = 1; s < p; ++s) AT(s, 0) = per_o;
            break;
        case PAT_TINY_PUTS:
            t->chunk = 8;
            /* fall through */
        case PAT_BIG_PUTS:
            for (unsigned s = 0; s < p; ++s)
                for (unsigned d = 0; d < p; ++d)
                    if (d != s || p == 1) AT(s, d) = per_o;
            break;
        case PAT_RANDOM_SPARSE: {
            struct pm_rng r = { pm_mix(seed, 7919 * (uint64_t)i + 17) };
            double *wt = calloc((size_t)p * p, sizeof *wt);
            if (!wt) { pm_traffic_free(t); return -1; }
            for (size_t k = 0; k < (size_t)p * p; ++k)
                if (pm_rng_unit(&r) < 0.5) wt[k] = 0.2 + 0.8 * pm_rng_unit(&r);
            wt[pm_rng_below(&r, (size_t)p * p)] = 1.0;   /* never empty */
            double big = 0;
            for (unsigned s = 0; s < p; ++s) {
                double row = 0, col = 0;
                for (unsigned d = 0; d < p; ++d) { row += wt[(size_t)s * p + d]; col += wt[(size_t)d * p + s]; }
                if (row > big) big = row;
                if (col > big) big = col;
            }
            for (size_t k = 0; k < (size_t)p * p; ++k) M[k] = words8(x * wt[k] / big);
            free(wt);
            break;
        }
        default: break;
        }
        break;
    }
    default: break;
    }
#undef AT
    pm_traffic_finish(t);
    return 0;
}

unsigned pm_reps(const struct pm_config *cfg, double h, double msgs)
{
    double est = 1e-6 + msgs * 2e-8 + h * 3e-10;
    double r = ceil(cfg->target / est);
    if (r < 1) r = 1;
    if (r > 2000) r = 2000;
    return (unsigned)r;
}

static int add_series(struct pm_results *res, int kind, int pattern, double w,
        const char *name, const double *xs, size_t n)
{
    struct pm_series *ns = realloc(res->series, (res->nseries + 1) * sizeof *ns);
    if (!ns) return -1;
    res->series = ns;
    struct pm_series *se = &ns[res->nseries];
    memset(se, 0, sizeof *se);
    se->kind = kind;
    se->pattern = pattern;
    se->w = w;
    snprintf(se->name, sizeof se->name, "%s", name);
    se->pt = calloc(n ? n : 1, sizeof *se->pt);
    if (!se->pt) return -1;
    res->nseries++;
    for (size_t i = 0; i < n; ++i) se->pt[se->npts++].x = xs[i];
    return 0;
}

/* Fill in h, msg, msgs, reps and the sample arrays; drop points with more
 * messages than cfg->max_msgs. */
static int finish_series(struct pm_results *res, struct pm_series *se, unsigned p)
{
    const struct pm_config *cfg = &res->cfg;
    size_t keep = 0;
    for (size_t i = 0; i < se->npts; ++i) {
        struct pm_traffic t;
        if (pm_point_traffic(se, i, p, cfg->seed, &t)) return -1;
        struct pm_point pt = se->pt[i];
        pt.h = (double)(t.h > t.copy ? t.h : t.copy);
        pt.msg = (double)t.min_msg;
        pt.msgs = (double)t.msgs;
        pm_traffic_free(&t);
        if (pt.msgs > (double)cfg->max_msgs) continue;
        pt.reps = pm_reps(cfg, pt.h, pt.msgs);
        pt.n = pt.key ? cfg->key_samples : cfg->samples;
        pt.t = calloc(pt.n, sizeof *pt.t);
        if (!pt.t) return -1;
        for (size_t k = 0; k < pt.n; ++k) pt.t[k] = NAN;
        pt.est = pt.lo = pt.hi = pt.pred = NAN;
        se->pt[keep++] = pt;
    }
    se->npts = keep;
    return 0;
}

static size_t push_unique(double *xs, size_t n, double x)
{
    for (size_t i = 0; i < n; ++i) if (xs[i] == x) return n;
    xs[n] = x;
    return n + 1;
}

int pm_plan(struct pm_results *res, const struct pm_config *cfg, unsigned p,
        const char *engine)
{
    memset(res, 0, sizeof *res);
    res->cfg = *cfg;
    res->p = p;
    snprintf(res->engine, sizeof res->engine, "%s", engine);
    for (int i = 0; i < PM_R_NS; ++i) res->r_by_n[i] = NAN;
    for (int i = 0; i < PM_NWORDS; ++i) res->memcpy_spb[i] = NAN;
    res->r = res->r_min = res->r_max = NAN;
    double xs[512];
    size_t n;
    const double P = p;

    if (cfg->parts & PM_PART_BSPBENCH) {
        n = 0;
        for (double x = 0; x <= 2 * P; ++x) n = push_unique(xs, n, x);
        for (int i = 1; i <= 64; ++i) n = push_unique(xs, n, floor((double)cfg->bsp_hmax * i / 64.0));
        qsort(xs, n, sizeof *xs, pm_cmp_double);
        if (add_series(res, PM_BSPBENCH, -1, 8, "bspbench", xs, n)) return -1;
        if (finish_series(res, &res->series[res->nseries - 1], p)) return -1;
    }
    if (cfg->parts & PM_PART_LPF) {
        for (int k = 0; k < PM_NWORDS; ++k) {
            double w = pm_word_sizes[k];
            double nmax = floor(cfg->volume / w);
            if (nmax > (double)cfg->max_msgs / 1.0) nmax = (double)cfg->max_msgs;
            nmax = floor(nmax / P) * P;
            if (nmax < 4 * P) nmax = 4 * P;
            n = 0;
            n = push_unique(xs, n, 0);
            n = push_unique(xs, n, P);
            n = push_unique(xs, n, 2 * P);
            for (double x = 4 * P; x < nmax; x *= 2) n = push_unique(xs, n, x);
            n = push_unique(xs, n, nmax);
            char name[40];
            if (w >= 1048576) snprintf(name, sizeof name, "lpf-%gMiB", w / 1048576);
            else if (w >= 1024) snprintf(name, sizeof name, "lpf-%gKiB", w / 1024);
            else snprintf(name, sizeof name, "lpf-%gB", w);
            if (add_series(res, PM_LPF, -1, w, name, xs, n)) return -1;
            struct pm_series *se = &res->series[res->nseries - 1];
            for (size_t i = 0; i < se->npts; ++i) {
                double x = se->pt[i].x;
                se->pt[i].key = x == 0 || x == P || x == 2 * P || x == nmax;
            }
            /* n_max must survive the message cap: it was capped above */
            if (finish_series(res, se, p)) return -1;
        }
    }
    if (cfg->parts & PM_PART_AS) {
        double tests[5] = { 1, 2, 3, 4, 5 };
        if (add_series(res, PM_AS_TEST, -1, 4, "as-tests", tests, 5)) return -1;
        struct pm_series *se = &res->series[res->nseries - 1];
        for (size_t i = 0; i < se->npts; ++i) se->pt[i].key = 1;
        if (finish_series(res, se, p)) return -1;
        n = 0;
        for (double x = P; x <= (double)cfg->as_hmax && n < 64; x *= 2) n = push_unique(xs, n, x);
        if (add_series(res, PM_AS_TE, -1, 4, "as-total-exchange", xs, n)) return -1;
        if (finish_series(res, &res->series[res->nseries - 1], p)) return -1;
    }
    if (cfg->parts & PM_PART_PATTERNS) {
        n = 0;
        n = push_unique(xs, n, 0);
        for (int k = 0; n < 500; ++k) {
            double x = floor(64.0 * pow(2.0, k / 2.0) / 8.0) * 8.0;
            if (x > (double)cfg->pat_hmax) break;
            n = push_unique(xs, n, x);
        }
        for (int pat = 0; pat < PAT_COUNT; ++pat) {
            if (add_series(res, PM_PATTERN, pat, 1, pm_pattern_name(pat), xs, n)) return -1;
            if (finish_series(res, &res->series[res->nseries - 1], p)) return -1;
        }
        if (add_series(res, PM_COPY, -1, 1, "copy-baseline", xs, n)) return -1;
        if (finish_series(res, &res->series[res->nseries - 1], p)) return -1;
    }
    return 0;
}

void pm_results_free(struct pm_results *res)
{
    for (size_t i = 0; i < res->nseries; ++i) {
        for (size_t j = 0; j < res->series[i].npts; ++j) free(res->series[i].pt[j].t);
        free(res->series[i].pt);
    }
    free(res->series);
    res->series = NULL;
    res->nseries = 0;
}

struct pm_series *pm_find_series(struct pm_results *res, int kind, int pattern, double w)
{
    for (size_t i = 0; i < res->nseries; ++i) {
        struct pm_series *s = &res->series[i];
        if (s->kind != kind) continue;
        if (kind == PM_PATTERN && s->pattern != pattern) continue;
        if (kind == PM_LPF && s->w != w) continue;
        return s;
    }
    return NULL;
}

size_t pm_schedule(const struct pm_results *res, uint64_t seed, struct pm_task **out)
{
    size_t n = 0;
    for (size_t i = 0; i < res->nseries; ++i)
        for (size_t j = 0; j < res->series[i].npts; ++j) n += res->series[i].pt[j].n;
    *out = NULL;
    if (n == 0) return 0;
    struct pm_task *t = malloc(n * sizeof *t);
    if (!t) return 0;
    size_t k = 0;
    for (size_t i = 0; i < res->nseries; ++i)
        for (size_t j = 0; j < res->series[i].npts; ++j)
            for (size_t s = 0; s < res->series[i].pt[j].n; ++s)
                t[k++] = (struct pm_task){ (uint32_t)i, (uint32_t)j, (uint32_t)s };
    struct pm_rng r = { pm_mix(seed, 0x5ced) };
    for (size_t i = n - 1; i > 0; --i) {
        size_t j = pm_rng_below(&r, i + 1);
        struct pm_task x = t[i];
        t[i] = t[j];
        t[j] = x;
    }
    *out = t;
    return n;
}

void pm_plan_extent(const struct pm_results *res, size_t *bytes, size_t *msgs)
{
    double b = 0, m = 0;
    for (size_t i = 0; i < res->nseries; ++i)
        for (size_t j = 0; j < res->series[i].npts; ++j) {
            const struct pm_point *pt = &res->series[i].pt[j];
            if (pt->h > b) b = pt->h;
            if (pt->msgs > m) m = pt->msgs;
        }
    *bytes = (size_t)b;
    *msgs = 2 * (size_t)m + 2 * res->p;
}
