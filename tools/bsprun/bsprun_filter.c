/*
 * bsprun-filter: what bsprun puts between the MPI launcher and the terminal.
 *
 *   bsprun-filter            standard error: the launcher's own banners
 *                            dropped, one bsprun line for what they said
 *                            (a rank ended by a signal, a lost host, a
 *                            program that could not be started)
 *   bsprun-filter --stdout   standard output: the launcher's "N total
 *                            processes failed to start" dropped
 *   bsprun-filter --tag T    every line starts with T (nothing dropped)
 *   bsprun-filter --tag T --marked
 *                            the same, but a line that starts with the
 *                            library's mark (src/core/output.h: the program
 *                            tagged it itself, on the pthread engine) only
 *                            loses the mark; a mark inside a line (after
 *                            output without its newline) starts a new line
 *   --marked with the first two (and BSPRUN_OMPI_TAGS=tag): a mark right
 *                            after the launcher's tag stands for the tag
 *                            the line has (a hybrid rank's thread tagged
 *                            it); one elsewhere starts a line of its own
 *
 * Every line is written on as soon as its newline has been read (one
 * write(2) per batch of lines, no stdio buffer in between). A line without
 * its newline yet is written on after a quarter of a second without more
 * input (a prompt), or at once where it cannot be the start of a line the
 * filter would drop. A dashed block that turns out not to be the launcher's
 * is written on the same way after a quarter of a second.
 *
 * Environment: BSPRUN_MAP_CMD (a shell command printing Open MPI's map of
 * the job, asked for where a host was lost), BSPRUN_T (BSP processes per
 * rank), BSPRUN_NP (BSP processes in all), BSPRUN_OMPI_TAGS=tag or strip
 * (the launcher runs with Open MPI's --tag-output: its "[job,rank]<stdout>:"
 * before each line becomes the rank's BSP pids, "[3] " or "[2-3] ", or
 * nothing; one met inside a line -- another rank's output after an
 * unterminated last line -- starts a line of its own), BSPRUN_FAILED_FILE
 * (made when a line says that a process failed: the engine's fatal line, or
 * the launcher's report of an abort or a lost host; bsprun then gives the
 * launcher a grace period to end the job).
 * Exit status: 0, or 3 where the launcher said it could not start the
 * program (bsprun then exits with 127).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDLE_MS 250

struct buf {
    char *p;
    size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n + 1) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) {
            fputs("bsprun-filter: out of memory\n", stderr);
            exit(1);
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void puts_b(struct buf *b, const char *s) { put(b, s, strlen(s)); }

static struct buf out;     /* written at the end of each batch */
static char last = '\n';   /* the last byte written */

static void flush_out(void)
{
    size_t i = 0;
    while (i < out.n) {
        ssize_t k = write(1, out.p + i, out.n - i);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;   /* nobody reads any more: drop */
        i += (size_t)k;
    }
    if (out.n) last = out.p[out.n - 1];
    out.n = 0;
}
static void emit(const char *s, size_t n) { put(&out, s, n); }

enum { M_STDERR, M_STDOUT, M_TAG };
static int mode = M_STDERR;
static const char *tag = "";
static long T = 1, NP = 0;
static int status = 0;
static int midline = 0;   /* part of the current line was written already */
static int ompi_tags = 0, ompi_strip = 0;
static int marks = 0;        /* --marked */
static char prev = '\n';     /* the last byte taken in (--marked) */
#define MARK "\036\036"      /* SSTEP_OUT_MARK */
#define MARK_LEN 2

/* the tag a line starting with s[0, n) gets: T, or none (and the mark
 * skipped) where the library tagged it */
static void start_line(const char **s, size_t *n)
{
    if (marks && *n >= MARK_LEN && memcmp(*s, MARK, MARK_LEN) == 0) {
        *s += MARK_LEN;
        *n -= MARK_LEN;
        return;
    }
    emit(tag, strlen(tag));
}

/* s[0, n) into b; with --marked a newline before a mark that does not
 * start a line */
static void take(struct buf *b, const char *s, size_t n)
{
    if (!marks || mode != M_TAG) {   /* (else: retag) */
        put(b, s, n);
        return;
    }
    size_t i = 0;
    for (size_t j = 0; j < n; ++j) {
        if (s[j] == MARK[0] && prev != '\n' && prev != MARK[0] && j + 1 < n && s[j + 1] == MARK[1]) {
            put(b, s + i, j - i);
            put(b, "\n", 1);
            i = j;
        }
        prev = s[j];
    }
    put(b, s + i, n - i);
}
static int m(regex_t *r, const char *s, regmatch_t *g, size_t ng);
static regex_t re_otag, re_fatal, re_ompi_fail, re_same;
static int repeated(const char *s);
static const char *failed_file;

