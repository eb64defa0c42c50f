/*
 * The superstep profiler's analysis (prof.h, docs/profiler.md): load the
 * parts of a run, merge each section's processes superstep by superstep,
 * and write the summary, the Chrome/Perfetto trace, the HTML report (inline
 * SVG) and predictions for other machines.
 *
 * Per superstep k of a section (processes aligned by their k-th sync):
 *   computation of s = its sync entry - its previous sync exit (or start)
 *   comm             = the shortest sync of all processes (the last to
 *                      arrive hardly waits: its sync is the exchange)
 *   waiting of s     = its sync - comm
 *   time             = last exit of sync k - last exit of sync k-1
 *   h                = max over s of max(bytes sent, bytes received), where
 *                      s sends its puts and messages and the data others get
 *                      from it, and receives the rest
 *   predicted        = max computation + g(m)·h + l(m), g and l as lpf_probe
 *                      returned them in the run, m the mean request size.
 */
#define _GNU_SOURCE
#include "prof.h"
#include "../core/machine_params.h"

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

static int errf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && len) vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Loading                                                              */
/* ------------------------------------------------------------------ */

static void part_free(struct pf_part *p)
{
    free(p->sites);
    free(p->steps);
    free(p->peers);
}

static int parse_part(const char *path, struct pf_part *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "r");
    if (!f) return errf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ok = 0, eof = 0, ngl = 0;
    size_t sc = 0, pc = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') line[--len] = '\0';
        if (!ok) {
            int v;
            char magic[64];
            if (sscanf(line, "%63s %d", magic, &v) != 2 || strcmp(magic, SSTEP_PROF_MAGIC) || v != SSTEP_PROF_VERSION)
                break;
            ok = 1;
            continue;
        }
        if (line[0] == 's' && line[1] == ' ') {
            if (p->nsteps == sc) {
                sc = sc ? 2 * sc : 1024;
                struct pf_step *n = realloc(p->steps, sc * sizeof *n);
                if (!n) { ok = 0; break; }
                p->steps = n;
            }
            struct pf_step *s = &p->steps[p->nsteps];
            unsigned long long t0, t1, b0, b1, b2;
            unsigned r0, r1, r2, mi, np;
            if (sscanf(line + 2, "%llu %llu %d %d %d %u %llu %u %llu %u %llu %u %u", &t0, &t1,
                        &s->origin, &s->site, &s->rc, &r0, &b0, &r1, &b1, &r2, &b2, &mi, &np) != 13) {
                ok = 0;
                break;
            }
            s->t0 = (double)t0 * 1e-9;
            s->t1 = (double)t1 * 1e-9;
            s->bytes[0] = b0; s->bytes[1] = b1; s->bytes[2] = b2;
            s->reqs[0] = r0; s->reqs[1] = r1; s->reqs[2] = r2;
            s->msgs_in = mi;
            s->npeer = np;
            s->peer_first = p->npeers;
            p->nsteps++;
        } else if (line[0] == 'p' && line[1] == ' ') {
            if (p->npeers == pc) {
                pc = pc ? 2 * pc : 1024;
                struct pf_peer *n = realloc(p->peers, pc * sizeof *n);
                if (!n) { ok = 0; break; }
                p->peers = n;
            }
            struct pf_peer *e = &p->peers[p->npeers];
            unsigned long long o, g;
            if (sscanf(line + 2, "%u %llu %llu", &e->q, &o, &g) != 3) { ok = 0; break; }
            e->out = o;
            e->get = g;
            p->npeers++;
        } else if (!strncmp(line, "gl ", 3)) {
            if (ngl < SSTEP_PROF_GL_POINTS
                    && sscanf(line + 3, "%lf %lf %lf", &p->gl_m[ngl], &p->gl_g[ngl], &p->gl_l[ngl]) == 3)
                ngl++;
        } else if (!strncmp(line, "site ", 5)) {
            struct pf_site *n = realloc(p->sites, (p->nsites + 1) * sizeof *n);
            if (!n) { ok = 0; break; }
            p->sites = n;
            struct pf_site *s = &p->sites[p->nsites];
            unsigned idx;
            int pos = 0;
            if (sscanf(line + 5, "%u %d %15s %n", &idx, &s->origin, s->layer, &pos) < 3) continue;
            snprintf(s->name, sizeof s->name, "%s", pos ? line + 5 + pos : "?");
            p->nsites++;
        } else if (!strncmp(line, "run ", 4)) {
        } else if (!strncmp(line, "section ", 8)) {
            snprintf(p->key, sizeof p->key, "%s", line + 8);
        } else if (!strncmp(line, "parent ", 7)) {
            char k[200];
            if (sscanf(line + 7, "%199s %d", k, &p->parent_pid) == 2) snprintf(p->parent, sizeof p->parent, "%s", k);
        } else if (!strncmp(line, "procs ", 6)) {
            p->P = (unsigned)strtoul(line + 6, NULL, 10);
        } else if (!strncmp(line, "pid ", 4)) {
            p->pid = (unsigned)strtoul(line + 4, NULL, 10);
        } else if (!strncmp(line, "engine ", 7)) {
            snprintf(p->engine, sizeof p->engine, "%s", line + 7);
        } else if (!strncmp(line, "host ", 5)) {
            snprintf(p->host, sizeof p->host, "%s", line + 5);
        } else if (!strncmp(line, "ospid ", 6)) {
            p->ospid = strtol(line + 6, NULL, 10);
        } else if (!strncmp(line, "start ", 6)) {
            unsigned long long a, b;
            if (sscanf(line + 6, "%llu %llu", &a, &b) == 2) { p->start_mono = a; p->start_real = b; }
        } else if (!strncmp(line, "end ", 4)) {
            p->end_ns = strtoull(line + 4, NULL, 10);
        } else if (!strncmp(line, "lost ", 5)) {
            p->lost = strtoull(line + 5, NULL, 10);
        } else if (!strncmp(line, "r ", 2)) {
            p->r = strtod(line + 2, NULL);
        } else if (!strcmp(line, "eof")) {
            eof = 1;
        }
    }
    free(line);
    fclose(f);
    if (!ok || !eof || p->P == 0 || p->pid >= p->P || !p->key[0] || ngl != SSTEP_PROF_GL_POINTS) {
        part_free(p);
        return errf(err, errlen, "%s is not a complete profile part", path);
    }
    /* peers must be in range and match the counts */
    size_t need = 0;
    for (size_t k = 0; k < p->nsteps; ++k) need += p->steps[k].npeer;
    for (size_t i = 0; i < p->npeers; ++i)
        if (p->peers[i].q >= p->P) need = SIZE_MAX;
    for (size_t k = 0; k < p->nsteps; ++k)
        if (p->steps[k].site < 0 || (unsigned)p->steps[k].site >= p->nsites) p->steps[k].site = -1;
    if (need != p->npeers) {
        part_free(p);
        return errf(err, errlen, "%s: inconsistent peer entries", path);
    }
    return 0;
}

