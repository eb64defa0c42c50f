// bspprobe's timing-free half on synthetic data: statistics and fits, the
// LPF-way formulas, option parsing, the traffic of every experiment, the
// analysis of a whole plan, and the summary / JSON / gnuplot output.
// No clocks, no timing thresholds.
#include "probe_model.h"
#include "json_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>
#include <unistd.h>

namespace {

// ---------------------------------------------------------------- stats

TEST(ProbeStats, TrimmedMeanAndMedian)
{
    const double x[] = { 5, 1, 3, 100, 2, 4, -50, 3 };
    // n = 8, trim 0.25 -> drop 2 at each end of 1..: -50 1 2 3 3 4 5 100
    EXPECT_DOUBLE_EQ(3.0, pm_trimmed_mean(x, 8, 0.25));
    EXPECT_DOUBLE_EQ(3.0, pm_median(x, 8));
    EXPECT_DOUBLE_EQ(8.5, pm_trimmed_mean(x, 8, 0.0) + 0.0);   // plain mean: 68/8
    const double one[] = { 7 };
    EXPECT_DOUBLE_EQ(7.0, pm_trimmed_mean(one, 1, 0.25));
    EXPECT_DOUBLE_EQ(7.0, pm_median(one, 1));
    EXPECT_TRUE(std::isnan(pm_trimmed_mean(x, 0, 0.25)));
    const double odd[] = { 9, 1, 5 };
    EXPECT_DOUBLE_EQ(5.0, pm_median(odd, 3));
}

TEST(ProbeStats, AffineFitRecoversLine)
{
    std::vector<double> h, t;
    for (int i = 0; i < 50; ++i) {
        h.push_back(1000.0 * i);
        t.push_back(2e-9 * h.back() + 3e-6);
    }
    pm_fit f;
    ASSERT_EQ(0, pm_fit_affine(h.data(), t.data(), nullptr, h.size(), &f));
    EXPECT_NEAR(2e-9, f.g, 1e-18);
    EXPECT_NEAR(3e-6, f.l, 1e-15);
    EXPECT_NEAR(1.0, f.r2, 1e-12);
    EXPECT_EQ(50u, f.n);

    // relative weights on a geometric grid: still exact for exact data
    std::vector<double> w;
    h.clear(); t.clear();
    for (int k = 0; k < 30; ++k) {
        h.push_back(std::ldexp(1.0, k));
        t.push_back(0.2e-9 * h.back() + 1e-6);
        w.push_back(1.0 / (t.back() * t.back()));
    }
    ASSERT_EQ(0, pm_fit_affine(h.data(), t.data(), w.data(), h.size(), &f));
    EXPECT_NEAR(1.0, f.g / 0.2e-9, 1e-9);
    EXPECT_NEAR(1.0, f.l / 1e-6, 1e-9);
    EXPECT_NEAR(1.0, f.r2, 1e-9);

    // noise lowers R^2 but keeps it in (0, 1)
    for (size_t i = 0; i < t.size(); ++i) t[i] *= (i % 2 ? 1.2 : 0.8);
    ASSERT_EQ(0, pm_fit_affine(h.data(), t.data(), w.data(), h.size(), &f));
    EXPECT_LT(f.r2, 1.0);
    EXPECT_GT(f.r2, 0.0);

    // degenerate: one distinct h
    const double hh[] = { 5, 5, 5 }, tt[] = { 1, 2, 3 };
    EXPECT_EQ(-1, pm_fit_affine(hh, tt, nullptr, 3, &f));
    EXPECT_EQ(-1, pm_fit_affine(hh, tt, nullptr, 0, &f));
}

TEST(ProbeStats, LpfEstimate)
{
    // T(h) = g h + l exactly: both formulas give g and l back
    const double g = 5e-9, l = 2e-6, p = 4, n = 1 << 20;
    double ge, le;
    pm_lpf_estimate(l, g * p + l, 2 * g * p + l, g * n + l, p, n, &ge, &le);
    EXPECT_NEAR(1.0, ge / g, 1e-9);
    EXPECT_NEAR(1.0, le / l, 1e-9);
    // l = max(T(0), 2T(p) - T(2p)): T(0) wins when the extrapolation is lower
    pm_lpf_estimate(3e-6, g * p + l, 2 * g * p + l, g * n + l, p, n, &ge, &le);
    EXPECT_DOUBLE_EQ(3e-6, le);
    pm_lpf_estimate(1, 1, 1, 1, 2, 4, &ge, &le);   // n_max = 2p: no slope
    EXPECT_TRUE(std::isnan(ge));
}

TEST(ProbeStats, RandomStreamIsDeterministic)
{
    pm_rng a = { 42 }, b = { 42 }, c = { 43 };
    for (int i = 0; i < 100; ++i) {
        uint64_t x = pm_rng_next(&a);
        EXPECT_EQ(x, pm_rng_next(&b));
        double u = pm_rng_unit(&c);
        EXPECT_GE(u, 0.0);
        EXPECT_LT(u, 1.0);
    }
    EXPECT_NE(pm_mix(1, 2), pm_mix(2, 1));
}

// ---------------------------------------------------------------- options

struct Argv {
    std::vector<std::string> s;
    std::vector<char *> v;
    explicit Argv(std::initializer_list<const char *> a)
    {
        s.emplace_back("bspprobe");
        for (const char *x : a) s.emplace_back(x);
        for (auto &x : s) v.push_back(&x[0]);
        v.push_back(nullptr);
    }
    int argc() const { return (int)s.size(); }
    char **argv() { return v.data(); }
};

int parse(pm_options &o, std::initializer_list<const char *> a, std::string *err = nullptr)
{
    pm_default_options(&o, 32u << 20, 8ull << 30, nullptr);
    Argv av(a);
    char e[256] = "";
    int rc = pm_parse_options(&o, av.argc(), av.argv(), e, sizeof e);
    if (err) *err = e;
    return rc;
}

TEST(ProbeOptions, Sizes)
{
    size_t z;
    EXPECT_EQ(0, pm_parse_size("4096", &z)); EXPECT_EQ(4096u, z);
    EXPECT_EQ(0, pm_parse_size("64K", &z)); EXPECT_EQ(65536u, z);
    EXPECT_EQ(0, pm_parse_size("1M", &z)); EXPECT_EQ(1u << 20, z);
    EXPECT_EQ(0, pm_parse_size("2G", &z)); EXPECT_EQ(2ull << 30, z);
    EXPECT_EQ(0, pm_parse_size("1MiB", &z)); EXPECT_EQ(1u << 20, z);
    EXPECT_EQ(0, pm_parse_size("8KB", &z)); EXPECT_EQ(8192u, z);
    EXPECT_EQ(-1, pm_parse_size("", &z));
    EXPECT_EQ(-1, pm_parse_size("x", &z));
    EXPECT_EQ(-1, pm_parse_size("-1", &z));
    EXPECT_EQ(-1, pm_parse_size("12Q", &z));
    EXPECT_EQ(-1, pm_parse_size("99999999999999999999G", &z));
}

TEST(ProbeOptions, DefaultsAndQuick)
{
    pm_options o;
    ASSERT_EQ(0, parse(o, {}));
    EXPECT_EQ(2u, o.cfg.p);
    EXPECT_EQ(0, o.cfg.quick);
    EXPECT_EQ((unsigned)PM_PART_ALL, o.cfg.parts);
    EXPECT_EQ(0, o.save);
    EXPECT_EQ(1, o.plot);
    EXPECT_STREQ("pthread", o.engine);
    EXPECT_STREQ("bspprobe-out", o.out_dir);
    // LPF: 4 x LLC over the processes: 4 * 32 MiB / 2
    EXPECT_DOUBLE_EQ(64.0 * (1 << 20), o.cfg.volume);
    EXPECT_EQ((size_t)64 << 20, o.cfg.pat_hmax) << "64 MiB, at most the volume";
    ASSERT_EQ(0, parse(o, { "--volume", "32M" }));
    EXPECT_EQ((size_t)32 << 20, o.cfg.pat_hmax);

    ASSERT_EQ(0, parse(o, { "--quick", "-p", "3" }));
    EXPECT_EQ(1, o.cfg.quick);
    EXPECT_EQ(3u, o.cfg.p);
    EXPECT_LT(o.cfg.samples, 7u);
    EXPECT_LT(o.cfg.max_msgs, (size_t)1 << 20);

    // explicit values win over --quick whatever the order
    ASSERT_EQ(0, parse(o, { "--samples=11", "--quick", "--volume", "2M" }));
    EXPECT_EQ(11u, o.cfg.samples);
    EXPECT_DOUBLE_EQ(2.0 * (1 << 20), o.cfg.volume);
}

TEST(ProbeOptions, Everything)
{
    pm_options o;
    ASSERT_EQ(0, parse(o, { "--procs=4", "--save=/tmp/x/params.txt", "--out", "d", "--json", "-",
                            "--no-plot", "--only", "lpf,patterns", "--seed", "99", "--key-samples", "5",
                            "--max-msgs", "1K", "--bsp-hmax", "512", "--pattern-hmax", "1M",
                            "--as-hmax", "1024", "--engine", "mpi" }));
    EXPECT_EQ(4u, o.cfg.p);
    EXPECT_EQ(1, o.save);
    EXPECT_STREQ("/tmp/x/params.txt", o.save_path);
    EXPECT_STREQ("d", o.out_dir);
    EXPECT_STREQ("-", o.json_path);
    EXPECT_EQ(0, o.plot);
    EXPECT_EQ((unsigned)(PM_PART_LPF | PM_PART_PATTERNS), o.cfg.parts);
    EXPECT_EQ(99u, o.cfg.seed);
    EXPECT_EQ(5u, o.cfg.key_samples);
    EXPECT_EQ(1024u, o.cfg.max_msgs);
    EXPECT_EQ(512u, o.cfg.bsp_hmax);
    EXPECT_EQ((size_t)1 << 20, o.cfg.pat_hmax);
    EXPECT_EQ(1024u, o.cfg.as_hmax);
    EXPECT_STREQ("mpi", o.engine);

    ASSERT_EQ(0, parse(o, { "--save" }));
    EXPECT_EQ(1, o.save);
    EXPECT_STREQ("", o.save_path);
    ASSERT_EQ(0, parse(o, { "-h" }));
    EXPECT_EQ(1, o.help);
}

TEST(ProbeOptions, Errors)
{
    pm_options o;
    std::string err;
    EXPECT_EQ(-1, parse(o, { "--bogus" }, &err));
    EXPECT_NE(std::string::npos, err.find("--bogus"));
    EXPECT_EQ(-1, parse(o, { "-p", "0" }, &err));
    EXPECT_EQ(-1, parse(o, { "-p" }, &err));
    EXPECT_NE(std::string::npos, err.find("needs a value"));
    EXPECT_EQ(-1, parse(o, { "--only", "nothing" }, &err));
    EXPECT_EQ(-1, parse(o, { "--save=" }, &err));
    EXPECT_EQ(-1, parse(o, { "--samples", "0" }, &err));
    EXPECT_EQ(-1, parse(o, { "--volume", "12" }, &err));
    EXPECT_EQ(-1, parse(o, { "--engine", "a b" }, &err));
    EXPECT_EQ(-1, parse(o, { "--engine", "a-very-long-engine-name" }, &err));
    // options without a value take none: an error naming the option
    for (const char *a : { "--quick=yes", "--no-plot=1", "--help=x", "--test-bad-fit=0",
                           "--quick=" }) {
        EXPECT_EQ(-1, parse(o, { a }, &err)) << a;
        std::string name(a, strchr(a, '=') - a);
        EXPECT_NE(std::string::npos, err.find(name + " takes no value")) << a << ": " << err;
    }
    EXPECT_EQ(-1, parse(o, { "--force-save=" }, &err));
    EXPECT_NE(std::string::npos, err.find("--force-save")) << err;
    EXPECT_EQ(-1, parse(o, { "--procs=x" }, &err));
    EXPECT_NE(std::string::npos, err.find("--procs")) << err;
    EXPECT_EQ(-1, parse(o, { "--json=" }, &err));
}

TEST(ProbeOptions, ForceSaveTakesAPath)
{
    pm_options o;
    ASSERT_EQ(0, parse(o, { "--quick", "--force-save=/tmp/x/forced.txt" }));
    EXPECT_EQ(1, o.save);
    EXPECT_EQ(1, o.force_save);
    EXPECT_STREQ("/tmp/x/forced.txt", o.save_path);
    ASSERT_EQ(0, parse(o, { "--force-save" }));
    EXPECT_EQ(1, o.force_save);
    EXPECT_STREQ("", o.save_path);
}

// ---------------------------------------------------------------- traffic

pm_config small_config()
{
    pm_options o;
    pm_default_options(&o, 1u << 20, 1ull << 30, nullptr);
    Argv av({ "--quick", "--samples", "3", "--key-samples", "5", "--volume", "1M",
              "--max-msgs", "4096", "--bsp-hmax", "256", "--pattern-hmax", "4M", "--as-hmax", "256" });
    char e[256];
    EXPECT_EQ(0, pm_parse_options(&o, av.argc(), av.argv(), e, sizeof e)) << e;
    return o.cfg;
}

// every superstep of a plan: the messages match the matrix, land in
// disjoint places (unless overlapping on purpose), and h, msgs and the
// smallest message are what the traffic says
void check_traffic(const pm_series &se, size_t i, unsigned p, uint64_t seed)
{
    pm_traffic t;
    ASSERT_EQ(0, pm_point_traffic(&se, i, p, seed, &t));
    std::vector<size_t> rows(p, 0), cols(p, 0), sent(p, 0), recv(p, 0);
    size_t minmsg = 0;
    std::map<unsigned, std::vector<std::pair<size_t, size_t>>> landing;   // d -> [off, off+size)
    for (unsigned s = 0; s < p; ++s) {
        size_t n = pm_traffic_count(&t, s);
        std::vector<pm_put> puts(n + 1);
        ASSERT_EQ(n, pm_traffic_puts(&t, s, puts.data()));
        std::vector<size_t> per_dest(p, 0);
        size_t soff = 0;
        for (size_t k = 0; k < n; ++k) {
            const pm_put &q = puts[k];
            ASSERT_LT(q.dst, p);
            ASSERT_GT(q.size, 0u);
            if (t.chunk) { ASSERT_LE(q.size, t.chunk); }
            EXPECT_EQ(soff, q.src_off) << "source data is read in order";
            soff += q.size;
            per_dest[q.dst] += q.size;
            landing[q.dst].push_back({ q.dst_off, q.dst_off + q.size });
            recv[q.dst]++;
            if (!minmsg || q.size < minmsg) minmsg = q.size;
        }
        sent[s] = n;
        for (unsigned d = 0; d < p; ++d) {
            EXPECT_EQ(t.M[(size_t)s * p + d], per_dest[d]);
            rows[s] += per_dest[d];
            cols[d] += per_dest[d];
        }
    }
    size_t h = 0, msgs = 0;
    for (unsigned s = 0; s < p; ++s) {
        h = std::max({ h, rows[s], cols[s] });
        msgs = std::max({ msgs, sent[s], recv[s] });
    }
    EXPECT_EQ(h, t.h);
    EXPECT_EQ(msgs, t.msgs);
    EXPECT_EQ(minmsg, t.min_msg);
    for (auto &kv : landing) {
        auto &v = kv.second;
        std::sort(v.begin(), v.end());
        for (auto &iv : v) EXPECT_LE(iv.second, cols[kv.first]) << "lands inside what d receives";
        if (t.overlap) continue;
        for (size_t k = 1; k < v.size(); ++k) EXPECT_LE(v[k - 1].second, v[k].first) << "disjoint writes";
    }
    pm_traffic_free(&t);
}

TEST(ProbeTraffic, EveryPointOfThePlan)
{
    pm_config cfg = small_config();
    for (unsigned p : { 1u, 2u, 3u, 5u }) {
        pm_results res;
        ASSERT_EQ(0, pm_plan(&res, &cfg, p, "pthread"));
        ASSERT_GT(res.nseries, 10u);
        for (size_t i = 0; i < res.nseries; ++i)
            for (size_t j = 0; j < res.series[i].npts; ++j) {
                SCOPED_TRACE(std::string(res.series[i].name) + " p=" + std::to_string(p) +
                             " x=" + std::to_string(res.series[i].pt[j].x));
                check_traffic(res.series[i], j, p, cfg.seed);
                EXPECT_LE(res.series[i].pt[j].msgs, (double)cfg.max_msgs);
            }
        pm_results_free(&res);
    }
}

TEST(ProbeTraffic, WhatEachExperimentSends)
{
    pm_config cfg = small_config();
    const unsigned p = 4;
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, p, "pthread"));
    auto traffic = [&](pm_series *se, double x, pm_traffic &t) {
        for (size_t i = 0; i < se->npts; ++i)
            if (se->pt[i].x == x) return pm_point_traffic(se, i, p, cfg.seed, &t);
        ADD_FAILURE() << se->name << " has no point " << x;
        return -1;
    };
    pm_traffic t;
    // bspbench: h one-word puts to the p-1 others
    pm_series *bs = pm_find_series(&res, PM_BSPBENCH, -1, 0);
    ASSERT_NE(nullptr, bs);
    ASSERT_EQ(0, traffic(bs, 8, t));
    EXPECT_EQ(64u, t.h);
    EXPECT_EQ(8u, t.msgs);
    EXPECT_EQ(8u, t.min_msg);
    for (unsigned s = 0; s < p; ++s) EXPECT_EQ(0u, t.M[s * p + s]);
    pm_traffic_free(&t);
    // LPF way: a total exchange of 2p words of 64 bytes, self included
    pm_series *lp = pm_find_series(&res, PM_LPF, -1, 64);
    ASSERT_NE(nullptr, lp);
    ASSERT_EQ(0, traffic(lp, 2 * p, t));
    EXPECT_EQ(2u * p * 64, t.h);
    EXPECT_EQ(2u * p, t.msgs);
    for (unsigned s = 0; s < p; ++s)
        for (unsigned d = 0; d < p; ++d) EXPECT_EQ(128u, t.M[s * p + d]);
    pm_traffic_free(&t);
    // As tests
    pm_series *at = pm_find_series(&res, PM_AS_TEST, -1, 0);
    ASSERT_NE(nullptr, at);
    ASSERT_EQ(0, traffic(at, 1, t)); EXPECT_EQ(0u, t.h); EXPECT_EQ(0, t.compute); pm_traffic_free(&t);
    ASSERT_EQ(0, traffic(at, 2, t)); EXPECT_EQ(0u, t.h); EXPECT_EQ(1, t.compute); pm_traffic_free(&t);
    ASSERT_EQ(0, traffic(at, 3, t)); EXPECT_EQ(4u * p, t.h); EXPECT_EQ(p, t.msgs); pm_traffic_free(&t);
    ASSERT_EQ(0, traffic(at, 4, t)); EXPECT_EQ(4u, t.h); EXPECT_EQ(4u, t.M[p - 1]); pm_traffic_free(&t);
    ASSERT_EQ(0, traffic(at, 5, t)); EXPECT_EQ(4u * (p - 1), t.h); EXPECT_EQ(p - 1, t.msgs); pm_traffic_free(&t);
    // patterns at h = 16 KiB (p = 4: h/(p-1) = 5461.3 -> 5456, whole words)
    const double x = 16384;
    struct { int pat; size_t h, msgs, minmsg; int overlap; } want[] = {
        { PAT_TOTAL_EXCHANGE, 16384, p, 4096, 0 },
        { PAT_RING, 16384, 1, 16384, 0 },
        { PAT_ONE_TO_ALL, 3 * 5456, p - 1, 5456, 0 },
        { PAT_ALL_TO_ONE, 3 * 5456, p - 1, 5456, 0 },
        { PAT_TINY_PUTS, 3 * 5456, 3 * 5456 / 8, 8, 0 },
        { PAT_BIG_PUTS, 3 * 5456, p - 1, 5456, 0 },
        { PAT_OVERLAP, 3 * 5456, p - 1, 5456, 1 },
    };
    for (auto &w : want) {
        SCOPED_TRACE(pm_pattern_name(w.pat));
        pm_series *se = pm_find_series(&res, PM_PATTERN, w.pat, 0);
        ASSERT_NE(nullptr, se);
        ASSERT_EQ(0, traffic(se, x, t));
        EXPECT_EQ(w.h, t.h);
        EXPECT_EQ(w.msgs, t.msgs);
        EXPECT_EQ(w.minmsg, t.min_msg);
        EXPECT_EQ(w.overlap, t.overlap);
        pm_traffic_free(&t);
    }
    // random sparse: h never above the nominal, a fresh matrix per point
    pm_series *rs = pm_find_series(&res, PM_PATTERN, PAT_RANDOM_SPARSE, 0);
    ASSERT_EQ(0, traffic(rs, x, t));
    EXPECT_LE(t.h, 16384u);
    EXPECT_GE(t.h, 16384u - 8 * p);
    pm_traffic_free(&t);
    // copy baseline: no messages, x bytes copied
    pm_series *cp = pm_find_series(&res, PM_COPY, -1, 0);
    ASSERT_NE(nullptr, cp);
    ASSERT_EQ(0, traffic(cp, x, t));
    EXPECT_EQ(0u, t.h);
    EXPECT_EQ(16384u, t.copy);
    pm_traffic_free(&t);
    pm_results_free(&res);
}

