/*
 * engine_test [case...] -- the MPI engine's own checks, written for any
 * engine (no shared memory between processes is assumed): run it with
 * `bsprun --engine mpi -n N engine_test` for N = 1..4 (and on threads).
 *
 * Every case is an SPMD function started with lpf_exec(LPF_ROOT, ...);
 * processes count their failed checks (printing each on stderr) and the
 * counts are gathered at pid 0 through a fresh context (lpf_rehook). The
 * program prints one line per case and exits with status 1 if any failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <lpf/core.h>

#include "sstep_ext.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Thread_local int fails;   /* this process, current case (a thread on threads) */

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fails++;                                                                \
            fprintf(stderr, "FAIL %s:%d (process %u of %u): %s\n", __FILE__, __LINE__, \
                    s_, p_, #cond);                                                 \
        }                                                                           \
    } while (0)
#define SPMD(name) static void name(lpf_t ctx, lpf_pid_t s_, lpf_pid_t p_, lpf_args_t args)
#define OK(expr) CHECK((expr) == LPF_SUCCESS)

static void setup(lpf_t ctx, size_t regs, size_t msgs)
{
    lpf_resize_memory_register(ctx, regs);
    lpf_resize_message_queue(ctx, msgs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

/* ------------------------------------------------------------------ */
/* Gathering the failure counts at pid 0                                */
/* ------------------------------------------------------------------ */

struct gather_io {
    int mine;
    int *total;   /* pid 0 */
};

static void gather_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    struct gather_io *io = (struct gather_io *)args.input;
    int *all = s == 0 ? calloc(p, sizeof *all) : NULL;
    lpf_memslot_t src, dst;
    setup(ctx, 2, p + 1);
    lpf_register_local(ctx, &io->mine, sizeof io->mine, &src);
    lpf_register_global(ctx, all, s == 0 ? p * sizeof *all : 0, &dst);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, src, 0, 0, dst, s * sizeof(int), sizeof(int), LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s == 0) {
        int t = 0;
        for (lpf_pid_t k = 0; k < p; ++k) t += all[k];
        *io->total = t;
    }
    lpf_deregister(ctx, src);
    lpf_deregister(ctx, dst);
    free(all);
}

/* collective: the number of failed checks of all processes at pid 0 */
static void finish(lpf_t ctx, lpf_pid_t s, lpf_args_t args)
{
    int total = -1;
    struct gather_io io = { fails, &total };
    lpf_args_t a = LPF_NO_ARGS;
    a.input = &io;
    a.input_size = sizeof io;
    lpf_err_t rc = lpf_rehook(ctx, gather_spmd, a);
    if (s == 0 && args.output) *(int *)args.output = rc == LPF_SUCCESS ? total : -1000;
    fails = 0;
}

/* ------------------------------------------------------------------ */
/* Function pointers: static functions, in spmd and in f_symbols        */
/* ------------------------------------------------------------------ */

static _Thread_local int fval;
static void seven(void) { fval = 7; }
void eleven(void);
void eleven(void) { fval = 11; }

SPMD(case_fsymbols)
{
    CHECK(args.f_size == 3);
    if (args.f_size == 3) {
        ((void (*)(void))args.f_symbols[0])();
        CHECK(fval == 7);
        ((void (*)(void))args.f_symbols[1])();
        CHECK(fval == 11);
        CHECK(args.f_symbols[2] == NULL);
    }
    if (s_ != 0) CHECK(args.input == NULL && args.input_size == 0);
    finish(ctx, s_, args);
}

/* ------------------------------------------------------------------ */
/* Many small puts: combined, merged when adjacent, long headers         */
/* ------------------------------------------------------------------ */

