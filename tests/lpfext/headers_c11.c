/* item 1: each extension header alone, C11 -pedantic (with the others and
 * with <bsp.h> in headers_all.c) */
#if HEADER == 1
# include <lpf/tags.h>
_Static_assert(_LPF_TAGS_VERSION == 202500L, "tags version");
#elif HEADER == 2
# include <lpf/zero.h>
_Static_assert(LPF_ZERO_COST_SYNC == 202500L, "zero version");
#elif HEADER == 3
# include <lpf/noc.h>
_Static_assert(_LPF_NOC_VERSION == 202400L, "noc version");
#else
/* 4: all together with BSPlib, C11; 5: the same as C99 */
# include <lpf/tags.h>
# include <lpf/zero.h>
# include <lpf/noc.h>
# include <lpf/core.h>
# include <lpf/bsplib.h>
# include <bsp.h>
#endif
int main(void) { return 0; }
