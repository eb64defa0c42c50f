// Items 1, 4: <pub.h> in C (headers_c.c) and C++.
#include <pub.h>
#include <gtest/gtest.h>
#include <type_traits>

extern "C" int pub_test_c_names(void);

static_assert(std::is_same<pbsp, tbsp *>::value, "pbsp is tbsp *");
static_assert(sizeof(tbsp) == 8 * sizeof(void *), "tbsp holds 8 pointers");

TEST(PubHeaders, Item01_04_NamesAndTypes)
{
    EXPECT_EQ(pub_test_c_names(), 1);
    EXPECT_EQ(&bsp_send, &pub_send);
    EXPECT_EQ(&bsp_hpput, &pub_hpput);
    EXPECT_EQ(bspop_addint, &pub_op_addint);
    static const tbspop op = BSPOP_INIT(double, nullptr);
    EXPECT_EQ(op.size, sizeof(double));
}
