/*
 * pub_sync.c: registrations and synchronisation: each object's registration
 * table (address -> newest registration, backward-shift hashing), pushes
 * entering the core at a synchronisation and pops taking effect when it
 * returns; bsp_sync (E1 over the object's range) and bsp_oblsync (E2), and
 * the lines of a failed or mismatched synchronisation.
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Registrations                                                        */
/* ------------------------------------------------------------------ */

static void names_insert(struct pub_obj *o, const char *prim, const void *addr, uint32_t ri)
{
    if ((o->names_used + 1) * 2 > o->names_cap) {
        size_t ncap = o->names_cap * 2;
        struct pub_name *old = o->names;
        size_t ocap = o->names_cap;
        o->names = malloc(ncap * sizeof *o->names);
        if (!o->names) pub_die_oom(o, prim, ncap * sizeof *o->names);
        o->names_cap = ncap;
        for (size_t i = 0; i < ncap; ++i) o->names[i].top = PUB_NIL;
        o->names_used = 0;
        for (size_t i = 0; i < ocap; ++i)
            if (old[i].top != PUB_NIL) {
                size_t h = pub_name_slot(o, old[i].addr);
                o->names[h] = old[i];
                o->names_used++;
            }
        free(old);
    }
    size_t h = pub_name_slot(o, addr);
    if (o->names[h].top == PUB_NIL) {
        o->names[h].addr = addr;
        o->names_used++;
        o->regs[ri].below = PUB_NIL;
    } else {
        o->regs[ri].below = o->names[h].top;
    }
    o->names[h].top = ri;
}

/* remove addr's entry (its chain is empty): backward-shift deletion */
static void names_erase(struct pub_obj *o, size_t h)
{
    size_t mask = o->names_cap - 1;
    o->names[h].top = PUB_NIL;
    o->names_used--;
    size_t j = h;
    for (;;) {
        j = (j + 1) & mask;
        if (o->names[j].top == PUB_NIL) return;
        size_t want = (size_t)pub_mix64((uintptr_t)o->names[j].addr) & mask;
        /* can the entry at j move to h? (h lies cyclically in [want, j)) */
        if ((j > h && (want <= h || want > j)) || (j < h && (want <= h && want > j))) {
            o->names[h] = o->names[j];
            o->names[j].top = PUB_NIL;
            h = j;
        }
    }
}

PUB_HIDDEN uint32_t pub_reg_alloc(struct pub_obj *o, const char *prim)
{
    if (o->reg_free == PUB_NIL) {
        uint32_t na = o->nregs_alloc ? 2 * o->nregs_alloc : 16;
        o->regs = pub_xrealloc(o, prim, o->regs, na, sizeof *o->regs);
        for (uint32_t i = na; i-- > o->nregs_alloc;) {
            o->regs[i].next_free = o->reg_free;
            o->reg_free = i;
        }
        o->nregs_alloc = na;
    }
    uint32_t i = o->reg_free;
    o->reg_free = o->regs[i].next_free;
    return i;
}

PUB_HIDDEN void pub_push_list(struct pub_obj *o, const char *prim, uint32_t **a, size_t *n,
        size_t *alloc, uint32_t v)
{
    if (*n == *alloc) {
        *alloc = *alloc ? 2 * *alloc : 16;
        *a = pub_xrealloc(o, prim, *a, *alloc, sizeof **a);
    }
    (*a)[(*n)++] = v;
}

