/*
 * tcp_hostile HOST PORT MODE [PID NPROCS | COUNT]
 *
 * A client that does not hold the meeting's secret, for the tests of the TCP
 * meeting point of lpf_mpi_initialize_over_tcp (tcp.sh):
 *
 *   impostor  reads the challenge and answers with a hello of the current
 *             format claiming to be PID of NPROCS, whose MAC is made up
 *   forged    sends at once the unauthenticated 16-byte hello of old
 *             {magic, PID, NPROCS}, as an attacker who read the old code
 *   garbage   sends 300 bytes of junk (an HTTP request, then bytes)
 *   slow      sends 2 bytes, then idles
 *   scan      connects and closes COUNT times (a port scan)
 *
 * It prints "ready" once it has said its piece (the driver then starts the
 * real processes), then reads until process 0 closes the connection (60 s
 * at most) and checks what it got: after the 40-byte challenge, at most a
 * 40-byte verdict without text; any text (an MPI port name, an ompi-server
 * address) is a leak. Exit status 0 if it learnt nothing, 1 on a leak, 2 if
 * it could not even connect.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHALLENGE_LEN 40
#define VERDICT_LEN 40
#define HELLO_LEN 80

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int connect_to(const char *host, const char *port, double patience)
{
    double until = now() + patience;
    for (;;) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(host, port, &hints, &res) == 0) {
            for (struct addrinfo *a = res; a; a = a->ai_next) {
                int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
                if (fd < 0) continue;
                if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                    freeaddrinfo(res);
                    return fd;
                }
                close(fd);
            }
            freeaddrinfo(res);
        }
        if (now() > until) return -1;
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static void junk(unsigned char *p, size_t n)
{
    static unsigned s = 12345;
    s ^= (unsigned)getpid() * 2654435761u ^ (unsigned)(now() * 1e6);
    for (size_t i = 0; i < n; ++i) {
        s = s * 1103515245u + 12345u;
        p[i] = (unsigned char)(s >> 16);
    }
}

/* everything until the peer closes (or `secs` pass); returns the length */
static size_t drain(int fd, unsigned char *buf, size_t cap, double secs, double *closed_after)
{
    size_t n = 0;
    double t0 = now(), until = t0 + secs;
    for (;;) {
        int left = (int)((until - now()) * 1000);
        if (left <= 0) break;
        struct pollfd pf = { fd, POLLIN, 0 };
        int r = poll(&pf, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        unsigned char tmp[4096];
        ssize_t k = recv(fd, tmp, sizeof tmp, 0);
        if (k <= 0) {
            *closed_after = now() - t0;
            return n;
        }
        size_t c = (size_t)k < cap - n ? (size_t)k : cap - n;
        memcpy(buf + n, tmp, c);
        n += c;
        /* more than a challenge and a verdict: a leak; see what else comes for 1 s */
        if (n > CHALLENGE_LEN + VERDICT_LEN && until > now() + 1.0) until = now() + 1.0;
    }
    *closed_after = -1;
    return n;
}

/* the longest run of printable characters */
static size_t longest_text(const unsigned char *p, size_t n)
{
    size_t best = 0, run = 0;
    for (size_t i = 0; i < n; ++i) {
        run = (p[i] >= 0x20 && p[i] < 0x7f) ? run + 1 : 0;
        if (run > best) best = run;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: tcp_hostile HOST PORT impostor|forged|garbage|slow|scan "
                "[PID NPROCS | COUNT]\n");
        return 2;
    }
    const char *host = argv[1], *port = argv[2], *mode = argv[3];
    uint32_t pid = argc > 4 ? (uint32_t)atoi(argv[4]) : 1;
    uint32_t nprocs = argc > 5 ? (uint32_t)atoi(argv[5]) : 2;

    if (strcmp(mode, "scan") == 0) {
        int count = argc > 4 ? atoi(argv[4]) : 200, done = 0;
        for (int i = 0; i < count; ++i) {
            int fd = connect_to(host, port, i ? 0.5 : 10.0);
            if (fd < 0) break;
            close(fd);
            if (++done == count / 4) {
                printf("ready\n");
                fflush(stdout);
            }
        }
        printf("scan: %d connections opened and closed\n", done);
        return done > 0 ? 0 : 2;
    }

    int fd = connect_to(host, port, 10.0);
    if (fd < 0) {
        printf("%s: cannot connect to %s:%s\n", mode, host, port);
        return 2;
    }
    static unsigned char got[1 << 16];
    size_t n = 0;
    if (strcmp(mode, "impostor") == 0) {
        /* the challenge, then a hello whose MAC is made up */
        struct pollfd pf = { fd, POLLIN, 0 };
        while (n < CHALLENGE_LEN && poll(&pf, 1, 5000) == 1) {
            ssize_t k = recv(fd, got + n, CHALLENGE_LEN - n, 0);
            if (k <= 0) break;
            n += (size_t)k;
        }
        unsigned char h[HELLO_LEN];
        memcpy(h, "SSTCP2h", 8);
        put32(h + 8, pid);
        put32(h + 12, nprocs);
        junk(h + 16, sizeof h - 16);
        if (send(fd, h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) perror("send");
    } else if (strcmp(mode, "forged") == 0) {
        struct { uint64_t magic; uint32_t pid, nprocs; } h = { 0x5353544350ull, pid, nprocs };
        if (send(fd, &h, sizeof h, MSG_NOSIGNAL) != (ssize_t)sizeof h) perror("send");
    } else if (strcmp(mode, "garbage") == 0) {
        unsigned char g[300];
        const char *http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        junk(g, sizeof g);
        memcpy(g, http, strlen(http));
        if (send(fd, g, sizeof g, MSG_NOSIGNAL) < 0) perror("send");
    } else if (strcmp(mode, "slow") == 0) {
        if (send(fd, "SS", 2, MSG_NOSIGNAL) != 2) perror("send");
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("ready\n");
    fflush(stdout);
    double closed = -1;
    n += drain(fd, got + n, sizeof got - n, 60.0, &closed);
    close(fd);

    const unsigned char *rest = got;
    size_t rl = n;
    if (n >= CHALLENGE_LEN && memcmp(got, "SSTCP2c", 8) == 0) {
        rest += CHALLENGE_LEN;
        rl -= CHALLENGE_LEN;
    }
    size_t text = longest_text(rest, rl);
    int leak = rl > VERDICT_LEN || text >= 8;
    printf("%s: received %zu bytes (%zu after the challenge, longest text %zu), connection "
            "closed by process 0 %s%.1f s after our hello: %s\n", mode, n, rl, text,
            closed < 0 ? "never, gave up after " : "", closed < 0 ? 60.0 : closed,
            leak ? "LEAK: it learnt something about the job" : "no MPI port or address learnt");
    if (leak && text) {
        printf("%s: what it received: ", mode);
        for (size_t i = 0; i < rl; ++i)
            putchar(rest[i] >= 0x20 && rest[i] < 0x7f ? rest[i] : '.');
        putchar('\n');
    }
    return leak ? 1 : 0;
}
