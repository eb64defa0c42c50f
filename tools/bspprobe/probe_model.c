/*
 * bspprobe's timing-free half (see probe_model.h).
 */
#define _GNU_SOURCE
#include "probe_model.h"

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

static size_t rng_below(struct pm_rng *r, size_t n)
{
    return n ? (size_t)(pm_rng_next(r) % n) : 0;
}

/* ------------------------------------------------------------------ */
/* Statistics and fits                                                  */
/* ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* trimmed mean of x[0..n) sorted in place */
static double trimmed_sorted(double *x, size_t n, double trim)
{
    if (n == 0) return NAN;
    qsort(x, n, sizeof *x, cmp_double);
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
    double m = trimmed_sorted(c, n, trim);
    free(c);
    return m;
}

double pm_median(const double *x, size_t n)
{
    if (n == 0) return NAN;
    double *c = malloc(n * sizeof *c);
    if (!c) return NAN;
    memcpy(c, x, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
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

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

void pm_default_options(struct pm_options *o, size_t llc_bytes, size_t ram_bytes,
        const char *engine_env)
{
    memset(o, 0, sizeof *o);
    struct pm_config *c = &o->cfg;
    c->p = 2;
    c->parts = PM_PART_ALL;
    c->seed = 1;
    c->volume = 0;           /* auto, from the cache size (pm_parse_options) */
    c->max_msgs = (size_t)1 << 20;
    c->bsp_hmax = 4096;
    c->pat_hmax = 0;         /* auto: 64 MiB, at most the LPF volume */
    c->as_hmax = (size_t)1 << 22;
    c->samples = 7;
    c->key_samples = 40;
    c->target = 1e-3;
    c->budget = 90;
    o->plot = 1;
    snprintf(o->out_dir, sizeof o->out_dir, "bspprobe-out");
    snprintf(o->engine, sizeof o->engine, "%s",
            engine_env && *engine_env ? engine_env : "pthread");
    o->llc = llc_bytes ? llc_bytes : 32 * MiB;
    o->ram = ram_bytes ? ram_bytes : 4 * GiB;
}

int pm_parse_size(const char *s, size_t *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'g': case 'G': shift = 30; ++end; break;
    default: break;
    }
    if (*end == 'B' || *end == 'i') {
        if (end[0] == 'i' && end[1] == 'B') end += 2;
        else if (end[0] == 'B') end += 1;
    }
    if (*end) return -1;
    if (shift && v > (ULLONG_MAX >> shift)) return -1;
    v <<= shift;
    if (v > SIZE_MAX) return -1;
    *out = (size_t)v;
    return 0;
}

static int errf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    size_t v;
    if (pm_parse_size(s, &v) || v > max) return -1;
    *out = v;
    return 0;
}

static int parse_parts(const char *s, unsigned *out)
{
    unsigned parts = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (!strcmp(tok, "r")) parts |= PM_PART_R;
        else if (!strcmp(tok, "bspbench")) parts |= PM_PART_BSPBENCH;
        else if (!strcmp(tok, "lpf")) parts |= PM_PART_LPF;
        else if (!strcmp(tok, "as")) parts |= PM_PART_AS;
        else if (!strcmp(tok, "patterns")) parts |= PM_PART_PATTERNS;
        else if (!strcmp(tok, "all")) parts |= PM_PART_ALL;
        else return -1;
    }
    if (!parts) return -1;
    *out = parts;
    return 0;
}

