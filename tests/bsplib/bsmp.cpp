// BSPlib bulk synchronous message passing on the pthread engine
// (bsplib.md §7; checklist items 63-65 and 67-82). Differing tag sizes
// (item 66) are a run-time error: errors.cpp.
#include "bsp_test.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

using bsptest::run;

namespace {

// items 63, 64, 65: the default tag size is 0; set_tagsize returns the size
// in force, the new one applies after the sync; the last call of a
// superstep wins
TEST_P(BspP, TagSizeRoundTrips)
{
    run(GetParam(), [] {
        bsp_size_t t = 4;
        bsp_set_tagsize(&t);
        EXPECT_EQ(0u, t);
        t = 8;
        bsp_set_tagsize(&t);
        EXPECT_EQ(0u, t);          // still the current size
        t = 12;
        bsp_set_tagsize(&t);
        EXPECT_EQ(0u, t);
        bsp_sync();
        t = 12;
        bsp_set_tagsize(&t);       // same size again: no change requested
        EXPECT_EQ(12u, t);
        bsp_sync();
        t = 0;
        bsp_set_tagsize(&t);
        EXPECT_EQ(12u, t);
        bsp_sync();
        t = 0;
        bsp_set_tagsize(&t);
        EXPECT_EQ(0u, t);
        bsp_sync();
    });
}

// item 67: messages sent in the superstep that changes the tag size are
// delivered with the old size
TEST_P(BspP, MessagesKeepTheTagSizeOfTheirSuperstep)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        bsp_size_t t = sizeof(uint32_t);
        bsp_set_tagsize(&t);
        bsp_sync();
        // tag size 4 in force; request 16 for the next superstep and send
        t = 16;
        bsp_set_tagsize(&t);
        EXPECT_EQ(4u, t);
        uint32_t tag = 0xabc00 + s;
        uint64_t pay = s;
        bsp_send((s + 1) % P, &tag, &pay, sizeof pay);
        bsp_sync();
        // now tag size 16, but the received message has a 4-byte tag
        unsigned char got[16];
        std::memset(got, 0x55, sizeof got);
        bsp_size_t status = 0;
        bsp_get_tag(&status, got);
        EXPECT_EQ(sizeof pay, status);
        uint32_t gt;
        std::memcpy(&gt, got, 4);
        EXPECT_EQ(0xabc00u + (s + P - 1) % P, gt);
        EXPECT_EQ(0x55, got[4]);   // only 4 bytes were written
        uint64_t v = 0;
        bsp_move(&v, sizeof v);
        EXPECT_EQ((s + P - 1) % P, v);
        // a message sent now carries 16 bytes of tag
        unsigned char big[16];
        for (int i = 0; i < 16; ++i) big[i] = static_cast<unsigned char>(s + i);
        bsp_send(s, big, nullptr, 0);
        t = 0;
        bsp_set_tagsize(&t);
        bsp_sync();
        unsigned char back[16] = {};
        bsp_get_tag(&status, back);
        EXPECT_EQ(0u, status);
        for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<unsigned char>(s + i), back[i]);
        void *tp = nullptr, *pp = nullptr;
        EXPECT_EQ(0u, bsp_hpmove(&tp, &pp));
        ASSERT_NE(nullptr, tp);
        EXPECT_EQ(0, std::memcmp(tp, big, 16));
        bsp_sync();
    });
}

// items 68, 75: two messages (one empty) from every process to pid 0, with
// tag size 0 and NULL tag / NULL payload
TEST_P(BspP, TwoMessagesPerProcessToPidZero)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        const size_t size = 24;
        std::vector<char> payload(size, static_cast<char>(s));
        bsp_send(0, nullptr, payload.data(), size);
        bsp_send(0, nullptr, nullptr, 0);
        bsp_sync();
        bsp_nprocs_t n = 77;
        bsp_size_t bytes = 77;
        bsp_qsize(&n, &bytes);
        if (s == 0) {
            EXPECT_EQ(2 * P, n);
            EXPECT_EQ(P * size, bytes);
            std::multiset<int> senders;
            unsigned empty = 0;
            for (unsigned k = 0; k < n; ++k) {
                bsp_size_t st;
                bsp_get_tag(&st, nullptr);
                std::vector<char> buf(size + 1, -1);
                bsp_move(buf.data(), buf.size());
                if (st == 0) {
                    empty++;
                } else {
                    EXPECT_EQ(size, st);
                    senders.insert(buf[0]);
                    EXPECT_EQ(-1, buf[size]);
                }
            }
            EXPECT_EQ(P, empty);
            EXPECT_EQ(P, senders.size());
            for (unsigned q = 0; q < P; ++q) EXPECT_EQ(1u, senders.count(static_cast<int>(q)));
        } else {
            EXPECT_EQ(0u, n);
            EXPECT_EQ(0u, bytes);
        }
    });
}

