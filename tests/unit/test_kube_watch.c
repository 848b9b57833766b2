/* Tests for src/kube/watch.c and src/kube/backoff.c: the watch line splitter (every byte
 * boundary, over-long lines), watch-event parsing (ERROR 410 included) and backoff bounds. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/client.h"

struct collect {
    char lines[16][256];
    int n;
    int stop_at; /* return 7 at this line index; -1 never */
};

static int on_line(void *ud, const char *line, size_t len)
{
    struct collect *c = ud;
    if (c->n >= 16 || len >= 256)
        return -99;
    memcpy(c->lines[c->n], line, len);
    c->lines[c->n][len] = '\0';
    c->n++;
    return c->n - 1 == c->stop_at ? 7 : 0;
}

static const char stream[] =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"6\"}}}"
    "\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"10\"}}}\n"
    "{\"type\":\"ADDED\",\"obj"; /* an incomplete tail, never delivered */

static void check_lines(const struct collect *c)
{
    assert_int_equal(c->n, 4);
    assert_non_null(strstr(c->lines[0], "\"ADDED\""));
    assert_non_null(strstr(c->lines[1], "\"MODIFIED\""));
    /* The CR of a CRLF is not part of the line. */
    assert_int_equal(c->lines[1][strlen(c->lines[1]) - 1], '}');
    assert_non_null(strstr(c->lines[2], "BOOKMARK"));
    assert_non_null(strstr(c->lines[3], "DELETED"));
}

/* Every way of cutting the stream in two, then in three, gives the same lines. */
static void test_split_every_boundary(void **state)
{
    (void)state;
    size_t n = strlen(stream);
    for (size_t i = 0; i <= n; i++) {
        struct kube_lines l;
        struct collect c = {.stop_at = -1};
        assert_int_equal(kube_lines_init(&l, 0), 0);
        assert_int_equal(kube_lines_feed(&l, stream, i, on_line, &c), 0);
        assert_int_equal(kube_lines_feed(&l, stream + i, n - i, on_line, &c), 0);
        check_lines(&c);
        assert_int_equal(l.len, strlen("{\"type\":\"ADDED\",\"obj"));
        kube_lines_free(&l);
    }
    for (size_t i = 0; i <= n; i += 7) {
        for (size_t j = i; j <= n; j += 5) {
            struct kube_lines l;
            struct collect c = {.stop_at = -1};
            assert_int_equal(kube_lines_init(&l, 0), 0);
            assert_int_equal(kube_lines_feed(&l, stream, i, on_line, &c), 0);
            assert_int_equal(kube_lines_feed(&l, stream + i, j - i, on_line, &c), 0);
            assert_int_equal(kube_lines_feed(&l, stream + j, n - j, on_line, &c), 0);
            check_lines(&c);
            kube_lines_free(&l);
        }
    }
    /* One byte at a time. */
    struct kube_lines l;
    struct collect c = {.stop_at = -1};
    assert_int_equal(kube_lines_init(&l, 0), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(kube_lines_feed(&l, stream + i, 1, on_line, &c), 0);
    check_lines(&c);
    kube_lines_free(&l);
}

static void test_split_limits(void **state)
{
    (void)state;
    struct kube_lines l;
    struct collect c = {.stop_at = -1};
    char big[200];
    memset(big, 'x', sizeof(big));

    /* Exactly max bytes fits, in one chunk or in pieces. */
    assert_int_equal(kube_lines_init(&l, 100), 0);
    assert_int_equal(kube_lines_feed(&l, big, 100, on_line, &c), 0);
    assert_int_equal(kube_lines_feed(&l, "\n", 1, on_line, &c), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(strlen(c.lines[0]), 100);
    assert_int_equal(kube_lines_feed(&l, big, 100, on_line, &c), 0);
    /* One byte more is rejected, whether the line arrives whole or in pieces. */
    assert_int_equal(kube_lines_feed(&l, "y", 1, on_line, &c), -EMSGSIZE);
    kube_lines_free(&l);

    assert_int_equal(kube_lines_init(&l, 100), 0);
    char whole[102];
    memset(whole, 'z', 101);
    whole[101] = '\n';
    assert_int_equal(kube_lines_feed(&l, whole, sizeof(whole), on_line, &c), -EMSGSIZE);
    kube_lines_free(&l);

    /* The buffer never grows past the cap however the bytes arrive. */
    assert_int_equal(kube_lines_init(&l, 64), 0);
    for (int i = 0; i < 64; i++)
        assert_int_equal(kube_lines_feed(&l, "a", 1, on_line, &c), 0);
    assert_int_equal(kube_lines_feed(&l, "a", 1, on_line, &c), -EMSGSIZE);
    assert_true(l.cap <= 64);
    kube_lines_free(&l);

    /* A callback's non-zero value stops feeding and is returned. */
    struct collect s = {.stop_at = 1};
    assert_int_equal(kube_lines_init(&l, 0), 0);
    assert_int_equal(kube_lines_feed(&l, stream, strlen(stream), on_line, &s), 7);
    assert_int_equal(s.n, 2);
    kube_lines_free(&l);
}

static void test_event_parse(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int rc;
        enum kube_event_type type;
        const char *rv;
    } cases[] = {
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}", 0,
         KUBE_EV_ADDED, "12"},
        {"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Deployment\"}}", 0, KUBE_EV_MODIFIED, NULL},
        {"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}", 0,
         KUBE_EV_DELETED, "3"},
        {"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"99\"}}}", 0,
         KUBE_EV_BOOKMARK, "99"},
        {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"message\":\"x\"}}", 0,
         KUBE_EV_ERROR, NULL},
        {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
         "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (5)\","
         "\"reason\":\"Expired\",\"code\":410}}",
         KUBE_EGONE, KUBE_EV_ERROR, NULL},
        {"not json", -EBADMSG, 0, NULL},
        {"{\"type\":\"ADDED\"}", -EBADMSG, 0, NULL},
        {"{\"type\":\"ADDED\",\"object\":[]}", -EBADMSG, 0, NULL},
        {"{\"type\":7,\"object\":{}}", -EBADMSG, 0, NULL},
        {"{\"type\":\"RENAMED\",\"object\":{}}", -EBADMSG, 0, NULL},
        {"[1,2]", -EBADMSG, 0, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *root = NULL;
        struct kube_event ev;
        char err[ERR_LEN] = "";
        int rc = kube_event_parse(cases[i].line, strlen(cases[i].line), &root, &ev, err);
        if (rc != cases[i].rc)
            fail_msg("line %zu: rc %d want %d (%s)", i, rc, cases[i].rc, err);
        if (rc == 0 || rc == KUBE_EGONE) {
            assert_non_null(root);
            assert_int_equal(ev.type, cases[i].type);
            assert_non_null(ev.object);
            if (cases[i].rv)
                assert_string_equal(ev.resource_version, cases[i].rv);
            else
                assert_null(ev.resource_version);
        } else {
            assert_null(root);
        }
        if (rc == KUBE_EGONE)
            assert_non_null(strstr(err, "410"));
        cJSON_Delete(root);
    }
}

