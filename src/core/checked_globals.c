/*
 * Checked mode on the MPI and hybrid engines: globals set in main.
 *
 * On those engines main runs on rank 0 only; the other ranks run the
 * program's initialisers and wait for sections. A value main writes into a
 * global (a size parsed from argv, a pointer to an allocation) therefore
 * exists on rank 0 only: the other ranks see the initial value and compute
 * a wrong answer, or follow a NULL pointer. At the first section over the
 * ranks, checked mode compares the program's own writable data between
 * rank 0 and the others and names each global that differs.
 *
 * What is compared: the writable PT_LOAD segments of the executable (the
 * first object dl_iterate_phdr reports: .data, .bss and alike), less its
 * RELRO part (read-only once the program runs). Shared libraries, the
 * Superstep library among them, keep their own state and are not looked
 * at; in a static link (this file's own state lies in the executable) the
 * library's own symbols are left out by their names and files (left_out
 * below).
 *
 * How: each rank hashes its data in blocks of 4 KiB; rank 0's hashes are
 * broadcast and the blocks that differ anywhere are OR-reduced; rank 0
 * then broadcasts the bytes of those blocks (at most MAX_BLOCKS), and every
 * rank finds the bytes that differ and the symbols (from the executable's
 * .symtab, else .dynsym) that hold them; a reduction gives rank 0, per
 * symbol, the number of ranks where it differs and the first of them.
 *
 * False positives avoided: an aligned 8-byte word that holds an address
 * mapped in its own process on both sides is a pointer, equal or not
 * (address-space randomisation places objects differently on every rank):
 * it is not compared; a pointer on one side and none (NULL, a number) on
 * the other is a difference. Symbols of the C and C++ runtimes copied into
 * the executable (stdout, environ, optind, ...: names with '@', '__'
 * prefixes, the std namespace, guard variables) and bytes that no symbol
 * covers are left out (with a symbol table).
 */
#define _GNU_SOURCE
#include "checked_globals.h"

#ifdef SUPERSTEP_HAVE_MPI

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 4096u
#define MAX_BLOCKS 256u

struct gsym {
    size_t lo, hi;        /* offsets in the concatenated data */
    const char *name;
    const char *file;     /* source file of a static symbol, else NULL */
};

struct region {
    uintptr_t lo, hi;     /* addresses in this process */
    size_t off;           /* offset of lo in the concatenated data */
};

static struct {
    int state;            /* 0 not loaded, 1 loaded, -1 unusable */
    struct region reg[16];
    int nreg;
    size_t total;
    struct gsym *sym;
    size_t nsym;
    int have_symtab;
    int static_link;      /* the library's own data lie in the executable */
    void *map;
    size_t maplen;
} G;

/* ------------------------------------------------------------------ */
/* The executable's data and symbols                                    */
/* ------------------------------------------------------------------ */

struct first_obj {
    uintptr_t base;
    const ElfW(Phdr) *phdr;
    int phnum;
    int found;
};

static int first_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct first_obj *f = data;
    f->base = (uintptr_t)info->dlpi_addr;
    f->phdr = info->dlpi_phdr;
    f->phnum = info->dlpi_phnum;
    f->found = 1;
    return 1;
}

static void add_region(uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo || G.nreg >= (int)(sizeof G.reg / sizeof G.reg[0])) return;
    G.reg[G.nreg].lo = lo;
    G.reg[G.nreg].hi = hi;
    G.nreg++;
}

/* the library's own files (a static link puts them into the executable) */
static const char *const lib_files[] = {
    "api.c", "context.c", "copy.c", "checked.c", "checked_globals.c", "errors.c",
    "launcher.c", "machine.c", "pubext.c", "profile.c", "watchdog.c", "affinity.c",
    "pt_hook.c", "pt_range.c", "pt_sync.c", "pthread_engine.c", "bsplib.c", "bsp.c",
    "bsmp.c", "collectives.c", "html.c", "report.c", "trace.c", "docdir.c", "srcline.c",
    "summary.c", "load.c", "predict.c", NULL
};
static const char *const lib_prefixes[] = {
    "sstep_", "SSTEP_", "lpf_", "LPF_", "bsp_", "BSP_", "bsplib_", "mcbsp_", "pub_", "PUB_",
    "mpi_", "pt_", "hy_", "lx_", "pf_", "chk_", NULL
};
/* the C and C++ runtimes' state copied into the executable, compiler
 * helpers, the C++ standard library, gtest */
