// The profiler's report must not mislead (docs/profiler.md, "Reading the
// summary"): the start-up apart and the program's supersteps numbered as
// checked mode numbers them; a superstep's time never below its max
// computation; a 2:1 work split at p = 2 called imbalance; the supersteps
// per call site; processes that outnumber the cores said; the stacked bars
// of the time chart as long as their values on a linear axis. Synthetic
// records with hand-computed numbers, and one recorded run (prof_lines).
#include <gtest/gtest.h>

#include "prof.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

std::string env(const char *name, const char *dflt = "")
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string tmpdir()
{
    char t[] = "/tmp/sstep-profrep-XXXXXX";
    const char *d = mkdtemp(t);
    return d ? d : "";
}

int run(const std::string &cmd)
{
    int st = system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int line_of(const std::string &path, const std::string &marker)
{
    std::ifstream in(path);
    std::string l;
    for (int n = 1; std::getline(in, l); ++n)
        if (l.find(marker) != std::string::npos) return n;
    return 0;
}

// one process's part of section t<P>.0, 200 ms long: `sites` and `steps`
// are the lines as the recorder writes them; cores 0: no "cores" line (an
// older record)
void part(const std::string &dir, unsigned P, unsigned pid, unsigned cores, const std::string &sites,
        const std::string &steps, const std::string &host = "testhost", const std::string &cpus = "")
{
    std::ofstream f(dir + "/synth.t" + std::to_string(P) + ".0." + std::to_string(pid) + ".part");
    f << SSTEP_PROF_MAGIC << " " << SSTEP_PROF_VERSION << "\nrun synth\nsection t" << P << ".0\nparent - -1\n"
      << "procs " << P << "\npid " << pid << "\nengine pthread\nhost " << host << "\nospid 1\n"
      << "start 1000000000 5000000000\nend 200000000\nlost 0\nr 1e9\n";
    if (cores) f << "cores " << cores << " " << cpus << "\n";
    for (int e = 0; e < SSTEP_PROF_GL_POINTS; ++e) f << "gl " << (1u << e) << " 1e-09 1e-06\n";
    f << sites << steps << "eof\n";
}

// "s T0 T1 ORIGIN SITE" with no requests
std::string s(unsigned long t0, unsigned long t1, int site = 0)
{
    return "s " + std::to_string(t0) + " " + std::to_string(t1) + " 0 " + std::to_string(site) +
            " 0 0 0 0 0 0 0 0 0\n";
}

std::string summary_of(const pf_run &R)
{
    char *text = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return "";
    pf_summary(f, &R);
    fclose(f);
    std::string out(text, len);
    free(text);
    return out;
}

std::string html_of(const pf_run &R)
{
    char *text = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return "";
    pf_html(f, &R);
    fclose(f);
    std::string out(text, len);
    free(text);
    return out;
}

std::string label(const pf_section &S, size_t k)
{
    char buf[32];
    return pf_step_label(&S, k, buf, sizeof buf);
}

// the value of attribute `name` in the tag that starts at `at`
std::string attr(const std::string &html, size_t at, const std::string &name)
{
    size_t end = html.find('>', at);
    size_t p = html.find(" " + name + "='", at);
    if (p == std::string::npos || p > end) return "";
    p += name.size() + 3;
    return html.substr(p, html.find('\'', p) - p);
}

const std::string kSite = "site 0 0 user main+0x10\n";

} // namespace

