// PUB objects: partitions, dup, done (pub.md §5; checklist items 21, 22,
// 24-31, 35 (what stays allowed), 38, 39, 46, 47 part, 69).
#include "pub/pub_test.hpp"

#include <string>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace pubtest;


TEST(PubObjects, Item21_22_Program3Shape)
{
    for (int obl = 0; obl < 2; ++obl) {
        for (int P : { 1, 2, 4, 8 }) {
            std::vector<int> answer(P, -1), pid_after(P, -1);
            run(P, [&](pbsp bsp) {
                int s = bsp_pid(bsp);
                // every process searches the key s; owner of key k is k.
                // Recursion: halves by partition; at each level the answer
                // travels with a message inside the level's group.
                int p = bsp_nprocs(bsp);
                pbsp cur = bsp;
                std::vector<tbsp> subs(8);
                int depth = 0, base = 0;
                while (bsp_nprocs(cur) > 1) {
                    int q = bsp_nprocs(cur);
                    int part[2] = { q / 2, q };
                    int me = bsp_pid(cur);
                    bsp_partition(cur, &subs[depth], 2, part);
                    if (me >= q / 2) base += q / 2;
                    cur = &subs[depth++];
                    // a ring message inside the child, checked by the receiver
                    int v = base + bsp_pid(cur);
                    bsp_send(cur, (bsp_pid(cur) + 1) % bsp_nprocs(cur), &v, sizeof v);
                    if (obl) bsp_oblsync(cur, 1);
                    else bsp_sync(cur);
                    int n = bsp_nprocs(cur), c = bsp_pid(cur);
                    EXPECT_EQ(msg_val<int>(bsp_getmsg(cur, 0)), base + (c + n - 1) % n);
                }
                answer[s] = base;
                while (depth > 0) bsp_done(&subs[--depth]);
                pid_after[s] = bsp_pid(bsp);
                (void)p;
                bsp_sync(bsp);
            });
            for (int s = 0; s < P; ++s) {
                EXPECT_EQ(answer[s], s);
                EXPECT_EQ(pid_after[s], s);
            }
        }
    }
}

TEST(PubObjects, Item24_25_Partitions)
{
    std::vector<int> pid4(8), np4(8), back(8), pidu(8), npu(8), pid1(8), np1(8);
    run(8, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        tbsp sub;
        int part[2] = { 4, 8 };
        bsp_partition(bsp, &sub, 2, part);
        pid4[s] = bsp_pid(&sub);
        np4[s] = bsp_nprocs(&sub);
        bsp_done(&sub);
        back[s] = bsp_pid(bsp);
        int part3[3] = { 1, 4, 8 };
        bsp_partition(bsp, &sub, 3, part3);
        part3[0] = 2;   // read at the call only
        pidu[s] = bsp_pid(&sub);
        npu[s] = bsp_nprocs(&sub);
        bsp_sync(&sub);
        bsp_done(&sub);
        int all[1] = { 8 };
        bsp_partition(bsp, &sub, 1, all);
        pid1[s] = bsp_pid(&sub);
        np1[s] = bsp_nprocs(&sub);
        bsp_sync(&sub);
        bsp_done(&sub);
        bsp_sync(bsp);
    });
    for (int s = 0; s < 8; ++s) {
        EXPECT_EQ(pid4[s], s % 4);
        EXPECT_EQ(np4[s], 4);
        EXPECT_EQ(back[s], s);
        EXPECT_EQ(npu[s], s < 1 ? 1 : s < 4 ? 3 : 4);
        EXPECT_EQ(pidu[s], s < 1 ? s : s < 4 ? s - 1 : s - 4);
        EXPECT_EQ(pid1[s], s);
        EXPECT_EQ(np1[s], 8);
    }
}

