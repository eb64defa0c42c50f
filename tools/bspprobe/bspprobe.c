/*
 * bspprobe: measures this machine's BSP parameters p, r, g, l on the engine
 * the library runs, and checks that a superstep costs g*h + l for several
 * communication patterns. Written against the public <lpf/core.h> only, so
 * it runs on any engine: the pthread engine by default, the MPI engine with
 * SUPERSTEP_ENGINE=mpi under mpirun / bsprun.
 *
 * This file only times things: it runs the plan of probe_model.h (every
 * process builds the same plan from the configuration process 0 broadcasts,
 * and takes the samples in the same random order) and fills in the samples;
 * the probe_*.c files do all statistics and output. See docs/probe.md.
 */
#define _GNU_SOURCE
#include <lpf/core.h>

#include "probe_model.h"
#include "prof_internal.h"   /* pf_doc_dir (src/prof/docdir.c) */

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* what process 0 broadcasts */
struct bcast {
    struct pm_config cfg;
    char engine[SSTEP_PARAM_ENGINE_LEN];
};

/* process 0's link to main */
struct run {
    const struct pm_options *opts;
    struct pm_results *res;
    int error;
    char why[256];
};

/* CPU seconds of the calling thread: a BSP process is a thread of the
 * pthread engine and the main thread of an MPI rank */
