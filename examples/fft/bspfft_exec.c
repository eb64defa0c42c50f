/* BSP FFT: the single-superstep codes (fast, fused/push, pull), the
 * general one and the dispatch. */
#include "bspfft_internal.h"

#include <stdlib.h>
#include <string.h>

void bspfft_profile(const bspfft_plan *pl, double t[4])
{
    for (int i = 0; i < 4; ++i) t[i] = pl->prof[i];
}

/* p^2 | n: short DFTs, one redistribution, twiddle + unpack, long FFT */
BSPFFT_CLONES static void exec_fast(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t N = pl->N, p = pl->p, s = pl->s, B = N / p, T = pl->T;
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    fftw_complex *w = pl->work;
    fftw_execute_dft(pl->plan[d][0], x, w);
    tick(pl, 0, &tm);
    /* block k of work (the k-th outputs of the short DFTs) goes to process
     * k, straight from work (unbuffered: work stays as it is until the
     * sync has ended) */
    fftw_complex *rv = pl->recv[pl->par];
    for (unsigned k = 0; k < p; ++k)
        if (k != s) put_block(pl, k, w + (size_t)k * B, rv, s * B, B);
    bsp_sync();
    pl->par ^= 1;
    tick(pl, 1, &tm);
    /* work[s' + p t] = block s'[t] * w_n^(s u), u = s' + p t */
    const fftw_complex *blk[64], **bp = blk;
    const fftw_complex **big = NULL;
    if (p > 64) {
        big = malloc(p * sizeof *big);
        if (!big) bsp_abort("bspfft: out of memory\n");
        bp = big;
    }
    for (size_t q = 0; q < p; ++q) bp[q] = q == s ? w + s * B : rv + q * B;
    const double sg = d == 0 ? 1.0 : -1.0;
    for (size_t hi = 0; hi < N / T; ++hi) {
        const double w2r = pl->t2[hi][0], w2i = sg * pl->t2[hi][1];
        for (size_t lo0 = 0; lo0 < T; lo0 += p) {
            const size_t u0 = hi * T + lo0, tl = u0 / p;
            for (size_t q = 0; q < p; ++q) {
                const double t1r = pl->t1[lo0 + q][0], t1i = sg * pl->t1[lo0 + q][1];
                cmul(x[u0 + q], bp[q][tl], t1r * w2r - t1i * w2i, t1r * w2i + t1i * w2r);
            }
        }
    }
    free(big);
    tick(pl, 2, &tm);
    fftw_execute_dft(pl->plan[d][1], x, x);
    tick(pl, 3, &tm);
}

/* p^2 | n, p <= 8, n/p a power of two. With B = n/p^2, t = t_lo + B d and
 * u = s + p t_lo, k' = k1 + B k2:
 *   sender s:   v_k[t_lo] = sum_d w_p^(dk) x_s[t_lo + B d], times
 *               w_n^(k (s + p t_lo)) = w_n^(ks) w_{n/p}^(k t_lo): block k
 *               for process k (one pass; the paper's H_n and its twiddle);
 *   receiver r: block s at r is b_s; F_s = DFT_B(b_s) (FFTW, p blocks);
 *               y_r[k1 + B k2] = sum_s w_p^(s k2) w_{n/p}^(s k1) F_s[k1]
 *               (one pass: the last radix-p stage of the length-n/p FFT).
 * Against exec_fast, the unpacking pass disappears into the two passes
 * that FFTW would otherwise do on its own. */