/* run id of a part file name: the part before the first '.' */
static int run_of(const char *name, char *run, size_t len)
{
    size_t n = strlen(name);
    if (n < 6 || strcmp(name + n - 5, ".part")) return -1;
    const char *dot = strchr(name, '.');
    size_t r = (size_t)(dot - name);
    if (r == 0 || r >= len) return -1;
    memcpy(run, name, r);
    run[r] = '\0';
    return 0;
}

static int cmp_part(const void *a, const void *b)
{
    const struct pf_part *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static double interp_gl(const struct pf_part *p, double m, double *l)
{
    if (!(m >= 1)) m = 1;
    int n = SSTEP_PROF_GL_POINTS;
    if (m >= p->gl_m[n - 1]) { *l = p->gl_l[n - 1]; return p->gl_g[n - 1]; }
    int i = 0;
    while (i + 1 < n && p->gl_m[i + 1] <= m) ++i;
    if (m == p->gl_m[i]) { *l = p->gl_l[i]; return p->gl_g[i]; }
    double t = (1.0 / p->gl_m[i] - 1.0 / m) / (1.0 / p->gl_m[i] - 1.0 / p->gl_m[i + 1]);
    *l = p->gl_l[i] + t * (p->gl_l[i + 1] - p->gl_l[i]);
    return p->gl_g[i] + t * (p->gl_g[i + 1] - p->gl_g[i]);
}

static const char *step_layer(const struct pf_part *p, const struct pf_step *s)
{
    if (s->site >= 0) return p->sites[s->site].layer;
    return s->origin == 1 ? "bsplib" : s->origin >= 2 ? "pub" : "user";
}

static int analyze_section(struct pf_section *S)
{
    const unsigned P = S->P;
    S->nsteps = SIZE_MAX;
    size_t maxn = 0;
    S->start = INFINITY;
    S->end = -INFINITY;
    for (unsigned s = 0; s < P; ++s) {
        struct pf_part *p = S->part[s];
        if (!p) continue;
        if (!S->ref) S->ref = p;
        if (p->nsteps < S->nsteps) S->nsteps = p->nsteps;
        if (p->nsteps > maxn) maxn = p->nsteps;
        if (p->start < S->start) S->start = p->start;
        if (p->end > S->end) S->end = p->end;
    }
    if (!S->ref) return -1;
    S->unequal = S->nsteps != maxn;
    S->r = S->ref->r;
    /* the section lasts as long as its pid 0 (the others are destroyed by
     * it, or leave with it) */
    if (S->part[0]) S->end = S->part[0]->end;
    S->total = S->end - S->start;
    S->st = calloc(S->nsteps ? S->nsteps : 1, sizeof *S->st);
    uint64_t *sent = calloc(P, sizeof *sent), *recv = calloc(P, sizeof *recv);
    if (!S->st || !sent || !recv) { free(sent); free(recv); return -1; }
    double prev_end = S->start;
    for (size_t k = 0; k < S->nsteps; ++k) {
        struct pf_sstep *x = &S->st[k];
        double cmax = 0, csum = 0, smin = INFINITY, emax = -INFINITY;
        uint64_t bytes = 0, reqs = 0;
        memset(sent, 0, P * sizeof *sent);
        memset(recv, 0, P * sizeof *recv);
        for (unsigned s = 0; s < P; ++s) {
            const struct pf_part *p = S->part[s];
            if (!p) continue;
            const struct pf_step *t = &p->steps[k];
            double from = k ? p->start + p->steps[k - 1].t1 : p->start;
            double comp = p->start + t->t0 - from;
            if (comp < 0) comp = 0;
            double sync = t->t1 - t->t0;
            if (comp > cmax) cmax = comp;
            csum += comp;
            if (sync < smin) smin = sync;
            if (p->start + t->t1 > emax) emax = p->start + t->t1;
            for (int j = 0; j < 3; ++j) { bytes += t->bytes[j]; reqs += t->reqs[j]; }
            for (uint32_t j = 0; j < t->npeer; ++j) {
                const struct pf_peer *e = &p->peers[t->peer_first + j];
                sent[s] += e->out;
                recv[e->q] += e->out;
                recv[s] += e->get;
                sent[e->q] += e->get;
            }
        }
        uint64_t h = 0;
        for (unsigned s = 0; s < P; ++s) {
            if (sent[s] > h) h = sent[s];
            if (recv[s] > h) h = recv[s];
        }
        x->begin = prev_end;
        x->end = emax;
        x->time = emax - prev_end;
        if (x->time < 0) x->time = 0;
        prev_end = emax;
        x->comp_max = cmax;
        x->comp_mean = csum / S->present;
        x->imbalance = x->comp_mean > 0 ? cmax / x->comp_mean : 1.0;
        x->comm = smin;
        x->h = h;
        x->bytes = bytes;
        x->reqs = reqs;
        x->m = reqs ? (double)bytes / (double)reqs : 1.0;
        x->g = interp_gl(S->ref, x->m, &x->l);
        x->pred_comm = x->g * (double)h + x->l;
        x->layer = step_layer(S->ref, &S->ref->steps[k]);
        /* what the time went into: the mean computation, the imbalance
         * (the slowest process's excess), and the exchange after the last
         * arrival, split into bandwidth and latency as g·h : l */
        double exch = x->time - cmax;
        if (exch < 0) exch = 0;
        double bw = exch * (x->g * (double)h) / x->pred_comm, lat = exch - bw;
        double c[4] = { x->comp_mean, cmax - x->comp_mean, bw, lat };
        static const char *names[4] = { "computation", "imbalance", "communication", "latency" };
        int best = 0;
        for (int j = 1; j < 4; ++j)
            if (c[j] > c[best]) best = j;
        x->cause = names[best];
        /* an exchange far above the model: not the h-relation's fault */
        if (best >= 2 && exch > 4 * x->pred_comm) x->cause = "slow sync";
        S->pred += cmax + x->pred_comm;
    }
    double tail = S->end - prev_end;
    if (tail > 0) S->pred += tail;
    /* shares over all processes */
    for (unsigned s = 0; s < P; ++s) {
        const struct pf_part *p = S->part[s];
        if (!p) continue;
        double life = p->end - p->start, sync = 0, wait = 0;
        for (size_t k = 0; k < p->nsteps; ++k) {
            double d = p->steps[k].t1 - p->steps[k].t0;
            sync += d;
            if (k < S->nsteps) wait += d - S->st[k].comm;
        }
        S->life += life;
        S->wait += wait;
        S->comm += sync - wait;
        S->comp += life - sync > 0 ? life - sync : 0;
    }
    free(sent);
    free(recv);
    return 0;
}

void pf_free(struct pf_run *R)
{
    for (size_t i = 0; i < R->nparts; ++i) part_free(&R->parts[i]);
    free(R->parts);
    for (size_t i = 0; i < R->nsec; ++i) {
        free(R->sec[i].part);
        free(R->sec[i].st);
    }
    free(R->sec);
    memset(R, 0, sizeof *R);
}

int pf_load(struct pf_run *R, const char *dir, const char *run, char *err, size_t errlen)
{
    memset(R, 0, sizeof *R);
    snprintf(R->dir, sizeof R->dir, "%s", dir);
    DIR *d = opendir(dir);
    if (!d) return errf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
    char want[128] = "";
    if (run && *run) snprintf(want, sizeof want, "%s", run);
    else {
        /* the newest run */
        struct dirent *e;
        double best = -1;
        while ((e = readdir(d))) {
            char r[128], path[4200];
            if (run_of(e->d_name, r, sizeof r)) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (stat(path, &st)) continue;
            double t = (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
            if (t > best) { best = t; snprintf(want, sizeof want, "%s", r); }
        }
        rewinddir(d);
        if (!want[0]) { closedir(d); return errf(err, errlen, "no profile parts (*.part) in %s", dir); }
    }
    snprintf(R->run, sizeof R->run, "%s", want);
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char r[128], path[4200];
        if (run_of(e->d_name, r, sizeof r) || strcmp(r, want)) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (R->nparts == cap) {
            cap = cap ? 2 * cap : 16;
            struct pf_part *n = realloc(R->parts, cap * sizeof *n);
            if (!n) { closedir(d); pf_free(R); return errf(err, errlen, "out of memory"); }
            R->parts = n;
        }
        char e2[512];
        if (parse_part(path, &R->parts[R->nparts], e2, sizeof e2)) {
            fprintf(stderr, "bspprof: skipping %s\n", e2);
            continue;
        }
        R->nparts++;
    }
    closedir(d);
    if (!R->nparts) return errf(err, errlen, "no readable parts of run %s in %s", want, dir);
    qsort(R->parts, R->nparts, sizeof *R->parts, cmp_part);
    /* one clock for the run: the monotonic clock of the first part's host,
     * the real-time clock for parts of other hosts */
    const struct pf_part *ref = &R->parts[0];
    for (size_t i = 0; i < R->nparts; ++i)
        if (R->parts[i].start_mono < ref->start_mono && !strcmp(R->parts[i].host, ref->host))
            ref = &R->parts[i];
    for (size_t i = 0; i < R->nparts; ++i) {
        struct pf_part *p = &R->parts[i];
        if (!strcmp(p->host, ref->host))
            p->start = ((double)p->start_mono - (double)ref->start_mono) * 1e-9;
        else
            p->start = ((double)p->start_real - (double)ref->start_real) * 1e-9;
        p->end = p->start + (double)p->end_ns * 1e-9;
    }
    /* sections */
    for (size_t i = 0; i < R->nparts;) {
        size_t j = i;
        while (j < R->nparts && !strcmp(R->parts[j].key, R->parts[i].key)) ++j;
        struct pf_section *n = realloc(R->sec, (R->nsec + 1) * sizeof *n);
        if (!n) { pf_free(R); return errf(err, errlen, "out of memory"); }
        R->sec = n;
        struct pf_section *S = &R->sec[R->nsec];
        memset(S, 0, sizeof *S);
        snprintf(S->key, sizeof S->key, "%s", R->parts[i].key);
        snprintf(S->parent, sizeof S->parent, "%s", R->parts[i].parent);
        S->top = !strcmp(S->parent, "-");
        S->P = R->parts[i].P;
        S->part = calloc(S->P, sizeof *S->part);
        if (!S->part) { pf_free(R); return errf(err, errlen, "out of memory"); }
        for (size_t k = i; k < j; ++k)
            if (R->parts[k].P == S->P && !S->part[R->parts[k].pid]) {
                S->part[R->parts[k].pid] = &R->parts[k];
                S->present++;
            }
        R->nsec++;
        if (analyze_section(S)) { pf_free(R); return errf(err, errlen, "out of memory"); }
        i = j;
    }
    /* sections in the order they started */
    for (size_t a = 1; a < R->nsec; ++a) {
        struct pf_section x = R->sec[a];
        size_t b = a;
        while (b > 0 && R->sec[b - 1].start > x.start) { R->sec[b] = R->sec[b - 1]; --b; }
        R->sec[b] = x;
    }
    for (size_t i = 0; i < R->nsec; ++i)
        if (R->sec[i].top) R->total += R->sec[i].total;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Units                                                                */
/* ------------------------------------------------------------------ */

static const char *fmt_time(char *buf, size_t len, double s)
{
    double a = fabs(s);
    if (a >= 1) snprintf(buf, len, "%.3f s", s);
    else if (a >= 1e-3) snprintf(buf, len, "%.3f ms", s * 1e3);
    else if (a >= 1e-6) snprintf(buf, len, "%.2f us", s * 1e6);
    else snprintf(buf, len, "%.0f ns", s * 1e9);
    return buf;
}

static const char *fmt_bytes(char *buf, size_t len, double b)
{
    if (b >= 1 << 30) snprintf(buf, len, "%.2f GiB", b / (1 << 30));
    else if (b >= 1 << 20) snprintf(buf, len, "%.2f MiB", b / (1 << 20));
    else if (b >= 1 << 10) snprintf(buf, len, "%.1f KiB", b / (1 << 10));
    else snprintf(buf, len, "%.0f B", b);
    return buf;
}

static double pct(double a, double b)
{
    return b > 0 ? 100.0 * a / b : 0;
}

/* indices of the (up to) n most expensive supersteps, most expensive first */
static size_t top_steps(const struct pf_section *S, size_t *idx, size_t n)
{
    size_t m = 0;
    for (size_t k = 0; k < S->nsteps; ++k) {
        size_t j = m < n ? m++ : n;
        if (j == n) {
            if (S->st[k].time <= S->st[idx[n - 1]].time) continue;
            j = n - 1;
        }
        while (j > 0 && S->st[idx[j - 1]].time < S->st[k].time) { idx[j] = idx[j - 1]; --j; }
        idx[j] = k;
    }
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------------ */
/* Summary                                                              */
/* ------------------------------------------------------------------ */

static void layers_line(FILE *f, const struct pf_section *S)
{
    const char *names[8];
    size_t count[8], n = 0;
    for (size_t k = 0; k < S->nsteps; ++k) {
        size_t i = 0;
        while (i < n && strcmp(names[i], S->st[k].layer)) ++i;
        if (i == n && n < 8) { names[n] = S->st[k].layer; count[n++] = 0; }
        if (i < n) count[i]++;
    }
    fprintf(f, "  supersteps by layer:");
    for (size_t i = 0; i < n; ++i) fprintf(f, " %s %zu%s", names[i], count[i], i + 1 < n ? "," : "");
    fprintf(f, "%s\n", n ? "" : " none");
}

static void section_summary(FILE *f, const struct pf_section *S)
{
    char a[32], b[32], c[32], d[32], e[32];
    const struct pf_part *r = S->ref;
    fprintf(f, "section %s: %u process%s (%s engine%s), %zu superstep%s, %s\n", S->key, S->P,
            S->P == 1 ? "" : "es", r->engine, S->present < S->P ? ", PARTS MISSING" : "",
            S->nsteps, S->nsteps == 1 ? "" : "s", fmt_time(a, sizeof a, S->total));
    if (S->present < S->P)
        fprintf(f, "  only %u of %u processes' parts were found\n", S->present, S->P);
    if (S->unequal)
        fprintf(f, "  the processes recorded different numbers of supersteps (partitioned "
                "syncs?); the first %zu are merged\n", S->nsteps);
    fprintf(f, "  time over all processes: computation %.1f%%, communication %.1f%%, waiting %.1f%%\n",
            pct(S->comp, S->life), pct(S->comm, S->life), pct(S->wait, S->life));
    fprintf(f, "  predicted with the recorded g, l (sum of max computation + g*h + l): %s "
            "(measured %s, %+.0f%%)\n", fmt_time(a, sizeof a, S->pred), fmt_time(b, sizeof b, S->total),
            S->total > 0 ? 100.0 * (S->pred - S->total) / S->total : 0.0);
    if (!S->nsteps) return;
    layers_line(f, S);
    size_t idx[10];
    size_t n = top_steps(S, idx, 10);
    fprintf(f, "  the %zu most expensive supersteps:\n", n);
    fprintf(f, "    %7s %-7s %11s %11s %7s %11s %11s %11s  %s\n", "step", "layer", "time", "comp max",
            "imbal", "exchange", "h", "g*h+l", "cause");
    for (size_t i = 0; i < n; ++i) {
        const struct pf_sstep *x = &S->st[idx[i]];
        double exch = x->time - x->comp_max;
        fprintf(f, "    %7zu %-7s %11s %11s %7.2f %11s %11s %11s  %s\n", idx[i], x->layer,
                fmt_time(a, sizeof a, x->time), fmt_time(b, sizeof b, x->comp_max), x->imbalance,
                fmt_time(c, sizeof c, exch > 0 ? exch : 0), fmt_bytes(d, sizeof d, (double)x->h),
                fmt_time(e, sizeof e, x->pred_comm), x->cause);
    }
    /* imbalance per superstep, in brief (the report draws all of it) */
    double *v = malloc(S->nsteps * sizeof *v);
    if (v) {
        size_t worst = 0;
        for (size_t k = 0; k < S->nsteps; ++k) {
            v[k] = S->st[k].imbalance;
            if (v[k] > S->st[worst].imbalance) worst = k;
        }
        qsort(v, S->nsteps, sizeof *v, cmp_double);
        fprintf(f, "  load imbalance per superstep (max/mean computation): median %.2f, "
                "90th percentile %.2f, worst %.2f (step %zu)\n", v[S->nsteps / 2],
                v[(S->nsteps * 9) / 10 < S->nsteps ? (S->nsteps * 9) / 10 : S->nsteps - 1],
                S->st[worst].imbalance, worst);
        free(v);
    }
    if (S->nsteps <= 16) {
        fprintf(f, "  imbalance by step:");
        for (size_t k = 0; k < S->nsteps; ++k) fprintf(f, " %.2f", S->st[k].imbalance);
        fprintf(f, "\n");
    }
}

void pf_summary(FILE *f, const struct pf_run *R)
{
    char a[32];
    size_t ntop = 0, nnest = 0;
    for (size_t i = 0; i < R->nsec; ++i) *(R->sec[i].top ? &ntop : &nnest) += 1;
    fprintf(f, "superstep profile of run %s (%s): %zu top-level section%s, %zu nested, %s\n",
            R->run, R->dir, ntop, ntop == 1 ? "" : "s", nnest, fmt_time(a, sizeof a, R->total));
    size_t shown = 0;
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        if (!S->top) continue;
        if (shown++ == 8) {
            fprintf(f, "(%zu more top-level sections: see report.html)\n", ntop - 8);
            break;
        }
        section_summary(f, S);
    }
    size_t ln = 0;
    for (size_t i = 0; i < R->nsec && nnest; ++i) {
        const struct pf_section *S = &R->sec[i];
        if (S->top) continue;
        if (ln++ == 8) { fprintf(f, "  ... %zu more nested sections\n", nnest - 8); break; }
        fprintf(f, "nested section %s (in %s, process %d): %u processes, %zu supersteps, %s\n",
                S->key, S->parent, S->ref->parent_pid, S->P, S->nsteps, fmt_time(a, sizeof a, S->total));
    }
}

/* ------------------------------------------------------------------ */
/* Prediction                                                           */
/* ------------------------------------------------------------------ */

struct machine_rows {
    struct sstep_param_row *rows;
    size_t n;
};

static int load_rows(const char *path, struct machine_rows *mr, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return errf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    char line[512];
    size_t cap = 0;
    mr->rows = NULL;
    mr->n = 0;
    while (fgets(line, sizeof line, f)) {
        struct sstep_param_row r;
        if (!sstep_param_parse(line, &r)) continue;
        if (mr->n == cap) {
            cap = cap ? 2 * cap : 16;
            struct sstep_param_row *n = realloc(mr->rows, cap * sizeof *n);
            if (!n) { fclose(f); return errf(err, errlen, "out of memory"); }
            mr->rows = n;
        }
        mr->rows[mr->n++] = r;
    }
    fclose(f);
    mr->n = sstep_param_normalize(mr->rows, mr->n);
    return 0;
}

/* "# r ENGINE P FLOPS" lines: the smallest p >= P, else the largest */
double pf_file_r(const char *path, const char *engine, unsigned P)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[512];
    double best = 0, largest = 0;
    unsigned bestp = UINT32_MAX, largestp = 0;
    while (fgets(line, sizeof line, f)) {
        char eng[32];
        unsigned p;
        double r;
        if (sscanf(line, " # r %31s %u %lf", eng, &p, &r) != 3 || strcmp(eng, engine) || !(r > 0)) continue;
        if (p >= P && p <= bestp) { best = r; bestp = p; }
        if (p >= largestp) { largest = r; largestp = p; }
    }
    fclose(f);
    return best > 0 ? best : largest;
}

int pf_machine_load(struct pf_machine *M, const char *path, char *err, size_t errlen)
{
    memset(M, 0, sizeof *M);
    struct machine_rows mr;
    if (load_rows(path, &mr, err, errlen)) return -1;
    free(mr.rows);
    if (!mr.n) return errf(err, errlen, "%s has no parameter rows (engine p msg_size g l)", path);
    M->from_file = 1;
    snprintf(M->path, sizeof M->path, "%s", path);
    return 0;
}

double pf_predict_section(const struct pf_section *S, const struct pf_machine *M)
{
    double rt = M->r;
    struct machine_rows mr = { NULL, 0 };
    size_t first = 0, count = 0;
    unsigned use = 0;
    if (M->from_file) {
        char err[256];
        if (load_rows(M->path, &mr, err, sizeof err)) return NAN;
        use = sstep_param_select(mr.rows, mr.n, S->ref->engine, S->P, &first, &count);
        if (!use) {
            /* no rows of this engine: any engine's */
            use = sstep_param_select(mr.rows, mr.n, mr.rows[0].engine, S->P, &first, &count);
        }
        rt = pf_file_r(M->path, S->ref->engine, S->P);
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
    double tot = 0, meas = 0;
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        if (!S->top) continue;
        double p = pf_predict_section(S, M);
        tot += p;
        meas += S->total;
        fprintf(f, "  section %s (%u processes, %zu supersteps): predicted %s, measured here %s%s\n",
                S->key, S->P, S->nsteps, fmt_time(a, sizeof a, p), fmt_time(b, sizeof b, S->total),
                S->r > 0 ? "" : " (no r recorded: computation kept as measured)");
    }
    fprintf(f, "total: predicted %.9g s, measured here %.9g s\n", tot, meas);
}

/* ------------------------------------------------------------------ */
/* Chrome / Perfetto trace                                              */
/* ------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

int pf_trace(FILE *f, const struct pf_run *R)
{
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"run\":");
    json_str(f, R->run);
    fprintf(f, "},\"traceEvents\":[\n");
    int first = 1;
#define SEP() do { if (!first) fputs(",\n", f); first = 0; } while (0)
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        const unsigned tp = (unsigned)i + 1;
        SEP();
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":", tp);
        char name[300];
        snprintf(name, sizeof name, "section %s (%u processes, %s)", S->key, S->P, S->ref->engine);
        json_str(f, name);
        fprintf(f, "}}");
        SEP();
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", tp, tp);
        for (unsigned s = 0; s < S->P; ++s) {
            const struct pf_part *p = S->part[s];
            if (!p) continue;
            SEP();
            fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"process %u\"}}",
                    tp, s, s);
            double prev = p->start;
            for (size_t k = 0; k < p->nsteps; ++k) {
                const struct pf_step *t = &p->steps[k];
                double a = p->start + t->t0, b = p->start + t->t1;
                SEP();
                fprintf(f, "{\"ph\":\"X\",\"name\":\"compute\",\"cat\":\"computation\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%zu}}", tp, s, prev * 1e6,
                        (a - prev) * 1e6 > 0 ? (a - prev) * 1e6 : 0, k);
                uint64_t sent = 0, got = 0;
                for (uint32_t j = 0; j < t->npeer; ++j) {
                    sent += p->peers[t->peer_first + j].out;
                    got += p->peers[t->peer_first + j].get;
                }
                SEP();
                fprintf(f, "{\"ph\":\"X\",\"name\":\"sync\",\"cat\":\"sync\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%zu,\"layer\":", tp, s, a * 1e6,
                        (b - a) * 1e6, k);
                json_str(f, step_layer(p, t));
                fprintf(f, ",\"put_bytes\":%llu,\"put_reqs\":%u,\"get_bytes\":%llu,\"get_reqs\":%u,"
                        "\"msg_bytes\":%llu,\"msg_reqs\":%u,\"msgs_in\":%u,\"bytes_to_others\":%llu,"
                        "\"bytes_got_from_others\":%llu",
                        (unsigned long long)t->bytes[0], t->reqs[0], (unsigned long long)t->bytes[1],
                        t->reqs[1], (unsigned long long)t->bytes[2], t->reqs[2], t->msgs_in,
                        (unsigned long long)sent, (unsigned long long)got);
                if (k < S->nsteps) {
                    const struct pf_sstep *x = &S->st[k];
                    fprintf(f, ",\"h\":%llu,\"wait_us\":%.3f,\"pred_g_h_l_us\":%.3f", (unsigned long long)x->h,
                            ((b - a) - x->comm) * 1e6, x->pred_comm * 1e6);
                }
                fprintf(f, "}}");
                prev = b;
            }
            if (p->end > prev) {
                SEP();
                fprintf(f, "{\"ph\":\"X\",\"name\":\"compute\",\"cat\":\"computation\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%zu}}", tp, s, prev * 1e6,
                        (p->end - prev) * 1e6, p->nsteps);
            }
        }
        for (size_t k = 0; k < S->nsteps; ++k) {
            const struct pf_sstep *x = &S->st[k];
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"h (bytes)\",\"pid\":%u,\"ts\":%.3f,\"args\":{\"h\":%llu}}",
                    tp, x->begin * 1e6, (unsigned long long)x->h);
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"superstep time (us)\",\"pid\":%u,\"ts\":%.3f,"
                    "\"args\":{\"measured\":%.3f,\"predicted\":%.3f}}", tp, x->begin * 1e6, x->time * 1e6,
                    (x->comp_max + x->pred_comm) * 1e6);
        }
        if (S->nsteps) {
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"h (bytes)\",\"pid\":%u,\"ts\":%.3f,\"args\":{\"h\":0}}",
                    tp, S->st[S->nsteps - 1].end * 1e6);
        }
    }
#undef SEP
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* HTML report with inline SVG                                          */
/* ------------------------------------------------------------------ */

#define W_SVG 960
#define H_SVG 260
#define ML 70   /* margins */
#define MR 20
#define MT 20
#define MB 40

static void html_esc(FILE *f, const char *s)
{
    for (; *s; ++s) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* a "nice" upper bound for an axis */
static double nice_max(double v)
{
    if (!(v > 0)) return 1;
    double e = pow(10, floor(log10(v)));
    double m = v / e;
    double n = m <= 1 ? 1 : m <= 1.5 ? 1.5 : m <= 2 ? 2 : m <= 3 ? 3 : m <= 5 ? 5 : m <= 7.5 ? 7.5 : 10;
    return n * e;
}

static void y_axis(FILE *f, double ymax, const char *unit, double scale, int h)
{
    for (int i = 0; i <= 4; ++i) {
        double v = ymax * i / 4;
        double y = MT + (h - MT - MB) * (1 - (double)i / 4);
        fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>", ML, W_SVG - MR, y, y);
        fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%.3g%s</text>", ML - 4, y + 4,
                v * scale, unit);
    }
}

/* supersteps per bar, so that at most 480 bars are drawn */
static size_t bin_of(size_t n)
{
    size_t b = 1;
    while (n / b > 480) ++b;
    return b;
}

static void svg_time(FILE *f, const struct pf_section *S)
{
    size_t n = S->nsteps, b = bin_of(n), nb = (n + b - 1) / b;
    double ymax = 0;
    for (size_t i = 0; i < nb; ++i) {
        double t = 0, p = 0;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) {
            t += S->st[k].time;
            p += S->st[k].comp_max + S->st[k].pred_comm;
        }
        if (t > ymax) ymax = t;
        if (p > ymax) ymax = p;
    }
    ymax = nice_max(ymax);
    double sc = ymax >= 1 ? 1 : ymax >= 1e-3 ? 1e3 : 1e6;
    const char *unit = ymax >= 1 ? " s" : ymax >= 1e-3 ? " ms" : " us";
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>",
            W_SVG, H_SVG);
    y_axis(f, ymax, unit, sc, H_SVG);
    double bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1);
    double hh = H_SVG - MT - MB;
    fprintf(f, "<g>");
    for (size_t i = 0; i < nb; ++i) {
        double cm = 0, im = 0, ex = 0, t = 0;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) {
            const struct pf_sstep *x = &S->st[k];
            double e = x->time - x->comp_max;
            cm += x->comp_mean;
            im += x->comp_max - x->comp_mean;
            ex += e > 0 ? e : 0;
            t += x->time;
        }
        double x0 = ML + bw * (double)i, y = MT + hh;
        double parts[3] = { cm, im, ex };
        static const char *col[3] = { "#4caf50", "#ff9800", "#e53935" };
        for (int j = 0; j < 3; ++j) {
            double hgt = hh * parts[j] / ymax;
            if (hgt <= 0) continue;
            y -= hgt;
            fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'><title>step %zu%s: %s %.3g us</title></rect>",
                    x0, y, bw > 1.5 ? bw - 0.5 : bw, hgt, col[j], i * b, b > 1 ? "+" : "",
                    j == 0 ? "mean computation" : j == 1 ? "imbalance" : "exchange", parts[j] * 1e6);
        }
    }
    fprintf(f, "</g><polyline fill='none' stroke='#1565c0' stroke-width='1.5' points='");
    for (size_t i = 0; i < nb; ++i) {
        double p = 0;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) p += S->st[k].comp_max + S->st[k].pred_comm;
        fprintf(f, "%.2f,%.2f ", ML + bw * ((double)i + 0.5), MT + hh * (1 - p / ymax));
    }
    fprintf(f, "'/>");
    fprintf(f, "<text x='%d' y='%d' font-size='11'>superstep%s (%zu per bar)</text>", ML, H_SVG - 8,
            b > 1 ? "s" : "", b);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#4caf50'/><text x='%d' y='13' font-size='11'>mean computation</text>",
            W_SVG - 520, W_SVG - 506);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#ff9800'/><text x='%d' y='13' font-size='11'>imbalance</text>",
            W_SVG - 400, W_SVG - 386);
    fprintf(f, "<rect x='%d' y='4' width='10' height='10' fill='#e53935'/><text x='%d' y='13' font-size='11'>exchange</text>",
            W_SVG - 320, W_SVG - 306);
    fprintf(f, "<line x1='%d' x2='%d' y1='9' y2='9' stroke='#1565c0' stroke-width='2'/><text x='%d' y='13' font-size='11'>predicted: max comp + g&#183;h + l</text>",
            W_SVG - 240, W_SVG - 222, W_SVG - 216);
    fprintf(f, "</svg>\n");
}

