/*
 * The MPI engine: one BSP process per MPI rank.
 *
 * A sync of episode e (docs/mpi.md has the full design):
 *
 *  1. Every process sends every peer ONE first message: a 64-byte header
 *     (episode number, the agreement value `check`, section sizes) followed,
 *     when it fits in the peer's pre-posted receive buffer, by the combined
 *     body of everything it has for that peer: new global registrations,
 *     all small puts with their data (compact 8-byte headers, adjacent puts
 *     to one slot merged into one record), get requests and small messages.
 *     The receives for episode e were posted at the end of episode e-1, so
 *     the message lands directly in a buffer of ours; tags carry the episode
 *     parity, which keeps a fast process's next superstep apart.
 *  2. Once the first messages of all peers are in (that is the barrier; a
 *     peer that left the section sends "gone" instead and everybody's sync
 *     fails, nobody hangs), the superstep is certain to complete, and only
 *     now the rest moves: bodies too large for the first message, requests
 *     of `big` bytes and more straight from and into user memory (no
 *     staging copy; receives into overlapping destinations go through a
 *     scratch buffer so that each request lands whole), get replies.
 *     Sends are posted in the Latin-square order pid+1, pid+2, ... so that
 *     not every process addresses the same destination at once.
 *  3. Each process applies what lands in its memory, in one order: gets
 *     first (every get reads its source before any put of the superstep is
 *     applied there), then puts source by source in issue order (small ones
 *     from the received bodies, then the direct ones). Write conflicts are
 *     thereby resolved as one serialisation. Remote ranges are checked by
 *     the process owning the memory.
 *
 * A process leaving its SPMD function sends every peer a "gone" header
 * with its number of completed supersteps and then drains the section:
 * it receives from every peer until that peer's "gone", so no message is
 * left unmatched and the next section can reuse the communicator. The
 * section's result (all processes synced equally often, none failed) is
 * known to every process at that point.
 */
#define _GNU_SOURCE
#include "mpi_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Constants and wire format                                            */
/* ------------------------------------------------------------------ */

/* tags: kind + episode parity */
enum { T_FIRST = 0, T_BODY = 2, T_GDATA = 4, T_PDATA = 6, T_MDATA = 8 };
#define TAG(kind, par) ((kind) + (par))
/* direct gets (bsp_direct_get), outside the superstep structure */
enum { T_DGREQ = 20, T_DGREP = 21 };

struct dgreq {
    uint32_t slot;
    uint32_t pad_;
    uint64_t off;
    uint64_t size;
};

#define CHUNK ((size_t)1 << 30)      /* MPI counts are int: larger transfers are split */

#define H_GONE 1u        /* the sender left the section (check = supersteps done) */
#define H_FAILED 2u      /* ... in the failure state */
#define H_REHOOK 4u      /* this episode is a rehook, not a sync */
#define H_SEPARATE 8u    /* the body follows as its own message */
#define H_EMPTY 16u      /* no body at all */
#define H_SHMBODY 32u    /* the body lies in the sender's shared body segment */

struct fhdr {
    uint64_t episode;
    uint64_t check;       /* sync: agreement value; gone: supersteps completed */
    uint32_t flags;
    uint32_t nreg;        /* registration records (16 bytes each) */
    uint32_t nget;        /* get records */
    uint32_t nmsg;        /* message records */
    uint64_t put_bytes;   /* sizes of the body's sections */
    uint64_t get_bytes;
    uint64_t msg_bytes;
    uint64_t gsmall;      /* bytes of the sender's small gets from us (our reply) */
    uint64_t body_off;    /* H_SHMBODY: offset of the body in the sender's segment half */
};
_Static_assert(sizeof(struct fhdr) == 72, "first-message header is 72 bytes");

struct regrec {
    uint32_t slot;
    uint32_t pad_;
    uint64_t size;
};

/* Request records (puts, gets): a compact 8-byte header
 *     w0 = offset, w1 = slot << 16 | size          (bit 31 of w1 clear)
 * for slot < 0x7fff, size <= 0xffff, offset < 2^32 with inline data, else a
 * 28-byte long header
 *     w0 = flags (bit 0: direct), w1 = 0x80000000, u32 slot, u64 off, u64 size.
 * Messages come in runs of equal size: u32 count | MSG_RUN, u32 size, then
 * the count payloads back to back; a direct message is u32 0x80000000 and
 * its u64 size. */
#define REC_LONG 0x80000000u
#define REC_DIRECT 1u
#define LONG_REC 28
#define MSG_RUN 0x40000000u
#define MSG_RUN_MAX 0x3fffffffu

/* ------------------------------------------------------------------ */
/* Small containers                                                     */
/* ------------------------------------------------------------------ */

struct mbuf {
    char *p;
    size_t cap;
};

/* make room for n bytes (contents are not kept) */
static int mbuf_reserve(struct mbuf *b, size_t n)
{
    if (n <= b->cap) return 0;
    size_t c = b->cap ? b->cap : 4096;
    while (c < n) {
        if (c > SIZE_MAX / 2) { c = n; break; }
        c *= 2;
    }
    char *p = malloc(c);
    if (!p) return -1;
    free(b->p);
    b->p = p;
    b->cap = c;
    return 0;
}

struct reqv {
    MPI_Request *r;
    size_t n, cap;
};

static MPI_Request *reqv_push(struct reqv *v)
{
    if (SSTEP_UNLIKELY(v->n == v->cap)) {
        size_t c = v->cap ? v->cap * 2 : 64;
        MPI_Request *r = realloc(v->r, c * sizeof *r);
        if (!r) sstep_fatal(NULL, "lpf_sync", "out of memory (MPI request list)");
        v->r = r;
        v->cap = c;
    }
    return &v->r[v->n++];
}

/* one transfer straight from or into user memory */
struct bigx {
    char *ptr;
    size_t size;
    char *tmp;        /* scratch buffer when the destination overlaps another */
    lpf_pid_t q;
    int tag;
};

struct bigv {
    struct bigx *e;
    size_t n, cap;
};

static int bigv_reserve(struct bigv *v, size_t n)
{
    if (n <= v->cap) return 0;
    size_t c = v->cap ? v->cap : 16;
    while (c < n) c *= 2;
    struct bigx *e = realloc(v->e, c * sizeof *e);
    if (!e) return -1;
    v->e = e;
    v->cap = c;
    return 0;
}

static inline void bigv_add(struct bigv *v, char *ptr, size_t size, lpf_pid_t q, int tag)
{
    if (SSTEP_UNLIKELY(v->n == v->cap) && bigv_reserve(v, v->n + 1))
        sstep_fatal(NULL, "lpf_sync", "out of memory (transfer list)");
    struct bigx *x = &v->e[v->n++];
    x->ptr = ptr;
    x->size = size;
    x->tmp = NULL;
    x->q = q;
    x->tag = tag;
}

struct rsize {
    size_t *s;
    uint32_t n;
};

/* ------------------------------------------------------------------ */
/* Groups: one per section and process                                  */
/* ------------------------------------------------------------------ */

struct mpi_group {
    MPI_Comm comm;
    lpf_pid_t P, pid;
    uint64_t episode;          /* exchanges done (syncs and rehooks) */
    size_t E;                  /* capacity of a first message */
    size_t big;                /* requests of this size and more travel directly */
    char *firstmem;            /* [2][P][E] first-message buffers */
    MPI_Request *rfirst;       /* [P] outstanding first-message receives */
    unsigned char *got;        /* [P] 1: rfirst[q] completed, not yet looked at */
    int *idx;                  /* [P] */
    struct mbuf *out;          /* [P] what we send q: header + body */
    size_t *osep;              /* [P] body bytes sent separately to q (0: inline) */
    size_t *gsmall;            /* [P] bytes of our small gets from q */
    struct mbuf *body[2];      /* [2][P] bodies received separately */
    const struct fhdr **hdr;   /* [P] headers of this episode */
    const char **bodyp;        /* [P] bodies of this episode */
    struct mbuf *rin;          /* [P] small get replies we receive */
    struct mbuf *rout;         /* [P] small get replies we send */
    struct rsize *rsz;         /* [P] sizes peers registered for global slots */
    struct regrec *regs;       /* registrations that become active at this sync */
    size_t regcap;
    struct reqv sfirst;        /* our first-message sends */
    struct reqv rbody;         /* separate bodies */
    struct reqv rget;          /* get traffic that must end before puts apply */
    struct reqv rmisc;         /* everything else */
    struct reqv rdg;           /* replies to direct gets of peers */
    struct bigv bsend;         /* our direct puts and messages, in order */
    struct bigv bget;          /* our direct gets, in order */
    struct bigv bput;          /* direct puts into our memory, in order */
    struct sstep_arena tmp;    /* scratch of one sync */
    struct sstep_arena rmsg[2];/* direct messages received, by parity */
    int oversub;
    struct mpi_shm *shm;       /* on-node fast path (NULL: first messages by MPI) */
    uint64_t gen;              /* this section's number on shm */
    unsigned char *wflags;     /* [P] flags of peers' arrival words */
    struct fhdr *ehdr;         /* [P] headers standing for "nothing for you" */
    /* bodies too large for a mailbox, on one node: a second shared window,
     * two halves (episode parity) of bcap bytes per process, grown by all
     * processes together when one needs more */
    MPI_Win bwin;
    int has_bwin;
    char **bseg;               /* [P] */
    size_t bcap;
    size_t *boff, *blen;       /* [P] where our body to q lies, and its length */
    char **bsrc;               /* [P] a body still in a private buffer (or NULL) */
    struct sstep_ctx *ctx;     /* our context in this section */
    struct mpi_group *outer;   /* enclosing section of this process */
};

