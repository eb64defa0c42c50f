/*
 * A BSPlib program for the profiler's source-line test and for looking at
 * the report (tests/prof/CMakeLists.txt; compiled with -g). On P processes:
 * STEPS supersteps of a little work and a small put to the next process,
 * every 50th ended by the bsp_sync marked SLOW-SYNC, after which process 0
 * alone works longer; one superstep, ended by the bsp_sync marked BIG-SYNC,
 * puts 4 MiB. Every other superstep ends at the bsp_sync marked LOOP-SYNC.
 *   PROF_LINES_STEPS=STEPS prof_lines   (default 200; an environment variable
 *   rather than an argument: on MPI only process 0 runs main)
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* per process: on the pthread engine the processes are threads */
static _Thread_local int steps = 200;
static _Thread_local volatile double sink;
/* different code after each sync, so that the compiler keeps three calls */
static _Thread_local volatile int nslow, nbig, nloop;

static void work(long n)
{
    double x = 0;
    for (long i = 0; i < n; ++i) x += (double)i * 1e-9;
    sink = x;
}

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    const char *e = getenv("PROF_LINES_STEPS");
    if (e && atoi(e) > 0) steps = atoi(e);
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    const size_t big = (size_t)4 << 20;
    char *buf = calloc(1, big), *in = calloc(1, big);
    if (!buf || !in) bsp_abort("out of memory");
    bsp_push_reg(in, big);
    bsp_sync();
    for (int k = 0; k < steps; ++k) {
        work(2000);
        bsp_put((s + 1) % p, buf, in, 0, 64);
        if (k % 50 == 25) {
            if (s == 0) work(2000000);
            bsp_sync(); /* SLOW-SYNC */
            nslow++;
        } else if (k == steps / 2) {
            bsp_put((s + 1) % p, buf, in, 0, big);
            bsp_sync(); /* BIG-SYNC */
            nbig += 2;
        } else {
            bsp_sync(); /* LOOP-SYNC */
            nloop += 3;
        }
    }
    bsp_pop_reg(in);
    bsp_sync();
    free(buf);
    free(in);
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    spmd();
    printf("ok\n");
    return 0;
}
