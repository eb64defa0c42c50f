/*
 * Sequential sparse-matrix helpers: CRS construction, Matrix Market I/O,
 * test matrices, transpose, the CRS product and simple partitioners.
 */
#include "sparse.h"

#include <app_util.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n) { return malloc(n ? n : 1); }
static void *xcalloc(size_t n, size_t s) { return calloc(n ? n : 1, s ? s : 1); }

void sp_free(sp_crs *A)
{
    if (!A) return;
    free(A->rowptr);
    free(A->col);
    free(A->val);
    memset(A, 0, sizeof *A);
}

static int sp_alloc(sp_crs *A, size_t m, size_t n, size_t nnz)
{
    A->m = m;
    A->n = n;
    A->nnz = nnz;
    A->rowptr = xcalloc(m + 1, sizeof *A->rowptr);
    A->col = xmalloc(nnz * sizeof *A->col);
    A->val = xmalloc(nnz * sizeof *A->val);
    if (!A->rowptr || !A->col || !A->val) {
        sp_free(A);
        return -1;
    }
    return 0;
}

int sp_from_coo(size_t m, size_t n, size_t nnz, const uint32_t *I, const uint32_t *J,
                const double *V, int sum_dups, sp_crs *A)
{
    memset(A, 0, sizeof *A);
    if (n > UINT32_MAX || m > UINT32_MAX) return -1;
    for (size_t k = 0; k < nnz; ++k)
        if (I[k] >= m || J[k] >= n) return -1;
    /* pass 1: bucket by column; pass 2: stable bucket by row. Rows come out
     * sorted by column. */
    size_t *cptr = xcalloc(n + 1, sizeof *cptr);
    uint32_t *tI = xmalloc(nnz * sizeof *tI), *tJ = xmalloc(nnz * sizeof *tJ);
    double *tV = xmalloc(nnz * sizeof *tV);
    if (!cptr || !tI || !tJ || !tV || sp_alloc(A, m, n, nnz) != 0) {
        free(cptr); free(tI); free(tJ); free(tV);
        return -1;
    }
    for (size_t k = 0; k < nnz; ++k) cptr[J[k] + 1]++;
    for (size_t j = 0; j < n; ++j) cptr[j + 1] += cptr[j];
    for (size_t k = 0; k < nnz; ++k) {
        size_t q = cptr[J[k]]++;
        tI[q] = I[k];
        tJ[q] = J[k];
        tV[q] = V ? V[k] : 1.0;
    }
    free(cptr);
    size_t *rp = A->rowptr;
    for (size_t k = 0; k < nnz; ++k) rp[tI[k] + 1]++;
    for (size_t i = 0; i < m; ++i) rp[i + 1] += rp[i];
    size_t *fill = xmalloc(m * sizeof *fill);
    if (!fill) {
        free(tI); free(tJ); free(tV); sp_free(A);
        return -1;
    }
    memcpy(fill, rp, m * sizeof *fill);
    for (size_t k = 0; k < nnz; ++k) {
        size_t q = fill[tI[k]]++;
        A->col[q] = tJ[k];
        A->val[q] = tV[k];
    }
    free(fill);
    free(tI); free(tJ); free(tV);
    /* merge duplicates (adjacent within a row) */
    size_t w = 0;
    for (size_t i = 0; i < m; ++i) {
        size_t b = rp[i], e = rp[i + 1];
        rp[i] = w;
        for (size_t k = b; k < e; ++k) {
            if (w > rp[i] && A->col[w - 1] == A->col[k]) {
                if (sum_dups) A->val[w - 1] += A->val[k];
                continue;
            }
            A->col[w] = A->col[k];
            A->val[w] = A->val[k];
            ++w;
        }
    }
    rp[m] = w;
    A->nnz = w;
    return 0;
}

/* ---- Matrix Market ------------------------------------------------------ */

static void lower(char *s)
{
    for (; *s; ++s) *s = (char)tolower((unsigned char)*s);
}

