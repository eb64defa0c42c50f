// PUB collectives and DRMA (pub.md §8, §9; checklist items 47, 49, 55-63,
// 66, 67).
#include "pub/pub_test.hpp"

#include <climits>
#include <cmath>
#include <cstring>
#include <vector>

using namespace pubtest;

TEST(PubCollectives, Item55_Gsend)
{
    run(4, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        for (int sender = 0; sender < 4; ++sender)
            for (int first = 0; first < 4; ++first)
                for (int last = first; last < 4; ++last) {
                    int v = 100 * first + 10 * last + sender;
                    if (s == sender) bsp_gsend(bsp, first, last, &v, sizeof v);
                    bsp_sync(bsp);
                    int member = s >= first && s <= last;
                    ASSERT_EQ(bsp_nmsgs(bsp), member);
                    if (member) {
                        EXPECT_EQ(bspmsg_src(bsp_getmsg(bsp, 0)), sender);
                        EXPECT_EQ(msg_val<int>(bsp_getmsg(bsp, 0)), v);
                    }
                }
    });
}

TEST(PubCollectives, Item56_LsendHp)
{
    run(8, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        const int table[4] = { 6, 1, 4, 3 };
        int v = 11, w = 12, x = 13;
        if (s == 2) {
            bsp_lsend(bsp, table, 4, &v, sizeof v);
            bsp_hpgsend(bsp, 5, 7, &w, sizeof w);
            bsp_hplsend(bsp, table, 4, &x, sizeof x);
        }
        bsp_sync(bsp);
        std::vector<int> got;
        for (int i = 0; i < bsp_nmsgs(bsp); ++i) got.push_back(msg_val<int>(bsp_getmsg(bsp, i)));
        std::vector<int> want;
        bool in_t = s == 6 || s == 1 || s == 4 || s == 3;
        if (in_t) want.push_back(11);
        if (s >= 5) want.push_back(12);
        if (in_t) want.push_back(13);
        EXPECT_EQ(got, want);
    });
}

// a non-commutative operator: 2x2 matrix product mod *param
struct mat2 { long a, b, c, d; };
static void mat2_mul_fn(void *param, void *acc, const void *in, int count)
{
    long m = *(const long *)param;
    mat2 *x = (mat2 *)acc;
    const mat2 *y = (const mat2 *)in;
    for (int i = 0; i < count; ++i) {
        mat2 r = { (x[i].a * y[i].a + x[i].b * y[i].c) % m, (x[i].a * y[i].b + x[i].b * y[i].d) % m,
                   (x[i].c * y[i].a + x[i].d * y[i].c) % m, (x[i].c * y[i].b + x[i].d * y[i].d) % m };
        x[i] = r;
    }
}
static const tbspop mat2_mul = BSPOP_INIT(mat2, mat2_mul_fn);

static mat2 mat_of(int k) { return mat2{ 1 + k, 2, k % 3, 1 }; }

TEST(PubCollectives, Item58_ReduceAllOperators)
{
    pbspop ops[12] = { bspop_addint, bspop_mulint, bspop_maxint, bspop_minint,
                       bspop_addlong, bspop_mullong, bspop_maxlong, bspop_minlong,
                       bspop_adddouble, bspop_muldouble, bspop_maxdouble, bspop_mindouble };
    for (int P : { 1, 2, 3, 5, 8 }) {
        for (int count : { 1, 7, 1000 }) {
            run(P, [&](pbsp bsp) {
                int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
                for (int o = 0; o < 12; ++o) {
                    size_t es = ops[o]->size;
                    std::vector<unsigned char> sb(es * count), rb(es * count, 0xAB);
                    for (int i = 0; i < count; ++i) {
                        int iv = (s + 1) * (i % 5 + 1) - 3;
                        if (es == sizeof(int) && o < 4) memcpy(&sb[i * es], &iv, es);
                        else if (o < 8) { long lv = iv; memcpy(&sb[i * es], &lv, es); }
                        else { double dv = iv * 0.5; memcpy(&sb[i * es], &dv, es); }
                    }
                    if (o % 2 == 0) bsp_greduce(bsp, 0, p - 1, sb.data(), rb.data(), count, ops[o], nullptr);
                    else {
                        std::vector<int> t(p);
                        for (int i = 0; i < p; ++i) t[i] = i;
                        bsp_lreduce(bsp, t.data(), p, sb.data(), rb.data(), count, ops[o], nullptr);
                    }
                    bsp_sync(bsp);
                    if (s != p - 1) {
                        for (size_t i = 0; i < rb.size(); ++i) ASSERT_EQ(rb[i], 0xAB);
                        continue;
                    }
                    for (int i = 0; i < count; ++i) {
                        double acc = 0;
                        for (int q = 0; q < p; ++q) {
                            double v = (double)((q + 1) * (i % 5 + 1) - 3) * (o >= 8 ? 0.5 : 1);
                            if (q == 0) { acc = v; continue; }
                            switch (o % 4) {
                            case 0: acc += v; break;
                            case 1: acc *= v; break;
                            case 2: acc = std::fmax(acc, v); break;
                            case 3: acc = std::fmin(acc, v); break;
                            }
                        }
                        double got;
                        if (o < 4) { int x; memcpy(&x, &rb[i * es], es); got = x; }
                        else if (o < 8) { long x; memcpy(&x, &rb[i * es], es); got = (double)x; }
                        else memcpy(&got, &rb[i * es], es);
                        if (o % 4 == 1 && o < 8 && std::fabs(acc) > 1e9) continue;   // wrapped
                        ASSERT_EQ(got, acc) << "op " << o << " i " << i;
                    }
                }
            });
        }
    }
}

