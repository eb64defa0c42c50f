/*
 * BSP 2D sparse matrix-vector multiplication: distribution from pid 0,
 * the three-superstep get/put algorithm and the two-superstep
 * direct_get/hpsend algorithm (Algorithm 5 of the MulticoreBSP paper).
 */
#include "spmv.h"

#include <inprod.h>

#include <bsp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SPMV_TAGSIZE (2 * sizeof(uint64_t))

enum { MSG_HDR = 1, MSG_ROWPTR, MSG_COL, MSG_VAL, MSG_FANIN, MSG_FANOUT, MSG_RECV, MSG_GX, MSG_GY,
       MSG_VEC, NMSG };
enum { H_STATUS, H_M, H_N, H_NOWNX, H_NOWNY, H_NCOLS, H_NROWS, H_NNZ, H_NFANIN, H_NFANOUT, H_NRECV,
       H_RECVLEN, H_XALL, H_XOFF, H_COUNT };

typedef struct msgtag {
    uint64_t id, aux;
} msgtag;

static void *xmalloc(size_t n) { return malloc(n ? n : 1); }
static void *xcalloc(size_t n, size_t s) { return calloc(n ? n : 1, s); }

/* ---- pid 0: the local data of every process -------------------------- */

typedef struct qbuild {
    uint64_t hdr[H_COUNT];
    size_t *rowptr;
    uint32_t *col;
    double *val;
    spmv_range *fanin, *fanout, *recv;
    msgtag tags[NMSG];          /* hpsend tags must live until the sync */
} qbuild;

typedef struct build {
    unsigned P;
    qbuild *q;
    size_t *nx, *ny;
    uint32_t **gx, **gy;
} build;

