/*
 * The shared secret of the TCP meeting point and the MACs that prove it.
 *
 * The secret comes from $SUPERSTEP_TCP_SECRET when set, else from a
 * per-user file, $XDG_CONFIG_HOME/superstep/tcp-secret (by default
 * ~/.config/superstep/tcp-secret). When the file does not exist it is
 * created with 64 random hex digits, mode 0600, in a directory of mode 0700:
 * written to a temporary file and linked into place without overwriting,
 * then read back, so processes starting together end up with the same
 * secret. A file or directory that others could read or change is refused.
 *
 * The key is crypto_generichash (BLAKE2b) of the secret, keyed with a label
 * of this protocol; the MACs are crypto_auth's HMAC-SHA512-256. Everything
 * cryptographic is libsodium's.
 *
 * A build without libsodium (SUPERSTEP_HAVE_SODIUM undefined) has the same
 * functions, but tcp_auth_key refuses with a line that says why, so the
 * meeting fails before any connection is made.
 */
#define _GNU_SOURCE
#include "mpi_tcp_auth.h"

#ifndef SUPERSTEP_HAVE_SODIUM

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tcp_auth_key(unsigned char key[TCP_KEY_BYTES], char *why, size_t wl)
{
    memset(key, 0, TCP_KEY_BYTES);
    snprintf(why, wl, "this Superstep was built without libsodium, which authenticates the "
            "processes of the TCP meeting; rebuild it with libsodium (libsodium-dev) to use "
            "lpf_mpi_initialize_over_tcp");
    return -1;
}

/* never reached: every meeting stops at tcp_auth_key */
static void no_sodium(void)
{
    fprintf(stderr, "superstep: internal error: TCP meeting authentication used in a build "
            "without libsodium\n");
    abort();
}

void tcp_auth_random(void *buf, size_t n)
{
    (void)buf;
    (void)n;
    no_sodium();
}

void tcp_auth_mac(unsigned char mac[TCP_MAC_BYTES], const unsigned char key[TCP_KEY_BYTES],
        const char *label, const struct tcp_part *parts, size_t nparts)
{
    (void)mac; (void)key; (void)label; (void)parts; (void)nparts;
    no_sodium();
}

int tcp_auth_check(const unsigned char mac[TCP_MAC_BYTES], const unsigned char key[TCP_KEY_BYTES],
        const char *label, const struct tcp_part *parts, size_t nparts)
{
    (void)mac; (void)key; (void)label; (void)parts; (void)nparts;
    no_sodium();
    return 0;
}

int tcp_auth_equal(const unsigned char a[TCP_MAC_BYTES], const unsigned char b[TCP_MAC_BYTES])
{
    (void)a; (void)b;
    no_sodium();
    return 0;
}

void tcp_auth_wipe(void *buf, size_t n)
{
    volatile unsigned char *p = buf;
    while (n--) *p++ = 0;
}

#else /* SUPERSTEP_HAVE_SODIUM */

#include <sodium.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define SECRET_ENV "SUPERSTEP_TCP_SECRET"
#define SECRET_MAX 4096
#define KEY_LABEL "superstep tcp meeting key, v2"

_Static_assert(crypto_auth_hmacsha512256_BYTES == TCP_MAC_BYTES, "MAC size");
_Static_assert(crypto_auth_hmacsha512256_KEYBYTES == TCP_KEY_BYTES, "key size");
_Static_assert(sizeof KEY_LABEL - 1 >= crypto_generichash_KEYBYTES_MIN, "label as key");

static int derive(unsigned char key[TCP_KEY_BYTES], const char *secret, size_t n)
{
    return crypto_generichash(key, TCP_KEY_BYTES, (const unsigned char *)secret, n,
            (const unsigned char *)KEY_LABEL, sizeof KEY_LABEL - 1);
}

/* the folder of the secret file, without the trailing "/tcp-secret" */
static int secret_dir(char *dir, size_t n, char *why, size_t wl)
{
    const char *x = getenv("XDG_CONFIG_HOME");
    int k;
    if (x && x[0] == '/') {
        k = snprintf(dir, n, "%s/superstep", x);
    } else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
            struct passwd *pw = getpwuid(geteuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!home || home[0] != '/') {
            snprintf(why, wl, "no shared secret: " SECRET_ENV " is not set and there is no "
                    "home folder for the secret file");
            return -1;
        }
        k = snprintf(dir, n, "%s/.config/superstep", home);
    }
    if (k < 0 || (size_t)k + sizeof "/tcp-secret.XXXXXX" >= n) {
        snprintf(why, wl, "no shared secret: " SECRET_ENV " is not set and the path of "
                "the secret file is too long");
        return -1;
    }
    return 0;
}

