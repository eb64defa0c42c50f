/*
 * globals_prog MODE N: globals that main sets (checked mode on the MPI and
 * hybrid engines names them; globals.sh runs the cases).
 *   global N   a prefix sum of N elements per process whose N main parsed
 *              from argv into a global: wrong on every process but 0 on
 *              MPI without checked mode
 *   pointer N  a table main allocated, reached through a global pointer
 *              (NULL on the other ranks)
 *   sent N     the correct program: process 0 parses N and sends it in the
 *              first superstep (main is the SPMD section: the other
 *              processes enter main with argc == 0)
 *   lpf N      LPF: N parsed by main into a global, read by every process
 *   lpfsent N  LPF, correct: N reaches process 0 in lpf_args_t's input and
 *              is lpf_put to the others in the first superstep
 * Every process prints "globals: process s of p: W wrong of N".
 */
#include <bsp.h>
#include <lpf/core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n_elems;        /* set by main in mode global */
static long elems_lpf;      /* set by main in mode lpf */
static double *table;       /* allocated by main in mode pointer */
#define TABLE 1000

/* elements s*n+1 .. s*n+n; their inclusive prefix sums, checked */
static void prefix_sum(long n)
{
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    double *tot = calloc(p, sizeof *tot);
    if (!x || !tot) bsp_abort("globals: out of memory");
    double run = 0;
    for (long i = 0; i < n; ++i) {
        run += (double)((long)s * n + i + 1);
        x[i] = run;
    }
    bsp_push_reg(tot, (bsp_size_t)(p * sizeof *tot));
    bsp_sync();
    for (unsigned q = 0; q < p; ++q)
        bsp_put(q, &run, tot, (bsp_size_t)(s * sizeof run), sizeof run);
    bsp_sync();
    double before = 0;
    for (unsigned q = 0; q < s; ++q) before += tot[q];
    long wrong = 0;
    for (long i = 0; i < n; ++i) {
        double g = (double)((long)s * n + i + 1);
        if (x[i] + before != g * (g + 1) / 2) wrong++;
    }
    /* a process that saw N = 0 has nothing to check: all of its N are wrong */
    printf("globals: process %u of %u: %ld wrong of %ld\n", s, p, n > 0 ? wrong : -1, n);
    bsp_pop_reg(tot);
    bsp_sync();
    free(x);
    free(tot);
}

static void spmd_global(void)
{
    bsp_begin(bsp_nprocs());
    prefix_sum(n_elems);
    bsp_end();
}

static void spmd_pointer(void)
{
    bsp_begin(bsp_nprocs());
    double sum = 0;
    for (int i = 0; i < TABLE; ++i) sum += table[i];
    long n = (long)(sum / TABLE);
    prefix_sum(n);
    bsp_end();
}

static void say_lpf(lpf_pid_t s, lpf_pid_t p, long n)
{
    printf("globals: process %u of %u: %ld wrong of %ld\n", s, p, n > 0 ? 0L : -1L, n);
}

static void spmd_lpf(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)ctx; (void)a;
    say_lpf(s, p, elems_lpf);
}

static void spmd_lpfsent(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    long n = 0;
    if (s == 0 && a.input_size == sizeof n) memcpy(&n, a.input, sizeof n);
    lpf_memslot_t slot = LPF_INVALID_MEMSLOT;
    if (lpf_resize_memory_register(ctx, 1) != LPF_SUCCESS
            || lpf_resize_message_queue(ctx, p) != LPF_SUCCESS
            || lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS
            || lpf_register_global(ctx, &n, sizeof n, &slot) != LPF_SUCCESS
            || lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
        printf("globals: FAIL set-up\n");
        return;
    }
    if (s == 0)
        for (lpf_pid_t q = 1; q < p; ++q)
            lpf_put(ctx, slot, 0, q, slot, 0, sizeof n, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_deregister(ctx, slot);
    say_lpf(s, p, n);
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "lpf") == 0) {
        elems_lpf = atol(argv[2]);
        return lpf_exec(LPF_ROOT, LPF_MAX_P, spmd_lpf, LPF_NO_ARGS) == LPF_SUCCESS ? 0 : 1;
    }
    if (argc > 2 && strcmp(argv[1], "lpfsent") == 0) {
        long n = atol(argv[2]);
        lpf_args_t args = { &n, sizeof n, NULL, 0, NULL, 0 };
        return lpf_exec(LPF_ROOT, LPF_MAX_P, spmd_lpfsent, args) == LPF_SUCCESS ? 0 : 1;
    }
    if (argc > 2 && strcmp(argv[1], "global") == 0) {
        bsp_init(spmd_global, argc, argv);
        n_elems = atol(argv[2]);
        spmd_global();
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "pointer") == 0) {
        bsp_init(spmd_pointer, argc, argv);
        table = malloc(TABLE * sizeof *table);
        if (!table) return 2;
        for (int i = 0; i < TABLE; ++i) table[i] = (double)atol(argv[2]);
        spmd_pointer();
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "sent") != 0) {
        fprintf(stderr, "usage: globals_prog global|pointer|sent N\n");
        return 2;
    }
    /* sent: main is the SPMD section */
    bsp_begin(bsp_nprocs());
    long n = argc > 2 ? atol(argv[2]) : 0;
    bsp_push_reg(&n, sizeof n);
    bsp_sync();
    if (bsp_pid() == 0)
        for (unsigned q = 1; q < bsp_nprocs(); ++q) bsp_put(q, &n, &n, 0, sizeof n);
    bsp_sync();
    bsp_pop_reg(&n);
    prefix_sum(n);
    bsp_end();
    return 0;
}
