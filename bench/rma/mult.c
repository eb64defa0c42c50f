/*
 * The Mult suite of the RMA paper, written once against <rma.h>: C = A*B
 * for n x n matrices of doubles.
 *   MatMul  (-v put): Cannon-style (Fig. 7), blocks arrive by put
 *   MatMulG (-v get): the same schedule, blocks fetched by get (Fig. 8)
 * With p = q*q processes the q x q grid of the paper: process pj*q + pi
 * owns block (pi, pj) of A, B and C; in round l it puts its A block to
 * ((2q - pi - pj + l) mod q)*q + pi and its B block to
 * ((2q - pi - pj + l) mod q) + pj*q (or gets A(pi, k) from k*q + pi and
 * B(k, pj) from pj*q + k, k = (pi + pj + l) mod q). With p not a square,
 * the same scheme on a p x 1 grid (a ring; examples/matmul does the same):
 * process k owns the rows block k and receives in round l the rows block
 * (k + l) mod p of B. Blocks of round l land in half l mod 2 of the receive
 * area and the requests of round l + 1 go out before the product of round
 * l: one sync per round. The local product is examples/matmul's kernel.
 * With -DRMA_TWO_SIDED (MPI only) the blocks travel by MPI_Irecv +
 * MPI_Send instead (the paper's send/receive MatMul).
 *
 *   mult [-n n] [-v put|get] [-r reps] [-s 1: time the sequential product]
 *        [-c 0: no check]
 *
 * Every process generates its own blocks (entry (i, j) of A: mm_entry(1,
 * n, i, j), of B: mm_entry(2, n, i, j)); the check compares C x with
 * A (B x) on each process's part for a fixed vector x.
 * Output:
 *   mult lib=L variant=V p=P n=N grid=QxQ|ring s=T      (best of reps)
 *   mult seq n=N s=T                                    (with -s 1)
 *   mult lib=L p=P check=ok|FAILED
 */
#include <math.h>

#include "li_util.h"
#include "matmul.h"

#ifdef RMA_TWO_SIDED
# ifndef RMA_MPI
#  error "RMA_TWO_SIDED needs RMA_MPI"
# endif
# undef LI_VARIANT
# define LI_VARIANT "mpi-2sided"
#endif

#define DSZ sizeof(double)

static double *mult_alloc(size_t n)
{
    double *x = (double *)malloc((n ? n : 1) * DSZ);
    if (!x)
        LIABORT("mult: out of memory (%zu doubles)\n", n);
    return x;
}

/* rows of process k in the ring: n/p, one more for k < n mod p */
static size_t mult_rows(size_t n, unsigned p, unsigned k, size_t *first)
{
    if (first)
        *first = k * (n / p) + (k < n % p ? k : n % p);
    return n / p + (k < n % p);
}

static double mult_x(size_t j) { return (j % 2 ? -1.0 : 1.0) / (double)(1 + j % 7); }

/* my part of C: rows [r0, r0+nr) x columns [c0, c0+nc) of the n x n
 * product, stored row-major with row stride ld; 1 if C x = A (B x) there */
static int mult_check(size_t n, size_t r0, size_t nr, size_t c0, size_t nc, const double *c,
                      size_t ld)
{
    double *y = mult_alloc(n);
    double amax = 0.0;
    for (size_t k = 0; k < n; k++) {
        double s = 0.0;
        for (size_t j = c0; j < c0 + nc; j++)
            s += mm_entry(2, n, k, j) * mult_x(j);
        y[k] = s;
    }
    int ok = 1;
    for (size_t i = 0; i < nr; i++) {
        double ref = 0.0, got = 0.0;
        for (size_t k = 0; k < n; k++)
            ref += mm_entry(1, n, r0 + i, k) * y[k];
        for (size_t j = 0; j < nc; j++)
            got += c[i * ld + j] * mult_x(c0 + j);
        if (fabs(ref) > amax)
            amax = fabs(ref);
        if (fabs(got - ref) > 1e-9 * (double)n * (1.0 + fabs(ref)))
            ok = 0;
    }
    free(y);
    return ok;
}

/* q x q grid; blocks nb x nb, zero-padded beyond n */
static double mult_grid(size_t n, unsigned q, int use_get, int *ok, int check)
{
    const unsigned pid = (unsigned)LIPID(), pi = pid % q, pj = pid / q;
    const size_t nb = (n + q - 1) / q, bb = nb * nb;
    double *ab = mult_alloc(2 * bb), *c = mult_alloc(bb), *buf = mult_alloc(4 * bb);
    double *a = ab, *b = ab + bb;
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < nb; j++) {
            const size_t gi = pi * nb + i, gj = pj * nb + j;
            const int in = gi < n && gj < n;
            a[i * nb + j] = in ? mm_entry(1, n, gi, gj) : 0.0;
            b[i * nb + j] = in ? mm_entry(2, n, gi, gj) : 0.0;
        }
    memset(c, 0, bb * DSZ);
    /* put: blocks arrive in buf = [a0 | b0 | a1 | b1]; get: the owners' ab */