// bsp_begin's sync (an "own" line) is the start-up: apart, not superstep
// 0; a layer's own sync later is "N+"; the program's supersteps count from
// 0 as checked mode counts them.
TEST(Synthetic, StartupApart)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // rows: start-up (112 us of "computation"), 0, 1, own sync after 1, 2
    for (unsigned pid = 0; pid < 2; ++pid)
        part(dir, 2, pid, 0, kSite + "site 1 1 bsplib bsplib_create+0x1a3\n",
                s(112000, 112100, 1) + "own\n" + s(113100, 113200) + s(114200, 114300) +
                s(114400, 114500) + "own\n" + s(115500, 115600));
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    ASSERT_EQ(R.nsec, 1u);
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 5u);
    EXPECT_EQ(S.nstart, 1u);
    EXPECT_EQ(S.nuser, 3u);
    EXPECT_TRUE(S.st[0].startup);
    EXPECT_NEAR(S.startup, 112100e-9, 1e-12);
    EXPECT_EQ(label(S, 0), "start-up");
    EXPECT_EQ(label(S, 1), "0");
    EXPECT_EQ(label(S, 2), "1");
    EXPECT_EQ(label(S, 3), "1+");
    EXPECT_EQ(label(S, 4), "2");
    // the supersteps' times without the start-up
    EXPECT_NEAR(S.steps_time, (1100 + 1100 + 200 + 1100) * 1e-9, 1e-12);
    // shares after the start-up: each process's life from its exit of
    // bsp_begin's sync, 4 syncs of 100 ns each
    EXPECT_NEAR(S.life, 2 * (200000000 - 112100) * 1e-9, 1e-12);
    EXPECT_NEAR(S.comm + S.wait, 2 * 400e-9, 1e-12);
    const std::string sum = summary_of(R);
    EXPECT_NE(sum.find("3 supersteps"), std::string::npos) << sum;
    EXPECT_NE(sum.find("start-up: 112.10 us (the library's own sync before the program's first superstep, "
                       "bsplib_create+0x1a3; not counted below)"), std::string::npos) << sum;
    EXPECT_NE(sum.find("and 1 sync the layers made for themselves"), std::string::npos) << sum;
    // the table of the most expensive supersteps: no start-up row; "1+"
    const size_t table = sum.find("most expensive supersteps");
    ASSERT_NE(table, std::string::npos);
    EXPECT_EQ(sum.find("start-up  ", table), std::string::npos) << sum;
    EXPECT_NE(sum.find("     1+ user", table), std::string::npos) << sum;
    EXPECT_EQ(sum.find("112.10 us", table), std::string::npos) << sum;
    const std::string html = html_of(R);
    EXPECT_NE(html.find("<p class='startup'>Start-up: 112.10 us"), std::string::npos);
    EXPECT_NE(html.find("<td>1+</td>"), std::string::npos);
    pf_free(&R);
    run("rm -rf " + dir);
}

// A superstep's time is the longest any process spent in it, each on its
// own clock: a process that left the previous sync early and computed long
// does not make "comp max" exceed "time".
TEST(Synthetic, TimeNotBelowComputation)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // process 1 leaves sync 0 at 3000, process 0 at 1100; process 0 then
    // computes 3900 ns. Last exits: 3000, 5100: 2100 ns between them.
    part(dir, 2, 0, 0, kSite, s(1000, 1100) + s(5000, 5100) + s(5200, 5300));
    part(dir, 2, 1, 0, kSite, s(1050, 3000) + s(4000, 5100) + s(5250, 5300));
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 3u);
    EXPECT_NEAR(S.st[1].comp_max, 3900e-9, 1e-12);
    EXPECT_NEAR(S.st[1].time, 4000e-9, 1e-12);   // process 0: 1100 .. 5100
    EXPECT_NEAR(S.st[0].time, 3000e-9, 1e-12);   // process 1: 0 .. 3000
    for (size_t k = 0; k < S.nsteps; ++k) {
        EXPECT_GE(S.st[k].time, S.st[k].comp_max + S.st[k].comm - 1e-12) << k;
        EXPECT_LE(S.st[k].comm, S.st[k].time) << k;
    }
    pf_free(&R);
    run("rm -rf " + dir);
}

