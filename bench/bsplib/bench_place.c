/*
 * bench_place: bulk puts with the buffers where a user's program may have
 * them, each beside memcpy with the same placement, in one run. Every
 * process puts one block of b bytes from its source buffer into the next
 * process's destination buffer, one superstep per put; GB/s per process
 * (b over the median superstep). memcpy: P threads each copying b bytes
 * between two buffers placed alike, at once (the slowest thread of each
 * round counts). memcpy_staged: the same threads doing by hand what a
 * bsp_put superstep must do (bsp_put copies its source when called, the
 * sync delivers the copy): each copies b bytes from its source into a
 * staging buffer of its own (plain malloc), waits for the others, then
 * copies the stage into the next thread's destination (twice the bytes
 * of memcpy, a wait between the copies, and a working set of 3b per
 * thread; the slowest thread of each round counts). Its threads are
 * pinned one per CPU, as the engine pins its processes (unpinned, two of
 * them sharing a core for a whole run halve its figure); from STAGED_MIN on
 * (below it the wait, not the copies, would make its time). Placements of
 * source and destination: malloc, page, alias, skew (bench/common/bench_place.h).
 *
 * Rows (JSON lines): {"bench":"place","op":"memcpy"|"memcpy_staged"|
 * "lpf_put"|"bsp_put", "placement":..., "block_bytes":b,
 * "rep_movsb_tunable":"default"|"set", "gbytes_per_s":..., "ratio_to_memcpy",
 * and for bsp_put "ratio_to_staged"} (the puts' ratios are over the memcpy
 * and memcpy_staged rows of the same placement and size, measured right
 * before them).
 * bench/report.sh runs it twice, the second time with
 * GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4294967295 (glibc's
 * memcpy without `rep movsb`: its fast path for every placement).
 *
 * Usage: bench_place [-p P] [--quick] [--placement NAME] [--size BYTES]
 * Public headers only (pthread engine).
 */
#define _GNU_SOURCE
#include <bsp.h>
#include <lpf/core.h>

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/bench_baseline.h"
#include "../common/bench_place.h"

static unsigned P = 2;
static int quick;

/* memcpy_staged from this size on */
#define STAGED_MIN ((size_t)1 << 20)

static int reps_for(size_t b)
{
    size_t r = ((size_t)(quick ? 16 : 128) << 20) / b;
    if (r < 10) r = 10;
    if (r > 4000) r = 4000;
    return (int)r;
}

/* ------------------------------------------------------------------ */
/* memcpy with the same placement, P threads at once                    */
/* ------------------------------------------------------------------ */

struct mc_arg {
    struct spin_barrier *bar;
    enum place pl;
    size_t b;
    int reps;
    int staged;       /* memcpy_staged: via a stage into the next thread's dst */
    unsigned i;       /* thread number */
    char **dsts;      /* [P]: every thread's destination (staged) */
    double *t;
};

/* pin the calling thread to the i-th CPU it may run on (modulo their number) */
static void pin_to(unsigned i)
{
    cpu_set_t m;
    if (sched_getaffinity(0, sizeof m, &m) != 0 || CPU_COUNT(&m) == 0) return;
    unsigned k = i % (unsigned)CPU_COUNT(&m);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &m)) continue;
        if (k-- == 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
    }
}

static void *mc_main(void *v)
{
    struct mc_arg *a = v;
    if (a->staged) pin_to(a->i);
    void *bs, *bd;
    char *src = place_alloc(a->pl, 0, a->b, &bs), *dst = place_alloc(a->pl, 1, a->b, &bd);
    char *stage = a->staged ? malloc(a->b) : NULL;
    if (!src || !dst || (a->staged && !stage)) {
        fprintf(stderr, "bench_place: out of memory (%zu bytes)\n", a->b);
        exit(1);
    }
    memset(src, 1, a->b);
    memset(dst, 2, a->b);
    if (stage) memset(stage, 3, a->b);
    a->dsts[a->i] = dst;   /* read by the previous thread after the next barrier */
    char *to = dst;
    void *(*volatile cp)(void *, const void *, size_t) = memcpy;
    for (int r = -2; r < a->reps; ++r) {
        spin_barrier_wait(a->bar);
        double t0 = now();
        if (a->staged) {
            cp(stage, src, a->b);
            spin_barrier_wait(a->bar);
            to = a->dsts[(a->i + 1) % P];
        }
        cp(to, a->staged ? stage : src, a->b);
        if (r >= 0) a->t[r] = now() - t0;
    }
    spin_barrier_wait(a->bar);   /* nobody writes our dst any more */
    free(stage);
    free(bs);
    free(bd);
    return NULL;
}

