#include <bsp.h>
#include <cstdio>
extern unsigned xlib_result;
void xlib_spmd();
int main(int argc, char **argv)
{
    bsp_init(xlib_spmd, argc, argv);
    xlib_spmd();
    std::printf("x_bsp: %s\n", xlib_result == 1 ? "ok" : "wrong");
    return xlib_result == 1 ? 0 : 1;
}
