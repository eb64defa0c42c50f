/*
 * What the profile recorder (src/core/profile.c) and the profiler's
 * analysis (src/prof) share: the format of the parts a run writes, and the
 * one table through which the recorder reaches the analysis (filled by
 * src/prof/prof_table.c), so that the core knows no function of src/prof.
 */
#ifndef SSTEP_PROF_FORMAT_H
#define SSTEP_PROF_FORMAT_H

#define SSTEP_PROF_MAGIC "superstep-profile"
#define SSTEP_PROF_VERSION 1
#define SSTEP_PROF_GL_POINTS 25   /* g, l sampled at m = 1, 2, 4, ..., 2^24 bytes */

struct sstep_prof_analysis {
    /* the end-of-run report of the parts of `run` in dir (sstep_prof_report) */
    int (*report)(const char *dir, const char *run, int wait);
    /* r of this machine from a parameter file (pf_file_r); 0 if none */
    double (*file_r)(const char *path, const char *engine, unsigned P);
};
#if defined(__GNUC__)
__attribute__((visibility("hidden")))
#endif
extern const struct sstep_prof_analysis sstep_prof_analysis;

#endif