int sp_read_mm(const char *path, sp_crs *A, char *err, size_t errlen)
{
    memset(A, 0, sizeof *A);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024], obj[64], fmt[64], field[64], sym[64];
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4) {
        snprintf(err, errlen, "%s: not a Matrix Market file", path);
        fclose(f);
        return -1;
    }
    lower(obj); lower(fmt); lower(field); lower(sym);
    if (strcmp(obj, "matrix") != 0 || strcmp(fmt, "coordinate") != 0) {
        snprintf(err, errlen, "%s: only 'matrix coordinate' is supported", path);
        fclose(f);
        return -1;
    }
    int pattern = strcmp(field, "pattern") == 0;
    if (!pattern && strcmp(field, "real") != 0 && strcmp(field, "integer") != 0 &&
        strcmp(field, "double") != 0) {
        snprintf(err, errlen, "%s: field '%s' not supported (real, integer, pattern)", path, field);
        fclose(f);
        return -1;
    }
    int symm = strcmp(sym, "symmetric") == 0, skew = strcmp(sym, "skew-symmetric") == 0;
    if (!symm && !skew && strcmp(sym, "general") != 0) {
        snprintf(err, errlen, "%s: symmetry '%s' not supported", path, sym);
        fclose(f);
        return -1;
    }
    unsigned long long m = 0, n = 0, nz = 0;
    for (;;) {
        if (!fgets(line, sizeof line, f)) {
            snprintf(err, errlen, "%s: missing size line", path);
            fclose(f);
            return -1;
        }
        if (line[0] == '%') continue;
        char *p = line;
        while (isspace((unsigned char)*p)) ++p;
        if (*p == 0) continue;
        if (sscanf(p, "%llu %llu %llu", &m, &n, &nz) != 3) {
            snprintf(err, errlen, "%s: bad size line", path);
            fclose(f);
            return -1;
        }
        break;
    }
    if (m > UINT32_MAX || n > UINT32_MAX) {
        snprintf(err, errlen, "%s: matrix too large (32-bit indices)", path);
        fclose(f);
        return -1;
    }
    size_t cap = (size_t)nz * ((symm || skew) ? 2 : 1);
    uint32_t *I = xmalloc(cap * sizeof *I), *J = xmalloc(cap * sizeof *J);
    double *V = xmalloc(cap * sizeof *V);
    if (!I || !J || !V) {
        snprintf(err, errlen, "%s: out of memory", path);
        free(I); free(J); free(V); fclose(f);
        return -1;
    }
    size_t k = 0;
    for (unsigned long long e = 0; e < nz; ++e) {
        if (!fgets(line, sizeof line, f)) {
            snprintf(err, errlen, "%s: %llu of %llu entries", path, e, nz);
            goto fail;
        }
        char *p = line, *q;
        while (isspace((unsigned char)*p)) ++p;
        if (*p == '%' || *p == 0) { --e; continue; }
        unsigned long long i = strtoull(p, &q, 10);
        if (q == p) goto bad;
        p = q;
        unsigned long long j = strtoull(p, &q, 10);
        if (q == p) goto bad;
        p = q;
        double v = 1.0;
        if (!pattern) {
            v = strtod(p, &q);
            if (q == p) goto bad;
        }
        if (i < 1 || i > m || j < 1 || j > n) goto bad;
        I[k] = (uint32_t)(i - 1);
        J[k] = (uint32_t)(j - 1);
        V[k] = v;
        ++k;
        if ((symm || skew) && i != j) {
            I[k] = (uint32_t)(j - 1);
            J[k] = (uint32_t)(i - 1);
            V[k] = skew ? -v : v;
            ++k;
        }
        continue;
    bad:
        snprintf(err, errlen, "%s: bad entry %llu: %s", path, e + 1, line);
        goto fail;
    }
    fclose(f);
    int rc = sp_from_coo((size_t)m, (size_t)n, k, I, J, V, 1, A);
    free(I); free(J); free(V);
    if (rc != 0) snprintf(err, errlen, "%s: out of memory", path);
    return rc;
