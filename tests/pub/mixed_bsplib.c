/* Item 3: the BSPlib translation unit of a program that also has a PUB one
 * (mixed.cpp). It includes <bsp.h> only; its run sums the pids with bsp_put
 * into pid 0 and a ring of bsp_send messages. */
#include <bsp.h>

#include <stdlib.h>

#include "pub/mixed_bsplib.h"

static int bsplib_sum[16];
static int bsplib_ring_ok[16];

static void bsplib_body(void *arg)
{
    (void)arg;
    bsp_pid_t p = bsp_nprocs(), s = bsp_pid();
    int got[16] = { 0 };
    bsp_push_reg(got, sizeof got);
    bsp_size_t tag = 0;
    bsp_set_tagsize(&tag);
    bsp_sync();
    int mine = (int)s + 1;
    bsp_put(0, &mine, got, s * sizeof(int), sizeof mine);
    bsp_send((s + 1) % p, NULL, &mine, sizeof mine);
    bsp_sync();
    bsp_nprocs_t n = 0;
    bsp_size_t bytes = 0;
    bsp_qsize(&n, &bytes);
    int v = -1;
    if (n == 1) bsp_move(&v, sizeof v);
    bsplib_ring_ok[s] = n == 1 && v == (int)((s + p - 1) % p) + 1;
    if (s == 0) {
        int t = 0;
        for (bsp_pid_t i = 0; i < p; ++i) t += got[i];
        bsplib_sum[0] = t;
    }
    bsp_pop_reg(got);
    bsp_sync();
    bsp_end();
}

int mixed_bsplib_run(unsigned P)
{
    if (P > 16) abort();
    for (unsigned i = 0; i < 16; ++i) bsplib_ring_ok[i] = 0;
    bsplib_sum[0] = -1;
    sstep_bsp_begin_with(P, bsplib_body, NULL);
    bsplib_body(NULL);
    for (unsigned i = 0; i < P; ++i)
        if (!bsplib_ring_ok[i]) return -2;
    return bsplib_sum[0];
}
