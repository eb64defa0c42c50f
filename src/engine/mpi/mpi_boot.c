/*
 * Start-up of the MPI engine and <lpf/mpi.h>.
 *
 * Auto-initialisation (SUPERSTEP_ENGINE=mpi, LPF_MPI_AUTO_INITIALIZE != 0):
 * a constructor of the library initialises MPI. Rank 0 returns and runs
 * main; it is the only process for which LPF_ROOT spans the ranks. Every
 * other rank must not run main: it lets the program's own initialisers run
 * (C++ globals, test registries: an SPMD function may rely on them), then
 * serves exec commands from rank 0 until rank 0 exits. To get control after
 * the last initialiser and before main, the constructor replaces the last
 * entry of the executable's DT_INIT_ARRAY by a function that calls the
 * original entry and then serves (never returning). If that is impossible
 * the rank serves from the constructor at once.
 *
 * Function pointers travel as (object name, offset from the object's load
 * address), found with dl_iterate_phdr: they designate the same function
 * on every rank whatever the address-space randomisation, for static
 * functions too.
 */
#define _GNU_SOURCE
#include "mpi_internal.h"
#include "../../core/checked.h"
#include "../../core/checked_globals.h"
#include "../../core/launcher.h"

#include <lpf/mpi.h>

#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct mpi_state sstep_mpi;

/* The library's default; a program's own definition overrides it. */
__attribute__((weak)) const int LPF_MPI_AUTO_INITIALIZE = 1;

void mpi_errorf(const char *prim, const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "superstep: %s: ", prim);
    if (n < 0) n = 0;
    va_list ap;
    va_start(ap, fmt);
    if ((size_t)n < sizeof line) vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

/* ------------------------------------------------------------------ */
/* Function pointers across ranks                                       */
/* ------------------------------------------------------------------ */

struct find_obj {
    uintptr_t addr;
    const char *name;
    uintptr_t base;
    int found;
};

static int find_obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_obj *f = data;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
        if (f->addr >= lo && f->addr < lo + ph->p_memsz) {
            f->name = info->dlpi_name ? info->dlpi_name : "";
            f->base = (uintptr_t)info->dlpi_addr;
            f->found = 1;
            return 1;
        }
    }
    return 0;
}

struct find_name {
    const char *name;
    uintptr_t base;
    int found;
};

static int find_name_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_name *f = data;
    const char *n = info->dlpi_name ? info->dlpi_name : "";
    if (strcmp(n, f->name) == 0) {
        f->base = (uintptr_t)info->dlpi_addr;
        f->found = 1;
        return 1;
    }
    return 0;
}

/* checked mode: the first section over the ranks compares the program's
 * globals first (checked_globals.c); the exec command says so */
#define CMD_CHECK_GLOBALS 0x10000u
static int first_exec_sent;
static SSTEP_NORETURN void exit_job_with(int status);

/* every rank of a section of P, before it starts: a global that differs
 * from rank 0's ends the job (rank 0 has said which) */
static void check_globals(lpf_pid_t P)
{
    unsigned long mp = sstep_mpi.hybrid_P ? sstep_mpi.hybrid_P : (unsigned long)sstep_mpi.size;
    if (sstep_chk_globals_mpi(mpi_section_comm(P), sstep_mpi.rank, (int)P, mp) != 0)
        exit_job_with(6);
}

struct cmd_hdr {
    uint32_t kind;
    uint32_t P;
    uint32_t F;
    uint32_t nf;
    uint32_t nnames;
    uint32_t names_bytes;
};