static struct mpi_group *top_section;   /* innermost section of this process */
static size_t direct_min_cached;

static size_t direct_min(void)
{
    if (!direct_min_cached) {
        size_t v = 16384;
        const char *s = getenv("SUPERSTEP_MPI_DIRECT_MIN");
        if (s && *s) {
            char *end;
            unsigned long long x = strtoull(s, &end, 10);
            if (*end == '\0' && x >= 1) v = (size_t)x;
        }
        direct_min_cached = v;
    }
    return direct_min_cached;
}

static inline char *first_buf(struct mpi_group *g, int par, lpf_pid_t q)
{
    return g->firstmem + ((size_t)par * g->P + q) * g->E;
}

int mpi_oversubscribed(void)
{
    return sstep_mpi.oversub;
}

int mpi_sections_active(void)
{
    return top_section != NULL;
}

static void group_free(struct mpi_group *g)
{
    if (!g) return;
    const lpf_pid_t P = g->P;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (g->out) free(g->out[q].p);
        if (g->body[0]) free(g->body[0][q].p);
        if (g->body[1]) free(g->body[1][q].p);
        if (g->rin) free(g->rin[q].p);
        if (g->rout) free(g->rout[q].p);
        if (g->rsz) free(g->rsz[q].s);
    }
    free(g->firstmem);
    free(g->rfirst);
    free(g->got);
    free(g->idx);
    free(g->out);
    free(g->osep);
    free(g->gsmall);
    free(g->body[0]);
    free(g->body[1]);
    free(g->hdr);
    free(g->bodyp);
    free(g->rin);
    free(g->rout);
    free(g->rsz);
    free(g->wflags);
    free(g->ehdr);
    free(g->bseg);
    free(g->boff);
    free(g->blen);
    free(g->bsrc);
    free(g->regs);
    free(g->sfirst.r);
    free(g->rbody.r);
    free(g->rget.r);
    free(g->rmisc.r);
    free(g->rdg.r);
    free(g->bsend.e);
    free(g->bget.e);
    free(g->bput.e);
    sstep_arena_free(&g->tmp);
    sstep_arena_free(&g->rmsg[0]);
    sstep_arena_free(&g->rmsg[1]);
    free(g);
}

static struct mpi_group *group_new(MPI_Comm comm, lpf_pid_t pid, lpf_pid_t P, int oversub,
        struct mpi_shm *shm)
{
    struct mpi_group *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->comm = comm;
    g->P = P;
    g->pid = pid;
    g->oversub = oversub;
    if (shm && shm->P != P) shm = NULL;
    size_t E = (size_t)(256 * 1024) / P;
    if (E > 8192) E = 8192;
    if (E < 256) E = 256;
    g->E = E & ~(size_t)63;
    if (shm) {
        g->shm = shm;
        g->gen = ++shm->gen;
        g->E = shm->E;
    }
    g->big = direct_min();
    /* first-message receive buffers (message path only) */
    g->firstmem = aligned_alloc(64, shm ? 64 : 2 * (size_t)P * g->E);
    g->rfirst = malloc(P * sizeof *g->rfirst);
    g->got = calloc(P, 1);
    g->idx = malloc(P * sizeof *g->idx);
    g->out = calloc(P, sizeof *g->out);
    g->osep = calloc(P, sizeof *g->osep);
    g->gsmall = calloc(P, sizeof *g->gsmall);
    g->body[0] = calloc(P, sizeof(struct mbuf));
    g->body[1] = calloc(P, sizeof(struct mbuf));
    g->hdr = calloc(P, sizeof *g->hdr);
    g->bodyp = calloc(P, sizeof *g->bodyp);
    g->rin = calloc(P, sizeof *g->rin);
    g->rout = calloc(P, sizeof *g->rout);
    g->rsz = calloc(P, sizeof *g->rsz);
    g->wflags = calloc(P, 1);
    g->ehdr = calloc(P, sizeof *g->ehdr);
    g->bseg = calloc(P, sizeof *g->bseg);
    g->boff = calloc(P, sizeof *g->boff);
    g->blen = calloc(P, sizeof *g->blen);
    g->bsrc = calloc(P, sizeof *g->bsrc);
    if (!g->wflags || !g->ehdr || !g->bseg || !g->boff || !g->blen || !g->bsrc || !g->firstmem || !g->rfirst || !g->got || !g->idx || !g->out || !g->osep
            || !g->gsmall || !g->body[0] || !g->body[1] || !g->hdr || !g->bodyp
            || !g->rin || !g->rout || !g->rsz) {
        g->P = 0;
        group_free(g);
        return NULL;
    }
    for (lpf_pid_t q = 0; q < P; ++q) {
        g->rfirst[q] = MPI_REQUEST_NULL;
        if (q == pid || shm) continue;
        MPI_Irecv(first_buf(g, 0, q), (int)g->E, MPI_BYTE, (int)q, TAG(T_FIRST, 0), comm,
                &g->rfirst[q]);
    }
    return g;
}

/* ------------------------------------------------------------------ */
/* Waiting                                                              */
/* ------------------------------------------------------------------ */

static inline uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#define SPIN_NS 50000ull       /* spin this long when every process has a core */
#define YIELD_NS 5000000ull    /* then yield the core this long */
#define NAP_SYNC_NS 200000L    /* then nap, doubling up to this */

void mpi_wait_init(struct mpi_wait *w, long nap_max_ns)
{
    w->t0 = 0;
    w->n = 0;
    w->nap = 2000;
    w->nap_max = nap_max_ns;
}

void mpi_wait_step(struct mpi_wait *w)
{
    int oversub = sstep_mpi.oversub;
    if (++w->n < 64 && !oversub) return;
    uint64_t t = now_ns();
    if (!w->t0) { w->t0 = t; return; }
    uint64_t d = t - w->t0;
    if (!oversub && d < SPIN_NS) return;
    if (d < YIELD_NS) { sched_yield(); return; }
    struct timespec ts = { 0, w->nap };
    nanosleep(&ts, NULL);
    if (w->nap < w->nap_max) w->nap *= 2;
}

static void serve_dgets(struct mpi_group *g);

/* Wait for every request of v; meanwhile serve peers' direct gets (a peer
 * blocked in bsp_direct_get on us must not wait for our next sync). */
static void wait_all(struct mpi_group *g, struct reqv *v)
{
    if (v->n == 0) return;
    int flag = 0;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (unsigned i = 1;; ++i) {
        MPI_Testall((int)v->n, v->r, &flag, MPI_STATUSES_IGNORE);
        if (flag) break;
        if ((i & 15) == 0) serve_dgets(g);
        mpi_wait_step(&w);
    }
    v->n = 0;
}

/* post transfers of n bytes in chunks of at most CHUNK (n may be 0: one
 * empty message) */
static void post_send(struct reqv *v, const char *buf, size_t n, lpf_pid_t q, int tag, MPI_Comm c)
{
    do {
        size_t len = n > CHUNK ? CHUNK : n;
        MPI_Isend(buf, (int)len, MPI_BYTE, (int)q, tag, c, reqv_push(v));
        buf += len;
        n -= len;
    } while (n > 0);
}

static void post_recv(struct reqv *v, char *buf, size_t n, lpf_pid_t q, int tag, MPI_Comm c)
{
    do {
        size_t len = n > CHUNK ? CHUNK : n;
        MPI_Irecv(buf, (int)len, MPI_BYTE, (int)q, tag, c, reqv_push(v));
        buf += len;
        n -= len;
    } while (n > 0);
}

/* ------------------------------------------------------------------ */
/* The on-node fast path: arrival words and mailboxes in shared memory   */
/* ------------------------------------------------------------------ */

/* Every process's segment starts with this line; its mailboxes follow.
 * An arrival word is (section number << 40 | episode << 8 | flags); one per
 * episode parity, so that a fast process's next arrival cannot hide what a
 * slow one still has to read. Leaving ORs W_GONE into both words: a word
 * still shows the last episode the process took part in, and the gone bit
 * fails only waits for a later one. What a process left with is kept by
 * section parity, as a fast peer may already have entered the next
 * section (never the one after: that needs us). */
