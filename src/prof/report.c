/*
 * The superstep profiler (prof.h): all files of a run, and the library's
 * end-of-run report.
 */
#define _GNU_SOURCE
#include "prof_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Writing everything                                                   */
/* ------------------------------------------------------------------ */

int pf_write_all(const struct pf_run *R, const char *outdir, FILE *also)
{
    char path[2300];
    int rc = 0;
    snprintf(path, sizeof path, "%s/summary.txt", outdir);
    FILE *f = fopen(path, "w");
    if (f) { pf_summary(f, R); rc |= fclose(f); } else rc = -1;
    snprintf(path, sizeof path, "%s/trace.json", outdir);
    f = fopen(path, "w");
    if (f) { rc |= pf_trace(f, R); rc |= fclose(f); } else rc = -1;
    snprintf(path, sizeof path, "%s/report.html", outdir);
    f = fopen(path, "w");
    if (f) { rc |= pf_html(f, R); rc |= fclose(f); } else rc = -1;
    if (also) {
        pf_summary(also, R);
        fprintf(also, "superstep: profile written to %s/report.html, %s/trace.json (Perfetto / "
                "chrome://tracing) and %s/summary.txt\n", outdir, outdir, outdir);
        fflush(also);
    }
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The library's end-of-run report                                     */
/* ------------------------------------------------------------------ */

/* sections whose parts are not all there yet */
static int missing(const struct pf_run *R)
{
    for (size_t i = 0; i < R->nsec; ++i)
        if (R->sec[i].present < R->sec[i].P) return 1;
    return 0;
}

int sstep_prof_report(const char *dir, const char *run, int wait)
{
    struct pf_run R;
    char err[512];
    if (pf_load_parts(&R, dir, run, 0, err, sizeof err)) {
        fprintf(stderr, "superstep: profile: %s\n", err);
        return -1;
    }
    if (wait && missing(&R)) {
        double limit = 10;
        const char *w = getenv("SUPERSTEP_PROFILE_WAIT");
        if (w && *w) limit = strtod(w, NULL);
        for (double t = 0; t < limit && missing(&R); t += 0.05) {
            struct timespec ts = { 0, 50000000 };
            nanosleep(&ts, NULL);
            pf_free(&R);
            if (pf_load_parts(&R, dir, run, 0, err, sizeof err)) {
                fprintf(stderr, "superstep: profile: %s\n", err);
                return -1;
            }
        }
    }
    pf_resolve_sites(&R);   /* once, with every part there */
    int rc = pf_write_all(&R, dir, getenv("SUPERSTEP_PROFILE_QUIET") ? NULL : stderr);
    pf_free(&R);
    return rc;
}