/* the sender pass: block k (v_k times its twiddles) into dst[k] */
BSPFFT_CLONES static void sender_pass(const bspfft_plan *pl, const fftw_complex *x, fftw_complex *const *dst,
                        double sg)
{
    const size_t N = pl->N, p = pl->p, B = N / p;
    if (p == 2) {
        /* twiddle w_N^t w_n^s = (f2[hi] cs[1]) f1[lo]: one product per run of
         * constant hi, a plain loop over f1 inside (vectorisable) */
        const double cr = pl->cs[1][0], ci = sg * pl->cs[1][1];
        const size_t T = (size_t)1 << pl->lgT;
        fftw_complex *d0 = dst[0], *d1 = dst[1];
        const fftw_complex *x0 = x, *x1 = x + B;
        for (size_t t0 = 0; t0 < B; t0 += T) {
            const size_t run = B - t0 < T ? B - t0 : T;
            const double hr = pl->f2[t0 >> pl->lgT][0], hi = sg * pl->f2[t0 >> pl->lgT][1];
            const double ur = hr * cr - hi * ci, ui = hr * ci + hi * cr;
            for (size_t j = 0; j < run; ++j) {
                const size_t t = t0 + j;
                const double fr = pl->f1[j][0], fi = sg * pl->f1[j][1];
                const double tr = fr * ur - fi * ui, ti = fr * ui + fi * ur;
                const double ar = x0[t][0], ai = x0[t][1], br = x1[t][0], bi = x1[t][1];
                d0[t][0] = ar + br;
                d0[t][1] = ai + bi;
                const double vr = ar - br, vi = ai - bi;
                d1[t][0] = vr * tr - vi * ti;
                d1[t][1] = vr * ti + vi * tr;
            }
        }
        return;
    }
    for (size_t t = 0; t < B; ++t) {
        double xr[8], xi[8];
        for (size_t q = 0; q < p; ++q) {
            xr[q] = x[t + B * q][0];
            xi[q] = x[t + B * q][1];
        }
        double Vr[8], Vi[8];
        dft_p(pl, p, sg, xr, xi, Vr, Vi);
        for (size_t k = 0; k < p; ++k) {
            double vr = Vr[k], vi = Vi[k];
            if (k > 0) {
                double wr, wi;
                wN(pl, k * t, sg, &wr, &wi);
                const double cr = pl->cs[k][0], ci = sg * pl->cs[k][1];
                const double tr = wr * cr - wi * ci, ti = wr * ci + wi * cr;
                const double yr = vr * tr - vi * ti;
                vi = vr * ti + vi * tr;
                vr = yr;
            }
            dst[k][t][0] = vr;
            dst[k][t][1] = vi;
        }
    }
}

/* the receiver's last stage for k1 in [m0, m0 + c), F[q] pointing at
 * F_q[m0]: y[k1 + B j] = sum_q w_p^(q j) w_N^(q k1) F_q[k1] */
BSPFFT_CLONES static void radix_pass(const bspfft_plan *pl, const fftw_complex *const *F, fftw_complex *x, size_t m0,
                       size_t c, double sg)
{
    const size_t p = pl->p, B = pl->N / p;
    if (p == 2) {
        const size_t T = (size_t)1 << pl->lgT;
        for (size_t i = 0; i < c;) {
            const size_t k1 = m0 + i, lo = k1 & (T - 1);
            const size_t run = T - lo < c - i ? T - lo : c - i;
            const double ur = pl->f2[k1 >> pl->lgT][0], ui = sg * pl->f2[k1 >> pl->lgT][1];
            const fftw_complex *f = pl->f1 + lo, *F0 = F[0] + i, *F1 = F[1] + i;
            fftw_complex *y0 = x + k1, *y1 = x + k1 + B;
            for (size_t j = 0; j < run; ++j) {
                const double fr = f[j][0], fi = sg * f[j][1];
                const double wr = fr * ur - fi * ui, wi = fr * ui + fi * ur;
                const double br = F1[j][0] * wr - F1[j][1] * wi, bi = F1[j][0] * wi + F1[j][1] * wr;
                const double ar = F0[j][0], ai = F0[j][1];
                y0[j][0] = ar + br;
                y0[j][1] = ai + bi;
                y1[j][0] = ar - br;
                y1[j][1] = ai - bi;
            }
            i += run;
        }
        return;
    }
    for (size_t i = 0; i < c; ++i) {
        const size_t k1 = m0 + i;
        double ar[8], ai[8];
        ar[0] = F[0][i][0];
        ai[0] = F[0][i][1];
        for (size_t q = 1; q < p; ++q) {
            double wr, wi;
            wN(pl, q * k1, sg, &wr, &wi);
            const double fr = F[q][i][0], fi = F[q][i][1];
            ar[q] = fr * wr - fi * wi;
            ai[q] = fr * wi + fi * wr;
        }
        radix_p_out(pl, sg, ar, ai, x + k1, B);
    }
}

