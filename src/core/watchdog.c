/*
 * The sync watchdog: a sync that has waited long for processes that do not
 * arrive (an endless loop, a deadlock in user code) says so once, naming
 * who has arrived and who has not (SUPERSTEP_SYNC_WARN seconds, default 60,
 * 0 = off), and optionally gives up, ending every process with status 6
 * (SUPERSTEP_SYNC_TIMEOUT seconds, default 0 = wait for ever). The engines
 * know the arrival state and call this; the core formats and decides.
 */
#include "core_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sstep_watchdog wd;
static pthread_once_t wd_once = PTHREAD_ONCE_INIT;

static uint64_t seconds_env(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    double s = strtod(v, &end);
    if (*end != '\0' || !(s >= 0) || s > 1e9) {
        sstep_warn("%s=%s is not a number of seconds; using %g", name, v, (double)dflt / 1e9);
        return dflt;
    }
    return (uint64_t)(s * 1e9);
}

static void wd_init(void)
{
    wd.warn_ns = seconds_env("SUPERSTEP_SYNC_WARN", 60000000000ull);
    wd.timeout_ns = seconds_env("SUPERSTEP_SYNC_TIMEOUT", 0);
    /* the first of the two that fires, in the wait loops' terms */
    wd.first_ns = wd.warn_ns;
    if (wd.timeout_ns && (!wd.first_ns || wd.timeout_ns < wd.first_ns)) wd.first_ns = wd.timeout_ns;
}

const struct sstep_watchdog *sstep_watchdog(void)
{
    pthread_once(&wd_once, wd_init);
    return &wd;
}

/* append the pids whose state is `want` as ranges ("0-3, 5") */
static size_t list_pids(char *out, size_t cap, lpf_pid_t P, const unsigned char *state,
        unsigned char want, const uint64_t *steps)
{
    size_t n = 0;
    int first = 1;
    for (lpf_pid_t q = 0; q < P && n + 40 < cap; ++q) {
        if (state[q] != want) continue;
        lpf_pid_t r = q;
        /* ranges only where no superstep numbers are printed */
        if (!steps)
            while (r + 1 < P && state[r + 1] == want) ++r;
        int k;
        if (steps && want == SSTEP_ARR_NOT)
            k = snprintf(out + n, cap - n, "%s%u (after %llu supersteps)", first ? "" : ", ", q,
                    (unsigned long long)steps[q]);
        else if (r > q)
            k = snprintf(out + n, cap - n, "%s%u-%u", first ? "" : ", ", q, r);
        else
            k = snprintf(out + n, cap - n, "%s%u", first ? "" : ", ", q);
        if (k > 0) n += (size_t)k;
        first = 0;
        q = r;
    }
    if (n + 40 >= cap) n += (size_t)snprintf(out + n, cap - n, ", ...");
    if (first) n += (size_t)snprintf(out + n, cap - n, "none");
    return n;
}

void sstep_sync_stalled(struct sstep_ctx *ctx, uint64_t waited_ns, lpf_pid_t P,
        const unsigned char *state, const uint64_t *steps, int fatal)
{
    const unsigned long long step = ctx ? sstep_user_step(ctx) : 0;
    const uint64_t lsub = ctx ? ctx->layer_steps : 0;
    /* the hybrid engine's rank-level context: name the pids of each rank */
    unsigned char *xs = NULL;
    uint64_t *xp = NULL;
    char who[96] = "";
    lpf_pid_t rank_T = 1;
    if (ctx && ctx->rank_stride > 1 && ctx->rank_P) {
        const lpf_pid_t T = ctx->rank_stride, PP = ctx->rank_P;
        rank_T = T;
        xs = malloc(PP);
        xp = steps ? malloc(PP * sizeof *xp) : NULL;
        if (xs && (xp || !steps)) {
            for (lpf_pid_t q = 0; q < PP; ++q) {
                xs[q] = q / T < P ? state[q / T] : SSTEP_ARR_YES;
                if (xp) xp[q] = q / T < P ? steps[q / T] : 0;
            }
            snprintf(who, sizeof who, "rank %u (processes %u-%u of %u) ", ctx->pid,
                    ctx->pid * T, ctx->pid * T + T - 1, PP);
            state = xs;
            steps = xp;
            P = PP;
            ctx = NULL;
        }
    }
    /* the others' counts in the user's numbering too (layers sync together,
     * so everyone's own syncs are ours) */
    uint64_t *us = NULL;
    if (steps && lsub && (us = calloc(P, sizeof *us)) != NULL) {
        for (lpf_pid_t q = 0; q < P; ++q)
            us[q] = steps[q] > lsub ? steps[q] - lsub : 0;
        steps = us;
    }
    char arrived[512], missing[1024], left[256];
    list_pids(arrived, sizeof arrived, P, state, SSTEP_ARR_YES, steps);
    list_pids(missing, sizeof missing, P, state, SSTEP_ARR_NOT, steps);
    if (who[0]) {
        /* a rank that has not arrived: which of its processes is known
         * there (its own line names them), not here */
        size_t n = 0;
        int first = 1;
        const lpf_pid_t RT = rank_T;
        for (lpf_pid_t q = 0; q < P && n + 80 < sizeof missing; q += RT) {
            if (state[q] != SSTEP_ARR_NOT) continue;
            lpf_pid_t hi = q + RT - 1 < P ? q + RT - 1 : P - 1;
            int k = snprintf(missing + n, sizeof missing - n, "%sone or more of %u-%u (rank %u)",
                    first ? "" : ", ", q, hi, q / RT);
            if (k > 0) n += (size_t)k;
            first = 0;
        }
        if (first) snprintf(missing, sizeof missing, "none");
    }
    list_pids(left, sizeof left, P, state, SSTEP_ARR_LEFT, steps);
    const double s = (double)waited_ns / 1e9;
    if (fatal)
        sstep_fatal(ctx, "sync", "%sgave up after waiting %.0f s (SUPERSTEP_SYNC_TIMEOUT) in "
                "the sync ending superstep %llu: arrived: %s; not arrived: %s%s%s", who, s, step,
                arrived, missing, strcmp(left, "none") ? "; left the section: " : "",
                strcmp(left, "none") ? left : "");
    fflush(stdout);
    if (who[0])
        fprintf(stderr, "superstep: sync (%.*s): has waited %.0f s (SUPERSTEP_SYNC_WARN) in the "
                "sync ending superstep %llu: arrived: %s; not arrived: %s%s%s; still waiting\n",
                (int)strlen(who) - 1, who, s, step, arrived, missing, strcmp(left, "none") ? "; left the section: " : "",
                strcmp(left, "none") ? left : "");
    else
        fprintf(stderr, "superstep: sync (process %u of %u): has waited %.0f s "
            "(SUPERSTEP_SYNC_WARN) in the sync ending superstep %llu: arrived: %s; "
            "not arrived: %s%s%s; still waiting (SUPERSTEP_SYNC_TIMEOUT=seconds "
            "aborts instead)\n", ctx ? ctx->pid : 0, P, s, step, arrived, missing,
            strcmp(left, "none") ? "; left the section: " : "", strcmp(left, "none") ? left : "");
    fflush(stderr);
    free(us);
    free(xs);
    free(xp);
}