static void test_backoff_bounds(void **state)
{
    (void)state;
    struct kube_backoff b;
    for (uint64_t seed = 1; seed < 50; seed++) {
        assert_int_equal(kube_backoff_init(&b, 100, 5000, seed), 0);
        unsigned prev_cap = 0;
        for (unsigned n = 0; n < 40; n++) {
            unsigned long long cap = 100ull << (n < 20 ? n : 20);
            if (cap > 5000)
                cap = 5000;
            unsigned d = kube_backoff_next(&b);
            if (d < cap / 2 || d > cap)
                fail_msg("seed %llu attempt %u: %u not in [%llu, %llu]", (unsigned long long)seed,
                         n, d, cap / 2, cap);
            assert_true(cap >= prev_cap);
            prev_cap = (unsigned)cap;
        }
        kube_backoff_reset(&b);
        unsigned d = kube_backoff_next(&b);
        assert_true(d >= 50 && d <= 100);
    }
    /* Jitter: two clients failing together do not retry in lockstep. */
    struct kube_backoff x, y;
    assert_int_equal(kube_backoff_init(&x, 1000, 60000, 1), 0);
    assert_int_equal(kube_backoff_init(&y, 1000, 60000, 2), 0);
    int same = 0;
    for (int i = 0; i < 10; i++)
        same += kube_backoff_next(&x) == kube_backoff_next(&y);
    assert_true(same < 3);
    /* Degenerate settings never give a zero delay (no hot loop). */
    assert_int_equal(kube_backoff_init(&x, 0, 0, 3), 0);
    for (int i = 0; i < 10; i++)
        assert_true(kube_backoff_next(&x) >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_every_boundary),
        cmocka_unit_test(test_split_limits),
        cmocka_unit_test(test_event_parse),
        cmocka_unit_test(test_backoff_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