/* bars of one value per superstep (max over a bin) */
static void svg_bars(FILE *f, const struct pf_section *S, int which, const char *color)
{
    size_t n = S->nsteps, b = bin_of(n), nb = (n + b - 1) / b;
    const int h = 200;
    double ymax = 0;
    for (size_t k = 0; k < n; ++k) {
        double v = which == 0 ? (double)S->st[k].h : S->st[k].imbalance;
        if (v > ymax) ymax = v;
    }
    /* h on a log scale (bytes from 1 to the next power of 10): the
     * h-relations of one program span many orders of magnitude */
    int decades = 0;
    if (which == 0) {
        while (pow(10, decades) < ymax + 1) ++decades;
        if (decades < 1) decades = 1;
        ymax = decades;
    } else {
        ymax = nice_max(ymax);
    }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>", W_SVG, h);
    if (which == 0) {
        for (int i = 0; i <= decades; ++i) {
            double y = MT + (h - MT - MB) * (1 - (double)i / decades);
            char lab[32];
            fmt_bytes(lab, sizeof lab, pow(10, i));
            fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>", ML, W_SVG - MR, y, y);
            fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%s</text>", ML - 4, y + 4,
                    i == 0 ? "0-1 B" : lab);
        }
    } else {
        y_axis(f, ymax, "", 1, h);
    }
    double bw = (double)(W_SVG - ML - MR) / (double)(nb ? nb : 1), hh = h - MT - MB;
    for (size_t i = 0; i < nb; ++i) {
        double v = 0;
        size_t at = i * b;
        for (size_t k = i * b; k < n && k < (i + 1) * b; ++k) {
            double x = which == 0 ? (double)S->st[k].h : S->st[k].imbalance;
            if (x > v) { v = x; at = k; }
        }
        double hgt = which == 0 ? hh * log10(v + 1) / ymax : hh * v / ymax;
        fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'><title>step %zu: %.6g</title></rect>",
                ML + bw * (double)i, MT + hh - hgt, bw > 1.5 ? bw - 0.5 : bw, hgt, color, at, v);
    }
    if (which == 1 && ymax > 1) {
        double y = MT + hh * (1 - 1 / ymax);
        fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#333' stroke-dasharray='4 3'/>", ML, W_SVG - MR, y, y);
    }
    fprintf(f, "<text x='%d' y='%d' font-size='11'>superstep%s (max of %zu per bar)</text></svg>\n", ML, h - 8,
            b > 1 ? "s" : "", b);
}

