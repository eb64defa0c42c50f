/*
 * The superstep profiler: recording (see profile.h and docs/profiler.md).
 *
 * Every context of a profiled program owns a recorder: an array of one
 * record per superstep and an array of (peer, bytes) entries, both grown by
 * doubling. The sync path appends to them (two clock reads, a walk over the
 * peers this process queued requests for -- which the exchange walks
 * anyway); nothing is shared and nothing is locked. When the context ends
 * (its section ends for this process) the recorder is written to its own
 * file, a "part", in the profile directory:
 *     <dir>/<run>.<section>.<pid>.part
 * At the end of the program, the process that ran pid 0 of the top-level
 * sections merges the parts of its run (src/prof/) into summary.txt (also
 * printed on stderr), trace.json and report.html.
 *
 * Sections are named so that every process of a section, in any OS process
 * (MPI ranks), derives the same name without communication:
 *  - top level (lpf_exec from LPF_ROOT, lpf_hook, an MPI rank's part of a
 *    section): "t<P>.<k>", the k-th top-level section of P processes this OS
 *    process has taken part in (an MPI rank takes part in exactly the
 *    sections of rank 0 whose P exceeds its rank, in the same order);
 *  - nested: "<parent>-<pid>.<n>", the n-th section started by process pid
 *    of the parent section.
 */
#define _GNU_SOURCE
#include "profile.h"
#include "prof_format.h"
#include "machine_params.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* one superstep of one process */
struct prof_step {
    uint64_t t0, t1;          /* sync entered / left, ns after the section start */
    uint64_t bytes[SSTEP_NKINDS];   /* put, get, message bytes issued (self included) */
    uint32_t reqs[SSTEP_NKINDS];
    uint32_t npeer;           /* entries appended to the peer log */
    uint32_t msgs_in;         /* messages in the inbox after the sync */
    uint16_t site;
    uint8_t origin;
    int8_t rc;
    uint8_t own;              /* a sync the layer made for itself (sstep_prof_layer_step) */
    uint32_t ph_tag, ph_lo, ph_n; /* SSTEP_PROF_TAG / _ZERO: the phase */
    uint32_t ph_pids;         /* ... its processes: an index into sstep_prof.sets */
    uint64_t ph_es, ph_er;
};

/* bytes this process moves to / pulls from one other process */
struct prof_peer {
    uint32_t q;
    uint32_t pad_;
    uint64_t out;             /* puts and messages to q */
    uint64_t get;             /* gets from q */
};

#define PROF_SITES 64
#define PROF_KEY 200

struct sstep_prof {
    struct prof_step *steps;
    size_t n, cap;
    struct prof_peer *peers;
    size_t np, pcap;
    uint64_t start_mono, start_real;
    const void *last_site, *last_caller;
    unsigned last_idx;
    unsigned nsites;
    const void *site[PROF_SITES];
    const void *site_caller[PROF_SITES];   /* the program's call of the layer (or NULL) */
    const char *site_py[PROF_SITES];       /* a Python call site (sstep_prof_pysite) or NULL */
    uint8_t site_origin[PROF_SITES];
    size_t lost;              /* supersteps not recorded (out of memory) */
    int ph_set, ph_origin;    /* sstep_prof_phase: for the next superstep */
    const void *ph_site;
    uint32_t ph_tag, ph_lo, ph_n, ph_pids;
    uint64_t ph_es, ph_er;
    char **sets;              /* the process sets of phases, as text ("0-3,6") */
    uint32_t nsets;
    int skip;                 /* this superstep is not recorded */
    int recorded;             /* the last sync was recorded (steps[n - 1]) */
    unsigned nchild;          /* sections this process started */
    int top;                  /* a top-level section */
    char key[PROF_KEY];
    char parent[PROF_KEY];
    lpf_pid_t parent_pid;
};

/* ------------------------------------------------------------------ */
/* Settings, resolved once                                              */
/* ------------------------------------------------------------------ */

