/*
 * BSP sparse matrix-vector multiplication y = A x with a 2D distribution
 * (MulticoreBSP for C paper, Sect. 3.2; Bisseling, Parallel Scientific
 * Computation, Ch. 4).
 *
 * Every nonzero a_ij and every vector component x_j, y_i has an owner (an
 * sp_part: any assignment works, e.g. from sp_partition). Process s keeps
 * its nonzeros in local CRS form over its local rows and columns; its local
 * x holds the owned x_j first and then the "ghost" x_j it needs from other
 * processes; its local y holds the owned y_i first and then partial sums
 * for rows owned elsewhere. Consecutive ghosts with the same owner form one
 * range, so fan-in and fan-out move ranges, not single elements; ranges at
 * one owner that are at most 12 indices apart are merged (the elements in
 * between travel too and are not used: one larger copy is cheaper than one
 * more request). On matrices with skewed column degrees (maximum at least
 * 16 times the mean: power-law graphs) the owned x_j of every process are
 * listed by decreasing column degree rather than by index, so that the
 * heavily read x_j share cache lines and the ghost ranges are long; owned
 * y_i follow the same order when owner_x == owner_y on a square matrix (the
 * owned lists of x and y then always agree). Owned order is visible only
 * through gx / gy; scatter and gather use it.
 *
 * Two multiplication algorithms:
 *   SPMV_GETPUT  three supersteps, plain BSPlib: fan-in with bsp_get; sync;
 *                local SpMV and fan-out with bsp_put into a receive buffer
 *                slot per contribution; sync; add the contributions.
 *   SPMV_HP      two supersteps, Algorithm 5 of the paper: fan-in with
 *                bsp_direct_get (no sync), local SpMV, fan-out with
 *                bsp_hpsend (tag = remote index and length); sync;
 *                bsp_hpmove and add. bsp_direct_get needs the owners' x to
 *                be unchanged since the last sync: modify x, then sync,
 *                then multiply (spmv_set_x does that).
 *
 * All functions below are collective: call them inside an SPMD section
 * (between bsp_begin and bsp_end) on every process. The state lives in the
 * caller's spmv_local (keep it in a local variable: on the pthread engine
 * all processes share globals). The sequential input lives at pid 0 only.
 */
#ifndef SUPERSTEP_APP_SPMV_H
#define SUPERSTEP_APP_SPMV_H

#include "sparse.h"

#include <app_util.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum spmv_variant {
    SPMV_GETPUT = 0,
    SPMV_HP = 1
} spmv_variant;

/* One fan-in or fan-out message: a range of len vector elements between
 * this process (local index) and process pid (remote index). For fan-out,
 * off is the range's place in the owner's receive buffer (SPMV_GETPUT);
 * remote and len are adjacent: they are the bsp_hpsend tag (SPMV_HP). */
typedef struct spmv_range {
    uint64_t pid, local, remote, len, off;
} spmv_range;

typedef struct spmv_local {
    unsigned p, s;
    size_t m, n;                   /* global size */
    size_t nown_x, nown_y;         /* owned components */
    size_t ncols, nrows, nnz;      /* local columns (x), local rows (y), nonzeros */
    size_t *rowptr;                /* local CRS, nrows + 1 */
    uint32_t *col;
    double *val;
    double *x;                     /* ncols: owned first, then ghosts (registered) */
    double *y;                     /* nrows: owned first, then partial sums */
    size_t nfanin, nfanout, nrecv, recvlen;
    spmv_range *fanin, *fanout, *recv;
    double *recvbuf;               /* recvlen (registered) */
    uint32_t *gx, *gy;             /* global index of each owned x_j, y_i */
    size_t tagsize_old;            /* restored by spmv_free */
    /* shared-memory reads (pthread engine only; NULL elsewhere): see
     * spmv_local_kernel_hp */
    uint32_t *colz;                /* nnz: index of the column's x_j from xall */
    double *xall;                  /* one allocation: the x of all processes, x a slice */
    app_huge xall_mem;             /* pid 0: that allocation, released by spmv_free */
    const double **peer_x;         /* p: the x of every process */
    uint64_t *share;               /* registered: this process's x address */
    /* pid 0 only: every process's owned lists, for scatter and gather */
    size_t *root_nx, *root_ny;     /* p entries */
    uint32_t **root_gx, **root_gy; /* p lists */
} spmv_local;

