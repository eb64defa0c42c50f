/*
 * The As suite of the RMA paper, written once against <rma.h>:
 *   Test 1 (Empty)    a barrier synchronization
 *   Test 2 (Comp)     an elementary computation, then a barrier
 *   Test 3 (Full)     a total exchange of p ints (one to every process,
 *                     itself included), then a barrier
 *   Test 4 (Simple)   one int from process 0 to process p-1, then a barrier
 *   Test 5 (Scatter)  one int from process 0 to every other process
 * and the total exchange of h ints (h/p to every process, itself included)
 * for h = p, 2p, ... up to -h, whose time t gives g = t/h (us per int).
 *
 *   as [-r reps] [-h hmax] [-x exchange_bytes_per_size]
 *
 * With -DRMA_TWO_SIDED (MPI only) Tests 3-5 and the total exchange use
 * MPI_Irecv + MPI_Send + MPI_Waitall and a barrier instead of puts: the
 * paper's two-sided variant. Every received value is checked; the exit
 * status is 0 only when all were right.
 * Output, one line per measure (times: the repetitions run in up to 21
 * batches; per batch the slowest process's mean; the median over the
 * batches):
 *   as lib=L p=P test=T us=X
 *   as lib=L p=P h=H us=X g=Y
 *   as lib=L p=P check=ok|FAILED
 */
#include "li_util.h"

#ifdef RMA_TWO_SIDED
# ifndef RMA_MPI
#  error "RMA_TWO_SIDED needs RMA_MPI"
# endif
# undef LI_VARIANT
# define LI_VARIANT "mpi-2sided"
#endif

static volatile double as_sink;

static unsigned as_val(unsigned from, unsigned to, unsigned i, unsigned rep)
{
    return (from * 2654435761u) ^ (to * 40503u) ^ (i * 97u) ^ (rep * 7919u);
}

#ifdef RMA_TWO_SIDED
/* pid sends cnt[q] ints from send + soff[q] to each q with cnt[q] > 0;
 * receives rcnt[q] ints into recv + roff[q]; then a barrier */