#ifndef RMA_TWO_SIDED
    if (use_get)
        LIREGISTER(ab, 2 * bb * DSZ);
    else
        LIREGISTER(buf, 4 * bb * DSZ);
    LIINIT();
    LICOMMIT();
#else
    (void)use_get;
    MPI_Request req[2];
#endif
    LIBARRIER();
    const double t0 = LITIME();
    for (unsigned l = 0; l <= q; l++) {
        if (l < q) {   /* requests of round l */
            const size_t x = (size_t)(l % 2) * 2 * bb;
#ifdef RMA_TWO_SIDED
            const unsigned k = (2 * q + l - pi - pj) % q;   /* A(pi, k), B(k, pj) */
            MPI_Irecv(buf + x, (int)bb, MPI_DOUBLE, (int)(k * q + pi), 1, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(buf + x + bb, (int)bb, MPI_DOUBLE, (int)(pj * q + k), 2, MPI_COMM_WORLD,
                      &req[1]);
            const unsigned r = (2 * q - pi - pj + l) % q;
            MPI_Send(a, (int)bb, MPI_DOUBLE, (int)(r * q + pi), 1, MPI_COMM_WORLD);
            MPI_Send(b, (int)bb, MPI_DOUBLE, (int)(r + pj * q), 2, MPI_COMM_WORLD);
#else
            if (use_get) {
                const unsigned k = (pi + pj + l) % q;
                LIGET(k * q + pi, ab, 0, buf + x, bb * DSZ);
                LIGET(pj * q + k, ab, bb * DSZ, buf + x + bb, bb * DSZ);
            } else {
                const unsigned r = (2 * q - pi - pj + l) % q;
                LIPUT(r * q + pi, a, buf, x * DSZ, bb * DSZ);
                LIPUT(r + pj * q, b, buf, (x + bb) * DSZ, bb * DSZ);
            }
#endif
        }
        if (l > 0) {   /* product of round l - 1 */
            const double *blk = buf + (size_t)((l - 1) % 2) * 2 * bb;
            mm_block_add(nb, blk, blk + bb, c);
        }
        if (l < q) {
#ifdef RMA_TWO_SIDED
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
#else
            LISYNC();
            LIBARRIER();
#endif
        }
    }
    double t = LITIME() - t0;
#ifndef RMA_TWO_SIDED
    LIDEREGISTER(use_get ? ab : buf);
#endif
    if (check) {
        const size_t r0 = pi * nb, c0 = pj * nb;
        const size_t nr = r0 < n ? (n - r0 < nb ? n - r0 : nb) : 0;
        const size_t nc = c0 < n ? (n - c0 < nb ? n - c0 : nb) : 0;
        *ok &= mult_check(n, r0, nr, c0, nc, c, nb);
    }
    free(ab);
    free(c);
    free(buf);
    return t;
}

/* p x 1 grid: process k holds rows block k of A, B and C */
static double mult_ring(size_t n, int use_get, int *ok, int check)
{
    const unsigned p = (unsigned)LINPROCS(), pid = (unsigned)LIPID();
    size_t r0;
    const size_t m = mult_rows(n, p, pid, &r0), mmax = mult_rows(n, p, 0, NULL);
    double *a = mult_alloc(m * n), *b = mult_alloc(m * n), *c = mult_alloc(m * n);
    double *buf = mult_alloc(2 * mmax * n);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            a[i * n + j] = mm_entry(1, n, r0 + i, j);
            b[i * n + j] = mm_entry(2, n, r0 + i, j);
        }
    memset(c, 0, m * n * DSZ);
#ifndef RMA_TWO_SIDED
    if (use_get)
        LIREGISTER(b, m * n * DSZ);
    else
        LIREGISTER(buf, 2 * mmax * n * DSZ);
    LIINIT();
    LICOMMIT();
#else
    (void)use_get;
    MPI_Request req;
