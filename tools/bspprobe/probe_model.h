/*
 * bspprobe's timing-free half: options, the measurement plan, the traffic
 * of every experiment, statistics and fits, the analysis of the samples, the
 * summary, JSON, the gnuplot files and the saved parameters. Nothing here
 * reads a clock, so tests/probe exercises all of it on synthetic samples;
 * bspprobe.c only runs the plan and fills in the samples.
 */
#ifndef BSPPROBE_MODEL_H
#define BSPPROBE_MODEL_H

#include "machine_params.h"   /* src/core: the lookup lpf_probe uses */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Random numbers (splitmix64: the same stream on every process)        */
/* ------------------------------------------------------------------ */

struct pm_rng { uint64_t s; };
uint64_t pm_rng_next(struct pm_rng *r);
double pm_rng_unit(struct pm_rng *r);               /* [0, 1) */
uint64_t pm_mix(uint64_t a, uint64_t b);            /* seed derivation */

/* ------------------------------------------------------------------ */
/* Statistics and fits                                                  */
/* ------------------------------------------------------------------ */

/* Mean of the values left after dropping floor(trim*n) from each end. */
double pm_trimmed_mean(const double *x, size_t n, double trim);
double pm_median(const double *x, size_t n);

/* Affine least squares t = g*h + l, minimising sum w_i (t_i - g h_i - l)^2
 * (w NULL: all 1). r2 is the coefficient of determination in the same
 * weighting. Returns 0, or -1 with fewer than two distinct h. */
struct pm_fit { double g, l, r2; size_t n; };
int pm_fit_affine(const double *h, const double *t, const double *w, size_t n,
        struct pm_fit *out);

/* LPF §4.1: g = (T(nmax) - T(2p)) / (nmax - 2p), l = max(T(0), 2T(p) - T(2p)),
 * with h in words. */
void pm_lpf_estimate(double T0, double Tp, double T2p, double Tn, double p,
        double nmax, double *g, double *l);

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

enum pm_part { PM_PART_R = 1, PM_PART_BSPBENCH = 2, PM_PART_LPF = 4,
    PM_PART_AS = 8, PM_PART_PATTERNS = 16, PM_PART_ALL = 31 };

/* Everything the processes must agree on; pid 0 broadcasts it (plain data). */
struct pm_config {
    unsigned p;             /* processes asked for */
    int quick;
    unsigned parts;         /* enum pm_part bits */
    uint64_t seed;
    double volume;          /* LPF way: n_max in bytes per process */
    size_t max_msgs;        /* most messages one process sends in a superstep */
    size_t bsp_hmax;        /* bspbench way: largest h in words */
    size_t pat_hmax;        /* patterns: largest h in bytes */
    size_t as_hmax;         /* As total exchange: largest h in ints */
    unsigned samples;       /* samples per point */
    unsigned key_samples;   /* samples of T(0), T(p), T(2p), T(nmax) */
    double target;          /* seconds one sample should last, about */
    double budget;          /* stop sampling after this many seconds (0: never) */
};

struct pm_options {
    struct pm_config cfg;
    int save;               /* write the parameters file */
    char save_path[4096];   /* "" : $SUPERSTEP_PARAMS or ~/.superstep/params.txt */
    char out_dir[4096];
    char json_path[4096];   /* "" : out_dir/probe.json */
    char engine[SSTEP_PARAM_ENGINE_LEN];
    int plot;
    int help;
    int force_save;         /* --force-save: save even rows pm_check_fits refuses */
    int test_bad_fit;       /* hidden --test-bad-fit: spoil the samples (tests) */
    size_t llc, ram;        /* the machine's last-level cache and memory, bytes */
};

/* Defaults for a machine with this last-level cache (bytes) and RAM. */
void pm_default_options(struct pm_options *o, size_t llc_bytes, size_t ram_bytes,
        const char *engine_env);
/* Parse argv (after the defaults). Returns 0, or -1 with a message in err. */
int pm_parse_options(struct pm_options *o, int argc, char **argv, char *err, size_t errlen);
/* "64K", "1M", "2G", "4096" (binary suffixes) -> bytes; -1 if malformed */
int pm_parse_size(const char *s, size_t *out);
void pm_usage(FILE *f);

/* ------------------------------------------------------------------ */
/* Traffic: who sends how many bytes to whom, in which messages         */
/* ------------------------------------------------------------------ */

