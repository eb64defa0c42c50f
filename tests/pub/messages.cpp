// PUB runs, message passing and the message buffer (pub.md §4, §6, §7;
// checklist items 5, 6, 8, 9, 12-17, 19, 20, 42, 43, 45, 48, 70).
#include "pub/pub_test.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <pthread.h>
#include <stdalign.h>
#include <vector>

using namespace pubtest;

namespace {

std::vector<int> g_pid, g_np, g_gotarg;
std::vector<pthread_t> g_thr;
int g_arg = 7;

void item05_spmd(pbsp bsp, void *arg)
{
    int s = bsp_pid(bsp);
    g_pid[s] = s;
    g_np[s] = bsp_nprocs(bsp);
    g_gotarg[s] = arg == &g_arg ? 1 : arg == nullptr ? 0 : 2;
    g_thr[s] = pthread_self();
    bsp_sync(bsp);
}

} // namespace

TEST(PubRuns, Item05_PidsArgCallerThread)
{
    for (int P : procs()) {
        g_pid.assign(P, -1);
        g_np.assign(P, -1);
        g_gotarg.assign(P, -1);
        g_thr.assign(P, pthread_t());
        pub_exec(P, item05_spmd, &g_arg);
        for (int s = 0; s < P; ++s) {
            EXPECT_EQ(g_pid[s], s);
            EXPECT_EQ(g_np[s], P);
            EXPECT_EQ(g_gotarg[s], s == 0 ? 1 : 0) << "P " << P << " pid " << s;
        }
        EXPECT_TRUE(pthread_equal(g_thr[0], pthread_self()));
    }
}

TEST(PubRuns, Item06_MaxprocsOversubscribeTwice)
{
    int m = pub_maxprocs();
    ASSERT_GE(m, 1);
    for (int rep = 0; rep < 2; ++rep) {
        int P = 2 * m;
        std::vector<int> seen(P, 0), inside(P, 0);
        run(P, [&](pbsp bsp) {
            int s = bsp_pid(bsp);
            seen[s]++;
            inside[s] = pub_maxprocs();
            bsp_sync(bsp);
        });
        for (int s = 0; s < P; ++s) {
            EXPECT_EQ(seen[s], 1);
            EXPECT_EQ(inside[s], m);
        }
    }
}

TEST(PubRuns, Item08_MinimalProgram)
{
    for (int P : { 1, 2, 5 }) {
        std::vector<int> seed(P, -1), val(P, -1), src(P, -1);
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp), left = (s + p - 1) % p;
            int arg = 42;
            if (s == 0) bsp_gsend(bsp, 0, p - 1, &arg, sizeof(int));
            bsp_send(bsp, (s + 1) % p, &s, sizeof s);
            bsp_oblsync(bsp, 2);
            seed[s] = *(int *)bspmsg_data(bsp_findmsg(bsp, 0, 0));
            pbspmsg m = bsp_findmsg(bsp, left, left == 0 ? 1 : 0);
            val[s] = *(int *)bspmsg_data(m);
            src[s] = bspmsg_src(m);
            bsp_sync(bsp);
        });
        for (int s = 0; s < P; ++s) {
            EXPECT_EQ(seed[s], 42);
            EXPECT_EQ(val[s], (s + P - 1) % P);
            EXPECT_EQ(src[s], (s + P - 1) % P);
        }
    }
}

TEST(PubRuns, Item09_Time)
{
    run(3, [&](pbsp bsp) {
        double t0 = bsp_time();
        EXPECT_GT(t0, 0.0);
        double last = t0;
        for (int i = 0; i < 1000; ++i) {
            double t = bsp_time();
            EXPECT_GE(t, last);
            last = t;
        }
        bsp_sync(bsp);
    });
}

