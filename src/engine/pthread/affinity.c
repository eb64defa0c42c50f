/*
 * Thread pinning for the pthread engine.
 *
 * Why: a new thread is woken on its creator's core; with spinning barriers
 * the scheduler may leave two BSP processes on one core for a long time
 * (measured here: supersteps of 65 us instead of 1 us). Pinning places them
 * where they belong from the start.
 *
 * How: every section owns a slice [lo, lo + span) of the machine, as
 * fractions of the CPU list (root: [0, 1)). Process s of a section of P gets
 * [lo + span*s/P, lo + span*(s+1)/P) and is pinned to the CPU at the start
 * of its slice; nested sections subdivide their parent's slice. P larger
 * than the CPUs simply maps several processes to one CPU, evenly.
 *
 * The CPU list is the process's allowed set (taskset/cgroups respected),
 * ordered by SUPERSTEP_PIN:
 *   compact (default)  neighbouring pids on neighbouring cores (topology
 *                      order from hwloc when available)
 *   scatter            neighbouring pids spread over packages/cores
 *   none               no pinning
 *   0,2,4,...          an explicit list of CPU ids
 */
#define _GNU_SOURCE
#include "pthread_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SUPERSTEP_HAVE_HWLOC
#include <hwloc.h>
#endif

static struct {
    pthread_once_t once;
    int enabled;
    int *cpus;
    unsigned n;
} pin = { PTHREAD_ONCE_INIT, 0, NULL, 0 };

#ifdef SUPERSTEP_HAVE_HWLOC
/* Order the allowed CPUs by topology: compact = depth-first order of PUs;
 * scatter = round robin over the cores (then over PUs of a core). */
static unsigned hwloc_order(const cpu_set_t *allowed, int scatter, int *out, unsigned max)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) return 0;
    unsigned n = 0;
    int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int ncore = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (!scatter || ncore <= 0) {
        for (int i = 0; i < npu && n < max; ++i) {
            hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
            if (pu && CPU_ISSET(pu->os_index, allowed)) out[n++] = (int)pu->os_index;
        }
    } else {
        /* first PU of every core, then the second PU of every core, ... */
        for (unsigned level = 0; n < max; ++level) {
            unsigned added = 0;
            for (int c = 0; c < ncore && n < max; ++c) {
                hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
                hwloc_obj_t pu = core ? hwloc_get_obj_inside_cpuset_by_type(topo,
                        core->cpuset, HWLOC_OBJ_PU, level) : NULL;
                if (pu && CPU_ISSET(pu->os_index, allowed)) { out[n++] = (int)pu->os_index; added++; }
            }
            if (!added) break;
        }
    }
    hwloc_topology_destroy(topo);
    return n;
}
#endif

static void pin_init(void)
{
    const char *mode = getenv("SUPERSTEP_PIN");
    if (mode && strcmp(mode, "none") == 0) return;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    unsigned count = (unsigned)CPU_COUNT(&allowed);
    if (count == 0) return;
    pin.cpus = malloc(count * sizeof *pin.cpus);
    if (!pin.cpus) return;
    if (mode && (mode[0] >= '0' && mode[0] <= '9')) {
        /* explicit list */
        const char *p = mode;
        while (*p && pin.n < count) {
            char *end;
            long c = strtol(p, &end, 10);
            if (end == p) break;
            if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &allowed)) pin.cpus[pin.n++] = (int)c;
            p = *end ? end + 1 : end;
        }
    } else {
        int scatter = mode && strcmp(mode, "scatter") == 0;
        (void)scatter;
#ifdef SUPERSTEP_HAVE_HWLOC
        pin.n = hwloc_order(&allowed, scatter, pin.cpus, count);
#endif
        if (pin.n == 0)
            for (int c = 0; c < CPU_SETSIZE && pin.n < count; ++c)
                if (CPU_ISSET(c, &allowed)) pin.cpus[pin.n++] = c;
    }
    pin.enabled = pin.n > 0;
}

/* CPU for the slice starting at fraction `lo` of the machine, or -1 */
int pt_cpu_for(double lo)
{
    pthread_once(&pin.once, pin_init);
    if (!pin.enabled) return -1;
    long i = (long)(lo * pin.n + 1e-9);
    if (i < 0) i = 0;
    if (i >= (long)pin.n) i = (long)pin.n - 1;
    return pin.cpus[i];
}

int pt_pin_attr(pthread_attr_t *attr, int cpu)
{
    if (cpu < 0) return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_attr_setaffinity_np(attr, sizeof set, &set);
}

int pt_pin_self(int cpu, cpu_set_t *saved)
{
    if (cpu < 0) return 0;
    if (saved && pthread_getaffinity_np(pthread_self(), sizeof *saved, saved) != 0) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void pt_unpin_self(const cpu_set_t *saved)
{
    pthread_setaffinity_np(pthread_self(), sizeof *saved, saved);
}
