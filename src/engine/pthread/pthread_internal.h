/* Internal helpers of the pthread engine. */
#ifndef SSTEP_PTHREAD_INTERNAL_H
#define SSTEP_PTHREAD_INTERNAL_H

#define _GNU_SOURCE
#include "../../core/core_internal.h"

#include <pthread.h>
#include <sched.h>

/* affinity.c: CPU for a slice starting at fraction lo of the machine
 * (-1: no pinning) */
SSTEP_HIDDEN int pt_cpus_for(double lo, double span, unsigned P, unsigned s, cpu_set_t *set);
SSTEP_HIDDEN int pt_pin_attr(pthread_attr_t *attr, const cpu_set_t *set);
SSTEP_HIDDEN int pt_pin_self(const cpu_set_t *set, cpu_set_t *saved);
SSTEP_HIDDEN void pt_unpin_self(const cpu_set_t *saved);

#endif
