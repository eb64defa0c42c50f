/*
 * bsp_misuse_ox CASE P -- bsp_misuse for the Oxford BSPlib flavour
 * (MCBSP_COMPATIBILITY_MODE): negative ints and int overflows are run-time
 * errors (bsplib.md §9). The last process makes the mistake. An unnoticed
 * mistake prints "NOT DETECTED" and exits with status 0.
 *   bsp_misuse_ox --list   prints the case names
 */
#define _GNU_SOURCE
#define MCBSP_COMPATIBILITY_MODE
#include <bsp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *which;   /* the case, as main (pid 0) read it */
static int NP;
static __thread char my_case[32];   /* the case, in every process */

#define IS(name) (strcmp(my_case[0] ? my_case : which, name) == 0)

/* Right after bsp_begin: pid 0 tells every process the case (on a
 * distributed engine the others never ran main). */
static void share_case(void)
{
    char name[32];
    memset(name, 0, sizeof name);
    if (bsp_pid() == 0) strncpy(name, which, sizeof name - 1);
    bsp_push_reg(name, (int)sizeof name);
    bsp_sync();
    if (bsp_pid() != 0) bsp_get(0, name, 0, name, (int)sizeof name);
    bsp_sync();
    bsp_pop_reg(name);
    bsp_sync();
    memcpy(my_case, name, sizeof name);
}

static void spmd(void)
{
    bsp_begin(NP);
    share_case();
    const int s = bsp_pid(), p = bsp_nprocs(), right = (s + 1) % p;
    const int culprit = s == p - 1;
    long x[4] = { 0, 0, 0, 0 }, src[4] = { 1, 2, 3, 4 };
    int i = 0;
    bsp_push_reg(x, (int)sizeof x);
    bsp_sync();
    if (culprit) {
        if (IS("put_neg_pid")) bsp_put(-1, src, x, 0, 8);
        if (IS("put_neg_offset")) bsp_put(right, src, x, -8, 8);
        if (IS("put_neg_nbytes")) bsp_put(right, src, x, 0, -8);
        if (IS("get_neg_pid")) bsp_get(-2, x, 0, src, 8);
        if (IS("get_neg_offset")) bsp_get(right, x, -1, src, 8);
        if (IS("get_neg_nbytes")) bsp_get(right, x, 0, src, -1);
        if (IS("hpput_neg_nbytes")) bsp_hpput(right, src, x, 0, -4);
        if (IS("hpget_neg_offset")) bsp_hpget(right, x, -4, src, 4);
        if (IS("push_neg_size")) bsp_push_reg(src, -16);
        if (IS("send_neg_pid")) bsp_send(-1, NULL, src, 8);
        if (IS("send_neg_size")) bsp_send(right, NULL, src, -8);
        if (IS("hpsend_neg_size")) bsp_hpsend(right, NULL, src, -8);
        if (IS("tagsize_neg")) { i = -4; bsp_set_tagsize(&i); }
        if (IS("move_neg")) bsp_move(src, -1);
        if (IS("qsize_null")) bsp_qsize(NULL, &i);
        if (IS("get_tag_null")) bsp_get_tag(NULL, NULL);
        if (IS("put_pid_range")) bsp_put(p, src, x, 0, 8);
    }
    if (IS("qsize_overflow")) {
        /* two messages of 1.2e9 bytes to oneself: their total does not fit in
         * an int (a zero mapping is the source: only the copy at the sync
         * touches memory) */
        const int n = 1200000000;
        void *big = mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (big == MAP_FAILED) {
            printf("SKIP\n");
            exit(0);
        }
        if (culprit) {
            bsp_hpsend(s, NULL, big, n);
            bsp_hpsend(s, NULL, big, n);
        }
        bsp_sync();
        int nm = 0, nb = 0;
        if (culprit) bsp_qsize(&nm, &nb);
    }
    bsp_sync();
    bsp_sync();
    if (s == 0) printf("NOT DETECTED\n");
    bsp_end();
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        printf("begin0\nbegin_neg\nput_neg_pid\nput_neg_offset\nput_neg_nbytes\nget_neg_pid\n"
               "get_neg_offset\nget_neg_nbytes\nhpput_neg_nbytes\nhpget_neg_offset\n"
               "push_neg_size\nsend_neg_pid\nsend_neg_size\nhpsend_neg_size\ntagsize_neg\n"
               "move_neg\nqsize_null\nget_tag_null\nput_pid_range\nqsize_overflow\n");
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASE P | --list\n", argv[0]);
        return 2;
    }
    which = argv[1];
    NP = atoi(argv[2]);
    bsp_init(spmd, argc, argv);
    if (IS("begin0")) bsp_begin(0);
    if (IS("begin_neg")) bsp_begin(-3);
    spmd();
    return 0;
}