static void exec_fused(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t N = pl->N, p = pl->p, s = pl->s, B = N / p;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_complex *w = pl->work, *rv = pl->recv[pl->par];
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    fftw_complex *dst[8] = { 0 };
    for (size_t k = 0; k < p; ++k) dst[k] = k == s ? rv + B * s : w + B * k;
    sender_pass(pl, x, dst, sg);
    tick(pl, 0, &tm);
    for (unsigned k = 0; k < p; ++k)
        if (k != s) put_block(pl, k, w + (size_t)k * B, rv, s * B, B);
    bsp_sync();
    pl->par ^= 1;
    tick(pl, 1, &tm);
    fftw_execute_dft(pl->plan[d][0], rv, rv);
    tick(pl, 3, &tm);
    const fftw_complex *F[8];
    for (size_t q = 0; q < p; ++q) F[q] = rv + B * q;
    radix_pass(pl, F, x, 0, B, sg);
    tick(pl, 2, &tm);
}

/* The same passes with the exchange moved to the end (BSPFFT_FUSED_PULL):
 * the sender pass writes all p blocks into the registered buffer G, FFTW
 * transforms them there (F_k = DFT_B(block k), for process k), one sync,
 * and the receiver's last stage reads F_s of every other process in
 * chunks with bsp_direct_get. Each byte crosses between cores once (the
 * push code's put writes into the receiver's buffer, from which the
 * receiver's FFTW then reads it back) and the data sent is exactly the
 * data used (the pull code reads whole lines of which it uses 1/p). The
 * buffers alternate as in exec_pull. */
static void exec_fused_pull(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t N = pl->N, p = pl->p, s = pl->s, B = N / p, C = pl->C;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_complex *G = pl->recv[pl->par];
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    fftw_complex *dst[8] = { 0 };
    for (size_t k = 0; k < p; ++k) dst[k] = G + B * k;
    sender_pass(pl, x, dst, sg);
    tick(pl, 0, &tm);
    fftw_execute_dft(pl->plan[d][0], G, G);
    tick(pl, 3, &tm);
    bsp_sync();
    pl->par ^= 1;
    tick(pl, 1, &tm);
    const fftw_complex *F[8];
    if (pl->peer) {
        /* one address space: read the others' blocks where they are */
        const int b = pl->par ^ 1;
        for (size_t q = 0; q < p; ++q) F[q] = pl->peer[2 * q + b] + B * s;
        radix_pass(pl, F, x, 0, B, sg);
        tick(pl, 2, &tm);
        return;
    }
    for (size_t m0 = 0; m0 < B; m0 += C) {
        const size_t c = B - m0 < C ? B - m0 : C;
        for (size_t q = 0; q < p; ++q) {
            if (q == s) {
                F[q] = G + B * s + m0;
            } else {
                fftw_complex *st = pl->stage + q * C;
                bsp_direct_get((bsp_pid_t)q, G, (B * s + m0) * sizeof(fftw_complex), st,
                               c * sizeof(fftw_complex));
                F[q] = st;
            }
        }
        radix_pass(pl, F, x, m0, c, sg);
    }
    tick(pl, 2, &tm);
}