static void as_exchange2(const unsigned *send, unsigned *recv, const size_t *cnt,
                         const size_t *soff, const size_t *rcnt, const size_t *roff,
                         MPI_Request *req)
{
    const int p = LINPROCS(), pid = LIPID();
    int nr = 0;
    for (int q = 0; q < p; q++)
        if (rcnt[q] && q != pid)
            MPI_Irecv(recv + roff[q], (int)rcnt[q], MPI_UNSIGNED, q, 1, MPI_COMM_WORLD, &req[nr++]);
    for (int k = 1; k <= p; k++) {   /* the self copy last; the others staggered */
        const int q = (pid + k) % p;
        if (!cnt[q])
            continue;
        if (q == pid)
            memcpy(recv + roff[q], send + soff[q], cnt[q] * sizeof *send);
        else
            MPI_Send(send + soff[q], (int)cnt[q], MPI_UNSIGNED, q, 1, MPI_COMM_WORLD);
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
}
#endif

int main(int argc, char **argv)
{
    LIBEGIN(LINPROCS());
    const int p = LINPROCS(), pid = LIPID();
    static const char *const names[] = { "-r", "-h", "-x", NULL };
    uint64_t par[4] = { 0, 0, 0, 0 };
    if (pid == 0) {
        par[0] = li_opt(argc, argv, "-r", 1000);
        par[1] = li_opt(argc, argv, "-h", 65536);
        par[2] = li_opt(argc, argv, "-x", 1u << 23);
        par[3] = !li_opts_ok(argc, argv, names);
    }
    li_bcast_u64(par, 4);
    if (par[3]) {
        LIEND();
        return 2;
    }
    const unsigned R = par[0] ? (unsigned)par[0] : 1;
    const size_t hmax = par[1] < (uint64_t)p ? (size_t)p : (size_t)par[1];
    const size_t xbytes = (size_t)par[2];
    int ok = 1;
    double t[5];
    /* batches: up to 21 of `per` repetitions; tb: their boundary times */
    double *tb = (double *)malloc(64 * sizeof *tb);
    if (!tb)
        LIABORT("as: out of memory\n");

    /* ---- Tests 1-5 ---- */
    /* two halves, used in alternate supersteps: what arrived in one superstep
     * is read in the next while the puts of that one fill the other half
     * (the interface's contract; MPI's puts may land at once) */
    unsigned *small2 = (unsigned *)calloc(2 * (size_t)p, sizeof *small2), *small = small2;
    unsigned *ssrc = (unsigned *)calloc((size_t)p, sizeof *ssrc);
    if (!small2 || !ssrc)
        LIABORT("as: out of memory\n");
    LIREGISTER(small2, 2 * (size_t)p * sizeof *small2);
    LIINIT();
    LICOMMIT();
#ifdef RMA_TWO_SIDED
    MPI_Request *req = (MPI_Request *)malloc((size_t)p * sizeof *req);
    size_t *cnt = (size_t *)calloc((size_t)p * 4, sizeof *cnt), *soff = cnt + p,
           *rcnt = cnt + 2 * p, *roff = cnt + 3 * p;
    if (!req || !cnt)
        LIABORT("as: out of memory\n");
#endif
    const unsigned per = R >= 21 ? R / 21 : 1, nb = R >= 21 ? 21 : R;
    for (int test = 1; test <= 5; test++) {
        LIBARRIER();
        for (unsigned rep = 0; rep <= per * nb; rep++) {
            if (rep % per == 1 % per && rep > 0)
                tb[(rep - 1) / per] = LITIME();   /* rep 0 warms up */
            const size_t half = (size_t)(rep % 2) * (size_t)p;   /* in ints */
            small = small2 + half;
            if (test == 2) {
                double x = as_sink;
                for (int k = 0; k < 16; k++)
                    x = x * 1.0000001 + 1.0;
                as_sink = x;
            }
            if (test >= 3) {
                for (int q = 0; q < p; q++)
                    ssrc[q] = as_val((unsigned)pid, (unsigned)q, (unsigned)test, rep);
            }
#ifdef RMA_TWO_SIDED
            if (test >= 3) {
                for (int q = 0; q < p; q++) {
                    int s = (test == 3) || (pid == 0 && test == 4 && q == p - 1) ||
                            (pid == 0 && test == 5 && q != 0);
                    int r = (test == 3) || (q == 0 && test == 4 && pid == p - 1) ||
                            (q == 0 && test == 5 && pid != 0);
                    cnt[q] = (size_t)s;
                    soff[q] = (size_t)q;
                    rcnt[q] = (size_t)r;
                    roff[q] = (size_t)q;
                }
                as_exchange2(ssrc, small, cnt, soff, rcnt, roff, req);
            } else {
                LIBARRIER();
            }
#else
            if (test == 3)
                for (int q = 0; q < p; q++)
                    LIPUT(q, &ssrc[q], small2, (half + (size_t)pid) * sizeof *small, sizeof *small);
            else if (test == 4 && pid == 0)
                LIPUT(p - 1, &ssrc[p - 1], small2, half * sizeof *small, sizeof *small);
            else if (test == 5 && pid == 0)
                for (int q = 1; q < p; q++)
                    LIPUT(q, &ssrc[q], small2, half * sizeof *small, sizeof *small);
            if (test >= 3)
                LISYNC();
            LIBARRIER();
#endif
            if (test == 3)
                for (int q = 0; q < p; q++)
                    ok &= small[q] == as_val((unsigned)q, (unsigned)pid, 3, rep);
            if (test == 4 && pid == p - 1)
                ok &= small[0] == as_val(0, (unsigned)pid, 4, rep);
            if (test == 5 && pid != 0)
                ok &= small[0] == as_val(0, (unsigned)pid, 5, rep);
        }
        tb[nb] = LITIME();
        t[test - 1] = li_batch_median(tb, (int)nb, per);
    }
    LIDEREGISTER(small2);
    if (pid == 0)
        for (int test = 1; test <= 5; test++)
            printf("as lib=%s p=%d test=%d us=%.3f\n", LI_VARIANT, p, test, t[test - 1]);

    /* ---- total exchange of h ints ---- */
    unsigned *send = (unsigned *)malloc(hmax * sizeof *send);
    unsigned *recv2 = (unsigned *)malloc(2 * hmax * sizeof *recv2), *recv = recv2;
    if (!send || !recv2)
        LIABORT("as: out of memory (h = %zu)\n", hmax);
    LIREGISTER(recv2, 2 * hmax * sizeof *recv2);   /* two halves, as above */
    LIINIT();
    LICOMMIT();
    for (size_t h = (size_t)p; h <= hmax; h *= 2) {
        const size_t b = h / (size_t)p;   /* ints to every process */
        unsigned reps = (unsigned)(xbytes / (h * sizeof *send));
        if (reps < 3)
            reps = 3;
        if (reps > R)
            reps = R < 3 ? 3 : R;
        const unsigned xper = reps >= 21 ? reps / 21 : 1, xnb = reps >= 21 ? 21 : reps;
        reps = xper * xnb;
        for (unsigned rep = 0; rep <= reps; rep++) {
            if (rep % xper == 1 % xper && rep > 0)
                tb[(rep - 1) / xper] = LITIME();
            const size_t half = (size_t)(rep % 2) * hmax;
            recv = recv2 + half;
            /* the data of the checked repetitions (the first, untimed, and
             * the last); the others send the same bytes again */
            if (rep == 0 || rep == reps)
                for (int q = 0; q < p; q++)
                    for (size_t i = 0; i < b; i++)
                        send[(size_t)q * b + i] =
                            as_val((unsigned)pid, (unsigned)q, (unsigned)i, rep);
#ifdef RMA_TWO_SIDED
            for (int q = 0; q < p; q++) {
                cnt[q] = rcnt[q] = b;
                soff[q] = (size_t)q * b;
                roff[q] = (size_t)q * b;
            }
            as_exchange2(send, recv, cnt, soff, rcnt, roff, req);
#else
            for (int k = 0; k < p; k++) {   /* staggered: process pid starts at pid + 1 */
                const int q = (pid + 1 + k) % p;
                LIPUT(q, send + (size_t)q * b, recv2, (half + (size_t)pid * b) * sizeof *recv,
                      b * sizeof *recv);
            }
            LISYNC();
            LIBARRIER();
#endif
            if (rep == 0 || rep == reps)
                for (int q = 0; q < p; q++)
                    for (size_t i = 0; i < b; i++)
                        ok &= recv[(size_t)q * b + i] ==
                              as_val((unsigned)q, (unsigned)pid, (unsigned)i, rep);
        }
        tb[xnb] = LITIME();
        const double th = li_batch_median(tb, (int)xnb, xper);
        if (pid == 0)
            printf("as lib=%s p=%d h=%zu us=%.3f g=%.5f\n", LI_VARIANT, p, h, th, th / (double)h);
    }
    LIDEREGISTER(recv2);
    ok = li_all_ok(ok);
    if (pid == 0)
        printf("as lib=%s p=%d check=%s\n", LI_VARIANT, p, ok ? "ok" : "FAILED");
#ifdef RMA_TWO_SIDED
    free(req);
    free(cnt);
#endif
    free(send);
    free(recv2);
    free(small2);
    free(tb);
    free(ssrc);
    LIEND();
    return ok ? 0 : 1;
}
