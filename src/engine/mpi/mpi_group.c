/*
 * The MPI engine: a section's state (one group per section and process),
 * and the shared-memory windows of communicators whose processes share a node.
 */
#define _GNU_SOURCE
#include "mpi_group.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static size_t direct_min_cached;

/* our bulk copy's speed in cache, bytes per ns: the best of five copies
 * of 256 KiB (25 us; a group's shared window costs far more) */
static double own_copy_speed(void)
{
    const size_t n = (size_t)256 << 10;
    char *a = malloc(2 * n);
    if (!a) return 0;
    memset(a, 1, 2 * n);
    double best = 0;
    for (int i = 0; i < 5; ++i) {
        uint64_t t0 = mpi_now_ns();
        sstep_copy_bulk(a + n, a, n);
        uint64_t dt = mpi_now_ns() - t0;
        if (dt && (double)n / (double)dt > best) best = (double)n / (double)dt;
    }
    free(a);
    return best;
}

/* Three big copies in a row into our body segment ran at under a twelfth
 * of our own copy's speed in cache: the readers of the segment's lines
 * sit on cores that share no cache with ours (a far core complex, another
 * socket, or vCPUs the host placed far apart), so every store first takes
 * its line back from there (and their copies out will be as slow). Puts
 * from far_put bytes then go directly for 256 syncs, after which the body
 * is tried again; a copy at a normal speed ends it. (One copy the
 * scheduler interrupted does not count.) */
void mpi_note_body_copy(struct mpi_group *g, size_t n, uint64_t dt)
{
    if ((double)n * 12 < (double)dt * g->copy_gbs) {
        if (++g->far_slow >= 3) g->far_until = g->episode + 256;
    } else {
        g->far_slow = 0;
        g->far_until = 0;
    }
}

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

/* a size in bytes from the environment, else dflt */
static size_t env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (s && *s) {
        char *end;
        unsigned long long x = strtoull(s, &end, 10);
        if (*end == '\0') return (size_t)x;
    }
    return dflt;
}

/* The sparse sync on the message path: SUPERSTEP_MPI_SPARSE=0 never,
 * =1 always, unset from SUPERSTEP_MPI_SPARSE_MIN processes on (default
 * SPARSE_MIN_DEFAULT; docs/mpi.md has the measurements behind it). */
#define SPARSE_MIN_DEFAULT 16
int mpi_sparse_wanted(lpf_pid_t P)
{
    const char *v = getenv("SUPERSTEP_MPI_SPARSE");
    if (v && *v) {
        if (strcmp(v, "0") == 0) return 0;
        if (strcmp(v, "1") == 0) return 1;
    }
    size_t m = env_size("SUPERSTEP_MPI_SPARSE_MIN", SPARSE_MIN_DEFAULT);
    if (m < 2) m = 2;
    return (size_t)P >= m;
}

/* sections run so far on a communicator (an attribute of it; a duplicate
 * starts afresh) */
static int sec_key = MPI_KEYVAL_INVALID;

static unsigned section_serial(MPI_Comm c)
{
    if (sec_key == MPI_KEYVAL_INVALID
            && MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &sec_key,
                    NULL) != MPI_SUCCESS)
        return 0;
    void *val = NULL;
    int flag = 0;
    MPI_Comm_get_attr(c, sec_key, &val, &flag);
    uintptr_t n = flag ? (uintptr_t)val : 0;
    MPI_Comm_set_attr(c, sec_key, (void *)(n + 1));
    return (unsigned)n;
}

int mpi_oversubscribed(void)
{
    return sstep_mpi.oversub;
}

