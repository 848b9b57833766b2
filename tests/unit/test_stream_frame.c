/* Tests for src/load/stream_frame.c: the command-number scanner and the event-stream parser,
 * table-driven, each case fed whole, split at every byte boundary, and one byte at a time
 * (a frame arrives in pieces of any size). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/stream_frame.h"

struct match_case {
    const char *in;
    int found;
    uint64_t seq;
};

static const struct match_case match_cases[] = {
    {"{\"seq\":42}", 1, 42},
    {"{\"seq\": 42, \"pad\": \"x\"}", 1, 42},
    {" \n{ \"seq\" :\t7 }", 1, 7},
    {"{\"seq\":\"15\"}", 1, 15},
    {"{\"a\":1,\"seq\":0}", 1, 0},
    {"{\"a\":{\"seq\":1},\"seq\":2}", 1, 2}, /* nested seq is not the top-level one */
    {"{\"a\":[1,{\"seq\":9}],\"seq\":3}", 1, 3},
    {"{\"a\":\"},\\\"seq\\\":5\",\"seq\":6}", 1, 6}, /* braces and quotes inside a string */
    {"{\"seqx\":1,\"seq\":4}", 1, 4},                /* a longer name is not ours */
    {"{\"se\":1}", 0, 0},
    {"{\"s\\u0065q\":1}", 0, 0}, /* an escaped name is never ours */
    {"{\"seq\":-1}", 0, 0},
    {"{\"seq\":1.5}", 0, 0},
    {"{\"seq\":1e3}", 0, 0},
    {"{\"seq\":\"x\"}", 0, 0},
    {"{\"seq\":\"\"}", 0, 0},
    {"{\"seq\":null}", 0, 0},
    {"{\"seq\":1234567890123456789}", 0, 0}, /* 19 digits: not a command number */
    {"{\"seq\":123456789012345678}", 1, 123456789012345678ULL},
    {"[{\"seq\":1}]", 0, 0},
    {"\"seq\":1", 0, 0},
    {"{\"id\":1}", 0, 0},
    {"{}", 0, 0},
    {"", 0, 0},
    {"{\"seq\":42", 1, 42}, /* the frame ended right after the number */
    {"{\"seq\"", 0, 0},
    {"{\"x\":1}{\"seq\":1}", 0, 0}, /* after the top-level object nothing counts */
};

static int run_match(const char *in, size_t len, size_t split, uint64_t *seq)
{
    struct frame_match m;
    frame_match_init(&m);
    if (split == 0) {
        for (size_t i = 0; i < len; i++)
            frame_match_feed(&m, "seq", 3, in + i, 1);
    } else {
        frame_match_feed(&m, "seq", 3, in, split - 1);
        frame_match_feed(&m, "seq", 3, in + split - 1, len - (split - 1));
    }
    return frame_match_result(&m, seq);
}

static void test_match_table(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(match_cases) / sizeof(match_cases[0]); c++) {
        const struct match_case *mc = &match_cases[c];
        size_t len = strlen(mc->in);
        /* split 0: byte by byte; split k > 0: two pieces at k - 1. */
        for (size_t split = 0; split <= len + 1; split++) {
            uint64_t seq = 999;
            int found = run_match(mc->in, len, split, &seq);
            if (found != mc->found || (found && seq != mc->seq))
                fail_msg("case %zu '%s' split %zu: found %d seq %llu, want %d %llu", c, mc->in,
                         split, found, (unsigned long long)seq, mc->found,
                         (unsigned long long)mc->seq);
        }
    }
}

static void test_match_other_key(void **state)
{
    (void)state;
    struct frame_match m;
    uint64_t seq = 0;
    const char *in = "{\"seq\":1,\"n\":77}";
    frame_match_init(&m);
    frame_match_feed(&m, "n", 1, in, strlen(in));
    assert_int_equal(frame_match_result(&m, &seq), 1);
    assert_int_equal(seq, 77);
}

/* A 16 MiB frame costs the scanner nothing: it is read and forgotten. */
static void test_match_huge_frame(void **state)
{
    (void)state;
    size_t n = 16u << 20;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, 'x', n);
    memcpy(big, "{\"pad\":\"", 8);
    memcpy(big + n - 12, "\",\"seq\":31}", 11);
    big[n - 1] = ' ';
    struct frame_match m;
    uint64_t seq = 0;
    frame_match_init(&m);
    for (size_t off = 0; off < n; off += 4096)
        frame_match_feed(&m, "seq", 3, big + off, n - off < 4096 ? n - off : 4096);
    assert_int_equal(frame_match_result(&m, &seq), 1);
    assert_int_equal(seq, 31);
    free(big);
}

/* ---- event streams ---------------------------------------------------------------------- */

struct events {
    int n;
    int matched[16];
    uint64_t seq[16];
    uint64_t bytes[16];
};

