/*
 * ompi-server for lpf_mpi_initialize_over_tcp (docs/mpi.md, docs/lpf-compat.md).
 *
 * Open MPI 4 connects separately started jobs only through a rendezvous
 * server (ompi-server) whose address each job's runtime learnt before
 * MPI_Init (MCA parameter pmix_server_uri). Two cases:
 *
 * - lpf_mpi_initialize_over_tcp initialises MPI itself: process 0 starts a
 *   private server and hands its address to the others before they
 *   initialise MPI (mpi_tcp_start_server; mpi_tcp.c).
 *
 * - The program called MPI_Init itself, before the meeting: then the address
 *   must be in place before that MPI_Init. This file's MPI_Init and
 *   MPI_Init_thread (they come before libmpi's in the program's symbol
 *   lookup when the program links Superstep before MPI, as bspcc, lpfcc,
 *   pkg-config and the CMake package do) hand every job that Open MPI starts
 *   as a singleton (no mpirun) the address of a server shared by the user's
 *   processes on this host, then call PMPI_Init(_thread). The first such
 *   process starts it: a keeper process (its own session, no inherited
 *   files) runs ompi-server and ends it once no process has used it for
 *   RENDEZVOUS_IDLE_S seconds. The files, in a folder only the user may
 *   use ($XDG_RUNTIME_DIR/superstep-ompi-server, else
 *   /tmp/superstep-ompi-server-<uid>): lock (serialises start and stop),
 *   uri (ompi-server's address), keeper (the keeper's pid), users (each
 *   process using the server holds a shared lock on it until it ends).
 *
 * Nothing happens for a job started by mpirun or bsprun, with
 * OMPI_MCA_pmix_server_uri (or orte_server) set by the user, when the
 * library initialises MPI itself, or with SUPERSTEP_OMPI_SERVER=0.
 */
#define _GNU_SOURCE
#include "mpi_tcp_server.h"

#include <lpf/mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RENDEZVOUS_IDLE_S 5

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* unused where no ompi-server is started (MPI libraries other than Open MPI 4) */
__attribute__((unused)) static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* the first line of path into uri (without the newline); 0 if not complete */
__attribute__((unused)) static int read_line(const char *path, char *uri, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    ssize_t n = read(fd, uri, len - 1);
    close(fd);
    if (n <= 0) return 0;
    uri[n] = '\0';
    char *nl = strchr(uri, '\n');
    if (!nl) return 0;
    *nl = '\0';
    return uri[0] != '\0';
}

void mpi_tcp_stop_server(long server_pid)
{
    if (server_pid <= 0) return;
    kill((pid_t)server_pid, SIGTERM);
    int st;
    for (int i = 0; i < 200; ++i) {
        if (waitpid((pid_t)server_pid, &st, WNOHANG) == (pid_t)server_pid) return;
        sleep_ms(10);
    }
    kill((pid_t)server_pid, SIGKILL);
    waitpid((pid_t)server_pid, &st, 0);
}

#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5

long mpi_tcp_start_server(char *uri, size_t len)
{
    char dir[] = "/tmp/superstep-ompi-server-XXXXXX";
    if (!mkdtemp(dir)) return 0;
    char file[sizeof dir + 8];
    snprintf(file, sizeof file, "%s/uri", dir);
    pid_t c = fork();
    if (c < 0) {
        rmdir(dir);
        return 0;
    }
    if (c == 0) {
        int dn = open("/dev/null", O_RDWR);
        if (dn >= 0) {
            dup2(dn, 0);
            dup2(dn, 1);
            dup2(dn, 2);
        }
        setsid();
        /* it must not think it is part of an MPI job of ours */
        unsetenv("OMPI_MCA_pmix_server_uri");
        execlp("ompi-server", "ompi-server", "--no-daemonize", "-r", file, (char *)NULL);
        _exit(127);
    }
    int64_t deadline = mono_ms() + 20000;
    uri[0] = '\0';
    while (mono_ms() < deadline) {
        if (read_line(file, uri, len)) break;
        uri[0] = '\0';
        int st;
        if (waitpid(c, &st, WNOHANG) == c) { c = 0; break; }
        sleep_ms(10);
    }
    unlink(file);
    rmdir(dir);
    if (!c || !uri[0]) {
        if (c) mpi_tcp_stop_server(c);
        uri[0] = '\0';
        return 0;
    }
    return (long)c;
}