TEST(ProbePlan, ScheduleAndExtent)
{
    pm_config cfg = small_config();
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    size_t want = 0;
    for (size_t i = 0; i < res.nseries; ++i)
        for (size_t j = 0; j < res.series[i].npts; ++j) {
            const pm_point &pt = res.series[i].pt[j];
            want += pt.n;
            EXPECT_EQ(pt.key ? cfg.key_samples : cfg.samples, pt.n);
            EXPECT_GE(pt.reps, 1u);
        }
    pm_task *a = nullptr, *b = nullptr, *c = nullptr;
    ASSERT_EQ(want, pm_schedule(&res, 7, &a));
    ASSERT_EQ(want, pm_schedule(&res, 7, &b));
    ASSERT_EQ(want, pm_schedule(&res, 8, &c));
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
    bool same = true, differs = false;
    for (size_t k = 0; k < want; ++k) {
        seen.insert({ a[k].series, a[k].point, a[k].sample });
        same = same && !memcmp(&a[k], &b[k], sizeof a[k]);
        differs = differs || memcmp(&a[k], &c[k], sizeof a[k]);
    }
    EXPECT_EQ(want, seen.size()) << "every sample exactly once";
    EXPECT_TRUE(same) << "the same order on every process";
    EXPECT_TRUE(differs) << "another seed, another order";
    free(a); free(b); free(c);

    size_t bytes, msgs;
    pm_plan_extent(&res, &bytes, &msgs);
    double hmax = 0, mmax = 0;
    for (size_t i = 0; i < res.nseries; ++i)
        for (size_t j = 0; j < res.series[i].npts; ++j) {
            hmax = std::max(hmax, res.series[i].pt[j].h);
            mmax = std::max(mmax, res.series[i].pt[j].msgs);
        }
    EXPECT_EQ((size_t)hmax, bytes) << "buffers for the largest superstep";
    EXPECT_GE(bytes, cfg.pat_hmax);
    EXPECT_GE(msgs, 2 * (size_t)mmax) << "queue for issued + received requests";
    // the LPF way has its four key points per word size
    for (double w : pm_word_sizes) {
        pm_series *se = pm_find_series(&res, PM_LPF, -1, w);
        ASSERT_NE(nullptr, se);
        int keys = 0;
        for (size_t j = 0; j < se->npts; ++j) keys += se->pt[j].key;
        EXPECT_EQ(4, keys) << w;
    }
    pm_results_free(&res);
}