static const char *const rt_prefixes[] = {
    "__", "_ZGV", "_ZNSt", "_ZSt", "_ZN9__gnu_cxx", "_ZN7testing", "_ZTV", "_ZTI", "_ZTS",
    "_IO_", "environ", "optarg", "optind", "opterr", "optopt", "program_invocation",
    "stdin", "stdout", "stderr", "completed.", "dtor_idx", "tzname", "timezone", "daylight",
    "signgam", NULL
};

static int has_prefix(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; ++i)
        if (strncmp(s, list[i], strlen(list[i])) == 0) return 1;
    return 0;
}

static int left_out(const char *name, const char *file)
{
    if (!name || !*name || strchr(name, '@')) return 1;
    if (has_prefix(name, rt_prefixes)) return 1;
    const char *b = NULL;
    if (file) {
        b = strrchr(file, '/');
        b = b ? b + 1 : file;
        if (strcmp(b, "crtstuff.c") == 0) return 1;
    }
    if (!G.static_link) return 0;
    if (has_prefix(name, lib_prefixes)) return 1;
    if (b) {
        for (int i = 0; lib_files[i]; ++i)
            if (strcmp(b, lib_files[i]) == 0) return 1;
        if (has_prefix(b, lib_prefixes)) return 1;   /* mpi_*.c, pt_*.c, hy_*.c, ... */
    }
    return 0;
}

static int gsym_cmp(const void *a, const void *b)
{
    const struct gsym *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* offset of address a in the concatenated data, or SIZE_MAX */
static size_t data_off(uintptr_t a)
{
    for (int i = 0; i < G.nreg; ++i)
        if (a >= G.reg[i].lo && a < G.reg[i].hi) return G.reg[i].off + (size_t)(a - G.reg[i].lo);
    return SIZE_MAX;
}

static void load_symbols(uintptr_t base)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
        close(fd);
        return;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    G.map = m;
    G.maplen = (size_t)st.st_size;
    const unsigned char *img = m;
    const ElfW(Ehdr) *eh = m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0
            || eh->e_shentsize != sizeof(ElfW(Shdr))
            || eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > G.maplen)
        return;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(img + eh->e_shoff);
    const ElfW(Shdr) *tab = NULL;
    for (int pass = 0; pass < 2 && !tab; ++pass)
        for (unsigned i = 0; i < eh->e_shnum; ++i)
            if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) {
                tab = &sh[i];
                G.have_symtab = pass == 0;
                break;
            }
    if (!tab || tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(ElfW(Sym))) return;
    const ElfW(Shdr) *strs = &sh[tab->sh_link];
    if (tab->sh_offset + tab->sh_size > G.maplen || strs->sh_offset + strs->sh_size > G.maplen)
        return;
    const ElfW(Sym) *sy = (const ElfW(Sym) *)(img + tab->sh_offset);
    size_t n = tab->sh_size / sizeof(ElfW(Sym));
    const char *str = (const char *)(img + strs->sh_offset);
    size_t strsz = strs->sh_size;
    G.sym = calloc(n ? n : 1, sizeof *G.sym);
    if (!G.sym) return;
    const char *file = NULL;
    for (size_t i = 0; i < n; ++i) {
        unsigned type = ELF64_ST_TYPE(sy[i].st_info), bind = ELF64_ST_BIND(sy[i].st_info);
        if (sy[i].st_name >= strsz) continue;
        const char *name = str + sy[i].st_name;
        if (memchr(name, '\0', strsz - sy[i].st_name) == NULL) continue;
        if (type == STT_FILE) {
            file = name;
            continue;
        }
        if (bind != STB_LOCAL) file = NULL;
        if (type != STT_OBJECT || sy[i].st_shndx == SHN_UNDEF || sy[i].st_size == 0) continue;
        if (left_out(name, bind == STB_LOCAL ? file : NULL)) continue;
        uintptr_t a = base + (uintptr_t)sy[i].st_value;
        size_t lo = data_off(a);
        if (lo == SIZE_MAX) continue;
        size_t hi = data_off(a + sy[i].st_size - 1);
        hi = hi == SIZE_MAX ? lo + 1 : hi + 1;
        G.sym[G.nsym].lo = lo;
        G.sym[G.nsym].hi = hi;
        G.sym[G.nsym].name = name;
        G.sym[G.nsym].file = bind == STB_LOCAL ? file : NULL;
        G.nsym++;
    }
    qsort(G.sym, G.nsym, sizeof *G.sym, gsym_cmp);
}