static struct {
    pthread_once_t once;
    int on;
    unsigned cores;           /* CPUs this OS process may run on, at the start */
    char cpus[512];           /* ... which: "0-3,8" ("" if unknown or too long) */
    char dir[2048];
    char run[128];
    pthread_mutex_t lock;     /* the registry of top-level sections below */
    /* top-level sections: counters per P and the section being created */
    struct prof_count { lpf_pid_t P; unsigned k; } *counts;
    size_t ncounts;
    const void *cur_group;
    lpf_pid_t cur_P, cur_created;
    int cur_open;
    char cur_key[PROF_KEY];
    _Atomic int reporter;     /* this OS process wrote pid 0 of a top-level part */
    /* when the latest sections' exec_begin returned (their processes start
     * the program's code): section key and monotonic ns, a ring */
    struct prof_ready { char key[PROF_KEY]; uint64_t t; } ready[64];
    unsigned nready;
} S = { PTHREAD_ONCE_INIT, 0, 0, "", "", "", PTHREAD_MUTEX_INITIALIZER, NULL, 0, NULL, 0, 0, 0, "", 0, { { "", 0 } }, 0 };

static _Thread_local struct sstep_ctx *tls_parent;
static _Thread_local int tls_in_exec;
static _Thread_local char tls_made_key[PROF_KEY];   /* a section made in this exec */

static uint64_t clock_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static void sanitize(char *s)
{
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
                    || *s == '-' || *s == '_'))
            *s = '_';
}

static int mkdirs(const char *path)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) && errno != EEXIST) return -1;
    return 0;
}

static void at_exit_report(void);

static void prof_init(void)
{
    const char *d = getenv("SUPERSTEP_PROFILE");
    if (!d || !*d) return;
    snprintf(S.dir, sizeof S.dir, "%s", d);
    if (mkdirs(S.dir)) {
        sstep_warn("SUPERSTEP_PROFILE=%s: cannot create the directory (%s); not profiling",
                d, strerror(errno));
        return;
    }
    /* the run: the same in every MPI rank of one job */
    const char *r = getenv("SUPERSTEP_PROFILE_RUN");
    const char *job[] = { "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "PMI_KVSNAME",
                          "MPI_JOBID" };
    for (size_t i = 0; (!r || !*r) && i < sizeof job / sizeof *job; ++i) r = getenv(job[i]);
    if (r && *r) {
        snprintf(S.run, sizeof S.run, "%s", r);
    } else if (getenv("OMPI_COMM_WORLD_RANK") || getenv("PMI_RANK")) {
        snprintf(S.run, sizeof S.run, "job%ld", (long)getppid());
    } else {
        snprintf(S.run, sizeof S.run, "run%ld-%llu", (long)getpid(),
                (unsigned long long)(clock_ns(CLOCK_REALTIME) / 1000000u));
    }
    sanitize(S.run);
    /* the cores, before any section pins a thread: the report says when a
     * section's processes on this host outnumbered them */
    cpu_set_t cs;
    CPU_ZERO(&cs);
    if (!sched_getaffinity(0, sizeof cs, &cs) && CPU_COUNT(&cs) > 0) {
        /* which CPUs, as runs: the report unites those of the ranks of one
         * host (MPI ranks bound to a core each) */
        S.cores = (unsigned)CPU_COUNT(&cs);
        size_t used = 0;
        for (int c = 0; c < CPU_SETSIZE && used < sizeof S.cpus; ++c) {
            if (!CPU_ISSET(c, &cs)) continue;
            int e = c;
            while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &cs)) ++e;
            int w = e > c ? snprintf(S.cpus + used, sizeof S.cpus - used, "%s%d-%d", used ? "," : "", c, e)
                          : snprintf(S.cpus + used, sizeof S.cpus - used, "%s%d", used ? "," : "", c);
            used += w > 0 ? (size_t)w : sizeof S.cpus;
            c = e;
        }
        if (used >= sizeof S.cpus) S.cpus[0] = '\0';
    } else if (sysconf(_SC_NPROCESSORS_ONLN) > 0) {
        S.cores = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    }
    S.on = 1;
    atexit(at_exit_report);
}

/* ------------------------------------------------------------------ */
/* Attaching and naming                                                 */
/* ------------------------------------------------------------------ */

void sstep_prof_exec_enter(struct sstep_ctx *parent)
{
    pthread_once(&S.once, prof_init);
    if (!S.on) return;
    tls_parent = parent;
    tls_in_exec = 1;
}

