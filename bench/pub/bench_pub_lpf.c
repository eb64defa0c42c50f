/* The <lpf/collectives.h> baseline of `bench_pub coll` (see bench_pub.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lpf/collectives.h>
#include <lpf/core.h>

#include "app_util.h"
#include "bench_pub.h"

struct lpf_job {
    int bytes, iters;
    double t;
};

static void add_doubles(size_t n, const void *combine, void *into)
{
    const double *a = combine;
    double *b = into;
    for (size_t i = 0; i < n; i++)
        b[i] += a[i];
}

#define CHECK(x)                                                                 \
    do {                                                                         \
        if ((x) != LPF_SUCCESS) {                                                \
            fprintf(stderr, "bench_pub (lpf baseline): %s failed\n", #x);        \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    /* only pid 0 has the job: it puts the parameters to the others */
    int par[2] = { 0, 0 };
    CHECK(lpf_resize_memory_register(ctx, 8));
    CHECK(lpf_resize_message_queue(ctx, 4 * (size_t)p + 8));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_memslot_t ps;
    CHECK(lpf_register_global(ctx, par, sizeof par, &ps));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s == 0) {
        const struct lpf_job *in = args.input;
        par[0] = in->bytes;
        par[1] = in->iters;
        for (lpf_pid_t q = 1; q < p; q++)
            CHECK(lpf_put(ctx, ps, 0, q, ps, 0, sizeof par, LPF_MSG_DEFAULT));
    }
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(lpf_deregister(ctx, ps));
    const int bytes = par[0], iters = par[1];
    const lpf_pid_t h = p / 2 > 0 ? p / 2 : 1;
    const size_t count = bytes / sizeof(double) > 0 ? bytes / sizeof(double) : 1;
    char *src = malloc((size_t)bytes), *dst = malloc((size_t)bytes);
    double *x = malloc(count * sizeof *x);
    if (!src || !dst || !x)
        exit(1);
    memset(src, (int)s + 1, (size_t)bytes);
    for (size_t i = 0; i < count; i++)
        x[i] = (double)s;
    lpf_memslot_t ss, ds, xs;
    CHECK(lpf_register_global(ctx, src, (size_t)bytes, &ss));
    CHECK(lpf_register_global(ctx, dst, (size_t)bytes, &ds));
    CHECK(lpf_register_global(ctx, x, count * sizeof *x, &xs));
    lpf_coll_t coll;
    CHECK(lpf_collectives_init_strided(ctx, s, p, 0, h, 1, 0, sizeof(double), count * sizeof(double), &coll));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const double t0 = app_now();
    for (int it = 0; it < iters; it++) {
        CHECK(lpf_broadcast(coll, ss, ds, (size_t)bytes, 0));
        CHECK(lpf_combine(coll, x, xs, count, sizeof(double), add_doubles, h - 1));
    }
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (s == 0)
        ((struct lpf_job *)args.output)->t = app_now() - t0;
    CHECK(lpf_collectives_destroy(coll));
    CHECK(lpf_deregister(ctx, xs));
    CHECK(lpf_deregister(ctx, ds));
    CHECK(lpf_deregister(ctx, ss));
    free(x);
    free(dst);
    free(src);
}

double bench_pub_lpf_coll(int P, int bytes, int iters)
{
    struct lpf_job job = { bytes, iters, -1 };
    lpf_args_t args = { &job, sizeof job, &job, sizeof job, NULL, 0 };
    CHECK(lpf_exec(LPF_ROOT, (lpf_pid_t)P, spmd, args));
    return job.t / iters;
}
