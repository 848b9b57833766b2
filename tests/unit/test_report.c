/* Tests for src/load/report.c: the JSON contract's fields are present and equal to the data,
 * the text report shows the same figures, and JSON parses back into the same result. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/report.h"
#include "load/report_html.h"
#include "load/series.h"

static const char profile_yaml[] = "requests:\n"
                                   "  - { name: list, path: /api/list, weight: 3 }\n"
                                   "  - { name: vote, method: POST, path: /api/votes }\n";

static const char staged_yaml[] = "stages:\n"
                                  "  - { duration: 4s, users: 20 }\n"
                                  "  - { duration: 6s, users: 20 }\n"
                                  "requests:\n"
                                  "  - { name: list, path: /api/list, weight: 3 }\n"
                                  "  - { name: vote, method: POST, path: /api/votes }\n";

struct fixture {
    struct profile p;
    struct load_result r;
};

/* A 10-second closed-loop run: 'list' got 12000 fast 200s, 'vote' 345 slower requests of which
 * 40 were 503 and 5 timed out. Figures chosen so every field has a distinct value. */
static void fill(struct fixture *fx, const char *yaml)
{
    char err[ERR_LEN];
    if (profile_load_buffer(yaml, strlen(yaml), "t.yaml", &fx->p, err))
        fail_msg("%s", err);
    assert_int_equal(load_result_init(&fx->r, &fx->p), 0);
    struct load_result *r = &fx->r;
    r->duration_s = 10;
    r->tool_cpu_s = 1.25;
    r->threads = 2;
    r->users = 20;
    r->peak_concurrency = 20;

    struct load_stats *list = &r->by_name[0], *vote = &r->by_name[1];
    for (int i = 0; i < 12000; i++) {
        uint64_t us = 2000 + (uint64_t)(i % 100) * 100; /* 2.0 .. 11.9 ms */
        list->requests++;
        list->responses++;
        list->status[200]++;
        list->bytes_in += 150;
        list->bytes_out += 80;
        hist_record(&list->latency, us);
        if (r->nstages) {
            struct load_stats *st = &r->by_stage[i < 5000 ? 0 : 1];
            st->requests++;
            st->responses++;
            st->status[200]++;
            hist_record(&st->latency, us);
        }
    }
    for (int i = 0; i < 345; i++) {
        vote->requests++;
        if (i < 5) {
            vote->failed++;
            vote->errors[LOAD_ERR_TIMEOUT]++;
            hist_record(&vote->latency, 5000000);
            continue;
        }
        vote->responses++;
        if (i < 45) {
            vote->failed++;
            vote->status[503]++;
        } else {
            vote->status[201]++;
        }
        vote->bytes_in += 90;
        vote->bytes_out += 200;
        hist_record(&vote->latency, 40000 + (uint64_t)i * 10);
    }
    load_stats_merge(&r->total, list);
    load_stats_merge(&r->total, vote);
    r->verdict = verdict_classify(&r->total, &fx->p.thresholds);
}

static void release(struct fixture *fx)
{
    load_result_free(&fx->r);
    profile_free(&fx->p);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("field '%s' missing or not a number", k);
    return v->valuedouble;
}

static const cJSON *obj(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        fail_msg("field '%s' missing", k);
    return v;
}