#define SHM_LINE 128
#define W_EMPTY 1u      /* nothing for anybody: skip my mailboxes */
#define W_REHOOK 2u     /* this episode is a rehook */
#define W_GONE 4u       /* left the section (final_* are valid) */

struct shm_line {
    _Atomic uint64_t word[2];
    uint64_t check[2];
    uint64_t final_steps[2];
    uint32_t final_failed[2];
    uint64_t need[2];        /* body-segment bytes this episode needs */
};
_Static_assert(sizeof(struct shm_line) <= SHM_LINE, "arrival line fits");

static inline struct shm_line *line_of(const struct mpi_group *g, lpf_pid_t q)
{
    return (struct shm_line *)g->shm->seg[q];
}

/* first message from `from` to `to` for episodes of parity par */
static inline char *mailbox(const struct mpi_group *g, lpf_pid_t from, lpf_pid_t to, int par)
{
    return g->shm->seg[from] + SHM_LINE + ((size_t)to * 2 + (size_t)par) * g->E;
}

static inline uint64_t mkword(uint64_t gen, uint64_t e, unsigned flags)
{
    return (gen & 0xffffffu) << 40 | (e & 0xffffffffu) << 8 | flags;
}

/* 0: not arrived at episode e of section gen yet; 1: arrived; 2: gone
 * before e; 3: already in the next section */
static inline int word_state(uint64_t w, uint64_t gen, uint64_t e)
{
    uint64_t wg = w >> 40;
    if (wg != (gen & 0xffffffu)) return wg == ((gen + 1) & 0xffffffu) ? 3 : 0;
    if (((w >> 8) & 0xffffffffu) == (e & 0xffffffffu)) return 1;
    return (w & W_GONE) ? 2 : 0;
}

static void serve_dgets(struct mpi_group *g);

/* Wait until every peer arrived at episode e; -1 if one left the section
 * or does something else (a rehook while we sync, or the reverse). */
static int node_wait_first(struct mpi_group *g, uint64_t e, unsigned rehook)
{
    const lpf_pid_t P = g->P, me = g->pid;
    const int par = (int)(e & 1);
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    unsigned it = 0;
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        _Atomic uint64_t *wp = &line_of(g, q)->word[par];
        uint64_t v;
        int st;
        while ((st = word_state(v = atomic_load_explicit(wp, memory_order_acquire), g->gen, e)) == 0) {
            if ((++it & 1023) == 0) serve_dgets(g);
            mpi_wait_step(&w);
        }
        if (st != 1 || (v & W_REHOOK) != rehook) return -1;
        g->wflags[q] = (unsigned char)(v & 0xff);
    }
    return 0;
}

/* All processes of the section together (the decision comes from the
 * arrival lines everybody has read): a body window of at least `need`
 * bytes per half. Bodies already laid out move over. */
static void grow_bodies(struct mpi_group *g, struct sstep_ctx *ctx, size_t need, int par)
{
    size_t cap = g->bcap * 2;
    if (cap < need) cap = need;
    if (cap < ((size_t)1 << 20)) cap = (size_t)1 << 20;
    cap = (cap + 4095) & ~(size_t)4095;
    char *base = NULL;
    MPI_Win win;
    if (MPI_Win_allocate_shared((MPI_Aint)(2 * cap), 64, MPI_INFO_NULL, g->comm, &base, &win)
            != MPI_SUCCESS)
        sstep_fatal(ctx, "lpf_sync", "out of memory (a %zu-byte shared body segment)", 2 * cap);
    char **seg = malloc(g->P * sizeof *seg);
    if (!seg) sstep_fatal(ctx, "lpf_sync", "out of memory");
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, (int)q, &sz, &du, &seg[q]);
    }
    char *half = seg[g->pid] + (size_t)par * cap;
    char *old = g->has_bwin ? g->bseg[g->pid] + (size_t)par * g->bcap : NULL;
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        if (!g->blen[q]) continue;
        const char *from = g->bsrc[q] ? g->bsrc[q] : old + g->boff[q];
        memcpy(half + g->boff[q], from, g->blen[q]);
        g->bsrc[q] = NULL;
    }
    /* nobody reads a body before its owner moved it */
    MPI_Barrier(g->comm);
    if (g->has_bwin) MPI_Win_free(&g->bwin);
    free(g->bseg);
    g->bseg = seg;
    g->bwin = win;
    g->bcap = cap;
    g->has_bwin = 1;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                             */
/* ------------------------------------------------------------------ */

static inline char *put_long(char *p, uint32_t slot, size_t off, size_t size, uint32_t flags)
{
    uint32_t w0 = flags, w1 = REC_LONG;
    uint64_t o = off, z = size;
    memcpy(p, &w0, 4);
    memcpy(p + 4, &w1, 4);
    memcpy(p + 8, &slot, 4);
    memcpy(p + 12, &o, 8);
    memcpy(p + 20, &z, 8);
    return p + LONG_REC;
}

static inline const char *get_rec(const char *p, uint32_t *slot, size_t *off, size_t *size,
        uint32_t *flags)
{
    uint64_t hw;
    memcpy(&hw, p, 8);
    uint32_t w0 = (uint32_t)hw, w1 = (uint32_t)(hw >> 32);
    if (SSTEP_LIKELY(!(w1 & REC_LONG))) {
        *slot = w1 >> 16;
        *size = w1 & 0xffffu;
        *off = w0;
        *flags = 0;
        return p + 8;
    }
    uint64_t o, z;
    memcpy(slot, p + 8, 4);
    memcpy(&o, p + 12, 8);
    memcpy(&z, p + 20, 8);
    *off = (size_t)o;
    *size = (size_t)z;
    *flags = w0;
    return p + LONG_REC;
}

/* Puts to q in issue order; adjacent puts into one slot are merged into
 * one record, and the data of puts whose sources are adjacent too is
 * copied in one piece. */
static char *enc_puts(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q, char *p)
{
    const struct sstep_req *reqs = ctx->q.reqs;
    const size_t big = g->big;
    char *last = NULL;        /* compact record that may still grow */
    uint32_t lslot = 0, lsize = 0;
    size_t lend = 0;
    char *pdst = NULL;        /* pending copy */
    const char *psrc = NULL;
    size_t plen = 0;
    for (uint32_t i = ctx->q.peers[q].head[SSTEP_PUT]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        __builtin_prefetch(r + 8);
        const size_t n = r->size;
        if (SSTEP_LIKELY(n < big)) {
            if (last && r->slot == lslot && r->off == lend && lsize + n <= 0xffffu) {
                lsize += (uint32_t)n;
                lend += n;
            } else {
                if (last) {
                    uint32_t w1 = (lslot << 16) | lsize;
                    memcpy(last + 4, &w1, 4);
                }
                if (r->slot < 0x7fffu && n <= 0xffffu && r->off <= UINT32_MAX) {
                    uint64_t hw = (uint64_t)(uint32_t)r->off
                        | ((uint64_t)((r->slot << 16) | (uint32_t)n) << 32);
                    memcpy(p, &hw, 8);
                    last = p;
                    lslot = r->slot;
                    lsize = (uint32_t)n;
                    lend = r->off + n;
                    p += 8;
                } else {
                    p = put_long(p, r->slot, r->off, n, 0);
                    last = NULL;
                }
            }
            if (plen && psrc + plen == r->local && pdst + plen == p) {
                plen += n;
            } else {
                if (plen) sstep_copy(pdst, psrc, plen);
                pdst = p;
                psrc = r->local;
                plen = n;
            }
            p += n;
        } else {
            if (last) {
                uint32_t w1 = (lslot << 16) | lsize;
                memcpy(last + 4, &w1, 4);
            }
            p = put_long(p, r->slot, r->off, n, REC_DIRECT);
            last = NULL;
            bigv_add(&g->bsend, r->local, n, q, T_PDATA);
        }
    }
    if (last) {
        uint32_t w1 = (lslot << 16) | lsize;
        memcpy(last + 4, &w1, 4);
    }
    if (plen) sstep_copy(pdst, psrc, plen);
    return p;
}

/* Get requests to q; small replies come back in one message. */
static char *enc_gets(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q, char *p,
        size_t *small)
{
    const struct sstep_req *reqs = ctx->q.reqs;
    const size_t big = g->big;
    size_t s = 0;
    for (uint32_t i = ctx->q.peers[q].head[SSTEP_GET]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        const size_t n = r->size;
        if (n < big) {
            if (r->slot < 0x7fffu && n <= 0xffffu && r->off <= UINT32_MAX) {
                uint64_t hw = (uint64_t)(uint32_t)r->off
                    | ((uint64_t)((r->slot << 16) | (uint32_t)n) << 32);
                memcpy(p, &hw, 8);
                p += 8;
            } else {
                p = put_long(p, r->slot, r->off, n, 0);
            }
            s += n;
        } else {
            p = put_long(p, r->slot, r->off, n, REC_DIRECT);
            bigv_add(&g->bget, r->local, n, q, T_GDATA);
        }
    }
    *small = s;
    return p;
}

