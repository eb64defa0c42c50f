/*
 * Tagged and zero-cost syncs (spec/lpf-ext.md §3, §4) on the core's subset
 * syncs (sstep_sync_range, E1) and oblivious syncs (sstep_oblsync, E2):
 *
 * - a tagged sync sets the untagged requests aside (sstep_scope_push;
 *   skipped when none are queued and nothing is staged), queues its
 *   phase's requests and syncs its active set only;
 * - a zero-cost sync executes its gets at once (the engine's direct get),
 *   applies its puts to itself, and turns its other puts into stamped
 *   messages (slot, offset, size, data) that the oblivious sync ships
 *   without a barrier; each process waits for the messages it expects and
 *   applies them. A message for a later superstep waits in the mailbox
 *   under its own stamp. Counts that can never come true end the run by
 *   the core's deadlock detection.
 */
#include "lpfext.h"
#include "pubext_internal.h"
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct put_hdr {
    uint32_t slot, pad_;
    uint64_t off, size;
};

/* what another process's wait is, from its stamp and kind (the report of
 * the engine's deadlock detection) */
static const char *lx_wait_name(char *buf, size_t n, uint64_t object, int kind)
{
    const uint64_t top = object & 0xffff000000000000ull;
    if (object == LX_OBJ_ZERO) snprintf(buf, n, "a zero-cost lpf_sync");
    else if (top == LX_OBJ_TAG)
        snprintf(buf, n, "a %stagged lpf_sync", kind == SSTEP_KIND_OBLSYNC ? "zero-cost " : "");
    else if (top == LX_OBJ_CREATE) snprintf(buf, n, "lpf_tag_create");
    else snprintf(buf, n, "a PUB %s", kind == SSTEP_KIND_OBLSYNC ? "bsp_oblsync" : "bsp_sync");
    return buf;
}

/* the last word of a wait that can never end, then the whole run ends
 * (status 6). When the engine names a process in another kind of sync (an
 * ordinary one, or another zero-cost / tagged / PUB sync), the process
 * its report names prints one line with both; otherwise every process
 * prints its own. The reporter ends the run after the others had time to
 * print. */
static SSTEP_NORETURN void deadlock_line(struct sstep_ctx *ctx, lpf_t c, const char *what,
        const struct sstep_sync_info *info, size_t es, size_t er, size_t arrived)
{
    const int report = info->report;
    const int other = info->peer_plain || info->peer_other;
    char also[200] = "";
    if (other) {
        char k[64];
        size_t u = 0;
        if (info->peer_other)
            u = (size_t)snprintf(also, sizeof also, "; process %u waits in %s",
                    info->peer_other - 1, lx_wait_name(k, sizeof k, info->peer_other_object,
                    info->peer_other_kind));
        if (info->peer_plain && u < sizeof also)
            snprintf(also + u, sizeof also - u, "; process %u waits in an ordinary lpf_sync",
                    info->peer_plain - 1);
    }
    fflush(stdout);
    if (other && !report) {
        /* the reporter's line names this process's kind of wait too */
    } else if (es == 0 && er == 0)
        fprintf(stderr, "superstep: lpf_sync (process %u of %u): %s can never end in superstep "
                "%llu: every process waits, not all in this sync%s (deadlock: %s)\n",
                ctx->pid, ctx->nprocs, what, (unsigned long long)ctx->superstep, also,
                other ? "every process must end a superstep with the same kind of sync: "
                "ordinary, zero-cost, or tagged with the same tag"
                : "the active processes of a tag must make the same tagged syncs");
    else
        fprintf(stderr, "superstep: lpf_sync (process %u of %u): %s can never end in superstep "
                "%llu: expected %zu sent and %zu received messages, %zu received; every "
                "process waits%s (deadlock%s)\n", ctx->pid, ctx->nprocs, what,
                (unsigned long long)ctx->superstep, es, er, arrived, also,
                other ? ": every process must end a superstep with the same kind of sync: "
                "ordinary, zero-cost, or tagged with the same tag" : "");
    fflush(stderr);
    usleep(report ? 300000 : 3000000);
    sstep_abort_quiet(c);
    _exit(6);
}