/* Whether SPMV_HP can run: bsp_direct_get needs an engine that reads other
 * processes' memory (the pthread engine; not the MPI engine, where it is a
 * run-time error). Decided from SUPERSTEP_ENGINE, which selects the engine.
 * Usable outside SPMD sections. */
int spmv_hp_available(void);
/* SPMV_HP where available, else SPMV_GETPUT. */
spmv_variant spmv_default_variant(void);

/* Distributes A (m x n, at pid 0) according to part (at pid 0; part->P must
 * equal bsp_nprocs()); other processes pass NULL for both. Sets the BSMP tag
 * size to 16 bytes (restored by spmv_free). Returns 0 on every process, or
 * -1 on every process (bad partition, out of memory). Four supersteps. On
 * the pthread engine (spmv_hp_available) with p > 1 it also prepares the
 * in-place reads of spmv_local_kernel_hp, unless SUPERSTEP_SPMV_INPLACE=0:
 * then every L->x is a slice of one block allocated by pid 0 (L->xall),
 * released by spmv_free; do not free L->x yourself. */
int spmv_setup(spmv_local *L, const sp_crs *A, const sp_part *part);

/* Scatters a vector distributed like x (length n at pid 0, NULL elsewhere)
 * into local (nown_x entries, owned order). One superstep. */
void spmv_scatter_x(spmv_local *L, const double *global, double *local);
/* Same for vectors distributed like y (length m, nown_y entries). */
void spmv_scatter_y(spmv_local *L, const double *global, double *local);
/* Gathers local (nown_y entries, distributed like y) into global (length m)
 * at pid 0. One superstep. */
void spmv_gather_y(spmv_local *L, const double *local, double *global);
/* Same for vectors distributed like x. */
void spmv_gather_x(spmv_local *L, const double *local, double *global);

/* Sets the owned part of L->x from x (length n at pid 0), then syncs, so
 * that a following spmv_mv may read it directly. Two supersteps. */
void spmv_set_x(spmv_local *L, const double *x);

/* L->y[0 .. nown_y) = (A x) restricted to the owned rows, where x is the
 * owned part of L->x on every process. SPMV_GETPUT: 2 syncs; SPMV_HP: 1. */
void spmv_mv(spmv_local *L, spmv_variant v);

/* The parts of spmv_mv, for algorithms that merge other communication into
 * its supersteps (PageRank): SPMV_GETPUT is
 *     spmv_fanin_get; sync; spmv_local_kernel; spmv_fanout; sync; spmv_accumulate
 * and SPMV_HP is
 *     spmv_fanin_direct; spmv_local_kernel; spmv_fanout; sync; spmv_accumulate. */
void spmv_fanin_get(spmv_local *L);
void spmv_fanin_direct(spmv_local *L);
void spmv_local_kernel(const spmv_local *L);          /* y = A_local x, no communication */
/* SPMV_HP's fan-in and local product in one: y = A_local x, where the ghost
 * x_j are the owners' current values. On shared memory (the pthread engine)
 * the product reads them straight from the owners' x, as a zero-copy
 * bsp_direct_get: no ghost copy, and all processes read one copy of every
 * x_j, so the caches hold x once, as in a shared-memory loop. Elsewhere
 * (or when the local indices do not fit the packed column format, or L->x
 * is not the registered x of spmv_setup) it is spmv_fanin_direct followed
 * by spmv_local_kernel. Same contract as bsp_direct_get: the owners must
 * not change their x during the superstep. */
void spmv_local_kernel_hp(spmv_local *L);
/* The common base of every process's x (one allocation on the pthread
 * engine), which spmv_local_kernel_hp reads in place as xall[colz[k]], or
 * NULL where it copies ghosts instead. For algorithms that fuse their own
 * work into the product's loop (PageRank). */
const double *spmv_inplace_x(const spmv_local *L);
void spmv_fanout(spmv_local *L, spmv_variant v);
void spmv_accumulate(spmv_local *L, spmv_variant v);

/* Deregisters and frees everything. One superstep. */
void spmv_free(spmv_local *L);

/* Library call: y = A x on P processes, from sequential code (or from
 * inside an SPMD section, as a nested run). Runs its own bsp_init /
 * bsp_begin / bsp_end. part == NULL: row blocks. Returns 0, or -1 for a
 * partition that does not match P or out of memory. */
int bsp_spmv(const sp_crs *A, const sp_part *part, const double *x, double *y,
             unsigned P, spmv_variant v);

#ifdef __cplusplus
}
#endif

#endif
