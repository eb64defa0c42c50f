/*
 * BSP FFT with FFTW local kernels; see bspfft.h for the algorithm. This
 * file: the sequential reference and the library call bsp_fft; the plan
 * and the passes are in bspfft_plan.c, bspfft_exec.c and bspfft_rows.c.
 */
#include "bspfft.h"

#include <inprod.h>

#include <bsp.h>
#include <fftw3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- sequential reference ---------------------------------------------------- */

int fft_seq(double *x, size_t n, int sign)
{
    if (n == 0) return 0;
    fftw_complex *a = fftw_malloc(n * sizeof(fftw_complex));
    if (!a) return -1;
    fftw_plan pl = fftw_plan_dft_1d((int)n, a, a, sign < 0 ? FFTW_FORWARD : FFTW_BACKWARD,
                                    FFTW_ESTIMATE);
    memcpy(a, x, n * sizeof(fftw_complex));
    fftw_execute(pl);
    memcpy(x, a, n * sizeof(fftw_complex));
    fftw_destroy_plan(pl);
    fftw_free(a);
    return 0;
}

/* ---- library call ----------------------------------------------------------- */

typedef struct fft_call {
    double *x;
    size_t n;
    int sign;
    unsigned P;
    int rc;
} fft_call;

static _Thread_local fft_call *fft_current;

static void fft_entry(void)
{
    fft_call *c = fft_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    if (s != 0) c = NULL;
    int64_t par[2] = { c ? (int64_t)c->n : 0, c ? c->sign : -1 };
    app_broadcast(par, sizeof par);
    const size_t n = (size_t)par[0], N = n / p;
    bspfft_plan *pl = bspfft_plan_create(n, BSPFFT_ESTIMATE);
    if (!pl) {
        if (c) c->rc = -1;
        bsp_end();
        return;
    }
    const size_t bytes = N * 2 * sizeof(double);
    double *xl = fftw_malloc(bytes ? bytes : 1);
    /* the gather buffer lives at pid 0; the others register a zero-size
     * area (not NULL: they use it to name the slot) */
    double *stage = malloc(s == 0 ? n * 2 * sizeof(double) : 1);
    if (!xl || !stage) bsp_abort("bsp_fft: out of memory on pid %u\n", s);
    bsp_push_reg(xl, bytes);
    bsp_push_reg(stage, s == 0 ? n * 2 * sizeof(double) : 0);
    bsp_sync();
    if (c) {   /* cyclic distribution: process q gets x[q + p t] */
        for (unsigned q = 0; q < p; ++q) {
            double *st = stage + (size_t)q * N * 2;
            for (size_t t = 0; t < N; ++t) {
                st[2 * t] = c->x[2 * (q + p * t)];
                st[2 * t + 1] = c->x[2 * (q + p * t) + 1];
            }
            bsp_hpput(q, st, xl, 0, bytes);
        }
    }
    bsp_sync();
    bspfft_execute(pl, xl, (int)par[1]);
    bsp_hpput(0, xl, stage, (size_t)s * bytes, bytes);
    bsp_sync();
    if (c) {
        for (unsigned q = 0; q < p; ++q) {
            const double *st = stage + (size_t)q * N * 2;
            for (size_t t = 0; t < N; ++t) {
                c->x[2 * (q + p * t)] = st[2 * t];
                c->x[2 * (q + p * t) + 1] = st[2 * t + 1];
            }
        }
        c->rc = 0;
    }
    bsp_pop_reg(xl);
    bsp_pop_reg(stage);
    bspfft_plan_destroy(pl);
    fftw_free(xl);
    free(stage);
    bsp_end();
}

int bsp_fft(double *x, size_t n, int sign, unsigned P)
{
    fft_call c = { x, n, sign, P ? P : bsp_nprocs(), -1 };
    fft_call *prev = fft_current;
    fft_current = &c;
    bsp_init(fft_entry, 0, NULL);
    fft_entry();
    fft_current = prev;
    return c.rc;
}