/* what a sync is called in its error lines (made only for those) */
struct lx_what {
    char s[64];
};
static const char *lx_what(struct lx_what *w, lpf_tag_t tag, int zero)
{
    if (tag == LPF_INVALID_TAG) snprintf(w->s, sizeof w->s, "zero-cost sync");
    else snprintf(w->s, sizeof w->s, "%ssync of tag %u", zero ? "zero-cost " : "", tag);
    return w->s;
}

static void zero_exchange(lpf_t c, struct sstep_ctx *ctx, const lpf_pid_t *members,
        lpf_pid_t n, struct sstep_stamp st, size_t es, size_t er, lpf_tag_t tag)
{
    struct lx_what wb;
#define what lx_what(&wb, tag, 1)
    const char *prim = "lpf_sync";
    struct sstep_queue *q = &ctx->q;
    const lpf_pid_t me = ctx->pid;
    if (SSTEP_UNLIKELY(n > 1 && lx_no_range(ctx)))
        lx_unsupported(ctx, prim, "zero-cost syncs need oblivious syncs");
    size_t np = 0, ng = 0, nself = 0;
    for (lpf_pid_t k = 0; k < q->ntouched; ++k) {
        const lpf_pid_t d = q->touched[k];
        const struct sstep_peer_lists *pl = &q->peers[d];
        if (SSTEP_UNLIKELY(pl->count[SSTEP_MSG]))
            sstep_fatal(ctx, prim, "superstep %llu: buffered messages are pending; a %s "
                    "ends LPF requests only", (unsigned long long)ctx->superstep, what);
        np += pl->count[SSTEP_PUT];
        ng += pl->count[SSTEP_GET];
        if (d == me) nself = pl->count[SSTEP_PUT];
    }
    if (SSTEP_UNLIKELY(es > np))
        sstep_fatal(ctx, prim, "superstep %llu: %s expects %zu sent messages, but this "
                "process issued %zu put(s): it could never end", (unsigned long long)
                ctx->superstep, what, es, np);
    if (SSTEP_UNLIKELY(er < ng + nself))
        sstep_fatal(ctx, prim, "superstep %llu: %s expects %zu received messages, but this "
                "process's own %zu get(s) and %zu put(s) to itself already count %zu",
                (unsigned long long)ctx->superstep, what, er, ng, nself, ng + nself);
    /* gets first: they read the sources now */
    for (lpf_pid_t k = 0; k < q->ntouched; ++k) {
        const lpf_pid_t d = q->touched[k];
        for (uint32_t i = q->peers[d].head[SSTEP_GET]; i != SSTEP_NIL; i = q->reqs[i].next) {
            struct sstep_req *r = &q->reqs[i];
            if (d == me || ctx->nprocs == 1) {
                char *from = sstep_resolve_global(ctx, r->slot, r->off, r->size);
                if (!from) sstep_remote_range_error(ctx, "lpf_get", me, r->slot, r->off, r->size);
                sstep_copy(r->local, from, r->size);
            } else if (!ctx->engine->direct_get
                    || ctx->engine->direct_get(ctx, d, r->slot, r->off, r->local, r->size)
                    != LPF_SUCCESS) {
                sstep_fatal(ctx, prim, "superstep %llu: a get from process %u in a %s: the %s "
                        "engine cannot read another process's memory without its sync",
                        (unsigned long long)ctx->superstep, d, what, ctx->engine->name);
            }
        }
    }
    /* then the puts to itself */
    if (nself)
        for (uint32_t i = q->peers[me].head[SSTEP_PUT]; i != SSTEP_NIL; i = q->reqs[i].next) {
            struct sstep_req *r = &q->reqs[i];
            char *to = sstep_resolve_global(ctx, r->slot, r->off, r->size);
            if (!to) sstep_remote_range_error(ctx, "lpf_put", me, r->slot, r->off, r->size);
            sstep_copy(to, r->local, r->size);
        }
    /* the other puts become stamped messages */
    const size_t nremote = np - nself;
    lpf_pid_t nt = q->ntouched;
    lpf_pid_t *dst = NULL, dst_few[16];
    uint32_t *head = NULL, head_few[16];
    if (nremote) {
        if (nt <= 16) {
            dst = dst_few;
            head = head_few;
        } else {
            dst = malloc(nt * sizeof *dst);
            head = malloc(nt * sizeof *head);
        }
        if (!dst || !head || (q->n + nremote > q->alloc && sstep_queue_grow(ctx, q->n + nremote)))
            sstep_fatal(ctx, prim, "out of memory");
    }
    for (lpf_pid_t k = 0; k < nt; ++k) {
        const lpf_pid_t d = q->touched[k];
        struct sstep_peer_lists *pl = &q->peers[d];
        if (dst) { dst[k] = d; head[k] = d == me ? SSTEP_NIL : pl->head[SSTEP_PUT]; }
        for (int kk = 0; kk < SSTEP_NKINDS; ++kk) {
            pl->head[kk] = pl->tail[kk] = SSTEP_NIL;
            pl->count[kk] = 0;
            pl->bytes[kk] = 0;
        }
    }
    q->ntouched = 0;
    q->kinds = 0;
    if (nremote) {
        for (lpf_pid_t k = 0; k < nt; ++k)
            for (uint32_t i = head[k]; i != SSTEP_NIL; i = q->reqs[i].next) {
                const struct sstep_req r = q->reqs[i];
                char *m = sstep_stage(c, sizeof(struct put_hdr) + r.size);
                if (!m) sstep_fatal(ctx, prim, "out of memory (%zu-byte put)", r.size);
                struct put_hdr h = { r.slot, 0, r.off, r.size };
                memcpy(m, &h, sizeof h);
                if (r.size) memcpy(m + sizeof h, r.local, r.size);
                sstep_enqueue(ctx, SSTEP_MSG, dst[k], m, 0, 0, sizeof h + r.size);
            }
        if (dst != dst_few) {
            free(dst);
            free(head);
        }
    }
    const size_t expect = er - ng - nself;
    struct sstep_sync_info info;
    memset(&info, 0, sizeof info);
    ctx->hold_regs = 1;
    lpf_err_t rc = members ? sstep_oblsync_set(c, members, n, st, expect, &info)
        : sstep_oblsync(c, 0, n, st, expect, &info);
    ctx->hold_regs = 0;
    /* more messages than expected: reported in checked mode (lpf-ext.md
     * §4); otherwise they are applied like the others */
    if (SSTEP_UNLIKELY(rc != LPF_SUCCESS)
            && !(info.cause == SSTEP_CAUSE_EXTRA && !ctx->checked)) {
        lpf_pid_t bad;
        switch (info.cause) {
        case SSTEP_CAUSE_DEADLOCK:
            deadlock_line(ctx, c, what, &info, es, er,
                    sstep_mailbox_count(ctx, st, SSTEP_E2, &bad) + ng + nself);
        case SSTEP_CAUSE_EXTRA:
            sstep_fatal(ctx, prim, "superstep %llu: %s received %zu messages, more than the "
                    "%zu expected (expected_rcvd %zu)", (unsigned long long)ctx->superstep - 1,
                    what, info.arrived + ng + nself, er, er);
        case SSTEP_CAUSE_LATE:
            sstep_fatal(ctx, prim, "superstep %llu: a message from process %u for an earlier "
                    "superstep arrived after this process had left it: more messages were "
                    "sent to it than it expected", (unsigned long long)ctx->superstep,
                    info.peer);
        case SSTEP_CAUSE_GONE:
            /* a process that failed in its sync (another kind for this
             * superstep) says why first and ends the run */
            usleep(200000);
            sstep_fatal(ctx, prim, "superstep %llu: process %u left before the %s",
                    (unsigned long long)ctx->superstep, info.peer, what);
        case SSTEP_CAUSE_MISMATCH:
            if (info.peer_kind == SSTEP_KIND_SYNC && info.peer_stamp.object == st.object) {
                char k[64];
                sstep_fatal(ctx, prim, "superstep %llu: this process makes a %s while process "
                        "%u makes %s for the same superstep (every process must end a "
                        "superstep with the same kind of sync: ordinary, zero-cost, or tagged "
                        "with the same tag and the same zero-cost attribute)",
                        (unsigned long long)ctx->superstep, what, info.peer,
                        lx_wait_name(k, sizeof k, info.peer_stamp.object, info.peer_kind));
            }
            sstep_fatal(ctx, prim, "superstep %llu: the %s failed (process %u made another "
                    "kind of sync)", (unsigned long long)ctx->superstep, what, info.peer);
        default:
            sstep_fatal(ctx, prim, "superstep %llu: the %s failed (process %u made another "
                    "kind of sync, cause %d)", (unsigned long long)ctx->superstep, what,
                    info.peer, info.cause);
        }
    }
    size_t cnt;
    const struct sstep_msg *m = sstep_inbox_of(c, st, &cnt);
    for (size_t i = 0; i < cnt; ++i) {
        struct put_hdr h;
        if (m[i].size < sizeof h) continue;
        memcpy(&h, m[i].data, sizeof h);
        char *to = sstep_resolve_global(ctx, h.slot, (size_t)h.off, (size_t)h.size);
        if (!to) sstep_remote_range_error(ctx, "lpf_put", m[i].src, h.slot, (size_t)h.off,
                (size_t)h.size);
        sstep_copy(to, m[i].data + sizeof h, (size_t)h.size);
    }
    sstep_inbox_release(c, st);
#undef what
}