static char *enc_msgs(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q, char *p)
{
    const struct sstep_req *reqs = ctx->q.reqs;
    const size_t big = g->big;
    char *run = NULL;          /* header of the run being extended */
    uint32_t rcount = 0;
    size_t rsize = 0;
    for (uint32_t i = ctx->q.peers[q].head[SSTEP_MSG]; i != SSTEP_NIL; i = reqs[i].next) {
        const struct sstep_req *r = &reqs[i];
        const size_t n = r->size;
        if (SSTEP_LIKELY(n < big && n < REC_LONG)) {
            if (SSTEP_UNLIKELY(!run || n != rsize || rcount == MSG_RUN_MAX)) {
                run = p;
                rcount = 0;
                rsize = n;
                uint32_t z = (uint32_t)n;
                memcpy(p + 4, &z, 4);
                p += 8;
            }
            rcount++;
            uint32_t w = rcount | MSG_RUN;
            memcpy(run, &w, 4);
            sstep_copy(p, r->local, n);
            p += n;
        } else {
            uint32_t w = REC_LONG;
            uint64_t z = n;
            memcpy(p, &w, 4);
            memcpy(p + 4, &z, 8);
            p += 12;
            run = NULL;
            bigv_add(&g->bsend, r->local, n, q, T_MDATA);
        }
    }
    return p;
}

/* upper bound of the first message + body for q */
static size_t out_bound(const struct mpi_group *g, const struct sstep_peer_lists *pl, size_t nreg)
{
    size_t b = sizeof(struct fhdr) + nreg * sizeof(struct regrec);
    size_t lim = g->big - 1;
    size_t np = pl->count[SSTEP_PUT], ng = pl->count[SSTEP_GET], nm = pl->count[SSTEP_MSG];
    b += (np + ng) * LONG_REC + nm * 12 + 8;
    size_t dp = pl->bytes[SSTEP_PUT], dm = pl->bytes[SSTEP_MSG];
    b += dp < np * lim ? dp : np * lim;
    b += dm < nm * lim ? dm : nm * lim;
    return b;
}

/* Encode the first message (header and body) for q into g->out[q]. */
static size_t encode(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q,
        uint64_t e, uint64_t check, size_t nreg, char *base)
{
    const struct sstep_peer_lists *pl = &ctx->q.peers[q];
    struct fhdr *h = (struct fhdr *)base;
    char *p = base + sizeof *h;
    h->episode = e;
    h->check = check;
    h->flags = 0;
    h->nreg = (uint32_t)nreg;
    h->nget = pl->count[SSTEP_GET];
    h->nmsg = pl->count[SSTEP_MSG];
    if (nreg) {
        memcpy(p, g->regs, nreg * sizeof(struct regrec));
        p += nreg * sizeof(struct regrec);
    }
    char *s = p;
    if (pl->head[SSTEP_PUT] != SSTEP_NIL) p = enc_puts(g, ctx, q, p);
    h->put_bytes = (uint64_t)(p - s);
    s = p;
    size_t small = 0;
    if (pl->head[SSTEP_GET] != SSTEP_NIL) p = enc_gets(g, ctx, q, p, &small);
    h->get_bytes = (uint64_t)(p - s);
    g->gsmall[q] = small;
    h->gsmall = small;
    s = p;
    if (pl->head[SSTEP_MSG] != SSTEP_NIL) p = enc_msgs(g, ctx, q, p);
    h->msg_bytes = (uint64_t)(p - s);
    size_t total = (size_t)(p - base);
    if (total == sizeof *h) h->flags |= H_EMPTY;
    else if (total > g->E) h->flags |= H_SEPARATE;
    return total;
}

/* Global registrations that become active at this sync: (slot, size). */
static size_t collect_regs(struct mpi_group *g, const struct sstep_ctx *ctx)
{
    struct sstep_slot_array *a = sstep_slots((struct sstep_slot_table *)&ctx->globals);
    uint32_t hi = ctx->globals.fresh < a->size ? ctx->globals.fresh : a->size;
    uint64_t act = ctx->superstep + 1;
    size_t n = 0;
    for (uint32_t i = 0; i < hi; ++i) {
        const struct sstep_slot *e = &a->e[i];
        if (e->state != SSTEP_SLOT_GLOBAL || e->active_from != act) continue;
        if (n == g->regcap) {
            size_t c = g->regcap ? g->regcap * 2 : 16;
            struct regrec *r = realloc(g->regs, c * sizeof *r);
            if (!r) return SIZE_MAX;
            g->regs = r;
            g->regcap = c;
        }
        g->regs[n].slot = i;
        g->regs[n].pad_ = 0;
        g->regs[n].size = e->size;
        n++;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* The first-message exchange                                           */
/* ------------------------------------------------------------------ */

/* 0: header of q is the expected one; 1: q left or does something else */
static int bad_header(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q, uint64_t e,
        uint32_t rehook)
{
    const struct fhdr *h = (const struct fhdr *)first_buf(g, (int)(e & 1), q);
    if (h->flags & H_GONE) return 1;
    if (SSTEP_UNLIKELY(h->episode != e))
        sstep_fatal(ctx, "lpf_sync", "protocol error: process %u is in exchange %llu, this "
                "process in %llu", q, (unsigned long long)h->episode, (unsigned long long)e);
    if ((h->flags & H_REHOOK) != rehook) return 1;
    return 0;
}

/* Wait for the first message of every peer. Returns -1 as soon as a peer
 * turns out to have left the section (or to be in a rehook while we sync,
 * or the other way round): this exchange then fails on every process. */
static int wait_first(struct mpi_group *g, struct sstep_ctx *ctx, uint64_t e, uint32_t rehook)
{
    const lpf_pid_t P = g->P, me = g->pid;
    lpf_pid_t missing = 0;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q == me) continue;
        if (!g->got[q]) missing++;
        else if (bad_header(g, ctx, q, e, rehook)) return -1;
    }
    if (!missing) return 0;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (unsigned it = 1;; ++it) {
        int n = 0;
        MPI_Testsome((int)P, g->rfirst, &n, g->idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED) n = 0;
        if (!n && (it & 15) == 0) serve_dgets(g);
        /* mark every completed receive before judging any (the drain
         * relies on got[] when this exchange fails) */
        for (int i = 0; i < n; ++i) g->got[g->idx[i]] = 1;
        for (int i = 0; i < n; ++i) {
            missing--;
            if (bad_header(g, ctx, (lpf_pid_t)g->idx[i], e, rehook)) return -1;
        }
        if (!missing) return 0;
        if (!n) mpi_wait_step(&w);
    }
}

/* After a successful exchange: post the receives of the next episode. */
static void prepost_next(struct mpi_group *g, uint64_t e)
{
    const int npar = (int)((e + 1) & 1);
    for (lpf_pid_t q = 0; q < g->P; ++q) {
        if (q == g->pid) continue;
        g->got[q] = 0;
        MPI_Irecv(first_buf(g, npar, q), (int)g->E, MPI_BYTE, (int)q, TAG(T_FIRST, npar),
                g->comm, &g->rfirst[q]);
    }
}

/* ------------------------------------------------------------------ */
/* Applying                                                             */
/* ------------------------------------------------------------------ */

