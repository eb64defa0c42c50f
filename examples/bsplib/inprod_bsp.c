/*
 * The inner product of the MulticoreBSP for C paper (Algorithm 2): each
 * process computes its local part of <x, y> and bsp_puts it into slot
 * bsp_pid() of every process's buffer; after one bsp_sync every process adds
 * the p partial sums. Here main itself is the SPMD section.
 * Usage: inprod_bsp [P [n]]
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

/* initialisation: the buffer that receives the partial sums */
static void ip_init(double **ip_buffer)
{
    const size_t size = bsp_nprocs() * sizeof(double);
    *ip_buffer = malloc(size);
    bsp_push_reg(*ip_buffer, size);
}

/* the inner product of the local vectors, summed over all processes */
static double ip(const double *x, const double *y, double *ip_buffer, size_t np)
{
    double alpha = 0.0;
    for (size_t i = 0; i < np; ++i) alpha += x[i] * y[i];
    for (unsigned k = 0; k < bsp_nprocs(); ++k)
        bsp_put(k, &alpha, ip_buffer, bsp_pid() * sizeof(double), sizeof(double));
    bsp_sync();
    for (unsigned k = 1; k < bsp_nprocs(); ++k) ip_buffer[0] += ip_buffer[k];
    return ip_buffer[0];
}

int main(int argc, char **argv)
{
    /* siblings enter main with argc == 0: only pid 0 reads the arguments */
    unsigned P = argc > 1 ? (unsigned)atoi(argv[1]) : bsp_nprocs();
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : 1000000;
    bsp_begin(P);
    double *ip_buffer;
    ip_init(&ip_buffer);
    /* pid 0 tells everybody n */
    bsp_push_reg(&n, sizeof n);
    bsp_sync();
    bsp_get(0, &n, 0, &n, sizeof n);
    bsp_sync();
    bsp_pop_reg(&n);

    /* cyclic distribution of x = y = (1, 2, ..., n) */
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    size_t np = n / p + (s < n % p ? 1 : 0);
    double *x = malloc((np ? np : 1) * sizeof *x);
    for (size_t i = 0; i < np; ++i) x[i] = (double)(s + i * p + 1);
    double alpha = ip(x, x, ip_buffer, np);
    double exact = (double)n * (double)(n + 1) * (double)(2 * n + 1) / 6.0;
    if (s == 0)
        printf("<x,x> = %.17g with %u processes (exact %.17g)%s\n", alpha, p, exact,
                alpha == exact ? "" : " MISMATCH");
    int ok = alpha == exact;
    bsp_pop_reg(ip_buffer);
    bsp_sync();
    free(x);
    free(ip_buffer);
    bsp_end();
    return ok ? 0 : 1;
}
