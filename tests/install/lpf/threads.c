/* A program with threads of its own next to Superstep (pkg-config's
 * -pthread): a thread of the program runs an LPF job of 2 processes. */
#include <lpf/core.h>
#include <pthread.h>
#include <stdio.h>

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)ctx;
    if (s == 0) *(unsigned *)args.output = p;
}

static void *job(void *arg)
{
    lpf_args_t args = LPF_NO_ARGS;
    args.output = arg;
    args.output_size = sizeof(unsigned);
    lpf_exec(LPF_ROOT, 2, spmd, args);
    return NULL;
}

int main(void)
{
    pthread_t t;
    unsigned got = 0;
    if (pthread_create(&t, NULL, job, &got) != 0) return 1;
    pthread_join(t, NULL);
    int ok = got == 2;
    printf("threads: %s\n", ok ? "ok" : "wrong");
    return ok ? 0 : 1;
}