/* a line that says a process failed: tell bsprun (once) */
static void check_failed(const char *s)
{
    if (!failed_file || !*failed_file) return;
    if ((m(&re_fatal, s, NULL, 0) && !strstr(s, "has waited")) || m(&re_ompi_fail, s, NULL, 0)) {
        FILE *f = fopen(failed_file, "w");
        if (f) fclose(f);
        failed_file = NULL;
    }
}

/* s[0, n) (NUL-terminated there) into o with Open MPI's tags made ours;
 * at_start: s starts a line. With --marked, a mark right after the
 * launcher's tag stands for the tag the line has already (a hybrid rank's
 * thread tagged it), and a mark anywhere else starts a line of its own
 * with the tag it has. */
static void retag(const char *s, size_t n, int at_start, struct buf *o)
{
    o->n = 0;
    put(o, "", 0);
    size_t i = 0;
    regmatch_t g[2];
    while (i < n) {
        int have = regexec(&re_otag, s + i, 2, g, i ? REG_NOTBOL : 0) == 0;
        const char *mk = marks ? memmem(s + i, n - i, MARK, MARK_LEN) : NULL;
        size_t at, past;
        char t[64];
        if (mk && (!have || (size_t)(mk - (s + i)) < (size_t)g[0].rm_so)) {
            at = (size_t)(mk - (s + i));
            past = at + MARK_LEN;
            t[0] = '\0';
        } else if (have) {
            at = (size_t)g[0].rm_so;
            past = (size_t)g[0].rm_eo;
            long r = strtol(s + i + g[1].rm_so, NULL, 10), lo = r * T, hi = r * T + T - 1;
            if (NP > 0 && hi > NP - 1) hi = NP - 1;
            if (ompi_strip) t[0] = '\0';
            else if (hi > lo) snprintf(t, sizeof t, "[%ld-%ld] ", lo, hi);
            else snprintf(t, sizeof t, "[%ld] ", lo);
            if (marks && n - (i + past) >= MARK_LEN && memcmp(s + i + past, MARK, MARK_LEN) == 0) {
                past += MARK_LEN;
                t[0] = '\0';
            }
        } else {
            break;
        }
        put(o, s + i, at);
        if (!(at_start && i + at == 0) && !(o->n && o->p[o->n - 1] == '\n'))
            put(o, "\n", 1);
        puts_b(o, t);
        i += past;
    }
    put(o, s + i, n - i);
}

/* a dashed block being held: the launcher's (dropped) or not */
static int inblk, drop, launch, mpich;
static int lost_daemon;   /* a daemon lost or not started, its host not named */
static struct buf blk, exe, node, died;
static char **lost;
static size_t nlost;

static regex_t re_died, re_lost, re_drop, re_launch, re_exe, re_node, re_help, re_aggr,
    re_abort, re_fwd, re_showhelp, re_setpgid, re_execvp, re_failed;

static void rx(regex_t *r, const char *s)
{
    if (regcomp(r, s, REG_EXTENDED) != 0) {
        fprintf(stderr, "bsprun-filter: bad pattern %s\n", s);
        exit(1);
    }
}
static int m(regex_t *r, const char *s, regmatch_t *g, size_t ng)
{
    return regexec(r, s, ng, g, 0) == 0;
}
static void sub(struct buf *b, const char *s, regmatch_t g)
{
    b->n = 0;
    put(b, s + g.rm_so, (size_t)(g.rm_eo - g.rm_so));
}

static void cannot_start(const char *prog, const char *host, const char *why)
{
    char line[1024];
    snprintf(line, sizeof line, "bsprun: cannot start %s on host %s: %s\n", prog, host, why);
    emit(line, strlen(line));
    status = 3;
}

static void end_block(const char *endline)
{
    if (launch) {
        cannot_start(exe.n ? exe.p : "the program", node.n ? node.p : "(unknown)",
                     "no such file there, or not an executable file");
    } else if (!drop) {
        emit(blk.p ? blk.p : "", blk.n);
        if (endline) {
            emit(endline, strlen(endline));
            emit("\n", 1);
        }
    }
    inblk = drop = launch = 0;
    blk.n = exe.n = node.n = 0;
}

static void line1(char *s, size_t n, int nl);

