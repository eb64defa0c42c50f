/*
 * Programs for the checked-mode tests (tests/checked/CMakeLists.txt):
 *   chk_prog CASE P
 * Each mistake case commits one mistake that checked mode (SUPERSTEP_CHECK=1)
 * reports with one line and exit status 6; each ok case is a correct
 * program that prints "result <checksum>" and exits 0 with and without
 * checked mode. On MPI, ranks other than 0 take CASE from
 * SUPERSTEP_CHKTEST_CASE (bsprun hands SUPERSTEP_* settings to every rank).
 * main writes no global when that is set (checked mode compares the
 * program's globals between the ranks when a section starts): the case
 * and BSPlib's P come from the environment.
 */
#include <lpf/core.h>
#include <bsp.h>
#include <lpf/bsplib.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *which_arg;   /* argv[1], kept only without SUPERSTEP_CHKTEST_CASE */
static lpf_t saved_ctx;

static const char *case_raw(void)
{
    const char *e = getenv("SUPERSTEP_CHKTEST_CASE");
    return e && *e ? e : which_arg;
}

/* the case the SPMD functions run: bsp_after_end runs bsp_ok's */
static const char *case_name(void)
{
    const char *r = case_raw();
    return r && !strcmp(r, "bsp_after_end") ? "bsp_ok" : r;
}
#define which (case_name())

#define CK(x) do { if ((x) != LPF_SUCCESS) { fprintf(stderr, "%s failed\n", #x); abort(); } } while (0)

