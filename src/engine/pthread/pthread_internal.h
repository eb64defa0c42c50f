/* Internal helpers of the pthread engine. */
#ifndef SSTEP_PTHREAD_INTERNAL_H
#define SSTEP_PTHREAD_INTERNAL_H

#define _GNU_SOURCE
#include "../../core/core_internal.h"

#include <pthread.h>
#include <sched.h>

/* affinity.c: CPU for a slice starting at fraction lo of the machine
 * (-1: no pinning) */
SSTEP_HIDDEN int pt_cpu_for(double lo);
SSTEP_HIDDEN int pt_pin_attr(pthread_attr_t *attr, int cpu);
SSTEP_HIDDEN int pt_pin_self(int cpu, cpu_set_t *saved);
SSTEP_HIDDEN void pt_unpin_self(const cpu_set_t *saved);

#endif
