/*
 * The superstep profiler (prof.h, docs/profiler.md): load the parts of a
 * run and merge each section's processes superstep by superstep.
 *
 * Per superstep k of a section (processes aligned by their k-th sync):
 *   computation of s = its sync entry - its previous sync exit (or start)
 *   comm             = the shortest sync of all processes (the last to
 *                      arrive hardly waits: its sync is the exchange)
 *   waiting of s     = its sync - comm
 *   time             = max over s of (its exit of sync k - its exit of sync
 *                      k-1, or its start), each on its own clock: at least
 *                      the longest computation plus the shortest sync
 *   own syncs        = syncs a layer made for itself ("own" lines): before
 *                      the first of the program's, they are the start-up;
 *                      the program's supersteps are numbered without them
 *   start-up         = those syncs, else (an LPF section) the time until the
 *                      engine had started the processes ("ready" lines):
 *                      superstep 0's computation starts there
 *   h                = max over s of max(bytes sent, bytes received), where
 *                      s sends its puts and messages and the data others get
 *                      from it, and receives the rest
 *   predicted        = max computation + g(m)·h + l(m), g and l as lpf_probe
 *                      returned them in the run, m the mean request size.
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

SSTEP_PROF_API int pf_errf(char *err, size_t len, const char *fmt, ...)
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
    if (!f) return pf_errf(err, errlen, "cannot read %s: %s", path, strerror(errno));
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
            s->ph_n = 0;
            s->own = 0;
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
        } else if (line[0] == 'x' && line[1] == ' ' && p->nsteps) {
            struct pf_step *s = &p->steps[p->nsteps - 1];
            unsigned tag, lo, n;
            unsigned long long es, er;
            int pos = 0;
            if (sscanf(line + 2, "%u %u %u %llu %llu %n", &tag, &lo, &n, &es, &er, &pos) >= 5) {
                s->ph_tag = tag;
                s->ph_n = n;
                s->ph_es = es;
                s->ph_er = er;
                const char *pids = pos ? line + 2 + pos : "";
                if (!*pids) snprintf(s->ph_pids, sizeof s->ph_pids, "%u-%u", lo, lo + n - 1);
                else if (strlen(pids) < sizeof s->ph_pids) snprintf(s->ph_pids, sizeof s->ph_pids, "%s", pids);
                else snprintf(s->ph_pids, sizeof s->ph_pids, "%.*s...", (int)sizeof s->ph_pids - 4, pids);
            }
        } else if (!strcmp(line, "own") && p->nsteps) {
            p->steps[p->nsteps - 1].own = 1;
        } else if (!strncmp(line, "ready ", 6)) {
            p->ready = 1e-9 * (double)strtoull(line + 6, NULL, 10);
        } else if (!strncmp(line, "cores ", 6)) {
            int pos = 0;
            if (sscanf(line + 6, "%u %n", &p->cores, &pos) >= 1 && pos)
                snprintf(p->cpus, sizeof p->cpus, "%s", line + 6 + pos);
        } else if (!strncmp(line, "gl ", 3)) {
            if (ngl < SSTEP_PROF_GL_POINTS
                    && sscanf(line + 3, "%lf %lf %lf", &p->gl_m[ngl], &p->gl_g[ngl], &p->gl_l[ngl]) == 3)
                ngl++;
        } else if (!strncmp(line, "site ", 5)) {
            struct pf_site *n = realloc(p->sites, (p->nsites + 1) * sizeof *n);
            if (!n) { ok = 0; break; }
            p->sites = n;
            struct pf_site *s = &p->sites[p->nsites];
            memset(s, 0, sizeof *s);
            unsigned idx;
            int pos = 0;
            if (sscanf(line + 5, "%u %d %15s %n", &idx, &s->origin, s->layer, &pos) < 3) continue;
            snprintf(s->name, sizeof s->name, "%s", pos ? line + 5 + pos : "?");
            p->nsites++;
        } else if (!strncmp(line, "where ", 6)) {
            unsigned idx;
            unsigned long long va;
            int pos = 0;
            if (sscanf(line + 6, "%u %llx %n", &idx, &va, &pos) >= 2 && pos && idx < p->nsites) {
                p->sites[idx].vaddr = va;
                snprintf(p->sites[idx].obj, sizeof p->sites[idx].obj, "%s", line + 6 + pos);
            }
        } else if (!strncmp(line, "pysite ", 7)) {
            /* a Python call site: "pysite I LINE FUNCTION FILE" */
            unsigned idx;
            int ln = 0, pos = 0;
            char fn[128];
            if (sscanf(line + 7, "%u %d %127s %n", &idx, &ln, fn, &pos) >= 3 && pos
                    && idx < p->nsites) {
                struct pf_site *s = &p->sites[idx];
                snprintf(s->func, sizeof s->func, "%s", fn);
                snprintf(s->file, sizeof s->file, "%s", line + 7 + pos);
                s->line = ln > 0 ? ln : 0;
                s->vaddr = 0;
            }
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
        return pf_errf(err, errlen, "%s is not a complete profile part", path);
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
        return pf_errf(err, errlen, "%s: inconsistent peer entries", path);
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

