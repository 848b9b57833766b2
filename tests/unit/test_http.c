/* Tests for src/load/http.c: the incremental response parser (table-driven, every case fed
 * whole, split at every byte boundary and one byte at a time) and the request serializer. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/http.h"

struct resp_case {
    const char *name;
    const char *in;
    int head;        /* request was HEAD */
    int eof;         /* the peer closes after sending in */
    int want_rc;     /* HTTP_DONE, HTTP_MORE or HTTP_ERROR, after eof when eof is set */
    int want_status; /* when done */
    int want_keep;   /* when done */
    long want_body;  /* when done */
    long want_extra; /* bytes left after the response in `in` */
};

#define CL5 "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
#define LONGHDR                                                                                    \
    "X-Long: "                                                                                     \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"        \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "\r\n"

#define LONGHDR_NOCOLON                                                                            \
    "Xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct resp_case cases[] = {
    {"content-length", CL5, 0, 0, HTTP_DONE, 200, 1, 5, 0},
    {"keep-alive reuse leaves the next response", CL5 "HTTP/1.1 200 OK\r\n", 0, 0, HTTP_DONE, 200,
     1, 5, 17},
    {"zero length", "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 0, 0, HTTP_DONE, 404, 1,
     0, 0},
    {"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 0,
     0, HTTP_DONE, 200, 0, 2, 0},
    {"connection list with close",
     "HTTP/1.1 200 OK\r\nConnection: foo, Close\r\n"
     "Content-Length: 2\r\n\r\nok",
     0, 0, HTTP_DONE, 200, 0, 2, 0},
    {"chunked",
     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
     "A;ext=1\r\n0123456789\r\n0\r\n\r\n",
     0, 0, HTTP_DONE, 200, 1, 15, 0},
    {"chunked with trailers",
     "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n"
     "3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n",
     0, 0, HTTP_DONE, 200, 1, 3, 0},
    {"chunked wins over length",
     "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n"
     "Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
     0, 0, HTTP_DONE, 200, 1, 2, 0},
    {"http/1.0 until close", "HTTP/1.0 200 OK\r\n\r\nbody until the end", 0, 1, HTTP_DONE, 200, 0,
     18, 0},
    {"http/1.0 keep-alive",
     "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", 0, 0, HTTP_DONE,
     200, 1, 1, 0},
    {"http/1.1 no length until close", "HTTP/1.1 200 OK\r\n\r\nabc", 0, 1, HTTP_DONE, 200, 0, 3, 0},
    {"head has no body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", 1, 0, HTTP_DONE, 200, 1,
     0, 0},
    {"204 has no body", "HTTP/1.1 204 No Content\r\n\r\n", 0, 0, HTTP_DONE, 204, 1, 0, 0},
    {"304 has no body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 0, 0, HTTP_DONE,
     304, 1, 0, 0},
    {"100 continue then 200",
     "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"
     "Content-Length: 1\r\n\r\nx",
     0, 0, HTTP_DONE, 201, 1, 1, 0},
    {"500", "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 3\r\n\r\nerr", 0, 0, HTTP_DONE,
     500, 1, 3, 0},
    {"bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 0, 0, HTTP_DONE, 200, 1, 2,
     0},
    {"long header split across reads", "HTTP/1.1 200 OK\r\n" LONGHDR "Content-Length: 1\r\n\r\nz",
     0, 0, HTTP_DONE, 200, 1, 1, 0},
    {"no reason phrase", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 0, 0, HTTP_DONE, 200, 1, 0,
     0},
    {"incomplete headers", "HTTP/1.1 200 OK\r\nContent-Len", 0, 0, HTTP_MORE, 0, 0, 0, 0},
    {"incomplete body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, 0, HTTP_MORE, 0, 0,
     0, 0},
    {"truncated body then close", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0, 1,
     HTTP_ERROR, 0, 0, 0, 0},
    {"truncated chunked then close", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
     0, 1, HTTP_ERROR, 0, 0, 0, 0},
    {"closed before any byte", "", 0, 1, HTTP_ERROR, 0, 0, 0, 0},
    {"garbage", "GARBAGE GARBAGE\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"binary garbage", "\x01\x02\x03\xff\xfe\n", 0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"http/2 preface", "HTTP/2 200\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"bad status code", "HTTP/1.1 2x0 OK\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"status glued to reason", "HTTP/1.1 200OK\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"header without colon", "HTTP/1.1 200 OK\r\nBroken header\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0, 0,
     0},
    /* Over HTTP_CARRY bytes without ':' is a name we never act on, split or not. */
    {"long line without colon ignored", "HTTP/1.1 200 OK\r\n" LONGHDR_NOCOLON "\r\n\r\nab", 0, 1,
     HTTP_DONE, 200, 0, 2, 0},
    {"space in header name", "HTTP/1.1 200 OK\r\nContent Length: 1\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0,
     0, 0},
    {"bad content-length", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0,
     0, 0},
    {"negative content-length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, 0, HTTP_ERROR,
     0, 0, 0, 0},
    {"conflicting content-length",
     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n"
     "\r\nx",
     0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"body over the cap", "HTTP/1.1 200 OK\r\nContent-Length: 2000000000\r\n\r\n", 0, 0, HTTP_ERROR,
     0, 0, 0, 0},
    {"chunk over the cap",
     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
     "ffffffffffffffff\r\n",
     0, 0, HTTP_ERROR, 0, 0, 0, 0},
    {"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, 0,
     HTTP_ERROR, 0, 0, 0, 0},
    {"chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n", 0,
     0, HTTP_ERROR, 0, 0, 0, 0},
    {"switching protocols", "HTTP/1.1 101 Switching Protocols\r\n\r\n", 0, 0, HTTP_ERROR, 0, 0, 0,
     0},
};

