/*
 * lpf_misuse CASE -- commits one programming error (or calls lpf_abort).
 *
 * Superstep's decision (§5.7 of the contract): O(1)-checkable precondition
 * violations print ONE line naming the primitive, the process and the
 * values, and end the program like lpf_abort, with exit status 6. The test
 * test_core_misuse runs this program once per case (optionally through a
 * launcher, for distributed engines) and checks the status and the line.
 *
 * Every case that starts a section runs on 2 processes; the mistake is made
 * by process 1 unless the case says otherwise. If a mistake goes unnoticed
 * the program goes on, prints "NOT DETECTED" and exits with status 0.
 *
 *   lpf_misuse --list     prints the names of all cases
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/abort.h>
#include <lpf/core.h>
#include <lpf/pthread.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SYNC(ctx) lpf_sync((ctx), LPF_SYNC_DEFAULT)
#define SPMD(name) static void name(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
#define UNUSED (void)ctx; (void)s; (void)p; (void)args

/* a handle that no registration ever produced (generation 5, index 40) */
#define BOGUS_GLOBAL (((lpf_memslot_t)5 << 32) | ((lpf_memslot_t)40 << 1))
#define BOGUS_LOCAL (BOGUS_GLOBAL | 1u)

static void setup(lpf_t ctx, size_t regs, size_t msgs)
{
    lpf_resize_memory_register(ctx, regs);
    lpf_resize_message_queue(ctx, msgs);
    SYNC(ctx);
}

/* Every process: an 8-byte local source `ls` and an 8-byte global
 * destination `gs`, usable (after a sync), with room for `regs`
 * registrations and 4 requests. */
struct areas {
    char src[8], dst[8];
    lpf_memslot_t ls, gs;
};

static void areas_setup(lpf_t ctx, struct areas *a, size_t regs)
{
    memset(a, 0, sizeof *a);
    setup(ctx, regs, 4);
    lpf_register_local(ctx, a->src, sizeof a->src, &a->ls);
    lpf_register_global(ctx, a->dst, sizeof a->dst, &a->gs);
    SYNC(ctx);
}

/* after the mistake: everybody syncs, so that detection at a sync happens */
static void finish(lpf_t ctx)
{
    SYNC(ctx);
    SYNC(ctx);
}

/* ------------------------------------------------------------------ */
/* pid out of range                                                     */
/* ------------------------------------------------------------------ */

SPMD(put_dst_pid)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 7, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_dst_pid_max)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, (lpf_pid_t)-1, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_src_pid)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 2, a.gs, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* unknown, invalid, stale slots                                        */
/* ------------------------------------------------------------------ */

SPMD(put_unknown_dst)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, BOGUS_GLOBAL, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_unknown_src)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, BOGUS_LOCAL, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_unknown_src)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 0, BOGUS_GLOBAL, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_invalid_dst)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, LPF_INVALID_MEMSLOT, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_invalid_src)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, LPF_INVALID_MEMSLOT, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_stale_dst)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_deregister(ctx, a.gs);   /* collectively */
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_stale_reused)
{
    UNUSED;
    struct areas a;
    char other[8];
    lpf_memslot_t g2;
    areas_setup(ctx, &a, 2);
    lpf_deregister(ctx, a.gs);
    lpf_register_global(ctx, other, sizeof other, &g2);   /* may reuse the index */
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_stale_src)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_deregister(ctx, a.gs);
    SYNC(ctx);
    if (s == 1) lpf_get(ctx, 0, a.gs, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_stale_src)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) {
        lpf_deregister(ctx, a.ls);
        lpf_put(ctx, a.ls, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    }
    finish(ctx);
}

