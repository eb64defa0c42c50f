/*
 * pub_objects.c: BSP objects: the O(1) validity of an object argument (the
 * slow paths of pub_obj_any / pub_obj_active), creating an object's record
 * on the run's stack, freeing it, and bsp_partition / bsp_dup /
 * bsp_threadsafe_dup / bsp_done.
 */
#define _GNU_SOURCE
#include "pub_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Objects: O(1) validity                                               */
/* ------------------------------------------------------------------ */

PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_die_not_live(const char *prim, pbsp bsp)
{
    if (bsp == NULL) pub_die(NULL, prim, "bsp is NULL (not a live BSP object of this process)");
    pub_die(NULL, prim, "%p is not a live BSP object of this process (a done object, a copy "
            "of one, another process's object or storage never initialised)", (void *)bsp);
}

PUB_HIDDEN PUB_NORETURN PUB_COLD void pub_die_inactive(const char *prim, struct pub_obj *o)
{
    struct pub_obj *t = o->run->stack[o->run->depth - 1];
    pub_die(o, prim, "this object is not active: its descendant (group %d..%d, %s, %d process%s) "
            "is live; only enquiries and message-buffer reads are allowed until it is done",
            t->lo, t->lo + t->p - 1, t->kind == 2 ? "from bsp_dup" : "from bsp_partition",
            t->p, t->p == 1 ? "" : "es");
}

PUB_HIDDEN void *pub_xrealloc(struct pub_obj *o, const char *prim, void *p, size_t n, size_t sz)
{
    if (n && sz > SIZE_MAX / n) pub_die_oom(o, prim, SIZE_MAX);
    void *q = realloc(p, (n * sz) != 0 ? n * sz : 1);
    if (!q) pub_die_oom(o, prim, n * sz);
    return q;
}

PUB_HIDDEN struct pub_obj *pub_obj_new(struct pub_run *r, const char *prim, pbsp storage, int kind,
        uint64_t id, int lo, int p, int s)
{
    struct pub_obj *o = calloc(1, sizeof *o);
    if (!o) pub_die_oom(NULL, prim, sizeof *o);
    o->storage = storage;
    o->nonce = pub_mix64(++r->nonce_next ^ (uintptr_t)o) | 1;
    o->run = r;
    o->kind = kind;
    o->id = id;
    o->lo = lo;
    o->p = p;
    o->s = s;
    o->names_cap = 16;
    o->names = malloc(o->names_cap * sizeof *o->names);
    if (!o->names) pub_die_oom(NULL, prim, 16 * sizeof *o->names);
    for (size_t i = 0; i < o->names_cap; ++i) o->names[i].top = PUB_NIL;
    o->reg_free = PUB_NIL;
    if (r->depth == r->stack_alloc) {
        int na = r->stack_alloc ? 2 * r->stack_alloc : 8;
        r->stack = pub_xrealloc(NULL, prim, r->stack, (size_t)na, sizeof *r->stack);
        r->stack_alloc = na;
    }
    o->depth = r->depth;
    r->stack[r->depth++] = o;
    memset(storage, 0, sizeof *storage);
    PUB_ST_OBJ(storage) = o;
    PUB_ST_NONCE(storage) = (void *)(uintptr_t)o->nonce;
    PUB_ST_DEPTH(storage) = (void *)(uintptr_t)o->depth;
    PUB_ST_RUN(storage) = r;
    return o;
}

PUB_HIDDEN void pub_obj_free(struct pub_obj *o)
{
    pub_free_calls(o);
    free(o->calls);
    free(o->marks);
    free(o->msgs);
    free(o->copies);
    free(o->regs);
    free(o->names);
    free(o->pushes);
    free(o->pops);
    free(o);
}

/* ------------------------------------------------------------------ */
/* Objects                                                              */
/* ------------------------------------------------------------------ */

static void check_child_storage(struct pub_obj *o, const char *prim, pbsp bsp, pbsp sub,
        const char *name)
{
    if (sub == NULL) pub_die(o, prim, "%s is NULL (it must point to storage for a tbsp)", name);
    if (sub == bsp)
        pub_die(o, prim, "%s is the object itself (it must point to other storage)", name);
    if (pub_lookup(o->run, sub) != NULL)
        pub_die(o, prim, "%s %p is a live BSP object (bsp_done it first, or use other storage)",
                name, (void *)sub);
}

