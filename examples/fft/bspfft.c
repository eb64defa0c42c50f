/*
 * BSP FFT with FFTW local kernels; see bspfft.h for the algorithm.
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
#include "bspfft.h"

#include <inprod.h>

#include <bsp.h>
#include <fftw3.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXPASS 64
#define TWO_PI 6.283185307179586476925286766559

typedef struct run {
    unsigned pid;
    size_t dst, src, len;
} run;

struct bspfft_plan {
    size_t n, N;                  /* length, local length n/p */
    unsigned p, s, flags;
    int L, fast;                  /* passes; fast path (L == 2) */
    size_t r[MAXPASS];            /* radices */
    fftw_plan plan[2][MAXPASS];   /* [forward, backward][pass] */
    fftw_complex *work, *recv[2], *send, *xa;
    int par, align;
    /* fast path: twiddle w_n^(s u), u = lo + T hi, two tables */
    size_t T;
    fftw_complex *t1, *t2;
    /* general path, per redistribution l: pack order, twiddles in pack
     * order, runs of consecutive destinations */
    size_t *ord[MAXPASS];
    fftw_complex *tw[MAXPASS];
    run *runs[MAXPASS];
    size_t nruns[MAXPASS];
};

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* radices, smallest first; returns L or 0 */
static int radices(size_t n, unsigned p, size_t *r)
{
    if (n == 0 || p == 0 || n % p != 0) return 0;
    const size_t N = n / p;
    size_t rest = n, tmp[MAXPASS];
    int L = 0;
    while (rest > 1) {
        size_t f = gcd(N, rest);
        if (f < 2 || L == MAXPASS) return 0;
        tmp[L++] = f;
        rest /= f;
    }
    if (L == 0) tmp[L++] = 1;   /* n == 1 */
    for (int i = 0; i < L; ++i)
        if (r) r[i] = tmp[L - 1 - i];
    return L;
}

int bspfft_passes(size_t n, unsigned p)
{
    if (n > ((size_t)1 << 40)) return 0;
    return radices(n, p, NULL);
}

/* exp(sign 2 pi i e / a), e reduced modulo a */
static void expi(fftw_complex w, uint64_t e, uint64_t a, int sign)
{
    e %= a;
    double ang = TWO_PI * (double)e / (double)a;
    w[0] = cos(ang);
    w[1] = sign * sin(ang);
}