/* one line (s: without its newline, NUL-terminated; nl: it had one) */
static void line(char *s, size_t n, int nl)
{
    if (!ompi_tags || mode == M_TAG) {
        line1(s, n, nl);
        return;
    }
    static struct buf t;
    retag(s, n, 1, &t);
    char *p = t.p, *end = t.p + t.n;
    for (;;) {
        char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) break;
        *e = '\0';
        line1(p, (size_t)(e - p), 1);
        p = e + 1;
    }
    line1(p, (size_t)(end - p), nl);
}

static void line1(char *s, size_t n, int nl)
{
    if (mode == M_STDERR) check_failed(s);
    regmatch_t g[3];
    if (mode == M_TAG) {
        const char *p = s;
        start_line(&p, &n);
        emit(p, n);
        if (nl) emit("\n", 1);
        return;
    }
    if (mode == M_STDOUT) {
        if (nl && m(&re_failed, s, NULL, 0)) return;
        emit(s, n);
        if (nl) emit("\n", 1);
        return;
    }
    if (n >= 40 && strspn(s, "-") >= 40) {
        if (inblk) {
            end_block(s);
            return;
        }
        inblk = 1;
        blk.n = 0;
        put(&blk, s, n);
        put(&blk, "\n", 1);
        return;
    }
    if (n >= 64 && strspn(s, "=") >= 64) {
        mpich = !mpich;
        return;
    }
    if (m(&re_execvp, s, g, 3)) {   /* MPICH: [proxy:0:0@HOST] ... execvp error on file F (WHY) */
        struct buf f = { 0 }, why = { 0 }, h = { 0 };
        sub(&f, s, g[1]);
        sub(&why, s, g[2]);
        char *at = strchr(s, '@'), *close = at ? strchr(at, ']') : NULL;
        if (at && close) put(&h, at + 1, (size_t)(close - at - 1));
        else puts_b(&h, "(unknown)");
        cannot_start(f.p, h.p, why.p);
        free(f.p);
        free(why.p);
        free(h.p);
        return;
    }
    if (mpich) return;
    if (inblk) {
        put(&blk, s, n);
        put(&blk, "\n", 1);
        /* the one thing worth keeping of a dropped block: which rank died how */
        if (m(&re_died, s, g, 3)) {
            long r = strtol(s + g[1].rm_so, NULL, 10);
            char who[128], l[512];
            if (T > 1) snprintf(who, sizeof who, "rank %ld (processes %ld-%ld)", r, r * T, r * T + T - 1);
            else snprintf(who, sizeof who, "rank %ld (process %ld)", r, r);
            snprintf(l, sizeof l, "bsprun: %s ended by signal %.*s; the job was ended\n", who,
                     (int)(g[2].rm_eo - g[2].rm_so), s + g[2].rm_so);
            puts_b(&died, l);
        }
        /* a lost host: "Remote daemon: [[j,0],d] on node NAME" */
        if (m(&re_lost, s, g, 2)) {
            size_t k, len = (size_t)(g[1].rm_eo - g[1].rm_so);
            for (k = 0; k < nlost; ++k)
                if (strlen(lost[k]) == len && memcmp(lost[k], s + g[1].rm_so, len) == 0) break;
            if (k == nlost) {
                char **nl2 = realloc(lost, (nlost + 1) * sizeof *lost);
                if (nl2) {
                    lost = nl2;
                    lost[nlost++] = strndup(s + g[1].rm_so, len);
                }
            }
        }
        if (m(&re_launch, s, NULL, 0)) launch = 1;
        if (strstr(s, "unable to reliably start one or more daemons") ||
            strstr(s, "lost communication with a remote daemon"))
            lost_daemon = 1;
        if (m(&re_exe, s, g, 2)) sub(&exe, s, g[1]);
        if (m(&re_node, s, g, 2)) sub(&node, s, g[1]);
        if (m(&re_drop, s, NULL, 0)) drop = 1;
        return;
    }
    if (m(&re_help, s, NULL, 0) || m(&re_aggr, s, NULL, 0) || m(&re_abort, s, NULL, 0) ||
        m(&re_fwd, s, NULL, 0) || m(&re_showhelp, s, NULL, 0) || m(&re_setpgid, s, NULL, 0))
        return;
    if (nl && getenv("BSPRUN_ALL_LINES") == NULL && repeated(s)) return;
    emit(s, n);
    if (nl) emit("\n", 1);
}

