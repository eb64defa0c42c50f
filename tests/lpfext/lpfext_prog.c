/*
 * LPF's extension headers (spec/lpf-ext.md §7 items 2-10) as one program:
 *   lpfext_prog CASE P
 * runs CASE on P processes (threads, or the ranks of bsprun --engine mpi /
 * hybrid, where LPFEXT_CASE=CASE names it to the ranks) and exits 0 with "CASE ok" from process 0 when every check held.
 * Correct cases: attr noc tags zero zerotag tagset. The misuse cases end with
 * status 6 and one line (tests/lpfext/CMakeLists.txt lists the lines).
 */
#include <lpf/core.h>
#include <lpf/tags.h>
#include <lpf/zero.h>
#include <lpf/noc.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *which;
static atomic_int failures;

/* MPI ranks other than 0 run the spmd without main: the case comes from
 * LPFEXT_CASE (read, never written, by the SPMD function's threads); main
 * sets `which` only without it, so that the program's globals are the same
 * on every rank when a section starts (checked mode compares them) */
static const char *case_name(void)
{
    const char *e = getenv("LPFEXT_CASE");
    return e && *e ? e : which;
}

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s: pid %u: check failed at line %d: %s\n", \
        case_name(), s, __LINE__, #c); atomic_fetch_add(&failures, 1); } } while (0)
#define OK(e) CHECK((e) == LPF_SUCCESS)

/* ---------------------------------------------------------------- */
static void case_attr(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    CHECK(LPF_INVALID_TAG == UINT32_MAX);
    CHECK(_LPF_TAGS_VERSION == 202500L && LPF_ZERO_COST_SYNC == 202500L
            && _LPF_NOC_VERSION == 202400L);
    lpf_msg_attr_t ma, za;
    lpf_sync_attr_t sa, zs;
    OK(lpf_tag_create_mattr(ctx, &ma));
    OK(lpf_tag_create_sattr(ctx, &sa));
    OK(lpf_zero_create_mattr(ctx, &za));
    OK(lpf_zero_create_sattr(ctx, &zs));
    lpf_tag_t t = 7;
    OK(lpf_tag_get_mattr(ctx, ma, &t)); CHECK(t == LPF_INVALID_TAG);
    OK(lpf_tag_get_sattr(ctx, zs, &t)); CHECK(t == LPF_INVALID_TAG);
    OK(lpf_tag_get_mattr(ctx, LPF_MSG_DEFAULT, &t)); CHECK(t == LPF_INVALID_TAG);
    size_t es = 9, er = 9;
    OK(lpf_zero_get_expected(ctx, sa, &es, &er)); CHECK(es == 0 && er == 0);
    /* a new attribute behaves as the default */
    uint64_t v = 100 + s, in[2] = { 0, 200 + s }, got = 0;
    lpf_memslot_t vs, is, gs;
    OK(lpf_resize_memory_register(ctx, 3));
    OK(lpf_resize_message_queue(ctx, 4));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_local(ctx, &v, sizeof v, &vs));
    OK(lpf_register_global(ctx, in, sizeof in, &is));
    OK(lpf_register_local(ctx, &got, sizeof got, &gs));
    OK(lpf_sync(ctx, sa));
    OK(lpf_put(ctx, vs, 0, (s + 1) % P, is, 0, 8, ma));
    OK(lpf_get(ctx, (s + 1) % P, is, 8, gs, 0, 8, za));
    OK(lpf_sync(ctx, zs));
    CHECK(in[0] == 100 + (s + P - 1) % P);
    CHECK(got == 200 + (s + 1) % P);
    OK(lpf_sync(ctx, sa));
    /* either extension's destroy frees either's attribute */
    OK(lpf_zero_destroy_mattr(ctx, ma));
    OK(lpf_tag_destroy_mattr(ctx, za));
    OK(lpf_zero_destroy_sattr(ctx, sa));
    OK(lpf_tag_destroy_sattr(ctx, zs));
    OK(lpf_deregister(ctx, vs));
    OK(lpf_deregister(ctx, is));
    OK(lpf_deregister(ctx, gs));
}

