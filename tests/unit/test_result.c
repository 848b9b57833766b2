/* Tests for src/load/result.c: the reference load test's verdict rules at and around every
 * boundary, the zero-request rule, merging, rates, the result's allocation, and the arithmetic that
 * turns the load threads' statistics and the plan into a run's result. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/plan.h"
#include "load/result.h"

#define S  1000000LL /* microseconds per second */
#define NS 1000000000LL

static const struct profile_thresholds seed000 = {
    .healthy_p95_us = 100000,
    .healthy_errors = 0.01,
    .overloaded_p95_us = 500000,
    .overloaded_errors = 0.01,
};

/* A scope of `requests` requests that all took latency_us, `failed` of them failed. */
static struct load_stats *stats_of(uint64_t requests, uint64_t failed, uint64_t latency_us)
{
    struct load_stats *s = malloc(sizeof(*s));
    assert_non_null(s);
    load_stats_init(s);
    s->requests = requests;
    s->responses = requests;
    s->failed = failed;
    s->status[200] = requests - failed;
    s->status[503] = failed;
    for (uint64_t i = 0; i < requests; i++)
        hist_record(&s->latency, latency_us);
    return s;
}

static void test_verdict_table(void **state)
{
    (void)state;
    static const struct {
        uint64_t requests, failed, p95_us;
        enum verdict want;
    } cases[] = {
        {1000, 0, 38000, VERDICT_HEALTHY},      /* the reference load test's 1w/1.0c row */
        {1000, 0, 99999, VERDICT_HEALTHY},      /* just under healthy p95 */
        {1000, 0, 100000, VERDICT_STRESSED},    /* exactly 100 ms: not below */
        {1000, 0, 100001, VERDICT_STRESSED},    /* */
        {1000, 0, 380000, VERDICT_STRESSED},    /* the reference load test's 1w/0.5c row */
        {1000, 0, 500000, VERDICT_STRESSED},    /* exactly 500 ms: not above */
        {1000, 0, 500001, VERDICT_OVERLOADED},  /* just over */
        {1000, 9, 1000, VERDICT_HEALTHY},       /* 0.9% errors */
        {1000, 10, 1000, VERDICT_STRESSED},     /* exactly 1%: not below, not above */
        {1000, 11, 1000, VERDICT_OVERLOADED},   /* 1.1% */
        {10000, 101, 1000, VERDICT_OVERLOADED}, /* 1.01% */
        {10000, 99, 99999, VERDICT_HEALTHY},    /* both just inside */
        {10000, 100, 500000, VERDICT_STRESSED}, /* both on the line */
        {1000, 1000, 1000, VERDICT_OVERLOADED}, /* everything failed */
        {1, 0, 1, VERDICT_HEALTHY},             /* one fast request */
        {0, 0, 0, VERDICT_OVERLOADED},          /* nothing completed */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct load_stats *s = stats_of(cases[i].requests, cases[i].failed, cases[i].p95_us);
        enum verdict got = verdict_classify(s, &seed000);
        if (got != cases[i].want)
            fail_msg("case %zu (%llu req, %llu failed, p95 %llu us): got %s, want %s", i,
                     (unsigned long long)cases[i].requests, (unsigned long long)cases[i].failed,
                     (unsigned long long)cases[i].p95_us, verdict_name(got),
                     verdict_name(cases[i].want));
        free(s);
    }
}

/* Requests that all ended in transport errors have no latency at all; the error rate alone
 * must make the verdict. */
static void test_verdict_errors_without_latency(void **state)
{
    (void)state;
    struct load_stats s;
    load_stats_init(&s);
    s.requests = 500;
    s.failed = 500;
    s.errors[LOAD_ERR_CONNECT_REFUSED] = 500;
    assert_int_equal(verdict_classify(&s, &seed000), VERDICT_OVERLOADED);
}

/* p95 is the verdict's latency, not p50 or max: a slow 4% tail does not change it, a 6% one
 * does. */
