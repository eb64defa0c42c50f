/*
 * Figures of LPF's extensions (docs/lpf-extensions.md):
 *   bench_lpfext zero P [N]   ordinary lpf_sync superstep with one 8-byte put
 *                             per process vs a zero-cost superstep with the
 *                             same put, N supersteps each (µs per superstep)
 *   bench_lpfext tag P [N]    P = 4: processes 0 and 1 make N tagged syncs
 *                             (one 8-byte put each) while 2 and 3 compute;
 *                             P = 2: N ordinary syncs with the same put
 *   bench_lpfext tagall 2 [N] P = 2, both active: N tagged syncs
 * Run on threads with LPF_MAX_PROCS >= P, on MPI under bsprun --engine mpi
 * -n P (the ranks other than 0 learn the mode from BENCH_LPFEXT=mode:N).
 */
#include <lpf/core.h>
#include <lpf/tags.h>
#include <lpf/zero.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char mode[16];
static long N = 20000;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t P, lpf_args_t args)
{
    (void)args;
    if (!mode[0]) {
        const char *e = getenv("BENCH_LPFEXT");
        if (!e) return;
        sscanf(e, "%15[^:]:%ld", mode, &N);
    }
    uint64_t out = s, in = 0;
    lpf_memslot_t os, is;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 4);
    lpf_resize_tag_register(ctx, 1);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &out, 8, &os);
    lpf_register_global(ctx, &in, 8, &is);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    const lpf_pid_t nx = (s + 1) % P;
    if (!strcmp(mode, "zero")) {
        lpf_sync_attr_t za;
        lpf_zero_create_sattr(ctx, &za);
        lpf_zero_set_expected(ctx, 1, 1, za);
        double best_o = 1e30, best_z = 1e30;
        for (int rep = 0; rep < 3; ++rep) {
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
            double t0 = now();
            for (long k = 0; k < N; ++k) {
                lpf_put(ctx, os, 0, nx, is, 0, 8, LPF_MSG_DEFAULT);
                if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) { fprintf(stderr, "sync failed\n"); exit(1); }
            }
            double t1 = now();
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
            double t2 = now();
            for (long k = 0; k < N; ++k) {
                lpf_put(ctx, os, 0, nx, is, 0, 8, LPF_MSG_DEFAULT);
                lpf_sync(ctx, za);
            }
            double t3 = now();
            if (t1 - t0 < best_o) best_o = t1 - t0;
            if (t3 - t2 < best_z) best_z = t3 - t2;
        }
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (s == 0)
            printf("zero p=%u: ordinary superstep %.3f us, zero-cost superstep %.3f us, "
                    "ratio %.2f\n", P, 1e6 * best_o / N, 1e6 * best_z / N, best_z / best_o);
        lpf_zero_destroy_sattr(ctx, za);
    } else {
        lpf_tag_t t;
        lpf_tag_create(ctx, s < 2, &t);
        lpf_msg_attr_t ma;
        lpf_sync_attr_t sa;
        lpf_tag_create_mattr(ctx, &ma);
        lpf_tag_create_sattr(ctx, &sa);
        lpf_tag_set_mattr(ctx, t, ma);
        lpf_tag_set_sattr(ctx, t, sa);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        double t0 = now(), t1;
        volatile double x = 1.0;
        if (P == 2 && !strcmp(mode, "tagall")) {
            /* the same pair, tagged: the cost of the mechanism alone */
            for (long k = 0; k < N; ++k) {
                lpf_put(ctx, os, 0, nx, is, 0, 8, ma);
                lpf_sync(ctx, sa);
            }
            t1 = now();
        } else if (P == 2) {
            for (long k = 0; k < N; ++k) {
                lpf_put(ctx, os, 0, nx, is, 0, 8, LPF_MSG_DEFAULT);
                lpf_sync(ctx, LPF_SYNC_DEFAULT);
            }
            t1 = now();
        } else if (s < 2) {
            for (long k = 0; k < N; ++k) {
                lpf_put(ctx, os, 0, 1 - s, is, 0, 8, ma);
                lpf_sync(ctx, sa);
            }
            t1 = now();
        } else {
            /* work for about 2 s: the pair does not wait for this; with
             * fewer cores than processes the work sleeps, so that the
             * pair's figure is not the scheduler's */
            const int busy = sysconf(_SC_NPROCESSORS_ONLN) >= (long)P;
            while (now() - t0 < 2.0) {
                if (busy) for (int i = 0; i < 100000; ++i) x = x * 1.0000001 + 1e-9;
                else usleep(1000);
            }
            t1 = now();
        }
        if (s == 0)
            printf("tag p=%u: %s: %.3f us per superstep (%ld supersteps in %.3f s)\n", P,
                    P > 2 ? "tagged sync of 2 while the others work 2 s"
                    : !strcmp(mode, "tagall") ? "tagged sync of both" : "ordinary sync",
                    1e6 * (t1 - t0) / N, N, t1 - t0);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        lpf_tag_destroy(ctx, t);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: bench_lpfext zero|tag P [N]\n"); return 2; }
    snprintf(mode, sizeof mode, "%s", argv[1]);
    lpf_pid_t P = (lpf_pid_t)atoi(argv[2]);
    if (argc > 3) N = atol(argv[3]);
    return lpf_exec(LPF_ROOT, P, spmd, LPF_NO_ARGS) == LPF_SUCCESS ? 0 : 1;
}
