/*
 * Sequential sparse-matrix helpers for the SpMV and PageRank applications:
 * compressed row storage (CRS), a Matrix Market reader and writer, test
 * matrices (2D/3D Laplacians, random power-law graphs), the transpose, the
 * plain CRS product y = A x, and simple partitioners that assign every
 * nonzero and every vector component to one of P processes.
 *
 * Plain C, no BSP: this is what pid 0 uses before it distributes a matrix,
 * and what the tests and benchmarks use as the sequential reference.
 * Column indices are 32-bit (matrices with fewer than 2^32 columns).
 */
#ifndef SUPERSTEP_APP_SPARSE_H
#define SUPERSTEP_APP_SPARSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An m x n matrix in CRS: the nonzeros of row i are k = rowptr[i] ..
 * rowptr[i+1]-1, in increasing column order, at column col[k], value val[k]. */
typedef struct sp_crs {
    size_t m, n, nnz;
    size_t *rowptr;     /* m + 1 entries */
    uint32_t *col;      /* nnz entries */
    double *val;        /* nnz entries */
} sp_crs;

/* Builds a CRS matrix from nnz triplets (I[k], J[k], V[k]) (V == NULL: all
 * ones). Duplicates are summed (sum_dups != 0) or reduced to the first one.
 * Returns 0, or -1 when out of memory or an index is out of range. */
int sp_from_coo(size_t m, size_t n, size_t nnz, const uint32_t *I, const uint32_t *J,
                const double *V, int sum_dups, sp_crs *A);

void sp_free(sp_crs *A);

/* Reads a Matrix Market file (coordinate; real, integer or pattern;
 * general, symmetric or skew-symmetric). Pattern entries get value 1.
 * Returns 0, or -1 with a message in err. */
int sp_read_mm(const char *path, sp_crs *A, char *err, size_t errlen);
/* Writes A as "matrix coordinate real general". Returns 0 or -1. */
int sp_write_mm(const char *path, const sp_crs *A);

/* 5-point Laplacian of an nx x ny grid (4 on the diagonal, -1 off it). */
int sp_lap2d(size_t nx, size_t ny, sp_crs *A);
/* 7-point Laplacian of an nx x ny x nz grid (6 on the diagonal, -1 off it). */
int sp_lap3d(size_t nx, size_t ny, size_t nz, sp_crs *A);
/* Random directed graph on n nodes with about n * avgdeg distinct edges
 * (no self loops), both endpoints drawn from a power law with degree
 * exponent gamma (> 2; 2.5 is typical of the web), node labels randomly
 * permuted. A[i][j] = 1 for an edge i -> j. Many nodes have no out-edges
 * (dangling nodes). Reproducible for a given seed. */
int sp_powerlaw(size_t n, double avgdeg, double gamma, uint64_t seed, sp_crs *A);
/* Replaces all values by reproducible random values in [0.5, 1.5). */
void sp_randomize_values(sp_crs *A, uint64_t seed);

/* A matrix from a specification string:
 *   lap2d:N or lap2d:NXxNY         5-point Laplacian of an N x N (NX x NY) grid
 *   lap3d:N or lap3d:NXxNYxNZ      7-point Laplacian
 *   powerlaw:N[:AVGDEG[:GAMMA]]    random power-law graph (defaults 8, 2.5), values 1
 *   anything else                  a Matrix Market file
 * Returns 0, or -1 with a message in err. */
int sp_make(const char *spec, sp_crs *A, char *err, size_t errlen);

/* T = A^T. */
int sp_transpose(const sp_crs *A, sp_crs *T);

/* y = A x with the plain CRS loop. */
void sp_spmv(const sp_crs *A, const double *x, double *y);

/* ---- partitions ---------------------------------------------------------
 * A partition of A over P processes: owner_nz[k] owns nonzero k (CRS order),
 * owner_x[j] owns x_j (the input vector), owner_y[i] owns y_i (the output).
 * Any such assignment is valid for the BSP SpMV; communication is least when
 * the owner of x_j holds nonzeros of column j and the owner of y_i holds
 * nonzeros of row i, which the schemes below ensure for square matrices
 * (the owner of a_jj owns x_j and y_j). */
typedef struct sp_part {
    unsigned P;
    unsigned *owner_nz;   /* nnz */
    unsigned *owner_x;    /* n */
    unsigned *owner_y;    /* m */
} sp_part;

typedef enum sp_part_kind {
    SP_PART_ROWS = 0,     /* 1D: contiguous row blocks with balanced nonzeros */
    SP_PART_COLS = 1,     /* 1D: contiguous column blocks with balanced nonzeros */
    SP_PART_2D = 2        /* 2D: Pr row blocks, each cut into Pc column blocks with
                             balanced nonzeros (Pr * Pc = P, Pc <= Pr as square as P allows) */
} sp_part_kind;

int sp_partition(const sp_crs *A, unsigned P, sp_part_kind kind, sp_part *part);
void sp_part_free(sp_part *part);
/* "rows", "cols", "2d" -> kind; returns -1 for an unknown name */
int sp_part_kind_from_name(const char *name);
const char *sp_part_kind_name(sp_part_kind kind);

/* Quality of a partition: the largest number of nonzeros of one process and
 * the communication volume (words: the x_j that some process needs but does
 * not own, plus the partial sums of y_i sent to their owners). */
typedef struct sp_part_stats {
    size_t max_nnz, min_nnz, volume;
} sp_part_stats;
int sp_part_evaluate(const sp_crs *A, const sp_part *part, sp_part_stats *st);

#ifdef __cplusplus
}
#endif

#endif
