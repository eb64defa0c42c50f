// PUB run-time errors (pub.md §10; checklist items 7, 9, 10, 11, 18, 32-35,
// 40, 41, 50, 53, 54, 64, 65, 68, 72, 73): every case of pub_misuse commits
// one mistake; the program must print exactly one line on stderr in the
// format of the conventions and exit with status 6, never hang.
#include "common/subprocess.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#ifndef PUB_MISUSE_BIN
# error "PUB_MISUSE_BIN must name the pub_misuse program"
#endif

namespace {

struct Case {
    const char *item;
    const char *name;
    std::vector<unsigned> procs;
    const char *regex;   // {P}: P, {L}: P-1
};

const std::vector<unsigned> ANY = { 1, 2, 4 };
const std::vector<unsigned> MANY = { 2, 4 };
const std::vector<unsigned> SEQ = { 1 };

#define ROOT(prim) "superstep: " prim " \\(process {L} of {P} in group 0\\.\\.{L} of {P}\\): "
#define GROUP(prim) "superstep: " prim " \\(process [0-9]+ of [0-9]+ in group [0-9]+\\.\\.[0-9]+ of {P}\\): "
#define RUN(prim) "superstep: " prim " \\(process [0-9]+ of {P}\\): "
#define OUT(prim) "superstep: " prim ": "

const std::vector<Case> &cases()
{
    static const std::vector<Case> c = {
        { "07", "exec0", SEQ, OUT("pub_exec") "P is 0" },
        { "07", "exec_neg", SEQ, OUT("pub_exec") "P is -1" },
        { "07", "exec_null", SEQ, OUT("pub_exec") "the SPMD function is NULL" },
        { "09", "time_outside", SEQ, OUT("bsp_time") "called outside a run" },
        { "10", "abort", { 4 }, "superstep: bsp_abort \\(process 1 of 4\\): x=3" },
        { "10", "abort_outside", SEQ, OUT("bsp_abort") "bye 1" },
        { "11", "return_early", MANY, GROUP("(bsp_sync|pub_exec)") ".*returned from the SPMD function" },
        { "11", "return_child", ANY, RUN("pub_exec") "the SPMD function returned with a live child" },
        { "18", "getmsg_n", ANY, ROOT("bsp_getmsg") "i = 0 is out of range \\(bsp_nmsgs is 0\\)" },
        { "18", "getmsg_neg", ANY, ROOT("bsp_getmsg") "i = -1 is out of range" },
        { "18", "findmsg_p", ANY, ROOT("bsp_findmsg") "src {P} is out of range" },
        { "18", "findmsg_neg", ANY, ROOT("bsp_findmsg") "src -1 is out of range" },
        { "18", "msg_null", ANY, RUN("bspmsg_size") "msg is NULL" },
        { "18", "send_p", ANY, ROOT("bsp_send") "dest {P} is out of range" },
        { "18", "hpsend_neg", ANY, ROOT("bsp_hpsend") "dest -1 is out of range" },
        { "18", "send_null", ANY, ROOT("bsp_send") "buf is NULL \\(size 4\\)" },
        { "72", "send_group", { 4 }, "superstep: bsp_send \\(process 1 of 2 in group 2\\.\\.3 of 4\\): dest 5" },
        { "32", "part_n0", ANY, ROOT("bsp_partition") "n is 0" },
        { "32", "part_null", ANY, ROOT("bsp_partition") "part is NULL" },
        { "32", "part_last", ANY, ROOT("bsp_partition") "part\\[[01]\\] = [0-9]+ but the group has {P} processes" },
        { "32", "part_order", { 4 }, ROOT("bsp_partition") "part is not increasing: part\\[0\\] = 2, part\\[1\\] = 1" },
        { "32", "part_zero", ANY, ROOT("bsp_partition") "group 0 is empty: part\\[0\\] = 0" },
        { "32", "part_subnull", ANY, ROOT("bsp_partition") "subbsp is NULL" },
        { "32", "part_self", ANY, ROOT("bsp_partition") "subbsp is the object itself" },
        { "32", "part_live", ANY, GROUP("bsp_partition") "subbsp 0x[0-9a-f]+ is a live BSP object" },
        { "33", "done_root", ANY, ROOT("bsp_done") "this is the run's root object" },
        { "33", "done_lifo", ANY, GROUP("bsp_done") "not the most recently created live object" },
        { "33", "done_pending", ANY, GROUP("bsp_done") "would discard 1 pending request" },
        { "33", "done_push", ANY, GROUP("bsp_done") "would discard 1 pending request" },
        { "33", "done_put", ANY, GROUP("bsp_done") "would discard 1 pending request" },
        { "33", "done_bcast", ANY, GROUP("bsp_done") "would discard [1-9][0-9]* pending requests?" },
        { "33", "done_reduce", ANY, GROUP("bsp_done") "would discard 1 pending request" },
        { "34", "use_done", ANY, RUN("bsp_sync") "0x[0-9a-f]+ is not a live BSP object of this process" },
        { "34", "use_copy", ANY, RUN("bsp_sync") "0x[0-9a-f]+ is not a live BSP object of this process" },
        { "34", "use_other", MANY, RUN("bsp_sync") "0x[0-9a-f]+ is not a live BSP object of this process" },
        { "34", "use_other_child", MANY, RUN("bsp_send") "0x[0-9a-f]+ is not a live BSP object of this process" },
        { "35", "parent_push", ANY, ROOT("bsp_push_reg") "this object is not active: its descendant" },
        { "35", "parent_part", ANY, ROOT("bsp_partition") "this object is not active: its descendant" },
        { "35", "parent_send", ANY, ROOT("bsp_send") "this object is not active: its descendant" },
        { "35", "parent_sync", ANY, ROOT("bsp_sync") "this object is not active: its descendant" },
        { "40", "dup_regs", ANY, GROUP("bsp_put") "destination 0x[0-9a-f]+ is not registered on this object \\(it is registered on an ancestor" },
        { "41", "threadsafe_dup", ANY, GROUP("bsp_threadsafe_dup") "not supported by this build" },
        { "50", "obl_put", ANY, GROUP("bsp_oblsync") "1 bsp_put request pending" },
        { "53", "obl_neg", ANY, ROOT("bsp_oblsync") "n is -1" },
        { "53", "obl_below_calls", ANY, GROUP("bsp_oblsync") "n is 0 but this process made 1 reduce-family call" },
        { "54", "kind_mix", MANY, GROUP("bsp_(oblsync|sync)") "process [0-9]+ (ended superstep 0 with bsp_(sync|oblsync), this process with bsp_(oblsync|sync)|is in superstep 1 of this object while this process is in superstep 0|\\(run pid [0-9]+\\) left the run)" },
        { "54", "kind_mix_objects", MANY, "superstep: bsp_oblsync \\(process [0-9]+ of {P} in group 0\\.\\.{L} of {P}\\): deadlock: waits in superstep 0 having received 0 of 1 expected messages, and every process of the run is blocked; run pid 0 waits in bsp_sync of another object or group" },
        { "36", "part_disagree", { 4 }, "superstep: bsp_sync \\(process [0-9]+ of [0-9]+ in group [0-9]+\\.\\.[0-9]+ of 4\\): deadlock: " },
        { "37", "done_while_sync", MANY, "superstep: bsp_sync \\(process [0-9]+ of [0-9]+ in group [0-9]+\\.\\.[0-9]+ of {P}\\): deadlock: " },
        { "51", "obl_too_large", MANY, "superstep: bsp_oblsync \\(process {L} of {P} in group 0\\.\\.{L} of {P}\\): deadlock: waits in superstep 0 having received 1 of 2" },
        { "52", "obl_too_small", { 2, 4 }, GROUP("bsp_(oblsync|sync)") "(2 events in superstep 0, 1 expected|late message for superstep 0 from process 0)" },
        { "73", "p1_too_many", { 1 }, ROOT("bsp_oblsync") "1 events in superstep 0, 0 expected" },
        { "73", "p1_too_few", { 1 }, ROOT("bsp_oblsync") "deadlock: waits in superstep 0 having received 1 of 2" },
        { "64", "gsend_range", ANY, ROOT("bsp_gsend") "last = {P} is out of range" },
        { "64", "gsend_order", { 1, 2 }, ROOT("bsp_gsend") "(first = 1 is greater than last = 0|first = -1 is negative)" },
        { "64", "lsend_repeat", ANY, ROOT("bsp_lsend") "table\\[1\\] = 0 repeats table\\[0\\]" },
        { "64", "lsend_null", ANY, ROOT("bsp_lsend") "table is NULL" },
        { "64", "reduce_count", ANY, ROOT("bsp_greduce") "count is -1" },
        { "64", "reduce_op", ANY, ROOT("bsp_greduce") "op is NULL" },
        { "64", "reduce_notmember", { 1, 2, 4 }, ROOT("bsp_[gl]reduce") "(the caller \\(pid {L}\\) is not a member|last = 1 is out of range)" },
        { "65", "reduce_kind", MANY, GROUP("bsp_sync") "(mismatched reduce-family calls|process [0-9]+ made a reduce-family call|process 0 made no reduce-family call)" },
        { "65", "reduce_skip", MANY, GROUP("bsp_sync") "(process 0 made no reduce-family call|process [0-9]+ made a reduce-family call .* that this process did not make)" },
        { "68", "put_unreg", ANY, ROOT("bsp_put") "destination 0x[0-9a-f]+ is not registered on this object" },
        { "68", "put_oob", ANY, ROOT("bsp_put") "offset 16 \\+ size 4 is out of bounds|superstep: bsp_put \\(process 0 of {P}\\): request issued by process {L}" },
        { "68", "put_pid", ANY, ROOT("bsp_put") "pid {P} is out of range" },
        { "68", "pop_unreg", ANY, ROOT("bsp_pop_reg") "address 0x[0-9a-f]+ has no active registration" },
        { "68", "push_count", MANY, GROUP("bsp_sync") "members pushed different numbers of registrations" },
    };
    return c;
}

std::string fill(std::string s, unsigned P)
{
    for (size_t at; (at = s.find("{P}")) != std::string::npos;) s.replace(at, 3, std::to_string(P));
    for (size_t at; (at = s.find("{L}")) != std::string::npos;) s.replace(at, 3, std::to_string(P - 1));
    return s;
}

class PubErrors : public ::testing::TestWithParam<Case> {};

TEST_P(PubErrors, OneLineStatus6)
{
    const Case &c = GetParam();
    for (unsigned P : c.procs) {
        SCOPED_TRACE(std::string(c.name) + " P=" + std::to_string(P));
        auto t0 = std::chrono::steady_clock::now();
        sstest::Child r = sstest::run_child({ PUB_MISUSE_BIN, c.name, std::to_string(P) }, "", 60,
                { std::string("PUB_MISUSE_CASE=") + c.name }, P);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ASSERT_TRUE(r.started);
        EXPECT_FALSE(r.timed_out) << r.err;
        EXPECT_TRUE(r.exited) << "signal " << r.signal << "\n" << r.err;
        EXPECT_EQ(r.code, 6) << r.out << r.err;
        EXPECT_EQ(r.out.find("NOT DETECTED"), std::string::npos);
        size_t lines = 0;
        for (char ch : r.err) lines += ch == '\n';
        EXPECT_EQ(lines, 1u) << r.err;
        std::regex re(fill(c.regex, P));
        EXPECT_TRUE(std::regex_search(r.err, re)) << "stderr: " << r.err << "regex: " << fill(c.regex, P);
        EXPECT_LT(secs, 20.0);
    }
}

std::string case_name(const ::testing::TestParamInfo<Case> &i)
{
    return std::string("Item") + i.param.item + "_" + i.param.name;
}

INSTANTIATE_TEST_SUITE_P(Pub, PubErrors, ::testing::ValuesIn(cases()), case_name);

} // namespace
