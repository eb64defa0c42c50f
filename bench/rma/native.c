/*
 * Superstep's own BSPlib applications on the suites' data, for the
 * comparison in bench/rma/run.sh: examples/matmul's bsp_matmul_spmd (p a
 * square) or bsp_matmul_ring_spmd (otherwise) and examples/sort's
 * bsp_radix_sort_spmd, timed the way mult.c and rdx.c time theirs (from a
 * sync before the call to its end, the slowest process, best of reps).
 *
 *   native -m mult [-n n] [-v put|get|hpput|hpget] [-r reps]
 *   native -m rdx  [-n keys] [-a 0|1] [-r reps]
 * Output:
 *   native app=matmul variant=V p=P n=N s=T
 *   native app=radix algo=A p=P n=N s=T
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#include "matmul.h"
#include "sort.h"

static uint64_t opt(int argc, char **argv, const char *name, uint64_t dflt)
{
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], name))
            return strtoull(argv[i + 1], NULL, 10);
    return dflt;
}

static void *xalloc(size_t bytes)
{
    void *x = malloc(bytes ? bytes : 1);
    if (!x)
        bsp_abort("native: out of memory (%zu bytes)\n", bytes);
    return x;
}

/* the slowest process's time, at every process */
static double maxtime(double t)
{
    const unsigned p = bsp_nprocs();
    double *all = xalloc(p * sizeof *all);
    bsp_push_reg(all, p * sizeof *all);
    bsp_sync();
    for (unsigned q = 0; q < p; q++)
        bsp_put(q, &t, all, bsp_pid() * sizeof t, sizeof t);
    bsp_sync();
    for (unsigned q = 0; q < p; q++)
        if (all[q] > t)
            t = all[q];
    bsp_pop_reg(all);
    bsp_sync();
    free(all);
    return t;
}

int main(int argc, char **argv)
{
    bsp_begin(bsp_nprocs());
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    uint64_t par[5] = { 0, 0, 0, 0, 0 };   /* mode (0 mult, 1 rdx), n, variant/algo, reps */
    if (pid == 0) {
        const char *mode = "mult", *v = "hpput";
        for (int i = 1; i + 1 < argc; i += 2) {
            if (!strcmp(argv[i], "-m"))
                mode = argv[i + 1];
            if (!strcmp(argv[i], "-v"))
                v = argv[i + 1];
        }
        par[0] = !strcmp(mode, "rdx");
        par[1] = opt(argc, argv, "-n", par[0] ? 1024000 : 320);
        par[2] = par[0] ? opt(argc, argv, "-a", 0)
               : !strcmp(v, "put") ? MM_PUT : !strcmp(v, "get") ? MM_GET
               : !strcmp(v, "hpget") ? MM_HPGET : MM_HPPUT;
        par[3] = opt(argc, argv, "-r", 1);
    }
    bsp_push_reg(par, sizeof par);
    bsp_sync();
    if (pid == 0)
        for (unsigned q = 1; q < p; q++)
            bsp_put(q, par, par, 0, sizeof par);
    bsp_sync();
    bsp_pop_reg(par);
    const size_t n = (size_t)par[0 + 1];
    const int var = (int)par[2];
    const unsigned reps = par[3] ? (unsigned)par[3] : 1;
    double best = 1e300;

    if (par[0] == 0) {
        unsigned q = mm_grid(p);
        const int grid = q * q == p;
        size_t r0 = 0, m = 0, nb = 0;
        double *a, *b, *c;
        if (grid) {
            nb = (n + q - 1) / q;
            a = xalloc(nb * nb * sizeof *a);
            b = xalloc(nb * nb * sizeof *b);
            c = xalloc(nb * nb * sizeof *c);
            const unsigned pi = pid % q, pj = pid / q;
            for (size_t i = 0; i < nb; i++)
                for (size_t j = 0; j < nb; j++) {
                    const size_t gi = pi * nb + i, gj = pj * nb + j;
                    const int in = gi < n && gj < n;
                    a[i * nb + j] = in ? mm_entry(1, n, gi, gj) : 0.0;
                    b[i * nb + j] = in ? mm_entry(2, n, gi, gj) : 0.0;
                }
        } else {
            m = mm_rows(n, p, pid, &r0);
            a = xalloc(m * n * sizeof *a);
            b = xalloc(m * n * sizeof *b);
            c = xalloc(m * n * sizeof *c);
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    a[i * n + j] = mm_entry(1, n, r0 + i, j);
                    b[i * n + j] = mm_entry(2, n, r0 + i, j);
                }
        }
        for (unsigned r = 0; r < reps; r++) {
            bsp_sync();
            const double t0 = bsp_time();
            if (grid)
                bsp_matmul_spmd(nb, a, b, c, var);
            else
                bsp_matmul_ring_spmd(n, a, b, c, var);
            const double t = maxtime(bsp_time() - t0);
            if (t < best)
                best = t;
        }
        static const char *const vn[] = { "put", "get", "hpput", "hpget" };
        if (pid == 0)
            printf("native app=matmul variant=%s p=%u n=%zu s=%.6f\n", vn[var], p, n, best);
        free(a);
        free(b);
        free(c);
    } else {
        const size_t first = pid * (n / p) + (pid < n % p ? pid : n % p);
        const size_t nl = n / p + (pid < n % p);
        uint32_t *keys = xalloc(nl * sizeof *keys);
        for (unsigned r = 0; r < reps; r++) {
            for (size_t i = 0; i < nl; i++)
                keys[i] = sort_key(5, 0, first + i);
            bsp_sync();
            const double t0 = bsp_time();
            bsp_radix_sort_spmd(keys, nl, var);
            const double t = maxtime(bsp_time() - t0);
            if (t < best)
                best = t;
        }
        if (pid == 0)
            printf("native app=radix algo=%s p=%u n=%zu s=%.6f\n", var ? "rdxsortopt" : "rdxsort",
                   p, n, best);
        free(keys);
    }
    bsp_end();
    return 0;
}
