/*
 * Machine parameters: the number of processors, and the g and l that
 * lpf_probe reports. g and l come from the file the probe tool saves
 * (bspprobe --save), else from a built-in estimate. Both are pure functions
 * of their arguments and of data loaded once, so every process computes
 * bit-identical values.
 */
#define _GNU_SOURCE
#include "core_internal.h"

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
        }
    }
    if (!p) p = sstep_online_cores();
    __atomic_store_n(&cached, p, __ATOMIC_RELAXED);
    return p;
}

/* ------------------------------------------------------------------ */
/* g and l                                                              */
/* ------------------------------------------------------------------ */

/* Saved parameters: lines "engine p msg_size g_seconds_per_byte l_seconds".
 * For a query (p, m) we take the entry of the same engine with the nearest p
 * (ties: larger) and the largest msg_size <= max(m,1) (or the smallest). */
struct param_row { char engine[16]; unsigned p; double m, g, l; };

static struct {
    pthread_once_t once;
    struct param_row *rows;
    size_t n;
    char engine[16];
} params = { PTHREAD_ONCE_INIT, NULL, 0, "pthread" };

SSTEP_HIDDEN const char *sstep_params_path(char *buf, size_t len);
const char *sstep_params_path(char *buf, size_t len)
{
    const char *env = getenv("SUPERSTEP_PARAMS");
    if (env && *env) { snprintf(buf, len, "%s", env); return buf; }
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    snprintf(buf, len, "%s/.superstep/params.txt", home);
    return buf;
}

static void load_params(void)
{
    char path[4096];
    const struct sstep_engine *e = sstep_default_engine();
    if (e && e->name) snprintf(params.engine, sizeof params.engine, "%s", e->name);
    if (!sstep_params_path(path, sizeof path)) return;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[512];
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        struct param_row r;
        if (line[0] == '#') continue;
        if (sscanf(line, "%15s %u %lf %lf %lf", r.engine, &r.p, &r.m, &r.g, &r.l) != 5) continue;
        if (!(r.g > 0) || !(r.l > 0) || !isfinite(r.g) || !isfinite(r.l) || r.p == 0) continue;
        if (params.n == cap) {
            cap = cap ? cap * 2 : 16;
            struct param_row *nr = realloc(params.rows, cap * sizeof *nr);
            if (!nr) break;
            params.rows = nr;
        }
        params.rows[params.n++] = r;
    }
    fclose(f);
}

static const struct param_row *lookup(lpf_pid_t p, size_t m)
{
    pthread_once(&params.once, load_params);
    const struct param_row *best = NULL;
    unsigned bestp = 0;
    /* nearest p of this engine */
    for (size_t i = 0; i < params.n; ++i) {
        const struct param_row *r = &params.rows[i];
        if (strcmp(r->engine, params.engine) != 0) continue;
        unsigned d = r->p > p ? r->p - p : p - r->p;
        unsigned bd = bestp > p ? bestp - p : p - bestp;
        if (!best || d < bd || (d == bd && r->p > bestp)) { best = r; bestp = r->p; }
    }
    if (!best) return NULL;
    /* among rows with that p: largest msg size <= m, else the smallest */
    const struct param_row *pick = NULL, *smallest = NULL;
    double mm = m == 0 ? 1.0 : (double)m;
    for (size_t i = 0; i < params.n; ++i) {
        const struct param_row *r = &params.rows[i];
        if (strcmp(r->engine, params.engine) != 0 || r->p != bestp) continue;
        if (!smallest || r->m < smallest->m) smallest = r;
        if (r->m <= mm && (!pick || r->m > pick->m)) pick = r;
    }
    return pick ? pick : smallest;
}

/* Built-in estimates for a shared-memory machine: a per-byte cost of about
 * 0.2 ns plus a per-message overhead of 8 ns spread over the message size;
 * a latency growing with log p and, beyond the core count, with p. */
static double est_g(lpf_pid_t p, size_t m)
{
    (void)p;
    double mm = m == 0 ? 1.0 : (double)m;
    if (mm > 1e18) mm = 1e18;
    return 2e-10 + 8e-9 / mm;
}

static double est_l(lpf_pid_t p)
{
    double cores = (double)sstep_online_cores();
    double lg = 1.0;
    for (lpf_pid_t q = 1; q < p; q *= 2) lg += 1.0;
    double l = 1e-7 * lg;
    if ((double)p > cores) l += 2e-6 * ((double)p - cores);
    return l;
}

static double machine_g(lpf_pid_t p, size_t m, lpf_sync_attr_t attr)
{
    (void)attr;
    if (p == 0) p = 1;
    const struct param_row *r = lookup(p, m);
    return r ? r->g : est_g(p, m);
}

static double machine_l(lpf_pid_t p, size_t m, lpf_sync_attr_t attr)
{
    (void)attr;
    if (p == 0) p = 1;
    const struct param_row *r = lookup(p, m);
    return r ? r->l : est_l(p);
}

SSTEP_HIDDEN void sstep_fill_machine(lpf_machine_t *m);
void sstep_fill_machine(lpf_machine_t *m)
{
    m->g = machine_g;
    m->l = machine_l;
}