SPMD(case_small_puts)
{
    const size_t n = 3000;        /* 8-byte puts per destination */
    const lpf_pid_t p = p_, s = s_;
    uint64_t *src = malloc(n * sizeof *src);
    uint64_t *dst = malloc((size_t)p * 2 * n * sizeof *dst);
    for (size_t i = 0; i < n; ++i) src[i] = ((uint64_t)s << 32) | i;
    memset(dst, 0xff, (size_t)p * 2 * n * sizeof *dst);
    setup(ctx, 2, 2 * n * p + 8);
    lpf_memslot_t ls, gs;
    lpf_register_local(ctx, src, n * sizeof *src, &ls);
    lpf_register_global(ctx, dst, (size_t)p * 2 * n * sizeof *dst, &gs);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    /* to every process: element i to slot 2i of my block (scattered), and
     * a run of adjacent puts into the odd half */
    for (lpf_pid_t k = 0; k < p; ++k) {
        for (size_t i = 0; i < n; ++i)
            OK(lpf_put(ctx, ls, i * 8, k, gs, ((size_t)s * 2 * n + 2 * (n - 1 - i)) * 8, 8,
                    LPF_MSG_DEFAULT));
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k)
        for (size_t i = 0; i < n; ++i)
            if (dst[(size_t)k * 2 * n + 2 * (n - 1 - i)] != (((uint64_t)k << 32) | i)) {
                CHECK(!"scattered put landed");
                k = p;
                break;
            }
    /* adjacent puts, one byte to 3000 bytes, merged into few records */
    memset(dst, 0, (size_t)p * 2 * n * sizeof *dst);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_pid_t to = (s + 1) % p;
    size_t off = 0;
    for (size_t len = 1; off + len <= n * 8 && len < 100; ++len) {
        OK(lpf_put(ctx, ls, off, to, gs, off, len, LPF_MSG_DEFAULT));
        off += len;
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_pid_t from = (s + p - 1) % p;
    uint64_t *expect = malloc(n * sizeof *expect);
    for (size_t i = 0; i < n; ++i) expect[i] = ((uint64_t)from << 32) | i;
    CHECK(memcmp(dst, expect, off) == 0);
    free(expect);
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gs);
    free(src);
    free(dst);
    finish(ctx, s_, args);
}

/* a slot index beyond the compact header's range */
SPMD(case_many_slots)
{
    const size_t nslots = 33000;
    setup(ctx, nslots + 2, 4 * p_ + 4);
    lpf_memslot_t *h = malloc(nslots * sizeof *h);
    int *vals = calloc(p_, sizeof *vals);
    int mine = 1000 + (int)s_;
    lpf_memslot_t ls;
    for (size_t i = 0; i + 1 < nslots; ++i) lpf_register_global(ctx, NULL, 0, &h[i]);
    lpf_register_global(ctx, vals, p_ * sizeof *vals, &h[nslots - 1]);
    lpf_register_local(ctx, &mine, sizeof mine, &ls);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p_; ++k)
        OK(lpf_put(ctx, ls, 0, k, h[nslots - 1], s_ * sizeof(int), sizeof(int), LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p_; ++k) CHECK(vals[k] == 1000 + (int)k);
    for (size_t i = 0; i < nslots; ++i) lpf_deregister(ctx, h[i]);
    lpf_deregister(ctx, ls);
    free(h);
    free(vals);
    finish(ctx, s_, args);
}

/* ------------------------------------------------------------------ */
/* Large puts and gets (direct transfers), overlapping destinations     */
/* ------------------------------------------------------------------ */

static void fill(unsigned char *b, size_t n, unsigned tag)
{
    for (size_t i = 0; i < n; ++i) b[i] = (unsigned char)(tag * 31 + i * 7 + (i >> 9));
}

static int same_fill(const unsigned char *b, size_t n, unsigned tag)
{
    for (size_t i = 0; i < n; ++i)
        if (b[i] != (unsigned char)(tag * 31 + i * 7 + (i >> 9))) return 0;
    return 1;
}

