/*
 * The engine follows the MPI launcher (docs/mpi.md, "Plain mpirun").
 *
 * A program started by mpirun / mpiexec / srun as P > 1 processes and run
 * on the pthread engine would be P separate one-process runs, each giving
 * its own answer with status 0. Before anything else of the library runs
 * (a constructor of priority 101: before the MPI engine's start-up in
 * mpi_boot.c), this file looks at the launcher's environment:
 *   - no engine chosen (SUPERSTEP_ENGINE unset or empty): the MPI engine,
 *     by setting SUPERSTEP_ENGINE=mpi (the MPI engine's start-up and the
 *     Python package read it);
 *   - SUPERSTEP_ENGINE=mpi or hybrid: nothing to do;
 *   - any other engine, or a build without the MPI engine: one line on
 *     stderr (process 0 says it at once; the others say it only if they
 *     are still running 3 s later, i.e. if the launcher did not end the
 *     job when process 0 stopped) and exit status 1 on every process.
 * With one process (mpirun -n 1) nothing changes. SUPERSTEP_IGNORE_LAUNCHER=1
 * turns this off (a program started by a process of an MPI job that
 * inherits its environment without being part of it).
 *
 * The variables are the launchers' documented ones: Open MPI
 * OMPI_COMM_WORLD_SIZE / _RANK / _LOCAL_SIZE; MPICH's Hydra (and Intel
 * MPI, Slurm's PMI-2) PMI_SIZE / PMI_RANK, MPI_LOCALNRANKS; MVAPICH's
 * MV2_COMM_WORLD_SIZE / _RANK; Slurm's srun SLURM_STEP_ID with
 * SLURM_STEP_NUM_TASKS (or SLURM_NTASKS) and SLURM_PROCID (a batch script
 * has no numbered step); PMIx PMIX_RANK (no size: several processes only
 * when the rank is above 0).
 */
#define _GNU_SOURCE
#include "launcher.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static long env_num(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end != '\0' || x < 0) return -1;
    return x;
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

int sstep_launcher(struct sstep_launch *l)
{
    l->name = NULL;
    l->rank = l->size = l->local_size = -1;
    if (env_set("OMPI_COMM_WORLD_SIZE") || env_set("OMPI_COMM_WORLD_RANK")) {
        l->name = "mpirun (Open MPI)";
        l->rank = env_num("OMPI_COMM_WORLD_RANK");
        l->size = env_num("OMPI_COMM_WORLD_SIZE");
        l->local_size = env_num("OMPI_COMM_WORLD_LOCAL_SIZE");
        return 1;
    }
    long step = env_num("SLURM_STEP_ID");
    if (step < 0) step = env_num("SLURM_STEPID");
    /* the batch, extern and interactive steps have ids near 2^32 */
    if (step >= 0 && step < 0xfffffff0L && env_set("SLURM_PROCID")) {
        l->name = "srun (Slurm)";
        l->rank = env_num("SLURM_PROCID");
        l->size = env_num("SLURM_STEP_NUM_TASKS");
        if (l->size < 0) l->size = env_num("SLURM_NTASKS");
        return 1;
    }
    if (env_set("PMI_SIZE") || env_set("PMI_RANK")) {
        l->name = "mpiexec (PMI: MPICH's Hydra or alike)";
        l->rank = env_num("PMI_RANK");
        l->size = env_num("PMI_SIZE");
        l->local_size = env_num("MPI_LOCALNRANKS");
        return 1;
    }
    if (env_set("MV2_COMM_WORLD_SIZE") || env_set("MV2_COMM_WORLD_RANK")) {
        l->name = "mpirun (MVAPICH)";
        l->rank = env_num("MV2_COMM_WORLD_RANK");
        l->size = env_num("MV2_COMM_WORLD_SIZE");
        l->local_size = env_num("MV2_COMM_WORLD_LOCAL_SIZE");
        return 1;
    }
    if (env_set("PMIX_RANK")) {
        l->name = "a PMIx launcher";
        l->rank = env_num("PMIX_RANK");
        return 1;
    }
    return 0;
}

int sstep_launcher_several(const struct sstep_launch *l)
{
    if (!l->name) return 0;
    if (l->size > 1) return 1;
    return l->size < 0 && l->rank > 0;
}

