/*
 * lpf_mpi_initialize_over_tcp: nprocs independently started processes meet
 * at process 0, which listens on (server, port). Within `timeout` ms every
 * other process connects and proves that it holds the job's shared secret;
 * if not all arrive in time, every process that is there returns
 * LPF_ERR_FATAL with a message.
 *
 * Authentication (mpi_tcp_auth.c has the secret and the MACs):
 *
 *   0 -> k  challenge  "SSTCP2c\0", nonce0 (32 random bytes)
 *   k -> 0  hello      "SSTCP2h\0", pid, nprocs, noncek,
 *                      MAC("client", nonce0 || hello up to noncek)
 *   0 -> k  verdict    status, detail,
 *                      MAC("verdict", noncek || nonce0 || pid, nprocs || status, detail)
 *                      (no MAC when the hello failed authentication)
 *   0 -> k  welcome    once all arrived: ok, the ompi-server address and the
 *                      MPI port, MAC("welcome", noncek || nonce0 || all of it)
 *
 * so both sides prove the secret without sending it, and nothing about the
 * job leaves process 0 before the peer proved it. Process 0 serves all
 * connections at once (poll): a connection that has not authenticated within
 * HANDSHAKE_MS, sends anything else, or fails is closed with a line on
 * stderr naming its address, and the meeting goes on. Integers on the wire
 * are little-endian.
 *
 * Then the processes form one MPI communicator ordered by pid: process 0
 * opens an MPI port and tells everyone its name over TCP; one after the
 * other (pid order), each process connects to it while the group formed so
 * far accepts, and the two merge. Open MPI can connect independently
 * started processes only through a rendezvous server (ompi-server); when
 * MPI is not yet initialised and none is configured, process 0 starts one,
 * hands its address to everyone before they initialise MPI, and stops it
 * once the communicator exists. When the program called MPI_Init itself,
 * that MPI_Init was given this host's shared server (mpi_tcp_server.c).
 */
#define _GNU_SOURCE
#include "mpi_internal.h"
#include "mpi_tcp_auth.h"
#include "mpi_tcp_server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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
#define OLD_HELLO_MAGIC 0x5353544350ull   /* "SSTCP": the unauthenticated hello of old */
#define HANDSHAKE_MS 5000                 /* a connection's time to authenticate */
#define MAX_PENDING 64                    /* connections authenticating at once */
#define MAX_REPORTS 20                    /* rejected connections reported one by one */

static const char MAGIC_CHALLENGE[8] = "SSTCP2c";
static const char MAGIC_HELLO[8] = "SSTCP2h";

#define CHALLENGE_LEN (8 + TCP_NONCE_BYTES)
#define HELLO_HEAD (8 + 4 + 4 + TCP_NONCE_BYTES)      /* what the hello's MAC covers */
#define HELLO_LEN (HELLO_HEAD + TCP_MAC_BYTES)
#define VERDICT_LEN (4 + 4 + TCP_MAC_BYTES)
#define WELCOME_HEAD 12                                /* ok, uri_len, port_len */

enum verdict {
    V_ACCEPTED = 1,
    V_AUTH_FAILED = 2,    /* detail 0; no MAC: the peer is not one of us */
    V_NPROCS = 3,         /* detail: process 0's nprocs */
    V_PID = 4,            /* pid 0 or out of range */
    V_DUPLICATE = 5       /* the pid has arrived already */
};

#define LABEL_CLIENT "superstep tcp hello"
#define LABEL_VERDICT "superstep tcp verdict"
#define LABEL_WELCOME "superstep tcp welcome"

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

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

#define IO_CLOSED (-1)     /* the peer closed the connection, or it broke */
#define IO_TIMEOUT (-2)    /* the deadline passed */

/* read or write exactly n bytes before the deadline (deadline < 0: none);
 * 0, IO_CLOSED or IO_TIMEOUT */
static int io_full(int fd, void *buf, size_t n, int writing, int64_t deadline)
{
    char *p = buf;
    while (n) {
        struct pollfd pf = { fd, (short)(writing ? POLLOUT : POLLIN), 0 };
        int r = poll(&pf, 1, deadline < 0 ? -1 : remaining(deadline));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return IO_TIMEOUT;
        if (r < 0) return IO_CLOSED;
        ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) return IO_CLOSED;
        p += k;
        n -= (size_t)k;
    }
    return 0;
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
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
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
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
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