static int cmp_bigx_ptr(const void *a, const void *b)
{
    const struct bigx *x = *(const struct bigx *const *)a, *y = *(const struct bigx *const *)b;
    return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

/* Give every transfer whose destination overlaps another one a scratch
 * buffer, so that concurrent receives never mix bytes of two requests. */
static void mark_overlaps(struct mpi_group *g, struct bigv *v)
{
    if (v->n < 2) return;
    struct bigx **s = sstep_arena_alloc(&g->tmp, v->n * sizeof *s);
    if (!s) sstep_fatal(NULL, "lpf_sync", "out of memory (overlap check)");
    for (size_t i = 0; i < v->n; ++i) s[i] = &v->e[i];
    qsort(s, v->n, sizeof *s, cmp_bigx_ptr);
    struct bigx *far = s[0];
    for (size_t i = 1; i < v->n; ++i) {
        struct bigx *x = s[i];
        if (x->ptr < far->ptr + far->size) {
            x->tmp = x->ptr;   /* mark */
            far->tmp = far->ptr;
        }
        if (x->ptr + x->size > far->ptr + far->size) far = x;
    }
    for (size_t i = 0; i < v->n; ++i) {
        struct bigx *x = &v->e[i];
        if (!x->tmp) continue;
        x->tmp = sstep_arena_alloc(&g->tmp, x->size);
        if (!x->tmp) sstep_fatal(NULL, "lpf_sync", "out of memory (%zu-byte scratch buffer)", x->size);
    }
}

static SSTEP_NORETURN void range_error(struct sstep_ctx *ctx, int put, lpf_pid_t issuer,
        uint32_t slot, size_t off, size_t size)
{
    const char *name = put ? (ctx->put_name ? ctx->put_name : "lpf_put")
                           : (ctx->get_name ? ctx->get_name : "lpf_get");
    sstep_remote_range_error(ctx, name, issuer, slot, off, size);
}

/* Serve the gets q asks of us: small ones copied into one reply, big ones
 * sent straight from our memory. */
static void serve_gets(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end, size_t small, int par)
{
    struct sstep_slot_array *a = sstep_slots(&ctx->globals);
    char *o = NULL;
    if (small) {
        if (mbuf_reserve(&g->rout[q], small))
            sstep_fatal(ctx, "lpf_sync", "out of memory (%zu bytes of get replies)", small);
        o = g->rout[q].p;
    }
    char *o0 = o;
    size_t nbig = 0;
    const char *p0 = p;
    while (p < end) {
        uint32_t slot, fl;
        size_t off, n;
        p = get_rec(p, &slot, &off, &n, &fl);
        const struct sstep_slot *e = slot < a->size ? &a->e[slot] : NULL;
        if (SSTEP_UNLIKELY(!e || e->state != SSTEP_SLOT_GLOBAL || off > e->size || n > e->size - off))
            range_error(ctx, 0, q, slot, off, n);
        if (fl & REC_DIRECT) { nbig++; continue; }
        if (SSTEP_UNLIKELY((size_t)(o - o0) + n > small))
            sstep_fatal(ctx, "lpf_sync", "protocol error: get replies exceed the announced size");
        sstep_copy(o, e->base + off, n);
        o += n;
    }
    if (small) post_send(&g->rget, o0, small, q, TAG(T_GDATA, par), g->comm);
    if (!nbig) return;
    for (p = p0; p < end;) {
        uint32_t slot, fl;
        size_t off, n;
        p = get_rec(p, &slot, &off, &n, &fl);
        if (fl & REC_DIRECT)
            post_send(&g->rget, a->e[slot].base + off, n, q, TAG(T_GDATA, par), g->comm);
    }
}

/* Messages q sent us: into the inbox (small ones point into the body). */
static void take_msgs(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end, int par)
{
    struct sstep_inbox *in = &ctx->inbox;
    struct sstep_msg *m = in->msgs + in->n;
    while (p < end) {
        uint32_t w;
        memcpy(&w, p, 4);
        if (SSTEP_LIKELY(w & MSG_RUN)) {
            uint32_t count = w & MSG_RUN_MAX, z;
            memcpy(&z, p + 4, 4);
            p += 8;
            for (uint32_t k = 0; k < count; ++k, ++m) {
                m->data = p;
                m->size = z;
                p += z;
            }
        } else {
            uint64_t z;
            memcpy(&z, p + 4, 8);
            p += 12;
            char *buf = sstep_arena_alloc(&g->rmsg[par], z ? (size_t)z : 1);
            if (!buf) sstep_fatal(ctx, "lpf_sync", "out of memory (%llu-byte message)",
                    (unsigned long long)z);
            post_recv(&g->rmisc, buf, (size_t)z, q, TAG(T_MDATA, par), g->comm);
            m->data = buf;
            m->size = (size_t)z;
            ++m;
        }
    }
    in->n = (size_t)(m - in->msgs);
}

/* Small puts from q's body, in issue order; direct ones are collected. */
static void apply_puts(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end)
{
    struct sstep_slot_array *a = sstep_slots(&ctx->globals);
    uint32_t cs = UINT32_MAX;
    char *cb = NULL;
    size_t cz = 0;
    /* a few records ahead, prefetch the destination: scattered small puts
     * are bound by the latency of their stores */
    const char *la = p;
    int ahead = 0;
    while (p < end) {
        while (ahead < 8 && la < end) {
            uint64_t hw;
            memcpy(&hw, la, 8);
            uint32_t w1 = (uint32_t)(hw >> 32);
            if (SSTEP_LIKELY(!(w1 & REC_LONG))) {
                if ((w1 >> 16) == cs && (uint32_t)hw < cz) __builtin_prefetch(cb + (uint32_t)hw, 1);
                la += 8 + (w1 & 0xffffu);
            } else {
                uint64_t z;
                memcpy(&z, la + 20, 8);
                la += LONG_REC + (((uint32_t)hw & REC_DIRECT) ? 0 : (size_t)z);
            }
            ahead++;
        }
        uint32_t slot, fl;
        size_t off, n;
        p = get_rec(p, &slot, &off, &n, &fl);
        ahead--;
        if (SSTEP_UNLIKELY(slot != cs)) {
            if (slot >= a->size || a->e[slot].state != SSTEP_SLOT_GLOBAL)
                range_error(ctx, 1, q, slot, off, n);
            cs = slot;
            cb = a->e[slot].base;
            cz = a->e[slot].size;
        }
        if (SSTEP_UNLIKELY(off > cz || n > cz - off)) range_error(ctx, 1, q, slot, off, n);
        if (SSTEP_LIKELY(!(fl & REC_DIRECT))) {
            sstep_copy(cb + off, p, n);
            p += n;
        } else {
            bigv_add(&g->bput, cb + off, n, q, T_PDATA);
        }
    }
}

/* requests a process issues to itself */
static void self_gets(struct sstep_ctx *ctx)
{
    const struct sstep_queue *q = &ctx->q;
    for (uint32_t i = q->peers[ctx->pid].head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
        const struct sstep_req *r = &q->reqs[i];
        char *from = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (SSTEP_UNLIKELY(!from)) range_error(ctx, 0, ctx->pid, r->slot, r->off, r->size);
        sstep_copy(r->local, from, r->size);
    }
}

static void self_puts(struct sstep_ctx *ctx)
{
    const struct sstep_queue *q = &ctx->q;
    for (uint32_t i = q->peers[ctx->pid].head[SSTEP_PUT]; i != SSTEP_NIL; i = q->reqs[i].next) {
        const struct sstep_req *r = &q->reqs[i];
        char *to = sstep_resolve_global(ctx, r->slot, r->off, r->size);
        if (SSTEP_UNLIKELY(!to)) range_error(ctx, 1, ctx->pid, r->slot, r->off, r->size);
        sstep_copy(to, r->local, r->size);
    }
}

static void self_msgs(struct sstep_ctx *ctx)
{
    const struct sstep_queue *q = &ctx->q;
    struct sstep_inbox *in = &ctx->inbox;
    for (uint32_t i = q->peers[ctx->pid].head[SSTEP_MSG]; i != SSTEP_NIL; i = q->reqs[i].next) {
        struct sstep_msg *m = &in->msgs[in->n++];
        m->data = q->reqs[i].local;
        m->size = q->reqs[i].size;
    }
}

/* scatter the small get replies from q into their destinations */
static void scatter_gets(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q)
{
    const struct sstep_queue *qu = &ctx->q;
    const char *p = g->rin[q].p;
    const size_t big = g->big;
    for (uint32_t i = qu->peers[q].head[SSTEP_GET]; i != SSTEP_NIL; i = qu->reqs[i].next) {
        const struct sstep_req *r = &qu->reqs[i];
        if (r->size >= big) continue;
        sstep_copy(r->local, p, r->size);
        p += r->size;
    }
}

/* ------------------------------------------------------------------ */
/* Sync                                                                 */
/* ------------------------------------------------------------------ */

static lpf_err_t mp_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info)
{
    struct mpi_group *g = ctx->group;
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    const int par = (int)(e & 1);
    MPI_Comm comm = g->comm;
    ctx->inbox.n = ctx->inbox.next = 0;
    g->bsend.n = g->bget.n = g->bput.n = 0;

    /* 0. room for everything we send, before anything is sent: an
     * allocation failure now fails this process only */
    size_t nreg = 0;
    if (SSTEP_UNLIKELY(ctx->pending_globals)) {
        nreg = collect_regs(g, ctx);
        if (nreg == SIZE_MAX) return LPF_ERR_FATAL;
    }
    size_t nbig = 0, nbigget = 0;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (q == me) continue;
        const struct sstep_peer_lists *pl = &ctx->q.peers[q];
        if (!g->shm && mbuf_reserve(&g->out[q], out_bound(g, pl, nreg))) return LPF_ERR_FATAL;
        nbig += pl->count[SSTEP_PUT] + pl->count[SSTEP_MSG];
        nbigget += pl->count[SSTEP_GET];
    }
    if (SSTEP_UNLIKELY(ctx->q.n) && (bigv_reserve(&g->bsend, nbig) || bigv_reserve(&g->bget, nbigget)))
        return LPF_ERR_FATAL;

    /* 1. one first message to every peer, in Latin-square order */
    int any = 0;
    if (g->shm) {
        /* into our mailboxes (bodies too large for them: into our body
         * segment), then one arrival word */
        char *half = g->has_bwin ? g->bseg[me] + (size_t)par * g->bcap : NULL;
        size_t used = 0;
        for (lpf_pid_t k = 1; k < P; ++k) {
            lpf_pid_t q = me + k;
            if (q >= P) q -= P;
            const struct sstep_peer_lists *pl = &ctx->q.peers[q];
            char *mb = mailbox(g, me, q, par);
            size_t bound = out_bound(g, pl, nreg);
            g->osep[q] = 0;
            g->blen[q] = 0;
            g->bsrc[q] = NULL;
            if (bound <= g->E) {
                size_t len = encode(g, ctx, q, e, info->check, nreg, mb);
                (void)len;
                if (!(((const struct fhdr *)mb)->flags & H_EMPTY)) any = 1;
                continue;
            }
            size_t off = (used + 63) & ~(size_t)63;
            int inseg = half && off + bound <= g->bcap;
            /* nothing is published yet: failing here fails only us */
            if (!inseg && mbuf_reserve(&g->out[q], bound)) return LPF_ERR_FATAL;
            char *base = inseg ? half + off : g->out[q].p;
            size_t len = encode(g, ctx, q, e, info->check, nreg, base);
            struct fhdr *h = (struct fhdr *)base;
            any = 1;
            if (!(h->flags & H_SEPARATE)) {
                memcpy(mb, base, len);   /* the bound was pessimistic */
                continue;
            }
            if (!inseg && half && off + len <= g->bcap) {
                memcpy(half + off, base, len);
                inseg = 1;
            }
            h->flags = (h->flags & ~H_SEPARATE) | H_SHMBODY;
            h->body_off = off + sizeof *h;
            memcpy(mb, h, sizeof *h);
            g->boff[q] = off;
            g->blen[q] = len;
            g->bsrc[q] = inseg ? NULL : base;
            used = off + len;
        }
        struct shm_line *ml = line_of(g, me);
        ml->check[par] = info->check;
        ml->need[par] = used;
        atomic_store_explicit(&ml->word[par], mkword(g->gen, e, any ? 0 : W_EMPTY),
                memory_order_release);
        /* 2. everybody's arrival */
        if (node_wait_first(g, e, 0)) return LPF_ERR_FATAL;
        size_t need = used;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me) continue;
            const struct fhdr *h;
            if (g->wflags[q] & W_EMPTY) {
                struct fhdr *x = &g->ehdr[q];
                memset(x, 0, sizeof *x);
                x->episode = e;
                x->check = line_of(g, q)->check[par];
                x->flags = H_EMPTY;
                h = x;
            } else {
                h = (const struct fhdr *)mailbox(g, q, me, par);
                any = 1;
                size_t n = line_of(g, q)->need[par];
                if (n > need) need = n;
            }
            g->hdr[q] = h;
            if (h->check != info->check && !info->mismatch) {
                info->mismatch = 1;
                info->peer = q;
                info->peer_check = h->check;
            }
        }
        /* a body did not fit in its owner's segment: everybody grows */
        if (SSTEP_UNLIKELY(need > g->bcap)) grow_bodies(g, ctx, need, par);
    } else {
        for (lpf_pid_t k = 1; k < P; ++k) {
            lpf_pid_t q = me + k;
            if (q >= P) q -= P;
            size_t len = encode(g, ctx, q, e, info->check, nreg, g->out[q].p);
            const struct fhdr *h = (const struct fhdr *)g->out[q].p;
            if (h->flags & H_SEPARATE) {
                g->osep[q] = len - sizeof *h;
                len = sizeof *h;
                any = 1;
            } else {
                g->osep[q] = 0;
                if (!(h->flags & H_EMPTY)) any = 1;
            }
            MPI_Isend(g->out[q].p, (int)len, MPI_BYTE, (int)q, TAG(T_FIRST, par), comm,
                    reqv_push(&g->sfirst));
        }
        /* 2. everybody's first message */
        if (wait_first(g, ctx, e, 0)) return LPF_ERR_FATAL;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me) continue;
            const struct fhdr *h = (const struct fhdr *)first_buf(g, par, q);
            g->hdr[q] = h;
            if (!(h->flags & H_EMPTY)) any = 1;
            if (h->check != info->check && !info->mismatch) {
                info->mismatch = 1;
                info->peer = q;
                info->peer_check = h->check;
            }
        }
        prepost_next(g, e);
    }
    const struct sstep_peer_lists *mine = &ctx->q.peers[me];
    if (SSTEP_LIKELY(!any) && mine->head[SSTEP_PUT] == SSTEP_NIL
            && mine->head[SSTEP_GET] == SSTEP_NIL && mine->head[SSTEP_MSG] == SSTEP_NIL) {
        if (g->sfirst.n) wait_all(g, &g->sfirst);
        g->episode++;
        return LPF_SUCCESS;
    }

    /* 3. bodies, get replies, direct puts and messages */
    if (g->rmsg[par].head) sstep_arena_reset(&g->rmsg[par]);
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        const struct fhdr *h = g->hdr[q];
        if (h->flags & H_SHMBODY) {
            g->bodyp[q] = g->bseg[q] + (size_t)par * g->bcap + h->body_off;
        } else if (h->flags & H_SEPARATE) {
            size_t bs = h->nreg * sizeof(struct regrec) + h->put_bytes + h->get_bytes + h->msg_bytes;
            if (mbuf_reserve(&g->body[par][q], bs))
                sstep_fatal(ctx, "lpf_sync", "out of memory (%zu-byte receive buffer)", bs);
            post_recv(&g->rbody, g->body[par][q].p, bs, q, TAG(T_BODY, par), comm);
            g->bodyp[q] = g->body[par][q].p;
        } else {
            g->bodyp[q] = (const char *)h + sizeof *h;
        }
        if (g->osep[q])
            post_send(&g->rmisc, g->out[q].p + sizeof(struct fhdr), g->osep[q], q,
                    TAG(T_BODY, par), comm);
    }
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        if (!g->gsmall[q]) continue;
        if (mbuf_reserve(&g->rin[q], g->gsmall[q]))
            sstep_fatal(ctx, "lpf_sync", "out of memory (%zu bytes of get replies)", g->gsmall[q]);
        post_recv(&g->rget, g->rin[q].p, g->gsmall[q], q, TAG(T_GDATA, par), comm);
    }
    mark_overlaps(g, &g->bget);
    for (size_t i = 0; i < g->bget.n; ++i) {
        struct bigx *x = &g->bget.e[i];
        post_recv(&g->rget, x->tmp ? x->tmp : x->ptr, x->size, x->q, TAG(T_GDATA, par), comm);
    }
    for (size_t i = 0; i < g->bsend.n; ++i) {
        struct bigx *x = &g->bsend.e[i];
        post_send(&g->rmisc, x->ptr, x->size, x->q, TAG(x->tag, par), comm);
    }
    wait_all(g, &g->rbody);

    size_t nmsg = mine->count[SSTEP_MSG];
    for (lpf_pid_t q = 0; q < P; ++q)
        if (q != me) nmsg += g->hdr[q]->nmsg;
    if (nmsg && sstep_inbox_reserve(&ctx->inbox, nmsg))
        sstep_fatal(ctx, "lpf_sync", "out of memory (inbox of %zu messages)", nmsg);

    /* 4. registrations, get requests, messages of every peer */
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        const struct fhdr *h = g->hdr[q];
        const char *b = g->bodyp[q];
        if (h->nreg) {
            struct rsize *rs = &g->rsz[q];
            const struct regrec *rr = (const struct regrec *)b;
            for (uint32_t i = 0; i < h->nreg; ++i) {
                struct regrec r;
                memcpy(&r, rr + i, sizeof r);
                if (r.slot >= rs->n) {
                    uint32_t n = rs->n ? rs->n : 16;
                    while (n <= r.slot) n *= 2;
                    size_t *s = realloc(rs->s, (size_t)n * sizeof *s);
                    if (!s) sstep_fatal(ctx, "lpf_sync", "out of memory (registration table)");
                    for (uint32_t j = rs->n; j < n; ++j) s[j] = SIZE_MAX;
                    rs->s = s;
                    rs->n = n;
                }
                rs->s[r.slot] = (size_t)r.size;
            }
            b += h->nreg * sizeof(struct regrec);
        }
        const char *gets = b + h->put_bytes;
        if (h->get_bytes) serve_gets(g, ctx, q, gets, gets + h->get_bytes, h->gsmall, par);
        const char *msgs = gets + h->get_bytes;
        if (h->msg_bytes) take_msgs(g, ctx, q, msgs, msgs + h->msg_bytes, par);
    }
    if (mine->head[SSTEP_MSG] != SSTEP_NIL) self_msgs(ctx);

    /* 5. gets: every source read, every reply in, before any put lands */
    wait_all(g, &g->rget);
    for (size_t i = 0; i < g->bget.n; ++i) {
        struct bigx *x = &g->bget.e[i];
        if (x->tmp) memcpy(x->ptr, x->tmp, x->size);
    }
    for (lpf_pid_t q = 0; q < P; ++q)
        if (q != me && g->gsmall[q]) scatter_gets(g, ctx, q);
    if (mine->head[SSTEP_GET] != SSTEP_NIL) self_gets(ctx);

    /* 6. puts, source by source (ourselves last), then the direct ones */
    for (lpf_pid_t k = 1; k <= P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        if (q == me) {
            if (mine->head[SSTEP_PUT] != SSTEP_NIL) self_puts(ctx);
            continue;
        }
        const struct fhdr *h = g->hdr[q];
        if (!h->put_bytes) continue;
        const char *b = g->bodyp[q] + h->nreg * sizeof(struct regrec);
        apply_puts(g, ctx, q, b, b + h->put_bytes);
    }
    mark_overlaps(g, &g->bput);
    for (size_t i = 0; i < g->bput.n; ++i) {
        struct bigx *x = &g->bput.e[i];
        post_recv(&g->rmisc, x->tmp ? x->tmp : x->ptr, x->size, x->q, TAG(T_PDATA, par), comm);
    }
    wait_all(g, &g->rmisc);
    for (size_t i = 0; i < g->bput.n; ++i) {
        struct bigx *x = &g->bput.e[i];
        if (x->tmp) memcpy(x->ptr, x->tmp, x->size);
    }
    wait_all(g, &g->sfirst);
    if (g->rdg.n) wait_all(g, &g->rdg);
    if (g->tmp.head) sstep_arena_reset(&g->tmp);
    g->episode++;
    return LPF_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Leaving a section                                                    */