static void build_free(build *B, int keep_lists)
{
    if (!B->q) return;
    for (unsigned q = 0; q < B->P; ++q) {
        qbuild *b = &B->q[q];
        free(b->rowptr); free(b->col); free(b->val);
        free(b->fanin); free(b->fanout); free(b->recv);
        if (!keep_lists) {
            free(B->gx[q]);
            free(B->gy[q]);
        }
    }
    free(B->q);
    if (!keep_lists) {
        free(B->nx); free(B->ny); free(B->gx); free(B->gy);
    }
    B->q = NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* owned lists: gl[q] = the indices i with owner[i] == q, increasing;
 * idx[i] = the position of i in its owner's list */
static int owned_lists(const unsigned *owner, size_t len, unsigned P, size_t *cnt, uint32_t **gl,
                       uint32_t *idx)
{
    memset(cnt, 0, P * sizeof *cnt);
    for (size_t i = 0; i < len; ++i) cnt[owner[i]]++;
    for (unsigned q = 0; q < P; ++q)
        if (!(gl[q] = xmalloc(cnt[q] * sizeof **gl))) return -1;
    size_t *fill = xcalloc(P, sizeof *fill);
    if (!fill) return -1;
    for (size_t i = 0; i < len; ++i) {
        unsigned q = owner[i];
        idx[i] = (uint32_t)fill[q];
        gl[q][fill[q]++] = (uint32_t)i;
    }
    free(fill);
    return 0;
}

/* Local numbering of one dimension (columns or rows) of process q: owned
 * ones first (0..nown-1), then the others in the order (owner, index at the
 * owner), so that ranges at one owner are consecutive. keys holds the
 * "(owner << 32) | index" of the others; returns their ranges, and in pos[t]
 * the local index of the t-th key after sorting. Ranges at one owner that
 * are at most SPMV_GAP indices apart are merged, with the elements between
 * them as unused local slots: one larger copy costs less than another
 * request (about 100 bytes of copying), on every engine. *total gets the
 * number of local slots after the owned ones. */
#define SPMV_GAP 12

static spmv_range *make_ranges(uint64_t *keys, size_t nk, size_t nown, size_t *nranges,
                               uint32_t *pos, size_t *total)
{
    qsort(keys, nk, sizeof *keys, cmp_u64);
    size_t nr = 0;
    for (size_t t = 0; t < nk; ++t)
        if (t == 0 || (keys[t] >> 32) != (keys[t - 1] >> 32) ||
            (keys[t] & 0xffffffffu) > (keys[t - 1] & 0xffffffffu) + 1 + SPMV_GAP)
            ++nr;
    spmv_range *r = xmalloc(nr * sizeof *r);
    if (!r) return NULL;
    size_t k = 0, next = nown;
    for (size_t t = 0; t < nk; ++t) {
        uint64_t o = keys[t] >> 32, id = keys[t] & 0xffffffffu;
        if (t == 0 || o != (keys[t - 1] >> 32) ||
            id > (keys[t - 1] & 0xffffffffu) + 1 + SPMV_GAP) {
            if (k) next = r[k - 1].local + r[k - 1].len;
            r[k].pid = o;
            r[k].local = next;
            r[k].remote = id;
            r[k].off = 0;
            ++k;
        }
        r[k - 1].len = id - r[k - 1].remote + 1;
        pos[t] = (uint32_t)(r[k - 1].local + (id - r[k - 1].remote));
    }
    *nranges = nr;
    *total = k ? r[k - 1].local + r[k - 1].len - nown : 0;
    return r;
}

/* Locality of the local product. On a matrix whose column degrees are
 * skewed (power-law graphs: a few thousand x_j take a large share of the
 * reads, scattered over the whole vector by the random labels), every
 * process lists its owned x_j by decreasing column degree instead of by
 * index. Owned x come first in the local x and ghosts follow in their
 * owners' order, so the hot x_j of both share a few cache lines at the
 * front of each part (and the fan-in ranges get longer). Regular matrices
 * (Laplacians: maximum degree below SPMV_SKEW times the mean) keep the index
 * order, whose banded locality is better. When owner_x == owner_y on a square
 * matrix the owned y follow the same order, so that the owned lists of x and
 * y still agree (PageRank and x <- A x rely on it). Returns 0 or -1. */
#define SPMV_SKEW 16

static int order_by_degree(build *B, const sp_crs *A, const sp_part *part, uint32_t *idx_x,
                           uint32_t *idx_y)
{
    const unsigned P = part->P;
    const size_t m = A->m, n = A->n;
    if (n == 0 || A->nnz == 0) return 0;
    uint32_t *cnt = xcalloc(n, sizeof *cnt);
    if (!cnt) return -1;
    uint32_t mx = 0;
    for (size_t k = 0; k < A->nnz; ++k) {
        const uint32_t c = ++cnt[A->col[k]];
        mx = c > mx ? c : mx;
    }
    const double mean = (double)A->nnz / (double)n;
    if ((double)mx < SPMV_SKEW * (mean > 1.0 ? mean : 1.0)) {
        free(cnt);
        return 0;
    }
    int same = m == n && memcmp(part->owner_x, part->owner_y, n * sizeof *part->owner_x) == 0;
    for (unsigned q = 0; q < P; ++q) {
        const size_t nq = B->nx[q];
        uint64_t *key = xmalloc(nq * sizeof *key);
        if (!key) {
            free(cnt);
            return -1;
        }
        /* decreasing degree, then increasing index */
        for (size_t t = 0; t < nq; ++t) {
            const uint32_t j = B->gx[q][t];
            key[t] = ((uint64_t)(UINT32_MAX - cnt[j]) << 32) | j;
        }
        qsort(key, nq, sizeof *key, cmp_u64);
        for (size_t t = 0; t < nq; ++t) {
            const uint32_t j = (uint32_t)(key[t] & 0xffffffffu);
            B->gx[q][t] = j;
            idx_x[j] = (uint32_t)t;
            if (same) {
                B->gy[q][t] = j;
                idx_y[j] = (uint32_t)t;
            }
        }
        free(key);
    }
    free(cnt);
    return 0;
}

static int build_all(build *B, const sp_crs *A, const sp_part *part)
{
    const unsigned P = part->P;
    const size_t m = A->m, n = A->n, nnz = A->nnz;
    memset(B, 0, sizeof *B);
    B->P = P;
    B->q = xcalloc(P, sizeof *B->q);
    B->nx = xcalloc(P, sizeof *B->nx);
    B->ny = xcalloc(P, sizeof *B->ny);
    B->gx = xcalloc(P, sizeof *B->gx);
    B->gy = xcalloc(P, sizeof *B->gy);
    uint32_t *idx_x = xmalloc(n * sizeof *idx_x), *idx_y = xmalloc(m * sizeof *idx_y);
    uint32_t *colloc = xmalloc(n * sizeof *colloc), *rowloc = xmalloc(m * sizeof *rowloc);
    unsigned *colst = xmalloc(n * sizeof *colst), *rowst = xmalloc(m * sizeof *rowst);
    size_t *nzstart = xcalloc((size_t)P + 1, sizeof *nzstart);
    uint32_t *nzrow = xmalloc(nnz * sizeof *nzrow);
    size_t *nzk = xmalloc(nnz * sizeof *nzk);
    uint64_t *keys = xmalloc((nnz + 1) * sizeof *keys);
    uint32_t *pos = xmalloc((nnz + 1) * sizeof *pos);
    size_t *nrecv = xcalloc(P, sizeof *nrecv), *recvlen = xcalloc(P, sizeof *recvlen);
    int rc = -1;
    if (!B->q || !B->nx || !B->ny || !B->gx || !B->gy || !idx_x || !idx_y || !colloc || !rowloc ||
        !colst || !rowst || !nzstart || !nzrow || !nzk || !keys || !pos || !nrecv || !recvlen)
        goto out;
    if (owned_lists(part->owner_x, n, P, B->nx, B->gx, idx_x) != 0 ||
        owned_lists(part->owner_y, m, P, B->ny, B->gy, idx_y) != 0 ||
        order_by_degree(B, A, part, idx_x, idx_y) != 0)
        goto out;
    /* nonzeros bucketed by owner, CRS order inside each bucket */
    for (size_t k = 0; k < nnz; ++k) nzstart[part->owner_nz[k] + 1]++;
    for (unsigned q = 0; q < P; ++q) nzstart[q + 1] += nzstart[q];
    {
        size_t *fill = xmalloc(P * sizeof *fill);
        if (!fill) goto out;
        memcpy(fill, nzstart, P * sizeof *fill);
        for (size_t i = 0; i < m; ++i)
            for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) {
                size_t e = fill[part->owner_nz[k]]++;
                nzrow[e] = (uint32_t)i;
                nzk[e] = k;
            }
        free(fill);
    }
    for (size_t j = 0; j < n; ++j) colst[j] = UINT_MAX;
    for (size_t i = 0; i < m; ++i) rowst[i] = UINT_MAX;

    for (unsigned q = 0; q < P; ++q) {
        qbuild *b = &B->q[q];
        const size_t e0 = nzstart[q], e1 = nzstart[q + 1];
        /* columns */
        for (size_t t = 0; t < B->nx[q]; ++t) {
            uint32_t j = B->gx[q][t];
            colst[j] = q;
            colloc[j] = (uint32_t)t;
        }
        size_t nk = 0;
        for (size_t e = e0; e < e1; ++e) {
            uint32_t j = A->col[nzk[e]];
            if (colst[j] != q) {
                colst[j] = q;
                keys[nk++] = ((uint64_t)part->owner_x[j] << 32) | idx_x[j];
            }
        }
        size_t nfanin, nghost;
        if (!(b->fanin = make_ranges(keys, nk, B->nx[q], &nfanin, pos, &nghost))) goto out;
        for (size_t t = 0; t < nk; ++t) {
            uint32_t j = B->gx[keys[t] >> 32][keys[t] & 0xffffffffu];
            colloc[j] = pos[t];
        }
        const size_t ncols = B->nx[q] + nghost;
        /* rows */
        for (size_t t = 0; t < B->ny[q]; ++t) {
            uint32_t i = B->gy[q][t];
            rowst[i] = q;
            rowloc[i] = (uint32_t)t;
        }
        nk = 0;
        for (size_t e = e0; e < e1; ++e) {
            uint32_t i = nzrow[e];
            if (rowst[i] != q) {
                rowst[i] = q;
                keys[nk++] = ((uint64_t)part->owner_y[i] << 32) | idx_y[i];
            }
        }
        size_t nfanout, npartial;
        if (!(b->fanout = make_ranges(keys, nk, B->ny[q], &nfanout, pos, &npartial))) goto out;
        for (size_t t = 0; t < nk; ++t) {
            uint32_t i = B->gy[keys[t] >> 32][keys[t] & 0xffffffffu];
            rowloc[i] = pos[t];
        }
        const size_t nrows = B->ny[q] + npartial;   /* unused slots: empty rows, sums 0 */
        /* local CRS, rows in local order, columns renumbered */
        b->rowptr = xcalloc(nrows + 1, sizeof *b->rowptr);
        b->col = xmalloc((e1 - e0) * sizeof *b->col);
        b->val = xmalloc((e1 - e0) * sizeof *b->val);
        size_t *fill = xmalloc((nrows + 1) * sizeof *fill);
        if (!b->rowptr || !b->col || !b->val || !fill) {
            free(fill);
            goto out;
        }
        for (size_t e = e0; e < e1; ++e) b->rowptr[rowloc[nzrow[e]] + 1]++;
        for (size_t r = 0; r < nrows; ++r) b->rowptr[r + 1] += b->rowptr[r];
        memcpy(fill, b->rowptr, (nrows + 1) * sizeof *fill);
        for (size_t e = e0; e < e1; ++e) {
            size_t k = nzk[e], w = fill[rowloc[nzrow[e]]]++;
            b->col[w] = colloc[A->col[k]];
            b->val[w] = A->val[k];
        }
        free(fill);
        uint64_t *h = b->hdr;
        h[H_STATUS] = 0;
        h[H_M] = m;
        h[H_N] = n;
        h[H_NOWNX] = B->nx[q];
        h[H_NOWNY] = B->ny[q];
        h[H_NCOLS] = ncols;
        h[H_NROWS] = nrows;
        h[H_NNZ] = e1 - e0;
        h[H_NFANIN] = nfanin;
        h[H_NFANOUT] = nfanout;
        for (size_t f = 0; f < nfanout; ++f) nrecv[b->fanout[f].pid]++;
    }
    /* receive buffers: every fan-out range gets its own slot at its owner,
     * slots ordered by sender */
    for (unsigned r = 0; r < P; ++r) {
        B->q[r].hdr[H_NRECV] = nrecv[r];
        if (!(B->q[r].recv = xmalloc(nrecv[r] * sizeof(spmv_range)))) goto out;
        nrecv[r] = 0;
    }
    for (unsigned q = 0; q < P; ++q) {
        qbuild *b = &B->q[q];
        for (size_t f = 0; f < b->hdr[H_NFANOUT]; ++f) {
            spmv_range *fr = &b->fanout[f];
            unsigned r = (unsigned)fr->pid;
            fr->off = recvlen[r];
            spmv_range *rr = &B->q[r].recv[nrecv[r]++];
            rr->pid = q;
            rr->local = fr->remote;
            rr->remote = fr->remote;
            rr->len = fr->len;
            rr->off = fr->off;
            recvlen[r] += fr->len;
        }
    }
    for (unsigned r = 0; r < P; ++r) B->q[r].hdr[H_RECVLEN] = recvlen[r];
    rc = 0;
out:
    free(idx_x); free(idx_y); free(colloc); free(rowloc); free(colst); free(rowst);
    free(nzstart); free(nzrow); free(nzk); free(keys); free(pos); free(nrecv); free(recvlen);
    if (rc != 0) build_free(B, 0);
    return rc;
}