struct outcome {
    int rc;
    int status, keep;
    long body, extra;
};

/* Feeds in[0..len) in pieces cut at the given offsets (ascending, 0 < cut < len). */
static struct outcome feed(const struct resp_case *c, const size_t *cuts, size_t ncuts)
{
    struct http_parser p;
    struct outcome o = {HTTP_MORE, 0, 0, 0, 0};
    size_t len = strlen(c->in), prev = 0;

    http_parser_init(&p, c->head);
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        size_t used = 0;
        /* Each piece gets its own heap copy so ASan catches any read past the piece. */
        char *piece = malloc(end - prev + 1);
        assert_non_null(piece);
        memcpy(piece, c->in + prev, end - prev);
        o.rc = http_parse(&p, piece, end - prev, &used);
        free(piece);
        if (o.rc == HTTP_DONE)
            o.extra = (long)(len - prev - used);
        if (o.rc != HTTP_MORE)
            break;
        assert_int_equal(used, end - prev);
        prev = end;
    }
    if (o.rc == HTTP_MORE && c->eof)
        o.rc = http_parse_eof(&p);
    if (o.rc == HTTP_DONE) {
        o.status = p.status;
        o.keep = p.keep_alive;
        o.body = (long)p.body_bytes;
    }
    if (o.rc == HTTP_ERROR)
        assert_non_null(p.error);
    return o;
}

static void check(const struct resp_case *c, struct outcome o, const char *how)
{
    if (o.rc != c->want_rc)
        fail_msg("%s (%s): rc %d, want %d", c->name, how, o.rc, c->want_rc);
    if (o.rc != HTTP_DONE)
        return;
    if (o.status != c->want_status || o.keep != c->want_keep || o.body != c->want_body ||
        o.extra != c->want_extra)
        fail_msg("%s (%s): status %d keep %d body %ld extra %ld, want %d %d %ld %ld", c->name, how,
                 o.status, o.keep, o.body, o.extra, c->want_status, c->want_keep, c->want_body,
                 c->want_extra);
}

static void test_whole(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check(&cases[i], feed(&cases[i], NULL, 0), "whole");
}

static void test_split_every_boundary(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].in);
        for (size_t cut = 1; cut < len; cut++) {
            char how[32];
            snprintf(how, sizeof(how), "split at %zu", cut);
            /* An early response (extra bytes) ends in the first piece when cut is past it. */
            struct outcome o = feed(&cases[i], &cut, 1);
            check(&cases[i], o, how);
        }
    }
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].in);
        size_t *cuts = calloc(len + 1, sizeof(*cuts));
        assert_non_null(cuts);
        for (size_t k = 1; k < len; k++)
            cuts[k - 1] = k;
        check(&cases[i], feed(&cases[i], cuts, len > 0 ? len - 1 : 0), "byte at a time");
        free(cuts);
    }
}