static double run_memcpy(enum place pl, size_t b, int reps, int staged)
{
    struct spin_barrier bar = { P, 0, 0 };
    pthread_t *th = malloc(sizeof *th * P);
    struct mc_arg *a = malloc(sizeof *a * P);
    char **dsts = malloc(sizeof *dsts * P);
    for (unsigned i = 0; i < P; ++i) {
        a[i] = (struct mc_arg){ &bar, pl, b, reps, staged, i, dsts,
            malloc(sizeof(double) * (size_t)reps) };
        pthread_create(&th[i], NULL, mc_main, &a[i]);
    }
    double *slow = malloc(sizeof(double) * (size_t)reps);
    for (unsigned i = 0; i < P; ++i) pthread_join(th[i], NULL);
    for (int r = 0; r < reps; ++r) {
        slow[r] = 0;
        for (unsigned i = 0; i < P; ++i) if (a[i].t[r] > slow[r]) slow[r] = a[i].t[r];
    }
    double m = median(slow, reps);
    for (unsigned i = 0; i < P; ++i) free(a[i].t);
    free(slow);
    free(a);
    free(dsts);
    free(th);
    return m;
}

/* ------------------------------------------------------------------ */
/* lpf_put and bsp_put                                                  */
/* ------------------------------------------------------------------ */

static struct {
    enum place pl;
    size_t b;
    int reps;
    double seconds;   /* out: median superstep (pid 0) */
    int bad;
} X;

static void check(const char *dst, unsigned from)
{
    const char want = (char)(from + 1);
    if (dst[0] != want || dst[X.b / 2] != want || dst[X.b - 1] != want)
        __atomic_store_n(&X.bad, 1, __ATOMIC_RELAXED);
}

static void lpf_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    const size_t b = X.b;
    void *bs, *bd;
    char *src = place_alloc(X.pl, 0, b, &bs), *dst = place_alloc(X.pl, 1, b, &bd);
    memset(src, (int)s + 1, b);
    memset(dst, 0, b);
    lpf_memslot_t ss, ds;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, src, b, &ss);
    lpf_register_global(ctx, dst, b, &ds);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    double *t = malloc(sizeof(double) * (size_t)X.reps);
    const lpf_pid_t next = (s + 1) % p;
    for (int r = -2; r < X.reps; ++r) {
        double t0 = now();
        lpf_put(ctx, ss, 0, next, ds, 0, b, LPF_MSG_DEFAULT);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (r >= 0) t[r] = now() - t0;
    }
    check(dst, (s + p - 1) % p);
    if (s == 0) X.seconds = median(t, X.reps);
    lpf_deregister(ctx, ss);
    lpf_deregister(ctx, ds);
    free(t);
    free(bs);
    free(bd);
}

static void bsp_spmd(void)
{
    bsp_begin(P);
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    const size_t b = X.b;
    void *bs, *bd;
    char *src = place_alloc(X.pl, 0, b, &bs), *dst = place_alloc(X.pl, 1, b, &bd);
    memset(src, (int)s + 1, b);
    memset(dst, 0, b);
    bsp_push_reg(dst, (bsp_size_t)b);
    bsp_sync();
    double *t = malloc(sizeof(double) * (size_t)X.reps);
    const unsigned next = (s + 1) % p;
    for (int r = -2; r < X.reps; ++r) {
        double t0 = now();
        bsp_put(next, src, dst, 0, (bsp_size_t)b);
        bsp_sync();
        if (r >= 0) t[r] = now() - t0;
    }
    check(dst, (s + p - 1) % p);
    if (s == 0) X.seconds = median(t, X.reps);
    bsp_pop_reg(dst);
    bsp_sync();
    free(t);
    free(bs);
    free(bd);
    bsp_end();
}