static int part_valid(const sp_crs *A, const sp_part *part, unsigned p)
{
    if (!A || !part || part->P != p) return 0;
    if (A->m > UINT32_MAX || A->n > UINT32_MAX) return 0;
    for (size_t k = 0; k < A->nnz; ++k)
        if (part->owner_nz[k] >= p) return 0;
    for (size_t j = 0; j < A->n; ++j)
        if (part->owner_x[j] >= p) return 0;
    for (size_t i = 0; i < A->m; ++i)
        if (part->owner_y[i] >= p) return 0;
    return 1;
}

/* ---- setup -------------------------------------------------------------- */

static void send_array(unsigned q, qbuild *b, int id, const void *data, size_t bytes)
{
    if (bytes == 0) return;
    b->tags[id].id = (uint64_t)id;
    b->tags[id].aux = 0;
    bsp_hpsend(q, &b->tags[id], data, bytes);
}

static void share_prepare(spmv_local *L);

/* pid 0, pthread engine: one allocation holds the x (owned and ghosts) of
 * every process, each a slice at an offset sent in its header, so that a
 * column anywhere is one 32-bit index from one base (share_prepare). NULL
 * (every process allocates its own x) when the indices would not fit. */
static double *xall_alloc(build *B, app_huge *h)
{
    size_t total = 0;
    for (unsigned q = 0; q < B->P; ++q) total += B->q[q].hdr[H_NCOLS];
    if (total >= ((uint64_t)1 << 32)) return NULL;
    /* on huge pages: the product gathers from all of it (at p = 2 on a
     * power-law graph the product ran ~10% faster so) */
    double *xall = app_huge_alloc(total * sizeof *xall, h);
    if (!xall) return NULL;
    size_t off = 0;
    for (unsigned q = 0; q < B->P; ++q) {
        B->q[q].hdr[H_XALL] = (uint64_t)(uintptr_t)xall;
        B->q[q].hdr[H_XOFF] = off;
        off += B->q[q].hdr[H_NCOLS];
    }
    return xall;
}