SPMD(case_big)
{
    const size_t B = 300000;   /* beyond the direct threshold */
    const lpf_pid_t p = p_, s = s_;
    unsigned char *src = malloc(B), *dst = malloc(B * p), *area = malloc(B), *gd = malloc(B * p);
    fill(src, B, s);
    memset(dst, 0, B * p);
    memset(area, 0, B);
    setup(ctx, 4, 4 * p + 4);
    lpf_memslot_t ls, gdst, garea, lgd;
    lpf_register_global(ctx, src, B, &ls);
    lpf_register_global(ctx, dst, B * p, &gdst);
    lpf_register_global(ctx, area, B, &garea);
    lpf_register_local(ctx, gd, B * p, &lgd);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    /* a block to everybody; everybody's whole block into pid 0's area */
    for (lpf_pid_t k = 0; k < p; ++k) OK(lpf_put(ctx, ls, 0, k, gdst, s * B, B, LPF_MSG_DEFAULT));
    OK(lpf_put(ctx, ls, 0, 0, garea, 0, B, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k) CHECK(same_fill(dst + k * B, B, k));
    if (s == 0) {
        int whole = 0;
        for (lpf_pid_t k = 0; k < p; ++k) whole |= same_fill(area, B, k);
        CHECK(whole);
    }
    /* gets: everybody's block; then all get pid 0's source into one area */
    memset(gd, 0, B * p);
    for (lpf_pid_t k = 0; k < p; ++k) OK(lpf_get(ctx, k, ls, 0, lgd, k * B, B, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p; ++k) CHECK(same_fill(gd + k * B, B, k));
    memset(gd, 0, B);
    for (lpf_pid_t k = 0; k < p; ++k) OK(lpf_get(ctx, k, ls, 0, lgd, 0, B, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    {
        int whole = 0;
        for (lpf_pid_t k = 0; k < p; ++k) whole |= same_fill(gd, B, k);
        CHECK(whole);
    }
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gdst);
    lpf_deregister(ctx, garea);
    lpf_deregister(ctx, lgd);
    free(src);
    free(dst);
    free(area);
    free(gd);
    finish(ctx, s_, args);
}

/* overlapping puts of mixed sizes: the result is one serialisation */
SPMD(case_overlap)
{
    const size_t B = 40000;
    unsigned char *src = malloc(B), *area = malloc(2 * B);
    memset(src, (int)(s_ + 1), B);
    memset(area, 0, 2 * B);
    setup(ctx, 2, 4 * p_ + 4);
    lpf_memslot_t ls, ga;
    lpf_register_local(ctx, src, B, &ls);
    lpf_register_global(ctx, area, 2 * B, &ga);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    /* process s writes [s*B/4, s*B/4 + B) at everybody (big when B is) and a
     * small put of 100 bytes in the middle */
    size_t o = (size_t)(s_ % 4) * (B / 4);
    for (lpf_pid_t k = 0; k < p_; ++k) {
        OK(lpf_put(ctx, ls, 0, k, ga, o, B, LPF_MSG_DEFAULT));
        OK(lpf_put(ctx, ls, 0, k, ga, B / 2 + s_, 100, LPF_MSG_DEFAULT));
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    /* every byte comes from a writer covering it; runs of bytes covered by
     * the same writers come from one writer */
    for (size_t i = 0; i < 2 * B; ++i) {
        unsigned v = area[i];
        if (v == 0) continue;
        lpf_pid_t w = v - 1;
        int covers = w < p_ && ((i >= (size_t)(w % 4) * (B / 4) && i < (size_t)(w % 4) * (B / 4) + B)
                || (i >= B / 2 + w && i < B / 2 + w + 100));
        if (!covers) {
            CHECK(!"byte from a process that did not write it");
            break;
        }
    }
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, ga);
    free(src);
    free(area);
    finish(ctx, s_, args);
}

/* gets read the source before any put of the superstep lands */
SPMD(case_get_before_put)
{
    uint64_t x = 100 + s_, got = 0, newv = 900 + s_;
    setup(ctx, 3, 4);
    lpf_memslot_t gx, lgot, lnew;
    lpf_register_global(ctx, &x, sizeof x, &gx);
    lpf_register_local(ctx, &got, sizeof got, &lgot);
    lpf_register_local(ctx, &newv, sizeof newv, &lnew);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_pid_t next = (s_ + 1) % p_, prev = (s_ + p_ - 1) % p_;
    OK(lpf_get(ctx, next, gx, 0, lgot, 0, sizeof got, LPF_MSG_DEFAULT));  /* reads next's x */
    OK(lpf_put(ctx, lnew, 0, prev, gx, 0, sizeof newv, LPF_MSG_DEFAULT)); /* writes prev's x */
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(got == 100 + next);
    CHECK(x == 900 + next);
    lpf_deregister(ctx, gx);
    lpf_deregister(ctx, lgot);
    lpf_deregister(ctx, lnew);
    finish(ctx, s_, args);
}

/* ------------------------------------------------------------------ */
/* Layer fast path: messages, remote sizes, direct get, check values     */
/* ------------------------------------------------------------------ */

SPMD(case_messages)
{
    const size_t big = 100000;
    lpf_pid_t p = p_, s = s_;
    setup(ctx, 2, 4);
    for (int round = 0; round < 3; ++round) {
        for (lpf_pid_t k = 0; k < p; ++k) {
            for (int m = 0; m < 50; ++m) {
                uint32_t *msg = sstep_stage(ctx, 3 * sizeof(uint32_t));
                msg[0] = s;
                msg[1] = k;
                msg[2] = (uint32_t)(m + 1000 * round);
                OK(sstep_send(ctx, k, msg, 3 * sizeof(uint32_t)));
            }
            unsigned char *b = sstep_stage(ctx, big);
            fill(b, big, s + round);
            OK(sstep_send(ctx, k, b, big));
        }
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        size_t n = 0;
        const struct sstep_msg *in = sstep_inbox(ctx, &n);
        CHECK(n == (size_t)p * 51);
        unsigned long long sum = 0;
        size_t bigs = 0;
        for (size_t i = 0; i < n; ++i) {
            if (in[i].size == big) {
                int ok = 0;
                for (lpf_pid_t k = 0; k < p; ++k) ok |= same_fill((const unsigned char *)in[i].data, big, k + round);
                CHECK(ok);
                bigs++;
                continue;
            }
            CHECK(in[i].size == 3 * sizeof(uint32_t));
            uint32_t v[3];
            memcpy(v, in[i].data, sizeof v);
            CHECK(v[1] == s);
            sum += v[2];
        }
        CHECK(bigs == p);
        CHECK(sum == (unsigned long long)p * (49 * 50 / 2 + 50ull * 1000 * round));
    }
    /* message data is 8-byte aligned whatever precedes it in the body
     * (odd sizes, a large message's record of 12 bytes), as on threads */
    static const size_t sizes[] = { 12, 5, 1, 24, 3, 100000, 12, 7, 8, 16 };
    const size_t ns = sizeof sizes / sizeof sizes[0];
    for (lpf_pid_t k = 0; k < p; ++k)
        for (size_t i = 0; i < ns; ++i) {
            unsigned char *b = sstep_stage(ctx, sizes[i]);
            fill(b, sizes[i], (unsigned)(s + 7 * i));
            OK(sstep_send(ctx, k, b, sizes[i]));
        }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    size_t n = 0;
    const struct sstep_msg *in = sstep_inbox(ctx, &n);
    CHECK(n == (size_t)p * ns);
    for (size_t i = 0; i < n; ++i) {
        CHECK(((uintptr_t)in[i].data & 7) == 0);
        int ok = 0;
        for (lpf_pid_t q = 0; q < p; ++q)
            for (size_t j = 0; j < ns; ++j)
                if (sizes[j] == in[i].size)
                    ok |= same_fill((const unsigned char *)in[i].data, in[i].size, (unsigned)(q + 7 * j));
        CHECK(ok);
    }
    finish(ctx, s_, args);
}

SPMD(case_remote_size_direct_get)
{
    size_t mysize = 64 + 8 * s_;
    uint64_t *area = malloc(mysize);
    for (size_t i = 0; i < mysize / 8; ++i) area[i] = s_ * 1000 + i;
    setup(ctx, 2, 4);
    lpf_memslot_t ga;
    lpf_register_global(ctx, area, mysize, &ga);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t k = 0; k < p_; ++k) {
        size_t rs = sstep_remote_size(ctx, k, ga);
        CHECK(rs == SIZE_MAX || rs == 64 + 8 * k);
        uint64_t v[2] = { 0, 0 };
        lpf_err_t rc = sstep_direct_get(ctx, k, ga, 8, v, sizeof v);
        CHECK(rc == LPF_SUCCESS);
        if (rc == LPF_SUCCESS) CHECK(v[0] == k * 1000 + 1 && v[1] == k * 1000 + 2);
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_deregister(ctx, ga);
    free(area);
    finish(ctx, s_, args);
}

/* Whether bsp_direct_get reads another process's memory at once, without
 * the owner's help: always on threads; on the MPI engine on one node by
 * process_vm_readv, unless switched off or where the kernel forbids it
 * (Yama ptrace_scope above 0) */
static int direct_get_immediate(void)
{
    const char *shm = getenv("SUPERSTEP_MPI_SHM"), *cma = getenv("SUPERSTEP_MPI_CMA");
    if ((shm && strcmp(shm, "0") == 0) || (cma && strcmp(cma, "0") == 0)) return 0;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1) scope = 1;
        fclose(f);
    }
    return scope == 0;
}

/* Collective: whether all processes run on one host (the same host name:
 * the MPI engine's notion of a node, where it reads peers' memory
 * directly); if not, the host names of processes 0 and p-1 in first and
 * last. Needs 2 free registers and p messages. */
static int one_host(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, char *first, char *last)
{
    char mine[64];
    memset(mine, 0, sizeof mine);
    if (gethostname(mine, sizeof mine - 1) != 0) strcpy(mine, "?");
    char *all = calloc(p, 64);
    lpf_memslot_t ls, gs;
    lpf_register_local(ctx, mine, sizeof mine, &ls);
    lpf_register_global(ctx, all, p * 64, &gs);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    for (lpf_pid_t q = 0; q < p; ++q) lpf_put(ctx, ls, 0, q, gs, s * 64, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, gs);
    int one = 1;
    for (lpf_pid_t q = 1; q < p; ++q) one &= strcmp(all, all + q * 64) == 0;
    memcpy(first, all, 64);
    memcpy(last, all + (p - 1) * 64, 64);
    free(all);
    return one;
}

/* bsp_direct_get from a process that is busy outside the library: the
 * last process waits (at most 10 s) for a file that pid 0 creates only
 * after its direct get from it returned. With an immediate read the file
 * comes at once; a read that needs the owner's help would wait for the
 * owner's next sync, after the 10 s (where that is expected: no wait).
 * Reads are immediate only where all processes run on one host (and the
 * file is seen only there): elsewhere the case says so and checks the
 * data only. */
SPMD(case_direct_get_owner_busy)
{
    struct { uint64_t ospid, data[7]; } area;
    area.ospid = (uint64_t)getpid();
    for (int i = 0; i < 7; ++i) area.data[i] = s_ * 100 + (uint64_t)i;
    setup(ctx, 3, p_ + 2);
    const lpf_pid_t last = p_ - 1;
    char host0[64], hostl[64];
    const int one = one_host(ctx, s_, p_, host0, hostl);
    if (!one && s_ == last)
        printf("direct_get_owner_busy: the processes run on more than one host (process 0 on "
               "%s, process %u on %s): a read needs its owner's help, not checked that it "
               "comes at once\n", host0, last, hostl);
    lpf_memslot_t ga;
    lpf_register_global(ctx, &area, sizeof area, &ga);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (p_ > 1 && s_ == 0) {
        uint64_t v[8] = { 0 };
        OK(sstep_direct_get(ctx, last, ga, 0, v, sizeof v));
        CHECK(v[1] == last * 100 && v[7] == last * 100 + 6);
        if (one) {
            char path[128];
            snprintf(path, sizeof path, "/tmp/sstep-dg-busy-%llu", (unsigned long long)v[0]);
            FILE *f = fopen(path, "w");
            CHECK(f != NULL);
            if (f) fclose(f);
        }
    } else if (p_ > 1 && s_ == last) {
        char path[128];
        snprintf(path, sizeof path, "/tmp/sstep-dg-busy-%llu", (unsigned long long)area.ospid);
        /* where the read needs our help, do not wait: it comes at the sync */
        const int expect = direct_get_immediate() && one;
        int seen = 0;
        for (int i = 0; expect && i < 10000 && !seen; ++i) {
            FILE *f = fopen(path, "r");
            if (f) {
                seen = 1;
                fclose(f);
            } else {
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
            }
        }
        if (expect) CHECK(seen);
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (p_ > 1 && s_ == last && one) {
        char path[128];
        snprintf(path, sizeof path, "/tmp/sstep-dg-busy-%llu", (unsigned long long)area.ospid);
        remove(path);
    }
    lpf_deregister(ctx, ga);
    finish(ctx, s_, args);
}

/* Many small direct gets in a row from a process that waits in its sync
 * meanwhile (pid 0 reads pid 1 READS times). Where a read needs the
 * owner's help (across hosts, SUPERSTEP_MPI_SHM=0 or SUPERSTEP_MPI_CMA=0)
 * the owner must answer from its wait at once: when it answered at every
 * 16th step of a napping wait, these reads took minutes, not a second.
 * Run only when named (tests/mpi/CMakeLists.txt). */
#define READS 20000
SPMD(case_direct_get_burst)
{
    uint64_t area[4] = { 7 + s_, 11 + s_, 13 + s_, 17 + s_ };
    setup(ctx, 1, 1);
    lpf_memslot_t ga;
    lpf_register_global(ctx, area, sizeof area, &ga);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    if (p_ > 1 && s_ == 0) {
        int bad = 0;
        for (int i = 0; i < READS; ++i) {
            uint64_t v = 0;
            const size_t k = (size_t)i % 4;
            if (sstep_direct_get(ctx, 1, ga, k * 8, &v, 8) != LPF_SUCCESS || v != area[k] + 1) bad++;
        }
        CHECK(bad == 0);
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_deregister(ctx, ga);
    finish(ctx, s_, args);
}

/* bsp_direct_get of every size class from every other process at once
 * (each reads while the others read it): nothing, a word, just under, at
 * and over the sizes where the engine or MPI change their way (4000-byte
 * pieces, MPI's eager limits, 32 KiB), up to 1 MiB, at odd offsets and
 * lengths too. Every byte is checked: a reply in pieces that the reader
 * did not expect would land in the next read. */
#define DGS_AREA (((size_t)1 << 20) + 64)
static unsigned char dgs_byte(lpf_pid_t q, size_t i)
{
    return (unsigned char)(q * 31u + i * 7u + (i >> 9));
}

SPMD(case_direct_get_sizes)
{
    static const size_t sizes[] = { 0, 1, 8, 3999, 4000, 4001, 4096, 4097, 8000, 12345,
            32768, 32769, 65536, 100003, (size_t)1 << 20 };
    unsigned char *area = malloc(DGS_AREA), *dst = malloc(DGS_AREA);
    for (size_t i = 0; i < DGS_AREA; ++i) area[i] = dgs_byte(s_, i);
    setup(ctx, 1, 1);
    lpf_memslot_t ga;
    lpf_register_global(ctx, area, DGS_AREA, &ga);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    int bad = 0;
    for (lpf_pid_t k = 1; k < p_; ++k) {
        const lpf_pid_t q = (s_ + k) % p_;
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; ++z) {
            const size_t n = sizes[z], off = (z * 13) % 64;
            memset(dst, 0xee, n + 1);
            if (sstep_direct_get(ctx, q, ga, off, dst, n) != LPF_SUCCESS) {
                bad++;
                continue;
            }
            size_t wrong = 0;
            for (size_t i = 0; i < n; ++i) wrong += dst[i] != dgs_byte(q, off + i);
            if (wrong || dst[n] != 0xee) {
                printf("direct_get_sizes: process %u read %zu bytes at %zu from %u: %zu wrong%s\n",
                        s_, n, off, q, wrong, dst[n] != 0xee ? ", wrote past the end" : "");
                bad++;
            }
        }
    }
    CHECK(bad == 0);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_deregister(ctx, ga);
    free(area);
    free(dst);
    finish(ctx, s_, args);
}

/* bsp_direct_get right after a sync reads what the sync put there, even
 * when the owner is still applying it (a third process's put: small, one
 * through the shared body, one direct) and even when the reader's own sync
 * returned first: the owner answers (or, on one node, lets it read) only
 * once it completed that sync. Several rounds, each with new values. */
#define DGA_SMALL 100
#define DGA_MID 200000
#define DGA_BIG ((size_t)3 << 19)
SPMD(case_direct_get_after_sync)
{
    const size_t sizes[3] = { DGA_SMALL, DGA_MID, DGA_BIG };
    const size_t total = DGA_SMALL + DGA_MID + DGA_BIG;
    unsigned char *src = malloc(total), *area = malloc(total), *dst = malloc(DGA_BIG);
    memset(area, 0, total);
    setup(ctx, 2, 4);
    lpf_memslot_t ls, ga;
    lpf_register_local(ctx, src, total, &ls);
    lpf_register_global(ctx, area, total, &ga);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_pid_t next = (s_ + 1) % p_;
    int bad = 0;
    for (unsigned round = 1; round <= 20 && !bad; ++round) {
        memset(src, (int)(round * 8 + s_), total);
        /* odd rounds without the direct put: then nothing makes the
         * writer's sync wait for the owner */
        const int nz = round % 2 ? 2 : 3;
        size_t off = 0;
        for (int z = 0; z < nz; ++z) {
            OK(lpf_put(ctx, ls, off, next, ga, off, sizes[z], LPF_MSG_DEFAULT));
            off += sizes[z];
        }
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (lpf_pid_t k = p_ - 1; k >= 1; --k) {
            const lpf_pid_t q = (s_ + k) % p_, writer = (q + p_ - 1) % p_;
            const unsigned char want = (unsigned char)(round * 8 + writer);
            off = 0;
            for (int z = 0; z < nz; ++z) {
                if (sstep_direct_get(ctx, q, ga, off, dst, sizes[z]) != LPF_SUCCESS) bad++;
                size_t i = 0;
                while (i < sizes[z] && dst[i] == want) i++;
                if (i < sizes[z]) {
                    printf("direct_get_after_sync: round %u, process %u read %zu bytes of %u: "
                           "byte %zu is %u, not %u\n", round, s_, sizes[z], q, i, dst[i], want);
                    bad++;
                }
                off += sizes[z];
            }
        }
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    }
    CHECK(bad == 0);
    lpf_deregister(ctx, ls);
    lpf_deregister(ctx, ga);
    free(src);
    free(area);
    free(dst);
    finish(ctx, s_, args);
}

SPMD(case_check_values)
{
    struct sstep_sync_info info;
    memset(&info, 0, sizeof info);
    info.check = 42;
    OK(sstep_sync_ext(ctx, &info));
    CHECK(!info.mismatch);
    memset(&info, 0, sizeof info);
    info.check = s_ == p_ - 1 ? 43 : 42;
    OK(sstep_sync_ext(ctx, &info));
    if (p_ > 1) {
        CHECK(info.mismatch);
        if (s_ == p_ - 1) CHECK(info.peer == 0 && info.peer_check == 42);
        else CHECK(info.peer == p_ - 1 && info.peer_check == 43);
    } else {
        CHECK(!info.mismatch);
    }
    finish(ctx, s_, args);
}

/* ------------------------------------------------------------------ */
/* Sections: early leave, nesting, rehook, probe                        */
/* ------------------------------------------------------------------ */

SPMD(case_leave_early)
{
    int *out = args.output;
    if (s_ == p_ - 1 && p_ > 1) return;   /* leaves without syncing */
    lpf_err_t a = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_err_t b = lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s_ == 0 && out) *out = (p_ == 1 || (a == LPF_ERR_FATAL && b == LPF_ERR_FATAL)) ? 0 : 1;
}

static void nested_spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)s;
    (void)p;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(ctx, &m);
    if (s == 0) *(lpf_pid_t *)args.output = m.p;
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

