/*
 * <mcbsp.h> -- the MulticoreBSP for C header name: an alias of <bsp.h>.
 */
#ifndef SUPERSTEP_MCBSP_H
#define SUPERSTEP_MCBSP_H
#include <bsp.h>
#endif
