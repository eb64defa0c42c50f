/*
 * The MPI engine's sections: the state of one section (a group), the wire
 * format of a sync, and the functions its files share.
 *
 *   mpi_group.c     a section's state; the shared-memory windows
 *   mpi_exchange.c  waiting, the first-message exchange (MPI and on-node)
 *   mpi_encode.c    what a process sends each peer at a sync
 *   mpi_apply.c     applying what arrived: gets, messages, puts
 *   mpi_sync.c      the sync itself (design in its head comment)
 *   mpi_section.c   leaving a section, exec/hook/rehook, direct get, abort
 *   mpi_range.c     the PUB extensions E1, E2 (range and oblivious syncs): the
 *                   protocol, the waits
 *   mpi_range_net.c their packets, sending and receiving; E4's rounds
 *   mpi_range_shm.c their packets on one node: rings in the shared segment
 */
#ifndef SSTEP_MPI_GROUP_H
#define SSTEP_MPI_GROUP_H

#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Constants and wire format                                            */
/* ------------------------------------------------------------------ */

/* tags: kind + episode parity */
enum { T_FIRST = 0, T_BODY = 2, T_GDATA = 4, T_PDATA = 6, T_MDATA = 8,
       T_PSPLIT = 10 };   /* a split put's second half, when sent as a message */
/* bigx.tag of a split put's first half, which the destination reads with
 * process_vm_readv (not an MPI tag) */
enum { X_PREAD = -1 };
#define TAG(kind, par) ((kind) + (par))
/* direct gets (bsp_direct_get), outside the superstep structure */
enum { T_DGREQ = 20, T_DGREP = 21 };
/* the sparse sync: "have you left?" travels as a dgreq with slot and piece
 * UINT32_MAX (DG_ASK); the one-byte answer, once the owner leaves, as
 * T_GONEREP */
enum { T_GONEREP = 22 };
#define DG_ASK UINT32_MAX
/* the PUB extensions' range syncs (mpi_range.c): every packet, one tag */
enum { T_RANGE = 30 };
/* the sparse sync (mpi_exchange.c): first messages (+ episode parity + 2 x
 * section parity) and the barrier's rounds (+ 2 x round + section parity) */
enum { T_SFIRST = 40, T_BAR = 48 };
#define STAG_FIRST(par, sp) (T_SFIRST + (par) + 2 * (sp))
#define STAG_BAR(r, sp) (T_BAR + 2 * (r) + (sp))
#define BAR_ROUNDS_MAX 32
#define POOL_MAX 32      /* any-source first-message receives at most */
#define POOL_GROW 16     /* ... more than 2 once this many came in one sync */
/* under SMPI: a section's start-up agreement by point-to-point messages
 * (mpi_section.c), above every T_BAR round */
enum { T_START = T_BAR + 2 * BAR_ROUNDS_MAX + 2 };

/* A message of the sparse sync's barrier: what the process and the
 * processes it has heard of (directly or through earlier rounds) bring.
 * Combined with min, max, or and and only, so that hearing of a process
 * twice changes nothing. */
#define B_SYNC 1u        /* in a sync */
#define B_REHOOK 2u      /* in a rehook */
#define B_GONE 4u        /* left the section */
#define B_FAILED 8u      /* left in the failure state */
#define B_RANGE 16u      /* left, and sent range packets (a final one follows) */
struct bmsg {
    uint64_t vmin, vmax;  /* sync: the agreement value; gone: supersteps done */
    uint32_t pmin, pmax;  /* the lowest pid with vmin, with vmax */
    uint32_t any;         /* or of B_* */
    uint32_t all;         /* and of B_* */
};

struct dgreq {
    uint32_t slot;
    uint32_t piece;    /* 0: the reply in one message; else in pieces of this size */
    uint64_t off;
    uint64_t size;
    uint64_t ep;       /* exchanges the reader completed: the owner answers once it
                          completed as many (its memory holds their puts) */
};

/* a direct get that waits for its owner to complete the current exchange */
struct dgwait {
    struct dgreq r;
    lpf_pid_t q;
};

