// The PUB paper's programs on <pub.h> (examples/pub) against their
// sequential references: binary search on a search butterfly in its four
// forms (Program 1 bsp_send, Program 2 bsp_hpsend, Program 3 partitions,
// Program 3 + bsp_oblsync) for P = 1, 2, 4, 8 and 0, 1, 1000 queries per
// process (pub.md §14 items 19-22), XY-sort (Program 4) for P = 1, 4, 9, 16
// with distinct, duplicate and negative keys (item 23).
//
// On the MPI engine (bsprun --engine mpi -n N, rank 0 runs the tests) a run
// of P processes needs P ranks: cases with P > pub_maxprocs() are skipped
// there (bsprun sets LPF_MAX_PROCS = N).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <pub.h>

#include "pub_apps.h"

namespace {

bool on_mpi()
{
    const char *e = std::getenv("SUPERSTEP_ENGINE");
    return e && (std::string(e) == "mpi" || std::string(e) == "MPI");
}

#define SKIP_IF_TOO_MANY(P)                                                                    \
    do {                                                                                       \
        if (on_mpi() && (P) > pub_maxprocs())                                                  \
            GTEST_SKIP() << "P = " << (P) << " needs " << (P) << " MPI ranks, the job has "    \
                         << pub_maxprocs();                                                    \
    } while (0)

// ---- binary search --------------------------------------------------------------

struct BsCase {
    int form, P, n, m;
    bool dups;
};

void PrintTo(const BsCase &c, std::ostream *os)
{
    *os << pub_bs_form_name(c.form) << "_P" << c.P << "_n" << c.n << "_m" << c.m << (c.dups ? "_dups" : "");
}

class PubBsearch : public ::testing::TestWithParam<BsCase> {};

TEST_P(PubBsearch, SameAnswersAsSequentialSearch)
{
    const BsCase c = GetParam();
    SKIP_IF_TOO_MANY(c.P);
    const int N = c.n * c.P, M = c.m * c.P;
    std::vector<int> table(N), q(M + 1), out(M + 1, -12345), ref(M + 1);
    for (int i = 0; i < N; i++)
        table[i] = c.dups ? pub_bs_query(7, 10, i, -5) : pub_bs_table_entry(7, i, -N);
    std::sort(table.begin(), table.end());
    const int lo = table[0] - 3, hi = table[N - 1] + 3;
    for (int i = 0; i < M; i++)  // below, inside and above the table
        q[i] = lo + (int)((unsigned)pub_bs_query(8, hi - lo, i, 2) % (unsigned)(hi - lo + 1));
    ASSERT_EQ(0, pub_bsearch(c.P, c.form, table.data(), c.n, q.data(), c.m, out.data()));
    pub_bs_seq(table.data(), N, q.data(), M, ref.data());
    for (int i = 0; i < M; i++)
        ASSERT_EQ(ref[i], out[i]) << "query " << i << " = " << q[i];
}

std::vector<BsCase> bs_cases()
{
    std::vector<BsCase> v;
    for (int form = PUB_BS_SEND; form <= PUB_BS_OBLSYNC; form++) {
#ifdef PUB_APPS_SMALL
        v.push_back({ form, 4, 50, 100, false });
#else
        for (int P : { 1, 2, 4, 8 }) {
            for (int m : { 0, 1, 1000 })
                v.push_back({ form, P, 500, m, false });
            v.push_back({ form, P, 1, 37, false });   // one key per process
            v.push_back({ form, P, 64, 200, true });  // duplicates across blocks
        }
#endif
    }
    return v;
}

INSTANTIATE_TEST_SUITE_P(Forms, PubBsearch, ::testing::ValuesIn(bs_cases()));

TEST(PubBsearchArgs, BadArguments)
{
    int t[4] = { 1, 2, 3, 4 }, o[4];
    EXPECT_EQ(-2, pub_bsearch(3, PUB_BS_SEND, t, 1, t, 1, o));  // not a power of two
    EXPECT_EQ(-2, pub_bsearch(0, PUB_BS_SEND, t, 1, t, 1, o));
    EXPECT_EQ(-2, pub_bsearch(2, 9, t, 1, t, 1, o));
    EXPECT_EQ(-2, pub_bsearch(2, PUB_BS_HPSEND, t, 0, t, 1, o));  // n < 1
    EXPECT_EQ(-2, pub_bsearch(2, PUB_BS_HPSEND, t, 2, nullptr, 1, o));
    EXPECT_EQ(PUB_BS_PARTITION, pub_bs_form_of("3a"));
    EXPECT_EQ(PUB_BS_OBLSYNC, pub_bs_form_of("oblsync"));
    EXPECT_EQ(-1, pub_bs_form_of("4"));
}

#ifndef PUB_APPS_SMALL
// The SPMD-level routine inside the caller's own run: after it, the root
// object's pids are those of before (the partitions are done), its message
// buffer works, and a child object of the caller's can run it too.
struct SpmdJob {
    int P;
    int ok[16];
};

void spmd_inside(pbsp bsp, void *arg)
{
    SpmdJob *job = static_cast<SpmdJob *>(arg);  // pid 0 only
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    bool good = true;
    for (int form = PUB_BS_SEND; form <= PUB_BS_OBLSYNC; form++) {
        // keys 10*(4s + i), queries 7*(3s + i) + 1 (all below 40p)
        int key[4], qs[3], out[3];
        for (int i = 0; i < 4; i++)
            key[i] = 10 * (4 * s + i);
        for (int i = 0; i < 3; i++)
            qs[i] = 7 * (3 * s + i) + 1;
        good = good && pub_bsearch_spmd(bsp, form, key, 4, qs, 3, out) == 0;
        for (int i = 0; i < 3; i++)
            good = good && out[i] == (qs[i] + 9) / 10;
        good = good && bsp_pid(bsp) == s && bsp_nprocs(bsp) == p;
        // and in the lower half of a partition (its own numbering)
        if (p >= 2) {
            tbsp sub;
            int part[2] = { p / 2, p };
            bsp_partition(bsp, &sub, 2, part);
            const int ss = bsp_pid(&sub), sp = bsp_nprocs(&sub);
            for (int i = 0; i < 4; i++)
                key[i] = 10 * (4 * ss + i);
            for (int i = 0; i < 3; i++)
                qs[i] = 7 * (3 * ss + i) + 1;
            good = good && pub_bsearch_spmd(&sub, form, key, 4, qs, 3, out) == 0;
            for (int i = 0; i < 3; i++)
                good = good && out[i] == (qs[i] + 9) / 10;
            good = good && bsp_pid(&sub) == ss && bsp_nprocs(&sub) == sp;
            bsp_done(&sub);
        }
        good = good && bsp_pid(bsp) == s;
    }
    // a ring message on the root still works
    bsp_send(bsp, (s + 1) % p, &s, sizeof s);
    bsp_sync(bsp);
    good = good && bsp_nmsgs(bsp) == 1 &&
           *(int *)bspmsg_data(bsp_getmsg(bsp, 0)) == (s + p - 1) % p;
    const int verdict = good ? 1 : 0;
    bsp_send(bsp, 0, &verdict, sizeof verdict);
    bsp_sync(bsp);
    if (s == 0)
        for (int q = 0; q < p; q++)
            job->ok[q] = *(int *)bspmsg_data(bsp_findmsg(bsp, q, 0));
}

TEST(PubBsearchSpmd, InsideTheCallersRunAndInAPartition)
{
    for (int P : { 1, 2, 4, 8 }) {
        if (on_mpi() && P > pub_maxprocs())
            continue;
        SpmdJob job{};
        job.P = P;
        pub_exec(P, spmd_inside, &job);
        for (int q = 0; q < P; q++)
            EXPECT_EQ(1, job.ok[q]) << "P = " << P << ", process " << q;
    }
}
#endif

// ---- XY-sort ----------------------------------------------------------------------

struct XyCase {
    int P;
    int kind;  // 0 distinct, 1 duplicates, 2 negative, 3 all equal
};

void PrintTo(const XyCase &c, std::ostream *os)
{
    static const char *k[] = { "distinct", "dups", "negative", "equal" };
    *os << "P" << c.P << "_" << k[c.kind];
}

class PubXySort : public ::testing::TestWithParam<XyCase> {};

TEST_P(PubXySort, SortedAsSequentialSort)
{
    const XyCase c = GetParam();
    SKIP_IF_TOO_MANY(c.P);
    const int s = pub_isqrt(c.P);
    std::vector<int> keys(s), out(s, -777), ref(s);
    for (int i = 0; i < s; i++) {
        const unsigned h = (unsigned)(i * 2654435761u) >> 7;
        switch (c.kind) {
        case 0: keys[i] = (int)(h % 100000) * s + i; break;           // distinct
        case 1: keys[i] = (int)(h % 2); break;                         // duplicates
        case 2: keys[i] = -(int)(h % 50) - 1 + (i % 2 ? 25 : 0); break;  // negative and mixed
        default: keys[i] = 42; break;
        }
    }
    if (c.kind == 0 && s > 1)
        std::reverse(keys.begin(), keys.end());
    ASSERT_EQ(0, pub_xy_sort(c.P, keys.data(), out.data()));
    pub_xy_seq(keys.data(), s, ref.data());
    std::vector<int> sorted(keys);
    std::stable_sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, ref);
    EXPECT_EQ(ref, out);
}

std::vector<XyCase> xy_cases()
{
    std::vector<XyCase> v;
#ifdef PUB_APPS_SMALL
    for (int kind = 0; kind < 4; kind++)
        v.push_back({ 4, kind });
#else
    for (int P : { 1, 4, 9, 16 })
        for (int kind = 0; kind < 4; kind++)
            v.push_back({ P, kind });
#endif
    return v;
}

INSTANTIATE_TEST_SUITE_P(Keys, PubXySort, ::testing::ValuesIn(xy_cases()));

TEST(PubXySortArgs, BadArguments)
{
    int k[4] = { 3, 1, 2, 0 }, o[4];
    EXPECT_EQ(-2, pub_xy_sort(2, k, o));
    EXPECT_EQ(-2, pub_xy_sort(8, k, o));
    EXPECT_EQ(-2, pub_xy_sort(0, k, o));
    EXPECT_EQ(-2, pub_xy_sort(4, nullptr, o));
    EXPECT_EQ(3, pub_isqrt(9));
    EXPECT_EQ(-1, pub_isqrt(10));
}

}  // namespace
