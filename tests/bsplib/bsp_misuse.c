/*
 * bsp_misuse CASE P -- a BSPlib program that commits one mistake (or calls
 * bsp_abort), for the subprocess tests of errors.cpp.
 *
 * BSPlib's rule (bsplib.md §8): a run-time error prints one line on stderr
 * naming the primitive, the process and the values, and ends the whole
 * program with a non-zero status; no process hangs. Unless the case says
 * otherwise the mistake is made by the last process (P-1). A mistake that
 * goes unnoticed lets the program finish: it prints "NOT DETECTED" and
 * exits with status 0.
 *
 * Cases whose name starts with "main_" use main itself as the SPMD section.
 *   bsp_misuse --list   prints the case names
 */
#define _GNU_SOURCE
#include <bsp.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *which;   /* the case, as main (pid 0) read it */
static unsigned NP;
static __thread const char *my_case;   /* the case, in every process */

#define IS(name) (strcmp(my_case ? my_case : which, name) == 0)

static void share_case(void);

static unsigned last(void) { return bsp_nprocs() - 1; }
static int culprit(void) { return bsp_pid() == last(); }

static void finish_ok(void)
{
    bsp_sync();
    bsp_end();
}

static void vabort_helper(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bsp_vabort(fmt, ap);
    va_end(ap);
}

static void inner_empty(void)
{
    bsp_begin(2);
    bsp_end();
}

/* ------------------------------------------------------------------ */
/* cases inside a run                                                   */
/* ------------------------------------------------------------------ */