#define CHUNK ((size_t)1 << 30)      /* MPI counts are int: larger transfers are split */

#define H_GONE 1u        /* the sender left the section (check = supersteps done) */
#define H_FAILED 2u      /* ... in the failure state */
#define H_REHOOK 4u      /* this episode is a rehook, not a sync */
#define H_SEPARATE 8u    /* the body follows as its own message */
#define H_EMPTY 16u      /* no body at all */
#define H_SHMBODY 32u    /* the body lies in the sender's shared body segment */
#define H_RANGE 64u      /* gone: range packets were sent; a final one (T_RANGE) ends them */

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
    uint64_t addr;    /* where the area lies at the sender (for process_vm_readv) */
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
/* with REC_DIRECT, on one node: a split put. The record is followed by the
 * source's address (8 bytes); the destination reads the first half from
 * there (process_vm_readv), the source writes the second half into the
 * destination (process_vm_writev) once the destination says it may, or
 * sends it (T_PSPLIT) when the destination says so: both cores copy */
#define REC_SPLIT 2u
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
static inline int mbuf_reserve(struct mbuf *b, size_t n)
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

static inline MPI_Request *reqv_push(struct reqv *v)
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
    uint64_t raddr;   /* split puts: the peer's address (source or destination) */
};

struct bigv {
    struct bigx *e;
    size_t n, cap;
};

static inline int bigv_reserve(struct bigv *v, size_t n)
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
    x->raddr = 0;
}

struct rsize {
    size_t *s;
    uint64_t *a;      /* the areas' addresses in the peer's address space */
    uint32_t n;
};

/* ------------------------------------------------------------------ */
/* Groups: one per section and process                                  */
/* ------------------------------------------------------------------ */