/* per-process timeline: computation, waiting and exchange of each sync */
static void svg_timeline(FILE *f, const struct pf_section *S)
{
    const unsigned P = S->P;
    const int row = P <= 16 ? 22 : P <= 64 ? 8 : 3;
    const int h = MT + MB + row * (int)P;
    /* at most ~40000 rectangles: a window of supersteps around the slowest */
    size_t n = S->nsteps, lo = 0, hi = n;
    size_t cap = 40000 / (2 * (P ? P : 1));
    if (cap < 1) cap = 1;
    if (n > cap) {
        size_t idx[1];
        top_steps(S, idx, 1);
        lo = idx[0] > cap / 2 ? idx[0] - cap / 2 : 0;
        hi = lo + cap < n ? lo + cap : n;
    }
    double t0 = lo ? S->st[lo].begin : S->start, t1 = hi < n ? S->st[hi - 1].end : S->end;
    if (!(t1 > t0)) t1 = t0 + 1e-9;
    double xs = (W_SVG - ML - MR) / (t1 - t0);
    fprintf(f, "<p>%s</p>", lo || hi < n ? "Only a window of supersteps around the slowest one is drawn." : "");
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif'>", W_SVG, h);
    for (unsigned s = 0; s < P; ++s) {
        const struct pf_part *p = S->part[s];
        double y = MT + row * (double)s;
        if (row >= 8) fprintf(f, "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%u</text>", ML - 4, y + row * 0.7, s);
        if (!p) continue;
        fprintf(f, "<rect x='%d' y='%.1f' width='%.1f' height='%.1f' fill='#4caf50'/>", ML, y,
                (double)(W_SVG - ML - MR), row * 0.8);
        for (size_t k = lo; k < hi && k < p->nsteps; ++k) {
            const struct pf_step *t = &p->steps[k];
            double a = p->start + t->t0, b = p->start + t->t1;
            double wait = k < S->nsteps ? (b - a) - S->st[k].comm : 0;
            if (wait < 0) wait = 0;
            if (a < t0) a = t0;
            if (b > t1) b = t1;
            if (b <= a) continue;
            double xa = ML + (a - t0) * xs, xw = ML + (a + wait - t0) * xs, xb = ML + (b - t0) * xs;
            if (xw > xb) xw = xb;
            if (xw - xa >= 0.05)
                fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='#bdbdbd'><title>process %u step %zu: waiting %.3g us</title></rect>",
                        xa, y, xw - xa, row * 0.8, s, k, wait * 1e6);
            if (xb - xw >= 0.05)
                fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='#e53935'><title>process %u step %zu: exchange %.3g us</title></rect>",
                        xw, y, xb - xw, row * 0.8, s, k, (b - a - wait) * 1e6);
        }
    }
    char a[32], b[32];
    fprintf(f, "<text x='%d' y='%d' font-size='11'>time %s .. %s after the run started; green computation, grey waiting, red exchange</text>",
            ML, h - 8, fmt_time(a, sizeof a, t0), fmt_time(b, sizeof b, t1));
    fprintf(f, "</svg>\n");
}

