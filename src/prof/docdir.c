/*
 * Where the docs are (pf_doc_dir, prof_internal.h): SUPERSTEP_DOCDIR if set,
 * else installed next to the
 * library or program this file is compiled into, else the source tree's,
 * else the configured install location. Compiled into the library (the
 * report's link), bspprof and bspprobe (their --help).
 */
#define _GNU_SOURCE
#include "prof_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SSTEP_DOC_INSTALLED
#define SSTEP_BIN_TO_DOC "../share/doc/superstep"
#define SSTEP_LIB_TO_DOC "../share/doc/superstep"
#define SSTEP_DOC_INSTALLED "/usr/local/share/doc/superstep"
#define SSTEP_DOC_SOURCE "docs"
#endif

/* dir/rel/profiler.md readable: its directory, resolved, into buf */
static int doc_dir_at(char *buf, size_t len, const char *file, const char *rel)
{
    char dir[PATH_MAX + 128], path[PATH_MAX + 192], real[PATH_MAX];
    if (!file || !*file || !realpath(file, real)) return -1;
    char *slash = strrchr(real, '/');
    if (!slash) return -1;
    *slash = '\0';
    snprintf(dir, sizeof dir, "%s/%s", real, rel);
    snprintf(path, sizeof path, "%s/profiler.md", dir);
    if (access(path, R_OK) || !realpath(dir, real)) return -1;
    snprintf(buf, len, "%s", real);
    return 0;
}

SSTEP_PROF_API const char *pf_doc_dir(char *buf, size_t len, int source)
{
    /* set when the man pages are made for an install prefix */
    const char *env = getenv("SUPERSTEP_DOCDIR");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return buf;
    }
    Dl_info in;
    const char *self = dladdr((const void *)&pf_doc_dir, &in) ? in.dli_fname : NULL;
    static const char *const rel[2] = { SSTEP_LIB_TO_DOC, SSTEP_BIN_TO_DOC };
    for (int i = 0; i < 2; ++i)
        if (!doc_dir_at(buf, len, self, rel[i]) || !doc_dir_at(buf, len, "/proc/self/exe", rel[i]))
            return buf;
    char real[PATH_MAX], path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/profiler.md", SSTEP_DOC_SOURCE);
    if (source && !access(path, R_OK) && realpath(SSTEP_DOC_SOURCE, real)) {
        snprintf(buf, len, "%s", real);
        return buf;
    }
    snprintf(buf, len, "%s", SSTEP_DOC_INSTALLED);
    return buf;
}
