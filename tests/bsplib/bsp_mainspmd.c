/*
 * bsp_mainspmd [P] -- main itself is the SPMD section (bsplib.md §4.4):
 * no bsp_init; bsp_begin in main makes the siblings run main(0, NULL).
 * P = 0 or absent: bsp_nprocs() processes. Prints one line per process and
 * "after bsp_end" once; exits with status 3 (what pid 0's main returns).
 */
#include <bsp.h>

#include <stdio.h>
#include <stdlib.h>

static unsigned P;   /* set by pid 0 before bsp_begin; shared with the siblings */

int main(int argc, char **argv)
{
    if (argc > 1) P = (unsigned)atoi(argv[1]);
    int local = argc > 0 ? 4711 : 0;   /* only pid 0 sees argc > 0 */
    bsp_begin(P ? P : bsp_nprocs());
    printf("process %u of %u: argc %d argv %s local %d\n", bsp_pid(), bsp_nprocs(), argc,
            argv ? "set" : "NULL", local);
    fflush(stdout);
    bsp_sync();
    bsp_end();
    printf("after bsp_end\n");
    return 3;
}
