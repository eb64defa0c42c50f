// Helpers for the BSPlib tests.
//
// bsptest::run(P, body) starts a run of P processes the way BSPlib programs
// do (bsp_init + a call of the SPMD function, which calls bsp_begin and
// bsp_end) and executes body() in every process.
//
// The same test sources build two ways:
//  * with GoogleTest (test_bsplib_*): in-process, the pthread engine; every
//    BSP process is a thread, gtest's EXPECT_* macros are thread-safe;
//  * with bsp_shim.hpp (bsp_checks_*, BSPTEST_SHIM): for distributed engines
//    (bsprun --engine mpi -n P ...). There the processes other than pid 0
//    never ran the test's sequential code: at the start of every run pid 0
//    sends them the test's index, they build their own instance of the test
//    and execute its body up to bsptest::run, which then runs body() for
//    them (so a lambda's captured locals are each process's own).
// Tests written for both therefore communicate only through BSPlib and let
// only pid 0 write variables that the sequential part checks afterwards.
#pragma once

#include <bsp.h>

#ifdef BSPTEST_USE_SHIM
# include "bsp_shim.hpp"
#else
# include <gtest/gtest.h>
#endif

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

#ifdef BSPTEST_SHIM
// this process executes a test body on behalf of pid 0's run
inline bool &sibling_mode()
{
    static thread_local bool m = false;
    return m;
}

// pid 0 tells the others which test this run belongs to
inline int share_test_index()
{
    int idx = bsp_pid() == 0 ? shim::current_index() : -1;
    bsp_push_reg(&idx, sizeof idx);
    bsp_sync();
    if (bsp_pid() != 0) bsp_get(0, &idx, 0, &idx, sizeof idx);
    bsp_sync();
    bsp_pop_reg(&idx);
    bsp_sync();
    return idx;
}
#endif

inline void spmd_entry()
{
    bsp_begin(wanted_procs());
#ifdef BSPTEST_SHIM
    const int idx = share_test_index();
    if (bsp_pid() != 0) {
        sibling_mode() = true;
        shim::run_sibling(idx);   // reaches run(), which ends with bsp_end
        bsp_end();
    }
#endif
    body()();
    bsp_end();
}

// Run body() on P processes.
inline void run(bsp_pid_t P, std::function<void()> f)
{
#ifdef BSPTEST_SHIM
    if (sibling_mode()) {
        f();
        bsp_end();   // a sibling leaves the run here (does not return)
    }
#endif
    body() = std::move(f);
    wanted_procs() = P;
    bsp_init(&spmd_entry, 0, nullptr);
    spmd_entry();
    body() = nullptr;
}

// Every process contributes v; pid 0 gets all values (index = pid), the
// others an array of zeros. Three supersteps, inside a run.
inline std::vector<uint64_t> gather(uint64_t v)
{
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    std::vector<uint64_t> all(p, 0);
    bsp_push_reg(all.data(), p * sizeof(uint64_t));
    bsp_sync();
    bsp_put(0, &v, all.data(), s * sizeof(uint64_t), sizeof v);
    bsp_sync();
    bsp_pop_reg(all.data());
    bsp_sync();
    return all;
}

// Process counts every positive test runs with.
inline auto procs() { return ::testing::Values(1u, 2u, 3u, 4u, 8u); }

} // namespace bsptest

// A parameterised fixture: GetParam() is the number of processes.
class BspP : public ::testing::TestWithParam<unsigned> {};