TEST(PubCollectives, Item59_AllreduceSameBits)
{
    for (int P : { 2, 3, 8 }) {
        std::vector<double> res(P);
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            double x = std::pow(10.0, (s * 7) % 19 - 9) * (s % 2 ? -1.0 : 1.0) + 1.0 / 3.0;
            double r = 0;
            std::vector<int> t(p);
            for (int i = 0; i < p; ++i) t[i] = i;
            if (s % 2) bsp_lallreduce(bsp, t.data(), p, &x, &r, 1, bspop_adddouble, nullptr);
            else bsp_gallreduce(bsp, 0, p - 1, &x, &r, 1, bspop_adddouble, nullptr);
            bsp_sync(bsp);
            res[s] = r;
        });
        for (int s = 1; s < P; ++s) EXPECT_EQ(memcmp(&res[s], &res[0], sizeof(double)), 0);
    }
}

TEST(PubCollectives, Item60_Scans)
{
    for (int P : { 1, 2, 4, 8 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int x[2] = { s + 1, 10 * (s + 1) }, r[2] = { -1, -1 };
            std::vector<int> all(2 * p, -1), all2(2 * p, -1), t(p);
            for (int i = 0; i < p; ++i) t[i] = i;
            bsp_gscan(bsp, 0, p - 1, x, r, 2, bspop_addint, nullptr);
            bsp_gallscan(bsp, 0, p - 1, x, all.data(), 2, bspop_addint, nullptr);
            bsp_lallscan(bsp, t.data(), p, x, all2.data(), 2, bspop_addint, nullptr);
            bsp_sync(bsp);
            EXPECT_EQ(r[0], (s + 1) * (s + 2) / 2);
            EXPECT_EQ(r[1], 10 * (s + 1) * (s + 2) / 2);
            for (int k = 0; k < p; ++k) {
                EXPECT_EQ(all[2 * k], (k + 1) * (k + 2) / 2);
                EXPECT_EQ(all[2 * k + 1], 10 * (k + 1) * (k + 2) / 2);
                EXPECT_EQ(all2[2 * k], all[2 * k]);
            }
            int r2 = -1;
            bsp_lscan(bsp, t.data(), p, &x[0], &r2, 1, bspop_addint, nullptr);
            bsp_sync(bsp);
            EXPECT_EQ(r2, (s + 1) * (s + 2) / 2);
        });
    }
}

