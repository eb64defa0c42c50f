/*
 * <rma.h> beyond the suites: labeled windows (Figs. 3 and 4) used in
 * alternate supersteps, gets from a labeled window, a registration made
 * twice for one address (the newer one wins until it is deregistered),
 * zero-length puts, LIBARRIER on its own. Written only against the
 * interface; built for every mapping. Prints "labeled p=P: ok" at process
 * 0 and exits with 0 when every value arrived.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <rma.h>

#define W 8

static int val(int from, int to, int i, int step) { return from * 1000003 + to * 1009 + i * 17 + step; }

int main(void)
{
    LIBEGIN(LINPROCS());
    const int p = LINPROCS(), pid = LIPID();
    int *x = calloc((size_t)p * W, sizeof *x), *y = calloc((size_t)p * W, sizeof *y);
    int *src = calloc(W, sizeof *src), *got = calloc(W, sizeof *got);
    int *flags = calloc((size_t)p, sizeof *flags);
    if (!x || !y || !src || !got || !flags)
        LIABORT("labeled: out of memory\n");
    int ok = 1;

    LIOREGISTER(x, (size_t)p * W * sizeof *x);
    LIOREGISTER(y, (size_t)p * W * sizeof *y);
    LIOINIT(x);
    LIOINIT(y);
    LIOCOMMIT();
    /* steps 0..5: even steps write x, odd steps y; each window is read in
     * the step after it was written, while the other one is written */
    for (int step = 0; step < 6; step++) {
        int *win = (step % 2) ? y : x;
        const int to = (pid + 1 + step) % p;
        for (int i = 0; i < W; i++)
            src[i] = val(pid, to, i, step);
        LIOPUT(to, src, win, (size_t)pid * W * sizeof *win, W * sizeof *src);
        LIOPUT(to, src, win, 0, 0);   /* zero length: nothing */
        LIOSYNC(win);
        LIOBARRIER();
        const int from = ((pid - 1 - step) % p + p) % p;
        for (int i = 0; i < W; i++)
            ok &= win[from * W + i] == val(from, pid, i, step);
    }
    /* gets: x still holds step 4's values; read row pid of process
     * (pid + 1) mod p, which process pid - 3 mod p ... wrote there: the
     * writer of x at q = pid + 1 in step 4 was (q - 5) mod p */
    {
        const int q = (pid + 1) % p, w = ((q - 5) % p + p) % p;
        LIOGET(q, x, (size_t)w * W * sizeof *x, got, W * sizeof *got);
        LIOSYNC(x);
        LIOBARRIER();
        for (int i = 0; i < W; i++)
            ok &= got[i] == val(w, q, i, 4);
    }
    LIDEREGISTER(y);
    LIDEREGISTER(x);

    /* the same address registered twice: the newer registration (1 int)
     * is the one a put uses; after its deregistration the older (p ints) */
    LIREGISTER(flags, (size_t)p * sizeof *flags);
    LIREGISTER(flags, sizeof *flags);
    LIINIT();
    LICOMMIT();
    const int one = 1;
    LIPUT((pid + 1) % p, &one, flags, 0, sizeof one);
    LISYNC();
    LIBARRIER();
    ok &= flags[0] == 1;
    LIDEREGISTER(flags);
    LIBARRIER();
    const int two = 2;
    LIPUT((pid + 1) % p, &two, flags, (size_t)pid * sizeof two, sizeof two);
    LISYNC();
    LIBARRIER();
    ok &= flags[(pid - 1 + p) % p] == 2;
    LIDEREGISTER(flags);

    /* every process's verdict at process 0 */
    int *all = calloc((size_t)p, sizeof *all);
    if (!all)
        LIABORT("labeled: out of memory\n");
    LIREGISTER(all, (size_t)p * sizeof *all);
    LIINIT();
    LICOMMIT();
    LIPUT(0, &ok, all, (size_t)pid * sizeof ok, sizeof ok);
    LISYNC();
    LIBARRIER();
    int good = 1;
    for (int q = 0; q < p; q++)
        good &= all[q];
    LIDEREGISTER(all);
    if (pid == 0)
        printf("labeled p=%d: %s\n", p, good ? "ok" : "FAILED");
    free(all);
    free(x);
    free(y);
    free(src);
    free(got);
    free(flags);
    LIEND();
    return good ? 0 : 1;
}
