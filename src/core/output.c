/*
 * Lines tagged with the BSP pid of the thread that printed them.
 *
 * On the pthread engine every BSP process is a thread of one OS process,
 * so whatever reads its stdout cannot tell the processes apart. With
 * bsprun --tag-output (SUPERSTEP_TAG_OUTPUT=threads, and in
 * SUPERSTEP_OUTPUT_MARKED the inodes of the two pipes to bsprun's filter
 * that are the program's stdout and stderr), and on a hybrid rank whose
 * stdout and stderr are the MPI engine's forwarder pipes with tagging on
 * (mpi_output.c), the library, while at least one thread runs a BSP
 * process, replaces stdout and stderr (the FILE pointers) by unbuffered
 * streams of its own (fopencookie). Their write function runs in the
 * printing thread: it keeps that thread's unterminated line and writes each
 * complete line, as "MARK[pid] line", to the descriptor in one write(2)
 * (under the stream's lock: the lines of different threads never mix).
 * The reader strips the mark and adds no tag of its own to such a line; a
 * mark inside a line (after raw output without its newline) starts a new
 * line. When the thread leaves its process, its unterminated lines are
 * written with a newline added; when the last one has left, the streams
 * are the program's own again. Threads that run no BSP process (main
 * outside a section, the program's own threads) print through the same
 * streams unchanged and unmarked, and what is written to descriptors 1 and
 * 2 directly (write(2), child programs) passes by the library: the reader
 * gives those lines its own tag (all pids of the OS process); so does
 * C++'s std::cout, whose buffer holds on to the FILE that stdout was when
 * the program started. Without tagging nothing here runs but a check of
 * one flag.
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* a line without its newline this long goes out in pieces of this size */
#define OUT_LONG (1u << 20)

struct mpipe {
    int set;
    int bydev;    /* the file (any kind) on dev, ino; else a pipe ino */
    dev_t dev;
    ino_t ino;
};
static struct mpipe marked[2];        /* stdout, stderr */
static pthread_once_t out_once = PTHREAD_ONCE_INIT;
static int out_on;                     /* bit k: descriptor k + 1 may be tagged */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int out_users;                  /* threads that run a BSP process */
static FILE *out_orig[2], *out_ck[2];

struct tbuf {
    char *p;
    size_t n, cap;
};
static _Thread_local struct {
    long tag;
    unsigned depth;
    char tagstr[32];
    size_t taglen;
    struct tbuf b[2], o;
} me = { -1, 0, "", 0, { { NULL, 0, 0 }, { NULL, 0, 0 } }, { NULL, 0, 0 } };

void sstep_out_mark_fd(int fd)
{
    struct stat st;
    if ((fd != 1 && fd != 2) || fstat(fd, &st) != 0) return;
    marked[fd - 1] = (struct mpipe){ 1, 1, st.st_dev, st.st_ino };
}

static int is_marked(int k)
{
    struct stat st;
    if (!marked[k].set || fstat(k + 1, &st) != 0) return 0;
    if (marked[k].bydev) return st.st_dev == marked[k].dev && st.st_ino == marked[k].ino;
    return S_ISFIFO(st.st_mode) && st.st_ino == marked[k].ino;
}

static void out_init(void)
{
    const char *t = getenv("SUPERSTEP_TAG_OUTPUT");
    const char *m = getenv("SUPERSTEP_OUTPUT_MARKED");
    if (t && strcmp(t, "threads") == 0 && m) {
        char *end;
        unsigned long long a = strtoull(m, &end, 10);
        unsigned long long b = strtoull(end, &end, 10);
        if (a && b && *end == '\0') {
            marked[0] = (struct mpipe){ 1, 0, 0, (ino_t)a };
            marked[1] = (struct mpipe){ 1, 0, 0, (ino_t)b };
        }
    }
    for (int k = 0; k < 2; ++k)
        if (marked[k].set) out_on |= 1 << k;
}

void sstep_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;   /* nobody reads any more: drop */
        p += k;
        n -= (size_t)k;
    }
}

static int reserve(struct tbuf *b, size_t more)
{
    if (b->n + more <= b->cap) return 0;
    size_t c = b->cap ? b->cap : 256;
    while (c < b->n + more) c *= 2;
    char *q = realloc(b->p, c);
    if (!q) return -1;
    b->p = q;
    b->cap = c;
    return 0;
}

/* the lines of b[0, end) to descriptor k + 1, marked and tagged, in one
 * write; a last piece without its newline gets one */
