/* Tests for src/load/merge.c: results of generators that ran side by side merge into exactly
 * the result one generator computes from the same samples (counts, histograms, percentiles,
 * verdict), per URL and per series point too (each point's percentiles from the union of the
 * parts' samples in that interval, never an average of theirs), also when the parts come as a
 * generator serves them (JSON with each point's histogram); parts of different profiles or
 * targets are refused. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/merge.h"
#include "load/report.h"

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

/* Records one request of latency us at t_s seconds into r's total, name 0, stage 0 and its
 * series. */
static void record_at(struct load_result *r, double t_s, uint64_t us)
{
    record(r, 0, 0, us, 200);
    struct series_slot *sl = series_slot(r->series_rec, (int64_t)(t_s * 1e9));
    assert_non_null(sl);
    sl->count++;
    hist_record(&sl->h, us);
}

static void with_series(struct load_result *r, const struct profile *p)
{
    assert_int_equal(load_result_init(r, p), 0);
    r->series_rec = calloc(1, sizeof(*r->series_rec));
    assert_non_null(r->series_rec);
    assert_int_equal(series_rec_init(r->series_rec, 0), 0);
    r->duration_s = 2.0;
}

/* Two generators over the same 2 s: in second 0, a is fast (1000 x 1 ms) and b slow (100 x
 * 200 ms); in second 1, a has 1000 x 1 ms and b 1000 x 50 ms. Every merged point's
 * p50/p95/p99 is the union's (one histogram of every sample of that second), which averaging
 * the parts' percentiles would miss by far: second 0's p50 is 1 ms, not ~100 ms. */
static void check_union(const struct load_result *m, const struct hist u[2])
{
    assert_int_equal(m->series.n, 2);
    assert_int_equal(m->series.pts[0].requests, 1100);
    assert_int_equal(m->series.pts[1].requests, 2000);
    const double q[3] = {50, 95, 99};
    for (size_t i = 0; i < 2; i++) {
        const struct series_point *pt = &m->series.pts[i];
        const uint64_t got[3] = {pt->p50_us, pt->p95_us, pt->p99_us};
        for (size_t k = 0; k < 3; k++)
            assert_int_equal(got[k], hist_percentile(&u[i], q[k]));
    }
}

static void test_merge_series_from_union(void **state)
{
    (void)state;
    struct profile p = prof();
    struct load_result a, b, m, mj;
    struct hist u[2];
    char err[ERR_LEN] = "";

    hist_init(&u[0]);
    hist_init(&u[1]);
    with_series(&a, &p);
    with_series(&b, &p);
    for (int i = 0; i < 1000; i++) {
        record_at(&a, 0.0005 * i, 1000);
        hist_record(&u[0], 1000);
        record_at(&a, 1 + 0.0005 * i, 1000);
        hist_record(&u[1], 1000);
        record_at(&b, 1 + 0.0005 * i, 50000);
        hist_record(&u[1], 50000);
    }
    for (int i = 0; i < 100; i++) {
        record_at(&b, 0.005 * i, 200000);
        hist_record(&u[0], 200000);
    }
    assert_int_equal(load_result_render_series(&a, NULL), 0);
    assert_int_equal(load_result_render_series(&b, NULL), 0);
    /* What averaging would give is far from the union: the test tells the two apart. */
    uint64_t avg_p50 = (a.series.pts[0].p50_us + b.series.pts[0].p50_us) / 2;
    assert_true(avg_p50 > 50 * hist_percentile(&u[0], 50));
    assert_true(hist_percentile(&u[1], 50) < (a.series.pts[1].p50_us + b.series.pts[1].p50_us) / 2);

    /* In process (load/spread.c's shares). */
    assert_int_equal(load_result_init(&m, &p), 0);
    assert_int_equal(load_result_merge(&m, &a, &seed000, err), 0);
    assert_int_equal(load_result_merge(&m, &b, &seed000, err), 0);
    check_union(&m, u);

    /* As the operator gets them: each part served as JSON with its points' histograms. */
    assert_int_equal(load_result_init(&mj, &p), 0);
    const struct load_result *parts[2] = {&a, &b};
    for (size_t k = 0; k < 2; k++) {
        cJSON *j = report_json_mergeable(parts[k]);
        struct load_result back;
        assert_non_null(j);
        assert_int_equal(report_json_parse(j, &back, err), 0);
        assert_non_null(back.series_rec);
        assert_int_equal(load_result_merge(&mj, &back, &seed000, err), 0);
        load_result_free(&back);
        cJSON_Delete(j);
    }
    check_union(&mj, u);
    /* And the merged result written out and read back keeps them (a part of a larger merge). */
    cJSON *j = report_json_mergeable(&mj);
    struct load_result back;
    assert_int_equal(report_json_parse(j, &back, err), 0);
    check_union(&back, u);
    load_result_free(&back);
    cJSON_Delete(j);

    /* A part that measured requests but carries no point histograms (an older generator):
     * no series rather than a partial one. */
    cJSON *plain = report_json(&b);
    assert_int_equal(report_json_parse(plain, &back, err), 0);
    assert_null(back.series_rec);
    assert_int_equal(load_result_merge(&mj, &back, &seed000, err), 0);
    assert_int_equal(mj.series.n, 0);
    assert_null(mj.series_rec);
    assert_int_equal(load_result_merge(&mj, &a, &seed000, err), 0);
    assert_int_equal(mj.series.n, 0);
    load_result_free(&back);
    cJSON_Delete(plain);

    load_result_free(&a);
    load_result_free(&b);
    load_result_free(&m);
    load_result_free(&mj);
}