TEST(PubCollectives, Item61_NonCommutative)
{
    for (int P : { 2, 3, 5 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            long mod = 1000003;
            std::vector<int> t(p), rt(p);
            for (int i = 0; i < p; ++i) { t[i] = i; rt[i] = p - 1 - i; }
            mat2 x = mat_of(s);
            auto prod = [&](const std::vector<int> &order, int upto) {
                mat2 acc = mat_of(order[0]);
                for (int i = 1; i <= upto; ++i) {
                    mat2 y = mat_of(order[i]);
                    mat2_mul_fn(&mod, &acc, &y, 1);
                }
                return acc;
            };
            mat2 r1{}, r2{}, r3{}, r4{}, r5{}, r6{};
            std::vector<mat2> a1(p), a2(p);
            bsp_greduce(bsp, 0, p - 1, &x, &r1, 1, &mat2_mul, &mod);
            bsp_lreduce(bsp, rt.data(), p, &x, &r2, 1, &mat2_mul, &mod);
            bsp_gallreduce(bsp, 0, p - 1, &x, &r3, 1, &mat2_mul, &mod);
            bsp_lallreduce(bsp, rt.data(), p, &x, &r4, 1, &mat2_mul, &mod);
            bsp_gscan(bsp, 0, p - 1, &x, &r5, 1, &mat2_mul, &mod);
            bsp_lscan(bsp, rt.data(), p, &x, &r6, 1, &mat2_mul, &mod);
            bsp_gallscan(bsp, 0, p - 1, &x, a1.data(), 1, &mat2_mul, &mod);
            bsp_lallscan(bsp, rt.data(), p, &x, a2.data(), 1, &mat2_mul, &mod);
            bsp_sync(bsp);
            auto eq = [](mat2 a, mat2 b) { return a.a == b.a && a.b == b.b && a.c == b.c && a.d == b.d; };
            mat2 fwd = prod(t, p - 1), rev = prod(rt, p - 1);
            if (s == p - 1) { EXPECT_TRUE(eq(r1, fwd)); }
            if (s == 0) { EXPECT_TRUE(eq(r2, rev)); }
            EXPECT_TRUE(eq(r3, fwd));
            EXPECT_TRUE(eq(r4, rev));
            EXPECT_TRUE(eq(r5, prod(t, s)));
            EXPECT_TRUE(eq(r6, prod(rt, p - 1 - s)));
            for (int k = 0; k < p; ++k) {
                EXPECT_TRUE(eq(a1[k], prod(t, k)));
                EXPECT_TRUE(eq(a2[k], prod(rt, k)));
            }
            if (p > 2) { EXPECT_FALSE(eq(fwd, rev)); }
        });
    }
}

TEST(PubCollectives, Item62_SbufAtCallCountZero)
{
    for (int P : { 1, 3, 4 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int x = s + 1;
            bsp_gallreduce(bsp, 0, p - 1, &x, &x, 1, bspop_addint, nullptr);
            int y = s;
            int ry = -1;
            bsp_gallreduce(bsp, 0, p - 1, &y, &ry, 1, bspop_maxint, nullptr);
            y = 1000;   // read at the call
            int untouched = -5;
            bsp_gallreduce(bsp, 0, p - 1, &y, &untouched, 0, bspop_addint, nullptr);
            bsp_sync(bsp);
            EXPECT_EQ(x, p * (p + 1) / 2);
            EXPECT_EQ(ry, p - 1);
            EXPECT_EQ(untouched, -5);
            EXPECT_EQ(bsp_nmsgs(bsp), 0);
            bsp_gallreduce(bsp, 0, p - 1, &y, &untouched, 0, bspop_addint, nullptr);
            bsp_oblsync(bsp, 1);   // count 0: still one event
            EXPECT_EQ(untouched, -5);
        });
    }
}

TEST(PubCollectives, Item63_SameSetCallOrder_Item57_Mixed_Item47_Counting)
{
    for (int P : { 2, 4, 8 }) {
        for (int obl = 0; obl < 2; ++obl) {
            run(P, [&](pbsp bsp) {
                int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
                int a = s, b = 100 * s, ra = -1, rb = -1, rc = -1;
                bsp_gallreduce(bsp, 0, p - 1, &a, &ra, 1, bspop_addint, nullptr);
                bsp_gallreduce(bsp, 0, p - 1, &b, &rb, 1, bspop_addint, nullptr);
                int events = 2;
                // overlapping set: pids 1..p-1 (a reduce to the last)
                if (s >= 1) {
                    bsp_greduce(bsp, 1, p - 1, &a, &rc, 1, bspop_maxint, nullptr);
                    events++;
                }
                // 3 broadcasts over overlapping sets plus a send
                if (s == 0) bsp_gsend(bsp, 0, p - 1, &s, sizeof s);
                if (s == 1) bsp_gsend(bsp, 0, p / 2, &s, sizeof s);
                if (s == p - 1) { int t[2] = { 0, p - 1 }; bsp_lsend(bsp, t, 2, &s, sizeof s); }
                bsp_send(bsp, (s + 1) % p, &s, sizeof s);
                int msgs = 1 + 1 + (s <= p / 2 ? 1 : 0) + (s == 0 || s == p - 1 ? 1 : 0);
                if (obl) bsp_oblsync(bsp, msgs + events);
                else bsp_sync(bsp);
                EXPECT_EQ(bsp_nmsgs(bsp), msgs);
                EXPECT_EQ(ra, p * (p - 1) / 2);
                EXPECT_EQ(rb, 100 * p * (p - 1) / 2);
                if (s == p - 1) { EXPECT_EQ(rc, p - 1); }
                else { EXPECT_EQ(rc, -1); }
                bsp_sync(bsp);
            });
        }
    }
}

