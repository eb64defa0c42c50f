/*
 * bench_lu: BSP LU decomposition (examples/lu) against the sequential LU
 * with partial pivoting. One JSON line per (n, p):
 * The codes are timed in rounds (sequential, then each p, then again), so
 * that a change in the load of the (shared) machine hits all alike.
 *   t_seq   median time of lu_seq (the same right-looking algorithm)
 *   t_bsp   median time of bsplu_spmd on data already distributed (each
 *           process makes its block of the matrix from the global indices)
 *   t_call  time of the library call bsplu() from sequential code: starts
 *           the run, distributes from pid 0, factorises, gathers
 *   speedup = t_seq / t_bsp, speedup_call = t_seq / t_call
 *
 *   bench_lu [-n 1000[,2000]] [-p 1,2,4] [-r reps] [-M rows -N cols]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "lu.h"

#define MAXLIST 16

struct params {
    uint64_t n, M, N, reps;
};

static _Thread_local struct params *bench_params; /* pid 0 only */
static _Thread_local double bench_result, bench_min;

static int parse_list(const char *s, unsigned long *v)
{
    int k = 0;
    while (*s && k < MAXLIST) {
        char *end;
        v[k++] = strtoul(s, &end, 10);
        s = (*end == ',') ? end + 1 : end;
        if (end == s && *s)
            break;
    }
    return k;
}

static void spmd(void)
{
    struct params *pp = bench_params;
    bsp_begin(pp ? (bsp_pid_t)(pp->M * pp->N) : 1);
    const unsigned pid = bsp_pid();
    struct params par;
    if (pid == 0) {
        par = *pp;
        for (unsigned q = 1; q < bsp_nprocs(); q++)
            bsp_send(q, NULL, &par, sizeof par);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(&par, sizeof par);
    const size_t n = par.n;
    const unsigned M = (unsigned)par.M, N = (unsigned)par.N, s = pid % M, t = pid / M;
    const size_t nlr = bsplu_nloc(n, M, s), nlc = bsplu_nloc(n, N, t);
    double *a = malloc((nlr * nlc > 0 ? nlr * nlc : 1) * sizeof *a);
    size_t *perm = malloc((n ? n : 1) * sizeof *perm);
    double times[64];
    const int reps = par.reps < 64 ? (int)par.reps : 64;
    for (int r = 0; r < reps; r++) {
        for (size_t li = 0; li < nlr; li++)
            for (size_t lj = 0; lj < nlc; lj++)
                a[li * nlc + lj] = lu_matrix_entry(42, n, li * M + s, lj * N + t);
        bsp_sync();
        double t0 = bsp_time();
        bsplu_spmd(M, N, n, a, perm);
        times[r] = bsp_time() - t0;
    }
    if (pid == 0) {
        bench_result = app_median(times, reps);
        bench_min = times[0]; /* sorted by app_median */
    }
    free(perm);
    free(a);
    bsp_end();
}

int main(int argc, char **argv)
{
    unsigned long ns[MAXLIST] = { 1000 }, ps[MAXLIST] = { 1, 2, 4 };
    int nn = 1, np = 3, reps = 3;
    unsigned gM = 0, gN = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            nn = parse_list(argv[i + 1], ns);
        else if (!strcmp(argv[i], "-p"))
            np = parse_list(argv[i + 1], ps);
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-M"))
            gM = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-N"))
            gN = (unsigned)atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [-n list] [-p list] [-r reps] [-M rows -N cols]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    if (reps > 64)
        reps = 64;
    for (int in = 0; in < nn; in++) {
        const size_t n = ns[in];
        double *a = malloc(n * n * sizeof *a), *w = malloc(n * n * sizeof *w);
        size_t *perm = malloc(n * sizeof *perm), *pref = malloc(n * sizeof *pref);
        double *ref = malloc(n * n * sizeof *ref);
        if (!a || !w || !perm || !pref || !ref) {
            fprintf(stderr, "bench_lu: out of memory\n");
            return 1;
        }
        lu_random_matrix(n, 42, a);
        unsigned gm[MAXLIST], gn[MAXLIST];
        for (int ip = 0; ip < np; ip++) {
            gm[ip] = gM;
            gn[ip] = gN;
            if (!gm[ip] || !gn[ip] || gm[ip] * gn[ip] != ps[ip])
                bsplu_grid((unsigned)ps[ip], &gm[ip], &gn[ip]);
        }
        /* rounds: the sequential code and every p in turn, so that a change
         * in the machine's load hits all of them alike */
        static double ts[64], tb[MAXLIST][64], tc[MAXLIST][64];
        int ok[MAXLIST];
        for (int ip = 0; ip < np; ip++)
            ok[ip] = 1;
        for (int r = 0; r < reps; r++) {
            memcpy(w, a, n * n * sizeof *a);
            double t0 = app_now();
            lu_seq(n, w, pref);
            ts[r] = app_now() - t0;
            memcpy(ref, w, n * n * sizeof *w);
            for (int ip = 0; ip < np; ip++) {
                struct params par = { n, gm[ip], gn[ip], 1 };
                bench_params = &par;
                bsp_init(spmd, argc, argv);
                spmd();
                bench_params = NULL;
                tb[ip][r] = bench_result;
                memcpy(w, a, n * n * sizeof *a);
                t0 = app_now();
                int st = bsplu((unsigned)ps[ip], gm[ip], gn[ip], n, w, perm);
                tc[ip][r] = app_now() - t0;
                ok[ip] = ok[ip] && st == 0 && !memcmp(perm, pref, n * sizeof *perm) &&
                         !memcmp(w, ref, n * n * sizeof *w);
            }
        }
        const double tseq = app_median(ts, reps), tseq_min = ts[0];
        for (int ip = 0; ip < np; ip++) {
            const unsigned P = (unsigned)ps[ip];
            const double tbsp = app_median(tb[ip], reps), tbsp_min = tb[ip][0];
            const double tcall = app_median(tc[ip], reps);
            printf("{\"bench\":\"lu\",\"n\":%zu,\"p\":%u,\"grid\":\"%ux%u\",\"reps\":%d,"
                   "\"t_seq\":%.6f,\"t_bsp\":%.6f,\"t_call\":%.6f,\"speedup\":%.3f,"
                   "\"speedup_call\":%.3f,\"gflops_bsp\":%.3f,\"t_seq_min\":%.6f,\"t_bsp_min\":%.6f,"
                   "\"speedup_min\":%.3f,\"same_as_seq\":%s}\n",
                   n, P, gm[ip], gn[ip], reps, tseq, tbsp, tcall, tseq / tbsp, tseq / tcall,
                   (2.0 / 3.0) * (double)n * n * n / tbsp * 1e-9, tseq_min, tbsp_min, tseq_min / tbsp_min,
                   ok[ip] ? "true" : "false");
            fflush(stdout);
        }
        free(a);
        free(w);
        free(perm);
        free(pref);
        free(ref);
    }
    return 0;
}
