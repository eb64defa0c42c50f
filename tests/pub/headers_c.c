/* Item 1: <pub.h> compiles as C11 with -Wall -Wextra -pedantic -Werror;
 * every PUB name is the exported pub_ symbol. Item 4: pbsp is tbsp *. */
#include <pub.h>
#include <assert.h>

_Static_assert(sizeof(tbsp) == 8 * sizeof(void *), "tbsp holds 8 pointers");

int pub_test_c_names(void)
{
    pbsp p = (tbsp *)0;
    tbsp *q = p;
    void (*f)(pbsp, int, const void *, size_t) = bsp_send;
    int ok = f == pub_send && q == 0;
    ok = ok && (void (*)(void))bsp_sync == (void (*)(void))pub_sync
        && (void (*)(void))bsp_oblsync == (void (*)(void))pub_oblsync
        && (void (*)(void))bsp_partition == (void (*)(void))pub_partition
        && (void (*)(void))bsp_done == (void (*)(void))pub_done
        && (void (*)(void))bsp_findmsg == (void (*)(void))pub_findmsg
        && (void (*)(void))bspmsg_data == (void (*)(void))pubmsg_data
        && (void (*)(void))bsp_lreduce == (void (*)(void))pub_lreduce
        && (void (*)(void))bsp_gallscan == (void (*)(void))pub_gallscan;
    ok = ok && bspop_addint == &pub_op_addint && bspop_mindouble == &pub_op_mindouble;
    ok = ok && bspop_addint->size == sizeof(int) && bspop_maxlong->size == sizeof(long)
        && bspop_muldouble->size == sizeof(double);
    return ok;
}
