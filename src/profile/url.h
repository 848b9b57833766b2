#ifndef SIZEUP_PROFILE_URL_H
#define SIZEUP_PROFILE_URL_H

/* Base URLs for load runs: "http://host[:port][/base]" or "https://...". The host may be a
 * name, an IPv4 address or a bracketed IPv6 address. Names are resolved once, before a run, so
 * the hot path never touches the resolver. */

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/err.h"

#define URL_MAX      4096 /* a longer URL is rejected */
#define URL_HOST_MAX 256  /* host name or address, without brackets */
#define URL_PATH_MAX 2048 /* base path */

struct url {
    int tls;                          /* https */
    char host[URL_HOST_MAX];          /* "example.com", "127.0.0.1", "::1" (no brackets) */
    int host_is_ip;                   /* a literal address: no SNI, verify against the IP */
    uint16_t port;                    /* explicit or the scheme's default */
    char authority[URL_HOST_MAX + 8]; /* the Host header: "host", "host:8080", "[::1]:8080" */
    char base_path[URL_PATH_MAX];     /* "" or "/api" (never a trailing '/') */
};

/* A resolved address, ready for socket() and connect(). */
struct url_addr {
    int family; /* AF_INET or AF_INET6 */
    socklen_t len;
    struct sockaddr_storage ss;
};

/* Parses s (NUL-terminated, at most URL_MAX bytes) into *u. Rejects other schemes, user info,
 * fragments, empty hosts, bad ports and control characters, naming the problem in err.
 * Returns 0 or -EINVAL. */
SIZEUP_MUST_USE int url_parse(const char *s, struct url *u /* OUT */, char *err);

/* Resolves u's host once (getaddrinfo) and fills *a with the first address returned; when
 * there are several, with the first that accepts a TCP connection (probed, 500 ms each).
 * Returns 0, or -EHOSTUNREACH when the name does not resolve (err says why). */
SIZEUP_MUST_USE int url_resolve(const struct url *u, struct url_addr *a /* OUT */, char *err);

/* Writes base_path joined with path (which starts with '/') into out (cap bytes, NUL
 * terminated); path "/" on a non-empty base path gives the base path itself. Returns the
 * length, or -ENAMETOOLONG when it does not fit. */
SIZEUP_MUST_USE int url_join_path(const struct url *u, const char *path, char *out, size_t cap);

#endif
