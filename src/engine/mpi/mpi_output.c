/*
 * Whole output lines on the MPI and hybrid engines.
 *
 * An MPI launcher forwards each rank's output in the chunks it happens to
 * read, so lines of different ranks get cut into each other. When bsprun
 * asks for it (SUPERSTEP_OUTPUT_OUT / _ERR: paths through which its own
 * pipes to the terminal can be opened, SUPERSTEP_OUTPUT_HOST: the host they
 * are on), a rank on that host, before MPI starts, points its stdout and
 * stderr at pipes of its own and forks a forwarder that reads them and
 * writes whole lines to bsprun's pipes: batches of complete lines, one
 * write each, under an exclusive flock of the pipe, so that no other
 * rank's writing comes in between. With SUPERSTEP_TAG_OUTPUT=1 each line
 * starts with "[pids] ", the BSP pids of the rank; on a hybrid rank the
 * threads tag the lines they print through stdio with their own pid
 * (src/core/output.c) and mark them: such a line only loses its mark. The
 * forwarder ends when
 * the rank and everything that inherited its stdout and stderr have closed
 * them; what is left without a newline at the end is written with one
 * added where the job has more than one rank (or lines are tagged), else
 * as it is. Ranks elsewhere (or where anything fails) print through the
 * launcher; with --tag-output bsprun has Open MPI tag their lines and makes
 * the tags its own (SUPERSTEP_OUTPUT_MARKED=launcher: a hybrid rank's
 * threads mark their tagged lines there too, and the filter takes the mark
 * after the launcher's tag for the thread's).
 */
#define _GNU_SOURCE
#include "mpi_internal.h"
#include "../../core/output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define FWD_CHUNK 65536

struct stream {
    int in, out;
    char *buf;
    size_t n, cap;
};


/* the first mark (output.h) in p[1, n), or NULL */
static const char *mark_in(const char *p, size_t n)
{
    return n > 1 ? memmem(p + 1, n - 1, SSTEP_OUT_MARK, SSTEP_OUT_MARK_LEN) : NULL;
}

/* write lines [0, end) of s->buf (with the tag before each), keep the rest.
 * Marks: a line that starts with one was tagged by its thread (output.c:
 * the threads of a hybrid rank), it only loses the mark; a mark inside a
 * line starts a new one. */
static void emit(struct stream *s, size_t end, const char *tag, size_t taglen, int marks)
{
    if (end == 0) return;
    static char out[FWD_CHUNK + 256];
    flock(s->out, LOCK_EX);
    size_t o = 0, i = 0;
    while (i < end) {
        const char *t = tag;
        size_t tl = taglen;
        if (marks && end - i >= SSTEP_OUT_MARK_LEN
                && memcmp(s->buf + i, SSTEP_OUT_MARK, SSTEP_OUT_MARK_LEN) == 0) {
            i += SSTEP_OUT_MARK_LEN;
            t = "";
            tl = 0;
            if (i == end) break;
        }
        const char *nl = memchr(s->buf + i, '\n', end - i);
        size_t len = nl ? (size_t)(nl - (s->buf + i)) + 1 : end - i;
        const char *mk = marks ? mark_in(s->buf + i, len) : NULL;
        size_t add = 0;
        if (mk) {
            len = (size_t)(mk - (s->buf + i));
            add = 1;
        }
        if (o + tl + len + add > sizeof out) {
            sstep_write_all(s->out, out, o);
            o = 0;
        }
        if (tl + len + add > sizeof out) {   /* one very long line */
            sstep_write_all(s->out, t, tl);
            sstep_write_all(s->out, s->buf + i, len);
            if (add) sstep_write_all(s->out, "\n", 1);
        } else {
            memcpy(out + o, t, tl);
            memcpy(out + o + tl, s->buf + i, len);
            o += tl + len;
            if (add) out[o++] = '\n';
        }
        i += len;
    }
    sstep_write_all(s->out, out, o);
    flock(s->out, LOCK_UN);
    memmove(s->buf, s->buf + end, s->n - end);
    s->n -= end;
}

static int several_ranks(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (!v) v = getenv("PMI_SIZE");
    return v && atol(v) > 1;
}

static SSTEP_NORETURN void forward(struct stream *st, const char *tag, int marks)
{
    const size_t taglen = strlen(tag);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int open_n = 2;
    while (open_n) {
        struct pollfd pf[2];
        int np = 0, idx[2];
        for (int k = 0; k < 2; ++k)
            if (st[k].in >= 0) {
                pf[np].fd = st[k].in;
                pf[np].events = POLLIN;
                idx[np++] = k;
            }
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int j = 0; j < np; ++j) {
            if (!pf[j].revents) continue;
            struct stream *s = &st[idx[j]];
            if (s->cap - s->n < 4096) {
                size_t nc = s->cap * 2;
                char *nb = realloc(s->buf, nc);
                if (nb) {
                    s->buf = nb;
                    s->cap = nc;
                } else {
                    emit(s, s->n, tag, taglen, marks);   /* no memory: as it is */
                }
            }
            ssize_t k = read(s->in, s->buf + s->n, s->cap - s->n);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                /* an unterminated last line ends with a newline where other
                 * processes print too (it would run into their lines) */
                if (s->n && s->buf[s->n - 1] != '\n' && (taglen || several_ranks())
                        && s->n < s->cap)
                    s->buf[s->n++] = '\n';
                emit(s, s->n, tag, taglen, marks);
                close(s->in);
                s->in = -1;
                open_n--;
                continue;
            }
            s->n += (size_t)k;
            /* whole lines now; a line longer than 1 MiB goes in pieces */
            size_t end = 0;
            for (size_t i = s->n; i > 0; --i)
                if (s->buf[i - 1] == '\n') {
                    end = i;
                    break;
                }
            if (end == 0 && s->n >= (1u << 20)) end = s->n;
            emit(s, end, tag, taglen, marks);
        }
    }
    _exit(0);
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end == '\0' ? x : dflt;
}

