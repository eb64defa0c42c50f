/*
 * bench_matmul: Cannon-style MatMul / MatMulG (examples/matmul) against the
 * blocked sequential loop (the same local kernel). One JSON line per
 * (variant, p):
 * The codes are timed in rounds (sequential, then each p and variant, then
 * again), so that a change in the load of the (shared) machine hits all
 * alike.
 *   t_seq   median time of mm_blocked (C = A*B, n x n)
 *   t_bsp   median time of bsp_matmul_spmd on blocks already distributed
 *           (each process makes its blocks of A and B from global indices)
 *   t_call  the library call bsp_matmul() from sequential code (start the
 *           run, scatter from pid 0, multiply, gather)
 *   grid    "cannon qxq" if p = q*q, else "ring p" (Cannon on a p x 1 grid)
 *
 *   bench_matmul [-n 960] [-p 1,2,4] [-r reps] [-v put,get,hpput,hpget]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "matmul.h"

struct params {
    uint64_t n, variant, reps, P;
};

static _Thread_local struct params *bench_params; /* pid 0 only */
static _Thread_local double bench_result, bench_min;

static const char *vname[] = { "put", "get", "hpput", "hpget" };

static void spmd(void)
{
    struct params *pp = bench_params;
    bsp_begin(pp ? (bsp_pid_t)pp->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid(), q = mm_grid(p);
    struct params par;
    if (pid == 0) {
        par = *pp;
        for (unsigned r = 1; r < p; r++)
            bsp_send(r, NULL, &par, sizeof par);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(&par, sizeof par);
    const size_t n = par.n, nb = (n + q - 1) / q;
    const int ring = q * q != p; /* p not a square: the ring on all p */
    const int active = ring || pid < q * q;
    size_t r0 = 0;
    const size_t m = mm_rows(n, p, pid, &r0);
    const size_t elems = ring ? m * n : nb * nb;
    double *a = NULL, *b = NULL, *c = NULL;
    if (active) {
        const unsigned bi = pid % q, bj = pid / q;
        a = malloc((elems ? elems : 1) * sizeof *a);
        b = malloc((elems ? elems : 1) * sizeof *b);
        c = malloc((elems ? elems : 1) * sizeof *c);
        if (!a || !b || !c)
            bsp_abort("bench_matmul: out of memory\n");
        if (ring) {
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    a[i * n + j] = mm_entry(1, n, r0 + i, j);
                    b[i * n + j] = mm_entry(2, n, r0 + i, j);
                }
        } else {
            for (size_t i = 0; i < nb; i++)
                for (size_t j = 0; j < nb; j++) {
                    const size_t gi = bi * nb + i, gj = bj * nb + j;
                    const int in = gi < n && gj < n;
                    a[i * nb + j] = in ? mm_entry(1, n, gi, gj) : 0.0;
                    b[i * nb + j] = in ? mm_entry(2, n, gi, gj) : 0.0;
                }
        }
    }
    double times[64];
    const int reps = par.reps < 64 ? (int)par.reps : 64;
    for (int r = 0; r < reps; r++) {
        bsp_sync();
        double t0 = bsp_time();
        if (ring)
            bsp_matmul_ring_spmd(n, a, b, c, (int)par.variant);
        else
            bsp_matmul_spmd(nb, a, b, c, (int)par.variant);
        times[r] = bsp_time() - t0;
    }
    if (pid == 0) {
        bench_result = app_median(times, reps);
        bench_min = times[0]; /* sorted by app_median */
    }
    free(a);
    free(b);
    free(c);
    bsp_end();
}

static int parse_list(const char *s, unsigned long *v, int max)
{
    int k = 0;
    while (*s && k < max) {
        char *end;
        v[k++] = strtoul(s, &end, 10);
        if (end == s)
            break;
        s = (*end == ',') ? end + 1 : end;
    }
    return k;
}

int main(int argc, char **argv)
{
    size_t n = 960;
    unsigned long ps[16] = { 1, 2, 4 };
    int np = 3, reps = 3, vars[4] = { MM_PUT, MM_GET, MM_HPPUT, MM_HPGET }, nv = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-p"))
            np = parse_list(argv[i + 1], ps, 16);
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "-v")) {
            nv = 0;
            char list[128];
            snprintf(list, sizeof list, "%s", argv[i + 1]);
            for (char *tok = strtok(list, ","); tok && nv < 4; tok = strtok(NULL, ","))
                for (int v = 0; v < 4; v++)
                    if (!strcmp(tok, vname[v]))
                        vars[nv++] = v;
        } else {
            fprintf(stderr, "usage: %s [-n size] [-p list] [-r reps] [-v put,get,hpput,hpget]\n", argv[0]);
            return 2;
        }
    }
    const size_t bytes = (n ? n * n : 1) * sizeof(double);
    double *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), *R = malloc(bytes);
    if (!A || !B || !C || !R) {
        fprintf(stderr, "bench_matmul: out of memory\n");
        return 1;
    }
    mm_random_matrix(n, 1, A);
    mm_random_matrix(n, 2, B);
    if (reps > 64)
        reps = 64;
    /* rounds: the sequential loop and every (p, variant) in turn, so that a
     * change in the load of the (shared) machine hits all of them alike */
    static double ts[64], tb[16][4][64], tc[16][4][64];
    int ok[16][4];
    for (int ip = 0; ip < np; ip++)
        for (int iv = 0; iv < nv; iv++)
            ok[ip][iv] = 1;
    for (int r = 0; r < reps; r++) {
        double t0 = app_now();
        mm_blocked(n, A, B, R);
        ts[r] = app_now() - t0;
        for (int ip = 0; ip < np; ip++)
            for (int iv = 0; iv < nv; iv++) {
                struct params par = { n, (uint64_t)vars[iv], 1, ps[ip] };
                bench_params = &par;
                bsp_init(spmd, argc, argv);
                spmd();
                bench_params = NULL;
                tb[ip][iv][r] = bench_result;
                t0 = app_now();
                int st = bsp_matmul((unsigned)ps[ip], n, A, B, C, vars[iv]);
                tc[ip][iv][r] = app_now() - t0;
                ok[ip][iv] = ok[ip][iv] && st == 0 && mm_max_rel_diff(n, C, R) < 1e-12;
            }
    }
    const double tseq = app_median(ts, reps), tseq_min = ts[0];
    const double flop = 2.0 * (double)n * n * n;
    for (int ip = 0; ip < np; ip++) {
        const unsigned P = (unsigned)ps[ip], q = mm_grid(P);
        char grid[32];
        if (q * q == P)
            snprintf(grid, sizeof grid, "cannon %ux%u", q, q);
        else
            snprintf(grid, sizeof grid, "ring %u", P);
        for (int iv = 0; iv < nv; iv++) {
            const double tbsp = app_median(tb[ip][iv], reps), tbsp_min = tb[ip][iv][0];
            const double tcall = app_median(tc[ip][iv], reps);
            printf("{\"bench\":\"matmul\",\"variant\":\"%s\",\"n\":%zu,\"p\":%u,\"grid\":\"%s\",\"reps\":%d,"
                   "\"t_seq\":%.6f,\"t_bsp\":%.6f,\"t_call\":%.6f,\"speedup\":%.3f,\"speedup_call\":%.3f,"
                   "\"gflops_seq\":%.3f,\"gflops_bsp\":%.3f,\"t_seq_min\":%.6f,\"t_bsp_min\":%.6f,"
                   "\"speedup_min\":%.3f,\"correct\":%s}\n",
                   vname[vars[iv]], n, P, grid, reps, tseq, tbsp, tcall, tseq / tbsp, tseq / tcall,
                   flop / tseq * 1e-9, flop / tbsp * 1e-9, tseq_min, tbsp_min, tseq_min / tbsp_min,
                   ok[ip][iv] ? "true" : "false");
            fflush(stdout);
        }
    }
    free(A);
    free(B);
    free(C);
    free(R);
    return 0;
}
