/*
 * bench_bsearch: parallel binary search on a search butterfly
 * (examples/bsearch, PUB Programs 1, 2a, 2b) against the sequential binary
 * search of the same queries in the same table. One JSON line per
 * (program, p):
 * The codes are timed in rounds (sequential, then each p and program, then
 * again), so that a change in the load of the (shared) machine hits all
 * alike.
 *   t_seq   median time of bs_seq (M lower-bound searches in N keys)
 *   t_bsp   median time of bsp_bsearch_spmd on data already distributed
 *           (each process makes its blocks of table and queries from the
 *           global indices): routing + local search + answers back
 *   t_call  the library call bsp_bsearch() from sequential code (start the
 *           run, scatter table and queries from pid 0, search, gather)
 *   us_per_query_per_proc = t_bsp * p / M * 1e6 (the paper's y-axis, which
 *           counts the routing only; ours includes the local search)
 *
 *   bench_bsearch [-N 2^22] [-M 2^21] [-p 1,2,4] [-r reps] [-v 1,2a,2b]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "app_util.h"
#include "bsearch.h"

struct params {
    uint64_t N, M, variant, reps, P;
};

static _Thread_local struct params *bench_params; /* pid 0 only */
static _Thread_local double bench_result, bench_min;

static const uint64_t SEED = 77;

static size_t block_len(size_t n, unsigned p, unsigned k) { return n / p + (k < n % p); }
static size_t block_start(size_t n, unsigned p, unsigned k)
{
    return k * (n / p) + (k < n % p ? k : n % p);
}