SPMD(get_stale_dst)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) {
        lpf_deregister(ctx, a.ls);
        lpf_get(ctx, 0, a.gs, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    }
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* local where global is needed; global used before its sync            */
/* ------------------------------------------------------------------ */

SPMD(put_local_dst)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_local_src)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 0, a.ls, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_new_global_dst)
{
    UNUSED;
    struct areas a;
    char b[8];
    lpf_memslot_t g2;
    areas_setup(ctx, &a, 3);
    lpf_register_global(ctx, b, sizeof b, &g2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, g2, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_new_global_src)
{
    UNUSED;
    struct areas a;
    char b[8];
    lpf_memslot_t g2;
    areas_setup(ctx, &a, 3);
    lpf_register_global(ctx, b, sizeof b, &g2);
    if (s == 1) lpf_get(ctx, 0, g2, 0, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_new_global_src)
{
    UNUSED;
    struct areas a;
    char b[8];
    lpf_memslot_t g2;
    areas_setup(ctx, &a, 3);
    lpf_register_global(ctx, b, sizeof b, &g2);
    if (s == 1) lpf_put(ctx, g2, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_new_global_dst)
{
    UNUSED;
    struct areas a;
    char b[8];
    lpf_memslot_t g2;
    areas_setup(ctx, &a, 3);
    lpf_register_global(ctx, b, sizeof b, &g2);
    if (s == 1) lpf_get(ctx, 0, a.gs, 0, g2, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* local ranges (checked at the call)                                   */
/* ------------------------------------------------------------------ */

SPMD(put_src_range)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 4, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_src_overflow)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, SIZE_MAX, 0, a.gs, 0, 2, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* 4 + (SIZE_MAX-1) wraps to 2, which a naive check would accept */
SPMD(put_src_size_overflow)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 4, 0, a.gs, 0, SIZE_MAX - 1, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_dst_range)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 0, a.gs, 0, a.ls, 1, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_dst_overflow)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 0, a.gs, 0, a.ls, 2, SIZE_MAX - 1, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* remote ranges (checked at the sync)                                  */
/* ------------------------------------------------------------------ */

SPMD(put_remote_range)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, a.gs, 4, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* the destination registered less than the issuer did */
SPMD(put_remote_smaller)
{
    UNUSED;
    char src[8] = { 0 }, dst[8];
    lpf_memslot_t ls, gs;
    setup(ctx, 2, 4);
    lpf_register_local(ctx, src, sizeof src, &ls);
    lpf_register_global(ctx, dst, s == 0 ? 4 : 8, &gs);
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, ls, 0, 0, gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_remote_overflow)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, a.gs, SIZE_MAX - 3, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* a zero-size slot can never be written remotely */
SPMD(put_remote_zero_slot)
{
    UNUSED;
    char src[8] = { 0 }, dst[8];
    lpf_memslot_t ls, gs;
    setup(ctx, 2, 4);
    lpf_register_local(ctx, src, sizeof src, &ls);
    lpf_register_global(ctx, s == 0 ? NULL : dst, s == 0 ? 0 : 8, &gs);
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, ls, 0, 0, gs, 0, 1, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_remote_range)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 0, a.gs, 8, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_remote_overflow)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_get(ctx, 0, a.gs, SIZE_MAX, a.ls, 0, 1, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* one process: the sync takes another path */
SPMD(put_remote_range_solo)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_put(ctx, a.ls, 0, 0, a.gs, 4, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(get_remote_range_solo)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_get(ctx, 0, a.gs, 1, a.ls, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* capacities                                                           */
/* ------------------------------------------------------------------ */

SPMD(register_over_capacity)
{
    UNUSED;
    char b[8];
    lpf_memslot_t m1, m2;
    setup(ctx, 1, 0);
    if (s == 1) {
        lpf_register_global(ctx, b, 4, &m1);
        lpf_register_global(ctx, b + 4, 4, &m2);
    }
    finish(ctx);
}

SPMD(register_local_no_capacity)
{
    UNUSED;
    char b[8];
    lpf_memslot_t m;
    if (s == 1) lpf_register_local(ctx, b, sizeof b, &m);
    finish(ctx);
}

/* growth takes effect only at the next sync */
SPMD(register_before_sync)
{
    UNUSED;
    char b[8];
    lpf_memslot_t m;
    lpf_resize_memory_register(ctx, 4);
    if (s == 1) lpf_register_global(ctx, b, sizeof b, &m);
    finish(ctx);
}

SPMD(register_after_shrink)
{
    UNUSED;
    char b[8];
    lpf_memslot_t m1, m2;
    setup(ctx, 2, 0);
    lpf_resize_memory_register(ctx, 1);
    SYNC(ctx);
    if (s == 1) {
        lpf_register_local(ctx, b, 4, &m1);
        lpf_register_local(ctx, b + 4, 4, &m2);
    }
    finish(ctx);
}

SPMD(put_over_queue)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_resize_message_queue(ctx, 1);
    SYNC(ctx);
    if (s == 1) {
        lpf_put(ctx, a.ls, 0, 0, a.gs, 0, 4, LPF_MSG_DEFAULT);
        lpf_put(ctx, a.ls, 4, 0, a.gs, 4, 4, LPF_MSG_DEFAULT);
    }
    finish(ctx);
}

SPMD(get_over_queue)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_resize_message_queue(ctx, 1);
    SYNC(ctx);
    if (s == 1) {
        lpf_get(ctx, 0, a.gs, 0, a.ls, 0, 4, LPF_MSG_DEFAULT);
        lpf_get(ctx, 0, a.gs, 4, a.ls, 4, 4, LPF_MSG_DEFAULT);
    }
    finish(ctx);
}

SPMD(put_no_queue)
{
    UNUSED;
    char src[8] = { 0 }, dst[8];
    lpf_memslot_t ls, gs;
    lpf_resize_memory_register(ctx, 2);
    SYNC(ctx);
    lpf_register_local(ctx, src, sizeof src, &ls);
    lpf_register_global(ctx, dst, sizeof dst, &gs);
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, ls, 0, 0, gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(put_after_queue_shrink)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    lpf_resize_message_queue(ctx, 16);
    SYNC(ctx);
    lpf_resize_message_queue(ctx, 0);
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, a.ls, 0, 0, a.gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

/* a rehooked context starts with capacity 0, whatever the parent has */
SPMD(child_register)
{
    UNUSED;
    char b[8];
    lpf_memslot_t m;
    if (s == 1) lpf_register_global(ctx, b, sizeof b, &m);
    finish(ctx);
}

SPMD(rehook_fresh_register)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 8);
    lpf_rehook(ctx, child_register, LPF_NO_ARGS);
    finish(ctx);
}

SPMD(child_put)
{
    UNUSED;
    char src[8] = { 0 }, dst[8];
    lpf_memslot_t ls, gs;
    lpf_resize_memory_register(ctx, 2);
    SYNC(ctx);
    lpf_register_local(ctx, src, sizeof src, &ls);
    lpf_register_global(ctx, dst, sizeof dst, &gs);
    SYNC(ctx);
    if (s == 1) lpf_put(ctx, ls, 0, 0, gs, 0, 8, LPF_MSG_DEFAULT);
    finish(ctx);
}

SPMD(rehook_fresh_put)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 8);   /* the parent has a queue of 4 */
    lpf_rehook(ctx, child_put, LPF_NO_ARGS);
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* NULL pointers and bad handles                                        */
/* ------------------------------------------------------------------ */