static fftw_plan plan_pass(size_t N, size_t r, fftw_complex *in, fftw_complex *out, int sign,
                           unsigned flags)
{
    int nn = (int)r, howmany = (int)(N / r), stride = (int)(N / r);
    unsigned f = FFTW_DESTROY_INPUT | ((flags & BSPFFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE);
    return fftw_plan_many_dft(1, &nn, howmany, in, NULL, stride, 1, out, NULL, stride, 1, sign, f);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* general path: pack order, twiddles and runs of the redistribution after
 * pass l */
static int make_redistribution(bspfft_plan *pl, int l)
{
    const size_t n = pl->n, N = pl->N, p = pl->p, s = pl->s, r = pl->r[l];
    size_t R = 1;
    for (int i = 0; i < l; ++i) R *= pl->r[i];
    const size_t A = n / R, D = n / r;
    uint64_t *key = malloc(N * sizeof *key);
    uint64_t *e = malloc(N * sizeof *e);
    pl->ord[l] = malloc(N * sizeof *pl->ord[l]);
    pl->tw[l] = fftw_malloc(N * sizeof(fftw_complex));
    if (!key || !e || !pl->ord[l] || !pl->tw[l]) {
        free(key);
        free(e);
        return -1;
    }
    for (size_t t = 0; t < N; ++t) {
        const uint64_t c = s + p * t, k = c / D, rem = c % D, K = rem % R, jj = rem / R;
        const uint64_t c2 = K + R * k + R * r * jj;
        /* destination c2 mod p, local index c2 div p; sorted by (dest, local) */
        key[t] = (c2 % p) * (uint64_t)N + c2 / p;
        e[t] = (jj * k) % A;
    }
    /* sort (key, t) pairs by key (keys are distinct) */
    uint64_t *kt = malloc(N * 2 * sizeof *kt);
    if (!kt) {
        free(key);
        free(e);
        return -1;
    }
    for (size_t t = 0; t < N; ++t) {
        kt[2 * t] = key[t];
        kt[2 * t + 1] = t;
    }
    qsort(kt, N, 2 * sizeof *kt, cmp_u64);   /* keys are distinct: the first word decides */
    size_t nr = 0;
    for (size_t i = 0; i < N; ++i)
        if (i == 0 || kt[2 * i] != kt[2 * (i - 1)] + 1 || kt[2 * i] / N != kt[2 * (i - 1)] / N) ++nr;
    pl->runs[l] = malloc(nr * sizeof(run));
    if (!pl->runs[l]) {
        free(key);
        free(e);
        free(kt);
        return -1;
    }
    size_t q = 0;
    for (size_t i = 0; i < N; ++i) {
        const uint64_t k2 = kt[2 * i];
        const size_t t = (size_t)kt[2 * i + 1];
        pl->ord[l][i] = t;
        expi(pl->tw[l][i], e[t], A, -1);
        if (i == 0 || k2 != kt[2 * (i - 1)] + 1 || k2 / N != kt[2 * (i - 1)] / N) {
            pl->runs[l][q].pid = (unsigned)(k2 / N);
            pl->runs[l][q].dst = (size_t)(k2 % N);
            pl->runs[l][q].src = i;
            pl->runs[l][q].len = 0;
            ++q;
        }
        pl->runs[l][q - 1].len++;
    }
    pl->nruns[l] = nr;
    free(key);
    free(e);
    free(kt);
    return 0;
}

static void free_tables(bspfft_plan *pl)
{
    fftw_free(pl->work);
    fftw_free(pl->recv[0]);
    fftw_free(pl->recv[1]);
    fftw_free(pl->send);
    fftw_free(pl->xa);
    fftw_free(pl->t1);
    fftw_free(pl->t2);
    for (int l = 0; l < MAXPASS; ++l) {
        free(pl->ord[l]);
        fftw_free(pl->tw[l]);
        free(pl->runs[l]);
    }
}

bspfft_plan *bspfft_plan_create(size_t n, unsigned flags)
{
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    size_t r[MAXPASS];
    const int L = bspfft_passes(n, p) ? radices(n, p, r) : 0;
    if (L == 0) return NULL;   /* the same answer on every process */
    bspfft_plan *pl = calloc(1, sizeof *pl);
    int ok = pl != NULL;
    const size_t N = n / p, bytes = N * sizeof(fftw_complex);
    if (ok) {
        pl->n = n;
        pl->N = N;
        pl->p = p;
        pl->s = s;
        pl->flags = flags;
        pl->L = L;
        memcpy(pl->r, r, sizeof r);
        pl->fast = L == 2 && !(flags & BSPFFT_GENERIC);
        pl->work = fftw_malloc(bytes);
        pl->recv[0] = fftw_malloc(bytes);
        pl->recv[1] = fftw_malloc(bytes);
        pl->xa = fftw_malloc(bytes);
        if (!pl->fast && L > 1) pl->send = fftw_malloc(bytes);
        ok = pl->work && pl->recv[0] && pl->recv[1] && pl->xa && (pl->fast || L == 1 || pl->send);
    }
    if (ok && pl->fast) {
        /* u = lo + T hi with p | T | N and T about sqrt(N) */
        size_t B = N / p, d = (size_t)sqrt((double)B);
        while (d > 1 && B % d) --d;
        if (d < 1) d = 1;
        pl->T = p * d;
        pl->t1 = fftw_malloc(pl->T * sizeof(fftw_complex));
        pl->t2 = fftw_malloc((N / pl->T) * sizeof(fftw_complex));
        ok = pl->t1 && pl->t2;
        if (ok) {
            for (size_t lo = 0; lo < pl->T; ++lo) expi(pl->t1[lo], (uint64_t)s * lo, n, -1);
            for (size_t hi = 0; hi < N / pl->T; ++hi)
                expi(pl->t2[hi], (uint64_t)s * pl->T * hi, n, -1);
        }
    } else if (ok) {
        for (int l = 0; ok && l + 1 < L; ++l) ok = make_redistribution(pl, l) == 0;
    }
    /* everyone agrees on success before registering */
    {
        ip_reducer red;
        double mine = ok ? 0.0 : 1.0, bad;
        if (ip_reducer_init(&red, 1) != 0) bsp_abort("bspfft: out of memory on pid %u\n", s);
        bsp_sync();
        ip_reducer_put(&red, &mine);
        bsp_sync();
        ip_reducer_sum(&red, &bad);
        ip_reducer_free(&red);
        if (bad != 0.0) {
            if (pl) free_tables(pl);
            free(pl);
            return NULL;
        }
    }
    bsp_push_reg(pl->recv[0], bytes);
    bsp_push_reg(pl->recv[1], bytes);
    /* FFTW's planner is not thread-safe: plan one process after the other
     * (this also puts the registrations in force) */
    for (unsigned q = 0; q < p; ++q) {
        if (q == s) {
            for (int d = 0; d < ((flags & BSPFFT_FORWARD_ONLY) ? 1 : 2); ++d) {
                const int sign = d == 0 ? FFTW_FORWARD : FFTW_BACKWARD;
                if (L == 1) {
                    pl->plan[d][0] = plan_pass(N, r[0], pl->xa, pl->xa, sign, flags);
                } else if (pl->fast) {
                    pl->plan[d][0] = plan_pass(N, r[0], pl->xa, pl->xa, sign, flags);
                    pl->plan[d][1] = plan_pass(N, r[1], pl->work, pl->xa, sign, flags);
                } else {
                    pl->plan[d][0] = plan_pass(N, r[0], pl->xa, pl->work, sign, flags);
                    for (int l = 1; l + 1 < L; ++l)
                        pl->plan[d][l] = plan_pass(N, r[l], pl->recv[0], pl->recv[0], sign, flags);
                    pl->plan[d][L - 1] = plan_pass(N, r[L - 1], pl->recv[0], pl->xa, sign, flags);
                }
                for (int l = 0; l < L; ++l)
                    if (!pl->plan[d][l]) bsp_abort("bspfft: FFTW could not plan on pid %u\n", s);
            }
        }
        bsp_sync();
    }
    pl->align = fftw_alignment_of((double *)pl->xa);
    return pl;
}

void bspfft_plan_destroy(bspfft_plan *pl)
{
    if (!pl) return;
    bsp_pop_reg(pl->recv[0]);
    bsp_pop_reg(pl->recv[1]);
    for (unsigned q = 0; q < pl->p; ++q) {
        if (q == pl->s)
            for (int d = 0; d < 2; ++d)
                for (int l = 0; l < pl->L; ++l)
                    if (pl->plan[d][l]) fftw_destroy_plan(pl->plan[d][l]);
        bsp_sync();
    }
    free_tables(pl);
    free(pl);
}

static inline void cmul(fftw_complex out, const fftw_complex a, double wr, double wi)
{
    const double re = a[0] * wr - a[1] * wi, im = a[0] * wi + a[1] * wr;
    out[0] = re;
    out[1] = im;
}

static void put_block(const bspfft_plan *pl, unsigned pid, const fftw_complex *src, fftw_complex *dst,
                      size_t offset, size_t len)
{
    const size_t off = offset * sizeof(fftw_complex), bytes = len * sizeof(fftw_complex);
    if (pl->flags & BSPFFT_BUFFERED) bsp_put(pid, src, dst, off, bytes);
    else bsp_hpput(pid, src, dst, off, bytes);
}

/* p^2 | n: short DFTs, one redistribution, twiddle + unpack, long FFT */
static void exec_fast(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t N = pl->N, p = pl->p, s = pl->s, B = N / p, T = pl->T;
    fftw_execute_dft(pl->plan[d][0], x, x);
    /* block k of x (the k-th outputs of the short DFTs) goes to process k */
    fftw_complex *rv = pl->recv[pl->par];
    for (unsigned k = 0; k < p; ++k)
        if (k != s) put_block(pl, k, x + (size_t)k * B, rv, s * B, B);
    bsp_sync();
    pl->par ^= 1;
    /* work[s' + p t] = block s'[t] * w_n^(s u), u = s' + p t */
    const fftw_complex *blk[64], **bp = blk;
    const fftw_complex **big = NULL;
    if (p > 64) {
        big = malloc(p * sizeof *big);
        if (!big) bsp_abort("bspfft: out of memory\n");
        bp = big;
    }
    for (size_t q = 0; q < p; ++q) bp[q] = q == s ? x + s * B : rv + q * B;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_complex *w = pl->work;
    for (size_t hi = 0; hi < N / T; ++hi) {
        const double w2r = pl->t2[hi][0], w2i = sg * pl->t2[hi][1];
        for (size_t lo0 = 0; lo0 < T; lo0 += p) {
            const size_t u0 = hi * T + lo0, tl = u0 / p;
            for (size_t q = 0; q < p; ++q) {
                const double t1r = pl->t1[lo0 + q][0], t1i = sg * pl->t1[lo0 + q][1];
                cmul(w[u0 + q], bp[q][tl], t1r * w2r - t1i * w2i, t1r * w2i + t1i * w2r);
            }
        }
    }
    free(big);
    fftw_execute_dft(pl->plan[d][1], w, x);
}

static void exec_general(bspfft_plan *pl, fftw_complex *x, int d)
{
    const int L = pl->L;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_execute_dft(pl->plan[d][0], x, pl->work);
    fftw_complex *cur = pl->work;
    for (int l = 0; l + 1 < L; ++l) {
        fftw_complex *snd = pl->send, *rv = pl->recv[pl->par];
        const size_t *ord = pl->ord[l];
        const fftw_complex *tw = pl->tw[l];
        for (size_t i = 0; i < pl->N; ++i) cmul(snd[i], cur[ord[i]], tw[i][0], sg * tw[i][1]);
        for (size_t k = 0; k < pl->nruns[l]; ++k) {
            const run *ru = &pl->runs[l][k];
            if (ru->pid == pl->s) memcpy(rv + ru->dst, snd + ru->src, ru->len * sizeof(fftw_complex));
            else put_block(pl, ru->pid, snd + ru->src, rv, ru->dst, ru->len);
        }
        bsp_sync();
        pl->par ^= 1;
        cur = rv;
        if (l + 2 < L) fftw_execute_dft(pl->plan[d][l + 1], cur, cur);
        else fftw_execute_dft(pl->plan[d][l + 1], cur, x);
    }
}

void bspfft_execute(bspfft_plan *pl, double *xin, int sign)
{
    const int d = sign < 0 ? 0 : 1;
    if (!pl->plan[d][0]) bsp_abort("bspfft_execute: the plan has no backward transform\n");
    fftw_complex *x = (fftw_complex *)xin;
    const int staged = fftw_alignment_of(xin) != pl->align;
    if (staged) {
        memcpy(pl->xa, x, pl->N * sizeof(fftw_complex));
        x = pl->xa;
    }
    if (pl->L == 1) fftw_execute_dft(pl->plan[d][0], x, x);
    else if (pl->fast) exec_fast(pl, x, d);
    else exec_general(pl, x, d);
    if (staged) memcpy(xin, pl->xa, pl->N * sizeof(fftw_complex));
}

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
