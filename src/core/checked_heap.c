/*
 * Checked mode: where each heap block came from, so that two equal-size heap
 * arrays pushed (registered) in different orders on different processes can
 * be told apart (checked.c, place_key).
 *
 * A heap block has no address that means the same thing on every process,
 * and malloc hands freed blocks out again last-in first-out, so neither
 * addresses nor their order identify "the same array". What does is how it
 * was made: the code that called malloc (its module and offset) and how many
 * blocks the calling thread had already taken from that call site. An SPMD
 * program makes its arrays with the same calls in the same order on every
 * process, whatever the heap's state.
 *
 * So the shared library wraps malloc, calloc, realloc and free (glibc calls
 * the wrapper for its own allocations too, and the wrapper calls glibc's
 * allocator by its __libc_ names). Outside checked mode each wrapper is one
 * predictable branch. In checked mode (decided once, when the library is
 * loaded) every block's start is recorded with its call site and sequence
 * number in a table of its own (mmap'd, never malloc'd, under a spinlock).
 *
 * Only in the shared library: a static link that pulled these definitions
 * would clash with a static libc's, and a sanitizer's own malloc is found
 * before ours (sanitizer builds leave this file out). Without it
 * sstep_heap_key (weak in checked.c) is absent and heap blocks are not
 * compared, as before.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "checked.h"
#include "core_internal.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);


static int tracking;   /* set once, in the constructor */

/* ---- the calling thread's count per call site ------------------------- */

#define SITES 256
struct site_count { uintptr_t site; uint32_t n; };
/* mapped at the thread's first allocation in checked mode (a pointer, not
 * the table, in thread-local storage: the library's static TLS must stay
 * small enough for a dlopen) */
static __thread struct site_count *sites;

/* the block number this thread takes next from this call site (UINT32_MAX:
 * more call sites than the table holds: not identified) */
