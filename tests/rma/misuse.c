/*
 * <rma.h> misuse: process p-1 puts into an address nobody registered, or
 * (built with -DMISUSE_NO_SYNC) ends the superstep with LIBARRIER alone
 * after a put, which a barrier does not complete on MPI. Every mapping
 * ends the program with one line on stderr naming the primitive and the
 * process, and a non-zero exit status; no hang.
 */
#include <stdio.h>

#include <rma.h>

int main(void)
{
    LIBEGIN(LINPROCS());
    const int p = LINPROCS(), pid = LIPID();
    int area = 0, stray = 0, v = 7;
    LIREGISTER(&area, sizeof area);
    LIINIT();
    LICOMMIT();
#ifdef MISUSE_NO_SYNC
    (void)stray;
    if (pid == p - 1)
        LIPUT(0, &v, &area, 0, sizeof v);
    LIBARRIER();                         /* no LISYNC */
#else
    if (pid == p - 1)
        LIPUT(0, &v, &stray, 0, sizeof v);   /* &stray is not registered */
    LISYNC();
    LIBARRIER();
#endif
    LIDEREGISTER(&area);
    if (pid == 0)
        printf("misuse: not detected\n");
    LIEND();
    return 0;
}
