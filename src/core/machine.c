/*
 * Machine parameters: the number of processors, and the g and l that
 * lpf_probe reports. g and l come from the file the probe tool saves
 * (bspprobe --save), else from a built-in estimate. Both are pure functions
 * of their arguments and of data loaded once, so every process computes
 * bit-identical values.
 */
#define _GNU_SOURCE
#include "core_internal.h"
#include "machine_params.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The cores this program may use, counted once when the library is loaded:
 * a later call from a thread that the engine has pinned to one core would
 * otherwise see 1 (and make every barrier yield instead of spin). */
static unsigned online_cores_cached;

static unsigned count_online_cores(void)
{
    unsigned c = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) c = (unsigned)CPU_COUNT(&set);
    if (c == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c = n > 0 ? (unsigned)n : 1;
    }
    return c;
}

__attribute__((constructor)) static void init_online_cores(void)
{
    __atomic_store_n(&online_cores_cached, count_online_cores(), __ATOMIC_RELAXED);
}

unsigned sstep_online_cores(void)
{
    unsigned c = __atomic_load_n(&online_cores_cached, __ATOMIC_RELAXED);
    if (SSTEP_UNLIKELY(c == 0)) {
        c = count_online_cores();
        __atomic_store_n(&online_cores_cached, c, __ATOMIC_RELAXED);
    }
    return c;
}

/* LPF_MAX_PROCS (upstream's variable, set by launchers) or SUPERSTEP_NPROCS
 * override the number of cores. */
static _Atomic int warned_max_procs;

lpf_pid_t sstep_machine_p(void)
{
    static lpf_pid_t cached;
    lpf_pid_t p = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (p) return p;
    const char *names[] = { "LPF_MAX_PROCS", "SUPERSTEP_NPROCS" };
    for (size_t i = 0; i < 2 && !p; ++i) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            char *end;
            unsigned long x = strtoul(v, &end, 10);
            if (*end == '\0' && x >= 1 && x <= 1u << 20) p = (lpf_pid_t)x;
            else if (!atomic_exchange(&warned_max_procs, 1)) sstep_warn("%s=%s is not a number of processes (1 to %u); ignored", names[i],
                    v, 1u << 20);
        }
    }
    if (!p) p = sstep_online_cores();
    __atomic_store_n(&cached, p, __ATOMIC_RELAXED);
    return p;
}

/* ------------------------------------------------------------------ */
/* g and l                                                              */
/* ------------------------------------------------------------------ */

/* Saved parameters (machine_params.h has the format and the lookup rules),
 * loaded once: the rows of the engine new sections start on, normalized. */
static struct {
    pthread_once_t once;
    struct sstep_param_row *rows;
    size_t n;
    char engine[SSTEP_PARAM_ENGINE_LEN];
} params = { PTHREAD_ONCE_INIT, NULL, 0, "pthread" };

static void load_params(void)
{
    char path[4096];
    const struct sstep_engine *e = sstep_default_engine();
    if (e && e->name) snprintf(params.engine, sizeof params.engine, "%s", e->name);
    if (!sstep_param_path(path, sizeof path)) return;
    const char *from = getenv("SUPERSTEP_PARAMS") && *getenv("SUPERSTEP_PARAMS")
        ? "SUPERSTEP_PARAMS=" : "";
    char why[256], line[SSTEP_PARAM_LINE_MAX];
    size_t len = 0, pos = 0, cap = 0;
    int err;
    char *buf = sstep_param_slurp(path, &len, &err, why, sizeof why);
    if (!buf) {
        /* no saved parameters (the usual case without bspprobe --save) is
         * silent; a file that is there but cannot serve is not */
        if (err != ENOENT)
            sstep_warn("machine parameters %s%s: %s; lpf_probe uses built-in estimates",
                    from, path, why);
        return;
    }
    unsigned lineno = 0, bad_line = 0, nbad = 0;
    char bad_why[256] = "";
    while (sstep_param_line(buf, len, &pos, line)) {
        ++lineno;
        struct sstep_param_row r;
        int rc = sstep_param_check(line, &r, why, sizeof why);
        if (rc < 0 && nbad++ == 0) {
            bad_line = lineno;
            snprintf(bad_why, sizeof bad_why, "%s", why);
        }
        if (rc != 1 || strcmp(r.engine, params.engine) != 0) continue;
        if (params.n == cap) {
            cap = cap ? cap * 2 : 16;
            struct sstep_param_row *nr = realloc(params.rows, cap * sizeof *nr);
            if (!nr) break;
            params.rows = nr;
        }
        params.rows[params.n++] = r;
    }
    free(buf);
    if (nbad)
        sstep_warn("machine parameters %s%s, line %u: %s; %u line%s rejected, lpf_probe uses "
                "the other rows (else built-in estimates)", from, path, bad_line, bad_why, nbad,
                nbad == 1 ? "" : "s");
    params.n = sstep_param_normalize(params.rows, params.n);
}

/* Built-in estimates for a shared-memory machine, from bspprobe on a 2-core
 * KVM guest (docs/probe.md): a per-byte cost of 0.2 ns (memory speed, out
 * of cache) plus a per-message overhead of 24 ns spread over the message
 * size; a latency of 0.5 us per level of log p (1 us for a non-empty
 * superstep at p = 2: two barriers and the reads of the peers' queues) and,
 * beyond the core count, 2 us per extra process. */
static double est_g(lpf_pid_t p, size_t m)
{
    (void)p;
    double mm = m == 0 ? 1.0 : (double)m;
    if (mm > 1e18) mm = 1e18;
    return 2e-10 + 24e-9 / mm;
}

static double est_l(lpf_pid_t p)
{
    double cores = (double)sstep_online_cores();
    double lg = 1.0;
    for (unsigned long long q = 1; q < p; q *= 2) lg += 1.0;   /* no wrap for p > 2^31 */
    double l = 5e-7 * lg;
    if ((double)p > cores) l += 2e-6 * ((double)p - cores);
    return l;
}

/* Saved g and l for (p, m); 0 if nothing was saved for this engine. Beyond
 * the largest measured p, that p's figures are scaled as the built-in
 * estimate grows with p. */
static int saved(lpf_pid_t p, size_t m, double *g, double *l)
{
    pthread_once(&params.once, load_params);
    size_t first, count;
    unsigned q = sstep_param_select(params.rows, params.n, params.engine, p, &first, &count);
    if (q == 0) return 0;
    sstep_param_at(params.rows + first, count, m, g, l);
    if (p > q) {
        *g *= est_g(p, m) / est_g(q, m);
        *l *= est_l(p) / est_l(q);
    }
    return 1;
}

/* lpf_probe's values are finite and > 0 (docs/probe.md): the rows are
 * bounded, and anything else falls back to the estimate */
static double machine_g(lpf_pid_t p, size_t m, lpf_sync_attr_t attr)
{
    (void)attr;
    if (p == 0) p = 1;
    double g, l;
    if (saved(p, m, &g, &l) && isfinite(g) && g > 0) return g;
    return est_g(p, m);
}

static double machine_l(lpf_pid_t p, size_t m, lpf_sync_attr_t attr)
{
    (void)attr;
    if (p == 0) p = 1;
    double g, l;
    if (saved(p, m, &g, &l) && isfinite(l) && l > 0) return l;
    return est_l(p);
}

SSTEP_HIDDEN void sstep_fill_machine(lpf_machine_t *m);
void sstep_fill_machine(lpf_machine_t *m)
{
    m->g = machine_g;
    m->l = machine_l;
}