void pub_partition(pbsp bsp, pbsp subbsp, int n, const int *part)
{
    static const char prim[] = "bsp_partition";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    check_child_storage(o, prim, bsp, subbsp, "subbsp");
    if (n < 1) pub_die(o, prim, "n is %d (at least one group)", n);
    if (part == NULL) pub_die(o, prim, "part is NULL (n is %d)", n);
    uint64_t h = pub_mix64((uint64_t)n);
    int k = -1, prev = 0;
    for (int i = 0; i < n; ++i) {
        int e = part[i];
        if (e <= prev) {
            if (i == 0)
                pub_die(o, prim, "group 0 is empty: part[0] = %d (must be > 0)", e);
            if (e == prev)
                pub_die(o, prim, "group %d is empty: part[%d] = part[%d] = %d", i, i - 1, i, e);
            pub_die(o, prim, "part is not increasing: part[%d] = %d, part[%d] = %d", i - 1, prev,
                    i, e);
        }
        if (e > o->p || (i == n - 1 && e != o->p))
            pub_die(o, prim, "part[%d] = %d but the group has %d processes", i, e, o->p);
        if (k < 0 && o->s < e) k = i;
        h = pub_hcomb(h, (uint64_t)e);
        prev = e;
    }
    int start = k == 0 ? 0 : part[k - 1];
    uint64_t id = pub_hcomb(pub_hcomb(pub_hcomb(pub_hcomb(o->id, o->ncreated), 1), (uint64_t)k), h);
    o->ncreated++;
    sstep_scope_push(o->run->ctx);
    pub_obj_new(o->run, prim, subbsp, 1, id, o->lo + start, part[k] - start, o->s - start);
}

void pub_dup(pbsp bsp, pbsp newbsp)
{
    static const char prim[] = "bsp_dup";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    check_child_storage(o, prim, bsp, newbsp, "newbsp");
    uint64_t id = pub_hcomb(pub_hcomb(pub_hcomb(pub_hcomb(o->id, o->ncreated), 2), 0), 0);
    o->ncreated++;
    sstep_scope_push(o->run->ctx);
    pub_obj_new(o->run, prim, newbsp, 2, id, o->lo, o->p, o->s);
}

void pub_threadsafe_dup(pbsp bsp, pbsp newbsp)
{
    static const char prim[] = "bsp_threadsafe_dup";
    struct pub_obj *o = pub_obj_active(prim, bsp);
    (void)newbsp;
    pub_die(o, prim, "not supported by this build (thread-safe objects need a context per "
            "object; use bsp_dup from the thread that owns the object)");
}

void pub_done(pbsp bsp)
{
    static const char prim[] = "bsp_done";
    struct pub_run *r = pub_run_or_die(prim);
    struct pub_obj *o = pub_lookup(r, bsp);
    if (o == NULL) pub_die_not_live(prim, bsp);
    if (o->depth == 0)
        pub_die(o, prim, "this is the run's root object (it ends when the SPMD function returns)");
    if (o->depth != r->depth - 1)
        pub_die(o, prim, "not the most recently created live object (LIFO: bsp_done its "
                "descendant, group %d..%d, first)", r->stack[r->depth - 1]->lo,
                r->stack[r->depth - 1]->lo + r->stack[r->depth - 1]->p - 1);
    size_t k = o->nreq + o->npush + o->npop;
    if (k)
        pub_die(o, prim, "would discard %zu pending request%s of superstep %llu (sends, "
                "broadcasts, reduce-family calls, puts, gets, pushes or pops): end the "
                "superstep with bsp_sync or bsp_oblsync first", k, k == 1 ? "" : "s",
                (unsigned long long)o->step);
    pub_release_inbox(o);
    pub_regs_drop(o);
    sstep_scope_pop(r->ctx);
    r->depth--;
    memset(bsp, 0, sizeof *bsp);
    pub_obj_free(o);
}
