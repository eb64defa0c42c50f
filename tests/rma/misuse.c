/*
 * <rma.h> misuse: process p-1 puts into an address nobody registered. Every
 * mapping ends the program with one line on stderr naming the primitive,
 * the process and the address, and a non-zero exit status; no hang.
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
    if (pid == p - 1)
        LIPUT(0, &v, &stray, 0, sizeof v);   /* &stray is not registered */
    LISYNC();
    LIBARRIER();
    LIDEREGISTER(&area);
    if (pid == 0)
        printf("misuse: not detected\n");
    LIEND();
    return 0;
}
