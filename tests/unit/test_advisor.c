/* Tests for src/sweep/advisor.c. The main fixture is seed 000's published sweep: the advisor
 * must reach the same verdicts, the same `*`, the same estimated users and state the same three
 * takeaways from the same numbers. Throughputs carry one decimal chosen so that they print as
 * the seed's table does (301, 1111 ...) and give the seed's user estimates (~601, ~2223 ...). */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/advisor.h"

#define MS 1000ULL

struct fx {
    const char *spec;
    double rps;
    uint64_t p50, p95, p99; /* ms */
};

static const struct fx seed000[] = {
    {"1@0.5/512Mi", 300.6, 114, 380, 607}, {"1@1/512Mi", 1111.4, 38, 83, 108},
    {"2@1/1Gi", 481.0, 95, 206, 300},      {"2@2/1Gi", 1637.0, 22, 67, 85},
    {"4@2/1Gi", 1011.6, 19, 100, 184},     {"4@4/2Gi", 2995.3, 13, 44, 69},
};
#define NSEED (sizeof(seed000) / sizeof(seed000[0]))

static void seed_opts(struct advisor_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->thresholds.healthy_p95_us = 100 * 1000;
    o->thresholds.healthy_errors = 0.01;
    o->thresholds.overloaded_p95_us = 500 * 1000;
    o->thresholds.overloaded_errors = 0.01;
    o->per_user_rps = 0.5;
    o->host_cores = 12;
}

static void seed_rows(struct advisor_row *rows)
{
    char err[ERR_LEN];
    for (size_t i = 0; i < NSEED; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        assert_int_equal(variant_parse(seed000[i].spec, &rows[i].variant, err), 0);
        rows[i].measured = true;
        rows[i].throughput_rps = seed000[i].rps;
        rows[i].p50_us = seed000[i].p50 * MS;
        rows[i].p95_us = seed000[i].p95 * MS;
        rows[i].p99_us = seed000[i].p99 * MS;
        rows[i].requests = (uint64_t)(seed000[i].rps * 20);
        rows[i].cpu_cores_used = -1;
        rows[i].peak_memory_bytes = -1;
        rows[i].gen_cores = -1;
        rows[i].host_other_cores = -1;
    }
}

static int has(const struct advice *a, const char *needle)
{
    for (size_t i = 0; i < a->nfindings; i++)
        if (strstr(a->findings[i], needle))
            return 1;
    return 0;
}

static void dump(const struct advice *a)
{
    for (size_t i = 0; i < a->nfindings; i++)
        print_message("finding: %s\n", a->findings[i]);
}

static void test_seed000_verdicts_users_star(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";
    static const enum verdict want[] = {VERDICT_STRESSED, VERDICT_HEALTHY,  VERDICT_STRESSED,
                                        VERDICT_HEALTHY,  VERDICT_STRESSED, VERDICT_HEALTHY};
    static const long users[] = {601, 2223, 962, 3274, 2023, 5991};

    seed_opts(&o);
    seed_rows(rows);
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    for (size_t i = 0; i < NSEED; i++) {
        assert_int_equal(a.rows[i].verdict, want[i]);
        assert_int_equal(lround(a.rows[i].est_users), users[i]);
    }
    assert_int_equal(a.recommended, 5);
    assert_string_equal(rows[a.recommended].variant.label, "4w / 4.0c / 2Gi");
    assert_false(a.by_target);
    assert_int_equal(a.replicas, 1);
    /* Values from the recommended row; requests from the documented fractions (no usage). */
    assert_int_equal(a.workers, 4);
    assert_int_equal(a.limit_cpu_m, 4000);
    assert_int_equal(a.limit_memory, 2LL << 30);
    assert_false(a.cpu_request_measured);
    assert_int_equal(a.request_cpu_m, 800);
    assert_int_equal(a.request_memory, 1LL << 30);
}

