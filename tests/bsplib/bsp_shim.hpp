// A small stand-in for the part of GoogleTest the BSPlib tests use, for
// running the same test sources on a distributed engine (one OS process per
// BSP process, e.g. bsprun --engine mpi -n P bsp_checks_drma --procs P).
//
// gtest cannot run there: only rank 0 runs main, and the test bodies are
// lambdas that live in rank 0's memory. With this shim every test has an
// index; rank 0 runs the tests, and at the start of every run pid 0 tells
// the other processes which test (and which parameter) it is; they build
// their own instance of the test and execute its body up to the run, whose
// SPMD part they then execute (see bsp_test.hpp). Failed checks print a line
// "FAIL ..." on stdout in whichever process they happen; rank 0 prints
// "PASS name" / "SKIP name" per test and "ALL DONE" at the end.
#pragma once
#pragma GCC system_header

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define BSPTEST_SHIM 1

namespace shim {

// ---- printing values ------------------------------------------------------

template <typename T, typename = void>
struct printable : std::false_type {};
template <typename T>
struct printable<T, decltype(void(std::declval<std::ostream &>() << std::declval<const T &>()))>
    : std::true_type {};

template <typename T>
std::string show(const T &v)
{
    if constexpr (std::is_same<T, unsigned char>::value || std::is_same<T, signed char>::value
            || std::is_same<T, char>::value) {
        return std::to_string(static_cast<int>(v));
    } else if constexpr (printable<T>::value) {
        std::ostringstream os;
        os << v;
        return os.str();
    } else {
        return "(value)";
    }
}

// ---- failures ---------------------------------------------------------------

inline int &failures()
{
    static thread_local int n = 0;
    return n;
}

inline std::string &current_name()
{
    static thread_local std::string n;   // per thread: the hybrid engine runs several processes in one
    return n;
}

inline void report(const char *file, int line, const std::string &what)
{
    const char *base = std::strrchr(file, '/');
    failures()++;
    std::ostringstream os;
    os << "FAIL " << current_name() << " " << (base ? base + 1 : file) << ":" << line << ": "
       << what << "\n";
    std::fputs(os.str().c_str(), stdout);
    std::fflush(stdout);
}

struct Message {
    std::ostringstream os;
    Message() = default;
    Message(const Message &o) { os << o.os.str(); }
    template <typename T>
    Message &operator<<(const T &v)
    {
        os << show(v);
        return *this;
    }
};

struct Reporter {
    const char *file;
    int line;
    std::string what;
    void operator=(const Message &m) const
    {
        std::string extra = m.os.str();
        report(file, line, extra.empty() ? what : what + " -- " + extra);
    }
};

struct Skipper {
    bool *flag;
    void operator=(const Message &) const { *flag = true; }
};

struct Result {
    bool ok;
    std::string what;
    explicit operator bool() const { return ok; }
};

#define SHIM_CMP_FN(name, op)                                                         \
    template <typename A, typename B>                                                 \
    Result name(const A &a, const B &b, const char *ea, const char *eb)               \
    {                                                                                 \
        if (a op b) return { true, {} };                                              \
        return { false, std::string(ea) + " " #op " " + eb + " failed: " + show(a)    \
                + " vs " + show(b) };                                                 \
    }
SHIM_CMP_FN(cmp_eq, ==)
SHIM_CMP_FN(cmp_ne, !=)
SHIM_CMP_FN(cmp_lt, <)
SHIM_CMP_FN(cmp_le, <=)
SHIM_CMP_FN(cmp_gt, >)
SHIM_CMP_FN(cmp_ge, >=)
#undef SHIM_CMP_FN

inline Result cmp_true(bool c, const char *e, bool want)
{
    if (c == want) return { true, {} };
    return { false, std::string(want ? "expected true: " : "expected false: ") + e };
}

// ---- tests ----------------------------------------------------------------

struct TestBase {
    virtual ~TestBase() = default;
    virtual void TestBody() = 0;
    bool skipped_ = false;
};

struct TestEntry {
    std::string name;                 // Suite.Name or Prefix/Suite.Name/k
    std::function<std::unique_ptr<TestBase>()> make;
    unsigned procs;                   // the parameter's process count (0: plain test)
};

inline std::vector<TestEntry> &entries()
{
    static std::vector<TestEntry> e;
    return e;
}

// parameterised tests: bodies and parameter lists meet at run time
template <typename Fixture>
struct Registry {
    using Param = typename Fixture::ParamType;
    struct Pending {
        std::string name;
        std::function<Fixture *()> make;
    };
    static std::vector<Pending> &tests()
    {
        static std::vector<Pending> t;
        return t;
    }
    static std::vector<std::pair<std::string, std::vector<Param>>> &params()
    {
        static std::vector<std::pair<std::string, std::vector<Param>>> p;
        return p;
    }
};

template <typename P>
unsigned procs_of(const P &p)
{
    if constexpr (std::is_integral<P>::value) return static_cast<unsigned>(p);
    else return static_cast<unsigned>(std::get<0>(p));
}

// collected from every Registry<F> before main runs the tests
inline std::vector<std::function<void()>> &finalizers()
{
    static std::vector<std::function<void()>> f;
    return f;
}

template <typename Fixture>
struct Finalize {
    Finalize()
    {
        static bool once = false;
        if (once) return;
        once = true;
        finalizers().push_back([] {
            using R = Registry<Fixture>;
            for (auto &inst : R::params())
                for (auto &t : R::tests())
                    for (size_t k = 0; k < inst.second.size(); ++k) {
                        auto param = inst.second[k];
                        auto make = t.make;
                        entries().push_back({ inst.first + "/" + t.name + "/" + std::to_string(k),
                                [make, param]() {
                                    Fixture *f = make();
                                    f->param_ = param;
                                    return std::unique_ptr<TestBase>(f);
                                },
                                procs_of(param) });
                    }
        });
    }
};

// every test, parameterised ones expanded (after static initialisation;
// on every process: on a distributed engine only rank 0 runs main)
inline std::vector<TestEntry> &all_entries()
{
    // once, even when several threads of a process ask (the hybrid engine)
    static const bool done = [] {
        for (auto &f : finalizers()) f();
        return true;
    }();
    (void)done;
    return entries();
}

// the test rank 0 runs now (its index in entries()), for the other processes
inline int &current_index()
{
    static int i = -1;
    return i;
}

// another process of a run: build our own instance of test idx and run its
// body up to the run (which then executes the SPMD part; see bsp_test.hpp)
inline void run_sibling(int idx)
{
    if (idx < 0 || static_cast<size_t>(idx) >= all_entries().size()) {
        std::fprintf(stderr, "shim: bad test index %d\n", idx);
        std::abort();
    }
    current_name() = entries()[idx].name;
    std::unique_ptr<TestBase> t = entries()[idx].make();
    t->TestBody();
}

} // namespace shim

