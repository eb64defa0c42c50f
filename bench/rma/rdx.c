/*
 * The Rdx suite of the RMA paper, written once against <rma.h>: parallel
 * radix sort of n 32-bit unsigned keys, four rounds of parallel count sort
 * on 8-bit digits, least significant first (Figs. 9 and 10).
 *   -a 0  RDXSORT     per round: count the digits; put the 256 counts to
 *                     every process; sync; prefix over (digit, process);
 *                     local stable count sort; route each digit's run of
 *                     keys to its final place by put (up to 256 + p puts)
 *   -a 1  RDXSORTOPT  the same, but process k starts the routing at digit
 *                     256k/p (the paper's artificial delay is left out)
 *   -a 2  combining   the keys a process sends to one destination are one
 *                     contiguous slice of its locally sorted keys: one put
 *                     per destination into a receive area, then the
 *                     destination places them
 * Keys are block-distributed (process k holds n/p, one more for k < n mod
 * p) and stay so: on return process k holds the keys of ranks start_k ...
 * Key i of the input is sort_key(5, 0, i) (examples/sort).
 *
 *   rdx [-n keys] [-a 0|1|2] [-r reps] [-s 1: time the sequential sort]
 *       [-c 0: no check]
 * Output:
 *   rdx lib=L algo=A p=P n=N s=T        (best of reps, slowest process)
 *   rdx seq n=N s=T                     (with -s 1)
 *   rdx lib=L p=P check=ok|FAILED
 */
#include "li_util.h"
#include "sort.h"

#define KSZ sizeof(uint32_t)

static void *rdx_alloc(size_t bytes)
{
    void *x = malloc(bytes ? bytes : 1);
    if (!x)
        LIABORT("rdx: out of memory (%zu bytes)\n", bytes);
    return x;
}

static size_t rdx_first(size_t n, unsigned p, unsigned k)
{
    return k * (n / p) + (k < n % p ? k : n % p);
}