/* ------------------------------------------------------------------ */

/* Tell every peer we left, then receive from every peer until its own
 * "gone". Returns the section's result as every process sees it. */
static lpf_err_t leave(struct mpi_group *g, struct sstep_ctx *ctx)
{
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    const int par = (int)(e & 1);
    lpf_err_t rc = ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
    if (P == 1) return rc;
    if (g->shm) {
        struct shm_line *ml = line_of(g, me);
        const int gp = (int)(g->gen & 1);
        ml->final_steps[gp] = ctx->superstep;
        ml->final_failed[gp] = ctx->failed ? 1u : 0u;
        /* a word of this section (the very first sync may not have
         * happened: then it still belongs to an older one) */
        for (int k = 0; k < 2; ++k) {
            uint64_t old = atomic_load_explicit(&ml->word[k], memory_order_relaxed);
            uint64_t nw = (old >> 40) == (g->gen & 0xffffffu) ? old | W_GONE
                                                             : mkword(g->gen, UINT64_MAX, W_GONE);
            atomic_store_explicit(&ml->word[k], nw, memory_order_release);
        }
        struct mpi_wait w;
        mpi_wait_init(&w, NAP_SYNC_NS);
        unsigned it = 0;
        const uint64_t mine_gen = g->gen & 0xffffffu;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me) continue;
            const struct shm_line *l = line_of(g, q);
            for (;;) {
                uint64_t v = atomic_load_explicit(&l->word[0], memory_order_acquire);
                uint64_t vg = v >> 40;
                if ((vg == mine_gen && (v & W_GONE)) || vg == ((g->gen + 1) & 0xffffffu)) break;
                if ((++it & 255) == 0) serve_dgets(g);
                mpi_wait_step(&w);
            }
            if (l->final_failed[gp] || l->final_steps[gp] != ctx->superstep) rc = LPF_ERR_FATAL;
        }
        serve_dgets(g);
        wait_all(g, &g->rdg);
        return rc;
    }
    struct fhdr gone;
    memset(&gone, 0, sizeof gone);
    gone.episode = e;
    gone.check = ctx->superstep;
    gone.flags = H_GONE | H_EMPTY | (ctx->failed ? H_FAILED : 0);
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        MPI_Isend(&gone, sizeof gone, MPI_BYTE, (int)q, TAG(T_FIRST, par), g->comm,
                reqv_push(&g->sfirst));
    }
    lpf_pid_t left = P - 1;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (;;) {
        int progress = 0;
        for (lpf_pid_t q = 0; q < P; ++q) {
            if (q == me || g->got[q] != 1) continue;
            const struct fhdr *h = (const struct fhdr *)first_buf(g, par, q);
            progress = 1;
            if (h->flags & H_GONE) {
                g->got[q] = 2;
                left--;
                if ((h->flags & H_FAILED) || h->check != ctx->superstep) rc = LPF_ERR_FATAL;
            } else {
                /* its message of the exchange we did not complete: drop it */
                g->got[q] = 0;
                MPI_Irecv(first_buf(g, par, q), (int)g->E, MPI_BYTE, (int)q, TAG(T_FIRST, par),
                        g->comm, &g->rfirst[q]);
            }
        }
        if (!left) break;
        int n = 0;
        MPI_Testsome((int)P, g->rfirst, &n, g->idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED) n = 0;
        for (int i = 0; i < n; ++i) g->got[g->idx[i]] = 1;
        if (!n) serve_dgets(g);
        if (!n && !progress) mpi_wait_step(&w);
    }
    /* direct gets a peer sent before its "gone" have arrived by now */
    serve_dgets(g);
    wait_all(g, &g->sfirst);
    wait_all(g, &g->rdg);
    return rc;
}