SSTEP_HIDDEN void lx_tag_to_queue(struct sstep_ctx *ctx, struct lx_tag *t);

static void tagged_sync(lpf_t c, struct sstep_ctx *ctx, const struct lx_attr *a,
        const void *site)
{
    const char *prim = "lpf_sync";
    struct lx_tag *t = lx_tag_of(ctx, prim, a->tag);
    if (SSTEP_UNLIKELY(!t->active))
        sstep_fatal(ctx, prim, "superstep %llu: process %u is not active in tag %u and may "
                "not make its sync", (unsigned long long)ctx->superstep, ctx->pid, a->tag);
    if (SSTEP_UNLIKELY(ctx->nprocs > 1 && lx_no_range(ctx)))
        lx_unsupported(ctx, prim, "tagged syncs need subset syncs");
    /* the untagged requests wait for the next ordinary sync: set them and
     * their staging aside, unless there is nothing to set aside (no
     * untagged request queued, no staged bytes that peers may still read)
     * -- then the tagged sync runs on the core queue as it is */
    const int aside = ctx->q.n != 0 || ctx->arena[0].head != NULL || ctx->arena[1].head != NULL;
    if (aside) sstep_scope_push(c);
    lx_tag_to_queue(ctx, t);
    const struct sstep_stamp st = { t->object, t->steps };
    if (SSTEP_UNLIKELY(ctx->prof != NULL))
        sstep_prof_phase(ctx, (a->es || a->er) ? SSTEP_PROF_ZERO : SSTEP_PROF_TAG, site, a->tag,
                t->lo, t->n, t->mlist, a->es, a->er);
    struct lx_what wb;
#define what lx_what(&wb, a->tag, 0)
    if (a->es || a->er) {
        zero_exchange(c, ctx, t->mlist, t->n, st, a->es, a->er, a->tag);
    } else {
        struct sstep_sync_info info;
        memset(&info, 0, sizeof info);
        ctx->hold_regs = 1;
        const lpf_err_t rc = sstep_sync_set(c, t->mlist, t->n, st, &info);
        ctx->hold_regs = 0;
        if (rc != LPF_SUCCESS) {
            if (info.cause == SSTEP_CAUSE_DEADLOCK)
                deadlock_line(ctx, c, what, &info, 0, 0, 0);
            if (info.cause == SSTEP_CAUSE_GONE) usleep(200000);   /* as in zero_exchange */
            if (info.cause == SSTEP_CAUSE_MISMATCH && info.peer_kind == SSTEP_KIND_OBLSYNC
                    && info.peer_stamp.object == st.object)
                sstep_fatal(ctx, prim, "superstep %llu: this process makes a %s while process "
                        "%u makes a zero-cost tagged lpf_sync of the same tag (every process "
                        "must end a superstep with the same kind of sync: ordinary, zero-cost, "
                        "or tagged with the same tag and the same zero-cost attribute)",
                        (unsigned long long)ctx->superstep, what, info.peer);
            sstep_fatal(ctx, prim, "superstep %llu: the %s failed: process %u (active in the "
                    "tag) %s", (unsigned long long)ctx->superstep, what, info.peer,
                    info.cause == SSTEP_CAUSE_GONE ? "left before making it"
                    : "made another sync (all active processes must make the same tagged "
                    "syncs)");
        }
    }
#undef what
    t->steps++;
    if (aside) sstep_scope_pop(c);
}