TEST(PubMessages, Item12_Ring)
{
    for (int P : procs()) {
        std::vector<int> ok(P, 0);
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int v = 100 + s;
            bsp_send(bsp, (s + 1) % p, &v, sizeof v);
            bsp_sync(bsp);
            EXPECT_EQ(bsp_nmsgs(bsp), 1);
            pbspmsg m = bsp_getmsg(bsp, 0);
            int left = (s + p - 1) % p;
            EXPECT_EQ(bspmsg_src(m), left);
            EXPECT_EQ(bspmsg_size(m), 4u);
            EXPECT_EQ(msg_val<int>(m), 100 + left);
            ok[s] = 1;
            bsp_sync(bsp);
        });
        for (int s = 0; s < P; ++s) EXPECT_EQ(ok[s], 1);
    }
}

TEST(PubMessages, Item13_BufferedAndBigHpsend)
{
    const size_t big = (size_t)1 << 20;
    for (int P : { 1, 2, 4 }) {
        std::vector<std::vector<unsigned char>> bufs(P, std::vector<unsigned char>(big));
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int v = s;
            bsp_send(bsp, (s + 1) % p, &v, sizeof v);
            v = -1;   // buffered: no effect
            for (size_t i = 0; i < big; ++i) bufs[s][i] = (unsigned char)(i * 7 + s);
            bsp_hpsend(bsp, (s + 1) % p, bufs[s].data(), big);
            bsp_sync(bsp);
            int left = (s + p - 1) % p;
            ASSERT_EQ(bsp_nmsgs(bsp), 2);
            EXPECT_EQ(msg_val<int>(bsp_getmsg(bsp, 0)), left);
            pbspmsg m = bsp_getmsg(bsp, 1);
            ASSERT_EQ(bspmsg_size(m), big);
            const unsigned char *d = (const unsigned char *)bspmsg_data(m);
            size_t bad = 0;
            for (size_t i = 0; i < big; ++i) bad += d[i] != (unsigned char)(i * 7 + left);
            EXPECT_EQ(bad, 0u);
            bsp_sync(bsp);
        });
    }
}

TEST(PubMessages, Item14_EmptyAndSelf)
{
    for (int P : procs()) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            bsp_send(bsp, (s + 1) % p, nullptr, 0);
            int v = 5 * s;
            bsp_send(bsp, s, &v, sizeof v);
            bsp_sync(bsp);
            EXPECT_EQ(bsp_nmsgs(bsp), 2);
            pbspmsg e = bsp_findmsg(bsp, (s + p - 1) % p, 0);
            ASSERT_NE(e, nullptr);
            EXPECT_NE(bspmsg_data(e), nullptr);
            pbspmsg self = bsp_findmsg(bsp, s, p == 1 ? 1 : 0);
            ASSERT_NE(self, nullptr);
            EXPECT_EQ(bspmsg_size(self), sizeof v);
            EXPECT_EQ(msg_val<int>(self), 5 * s);
            if (p == 1) { EXPECT_EQ(bspmsg_size(e), 0u); }
            bsp_sync(bsp);
        });
    }
}

// all-to-all of 3 numbered messages, a broadcast between the 2nd and 3rd
static void check_order(pbsp bsp, int p)
{
    int k = 0;
    for (int src = 0; src < p; ++src) {
        for (int j = 0; j < 4; ++j) {
            pbspmsg m = bsp_getmsg(bsp, k++);
            EXPECT_EQ(bspmsg_src(m), src);
            int want = j < 2 ? 1000 * src + j : j == 2 ? -src : 1000 * src + 2;
            EXPECT_EQ(msg_val<int>(m), want) << "src " << src << " j " << j;
            EXPECT_EQ(bsp_findmsg(bsp, src, j), m);
        }
    }
}

static void send_all(pbsp bsp)
{
    int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    for (int j = 0; j < 3; ++j) {
        if (j == 2) {
            int b = -s;
            bsp_gsend(bsp, 0, p - 1, &b, sizeof b);
        }
        for (int d = 0; d < p; ++d) {
            int v = 1000 * s + j;
            bsp_send(bsp, (d + s) % p, &v, sizeof v);
        }
    }
}

