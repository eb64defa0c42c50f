// Items 1-7 (compile-time checks in C and C++), 60 (fake hp directives) and
// 83-86 (Oxford flavour at run time). The C files of this program are
// compiled in the different flavours; their functions report here (their
// runs gather the failed checks at pid 0, so they work on every engine).
#include <bsp.hpp>
#include <mcbsp.hpp>

#ifdef BSPTEST_USE_SHIM
# include "bsp_shim.hpp"
#else
# include <gtest/gtest.h>
#endif

#include <cstdint>
#include <type_traits>

extern "C" {
int sstep_test_headers_default(void);
int sstep_test_headers_oxford(void);
int sstep_test_headers_lpf_api0(void);
int sstep_test_headers_lpf_api1(void);
int sstep_test_headers_oxford_cpp(void);
int sstep_test_fake_hp(unsigned P);
int sstep_test_oxford(int P);
}

// item 1 (C++): unsigned ids, size_t sizes
static_assert(std::is_same<decltype(bsp_pid()), unsigned int>::value, "bsp_pid");
static_assert(std::is_same<decltype(bsp_nprocs()), unsigned int>::value, "bsp_nprocs");
static_assert(std::is_same<bsp_size_t, std::size_t>::value, "bsp_size_t");
static_assert(std::is_same<bsp_pid_t, unsigned int>::value, "bsp_pid_t");
static_assert(std::is_same<bsp_nprocs_t, unsigned int>::value, "bsp_nprocs_t");

namespace {

// item 7 (C++): addresses, with the overload of bsp_hpmove chosen by type
TEST(BspHeaders, AddressesInCpp)
{
    bsp_size_t (*hpm)(void **const, void **const) = &bsp_hpmove;
    bsp_size_t (*hpmc)(const void **, const void **) = &bsp_hpmove;
    void (*put)(const bsp_pid_t, const void *const, const void *const, const bsp_size_t,
            const bsp_size_t) = &bsp_put;
    void (*beg)(const bsp_pid_t) = &bsp_begin;
    void (*end)(void) = &bsp_end;
    EXPECT_NE(nullptr, reinterpret_cast<void *>(hpm));
    EXPECT_NE(nullptr, reinterpret_cast<void *>(hpmc));
    EXPECT_NE(nullptr, reinterpret_cast<void *>(put));
    EXPECT_NE(nullptr, reinterpret_cast<void *>(beg));
    EXPECT_NE(nullptr, reinterpret_cast<void *>(end));
    EXPECT_EQ(SIZE_MAX, bsp_size_unavailable);   // item 4
    mcbsp_enable_checkpointing();                // item 6
    mcbsp_disable_checkpointing();
}

// items 1-7 in C (the assertions are compile-time; this runs the rest)
TEST(BspHeaders, DefaultFlavourInC) { EXPECT_EQ(0, sstep_test_headers_default()); }
TEST(BspHeaders, OxfordFlavourInC) { EXPECT_EQ(0, sstep_test_headers_oxford()); }
TEST(BspHeaders, LpfUseMcbspApi0IsOxford) { EXPECT_EQ(0, sstep_test_headers_lpf_api0()); }
TEST(BspHeaders, LpfUseMcbspApi1IsMulticoreBsp) { EXPECT_EQ(0, sstep_test_headers_lpf_api1()); }
TEST(BspHeaders, OxfordFlavourInCpp) { EXPECT_EQ(0, sstep_test_headers_oxford_cpp()); }

class BspFlavour : public ::testing::TestWithParam<unsigned> {};

// item 60
TEST_P(BspFlavour, FakeHpDirectivesAreBuffered) { EXPECT_EQ(0, sstep_test_fake_hp(GetParam())); }

// items 83-86
TEST_P(BspFlavour, OxfordSemantics) { EXPECT_EQ(0, sstep_test_oxford(static_cast<int>(GetParam()))); }

INSTANTIATE_TEST_SUITE_P(P, BspFlavour, ::testing::Values(1u, 2u, 3u, 4u, 8u));

} // namespace