/* One error for the whole job: when several processes print the same
 * "superstep: PRIM (process s of P): MESSAGE" line (every rank made the
 * same mistake), the first is written at once and the others only counted;
 * at the end one line names the processes that said the same. */
struct same {
    char *key;          /* PRIM and MESSAGE */
    long pid;           /* of the line written */
    struct buf pids;    /* "1, 2" */
    size_t more;
};
static struct same sames[64];
static size_t nsames;

static int repeated(const char *s)
{
    regmatch_t g[5];
    if (!m(&re_same, s, g, 5)) return 0;
    struct buf key = { 0 };
    sub(&key, s, g[2]);
    put(&key, "\n", 1);
    put(&key, s + g[4].rm_so, (size_t)(g[4].rm_eo - g[4].rm_so));
    long pid = strtol(s + g[3].rm_so, NULL, 10);
    for (size_t k = 0; k < nsames; ++k)
        if (strcmp(sames[k].key, key.p) == 0) {
            free(key.p);
            /* the very same line (process 0 of nested one-process sections
             * on several ranks): nothing to add */
            if (pid == sames[k].pid) return 1;
            if (sames[k].more < 16) {
                puts_b(&sames[k].pids, sames[k].more ? ", " : "");
                put(&sames[k].pids, s + g[3].rm_so, (size_t)(g[3].rm_eo - g[3].rm_so));
            }
            sames[k].more++;
            return 1;
        }
    if (nsames < sizeof sames / sizeof sames[0]) {
        sames[nsames].key = key.p;
        sames[nsames].pid = pid;
        sames[nsames].pids = (struct buf){ 0 };
        sames[nsames].more = 0;
        nsames++;
    } else {
        free(key.p);
    }
    return 0;
}

static void same_summary(void)
{
    for (size_t k = 0; k < nsames; ++k) {
        if (!sames[k].more) continue;
        char *nl = strchr(sames[k].key, '\n');
        char l[1024];
        put(&sames[k].pids, "", 1);
        snprintf(l, sizeof l, "superstep: %.*s: the same at process%s %s%s\n",
                 (int)(nl - sames[k].key), sames[k].key, sames[k].more > 1 ? "es" : "",
                 sames[k].pids.p, sames[k].more > 16 ? " and more" : "");
        if (last != '\n' && (out.n == 0 || out.p[out.n - 1] != '\n')) emit("\n", 1);
        emit(l, strlen(l));
    }
}

/* could a line starting with s[0, n) still be one the filter acts on? */
static int may_act(const char *s, size_t n)
{
    if (mode == M_TAG) return 0;
    if (ompi_tags) return 1;   /* a tag to make ours: wait a moment for the rest */
    if (mode == M_STDOUT) {
        static const char rest[] = " total process";
        size_t i = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
        if (i == 0) return 0;
        return strncmp(s + i, rest, n - i < sizeof rest - 1 ? n - i : sizeof rest - 1) == 0;
    }
    return 1;   /* standard error: wait a moment for the rest */
}

/* the hosts of Open MPI's map of the job other than this one */
static size_t other_hosts(char ***out)
{
    const char *mc = getenv("BSPRUN_MAP_CMD");
    *out = NULL;
    if (!mc || !*mc) return 0;
    char me[256] = "";
    if (gethostname(me, sizeof me) != 0) me[0] = '\0';
    me[sizeof me - 1] = '\0';
    FILE *f = popen(mc, "r");
    if (!f) return 0;
    char l[4096];
    size_t n = 0;
    while (fgets(l, sizeof l, f)) {
        char *p = strstr(l, "Data for node: ");
        if (!p) continue;
        p += 15;
        p[strcspn(p, " \t\n")] = '\0';
        if (!*p || strcmp(p, me) == 0 || strcmp(p, "localhost") == 0) continue;
        size_t k;
        for (k = 0; k < n; ++k)
            if (strcmp((*out)[k], p) == 0) break;
        if (k < n) continue;
        char **o = realloc(*out, (n + 1) * sizeof **out);
        if (!o) break;
        *out = o;
        (*out)[n++] = strdup(p);
    }
    pclose(f);
    return n;
}