TEST(PubObjects, Item26_ThreeDeep)
{
    std::vector<int> ok(8, 0);
    run(8, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        tbsp lv[3];
        pbsp cur = bsp;
        for (int d = 0; d < 3; ++d) {
            int q = bsp_nprocs(cur);
            int part[2] = { q / 2, q };
            bsp_partition(cur, &lv[d], 2, part);
            cur = &lv[d];
            int size = 8 >> (d + 1);
            EXPECT_EQ(bsp_nprocs(cur), size);
            EXPECT_EQ(bsp_pid(cur), s % size);
            int v = s;
            bsp_send(cur, (bsp_pid(cur) + 1) % size, &v, sizeof v);
            bsp_sync(cur);
            ASSERT_EQ(bsp_nmsgs(cur), 1);
            int from = msg_val<int>(bsp_getmsg(cur, 0));
            EXPECT_EQ(from / size, s / size);   // stays in the group
        }
        for (int d = 2; d >= 0; --d) {
            bsp_done(&lv[d]);
            pbsp up = d == 0 ? bsp : &lv[d - 1];
            EXPECT_EQ(bsp_nprocs(up), 8 >> d);
            EXPECT_EQ(bsp_pid(up), s % (8 >> d));
            bsp_sync(up);
        }
        ok[s] = 1;
        bsp_sync(bsp);
    });
    for (int s = 0; s < 8; ++s) EXPECT_EQ(ok[s], 1);
}

TEST(PubObjects, Item27_Independence)
{
    // the first group's 100 syncs end while the second group has not synced
    std::atomic<int> first_done{0};
    std::vector<int> waited_ok(4, 0);
    run(4, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        tbsp sub;
        int part[2] = { 2, 4 };
        bsp_partition(bsp, &sub, 2, part);
        if (s < 2) {
            for (int i = 0; i < 100; ++i) bsp_sync(&sub);
            first_done.fetch_add(1);
        } else {
            waited_ok[s] = wait_flag(first_done) && first_done.load() >= 1;
            bsp_sync(&sub);
        }
        bsp_done(&sub);
        bsp_sync(bsp);
        // groups syncing 3 and 7 times
        bsp_partition(bsp, &sub, 2, part);
        for (int i = 0; i < (s < 2 ? 3 : 7); ++i) bsp_sync(&sub);
        bsp_done(&sub);
        bsp_sync(bsp);
    });
    EXPECT_EQ(first_done.load(), 2);
    EXPECT_EQ(waited_ok[2], 1);
    EXPECT_EQ(waited_ok[3], 1);
}

TEST(PubObjects, Item28_NoCommunication)
{
    // process 0 partitions and syncs its singleton group before process 1
    // even starts to partition
    std::atomic<int> done0{0};
    int waited_ok = 0;
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        if (s == 1) waited_ok = wait_flag(done0);
        tbsp sub;
        int part[2] = { 1, 2 };
        bsp_partition(bsp, &sub, 2, part);
        for (int i = 0; i < 10; ++i) bsp_sync(&sub);
        bsp_done(&sub);
        if (s == 0) done0.store(1);
        bsp_sync(bsp);
    });
    EXPECT_EQ(waited_ok, 1);
}