static void spmd(void)
{
    bsp_begin(NP);
    share_case();
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    long x[4] = { 0, 0, 0, 0 };     /* registered, 32 bytes everywhere */
    long y[4] = { 0, 0, 0, 0 };     /* never registered */
    long src[4] = { 1, 2, 3, 4 };
    const unsigned right = (s + 1) % p;

    /* ---- SPMD control ---- */
    if (IS("nested_without_init")) {
        if (culprit()) bsp_begin(2);
        finish_ok();
        return;
    }
    if (IS("mismatch_end_vs_sync")) {     /* the last process ends early */
        bsp_sync();
        if (culprit()) bsp_end();
        bsp_sync();
        bsp_sync();
        bsp_end();
        return;
    }
    if (IS("mismatch_pid0_ends_early")) {
        if (s == 0) bsp_end();
        bsp_sync();
        bsp_end();
        return;
    }
    if (IS("return_without_end")) {       /* a sibling's SPMD function returns */
        bsp_sync();
        if (s != 0 || p == 1) return;
        bsp_sync();
        bsp_end();
        return;
    }
    if (IS("abort_pid0")) {
        bsp_sync();
        if (s == 0) bsp_abort("abort from pid %u: code %d", s, 42);
        bsp_sync();
        printf("AFTER SYNC %u\n", s);
        bsp_end();
        return;
    }
    if (IS("abort_before_sync")) {
        if (culprit()) bsp_abort("early abort by the last process\n");
        bsp_sync();
        printf("AFTER SYNC %u\n", s);
        bsp_end();
        return;
    }
    if (IS("abort_all")) {                /* every process aborts at once */
        bsp_abort("everybody aborts (process %u)", s);
    }
    if (IS("vabort")) {
        if (culprit()) vabort_helper("vabort %d %s", 42, "xyz");
        finish_ok();
        return;
    }
    if (IS("nested_error")) {             /* an error inside a nested run */
        bsp_init(inner_empty, 0, NULL);
        if (culprit()) {
            bsp_begin(2);
            bsp_put(5, src, x, 0, 8);
        }
        finish_ok();
        return;
    }

    /* ---- DRMA ---- */
    bsp_push_reg(x, sizeof x);
    if (IS("put_before_active") && culprit()) bsp_put(right, src, x, 0, 8);
    if (IS("get_before_active") && culprit()) bsp_get(right, x, 0, y, 8);
    if (IS("pop_pending") && culprit()) {
        bsp_push_reg(y, 8);
        bsp_pop_reg(y);
    }
    bsp_sync();

    if (culprit()) {
        if (IS("put_pid")) bsp_put(p, src, x, 0, 8);
        if (IS("get_pid")) bsp_get(p, x, 0, y, 8);
        if (IS("hpput_pid")) bsp_hpput(p + 5, src, x, 0, 8);
        if (IS("hpget_pid")) bsp_hpget(p, x, 0, y, 8);
        if (IS("direct_get_pid")) bsp_direct_get(p, x, 0, y, 8);
        if (IS("send_pid")) bsp_send(p, NULL, src, 8);
        if (IS("hpsend_pid")) bsp_hpsend(p, NULL, src, 8);
        if (IS("put_oob")) bsp_put(right, src, x, 8, 32);
        if (IS("get_oob")) bsp_get(right, x, 24, y, 16);
        if (IS("hpput_oob")) bsp_hpput(right, src, x, 33, 1);
        if (IS("hpget_oob")) bsp_hpget(right, x, 0, y, 33);
        if (IS("direct_get_oob")) bsp_direct_get(right, x, 30, y, 4);
        if (IS("put_oob_overflow")) bsp_put(right, src, x, SIZE_MAX - 2, 8);
        if (IS("get_oob_overflow")) bsp_get(right, x, 8, y, SIZE_MAX - 4);
        if (IS("put_unreg")) bsp_put(right, src, y, 0, 8);
        if (IS("get_unreg")) bsp_get(right, y, 0, x, 8);
        if (IS("put_interior")) bsp_put(right, src, &x[1], 0, 8);
        if (IS("direct_get_unreg")) bsp_direct_get(right, y, 0, x, 8);
        if (IS("put_src_null")) bsp_put(right, NULL, x, 0, 8);
        if (IS("get_dst_null")) bsp_get(right, x, 0, NULL, 8);
        if (IS("pop_unreg")) bsp_pop_reg(y);
        if (IS("pop_too_often")) { bsp_pop_reg(x); bsp_pop_reg(x); }
        if (IS("push_some")) bsp_push_reg(y, sizeof y);
        if (IS("pop_some")) bsp_pop_reg(x);
    }

    if (IS("remote_size_smaller")) {          /* item 33 */
        long z[4];
        bsp_push_reg(z, s == 0 ? 8 : 32);     /* process 0 registered 8 bytes */
        bsp_sync();
        if (culprit()) bsp_put(0, src, z, 0, 16);
        bsp_sync();
        printf("NOT DETECTED\n");
        bsp_end();
        return;
    }
    if (IS("put_remote_null")) {              /* item 44 */
        long z[4];
        bsp_push_reg(s == 0 ? NULL : z, 32);  /* process 0 will never be accessed */
        bsp_sync();
        if (culprit()) bsp_put(0, src, z, 0, 8);
        bsp_sync();
        printf("NOT DETECTED\n");
        bsp_end();
        return;
    }
    if (IS("wider_before_sync")) {            /* item 48 */
        long w[8];
        bsp_push_reg(w, 16);
        bsp_sync();
        bsp_push_reg(w, 64);                  /* active only after the next sync */
        if (culprit()) bsp_put(right, src, w, 0, 32);
        finish_ok();
        return;
    }
    if (IS("narrower_after_sync")) {          /* item 49 */
        long w[8];
        bsp_push_reg(w, 64);
        bsp_push_reg(w, 16);
        bsp_sync();
        if (culprit()) bsp_put(right, src, w, 0, 32);
        finish_ok();
        return;
    }
    if (IS("pop_different")) {                /* item 56 */
        long a[2], b[2];
        bsp_push_reg(a, 16);
        bsp_push_reg(b, 16);
        bsp_sync();
        bsp_pop_reg(culprit() ? (void *)b : (void *)a);
        bsp_sync();
        printf("NOT DETECTED\n");
        bsp_end();
        return;
    }

    /* ---- BSMP ---- */
    if (IS("tagsize_differ")) {               /* item 66 */
        bsp_size_t t = culprit() ? 8 : 4;
        bsp_set_tagsize(&t);
    }
    if (IS("send_tag_null") || IS("get_tag_null") || IS("hpsend_tag_null")) {
        bsp_size_t t = 4;
        bsp_set_tagsize(&t);
        bsp_sync();
        int tag = 1;
        if (IS("send_tag_null") && culprit()) bsp_send(right, NULL, src, 8);
        if (IS("hpsend_tag_null") && culprit()) bsp_hpsend(right, NULL, src, 8);
        bsp_send(s, &tag, src, 8);
        bsp_sync();
        bsp_size_t st;
        if (IS("get_tag_null") && culprit()) bsp_get_tag(&st, NULL);
    }
    if (IS("send_payload_null") && culprit()) bsp_send(right, NULL, NULL, 8);
    if (IS("move_null")) {
        bsp_send(s, NULL, src, 8);
        bsp_sync();
        if (culprit()) bsp_move(NULL, 8);
    }
    if (IS("set_tagsize_null") && culprit()) bsp_set_tagsize(NULL);
    if (IS("get_tag_status_null") && culprit()) bsp_get_tag(NULL, NULL);

    bsp_sync();
    bsp_sync();
    if (s == 0) printf("NOT DETECTED\n");
    bsp_end();
}

