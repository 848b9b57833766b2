/* Tests for src/core/fmt.c: the number formats of every front-end. Each latency is rendered by
 * fmt_latency and through the front-ends that print it from other inputs (`kubectl sizeup`'s
 * progress lines read milliseconds from results.json; a re-sweep's comparison, which the
 * operator puts in its Event and status, reads them from the previous results; `sizeup
 * loadtest`'s text report reads them from its histograms), and every rendering must be the same
 * text. */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fmt.h"
#include "load/hist.h"
#include "load/report.h"
#include "operator/plugin.h"
#include "operator/resweep.h"

static const struct {
    uint64_t us;
    const char *want;
} latencies[] = {
    {0, "0us"},          {850, "850us"},       {1500, "1.50ms"},  {2000, "2.00ms"},
    {12345, "12.3ms"},   {114000, "114ms"},    {212500, "212ms"}, {1250000, "1.25s"},
    {12500000, "12.5s"}, {125000000, "2m05s"},
};

static void test_latency(void **state)
{
    (void)state;
    char b[FMT_LEN];

    for (size_t i = 0; i < sizeof(latencies) / sizeof(latencies[0]); i++)
        assert_string_equal(fmt_latency(latencies[i].us, b), latencies[i].want);
}

static void test_others(void **state)
{
    (void)state;
    char b[FMT_LEN];

    assert_string_equal(fmt_pct(0, b), "0%");
    assert_string_equal(fmt_pct(0.0125, b), "1.25%");
    assert_string_equal(fmt_pct(1e-6, b), "0.0001%"); /* a failure is never rounded away */
    assert_string_equal(fmt_pct(1, b), "100.00%");
    assert_string_equal(fmt_rate(27.25, b), "27.25");
    assert_string_equal(fmt_rate(1234.5, b), "1234.5");
    assert_string_equal(fmt_bytes(512, b), "512 B");
    assert_string_equal(fmt_bytes(1536, b), "1.50 KiB");
    assert_string_equal(fmt_bytes(1028096, b), "1004 KiB");
    assert_string_equal(fmt_count(1234567, b), "1,234,567");
    assert_string_equal(fmt_count(999, b), "999");
}

/* `kubectl sizeup` following a sweep: the p95 of results.json (ms) prints as fmt_latency. */
static void test_plugin_path(void **state)
{
    (void)state;

    for (size_t i = 1; i < sizeof(latencies) / sizeof(latencies[0]); i++) {
        char json[512], want[256], *buf = NULL, lat[FMT_LEN];
        size_t len = 0;
        struct plugin_follow st = {0};
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        snprintf(json, sizeof(json),
                 "{\"variants\": [{\"spec\": \"1@1/1Gi\", \"state\": \"measured\", "
                 "\"verdict\": \"HEALTHY\", \"throughput_rps\": 1234.5, \"error_rate\": 0.0125, "
                 "\"latency_ms\": {\"p95\": %.3f}}]}",
                 (double)latencies[i].us / 1e3);
        assert_int_equal(plugin_progress_lines(json, 1, &st, f), 1);
        fclose(f);
        snprintf(want, sizeof(want),
                 "variant 1/1 1@1/1Gi: HEALTHY, 1234.5 req/s, p95 %s, errors 1.25%%\n",
                 fmt_latency(latencies[i].us, lat));
        assert_string_equal(buf, want);
        free(buf);
    }
}

/* A re-sweep's comparison (the operator's ResultsCompared Event): both p95s as fmt_latency. */
static void test_resweep_path(void **state)
{
    (void)state;
    static const char prev[] =
        "{\"images\": \"web=app:1\", \"variants\": [{\"spec\": \"1@1/512Mi\", \"state\": "
        "\"measured\", \"throughput_rps\": 400, \"latency_ms\": {\"p95\": 1.5}}]}";
    struct advisor_row row;
    char out[1024], err[ERR_LEN], a[FMT_LEN], b[FMT_LEN], want[128];
    int sig = -1;

    memset(&row, 0, sizeof(row));
    assert_int_equal(variant_parse("1@1/512Mi", &row.variant, err), 0);
    row.measured = true;
    row.throughput_rps = 400;
    row.p95_us = 114000;
    assert_int_equal(resweep_compare(prev, &row, 1, out, sizeof(out), &sig), 0);
    snprintf(want, sizeof(want), "p95 %s -> %s", fmt_latency(1500, a), fmt_latency(114000, b));
    assert_string_equal(want, "p95 1.50ms -> 114ms");
    if (!strstr(out, want))
        fail_msg("'%s' not in '%s'", want, out);
}

/* `sizeup loadtest`'s text report: each run's p95, as its histogram gives it, prints as
 * fmt_latency. */
static void test_loadtest_path(void **state)
{
    (void)state;
    static const char yaml[] = "requests:\n  - { name: a, path: / }\n";

    for (size_t i = 1; i < sizeof(latencies) / sizeof(latencies[0]); i++) {
        struct profile p;
        struct load_result r;
        char err[ERR_LEN], want[64], lat[FMT_LEN], *buf = NULL;
        size_t len = 0;

        assert_int_equal(profile_load_buffer(yaml, strlen(yaml), "t.yaml", &p, err), 0);
        assert_int_equal(load_result_init(&r, &p), 0);
        r.duration_s = 10;
        for (int k = 0; k < 100; k++) {
            r.by_name[0].requests++;
            r.by_name[0].responses++;
            r.by_name[0].status[200]++;
            hist_record(&r.by_name[0].latency, latencies[i].us);
        }
        load_stats_merge(&r.total, &r.by_name[0]);
        FILE *f = open_memstream(&buf, &len);
        assert_non_null(f);
        assert_int_equal(report_text(f, &r, &p), 0);
        fclose(f);
        snprintf(want, sizeof(want), "p95 %s",
                 fmt_latency(hist_percentile(&r.total.latency, 95), lat));
        if (!strstr(buf, want))
            fail_msg("'%s' not in:\n%s", want, buf);
        free(buf);
        load_result_free(&r);
        profile_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latency),       cmocka_unit_test(test_others),
        cmocka_unit_test(test_plugin_path),   cmocka_unit_test(test_resweep_path),
        cmocka_unit_test(test_loadtest_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
