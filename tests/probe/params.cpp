// The parameters file: what `bspprobe --save` writes is what lpf_probe
// returns. The file is SUPERSTEP_PARAMS (CMake sets it for this test; run by
// hand, /tmp/superstep_probe_params) with the process id appended, written
// with the probe's own writer before the first lpf_probe of the process.
#include "probe_model.h"

#include <lpf/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

// the engine this test runs on (the rows lpf_probe reads are that engine's)
const char *engine()
{
    const char *e = getenv("SUPERSTEP_ENGINE");
    return e && *e ? e : "pthread";
}

sstep_param_row row(unsigned p, double m, double g, double l)
{
    sstep_param_row r;
    snprintf(r.engine, sizeof r.engine, "%s", engine());
    r.p = p;
    r.m = m;
    r.g = g;
    r.l = l;
    return r;
}

const std::vector<sstep_param_row> kRows = {
    row(2, 8, 2.5e-9, 1.0e-6),
    row(2, 64, 6.0e-10, 9.0e-7),
    row(2, 1024, 3.0e-10, 8.5e-7),
    row(2, 1048576, 2.0e-10, 8.0e-7),
    row(4, 8, 3.5e-9, 2.0e-6),
    row(4, 1048576, 3.0e-10, 1.5e-6),
};

std::string params_path()
{
    const char *p = getenv("SUPERSTEP_PARAMS");
    return p ? p : "";
}

class ParamsFile : public ::testing::Environment {
public:
    void SetUp() override
    {
        // one file per test process: ctest runs the tests of this program
        // as concurrent processes, and each rewrites its file here
        static std::string mine = (params_path().empty() ? std::string("/tmp/superstep_probe_params")
                                                         : params_path()) + "." + std::to_string(getpid());
        setenv("SUPERSTEP_PARAMS", mine.c_str(), 1);
        std::string path = params_path();
        // rows of another engine, a stale p = 2 row, junk: all must be ignored
        {
            std::ofstream f(path);
            f << "# an older file\n"
              << "other-engine 2 8 1e-8 5e-6\n"
              << engine() << " 2 8 9e-9 9e-6\n"
              << "this is not a row\n"
              << "pthread 2 16 -1 1e-6\n";
        }
        char err[256];
        // p = 4 first, then p = 2, as two bspprobe --save runs would
        ASSERT_EQ(0, pm_save_params(path.c_str(), kRows.data() + 4, 2, "test p=4", err, sizeof err)) << err;
        ASSERT_EQ(0, pm_save_params(path.c_str(), kRows.data(), 4, "test p=2", err, sizeof err)) << err;
    }
    void TearDown() override { std::remove(params_path().c_str()); }
};

const ::testing::Environment *const env = ::testing::AddGlobalTestEnvironment(new ParamsFile);

lpf_machine_t probe()
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    EXPECT_EQ(LPF_SUCCESS, lpf_probe(LPF_ROOT, &m));
    return m;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(ProbeParams, FileHoldsWhatWasSaved)
{
    std::vector<sstep_param_row> rows(64);
    long n = pm_load_params(params_path().c_str(), rows.data(), rows.size());
    ASSERT_EQ(7, n);   // 6 saved + the other engine's row kept; the stale p = 2 row replaced
    int other = 0;
    for (long i = 0; i < n; ++i) {
        if (!strcmp(rows[i].engine, "other-engine")) { ++other; continue; }
        bool found = false;
        for (const auto &k : kRows)
            if (k.p == rows[i].p && k.m == rows[i].m) {
                found = true;
                EXPECT_TRUE(same_bits(k.g, rows[i].g)) << "g written with all its digits";
                EXPECT_TRUE(same_bits(k.l, rows[i].l));
            }
        EXPECT_TRUE(found) << rows[i].p << " " << rows[i].m;
    }
    EXPECT_EQ(1, other);
}

TEST(ProbeParams, LpfProbeReturnsTheSavedFigures)
{
    lpf_machine_t m = probe();
    ASSERT_NE(nullptr, m.g);
    ASSERT_NE(nullptr, m.l);
    for (const auto &k : kRows) {
        SCOPED_TRACE("p=" + std::to_string(k.p) + " m=" + std::to_string(k.m));
        EXPECT_TRUE(same_bits(k.g, m.g(k.p, (size_t)k.m, LPF_SYNC_DEFAULT))) << m.g(k.p, (size_t)k.m, 0);
        EXPECT_TRUE(same_bits(k.l, m.l(k.p, (size_t)k.m, LPF_SYNC_DEFAULT)));
    }
}