/* p^2 | n, p <= 8 ("transpose at the end"). With G_q = DFT_{n/p}(x_q), the
 * local FFT of process q (k' in [0, n/p)),
 *   X[k' + (n/p) j] = sum_q w_p^(q j) w_n^(q k') G_q[k'],
 * and process r owns X[r + p m], m = m1 + B j, k' = r + p m1 (B = n/p^2):
 *   y_r[m1 + B j] = sum_q w_p^(q j) w_n^(q r) w_{n/p}^(q m1) G_q[r + p m1].
 * Every process runs FFTW on its whole part into a registered buffer
 * (FFTW's own cache-blocked passes, no hand-written sender pass), syncs,
 * and then reads the others' outputs with bsp_direct_get in chunks that
 * stay in cache, applying the radix-p stage as they arrive: no put, no
 * received copy of the blocks and no separate pass over them.
 * The buffers alternate between transforms (par): a process writes buffer
 * par again only after the next transform's sync, which every reader of
 * the previous contents has passed. */
BSPFFT_CLONES static void exec_pull(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t N = pl->N, p = pl->p, s = pl->s, B = N / p, C = pl->C;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_complex *G = pl->recv[pl->par];
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    fftw_execute_dft(pl->plan[d][0], x, G);
    tick(pl, 0, &tm);
    bsp_sync();
    pl->par ^= 1;
    tick(pl, 1, &tm);
    /* src[q] + p (m1 - m0) + s is G_q[s + p m1] */
    const fftw_complex *src[8];
    double cr[8], ci[8];
    for (size_t q = 0; q < p; ++q) {
        cr[q] = pl->cs[q][0];
        ci[q] = sg * pl->cs[q][1];
    }
    for (size_t m0 = 0; m0 < B; m0 += C) {
        const size_t c = B - m0 < C ? B - m0 : C;
        for (size_t q = 0; q < p; ++q) {
            if (pl->peer) {
                src[q] = pl->peer[2 * q + (pl->par ^ 1)] + p * m0;   /* in place */
            } else if (q == s) {
                src[q] = G + p * m0;
            } else {
                fftw_complex *st = pl->stage + q * p * C;
                bsp_direct_get((bsp_pid_t)q, G, p * m0 * sizeof(fftw_complex), st,
                               p * c * sizeof(fftw_complex));
                src[q] = st;
            }
        }
        if (p == 2) {
            /* twiddle w_n^r w_N^m1 = (cs[1] f2[hi]) f1[lo]: one product per
             * run of constant hi, a plain loop over f1 inside (vectorisable) */
            const fftw_complex *g0 = src[0] + s, *g1 = src[1] + s;
            const size_t T = (size_t)1 << pl->lgT;
            for (size_t i = 0; i < c;) {
                const size_t m1 = m0 + i, hi = m1 >> pl->lgT, lo = m1 & (T - 1);
                const size_t run = T - lo < c - i ? T - lo : c - i;
                const double hr = pl->f2[hi][0], hi_ = sg * pl->f2[hi][1];
                const double ur = hr * cr[1] - hi_ * ci[1], ui = hr * ci[1] + hi_ * cr[1];
                const fftw_complex *f = pl->f1 + lo, *a = g0 + 2 * i, *b = g1 + 2 * i;
                fftw_complex *y0 = x + m1, *y1 = x + m1 + B;
                for (size_t j = 0; j < run; ++j) {
                    const double fr = f[j][0], fi = sg * f[j][1];
                    const double tr = fr * ur - fi * ui, ti = fr * ui + fi * ur;
                    const double br = b[2 * j][0] * tr - b[2 * j][1] * ti;
                    const double bi = b[2 * j][0] * ti + b[2 * j][1] * tr;
                    const double ar = a[2 * j][0], ai = a[2 * j][1];
                    y0[j][0] = ar + br;
                    y0[j][1] = ai + bi;
                    y1[j][0] = ar - br;
                    y1[j][1] = ai - bi;
                }
                i += run;
            }
        } else {
            for (size_t i = 0; i < c; ++i) {
                const size_t m1 = m0 + i;
                double ar[8], ai[8];
                ar[0] = src[0][p * i + s][0];
                ai[0] = src[0][p * i + s][1];
                for (size_t q = 1; q < p; ++q) {
                    double wr, wi;
                    wN(pl, q * m1, sg, &wr, &wi);
                    const double tr = wr * cr[q] - wi * ci[q], ti = wr * ci[q] + wi * cr[q];
                    const double fr = src[q][p * i + s][0], fi = src[q][p * i + s][1];
                    ar[q] = fr * tr - fi * ti;
                    ai[q] = fr * ti + fi * tr;
                }
                radix_p_out(pl, sg, ar, ai, x + m1, B);
            }
        }
    }
    tick(pl, 2, &tm);
}

