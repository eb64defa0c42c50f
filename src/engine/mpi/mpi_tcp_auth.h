/*
 * Authentication of the TCP meeting point (lpf_mpi_initialize_over_tcp):
 * the shared secret and the MACs of the challenge-response, all on
 * libsodium (a build without it refuses the meeting in tcp_auth_key).
 * mpi_tcp.c runs the protocol; docs/mpi.md describes it.
 */
#ifndef SSTEP_MPI_TCP_AUTH_H
#define SSTEP_MPI_TCP_AUTH_H

#include "../../core/core_internal.h"

#include <stddef.h>

#define TCP_KEY_BYTES 32     /* crypto_auth_KEYBYTES */
#define TCP_MAC_BYTES 32     /* crypto_auth_BYTES (HMAC-SHA512-256) */
#define TCP_NONCE_BYTES 32

/* One piece of a message to authenticate. */
struct tcp_part {
    const void *p;
    size_t n;
};

/* The key of this user's meeting secret: derived from $SUPERSTEP_TCP_SECRET
 * when set, else from the per-user secret file (created on first use).
 * 0 on success; else -1 and a one-line reason in why. */
SSTEP_HIDDEN int tcp_auth_key(unsigned char key[TCP_KEY_BYTES], char *why, size_t whylen);

/* Unpredictable bytes (libsodium's randombytes_buf). */
SSTEP_HIDDEN void tcp_auth_random(void *buf, size_t n);

/* mac = HMAC-SHA512-256(key, label || parts...) */
SSTEP_HIDDEN void tcp_auth_mac(unsigned char mac[TCP_MAC_BYTES],
        const unsigned char key[TCP_KEY_BYTES], const char *label,
        const struct tcp_part *parts, size_t nparts);

/* 1 if mac is the MAC of (label || parts...) under key (constant time), else 0 */
SSTEP_HIDDEN int tcp_auth_check(const unsigned char mac[TCP_MAC_BYTES],
        const unsigned char key[TCP_KEY_BYTES], const char *label,
        const struct tcp_part *parts, size_t nparts);

/* 1 if the two MACs are equal (constant time), else 0 */
SSTEP_HIDDEN int tcp_auth_equal(const unsigned char a[TCP_MAC_BYTES],
        const unsigned char b[TCP_MAC_BYTES]);

/* wipe secrets from memory */
SSTEP_HIDDEN void tcp_auth_wipe(void *buf, size_t n);

#endif