// items 69, 70, 82: sent data is buffered; the queue is empty before any
// message and during the sending superstep; self-sends arrive after the sync
TEST_P(BspP, SendIsBufferedAndArrivesAfterTheSync)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        bsp_nprocs_t n = 9;
        bsp_size_t bytes = 9;
        bsp_qsize(&n, &bytes);
        EXPECT_EQ(0u, n);
        EXPECT_EQ(0u, bytes);
        bsp_size_t t = sizeof(int);
        bsp_set_tagsize(&t);
        bsp_sync();
        int tag = 40 + static_cast<int>(s);
        double pay[3] = { 1.0 * s, 2.0, 3.0 };
        bsp_send(s, &tag, pay, sizeof pay);                 // to self
        bsp_send((s + 1) % P, &tag, pay, sizeof pay);
        tag = -1;
        pay[0] = pay[1] = pay[2] = -1.0;                    // no effect
        bsp_qsize(&n, &bytes);
        EXPECT_EQ(0u, n);                                   // not before the sync
        bsp_sync();
        bsp_qsize(&n, &bytes);
        EXPECT_EQ(2u, n);
        EXPECT_EQ(2 * sizeof pay, bytes);
        std::multiset<int> tags;
        for (int k = 0; k < 2; ++k) {
            int tg = 0;
            bsp_size_t st = 0;
            bsp_get_tag(&st, &tg);
            double got[3];
            bsp_move(got, sizeof got);
            EXPECT_EQ(sizeof got, st);
            tags.insert(tg);
            EXPECT_EQ(1.0 * (tg - 40), got[0]);
            EXPECT_EQ(2.0, got[1]);
        }
        if (P == 1) {
            EXPECT_EQ(2u, tags.count(40));
        } else {
            EXPECT_EQ(1u, tags.count(40 + static_cast<int>(s)));
            EXPECT_EQ(1u, tags.count(40 + static_cast<int>((s + P - 1) % P)));
        }
        t = 0;
        bsp_set_tagsize(&t);
        bsp_sync();
    });
}

// items 71, 72, 74, 76, 77: qsize drops by one message and its size per
// move / hpmove; accumulated_size may be NULL; get_tag does not dequeue;
// move copies at most max_copy_size, 0 discards; move on empty is a no-op
TEST_P(BspP, QueueAccounting)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        // every process sends 5 messages of sizes 1..5 to its right neighbour
        for (unsigned k = 1; k <= 5; ++k) {
            std::vector<unsigned char> m(k, static_cast<unsigned char>(k));
            bsp_send((s + 1) % P, nullptr, m.data(), k);
        }
        bsp_sync();
        bsp_nprocs_t n;
        bsp_size_t bytes;
        bsp_qsize(&n, &bytes);
        EXPECT_EQ(5u, n);
        EXPECT_EQ(15u, bytes);
        bsp_qsize(&n, nullptr);      // item 72
        EXPECT_EQ(5u, n);
        bsp_size_t left = 15;
        for (unsigned k = 0; k < 5; ++k) {
            bsp_size_t st1, st2;
            bsp_get_tag(&st1, nullptr);
            bsp_get_tag(&st2, nullptr);   // item 74: not dequeued
            EXPECT_EQ(st1, st2);
            bsp_qsize(&n, &bytes);
            EXPECT_EQ(5u - k, n);
            unsigned char buf[8];
            std::memset(buf, 0xff, sizeof buf);
            if (k == 0) {
                bsp_move(nullptr, 0);    // item 76: discard
            } else if (k % 2) {
                bsp_move(buf, 2);        // at most 2 bytes
                for (unsigned i = 0; i < 8; ++i)
                    EXPECT_EQ(i < std::min<bsp_size_t>(2, st1) ? st1 : 0xff, buf[i]);
            } else {
                void *tp, *pp;
                EXPECT_EQ(st1, bsp_hpmove(&tp, &pp));
                EXPECT_EQ(static_cast<unsigned char>(st1), *static_cast<unsigned char *>(pp));
            }
            left -= st1;
            bsp_qsize(&n, &bytes);
            EXPECT_EQ(4u - k, n);
            EXPECT_EQ(left, bytes);
        }
        unsigned char keep = 42;
        bsp_move(&keep, 1);              // item 77: empty queue, no effect
        EXPECT_EQ(42, keep);
        bsp_sync();
    });
}