static void check_scope(const cJSON *o, const struct load_stats *s, double duration_s)
{
    const struct hist *h = &s->latency;
    assert_true(num(o, "requests") == (double)s->requests);
    assert_true(num(o, "responses") == (double)s->responses);
    assert_true(num(o, "failed") == (double)s->failed);
    assert_true(fabs(num(o, "error_rate") - load_stats_error_rate(s)) < 1e-12);
    assert_true(fabs(num(o, "throughput_rps") - (double)s->requests / duration_s) < 0.001);
    assert_true(num(o, "bytes_in") == (double)s->bytes_in);
    assert_true(num(o, "bytes_out") == (double)s->bytes_out);
    const cJSON *lat = obj(o, "latency_ms");
    assert_true(fabs(num(lat, "mean") - hist_mean(h) / 1e3) < 0.001);
    assert_true(num(lat, "p50") == (double)hist_percentile(h, 50) / 1e3);
    assert_true(num(lat, "p90") == (double)hist_percentile(h, 90) / 1e3);
    assert_true(num(lat, "p95") == (double)hist_percentile(h, 95) / 1e3);
    assert_true(num(lat, "p99") == (double)hist_percentile(h, 99) / 1e3);
    assert_true(num(lat, "p999") == (double)hist_percentile(h, 99.9) / 1e3);
    assert_true(num(lat, "max") == (double)h->max_us / 1e3);
    const cJSON *codes = obj(o, "status_codes");
    int ncodes = 0;
    for (int c = 0; c < LOAD_STATUS_MAX; c++) {
        char k[8];
        snprintf(k, sizeof(k), "%d", c);
        if (s->status[c]) {
            assert_true(num(codes, k) == (double)s->status[c]);
            ncodes++;
        }
    }
    assert_int_equal(cJSON_GetArraySize(codes), ncodes); /* only codes that occurred */
    const cJSON *errs = obj(o, "errors");
    assert_int_equal(cJSON_GetArraySize(errs), LOAD_ERR_COUNT); /* every class, zeros too */
    for (int e = 0; e < LOAD_ERR_COUNT; e++)
        assert_true(num(errs, load_errclass_name((enum load_errclass)e)) == (double)s->errors[e]);
}

static void test_json_fields(void **state)
{
    (void)state;
    struct fixture fx;
    fill(&fx, profile_yaml);
    cJSON *j = report_json(&fx.r);
    assert_non_null(j);

    check_scope(j, &fx.r.total, 10);
    assert_true(num(j, "requests") == 12345);
    assert_true(num(j, "failed") == 45);
    assert_true(num(j, "duration_s") == 10);
    assert_true(num(j, "throughput_rps") == 1234.5);
    assert_true(num(j, "tool_cpu_s") == 1.25);
    assert_true(num(j, "peak_concurrency") == 20);
    assert_string_equal(cJSON_GetStringValue(obj(j, "verdict")), verdict_name(fx.r.verdict));
    assert_string_equal(cJSON_GetStringValue(obj(j, "mode")), "closed");
    assert_true(cJSON_IsFalse(obj(j, "interrupted")));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "target_rate_rps")); /* closed loop */
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "achieved_rate_rps"));
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "by_stage")); /* no stages */

    const cJSON *names = obj(j, "by_name");
    assert_int_equal(cJSON_GetArraySize(names), 2);
    check_scope(obj(names, "list"), &fx.r.by_name[0], 10);
    check_scope(obj(names, "vote"), &fx.r.by_name[1], 10);
    assert_true(num(obj(obj(names, "vote"), "errors"), "timeout") == 5);
    assert_true(num(obj(obj(names, "vote"), "status_codes"), "503") == 40);
    assert_true(num(obj(obj(names, "list"), "latency_ms"), "max") == 11.9);
    cJSON_Delete(j);

    /* Open loop: the rate fields appear. */
    fx.r.target_rate_rps = 1250;
    fx.r.achieved_rate_rps = 1234.5;
    fx.r.peak_concurrency = 37;
    fx.r.interrupted = true;
    j = report_json(&fx.r);
    assert_non_null(j);
    assert_string_equal(cJSON_GetStringValue(obj(j, "mode")), "open");
    assert_true(num(j, "target_rate_rps") == 1250);
    assert_true(num(j, "achieved_rate_rps") == 1234.5);
    assert_true(num(j, "peak_concurrency") == 37);
    assert_true(cJSON_IsTrue(obj(j, "interrupted")));
    cJSON_Delete(j);
    release(&fx);
}

static void test_json_stages(void **state)
{
    (void)state;
    struct fixture fx;
    fill(&fx, staged_yaml);
    cJSON *j = report_json(&fx.r);
    assert_non_null(j);
    const cJSON *st = obj(j, "by_stage");
    assert_true(cJSON_IsArray(st));
    assert_int_equal(cJSON_GetArraySize(st), 2);
    const cJSON *s1 = cJSON_GetArrayItem(st, 1);
    assert_true(num(s1, "stage") == 2);
    assert_true(num(s1, "duration_s") == 6);
    assert_true(num(s1, "requests") == 7000);
    check_scope(s1, &fx.r.by_stage[1], 6);
    cJSON_Delete(j);
    release(&fx);
}

