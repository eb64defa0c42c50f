/* Every process makes the same mistake: a put to pid P (out of range). */
#include <bsp.h>

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    int x = 0, y[2];
    bsp_push_reg(y, sizeof y);
    bsp_sync();
    bsp_put(bsp_nprocs(), &x, y, 0, sizeof x);
    bsp_sync();
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
