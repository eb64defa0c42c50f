/*
 * A program with a known h-relation per superstep, for the profiler's
 * tests (tests/prof/CMakeLists.txt). Run on P processes (LPF_MAX_PROCS or
 * bsprun -n P); every section does, with s = pid:
 *   step 0: register (no data)
 *   step 1: put 100*(s+1) bytes to s+1 (one put)         h = 100*P  (P > 1)
 *   step 2: two gets of 32 bytes from s+1                h = 64     (P > 1)
 *   step 3: every s > 0 puts 1000 bytes to 0, in 10 puts h = 1000*(P-1)
 *   step 4: nothing                                      h = 0
 * then a nested section of 2 processes on pid 0 with one put of 8 bytes
 * (with "nested" as argument), and a second top-level section (with
 * "twice").
 */
#include <lpf/core.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void nested(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    char buf[16] = { 0 };
    lpf_memslot_t m;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, buf, sizeof buf, &m);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (p > 1 && s == 0) lpf_put(ctx, m, 0, 1, m, 8, 8, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_deregister(ctx, m);
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    static _Thread_local char buf[4 * 1024 * 16 + 100 * 64];
    lpf_memslot_t m;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, 64);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* not counted: the resize */
    lpf_register_global(ctx, buf, sizeof buf, &m);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* step "0" */
    lpf_pid_t next = (s + 1) % p;
    if (p > 1) lpf_put(ctx, m, 0, next, m, 8192, 100 * (s + 1), LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* step "1" */
    if (p > 1) {
        lpf_get(ctx, next, m, 0, m, 16384, 32, LPF_MSG_DEFAULT);
        lpf_get(ctx, next, m, 32, m, 16384 + 32, 32, LPF_MSG_DEFAULT);
    }
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* step "2" */
    if (s > 0)
        for (int i = 0; i < 10; ++i)
            lpf_put(ctx, m, 0, 0, m, 20000 + 1000 * s + 100 * i, 100, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* step "3" */
    lpf_sync(ctx, LPF_SYNC_DEFAULT);            /* step "4" */
    if (args.input_size && s == 0) {
        lpf_err_t rc = lpf_exec(ctx, 2, nested, LPF_NO_ARGS);
        if (rc != LPF_SUCCESS) { fprintf(stderr, "nested exec failed\n"); abort(); }
    }
    lpf_deregister(ctx, m);
}

int main(int argc, char **argv)
{
    int nest = 0, twice = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "nested")) nest = 1;
        if (!strcmp(argv[i], "twice")) twice = 1;
    }
    char flag = 1;
    lpf_args_t a = LPF_NO_ARGS;
    if (nest) { a.input = &flag; a.input_size = 1; }
    for (int k = 0; k < 1 + twice; ++k)
        if (lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, a) != LPF_SUCCESS) return 1;
    printf("ok\n");
    return 0;
}
