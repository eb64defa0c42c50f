/*
 * The superstep profiler (prof.h): units and the text summary.
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
/* Units                                                                */
/* ------------------------------------------------------------------ */

SSTEP_PROF_API const char *pf_fmt_time(char *buf, size_t len, double s)
{
    double a = fabs(s);
    if (a >= 1) snprintf(buf, len, "%.3f s", s);
    else if (a >= 1e-3) snprintf(buf, len, "%.3f ms", s * 1e3);
    else if (a >= 1e-6) snprintf(buf, len, "%.2f us", s * 1e6);
    else snprintf(buf, len, "%.0f ns", s * 1e9);
    return buf;
}

SSTEP_PROF_API const char *pf_fmt_bytes(char *buf, size_t len, double b)
{
    if (b >= 1 << 30) snprintf(buf, len, "%.2f GiB", b / (1 << 30));
    else if (b >= 1 << 20) snprintf(buf, len, "%.2f MiB", b / (1 << 20));
    else if (b >= 1 << 10) snprintf(buf, len, "%.1f KiB", b / (1 << 10));
    else snprintf(buf, len, "%.0f B", b);
    return buf;
}

SSTEP_PROF_API double pf_pct(double a, double b)
{
    return b > 0 ? 100.0 * a / b : 0;
}

SSTEP_PROF_API const char *pf_step_label(const struct pf_section *S, size_t k, char *buf, size_t len)
{
    const struct pf_sstep *x = &S->st[k];
    if (x->startup) snprintf(buf, len, "start-up");
    else if (x->own) snprintf(buf, len, "%zu+", x->ustep);
    else snprintf(buf, len, "%zu", x->ustep);
    return buf;
}

/* two recorded sites are one call site: the same file, line and function
 * once resolved (C or Python), else the same recorded name */
static int same_site(const struct pf_site *a, const struct pf_site *b)
{
    if (a->line > 0 || b->line > 0)
        return a->line == b->line && !strcmp(a->file, b->file) && !strcmp(a->func, b->func);
    return !strcmp(a->name, b->name) && !strcmp(a->layer, b->layer);
}

SSTEP_PROF_API size_t pf_site_totals(const struct pf_section *S, size_t *idx, size_t n,
        size_t *cnt, double *tim)
{
    const struct pf_part *r = S->ref;
    if (!r || !r->nsites) return 0;
    /* each site counts under the first site of its (file, line, function) */
    for (unsigned i = 0; i < r->nsites; ++i) {
        cnt[i] = 0;
        tim[i] = 0;
    }
    for (size_t k = S->nstart; k < S->nsteps && k < r->nsteps; ++k) {
        int si = r->steps[k].site;
        if (si < 0 || (unsigned)si >= r->nsites) continue;
        for (int j = 0; j < si; ++j)
            if (same_site(&r->sites[j], &r->sites[si])) { si = j; break; }
        cnt[si]++;
        tim[si] += S->st[k].time;
    }
    size_t m = 0;
    for (size_t j = 0; j < n; ++j) {
        int best = -1;
        for (unsigned i = 0; i < r->nsites; ++i) {
            if (!cnt[i]) continue;
            int taken = 0;
            for (size_t q = 0; q < m; ++q) taken |= idx[q] == i;
            if (!taken && (best < 0 || tim[i] > tim[best])) best = (int)i;
        }
        if (best < 0) break;
        idx[m++] = (size_t)best;
    }
    return m;
}

/* the CPUs of a "0-3,8" list into set (PF_MAX_CPUS bits); 0, or -1 if
 * the list is empty or not one */
#define PF_MAX_CPUS 4096
static int cpu_list(const char *s, unsigned char *set)
{
    if (!*s) return -1;
    while (*s) {
        char *e;
        unsigned long a = strtoul(s, &e, 10), b = a;
        if (e == s) return -1;
        if (*e == '-') {
            s = e + 1;
            b = strtoul(s, &e, 10);
            if (e == s) return -1;
        }
        if (b < a || b >= PF_MAX_CPUS) return -1;
        for (unsigned long c = a; c <= b; ++c) set[c / 8] |= (unsigned char)(1u << (c % 8));
        s = e;
        if (*s == ',') ++s;
        else if (*s) return -1;
    }
    return 0;
}

