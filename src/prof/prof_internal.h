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
/* indices of the (up to) n most expensive supersteps after the start-up,
 * most expensive first */
SSTEP_PROF_API size_t pf_top_steps(const struct pf_section *S, size_t *idx, size_t n);
SSTEP_PROF_API int pf_cmp_double(const void *a, const void *b);
/* Supersteps after the start-up by the call that ended them: a call site is
 * a (file, line, function) triple, of C (resolved from the recorded
 * address) or Python (the package records it); unresolved sites count by
 * their recorded symbol+offset. Up to n sites of S->ref, most time first,
 * into idx (each the first recorded site of its triple); their counts and
 * times (sums of the supersteps' times) into cnt and tim (S->ref->nsites
 * entries). 0 when none. */
#define PF_SITES_SHOWN 12
SSTEP_PROF_API size_t pf_site_totals(const struct pf_section *S, size_t *idx, size_t n,
        size_t *cnt, double *tim);
/* "P processes on host H, which has C cores" (and how many more hosts)
 * when a section's processes outnumbered the cores of a host; else NULL */
SSTEP_PROF_API const char *pf_oversubscribed(const struct pf_section *S, char *buf, size_t len);
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
