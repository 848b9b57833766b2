/* Tests for src/operator/admin.c: the admin server started on a free loopback port and
 * queried over real HTTP with libcurl. */

#include <curl/curl.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/admin.h"
#include "operator/progress.h"
#include "sweep/progress_feed.h"

struct body {
    char buf[65536];
    size_t len;
};

static size_t on_data(char *p, size_t sz, size_t n, void *user)
{
    struct body *b = user;
    size_t k = sz * n;
    if (b->len + k >= sizeof(b->buf))
        return 0;
    memcpy(b->buf + b->len, p, k);
    b->len += k;
    b->buf[b->len] = '\0';
    return k;
}

/* GETs path from host:port with an optional Authorization header; returns the status. */
static long get_from(const char *host, int port, const char *path, const char *auth, struct body *b,
                     char *ctype, size_t ctlen)
{
    char url[128];
    long code = -1;
    char *ct = NULL;
    struct curl_slist *h = NULL;
    CURL *c = curl_easy_init();
    assert_non_null(c);
    snprintf(url, sizeof(url), "http://%s:%d%s", host, port, path);
    if (auth) {
        h = curl_slist_append(NULL, auth);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    }
    b->len = 0;
    b->buf[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    if (curl_easy_perform(c) == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        if (ctype)
            snprintf(ctype, ctlen, "%s", ct ? ct : "");
    }
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    return code;
}

/* GETs path from the server on port; returns the status, fills b and ctype. */
static long get(int port, const char *path, struct body *b, char *ctype, size_t ctlen)
{
    return get_from("127.0.0.1", port, path, NULL, b, ctype, ctlen);
}

static void test_parse_addr(void **state)
{
    (void)state;
    char host[64], err[ERR_LEN];
    int port;

    assert_int_equal(admin_parse_addr(":8081", host, sizeof(host), &port, err), 0);
    assert_string_equal(host, "");
    assert_int_equal(port, 8081);
    assert_int_equal(admin_parse_addr("127.0.0.1:0", host, sizeof(host), &port, err), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 0);
    assert_int_equal(admin_parse_addr("[::1]:9000", host, sizeof(host), &port, err), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 9000);
    static const char *const bad[] = {"", "8081", ":", ":x", ":65536", "[::1]9000", "[::1", "h:1a"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(admin_parse_addr(bad[i], host, sizeof(host), &port, err), -EINVAL);
    assert_int_equal(admin_parse_addr("a-host-name-that-is-far-too-long-for-the-buffer-given:1",
                                      host, 16, &port, err),
                     -EINVAL);
}

static void test_serves_endpoints(void **state)
{
    (void)state;
    struct metrics m;
    admin_t *a = NULL;
    char err[ERR_LEN] = "", ctype[128];
    static struct body b;

    metrics_init(&m);
    assert_int_equal(admin_start("127.0.0.1:0", &m, NULL, &a, err), 0);
    int port = admin_port(a);
    assert_true(port > 0);

    /* Before the first heartbeat and list: neither live nor ready. */
    assert_int_equal(get(port, "/healthz", &b, NULL, 0), 503);
    assert_int_equal(get(port, "/readyz", &b, NULL, 0), 503);
    metrics_heartbeat(&m);
    atomic_store(&m.ready, 1);
    assert_int_equal(get(port, "/healthz", &b, NULL, 0), 200);
    assert_string_equal(b.buf, "ok\n");
    assert_int_equal(get(port, "/readyz", &b, NULL, 0), 200);

    metrics_sweep_result(&m, METRICS_SWEEP_DONE);
    metrics_api_request(&m, 201);
    assert_int_equal(get(port, "/metrics", &b, ctype, sizeof(ctype)), 200);
    assert_non_null(strstr(ctype, "text/plain"));
    assert_non_null(strstr(b.buf, "sizeup_sweeps_total{result=\"done\"} 1\n"));
    assert_non_null(strstr(b.buf, "sizeup_api_requests_total{code=\"201\"} 1\n"));
    assert_non_null(strstr(b.buf, "process_resident_memory_bytes "));
    /* The query string is not part of the route. */
    assert_int_equal(get(port, "/metrics?x=1", &b, NULL, 0), 200);
    assert_int_equal(get(port, "/nope", &b, NULL, 0), 404);

    /* Many scrapes in a row: the server keeps answering (no leak of sessions). */
    for (int i = 0; i < 50; i++)
        assert_int_equal(get(port, "/metrics", &b, NULL, 0), 200);
    admin_stop(a);
    /* Stopped: nothing listens any more. */
    assert_int_equal(get(port, "/healthz", &b, NULL, 0), -1);
    admin_stop(NULL);
}

static void test_port_in_use(void **state)
{
    (void)state;
    struct metrics m;
    admin_t *a = NULL, *b = NULL;
    char err[ERR_LEN] = "", addr[64];

    metrics_init(&m);
    assert_int_equal(admin_start("127.0.0.1:0", &m, NULL, &a, err), 0);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", admin_port(a));
    assert_true(admin_start(addr, &m, NULL, &b, err) < 0);
    assert_null(b);
    assert_non_null(strstr(err, "cannot listen"));
    admin_stop(a);
}

/* Stands in for TokenReview + SubjectAccessReview: the server's decision on their answers. */
static int fake_auth(void *ud, const char *token, char *err)
{
    int *calls = ud;
    (*calls)++;
    if (strcmp(token, "reader") == 0)
        return 0;
    if (strcmp(token, "stranger") == 0)
        return err_set(err, -EACCES, "user stranger may not get /progress");
    return err_set(err, -EPERM, "token not authenticated");
}

/* The page answers on loopback only; another local address of the same host (what a pod's own
 * address is to a port-forward-less client) gets 403 while /healthz keeps answering there. */
static void test_progress_loopback_only(void **state)
{
    (void)state;
    static struct body b;
    struct metrics m;
    progress_feed_t *feed = NULL;
    progress_srv_t *ps = NULL;
    admin_t *a = NULL;
    char err[ERR_LEN] = "", ct[64];
    struct progress_srv_opts po = {0};

    metrics_init(&m);
    metrics_heartbeat(&m);
    assert_int_equal(progress_feed_new(&feed), 0);
    po.feed = feed;
    po.loopback_only = true;
    assert_int_equal(progress_srv_new(&po, &ps, err), 0);
    assert_int_equal(admin_start("0.0.0.0:0", &m, ps, &a, err), 0);
    int port = admin_port(a);
    assert_int_equal(get(port, "/", &b, ct, sizeof(ct)), 200);
    assert_non_null(strstr(ct, "text/html"));
    assert_non_null(strstr(b.buf, "/progress"));
    assert_int_equal(get_from("127.0.0.2", port, "/", NULL, &b, NULL, 0), 403);
    assert_int_equal(get_from("127.0.0.2", port, "/", "Authorization: Bearer reader", &b, NULL, 0),
                     403);
    assert_int_equal(get_from("127.0.0.2", port, "/healthz", NULL, &b, NULL, 0), 200);
    admin_stop(a);
    progress_srv_free(ps);
    progress_feed_free(feed);
}

/* With the opt-in, off loopback: no token 401, a token TokenReview rejects 401, one it accepts
 * for a user the SubjectAccessReview refuses 403, an allowed reader 200; answers are the auth
 * callback's, asked once per request. */
static void test_progress_public_needs_token(void **state)
{
    (void)state;
    static struct body b;
    struct metrics m;
    progress_feed_t *feed = NULL;
    progress_srv_t *ps = NULL;
    admin_t *a = NULL;
    char err[ERR_LEN] = "";
    int calls = 0;
    struct progress_srv_opts po = {0};

    metrics_init(&m);
    assert_int_equal(progress_feed_new(&feed), 0);
    po.feed = feed;
    po.loopback_only = true;
    po.public_ = true;
    assert_int_equal(progress_srv_new(&po, &ps, err), -EINVAL); /* public needs a check */
    po.auth = fake_auth;
    po.auth_ud = &calls;
    assert_int_equal(progress_srv_new(&po, &ps, err), 0);
    assert_int_equal(admin_start("0.0.0.0:0", &m, ps, &a, err), 0);
    int port = admin_port(a);
    assert_int_equal(get_from("127.0.0.2", port, "/", NULL, &b, NULL, 0), 401);
    assert_int_equal(calls, 0);
    assert_int_equal(get_from("127.0.0.2", port, "/", "Authorization: Bearer nobody", &b, NULL, 0),
                     401);
    assert_int_equal(
        get_from("127.0.0.2", port, "/", "Authorization: Bearer stranger", &b, NULL, 0), 403);
    assert_int_equal(get_from("127.0.0.2", port, "/", "Authorization: Bearer reader", &b, NULL, 0),
                     200);
    assert_int_equal(calls, 3);
    assert_int_equal(get(port, "/", &b, NULL, 0), 200); /* loopback: no token asked */
    assert_int_equal(calls, 3);
    admin_stop(a);
    progress_srv_free(ps);
    progress_feed_free(feed);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_addr),
        cmocka_unit_test(test_serves_endpoints),
        cmocka_unit_test(test_port_in_use),
        cmocka_unit_test(test_progress_loopback_only),
        cmocka_unit_test(test_progress_public_needs_token),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