static void push_section(struct mpi_group *g, struct sstep_ctx *ctx)
{
    g->ctx = ctx;
    g->outer = top_section;
    top_section = g;
}

static void pop_section(struct mpi_group *g)
{
    if (top_section == g) top_section = g->outer;
}

/* pid leaves: drain, release group and context */
static lpf_err_t section_end(struct sstep_ctx *ctx)
{
    struct mpi_group *g = ctx->group;
    lpf_err_t rc = leave(g, ctx);
    pop_section(g);
    if (g->has_bwin) MPI_Win_free(&g->bwin);   /* every process gets here */
    group_free(g);
    sstep_ctx_destroy(ctx);
    return rc;
}

/* The program exits inside sections: leave them (in the failure state),
 * so that peers' syncs fail instead of waiting for us. */
void mpi_leave_all_sections(void)
{
    while (top_section) {
        struct mpi_group *g = top_section;
        top_section = g->outer;
        g->ctx->failed = 1;
        (void)leave(g, g->ctx);
    }
}

lpf_err_t mpi_run_section(MPI_Comm comm, struct mpi_shm *shm, lpf_pid_t pid, lpf_pid_t P,
        lpf_pid_t free_p, int in_hook, lpf_spmd_t spmd, lpf_args_t args)
{
    struct mpi_group *g = group_new(comm, pid, P, sstep_mpi.oversub, shm);
    struct sstep_ctx *ctx = g ? sstep_ctx_create(pid, P, &sstep_mpi_engine, g) : NULL;
    if (!ctx)
        sstep_fatal(NULL, in_hook ? "lpf_hook" : "lpf_exec",
                "process %u: out of memory starting a section of %u processes", pid, P);
    ctx->free_p = free_p;
    ctx->in_hook = in_hook;
    push_section(g, ctx);
    spmd(ctx, pid, P, args);
    return section_end(ctx);
}

/* ------------------------------------------------------------------ */
/* exec, rehook, hook                                                   */
/* ------------------------------------------------------------------ */

static lpf_err_t mp_exec_begin(struct sstep_ctx *parent, lpf_pid_t P, lpf_spmd_t spmd,
        lpf_args_t args, struct sstep_ctx **ctx0)
{
    /* Only the master's root context spans ranks; a nested section runs on
     * threads inside this rank. */
    if (!sstep_mpi.master || parent != sstep_root_ctx() || P <= 1 || top_section
            || (int)P > sstep_mpi.size)
        return sstep_pthread_engine.exec_begin(parent, P, spmd, args, ctx0);
    lpf_pid_t F = parent->free_p;
    if (mpi_send_exec(P, F, spmd, args)) return LPF_ERR_FATAL;
    MPI_Comm comm = mpi_section_comm(P);
    struct mpi_group *g = group_new(comm, 0, P, sstep_mpi.oversub, mpi_section_shm(P));
    struct sstep_ctx *ctx = g ? sstep_ctx_create(0, P, &sstep_mpi_engine, g) : NULL;
    if (!ctx) sstep_fatal(parent, "lpf_exec", "out of memory starting a section of %u processes", P);
    ctx->free_p = F >= P ? sstep_share(F, P, 0) : 1;
    push_section(g, ctx);
    *ctx0 = ctx;
    return LPF_SUCCESS;
}

static lpf_err_t mp_exec_end(struct sstep_ctx *ctx0)
{
    return section_end(ctx0);
}

