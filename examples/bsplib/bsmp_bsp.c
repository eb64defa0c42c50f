/*
 * Bulk synchronous message passing with <bsp.h>: every process sends each
 * other process a message whose tag is the sender's pid and whose payload
 * holds k values; receivers check every message with bsp_qsize,
 * bsp_get_tag, bsp_move (first round) and bsp_hpmove (second round).
 * Usage: bsmp_bsp [P]
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned P;
static int failures;   /* shared: all processes are threads */

static void spmd(void)
{
    bsp_begin(P);
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    bsp_size_t tagsize = sizeof(unsigned);
    bsp_set_tagsize(&tagsize);
    bsp_sync();
    int bad = 0;
    for (int round = 0; round < 2; ++round) {
        /* to process t: t+1 values s*1000 + i */
        for (unsigned t = 0; t < p; ++t) {
            long *payload = malloc((t + 1) * sizeof *payload);
            for (unsigned i = 0; i <= t; ++i) payload[i] = (long)s * 1000 + i;
            if (round == 0) bsp_send(t, &s, payload, (t + 1) * sizeof *payload);
            else bsp_send(t, &s, payload, (t + 1) * sizeof *payload);
            free(payload);   /* bsp_send has copied it */
        }
        bsp_sync();
        bsp_nprocs_t n;
        bsp_size_t bytes;
        bsp_qsize(&n, &bytes);
        if (n != p || bytes != (size_t)p * (s + 1) * sizeof(long)) bad++;
        for (unsigned k = 0; k < n; ++k) {
            unsigned from;
            long *vals;
            bsp_size_t size;
            if (round == 0) {
                bsp_get_tag(&size, &from);
                vals = malloc(size);
                bsp_move(vals, size);
            } else {
                void *tag, *pl;
                size = bsp_hpmove(&tag, &pl);
                from = *(unsigned *)tag;
                vals = pl;
            }
            if (size != (s + 1) * sizeof(long)) bad++;
            for (unsigned i = 0; i <= s && size == (s + 1) * sizeof(long); ++i)
                if (vals[i] != (long)from * 1000 + i) bad++;
            if (round == 0) free(vals);
        }
        bsp_size_t status;
        bsp_get_tag(&status, NULL);
        if (status != bsp_size_unavailable) bad++;
    }
    if (bad) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    bsp_sync();
    if (s == 0) printf("BSMP with %u processes: %s\n", p, failures ? "FAILED" : "all messages correct");
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(&spmd, argc, argv);
    P = argc > 1 ? (unsigned)atoi(argv[1]) : bsp_nprocs();
    spmd();
    return failures ? 1 : 0;
}
