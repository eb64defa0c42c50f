/*
 * bsplib_test -- BSPlib on any engine, written without shared memory between
 * processes: every process checks what it received and the failure counts
 * are summed at process 0 with bsp_put. Main is the sequential part; the
 * SPMD function is given to bsp_init (the portable BSPlib shape). Run it
 * with `bsprun --engine mpi -n N bsplib_test` (N = 1..4) and on threads.
 * Prints one line, exits with status 1 if a check failed.
 */
#include <bsp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fails++;                                                                \
            fprintf(stderr, "FAIL %s:%d (process %u of %u): %s\n", __FILE__, __LINE__, \
                    bsp_pid(), bsp_nprocs(), #cond);                                \
        }                                                                           \
    } while (0)

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    const bsp_pid_t p = bsp_nprocs(), s = bsp_pid();
    const bsp_pid_t next = (s + 1) % p, prev = (s + p - 1) % p;

    /* buffered put and get of the same word: the get sees the old value */
    long x = 100 + s, got = -1, val = 900 + s;
    bsp_push_reg(&x, sizeof x);
    bsp_sync();
    bsp_get(next, &x, 0, &got, sizeof got);
    bsp_put(prev, &val, &x, 0, sizeof val);
    val = -1;                          /* buffered: changing it now is harmless */
    bsp_sync();
    CHECK(got == 100 + (long)next);
    CHECK(x == 900 + (long)next);

    /* many small puts into an array of every process, and a large block */
    enum { N = 1000, B = 200000 };
    int *arr = calloc((size_t)N * p, sizeof *arr);
    unsigned char *blk = malloc(B), *big = malloc((size_t)B * p);
    for (size_t i = 0; i < B; ++i) blk[i] = (unsigned char)(s * 13 + i);
    bsp_push_reg(arr, (bsp_size_t)N * p * sizeof *arr);
    bsp_push_reg(big, (bsp_size_t)B * p);
    bsp_sync();
    for (bsp_pid_t k = 0; k < p; ++k) {
        for (int i = 0; i < N; ++i) {
            int v = (int)(s * 100000 + i);
            bsp_put(k, &v, arr, ((size_t)s * N + (size_t)(N - 1 - i)) * sizeof v, sizeof v);
        }
        bsp_hpput(k, blk, big, (bsp_size_t)s * B, B);
    }
    bsp_sync();
    for (bsp_pid_t k = 0; k < p; ++k) {
        for (int i = 0; i < N; ++i)
            if (arr[(size_t)k * N + (size_t)(N - 1 - i)] != (int)(k * 100000 + i)) {
                CHECK(!"small puts");
                k = p;
                break;
            }
    }
    for (bsp_pid_t k = 0; k < p; ++k)
        for (size_t i = 0; i < B; i += 997)
            if (big[(size_t)k * B + i] != (unsigned char)(k * 13 + i)) {
                CHECK(!"large hpput");
                k = p;
                break;
            }

    /* bsp_direct_get of the neighbour's registered block */
    unsigned char peek[64];
    bsp_direct_get(next, big, (bsp_size_t)next * B + 1000, peek, sizeof peek);
    for (size_t i = 0; i < sizeof peek; ++i)
        if (peek[i] != (unsigned char)(next * 13 + 1000 + i)) {
            CHECK(!"direct get");
            break;
        }
    bsp_sync();

    /* BSMP: tagged messages to everybody, moved and counted */
    bsp_size_t ts = sizeof(uint32_t);
    bsp_set_tagsize(&ts);
    bsp_sync();
    for (bsp_pid_t k = 0; k < p; ++k)
        for (uint32_t m = 0; m < 100; ++m) {
            uint64_t payload = ((uint64_t)s << 32) | m;
            uint32_t tag = s;
            bsp_send(k, &tag, &payload, sizeof payload);
        }
    bsp_sync();
    bsp_nprocs_t np = 0;
    bsp_size_t bytes = 0;
    bsp_qsize(&np, &bytes);
    CHECK(np == 100u * p);
    CHECK(bytes == (bsp_size_t)100 * p * sizeof(uint64_t));
    uint64_t sum = 0;
    for (bsp_nprocs_t i = 0; i < np; ++i) {
        bsp_size_t st = 0;
        uint32_t tag = 0;
        bsp_get_tag(&st, &tag);
        uint64_t pl = 0;
        bsp_move(&pl, sizeof pl);
        CHECK(st == sizeof pl && (pl >> 32) == tag);
        sum += pl & 0xffffffffu;
    }
    CHECK(sum == (uint64_t)p * (99 * 100 / 2));

    /* failure counts to process 0 */
    int *all = calloc(p, sizeof *all);
    bsp_push_reg(all, p * sizeof *all);
    bsp_sync();
    bsp_put(0, &fails, all, s * sizeof(int), sizeof(int));
    bsp_sync();
    if (s == 0) {
        int t = 0;
        for (bsp_pid_t k = 0; k < p; ++k) t += all[k];
        printf("bsplib_test on %u processes: %s (%d failed checks)\n", p, t ? "FAILED" : "ok", t);
        fflush(stdout);
        fails = t;
    }
    bsp_pop_reg(all);
    bsp_pop_reg(big);
    bsp_pop_reg(arr);
    bsp_pop_reg(&x);
    bsp_sync();
    free(all);
    free(arr);
    free(blk);
    free(big);
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    spmd();
    return fails ? 1 : 0;
}