TEST(PubMessages, Item15_Order)
{
    for (int P : procs()) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp);
            send_all(bsp);
            bsp_sync(bsp);
            ASSERT_EQ(bsp_nmsgs(bsp), 4 * p);
            check_order(bsp, p);
            bsp_sync(bsp);
        });
    }
}

TEST(PubMessages, Item16_Findmsg)
{
    for (int P : procs()) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            // process d gets d+1 messages from each source (wrapping)
            for (int d = 0; d < p; ++d)
                for (int j = 0; j <= d % 3; ++j) {
                    int v = 10 * s + j;
                    bsp_send(bsp, d, &v, sizeof v);
                }
            bsp_sync(bsp);
            int n = bsp_nmsgs(bsp);
            EXPECT_EQ(n, p * (s % 3 + 1));
            for (int src = 0; src < p; ++src) {
                for (int j = 0; j <= s % 3; ++j) {
                    pbspmsg m = bsp_findmsg(bsp, src, j);
                    ASSERT_NE(m, nullptr);
                    EXPECT_EQ(msg_val<int>(m), 10 * src + j);
                    EXPECT_EQ(bsp_findmsg(bsp, src, j), m);
                }
                EXPECT_EQ(bsp_findmsg(bsp, src, s % 3 + 1), nullptr);
                EXPECT_EQ(bsp_findmsg(bsp, src, -1), nullptr);
            }
            EXPECT_EQ(bsp_nmsgs(bsp), n);
            bsp_sync(bsp);
        });
    }
}

TEST(PubMessages, Item17_AlignedWritableThenEmpty)
{
    for (int P : procs()) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            for (int d = 0; d < p; ++d) {
                char buf[3] = { 1, 2, 3 };
                bsp_send(bsp, d, buf, (size_t)(1 + (s + d) % 3));
            }
            bsp_sync(bsp);
            for (int i = 0; i < bsp_nmsgs(bsp); ++i) {
                pbspmsg m = bsp_getmsg(bsp, i);
                uintptr_t a = (uintptr_t)bspmsg_data(m);
                EXPECT_EQ(a % alignof(max_align_t), 0u);
                ((char *)bspmsg_data(m))[0] = 9;
                EXPECT_EQ(((char *)bspmsg_data(m))[0], 9);
            }
            bsp_sync(bsp);
            EXPECT_EQ(bsp_nmsgs(bsp), 0);
            bsp_sync(bsp);
        });
    }
}

// Program 1 shape: queries routed to the owner of a key, answers back
TEST(PubMessages, Item19_Program1Shape)
{
    for (int P : { 1, 2, 4, 8 }) {
        for (int nq : { 0, 1, 1000 }) {
            std::vector<long> sum(P, -1);
            run(P, [&](pbsp bsp) {
                int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
                // key k is owned by k % p and its answer is k * k
                for (int q = 0; q < nq; ++q) {
                    int key = s * 7919 + q;
                    bsp_send(bsp, key % p, &key, sizeof key);
                }
                bsp_sync(bsp);
                for (int i = 0; i < bsp_nmsgs(bsp); ++i) {
                    pbspmsg m = bsp_getmsg(bsp, i);
                    int key = msg_val<int>(m);
                    EXPECT_EQ(key % p, s);
                    long ans[2] = { key, (long)key * key };
                    bsp_send(bsp, bspmsg_src(m), ans, sizeof ans);
                }
                bsp_sync(bsp);
                long tot = 0;
                EXPECT_EQ(bsp_nmsgs(bsp), nq);
                for (int i = 0; i < bsp_nmsgs(bsp); ++i) {
                    long ans[2];
                    memcpy(ans, bspmsg_data(bsp_getmsg(bsp, i)), sizeof ans);
                    EXPECT_EQ(ans[1], ans[0] * ans[0]);
                    tot += ans[0];
                }
                sum[s] = tot;
                bsp_sync(bsp);
            });
            for (int s = 0; s < P; ++s) {
                long want = 0;
                for (int q = 0; q < nq; ++q) want += s * 7919 + q;
                EXPECT_EQ(sum[s], want);
            }
        }
    }
}

