/*
 * tag_prog: every process prints "line from S" and, last, "last from S"
 * without a newline on stdout, and "err from S" on stderr (tag_output.sh).
 */
#include <bsp.h>
#include <stdio.h>

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    unsigned s = bsp_pid();
    printf("line from %u\n", s);
    fflush(stdout);
    fprintf(stderr, "err from %u\n", s);
    bsp_sync();
    printf("last from %u", s);
    fflush(stdout);
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(&spmd, argc, argv);
    spmd();
    return 0;
}
