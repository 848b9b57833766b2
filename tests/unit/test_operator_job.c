/* Tests for src/operator/job.c and job_request.c: the progress document a sweep leaves in its
 * ConfigMap and what a restarted operator accepts from it, and log-field quoting. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/job_internal.h"

#define CONFIGS "1@0.5/256Mi 2@1/512Mi 4@2/1Gi"

struct fixture {
    struct job j;
    struct jctx x;
    struct sweep_job sj;
    struct advisor_row rows[3];
};

static void setup_fixture(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->j.ns, sizeof(f->j.ns), "shop");
    snprintf(f->j.name, sizeof(f->j.name), "web");
    snprintf(f->j.uid, sizeof(f->j.uid), "uid-1");
    snprintf(f->j.handled, sizeof(f->j.handled), "sweep-7");
    f->x.j = &f->j;
    f->x.req.mode = ANNOT_MODE_IN_PLACE;
    f->sj.x = &f->x;
    snprintf(f->sj.configs, sizeof(f->sj.configs), "%s", CONFIGS);
    assert_int_equal(variant_parse_list(CONFIGS, &f->sj.all, NULL), 0);
    for (int i = 0; i < 3; i++) {
        struct advisor_row *r = &f->rows[i];
        r->variant = f->sj.all.items[i];
        r->measured = i != 1;
        if (!r->measured) {
            r->fail = PLATFORM_FAIL_OOM;
            snprintf(r->note, sizeof(r->note), "OOM-killed: \"x\" at 512Mi");
        }
        r->throughput_rps = 100.5 * (i + 1);
        r->p50_us = 1000 + (uint64_t)i;
        r->p95_us = 5000 + (uint64_t)i;
        r->p99_us = 9000 + (uint64_t)i;
        r->error_rate = 0.001 * i;
        r->requests = 12345 + (uint64_t)i;
        r->cpu_cores_used = i == 2 ? -1 : 0.25 * (i + 1);
        r->peak_memory_bytes = i == 2 ? -1 : (int64_t)(100 << 20);
        r->gen_cores = 0.1;
        r->host_other_cores = i == 2 ? -1 : 0.5 * i;
        r->flags = i == 2 ? 5u : 0u;
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = NULL;
    size_t n = 99;

    setup_fixture(&f);
    char *text = job_state_json(&f.sj, f.rows, 2, "running");
    assert_non_null(text);
    assert_non_null(strstr(text, "\"phase\":\t\"running\""));
    assert_non_null(strstr(text, "\"mode\":\t\"in-place\""));
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(prior[i].variant.spec, f.rows[i].variant.spec);
        assert_int_equal(prior[i].measured, f.rows[i].measured);
        assert_string_equal(prior[i].note, f.rows[i].note);
        assert_int_equal(prior[i].fail, f.rows[i].fail);
        assert_true(prior[i].throughput_rps == f.rows[i].throughput_rps);
        assert_int_equal(prior[i].p95_us, f.rows[i].p95_us);
        assert_int_equal(prior[i].requests, f.rows[i].requests);
        assert_true(prior[i].cpu_cores_used == f.rows[i].cpu_cores_used);
        assert_int_equal(prior[i].peak_memory_bytes, f.rows[i].peak_memory_bytes);
        assert_true(prior[i].host_other_cores == f.rows[i].host_other_cores);
        assert_int_equal(prior[i].flags, f.rows[i].flags);
    }
    free(prior);
    free(text);

    /* All three, with the unknown usage of the last kept as unknown (-1). */
    text = job_state_json(&f.sj, f.rows, 3, "done");
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 3);
    assert_true(prior[2].cpu_cores_used < 0);
    assert_true(prior[2].peak_memory_bytes < 0);
    assert_true(prior[2].host_other_cores < 0);
    free(prior);
    free(text);

    /* None measured yet is a valid progress too. */
    text = job_state_json(&f.sj, f.rows, 0, "running");
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 0);
    free(prior);
    free(text);
}

/* Progress that is not this sweep's is refused: the sweep starts over rather than mixing
 * results of different requests, Deployments or variant lists. */