fail:
    free(I); free(J); free(V);
    fclose(f);
    return -1;
}

int sp_write_mm(const char *path, const sp_crs *A)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%zu %zu %zu\n", A->m, A->n, A->nnz);
    for (size_t i = 0; i < A->m; ++i)
        for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k)
            fprintf(f, "%zu %u %.17g\n", i + 1, A->col[k] + 1, A->val[k]);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- test matrices ------------------------------------------------------ */

int sp_lap2d(size_t nx, size_t ny, sp_crs *A)
{
    size_t n = nx * ny;
    if (n > UINT32_MAX) return -1;
    if (sp_alloc(A, n, n, 5 * n) != 0) return -1;
    size_t k = 0;
    for (size_t y = 0; y < ny; ++y)
        for (size_t x = 0; x < nx; ++x) {
            size_t i = x + nx * y;
            A->rowptr[i] = k;
            if (y > 0) { A->col[k] = (uint32_t)(i - nx); A->val[k++] = -1.0; }
            if (x > 0) { A->col[k] = (uint32_t)(i - 1); A->val[k++] = -1.0; }
            A->col[k] = (uint32_t)i; A->val[k++] = 4.0;
            if (x + 1 < nx) { A->col[k] = (uint32_t)(i + 1); A->val[k++] = -1.0; }
            if (y + 1 < ny) { A->col[k] = (uint32_t)(i + nx); A->val[k++] = -1.0; }
        }
    A->rowptr[n] = k;
    A->nnz = k;
    return 0;
}

int sp_lap3d(size_t nx, size_t ny, size_t nz, sp_crs *A)
{
    size_t n = nx * ny * nz, sxy = nx * ny;
    if (n > UINT32_MAX) return -1;
    if (sp_alloc(A, n, n, 7 * n) != 0) return -1;
    size_t k = 0;
    for (size_t z = 0; z < nz; ++z)
        for (size_t y = 0; y < ny; ++y)
            for (size_t x = 0; x < nx; ++x) {
                size_t i = x + nx * y + sxy * z;
                A->rowptr[i] = k;
                if (z > 0) { A->col[k] = (uint32_t)(i - sxy); A->val[k++] = -1.0; }
                if (y > 0) { A->col[k] = (uint32_t)(i - nx); A->val[k++] = -1.0; }
                if (x > 0) { A->col[k] = (uint32_t)(i - 1); A->val[k++] = -1.0; }
                A->col[k] = (uint32_t)i; A->val[k++] = 6.0;
                if (x + 1 < nx) { A->col[k] = (uint32_t)(i + 1); A->val[k++] = -1.0; }
                if (y + 1 < ny) { A->col[k] = (uint32_t)(i + nx); A->val[k++] = -1.0; }
                if (z + 1 < nz) { A->col[k] = (uint32_t)(i + sxy); A->val[k++] = -1.0; }
            }
    A->rowptr[n] = k;
    A->nnz = k;
    return 0;
}

