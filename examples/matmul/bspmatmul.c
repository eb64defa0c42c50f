/*
 * Cannon-style matrix multiplication of the RMA paper (Figs. 7 and 8).
 *
 * MatMul (put), round l: process (pi, pj) puts its own A block to process
 * ((2q - pi - pj + l) mod q) * q + pi and its own B block to process
 * ((2q - pi - pj + l) mod q) + pj * q; so (i, j) receives A(i, k) and
 * B(k, j) with k = (l - i - j) mod q.
 * MatMulG (get), round l: process (pi, pj) gets A(pi, k) from process
 * k*q + pi and B(k, pj) from process pj*q + k, k = (pi + pj + l) mod q.
 * (The paper's Fig. 8 names processor k*q + pi for the B block too; that
 * holds A(pi, k), so we take the owner of B(k, pj).)
 *
 * The blocks of round l land in buffer l % 2; the requests of round l + 1
 * are issued before the product of round l is computed, so one sync per
 * round suffices, and the unbuffered variants are safe: a buffer is written
 * again only two rounds later, after its owner has passed the sync that ends
 * the round in which it read it. The paper transposes a before the local
 * product because it stores blocks column-major; we store them row-major
 * and use the i-k-j loop, which runs along rows of b and c.
 *
 * For p not a square the library call runs the same scheme on a p x 1 grid
 * (bsp_matmul_ring_spmd): process k owns the rows block k of A, B and C; in
 * round l it gets (or is put) the rows block (k + l) mod p of B from its
 * owner and multiplies it with the matching columns of its rows of A. The
 * A "shift" of Cannon is then only a change of column offset.
 */
#define _POSIX_C_SOURCE 200809L
#include "matmul.h"

#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#define DSZ sizeof(double)

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bsp_abort("bspmatmul: out of memory (%zu bytes)\n", bytes);
    return p;
}

unsigned mm_grid(unsigned p)
{
    unsigned q = 1;
    while ((unsigned long)(q + 1) * (q + 1) <= p)
        q++;
    return q;
}

void bsp_matmul_spmd(size_t nb, const double *a, const double *b, double *c, int variant)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid(), q = mm_grid(p);
    const int active = pid < q * q;
    const int use_get = (variant == MM_GET || variant == MM_HPGET);
    const int hp = (variant == MM_HPPUT || variant == MM_HPGET);
    const unsigned pi = pid % q, pj = pid / q;
    const size_t bytes = active ? nb * nb * DSZ : 0;

    double *abuf[2] = { NULL, NULL }, *bbuf[2] = { NULL, NULL };
    if (active)
        for (int x = 0; x < 2; x++) {
            abuf[x] = xmalloc(bytes);
            bbuf[x] = xmalloc(bytes);
        }
    /* puts write into the receive buffers; gets read the owners' blocks */
    if (use_get) {
        bsp_push_reg(active ? a : NULL, bytes);
        bsp_push_reg(active ? b : NULL, bytes);
    } else {
        for (int x = 0; x < 2; x++) {
            bsp_push_reg(abuf[x], bytes);
            bsp_push_reg(bbuf[x], bytes);
        }
    }
    bsp_sync();

    for (unsigned l = 0; l <= q; l++) {
        /* requests of round l (issued before the product of round l - 1) */
        if (active && l < q) {
            const int x = (int)(l % 2);
            if (use_get) {
                const unsigned k = (pi + pj + l) % q;
                if (hp) {
                    bsp_hpget(k * q + pi, a, 0, abuf[x], bytes);
                    bsp_hpget(pj * q + k, b, 0, bbuf[x], bytes);
                } else {
                    bsp_get(k * q + pi, a, 0, abuf[x], bytes);
                    bsp_get(pj * q + k, b, 0, bbuf[x], bytes);
                }
            } else {
                const unsigned r = (2 * q - pi - pj + l) % q;
                if (hp) {
                    bsp_hpput(r * q + pi, a, abuf[x], 0, bytes);
                    bsp_hpput(r + pj * q, b, bbuf[x], 0, bytes);
                } else {
                    bsp_put(r * q + pi, a, abuf[x], 0, bytes);
                    bsp_put(r + pj * q, b, bbuf[x], 0, bytes);
                }
            }
        }
        /* product of round l - 1 */
        if (active && l > 0) {
            const int x = (int)((l - 1) % 2);
            if (l == 1)
                memset(c, 0, bytes);
            mm_block_add(nb, abuf[x], bbuf[x], c);
        }
        if (l < q)
            bsp_sync();
    }

    if (use_get) {
        bsp_pop_reg(active ? b : NULL);
        bsp_pop_reg(active ? a : NULL);
    } else {
        for (int x = 1; x >= 0; x--) {
            bsp_pop_reg(bbuf[x]);
            bsp_pop_reg(abuf[x]);
        }
    }
    bsp_sync();
    for (int x = 0; x < 2; x++) {
        free(abuf[x]);
        free(bbuf[x]);
    }
}

