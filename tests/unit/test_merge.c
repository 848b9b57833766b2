/* Tests for src/load/merge.c: results of generators that ran side by side merge into exactly
 * the result one generator computes from the same samples (counts, histograms, percentiles,
 * verdict), and parts of different profiles are refused. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/merge.h"

static const struct profile_thresholds seed000 = {
    .healthy_p95_us = 100000,
    .healthy_errors = 0.01,
    .overloaded_p95_us = 500000,
    .overloaded_errors = 0.01,
};

static struct profile_request reqs[2] = {{.name = "list"}, {.name = "vote"}};
static struct profile_stage stages[2] = {{.duration_us = 5000000, .users = 10, .rate = -1},
                                         {.duration_us = 5000000, .users = 20, .rate = -1}};

static struct profile prof(void)
{
    struct profile p;
    memset(&p, 0, sizeof(p));
    p.requests = reqs;
    p.nrequests = 2;
    p.stages = stages;
    p.nstages = 2;
    return p;
}

/* A deterministic generator of samples (xorshift), so a failure reproduces. */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Records one request into the scopes a load thread would: its name, its stage, the total. */
static void record(struct load_result *r, size_t name, size_t stage, uint64_t us, int code)
{
    struct load_stats *scopes[3] = {&r->by_name[name], &r->by_stage[stage], &r->total};
    for (size_t i = 0; i < 3; i++) {
        struct load_stats *s = scopes[i];
        s->requests++;
        if (code) {
            s->responses++;
            s->status[code]++;
            s->failed += code >= 400;
        } else {
            s->errors[LOAD_ERR_RESET]++;
            s->failed++;
        }
        s->bytes_in += 100 + us % 7;
        s->bytes_out += 40;
        hist_record(&s->latency, us);
    }
}

static void assert_stats_equal(const struct load_stats *a, const struct load_stats *b)
{
    assert_int_equal(a->requests, b->requests);
    assert_int_equal(a->responses, b->responses);
    assert_int_equal(a->failed, b->failed);
    assert_memory_equal(a->status, b->status, sizeof(a->status));
    assert_memory_equal(a->errors, b->errors, sizeof(a->errors));
    assert_int_equal(a->bytes_in, b->bytes_in);
    assert_int_equal(a->bytes_out, b->bytes_out);
    /* Bucket for bucket, plus count, sum, min, max and overflow: the histograms are equal, so
     * every percentile read from them is. */
    assert_memory_equal(&a->latency, &b->latency, sizeof(a->latency));
    for (double q = 0; q <= 100; q += 0.5)
        assert_int_equal(hist_percentile(&a->latency, q), hist_percentile(&b->latency, q));
}

/* The same samples dealt to 1..7 generators (round-robin or at random, some with a slow tail
 * or failures) merge into what one generator recorded. */
static void test_merge_equals_single_run(void **state)
{
    (void)state;
    struct profile p = prof();
    char err[ERR_LEN];

    for (unsigned parts = 1; parts <= 7; parts++) {
        struct load_result single, merged, part[7];
        uint64_t seed = 0x9e3779b97f4a7c15ULL + parts;

        assert_int_equal(load_result_init(&single, &p), 0);
        assert_int_equal(load_result_init(&merged, &p), 0);
        for (unsigned k = 0; k < parts; k++) {
            assert_int_equal(load_result_init(&part[k], &p), 0);
            part[k].duration_s = 10.0 - 0.01 * k;
            part[k].tool_cpu_s = 0.5;
            part[k].users = 10;
            part[k].threads = 2;
        }
        single.duration_s = 10.0;
        for (unsigned i = 0; i < 20000; i++) {
            uint64_t x = next(&seed);
            /* Mostly fast, a tail up to seconds, some 503s and resets. */
            uint64_t us = x % 100 < 95 ? 200 + x % 50000 : 100000 + x % 3000000;
            int code = x % 1000 < 5 ? 503 : x % 1000 < 7 ? 0 : 200;
            size_t name = (x >> 20) % 2, stage = (x >> 24) % 2;
            unsigned k = parts > 1 && (x >> 30) % 2 ? (unsigned)((x >> 32) % parts) : i % parts;
            record(&single, name, stage, us, code);
            record(&part[k], name, stage, us, code);
        }
        for (unsigned k = 0; k < parts; k++)
            assert_int_equal(load_result_merge(&merged, &part[k], &seed000, err), 0);

        assert_stats_equal(&merged.total, &single.total);
        for (size_t n = 0; n < 2; n++)
            assert_stats_equal(&merged.by_name[n], &single.by_name[n]);
        for (size_t s = 0; s < 2; s++)
            assert_stats_equal(&merged.by_stage[s], &single.by_stage[s]);
        assert_int_equal(merged.verdict, verdict_classify(&single.total, &seed000));
        /* One window, not the sum of the parts' windows: the throughput is the single one's. */
        assert_true(merged.duration_s == 10.0);
        assert_true(load_stats_throughput(&merged.total, merged.duration_s) ==
                    load_stats_throughput(&single.total, single.duration_s));
        assert_int_equal(merged.users, 10 * parts);
        assert_int_equal(merged.threads, 2 * parts);
        assert_true(merged.tool_cpu_s > 0.5 * parts - 1e-9 &&
                    merged.tool_cpu_s < 0.5 * parts + 1e-9);
        for (unsigned k = 0; k < parts; k++)
            load_result_free(&part[k]);
        load_result_free(&single);
        load_result_free(&merged);
    }
}

