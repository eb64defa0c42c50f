/*
 * bench/scale/scale.c: the MPI engine against plain MPI on one simulated
 * cluster (SimGrid SMPI; run by bench/scale/run.sh, docs/scale.md).
 *
 * Every rank runs main, as in any MPI program: MPI_Init, then the engine
 * through lpf_mpi_initialize_with_mpicomm + lpf_hook, then the MPI
 * baselines for the same data in the same simulation. Times are the
 * simulator's (MPI_Wtime): per superstep or operation, the slowest rank's
 * mean over --reps repetitions after one warm-up.
 *
 * Rows (--rows a,b,...; default all):
 *   empty   an empty superstep                  | MPI_Barrier
 *   rand4   8 bytes to each of 4 random peers    | MPI_Alltoallv, MPI_Neighbor_alltoallv,
 *                                                  MPI_Put + MPI_Win_fence
 *   hrel    1 MiB h-relation: 64 KiB to each of 16 peers (and from 16)  | the same three
 *   total   4 KiB to every other process         | MPI_Alltoall
 *   dget    one 8-byte bsp_direct_get (bsplib_direct_get) from pid + p/2 |
 *           MPI_Win_lock + MPI_Get + MPI_Win_unlock
 * Output: one line per (row, variant): "RESULT <row> <variant> <p> <seconds>";
 * "RESULT <row> <variant> <p> na" where the simulator lacks the call.
 * --check: plain buffers (not SMPI's shared ones) and every received byte
 * checked; exit status 1 on a wrong value (the ctest uses it).
 * --lpf-only / --mpi-only: one side only.
 * --trace: rank 0 prints on stderr when it passes each phase.
 * --no-alltoallv: leave MPI_Alltoallv out ("RESULT <row> MPI_Alltoallv <p>
 * skipped"): Open MPI's algorithms send p - 1 messages per process, zero
 * bytes or not, which at p = 4,096 is more than a simulation here affords.
 */
#include <mpi.h>
#include <lpf/bsplib.h>
#include <lpf/core.h>
#include <lpf/mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SUPERSTEP_SMPI
# include <smpi/smpi.h>
# define BIG_MALLOC(n) (opt.check ? malloc(n) : SMPI_SHARED_MALLOC(n))
# define BIG_FREE(x) (opt.check ? free(x) : SMPI_SHARED_FREE(x))
#else
# define BIG_MALLOC(n) malloc(n)
# define BIG_FREE(x) free(x)
#endif

/* this program starts MPI itself */
const int LPF_MPI_AUTO_INITIALIZE = 0;

enum { R_EMPTY, R_RAND4, R_HREL, R_TOTAL, R_DGET, NROWS };
static const char *const row_name[NROWS] = { "empty", "rand4", "hrel", "total", "dget" };

#define RAND_PEERS 4
#define RAND_BYTES 8
#define HREL_PEERS 16
#define HREL_BYTES (64 * 1024)
#define TOTAL_BYTES 4096
#define DGET_BYTES 8

static struct {
    int rows[NROWS];
    int reps;
    int check;
    int lpf, mpi;
    int no_alltoallv;
    int trace;
} opt;

static int rank, nproc;
static int bad;          /* wrong values seen (--check) */
static double lib_t[NROWS]; /* this rank's mean per row */

/* --trace: rank 0 says when it passes a phase, in simulated and real time
 * (time(), which the simulator leaves alone), to see what costs the
 * simulation its time */
#include <time.h>
static time_t trace_t0;
static void phase(const char *what)
{
    if (!opt.trace || rank != 0) return;
    fprintf(stderr, "PHASE %-28s simulated %.6f s, real %ld s\n", what, MPI_Wtime(),
            (long)(time(NULL) - trace_t0));
}

/* ---- the data pattern (every rank can compute every rank's choice) ---- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* the number of random peers: 4, fewer when p <= 4 */
static int nrand(int p) { return p - 1 < RAND_PEERS ? p - 1 : RAND_PEERS; }