void pm_usage(FILE *f)
{
    fprintf(f,
"usage: bspprobe [options]\n"
"Measures this machine's BSP parameters r, g, l on the engine the library\n"
"runs (pthread by default; 'bsprun -n P --engine mpi bspprobe', or\n"
"SUPERSTEP_ENGINE=mpi under mpirun, for the MPI engine) and checks that\n"
"supersteps cost g*h + l for several communication patterns.\n"
"\n"
"  -p, --procs P       processes (default $LPF_MAX_PROCS, which bsprun -n sets,\n"
"                      else 2; more than the cores needs LPF_MAX_PROCS)\n"
"  --quick             a few seconds: small sizes, few samples (tests, CI)\n"
"  --save[=PATH]       save g and l where lpf_probe finds them (default\n"
"                      $SUPERSTEP_PARAMS, else ~/.superstep/params.txt);\n"
"                      refused when g or l is not positive or g*h + l misses\n"
"                      a measured point by more than a factor of 2\n"
"  --force-save        --save, even figures the checks refuse\n"
"  --out DIR           output directory (default bspprobe-out): probe.json,\n"
"                      probe.dat, probe.gp, probe.svg, probe.png\n"
"  --json PATH         JSON file (default DIR/probe.json; '-' for stdout)\n"
"  --no-plot           do not run gnuplot\n"
"  --only LIST         parts to run: r,bspbench,lpf,as,patterns (default all)\n"
"  --seed N            random order and random patterns (default 1)\n"
"  --samples N         samples per point (default 7)\n"
"  --key-samples N     samples of T(0), T(p), T(2p), T(n_max) (default 40)\n"
"  --volume BYTES      LPF way n_max per process (default 4 x LLC / p)\n"
"  --max-msgs N        most messages per process and superstep (default 1M)\n"
"  --bsp-hmax WORDS    bspbench way: largest h (default 4096)\n"
"  --pattern-hmax BYTES  patterns: largest h (default 64M, at most the volume)\n"
"  --as-hmax INTS      As total exchange: largest h (default 4M)\n"
"  --budget SECONDS    stop sampling after this long, every point keeping the\n"
"                      samples taken so far (default 90; 0: no limit)\n"
"  --engine NAME       engine name for the saved rows (default $SUPERSTEP_ENGINE\n"
"                      or pthread; must be the engine the library runs)\n"
"  -h, --help          this text\n"
"Sizes take K, M, G suffixes (binary).\n");
}

