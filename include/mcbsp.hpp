/*
 * <mcbsp.hpp> -- the MulticoreBSP for C C++ header name: an alias of
 * <bsp.hpp>.
 */
#ifndef SUPERSTEP_MCBSP_HPP
#define SUPERSTEP_MCBSP_HPP
#include <bsp.hpp>
#endif
