/*
 * pub_drma.c: DRMA: bsp_push_reg / bsp_pop_reg requests on an object and the
 * puts and gets (bsp_put, bsp_hpput, bsp_get, bsp_hpget) with their checks.
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* DRMA                                                                 */
/* ------------------------------------------------------------------ */

void pub_push_reg(pbsp bsp, const void *ident, size_t size)
{
    static const char prim[] = "bsp_push_reg";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    uint32_t ri = pub_reg_alloc(o, prim);
    struct pub_reg *g = &o->regs[ri];
    g->addr = ident;
    g->size = ident ? size : 0;
    g->slot = LPF_INVALID_MEMSLOT;
    g->popped = 0;
    g->below = PUB_NIL;
    pub_push_list(o, prim, &o->pushes, &o->npush, &o->push_alloc, ri);
    o->push_since++;
}

static int pending_push(const struct pub_obj *o, const void *addr)
{
    for (size_t i = 0; i < o->npush; ++i)
        if (o->regs[o->pushes[i]].addr == addr) return 1;
    return 0;
}

void pub_pop_reg(pbsp bsp, const void *ident)
{
    static const char prim[] = "bsp_pop_reg";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    struct pub_reg *g = pub_reg_lookup(o, ident);
    while (g && g->popped) g = g->below == PUB_NIL ? NULL : &o->regs[g->below];
    if (g == NULL) {
        if (pending_push(o, ident))
            pub_die(o, prim, "address %p has no active registration left to pop on this object "
                    "(it was registered in this superstep: registrations become active at "
                    "the end of the superstep)", ident);
        pub_die(o, prim, "address %p has no active registration left to pop on this object "
                "(never registered on it, or popped as often as it was pushed)", ident);
    }
    g->popped = 1;
    pub_push_list(o, prim, &o->pops, &o->npop, &o->pop_alloc, (uint32_t)(g - o->regs));
    o->pop_since++;
}

static PUB_NORETURN PUB_COLD void not_registered(struct pub_obj *o, const char *prim,
        const char *rname, const void *ident)
{
    if (pending_push(o, ident))
        pub_die(o, prim, "%s %p was registered in this superstep; a registration can be used "
                "only after the superstep ends", rname, ident);
    for (int d = o->depth - 1; d >= 0; --d)
        if (pub_reg_lookup(o->run->stack[d], ident))
            pub_die(o, prim, "%s %p is not registered on this object (it is registered on an "
                    "ancestor; registrations belong to the object they were pushed on)",
                    rname, ident);
    pub_die(o, prim, "%s %p is not registered on this object (bsp_push_reg it first; interior "
            "pointers do not identify a registration)", rname, ident);
}

/* checks of put/get/hpput/hpget; returns the registration */
static inline struct pub_reg *drma_check(struct pub_obj *o, const char *prim, int pid,
        const void *local, const void *ident, size_t offset, size_t size, int is_put)
{
    const char *lname = is_put ? "source" : "destination";
    const char *rname = is_put ? "destination" : "source";
    if (PUB_UNLIKELY(local == NULL)) pub_die(o, prim, "%s is NULL (size %zu)", lname, size);
    if (PUB_UNLIKELY(ident == NULL))
        pub_die(o, prim, "%s is NULL (size %zu); NULL cannot identify a registration", rname, size);
    struct pub_reg *g = pub_reg_lookup(o, ident);
    if (PUB_UNLIKELY(g == NULL)) not_registered(o, prim, rname, ident);
    if (PUB_UNLIKELY(pid < 0 || pid >= o->p))
        pub_die(o, prim, "pid %d is out of range (the group has %d processes)", pid, o->p);
    /* the early bounds check reads the peer's registration; after an oblsync
     * that (de)registered, the peer may be changing it right now (no barrier
     * in between): then only the owner checks, at the sync */
    size_t rs = (o->push_since | o->pop_since) ? SIZE_MAX
            : sstep_remote_size(o->run->ctx, (lpf_pid_t)(o->lo + pid), g->slot);
    if (PUB_UNLIKELY(rs != SIZE_MAX && (offset > rs || size > rs - offset)))
        pub_die(o, prim, "offset %zu + size %zu is out of bounds: process %d registered %zu bytes "
                "for %s %p", offset, size, pid, rs, rname, ident);
    return g;
}

PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_drma_failed(struct pub_obj *o, const char *prim,
        lpf_err_t rc, size_t size)
{
    if (rc == LPF_ERR_OUT_OF_MEMORY) pub_die_oom(o, prim, size);
    pub_die(o, prim, "the run has failed");
}

void pub_put(pbsp bsp, int pid, const void *src, const void *dest, size_t offset, size_t size)
{
    static const char prim[] = "bsp_put";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    if (size == 0) return;
    struct pub_reg *g = drma_check(o, prim, pid, src, dest, offset, size, 1);
    lpf_err_t rc = sstep_put_copy(o->run->ctx, src, (lpf_pid_t)(o->lo + pid), g->slot, offset,
            size);
    if (PUB_UNLIKELY(rc != LPF_SUCCESS)) pub_drma_failed(o, prim, rc, size);
    o->nreq++;
    o->nput++;
}

void pub_hpput(pbsp bsp, int pid, const void *src, const void *dest, size_t offset, size_t size)
{
    static const char prim[] = "bsp_hpput";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    if (size == 0) return;
    struct pub_reg *g = drma_check(o, prim, pid, src, dest, offset, size, 1);
    lpf_err_t rc = sstep_put_ptr(o->run->ctx, src, (lpf_pid_t)(o->lo + pid), g->slot, offset,
            size);
    if (PUB_UNLIKELY(rc != LPF_SUCCESS)) pub_drma_failed(o, prim, rc, size);
    o->nreq++;
    o->nhpput++;
}

static void do_get(const char *prim, pbsp bsp, int pid, const void *src, size_t offset,
        void *dest, size_t size, int hp)
{
    struct pub_obj *o = pub_obj_active(prim, bsp);
    if (size == 0) return;
    struct pub_reg *g = drma_check(o, prim, pid, dest, src, offset, size, 0);
    o->nreq++;
    if (hp) o->nhpget++; else o->nget++;
    /* a get of bytes onto themselves is a no-op */
    if (pid == o->s && (const char *)g->addr + offset == (const char *)dest) return;
    lpf_err_t rc = sstep_get_ptr(o->run->ctx, (lpf_pid_t)(o->lo + pid), g->slot, offset, dest,
            size);
    if (PUB_UNLIKELY(rc != LPF_SUCCESS)) pub_drma_failed(o, prim, rc, size);
}

void pub_get(pbsp bsp, int pid, const void *src, size_t offset, void *dest, size_t size)
{
    do_get("bsp_get", bsp, pid, src, offset, dest, size, 0);
}

void pub_hpget(pbsp bsp, int pid, const void *src, size_t offset, void *dest, size_t size)
{
    do_get("bsp_hpget", bsp, pid, src, offset, dest, size, 1);
}
