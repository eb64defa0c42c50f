/*
 * The superstep profiler (prof.h): the Chrome / Perfetto trace.
 */
#define _GNU_SOURCE
#include "prof_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Chrome / Perfetto trace                                              */
/* ------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

int pf_trace(FILE *f, const struct pf_run *R)
{
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"run\":");
    json_str(f, R->run);
    fprintf(f, "},\"traceEvents\":[\n");
    int first = 1;
#define SEP() do { if (!first) fputs(",\n", f); first = 0; } while (0)
    for (size_t i = 0; i < R->nsec; ++i) {
        const struct pf_section *S = &R->sec[i];
        const unsigned tp = (unsigned)i + 1;
        SEP();
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":", tp);
        char name[300];
        snprintf(name, sizeof name, "section %s (%u processes, %s)", S->key, S->P, S->ref->engine);
        json_str(f, name);
        fprintf(f, "}}");
        SEP();
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"args\":{\"sort_index\":%u}}", tp, tp);
        for (unsigned s = 0; s < S->P; ++s) {
            const struct pf_part *p = S->part[s];
            if (!p) continue;
            SEP();
            fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"process %u\"}}",
                    tp, s, s);
            double prev = p->start;
            for (size_t k = 0; k < p->nsteps; ++k) {
                const struct pf_step *t = &p->steps[k];
                double a = p->start + t->t0, b = p->start + t->t1;
                /* "superstep": the program's number (pf_step_label); "step":
                 * the recorded sync's index */
                char lab[32] = "?";
                if (k < S->nsteps) pf_step_label(S, k, lab, sizeof lab);
                SEP();
                fprintf(f, "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"computation\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%zu,\"superstep\":\"%s\"}}",
                        k < S->nstart ? "start-up" : "compute", tp, s, prev * 1e6,
                        (a - prev) * 1e6 > 0 ? (a - prev) * 1e6 : 0, k, lab);
                uint64_t sent = 0, got = 0;
                for (uint32_t j = 0; j < t->npeer; ++j) {
                    sent += p->peers[t->peer_first + j].out;
                    got += p->peers[t->peer_first + j].get;
                }
                SEP();
                fprintf(f, "{\"ph\":\"X\",\"name\":\"sync\",\"cat\":\"sync\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%zu,\"superstep\":\"%s\",\"layer\":",
                        tp, s, a * 1e6, (b - a) * 1e6, k, lab);
                json_str(f, pf_step_layer(p, t));
                fprintf(f, ",\"put_bytes\":%llu,\"put_reqs\":%u,\"get_bytes\":%llu,\"get_reqs\":%u,"
                        "\"msg_bytes\":%llu,\"msg_reqs\":%u,\"msgs_in\":%u,\"bytes_to_others\":%llu,"
                        "\"bytes_got_from_others\":%llu",
                        (unsigned long long)t->bytes[0], t->reqs[0], (unsigned long long)t->bytes[1],
                        t->reqs[1], (unsigned long long)t->bytes[2], t->reqs[2], t->msgs_in,
                        (unsigned long long)sent, (unsigned long long)got);
                if (k < S->nsteps) {
                    const struct pf_sstep *x = &S->st[k];
                    fprintf(f, ",\"h\":%llu,\"wait_us\":%.3f,\"pred_g_h_l_us\":%.3f", (unsigned long long)x->h,
                            ((b - a) - x->comm) * 1e6, x->pred_comm * 1e6);
                }
                fprintf(f, "}}");
                prev = b;
            }
            if (p->end > prev) {
                SEP();
                fprintf(f, "{\"ph\":\"X\",\"name\":\"compute\",\"cat\":\"computation\",\"pid\":%u,\"tid\":%u,"
                        "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%zu}}", tp, s, prev * 1e6,
                        (p->end - prev) * 1e6, p->nsteps);
            }
        }
        for (size_t k = 0; k < S->nsteps; ++k) {
            const struct pf_sstep *x = &S->st[k];
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"h (bytes)\",\"pid\":%u,\"ts\":%.3f,\"args\":{\"h\":%llu}}",
                    tp, x->begin * 1e6, (unsigned long long)x->h);
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"superstep time (us)\",\"pid\":%u,\"ts\":%.3f,"
                    "\"args\":{\"measured\":%.3f,\"predicted\":%.3f}}", tp, x->begin * 1e6, x->time * 1e6,
                    (x->comp_max + x->pred_comm) * 1e6);
        }
        if (S->nsteps) {
            SEP();
            fprintf(f, "{\"ph\":\"C\",\"name\":\"h (bytes)\",\"pid\":%u,\"ts\":%.3f,\"args\":{\"h\":0}}",
                    tp, S->st[S->nsteps - 1].end * 1e6);
        }
    }
#undef SEP
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}