/* at the entry of a synchronisation: register this superstep's pushes */
static void regs_enter(struct pub_obj *o, const char *prim)
{
    struct pub_run *r = o->run;
    if (o->npush == 0) return;
    if (r->core_regs + o->npush > r->core_cap)
        pub_die(o, prim, "too many registrations: %zu live and %zu pushed in this superstep, "
                "capacity %zu (grows at synchronisations; push fewer per superstep)",
                r->core_regs, o->npush, r->core_cap);
    for (size_t i = 0; i < o->npush; ++i) {
        struct pub_reg *g = &o->regs[o->pushes[i]];
        if (lpf_register_global(r->ctx, (void *)(uintptr_t)g->addr, g->size, &g->slot)
                != LPF_SUCCESS)
            pub_die(o, prim, "the run has failed (registering %p)", g->addr);
        names_insert(o, prim, g->addr, o->pushes[i]);
    }
    r->core_regs += o->npush;
    o->live_regs += o->npush;
    o->npush = 0;
    /* capacity for later supersteps (takes effect at this sync) */
    if (r->core_regs * 2 > r->core_cap) {
        size_t cap = r->core_cap;
        while (r->core_regs * 2 > cap) cap *= 2;
        if (lpf_resize_memory_register(r->ctx, cap) == LPF_SUCCESS) r->core_cap = cap;
    }
}

static void reg_unlink(struct pub_obj *o, uint32_t ri)
{
    struct pub_reg *g = &o->regs[ri];
    size_t h = pub_name_slot(o, g->addr);
    uint32_t *pp = &o->names[h].top;
    while (*pp != ri) pp = &o->regs[*pp].below;
    *pp = g->below;
    if (o->names[h].top == PUB_NIL) names_erase(o, h);
    g->next_free = o->reg_free;
    o->reg_free = ri;
}

/* when the synchronisation returns: pops take effect */
static void regs_leave(struct pub_obj *o)
{
    struct pub_run *r = o->run;
    for (size_t i = 0; i < o->npop; ++i) {
        uint32_t ri = o->pops[i];
        lpf_deregister(r->ctx, o->regs[ri].slot);
        reg_unlink(o, ri);
    }
    r->core_regs -= o->npop;
    o->live_regs -= o->npop;
    o->npop = 0;
}

/* bsp_done: drop every registration of the object */
PUB_HIDDEN void pub_regs_drop(struct pub_obj *o)
{
    struct pub_run *r = o->run;
    for (size_t i = 0; i < o->names_cap; ++i) {
        uint32_t t = o->names[i].top;
        while (t != PUB_NIL) {
            lpf_deregister(r->ctx, o->regs[t].slot);
            r->core_regs--;
            t = o->regs[t].below;
        }
    }
    o->live_regs = 0;
}

/* ------------------------------------------------------------------ */
/* Synchronisation                                                      */
/* ------------------------------------------------------------------ */

static inline uint64_t sync_check(const struct pub_obj *o, int end)
{
    return (uint64_t)(o->push_since & 0xfffff) | ((uint64_t)(o->pop_since & 0xfffff) << 20)
        | (end ? PUB_CHECK_END : 0);
}

static const char *wait_name(int kind)
{
    return kind == SSTEP_KIND_OBLSYNC ? "bsp_oblsync" : "bsp_sync";
}