static double thread_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru)) return NAN;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec
         + (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* ------------------------------------------------------------------ */
/* r: DAXPY (bspbench) and memcpy (LPF's normalisation)                 */
/* ------------------------------------------------------------------ */

static __thread volatile double fool;   /* keeps the kernels' results alive (per process) */

static void daxpy_rates(double *rates, int quick)
{
    enum { N = 1 << (PM_R_NS - 1) };
    static __thread double x[N], y[N], z[N];
    const double alpha = 1.0 / 3.0, beta = 4.0 / 9.0;
    const double flops_per_n = quick ? 1e6 : 8e6;
    for (int k = 0; k < PM_R_NS; ++k) {
        int n = 1 << k;
        for (int i = 0; i < n; ++i) z[i] = y[i] = x[i] = (double)i;
        long iters = (long)(flops_per_n / (4.0 * n));
        if (iters < 1) iters = 1;
        double t0 = now();
        for (long it = 0; it < iters; ++it) {
            for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
            for (int i = 0; i < n; ++i) z[i] -= beta * x[i];
        }
        double t = now() - t0;
        rates[k] = t > 0 ? 4.0 * (double)iters * n / t : NAN;
        fool = y[n - 1] + z[n - 1];
    }
}

/* seconds per byte of memcpy in blocks of w bytes over `bytes` (best of 3) */
static double memcpy_rate(char *dst, const char *src, size_t bytes, size_t w)
{
    volatile size_t vw = w;   /* a real call of the size, not an inlined move */
    size_t n = bytes / w;
    if (n == 0) n = 1;
    double best = INFINITY;
    for (int rep = 0; rep < 3; ++rep) {
        double t0 = now();
        for (size_t i = 0; i < n; ++i) memcpy(dst + i * w, src + i * w, vw);
        double t = now() - t0;
        if (t < best) best = t;
    }
    fool = dst[0];
    return best / ((double)n * (double)w);
}

/* ------------------------------------------------------------------ */
/* The SPMD part                                                        */
/* ------------------------------------------------------------------ */

/* issue process s's puts of a traffic straight from its description (no
 * list of messages to read: the probe measures the library, not itself) */
struct issuer { lpf_t ctx; lpf_memslot_t src, dst; };

static int put_one(void *arg, unsigned d, size_t src_off, size_t dst_off, size_t size)
{
    const struct issuer *is = arg;
    return lpf_put(is->ctx, is->src, src_off, d, is->dst, dst_off, size, LPF_MSG_DEFAULT) != LPF_SUCCESS;
}

static int issue(struct issuer *is, const struct pm_traffic *t, unsigned s)
{
    return pm_traffic_for_each(t, s, put_one, is);
}

static void fail(struct run *run, const char *why)
{
    if (run && !run->error) {
        run->error = 1;
        snprintf(run->why, sizeof run->why, "%s", why);
    }
}

#define SYNC(ctx) do { if (lpf_sync((ctx), LPF_SYNC_DEFAULT) != LPF_SUCCESS) { \
    fail(run, "lpf_sync failed"); goto out; } } while (0)

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    struct run *run = s == 0 ? (struct run *)args.output : NULL;
    struct bcast bc;
    memset(&bc, 0, sizeof bc);
    if (s == 0) {
        bc.cfg = run->opts->cfg;
        snprintf(bc.engine, sizeof bc.engine, "%s", run->opts->engine);
    }
    struct pm_results local;
    struct pm_results *res = s == 0 ? run->res : &local;
    memset(&local, 0, sizeof local);
    char *src = NULL, *dst = NULL;
    struct pm_task *tasks = NULL;
    double *gather = NULL;
    const size_t K = PM_R_NS + PM_NWORDS + 1;   /* per process: r figures, CPU time */
    const double cpu0 = thread_cpu_seconds();

    /* broadcast the configuration */
    lpf_memslot_t bc_slot;
    if (lpf_resize_memory_register(ctx, 8) != LPF_SUCCESS
            || lpf_resize_message_queue(ctx, 2 * (size_t)p + 8) != LPF_SUCCESS) {
        fail(run, "out of memory");
        return;
    }
    SYNC(ctx);
    lpf_register_global(ctx, &bc, sizeof bc, &bc_slot);
    SYNC(ctx);
    if (s == 0)
        for (lpf_pid_t d = 1; d < p; ++d)
            lpf_put(ctx, bc_slot, 0, d, bc_slot, 0, sizeof bc, LPF_MSG_DEFAULT);
    SYNC(ctx);
    lpf_deregister(ctx, bc_slot);
    const struct pm_config *cfg = &bc.cfg;

    /* the plan, the buffers, the capacities */
    int bad = pm_plan(res, cfg, p, bc.engine) != 0;
    size_t bytes = 0, msgs = 0;
    if (!bad) pm_plan_extent(res, &bytes, &msgs);
    size_t mc_bytes = cfg->quick ? (size_t)4 << 20 : (size_t)64 << 20;
    if (bytes < mc_bytes) bytes = mc_bytes;
    bytes = (bytes + 4095) / 4096 * 4096;
    if (!bad) {
        src = aligned_alloc(4096, bytes);
        dst = aligned_alloc(4096, bytes);
        gather = calloc((size_t)p * K, sizeof *gather);
        bad = !src || !dst || !gather;
    }
    if (!bad) {
        /* touch every page now, not inside a measurement */
        for (size_t i = 0; i < bytes; ++i) src[i] = (char)(i * 7 + s);
        memset(dst, 0, bytes);
        bad = lpf_resize_message_queue(ctx, msgs) != LPF_SUCCESS;
    }
    if (bad) {
        /* leave: the others' next sync fails, and lpf_exec reports it */
        fail(run, "out of memory for the plan, buffers or message queue (try a smaller --volume)");
        goto out;
    }
    SYNC(ctx);
    lpf_memslot_t src_slot, dst_slot, gather_slot;
    lpf_register_local(ctx, src, bytes, &src_slot);
    lpf_register_global(ctx, dst, bytes, &dst_slot);
    lpf_register_global(ctx, gather, (size_t)p * K * sizeof *gather, &gather_slot);
    SYNC(ctx);
    struct issuer is = { ctx, src_slot, dst_slot };

    /* r on every process at once, gathered at process 0 */
    if (cfg->parts & PM_PART_R) {
        double *mine = gather + (size_t)s * K;
        if (s == 0 && run->opts) fprintf(stderr, "bspprobe: r (DAXPY, memcpy) ...\n");
        daxpy_rates(mine, cfg->quick);
        size_t cb = mc_bytes / 2;
        for (int k = 0; k < PM_NWORDS; ++k)
            mine[PM_R_NS + k] = memcpy_rate(dst, src, cb, (size_t)pm_word_sizes[k]);
        if (s != 0)
            lpf_put(ctx, gather_slot, (size_t)s * K * sizeof *gather, 0, gather_slot,
                    (size_t)s * K * sizeof *gather, K * sizeof *gather, LPF_MSG_DEFAULT);
        SYNC(ctx);
        if (s == 0) {
            for (int k = 0; k < PM_R_NS; ++k) {
                double sum = 0;
                for (lpf_pid_t q = 0; q < p; ++q) sum += gather[(size_t)q * K + k];
                res->r_by_n[k] = sum / p;
            }
            res->r_min = res->r_max = gather[PM_R_NS - 1];
            for (lpf_pid_t q = 1; q < p; ++q) {
                double r = gather[(size_t)q * K + PM_R_NS - 1];
                if (r < res->r_min) res->r_min = r;
                if (r > res->r_max) res->r_max = r;
            }
            for (int k = 0; k < PM_NWORDS; ++k) res->memcpy_spb[k] = gather[PM_R_NS + k];
        }
    }

    /* warm-up: one superstep at the largest point of every series (first
     * touch of the message queue and of the engine's structures) */
    for (size_t i = 0; i < res->nseries; ++i) {
        struct pm_series *se = &res->series[i];
        if (se->npts == 0) continue;
        struct pm_traffic tr;
        if (pm_point_traffic(se, se->npts - 1, p, cfg->seed, &tr)) { fail(run, "out of memory"); goto out; }
        int bad_put = issue(&is, &tr, s);
        pm_traffic_free(&tr);
        if (bad_put) { fail(run, "lpf_put failed"); goto out; }
        SYNC(ctx);
    }

    /* the samples, in one random order on every process */
    size_t ntasks = pm_schedule(res, cfg->seed, &tasks);
    if (s == 0) fprintf(stderr, "bspprobe: %zu samples in random order ...\n", ntasks);
    double t_start = now(), next_report = t_start + 10;
    res->tasks = ntasks;
    /* process 0 decides every 16 samples whether the budget is spent; the
     * order is random, so stopping early thins out every point alike */
    int stop = 0;
    lpf_memslot_t stop_slot;
    lpf_register_global(ctx, &stop, sizeof stop, &stop_slot);
    SYNC(ctx);
    size_t k = 0;
    for (; k < ntasks; ++k) {
        if (k % 16 == 0 && cfg->budget > 0) {
            if (s == 0 && now() - t_start > cfg->budget) {
                stop = 1;
                for (lpf_pid_t d = 1; d < p; ++d)
                    lpf_put(ctx, stop_slot, 0, d, stop_slot, 0, sizeof stop, LPF_MSG_DEFAULT);
            }
            SYNC(ctx);
            if (stop) break;
        }
        struct pm_series *se = &res->series[tasks[k].series];
        struct pm_point *pt = &se->pt[tasks[k].point];
        struct pm_traffic tr;
        double t0 = 0;
        if (pm_point_traffic(se, tasks[k].point, p, cfg->seed, &tr)) { fail(run, "out of memory"); goto out; }
        const int compute = tr.compute;
        const size_t copy = tr.copy;
        /* one untimed superstep first: a program sends what it has just
         * computed or received, so its data are as warm as they can be */
        for (unsigned r = 0; r <= pt->reps; ++r) {
            if (r == 1) t0 = now();
            if (issue(&is, &tr, s)) { pm_traffic_free(&tr); fail(run, "lpf_put failed"); goto out; }
            if (compute) fool = fool * 1.0000001 + 1.0;
            if (copy) memcpy(dst, src, copy);
            if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
                pm_traffic_free(&tr);
                fail(run, "lpf_sync failed");
                goto out;
            }
        }
        double t1 = now();
        pm_traffic_free(&tr);
        if (s == 0) {
            pt->t[tasks[k].sample] = (t1 - t0) / pt->reps;
            if (t1 > next_report) {
                fprintf(stderr, "bspprobe: %3.0f%% of the samples\n", 100.0 * (double)(k + 1) / (double)ntasks);
                next_report = t1 + 10;
            }
        }
    }
    res->tasks_done = k;
    /* the CPU time every process used, for the "machine was busy" check */
    gather[(size_t)s * K + K - 1] = thread_cpu_seconds() - cpu0;
    if (s != 0)
        lpf_put(ctx, gather_slot, ((size_t)s * K + K - 1) * sizeof *gather, 0, gather_slot,
                ((size_t)s * K + K - 1) * sizeof *gather, sizeof *gather, LPF_MSG_DEFAULT);
    SYNC(ctx);
    if (s == 0) {
        res->procs_cpu = 0;
        for (lpf_pid_t q = 0; q < p; ++q) res->procs_cpu += gather[(size_t)q * K + K - 1];
    }
    lpf_deregister(ctx, stop_slot);
    lpf_deregister(ctx, gather_slot);
    lpf_deregister(ctx, dst_slot);
    lpf_deregister(ctx, src_slot);
