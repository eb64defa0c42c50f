/*
 * XY-sort with <pub.h>: the PUB paper's Program 4 (Section 3), as printed,
 * with its globals made locals. p = s*s processes in an s x s mesh, row
 * major; processes 0..s-1 (row 0) hold one key each. See pub_apps.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "pub_apps.h"

#include <stdlib.h>
#include <string.h>

#define FirstOfRow(pid) ((pid) * sqrt_p)
#define LastOfRow(pid) ((pid) * sqrt_p + sqrt_p - 1)

int pub_xy_sort_spmd(pbsp bsp, int *keyp)
{
    const int p = bsp_nprocs(bsp), mypid = bsp_pid(bsp), sqrt_p = pub_isqrt(p);
    if (sqrt_p < 1)
        return -2;
    const int myRow = mypid / sqrt_p, myCol = mypid % sqrt_p;
    int key = *keyp, key1, key2, rank, i;
    int *dst = malloc((size_t)sqrt_p * sizeof *dst);
    if (!dst)
        bsp_abort("pub_xy_sort: out of memory\n");
    pbspmsg msg;

    /* superstep 1: key i along row i and down column i */
    for (i = 0; i < sqrt_p; i++)
        dst[i] = i * sqrt_p + myCol;
    if (myRow == 0) {
        bsp_gsend(bsp, FirstOfRow(mypid), LastOfRow(mypid), &key, sizeof(int));
        bsp_lsend(bsp, dst, sqrt_p, &key, sizeof(int));
    }
    bsp_oblsync(bsp, 2);
    msg = bsp_findmsg(bsp, myCol, 0);
    key1 = *(int *)bspmsg_data(msg);
    msg = bsp_findmsg(bsp, myRow, 0);
    key2 = *(int *)bspmsg_data(msg);

    /* superstep 2: the ranks, summed up each column into its last row */
    rank = (key1 > key2 || (key1 == key2 && myCol > myRow)) ? 1 : 0;

    bsp_lreduce(bsp, dst, sqrt_p, &rank, &rank, 1, bspop_addint, NULL);
    bsp_push_reg(bsp, &key, sizeof(key));
    bsp_oblsync(bsp, 1);

    /* superstep 3: every key to the process of its rank */
    if (mypid >= p - sqrt_p)
        bsp_put(bsp, rank, &key1, &key, 0, sizeof(key));
    bsp_pop_reg(bsp, &key);
    bsp_sync(bsp);

    free(dst);
    *keyp = key;
    return 0;
}

/* ---- library call ------------------------------------------------------------------ */

struct xy_job {
    const int *keys;
    int *out;
};

static void xy_entry(pbsp bsp, void *arg)
{
    struct xy_job *job = arg; /* pid 0 only */
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp), sqrt_p = pub_isqrt(p);
    int key = 0;
    if (s == 0)
        for (int q = 0; q < sqrt_p; q++)
            bsp_send(bsp, q, &job->keys[q], sizeof(int));
    bsp_oblsync(bsp, s < sqrt_p ? 1 : 0);
    if (s < sqrt_p)
        key = *(int *)bspmsg_data(bsp_getmsg(bsp, 0));

    pub_xy_sort_spmd(bsp, &key);

    if (s < sqrt_p)
        bsp_send(bsp, 0, &key, sizeof key);
    bsp_oblsync(bsp, s == 0 ? sqrt_p : 0);
    if (s == 0)
        for (int q = 0; q < sqrt_p; q++)
            job->out[q] = *(int *)bspmsg_data(bsp_findmsg(bsp, q, 0));
    bsp_sync(bsp);
}

int pub_xy_sort(int P, const int *keys, int *out)
{
    if (pub_isqrt(P) < 1 || keys == NULL || out == NULL)
        return -2;
    struct xy_job job = { keys, out };
    pub_exec(P, xy_entry, &job);
    return 0;
}