/* ---------------------------------------------------------------- */
static void case_noc(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    uint64_t area[8], src = 1000 + s, got = 0;
    lpf_memslot_t *slots = calloc(P, sizeof *slots);
    char (*ser)[16] = calloc(P, 16);
    memset(area, 0, sizeof area);
    area[7] = 7000 + s;
    lpf_memslot_t gslots, gser, na, ns, ng;
    OK(lpf_resize_memory_register(ctx, 2));
    OK(lpf_resize_message_queue(ctx, 2 * P + 4));
    OK(lpf_noc_resize_memory_register(ctx, 6));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_global(ctx, slots, P * sizeof *slots, &gslots));
    OK(lpf_register_global(ctx, ser, P * 16, &gser));
    /* noc registration needs no sync */
    OK(lpf_noc_register(ctx, area, sizeof area, &na));
    OK(lpf_noc_register(ctx, &src, sizeof src, &ns));
    OK(lpf_noc_register(ctx, &got, sizeof got, &ng));
    slots[s] = na;
    char *buf = NULL;
    size_t bn = 0;
    OK(lpf_noc_serialize_slot(ctx, na, &buf, &bn));
    CHECK(bn == 16 && buf != NULL);
    memcpy(ser[s], buf, 16);
    free(buf);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    /* the slot travels by a put */
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q == s) continue;
        OK(lpf_put(ctx, gslots, s * sizeof *slots, q, gslots, s * sizeof *slots,
                sizeof *slots, LPF_MSG_DEFAULT));
        OK(lpf_put(ctx, gser, s * 16, q, gser, s * 16, 16, LPF_MSG_DEFAULT));
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    /* remote puts and gets through it */
    const lpf_pid_t nx = (s + 1) % P, pv = (s + P - 1) % P;
    OK(lpf_noc_put(ctx, ns, 0, nx, slots[nx], s * 8 % 56, 8, LPF_MSG_DEFAULT));
    OK(lpf_noc_get(ctx, nx, slots[nx], 56, ng, 0, 8, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(area[pv * 8 % 56 / 8] == 1000 + pv);
    CHECK(got == 7000 + nx);
    /* serialize / deserialize: a (NULL, 0) slot names the area of pv */
    lpf_memslot_t alias;
    OK(lpf_noc_register(ctx, NULL, 0, &alias));
    OK(lpf_noc_deserialize_slot(ctx, ser[pv], alias));
    got = 0;
    OK(lpf_noc_get(ctx, pv, alias, 56, ng, 0, 8, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(got == 7000 + pv);
    /* deregistration is local and immediate; a new registration is valid at once */
    OK(lpf_deregister(ctx, alias));
    OK(lpf_deregister(ctx, ng));
    uint64_t other = 0;
    lpf_memslot_t no;
    OK(lpf_noc_register(ctx, &other, sizeof other, &no));
    CHECK(no != ng);
    OK(lpf_noc_get(ctx, nx, slots[nx], 56, no, 0, 8, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(other == 7000 + nx);
    OK(lpf_deregister(ctx, no));
    /* large requests (the engines' bulk paths) through noc slots */
    const size_t big = 1 << 20;
    unsigned char *bs = malloc(big), *bd = malloc(big), *bg = malloc(big);
    for (size_t i = 0; i < big; ++i) { bs[i] = (unsigned char)(i * 7 + s); bd[i] = bg[i] = 0; }
    lpf_memslot_t hs, hd, hg;
    OK(lpf_noc_register(ctx, bs, big, &hs));
    OK(lpf_noc_register(ctx, bd, big, &hd));
    OK(lpf_noc_register(ctx, bg, big, &hg));
    slots[s] = hd;
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    for (lpf_pid_t q = 0; q < P; ++q)
        if (q != s)
            OK(lpf_put(ctx, gslots, s * sizeof *slots, q, gslots, s * sizeof *slots,
                    sizeof *slots, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_noc_put(ctx, hs, 0, nx, slots[nx], 0, big, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_noc_get(ctx, nx, slots[nx], 0, hg, 0, big, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    size_t bad = 0;
    for (size_t i = 0; i < big; ++i) {
        bad += bd[i] != (unsigned char)(i * 7 + pv);
        bad += bg[i] != (unsigned char)(i * 7 + s);   /* nx holds what s put there */
    }
    CHECK(bad == 0);
    OK(lpf_deregister(ctx, hs));
    OK(lpf_deregister(ctx, hd));
    OK(lpf_deregister(ctx, hg));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    free(bs); free(bd); free(bg);
    /* a zero-cost superstep through noc slots: a put to nx, a get from nx
     * (the get reads at once; it counts as received) */
    slots[s] = na;
    for (lpf_pid_t q = 0; q < P; ++q)
        if (q != s)
            OK(lpf_put(ctx, gslots, s * sizeof *slots, q, gslots, s * sizeof *slots,
                    sizeof *slots, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_sync_attr_t za;
    lpf_memslot_t nz;
    uint64_t got2 = 0;
    OK(lpf_noc_register(ctx, &got2, sizeof got2, &nz));
    OK(lpf_zero_create_sattr(ctx, &za));
    OK(lpf_zero_set_expected(ctx, 1, 2, za));
    src = 3000 + s;
    OK(lpf_noc_put(ctx, ns, 0, nx, slots[nx], s * 8 % 56, 8, LPF_MSG_DEFAULT));
    OK(lpf_noc_get(ctx, nx, slots[nx], 56, nz, 0, 8, LPF_MSG_DEFAULT));
    OK(lpf_sync(ctx, za));
    CHECK(area[pv * 8 % 56 / 8] == 3000 + pv);
    CHECK(got2 == 7000 + nx);
    OK(lpf_zero_destroy_sattr(ctx, za));
    OK(lpf_deregister(ctx, nz));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_deregister(ctx, ns));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));   /* peers are done with na */
    OK(lpf_deregister(ctx, na));
    OK(lpf_deregister(ctx, gslots));
    OK(lpf_deregister(ctx, gser));
    free(slots);
    free(ser);
}

/* ---------------------------------------------------------------- */
/* set A = pids 0..h-1, set B = h..P-1 with h = (P+1)/2 */
static atomic_int a_done;   /* threads only: A's syncs finished */

static int on_threads(void) { return getenv("OMPI_COMM_WORLD_SIZE") == NULL; }

static void case_tags(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    const lpf_pid_t h = (P + 1) / 2;
    const int inA = s < h;
    const lpf_pid_t lo = inA ? 0 : h, n = inA ? h : P - h;
    const lpf_pid_t nx = lo + (s - lo + 1) % n;   /* next in my set */
    uint64_t mine = 10 + s, box[4] = { 0, 0, 0, 0 };
    lpf_memslot_t ms, bs;
    OK(lpf_resize_memory_register(ctx, 2));
    OK(lpf_resize_message_queue(ctx, 8));
    OK(lpf_resize_tag_register(ctx, 2));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_local(ctx, &mine, 8, &ms));
    OK(lpf_register_global(ctx, box, sizeof box, &bs));
    lpf_tag_t tA, tB;
    OK(lpf_tag_create(ctx, inA, &tA));
    OK(lpf_tag_create(ctx, !inA, &tB));
    CHECK(tA != tB && tA != LPF_INVALID_TAG);
    /* MPI: A tells B by a file that its syncs are over */
    const char *flag = getenv("LPFEXT_FLAG");
    if (s == 0 && flag) unlink(flag);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_tag_t my = inA ? tA : tB;
    lpf_msg_attr_t ma;
    lpf_sync_attr_t sa;
    OK(lpf_tag_create_mattr(ctx, &ma));
    OK(lpf_tag_create_sattr(ctx, &sa));
    OK(lpf_tag_set_mattr(ctx, my, ma));
    OK(lpf_tag_set_sattr(ctx, my, sa));
    lpf_tag_t t;
    OK(lpf_tag_get_sattr(ctx, sa, &t)); CHECK(t == my);
    /* item 3: each set's sync completes its own requests only */
    OK(lpf_put(ctx, ms, 0, nx, bs, 0, 8, ma));                       /* tagged */
    OK(lpf_get(ctx, nx, bs, 24, bs, 8, 8, ma));                       /* tagged */
    OK(lpf_put(ctx, ms, 0, (s + 1) % P, bs, 16, 8, LPF_MSG_DEFAULT)); /* untagged */
    box[3] = 500 + s;
    if (!inA) {
        /* item 4: B computes until A's syncs are over; were A's syncs to
         * wait for B, this would never end (the test's timeout) */
        if (on_threads()) while (atomic_load(&a_done) < (int)h) usleep(1000);
        else if (flag) while (access(flag, F_OK) != 0) usleep(1000);
    }
    OK(lpf_sync(ctx, sa));
    CHECK(box[0] == 10 + (lo + (s - lo + n - 1) % n));
    CHECK(box[1] == 500 + nx);
    CHECK(box[2] == 0);   /* the untagged put is still pending */
    for (int k = 0; k < 50; ++k) OK(lpf_sync(ctx, sa));   /* among the set only */
    CHECK(box[2] == 0);
    if (inA) atomic_fetch_add(&a_done, 1);
    if (s == 0 && flag) {
        FILE *f = fopen(flag, "w");
        CHECK(f != NULL);
        if (f) fclose(f);
    }
    /* item 5: a tagged put not synced by its tag completes at a default sync */
    mine = 20 + s;
    OK(lpf_put(ctx, ms, 0, nx, bs, 0, 8, ma));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    CHECK(box[0] == 20 + (lo + (s - lo + n - 1) % n));
    CHECK(box[2] == 20 + (s + P - 1) % P);   /* its source is read at the sync */
    OK(lpf_tag_destroy_mattr(ctx, ma));
    OK(lpf_tag_destroy_sattr(ctx, sa));
    OK(lpf_tag_destroy(ctx, tA));
    OK(lpf_tag_destroy(ctx, tB));
    /* a tag can be created again */
    OK(lpf_tag_create(ctx, true, &tA));
    OK(lpf_tag_destroy(ctx, tA));
    OK(lpf_deregister(ctx, ms));
    OK(lpf_deregister(ctx, bs));
}

/* ---------------------------------------------------------------- */
/* item 7: puts, gets, self-requests, zero-size requests, no barrier */
static void case_zero(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    const lpf_pid_t nx = (s + 1) % P, pv = (s + P - 1) % P;
    uint64_t out = 0, box[3] = { 0, 0, 0 }, cst = 900 + s, got = 0;
    lpf_memslot_t os, bs, cs, gs;
    OK(lpf_resize_memory_register(ctx, 4));
    OK(lpf_resize_message_queue(ctx, 2 * P + 8));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_local(ctx, &out, 8, &os));
    OK(lpf_register_global(ctx, box, sizeof box, &bs));
    OK(lpf_register_global(ctx, &cst, 8, &cs));
    OK(lpf_register_local(ctx, &got, 8, &gs));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_sync_attr_t za;
    OK(lpf_zero_create_sattr(ctx, &za));
    /* sent: to next (8 bytes), to next (0 bytes), to myself = 3;
     * received: 2 from the previous, 1 from myself, my get = 4 */
    OK(lpf_zero_set_expected(ctx, 3, 4, za));
    size_t es, er;
    OK(lpf_zero_get_expected(ctx, za, &es, &er));
    CHECK(es == 3 && er == 4);
    for (uint64_t k = 1; k <= 30; ++k) {
        out = k * 1000 + s;
        OK(lpf_put(ctx, os, 0, nx, bs, 0, 8, LPF_MSG_DEFAULT));
        OK(lpf_put(ctx, os, 0, nx, bs, 8, 0, LPF_MSG_DEFAULT));
        OK(lpf_put(ctx, os, 0, s, bs, 16, 8, LPF_MSG_DEFAULT));
        OK(lpf_get(ctx, nx, cs, 0, gs, 0, 8, LPF_MSG_DEFAULT));
        size_t r = 0, sn = 0;
        OK(lpf_zero_get_status(ctx, za, &r, &sn));
        CHECK(sn == 3);
        if (s == 0 && k % 10 == 0) usleep(20000);   /* the others run ahead */
        OK(lpf_sync(ctx, za));
        /* the previous process's message of this superstep, not a later one */
        CHECK(box[0] == k * 1000 + pv);
        CHECK(box[2] == k * 1000 + s);
        CHECK(got == 900 + nx);
        if (k == 15) OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));   /* mixed with ordinary syncs */
    }
    OK(lpf_zero_destroy_sattr(ctx, za));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_deregister(ctx, os));
    OK(lpf_deregister(ctx, bs));
    OK(lpf_deregister(ctx, cs));
    OK(lpf_deregister(ctx, gs));
}

/* item 8: zero-cost + tag: counts per phase */
static void case_zerotag(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    const lpf_pid_t h = (P + 1) / 2;
    const int inA = s < h;
    const lpf_pid_t lo = inA ? 0 : h, n = inA ? h : P - h;
    const lpf_pid_t nx = lo + (s - lo + 1) % n, pv = lo + (s - lo + n - 1) % n;
    uint64_t out = 0, box = 0, other = 0;
    lpf_memslot_t os, bs, xs;
    OK(lpf_resize_memory_register(ctx, 3));
    OK(lpf_resize_message_queue(ctx, 8));
    OK(lpf_resize_tag_register(ctx, 2));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_local(ctx, &out, 8, &os));
    OK(lpf_register_global(ctx, &box, 8, &bs));
    OK(lpf_register_global(ctx, &other, 8, &xs));
    lpf_tag_t tA, tB;
    OK(lpf_tag_create(ctx, inA, &tA));
    OK(lpf_tag_create(ctx, !inA, &tB));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_msg_attr_t ma;
    lpf_sync_attr_t za;
    OK(lpf_zero_create_mattr(ctx, &ma));
    OK(lpf_zero_create_sattr(ctx, &za));
    OK(lpf_tag_set_mattr(ctx, inA ? tA : tB, ma));
    OK(lpf_tag_set_sattr(ctx, inA ? tA : tB, za));
    OK(lpf_zero_set_expected(ctx, 1, 1, za));   /* the phase's counts only */
    for (uint64_t k = 1; k <= 20; ++k) {
        out = k * 100 + s;
        OK(lpf_put(ctx, os, 0, nx, bs, 0, 8, ma));
        OK(lpf_put(ctx, os, 0, (s + 1) % P, xs, 0, 8, LPF_MSG_DEFAULT)); /* untagged: waits */
        OK(lpf_sync(ctx, za));
        CHECK(box == k * 100 + pv);
        CHECK(other == 0);
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));   /* now the untagged ones */
        CHECK(other == k * 100 + (s + P - 1) % P);
        other = 0;
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    }
    OK(lpf_zero_destroy_mattr(ctx, ma));
    OK(lpf_zero_destroy_sattr(ctx, za));
    OK(lpf_tag_destroy(ctx, tA));
    OK(lpf_tag_destroy(ctx, tB));
}

