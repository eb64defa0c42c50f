// A static library of the project that uses BSPlib (target_link_lpf BSPLIB).
#include <bsp.h>

unsigned xlib_result = 0;

void xlib_spmd()
{
    bsp_begin(2);
    unsigned s = bsp_pid(), p = bsp_nprocs(), sum = 0;
    unsigned all[2] = { 0, 0 };
    bsp_push_reg(all, sizeof all);
    bsp_sync();
    bsp_put(0, &s, all, s * sizeof s, sizeof s);
    bsp_sync();
    for (unsigned k = 0; k < p; ++k) sum += all[k];
    bsp_pop_reg(all);
    if (s == 0) xlib_result = sum;
    bsp_end();
}
