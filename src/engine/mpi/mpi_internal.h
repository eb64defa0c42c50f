/*
 * The MPI engine: internal interfaces between its files.
 *
 *   mpi_group.h    a section's state and the sync's wire format; the files
 *                  that implement sections and the sync (listed there)
 *   mpi_boot.c     start-up (auto-initialisation, the service loop of ranks
 *                  other than 0), function-pointer translation, <lpf/mpi.h>
 *   mpi_tcp.c      the TCP meeting point of lpf_mpi_initialize_over_tcp
 *
 * docs/mpi.md describes the design.
 */
#ifndef SSTEP_MPI_INTERNAL_H
#define SSTEP_MPI_INTERNAL_H

#include "../../core/core_internal.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
/* MPICH defines MPI_STATUS(ES)_IGNORE as (MPI_Status *)1, which GCC 11 and
 * later take for a zero-sized array at every call */
# pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#ifdef SUPERSTEP_SMPI
/* SimGrid's SMPI (bench/scale, docs/scale.md) declares MPI_Improbe and
 * MPI_Mrecv but stops the simulation when they are called. Under it a
 * matched probe is MPI_Iprobe, and its receive an MPI_Recv of the probed
 * source and tag: the same message, as MPI keeps a pair's order and the
 * engine receives nothing else on the communicator in between (SMPI runs
 * no helper threads). */
struct sstep_smpi_msg { int source, tag; MPI_Comm comm; };
static inline int sstep_smpi_improbe(int source, int tag, MPI_Comm comm, int *flag,
        MPI_Message *msg, MPI_Status *st)
{
    MPI_Status s;
    memset(&s, 0, sizeof s);
    *msg = MPI_MESSAGE_NULL;
    int rc = MPI_Iprobe(source, tag, comm, flag, &s);
    if (st != MPI_STATUS_IGNORE) *st = s;
    if (rc != MPI_SUCCESS || !*flag) return rc;
    struct sstep_smpi_msg *m = (struct sstep_smpi_msg *)malloc(sizeof *m);
    if (!m) { *flag = 0; return MPI_ERR_NO_MEM; }
    m->source = s.MPI_SOURCE;
    m->tag = s.MPI_TAG;
    m->comm = comm;
    *msg = (MPI_Message)m;
    return MPI_SUCCESS;
}
static inline int sstep_smpi_mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg,
        MPI_Status *st)
{
    struct sstep_smpi_msg *m = (struct sstep_smpi_msg *)*msg;
    int rc = MPI_Recv(buf, count, type, m->source, m->tag, m->comm, st);
    free(m);
    *msg = MPI_MESSAGE_NULL;
    return rc;
}
# define MPI_Improbe sstep_smpi_improbe
# define MPI_Mrecv sstep_smpi_mrecv
#endif

/* Engine-wide state of this process. */
struct mpi_state {
    int started;         /* MPI is usable by the engine (initialised by anyone) */
    int master;          /* auto-initialised world and this is rank 0: runs main */
    int auto_world;      /* auto-initialised world (rank 0 master, others serve) */
    int we_init;         /* MPI_Init was called by this library */
    int rank, size;      /* in MPI_COMM_WORLD */
    MPI_Comm sect;       /* exec sections: a duplicate of MPI_COMM_WORLD */
    MPI_Comm ctrl;       /* exec commands: another duplicate */
    MPI_Comm *sub;       /* [size+1]: communicator of ranks 0..P-1, made on first use */
    struct mpi_shm **subshm; /* [size+1]: its shared-memory window (or NULL) */
    int oversub;         /* more processes than cores on this node */
    unsigned local_size; /* processes of the job on this node */
    unsigned hybrid_T;   /* hybrid engine: threads per rank (0: not hybrid) */
    unsigned hybrid_P;   /* ... and its processes: bsprun's P (<= size * hybrid_T) */
};
SSTEP_HIDDEN extern struct mpi_state sstep_mpi;

/* Processes of one communicator that all live on this node share one MPI-3
 * window: per process a 128-byte arrival line, per destination and episode
 * parity a mailbox of E bytes for its first messages, and per sender a ring
 * for the PUB extensions' packets. Syncs of sections on that communicator
 * then exchange their first messages through shared memory
 * (mpi_exchange.c), and range syncs their packets (mpi_range_shm.c). */
/* this process's ends of the rings that carry the PUB extensions' packets
 * (mpi_range_shm.c) to and from one peer */
struct mpi_ring {
    uint64_t put, seq, nmpi, took;   /* to the peer: ring position, packets,
                                        packets by MPI, its position last read */
    uint64_t take, next, mrecv;      /* from the peer: ring position, the next
                                        packet's number, MPI packets received */
};
#define MPI_RING_CTL 128  /* a ring's control lines, before its cells */

