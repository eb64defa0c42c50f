// The superstep profiler (docs/profiler.md), end to end: record a program
// with known h-relations (prof_known.c) through bsprun --profile on the
// engine and p of PROF_ENGINE / PROF_P, and check the record exactly, the
// trace, the report, the summary and bspprof; and predictions from a
// synthetic record against numbers computed by hand.
#include <gtest/gtest.h>

#include "prof.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

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

bool exists(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

std::string tmpdir()
{
    char t[] = "/tmp/sstep-prof-XXXXXX";
    const char *d = mkdtemp(t);
    return d ? d : "";
}

int run(const std::string &cmd)
{
    int st = system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// ---- a small JSON parser (validation only) ------------------------------
struct Json {
    const char *p;
    bool ok = true;
    void ws() { while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') ++p; }
    bool lit(const char *s) { size_t n = strlen(s); if (strncmp(p, s, n)) return false; p += n; return true; }
    bool str()
    {
        if (*p != '"') return false;
        ++p;
        while (*p && *p != '"') {
            if ((unsigned char)*p < 0x20) return false;
            if (*p == '\\') {
                ++p;
                if (*p == 'u') {
                    for (int i = 1; i <= 4; ++i) if (!isxdigit((unsigned char)p[i])) return false;
                    p += 4;
                } else if (!strchr("\"\\/bfnrt", *p)) return false;
            }
            ++p;
        }
        if (*p != '"') return false;
        ++p;
        return true;
    }
    bool num()
    {
        const char *s = p;
        if (*p == '-') ++p;
        if (!isdigit((unsigned char)*p)) return false;
        if (*p == '0') ++p; else while (isdigit((unsigned char)*p)) ++p;
        if (*p == '.') { ++p; if (!isdigit((unsigned char)*p)) return false; while (isdigit((unsigned char)*p)) ++p; }
        if (*p == 'e' || *p == 'E') {
            ++p;
            if (*p == '+' || *p == '-') ++p;
            if (!isdigit((unsigned char)*p)) return false;
            while (isdigit((unsigned char)*p)) ++p;
        }
        return p > s;
    }
    bool value(int depth = 0)
    {
        if (depth > 64) return false;
        ws();
        if (*p == '{') {
            ++p; ws();
            if (*p == '}') { ++p; return true; }
            for (;;) {
                ws();
                if (!str()) return false;
                ws();
                if (*p++ != ':') return false;
                if (!value(depth + 1)) return false;
                ws();
                if (*p == ',') { ++p; continue; }
                if (*p == '}') { ++p; return true; }
                return false;
            }
        }
        if (*p == '[') {
            ++p; ws();
            if (*p == ']') { ++p; return true; }
            for (;;) {
                if (!value(depth + 1)) return false;
                ws();
                if (*p == ',') { ++p; continue; }
                if (*p == ']') { ++p; return true; }
                return false;
            }
        }
        if (*p == '"') return str();
        if (lit("true") || lit("false") || lit("null")) return true;
        return num();
    }
    static bool valid(const std::string &s)
    {
        Json j{ s.c_str() };
        if (!j.value()) return false;
        j.ws();
        return *j.p == '\0';
    }
};

size_t count(const std::string &s, const std::string &what)
{
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

// the line number of the first line of `path` that contains `marker` (0: none)
int line_of(const std::string &path, const std::string &marker)
{
    std::ifstream in(path);
    std::string l;
    for (int n = 1; std::getline(in, l); ++n)
        if (l.find(marker) != std::string::npos) return n;
    return 0;
}

// where the k-th recorded sync of a part was called, as the report says it
std::string where(const pf_part *p, size_t k)
{
    char buf[600] = "?";
    if (k < p->nsteps && p->steps[k].site >= 0) pf_where(&p->sites[p->steps[k].site], buf, sizeof buf);
    return buf;
}

const pf_section *find_section(const pf_run &R, const std::string &key)
{
    for (size_t i = 0; i < R.nsec; ++i)
        if (key == R.sec[i].key) return &R.sec[i];
    return nullptr;
}

} // namespace

// ---- recording a known program ----------------------------------------
TEST(Record, KnownProgram)
{
    const std::string engine = env("PROF_ENGINE", "pthread");
    const unsigned P = (unsigned)atoi(env("PROF_P", "2").c_str());
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    const std::string err = dir + "/stderr.txt";
    std::string cmd = env("PROF_BSPRUN") + " --engine " + engine + " -n " + std::to_string(P) +
            " --profile " + dir + "/rec " + env("PROF_PROGRAM") + " nested twice > " + dir +
            "/stdout.txt 2> " + err;
    ASSERT_EQ(run(cmd), 0) << cmd << "\n" << slurp(err);
    const std::string rec = dir + "/rec";

    // the end-of-run summary on stderr, and the files
    std::string e = slurp(err);
    EXPECT_NE(e.find("superstep profile of run"), std::string::npos) << e;
    EXPECT_NE(e.find("most expensive supersteps"), std::string::npos) << e;
    EXPECT_NE(e.find("computation"), std::string::npos) << e;
    EXPECT_TRUE(exists(rec + "/report.html"));
    EXPECT_TRUE(exists(rec + "/trace.json"));
    EXPECT_TRUE(exists(rec + "/summary.txt"));

    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, rec.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    // two top-level sections of P processes, each with a nested one
    size_t top = 0;
    for (size_t i = 0; i < R.nsec; ++i) top += R.sec[i].top;
    EXPECT_EQ(top, 2u);
    EXPECT_EQ(R.nsec, 4u);
    for (int k = 0; k < 2; ++k) {
        std::string key = "t" + std::to_string(P) + "." + std::to_string(k);
        const pf_section *S = find_section(R, key);
        ASSERT_NE(S, nullptr) << key;
        ASSERT_EQ(S->P, P);
        ASSERT_EQ(S->present, P);
        ASSERT_EQ(S->nsteps, 6u);
        EXPECT_FALSE(S->unequal);
        for (unsigned s = 0; s < P; ++s) {
            const pf_part *p = S->part[s];
            ASSERT_NE(p, nullptr);
            // (one process runs on a thread of rank 0, whatever the engine)
            EXPECT_EQ(p->engine, P == 1 ? std::string("pthread") : engine);
            ASSERT_EQ(p->nsteps, 6u);
            const pf_step *t = p->steps;
            for (int j = 0; j < 6; ++j) {
                EXPECT_EQ(t[j].rc, 0);
                EXPECT_EQ(t[j].bytes[2], 0u);
                EXPECT_EQ(t[j].reqs[2], 0u);
                EXPECT_STREQ(p->sites[t[j].site].layer, "user");
            }
            // 2: one put of 100(s+1) bytes to s+1
            EXPECT_EQ(t[2].reqs[0], P > 1 ? 1u : 0u);
            EXPECT_EQ(t[2].bytes[0], P > 1 ? 100u * (s + 1) : 0u);
            EXPECT_EQ(t[2].npeer, P > 1 ? 1u : 0u);
            if (P > 1) {
                EXPECT_EQ(p->peers[t[2].peer_first].q, (s + 1) % P);
                EXPECT_EQ(p->peers[t[2].peer_first].out, 100u * (s + 1));
                EXPECT_EQ(p->peers[t[2].peer_first].get, 0u);
            }
            // 3: two gets of 32 bytes from s+1
            EXPECT_EQ(t[3].reqs[1], P > 1 ? 2u : 0u);
            EXPECT_EQ(t[3].bytes[1], P > 1 ? 64u : 0u);
            EXPECT_EQ(t[3].bytes[0], 0u);
            // 4: ten puts of 100 bytes to 0 from every s > 0
            EXPECT_EQ(t[4].reqs[0], s > 0 ? 10u : 0u);
            EXPECT_EQ(t[4].bytes[0], s > 0 ? 1000u : 0u);
            // 0, 1, 5: nothing
            for (int j : { 0, 1, 5 })
                for (int kind = 0; kind < 3; ++kind) {
                    EXPECT_EQ(t[j].reqs[kind], 0u);
                    EXPECT_EQ(t[j].bytes[kind], 0u);
                }
            for (int j = 1; j < 6; ++j) {
                EXPECT_LE(t[j - 1].t1, t[j].t0);
                EXPECT_LE(t[j].t0, t[j].t1);
            }
        }
        const uint64_t h[6] = { 0, 0, P > 1 ? 100u * P : 0u, P > 1 ? 64u : 0u, 1000u * (P - 1), 0 };
        for (int j = 0; j < 6; ++j) {
            EXPECT_EQ(S->st[j].h, h[j]) << key << " step " << j;
            EXPECT_GE(S->st[j].time, 0);
            EXPECT_GE(S->st[j].imbalance, 1.0 - 1e-9);
            EXPECT_GT(S->st[j].pred_comm, 0);
        }
        EXPECT_GT(S->total, 0);
        double shares = S->comp + S->comm + S->wait;
        EXPECT_NEAR(shares / S->life, 1.0, 0.05);
        // the nested section of process 0
        const pf_section *N = find_section(R, key + "-0.0");
        ASSERT_NE(N, nullptr);
        EXPECT_FALSE(N->top);
        EXPECT_EQ(N->present, N->P);
        ASSERT_EQ(N->nsteps, 3u);
        EXPECT_EQ(N->st[2].h, N->P > 1 ? 8u : 0u);
    }

    // the trace: valid JSON, one sync slice per recorded superstep
    std::string trace = slurp(rec + "/trace.json");
    EXPECT_TRUE(Json::valid(trace));
    size_t syncs = 0;
    for (size_t i = 0; i < R.nparts; ++i) syncs += R.parts[i].nsteps;
    EXPECT_EQ(count(trace, "\"name\":\"sync\""), syncs);
    EXPECT_GE(count(trace, "\"name\":\"compute\""), syncs);
    EXPECT_EQ(count(trace, "\"name\":\"thread_name\""), R.nparts);
    EXPECT_GT(count(trace, "\"name\":\"h (bytes)\""), 0u);
    if (!env("PROF_PYTHON").empty()) {
        EXPECT_EQ(run(env("PROF_PYTHON") + " -m json.tool " + rec + "/trace.json > /dev/null"), 0);
    }

    // the source line of every sync (prof_known is compiled with -g): the
    // recorded step j + 1 ends at the lpf_sync marked 'step "j"'
    if (!env("PROF_ADDR2LINE").empty()) {
        const pf_section *S = find_section(R, "t" + std::to_string(P) + ".0");
        ASSERT_NE(S, nullptr);
        for (int j = 0; j <= 4; ++j) {
            int line = line_of(env("PROF_KNOWN_SRC"), "/* step \"" + std::to_string(j) + "\" */");
            ASSERT_GT(line, 0);
            for (unsigned s = 0; s < P; ++s)
                EXPECT_EQ(where(S->part[s], (size_t)j + 1), "prof_known.c:" + std::to_string(line))
                        << "process " << s << " step " << j + 1;
        }
    }

    // the report
    std::string html = slurp(rec + "/report.html");
    EXPECT_NE(html.find("<!DOCTYPE html>"), std::string::npos);
    EXPECT_NE(html.find("</html>"), std::string::npos);
    EXPECT_GE(count(html, "<svg"), 4u);
    EXPECT_NE(html.find("most expensive supersteps"), std::string::npos);

    // bspprof re-makes the same summary from the record alone
    const std::string out = dir + "/again";
    mkdir(out.c_str(), 0777);
    ASSERT_EQ(run(env("PROF_BSPPROF") + " -q --out " + out + " " + rec), 0);
    EXPECT_EQ(slurp(out + "/summary.txt"), slurp(rec + "/summary.txt"));
    EXPECT_TRUE(Json::valid(slurp(out + "/trace.json")));
    EXPECT_EQ(slurp(out + "/report.html"), html);
    pf_free(&R);
    run("rm -rf " + dir);
}

// A BSPlib program (prof_lines.c, compiled with -g): each superstep links to
// the line of the program's bsp_sync that ended it, not to the library's
// call inside bsp_sync; without addr2line the report still comes out.
TEST(Record, SourceLines)
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
    const std::string src = env("PROF_LINES_SRC");
    const int slow = line_of(src, "/* SLOW-SYNC */"), big = line_of(src, "/* BIG-SYNC */"),
              loop = line_of(src, "/* LOOP-SYNC */");
    ASSERT_TRUE(slow > 0 && big > 0 && loop > 0);
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, (dir + "/rec").c_str(), nullptr, msg, sizeof msg), 0) << msg;
    ASSERT_EQ(R.nsec, 1u);
    const pf_section &S = R.sec[0];
    // recorded: bsp_begin's sync, the registration's, then the loop
    ASSERT_GE(S.nsteps, (size_t)steps + 2);
    for (unsigned s = 0; s < P; ++s)
        for (int k = 0; k < steps; ++k) {
            int want = k % 50 == 25 ? slow : k == steps / 2 ? big : loop;
            EXPECT_EQ(where(S.part[s], (size_t)k + 2), "prof_lines.c:" + std::to_string(want))
                    << "process " << s << ", k = " << k;
        }
    EXPECT_STREQ(S.st[27].layer, "bsplib");
    // the report's table names the line of each of its supersteps
    std::string html = slurp(dir + "/rec/report.html");
    EXPECT_NE(html.find("ended by the sync at"), std::string::npos);
    EXPECT_NE(html.find("prof_lines.c:"), std::string::npos);
    EXPECT_NE(slurp(dir + "/rec/summary.txt").find("prof_lines.c:"), std::string::npos);
    pf_free(&R);
    // without addr2line: symbol+offset, and everything else as before
    ASSERT_EQ(run("SUPERSTEP_PROFILE_ADDR2LINE=/nonexistent/addr2line " + env("PROF_BSPPROF") + " -q --out " +
                  dir + " " + dir + "/rec"), 0);
    EXPECT_EQ(slurp(dir + "/summary.txt").find("prof_lines.c:"), std::string::npos);
    EXPECT_NE(slurp(dir + "/summary.txt").find("most expensive supersteps"), std::string::npos);
    EXPECT_NE(slurp(dir + "/report.html").find("</html>"), std::string::npos);
    run("rm -rf " + dir);
}

