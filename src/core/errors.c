/*
 * Error reporting: one line on stderr naming the primitive, the process and
 * the values, then the whole program ends like lpf_abort (status 6).
 */
#include "core_internal.h"

#include <lpf/abort.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic(sstep_fatal_hook_t) fatal_hook;

void sstep_set_fatal_hook(sstep_fatal_hook_t hook)
{
    atomic_store(&fatal_hook, hook);
}

static void vreport(struct sstep_ctx *ctx, const char *primitive, const char *fmt, va_list ap)
{
    char line[1024];
    int n;
    if (ctx)
        n = snprintf(line, sizeof line, "superstep: %s (process %u of %u): ",
                primitive, ctx->pid, ctx->nprocs);
    else
        n = snprintf(line, sizeof line, "superstep: %s: ", primitive);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof line)
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    sstep_fatal_hook_t hook = atomic_load(&fatal_hook);
    if (hook) {
        /* the hook may leave by longjmp: this context fails from now on */
        if (ctx) ctx->failed = 1;
        hook(ctx ? ctx->pid : LPF_MAX_P, ctx ? ctx->nprocs : 0, primitive,
                (size_t)n < sizeof line ? line + n : "");
    }
    /* one write so that lines of concurrent processes do not interleave */
    fflush(stdout);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void sstep_fatal(struct sstep_ctx *ctx, const char *primitive, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(ctx, primitive, fmt, ap);
    va_end(ap);
    if (ctx && ctx->engine && ctx->engine->abort)
        ctx->engine->abort(ctx, 6);
    _exit(6);
}

void sstep_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "superstep: warning: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

void sstep_remote_range_error(struct sstep_ctx *owner, const char *primitive,
        lpf_pid_t issuer, uint32_t slot, size_t off, size_t size)
{
    struct sstep_slot_array *a = sstep_slots(&owner->globals);
    if ((slot & SSTEP_NOC_BIT) && (!a || slot >= a->size))
        sstep_noc_range_error(owner, primitive, issuer, slot, off, size);
    if (slot >= a->size || a->e[slot].state != SSTEP_SLOT_GLOBAL)
        sstep_fatal(owner, primitive,
                "request issued by process %u names global slot %u, which is "
                "not registered at process %u", issuer, slot, owner->pid);
    sstep_fatal(owner, primitive,
            "request issued by process %u: offset %zu + size %zu exceeds the "
            "%zu bytes that process %u registered in global slot %u",
            issuer, off, size, a->e[slot].size, owner->pid, slot);
}