static void test_seed000_findings(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    seed_rows(rows);
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    dump(&a);
    /* 1. Workers without proportional CPU made things worse, by how much. */
    assert_true(has(&a, "Workers beyond the cores made things worse"));
    assert_true(has(&a, "2w / 1.0c / 1Gi did 481 req/s against 1111 for 1w / 1.0c / 512Mi (-57%)"));
    assert_true(has(&a, "4w / 2.0c / 1Gi did 1012 req/s against 1637 for 2w / 2.0c / 1Gi (-38%)"));
    /* 2. CPU dominates memory: 0.5c -> 1c at the same memory more than tripled throughput. */
    assert_true(has(&a, "CPU dominates memory"));
    assert_true(has(&a, "from 0.5 to 1 cores at the same memory (1w / 512Mi) multiplied "
                        "throughput by 3.7x"));
    /* 3. When workers match cores: 1.5x and 2.7x, 67% of linear from 1 to 4 cores: sub-linear
     * (the published text said "roughly linear", which its own 67% does not support). */
    assert_true(has(&a, "Scaling is sub-linear when workers match cores"));
    assert_true(has(&a, "2w/2c -> 1637 req/s (1.5x"));
    assert_true(has(&a, "4w/4c -> 2995 req/s (2.7x"));
}

static void test_seed000_rule(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    seed_rows(rows);
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    /* One worker per core did best at 1 and at 2 cores: decided from 4 variants. */
    assert_true(fabs(a.rule.cores_per_worker - 1.0) < 1e-9);
    assert_false(a.cores_per_worker.fallback);
    assert_int_equal(a.cores_per_worker.variants, 4);
    /* No memory measured: seed 000's 192 MiB, and it says so. */
    assert_true(a.memory_per_worker.fallback);
    assert_true(fabs(a.rule.memory_per_worker_mib - 192) < 1e-9);
    assert_non_null(strstr(a.memory_per_worker.text, "cannot decide"));
    /* 1->2->4 matched pairs still paid at 4: the data cannot place the ceiling; 8 is used. */
    assert_true(a.max_workers.fallback);
    assert_int_equal(a.rule.max_workers, 8);
    assert_int_equal(a.max_workers.variants, 3);
}

static void test_target_cheapest_and_replicas(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    seed_rows(rows);
    /* 2000 users at 0.5 req/s = 1000 req/s: 1w/1c/512Mi (1111, HEALTHY) is the cheapest. */
    o.target_rps = 2000 * 0.5;
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    assert_true(a.by_target);
    assert_int_equal(a.recommended, 1);
    assert_int_equal(a.replicas, 1);

    /* 4000 req/s: no single variant holds it. Replicas x cores: 1c x4 = 4, 2c x3 = 6,
     * 4c x2 = 8: four 1-core pods. */
    o.target_rps = 4000;
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    assert_true(a.by_target);
    assert_int_equal(a.recommended, 1);
    assert_int_equal(a.replicas, 4);
}

static void test_marked_rows_never_recommended(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    o.host_cores = 2;
    seed_rows(rows);
    rows[5].flags |= ADVISOR_ROW_CPU_EXCEEDS_HOST;
    rows[3].flags |= ADVISOR_ROW_CONTENDED;
    rows[3].gen_cores = 0.9;
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    dump(&a);
    /* 4w/4c exceeds the host, 2w/2c is contended: the best remaining is 1w/1c. */
    assert_int_equal(a.recommended, 1);
    assert_false(a.rows[5].capacity);
    assert_true(has(&a, "more CPU than this host has (2 cores): 4w / 4.0c / 2Gi"));
    assert_true(has(&a, "contended"));
}

static void test_failed_and_overloaded(void **state)
{
    (void)state;
    static struct advisor_row rows[3];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    memset(rows, 0, sizeof(rows));
    assert_int_equal(variant_parse("1@1/64Mi", &rows[0].variant, err), 0);
    snprintf(rows[0].note, sizeof(rows[0].note), "OOM-killed");
    assert_int_equal(variant_parse("1@1/512Mi", &rows[1].variant, err), 0);
    rows[1].measured = true;
    rows[1].throughput_rps = 900;
    rows[1].p95_us = 800 * MS;
    rows[1].requests = 100;
    rows[1].peak_memory_bytes = 100LL << 20;
    rows[1].cpu_cores_used = 0.98;
    assert_int_equal(variant_parse("2@2/512Mi", &rows[2].variant, err), 0);
    rows[2].measured = true;
    rows[2].throughput_rps = 500;
    rows[2].p95_us = 50 * MS;
    rows[2].error_rate = 0.02; /* 2% errors: OVERLOADED despite a low p95 */
    rows[2].requests = 100;
    assert_int_equal(advisor_run(rows, 3, &o, &a, err), 0);
    dump(&a);
    assert_int_equal(a.rows[1].verdict, VERDICT_OVERLOADED);
    assert_int_equal(a.rows[2].verdict, VERDICT_OVERLOADED);
    assert_int_equal(a.recommended, -1);
    assert_true(has(&a, "1w / 1.0c / 64Mi: OOM-killed"));
    /* The rule's memory constant learns from the measured peak and the OOM-killed variant:
     * 100 MiB/worker measured, 64 MiB/worker died; 100 * 1.25 = 125 -> 128 MiB. */
    assert_false(a.memory_per_worker.fallback);
    assert_true(fabs(a.rule.memory_per_worker_mib - 128) < 1e-9);
}