// Program 2 shape: pack per destination, hpsend, getmsg(bsp, 0); empty
// messages where nothing crosses
TEST(PubMessages, Item20_Program2Shape)
{
    for (int P : { 1, 2, 4, 8 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            std::vector<std::vector<int>> pack(p);
            for (int i = 0; i < 50; ++i) {
                int v = s * 100 + i;
                int d = (v * 31) % p;
                if (d != (s + 1) % p || p == 1) pack[d].push_back(v);
            }
            for (int d = 0; d < p; ++d)
                bsp_hpsend(bsp, d, pack[d].empty() ? nullptr : pack[d].data(),
                        pack[d].size() * sizeof(int));
            bsp_sync(bsp);
            EXPECT_EQ(bsp_nmsgs(bsp), p);
            for (int src = 0; src < p; ++src) {
                pbspmsg m = src == 0 ? bsp_getmsg(bsp, 0) : bsp_findmsg(bsp, src, 0);
                size_t n = bspmsg_size(m) / sizeof(int);
                const int *d = (const int *)bspmsg_data(m);
                size_t want = 0;
                for (int i = 0; i < 50; ++i) {
                    int v = src * 100 + i;
                    if ((v * 31) % p == s && (s != (src + 1) % p || p == 1)) {
                        ASSERT_LT(want, n);
                        EXPECT_EQ(d[want], v);
                        ++want;
                    }
                }
                EXPECT_EQ(want, n);
            }
            bsp_sync(bsp);
        });
    }
}

TEST(PubOblsync, Item42_ExactCounts)
{
    for (int P : { 1, 2, 4, 8 }) {
        for (int k : { 0, 1, 5, 100 }) {
            run(P, [&](pbsp bsp) {
                int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
                // k messages to each process: message j to (s + j) % p ...
                // each process sends k messages to its right neighbour
                for (int j = 0; j < k; ++j) {
                    int v = 1000 * s + j;
                    bsp_send(bsp, (s + 1) % p, &v, sizeof v);
                }
                bsp_oblsync(bsp, k);
                ASSERT_EQ(bsp_nmsgs(bsp), k);
                int left = (s + p - 1) % p;
                for (int j = 0; j < k; ++j) {
                    pbspmsg m = bsp_getmsg(bsp, j);
                    EXPECT_EQ(bspmsg_src(m), left);
                    EXPECT_EQ(msg_val<int>(m), 1000 * left + j);
                }
                bsp_sync(bsp);
            });
        }
    }
}

TEST(PubOblsync, Item43_NoBarrier)
{
    // the sender's ten oblivious syncs end before the receiver starts its own
    std::atomic<int> sent{0};
    int waited_ok = 0;
    std::vector<int> vals;
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        if (s == 0) {
            int v;
            for (int i = 0; i < 10; ++i) {
                v = 100 + i;
                bsp_hpsend(bsp, 1, &v, sizeof v);
                bsp_oblsync(bsp, 0);
            }
            sent.store(1);
        } else {
            waited_ok = wait_flag(sent);
            for (int i = 0; i < 10; ++i) {
                bsp_oblsync(bsp, 1);
                EXPECT_EQ(bsp_nmsgs(bsp), 1);
                vals.push_back(msg_val<int>(bsp_getmsg(bsp, 0)));
            }
        }
        bsp_sync(bsp);
    });
    EXPECT_EQ(waited_ok, 1);
    ASSERT_EQ(vals.size(), 10u);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(vals[i], 100 + i);
}