// ---------------------------------------------------------------- analysis

// A synthetic machine: T = l + a h + o msgs (per-byte and per-message cost);
// the copy baseline is in cache up to 1 MiB.
const double SA = 0.2e-9, SO = 20e-9, SL = 1e-6, ST0 = 0.1e-6;

double synthetic(const pm_series &se, const pm_point &pt)
{
    if (se.kind == PM_COPY) {
        if (pt.h == 0) return ST0;
        return ST0 + pt.h * (pt.h <= (1 << 20) ? 0.05e-9 : 0.2e-9);
    }
    if (pt.h == 0) return SL;
    return SL + SA * pt.h + SO * pt.msgs;
}

void fill(pm_results &res, double noise)
{
    for (size_t i = 0; i < res.nseries; ++i)
        for (size_t j = 0; j < res.series[i].npts; ++j) {
            pm_point &pt = res.series[i].pt[j];
            double v = synthetic(res.series[i], pt);
            for (size_t k = 0; k < pt.n; ++k)
                pt.t[k] = v * (1 + noise * (double)((int)(k % 5) - 2));
        }
    for (int k = 0; k < PM_R_NS; ++k) res.r_by_n[k] = 1e9;
    res.r_min = res.r_max = 1e9;
    for (int k = 0; k < PM_NWORDS; ++k) res.memcpy_spb[k] = 0.1e-9;
    res.wall_seconds = 1.5;
    res.cores = 2;
    res.llc_bytes = 1 << 20;
    res.others_cpu = 0.01;
    res.steal = 0;
}

