// The bspprobe program itself, in --quick mode: it runs, writes valid JSON,
// the gnuplot files and a parameters file lpf_probe can read. Checks the
// format only; no timing thresholds.
#include "probe_model.h"
#include "json_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef BSPPROBE_EXE
#error "BSPPROBE_EXE must name the bspprobe binary"
#endif

namespace {

// With SUPERSTEP_ENGINE=mpi the probe runs on the MPI engine through the
// launcher (2 ranks); otherwise on the engine the environment selects.
std::string launcher()
{
    const char *e = getenv("SUPERSTEP_ENGINE");
#ifdef BSPRUN_EXE
    if (e && !strcmp(e, "mpi")) return std::string(BSPRUN_EXE) + " -n 2 --engine mpi ";
#endif
    (void)e;
    return "";
}

// runs the probe; *out gets stdout, and stderr too unless stdout_only
int run(const std::string &args, std::string *out = nullptr, bool stdout_only = false)
{
    std::string cmd = launcher() + BSPPROBE_EXE + " " + args + (stdout_only ? " 2>/dev/null" : " 2>&1");
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    size_t n;
    std::string text;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    int st = pclose(p);
    if (out) *out = text;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

TEST(ProbeCli, HelpAndBadOptions)
{
    std::string out;
    EXPECT_EQ(0, run("--help", &out));
    EXPECT_NE(std::string::npos, out.find("--save"));
    EXPECT_EQ(2, run("--no-such-option", &out));
    EXPECT_NE(std::string::npos, out.find("unknown option"));
    EXPECT_EQ(2, run("-p 0", &out));
}

TEST(ProbeCli, QuickRunWritesEverything)
{
    char dir[] = "/tmp/probe_cli_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    std::string d = dir, params = d + "/saved/params.txt";
    std::string out;
    // --force-save: whether a quick run's fit passes the checks depends on
    // the machine's noise (RefusesABadFit tests the refusal)
    ASSERT_EQ(0, run("--quick --budget 0 -p 2 --out " + d + " --force-save --save=" + params, &out)) << out;
    for (const char *want : { "the bspbench way", "the LPF way", "As suite", "Model compliance",
                              "saved: " })
        EXPECT_NE(std::string::npos, out.find(want)) << want << "\n" << out;

    jsonc::Value doc;
    std::string err, text = slurp(d + "/probe.json");
    ASSERT_TRUE(jsonc::Parser(text).parse(doc, err)) << err;
    EXPECT_EQ("bspprobe", doc.get("tool")->str);
    EXPECT_EQ(2, doc.get("p")->num);
    EXPECT_TRUE(doc.get("quick")->b);
    EXPECT_EQ(jsonc::Value::Bool, doc.get("failed")->kind);
    EXPECT_FALSE(doc.get("failed")->b);
    ASSERT_NE(nullptr, doc.get("compliance"));
    EXPECT_EQ((size_t)PAT_COUNT, doc.get("compliance")->arr.size());
    // every sample was taken (no time budget)
    for (const auto &c : doc.get("compliance")->arr)
        for (const auto &pt : c.get("points")->arr)
            for (const auto &r : pt.get("raw")->arr) EXPECT_EQ(jsonc::Value::Number, r.kind);

    // the saved rows: engine, p = 2, at most one per word size; only
    // physical fits (finite g, l > 0) are written, and a noisy quick run
    // may not fit every word size, so not every size need be there
    int lines = 0;
    {
        std::istringstream in(slurp(params));
        std::string line;
        while (std::getline(in, line))
            if (!line.empty() && line[0] != '#') ++lines;
    }
    EXPECT_GE(lines, 1);
    EXPECT_LE(lines, PM_NWORDS);
    std::vector<sstep_param_row> rows(16);
    long nrows = pm_load_params(params.c_str(), rows.data(), rows.size());
    ASSERT_EQ(nrows, lines);
    const char *engine = getenv("SUPERSTEP_ENGINE");
    for (long k = 0; k < nrows; ++k) {
        EXPECT_STREQ(engine && *engine ? engine : "pthread", rows[k].engine);
        EXPECT_EQ(2u, rows[k].p);
        bool known = false;
        for (int w = 0; w < PM_NWORDS; ++w) known = known || pm_word_sizes[w] == rows[k].m;
        EXPECT_TRUE(known) << rows[k].m;
        EXPECT_TRUE(std::isfinite(rows[k].g) && rows[k].g > 0);
        EXPECT_TRUE(std::isfinite(rows[k].l) && rows[k].l > 0);
    }
    EXPECT_NE(std::string::npos, slurp(d + "/probe.gp").find("multiplot"));
    EXPECT_FALSE(slurp(d + "/probe.dat").empty());

    for (const char *f : { "probe.json", "probe.gp", "probe.dat", "probe.svg", "probe.png" })
        unlink((d + "/" + f).c_str());
    unlink(params.c_str());
    rmdir((d + "/saved").c_str());
    rmdir(dir);
}

TEST(ProbeCli, ForceSaveWritesTheFileGiven)
{
    // --force-save=FILE writes FILE and nothing where lpf_probe looks by
    // default ($SUPERSTEP_PARAMS, ~/.superstep/params.txt)
    char dir[] = "/tmp/probe_cli_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    std::string d = dir, home = d + "/home", forced = d + "/forced.txt";
    ASSERT_EQ(0, mkdir(home.c_str(), 0700));
    setenv("HOME", home.c_str(), 1);
    unsetenv("SUPERSTEP_PARAMS");
    std::string out;
    EXPECT_EQ(0, run("--quick --only lpf --no-plot --budget 0 -p 2 --out " + d + " --force-save=" + forced,
                     &out)) << out;
    EXPECT_NE(std::string::npos, out.find("saved: " + forced)) << out;
    struct stat st;
    EXPECT_EQ(0, stat(forced.c_str(), &st)) << "FILE written";
    EXPECT_NE(0, stat((home + "/.superstep").c_str(), &st)) << "nothing under HOME";
    std::vector<sstep_param_row> rows(16);
    EXPECT_GE(pm_load_params(forced.c_str(), rows.data(), rows.size()), 1);
    // options that take no value
    EXPECT_EQ(2, run("--quick=yes", &out));
    EXPECT_NE(std::string::npos, out.find("--quick takes no value")) << out;
    EXPECT_EQ(2, run("--no-plot=1", &out));
    EXPECT_NE(std::string::npos, out.find("--no-plot takes no value")) << out;
    for (const char *f : { "probe.json", "probe.gp", "probe.dat" }) unlink((d + "/" + f).c_str());
    unlink(forced.c_str());
    rmdir(home.c_str());
    rmdir(dir);
}

TEST(ProbeCli, RefusesABadFit)
{
    char dir[] = "/tmp/probe_cli_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    std::string d = dir, params = d + "/params.txt";
    std::string out;
    // --test-bad-fit makes the 8-byte series' T(n_max) faster than T(2p)
    EXPECT_EQ(1, run("--quick --only lpf --no-plot -p 2 --test-bad-fit --out " + d + " --save=" + params,
                     &out)) << out;
    for (const char *want : { "WARNING: these figures are not fit to save", "LPF way, 8 B words",
                              "not physical", "For better figures: more samples", "a quieter machine",
                              "--save: not saved", "--force-save" })
        EXPECT_NE(std::string::npos, out.find(want)) << want << "\n" << out;
    EXPECT_EQ(std::string::npos, out.find("saved: ")) << out;
    struct stat st;
    EXPECT_NE(0, stat(params.c_str(), &st)) << "nothing saved";
    unlink((d + "/probe.json").c_str());
    unlink((d + "/probe.gp").c_str());
    unlink((d + "/probe.dat").c_str());
    rmdir(dir);
}

TEST(ProbeCli, OnePartAndJsonOnStdout)
{
    char dir[] = "/tmp/probe_cli_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    std::string out;
    ASSERT_EQ(0, run(std::string("--quick -p 2 --only as --no-plot --json - --out ") + dir, &out, true)) << out;
    for (const char *f : { "probe.gp", "probe.dat" }) unlink((std::string(dir) + "/" + f).c_str());
    rmdir(dir);
    jsonc::Value doc;
    std::string err;
    ASSERT_TRUE(jsonc::Parser(out).parse(doc, err)) << err << "\n" << out.substr(0, 500);
    EXPECT_NE(nullptr, doc.get("as_suite"));
    EXPECT_EQ(nullptr, doc.get("lpf"));
}

} // namespace