// ---- analysis and prediction on a synthetic record --------------------
namespace {

// two processes, three supersteps, g and l constant in the record
void write_part(const std::string &dir, unsigned pid, const std::string &steps)
{
    std::ofstream f(dir + "/synth.t2.0." + std::to_string(pid) + ".part");
    f << SSTEP_PROF_MAGIC << " " << SSTEP_PROF_VERSION << "\nrun synth\nsection t2.0\nparent - -1\n"
      << "procs 2\npid " << pid << "\nengine pthread\nhost testhost\nospid 1\n"
      << "start 1000000000 5000000000\nend 10000\nlost 0\nr 1e9\n";
    for (int e = 0; e < SSTEP_PROF_GL_POINTS; ++e) f << "gl " << (1u << e) << " 1e-09 1e-06\n";
    f << "site 0 0 user main+0x10\nsteps 3\n" << steps << "eof\n";
}

} // namespace

TEST(Synthetic, AnalysisAndPrediction)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // times in ns after the start; s t0 t1 origin site rc putreqs putbytes
    // getreqs getbytes msgreqs msgbytes msgs_in npeer
    write_part(dir, 0,
            "s 1000 2000 0 0 0 1 1024 0 0 0 0 0 1\np 1 1024 0\n"
            "s 5000 6000 0 0 0 0 0 2 16 0 0 0 1\np 1 0 16\n"
            "s 6500 9000 0 0 0 0 0 0 0 0 0 0 0\n");
    write_part(dir, 1,
            "s 1500 2100 0 0 0 0 0 0 0 0 0 0 0\n"
            "s 4000 6100 0 0 0 0 0 0 0 0 0 0 0\n"
            "s 8000 9050 0 0 0 0 0 0 0 0 0 0 0\n");
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    ASSERT_EQ(R.nsec, 1u);
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 3u);
    // h: 0 puts 1024 B to 1; 0 gets 16 B from 1 (1 sends them); nothing
    EXPECT_EQ(S.st[0].h, 1024u);
    EXPECT_EQ(S.st[1].h, 16u);
    EXPECT_EQ(S.st[2].h, 0u);
    // superstep times: the longest a process spent from its exit of the
    // previous sync (or its start) to its exit of this one: 2100 (process
    // 1), 4000 (both), 3000 (process 0: 6000 .. 9000)
    EXPECT_NEAR(S.st[0].time, 2100e-9, 1e-12);
    EXPECT_NEAR(S.st[1].time, 4000e-9, 1e-12);
    EXPECT_NEAR(S.st[2].time, 3000e-9, 1e-12);
    // max computation 1500, 3000, 1900 ns; imbalance 1500 / 1250
    EXPECT_NEAR(S.st[0].comp_max, 1500e-9, 1e-12);
    EXPECT_NEAR(S.st[1].comp_max, 3000e-9, 1e-12);
    EXPECT_NEAR(S.st[2].comp_max, 1900e-9, 1e-12);
    EXPECT_NEAR(S.st[0].imbalance, 1.2, 1e-9);
    // the shortest sync is the exchange: 600, 1000, 1050 ns
    EXPECT_NEAR(S.st[0].comm, 600e-9, 1e-12);
    EXPECT_NEAR(S.st[1].comm, 1000e-9, 1e-12);
    EXPECT_NEAR(S.st[2].comm, 1050e-9, 1e-12);
    EXPECT_NEAR(S.total, 10000e-9, 1e-12);
    // recorded machine: sum(max comp + g h + l) + tail 950 ns
    EXPECT_NEAR(S.pred, (6400 + 950) * 1e-9 + 1e-9 * (1024 + 16) + 3e-6, 1e-12);

    // --predict g=1e-9,l=1e-6,r=2e9: computation halves (record r = 1e9)
    const double want1 = 0.5 * (6400 + 950) * 1e-9 + 1e-9 * 1040 + 3e-6;   // 7.715 us
    pf_machine M = {};
    M.g = 1e-9; M.l = 1e-6; M.r = 2e9;
    EXPECT_NEAR(pf_predict_section(&S, &M), want1, 1e-12);
    std::string out = dir + "/pred.txt";
    ASSERT_EQ(run(env("PROF_BSPPROF") + " --predict g=1e-9,l=1e-6,r=2e9 " + dir + " > " + out), 0);
    std::string txt = slurp(out);
    size_t at = txt.find("total: predicted ");
    ASSERT_NE(at, std::string::npos) << txt;
    EXPECT_NEAR(strtod(txt.c_str() + at + 17, nullptr), want1, 1e-12) << txt;

    // --machine: rows at 8 B and 1024 B, r = 4e9 (computation / 4). Step 0:
    // m = 1024 (row): 1e-9 * 1024 + 2e-6; step 1: m = 8 (row): 2e-9 * 16 +
    // 4e-6; step 2: no request (m counts as 1, h = 0): l = 4e-6
    std::ofstream(dir + "/params.txt") << "# saved by hand\n# r pthread 2 4e9\n"
                                          "pthread 2 8 2e-9 4e-6\npthread 2 1024 1e-9 2e-6\n"
                                          "mpi 2 8 9 9\n";
    const double want2 = 0.25 * (6400 + 950) * 1e-9 + (1024e-9 + 2e-6) + (32e-9 + 4e-6) + 4e-6;
    ASSERT_EQ(run(env("PROF_BSPPROF") + " --machine " + dir + "/params.txt " + dir + " > " + out), 0);
    txt = slurp(out);
    at = txt.find("total: predicted ");
    ASSERT_NE(at, std::string::npos) << txt;
    EXPECT_NEAR(strtod(txt.c_str() + at + 17, nullptr), want2, 1e-12) << txt;

    // --procs 1024: the rows of p = 1024 (as bench/scale/run.sh writes
    // them), the record's work and h-relations. Step 0: 3e-9 * 1024 + 5e-6;
    // step 1: 4e-9 * 16 + 8e-6; step 2: 8e-6; r = 4e9 from p = 1024's line
    std::ofstream(dir + "/params2.txt") << "# r pthread 2 1e9\n# r pthread 1024 4e9\n"
                                           "pthread 2 8 2e-9 4e-6\npthread 2 1024 1e-9 2e-6\n"
                                           "pthread 1024 8 4e-9 8e-6\npthread 1024 1024 3e-9 5e-6\n";
    const double want3 = 0.25 * (6400 + 950) * 1e-9 + (3072e-9 + 5e-6) + (64e-9 + 8e-6) + 8e-6;
    ASSERT_EQ(run(env("PROF_BSPPROF") + " --machine " + dir + "/params2.txt --procs 1024 " + dir +
                  " > " + out), 0);
    txt = slurp(out);
    at = txt.find("total: predicted ");
    ASSERT_NE(at, std::string::npos) << txt;
    EXPECT_NEAR(strtod(txt.c_str() + at + 17, nullptr), want3, 1e-12) << txt;
    EXPECT_NE(txt.find("at 1024 processes"), std::string::npos) << txt;
    // without --procs the same file gives the record's p = 2 rows
    ASSERT_EQ(run(env("PROF_BSPPROF") + " --machine " + dir + "/params2.txt " + dir + " > " + out), 0);
    txt = slurp(out);
    at = txt.find("total: predicted ");
    ASSERT_NE(at, std::string::npos) << txt;
    EXPECT_NEAR(strtod(txt.c_str() + at + 17, nullptr),
                (6400 + 950) * 1e-9 + (1024e-9 + 2e-6) + (32e-9 + 4e-6) + 4e-6, 1e-12) << txt;
    EXPECT_EQ(run(env("PROF_BSPPROF") + " --procs 1024 " + dir + " 2>/dev/null"), 2);
    EXPECT_EQ(run(env("PROF_BSPPROF") + " --machine " + dir + "/params2.txt --procs 0 " + dir +
                  " 2>/dev/null"), 2);
    EXPECT_EQ(run(env("PROF_BSPPROF") + " --machine " + dir + "/params2.txt --procs 12x " + dir +
                  " 2>/dev/null"), 2);

    // the files, from the synthetic record
    ASSERT_EQ(run(env("PROF_BSPPROF") + " -q " + dir), 0);
    EXPECT_TRUE(Json::valid(slurp(dir + "/trace.json")));
    EXPECT_EQ(count(slurp(dir + "/trace.json"), "\"name\":\"sync\""), 6u);
    EXPECT_NE(slurp(dir + "/report.html").find("<svg"), std::string::npos);
    // bad arguments
    EXPECT_EQ(run(env("PROF_BSPPROF") + " --predict g=1 " + dir + " 2>/dev/null"), 2);
    EXPECT_NE(run(env("PROF_BSPPROF") + " " + dir + "/nonexistent 2>/dev/null"), 0);
    // never a nan or inf: values out of range are refused with the file and
    // line, and so are a device and non-finite --predict values
    std::ofstream(dir + "/params_bad.txt") << "# r pthread 2 1e-308\npthread 2 8 1e308 1e-6\n"
                                              "pthread 2 1024 1e-9 2e-6\n";
    EXPECT_NE(run(env("PROF_BSPPROF") + " --machine " + dir + "/params_bad.txt " + dir + " > " + out +
                  " 2>&1"), 0);
    txt = slurp(out);
    EXPECT_NE(txt.find("params_bad.txt, line 2: g = 1e+308 s/byte is outside"), std::string::npos) << txt;
    EXPECT_EQ(txt.find("nan"), std::string::npos) << txt;
    EXPECT_NE(run(env("PROF_BSPPROF") + " --machine /dev/zero " + dir + " > " + out + " 2>&1"), 0);
    EXPECT_NE(slurp(out).find("not a regular file"), std::string::npos) << slurp(out);
    for (const char *bad : { "g=inf,l=1e-6", "g=1e-9,l=nan", "g=1e-9,l=1e-6,r=inf", "g=,l=1" })
        EXPECT_EQ(run(env("PROF_BSPPROF") + " --predict " + bad + " " + dir + " 2>/dev/null"), 2) << bad;
    // a tiny r is ignored, not a prediction of inf
    std::ofstream(dir + "/params_r.txt") << "# r pthread 2 1e-308\npthread 2 8 2e-9 4e-6\n";
    ASSERT_EQ(run(env("PROF_BSPPROF") + " --machine " + dir + "/params_r.txt " + dir + " > " + out), 0);
    txt = slurp(out);
    EXPECT_NE(txt.find("total: predicted "), std::string::npos) << txt;
    EXPECT_EQ(txt.find("inf"), std::string::npos) << txt;
    EXPECT_EQ(txt.find("nan"), std::string::npos) << txt;
    pf_free(&R);
    run("rm -rf " + dir);
}

