/* Tests for src/profile/profile_streams.c: the streams: and producers: sections, table-driven,
 * the valid ones by their parsed fields and the malformed ones by the line and field their
 * error names. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "profile/profile_streams.h"

static int load(const char *yaml, struct profile *p, char *err)
{
    return profile_load_buffer(yaml, strlen(yaml), "p.yaml", p, err);
}

static void test_full(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    struct profile p;
    const char *y =
        "streams:\n"
        "  url: /live\n"
        "  count: 2000\n"
        "  ramp: 10s\n"
        "  subscribe: '{\"board\":1}'\n"
        "producers:\n"
        "  count: 50\n"
        "  rate: 200\n"
        "  request: { method: POST, path: /api/cards/rename, body: '{\"id\":{{seq}}}',\n"
        "             headers: { Content-Type: application/json } }\n"
        "  match: seq\n"
        "  fanout: none\n";
    assert_int_equal(load(y, &p, err), 0);
    const struct profile_streams *s = p.streams;
    assert_non_null(s);
    assert_string_equal(s->url, "/live");
    assert_int_equal(s->protocol, PROFILE_STREAM_WS);
    assert_int_equal(s->count, 2000);
    assert_int_equal(s->ramp_us, 10000000);
    assert_string_equal(s->subscribe, "{\"board\":1}");
    assert_int_equal(s->subscribe_len, 11);
    assert_false(s->load_given);
    assert_int_equal(s->producers, 50);
    assert_true(s->rate == 200);
    assert_string_equal(s->request.method, "POST");
    assert_string_equal(s->request.path, "/api/cards/rename");
    assert_string_equal(s->request.body, "{\"id\":{{seq}}}");
    assert_int_equal(s->request.nheaders, 1);
    assert_string_equal(s->request.name, "POST /api/cards/rename");
    assert_string_equal(s->match, "seq");
    assert_false(s->fanout_all);
    profile_free(&p);
}

static void test_defaults(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    struct profile p;
    assert_int_equal(load("streams: { url: 'ws://127.0.0.1:9/x?y=1', count: 5000 }\n"
                          "producers: { rate: 10, request: { path: /c } }\n"
                          "users: 3\n",
                          &p, err),
                     0);
    const struct profile_streams *s = p.streams;
    assert_int_equal(s->protocol, PROFILE_STREAM_WS);
    assert_int_equal(s->ramp_us, 5000000); /* 1 s per 1,000 streams */
    assert_null(s->subscribe);
    assert_true(s->load_given);
    assert_int_equal(s->producers, 1);
    assert_string_equal(s->match, "seq");
    assert_true(s->fanout_all);
    profile_free(&p);

    /* An http:// URL is an event stream; a small count still ramps over 1 s; no producers. */
    assert_int_equal(load("streams: { url: 'http://h/events', count: 3 }\n", &p, err), 0);
    assert_int_equal(p.streams->protocol, PROFILE_STREAM_SSE);
    assert_int_equal(p.streams->ramp_us, PROFILE_RAMP_MIN_US);
    assert_int_equal(p.streams->producers, 0);
    profile_free(&p);

    /* No stream section: no streams. */
    assert_int_equal(load("users: 2\n", &p, err), 0);
    assert_null(p.streams);
    profile_free(&p);
}

struct bad {
    const char *yaml;
    const char *want; /* a substring of the error */
};

static const struct bad bad_cases[] = {
    {"streams: 5\n", "p.yaml:1: streams: expected a mapping"},
    {"streams: { count: 1 }\n", "missing 'url'"},
    {"streams: { url: /x }\n", "missing 'count'"},
    {"streams: { url: /x, count: 0 }\n", "streams.count: expected a positive integer"},
    {"streams: { url: /x, count: 2000000 }\n", "streams.count: '2000000' is too large"},
    {"streams: { url: x, count: 1 }\n", "streams.url: expected ws://"},
    {"streams: { url: 'ftp://h/x', count: 1 }\n", "streams.url: expected ws://"},
    {"streams: { url: '/a b', count: 1 }\n", "streams.url: spaces"},
    {"streams: { url: 'ws://h/x', protocol: sse, count: 1 }\n", "a ws:// URL with protocol: sse"},
    {"streams: { url: 'http://h/x', protocol: ws, count: 1 }\n",
     "an http:// URL with protocol: ws"},
    {"streams: { url: 'ws://:80/x', count: 1 }\n", "streams.url: URL"},
    {"streams: { url: /x, count: 1, protocol: mqtt }\n", "streams.protocol: expected ws or sse"},
    {"streams: { url: /x, count: 1, ramp: fast }\n", "streams.ramp:"},
    {"streams: { url: /x, count: 1, protocol: sse, subscribe: hi }\n",
     "streams.subscribe: only a WebSocket"},
    {"streams: { url: /x, count: 1, subscribe: [1] }\n", "streams.subscribe: expected a string"},
    {"streams: { url: /x, count: 1, cuont: 2 }\n",
     "streams.cuont: unknown field; did you mean 'count'"},
    {"producers: { rate: 1, request: { path: /c } }\n", "add a 'streams:' section"},
    {"streams: { url: /x, count: 1 }\nproducers: { request: { path: /c } }\n", "missing 'rate'"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 1 }\n", "missing 'request'"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 0, request: { path: /c } }\n",
     "producers.rate: expected a positive number"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 1, count: 0, request: { path: /c } }\n",
     "producers.count: expected a positive integer"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 1, request: { path: c } }\n",
     "producers.request.path: must start with '/'"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 1, request: 5 }\n",
     "producers.request: expected a mapping"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 1, request: { path: /c }, match: 'a.b' "
     "}\n",
     "producers.match: expected a JSON field name"},
    {"streams: { url: /x, count: 1 }\nproducers: { rate: 1, request: { path: /c }, fanout: some "
     "}\n",
     "producers.fanout: expected all or none"},
    {"requests: [{ path: /c, method: POST }]\nstreams: { url: /x, count: 1 }\n"
     "producers: { rate: 1, request: { path: /c, method: POST } }\n",
     "already the name of requests[0]"},
    {"streams: { url: /x, count: 1 }\n\nproducers:\n  rate: 1\n  request: { path: /c }\n  bogus: "
     "1\n",
     "p.yaml:6: producers.bogus: unknown field"},
};

static void test_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        char err[ERR_LEN] = "";
        struct profile p;
        int rc = load(bad_cases[i].yaml, &p, err);
        if (rc == 0 || !strstr(err, bad_cases[i].want))
            fail_msg("case %zu: rc %d, error '%s', want '%s'", i, rc, err, bad_cases[i].want);
        assert_null(p.streams); /* a failed load leaves nothing behind */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