static void on_event(void *ud, int matched, uint64_t seq, uint64_t bytes)
{
    struct events *e = ud;
    if (e->n < 16) {
        e->matched[e->n] = matched;
        e->seq[e->n] = seq;
        e->bytes[e->n] = bytes;
    }
    e->n++;
}

struct sse_case {
    const char *in;
    int rc;
    int n;            /* events dispatched */
    const char *want; /* per event: 'm' matched, '-' not */
    uint64_t seqs[4];
};

static const struct sse_case sse_cases[] = {
    {"data: {\"seq\":1}\n\n", SSE_OK, 1, "m", {1}},
    {"data: {\"seq\":1}\r\n\r\ndata: {\"seq\":2}\r\r", SSE_OK, 2, "mm", {1, 2}},
    {"data:{\"seq\":3}\n\n", SSE_OK, 1, "m", {3}},
    {"event: rename\nid: 9\nretry: 10\ndata: {\"seq\":4}\n\n", SSE_OK, 1, "m", {4}},
    {": comment\n\n", SSE_OK, 0, "", {0}},                  /* no data: not dispatched */
    {"data: {\"se\ndata: q\":1}\n\n", SSE_OK, 1, "-", {0}}, /* lines join with LF */
    {"data: {\"seq\"\ndata: :5}\n\n", SSE_OK, 1, "m", {5}}, /* split between lines */
    {"data: {\"id\":1}\n\n", SSE_OK, 1, "-", {0}},
    {"data: {\"seq\":1}\n", SSE_OK, 0, "", {0}},    /* not yet dispatched */
    {"datax: {\"seq\":1}\n\n", SSE_OK, 0, "", {0}}, /* another field */
    {"dat: {\"seq\":1}\n\n", SSE_OK, 0, "", {0}},
    {"data\n\n", SSE_OK, 1, "-", {0}}, /* empty data is data */
    {"\n\n\n", SSE_OK, 0, "", {0}},
};

static int run_sse(const char *in, size_t len, size_t split, struct events *ev)
{
    struct sse_parser p;
    int rc = SSE_OK;
    memset(ev, 0, sizeof(*ev));
    sse_parser_init(&p);
    if (split == 0) {
        for (size_t i = 0; i < len && rc == SSE_OK; i++)
            rc = sse_parser_feed(&p, "seq", 3, 1 << 20, in + i, 1, on_event, ev);
    } else {
        rc = sse_parser_feed(&p, "seq", 3, 1 << 20, in, split - 1, on_event, ev);
        if (rc == SSE_OK)
            rc = sse_parser_feed(&p, "seq", 3, 1 << 20, in + split - 1, len - (split - 1), on_event,
                                 ev);
    }
    return rc;
}

static void test_sse_table(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof(sse_cases) / sizeof(sse_cases[0]); c++) {
        const struct sse_case *sc = &sse_cases[c];
        size_t len = strlen(sc->in);
        for (size_t split = 0; split <= len + 1; split++) {
            struct events ev;
            int rc = run_sse(sc->in, len, split, &ev);
            if (rc != sc->rc || ev.n != sc->n)
                fail_msg("case %zu split %zu: rc %d events %d, want %d %d", c, split, rc, ev.n,
                         sc->rc, sc->n);
            for (int i = 0; i < ev.n && i < 4; i++) {
                int m = sc->want[i] == 'm';
                if (ev.matched[i] != m || (m && ev.seq[i] != sc->seqs[i]))
                    fail_msg("case %zu split %zu event %d: matched %d seq %llu", c, split, i,
                             ev.matched[i], (unsigned long long)ev.seq[i]);
            }
        }
    }
}

static void test_sse_bytes_and_cap(void **state)
{
    (void)state;
    struct sse_parser p;
    struct events ev;
    const char *two = "data: abc\ndata: de\n\n";
    memset(&ev, 0, sizeof(ev));
    sse_parser_init(&p);
    assert_int_equal(sse_parser_feed(&p, "seq", 3, 100, two, strlen(two), on_event, &ev), SSE_OK);
    assert_int_equal(ev.n, 1);
    assert_int_equal(ev.bytes[0], 6); /* "abc" LF "de" */

    /* An event over the cap is refused, even when it arrives in small pieces. */
    sse_parser_init(&p);
    memset(&ev, 0, sizeof(ev));
    assert_int_equal(sse_parser_feed(&p, "seq", 3, 8, "data: 12345", 11, on_event, &ev), SSE_OK);
    assert_int_equal(sse_parser_feed(&p, "seq", 3, 8, "6789\n\n", 6, on_event, &ev), SSE_TOO_BIG);
    assert_int_equal(ev.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_table),       cmocka_unit_test(test_match_other_key),
        cmocka_unit_test(test_match_huge_frame),  cmocka_unit_test(test_sse_table),
        cmocka_unit_test(test_sse_bytes_and_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
