/*
 * Helpers of the RMA suites, written only against <rma.h>: broadcast of
 * the parameters from process 0, the maximum of a double and the minimum
 * of an int over all processes (one superstep each), option parsing.
 */
#ifndef SUPERSTEP_BENCH_RMA_LI_UTIL_H
#define SUPERSTEP_BENCH_RMA_LI_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rma.h>

#ifndef LI_VARIANT
# define LI_VARIANT RMA_LIBRARY
#endif

/* process 0's v[0..n) to every process */
static inline void li_bcast_u64(uint64_t *v, int n)
{
    const int p = LINPROCS();
    LIREGISTER(v, (size_t)n * sizeof *v);
    LIINIT();
    LICOMMIT();
    if (LIPID() == 0)
        for (int q = 1; q < p; q++)
            LIPUT(q, v, v, 0, (size_t)n * sizeof *v);
    LISYNC();
    LIBARRIER();
    LIDEREGISTER(v);
}

/* every process's x[0..n): process 0 gets all of them in all[p * n] */
static inline void li_gather_f64(const double *x, int n, double *all)
{
    const int p = LINPROCS(), pid = LIPID();
    LIREGISTER(all, pid == 0 ? (size_t)p * n * sizeof *all : 0);
    LIINIT();
    LICOMMIT();
    LIPUT(0, x, all, (size_t)pid * n * sizeof *x, (size_t)n * sizeof *x);
    LISYNC();
    LIBARRIER();
    LIDEREGISTER(all);
}

/* maximum over the processes of each x[i], valid at process 0 */
static inline void li_max_f64(double *x, int n)
{
    const int p = LINPROCS();
    double *all = (double *)malloc((size_t)p * n * sizeof *all);
    if (!all)
        LIABORT("out of memory\n");
    li_gather_f64(x, n, all);
    if (LIPID() == 0)
        for (int q = 1; q < p; q++)
            for (int i = 0; i < n; i++)
                if (all[q * n + i] > x[i])
                    x[i] = all[q * n + i];
    free(all);
}

/* A timed loop of nb batches of `per` repetitions: tb[0..nb] are the
 * times at the batch boundaries on each process. Returns, at process 0,
 * the median over the batches of the slowest process's mean time per
 * repetition, in microseconds (robust against a descheduled batch on a
 * shared machine). */
static inline double li_batch_median(const double *tb, int nb, unsigned per)
{
    const int p = LINPROCS();
    double *d = (double *)malloc((size_t)nb * sizeof *d);
    double *all = (double *)malloc((size_t)p * nb * sizeof *all);
    if (!d || !all)
        LIABORT("out of memory\n");
    for (int k = 0; k < nb; k++)
        d[k] = (tb[k + 1] - tb[k]) / per * 1e6;
    li_gather_f64(d, nb, all);
    double med = 0.0;
    if (LIPID() == 0) {
        for (int k = 0; k < nb; k++)
            for (int q = 1; q < p; q++)
                if (all[(size_t)q * nb + k] > all[k])
                    all[k] = all[(size_t)q * nb + k];
        for (int i = 1; i < nb; i++)   /* insertion sort: nb is small */
            for (int j = i; j > 0 && all[j] < all[j - 1]; j--) {
                double t = all[j];
                all[j] = all[j - 1];
                all[j - 1] = t;
            }
        med = nb % 2 ? all[nb / 2] : 0.5 * (all[nb / 2 - 1] + all[nb / 2]);
    }
    free(d);
    free(all);
    return med;
}

/* 1 at process 0 when every process passed ok != 0 */
static inline int li_all_ok(int ok)
{
    double v = ok ? 0.0 : 1.0;
    li_max_f64(&v, 1);
    return v == 0.0;
}

/* "-name value" pairs; argc may be 0 (processes other than 0 on the
 * Superstep MPI engine); unknown names end the program at process 0 */
static inline uint64_t li_opt(int argc, char **argv, const char *name, uint64_t dflt)
{
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], name))
            return strtoull(argv[i + 1], NULL, 10);
    return dflt;
}

static inline int li_opts_ok(int argc, char **argv, const char *const *names)
{
    for (int i = 1; i < argc; i += 2) {
        int known = 0;
        for (int k = 0; names[k]; k++)
            if (!strcmp(argv[i], names[k]))
                known = 1;
        if (!known || i + 1 >= argc) {
            fprintf(stderr, "%s: unknown option or missing value: '%s'\n", argv[0], argv[i]);
            return 0;
        }
    }
    return 1;
}

#endif
