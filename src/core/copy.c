/*
 * sstep_copy_bulk: a copy whose speed does not depend on where source and
 * destination lie (copy.h says why glibc's does). Unaligned loads and
 * stores aligned on the destination, four vectors per step; the first
 * vector and the last four are loaded before the loop and stored after
 * it, so that head and tail need no byte loops (up to 64 KiB, source and
 * destination at the same offset modulo 64 but not 32-byte aligned go
 * through `rep movsb` instead, see SSTEP_COPY_MOVSB_MAX). The loop is chosen once,
 * from the CPU's features (AVX2, else SSE2); SUPERSTEP_COPY=memcpy makes
 * it the C library's memmove (for comparisons). Overlapping ranges, and
 * copies from SSTEP_COPY_BULK_MAX on (glibc does not use `rep movsb` above
 * the L2 size on AMD cores, and may use non-temporal stores there), go to
 * memmove.
 */
#include "copy.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
# include <immintrin.h>
# define SSTEP_COPY_X86 1
#endif

#define SSTEP_COPY_BULK_MAX ((size_t)4 << 20)

enum { KIND_UNSET, KIND_MEMMOVE, KIND_SSE2, KIND_AVX2 };

static _Atomic int copy_kind;
#ifdef SSTEP_COPY_X86
/* the CPU has fast `rep movsb` (ERMS) */
static int copy_erms;
#endif

/* Up to this size, a copy whose source and destination lie at the same
 * offset modulo 64 bytes, but not on a 32-byte boundary, goes through
 * `rep movsb`: there it is 10-20 % faster than the vector loop (whose
 * head and tail stores then cross cache lines) while the data stays in
 * L1/L2, and it cannot meet its slow placement (the destination 1 to 63
 * bytes after the source modulo 4 KiB). Both 32-byte aligned, the vector
 * loop is the faster. */
#define SSTEP_COPY_MOVSB_MAX ((size_t)64 << 10)

static int choose_kind(void)
{
    int k = KIND_MEMMOVE;
    const char *e = getenv("SUPERSTEP_COPY");
    if (!(e && strcmp(e, "memcpy") == 0)) {
#ifdef SSTEP_COPY_X86
        __builtin_cpu_init();
        k = __builtin_cpu_supports("avx2") ? KIND_AVX2 : KIND_SSE2;
        unsigned a, b, c, d;
        __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
        if (a >= 7) {
            __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
            copy_erms = (b >> 9) & 1;
        }
# if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        copy_erms = 0;   /* the sanitizers see the vector loop's accesses, not the asm's */
# endif
#endif
    }
    atomic_store_explicit(&copy_kind, k, memory_order_relaxed);
    return k;
}

/* chosen at start-up; choose_kind() also runs on a first call that comes
 * before the constructors (from another constructor) */
__attribute__((constructor)) static void copy_init(void)
{
    choose_kind();
}

#ifdef SSTEP_COPY_X86
/* n >= 128, ranges apart */
__attribute__((target("avx2")))
static void copy_avx2(char *d, const char *s, size_t n)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)s);
    __m256i t0 = _mm256_loadu_si256((const __m256i *)(s + n - 32));
    __m256i t1 = _mm256_loadu_si256((const __m256i *)(s + n - 64));
    __m256i t2 = _mm256_loadu_si256((const __m256i *)(s + n - 96));
    __m256i t3 = _mm256_loadu_si256((const __m256i *)(s + n - 128));
    size_t skip = 32 - ((uintptr_t)d & 31);
    char *q = d + skip, *e = d + n - 128;
    const char *p = s + skip;
    for (; q < e; q += 128, p += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p);
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(p + 64));
        __m256i x = _mm256_loadu_si256((const __m256i *)(p + 96));
        _mm256_store_si256((__m256i *)q, a);
        _mm256_store_si256((__m256i *)(q + 32), b);
        _mm256_store_si256((__m256i *)(q + 64), c);
        _mm256_store_si256((__m256i *)(q + 96), x);
    }
    _mm256_storeu_si256((__m256i *)d, h);
    _mm256_storeu_si256((__m256i *)(d + n - 128), t3);
    _mm256_storeu_si256((__m256i *)(d + n - 96), t2);
    _mm256_storeu_si256((__m256i *)(d + n - 64), t1);
    _mm256_storeu_si256((__m256i *)(d + n - 32), t0);
}

/* n >= 64, ranges apart */
static void copy_sse2(char *d, const char *s, size_t n)
{
    __m128i h = _mm_loadu_si128((const __m128i *)s);
    __m128i t0 = _mm_loadu_si128((const __m128i *)(s + n - 16));
    __m128i t1 = _mm_loadu_si128((const __m128i *)(s + n - 32));
    __m128i t2 = _mm_loadu_si128((const __m128i *)(s + n - 48));
    __m128i t3 = _mm_loadu_si128((const __m128i *)(s + n - 64));
    size_t skip = 16 - ((uintptr_t)d & 15);
    char *q = d + skip, *e = d + n - 64;
    const char *p = s + skip;
    for (; q < e; q += 64, p += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(p + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + 32));
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 48));
        _mm_store_si128((__m128i *)q, a);
        _mm_store_si128((__m128i *)(q + 16), b);
        _mm_store_si128((__m128i *)(q + 32), c);
        _mm_store_si128((__m128i *)(q + 48), x);
    }
    _mm_storeu_si128((__m128i *)d, h);
    _mm_storeu_si128((__m128i *)(d + n - 64), t3);
    _mm_storeu_si128((__m128i *)(d + n - 48), t2);
    _mm_storeu_si128((__m128i *)(d + n - 32), t1);
    _mm_storeu_si128((__m128i *)(d + n - 16), t0);
}
#endif

void sstep_copy_bulk(char *dst, const char *src, size_t n)
{
    int k = atomic_load_explicit(&copy_kind, memory_order_relaxed);
    if (__builtin_expect(k == KIND_UNSET, 0)) k = choose_kind();
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    int apart = d >= s + n || s >= d + n;
    if (k == KIND_MEMMOVE || !apart || n < 128 || n >= SSTEP_COPY_BULK_MAX) {
        memmove(dst, src, n);
        return;
    }
#ifdef SSTEP_COPY_X86
    if (((d - s) & 63) == 0 && (d & 31) != 0 && n <= SSTEP_COPY_MOVSB_MAX && copy_erms) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
    if (k == KIND_AVX2) copy_avx2(dst, src, n);
    else copy_sse2(dst, src, n);
#endif
}

const char *sstep_copy_kind(void)
{
    int k = atomic_load_explicit(&copy_kind, memory_order_relaxed);
    if (k == KIND_UNSET) k = choose_kind();
    return k == KIND_AVX2 ? "avx2" : k == KIND_SSE2 ? "sse2" : "memmove";
}
