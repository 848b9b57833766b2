/* The worker mode of `sizeup loadtest` (see loadtest_worker.h): a share of one load from a shared
 * start, and the run result served once to the operator that merges the shares. */

#include "cli/loadtest_worker.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/clock.h"
#include "core/jb.h"
#include "load/report.h"
#include "load/spread.h"

#define REQ_MAX    8192 /* the operator's GET is a few hundred bytes */
#define IO_WAIT_MS 5000 /* one client's request and response, each */
#define POLL_MS    200

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_share(struct lt_worker *w, const char *val, char *err)
{
    unsigned long k, n;
    char *end = NULL, *end2 = NULL;

    errno = 0;
    k = strtoul(val, &end, 10);
    if (errno || end == val || *end != '/' || val[0] == '-')
        return err_set(err, -EINVAL, "--share: '%s' is not K/N (e.g. 0/3)", val);
    n = strtoul(end + 1, &end2, 10);
    if (errno || end2 == end + 1 || *end2 || end[1] == '-')
        return err_set(err, -EINVAL, "--share: '%s' is not K/N (e.g. 0/3)", val);
    if (n == 0 || n > LT_WORKER_MAX_SHARES || k >= n)
        return err_set(err, -EINVAL, "--share: '%s' needs 0 <= K < N <= %d", val,
                       LT_WORKER_MAX_SHARES);
    w->k = (unsigned)k;
    w->n = (unsigned)n;
    w->share_set = true;
    return 0;
}

int lt_worker_set(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    struct lt_worker *w = dst;

    if (strcmp(f->name, "share") == 0)
        return parse_share(w, val, err);
    if (strcmp(f->name, "start-at") == 0) {
        char *end = NULL;
        errno = 0;
        double t = strtod(val, &end);
        if (errno || end == val || *end || !(t > 0) || !isfinite(t))
            return err_set(err, -EINVAL, "--start-at: '%s' is not a time in Unix seconds", val);
        w->start_at = t;
        w->start_set = true;
        return 0;
    }
    if (strcmp(f->name, "serve-result") == 0) {
        if (!strchr(val, ':'))
            return err_set(err, -EINVAL, "--serve-result: '%s' is not [HOST]:PORT", val);
        w->serve = val;
        return 0;
    }
    if (!*val)
        return err_set(err, -EINVAL, "--profile-env: empty variable name");
    w->profile_env = val;
    return 0;
}

int lt_worker_profile(const struct lt_worker *w, struct profile *p, char *err)
{
    const char *text = getenv(w->profile_env);
    char source[128];

    if (!text)
        return err_set(err, -ENOENT, "--profile-env: %s is not set", w->profile_env);
    snprintf(source, sizeof(source), "$%s", w->profile_env);
    return profile_load_buffer(text, strlen(text), source, p, err);
}

int lt_worker_apply(struct lt_worker *w, struct profile *p, struct load_opts *o, char *err)
{
    unsigned k = w->share_set ? w->k : 0, n = w->share_set ? w->n : 1;

    /* The one rule for a share of a load, whether it goes from N pods or to N targets. */
    return load_share_apply(p, k, n, &o->seed, &w->offset_s, err);
}

int lt_worker_wait_start(struct lt_worker *w, volatile sig_atomic_t *stop, char *err)
{
    double due = w->start_set ? w->start_at + w->offset_s : wall_now();

    if (due - wall_now() > 3600)
        return err_set(err, -EINVAL, "--start-at is more than an hour away");
    for (;;) {
        double left = due - wall_now();
        if (stop && *stop)
            return err_set(err, -ECANCELED, "stopped before the shared start");
        if (left <= 0)
            break;
        double nap = left < 0.05 ? left : 0.05;
        clock_sleep_us((int64_t)(nap * 1e6));
    }
    w->started_at = wall_now();
    w->late_s = w->start_set ? w->started_at - due : 0;
    if (w->late_s < 0)
        w->late_s = 0;
    return 0;
}

