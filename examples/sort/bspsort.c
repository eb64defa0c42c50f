/*
 * BSP radix sort (RMA paper, RDXSORT / RDXSORTOPT) and sample sort (PSRS).
 */
#define _POSIX_C_SOURCE 200809L
#include "sort.h"

#include <stdlib.h>
#include <string.h>

#include <bsp.h>

#define KSZ sizeof(uint32_t)

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bsp_abort("bspsort: out of memory (%zu bytes)\n", bytes);
    return p;
}

/* largest j with start[j] <= g (start[0] = 0 <= g < start[p]) */
static unsigned owner_of(const size_t *start, unsigned p, size_t g)
{
    unsigned lo = 0, hi = p; /* start[lo] <= g < start[hi] */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (start[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- radix sort ------------------------------------------------------------ */

void bsp_radix_sort_spmd(uint32_t *keys, size_t nl, int opt)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    size_t *start = xmalloc((p + 1) * sizeof *start);
    uint64_t *sizes = xmalloc(p * sizeof *sizes);
    uint64_t *cnt_all = xmalloc((size_t)p * 256 * sizeof *cnt_all); /* [process][digit] */
    uint32_t *buf = xmalloc(nl * KSZ), *tmp = xmalloc(nl * KSZ);
    bsp_push_reg(sizes, p * sizeof *sizes);
    bsp_push_reg(cnt_all, (size_t)p * 256 * sizeof *cnt_all);
    bsp_push_reg(keys, nl * KSZ);
    bsp_push_reg(buf, nl * KSZ);
    bsp_sync();

    uint32_t *cur = keys, *nxt = buf;
    for (unsigned rnd = 0; rnd < 4; rnd++) {
        const unsigned sh = 8 * rnd;
        /* line 2: count the digit values */
        uint64_t cnt[256];
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < nl; i++)
            cnt[(cur[i] >> sh) & 255]++;
        const uint64_t mysize = nl;
        for (unsigned q = 0; q < p; q++) {
            bsp_put(q, cnt, cnt_all, (size_t)pid * 256 * sizeof *cnt_all, sizeof cnt);
            if (rnd == 0) /* the block sizes travel with the first counts */
                bsp_put(q, &mysize, sizes, pid * sizeof mysize, sizeof mysize);
        }
        bsp_sync();
        if (rnd == 0) {
            start[0] = 0;
            for (unsigned q = 0; q < p; q++)
                start[q + 1] = start[q] + (size_t)sizes[q];
        }

        /* line 3: parallel prefix -> global position of my run of digit d */
        size_t pos[256], loff[256], g = 0, l = 0;
        for (unsigned d = 0; d < 256; d++) {
            size_t before = 0, total = 0;
            for (unsigned q = 0; q < p; q++) {
                const size_t c = (size_t)cnt_all[(size_t)q * 256 + d];
                total += c;
                if (q < pid)
                    before += c;
            }
            pos[d] = g + before;
            g += total;
            loff[d] = l;
            l += (size_t)cnt[d];
        }
        /* the local count sort groups my keys by digit (stable) */
        {
            size_t off[256];
            memcpy(off, loff, sizeof off);
            for (size_t i = 0; i < nl; i++) {
                uint32_t k = cur[i];
                tmp[off[(k >> sh) & 255]++] = k;
            }
        }
        /* lines 4-5: route each digit's run to its destination(s) by put;
         * tmp stays untouched and nxt unread until the sync: hpput is safe */
        const unsigned d0 = opt ? (unsigned)(((size_t)pid * 256) / p) : 0;
        for (unsigned dd = 0; dd < 256; dd++) {
            const unsigned d = (d0 + dd) & 255;
            size_t len = (size_t)cnt[d], gpos = pos[d];
            const uint32_t *src = tmp + loff[d];
            while (len > 0) {
                const unsigned j = owner_of(start, p, gpos);
                size_t m = start[j + 1] - gpos;
                if (m > len)
                    m = len;
                bsp_hpput(j, src, nxt, (gpos - start[j]) * KSZ, m * KSZ);
                src += m;
                gpos += m;
                len -= m;
            }
        }
        bsp_sync();
        uint32_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    /* four rounds: the result is in keys again */
    bsp_pop_reg(buf);
    bsp_pop_reg(keys);
    bsp_pop_reg(cnt_all);
    bsp_pop_reg(sizes);
    bsp_sync();
    free(tmp);
    free(buf);
    free(cnt_all);
    free(sizes);
    free(start);
}

/* ---- sample sort ------------------------------------------------------------ */

static size_t lower_bound_u32(const uint32_t *a, size_t n, uint32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void merge2(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out)
{
    size_t i = 0, j = 0, o = 0;
    while (i < na && j < nb)
        out[o++] = (b[j] < a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[o++] = a[i++];
    while (j < nb)
        out[o++] = b[j++];
}

/* merges the nruns sorted runs a[bound[r] .. bound[r+1]) pairwise, using b as
 * scratch; returns the buffer (a or b) that holds the result */
static uint32_t *merge_runs(uint32_t *a, uint32_t *b, size_t *bound, unsigned nruns)
{
    while (nruns > 1) {
        unsigned out = 0;
        for (unsigned r = 0; r < nruns; r += 2) {
            if (r + 1 < nruns) {
                merge2(a + bound[r], bound[r + 1] - bound[r], a + bound[r + 1],
                       bound[r + 2] - bound[r + 1], b + bound[r]);
            } else {
                memcpy(b + bound[r], a + bound[r], (bound[r + 1] - bound[r]) * KSZ);
            }
            bound[out++] = bound[r];
        }
        bound[out] = bound[nruns];
        nruns = out;
        uint32_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

uint32_t *bsp_sample_sort_spmd(uint32_t *keys, size_t nl, size_t *nout, size_t *first)
{
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    uint32_t *samp = xmalloc((size_t)p * p * KSZ);        /* p samples from each process */
    uint64_t *nsamp = xmalloc(p * sizeof *nsamp);          /* how many each sent (p or 0) */
    uint64_t *cntmat = xmalloc((size_t)p * p * sizeof *cntmat); /* [from][to] */
    bsp_push_reg(samp, (size_t)p * p * KSZ);
    bsp_push_reg(nsamp, p * sizeof *nsamp);
    bsp_push_reg(cntmat, (size_t)p * p * sizeof *cntmat);

    /* superstep 1: local sort (the registrations become active meanwhile) */
    sort_radix_seq(keys, nl, NULL);
    bsp_sync();

    /* superstep 2: p regular samples to everybody */
    {
        uint32_t *mine = xmalloc(p * KSZ);
        uint64_t ns = nl ? p : 0;
        for (unsigned i = 0; i < ns; i++)
            mine[i] = keys[((size_t)i * nl) / p];
        for (unsigned q = 0; q < p; q++) {
            bsp_put(q, &ns, nsamp, pid * sizeof ns, sizeof ns);
            if (ns)
                bsp_put(q, mine, samp, (size_t)pid * p * KSZ, p * KSZ);
        }
        free(mine);
    }
    bsp_sync();

    /* superstep 3: splitters (the same everywhere), my bucket sizes to all */
    uint64_t *cnt = xmalloc(p * sizeof *cnt);
    size_t *bound = xmalloc((p + 1) * sizeof *bound);
    {
        size_t ns = 0;
        for (unsigned q = 0; q < p; q++)
            if (nsamp[q]) {
                memmove(samp + ns, samp + (size_t)q * p, p * KSZ);
                ns += p;
            }
        qsort(samp, ns, KSZ, sort_cmp_u32);
        bound[0] = 0;
        for (unsigned j = 1; j < p; j++)
            bound[j] = ns ? lower_bound_u32(keys, nl, samp[((size_t)j * ns) / p]) : nl;
        bound[p] = nl;
        for (unsigned j = 0; j < p; j++)
            cnt[j] = bound[j + 1] - bound[j];
        for (unsigned q = 0; q < p; q++)
            bsp_put(q, cnt, cntmat, (size_t)pid * p * sizeof *cnt, p * sizeof *cnt);
    }
    bsp_sync();

    /* superstep 4: receive buffer of the exact size */
    size_t nr = 0, before = 0;
    for (unsigned q = 0; q < p; q++) {
        nr += (size_t)cntmat[(size_t)q * p + pid];
        for (unsigned j = 0; j < pid; j++)
            before += (size_t)cntmat[(size_t)q * p + j];
    }
    uint32_t *recv = xmalloc(nr * KSZ);
    bsp_push_reg(recv, nr * KSZ);
    bsp_sync();

    /* superstep 5: every bucket to its process, after the buckets of the
     * lower pids (keys and recv stay untouched until the sync: hpput) */
    for (unsigned j = 0; j < p; j++) {
        if (!cnt[j])
            continue;
        size_t off = 0;
        for (unsigned q = 0; q < pid; q++)
            off += (size_t)cntmat[(size_t)q * p + j];
        bsp_hpput(j, keys + bound[j], recv, off * KSZ, (size_t)cnt[j] * KSZ);
    }
    bsp_pop_reg(recv);
    bsp_pop_reg(cntmat);
    bsp_pop_reg(nsamp);
    bsp_pop_reg(samp);
    bsp_sync();

    /* p-way merge of the received runs (run q came from process q) */
    bound[0] = 0;
    for (unsigned q = 0; q < p; q++)
        bound[q + 1] = bound[q] + (size_t)cntmat[(size_t)q * p + pid];
    uint32_t *scratch = xmalloc(nr * KSZ);
    uint32_t *res = merge_runs(recv, scratch, bound, p);
    free(res == recv ? scratch : recv);

    free(bound);
    free(cnt);
    free(cntmat);
    free(nsamp);
    free(samp);
    *nout = nr;
    *first = before;
    return res;
}

/* ---- library calls ------------------------------------------------------------ */

enum { SORT_RADIX = 0, SORT_RADIX_OPT = 1, SORT_SAMPLE = 2 };

struct sort_job {
    unsigned P;
    int algo;
    uint32_t *keys;
    size_t n;
};

static _Thread_local struct sort_job *sort_job_tl;

static void bspsort_entry(void)
{
    struct sort_job *job = sort_job_tl; /* NULL in the other processes */
    bsp_begin(job ? job->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid();

    uint64_t hdr[2] = { 0, 0 };
    if (pid == 0) {
        hdr[0] = job->n;
        hdr[1] = (uint64_t)job->algo;
        for (unsigned q = 1; q < p; q++)
            bsp_send(q, NULL, hdr, sizeof hdr);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(hdr, sizeof hdr);
    const size_t n = (size_t)hdr[0];
    const int algo = (int)hdr[1];
    const size_t nl = n / p + (pid < n % p), mystart = pid * (n / p) + (pid < n % p ? pid : n % p);

    /* pid 0's key array doubles as the gather buffer; the others name the
     * slot by a dummy address */
    char dummy = 0;
    void *gid = (pid == 0) ? (void *)job->keys : (void *)&dummy;
    uint32_t *local = xmalloc(nl * KSZ);
    bsp_push_reg(local, nl * KSZ);
    bsp_push_reg(gid, pid == 0 ? n * KSZ : 0);
    bsp_sync();
    if (pid == 0) {
        if (nl)
            memcpy(local, job->keys, nl * KSZ);
        size_t off = nl;
        for (unsigned q = 1; q < p; q++) {
            const size_t nq = n / p + (q < n % p);
            if (nq)
                bsp_hpput(q, job->keys + off, local, 0, nq * KSZ);
            off += nq;
        }
    }
    bsp_sync();

    if (algo == SORT_SAMPLE) {
        size_t nout = 0, first = 0;
        uint32_t *out = bsp_sample_sort_spmd(local, nl, &nout, &first);
        if (nout)
            bsp_hpput(0, out, gid, first * KSZ, nout * KSZ);
        bsp_sync();
        free(out);
    } else {
        bsp_radix_sort_spmd(local, nl, algo == SORT_RADIX_OPT);
        if (nl)
            bsp_hpput(0, local, gid, mystart * KSZ, nl * KSZ);
        bsp_sync();
    }
    bsp_pop_reg(gid);
    bsp_pop_reg(local);
    free(local);
    bsp_end();
}

static int run_sort(unsigned P, uint32_t *keys, size_t n, int algo)
{
    if (P == 0 || (n > 0 && keys == NULL))
        return -2;
    struct sort_job job = { P, algo, keys, n };
    struct sort_job *saved = sort_job_tl;
    sort_job_tl = &job;
    bsp_init(bspsort_entry, 0, NULL);
    bspsort_entry();
    sort_job_tl = saved;
    return 0;
}

int bsp_radix_sort(unsigned P, uint32_t *keys, size_t n, int opt)
{
    return run_sort(P, keys, n, opt ? SORT_RADIX_OPT : SORT_RADIX);
}

int bsp_sample_sort(unsigned P, uint32_t *keys, size_t n)
{
    return run_sort(P, keys, n, SORT_SAMPLE);
}
