/*
 * term_prog MODE [ARGS] -- the program around which term.sh checks how
 * bsprun and the engines behave as the user's terminal sees them.
 *
 *   loop MARKER  every process syncs every 10 ms for 60 s; process 0 prints
 *                "started" after the first sync (MARKER: for pgrep)
 *   stdin        process 0 reads its standard input once and prints
 *                "stdin: data 'TEXT'", "stdin: EOF" or "stdin: closed"
 *   lines N      every process prints N lines "line PID NUMBER of process
 *                PID: the end" (and every 97th a line on stderr), then syncs
 *   fork         process 1 % p forks; the child calls bsp_sync; the
 *                parent reports the child's exit status and syncs on
 *   threads      four threads of process 0 start a section each at once
 *   bigp         bsp_begin with twice the processes bsp_nprocs() offers
 *   oom          process 0 limits its address space to what it uses now
 *                plus $TERM_OOM_KB KiB (default 8192),
 *                then calls lpf_exec (MPI: the first section
 *                over the ranks allocates its shared-memory window)
 *   stuck        process 1 computes for 3 s before the second sync
 *   crash        process 1 % p prints a line (no flush) and crashes
 */
#define _GNU_SOURCE
#include <bsp.h>
#include <lpf/abort.h>
#include <lpf/core.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static char **argv_all;

/* On MPI only rank 0 runs main: the others read the arguments from their
 * command line, which is the same on every rank. */
static const char *arg(int i)
{
    static char buf[8192];
    static char *args[16];
    static int n = -1;
    if (argv_all) return argv_all[i];
    if (n < 0) {
        FILE *f = fopen("/proc/self/cmdline", "r");
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[len] = '\0';
        n = 0;
        for (size_t k = 0; k < len && n < 16; k += strlen(buf + k) + 1) args[n++] = buf + k;
    }
    return i < n ? args[i] : "";
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void bsp_main(void)
{
    bsp_begin(bsp_nprocs());
    const unsigned s = bsp_pid(), p = bsp_nprocs();
    mode = arg(1);
    if (strcmp(mode, "loop") == 0) {
        bsp_sync();
        if (s == 0) {
            printf("started\n");
            fflush(stdout);
        }
        const struct timespec nap = { 0, 10 * 1000 * 1000 };
        for (int i = 0; i < 6000; ++i) {
            nanosleep(&nap, NULL);
            bsp_sync();
        }
    } else if (strcmp(mode, "stdin") == 0) {
        if (s == 0) {
            char buf[256];
            ssize_t n = read(0, buf, sizeof buf - 1);
            if (n < 0 && errno == EBADF) printf("stdin: closed\n");
            else if (n < 0) printf("stdin: error %s\n", strerror(errno));
            else if (n == 0) printf("stdin: EOF\n");
            else {
                buf[n] = '\0';
                buf[strcspn(buf, "\n")] = '\0';
                printf("stdin: data '%s'\n", buf);
            }
        }
        bsp_sync();
    } else if (strcmp(mode, "lines") == 0) {
        int n = atoi(arg(2));
        for (int i = 0; i < n; ++i) {
            printf("line %u %d of process %u: the end\n", s, i, s);
            if (i % 97 == 0) fprintf(stderr, "err %u %d of process %u\n", s, i, s);
        }
        bsp_sync();
    } else if (strcmp(mode, "fork") == 0) {
        bsp_sync();
        if (s == 1 % p) {
            fflush(NULL);
            pid_t c = fork();
            if (c == 0) {
                bsp_sync();
                printf("FAILED: the forked child's bsp_sync returned\n");
                fflush(stdout);
                _exit(0);
            }
            int st = 0;
            waitpid(c, &st, 0);
            printf("fork: the child ended with status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            fflush(stdout);
        }
        for (int i = 0; i < 3; ++i) bsp_sync();
        if (s == 0) printf("fork: the run went on\n");
    } else if (strcmp(mode, "bigp") == 0) {
        /* bsp_begin above is this process's own; nothing more */
    } else if (strcmp(mode, "crash") == 0) {
        bsp_sync();
        if (s == 1 % p) {
            printf("process %u: the last line before the crash\n", s);
            raise(SIGSEGV);
        }
        for (;;) bsp_sync();
    } else if (strcmp(mode, "stuck") == 0) {
        bsp_sync();
        if (s == 1 % p) {
            double t0 = now_s();
            volatile unsigned long spin = 0;
            while (now_s() - t0 < 3.0) spin++;
        }
        bsp_sync();
        if (s == 0) printf("stuck: done\n");
    }
    bsp_sync();
    bsp_end();
}

/* threads: a section that checks its put */
static void spmd_put(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)args;
    unsigned long got = 0, mine = 1000 + s;
    lpf_memslot_t gs, ms;
    lpf_resize_memory_register(ctx, 2);
    lpf_resize_message_queue(ctx, 1);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, &got, sizeof got, &gs);
    lpf_register_local(ctx, &mine, sizeof mine, &ms);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_put(ctx, ms, 0, (s + 1) % p, gs, 0, sizeof got, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (got != 1000 + (s + p - 1) % p) {
        fprintf(stderr, "FAILED: process %u got %lu\n", s, got);
        lpf_abort(ctx);
    }
    lpf_deregister(ctx, gs);
    lpf_deregister(ctx, ms);
}

static void *thread_exec(void *a)
{
    lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd_put, LPF_NO_ARGS);
    printf("thread %d: lpf_exec returned %d\n", (int)(long)a, (int)rc);
    return NULL;
}

static void spmd_nothing(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    (void)s; (void)p; (void)args;
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

static long vm_size_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: term_prog MODE [ARGS]\n");
        return 2;
    }
    argv_all = argv;
    mode = argv[1];
    if (strcmp(mode, "threads") == 0) {
        pthread_t t[4];
        for (long i = 0; i < 4; ++i) pthread_create(&t[i], NULL, thread_exec, (void *)i);
        for (int i = 0; i < 4; ++i) pthread_join(t[i], NULL);
        return 0;
    }
    if (strcmp(mode, "oom") == 0) {
        long vm = vm_size_bytes();
        const char *kb = getenv("TERM_OOM_KB");
        long head = (kb ? atol(kb) : 8192) * 1024;
        struct rlimit rl = { (rlim_t)(vm + head), RLIM_INFINITY };
        if (vm <= 0 || setrlimit(RLIMIT_AS, &rl)) {
            perror("setrlimit");
            return 2;
        }
        lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd_nothing, LPF_NO_ARGS);
        printf("oom: lpf_exec returned %s\n", rc == LPF_SUCCESS ? "LPF_SUCCESS"
                : rc == LPF_ERR_OUT_OF_MEMORY ? "LPF_ERR_OUT_OF_MEMORY" : "LPF_ERR_FATAL");
        return 0;
    }
    if (strcmp(mode, "bigp") == 0) {
        unsigned p = bsp_nprocs();
        bsp_init(bsp_main, argc, argv);
        bsp_begin(2 * p);
        printf("bigp: %u processes\n", bsp_nprocs());
        bsp_sync();
        bsp_end();
        return 0;
    }
    bsp_init(bsp_main, argc, argv);
    bsp_main();
    return 0;
}