// A 2:1 work split at p = 2 (max / mean 1.33) is called imbalance; 1.2:1
// (1.09) is computation; the summary counts the supersteps at 1.25 or more.
TEST(Synthetic, TwoToOneIsImbalance)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // step 0: 2000 and 1000 ns of work; step 1: 1200 and 1000; step 2:
    // 3000 and 1000 (p = 4 below); each sync 100 ns on the last to arrive
    part(dir, 2, 0, 0, kSite, s(2000, 2100) + s(3300, 3400));
    part(dir, 2, 1, 0, kSite, s(1000, 2100) + s(3100, 3400));
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 2u);
    EXPECT_NEAR(S.st[0].imbalance, 2000.0 / 1500.0, 1e-9);
    EXPECT_STREQ(S.st[0].cause, "imbalance");
    EXPECT_NEAR(S.st[1].imbalance, 1200.0 / 1100.0, 1e-9);
    EXPECT_STREQ(S.st[1].cause, "computation");
    const std::string sum = summary_of(R);
    EXPECT_NE(sum.find("1 of 2 at 1.25 or more"), std::string::npos) << sum;
    pf_free(&R);
    // at p = 4, one process with 1.5 times the others' work: 1.5 / 1.125
    run("rm -f " + dir + "/*.part");
    for (unsigned pid = 0; pid < 4; ++pid)
        part(dir, 4, pid, 0, kSite, s(pid ? 2000 : 3000, 3100));
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    EXPECT_NEAR(R.sec[0].st[0].imbalance, 3000.0 / 2250.0, 1e-9);
    EXPECT_STREQ(R.sec[0].st[0].cause, "imbalance");
    pf_free(&R);
    run("rm -rf " + dir);
}

// Supersteps per call site: a loop's sync that ended 301 of 306 supersteps
// is one row, whatever recorded sites resolve to the same call; shares of
// the supersteps' time add up to 100%.
TEST(Synthetic, CallSiteTotals)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // sites 0 and 2: the same call (recorded twice: another layer's
    // caller); site 1: another. 301 supersteps of 1000 ns at sites 0 / 2,
    // 5 of 10000 ns at site 1.
    const std::string sites = "site 0 1 bsplib jacobi+0x40\nsite 1 1 bsplib jacobi+0x90\n"
                              "site 2 1 bsplib jacobi+0x40\n";
    std::string steps;
    unsigned long t = 0;
    for (int k = 0; k < 306; ++k) {
        const bool other = k % 61 == 60;
        const unsigned long work = other ? 9900 : 900;
        steps += s(t + work, t + work + 100, other ? 1 : k % 2 ? 2 : 0);
        t += work + 100;
    }
    for (unsigned pid = 0; pid < 2; ++pid) part(dir, 2, pid, 0, sites, steps);
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 306u);
    const std::string sum = summary_of(R);
    const size_t at = sum.find("supersteps by the call that ended them (per call site):");
    ASSERT_NE(at, std::string::npos) << sum;
    // 301 x 1000 ns = 301 us (85.8% of 351 us), 5 x 10000 ns = 50 us (14.2%)
    EXPECT_NE(sum.find("       301   301.00 us     1.00 us   85.8%  jacobi+0x40", at), std::string::npos) << sum;
    EXPECT_NE(sum.find("         5    50.00 us    10.00 us   14.2%  jacobi+0x90", at), std::string::npos) << sum;
    const std::string html = html_of(R);
    const size_t h = html.find("<table class='sites'>");
    ASSERT_NE(h, std::string::npos);
    EXPECT_NE(html.find("<code>jacobi+0x40</code></td><td style='text-align:left'><code></code></td>"
                        "<td>301</td><td>301.00 us</td><td>1.00 us</td><td>85.8%</td>", h), std::string::npos);
    pf_free(&R);
    run("rm -rf " + dir);
}

