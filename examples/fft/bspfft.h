/*
 * BSP fast Fourier transform (MulticoreBSP for C paper, Sect. 3.1; Inda and
 * Bisseling's algorithm, Bisseling's book Ch. 3) with FFTW as the local
 * kernel.
 *
 * A complex vector x of length n is distributed cyclically over p
 * processes: process s holds x[s + p t], t = 0 .. n/p - 1, at local index
 * t (complex numbers are pairs of doubles, re then im). The output has the
 * same cyclic distribution. For p <= sqrt(n) (precisely: p^2 divides n)
 * one transform is
 *   1. n/p^2 local DFTs of length p (FFTW, stride n/p^2): the butterflies
 *      that are local in the cyclic distribution (the paper's H_n),
 *   2. one redistribution superstep: block k of the local vector goes to
 *      process k (bsp_hpput, or bsp_put with BSPFFT_BUFFERED),
 *   3. the twiddle of the shifted generalised FFT (weights
 *      exp(-2 pi i (s/p) u / (n/p)), the paper's T^{s/p}),
 *   4. one local FFT of length n/p (FFTW; the paper's G_n).
 * The paper reaches FFTW through U = F R, at the price of local bit
 * reversals; FFTW's ordered, strided transforms give steps 1 and 4
 * directly, so no bit reversal is left (the permutation is folded into the
 * redistribution and into the unpacking after it).
 * For p <= 8 the transform can be regrouped "transpose at the end" (the
 * pull code, BSPFFT_PULL): every process runs one FFTW transform of length n/p on
 * its whole local part (G_s = DFT_{n/p}(x_s), out of place into a
 * registered buffer), syncs once, and then reads the others' G_q with
 * bsp_direct_get in cache-sized chunks, applying the twiddles and the
 * last radix-p stage as the chunks arrive:
 *   y_r[m1 + B j] = sum_q w_p^(q j) w_n^(q (r + p m1)) G_q[r + p m1],
 * B = n/p^2, written in natural order. No put, no copy of received blocks,
 * no hand-written pass before the FFTW transform. bsp_direct_get reads
 * shared memory at once on the pthread engine; on MPI it costs a round
 * trip per chunk, so there BSPFFT_PUSH (or BSPFFT_BUFFERED) may be better.
 * The push code (BSPFFT_PUSH; p <= 8, n/p a power of two) fuses steps 1-4 into
 * fewer passes the other way round: step 1 and the twiddle are one
 * hand-written pass on the sender, which writes block k straight into the
 * buffer put to process k; the receiver runs FFTW on the p received blocks
 * (length n/p^2 each, in place) and a last pass that applies the radix-p
 * stage of the length-n/p FFT and its twiddles, writing the output in
 * natural order (no unpacking pass).
 * For large n (a power of two) the two-pass code (BSPFFT_ROWS) is the
 * four-step FFT n = n1 n2 with its transposes folded into the cyclic
 * distribution: every process holds whole columns of the n1 x n2 array,
 * runs FFTW on blocks of R = 8 of them in cache (pass 1, whole cache lines
 * read from x) and writes the results into a registered buffer in tiles
 * sorted by destination; after one sync each process reads, with one
 * bsp_direct_get per process and group of R rows, exactly the data of its
 * rows, twiddles them, runs FFTW on the rows in cache and writes R adjacent
 * outputs per line (pass 2; streaming stores when x is 64-byte aligned).
 * Two passes over memory against the pull code's FFTW transform (two or
 * three) plus its radix-p pass. On MPI each of its bsp_direct_get calls is
 * a round trip (n1/(R p) groups of p - 1 calls per transform, far fewer
 * than the pull code's chunks); with more ranks than cores, where the
 * target may not be running, BSPFFT_PUSH avoids them.
 * When all processes are threads of one address space (the pthread
 * engine; the hybrid engine on one node) these three codes read the
 * others' buffers in place after the sync, where bsp_direct_get would copy
 * them (the plan learns their addresses once and checks that they are in
 * this address space): no copy of the remote data into a staging buffer
 * (BSPFFT_COPY_REMOTE keeps the copies).
 * The fused code with the exchange at the end (BSPFFT_FUSED_PULL) runs the
 * push code's sender pass into a registered buffer, FFTW on all p blocks
 * there, one sync, and the receiver's last pass reading block s of every
 * other process with bsp_direct_get in cache-sized chunks: each byte
 * crosses between cores once, and exactly the bytes needed.
 * By default, measured on a 2-core, 32 MiB-L3 machine: the two-pass code
 * above 16 MiB of data (16 n bytes), below it the fused code with the
 * exchange at the end on the pthread engine and the push code on the MPI
 * and hybrid engines (where each bsp_direct_get is a round trip), the pull
 * code when n/p is no power of two. BSPFFT_NOFUSE selects steps 1-4 as
 * listed. The hand-written passes are also compiled for AVX2 + FMA and
 * chosen at load time where the CPU has them (GCC on x86-64).
 * For p > sqrt(n) the same scheme runs with more, smaller radices: L local
 * passes of radix r_1 .. r_L (each dividing n/p, product n) separated by
 * L - 1 redistributions, the analogue of the paper's group-cyclic
 * distributions with growing cycles.
 *
 * Supported: p divides n and n can be written as a product of factors of
 * n/p (always true for powers of two with p <= n/2; e.g. also p = 3 with
 * n = 9 * 2^k). The transform is unnormalised, like FFTW's: backward(
 * forward(x)) = n x. sign = -1 is forward (exp(-2 pi i jk/n)), +1 backward.
 *
 * Plan functions are collective (inside an SPMD section, every process);
 * the plan lives in the caller's process (keep the pointer in a local).
 */