/* ---- the ring (Cannon on a p x 1 grid) for p not a square ------------------------ */

size_t mm_rows(size_t n, unsigned p, unsigned k, size_t *first)
{
    if (first)
        *first = k * (n / p) + (k < n % p ? k : n % p);
    return n / p + (k < n % p);
}

void bsp_matmul_ring_spmd(size_t n, const double *a, const double *b, double *c, int variant)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    const int use_get = (variant == MM_GET || variant == MM_HPGET);
    const int hp = (variant == MM_HPPUT || variant == MM_HPGET);
    const size_t m = mm_rows(n, p, pid, NULL), mmax = mm_rows(n, p, 0, NULL);
    double *bbuf[2] = { xmalloc(mmax * n * DSZ), xmalloc(mmax * n * DSZ) };
    if (use_get) {
        bsp_push_reg(b, m * n * DSZ);
    } else {
        bsp_push_reg(bbuf[0], mmax * n * DSZ);
        bsp_push_reg(bbuf[1], mmax * n * DSZ);
    }
    if (m)
        memset(c, 0, m * n * DSZ);
    bsp_sync();

    /* round l: my rows of B's block (pid + l) mod p; round 0 is my own */
    for (unsigned l = 0; l < p; l++) {
        if (l + 1 < p) { /* requests of round l + 1, into buffer (l + 1) % 2 */
            const int x = (int)((l + 1) % 2);
            if (use_get) {
                const unsigned src = (pid + l + 1) % p;
                const size_t bytes = mm_rows(n, p, src, NULL) * n * DSZ;
                if (hp)
                    bsp_hpget(src, b, 0, bbuf[x], bytes);
                else
                    bsp_get(src, b, 0, bbuf[x], bytes);
            } else {
                const unsigned dst = (pid + p - (l + 1)) % p;
                if (hp)
                    bsp_hpput(dst, b, bbuf[x], 0, m * n * DSZ);
                else
                    bsp_put(dst, b, bbuf[x], 0, m * n * DSZ);
            }
        }
        size_t rj;
        const unsigned j = (pid + l) % p;
        const size_t mj = mm_rows(n, p, j, &rj);
        if (m && mj)
            mm_gemm_add(m, n, mj, a + rj, n, l == 0 ? b : bbuf[l % 2], n, c, n);
        if (l + 1 < p)
            bsp_sync();
    }
    if (use_get) {
        bsp_pop_reg(b);
    } else {
        bsp_pop_reg(bbuf[1]);
        bsp_pop_reg(bbuf[0]);
    }
    bsp_sync();
    free(bbuf[0]);
    free(bbuf[1]);
}

/* ---- library call ---------------------------------------------------------------- */

struct mm_job {
    unsigned P;
    int variant, ring;
    size_t n;
    const double *A, *B;
    double *C;
};

static _Thread_local struct mm_job *mm_job_tl;

/* block (bi, bj) of the n x n matrix M, zero-padded to nb x nb */
static void pack_block(const double *M, size_t n, size_t nb, unsigned bi, unsigned bj, double *blk)
{
    for (size_t i = 0; i < nb; i++) {
        const size_t gi = bi * nb + i;
        for (size_t j = 0; j < nb; j++) {
            const size_t gj = bj * nb + j;
            blk[i * nb + j] = (gi < n && gj < n) ? M[gi * n + gj] : 0.0;
        }
    }
}

/* the ring's part of a library call: row blocks straight from and to the
 * caller's arrays */
static void ring_entry(struct mm_job *job, size_t n, int variant)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    size_t r0;
    const size_t m = mm_rows(n, p, pid, &r0);
    double *a = xmalloc(m * n * DSZ), *b = xmalloc(m * n * DSZ), *c = xmalloc(m * n * DSZ);
    char dummy = 0;
    void *gid = (pid == 0) ? (void *)job->C : (void *)&dummy;
    bsp_push_reg(a, m * n * DSZ);
    bsp_push_reg(b, m * n * DSZ);
    bsp_push_reg(gid, pid == 0 ? n * n * DSZ : 0);
    bsp_sync();
    if (pid == 0) {
        if (m) {
            memcpy(a, job->A, m * n * DSZ);
            memcpy(b, job->B, m * n * DSZ);
        }
        for (unsigned k = 1; k < p; k++) {
            size_t rk;
            const size_t mk = mm_rows(n, p, k, &rk);
            if (mk) {
                bsp_hpput(k, job->A + rk * n, a, 0, mk * n * DSZ);
                bsp_hpput(k, job->B + rk * n, b, 0, mk * n * DSZ);
            }
        }
    }
    bsp_sync();
    bsp_matmul_ring_spmd(n, a, b, c, variant);
    if (pid == 0) {
        if (m)
            memcpy(job->C, c, m * n * DSZ);
    } else if (m) {
        bsp_hpput(0, c, gid, r0 * n * DSZ, m * n * DSZ);
    }
    bsp_sync();
    bsp_pop_reg(gid);
    bsp_pop_reg(b);
    bsp_pop_reg(a);
    free(a);
    free(b);
    free(c);
    bsp_end();
}