static void html_section(FILE *f, const struct pf_section *S, size_t no)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "<h2 id='s%zu'>Section ", no);
    html_esc(f, S->key);
    fprintf(f, "</h2>\n<p>%u processes on the %s engine, %zu supersteps, %s; %s",
            S->P, S->ref->engine, S->nsteps, fmt_time(a, sizeof a, S->total),
            S->top ? "top level" : "nested in ");
    if (!S->top) { html_esc(f, S->parent); fprintf(f, " (process %d)", S->ref->parent_pid); }
    fprintf(f, ".</p>\n");
    if (S->present < S->P) fprintf(f, "<p class='warn'>Only %u of %u parts were found.</p>", S->present, S->P);
    if (S->unequal) fprintf(f, "<p class='warn'>The processes recorded different numbers of supersteps; the first %zu are merged.</p>", S->nsteps);
    fprintf(f, "<table><tr><th>computation</th><th>communication</th><th>waiting</th><th>predicted (recorded g, l)</th><th>measured</th></tr>"
            "<tr><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td><td>%s</td><td>%s</td></tr></table>\n",
            pct(S->comp, S->life), pct(S->comm, S->life), pct(S->wait, S->life),
            fmt_time(a, sizeof a, S->pred), fmt_time(b, sizeof b, S->total));
    if (!S->nsteps) return;
    fprintf(f, "<h3>Time per superstep, measured against predicted</h3>\n");
    svg_time(f, S);
    fprintf(f, "<h3>h per superstep (max bytes a process sends or receives; log scale)</h3>\n");
    svg_bars(f, S, 0, "#7e57c2");
    fprintf(f, "<h3>Load imbalance per superstep (max / mean computation; dashed: balanced)</h3>\n");
    svg_bars(f, S, 1, "#ff9800");
    fprintf(f, "<h3>Timeline per process</h3>\n");
    svg_timeline(f, S);
    size_t idx[10];
    size_t n = top_steps(S, idx, 10);
    fprintf(f, "<h3>The %zu most expensive supersteps</h3>\n<table><tr><th>step</th><th>layer</th><th>time</th>"
            "<th>max computation</th><th>imbalance</th><th>exchange</th><th>h</th><th>requests</th>"
            "<th>g&#183;h + l</th><th>cause</th></tr>\n", n);
    for (size_t i = 0; i < n; ++i) {
        const struct pf_sstep *x = &S->st[idx[i]];
        double ex = x->time - x->comp_max;
        fprintf(f, "<tr><td>%zu</td><td>%s</td><td>%s</td><td>%s</td><td>%.2f</td><td>%s</td><td>%s</td>"
                "<td>%llu</td><td>%s</td><td class='c-%s'>%s</td></tr>\n", idx[i], x->layer,
                fmt_time(a, sizeof a, x->time), fmt_time(b, sizeof b, x->comp_max), x->imbalance,
                fmt_time(c, sizeof c, ex > 0 ? ex : 0), fmt_bytes(d, sizeof d, (double)x->h),
                (unsigned long long)x->reqs, fmt_time(e, sizeof e, x->pred_comm), x->cause, x->cause);
    }
    fprintf(f, "</table>\n");
}

