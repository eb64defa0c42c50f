/*
 * Checked mode (docs/checked.md). Switched on for the whole run by
 * SUPERSTEP_CHECK=1 (strict: the determinism warning becomes an error).
 *
 * At the call: remote bounds (against the sizes every peer told at the
 * syncs), a hash of each lpf_put / raw-pointer put source, deregistration
 * of a slot that a request of this superstep uses. At the sync, before the
 * exchange: the sources are hashed again (written since the call?), the
 * queue is folded into runs (requests to one peer, of one kind, contiguous
 * on both sides), and an internal superstep of the engine's own sync (the
 * user queue set aside, one core message per peer that has something to
 * learn) carries to every process: the global (de)registrations of the
 * superstep, the capacity in force, and the runs whose bytes lie there.
 * Every process then checks what concerns its memory: the message-queue
 * rule, agreement on global registrations, read-write conflicts. After the
 * exchange, the determinism checker looks for destination bytes written by
 * more than one request; a put whose destination now holds exactly its data
 * (same hash) lost nothing, so writes of equal values are not reported.
 */
#define _GNU_SOURCE
#include "checked.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define CHK_HASHED 4u      /* meta: hash taken at the call */
#define EV_DEREG 0x80000000u
#define HDR_MAGIC 0x43484b31u /* "CHK1" */
#define HDR_RANGED 1u

struct chk_meta {      /* 32 bytes: one per request */
    const char *local;
    uint64_t hash;
    lpf_memslot_t lslot;
    uint32_t step;     /* low bits of the superstep */
    uint32_t flags;
};

struct chk_ev {
    uint32_t what;   /* slot index | EV_DEREG */
    uint32_t where;  /* registrations: LOC_* of the address */
    uint64_t size;
    uint64_t addr;   /* registrations: the address registered */
    uint64_t key;    /* LOC_STATIC: module and offset in it, equal wherever the
                        same variable is registered (every rank, every thread) */
};

/* where a registered area lies: a program's or library's static data, the
 * registering thread's stack, anywhere else (heap, mappings) */
enum { LOC_NONE = 0, LOC_STATIC = 1, LOC_STACK = 2, LOC_HEAP = 3 };

/* a run: requests of one issuer to one peer, one kind, slot and flags,
 * contiguous on both sides */
struct chk_rec {
    uint8_t kind, flags;
    uint16_t pad;
    uint32_t slot;
    uint32_t rid, nreq;   /* first request's index at the issuer, count */
    uint64_t off, size, hash;
};

struct chk_hdr {
    uint32_t magic, from;
    uint32_t nev, nrec;
    uint64_t limit, step;
    uint32_t flags, pad;
};

/* a run as seen here: its bytes at this process start at `at` */
struct chk_desc {
    struct chk_rec r;
    lpf_pid_t issuer, peer;
    const char *at;
    int cons;   /* determinism: -1 unknown, 0/1 destination holds its data */
};

struct chk_iv {
    const char *lo, *hi;
    size_t d;
};

struct chk_buf { char *p; size_t n, cap; };
struct chk_rsz { size_t *s; uint32_t n; };

struct sstep_chk {
    int strict;
    struct chk_meta *meta; size_t nmeta;
    struct chk_ev *ev; size_t nev, evcap;
    uint64_t range_steps;
    uint64_t told_limit;
    struct chk_rsz *rsz;      /* [P] sizes peers registered */
    uint64_t *limit;          /* [P] capacity in force at each peer */
    struct chk_buf *out;      /* [P] */
    struct sstep_queue aux;   /* the internal superstep's queue */
    struct chk_desc *d; size_t nd, dcap;
    size_t nown;              /* d[0..nown): own runs */
    struct chk_iv *rd, *wr; size_t nrd, nwr, rdcap, wrcap;
    struct chk_ev *evin; size_t nevin, evincap;
    size_t *evoff, *evn;      /* [P] */
    struct { int local; uint32_t idx; } *rep; size_t nrep, repcap;
};

/* ------------------------------------------------------------------ */
/* Mode, helpers                                                        */
/* ------------------------------------------------------------------ */

/* Checked mode when SUPERSTEP_CHECK is not set: off, unless the program
 * links LPF's debug layer (-llpf_debug, tools/lpf/lpf_debug.c), whose
 * definition overrides this one. */
__attribute__((weak, visibility("default"))) const int SUPERSTEP_CHECK_DEFAULT = 0;

int sstep_chk_mode(void)
{
    static _Atomic int mode = -1;
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (SSTEP_LIKELY(m >= 0)) return m;
    const char *v = getenv("SUPERSTEP_CHECK");
    m = 0;
    if (v && *v) {
        if (!strcasecmp(v, "strict") || !strcmp(v, "2")) m = 2;
        else if (strcmp(v, "0") && strcasecmp(v, "off") && strcasecmp(v, "no")
                && strcasecmp(v, "false")) m = 1;
    } else if (!v) {
        m = *(const volatile int *)&SUPERSTEP_CHECK_DEFAULT ? 1 : 0;
    }
    atomic_store_explicit(&mode, m, memory_order_relaxed);
    return m;
}

static void *grow(void *p, size_t *cap, size_t want, size_t elem, struct sstep_ctx *ctx)
{
    if (want <= *cap) return p;
    size_t n = *cap ? *cap : 16;
    while (n < want) n *= 2;
    void *q = realloc(p, n * elem);
    if (!q) sstep_fatal(ctx, "lpf_sync", "checked mode: out of memory (%zu bytes)", n * elem);
    *cap = n;
    return q;
}

static inline uint64_t rd64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27; x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Fletcher-style over 64-bit words in four lanes: position-sensitive,
 * a few cycles per 32 bytes */
