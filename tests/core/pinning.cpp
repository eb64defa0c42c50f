// The pthread engine's thread placement (src/engine/pthread/affinity.c):
// a section with a CPU per process pins each process to one CPU; a section
// with more processes than CPUs lets each of them run on all the section's
// CPUs (so that a runnable process can use a CPU its siblings left idle);
// the caller's own affinity comes back when the section ends. Shared
// memory: the counts are written into an array of the test.
#include <lpf/core.h>

#include <gtest/gtest.h>

#include <sched.h>

#include <cstdlib>
#include <vector>

namespace {

int allowed_cpus()
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_COUNT(&set);
}

std::vector<int> counts;

void record(lpf_t, lpf_pid_t s, lpf_pid_t, lpf_args_t)
{
    counts[s] = allowed_cpus();
}

std::vector<int> placement(lpf_pid_t P)
{
    counts.assign(P, -1);
    EXPECT_EQ(LPF_SUCCESS, lpf_exec(LPF_ROOT, P, record, LPF_NO_ARGS));
    return counts;
}

bool pinning_on()
{
    const char *v = std::getenv("SUPERSTEP_PIN");
    return !(v && std::string(v) == "none") && allowed_cpus() >= 2;
}

} // namespace

TEST(Pinning, OneCpuPerProcessWhileEachHasOne)
{
    if (!pinning_on()) GTEST_SKIP() << "pinning is off or one CPU is allowed";
    const int before = allowed_cpus();
    for (int c : placement(static_cast<lpf_pid_t>(before))) EXPECT_EQ(1, c);
    EXPECT_EQ(before, allowed_cpus()) << "the caller's affinity was not restored";
}

TEST(Pinning, AllCpusOfTheSectionWhenOversubscribed)
{
    if (!pinning_on()) GTEST_SKIP() << "pinning is off or one CPU is allowed";
    const int before = allowed_cpus();
    lpf_machine_t m = LPF_INVALID_MACHINE;
    ASSERT_EQ(LPF_SUCCESS, lpf_probe(LPF_ROOT, &m));
    const lpf_pid_t P = static_cast<lpf_pid_t>(2 * before + 1);
    if (m.free_p < P) GTEST_SKIP() << "LPF_MAX_PROCS allows only " << m.free_p << " processes";
    for (int c : placement(P)) EXPECT_EQ(before, c);
    EXPECT_EQ(before, allowed_cpus()) << "the caller's affinity was not restored";
}
