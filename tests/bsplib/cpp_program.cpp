// The C++ wrapper mcbsp::BSP_program (bsplib.md §10; checklist items 88-91).
#include <mcbsp.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace {

std::atomic<int> instances{0}, destroyed{0}, spmd_calls{0};
std::mutex mtx;
std::set<const void *> objects;     // the objects spmd() ran on
std::set<unsigned> pids;

class Counter : public mcbsp::BSP_program {
public:
    explicit Counter(int tag) : tag_(tag) {}
    int tag_;
    int result_ = -1;               // written by pid 0's spmd()
    unsigned seen_nprocs_ = 0;

protected:
    void spmd() override
    {
        spmd_calls++;
        const unsigned s = bsp_pid(), p = bsp_nprocs();
        {
            std::lock_guard<std::mutex> g(mtx);
            objects.insert(this);
            pids.insert(s);
        }
        // a member as a communication buffer: every process sends its pid to 0
        unsigned sum = 0;
        bsp_push_reg(&sum, sizeof sum);
        bsp_sync();
        std::vector<unsigned> mine(1, s);
        bsp_send(0, nullptr, mine.data(), sizeof(unsigned));
        bsp_sync();
        if (s == 0) {
            bsp_nprocs_t n;
            bsp_qsize(&n, nullptr);
            int total = 0;
            for (bsp_nprocs_t i = 0; i < n; ++i) {
                unsigned v;
                bsp_move(&v, sizeof v);
                total += static_cast<int>(v);
            }
            result_ = total + 1000 * tag_;
            seen_nprocs_ = p;
        }
        bsp_pop_reg(&sum);
    }

    BSP_program *newInstance() override
    {
        instances++;
        return new Counter(tag_);
    }

    void destroyInstance(BSP_program *const instance) override
    {
        destroyed++;
        delete instance;
    }
};

void reset()
{
    instances = destroyed = spmd_calls = 0;
    objects.clear();
    pids.clear();
}

class BspCpp : public ::testing::TestWithParam<unsigned> {};

// items 88, 90, 91: P distinct objects, pid 0 on the original; every sibling
// instance is destroyed once; begin returns on pid 0 with its members intact
TEST_P(BspCpp, ProgramRunsOnDistinctInstances)
{
    const unsigned P = GetParam();
    reset();
    Counter prog(7);
    const std::thread::id me = std::this_thread::get_id();
    prog.begin(P);
    EXPECT_EQ(me, std::this_thread::get_id());
    EXPECT_EQ(static_cast<int>(P), spmd_calls.load());
    EXPECT_EQ(static_cast<int>(P) - 1, instances.load());
    EXPECT_EQ(static_cast<int>(P) - 1, destroyed.load());
    EXPECT_EQ(P, objects.size());
    EXPECT_EQ(1u, objects.count(&prog));
    EXPECT_EQ(P, pids.size());
    EXPECT_EQ(7, prog.tag_);
    EXPECT_EQ(static_cast<int>(P * (P - 1) / 2) + 7000, prog.result_);
    EXPECT_EQ(P, prog.seen_nprocs_);
}

// item 89: the default P is bsp_nprocs()
TEST(BspCppDefault, BeginUsesAllProcessors)
{
    reset();
    Counter prog(1);
    prog.begin();
    EXPECT_EQ(static_cast<int>(bsp_nprocs()), spmd_calls.load());
    EXPECT_EQ(bsp_nprocs(), prog.seen_nprocs_);
}

// a BSP_program started inside an SPMD section is a nested run
class Outer : public mcbsp::BSP_program {
protected:
    void spmd() override
    {
        if (bsp_pid() == 0) {
            Counter inner(3);
            inner.begin(2);
            EXPECT_EQ(3001, inner.result_);
        }
        bsp_sync();
        EXPECT_EQ(3u, bsp_nprocs());
    }
    BSP_program *newInstance() override { return new Outer(); }
};

TEST(BspCppNested, ProgramInsideAProgram)
{
    reset();
    Outer o;
    o.begin(3);
    EXPECT_EQ(2, spmd_calls.load());   // the inner Counter run of 2 processes
}

INSTANTIATE_TEST_SUITE_P(P, BspCpp, ::testing::Values(1u, 2u, 3u, 4u, 8u));

} // namespace
