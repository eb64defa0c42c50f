/* Items 83, 84 (no-op half), 85, 86 in the Oxford flavour: -1 for an empty
 * queue, int-typed queue sizes, tag sizes that round-trip, nbytes == 0 as a
 * silent no-op. Failures are counted in ox_bad. */
#define MCBSP_COMPATIBILITY_MODE
#include <bsp.h>

#include <string.h>

#include <stdlib.h>

static int ox_P;
static int ox_bad;                 /* written by pid 0 only: the total */
static __thread int ox_my_bad;     /* this process's failed checks */

#include <stdio.h>

#define CHECK(c) do { if (!(c)) { ox_my_bad++; \
    printf("FAIL oxford_rt.c:%d: process %d: %s\n", __LINE__, bsp_pid(), #c); fflush(stdout); } } while (0)

static void ox_report(void)
{
    const int s = bsp_pid(), p = bsp_nprocs();
    int *all = calloc((size_t)p, sizeof(int));
    bsp_push_reg(all, p * (int)sizeof(int));
    bsp_sync();
    bsp_put(0, &ox_my_bad, all, s * (int)sizeof(int), (int)sizeof(int));
    bsp_sync();
    if (s == 0) {
        ox_bad = 0;
        for (int q = 0; q < p; ++q) ox_bad += all[q];
    }
    bsp_pop_reg(all);
    bsp_sync();
    free(all);
}

static void ox_spmd(void)
{
    bsp_begin(ox_P);
    ox_my_bad = 0;
    const int s = bsp_pid(), p = bsp_nprocs();
    CHECK(s != 0 || p == ox_P);   /* ox_P: known to pid 0 (main) only */
    /* item 86: set_tagsize(int *) returns the previous size */
    int t = (int)sizeof(int);
    bsp_set_tagsize(&t);
    CHECK(t == 0);
    bsp_sync();
    t = 2 * (int)sizeof(int);
    bsp_set_tagsize(&t);
    CHECK(t == (int)sizeof(int));
    t = (int)sizeof(int);
    bsp_set_tagsize(&t);          /* last call wins; returns the current size */
    CHECK(t == (int)sizeof(int));

    /* item 83: empty queue conventions */
    int status = 0, tag = 77;
    bsp_get_tag(&status, &tag);
    CHECK(status == -1);
    CHECK(tag == 77);
    void *tp = &tag, *pp = &tag;
    CHECK(bsp_hpmove(&tp, &pp) == -1);
    CHECK(tp == &tag && pp == &tag);

    /* item 84: nbytes == 0 is a silent no-op, even with bogus pointers */
    int unreg = 3;
    bsp_put(0, NULL, NULL, 0, 0);
    bsp_get(0, &unreg, 5, NULL, 0);
    bsp_hpput(0, NULL, &unreg, 0, 0);
    bsp_hpget(0, &unreg, 0, NULL, 0);

    /* item 85: bsp_qsize(int *, int *) */
    double pay[2] = { 1.5, 2.5 };
    int mytag = 1000 + s;
    bsp_send((s + 1) % p, &mytag, pay, (int)sizeof pay);
    bsp_send((s + 1) % p, &mytag, pay, 0);
    int n = -1, bytes = -1;
    bsp_qsize(&n, &bytes);
    CHECK(n == 0 && bytes == 0);
    bsp_sync();
    bsp_qsize(&n, &bytes);
    CHECK(n == 2);
    CHECK(bytes == (int)sizeof pay);
    bsp_qsize(&n, NULL);          /* accum_nbytes may be NULL */
    CHECK(n == 2);
    for (int k = 0; k < 2; ++k) {
        int st = -7, tg = 0;
        bsp_get_tag(&st, &tg);
        CHECK(tg == 1000 + (s + p - 1) % p);
        CHECK(st == 0 || st == (int)sizeof pay);
        if (k == 0) {
            double got[2] = { 0, 0 };
            bsp_move(got, (int)sizeof got);
            CHECK(st == 0 || (got[0] == 1.5 && got[1] == 2.5));
        } else {
            void *a, *b;
            int sz = bsp_hpmove(&a, &b);
            CHECK(sz == st);
            CHECK(memcmp(a, &tg, sizeof tg) == 0);
        }
        bsp_qsize(&n, &bytes);
        CHECK(n == 1 - k);
    }
    /* DRMA with int arguments, and the BSPlib 1.0 spellings */
    int arr[4] = { 0, 0, 0, 0 };
    bsp_pushregister(arr, (int)sizeof arr);
    bsp_sync();
    int v[2] = { s, s + 1 };
    bsp_put((s + 1) % p, v, arr, (int)sizeof(int), (int)sizeof v);
    bsp_sync();
    CHECK(arr[1] == (s + p - 1) % p && arr[2] == (s + p - 1) % p + 1);
    bsp_popregister(arr);
    t = 0;
    bsp_set_tagsize(&t);
    bsp_sync();
    ox_report();
    bsp_end();
}

int sstep_test_oxford(int P);
int sstep_test_oxford(int P)
{
    ox_P = P;
    ox_bad = 0;
    bsp_init(ox_spmd, 0, 0);
    ox_spmd();
    return ox_bad;
}