static uint32_t next_seq(uintptr_t site)
{
    if (!sites) {
        void *m = mmap(NULL, SITES * sizeof *sites, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return UINT32_MAX;
        sites = m;
    }
    size_t h = (size_t)((site * 0x9e3779b97f4a7c15ull) >> 56) % SITES;
    for (size_t k = 0; k < SITES; ++k, h = (h + 1) % SITES) {
        if (sites[h].site == site) return sites[h].n++;
        if (sites[h].site == 0) {
            sites[h].site = site;
            sites[h].n = 1;
            return 0;
        }
    }
    return UINT32_MAX;
}

/* ---- blocks: start -> (call site, number), open addressing -------------- */

struct block { uintptr_t p, site; uint32_t seq; };
static struct block *tab;
static size_t cap, used;   /* cap: a power of two */
static atomic_flag lock = ATOMIC_FLAG_INIT;
#define MAX_CAP ((size_t)1 << 26)

static void take_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void drop_lock(void) { atomic_flag_clear_explicit(&lock, memory_order_release); }

static size_t slot_of(uintptr_t p) { return (size_t)((p >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1); }

static void put(struct block b)
{
    size_t i = slot_of(b.p);
    while (tab[i].p && tab[i].p != b.p) i = (i + 1) & (cap - 1);
    if (!tab[i].p) ++used;
    tab[i] = b;
}

/* twice the room (0: no memory; the caller stops recording) */
static int grow(void)
{
    size_t ncap = cap ? 2 * cap : (size_t)1 << 16;
    if (ncap > MAX_CAP) return 0;
    void *m = mmap(NULL, ncap * sizeof *tab, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 0;
    struct block *old = tab;
    size_t ocap = cap;
    tab = m;
    cap = ncap;
    used = 0;
    for (size_t i = 0; i < ocap; ++i)
        if (old[i].p) put(old[i]);
    if (old) munmap(old, ocap * sizeof *old);
    return 1;
}

static void note(void *p, void *site)
{
    const uint32_t seq = next_seq((uintptr_t)site);
    take_lock();
    if (2 * (used + 1) > cap && !grow()) {
        tracking = 0;   /* out of room: identify nothing from here on */
        drop_lock();
        return;
    }
    put((struct block){ (uintptr_t)p, (uintptr_t)site, seq });
    drop_lock();
}

/* remove p (linear probing: shift the entries behind it back) */
static void forget(void *ptr)
{
    const uintptr_t p = (uintptr_t)ptr;
    take_lock();
    if (cap) {
        size_t i = slot_of(p);
        while (tab[i].p && tab[i].p != p) i = (i + 1) & (cap - 1);
        if (tab[i].p) {
            size_t j = i;
            for (;;) {
                tab[i].p = 0;
                for (;;) {
                    j = (j + 1) & (cap - 1);
                    if (!tab[j].p) goto done;
                    const size_t k = slot_of(tab[j].p);
                    /* j's home k lies cyclically in (i, j]: it stays */
                    if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
                    break;
                }
                tab[i] = tab[j];
                i = j;
            }
done:
            --used;
        }
    }
    drop_lock();
}

/* ---- the wrappers ------------------------------------------------------- */

__attribute__((visibility("default"))) void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    if (SSTEP_UNLIKELY(tracking) && p) note(p, __builtin_return_address(0));
    return p;
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t m)
{
    void *p = __libc_calloc(n, m);
    if (SSTEP_UNLIKELY(tracking) && p) note(p, __builtin_return_address(0));
    return p;
}

__attribute__((visibility("default"))) void *realloc(void *old, size_t n)
{
    if (SSTEP_UNLIKELY(tracking) && old) forget(old);
    void *p = __libc_realloc(old, n);
    if (SSTEP_UNLIKELY(tracking) && p) note(p, __builtin_return_address(0));
    return p;
}

__attribute__((visibility("default"))) void free(void *p)
{
    if (SSTEP_UNLIKELY(tracking) && p) forget(p);
    __libc_free(p);
}

/* a child of fork must not inherit the table's lock held by another thread */
static void fork_prepare(void) { take_lock(); }
static void fork_done(void) { drop_lock(); }

__attribute__((constructor)) static void heap_start(void)
{
    if (!sstep_chk_mode()) return;
    const char *v = getenv("SUPERSTEP_CHECK_HEAP");
    if (v && !strcmp(v, "0")) return;
    /* only where these wrappers are the program's malloc (the library was
     * linked, not dlopen'ed after libc: Python's extensions); there the
     * thread-local pointer to the counts sits in the static TLS block, and
     * reading it never allocates */
    Dl_info mine, found;
    void *const m = dlsym(RTLD_DEFAULT, "malloc");
    if (!m || !dladdr((void *)(uintptr_t)&heap_start, &mine) || !dladdr(m, &found)
            || mine.dli_fbase != found.dli_fbase)
        return;
    pthread_atfork(fork_prepare, fork_done, fork_done);
    tracking = 1;
}

/* The identity of the heap block that starts at p, the same on every process
 * that made it the same way: its call site's module (by name) and offset,
 * and the block's number from that site on the thread that made it. 0: not
 * a recorded block's start. */
uint64_t sstep_heap_key(const void *p)
{
    if (!p || !cap) return 0;
    uintptr_t site = 0;
    uint32_t seq = 0;
    take_lock();
    size_t i = slot_of((uintptr_t)p);
    while (tab[i].p && tab[i].p != (uintptr_t)p) i = (i + 1) & (cap - 1);
    if (tab[i].p) {
        site = tab[i].site;
        seq = tab[i].seq;
    }
    drop_lock();
    if (!site || seq == UINT32_MAX) return 0;
    Dl_info di;
    if (!dladdr((void *)site, &di) || !di.dli_fbase || !di.dli_fname) return 0;
    const char *b = strrchr(di.dli_fname, '/');
    b = b ? b + 1 : di.dli_fname;
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *b; ++b) h = (h ^ (unsigned char)*b) * 0x100000001b3ull;
    h ^= (uint64_t)(site - (uintptr_t)di.dli_fbase) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)seq << 32 ^ seq;
    return h ? h : 1;
}