TEST(ProbeAnalysis, RecoversTheSyntheticMachine)
{
    pm_config cfg = small_config();
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0);
    pm_analyse(&res, 100);
    ASSERT_EQ(0, res.failed);
    EXPECT_DOUBLE_EQ(1e9, res.r);

    // bspbench: g per 8-byte word = 8a + o, l
    EXPECT_NEAR(1.0, res.bsp_g.est / (8 * SA + SO), 1e-6);
    EXPECT_NEAR(1.0, res.bsp_l.est / SL, 1e-6);
    EXPECT_NEAR(1.0, res.bsp_fit.r2, 1e-9);
    EXPECT_NEAR(res.bsp_g.est, res.bsp_g.lo, 1e-15) << "no noise, no interval";

    // LPF way: g per byte = a + o/w, l; one saved row per word size
    ASSERT_EQ(PM_NWORDS, res.nlpf);
    ASSERT_EQ((size_t)PM_NWORDS, res.nrows);
    for (int k = 0; k < PM_NWORDS; ++k) {
        double w = pm_word_sizes[k];
        EXPECT_NEAR(1.0, res.lpf[k].g.est / (SA + SO / w), 1e-6) << w;
        EXPECT_NEAR(1.0, res.lpf[k].l.est / SL, 1e-6) << w;
        EXPECT_STREQ("pthread", res.rows[k].engine);
        EXPECT_EQ(2u, res.rows[k].p);
        EXPECT_EQ(w, res.rows[k].m);
        EXPECT_EQ(res.lpf[k].g.est, res.rows[k].g);
        EXPECT_EQ(res.lpf[k].l.est, res.rows[k].l);
    }

    // As suite
    EXPECT_NEAR(SL, res.as_test[0].est, 1e-15);
    EXPECT_NEAR(SL + SA * 8 + SO * 2, res.as_test[2].est, 1e-15);   // p ints, 2 messages

    // the copy baseline is in cache up to 1 MiB
    EXPECT_EQ(1048576.0, res.cache_h);

    // patterns: g(m) h + l(m) predicts exactly (the 1/m interpolation is
    // this machine's model) while m lies within the measured sizes
    for (int pat = 0; pat < PAT_COUNT; ++pat) {
        SCOPED_TRACE(pm_pattern_name(pat));
        const pm_pattern_result &R = res.pat[pat];
        EXPECT_GT(R.n_bw, 0u);
        EXPECT_LE(R.ratio_max, 1.0 + 1e-9) << "the model is an upper bound";
        if (pat == PAT_RANDOM_SPARSE) continue;   // its smallest message may be far below h
        EXPECT_NEAR(1.0, R.ratio_min, 1e-3);
        EXPECT_TRUE(R.within);
        EXPECT_TRUE(R.affine);
        EXPECT_GT(R.fit.r2, 0.999);
        EXPECT_STREQ("model holds, affine", pm_pattern_verdict(&R));
    }
    pm_results_free(&res);
}