TEST(PubOblsync, Item44_HoldBack)
{
    std::vector<int> first, second;
    run(4, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        if (s < 2) {
            int v = s;
            bsp_send(bsp, 1 - s, &v, sizeof v);
            bsp_oblsync(bsp, 1);
            if (s == 0) {
                int w = 77;
                bsp_send(bsp, 2, &w, sizeof w);
                bsp_oblsync(bsp, 0);
            } else {
                bsp_oblsync(bsp, 0);
            }
        } else {
            if (s == 3) sleep_s(0.2);
            for (int j = 0; j < 100; ++j) {
                int v = 1000 * s + j;
                bsp_send(bsp, 5 - s, &v, sizeof v);
            }
            bsp_oblsync(bsp, 100);
            if (s == 2)
                for (int i = 0; i < bsp_nmsgs(bsp); ++i)
                    first.push_back(msg_val<int>(bsp_getmsg(bsp, i)));
            bsp_oblsync(bsp, s == 2 ? 1 : 0);
            if (s == 2)
                for (int i = 0; i < bsp_nmsgs(bsp); ++i)
                    second.push_back(msg_val<int>(bsp_getmsg(bsp, i)));
        }
        bsp_sync(bsp);
    });
    ASSERT_EQ(first.size(), 100u);
    for (int j = 0; j < 100; ++j) EXPECT_EQ(first[j], 3000 + j);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0], 77);
}

TEST(PubOblsync, Item45_SenderAhead)
{
    std::vector<int> got;
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        for (int t = 0; t < 6; ++t) {
            if (s == 0) {
                int v = t;
                bsp_send(bsp, 1, &v, sizeof v);
                bsp_oblsync(bsp, 0);
            } else {
                if (t == 0) sleep_s(0.2);
                bsp_oblsync(bsp, 1);
                EXPECT_EQ(bsp_nmsgs(bsp), 1);
                got.push_back(msg_val<int>(bsp_getmsg(bsp, 0)));
            }
        }
        bsp_sync(bsp);
    });
    ASSERT_EQ(got.size(), 6u);
    for (int t = 0; t < 6; ++t) EXPECT_EQ(got[t], t);
}

TEST(PubOblsync, Item48_Alternating)
{
    for (int P : { 1, 2, 3, 4, 8 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp);
            for (int r = 0; r < 4; ++r) {
                send_all(bsp);
                bsp_oblsync(bsp, 4 * p);
                ASSERT_EQ(bsp_nmsgs(bsp), 4 * p);
                check_order(bsp, p);
                send_all(bsp);
                bsp_sync(bsp);
                ASSERT_EQ(bsp_nmsgs(bsp), 4 * p);
                check_order(bsp, p);
            }
        });
    }
}

TEST(PubOblsync, Item70_NoFalseDeadlock)
{
    // one process computes 3 s without PUB calls while the others wait in a
    // root bsp_sync; then one sleeps 3 s before sending the message an
    // oblsync waits for: no deadlock is reported and the results are right
    const int P = 3;
    std::vector<int> sum(P, -1), got(P, -1);
    std::vector<double> waited(P, 0);
    run(P, [&](pbsp bsp) {
        int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
        int v = s + 1;
        if (s == 1) {
            // busy work, no PUB call, for 3 s
            volatile uint64_t x = 0;
            auto t0 = std::chrono::steady_clock::now();
            while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 3.0)
                for (int i = 0; i < 10000; ++i) x = x * 6364136223846793005ull + 1;
        }
        bsp_gsend(bsp, 0, p - 1, &v, sizeof v);
        double t0 = bsp_time();
        bsp_sync(bsp);
        waited[s] = bsp_time() - t0;
        int t = 0;
        for (int i = 0; i < bsp_nmsgs(bsp); ++i) t += msg_val<int>(bsp_getmsg(bsp, i));
        sum[s] = t;
        // process 2 sleeps 3 s, then sends the message process 0 waits for
        if (s == 2) {
            sleep_s(3.0);
            int w = 77;
            bsp_send(bsp, 0, &w, sizeof w);
        }
        bsp_oblsync(bsp, s == 0 ? 1 : 0);
        if (s == 0 && bsp_nmsgs(bsp) == 1) got[0] = msg_val<int>(bsp_getmsg(bsp, 0));
        bsp_sync(bsp);
    });
    for (int s = 0; s < P; ++s) EXPECT_EQ(sum[s], P * (P + 1) / 2) << s;
    EXPECT_GT(waited[0], 2.5);   // it really waited through the computation
    EXPECT_EQ(got[0], 77);
}