TEST(PubObjects, Item29_ParentRequestsSurvive)
{
    for (int P : { 1, 2, 4 }) {
        std::vector<int> ok(P, 0);
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int reg[4] = { 0, 0, 0, 0 }, src = 0;
            int later[2] = { 0, 0 };
            bsp_push_reg(bsp, reg, sizeof reg);
            bsp_sync(bsp);
            reg[3] = 500 + s;
            bsp_sync(bsp);
            // parent requests of one superstep
            int v = 10 + s, hv = 20 + s, pv = 30 + s, gv = 40 + s;
            bsp_send(bsp, (s + 1) % p, &v, sizeof v);
            bsp_hpsend(bsp, (s + 1) % p, &hv, sizeof hv);
            bsp_put(bsp, (s + 1) % p, &pv, reg, 0, sizeof pv);
            int got = -1;
            bsp_get(bsp, (s + 1) % p, reg, 3 * sizeof(int), &got, sizeof got);
            if (s == 0) bsp_gsend(bsp, 0, p - 1, &gv, sizeof gv);
            int sum = -1;
            bsp_greduce(bsp, 0, p - 1, &s, &sum, 1, bspop_addint, nullptr);
            bsp_push_reg(bsp, later, sizeof later);
            src = 1;
            // a child with two supersteps
            tbsp sub;
            bsp_dup(bsp, &sub);
            int cv = 99;
            bsp_send(&sub, bsp_pid(&sub), &cv, sizeof cv);
            bsp_sync(&sub);
            EXPECT_EQ(bsp_nmsgs(&sub), 1);
            EXPECT_EQ(msg_val<int>(bsp_getmsg(&sub, 0)), 99);
            bsp_sync(&sub);
            EXPECT_EQ(bsp_nmsgs(&sub), 0);
            bsp_done(&sub);
            bsp_sync(bsp);
            int left = (s + p - 1) % p;
            int n = bsp_nmsgs(bsp);
            EXPECT_EQ(n, 3);
            // from left: v then hv (and the gsend copy from 0 in issue order)
            std::vector<int> from_left;
            for (int i = 0; pbspmsg m = bsp_findmsg(bsp, left, i); ++i)
                from_left.push_back(msg_val<int>(m));
            std::vector<int> want = { 10 + left, 20 + left };
            if (left == 0) want.push_back(40);
            if (p == 1) want = { 10, 20, 40 };
            EXPECT_EQ(from_left, want);
            EXPECT_EQ(reg[0], 30 + left);
            EXPECT_EQ(got, 500 + (s + 1) % p);
            if (s == p - 1) { EXPECT_EQ(sum, p * (p - 1) / 2); }
            else { EXPECT_EQ(sum, -1); }
            // the registration pushed before the child serves now
            int w = 7;
            bsp_put(bsp, (s + 1) % p, &w, later, sizeof(int), sizeof w);
            bsp_sync(bsp);
            EXPECT_EQ(later[1], 7);
            (void)src;
            ok[s] = 1;
            bsp_sync(bsp);
        });
        for (int s = 0; s < P; ++s) EXPECT_EQ(ok[s], 1);
    }
}

TEST(PubObjects, Item30_ParentBufferReadable)
{
    run(4, [&](pbsp bsp) {
        int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
        for (int d = 0; d < p; ++d) bsp_send(bsp, d, &s, sizeof s);
        bsp_sync(bsp);
        std::vector<pbspmsg> h;
        std::vector<void *> data;
        for (int i = 0; i < bsp_nmsgs(bsp); ++i) {
            h.push_back(bsp_getmsg(bsp, i));
            data.push_back(bspmsg_data(h.back()));
        }
        tbsp sub;
        int part[2] = { 2, 4 };
        bsp_partition(bsp, &sub, 2, part);
        for (int t = 0; t < 3; ++t) {
            for (int d = 0; d < 2; ++d) bsp_send(&sub, d, &t, sizeof t);
            bsp_sync(&sub);
            ASSERT_EQ(bsp_nmsgs(bsp), p);
            for (int i = 0; i < p; ++i) {
                EXPECT_EQ(bsp_getmsg(bsp, i), h[i]);
                EXPECT_EQ(bspmsg_data(h[i]), data[i]);
                EXPECT_EQ(msg_val<int>(h[i]), i);
            }
        }
        bsp_done(&sub);
        bsp_sync(bsp);
    });
}

TEST(PubObjects, Item31_CollectivesInChild)
{
    run(8, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        tbsp sub;
        int part[2] = { 3, 8 };
        bsp_partition(bsp, &sub, 2, part);
        int q = bsp_nprocs(&sub), c = bsp_pid(&sub);
        int x = s, tot = -1;
        bsp_gallreduce(&sub, 0, q - 1, &x, &tot, 1, bspop_addint, nullptr);
        if (c == 0) bsp_gsend(&sub, 0, q - 1, &s, sizeof s);
        int reg = -1;
        bsp_push_reg(&sub, &reg, sizeof reg);
        bsp_sync(&sub);
        int base = s < 3 ? 0 : 3;
        int want = 0;
        for (int i = 0; i < q; ++i) want += base + i;
        EXPECT_EQ(tot, want);
        ASSERT_EQ(bsp_nmsgs(&sub), 1);
        EXPECT_EQ(msg_val<int>(bsp_getmsg(&sub, 0)), base);
        EXPECT_EQ(bspmsg_src(bsp_getmsg(&sub, 0)), 0);
        bsp_put(&sub, (c + 1) % q, &s, &reg, 0, sizeof s);
        bsp_sync(&sub);
        EXPECT_EQ(reg, base + (c + q - 1) % q);
        bsp_pop_reg(&sub, &reg);
        bsp_sync(&sub);
        bsp_done(&sub);
        bsp_sync(bsp);
    });
}

