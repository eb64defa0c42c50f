// Helpers for the BSPlib tests.
//
// bsptest::run(P, body) starts a run of P processes the way BSPlib programs
// do (bsp_init + a call of the SPMD function, which calls bsp_begin and
// bsp_end) and executes body() in every process. Checks inside the body
// use gtest's EXPECT_* macros, which are thread-safe: on the pthread engine
// every BSP process is a thread of the test program.
#pragma once

#include <bsp.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace bsptest {

inline std::function<void()> &body()
{
    static std::function<void()> f;
    return f;
}

inline bsp_pid_t &wanted_procs()
{
    static bsp_pid_t P;
    return P;
}

inline void spmd_entry()
{
    bsp_begin(wanted_procs());
    body()();
    bsp_end();
}

// Run body() on P processes.
inline void run(bsp_pid_t P, std::function<void()> f)
{
    body() = std::move(f);
    wanted_procs() = P;
    bsp_init(&spmd_entry, 0, nullptr);
    spmd_entry();
    body() = nullptr;
}

// Process counts every positive test runs with.
inline auto procs() { return ::testing::Values(1u, 2u, 3u, 4u, 8u); }

} // namespace bsptest

// A parameterised fixture: GetParam() is the number of processes.
class BspP : public ::testing::TestWithParam<unsigned> {};
