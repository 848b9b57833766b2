#include "operator/admin.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "core/log.h"

struct admin {
    struct lws_context *ctx;
    struct metrics *m;  /* borrowed; NULL: no health or metrics paths */
    progress_srv_t *ps; /* borrowed; NULL: no progress page */
    struct lws_protocols protocols[3];
    struct lws_protocol_vhost_options pvo_default, pvo;
    pthread_t thread;
    atomic_int stop;
    int port;
};

/* One HTTP transaction: the rendered response, written when the socket is writable. */
struct session {
    unsigned char *buf; /* owned: LWS_PRE bytes of headroom, then the body */
    size_t len;
};

static void session_reset(struct session *s)
{
    free(s->buf);
    s->buf = NULL;
    s->len = 0;
}

/* Builds the body for path into s. Fills *code and *ctype. */
static int build_response(struct admin *a, struct lws *wsi, const char *path, struct session *s,
                          int *code, const char **ctype)
{
    char small[128], err[ERR_LEN] = "";
    char *text = NULL;
    const char *page = NULL;
    size_t len = 0;
    int owned = 0;

    *ctype = "text/plain; charset=utf-8";
    if (progress_srv_http(a->ps, wsi, path, code, ctype, &page, &len, &owned)) {
        text = (char *)page; /* static unless owned */
    } else if (!a->m) {
        *code = 404;
        snprintf(small, sizeof(small), "not found: try / for the live progress\n");
    } else if (strcmp(path, "/metrics") == 0) {
        if (metrics_render(a->m, &text, &len, err) == 0) {
            *code = 200;
            *ctype = "text/plain; version=0.0.4; charset=utf-8";
            owned = 1;
        } else {
            *code = 500;
            snprintf(small, sizeof(small), "%s\n", err);
        }
    } else if (strcmp(path, "/healthz") == 0) {
        int64_t age = metrics_heartbeat_age_ms(a->m);
        *code = age <= ADMIN_STALE_MS ? 200 : 503;
        if (*code == 200)
            snprintf(small, sizeof(small), "ok\n");
        else
            snprintf(small, sizeof(small), "watch loop stalled\n");
    } else if (strcmp(path, "/readyz") == 0) {
        *code = atomic_load(&a->m->ready) ? 200 : 503;
        snprintf(small, sizeof(small), "%s\n", *code == 200 ? "ok" : "cache not synced");
    } else {
        *code = 404;
        snprintf(small, sizeof(small), "not found: try /healthz, /readyz or /metrics\n");
    }
    if (!owned && !page) {
        text = small;
        len = strlen(small);
    }
    s->buf = malloc(LWS_PRE + len + 1);
    if (!s->buf) {
        if (owned)
            free(text);
        return -ENOMEM;
    }
    memcpy(s->buf + LWS_PRE, text, len);
    s->len = len;
    if (owned)
        free(text);
    return 0;
}

static int callback_http(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                         size_t len)
{
    struct session *s = user;
    struct admin *a = lws_context_user(lws_get_context(wsi));
    unsigned char hdr[LWS_PRE + 512], *start = hdr + LWS_PRE, *p = start, *end = hdr + sizeof(hdr);

    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        char path[128];
        int code;
        const char *ctype;
        /* lws hands over the URI path without the query string. */
        snprintf(path, sizeof(path), "%.*s", (int)(len < 127 ? len : 127), (const char *)in);
        session_reset(s);
        if (build_response(a, wsi, path, s, &code, &ctype) < 0)
            return -1;
        if (lws_add_http_common_headers(wsi, (unsigned)code, ctype, s->len, &p, end) ||
            lws_finalize_write_http_header(wsi, start, &p, end))
            return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if (!s || !s->buf)
            break;
        if (lws_write(wsi, s->buf + LWS_PRE, s->len, LWS_WRITE_HTTP_FINAL) != (int)s->len) {
            session_reset(s);
            return -1;
        }
        session_reset(s);
        if (lws_http_transaction_completed(wsi))
            return -1;
        return 0;
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        if (s)
            session_reset(s);
        break;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static void lws_log_emit(int level, const char *line)
{
    char msg[256];
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    snprintf(msg, sizeof(msg), "%.*s", (int)n, line);
    for (char *p = msg; *p; p++)
        if (*p == '"' || (unsigned char)*p < 0x20)
            *p = '\'';
    if (level & LLL_ERR)
        log_error("admin.lws", "msg=\"%s\"", msg);
    else
        log_warn("admin.lws", "msg=\"%s\"", msg);
}

int admin_parse_addr(const char *addr, char *host, size_t hostlen, int *port, char *err)
{
    const char *colon, *h = addr;
    size_t hl;

    if (!addr || !*addr)
        return err_set(err, -EINVAL, "admin address is empty (expected HOST:PORT or :PORT)");
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':')
            return err_set(err, -EINVAL, "admin address '%.64s': expected [V6]:PORT", addr);
        h = addr + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon)
            return err_set(err, -EINVAL, "admin address '%.64s': expected HOST:PORT or :PORT",
                           addr);
        hl = (size_t)(colon - addr);
    }
    if (hl >= hostlen)
        return err_set(err, -EINVAL, "admin address '%.64s': host too long", addr);
    long n = 0;
    const char *q = colon + 1;
    if (!*q)
        return err_set(err, -EINVAL, "admin address '%.64s': no port", addr);
    for (; *q; q++) {
        if (*q < '0' || *q > '9' || n > 65535)
            return err_set(err, -EINVAL, "admin address '%.64s': bad port", addr);
        n = n * 10 + (*q - '0');
    }
    if (n > 65535)
        return err_set(err, -EINVAL, "admin address '%.64s': port out of range", addr);
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (int)n;
    return 0;
}