/* why connecting over MPI may have failed, when MPI was initialised
 * before the call */
static const char *connect_hint(int inited_before)
{
#ifdef OPEN_MPI
    /* started by an mpirun of its own (each job its own launcher): the
     * server has to be given to every mpirun */
    const char *by_launcher = getenv("OMPI_COMM_WORLD_SIZE");
    if (inited_before && by_launcher && *by_launcher)
        return " (each job was started by an mpirun of its own: Open MPI connects such jobs "
               "only through one ompi-server given to every mpirun: start `ompi-server -r FILE` "
               "once and start every job with `mpirun --ompi-server file:FILE`, with lpfrun: "
               "-mpirun,--ompi-server -mpirun,file:FILE; docs/lpf-compat.md)";
    if (inited_before && mpi_tcp_rendezvous_used())
        return " (MPI_Init gave each job the ompi-server shared on its host: jobs on several "
               "hosts need one ompi-server for all, its address in OMPI_MCA_pmix_server_uri "
               "of every job; docs/lpf-compat.md)";
    if (inited_before)
        return " (Open MPI connects separately started jobs only through one ompi-server "
               "that every job knew at MPI_Init: link Superstep before MPI, whose MPI_Init "
               "then provides one, or start ompi-server and give every job its address in "
               "OMPI_MCA_pmix_server_uri; docs/lpf-compat.md)";
#else
    (void)inited_before;
#endif
    return "";
}