TEST(PubObjects, Item38_DupIsolation)
{
    for (int P : { 1, 2, 4 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int v = 1000 + s;
            bsp_send(bsp, (s + 1) % p, &v, sizeof v);
            tbsp nb;
            bsp_dup(bsp, &nb);
            EXPECT_EQ(bsp_pid(&nb), s);
            EXPECT_EQ(bsp_nprocs(&nb), p);
            for (int t = 0; t < 3; ++t) {
                int w = t;
                bsp_send(&nb, (s + p - 1) % p, &w, sizeof w);
                bsp_sync(&nb);
                ASSERT_EQ(bsp_nmsgs(&nb), 1);
                EXPECT_EQ(msg_val<int>(bsp_getmsg(&nb, 0)), t);
            }
            bsp_done(&nb);
            bsp_sync(bsp);
            ASSERT_EQ(bsp_nmsgs(bsp), 1);
            EXPECT_EQ(msg_val<int>(bsp_getmsg(bsp, 0)), 1000 + (s + p - 1) % p);
            bsp_sync(bsp);
        });
    }
}

TEST(PubObjects, Item39_DupOfDupOfPartition)
{
    run(8, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        tbsp a, b, c;
        int part[2] = { 5, 8 };
        bsp_partition(bsp, &a, 2, part);
        bsp_dup(&a, &b);
        bsp_dup(&b, &c);
        EXPECT_EQ(bsp_pid(&c), bsp_pid(&a));
        EXPECT_EQ(bsp_nprocs(&c), s < 5 ? 5 : 3);
        int q = bsp_nprocs(&c);
        bsp_send(&c, (bsp_pid(&c) + 1) % q, &s, sizeof s);
        bsp_sync(&c);
        ASSERT_EQ(bsp_nmsgs(&c), 1);
        int base = s < 5 ? 0 : 5;
        EXPECT_EQ(msg_val<int>(bsp_getmsg(&c, 0)), base + (bsp_pid(&c) + q - 1) % q);
        bsp_done(&c);
        bsp_done(&b);
        bsp_done(&a);
        bsp_sync(bsp);
    });
}

TEST(PubObjects, Item46_MessageForLaterChild)
{
    std::vector<int> got(2, -1), parent_n(2, -1);
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        tbsp sub;
        if (s == 0) {
            bsp_dup(bsp, &sub);
            int v = 5;
            bsp_send(&sub, 1, &v, sizeof v);
            bsp_oblsync(&sub, 0);
            bsp_done(&sub);
            int w = 6;
            bsp_send(bsp, 1, &w, sizeof w);
            bsp_oblsync(bsp, 0);
        } else {
            sleep_s(0.2);   // the child message arrives before the child exists
            bsp_dup(bsp, &sub);
            bsp_oblsync(&sub, 1);
            got[1] = msg_val<int>(bsp_getmsg(&sub, 0));
            bsp_done(&sub);
            bsp_oblsync(bsp, 1);
            parent_n[1] = bsp_nmsgs(bsp);
            got[0] = msg_val<int>(bsp_getmsg(bsp, 0));
        }
        bsp_sync(bsp);
    });
    EXPECT_EQ(got[1], 5);
    EXPECT_EQ(got[0], 6);
    EXPECT_EQ(parent_n[1], 1);
}