static void load(void)
{
    if (G.state) return;
    G.state = -1;
    struct first_obj f = { 0, NULL, 0, 0 };
    dl_iterate_phdr(first_cb, &f);
    if (!f.found) return;
    uintptr_t rlo = 0, rhi = 0;
    for (int i = 0; i < f.phnum; ++i)
        if (f.phdr[i].p_type == PT_GNU_RELRO) {
            rlo = f.base + f.phdr[i].p_vaddr;
            rhi = rlo + f.phdr[i].p_memsz;
        }
    for (int i = 0; i < f.phnum; ++i) {
        const ElfW(Phdr) *ph = &f.phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t lo = f.base + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (rhi > rlo && rlo < hi && rhi > lo) {
            add_region(lo, rlo > lo ? rlo : lo);
            add_region(rhi < hi ? rhi : hi, hi);
        } else {
            add_region(lo, hi);
        }
    }
    size_t off = 0;
    for (int i = 0; i < G.nreg; ++i) {
        G.reg[i].off = off;   /* a multiple of 8: words stay aligned */
        off += ((size_t)(G.reg[i].hi - G.reg[i].lo) + 7) & ~(size_t)7;
    }
    G.total = off;
    if (G.total == 0) return;
    G.static_link = data_off((uintptr_t)&G) != SIZE_MAX;
    load_symbols(f.base);
    G.state = 1;
}

/* ------------------------------------------------------------------ */
/* Pointers: addresses mapped in this process                           */
/* ------------------------------------------------------------------ */

struct maps { uintptr_t *lo, *hi; size_t n; };

static void maps_read(struct maps *mp)
{
    mp->lo = mp->hi = NULL;
    mp->n = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return;
    size_t cap = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) != 2) continue;
        if (mp->n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            uintptr_t *l = realloc(mp->lo, nc * sizeof *l);
            if (!l) break;
            mp->lo = l;
            uintptr_t *h = realloc(mp->hi, nc * sizeof *h);
            if (!h) break;
            mp->hi = h;
            cap = nc;
        }
        mp->lo[mp->n] = a;
        mp->hi[mp->n] = b;
        mp->n++;
    }
    fclose(f);
}