// The likely cause at p = 2: one process doing all the work (imbalance
// 2.00, or 1.99 with a little work on the other) is an imbalance, not
// computation; an even split is computation.
TEST(Synthetic, CauseAtTwoProcesses)
{
    const std::string dir = tmpdir();
    ASSERT_FALSE(dir.empty());
    // step 0: 0 computes 1000 ns, 1 nothing; step 1: 0 computes 1000 ns, 1
    // computes 5 ns; step 2: both 1000 ns. Each sync lasts 100 ns on the
    // last to arrive.
    write_part(dir, 0,
            "s 1000 1100 0 0 0 0 0 0 0 0 0 0 0\n"
            "s 2100 2200 0 0 0 0 0 0 0 0 0 0 0\n"
            "s 3200 3300 0 0 0 0 0 0 0 0 0 0 0\n");
    write_part(dir, 1,
            "s 0 1100 0 0 0 0 0 0 0 0 0 0 0\n"
            "s 1105 2200 0 0 0 0 0 0 0 0 0 0 0\n"
            "s 3200 3300 0 0 0 0 0 0 0 0 0 0 0\n");
    pf_run R;
    char msg[512];
    ASSERT_EQ(pf_load(&R, dir.c_str(), nullptr, msg, sizeof msg), 0) << msg;
    ASSERT_EQ(R.nsec, 1u);
    const pf_section &S = R.sec[0];
    ASSERT_EQ(S.nsteps, 3u);
    EXPECT_NEAR(S.st[0].imbalance, 2.0, 1e-9);
    EXPECT_STREQ(S.st[0].cause, "imbalance");
    EXPECT_NEAR(S.st[1].imbalance, 2000.0 / 1005.0, 1e-9);
    EXPECT_STREQ(S.st[1].cause, "imbalance");
    EXPECT_NEAR(S.st[2].imbalance, 1.0, 1e-9);
    EXPECT_STREQ(S.st[2].cause, "computation");
    // a synthetic record names no object: the recorded symbol+offset
    EXPECT_EQ(where(S.part[0], 0), "main+0x10");
    pf_free(&R);
    run("rm -rf " + dir);
}

TEST(Synthetic, JsonParser)
{
    EXPECT_TRUE(Json::valid("{\"a\":[1,2.5e3,-0.1,\"x\\n\"],\"b\":{},\"c\":null}"));
    EXPECT_FALSE(Json::valid("{\"a\":[1,2,]}"));
    EXPECT_FALSE(Json::valid("{\"a\":1"));
    EXPECT_FALSE(Json::valid("[01]"));
}