/* tags whose active sets are not ranges: the even and the odd pids, each
 * a ring of puts and gets synced by its tag, then zero-cost syncs of it */
static void case_tagset(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    const int even = s % 2 == 0;
    const lpf_pid_t n = even ? (P + 1) / 2 : P / 2, me = s / 2;
    const lpf_pid_t nx = 2 * ((me + 1) % n) + (even ? 0 : 1);
    const lpf_pid_t pv = 2 * ((me + n - 1) % n) + (even ? 0 : 1);
    uint64_t mine = 10 + s, box[3] = { 0, 0, 0 };
    lpf_memslot_t ms, bs;
    OK(lpf_resize_memory_register(ctx, 2));
    OK(lpf_resize_message_queue(ctx, 8));
    OK(lpf_resize_tag_register(ctx, 2));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_local(ctx, &mine, 8, &ms));
    OK(lpf_register_global(ctx, box, sizeof box, &bs));
    lpf_tag_t tE, tO;
    OK(lpf_tag_create(ctx, even, &tE));
    OK(lpf_tag_create(ctx, !even, &tO));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    const lpf_tag_t my = even ? tE : tO;
    lpf_msg_attr_t ma;
    lpf_sync_attr_t sa, za;
    OK(lpf_tag_create_mattr(ctx, &ma));
    OK(lpf_tag_create_sattr(ctx, &sa));
    OK(lpf_zero_create_sattr(ctx, &za));
    OK(lpf_tag_set_mattr(ctx, my, ma));
    OK(lpf_tag_set_sattr(ctx, my, sa));
    OK(lpf_tag_set_sattr(ctx, my, za));
    OK(lpf_zero_set_expected(ctx, 1, 1, za));
    box[2] = 500 + s;
    OK(lpf_put(ctx, ms, 0, nx, bs, 0, 8, ma));
    OK(lpf_get(ctx, nx, bs, 16, bs, 8, 8, ma));
    OK(lpf_sync(ctx, sa));
    CHECK(box[0] == 10 + pv);
    CHECK(box[1] == 500 + nx);
    for (uint64_t k = 1; k <= 30; ++k) {
        mine = k * 100 + s;
        OK(lpf_put(ctx, ms, 0, nx, bs, 0, 8, ma));
        OK(lpf_sync(ctx, k % 2 ? za : sa));
        CHECK(box[0] == k * 100 + pv);
    }
    /* tagged syncs where only some processes put: the others' earlier
     * puts are not applied again */
    for (uint64_t k = 31; k <= 50; ++k) {
        mine = k * 100 + s;
        const uint64_t before = box[0];
        if ((k + s / 2) % 3 == 0) OK(lpf_put(ctx, ms, 0, nx, bs, 0, 8, ma));
        box[1] = 0;
        OK(lpf_sync(ctx, sa));
        CHECK(box[0] == ((k + pv / 2) % 3 == 0 ? k * 100 + pv : before));
    }
    OK(lpf_zero_destroy_sattr(ctx, za));
    OK(lpf_tag_destroy_mattr(ctx, ma));
    OK(lpf_tag_destroy_sattr(ctx, sa));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_tag_destroy(ctx, tE));
    OK(lpf_tag_destroy(ctx, tO));
    OK(lpf_deregister(ctx, ms));
    OK(lpf_deregister(ctx, bs));
}