struct mpi_shm {
    MPI_Win win;
    lpf_pid_t P;
    size_t E;            /* mailbox bytes per (destination, parity) */
    char **seg;          /* [P] every process's segment */
    uint64_t gen;        /* sections run on it so far (equal on all processes) */
    int *ospid;          /* [P] every process's operating-system pid (bsp_direct_get
                            reads peers' memory with process_vm_readv) */
    int cma_ok;          /* every process could read every other's memory so */
    size_t ring;         /* bytes of a range-packet ring per sender (0: no rings) */
    size_t roff;         /* where a segment's rings start (one per sender) */
    struct mpi_ring *rl; /* [P] */
};
/* collective over comm; NULL when not every process is on this node, or
 * SUPERSTEP_MPI_SHM=0; MPI_SHM_NOMEM (on every process) when a process
 * lacks the address space for it */
SSTEP_HIDDEN struct mpi_shm *mpi_shm_create(MPI_Comm comm);
#define MPI_SHM_NOMEM ((struct mpi_shm *)2)
SSTEP_HIDDEN void mpi_shm_free(struct mpi_shm *shm);

/* lpf_init_t made by lpf_mpi_initialize_with_mpicomm / _over_tcp */
struct mpi_init {
    struct sstep_init_header hdr;
    MPI_Comm comm;       /* owned: a duplicate, or the merged TCP communicator */
    lpf_pid_t pid, nprocs;
    int oversub;
    long server_pid;     /* an ompi-server we started for the TCP meeting (0: none) */
    struct mpi_shm *shm; /* on-node fast path, or NULL */
    int borrowed;        /* comm is the program's own (SMPI build), not freed */
};

/* mpi_group.c, mpi_section.c */
SSTEP_HIDDEN int mpi_oversubscribed(void);
/* run spmd as process pid of a section of P processes on comm (every
 * process of the section calls this); returns the section's result */
SSTEP_HIDDEN lpf_err_t mpi_run_section(MPI_Comm comm, struct mpi_shm *shm, lpf_pid_t pid,
        lpf_pid_t P, lpf_pid_t free_p, int in_hook, lpf_spmd_t spmd, lpf_args_t args);
/* leave every section this process is in (program exit inside a section) */
SSTEP_HIDDEN void mpi_leave_all_sections(void);
SSTEP_HIDDEN int mpi_sections_active(void);
/* a top-level section over the ranks (rank 0): 1 if this thread may start
 * one now (then mpi_exec_begin_locked starts it, and its exec_end or a
 * failed start releases), 0 if another is running (said once on stderr) */
SSTEP_HIDDEN int mpi_top_acquire(void);
SSTEP_HIDDEN void mpi_top_release(void);
SSTEP_HIDDEN lpf_err_t mpi_exec_begin_locked(struct sstep_ctx *parent, lpf_pid_t P,
        lpf_spmd_t spmd, lpf_args_t args, struct sstep_ctx **ctx0);

/* mpi_boot.c */
#define MPI_CMD_EXEC 1u
#define MPI_CMD_QUIT 2u
#define MPI_TAG_CMD 77
/* a function pointer as (object, offset): the same function in every rank
 * whatever the address-space layout, static functions included */
struct mpi_fref {
    uint32_t obj;        /* index into the command's object-name table; UINT32_MAX: raw */
    uint32_t pad_;
    uint64_t off;
};
SSTEP_HIDDEN int mpi_send_exec(lpf_pid_t P, lpf_pid_t F, lpf_spmd_t spmd, lpf_args_t args);
SSTEP_HIDDEN void mpi_engine_setup_world(void);
/* the communicator of an exec section of P ranks (0..P-1); collective over them */
SSTEP_HIDDEN MPI_Comm mpi_section_comm(lpf_pid_t P);
SSTEP_HIDDEN struct mpi_shm *mpi_section_shm(lpf_pid_t P);
SSTEP_HIDDEN void mpi_errorf(const char *prim, const char *fmt, ...) SSTEP_PRINTF(2, 3);

/* mpi_output.c: when bsprun asks for it, stdout and stderr go through a
 * forwarder process that writes whole lines to bsprun's pipes */
SSTEP_HIDDEN void mpi_output_start(int hybrid);

/* mpi_tcp.c */
SSTEP_HIDDEN lpf_err_t mpi_tcp_meet(const char *server, const char *port, int timeout_ms,
        lpf_pid_t pid, lpf_pid_t nprocs, MPI_Comm *comm, long *server_pid);
SSTEP_HIDDEN void mpi_tcp_stop_server(long server_pid);

/* waiting: spin while every process has a core, then yield, then nap */
struct mpi_wait {
    uint64_t t0;
    unsigned n;
    int idle;       /* past spinning (yielding or napping): polling is cheap now */
    long nap;
    long nap_max;
};
SSTEP_HIDDEN void mpi_wait_init(struct mpi_wait *w, long nap_max_ns);
SSTEP_HIDDEN void mpi_wait_step(struct mpi_wait *w);

#endif