TEST(ProbeParams, MessageSizesBetweenAndBeyondTheRows)
{
    lpf_machine_t m = probe();
    // between 64 and 1024 bytes: linear in 1/m, i.e. g = g_byte + o_msg/m
    double g64 = 6.0e-10, g1k = 3.0e-10;
    double t = (1.0 / 64 - 1.0 / 256) / (1.0 / 64 - 1.0 / 1024);
    EXPECT_NEAR(g64 + t * (g1k - g64), m.g(2, 256, 0), 1e-22);
    double prev = INFINITY;
    for (size_t s = 8; s <= 2048; s += 8) {
        double g = m.g(2, s, 0);
        EXPECT_LE(g, prev) << "never more per byte for larger messages here";
        prev = g;
    }
    // below the smallest size: all of an 8-byte message's cost per message
    EXPECT_DOUBLE_EQ(2.5e-9 * 2, m.g(2, 4, 0));
    EXPECT_DOUBLE_EQ(2.5e-9 * 8, m.g(2, 1, 0));
    EXPECT_DOUBLE_EQ(2.5e-9 * 8, m.g(2, 0, 0)) << "m = 0 counts as 1";
    EXPECT_DOUBLE_EQ(1.0e-6, m.l(2, 0, 0));
    // above the largest: the largest
    EXPECT_DOUBLE_EQ(2.0e-10, m.g(2, SIZE_MAX, 0));
    EXPECT_DOUBLE_EQ(8.0e-7, m.l(2, SIZE_MAX, 0));
}

TEST(ProbeParams, ProcessCounts)
{
    lpf_machine_t m = probe();
    // p' <= 2: the p = 2 rows; 2 < p' <= 4: the p = 4 rows
    EXPECT_DOUBLE_EQ(2.5e-9, m.g(1, 8, 0));
    EXPECT_DOUBLE_EQ(1.0e-6, m.l(1, 8, 0));
    EXPECT_DOUBLE_EQ(3.5e-9, m.g(3, 8, 0));
    EXPECT_DOUBLE_EQ(2.0e-6, m.l(3, 8, 0));
    // beyond the largest measured p: scaled, never cheaper
    EXPECT_GE(m.l(16, 8, 0), 2.0e-6);
    EXPECT_GE(m.g(16, 8, 0), 3.5e-9);
    // every p' of the machine and beyond, every m: finite and > 0
    const size_t sizes[] = { 0, 1, 7, 8, 9, 100, 4096, (size_t)1 << 40, SIZE_MAX };
    for (lpf_pid_t p = 1; p <= m.p + 3; ++p)
        for (size_t s : sizes) {
            double g = m.g(p, s, 0), l = m.l(p, s, 0);
            EXPECT_TRUE(std::isfinite(g) && g > 0) << p << " " << s;
            EXPECT_TRUE(std::isfinite(l) && l > 0) << p << " " << s;
        }
    EXPECT_GT(m.l(UINT_MAX, 8, 0), 0.0);   // no overflow in the p scaling
}

// every process of a section computes bit-identical g and l: each puts its
// values to process 0, which compares (works on every engine)
const size_t kSizes[] = { 0, 8, 300, (size_t)1 << 20, SIZE_MAX };
const size_t kPerProc = 2 * 4 * (sizeof kSizes / sizeof *kSizes);   // p' = 1..4

struct Identical { lpf_pid_t nprocs; int same; };

