/*
 * pub_mpi [case...] -- the PUB layer on the range syncs of an engine, with
 * nothing shared between processes: run it with
 * `bsprun --engine mpi -n N pub_mpi` (N = 2, 3, 4) or on threads.
 * (tests/pub shares memory between processes, so it cannot run on MPI.)
 *
 * Every case is a pub_exec over all N processes. Processes count their
 * failed checks (printing each on stderr) and send the count to pid 0 at
 * the end of the case; pid 0 prints one line per case ("ok NAME" or
 * "failed NAME") and the program exits with status 1 if any failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <pub.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local int fails;
static _Thread_local int s_, p_;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fails++;                                                                \
            fprintf(stderr, "FAIL %s:%d (process %d of %d): %s\n", __FILE__, __LINE__, \
                    s_, p_, #cond);                                                 \
        }                                                                           \
    } while (0)

static void nap(double sec)
{
    struct timespec ts = { (time_t)sec, (long)((sec - (double)(time_t)sec) * 1e9) };
    nanosleep(&ts, NULL);
}

static int msg_int(pbspmsg m)
{
    int v;
    memcpy(&v, bspmsg_data(m), sizeof v);
    return v;
}

/* ---- ring of messages in the root object (items 12, 14, 15) */
static void c_ring(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    for (int r = 0; r < 5; ++r) {
        int v = 100 * r + s;
        bsp_send(bsp, (s + 1) % p, &v, sizeof v);
        bsp_send(bsp, s, NULL, 0);       /* an empty self-message */
        bsp_sync(bsp);
        CHECK(bsp_nmsgs(bsp) == 2);
        int left = (s + p - 1) % p;
        for (int i = 0; i < bsp_nmsgs(bsp); ++i) {
            pbspmsg m = bsp_getmsg(bsp, i);
            if (bspmsg_src(m) == s) CHECK(bspmsg_size(m) == 0);
            else {
                CHECK(bspmsg_src(m) == left);
                CHECK(msg_int(m) == 100 * r + left);
            }
        }
    }
    /* all-to-all, 3 numbered messages: order by source, then issue */
    for (int d = 0; d < p; ++d)
        for (int k = 0; k < 3; ++k) {
            int v = 10 * s + k;
            bsp_send(bsp, d, &v, sizeof v);
        }
    bsp_sync(bsp);
    CHECK(bsp_nmsgs(bsp) == 3 * p);
    for (int i = 0; i < bsp_nmsgs(bsp) && i < 3 * p; ++i) {
        pbspmsg m = bsp_getmsg(bsp, i);
        CHECK(bspmsg_src(m) == i / 3);
        CHECK(msg_int(m) == 10 * (i / 3) + i % 3);
    }
}

/* ---- halves sync independently, more often in one (items 26, 27) */
static void c_halves(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp), h = p / 2;
    int part[2] = { h, p };
    tbsp sub;
    bsp_partition(bsp, &sub, 2, part);
    int sp = bsp_nprocs(&sub), ss = bsp_pid(&sub);
    CHECK(sp == (s < h ? h : p - h));
    CHECK(ss == (s < h ? s : s - h));
    int rounds = s < h ? 3 : 20;
    for (int r = 0; r < rounds; ++r) {
        int v = 1000 * r + ss;
        bsp_send(&sub, (ss + 1) % sp, &v, sizeof v);
        bsp_sync(&sub);
        CHECK(bsp_nmsgs(&sub) == 1);
        if (bsp_nmsgs(&sub) == 1) CHECK(msg_int(bsp_getmsg(&sub, 0)) == 1000 * r + (ss + sp - 1) % sp);
    }
    bsp_done(&sub);
    /* the parent syncs on */
    int v = s;
    bsp_send(bsp, 0, &v, sizeof v);
    bsp_sync(bsp);
    CHECK(bsp_nmsgs(bsp) == (s == 0 ? p : 0));
}

/* ---- DRMA in disjoint pairs: put at an offset, get sees the pre-put
 * value, put beats get (item 67), large transfers */