/* Encode spmd and f_symbols; names go into a table of distinct objects. */
static int encode_fref(uintptr_t addr, struct mpi_fref *r, const char **names,
        uint32_t *nnames, size_t *bytes)
{
    memset(r, 0, sizeof *r);
    struct find_obj f = { addr, NULL, 0, 0 };
    if (addr == 0 || !(dl_iterate_phdr(find_obj_cb, &f), f.found)) {
        r->obj = UINT32_MAX;
        r->off = addr;
        return addr == 0 ? 0 : 1;
    }
    uint32_t k = 0;
    while (k < *nnames && strcmp(names[k], f.name) != 0) ++k;
    if (k == *nnames) {
        names[k] = f.name;
        *bytes += strlen(f.name) + 1;
        (*nnames)++;
    }
    r->obj = k;
    r->off = addr - f.base;
    return 0;
}

int mpi_send_exec(lpf_pid_t P, lpf_pid_t F, lpf_spmd_t spmd, lpf_args_t args)
{
    size_t nref = 1 + args.f_size;
    struct mpi_fref *refs = calloc(nref, sizeof *refs);
    const char **names = calloc(nref, sizeof *names);
    if (!refs || !names) {
        free(refs);
        free(names);
        return -1;
    }
    uint32_t nnames = 0;
    size_t nbytes = 0;
    int unknown = encode_fref((uintptr_t)spmd, &refs[0], names, &nnames, &nbytes);
    for (size_t i = 0; i < args.f_size; ++i)
        unknown |= encode_fref((uintptr_t)args.f_symbols[i], &refs[1 + i], names, &nnames, &nbytes);
    if (unknown)
        sstep_warn("lpf_exec: a function pointer lies in no loaded object; it is passed "
                "unchanged to the other ranks");
    size_t len = sizeof(struct cmd_hdr) + nref * sizeof *refs + nbytes;
    char *buf = malloc(len);
    if (!buf || len > INT_MAX) {
        free(refs);
        free(names);
        free(buf);
        return -1;
    }
    const char *cg = getenv("SUPERSTEP_CHECK_GLOBALS");
    int chk = !first_exec_sent && sstep_mpi.auto_world && sstep_chk_mode() != 0
            && !(cg && strcmp(cg, "0") == 0);
    first_exec_sent = 1;
    struct cmd_hdr h = { MPI_CMD_EXEC | (chk ? CMD_CHECK_GLOBALS : 0u), P, F,
        (uint32_t)args.f_size, nnames, (uint32_t)nbytes };
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, refs, nref * sizeof *refs);
    char *s = buf + sizeof h + nref * sizeof *refs;
    for (uint32_t k = 0; k < nnames; ++k) {
        size_t l = strlen(names[k]) + 1;
        memcpy(s, names[k], l);
        s += l;
    }
    for (lpf_pid_t r = 1; r < P; ++r)
        MPI_Send(buf, (int)len, MPI_BYTE, (int)r, MPI_TAG_CMD, sstep_mpi.ctrl);
    free(buf);
    free(refs);
    free(names);
    if (chk) check_globals(P);
    return 0;
}

MPI_Comm mpi_section_comm(lpf_pid_t P)
{
    if ((int)P >= sstep_mpi.size) return sstep_mpi.sect;
    if (!sstep_mpi.sub) {
        sstep_mpi.sub = calloc((size_t)sstep_mpi.size + 1, sizeof *sstep_mpi.sub);
        if (!sstep_mpi.sub) sstep_fatal(NULL, "lpf_exec", "out of memory");
        for (int i = 0; i <= sstep_mpi.size; ++i) sstep_mpi.sub[i] = MPI_COMM_NULL;
    }
    if (sstep_mpi.sub[P] == MPI_COMM_NULL) {
        /* every section of P ranks involves the same ranks 0..P-1, so they
         * all create it at their first such section */
        MPI_Group world, part;
        int range[1][3] = { { 0, (int)P - 1, 1 } };
        MPI_Comm_group(sstep_mpi.sect, &world);
        MPI_Group_range_incl(world, 1, range, &part);
        if (MPI_Comm_create_group(sstep_mpi.sect, part, (int)P, &sstep_mpi.sub[P]) != MPI_SUCCESS)
            sstep_fatal(NULL, "lpf_exec", "could not create the communicator of %u ranks", P);
        MPI_Group_free(&part);
        MPI_Group_free(&world);
    }
    return sstep_mpi.sub[P];
}