static void setup(lpf_t ctx, size_t regs, size_t msgs)
{
    CK(lpf_resize_memory_register(ctx, regs));
    CK(lpf_resize_message_queue(ctx, msgs));
    CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    uint64_t x[8], y[8];
    for (int i = 0; i < 8; ++i) { x[i] = 100 * s + (uint64_t)i; y[i] = 0; }
    lpf_memslot_t xs, ys;
    saved_ctx = ctx;

    if (!strcmp(which, "ok")) {
        /* ring shift, gets, registrations in the same order, same-value
         * writes to one place */
        setup(ctx, 4, 4 * p + 4);
        CK(lpf_register_global(ctx, x, sizeof x, &xs));
        CK(lpf_register_global(ctx, y, sizeof y, &ys));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        CK(lpf_put(ctx, xs, 0, (s + 1) % p, ys, 0, 4 * sizeof(uint64_t), LPF_MSG_DEFAULT));
        CK(lpf_get(ctx, (s + p - 1) % p, xs, 4 * sizeof(uint64_t), ys, 4 * sizeof(uint64_t),
                2 * sizeof(uint64_t), LPF_MSG_DEFAULT));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        /* every process writes the same value into y[7] of process 0 */
        x[7] = 4242;
        CK(lpf_put(ctx, xs, 7 * sizeof(uint64_t), 0, ys, 7 * sizeof(uint64_t),
                sizeof(uint64_t), LPF_MSG_DEFAULT));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        CK(lpf_deregister(ctx, ys));
        CK(lpf_deregister(ctx, xs));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        uint64_t sum = 0;
        for (int i = 0; i < 8; ++i) sum = sum * 31 + y[i];
        if (s == 0) printf("result %llu\n", (unsigned long long)sum);
        return;
    }

    if (!strcmp(which, "bounds")) {
        /* process 0 registers 16 bytes, the others 64: a 32-byte put to
         * process 0 is past its area */
        setup(ctx, 2, 2);
        CK(lpf_register_global(ctx, x, s == 0 ? 16 : sizeof x, &xs));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (s == 1) lpf_put(ctx, xs, 0, 0, xs, 0, 32, LPF_MSG_DEFAULT);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "bounds_all")) {
        /* every process but 0 makes bounds's mistake: on the hybrid engine
         * some targets share the issuer's rank and some do not; one
         * wording either way */
        setup(ctx, 2, p);
        CK(lpf_register_global(ctx, x, s == 0 ? 16 : sizeof x, &xs));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (s != 0) lpf_put(ctx, xs, 0, 0, xs, 0, 32, LPF_MSG_DEFAULT);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "queue")) {
        /* capacity 2 everywhere; every process puts once to process 0 and
         * process 0 once to itself: it is the target of p requests */
        setup(ctx, 2, 2);
        CK(lpf_register_global(ctx, y, sizeof y, &ys));
        CK(lpf_register_local(ctx, x, sizeof x, &xs));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        CK(lpf_put(ctx, xs, 0, 0, ys, 8 * s, 8, LPF_MSG_DEFAULT));
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "dereg")) {
        setup(ctx, 2, 2);
        CK(lpf_register_global(ctx, x, sizeof x, &xs));
        CK(lpf_register_global(ctx, y, sizeof y, &ys));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        CK(lpf_put(ctx, xs, 0, (s + 1) % p, ys, 0, 8, LPF_MSG_DEFAULT));
        lpf_deregister(ctx, ys);
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "regcount") || !strcmp(which, "regorder")) {
        setup(ctx, 4, 2);
        CK(lpf_register_global(ctx, x, sizeof x, &xs));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (!strcmp(which, "regcount")) {
            /* only the last process registers y */
            if (s == p - 1) CK(lpf_register_global(ctx, y, sizeof y, &ys));
        } else if (s == p - 1) {
            CK(lpf_deregister(ctx, xs));
            CK(lpf_register_global(ctx, y, sizeof y, &ys));
        } else {
            CK(lpf_register_global(ctx, y, sizeof y, &ys));
            CK(lpf_deregister(ctx, xs));
        }
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "regswap")) {
        /* the last process registers the same two areas in the other
         * order: slot 0 is 64 bytes at the others, 32 bytes there */
        setup(ctx, 4, 2);
        if (s != p - 1) {
            CK(lpf_register_global(ctx, x, sizeof x, &xs));
            CK(lpf_register_global(ctx, y, sizeof y / 2, &ys));
        } else {
            CK(lpf_register_global(ctx, y, sizeof y / 2, &ys));
            CK(lpf_register_global(ctx, x, sizeof x, &xs));
        }
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "regswap_addr")) {
        /* two shared arrays of one size, the last process registers them in
         * the other order (threads: one address space) */
        static uint64_t sa[4], sb[4];
        setup(ctx, 4, 2);
        CK(lpf_register_global(ctx, s != p - 1 ? sa : sb, sizeof sa, &xs));
        CK(lpf_register_global(ctx, s != p - 1 ? sb : sa, sizeof sa, &ys));
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "rw")) {
        /* process 0 sends its x[0] to process 1 while process 1 writes
         * process 0's x[0]: x[0] at 0 is read and written */
        setup(ctx, 2, 2);
        CK(lpf_register_global(ctx, x, sizeof x, &xs));
        CK(lpf_register_global(ctx, y, sizeof y, &ys));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (s == 0) CK(lpf_put(ctx, xs, 0, 1, ys, 0, 8, LPF_MSG_DEFAULT));
        if (s == 1) CK(lpf_put(ctx, ys, 0, 0, xs, 0, 8, LPF_MSG_DEFAULT));
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "srcmod")) {
        setup(ctx, 2, 2);
        CK(lpf_register_global(ctx, x, sizeof x, &xs));
        CK(lpf_register_global(ctx, y, sizeof y, &ys));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        CK(lpf_put(ctx, xs, 0, (s + 1) % p, ys, 0, sizeof x, LPF_MSG_DEFAULT));
        if (s == 1) x[3] = 7;   /* the put's source changes before the sync */
        lpf_sync(ctx, LPF_SYNC_DEFAULT);
        return;
    }

    if (!strcmp(which, "race") || !strcmp(which, "same")) {
        /* every process writes y[1..3) of process 0: different values
         * (race) or equal ones (same) */
        setup(ctx, 2, p + 2);
        CK(lpf_register_global(ctx, x, sizeof x, &xs));
        CK(lpf_register_global(ctx, y, sizeof y, &ys));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (!strcmp(which, "same")) { x[1] = 11; x[2] = 12; }
        CK(lpf_put(ctx, xs, 8, 0, ys, 8, 16, LPF_MSG_DEFAULT));
        CK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (s == 0) printf("result y1=%s\n", y[1] == 11 || y[1] % 100 == 1 ? "ok" : "bad");
        return;
    }

    if (!strcmp(which, "bsplib_oob")) {
        /* a put and a get past the end of the last process's registration:
         * the specified error return, with or without checked mode, wherever
         * the target runs (another MPI rank on the hybrid engine) */
        bsplib_t b;
        CK(bsplib_create(ctx, s, p, 1, 0, &b) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        CK(bsplib_push_reg(b, y, sizeof y) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        CK(bsplib_sync(b) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        int e1 = bsplib_put(b, p - 1, x, y, 0, 2 * sizeof y);
        int e2 = bsplib_get(b, p - 1, y, sizeof y - 4, x, 8);
        int e3 = bsplib_hpput(b, p - 1, x, y, 8, sizeof y);
        CK(bsplib_sync(b) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        CK(bsplib_pop_reg(b, y) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        CK(bsplib_sync(b) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        CK(bsplib_destroy(b) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        if (s == 0)
            printf("result put=%s get=%s hpput=%s\n",
                    e1 == BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE ? "out-of-range" : "other",
                    e2 == BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE ? "out-of-range" : "other",
                    e3 == BSPLIB_ERR_MEMORY_ACCESS_OUT_OF_RANGE ? "out-of-range" : "other");
        return;
    }

    if (!strcmp(which, "bsplib_push_one")) {
        /* only process 0 pushes a registration: bsplib_sync returns an
         * error code on every process (no abort, checked or not) */
        bsplib_t b;
        CK(bsplib_create(ctx, s, p, 1, 0, &b) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        if (s == 0) CK(bsplib_push_reg(b, y, sizeof y) == BSPLIB_SUCCESS ? LPF_SUCCESS : LPF_ERR_FATAL);
        int e = bsplib_sync(b);
        (void)bsplib_destroy(b);
        if (s == 0) printf("result sync=%s\n", e == BSPLIB_SUCCESS ? "success" : "error");
        return;
    }

    if (!strcmp(which, "allbad")) {
        /* every process makes the same mistake at once: one line per
         * process at most, exit status 6 (one thread per rank ends it) */
        setup(ctx, 1, 1);
        lpf_put(ctx, LPF_INVALID_MEMSLOT, 0, p + 7, LPF_INVALID_MEMSLOT, 0, 8, LPF_MSG_DEFAULT);
        return;
    }

    if (!strcmp(which, "deadctx")) {
        setup(ctx, 1, 1);
        return;   /* main uses saved_ctx after lpf_exec */
    }
    fprintf(stderr, "unknown case %s\n", which);
    exit(2);
}

/* BSPlib cases */
/* BSPlib's P: rank 0's main sets SUPERSTEP_CHKTEST_P (other ranks' bsp_begin
 * takes it from rank 0) */
static unsigned bsp_P(void)
{
    const char *e = getenv("SUPERSTEP_CHKTEST_P");
    return e ? (unsigned)atoi(e) : 0;
}

static void bsp_spmd(void)
{
    bsp_begin(bsp_P());
    uint64_t gx[8], gy[8];   /* per process (threads share globals) */
    unsigned s = bsp_pid(), p = bsp_nprocs();
    for (int i = 0; i < 8; ++i) { gx[i] = 100 * s + (uint64_t)i; gy[i] = 0; }
    bsp_push_reg(gy, sizeof gy);
    bsp_sync();
    if (!strcmp(which, "bsp_ok")) {
        bsp_put((s + 1) % p, gx, gy, 0, 4 * sizeof(uint64_t));
        uint64_t v = 77;
        bsp_put(0, &v, gy, 7 * sizeof(uint64_t), sizeof v);   /* same value everywhere */
        bsp_sync();
        bsp_get((s + p - 1) % p, gy, 0, &gx[4], 2 * sizeof(uint64_t));
        bsp_sync();
        uint64_t sum = 0;
        for (int i = 0; i < 8; ++i) sum = sum * 31 + gy[i] + gx[i];
        if (s == 0) printf("result %llu\n", (unsigned long long)sum);
    } else if (!strcmp(which, "bsp_race")) {
        bsp_put(0, gx, gy, 0, 2 * sizeof(uint64_t));
        bsp_sync();
    } else if (!strcmp(which, "bsp_pushswap")) {
        /* the last process pushes two variables in the other order */
        uint64_t gz[4] = { 0, 0, 0, 0 };
        if (s != p - 1) {
            bsp_push_reg(gx, sizeof gx);
            bsp_push_reg(gz, sizeof gz);
        } else {
            bsp_push_reg(gz, sizeof gz);
            bsp_push_reg(gx, sizeof gx);
        }
        bsp_sync();
        bsp_pop_reg(gz);
        bsp_pop_reg(gx);
        bsp_sync();
    } else if (!strncmp(which, "bsp_pushswap_eq_", 16) || !strncmp(which, "bsp_pusheq_", 11)) {
        /* two arrays of one size, the last process pushes them in the other
         * order (bsp_pushswap_eq_*, heap blocks made by the same calls
         * everywhere) or in the same order (bsp_pusheq_*, where process 0
         * allocates its heap blocks in the other order): on the stack, in
         * static data, on the heap */
        static uint64_t sa[8], sb[8];
        uint64_t la[8], lb[8];
        uint64_t *a = la, *b = lb;
        const int swap = which[10] != '_';
        const char *where = strrchr(which, '_') + 1;
        if (!strcmp(where, "static")) { a = sa; b = sb; }
        if (!strcmp(where, "heap")) {
            if (s == 0 && !swap) { b = malloc(sizeof la); a = malloc(sizeof la); }
            else { a = malloc(sizeof la); b = malloc(sizeof la); }
        }
        if (s != p - 1 || !swap) {
            bsp_push_reg(a, sizeof la);
            bsp_push_reg(b, sizeof la);
        } else {
            bsp_push_reg(b, sizeof la);
            bsp_push_reg(a, sizeof la);
        }
        bsp_sync();
        bsp_put((s + 1) % p, gx, a, 0, sizeof la);
        bsp_sync();
        bsp_pop_reg(a);
        bsp_pop_reg(b);
        bsp_sync();
        if (a != la && a != sa) { free(a); free(b); }
    } else if (!strcmp(which, "bsp_stall")) {
        /* process 1 never reaches the third user sync: the watchdog's
         * line numbers the user's supersteps (2), as checked mode does */
        bsp_sync();
        if (s == 1) for (;;) sleep(1);
        bsp_sync();
    } else if (!strcmp(which, "bsp_stall_rank")) {
        /* the upper half never reaches the third user sync (on the hybrid
         * engine at 2 x 2: all of rank 1; the rank-level report) */
        bsp_sync();
        if (s >= p / 2) for (;;) sleep(1);
        bsp_sync();
    } else if (!strcmp(which, "bsp_hpmod")) {
        bsp_hpput((s + 1) % p, gx, gy, 0, sizeof gx);
        gx[2] = 5;
        bsp_sync();
    }
    bsp_pop_reg(gy);
    bsp_end();
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: chk_prog CASE P\n"); return 2; }
    const char *e = getenv("SUPERSTEP_CHKTEST_CASE");
    if (!e || !*e) which_arg = argv[1];
    setenv("SUPERSTEP_CHKTEST_P", argv[2], 1);
    if (!strncmp(which, "bsp_", 4)) {
        if (!strcmp(case_raw(), "bsp_after_end")) {
            bsp_init(bsp_spmd, argc, argv);
            bsp_spmd();
            bsp_sync();   /* the run has ended */
            return 0;
        }
        bsp_init(bsp_spmd, argc, argv);
        bsp_spmd();
        return 0;
    }
    if (lpf_exec(LPF_ROOT, (lpf_pid_t)atoi(argv[2]), spmd, LPF_NO_ARGS) != LPF_SUCCESS) {
        fprintf(stderr, "lpf_exec failed\n");
        return 1;
    }
    if (!strcmp(which, "deadctx")) lpf_sync(saved_ctx, LPF_SYNC_DEFAULT);
    return 0;
}
