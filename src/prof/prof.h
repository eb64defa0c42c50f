/*
 * The superstep profiler's analysis half (docs/profiler.md): reads the
 * parts a profiled run wrote (src/core/profile.c), merges them, and writes
 * the summary, the Chrome/Perfetto trace, the HTML report and predictions.
 * Built into the library (the end-of-run report) and into bspprof.
 */
#ifndef SSTEP_PROF_H
#define SSTEP_PROF_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#if defined(__GNUC__)
# define SSTEP_PROF_API __attribute__((visibility("hidden")))
#else
# define SSTEP_PROF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#include "../core/prof_format.h"   /* the parts' format */
/* The cause of a superstep whose computation outweighs its exchange is
 * "imbalance" rather than "computation" when max / mean computation is at
 * least this: the processes then idle at least 20% of the slowest one's
 * computation (1 - mean / max), which balancing would save. A 2:1 split at
 * p = 2 is 1.33. */
#define PF_IMBALANCE_MIN 1.25

/* The end-of-run report of the library: merge the parts of `run` in dir,
 * write summary.txt, trace.json and report.html there and print the
 * summary on stderr. wait: give parts still missing (other MPI ranks) up to
 * SUPERSTEP_PROFILE_WAIT seconds (default 10) to appear. 0 or -1. */
SSTEP_PROF_API int sstep_prof_report(const char *dir, const char *run, int wait);

/* ---- for bspprof and the tests ---------------------------------------- */

struct pf_step {
    double t0, t1;           /* sync entered / left, s, on the run's clock */
    uint64_t bytes[3];       /* put, get, message bytes issued */
    uint32_t reqs[3];
    uint32_t msgs_in;
    int origin, site, rc;
    int own;                 /* a sync a layer made for itself ("own" line) */
    size_t peer_first;
    uint32_t npeer;
    /* a tagged or zero-cost sync ("x" line; ph_n == 0: none): its tag
     * (UINT32_MAX: none), how many processes and which, expected counts */
    uint32_t ph_tag, ph_n;
    uint64_t ph_es, ph_er;
    char ph_pids[24];        /* "0-3,6" (cut short with "..." when longer) */
};

struct pf_peer {
    uint32_t q;
    uint64_t out, get;
};

struct pf_site {
    int origin;
    char layer[16];
    char name[200];          /* symbol+offset (or object+offset) of the sync's call */
    unsigned long long vaddr;   /* the program's call as a link-time address in obj
                                   (0: not recorded) */
    char obj[512];
    /* resolved by pf_load with addr2line ("" / 0 where it could not be) */
    char func[128];
    char file[512];
    int line;
};

struct pf_part {
    char key[200], parent[200];
    int parent_pid;
    unsigned P, pid;
    char engine[32], host[256];
    long ospid;
    uint64_t start_mono, start_real, end_ns;
    size_t lost;
    double r;
    unsigned cores;          /* CPUs the OS process could use (0: not recorded) */
    char cpus[512];          /* which: "0-3,8" ("": not recorded) */
    double ready;            /* s after its start: the engine had started the section's
                                processes (lpf_exec's start-up; 0: not recorded) */
    double gl_m[SSTEP_PROF_GL_POINTS], gl_g[SSTEP_PROF_GL_POINTS], gl_l[SSTEP_PROF_GL_POINTS];
    struct pf_site *sites;
    unsigned nsites;
    struct pf_step *steps;
    size_t nsteps;
    struct pf_peer *peers;
    size_t npeers;
    double start, end;       /* s, on the run's clock */
};