static void emit(int k, size_t end)
{
    struct tbuf *b = &me.b[k];
    struct tbuf *o = &me.o;
    o->n = 0;
    size_t i = 0;
    while (i < end) {
        const char *nl = memchr(b->p + i, '\n', end - i);
        size_t len = nl ? (size_t)(nl - (b->p + i)) + 1 : end - i;
        size_t need = SSTEP_OUT_MARK_LEN + me.taglen + len + 1;
        if (reserve(o, need) != 0) {   /* no memory: the line as it is */
            sstep_write_all(k + 1, o->p, o->n);
            o->n = 0;
            sstep_write_all(k + 1, b->p + i, len);
            if (!nl) sstep_write_all(k + 1, "\n", 1);
            i += len;
            continue;
        }
        memcpy(o->p + o->n, SSTEP_OUT_MARK, SSTEP_OUT_MARK_LEN);
        memcpy(o->p + o->n + SSTEP_OUT_MARK_LEN, me.tagstr, me.taglen);
        memcpy(o->p + o->n + SSTEP_OUT_MARK_LEN + me.taglen, b->p + i, len);
        o->n += need - 1;
        if (!nl) o->p[o->n++] = '\n';
        i += len;
    }
    sstep_write_all(k + 1, o->p, o->n);
    memmove(b->p, b->p + end, b->n - end);
    b->n -= end;
}

static ssize_t ck_write(void *cookie, const char *p, size_t n)
{
    const int k = (int)(intptr_t)cookie;
    if (me.depth == 0) {   /* no BSP process: as it is */
        sstep_write_all(k + 1, p, n);
        return (ssize_t)n;
    }
    struct tbuf *b = &me.b[k];
    if (reserve(b, n) != 0) {
        if (b->n) emit(k, b->n);
        sstep_write_all(k + 1, p, n);
        return (ssize_t)n;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    size_t end = b->n;
    while (end > 0 && b->p[end - 1] != '\n') --end;
    if (end == 0 && b->n >= OUT_LONG) end = b->n;
    if (end) emit(k, end);
    if (b->n == 0 && b->cap > 65536) {   /* after a long line: not kept */
        free(b->p);
        *b = (struct tbuf){ NULL, 0, 0 };
    }
    return (ssize_t)n;
}

/* (stdio's own stdout and stderr are never closed: nor are these) */
static int ck_close(void *cookie)
{
    (void)cookie;
    return 0;
}

static void install(void)
{
    static const cookie_io_functions_t io = { NULL, ck_write, NULL, ck_close };
    for (int k = 0; k < 2; ++k) {
        /* (still the reader's: not where the program has put a file of
         * its own on the descriptor since) */
        if (!(out_on & (1 << k)) || !is_marked(k)) continue;
        if (!out_ck[k]) {
            out_ck[k] = fopencookie((void *)(intptr_t)k, "w", io);
            if (!out_ck[k]) continue;
            setvbuf(out_ck[k], NULL, _IONBF, 0);
        }
        /* what main printed before: first */
        FILE *cur = k ? stderr : stdout;
        fflush(cur);
        out_orig[k] = cur;
        if (k) stderr = out_ck[k];
        else stdout = out_ck[k];
    }
}

static void restore(void)
{
    for (int k = 0; k < 2; ++k) {
        if (!out_orig[k]) continue;
        if (k) stderr = out_orig[k];
        else stdout = out_orig[k];
        out_orig[k] = NULL;
    }
}

long sstep_out_tag(void)
{
    return me.depth ? me.tag : -1;
}

void sstep_out_enter(long tag)
{
    pthread_once(&out_once, out_init);
    if (!out_on) return;
    if (me.depth++) return;
    me.tag = tag;
    int w = snprintf(me.tagstr, sizeof me.tagstr, "[%ld] ", tag);
    me.taglen = w > 0 && (size_t)w < sizeof me.tagstr ? (size_t)w : 0;
    pthread_mutex_lock(&out_lock);
    if (out_users++ == 0) install();
    pthread_mutex_unlock(&out_lock);
}

static void flush_self(void)
{
    for (int k = 0; k < 2; ++k) {
        struct tbuf *b = &me.b[k];
        if (!b->n) continue;
        if (out_ck[k]) flockfile(out_ck[k]);
        emit(k, b->n);
        if (out_ck[k]) funlockfile(out_ck[k]);
    }
}

void sstep_out_flush_self(void)
{
    if (me.depth) flush_self();
}

void sstep_out_leave(void)
{
    if (!me.depth) return;
    if (--me.depth) return;
    me.depth = 1;   /* (the thread's lines still tagged) */
    flush_self();
    me.depth = 0;
    for (int k = 0; k < 2; ++k) {
        free(me.b[k].p);
        me.b[k] = (struct tbuf){ NULL, 0, 0 };
    }
    free(me.o.p);
    me.o = (struct tbuf){ NULL, 0, 0 };
    me.tag = -1;
    pthread_mutex_lock(&out_lock);
    if (--out_users == 0) restore();
    pthread_mutex_unlock(&out_lock);
}