static int is_ptr(const struct maps *mp, uint64_t w)
{
    if (w < 0x10000u || w >= 0x800000000000ull) return 0;
    size_t a = 0, b = mp->n;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (w < mp->lo[m]) b = m;
        else if (w >= mp->hi[m]) a = m + 1;
        else return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Blocks                                                               */
/* ------------------------------------------------------------------ */

/* the program's memory is read word by word through volatile loads: no
 * memcpy, which a sanitizer intercepts (AddressSanitizer's redzones
 * between globals are part of .data/.bss; ThreadSanitizer would take the
 * read of another thread's variable for a race) */
__attribute__((no_sanitize_address, no_sanitize_thread, noinline))
static void copy_in(unsigned char *out, uintptr_t from, size_t n)
{
    size_t i = 0;
    if ((from & 7) == 0)
        for (; i + 8 <= n; i += 8) {
            uint64_t w = *(const volatile uint64_t *)(from + i);
            memcpy(out + i, &w, 8);
        }
    for (; i < n; ++i) out[i] = *(const volatile unsigned char *)(from + i);
}

/* len bytes of the data at offset off (zeros between regions) */
static void data_read(size_t off, unsigned char *out, size_t len)
{
    memset(out, 0, len);
    for (int i = 0; i < G.nreg; ++i) {
        size_t rlo = G.reg[i].off, rhi = rlo + (size_t)(G.reg[i].hi - G.reg[i].lo);
        size_t a = off > rlo ? off : rlo, b = off + len < rhi ? off + len : rhi;
        if (a < b) copy_in(out + (a - off), G.reg[i].lo + (a - rlo), b - a);
    }
}

/* a block's bytes and, per 8-byte word (at data offsets multiple of 8:
 * every rank's regions start at the same page offsets), whether it holds
 * a pointer */
static size_t block_get(size_t b, const struct maps *mp, unsigned char *bytes,
        unsigned char *ptr)
{
    size_t off = (size_t)b * BLOCK;
    size_t len = G.total - off < BLOCK ? G.total - off : BLOCK;
    data_read(off, bytes, len);
    memset(ptr, 0, BLOCK / 8);
    for (size_t w = 0; w + 8 <= len; w += 8) {
        uint64_t v;
        memcpy(&v, bytes + w, 8);
        if (is_ptr(mp, v)) ptr[w / 8] = 1;
    }
    return len;
}

static uint64_t block_hash(size_t b, const struct maps *mp, unsigned char *bytes,
        unsigned char *ptr)
{
    size_t len = block_get(b, mp, bytes, ptr);
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t w = 0;
    for (; w + 8 <= len; w += 8) {
        uint64_t v;
        memcpy(&v, bytes + w, 8);
        if (ptr[w / 8]) v = 0x5054525054525054ull;   /* any pointer */
        h = (h ^ v) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; w < len; ++w) h = (h ^ bytes[w]) * 0x100000001b3ull;
    return h;
}

/* the first symbol with lo > off */
static size_t sym_upper(size_t off)
{
    size_t a = 0, b = G.nsym;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (G.sym[m].lo <= off) a = m + 1;
        else b = m;
    }
    return a;
}

/* symbols overlapping [lo, hi): indices in [*s0, *s1) whose hi > lo (a
 * symbol that starts more than 64 symbols before lo is not looked for) */
