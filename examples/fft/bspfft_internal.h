/*
 * Internals of the BSP FFT shared by its files: the plan and the small
 * helpers of the passes. bspfft_plan.c makes and frees plans, bspfft_exec.c
 * runs the single-superstep codes (fast, fused/push, pull) and the general
 * one, bspfft_rows.c the two-pass code, bspfft.c the library call.
 *
 * Bookkeeping of the general scheme. With radices r_1 .. r_L (product n),
 * before pass l the data are indexed by
 *     c = K + R_l j,   R_l = r_1 ... r_l,  K in [0, R_l) the output digits
 *                      found so far, j in [0, n / R_l) the input digits left,
 * and distributed cyclically in c (process c mod p, local index c div p).
 * Pass l transforms the top digit d of j (radix r = r_{l+1}; since r
 * divides n/p it sits in the local index, at stride n/(p r)) into the
 * output digit k, multiplies by the twiddle exp(-2 pi i j' k / (n / R_l))
 * where j' = j mod (n / R_{l+1}), and the element moves to
 *     c' = K + R_l k + R_{l+1} j'
 * (cyclic again). After pass L, c = k, the natural output index. This is
 * the Cooley-Tukey recursion DFT_n = (DFT_{n/r} on the rest) x twiddle x
 * (DFT_r on the top digit), unrolled.
 */
#ifndef SSTEP_BSPFFT_INTERNAL_H
#define SSTEP_BSPFFT_INTERNAL_H

#include "bspfft.h"

#include <bsp.h>
#include <fftw3.h>
#include <stddef.h>
#include <stdint.h>

#define MAXPASS 64
#define TWO_PI 6.283185307179586476925286766559

typedef struct run {
    unsigned pid;
    size_t dst, src, len;
} run;

struct bspfft_plan {
    size_t n, N;                  /* length, local length n/p */
    unsigned p, s, flags;
    int L, fast, fused, fpull, pull, rows; /* passes; fast path (L == 2); its fused
                                            (push; with fpull the exchange at the
                                            end), pull and two-pass (rows) variants */
    size_t r[MAXPASS];            /* radices */
    fftw_plan plan[2][MAXPASS];   /* [forward, backward][pass] */
    fftw_complex *work, *recv[2], *send, *xa;
    int par, align;
    double prof[4];
    /* fast path: twiddle w_n^(s u), u = lo + T hi, two tables */
    size_t T;
    fftw_complex *t1, *t2;
    /* fused path: w_N^e = f1[e mod 2^lgT] f2[e >> lgT]; w_n^(k s); w_p^j */
    unsigned lgT;
    fftw_complex *f1, *f2, *cs, *wp;
    /* pull path: chunk of C outputs per block; staging for the remote reads */
    size_t C;
    fftw_complex *stage;
    /* the codes that read the others' buffers, on the pthread engine:
     * every process's recv[0], recv[1] (peer[2 q + b]), read in place
     * instead of through bsp_direct_get copies; NULL elsewhere */
    fftw_complex **peer;
    /* rows path: n = n1 n2 (2^lg1 2^lg2); R rows or columns per FFTW call, in v;
     * w_n^e = g1[e mod 2^lgG] g2[e >> lgG]; per group of rows: W1 (B1), W2,
     * twr (the twiddle at each tile's start) */
    unsigned lg1, lg2, lgG;
    size_t R, B1;
    fftw_complex *v, *g1, *g2, *W1, *W2, *twr;
    /* general path, per redistribution l: pack order, twiddles in pack
     * order, runs of consecutive destinations */
    size_t *ord[MAXPASS];
    fftw_complex *tw[MAXPASS];
    run *runs[MAXPASS];
    size_t nruns[MAXPASS];
};

/* The hand-written passes (twiddles, radix-p stages) also in AVX2 + FMA
 * where the CPU has them: GCC makes a clone per target and picks one at
 * load time. The baseline x86-64 (SSE2) does one complex number per
 * instruction; measured at n = 2^16, p = 2 the sender pass took 32-33
 * instead of 49-62 microseconds, the receiver's pass 35 instead of 75-80.
 * Not under ThreadSanitizer, whose runtime is not up yet when the loader
 * runs the clones' resolvers (a crash). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__gnu_linux__) && \
    !defined(__SANITIZE_THREAD__)
#define BSPFFT_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BSPFFT_CLONES
#endif

/* the two-pass code (bspfft_rows.c) */
void bspfft_exec_rows(bspfft_plan *pl, fftw_complex *x, int d);

static inline void cmul(fftw_complex out, const fftw_complex a, double wr, double wi)
{
    const double re = a[0] * wr - a[1] * wi, im = a[0] * wi + a[1] * wr;
    out[0] = re;
    out[1] = im;
}

static inline void put_block(const bspfft_plan *pl, unsigned pid, const fftw_complex *src, fftw_complex *dst,
                      size_t offset, size_t len)
{
    const size_t off = offset * sizeof(fftw_complex), bytes = len * sizeof(fftw_complex);
    if (pl->flags & BSPFFT_BUFFERED) bsp_put(pid, src, dst, off, bytes);
    else bsp_hpput(pid, src, dst, off, bytes);
}

/* profile: phase time since *t (with BSPFFT_PROFILE) */
static inline void tick(bspfft_plan *pl, int phase, double *t)
{
    if (!(pl->flags & BSPFFT_PROFILE)) return;
    const double now = bsp_time();
    pl->prof[phase] += now - *t;
    *t = now;
}

/* A root of unity from two tables, w^e = lo[e mod 2^lg] hi[e >> lg]
 * (conjugated when sg = -1) */
static inline void tw_tables(const fftw_complex *lo, const fftw_complex *hi, unsigned lg, size_t e,
                             double sg, double *wr, double *wi)
{
    const fftw_complex *a = &lo[e & (((size_t)1 << lg) - 1)], *b = &hi[e >> lg];
    *wr = (*a)[0] * (*b)[0] - (*a)[1] * (*b)[1];
    *wi = sg * ((*a)[0] * (*b)[1] + (*a)[1] * (*b)[0]);
}

/* w_N^e, N = n/p (conjugated for the backward transform: sg = -1) */
static inline void wN(const bspfft_plan *pl, size_t e, double sg, double *wr, double *wi)
{
    tw_tables(pl->f1, pl->f2, pl->lgT, e, sg, wr, wi);
}

/* A DFT of length p <= 8 (the radix-p stage): v_j = sum_q w_p^(q j) a_q,
 * with sg the direction's sign; shared by the push sender and the push and
 * pull receivers. */
static inline void dft_p(const bspfft_plan *pl, size_t p, double sg, const double *ar,
                         const double *ai, double *vr, double *vi)
{
    for (size_t j = 0; j < p; ++j) {
        double yr = 0, yi = 0;
        for (size_t q = 0; q < p; ++q) {
            const double wr = pl->wp[q * p + j][0], wi = sg * pl->wp[q * p + j][1];
            yr += ar[q] * wr - ai[q] * wi;
            yi += ar[q] * wi + ai[q] * wr;
        }
        vr[j] = yr;
        vi[j] = yi;
    }
}

/* the receivers' last stage at one output: y[B j] = v_j */
static inline void radix_p_out(const bspfft_plan *pl, double sg, const double *ar, const double *ai,
                               fftw_complex *y, size_t B)
{
    const size_t p = pl->p;
    double vr[8], vi[8];
    dft_p(pl, p, sg, ar, ai, vr, vi);
    for (size_t j = 0; j < p; ++j) {
        y[B * j][0] = vr[j];
        y[B * j][1] = vi[j];
    }
}

#endif
