/*
 * The library's copy of bulk data (staging of buffered puts, the delivery
 * of puts and gets, the MPI engine's apply): small copies go through the
 * compiler's memcpy; copies from SSTEP_COPY_BULK_MIN bytes on go through
 * sstep_copy_bulk, whose vector loop is as fast for every placement of
 * source and destination. glibc's memcpy switches to `rep movsb` from
 * about 2 KiB up to the L2 size on x86; on AMD Zen cores that runs at a
 * fraction of the vector loop's speed when the destination lies 1 to 15
 * bytes after the source modulo 4 KiB, a placement a program cannot avoid
 * (two equal malloc'd buffers sit exactly so). docs/performance.md has the
 * figures.
 */
#ifndef SUPERSTEP_COPY_H
#define SUPERSTEP_COPY_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
# define SSTEP_COPY_HIDDEN __attribute__((visibility("hidden")))
#else
# define SSTEP_COPY_HIDDEN
#endif

/* below this, the compiler's memcpy/memmove (glibc's vector code: it uses
 * `rep movsb` only from 2048 bytes on) */
#define SSTEP_COPY_BULK_MIN 2048

/* Copies n bytes; the ranges may overlap (memmove semantics). */
SSTEP_COPY_HIDDEN void sstep_copy_bulk(char *dst, const char *src, size_t n);

/* Which loop sstep_copy_bulk runs: "avx2", "sse2" or "memmove" (the
 * latter where SUPERSTEP_COPY=memcpy asks for the C library's copy, or on
 * other CPUs). */
SSTEP_COPY_HIDDEN const char *sstep_copy_kind(void);

/* copy with a fast path for the small sizes fine-grained programs use */
static inline void sstep_copy(char *dst, const char *src, size_t n)
{
    switch (n) {
    case 8: { uint64_t v; __builtin_memcpy(&v, src, 8); __builtin_memcpy(dst, &v, 8); return; }
    case 4: { uint32_t v; __builtin_memcpy(&v, src, 4); __builtin_memcpy(dst, &v, 4); return; }
    case 16: { uint64_t v[2]; __builtin_memcpy(v, src, 16); __builtin_memcpy(dst, v, 16); return; }
    default:
        if (n >= SSTEP_COPY_BULK_MIN) sstep_copy_bulk(dst, src, n);
        else if (n) __builtin_memmove(dst, src, n);
    }
}

#endif
