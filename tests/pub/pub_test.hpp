// Helpers of the PUB tests (tests/pub): run a body on P processes of the
// pthread engine; processes share memory, so results go into arrays indexed
// by run pid and are checked after pub_exec returns.
#pragma once
#include <pub.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <vector>

namespace pubtest {

inline std::function<void(pbsp)> &body()
{
    static std::function<void(pbsp)> b;
    return b;
}

inline void trampoline(pbsp bsp, void *) { body()(bsp); }

inline void run(int P, std::function<void(pbsp)> f)
{
    body() = std::move(f);
    pub_exec(P, trampoline, nullptr);
    body() = nullptr;
}

inline const std::vector<int> &procs()
{
    static const std::vector<int> p = { 1, 2, 3, 4, 8 };
    return p;
}

inline void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, nullptr);
}

// Independence without a clock: a process that must not be waited for sets
// `flag` when done; the one that would block it waits here for the flag
// (false after `limit` seconds: then the first was held back).
inline bool wait_flag(const std::atomic<int> &flag, double limit = 60.0)
{
    auto t0 = std::chrono::steady_clock::now();
    while (!flag.load()) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit)
            return false;
        sleep_s(0.001);
    }
    return true;
}

template <class T> T msg_val(pbspmsg m)
{
    T v;
    memcpy(&v, bspmsg_data(m), sizeof v);
    return v;
}

} // namespace pubtest
