/*
 * The saved machine parameters (written by `bspprobe --save`) and how g and
 * l are read from them. Pure functions of their arguments: machine.c uses
 * them for lpf_probe, and the probe tool uses the very same code to predict
 * costs, so the probe's predictions are exactly what lpf_probe returns.
 *
 * File format: one row per line, "engine p msg_size g l", where g is in
 * seconds per byte and l in seconds for a superstep on p processes in which
 * every message is at least msg_size bytes. '#' starts a comment line.
 *
 * Lookup for a query (p', m) among the rows of one engine:
 *  - p: the smallest measured p >= p' (costs grow with p, so this is the
 *    conservative choice); beyond the largest measured p, the largest (the
 *    caller scales it, see machine.c).
 *  - m (m = 0 counts as 1): between two measured sizes m_i <= m < m_j,
 *    g and l are interpolated linearly in 1/m, i.e. along the model
 *    g(m) = g_byte + o_msg/m through the two rows (exact at the rows);
 *    above the largest size, the largest size's row; below the smallest
 *    size m_0, g = g_0 * m_0 / m (all of a small message's cost counted as
 *    per-message cost: an upper bound) and l = l_0.
 * Results are finite and > 0 whenever the rows are (parsing guarantees it:
 * every value lies in the ranges below, so no interpolation or scaling
 * overflows).
 *
 * Reading is bounded: the file must be a regular file of at most
 * SSTEP_PARAM_MAX_BYTES (a FIFO, a device such as /dev/zero or a huge file
 * is refused without blocking), and a line longer than
 * SSTEP_PARAM_LINE_MAX - 2 characters is rejected.
 */
#ifndef SSTEP_MACHINE_PARAMS_H
#define SSTEP_MACHINE_PARAMS_H

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SSTEP_PARAM_ENGINE_LEN 16
#define SSTEP_PARAM_MAX_BYTES (1L << 20)
#define SSTEP_PARAM_LINE_MAX 512
/* the values a row may hold (seconds per byte, seconds, bytes, processes) */
#define SSTEP_PARAM_G_MIN 1e-15
#define SSTEP_PARAM_G_MAX 1e3
#define SSTEP_PARAM_L_MIN 1e-10
#define SSTEP_PARAM_L_MAX 1e6
#define SSTEP_PARAM_M_MAX 1e15
#define SSTEP_PARAM_P_MAX (1u << 24)

struct sstep_param_row {
    char engine[SSTEP_PARAM_ENGINE_LEN];
    unsigned p;
    double m;   /* message size in bytes, >= 1 */
    double g;   /* seconds per byte, finite > 0 */
    double l;   /* seconds, finite > 0 */
};

/* Where the file is: $SUPERSTEP_PARAMS, else $HOME/.superstep/params.txt.
 * Returns buf, or NULL when neither variable is set. */
static inline const char *sstep_param_path(char *buf, size_t len)
{
    const char *env = getenv("SUPERSTEP_PARAMS");
    if (env && *env) { snprintf(buf, len, "%s", env); return buf; }
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    snprintf(buf, len, "%s/.superstep/params.txt", home);
    return buf;
}

/* Check one line. Returns 1 for a valid row, 0 for a comment or a blank,
 * -1 for a line that is not a valid row: then *why (when why is not NULL)
 * says what is wrong with it. */
