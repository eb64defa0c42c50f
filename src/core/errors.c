/*
 * Error reporting: one line on stderr naming the primitive, the process and
 * the values, then the whole program ends like lpf_abort (status 6).
 */
#define _GNU_SOURCE
#include "core_internal.h"

#include <lpf/abort.h>

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static _Atomic(sstep_fatal_hook_t) fatal_hook;

void sstep_set_fatal_hook(sstep_fatal_hook_t hook)
{
    atomic_store(&fatal_hook, hook);
}

/* addr2line's two lines (function, file:line) for `vaddr` in `obj`, into
 * func and where; 0 when it ran */
static int addr2line(const char *obj, unsigned long vaddr, char *func, size_t flen,
        char *where, size_t wlen)
{
    const char *tool = getenv("SUPERSTEP_ADDR2LINE");
    char addr[32], out[1024];
    snprintf(addr, sizeof addr, "%#lx", vaddr);
    char *argv[] = { (char *)(tool && *tool ? tool : "addr2line"), "-f", "-C", "-e",
                     (char *)obj, addr, NULL };
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) { close(fd[0]); return -1; }
    size_t n = 0;
    for (ssize_t k; n + 1 < sizeof out && (k = read(fd[0], out + n, sizeof out - 1 - n)) != 0;) {
        if (k < 0) break;
        n += (size_t)k;
    }
    out[n] = '\0';
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0) {}
    char *nl = strchr(out, '\n');
    if (!nl) return -1;
    *nl = '\0';
    char *fl = nl + 1, *nl2 = strchr(fl, '\n');
    if (nl2) *nl2 = '\0';
    char *sp = strstr(fl, " (discriminator");
    if (sp) *sp = '\0';
    snprintf(func, flen, "%.*s", (int)flen - 1, out);
    snprintf(where, wlen, "%.*s", (int)wlen - 1, fl);
    return 0;
}

/* a runtime's object (C library, MPI, sanitizers, the interpreter), not
 * the user's code: a thread's or a callback's frames pass through them */
static int system_object(const char *path)
{
    static const char *const names[] = { "libc.so", "libpthread", "ld-linux", "libmpi",
        "libopen-", "mca_", "libgomp", "libstdc++", "libgcc_s", "libtsan", "libasan",
        "libubsan", "libpython", "python3", "libsimgrid", "libhwloc" };
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strncmp(base, names[i], strlen(names[i]))) return 1;
    return 0;
}

/* " (called at FILE:LINE in FUNC)": the first frame of the stack that is
 * not in the library, that is the user's call of the primitive; empty when
 * it cannot be told (the library linked statically into the program, or
 * SUPERSTEP_CALL_SITE=0) */
void sstep_call_site(char *buf, size_t len)
{
    buf[0] = '\0';
    const char *off = getenv("SUPERSTEP_CALL_SITE");
    if (off && !strcmp(off, "0")) return;
    void *frames[48];
    int n = backtrace(frames, 48);
    Dl_info self, in;
    if (!dladdr((const void *)&sstep_fatal, &self) || !self.dli_fbase) return;
    struct link_map *selfmap = NULL;
    if (!dladdr1((const void *)&sstep_fatal, &in, (void **)&selfmap, RTLD_DL_LINKMAP)
            || !selfmap || !selfmap->l_name || !*selfmap->l_name)
        return;   /* the library is part of the program: no frame tells who the user is */
    for (int i = 1; i < n; ++i) {
        struct link_map *lm = NULL;
        if (!dladdr1(frames[i], &in, (void **)&lm, RTLD_DL_LINKMAP) || !lm) continue;
        if (in.dli_fbase == self.dli_fbase) continue;
        const char *obj = lm->l_name;
        if (obj && *obj && system_object(obj)) continue;
        char exe[4096];
        if (!obj || !*obj) {
            ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
            if (k <= 0) return;
            exe[k] = '\0';
            obj = exe;
        }
        /* a return address: the call is the byte before it */
        unsigned long vaddr = (unsigned long)((const char *)frames[i] - 1 - (const char *)lm->l_addr);
        char func[256] = "", where[512] = "";
        const char *base = strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
        int ran = !addr2line(obj, vaddr, func, sizeof func, where, sizeof where);
        size_t wl = strlen(where);
        int line = ran && strncmp(where, "??", 2) && wl > 2
                && strcmp(where + wl - 2, ":?") && strcmp(where + wl - 2, ":0");
        int named = ran && func[0] && strcmp(func, "??");
        if (line)
            snprintf(buf, len, " (called at %.300s%s%.200s)", where,
                    named ? " in " : "", named ? func : "");
        else if (named)
            snprintf(buf, len, " (called from %.200s in %.200s; compile with -g for the line)",
                    func, base);
        else if (in.dli_sname)
            snprintf(buf, len, " (called from %.200s in %.200s; compile with -g for the line)",
                    in.dli_sname, base);
        else
            snprintf(buf, len, " (called from %.200s+%#lx; compile with -g for the line)", base, vaddr);
        return;
    }
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
    char site[640];
    sstep_call_site(site, sizeof site);
    /* one write so that lines of concurrent processes do not interleave */
    fflush(stdout);
    fprintf(stderr, "%s%s\n", line, site);
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
        sstep_lpfext.noc_range_error(owner, primitive, issuer, slot, off, size);
    if (slot >= a->size || a->e[slot].state != SSTEP_SLOT_GLOBAL)
        sstep_fatal(owner, primitive,
                "request issued by process %u names global slot %u, which is "
                "not registered at process %u", issuer, slot, owner->pid);
    sstep_fatal(owner, primitive,
            "request issued by process %u: offset %zu + size %zu exceeds the "
            "%zu bytes that process %u registered in global slot %u",
            issuer, off, size, a->e[slot].size, owner->pid, slot);
}