void sstep_prof_exec_leave(void)
{
    if (!tls_in_exec) return;
    if (tls_made_key[0]) {
        /* the engine made the section's contexts and started its processes:
         * what came before is the start-up, not the program's superstep 0 */
        const uint64_t t = now_ns();
        pthread_mutex_lock(&S.lock);
        struct prof_ready *r = &S.ready[S.nready++ % (sizeof S.ready / sizeof *S.ready)];
        snprintf(r->key, sizeof r->key, "%s", tls_made_key);
        r->t = t;
        pthread_mutex_unlock(&S.lock);
        tls_made_key[0] = '\0';
    }
    struct sstep_ctx *p = tls_parent;
    if (p && p->prof) p->prof->nchild++;
    tls_in_exec = 0;
    tls_parent = NULL;
}

static void top_key(struct sstep_ctx *ctx, char *key)
{
    pthread_mutex_lock(&S.lock);
    if (!(S.cur_open && S.cur_group == ctx->group && S.cur_P == ctx->nprocs
                && S.cur_created < S.cur_P)) {
        size_t i = 0;
        while (i < S.ncounts && S.counts[i].P != ctx->nprocs) ++i;
        if (i == S.ncounts) {
            struct prof_count *c = realloc(S.counts, (S.ncounts + 1) * sizeof *c);
            if (c) {
                S.counts = c;
                c[S.ncounts].P = ctx->nprocs;
                c[S.ncounts].k = 0;
                S.ncounts++;
            }
        }
        unsigned k = i < S.ncounts ? S.counts[i].k++ : 0;
        snprintf(S.cur_key, sizeof S.cur_key, "t%u.%u", ctx->nprocs, k);
        S.cur_group = ctx->group;
        S.cur_P = ctx->nprocs;
        S.cur_created = 0;
        S.cur_open = 1;
    }
    S.cur_created++;
    snprintf(key, PROF_KEY, "%s", S.cur_key);
    pthread_mutex_unlock(&S.lock);
}

void sstep_prof_attach(struct sstep_ctx *ctx)
{
    pthread_once(&S.once, prof_init);
    if (!S.on) return;
    /* LPF_ROOT's own context (no group, not made by an exec) is not a section */
    if (!ctx->group && !tls_in_exec) return;
    struct sstep_prof *pf = calloc(1, sizeof *pf);
    if (!pf) return;
    pf->cap = 1024;
    pf->pcap = 1024;
    pf->steps = malloc(pf->cap * sizeof *pf->steps);
    pf->peers = malloc(pf->pcap * sizeof *pf->peers);
    if (!pf->steps || !pf->peers) {
        free(pf->steps);
        free(pf->peers);
        free(pf);
        return;
    }
    struct sstep_ctx *parent = tls_in_exec ? tls_parent : NULL;
    if (parent && parent->prof) {
        snprintf(pf->key, sizeof pf->key, "%.150s-%u.%u", parent->prof->key, parent->pid,
                parent->prof->nchild);
        snprintf(pf->parent, sizeof pf->parent, "%s", parent->prof->key);
        pf->parent_pid = parent->pid;
    } else {
        top_key(ctx, pf->key);
        pf->top = 1;
        snprintf(pf->parent, sizeof pf->parent, "-");
        pf->parent_pid = LPF_MAX_P;
    }
    pf->last_idx = UINT32_MAX;
    pf->start_real = clock_ns(CLOCK_REALTIME);
    pf->start_mono = now_ns();
    if (tls_in_exec) snprintf(tls_made_key, sizeof tls_made_key, "%s", pf->key);
    ctx->prof = pf;
}

/* ------------------------------------------------------------------ */
/* The sync hooks                                                       */
/* ------------------------------------------------------------------ */