static void test_refuses_foreign_progress(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = (struct advisor_row *)1;
    size_t n = 5;

    setup_fixture(&f);
    char *text = job_state_json(&f.sj, f.rows, 2, "running");
    assert_non_null(text);
    assert_int_equal(job_progress_parse(text, "sweep-8", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     -ENOENT);
    assert_null(prior);
    assert_int_equal(n, 0);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-2", CONFIGS, &f.sj.all, &prior, &n),
                     -ENOENT);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", "1@1/1Gi", &f.sj.all, &prior, &n),
                     -ENOENT);

    /* Rows that do not match the variant list in order. */
    struct variant_list other;
    assert_int_equal(variant_parse_list("2@1/512Mi 1@0.5/256Mi 4@2/1Gi", &other, NULL), 0);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &other, &prior, &n),
                     -ENOENT);
    /* More rows than variants. */
    struct variant_list one;
    assert_int_equal(variant_parse_list("1@0.5/256Mi", &one, NULL), 0);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &one, &prior, &n),
                     -ENOENT);
    free(text);

    static const char *const bad[] = {
        "",
        "{",
        "[]",
        "{\"version\":2,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[]}",
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":{}}",
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[{\"spec\":7}]}",
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[{\"spec\":\"9@9/9Gi\"}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(
            job_progress_parse(bad[i], "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
            -ENOENT);
    assert_int_equal(job_progress_parse(NULL, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     -ENOENT);
}

/* Hostile numbers in a hand-edited state do not turn into nonsense rows. */
static void test_sanitises_numbers(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = NULL;
    size_t n = 0;

    setup_fixture(&f);
    const char *text =
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[{\"spec\":\"1@0.5/256Mi\",\"measured\":true,"
        "\"p95_us\":-5,\"requests\":\"many\",\"throughput_rps\":1e400,"
        "\"peak_memory_bytes\":1e40,\"p99_us\":1e300,\"flags\":-3,"
        "\"error_rate\":7}]}";
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(prior[0].p95_us, 0);
    assert_int_equal(prior[0].requests, 0);
    assert_true(prior[0].throughput_rps == 0);
    assert_true(prior[0].cpu_cores_used < 0); /* absent: unknown */
    assert_true(prior[0].peak_memory_bytes > 0 && prior[0].peak_memory_bytes <= (int64_t)9e18);
    assert_true(prior[0].p99_us <= (uint64_t)9e18);
    assert_int_equal(prior[0].flags, 0);
    assert_true(prior[0].error_rate == 1);
    free(prior);
}

static void test_log_safe(void **state)
{
    (void)state;
    char out[16];
    assert_string_equal(job_log_safe("a \"b\"\n\\c", out, sizeof(out)), "a 'b'?/c");
    assert_string_equal(job_log_safe("0123456789abcdefghij", out, sizeof(out)), "0123456789abcde");
    assert_string_equal(job_log_safe(NULL, out, sizeof(out)), "");
}

/* Past the client's own conflict retries a request is run again after 2, 4, 8, 16 s, then
 * given up; only transient API errors qualify. */
static void test_retry_backoff(void **state)
{
    (void)state;
    assert_int_equal(job_retry_delay_s(0), 0);
    assert_int_equal(job_retry_delay_s(1), 2);
    assert_int_equal(job_retry_delay_s(2), 4);
    assert_int_equal(job_retry_delay_s(3), 8);
    assert_int_equal(job_retry_delay_s(4), 16);
    assert_int_equal(job_retry_delay_s(JOB_MAX_ATTEMPTS), 0);
    assert_int_equal(job_retry_delay_s(1000), 0);
    for (int a = 1; a < JOB_MAX_ATTEMPTS; a++)
        assert_true(job_retry_delay_s(a) <= JOB_RETRY_CAP_S);
    assert_true(job_retryable(KUBE_ECONFLICT));
    assert_true(job_retryable(-EBUSY));
    assert_true(job_retryable(-EIO));
    assert_false(job_retryable(0));
    assert_false(job_retryable(-EINVAL));
    assert_false(job_retryable(-EPERM));
    assert_false(job_retryable(-ENOENT));
    assert_false(job_retryable(-ECANCELED));
}

/* The results ConfigMap's name and label stay within Kubernetes' limits for any valid
 * Deployment name, and stay distinct for two long names that share their first characters. */
static void test_sizing_name(void **state)
{
    (void)state;
    char out[JOB_NAME_MAX + 1], other[JOB_NAME_MAX + 1], name[254];

    job_sizing_name("app", out);
    assert_string_equal(out, "app-sizing");

    memset(name, 'a', 246);
    name[246] = '\0'; /* 246 + 7 = 253: still the plain form */
    job_sizing_name(name, out);
    assert_int_equal(strlen(out), 253);
    assert_string_equal(out + 246, "-sizing");

    memset(name, 'a', 253);
    name[253] = '\0';
    job_sizing_name(name, out);
    assert_true(strlen(out) <= JOB_NAME_MAX);
    assert_true(strlen(out) <= 63 + strlen("-sizing"));
    assert_string_equal(out + strlen(out) - 7, "-sizing");
    name[252] = 'b';
    job_sizing_name(name, other);
    assert_string_not_equal(out, other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),        cmocka_unit_test(test_refuses_foreign_progress),
        cmocka_unit_test(test_sanitises_numbers), cmocka_unit_test(test_log_safe),
        cmocka_unit_test(test_retry_backoff),     cmocka_unit_test(test_sizing_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