struct pm_traffic {
    unsigned p;
    size_t *M;        /* [p*p]: bytes from s to d (M[s*p + d]) */
    size_t chunk;     /* messages of at most this many bytes (0: one per entry) */
    int overlap;      /* every source writes at offset 0 of the destination */
    int compute;      /* an elementary computation before the sync (As Test 2) */
    size_t copy;      /* bytes every process memcpy's locally before the sync */
    /* derived by pm_traffic_finish */
    size_t h;         /* h-relation in bytes: max_s max(sent, received) */
    size_t msgs;      /* max_s max(messages sent, messages received) */
    size_t min_msg;   /* smallest message (0: no message) */
    size_t max_row, max_col;
};

struct pm_put { unsigned dst; size_t src_off, dst_off, size; };

/* Allocate M (zeroed); -1 if out of memory. */
int pm_traffic_init(struct pm_traffic *t, unsigned p);
void pm_traffic_free(struct pm_traffic *t);
void pm_traffic_finish(struct pm_traffic *t);
/* Number of messages process s sends. */
size_t pm_traffic_count(const struct pm_traffic *t, unsigned s);

/* Calls put(arg, dst, src_off, dst_off, size) for every message of process
 * s, in issue order: chunked traffic goes round robin over the destinations
 * s+1, s+2, ... (like bspbench); the source is read in order; at the
 * destination, source s's data land after those of sources < s (or at 0
 * with overlap). Stops at, and returns, the first non-zero result of put.
 * Inline, so that a probe issuing puts through it pays no call and no
 * memory for a list of messages. */
typedef int (*pm_put_fn)(void *arg, unsigned dst, size_t src_off, size_t dst_off, size_t size);
static inline int pm_traffic_for_each(const struct pm_traffic *t, unsigned s, pm_put_fn put, void *arg)
{
    const unsigned p = t->p;
    const size_t *row = t->M + (size_t)s * p;
    const size_t *base = t->M + (size_t)p * p + (size_t)s * p;
    size_t soff = 0;
    int rc;
    if (!t->chunk) {
        for (unsigned k = 0; k < p; ++k) {
            unsigned d = s + 1 + k < p ? s + 1 + k : s + 1 + k - p;
            if (!row[d]) continue;
            if ((rc = put(arg, d, soff, base[d], row[d]))) return rc;
            soff += row[d];
        }
        return 0;
    }
    size_t longest = 0;
    unsigned active = 0, only = 0;
    for (unsigned d = 0; d < p; ++d) {
        if (row[d] > longest) longest = row[d];
        if (row[d]) { ++active; only = d; }
    }
    if (active == 1) {   /* one destination: no round robin to keep */
        for (size_t at = 0; at < longest; at += t->chunk) {
            size_t sz = longest - at < t->chunk ? longest - at : t->chunk;
            if ((rc = put(arg, only, at, base[only] + at, sz))) return rc;
        }
        return 0;
    }
    for (size_t at = 0; at < longest; at += t->chunk)
        for (unsigned k = 0; k < p; ++k) {
            unsigned d = s + 1 + k < p ? s + 1 + k : s + 1 + k - p;
            if (row[d] <= at) continue;
            size_t sz = row[d] - at < t->chunk ? row[d] - at : t->chunk;
            if ((rc = put(arg, d, soff, base[d] + at, sz))) return rc;
            soff += sz;
        }
    return 0;
}
/* The messages of pm_traffic_for_each as a list; `out` has room for
 * pm_traffic_count(t, s). Returns the count. */
size_t pm_traffic_puts(const struct pm_traffic *t, unsigned s, struct pm_put *out);

/* ------------------------------------------------------------------ */
/* The plan: series of points, each sampled several times               */
/* ------------------------------------------------------------------ */

enum pm_kind {
    PM_BSPBENCH,     /* x words of 8 B, one-word puts to the p-1 others */
    PM_LPF,          /* total exchange of x words of `w` bytes */
    PM_AS_TEST,      /* As Tests 1..5 (x = test number) */
    PM_AS_TE,        /* As total exchange of x ints (one put per destination) */
    PM_PATTERN,      /* model compliance: pattern `pattern` with h = x bytes */
    PM_COPY          /* baseline: every process memcpy's x bytes, empty sync */
};