static void test_header_cap(void **state)
{
    (void)state;
    struct http_parser p;
    char line[1024];
    size_t used;
    int rc = HTTP_MORE;
    size_t total = 0;

    http_parser_init(&p, 0);
    rc = http_parse(&p, "HTTP/1.1 200 OK\r\n", 17, &used);
    assert_int_equal(rc, HTTP_MORE);
    memset(line, 'a', sizeof(line));
    memcpy(line, "X-Pad: ", 7);
    line[sizeof(line) - 2] = '\r';
    line[sizeof(line) - 1] = '\n';
    while (rc == HTTP_MORE && total < 2 * HTTP_MAX_HEADER_BYTES) {
        rc = http_parse(&p, line, sizeof(line), &used);
        total += sizeof(line);
    }
    assert_int_equal(rc, HTTP_ERROR);
    assert_true(total <= HTTP_MAX_HEADER_BYTES + sizeof(line));
    assert_non_null(strstr(p.error, "size cap"));

    /* One endless header line without a newline is capped too. */
    http_parser_init(&p, 0);
    http_parse(&p, "HTTP/1.1 200 OK\r\nX-Endless: ", 28, &used);
    rc = HTTP_MORE;
    total = 0;
    while (rc == HTTP_MORE && total < 2 * HTTP_MAX_HEADER_BYTES) {
        rc = http_parse(&p, line + 8, 512, &used);
        total += 512;
    }
    assert_int_equal(rc, HTTP_ERROR);
}

static void test_body_until_close_cap(void **state)
{
    (void)state;
    struct http_parser p;
    size_t used;
    static char chunk[65536];

    http_parser_init(&p, 0);
    p.max_body = 100000;
    assert_int_equal(http_parse(&p, "HTTP/1.0 200 OK\r\n\r\n", 19, &used), HTTP_MORE);
    assert_int_equal(http_parse(&p, chunk, sizeof(chunk), &used), HTTP_MORE);
    assert_int_equal(http_parse(&p, chunk, sizeof(chunk), &used), HTTP_ERROR);
}

static void test_reuse_after_done(void **state)
{
    (void)state;
    struct http_parser p;
    size_t used;

    /* The same parser, re-initialised, parses response after response (keep-alive). */
    for (int i = 0; i < 3; i++) {
        http_parser_init(&p, 0);
        assert_int_equal(http_parse(&p, CL5, strlen(CL5), &used), HTTP_DONE);
        assert_int_equal(used, strlen(CL5));
        assert_int_equal(p.body_bytes, 5);
    }
}

/* ---- serializer ---- */

static void build(const char *base, struct profile_request *r, struct http_request *out, int want)
{
    struct url u;
    char err[ERR_LEN] = "";
    assert_int_equal(url_parse(base, &u, err), 0);
    int rc = http_request_build(&u, r, out, err);
    if (rc != want)
        fail_msg("build: rc %d want %d (%s)", rc, want, err);
    if (rc)
        assert_true(err[0] != '\0');
}

static void test_request_get(void **state)
{
    (void)state;
    struct profile_request r = {0};
    struct http_request q;
    r.name = "root";
    r.method = "GET";
    r.path = "/x?y=1";
    r.weight = 1;
    build("http://127.0.0.1:8080/api/", &r, &q, 0);
    const char *want = "GET /api/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
                       "User-Agent: " HTTP_USER_AGENT "\r\n\r\n";
    assert_int_equal(q.len, strlen(want));
    assert_memory_equal(q.buf, want, q.len);
    assert_int_equal(q.head, 0);
    http_request_free(&q);
    http_request_free(&q); /* no-op on a freed request */
}