int spmv_setup(spmv_local *L, const sp_crs *A, const sp_part *part)
{
    memset(L, 0, sizeof *L);
    L->p = bsp_nprocs();
    L->s = bsp_pid();
    bsp_size_t ts = SPMV_TAGSIZE;
    bsp_set_tagsize(&ts);
    L->tagsize_old = ts;
    build B;
    memset(&B, 0, sizeof B);
    uint64_t fail[H_COUNT] = { 1 };
    msgtag failtag = { MSG_HDR, 0 };
    int root_ok = 0;
    /* the same on every process; SUPERSTEP_SPMV_INPLACE=0 keeps the ghost
     * copies (for comparisons and the tests of that path) */
    const char *ip = getenv("SUPERSTEP_SPMV_INPLACE");
    const int shared = L->p > 1 && spmv_hp_available() && !(ip && strcmp(ip, "0") == 0);
    app_huge xall_mem = { NULL, 0 };
    if (L->s == 0) root_ok = part_valid(A, part, L->p) && build_all(&B, A, part) == 0;
    if (L->s == 0 && root_ok && shared) (void)xall_alloc(&B, &xall_mem);
    bsp_sync();                                     /* the tag size is in force */
    if (L->s == 0)
        for (unsigned q = 0; q < L->p; ++q) {
            if (!root_ok) {
                bsp_hpsend(q, &failtag, fail, sizeof fail);
                continue;
            }
            qbuild *b = &B.q[q];
            const uint64_t *h = b->hdr;
            send_array(q, b, MSG_HDR, h, sizeof b->hdr);
            send_array(q, b, MSG_ROWPTR, b->rowptr, (h[H_NROWS] + 1) * sizeof *b->rowptr);
            send_array(q, b, MSG_COL, b->col, h[H_NNZ] * sizeof *b->col);
            send_array(q, b, MSG_VAL, b->val, h[H_NNZ] * sizeof *b->val);
            send_array(q, b, MSG_FANIN, b->fanin, h[H_NFANIN] * sizeof *b->fanin);
            send_array(q, b, MSG_FANOUT, b->fanout, h[H_NFANOUT] * sizeof *b->fanout);
            send_array(q, b, MSG_RECV, b->recv, h[H_NRECV] * sizeof *b->recv);
            send_array(q, b, MSG_GX, B.gx[q], h[H_NOWNX] * sizeof *B.gx[q]);
            send_array(q, b, MSG_GY, B.gy[q], h[H_NOWNY] * sizeof *B.gy[q]);
        }
    bsp_sync();                                     /* the local parts arrive */
    if (L->s == 0) L->xall_mem = xall_mem;
    if (L->s == 0 && root_ok) {
        /* keep every process's owned lists for scatter and gather */
        L->root_nx = B.nx;
        L->root_ny = B.ny;
        L->root_gx = B.gx;
        L->root_gy = B.gy;
        build_free(&B, 1);
    }
    uint64_t hdr[H_COUNT] = { 1 };
    void *arrays[NMSG] = { 0 };
    bsp_nprocs_t nmsg = 0;
    bsp_qsize(&nmsg, NULL);
    int ok = 1;
    for (bsp_nprocs_t i = 0; i < nmsg; ++i) {
        bsp_size_t bytes;
        msgtag tag;
        bsp_get_tag(&bytes, &tag);
        if (tag.id == MSG_HDR) {
            bsp_move(hdr, sizeof hdr);
            continue;
        }
        if (tag.id >= NMSG || arrays[tag.id]) {
            bsp_move(NULL, 0);
            continue;
        }
        arrays[tag.id] = malloc(bytes);
        if (!arrays[tag.id]) ok = 0;
        bsp_move(arrays[tag.id], arrays[tag.id] ? bytes : 0);
    }
    if (hdr[H_STATUS] != 0 || !ok) {
        for (int i = 0; i < NMSG; ++i) free(arrays[i]);
        if (!ok) bsp_abort("spmv_setup: out of memory on pid %u\n", L->s);
        ts = L->tagsize_old;     /* every process gets here: restore the tag size */
        bsp_set_tagsize(&ts);
        bsp_sync();
        memset(L, 0, sizeof *L);
        return -1;
    }
    L->m = hdr[H_M];
    L->n = hdr[H_N];
    L->nown_x = hdr[H_NOWNX];
    L->nown_y = hdr[H_NOWNY];
    L->ncols = hdr[H_NCOLS];
    L->nrows = hdr[H_NROWS];
    L->nnz = hdr[H_NNZ];
    L->nfanin = hdr[H_NFANIN];
    L->nfanout = hdr[H_NFANOUT];
    L->nrecv = hdr[H_NRECV];
    L->recvlen = hdr[H_RECVLEN];
    L->rowptr = arrays[MSG_ROWPTR];
    L->col = arrays[MSG_COL];
    L->val = arrays[MSG_VAL];
    L->fanin = arrays[MSG_FANIN];
    L->fanout = arrays[MSG_FANOUT];
    L->recv = arrays[MSG_RECV];
    L->gx = arrays[MSG_GX];
    L->gy = arrays[MSG_GY];
    if (!L->rowptr) L->rowptr = xcalloc(1, sizeof *L->rowptr);
    L->xall = (double *)(uintptr_t)hdr[H_XALL];
    L->x = L->xall ? L->xall + hdr[H_XOFF] : xcalloc(L->ncols, sizeof *L->x);
    L->y = xcalloc(L->nrows, sizeof *L->y);
    L->recvbuf = xcalloc(L->recvlen, sizeof *L->recvbuf);
    if (!L->rowptr || !L->x || !L->y || !L->recvbuf)
        bsp_abort("spmv_setup: out of memory on pid %u\n", L->s);
    bsp_push_reg(L->x, L->ncols * sizeof *L->x);
    bsp_push_reg(L->recvbuf, L->recvlen * sizeof *L->recvbuf);
    if (L->xall) {
        L->share = xcalloc(1, sizeof *L->share);
        if (!L->share) bsp_abort("spmv_setup: out of memory on pid %u\n", L->s);
        L->share[0] = (uint64_t)(uintptr_t)L->x;
        bsp_push_reg(L->share, sizeof *L->share);
    }
    bsp_sync();                                     /* registrations in force */
    if (L->xall) share_prepare(L);
    return 0;
}