static void bspmatmul_entry(void)
{
    struct mm_job *job = mm_job_tl; /* NULL in the other processes */
    bsp_begin(job ? job->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid(), q = mm_grid(p);

    uint64_t hdr[3] = { 0, 0, 0 };
    if (pid == 0) {
        hdr[0] = job->n;
        hdr[1] = (uint64_t)job->variant;
        hdr[2] = (uint64_t)job->ring;
        for (unsigned r = 1; r < p; r++)
            bsp_send(r, NULL, hdr, sizeof hdr);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(hdr, sizeof hdr);
    const size_t n = (size_t)hdr[0];
    const int variant = (int)hdr[1];
    if (hdr[2]) {
        ring_entry(job, n, variant);
        return;
    }
    const size_t nb = (n + q - 1) / q;
    const int active = pid < q * q;
    const size_t bytes = active ? nb * nb * DSZ : 0;

    double *a = NULL, *b = NULL, *c = NULL;
    if (active) {
        a = xmalloc(bytes);
        b = xmalloc(bytes);
        c = xmalloc(bytes);
    }
    /* c doubles as the identifier of the gather area: pid 0 registers a
     * buffer for all of C there */
    double *gbuf = (pid == 0) ? xmalloc((size_t)q * q * nb * nb * DSZ) : NULL;
    bsp_push_reg(a, bytes);
    bsp_push_reg(b, bytes);
    bsp_push_reg(pid == 0 ? gbuf : c, pid == 0 ? (size_t)q * q * nb * nb * DSZ : 0);
    bsp_sync();

    if (pid == 0) {
        double *blk = xmalloc(nb * nb * DSZ);
        for (unsigned r = 0; r < q * q; r++) {
            const unsigned bi = r % q, bj = r / q;
            pack_block(job->A, n, nb, bi, bj, r == 0 ? a : blk);
            if (r != 0)
                bsp_put(r, blk, a, 0, nb * nb * DSZ);
            pack_block(job->B, n, nb, bi, bj, r == 0 ? b : blk);
            if (r != 0)
                bsp_put(r, blk, b, 0, nb * nb * DSZ);
        }
        free(blk);
    }
    bsp_sync();

    bsp_matmul_spmd(nb, a, b, c, variant);

    if (active && nb > 0)
        bsp_put(0, c, pid == 0 ? gbuf : c, (size_t)pid * nb * nb * DSZ, nb * nb * DSZ);
    bsp_sync();
    if (pid == 0) {
        for (unsigned r = 0; r < q * q; r++) {
            const unsigned bi = r % q, bj = r / q;
            const double *blk = gbuf + (size_t)r * nb * nb;
            for (size_t i = 0; i < nb && bi * nb + i < n; i++)
                for (size_t j = 0; j < nb && bj * nb + j < n; j++)
                    job->C[(bi * nb + i) * n + bj * nb + j] = blk[i * nb + j];
        }
    }
    bsp_pop_reg(pid == 0 ? gbuf : c);
    bsp_pop_reg(b);
    bsp_pop_reg(a);
    free(gbuf);
    free(a);
    free(b);
    free(c);
    bsp_end();
}

static int run_matmul(unsigned P, size_t n, const double *A, const double *B, double *C,
                      int variant, int ring)
{
    if (P == 0 || variant < MM_PUT || variant > MM_HPGET ||
        (n > 0 && (A == NULL || B == NULL || C == NULL)))
        return -2;
    struct mm_job job = { P, variant, ring, n, A, B, C };
    struct mm_job *saved = mm_job_tl;
    mm_job_tl = &job;
    bsp_init(bspmatmul_entry, 0, NULL);
    bspmatmul_entry();
    mm_job_tl = saved;
    return 0;
}

int bsp_matmul(unsigned P, size_t n, const double *A, const double *B, double *C, int variant)
{
    const unsigned q = mm_grid(P);
    return run_matmul(P, n, A, B, C, variant, q * q != P);
}

int bsp_matmul_ring(unsigned P, size_t n, const double *A, const double *B, double *C, int variant)
{
    return run_matmul(P, n, A, B, C, variant, 1);
}