/* The response bytes: headers and the JSON document. Owned string (free()), NULL on no memory. */
static char *render(const struct lt_worker *w, const struct load_result *r, size_t *len)
{
    struct jb b = JB_INIT;
    cJSON *doc = jb_new(&b);
    cJSON *res = report_json_mergeable(r);
    char *body = NULL, *out = NULL;

    if (!doc || !res)
        goto out;
    jb_num(&b, doc, "worker", w->k);
    jb_num(&b, doc, "workers", w->share_set ? w->n : 1);
    jb_num(&b, doc, "start_at", w->start_set ? w->start_at + w->offset_s : 0);
    jb_num(&b, doc, "started_at", w->started_at);
    jb_num(&b, doc, "late_s", w->late_s);
    jb_put(&b, doc, "result", res);
    res = NULL;
    if (jb_done(&b, &doc, "the worker's result", NULL) != 0)
        goto out;
    body = cJSON_PrintUnformatted(doc);
    if (!body)
        goto out;
    size_t blen = strlen(body), cap = blen + 160;
    out = malloc(cap);
    if (!out)
        goto out;
    int h = snprintf(out, cap,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     "%zu\r\nConnection: close\r\n\r\n",
                     blen);
    memcpy(out + h, body, blen);
    *len = (size_t)h + blen;
out:
    cJSON_Delete(res);
    cJSON_Delete(doc);
    free(body);
    return out;
}

static int listen_on(const char *addr, char *err)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    struct addrinfo hints, *ai = NULL;
    size_t hl = (size_t)(colon - addr);
    int fd = -1, one = 1, rc;

    if (hl >= sizeof(host))
        return err_set(err, -EINVAL, "--serve-result: host too long");
    memcpy(host, addr, hl);
    host[hl] = '\0';
    /* "[::]:9090" names an IPv6 host in brackets. */
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (rc != 0)
        return err_set(err, -EINVAL, "--serve-result %s: %s", addr, gai_strerror(rc));
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 8) != 0) {
        char eb[128];
        rc = err_set(err, -errno, "--serve-result %s: %s", addr, err_str(errno, eb, sizeof(eb)));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return rc;
    }
    freeaddrinfo(ai);
    return fd;
}

/* Reads one request head from c within IO_WAIT_MS. Returns 1 for GET of the result path, 0 for
 * anything else, -1 for a broken or slow client. */
static int read_request(int c)
{
    char buf[REQ_MAX + 1];
    size_t n = 0;

    while (n < REQ_MAX) {
        struct pollfd p = {c, POLLIN, 0};
        if (poll(&p, 1, IO_WAIT_MS) <= 0)
            return -1;
        ssize_t k = read(c, buf + n, REQ_MAX - n);
        if (k <= 0)
            return -1;
        n += (size_t)k;
        buf[n] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            return strncmp(buf, "GET " LT_WORKER_RESULT_PATH " ", 12) == 0 ||
                   strncmp(buf, "GET " LT_WORKER_RESULT_PATH "?", 12) == 0;
    }
    return -1;
}

static int write_all(int c, const char *p, size_t len)
{
    while (len > 0) {
        struct pollfd pf = {c, POLLOUT, 0};
        if (poll(&pf, 1, IO_WAIT_MS) <= 0)
            return -1;
        ssize_t k = send(c, p, len, MSG_NOSIGNAL);
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

int lt_worker_serve(const struct lt_worker *w, const struct load_result *r,
                    volatile sig_atomic_t *stop, char *err)
{
    static const char not_found[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                                    "Connection: close\r\n\r\n";
    size_t len = 0;
    char *resp = render(w, r, &len);
    double deadline = wall_now() + LT_WORKER_SERVE_MAX_S;
    int fd, rc = 0;

    if (!resp)
        return err_set(err, -ENOMEM, "out of memory rendering the result");
    fd = listen_on(w->serve, err);
    if (fd < 0) {
        free(resp);
        return fd;
    }
    for (;;) {
        if (stop && *stop) {
            rc = err_set(err, -ECANCELED, "stopped before the result was fetched");
            break;
        }
        if (wall_now() > deadline) {
            rc = err_set(err, -ETIMEDOUT, "nobody fetched the result in %d s",
                         LT_WORKER_SERVE_MAX_S);
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, POLL_MS) <= 0)
            continue;
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        int want = read_request(c);
        int sent = want == 1   ? write_all(c, resp, len)
                   : want == 0 ? write_all(c, not_found, sizeof(not_found) - 1)
                               : -1;
        close(c);
        if (want == 1 && sent == 0)
            break; /* fetched whole: the worker's job is done */
    }
    close(fd);
    free(resp);
    return rc;
}