enum pm_pattern {
    PAT_TOTAL_EXCHANGE, PAT_RING, PAT_ONE_TO_ALL, PAT_ALL_TO_ONE,
    PAT_RANDOM_SPARSE, PAT_TINY_PUTS, PAT_BIG_PUTS, PAT_OVERLAP, PAT_COUNT
};
const char *pm_pattern_name(int pattern);
const char *pm_pattern_text(int pattern);   /* one line: what it is */
extern const char *const pm_as_test_names[5];

struct pm_point {
    double x;        /* nominal size in the series' unit */
    double h;        /* h-relation in bytes */
    double msg;      /* smallest message in bytes (0: none) */
    double msgs;     /* most messages one process sends or receives */
    unsigned reps;   /* supersteps timed together for one sample */
    int key;         /* one of the LPF way's T(0), T(p), T(2p), T(nmax) */
    size_t n;        /* samples wanted and taken */
    double *t;       /* [n] seconds per superstep */
    /* analysis */
    double est, lo, hi;    /* trimmed mean, 95% bootstrap interval */
    double pred;           /* g(m) h + l(m) from the measured parameters */
};

struct pm_series {
    int kind;            /* enum pm_kind */
    int pattern;         /* PM_PATTERN: enum pm_pattern; PM_AS_TEST: unused */
    double w;            /* bytes per unit of x */
    char name[40];
    size_t npts;
    struct pm_point *pt;
};

/* Derived figures */
struct pm_ci { double est, lo, hi; };

struct pm_lpf_result {
    double w, nmax;              /* word size, n_max in words */
    struct pm_ci g, l;           /* seconds per byte, seconds */
    struct pm_fit slope;         /* least squares over h >= 2p (seconds per byte) */
    double fit_factor;           /* largest T/pred over the points h >= 2p, pred =
                                    g h + l of this word size's row (NaN: no row) */
};

struct pm_pattern_result {
    struct pm_fit fit;           /* own affine fit, relative weights */
    double h_bw;                 /* smallest h that is bandwidth-bound: g(m) h >= l(m) */
    size_t n_bw;                 /* points with h >= h_bw */
    double ratio_min, ratio_med, ratio_max;   /* measured / predicted over those */
    double fit_err;              /* largest |measured/own fit - 1| over those */
    int affine;                  /* fit_err <= 0.25 */
    int within;                  /* every ratio in [0.75, 1.25] */
    size_t n_above;              /* points measured above 1.25 x the model */
    size_t n_slow;               /* ... with their whole 95% interval above it */
    /* the same out of cache (where the copy baseline runs at memory speed) */
    size_t n_oc;
    double oc_ratio_min, oc_ratio_max, oc_fit_err;
    struct pm_fit oc_fit;        /* own affine fit over those points */
    double copy_min, copy_max;   /* measured / copy baseline over the bandwidth-bound points */
};

#define PM_NWORDS 4
#define PM_R_NS 11               /* DAXPY lengths 1, 2, 4, ..., 1024 */
extern const double pm_word_sizes[PM_NWORDS];

struct pm_results {
    struct pm_config cfg;
    char engine[SSTEP_PARAM_ENGINE_LEN];
    unsigned p;                  /* processes that ran */
    unsigned cores;
    size_t llc_bytes;
    double wall_seconds;
    size_t tasks, tasks_done;    /* samples planned and taken (a time budget may stop early) */
    double others_cpu;           /* share of the machine's CPU time other processes
                                    used during the run (NaN: unknown) */
    double steal;                /* share stolen by the hypervisor (NaN: unknown) */
    double procs_cpu;            /* CPU seconds the BSP processes used, summed */
    int failed;
    /* the plan and its samples */
    size_t nseries;
    struct pm_series *series;
    /* r */
    double r_by_n[PM_R_NS];      /* flop/s, mean over processes */
    double r_min, r_max;         /* at n = 1024, over processes */
    double memcpy_spb[PM_NWORDS];/* seconds per byte copying words of each size (pid 0) */
    /* analysis */
    double r;                    /* flop/s (n = 1024, mean over processes) */
    struct pm_ci bsp_g, bsp_l;   /* bspbench way: seconds per 8-byte word, seconds */
    struct pm_fit bsp_fit, bsp_fit0;   /* h in [p, hmax] and [0, p] */
    struct pm_lpf_result lpf[PM_NWORDS];
    int nlpf;
    struct pm_ci as_test[5];
    struct pm_pattern_result pat[PAT_COUNT];
    double cache_h;              /* largest h at which the copy baseline is still
                                    in cache (per byte < 0.75 x the largest h's) */
    struct sstep_param_row rows[PM_NWORDS];
    size_t nrows;
};

