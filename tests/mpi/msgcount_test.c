/*
 * msgcount_test empty|ring -- supersteps whose MPI messages
 * tests/mpi/msgcount.sh counts (SUPERSTEP_MPI_STATS=1): after one sync
 * that activates a registration, 20 empty syncs, or 20 syncs in which
 * every process puts 8 bytes to pid + 1 (checked on arrival). A wrong
 * value prints a FAIL line on stderr. (The mode is the SPMD function: on
 * the MPI engine only function pointers reach every rank.)
 */
#include <lpf/core.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNCS 20

struct cfg {
    int ring;
    int syncs;
};

static void run(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, struct cfg c)
{
    uint64_t x = 0, v = 0;
    lpf_memslot_t xs, vs;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, &x, sizeof x, &xs);
    lpf_register_local(ctx, &v, sizeof v, &vs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (int i = 0; i < c.syncs; ++i) {
        if (c.ring) {
            v = (uint64_t)i * 100000u + s;
            lpf_put(ctx, vs, 0, (s + 1) % p, xs, 0, sizeof v, LPF_MSG_DEFAULT);
        }
        if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
            fprintf(stderr, "FAIL: process %u of %u: sync %d failed\n", s, p, i);
            return;
        }
        const uint64_t want = (uint64_t)i * 100000u + (s + p - 1) % p;
        if (c.ring && p > 1 && x != want) {
            fprintf(stderr, "FAIL: process %u of %u: sync %d: %llu arrived, not %llu\n", s, p,
                    i, (unsigned long long)x, (unsigned long long)want);
            return;
        }
    }
}

static void spmd_empty(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    struct cfg c = { 0, SYNCS };
    run(ctx, s, p, c);
}

static void spmd_ring(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    struct cfg c = { 1, SYNCS };
    run(ctx, s, p, c);
}

int main(int argc, char **argv)
{
    const int ring = argc > 1 && strcmp(argv[1], "ring") == 0;
    if (argc < 2 || (!ring && strcmp(argv[1], "empty") != 0)) {
        fprintf(stderr, "usage: msgcount_test empty|ring\n");
        return 2;
    }
    return lpf_exec(LPF_ROOT, LPF_MAX_P, ring ? spmd_ring : spmd_empty, LPF_NO_ARGS)
            == LPF_SUCCESS ? 0 : 1;
}