/* mkdir -p with mode 0700 for what is missing */
static int make_dirs(char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
    for (char *s = dir + 1; *s; ++s) {
        if (*s != '/') continue;
        *s = '\0';
        int r = mkdir(dir, 0700);
        int e = errno;
        *s = '/';
        if (r != 0 && e != EEXIST) {
            errno = e;
            return -1;
        }
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
    return 0;
}

/* read the secret file: 1 ok, 0 it does not exist, -1 error (why set) */
static int read_secret(const char *path, char *buf, size_t *len, char *why, size_t wl)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(why, wl, "cannot open the secret file %s (%s)", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, wl, "the secret file %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, wl, "the secret file %s belongs to another user (uid %u); refusing it",
                path, (unsigned)st.st_uid);
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(why, wl, "the secret file %s is accessible by group or others (mode %03o); "
                "refusing it: run chmod 600 %s (or set " SECRET_ENV ")", path,
                (unsigned)(st.st_mode & 0777), path);
        close(fd);
        return -1;
    }
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, buf + n, SECRET_MAX - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            snprintf(why, wl, "cannot read the secret file %s (%s)", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (k == 0) break;
        n += (size_t)k;
        if (n == SECRET_MAX) {
            snprintf(why, wl, "the secret file %s is longer than %d bytes", path, SECRET_MAX);
            close(fd);
            return -1;
        }
    }
    close(fd);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '
                || buf[n - 1] == '\t'))
        --n;
    if (!n) {
        snprintf(why, wl, "the secret file %s is empty", path);
        return -1;
    }
    *len = n;
    return 1;
}

/* a new random secret, put in place unless another process was first */
static int create_secret(const char *dir, const char *path, char *why, size_t wl)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/.tcp-secret.XXXXXX", dir);
    int fd = mkstemp(tmp);   /* mode 0600 */
    if (fd < 0) {
        snprintf(why, wl, "cannot create the secret file in %s (%s)", dir, strerror(errno));
        return -1;
    }
    unsigned char raw[32];
    char text[2 * sizeof raw + 2];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2hex(text, sizeof text, raw, sizeof raw);
    sodium_memzero(raw, sizeof raw);
    size_t n = strlen(text);
    text[n++] = '\n';
    int ok = fchmod(fd, 0600) == 0 && write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
    sodium_memzero(text, sizeof text);
    ok = close(fd) == 0 && ok;
    if (ok && link(tmp, path) != 0 && errno != EEXIST) {
        /* a file system without hard links: rename, never over an existing file */
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) != 0 && errno != EEXIST)
            ok = 0;
    }
    int e = errno;
    unlink(tmp);
    if (!ok) {
        snprintf(why, wl, "cannot create the secret file %s (%s)", path, strerror(e));
        return -1;
    }
    return 0;
}

int tcp_auth_key(unsigned char key[TCP_KEY_BYTES], char *why, size_t wl)
{
    if (sodium_init() < 0) {
        snprintf(why, wl, "libsodium failed to initialise");
        return -1;
    }
    const char *env = getenv(SECRET_ENV);
    if (env) {
        if (!env[0]) {
            snprintf(why, wl, SECRET_ENV " is set but empty");
            return -1;
        }
        return derive(key, env, strlen(env)) == 0 ? 0 : -1;
    }
    char dir[PATH_MAX - 32], path[PATH_MAX];
    if (secret_dir(dir, sizeof dir, why, wl)) return -1;
    if (make_dirs(dir)) {
        snprintf(why, wl, "cannot create the folder %s of the secret file (%s)", dir,
                strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, wl, "the folder %s of the secret file belongs to another user or is "
                "writable by group or others; refusing it: run chmod 700 %s (or set "
                SECRET_ENV ")", dir, dir);
        return -1;
    }
    snprintf(path, sizeof path, "%s/tcp-secret", dir);
    char *buf = sodium_malloc(SECRET_MAX);
    if (!buf) {
        snprintf(why, wl, "out of memory");
        return -1;
    }
    size_t len = 0;
    int r = read_secret(path, buf, &len, why, wl);
    if (r == 0) {
        if (create_secret(dir, path, why, wl) == 0) {
            r = read_secret(path, buf, &len, why, wl);
            if (r == 0) snprintf(why, wl, "the secret file %s vanished", path);
        }
        else r = -1;
    }
    if (r == 1 && derive(key, buf, len) != 0) {
        snprintf(why, wl, "cannot derive a key from the secret");
        r = -1;
    }
    sodium_free(buf);
    return r == 1 ? 0 : -1;
}

void tcp_auth_random(void *buf, size_t n)
{
    randombytes_buf(buf, n);
}

void tcp_auth_mac(unsigned char mac[TCP_MAC_BYTES], const unsigned char key[TCP_KEY_BYTES],
        const char *label, const struct tcp_part *parts, size_t nparts)
{
    crypto_auth_hmacsha512256_state st;
    crypto_auth_hmacsha512256_init(&st, key, TCP_KEY_BYTES);
    crypto_auth_hmacsha512256_update(&st, (const unsigned char *)label, strlen(label) + 1);
    for (size_t i = 0; i < nparts; ++i)
        if (parts[i].n)
            crypto_auth_hmacsha512256_update(&st, parts[i].p, parts[i].n);
    crypto_auth_hmacsha512256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
}

int tcp_auth_check(const unsigned char mac[TCP_MAC_BYTES], const unsigned char key[TCP_KEY_BYTES],
        const char *label, const struct tcp_part *parts, size_t nparts)
{
    unsigned char want[TCP_MAC_BYTES];
    tcp_auth_mac(want, key, label, parts, nparts);
    int ok = sodium_memcmp(want, mac, TCP_MAC_BYTES) == 0;
    sodium_memzero(want, sizeof want);
    return ok;
}

int tcp_auth_equal(const unsigned char a[TCP_MAC_BYTES], const unsigned char b[TCP_MAC_BYTES])
{
    return sodium_memcmp(a, b, TCP_MAC_BYTES) == 0;
}

void tcp_auth_wipe(void *buf, size_t n)
{
    sodium_memzero(buf, n);
}

#endif /* SUPERSTEP_HAVE_SODIUM */