struct mpi_group {
    MPI_Comm comm;
    lpf_pid_t P, pid;
    uint64_t episode;          /* exchanges done (syncs and rehooks) */
    uint64_t episode_pub;      /* exchanges whose effects direct gets may read
                                  (= episode but in the hybrid engine, between
                                  its rank-level sync and its threads' puts) */
    int hold_pub;              /* the hybrid engine: mpi_episode_done leaves the
                                  publishing to mpi_episode_publish */
    size_t E;                  /* capacity of a first message */
    size_t big;                /* requests of this size and more travel directly */
    size_t big_put;            /* puts: the same; larger on one node, where a put below
                                  it goes through the shared body segment (two memcpy
                                  beat the MPI library's single-copy path up to ~1 MiB) */
    size_t far_put;            /* on one node: big_put while our copies into the body
                                  segment are slow (mpi_note_body_copy) */
    double copy_gbs;           /* our own bulk copy's speed (bytes per ns), in cache */
    uint64_t far_until;        /* nonzero: puts from far_put bytes go directly until
                                  this episode, then the body is tried again */
    unsigned far_slow;         /* slow copies into the body in a row */
    size_t body_budget;        /* on one node: bytes of puts of big..big_put-1 bytes
                                  that one sync may send through the body segment */
    size_t body_left;          /* what is left of it in the current sync */
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
    struct dgwait *dgw;        /* direct gets asked before we completed the exchange */
    uint64_t *dgseen;          /* [P] 1 + our exchange count when the owner was seen
                                  to have completed it too (on one node) */
    size_t ndgw, dgwcap;
    struct bigv bsend;         /* our direct puts and messages, in order */
    struct bigv bget;          /* our direct gets, in order */
    struct bigv bput;          /* direct puts into our memory, in order */
    struct bigv bsplit;        /* second halves of our split puts, in order */
    int cma_put;               /* split puts (one node, cross-memory attach works) */
    size_t nsplit_in;          /* split puts into our memory this sync */
    int split_write;           /* this sync their sources write the second halves */
    uint64_t split_seen;       /* splitdone / readdone we waited for so far */
    uint64_t read_seen;
    struct sstep_arena tmp;    /* scratch of one sync */
    struct sstep_arena rmsg[2];/* direct messages received, by parity */
    int oversub;
    struct mpi_shm *shm;       /* on-node fast path (NULL: first messages by MPI) */
    int cma;                   /* bsp_direct_get reads peers with process_vm_readv */
    uint64_t gen;              /* this section's number on shm */
    unsigned char *wflags;     /* [P] flags of peers' arrival words */
    unsigned char *wflags_state; /* [P] watchdog scratch: who has arrived */
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
    struct mpi_range *range;   /* E1/E2 state (mpi_range.c), made on first use */
    /* the sparse sync (mpi_exchange.c): first messages only to peers we
     * have something for, then a dissemination barrier */
    int sparse;
    int secpar;                /* parity of this section on its communicator */
    lpf_pid_t *ord;            /* peers of this sync's data phase, in Latin-square order */
    lpf_pid_t nord;
    lpf_pid_t *ordall;         /* [P-1] every peer in that order (dense) */
    uint32_t *amark;           /* [P] == astamp: q is in ord this sync */
    uint32_t astamp;
    /* [0]: the barrier round's receive; [1..npool]: any-source receives of
     * first messages, 2 at first, more while they arrive faster than two
     * receives take them (a total exchange: 63 through two receives cost
     * 228 us at p = 64 under SMPI), up to POOL_MAX */
    MPI_Request pool[POOL_MAX + 1];
    int npool;                 /* posted */
    int pool_want;             /* to post at the sync's start: what the last one took */
    unsigned pool_got;         /* first messages taken this sync */
    lpf_pid_t nsend;           /* first messages sent this sync: sfirst.r[i] to ord[i] */
    uint64_t pool_e;           /* the episode whose first messages they take */
    struct reqv rbar;          /* the barrier's sends */
    char *poolbuf[POOL_MAX + 1]; /* [E] each, [1..]: made on first use beyond 2 */
    int pooltag;               /* their tag while posted (-1: not posted) */
    int pool_keep;             /* 1: keep what arrives (a sync), 0: drop it */
    struct sstep_arena farena; /* first messages received (until the next sync) */
    unsigned nrounds;          /* ceil(log2 P) */
    struct bmsg bout[BAR_ROUNDS_MAX], bin[BAR_ROUNDS_MAX];
    uint64_t nbar;             /* barriers done in this section */
    /* range syncs with the sparse sync: whether a peer has left (no "gone"
     * header tells it) is asked (mpi_sparse_gone); [P] each, made on first use */
    unsigned char *gask;       /* 0: not asked; 1: asked; 2: it has left */
    MPI_Request *gaskr;        /* [2P]: the question (MPI_Issend), the answer */
    unsigned char *gans;
    lpf_pid_t *askers;         /* peers that asked us (answered when we leave) */
    size_t nask, askcap;
    int leaving;
    /* the sparse sync's waits block in MPI_Waitsome (SUPERSTEP_MPI_BLOCK;
     * 2: at once, 1: after spinning), with a receive for direct gets */
    int block;
    MPI_Request dgr;
    struct dgreq dgbuf;
    uint64_t nsyncs;           /* syncs (SUPERSTEP_MPI_STATS) */
    uint64_t sync_max;         /* most messages sent in one sync without registrations */
    uint64_t sent;             /* messages (or mailbox first messages) sent to peers */
    /* called once every get of the sync has read its source and landed,
     * before any put lands (the hybrid engine writes its threads' gets) */
    void (*before_puts)(void *arg);
    void *before_puts_arg;
};