/* the nrand(p) distinct random peers of r (never r) */
static void rand_peers(int r, int p, int *out)
{
    int n = 0;
    for (uint64_t k = 0; n < nrand(p); ++k) {
        int q = (int)(mix((uint64_t)r * 1000003u + k) % (uint64_t)p);
        if (q == r) continue;
        int dup = 0;
        for (int i = 0; i < n; ++i) dup |= out[i] == q;
        if (!dup) out[n++] = q;
    }
}

/* the h-relation: to r + off[k] and from r - off[k], k < HREL_PEERS (p > 16) */
static void hrel_offsets(int p, int *off)
{
    int n = 0;
    for (uint64_t k = 0; n < HREL_PEERS; ++k) {
        int o = 1 + (int)(mix(777 + k) % (uint64_t)(p - 1));
        int dup = 0;
        for (int i = 0; i < n; ++i) dup |= off[i] == o;
        if (!dup) off[n++] = o;
    }
}

static int hrel_peers(int p) { return p - 1 < HREL_PEERS ? p - 1 : HREL_PEERS; }
static void hrel_offsets_p(int p, int *off)
{
    if (p - 1 <= HREL_PEERS) { for (int k = 0; k < p - 1; ++k) off[k] = k + 1; }
    else hrel_offsets(p, off);
}

static unsigned char val(int src, int dst, size_t i)
{
    return (unsigned char)(src * 7 + dst * 13 + (int)i);
}

static void fill(unsigned char *b, size_t n, int src, int dst)
{
    if (opt.check) for (size_t i = 0; i < n; ++i) b[i] = val(src, dst, i);
}

static void verify(const char *what, const unsigned char *b, size_t n, int src, int dst)
{
    if (!opt.check) return;
    for (size_t i = 0; i < n; ++i)
        if (b[i] != val(src, dst, i)) {
            if (bad++ < 5)
                fprintf(stderr, "scale: %s: rank %d got byte %zu from %d wrong (%u, want %u)\n",
                        what, dst, i, src, b[i], val(src, dst, i));
            return;
        }
}

/* ---- the engine (one lpf_hook section) ---------------------------------- */