SSTEP_PROF_API const char *pf_oversubscribed(const struct pf_section *S, char *buf, size_t len)
{
    size_t nover = 0;
    buf[0] = '\0';
    for (unsigned s = 0; s < S->P; ++s) {
        const struct pf_part *p = S->part[s];
        if (!p) continue;
        /* the host's cores: the union of its OS processes' CPU lists (MPI
         * ranks bound to a core each), else the largest count recorded */
        unsigned procs = 0, cores = 0, first = 1, listed = 0;
        int lists = 1;
        unsigned char set[PF_MAX_CPUS / 8];
        memset(set, 0, sizeof set);
        for (unsigned q = 0; q < S->P; ++q) {
            const struct pf_part *o = S->part[q];
            if (!o || strcmp(o->host, p->host)) continue;
            if (q < s) first = 0;
            procs++;
            if (o->cores > cores) cores = o->cores;
            if (cpu_list(o->cpus, set)) lists = 0;
        }
        for (size_t i = 0; lists && i < sizeof set; ++i)
            for (int j = 0; j < 8; ++j) listed += (set[i] >> j) & 1;
        if (lists && listed > cores) cores = listed;
        if (!first || !cores || procs <= cores) continue;
        if (nover++ == 0)
            snprintf(buf, len, "%u processes on host %s, which has %u core%s", procs, p->host, cores,
                    cores == 1 ? "" : "s");
    }
    if (nover > 1) {
        size_t u = strlen(buf);
        snprintf(buf + u, len - u, " (and %zu more host%s)", nover - 1, nover == 2 ? "" : "s");
    }
    return nover ? buf : NULL;
}

static void site_table(FILE *f, const struct pf_section *S)
{
    const struct pf_part *r = S->ref;
    if (!r || !r->nsites) return;
    size_t *cnt = calloc(r->nsites, sizeof *cnt);
    double *tim = calloc(r->nsites, sizeof *tim);
    size_t idx[PF_SITES_SHOWN + 1];
    size_t n = cnt && tim ? pf_site_totals(S, idx, PF_SITES_SHOWN + 1, cnt, tim) : 0;
    if (n) {
        char a[32], b[32], where[600];
        fprintf(f, "  supersteps by the call that ended them (per call site):\n");
        fprintf(f, "    %10s %11s %11s %7s  %s\n", "supersteps", "time", "mean", "share", "call");
        for (size_t i = 0; i < n && i < PF_SITES_SHOWN; ++i) {
            const struct pf_site *s = &r->sites[idx[i]];
            fprintf(f, "    %10zu %11s %11s %6.1f%%  %s", cnt[idx[i]], pf_fmt_time(a, sizeof a, tim[idx[i]]),
                    pf_fmt_time(b, sizeof b, tim[idx[i]] / (double)cnt[idx[i]]),
                    pf_pct(tim[idx[i]], S->steps_time), pf_where(s, where, sizeof where));
            if (s->func[0] && strcmp(s->func, "?") && s->line > 0) fprintf(f, " in %s", s->func);
            fprintf(f, "\n");
        }
        if (n > PF_SITES_SHOWN) {
            size_t c = 0;
            double t = 0;
            for (unsigned i = 0; i < r->nsites; ++i) { c += cnt[i]; t += tim[i]; }
            for (size_t i = 0; i < PF_SITES_SHOWN; ++i) { c -= cnt[idx[i]]; t -= tim[idx[i]]; }
            fprintf(f, "    %10zu %11s %11s %6.1f%%  (further calls)\n", c, pf_fmt_time(a, sizeof a, t),
                    pf_fmt_time(b, sizeof b, c ? t / (double)c : 0), pf_pct(t, S->steps_time));
        }
    }
    free(cnt);
    free(tim);
}

/* indices of the (up to) n most expensive supersteps after the start-up,
 * most expensive first */