static inline char *first_buf(struct mpi_group *g, int par, lpf_pid_t q)
{
    return g->firstmem + ((size_t)par * g->P + q) * g->E;
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
    uint64_t final_range[2]; /* gone: 1 if range packets were sent (as H_RANGE) */
    _Atomic uint64_t applied;  /* mkword(gen, exchanges completed, 0): everything
                                  of those exchanges is in this process's memory */
    _Atomic uint64_t split[2]; /* mkword(gen, episode, 1: write your split halves
                                  into my memory; 0: send them) */
    _Atomic uint64_t splitdone; /* split halves peers wrote into us, ever */
    _Atomic uint64_t readdone;  /* split first halves peers read from us, ever */
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

/* request records: write a long one, read either kind */
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

/* mpi_group.c */
SSTEP_HIDDEN struct mpi_group *mpi_group_new(MPI_Comm comm, lpf_pid_t pid, lpf_pid_t P,
        int oversub, struct mpi_shm *shm);
SSTEP_HIDDEN void mpi_group_free(struct mpi_group *g);

/* mpi_exchange.c */
#define NAP_SYNC_NS 200000L    /* waiting in a sync naps at most this long */
SSTEP_HIDDEN uint64_t mpi_now_ns(void);
/* a copy of n bytes into our body segment took dt ns: sets or clears
 * far_until */
SSTEP_HIDDEN void mpi_note_body_copy(struct mpi_group *g, size_t n, uint64_t dt);
/* serve peers' direct gets from a wait (mpi_exchange.c says when) */
SSTEP_HIDDEN void mpi_wait_serve(struct mpi_group *g, struct mpi_wait *w, unsigned it,
        unsigned mask);
/* whether a wait's step it should consult the watchdog */
SSTEP_HIDDEN int mpi_wait_watch_due(const struct mpi_wait *w, unsigned it);
SSTEP_HIDDEN void mpi_wait_all(struct mpi_group *g, struct reqv *v);
SSTEP_HIDDEN void mpi_post_send(struct reqv *v, const char *buf, size_t n, lpf_pid_t q, int tag,
        MPI_Comm c);
SSTEP_HIDDEN void mpi_post_recv(struct reqv *v, char *buf, size_t n, lpf_pid_t q, int tag,
        MPI_Comm c);
/* the sync watchdog's clock in one wait */
struct mpi_watch {
    uint64_t t0;
    int warned;
};
SSTEP_HIDDEN void mpi_sync_watch(struct mpi_group *g, struct mpi_watch *wt,
        const unsigned char *state);
/* the same for a wait among pids lo..lo+n-1 (state[k]: pid lo+k) */
SSTEP_HIDDEN void mpi_watch_range(struct mpi_group *g, struct mpi_watch *wt, lpf_pid_t lo,
        lpf_pid_t n, const unsigned char *state);
/* ... for process `me` with context ctx (the hybrid engine's threads) */
SSTEP_HIDDEN void mpi_watch_range_as(struct sstep_ctx *ctx, lpf_pid_t me, struct mpi_watch *wt,
        lpf_pid_t lo, lpf_pid_t n, const unsigned char *state);
SSTEP_HIDDEN int mpi_node_wait_first(struct mpi_group *g, uint64_t e, unsigned rehook);
SSTEP_HIDDEN void mpi_grow_bodies(struct mpi_group *g, struct sstep_ctx *ctx, size_t need, int par);
SSTEP_HIDDEN int mpi_wait_first(struct mpi_group *g, struct sstep_ctx *ctx, uint64_t e,
        uint32_t rehook);
SSTEP_HIDDEN void mpi_prepost_next(struct mpi_group *g, uint64_t e);
/* the sparse sync: post the any-source first-message receives of episode
 * e (keep: record what arrives as this sync's headers, else drop it) */
SSTEP_HIDDEN void mpi_pool_post(struct mpi_group *g, uint64_t e, int keep);
/* take the pool's receives back (what matched them meanwhile is taken) */
SSTEP_HIDDEN void mpi_pool_stop(struct mpi_group *g);
/* add q to this sync's peers (once) */
SSTEP_HIDDEN void mpi_ord_add(struct mpi_group *g, lpf_pid_t q);
/* wait for our first messages (g->sfirst) to be matched, then the
 * barrier; *res: everybody's contribution combined. Takes first messages
 * meanwhile; at its end every first message to us of this episode is in */
SSTEP_HIDDEN void mpi_sparse_barrier(struct mpi_group *g, const struct bmsg *mine,
        struct bmsg *res);
/* whether sections of P processes on the message path use the sparse sync
 * (SUPERSTEP_MPI_SPARSE, SUPERSTEP_MPI_SPARSE_MIN) */
SSTEP_HIDDEN int mpi_sparse_wanted(lpf_pid_t P);

/* mpi_encode.c */
SSTEP_HIDDEN size_t mpi_out_bound(const struct mpi_group *g, const struct sstep_peer_lists *pl,
        size_t nreg);
SSTEP_HIDDEN size_t mpi_encode(struct mpi_group *g, const struct sstep_ctx *ctx, lpf_pid_t q,
        uint64_t e, uint64_t check, size_t nreg, char *out);
SSTEP_HIDDEN size_t mpi_collect_regs(struct mpi_group *g, const struct sstep_ctx *ctx);

/* mpi_apply.c */
SSTEP_HIDDEN void mpi_mark_overlaps(struct mpi_group *g, struct bigv *v);
SSTEP_HIDDEN void mpi_serve_gets(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end, size_t gsmall, int par);
SSTEP_HIDDEN void mpi_take_msgs(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end, int par);
SSTEP_HIDDEN void mpi_apply_puts(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q,
        const char *p, const char *end);
SSTEP_HIDDEN void mpi_self_gets(struct sstep_ctx *ctx);
SSTEP_HIDDEN void mpi_self_puts(struct sstep_ctx *ctx);
SSTEP_HIDDEN void mpi_self_msgs(struct sstep_ctx *ctx);
SSTEP_HIDDEN void mpi_scatter_gets(struct mpi_group *g, struct sstep_ctx *ctx, lpf_pid_t q);

/* mpi_sync.c */
SSTEP_HIDDEN lpf_err_t mpi_sync(struct sstep_ctx *ctx, struct sstep_sync_info *info);

/* mpi_section.c */
/* the sparse sync: whether q has left the section (asks it once; 0 until
 * it answers, which it does once it leaves) */
SSTEP_HIDDEN int mpi_sparse_gone(struct mpi_group *g, lpf_pid_t q);
/* a request q sent us on T_DGREQ: a direct get (answered now, or once we
 * complete the exchange its reader completed) or a DG_ASK */
SSTEP_HIDDEN void mpi_dg_take(struct mpi_group *g, lpf_pid_t q, const struct dgreq *r);
/* serve the direct gets peers asked of us; how many */
SSTEP_HIDDEN int mpi_serve_dgets(struct mpi_group *g);
/* the end of an exchange: count it, publish it (direct gets wait for it),
 * answer the direct gets that waited for it */
SSTEP_HIDDEN void mpi_episode_done(struct mpi_group *g);
/* ... the publishing alone (mpi_episode_done does it unless hold_pub): the
 * memory holds every put of the exchanges done; direct gets asked after
 * them are answered, and on one node read (the hybrid engine calls it once
 * its threads applied the puts inside the rank) */
SSTEP_HIDDEN void mpi_episode_publish(struct mpi_group *g);
/* split puts (REC_SPLIT): the destination's part before it waits for its
 * transfers (decision, reads of first halves), the source's part
 * (second halves), the end (every half in, every source read) */
SSTEP_HIDDEN void mpi_split_in(struct mpi_group *g, struct sstep_ctx *ctx, int par);
SSTEP_HIDDEN void mpi_split_out(struct mpi_group *g, struct sstep_ctx *ctx, int par);
SSTEP_HIDDEN void mpi_split_end(struct mpi_group *g, struct sstep_ctx *ctx);

/* mpi_range.c: E1/E2/E4 (pub.md §12.2) */
SSTEP_HIDDEN lpf_err_t mpi_sync_range(struct sstep_ctx *ctx, lpf_pid_t lo, lpf_pid_t n,
        const lpf_pid_t *members, struct sstep_stamp stamp, int kind, size_t expect, struct sstep_sync_info *info);
/* leaving the section: the final range packet to every peer if this
 * process sent any (returns 1: announce H_RANGE / final_range) */
SSTEP_HIDDEN int mpi_range_depart(struct mpi_group *g);
/* q announced H_RANGE: its final range packet must be received */
SSTEP_HIDDEN void mpi_range_need(struct mpi_group *g, lpf_pid_t q);
/* after every peer is gone: receive until every announced final packet,
 * complete our sends, free the state */
SSTEP_HIDDEN void mpi_range_drain(struct mpi_group *g);

#endif