static void sym_range(size_t lo, size_t hi, size_t *s0, size_t *s1)
{
    size_t u = sym_upper(lo);
    *s0 = u > 64 ? u - 64 : 0;
    *s1 = sym_upper(hi - 1);
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* index of symbol s in the sorted candidates, or -1 */
static long cand_find(const size_t *cand, size_t nc, size_t s)
{
    size_t a = 0, b = nc;
    while (a < b) {
        size_t m = (a + b) / 2;
        if (cand[m] == s) return (long)m;
        if (cand[m] < s) a = m + 1;
        else b = m;
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* The comparison                                                       */
/* ------------------------------------------------------------------ */

static void say(const char *what, size_t size, const char *file, int count, int first,
        int others)
{
    char where[300] = "";
    if (file) snprintf(where, sizeof where, ", in %s", file);
    fprintf(stderr, "superstep: checked mode: global %s (%zu bytes%s) holds another value "
            "on %d of the %d other MPI ranks (first: rank %d) than on rank 0 when the first "
            "SPMD section starts: on the MPI and hybrid engines main runs on rank 0 only, so "
            "what main writes into a global stays there; send the value from "
            "process 0 in the first superstep (LPF: process 0 gets lpf_args_t's input and "
            "lpf_puts it; BSPlib: bsp_put, then bsp_sync)\n", what, size, where, count,
            others, first);
}

int sstep_chk_globals_mpi(MPI_Comm comm, int rank, int P, unsigned long machine_p)
{
    if (P <= 1) return 0;
    const uint64_t pvals[2] = { (uint64_t)P, (uint64_t)machine_p };
    load();
    /* every rank runs the same executable: agree on whether to compare */
    unsigned long long sz[2] = { G.state == 1 ? (unsigned long long)G.total : 0, 0 };
    sz[1] = ~sz[0];
    MPI_Allreduce(MPI_IN_PLACE, sz, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    if (sz[0] == 0 || sz[0] != ~sz[1]) return 0;
    const size_t nb = (G.total + BLOCK - 1) / BLOCK;
    uint64_t *h = malloc(nb * sizeof *h);
    unsigned char *diff = calloc(nb, 1);
    unsigned char *bytes = malloc(BLOCK), *ptr = malloc(BLOCK / 8);
    struct maps mp;
    maps_read(&mp);
    int ok = h && diff && bytes && ptr;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    int result = 0;
    unsigned char *sent = NULL;
    size_t *cand = NULL;
    int *first = NULL, *cnt = NULL;
    if (!ok) goto out;
    for (size_t b = 0; b < nb; ++b) h[b] = block_hash(b, &mp, bytes, ptr);
    uint64_t *h0 = rank == 0 ? h : malloc(nb * sizeof *h0);
    ok = h0 != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        if (h0 != h) free(h0);
        goto out;
    }
    MPI_Bcast(h0, (int)(nb * sizeof *h0), MPI_BYTE, 0, comm);
    if (rank != 0)
        for (size_t b = 0; b < nb; ++b) diff[b] = h0[b] != h[b];
    if (h0 != h) free(h0);
    MPI_Allreduce(MPI_IN_PLACE, diff, (int)nb, MPI_BYTE, MPI_BOR, comm);
    size_t nd = 0, more = 0;
    for (size_t b = 0; b < nb; ++b)
        if (diff[b]) {
            if (nd < MAX_BLOCKS) diff[b] = 2, nd++;
            else more++;
        }
    if (nd == 0) goto out;

    /* rank 0's bytes and pointer words of the differing blocks */
    const size_t unit = BLOCK + BLOCK / 8;
    sent = malloc(nd * unit);
    ok = sent != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) goto out;
    if (rank == 0)
        for (size_t b = 0, k = 0; b < nb; ++b)
            if (diff[b] == 2) {
                block_get(b, &mp, sent + k * unit, sent + k * unit + BLOCK);
                k++;
            }
    MPI_Bcast(sent, (int)(nd * unit), MPI_BYTE, 0, comm);

    /* the candidate symbols: every symbol that overlaps a differing block
     * (the same list on every rank) */
    size_t nc = 0, capc = 64;
    cand = malloc(capc * sizeof *cand);
    for (size_t b = 0; cand && b < nb; ++b) {
        if (diff[b] != 2) continue;
        size_t lo = b * BLOCK, hi = lo + BLOCK, s0, s1;
        sym_range(lo, hi, &s0, &s1);
        for (size_t s = s0; s < s1; ++s) {
            if (G.sym[s].hi <= lo) continue;
            if (nc == capc) {
                size_t *c2 = realloc(cand, 2 * capc * sizeof *c2);
                if (!c2) { free(cand); cand = NULL; break; }
                cand = c2;
                capc *= 2;
            }
            cand[nc++] = s;
        }
    }
    if (cand) {
        qsort(cand, nc, sizeof *cand, size_cmp);
        size_t u = 0;
        for (size_t k = 0; k < nc; ++k)
            if (u == 0 || cand[u - 1] != cand[k]) cand[u++] = cand[k];
        nc = u;
    }
    /* the same candidates everywhere (the same executable on every host) */
    unsigned long long ncs[2] = { cand ? (unsigned long long)nc : ~0ull, 0 };
    ncs[1] = ~ncs[0];
    MPI_Allreduce(MPI_IN_PLACE, ncs, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    if (!cand || ncs[0] != ~ncs[1] || nc > (size_t)INT_MAX - 2) goto out;
    /* first[k]: the lowest rank where candidate k differs; cnt[k]: how many;
     * the last two entries: bytes no symbol covers (count, first offset) */
    first = malloc((nc + 2) * sizeof *first);
    cnt = calloc(nc + 2, sizeof *cnt);
    ok = first && cnt;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) goto out;
    for (size_t k = 0; k < nc + 2; ++k) first[k] = INT_MAX;
    if (rank != 0) {
        int unnamed = 0;
        for (size_t b = 0, i = 0; b < nb; ++b) {
            if (diff[b] != 2) continue;
            const unsigned char *b0 = sent + i * unit, *p0 = b0 + BLOCK;
            i++;
            size_t len = block_get(b, &mp, bytes, ptr);
            for (size_t x = 0; x < len; ++x) {
                if (b0[x] == bytes[x]) continue;
                size_t w = x / 8;
                if ((w + 1) * 8 <= len && p0[w] && ptr[w]) {
                    x = (w + 1) * 8 - 1;   /* pointers on both sides */
                    continue;
                }
                size_t off = b * BLOCK + x, s0, s1;
                int named = 0;
                sym_range(off, off + 1, &s0, &s1);
                for (size_t s = s0; s < s1; ++s) {
                    if (G.sym[s].hi <= off) continue;
                    long k = cand_find(cand, nc, s);
                    if (k < 0) continue;
                    named = 1;
                    cnt[k] = 1;
                    first[k] = rank;
                }
                if (!named) {
                    unnamed++;
                    if (first[nc + 1] == INT_MAX)
                        first[nc + 1] = off < (size_t)INT_MAX ? (int)off : INT_MAX - 1;
                }
            }
        }
        /* the P of bsp_begin(P) (MulticoreBSP's hello world): a global that
         * holds the number of processes on rank 0 and 0 here; bsp_begin
         * ignores its argument on the other processes */
        for (size_t k = 0; k < nc; ++k) {
            const struct gsym *g = &G.sym[cand[k]];
            size_t len = g->hi - g->lo, b = g->lo / BLOCK;
            if (!cnt[k] || !(len == 1 || len == 2 || len == 4 || len == 8)
                    || (g->hi - 1) / BLOCK != b || diff[b] != 2)
                continue;
            size_t i = 0;
            for (size_t c = 0; c < b; ++c) i += diff[c] == 2;
            uint64_t v0 = 0, vr = 0;
            memcpy(&v0, sent + i * unit + (g->lo - b * BLOCK), len);
            data_read(g->lo, (unsigned char *)&vr, len);
            for (int j = 0; j < 2; ++j)
                if (vr == 0 && pvals[j] && v0 == pvals[j]) {
                    cnt[k] = 0;
                    first[k] = INT_MAX;
                }
        }
        cnt[nc] = unnamed;
        if (unnamed) first[nc] = rank;
    }
    MPI_Allreduce(MPI_IN_PLACE, first, (int)(nc + 2), MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, cnt, (int)(nc + 2), MPI_INT, MPI_SUM, comm);
    for (size_t k = 0; k < nc; ++k)
        if (cnt[k]) result++;
    if (!G.have_symtab && cnt[nc]) result++;
    if (rank == 0 && result) {
        fflush(stdout);
        for (size_t k = 0; k < nc; ++k)
            if (cnt[k]) say(G.sym[cand[k]].name, G.sym[cand[k]].hi - G.sym[cand[k]].lo,
                    G.sym[cand[k]].file, cnt[k], first[k], P - 1);
        if (!G.have_symtab && cnt[nc]) {
            char what[96];
            snprintf(what, sizeof what, "data at offset %d of the program's .data/.bss "
                    "(no symbol table: the executable is stripped)", first[nc + 1]);
            say(what, (size_t)cnt[nc], NULL, 1, first[nc], P - 1);
        }
        if (more)
            fprintf(stderr, "superstep: checked mode: %zu more blocks of 4 KiB of the "
                    "program's globals differ between the processes (not looked at)\n", more);
        fflush(stderr);
    }
    /* the lines are out before any rank ends the job */
    if (result) MPI_Barrier(comm);
out:
    free(h);
    free(diff);
    free(bytes);
    free(ptr);
    free(sent);
    free(cand);
    free(first);
    free(cnt);
    free(mp.lo);
    free(mp.hi);
    return result;
}

#endif