void mpi_group_free(struct mpi_group *g)
{
    if (!g) return;
    const lpf_pid_t P = g->P;
    for (lpf_pid_t q = 0; q < P; ++q) {
        if (g->out) free(g->out[q].p);
        if (g->body[0]) free(g->body[0][q].p);
        if (g->body[1]) free(g->body[1][q].p);
        if (g->rin) free(g->rin[q].p);
        if (g->rout) free(g->rout[q].p);
        if (g->rsz) {
            free(g->rsz[q].s);
            free(g->rsz[q].a);
        }
    }
    free(g->firstmem);
    free(g->gask);
    free(g->gaskr);
    free(g->gans);
    free(g->askers);
    free(g->ord);
    free(g->ordall);
    free(g->amark);
    for (int i = 0; i <= POOL_MAX; ++i) free(g->poolbuf[i]);
    sstep_arena_free(&g->farena);
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
    free(g->wflags_state);
    free(g->ehdr);
    free(g->bseg);
    free(g->boff);
    free(g->blen);
    free(g->bsrc);
    free(g->regs);
    free(g->sfirst.r);
    free(g->rbar.r);
    free(g->rbody.r);
    free(g->rget.r);
    free(g->rmisc.r);
    free(g->rdg.r);
    free(g->dgw);
    free(g->bsplit.e);
    free(g->dgseen);
    free(g->bsend.e);
    free(g->bget.e);
    free(g->bput.e);
    sstep_arena_free(&g->tmp);
    sstep_arena_free(&g->rmsg[0]);
    sstep_arena_free(&g->rmsg[1]);
    free(g);
}

struct mpi_group *mpi_group_new(MPI_Comm comm, lpf_pid_t pid, lpf_pid_t P, int oversub,
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
    for (int i = 0; i <= POOL_MAX; ++i) g->pool[i] = MPI_REQUEST_NULL;
    g->pool_want = 2;
    g->pooltag = -1;
    g->secpar = (int)(section_serial(comm) & 1);
    if (!shm && P > 1 && mpi_sparse_wanted(P)) {
        /* few first messages per sync, received into two buffers and
         * kept by their size: room for more inline data */
        g->sparse = 1;
        g->E = 8192;
        unsigned r = 0;
        while (((lpf_pid_t)1 << r) < P) ++r;
        g->nrounds = r;
        /* waits that block in MPI: under SMPI (which charges every test
         * and can spin forever on free ones) at once, elsewhere only when
         * asked (SUPERSTEP_MPI_BLOCK=1; MPI libraries poll inside) */
#ifdef SUPERSTEP_SMPI
        g->block = 2;
#endif
        const char *b = getenv("SUPERSTEP_MPI_BLOCK");
        if (b && *b) g->block = strcmp(b, "0") == 0 ? 0 : strcmp(b, "2") == 0 ? 2 : 1;
    }
    g->dgr = MPI_REQUEST_NULL;
    if (shm) {
        g->shm = shm;
        g->gen = ++shm->gen;
        g->E = shm->E;
        /* bsp_direct_get by process_vm_readv unless SUPERSTEP_MPI_CMA=0 */
        const char *cma = getenv("SUPERSTEP_MPI_CMA");
        g->cma = shm->ospid && !(cma && strcmp(cma, "0") == 0);
        atomic_store_explicit(&line_of(g, pid)->applied, mkword(g->gen, 0, 0),
                memory_order_release);
        /* puts from 1 MiB split between both processes' cores unless
         * SUPERSTEP_MPI_SPLIT=0 (peers of earlier sections are done with
         * our counters: every sync waited for them) */
        const char *sp = getenv("SUPERSTEP_MPI_SPLIT");
        g->cma_put = g->cma && shm->cma_ok && !(sp && strcmp(sp, "0") == 0);
        g->split_seen = atomic_load_explicit(&line_of(g, pid)->splitdone, memory_order_acquire);
        g->read_seen = atomic_load_explicit(&line_of(g, pid)->readdone, memory_order_acquire);
    }
    g->big = direct_min();
    g->big_put = g->big;
    g->body_budget = 0;
    if (shm) {
        /* puts below 1 MiB through the body segment, up to 4 MiB a sync:
         * the second copy reads every byte from the sender's core, cheap
         * when the two cores share a cache (a 256 KiB total exchange at
         * p = 2: 23 us instead of 31 direct). Where they share none
         * (another socket or core complex, or vCPUs the host placed far
         * apart) both copies run at a fraction of their speed (256 KiB:
         * 150 us instead of 32 direct): the sender sees it in its own copy
         * and puts from far_put bytes (64 KiB) directly for a while
         * (mpi_note_body_copy) */
        size_t m = env_size("SUPERSTEP_MPI_SHM_DIRECT_MIN", (size_t)1 << 20);
        g->big_put = m > g->big ? m : g->big;
        size_t f = env_size("SUPERSTEP_MPI_SHM_FAR_MIN", (size_t)64 << 10);
        g->far_put = f < g->big ? g->big : f > g->big_put ? g->big_put : f;
        g->copy_gbs = own_copy_speed();
        g->body_budget = env_size("SUPERSTEP_MPI_SHM_BODY", (size_t)4 << 20);
    }
    /* first-message receive buffers (message path only) */
    g->firstmem = aligned_alloc(64, shm || g->sparse ? 64 : 2 * (size_t)P * g->E);
    g->ord = malloc(P * sizeof *g->ord);
    g->ordall = malloc(P * sizeof *g->ordall);
    g->amark = calloc(P, sizeof *g->amark);
    if (g->sparse) {
        g->poolbuf[1] = aligned_alloc(64, g->E);
        g->poolbuf[2] = aligned_alloc(64, g->E);
    }
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
    /* the dense exchange's and the on-node path's per-peer state (the
     * sparse sync keeps O(P) small: 4,096 simulated ranks share a host) */
    const int dense = !g->sparse;
    if (dense) {
        g->wflags = calloc(P, 1);
        g->wflags_state = calloc(P, 1);
        g->ehdr = calloc(P, sizeof *g->ehdr);
        g->bseg = calloc(P, sizeof *g->bseg);
        g->dgseen = calloc(P, sizeof *g->dgseen);
        g->boff = calloc(P, sizeof *g->boff);
        g->blen = calloc(P, sizeof *g->blen);
        g->bsrc = calloc(P, sizeof *g->bsrc);
    }
    if ((dense && (!g->wflags || !g->wflags_state || !g->ehdr || !g->bseg || !g->dgseen
                || !g->boff || !g->blen || !g->bsrc))
            || !g->firstmem || !g->rfirst || !g->got || !g->idx || !g->out || !g->osep
            || !g->gsmall || !g->body[0] || !g->body[1] || !g->hdr || !g->bodyp
            || !g->rin || !g->rout || !g->rsz || !g->ord || !g->ordall || !g->amark
            || (g->sparse && (!g->poolbuf[1] || !g->poolbuf[2]))) {
        g->P = 0;
        mpi_group_free(g);
        return NULL;
    }
    for (lpf_pid_t k = 1; k < P; ++k) g->ordall[k - 1] = pid + k < P ? pid + k : pid + k - P;
    for (lpf_pid_t q = 0; q < P; ++q) {
        g->rfirst[q] = MPI_REQUEST_NULL;
        if (q == pid || shm || g->sparse) continue;
        MPI_Irecv(first_buf(g, 0, q), (int)g->E, MPI_BYTE, (int)q, TAG(T_FIRST, 0), comm,
                &g->rfirst[q]);
    }
    return g;
}