/* Renders the text report into a string (owned, free with free()). */
static char *render(const struct load_result *r, const struct profile *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(report_text(f, r, p), 0);
    fclose(f);
    return buf;
}

static void must_contain(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("text report lacks '%s':\n%s", want, text);
}

static void test_text(void **state)
{
    (void)state;
    struct fixture fx;
    fill(&fx, staged_yaml);
    char *t = render(&fx.r, &fx.p);
    char want[64];

    must_contain(t, "12,345");                         /* requests */
    must_contain(t, "1234.5 req/s");                   /* throughput */
    must_contain(t, "45 failed");                      /* failures */
    must_contain(t, "0.36%");                          /* error rate: 45 / 12345 */
    must_contain(t, "1.25 s (0.12 cores)");            /* tool CPU */
    must_contain(t, "in 1.75 MiB, out 1004 KiB");      /* bytes */
    must_contain(t, "200: 12,000, 201: 300, 503: 40"); /* status codes */
    must_contain(t, "no response  timeout: 5");        /* transport errors by class */
    must_contain(t, verdict_name(fx.r.verdict));
    /* The percentiles, as the histogram gives them. */
    snprintf(want, sizeof(want), "p50 %.2fms",
             (double)hist_percentile(&fx.r.total.latency, 50) / 1e3);
    must_contain(t, want);
    must_contain(t, "max 5.00s");
    /* One row per name and per stage. */
    must_contain(t, "\n  list ");
    must_contain(t, "\n  vote ");
    must_contain(t, "20 users");
    must_contain(t, "   7,000 ");
    free(t);

    /* A run that reached nothing: no latency, errors only, and it says so. */
    struct load_result empty;
    assert_int_equal(load_result_init(&empty, &fx.p), 0);
    empty.duration_s = 10;
    empty.total.requests = empty.total.failed = 50;
    empty.total.errors[LOAD_ERR_CONNECT_REFUSED] = 50;
    empty.verdict = verdict_classify(&empty.total, &fx.p.thresholds);
    empty.interrupted = true;
    t = render(&empty, &fx.p);
    must_contain(t, "latency      none recorded");
    must_contain(t, "connect_refused: 50");
    must_contain(t, "status codes none");
    must_contain(t, "OVERLOADED (errors 100.00% > 1.00%)");
    must_contain(t, "INTERRUPTED");
    free(t);
    load_result_free(&empty);
    release(&fx);
}

static void assert_stats_equal(const struct load_stats *a, const struct load_stats *b)
{
    assert_memory_equal(a, b, sizeof(*a));
}

/* A load over several URLs: by_url comes back, in order, each scope exact; bad by_url fails. */
static void test_parse_by_url(void **state)
{
    (void)state;
    struct fixture fx;
    struct load_result back;
    char err[ERR_LEN] = "";

    fill(&fx, staged_yaml);
    fx.r.nurls = 2;
    fx.r.urls = calloc(2, sizeof(*fx.r.urls));
    fx.r.by_url = calloc(2, sizeof(*fx.r.by_url));
    assert_non_null(fx.r.urls);
    assert_non_null(fx.r.by_url);
    fx.r.urls[0] = strdup("http://127.0.0.1:8080/");
    fx.r.urls[1] = strdup("http://127.0.0.1:8081/");
    fx.r.by_url[0] = fx.r.by_name[0];
    fx.r.by_url[1] = fx.r.by_name[1];
    cJSON *j = report_json(&fx.r);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *j2 = cJSON_Parse(text);
    if (report_json_parse(j2, &back, err))
        fail_msg("%s", err);
    assert_int_equal(back.nurls, 2);
    assert_string_equal(back.urls[1], "http://127.0.0.1:8081/");
    assert_stats_equal(&back.by_url[0], &fx.r.by_url[0]);
    assert_stats_equal(&back.by_url[1], &fx.r.by_url[1]);
    cJSON *j3 = report_json(&back);
    char *text3 = cJSON_PrintUnformatted(j3);
    assert_string_equal(text3, text);
    free(text3);
    cJSON_Delete(j3);
    load_result_free(&back);

    /* by_url not an object. */
    cJSON_ReplaceItemInObject(j2, "by_url", cJSON_CreateNumber(3));
    assert_int_equal(report_json_parse(j2, &back, err), -EINVAL);
    assert_non_null(strstr(err, "by_url: expected an object"));
    free(text);
    cJSON_Delete(j);
    cJSON_Delete(j2);
    release(&fx);
}