/* its shared-memory window, made with it (collective over ranks 0..P-1) */
struct mpi_shm *mpi_section_shm(lpf_pid_t P)
{
    if (!sstep_mpi.subshm) {
        sstep_mpi.subshm = calloc((size_t)sstep_mpi.size + 1, sizeof *sstep_mpi.subshm);
        if (!sstep_mpi.subshm) sstep_fatal(NULL, "lpf_exec", "out of memory");
        for (int i = 0; i <= sstep_mpi.size; ++i) sstep_mpi.subshm[i] = (struct mpi_shm *)1;
    }
    if ((int)P > sstep_mpi.size) P = (lpf_pid_t)sstep_mpi.size;
    if (sstep_mpi.subshm[P] == (struct mpi_shm *)1) {
        struct mpi_shm *shm = mpi_shm_create(mpi_section_comm(P));
        if (shm == MPI_SHM_NOMEM) return shm;   /* the next section tries again */
        sstep_mpi.subshm[P] = shm;
    }
    return sstep_mpi.subshm[P];
}

static void free_section_comms(void)
{
    if (sstep_mpi.subshm) {
        for (int i = 0; i <= sstep_mpi.size; ++i)
            if (sstep_mpi.subshm[i] != (struct mpi_shm *)1) mpi_shm_free(sstep_mpi.subshm[i]);
        free(sstep_mpi.subshm);
        sstep_mpi.subshm = NULL;
    }
    if (!sstep_mpi.sub) return;
    for (int i = 0; i <= sstep_mpi.size; ++i)
        if (sstep_mpi.sub[i] != MPI_COMM_NULL) MPI_Comm_free(&sstep_mpi.sub[i]);
    free(sstep_mpi.sub);
    sstep_mpi.sub = NULL;
}

/* translate one reference; NULL and *ok = 0 if its object is not loaded */
static uintptr_t decode_fref(const struct mpi_fref *r, const char *const *names, int *ok)
{
    if (r->obj == UINT32_MAX) return (uintptr_t)r->off;
    struct find_name f = { names[r->obj], 0, 0 };
    dl_iterate_phdr(find_name_cb, &f);
    if (!f.found) {
        mpi_errorf("lpf_exec", "rank %d: object \"%s\" of a function pointer is not loaded "
                "here", sstep_mpi.rank, names[r->obj]);
        *ok = 0;
        return 0;
    }
    return f.base + (uintptr_t)r->off;
}

static void spmd_nothing(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)ctx; (void)s; (void)p; (void)a;
}

static void run_exec(const char *buf, size_t len)
{
    struct cmd_hdr h;
    memcpy(&h, buf, sizeof h);
    size_t nref = 1 + (size_t)h.nf;
    const struct mpi_fref *refs = (const struct mpi_fref *)(buf + sizeof h);
    const char *s = buf + sizeof h + nref * sizeof *refs;
    const char **names = calloc(h.nnames ? h.nnames : 1, sizeof *names);
    lpf_func_t *fs = calloc(nref, sizeof *fs);
    if (!names || !fs || sizeof h + nref * sizeof *refs + h.names_bytes > len)
        sstep_fatal(NULL, "lpf_exec", "rank %d: bad exec command (out of memory?)", sstep_mpi.rank);
    for (uint32_t k = 0; k < h.nnames; ++k) {
        names[k] = s;
        s += strlen(s) + 1;
    }
    int ok = 1;
    struct mpi_fref r0;
    memcpy(&r0, &refs[0], sizeof r0);
    lpf_spmd_t spmd = (lpf_spmd_t)decode_fref(&r0, names, &ok);
    for (size_t i = 0; i < h.nf; ++i) {
        struct mpi_fref ri;
        memcpy(&ri, &refs[1 + i], sizeof ri);
        fs[i] = (lpf_func_t)decode_fref(&ri, names, &ok);
    }
    lpf_args_t args = { NULL, 0, NULL, 0, h.nf ? fs : NULL, h.nf };
    lpf_pid_t s_pid = (lpf_pid_t)sstep_mpi.rank;
    lpf_pid_t share = h.F >= h.P ? sstep_share(h.F, h.P, s_pid) : 1;
    if (h.kind & CMD_CHECK_GLOBALS) check_globals(h.P);
    /* a rank that cannot find the function still takes part (and leaves at
     * once), so that the section fails everywhere instead of hanging */
    MPI_Comm comm = mpi_section_comm(h.P);
    lpf_err_t rc = mpi_run_section(comm, mpi_section_shm(h.P), s_pid, h.P, share, 0,
            ok && spmd ? spmd : spmd_nothing, args);
    (void)rc;
    free(names);
    free(fs);
}