SPMD(case_sections)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    OK(lpf_probe(ctx, &m));
    if (s_ == 0) CHECK(m.p == *(const lpf_pid_t *)args.input);
    if (s_ != 0) CHECK(args.input == NULL);
    /* a nested section (threads inside this process) */
    lpf_pid_t inner_p = 0;
    lpf_args_t a = LPF_NO_ARGS;
    a.output = &inner_p;
    a.output_size = sizeof inner_p;
    OK(lpf_exec(ctx, LPF_MAX_P, nested_spmd, a));
    CHECK(inner_p == m.p);
    /* rehook twice, with a sync in between */
    OK(lpf_rehook(ctx, nested_spmd, a));
    CHECK(inner_p == m.p);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_rehook(ctx, nested_spmd, a));
    lpf_args_t fa = args;
    fa.input = NULL;
    fa.input_size = 0;
    finish(ctx, s_, fa);
    if (s_ == 0) *(int *)args.output = *(int *)fa.output;
}

/* ------------------------------------------------------------------ */

struct testcase {
    const char *name;
    lpf_spmd_t f;
    lpf_pid_t P;       /* 0: all */
};

static const struct testcase cases[] = {
    { "fsymbols", case_fsymbols, 0 },
    { "small_puts", case_small_puts, 0 },
    { "many_slots", case_many_slots, 0 },
    { "big", case_big, 0 },
    { "overlap", case_overlap, 0 },
    { "get_before_put", case_get_before_put, 0 },
    { "messages", case_messages, 0 },
    { "remote_size_direct_get", case_remote_size_direct_get, 0 },
    { "direct_get_owner_busy", case_direct_get_owner_busy, 0 },
    { "direct_get_sizes", case_direct_get_sizes, 0 },
    { "direct_get_after_sync", case_direct_get_after_sync, 0 },
    { "check_values", case_check_values, 0 },
    { "sections", case_sections, 0 },
    { "sections_two", case_sections, 2 },
    { "small_puts_two", case_small_puts, 2 },
    { "leave_early", case_leave_early, 0 },
    { "sections_again", case_sections, 0 },
    { "direct_get_burst", case_direct_get_burst, 0 },   /* only when named */
};