// Processes that outnumber a host's cores are said, in the summary and the
// report; not when the cores suffice or were not recorded.
TEST(Synthetic, Oversubscribed)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    pf_run R;
    char msg[512];
    for (unsigned cores : { 1u, 2u, 0u }) {
        run("rm -f " + dir + "/*.part");
        for (unsigned pid = 0; pid < 2; ++pid) part(dir, 2, pid, cores, kSite, s(1000, 1100));
        ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
        const std::string sum = summary_of(R), html = html_of(R);
        const bool over = cores == 1;
        EXPECT_EQ(sum.find("processes outnumbered the cores: 2 processes on host testhost, which has 1 core;")
                          != std::string::npos, over) << sum;
        EXPECT_EQ(html.find("<p class='warn oversub'>Processes outnumbered the cores: 2 processes on host "
                            "testhost, which has 1 core.") != std::string::npos, over);
        pf_free(&R);
    }
    // two hosts, 2 processes each: only the host with 1 core
    run("rm -f " + dir + "/*.part");
    for (unsigned pid = 0; pid < 4; ++pid)
        part(dir, 4, pid, pid < 2 ? 4 : 1, kSite, s(1000, 1100), pid < 2 ? "big" : "small");
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    const std::string sum = summary_of(R);
    EXPECT_NE(sum.find("2 processes on host small, which has 1 core;"), std::string::npos) << sum;
    EXPECT_EQ(sum.find("host big"), std::string::npos) << sum;
    pf_free(&R);
    // MPI ranks bound to a core each: the host has the union of their CPUs
    for (const char *second : { "1", "0" }) {
        run("rm -f " + dir + "/*.part");
        part(dir, 2, 0, 1, kSite, s(1000, 1100), "vm", "0");
        part(dir, 2, 1, 1, kSite, s(1000, 1100), "vm", second);
        ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
        const std::string text = summary_of(R);
        EXPECT_EQ(text.find("2 processes on host vm, which has 1 core;") != std::string::npos,
                  !strcmp(second, "0")) << text;
        pf_free(&R);
    }
    run("rm -rf " + dir);
}

// The time chart stacks on a linear axis from 0: every part of a bar is as
// long as its value, the bar as long as the superstep's time, on the scale
// of the axis's ticks (a 34 ms mean reads 34 ms). The start-up is not drawn.
TEST(Synthetic, StackedBarsReadOffTheAxis)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // start-up, then supersteps with 34 ms, 3 ms and 300 us of computation
    // (process 1 half of it) and 1 ms of exchange
    const unsigned long ms = 1000000;
    part(dir, 2, 0, 0, kSite + "site 1 1 bsplib bsplib_create+0x1a3\n",
            s(100 * ms, 100 * ms + 1000, 1) + "own\n" + s(134 * ms, 135 * ms) + s(138 * ms, 139 * ms) +
            s(139 * ms + 300000, 140 * ms + 300000));
    part(dir, 2, 1, 0, kSite + "site 1 1 bsplib bsplib_create+0x1a3\n",
            s(100 * ms, 100 * ms + 1000, 1) + "own\n" + s(117 * ms, 135 * ms) + s(136 * ms + 500000, 139 * ms) +
            s(139 * ms + 150000, 140 * ms + 300000));
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 4u);
    ASSERT_EQ(S.nstart, 1u);
    const std::string html = html_of(R);
    const size_t c0 = html.find("class='time-chart'");
    ASSERT_NE(c0, std::string::npos);
    const size_t c1 = html.find("</svg>", c0);
    // the axis: y of the tick at 0 and of the highest tick
    double y0 = NAN, ytop = NAN, vtop = 0;
    for (size_t at = html.find("<line class='tick'", c0); at < c1; at = html.find("<line class='tick'", at + 1)) {
        const double v = atof(attr(html, at, "data-v").c_str()), y = atof(attr(html, at, "y1").c_str());
        if (v == 0) y0 = y;
        if (v >= vtop) { vtop = v; ytop = y; }
    }
    ASSERT_TRUE(std::isfinite(y0) && std::isfinite(ytop) && vtop > 0);
    const double px = (y0 - ytop) / vtop;   // pixels per second, from the axis
    // each part, each bar
    std::map<int, double> height, top;
    std::map<int, std::map<std::string, double>> value;
    int bars = 0;
    for (size_t at = html.find("<rect class='", c0); at < c1; at = html.find("<rect class='", at + 1)) {
        const std::string cls = attr(html, at, "class");
        const int bar = atoi(attr(html, at, "data-bar").c_str());
        const double v = atof(attr(html, at, "data-v").c_str());
        if (cls == "bar") {
            ++bars;
            value[bar]["time"] = v;
            continue;
        }
        const double hgt = atof(attr(html, at, "height").c_str()), y = atof(attr(html, at, "y").c_str());
        EXPECT_NEAR(hgt, v * px, 0.01) << cls << " of bar " << bar;
        value[bar][cls] = v;
        height[bar] += hgt;
        top[bar] = top.count(bar) ? std::min(top[bar], y) : y;
    }
    ASSERT_EQ(bars, 3);   // the start-up is not a bar
    for (int b = 0; b < 3; ++b) {
        const pf_sstep &x = S.st[1 + b];
        EXPECT_NEAR(value[b]["time"], x.time, 1e-9);
        EXPECT_NEAR(value[b]["comp"], x.comp_mean, 1e-9);
        EXPECT_NEAR(value[b]["imbal"], x.comp_max - x.comp_mean, 1e-9);
        EXPECT_NEAR(value[b]["exch"], x.time - x.comp_max, 1e-9);
        EXPECT_NEAR(height[b], x.time * px, 0.02) << "bar " << b;
        EXPECT_NEAR(y0 - top[b], x.time * px, 0.02) << "bar " << b;
    }
    // the first: 34 ms mean computation (process 1: 17 ms, process 0: 34 ms)
    EXPECT_NEAR(S.st[1].time, 35e-3, 2e-6);
    EXPECT_NEAR(value[0]["comp"], 25.5e-3, 2e-6);
    EXPECT_GE(vtop, S.st[1].time);

    // the log chart beside it: unstacked, each bar's top at its time on
    // the decades of the axis
    const size_t l0 = html.find("class='time-log'");
    ASSERT_NE(l0, std::string::npos);
    const size_t l1 = html.find("</svg>", l0);
    std::map<double, double> dec;   // log10(value) -> y
    for (size_t at = html.find("<line class='tick'", l0); at < l1; at = html.find("<line class='tick'", at + 1))
        dec[std::log10(atof(attr(html, at, "data-v").c_str()))] = atof(attr(html, at, "y1").c_str());
    ASSERT_GE(dec.size(), 2u);
    const double d_lo = dec.begin()->first, y_lo = dec.begin()->second;
    const double d_hi = dec.rbegin()->first, y_hi = dec.rbegin()->second;
    int lbars = 0;
    for (size_t at = html.find("<rect class='bar'", l0); at < l1; at = html.find("<rect class='bar'", at + 1)) {
        const int bar = atoi(attr(html, at, "data-bar").c_str());
        ASSERT_LT(bar, 3);
        const double t = S.st[1 + bar].time, y = atof(attr(html, at, "y").c_str());
        EXPECT_NEAR(atof(attr(html, at, "data-v").c_str()), t, 1e-9);
        EXPECT_NEAR(y, y_lo + (std::log10(t) - d_lo) / (d_hi - d_lo) * (y_hi - y_lo), 0.01) << "bar " << bar;
        EXPECT_NEAR(atof(attr(html, at, "height").c_str()), y_lo - y, 0.01) << "bar " << bar;
        ++lbars;
    }
    EXPECT_EQ(lbars, 3);
    pf_free(&R);
    run("rm -rf " + dir);
}

