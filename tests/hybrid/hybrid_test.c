/*
 * hybrid_test -- the hybrid engine's own checks (run through
 * bsprun --engine hybrid -n P -t T; they pass on the other engines too).
 *
 *   hybrid_test            every check below; "ALL DONE: N checks, F failed"
 *   hybrid_test MODE       a fault or a mistake (tests/hybrid/CMakeLists.txt
 *                          says what each must end with)
 *
 * Checks: pids rank-major (threads of one rank share an OS process, ranks
 * do not), lpf_probe's p, puts and gets of every size (0 bytes, a few bytes,
 * large enough to travel straight from user memory) between every pair of
 * processes,
 * registrations made and released mid-run, zero-size requests at the end of
 * an area, conflicting writes (one of the values wins), a nested section on
 * the threads of a rank, and many supersteps in a row.
 */
#include <lpf/core.h>
#include <lpf/abort.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXSZ 70000   /* above the MPI engine's direct-transfer threshold */

struct result {
    unsigned checks, fails;
    char first[200];
};

static void fail_at(struct result *r, int line, const char *what, lpf_pid_t s)
{
    if (r->fails++ == 0)
        snprintf(r->first, sizeof r->first, "line %d, process %u: %s", line, s, what);
}
#define CHECK(r, cond, s)                                                       \
    do {                                                                        \
        (r)->checks++;                                                          \
        if (!(cond)) fail_at((r), __LINE__, #cond, (s));                         \
    } while (0)

static unsigned char pattern(lpf_pid_t from, lpf_pid_t to, size_t i, int round)
{
    return (unsigned char)(from * 31 + to * 7 + i * 13 + (size_t)round * 5 + 1);
}

static void sync_or_die(lpf_t ctx, lpf_pid_t s)
{
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
        fprintf(stderr, "process %u: sync failed\n", s);
        exit(1);
    }
}

static void nested(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int *out = args.output;   /* only pid 0 has it */
    int v = (int)s + 1, sum = 0;
    lpf_memslot_t vs, ss;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2 * p);   /* pid 0 issues one and is the target of p */
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    int *all = calloc(p, sizeof *all);
    lpf_register_local(ctx, &v, sizeof v, &vs);
    lpf_register_global(ctx, all, p * sizeof *all, &ss);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, vs, 0, 0, ss, s * sizeof v, sizeof v, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (lpf_pid_t q = 0; q < p; ++q) sum += all[q];
    if (s == 0 && out) *out = sum * 100 + (int)p;
    free(all);
}