#endif
    LIBARRIER();
    const double t0 = LITIME();
    /* round l: my rows times B's rows block (pid + l) mod p; round 0: my own */
    for (unsigned l = 0; l < p; l++) {
        if (l + 1 < p) {   /* requests of round l + 1, into half (l + 1) mod 2 */
            const size_t x = (size_t)((l + 1) % 2) * mmax * n;
            const unsigned src = (pid + l + 1) % p, dst = (pid + p - (l + 1)) % p;
#ifdef RMA_TWO_SIDED
            MPI_Irecv(buf + x, (int)(mult_rows(n, p, src, NULL) * n), MPI_DOUBLE, (int)src, 3,
                      MPI_COMM_WORLD, &req);
            MPI_Send(b, (int)(m * n), MPI_DOUBLE, (int)dst, 3, MPI_COMM_WORLD);
#else
            if (use_get)
                LIGET(src, b, 0, buf + x, mult_rows(n, p, src, NULL) * n * DSZ);
            else
                LIPUT(dst, b, buf, x * DSZ, m * n * DSZ);
#endif
        }
        size_t rj;
        const unsigned j = (pid + l) % p;
        const size_t mj = mult_rows(n, p, j, &rj);
        if (m && mj)
            mm_gemm_add(m, n, mj, a + rj, n, l == 0 ? b : buf + (size_t)(l % 2) * mmax * n, n,
                        c, n);
        if (l + 1 < p) {
#ifdef RMA_TWO_SIDED
            MPI_Wait(&req, MPI_STATUS_IGNORE);
#else
            LISYNC();
            LIBARRIER();
#endif
        }
    }
    double t = LITIME() - t0;
#ifndef RMA_TWO_SIDED
    LIDEREGISTER(use_get ? b : buf);
#endif
    if (check)
        *ok &= mult_check(n, r0, m, 0, n, c, n);
    free(a);
    free(b);
    free(c);
    free(buf);
    return t;
}

int main(int argc, char **argv)
{
    LIBEGIN(LINPROCS());
    const int p = LINPROCS(), pid = LIPID();
    static const char *const names[] = { "-n", "-v", "-r", "-s", "-c", NULL };
    uint64_t par[6] = { 0, 0, 0, 0, 0, 0 };
    if (pid == 0) {
        par[0] = li_opt(argc, argv, "-n", 320);
        par[2] = li_opt(argc, argv, "-r", 1);
        par[3] = li_opt(argc, argv, "-s", 0);
        par[4] = li_opt(argc, argv, "-c", 1);
        par[5] = !li_opts_ok(argc, argv, names);
        for (int i = 1; i + 1 < argc; i += 2)
            if (!strcmp(argv[i], "-v")) {
                if (!strcmp(argv[i + 1], "get"))
                    par[1] = 1;
                else if (strcmp(argv[i + 1], "put")) {
                    fprintf(stderr, "%s: -v put or -v get, not '%s'\n", argv[0], argv[i + 1]);
                    par[5] = 1;
                }
            }
    }
    li_bcast_u64(par, 6);
    if (par[5]) {
        LIEND();
        return 2;
    }
    const size_t n = (size_t)par[0];
    const int use_get = (int)par[1], check = (int)par[4];
    const unsigned reps = par[2] ? (unsigned)par[2] : 1;
#ifdef RMA_TWO_SIDED
    const char *vname = "send";
#else
    const char *vname = use_get ? "get" : "put";
#endif
    unsigned q = 1;
    while ((q + 1) * (q + 1) <= (unsigned)p)
        q++;
    const int grid = q * q == (unsigned)p;

    if (par[3] && pid == 0) {   /* the sequential product, at process 0 */
        double *A = mult_alloc(n * n), *B = mult_alloc(n * n), *C = mult_alloc(n * n);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                A[i * n + j] = mm_entry(1, n, i, j);
                B[i * n + j] = mm_entry(2, n, i, j);
            }
        double best = 1e300;
        for (unsigned r = 0; r < reps; r++) {
            double t0 = LITIME();
            mm_blocked(n, A, B, C);
            double t = LITIME() - t0;
            if (t < best)
                best = t;
        }
        printf("mult seq n=%zu s=%.6f\n", n, best);
        free(A);
        free(B);
        free(C);
    }

    int ok = 1;
    double best = 1e300;
    for (unsigned r = 0; r < reps; r++) {
        double t = grid ? mult_grid(n, q, use_get, &ok, check && r == 0)
                        : mult_ring(n, use_get, &ok, check && r == 0);
        li_max_f64(&t, 1);
        if (t < best)
            best = t;
    }
    ok = li_all_ok(ok);
    if (pid == 0) {
        if (grid)
            printf("mult lib=%s variant=%s p=%d n=%zu grid=%ux%u s=%.6f\n", LI_VARIANT, vname, p,
                   n, q, q, best);
        else
            printf("mult lib=%s variant=%s p=%d n=%zu grid=ring s=%.6f\n", LI_VARIANT, vname, p,
                   n, best);
        printf("mult lib=%s p=%d check=%s\n", LI_VARIANT, p, check ? (ok ? "ok" : "FAILED")
               : "skipped");
    }
    LIEND();
    return ok ? 0 : 1;
}
