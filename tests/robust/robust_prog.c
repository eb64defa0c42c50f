/*
 * robust_prog MODE -- one program per behaviour of issue 9 (faults, stuck
 * supersteps, ended contexts, messages); robust.sh runs it on an engine
 * and checks the exit status and the line on stderr.
 *
 *   exit3      BSPlib: process 1 % p calls exit(3) after 3 supersteps while
 *              the others keep syncing: the job ends with status 3
 *   stuck      LPF: process 1 % p computes for STUCK_S seconds (env, default
 *              3) before its 3rd sync; the others wait (watchdog)
 *   stuckever  the same, for ever
 *   endedctx   lpf_sync with the lpf_t of an lpf_exec that has returned
 *   badslot    lpf_put to a slot number no registration returned
 *   tagsize    bsp_set_tagsize with more bytes than any memory
 *   sendoom    bsp_send of a payload no memory can buffer
 *   putoom     bsp_put of an area no memory can buffer
 *   abort      lpf_abort in process 1 % p
 *   hello      every process prints one line (engine names, env warnings)
 */
#include <bsp.h>
#include <lpf/abort.h>
#include <lpf/core.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *mode;
static lpf_t saved_ctx;

/* On MPI only rank 0 runs main: the others read the mode from their
 * command line, which is the same on every rank. */
static const char *the_mode(void)
{
    if (mode) return mode;
    static char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    size_t first = strlen(buf);
    mode = first + 1 < n ? buf + first + 1 : "";
    return mode;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void bsp_spmd(void)
{
    bsp_begin(bsp_nprocs());
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    the_mode();
    if (strcmp(mode, "exit3") == 0) {
        for (int i = 0; i < 3; ++i) bsp_sync();
        if (s == 1 % p) {
            fprintf(stderr, "process %u of %u calls exit(3)\n", s, p);
            exit(3);
        }
        for (;;) bsp_sync();
    } else if (strcmp(mode, "tagsize") == 0) {
        bsp_size_t t = (bsp_size_t)1 << 60;
        bsp_set_tagsize(&t);
    } else if (strcmp(mode, "sendoom") == 0) {
        char c = 0;
        bsp_send((s + 1) % p, NULL, &c, (bsp_size_t)1 << 50);
    } else if (strcmp(mode, "putoom") == 0) {
        static char area[64];
        const bsp_size_t huge = (bsp_size_t)1 << 50;
        bsp_push_reg(area, huge);   /* never touched beyond 64 bytes: the buffer fails first */
        bsp_sync();
        bsp_put((s + 1) % p, area, area, 0, huge);
    } else if (strcmp(mode, "hello") == 0) {
        printf("hello from %u of %u\n", s, p);
    }
    bsp_sync();
    bsp_end();
}

static void lpf_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    if (s == 0) saved_ctx = ctx;   /* pid 0 runs on the caller's thread */
    the_mode();
    if (strcmp(mode, "stuck") == 0 || strcmp(mode, "stuckever") == 0) {
        const char *v = getenv("STUCK_S");
        double secs = v ? atof(v) : 3.0;
        for (int i = 0; i < 4; ++i) {
            if (i == 2 && s == 1 % p) {
                double t0 = now_s();
                volatile unsigned long spin = 0;
                while (strcmp(mode, "stuckever") == 0 || now_s() - t0 < secs) spin++;
            }
            if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
                fprintf(stderr, "process %u: lpf_sync failed\n", s);
                return;
            }
        }
        if (s == 0) printf("stuck: done\n");
    } else if (strcmp(mode, "badslot") == 0) {
        lpf_resize_message_queue(ctx, 4);
        lpf_resize_memory_register(ctx, 4);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        static char buf[8];
        lpf_memslot_t src;
        lpf_register_local(ctx, buf, sizeof buf, &src);
        lpf_put(ctx, src, 0, (s + 1) % p, (lpf_memslot_t)5, 0, 1, LPF_MSG_DEFAULT);
    } else if (strcmp(mode, "abort") == 0) {
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        if (s == 1 % p) lpf_abort(ctx);
        for (;;) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: robust_prog MODE\n");
        return 2;
    }
    mode = argv[1];
    if (!strcmp(mode, "exit3") || !strcmp(mode, "tagsize") || !strcmp(mode, "sendoom")
            || !strcmp(mode, "putoom") || !strcmp(mode, "hello")) {
        bsp_init(bsp_spmd, argc, argv);
        bsp_spmd();
        return 0;
    }
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, lpf_spmd, LPF_NO_ARGS);
    if (strcmp(mode, "endedctx") == 0) {
        printf("exec returned %d; now syncing its context\n", (int)rc);
        fflush(stdout);
        lpf_sync(saved_ctx, LPF_SYNC_DEFAULT);
        printf("FAILED: lpf_sync of an ended context returned\n");
        return 1;
    }
    return rc == LPF_SUCCESS ? 0 : 1;
}
