/*
 * Output lines tagged with the BSP pid of the thread that printed them
 * (bsprun --tag-output on the pthread and hybrid engines; output.c).
 */
#ifndef SSTEP_OUTPUT_H
#define SSTEP_OUTPUT_H

#include "core_internal.h"

/* Starts a line the library has tagged already, on a pipe whose reader
 * (bsprun's filter, the MPI engine's forwarder) takes it away and adds no
 * tag of its own; anywhere else in a line it starts a new line. */
#define SSTEP_OUT_MARK "\036\036"
#define SSTEP_OUT_MARK_LEN 2

/* What is now on fd (1 or 2) goes to a reader that takes marks away
 * (mpi_output.c: a hybrid rank's forwarder pipes with --tag-output, or
 * Open MPI's stdout and stderr where bsprun makes the launcher's tags its
 * own). Before the first section. */
SSTEP_HIDDEN void sstep_out_mark_fd(int fd);

/* This thread's tag (its BSP pid among the processes bsprun started), or
 * -1: no tagging, or a thread outside every section. */
SSTEP_HIDDEN long sstep_out_tag(void);

/* The calling thread runs a BSP process from now on: its lines on stdout
 * and stderr start with "[tag] " (a thread that has a tag keeps it: a
 * nested section's processes print as the process that started it).
 * Nothing where lines are not tagged. Pairs with sstep_out_leave, which
 * writes the thread's unterminated last lines with a newline added. */
SSTEP_HIDDEN void sstep_out_enter(long tag);
SSTEP_HIDDEN void sstep_out_leave(void);

/* all n bytes to fd, retried after signals; dropped when nobody reads */
SSTEP_HIDDEN void sstep_write_all(int fd, const char *p, size_t n);

/* the calling thread's unterminated lines, now (an abort) */
SSTEP_HIDDEN void sstep_out_flush_self(void);

#endif
