// Checklist items 1-7 (and LPF_HAS_ABORT of item 75): macros, types and
// constants of <lpf/core.h>, <lpf/pthread.h> and <lpf/abort.h>, from C++
// (this file) and C (headers_c.c).
#include <lpf/core.h>
#include <lpf/abort.h>
#include <lpf/pthread.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

extern "C" int sstest_c_header_checks(void);

static_assert(_LPF_VERSION == 202000L, "item 1");
#ifndef _LPF_INCLUSIVE_MEMORY
# error "item 1: _LPF_INCLUSIVE_MEMORY must be defined"
#endif
#ifdef _LPF_EXCLUSIVE_MEMORY
# error "item 1: _LPF_EXCLUSIVE_MEMORY must not be defined"
#endif
static_assert(sizeof(lpf_t) == sizeof(void *), "item 2");
static_assert(std::is_same<lpf_memslot_t, std::size_t>::value, "lpf_memslot_t is std::size_t");
static_assert(std::is_same<lpf_pid_t, unsigned>::value, "lpf_pid_t");
static_assert(std::is_same<lpf_err_t, int>::value, "lpf_err_t");
static_assert(std::is_same<lpf_sync_attr_t, int>::value, "lpf_sync_attr_t");
static_assert(std::is_same<lpf_msg_attr_t, int>::value, "lpf_msg_attr_t");
static_assert(std::is_same<lpf_init_t, void *>::value, "lpf_init_t");

namespace {

void four_const(const lpf_t, const lpf_pid_t, const lpf_pid_t, const lpf_args_t) {}

TEST(Constants, Item01_VersionMacros)
{
    EXPECT_EQ(202000L, _LPF_VERSION);
    EXPECT_EQ(202000L, _LPF_INCLUSIVE_MEMORY);
}

TEST(Constants, Item02_ContextType)
{
    lpf_t a = NULL;
    lpf_t b = nullptr;
    int x = 0;
    lpf_t c = &x;
    lpf_t d = static_cast<void *>(&a);
    EXPECT_EQ(a, b);
    EXPECT_EQ(static_cast<void *>(&x), c);
    EXPECT_EQ(static_cast<void *>(&a), d);
}

TEST(Constants, Item03_SpmdType)
{
    lpf_spmd_t none = NULL;
    lpf_spmd_t f = four_const;
    EXPECT_EQ(nullptr, none);
    EXPECT_NE(nullptr, f);
}

TEST(Constants, Item04_ErrorCodes)
{
    EXPECT_NE(LPF_SUCCESS, LPF_ERR_OUT_OF_MEMORY);
    EXPECT_NE(LPF_SUCCESS, LPF_ERR_FATAL);
    EXPECT_NE(LPF_ERR_OUT_OF_MEMORY, LPF_ERR_FATAL);
    const lpf_err_t *a = &LPF_SUCCESS, *b = &LPF_ERR_OUT_OF_MEMORY, *c = &LPF_ERR_FATAL;
    EXPECT_NE(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(b, c);
    // the reference values (SHOULD)
    EXPECT_EQ(0, LPF_SUCCESS);
    EXPECT_EQ(1, LPF_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(2, LPF_ERR_FATAL);
}

TEST(Constants, Item05_NoArgs)
{
    EXPECT_EQ(nullptr, LPF_NO_ARGS.input);
    EXPECT_EQ(0u, LPF_NO_ARGS.input_size);
    EXPECT_EQ(nullptr, LPF_NO_ARGS.output);
    EXPECT_EQ(0u, LPF_NO_ARGS.output_size);
    EXPECT_EQ(nullptr, LPF_NO_ARGS.f_symbols);
    EXPECT_EQ(0u, LPF_NO_ARGS.f_size);
    // field order is ABI
    EXPECT_LT(offsetof(lpf_args_t, input), offsetof(lpf_args_t, input_size));
    EXPECT_LT(offsetof(lpf_args_t, input_size), offsetof(lpf_args_t, output));
    EXPECT_LT(offsetof(lpf_args_t, output), offsetof(lpf_args_t, output_size));
    EXPECT_LT(offsetof(lpf_args_t, output_size), offsetof(lpf_args_t, f_symbols));
    EXPECT_LT(offsetof(lpf_args_t, f_symbols), offsetof(lpf_args_t, f_size));
}

TEST(Constants, Item06_Limits)
{
    EXPECT_EQ(UINT_MAX, LPF_MAX_P);
    EXPECT_EQ(SIZE_MAX, LPF_INVALID_MEMSLOT);
    EXPECT_EQ(nullptr, LPF_NONE);
    EXPECT_EQ(nullptr, LPF_INIT_NONE);
    EXPECT_EQ(0, LPF_SYNC_DEFAULT);
    EXPECT_EQ(0, LPF_MSG_DEFAULT);
    EXPECT_NE(nullptr, LPF_ROOT);
    EXPECT_NE(LPF_NONE, LPF_ROOT);
}

TEST(Constants, Item07_InvalidMachine)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    EXPECT_EQ(0u, m.p);
    EXPECT_EQ(0u, m.free_p);
    EXPECT_EQ(nullptr, m.g);
    EXPECT_EQ(nullptr, m.l);
    EXPECT_EQ(0u, offsetof(lpf_machine_t, p));
}

TEST(Constants, Item75_HasAbort)
{
    EXPECT_NE(0, LPF_HAS_ABORT);
}

TEST(Constants, HeadersFromC)
{
    EXPECT_EQ(0, sstest_c_header_checks());
}

} // namespace
