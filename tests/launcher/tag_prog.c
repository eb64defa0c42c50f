/*
 * tag_prog: every process prints "line from S" and, last, "last from S"
 * without a newline on stdout, "err from S" on stderr, and "raw from S"
 * with write(2) straight to descriptor 1, past stdio (tag_output.sh).
 */
#include <bsp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    unsigned s = bsp_pid();
    printf("line from %u\n", s);
    fflush(stdout);
    fprintf(stderr, "err from %u\n", s);
    char raw[64];
    snprintf(raw, sizeof raw, "raw from %u\n", s);
    if (write(1, raw, strlen(raw)) < 0) perror("write");
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
