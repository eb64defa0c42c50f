/* BSP FFT: making and freeing plans (tables, buffers, FFTW plans). */
#include "bspfft_internal.h"

#include <inprod.h>

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>

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
    free(pl->peer);
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

/* bsp_direct_get reads memory at once on the pthread engine; on the MPI
 * and hybrid engines (SUPERSTEP_ENGINE, set by bsprun) it may be a round
 * trip to another rank, which with more ranks than cores waits for that
 * rank to be scheduled */
static int direct_get_is_local(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return !e || !*e || strcasecmp(e, "pthread") == 0;
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;   /* splitmix64's finaliser */
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A number that differs between processes (address spaces) and is the
 * same for all threads of one: an address-space-wide value made at first
 * use (its own address, the clock, the process id), mixed with the current
 * process id (a forked child gets a token of its own). */
static uint64_t process_token(void)
{
    static _Atomic uint64_t base;
    uint64_t b = atomic_load(&base);
    if (b == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t z = mix64(((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
                           ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)&base);
        uint64_t expected = 0;
        atomic_compare_exchange_strong(&base, &expected, z ? z : 1);
        b = atomic_load(&base);
    }
    return mix64(b ^ ((uint64_t)getpid() * 0x9e3779b97f4a7c15ULL));
}

/* Collective. When all processes are threads of one address space (the
 * pthread engine, or the hybrid engine on one node), the codes that read
 * the others' buffers after the sync read them in place (what
 * bsp_direct_get would copy): the plan learns their addresses here. The
 * process tokens decide, not the engine's name: an MPI program may not say
 * which engine it runs on. Every process reaches the same answer. */
static void learn_peers(bspfft_plan *pl)
{
    typedef struct { uint64_t token; fftw_complex *buf[2]; } peer_info;
    const unsigned p = pl->p, s = pl->s;
    peer_info mine = { process_token(), { pl->recv[0], pl->recv[1] } };
    peer_info *all = calloc(p, sizeof *all);
    if (!all) bsp_abort("bspfft: out of memory on pid %u\n", s);
    bsp_push_reg(all, p * sizeof *all);
    bsp_sync();
    for (unsigned q = 0; q < p; ++q) bsp_put(q, &mine, all, s * sizeof *all, sizeof mine);
    bsp_sync();
    bsp_pop_reg(all);
    bsp_sync();
    int shared = 1;
    for (unsigned q = 0; q < p; ++q) shared = shared && all[q].token == mine.token;
    if (shared) {
        pl->peer = malloc(2 * (size_t)p * sizeof *pl->peer);
        if (!pl->peer) bsp_abort("bspfft: out of memory on pid %u\n", s);
        for (unsigned q = 0; q < p; ++q) {
            pl->peer[2 * q] = all[q].buf[0];
            pl->peer[2 * q + 1] = all[q].buf[1];
        }
        fftw_free(pl->stage);   /* no copies to stage */
        pl->stage = NULL;
    }
    free(all);
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
    /* by default the fused code with the exchange at the end wherever it
     * applies (below the two-pass code's sizes): measured at p = 2 on 2
     * cores it was as fast as the push code up to 2 MiB of data and faster
     * above, and faster than the pull code, which reads whole lines of
     * the others' outputs of which it uses 1/p (docs/apps-numeric.md).
     * Where bsp_direct_get is a round trip (MPI, hybrid), the push code. */
    const int fpull = can_push && !(flags & (BSPFFT_BUFFERED | BSPFFT_PUSH | BSPFFT_PULL)) &&
                      ((flags & BSPFFT_FUSED_PULL) || direct_get_is_local());
    const int pull = pl && pl->fast && p <= 8 && !fpull &&
                     !(flags & (BSPFFT_NOFUSE | BSPFFT_BUFFERED | BSPFFT_PUSH)) &&
                     ((flags & BSPFFT_PULL) || !can_push);
    /* the two-pass code (by default above 16 MiB of data, where it measured
     * faster than push and pull at p = 2: 2^21 .. 2^24): n = n1 n2 with n2 at
     * most 2^12 and R = 8 (or 4) rows and columns per block, p R | n1, n2 */
    unsigned lg = 0;
    while (((size_t)1 << lg) < n) ++lg;
    const unsigned lg2 = (lg + 1) / 2 < 12 ? (lg + 1) / 2 : 12, lg1 = lg - lg2;
    const size_t mn = ((size_t)1 << (lg1 < lg2 ? lg1 : lg2)) / p, R = mn >= 8 ? 8 : 4;
    const int rows = pl && pl->fast && p <= 8 && (n & (n - 1)) == 0 && mn >= 4 &&
                     ((size_t)1 << lg2) >= (size_t)p * p &&
                     !(flags & (BSPFFT_NOFUSE | BSPFFT_BUFFERED | BSPFFT_PUSH | BSPFFT_PULL |
                                BSPFFT_FUSED_PULL)) &&
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
        pl->fpull = fpull;
        if (pl->fused) {
            /* x never reaches FFTW (no staging copy), and with the exchange
             * at the end there is no put source either */
            free(pl->xa);
            pl->xa = NULL;
            if (fpull) {
                free(pl->work);
                pl->work = NULL;
            }
        }
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
        } else if (fpull) {
            /* 32-64 KiB of remote data per chunk (p - 1 reads of C) */
            const size_t B = N / p;
            pl->C = 4096 / p;
            if (pl->C > B) pl->C = B;
            pl->stage = fftw_malloc(p * pl->C * sizeof(fftw_complex));
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
    if ((pl->fpull || pl->pull || pl->rows) && !(flags & BSPFFT_COPY_REMOTE)) learn_peers(pl);
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
                    if (pl->plan[d][l] && !(l > 0 && pl->plan[d][l] == pl->plan[d][0]))
                        fftw_destroy_plan(pl->plan[d][l]);
        bsp_sync();
    }
    free_tables(pl);
    free(pl);
}
