/* Item 3: LPF's switch. LPF_USE_MCBSP_API == 0 selects the Oxford flavour
 * (this file re-runs headers_oxford.c's checks); == 1 the MulticoreBSP one
 * (headers_lpf_api1.c). */
#define LPF_USE_MCBSP_API 0
#define SSTEP_TEST_NO_DEFINE
#define SSTEP_TEST_SUFFIX lpf_api0
#include "headers_oxford.c"
