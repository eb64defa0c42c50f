/*
 * Thread pinning for the pthread engine.
 *
 * Why: a new thread is woken on its creator's core; with spinning barriers
 * the scheduler may leave two BSP processes on one core for a long time
 * (measured here: supersteps of 65 us instead of 1 us). Pinning places them
 * where they belong from the start.
 *
 * How: every section owns a slice [lo, lo + span) of the CPU list, as
 * fractions of it (root: [0, 1)). Process s of a section of P gets the
 * share [lo + span*s/P, lo + span*(s+1)/P) and is pinned to the CPUs of its
 * share (one CPU when the section has a CPU per process; several when it
 * has fewer processes than CPUs, so that threads the process starts itself,
 * OpenMP's for instance, have the share to run on); nested sections
 * subdivide their parent's share. A section with more processes than the
 * CPUs of its slice pins each of them to the whole slice instead (see
 * pt_cpus_for). A process whose share is the whole inherited mask (a
 * section of P = 1 at the root) is left alone.
 *
 * The CPU list is the process's inherited mask (taskset, cgroups, an MPI
 * launcher's binding), ordered by SUPERSTEP_PIN:
 *   compact (default)  neighbouring pids on neighbouring cores (topology
 *                      order from hwloc when available)
 *   scatter            neighbouring pids spread over packages/cores
 *   none               no pinning
 *   0,2,4,...          an explicit list of CPU ids (inside the mask)
 *
 * Under an MPI launcher that started several processes on this host and
 * left each of them the whole machine (no binding: every rank has every
 * CPU), nothing is pinned unless SUPERSTEP_PIN is set: each rank would
 * place its pid 0 on the first CPU, all of them on the same one. With a
 * binding (a mask narrower than the machine) pinning stays inside it.
 */
#define _GNU_SOURCE
#include "pthread_internal.h"
#include "../../core/launcher.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SUPERSTEP_HAVE_HWLOC
#include <hwloc.h>
#endif

static struct {
    pthread_once_t once;
    int enabled;
    int *cpus;
    unsigned n;
    unsigned allowed;   /* CPUs of the inherited mask */
} pin = { PTHREAD_ONCE_INIT, 0, NULL, 0, 0 };

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
    if (mode && *mode && strcmp(mode, "compact") != 0 && strcmp(mode, "scatter") != 0
            && strspn(mode, "0123456789,") != strlen(mode)) {
        sstep_warn("SUPERSTEP_PIN=%s is not compact, scatter, none or a list of CPUs "
                "(0,1,...); using compact", mode);
        mode = NULL;
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    unsigned count = (unsigned)CPU_COUNT(&allowed);
    if (count == 0) return;
    pin.allowed = count;
    struct sstep_launch l;
    if (!(mode && *mode) && sstep_launcher(&l) && sstep_launcher_several(&l)) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        /* ranks sharing the whole machine: the launcher bound nothing */
        if (l.local_size != 1 && online > 0 && (long)count >= online) return;
    }
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
            else sstep_warn("SUPERSTEP_PIN: CPU %ld is not one this program may run on; "
                    "skipped", c);
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

/* [*a, *b): the CPUs of the slice [lo, lo + span) in the CPU list, at
 * least one */
static void slice_bounds(double lo, double span, long *a, long *b)
{
    const double n = (double)pin.n;
    long i0 = (long)(lo * n + 1e-9), i1 = (long)((lo + span) * n + 1e-9);
    if (i0 < 0) i0 = 0;
    if (i0 >= (long)pin.n) i0 = (long)pin.n - 1;
    if (i1 > (long)pin.n) i1 = (long)pin.n;
    if (i1 <= i0) i1 = i0 + 1;
    *a = i0;
    *b = i1;
}

/* The CPUs process s of a section of P runs on, the section owning the
 * slice [lo, lo + span): the CPUs of the process's share of the slice
 * while the section has a CPU per process (one CPU each when there are as
 * many processes as CPUs); the whole slice when it has more processes than
 * CPUs, so that the scheduler can move a runnable process to a CPU its
 * siblings left idle (pinned one per CPU beside a program that keeps a CPU
 * busy, a superstep of 16 processes on 2 cores took 2 ms instead of
 * 18 us). Returns 0 (and leaves *set alone) when pinning is off, and when
 * the process would get the whole inherited mask (it keeps the mask it
 * has: a section of P = 1 does not narrow its caller). */
int pt_cpus_for(double lo, double span, unsigned P, unsigned s, cpu_set_t *set)
{
    pthread_once(&pin.once, pin_init);
    if (!pin.enabled) return 0;
    long i0, i1;
    slice_bounds(lo, span, &i0, &i1);
    if ((long)P <= i1 - i0) {
        long a, b;
        slice_bounds(lo + span * s / P, span / P, &a, &b);
        if (a < i0) a = i0;
        if (b > i1) b = i1;
        if (b <= a) {
            a = a < i1 ? a : i1 - 1;
            b = a + 1;
        }
        i0 = a;
        i1 = b;
    }
    if (i0 == 0 && i1 == (long)pin.n && pin.n == pin.allowed) return 0;
    CPU_ZERO(set);
    for (long i = i0; i < i1; ++i) CPU_SET(pin.cpus[i], set);
    return 1;
}

int pt_pin_attr(pthread_attr_t *attr, const cpu_set_t *set)
{
    return pthread_attr_setaffinity_np(attr, sizeof *set, set);
}

int pt_pin_self(const cpu_set_t *set, cpu_set_t *saved)
{
    if (saved && pthread_getaffinity_np(pthread_self(), sizeof *saved, saved) != 0) return -1;
    return pthread_setaffinity_np(pthread_self(), sizeof *set, set);
}

void pt_unpin_self(const cpu_set_t *saved)
{
    pthread_setaffinity_np(pthread_self(), sizeof *saved, saved);
}