static void test_verdict_uses_p95(void **state)
{
    (void)state;
    struct load_stats s;
    load_stats_init(&s);
    s.requests = 100;
    for (int i = 0; i < 96; i++)
        hist_record(&s.latency, 10000);
    for (int i = 0; i < 4; i++)
        hist_record(&s.latency, 2000000);
    assert_int_equal(verdict_classify(&s, &seed000), VERDICT_HEALTHY);
    load_stats_init(&s);
    s.requests = 100;
    for (int i = 0; i < 94; i++)
        hist_record(&s.latency, 10000);
    for (int i = 0; i < 6; i++)
        hist_record(&s.latency, 2000000);
    assert_int_equal(verdict_classify(&s, &seed000), VERDICT_OVERLOADED);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(verdict_name(VERDICT_HEALTHY), "HEALTHY");
    assert_string_equal(verdict_name(VERDICT_STRESSED), "STRESSED");
    assert_string_equal(verdict_name(VERDICT_OVERLOADED), "OVERLOADED");
    static const char *const want[LOAD_ERR_COUNT] = {
        "connect_refused", "connect_timeout",     "reset", "timeout",
        "bad_response",    "too_many_open_files", "tls",   "other",
    };
    for (int c = 0; c < LOAD_ERR_COUNT; c++)
        assert_string_equal(load_errclass_name((enum load_errclass)c), want[c]);
}

static void test_rates(void **state)
{
    (void)state;
    struct load_stats *s = stats_of(400, 10, 1000);
    assert_true(load_stats_error_rate(s) == 0.025);
    assert_true(load_stats_throughput(s, 2.0) == 200.0);
    assert_true(load_stats_throughput(s, 0) == 0);
    load_stats_init(s);
    assert_true(load_stats_error_rate(s) == 0);
    assert_true(load_stats_throughput(s, 10) == 0);
    free(s);
}

static void test_merge(void **state)
{
    (void)state;
    struct load_stats *a = stats_of(100, 5, 2000);
    struct load_stats *b = stats_of(50, 1, 9000);
    a->errors[LOAD_ERR_TIMEOUT] = 3;
    b->errors[LOAD_ERR_TIMEOUT] = 4;
    b->errors[LOAD_ERR_TLS] = 1;
    a->bytes_in = 1000;
    b->bytes_in = 24;
    a->bytes_out = 7;
    b->bytes_out = 8;
    b->status[404] = 2;
    struct load_stats *sum = malloc(sizeof(*sum));
    assert_non_null(sum);
    load_stats_init(sum);
    load_stats_merge(sum, a);
    load_stats_merge(sum, b);
    assert_int_equal(sum->requests, 150);
    assert_int_equal(sum->responses, 150);
    assert_int_equal(sum->failed, 6);
    assert_int_equal(sum->status[200], 144);
    assert_int_equal(sum->status[503], 6);
    assert_int_equal(sum->status[404], 2);
    assert_int_equal(sum->errors[LOAD_ERR_TIMEOUT], 7);
    assert_int_equal(sum->errors[LOAD_ERR_TLS], 1);
    assert_int_equal(sum->bytes_in, 1024);
    assert_int_equal(sum->bytes_out, 15);
    assert_int_equal(sum->latency.count, 150);
    assert_int_equal(sum->latency.min_us, 2000);
    assert_int_equal(sum->latency.max_us, 9000);
    assert_int_equal(sum->latency.sum_us, 100 * 2000 + 50 * 9000);
    free(a);
    free(b);
    free(sum);
}

