#include "profile/url.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static int host_char_ok(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* Path bytes allowed in a base path: printable ASCII without space; '?' and '#' are rejected by
 * the caller with a more specific message. */
static int path_char_ok(char c)
{
    return (unsigned char)c > 0x20 && (unsigned char)c < 0x7f;
}

static int parse_port(const char *p, size_t n, uint16_t *port, char *err)
{
    unsigned long v = 0;

    if (n == 0)
        return err_set(err, -EINVAL, "empty port after ':'");
    if (n > 5)
        return err_set(err, -EINVAL, "port '%.*s' is not a number from 1 to 65535", (int)n, p);
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return err_set(err, -EINVAL, "port '%.*s' is not a number from 1 to 65535", (int)n, p);
        v = v * 10 + (unsigned long)(p[i] - '0');
    }
    if (v < 1 || v > 65535)
        return err_set(err, -EINVAL, "port '%.*s' is not a number from 1 to 65535", (int)n, p);
    *port = (uint16_t)v;
    return 0;
}

/* A parser, long on purpose: the URL read left to right (scheme, authority, host, port, path),
 * each part checked where it ends so the error can name it. */
int url_parse(const char *s, struct url *u, char *err)
{
    const char *p, *auth, *auth_end, *host, *host_end, *port_s = NULL;
    size_t len, port_n = 0;
    int rc = 0;

    memset(u, 0, sizeof(*u));
    if (!s || !*s)
        return err_set(err, -EINVAL, "empty URL");
    len = strnlen(s, URL_MAX + 1);
    if (len > URL_MAX)
        return err_set(err, -EINVAL, "URL longer than %d bytes", URL_MAX);
    if (strncasecmp(s, "http://", 7) == 0) {
        p = s + 7;
    } else if (strncasecmp(s, "https://", 8) == 0) {
        p = s + 8;
        u->tls = 1;
    } else {
        return err_set(err, -EINVAL, "URL '%.64s' must start with http:// or https://", s);
    }
    auth = p;
    auth_end = auth + strcspn(auth, "/?#");
    if (memchr(auth, '@', (size_t)(auth_end - auth)))
        return err_set(err, -EINVAL, "URL '%.64s': user info (user@host) is not supported", s);

    if (*auth == '[') {
        host = auth + 1;
        host_end = memchr(host, ']', (size_t)(auth_end - host));
        if (!host_end)
            return err_set(err, -EINVAL, "URL '%.64s': '[' without ']' around an IPv6 address", s);
        p = host_end + 1;
        if (p < auth_end && *p != ':')
            return err_set(err, -EINVAL, "URL '%.64s': unexpected '%c' after ']'", s, *p);
    } else {
        host = auth;
        host_end = memchr(auth, ':', (size_t)(auth_end - auth));
        if (!host_end)
            host_end = auth_end;
        p = host_end;
    }
    if (p < auth_end) { /* p points at ':' */
        port_s = p + 1;
        port_n = (size_t)(auth_end - port_s);
    }
    size_t hn = (size_t)(host_end - host);
    if (hn == 0)
        return err_set(err, -EINVAL, "URL '%.64s' has no host", s);
    if (hn >= URL_HOST_MAX)
        return err_set(err, -EINVAL, "URL host longer than %d bytes", URL_HOST_MAX - 1);
    memcpy(u->host, host, hn);
    u->host[hn] = '\0';

    if (*auth == '[') {
        struct in6_addr a6;
        if (inet_pton(AF_INET6, u->host, &a6) != 1)
            return err_set(err, -EINVAL, "URL host '[%s]' is not an IPv6 address", u->host);
        u->host_is_ip = 1;
    } else {
        struct in_addr a4;
        for (size_t i = 0; i < hn; i++)
            if (!host_char_ok(u->host[i]))
                return err_set(err, -EINVAL, "URL host '%s' has a bad character '%c'", u->host,
                               u->host[i]);
        u->host_is_ip = inet_pton(AF_INET, u->host, &a4) == 1;
    }

    u->port = u->tls ? 443 : 80;
    if (port_s) {
        rc = parse_port(port_s, port_n, &u->port, err);
        if (rc)
            return rc;
    }
    int default_port = u->port == (u->tls ? 443 : 80);
    const char *lb = *auth == '[' ? "[" : "", *rb = *auth == '[' ? "]" : "";
    if (default_port)
        snprintf(u->authority, sizeof(u->authority), "%s%s%s", lb, u->host, rb);
    else
        snprintf(u->authority, sizeof(u->authority), "%s%s%s:%u", lb, u->host, rb,
                 (unsigned)u->port);

    p = auth_end;
    size_t pn = strlen(p);
    if (pn && (*p == '?' || memchr(p, '?', pn)))
        return err_set(err, -EINVAL,
                       "URL '%.64s': a query string belongs in the profile's request paths", s);
    if (pn && memchr(p, '#', pn))
        return err_set(err, -EINVAL, "URL '%.64s': fragments (#...) are not sent to servers", s);
    for (size_t i = 0; i < pn; i++)
        if (!path_char_ok(p[i]))
            return err_set(err, -EINVAL, "URL '%.64s': control character or space in the path", s);
    while (pn > 0 && p[pn - 1] == '/')
        pn--;
    if (pn >= URL_PATH_MAX)
        return err_set(err, -EINVAL, "URL path longer than %d bytes", URL_PATH_MAX - 1);
    memcpy(u->base_path, p, pn);
    u->base_path[pn] = '\0';
    return 0;
}