lpf_err_t sstep_lext_sync(lpf_t c, lpf_sync_attr_t attr, const void *site)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "lpf_sync");
    const struct lx_attr *a = lx_attr_of(ctx, "lpf_sync", attr, LX_ATTR_SYNC | LX_ATTR_LENIENT);
    if (SSTEP_UNLIKELY(ctx->failed)) return LPF_ERR_FATAL;
    if (a == NULL || (a->tag == LPF_INVALID_TAG && a->es == 0 && a->er == 0))
        return lpf_sync(c, LPF_SYNC_DEFAULT);
    if (a->tag != LPF_INVALID_TAG) {
        tagged_sync(c, ctx, a, site);
    } else {
        struct sstep_lext *x = ctx->lext;
        sstep_lext_flush(ctx);
        const struct sstep_stamp st = { LX_OBJ_ZERO,
            ctx->superstep - ctx->range_steps + x->zero_steps };
        if (SSTEP_UNLIKELY(ctx->prof != NULL))
            sstep_prof_phase(ctx, SSTEP_PROF_ZERO, site, UINT32_MAX, 0, ctx->nprocs, NULL, a->es,
                    a->er);
        zero_exchange(c, ctx, NULL, ctx->nprocs, st, a->es, a->er, LPF_INVALID_TAG);
        x->zero_steps++;
    }
    return ctx->failed ? LPF_ERR_FATAL : LPF_SUCCESS;
}