static inline int sstep_param_check(const char *line, struct sstep_param_row *r,
        char *why, size_t whylen)
{
#define SSTEP_PARAM_BAD(...) do { if (why) snprintf(why, whylen, __VA_ARGS__); return -1; } while (0)
    while (*line == ' ' || *line == '\t' || *line == '\r') ++line;
    if (*line == '#' || *line == '\0' || *line == '\n') return 0;
    if (!memchr(line, '\n', strnlen(line, SSTEP_PARAM_LINE_MAX))
            && strnlen(line, SSTEP_PARAM_LINE_MAX) >= SSTEP_PARAM_LINE_MAX - 1)
        SSTEP_PARAM_BAD("longer than %d characters", SSTEP_PARAM_LINE_MAX - 2);
    struct sstep_param_row x;
    char tail[2], pbuf[24];
    int n = sscanf(line, "%15s %23s %lf %lf %lf %1s", x.engine, pbuf, &x.m, &x.g, &x.l, tail);
    if (n != 5)
        SSTEP_PARAM_BAD("not a row \"engine p msg_size g l\" (%s)",
                n > 5 ? "more than five fields" : "fewer than five fields or a field is not a number");
    for (const char *c = x.engine; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
                || *c == '_' || *c == '-'))
            SSTEP_PARAM_BAD("engine name '%s' has a character other than letters, digits, '_' "
                    "and '-'", x.engine);
    char *end;
    errno = 0;
    unsigned long pv = strtoul(pbuf, &end, 10);
    if (*end || pbuf[0] == '-' || errno || pv == 0 || pv > SSTEP_PARAM_P_MAX)
        SSTEP_PARAM_BAD("p = %s is not a number of processes from 1 to %u", pbuf,
                SSTEP_PARAM_P_MAX);
    x.p = (unsigned)pv;
    if (!isfinite(x.m) || x.m < 0 || x.m > SSTEP_PARAM_M_MAX)
        SSTEP_PARAM_BAD("msg_size = %g is not a size from 0 to %g bytes", x.m, SSTEP_PARAM_M_MAX);
    if (!isfinite(x.g) || !(x.g >= SSTEP_PARAM_G_MIN) || x.g > SSTEP_PARAM_G_MAX)
        SSTEP_PARAM_BAD("g = %g s/byte is outside [%g, %g]", x.g, SSTEP_PARAM_G_MIN,
                SSTEP_PARAM_G_MAX);
    if (!isfinite(x.l) || !(x.l >= SSTEP_PARAM_L_MIN) || x.l > SSTEP_PARAM_L_MAX)
        SSTEP_PARAM_BAD("l = %g s is outside [%g, %g]", x.l, SSTEP_PARAM_L_MIN,
                SSTEP_PARAM_L_MAX);
#undef SSTEP_PARAM_BAD
    if (x.m < 1) x.m = 1;
    *r = x;
    return 1;
}

/* Parse one line. Returns 1 for a valid row, 0 for anything else. */
static inline int sstep_param_parse(const char *line, struct sstep_param_row *r)
{
    return sstep_param_check(line, r, NULL, 0) == 1;
}

/* The whole file, read without blocking and within bounds: a NUL-terminated
 * malloc'd copy (*len bytes), or NULL with *why saying why (errno_out: the
 * errno of a failed open, 0 for a file refused for what it is). */
