/*
 * What the profiler's analysis files in src/prof share beyond prof.h.
 */
#ifndef SSTEP_PROF_INTERNAL_H
#define SSTEP_PROF_INTERNAL_H

#include "prof.h"
#include "../core/machine_params.h"

#include <stddef.h>
#include <stdio.h>

/* a message into err (if any); returns -1 */
SSTEP_PROF_API int pf_errf(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* a duration / a byte count with a unit */
SSTEP_PROF_API const char *pf_fmt_time(char *buf, size_t len, double s);
SSTEP_PROF_API const char *pf_fmt_bytes(char *buf, size_t len, double b);
SSTEP_PROF_API double pf_pct(double a, double b);
/* indices of the (up to) n most expensive supersteps, most expensive first */
SSTEP_PROF_API size_t pf_top_steps(const struct pf_section *S, size_t *idx, size_t n);
SSTEP_PROF_API int pf_cmp_double(const void *a, const void *b);
/* Supersteps by the call that ended them, for sections with Python call
 * sites (the package records file, line and function): up to n sites of
 * S->ref, most time first, into idx; their counts and times (sums over the
 * supersteps) into cnt and tim (S->ref->nsites entries). 0 when none. */
SSTEP_PROF_API size_t pf_site_totals(const struct pf_section *S, size_t *idx, size_t n,
        size_t *cnt, double *tim);
/* the layer (user, bsplib, pub, coll) of a recorded sync */
SSTEP_PROF_API const char *pf_step_layer(const struct pf_part *p, const struct pf_step *s);

/* pf_load, with resolve 0: without the source lines (pf_resolve_sites) */
SSTEP_PROF_API int pf_load_parts(struct pf_run *R, const char *dir, const char *run, int resolve,
        char *err, size_t errlen);

/* The source lines of the recorded sync calls: addr2line (or the program
 * $SUPERSTEP_PROFILE_ADDR2LINE names; empty: none) on each object, once;
 * sites it cannot resolve keep their symbol+offset. */
SSTEP_PROF_API void pf_resolve_sites(struct pf_run *R);

/* The directory of the docs (profiler.md, ...): installed next to the
 * program or library this code is in (PREFIX/share/doc/superstep); else,
 * with source != 0, the source tree's docs/ (a build tree); else where
 * `cmake --install` puts them. */
SSTEP_PROF_API const char *pf_doc_dir(char *buf, size_t len, int source);

#endif
