/* Tests for src/sweep/stream_search.c: judging a stream step (drops, refused opens, delivery
 * p95, missing frames, sizeup's own stream threads), the memory line through the steps, and a
 * whole search on the stream count against synthetic servers with a known capacity and a known
 * memory per stream. */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/stream_search.h"

#define MS 1000

static const struct profile_slo SLO = {
    .p95_us = 100 * MS, .errors = 0.01, .delivery_p95_us = 200 * MS};

static struct stream_cap_step held(unsigned n, uint64_t p95_us)
{
    struct stream_cap_step st;
    memset(&st, 0, sizeof(st));
    st.streams = n;
    st.open = n;
    st.opened = n;
    st.delivery_samples = 100;
    st.delivery_p95_us = p95_us;
    st.expected = 1000;
    st.cpu_cores = -1;
    st.memory_bytes = -1;
    return st;
}

static void test_judge(void **state)
{
    (void)state;
    enum stream_limit why;
    struct stream_cap_step st = held(100, 150 * MS);
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_PASS);
    assert_int_equal(why, STREAM_LIMIT_NONE);

    st.delivery_p95_us = 200 * MS; /* at the objective is not within it */
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_FAIL);
    assert_int_equal(why, STREAM_LIMIT_DELIVERY_P95);

    st = held(100, 10 * MS);
    st.dropped = 1;
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_FAIL);
    assert_int_equal(why, STREAM_LIMIT_DROPPED);

    st = held(100, 10 * MS);
    st.failed = 3; /* refused at the handshake */
    st.open = 97;
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_FAIL);
    assert_int_equal(why, STREAM_LIMIT_DROPPED);

    st = held(100, 10 * MS);
    st.missing = 9; /* 0.9% of 1000: within 1% */
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_PASS);
    st.missing = 10;
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_FAIL);
    assert_int_equal(why, STREAM_LIMIT_MISSING);

    /* sizeup's busiest stream thread at 95% of a core: it, not the app, set the limit. */
    st = held(100, 900 * MS);
    st.stream_cores = 0.95;
    assert_int_equal(stream_search_judge(&st, &SLO, &why), SEARCH_GEN_LIMITED);
    assert_int_equal(why, STREAM_LIMIT_GENERATOR);

    /* Without producers there is no delivery to judge: holding the streams is enough. */
    st = held(100, 0);
    st.delivery_samples = 0;
    st.expected = 0;
    assert_int_equal(stream_search_judge(&st, &SLO, NULL), SEARCH_PASS);
}

static void test_memory_fit(void **state)
{
    (void)state;
    struct stream_cap_step steps[5];
    double slope = -1, base = -1;
    unsigned points = 0;
    const unsigned n[5] = {0, 100, 200, 400, 300};

    for (size_t i = 0; i < 5; i++) {
        steps[i] = held(n[i], 0);
        /* 41 KiB per stream on a 180 MiB base, +-64 KiB of noise. */
        steps[i].memory_bytes =
            180LL * 1048576 + (int64_t)n[i] * 41 * 1024 + (i % 2 ? 65536 : -65536);
        steps[i].memory_point = i < 4; /* the last came after a shrink: not a new high */
    }
    steps[4].memory_bytes = 1; /* would wreck the line if it were used */
    assert_true(stream_memory_fit(steps, 5, &slope, &base, &points));
    assert_int_equal(points, 4);
    assert_true(fabs(slope - 41 * 1024) < 0.02 * 41 * 1024);
    assert_true(fabs(base - 180.0 * 1048576) < 0.01 * 180.0 * 1048576);

    /* One point, or two at the same count, give no slope. */
    steps[1].memory_point = steps[2].memory_point = steps[3].memory_point = false;
    assert_false(stream_memory_fit(steps, 5, &slope, &base, &points));
    steps[1] = steps[0];
    steps[1].memory_point = true;
    assert_false(stream_memory_fit(steps, 2, &slope, &base, &points));
    /* An unknown memory is not a point. */
    steps[1] = held(100, 0);
    steps[1].memory_point = true;
    assert_false(stream_memory_fit(steps, 2, &slope, &base, &points));
}

/* A synthetic server: delivery p95 = 20 ms + 1 ms per 10 streams, refuses streams above
 * max_open (0: none), 50 KiB per stream on a 100 MiB base. Runs the search as the runner
 * does (zero point first) and finishes the capacity. */