/* after the rehook exchange: the superstep counts, and spmd runs as a new
 * section on a copy of the communicator */
static lpf_err_t rehook_section(struct mpi_group *g, struct sstep_ctx *ctx,
        lpf_spmd_t spmd, lpf_args_t args)
{
    g->episode++;
    MPI_Comm child;
    if (MPI_Comm_dup(g->comm, &child) != MPI_SUCCESS) {
        ctx->failed = 1;
        return LPF_ERR_FATAL;
    }
    lpf_err_t rc = mpi_run_section(child, NULL, g->pid, g->P, 1, 1, spmd, args);
    MPI_Comm_free(&child);
    return rc;
}

static lpf_err_t mp_rehook(struct sstep_ctx *ctx, lpf_spmd_t spmd, lpf_args_t args)
{
    struct mpi_group *g = ctx->group;
    const lpf_pid_t P = g->P, me = g->pid;
    const uint64_t e = g->episode;
    const int par = (int)(e & 1);
    /* every process must be rehooking: one header-only exchange */
    if (g->shm) {
        atomic_store_explicit(&line_of(g, me)->word[par], mkword(g->gen, e, W_EMPTY | W_REHOOK),
                memory_order_release);
        if (node_wait_first(g, e, W_REHOOK)) {
            ctx->failed = 1;
            return LPF_ERR_FATAL;
        }
        return rehook_section(g, ctx, spmd, args);
    }
    struct fhdr h;
    memset(&h, 0, sizeof h);
    h.episode = e;
    h.flags = H_REHOOK | H_EMPTY;
    for (lpf_pid_t k = 1; k < P; ++k) {
        lpf_pid_t q = me + k;
        if (q >= P) q -= P;
        MPI_Isend(&h, sizeof h, MPI_BYTE, (int)q, TAG(T_FIRST, par), g->comm,
                reqv_push(&g->sfirst));
    }
    if (wait_first(g, ctx, e, H_REHOOK)) {
        /* our header must leave before the stack variable goes */
        ctx->failed = 1;
        wait_all(g, &g->sfirst);
        return LPF_ERR_FATAL;
    }
    prepost_next(g, e);
    wait_all(g, &g->sfirst);
    return rehook_section(g, ctx, spmd, args);
}

static lpf_err_t mp_hook(lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args)
{
    struct mpi_init *x = init;
    if (x->nprocs == 1) {
        struct sstep_ctx *ctx = sstep_ctx_create(0, 1, &sstep_mpi_engine, NULL);
        if (!ctx) return LPF_ERR_OUT_OF_MEMORY;
        ctx->in_hook = 1;
        spmd(ctx, 0, 1, args);
        lpf_err_t rc = ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
        sstep_ctx_destroy(ctx);
        return rc;
    }
    int oversub = sstep_mpi.oversub;
    sstep_mpi.oversub = x->oversub;
    lpf_err_t rc = mpi_run_section(x->comm, x->shm, x->pid, x->nprocs, 1, 1, spmd, args);
    sstep_mpi.oversub = oversub;
    return rc;
}

/* ------------------------------------------------------------------ */
/* direct get, remote size, abort, machine                              */
/* ------------------------------------------------------------------ */

/* Serve the direct gets peers sent us: read our memory now and send it
 * (bounds are checked here, at the owner). */
static void serve_dgets(struct mpi_group *g)
{
    for (;;) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_Improbe(MPI_ANY_SOURCE, T_DGREQ, g->comm, &flag, &m, &st);
        if (!flag) break;
        struct dgreq r;
        MPI_Mrecv(&r, sizeof r, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        lpf_pid_t q = (lpf_pid_t)st.MPI_SOURCE;
        char *from = sstep_resolve_global(g->ctx, r.slot, (size_t)r.off, (size_t)r.size);
        if (!from)
            sstep_remote_range_error(g->ctx, "bsp_direct_get", q, r.slot, (size_t)r.off,
                    (size_t)r.size);
        post_send(&g->rdg, from, (size_t)r.size, q, T_DGREP, g->comm);
    }
    if (g->rdg.n) {
        int done = 0;
        MPI_Testall((int)g->rdg.n, g->rdg.r, &done, MPI_STATUSES_IGNORE);
        if (done) g->rdg.n = 0;
    }
}

/* bsp_direct_get: ask the owner, which answers from its wait loops (its
 * next sync at the latest); serve others' requests while waiting. */
static lpf_err_t mp_direct_get(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot,
        size_t off, void *dst, size_t size)
{
    struct mpi_group *g = ctx->group;
    if (pid == ctx->pid || !g) {
        char *from = sstep_resolve_global(ctx, slot, off, size);
        if (!from) sstep_remote_range_error(ctx, "bsp_direct_get", ctx->pid, slot, off, size);
        memmove(dst, from, size);
        return LPF_SUCCESS;
    }
    struct reqv v = { NULL, 0, 0 };
    post_recv(&v, dst, size, pid, T_DGREP, g->comm);
    struct dgreq r = { slot, 0, off, size };
    MPI_Send(&r, sizeof r, MPI_BYTE, (int)pid, T_DGREQ, g->comm);
    int flag = 0;
    struct mpi_wait w;
    mpi_wait_init(&w, NAP_SYNC_NS);
    for (;;) {
        MPI_Testall((int)v.n, v.r, &flag, MPI_STATUSES_IGNORE);
        if (flag) break;
        serve_dgets(g);
        mpi_wait_step(&w);
    }
    free(v.r);
    return LPF_SUCCESS;
}

static size_t mp_remote_size(struct sstep_ctx *ctx, lpf_pid_t pid, uint32_t slot)
{
    struct mpi_group *g = ctx->group;
    if (!g || pid >= g->P) return SIZE_MAX;
    const struct rsize *r = &g->rsz[pid];
    return slot < r->n ? r->s[slot] : SIZE_MAX;
}

static void mp_abort(struct sstep_ctx *ctx, int status)
{
    (void)ctx;
    fflush(stdout);
    fflush(stderr);
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    if (inited) MPI_Finalized(&fin);
    if (inited && !fin) {
        /* give the launcher a moment to forward what this process printed
         * (the message saying why) before it tears the job down */
        struct timespec ts = { 0, 100000000 };
        nanosleep(&ts, NULL);
        MPI_Abort(MPI_COMM_WORLD, status);
    }
    _exit(status);
}

static lpf_pid_t mp_machine_p(void)
{
    if (sstep_mpi.started && sstep_mpi.size > 0) return (lpf_pid_t)sstep_mpi.size;
    return sstep_machine_p();
}

/* ------------------------------------------------------------------ */
/* Shared-memory windows                                                */
/* ------------------------------------------------------------------ */

struct mpi_shm *mpi_shm_create(MPI_Comm comm)
{
    int size = 1, rank = 0, local = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    const char *v = getenv("SUPERSTEP_MPI_SHM");
    int ok = size > 1 && !(v && strcmp(v, "0") == 0);
    MPI_Comm node;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
    }
    if (local != size) ok = 0;
    /* every process must take the same decision */
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) return NULL;
    struct mpi_shm *shm = calloc(1, sizeof *shm);
    char **seg = calloc((size_t)size, sizeof *seg);
    /* mailboxes: 64 KiB for a few processes, shrinking as P grows */
    size_t E = ((size_t)1 << 20) / (2 * (size_t)size);
    if (E > 65536) E = 65536;
    if (E < 4096) E = 4096;
    char *base = NULL;
    MPI_Win win;
    int rc = MPI_Win_allocate_shared((MPI_Aint)(SHM_LINE + 2 * (size_t)size * E), 64,
            MPI_INFO_NULL, comm, &base, &win);
    int good = rc == MPI_SUCCESS && shm && seg;
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, comm);
    if (!good) {
        if (rc == MPI_SUCCESS) MPI_Win_free(&win);
        free(shm);
        free(seg);
        return NULL;
    }
    memset(base, 0, SHM_LINE);
    for (int q = 0; q < size; ++q) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, q, &sz, &du, &seg[q]);
    }
    shm->win = win;
    shm->P = (lpf_pid_t)size;
    shm->E = E;
    shm->seg = seg;
    /* nobody reads a line before its owner cleared it */
    MPI_Barrier(comm);
    return shm;
}

void mpi_shm_free(struct mpi_shm *shm)
{
    if (!shm) return;
    MPI_Win_free(&shm->win);
    free(shm->seg);
    free(shm);
}

const struct sstep_engine sstep_mpi_engine = {
    .name = "mpi",
    .machine_p = mp_machine_p,
    .hook = mp_hook,
    .exec_begin = mp_exec_begin,
    .exec_end = mp_exec_end,
    .rehook = mp_rehook,
    .sync = mp_sync,
    .direct_get = mp_direct_get,
    .remote_size = mp_remote_size,
    .abort = mp_abort,
};