static void describe(const struct sstep_launch *l, char *buf, size_t n)
{
    if (l->size > 0)
        snprintf(buf, n, "%s started this program as %ld processes (this is process %ld)",
                l->name, l->size, l->rank);
    else
        snprintf(buf, n, "%s started this program as several processes (this is process %ld)",
                l->name, l->rank);
}

/* one line, then exit status 1 on every process of the job */
static SSTEP_NORETURN void stop_job(const struct sstep_launch *l, const char *why,
        const char *fix)
{
    char who[256];
    describe(l, who, sizeof who);
    if (l->rank != 0) {
        /* process 0 says it; the launcher ends the job when it stops */
        struct timespec ts = { 3, 0 };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
    }
    fflush(stdout);
    fprintf(stderr, "superstep: %s, but %s: each would run alone as a separate 1-process "
            "program. %s\n", who, why, fix);
    fflush(stderr);
    _exit(1);
}

__attribute__((constructor(101))) static void follow_launcher(void)
{
    const char *ig = getenv("SUPERSTEP_IGNORE_LAUNCHER");
    if (ig && *ig && strcmp(ig, "0") != 0) return;
    struct sstep_launch l;
    if (!sstep_launcher(&l) || !sstep_launcher_several(&l)) return;
    const char *e = getenv("SUPERSTEP_ENGINE");
    char why[160];
#ifdef SUPERSTEP_HAVE_MPI
    if (!e || !*e) {
        setenv("SUPERSTEP_ENGINE", "mpi", 1);
        return;
    }
    if (strcasecmp(e, "mpi") == 0 || strcasecmp(e, "hybrid") == 0) return;
    if (sstep_engine_by_name(e))
        snprintf(why, sizeof why, "SUPERSTEP_ENGINE=%.40s asks for the %s engine", e,
                strcasecmp(e, "pthread") == 0 ? "pthread (threads of one process)" : e);
    else
        snprintf(why, sizeof why, "SUPERSTEP_ENGINE=%.40s is not an engine of this build "
                "(pthread, mpi, hybrid)", e);
#else
    if (e && *e && sstep_engine_by_name(e) == NULL)
        snprintf(why, sizeof why, "SUPERSTEP_ENGINE=%.40s is not an engine of this build "
                "(this build has the pthread engine only)", e);
    else
        snprintf(why, sizeof why, "this build of Superstep has no MPI engine");
#endif
#ifdef SUPERSTEP_HAVE_MPI
    stop_job(&l, why, "Under the launcher, leave SUPERSTEP_ENGINE unset or set it to mpi or "
            "hybrid; for threads, run without the launcher (bsprun -n P)");
#else
    stop_job(&l, why, "Run it without the launcher (bsprun -n P runs P processes on "
            "threads), or build Superstep with MPI");
#endif
}

/* ------------------------------------------------------------------ */
/* A hint when a rank that did not run main crashes                     */
/* ------------------------------------------------------------------ */

static char crash_line[512];
static size_t crash_len;
static struct sigaction crash_old[2];
static const int crash_sigs[2] = { SIGSEGV, SIGBUS };

static void crash_hint(int sig, siginfo_t *si, void *uc)
{
    int k = sig == SIGBUS;
    ssize_t w = write(2, crash_line, crash_len);
    (void)w;
    /* then what was there before (Open MPI's backtrace, a sanitizer) */
    struct sigaction *o = &crash_old[k];
    if (o->sa_flags & SA_SIGINFO) {
        if (o->sa_sigaction) {
            o->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void sstep_crash_hint_install(int rank, int size)
{
    int n = snprintf(crash_line, sizeof crash_line, "superstep: rank %d of %d: crashed (a "
            "bad memory access) in an SPMD function; main ran on rank 0 only, so a global "
            "that main set (a size, a pointer) holds its initial value on this rank: send "
            "such values from process 0 in the first superstep (bsprun --check names the "
            "globals that differ)\n", rank, size);
    if (n <= 0) return;
    crash_len = (size_t)n < sizeof crash_line ? (size_t)n : sizeof crash_line - 1;
    for (int k = 0; k < 2; ++k) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = crash_hint;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(crash_sigs[k], &sa, &crash_old[k]) != 0) continue;
        /* a handler that is not a function (ignored) stays as it was */
        if (!(crash_old[k].sa_flags & SA_SIGINFO) && crash_old[k].sa_handler == SIG_IGN)
            sigaction(crash_sigs[k], &crash_old[k], NULL);
    }
}