int pf_html(FILE *f, const struct pf_run *R)
{
    char a[32];
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Superstep profile ");
    html_esc(f, R->run);
    fprintf(f, "</title><style>body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}"
            "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;"
            "font-size:13px;text-align:right}th{background:#f3f3f3}.warn{color:#b71c1c}"
            "td.c-imbalance{color:#e65100}td.c-communication{color:#c62828}td.c-latency{color:#6a1b9a}"
            "pre{background:#f7f7f7;padding:.5em;font-size:12px;overflow-x:auto}</style></head><body>\n");
    fprintf(f, "<h1>Superstep profile</h1>\n<p>Run <code>");
    html_esc(f, R->run);
    fprintf(f, "</code> in <code>");
    html_esc(f, R->dir);
    fprintf(f, "</code>: %zu section(s), %s in top-level sections. How to read this: docs/profiler.md.</p>\n",
            R->nsec, fmt_time(a, sizeof a, R->total));
    fprintf(f, "<table><tr><th>section</th><th>processes</th><th>supersteps</th><th>time</th><th>computation</th>"
            "<th>communication</th><th>waiting</th><th>predicted</th></tr>\n");
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        char b[32], c[32];
        fprintf(f, "<tr><td style='text-align:left'><a href='#s%zu'>", i);
        html_esc(f, S->key);
        fprintf(f, "</a>%s</td><td>%u</td><td>%zu</td><td>%s</td><td>%.1f%%</td><td>%.1f%%</td><td>%.1f%%</td><td>%s</td></tr>\n",
                S->top ? "" : " (nested)", S->P, S->nsteps, fmt_time(b, sizeof b, S->total),
                pct(S->comp, S->life), pct(S->comm, S->life), pct(S->wait, S->life),
                fmt_time(c, sizeof c, S->pred));
        if (i == 199 && R->nsec > 200) {
            fprintf(f, "<tr><td colspan='8'>... %zu more</td></tr>", R->nsec - 200);
            break;
        }
    }
    fprintf(f, "</table>\n");
    /* charts for the longest sections (up to 6) */
    size_t order[6], no = 0;
    for (size_t i = 0; i < R->nsec; ++i) {
        size_t j = no < 6 ? no++ : 6;
        if (j == 6) {
            if (R->sec[i].total <= R->sec[order[5]].total) continue;
            j = 5;
        }
        while (j > 0 && R->sec[order[j - 1]].total < R->sec[i].total) { order[j] = order[j - 1]; --j; }
        order[j] = i;
    }
    for (size_t i = 0; i < no; ++i) html_section(f, &R->sec[order[i]], order[i]);
    fprintf(f, "<h2>Summary (as printed at the end of the run)</h2>\n<pre>");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (m) {
        pf_summary(m, R);
        fclose(m);
        html_esc(f, buf);
        free(buf);
    }
    fprintf(f, "</pre>\n</body></html>\n");
    return ferror(f) ? -1 : 0;
}

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
    if (pf_load(&R, dir, run, err, sizeof err)) {
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
            if (pf_load(&R, dir, run, err, sizeof err)) {
                fprintf(stderr, "superstep: profile: %s\n", err);
                return -1;
            }
        }
    }
    int rc = pf_write_all(&R, dir, getenv("SUPERSTEP_PROFILE_QUIET") ? NULL : stderr);
    pf_free(&R);
    return rc;
}