/* Shared-memory reads. On the pthread engine all processes are threads of
 * one address space, so an owner's x can be read in place by the local
 * product, under bsp_direct_get's contract. The x of all processes are
 * slices of one allocation (xall_alloc); every process learns the owners'
 * slices by bsp_direct_get of their registered `share` words and rewrites
 * each nonzero's column as the index of that x_j from the common base.
 * Why: with ghost copies every process keeps its own copy of nearly all of
 * x on a power-law graph, so p copies compete for the shared cache where a
 * shared-memory loop keeps one (measured at p = 2: the product over 4 10^6
 * nonzeros 17-22 ms with copies, 10-12 ms reading in place); and one base
 * instead of a table of p bases (owner, index) keeps the inner loop that of
 * a plain CRS product (a table lookup per nonzero made it 30% slower). */
static void share_prepare(spmv_local *L)
{
    L->peer_x = xcalloc(L->p, sizeof *L->peer_x);
    if (!L->peer_x) bsp_abort("spmv_setup: out of memory on pid %u\n", L->s);
    for (unsigned q = 0; q < L->p; ++q) {
        uint64_t a = 0;
        bsp_direct_get(q, L->share, 0, &a, sizeof a);
        L->peer_x[q] = (const double *)(uintptr_t)a;
    }
    const size_t nown = L->nown_x, nghost = L->ncols - nown;
    uint32_t *gmap = xmalloc((nghost ? nghost : 1) * sizeof *gmap);
    uint32_t *colz = xmalloc((L->nnz ? L->nnz : 1) * sizeof *colz);
    if (!gmap || !colz) {     /* keep the copies */
        free(gmap);
        free(colz);
        return;
    }
    for (size_t f = 0; f < L->nfanin; ++f) {
        const spmv_range *r = &L->fanin[f];
        const size_t base = (size_t)(L->peer_x[r->pid] - L->xall) + r->remote;
        for (size_t i = 0; i < r->len; ++i) gmap[r->local - nown + i] = (uint32_t)(base + i);
    }
    const size_t self = (size_t)(L->x - L->xall);
    for (size_t k = 0; k < L->nnz; ++k) {
        const uint32_t c = L->col[k];
        colz[k] = c < nown ? (uint32_t)(self + c) : gmap[c - nown];
    }
    free(gmap);
    L->colz = colz;
}