TEST(PubObjects, Item35_ParentEnquiriesWhileChildLives)
{
    // the errors of item 35 are in errors.cpp (parent_send, parent_sync,
    // parent_push, parent_part); here what stays allowed on the parent
    std::vector<int> ok(4, 0);
    run(4, [&](pbsp bsp) {
        int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
        bsp_send(bsp, (s + 1) % p, &s, sizeof s);
        bsp_sync(bsp);
        tbsp sub;
        int part[2] = { 1, 4 };
        bsp_partition(bsp, &sub, 2, part);
        bsp_sync(&sub);
        int left = (s + p - 1) % p;
        pbspmsg m = bsp_getmsg(bsp, 0);
        ok[s] = bsp_pid(bsp) == s && bsp_nprocs(bsp) == 4 && bsp_nmsgs(bsp) == 1
                && bsp_findmsg(bsp, left, 0) == m && bsp_findmsg(bsp, left, 1) == nullptr
                && bspmsg_src(m) == left && bspmsg_size(m) == sizeof(int)
                && msg_val<int>(m) == left;
        bsp_done(&sub);
        bsp_sync(bsp);
    });
    for (int s = 0; s < 4; ++s) EXPECT_EQ(ok[s], 1) << s;
}

// ---- item 69: E3 scopes -------------------------------------------------

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
# define PUB_TEST_SANITIZED 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#  define PUB_TEST_SANITIZED 1
# endif
#endif
#ifndef PUB_TEST_SANITIZED
# define PUB_TEST_SANITIZED 0
#endif

TEST(PubObjects, Item69_RegistrationHistories)
{
    // group {0,1} pushes and pops 3 registrations, {2,3} none; afterwards
    // registrations pushed on the parent and on new children serve puts
    std::vector<int> ok(4, 0);
    run(4, [&](pbsp bsp) {
        int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
        tbsp sub;
        int part[2] = { 2, 4 };
        bsp_partition(bsp, &sub, 2, part);
        if (s < 2) {
            int a[3] = { 0 }, b[5] = { 0 }, c[7] = { 0 };
            bsp_push_reg(&sub, a, sizeof a);
            bsp_push_reg(&sub, b, sizeof b);
            bsp_push_reg(&sub, c, sizeof c);
            bsp_sync(&sub);
            int v = 40 + s;
            bsp_put(&sub, 1 - bsp_pid(&sub), &v, b, 4 * sizeof(int), sizeof v);
            bsp_pop_reg(&sub, c);
            bsp_pop_reg(&sub, a);
            bsp_pop_reg(&sub, b);
            bsp_sync(&sub);
            EXPECT_EQ(b[4], 40 + (1 - s));
        }
        bsp_done(&sub);
        int good = 1;
        // on the parent
        int x[4] = { -1, -1, -1, -1 };
        bsp_push_reg(bsp, x, sizeof x);
        bsp_sync(bsp);
        bsp_put(bsp, (s + 1) % p, &s, x, 2 * sizeof(int), sizeof s);
        bsp_sync(bsp);
        good &= x[2] == (s + p - 1) % p;
        // on a new partition child and a new dup
        for (int k = 0; k < 2; ++k) {
            int part2[2] = { 1, 4 };
            if (k == 0) bsp_partition(bsp, &sub, 2, part2);
            else bsp_dup(bsp, &sub);
            int q = bsp_nprocs(&sub), c = bsp_pid(&sub);
            int y[3] = { -1, -1, -1 };
            bsp_push_reg(&sub, y, sizeof y);
            bsp_sync(&sub);
            int v = 100 * k + s;
            bsp_put(&sub, (c + 1) % q, &v, y, sizeof(int), sizeof v);
            // the parent's registration is still there below the child's
            bsp_sync(&sub);
            int want = 100 * k + (s - c) + (c + q - 1) % q;
            good &= y[1] == want;
            bsp_pop_reg(&sub, y);
            bsp_sync(&sub);
            bsp_done(&sub);
        }
        // the parent's registration serves again after the children
        int w = 7 + s;
        bsp_put(bsp, (s + p - 1) % p, &w, x, 0, sizeof w);
        bsp_sync(bsp);
        good &= x[0] == 7 + (s + 1) % p;
        bsp_pop_reg(bsp, x);
        bsp_sync(bsp);
        ok[s] = good;
    });
    for (int s = 0; s < 4; ++s) EXPECT_EQ(ok[s], 1) << s;
}