int pm_parse_options(struct pm_options *o, int argc, char **argv, char *err, size_t errlen)
{
    struct pm_config *c = &o->cfg;
    int quick_seen = 0;
    unsigned set = 0;   /* options given explicitly, so --quick does not override them */
    enum { S_VOL = 1, S_MSGS = 2, S_BSP = 4, S_PAT = 8, S_AS = 16, S_SAMP = 32, S_KEY = 64 };
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *val = NULL;
        char name[64];
        if (a[0] == '-' && a[1] == '-') {
            const char *eq = strchr(a, '=');
            size_t len = eq ? (size_t)(eq - a) : strlen(a);
            if (len >= sizeof name) return errf(err, errlen, "unknown option %s", a);
            memcpy(name, a, len);
            name[len] = '\0';
            if (eq) val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        /* options without a value */
        if (!strcmp(name, "-h") || !strcmp(name, "--help")) { o->help = 1; continue; }
        if (!strcmp(name, "--quick")) { quick_seen = 1; continue; }
        if (!strcmp(name, "--no-plot")) { o->plot = 0; continue; }
        if (!strcmp(name, "--force-save")) { o->save = o->force_save = 1; continue; }
        if (!strcmp(name, "--test-bad-fit")) { o->test_bad_fit = 1; continue; }
        if (!strcmp(name, "--save")) {
            o->save = 1;
            if (val) {
                if (!*val) return errf(err, errlen, "--save= needs a path");
                snprintf(o->save_path, sizeof o->save_path, "%s", val);
            }
            continue;
        }
        /* options with a value */
        static const char *const valued[] = { "-p", "--procs", "--out", "--json", "--only",
            "--seed", "--samples", "--key-samples", "--volume", "--max-msgs", "--bsp-hmax",
            "--pattern-hmax", "--as-hmax", "--engine", "--budget" };
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; ++k) known |= !strcmp(name, valued[k]);
        if (!known) return errf(err, errlen, "unknown option %s (try --help)", name);
        if (!val) {
            if (i + 1 >= argc) return errf(err, errlen, "option %s needs a value", name);
            val = argv[++i];
        }
        unsigned long long u;
        size_t z;
        if (!strcmp(name, "-p") || !strcmp(name, "--procs")) {
            if (parse_uint(val, 1u << 20, &u) || u == 0)
                return errf(err, errlen, "bad process count '%s'", val);
            c->p = (unsigned)u;
        } else if (!strcmp(name, "--out")) {
            if (!*val) return errf(err, errlen, "--out needs a directory");
            snprintf(o->out_dir, sizeof o->out_dir, "%s", val);
        } else if (!strcmp(name, "--json")) {
            snprintf(o->json_path, sizeof o->json_path, "%s", val);
        } else if (!strcmp(name, "--only")) {
            if (parse_parts(val, &c->parts))
                return errf(err, errlen, "bad --only '%s' (r,bspbench,lpf,as,patterns)", val);
        } else if (!strcmp(name, "--seed")) {
            if (parse_uint(val, ULLONG_MAX, &u)) return errf(err, errlen, "bad seed '%s'", val);
            c->seed = u;
        } else if (!strcmp(name, "--samples")) {
            if (parse_uint(val, 100000, &u) || u == 0) return errf(err, errlen, "bad --samples '%s'", val);
            c->samples = (unsigned)u;
            set |= S_SAMP;
        } else if (!strcmp(name, "--key-samples")) {
            if (parse_uint(val, 100000, &u) || u == 0) return errf(err, errlen, "bad --key-samples '%s'", val);
            c->key_samples = (unsigned)u;
            set |= S_KEY;
        } else if (!strcmp(name, "--volume")) {
            if (pm_parse_size(val, &z) || z < 64) return errf(err, errlen, "bad --volume '%s'", val);
            c->volume = (double)z;
            set |= S_VOL;
        } else if (!strcmp(name, "--max-msgs")) {
            if (parse_uint(val, 1u << 28, &u) || u < 16) return errf(err, errlen, "bad --max-msgs '%s' (16 .. 256M)", val);
            c->max_msgs = (size_t)u;
            set |= S_MSGS;
        } else if (!strcmp(name, "--bsp-hmax")) {
            if (parse_uint(val, 1u << 24, &u) || u < 8) return errf(err, errlen, "bad --bsp-hmax '%s'", val);
            c->bsp_hmax = (size_t)u;
            set |= S_BSP;
        } else if (!strcmp(name, "--pattern-hmax")) {
            if (pm_parse_size(val, &z) || z < 1024) return errf(err, errlen, "bad --pattern-hmax '%s'", val);
            c->pat_hmax = z;
            set |= S_PAT;
        } else if (!strcmp(name, "--as-hmax")) {
            if (parse_uint(val, 1u << 28, &u) || u < 1) return errf(err, errlen, "bad --as-hmax '%s'", val);
            c->as_hmax = (size_t)u;
            set |= S_AS;
        } else if (!strcmp(name, "--budget")) {
            char *end;
            double b = strtod(val, &end);
            if (*end || !(b >= 0) || b > 1e6) return errf(err, errlen, "bad --budget '%s' (seconds, 0: none)", val);
            c->budget = b;
        } else if (!strcmp(name, "--engine")) {
            if (!*val || strlen(val) >= sizeof o->engine || strchr(val, ' '))
                return errf(err, errlen, "bad engine name '%s'", val);
            snprintf(o->engine, sizeof o->engine, "%s", val);
        } else {
            return errf(err, errlen, "unknown option %s (try --help)", name);
        }
    }
    if (quick_seen) {
        c->quick = 1;
        if (!(set & S_VOL)) c->volume = (double)(8 * MiB);
        if (!(set & S_MSGS)) c->max_msgs = (size_t)1 << 15;
        if (!(set & S_BSP)) c->bsp_hmax = 1024;
        if (!(set & S_PAT)) c->pat_hmax = 4 * MiB;
        if (!(set & S_AS)) c->as_hmax = (size_t)1 << 16;
        if (!(set & S_SAMP)) c->samples = 3;
        if (!(set & S_KEY)) c->key_samples = 7;
        c->target = 2e-4;
    }
    if (!(c->volume > 0)) {
        /* LPF §4.1: n_max at least four times the cache; the processes share
         * the last-level cache, so 4 x LLC over all of them */
        double v = 4.0 * (double)o->llc / c->p;
        double cap = (double)o->ram / (8.0 * c->p);
        if (cap > (double)GiB) cap = (double)GiB;
        if (v > cap) v = cap;
        if (v < (double)(16 * MiB)) v = (double)(16 * MiB);
        c->volume = v;
    }
    if (c->pat_hmax == 0) {
        /* beyond the cache, but single messages below the size from which
         * glibc's memcpy streams (non-temporal stores, ~100 MiB on x86 with
         * a large LLC): that regime is faster than the g LPF's 1 MiB words
         * measure (docs/probe.md) */
        double h = c->volume < 64.0 * MiB ? c->volume : 64.0 * MiB;
        c->pat_hmax = h < 4.0 * MiB ? 4 * MiB : (size_t)h;
    }
    return 0;
}

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
            wt[rng_below(&r, (size_t)p * p)] = 1.0;   /* never empty */
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
        qsort(xs, n, sizeof *xs, cmp_double);
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
        size_t j = rng_below(&r, i + 1);
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
    for (size_t k = 0; k < n; ++k) buf[k] = have[rng_below(r, n)];
    return trimmed_sorted(buf, n, TRIM);
}