SSTEP_PROF_API size_t pf_top_steps(const struct pf_section *S, size_t *idx, size_t n)
{
    size_t m = 0;
    for (size_t k = S->nstart; k < S->nsteps; ++k) {
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

SSTEP_PROF_API int pf_cmp_double(const void *a, const void *b)
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
    for (size_t k = S->nstart; k < S->nsteps; ++k) {
        size_t i = 0;
        while (i < n && strcmp(names[i], S->st[k].layer)) ++i;
        if (i == n && n < 8) { names[n] = S->st[k].layer; count[n++] = 0; }
        if (i < n) count[i]++;
    }
    fprintf(f, "  supersteps by layer:");
    for (size_t i = 0; i < n; ++i) fprintf(f, " %s %zu%s", names[i], count[i], i + 1 < n ? "," : "");
    fprintf(f, "%s\n", n ? "" : " none");
}

/* LPF's tagged and zero-cost syncs side by side: one row per phase (tag,
 * processes, expected counts), from every process's records */
struct phase_row {
    uint32_t tag, n;
    uint64_t es, er;
    const char *pids;
    size_t records;
    double time, tmax;
};

static void phases_table(FILE *f, const struct pf_section *S)
{
    struct phase_row rows[16];
    size_t nr = 0, more = 0;
    for (unsigned q = 0; q < S->P; ++q) {
        const struct pf_part *p = S->part[q];
        if (!p) continue;
        for (size_t k = 0; k < p->nsteps; ++k) {
            const struct pf_step *s = &p->steps[k];
            if (!s->ph_n) continue;
            size_t i = 0;
            while (i < nr && !(rows[i].tag == s->ph_tag && rows[i].es == s->ph_es
                        && rows[i].er == s->ph_er && !strcmp(rows[i].pids, s->ph_pids))) ++i;
            if (i == nr) {
                if (nr == sizeof rows / sizeof *rows) { more++; continue; }
                rows[nr] = (struct phase_row){ s->ph_tag, s->ph_n, s->ph_es, s->ph_er,
                    s->ph_pids, 0, 0, 0 };
                nr++;
            }
            const double t = s->t1 - s->t0;
            rows[i].records++;
            rows[i].time += t;
            if (t > rows[i].tmax) rows[i].tmax = t;
        }
    }
    if (!nr) return;
    char a[32], b[48], c[32], d[32];
    fprintf(f, "  LPF phases (tagged and zero-cost syncs, every process's):\n");
    fprintf(f, "    %-6s %-24s %-16s %9s %11s %11s\n", "tag", "processes", "expected s/r",
            "syncs", "mean sync", "max sync");
    for (size_t i = 0; i < nr; ++i) {
        const struct phase_row *r = &rows[i];
        if (r->tag == UINT32_MAX) snprintf(a, sizeof a, "-");
        else snprintf(a, sizeof a, "%u", r->tag);
        if (r->es || r->er) snprintf(b, sizeof b, "%llu/%llu", (unsigned long long)r->es,
                (unsigned long long)r->er);
        else snprintf(b, sizeof b, "(tagged)");
        fprintf(f, "    %-6s %-24s %-16s %9zu %11s %11s\n", a, r->pids, b,
                r->records / (r->n ? r->n : 1),
                pf_fmt_time(c, sizeof c, r->records ? r->time / (double)r->records : 0),
                pf_fmt_time(d, sizeof d, r->tmax));
    }
    if (more) fprintf(f, "    (%zu records of further phases not shown)\n", more);
}

static void section_summary(FILE *f, const struct pf_section *S)
{
    char a[32], b[32], c[32], d[32], e[32];
    const struct pf_part *r = S->ref;
    fprintf(f, "section %s: %u process%s (%s engine%s), %zu superstep%s, %s\n", S->key, S->P,
            S->P == 1 ? "" : "es", r->engine, S->present < S->P ? ", PARTS MISSING" : "",
            S->nuser, S->nuser == 1 ? "" : "s", pf_fmt_time(a, sizeof a, S->total));
    if (S->nstart) {
        const struct pf_site *ss = r->steps[S->nstart - 1].site >= 0 ? &r->sites[r->steps[S->nstart - 1].site] : NULL;
        char where[600] = "the library";
        if (ss) pf_where(ss, where, sizeof where);
        fprintf(f, "  start-up: %s (the library's own sync%s before the program's first superstep, "
                "%s; not counted below)\n", pf_fmt_time(a, sizeof a, S->startup), S->nstart == 1 ? "" : "s",
                where);
    } else if (S->startup > 0) {
        fprintf(f, "  start-up: %s (starting the section's processes, before the program's code ran; not "
                "counted below)\n", pf_fmt_time(a, sizeof a, S->startup));
    }
    if (S->nsteps - S->nstart > S->nuser)
        fprintf(f, "  and %zu sync%s the layers made for themselves after the start-up (numbered N+: "
                "after superstep N)\n", S->nsteps - S->nstart - S->nuser,
                S->nsteps - S->nstart - S->nuser == 1 ? "" : "s");
    {
        char ov[400];
        if (pf_oversubscribed(S, ov, sizeof ov))
            fprintf(f, "  processes outnumbered the cores: %s; syncs then wait for time slices "
                    "(\"slow sync\"), and times are not those of a machine with a core each\n", ov);
    }
    if (S->present < S->P)
        fprintf(f, "  only %u of %u processes' parts were found\n", S->present, S->P);
    if (S->unequal)
        fprintf(f, "  the processes recorded different numbers of supersteps (partitioned "
                "syncs?); the first %zu are merged\n", S->nsteps);
    fprintf(f, "  time over all processes: computation %.1f%%, communication %.1f%%, waiting %.1f%%\n",
            pf_pct(S->comp, S->life), pf_pct(S->comm, S->life), pf_pct(S->wait, S->life));
    const double run = S->total - S->startup;
    fprintf(f, "  predicted with the recorded g, l (sum of max computation + g*h + l): %s "
            "(measured %s%s, %+.0f%%)\n", pf_fmt_time(a, sizeof a, S->pred), pf_fmt_time(b, sizeof b, run),
            S->startup > 0 ? " after the start-up" : "", run > 0 ? 100.0 * (S->pred - run) / run : 0.0);
    phases_table(f, S);
    if (S->nsteps <= S->nstart) return;
    layers_line(f, S);
    size_t idx[10];
    size_t n = pf_top_steps(S, idx, 10);
    fprintf(f, "  the %zu most expensive supersteps:\n", n);
    fprintf(f, "    %7s %-7s %11s %11s %7s %11s %11s %11s  %-13s %s\n", "step", "layer", "time", "comp max",
            "imbal", "exchange", "h", "g*h+l", "cause", "ended by the sync at");
    for (size_t i = 0; i < n; ++i) {
        const struct pf_sstep *x = &S->st[idx[i]];
        const struct pf_step *t = &r->steps[idx[i]];
        char where[600] = "?", lab[32];
        if (t->site >= 0) pf_where(&r->sites[t->site], where, sizeof where);
        double exch = x->time - x->comp_max;
        fprintf(f, "    %7s %-7s %11s %11s %7.2f %11s %11s %11s  %-13s %s\n",
                pf_step_label(S, idx[i], lab, sizeof lab), x->layer,
                pf_fmt_time(a, sizeof a, x->time), pf_fmt_time(b, sizeof b, x->comp_max), x->imbalance,
                pf_fmt_time(c, sizeof c, exch > 0 ? exch : 0), pf_fmt_bytes(d, sizeof d, (double)x->h),
                pf_fmt_time(e, sizeof e, x->pred_comm), x->cause, where);
    }
    site_table(f, S);
    /* imbalance per superstep, in brief (the report draws all of it) */
    const size_t n0 = S->nstart, nn = S->nsteps - S->nstart;
    double *v = malloc(nn * sizeof *v);
    if (v) {
        size_t worst = n0, nimb = 0;
        for (size_t k = n0; k < S->nsteps; ++k) {
            v[k - n0] = S->st[k].imbalance;
            if (v[k - n0] > S->st[worst].imbalance) worst = k;
            nimb += v[k - n0] >= PF_IMBALANCE_MIN;
        }
        qsort(v, nn, sizeof *v, pf_cmp_double);
        char lab[32];
        fprintf(f, "  load imbalance per superstep (max/mean computation): median %.2f, "
                "90th percentile %.2f, worst %.2f (step %s); %zu of %zu at %.2f or more\n", v[nn / 2],
                v[(nn * 9) / 10 < nn ? (nn * 9) / 10 : nn - 1], S->st[worst].imbalance,
                pf_step_label(S, worst, lab, sizeof lab), nimb, nn, PF_IMBALANCE_MIN);
        free(v);
    }
    if (nn <= 16) {
        fprintf(f, "  imbalance by step:");
        for (size_t k = n0; k < S->nsteps; ++k) fprintf(f, " %.2f", S->st[k].imbalance);
        fprintf(f, "\n");
    }
}

void pf_summary(FILE *f, const struct pf_run *R)
{
    char a[32];
    size_t ntop = 0, nnest = 0;
    for (size_t i = 0; i < R->nsec; ++i) *(R->sec[i].top ? &ntop : &nnest) += 1;
    fprintf(f, "superstep profile of run %s (%s): %zu top-level section%s, %zu nested, %s\n",
            R->run, R->dir, ntop, ntop == 1 ? "" : "s", nnest, pf_fmt_time(a, sizeof a, R->total));
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
                S->key, S->parent, S->ref->parent_pid, S->P, S->nuser, pf_fmt_time(a, sizeof a, S->total));
    }
}