/* Descriptors 0, 1 and 2 are never left closed (a launcher started with
 * one of them closed, bsprun <&-): /dev/null goes there before MPI starts,
 * so that no socket or file of MPI's or ours can take their place -- a
 * program reading its standard input would read MPI's traffic. */
static void std_fds_open(void)
{
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

/* 1: the rank's output goes through a forwarder of its own */
static int forwarder_start(int hybrid)
{
    const char *host = getenv("SUPERSTEP_OUTPUT_HOST");
    const char *po = getenv("SUPERSTEP_OUTPUT_OUT");
    const char *pe = getenv("SUPERSTEP_OUTPUT_ERR");
    if (!host || !po || !pe || !*po || !*pe) return 0;
    char me[256];
    if (gethostname(me, sizeof me) != 0) return 0;
    me[sizeof me - 1] = '\0';
    if (strcmp(me, host) != 0) return 0;
    /* (no reader, or not ours: print through the launcher) */
    int out = open(po, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    int err = out >= 0 ? open(pe, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    int p1[2] = { -1, -1 }, p2[2] = { -1, -1 };
    if (err < 0 || pipe2(p1, O_CLOEXEC) || pipe2(p2, O_CLOEXEC)) goto fail;
    fcntl(out, F_SETFL, fcntl(out, F_GETFL) & ~O_NONBLOCK);
    fcntl(err, F_SETFL, fcntl(err, F_GETFL) & ~O_NONBLOCK);

    /* the tag: this rank's BSP pids */
    char tag[64] = "";
    const char *t = getenv("SUPERSTEP_TAG_OUTPUT");
    const int tagged = t && strcmp(t, "1") == 0;
    if (tagged) {
        long r = env_long("OMPI_COMM_WORLD_RANK", -1);
        if (r < 0) r = env_long("PMIX_RANK", -1);
        if (r < 0) r = env_long("PMI_RANK", -1);
        long T = hybrid ? env_long("SUPERSTEP_HYBRID_THREADS", 1) : 1;
        long P = env_long("LPF_MAX_PROCS", 0);
        if (T < 1) T = 1;
        long lo = r * T, hi = lo + T - 1;
        if (P > 0 && hi > P - 1) hi = P - 1;
        if (r < 0) snprintf(tag, sizeof tag, "[?] ");
        else if (hi > lo) snprintf(tag, sizeof tag, "[%ld-%ld] ", lo, hi);
        else snprintf(tag, sizeof tag, "[%ld] ", lo);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t c = fork();
    if (c < 0) goto fail;
    if (c == 0) {
        struct stream st[2] = {
            { p1[0], out, malloc(FWD_CHUNK), 0, FWD_CHUNK },
            { p2[0], err, malloc(FWD_CHUNK), 0, FWD_CHUNK },
        };
        if (!st[0].buf || !st[1].buf) _exit(1);
        close(p1[1]);
        close(p2[1]);
        /* hold nothing of the rank's (the launcher's sockets, stdin) but
         * the launcher's stdout and stderr: Open MPI takes their end for
         * the rank's end and drops what it has not yet delivered to the
         * rank's stdin */
        long maxfd = sysconf(_SC_OPEN_MAX);
        if (maxfd < 0 || maxfd > 65536) maxfd = 65536;
        for (int fd = 0; fd < maxfd; ++fd)
            if (fd != 1 && fd != 2 && fd != p1[0] && fd != p2[0] && fd != out && fd != err)
                close(fd);
        forward(st, tag, tagged && hybrid);
    }
    dup2(p1[1], 1);
    dup2(p2[1], 2);
    /* a hybrid rank's threads tag their lines themselves (output.c) */
    if (tagged && hybrid) {
        sstep_out_mark_fd(1);
        sstep_out_mark_fd(2);
    }
    /* the launcher gave stdout a terminal (Open MPI: a pty), so stdio
     * wrote it line by line: keep that (progress shows at once, and a
     * line printed before a crash is not lost in a buffer) */
    setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
    close(p1[0]);
    close(p1[1]);
    close(p2[0]);
    close(p2[1]);
    close(out);
    close(err);
    return 1;
fail:
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    for (int k = 0; k < 2; ++k) {
        if (p1[k] >= 0) close(p1[k]);
        if (p2[k] >= 0) close(p2[k]);
    }
    return 0;
}

void mpi_output_start(int hybrid)
{
    std_fds_open();
    if (forwarder_start(hybrid)) return;
    /* Through the launcher: where bsprun has Open MPI tag the lines it
     * forwards and makes the tags its own (its filter takes a mark after
     * the launcher's tag for the thread's tag), a hybrid rank's threads tag
     * their lines themselves too */
    const char *t = getenv("SUPERSTEP_TAG_OUTPUT");
    const char *m = getenv("SUPERSTEP_OUTPUT_MARKED");
    if (hybrid && t && strcmp(t, "1") == 0 && m && strcmp(m, "launcher") == 0) {
        sstep_out_mark_fd(1);
        sstep_out_mark_fd(2);
    }
}