/* JSON -> text -> JSON -> result gives back the very result: histograms included. */
static void test_parse_roundtrip(void **state)
{
    (void)state;
    struct fixture fx;
    fill(&fx, staged_yaml);
    fx.r.target_rate_rps = 1250;
    fx.r.achieved_rate_rps = 1234.5;
    cJSON *j = report_json(&fx.r);
    char *text = cJSON_PrintUnformatted(j);
    assert_non_null(text);
    cJSON *j2 = cJSON_Parse(text);
    assert_non_null(j2);

    struct load_result back;
    char err[ERR_LEN] = "";
    if (report_json_parse(j2, &back, err))
        fail_msg("%s", err);
    assert_stats_equal(&back.total, &fx.r.total);
    assert_int_equal(back.nnames, 2);
    assert_string_equal(back.names[0], "list");
    assert_string_equal(back.names[1], "vote");
    assert_stats_equal(&back.by_name[0], &fx.r.by_name[0]);
    assert_stats_equal(&back.by_name[1], &fx.r.by_name[1]);
    assert_int_equal(back.nstages, 2);
    assert_stats_equal(&back.by_stage[1], &fx.r.by_stage[1]);
    assert_true(back.stage_duration_s[1] == 6);
    assert_true(back.duration_s == 10);
    assert_true(back.tool_cpu_s == 1.25);
    assert_true(back.target_rate_rps == 1250);
    assert_true(back.achieved_rate_rps == 1234.5);
    assert_int_equal(back.threads, 2);
    assert_int_equal(back.users, 20);
    assert_int_equal(back.peak_concurrency, 20);
    assert_int_equal(back.verdict, fx.r.verdict);
    assert_false(back.interrupted);

    /* And the parsed result renders to the same JSON. */
    cJSON *j3 = report_json(&back);
    char *text3 = cJSON_PrintUnformatted(j3);
    assert_string_equal(text3, text);
    free(text3);
    cJSON_Delete(j3);
    load_result_free(&back);
    free(text);
    cJSON_Delete(j);
    cJSON_Delete(j2);
    release(&fx);
}

/* Each case edits one field of a valid report; parsing must fail and name the field. */
static void test_parse_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *path; /* "field" or "by_name.list.field" */
        const char *json; /* new value, or NULL to delete */
        const char *want;
    } cases[] = {
        {"requests", NULL, "requests: expected a number"},
        {"requests", "-1", "requests: expected a number between 0"},
        {"requests", "1.5", "requests: expected a whole number"},
        {"requests", "\"12\"", "requests: expected a number"},
        {"requests", "1e300", "requests: expected a number between 0"},
        {"failed", "99999", "cannot exceed requests"},
        {"status_codes", "{\"abc\": 1}", "'abc' is not a status code"},
        {"status_codes", "{\"99\": 1}", "'99' is not a status code"},
        {"status_codes", "{\"600\": 1}", "'600' is not a status code"},
        {"status_codes", "[]", "status_codes: expected an object"},
        {"errors", "{\"gremlins\": 1}", "unknown class 'gremlins'"},
        {"latency_hist", "\"!!!!\"", "latency_hist: not valid base64"},
        {"latency_hist", "\"AQ==\"", "latency_hist: histogram: truncated"},
        {"latency_hist", "5", "latency_hist: expected a base64 string"},
        {"verdict", "\"GREAT\"", "verdict: expected HEALTHY"},
        {"mode", "\"sideways\"", "mode: expected"},
        {"interrupted", "0", "interrupted: expected true or false"},
        {"by_name", "[]", "by_name: expected an object"},
        {"by_name", "{\"x\": 5}", "by_name.x: expected an object"},
        {"by_name.list.requests", "1.25", "by_name.list.requests: expected a whole number"},
        {"by_stage", "{}", "by_stage: expected an array"},
        {"duration_s", "\"10s\"", "duration_s: expected a number"},
    };
    struct fixture fx;
    fill(&fx, profile_yaml);
    cJSON *good = report_json(&fx.r);
    assert_non_null(good);
    release(&fx);

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *j = cJSON_Duplicate(good, 1), *parent = j;
        char path[64];
        snprintf(path, sizeof(path), "%s", cases[i].path);
        char *field = path, *dot;
        while ((dot = strchr(field, '.')) != NULL) {
            *dot = '\0';
            parent = cJSON_GetObjectItemCaseSensitive(parent, field);
            field = dot + 1;
        }
        assert_non_null(parent);
        cJSON_DeleteItemFromObjectCaseSensitive(parent, field);
        if (cases[i].json) {
            cJSON *v = cJSON_Parse(cases[i].json);
            assert_non_null(v);
            cJSON_AddItemToObject(parent, field, v);
        }
        struct load_result r;
        char err[ERR_LEN] = "";
        int rc = report_json_parse(j, &r, err);
        if (rc != -EINVAL)
            fail_msg("case %zu (%s = %s): rc %d", i, cases[i].path, cases[i].json, rc);
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: error '%s' lacks '%s'", i, err, cases[i].want);
        assert_null(r.names); /* left freed */
        cJSON_Delete(j);
    }
    struct load_result r;
    char err[ERR_LEN];
    assert_int_equal(report_json_parse(NULL, &r, err), -EINVAL);
    cJSON *arr = cJSON_CreateArray();
    assert_int_equal(report_json_parse(arr, &r, err), -EINVAL);
    cJSON_Delete(arr);
    cJSON_Delete(good);
}

