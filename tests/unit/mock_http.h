/* A scripted HTTP/1.1 server on 127.0.0.1 for the Kubernetes client's unit tests: it answers
 * each request with the next scripted response and records what it received. One thread, one
 * connection at a time (the client under test uses one easy handle). Test-only code. */

#ifndef SIZEUP_TESTS_MOCK_HTTP_H
#define SIZEUP_TESTS_MOCK_HTTP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MOCK_MAX 64

struct mock_resp {
    int code;
    const char *headers; /* extra header lines, each ending "\r\n"; may be NULL */
    const char *body;    /* may be NULL */
    /* > 0: stream the body without Content-Length in pieces of this many bytes, 20 ms apart,
     * then close (a watch). */
    int chunk;
    int hang_ms; /* wait this long before answering (a slow or dead server) */
};

struct mock {
    int fd;
    int port;
    pthread_t th;
    const struct mock_resp *script;
    int n_script;
    pthread_mutex_t mu;
    int nreq;
    int conns;
    char line[MOCK_MAX][512];  /* "GET /path?query" */
    char auth[MOCK_MAX][256];  /* Authorization header value */
    char ctype[MOCK_MAX][128]; /* Content-Type header value */
    char body[MOCK_MAX][2048];
    atomic_int stop;
};

static void mock_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int mock_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void mock_header(const char *hdrs, const char *name, char *out, size_t len)
{
    const char *p = hdrs;
    size_t nl = strlen(name);
    out[0] = '\0';
    while ((p = strstr(p, "\r\n")) != NULL) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1, *e;
            while (*v == ' ')
                v++;
            e = strstr(v, "\r\n");
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= len)
                n = len - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return;
        }
    }
}

/* Serves requests on one connection until it closes. */
static void mock_conn(struct mock *m, int cfd)
{
    static char buf[1 << 20];
    size_t have = 0;
    for (;;) {
        char *end;
        while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
            struct pollfd pf = {cfd, POLLIN, 0};
            if (atomic_load(&m->stop))
                return;
            if (poll(&pf, 1, 100) <= 0)
                continue;
            ssize_t r = recv(cfd, buf + have, sizeof(buf) - 1 - have, 0);
            if (r <= 0)
                return;
            have += (size_t)r;
        }
        size_t hlen = (size_t)(end - buf) + 4;
        char hdrs[8192], cl[32];
        size_t hn = hlen < sizeof(hdrs) ? hlen : sizeof(hdrs) - 1;
        memcpy(hdrs, buf, hn);
        hdrs[hn] = '\0';
        mock_header(hdrs, "Content-Length", cl, sizeof(cl));
        size_t blen = cl[0] ? strtoul(cl, NULL, 10) : 0;
        while (have < hlen + blen) {
            ssize_t r = recv(cfd, buf + have, sizeof(buf) - 1 - have, 0);
            if (r <= 0)
                return;
            have += (size_t)r;
        }
        pthread_mutex_lock(&m->mu);
        int i = m->nreq < MOCK_MAX ? m->nreq : MOCK_MAX - 1;
        char *sp = strchr(hdrs, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
        snprintf(m->line[i], sizeof(m->line[i]), "%.*s", sp2 ? (int)(sp2 - hdrs) : 0, hdrs);
        mock_header(hdrs, "Authorization", m->auth[i], sizeof(m->auth[i]));
        mock_header(hdrs, "Content-Type", m->ctype[i], sizeof(m->ctype[i]));
        size_t bn = blen < sizeof(m->body[i]) - 1 ? blen : sizeof(m->body[i]) - 1;
        memcpy(m->body[i], buf + hlen, bn);
        m->body[i][bn] = '\0';
        int idx = m->nreq++;
        pthread_mutex_unlock(&m->mu);
        memmove(buf, buf + hlen + blen, have - hlen - blen);
        have -= hlen + blen;

        static const struct mock_resp fallback = {500, NULL, "{\"kind\":\"Status\",\"code\":500}",
                                                  0, 0};
        const struct mock_resp *r = idx < m->n_script ? &m->script[idx] : &fallback;
        if (r->hang_ms) {
            for (int t = 0; t < r->hang_ms && !atomic_load(&m->stop); t += 20)
                mock_sleep_ms(20);
        }
        const char *body = r->body ? r->body : "";
        char head[1024];
        if (r->chunk > 0) {
            snprintf(head, sizeof(head),
                     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%sConnection: close\r\n"
                     "\r\n",
                     r->code, r->headers ? r->headers : "");
            if (mock_write_all(cfd, head, strlen(head)))
                return;
            size_t n = strlen(body);
            for (size_t off = 0; off < n; off += (size_t)r->chunk) {
                size_t k = n - off < (size_t)r->chunk ? n - off : (size_t)r->chunk;
                if (mock_write_all(cfd, body + off, k))
                    return;
                mock_sleep_ms(20);
            }
            return;
        }
        snprintf(head, sizeof(head),
                 "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n",
                 r->code, r->headers ? r->headers : "", strlen(body));
        if (mock_write_all(cfd, head, strlen(head)) || mock_write_all(cfd, body, strlen(body)))
            return;
    }
}

static void *mock_main(void *ud)
{
    struct mock *m = ud;
    while (!atomic_load(&m->stop)) {
        struct pollfd pf = {m->fd, POLLIN, 0};
        if (poll(&pf, 1, 100) <= 0)
            continue;
        int cfd = accept(m->fd, NULL, NULL);
        if (cfd < 0)
            continue;
        pthread_mutex_lock(&m->mu);
        m->conns++;
        pthread_mutex_unlock(&m->mu);
        mock_conn(m, cfd);
        close(cfd);
    }
    return NULL;
}

static int mock_start(struct mock *m, const struct mock_resp *script, int n)
{
    struct sockaddr_in a = {0};
    socklen_t al = sizeof(a);
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
    m->script = script;
    m->n_script = n;
    m->fd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (m->fd < 0 || bind(m->fd, (struct sockaddr *)&a, sizeof(a)) || listen(m->fd, 8) ||
        getsockname(m->fd, (struct sockaddr *)&a, &al))
        return -1;
    m->port = ntohs(a.sin_port);
    return pthread_create(&m->th, NULL, mock_main, m) ? -1 : 0;
}

static void mock_stop(struct mock *m)
{
    atomic_store(&m->stop, 1);
    pthread_join(m->th, NULL);
    close(m->fd);
    pthread_mutex_destroy(&m->mu);
}

#endif