/* Build the plan for p processes (every process builds the same one).
 * Returns 0 or -1 (out of memory). */
int pm_plan(struct pm_results *res, const struct pm_config *cfg, unsigned p,
        const char *engine);
void pm_results_free(struct pm_results *res);
struct pm_series *pm_find_series(struct pm_results *res, int kind, int pattern, double w);

/* The traffic of point i of a series (seeded for the random pattern). */
int pm_point_traffic(const struct pm_series *s, size_t i, unsigned p, uint64_t seed,
        struct pm_traffic *t);

/* Supersteps per sample: about cfg->target seconds by a fixed cost guess,
 * so every process computes the same number. */
unsigned pm_reps(const struct pm_config *cfg, double h, double msgs);

/* The order of all samples: (series, point, sample) triples shuffled with
 * the seed. Returns the count; *out is malloc'ed (NULL and 0 on failure). */
struct pm_task { uint32_t series, point, sample; };
size_t pm_schedule(const struct pm_results *res, uint64_t seed, struct pm_task **out);

/* Largest bytes a process sends or receives in any superstep of the plan,
 * and most messages (issued + received) in any superstep. */
void pm_plan_extent(const struct pm_results *res, size_t *bytes, size_t *msgs);

/* Everything derived from the samples: estimates, intervals, fits, the
 * parameter rows and the per-pattern verdicts. `boot` bootstrap resamples. */
void pm_analyse(struct pm_results *res, unsigned boot);

/* 1 if other processes (or the hypervisor) took more than 10% of the CPU. */
int pm_busy_warning(const struct pm_results *res);
/* One phrase: does the model hold for this pattern, and if not, how not. */
const char *pm_pattern_verdict(const struct pm_pattern_result *R);

/* Whether the figures are fit to save. Refused (`refuse` counts the
 * problems): a word size of the LPF way whose g or l is not positive, whose
 * g has a 95% interval wider than a factor of PM_G_SPREAD_MAX, or whose
 * g h + l lies below a measured point of its series (h >= 2p) by more than
 * a factor of PM_FIT_FACTOR_MAX. (Points below the line are no problem:
 * volumes in cache are faster than the out-of-cache g.) Negative g or l of
 * the bspbench way or of a pattern's own fit only warn. `text` holds one
 * line per problem ("" when none). */
#define PM_FIT_FACTOR_MAX 2.0
#define PM_G_SPREAD_MAX 2.0
struct pm_fit_check {
    int refuse, warn;
    char text[4096];
};
void pm_check_fits(const struct pm_results *res, struct pm_fit_check *c);
/* What to do about a refused fit (one paragraph, ends with a newline). */
void pm_fit_advice(FILE *f, const struct pm_results *res);
/* Spoil the samples of the LPF way's 8-byte series so that its g comes out
 * negative (bspprobe --test-bad-fit, for the tests of the refusal). */
void pm_test_bad_fit(struct pm_results *res);

/* Output */
void pm_print_summary(FILE *f, const struct pm_results *res);
void pm_write_json(FILE *f, const struct pm_results *res);
/* gnuplot data and script in dir (probe.dat, probe.gp drawing probe.svg and
 * probe.png). Returns 0 or -1. */
int pm_write_plot_files(const char *dir, const struct pm_results *res);

/* Parameters file: read `path` (missing file: empty), drop the rows of
 * (engine, p) of `rows`, add `rows`, write back atomically (tmp + rename),
 * creating the directory. Returns 0 or -1 with a message in err. */
int pm_save_params(const char *path, const struct sstep_param_row *rows, size_t n,
        const char *comment, char *err, size_t errlen);
/* Read all valid rows of a file (normalized). Returns the count or -1. */
long pm_load_params(const char *path, struct sstep_param_row *rows, size_t cap);
/* Where lpf_probe looks: $SUPERSTEP_PARAMS, else $HOME/.superstep/params.txt
 * (0), or -1 when neither is set. */
int pm_default_params_path(char *buf, size_t len);
/* mkdir -p; 0 or -1 (errno set) */
int pm_mkdirs(const char *dir);

#ifdef __cplusplus
}
#endif

#endif
