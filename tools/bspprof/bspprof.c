/*
 * bspprof -- the superstep profiler's report tool (docs/profiler.md).
 *
 *   bspprof [options] DIR
 *
 * DIR is a directory a program wrote with SUPERSTEP_PROFILE=DIR (or
 * `bsprun --profile DIR`). Without --predict or --machine, bspprof merges
 * the parts of the newest run in DIR (or --run ID) and re-makes
 * summary.txt, trace.json and report.html, printing the summary. With
 * --predict or --machine it predicts the run time of the same program on
 * another machine from the recorded h-relations and work, without running
 * it again.
 *
 * Options
 *   --run ID            the run to read (default: the newest in DIR)
 *   --out DIR2          write the files there instead of DIR
 *   --predict g=G,l=L[,r=R]
 *                       a machine with g seconds per byte, l seconds per
 *                       superstep and r flop/s (without r, or without an r
 *                       in the record, computation times are kept)
 *   --machine FILE      a parameter file saved by `bspprobe --save` on the
 *                       other machine (g and l by message size and p; r from
 *                       its "# r ENGINE P FLOPS" line)
 *   --procs P           with --machine: g and l for P processes instead of
 *                       each section's own p; every process keeps its
 *                       recorded work and h-relations (docs/scale.md)
 *   -q, --quiet         do not print the summary
 *   -h, --help          this text
 */
#define _GNU_SOURCE
#include "prof_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    char doc[4096];
    fprintf(f,
        "Usage: bspprof [--run ID] [--out DIR2] [-q] DIR\n"
        "       bspprof --predict g=SEC_PER_BYTE,l=SEC[,r=FLOPS] [--run ID] DIR\n"
        "       bspprof --machine PARAMS_FILE [--procs P] [--run ID] DIR\n"
        "Re-makes the summary, trace.json and report.html of a run profiled with\n"
        "SUPERSTEP_PROFILE=DIR (or bsprun --profile DIR), or predicts its run time on\n"
        "another machine from the recorded h-relations and work.\n"
        "\n"
        "  --run ID            the run to read (default: the newest in DIR)\n"
        "  --out DIR2          write the files there instead of DIR\n"
        "  --predict g=G,l=L[,r=R]\n"
        "                      a machine with G seconds per byte, L seconds per\n"
        "                      superstep and R flop/s (without r, or without an r\n"
        "                      in the record, computation times are kept)\n"
        "  --machine FILE      a parameter file saved by 'bspprobe --save' on the\n"
        "                      other machine (g and l by message size and p; r from\n"
        "                      its '# r ENGINE P FLOPS' line)\n"
        "  --procs P           with --machine: g and l for P processes instead of each\n"
        "                      section's own p; every process keeps its recorded work\n"
        "                      and h-relations\n"
        "  -q, --quiet         do not print the summary\n"
        "  -h, --help          this text\n"
        "\n"
        "How to read the report: %s/profiler.md\n", pf_doc_dir(doc, sizeof doc, 0));
}

static int parse_predict(const char *s, struct pf_machine *M)
{
    memset(M, 0, sizeof *M);
    int have_g = 0, have_l = 0;
    char *copy = strdup(s), *save = NULL;
    if (!copy) return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) { free(copy); return -1; }
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        if (*end || end == eq + 1 || !isfinite(v) || !(v >= 0) || v > 1e30) {
            free(copy);
            return -1;
        }
        if (!strcmp(tok, "g")) { M->g = v; have_g = 1; }
        else if (!strcmp(tok, "l")) { M->l = v; have_l = 1; }
        else if (!strcmp(tok, "r")) M->r = v;
        else { free(copy); return -1; }
    }
    free(copy);
    return have_g && have_l ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *run = NULL, *out = NULL, *predict = NULL, *machine = NULL;
    const char *procs = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--run") && i + 1 < argc) run = argv[++i];
        else if (!strncmp(a, "--run=", 6)) run = a + 6;
        else if (!strcmp(a, "--out") && i + 1 < argc) out = argv[++i];
        else if (!strncmp(a, "--out=", 6)) out = a + 6;
        else if (!strcmp(a, "--predict") && i + 1 < argc) predict = argv[++i];
        else if (!strncmp(a, "--predict=", 10)) predict = a + 10;
        else if (!strcmp(a, "--machine") && i + 1 < argc) machine = argv[++i];
        else if (!strncmp(a, "--machine=", 10)) machine = a + 10;
        else if (!strcmp(a, "--procs") && i + 1 < argc) procs = argv[++i];
        else if (!strncmp(a, "--procs=", 8)) procs = a + 8;
        else if (a[0] == '-') { fprintf(stderr, "bspprof: unknown option %s\n", a); usage(stderr); return 2; }
        else if (!dir) dir = a;
        else { fprintf(stderr, "bspprof: more than one directory given\n"); return 2; }
    }
    if (!dir) { usage(stderr); return 2; }
    if (predict && machine) { fprintf(stderr, "bspprof: --predict and --machine exclude each other\n"); return 2; }
    struct pf_machine M;
    char err[512];
    if (predict && parse_predict(predict, &M)) {
        fprintf(stderr, "bspprof: --predict wants g=SECONDS_PER_BYTE,l=SECONDS[,r=FLOPS], not '%s'\n", predict);
        return 2;
    }
    if (machine && pf_machine_load(&M, machine, err, sizeof err)) {
        fprintf(stderr, "bspprof: --machine: %s\n", err);
        return 1;
    }
    if (procs) {
        char *end;
        unsigned long v = strtoul(procs, &end, 10);
        if (!machine) {
            fprintf(stderr, "bspprof: --procs %s needs --machine (a parameter file with rows "
                    "for that p)\n", procs);
            return 2;
        }
        if (*procs < '0' || *procs > '9' || *end || v < 1 || v > (1ul << 24)) {
            fprintf(stderr, "bspprof: --procs wants a number of processes from 1 to %lu, not '%s'\n",
                    1ul << 24, procs);
            return 2;
        }
        M.procs = (unsigned)v;
    }
    struct pf_run R;
    if (pf_load(&R, dir, run, err, sizeof err)) {
        fprintf(stderr, "bspprof: %s\n", err);
        return 1;
    }
    int rc = 0;
    if (predict || machine) {
        pf_predict(stdout, &R, &M);
    } else {
        rc = pf_write_all(&R, out ? out : dir, NULL);
        if (!quiet) pf_summary(stdout, &R);
        if (rc) fprintf(stderr, "bspprof: could not write every file in %s\n", out ? out : dir);
        else if (!quiet)
            printf("written: %s/summary.txt, %s/trace.json, %s/report.html\n", out ? out : dir,
                    out ? out : dir, out ? out : dir);
    }
    pf_free(&R);
    return rc ? 1 : 0;
}
