/*
 * pub_errors.c: run-time errors of the PUB layer: every error prints the one
 * line of pub.md's conventions ("superstep: <primitive> (process s of p in
 * group lo..hi of P): ...") and ends the program like lpf_abort. pub_die is
 * the common path, pub_die_shared the error every member of a
 * synchronisation sees (the lowest pid of the group prints it).
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Run-time errors                                                      */
/* ------------------------------------------------------------------ */

static atomic_int reporting;

/* the program ends like lpf_abort, without its line (the layer prints the
 * one line of pub.md's conventions) */
static PUB_NORETURN void end_program(lpf_t ctx)
{
    sstep_abort_quiet(ctx ? ctx : LPF_ROOT);
    _exit(6);
}

PUB_HIDDEN PUB_NORETURN void pub_emit(lpf_t ctx, const char *line)
{
    if (atomic_exchange(&reporting, 1) != 0) {
        /* another thread of this program reports and ends it */
        for (;;) pause();
    }
    char site[640];
    sstep_call_site(site, sizeof site);
    fflush(stdout);
    fprintf(stderr, "%s%s\n", line, site);
    fflush(stderr);
    end_program(ctx);
}

static size_t prefix(char *line, size_t cap, const char *prim, const struct pub_obj *o)
{
    struct pub_run *r = pub_tls_run;
    int n;
    if (o)
        n = snprintf(line, cap, "superstep: %s (process %d of %d in group %d..%d of %d): ",
                prim, o->s, o->p, o->lo, o->lo + o->p - 1, o->run->P);
    else if (r)
        n = snprintf(line, cap, "superstep: %s (process %d of %d): ", prim, r->pid, r->P);
    else
        n = snprintf(line, cap, "superstep: %s: ", prim);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

PUB_HIDDEN PUB_NORETURN void pub_vdie(const struct pub_obj *o, const char *prim, const char *fmt,
        va_list ap)
{
    char line[2048];
    size_t n = prefix(line, sizeof line, prim, o);
    vsnprintf(line + n, sizeof line - n, fmt, ap);
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
    pub_emit(pub_tls_run ? pub_tls_run->ctx : LPF_ROOT, line);
}

/* error with the object's group in the line (o may be NULL: run pid) */
PUB_HIDDEN PUB_NORETURN PUB_COLD PUB_PRINTF(3, 4)
void pub_die(const struct pub_obj *o, const char *prim, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pub_vdie(o, prim, fmt, ap);
}

/* An error every member of a synchronisation sees: the lowest pid of the
 * group prints it; the others give that line time to end the program (on
 * a distributed engine they would each print), then report themselves. */
PUB_HIDDEN PUB_NORETURN PUB_COLD PUB_PRINTF(3, 4)
void pub_die_shared(const struct pub_obj *o, const char *prim, const char *fmt, ...)
{
    if (o && o->s != 0) {
        for (int i = 0; i < 100; ++i) {
            struct timespec ts = { 0, 50000000 };
            nanosleep(&ts, NULL);
        }
    }
    va_list ap;
    va_start(ap, fmt);
    pub_vdie(o, prim, fmt, ap);
}

PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_die_oom(const struct pub_obj *o, const char *prim,
        size_t bytes)
{
    pub_die(o, prim, "out of memory (%zu bytes)", bytes);
}
