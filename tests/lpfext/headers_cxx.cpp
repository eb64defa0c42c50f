// item 1: the extension headers as C++ (each alone would also do; together
// with <lpf/core.h> and <bsp.h>); macros and types as lpf-ext.md §1, §3
#include <lpf/tags.h>
#include <lpf/zero.h>
#include <lpf/noc.h>
#include <bsp.h>
#include <cstdint>
#include <type_traits>
static_assert(_LPF_TAGS_VERSION == 202500L, "tags version");
static_assert(LPF_ZERO_COST_SYNC == 202500L, "zero version");
static_assert(_LPF_NOC_VERSION == 202400L, "noc version");
static_assert(std::is_same<lpf_tag_t, std::uint32_t>::value, "lpf_tag_t");
int main()
{
    lpf_err_t (*f)(lpf_t, bool, lpf_tag_t *) = lpf_tag_create;
    lpf_err_t (*g)(lpf_t, size_t, size_t, lpf_sync_attr_t) = lpf_zero_set_expected;
    lpf_err_t (*h)(lpf_t, lpf_memslot_t, char **, size_t *) = lpf_noc_serialize_slot;
    return (f && g && h && LPF_INVALID_TAG == UINT32_MAX) ? 0 : 1;
}
