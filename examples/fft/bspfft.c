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

#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAXPASS 64
#define TWO_PI 6.283185307179586476925286766559

typedef struct run {
    unsigned pid;
    size_t dst, src, len;
} run;

struct bspfft_plan {
    size_t n, N;                  /* length, local length n/p */
    unsigned p, s, flags;
    int L, fast, fused, pull, rows; /* passes; fast path (L == 2); its fused, pull and
                                       two-pass (rows) variants */
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

/* 64-byte aligned (whole cache lines, for the streaming stores), with huge
 * pages advised on the 2 MiB-aligned interior of big buffers (THP in
 * madvise mode gives malloc 4 KiB pages); freed with free() */
static void *big_alloc(size_t bytes)
{
    void *m = NULL;
    if (posix_memalign(&m, 64, bytes ? bytes : 64) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes >= 2 * huge) {
        uintptr_t a = ((uintptr_t)m + huge - 1) & ~(huge - 1);
        uintptr_t e = ((uintptr_t)m + bytes) & ~(huge - 1);
        if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
#endif
    return m;
}

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
    free(pl->work);
    free(pl->recv[0]);
    free(pl->recv[1]);
    fftw_free(pl->send);
    free(pl->xa);
    fftw_free(pl->t1);
    fftw_free(pl->t2);
    fftw_free(pl->f1);
    fftw_free(pl->f2);
    fftw_free(pl->cs);
    fftw_free(pl->wp);
    fftw_free(pl->stage);
    free(pl->v);
    fftw_free(pl->g1);
    fftw_free(pl->g2);
    fftw_free(pl->W1);
    fftw_free(pl->W2);
    fftw_free(pl->twr);
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
        pl->work = big_alloc(bytes);
        pl->recv[0] = big_alloc(bytes);
        pl->recv[1] = big_alloc(bytes);
        pl->xa = big_alloc(bytes);
        if (!pl->fast && L > 1) pl->send = fftw_malloc(bytes);
        ok = pl->work && pl->recv[0] && pl->recv[1] && pl->xa && (pl->fast || L == 1 || pl->send);
    }
    const int can_push = pl && pl->fast && p <= 8 && (N & (N - 1)) == 0 && !(flags & BSPFFT_NOFUSE);
    int pull = pl && pl->fast && p <= 8 && !(flags & (BSPFFT_NOFUSE | BSPFFT_BUFFERED | BSPFFT_PUSH));
    if (pull && can_push && !(flags & BSPFFT_PULL)) {
        /* where the push code measured faster (p = 2, 2 cores, 32 MiB L3):
         * up to 2 MiB of data, where the pull code reads twice what it
         * needs from the other cores' caches (whole lines of G_q), and at
         * 16 MiB, where its x and out-of-place FFTW outputs (32 MiB in
         * all) just fill the L3 while push's in-place block FFTs use half */
        const size_t b = n * sizeof(fftw_complex);
        pull = !(b <= ((size_t)2 << 20) || (b > ((size_t)8 << 20) && b <= ((size_t)16 << 20)));
    }
    /* the two-pass code (by default above 16 MiB of data, where it measured
     * faster than push and pull at p = 2: 2^21 .. 2^24): n = n1 n2 with n2 at
     * most 2^12 and R = 8 (or 4) rows and columns per block, p R | n1, n2 */
    unsigned lg = 0;
    while (((size_t)1 << lg) < n) ++lg;
    const unsigned lg2 = (lg + 1) / 2 < 12 ? (lg + 1) / 2 : 12, lg1 = lg - lg2;
    const size_t mn = ((size_t)1 << (lg1 < lg2 ? lg1 : lg2)) / p, R = mn >= 8 ? 8 : 4;
    const int rows = pl && pl->fast && p <= 8 && (n & (n - 1)) == 0 && mn >= 4 &&
                     ((size_t)1 << lg2) >= (size_t)p * p &&
                     !(flags & (BSPFFT_NOFUSE | BSPFFT_BUFFERED | BSPFFT_PUSH | BSPFFT_PULL)) &&
                     ((flags & BSPFFT_ROWS) || n * sizeof(fftw_complex) > ((size_t)16 << 20));
    if (ok && rows) {
        const size_t n2 = (size_t)1 << lg2;
        pl->rows = 1;
        /* neither the put source nor the staging copy of x is used: half
         * the plan's memory at large n */
        free(pl->work);
        free(pl->xa);
        pl->work = pl->xa = NULL;
        pl->lg1 = lg1;
        pl->lg2 = lg2;
        pl->lgG = (lg + 1) / 2;
        const size_t nbk = ((size_t)1 << lg2) / p / R;   /* tiles per slab row */
        pl->B1 = 1;
        while (pl->B1 * pl->B1 < nbk) pl->B1 *= 2;
        pl->R = R;
        const size_t nv = n2 > ((size_t)1 << lg1) ? n2 : ((size_t)1 << lg1);
        pl->v = big_alloc(R * nv * sizeof(fftw_complex));
        pl->stage = fftw_malloc(R * n2 * sizeof(fftw_complex));
        pl->twr = fftw_malloc(n2 * sizeof(fftw_complex));
        pl->g1 = fftw_malloc(((size_t)1 << pl->lgG) * sizeof(fftw_complex));
        pl->g2 = fftw_malloc((n >> pl->lgG) * sizeof(fftw_complex));
        pl->W1 = fftw_malloc(pl->B1 * sizeof(fftw_complex));
        pl->W2 = fftw_malloc((nbk / pl->B1 + 1) * sizeof(fftw_complex));
        ok = pl->v && pl->stage && pl->twr && pl->g1 && pl->g2 && pl->W1 && pl->W2;
        if (ok) {
            for (size_t j = 0; j < ((size_t)1 << pl->lgG); ++j) expi(pl->g1[j], j, n, -1);
            for (size_t h = 0; h < (n >> pl->lgG); ++h) expi(pl->g2[h], (uint64_t)h << pl->lgG, n, -1);
        }
    } else if (ok && (pull || can_push)) {
        /* fused and pull: w_N^e = f1[e mod T] f2[e / T], T = 2^lgT about sqrt(N) */
        pl->pull = pull;
        pl->fused = !pull;
        unsigned lgN = 0;
        while (((size_t)1 << lgN) < N) ++lgN;
        pl->lgT = (lgN + 1) / 2;
        const size_t T = (size_t)1 << pl->lgT, H = (N + T - 1) / T;
        pl->f1 = fftw_malloc(T * sizeof(fftw_complex));
        pl->f2 = fftw_malloc(H * sizeof(fftw_complex));
        pl->cs = fftw_malloc(p * sizeof(fftw_complex));
        pl->wp = fftw_malloc(p * p * sizeof(fftw_complex));
        if (pull) {
            /* about 32-64 KiB of remote data per chunk: stays in L1/L2
             * between the read and the radix-p pass */
            const size_t B = N / p;
            pl->C = 4096 / (p * p);
            if (pl->C > B) pl->C = B;
            pl->stage = fftw_malloc(p * p * pl->C * sizeof(fftw_complex));
            ok = pl->stage != NULL;
        }
        ok = ok && pl->f1 && pl->f2 && pl->cs && pl->wp;
        if (ok) {
            for (size_t j = 0; j < T; ++j) expi(pl->f1[j], j, N, -1);
            for (size_t h = 0; h < H; ++h) expi(pl->f2[h], (uint64_t)h * T, N, -1);
            for (size_t k = 0; k < p; ++k) expi(pl->cs[k], (uint64_t)k * s, n, -1);
            for (size_t j = 0; j < p * p; ++j) expi(pl->wp[j], (j / p) * (j % p), p, -1);
        }
    } else if (ok && pl->fast) {
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
                } else if (pl->rows) {
                    /* in place in v: 4 columns of length n1, R rows of length n2 */
                    const int n1 = 1 << pl->lg1, n2 = 1 << pl->lg2;
                    unsigned f = FFTW_DESTROY_INPUT |
                                 ((flags & BSPFFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE);
                    pl->plan[d][0] = fftw_plan_many_dft(1, &n1, (int)pl->R, pl->v, NULL, 1, n1, pl->v, NULL, 1,
                                                        n1, sign, f);
                    pl->plan[d][1] = fftw_plan_many_dft(1, &n2, (int)pl->R, pl->v, NULL, 1, n2, pl->v,
                                                        NULL, 1, n2, sign, f);
                } else if (pl->pull) {
                    /* the whole local FFT of length n/p, out of place into
                     * the registered buffer the others read from */
                    unsigned f = FFTW_DESTROY_INPUT |
                                 ((flags & BSPFFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE);
                    pl->plan[d][0] = fftw_plan_dft_1d((int)N, pl->xa, pl->recv[0], sign, f);
                    pl->plan[d][1] = pl->plan[d][0];
                } else if (pl->fused) {
                    /* the p received blocks: p FFTs of length n/p^2, in place */
                    int B = (int)(N / p);
                    unsigned f = FFTW_DESTROY_INPUT |
                                 ((flags & BSPFFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE);
                    pl->plan[d][0] = fftw_plan_many_dft(1, &B, (int)p, pl->recv[0], NULL, 1, B,
                                                        pl->recv[0], NULL, 1, B, sign, f);
                    pl->plan[d][1] = pl->plan[d][0];
                } else if (pl->fast) {
                    /* short DFTs out of place into work (the put source),
                     * the long FFT in place in x (faster than out of place) */
                    pl->plan[d][0] = plan_pass(N, r[0], pl->xa, pl->work, sign, flags);
                    pl->plan[d][1] = plan_pass(N, r[1], pl->xa, pl->xa, sign, flags);
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
                    if (pl->plan[d][l] && !((pl->fused || pl->pull) && l > 0))
                        fftw_destroy_plan(pl->plan[d][l]);
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
static inline void tick(bspfft_plan *pl, int phase, double *t)
{
    if (!(pl->flags & BSPFFT_PROFILE)) return;
    const double now = bsp_time();
    pl->prof[phase] += now - *t;
    *t = now;
}

void bspfft_profile(const bspfft_plan *pl, double t[4])
{
    for (int i = 0; i < 4; ++i) t[i] = pl->prof[i];
}

static void exec_fast(bspfft_plan *pl, fftw_complex *x, int d)
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

/* w_N^e (conjugated for the backward transform: sg = -1) */
static inline void wN(const bspfft_plan *pl, size_t e, double sg, double *wr, double *wi)
{
    const fftw_complex *a = &pl->f1[e & (((size_t)1 << pl->lgT) - 1)], *b = &pl->f2[e >> pl->lgT];
    *wr = (*a)[0] * (*b)[0] - (*a)[1] * (*b)[1];
    *wi = sg * ((*a)[0] * (*b)[1] + (*a)[1] * (*b)[0]);
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
static void exec_fused(bspfft_plan *pl, fftw_complex *x, int d)
{
    const size_t N = pl->N, p = pl->p, s = pl->s, B = N / p;
    const double sg = d == 0 ? 1.0 : -1.0;
    fftw_complex *w = pl->work, *rv = pl->recv[pl->par];
    double tm = (pl->flags & BSPFFT_PROFILE) ? bsp_time() : 0;
    fftw_complex *dst[8];
    for (size_t k = 0; k < p; ++k) dst[k] = k == s ? rv + B * s : w + B * k;
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
    } else {
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
    tick(pl, 0, &tm);
    for (unsigned k = 0; k < p; ++k)
        if (k != s) put_block(pl, k, w + (size_t)k * B, rv, s * B, B);
    bsp_sync();
    pl->par ^= 1;
    tick(pl, 1, &tm);
    fftw_execute_dft(pl->plan[d][0], rv, rv);
    tick(pl, 3, &tm);
    if (p == 2) {
        const fftw_complex *F0 = rv, *F1 = rv + B;
        const size_t T = (size_t)1 << pl->lgT;
        for (size_t t0 = 0; t0 < B; t0 += T) {
            const size_t run = B - t0 < T ? B - t0 : T;
            const double ur = pl->f2[t0 >> pl->lgT][0], ui = sg * pl->f2[t0 >> pl->lgT][1];
            for (size_t j = 0; j < run; ++j) {
                const size_t k1 = t0 + j;
                const double fr = pl->f1[j][0], fi = sg * pl->f1[j][1];
                const double wr = fr * ur - fi * ui, wi = fr * ui + fi * ur;
                const double br = F1[k1][0] * wr - F1[k1][1] * wi, bi = F1[k1][0] * wi + F1[k1][1] * wr;
                const double ar = F0[k1][0], ai = F0[k1][1];
                x[k1][0] = ar + br;
                x[k1][1] = ai + bi;
                x[k1 + B][0] = ar - br;
                x[k1 + B][1] = ai - bi;
            }
        }
    } else {
        for (size_t k1 = 0; k1 < B; ++k1) {
            double ar[8], ai[8];
            ar[0] = rv[k1][0];
            ai[0] = rv[k1][1];
            for (size_t q = 1; q < p; ++q) {
                double wr, wi;
                wN(pl, q * k1, sg, &wr, &wi);
                const double fr = rv[B * q + k1][0], fi = rv[B * q + k1][1];
                ar[q] = fr * wr - fi * wi;
                ai[q] = fr * wi + fi * wr;
            }
            radix_p_out(pl, sg, ar, ai, x + k1, B);
        }
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
static void exec_pull(bspfft_plan *pl, fftw_complex *x, int d)
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
            if (q == s) {
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
    const fftw_complex *u = &pl->g1[e & (((size_t)1 << pl->lgG) - 1)], *w = &pl->g2[e >> pl->lgG];
    *wr = (*u)[0] * (*w)[0] - (*u)[1] * (*w)[1];
    *wi = sg * ((*u)[0] * (*w)[1] + (*u)[1] * (*w)[0]);
}

static void exec_rows(bspfft_plan *pl, fftw_complex *x, int d)
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
            if (q == s) {
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

static void exec_general(bspfft_plan *pl, fftw_complex *x, int d)
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

void bspfft_execute(bspfft_plan *pl, double *xin, int sign)
{
    const int d = sign < 0 ? 0 : 1;
    if (!pl->plan[d][0]) bsp_abort("bspfft_execute: the plan has no backward transform\n");
    fftw_complex *x = (fftw_complex *)xin;
    /* FFTW plans for pl->xa's alignment; the rows code never hands x to FFTW */
    const int staged = !pl->rows && fftw_alignment_of(xin) != pl->align;
    if (staged) {
        memcpy(pl->xa, x, pl->N * sizeof(fftw_complex));
        x = pl->xa;
    }
    if (pl->L == 1) fftw_execute_dft(pl->plan[d][0], x, x);
    else if (pl->rows) exec_rows(pl, x, d);
    else if (pl->pull) exec_pull(pl, x, d);
    else if (pl->fused) exec_fused(pl, x, d);
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