void spmv_free(spmv_local *L)
{
    bsp_pop_reg(L->x);
    bsp_pop_reg(L->recvbuf);
    if (L->share) bsp_pop_reg(L->share);
    bsp_size_t ts = L->tagsize_old;
    bsp_set_tagsize(&ts);
    bsp_sync();
    free(L->rowptr); free(L->col); free(L->val);
    if (!L->xall) free(L->x);
    app_huge_free(&L->xall_mem);   /* pid 0: every process's x (all passed the sync above) */
    free(L->y);
    free(L->fanin); free(L->fanout); free(L->recv);
    free(L->recvbuf);
    free(L->gx); free(L->gy);
    free(L->colz); free(L->peer_x); free(L->share);
    if (L->root_gx) {
        for (unsigned q = 0; q < L->p; ++q) {
            free(L->root_gx[q]);
            free(L->root_gy[q]);
        }
        free(L->root_gx); free(L->root_gy); free(L->root_nx); free(L->root_ny);
    }
    memset(L, 0, sizeof *L);
}

/* ---- scatter and gather (BSMP; one superstep) ---------------------------- */

static void scatter(spmv_local *L, const double *global, double *local, size_t nlocal,
                    const size_t *rn, uint32_t *const *rg)
{
    msgtag tag = { MSG_VEC, 0 };
    double **bufs = NULL;
    if (L->s == 0) {
        bufs = xcalloc(L->p, sizeof *bufs);
        if (!bufs) bsp_abort("spmv: out of memory\n");
        for (unsigned q = 0; q < L->p; ++q) {
            if (rn[q] == 0) continue;
            if (!(bufs[q] = malloc(rn[q] * sizeof **bufs))) bsp_abort("spmv: out of memory\n");
            for (size_t t = 0; t < rn[q]; ++t) bufs[q][t] = global[rg[q][t]];
            bsp_hpsend(q, &tag, bufs[q], rn[q] * sizeof **bufs);
        }
    }
    bsp_sync();
    if (bufs) {
        for (unsigned q = 0; q < L->p; ++q) free(bufs[q]);
        free(bufs);
    }
    bsp_nprocs_t nmsg = 0;
    bsp_qsize(&nmsg, NULL);
    for (bsp_nprocs_t i = 0; i < nmsg; ++i) bsp_move(local, nlocal * sizeof *local);
}