// items 73, 79: empty queue: get_tag gives SIZE_MAX and leaves the tag;
// hpmove gives SIZE_MAX and leaves the pointers
TEST_P(BspP, EmptyQueueConventions)
{
    run(GetParam(), [] {
        bsp_size_t t = 4;
        bsp_set_tagsize(&t);
        bsp_sync();
        int tag = 1234;
        bsp_size_t st = 0;
        bsp_get_tag(&st, &tag);
        EXPECT_EQ(SIZE_MAX, st);
        EXPECT_EQ(bsp_size_unavailable, st);
        EXPECT_EQ(1234, tag);
        void *a = &tag, *b = &st;
        EXPECT_EQ(SIZE_MAX, bsp_hpmove(&a, &b));
        EXPECT_EQ(static_cast<void *>(&tag), a);
        EXPECT_EQ(static_cast<void *>(&st), b);
        t = 0;
        bsp_set_tagsize(&t);
        bsp_sync();
    });
}

// item 78: hpmove pointers stay valid (and unchanged) until the next sync,
// while more messages are moved
TEST_P(BspP, HpmovePointersValidUntilTheSync)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        bsp_size_t t = sizeof(unsigned);
        bsp_set_tagsize(&t);
        bsp_sync();
        for (unsigned q = 0; q < P; ++q)
            for (unsigned k = 0; k < 3; ++k) {
                unsigned tag = s * 100 + k;
                std::vector<uint32_t> pay(k + 1, s * 1000 + k);
                bsp_send(q, &tag, pay.data(), pay.size() * sizeof(uint32_t));
            }
        bsp_sync();
        std::vector<std::pair<void *, void *>> ptrs;
        std::vector<bsp_size_t> sizes;
        for (;;) {
            void *tp, *pp;
            bsp_size_t sz = bsp_hpmove(&tp, &pp);
            if (sz == SIZE_MAX) break;
            ptrs.emplace_back(tp, pp);
            sizes.push_back(sz);
        }
        ASSERT_EQ(3 * P, ptrs.size());
        std::set<unsigned> seen;
        for (size_t i = 0; i < ptrs.size(); ++i) {
            unsigned tag;
            std::memcpy(&tag, ptrs[i].first, sizeof tag);
            const unsigned from = tag / 100, k = tag % 100;
            EXPECT_EQ((k + 1) * sizeof(uint32_t), sizes[i]);
            const uint32_t *pl = static_cast<const uint32_t *>(ptrs[i].second);
            for (unsigned j = 0; j <= k; ++j) EXPECT_EQ(from * 1000 + k, pl[j]);
            seen.insert(tag);
        }
        EXPECT_EQ(3 * P, seen.size());
        t = 0;
        bsp_set_tagsize(&t);
        bsp_sync();
    });
}

// items 36 and 80 (issue 9, item 2): the tag is copied when bsp_hpsend is
// called; one tag variable reused for several hpsends gives each message
// the tag it had at its call (the payloads stay unbuffered)
TEST_P(BspP, HpsendCopiesTheTagAtTheCall)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        bsp_size_t t = sizeof(long);
        bsp_set_tagsize(&t);
        bsp_sync();
        std::vector<long> pays(50);
        long tag;
        for (int k = 0; k < 50; ++k) {
            tag = 100L * s + k;
            pays[k] = k;
            bsp_hpsend((s + 1) % P, &tag, &pays[k], sizeof(long));
        }
        tag = -1;
        bsp_sync();
        const long from = (long)((s + P - 1) % P);
        bsp_nprocs_t n;
        bsp_qsize(&n, nullptr);
        EXPECT_EQ(50u, n);
        unsigned bad = 0;
        for (unsigned i = 0; i < n; ++i) {
            long tg, v = -2;
            bsp_size_t st;
            bsp_get_tag(&st, &tg);
            bsp_move(&v, sizeof v);
            bad += tg != 100L * from + v;
        }
        EXPECT_EQ(0u, bad);
        t = 0;
        bsp_set_tagsize(&t);
        bsp_sync();
    });
}

