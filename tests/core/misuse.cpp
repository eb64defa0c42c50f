// Superstep's decision on programming errors (§5.7, §5.5) and lpf_abort
// (items 75, 76): each case of lpf_misuse commits one mistake; the program
// must end with exit status 6 after printing ONE line that names the
// primitive, the process and the values. lpf_abort ends the program with
// status 6 and does not return.
//
// The cases run as subprocesses (no gtest death tests: they fork a
// multi-threaded process, and a distributed engine needs a launcher). Set
// SUPERSTEP_TEST_LAUNCHER (e.g. "mpirun -np 2") to start them through a
// launcher. A hang fails the case after a timeout.
#include "lpf_test.hpp"
#include "common/subprocess.hpp"


#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef LPF_MISUSE_BIN
# error "LPF_MISUSE_BIN must name the lpf_misuse program"
#endif

namespace {

using sstest::Child;
using sstest::run_child;

std::vector<std::string> lines_of(const std::string &s)
{
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) v.push_back(l);
    return v;
}

struct Case {
    const char *name;
    const char *regex;   // nullptr: lpf_abort, no message expected
    bool pthread_only;
};

// The message each mistake must produce (searched in the one line).
constexpr const char *kAbortLine =
    R"(lpf_abort\b.*: the program aborted; every process ends with exit status 6)";