static void c_pairs(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    int part[8], n = 0;
    for (int k = 2; k < p; k += 2) part[n++] = k;
    part[n++] = p;
    tbsp sub;
    bsp_partition(bsp, &sub, n, part);
    int sp = bsp_nprocs(&sub), ss = bsp_pid(&sub), o = (ss + 1) % sp;
    int box[4] = { 0, 0, 0, 0 };
    enum { BIG = 1 << 20 };
    char *big = malloc(BIG), *bigin = malloc(BIG);
    for (int i = 0; i < BIG; ++i) big[i] = (char)(i * 7 + s);
    bsp_push_reg(&sub, box, sizeof box);
    bsp_push_reg(&sub, big, BIG);
    bsp_sync(&sub);
    for (int r = 1; r <= 4; ++r) {
        box[0] = 10 * r + s;
        int got = -1, v = 100 * r + s;
        bsp_sync(&sub);
        bsp_get(&sub, o, box, 0, &got, sizeof got);
        bsp_put(&sub, o, &v, box, 0, sizeof v);
        bsp_sync(&sub);
        /* the get read the value before the put landed there */
        int from = s - ss + o;
        CHECK(sp == 1 || got == 10 * r + from);
        if (sp > 1) CHECK(box[0] == 100 * r + (s - ss + (ss + sp - 1) % sp));
    }
    /* put beats get on the same bytes */
    int w = 77 + s, dst = 0;
    bsp_put(&sub, ss, &w, box, 2 * sizeof(int), sizeof w);
    bsp_get(&sub, ss, box, 2 * sizeof(int), &box[2], sizeof w);
    (void)dst;
    bsp_sync(&sub);
    CHECK(box[2] == 77 + s);
    /* a 1 MiB get */
    bsp_get(&sub, o, big, 0, bigin, BIG);
    bsp_sync(&sub);
    int from = s - ss + o, bad = 0;
    for (int i = 0; i < BIG; ++i)
        if (bigin[i] != (char)(i * 7 + from)) bad++;
    CHECK(bad == 0);
    bsp_pop_reg(&sub, big);
    bsp_pop_reg(&sub, box);
    bsp_sync(&sub);
    bsp_done(&sub);
    free(big);
    free(bigin);
    bsp_sync(bsp);
}

/* ---- oblivious syncs: counts, hold-back, a sender ahead (items 42-45, 48) */
static void c_obl(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    for (int k = 0; k <= 5; k += 5) {
        for (int d = 0; d < p; ++d)
            for (int i = 0; i < k; ++i) {
                int v = 100 * s + i;
                bsp_send(bsp, d, &v, sizeof v);
            }
        bsp_oblsync(bsp, k * p);
        CHECK(bsp_nmsgs(bsp) == k * p);
        for (int i = 0; i < bsp_nmsgs(bsp); ++i)
            CHECK(msg_int(bsp_getmsg(bsp, i)) == 100 * (i / k) + i % k);
    }
    /* pid 0 runs 5 supersteps ahead of pid 1, which sleeps first */
    if (p == 1) {
        /* nobody to run ahead of */
    } else if (s == 0) {
        for (int r = 0; r < 5; ++r) {
            int v = 1000 + r;
            bsp_hpsend(bsp, 1, &v, sizeof v);
            bsp_oblsync(bsp, 0);
        }
    } else if (s == 1) {
        nap(0.2);
        for (int r = 0; r < 5; ++r) {
            bsp_oblsync(bsp, 1);
            CHECK(bsp_nmsgs(bsp) == 1);
            if (bsp_nmsgs(bsp) == 1) CHECK(msg_int(bsp_getmsg(bsp, 0)) == 1000 + r);
        }
    } else {
        for (int r = 0; r < 5; ++r) bsp_oblsync(bsp, 0);
    }
    /* oblsync and sync alternating */
    for (int r = 0; r < 4; ++r) {
        int v = r * 10 + s;
        bsp_send(bsp, (s + 1) % p, &v, sizeof v);
        if (r & 1) bsp_sync(bsp);
        else bsp_oblsync(bsp, 1);
        CHECK(bsp_nmsgs(bsp) == 1);
        if (bsp_nmsgs(bsp) == 1) CHECK(msg_int(bsp_getmsg(bsp, 0)) == r * 10 + (s + p - 1) % p);
    }
    bsp_sync(bsp);
}

/* ---- a sender far ahead: pid 0 sends pid 1 400 oblivious supersteps of
 * messages from 4 bytes to 3 KiB while pid 1 sleeps (on one node MPI's
 * rings fill and packets go by MPI in between: the order must hold) */
static void c_ahead(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    enum { R = 400, MAXB = 3072 };
    char buf[MAXB];
    if (p == 1) {
        /* nobody to run ahead of */
    } else if (s == 0) {
        for (int r = 0; r < R; ++r) {
            int n = 4 + (r * 997) % (MAXB - 3);
            memset(buf, (char)r, (size_t)n);
            memcpy(buf, &r, sizeof r);
            bsp_send(bsp, 1, buf, (size_t)n);
            bsp_oblsync(bsp, 0);
        }
    } else if (s == 1) {
        nap(0.1);
        for (int r = 0; r < R; ++r) {
            bsp_oblsync(bsp, 1);
            CHECK(bsp_nmsgs(bsp) == 1);
            if (bsp_nmsgs(bsp) != 1) continue;
            pbspmsg m = bsp_getmsg(bsp, 0);
            int n = 4 + (r * 997) % (MAXB - 3), bad = 0;
            CHECK((int)bspmsg_size(m) == n);
            CHECK(msg_int(m) == r);
            const char *d = bspmsg_data(m);
            for (int i = (int)sizeof r; i < n && i < (int)bspmsg_size(m); ++i)
                if (d[i] != (char)r) bad++;
            CHECK(bad == 0);
        }
    } else {
        for (int r = 0; r < R; ++r) bsp_oblsync(bsp, 0);
    }
    bsp_sync(bsp);
}