/* "BSP processes 1, 3" of the ranks that Open MPI's map puts on host h */
static void procs_on(const char *h, struct buf *res)
{
    const char *mc = getenv("BSPRUN_MAP_CMD");
    res->n = 0;
    if (!mc || !*mc) return;
    FILE *f = popen(mc, "r");
    if (!f) return;
    char l[4096], cur[1024] = "";
    unsigned char *have = NULL;
    long maxr = -1;
    while (fgets(l, sizeof l, f)) {
        char *p;
        if ((p = strstr(l, "Data for node: "))) {
            p += 15;
            size_t k = strcspn(p, " \t\n");
            if (k >= sizeof cur) k = sizeof cur - 1;
            memcpy(cur, p, k);
            cur[k] = '\0';
        } else if (strcmp(cur, h) == 0 && (p = strstr(l, "Process rank: "))) {
            long r = strtol(p + 14, NULL, 10);
            if (r < 0 || r > 1000000) continue;
            if (r > maxr) {
                unsigned char *nh = realloc(have, (size_t)r + 1);
                if (!nh) continue;
                memset(nh + maxr + 1, 0, (size_t)(r - maxr));
                have = nh;
                maxr = r;
            }
            have[r] = 1;
        }
    }
    pclose(f);
    long lo = 0, hi = -2, n = 0;
    char piece[64];
    for (long r = 0; r <= maxr; ++r) {
        if (!have[r]) continue;
        long a = r * T, b = r * T + T - 1;
        if (NP > 0 && b > NP - 1) b = NP - 1;
        if (n && a == hi + 1) {
            hi = b;
            continue;
        }
        if (n) {
            snprintf(piece, sizeof piece, lo == hi ? "%ld, " : "%ld-%ld, ", lo, hi);
            puts_b(res, piece);
        }
        lo = a;
        hi = b;
        n++;
    }
    free(have);
    if (!n) return;
    snprintf(piece, sizeof piece, lo == hi ? "%ld" : "%ld-%ld", lo, hi);
    struct buf all = { 0 };
    puts_b(&all, n == 1 && lo == hi ? " (BSP process " : " (BSP processes ");
    put(&all, res->p ? res->p : "", res->n);
    puts_b(&all, piece);
    puts_b(&all, ")");
    res->n = 0;
    put(res, all.p, all.n);
    free(all.p);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--stdout") == 0) mode = M_STDOUT;
        else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) {
            mode = M_TAG;
            tag = argv[++i];
        } else if (strcmp(argv[i], "--marked") == 0) {
            marks = 1;
        } else {
            fprintf(stderr, "bsprun-filter: unknown argument '%s' (it is bsprun's helper)\n", argv[i]);
            return 2;
        }
    }
    const char *e;
    if ((e = getenv("BSPRUN_T")) && atol(e) > 0) T = atol(e);
    if ((e = getenv("BSPRUN_NP")) && atol(e) > 0) NP = atol(e);
    e = getenv("BSPRUN_OMPI_TAGS");
    ompi_strip = e && strcmp(e, "strip") == 0;
    ompi_tags = ompi_strip || (e && strcmp(e, "tag") == 0);
    signal(SIGPIPE, SIG_IGN);
    rx(&re_died, "process rank ([0-9]+) .* exited on signal ([0-9]+ \\([^)]*\\))");
    rx(&re_lost, "[Rr]emote daemon.* on node ([^ \t]+)");
    rx(&re_drop, "MPI_ABORT|mpirun|Open MPI|ORTE|orte|Primary job|prterun|MPI processes|"
                 "process rank|PMIx|non-zero (exit|status)");
    rx(&re_launch, "unable to launch the specified application|unable to find the specified "
                   "executable|could not access or execute an executable");
    rx(&re_exe, "^ *Executable: *(.*[^ ]) *$");
    rx(&re_node, "^ *Node: *(.*[^ ]) *$");
    rx(&re_help, "^\\[[^]]*\\] [0-9]+ more process(es)? ha(s|ve) sent help message");
    rx(&re_aggr, "Set MCA parameter \"orte_base_help_aggregate\"");
    rx(&re_abort, "^application called MPI_Abort\\(");
    rx(&re_fwd, "^(mpirun|mpiexec|orterun|prterun): Forwarding signal [0-9]+ to job$");
    rx(&re_showhelp, "ORTE_ERROR_LOG: .*show_help\\.c");
    rx(&re_setpgid, "^\\[[^]]*\\] plm:rsh: Warning: setpgid\\(");
    rx(&re_execvp, "execvp error on file ([^ ]+) \\(([^)]*)\\)");
    rx(&re_failed, "^[0-9]+ total process(es)? failed to start$");
    rx(&re_fatal, "superstep: [a-z_]+ \\(process [0-9]+ of [0-9]+[^)]*\\): ");
    rx(&re_same, "^(\\[[0-9-]+\\] )?superstep: ([a-z_]+) \\(process ([0-9]+) of [0-9]+\\): (.*)$");
    rx(&re_ompi_fail, "MPI_ABORT was invoked|ORTE has lost communication|noticed that process rank");
    failed_file = getenv("BSPRUN_FAILED_FILE");
    rx(&re_otag, "\\[[0-9]+,([0-9]+)\\]<std(out|err|diag)>:");
    struct buf rt = { 0 };

    struct buf in = { 0 };
    int eof = 0;
    char chunk[65536];
    while (!eof) {
        /* something held: a line without its newline, a dashed block */
        int held = (in.n > 0 && !midline) || (inblk && !drop);
        struct pollfd pf = { 0, POLLIN, 0 };
        int r = poll(&pf, 1, held ? IDLE_MS : -1);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {   /* a quarter of a second without input: let it go */
            if (inblk && !drop) end_block(NULL);
            if (in.n && !midline && !inblk) {
                const char *p = in.p;
                size_t pn = in.n;
                if (mode == M_TAG) start_line(&p, &pn);
                if (ompi_tags && mode != M_TAG) {
                    retag(in.p, in.n, 1, &rt);
                    emit(rt.p, rt.n);
                } else {
                    emit(p, pn);
                }
                in.n = 0;
                midline = 1;
            }
            flush_out();
            continue;
        }
        ssize_t k = read(0, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            eof = 1;
            k = 0;
        }
        take(&in, chunk, (size_t)k);
        size_t i = 0;
        for (;;) {
            char *nl = memchr(in.p + i, '\n', in.n - i);
            if (!nl) break;
            size_t len = (size_t)(nl - (in.p + i));
            *nl = '\0';
            if (midline) {   /* the rest of a line let go before */
                if (ompi_tags && mode != M_TAG) {
                    retag(in.p + i, len, 0, &rt);
                    emit(rt.p, rt.n);
                } else {
                    emit(in.p + i, len);
                }
                emit("\n", 1);
                midline = 0;
            } else {
                line(in.p + i, len, 1);
            }
            i += len + 1;
        }
        memmove(in.p, in.p + i, in.n - i);
        in.n -= i;
        if (in.p) in.p[in.n] = '\0';
        if (in.n && (midline || (!inblk && !may_act(in.p, in.n)))) {
            const char *p = in.p;
            size_t pn = in.n;
            if (!midline && mode == M_TAG) start_line(&p, &pn);
            if (ompi_tags && mode != M_TAG) {
                retag(in.p, in.n, !midline, &rt);
                emit(rt.p, rt.n);
            } else {
                emit(p, pn);
            }
            in.n = 0;
            midline = 1;
        }
        flush_out();
    }
    if (in.n) line(in.p, in.n, 0);
    if (inblk) {
        drop = 0;
        end_block(NULL);
    }
    /* a daemon lost without its host named (Open MPI: "unable to reliably
     * start one or more daemons" where the link to a daemon broke): the
     * job's other host, or its other hosts */
    const char *lost_why = "its Open MPI daemon stopped answering";
    if (lost_daemon && nlost == 0) {
        char **hs;
        size_t nh = other_hosts(&hs);
        if (nh == 1) {
            lost = hs;
            nlost = 1;
            lost_why = "its Open MPI daemon failed or stopped answering";
        } else if (nh > 1) {
            struct buf l = { 0 };
            puts_b(&l, "bsprun: lost one of the hosts ");
            for (size_t k = 0; k < nh; ++k) {
                if (k) puts_b(&l, ", ");
                puts_b(&l, hs[k]);
            }
            puts_b(&l, ": an Open MPI daemon failed or stopped answering; the job was ended\n");
            puts_b(&died, l.p);
            free(l.p);
        } else {
            puts_b(&died, "bsprun: an Open MPI daemon failed or stopped answering; the job was ended\n");
        }
    }
    same_summary();
    if ((died.n || nlost) && last != '\n' && (out.n == 0 || out.p[out.n - 1] != '\n')) emit("\n", 1);
    if (died.n) emit(died.p, died.n);
    for (size_t k = 0; k < nlost; ++k) {
        struct buf who = { 0 };
        procs_on(lost[k], &who);
        char l[2048];
        snprintf(l, sizeof l,
                 "bsprun: lost host %s%s: %s; the job was ended\n", lost[k], who.n ? who.p : "",
                 lost_why);
        emit(l, strlen(l));
        free(who.p);
    }
    flush_out();
    return status;
}