const Case kCases[] = {
    // pid >= p
    { "put_dst_pid", R"(lpf_put \(process 1 of 2\): dst_pid 7 is out of range \(nprocs 2\))", false },
    { "put_dst_pid_max", R"(lpf_put \(process 1 of 2\): dst_pid 4294967295 is out of range)", false },
    { "get_src_pid", R"(lpf_get \(process 1 of 2\): src_pid 2 is out of range \(nprocs 2\))", false },
    { "root_put_dst_pid", R"(lpf_put \(process 0 of 1\): dst_pid 1 is out of range \(nprocs 1\))", false },
    // unknown, invalid and stale slots
    { "put_unknown_dst", R"(lpf_put \(process 1 of 2\): dst_slot 0x500000050 is not a memory slot)", false },
    { "put_unknown_src", R"(lpf_put \(process 1 of 2\): src_slot 0x500000051 is not a memory slot)", false },
    { "get_unknown_src", R"(lpf_get \(process 1 of 2\): src_slot 0x500000050 is not a memory slot)", false },
    { "put_invalid_dst", R"(lpf_put \(process 1 of 2\): dst_slot is LPF_INVALID_MEMSLOT)", false },
    { "put_invalid_src", R"(lpf_put \(process 1 of 2\): src_slot is LPF_INVALID_MEMSLOT)", false },
    { "put_stale_dst", R"(lpf_put \(process 1 of 2\): dst_slot 0x[0-9a-f]+ was deregistered \(stale slot\))", false },
    { "put_stale_reused", R"(lpf_put \(process 1 of 2\): dst_slot 0x[0-9a-f]+ was deregistered \(stale slot\))", false },
    { "get_stale_src", R"(lpf_get \(process 1 of 2\): src_slot 0x[0-9a-f]+ was deregistered \(stale slot\))", false },
    { "put_stale_src", R"(lpf_put \(process 1 of 2\): src_slot 0x[0-9a-f]+ was deregistered \(stale slot\))", false },
    { "get_stale_dst", R"(lpf_get \(process 1 of 2\): dst_slot 0x[0-9a-f]+ was deregistered \(stale slot\))", false },
    { "deregister_twice", R"(lpf_deregister \(process 1 of 2\): memslot 0x[0-9a-f]+ was deregistered \(stale slot\))", false },
    { "deregister_invalid", R"(lpf_deregister \(process 1 of 2\): memslot is LPF_INVALID_MEMSLOT)", false },
    { "deregister_unknown", R"(lpf_deregister \(process 1 of 2\): memslot 0x500000050 is not a memory slot)", false },
    // local slot where a global one is needed
    { "put_local_dst", R"(lpf_put \(process 1 of 2\): dst_slot 0x[0-9a-f]+ is a local slot)", false },
    { "get_local_src", R"(lpf_get \(process 1 of 2\): src_slot 0x[0-9a-f]+ is a local slot)", false },
    // global slot used in the superstep it was registered in
    { "put_new_global_dst", R"(lpf_put \(process 1 of 2\): dst_slot 0x[0-9a-f]+ was registered in this superstep)", false },
    { "get_new_global_src", R"(lpf_get \(process 1 of 2\): src_slot 0x[0-9a-f]+ was registered in this superstep)", false },
    { "put_new_global_src", R"(lpf_put \(process 1 of 2\): src_slot 0x[0-9a-f]+ is a global slot registered in this superstep)", false },
    { "get_new_global_dst", R"(lpf_get \(process 1 of 2\): dst_slot 0x[0-9a-f]+ is a global slot registered in this superstep)", false },
    // offset + size past the local area, or overflowing
    { "put_src_range", R"(lpf_put \(process 1 of 2\): src_slot: offset 4 \+ size 8 exceeds the 8 registered bytes)", false },
    { "put_src_overflow", R"(lpf_put \(process 1 of 2\): src_slot: offset 18446744073709551615 \+ size 2 exceeds the 8 registered bytes)", false },
    { "put_src_size_overflow", R"(lpf_put \(process 1 of 2\): src_slot: offset 4 \+ size 18446744073709551614 exceeds the 8 registered bytes)", false },
    { "get_dst_range", R"(lpf_get \(process 1 of 2\): dst_slot: offset 1 \+ size 8 exceeds the 8 registered bytes)", false },
    { "get_dst_overflow", R"(lpf_get \(process 1 of 2\): dst_slot: offset 2 \+ size 18446744073709551614 exceeds the 8 registered bytes)", false },
    // offset + size past the remote area: found at the sync, names the issuer
    { "put_remote_range", R"(lpf_put \(process 0 of 2\): request issued by process 1: offset 4 \+ size 8 exceeds the 8 bytes that process 0 registered)", false },
    { "put_remote_smaller", R"(lpf_put \(process 0 of 2\): request issued by process 1: offset 0 \+ size 8 exceeds the 4 bytes that process 0 registered)", false },
    { "put_remote_overflow", R"(lpf_put \(process 0 of 2\): request issued by process 1: offset 18446744073709551612 \+ size 8 exceeds the 8 bytes that process 0 registered)", false },
    { "put_remote_zero_slot", R"(lpf_put \(process 0 of 2\): request issued by process 1: offset 0 \+ size 1 exceeds the 0 bytes that process 0 registered)", false },
    { "get_remote_range", R"(lpf_get \(process [01] of 2\): request issued by process 1: offset 8 \+ size 8 exceeds the 8 bytes that process 0 registered)", false },
    { "get_remote_overflow", R"(lpf_get \(process [01] of 2\): request issued by process 1: offset 18446744073709551615 \+ size 1 exceeds the 8 bytes that process 0 registered)", false },
    { "put_remote_range_solo", R"(lpf_put \(process 0 of 1\): request issued by process 0: offset 4 \+ size 8 exceeds the 8 bytes that process 0 registered)", false },
    { "get_remote_range_solo", R"(lpf_get \(process 0 of 1\): request issued by process 0: offset 1 \+ size 8 exceeds the 8 bytes that process 0 registered)", false },
    // more registrations than the capacity
    { "register_over_capacity", R"(lpf_register_global \(process 1 of 2\): memory register capacity exceeded: 1 registrations live, capacity 1)", false },
    { "register_local_no_capacity", R"(lpf_register_local \(process 1 of 2\): memory register capacity exceeded: 0 registrations live, capacity 0)", false },
    { "register_before_sync", R"(lpf_register_global \(process 1 of 2\): memory register capacity exceeded: 0 registrations live, capacity 0)", false },
    { "register_after_shrink", R"(lpf_register_local \(process 1 of 2\): memory register capacity exceeded: 1 registrations live, capacity 1)", false },
    { "rehook_fresh_register", R"(lpf_register_global \(process 1 of 2\): memory register capacity exceeded: 0 registrations live, capacity 0)", false },
    // more requests than the capacity
    { "put_over_queue", R"(lpf_put \(process 1 of 2\): message queue capacity exceeded: 1 requests issued in this superstep, capacity 1)", false },
    { "get_over_queue", R"(lpf_get \(process 1 of 2\): message queue capacity exceeded: 1 requests issued in this superstep, capacity 1)", false },
    { "put_no_queue", R"(lpf_put \(process 1 of 2\): message queue capacity exceeded: 0 requests issued in this superstep, capacity 0)", false },
    { "put_after_queue_shrink", R"(lpf_put \(process 1 of 2\): message queue capacity exceeded: 0 requests issued in this superstep, capacity 0)", false },
    { "rehook_fresh_put", R"(lpf_put \(process 1 of 2\): message queue capacity exceeded: 0 requests issued in this superstep, capacity 0)", false },
    // NULL pointers
    { "register_null_memslot", R"(lpf_register_global \(process 1 of 2\): memslot is NULL)", false },
    { "register_local_null_memslot", R"(lpf_register_local \(process 1 of 2\): memslot is NULL)", false },
    { "register_null_pointer", R"(lpf_register_local \(process 1 of 2\): pointer is NULL but size is 8)", false },
    { "exec_null_spmd", R"(lpf_exec \(process 0 of 1\): spmd is NULL)", false },
    { "nested_exec_null_spmd", R"(lpf_exec \(process 1 of 2\): spmd is NULL)", false },
    { "rehook_null_spmd", R"(lpf_rehook \(process 1 of 2\): spmd is NULL)", false },
    { "hook_null_spmd", R"(lpf_hook\b.*: spmd is NULL)", true },
    { "exec_null_input", R"(lpf_exec \(process 0 of 1\): args.input is NULL but input_size is 4)", false },
    { "exec_null_output", R"(lpf_exec \(process 0 of 1\): args.output is NULL but output_size is 4)", false },
    { "exec_null_fsymbols", R"(lpf_exec \(process 0 of 1\): args.f_symbols is NULL but f_size is 1)", false },
    { "exec_p_zero", R"(lpf_exec \(process 0 of 1\): P is 0)", false },
    { "probe_null", R"(lpf_probe \(process 1 of 2\): params is NULL)", false },
    { "sync_none_ctx", R"(lpf_sync\b.*: invalid context)", false },
    { "put_none_ctx", R"(lpf_put\b.*: invalid context)", false },
    // lpf_abort (items 75, 76): one line per aborting process (issue 9)
    { "abort_root", kAbortLine, false },
    { "abort_section", kAbortLine, false },
    { "abort_pid0", kAbortLine, false },
    { "abort_busy", kAbortLine, false },
    { "abort_nested", kAbortLine, false },
    { "abort_hook", kAbortLine, true },
};