static void test_request_post_headers_body(void **state)
{
    (void)state;
    struct profile_header h[2] = {{"Authorization", "Bearer x"}, {"Host", "override.test"}};
    struct profile_request r = {0};
    struct http_request q;
    r.name = "vote";
    r.method = "POST";
    r.path = "/votes";
    r.headers = h;
    r.nheaders = 2;
    r.body = "{\"id\":1}";
    r.body_len = 8;
    build("https://[::1]", &r, &q, 0);
    const char *want = "POST /votes HTTP/1.1\r\nUser-Agent: " HTTP_USER_AGENT "\r\n"
                       "Authorization: Bearer x\r\nHost: override.test\r\n"
                       "Content-Length: 8\r\n\r\n{\"id\":1}";
    assert_int_equal(q.len, strlen(want));
    assert_memory_equal(q.buf, want, q.len);
    http_request_free(&q);

    /* POST without a body still says Content-Length: 0; HEAD is flagged. */
    r.body = NULL;
    r.body_len = 0;
    r.nheaders = 0;
    build("http://h:81", &r, &q, 0);
    assert_non_null(strstr(q.buf, "Content-Length: 0\r\n\r\n"));
    assert_non_null(strstr(q.buf, "Host: h:81\r\n"));
    http_request_free(&q);
    r.method = "HEAD";
    build("http://h", &r, &q, 0);
    assert_int_equal(q.head, 1);
    http_request_free(&q);
}

static void test_request_rejects_injection(void **state)
{
    (void)state;
    struct profile_header bad_val[1] = {{"X-A", "v\r\nX-Injected: 1"}};
    struct profile_header bad_name[1] = {{"X A", "v"}};
    struct profile_header framing[1] = {{"content-length", "3"}};
    struct profile_request r = {0};
    struct http_request q;
    r.name = "n";
    r.method = "GET";
    r.path = "/";

    r.headers = bad_val;
    r.nheaders = 1;
    build("http://h", &r, &q, -EINVAL);
    r.headers = bad_name;
    build("http://h", &r, &q, -EINVAL);
    r.headers = framing;
    build("http://h", &r, &q, -EINVAL);
    r.nheaders = 0;
    r.path = "/a b";
    build("http://h", &r, &q, -EINVAL);
    r.path = "relative";
    build("http://h", &r, &q, -EINVAL);
    r.path = "/";
    r.method = "GE T";
    build("http://h", &r, &q, -EINVAL);
    r.method = "GET\r\n";
    build("http://h", &r, &q, -EINVAL);
}

/* A body with {{seq}} is rendered at each send with that request's number and the matching
 * Content-Length; the head is the same as a fixed request's. */
static void test_request_seq_template(void **state)
{
    (void)state;
    struct url u;
    struct profile_request r;
    struct http_request out;
    struct http_send send = {NULL, 0};
    const char *buf;
    size_t len;
    char err[ERR_LEN] = "";
    char body[] = "{\"id\":{{seq}},\"again\":\"{{seq}}\"}";

    assert_int_equal(url_parse("http://127.0.0.1:8080", &u, err), 0);
    memset(&r, 0, sizeof(r));
    r.name = "cmd";
    r.method = "POST";
    r.path = "/cmd";
    r.body = body;
    r.body_len = strlen(body);
    assert_int_equal(http_request_build(&u, &r, &out, err), 0);
    assert_int_equal(http_request_bytes(&out, 0, &send, &buf, &len), 0);
    const char *want0 = "POST /cmd HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: " HTTP_USER_AGENT
                        "\r\nContent-Length: 20\r\n\r\n{\"id\":0,\"again\":\"0\"}";
    assert_int_equal(len, strlen(want0));
    assert_memory_equal(buf, want0, len);
    assert_int_equal(http_request_bytes(&out, 123456789, &send, &buf, &len), 0);
    const char *want1 = "Content-Length: 36\r\n\r\n{\"id\":123456789,\"again\":\"123456789\"}";
    assert_true(len > strlen(want1));
    assert_memory_equal(buf + len - strlen(want1), want1, strlen(want1));
    http_send_free(&send);
    http_request_free(&out);

    /* Without the mark the request's own bytes are sent: no copy, no scratch. */
    memcpy(body, "{}", 3);
    r.body_len = 2;
    assert_int_equal(http_request_build(&u, &r, &out, err), 0);
    assert_int_equal(http_request_bytes(&out, 5, &send, &buf, &len), 0);
    assert_ptr_equal(buf, out.buf);
    assert_null(send.buf);
    http_request_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_split_every_boundary),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_header_cap),
        cmocka_unit_test(test_body_until_close_cap),
        cmocka_unit_test(test_reuse_after_done),
        cmocka_unit_test(test_request_get),
        cmocka_unit_test(test_request_post_headers_body),
        cmocka_unit_test(test_request_rejects_injection),
        cmocka_unit_test(test_request_seq_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