SPMD(register_null_memslot)
{
    UNUSED;
    char b[8];
    setup(ctx, 2, 0);
    if (s == 1) lpf_register_global(ctx, b, sizeof b, NULL);
    finish(ctx);
}

SPMD(register_local_null_memslot)
{
    UNUSED;
    char b[8];
    setup(ctx, 2, 0);
    if (s == 1) lpf_register_local(ctx, b, sizeof b, NULL);
    finish(ctx);
}

SPMD(register_null_pointer)
{
    UNUSED;
    lpf_memslot_t m;
    setup(ctx, 2, 0);
    if (s == 1) lpf_register_local(ctx, NULL, 8, &m);
    finish(ctx);
}

SPMD(deregister_twice)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) {
        lpf_deregister(ctx, a.ls);
        lpf_deregister(ctx, a.ls);
    }
    finish(ctx);
}

SPMD(deregister_invalid)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_deregister(ctx, LPF_INVALID_MEMSLOT);
    finish(ctx);
}

SPMD(deregister_unknown)
{
    UNUSED;
    struct areas a;
    areas_setup(ctx, &a, 2);
    if (s == 1) lpf_deregister(ctx, BOGUS_GLOBAL);
    finish(ctx);
}

SPMD(noop)
{
    UNUSED;
}

SPMD(nested_exec_null_spmd)
{
    UNUSED;
    if (s == 1) lpf_exec(ctx, 1, NULL, LPF_NO_ARGS);
    finish(ctx);
}

