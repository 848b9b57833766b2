#include "load/sock.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "load/result.h"

static int classify_errno(int e)
{
    switch (e) {
    case ECONNREFUSED:
        return LOAD_ERR_CONNECT_REFUSED;
    case ETIMEDOUT:
        return LOAD_ERR_CONNECT_TIMEOUT;
    case ECONNRESET:
    case EPIPE:
    case ECONNABORTED:
        return LOAD_ERR_RESET;
    case EMFILE:
    case ENFILE:
        return LOAD_ERR_NOFILE;
    default:
        return LOAD_ERR_OTHER;
    }
}

static int sock_fail(struct sock *s, int e)
{
    s->sys_errno = e;
    s->errclass = classify_errno(e);
    return SOCK_ERROR;
}

/* ---- plain TCP ---- */

static int plain_handshake(struct sock *s)
{
    (void)s;
    return SOCK_OK;
}

static int plain_read(struct sock *s, char *buf, size_t len, size_t *n)
{
    ssize_t r = read(s->fd, buf, len);
    if (r > 0) {
        *n = (size_t)r;
        return SOCK_OK;
    }
    *n = 0;
    if (r == 0)
        return SOCK_EOF;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return SOCK_WANT_READ;
    return sock_fail(s, errno);
}

static int plain_write(struct sock *s, const char *buf, size_t len, size_t *n)
{
    /* MSG_NOSIGNAL: a peer that closed must give EPIPE, not kill the process. */
    ssize_t r = send(s->fd, buf, len, MSG_NOSIGNAL);
    if (r >= 0) {
        *n = (size_t)r;
        return SOCK_OK;
    }
    *n = 0;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return SOCK_WANT_WRITE;
    return sock_fail(s, errno);
}

static void plain_close(struct sock *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

static const struct sock_ops plain_ops = {plain_handshake, plain_read, plain_write, plain_close, 1};

/* ---- TLS ---- */

/* Maps an OpenSSL failure to a status; ret is the return of the SSL_* call. */
static int tls_status(struct sock *s, int ret, int in_handshake)
{
    int e = SSL_get_error(s->ssl, ret);
    int saved = errno;
    switch (e) {
    case SSL_ERROR_WANT_READ:
        return SOCK_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        return SOCK_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
        return SOCK_EOF;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        if (saved == 0 || saved == EAGAIN)
            return in_handshake ? sock_fail(s, ECONNRESET) : SOCK_EOF;
        return sock_fail(s, saved);
    default:
        ERR_clear_error();
        s->sys_errno = 0;
        s->errclass = LOAD_ERR_TLS;
        return SOCK_ERROR;
    }
}

static int tls_handshake(struct sock *s)
{
    ERR_clear_error();
    int r = SSL_connect(s->ssl);
    if (r == 1)
        return SOCK_OK;
    return tls_status(s, r, 1);
}

static int tls_read(struct sock *s, char *buf, size_t len, size_t *n)
{
    ERR_clear_error();
    int r = SSL_read_ex(s->ssl, buf, len, n);
    if (r == 1)
        return SOCK_OK;
    *n = 0;
    return tls_status(s, r, 0);
}

static int tls_write(struct sock *s, const char *buf, size_t len, size_t *n)
{
    ERR_clear_error();
    int r = SSL_write_ex(s->ssl, buf, len, n);
    if (r == 1)
        return SOCK_OK;
    *n = 0;
    return tls_status(s, r, 0);
}

static void tls_close(struct sock *s)
{
    if (s->ssl)
        SSL_free(s->ssl);
    s->ssl = NULL;
    plain_close(s);
}

static const struct sock_ops tls_ops = {tls_handshake, tls_read, tls_write, tls_close, 0};

int sock_tls_init(struct sock_tls *t, const struct url *u, int insecure, char *err)
{
    memset(t, 0, sizeof(*t));
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (!t->ctx)
        return err_set(err, -EIO, "TLS: cannot create a context");
    SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
    /* Servers that close without close_notify are common; that close ends a body like a
     * plain close does, it is not a TLS failure. */
    SSL_CTX_set_options(t->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
    t->verify = !insecure;
    if (t->verify) {
        if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
            sock_tls_free(t);
            return err_set(err, -EIO, "TLS: cannot load the system CA certificates");
        }
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
    } else {
        SSL_CTX_set_verify(t->ctx, SSL_VERIFY_NONE, NULL);
    }
    snprintf(t->host, sizeof(t->host), "%s", u->host);
    t->host_is_ip = u->host_is_ip;
    return 0;
}

void sock_tls_free(struct sock_tls *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    memset(t, 0, sizeof(*t));
}

static int tls_attach(struct sock *s, const struct sock_tls *tls)
{
    s->ssl = SSL_new(tls->ctx);
    if (!s->ssl)
        return -1;
    if (SSL_set_fd(s->ssl, s->fd) != 1)
        return -1;
    if (!tls->host_is_ip && SSL_set_tlsext_host_name(s->ssl, tls->host) != 1)
        return -1;
    if (tls->verify) {
        if (tls->host_is_ip) {
            X509_VERIFY_PARAM *vp = SSL_get0_param(s->ssl);
            if (X509_VERIFY_PARAM_set1_ip_asc(vp, tls->host) != 1)
                return -1;
        } else if (SSL_set1_host(s->ssl, tls->host) != 1) {
            return -1;
        }
    }
    SSL_set_connect_state(s->ssl);
    return 0;
}

int sock_connect(struct sock *s, const struct url_addr *a, const struct sock_tls *tls)
{
    int one = 1;

    s->ssl = NULL;
    s->errclass = 0;
    s->sys_errno = 0;
    s->ops = tls ? &tls_ops : &plain_ops;
    s->fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (s->fd < 0)
        return sock_fail(s, errno);
    setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (tls && tls_attach(s, tls) != 0) {
        ERR_clear_error();
        s->ops->close(s);
        s->errclass = LOAD_ERR_TLS;
        return SOCK_ERROR;
    }
    if (connect(s->fd, (const struct sockaddr *)&a->ss, a->len) == 0)
        return SOCK_OK;
    if (errno == EINPROGRESS || errno == EINTR)
        return SOCK_WANT_WRITE;
    int e = errno;
    s->ops->close(s);
    return sock_fail(s, e);
}

int sock_connect_finish(struct sock *s)
{
    int e = 0;
    socklen_t len = sizeof(e);

    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
        e = errno;
    if (e == 0)
        return SOCK_OK;
    return sock_fail(s, e);
}
