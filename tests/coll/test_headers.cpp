// The headers are usable from C++ (extern "C", restrict spelled
// __restrict__ only while they are read) and from strict C99 (headers_c99.c).
#include <lpf/collectives.h>
#include <lpf/bsmp.h>

#ifdef restrict
# error "restrict must be #undef'd at the end of collectives.h / bsmp.h"
#endif

#include <gtest/gtest.h>

#include <type_traits>

extern "C" int coll_c99_header_check(void);

TEST(CollHeaders, StrictC99)
{
    EXPECT_EQ(0, coll_c99_header_check());
}

TEST(CollHeaders, Cxx)
{
    static_assert(std::is_same<decltype(&lpf_allgather),
            lpf_err_t (*)(lpf_coll_t, lpf_memslot_t, lpf_memslot_t, size_t, bool)>::value, "");
    static_assert(std::is_same<decltype(&lpf_move),
            lpf_err_t (*)(lpf_bsmp_t, void **, void **, size_t *)>::value, "");
    static_assert(std::is_same<lpf_bsmp_t, lpf_bsmp_buffer *>::value, "");
    static_assert(std::is_same<decltype(lpf_coll_t::P), lpf_pid_t>::value, "");
    static_assert(std::is_same<decltype(lpf_coll_t::slot), lpf_memslot_t>::value, "");
    EXPECT_EQ(201500L, _LPF_COLLECTIVES_VERSION);
    EXPECT_EQ(201500L, _LPF_BMSP_VERSION);
    EXPECT_EQ(READ, lpf_bsmp_mode(0));
}
