// Item 2 in C++: MCBSP_COMPATIBILITY_MODE with <bsp.hpp> gives the Oxford
// signatures, and bsp_hpmove takes void ** and const void **.
#define MCBSP_COMPATIBILITY_MODE
#include <bsp.hpp>

#include <type_traits>

static_assert(std::is_same<decltype(bsp_pid()), int>::value, "bsp_pid returns int");
static_assert(std::is_same<decltype(bsp_nprocs()), int>::value, "bsp_nprocs returns int");

extern "C" int sstep_test_headers_oxford_cpp(void);
extern "C" int sstep_test_headers_oxford_cpp(void)
{
    void (*put)(int, const void *, const void *, int, int) = &bsp_put;
    void (*qs)(int *, int *) = &bsp_qsize;
    int (*hpm)(void **, void **) = &bsp_hpmove;
    int (*hpmc)(const void **, const void **) = &bsp_hpmove;
    void (*pr)(const void *, int) = &bsp_pushregister;
    int bad = !put + !qs + !hpm + !hpmc + !pr;
    if (bsp_nprocs() == 12345) {   // compiles, never runs
        const void *t, *p;
        void *u, *q;
        bad += bsp_hpmove(&t, &p) + bsp_hpmove(&u, &q);
    }
    return bad;
}
