/*
 * The MPI launcher this process was started by, as its environment tells
 * (launcher.c): Open MPI's mpirun, MPICH's Hydra (mpiexec), Slurm's srun, a
 * PMIx launcher. The engine chosen at start-up follows it (docs/mpi.md).
 */
#ifndef SSTEP_LAUNCHER_H
#define SSTEP_LAUNCHER_H

#include "core_internal.h"

struct sstep_launch {
    const char *name;   /* "mpirun (Open MPI)", ...; NULL: no launcher */
    long rank;          /* this process's rank, -1 unknown */
    long size;          /* processes the launcher started, -1 unknown */
    long local_size;    /* of them on this host, -1 unknown */
};

/* 1 and *l filled when the environment names a launcher, else 0 */
SSTEP_HIDDEN int sstep_launcher(struct sstep_launch *l);

/* 1 when the launcher started more than one process (so that each of them
 * running alone would be P separate runs) */
SSTEP_HIDDEN int sstep_launcher_several(const struct sstep_launch *l);

/* On a rank that did not run main (MPI engine): a SIGSEGV or SIGBUS
 * prints one line that reminds of the globals rule, then goes on to the
 * handler that was there (MPI's, a sanitizer's) or the default. */
SSTEP_HIDDEN void sstep_crash_hint_install(int rank, int size);

#endif