static void test_measured_requests_and_memory_finding(void **state)
{
    (void)state;
    static struct advisor_row rows[3];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";
    static const char *specs[] = {"1@1/256Mi", "1@1/512Mi", "2@2/512Mi"};
    static const double rps[] = {500, 505, 900};

    seed_opts(&o);
    memset(rows, 0, sizeof(rows));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(variant_parse(specs[i], &rows[i].variant, err), 0);
        rows[i].measured = true;
        rows[i].throughput_rps = rps[i];
        rows[i].p95_us = 40 * MS;
        rows[i].requests = 1000;
        rows[i].cpu_cores_used = 0.8 * rows[i].variant.workers;
        rows[i].peak_memory_bytes = (60LL << 20) * rows[i].variant.workers;
    }
    assert_int_equal(advisor_run(rows, 3, &o, &a, err), 0);
    dump(&a);
    assert_int_equal(a.recommended, 2);
    /* 1.6 cores used * 1.25 = 2.0 -> 2000m (capped at the limit); 120 MiB * 1.25 = 150 MiB. */
    assert_true(a.cpu_request_measured);
    assert_int_equal(a.request_cpu_m, 2000);
    assert_int_equal(a.request_memory, 150LL << 20);
    /* 256Mi -> 512Mi at 1w/1c: +1%, inside the noise. */
    assert_true(has(&a, "Memory made no measurable difference"));
    assert_true(has(&a, "+1%"));
    /* 60 MiB per worker + 25% = 75 -> 80 MiB. */
    assert_true(fabs(a.rule.memory_per_worker_mib - 80) < 1e-9);
    assert_int_equal(a.memory_per_worker.variants, 3);
}

static void test_classify_boundaries(void **state)
{
    (void)state;
    struct advisor_opts o;
    struct advisor_row r;

    seed_opts(&o);
    memset(&r, 0, sizeof(r));
    r.requests = 10;
    r.p95_us = 99999;
    assert_int_equal(advisor_classify(&r, &o.thresholds), VERDICT_HEALTHY);
    r.p95_us = 100000; /* p95 must be strictly below the healthy bound */
    assert_int_equal(advisor_classify(&r, &o.thresholds), VERDICT_STRESSED);
    r.p95_us = 500000;
    assert_int_equal(advisor_classify(&r, &o.thresholds), VERDICT_STRESSED);
    r.p95_us = 500001;
    assert_int_equal(advisor_classify(&r, &o.thresholds), VERDICT_OVERLOADED);
    r.p95_us = 1000;
    r.error_rate = 0.01; /* exactly 1%: not healthy, not above overloaded */
    assert_int_equal(advisor_classify(&r, &o.thresholds), VERDICT_STRESSED);
    r.requests = 0;
    assert_int_equal(advisor_classify(&r, &o.thresholds), VERDICT_OVERLOADED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed000_verdicts_users_star),
        cmocka_unit_test(test_seed000_findings),
        cmocka_unit_test(test_seed000_rule),
        cmocka_unit_test(test_target_cheapest_and_replicas),
        cmocka_unit_test(test_marked_rows_never_recommended),
        cmocka_unit_test(test_failed_and_overloaded),
        cmocka_unit_test(test_measured_requests_and_memory_finding),
        cmocka_unit_test(test_classify_boundaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