SSTEP_PROF_API const char *pf_step_layer(const struct pf_part *p, const struct pf_step *s)
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
    size_t user = 0;
    /* no own sync first: the start-up ends when the processes were ready */
    const int own0 = S->ref->nsteps && S->ref->steps[0].own;
    if (!own0)
        for (unsigned s = 0; s < P; ++s)
            if (S->part[s] && S->part[s]->ready > S->startup) S->startup = S->part[s]->ready;
    for (size_t k = 0; k < S->nsteps; ++k) {
        struct pf_sstep *x = &S->st[k];
        double cmax = 0, csum = 0, smin = INFINITY, emax = -INFINITY, span = 0;
        uint64_t bytes = 0, reqs = 0;
        memset(sent, 0, P * sizeof *sent);
        memset(recv, 0, P * sizeof *recv);
        for (unsigned s = 0; s < P; ++s) {
            const struct pf_part *p = S->part[s];
            if (!p) continue;
            const struct pf_step *t = &p->steps[k];
            double from = k ? p->start + p->steps[k - 1].t1 : p->start + (own0 ? 0 : p->ready);
            double comp = p->start + t->t0 - from;
            if (comp < 0) comp = 0;
            double sync = t->t1 - t->t0;
            /* this process's time in the superstep, on its own clock */
            double own = p->start + t->t1 - from;
            if (own > span) span = own;
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
        x->time = span;
        prev_end = emax;
        /* the program's numbering: a layer's own syncs left out */
        x->own = S->ref->steps[k].own;
        x->startup = x->own && user == 0;
        x->ustep = x->own ? (user ? user - 1 : 0) : user++;
        if (x->startup && k == S->nstart) {
            S->nstart = k + 1;
            S->startup += x->time;
        } else {
            S->steps_time += x->time;
        }
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
        x->layer = pf_step_layer(S->ref, &S->ref->steps[k]);
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
        /* where computing outweighs the exchange, the imbalance is the
         * cause once the processes idle a fifth of the slowest one's
         * computation: a 2:1 split at p = 2 (max / mean 1.33) is one, though
         * the mean computation is the larger part */
        if (best <= 1) best = x->imbalance >= PF_IMBALANCE_MIN ? 1 : 0;
        x->cause = names[best];
        /* an exchange far above the model: not the h-relation's fault */
        if (best >= 2 && exch > 4 * x->pred_comm) x->cause = "slow sync";
        if (!x->startup) S->pred += cmax + x->pred_comm;   /* the program's supersteps */
    }
    S->nuser = user;
    double tail = S->end - prev_end;
    if (tail > 0) S->pred += tail;
    /* shares over all processes, after the start-up (shown apart) */
    for (unsigned s = 0; s < P; ++s) {
        const struct pf_part *p = S->part[s];
        if (!p) continue;
        const double from = S->nstart ? p->steps[S->nstart - 1].t1 : p->ready;
        double life = p->end - p->start - from, sync = 0, wait = 0;
        for (size_t k = S->nstart; k < p->nsteps; ++k) {
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

int pf_load_parts(struct pf_run *R, const char *dir, const char *run, int resolve, char *err, size_t errlen)
{
    memset(R, 0, sizeof *R);
    snprintf(R->dir, sizeof R->dir, "%s", dir);
    DIR *d = opendir(dir);
    if (!d) return pf_errf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
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
        if (!want[0]) { closedir(d); return pf_errf(err, errlen, "no profile parts (*.part) in %s", dir); }
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
            if (!n) { closedir(d); pf_free(R); return pf_errf(err, errlen, "out of memory"); }
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
    if (!R->nparts) return pf_errf(err, errlen, "no readable parts of run %s in %s", want, dir);
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
    if (resolve) pf_resolve_sites(R);
    /* sections */
    for (size_t i = 0; i < R->nparts;) {
        size_t j = i;
        while (j < R->nparts && !strcmp(R->parts[j].key, R->parts[i].key)) ++j;
        struct pf_section *n = realloc(R->sec, (R->nsec + 1) * sizeof *n);
        if (!n) { pf_free(R); return pf_errf(err, errlen, "out of memory"); }
        R->sec = n;
        struct pf_section *S = &R->sec[R->nsec];
        memset(S, 0, sizeof *S);
        snprintf(S->key, sizeof S->key, "%s", R->parts[i].key);
        snprintf(S->parent, sizeof S->parent, "%s", R->parts[i].parent);
        S->top = !strcmp(S->parent, "-");
        S->P = R->parts[i].P;
        S->part = calloc(S->P, sizeof *S->part);
        if (!S->part) { pf_free(R); return pf_errf(err, errlen, "out of memory"); }
        for (size_t k = i; k < j; ++k)
            if (R->parts[k].P == S->P && !S->part[R->parts[k].pid]) {
                S->part[R->parts[k].pid] = &R->parts[k];
                S->present++;
            }
        R->nsec++;
        if (analyze_section(S)) { pf_free(R); return pf_errf(err, errlen, "out of memory"); }
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

int pf_load(struct pf_run *R, const char *dir, const char *run, char *err, size_t errlen)
{
    return pf_load_parts(R, dir, run, 1, err, errlen);
}