static inline char *sstep_param_slurp(const char *path, size_t *len, int *errno_out,
        char *why, size_t whylen)
{
    *errno_out = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *errno_out = errno;
        snprintf(why, whylen, "cannot open it: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "not a regular file (a FIFO, a device or a directory)");
        close(fd);
        return NULL;
    }
    if (st.st_size > SSTEP_PARAM_MAX_BYTES) {
        snprintf(why, whylen, "%lld bytes, larger than the %ld a parameter file may have",
                (long long)st.st_size, SSTEP_PARAM_MAX_BYTES);
        close(fd);
        return NULL;
    }
    char *buf = (char *)malloc((size_t)SSTEP_PARAM_MAX_BYTES + 2);
    if (!buf) {
        snprintf(why, whylen, "out of memory");
        close(fd);
        return NULL;
    }
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, buf + n, (size_t)SSTEP_PARAM_MAX_BYTES + 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            snprintf(why, whylen, "cannot read it: %s", strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (k == 0) break;
        n += (size_t)k;
        if (n > (size_t)SSTEP_PARAM_MAX_BYTES) {
            snprintf(why, whylen, "larger than the %ld bytes a parameter file may have",
                    SSTEP_PARAM_MAX_BYTES);
            free(buf);
            close(fd);
            return NULL;
        }
    }
    close(fd);
    if (memchr(buf, '\0', n)) {
        snprintf(why, whylen, "not a text file (it holds NUL bytes)");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The next line of a slurped file into line[SSTEP_PARAM_LINE_MAX] (a longer
 * line is cut there without its newline, which sstep_param_check rejects);
 * advances *pos. Returns 0 at the end. */
static inline int sstep_param_line(const char *buf, size_t len, size_t *pos, char *line)
{
    if (*pos >= len) return 0;
    const char *s = buf + *pos;
    const char *nl = (const char *)memchr(s, '\n', len - *pos);
    size_t k = nl ? (size_t)(nl - s) + 1 : len - *pos;
    size_t c = k < SSTEP_PARAM_LINE_MAX - 1 ? k : SSTEP_PARAM_LINE_MAX - 1;
    memcpy(line, s, c);
    line[c] = '\0';
    *pos += k;
    return 1;
}

/* A bounded "# r ENGINE P FLOPS" value: flop/s from 1 to 1e21 */
static inline int sstep_param_r_ok(double r)
{
    return isfinite(r) && r >= 1.0 && r <= 1e21;
}

static inline int sstep_param_before(const struct sstep_param_row *a,
        const struct sstep_param_row *b)
{
    int c = strcmp(a->engine, b->engine);
    if (c) return c < 0;
    if (a->p != b->p) return a->p < b->p;
    return a->m < b->m;
}

/* Sort rows by (engine, p, m) and drop duplicates of a key, keeping the one
 * that came last in the input (a later save overrides). Returns the new count. */
static inline size_t sstep_param_normalize(struct sstep_param_row *rows, size_t n)
{
    /* stable insertion sort: tables are small */
    for (size_t i = 1; i < n; ++i) {
        struct sstep_param_row x = rows[i];
        size_t j = i;
        while (j > 0 && sstep_param_before(&x, &rows[j - 1])) {
            rows[j] = rows[j - 1];
            --j;
        }
        rows[j] = x;
    }
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
        if (out > 0 && !sstep_param_before(&rows[out - 1], &rows[i])) rows[out - 1] = rows[i];
        else rows[out++] = rows[i];
    }
    return out;
}

/* In normalized rows, find the rows of `engine` measured at the p to use for
 * a query on p' processes: *first and *count delimit them (sorted by m).
 * Returns that p, or 0 if the engine has no rows. */
static inline unsigned sstep_param_select(const struct sstep_param_row *rows, size_t n,
        const char *engine, unsigned p, size_t *first, size_t *count)
{
    size_t lo = n, hi = n;   /* the engine's rows: [lo, hi) */
    for (size_t i = 0; i < n; ++i) {
        if (strcmp(rows[i].engine, engine) != 0) continue;
        if (lo == n) lo = i;
        hi = i + 1;
    }
    if (lo == n) return 0;
    unsigned use = rows[hi - 1].p;   /* largest, unless some p >= p' exists */
    for (size_t i = lo; i < hi; ++i)
        if (rows[i].p >= p) { use = rows[i].p; break; }
    size_t f = lo;
    while (rows[f].p != use) ++f;
    size_t c = 0;
    while (f + c < hi && rows[f + c].p == use) ++c;
    *first = f;
    *count = c;
    return use;
}

/* g and l at message size m from `count` rows of one engine and p, sorted
 * by m (see the lookup rules above). */
static inline void sstep_param_at(const struct sstep_param_row *r, size_t count,
        size_t m, double *g, double *l)
{
    double mm = m == 0 ? 1.0 : (double)m;
    if (mm <= r[0].m) {
        *g = mm < r[0].m ? r[0].g * (r[0].m / mm) : r[0].g;
        *l = r[0].l;
        return;
    }
    size_t i = 0;
    while (i + 1 < count && r[i + 1].m <= mm) ++i;
    if (i + 1 == count || mm == r[i].m) {
        *g = r[i].g;
        *l = r[i].l;
        return;
    }
    double t = (1.0 / r[i].m - 1.0 / mm) / (1.0 / r[i].m - 1.0 / r[i + 1].m);
    *g = r[i].g + t * (r[i + 1].g - r[i].g);
    *l = r[i].l + t * (r[i + 1].l - r[i].l);
}

#endif