TEST(ProbeAnalysis, IntervalsAndVerdicts)
{
    pm_config cfg = small_config();
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.02);
    // ring: twice as slow as the model above 64 KiB: a violation to flag
    pm_series *ring = pm_find_series(&res, PM_PATTERN, PAT_RING, 0);
    for (size_t j = 0; j < ring->npts; ++j)
        if (ring->pt[j].x > 65536)
            for (size_t k = 0; k < ring->pt[j].n; ++k) ring->pt[j].t[k] *= 2;
    // all-to-one: 3x faster in cache only
    pm_series *a21 = pm_find_series(&res, PM_PATTERN, PAT_ALL_TO_ONE, 0);
    for (size_t j = 0; j < a21->npts; ++j)
        if (a21->pt[j].h > 16384 && a21->pt[j].h <= (1 << 20))
            for (size_t k = 0; k < a21->pt[j].n; ++k) a21->pt[j].t[k] /= 3;
    pm_analyse(&res, 200);
    for (size_t i = 0; i < res.nseries; ++i)
        for (size_t j = 0; j < res.series[i].npts; ++j) {
            const pm_point &pt = res.series[i].pt[j];
            EXPECT_LE(pt.lo, pt.est);
            EXPECT_GE(pt.hi, pt.est);
            EXPECT_LT(pt.lo, pt.hi) << res.series[i].name;
        }
    for (int k = 0; k < res.nlpf; ++k) {
        EXPECT_LE(res.lpf[k].g.lo, res.lpf[k].g.est);
        EXPECT_GE(res.lpf[k].g.hi, res.lpf[k].g.est);
        EXPECT_LE(res.lpf[k].l.lo, res.lpf[k].l.est);
        EXPECT_GE(res.lpf[k].l.hi, res.lpf[k].l.est);
    }
    EXPECT_STREQ("SLOWER than the model", pm_pattern_verdict(&res.pat[PAT_RING]));
    EXPECT_FALSE(res.pat[PAT_RING].affine);
    EXPECT_STREQ("holds out of cache; faster in cache (memory hierarchy)",
                 pm_pattern_verdict(&res.pat[PAT_ALL_TO_ONE]));
    EXPECT_LT(res.pat[PAT_ALL_TO_ONE].ratio_min, 0.5);
    pm_results_free(&res);
}

