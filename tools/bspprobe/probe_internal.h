/*
 * What the parts of bspprobe's timing-free half (probe_*.c) share beyond
 * probe_model.h. Not for bspprobe.c or the tests.
 */
#ifndef BSPPROBE_INTERNAL_H
#define BSPPROBE_INTERNAL_H

#include "probe_model.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

size_t pm_rng_below(struct pm_rng *r, size_t n);          /* uniform in [0, n) */
int pm_cmp_double(const void *a, const void *b);          /* for qsort */
double pm_trimmed_sorted(double *x, size_t n, double trim); /* sorts x in place */
int pm_errf(char *err, size_t len, const char *fmt, ...)  /* message into err; returns -1 */
    __attribute__((format(printf, 3, 4)));
/* a duration / a byte count with a unit that keeps 3-4 significant digits */
const char *pm_fmt_time(char *b, size_t len, double s);
const char *pm_fmt_bytes(char *b, size_t len, double x);
/* the point of a series at x, or NULL */
struct pm_point *pm_point_at(struct pm_series *se, double x);

#endif
