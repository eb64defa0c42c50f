/*
 * The superstep profiler (prof.h): the source line of every recorded sync.
 * The recording half writes, per call site, the return address as a
 * link-time address in its object file ("where" lines); here addr2line
 * (binutils) maps them to function, file and line, one run per object.
 * Without addr2line, or without debug information, a site keeps its
 * symbol+offset and the function name addr2line found in the symbol table.
 */
#define _GNU_SOURCE
#include "prof_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* run argv (no shell), its stdout into a malloc'ed string; NULL on failure */
static char *capture(char *const argv[])
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) { close(fd[0]); return NULL; }
    size_t len = 0, cap = 4096;
    char *out = malloc(cap);
    for (ssize_t n; out;) {
        if (len + 1 >= cap) {
            char *m = realloc(out, cap *= 2);
            if (!m) { free(out); out = NULL; break; }
            out = m;
        }
        n = read(fd[0], out + len, cap - len - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (out) out[len] = '\0';
    if (out && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) { free(out); out = NULL; }
    return out;
}

/* next line of *text (NUL-terminated in place), or NULL */
static char *next_line(char **text)
{
    char *l = *text;
    if (!l || !*l) return NULL;
    char *e = strchr(l, '\n');
    if (e) { *e = '\0'; *text = e + 1; } else *text = l + strlen(l);
    return l;
}

/* every site of every part recorded in object `obj`, resolved in one run */
static void resolve_object(struct pf_run *R, const char *tool, const char *obj)
{
    enum { MAXA = 256 };
    struct pf_site *todo[MAXA];
    char addr[MAXA][24];
    char *argv[MAXA + 8];
    size_t n = 0, a = 0;
    for (size_t i = 0; i < R->nparts && n < MAXA; ++i)
        for (unsigned j = 0; j < R->parts[i].nsites && n < MAXA; ++j) {
            struct pf_site *s = &R->parts[i].sites[j];
            if (!s->vaddr || s->line || s->func[0] || strcmp(s->obj, obj)) continue;
            todo[n++] = s;
        }
    if (!n) return;
    argv[a++] = (char *)tool;
    argv[a++] = "-f";
    argv[a++] = "-C";
    argv[a++] = "-e";
    argv[a++] = (char *)obj;
    for (size_t k = 0; k < n; ++k) {
        /* a return address: the call is the byte before it */
        snprintf(addr[k], sizeof addr[k], "%#llx", todo[k]->vaddr - 1);
        argv[a++] = addr[k];
    }
    argv[a] = NULL;
    char *out = capture(argv);
    char *text = out;
    for (size_t k = 0; k < n && text; ++k) {
        char *fn = next_line(&text), *fl = next_line(&text);
        if (!fn || !fl) break;
        struct pf_site *s = todo[k];
        if (strcmp(fn, "??")) snprintf(s->func, sizeof s->func, "%s", fn);
        else snprintf(s->func, sizeof s->func, "?");   /* tried: do not try again */
        char *colon = strrchr(fl, ':');
        if (colon && strncmp(fl, "??", 2)) {
            int line = atoi(colon + 1);
            *colon = '\0';
            if (line > 0) {
                snprintf(s->file, sizeof s->file, "%s", fl);
                s->line = line;
            }
        }
    }
    free(out);
    /* sites the run left out (it failed): mark them tried */
    for (size_t k = 0; k < n; ++k)
        if (!todo[k]->func[0]) snprintf(todo[k]->func, sizeof todo[k]->func, "?");
}

void pf_resolve_sites(struct pf_run *R)
{
    const char *tool = getenv("SUPERSTEP_PROFILE_ADDR2LINE");
    if (!tool) tool = "addr2line";
    if (!*tool) return;
    for (size_t i = 0; i < R->nparts; ++i)
        for (unsigned j = 0; j < R->parts[i].nsites; ++j) {
            const struct pf_site *s = &R->parts[i].sites[j];
            if (s->vaddr && !s->func[0]) resolve_object(R, tool, s->obj);
        }
}

const char *pf_where(const struct pf_site *s, char *buf, size_t len)
{
    if (s->line > 0) {
        const char *base = strrchr(s->file, '/');
        snprintf(buf, len, "%s:%d", base ? base + 1 : s->file, s->line);
    } else if (s->func[0] && strcmp(s->func, "?")) {
        snprintf(buf, len, "in %s", s->func);
    } else {
        snprintf(buf, len, "%s", s->name);
    }
    return buf;
}