namespace testing {

class Test : public shim::TestBase {};

template <typename T>
class TestWithParam : public shim::TestBase {
public:
    using ParamType = T;
    const T &GetParam() const { return param_; }
    T param_{};
};

template <typename T, typename... R>
std::vector<T> Values(T a, R... r)
{
    return std::vector<T>{ a, static_cast<T>(r)... };
}

template <typename A, typename B>
std::vector<std::tuple<A, B>> Combine(const std::vector<A> &a, const std::vector<B> &b)
{
    std::vector<std::tuple<A, B>> v;
    for (const A &x : a)
        for (const B &y : b) v.emplace_back(x, y);
    return v;
}

template <typename C>
C ValuesIn(const C &c) { return c; }

} // namespace testing

// ---- the macros -----------------------------------------------------------

#define SHIM_BLOCKER_ switch (0) case 0: default:
#define SHIM_CHECK_(result, ret) \
    SHIM_BLOCKER_ if (const ::shim::Result shim_r_ = (result)) ; \
    else ret ::shim::Reporter{ __FILE__, __LINE__, shim_r_.what } = ::shim::Message()

#define EXPECT_EQ(a, b) SHIM_CHECK_(::shim::cmp_eq((a), (b), #a, #b), )
#define EXPECT_NE(a, b) SHIM_CHECK_(::shim::cmp_ne((a), (b), #a, #b), )
#define EXPECT_LT(a, b) SHIM_CHECK_(::shim::cmp_lt((a), (b), #a, #b), )
#define EXPECT_LE(a, b) SHIM_CHECK_(::shim::cmp_le((a), (b), #a, #b), )
#define EXPECT_GT(a, b) SHIM_CHECK_(::shim::cmp_gt((a), (b), #a, #b), )
#define EXPECT_GE(a, b) SHIM_CHECK_(::shim::cmp_ge((a), (b), #a, #b), )
#define EXPECT_TRUE(c) SHIM_CHECK_(::shim::cmp_true(static_cast<bool>(c), #c, true), )
#define EXPECT_FALSE(c) SHIM_CHECK_(::shim::cmp_true(static_cast<bool>(c), #c, false), )
#define ASSERT_EQ(a, b) SHIM_CHECK_(::shim::cmp_eq((a), (b), #a, #b), return)
#define ASSERT_NE(a, b) SHIM_CHECK_(::shim::cmp_ne((a), (b), #a, #b), return)
#define ASSERT_GE(a, b) SHIM_CHECK_(::shim::cmp_ge((a), (b), #a, #b), return)
#define ASSERT_TRUE(c) SHIM_CHECK_(::shim::cmp_true(static_cast<bool>(c), #c, true), return)
#define ASSERT_FALSE(c) SHIM_CHECK_(::shim::cmp_true(static_cast<bool>(c), #c, false), return)
#define SCOPED_TRACE(x) ((void)0)
#define GTEST_SKIP() return ::shim::Skipper{ &skipped_ } = ::shim::Message()

#define SHIM_CLASS_(suite, name) suite##_##name##_ShimTest

#define TEST(suite, name)                                                              \
    class SHIM_CLASS_(suite, name) : public ::testing::Test {                            \
    public:                                                                            \
        void TestBody() override;                                                      \
    };                                                                                 \
    static const bool shim_reg_##suite##_##name = [] {                                 \
        ::shim::entries().push_back({ #suite "." #name,                                \
                [] { return std::unique_ptr<::shim::TestBase>(new SHIM_CLASS_(suite, name)); }, \
                0 });                                                                  \
        return true;                                                                   \
    }();                                                                               \
    void SHIM_CLASS_(suite, name)::TestBody()

#define TEST_P(fixture, name)                                                          \
    class SHIM_CLASS_(fixture, name) : public fixture {                                  \
    public:                                                                            \
        void TestBody() override;                                                      \
    };                                                                                 \
    static const bool shim_reg_##fixture##_##name = [] {                               \
        ::shim::Registry<fixture>::tests().push_back({ #fixture "." #name,             \
                [] { return static_cast<fixture *>(new SHIM_CLASS_(fixture, name)); } }); \
        static ::shim::Finalize<fixture> fin;                                          \
        return true;                                                                   \
    }();                                                                               \
    void SHIM_CLASS_(fixture, name)::TestBody()

#define INSTANTIATE_TEST_SUITE_P(prefix, fixture, gen, ...)                            \
    static const bool shim_inst_##prefix##_##fixture = [] {                            \
        ::shim::Registry<fixture>::params().push_back({ #prefix, (gen) });             \
        static ::shim::Finalize<fixture> fin;                                          \
        return true;                                                                   \
    }()