lpf_err_t lpf_zero_get_status(lpf_t c, lpf_sync_attr_t attr, size_t *rcvd, size_t *sent)
{
    struct sstep_ctx *ctx = sstep_ctx_of(c, "lpf_zero_get_status");
    if (SSTEP_UNLIKELY(!rcvd || !sent))
        sstep_fatal(ctx, "lpf_zero_get_status", "rcvd or sent is NULL");
    const struct lx_attr *a = lx_attr_of(ctx, "lpf_zero_get_status", attr, LX_ATTR_SYNC);
    struct sstep_lext *x = lx_get(ctx);
    size_t s = 0, r = 0;
    struct sstep_stamp st;
    lpf_pid_t bad;
    if (a && a->tag != LPF_INVALID_TAG) {
        const struct lx_tag *t = lx_tag_of(ctx, "lpf_zero_get_status", a->tag);
        for (size_t i = 0; i < t->nreq; ++i) {
            if (t->reqs[i].kind == SSTEP_PUT) ++s;
            if (t->reqs[i].kind == SSTEP_GET || t->reqs[i].pid == ctx->pid) ++r;
        }
        st = (struct sstep_stamp){ t->object, t->steps };
    } else {
        const struct sstep_queue *q = &ctx->q;
        for (lpf_pid_t k = 0; k < q->ntouched; ++k) {
            const lpf_pid_t d = q->touched[k];
            s += q->peers[d].count[SSTEP_PUT];
            r += q->peers[d].count[SSTEP_GET] + (d == ctx->pid ? q->peers[d].count[SSTEP_PUT] : 0);
        }
        for (size_t j = 0; j < x->ntags; ++j)
            for (size_t i = 0; x->tags[j].live && i < x->tags[j].nreq; ++i) {
                const struct lx_req *rq = &x->tags[j].reqs[i];
                if (rq->kind == SSTEP_PUT) ++s;
                if (rq->kind == SSTEP_GET || rq->pid == ctx->pid) ++r;
            }
        st = (struct sstep_stamp){ LX_OBJ_ZERO, ctx->superstep - ctx->range_steps + x->zero_steps };
    }
    r += sstep_mailbox_count(ctx, st, SSTEP_E2, &bad);
    *rcvd = r;
    *sent = s;
    return LPF_SUCCESS;
}