static void spmd(void)
{
    struct params *pp = bench_params;
    bsp_begin(pp ? (bsp_pid_t)pp->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    struct params par;
    if (pid == 0) {
        par = *pp;
        for (unsigned r = 1; r < p; r++)
            bsp_send(r, NULL, &par, sizeof par);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(&par, sizeof par);
    const size_t N = par.N, M = par.M;
    const size_t nt = block_len(N, p, pid), t0i = block_start(N, p, pid);
    const size_t nq = block_len(M, p, pid), q0i = block_start(M, p, pid);
    uint32_t *table = malloc((nt ? nt : 1) * sizeof *table), *q = malloc((nq ? nq : 1) * sizeof *q);
    size_t *out = malloc((nq ? nq : 1) * sizeof *out);
    if (!table || !q || !out)
        bsp_abort("bench_bsearch: out of memory\n");
    for (size_t i = 0; i < nt; i++)
        table[i] = bs_table_entry(SEED, t0i + i);
    for (size_t i = 0; i < nq; i++)
        q[i] = bs_query(SEED, N, q0i + i);
    double times[64];
    const int reps = par.reps < 64 ? (int)par.reps : 64;
    for (int r = 0; r < reps; r++) {
        bsp_sync();
        double t0 = bsp_time();
        bsp_bsearch_spmd(table, nt, q, nq, out, (int)par.variant);
        times[r] = bsp_time() - t0;
    }
    if (pid == 0) {
        bench_result = app_median(times, reps);
        bench_min = times[0]; /* sorted by app_median */
    }
    free(table);
    free(q);
    free(out);
    bsp_end();
}

int main(int argc, char **argv)
{
    size_t N = 1u << 22, M = 1u << 21;
    unsigned long ps[16] = { 1, 2, 4 };
    int np = 3, reps = 3, vars[3] = { BS_PROG1, BS_PROG2A, BS_PROG2B }, nv = 3;
    static const char *vname[] = { "", "1", "2a", "2b" };
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-N"))
            N = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-M"))
            M = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "-p")) {
            np = 0;
            char list[128];
            snprintf(list, sizeof list, "%s", argv[i + 1]);
            for (char *tok = strtok(list, ","); tok && np < 16; tok = strtok(NULL, ","))
                ps[np++] = strtoul(tok, NULL, 10);
        } else if (!strcmp(argv[i], "-v")) {
            nv = 0;
            char list[128];
            snprintf(list, sizeof list, "%s", argv[i + 1]);
            for (char *tok = strtok(list, ","); tok && nv < 3; tok = strtok(NULL, ","))
                for (int v = BS_PROG1; v <= BS_PROG2B; v++)
                    if (!strcmp(tok, vname[v]))
                        vars[nv++] = v;
        } else {
            fprintf(stderr, "usage: %s [-N table] [-M queries] [-p list] [-r reps] [-v 1,2a,2b]\n", argv[0]);
            return 2;
        }
    }
    if (N >= (1ull << 31)) {
        fprintf(stderr, "bench_bsearch: N must be below 2^31\n");
        return 2;
    }
    uint32_t *table = malloc((N ? N : 1) * sizeof *table), *q = malloc((M ? M : 1) * sizeof *q);
    size_t *out = malloc((M ? M : 1) * sizeof *out), *ref = malloc((M ? M : 1) * sizeof *ref);
    if (!table || !q || !out || !ref) {
        fprintf(stderr, "bench_bsearch: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < N; i++)
        table[i] = bs_table_entry(SEED, i);
    for (size_t i = 0; i < M; i++)
        q[i] = bs_query(SEED, N, i);
    if (reps > 64)
        reps = 64;
    /* rounds: the sequential search and every (p, program) in turn, so that
     * a change in the load of the (shared) machine hits all of them alike */
    static double ts[64], tb[16][3][64], tc[16][3][64];
    int ok[16][3];
    for (int ip = 0; ip < np; ip++)
        for (int iv = 0; iv < nv; iv++)
            ok[ip][iv] = 1;
    for (int r = 0; r < reps; r++) {
        double t0 = app_now();
        bs_seq(table, N, q, M, ref);
        ts[r] = app_now() - t0;
        for (int ip = 0; ip < np; ip++)
            for (int iv = 0; iv < nv; iv++) {
                struct params par = { N, M, (uint64_t)vars[iv], 1, ps[ip] };
                bench_params = &par;
                bsp_init(spmd, argc, argv);
                spmd();
                bench_params = NULL;
                tb[ip][iv][r] = bench_result;
                t0 = app_now();
                int st = bsp_bsearch((unsigned)ps[ip], table, N, q, M, out, vars[iv]);
                tc[ip][iv][r] = app_now() - t0;
                ok[ip][iv] = ok[ip][iv] && st == 0 && (M == 0 || !memcmp(out, ref, M * sizeof *out));
            }
    }
    const double tseq = app_median(ts, reps), tseq_min = ts[0];
    for (int ip = 0; ip < np; ip++) {
        const unsigned P = (unsigned)ps[ip];
        for (int iv = 0; iv < nv; iv++) {
            const double tbsp = app_median(tb[ip][iv], reps), tbsp_min = tb[ip][iv][0];
            const double tcall = app_median(tc[ip][iv], reps);
            printf("{\"bench\":\"bsearch\",\"program\":\"%s\",\"N\":%zu,\"M\":%zu,\"p\":%u,\"reps\":%d,"
                   "\"t_seq\":%.6f,\"t_bsp\":%.6f,\"t_call\":%.6f,\"speedup\":%.3f,\"speedup_call\":%.3f,"
                   "\"us_per_query_per_proc\":%.4f,\"t_seq_min\":%.6f,\"t_bsp_min\":%.6f,"
                   "\"speedup_min\":%.3f,\"correct\":%s}\n",
                   vname[vars[iv]], N, M, P, reps, tseq, tbsp, tcall, tseq / tbsp, tseq / tcall,
                   M ? tbsp * P / (double)M * 1e6 : 0.0, tseq_min, tbsp_min, tseq_min / tbsp_min,
                   ok[ip][iv] ? "true" : "false");
            fflush(stdout);
        }
    }
    free(table);
    free(q);
    free(out);
    free(ref);
    return 0;
}