// ---------------------------------------------------------------- output

std::string capture(void (*fn)(FILE *, const pm_results *), const pm_results &res)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, &res);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

TEST(ProbeAnalysis, FitAcceptance)
{
    pm_config cfg = small_config();
    pm_results res;
    pm_fit_check chk;
    // the synthetic machine: everything physical, nothing to warn about
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    pm_analyse(&res, 100);
    pm_check_fits(&res, &chk);
    EXPECT_EQ(0, chk.refuse) << chk.text;
    EXPECT_EQ(0, chk.warn) << chk.text;
    EXPECT_STREQ("", chk.text);
    for (int k = 0; k < res.nlpf; ++k) EXPECT_NEAR(1.0, res.lpf[k].fit_factor, 0.05);
    pm_results_free(&res);

    // T(n_max) faster than T(2p): g < 0 for 8-byte words
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    pm_test_bad_fit(&res);
    pm_analyse(&res, 100);
    EXPECT_LT(res.lpf[0].g.est, 0);
    pm_check_fits(&res, &chk);
    EXPECT_EQ(1, chk.refuse) << chk.text;
    EXPECT_NE(nullptr, strstr(chk.text, "LPF way, 8 B words: g = -")) << chk.text;
    EXPECT_NE(nullptr, strstr(chk.text, "not physical")) << chk.text;
    std::string sum = capture(pm_print_summary, res);
    EXPECT_NE(std::string::npos, sum.find("WARNING: these figures are not fit to save")) << sum;
    EXPECT_NE(std::string::npos, sum.find("For better figures: more samples")) << sum;
    pm_results_free(&res);

    // one point of the 64-byte series 3x slower than the line: the fit misses it
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    pm_series *se = pm_find_series(&res, PM_LPF, -1, 64);
    ASSERT_NE(nullptr, se);
    for (size_t j = 0; j < se->npts; ++j)
        if (!se->pt[j].key && se->pt[j].x > 4)
            for (size_t k = 0; k < se->pt[j].n; ++k) se->pt[j].t[k] *= 3;
    pm_analyse(&res, 100);
    pm_check_fits(&res, &chk);
    EXPECT_GT(res.lpf[1].fit_factor, PM_FIT_FACTOR_MAX);
    EXPECT_GE(chk.refuse, 1) << chk.text;
    EXPECT_NE(nullptr, strstr(chk.text, "LPF way, 64 B words: a measured point is")) << chk.text;
    pm_results_free(&res);

    // T(n_max) of 1 KiB words all over the place: g's interval is too wide
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    se = pm_find_series(&res, PM_LPF, -1, 1024);
    ASSERT_NE(nullptr, se);
    for (size_t j = 0; j < se->npts; ++j)
        if (se->pt[j].key && j + 1 == se->npts)
            for (size_t k = 0; k < se->pt[j].n; ++k) se->pt[j].t[k] *= k % 2 ? 0.2 : 5;
    pm_analyse(&res, 100);
    pm_check_fits(&res, &chk);
    EXPECT_GE(chk.refuse, 1) << chk.text;
    EXPECT_NE(nullptr, strstr(chk.text, "LPF way, 1 KiB words: g = ")) << chk.text;
    EXPECT_NE(nullptr, strstr(chk.text, "is uncertain")) << chk.text;
    pm_results_free(&res);

    // a pattern's own fit with a negative g: a warning, no refusal
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    pm_analyse(&res, 100);
    res.pat[PAT_RING].fit.g = -0.36e-9;
    pm_check_fits(&res, &chk);
    EXPECT_EQ(0, chk.refuse) << chk.text;
    EXPECT_EQ(1, chk.warn) << chk.text;
    EXPECT_NE(nullptr, strstr(chk.text, "pattern ring")) << chk.text;
    pm_results_free(&res);
}