#ifndef SUPERSTEP_APP_BSPFFT_H
#define SUPERSTEP_APP_BSPFFT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    BSPFFT_ESTIMATE = 0,    /* FFTW_ESTIMATE plans (fast planning) */
    BSPFFT_MEASURE = 1,     /* FFTW_MEASURE plans (slow planning, faster transforms) */
    BSPFFT_GENERIC = 2,     /* force the general multi-pass code even when p^2 | n */
    BSPFFT_BUFFERED = 4,    /* redistribute with bsp_put instead of bsp_hpput (a put code,
                               never the pull code) */
    BSPFFT_FORWARD_ONLY = 8,/* plan the forward transform only (halves planning) */
    BSPFFT_PROFILE = 16,    /* accumulate the time of each phase (bspfft_profile) */
    BSPFFT_NOFUSE = 32,     /* p^2 | n: keep the FFTW short DFTs, unpacking pass and one
                               length-n/p FFT instead of the fused passes (p <= 8, n/p a
                               power of two) */
    BSPFFT_PUSH = 64,       /* p^2 | n, p <= 8, n/p a power of two: always the fused push
                               code (sender pass + bsp_hpput) */
    BSPFFT_PULL = 128,      /* p^2 | n, p <= 8: always the pull code (bsp_direct_get); by
                               default the code is chosen by size (see above) */
    BSPFFT_ROWS = 256,      /* p^2 | n, n a power of two, p <= 8, n >= 64 p^2: always the
                               two-pass code (columns, one sync, rows read with
                               bsp_direct_get); by default above 16 MiB of data */
    BSPFFT_FUSED_PULL = 512,/* p^2 | n, p <= 8, n/p a power of two: always the fused
                               code with the exchange at the end (sender pass, FFTW on
                               the blocks, one sync, last stage reading the others'
                               blocks with bsp_direct_get) */
    BSPFFT_COPY_REMOTE = 1024 /* the codes that read the others' buffers (pull, fused
                               pull, two-pass) copy them with bsp_direct_get also on
                               the pthread engine, where by default they read them in
                               place (one address space; see above) */
};

typedef struct bspfft_plan bspfft_plan;

/* Number of local passes L of the transform of length n on p processes
 * (L - 1 redistribution supersteps), or 0 when (n, p) is not supported. */
int bspfft_passes(size_t n, unsigned p);

/* Collective. Returns NULL on every process when (n, bsp_nprocs()) is not
 * supported or memory runs out. Costs about p + 1 supersteps (FFTW's
 * planner is not thread-safe: the processes plan one after the other). */
bspfft_plan *bspfft_plan_create(size_t n, unsigned flags);

/* Collective: transforms the local part x (2 n/p doubles) in place.
 * L - 1 supersteps. */
void bspfft_execute(bspfft_plan *plan, double *x, int sign);

/* With BSPFFT_PROFILE: seconds spent by this process, over all transforms
 * so far, in [0] the local passes before the first redistribution, [1] the
 * redistributions (puts and syncs), [2] the twiddles and (un)packing, [3] the
 * local passes after the first redistribution. */
void bspfft_profile(const bspfft_plan *plan, double t[4]);

/* The code the plan runs: "local" (p = 1), "rows", "pull", "fused-pull",
 * "fused-push" (with BSPFFT_BUFFERED "fused-put"), "fast" (with
 * BSPFFT_BUFFERED "fast-put") or "general". */
const char *bspfft_code(const bspfft_plan *plan);

/* Collective: frees the plan (p + 1 supersteps). */
void bspfft_plan_destroy(bspfft_plan *plan);

/* Sequential reference: FFTW (estimate) on the whole vector, in place. */
int fft_seq(double *x, size_t n, int sign);

/* Library call: transforms x (n complex numbers, 2 n doubles) in place on
 * P processes; x is distributed cyclically from the caller (pid 0) and
 * collected again. Runs its own bsp_init / bsp_begin / bsp_end. Returns 0,
 * or -1 when (n, P) is not supported. */
int bsp_fft(double *x, size_t n, int sign, unsigned P);

#ifdef __cplusplus
}
#endif

#endif