static unsigned rdx_owner(const size_t *start, unsigned p, size_t g)
{
    unsigned lo = 0, hi = p;   /* start[lo] <= g < start[hi] */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (start[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* global position of the run of digit d of process k: pos[k * 256 + d] */
static void rdx_positions(const uint64_t *cnt_all, unsigned p, size_t *pos)
{
    size_t g = 0;
    for (unsigned d = 0; d < 256; d++)
        for (unsigned k = 0; k < p; k++) {
            pos[(size_t)k * 256 + d] = g;
            g += (size_t)cnt_all[(size_t)k * 256 + d];
        }
}

/* the combining variant's receiver: the slices that arrived from every
 * process (in source order in recv) to their places in out */
static void rdx_place(const uint32_t *recv, uint32_t *out, const uint64_t *cnt_all,
                      const size_t *pos, const size_t *start, unsigned p, unsigned me)
{
    const size_t lo = start[me], hi = start[me + 1];
    const uint32_t *src = recv;
    for (unsigned k = 0; k < p; k++)
        for (unsigned d = 0; d < 256; d++) {
            size_t a = pos[(size_t)k * 256 + d], b = a + (size_t)cnt_all[(size_t)k * 256 + d];
            if (a < lo)
                a = lo;
            if (b > hi)
                b = hi;
            if (a < b) {
                memcpy(out + (a - lo), src, (b - a) * KSZ);
                src += b - a;
            }
        }
}

/* sorts keys[0..nl) (the block of this process); returns the time */
static double rdx_sort(uint32_t *keys, size_t n, int algo)
{
    const unsigned p = (unsigned)LINPROCS(), pid = (unsigned)LIPID();
    size_t *start = (size_t *)rdx_alloc((p + 1) * sizeof *start);
    for (unsigned k = 0; k <= p; k++)
        start[k] = rdx_first(n, p, k);
    const size_t nl = start[pid + 1] - start[pid];
    uint64_t *cnt_all = (uint64_t *)rdx_alloc((size_t)p * 256 * sizeof *cnt_all);
    size_t *pos = (size_t *)rdx_alloc((size_t)p * 256 * sizeof *pos);
    /* the combining variant places the slices of a round in the next one,
     * while the new counts arrive in cnt_all: it keeps a copy */
    uint64_t *cnt_prev = (uint64_t *)rdx_alloc((size_t)p * 256 * sizeof *cnt_prev);
    uint32_t *buf = (uint32_t *)rdx_alloc(nl * KSZ), *tmp = (uint32_t *)rdx_alloc(nl * KSZ);
    LIREGISTER(cnt_all, (size_t)p * 256 * sizeof *cnt_all);
    if (algo == 2) {
        LIREGISTER(buf, nl * KSZ);   /* the receive area */
    } else {
        LIREGISTER(keys, nl * KSZ);
        LIREGISTER(buf, nl * KSZ);
    }
    LIINIT();
    LICOMMIT();
    LIBARRIER();
    const double t0 = LITIME();

    uint32_t *cur = keys, *nxt = buf;
    for (unsigned rnd = 0; rnd < 4; rnd++) {
        const unsigned sh = 8 * rnd;
        if (algo == 2 && rnd > 0)   /* the previous round's slices to their places */
            rdx_place(buf, keys, cnt_prev, pos, start, p, pid);
        /* line 2: count the digits; the counts to everybody */
        uint64_t cnt[256];
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < nl; i++)
            cnt[(cur[i] >> sh) & 255]++;
        for (unsigned q = 0; q < p; q++)
            LIPUT(q, cnt, cnt_all, (size_t)pid * 256 * sizeof *cnt_all, sizeof cnt);
        LISYNC();
        LIBARRIER();
        /* line 3: the prefix gives every run's global place */
        rdx_positions(cnt_all, p, pos);
        if (algo == 2)
            memcpy(cnt_prev, cnt_all, (size_t)p * 256 * sizeof *cnt_all);
        size_t loff[256], l = 0;
        for (unsigned d = 0; d < 256; d++) {
            loff[d] = l;
            l += (size_t)cnt[d];
        }
        {   /* the local stable count sort */
            size_t off[256];
            memcpy(off, loff, sizeof off);
            for (size_t i = 0; i < nl; i++) {
                const uint32_t k = cur[i];
                tmp[off[(k >> sh) & 255]++] = k;
            }
        }
        const size_t *mypos = pos + (size_t)pid * 256;
        if (algo == 2) {
            /* my keys in tmp have increasing global places: the slice for
             * destination j is contiguous; it lands after the slices of the
             * processes before me */
            size_t i = 0;
            for (unsigned j = 0; j < p && i < nl; j++) {
                size_t before = 0, mine = 0;   /* keys for j from processes < pid, from me */
                for (unsigned k = 0; k <= pid; k++)
                    for (unsigned d = 0; d < 256; d++) {
                        size_t a = pos[(size_t)k * 256 + d];
                        size_t b = a + (size_t)cnt_all[(size_t)k * 256 + d];
                        if (a < start[j])
                            a = start[j];
                        if (b > start[j + 1])
                            b = start[j + 1];
                        if (a < b) {
                            if (k < pid)
                                before += b - a;
                            else
                                mine += b - a;
                        }
                    }
                if (mine) {
                    LIPUT(j, tmp + i, buf, before * KSZ, mine * KSZ);
                    i += mine;
                }
            }
        } else {
            /* lines 4-5: every digit's run to its place (RDXSORTOPT: from
             * digit 256 pid / p on) */
            const unsigned d0 = algo == 1 ? (unsigned)(((size_t)pid * 256) / p) : 0;
            for (unsigned dd = 0; dd < 256; dd++) {
                const unsigned d = (d0 + dd) & 255;
                size_t len = (size_t)cnt[d], g = mypos[d];
                const uint32_t *src = tmp + loff[d];
                while (len > 0) {
                    const unsigned j = rdx_owner(start, p, g);
                    size_t m = start[j + 1] - g;
                    if (m > len)
                        m = len;
                    LIPUT(j, src, nxt, (g - start[j]) * KSZ, m * KSZ);
                    src += m;
                    g += m;
                    len -= m;
                }
            }
        }
        LISYNC();
        LIBARRIER();
        if (algo != 2) {
            uint32_t *t = cur;
            cur = nxt;
            nxt = t;
        }
    }
    if (algo == 2)
        rdx_place(buf, keys, cnt_prev, pos, start, p, pid);
    /* four rounds: the result is in keys */
    const double t = LITIME() - t0;
    if (algo != 2)
        LIDEREGISTER(keys);
    LIDEREGISTER(buf);
    LIDEREGISTER(cnt_all);
    free(tmp);
    free(buf);
    free(pos);
    free(cnt_prev);
    free(cnt_all);
    free(start);
    return t;
}

/* count, sum, sum of squares (mod 2^64), first, last, sorted */
static void rdx_digest(const uint32_t *a, size_t nl, uint64_t *dg)
{
    uint64_t s = 0, s2 = 0;
    int sorted = 1;
    for (size_t i = 0; i < nl; i++) {
        s += a[i];
        s2 += (uint64_t)a[i] * a[i];
        if (i && a[i] < a[i - 1])
            sorted = 0;
    }
    dg[0] = nl;
    dg[1] = s;
    dg[2] = s2;
    dg[3] = nl ? a[0] : 0;
    dg[4] = nl ? a[nl - 1] : 0;
    dg[5] = (uint64_t)sorted;
}

/* every process's dg[0..6) at process 0 */
static void rdx_gather(const uint64_t *dg, uint64_t *all)
{
    const int p = LINPROCS(), pid = LIPID();
    LIREGISTER(all, pid == 0 ? (size_t)p * 6 * sizeof *all : 0);
    LIINIT();
    LICOMMIT();
    LIPUT(0, dg, all, (size_t)pid * 6 * sizeof *dg, 6 * sizeof *dg);
    LISYNC();
    LIBARRIER();
    LIDEREGISTER(all);
}

int main(int argc, char **argv)
{
    LIBEGIN(LINPROCS());
    const int p = LINPROCS(), pid = LIPID();
    static const char *const names[] = { "-n", "-a", "-r", "-s", "-c", NULL };
    uint64_t par[6] = { 0, 0, 0, 0, 0, 0 };
    if (pid == 0) {
        par[0] = li_opt(argc, argv, "-n", 1024000);
        par[1] = li_opt(argc, argv, "-a", 0);
        par[2] = li_opt(argc, argv, "-r", 1);
        par[3] = li_opt(argc, argv, "-s", 0);
        par[4] = li_opt(argc, argv, "-c", 1);
        par[5] = !li_opts_ok(argc, argv, names);
        if (par[1] > 2) {
            fprintf(stderr, "%s: -a 0 (RDXSORT), 1 (RDXSORTOPT) or 2 (combining), not %llu\n",
                    argv[0], (unsigned long long)par[1]);
            par[5] = 1;
        }
    }
    li_bcast_u64(par, 6);
    if (par[5]) {
        LIEND();
        return 2;
    }
    const size_t n = (size_t)par[0];
    const int algo = (int)par[1], check = (int)par[4];
    const unsigned reps = par[2] ? (unsigned)par[2] : 1;
    static const char *const algos[] = { "rdxsort", "rdxsortopt", "combining" };

    if (par[3] && pid == 0) {
        uint32_t *all = (uint32_t *)rdx_alloc(n * KSZ), *scratch = (uint32_t *)rdx_alloc(n * KSZ);
        double best = 1e300;
        for (unsigned r = 0; r < reps; r++) {
            sort_random_keys(all, n, 5, 0);
            double t0 = LITIME();
            sort_radix_seq(all, n, scratch);
            double t = LITIME() - t0;
            if (t < best)
                best = t;
        }
        printf("rdx seq n=%zu s=%.6f\n", n, best);
        free(all);
        free(scratch);
    }

    const size_t first = rdx_first(n, (unsigned)p, (unsigned)pid);
    const size_t nl = rdx_first(n, (unsigned)p, (unsigned)pid + 1) - first;
    uint32_t *keys = (uint32_t *)rdx_alloc(nl * KSZ);
    uint64_t *all = (uint64_t *)rdx_alloc((size_t)p * 12 * sizeof *all);
    int ok = 1;
    double best = 1e300;
    for (unsigned r = 0; r < reps; r++) {
        for (size_t i = 0; i < nl; i++)
            keys[i] = sort_key(5, 0, first + i);
        uint64_t din[6], dout[6];
        rdx_digest(keys, nl, din);
        double t = rdx_sort(keys, n, algo);
        li_max_f64(&t, 1);
        if (t < best)
            best = t;
        if (!check)
            continue;
        rdx_digest(keys, nl, dout);
        rdx_gather(din, all);
        rdx_gather(dout, all + (size_t)p * 6);
        if (pid == 0) {
            uint64_t s = 0, s2 = 0, o = 0, o2 = 0, prev = 0;
            int seen = 0;
            for (int k = 0; k < p; k++) {
                const uint64_t *a = all + (size_t)k * 6, *b = all + (size_t)(p + k) * 6;
                s += a[1];
                s2 += a[2];
                o += b[1];
                o2 += b[2];
                ok &= a[0] == b[0] && b[5] == 1;
                if (b[0]) {
                    ok &= !seen || prev <= b[3];
                    prev = b[4];
                    seen = 1;
                }
            }
            ok &= s == o && s2 == o2;
        }
    }
    ok = li_all_ok(ok);
    if (pid == 0) {
        printf("rdx lib=%s algo=%s p=%d n=%zu s=%.6f\n", LI_VARIANT, algos[algo], p, n, best);
        printf("rdx lib=%s p=%d check=%s\n", LI_VARIANT, p, check ? (ok ? "ok" : "FAILED")
               : "skipped");
    }
    free(keys);
    free(all);
    LIEND();
    return ok ? 0 : 1;
}