out:
    free(tasks);
    free(gather);
    free(src);
    free(dst);
    if (s != 0) pm_results_free(&local);
}

/* ------------------------------------------------------------------ */
/* main: options, run, analysis, output                                 */
/* ------------------------------------------------------------------ */

/* machine-wide CPU jiffies from /proc/stat: busy (not idle/iowait) and steal */
static int cpu_jiffies(double *busy, double *steal, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long v[8] = { 0 };
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
            &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 8) return -1;
    *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]);
    *steal = (double)v[7];
    *total = (double)(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]);
    return 0;
}

static size_t cache_size(void)
{
    long c = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (c <= 0) c = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (c <= 0) {
        FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
        if (!f) f = fopen("/sys/devices/system/cpu/cpu0/cache/index2/size", "r");
        if (f) {
            char u = 0;
            if (fscanf(f, "%ld%c", &c, &u) >= 1) c *= u == 'K' ? 1024 : u == 'M' ? 1 << 20 : 1;
            fclose(f);
        }
    }
    return c > 0 ? (size_t)c : 0;
}

/* gnuplot -e "cd 'DIR'; load 'probe.gp'"; 0 on success */
static int run_gnuplot(const char *dir)
{
    if (strchr(dir, '\'')) return -2;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "cd '%s'; load 'probe.gp'", dir);
    char *argv[] = { "gnuplot", "-e", cmd, NULL };
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (rc) return rc == ENOENT ? -1 : -3;
    int st;
    if (waitpid(pid, &st, 0) < 0) return -3;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -3;
}