static void shuffle(uint32_t *perm, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; ++i) perm[i] = (uint32_t)i;
    for (size_t i = n; i > 1; --i) {
        size_t j = (size_t)(app_rand64(rng) % i);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

int sp_powerlaw(size_t n, double avgdeg, double gamma, uint64_t seed, sp_crs *A)
{
    memset(A, 0, sizeof *A);
    if (n < 2 || n > UINT32_MAX || gamma <= 2.0 || avgdeg <= 0) return -1;
    /* node of rank k (0 = biggest hub) has weight (k+1)^-beta, which gives a
     * degree distribution with exponent gamma = 1 + 1/beta; ranks are drawn
     * by inverting the continuous distribution function */
    const double beta = 1.0 / (gamma - 1.0), e = 1.0 - beta;
    const double top = pow((double)n + 1.0, e) - 1.0;
    size_t ne = (size_t)((double)n * avgdeg + 0.5);
    uint64_t rng = seed;
    uint32_t *ps = xmalloc(n * sizeof *ps), *pt = xmalloc(n * sizeof *pt);
    uint32_t *I = xmalloc(ne * sizeof *I), *J = xmalloc(ne * sizeof *J);
    if (!ps || !pt || !I || !J) {
        free(ps); free(pt); free(I); free(J);
        return -1;
    }
    shuffle(ps, n, &rng);
    shuffle(pt, n, &rng);
    for (size_t k = 0; k < ne; ++k) {
        size_t a, b;
        do {
            double ra = pow(1.0 + app_rand01(&rng) * top, 1.0 / e) - 1.0;
            double rb = pow(1.0 + app_rand01(&rng) * top, 1.0 / e) - 1.0;
            a = ra < (double)n ? (size_t)ra : n - 1;
            b = rb < (double)n ? (size_t)rb : n - 1;
            a = ps[a];
            b = pt[b];
        } while (a == b);
        I[k] = (uint32_t)a;
        J[k] = (uint32_t)b;
    }
    free(ps);
    free(pt);
    int rc = sp_from_coo(n, n, ne, I, J, NULL, 0, A);
    free(I);
    free(J);
    return rc;
}

int sp_make(const char *spec, sp_crs *A, char *err, size_t errlen)
{
    memset(A, 0, sizeof *A);
    unsigned long long a = 0, b = 0, c = 0;
    double deg = 8.0, gamma = 2.5;
    int rc;
    if (strncmp(spec, "lap2d:", 6) == 0) {
        int k = sscanf(spec + 6, "%llux%llu", &a, &b);
        if (k < 1 || a == 0) goto bad;
        if (k == 1) b = a;
        rc = sp_lap2d((size_t)a, (size_t)b, A);
    } else if (strncmp(spec, "lap3d:", 6) == 0) {
        int k = sscanf(spec + 6, "%llux%llux%llu", &a, &b, &c);
        if (k < 1 || a == 0) goto bad;
        if (k == 1) b = c = a;
        else if (k != 3) goto bad;
        rc = sp_lap3d((size_t)a, (size_t)b, (size_t)c, A);
    } else if (strncmp(spec, "powerlaw:", 9) == 0) {
        int k = sscanf(spec + 9, "%llu:%lf:%lf", &a, &deg, &gamma);
        if (k < 1 || a < 2) goto bad;
        rc = sp_powerlaw((size_t)a, deg, gamma, 12345, A);
    } else {
        return sp_read_mm(spec, A, err, errlen);
    }
    if (rc != 0) snprintf(err, errlen, "%s: cannot build (size or memory)", spec);
    return rc;
bad:
    snprintf(err, errlen, "%s: bad matrix specification", spec);
    return -1;
}

void sp_randomize_values(sp_crs *A, uint64_t seed)
{
    uint64_t rng = seed;
    for (size_t k = 0; k < A->nnz; ++k) A->val[k] = 0.5 + app_rand01(&rng);
}

int sp_transpose(const sp_crs *A, sp_crs *T)
{
    memset(T, 0, sizeof *T);
    if (sp_alloc(T, A->n, A->m, A->nnz) != 0) return -1;
    size_t *rp = T->rowptr;
    for (size_t k = 0; k < A->nnz; ++k) rp[A->col[k] + 1]++;
    for (size_t j = 0; j < A->n; ++j) rp[j + 1] += rp[j];
    size_t *fill = xmalloc(A->n * sizeof *fill);
    if (!fill) {
        sp_free(T);
        return -1;
    }
    memcpy(fill, rp, A->n * sizeof *fill);
    for (size_t i = 0; i < A->m; ++i)
        for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) {
            size_t q = fill[A->col[k]]++;
            T->col[q] = (uint32_t)i;
            T->val[q] = A->val[k];
        }
    free(fill);
    return 0;
}

