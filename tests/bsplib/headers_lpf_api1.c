/* Item 3: LPF_USE_MCBSP_API == 1 selects the MulticoreBSP flavour; item 5:
 * <mcbsp.h> is the same API. */
#define LPF_USE_MCBSP_API 1
#include <mcbsp.h>

_Static_assert(_Generic(bsp_pid(), unsigned int: 1, default: 0), "MulticoreBSP flavour");
_Static_assert(_Generic(bsp_hpmove((void **)0, (void **)0), size_t: 1, default: 0), "size_t");

int sstep_test_headers_lpf_api1(void);
int sstep_test_headers_lpf_api1(void)
{
    bsp_size_t (*hpm)(void **const, void **const) = bsp_hpmove;
    return hpm == 0;
}
