/*
 * progress GO_FILE: every process prints "progress 1 from PID" on stderr
 * and "out 1 from PID" on stdout, then waits (at most 60 s) for GO_FILE to
 * exist (lines_on_time.sh makes it once it has seen process 0's lines at
 * the terminal), then prints "progress 2 from PID". A line that is held back
 * until the job ends never arrives in time: the program then says so and
 * ends with status 3. With PROGRESS_NO_FLUSH set, stdout is not flushed
 * after "out 1": the line must arrive all the same (bsprun --tag-output:
 * the library writes each line as its newline comes).
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *go;
static int late;

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    unsigned s = bsp_pid();
    fprintf(stderr, "progress 1 from %u\n", s);
    printf("out 1 from %u\n", s);
    if (!getenv("PROGRESS_NO_FLUSH")) fflush(stdout);
    bsp_sync();
    if (s == 0) {
        int i;
        for (i = 0; i < 600 && access(go, F_OK) != 0; ++i) usleep(100000);
        if (i == 600) {
            fprintf(stderr, "progress: the first lines did not reach the terminal within 60 s\n");
            late = 1;
        }
    }
    bsp_sync();
    fprintf(stderr, "progress 2 from %u\n", s);
    bsp_end();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: progress GO_FILE\n");
        return 2;
    }
    go = argv[1];
    bsp_init(&spmd, argc, argv);
    spmd();
    return late ? 3 : 0;
}