void spmd_probe(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(ctx, &m);
    std::vector<double> all((size_t)p * kPerProc, 0.0);
    double *mine = all.data() + (size_t)s * kPerProc;
    size_t k = 0;
    for (lpf_pid_t q = 1; q <= 4; ++q)
        for (size_t sz : kSizes) {
            mine[k++] = m.g(q, sz, LPF_SYNC_DEFAULT);
            mine[k++] = m.l(q, sz, LPF_SYNC_DEFAULT);
        }
    lpf_memslot_t slot;
    lpf_resize_memory_register(ctx, 1);
    lpf_resize_message_queue(ctx, 2 * (size_t)p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_global(ctx, all.data(), all.size() * sizeof(double), &slot);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    if (s != 0)
        lpf_put(ctx, slot, (size_t)s * kPerProc * sizeof(double), 0, slot,
                (size_t)s * kPerProc * sizeof(double), kPerProc * sizeof(double), LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_deregister(ctx, slot);
    if (s == 0) {
        Identical *out = static_cast<Identical *>(args.output);
        out->nprocs = p;
        out->same = 1;
        for (lpf_pid_t q = 1; q < p; ++q)
            if (std::memcmp(all.data(), all.data() + (size_t)q * kPerProc, kPerProc * sizeof(double)))
                out->same = 0;
    }
}

TEST(ProbeParams, BitIdenticalOnAllProcesses)
{
    Identical id = { 0, 0 };
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &id;
    args.output_size = sizeof id;
    ASSERT_EQ(LPF_SUCCESS, lpf_exec(LPF_ROOT, 4, spmd_probe, args));
    ASSERT_GE(id.nprocs, 2u) << "needs two processors (LPF_MAX_PROCS)";
    EXPECT_EQ(1, id.same);
}

TEST(ProbeParams, RowParsing)
{
    sstep_param_row r;
    EXPECT_EQ(1, sstep_param_parse("pthread 2 8 2.5e-09 1e-06\n", &r));
    EXPECT_STREQ("pthread", r.engine);
    EXPECT_EQ(2u, r.p);
    EXPECT_EQ(8.0, r.m);
    EXPECT_EQ(1, sstep_param_parse("  mpi 16 0 1e-9 1e-6", &r));
    EXPECT_EQ(1.0, r.m) << "size 0 counts as 1";
    for (const char *bad : { "# comment", "", "\n", "pthread 0 8 1e-9 1e-6", "pthread 2 8 0 1e-6",
                             "pthread 2 8 1e-9 -1", "pthread 2 8 nan 1e-6", "pthread 2 8 1e-9 inf",
                             "pthread 2 -8 1e-9 1e-6", "pthread 2 8 1e-9", "pthread 2 8 1e-9 1e-6 extra" })
        EXPECT_EQ(0, sstep_param_parse(bad, &r)) << bad;
}

TEST(ProbeParams, RowCheckSaysWhy)
{
    sstep_param_row r;
    char why[256];
    struct Case { const char *line, *why; };
    for (const Case &c : { Case{ "pthread 2 8 1e308 1e-6", "g = 1e+308 s/byte is outside" },
                           Case{ "pthread 2 8 1e-9 1e308", "l = 1e+308 s is outside" },
                           Case{ "pthread 2 8 1e-300 1e-6", "g = 1e-300 s/byte is outside" },
                           Case{ "pthread 2 1e308 1e-9 1e-6", "msg_size = 1e+308 is not a size" },
                           Case{ "pthread 99999999999 8 1e-9 1e-6", "p = 99999999999 is not" },
                           Case{ "pthread -2 8 1e-9 1e-6", "p = -2 is not" },
                           Case{ "pth/read 2 8 1e-9 1e-6", "engine name 'pth/read'" },
                           Case{ "pthread 2 8 1e-9", "fewer than five fields" },
                           Case{ "pthread 2 8 1e-9 1e-6 x", "more than five fields" } }) {
        why[0] = '\0';
        EXPECT_EQ(-1, sstep_param_check(c.line, &r, why, sizeof why)) << c.line;
        EXPECT_NE(nullptr, strstr(why, c.why)) << c.line << ": " << why;
    }
    std::string longline(600, '7');
    EXPECT_EQ(-1, sstep_param_check(longline.substr(0, SSTEP_PARAM_LINE_MAX - 1).c_str(), &r, why,
            sizeof why));
    EXPECT_NE(nullptr, strstr(why, "longer than")) << why;
    EXPECT_EQ(0, sstep_param_check("# 1e308", &r, why, sizeof why));
    EXPECT_EQ(1, sstep_param_check("mpi 4 1024 1e-9 1e-6\r\n", &r, why, sizeof why));
}

TEST(ProbeParams, BoundedReads)
{
    char dir[] = "/tmp/probe_slurp_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    char why[256];
    size_t len = 0;
    int eno = 0;
    // a device that never ends, a FIFO without a writer, a directory: refused at once
    EXPECT_EQ(nullptr, sstep_param_slurp("/dev/zero", &len, &eno, why, sizeof why));
    EXPECT_NE(nullptr, strstr(why, "not a regular file")) << why;
    std::string fifo = std::string(dir) + "/fifo";
    ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
    EXPECT_EQ(nullptr, sstep_param_slurp(fifo.c_str(), &len, &eno, why, sizeof why));
    EXPECT_NE(nullptr, strstr(why, "not a regular file")) << why;
    EXPECT_EQ(nullptr, sstep_param_slurp(dir, &len, &eno, why, sizeof why));
    // larger than the limit
    std::string big = std::string(dir) + "/big";
    { std::ofstream f(big); }
    ASSERT_EQ(0, truncate(big.c_str(), SSTEP_PARAM_MAX_BYTES + 1));
    EXPECT_EQ(nullptr, sstep_param_slurp(big.c_str(), &len, &eno, why, sizeof why));
    EXPECT_NE(nullptr, strstr(why, "larger than")) << why;
    // missing: errno ENOENT (lpf_probe stays silent then)
    EXPECT_EQ(nullptr, sstep_param_slurp((std::string(dir) + "/none").c_str(), &len, &eno, why,
            sizeof why));
    EXPECT_EQ(ENOENT, eno);
    // lines: the last without a newline, an over-long one cut and rejected
    std::string ok = std::string(dir) + "/ok";
    { std::ofstream f(ok); f << "pthread 2 8 1e-9 1e-6\n" << std::string(700, 'y') << "\nmpi 2 8 1e-9 1e-6"; }
    char *buf = sstep_param_slurp(ok.c_str(), &len, &eno, why, sizeof why);
    ASSERT_NE(nullptr, buf) << why;
    char line[SSTEP_PARAM_LINE_MAX];
    size_t pos = 0;
    std::vector<int> kinds;
    sstep_param_row r;
    while (sstep_param_line(buf, len, &pos, line)) kinds.push_back(sstep_param_check(line, &r, why, sizeof why));
    free(buf);
    EXPECT_EQ((std::vector<int>{ 1, -1, 1 }), kinds);
    unlink(fifo.c_str());
    unlink(big.c_str());
    unlink(ok.c_str());
    rmdir(dir);
}

TEST(ProbeParams, NormalizeAndSelect)
{
    std::vector<sstep_param_row> rows = {
        { "pthread", 4, 64, 1, 1 }, { "mpi", 2, 8, 5, 5 }, { "pthread", 2, 8, 2, 2 },
        { "pthread", 2, 8, 3, 3 },   // a later row of the same key wins
        { "pthread", 2, 1, 4, 4 },
    };
    size_t n = sstep_param_normalize(rows.data(), rows.size());
    ASSERT_EQ(4u, n);
    EXPECT_STREQ("mpi", rows[0].engine);
    EXPECT_EQ(1.0, rows[1].m);
    EXPECT_EQ(8.0, rows[2].m);
    EXPECT_EQ(3.0, rows[2].g);
    EXPECT_EQ(4u, rows[3].p);
    size_t first = 0, count = 0;
    EXPECT_EQ(2u, sstep_param_select(rows.data(), n, "pthread", 1, &first, &count));
    EXPECT_EQ(1u, first);
    EXPECT_EQ(2u, count);
    EXPECT_EQ(4u, sstep_param_select(rows.data(), n, "pthread", 3, &first, &count));
    EXPECT_EQ(4u, sstep_param_select(rows.data(), n, "pthread", 99, &first, &count));
    EXPECT_EQ(3u, first);
    EXPECT_EQ(2u, sstep_param_select(rows.data(), n, "mpi", 1, &first, &count));
    EXPECT_EQ(0u, sstep_param_select(rows.data(), n, "hybrid", 1, &first, &count));
}

TEST(ProbeParams, SaveCreatesDirectoriesAndKeepsOtherRows)
{
    char dir[] = "/tmp/probe_save_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    std::string path = std::string(dir) + "/a/b/params.txt";
    char err[256];
    sstep_param_row one = { "mpi", 8, 1024, 1e-9, 1e-5 };
    ASSERT_EQ(0, pm_save_params(path.c_str(), &one, 1, "first", err, sizeof err)) << err;
    ASSERT_EQ(0, pm_save_params(path.c_str(), kRows.data(), 4, "second", err, sizeof err)) << err;
    sstep_param_row two = { "mpi", 8, 1024, 2e-9, 2e-5 };
    ASSERT_EQ(0, pm_save_params(path.c_str(), &two, 1, "third", err, sizeof err)) << err;
    std::vector<sstep_param_row> rows(16);
    ASSERT_EQ(5, pm_load_params(path.c_str(), rows.data(), rows.size()));
    int found = 0;
    for (int i = 0; i < 5; ++i)
        if (!strcmp(rows[i].engine, "mpi") && rows[i].p == 8) {
            ++found;
            EXPECT_EQ(2e-9, rows[i].g) << "the mpi p = 8 row was replaced";
        }
    EXPECT_EQ(1, found);
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_NE(std::string::npos, ss.str().find("# third"));
    EXPECT_NE(std::string::npos, ss.str().find("engine p msg_size"));
    // an unwritable place is an error, not a crash
    EXPECT_EQ(-1, pm_save_params("/proc/no/such/params.txt", &one, 1, "", err, sizeof err));
    EXPECT_NE(0u, strlen(err));
    unlink(path.c_str());
    rmdir((std::string(dir) + "/a/b").c_str());
    rmdir((std::string(dir) + "/a").c_str());
    rmdir(dir);
}

} // namespace