static lpf_err_t mpi_init_if_needed(const char *uri)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (inited) return LPF_SUCCESS;
    if (uri && *uri) setenv("OMPI_MCA_pmix_server_uri", uri, 1);
    int provided;
    if (mpi_tcp_pmpi_init_thread(MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
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

/* the MAC of a verdict (the hello's pid and nprocs are at hello + 8) */
static void verdict_mac(unsigned char mac[TCP_MAC_BYTES], const unsigned char *key,
        const unsigned char *nonce0, const unsigned char *hello, const unsigned char *verdict)
{
    const struct tcp_part parts[] = {
        { hello + 16, TCP_NONCE_BYTES }, { nonce0, TCP_NONCE_BYTES },
        { hello + 8, 8 }, { verdict, 8 } };
    tcp_auth_mac(mac, key, LABEL_VERDICT, parts, sizeof parts / sizeof *parts);
}

static void welcome_mac(unsigned char mac[TCP_MAC_BYTES], const unsigned char *key,
        const unsigned char *nonce0, const unsigned char *noncek, const unsigned char *msg,
        size_t len)
{
    const struct tcp_part parts[] = {
        { noncek, TCP_NONCE_BYTES }, { nonce0, TCP_NONCE_BYTES }, { msg, len } };
    tcp_auth_mac(mac, key, LABEL_WELCOME, parts, sizeof parts / sizeof *parts);
}

/* ---- process 0 ---------------------------------------------------- */

struct member {
    int fd;
    unsigned char nonce0[TCP_NONCE_BYTES], noncek[TCP_NONCE_BYTES];
    char addr[80];
};

struct pending {
    int fd;                 /* -1: free */
    int64_t since, deadline;
    size_t got;
    unsigned char nonce0[TCP_NONCE_BYTES];
    unsigned char in[HELLO_LEN];
    char addr[80];
};

struct server {
    const unsigned char *key;
    lpf_pid_t nprocs, arrived;
    struct member *m;                  /* [nprocs] */
    struct pending p[MAX_PENDING];
    unsigned rejected, reported;
};

static void peer_name(int fd, char *s, size_t n)
{
    struct sockaddr_storage a;
    socklen_t al = sizeof a;
    char host[64] = "?", serv[16] = "?";
    if (getpeername(fd, (struct sockaddr *)&a, &al) == 0)
        getnameinfo((struct sockaddr *)&a, al, host, sizeof host, serv, sizeof serv,
                NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(s, n, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, serv);
}

/* close a connection that is not a member, saying why (the first few) */
static void reject(struct server *S, struct pending *c, const char *fmt, ...) SSTEP_PRINTF(3, 4);
static void reject(struct server *S, struct pending *c, const char *fmt, ...)
{
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    S->rejected++;
    if (S->reported < MAX_REPORTS)
        mpi_errorf(PRIM, "process 0: closed the connection from %s: %s", c->addr, why);
    else if (S->reported == MAX_REPORTS)
        mpi_errorf(PRIM, "process 0: closed the connection from %s: %s (further closed "
                "connections are not reported one by one)", c->addr, why);
    S->reported++;
    close(c->fd);
    c->fd = -1;
}

/* best effort: the peer reads the verdict before the connection closes */
static void send_verdict(struct server *S, int fd, const unsigned char *nonce0,
        const unsigned char *hello, enum verdict v, uint32_t detail, int64_t deadline)
{
    unsigned char out[VERDICT_LEN];
    put32(out, (uint32_t)v);
    put32(out + 4, detail);
    if (v == V_AUTH_FAILED)
        memset(out + 8, 0, TCP_MAC_BYTES);
    else
        verdict_mac(out + 8, S->key, nonce0, hello, out);
    io_full(fd, out, sizeof out, 1, deadline);
}

static void new_connection(struct server *S, int fd, int64_t now)
{
    struct pending *c = NULL, *oldest = NULL;
    for (int i = 0; i < MAX_PENDING; ++i) {
        if (S->p[i].fd < 0) {
            c = &S->p[i];
            break;
        }
        if (!oldest || S->p[i].since < oldest->since) oldest = &S->p[i];
    }
    if (!c) {
        reject(S, oldest, "%d connections were authenticating at once; dropped the oldest",
                MAX_PENDING);
        c = oldest;
    }
    c->fd = fd;
    c->since = now;
    c->deadline = now + HANDSHAKE_MS;
    c->got = 0;
    peer_name(fd, c->addr, sizeof c->addr);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    unsigned char ch[CHALLENGE_LEN];
    memcpy(ch, MAGIC_CHALLENGE, 8);
    tcp_auth_random(c->nonce0, TCP_NONCE_BYTES);
    memcpy(ch + 8, c->nonce0, TCP_NONCE_BYTES);
    /* a new socket's send buffer takes it at once */
    if (send(fd, ch, sizeof ch, MSG_NOSIGNAL) != (ssize_t)sizeof ch)
        reject(S, c, "cannot send the challenge (%s)", strerror(errno));
}

/* a complete hello from c: authenticate it and admit or reject the peer */
static void judge(struct server *S, struct pending *c)
{
    lpf_pid_t pid = get32(c->in + 8), np = get32(c->in + 12);
    const struct tcp_part parts[] = { { c->nonce0, TCP_NONCE_BYTES }, { c->in, HELLO_HEAD } };
    if (!tcp_auth_check(c->in + HELLO_HEAD, S->key, LABEL_CLIENT, parts, 2)) {
        send_verdict(S, c->fd, c->nonce0, c->in, V_AUTH_FAILED, 0, c->deadline);
        reject(S, c, "authentication failed: it claims to be process %u of %u but does not "
                "know the shared secret (a stray client, or a process with another secret)",
                pid, np);
        return;
    }
    if (np != S->nprocs) {
        send_verdict(S, c->fd, c->nonce0, c->in, V_NPROCS, S->nprocs, c->deadline);
        reject(S, c, "process %u says nprocs is %u, not %u", pid, np, S->nprocs);
        return;
    }
    if (pid == 0 || pid >= S->nprocs) {
        send_verdict(S, c->fd, c->nonce0, c->in, V_PID, S->nprocs, c->deadline);
        reject(S, c, "it claims pid %u, but the pids of the others are 1 to %u", pid,
                S->nprocs - 1);
        return;
    }
    struct member *m = &S->m[pid];
    if (m->fd >= 0) {
        send_verdict(S, c->fd, c->nonce0, c->in, V_DUPLICATE, pid, c->deadline);
        /* a real misconfiguration: always reported */
        mpi_errorf(PRIM, "process 0: closed the connection from %s: a second process %u "
                "(process %u arrived already from %s): were two processes started with "
                "pid %u?", c->addr, pid, pid, m->addr, pid);
        S->rejected++;
        close(c->fd);
        c->fd = -1;
        return;
    }
    m->fd = c->fd;
    memcpy(m->nonce0, c->nonce0, TCP_NONCE_BYTES);
    memcpy(m->noncek, c->in + 16, TCP_NONCE_BYTES);
    memcpy(m->addr, c->addr, sizeof m->addr);
    c->fd = -1;
    S->arrived++;
    send_verdict(S, m->fd, m->nonce0, c->in, V_ACCEPTED, 0, now_ms() + HANDSHAKE_MS);
}

/* read what c sent; judge it once complete */
static void serve(struct server *S, struct pending *c)
{
    ssize_t k = recv(c->fd, c->in + c->got, HELLO_LEN - c->got, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (k < 0) {
        reject(S, c, "%s", strerror(errno));
        return;
    }
    if (k == 0) {
        if (c->got)
            reject(S, c, "it left after %zu bytes, without a complete hello", c->got);
        else
            reject(S, c, "it left without a word");
        return;
    }
    size_t before = c->got;
    c->got += (size_t)k;
    if (before < 8 && c->got >= 8 && memcmp(c->in, MAGIC_HELLO, 8) != 0) {
        uint64_t old;
        memcpy(&old, c->in, 8);
        if (old == OLD_HELLO_MAGIC)
            reject(S, c, "it sent an unauthenticated hello (of an older Superstep, or forged) "
                    "claiming pid %u", c->got >= 12 ? get32(c->in + 8) : 0);
        else
            reject(S, c, "it sent garbage, not a Superstep hello");
        return;
    }
    if (c->got == HELLO_LEN) judge(S, c);
}

/* a member sent something or left before the welcome */
static void member_event(struct server *S, lpf_pid_t k)
{
    struct member *m = &S->m[k];
    char b;
    ssize_t r = recv(m->fd, &b, 1, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
    mpi_errorf(PRIM, "process 0: process %u (from %s) %s; waiting for a process %u again", k,
            m->addr, r == 0 ? "left the meeting" : r < 0 ? "lost its connection"
            : "sent unexpected bytes", k);
    close(m->fd);
    m->fd = -1;
    S->arrived--;
}

/* Wait until every pid 1..nprocs-1 has arrived and authenticated (0), or
 * the deadline (-1, message printed). */
static int gather(struct server *S, int lfd, const char *server, const char *port,
        int timeout_ms, int64_t deadline)
{
    const lpf_pid_t n = S->nprocs;
    struct pollfd *pf = malloc((1 + MAX_PENDING + n) * sizeof *pf);
    int *who = malloc((1 + MAX_PENDING + n) * sizeof *who);
    int rc = -1;
    if (!pf || !who) {
        mpi_errorf(PRIM, "process 0: out of memory");
        goto done;
    }
    for (;;) {
        if (S->arrived == n) {
            rc = 0;
            break;
        }
        int64_t now = now_ms();
        if (now >= deadline) {
            char more[80] = "";
            if (S->rejected)
                snprintf(more, sizeof more, " (%u other connections were closed, see above)",
                        S->rejected);
            mpi_errorf(PRIM, "process 0: only %u of %u processes arrived at the meeting point "
                    "%s:%s within the timeout of %d ms%s", S->arrived, n, server, port,
                    timeout_ms, more);
            break;
        }
        int64_t wake = deadline;
        nfds_t np = 0;
        pf[np] = (struct pollfd){ lfd, POLLIN, 0 };
        who[np++] = -1;
        for (int i = 0; i < MAX_PENDING; ++i) {
            struct pending *c = &S->p[i];
            if (c->fd < 0) continue;
            if (c->deadline <= now) {
                reject(S, c, "no complete, authenticated hello within %d ms (%zu bytes came)",
                        HANDSHAKE_MS, c->got);
                continue;
            }
            if (c->deadline < wake) wake = c->deadline;
            pf[np] = (struct pollfd){ c->fd, POLLIN, 0 };
            who[np++] = i;
        }
        for (lpf_pid_t k = 1; k < n; ++k)
            if (S->m[k].fd >= 0) {
                pf[np] = (struct pollfd){ S->m[k].fd, POLLIN, 0 };
                who[np++] = MAX_PENDING + (int)k;
            }
        int r = poll(pf, np, remaining(wake));
        if (r < 0 && errno != EINTR) {
            mpi_errorf(PRIM, "process 0: poll failed (%s)", strerror(errno));
            break;
        }
        if (r <= 0) continue;
        for (nfds_t i = 1; i < np; ++i) {
            if (!pf[i].revents) continue;
            if (who[i] < MAX_PENDING) {
                if (S->p[who[i]].fd >= 0) serve(S, &S->p[who[i]]);
            } else {
                member_event(S, (lpf_pid_t)(who[i] - MAX_PENDING));
            }
        }
        if (pf[0].revents)
            for (int a = 0; a < MAX_PENDING; ++a) {
                int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (c < 0) break;
                new_connection(S, c, now_ms());
            }
    }
done:
    for (int i = 0; i < MAX_PENDING; ++i)
        if (S->p[i].fd >= 0)
            reject(S, &S->p[i], rc == 0 ? "the meeting is complete" : "the meeting failed");
    free(pf);
    free(who);
    return rc;
}

/* ---- processes 1 .. nprocs-1 --------------------------------------- */

#define HS_ACCEPTED 0
#define HS_RETRY 1      /* the connection closed before process 0 answered: try again */
#define HS_FAILED (-1)  /* message printed */

static int handshake(int fd, const unsigned char *key, lpf_pid_t pid, lpf_pid_t nprocs,
        const char *server, const char *port, int timeout_ms, int64_t deadline,
        unsigned char *nonce0, unsigned char *noncek)
{
    unsigned char ch[CHALLENGE_LEN], hello[HELLO_LEN], v[VERDICT_LEN];
    int r = io_full(fd, ch, sizeof ch, 0, deadline);
    if (r == IO_CLOSED) return HS_RETRY;
    if (r == IO_TIMEOUT) {
        mpi_errorf(PRIM, "process %u: the meeting point %s:%s accepted the connection but sent "
                "no challenge within the timeout of %d ms (is it a Superstep process 0 of this "
                "version?)", pid, server, port, timeout_ms);
        return HS_FAILED;
    }
    if (memcmp(ch, MAGIC_CHALLENGE, 8) != 0) {
        mpi_errorf(PRIM, "process %u: the meeting point %s:%s is not a Superstep process 0 of "
                "this version (it sent no valid challenge)", pid, server, port);
        return HS_FAILED;
    }
    memcpy(nonce0, ch + 8, TCP_NONCE_BYTES);
    memcpy(hello, MAGIC_HELLO, 8);
    put32(hello + 8, pid);
    put32(hello + 12, nprocs);
    tcp_auth_random(noncek, TCP_NONCE_BYTES);
    memcpy(hello + 16, noncek, TCP_NONCE_BYTES);
    const struct tcp_part parts[] = { { nonce0, TCP_NONCE_BYTES }, { hello, HELLO_HEAD } };
    tcp_auth_mac(hello + HELLO_HEAD, key, LABEL_CLIENT, parts, 2);
    r = io_full(fd, hello, sizeof hello, 1, deadline);
    if (r == 0) r = io_full(fd, v, sizeof v, 0, deadline);
    if (r == IO_CLOSED) return HS_RETRY;
    if (r == IO_TIMEOUT) {
        mpi_errorf(PRIM, "process %u: process 0 at %s:%s did not answer within the timeout of "
                "%d ms", pid, server, port, timeout_ms);
        return HS_FAILED;
    }
    uint32_t status = get32(v), detail = get32(v + 4);
    if (status == V_AUTH_FAILED) {
        mpi_errorf(PRIM, "process %u: process 0 at %s:%s rejected us: authentication failed, "
                "the processes do not share the same secret (give all the same "
                "SUPERSTEP_TCP_SECRET, or the same secret file)", pid, server, port);
        return HS_FAILED;
    }
    unsigned char want[TCP_MAC_BYTES];
    verdict_mac(want, key, nonce0, hello, v);
    if (!tcp_auth_equal(want, v + 8)) {
        mpi_errorf(PRIM, "process %u: the process at the meeting point %s:%s could not prove "
                "that it knows the shared secret (another secret, or not process 0 of this job)",
                pid, server, port);
        return HS_FAILED;
    }
    switch (status) {
    case V_ACCEPTED:
        return HS_ACCEPTED;
    case V_DUPLICATE:
        mpi_errorf(PRIM, "process %u: process 0 has a process %u already: were two processes "
                "started with pid %u?", pid, pid, pid);
        return HS_FAILED;
    case V_NPROCS:
        mpi_errorf(PRIM, "process %u: process 0 says nprocs is %u, not %u", pid, detail, nprocs);
        return HS_FAILED;
    case V_PID:
        mpi_errorf(PRIM, "process %u: process 0 rejected pid %u (nprocs %u)", pid, pid, detail);
        return HS_FAILED;
    default:
        mpi_errorf(PRIM, "process %u: process 0 answered with an unknown verdict %u", pid, status);
        return HS_FAILED;
    }
}

/* ---- both ------------------------------------------------------------ */

lpf_err_t mpi_tcp_meet(const char *server, const char *port, int timeout_ms,
        lpf_pid_t pid, lpf_pid_t nprocs, MPI_Comm *comm, long *server_pid)
{
    *server_pid = 0;
    int inited_before = 0;
    MPI_Initialized(&inited_before);
    const int64_t t0 = now_ms();
    const int64_t deadline = t0 + (timeout_ms > 0 ? timeout_ms : 0);
    if (nprocs == 1) {
        if (mpi_init_if_needed(NULL) != LPF_SUCCESS) return LPF_ERR_FATAL;
        return MPI_Comm_dup(MPI_COMM_SELF, comm) == MPI_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL;
    }
    unsigned char key[TCP_KEY_BYTES];
    {
        char why[700];
        if (tcp_auth_key(key, why, sizeof why)) {
            mpi_errorf(PRIM, "process %u: %s", pid, why);
            return LPF_ERR_FATAL;
        }
    }
    struct member *m = NULL;
    unsigned char *msg = NULL;
    int fd = -1, lfd = -1;
    lpf_err_t rc = LPF_ERR_FATAL;
    char uri[1024] = "";
    char portname[MPI_MAX_PORT_NAME + 1] = "";
    long spid = 0;

    if (pid == 0) {
        m = malloc(nprocs * sizeof *m);
        if (!m) {
            rc = LPF_ERR_OUT_OF_MEMORY;
            goto out;
        }
        for (lpf_pid_t k = 0; k < nprocs; ++k) m[k].fd = -1;
        lfd = listen_on(server, port);
        if (lfd < 0) {
            mpi_errorf(PRIM, "process 0 cannot listen on %s:%s (%s)", server, port, strerror(errno));
            goto out;
        }
        struct server S;
        memset(&S, 0, sizeof S);
        S.key = key;
        S.nprocs = nprocs;
        S.arrived = 1;
        S.m = m;
        for (int i = 0; i < MAX_PENDING; ++i) S.p[i].fd = -1;
        if (gather(&S, lfd, server, port, timeout_ms, deadline)) goto out;
        close(lfd);
        lfd = -1;
        int inited = 0;
        MPI_Initialized(&inited);
#ifdef OPEN_MPI
        if (!inited && !getenv("OMPI_MCA_pmix_server_uri")) {
            spid = mpi_tcp_start_server(uri, sizeof uri);
            if (!spid)
                mpi_errorf(PRIM, "could not start ompi-server (needed by Open MPI to connect "
                        "independently started processes); trying without");
        }
#endif
        int ok = 0;
        if (mpi_init_if_needed(uri) == LPF_SUCCESS) {
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int orc = MPI_Open_port(MPI_INFO_NULL, portname);
            if (orc == MPI_SUCCESS) {
                ok = 1;
            } else {
                char es[MPI_MAX_ERROR_STRING] = "";
                int el = 0;
                MPI_Error_string(orc, es, &el);
                char *nl = strrchr(es, '\n');
                while (nl && nl[1] == '\0') { *nl = '\0'; nl = strrchr(es, '\n'); }
                nl = strrchr(es, '\n');
                mpi_errorf(PRIM, "MPI_Open_port failed: this MPI cannot connect independently "
                        "started processes (%s)", nl ? nl + 1 : es);
                portname[0] = '\0';
            }
        }
        if (!ok) uri[0] = '\0';
        /* the welcome, authenticated for each member */
        size_t ul = strlen(uri), pl = strlen(portname), len = WELCOME_HEAD + ul + pl;
        msg = malloc(len + TCP_MAC_BYTES);
        if (!msg) {
            rc = LPF_ERR_OUT_OF_MEMORY;
            goto out_port;
        }
        put32(msg, (uint32_t)ok);
        put32(msg + 4, (uint32_t)ul);
        put32(msg + 8, (uint32_t)pl);
        memcpy(msg + WELCOME_HEAD, uri, ul);
        memcpy(msg + WELCOME_HEAD + ul, portname, pl);
        for (lpf_pid_t k = 1; k < nprocs; ++k) {
            welcome_mac(msg + len, key, m[k].nonce0, m[k].noncek, msg, len);
            if (io_full(m[k].fd, msg, len + TCP_MAC_BYTES, 1, -1) && ok) {
                mpi_errorf(PRIM, "process 0: lost the connection to process %u", k);
                goto out_port;
            }
        }
        if (!ok) goto out;
        MPI_Comm group = MPI_COMM_SELF;
        for (lpf_pid_t k = 1; k < nprocs; ++k) {
            char go = 'g';
            if (io_full(m[k].fd, &go, 1, 1, -1) || grow(&group, portname, 0)) {
                mpi_errorf(PRIM, "process 0: connecting process %u over MPI failed%s", k,
                        connect_hint(inited_before));
                goto out_port;
            }
        }
        *comm = group;
        rc = LPF_SUCCESS;
out_port:
        if (ok) MPI_Close_port(portname);
        goto out;
    }

    /* pid > 0: reach process 0 and authenticate */
    unsigned char nonce0[TCP_NONCE_BYTES], noncek[TCP_NONCE_BYTES];
    for (;;) {
        fd = connect_once(server, port, deadline);
        if (fd >= 0) {
            int h = handshake(fd, key, pid, nprocs, server, port, timeout_ms, deadline,
                    nonce0, noncek);
            if (h == HS_ACCEPTED) break;
            if (h == HS_FAILED) goto out;
            close(fd);
            fd = -1;
        }
        if (now_ms() >= deadline) {
            mpi_errorf(PRIM, "process %u: could not reach process 0 at the meeting point "
                    "%s:%s within the timeout of %d ms", pid, server, port, timeout_ms);
            goto out;
        }
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
    }
    {
        /* process 0 answers once everybody has arrived */
        unsigned char head[WELCOME_HEAD], mac[TCP_MAC_BYTES];
        int r = io_full(fd, head, sizeof head, 0, deadline);
        if (r) {
            mpi_errorf(PRIM, "process %u: not all %u processes met at %s:%s within the "
                    "timeout of %d ms%s", pid, nprocs, server, port, timeout_ms,
                    r == IO_CLOSED ? " (process 0 closed the connection)" : "");
            goto out;
        }
        uint32_t ok = get32(head), ul = get32(head + 4), pl = get32(head + 8);
        if (ul >= sizeof uri || pl > MPI_MAX_PORT_NAME) {
            mpi_errorf(PRIM, "process %u: process 0 sent a malformed welcome", pid);
            goto out;
        }
        size_t len = WELCOME_HEAD + ul + pl;
        msg = malloc(len);
        if (!msg) {
            rc = LPF_ERR_OUT_OF_MEMORY;
            goto out;
        }
        memcpy(msg, head, WELCOME_HEAD);
        unsigned char want[TCP_MAC_BYTES];
        if (io_full(fd, msg + WELCOME_HEAD, ul + pl, 0, -1) || io_full(fd, mac, sizeof mac, 0, -1)) {
            mpi_errorf(PRIM, "process %u: lost the connection to process 0", pid);
            goto out;
        }
        welcome_mac(want, key, nonce0, noncek, msg, len);
        if (!tcp_auth_equal(want, mac)) {
            mpi_errorf(PRIM, "process %u: the welcome from process 0 failed authentication "
                    "(the connection was tampered with)", pid);
            goto out;
        }
        if (!ok) {
            mpi_errorf(PRIM, "process %u: process 0 could not set up MPI", pid);
            goto out;
        }
        memcpy(uri, msg + WELCOME_HEAD, ul);
        uri[ul] = '\0';
        memcpy(portname, msg + WELCOME_HEAD + ul, pl);
        portname[pl] = '\0';
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
            mpi_errorf(PRIM, "process %u: connecting to process 0 over MPI failed%s", pid,
                    connect_hint(inited_before));
            goto out;
        }
        for (lpf_pid_t k = pid + 1; k < nprocs; ++k)
            if (grow(&group, portname, 0)) {
                mpi_errorf(PRIM, "process %u: connecting process %u over MPI failed%s", pid, k,
                        connect_hint(inited_before));
                goto out;
            }
        *comm = group;
        rc = LPF_SUCCESS;
    }
out:
    tcp_auth_wipe(key, sizeof key);
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
    if (m) {
        for (lpf_pid_t k = 0; k < nprocs; ++k)
            if (m[k].fd >= 0) close(m[k].fd);
        free(m);
    }
    free(msg);
    return rc;
}