TEST(ProbeOutput, JsonIsValidAndComplete)
{
    pm_config cfg = small_config();
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    res.others_cpu = NAN;   // unknown values become null
    pm_analyse(&res, 50);
    std::string text = capture(pm_write_json, res);
    jsonc::Value doc;
    std::string err;
    ASSERT_TRUE(jsonc::Parser(text).parse(doc, err)) << err << "\n" << text.substr(0, 2000);
    ASSERT_EQ(jsonc::Value::Object, doc.kind);
    EXPECT_EQ("bspprobe", doc.get("tool")->str);
    EXPECT_EQ("pthread", doc.get("engine")->str);
    EXPECT_EQ(2, doc.get("p")->num);
    EXPECT_EQ(jsonc::Value::Null, doc.get("others_cpu_share")->kind);
    for (const char *key : { "r", "bspbench", "lpf", "as_suite", "copy_baseline", "compliance", "params_rows" })
        EXPECT_NE(nullptr, doc.get(key)) << key;
    const jsonc::Value *lpf = doc.get("lpf");
    ASSERT_EQ((size_t)PM_NWORDS, lpf->arr.size());
    for (const auto &w : lpf->arr) {
        EXPECT_GT(w.get("g_seconds_per_byte")->get("value")->num, 0);
        EXPECT_NE(nullptr, w.get("g_seconds_per_byte")->get("lo"));
        EXPECT_GT(w.get("points")->arr.size(), 3u);
        EXPECT_EQ((double)w.get("points")->arr[0].get("raw")->arr.size(),
                  w.get("points")->arr[0].get("samples")->num);
    }
    const jsonc::Value *comp = doc.get("compliance");
    ASSERT_EQ((size_t)PAT_COUNT, comp->arr.size());
    for (const auto &c : comp->arr) {
        EXPECT_EQ(jsonc::Value::String, c.get("pattern")->kind);
        EXPECT_NE(nullptr, c.get("fit")->get("r2"));
        EXPECT_NE(nullptr, c.get("ratio")->get("median"));
        EXPECT_EQ(jsonc::Value::Bool, c.get("affine")->kind);
        EXPECT_EQ(jsonc::Value::String, c.get("verdict")->kind);
        EXPECT_GT(c.get("points")->arr.size(), 5u);
    }
    EXPECT_EQ(5u, doc.get("as_suite")->get("tests")->arr.size());
    ASSERT_EQ((size_t)PM_NWORDS, doc.get("params_rows")->arr.size());
    EXPECT_EQ(8, doc.get("params_rows")->arr[0].get("msg_size")->num);

    // a part left out is left out of the JSON too
    pm_results_free(&res);
    cfg.parts = PM_PART_AS;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "mpi"));
    fill(res, 0);
    pm_analyse(&res, 20);
    text = capture(pm_write_json, res);
    ASSERT_TRUE(jsonc::Parser(text).parse(doc = jsonc::Value(), err)) << err;
    EXPECT_EQ(nullptr, doc.get("lpf"));
    EXPECT_EQ(nullptr, doc.get("compliance"));
    EXPECT_NE(nullptr, doc.get("as_suite"));
    EXPECT_EQ(0u, doc.get("params_rows")->arr.size());
    pm_results_free(&res);
}

