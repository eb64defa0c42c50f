/*
 * bspprobe's timing-free half (probe_model.h): The command line: defaults, parsing, the usage text.
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
/* Options                                                              */
/* ------------------------------------------------------------------ */


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

int pm_errf(char *err, size_t len, const char *fmt, ...)
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
"Usage: bspprobe [options]\n"
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
"  --force-save[=PATH] like --save[=PATH], but saves figures the checks\n"
"                      refuse too\n"
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
            if (len >= sizeof name) return pm_errf(err, errlen, "unknown option %s", a);
            memcpy(name, a, len);
            name[len] = '\0';
            if (eq) val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        /* options without a value: "--quick=yes" is an error, not --quick */
        static const char *const flags[] = { "-h", "--help", "--quick", "--no-plot",
            "--test-bad-fit" };
        int flag = 0;
        for (size_t k = 0; k < sizeof flags / sizeof *flags; ++k) flag |= !strcmp(name, flags[k]);
        if (flag && val)
            return pm_errf(err, errlen, "option %s takes no value (given '%s')", name, val);
        if (!strcmp(name, "-h") || !strcmp(name, "--help")) { o->help = 1; continue; }
        if (!strcmp(name, "--quick")) { quick_seen = 1; continue; }
        if (!strcmp(name, "--no-plot")) { o->plot = 0; continue; }
        if (!strcmp(name, "--test-bad-fit")) { o->test_bad_fit = 1; continue; }
        if (!strcmp(name, "--save") || !strcmp(name, "--force-save")) {
            o->save = 1;
            if (name[2] == 'f') o->force_save = 1;
            if (val) {
                if (!*val) return pm_errf(err, errlen, "%s= needs a path", name);
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
        if (!known) return pm_errf(err, errlen, "unknown option %s (try --help)", name);
        if (!val) {
            if (i + 1 >= argc) return pm_errf(err, errlen, "option %s needs a value", name);
            val = argv[++i];
        }
        unsigned long long u;
        size_t z;
        if (!strcmp(name, "-p") || !strcmp(name, "--procs")) {
            if (parse_uint(val, 1u << 20, &u) || u == 0)
                return pm_errf(err, errlen, "%s: bad process count '%s'", name, val);
            c->p = (unsigned)u;
        } else if (!strcmp(name, "--out")) {
            if (!*val) return pm_errf(err, errlen, "--out needs a directory");
            snprintf(o->out_dir, sizeof o->out_dir, "%s", val);
        } else if (!strcmp(name, "--json")) {
            if (!*val) return pm_errf(err, errlen, "--json needs a path");
            snprintf(o->json_path, sizeof o->json_path, "%s", val);
        } else if (!strcmp(name, "--only")) {
            if (parse_parts(val, &c->parts))
                return pm_errf(err, errlen, "bad --only '%s' (r,bspbench,lpf,as,patterns)", val);
        } else if (!strcmp(name, "--seed")) {
            if (parse_uint(val, ULLONG_MAX, &u)) return pm_errf(err, errlen, "--seed: bad seed '%s'", val);
            c->seed = u;
        } else if (!strcmp(name, "--samples")) {
            if (parse_uint(val, 100000, &u) || u == 0) return pm_errf(err, errlen, "bad --samples '%s'", val);
            c->samples = (unsigned)u;
            set |= S_SAMP;
        } else if (!strcmp(name, "--key-samples")) {
            if (parse_uint(val, 100000, &u) || u == 0) return pm_errf(err, errlen, "bad --key-samples '%s'", val);
            c->key_samples = (unsigned)u;
            set |= S_KEY;
        } else if (!strcmp(name, "--volume")) {
            if (pm_parse_size(val, &z) || z < 64) return pm_errf(err, errlen, "bad --volume '%s'", val);
            c->volume = (double)z;
            set |= S_VOL;
        } else if (!strcmp(name, "--max-msgs")) {
            if (parse_uint(val, 1u << 28, &u) || u < 16) return pm_errf(err, errlen, "bad --max-msgs '%s' (16 .. 256M)", val);
            c->max_msgs = (size_t)u;
            set |= S_MSGS;
        } else if (!strcmp(name, "--bsp-hmax")) {
            if (parse_uint(val, 1u << 24, &u) || u < 8) return pm_errf(err, errlen, "bad --bsp-hmax '%s'", val);
            c->bsp_hmax = (size_t)u;
            set |= S_BSP;
        } else if (!strcmp(name, "--pattern-hmax")) {
            if (pm_parse_size(val, &z) || z < 1024) return pm_errf(err, errlen, "bad --pattern-hmax '%s'", val);
            c->pat_hmax = z;
            set |= S_PAT;
        } else if (!strcmp(name, "--as-hmax")) {
            if (parse_uint(val, 1u << 28, &u) || u < 1) return pm_errf(err, errlen, "bad --as-hmax '%s'", val);
            c->as_hmax = (size_t)u;
            set |= S_AS;
        } else if (!strcmp(name, "--budget")) {
            char *end;
            double b = strtod(val, &end);
            if (*end || !(b >= 0) || b > 1e6) return pm_errf(err, errlen, "bad --budget '%s' (seconds, 0: none)", val);
            c->budget = b;
        } else if (!strcmp(name, "--engine")) {
            if (!*val || strlen(val) >= sizeof o->engine || strchr(val, ' '))
                return pm_errf(err, errlen, "--engine: bad engine name '%s'", val);
            snprintf(o->engine, sizeof o->engine, "%s", val);
        } else {
            return pm_errf(err, errlen, "unknown option %s (try --help)", name);
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