static void gather(spmv_local *L, const double *local, double *global, size_t nlocal,
                   const size_t *rn, uint32_t *const *rg)
{
    msgtag tag = { MSG_VEC, L->s };
    if (nlocal) bsp_hpsend(0, &tag, local, nlocal * sizeof *local);
    bsp_sync();
    if (L->s != 0) return;
    bsp_nprocs_t nmsg = 0;
    bsp_qsize(&nmsg, NULL);
    for (bsp_nprocs_t i = 0; i < nmsg; ++i) {
        void *tp, *pp;
        bsp_size_t bytes = bsp_hpmove(&tp, &pp);
        msgtag t;
        memcpy(&t, tp, sizeof t);
        const unsigned q = (unsigned)t.aux;
        const unsigned char *src = pp;
        const size_t cnt = bytes / sizeof(double);
        for (size_t k = 0; k < cnt && k < rn[q]; ++k)
            memcpy(&global[rg[q][k]], src + k * sizeof(double), sizeof(double));
    }
}

void spmv_scatter_x(spmv_local *L, const double *global, double *local)
{
    scatter(L, global, local, L->nown_x, L->root_nx, L->root_gx);
}
void spmv_scatter_y(spmv_local *L, const double *global, double *local)
{
    scatter(L, global, local, L->nown_y, L->root_ny, L->root_gy);
}
void spmv_gather_y(spmv_local *L, const double *local, double *global)
{
    gather(L, local, global, L->nown_y, L->root_ny, L->root_gy);
}
void spmv_gather_x(spmv_local *L, const double *local, double *global)
{
    gather(L, local, global, L->nown_x, L->root_nx, L->root_gx);
}

void spmv_set_x(spmv_local *L, const double *x)
{
    spmv_scatter_x(L, x, L->x);
    bsp_sync();   /* bsp_direct_get readers must not see a half-written x */
}

/* ---- multiplication -------------------------------------------------------- */

int spmv_hp_available(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e == NULL || *e == 0 || strcmp(e, "pthread") == 0;
}

spmv_variant spmv_default_variant(void)
{
    return spmv_hp_available() ? SPMV_HP : SPMV_GETPUT;
}

void spmv_local_kernel(const spmv_local *L)
{
    const size_t *rp = L->rowptr;
    const uint32_t *col = L->col;
    const double *val = L->val, *x = L->x;
    double *y = L->y;
    for (size_t r = 0; r < L->nrows; ++r) {
        double s = 0.0;
        for (size_t k = rp[r]; k < rp[r + 1]; ++k) s += val[k] * x[col[k]];
        y[r] = s;
    }
}

const double *spmv_inplace_x(const spmv_local *L)
{
    return L->colz && L->x == L->peer_x[L->s] ? L->xall : NULL;
}

void spmv_local_kernel_hp(spmv_local *L)
{
    const double *xall = spmv_inplace_x(L);
    if (!xall) {
        spmv_fanin_direct(L);
        spmv_local_kernel(L);
        return;
    }
    const size_t *rp = L->rowptr;
    const uint32_t *colz = L->colz;
    const double *val = L->val;
    double *y = L->y;
    for (size_t r = 0; r < L->nrows; ++r) {
        double s = 0.0;
        for (size_t k = rp[r]; k < rp[r + 1]; ++k) s += val[k] * xall[colz[k]];
        y[r] = s;
    }
}