static uint64_t chk_hash(const void *data, size_t n)
{
    const char *p = data;
    if (n == 8) return mix(rd64(p) + 0x9e3779b97f4a7c15ull);
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 += rd64(p + i); b0 += a0;
        a1 += rd64(p + i + 8); b1 += a1;
        a2 += rd64(p + i + 16); b2 += a2;
        a3 += rd64(p + i + 24); b3 += a3;
    }
    for (; i + 8 <= n; i += 8) { a0 += rd64(p + i); b0 += a0; }
    if (i < n) {
        uint64_t t = 0;
        memcpy(&t, p + i, n - i);
        a1 += t; b1 += a1;
    }
    uint64_t h = mix(n);
    h = mix(h ^ a0); h = mix(h ^ a1); h = mix(h ^ a2); h = mix(h ^ a3);
    h = mix(h ^ b0); h = mix(h ^ b1); h = mix(h ^ b2); h = mix(h ^ b3);
    return h;
}

static const char *sync_name(const struct sstep_ctx *ctx)
{
    const char *p = ctx->put_name;
    if (p && !strncmp(p, "bsplib_", 7)) return "bsplib_sync";
    if (p && !strncmp(p, "bsp_", 4)) return "bsp_sync";
    return "lpf_sync";
}

static int is_bsp(const struct sstep_ctx *ctx)
{
    return ctx->put_name && !strncmp(ctx->put_name, "bsp", 3);
}

