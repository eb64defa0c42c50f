/*
 * The superstep profiler's recording half (SUPERSTEP_PROFILE=<dir>; see
 * docs/profiler.md). The core calls these hooks; everything else (merging
 * the processes' parts, the summary, the trace, the HTML report, the
 * prediction) is in src/prof/.
 *
 * Cost when off: ctx->prof is NULL, and the sync path tests it once before
 * and once after the exchange (a predictable branch on a field of a context
 * line that the sync reads anyway). When on, each process appends one
 * record per superstep to buffers it owns (no sharing, no locks); its part
 * file is written when its context ends (the end of its section), never in
 * a superstep.
 */
#ifndef SSTEP_PROFILE_H
#define SSTEP_PROFILE_H

#include "core_internal.h"

/* which entry point ended the superstep (recorded with the caller's
 * address, which the report maps to a layer) */
enum sstep_prof_origin {
    SSTEP_PROF_LPF = 0,   /* lpf_sync: the program, or a layer (collectives) */
    SSTEP_PROF_EXT = 1,   /* sstep_sync_ext: BSPlib's bsp_sync */
    SSTEP_PROF_E1 = 2,    /* sstep_sync_range (PUB) */
    SSTEP_PROF_E2 = 3,    /* sstep_oblsync (PUB) */
    SSTEP_PROF_TAG = 4,   /* lpf_sync with a tag (<lpf/tags.h>) */
    SSTEP_PROF_ZERO = 5   /* lpf_sync with expected counts (<lpf/zero.h>) */
};

struct sstep_prof;

/* a new context: attach a recorder when profiling is on (else ctx->prof
 * stays NULL) */
SSTEP_HIDDEN void sstep_prof_attach(struct sstep_ctx *ctx);
/* the context ends: write its part, free the recorder */
SSTEP_HIDDEN void sstep_prof_detach(struct sstep_ctx *ctx);

/* an engine-internal context (the hybrid engine's rank-level one): free
 * the recorder without writing a part */
SSTEP_HIDDEN void sstep_prof_drop(struct sstep_ctx *ctx);

/* around engine->exec_begin, on the thread that starts the section: the
 * contexts created meanwhile belong to a section nested in `parent` */
SSTEP_HIDDEN void sstep_prof_exec_enter(struct sstep_ctx *parent);
SSTEP_HIDDEN void sstep_prof_exec_leave(void);

/* around the exchange of a superstep (ctx->prof != NULL) */
SSTEP_HIDDEN void sstep_prof_sync_begin(struct sstep_ctx *ctx, int origin, const void *site);
SSTEP_HIDDEN void sstep_prof_sync_end(struct sstep_ctx *ctx, lpf_err_t rc);
/* the sync just recorded was one a layer made for itself (sstep_layer_step:
 * bsp_begin's, pub_exec's, BSPlib's registration sync): the part marks it
 * with an "own" line, and the report numbers the program's supersteps
 * without it, as checked mode does */
SSTEP_HIDDEN void sstep_prof_layer_step(struct sstep_ctx *ctx);

/* LPF's extensions (src/ext): the next superstep recorded is a tagged or
 * zero-cost sync (origin SSTEP_PROF_TAG / _ZERO) called from `site`, of tag
 * `tag` (UINT32_MAX: none) over the n pids members[0..n-1] (members NULL:
 * lo..lo+n-1), expecting es sent and er received messages; the part file
 * gets an "x" line after its "s" line: "x TAG LO N ES ER PIDS", PIDS as
 * runs ("0-3,6") */
SSTEP_HIDDEN void sstep_prof_phase(struct sstep_ctx *ctx, int origin, const void *site,
        uint32_t tag, lpf_pid_t lo, lpf_pid_t n, const lpf_pid_t *members, uint64_t es,
        uint64_t er);

#endif