TEST(PubCollectives, Item66_AddintWraps)
{
    run(2, [&](pbsp bsp) {
        int s = bsp_pid(bsp);
        int x = s == 0 ? INT_MAX : 1, r = 0;
        bsp_gallreduce(bsp, 0, 1, &x, &r, 1, bspop_addint, nullptr);
        bsp_sync(bsp);
        EXPECT_EQ(r, INT_MIN);
    });
}

TEST(PubDrma, Item67_RootAndChild)
{
    for (int P : { 1, 2, 3, 4, 8 }) {
        run(P, [&](pbsp bsp) {
            for (int level = 0; level < 2; ++level) {
                tbsp sub;
                pbsp b = bsp;
                if (level == 1) {
                    int q = bsp_nprocs(bsp);
                    int part[2] = { (q + 1) / 2, q };
                    if (q == 1) { int one[1] = { 1 }; bsp_partition(bsp, &sub, 1, one); }
                    else bsp_partition(bsp, &sub, 2, part);
                    b = &sub;
                }
                int p = bsp_nprocs(b), s = bsp_pid(b);
                int arr[8] = { 0 };
                for (int i = 0; i < 8; ++i) arr[i] = 10 * s + i;
                bsp_push_reg(b, arr, sizeof arr);
                bsp_sync(b);
                int r = (s + 1) % p;
                int got = -1, v = -7;
                bsp_get(b, r, arr, 2 * sizeof(int), &got, sizeof got);   // pre-put value
                bsp_put(b, (s + p - 1) % p, &v, arr, 2 * sizeof(int), sizeof v);
                bsp_sync(b);
                EXPECT_EQ(got, 10 * r + 2);
                EXPECT_EQ(arr[2], -7);
                // put beats get on the same bytes
                int mine = 1000 + s;
                bsp_put(b, s, &mine, arr, 0, sizeof mine);
                bsp_get(b, r, arr, 4 * sizeof(int), &arr[0], sizeof(int));
                bsp_sync(b);
                EXPECT_EQ(arr[0], 1000 + s);
                // 100 hpputs / hpgets of growing size
                std::vector<char> big(100 * 101 / 2 + 1, 0), src(big.size()), dst(big.size(), 0);
                for (size_t i = 0; i < src.size(); ++i) src[i] = (char)(i * 3 + s);
                bsp_push_reg(b, big.data(), big.size());
                bsp_push_reg(b, src.data(), src.size());
                bsp_sync(b);
                size_t off = 0;
                for (int k = 1; k <= 100; ++k) {
                    bsp_hpput(b, r, src.data() + off, big.data(), off, (size_t)k);
                    bsp_hpget(b, r, src.data(), off, dst.data() + off, (size_t)k);
                    off += (size_t)k;
                }
                bsp_sync(b);
                int left = (s + p - 1) % p;
                for (size_t i = 0; i < off; ++i) {
                    ASSERT_EQ(big[i], (char)(i * 3 + left));
                    ASSERT_EQ(dst[i], (char)(i * 3 + r));
                }
                // stacked registrations: the newest serves
                int small[2] = { 0, 0 };
                bsp_push_reg(b, arr, sizeof(int));   // stacks on arr
                bsp_push_reg(b, small, sizeof small);
                bsp_sync(b);
                int one = 5;
                bsp_put(b, r, &one, arr, 0, sizeof one);
                bsp_sync(b);
                EXPECT_EQ(arr[0], 5);
                bsp_pop_reg(b, arr);
                bsp_pop_reg(b, small);
                bsp_sync(b);
                int w = 9;
                bsp_put(b, r, &w, arr, 7 * sizeof(int), sizeof w);   // the first one again
                bsp_sync(b);
                EXPECT_EQ(arr[7], 9);
                bsp_pop_reg(b, src.data());
                bsp_pop_reg(b, big.data());
                bsp_pop_reg(b, arr);
                bsp_sync(b);
                if (level == 1) bsp_done(&sub);
            }
            bsp_sync(bsp);
        });
    }
}

TEST(PubDrma, Item49_PushInOblsyncSuperstep)
{
    for (int P : { 1, 2, 4 }) {
        run(P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            int x = -1;
            bsp_push_reg(bsp, &x, sizeof x);
            bsp_oblsync(bsp, 0);
            bsp_put(bsp, (s + 1) % p, &s, &x, 0, sizeof s);
            bsp_sync(bsp);
            EXPECT_EQ(x, (s + p - 1) % p);
            bsp_pop_reg(bsp, &x);
            bsp_sync(bsp);
        });
    }
}
