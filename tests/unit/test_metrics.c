/* Tests for src/operator/metrics.c: counters from several threads, and the Prometheus text. */

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/metrics.h"

/* Returns the value of the sample line that starts with name (exact series), or -1. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

static void test_render_counts(void **state)
{
    (void)state;
    struct metrics m;
    char *text = NULL, err[ERR_LEN] = "";
    size_t len = 0;

    metrics_init(&m);
    metrics_sweep_result(&m, METRICS_SWEEP_DONE);
    metrics_sweep_result(&m, METRICS_SWEEP_DONE);
    metrics_sweep_result(&m, METRICS_SWEEP_FAILED);
    metrics_variant(&m, METRICS_VERDICT_HEALTHY);
    metrics_variant(&m, METRICS_VERDICT_OVERLOADED);
    metrics_variant(&m, METRICS_VERDICT_FAILED);
    metrics_api_request(&m, 200);
    metrics_api_request(&m, 200);
    metrics_api_request(&m, 409);
    metrics_api_request(&m, -3);  /* no response */
    metrics_api_request(&m, 777); /* out of range: counted as no response */
    atomic_store(&m.watch_restarts, 4);
    atomic_store(&m.sweeps_in_progress, 2);

    assert_int_equal(metrics_render(&m, &text, &len, err), 0);
    assert_int_equal(strlen(text), len);
    assert_true(sample(text, "sizeup_sweeps_total{result=\"done\"}") == 2);
    assert_true(sample(text, "sizeup_sweeps_total{result=\"failed\"}") == 1);
    assert_true(sample(text, "sizeup_sweeps_total{result=\"cancelled\"}") == 0);
    assert_true(sample(text, "sizeup_variants_total{verdict=\"HEALTHY\"}") == 1);
    assert_true(sample(text, "sizeup_variants_total{verdict=\"STRESSED\"}") == 0);
    assert_true(sample(text, "sizeup_variants_total{verdict=\"FAILED\"}") == 1);
    assert_true(sample(text, "sizeup_api_requests_total{code=\"200\"}") == 2);
    assert_true(sample(text, "sizeup_api_requests_total{code=\"409\"}") == 1);
    assert_true(sample(text, "sizeup_api_requests_total{code=\"0\"}") == 2);
    assert_true(sample(text, "sizeup_api_requests_total{code=\"500\"}") == -1); /* never seen */
    assert_true(sample(text, "sizeup_watch_restarts_total") == 4);
    assert_true(sample(text, "sizeup_sweeps_in_progress") == 2);
    assert_true(sample(text, "process_resident_memory_bytes") > 100000);
    assert_true(sample(text, "process_cpu_seconds_total") >= 0);
    /* Every family has its TYPE line, and the text ends with a newline. */
    assert_non_null(strstr(text, "# TYPE sizeup_sweeps_total counter\n"));
    assert_non_null(strstr(text, "# TYPE sizeup_sweeps_in_progress gauge\n"));
    assert_non_null(strstr(text, "# TYPE process_resident_memory_bytes gauge\n"));
    assert_int_equal(text[len - 1], '\n');
    free(text);
}

struct bump_arg {
    struct metrics *m;
    int n;
};

static void *bump(void *p)
{
    struct bump_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        metrics_api_request(a->m, 200);
        metrics_variant(a->m, METRICS_VERDICT_STRESSED);
    }
    return NULL;
}

/* Writers on several threads lose no increment (the counters are atomics). */
static void test_concurrent_counts(void **state)
{
    (void)state;
    struct metrics m;
    pthread_t t[4];
    struct bump_arg a = {&m, 20000};
    char *text = NULL;
    size_t len;

    metrics_init(&m);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, bump, &a), 0);
    /* Scrape while they write: must not crash or block. */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(metrics_render(&m, &text, &len, NULL), 0);
        free(text);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(metrics_render(&m, &text, &len, NULL), 0);
    assert_true(sample(text, "sizeup_api_requests_total{code=\"200\"}") == 80000);
    assert_true(sample(text, "sizeup_variants_total{verdict=\"STRESSED\"}") == 80000);
    free(text);
}

static void test_heartbeat(void **state)
{
    (void)state;
    struct metrics m;
    metrics_init(&m);
    assert_true(metrics_heartbeat_age_ms(&m) > 1000000);
    metrics_heartbeat(&m);
    int64_t age = metrics_heartbeat_age_ms(&m);
    assert_true(age >= 0 && age < 1000);
}

static void test_rss(void **state)
{
    (void)state;
    uint64_t before = 0, after = 0;
    assert_int_equal(metrics_rss_bytes(&before), 0);
    size_t sz = 32u << 20;
    char *big = malloc(sz);
    assert_non_null(big);
    memset(big, 1, sz);
    assert_int_equal(metrics_rss_bytes(&after), 0);
    assert_true(after >= before + (sz / 2));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_counts),
        cmocka_unit_test(test_concurrent_counts),
        cmocka_unit_test(test_heartbeat),
        cmocka_unit_test(test_rss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