static const char *req_name(const struct sstep_ctx *ctx, int kind, unsigned flags)
{
    const char *p = ctx->put_name;
    if (kind == SSTEP_PUT) {
        if (flags & SSTEP_CHK_USER) return "lpf_put";
        if ((flags & SSTEP_CHK_PTR) && p && !strncmp(p, "bsplib_", 7)) return "bsplib_hpput";
        if ((flags & SSTEP_CHK_PTR) && p && !strncmp(p, "bsp_", 4)) return "bsp_hpput";
        return p ? p : "lpf_put";
    }
    if (flags & SSTEP_CHK_USER) return "lpf_get";
    return ctx->get_name ? ctx->get_name : "lpf_get";
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* a disagreement every process sees: the lowest pid reports it; the others
 * wait to be ended, and report themselves should that not come */
static void wait_for_reporter(const struct sstep_ctx *ctx)
{
    if (ctx->pid == 0) return;
    for (int i = 0; i < 100; ++i) sleep_ms(50);
}

/* which registration holds address p here (for messages) */
static void describe_addr(struct sstep_ctx *ctx, const char *p, char *buf, size_t n,
        size_t *off_out)
{
    struct sstep_slot_table *ts[2] = { &ctx->globals, &ctx->locals };
    for (int k = 0; k < 2; ++k) {
        struct sstep_slot_array *a = sstep_slots(ts[k]);
        for (uint32_t i = 0; i < a->size; ++i) {
            const struct sstep_slot *e = &a->e[i];
            if (e->state == SSTEP_SLOT_FREE || !e->base) continue;
            if (p >= e->base && p < e->base + (e->size ? e->size : 1)) {
                if (k == 0 && is_bsp(ctx))
                    snprintf(buf, n, "BSPlib variable %p (global slot %u, %zu bytes)",
                            (void *)e->base, i, e->size);
                else
                    snprintf(buf, n, "%s slot %u (%p, %zu bytes)", k ? "local" : "global",
                            i, (void *)e->base, e->size);
                *off_out = (size_t)(p - e->base);
                return;
            }
        }
    }
    snprintf(buf, n, "memory at %p", (const void *)p);
    *off_out = 0;
}

static void describe_req(const struct sstep_ctx *ctx, const struct chk_desc *d, char *buf, size_t n)
{
    const char *nm = req_name(ctx, d->r.kind, d->r.flags);
    if (d->r.kind == SSTEP_PUT)
        snprintf(buf, n, "%s by process %u to process %u (global slot %u, offset %llu, %llu bytes%s)",
                nm, d->issuer, d->peer, d->r.slot, (unsigned long long)d->r.off,
                (unsigned long long)d->r.size, d->r.nreq > 1 ? " in adjacent requests" : "");
    else
        snprintf(buf, n, "%s by process %u from process %u (global slot %u, offset %llu, %llu bytes%s)",
                nm, d->issuer, d->peer, d->r.slot, (unsigned long long)d->r.off,
                (unsigned long long)d->r.size, d->r.nreq > 1 ? " in adjacent requests" : "");
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */
/* ------------------------------------------------------------------ */

void sstep_chk_attach(struct sstep_ctx *ctx)
{
    int m = sstep_chk_mode();
    ctx->checked = 0;
    ctx->chk = NULL;
    if (!m) return;
    const lpf_pid_t P = ctx->nprocs;
    struct sstep_chk *x = calloc(1, sizeof *x);
    if (!x) return;
    x->strict = m == 2;
    x->rsz = calloc(P, sizeof *x->rsz);
    x->limit = calloc(P, sizeof *x->limit);
    x->out = calloc(P, sizeof *x->out);
    x->evoff = calloc(P, sizeof *x->evoff);
    x->evn = calloc(P, sizeof *x->evn);
    x->aux.peers = malloc((size_t)P * sizeof *x->aux.peers);
    x->aux.touched = malloc((size_t)P * sizeof *x->aux.touched);
    x->aux.reqs = malloc((size_t)P * sizeof *x->aux.reqs);
    if (!x->rsz || !x->limit || !x->out || !x->evoff || !x->evn || !x->aux.peers
            || !x->aux.touched || !x->aux.reqs) {
        ctx->chk = x;
        sstep_chk_detach(ctx);
        sstep_warn("checked mode: out of memory; context runs unchecked");
        return;
    }
    x->aux.alloc = P;
    for (lpf_pid_t i = 0; i < P; ++i) {
        struct sstep_peer_lists *pl = &x->aux.peers[i];
        memset(pl, 0, sizeof *pl);
        for (int k = 0; k < SSTEP_NKINDS; ++k) pl->head[k] = pl->tail[k] = SSTEP_NIL;
    }
    ctx->chk = x;
    ctx->checked = 1;
}

void sstep_chk_detach(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    if (!x) return;
    const lpf_pid_t P = ctx->nprocs;
    if (x->rsz) for (lpf_pid_t i = 0; i < P; ++i) free(x->rsz[i].s);
    if (x->out) for (lpf_pid_t i = 0; i < P; ++i) free(x->out[i].p);
    free(x->rsz); free(x->limit); free(x->out); free(x->evoff); free(x->evn);
    free(x->aux.peers); free(x->aux.touched); free(x->aux.reqs);
    free(x->meta); free(x->ev); free(x->d); free(x->rd); free(x->wr); free(x->evin);
    free(x->rep);
    free(x);
    ctx->chk = NULL;
    ctx->checked = 0;
}

/* ------------------------------------------------------------------ */
/* At the call                                                          */
/* ------------------------------------------------------------------ */

void sstep_chk_remote(struct sstep_ctx *ctx, const char *prim, int kind,
        lpf_pid_t pid, uint32_t slot, size_t off, size_t size)
{
    struct sstep_chk *x = ctx->chk;
    size_t rs = SIZE_MAX;
    if (pid == ctx->pid) {
        struct sstep_slot_array *a = sstep_slots(&ctx->globals);
        if (slot < a->size && a->e[slot].state == SSTEP_SLOT_GLOBAL) rs = a->e[slot].size;
    } else if (x->rsz[pid].n > slot) {
        rs = x->rsz[pid].s[slot];
    }
    if (rs == SIZE_MAX) return;
    if (SSTEP_UNLIKELY(off > rs || size > rs - off))
        sstep_fatal(ctx, prim, "remote %s out of bounds in superstep %llu: offset %zu + "
                "size %zu is past the %zu bytes that process %u registered for global "
                "slot %u", kind == SSTEP_PUT ? "destination" : "source",
                sstep_user_step(ctx), off, size, rs, pid, slot);
}

size_t sstep_chk_remote_size(const struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot)
{
    const struct sstep_chk *x = ctx->chk;
    if (!x || pid >= ctx->nprocs || x->rsz[pid].n <= slot) return SIZE_MAX;
    return x->rsz[pid].s[slot];
}

void sstep_chk_request(struct sstep_ctx *ctx, const char *prim, int kind,
        unsigned flags, lpf_pid_t pid, uint32_t slot, size_t off, size_t size,
        lpf_memslot_t lslot)
{
    struct sstep_chk *x = ctx->chk;
    sstep_chk_remote(ctx, prim, kind, pid, slot, off, size);
    size_t i = ctx->q.n - 1;
    if (i >= x->nmeta) x->meta = grow(x->meta, &x->nmeta, ctx->q.alloc > i ? ctx->q.alloc : i + 1,
            sizeof *x->meta, ctx);
    struct chk_meta *m = &x->meta[i];
    m->local = ctx->q.reqs[i].local;
    m->step = (uint32_t)ctx->superstep;
    m->flags = flags;
    m->lslot = lslot;
    if (kind == SSTEP_PUT) {
        m->flags |= CHK_HASHED;
        m->hash = chk_hash(m->local, size);
    }
}

/* the calling thread's stack, [lo, hi) (0, 0: unknown) */
static __thread uintptr_t stack_lo, stack_hi;
static __thread int stack_known;

static uint32_t locate(const void *p, uint64_t *key)
{
    *key = 0;
    if (!p) return LOC_NONE;
    const uintptr_t a = (uintptr_t)p;
    if (!stack_known) {
        pthread_attr_t at;
        void *lo;
        size_t sz;
        stack_known = 1;
        if (pthread_getattr_np(pthread_self(), &at) == 0) {
            if (pthread_attr_getstack(&at, &lo, &sz) == 0) {
                stack_lo = (uintptr_t)lo;
                stack_hi = (uintptr_t)lo + sz;
            }
            pthread_attr_destroy(&at);
        }
    }
    if (a >= stack_lo && a < stack_hi) return LOC_STACK;
    Dl_info di;
    if (dladdr(p, &di) && di.dli_fbase && di.dli_fname) {
        /* the module by the last part of its name (ranks may load it from
         * equal copies), and the offset in it */
        const char *b = strrchr(di.dli_fname, '/');
        b = b ? b + 1 : di.dli_fname;
        uint64_t h = 0xcbf29ce484222325ull;
        for (; *b; ++b) h = (h ^ (unsigned char)*b) * 0x100000001b3ull;
        *key = mix(h) ^ (uint64_t)(a - (uintptr_t)di.dli_fbase);
        return LOC_STATIC;
    }
    if (sstep_heap_key) *key = sstep_heap_key(p);
    return LOC_HEAP;
}

void sstep_chk_register(struct sstep_ctx *ctx, uint32_t idx, size_t size)
{
    struct sstep_chk *x = ctx->chk;
    x->ev = grow(x->ev, &x->evcap, x->nev + 1, sizeof *x->ev, ctx);
    uint64_t addr = 0, key = 0;
    uint32_t where = LOC_NONE;
    if (!(idx & EV_DEREG)) {
        struct sstep_slot_array *a = sstep_slots(&ctx->globals);
        if (idx < a->size) addr = (uint64_t)(uintptr_t)a->e[idx].base;
        if (size) where = locate((const void *)(uintptr_t)addr, &key);
    }
    x->ev[x->nev++] = (struct chk_ev){ idx, where, size, addr, key };
}

static const struct chk_meta *meta_of(const struct sstep_ctx *ctx, size_t i)
{
    const struct sstep_chk *x = ctx->chk;
    if (i >= x->nmeta) return NULL;
    const struct chk_meta *m = &x->meta[i];
    if (m->step != (uint32_t)ctx->superstep || m->local != ctx->q.reqs[i].local) return NULL;
    return m;
}

void sstep_chk_deregister(struct sstep_ctx *ctx, lpf_memslot_t h, int local, uint32_t idx)
{
    struct sstep_queue *q = &ctx->q;
    for (lpf_pid_t t = 0; t < q->ntouched; ++t) {
        lpf_pid_t pid = q->touched[t];
        for (int k = SSTEP_PUT; k <= SSTEP_GET; ++k)
            for (uint32_t i = q->peers[pid].head[k]; i != SSTEP_NIL; i = q->reqs[i].next) {
                const struct sstep_req *r = &q->reqs[i];
                const struct chk_meta *m = meta_of(ctx, i);
                int hit = (!local && r->slot == idx) || (m && m->lslot == h);
                if (!hit) continue;
                unsigned fl = m ? m->flags : 0;
                sstep_fatal(ctx, "lpf_deregister", "%s slot %#zx (index %u) is still used in "
                        "superstep %llu by %s %s process %u (global slot %u, offset %zu, "
                        "%zu bytes), issued before this call; a slot may not be deregistered "
                        "in a superstep in which a request uses it (deregister after the "
                        "next sync)", local ? "local" : "global", (size_t)h, idx,
                        sstep_user_step(ctx), req_name(ctx, k, fl),
                        k == SSTEP_PUT ? "to" : "from", pid, r->slot, r->off, r->size);
            }
    }
    if (!local) sstep_chk_register(ctx, idx | EV_DEREG, 0);
}

/* ------------------------------------------------------------------ */
/* The sync                                                             */
/* ------------------------------------------------------------------ */

static struct chk_desc *new_desc(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    x->d = grow(x->d, &x->dcap, x->nd + 1, sizeof *x->d, ctx);
    struct chk_desc *d = &x->d[x->nd++];
    d->cons = -1;
    return d;
}

/* Fold the queue into runs (own descs d[0..nown)), checking the hashes of
 * the sources taken at the call. */
static void build_runs(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    struct sstep_queue *q = &ctx->q;
    x->nd = 0;
    for (lpf_pid_t t = 0; t < q->ntouched; ++t) {
        lpf_pid_t pid = q->touched[t];
        for (int k = SSTEP_PUT; k <= SSTEP_GET; ++k) {
            size_t first = x->nd;
            struct chk_desc *cur = NULL;
            for (uint32_t i = q->peers[pid].head[k]; i != SSTEP_NIL; i = q->reqs[i].next) {
                const struct sstep_req *r = &q->reqs[i];
                const struct chk_meta *m = meta_of(ctx, i);
                unsigned fl = m ? m->flags : (k == SSTEP_GET ? SSTEP_CHK_PTR : 0);
                uint64_t h = 0;
                if (m && (fl & CHK_HASHED)) {
                    h = chk_hash(r->local, r->size);
                    if (SSTEP_UNLIKELY(h != m->hash))
                        sstep_fatal(ctx, req_name(ctx, k, fl), "the source of a put issued "
                                "in superstep %llu (to process %u, global slot %u, offset %zu, "
                                "%zu bytes, source %p) was written after the call and before "
                                "the sync; a put's source must not change until the sync "
                                "ends", sstep_user_step(ctx), pid, r->slot,
                                r->off, r->size, (void *)r->local);
                }
                fl &= SSTEP_CHK_USER | SSTEP_CHK_PTR;
                if (cur && cur->r.flags == fl && cur->r.slot == r->slot
                        && cur->r.off + cur->r.size == r->off
                        && cur->at + cur->r.size == r->local) {
                    cur->r.size += r->size;
                    cur->r.nreq++;
                    continue;
                }
                cur = new_desc(ctx);
                cur->r = (struct chk_rec){ (uint8_t)k, (uint8_t)fl, 0, r->slot, i, 1,
                        r->off, r->size, h };
                cur->issuer = ctx->pid;
                cur->peer = pid;
                cur->at = r->local;
            }
            if (k == SSTEP_PUT)
                for (size_t j = first; j < x->nd; ++j) {
                    struct chk_desc *d = &x->d[j];
                    const struct chk_meta *m = meta_of(ctx, d->r.rid);
                    if (d->r.nreq > 1 || !m || !(m->flags & CHK_HASHED))
                        d->r.hash = chk_hash(d->at, d->r.size);
                }
        }
    }
    x->nown = x->nd;
}

static void put_bytes(struct sstep_ctx *ctx, struct chk_buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n) c *= 2;
        char *np = realloc(b->p, c);
        if (!np) sstep_fatal(ctx, "lpf_sync", "checked mode: out of memory");
        b->p = np;
        b->cap = c;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* what process `to` learns from us: header, events, our runs into its memory */
static void build_out(struct sstep_ctx *ctx, int tell, int ranged)
{
    struct sstep_chk *x = ctx->chk;
    const lpf_pid_t P = ctx->nprocs;
    for (lpf_pid_t q = 0; q < P; ++q) x->out[q].n = 0;
    /* runs are grouped by peer */
    size_t j = 0;
    while (j < x->nown) {
        const lpf_pid_t to = x->d[j].peer;
        size_t e = j;
        while (e < x->nown && x->d[e].peer == to) ++e;
        struct chk_buf *b = &x->out[to];
        if (b->n == 0) {
            struct chk_hdr h = { HDR_MAGIC, ctx->pid, (uint32_t)x->nev, 0, ctx->q.limit,
                    ctx->superstep, ranged ? HDR_RANGED : 0, 0 };
            put_bytes(ctx, b, &h, sizeof h);
            if (x->nev) put_bytes(ctx, b, x->ev, x->nev * sizeof *x->ev);
        }
        for (size_t i = j; i < e; ++i) put_bytes(ctx, b, &x->d[i].r, sizeof x->d[i].r);
        struct chk_hdr *hp = (struct chk_hdr *)b->p;
        hp->nrec += (uint32_t)(e - j);
        j = e;
    }
    if (tell)
        for (lpf_pid_t q = 0; q < P; ++q) {
            struct chk_buf *b = &x->out[q];
            if (b->n) continue;
            struct chk_hdr h = { HDR_MAGIC, ctx->pid, (uint32_t)x->nev, 0, ctx->q.limit,
                    ctx->superstep, ranged ? HDR_RANGED : 0, 0 };
            put_bytes(ctx, b, &h, sizeof h);
            if (x->nev) put_bytes(ctx, b, x->ev, x->nev * sizeof *x->ev);
        }
}

static void aux_msg(struct sstep_queue *q, lpf_pid_t pid, char *p, size_t n)
{
    uint32_t i = (uint32_t)q->n++;
    struct sstep_req *r = &q->reqs[i];
    r->local = p;
    r->size = n;
    r->off = 0;
    r->slot = 0;
    r->next = SSTEP_NIL;
    struct sstep_peer_lists *pl = &q->peers[pid];
    if (pl->tail[SSTEP_MSG] == SSTEP_NIL) {
        q->touched[q->ntouched++] = pid;
        pl->head[SSTEP_MSG] = i;
    } else {
        q->reqs[pl->tail[SSTEP_MSG]].next = i;
    }
    pl->tail[SSTEP_MSG] = i;
    pl->count[SSTEP_MSG]++;
    pl->bytes[SSTEP_MSG] += n;
    q->kinds |= 1u << SSTEP_MSG;
}

/* take one process's message: events and runs into our memory */
static int take(struct sstep_ctx *ctx, const char *p, size_t n)
{
    struct sstep_chk *x = ctx->chk;
    struct chk_hdr h;
    if (n < sizeof h) return 0;
    memcpy(&h, p, sizeof h);
    if (h.magic != HDR_MAGIC || h.from >= ctx->nprocs) return 0;
    const char *ev = p + sizeof h;
    const char *rec = ev + (size_t)h.nev * sizeof(struct chk_ev);
    x->limit[h.from] = h.limit;
    x->evoff[h.from] = x->nevin;
    x->evn[h.from] = h.nev;
    if (h.nev) {
        x->evin = grow(x->evin, &x->evincap, x->nevin + h.nev, sizeof *x->evin, ctx);
        memcpy(x->evin + x->nevin, ev, (size_t)h.nev * sizeof(struct chk_ev));
        x->nevin += h.nev;
    }
    for (uint32_t i = 0; i < h.nrec; ++i) {
        struct chk_desc *d = new_desc(ctx);
        memcpy(&d->r, rec + (size_t)i * sizeof(struct chk_rec), sizeof d->r);
        d->issuer = h.from;
        d->peer = ctx->pid;
        d->at = sstep_resolve_global(ctx, d->r.slot, d->r.off, d->r.size);
        if (!d->at)
            sstep_remote_range_error(ctx, req_name(ctx, d->r.kind, d->r.flags), h.from,
                    d->r.slot, d->r.off, d->r.size);
    }
    return (h.flags & HDR_RANGED) != 0;
}

static int iv_cmp(const void *a, const void *b)
{
    const struct chk_iv *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void iv_sort(struct chk_iv *v, size_t n)
{
    for (size_t i = 1; i < n; ++i)
        if (v[i].lo < v[i - 1].lo) { qsort(v, n, sizeof *v, iv_cmp); return; }
}

static void add_iv(struct sstep_ctx *ctx, int write, size_t d)
{
    struct sstep_chk *x = ctx->chk;
    const struct chk_desc *ds = &x->d[d];
    if (ds->r.size == 0) return;
    struct chk_iv iv = { ds->at, ds->at + ds->r.size, d };
    if (write) {
        x->wr = grow(x->wr, &x->wrcap, x->nwr + 1, sizeof *x->wr, ctx);
        x->wr[x->nwr++] = iv;
    } else {
        x->rd = grow(x->rd, &x->rdcap, x->nrd + 1, sizeof *x->rd, ctx);
        x->rd[x->nrd++] = iv;
    }
}

static void ordinal(size_t k, char *buf, size_t n)
{
    const char *s = (k % 100 >= 11 && k % 100 <= 13) ? "th" : k % 10 == 1 ? "st"
            : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
    snprintf(buf, n, "%zu%s", k, s);
}

static void ev_text(const struct chk_ev *e, char *buf, size_t n)
{
    if (!e) snprintf(buf, n, "nothing");
    else if (e->what & EV_DEREG)
        snprintf(buf, n, "lpf_deregister of global slot %u", e->what & ~EV_DEREG);
    else
        snprintf(buf, n, "lpf_register_global (slot %u, %llu bytes)", e->what,
                (unsigned long long)e->size);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* the same multiset of values, in another order? (n small: sorted copies) */
static int permuted(const uint64_t *a, const uint64_t *b, size_t n, struct sstep_ctx *ctx)
{
    uint64_t *s = malloc(2 * n * sizeof *s);
    if (!s) sstep_fatal(ctx, sync_name(ctx), "checked mode: out of memory");
    memcpy(s, a, n * sizeof *s);
    memcpy(s + n, b, n * sizeof *s);
    qsort(s, n, sizeof *s, u64_cmp);
    qsort(s + n, n, sizeof *s, u64_cmp);
    int same = memcmp(s, s + n, n * sizeof *s) == 0;
    free(s);
    return same;
}

/* A registration's place as comparable between processes: static data by
 * module and offset (the same variable everywhere); on the registering
 * thread's stack by where it lies among the superstep's registrations of
 * the same size there (a frame's arrays lie in one order at every
 * process); a heap block by the call that made it and its number from that
 * call on its thread (checked_heap.c: addresses would not do, malloc reuses
 * freed blocks last-in first-out). 0: not compared. */
static uint64_t place_key(const struct chk_ev *l, size_t n, size_t k)
{
    const struct chk_ev *e = &l[k];
    if (e->where == LOC_STATIC) return mix(e->key ^ 0x5354415449430000ull);
    if (e->where == LOC_HEAP) return e->key ? mix(e->key ^ 0x4845415000000000ull) : 0;
    if (e->where != LOC_STACK) return 0;
    uint64_t rank = 0;
    for (size_t i = 0; i < n; ++i)
        if (!(l[i].what & EV_DEREG) && l[i].where == e->where && l[i].size == e->size
                && l[i].addr < e->addr)
            ++rank;
    return mix(((uint64_t)e->where << 56) ^ mix(e->size) ^ rank);
}

/* Two lists of the same (de)registrations of the same slots: did the two
 * processes register corresponding areas in different orders? Sizes may
 * differ per process, so the sign is the same sizes (or, in one address
 * space, the same addresses; or the same places, place_key) in another
 * order. Returns the position of the first difference, or SIZE_MAX. */
static size_t order_mismatch(struct sstep_ctx *ctx, const struct chk_ev *l0,
        const struct chk_ev *lq, size_t n, int *by_addr)
{
    size_t nr = 0;
    for (size_t k = 0; k < n; ++k) nr += !(l0[k].what & EV_DEREG);
    if (nr < 2) return SIZE_MAX;
    uint64_t *v = malloc(6 * nr * sizeof *v);
    if (!v) sstep_fatal(ctx, sync_name(ctx), "checked mode: out of memory");
    size_t *pos = malloc(nr * sizeof *pos);
    if (!pos) sstep_fatal(ctx, sync_name(ctx), "checked mode: out of memory");
    size_t j = 0;
    for (size_t k = 0; k < n; ++k) {
        if (l0[k].what & EV_DEREG) continue;
        v[j] = l0[k].size;
        v[nr + j] = lq[k].size;
        v[2 * nr + j] = l0[k].addr;
        v[3 * nr + j] = lq[k].addr;
        v[4 * nr + j] = place_key(l0, n, k);
        v[5 * nr + j] = place_key(lq, n, k);
        pos[j++] = k;
    }
    size_t at = SIZE_MAX;
    for (int w = 0; w < 3 && at == SIZE_MAX; ++w) {
        const uint64_t *a = v + 2 * w * nr, *b = a + nr;
        size_t first = 0;
        while (first < nr && a[first] == b[first]) ++first;
        if (first < nr && permuted(a, b, nr, ctx)) {
            at = pos[first];
            *by_addr = w;
        }
    }
    free(v);
    free(pos);
    return at;
}

static SSTEP_NORETURN void report_order(struct sstep_ctx *ctx, lpf_pid_t q, size_t k,
        const struct chk_ev *e0, const struct chk_ev *eq, int by_addr)
{
    const char *what = by_addr == 2 ? "variables" : by_addr ? "addresses" : "sizes";
    char o[32];
    size_t nth = 0;   /* registrations up to k */
    for (size_t i = 0; i <= k; ++i) nth += !(e0[i].what & EV_DEREG);
    ordinal(nth, o, sizeof o);
    wait_for_reporter(ctx);
    if (is_bsp(ctx))
        sstep_fatal(ctx, sync_name(ctx), "processes called bsp_push_reg in different orders in "
                "superstep %llu: the %s push of the superstep is variable %p (%llu bytes) at "
                "process 0 but variable %p (%llu bytes) at process %u, the same %s in "
                "another order (every process must push corresponding variables in the same "
                "order; data put into one would land in the other)", sstep_user_step(ctx), o,
                (void *)(uintptr_t)e0[k].addr, (unsigned long long)e0[k].size,
                (void *)(uintptr_t)eq[k].addr, (unsigned long long)eq[k].size, q, what);
    sstep_fatal(ctx, sync_name(ctx), "processes registered global slots in different orders in "
            "superstep %llu: the %s lpf_register_global of the superstep (slot %u) is %p "
            "(%llu bytes) at process 0 but %p (%llu bytes) at process %u, the same %s in "
            "another order (every process must register corresponding areas in the same "
            "order)", sstep_user_step(ctx), o, e0[k].what, (void *)(uintptr_t)e0[k].addr,
            (unsigned long long)e0[k].size, (void *)(uintptr_t)eq[k].addr,
            (unsigned long long)eq[k].size, q, what);
}

/* (d): every process has every process's list; compare with pid 0's */
static void check_agreement(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    const lpf_pid_t P = ctx->nprocs;
    const struct chk_ev *l0 = ctx->pid == 0 ? x->ev : x->evin + x->evoff[0];
    size_t n0 = ctx->pid == 0 ? x->nev : x->evn[0];
    for (lpf_pid_t q = 1; q < P; ++q) {
        const struct chk_ev *lq = q == ctx->pid ? x->ev : x->evin + x->evoff[q];
        size_t nq = q == ctx->pid ? x->nev : x->evn[q];
        size_t n = n0 < nq ? n0 : nq, k = 0;
        while (k < n && (l0[k].what & EV_DEREG) == (lq[k].what & EV_DEREG)
                && l0[k].what == lq[k].what) ++k;
        if (k == n && n0 == nq) {
            int by_addr = 0;
            size_t at = order_mismatch(ctx, l0, lq, n, &by_addr);
            if (at != SIZE_MAX) report_order(ctx, q, at, l0, lq, by_addr);
            continue;
        }
        /* BSPlib always checks the counts of pushes and pops at this very
         * sync and returns its error code (bsplib.md §8): no abort here */
        if (n0 != nq && is_bsp(ctx)) return;
        wait_for_reporter(ctx);
        char a[96], b[96], o[32];
        ev_text(k < n0 ? &l0[k] : NULL, a, sizeof a);
        ev_text(k < nq ? &lq[k] : NULL, b, sizeof b);
        ordinal(k + 1, o, sizeof o);
        sstep_fatal(ctx, sync_name(ctx), "processes disagree on global registrations in "
                "superstep %llu: process 0 made %zu global (de)registrations and process %u "
                "made %zu; the %s is %s at process 0 but %s at process %u (every process must "
                "register and deregister global slots in the same order)",
                sstep_user_step(ctx), n0, q, nq, o, a, b, q);
    }
}

static void apply_sizes(struct sstep_ctx *ctx, int ranged)
{
    struct sstep_chk *x = ctx->chk;
    for (lpf_pid_t q = 0; q < ctx->nprocs; ++q) {
        struct chk_rsz *r = &x->rsz[q];
        if (ranged) r->n = 0;
        if (q == ctx->pid) continue;
        const struct chk_ev *e = x->evin + x->evoff[q];
        for (size_t k = 0; k < x->evn[q]; ++k) {
            uint32_t idx = e[k].what & ~EV_DEREG;
            if (idx >= r->n) {
                uint32_t n = r->n ? r->n : 16;
                while (n <= idx) n *= 2;
                size_t *s = realloc(r->s, (size_t)n * sizeof *s);
                if (!s) sstep_fatal(ctx, "lpf_sync", "checked mode: out of memory");
                for (uint32_t i = r->n; i < n; ++i) s[i] = SIZE_MAX;
                r->s = s;
                r->n = n;
            }
            r->s[idx] = (e[k].what & EV_DEREG) ? SIZE_MAX : (size_t)e[k].size;
        }
    }
}

/* (e) a byte that one request reads and another writes, here */
static void check_conflicts(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    if (!x->nrd || !x->nwr) return;
    iv_sort(x->rd, x->nrd);
    /* writes are sorted already; running maximum of their ends */
    size_t w = 0;
    const char *maxhi = NULL;
    for (size_t i = 0; i < x->nrd; ++i) {
        const struct chk_iv *r = &x->rd[i];
        while (w < x->nwr && x->wr[w].lo < r->hi) {
            if (x->wr[w].hi > maxhi) maxhi = x->wr[w].hi;
            ++w;
        }
        if (!w || maxhi <= r->lo) continue;
        /* some write starting before r->hi ends after r->lo: find it */
        const struct chk_desc *rd = &x->d[r->d];
        for (size_t j = w; j-- > 0;) {
            const struct chk_iv *v = &x->wr[j];
            if (v->hi <= r->lo || v->lo >= r->hi) continue;
            const struct chk_desc *wd = &x->d[v->d];
            if (wd->issuer == rd->issuer && wd->r.rid == rd->r.rid && wd->r.kind == rd->r.kind)
                continue;   /* one request (a put onto itself) */
            const char *lo = v->lo > r->lo ? v->lo : r->lo;
            const char *hi = v->hi < r->hi ? v->hi : r->hi;
            char where[160], a[200], b[200];
            size_t off;
            describe_addr(ctx, lo, where, sizeof where, &off);
            describe_req(ctx, rd, a, sizeof a);
            describe_req(ctx, wd, b, sizeof b);
            sstep_fatal(ctx, sync_name(ctx), "read-write conflict in superstep %llu at process "
                    "%u: bytes [%zu, %zu) of %s are the source of %s and the destination of "
                    "%s; within one superstep no byte may be both read and written by requests",
                    sstep_user_step(ctx), ctx->pid, off,
                    off + (size_t)(hi - lo), where, a, b);
        }
    }
}

lpf_err_t sstep_chk_sync_begin(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    const lpf_pid_t P = ctx->nprocs, me = ctx->pid;
    int ranged = ctx->range_steps != x->range_steps;
    x->range_steps = ctx->range_steps;

    build_runs(ctx);
    int tell = x->nev || ranged || ctx->q.limit != x->told_limit;
    x->told_limit = ctx->q.limit;
    x->limit[me] = ctx->q.limit;
    build_out(ctx, tell, ranged);

    /* the internal superstep: our queue set aside, one message per peer */
    for (lpf_pid_t q = 0; q < P; ++q) x->evn[q] = 0;
    x->nevin = 0;
    int any_ranged = ranged;
    if (P > 1) {
        struct sstep_queue user = ctx->q;
        ctx->q = x->aux;
        ctx->q.nuser = 0;
        for (lpf_pid_t q = 0; q < P; ++q)
            if (q != me && x->out[q].n) aux_msg(&ctx->q, q, x->out[q].p, x->out[q].n);
        size_t pg = ctx->pending_globals;
        ctx->pending_globals = 0;
        struct sstep_sync_info info;
        memset(&info, 0, sizeof info);
        lpf_err_t rc = ctx->engine->sync(ctx, &info);
        ctx->pending_globals = pg;
        if (rc == LPF_SUCCESS)
            for (size_t k = 0; k < ctx->inbox.n; ++k)
                any_ranged |= take(ctx, ctx->inbox.msgs[k].data, ctx->inbox.msgs[k].size);
        ctx->inbox.n = ctx->inbox.next = 0;
        sstep_queue_reset(ctx);
        x->aux = ctx->q;
        ctx->q = user;
        if (rc != LPF_SUCCESS) return rc;
    }
    /* our runs into our own memory */
    if (x->out[me].n) take(ctx, x->out[me].p, x->out[me].n);

    apply_sizes(ctx, any_ranged);
    if (!any_ranged && P > 1) check_agreement(ctx);
    x->nev = 0;

    /* (b) the message-queue rule: issued + targeting us <= min capacity */
    uint64_t c = UINT64_MAX;
    lpf_pid_t cq = 0;
    for (lpf_pid_t q = 0; q < P; ++q)
        if (x->limit[q] < c) { c = x->limit[q]; cq = q; }
    size_t in = 0;
    for (size_t j = x->nown; j < x->nd; ++j)
        if (x->d[j].r.flags & SSTEP_CHK_USER) in += x->d[j].r.nreq;
    if (ctx->q.nuser + in > c)
        sstep_fatal(ctx, sync_name(ctx), "message-queue capacity exceeded in superstep %llu: "
                "this process issued %zu requests and is the target of %zu (lpf_put to it, "
                "lpf_get from it), %zu together, but the smallest capacity of the context "
                "is %llu (process %u's); call lpf_resize_message_queue on every process and "
                "sync first", sstep_user_step(ctx), ctx->q.nuser, in,
                ctx->q.nuser + in, (unsigned long long)c, cq);

    /* (e) reads and writes of our memory */
    x->nrd = x->nwr = 0;
    for (size_t j = 0; j < x->nd; ++j) {
        const struct chk_desc *d = &x->d[j];
        int own = j < x->nown;
        if (d->r.kind == SSTEP_PUT) {
            if (own) { if (d->r.flags) add_iv(ctx, 0, j); }
            else add_iv(ctx, 1, j);
        } else {
            if (own) add_iv(ctx, 1, j);
            else if (d->r.flags & SSTEP_CHK_USER) add_iv(ctx, 0, j);
        }
    }
    iv_sort(x->wr, x->nwr);
    check_conflicts(ctx);
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* After the exchange: the determinism checker                          */
/* ------------------------------------------------------------------ */

static int consistent(struct chk_desc *d)
{
    if (d->cons < 0) d->cons = chk_hash(d->at, d->r.size) == d->r.hash;
    return d->cons;
}

/* may a and b (overlapping writes) leave a result that depends on order? */
static int racy(struct chk_desc *a, struct chk_desc *b)
{
    int pa = a->r.kind == SSTEP_PUT, pb = b->r.kind == SSTEP_PUT;
    /* layers' gets are applied before every put */
    if (pa && !pb && !(b->r.flags & SSTEP_CHK_USER)) return 0;
    if (pb && !pa && !(a->r.flags & SSTEP_CHK_USER)) return 0;
    if (pa && pb) return !(consistent(a) && consistent(b));
    if (!pa && !pb)
        return !(a->peer == b->peer && a->r.slot == b->r.slot && a->r.off == b->r.off
                && a->r.size == b->r.size);
    return 1;
}

static void report_race(struct sstep_ctx *ctx, size_t i0, size_t i1, const char *lo,
        const char *hi)
{
    struct sstep_chk *x = ctx->chk;
    char where[160];
    size_t off;
    describe_addr(ctx, lo, where, sizeof where, &off);
    /* once per superstep and registration */
    int local = !strncmp(where, "local", 5);
    uint32_t key = 0;
    sscanf(strstr(where, "slot ") ? strstr(where, "slot ") + 5 : "0", "%u", &key);
    for (size_t k = 0; k < x->nrep; ++k)
        if (x->rep[k].local == local && x->rep[k].idx == key) return;
    x->rep = grow(x->rep, &x->repcap, x->nrep + 1, sizeof *x->rep, ctx);
    x->rep[x->nrep].local = local;
    x->rep[x->nrep].idx = key;
    x->nrep++;
    /* the writers of the range, in increasing pid order */
    char who[256];
    size_t n = 0;
    who[0] = 0;
    lpf_pid_t seen[32];
    size_t ns = 0;
    for (size_t j = i0; j < i1 && ns < 32; ++j) {
        const struct chk_iv *v = &x->wr[j];
        if (v->hi <= lo || v->lo >= hi) continue;
        lpf_pid_t p = x->d[v->d].issuer;
        size_t s = 0;
        while (s < ns && seen[s] != p) ++s;
        if (s == ns) seen[ns++] = p;
    }
    for (size_t a = 1; a < ns; ++a)
        for (size_t b = a; b > 0 && seen[b - 1] > seen[b]; --b) {
            lpf_pid_t t = seen[b]; seen[b] = seen[b - 1]; seen[b - 1] = t;
        }
    for (size_t s = 0; s < ns; ++s) {
        int k = snprintf(who + n, sizeof who - n, "%s%u", n ? ", " : "", seen[s]);
        if (k < 0 || (size_t)k >= sizeof who - n) break;
        n += (size_t)k;
    }
    const char *fmt = "%s in superstep %llu: bytes [%zu, %zu) of %s at process %u were "
            "written by more than one request, with different values, by processes %s; "
            "the result depends on the unspecified order in which they are applied%s";
    if (x->strict)
        sstep_fatal(ctx, sync_name(ctx), fmt, "nondeterministic write",
                sstep_user_step(ctx), off, off + (size_t)(hi - lo), where,
                ctx->pid, who, " (SUPERSTEP_CHECK=strict)");
    fflush(stdout);
    fprintf(stderr, "superstep: %s (process %u of %u): warning: ", sync_name(ctx), ctx->pid,
            ctx->nprocs);
    fprintf(stderr, fmt, "nondeterministic write", sstep_user_step(ctx), off,
            off + (size_t)(hi - lo), where, ctx->pid, who,
            " (SUPERSTEP_CHECK=strict makes this an error)");
    fprintf(stderr, "\n");
    fflush(stderr);
}

void sstep_chk_sync_end(struct sstep_ctx *ctx)
{
    struct sstep_chk *x = ctx->chk;
    x->nrep = 0;
    if (x->nwr < 2) return;
    for (size_t i = 0; i < x->nwr;) {
        const char *hi = x->wr[i].hi;
        size_t e = i + 1;
        while (e < x->nwr && x->wr[e].lo < hi) {
            if (x->wr[e].hi > hi) hi = x->wr[e].hi;
            ++e;
        }
        if (e - i >= 2) {
            size_t lim = e - i > 64 ? i + 64 : e;   /* bound the pairwise work */
            for (size_t a = i; a < lim; ++a)
                for (size_t b = a + 1; b < e && x->wr[b].lo < x->wr[a].hi; ++b) {
                    if (!racy(&x->d[x->wr[a].d], &x->d[x->wr[b].d])) continue;
                    const char *lo = x->wr[b].lo;
                    const char *h2 = x->wr[a].hi < x->wr[b].hi ? x->wr[a].hi : x->wr[b].hi;
                    report_race(ctx, i, e, lo, h2);
                    a = lim;
                    break;
                }
        }
        i = e;
    }
}
