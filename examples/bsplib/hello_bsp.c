/*
 * Hello world with <bsp.h> (Algorithm 1 of the MulticoreBSP for C paper):
 * bsp_init names the SPMD function, main calls it, bsp_begin starts the run.
 * Usage: hello_bsp [P]   (default: all available processors)
 */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned P;

static void spmd(void)
{
    bsp_begin(P);
    printf("Hello world from process %u of %u!\n", bsp_pid(), bsp_nprocs());
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(&spmd, argc, argv);
    P = argc > 1 ? (unsigned)atoi(argv[1]) : bsp_nprocs();
    spmd();
    return 0;
}
