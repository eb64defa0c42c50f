/* Item 60: with MCBSP_ENABLE_FAKE_HP_DIRECTIVES the hp primitives act like
 * their buffered counterparts: changing the source after bsp_hpput or
 * bsp_hpsend does not change what arrives. */
#define MCBSP_ENABLE_FAKE_HP_DIRECTIVES
#include <bsp.h>

#include <stdlib.h>

static unsigned fake_P;
static int fake_bad;   /* written by pid 0 only: the total over all processes */

/* every process's count of failed checks, summed at pid 0 */
static void fake_report(int bad)
{
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    int *all = calloc(p, sizeof(int));
    bsp_push_reg(all, p * sizeof(int));
    bsp_sync();
    bsp_put(0, &bad, all, s * sizeof(int), sizeof(int));
    bsp_sync();
    if (s == 0) {
        fake_bad = 0;
        for (unsigned q = 0; q < p; ++q) fake_bad += all[q];
    }
    bsp_pop_reg(all);
    bsp_sync();
    free(all);
}

static void fake_spmd(void)
{
    bsp_begin(fake_P);
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    long dst = -1, src = 100 + s, msg = 200 + s;
    bsp_push_reg(&dst, sizeof dst);
    bsp_sync();
    bsp_hpput((s + 1) % p, &src, &dst, 0, sizeof src);
    bsp_hpsend((s + 1) % p, NULL, &msg, sizeof msg);
    src = -5;      /* buffered: too late to matter */
    msg = -5;
    bsp_sync();
    long got = 0;
    bsp_move(&got, sizeof got);
    int bad = dst != 100 + (long)((s + p - 1) % p) || got != 200 + (long)((s + p - 1) % p);
    bsp_pop_reg(&dst);
    bsp_sync();
    fake_report(bad);
    bsp_end();
}

int sstep_test_fake_hp(unsigned P);
int sstep_test_fake_hp(unsigned P)
{
    fake_P = P;
    fake_bad = 0;
    bsp_init(fake_spmd, 0, 0);
    fake_spmd();
    return fake_bad;
}