/* ---------------------------------------------------------------- */
/* misuse: each ends with status 6 and one line */
static void case_misuse(lpf_t ctx, lpf_pid_t s, lpf_pid_t P)
{
    const char *which = case_name();
    uint64_t v[2] = { 1, 2 };
    lpf_memslot_t ls, gs;
    OK(lpf_resize_memory_register(ctx, 3));
    OK(lpf_resize_message_queue(ctx, 2 * P + 2));
    OK(lpf_resize_tag_register(ctx, 1));
    OK(lpf_noc_resize_memory_register(ctx, 2));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    OK(lpf_register_local(ctx, v, sizeof v, &ls));
    OK(lpf_register_global(ctx, v, sizeof v, &gs));
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    lpf_msg_attr_t ma;
    lpf_sync_attr_t sa;
    OK(lpf_tag_create_mattr(ctx, &ma));
    OK(lpf_tag_create_sattr(ctx, &sa));
    lpf_tag_t t;
    if (!strcmp(which, "tag_cap")) {
        OK(lpf_tag_create(ctx, true, &t));
        OK(lpf_tag_create(ctx, true, &t));   /* capacity 1 */
    } else if (!strcmp(which, "tag_destroyed")) {
        OK(lpf_tag_create(ctx, true, &t));
        OK(lpf_tag_destroy(ctx, t));
        OK(lpf_tag_set_mattr(ctx, t, ma));
    } else if (!strcmp(which, "tag_inactive")) {
        OK(lpf_tag_create(ctx, s == 0, &t));
        OK(lpf_tag_set_mattr(ctx, t, ma));
        if (s == P - 1) OK(lpf_put(ctx, ls, 0, 0, gs, 0, 8, ma));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    } else if (!strcmp(which, "tag_peer_inactive")) {
        OK(lpf_tag_create(ctx, s == 0, &t));
        OK(lpf_tag_set_mattr(ctx, t, ma));
        if (s == 0) OK(lpf_put(ctx, ls, 0, P - 1, gs, 0, 8, ma));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    } else if (!strcmp(which, "tag_sync_inactive")) {
        OK(lpf_tag_create(ctx, s == 0, &t));
        OK(lpf_tag_set_sattr(ctx, t, sa));
        if (s == P - 1) OK(lpf_sync(ctx, sa));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    } else if (!strcmp(which, "tag_pair_stalls")) {
        /* the odd pids are a tag; process 3 never makes its tagged sync:
         * the watchdog's line (process 1's, 3 s) names pids 1 and 3, not
         * their positions in the member set; the even ones wait longer */
        OK(lpf_tag_create(ctx, s % 2 == 1, &t));
        OK(lpf_tag_set_sattr(ctx, t, sa));
        if (s == 1) OK(lpf_sync(ctx, sa));
        else if (s == 3) sleep(30);
        else {
            sleep(2);
            OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        }
    } else if (!strcmp(which, "tag_sync_other")) {
        /* all active in two tags; process 0 syncs one, the others the other */
        lpf_tag_t u;
        OK(lpf_resize_tag_register(ctx, 2));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        OK(lpf_tag_create(ctx, true, &t));
        OK(lpf_tag_create(ctx, true, &u));
        OK(lpf_tag_set_sattr(ctx, s == 0 ? t : u, sa));
        OK(lpf_sync(ctx, sa));
    } else if (!strcmp(which, "zero_never")) {
        lpf_sync_attr_t za;
        OK(lpf_zero_create_sattr(ctx, &za));
        OK(lpf_zero_set_expected(ctx, 0, 1, za));   /* nobody sends */
        OK(lpf_sync(ctx, za));
    } else if (!strcmp(which, "zero_extra")) {
        lpf_sync_attr_t za;
        OK(lpf_zero_create_sattr(ctx, &za));
        OK(lpf_zero_set_expected(ctx, 2, 1, za));   /* two arrive */
        OK(lpf_put(ctx, ls, 0, (s + 1) % P, gs, 0, 8, LPF_MSG_DEFAULT));
        OK(lpf_put(ctx, ls, 8, (s + 1) % P, gs, 8, 8, LPF_MSG_DEFAULT));
        OK(lpf_sync(ctx, za));
        OK(lpf_sync(ctx, za));
    } else if (!strncmp(which, "noc_bounds", 10) || !strncmp(which, "noc_dereg", 9)) {
        /* process 1 (the _x cases: 2) puts through the noc slot of process
         * 0 (the _x cases: 1; on the hybrid engine's 2 x 2 that is thread 1
         * of the other rank) with a bad offset, or after its owner
         * deregistered it */
        const int far = which[strlen(which) - 1] == 'x', dereg = !strncmp(which, "noc_dereg", 9);
        const lpf_pid_t issuer = (far ? 2 : 1) % P, owner = far ? 1 % P : 0;
        lpf_memslot_t *slots = calloc(P, sizeof *slots), nsl, sl;
        OK(lpf_noc_register(ctx, v, 8, &nsl));
        slots[s] = nsl;
        OK(lpf_register_global(ctx, slots, P * sizeof *slots, &sl));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        for (lpf_pid_t q = 0; q < P; ++q)
            if (q != s)
                OK(lpf_put(ctx, sl, s * sizeof *slots, q, sl, s * sizeof *slots,
                        sizeof *slots, LPF_MSG_DEFAULT));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        if (dereg) {
            if (s == owner) OK(lpf_deregister(ctx, nsl));
            OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
        }
        if (s == issuer)
            OK(lpf_noc_put(ctx, ls, 0, owner, slots[owner], dereg ? 0 : 4, 8, LPF_MSG_DEFAULT));
        OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    } else if (!strcmp(which, "reg_zero") || !strcmp(which, "reg_tag")) {
        /* a resize takes effect at an ordinary sync only, not at a
         * zero-cost or tagged one: the 4th registration exceeds 3 */
        lpf_sync_attr_t za;
        lpf_memslot_t x1, x2;
        OK(lpf_resize_memory_register(ctx, 5));
        if (!strcmp(which, "reg_zero")) {
            OK(lpf_zero_create_sattr(ctx, &za));
            OK(lpf_zero_set_expected(ctx, 1, 1, za));
            OK(lpf_put(ctx, ls, 0, s, gs, 0, 8, LPF_MSG_DEFAULT));
            OK(lpf_sync(ctx, za));
        } else {
            OK(lpf_tag_create(ctx, true, &t));
            OK(lpf_tag_set_sattr(ctx, t, sa));
            OK(lpf_sync(ctx, sa));
        }
        OK(lpf_register_global(ctx, v, 8, &x1));
        OK(lpf_register_global(ctx, v, 8, &x2));
    } else if (!strncmp(which, "mix_", 4) && strlen(which) == 6) {
        /* process 0 ends the superstep with one kind of sync, the others
         * with another: O ordinary, Z zero-cost, T tagged, W tagged
         * zero-cost (mix_AB: A at process 0, B elsewhere); each puts to
         * the next process first */
        const char k = s == 0 ? which[4] : which[5];
        lpf_sync_attr_t za;
        OK(lpf_tag_create(ctx, true, &t));
        OK(lpf_zero_create_sattr(ctx, &za));
        if (k == 'T' || k == 'W') OK(lpf_tag_set_sattr(ctx, t, za));
        if (k == 'Z' || k == 'W') OK(lpf_zero_set_expected(ctx, 1, 1, za));
        if (k == 'W') OK(lpf_tag_set_mattr(ctx, t, ma));
        OK(lpf_put(ctx, ls, 0, (s + 1) % P, gs, 0, 8, k == 'W' ? ma : LPF_MSG_DEFAULT));
        OK(lpf_sync(ctx, k == 'O' ? LPF_SYNC_DEFAULT : za));
    } else if (!strcmp(which, "attr_destroyed")) {
        OK(lpf_tag_destroy_sattr(ctx, sa));
        OK(lpf_sync(ctx, sa));
    } else if (!strcmp(which, "attr_default")) {
        OK(lpf_zero_destroy_sattr(ctx, LPF_SYNC_DEFAULT));
    } else {
        fprintf(stderr, "unknown case %s\n", which);
        exit(2);
    }
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
    sleep(5);   /* a process that found the misuse ends the run before this */
    fprintf(stderr, "%s: pid %u: the misuse was not caught\n", which, s);
    exit(1);
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t P, lpf_args_t args)
{
    (void)args;
    const char *which = case_name();
    if (!which) { fprintf(stderr, "lpfext_prog: LPFEXT_CASE is not set\n"); exit(2); }
    if (!strcmp(which, "attr")) case_attr(ctx, s, P);
    else if (!strcmp(which, "noc")) case_noc(ctx, s, P);
    else if (!strcmp(which, "tags")) case_tags(ctx, s, P);
    else if (!strcmp(which, "zero")) case_zero(ctx, s, P);
    else if (!strcmp(which, "zerotag")) case_zerotag(ctx, s, P);
    else if (!strcmp(which, "tagset")) case_tagset(ctx, s, P);
    else case_misuse(ctx, s, P);
    OK(lpf_sync(ctx, LPF_SYNC_DEFAULT));
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: lpfext_prog CASE P\n"); return 2; }
    const char *e = getenv("LPFEXT_CASE");
    const char *name = argv[1];
    if (!e || !*e) which = name;
    lpf_pid_t P = (lpf_pid_t)atoi(argv[2]);
    if (lpf_exec(LPF_ROOT, P, spmd, LPF_NO_ARGS) != LPF_SUCCESS) {
        fprintf(stderr, "%s: lpf_exec failed\n", name);
        return 1;
    }
    if (atomic_load(&failures)) return 1;
    printf("%s ok\n", name);
    return 0;
}