// A recorded BSPlib run (prof_lines.c, -g): the start-up is bsp_begin's
// sync, the loop's sync is one call site with its count.
TEST(Record, StartupAndCallSites)
{
    if (env("PROF_ADDR2LINE").empty()) GTEST_SKIP() << "no addr2line";
    const std::string engine = env("PROF_ENGINE", "pthread");
    const unsigned P = (unsigned)atoi(env("PROF_P", "2").c_str());
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    const int steps = 60;
    std::string cmd = "PROF_LINES_STEPS=" + std::to_string(steps) + " " + env("PROF_BSPRUN") + " --engine " +
            engine + " -n " + std::to_string(P) + " --profile " + dir + "/rec " + env("PROF_LINES") + " > " + dir +
            "/out.txt 2>&1";
    ASSERT_EQ(run(cmd), 0) << cmd << "\n" << slurp(dir + "/out.txt");
    const int loop = line_of(env("PROF_LINES_SRC"), "/* LOOP-SYNC */");
    ASSERT_GT(loop, 0);
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, (dir + "/rec").c_str(), nullptr, msg, sizeof msg), 0) << msg;
    ASSERT_EQ(R.nsec, 1u);
    const pf_section &S = R.sec[0];
    // bsp_begin's sync, then the registration's (superstep 0), the loop
    // (1 .. 60), the pop's (61) and bsp_end's (62)
    EXPECT_EQ(S.nstart, 1u);
    EXPECT_TRUE(S.st[0].startup);
    EXPECT_EQ(label(S, 1), "0");
    EXPECT_EQ(label(S, 2), "1");
    EXPECT_EQ(S.nuser, (size_t)steps + 3);
    const std::string sum = slurp(dir + "/rec/summary.txt");
    EXPECT_NE(sum.find("start-up: "), std::string::npos) << sum;
    // 58 of the loop's 60 supersteps end at LOOP-SYNC (one at SLOW-SYNC, one
    // at BIG-SYNC)
    const size_t at = sum.find("per call site");
    ASSERT_NE(at, std::string::npos) << sum;
    const size_t row = sum.find("prof_lines.c:" + std::to_string(loop) + " in ", at);
    ASSERT_NE(row, std::string::npos) << sum;
    const size_t bol = sum.rfind('\n', row) + 1;
    EXPECT_EQ(atoi(sum.c_str() + bol), steps - 2) << sum.substr(bol, row - bol);
    EXPECT_NE(slurp(dir + "/rec/report.html").find("<table class='sites'>"), std::string::npos);
    pf_free(&R);
    run("rm -rf " + dir);
}

