// Whole BSPlib programs run as subprocesses (optionally through
// SUPERSTEP_TEST_LAUNCHER):
//  * main as the SPMD section (checklist items 9-12);
//  * the examples of examples/bsplib (hello world, inner product, BSMP,
//    C++ hello world);
//  * BSPedupack-style programs in the Oxford flavour (item 87): inner
//    product, LU decomposition, FFT, sparse matrix-vector multiplication.
#include "common/subprocess.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

using sstest::Child;
using sstest::count_lines_with;
using sstest::run_child;

std::string P_env(unsigned P) { return "LPF_MAX_PROCS=" + std::to_string(P); }

void expect_ok(const Child &r)
{
    EXPECT_TRUE(r.started);
    EXPECT_FALSE(r.timed_out) << "hung";
    EXPECT_TRUE(r.exited) << "signal " << r.signal;
}

class BspProgram : public ::testing::TestWithParam<unsigned> {};

// items 9-12 (and 4.4's exit status): main is the SPMD section
TEST_P(BspProgram, MainIsTheSpmdSection)
{
    const unsigned P = GetParam();
    // P given explicitly, and as bsp_nprocs() (= LPF_MAX_PROCS for the child)
    for (int explicit_p = 0; explicit_p < 2; ++explicit_p) {
        Child r = run_child({ BSP_MAINSPMD_BIN, explicit_p ? std::to_string(P) : "0" }, "", 60,
                { P_env(P) }, P);
        SCOPED_TRACE(r.out + r.err);
        expect_ok(r);
        EXPECT_EQ(3, r.code);
        EXPECT_EQ(1, count_lines_with(r.out, "after bsp_end"));
        for (unsigned s = 0; s < P; ++s) {
            const std::string who = "process " + std::to_string(s) + " of " + std::to_string(P) + ":";
            EXPECT_EQ(1, count_lines_with(r.out, who)) << who;
        }
        EXPECT_EQ(static_cast<int>(P), count_lines_with(r.out, " of " + std::to_string(P) + ":"));
        // pid 0 keeps main's arguments and locals; siblings get argc 0, argv NULL
        EXPECT_EQ(1, count_lines_with(r.out, "process 0 of " + std::to_string(P) + ": argc 2 argv set local 4711"));
        EXPECT_EQ(static_cast<int>(P) - 1, count_lines_with(r.out, ": argc 0 argv NULL local 0"));
        EXPECT_TRUE(r.err.empty()) << r.err;
    }
}

TEST_P(BspProgram, ExampleHello)
{
    const unsigned P = GetParam();
    Child r = run_child({ HELLO_BSP_BIN, std::to_string(P) }, "", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code);
    for (unsigned s = 0; s < P; ++s)
        EXPECT_EQ(1, count_lines_with(r.out, "Hello world from process " + std::to_string(s) + " of "
                + std::to_string(P) + "!"));
}

TEST_P(BspProgram, ExampleHelloCpp)
{
    const unsigned P = GetParam();
    if (sstest::distributed_launcher())
        GTEST_SKIP() << "mcbsp::BSP_program needs a shared-memory engine";
    Child r = run_child({ HELLO_BSP_CPP_BIN, std::to_string(P) }, "", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code);
    for (unsigned s = 0; s < P; ++s)
        EXPECT_EQ(1, count_lines_with(r.out, "Hello world from process " + std::to_string(s) + " of "
                + std::to_string(P) + "!"));
}

TEST_P(BspProgram, ExampleInnerProduct)
{
    const unsigned P = GetParam();
    Child r = run_child({ INPROD_BSP_BIN, std::to_string(P), "10007" }, "", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code) << r.out << r.err;
    EXPECT_EQ(1, count_lines_with(r.out, "<x,x> = 334083895140 with " + std::to_string(P) + " processes"));
    EXPECT_EQ(0, count_lines_with(r.out, "MISMATCH"));
}

TEST_P(BspProgram, ExampleBsmp)
{
    const unsigned P = GetParam();
    Child r = run_child({ BSMP_BSP_BIN, std::to_string(P) }, "", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code) << r.out << r.err;
    EXPECT_EQ(1, count_lines_with(r.out, "all messages correct"));
}

// item 87: BSPedupack-style programs, unmodified, in the Oxford flavour
TEST_P(BspProgram, EdupackInnerProduct)
{
    const unsigned P = GetParam();
    Child r = run_child({ EDUPACK_INPROD_BIN }, std::to_string(P) + "\n1000\n", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code) << r.out << r.err;
    // 1000*1001*2001/6 = 333833500
    EXPECT_EQ(static_cast<int>(P), count_lines_with(r.out, "sum of squares up to 1000*1000 is 333833500"));
    EXPECT_EQ(1, count_lines_with(r.out, "This took only"));
}

TEST_P(BspProgram, EdupackSparseMatVec)
{
    const unsigned P = GetParam();
    Child r = run_child({ EDUPACK_MV_BIN }, std::to_string(P) + "\n300\n", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code) << r.out << r.err;
    EXPECT_EQ(static_cast<int>(P), count_lines_with(r.out, ": OK"));
    EXPECT_EQ(0, count_lines_with(r.out, "ERROR"));
}

TEST_P(BspProgram, EdupackFft)
{
    const unsigned P = GetParam();
    if (P & (P - 1)) GTEST_SKIP() << "the FFT needs a power of two";
    Child r = run_child({ EDUPACK_FFT_BIN }, std::to_string(P) + "\n512\n", 60, { P_env(16) }, P);
    expect_ok(r);
    EXPECT_EQ(0, r.code) << r.out << r.err;
    EXPECT_EQ(1, count_lines_with(r.out, ": OK"));
}

TEST_P(BspProgram, EdupackLu)
{
    const unsigned P = GetParam();
    // every M x N grid with M*N = P
    for (unsigned M = 1; M <= P; ++M) {
        if (P % M) continue;
        const unsigned N = P / M;
        // n = 36: 108 supersteps per grid (8 processes share 2 cores in CI)
        Child r = run_child({ EDUPACK_LU_BIN }, std::to_string(M) + "\n" + std::to_string(N) + "\n36\n",
                60, { P_env(16) }, P);
        SCOPED_TRACE("grid " + std::to_string(M) + " x " + std::to_string(N));
        expect_ok(r);
        EXPECT_EQ(0, r.code) << r.out << r.err;
        EXPECT_EQ(1, count_lines_with(r.out, ": OK")) << r.out;
    }
}

// a bsp_abort in a BSPedupack program (negative n): message, non-zero exit
TEST(BspProgramAbort, EdupackAbortOnBadInput)
{
    Child r = run_child({ EDUPACK_INPROD_BIN }, "3\n-5\n", 60, { P_env(16) }, 3);
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.exited);
    EXPECT_EQ(6, r.code);
    EXPECT_EQ(1, count_lines_with(r.err, "bsp_abort (process 0 of 3): Error in input: n is negative"));
}

INSTANTIATE_TEST_SUITE_P(P, BspProgram, ::testing::Values(1u, 2u, 3u, 4u, 8u));

} // namespace