/* the line of a failed E1/E2 (never returns) */
PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_sync_failed(struct pub_obj *o, const char *prim,
        struct sstep_sync_info *info, struct sstep_stamp st, size_t expect_core, int ended)
{
    int q = (int)info->peer - o->lo;
    struct pub_run *r = o->run;
    switch (info->cause) {
    case SSTEP_CAUSE_GONE:
        pub_die(o, prim, "process %d (run pid %u) left the run (returned from its SPMD function "
                "or failed) while this process waits in superstep %llu", q, info->peer,
                (unsigned long long)st.step);
    case SSTEP_CAUSE_MISMATCH:
        if (info->peer_stamp.object == st.object && info->peer_stamp.step != st.step)
            pub_die_shared(o, prim, "process %d is in superstep %llu of this object while this "
                    "process is in superstep %llu (members synchronised it a different number "
                    "of times)", q, (unsigned long long)info->peer_stamp.step,
                    (unsigned long long)st.step);
        pub_die_shared(o, prim, "process %d ended superstep %llu with %s, this process with %s "
                "(all members must end a superstep the same way)", q,
                (unsigned long long)st.step, wait_name(info->peer_kind),
                ended ? "the end of the run" : prim);
    case SSTEP_CAUSE_DEADLOCK: {
        if (!info->report) {
            /* pid 0 of the section prints the line and ends the program */
            for (int i = 0; i < 200; ++i) {
                struct timespec ts = { 0, 50000000 };
                nanosleep(&ts, NULL);
            }
        }
        char line[1024], also[160] = "";
        int lo = (int)info->peer_lo, n = (int)info->peer_n;
        int s = (int)info->peer - lo;
        /* another process of the run in another kind of wait (another
         * object's or group's sync, or an ordinary sync) */
        if (info->peer_other)
            snprintf(also, sizeof also, "; run pid %u waits in %s of another object or group",
                    info->peer_other - 1,
                    info->peer_other_kind == SSTEP_KIND_OBLSYNC ? "bsp_oblsync" : "bsp_sync");
        else if (info->peer_plain)
            snprintf(also, sizeof also, "; run pid %u waits in an ordinary sync",
                    info->peer_plain - 1);
        if (info->peer_kind == SSTEP_KIND_OBLSYNC)
            snprintf(line, sizeof line, "superstep: bsp_oblsync (process %d of %d in group "
                    "%d..%d of %d): deadlock: waits in superstep %llu having received %zu of "
                    "%zu expected messages, and every process of the run is blocked%s",
                    s, n, lo, lo + n - 1, r->P, (unsigned long long)info->peer_stamp.step,
                    info->peer_arrived, info->peer_expect, also);
        else
            snprintf(line, sizeof line, "superstep: bsp_sync (process %d of %d in group "
                    "%d..%d of %d): deadlock: waits in superstep %llu for members that never "
                    "arrive (they synchronise another object or group, or are done), and "
                    "every process of the run is blocked%s",
                    s, n, lo, lo + n - 1, r->P, (unsigned long long)info->peer_stamp.step, also);
        pub_emit(r->ctx, line);
    }
    case SSTEP_CAUSE_LATE:
        pub_die(o, prim, "late message for superstep %llu from process %d (superstep %llu now; "
                "it was sent after the receiver had counted that superstep complete)",
                (unsigned long long)info->peer_stamp.step, q, (unsigned long long)st.step);
    case SSTEP_CAUSE_EXTRA: {
        size_t due = 0;
        for (size_t i = 0; i < o->ncalls; ++i) due += (size_t)o->calls[i].due;
        size_t ev = info->arrived - due + o->ncalls;
        size_t n = expect_core - due + o->ncalls;
        if (q < 0 || q >= o->p)
            pub_die(o, prim, "%zu events in superstep %llu, %zu expected", ev,
                    (unsigned long long)st.step, n);
        pub_die(o, prim, "%zu events in superstep %llu, %zu expected (the first extra message "
                "came from process %d)", ev, (unsigned long long)st.step, n, q);
    }
    default:
        if (r->ctx && info->cause == SSTEP_CAUSE_OK)
            pub_die(o, prim, "the engine could not complete the synchronisation (the run has "
                    "failed, or this engine lacks the PUB extensions)");
        pub_die(o, prim, "the synchronisation failed (cause %d)", info->cause);
    }
}

PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_check_mismatch(struct pub_obj *o, const char *prim,
        const struct sstep_sync_info *info, uint64_t mine, int ended)
{
    uint64_t peer = info->peer_check;
    int q = (int)info->peer - o->lo;
    if ((peer & PUB_CHECK_END) != (mine & PUB_CHECK_END)) {
        if (peer & PUB_CHECK_END)
            pub_die_shared(o, prim, "process %d returned from the SPMD function while this "
                    "process is in %s", q, ended ? "the end of the run" : prim);
        pub_die_shared(o, prim, "this process returned from the SPMD function while process %d "
                "is in bsp_sync (every process must sync the root object equally often)", q);
    }
    size_t pu = (size_t)(mine & 0xfffff), pp = (size_t)(peer & 0xfffff);
    if (pu != pp)
        pub_die_shared(o, prim, "members pushed different numbers of registrations since the "
                "previous bsp_sync: %zu bsp_push_reg here, %zu at process %d", pu, pp, q);
    pub_die_shared(o, prim, "members popped different numbers of registrations since the previous "
            "bsp_sync: %zu bsp_pop_reg here, %zu at process %d", (size_t)((mine >> 20) & 0xfffff),
            (size_t)((peer >> 20) & 0xfffff), q);
}