static double point_estimate(const struct pm_point *pt, double *buf)
{
    size_t n = 0;
    for (size_t k = 0; k < pt->n; ++k) if (isfinite(pt->t[k])) buf[n++] = pt->t[k];
    return n ? trimmed_sorted(buf, n, TRIM) : NAN;
}

/* 2.5% and 97.5% quantiles of v[0..n) (finite values only) */
static void interval(double *v, size_t n, double *lo, double *hi)
{
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) if (isfinite(v[i])) v[m++] = v[i];
    if (m == 0) { *lo = *hi = NAN; return; }
    qsort(v, m, sizeof *v, cmp_double);
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

static struct pm_point *point_at(struct pm_series *se, double x)
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
    k4[0] = point_at(se, 0);
    k4[1] = point_at(se, p);
    k4[2] = point_at(se, 2 * p);
    k4[3] = point_at(se, nm);
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
        struct pm_point *pt = at ? point_at(at, q + 1) : NULL;
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
        struct pm_point *z = point_at(cp, 0), *far = &cp->pt[cp->npts - 1];
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
            struct pm_point *c = cp ? point_at(cp, pt->x) : NULL;
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

static const char *fmt_bytes(char *b, size_t len, double x);

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
                    "(both must be positive)", fmt_bytes(b, sizeof b, L->w), L->g.est * 1e9, L->l.est * 1e6);
        } else if (!(L->g.lo > 0) || L->g.hi > PM_G_SPREAD_MAX * L->g.lo) {
            c->refuse++;
            if (!(L->g.lo > 0))
                check_line(c, "LPF way, %s words: g = %.4g ns/B is uncertain: its 95%% interval "
                        "[%.4g, %.4g] reaches zero", fmt_bytes(b, sizeof b, L->w),
                        L->g.est * 1e9, L->g.lo * 1e9, L->g.hi * 1e9);
            else
                check_line(c, "LPF way, %s words: g = %.4g ns/B is uncertain: its 95%% interval "
                        "[%.4g, %.4g] spans more than a factor of %g", fmt_bytes(b, sizeof b, L->w),
                        L->g.est * 1e9, L->g.lo * 1e9, L->g.hi * 1e9, PM_G_SPREAD_MAX);
        } else if (L->fit_factor > PM_FIT_FACTOR_MAX) {
            c->refuse++;
            check_line(c, "LPF way, %s words: a measured point is %.1f times g*h + l "
                    "(more than %g)", fmt_bytes(b, sizeof b, L->w), L->fit_factor, PM_FIT_FACTOR_MAX);
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
    const struct pm_point *z = point_at(se, 0);
    double t0 = z && z->n && isfinite(z->t[0]) ? z->t[0] : 1e-6;
    struct pm_point *far = &se->pt[0];
    for (size_t i = 1; i < se->npts; ++i) if (se->pt[i].x > far->x) far = &se->pt[i];
    for (size_t k = 0; k < far->n; ++k) far->t[k] = 0.5 * t0;
}

/* ------------------------------------------------------------------ */
/* Summary                                                              */
/* ------------------------------------------------------------------ */

/* a duration with a unit that keeps 3-4 significant digits */
static const char *fmt_time(char *b, size_t len, double s)
{
    if (!isfinite(s)) snprintf(b, len, "n/a");
    else if (fabs(s) < 1e-6) snprintf(b, len, "%.1f ns", s * 1e9);
    else if (fabs(s) < 1e-3) snprintf(b, len, "%.2f us", s * 1e6);
    else if (fabs(s) < 1) snprintf(b, len, "%.2f ms", s * 1e3);
    else snprintf(b, len, "%.3f s", s);
    return b;
}