int main(int argc, char **argv)
{
    struct pm_options o;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t ram = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0;
    size_t llc = cache_size();
    pm_default_options(&o, llc, ram, getenv("SUPERSTEP_ENGINE"));
    /* a launcher (bsprun -n P) sets LPF_MAX_PROCS: measure that many */
    const char *lmp = getenv("LPF_MAX_PROCS");
    if (lmp && *lmp) {
        char *end;
        unsigned long v = strtoul(lmp, &end, 10);
        if (*end == '\0' && v >= 1 && v <= (1ul << 20)) o.cfg.p = (unsigned)v;
    }
    char err[512];
    if (pm_parse_options(&o, argc, argv, err, sizeof err)) {
        fprintf(stderr, "bspprobe: %s\n", err);
        return 2;
    }
    if (o.help) {
        char doc[4096];
        pm_usage(stdout);
        printf("\nDocumentation: %s/probe.md\n", pf_doc_dir(doc, sizeof doc, 0));
        return 0;
    }

    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(LPF_ROOT, &m);
    if (o.cfg.p > m.free_p)
        fprintf(stderr, "bspprobe: only %u processors are available; running on %u "
                "(LPF_MAX_PROCS=%u allows more)\n", m.free_p, m.free_p, o.cfg.p);
    double g_before = m.g(o.cfg.p, 8, LPF_SYNC_DEFAULT), l_before = m.l(o.cfg.p, 8, LPF_SYNC_DEFAULT);

    struct pm_results res;
    memset(&res, 0, sizeof res);
    struct run run = { &o, &res, 0, "" };
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &run;
    args.output_size = sizeof run;
    double b0, s0, j0, b1, s1, j1;
    int have_stat = cpu_jiffies(&b0, &s0, &j0) == 0;
    res.procs_cpu = NAN;
    double t0 = now();
    lpf_err_t rc = lpf_exec(LPF_ROOT, o.cfg.p, spmd, args);
    res.wall_seconds = now() - t0;
    /* how much of this machine (process 0's node) others used meanwhile */
    res.others_cpu = res.steal = NAN;
    long hz = sysconf(_SC_CLK_TCK);
    if (have_stat && cpu_jiffies(&b1, &s1, &j1) == 0 && j1 > j0 && hz > 0 && isfinite(res.procs_cpu)) {
        double own = res.procs_cpu * (double)hz;
        double other = (b1 - b0) - own;
        res.others_cpu = other > 0 ? other / (j1 - j0) : 0;
        res.steal = (s1 - s0) / (j1 - j0);
    }
    if (rc != LPF_SUCCESS || run.error) {
        fprintf(stderr, "bspprobe: the measurement failed: %s\n",
                run.error ? run.why : "lpf_exec returned an error");
        pm_results_free(&res);
        return 1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    res.cores = cores > 0 ? (unsigned)cores : 0;
    res.llc_bytes = llc;
    if (o.test_bad_fit) pm_test_bad_fit(&res);
    pm_analyse(&res, o.cfg.quick ? 200 : 1000);
    /* with the JSON on stdout, everything else goes to stderr */
    FILE *txt = strcmp(o.json_path, "-") ? stdout : stderr;
    pm_print_summary(txt, &res);

    int status = 0;
    if (pm_mkdirs(o.out_dir)) {
        fprintf(stderr, "bspprobe: cannot create %s: %s\n", o.out_dir, strerror(errno));
        status = 1;
    } else {
        char path[4200];
        if (o.json_path[0]) snprintf(path, sizeof path, "%s", o.json_path);
        else snprintf(path, sizeof path, "%s/probe.json", o.out_dir);
        FILE *jf = strcmp(path, "-") ? fopen(path, "w") : stdout;
        if (!jf) {
            fprintf(stderr, "bspprobe: cannot write %s: %s\n", path, strerror(errno));
            status = 1;
        } else {
            pm_write_json(jf, &res);
            if (jf != stdout && fclose(jf)) status = 1;
            else if (jf != stdout) fprintf(txt, "\nJSON: %s\n", path);
        }
        if (pm_write_plot_files(o.out_dir, &res)) {
            fprintf(stderr, "bspprobe: cannot write the plot files in %s\n", o.out_dir);
            status = 1;
        } else if (o.plot) {
            int g = run_gnuplot(o.out_dir);
            if (g == 0) fprintf(txt, "plot: %s/probe.svg and %s/probe.png\n", o.out_dir, o.out_dir);
            else if (g == -1)
                fprintf(txt, "plot: gnuplot not found, skipped (install it, e.g. Debian's gnuplot-nox; "
                       "then run 'gnuplot probe.gp' in %s)\n", o.out_dir);
            else fprintf(txt, "plot: gnuplot failed; the script is %s/probe.gp\n", o.out_dir);
        }
    }

    if (o.save) {
        char path[4096];
        if (o.save_path[0]) snprintf(path, sizeof path, "%s", o.save_path);
        else if (pm_default_params_path(path, sizeof path)) {
            fprintf(stderr, "bspprobe: --save: neither SUPERSTEP_PARAMS nor HOME is set\n");
            path[0] = '\0';
            status = 1;
        }
        struct pm_fit_check chk;
        pm_check_fits(&res, &chk);
        if (path[0] && res.nrows == 0) {
            fprintf(stderr, "bspprobe: --save: no g and l to save (the LPF-way part did not run)\n");
            status = 1;
        } else if (path[0] && chk.refuse && !o.force_save) {
            fprintf(stderr, "bspprobe: --save: not saved to %s: %d of the fits are not physical or "
                    "miss the measurements (see WARNING above); --force-save saves them anyway\n",
                    path, chk.refuse);
            pm_fit_advice(stderr, &res);
            status = 1;
        } else if (path[0]) {
            char comment[240];
            time_t tt = time(NULL);
            struct tm tm;
            gmtime_r(&tt, &tm);
            int cn = snprintf(comment, sizeof comment, "engine %s p %u saved by bspprobe%s on %04d-%02d-%02d %02d:%02d UTC",
                    res.engine, res.p, o.cfg.quick ? " --quick" : "", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min);
            /* r for the profiler's predictions (docs/profiler.md): a comment
             * line, so lpf_probe's parser skips it */
            if (res.r > 0 && cn > 0 && (size_t)cn < sizeof comment)
                snprintf(comment + cn, sizeof comment - (size_t)cn, "\n# r %s %u %.6g", res.engine, res.p, res.r);
            if (pm_save_params(path, res.rows, res.nrows, comment, err, sizeof err)) {
                fprintf(stderr, "bspprobe: --save: %s\n", err);
                status = 1;
            } else {
                fprintf(txt, "saved: %s (%zu rows, engine %s, p = %u); lpf_probe reads it in new programs\n"
                       "       (before: g(%u, 8 B) = %.4g s/B, l = %.4g s)\n",
                        path, res.nrows, res.engine, res.p, o.cfg.p, g_before, l_before);
            }
        }
    }
    pm_results_free(&res);
    return status;
}