static void superstep_reset(struct pub_obj *o)
{
    pub_free_calls(o);
    o->nreq = o->nput = o->nhpput = o->nget = o->nhpget = o->nself = 0;
}

void pub_sync(pbsp bsp)
{
    static const char prim[] = "bsp_sync";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    struct pub_run *r = o->run;
    regs_enter(o, prim);
    pub_release_inbox(o);
    struct sstep_stamp st = { o->id, o->step };
    struct sstep_sync_info info;
    memset(&info, 0, sizeof info);
    info.check = sync_check(o, 0);
    info.peer = LPF_MAX_P;
    lpf_err_t rc = sstep_sync_range(r->ctx, (lpf_pid_t)o->lo, (lpf_pid_t)o->p, st, &info);
    if (PUB_UNLIKELY(rc != LPF_SUCCESS)) pub_sync_failed(o, prim, &info, st, 0, 0);
    if (PUB_UNLIKELY(info.mismatch)) pub_check_mismatch(o, prim, &info, info.check, 0);
    o->step++;
    o->push_since = o->pop_since = 0;
    pub_take_delivery(o, prim, st);
    regs_leave(o);
    superstep_reset(o);
}

void pub_oblsync(pbsp bsp, int n)
{
    static const char prim[] = "bsp_oblsync";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    struct pub_run *r = o->run;
    if (n < 0) pub_die(o, prim, "n is %d (must be >= 0)", n);
    if ((size_t)n < o->ncalls)
        pub_die(o, prim, "n is %d but this process made %zu reduce-family calls in this superstep "
                "(each is one event)", n, o->ncalls);
    size_t ndrma = o->nput + o->nhpput + o->nget + o->nhpget;
    if (ndrma) {
        const char *kind = o->nput ? "bsp_put" : o->nhpput ? "bsp_hpput"
            : o->nget ? "bsp_get" : "bsp_hpget";
        size_t k = o->nput ? o->nput : o->nhpput ? o->nhpput : o->nget ? o->nget : o->nhpget;
        pub_die(o, prim, "%zu %s request%s pending (%zu DRMA requests in all): DRMA is not allowed "
                "in a superstep ended by bsp_oblsync; end it with bsp_sync", k, kind,
                k == 1 ? "" : "s", ndrma);
    }
    size_t due = 0;
    for (size_t i = 0; i < o->ncalls; ++i) due += (size_t)o->calls[i].due;
    if (o->p == 1) {
        size_t ev = o->nself + o->ncalls;
        if (ev > (size_t)n)
            pub_die(o, prim, "%zu events in superstep %llu, %d expected", ev,
                    (unsigned long long)o->step, n);
        if (ev < (size_t)n)
            pub_die(o, prim, "deadlock: waits in superstep %llu having received %zu of %d "
                    "expected events, and no other process can send (group of 1)",
                    (unsigned long long)o->step, ev, n);
    }
    size_t expect = (size_t)n - o->ncalls + due;
    regs_enter(o, prim);
    pub_release_inbox(o);
    struct sstep_stamp st = { o->id, o->step };
    struct sstep_sync_info info;
    memset(&info, 0, sizeof info);
    info.peer = LPF_MAX_P;
    lpf_err_t rc = sstep_oblsync(r->ctx, (lpf_pid_t)o->lo, (lpf_pid_t)o->p, st, expect, &info);
    if (PUB_UNLIKELY(rc != LPF_SUCCESS)) pub_sync_failed(o, prim, &info, st, expect, 0);
    o->step++;
    pub_take_delivery(o, prim, st);
    regs_leave(o);
    superstep_reset(o);
}
