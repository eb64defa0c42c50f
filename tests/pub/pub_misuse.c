/* PUB run-time errors: `pub_misuse CASE P` commits one mistake in a run of
 * P processes (pub.md §10). Reaching the end prints "NOT DETECTED". */
#include <pub.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *which;
static _Thread_local int reg_a[4];
static pbsp other_obj;   /* item 34: shared by the threads of the pthread engine */

static void nap(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

/* on a distributed engine only rank 0 runs main: the case comes from the
 * environment there (PUB_MISUSE_CASE); read, never written, by the SPMD
 * function's threads */
static const char *case_name(void)
{
    const char *w = which ? which : getenv("PUB_MISUSE_CASE");
    return w ? w : "";
}

#define IS(name) (strcmp(case_name(), name) == 0)

static void spmd(pbsp bsp, void *arg)
{
    (void)arg;
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp), last = p - 1, v = 1;
    tbsp sub;
    if (IS("abort")) {
        if (s == 1) bsp_abort("x=%d", 3);
        bsp_sync(bsp);
        bsp_sync(bsp);
    } else if (IS("getmsg_n")) {
        bsp_sync(bsp);
        if (s == last) bsp_getmsg(bsp, bsp_nmsgs(bsp));
    } else if (IS("getmsg_neg")) {
        if (s == last) bsp_getmsg(bsp, -1);
    } else if (IS("findmsg_p")) {
        if (s == last) bsp_findmsg(bsp, p, 0);
    } else if (IS("findmsg_neg")) {
        if (s == last) bsp_findmsg(bsp, -1, 0);
    } else if (IS("msg_null")) {
        if (s == last) bspmsg_size(NULL);
    } else if (IS("send_p")) {
        if (s == last) bsp_send(bsp, p, &v, sizeof v);
    } else if (IS("hpsend_neg")) {
        if (s == last) bsp_hpsend(bsp, -1, &v, sizeof v);
    } else if (IS("send_null")) {
        if (s == last) bsp_send(bsp, 0, NULL, 4);
    } else if (IS("send_group")) {              /* item 72: group 2..3 of 4 */
        int part[2] = { 2, 4 };
        bsp_partition(bsp, &sub, 2, part);
        if (s == 3) bsp_send(&sub, 5, &v, sizeof v);
        bsp_sync(&sub);
        bsp_done(&sub);
    } else if (IS("part_n0")) {
        int part[1] = { p };
        if (s == last) bsp_partition(bsp, &sub, 0, part);
    } else if (IS("part_null")) {
        if (s == last) bsp_partition(bsp, &sub, 1, NULL);
    } else if (IS("part_last")) {
        int part[2] = { 1, p + 2 };
        if (s == last) bsp_partition(bsp, &sub, 2, part);
    } else if (IS("part_order")) {
        int part[3] = { 2, 1, p };
        if (s == last) bsp_partition(bsp, &sub, 3, part);
    } else if (IS("part_zero")) {
        int part[2] = { 0, p };
        if (s == last) bsp_partition(bsp, &sub, 2, part);
    } else if (IS("part_subnull")) {
        int part[1] = { p };
        if (s == last) bsp_partition(bsp, NULL, 1, part);
    } else if (IS("part_self")) {
        int part[1] = { p };
        if (s == last) bsp_partition(bsp, bsp, 1, part);
    } else if (IS("part_live")) {
        int part[1] = { p };
        tbsp a, b2;
        bsp_dup(bsp, &a);
        bsp_dup(&a, &b2);
        if (s == last) bsp_partition(&b2, &a, 1, part);
        bsp_done(&b2);
        bsp_done(&a);
    } else if (IS("done_root")) {
        if (s == last) bsp_done(bsp);
    } else if (IS("done_lifo")) {
        tbsp a, b2;
        bsp_dup(bsp, &a);
        bsp_dup(&a, &b2);
        if (s == last) bsp_done(&a);
        bsp_done(&b2);
        bsp_done(&a);
    } else if (IS("done_pending")) {
        bsp_dup(bsp, &sub);
        if (s == last) bsp_send(&sub, 0, &v, sizeof v);
        bsp_done(&sub);
    } else if (IS("done_push")) {
        bsp_dup(bsp, &sub);
        bsp_push_reg(&sub, &v, sizeof v);
        bsp_done(&sub);
    } else if (IS("done_put")) {                 /* item 33 */
        bsp_dup(bsp, &sub);
        bsp_push_reg(&sub, reg_a, sizeof reg_a);
        bsp_sync(&sub);
        if (s == last) bsp_put(&sub, 0, &v, reg_a, 0, sizeof v);
        bsp_done(&sub);
    } else if (IS("done_bcast")) {
        bsp_dup(bsp, &sub);
        if (s == last) bsp_gsend(&sub, 0, last, &v, sizeof v);
        bsp_done(&sub);
    } else if (IS("done_reduce")) {
        int r;
        bsp_dup(bsp, &sub);
        if (s == last) bsp_greduce(&sub, last, last, &v, &r, 1, bspop_addint, NULL);
        bsp_done(&sub);
    } else if (IS("use_done")) {
        bsp_dup(bsp, &sub);
        bsp_done(&sub);
        if (s == last) bsp_sync(&sub);
    } else if (IS("use_copy")) {
        tbsp copy = *bsp;
        if (s == last) bsp_sync(&copy);
    } else if (IS("use_other")) {                /* item 34: pid 0's root */
        if (s == 0) other_obj = bsp;
        bsp_sync(bsp);
        if (s == last) bsp_sync(other_obj);
    } else if (IS("use_other_child")) {          /* pid 0's live child */
        bsp_dup(bsp, &sub);
        if (s == 0) other_obj = &sub;
        bsp_sync(&sub);
        if (s == last) bsp_send(other_obj, 0, &v, sizeof v);
        bsp_sync(&sub);
        bsp_done(&sub);
    } else if (IS("parent_push")) {              /* item 35 */
        bsp_dup(bsp, &sub);
        if (s == last) bsp_push_reg(bsp, reg_a, sizeof reg_a);
        bsp_done(&sub);
    } else if (IS("parent_part")) {
        int part[1] = { p };
        tbsp sub2;
        bsp_dup(bsp, &sub);
        if (s == last) bsp_partition(bsp, &sub2, 1, part);
        bsp_done(&sub);
    } else if (IS("parent_send")) {
        bsp_dup(bsp, &sub);
        if (s == last) bsp_send(bsp, 0, &v, sizeof v);
        bsp_done(&sub);
    } else if (IS("parent_sync")) {
        bsp_dup(bsp, &sub);
        if (s == last) bsp_sync(bsp);
        bsp_done(&sub);
    } else if (IS("return_child")) {
        bsp_dup(bsp, &sub);
        if (s == last) return;
        bsp_done(&sub);
    } else if (IS("return_early")) {
        if (s == last) return;
        bsp_sync(bsp);
    } else if (IS("obl_put")) {
        bsp_push_reg(bsp, reg_a, sizeof reg_a);
        bsp_sync(bsp);
        bsp_put(bsp, (s + 1) % p, &v, reg_a, 0, sizeof v);
        bsp_oblsync(bsp, 0);
    } else if (IS("obl_neg")) {
        if (s == last) bsp_oblsync(bsp, -1);
        bsp_oblsync(bsp, 0);
    } else if (IS("obl_below_calls")) {
        int r;
        bsp_gallreduce(bsp, 0, p - 1, &v, &r, 1, bspop_addint, NULL);
        bsp_oblsync(bsp, 0);
    } else if (IS("p1_too_many")) {                /* item 73 */
        bsp_send(bsp, s, &v, sizeof v);
        bsp_oblsync(bsp, 0);
    } else if (IS("p1_too_few")) {
        bsp_send(bsp, s, &v, sizeof v);
        bsp_oblsync(bsp, 2);
    } else if (IS("kind_mix")) {                   /* item 54 */
        if (s == last) bsp_oblsync(bsp, 0);
        else bsp_sync(bsp);
        bsp_sync(bsp);
    } else if (IS("kind_mix_objects")) {
        /* process 0 is done with a duplicate and syncs the root, the
         * others wait in an oblivious sync of the duplicate for a message
         * nobody sends: one line names both kinds of wait */
        bsp_dup(bsp, &sub);
        if (s == 0) {
            bsp_done(&sub);
            bsp_sync(bsp);
        } else {
            bsp_oblsync(&sub, 1);
        }
    } else if (IS("gsend_range")) {
        if (s == last) bsp_gsend(bsp, 0, p, &v, sizeof v);
    } else if (IS("gsend_order")) {
        if (s == last && p > 1) bsp_gsend(bsp, 1, 0, &v, sizeof v);
        if (p == 1) bsp_gsend(bsp, -1, 0, &v, sizeof v);
    } else if (IS("lsend_repeat")) {
        int t[2] = { 0, 0 };
        if (s == last) bsp_lsend(bsp, t, 2, &v, sizeof v);
    } else if (IS("lsend_null")) {
        if (s == last) bsp_lsend(bsp, NULL, 1, &v, sizeof v);
    } else if (IS("reduce_count")) {
        int r;
        if (s == last) bsp_greduce(bsp, 0, p - 1, &v, &r, -1, bspop_addint, NULL);
    } else if (IS("reduce_op")) {
        int r;
        if (s == last) bsp_greduce(bsp, 0, p - 1, &v, &r, 1, NULL, NULL);
    } else if (IS("reduce_notmember")) {
        int r, t[1] = { 0 };
        if (s == last && p > 1) bsp_lreduce(bsp, t, 1, &v, &r, 1, bspop_addint, NULL);
        if (p == 1) bsp_greduce(bsp, 1, 1, &v, &r, 1, bspop_addint, NULL);
    } else if (IS("reduce_kind")) {               /* item 65 */
        int r;
        if (s == 0) bsp_greduce(bsp, 0, p - 1, &v, &r, 1, bspop_addint, NULL);
        else bsp_gallreduce(bsp, 0, p - 1, &v, &r, 1, bspop_addint, NULL);
        bsp_sync(bsp);
    } else if (IS("reduce_skip")) {
        int r;
        if (s != 0) bsp_gallreduce(bsp, 0, p - 1, &v, &r, 1, bspop_addint, NULL);
        bsp_sync(bsp);
    } else if (IS("put_unreg")) {
        if (s == last) bsp_put(bsp, 0, &v, reg_a, 0, sizeof v);
    } else if (IS("put_oob")) {
        bsp_push_reg(bsp, reg_a, sizeof reg_a);
        bsp_sync(bsp);
        if (s == last) bsp_put(bsp, 0, &v, reg_a, sizeof reg_a, sizeof v);
        bsp_sync(bsp);
    } else if (IS("put_pid")) {
        bsp_push_reg(bsp, reg_a, sizeof reg_a);
        bsp_sync(bsp);
        if (s == last) bsp_put(bsp, p, &v, reg_a, 0, sizeof v);
    } else if (IS("pop_unreg")) {
        if (s == last) bsp_pop_reg(bsp, reg_a);
    } else if (IS("push_count")) {
        if (s == last) bsp_push_reg(bsp, reg_a, sizeof reg_a);
        bsp_oblsync(bsp, 0);
        bsp_sync(bsp);
    } else if (IS("dup_regs")) {                  /* item 40 */
        bsp_push_reg(bsp, reg_a, sizeof reg_a);
        bsp_sync(bsp);
        bsp_dup(bsp, &sub);
        if (s == last) bsp_put(&sub, 0, &v, reg_a, 0, sizeof v);
        bsp_done(&sub);
    } else if (IS("part_disagree")) {            /* item 36 */
        int a[2] = { 2, 4 }, b[2] = { 1, 4 };
        bsp_partition(bsp, &sub, 2, s == 0 ? a : b);
        bsp_sync(&sub);
        bsp_done(&sub);
    } else if (IS("done_while_sync")) {          /* item 37 */
        bsp_dup(bsp, &sub);
        if (s != last) bsp_sync(&sub);
        bsp_done(&sub);
    } else if (IS("obl_too_large")) {            /* item 51 */
        if (s == 0) bsp_send(bsp, last, &v, sizeof v);
        if (s == last) bsp_oblsync(bsp, 2);
        else bsp_oblsync(bsp, 0);
    } else if (IS("obl_too_small")) {            /* item 52 */
        if (s == 0) { bsp_send(bsp, last, &v, sizeof v); bsp_send(bsp, last, &v, sizeof v); }
        if (s == last) nap(0.1);
        bsp_oblsync(bsp, s == last ? (p == 1 ? 2 : 1) : 0);
        bsp_sync(bsp);
    } else if (IS("threadsafe_dup")) {
        bsp_threadsafe_dup(bsp, &sub);
    } else {
        fprintf(stderr, "unknown case %s\n", case_name());
        exit(2);
    }
    bsp_sync(bsp);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CASE P\n", argv[0]);
        return 2;
    }
    which = argv[1];
    int P = atoi(argv[2]);
    if (IS("exec0")) pub_exec(0, spmd, NULL);
    else if (IS("exec_neg")) pub_exec(-1, spmd, NULL);
    else if (IS("exec_null")) pub_exec(2, NULL, NULL);
    else if (IS("time_outside")) bsp_time();
    else if (IS("abort_outside")) bsp_abort("bye %d", 1);
    else pub_exec(P, spmd, NULL);
    (void)nap;
    printf("NOT DETECTED\n");
    return 0;
}