/* ------------------------------------------------------------------ */
/* Shared-memory windows                                                */
/* ------------------------------------------------------------------ */

/* bytes of a range-packet ring per sender: 16 KiB, less from 17
 * processes on (256 KiB of rings per process at most, 2 KiB at least);
 * SUPERSTEP_MPI_RING=bytes (a power of two from 256 on; 0: range packets
 * by MPI) */
static size_t ring_bytes(int size)
{
    const char *v = getenv("SUPERSTEP_MPI_RING");
    if (v && *v) {
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (*end == '\0') {
            if (x == 0) return 0;
            size_t r = 256;
            while (r < ((size_t)1 << 20) && 2 * r <= x) r *= 2;
            return r;
        }
    }
    size_t r = 16384;
    while (r > 2048 && r * (size_t)size > ((size_t)256 << 10)) r /= 2;
    return r;
}

struct mpi_shm *mpi_shm_create(MPI_Comm comm)
{
    int size = 1, rank = 0, local = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    const char *v = getenv("SUPERSTEP_MPI_SHM");
    int ok = size > 1 && !(v && strcmp(v, "0") == 0);
    if (!ok) return NULL;   /* (the same on every process) */
    /* mailboxes: 64 KiB for a few processes, shrinking as P grows */
    size_t E = ((size_t)1 << 20) / (2 * (size_t)size);
    if (E > 65536) E = 65536;
    if (E < 4096) E = 4096;
    int ring = (int)ring_bytes(size);
    MPI_Allreduce(MPI_IN_PLACE, &ring, 1, MPI_INT, MPI_MIN, comm);
    const size_t roff = SHM_LINE + 2 * (size_t)size * E;
    const size_t segsz = roff + (size_t)size * (MPI_RING_CTL + (size_t)ring);
    /* Address space for the window (every process maps all of it) and
     * what MPI needs besides (a communicator, the window's own state):
     * where it is lacking (ulimit -v), MPI fails inside or crashes. Then
     * no process tries. */
    size_t need = 2 * segsz * (size_t)size + ((size_t)4 << 20);
    void *m = mmap(NULL, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int room = m != MAP_FAILED;
    if (room) munmap(m, need);
    MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_INT, MPI_MIN, comm);
    if (!room) return MPI_SHM_NOMEM;
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
    char *base = NULL;
    MPI_Win win;
    /* a failure is an error code here, not the end of the job */
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(comm, &eh);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate_shared((MPI_Aint)segsz, 64,
            MPI_INFO_NULL, comm, &base, &win);
    MPI_Comm_set_errhandler(comm, eh);
    MPI_Errhandler_free(&eh);
    struct mpi_ring *rl = calloc((size_t)size, sizeof *rl);
    int good = rc == MPI_SUCCESS && shm && seg && rl;
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, comm);
    if (!good) {
        if (rc == MPI_SUCCESS) MPI_Win_free(&win);
        free(shm);
        free(seg);
        free(rl);
        return NULL;
    }
    memset(base, 0, SHM_LINE);
    memset(base + roff, 0, segsz - roff);
    for (int q = 0; q < size; ++q) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, q, &sz, &du, &seg[q]);
    }
    shm->ospid = malloc((size_t)size * sizeof *shm->ospid);
    int me = (int)getpid(), okp = shm->ospid != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &okp, 1, MPI_INT, MPI_MIN, comm);
    if (okp) MPI_Allgather(&me, 1, MPI_INT, shm->ospid, 1, MPI_INT, comm);
    else {
        free(shm->ospid);
        shm->ospid = NULL;
    }
    /* may we read each other's memory (process_vm_readv: same user, Yama
     * ptrace_scope 0, no seccomp profile against it)? Split puts need
     * every pair; bsp_direct_get finds out by itself */
    int cma = shm->ospid != NULL;
    if (cma) {
        uint64_t mine = (uint64_t)(uintptr_t)&shm->P, *addr = malloc((size_t)size * sizeof *addr);
        cma = addr != NULL;
        MPI_Allreduce(MPI_IN_PLACE, &cma, 1, MPI_INT, MPI_MIN, comm);
        if (cma) {
            shm->P = (lpf_pid_t)size;
            MPI_Allgather(&mine, 1, MPI_UINT64_T, addr, 1, MPI_UINT64_T, comm);
            for (int q = 0; q < size && cma; ++q) {
                lpf_pid_t v = 0;
                struct iovec l = { &v, sizeof v }, r = { (void *)(uintptr_t)addr[q], sizeof v };
                cma = process_vm_readv((pid_t)shm->ospid[q], &l, 1, &r, 1, 0) == (ssize_t)sizeof v
                        && v == (lpf_pid_t)size;
            }
            MPI_Allreduce(MPI_IN_PLACE, &cma, 1, MPI_INT, MPI_MIN, comm);
        }
        free(addr);
    }
    shm->cma_ok = cma;
    shm->win = win;
    shm->P = (lpf_pid_t)size;
    shm->E = E;
    shm->seg = seg;
    shm->ring = (size_t)ring;
    shm->roff = roff;
    shm->rl = rl;
    /* nobody reads a line before its owner cleared it */
    MPI_Barrier(comm);
    return shm;
}

void mpi_shm_free(struct mpi_shm *shm)
{
    if (!shm || shm == MPI_SHM_NOMEM) return;
    MPI_Win_free(&shm->win);
    free(shm->seg);
    free(shm->ospid);
    free(shm->rl);
    free(shm);
}
