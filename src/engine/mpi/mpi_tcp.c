/*
 * lpf_mpi_initialize_over_tcp: nprocs independently started processes meet
 * at process 0, which listens on (server, port). Within `timeout` ms every
 * other process connects and says who it is; if not all arrive in time,
 * every process that is there returns LPF_ERR_FATAL with a message.
 *
 * Then the processes form one MPI communicator ordered by pid: process 0
 * opens an MPI port and tells everyone its name over TCP; one after the
 * other (pid order), each process connects to it while the group formed so
 * far accepts, and the two merge. Open MPI can connect independently
 * started processes only through a rendezvous server (ompi-server); when
 * MPI is not yet initialised and none is configured, process 0 starts one,
 * hands its address to everyone before they initialise MPI, and stops it
 * once the communicator exists.
 */
#define _GNU_SOURCE
#include "mpi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#define PRIM "lpf_mpi_initialize_over_tcp"
#define HELLO_MAGIC 0x5353544350ull   /* "SSTCP" */

struct hello {
    uint64_t magic;
    uint32_t pid;
    uint32_t nprocs;
};

struct welcome {
    uint32_t ok;
    uint32_t uri_len;      /* then uri_len bytes: ompi-server address ("" if none) */
    uint32_t port_len;     /* then port_len bytes: the MPI port name */
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int remaining(int64_t deadline)
{
    int64_t r = deadline - now_ms();
    return r < 0 ? 0 : r > INT_MAX ? INT_MAX : (int)r;
}

/* read or write exactly n bytes before the deadline (deadline < 0: none) */
static int io_full(int fd, void *buf, size_t n, int writing, int64_t deadline)
{
    char *p = buf;
    while (n) {
        struct pollfd pf = { fd, (short)(writing ? POLLOUT : POLLIN), 0 };
        int r = poll(&pf, 1, deadline < 0 ? -1 : remaining(deadline));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int send_str(int fd, const char *s, size_t n)
{
    return n ? io_full(fd, (void *)s, n, 1, -1) : 0;
}

/* ------------------------------------------------------------------ */
/* ompi-server                                                          */
/* ------------------------------------------------------------------ */

#ifdef OPEN_MPI
static long start_ompi_server(char *uri, size_t len)
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
    int64_t deadline = now_ms() + 20000;
    uri[0] = '\0';
    while (now_ms() < deadline) {
        FILE *f = fopen(file, "r");
        if (f) {
            if (fgets(uri, (int)len, f) && strchr(uri, '\n')) {
                fclose(f);
                break;
            }
            fclose(f);
            uri[0] = '\0';
        }
        int st;
        if (waitpid(c, &st, WNOHANG) == c) { c = 0; break; }
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
    unlink(file);
    rmdir(dir);
    char *nl = strchr(uri, '\n');
    if (nl) *nl = '\0';
    if (!c || !uri[0]) {
        if (c) mpi_tcp_stop_server(c);
        uri[0] = '\0';
        return 0;
    }
    return (long)c;
}
#endif

void mpi_tcp_stop_server(long server_pid)
{
    if (server_pid <= 0) return;
    kill((pid_t)server_pid, SIGTERM);
    int st;
    for (int i = 0; i < 200; ++i) {
        if (waitpid((pid_t)server_pid, &st, WNOHANG) == (pid_t)server_pid) return;
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
    kill((pid_t)server_pid, SIGKILL);
    waitpid((pid_t)server_pid, &st, 0);
}

/* ------------------------------------------------------------------ */
/* The meeting                                                          */
/* ------------------------------------------------------------------ */

static int listen_on(const char *server, const char *port)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    if (getaddrinfo(server, port, &hints, &res) != 0) return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

/* one connection attempt; -1 if refused or unreachable now */
static int connect_once(const char *server, const char *port, int64_t deadline)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(server, port, &hints, &res) != 0) return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) continue;
        int r = connect(fd, a->ai_addr, a->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS) {
            struct pollfd pf = { fd, POLLOUT, 0 };
            int err = 0;
            socklen_t el = sizeof err;
            if (poll(&pf, 1, remaining(deadline)) == 1
                    && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
                r = 0;
        }
        if (r != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static lpf_err_t mpi_init_if_needed(const char *uri)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited) return LPF_SUCCESS;
    if (uri && *uri) setenv("OMPI_MCA_pmix_server_uri", uri, 1);
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        mpi_errorf(PRIM, "MPI_Init failed");
        return LPF_ERR_FATAL;
    }
    return LPF_SUCCESS;
}

/* Merge step k (1 <= k < nprocs): the group of pids 0..k-1 accepts pid k. */
static int grow(MPI_Comm *group, const char *portname, int newcomer)
{
    MPI_Comm inter, merged;
    int rc;
    if (newcomer)
        rc = MPI_Comm_connect(portname, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    else
        rc = MPI_Comm_accept(portname, MPI_INFO_NULL, 0, *group, &inter);
    if (rc != MPI_SUCCESS) return -1;
    rc = MPI_Intercomm_merge(inter, newcomer, &merged);
    MPI_Comm_free(&inter);
    if (rc != MPI_SUCCESS) return -1;
    if (*group != MPI_COMM_SELF && *group != MPI_COMM_NULL) MPI_Comm_free(group);
    *group = merged;
    return 0;
}

lpf_err_t mpi_tcp_meet(const char *server, const char *port, int timeout_ms,
        lpf_pid_t pid, lpf_pid_t nprocs, MPI_Comm *comm, long *server_pid)
{
    *server_pid = 0;
    const int64_t t0 = now_ms();
    const int64_t deadline = t0 + (timeout_ms > 0 ? timeout_ms : 0);
    if (nprocs == 1) {
        if (mpi_init_if_needed(NULL) != LPF_SUCCESS) return LPF_ERR_FATAL;
        return MPI_Comm_dup(MPI_COMM_SELF, comm) == MPI_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL;
    }
    int *fds = NULL, fd = -1, lfd = -1;
    lpf_err_t rc = LPF_ERR_FATAL;
    char uri[1024] = "";
    char portname[MPI_MAX_PORT_NAME + 1] = "";
    long spid = 0;

    if (pid == 0) {
        fds = malloc(nprocs * sizeof *fds);
        if (!fds) return LPF_ERR_OUT_OF_MEMORY;
        for (lpf_pid_t k = 0; k < nprocs; ++k) fds[k] = -1;
        lfd = listen_on(server, port);
        if (lfd < 0) {
            mpi_errorf(PRIM, "process 0 cannot listen on %s:%s (%s)", server, port, strerror(errno));
            goto out;
        }
        lpf_pid_t arrived = 1;
        while (arrived < nprocs) {
            struct pollfd pf = { lfd, POLLIN, 0 };
            int r = poll(&pf, 1, remaining(deadline));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                mpi_errorf(PRIM, "process 0: only %u of %u processes arrived at the meeting "
                        "point %s:%s within the timeout of %d ms", arrived, nprocs, server,
                        port, timeout_ms);
                goto out;
            }
            int c = accept(lfd, NULL, NULL);
            if (c < 0) continue;
            struct hello h;
            if (io_full(c, &h, sizeof h, 0, deadline) || h.magic != HELLO_MAGIC
                    || h.nprocs != nprocs || h.pid == 0 || h.pid >= nprocs || fds[h.pid] >= 0) {
                if (h.magic == HELLO_MAGIC && h.nprocs != nprocs)
                    mpi_errorf(PRIM, "process 0: process %u says nprocs is %u, not %u",
                            h.pid, h.nprocs, nprocs);
                close(c);
                continue;
            }
            int one = 1;
            setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fds[h.pid] = c;
            arrived++;
        }
        close(lfd);
        lfd = -1;
        int inited = 0;
        MPI_Initialized(&inited);
#ifdef OPEN_MPI
        if (!inited && !getenv("OMPI_MCA_pmix_server_uri")) {
            spid = start_ompi_server(uri, sizeof uri);
            if (!spid)
                mpi_errorf(PRIM, "could not start ompi-server (needed by Open MPI to connect "
                        "independently started processes); trying without");
        }
#endif
        if (mpi_init_if_needed(uri) != LPF_SUCCESS) goto tell_failure;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int orc = MPI_Open_port(MPI_INFO_NULL, portname);
        if (orc != MPI_SUCCESS) {
            char es[MPI_MAX_ERROR_STRING] = "";
            int el = 0;
            MPI_Error_string(orc, es, &el);
            char *nl = strrchr(es, '\n');
            while (nl && nl[1] == '\0') { *nl = '\0'; nl = strrchr(es, '\n'); }
            nl = strrchr(es, '\n');
            mpi_errorf(PRIM, "MPI_Open_port failed: this MPI cannot connect independently "
                    "started processes (%s)", nl ? nl + 1 : es);
            goto tell_failure;
        }
        struct welcome w = { 1, (uint32_t)strlen(uri), (uint32_t)strlen(portname) };
        for (lpf_pid_t k = 1; k < nprocs; ++k)
            if (io_full(fds[k], &w, sizeof w, 1, -1) || send_str(fds[k], uri, w.uri_len)
                    || send_str(fds[k], portname, w.port_len)) {
                mpi_errorf(PRIM, "process 0: lost the connection to process %u", k);
                goto out_port;
            }
        MPI_Comm group = MPI_COMM_SELF;
        for (lpf_pid_t k = 1; k < nprocs; ++k) {
            char go = 'g';
            if (io_full(fds[k], &go, 1, 1, -1) || grow(&group, portname, 0)) {
                mpi_errorf(PRIM, "process 0: connecting process %u over MPI failed", k);
                goto out_port;
            }
        }
        *comm = group;
        rc = LPF_SUCCESS;
out_port:
        MPI_Close_port(portname);
        goto out;
tell_failure:
        {
            struct welcome no = { 0, 0, 0 };
            for (lpf_pid_t k = 1; k < nprocs; ++k) io_full(fds[k], &no, sizeof no, 1, -1);
        }
        goto out;
    }

    /* pid > 0: reach process 0 */
    for (;;) {
        fd = connect_once(server, port, deadline);
        if (fd >= 0) break;
        if (now_ms() >= deadline) {
            mpi_errorf(PRIM, "process %u: could not reach process 0 at the meeting point "
                    "%s:%s within the timeout of %d ms", pid, server, port, timeout_ms);
            goto out;
        }
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
    }
    {
        struct hello h = { HELLO_MAGIC, pid, nprocs };
        struct welcome w;
        if (io_full(fd, &h, sizeof h, 1, deadline)) {
            mpi_errorf(PRIM, "process %u: lost the connection to process 0", pid);
            goto out;
        }
        /* process 0 answers once everybody has arrived */
        if (io_full(fd, &w, sizeof w, 0, deadline)) {
            mpi_errorf(PRIM, "process %u: not all %u processes met at %s:%s within the "
                    "timeout of %d ms", pid, nprocs, server, port, timeout_ms);
            goto out;
        }
        if (!w.ok || w.uri_len >= sizeof uri || w.port_len > MPI_MAX_PORT_NAME
                || io_full(fd, uri, w.uri_len, 0, -1) || io_full(fd, portname, w.port_len, 0, -1)) {
            mpi_errorf(PRIM, "process %u: process 0 could not set up MPI", pid);
            goto out;
        }
        uri[w.uri_len] = '\0';
        portname[w.port_len] = '\0';
        if (mpi_init_if_needed(uri) != LPF_SUCCESS) goto out;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char go;
        if (io_full(fd, &go, 1, 0, -1)) {
            mpi_errorf(PRIM, "process %u: lost the connection to process 0", pid);
            goto out;
        }
        MPI_Comm group = MPI_COMM_NULL;
        if (grow(&group, portname, 1)) {
            mpi_errorf(PRIM, "process %u: connecting to process 0 over MPI failed", pid);
            goto out;
        }
        for (lpf_pid_t k = pid + 1; k < nprocs; ++k)
            if (grow(&group, portname, 0)) {
                mpi_errorf(PRIM, "process %u: connecting process %u over MPI failed", pid, k);
                goto out;
            }
        *comm = group;
        rc = LPF_SUCCESS;
    }
out:
    if (rc == LPF_SUCCESS) {
        /* ranks follow pids */
        int r = -1;
        MPI_Comm_rank(*comm, &r);
        if (r != (int)pid) {
            MPI_Comm sorted;
            MPI_Comm_split(*comm, 0, (int)pid, &sorted);
            MPI_Comm_free(comm);
            *comm = sorted;
        }
        MPI_Comm_set_errhandler(*comm, MPI_ERRORS_ARE_FATAL);
    }
    if (spid) mpi_tcp_stop_server(spid);
    if (lfd >= 0) close(lfd);
    if (fd >= 0) close(fd);
    if (fds) {
        for (lpf_pid_t k = 0; k < nprocs; ++k)
            if (fds[k] >= 0) close(fds[k]);
        free(fds);
    }
    return rc;
}