/* The verdict is judged on the merged samples, not taken from a part: two HEALTHY halves of a
 * load whose combined p95 is over the line merge into a STRESSED result. */
static void test_merge_judges_the_whole(void **state)
{
    (void)state;
    struct profile p = prof();
    struct load_result a, b, m;
    char err[ERR_LEN];

    assert_int_equal(load_result_init(&a, &p), 0);
    assert_int_equal(load_result_init(&b, &p), 0);
    assert_int_equal(load_result_init(&m, &p), 0);
    for (int i = 0; i < 960; i++)
        record(&a, 0, 0, 1000, 200);
    for (int i = 0; i < 40; i++)
        record(&a, 0, 0, 200000, 200); /* 4% slow: a's p95 is fast */
    for (int i = 0; i < 960; i++)
        record(&b, 0, 0, 1000, 200);
    for (int i = 0; i < 40; i++)
        record(&b, 0, 0, 200000, 200);
    a.verdict = verdict_classify(&a.total, &seed000);
    b.verdict = verdict_classify(&b.total, &seed000);
    assert_int_equal(a.verdict, VERDICT_HEALTHY);
    for (int i = 0; i < 100; i++)
        record(&b, 1, 1, 300000, 200); /* b gets another 100 slow ones of the other name */
    assert_int_equal(load_result_merge(&m, &a, &seed000, err), 0);
    assert_int_equal(m.verdict, VERDICT_HEALTHY);
    assert_int_equal(load_result_merge(&m, &b, &seed000, err), 0);
    assert_int_equal(m.total.requests, 2100);
    assert_int_equal(m.verdict, VERDICT_STRESSED); /* 180 of 2100 slow: p95 over 100 ms */
    load_result_free(&a);
    load_result_free(&b);
    load_result_free(&m);
}

/* A part from another profile (other names, other stages) is refused and changes nothing. */
static void test_merge_refuses_other_shapes(void **state)
{
    (void)state;
    struct profile p = prof(), q = prof(), r = prof();
    struct profile_request other[2] = {{.name = "list"}, {.name = "login"}};
    struct load_result m, a, b;
    char err[ERR_LEN] = "";

    q.requests = other;
    r.nstages = 1;
    assert_int_equal(load_result_init(&m, &p), 0);
    assert_int_equal(load_result_init(&a, &q), 0);
    assert_int_equal(load_result_init(&b, &r), 0);
    record(&a, 0, 0, 1000, 200);
    record(&b, 0, 0, 1000, 200);
    assert_int_equal(load_result_merge(&m, &a, &seed000, err), -EINVAL);
    assert_non_null(strstr(err, "login"));
    assert_int_equal(load_result_merge(&m, &b, &seed000, err), -EINVAL);
    assert_non_null(strstr(err, "stages"));
    assert_int_equal(m.total.requests, 0);
    load_result_free(&m);
    load_result_free(&a);
    load_result_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_equals_single_run),
        cmocka_unit_test(test_merge_judges_the_whole),
        cmocka_unit_test(test_merge_refuses_other_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