static void test_result_init_free(void **state)
{
    (void)state;
    struct profile p;
    struct profile_request reqs[3] = {
        {.name = "home", .method = "GET", .path = "/", .weight = 1},
        {.name = "list", .method = "GET", .path = "/list", .weight = 2},
        {.name = "vote", .method = "POST", .path = "/v", .weight = 3},
    };
    struct profile_stage stages[2] = {
        {.duration_us = 30000000, .users = 10, .rate = -1},
        {.duration_us = 1500000, .users = 0, .rate = -1},
    };
    memset(&p, 0, sizeof(p));
    p.requests = reqs;
    p.nrequests = 3;
    p.stages = stages;
    p.nstages = 2;

    struct load_result r;
    assert_int_equal(load_result_init(&r, &p), 0);
    assert_int_equal(r.nnames, 3);
    assert_string_equal(r.names[0], "home");
    assert_string_equal(r.names[2], "vote");
    assert_ptr_not_equal(r.names[1], reqs[1].name); /* an owned copy */
    assert_int_equal(r.by_name[1].requests, 0);
    assert_int_equal(r.by_name[1].latency.count, 0);
    assert_int_equal(r.by_name[1].latency.min_us, UINT64_MAX);
    assert_int_equal(r.nstages, 2);
    assert_true(r.stage_duration_s[0] == 30.0);
    assert_true(r.stage_duration_s[1] == 1.5);
    assert_int_equal(r.total.requests, 0);
    load_result_free(&r);
    assert_null(r.names);
    assert_int_equal(r.nnames, 0);
    load_result_free(&r); /* on a zeroed result: no-op */
    load_result_free(NULL);

    /* No stages: no stage arrays. */
    p.nstages = 0;
    p.stages = NULL;
    assert_int_equal(load_result_init(&r, &p), 0);
    assert_null(r.by_stage);
    assert_int_equal(r.nstages, 0);
    load_result_free(&r);
}

/* A profile of two request names with the given stages (none: a flat run of `users` users or
 * `rate` requests/s for dur_us after warm_us of warm-up), the reference load test's thresholds. */
static struct profile two_names(struct profile_stage *st, size_t nst, unsigned users, double rate,
                                int64_t dur_us, int64_t warm_us)
{
    static struct profile_request reqs[2] = {
        {.name = "a", .method = "GET", .path = "/a", .weight = 1},
        {.name = "b", .method = "GET", .path = "/b", .weight = 1},
    };
    return (struct profile){.requests = reqs,
                            .nrequests = 2,
                            .stages = st,
                            .nstages = nst,
                            .users = users,
                            .rate = rate,
                            .duration_us = dur_us,
                            .warmup_us = warm_us,
                            .thresholds = seed000};
}

static void test_add_threads(void **state)
{
    (void)state;
    struct profile_stage st[1] = {{10 * S, 4, -1}};
    struct profile p = two_names(st, 1, 0, 0, 0, 0);
    struct load_result r;
    assert_int_equal(load_result_init(&r, &p), 0);

    /* Two threads: names a and b, and the one stage that saw all of them. */
    struct load_stats *t1 = calloc(3, sizeof(*t1)), *t2 = calloc(3, sizeof(*t2));
    assert_non_null(t1);
    assert_non_null(t2);
    struct load_stats *parts[4] = {stats_of(100, 1, 1000), stats_of(20, 0, 3000),
                                   stats_of(40, 2, 2000), stats_of(10, 10, 9000)};
    t1[0] = *parts[0];
    t1[1] = *parts[1];
    t2[0] = *parts[2];
    t2[1] = *parts[3];
    load_stats_init(&t1[2]);
    load_stats_merge(&t1[2], &t1[0]);
    load_stats_merge(&t1[2], &t1[1]);
    load_stats_init(&t2[2]);
    load_stats_merge(&t2[2], &t2[0]);
    load_stats_merge(&t2[2], &t2[1]);
    load_result_add_thread(&r, t1, &t1[2]);
    load_result_add_thread(&r, t2, &t2[2]);

    assert_int_equal(r.by_name[0].requests, 140);
    assert_int_equal(r.by_name[0].failed, 3);
    assert_int_equal(r.by_name[1].requests, 30);
    assert_int_equal(r.by_name[1].failed, 10);
    assert_int_equal(r.by_name[1].latency.max_us, 9000);
    /* The total is the sum over names, the stage the sum over threads. */
    assert_int_equal(r.total.requests, 170);
    assert_int_equal(r.total.failed, 13);
    assert_int_equal(r.total.latency.count, 170);
    assert_int_equal(r.total.status[503], 13);
    assert_int_equal(r.by_stage[0].requests, 170);
    assert_int_equal(r.by_stage[0].latency.sum_us, r.total.latency.sum_us);
    for (int i = 0; i < 4; i++)
        free(parts[i]);
    free(t1);
    free(t2);
    load_result_free(&r);
}

