/*
 * noc_lpf_style: <lpf/noc.h> used the way LPF's own noc test uses it: the
 * register sized with lpf_resize_memory_register alone (LPF keeps noc and
 * core registrations in one register), the serialized slot of the left
 * neighbour deserialized into a slot noc-registered with an area of its
 * own, a noc get through it, and every noc slot given back with
 * lpf_noc_deregister. Prints "noc lpf-style: ok (p=P)" from process 0.
 */
#include <lpf/core.h>
#include <lpf/noc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                     \
    do {                                                                             \
        lpf_err_t rc_ = (x);                                                         \
        if (rc_ != LPF_SUCCESS) {                                                    \
            fprintf(stderr, "noc_lpf_style: process %u: %s failed (%d)\n", s, #x,    \
                    (int)rc_);                                                       \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    /* one core registration (the exchange area) and three noc ones */
    CHECK(lpf_resize_memory_register(ctx, 4));
    CHECK(lpf_resize_message_queue(ctx, 2 * p));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));

    char mine[32], scratch[32], recv[32];
    snprintf(mine, sizeof mine, "the area of process %u", s);
    memset(scratch, 0, sizeof scratch);
    memset(recv, 0, sizeof recv);
    lpf_memslot_t my_slot, far_slot, dst_slot, all_slot;
    CHECK(lpf_noc_register(ctx, mine, sizeof mine, &my_slot));
    char *buf = NULL;
    size_t bs = 0;
    CHECK(lpf_noc_serialize_slot(ctx, my_slot, &buf, &bs));
    if (bs == 0 || bs > 256) {
        fprintf(stderr, "noc_lpf_style: process %u: serialized slot of %zu bytes\n", s, bs);
        exit(1);
    }
    /* every process's serialized slot, to everybody (same size everywhere) */
    char *all = calloc(p, bs);
    CHECK(lpf_register_global(ctx, all, p * bs, &all_slot));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    memcpy(all + s * bs, buf, bs);
    for (lpf_pid_t k = 0; k < p; ++k)
        if (k != s) CHECK(lpf_put(ctx, all_slot, s * bs, k, all_slot, s * bs, bs, LPF_MSG_DEFAULT));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));

    /* the left neighbour's area, through a slot that had an area of its own */
    const lpf_pid_t left = (s + p - 1) % p;
    CHECK(lpf_noc_register(ctx, scratch, sizeof scratch, &far_slot));
    CHECK(lpf_noc_deserialize_slot(ctx, all + left * bs, far_slot));
    CHECK(lpf_noc_register(ctx, recv, sizeof recv, &dst_slot));
    CHECK(lpf_noc_get(ctx, left, far_slot, 0, dst_slot, 0, sizeof recv, LPF_MSG_DEFAULT));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    char want[32];
    snprintf(want, sizeof want, "the area of process %u", left);
    int bad = strcmp(recv, want) != 0 || scratch[0] != '\0';
    if (bad)
        fprintf(stderr, "noc_lpf_style: process %u: got '%s', expected '%s'%s\n", s, recv, want,
                scratch[0] ? " (and the slot's own area was written)" : "");

    CHECK(lpf_noc_deregister(ctx, far_slot));
    CHECK(lpf_noc_deregister(ctx, dst_slot));
    CHECK(lpf_noc_deregister(ctx, my_slot));
    /* the register is free again: three noc registrations fit once more */
    lpf_memslot_t again[3];
    for (int k = 0; k < 3; ++k) CHECK(lpf_noc_register(ctx, recv, sizeof recv, &again[k]));
    for (int k = 0; k < 3; ++k) CHECK(lpf_noc_deregister(ctx, again[k]));
    CHECK(lpf_deregister(ctx, all_slot));
    CHECK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    free(all);
    free(buf);
    if (bad) exit(1);
    if (s == 0) printf("noc lpf-style: ok (p=%u)\n", p);
}

int main(void)
{
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, LPF_NO_ARGS);
    return rc == LPF_SUCCESS ? 0 : 1;
}