BSPFFT_CLONES static void exec_general(bspfft_plan *pl, fftw_complex *x, int d)
{
    const int L = pl->L;
    const double sg = d == 0 ? 1.0 : -1.0;
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    fftw_execute_dft(pl->plan[d][0], x, pl->work);
    tick(pl, 0, &tm);
    fftw_complex *cur = pl->work;
    for (int l = 0; l + 1 < L; ++l) {
        fftw_complex *snd = pl->send, *rv = pl->recv[pl->par];
        const size_t *ord = pl->ord[l];
        const fftw_complex *tw = pl->tw[l];
        for (size_t i = 0; i < pl->N; ++i) cmul(snd[i], cur[ord[i]], tw[i][0], sg * tw[i][1]);
        tick(pl, 2, &tm);
        for (size_t k = 0; k < pl->nruns[l]; ++k) {
            const run *ru = &pl->runs[l][k];
            if (ru->pid == pl->s) memcpy(rv + ru->dst, snd + ru->src, ru->len * sizeof(fftw_complex));
            else put_block(pl, ru->pid, snd + ru->src, rv, ru->dst, ru->len);
        }
        bsp_sync();
        pl->par ^= 1;
        tick(pl, 1, &tm);
        cur = rv;
        if (l + 2 < L) fftw_execute_dft(pl->plan[d][l + 1], cur, cur);
        else fftw_execute_dft(pl->plan[d][l + 1], cur, x);
        tick(pl, 3, &tm);
    }
}

const char *bspfft_code(const bspfft_plan *pl)
{
    const int put = (pl->flags & BSPFFT_BUFFERED) != 0;
    if (pl->L == 1) return "local";
    if (pl->rows) return "rows";
    if (pl->pull) return "pull";
    if (pl->fpull) return "fused-pull";
    if (pl->fused) return put ? "fused-put" : "fused-push";
    if (pl->fast) return put ? "fast-put" : "fast";
    return "general";
}

void bspfft_execute(bspfft_plan *pl, double *xin, int sign)
{
    const int d = sign < 0 ? 0 : 1;
    if (!pl->plan[d][0]) bsp_abort("bspfft_execute: the plan has no backward transform\n");
    fftw_complex *x = (fftw_complex *)xin;
    /* FFTW plans for pl->xa's alignment; the rows and fused codes never
     * hand x to FFTW */
    const int staged = !pl->rows && !pl->fused && fftw_alignment_of(xin) != pl->align;
    if (staged) {
        memcpy(pl->xa, x, pl->N * sizeof(fftw_complex));
        x = pl->xa;
    }
    if (pl->L == 1) fftw_execute_dft(pl->plan[d][0], x, x);
    else if (pl->rows) bspfft_exec_rows(pl, x, d);
    else if (pl->pull) exec_pull(pl, x, d);
    else if (pl->fpull) exec_fused_pull(pl, x, d);
    else if (pl->fused) exec_fused(pl, x, d);
    else if (pl->fast) exec_fast(pl, x, d);
    else exec_general(pl, x, d);
    if (staged) memcpy(xin, pl->xa, pl->N * sizeof(fftw_complex));
}