TEST(ProbeOutput, JsonRejectsWhatItShould)
{
    // the checker itself: keeps the test above honest
    jsonc::Value v;
    std::string err;
    for (const char *bad : { "{", "[1,]", "{\"a\":1,}", "nan", "[1 2]", "{\"a\" 1}", "\"\\x\"",
                             "{\"a\":1,\"a\":2}", "01", "1.", "[] []" })
        EXPECT_FALSE(jsonc::Parser(bad).parse(v = jsonc::Value(), err)) << bad;
    EXPECT_TRUE(jsonc::Parser("{\"a\": [1, -2.5e-3, true, null, \"x\\n\"]}").parse(v = jsonc::Value(), err)) << err;
}

TEST(ProbeOutput, SummaryNamesEverything)
{
    pm_config cfg = small_config();
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    res.others_cpu = 0.5;   // a busy machine is said to be busy
    pm_analyse(&res, 50);
    std::string s = capture(pm_print_summary, res);
    for (const char *want : { "engine pthread, p = 2", "r, computation rate", "the bspbench way",
                              "the LPF way", "As suite", "Test 5", "Model compliance",
                              "Parameters for lpf_probe", "WARNING: the machine was busy" })
        EXPECT_NE(std::string::npos, s.find(want)) << want << "\n" << s;
    for (int pat = 0; pat < PAT_COUNT; ++pat)
        EXPECT_NE(std::string::npos, s.find(pm_pattern_name(pat)));
    pm_results_free(&res);
}

TEST(ProbeOutput, GnuplotFiles)
{
    pm_config cfg = small_config();
    pm_results res;
    ASSERT_EQ(0, pm_plan(&res, &cfg, 2, "pthread"));
    fill(res, 0.01);
    pm_analyse(&res, 20);
    char dir[] = "/tmp/probe_plot_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(dir));
    ASSERT_EQ(0, pm_write_plot_files(dir, &res));
    std::ifstream gp(std::string(dir) + "/probe.gp"), dat(std::string(dir) + "/probe.dat");
    std::stringstream g, d;
    g << gp.rdbuf();
    d << dat.rdbuf();
    std::string gs = g.str(), ds = d.str();
    EXPECT_NE(std::string::npos, gs.find("set terminal svg"));
    EXPECT_NE(std::string::npos, gs.find("set output 'probe.svg'"));
    EXPECT_NE(std::string::npos, gs.find("set output 'probe.png'"));
    EXPECT_NE(std::string::npos, gs.find("set logscale xy"));
    EXPECT_NE(std::string::npos, gs.find("multiplot"));
    // one data block per panel: patterns, bspbench, 4 LPF, As total exchange, copy
    size_t blocks = 0;
    for (size_t at = 0; (at = ds.find("\n\n\n", at)) != std::string::npos; ++at) ++blocks;
    EXPECT_EQ((size_t)PAT_COUNT + 1 + PM_NWORDS + 1 + 1, blocks);
    // each panel plots its own block
    for (size_t k = 0; k < (size_t)PAT_COUNT + 1 + PM_NWORDS + 1; ++k)
        EXPECT_NE(std::string::npos, gs.find("index " + std::to_string(k) + " using 1:2:3:4")) << k;
    for (const char *f : { "probe.gp", "probe.dat" }) unlink((std::string(dir) + "/" + f).c_str());
    rmdir(dir);
    pm_results_free(&res);
}

} // namespace