/* ------------------------------------------------------------------ */
/* Ranks other than 0: the service loop                                 */
/* ------------------------------------------------------------------ */

static SSTEP_NORETURN void serve_forever(void)
{
    for (;;) {
        MPI_Message msg;
        MPI_Status st;
        int flag = 0;
        struct mpi_wait w;
        mpi_wait_init(&w, 1000000L);
        for (;;) {
            MPI_Improbe(0, MPI_TAG_CMD, sstep_mpi.ctrl, &flag, &msg, &st);
            if (flag) break;
            mpi_wait_step(&w);
        }
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        char *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!buf) sstep_fatal(NULL, "lpf_exec", "rank %d: out of memory", sstep_mpi.rank);
        MPI_Mrecv(buf, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        uint32_t kind = 0;
        if (n >= (int)sizeof(struct cmd_hdr)) memcpy(&kind, buf, sizeof kind);
        if ((kind & ~CMD_CHECK_GLOBALS) == MPI_CMD_EXEC) {
            run_exec(buf, (size_t)n);
            free(buf);
            continue;
        }
        free(buf);
        break;
    }
    free_section_comms();
    MPI_Comm_free(&sstep_mpi.sect);
    MPI_Comm_free(&sstep_mpi.ctrl);
    MPI_Finalize();
    exit(0);
}

static void (*orig_last_init)(int, char **, char **);

static void serve_after_init(int argc, char **argv, char **envp)
{
    if (orig_last_init) orig_last_init(argc, argv, envp);
    serve_forever();
}

struct main_obj {
    uintptr_t base;
    const ElfW(Phdr) *phdr;
    int phnum;
    int found;
};

static int main_obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct main_obj *m = data;
    m->base = (uintptr_t)info->dlpi_addr;
    m->phdr = info->dlpi_phdr;
    m->phnum = info->dlpi_phnum;
    m->found = 1;
    return 1;   /* the first object is the executable */
}

/* Make the executable's last initialiser continue into the service loop.
 * Returns 0 on success, -1 if the rank must serve right now. */
static int patch_init_array(void *self_ctor)
{
    struct main_obj m = { 0, NULL, 0, 0 };
    dl_iterate_phdr(main_obj_cb, &m);
    if (!m.found) return -1;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < m.phnum; ++i)
        if (m.phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(m.base + m.phdr[i].p_vaddr);
    if (!dyn) return -1;
    uintptr_t ia = 0;
    size_t sz = 0;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_INIT_ARRAY) ia = (uintptr_t)dyn->d_un.d_ptr;
        if (dyn->d_tag == DT_INIT_ARRAYSZ) sz = (size_t)dyn->d_un.d_val;
    }
    size_t n = sz / sizeof(ElfW(Addr));
    if (!ia || n == 0) return -1;
    ElfW(Addr) *arr = (ElfW(Addr) *)(m.base + ia);
    if (arr[n - 1] == (ElfW(Addr))(uintptr_t)self_ctor) return -1;  /* we are the last */
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)&arr[n - 1] & ~((uintptr_t)pg - 1);
    uintptr_t hi = ((uintptr_t)&arr[n] + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE)) return -1;
    orig_last_init = (void (*)(int, char **, char **))(uintptr_t)arr[n - 1];
    arr[n - 1] = (ElfW(Addr))(uintptr_t)serve_after_init;
    mprotect((void *)lo, hi - lo, PROT_READ);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Exit                                                                 */
