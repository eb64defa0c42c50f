/*
 * Checked mode on the MPI and hybrid engines: the program's own globals at
 * the first SPMD section (checked_globals.c, docs/checked.md).
 */
#ifndef SSTEP_CHECKED_GLOBALS_H
#define SSTEP_CHECKED_GLOBALS_H

#include "core_internal.h"

#ifdef SUPERSTEP_HAVE_MPI
#include <mpi.h>

/* Collective over comm (the P ranks of a starting section, rank 0 the one
 * that ran main): compares the executable's writable data of every rank
 * with rank 0's. Rank 0 prints one line per global that differs. Returns
 * the number of globals that differ (the same on every rank; 0 when all
 * agree or the data could not be read). A global that holds P or
 * machine_p (the processes bsp_nprocs() gives outside a section) on rank 0
 * and 0 elsewhere is taken for the P of bsp_begin(P) and not counted. */
SSTEP_HIDDEN int sstep_chk_globals_mpi(MPI_Comm comm, int rank, int P,
        unsigned long machine_p);
#endif

#endif