void spmv_fanin_get(spmv_local *L)
{
    double *x = L->x;
    for (size_t f = 0; f < L->nfanin; ++f) {
        const spmv_range *r = &L->fanin[f];
        bsp_get((bsp_pid_t)r->pid, x, r->remote * sizeof *x, x + r->local, r->len * sizeof *x);
    }
}

void spmv_fanin_direct(spmv_local *L)
{
    /* no superstep needed: the owners do not change x in this one */
    double *x = L->x;
    for (size_t f = 0; f < L->nfanin; ++f) {
        const spmv_range *r = &L->fanin[f];
        bsp_direct_get((bsp_pid_t)r->pid, x, r->remote * sizeof *x, x + r->local,
                       r->len * sizeof *x);
    }
}

void spmv_fanout(spmv_local *L, spmv_variant v)
{
    const double *y = L->y;
    for (size_t f = 0; f < L->nfanout; ++f) {
        const spmv_range *r = &L->fanout[f];
        if (v == SPMV_HP)   /* tag = (remote index, length), payload straight from y */
            bsp_hpsend((bsp_pid_t)r->pid, &r->remote, y + r->local, r->len * sizeof *y);
        else                /* into the owner's receive slot for this range */
            bsp_put((bsp_pid_t)r->pid, y + r->local, L->recvbuf, r->off * sizeof *y,
                    r->len * sizeof *y);
    }
}

void spmv_accumulate(spmv_local *L, spmv_variant v)
{
    double *y = L->y;
    if (v != SPMV_HP) {
        const double *rb = L->recvbuf;
        for (size_t f = 0; f < L->nrecv; ++f) {
            const spmv_range *r = &L->recv[f];
            double *dst = y + r->local;
            const double *src = rb + r->off;
            for (size_t i = 0; i < r->len; ++i) dst[i] += src[i];
        }
        return;
    }
    void *tp, *pp;
    while (bsp_hpmove(&tp, &pp) != SIZE_MAX) {
        uint64_t t[2];
        memcpy(t, tp, sizeof t);
        double *dst = y + t[0];
        if (((uintptr_t)pp & (sizeof(double) - 1)) == 0) {
            const double *src = pp;
            for (uint64_t i = 0; i < t[1]; ++i) dst[i] += src[i];
        } else {
            const unsigned char *src = pp;
            for (uint64_t i = 0; i < t[1]; ++i) {
                double val;
                memcpy(&val, src + i * sizeof val, sizeof val);
                dst[i] += val;
            }
        }
    }
}

void spmv_mv(spmv_local *L, spmv_variant v)
{
    if (v == SPMV_HP) {
        spmv_local_kernel_hp(L);     /* superstep 1: fan-in and local SpMV, fan-out */
    } else {
        spmv_fanin_get(L);           /* superstep 1: fan-in */
        bsp_sync();
        spmv_local_kernel(L);        /* superstep 2: local SpMV, fan-out */
    }
    spmv_fanout(L, v);
    bsp_sync();
    spmv_accumulate(L, v);           /* last superstep: add the contributions */
}

/* ---- library call ------------------------------------------------------------ */

typedef struct spmv_call {
    const sp_crs *A;
    const sp_part *part;
    const double *x;
    double *y;
    unsigned P;
    spmv_variant v;
    int rc;
} spmv_call;

static _Thread_local spmv_call *spmv_current;

static void spmv_entry(void)
{
    spmv_call *c = spmv_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    if (bsp_pid() != 0) c = NULL;
    uint64_t variant = c ? (uint64_t)c->v : 0;
    app_broadcast(&variant, sizeof variant);
    sp_part own;
    memset(&own, 0, sizeof own);
    const sp_part *part = NULL;
    if (c) {
        part = c->part;
        if (!part && sp_partition(c->A, bsp_nprocs(), SP_PART_ROWS, &own) == 0) part = &own;
    }
    spmv_local L;
    int rc = spmv_setup(&L, c ? c->A : NULL, part);
    sp_part_free(&own);
    if (rc == 0) {
        spmv_set_x(&L, c ? c->x : NULL);
        spmv_mv(&L, (spmv_variant)variant);
        spmv_gather_y(&L, L.y, c ? c->y : NULL);
        spmv_free(&L);
    }
    if (c) c->rc = rc;
    bsp_end();
}

int bsp_spmv(const sp_crs *A, const sp_part *part, const double *x, double *y, unsigned P,
             spmv_variant v)
{
    spmv_call c = { A, part, x, y, P ? P : bsp_nprocs(), v, -1 };
    spmv_call *prev = spmv_current;
    spmv_current = &c;
    bsp_init(spmv_entry, 0, NULL);
    spmv_entry();
    spmv_current = prev;
    return c.rc;
}