/* Does a TCP connect to ai succeed within timeout_ms? Used only to choose among several
 * addresses of one name before a run, never during it. */
static int probe(const struct addrinfo *ai, int timeout_ms)
{
    int ok = 0;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        ok = 1;
    } else if (errno == EINPROGRESS) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        int e = 0;
        socklen_t len = sizeof(e);
        if (poll(&pfd, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 &&
            e == 0)
            ok = 1;
    }
    close(fd);
    return ok;
}

int url_resolve(const struct url *u, struct url_addr *a, char *err)
{
    struct addrinfo hints, *res = NULL, *pick = NULL;
    char port[8];
    int rc;

    memset(a, 0, sizeof(*a));
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = u->host_is_ip ? AI_NUMERICHOST : AI_ADDRCONFIG;
    snprintf(port, sizeof(port), "%u", (unsigned)u->port);
    rc = getaddrinfo(u->host, port, &hints, &res);
    if (rc != 0 && !u->host_is_ip) {
        /* AI_ADDRCONFIG hides ::1 and 127.0.0.1 on hosts whose only interface is loopback. */
        hints.ai_flags = 0;
        rc = getaddrinfo(u->host, port, &hints, &res);
    }
    if (rc != 0)
        return err_set(err, -EHOSTUNREACH, "cannot resolve '%s': %s", u->host, gai_strerror(rc));
    /* A name with several addresses ("localhost": ::1 and 127.0.0.1) gets the first one that
     * accepts a connection, as a browser's fallback would; when none does, the first, so the
     * run reports the refusals. */
    for (struct addrinfo *ai = res; ai && res->ai_next; ai = ai->ai_next) {
        if (ai->ai_addrlen <= sizeof(a->ss) && probe(ai, 500)) {
            pick = ai;
            break;
        }
    }
    if (!pick)
        pick = res;
    if (!pick || pick->ai_addrlen > sizeof(a->ss)) {
        freeaddrinfo(res);
        return err_set(err, -EHOSTUNREACH, "cannot resolve '%s': no usable address", u->host);
    }
    a->family = pick->ai_family;
    a->len = pick->ai_addrlen;
    memcpy(&a->ss, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

int url_join_path(const struct url *u, const char *path, char *out, size_t cap)
{
    /* "/" on a base with a path is the base itself: `--url http://h/api/health` with the
     * default profile (GET /) requests /api/health, as wrk or curl would. */
    if (u->base_path[0] && strcmp(path, "/") == 0)
        path = "";
    int n = snprintf(out, cap, "%s%s", u->base_path, path);
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    return n;
}