/* A part whose series is shorter (or at a coarser interval) still lines up by start time. */
static void test_merge_series_uneven(void **state)
{
    (void)state;
    struct profile p = prof();
    struct load_result a, b, m;
    char err[ERR_LEN] = "";

    with_series(&a, &p);
    with_series(&b, &p);
    a.duration_s = 4.0;
    for (int s = 0; s < 4; s++)
        record_at(&a, s + 0.5, 1000);
    b.duration_s = 1.0; /* b covers only the first second */
    record_at(&b, 0.5, 3000);
    assert_int_equal(load_result_render_series(&a, NULL), 0);
    assert_int_equal(load_result_render_series(&b, NULL), 0);
    assert_int_equal(load_result_init(&m, &p), 0);
    assert_int_equal(load_result_merge(&m, &b, &seed000, err), 0);
    assert_int_equal(load_result_merge(&m, &a, &seed000, err), 0);
    assert_int_equal(m.series.n, 4);
    assert_int_equal(m.series.pts[0].requests, 2);
    for (size_t i = 1; i < 4; i++)
        assert_int_equal(m.series.pts[i].requests, 1);
    assert_true(m.series.pts[0].p99_us >= 2990 && m.series.pts[0].p99_us <= 3010);
    load_result_free(&a);
    load_result_free(&b);
    load_result_free(&m);
}

static void set_urls(struct load_result *r, const char *u0, const char *u1)
{
    r->nurls = 2;
    r->urls = calloc(2, sizeof(*r->urls));
    r->by_url = calloc(2, sizeof(*r->by_url));
    assert_non_null(r->urls);
    assert_non_null(r->by_url);
    r->urls[0] = strdup(u0);
    r->urls[1] = strdup(u1);
    load_stats_init(&r->by_url[0]);
    load_stats_init(&r->by_url[1]);
}

/* Each generator spreads its share over the same replicas (by_url): the merge adds each URL's
 * figures exactly, and refuses a part with other targets. */
static void test_merge_by_url(void **state)
{
    (void)state;
    struct profile p = prof();
    struct load_result a, b, c, m;
    char err[ERR_LEN] = "";

    assert_int_equal(load_result_init(&a, &p), 0);
    assert_int_equal(load_result_init(&b, &p), 0);
    assert_int_equal(load_result_init(&c, &p), 0);
    set_urls(&a, "http://10.0.0.1:80", "http://10.0.0.2:80");
    set_urls(&b, "http://10.0.0.1:80", "http://10.0.0.2:80");
    set_urls(&c, "http://10.0.0.1:80", "http://10.0.0.3:80");
    for (int i = 0; i < 30; i++) {
        record(&a, 0, 0, 1000, 200);
        record(&b, 0, 0, 90000, 200);
        record(&c, 0, 0, 1000, 200);
    }
    a.by_url[0] = a.total; /* all of a's to the first replica */
    for (int i = 0; i < 10; i++)
        hist_record(&b.by_url[0].latency, 90000), b.by_url[0].requests++;
    for (int i = 0; i < 20; i++)
        hist_record(&b.by_url[1].latency, 90000), b.by_url[1].requests++;

    /* Through JSON, as the operator takes them. */
    assert_int_equal(load_result_init(&m, &p), 0);
    struct load_result *parts[2] = {&a, &b};
    for (size_t k = 0; k < 2; k++) {
        cJSON *j = report_json_mergeable(parts[k]);
        struct load_result back;
        assert_int_equal(report_json_parse(j, &back, err), 0);
        assert_int_equal(load_result_merge(&m, &back, &seed000, err), 0);
        load_result_free(&back);
        cJSON_Delete(j);
    }
    assert_int_equal(m.nurls, 2);
    assert_string_equal(m.urls[0], "http://10.0.0.1:80");
    assert_int_equal(m.by_url[0].requests, 40);
    assert_int_equal(m.by_url[1].requests, 20);
    assert_int_equal(m.by_url[0].requests + m.by_url[1].requests, m.total.requests);
    assert_int_equal(m.by_url[0].latency.count, 40);
    assert_int_equal(hist_percentile(&m.by_url[1].latency, 50),
                     hist_percentile(&b.by_url[1].latency, 50));
    /* A part with other targets, or none, is refused and changes nothing. */
    assert_int_equal(load_result_merge(&m, &c, &seed000, err), -EINVAL);
    assert_non_null(strstr(err, "10.0.0.3"));
    struct load_result none;
    assert_int_equal(load_result_init(&none, &p), 0);
    record(&none, 0, 0, 1000, 200);
    assert_int_equal(load_result_merge(&m, &none, &seed000, err), -EINVAL);
    assert_non_null(strstr(err, "by_url"));
    assert_int_equal(m.total.requests, 60);
    load_result_free(&none);
    load_result_free(&a);
    load_result_free(&b);
    load_result_free(&c);
    load_result_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_equals_single_run),
        cmocka_unit_test(test_merge_judges_the_whole),
        cmocka_unit_test(test_merge_refuses_other_shapes),
        cmocka_unit_test(test_merge_series_from_union),
        cmocka_unit_test(test_merge_series_uneven),
        cmocka_unit_test(test_merge_by_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
