/*
 * hybrid hook_test -- an MPI program with threads of its own hooks into one
 * hybrid section through <lpf/hybrid.h> (lpf-core.md §9.3): every rank
 * runs main (LPF_MPI_AUTO_INITIALIZE = 0) and starts T threads; each thread
 * meets the others of its rank in lpf_pthread_initialize, thread 0 also
 * makes the rank's MPI init, all call lpf_hybrid_initialize and then
 * lpf_hook twice. Run: bsprun --engine mpi --no-auto-init -n R hook_test T.
 * Exit status 0 when every check passed on this rank.
 */
#include <lpf/core.h>
#include <lpf/hybrid.h>
#include <lpf/mpi.h>
#include <lpf/pthread.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

const int LPF_MPI_AUTO_INITIALIZE = 0;

static int rank, nranks, T;
static int fails;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            pthread_mutex_lock(&fail_lock);                                         \
            fails++;                                                                \
            pthread_mutex_unlock(&fail_lock);                                       \
            fprintf(stderr, "FAIL rank %d: %s:%d: %s\n", rank, __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

struct io {
    int tid;
    int round;
};

/* a ring of puts, then every process's value at pid 0 */
static void ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    const struct io *io = args.input;
    CHECK(io && args.input_size == sizeof *io);
    CHECK(p == (lpf_pid_t)(nranks * T));
    CHECK(s == (lpf_pid_t)(rank * T + io->tid));
    long mine = (long)s * 10 + io->round, got = -1;
    long *all = calloc(p, sizeof *all);
    lpf_memslot_t ls, gs, as;
    lpf_resize_memory_register(ctx, 3);
    lpf_resize_message_queue(ctx, 2 * p);
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS);
    lpf_register_local(ctx, &mine, sizeof mine, &ls);
    lpf_register_global(ctx, &got, sizeof got, &gs);
    lpf_register_global(ctx, all, p * sizeof *all, &as);
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS);
    lpf_put(ctx, ls, 0, (s + 1) % p, gs, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_put(ctx, ls, 0, 0, as, s * sizeof mine, sizeof mine, LPF_MSG_DEFAULT);
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT) == LPF_SUCCESS);
    CHECK(got == (long)((s + p - 1) % p) * 10 + io->round);
    if (s == 0)
        for (lpf_pid_t q = 0; q < p; ++q) CHECK(all[q] == (long)q * 10 + io->round);
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gs);
    lpf_deregister(ctx, as);
    free(all);
}

static lpf_init_t mpi_init;   /* thread 0's MPI init (main sets it) */

static void *thread(void *arg)
{
    int tid = (int)(long)arg;
    lpf_init_t ti, hi;
    CHECK(lpf_pthread_initialize((lpf_pid_t)tid, (lpf_pid_t)T, &ti) == LPF_SUCCESS);
    CHECK(lpf_hybrid_initialize(ti, tid == 0 ? mpi_init : LPF_INIT_NONE, (lpf_pid_t)tid,
            (lpf_pid_t)T, (lpf_pid_t)rank, (lpf_pid_t)nranks, &hi) == LPF_SUCCESS);
    for (int round = 0; round < 2; ++round) {
        struct io io = { tid, round };
        lpf_args_t a = LPF_NO_ARGS;
        a.input = &io;
        a.input_size = sizeof io;
        CHECK(lpf_hook(hi, ring, a) == LPF_SUCCESS);
    }
    CHECK(lpf_hybrid_finalize(hi) == LPF_SUCCESS);
    CHECK(lpf_pthread_finalize(ti) == LPF_SUCCESS);
    return NULL;
}

int main(int argc, char **argv)
{
    T = argc > 1 ? atoi(argv[1]) : 2;
    if (T < 1) T = 1;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(lpf_mpi_initialize_with_mpicomm(MPI_COMM_WORLD, &mpi_init) == LPF_SUCCESS);
    pthread_t *th = malloc((size_t)T * sizeof *th);
    for (int t = 1; t < T; ++t) pthread_create(&th[t], NULL, thread, (void *)(long)t);
    thread((void *)0L);   /* the main thread is thread 0: it makes the MPI calls */
    for (int t = 1; t < T; ++t) pthread_join(th[t], NULL);
    free(th);
    CHECK(lpf_mpi_finalize(mpi_init) == LPF_SUCCESS);
    MPI_Finalize();
    if (fails == 0) printf("rank %d: hybrid hook ok (%d x %d)\n", rank, nranks, T);
    return fails ? 1 : 0;
}