/* ------------------------------------------------------------------ */

/* exit(status != 0) called inside an SPMD section ends the whole job with
 * that status, as it ends the whole program on threads */
static SSTEP_NORETURN void exit_job_with(int status)
{
    fflush(NULL);
    /* let the launcher forward what this process printed first */
    struct timespec ts = { 0, 100000000 };
    nanosleep(&ts, NULL);
    MPI_Abort(MPI_COMM_WORLD, status);
    _exit(status);
}

static void master_exit(int status, void *arg)
{
    (void)arg;
    /* a forked child's exit: the MPI job is its parent's */
    if (__atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED)) return;
    int fin = 0;
    MPI_Finalized(&fin);
    if (fin) return;
    if (status != 0 && mpi_sections_active()) exit_job_with(status);
    /* exit(0) inside a section: leave it, peers' syncs fail */
    if (mpi_sections_active()) mpi_leave_all_sections();
    fflush(NULL);
    uint32_t quit[6] = { MPI_CMD_QUIT, 0, 0, 0, 0, 0 };
    for (int r = 1; r < sstep_mpi.size; ++r)
        MPI_Send(quit, sizeof quit, MPI_BYTE, r, MPI_TAG_CMD, sstep_mpi.ctrl);
    free_section_comms();
    MPI_Comm_free(&sstep_mpi.sect);
    MPI_Comm_free(&sstep_mpi.ctrl);
    if (sstep_mpi.we_init) MPI_Finalize();
}

static void worker_exit(int status, void *arg)
{
    (void)arg;
    if (__atomic_load_n(&sstep_fork_gen, __ATOMIC_RELAXED)) return;
    int fin = 0;
    MPI_Finalized(&fin);
    if (fin) return;
    /* the SPMD function called exit() on this rank */
    if (status != 0) exit_job_with(status);
    if (mpi_sections_active()) mpi_leave_all_sections();
    fflush(NULL);
}

/* ------------------------------------------------------------------ */
/* Set-up                                                               */
/* ------------------------------------------------------------------ */

void mpi_engine_setup_world(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &sstep_mpi.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &sstep_mpi.size);
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)
            == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
    sstep_mpi.local_size = (unsigned)local;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    sstep_mpi.oversub = cores > 0 && local > cores;
    const char *ov = getenv("SUPERSTEP_MPI_OVERSUBSCRIBED");
    if (ov && *ov) sstep_mpi.oversub = strcmp(ov, "0") != 0;
    sstep_mpi.started = 1;
}

/* The hybrid engine (src/engine/hybrid) runs on this start-up: T threads
 * per rank, SUPERSTEP_HYBRID_THREADS (set by bsprun --threads-per-rank), by
 * default the node's cores shared among its ranks. */
static void hybrid_setup(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned local = sstep_mpi.local_size ? sstep_mpi.local_size : 1;
    unsigned T = cores > 0 && (unsigned long)cores >= local ? (unsigned)(cores / (long)local) : 1;
    const char *v = getenv("SUPERSTEP_HYBRID_THREADS");
    if (v && *v) {
        char *end;
        unsigned long x = strtoul(v, &end, 10);
        if (*end == '\0' && x >= 1 && x <= 4096) T = (unsigned)x;
        else if (sstep_mpi.rank == 0)
            sstep_warn("SUPERSTEP_HYBRID_THREADS=%s is not a number of threads (1 to 4096); "
                    "using %u", v, T);
    }
    sstep_mpi.hybrid_T = T;
    /* bsprun -n P with P not a multiple of T: the last rank has fewer */
    unsigned P = (unsigned)sstep_mpi.size * T;
    const char *mp = getenv("LPF_MAX_PROCS");
    if (mp && *mp) {
        unsigned long x = strtoul(mp, NULL, 10);
        if (x > (unsigned long)(sstep_mpi.size - 1) * T && x < P) P = (unsigned)x;
    }
    sstep_mpi.hybrid_P = P;
    const char *ov = getenv("SUPERSTEP_MPI_OVERSUBSCRIBED");
    if (!(ov && *ov)) sstep_mpi.oversub = cores > 0 && (long)local * T > cores;
}