/* ------------------------------------------------------------------ */
/* main                                                                 */
/* ------------------------------------------------------------------ */

static const char *const cases[] = {
    /* outside any run */
    "begin0", "init_null", "pid_outside", "sync_outside", "time_outside", "end_outside",
    "put_outside", "push_reg_outside", "abort_outside", "vabort_outside", "end_twice",
    "main_second_begin",
    /* inside */
    "nested_without_init", "mismatch_end_vs_sync", "mismatch_pid0_ends_early",
    "return_without_end", "abort_pid0", "abort_before_sync", "abort_all", "vabort",
    "nested_error",
    "put_before_active", "get_before_active", "pop_pending",
    "put_pid", "get_pid", "hpput_pid", "hpget_pid", "direct_get_pid", "send_pid", "hpsend_pid",
    "put_oob", "get_oob", "hpput_oob", "hpget_oob", "direct_get_oob", "put_oob_overflow",
    "get_oob_overflow", "put_unreg", "get_unreg", "put_interior", "direct_get_unreg",
    "put_src_null", "get_dst_null", "pop_unreg", "pop_too_often", "push_some", "pop_some",
    "remote_size_smaller", "put_remote_null", "wider_before_sync", "narrower_after_sync",
    "pop_different", "tagsize_differ", "send_tag_null", "hpsend_tag_null", "get_tag_null",
    "send_payload_null", "move_null", "set_tagsize_null", "get_tag_status_null",
};
static const size_t ncases = sizeof cases / sizeof cases[0];

/* Right after bsp_begin: pid 0 tells every process the case. On a
 * distributed engine the other processes never ran main, so they cannot
 * know it otherwise. */
static void share_case(void)
{
    int idx = -1;
    if (bsp_pid() == 0)
        for (size_t i = 0; i < ncases; ++i)
            if (strcmp(cases[i], which) == 0) idx = (int)i;
    bsp_push_reg(&idx, sizeof idx);
    bsp_sync();
    if (bsp_pid() != 0) bsp_get(0, &idx, 0, &idx, sizeof idx);
    bsp_sync();
    bsp_pop_reg(&idx);
    bsp_sync();
    my_case = idx >= 0 ? cases[idx] : "unknown";
}


int main(int argc, char **argv)
{
    if (argc == 0) {
        /* a sibling of a main-as-SPMD case */
        bsp_begin(NP);
        share_case();
        if (!IS("end_twice")) bsp_sync();
        bsp_end();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < ncases; ++i) printf("%s\n", cases[i]);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASE P | --list\n", argv[0]);
        return 2;
    }
    which = argv[1];
    NP = (unsigned)atoi(argv[2]);
    long v = 0;

    if (IS("begin0")) { bsp_init(spmd, argc, argv); bsp_begin(0); }
    if (IS("init_null")) bsp_init(NULL, argc, argv);
    if (IS("pid_outside")) printf("%u\n", bsp_pid());
    if (IS("sync_outside")) bsp_sync();
    if (IS("time_outside")) printf("%f\n", bsp_time());
    if (IS("end_outside")) bsp_end();
    if (IS("put_outside")) bsp_put(0, &v, &v, 0, sizeof v);
    if (IS("push_reg_outside")) bsp_push_reg(&v, sizeof v);
    if (IS("abort_outside")) bsp_abort("abort outside: %s", "bye");
    if (IS("vabort_outside")) vabort_helper("vabort outside %d", 7);
    if (IS("end_twice")) {
        bsp_begin(NP);
        share_case();
        bsp_end();
        bsp_end();
    }
    if (IS("main_second_begin")) {
        bsp_begin(NP);
        share_case();
        bsp_sync();
        bsp_end();
        bsp_begin(NP);   /* error: main's run has ended */
        bsp_end();
    }
    if (strncmp(which, "begin0", 6) && strncmp(which, "init_null", 9)
            && strcmp(which, "end_twice") && strncmp(which, "main_", 5)
            && !strstr(which, "outside")) {
        bsp_init(spmd, argc, argv);
        spmd();
        return 0;
    }
    printf("NOT DETECTED\n");
    return 0;
}