// An LPF section has no sync of the library's own: its start-up is the time
// until the engine had started its processes ("ready"), and superstep 0's
// computation counts from there.
TEST(Synthetic, StartupOfLpfSection)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // process 0 ready at 25 ms; process 1 (another OS process) not recorded
    part(dir, 2, 0, 0, kSite, "ready 25000000\n" + s(25001000, 25001100) + s(25002100, 25002200));
    part(dir, 2, 1, 0, kSite, s(20000000, 25001100) + s(25002100, 25002200));
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 2u);
    EXPECT_EQ(S.nstart, 0u);
    EXPECT_EQ(S.nuser, 2u);
    EXPECT_NEAR(S.startup, 25e-3, 1e-12);
    EXPECT_EQ(label(S, 0), "0");
    EXPECT_NEAR(S.part[0]->ready, 25e-3, 1e-12);
    // process 1's 20 ms before its first sync is its superstep 0's work
    EXPECT_NEAR(S.st[0].comp_max, 20e-3, 1e-12);
    EXPECT_NEAR(S.st[0].comp_mean, (20e-3 + 1000e-9) / 2, 1e-12);
    const std::string sum = summary_of(R);
    EXPECT_NE(sum.find("start-up: 25.000 ms (starting the section's processes, before the program's code ran"),
              std::string::npos) << sum;
    EXPECT_NE(sum.find("measured 175.000 ms after the start-up"), std::string::npos) << sum;
    pf_free(&R);
    run("rm -rf " + dir);
}

// A recorded LPF run (prof_known): process 0's part says when the engine
// had started the section's processes, before its first sync.
TEST(Record, LpfStartup)
{
    const std::string engine = env("PROF_ENGINE", "pthread");
    const unsigned P = (unsigned)atoi(env("PROF_P", "2").c_str());
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    std::string cmd = env("PROF_BSPRUN") + " --engine " + engine + " -n " + std::to_string(P) + " --profile " +
            dir + "/rec " + env("PROF_PROGRAM") + " > " + dir + "/out.txt 2>&1";
    ASSERT_EQ(run(cmd), 0) << cmd << "\n" << slurp(dir + "/out.txt");
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, (dir + "/rec").c_str(), nullptr, msg, sizeof msg), 0) << msg;
    ASSERT_EQ(R.nsec, 1u);
    const pf_section &S = R.sec[0];
    ASSERT_NE(S.part[0], nullptr);
    EXPECT_GT(S.part[0]->ready, 0);
    ASSERT_GT(S.part[0]->nsteps, 0u);
    EXPECT_LE(S.part[0]->ready, S.part[0]->steps[0].t0);
    EXPECT_EQ(S.nstart, 0u);
    EXPECT_GT(S.startup, 0);
    EXPECT_NE(slurp(dir + "/rec/summary.txt").find("start-up: "), std::string::npos);
    pf_free(&R);
    run("rm -rf " + dir);
}
