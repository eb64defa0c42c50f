/*
 * bsp_abort_test -- process 1 calls bsp_abort in the middle of a run while
 * the others keep syncing: every process ends, the job's exit status is
 * non-zero and the message is printed (checked by faults.sh, mode bsp_abort).
 */
#include <bsp.h>

#include <stdio.h>

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    for (int i = 0; i < 5; ++i) bsp_sync();
    if (bsp_pid() == 1 % bsp_nprocs()) bsp_abort("process %u of %u gives up\n", bsp_pid(), bsp_nprocs());
    for (;;) bsp_sync();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