static double run_put(int bsp, enum place pl, size_t b, int reps)
{
    X.pl = pl;
    X.b = b;
    X.reps = reps;
    X.bad = 0;
    if (bsp) {
        bsp_init(bsp_spmd, 0, NULL);
        bsp_spmd();
    } else if (lpf_exec(LPF_ROOT, P, lpf_spmd, LPF_NO_ARGS) != LPF_SUCCESS) {
        fprintf(stderr, "bench_place: lpf_exec failed (p %u)\n", P);
        exit(1);
    }
    if (X.bad) {
        fprintf(stderr, "bench_place: wrong data (%s, %s, b %zu)\n", bsp ? "bsp_put" : "lpf_put",
                place_name[pl], b);
        exit(1);
    }
    return X.seconds;
}

static const size_t sizes[] = { (size_t)4 << 10, (size_t)16 << 10, (size_t)64 << 10,
    (size_t)256 << 10, (size_t)1 << 20, (size_t)4 << 20, (size_t)8 << 20 };

int main(int argc, char **argv)
{
    const char *only_place = NULL;
    size_t only_size = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) P = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--placement") == 0 && i + 1 < argc) only_place = argv[++i];
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) only_size = (size_t)atoll(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-p P] [--quick] [--placement malloc|page|alias|skew] [--size BYTES]\n",
                    argv[0]);
            return 2;
        }
    }
    if (P < 2) {
        fprintf(stderr, "bench_place: -p %u: needs at least 2 processes\n", P);
        return 2;
    }
    const char *env = getenv("GLIBC_TUNABLES");
    const char *tun = env && strstr(env, "x86_rep_movsb_threshold") ? "set" : "default";
    int found = only_place == NULL;
    for (int pl = 0; pl < PL_N; ++pl) {
        if (only_place && strcmp(only_place, place_name[pl]) != 0) continue;
        found = 1;
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
            const size_t b = sizes[k];
            if (only_size && b != only_size) continue;
            const int reps = reps_for(b);
            double tm[2] = { 0, 0 };
            for (int staged = 0; staged < 1 + (b >= STAGED_MIN); ++staged) {
                tm[staged] = run_memcpy((enum place)pl, b, reps, staged);
                printf("{\"bench\":\"place\",\"op\":\"%s\",\"p\":%u,\"placement\":\"%s\","
                       "\"block_bytes\":%zu,\"rep_movsb_tunable\":\"%s\",\"gbytes_per_s\":%.3f}\n",
                       staged ? "memcpy_staged" : "memcpy", P, place_name[pl], b, tun,
                       b / tm[staged] * 1e-9);
            }
            for (int bsp = 0; bsp < 2; ++bsp) {
                const double t = run_put(bsp, (enum place)pl, b, reps);
                printf("{\"bench\":\"place\",\"op\":\"%s\",\"p\":%u,\"placement\":\"%s\","
                       "\"block_bytes\":%zu,\"rep_movsb_tunable\":\"%s\",\"gbytes_per_s\":%.3f,"
                       "\"ratio_to_memcpy\":%.3f",
                       bsp ? "bsp_put" : "lpf_put", P, place_name[pl], b, tun, b / t * 1e-9, tm[0] / t);
                if (bsp && tm[1] > 0) printf(",\"ratio_to_staged\":%.3f", tm[1] / t);
                printf("}\n");
            }
            fflush(stdout);
        }
    }
    if (!found) {
        fprintf(stderr, "bench_place: unknown placement '%s' (malloc, page, alias, skew)\n", only_place);
        return 2;
    }
    return 0;
}