static void run(unsigned count, unsigned max_open, unsigned max_steps, struct stream_capacity *cap)
{
    struct search s;
    struct search_opts o = {.start_rps = count / 16 ? count / 16 : 1,
                            .precision = 0.05,
                            .max_steps = max_steps,
                            .max_rps = count};
    uint64_t high_water = 0;
    double rate;

    memset(cap, 0, sizeof(*cap));
    cap->searched = true;
    search_init(&s, &o);
    for (;;) {
        unsigned n = 0;
        if (cap->nsteps > 0) {
            if (!search_next(&s, &rate))
                break;
            n = (unsigned)llround(rate);
            if (s.low > 0 && s.high > 0 && (n <= (unsigned)s.low || n >= (unsigned)s.high)) {
                search_out_of_time(&s);
                break;
            }
        }
        struct stream_cap_step *st = &cap->steps[cap->nsteps++];
        *st = held(n, (uint64_t)(20 * MS + n * 100));
        if (max_open && n > max_open) {
            st->open = max_open;
            st->failed = n - max_open;
        }
        st->memory_bytes = 100LL * 1048576 + (int64_t)st->open * 50 * 1024;
        if (st->open > high_water || n == 0) {
            st->memory_point = true;
            high_water = st->open > high_water ? st->open : high_water;
        }
        enum search_outcome oc = stream_search_judge(st, &SLO, &st->why);
        st->pass = oc == SEARCH_PASS;
        if (n > 0)
            search_record(&s, n, oc, stream_search_as_capacity(st->why));
        assert_true(cap->nsteps < STREAM_CAP_MAX_STEPS);
    }
    if (!s.done)
        search_out_of_time(&s);
    stream_capacity_finish(cap, &s);
}

static void test_search_delivery_bound(void **state)
{
    (void)state;
    struct stream_capacity cap;
    /* p95 reaches 200 ms at 1800 streams. */
    run(8000, 0, 12, &cap);
    assert_true(cap.valid);
    assert_int_equal(cap.limited_by, STREAM_LIMIT_DELIVERY_P95);
    assert_true(cap.streams < 1800 && cap.streams >= 1800 * 0.95);
    assert_int_equal(cap.memory_per_stream_bytes, 50 * 1024);
    assert_int_equal(cap.base_memory_bytes, 100LL * 1048576);
    assert_true(cap.memory_points >= 3);
    assert_true(cap.delivery_p95_ms < 200 && cap.delivery_p95_ms > 190);
    assert_int_equal(cap.memory_bytes, 100LL * 1048576 + (int64_t)cap.streams * 50 * 1024);
}

static void test_search_refused_streams(void **state)
{
    (void)state;
    struct stream_capacity cap;
    run(1000, 300, 12, &cap);
    assert_true(cap.valid);
    assert_int_equal(cap.limited_by, STREAM_LIMIT_DROPPED);
    assert_true(cap.streams <= 300 && cap.streams >= 300 * 0.95);
    /* The refused steps held 300 streams: their memory is still on the line. */
    assert_int_equal(cap.memory_per_stream_bytes, 50 * 1024);
}

static void test_search_ceiling_and_budget(void **state)
{
    (void)state;
    struct stream_capacity cap;
    run(1000, 0, 12, &cap); /* everything passes up to streams.count */
    assert_int_equal(cap.streams, 1000);
    assert_int_equal(cap.limited_by, STREAM_LIMIT_MAX_STREAMS);
    assert_true(cap.valid);

    run(8000, 0, 2, &cap); /* two steps: 500 and 1000 pass, no bracket */
    assert_int_equal(cap.streams, 1000);
    assert_int_equal(cap.limited_by, STREAM_LIMIT_BUDGET);
    assert_false(cap.valid);
    assert_true(cap.flags & STREAM_CAP_FLAG_BUDGET);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(stream_limit_name(STREAM_LIMIT_DELIVERY_P95), "delivery-p95");
    assert_string_equal(stream_limit_name(STREAM_LIMIT_DROPPED), "dropped");
    assert_string_equal(stream_limit_name(STREAM_LIMIT_MISSING), "missing");
    assert_string_equal(stream_limit_name(STREAM_LIMIT_MEMORY), "memory");
    assert_string_equal(stream_limit_name(STREAM_LIMIT_MAX_STREAMS), "max-streams");
    assert_int_equal(stream_search_as_capacity(STREAM_LIMIT_DELIVERY_P95), CAPACITY_LIMIT_SLO_P95);
    assert_int_equal(stream_search_as_capacity(STREAM_LIMIT_MEMORY), CAPACITY_LIMIT_SLO_ERRORS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_memory_fit),
        cmocka_unit_test(test_search_delivery_bound),
        cmocka_unit_test(test_search_refused_streams),
        cmocka_unit_test(test_search_ceiling_and_budget),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