__attribute__((constructor)) static void mpi_boot(void)
{
#ifdef SUPERSTEP_SMPI
    /* Under SimGrid's SMPI (docs/scale.md) constructors run before the
     * simulator starts the ranks, and every rank runs main: the program
     * calls MPI_Init itself and enters the engine with
     * lpf_mpi_initialize_with_mpicomm + lpf_hook. Nothing here. */
    return;
#endif
    const char *e = getenv("SUPERSTEP_ENGINE");
    if (!e || (strcasecmp(e, "mpi") != 0 && strcasecmp(e, "hybrid") != 0)) return;
    const int hybrid = strcasecmp(e, "hybrid") == 0;
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited) return;
    /* whole output lines through bsprun (before MPI starts: it forks) */
    mpi_output_start(hybrid);
    const char *na = getenv("SUPERSTEP_MPI_NO_AUTO_INIT");
    if (na && *na && strcmp(na, "0") != 0) return;
    if (*(const volatile int *)&LPF_MPI_AUTO_INITIALIZE == 0) return;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        mpi_errorf("mpi", "MPI_Init_thread failed");
        _exit(1);
    }
    sstep_mpi.we_init = 1;
    /* descriptors 0, 1 and 2 stay open (mpi_output_start saw to it): one
     * closed now would be taken by the next socket MPI opens, and the
     * program would read MPI's traffic from its standard input */
    mpi_engine_setup_world();
    MPI_Comm_dup(MPI_COMM_WORLD, &sstep_mpi.sect);
    MPI_Comm_dup(MPI_COMM_WORLD, &sstep_mpi.ctrl);
    sstep_mpi.auto_world = 1;
    sstep_mpi.master = sstep_mpi.rank == 0;
    if (hybrid) hybrid_setup();
    sstep_set_default_engine(hybrid ? &sstep_hybrid_engine : &sstep_mpi_engine);
    /* nested sections run on threads inside a rank: they report the same
     * machine-wide p as the ranks do */
    char p[32];
    snprintf(p, sizeof p, "%u", hybrid ? sstep_mpi.hybrid_P : (unsigned)sstep_mpi.size);
    setenv("LPF_MAX_PROCS", p, 1);
    if (sstep_mpi.master) {
        on_exit(master_exit, NULL);
        return;
    }
    on_exit(worker_exit, NULL);
    sstep_crash_hint_install(sstep_mpi.rank, sstep_mpi.size);
    if (patch_init_array((void *)(uintptr_t)mpi_boot)) serve_forever();
}

/* ------------------------------------------------------------------ */
/* <lpf/mpi.h>                                                          */
/* ------------------------------------------------------------------ */

static int comm_oversubscribed(MPI_Comm comm)
{
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && local > cores;
}