static const char *fmt_bytes(char *b, size_t len, double x)
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
            res->engine, res->p, res->cores, fmt_bytes(a, sizeof a, (double)res->llc_bytes),
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
            fprintf(f, " %s %.3f ns/B%s", fmt_bytes(a, sizeof a, pm_word_sizes[k]),
                    res->memcpy_spb[k] * 1e9, k + 1 < PM_NWORDS ? "," : "\n");
    }
    if (isfinite(res->bsp_g.est)) {
        const struct pm_series *bs = NULL;
        for (size_t i = 0; i < res->nseries; ++i) if (res->series[i].kind == PM_BSPBENCH) bs = &res->series[i];
        double hmax = bs && bs->npts ? bs->pt[bs->npts - 1].x : 0;
        fprintf(f, "\ng and l, the bspbench way (h-relations of one-word (8 B) puts, least squares\n"
                   "  over h = p .. %.0f words)\n", hmax);
        fprintf(f, "  g = %s/word [%s, %s]  = %.4f ns/B",
                fmt_time(a, sizeof a, res->bsp_g.est), fmt_time(b, sizeof b, res->bsp_g.lo),
                fmt_time(c, sizeof c, res->bsp_g.hi), res->bsp_g.est / 8 * 1e9);
        if (isfinite(res->r)) fprintf(f, "  = %.1f flop/word", res->bsp_g.est * res->r);
        fprintf(f, "\n  l = %s [%s, %s]", fmt_time(a, sizeof a, res->bsp_l.est),
                fmt_time(b, sizeof b, res->bsp_l.lo), fmt_time(c, sizeof c, res->bsp_l.hi));
        if (isfinite(res->r)) fprintf(f, "  = %.0f flop", res->bsp_l.est * res->r);
        fprintf(f, "\n  R^2 = %.5f;  range h = 0 .. p: g = %s/word, l = %s\n", res->bsp_fit.r2,
                fmt_time(a, sizeof a, res->bsp_fit0.g), fmt_time(b, sizeof b, res->bsp_fit0.l));
    }
    if (res->nlpf) {
        fprintf(f, "\ng and l, the LPF way (total exchanges; g = (T(nmax)-T(2p))/(nmax-2p),\n"
                   "  l = max(T(0), 2T(p)-T(2p)); n_max = %s per process, at most %zu messages)\n",
                fmt_bytes(a, sizeof a, res->cfg.volume), res->cfg.max_msgs);
        fprintf(f, "  %-8s %10s  %-30s %-30s %8s %10s\n", "word", "n_max", "g (ns/B) [95% CI]",
                "l [95% CI]", "g/r", "l (words)");
        for (int k = 0; k < res->nlpf; ++k) {
            const struct pm_lpf_result *L = &res->lpf[k];
            char gs[64], ls[64];
            snprintf(gs, sizeof gs, "%.4f [%.4f, %.4f]", L->g.est * 1e9, L->g.lo * 1e9, L->g.hi * 1e9);
            snprintf(ls, sizeof ls, "%s [%s, %s]", fmt_time(a, sizeof a, L->l.est),
                    fmt_time(b, sizeof b, L->l.lo), fmt_time(c, sizeof c, L->l.hi));
            int k2 = 0;
            while (k2 < PM_NWORDS - 1 && pm_word_sizes[k2] != L->w) ++k2;
            double r = res->memcpy_spb[k2];
            fprintf(f, "  %-8s %10.0f  %-30s %-30s %8.2f %10.3g\n", fmt_bytes(d, sizeof d, L->w),
                    L->nmax, gs, ls, L->g.est / r, L->l.est / (L->g.est * L->w));
        }
        fprintf(f, "  (g/r: g over memcpy's seconds per byte; l in words: l / (g w), as LPF's Table 3)\n");
    }
    if (res->cfg.parts & PM_PART_AS) {
        fprintf(f, "\nAs suite (Gerbessiotis & Lee), p = %u\n", res->p);
        for (int q = 0; q < 5; ++q)
            fprintf(f, "  Test %d  %-28s %s [%s, %s]\n", q + 1, pm_as_test_names[q],
                    fmt_time(a, sizeof a, res->as_test[q].est), fmt_time(b, sizeof b, res->as_test[q].lo),
                    fmt_time(c, sizeof c, res->as_test[q].hi));
        const struct pm_series *te = NULL;
        for (size_t i = 0; i < res->nseries; ++i) if (res->series[i].kind == PM_AS_TE) te = &res->series[i];
        if (te) {
            fprintf(f, "  total exchange, h ints per process:  h: time (time/h)\n   ");
            for (size_t i = 0; i < te->npts; ++i)
                fprintf(f, " %.0f: %s (%s)%s", te->pt[i].x, fmt_time(a, sizeof a, te->pt[i].est),
                        fmt_time(b, sizeof b, te->pt[i].est / te->pt[i].x),
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
                fprintf(f, "%s %s %.3f", col++ % 5 ? "," : "\n   ", fmt_bytes(a, sizeof a, x),
                        (pt->est - (z ? z->est : 0)) / pt->h * 1e9);
            }
            fprintf(f, "\n  in cache (memcpy per byte < 3/4 of the largest h's) up to h = %s\n",
                    fmt_bytes(a, sizeof a, res->cache_h));
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
                fprintf(f, "%s %s %.3f", col++ % 5 ? "," : "\n   ", fmt_bytes(a, sizeof a, pt->x),
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
                    R->fit.r2, R->fit.g * 1e9, fmt_time(e, sizeof e, R->fit.l), rs, os, cs, es,
                    pm_pattern_verdict(R));
        }
        fprintf(f, "  Bandwidth-bound from h = ");
        int first = 1;
        for (int pat = 0; pat < PAT_COUNT; ++pat)
            if (isfinite(res->pat[pat].h_bw)) {
                fprintf(f, "%s%s %s", first ? "" : ", ", pm_pattern_name(pat),
                        fmt_bytes(ff, sizeof ff, res->pat[pat].h_bw));
                first = 0;
            }
        fprintf(f, "\n");
    }
    if (res->nrows) {
        fprintf(f, "\nParameters for lpf_probe (engine %s, p = %u):\n", res->engine, res->p);
        for (size_t i = 0; i < res->nrows; ++i)
            fprintf(f, "  msg >= %-8s g = %.4f ns/B  l = %s\n", fmt_bytes(a, sizeof a, res->rows[i].m),
                    res->rows[i].g * 1e9, fmt_time(b, sizeof b, res->rows[i].l));
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
            snprintf(title, sizeof title, "LPF way, total exchange, %s words", fmt_bytes(wb, sizeof wb, se->w));
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
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f))
        if (n < cap && sstep_param_parse(line, &rows[n])) ++n;
    fclose(f);
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
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (pm_mkdirs(dir)) return errf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
    }
    /* keep the other rows (other engines, other p) as they were written */
    char *kept = NULL;
    size_t klen = 0;
    FILE *old = fopen(path, "r");
    if (old) {
        FILE *mem = open_memstream(&kept, &klen);
        if (!mem) { fclose(old); return errf(err, errlen, "out of memory"); }
        char line[512];
        while (fgets(line, sizeof line, old)) {
            struct sstep_param_row r;
            if (!sstep_param_parse(line, &r)) continue;
            int replaced = 0;
            for (size_t i = 0; i < n; ++i)
                if (!strcmp(r.engine, rows[i].engine) && r.p == rows[i].p) replaced = 1;
            if (!replaced) fputs(line, mem);
            if (!replaced && line[strlen(line) - 1] != '\n') fputc('\n', mem);
        }
        fclose(old);
        fclose(mem);
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) { free(kept); return errf(err, errlen, "cannot write %s: %s", tmp, strerror(errno)); }
    fprintf(f, "# Superstep machine parameters, read by lpf_probe (src/core/machine.c).\n"
               "# engine p msg_size g_seconds_per_byte l_seconds\n");
    if (comment && *comment) fprintf(f, "# %s\n", comment);
    if (kept) fputs(kept, f);
    free(kept);
    for (size_t i = 0; i < n; ++i)
        fprintf(f, "%s %u %.17g %.17g %.17g\n", rows[i].engine, rows[i].p, rows[i].m,
                rows[i].g, rows[i].l);
    if (fclose(f)) { unlink(tmp); return errf(err, errlen, "cannot write %s", tmp); }
    if (rename(tmp, path)) {
        unlink(tmp);
        return errf(err, errlen, "cannot replace %s: %s", path, strerror(errno));
    }
    return 0;
}
