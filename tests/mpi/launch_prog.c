/*
 * launch_prog MODE: a program no launcher wrapper knows about, run by
 * launch.sh straight under mpirun (and taskset).
 *   hello  every process prints "launch: process s of p"
 *   pin    CPU masks: every process of the root section keeps what it
 *          inherited when its share is the whole mask; a section of one
 *          process started inside it (and a thread that process starts, as
 *          OpenMP would) keeps the caller's whole mask; the threads of a
 *          section of two stay inside it. Prints "launch: pin ok s count"
 *          or a line with FAIL.
 */
#define _GNU_SOURCE
#include <lpf/core.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static int mask_of_thread(cpu_set_t *set)
{
    CPU_ZERO(set);
    return pthread_getaffinity_np(pthread_self(), sizeof *set, set);
}

static int subset(const cpu_set_t *a, const cpu_set_t *b)
{
    cpu_set_t x;
    CPU_AND(&x, a, b);
    return CPU_EQUAL(&x, a) && CPU_COUNT(a) > 0;
}

struct probe {
    cpu_set_t outer;
    int bad;
};

static void *thread_probe(void *arg)
{
    struct probe *p = arg;
    cpu_set_t m;
    mask_of_thread(&m);
    if (!CPU_EQUAL(&m, &p->outer)) p->bad = 1;
    return NULL;
}

/* a section of one process: the caller's whole mask, for it and its threads */
static void one(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)ctx; (void)s; (void)p;
    struct probe *pr = (struct probe *)a.input;
    cpu_set_t m;
    mask_of_thread(&m);
    if (!CPU_EQUAL(&m, &pr->outer)) {
        printf("launch: FAIL a section of 1 process narrowed its mask from %d to %d CPUs\n",
                CPU_COUNT(&pr->outer), CPU_COUNT(&m));
        pr->bad = 1;
    }
    pthread_t t;
    struct probe tp = *pr;
    tp.bad = 0;
    if (pthread_create(&t, NULL, thread_probe, &tp) == 0) {
        pthread_join(t, NULL);
        if (tp.bad) {
            printf("launch: FAIL a thread started in a section of 1 process lost CPUs\n");
            pr->bad = 1;
        }
    }
}

static void spmd_hello(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)ctx; (void)a;
    printf("launch: process %u of %u\n", s, p);
    fflush(stdout);
}

/* the masks of the outer processes (threads of one process on the pthread
 * engine), by pid; a nested section learns its caller's pid from f_size
 * (its input reaches its pid 0 only) */
#define MAXP 64
static cpu_set_t outer_masks[MAXP];
static void dummy(void) {}
static const lpf_func_t dummies[MAXP] = { [0 ... MAXP - 1] = dummy };

/* a section of two: inside the caller's mask */
static void two(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)ctx; (void)p;
    size_t caller = a.f_size - 1;
    cpu_set_t m;
    mask_of_thread(&m);
    if (caller >= MAXP || !subset(&m, &outer_masks[caller]))
        printf("launch: FAIL process %u of a nested section runs outside its caller's "
                "mask\n", s);
}

static void spmd_pin(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t a)
{
    (void)p; (void)a;
    struct probe pr;
    memset(&pr, 0, sizeof pr);
    mask_of_thread(&pr.outer);
    if (s >= MAXP) return;
    outer_masks[s] = pr.outer;
    lpf_args_t args = { &pr, sizeof pr, NULL, 0, dummies, (size_t)s + 1 };
    if (lpf_exec(ctx, 1, one, args) != LPF_SUCCESS) printf("launch: FAIL lpf_exec of 1\n");
    if (lpf_exec(ctx, 2, two, args) != LPF_SUCCESS) printf("launch: FAIL lpf_exec of 2\n");
    cpu_set_t after;
    mask_of_thread(&after);
    if (!CPU_EQUAL(&after, &pr.outer)) printf("launch: FAIL the mask did not come back\n");
    if (!pr.bad) printf("launch: pin ok %u %d\n", s, CPU_COUNT(&pr.outer));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hello";
    if (strcmp(mode, "pin") == 0) {
        /* the root section of one process: main's whole mask */
        struct probe pr;
        memset(&pr, 0, sizeof pr);
        mask_of_thread(&pr.outer);
        lpf_args_t args = { &pr, sizeof pr, NULL, 0, NULL, 0 };
        if (lpf_exec(LPF_ROOT, 1, one, args) != LPF_SUCCESS) return 2;
        if (pr.bad) return 1;
        return lpf_exec(LPF_ROOT, LPF_MAX_P, spmd_pin, LPF_NO_ARGS) == LPF_SUCCESS ? 0 : 3;
    }
    return lpf_exec(LPF_ROOT, LPF_MAX_P, spmd_hello, LPF_NO_ARGS) == LPF_SUCCESS ? 0 : 3;
}