// item 80: 100 hpsends with int tags, each arrives once
TEST_P(BspP, HpsendHundredMessages)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        bsp_size_t t = sizeof(int);
        bsp_set_tagsize(&t);
        bsp_sync();
        std::vector<int> tags(100);
        std::vector<std::vector<int>> pays(100);
        for (int k = 0; k < 100; ++k) {
            tags[k] = static_cast<int>(s) * 1000 + k;
            pays[k].assign(static_cast<size_t>(k % 7), k);
            bsp_hpsend((s + 1) % P, &tags[k], pays[k].data(), pays[k].size() * sizeof(int));
        }
        bsp_sync();   // tags and payloads stay untouched until here
        const unsigned from = (s + P - 1) % P;
        std::vector<int> count(100, 0);
        bsp_nprocs_t n;
        bsp_qsize(&n, nullptr);
        EXPECT_EQ(100u, n);
        for (unsigned i = 0; i < n; ++i) {
            int tag;
            bsp_size_t st;
            bsp_get_tag(&st, &tag);
            std::vector<int> buf(8, -1);
            bsp_move(buf.data(), buf.size() * sizeof(int));
            const int k = tag - static_cast<int>(from) * 1000;
            ASSERT_TRUE(k >= 0 && k < 100) << "tag " << tag;
            count[k]++;
            EXPECT_EQ(static_cast<size_t>(k % 7) * sizeof(int), st);
            for (int j = 0; j < k % 7; ++j) EXPECT_EQ(k, buf[j]);
        }
        for (int k = 0; k < 100; ++k) EXPECT_EQ(1, count[k]);
        t = 0;
        bsp_set_tagsize(&t);
        bsp_sync();
    });
}

// item 81: unread messages disappear at the next sync
TEST_P(BspP, UnreadMessagesDisappear)
{
    const unsigned P = GetParam();
    run(P, [P] {
        int v = 1;
        for (unsigned q = 0; q < P; ++q) bsp_send(q, nullptr, &v, sizeof v);
        bsp_sync();
        bsp_nprocs_t n;
        bsp_qsize(&n, nullptr);
        EXPECT_EQ(P, n);
        bsp_move(&v, sizeof v);   // read one of them only
        bsp_sync();
        bsp_qsize(&n, nullptr);
        EXPECT_EQ(0u, n);
    });
}

// messages and registrations in the same superstep, and a superstep that
// needs the register capacity to grow (an extra internal sync): messages
// received in it are kept
TEST_P(BspP, MessagesSurviveRegistrationGrowth)
{
    const unsigned P = GetParam();
    run(P, [P] {
        const unsigned s = bsp_pid();
        static thread_local char area[3000];
        for (int i = 0; i < 3000; ++i) bsp_push_reg(&area[i], 1);
        uint64_t v = 77 + s;
        bsp_send((s + 1) % P, nullptr, &v, sizeof v);
        bsp_sync();
        bsp_nprocs_t n;
        bsp_size_t bytes;
        bsp_qsize(&n, &bytes);
        EXPECT_EQ(1u, n);
        EXPECT_EQ(sizeof v, bytes);
        void *tp, *pp;
        EXPECT_EQ(sizeof v, bsp_hpmove(&tp, &pp));
        EXPECT_EQ(77u + (s + P - 1) % P, *static_cast<uint64_t *>(pp));
        char c = 5;
        bsp_put((s + 1) % P, &c, &area[2999], 0, 1);
        bsp_sync();
        EXPECT_EQ(5, area[2999]);
        for (int i = 0; i < 3000; ++i) bsp_pop_reg(&area[i]);
        bsp_sync();
    });
}

INSTANTIATE_TEST_SUITE_P(P, BspP, bsptest::procs());

} // namespace