void sp_spmv(const sp_crs *A, const double *x, double *y)
{
    const size_t *rp = A->rowptr;
    const uint32_t *col = A->col;
    const double *val = A->val;
    for (size_t i = 0; i < A->m; ++i) {
        double s = 0.0;
        for (size_t k = rp[i]; k < rp[i + 1]; ++k) s += val[k] * x[col[k]];
        y[i] = s;
    }
}

/* ---- partitions --------------------------------------------------------- */

void sp_part_free(sp_part *part)
{
    if (!part) return;
    free(part->owner_nz);
    free(part->owner_x);
    free(part->owner_y);
    memset(part, 0, sizeof *part);
}

int sp_part_kind_from_name(const char *name)
{
    if (strcmp(name, "rows") == 0) return SP_PART_ROWS;
    if (strcmp(name, "cols") == 0) return SP_PART_COLS;
    if (strcmp(name, "2d") == 0) return SP_PART_2D;
    return -1;
}

const char *sp_part_kind_name(sp_part_kind kind)
{
    switch (kind) {
    case SP_PART_ROWS: return "rows";
    case SP_PART_COLS: return "cols";
    case SP_PART_2D: return "2d";
    }
    return "?";
}

/* Cuts 0..len-1 into P contiguous parts of about equal weight; pre[i] is the
 * weight of 0..i-1 (non-decreasing, len + 1 entries). bnd gets P + 1 entries. */
static void cut_blocks(const size_t *pre, size_t len, unsigned P, size_t *bnd)
{
    const double total = (double)pre[len];
    bnd[0] = 0;
    for (unsigned k = 1; k < P; ++k) {
        double target = total * k / P;
        size_t lo = bnd[k - 1], hi = len;      /* first i with pre[i] >= target */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if ((double)pre[mid] >= target) hi = mid; else lo = mid + 1;
        }
        bnd[k] = lo;
    }
    bnd[P] = len;
}

