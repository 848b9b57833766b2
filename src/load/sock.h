#ifndef SIZEUP_LOAD_SOCK_H
#define SIZEUP_LOAD_SOCK_H

/* Non-blocking client sockets behind a tiny vtable (wrk's design): plain TCP and TLS expose the
 * same connect/handshake/read/write/close, so the engine's hot path has no "if TLS" branches.
 * Every call returns a SOCK_* status; on SOCK_ERROR, s->errclass says which load_errclass. */

#include <stddef.h>

#include <openssl/ssl.h>

#include "core/err.h"
#include "profile/url.h"

enum sock_status {
    SOCK_OK = 0,     /* done (n bytes for read/write) */
    SOCK_WANT_READ,  /* retry when the fd is readable */
    SOCK_WANT_WRITE, /* retry when the fd is writable */
    SOCK_EOF,        /* the peer closed cleanly (read only) */
    SOCK_ERROR       /* s->errclass and s->sys_errno say what */
};

struct sock;

struct sock_ops {
    /* Completes the protocol handshake after TCP connected (no-op for plain). */
    int (*handshake)(struct sock *s);
    int (*read)(struct sock *s, char *buf, size_t len, size_t *n /* OUT */);
    int (*write)(struct sock *s, const char *buf, size_t len, size_t *n /* OUT */);
    /* Closes the fd and frees per-connection state; safe on a closed socket. */
    void (*close)(struct sock *s);
    /* A read shorter than asked means the kernel buffer is drained (plain TCP); TLS may hold
     * decrypted bytes the fd no longer signals, so its reads go on until WANT_READ. */
    int short_read_drains;
};

struct sock {
    int fd; /* -1 when closed */
    SSL *ssl;
    const struct sock_ops *ops;
    int errclass;  /* a load_errclass, valid after SOCK_ERROR */
    int sys_errno; /* errno behind it, 0 when none */
};

/* The client-side TLS settings shared read-only by every load thread. */
struct sock_tls {
    SSL_CTX *ctx;
    char host[URL_HOST_MAX]; /* for SNI and verification */
    int host_is_ip;
    int verify;
};

/* Creates the TLS context: TLS 1.2+, peer verification against the system CAs (or the file in
 * SSL_CERT_FILE) unless insecure, SNI from the URL's host. Returns 0 or -EIO (err says why).
 * Free with sock_tls_free. */
int sock_tls_init(struct sock_tls *t /* OUT */, const struct url *u, int insecure, char *err);
void sock_tls_free(struct sock_tls *t);

/* Starts a non-blocking connect to a (borrowed) with TCP_NODELAY; tls may be NULL for plain.
 * Returns SOCK_OK (connected at once), SOCK_WANT_WRITE (in progress: wait for writable, then
 * call sock_connect_finish) or SOCK_ERROR (errclass: connect_refused, too_many_open_files,
 * other). */
int sock_connect(struct sock *s /* OUT */, const struct url_addr *a, const struct sock_tls *tls);

/* The load_errclass for a system error number (ECONNREFUSED, ECONNRESET, EMFILE ...). */
int sock_errclass(int sys_errno);

/* After the fd became writable: checks the connect's outcome. SOCK_OK or SOCK_ERROR. */
int sock_connect_finish(struct sock *s);

#endif