/* ---- the shared server of the program's own MPI_Init --------------- */

static int rendezvous_used;

int mpi_tcp_rendezvous_used(void)
{
    return rendezvous_used;
}

struct paths {
    char dir[512], lock[560], uri[560], keeper[560], keeper_tmp[560], users[560];
};

static int make_paths(struct paths *P)
{
    const char *rt = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    int n;
    if (rt && *rt == '/' && stat(rt, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid())
        n = snprintf(P->dir, sizeof P->dir, "%s/superstep-ompi-server", rt);
    else
        n = snprintf(P->dir, sizeof P->dir, "/tmp/superstep-ompi-server-%lu",
                (unsigned long)getuid());
    if (n < 0 || (size_t)n >= sizeof P->dir) return 0;
    if (mkdir(P->dir, 0700) != 0 && errno != EEXIST) return 0;
    /* ours alone: a folder of this user that nobody else may use */
    if (lstat(P->dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()
            || (st.st_mode & 077))
        return 0;
    snprintf(P->lock, sizeof P->lock, "%s/lock", P->dir);
    snprintf(P->uri, sizeof P->uri, "%s/uri", P->dir);
    snprintf(P->keeper, sizeof P->keeper, "%s/keeper", P->dir);
    snprintf(P->keeper_tmp, sizeof P->keeper_tmp, "%s/keeper.tmp", P->dir);
    snprintf(P->users, sizeof P->users, "%s/users", P->dir);
    return 1;
}

static int open_locked(const char *path, int how)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    while (flock(fd, how) != 0) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

static int keeper_alive(const struct paths *P)
{
    char s[32];
    if (!read_line(P->keeper, s, sizeof s)) return 0;
    long pid = strtol(s, NULL, 10);
    return pid > 0 && kill((pid_t)pid, 0) == 0;
}

/* The keeper (its own session, no files of the program): runs ompi-server,
 * ends it when nobody has held the users lock for RENDEZVOUS_IDLE_S
 * seconds, or ends when it ends. Everything it needs was prepared before
 * the fork. */
static void keeper_main(const struct paths *P, char *const argv[])
{
    int dn = open("/dev/null", O_RDWR);
    if (dn >= 0) {
        dup2(dn, 0);
        dup2(dn, 1);
        dup2(dn, 2);
    }
    if (chdir("/") != 0) _exit(1);
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
        for (int fd = 3; fd < 65536; ++fd) close(fd);
    pid_t s = fork();
    if (s < 0) _exit(1);
    if (s == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int idle = 0;
    for (;;) {
        sleep_ms(1000);
        int st;
        if (waitpid(s, &st, WNOHANG) == s) {
            unlink(P->uri);
            unlink(P->keeper);
            _exit(0);
        }
        int lk = open_locked(P->lock, LOCK_EX);
        if (lk < 0) continue;
        int us = open(P->users, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (us >= 0 && flock(us, LOCK_EX | LOCK_NB) == 0) {
            flock(us, LOCK_UN);
            ++idle;
        } else {
            idle = 0;
        }
        if (idle >= RENDEZVOUS_IDLE_S) {
            unlink(P->uri);
            unlink(P->keeper);
            kill(s, SIGTERM);
            for (int i = 0; i < 200 && waitpid(s, &st, WNOHANG) != s; ++i) sleep_ms(10);
            kill(s, SIGKILL);
            waitpid(s, &st, WNOHANG);
            _exit(0);
        }
        if (us >= 0) close(us);
        close(lk);
    }
}

/* a keeper with a fresh server; 0 if it could not be started */
static int start_keeper(const struct paths *P)
{
    char *argv[] = { (char *)"ompi-server", (char *)"--no-daemonize", (char *)"-r",
                     (char *)P->uri, NULL };
    unlink(P->uri);
    unlink(P->keeper);
    pid_t c = fork();
    if (c < 0) return 0;
    if (c == 0) {
        setsid();
        /* the server must not take itself for part of a job */
        unsetenv("OMPI_MCA_pmix_server_uri");
        pid_t k = fork();
        if (k == 0) {
            keeper_main(P, argv);
            _exit(1);
        }
        if (k < 0) _exit(1);
        /* the keeper's pid file, in place before the caller looks for it */
        char buf[24], rev[24];
        int n = 0, r = 0;
        do { rev[r++] = (char)('0' + k % 10); k /= 10; } while (k);
        while (r) buf[n++] = rev[--r];
        buf[n++] = '\n';
        int kf = open(P->keeper_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        int ok = kf >= 0 && write(kf, buf, (size_t)n) == n;
        if (kf >= 0) close(kf);
        _exit(ok && rename(P->keeper_tmp, P->keeper) == 0 ? 0 : 1);
    }
    int st;
    while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int program_runs_singleton(void)
{
    /* started by mpirun / bsprun / a resource manager's launcher */
    static const char *const launched[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
        "PMIX_NAMESPACE", "PMI_RANK", "PMI_FD", NULL };
    for (int i = 0; launched[i]; ++i)
        if (getenv(launched[i])) return 0;
    /* a server chosen by the user, or isolation asked for */
    static const char *const chosen[] = { "OMPI_MCA_pmix_server_uri", "OMPI_MCA_orte_server",
        "OMPI_MCA_ess_singleton_server", NULL };
    for (int i = 0; chosen[i]; ++i)
        if (getenv(chosen[i])) return 0;
    const char *iso = getenv("OMPI_MCA_ess_singleton_isolated");
    if (iso && *iso && strcmp(iso, "0") && strcasecmp(iso, "false")) return 0;
    const char *off = getenv("SUPERSTEP_OMPI_SERVER");
    if (off && (!strcmp(off, "0") || !strcasecmp(off, "off") || !strcasecmp(off, "no")))
        return 0;
    /* the library initialises MPI itself (mpi_boot.c): not the program */
    const char *e = getenv("SUPERSTEP_ENGINE");
    const char *na = getenv("SUPERSTEP_MPI_NO_AUTO_INIT");
    if (e && (!strcasecmp(e, "mpi") || !strcasecmp(e, "hybrid"))
            && !(na && *na && strcmp(na, "0"))
            && *(const volatile int *)&LPF_MPI_AUTO_INITIALIZE != 0)
        return 0;
    int inited = 0;
    PMPI_Initialized(&inited);
    return !inited;
}

static void rendezvous(void)
{
    if (!program_runs_singleton()) return;
    struct paths P;
    if (!make_paths(&P)) return;
    int lk = open_locked(P.lock, LOCK_EX);
    if (lk < 0) return;
    char uri[1024];
    int ok = read_line(P.uri, uri, sizeof uri) && keeper_alive(&P);
    if (!ok && start_keeper(&P)) {
        int64_t deadline = mono_ms() + 20000;
        while (!(ok = read_line(P.uri, uri, sizeof uri)) && mono_ms() < deadline
                && keeper_alive(&P))
            sleep_ms(10);
        if (!ok) {
            /* the keeper had a pid file: it ends its server when it goes */
            char s[32];
            if (read_line(P.keeper, s, sizeof s)) kill((pid_t)strtol(s, NULL, 10), SIGTERM);
        }
    }
    if (ok) {
        /* held until the process ends (closed on exec) */
        int us = open_locked(P.users, LOCK_SH);
        if (us >= 0) {
            setenv("OMPI_MCA_pmix_server_uri", uri, 1);
            rendezvous_used = 1;
        }
    }
    close(lk);
}

int MPI_Init(int *argc, char ***argv)
{
    rendezvous();
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    rendezvous();
    return PMPI_Init_thread(argc, argv, required, provided);
}

#else   /* not Open MPI 4 or older: nothing to start */

long mpi_tcp_start_server(char *uri, size_t len)
{
    if (len) uri[0] = '\0';
    return 0;
}

int mpi_tcp_rendezvous_used(void)
{
    return 0;
}

#endif

int mpi_tcp_pmpi_init_thread(int required, int *provided)
{
    return PMPI_Init_thread(NULL, NULL, required, provided);
}