/* the block (0..P-1) that contains index i */
static unsigned find_block(const size_t *bnd, unsigned P, size_t i)
{
    unsigned lo = 0, hi = P - 1;   /* largest k with bnd[k] <= i */
    while (lo < hi) {
        unsigned mid = lo + (hi - lo + 1) / 2;
        if (bnd[mid] <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* row i's partner column for the vector rule, and column j's partner row */
static size_t diag_col(const sp_crs *A, size_t i)
{
    return A->m == A->n ? i : (size_t)((double)i * (double)A->n / (double)A->m);
}
static size_t diag_row(const sp_crs *A, size_t j)
{
    return A->m == A->n ? j : (size_t)((double)j * (double)A->m / (double)A->n);
}

int sp_partition(const sp_crs *A, unsigned P, sp_part_kind kind, sp_part *part)
{
    memset(part, 0, sizeof *part);
    if (P == 0) return -1;
    part->P = P;
    part->owner_nz = xmalloc(A->nnz * sizeof *part->owner_nz);
    part->owner_x = xmalloc(A->n * sizeof *part->owner_x);
    part->owner_y = xmalloc(A->m * sizeof *part->owner_y);
    size_t len = A->m > A->n ? A->m : A->n;
    size_t *pre = xmalloc((len + 1) * sizeof *pre);
    unsigned Pr = P, Pc = 1;
    if (kind == SP_PART_2D)
        for (unsigned c = 1; c * c <= P; ++c)
            if (P % c == 0) { Pc = c; Pr = P / c; }
    if (kind == SP_PART_COLS) { Pr = 1; Pc = P; }
    size_t *rb = xmalloc((Pr + 1) * sizeof *rb);
    size_t *cb = xmalloc((size_t)Pr * (Pc + 1) * sizeof *cb);   /* per row block */
    unsigned *rowblk = xmalloc(A->m * sizeof *rowblk);
    if (!part->owner_nz || !part->owner_x || !part->owner_y || !pre || !rb || !cb || !rowblk) {
        free(pre); free(rb); free(cb); free(rowblk);
        sp_part_free(part);
        return -1;
    }
    /* row blocks, weight of a row = its nonzeros + 1 */
    for (size_t i = 0; i <= A->m; ++i) pre[i] = A->rowptr[i] + i;
    cut_blocks(pre, A->m, Pr, rb);
    for (unsigned r = 0; r < Pr; ++r)
        for (size_t i = rb[r]; i < rb[r + 1]; ++i) rowblk[i] = r;
    /* column blocks inside each row block, weight of a column = its nonzeros
     * in the block (+ 1 when all of A is one row block) */
    for (unsigned r = 0; r < Pr; ++r) {
        memset(pre, 0, (A->n + 1) * sizeof *pre);
        for (size_t i = rb[r]; i < rb[r + 1]; ++i)
            for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) pre[A->col[k] + 1]++;
        for (size_t j = 0; j < A->n; ++j) pre[j + 1] += pre[j] + (Pr == 1 ? 1 : 0);
        cut_blocks(pre, A->n, Pc, cb + (size_t)r * (Pc + 1));
    }
    free(pre);
#define OWNER(i, j) (rowblk[i] * Pc + find_block(cb + (size_t)rowblk[i] * (Pc + 1), Pc, (j)))
    for (size_t i = 0; i < A->m; ++i)
        for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k)
            part->owner_nz[k] = OWNER(i, A->col[k]);
    for (size_t i = 0; i < A->m; ++i) part->owner_y[i] = OWNER(i, diag_col(A, i));
    for (size_t j = 0; j < A->n; ++j) {
        size_t i = diag_row(A, j);
        if (i >= A->m) i = A->m - 1;
        part->owner_x[j] = A->m ? OWNER(i, j) : 0;
    }
#undef OWNER
    free(rb); free(cb); free(rowblk);
    return 0;
}

int sp_part_evaluate(const sp_crs *A, const sp_part *part, sp_part_stats *st)
{
    memset(st, 0, sizeof *st);
    const unsigned P = part->P;
    size_t *cnt = xcalloc(P, sizeof *cnt);
    size_t *stamp = xmalloc((size_t)P * sizeof *stamp);
    size_t *cp = xcalloc(A->n + 1, sizeof *cp);
    unsigned *cown = xmalloc(A->nnz * sizeof *cown);
    if (!cnt || !stamp || !cp || !cown) {
        free(cnt); free(stamp); free(cp); free(cown);
        return -1;
    }
    for (unsigned q = 0; q < P; ++q) stamp[q] = SIZE_MAX;
    for (size_t k = 0; k < A->nnz; ++k) cnt[part->owner_nz[k]]++;
    st->min_nnz = SIZE_MAX;
    for (unsigned q = 0; q < P; ++q) {
        if (cnt[q] > st->max_nnz) st->max_nnz = cnt[q];
        if (cnt[q] < st->min_nnz) st->min_nnz = cnt[q];
    }
    /* fan-out: per row, the distinct non-owners holding nonzeros */
    for (size_t i = 0; i < A->m; ++i)
        for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) {
            unsigned q = part->owner_nz[k];
            if (stamp[q] != i) {
                stamp[q] = i;
                if (q != part->owner_y[i]) st->volume++;
            }
        }
    /* fan-in: per column */
    for (size_t k = 0; k < A->nnz; ++k) cp[A->col[k] + 1]++;
    for (size_t j = 0; j < A->n; ++j) cp[j + 1] += cp[j];
    for (size_t i = 0; i < A->m; ++i)
        for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; ++k) cown[cp[A->col[k]]++] = part->owner_nz[k];
    for (unsigned q = 0; q < P; ++q) stamp[q] = SIZE_MAX;
    size_t b = 0;
    for (size_t j = 0; j < A->n; ++j) {
        size_t e = cp[j];
        for (size_t k = b; k < e; ++k) {
            unsigned q = cown[k];
            if (stamp[q] != j) {
                stamp[q] = j;
                if (q != part->owner_x[j]) st->volume++;
            }
        }
        b = e;
    }
    free(cnt); free(stamp); free(cp); free(cown);
    return 0;
}
