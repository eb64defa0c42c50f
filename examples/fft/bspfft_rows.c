/* BSP FFT: the two-pass (four-step) code. */
#include "bspfft_internal.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* p^2 | n, p <= 8, n a power of two: the four-step ("six-step") FFT with the
 * transposes folded into the data's distribution: two passes over memory.
 * With n = n1 n2, j = j2 + n2 j1, k = k1 + n1 k2:
 *   X[k1 + n1 k2] = sum_j2 w_n2^(j2 k2) w_n^(j2 k1) C[j2][k1],
 *   C[j2][k1] = sum_j1 w_n1^(j1 k1) x[j2 + n2 j1].
 * Process s holds the columns j2 = s + p j2' (its local part is an
 * n1 x M array, M = n2/p: x_s[j2' + M j1]); process r owns the outputs with
 * k1 = r + p k1', at local index k1' + Q k2 (Q = n1/p).
 * Pass 1 takes R columns at a time into v (whole cache lines of x), runs
 * FFTW on them in cache and writes C into the registered buffer G in R x R
 * tiles sorted by destination: G[r][g][b][i][c] = C[s + p (b R + c)][r + p (g R + i)].
 * One sync. Pass 2 takes R rows at a time (group g): from every process q
 * one contiguous slab G_q[r][g] (bsp_direct_get, exactly the data needed),
 * interleaves and twiddles it into v, runs FFTW on the R rows and writes R
 * adjacent outputs per k2. Power-of-two strides in x are met in whole lines
 * only, and big writes bypass the cache (streaming stores) where the
 * target is 64-byte aligned. The buffers alternate as in exec_pull. */
static inline void copy_row(fftw_complex *dst, const fftw_complex *src, size_t R, size_t stride,
                            int stream)
{
#ifdef __SSE2__
    if (stream) {
        for (size_t i = 0; i < R; ++i) _mm_stream_pd(dst[i], _mm_loadu_pd(src[i * stride]));
        return;
    }
#else
    (void)stream;
#endif
    for (size_t i = 0; i < R; ++i) {
        dst[i][0] = src[i * stride][0];
        dst[i][1] = src[i * stride][1];
    }
}

static inline void stream_fence(void)
{
#ifdef __SSE2__
    _mm_sfence();
#endif
}

/* w_n^e from the two tables of the rows path (conjugated when sg = -1) */
static inline void wn_exp(const bspfft_plan *pl, size_t e, double sg, double *wr, double *wi)
{
    tw_tables(pl->g1, pl->g2, pl->lgG, e, sg, wr, wi);
}

BSPFFT_CLONES void bspfft_exec_rows(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t p = pl->p, s = pl->s, n1 = (size_t)1 << pl->lg1, n2 = (size_t)1 << pl->lg2;
    const size_t M = n2 / p, Q = n1 / p, R = pl->R, mask = pl->n - 1, slab = M * R;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_complex *G = pl->recv[pl->par], *v = pl->v;
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    for (size_t b = 0; b < M / R; ++b) {
        for (size_t j1 = 0; j1 < n1; ++j1) {
            if (j1 + 16 < n1) __builtin_prefetch(x + b * R + M * (j1 + 16), 0);
            for (size_t c = 0; c < R; ++c) {
                v[c * n1 + j1][0] = x[b * R + c + M * j1][0];
                v[c * n1 + j1][1] = x[b * R + c + M * j1][1];
            }
        }
        fftw_execute_dft(pl->plan[d][0], v, v);
        for (size_t k1 = 0; k1 < n1; ++k1) {
            const size_t r = k1 % p, k = k1 / p, g = k / R, i = k % R;
            copy_row(G + (((r * (Q / R) + g) * (M / R) + b) * R + i) * R, v + k1, R, n1, 1);
        }
    }
    stream_fence();   /* the streamed tiles are visible before the sync */
    tick(pl, 0, &tm);
    bsp_sync();
    pl->par ^= 1;
    tick(pl, 1, &tm);
    const fftw_complex *sl[8];
    for (size_t g = 0; g < Q / R; ++g) {
        const size_t off = (s * (Q / R) + g) * slab;
        for (size_t q = 0; q < p; ++q) {
            if (pl->peer) {
                sl[q] = pl->peer[2 * q + (pl->par ^ 1)] + off;   /* in place */
            } else if (q == s) {
                sl[q] = G + off;
            } else {
                bsp_direct_get((bsp_pid_t)q, G, off * sizeof(fftw_complex), pl->stage + q * slab,
                               slab * sizeof(fftw_complex));
                sl[q] = pl->stage + q * slab;
            }
        }
        /* v[i][j2] = C[j2][k1_i] w_n^(k1_i j2), k1_i = s + p (g R + i),
         * j2 = q + p (b R + c): the twiddle at c = 0 is w_n^(k1_i q) tb[i][b],
         * tb[i][b] = w_n^(k1_i p R b) = A[b mod B1] B[b div B1] (two short
         * tables per row from the global ones), then times w_n^(k1_i p)
         * along the tile; the slabs are read once, tile by tile */
        const size_t nbk = M / R, B1 = pl->B1;
        double str[8], sti[8];
        fftw_complex *tb = pl->twr, *A = pl->W1, *Bt = pl->W2;
        for (size_t i = 0; i < R; ++i) {
            const size_t k1 = s + p * (g * R + i);
            wn_exp(pl, (k1 * p) & mask, sg, &str[i], &sti[i]);
            for (size_t b1 = 0; b1 < B1; ++b1) wn_exp(pl, (k1 * p * R * b1) & mask, sg, &A[b1][0], &A[b1][1]);
            for (size_t b2 = 0; b2 < nbk / B1; ++b2)
                wn_exp(pl, (k1 * p * R * B1 * b2) & mask, sg, &Bt[b2][0], &Bt[b2][1]);
            for (size_t b = 0; b < nbk; ++b) {
                const double ar = A[b % B1][0], ai = A[b % B1][1], br = Bt[b / B1][0], bi = Bt[b / B1][1];
                tb[i * nbk + b][0] = ar * br - ai * bi;
                tb[i * nbk + b][1] = ar * bi + ai * br;
            }
        }
        for (size_t q = 0; q < p; ++q) {
            double qr[8], qi[8];
            for (size_t i = 0; i < R; ++i) wn_exp(pl, ((s + p * (g * R + i)) * q) & mask, sg, &qr[i], &qi[i]);
            for (size_t b = 0; b < nbk; ++b) {
                const fftw_complex *z = sl[q] + b * R * R;
                const size_t j0 = q + p * b * R;
                for (size_t i = 0; i < R; ++i, z += R) {
                    const double tr = tb[i * nbk + b][0], ti = tb[i * nbk + b][1];
                    double wr = qr[i] * tr - qi[i] * ti, wi = qr[i] * ti + qi[i] * tr;
                    fftw_complex *vr = v + i * n2 + j0;
                    for (size_t c = 0; c < R; ++c) {
                        const double zr = z[c][0], zi = z[c][1];
                        vr[p * c][0] = zr * wr - zi * wi;
                        vr[p * c][1] = zr * wi + zi * wr;
                        const double t = wr * str[i] - wi * sti[i];
                        wi = wr * sti[i] + wi * str[i];
                        wr = t;
                    }
                }
            }
        }
        fftw_execute_dft(pl->plan[d][1], v, v);
        fftw_complex *y = x + g * R;
        const int stream = ((uintptr_t)y & 63) == 0;
        for (size_t k2 = 0; k2 < n2; ++k2) copy_row(y + Q * k2, v + k2, R, n2, stream);
    }
    stream_fence();
    tick(pl, 2, &tm);
}