// test names show the case, not its bytes
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class Misuse : public ::testing::TestWithParam<Case> {};

TEST_P(Misuse, EndsWithStatus6AndOneLine)
{
    const Case &c = GetParam();
    if (c.pthread_only && !sstest::shared_memory_engine())
        GTEST_SKIP() << "uses lpf_pthread_initialize";
    Child r = run_child({ LPF_MISUSE_BIN, c.name }, "", 60);
    ASSERT_TRUE(r.started) << r.err;
    ASSERT_FALSE(r.timed_out) << "the program hung; stderr: " << r.err << " stdout: " << r.out;
    EXPECT_EQ(std::string::npos, r.out.find("NOT DETECTED")) << r.out;
    EXPECT_EQ(std::string::npos, r.out.find("lpf_abort returned")) << r.out;
    ASSERT_TRUE(r.exited) << "ended by signal " << r.signal << "; stderr: " << r.err;
    EXPECT_EQ(6, r.code) << "stderr: " << r.err << " stdout: " << r.out;
    // A launcher (mpirun) may add lines of its own: then only the library's
    // lines (prefix "superstep: ") are counted.
    const bool launcher = std::getenv("SUPERSTEP_TEST_LAUNCHER") != nullptr;
    std::vector<std::string> lines;
    for (const std::string &l : lines_of(r.err))
        if (!launcher || l.rfind("superstep: ", 0) == 0) lines.push_back(l);
    if (c.regex == kAbortLine) {
        // every process that calls lpf_abort says so (on MPI, nested
        // sections may have several)
        ASSERT_FALSE(lines.empty()) << r.err;
        for (const std::string &l : lines)
            EXPECT_TRUE(std::regex_search(l, std::regex(c.regex))) << "line: " << l;
        return;
    }
    ASSERT_EQ(1u, lines.size()) << "expected exactly one line on stderr, got:\n" << r.err;
    EXPECT_EQ(0u, lines[0].rfind("superstep: ", 0)) << lines[0];
    EXPECT_TRUE(std::regex_search(lines[0], std::regex(c.regex)))
            << "line:     " << lines[0] << "\nexpected: " << c.regex;
}

INSTANTIATE_TEST_SUITE_P(Case, Misuse, ::testing::ValuesIn(kCases),
        [](const ::testing::TestParamInfo<Case> &i) { return std::string(i.param.name); });

// Every case of the program has an expectation here, and vice versa.
TEST(MisuseProgram, ListMatchesTable)
{
    Child r = run_child({ LPF_MISUSE_BIN, "--list" }, "", 60);
    ASSERT_TRUE(r.started);
    ASSERT_TRUE(r.exited && r.code == 0) << r.err;
    std::set<std::string> listed, table;
    for (auto &l : lines_of(r.out)) listed.insert(l);
    for (const Case &c : kCases) table.insert(c.name);
    EXPECT_EQ(table, listed);
}

TEST(MisuseProgram, UnknownCase)
{
    Child r = run_child({ LPF_MISUSE_BIN, "no_such_case" }, "", 60);
    ASSERT_TRUE(r.started);
    EXPECT_TRUE(r.exited && r.code == 2);
}

} // namespace