static lpf_err_t make_init(MPI_Comm comm, int owned, long server_pid, lpf_init_t *init)
{
    struct mpi_init *x = calloc(1, sizeof *x);
    if (!x) {
        if (owned) MPI_Comm_free(&comm);
        return LPF_ERR_OUT_OF_MEMORY;
    }
#ifdef SUPERSTEP_SMPI
    /* SMPI 3.32 makes a communicator (dup, split, create) in simulation
     * time that grows as p^3: 85 s of CPU for one MPI_Comm_dup at p =
     * 1,024, hours at 4,096. The engine works on the program's
     * communicator itself, which the program leaves alone while a section
     * runs on it (docs/scale.md). */
    if (!owned) {
        x->comm = comm;
        x->borrowed = 1;
    } else
#endif
    if (owned) {
        x->comm = comm;
    } else if (MPI_Comm_dup(comm, &x->comm) != MPI_SUCCESS) {
        free(x);
        return LPF_ERR_FATAL;
    }
    int r = 0, n = 1;
    MPI_Comm_rank(x->comm, &r);
    MPI_Comm_size(x->comm, &n);
    x->pid = (lpf_pid_t)r;
    x->nprocs = (lpf_pid_t)n;
    x->server_pid = server_pid;
#ifdef SUPERSTEP_SMPI
    /* one rank per simulated host: never oversubscribed (and no
     * MPI_Comm_split_type, a communicator as costly as a dup); simulated
     * hosts share no memory: no node window, no process_vm_readv (every
     * first message, direct put and direct get by MPI) */
    x->oversub = 0;
    (void)comm_oversubscribed;
    x->shm = NULL;
#else
    x->oversub = comm_oversubscribed(x->comm);
    x->shm = mpi_shm_create(x->comm);
#endif
    if (x->shm == MPI_SHM_NOMEM) {
        MPI_Comm_free(&x->comm);
        free(x);
        return LPF_ERR_OUT_OF_MEMORY;
    }
    x->hdr.magic = SSTEP_INIT_MAGIC;
    x->hdr.engine = &sstep_mpi_engine;
    if (!sstep_mpi.started) {
        MPI_Comm_rank(MPI_COMM_WORLD, &sstep_mpi.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &sstep_mpi.size);
        sstep_mpi.oversub = x->oversub;
        sstep_mpi.started = 1;
    }
    *init = x;
    return LPF_SUCCESS;
}

lpf_err_t lpf_mpi_initialize_with_mpicomm(MPI_Comm comm, lpf_init_t *init)
{
    if (init == NULL) return LPF_ERR_FATAL;
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Finalized(&fin);
    if (!inited || fin) {
        mpi_errorf("lpf_mpi_initialize_with_mpicomm", "MPI is not initialised");
        return LPF_ERR_FATAL;
    }
    if (comm == MPI_COMM_NULL) return LPF_ERR_FATAL;
    return make_init(comm, 0, 0, init);
}

lpf_err_t lpf_mpi_initialize_over_tcp(const char *server, const char *port, int timeout,
        lpf_pid_t pid, lpf_pid_t nprocs, lpf_init_t *init)
{
    if (init == NULL || server == NULL || port == NULL || nprocs == 0 || pid >= nprocs) {
        mpi_errorf("lpf_mpi_initialize_over_tcp", "invalid arguments (pid %u, nprocs %u)",
                pid, nprocs);
        return LPF_ERR_FATAL;
    }
    MPI_Comm comm = MPI_COMM_NULL;
    long server_pid = 0;
    lpf_err_t rc = mpi_tcp_meet(server, port, timeout, pid, nprocs, &comm, &server_pid);
    if (rc != LPF_SUCCESS) return rc;
    return make_init(comm, 1, server_pid, init);
}

lpf_err_t lpf_mpi_finalize(lpf_init_t init)
{
    struct mpi_init *x = init;
    if (!x || x->hdr.magic != SSTEP_INIT_MAGIC || x->hdr.engine != &sstep_mpi_engine)
        return LPF_ERR_FATAL;
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) {
        mpi_shm_free(x->shm);
        if (!x->borrowed) MPI_Comm_free(&x->comm);
    }
    if (x->server_pid) mpi_tcp_stop_server(x->server_pid);
    x->hdr.magic = 0;
    free(x);
    return fin ? LPF_ERR_FATAL : LPF_SUCCESS;
}
