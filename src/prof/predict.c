/*
 * The superstep profiler (prof.h): predictions for other machines.
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
/* Prediction                                                           */
/* ------------------------------------------------------------------ */

struct machine_rows {
    struct sstep_param_row *rows;
    size_t n;
};

/* the rows of a parameter file; a line that is not a valid row (values
 * out of range, machine_params.h) is an error naming the file and line */
static int load_rows(const char *path, struct machine_rows *mr, char *err, size_t errlen)
{
    char why[256], line[SSTEP_PARAM_LINE_MAX];
    size_t len = 0, pos = 0, cap = 0;
    int eno;
    mr->rows = NULL;
    mr->n = 0;
    char *buf = sstep_param_slurp(path, &len, &eno, why, sizeof why);
    if (!buf) return pf_errf(err, errlen, "cannot read %s: %s", path, why);
    unsigned lineno = 0;
    while (sstep_param_line(buf, len, &pos, line)) {
        ++lineno;
        struct sstep_param_row r;
        int rc = sstep_param_check(line, &r, why, sizeof why);
        if (rc < 0) {
            free(buf);
            free(mr->rows);
            mr->rows = NULL;
            return pf_errf(err, errlen, "%s, line %u: %s", path, lineno, why);
        }
        if (rc == 0) continue;
        if (mr->n == cap) {
            cap = cap ? 2 * cap : 16;
            struct sstep_param_row *n = realloc(mr->rows, cap * sizeof *n);
            if (!n) { free(buf); return pf_errf(err, errlen, "out of memory"); }
            mr->rows = n;
        }
        mr->rows[mr->n++] = r;
    }
    free(buf);
    mr->n = sstep_param_normalize(mr->rows, mr->n);
    return 0;
}

/* "# r ENGINE P FLOPS" lines: the smallest p >= P, else the largest (values
 * outside sstep_param_r_ok are ignored) */
double pf_file_r(const char *path, const char *engine, unsigned P)
{
    char why[256], line[SSTEP_PARAM_LINE_MAX];
    size_t len = 0, pos = 0;
    int eno;
    char *buf = sstep_param_slurp(path, &len, &eno, why, sizeof why);
    if (!buf) return 0;
    double best = 0, largest = 0;
    unsigned bestp = UINT32_MAX, largestp = 0;
    while (sstep_param_line(buf, len, &pos, line)) {
        char eng[32];
        unsigned p;
        double r;
        if (sscanf(line, " # r %31s %u %lf", eng, &p, &r) != 3 || strcmp(eng, engine)
                || !sstep_param_r_ok(r))
            continue;
        if (p >= P && p <= bestp) { best = r; bestp = p; }
        if (p >= largestp) { largest = r; largestp = p; }
    }
    free(buf);
    return best > 0 ? best : largest;
}

int pf_machine_load(struct pf_machine *M, const char *path, char *err, size_t errlen)
{
    memset(M, 0, sizeof *M);
    struct machine_rows mr;
    if (load_rows(path, &mr, err, errlen)) return -1;
    free(mr.rows);
    if (!mr.n) return pf_errf(err, errlen, "%s has no parameter rows (engine p msg_size g l)", path);
    M->from_file = 1;
    snprintf(M->path, sizeof M->path, "%s", path);
    return 0;
}

double pf_predict_section(const struct pf_section *S, const struct pf_machine *M)
{
    /* --procs: g and l (and r) for that p; every process keeps its
     * recorded work and h-relations */
    const unsigned P = M->procs ? M->procs : S->P;
    double rt = M->r;
    struct machine_rows mr = { NULL, 0 };
    size_t first = 0, count = 0;
    unsigned use = 0;
    if (M->from_file) {
        char err[256];
        if (load_rows(M->path, &mr, err, sizeof err)) return NAN;
        use = sstep_param_select(mr.rows, mr.n, S->ref->engine, P, &first, &count);
        if (!use) {
            /* no rows of this engine: any engine's */
            use = sstep_param_select(mr.rows, mr.n, mr.rows[0].engine, P, &first, &count);
        }
        rt = pf_file_r(M->path, S->ref->engine, P);
    }
    /* work = computation time x the recording machine's r; on the target
     * it takes work / r_target. Without both r the computation is kept. */
    double rho = S->r > 0 && rt > 0 ? S->r / rt : 1.0;
    double t = 0, prev = S->start;
    for (size_t k = 0; k < S->nsteps; ++k) {
        const struct pf_sstep *x = &S->st[k];
        double g = M->g, l = M->l;
        if (M->from_file) {
            size_t m = x->m < 1 ? 1 : x->m > 1e18 ? (size_t)1e18 : (size_t)x->m;
            sstep_param_at(mr.rows + first, count, m, &g, &l);
        }
        t += x->comp_max * rho + g * (double)x->h + l;
        prev = x->end;
    }
    double tail = S->end - prev;
    if (tail > 0) t += tail * rho;
    free(mr.rows);
    return t;
}

void pf_predict(FILE *f, const struct pf_run *R, const struct pf_machine *M)
{
    char a[32], b[32];
    if (M->from_file)
        fprintf(f, "prediction for the machine of %s (g and l by message size, as lpf_probe reads them)\n", M->path);
    else
        fprintf(f, "prediction for g = %.6g s/B, l = %.6g s, r = %.6g flop/s\n", M->g, M->l, M->r);
    if (M->procs)
        fprintf(f, "at %u processes: each keeps its recorded work and h-relations (--procs)\n",
                M->procs);
    double tot = 0, meas = 0;
    size_t bad = 0;
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        if (!S->top) continue;
        double p = pf_predict_section(S, M);
        meas += S->total;
        if (!isfinite(p) || p < 0) {
            /* never a nan or inf as a prediction */
            ++bad;
            fprintf(f, "  section %s (%u processes, %zu supersteps): no prediction (the "
                    "machine's parameters give no finite time), measured here %s\n", S->key,
                    S->P, S->nsteps, pf_fmt_time(b, sizeof b, S->total));
            continue;
        }
        tot += p;
        fprintf(f, "  section %s (%u processes, %zu supersteps): predicted %s, measured here %s%s\n",
                S->key, S->P, S->nsteps, pf_fmt_time(a, sizeof a, p), pf_fmt_time(b, sizeof b, S->total),
                S->r > 0 ? "" : " (no r recorded: computation kept as measured)");
    }
    if (bad)
        fprintf(f, "total: no prediction (%zu section%s without one), measured here %.9g s\n",
                bad, bad == 1 ? "" : "s", meas);
    else
        fprintf(f, "total: predicted %.9g s, measured here %.9g s\n", tot, meas);
}