SPMD(rehook_null_spmd)
{
    UNUSED;
    if (s == 1) lpf_rehook(ctx, NULL, LPF_NO_ARGS);
    finish(ctx);
}

SPMD(probe_null)
{
    UNUSED;
    if (s == 1) lpf_probe(ctx, NULL);
    finish(ctx);
}

/* ------------------------------------------------------------------ */
/* lpf_abort (items 75, 76)                                             */
/* ------------------------------------------------------------------ */

SPMD(abort_section)
{
    UNUSED;
    if (s == 1) {
        lpf_abort(ctx);
        printf("lpf_abort returned\n");
    }
    for (int i = 0; i < 100; ++i) SYNC(ctx);
}

SPMD(abort_pid0)
{
    UNUSED;
    if (s == 0) {
        lpf_abort(ctx);
        printf("lpf_abort returned\n");
    }
    for (int i = 0; i < 100; ++i) SYNC(ctx);
}

/* the others are busy and reach their next sync only much later */
SPMD(abort_busy)
{
    UNUSED;
    if (s == 1) {
        lpf_abort(ctx);
        printf("lpf_abort returned\n");
    }
    for (int i = 0; i < 500; ++i) {
        struct timespec t = { 0, 10 * 1000 * 1000 };
        nanosleep(&t, NULL);
    }
    SYNC(ctx);
}

SPMD(abort_nested_inner)
{
    UNUSED;
    if (s == p - 1) {
        lpf_abort(ctx);
        printf("lpf_abort returned\n");
    }
    for (int i = 0; i < 100; ++i) SYNC(ctx);
}

SPMD(abort_nested)
{
    UNUSED;
    lpf_exec(ctx, LPF_MAX_P, abort_nested_inner, LPF_NO_ARGS);
    for (int i = 0; i < 100; ++i) SYNC(ctx);
}

/* ------------------------------------------------------------------ */
/* Cases run from main                                                  */
/* ------------------------------------------------------------------ */

static void exec_null_spmd(void) { lpf_exec(LPF_ROOT, 2, NULL, LPF_NO_ARGS); }
static void exec_p_zero(void) { lpf_exec(LPF_ROOT, 0, noop, LPF_NO_ARGS); }

static void exec_null_input(void)
{
    lpf_args_t a = LPF_NO_ARGS;
    a.input_size = 4;
    lpf_exec(LPF_ROOT, 2, noop, a);
}

static void exec_null_output(void)
{
    lpf_args_t a = LPF_NO_ARGS;
    a.output_size = 4;
    lpf_exec(LPF_ROOT, 2, noop, a);
}

static void exec_null_fsymbols(void)
{
    lpf_args_t a = LPF_NO_ARGS;
    a.f_size = 1;
    lpf_exec(LPF_ROOT, 2, noop, a);
}

static void sync_none_ctx(void) { lpf_sync(LPF_NONE, LPF_SYNC_DEFAULT); }

static void put_none_ctx(void) { lpf_put(LPF_NONE, 0, 0, 0, 0, 0, 0, LPF_MSG_DEFAULT); }

static void root_put_dst_pid(void)
{
    char src[8] = { 0 }, dst[8];
    lpf_memslot_t ls, gs;
    setup(LPF_ROOT, 2, 2);
    lpf_register_local(LPF_ROOT, src, sizeof src, &ls);
    lpf_register_global(LPF_ROOT, dst, sizeof dst, &gs);
    SYNC(LPF_ROOT);
    lpf_put(LPF_ROOT, ls, 0, 1, gs, 0, 8, LPF_MSG_DEFAULT);
    SYNC(LPF_ROOT);
}

static void abort_root(void)
{
    lpf_abort(LPF_ROOT);
    printf("lpf_abort returned\n");
}

/* pthread engine: user threads initialised and hooked */
struct hook_thread {
    lpf_pid_t pid, nprocs;
    lpf_spmd_t spmd;
};

static void *hook_main(void *arg)
{
    struct hook_thread *t = arg;
    lpf_init_t init = LPF_INIT_NONE;
    if (lpf_pthread_initialize(t->pid, t->nprocs, &init) != LPF_SUCCESS) return NULL;
    lpf_hook(init, t->spmd, LPF_NO_ARGS);
    lpf_pthread_finalize(init);
    return NULL;
}