static void test_finish_closed_loop(void **state)
{
    (void)state;
    struct profile p = two_names(NULL, 0, 50, 0, 20 * S, 5 * S);
    struct plan pl;
    struct load_result r;
    assert_int_equal(plan_build(&p, &pl, NULL), 0);
    assert_int_equal(load_result_init(&r, &p), 0);
    struct load_stats *fast = stats_of(1000, 0, 38000);
    load_stats_merge(&r.total, fast);

    /* Ran to the plan's end: the window is the measured 20 s, the warm-up not in it. */
    load_result_finish(&r, &pl, &p, pl.end_ns, 0);
    assert_true(r.duration_s == 20.0);
    assert_false(r.interrupted);
    assert_true(r.target_rate_rps == 0 && r.achieved_rate_rps == 0); /* closed loop */
    assert_int_equal(r.verdict, VERDICT_HEALTHY);

    /* Stopped 7 s into the window: 7 s measured, and the result says it was cut short. */
    load_result_finish(&r, &pl, &p, pl.measure_start_ns + 7 * NS, 0);
    assert_true(r.duration_s == 7.0);
    assert_true(r.interrupted);

    /* Stopped during the warm-up: nothing measured, never a negative window. */
    load_result_finish(&r, &pl, &p, 2 * NS, 0);
    assert_true(r.duration_s == 0);
    free(fast);
    load_result_free(&r);
    plan_free(&pl);
}

static void test_finish_open_loop_stages(void **state)
{
    (void)state;
    struct profile_stage st[2] = {
        {10 * S, -1, 100}, /* 0 -> 100/s: 500 requests due */
        {10 * S, -1, 100}, /* flat 100/s: 1000 due */
    };
    struct profile p = two_names(st, 2, 0, 0, 0, 0);
    struct plan pl;
    struct load_result r;
    assert_int_equal(plan_build(&p, &pl, NULL), 0);
    assert_int_equal(load_result_init(&r, &p), 0);

    /* The requested rate is the mean over the measured stages: 1500 due in 20 s. */
    load_result_finish(&r, &pl, &p, pl.end_ns, 1400);
    assert_true(fabs(r.target_rate_rps - 75.0) < 1e-9);
    assert_true(fabs(r.achieved_rate_rps - 70.0) < 1e-9);
    assert_true(r.stage_duration_s[0] == 10.0 && r.stage_duration_s[1] == 10.0);
    assert_int_equal(r.verdict, VERDICT_OVERLOADED); /* nothing completed */

    /* Stopped 15 s in: the second stage ran 5 s, the rate is over what ran. */
    load_result_finish(&r, &pl, &p, 15 * NS, 900);
    assert_true(r.interrupted);
    assert_true(r.stage_duration_s[0] == 10.0 && r.stage_duration_s[1] == 5.0);
    assert_true(fabs(r.achieved_rate_rps - 60.0) < 1e-9);
    assert_true(fabs(r.target_rate_rps - 75.0) < 1e-9);
    load_result_free(&r);
    plan_free(&pl);

    /* A flat open-loop run asks for the profile's rate. */
    p = two_names(NULL, 0, 0, 250, 4 * S, 1 * S);
    assert_int_equal(plan_build(&p, &pl, NULL), 0);
    assert_int_equal(load_result_init(&r, &p), 0);
    load_result_finish(&r, &pl, &p, pl.end_ns, 1000);
    assert_true(r.target_rate_rps == 250.0);
    assert_true(r.achieved_rate_rps == 250.0);
    assert_true(r.duration_s == 4.0);
    load_result_free(&r);
    plan_free(&pl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_table),
        cmocka_unit_test(test_verdict_errors_without_latency),
        cmocka_unit_test(test_verdict_uses_p95),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_result_init_free),
        cmocka_unit_test(test_add_threads),
        cmocka_unit_test(test_finish_closed_loop),
        cmocka_unit_test(test_finish_open_loop_stages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