int main(int argc, char **argv)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(LPF_ROOT, &m);
    int bad = 0;
    lpf_func_t syms[3] = { (lpf_func_t)seven, (lpf_func_t)eleven, NULL };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const struct testcase *c = &cases[i];
        if (argc > 1) {
            int want = 0;
            for (int a = 1; a < argc; ++a) want |= strcmp(argv[a], c->name) == 0;
            if (!want) continue;
        } else if (c->f == case_direct_get_burst) {
            continue;
        }
        int result = -1;
        lpf_args_t a = LPF_NO_ARGS;
        a.input = &m.p;
        a.input_size = sizeof m.p;
        a.output = &result;
        a.output_size = sizeof result;
        a.f_symbols = syms;
        a.f_size = 3;
        lpf_pid_t P = c->P ? c->P : LPF_MAX_P;
        lpf_err_t rc = lpf_exec(LPF_ROOT, P, c->f, a);
        int want_fatal = c->f == case_leave_early && m.p > 1;
        int ok = (want_fatal ? rc == LPF_ERR_FATAL : rc == LPF_SUCCESS) && result == 0;
        printf("%-24s p=%u: %s (exec %d, failed checks %d)\n", c->name, m.p,
                ok ? "ok" : "FAILED", rc, result);
        bad |= !ok;
    }
    fflush(stdout);
    return bad ? 1 : 0;
}