static void run_hooked(lpf_pid_t n, lpf_spmd_t spmd)
{
    pthread_t th[8];
    struct hook_thread t[8];
    for (lpf_pid_t i = 0; i < n; ++i) {
        t[i].pid = i;
        t[i].nprocs = n;
        t[i].spmd = spmd;
        pthread_create(&th[i], NULL, hook_main, &t[i]);
    }
    for (lpf_pid_t i = 0; i < n; ++i) pthread_join(th[i], NULL);
}

static void hook_null_spmd(void) { run_hooked(1, NULL); }
static void abort_hook(void) { run_hooked(2, abort_section); }

/* ------------------------------------------------------------------ */

struct mcase {
    const char *name;
    lpf_spmd_t spmd;        /* run on P processes ... */
    lpf_pid_t P;
    void (*main_fn)(void);  /* ... or this, from main */
};

#define SECTION(name) { #name, name, 2, NULL }
#define SOLO(name) { #name, name, 1, NULL }
#define MAIN(name) { #name, NULL, 0, name }

static const struct mcase cases[] = {
    SECTION(put_dst_pid), SECTION(put_dst_pid_max), SECTION(get_src_pid),
    SECTION(put_unknown_dst), SECTION(put_unknown_src), SECTION(get_unknown_src),
    SECTION(put_invalid_dst), SECTION(put_invalid_src),
    SECTION(put_stale_dst), SECTION(put_stale_reused), SECTION(get_stale_src),
    SECTION(put_stale_src), SECTION(get_stale_dst),
    SECTION(put_local_dst), SECTION(get_local_src),
    SECTION(put_new_global_dst), SECTION(get_new_global_src),
    SECTION(put_new_global_src), SECTION(get_new_global_dst),
    SECTION(put_src_range), SECTION(put_src_overflow), SECTION(put_src_size_overflow),
    SECTION(get_dst_range), SECTION(get_dst_overflow),
    SECTION(put_remote_range), SECTION(put_remote_smaller), SECTION(put_remote_overflow),
    SECTION(put_remote_zero_slot), SECTION(get_remote_range), SECTION(get_remote_overflow),
    SOLO(put_remote_range_solo), SOLO(get_remote_range_solo),
    SECTION(register_over_capacity), SECTION(register_local_no_capacity),
    SECTION(register_before_sync), SECTION(register_after_shrink),
    SECTION(put_over_queue), SECTION(get_over_queue), SECTION(put_no_queue),
    SECTION(put_after_queue_shrink), SECTION(rehook_fresh_register), SECTION(rehook_fresh_put),
    SECTION(register_null_memslot), SECTION(register_local_null_memslot),
    SECTION(register_null_pointer), SECTION(deregister_twice), SECTION(deregister_invalid),
    SECTION(deregister_unknown), SECTION(nested_exec_null_spmd), SECTION(rehook_null_spmd),
    SECTION(probe_null),
    MAIN(exec_null_spmd), MAIN(exec_p_zero), MAIN(exec_null_input), MAIN(exec_null_output),
    MAIN(exec_null_fsymbols), MAIN(sync_none_ctx), MAIN(put_none_ctx), MAIN(root_put_dst_pid),
    MAIN(hook_null_spmd),
    SECTION(abort_section), SECTION(abort_pid0), SECTION(abort_busy), SECTION(abort_nested),
    MAIN(abort_root), MAIN(abort_hook),
};

int main(int argc, char **argv)
{
    const size_t n = sizeof cases / sizeof cases[0];
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE | --list\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; ++i) printf("%s\n", cases[i].name);
        return 0;
    }
    for (size_t i = 0; i < n; ++i) {
        if (strcmp(argv[1], cases[i].name) != 0) continue;
        if (cases[i].main_fn) {
            cases[i].main_fn();
        } else {
            lpf_err_t rc = lpf_exec(LPF_ROOT, cases[i].P, cases[i].spmd, LPF_NO_ARGS);
            printf("lpf_exec returned %d\n", rc);
        }
        printf("NOT DETECTED: %s\n", cases[i].name);
        return 0;
    }
    fprintf(stderr, "%s: unknown case '%s'\n", argv[0], argv[1]);
    return 2;
}