/* A capacity search's timeline of 16 short steps with long labels, as report.html draws it: every
 * label starts at its step and none starts before the end of the one drawn before it (by the
 * width estimate); at least a third of them are drawn. With SIZEUP_LABELS_PAGE set, the page is
 * also written there for tests/integration/chart_labels.sh to lay out in Chromium. */
static void test_series_labels(void **state)
{
    static struct load_series s[16];
    static struct report_html_segment seg[16];
    static char labels[16][32];
    char err[ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    (void)state;

    for (int i = 0; i < 16; i++) {
        s[i].interval_s = 1;
        s[i].n = 2;
        s[i].pts = calloc(2, sizeof(*s[i].pts));
        assert_non_null(s[i].pts);
        for (int k = 0; k < 2; k++) {
            s[i].pts[k].t_s = k * 0.15;
            s[i].pts[k].dur_s = 0.15;
            s[i].pts[k].requests = 100 + (uint64_t)i;
            s[i].pts[k].p50_us = 1000;
            s[i].pts[k].p95_us = 2000;
            s[i].pts[k].p99_us = 3000;
        }
        snprintf(labels[i], sizeof(labels[i]), "%d %s %d/s", i + 1, i < 12 ? "search" : "repeat",
                 978 + i * 37);
        seg[i].s = &s[i];
        seg[i].label = labels[i];
    }
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{font-family:system-ui,"
          "-apple-system,'Segoe UI',Roboto,sans-serif}.chart{max-width:100%;height:auto;"
          "font-size:12px}</style></head><body>\n",
          m);
    assert_int_equal(report_html_series(m, seg, 16, "series-0", err), 0);
    fputs("</body></html>\n", m);
    fclose(m);
    size_t drawn = 0;
    for (const char *p = strstr(buf, "class=\"segl\""); p; p = strstr(p + 1, "class=\"segl\""))
        drawn++;
    assert_true(drawn >= 2 * 16 / 3); /* two charts (rate, latency) */
    assert_true(drawn < 2 * 16);      /* not every label fits: some are left out */
    const char *out = getenv("SIZEUP_LABELS_PAGE");
    if (out) {
        FILE *f = fopen(out, "w");
        assert_non_null(f);
        fputs(buf, f);
        fclose(f);
    }
    free(buf);
    for (int i = 0; i < 16; i++)
        free(s[i].pts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_fields),   cmocka_unit_test(test_json_stages),
        cmocka_unit_test(test_text),          cmocka_unit_test(test_parse_roundtrip),
        cmocka_unit_test(test_parse_by_url),  cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_series_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