static void checks(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, struct result *r)
{
    const size_t sizes[] = { 0, 1, 8, 100, MAXSZ };
    const size_t nsz = sizeof sizes / sizeof sizes[0];
    lpf_resize_memory_register(ctx, 16);
    lpf_resize_message_queue(ctx, 4 * p * nsz + 4 * p + 16);
    sync_or_die(ctx, s);

    /* layout: the OS process of every pid at pid 0 */
    long *osp = calloc(p, sizeof *osp);
    long me = (long)getpid();
    lpf_memslot_t ms, os;
    lpf_register_local(ctx, &me, sizeof me, &ms);
    lpf_register_global(ctx, osp, p * sizeof *osp, &os);
    sync_or_die(ctx, s);
    lpf_put(ctx, ms, 0, 0, os, s * sizeof me, sizeof me, LPF_MSG_DEFAULT);
    sync_or_die(ctx, s);
    if (s == 0) {
        const char *tv = getenv("SUPERSTEP_ENGINE");
        const char *tt = getenv("SUPERSTEP_HYBRID_THREADS");
        if (tv && !strcmp(tv, "hybrid") && tt) {
            lpf_pid_t T = (lpf_pid_t)atoi(tt);
            for (lpf_pid_t q = 0; q < p; ++q)
                for (lpf_pid_t u = 0; u < p; ++u)
                    CHECK(r, (q / T == u / T) == (osp[q] == osp[u]), s);
        }
    }
    lpf_deregister(ctx, ms);
    lpf_deregister(ctx, os);
    free(osp);

    lpf_machine_t m = LPF_INVALID_MACHINE;
    CHECK(r, lpf_probe(ctx, &m) == LPF_SUCCESS, s);
    CHECK(r, m.p == p, s);

    /* puts and gets of every size between every pair */
    size_t slot_bytes = p * nsz * MAXSZ;
    unsigned char *src = malloc(slot_bytes), *dst = malloc(slot_bytes), *gsrc = malloc(MAXSZ);
    unsigned char *gdst = malloc(slot_bytes);
    lpf_memslot_t ss, ds, gs, gd;
    lpf_register_local(ctx, src, slot_bytes, &ss);
    lpf_register_global(ctx, dst, slot_bytes, &ds);
    lpf_register_global(ctx, gsrc, MAXSZ, &gs);
    lpf_register_local(ctx, gdst, slot_bytes, &gd);
    sync_or_die(ctx, s);
    for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < MAXSZ; ++i) gsrc[i] = pattern(s, s, i, round);
        memset(dst, 0xee, slot_bytes);
        memset(gdst, 0xee, slot_bytes);
        sync_or_die(ctx, s);   /* everybody's gsrc and dst are ready */
        for (lpf_pid_t q = 0; q < p; ++q)
            for (size_t k = 0; k < nsz; ++k) {
                size_t at = (q * nsz + k) * MAXSZ;
                for (size_t i = 0; i < sizes[k]; ++i) src[at + i] = pattern(s, q, i, round);
                size_t to = (s * nsz + k) * MAXSZ;
                lpf_put(ctx, ss, at, q, ds, to, sizes[k], LPF_MSG_DEFAULT);
                lpf_get(ctx, q, gs, 0, gd, at, sizes[k], LPF_MSG_DEFAULT);
            }
        /* (that a get reads its source before a put of the same superstep
         * overwrites it is BSPlib's promise, checked by tests/bsplib on this
         * engine; in LPF such a read-write conflict is an error) */
        sync_or_die(ctx, s);
        int bad_put = 0, bad_get = 0;
        for (lpf_pid_t q = 0; q < p; ++q)
            for (size_t k = 0; k < nsz; ++k) {
                size_t at = (q * nsz + k) * MAXSZ;
                for (size_t i = 0; i < sizes[k]; ++i) {
                    bad_put |= dst[at + i] != pattern(q, s, i, round);
                    bad_get |= gdst[at + i] != pattern(q, q, i, round);
                }
                if (sizes[k] < MAXSZ) bad_put |= dst[at + sizes[k]] != 0xee;
            }
        CHECK(r, !bad_put, s);
        CHECK(r, !bad_get, s);
    }
    lpf_deregister(ctx, ss);
    lpf_deregister(ctx, ds);
    lpf_deregister(ctx, gs);
    lpf_deregister(ctx, gd);
    free(src); free(dst); free(gsrc); free(gdst);
    sync_or_die(ctx, s);

    /* registrations made and released mid-run: a ring through fresh slots */
    for (int round = 0; round < 6; ++round) {
        long v = (long)s * 1000 + round, got = -1;
        lpf_memslot_t vs, gs2, extra = LPF_INVALID_MEMSLOT;
        long pad[4];
        if (round % 2) lpf_register_global(ctx, pad, sizeof pad, &extra);
        lpf_register_local(ctx, &v, sizeof v, &vs);
        lpf_register_global(ctx, &got, sizeof got, &gs2);
        sync_or_die(ctx, s);
        lpf_put(ctx, vs, 0, (s + 1) % p, gs2, 0, sizeof v, LPF_MSG_DEFAULT);
        /* zero bytes at the very end of the area */
        lpf_put(ctx, vs, sizeof v, (s + p - 1) % p, gs2, sizeof got, 0, LPF_MSG_DEFAULT);
        sync_or_die(ctx, s);
        CHECK(r, got == (long)((s + p - 1) % p) * 1000 + round, s);
        lpf_deregister(ctx, vs);
        lpf_deregister(ctx, gs2);
        if (extra != LPF_INVALID_MEMSLOT) lpf_deregister(ctx, extra);
        sync_or_die(ctx, s);
    }

    /* conflicting writes: every process writes pid 0's word; one wins whole */
    uint64_t word = 0, mine = 0x0101010101010101ull * (s + 1);
    lpf_memslot_t wslot, mslot;
    lpf_register_global(ctx, &word, sizeof word, &wslot);
    lpf_register_local(ctx, &mine, sizeof mine, &mslot);
    sync_or_die(ctx, s);
    lpf_put(ctx, mslot, 0, 0, wslot, 0, sizeof mine, LPF_MSG_DEFAULT);
    sync_or_die(ctx, s);
    if (s == 0) CHECK(r, word % 0x0101010101010101ull == 0 && word / 0x0101010101010101ull >= 1
            && word / 0x0101010101010101ull <= p, s);
    lpf_deregister(ctx, wslot);
    lpf_deregister(ctx, mslot);

    /* a nested section on threads of this rank */
    int nres = 0;
    lpf_args_t na = LPF_NO_ARGS;
    na.output = &nres;
    na.output_size = sizeof nres;
    CHECK(r, lpf_exec(ctx, 2, nested, na) == LPF_SUCCESS, s);
    CHECK(r, nres == 3 * 100 + 2 || nres == 1 * 100 + 1, s);

    /* many supersteps in a row, each with one put to the next process */
    long ring = s, in = -1;
    lpf_memslot_t rs, is;
    lpf_register_local(ctx, &ring, sizeof ring, &rs);
    lpf_register_global(ctx, &in, sizeof in, &is);
    sync_or_die(ctx, s);
    int bad = 0;
    for (int k = 0; k < 500; ++k) {
        lpf_put(ctx, rs, 0, (s + 1) % p, is, 0, sizeof ring, LPF_MSG_DEFAULT);
        sync_or_die(ctx, s);
        bad |= in != (long)((s + p - 1) % p) + k;
        ring++;
    }
    CHECK(r, !bad, s);
    lpf_deregister(ctx, rs);
    lpf_deregister(ctx, is);
    sync_or_die(ctx, s);
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int mode = s == 0 ? *(const int *)args.input : 0;
    lpf_memslot_t mslot;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 2 * p);
    sync_or_die(ctx, s);
    lpf_register_global(ctx, &mode, sizeof mode, &mslot);
    sync_or_die(ctx, s);
    if (s == 0)
        for (lpf_pid_t q = 1; q < p; ++q) lpf_put(ctx, mslot, 0, q, mslot, 0, sizeof mode, LPF_MSG_DEFAULT);
    sync_or_die(ctx, s);
    lpf_deregister(ctx, mslot);
    const lpf_pid_t victim = p - 1;   /* on the last rank */
    switch (mode) {
    case 0: {
        struct result r;
        memset(&r, 0, sizeof r);
        checks(ctx, s, p, &r);
        struct result *all = s == 0 ? calloc(p, sizeof *all) : NULL;
        lpf_memslot_t rs, as;
        lpf_register_local(ctx, &r, sizeof r, &rs);
        lpf_register_global(ctx, all, s == 0 ? p * sizeof *all : 0, &as);
        sync_or_die(ctx, s);
        lpf_put(ctx, rs, 0, 0, as, s * sizeof r, sizeof r, LPF_MSG_DEFAULT);
        sync_or_die(ctx, s);
        if (s == 0) {
            unsigned checks_n = 0, fails = 0;
            for (lpf_pid_t q = 0; q < p; ++q) {
                checks_n += all[q].checks;
                fails += all[q].fails;
                if (all[q].fails) printf("FAIL: %s\n", all[q].first);
            }
            printf("ALL DONE: %u checks, %u failed (p = %u)\n", checks_n, fails, p);
            free(all);
        }
        return;
    }
    case 1:   /* a process of the last rank puts past the end of pid 0's area */
        if (s == victim) {
            static long target;
            long v = 1;
            lpf_memslot_t ls, gs;
            lpf_register_local(ctx, &v, sizeof v, &ls);
            lpf_register_global(ctx, &target, sizeof target, &gs);
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
            lpf_put(ctx, ls, 0, 0, gs, 4, sizeof v, LPF_MSG_DEFAULT);
        } else {
            static long target;
            lpf_memslot_t gs;
            lpf_register_global(ctx, &target, sizeof target, &gs);
            lpf_sync(ctx, LPF_SYNC_DEFAULT);
        }
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    case 2:   /* a thread leaves early: everybody's sync fails, nobody hangs */
        if (s == 1 % p) return;
        for (;;)
            if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS) {
                printf("process %u: sync failed\n", s);
                return;
            }
    case 3:   /* a process never reaches the sync (SUPERSTEP_SYNC_TIMEOUT) */
        if (s == 1 % p) pause();
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    case 4:   /* the victim crashes */
        if (s == victim) {
            volatile int *nil = NULL;
            *nil = 1;
        }
        for (;;) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    case 5:   /* the victim's process is killed */
        if (s == victim) raise(SIGKILL);
        for (;;) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    case 7: { /* 1000 supersteps of one small put each (messages per sync) */
        long v = s, in = -1;
        lpf_memslot_t vs, is;
        lpf_register_local(ctx, &v, sizeof v, &vs);
        lpf_register_global(ctx, &in, sizeof in, &is);
        sync_or_die(ctx, s);
        for (int k = 0; k < 1000; ++k) {
            lpf_put(ctx, vs, 0, (s + 1) % p, is, 0, sizeof v, LPF_MSG_DEFAULT);
            sync_or_die(ctx, s);
        }
        if (s == 0) printf("ring done\n");
        return;
    }
    case 6:   /* the victim aborts */
        if (s == victim) {
            fprintf(stderr, "process %u of %u aborts on purpose\n", s, p);
            lpf_abort(ctx);
        }
        for (;;) lpf_sync(ctx, LPF_SYNC_DEFAULT);
    }
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "checks", "badput", "leave", "stuck", "segv",
            "sigkill", "abort", "ring" };
    int mode = 0;
    if (argc > 1) {
        while (mode < 8 && strcmp(modes[mode], argv[1]) != 0) ++mode;
        if (mode == 8) {
            fprintf(stderr, "unknown mode %s\n", argv[1]);
            return 2;
        }
    }
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &mode;
    a.input_size = sizeof mode;
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, a);
    printf("lpf_exec returned %d\n", rc);
    if (mode == 2) return rc == LPF_SUCCESS ? 1 : 0;
    return rc == LPF_SUCCESS ? 0 : 1;
}