/* one superstep of a section, merged over its processes */
struct pf_sstep {
    double begin, end;       /* end of the previous sync (or the start) .. last process out */
    double time;             /* the longest any process spent in it: from its leaving
                                the previous sync (or its start) to its leaving this
                                one, on its own clock; >= comp_max + comm */
    double comp_max, comp_mean, comm;   /* comm: the shortest sync of the processes */
    double imbalance;        /* comp_max / comp_mean (1 when both are 0) */
    uint64_t h;              /* max over processes of bytes sent or received */
    uint64_t bytes, reqs;    /* all processes, all kinds */
    double m;                /* mean request size */
    double g, l, pred_comm;  /* recorded g(m), l(m); g·h + l */
    const char *layer;
    const char *cause;
    int own;                 /* a sync a layer made for itself */
    int startup;             /* ... before the program's first superstep (bsp_begin's) */
    size_t ustep;            /* the program's superstep number, as checked mode counts
                                (own syncs left out); an own sync: the superstep it
                                follows */
};

struct pf_section {
    char key[200], parent[200];
    int top;
    unsigned P, present;
    struct pf_part **part;   /* [P], NULL where missing */
    struct pf_part *ref;     /* lowest pid present */
    size_t nsteps;           /* supersteps every present process recorded */
    int unequal;             /* processes recorded different numbers */
    struct pf_sstep *st;
    size_t nstart;           /* st[0 .. nstart-1]: the start-up (own syncs first) */
    size_t nuser;            /* the program's supersteps (not own syncs) */
    double startup;          /* time of the start-up: its supersteps, else the longest
                                "ready" of the processes (0: none) */
    double steps_time;       /* sum of the times of the supersteps after the start-up */
    double start, end, total;
    double comp, comm, wait, life;   /* summed over processes */
    double pred;             /* prediction with the recorded g, l, after the start-up */
    double r;
};

struct pf_run {
    char dir[2048], run[128];
    struct pf_part *parts;
    size_t nparts;
    struct pf_section *sec;
    size_t nsec;
    double total;            /* sum of the top-level sections' times */
};

/* target machine of a prediction: constants, or saved rows of a file */
struct pf_machine {
    int from_file;
    double g, l, r;          /* constants (r 0: unknown) */
    char path[2048];
    unsigned procs;          /* --procs: predict at this p (0: each section's own);
                                per process the recorded work and h-relations */
};

/* load the parts of `run` (NULL or "": the newest run in dir); 0 or -1
 * with a message in err */
SSTEP_PROF_API int pf_load(struct pf_run *R, const char *dir, const char *run,
        char *err, size_t errlen);
SSTEP_PROF_API void pf_free(struct pf_run *R);
/* Where a sync was called: "file.c:LINE" (the file's last component), else
 * "in FUNCTION", else the recorded symbol+offset. */
SSTEP_PROF_API const char *pf_where(const struct pf_site *s, char *buf, size_t len);
/* A superstep's number as the report prints it: the program's superstep as
 * checked mode counts (own syncs left out), "start-up" for the library's
 * syncs before the first, "N+" for a layer's own sync after superstep N. */
SSTEP_PROF_API const char *pf_step_label(const struct pf_section *S, size_t k, char *buf, size_t len);
SSTEP_PROF_API void pf_summary(FILE *f, const struct pf_run *R);
SSTEP_PROF_API int pf_trace(FILE *f, const struct pf_run *R);
SSTEP_PROF_API int pf_html(FILE *f, const struct pf_run *R);
/* predicted time of a section / the run on machine M; 0 on success */
/* r (flop/s) that bspprobe --save wrote for engine and P processes in a
 * parameter file ("# r ENGINE P FLOPS" lines): the smallest p >= P, else
 * the largest; 0 if none */
SSTEP_PROF_API double pf_file_r(const char *path, const char *engine, unsigned P);
SSTEP_PROF_API int pf_machine_load(struct pf_machine *M, const char *path, char *err, size_t errlen);
SSTEP_PROF_API double pf_predict_section(const struct pf_section *S, const struct pf_machine *M);
SSTEP_PROF_API void pf_predict(FILE *f, const struct pf_run *R, const struct pf_machine *M);
/* summary.txt, trace.json, report.html in outdir (and the summary on `also`) */
SSTEP_PROF_API int pf_write_all(const struct pf_run *R, const char *outdir, FILE *also);

#ifdef __cplusplus
}
#endif

#endif