/* ---- collectives in the root and in a child (items 55, 58, 59) */
static void c_coll(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    int x = s + 1, sum = -1;
    bsp_gallreduce(bsp, 0, p - 1, &x, &sum, 1, bspop_addint, NULL);
    bsp_sync(bsp);
    CHECK(sum == p * (p + 1) / 2);
    int v = 42;
    if (s == 0) bsp_gsend(bsp, 0, p - 1, &v, sizeof v);
    bsp_oblsync(bsp, 1);
    CHECK(bsp_nmsgs(bsp) == 1);
    if (p >= 2) {
        int part[2] = { 1, p };
        tbsp sub;
        bsp_partition(bsp, &sub, 2, part);
        int y = bsp_pid(&sub) + 1, r = -1;
        bsp_gallreduce(&sub, 0, bsp_nprocs(&sub) - 1, &y, &r, 1, bspop_addint, NULL);
        bsp_sync(&sub);
        int n = bsp_nprocs(&sub);
        CHECK(r == n * (n + 1) / 2);
        bsp_done(&sub);
    }
    bsp_sync(bsp);
}

/* ---- nested partitions down to single processes (item 26) */
static void c_nested(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    tbsp lv[4];
    pbsp cur = bsp;
    int depth = 0;
    while (bsp_nprocs(cur) > 1 && depth < 3) {
        int n = bsp_nprocs(cur), part[2] = { n / 2, n };
        bsp_partition(cur, &lv[depth], 2, part);
        cur = &lv[depth++];
        int cn = bsp_nprocs(cur), cs = bsp_pid(cur);
        int v = cs;
        bsp_send(cur, (cs + 1) % cn, &v, sizeof v);
        bsp_sync(cur);
        CHECK(bsp_nmsgs(cur) == 1);
        if (bsp_nmsgs(cur) == 1) CHECK(msg_int(bsp_getmsg(cur, 0)) == (cs + cn - 1) % cn);
    }
    while (depth > 0) bsp_done(&lv[--depth]);
    CHECK(bsp_pid(bsp) == s && bsp_nprocs(bsp) == p);
    bsp_sync(bsp);
}

/* ---- dup isolation (item 38) */
static void c_dup(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    int v = s;
    bsp_send(bsp, (s + 1) % p, &v, sizeof v);
    tbsp d;
    bsp_dup(bsp, &d);
    for (int r = 0; r < 3; ++r) {
        int w = 50 + r;
        bsp_send(&d, (s + p - 1) % p, &w, sizeof w);
        bsp_sync(&d);
        CHECK(bsp_nmsgs(&d) == 1);
        if (bsp_nmsgs(&d) == 1) CHECK(msg_int(bsp_getmsg(&d, 0)) == 50 + r);
    }
    bsp_done(&d);
    bsp_sync(bsp);
    CHECK(bsp_nmsgs(bsp) == 1);
    if (bsp_nmsgs(bsp) == 1) CHECK(msg_int(bsp_getmsg(bsp, 0)) == (s + p - 1) % p);
}

struct pcase {
    const char *name;
    void (*f)(pbsp);
};
static const struct pcase cases[] = {
    { "ring", c_ring }, { "halves", c_halves }, { "pairs_drma", c_pairs }, { "oblsync", c_obl },
    { "ahead", c_ahead },
    { "collectives", c_coll }, { "nested", c_nested }, { "dup", c_dup },
};
enum { NCASES = sizeof cases / sizeof cases[0] };

struct io {
    const struct pcase *c;
    int total;
};

static void spmd(pbsp bsp, void *arg)
{
    struct io *io = arg;   /* pid 0 only */
    s_ = bsp_pid(bsp);
    p_ = bsp_nprocs(bsp);
    /* pid 0 names the case; the others learn it by message */
    int idx = 0;
    if (s_ == 0) {
        idx = (int)(io->c - cases);
        for (int d = 1; d < p_; ++d) bsp_send(bsp, d, &idx, sizeof idx);
    }
    bsp_sync(bsp);
    if (s_ != 0) idx = msg_int(bsp_getmsg(bsp, 0));
    fails = 0;
    cases[idx].f(bsp);
    bsp_send(bsp, 0, &fails, sizeof fails);
    bsp_sync(bsp);
    if (s_ == 0) {
        int total = 0;
        for (int i = 0; i < bsp_nmsgs(bsp); ++i) total += msg_int(bsp_getmsg(bsp, i));
        io->total = total;
    }
}

int main(int argc, char **argv)
{
    int P = pub_maxprocs(), bad = 0;
    for (int k = 0; k < NCASES; ++k) {
        if (argc > 1) {
            int want = 0;
            for (int a = 1; a < argc; ++a) want |= strcmp(argv[a], cases[k].name) == 0;
            if (!want) continue;
        }
        struct io io = { &cases[k], -1 };
        pub_exec(P, spmd, &io);
        printf("%s %s (P = %d)\n", io.total == 0 ? "ok" : "failed", cases[k].name, P);
        fflush(stdout);
        if (io.total != 0) bad = 1;
    }
    return bad;
}