namespace {

double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// the fastest of 20 partition/done pairs
double min_pair(pbsp bsp)
{
    double best = 1e9;
    int part[1] = { bsp_nprocs(bsp) };
    for (int i = 0; i < 20; ++i) {
        tbsp sub;
        double t0 = now_s();
        bsp_partition(bsp, &sub, 1, part);
        bsp_done(&sub);
        best = std::min(best, now_s() - t0);
    }
    return best;
}

} // namespace

TEST(PubObjects, Item69_PartitionWithPendingIsConstant)
{
    // a partition with 100000 sends pending on the parent takes no longer
    // than one with none: E3 sets the requests aside in O(1)
    const int N = 100000;
    std::vector<double> none(2), pending(2);
    std::vector<int> got(2, -1);
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        none[s] = min_pair(bsp);
        for (int i = 0; i < N; ++i) bsp_send(bsp, s, &i, sizeof i);
        pending[s] = min_pair(bsp);
        bsp_sync(bsp);
        if (bsp_nmsgs(bsp) == N) got[s] = msg_val<int>(bsp_getmsg(bsp, N - 1));
    });
    std::printf("item 69: partition/done %.2f us with none pending, %.2f us with %d\n",
                none[0] * 1e6, pending[0] * 1e6, N);
    for (int s = 0; s < 2; ++s) {
        EXPECT_EQ(got[s], N - 1);
        // times are printed, not asserted (timings belong in bench/pub)
        RecordProperty("partition_done_none_pending_us_p" + std::to_string(s), std::to_string(none[s] * 1e6));
        RecordProperty("partition_done_pending_us_p" + std::to_string(s), std::to_string(pending[s] * 1e6));
    }
}

TEST(PubObjects, Item69_ManyPartitionsMemoryFlat)
{
    // 100000 partition/done pairs (and some dups, some child supersteps):
    // time per pair bounded, memory flat
    const int N = 100000, WARM = 2000;
    struct rusage ru;
    long rss0 = 0, rss1 = 0;
    size_t heap0 = 0, heap1 = 0;
    double secs = 0;
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp), p = bsp_nprocs(bsp);
        auto cycles = [&](int n) {
            int part[2] = { 1, p };
            for (int i = 0; i < n; ++i) {
                tbsp sub;
                if (i % 2) bsp_partition(bsp, &sub, 2, part);
                else bsp_dup(bsp, &sub);
                if (i % 1000 == 0) {
                    bsp_send(&sub, 0, &i, sizeof i);
                    bsp_sync(&sub);
                }
                bsp_done(&sub);
            }
        };
        cycles(WARM);
        bsp_sync(bsp);
        if (s == 0) {
            getrusage(RUSAGE_SELF, &ru);
            rss0 = ru.ru_maxrss;
            heap0 = mallinfo2().uordblks;
        }
        bsp_sync(bsp);
        double t0 = now_s();
        cycles(N);
        double t1 = now_s();
        bsp_sync(bsp);
        if (s == 0) {
            getrusage(RUSAGE_SELF, &ru);
            rss1 = ru.ru_maxrss;
            heap1 = mallinfo2().uordblks;
            secs = t1 - t0;
        }
        bsp_sync(bsp);
    });
    double per_pair = secs / N;
    std::printf("item 69: %.2f us per partition/done pair, maxrss %ld -> %ld KiB, heap %zu -> %zu\n",
                per_pair * 1e6, rss0, rss1, heap0, heap1);
    RecordProperty("partition_done_pair_us", std::to_string(per_pair * 1e6));   // printed, not asserted
    if (!PUB_TEST_SANITIZED) {
        EXPECT_LT(rss1 - rss0, 4096) << "maxrss grew by " << rss1 - rss0 << " KiB";
        EXPECT_LT((long long)heap1 - (long long)heap0, 1 << 20)
                << "heap in use grew by " << (long long)heap1 - (long long)heap0 << " bytes";
    }
}