/* Binds host:port once with a plain socket and lets it go, so the usual failure (address in
 * use, no such address) is reported with its cause before lws is involved: lws 4.1 leaks a
 * little of its context when its vhost fails to bind. */
static int probe_bind(const char *host, int port, char *err)
{
    struct addrinfo hints, *res = NULL;
    char serv[8], ebuf[128];
    int rc, fd = -1, one = 1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(serv, sizeof(serv), "%d", port);
    rc = getaddrinfo(host[0] ? host : NULL, serv, &hints, &res);
    if (rc)
        return err_set(err, -EADDRNOTAVAIL, "admin: cannot resolve '%s': %s", host,
                       gai_strerror(rc));
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = err_set(err, -errno, "admin: socket: %s", err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, res->ai_addr, res->ai_addrlen) < 0) {
        int e = errno;
        rc = err_set(err, -e, "admin: cannot listen on %s:%d: %s", host[0] ? host : "*", port,
                     err_str(e, ebuf, sizeof(ebuf)));
        goto out;
    }
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}

static void *admin_thread(void *arg)
{
    struct admin *a = arg;
    sigset_t all;

    /* Signals belong to the operator's main thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    while (!atomic_load(&a->stop))
        if (lws_service(a->ctx, 0) < 0)
            break;
    return NULL;
}

int admin_start(const char *addr, struct metrics *m, progress_srv_t *ps, admin_t **out, char *err)
{
    struct lws_context_creation_info info;
    char host[64];
    int port, rc;
    struct admin *a = NULL;

    *out = NULL;
    rc = admin_parse_addr(addr, host, sizeof(host), &port, err);
    if (rc)
        return rc;
    rc = probe_bind(host, port, err);
    if (rc)
        return rc;
    a = calloc(1, sizeof(*a));
    if (!a)
        return err_set(err, -ENOMEM, "out of memory");
    a->m = m;
    a->ps = ps;
    atomic_init(&a->stop, 0);
    a->protocols[0] =
        (struct lws_protocols){"http", callback_http, sizeof(struct session), 0, 0, NULL, 0};
    if (ps) {
        progress_srv_protocol(ps, &a->protocols[1]);
        /* A WebSocket upgrade that names no subprotocol (a browser's, most clients') goes to
         * the progress protocol, which accepts it only on /progress. */
        a->pvo_default.name = "default";
        a->pvo_default.value = "";
        a->pvo.name = PROGRESS_PROTOCOL;
        a->pvo.options = &a->pvo_default;
        a->pvo.value = "";
    }
    lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_emit);
    memset(&info, 0, sizeof(info));
    info.port = port;
    info.iface = host[0] ? host : NULL;
    info.protocols = a->protocols;
    if (ps)
        info.pvo = &a->pvo;
    info.user = a;
    info.server_string = "sizeup";
    /* lws sizes its fd tables from the process limit unless told; the admin server holds a
     * handful of scrapers, and the operator's idle memory budget is small. */
    info.fd_limit_per_thread = 64;
    info.count_threads = 1;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6 * (host[0] && !strchr(host, ':'));
    a->ctx = lws_create_context(&info);
    if (!a->ctx) {
        rc = err_set(err, -EADDRNOTAVAIL, "admin: cannot listen on %s", addr);
        goto out;
    }
    a->port = lws_get_vhost_listen_port(lws_get_vhost_by_name(a->ctx, "default"));
    if (a->port <= 0)
        a->port = port;
    rc = pthread_create(&a->thread, NULL, admin_thread, a);
    if (rc) {
        rc = err_set(err, -rc, "admin: cannot start thread");
        goto out;
    }
    log_info("admin.listen", "addr=%s port=%d", host[0] ? host : "*", a->port);
    *out = a;
out:
    if (rc) {
        if (a && a->ctx)
            lws_context_destroy(a->ctx);
        free(a);
    }
    return rc;
}

int admin_port(const admin_t *a)
{
    return a ? a->port : -1;
}

void admin_stop(admin_t *a)
{
    if (!a)
        return;
    atomic_store(&a->stop, 1);
    lws_cancel_service(a->ctx);
    pthread_join(a->thread, NULL);
    lws_context_destroy(a->ctx);
    free(a);
}
