/*
 * Small C helpers of the Cython module superstep._core: the MPI calls
 * (present only when the library was built with the MPI engine) and the
 * engine choice. No Python API here.
 */
#ifndef SSTEP_PY_H
#define SSTEP_PY_H

#include <lpf/core.h>

/* the library's (src/core/sstep_ext.h): a sync of the package's own */
void sstep_layer_step(lpf_t ctx);
#include <stdlib.h>
#include <strings.h>

/* NumPy's headers pull in <complex.h>, whose macro I clashes with the
 * parameter names of sparse.h */
#ifdef I
#undef I
#endif
#include "inprod.h"
#include "sort.h"
#include "spmv.h"
#include "pagerank.h"
#ifdef SSTEP_PY_HAVE_FFT
#include "bspfft.h"
#endif

#ifdef SSTEP_PY_HAVE_MPI
#include <mpi.h>
#include <lpf/mpi.h>

static int sstep_py_have_mpi(void) { return 1; }

/* initialise MPI when needed, then an lpf_init_t over MPI_COMM_WORLD */
static int sstep_py_mpi_init(lpf_init_t *init, int *rank, int *size)
{
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Finalized(&fin);
    if (fin) return -1;
    if (!inited) {
        int provided = 0;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, init) == LPF_SUCCESS ? 0 : -1;
}

static void sstep_py_mpi_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    _Exit(code);
}

static void sstep_py_mpi_finalize(lpf_init_t init)
{
    int fin = 0;
    if (init) lpf_mpi_finalize(init);
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

#include <lpf/hybrid.h>
#include <lpf/pthread.h>

/* the hybrid engine: thread t of the T threads of this rank (rank of size
 * ranks) joins one run over every thread of every rank (<lpf/hybrid.h>);
 * thread 0 brings the MPI lpf_init_t */
static lpf_err_t sstep_py_hybrid_hook(lpf_init_t mpi, unsigned t, unsigned T, int rank,
        int size, lpf_spmd_t spmd)
{
    lpf_init_t ti = NULL, hi = NULL;
    lpf_err_t rc = lpf_pthread_initialize(t, T, &ti);
    if (rc != LPF_SUCCESS) return rc;
    rc = lpf_hybrid_initialize(ti, t == 0 ? mpi : LPF_INIT_NONE, t, T, (lpf_pid_t)rank,
            (lpf_pid_t)size, &hi);
    if (rc == LPF_SUCCESS) {
        rc = lpf_hook(hi, spmd, LPF_NO_ARGS);
        lpf_hybrid_finalize(hi);
    }
    lpf_pthread_finalize(ti);
    return rc;
}
#else
static int sstep_py_have_mpi(void) { return 0; }
static int sstep_py_mpi_init(lpf_init_t *init, int *rank, int *size)
{
    (void)init; *rank = 0; *size = 1;
    return -1;
}
static void sstep_py_mpi_abort(int code) { _Exit(code); }
static void sstep_py_mpi_finalize(lpf_init_t init) { (void)init; }
static lpf_err_t sstep_py_hybrid_hook(lpf_init_t mpi, unsigned t, unsigned T, int rank,
        int size, lpf_spmd_t spmd)
{
    (void)mpi; (void)t; (void)T; (void)rank; (void)size; (void)spmd;
    return LPF_ERR_FATAL;
}
#endif

/* threads per rank on the hybrid engine (bsprun -t sets it) */
static unsigned sstep_py_hybrid_threads(void)
{
    const char *v = getenv("SUPERSTEP_HYBRID_THREADS");
    long t = v && *v ? strtol(v, NULL, 10) : 1;
    return t >= 1 && t <= 4096 ? (unsigned)t : 1;
}

/* SUPERSTEP_ENGINE=mpi (any case), as the library reads it */
static int sstep_py_engine_is_mpi(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e && strcasecmp(e, "mpi") == 0;
}

static int sstep_py_engine_is_hybrid(void)
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e && strcasecmp(e, "hybrid") == 0;
}

#ifdef SSTEP_PY_HAVE_FFT
static int sstep_py_have_fft(void) { return 1; }
#else
static int sstep_py_have_fft(void) { return 0; }
/* not built: the module still links */
static int bsp_fft(double *x, size_t n, int sign, unsigned P)
{
    (void)x; (void)n; (void)sign; (void)P;
    return -2;
}
#endif

#endif