static SSTEP_NOINLINE int grow(void **p, size_t *cap, size_t elem, size_t need)
{
    size_t c = *cap;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

SSTEP_HIDDEN __thread const void *sstep_prof_caller;   /* sstep_ext.h */

/* The Python package's call sites: "LINE FUNCTION FILE" of the program's
 * call (ctx.sync, a collective) that ends this thread's next supersteps,
 * until it is set again or to NULL. The text stays valid until the end of
 * the program (the package keeps it); it stands for the site in place of
 * the address of the package's own call of lpf_sync. */
static __thread const char *tls_pysite;

__attribute__((visibility("default"))) int sstep_prof_on(void)
{
    pthread_once(&S.once, prof_init);
    return S.on;
}

__attribute__((visibility("default"))) void sstep_prof_pysite(const char *site)
{
    tls_pysite = site;
}

static unsigned site_index(struct sstep_prof *pf, int origin, const void *site, const void *caller)
{
    for (unsigned i = 0; i < pf->nsites; ++i)
        if (pf->site[i] == site && pf->site_caller[i] == caller && pf->site_origin[i] == origin) return i;
    if (pf->nsites == PROF_SITES) return PROF_SITES - 1;   /* the rest share the last */
    pf->site[pf->nsites] = site;
    pf->site_caller[pf->nsites] = caller;
    pf->site_origin[pf->nsites] = (uint8_t)origin;
    pf->site_py[pf->nsites] = tls_pysite;
    return pf->nsites++;
}

void sstep_prof_sync_begin(struct sstep_ctx *ctx, int origin, const void *site)
{
    struct sstep_prof *pf = ctx->prof;
    const uint64_t t = now_ns();
    const struct sstep_queue *q = &ctx->q;
    if (SSTEP_UNLIKELY(pf->n == pf->cap || pf->np + q->ntouched > pf->pcap)) {
        if (grow((void **)&pf->steps, &pf->cap, sizeof *pf->steps, pf->n + 1)
                || grow((void **)&pf->peers, &pf->pcap, sizeof *pf->peers, pf->np + q->ntouched)) {
            pf->lost++;
            pf->skip = 1;
            return;
        }
    }
    struct prof_step *s = &pf->steps[pf->n];
    s->t0 = t - pf->start_mono;
    s->ph_n = 0;
    s->own = 0;
    if (SSTEP_UNLIKELY(pf->ph_set)) {
        pf->ph_set = 0;
        origin = pf->ph_origin;
        site = pf->ph_site;
        s->ph_tag = pf->ph_tag;
        s->ph_lo = pf->ph_lo;
        s->ph_n = pf->ph_n;
        s->ph_pids = pf->ph_pids;
        s->ph_es = pf->ph_es;
        s->ph_er = pf->ph_er;
    }
    /* the program's call of a layer's entry point (bsp_sync), noted there */
    const void *caller = NULL;
    if (origin == SSTEP_PROF_EXT) caller = sstep_prof_caller;
    if (SSTEP_UNLIKELY(tls_pysite != NULL)) caller = tls_pysite;
    unsigned si;
    if (SSTEP_LIKELY(site == pf->last_site && caller == pf->last_caller && pf->last_idx < PROF_SITES
                && pf->site_origin[pf->last_idx] == origin)) {
        si = pf->last_idx;
    } else {
        si = site_index(pf, origin, site, caller);
        pf->last_site = site;
        pf->last_caller = caller;
    }
    pf->last_idx = si;
    s->site = (uint16_t)si;
    s->origin = (uint8_t)origin;
    uint64_t b0 = 0, b1 = 0, b2 = 0;
    uint32_t r0 = 0, r1 = 0, r2 = 0, np = 0;
    struct prof_peer *pe = pf->peers + pf->np;
    for (lpf_pid_t i = 0; i < q->ntouched; ++i) {
        const lpf_pid_t d = q->touched[i];
        const struct sstep_peer_lists *pl = &q->peers[d];
        b0 += pl->bytes[SSTEP_PUT];
        b1 += pl->bytes[SSTEP_GET];
        b2 += pl->bytes[SSTEP_MSG];
        r0 += pl->count[SSTEP_PUT];
        r1 += pl->count[SSTEP_GET];
        r2 += pl->count[SSTEP_MSG];
        if (d == ctx->pid) continue;
        pe[np].q = d;
        pe[np].pad_ = 0;
        pe[np].out = pl->bytes[SSTEP_PUT] + pl->bytes[SSTEP_MSG];
        pe[np].get = pl->bytes[SSTEP_GET];
        ++np;
    }
    s->bytes[SSTEP_PUT] = b0;
    s->bytes[SSTEP_GET] = b1;
    s->bytes[SSTEP_MSG] = b2;
    s->reqs[SSTEP_PUT] = r0;
    s->reqs[SSTEP_GET] = r1;
    s->reqs[SSTEP_MSG] = r2;
    s->npeer = np;
    pf->np += np;
}

void sstep_prof_layer_step(struct sstep_ctx *ctx)
{
    struct sstep_prof *pf = ctx->prof;
    if (pf && pf->recorded && pf->n) pf->steps[pf->n - 1].own = 1;
}

void sstep_prof_sync_end(struct sstep_ctx *ctx, lpf_err_t rc)
{
    struct sstep_prof *pf = ctx->prof;
    if (SSTEP_UNLIKELY(pf->skip)) {
        pf->skip = 0;
        pf->recorded = 0;
        return;
    }
    pf->recorded = 1;
    struct prof_step *s = &pf->steps[pf->n++];
    s->t1 = now_ns() - pf->start_mono;
    s->msgs_in = (uint32_t)ctx->inbox.n;
    s->rc = (int8_t)rc;
}

/* ------------------------------------------------------------------ */
/* Writing the part                                                     */
/* ------------------------------------------------------------------ */

/* r (flop/s) of this machine: a "# r ENGINE P FLOPS" line of the saved
 * parameters (bspprobe --save writes one), for this engine, at the
 * smallest saved p >= P (else the largest); 0 if there is none */
static double saved_r(const char *engine, lpf_pid_t P)
{
    char path[4096];
    if (!sstep_param_path(path, sizeof path)) return 0;
    return sstep_prof_analysis.file_r(path, engine, P);
}

/* the index of a phase's process set in pf->sets (UINT32_MAX: none) */
static uint32_t phase_pids(struct sstep_prof *pf, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members)
{
    char buf[256];
    size_t used = 0;
    for (lpf_pid_t k = 0; k < n && used < sizeof buf - 32;) {
        const lpf_pid_t a = members ? members[k] : lo + k;
        lpf_pid_t j = k;
        while (j + 1 < n && (members ? members[j + 1] : lo + j + 1) == a + (j + 1 - k)) ++j;
        const lpf_pid_t b = a + (j - k);
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%u", k ? "," : "", a);
        if (b > a) used += (size_t)snprintf(buf + used, sizeof buf - used, "-%u", b);
        k = j + 1;
        if (k < n && used >= sizeof buf - 32) {
            snprintf(buf + used, sizeof buf - used, ",...");
            break;
        }
    }
    for (uint32_t i = pf->nsets; i-- > 0;)
        if (!strcmp(pf->sets[i], buf)) return i;
    char **ns = realloc(pf->sets, (pf->nsets + 1) * sizeof *ns);
    if (!ns) return UINT32_MAX;
    pf->sets = ns;
    if (!(ns[pf->nsets] = strdup(buf))) return UINT32_MAX;
    return pf->nsets++;
}

static void free_sets(struct sstep_prof *pf)
{
    for (uint32_t i = 0; i < pf->nsets; ++i) free(pf->sets[i]);
    free(pf->sets);
}

void sstep_prof_phase(struct sstep_ctx *ctx, int origin, const void *site, uint32_t tag,
        lpf_pid_t lo, lpf_pid_t n, const lpf_pid_t *members, uint64_t es, uint64_t er)
{
    struct sstep_prof *pf = ctx->prof;
    if (!pf) return;
    pf->ph_pids = phase_pids(pf, lo, n, members);
    if (members && n) lo = members[0];
    pf->ph_set = 1;
    pf->ph_origin = origin;
    pf->ph_site = site;
    pf->ph_tag = tag;
    pf->ph_lo = lo;
    pf->ph_n = n;
    pf->ph_es = es;
    pf->ph_er = er;
}

SSTEP_HIDDEN void sstep_fill_machine(lpf_machine_t *m);

/* the layer a sync site belongs to, from the symbol around it */
static const char *site_layer(int origin, const void *site, char *name, size_t len)
{
    Dl_info in, self;
    snprintf(name, len, "%p", site);
    int ok = site && dladdr(site, &in);
    int lib = 0;
    if (ok && dladdr((const void *)&lpf_sync, &self) && in.dli_fbase == self.dli_fbase) lib = 1;
    if (ok && in.dli_sname)
        snprintf(name, len, "%s+%#lx", in.dli_sname,
                (unsigned long)((const char *)site - (const char *)in.dli_saddr));
    else if (ok && in.dli_fname)
        snprintf(name, len, "%s+%#lx", strrchr(in.dli_fname, '/') ? strrchr(in.dli_fname, '/') + 1
                : in.dli_fname, (unsigned long)((const char *)site - (const char *)in.dli_fbase));
    const char *sym = ok && in.dli_sname ? in.dli_sname : "";
    if (origin == SSTEP_PROF_TAG) return "lpf-tag";
    if (origin == SSTEP_PROF_ZERO) return "lpf-zero";
    if (origin == SSTEP_PROF_E1 || origin == SSTEP_PROF_E2 || !strncmp(sym, "pub_", 4)) return "pub";
    if (!strncmp(sym, "bsp_", 4) || !strncmp(sym, "bsp", 3)) return origin == SSTEP_PROF_EXT || lib ? "bsplib" : "user";
    if (origin == SSTEP_PROF_EXT) return "bsplib";
    if (lib) return "coll";
    return "user";
}

/* "where I VADDR OBJECT": the return address `a` as a link-time address in
 * its object file (the load bias taken off), for addr2line at report time */
static void site_where(FILE *f, unsigned i, const void *a)
{
    Dl_info in;
    struct link_map *lm = NULL;
    if (!a || !dladdr1(a, &in, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return;
    char exe[4096];
    const char *obj = lm->l_name;
    if (!obj || !*obj) {   /* the program itself */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) return;
        exe[n] = '\0';
        obj = exe;
    }
    if (strchr(obj, '\n')) return;
    fprintf(f, "where %u %#llx %s\n", i,
            (unsigned long long)((uintptr_t)a - (uintptr_t)lm->l_addr), obj);
}

static void write_part(struct sstep_ctx *ctx, struct sstep_prof *pf, uint64_t end)
{
    char path[2600], tmp[2700];
    snprintf(path, sizeof path, "%s/%s.%s.%u.part", S.dir, S.run, pf->key, ctx->pid);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        sstep_warn("profile: cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    sanitize(host);
    const char *engine = ctx->engine && ctx->engine->name ? ctx->engine->name : "?";
    fprintf(f, "%s %d\nrun %s\nsection %s\nparent %s %d\nprocs %u\npid %u\nengine %s\nhost %s\n"
            "ospid %ld\nstart %llu %llu\nend %llu\nlost %zu\nr %.17g\ncores %u %s\n",
            SSTEP_PROF_MAGIC, SSTEP_PROF_VERSION, S.run, pf->key, pf->parent,
            pf->parent_pid == LPF_MAX_P ? -1 : (int)pf->parent_pid, ctx->nprocs, ctx->pid,
            engine, host, (long)getpid(), (unsigned long long)pf->start_mono,
            (unsigned long long)pf->start_real, (unsigned long long)end, pf->lost,
            saved_r(engine, ctx->nprocs), S.cores, S.cpus);
    /* "ready NS": when the engine had started the section's processes
     * (lpf_exec's start-up), if this OS process started them */
    uint64_t ready = 0;
    pthread_mutex_lock(&S.lock);
    const unsigned nr = sizeof S.ready / sizeof *S.ready;
    for (unsigned i = 0; i < S.nready && i < nr; ++i) {
        const struct prof_ready *r = &S.ready[(S.nready - 1 - i) % nr];
        if (!strcmp(r->key, pf->key)) { ready = r->t; break; }
    }
    pthread_mutex_unlock(&S.lock);
    if (ready > pf->start_mono && ready - pf->start_mono <= end)
        fprintf(f, "ready %llu\n", (unsigned long long)(ready - pf->start_mono));
    /* g and l as lpf_probe returns them for this section, on a grid of
     * message sizes (the report interpolates in 1/m, as the lookup does) */
    lpf_machine_t m;
    sstep_fill_machine(&m);
    for (int e = 0; e < SSTEP_PROF_GL_POINTS; ++e) {
        size_t sz = (size_t)1 << e;
        fprintf(f, "gl %zu %.17g %.17g\n", sz, m.g(ctx->nprocs, sz, LPF_SYNC_DEFAULT),
                m.l(ctx->nprocs, sz, LPF_SYNC_DEFAULT));
    }
    for (unsigned i = 0; i < pf->nsites; ++i) {
        char name[512];
        const char *layer = site_layer(pf->site_origin[i], pf->site[i], name, sizeof name);
        if (pf->site_py[i] && !strchr(pf->site_py[i], '\n')) {
            /* "pysite I LINE FUNCTION FILE": resolved already, no address */
            fprintf(f, "site %u %u user %s\n", i, pf->site_origin[i], name);
            fprintf(f, "pysite %u %s\n", i, pf->site_py[i]);
            continue;
        }
        fprintf(f, "site %u %u %s %s\n", i, pf->site_origin[i], layer, name);
        site_where(f, i, pf->site_caller[i] ? pf->site_caller[i] : pf->site[i]);
    }
    fprintf(f, "steps %zu\n", pf->n);
    const struct prof_peer *pe = pf->peers;
    for (size_t k = 0; k < pf->n; ++k) {
        const struct prof_step *s = &pf->steps[k];
        fprintf(f, "s %llu %llu %u %u %d %u %llu %u %llu %u %llu %u %u\n",
                (unsigned long long)s->t0, (unsigned long long)s->t1, s->origin, s->site, s->rc,
                s->reqs[SSTEP_PUT], (unsigned long long)s->bytes[SSTEP_PUT],
                s->reqs[SSTEP_GET], (unsigned long long)s->bytes[SSTEP_GET],
                s->reqs[SSTEP_MSG], (unsigned long long)s->bytes[SSTEP_MSG], s->msgs_in, s->npeer);
        if (s->own) fputs("own\n", f);   /* a sync the layer made for itself */
        if (s->ph_n)   /* tag (UINT32_MAX: none), first pid, n, expected counts, pids */
            fprintf(f, "x %u %u %u %llu %llu %s\n", s->ph_tag, s->ph_lo, s->ph_n,
                    (unsigned long long)s->ph_es, (unsigned long long)s->ph_er,
                    s->ph_pids < pf->nsets ? pf->sets[s->ph_pids] : "?");
        for (uint32_t j = 0; j < s->npeer; ++j, ++pe)
            fprintf(f, "p %u %llu %llu\n", pe->q, (unsigned long long)pe->out,
                    (unsigned long long)pe->get);
    }
    fprintf(f, "eof\n");
    if (fclose(f) || rename(tmp, path)) {
        sstep_warn("profile: cannot write %s", path);
        unlink(tmp);
        return;
    }
    if (pf->top && ctx->pid == 0) atomic_store(&S.reporter, 1);
}

void sstep_prof_detach(struct sstep_ctx *ctx)
{
    struct sstep_prof *pf = ctx->prof;
    if (!pf) return;
    ctx->prof = NULL;
    uint64_t end = now_ns() - pf->start_mono;
    if (pf->top) {
        /* a later section may get this group's address: close the name */
        pthread_mutex_lock(&S.lock);
        if (S.cur_open && !strcmp(S.cur_key, pf->key)) S.cur_open = 0;
        pthread_mutex_unlock(&S.lock);
    }
    write_part(ctx, pf, end);
    free_sets(pf);
    free(pf->steps);
    free(pf->peers);
    free(pf);
}

void sstep_prof_drop(struct sstep_ctx *ctx)
{
    struct sstep_prof *pf = ctx->prof;
    if (!pf) return;
    ctx->prof = NULL;
    if (pf->top) {
        pthread_mutex_lock(&S.lock);
        if (S.cur_open && !strcmp(S.cur_key, pf->key)) S.cur_open = 0;
        pthread_mutex_unlock(&S.lock);
    }
    free_sets(pf);
    free(pf->steps);
    free(pf->peers);
    free(pf);
}

/* ------------------------------------------------------------------ */
/* End of the program                                                   */
/* ------------------------------------------------------------------ */

static void at_exit_report(void)
{
    if (!atomic_load(&S.reporter)) return;
    fflush(stdout);
    sstep_prof_analysis.report(S.dir, S.run, 1);
}