static void spmd(lpf_t ctx, lpf_pid_t pid, lpf_pid_t P, lpf_args_t args)
{
    (void)args;
    const int me = (int)pid, p = (int)P, R = opt.reps;
    size_t maxmsg = 2u * (size_t)p + 64;
    phase("section entered");
    lpf_resize_memory_register(ctx, 16);
    lpf_resize_message_queue(ctx, maxmsg);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    phase("queues resized");

    /* every buffer registered in one superstep, before any row: a global
     * registration reaches every peer, which the simulator pays for
     * message by message */
    struct buf { unsigned char *src, *dst; lpf_memslot_t ss, ds; int big; } B[NROWS];
    memset(B, 0, sizeof B);
    size_t ssz[NROWS] = { 0 }, dsz[NROWS] = { 0 };
    if (opt.rows[R_RAND4]) { ssz[R_RAND4] = RAND_PEERS * RAND_BYTES; dsz[R_RAND4] = (size_t)p * RAND_BYTES; }
    if (opt.rows[R_HREL] && p > 1) {
        ssz[R_HREL] = dsz[R_HREL] = (size_t)hrel_peers(p) * HREL_BYTES;
        B[R_HREL].big = 1;
    }
    if (opt.rows[R_TOTAL]) {
        ssz[R_TOTAL] = dsz[R_TOTAL] = (size_t)p * TOTAL_BYTES;
        B[R_TOTAL].big = 1;
    }
    for (int r = 0; r < NROWS; ++r) {
        if (!ssz[r]) continue;
        B[r].src = B[r].big ? BIG_MALLOC(ssz[r]) : calloc(1, ssz[r]);
        B[r].dst = B[r].big ? BIG_MALLOC(dsz[r]) : calloc(1, dsz[r]);
        if (!B[r].src || !B[r].dst) {
            fprintf(stderr, "scale: out of memory on rank %d\n", me);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        lpf_register_local(ctx, B[r].src, ssz[r], &B[r].ss);
        lpf_register_global(ctx, B[r].dst, dsz[r], &B[r].ds);
    }
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    phase("registered");

    if (opt.rows[R_EMPTY]) {
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        double t0 = MPI_Wtime();
        for (int i = 0; i < R; ++i) lpf_sync(ctx, LPF_SYNC_DEFAULT);
        lib_t[R_EMPTY] = (MPI_Wtime() - t0) / R;
        phase("empty done");
    }

    if (opt.rows[R_RAND4]) {
        int peers[RAND_PEERS];
        rand_peers(me, p, peers);
        unsigned char *src = B[R_RAND4].src, *dst = B[R_RAND4].dst;
        lpf_memslot_t ss = B[R_RAND4].ss, ds = B[R_RAND4].ds;
        for (int k = 0; k < nrand(p); ++k) fill(src + k * RAND_BYTES, RAND_BYTES, me, peers[k]);
        double t0 = 0;
        for (int i = -1; i < R; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            for (int k = 0; k < nrand(p); ++k)
                lpf_put(ctx, ss, (size_t)k * RAND_BYTES, (lpf_pid_t)peers[k], ds,
                        (size_t)me * RAND_BYTES, RAND_BYTES, LPF_MSG_DEFAULT);
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
        }
        lib_t[R_RAND4] = (MPI_Wtime() - t0) / R;
        phase("rand4 timed");
        if (opt.check)
            for (int q = 0; q < p; ++q) {
                int pq[RAND_PEERS];
                rand_peers(q, p, pq);
                for (int k = 0; k < nrand(p); ++k)
                    if (pq[k] == me) verify("rand4", dst + (size_t)q * RAND_BYTES, RAND_BYTES, q, me);
            }
    }

    if (opt.rows[R_HREL] && p > 1) {
        const int n = hrel_peers(p);
        int off[HREL_PEERS];
        hrel_offsets_p(p, off);
        unsigned char *src = B[R_HREL].src, *dst = B[R_HREL].dst;
        lpf_memslot_t ss = B[R_HREL].ss, ds = B[R_HREL].ds;
        for (int k = 0; k < n; ++k)
            fill(src + (size_t)k * HREL_BYTES, HREL_BYTES, me, (me + off[k]) % p);
        double t0 = 0;
        for (int i = -1; i < R; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            for (int k = 0; k < n; ++k)
                lpf_put(ctx, ss, (size_t)k * HREL_BYTES, (lpf_pid_t)((me + off[k]) % p), ds,
                        (size_t)k * HREL_BYTES, HREL_BYTES, LPF_MSG_DEFAULT);
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
        }
        lib_t[R_HREL] = (MPI_Wtime() - t0) / R;
        phase("hrel timed");
        for (int k = 0; k < n; ++k)
            verify("hrel", dst + (size_t)k * HREL_BYTES, HREL_BYTES, (me - off[k] + p) % p, me);
    }

    if (opt.rows[R_TOTAL]) {
        unsigned char *src = B[R_TOTAL].src, *dst = B[R_TOTAL].dst;
        lpf_memslot_t ss = B[R_TOTAL].ss, ds = B[R_TOTAL].ds;
        for (int q = 0; q < p; ++q) fill(src + (size_t)q * TOTAL_BYTES, TOTAL_BYTES, me, q);
        double t0 = 0;
        for (int i = -1; i < R; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            for (int k = 1; k < p; ++k) {
                int q = (me + k) % p;
                lpf_put(ctx, ss, (size_t)q * TOTAL_BYTES, (lpf_pid_t)q, ds,
                        (size_t)me * TOTAL_BYTES, TOTAL_BYTES, LPF_MSG_DEFAULT);
            }
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
        }
        lib_t[R_TOTAL] = (MPI_Wtime() - t0) / R;
        phase("total timed");
        for (int q = 0; q < p; ++q)
            if (q != me) verify("total", dst + (size_t)q * TOTAL_BYTES, TOTAL_BYTES, q, me);
    }

    if (opt.rows[R_DGET]) {
        bsplib_t b;
        if (bsplib_create(ctx, pid, P, 1, 0, &b) != BSPLIB_SUCCESS) {
            fprintf(stderr, "scale: bsplib_create failed on rank %d\n", me);
            bad++;
        } else {
            unsigned char mine[DGET_BYTES], got[DGET_BYTES];
            fill(mine, DGET_BYTES, me, 0);
            bsplib_push_reg(b, mine, DGET_BYTES);
            bsplib_sync(b);
            const int q = (me + p / 2) % p;
            double sum = 0;
            for (int i = -1; i < R; ++i) {
                bsplib_sync(b);
                double t0 = MPI_Wtime();
                if (bsplib_direct_get(b, (lpf_pid_t)q, mine, 0, got, DGET_BYTES) != BSPLIB_SUCCESS) {
                    if (bad++ < 5) fprintf(stderr, "scale: bsplib_direct_get failed on rank %d\n", me);
                    break;
                }
                if (i >= 0) sum += MPI_Wtime() - t0;
            }
            lib_t[R_DGET] = sum / R;
            phase("dget timed");
            verify("dget", got, DGET_BYTES, q, 0);
            bsplib_sync(b);
            bsplib_pop_reg(b, mine);
            bsplib_sync(b);
            bsplib_destroy(b);
        }
    }

    for (int r = 0; r < NROWS; ++r) {
        if (!ssz[r]) continue;
        lpf_deregister(ctx, B[r].ss);
        lpf_deregister(ctx, B[r].ds);
        if (B[r].big) { BIG_FREE(B[r].src); BIG_FREE(B[r].dst); }
        else { free(B[r].src); free(B[r].dst); }
    }
}

/* ---- plain MPI for the same data --------------------------------------- */

static double max_over_ranks(double t)
{
    double m = 0;
    MPI_Reduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

static void report(int row, const char *variant, double t, int ok)
{
    double m = max_over_ranks(ok ? t : -1.0);
    double mn = 0, v = ok ? t : 1e300;
    MPI_Reduce(&v, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    if (mn < 0 || mn > 1e299) printf("RESULT %s %s %d na\n", row_name[row], variant, nproc);
    else printf("RESULT %s %s %d %.9f\n", row_name[row], variant, nproc, m);
    fflush(stdout);
}

/* sparse exchange through Alltoallv, Neighbor_alltoallv and Put+fence:
 * n_out blocks of `bytes` to dst[k] (from src offset k*bytes), n_in blocks
 * from from[k] (into offset k*bytes); at the destination the block of a
 * source lands at slot(dst, src) * bytes in the window */
static void sparse_rows(int row, int n_out, const int *dst, const int *dst_slot, int n_in,
        const int *from, size_t bytes)
{
    const int p = nproc, R = opt.reps;
    unsigned char *sb = BIG_MALLOC((size_t)n_out * bytes + 1);
    unsigned char *rb = BIG_MALLOC((size_t)(n_in > 0 ? n_in : 1) * bytes);
    int *sc = calloc((size_t)p, sizeof(int)), *sd = calloc((size_t)p, sizeof(int));
    int *rc = calloc((size_t)p, sizeof(int)), *rd = calloc((size_t)p, sizeof(int));
    for (int k = 0; k < n_out; ++k) { sc[dst[k]] = (int)bytes; sd[dst[k]] = (int)((size_t)k * bytes); }
    for (int k = 0; k < n_in; ++k) { rc[from[k]] = (int)bytes; rd[from[k]] = (int)((size_t)k * bytes); }
    double t0 = 0;
    if (opt.no_alltoallv) {
        if (rank == 0) printf("RESULT %s MPI_Alltoallv %d skipped\n", row_name[row], nproc);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = -1; i < R; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
        }
        report(row, "MPI_Alltoallv", (MPI_Wtime() - t0) / R, 1);
    }

    /* neighbourhood collective on a distributed graph of the real pairs */
    MPI_Comm g;
#ifdef SUPERSTEP_SMPI
    /* SMPI 3.32 stops the simulation in MPI_Dist_graph_create_adjacent
     * ("not yet implemented"): the row says "na" */
    int ok = 0;
    (void)g;
#else
    /* weights of 1 rather than MPI_UNWEIGHTED, a pointer constant that gcc
     * takes for a buffer of size 0 (-Wstringop-overread) */
    int *w_in = malloc(sizeof(int) * (size_t)(n_in + 1)), *w_out = malloc(sizeof(int) * (size_t)(n_out + 1));
    for (int k = 0; k <= n_in; ++k) w_in[k] = 1;
    for (int k = 0; k <= n_out; ++k) w_out[k] = 1;
    int ok = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n_in, from, w_in, n_out,
                 dst, w_out, MPI_INFO_NULL, 0, &g) == MPI_SUCCESS;
    free(w_in);
    free(w_out);
#endif
    double tn = 0;
    if (ok) {
        int *nsc = malloc(sizeof(int) * (size_t)(n_out + 1)), *nsd = malloc(sizeof(int) * (size_t)(n_out + 1));
        int *nrc = malloc(sizeof(int) * (size_t)(n_in + 1)), *nrd = malloc(sizeof(int) * (size_t)(n_in + 1));
        for (int k = 0; k < n_out; ++k) { nsc[k] = (int)bytes; nsd[k] = (int)((size_t)k * bytes); }
        for (int k = 0; k < n_in; ++k) { nrc[k] = (int)bytes; nrd[k] = (int)((size_t)k * bytes); }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = -1; i < R && ok; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            ok = MPI_Neighbor_alltoallv(sb, nsc, nsd, MPI_BYTE, rb, nrc, nrd, MPI_BYTE, g)
                 == MPI_SUCCESS;
        }
        tn = (MPI_Wtime() - t0) / R;
        MPI_Comm_free(&g);
        free(nsc); free(nsd); free(nrc); free(nrd);
    }
    report(row, "MPI_Neighbor_alltoallv", tn, ok);

    /* one-sided: MPI_Put into the destinations' windows, MPI_Win_fence */
    size_t wbytes = (size_t)(row == R_RAND4 ? p : (n_in > 0 ? n_in : 1)) * bytes;
    unsigned char *wb = BIG_MALLOC(wbytes);
    MPI_Win w;
    MPI_Win_create(wb, (MPI_Aint)wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_fence(0, w);
    for (int i = -1; i < R; ++i) {
        if (i == 0) t0 = MPI_Wtime();
        for (int k = 0; k < n_out; ++k)
            MPI_Put(sb + (size_t)k * bytes, (int)bytes, MPI_BYTE, dst[k],
                    (MPI_Aint)((size_t)dst_slot[k] * bytes), (int)bytes, MPI_BYTE, w);
        MPI_Win_fence(0, w);
    }
    report(row, "MPI_Put+MPI_Win_fence", (MPI_Wtime() - t0) / R, 1);
    MPI_Win_free(&w);
    BIG_FREE(wb);
    BIG_FREE(sb);
    BIG_FREE(rb);
    free(sc); free(sd); free(rc); free(rd);
}

static void mpi_rows(void)
{
    const int p = nproc, me = rank, R = opt.reps;
    double t0 = 0;
    if (opt.rows[R_EMPTY]) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = 0; i < R; ++i) MPI_Barrier(MPI_COMM_WORLD);
        report(R_EMPTY, "MPI_Barrier", (MPI_Wtime() - t0) / R, 1);
    }
    if (opt.rows[R_RAND4]) {
        int dst[RAND_PEERS], slot[RAND_PEERS];
        rand_peers(me, p, dst);
        for (int k = 0; k < nrand(p); ++k) slot[k] = me;
        int *from = malloc(sizeof(int) * (size_t)p), n_in = 0;
        for (int q = 0; q < p; ++q) {
            int pq[RAND_PEERS];
            rand_peers(q, p, pq);
            for (int k = 0; k < nrand(p); ++k) if (pq[k] == me) from[n_in++] = q;
        }
        sparse_rows(R_RAND4, nrand(p), dst, slot, n_in, from, RAND_BYTES);
        free(from);
    }
    if (opt.rows[R_HREL] && p > 1) {
        const int n = hrel_peers(p);
        int off[HREL_PEERS], dst[HREL_PEERS], from[HREL_PEERS], slot[HREL_PEERS];
        hrel_offsets_p(p, off);
        for (int k = 0; k < n; ++k) {
            dst[k] = (me + off[k]) % p;
            from[k] = (me - off[k] + p) % p;
            slot[k] = k;
        }
        sparse_rows(R_HREL, n, dst, slot, n, from, HREL_BYTES);
    }
    if (opt.rows[R_TOTAL]) {
        unsigned char *sb = BIG_MALLOC((size_t)p * TOTAL_BYTES);
        unsigned char *rb = BIG_MALLOC((size_t)p * TOTAL_BYTES);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = -1; i < R; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            MPI_Alltoall(sb, TOTAL_BYTES, MPI_BYTE, rb, TOTAL_BYTES, MPI_BYTE, MPI_COMM_WORLD);
        }
        report(R_TOTAL, "MPI_Alltoall", (MPI_Wtime() - t0) / R, 1);
        BIG_FREE(sb);
        BIG_FREE(rb);
    }
    if (opt.rows[R_DGET]) {
        unsigned char mine[DGET_BYTES] = { 0 }, got[DGET_BYTES];
        MPI_Win w;
        MPI_Win_create(mine, DGET_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        const int q = (me + p / 2) % p;
        double sum = 0;
        for (int i = -1; i < R; ++i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            MPI_Win_lock(MPI_LOCK_SHARED, q, 0, w);
            MPI_Get(got, DGET_BYTES, MPI_BYTE, q, 0, DGET_BYTES, MPI_BYTE, w);
            MPI_Win_unlock(q, w);
            if (i >= 0) sum += MPI_Wtime() - t0;
        }
        report(R_DGET, "MPI_Win_lock+MPI_Get+MPI_Win_unlock", sum / R, 1);
        MPI_Win_free(&w);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: scale [--rows empty,rand4,hrel,total,dget] [--reps N] [--check] "
            "[--lpf-only | --mpi-only] [--no-alltoallv]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    trace_t0 = time(NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nproc);
    opt.reps = 5;
    opt.lpf = opt.mpi = 1;
    for (int r = 0; r < NROWS; ++r) opt.rows[r] = 1;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            for (int r = 0; r < NROWS; ++r) opt.rows[r] = 0;
            char *list = argv[++i];
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
                int found = 0;
                for (int r = 0; r < NROWS; ++r)
                    if (strcmp(t, row_name[r]) == 0) opt.rows[r] = found = 1;
                if (!found) {
                    if (rank == 0) fprintf(stderr, "scale: unknown row '%s'\n", t), usage();
                    MPI_Finalize();
                    return 2;
                }
            }
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            opt.reps = atoi(argv[++i]);
            if (opt.reps < 1) opt.reps = 1;
        } else if (strcmp(argv[i], "--trace") == 0) {
            opt.trace = 1;
            trace_t0 = time(NULL);
        } else if (strcmp(argv[i], "--no-alltoallv") == 0) {
            opt.no_alltoallv = 1;
        } else if (strcmp(argv[i], "--check") == 0) {
            opt.check = 1;
        } else if (strcmp(argv[i], "--lpf-only") == 0) {
            opt.mpi = 0;
        } else if (strcmp(argv[i], "--mpi-only") == 0) {
            opt.lpf = 0;
        } else {
            if (rank == 0) fprintf(stderr, "scale: unknown argument '%s'\n", argv[i]), usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (opt.lpf) {
        lpf_init_t init;
        if (lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &init) != LPF_SUCCESS) {
            fprintf(stderr, "scale: lpf_mpi_initialize_with_mpicomm failed on rank %d\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        phase("engine initialised");
        if (lpf_hook(init, spmd, LPF_NO_ARGS) != LPF_SUCCESS) {
            fprintf(stderr, "scale: lpf_hook failed on rank %d\n", rank);
            bad++;
        }
        phase("section left");
        lpf_mpi_finalize(init);
        for (int r = 0; r < NROWS; ++r)
            if (opt.rows[r] && !(r == R_HREL && nproc < 2)) report(r, "superstep", lib_t[r], 1);
    }
    phase("start of MPI rows");
    if (opt.mpi) mpi_rows();
    phase("end of MPI rows");
    /* MPI_Reduce, not MPI_Allreduce: under SMPI 3.32 the first
     * MPI_Allreduce or MPI_Bcast on a communicator costs p^2 messages
     * (docs/scale.md); a rank other than 0 exits with its own count */
    int allbad = bad;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) allbad = bad;
    if (rank == 0 && opt.check)
        printf("CHECK %s (%d wrong)\n", allbad ? "FAILED" : "ok", allbad);
    phase("MPI_Finalize");
    MPI_Finalize();
    return allbad ? 1 : 0;
}
