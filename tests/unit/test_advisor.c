/* Tests for the advisor (src/advise/advisor.c, advisor_rule.c, advisor_findings.c). The main
 * fixture is a published reference sweep (a small web app, six variants from 0.5 to 4 cores):
 * the advisor must reach the same verdicts, the same `*`, the same estimated users and state the
 * same takeaways from the same numbers, except where the published words do not match their own
 * numbers. Throughputs carry one decimal chosen so that they print as the published table does
 * (301, 1111 ...) and give its user estimates (~601 ...).
 *
 * The band tests pin the words of every finding for each band of its number. Expected phrases
 * that name a threshold are formatted from the advisor's constants, and rows at a band's edges
 * are computed from them, so changing a constant changes what these tests expect. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advise/advisor.h"
#include "fixtures.h"

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
    for (size_t i = 0; i < NSEED; i++)
        fixture_row(&rows[i], seed000[i].spec, seed000[i].rps, seed000[i].p50 * MS,
                    seed000[i].p95 * MS, seed000[i].p99 * MS, (uint64_t)(seed000[i].rps * 20));
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
    /* No memory measured: the default rule's 192 MiB, and it says so. */
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
    rows[5].flags |= SWEEP_FLAG_CPU_EXCEEDS_HOST;
    rows[3].flags |= SWEEP_FLAG_CONTENDED;
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
    fixture_failed_row(&rows[0], "1@1/64Mi", PLATFORM_FAIL_OOM, "OOM-killed");
    fixture_row(&rows[1], "1@1/512Mi", 900, 0, 800 * MS, 0, 100);
    rows[1].peak_memory_bytes = 100LL << 20;
    rows[1].cpu_cores_used = 0.98;
    fixture_row(&rows[2], "2@2/512Mi", 500, 0, 50 * MS, 0, 100);
    rows[2].error_rate = 0.02; /* 2% errors: OVERLOADED despite a low p95 */
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

    /* A flagged row has no vote in the findings or the CPU constants, but its peak memory still
     * bounds what a worker needs (runner.h, SWEEP_FLAG_NOT_CAPACITY): 100 MiB per worker + 25% =
     * 125 -> 128 MiB. */
    rows[0].flags = SWEEP_FLAG_CONTENDED;
    rows[0].peak_memory_bytes = 100LL << 20;
    assert_int_equal(advisor_run(rows, 3, &o, &a, err), 0);
    assert_false(a.rows[0].capacity);
    assert_true(fabs(a.rule.memory_per_worker_mib - 128) < 1e-9);
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

/* ---- bands ----------------------------------------------------------------------------------- */

/* Fills rows from specs and throughputs: measured, HEALTHY-looking, usage unknown. */
static void make_rows(struct advisor_row *rows, size_t n, const char *const *specs,
                      const double *rps)
{
    for (size_t i = 0; i < n; i++)
        fixture_row(&rows[i], specs[i], rps[i], 10 * MS, 40 * MS, 60 * MS, 1000);
}

/* Gives each row a valid searched capacity of its throughput, three repeats within +/-rel of it,
 * usage unknown. */
static void searched_caps(struct advisor_row *rows, size_t n, const double *rps, double rel)
{
    for (size_t i = 0; i < n; i++) {
        struct capacity_result *c = &rows[i].cap;
        c->searched = c->valid = true;
        c->rps = rps[i];
        c->cpu_cores = -1;
        c->peak_memory_bytes = -1;
        c->interval =
            (struct stats_summary){3, rps[i], 0, 0, (1 - rel) * rps[i], (1 + rel) * rps[i]};
    }
}

/* The one finding that contains needle, or fails the test. */
static const char *finding_with(const struct advice *a, const char *needle)
{
    for (size_t i = 0; i < a->nfindings; i++)
        if (strstr(a->findings[i], needle))
            return a->findings[i];
    dump(a);
    print_error("no finding contains \"%s\"\n", needle);
    fail();
    return NULL;
}

static void run_rows(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    assert_int_equal(advisor_run(rows, n, &o, a, err), 0);
}

/* The phrases a scaling finding states its band with, from the constants. */
static void linear_band(char *buf, size_t len)
{
    snprintf(buf, len, "the %.0f-%.0f%% this advisor calls linear", ADVISOR_LINEAR_LOW * 100,
             ADVISOR_LINEAR_HIGH * 100);
}

static void noise_band(char *buf, size_t len)
{
    snprintf(buf, len, "the %.0f%% this sweep treats as noise", ADVISOR_NOISE * 100);
}

struct scaling_case {
    const char *name;
    const char *small, *large; /* workers matched to cores, so the matched scope applies */
    double small_rps, large_rps;
    const char *word;   /* the finding's opening words */
    const char *figure; /* the figure the word is judged on, as printed */
    const char *band;   /* "linear", "noise": which band phrase the sentence states */
};

static void test_scaling_bands(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[2];
    char lin[128], noise[128];
    static const struct scaling_case cases[] = {
        {"60% at 4x", "1@1/1Gi", "4@4/1Gi", 1000, 2400, "Scaling is sub-linear when workers match",
         "60% of linear", "linear"},
        {"100% at 2x", "1@1/1Gi", "2@2/1Gi", 1000, 2000, "Scaling is linear when workers match",
         "100% of linear", "linear"},
        {"283% at 4x", "1@1/1Gi", "4@4/1Gi", 400, 4520, "Scaling is super-linear when workers",
         "283% of linear", "linear"},
        {"+3% at 2x", "1@1/1Gi", "2@2/1Gi", 1000, 1030,
         "Throughput did not scale with CPU when workers match cores", "changed by +3%", "noise"},
        {"-20% at 2x", "1@1/1Gi", "2@2/1Gi", 1000, 800,
         "Throughput fell as CPU grew when workers match cores", "changed by -20%", "noise"},
    };

    linear_band(lin, sizeof(lin));
    noise_band(noise, sizeof(noise));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct scaling_case *c = &cases[i];
        const char *specs[] = {c->small, c->large};
        const double rps[] = {c->small_rps, c->large_rps};
        print_message("case %s\n", c->name);
        make_rows(rows, 2, specs, rps);
        run_rows(rows, 2, &a);
        const char *f = finding_with(&a, c->word);
        assert_non_null(strstr(f, c->figure));
        assert_non_null(strstr(f, strcmp(c->band, "linear") == 0 ? lin : noise));
        /* Only super-linear scaling blames throttling and names an odd row. */
        assert_int_equal(strstr(f, "throttled") != NULL, strstr(c->word, "super-linear") != NULL);
        /* No other word of the family next to this number. */
        if (!strstr(c->word, "linear"))
            assert_null(strstr(f, "Scaling is"));
    }
}

/* Rows at each edge of the linear band, computed from the constants: one percent outside is
 * named for the side it is on, the edge itself is linear. */
static void test_scaling_band_edges(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[2];
    const char *specs[] = {"1@1/1Gi", "2@2/1Gi"};
    const struct {
        double share;
        const char *word;
    } edges[] = {
        {ADVISOR_LINEAR_LOW - 0.01, "Scaling is sub-linear"},
        {ADVISOR_LINEAR_LOW, "Scaling is linear"},
        {ADVISOR_LINEAR_HIGH, "Scaling is linear"},
        {ADVISOR_LINEAR_HIGH + 0.01, "Scaling is super-linear"},
    };
    char fig[64];

    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        const double rps[] = {1000, 1000 * 2 * edges[i].share};
        make_rows(rows, 2, specs, rps);
        run_rows(rows, 2, &a);
        snprintf(fig, sizeof(fig), "throughput per core %s %.0f%% of its value",
                 edges[i].share > ADVISOR_LINEAR_HIGH ? "rose to" : "kept", edges[i].share * 100);
        const char *f = finding_with(&a, edges[i].word);
        assert_non_null(strstr(f, fig));
    }
}

/* The Node.js sweep: 11.3x for 4x the CPU from 0.5 to 2 cores with one worker is not
 * linear. The smallest row is the odd one, and the 1-core row above it is still super-linear
 * against the 2-core one, so it is named as likely throttled too. */
static void test_scaling_super_linear_names_odd_row(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[3];
    const char *specs[] = {"1@0.5/512Mi", "1@1/512Mi", "1@2/512Mi"};
    const double node[] = {200, 700, 2260};
    const double one_odd[] = {200, 1000, 2000};

    make_rows(rows, 3, specs, node);
    run_rows(rows, 3, &a);
    const char *f =
        finding_with(&a, "Scaling is super-linear from the smallest to the largest CPU");
    static const char *const said[] = {
        "11.3x for 4.0x the CPU, 283% of linear",
        "1w / 2.0c / 512Mi did 283% of linear against 1w / 0.5c / 512Mi",
        "CFS quota",
        "garbage collection",
        "Its row is the odd one",
        "(super-linear), so 1w / 1.0c / 512Mi was likely throttled as well",
    };
    for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++)
        assert_non_null(strstr(f, said[i]));

    /* Only the smallest is off: without it the rest scale linearly, and the sentence says so. */
    make_rows(rows, 3, specs, one_odd);
    run_rows(rows, 3, &a);
    f = finding_with(&a, "Scaling is super-linear");
    assert_non_null(strstr(f, "Without it, 1w / 1.0c / 512Mi -> 1w / 2.0c / 512Mi is 2.0x for "
                              "2.0x the CPU, 100% of linear (linear)."));
    assert_null(strstr(f, "as well"));
}

struct oversub_case {
    double one_core_2w, two_core_4w; /* against 1w/1c = 1000 and 2w/2c = 2000 */
    const char *word;
};

static void test_oversubscription_bands(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[4];
    const char *specs[] = {"1@1/1Gi", "2@1/1Gi", "2@2/1Gi", "4@2/1Gi"};
    char noise[128];
    /* The noise edge itself is "no measurable difference"; one percent beyond it is not. */
    const double edge = 1 - ADVISOR_NOISE, beyond = 1 - ADVISOR_NOISE - 0.01;
    const struct oversub_case cases[] = {
        {500, 1000, "Workers beyond the cores made things worse, not better"},
        {1200, 2400, "Workers beyond the cores helped (each"},
        {1000 * edge, 2000 * edge, "Workers beyond the cores made no measurable difference"},
        {1000 * beyond, 2000 * edge, "Workers beyond the cores never helped: 1 of 2 comparisons"},
        {1200, 2000, "Workers beyond the cores helped in 1 of 2 comparisons"},
        {500, 2400, "Workers beyond the cores gave mixed results (worst -50%, best +20%)"},
    };

    noise_band(noise, sizeof(noise));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const double rps[] = {1000, cases[i].one_core_2w, 2000, cases[i].two_core_4w};
        make_rows(rows, 4, specs, rps);
        run_rows(rows, 4, &a);
        const char *f = finding_with(&a, cases[i].word);
        if (!strstr(cases[i].word, "mixed"))
            assert_non_null(strstr(f, noise));
    }
}

static void test_memory_and_cpu_bands(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[3];
    const char *specs[] = {"1@1/256Mi", "1@1/512Mi", "1@2/256Mi"};
    char noise[128], spare[128];

    noise_band(noise, sizeof(noise));
    /* Memory within the noise, CPU clearly more than twice it: CPU dominates. */
    const double flat[] = {1000, 1000 * (1 + ADVISOR_NOISE), 1800};
    make_rows(rows, 3, specs, flat);
    run_rows(rows, 3, &a);
    const char *f = finding_with(&a, "CPU dominates memory");
    assert_non_null(strstr(f, "memory made no measurable difference"));
    assert_non_null(strstr(f, noise));
    assert_non_null(strstr(f, "multiplied throughput by 1.8x"));

    /* Memory one percent beyond the noise: it made a difference, so CPU does not "dominate". */
    const double mem[] = {1000, 1000 * (1 + ADVISOR_NOISE + 0.01), 1800};
    make_rows(rows, 3, specs, mem);
    run_rows(rows, 3, &a);
    assert_false(has(&a, "CPU dominates memory"));
    snprintf(spare, sizeof(spare), "more memory changed throughput by up to %+.0f%%",
             (ADVISOR_NOISE + 0.01) * 100);
    assert_true(has(&a, spare));

    /* More CPU within the noise: not CPU-bound, and the change is printed, not "1.0x". */
    const double cpu[] = {1000, 1000, 1000 * (1 + ADVISOR_NOISE)};
    make_rows(rows, 3, specs, cpu);
    run_rows(rows, 3, &a);
    f = finding_with(&a, "More CPU made no measurable difference");
    snprintf(spare, sizeof(spare), "changed throughput by %+.0f%%", ADVISOR_NOISE * 100);
    assert_non_null(strstr(f, spare));

    /* Peak memory against the spare-room share, either side of it. */
    const char *one[] = {"1@1/1Gi", "1@2/1Gi"};
    const double rps[] = {1000, 1000};
    snprintf(spare, sizeof(spare), "%.0f%% this advisor reads as room to spare",
             ADVISOR_MEM_SPARE_SHARE * 100);
    for (int above = 0; above < 2; above++) {
        make_rows(rows, 2, one, rps);
        double share = ADVISOR_MEM_SPARE_SHARE + (above ? 0.05 : -0.05);
        rows[0].peak_memory_bytes = (int64_t)(share * (double)(1LL << 30));
        run_rows(rows, 2, &a);
        f = finding_with(&a, spare);
        assert_non_null(strstr(f, above ? "not under the" : ", under the"));
    }
}

/* The CPU finding's bands are symmetric about zero: at each band edge, on both signs, the word
 * matches the figure printed beside it (a fall beyond the noise is a fall, never "within" it). */
static void test_cpu_band_edges_both_signs(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[3];
    const char *specs[] = {"1@1/256Mi", "1@1/512Mi", "1@2/256Mi"};
    const double noise = ADVISOR_NOISE * 100, matters = ADVISOR_CPU_MATTERS * 100;
    const struct {
        double pct;       /* the 2-core row's change against the 1-core one, whole percent */
        const char *word; /* the finding's opening words */
        bool change;      /* the figure is printed as a change ("changed throughput by") */
    } edges[] = {
        {-(noise + 1), "More CPU lowered throughput", true},
        {-noise, "More CPU made no measurable difference", true},
        {0, "More CPU made no measurable difference", true},
        {noise, "More CPU made no measurable difference", true},
        {noise + 1, "CPU: going from", false},
        {matters - 1, "CPU: going from", false},
        {matters, "CPU dominates memory", false},
    };
    char fig[96], band[128];

    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        const double rps[] = {1000, 1000, 1000 * (1 + edges[i].pct / 100)};
        make_rows(rows, 3, specs, rps);
        run_rows(rows, 3, &a);
        const char *f = finding_with(&a, edges[i].word);
        if (edges[i].change)
            snprintf(fig, sizeof(fig), "changed throughput by %+.0f%%", edges[i].pct);
        else
            snprintf(fig, sizeof(fig), "multiplied throughput by %.1fx", 1 + edges[i].pct / 100);
        if (!strstr(f, fig)) {
            print_error("case %+.0f%%: \"%s\" lacks \"%s\"\n", edges[i].pct, f, fig);
            fail();
        }
        /* Only a change within the noise may be called no difference. */
        assert_int_equal(has(&a, "More CPU made no measurable difference"),
                         fabs(edges[i].pct) <= noise);
        if (edges[i].pct < -noise) {
            snprintf(band, sizeof(band), "a fall beyond the %.0f%%", noise);
            assert_non_null(strstr(f, band));
        }
    }
}

/* The seed options with what a capacity sweep's sizing needs: the SLO (p95 100 ms, errors 1%),
 * the default cost weights and planning margins. */
static void capacity_opts(struct advisor_opts *o)
{
    seed_opts(o);
    o->slo.p95_us = 100 * MS;
    o->slo.errors = 0.01;
    o->cost.cpu = 1;
    o->cost.memory_gib = 0.13;
    o->planning.buffer = 0.10;
    o->planning.growth = 0.30;
}

/* A variant that misses the SLO even at one request at a time: the finding names its measured
 * p95 and the SLO's, and it is never recommended; the other variant still is. */
static void test_unmeetable_finding(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[2];
    const char *specs[] = {"1@0.5/256Mi", "1@1/256Mi"};
    const double rps[] = {0, 400};
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    make_rows(rows, 2, specs, rps);
    for (int i = 0; i < 2; i++) {
        struct capacity_result *c = &rows[i].cap;
        c->searched = true;
        c->cpu_cores = -1;
        c->peak_memory_bytes = -1;
        c->nsteps = 1;
        c->steps[0].kind = CAPACITY_STEP_PROBE;
        c->steps[0].p95_us = 40 * MS;
    }
    rows[0].cap.flags = CAPACITY_FLAG_UNMEETABLE;
    rows[0].cap.limited_by = CAPACITY_LIMIT_SLO_P95;
    rows[0].cap.steps[0].p95_us = 204 * MS;
    rows[0].cap.valid = true;
    rows[1].cap.rps = 400;
    rows[1].cap.valid = true;
    capacity_opts(&o);
    assert_int_equal(advisor_run(rows, 2, &o, &a, err), 0);
    const char *f = finding_with(&a, "Even one request at a time misses the SLO");
    assert_non_null(strstr(f, "takes 204ms at p95 (the SLO's p95 is 100ms)"));
    assert_int_equal(a.recommended, 1);
}

/* Capacity mode, one coherent row: a row's state is judged on its repeats at capacity merged
 * (its P95 column), against the SLO too. A row whose merged repeats missed the SLO is never
 * HEALTHY and never the `*`, even with a valid capacity; the next row is recommended instead.
 * (A make demo row read "1210 req/s STRESSED" from its last repeat beside a higher capacity, and
 * could carry the star.) */
static void test_coherent_capacity_row(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[2];
    const char *specs[] = {"1@1/256Mi", "2@2/256Mi"};
    const double rps[] = {500, 1200};
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    make_rows(rows, 2, specs, rps);
    searched_caps(rows, 2, rps, 0.05);
    for (int i = 0; i < 2; i++) {
        struct capacity_result *c = &rows[i].cap;
        c->merged.have = true;
        c->merged.requests = 3000;
        c->merged.p95_us = rows[i].p95_us = 40 * MS;
    }
    capacity_opts(&o);
    assert_int_equal(advisor_run(rows, 2, &o, &a, err), 0);
    assert_int_equal(a.rows[1].verdict, VERDICT_HEALTHY);
    int star = a.recommended;
    assert_true(star >= 0);

    /* The starred row's merged repeats at the SLO's p95: no longer HEALTHY, no longer starred. */
    rows[star].p95_us = rows[star].cap.merged.p95_us = 100 * MS;
    assert_int_equal(advisor_run(rows, 2, &o, &a, err), 0);
    assert_int_not_equal(a.rows[star].verdict, VERDICT_HEALTHY);
    assert_int_not_equal(a.recommended, star);
    assert_true(a.recommended >= 0);
}

/* A capacity the sweep could not measure properly (here noisy: its repeats disagreed) is shown
 * flagged but votes in no finding: the CPU finding compares the valid rows only, and says
 * nothing once only one is left. (A make demo run read "going from 1 to 1.5 cores multiplied
 * throughput by 2.1x (809 -> 1702 req/s)" from a noisy 1702.) */
static void test_invalid_capacity_no_vote(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[3];
    const char *specs[] = {"2@0.5/512Mi", "2@1/512Mi", "2@1.5/512Mi"};
    const double rps[] = {400, 809, 1702};
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    make_rows(rows, 3, specs, rps);
    searched_caps(rows, 3, rps, 0.03);
    capacity_opts(&o);
    assert_int_equal(advisor_run(rows, 3, &o, &a, err), 0);
    assert_non_null(finding_with(&a, "(400 -> 1702 req/s)"));

    rows[2].cap.flags = CAPACITY_FLAG_NOISY;
    rows[2].cap.valid = false;
    assert_int_equal(advisor_run(rows, 3, &o, &a, err), 0);
    assert_false(has(&a, "1702"));
    assert_non_null(finding_with(&a, "(400 -> 809 req/s)"));
    assert_int_not_equal(a.recommended, 2);
}

/* Requests and the rule's derivations state the constants they used. */
static void test_sentences_from_constants(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct rule def;
    char want[256];

    rule_default(&def);
    seed_rows(rows);
    run_rows(rows, NSEED, &a);
    /* No usage: requests are the documented fractions of the 4-core / 2 GiB limits. */
    assert_int_equal(a.request_cpu_m, (int64_t)(4000 * ADVISOR_REQ_CPU_FRACTION));
    assert_int_equal(a.request_memory, (int64_t)((2LL << 30) * ADVISOR_REQ_MEM_FRACTION));
    snprintf(want, sizeof(want), "%.0f%% of the limit (CPU use was not measured)",
             ADVISOR_REQ_CPU_FRACTION * 100);
    assert_non_null(strstr(a.requests_note, want));
    snprintf(want, sizeof(want), "%.0f%% of the limit (peak memory was not measured)",
             ADVISOR_REQ_MEM_FRACTION * 100);
    assert_non_null(strstr(a.requests_note, want));
    /* Fallbacks name the default rule's values and where they come from. */
    snprintf(want, sizeof(want), "the default %.0f MiB is used (from %s)",
             def.memory_per_worker_mib, ADVISOR_DEFAULTS_SOURCE);
    assert_non_null(strstr(a.memory_per_worker.text, want));
    snprintf(want, sizeof(want), "the default (from %s) %u is used", ADVISOR_DEFAULTS_SOURCE,
             def.max_workers);
    assert_non_null(strstr(a.max_workers.text, want));
    snprintf(want, sizeof(want), "at least the %.0f%% of linear scaling's gain",
             ADVISOR_PAYS_FRACTION * 100);
    assert_non_null(strstr(a.max_workers.text, want));
    for (size_t i = 0; i < a.nfindings; i++)
        assert_null(strstr(a.findings[i], "seed"));

    /* Measured usage: the headroom is the constant's. */
    rows[5].cpu_cores_used = 2.0;
    rows[5].peak_memory_bytes = 400LL << 20;
    run_rows(rows, NSEED, &a);
    assert_int_equal(a.request_cpu_m, (int64_t)lround(2000 * (1 + ADVISOR_HEADROOM)));
    snprintf(want, sizeof(want), "measured peak memory + %.0f%% headroom", ADVISOR_HEADROOM * 100);
    assert_non_null(strstr(a.requests_note, want));
    snprintf(want, sizeof(want), "+ %.0f%% headroom, rounded up to %d MiB", ADVISOR_HEADROOM * 100,
             ADVISOR_MEM_STEP_MIB);
    assert_non_null(strstr(a.memory_per_worker.text, want));

    /* A step that adds less than the paying share stops max_workers there, and says why:
     * 1 -> 2 workers gains 20% (a fifth of linear's +100%), below the default 25%. */
    const char *specs[] = {"1@1/1Gi", "2@2/1Gi"};
    const double rps[] = {1000, 1000 * (1 + (ADVISOR_PAYS_FRACTION - 0.05))};
    make_rows(rows, 2, specs, rps);
    run_rows(rows, 2, &a);
    assert_false(a.max_workers.fallback);
    assert_int_equal(a.rule.max_workers, 1);
    snprintf(want, sizeof(want), "less than the %.0f%% of linear scaling's gain a step must add",
             ADVISOR_PAYS_FRACTION * 100);
    assert_non_null(strstr(a.max_workers.text, want));
}

/* An OOM kill is read from the failure kind: a note that merely mentions OOM does not raise the
 * memory constant, and an OOM kill whose note says something else does. */
static void test_oom_by_failure_kind(void **state)
{
    (void)state;
    static struct advice a;
    struct advisor_row rows[2];
    const char *specs[] = {"1@1/512Mi", "1@2/1Gi"};
    const double rps[] = {0, 1000};
    struct rule def;

    rule_default(&def);
    make_rows(rows, 2, specs, rps);
    rows[0].measured = false;
    rows[0].fail = PLATFORM_FAIL_DIED;
    snprintf(rows[0].note, sizeof(rows[0].note), "exited 1: OOM in the app's own allocator");
    run_rows(rows, 2, &a);
    assert_true(a.memory_per_worker.fallback);
    assert_true(fabs(a.rule.memory_per_worker_mib - def.memory_per_worker_mib) < 1e-9);

    rows[0].fail = PLATFORM_FAIL_OOM;
    snprintf(rows[0].note, sizeof(rows[0].note), "killed by the kernel at the memory limit");
    run_rows(rows, 2, &a);
    /* 512 MiB per worker died: 512 * (1 + headroom), rounded up to the step. */
    double want = ceil(512 * (1 + ADVISOR_HEADROOM) / ADVISOR_MEM_STEP_MIB) * ADVISOR_MEM_STEP_MIB;
    assert_true(fabs(a.rule.memory_per_worker_mib - want) < 1e-9);
    assert_non_null(strstr(a.memory_per_worker.text, "OOM-killed at 512 MiB per worker"));

    /* With a measured peak below it, the OOM kill raises the value and the text says so. */
    rows[1].peak_memory_bytes = 300LL << 20;
    run_rows(rows, 2, &a);
    assert_true(fabs(a.rule.memory_per_worker_mib - want) < 1e-9);
    assert_non_null(strstr(a.memory_per_worker.text,
                           "raised to the 512 MiB per worker at which 1w / 1.0c / 512Mi was "
                           "OOM-killed"));
    /* A measured peak above it sets the value; the OOM kill is only a bound. */
    rows[1].peak_memory_bytes = 800LL << 20;
    run_rows(rows, 2, &a);
    assert_non_null(strstr(a.memory_per_worker.text, "; above the 512 MiB per worker"));
}

/* Capacity mode: the reference sweep's throughputs as capacities (interval 3% below), CPU that
 * grows with load on the 1-core variant. The recommendation, the replicas, the requests and the
 * HPA are the sizing answer's; estimated users come from capacity; a marked row is never chosen
 * (1@1/512Mi, the cheapest, is marked contended below and the next cheapest wins). */
static void test_capacity_mode_uses_the_sizing(void **state)
{
    (void)state;
    struct advisor_row rows[NSEED];
    struct advisor_opts o;
    static struct advice a;
    char err[ERR_LEN];

    seed_opts(&o);
    o.cost.cpu = 1;
    o.cost.memory_gib = 0.13;
    o.planning.buffer = 0.10;
    o.planning.growth = 0.30;
    o.target_rps = 5000;
    seed_rows(rows);
    for (size_t i = 0; i < NSEED; i++) {
        struct capacity_result *c = &rows[i].cap;
        c->searched = c->valid = true;
        c->rps = seed000[i].rps;
        c->interval =
            (struct stats_summary){3, c->rps, 0, 0.03 * c->rps, 0.97 * c->rps, 1.03 * c->rps};
        c->cpu_cores = (double)rows[i].variant.cpu_millicores / 1000.0 * 0.9;
        c->peak_memory_bytes = 100LL << 20;
        c->steps[0] = (struct capacity_step){.kind = CAPACITY_STEP_SEARCH,
                                             .offered_rps = c->rps / 4,
                                             .achieved_rps = c->rps / 4,
                                             .cpu_cores = c->cpu_cores / 4,
                                             .peak_memory_bytes = -1,
                                             .gen_cores = -1,
                                             .pass = true};
        c->nsteps = 1;
    }
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    /* 1@1/512Mi: 7 x 1.065 = 7.455, the cheapest total (test_sizing.c works the table). */
    assert_int_equal(a.recommended, 1);
    assert_true(a.by_target);
    assert_int_equal(a.replicas, 7);
    assert_string_equal(a.why, a.sizing.why);
    assert_int_equal(a.request_cpu_m, 900); /* 0.9 cores at capacity, no headroom */
    assert_int_equal(a.request_memory, 125LL << 20);
    assert_true(a.sizing.hpa.enabled);
    assert_int_equal(a.sizing.hpa.min_replicas, 7);
    assert_true(fabs(a.rows[1].est_users - 1111.4 / 0.5) < 1e-9);
    assert_true(has(&a, "the sweep measured one pod of 1w / 1.0c / 512Mi"));
    assert_true(has(&a, "Autoscaling: CPU grows with load"));

    /* The same row marked: never the recommendation, whatever it costs. */
    rows[1].flags = SWEEP_FLAG_CONTENDED;
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    assert_int_equal(a.recommended, 3); /* 2@2/1Gi: 5 x 2.13 = 10.65 */
    assert_int_equal(a.replicas, 5);

    /* No target: no replicas, no HPA, the best capacity per unit of cost. */
    rows[1].flags = 0;
    o.target_rps = 0;
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    assert_int_equal(a.recommended, 1);
    assert_false(a.by_target);
    assert_int_equal(a.replicas, 1);
    assert_false(a.sizing.hpa.enabled);

    /* Fixed mode (nothing searched) keeps the reference rule. */
    for (size_t i = 0; i < NSEED; i++)
        rows[i].cap.searched = false;
    assert_int_equal(advisor_run(rows, NSEED, &o, &a, err), 0);
    assert_int_equal(a.recommended, 5);
    assert_false(a.sizing.hpa.enabled);
}

/* One stream step for stream_rows: n streams held with delivery p95 p95_ms. */
static void sstep(struct stream_capacity *c, unsigned n, uint64_t p95_ms, bool pass)
{
    struct stream_cap_step *st = &c->steps[c->nsteps++];
    memset(st, 0, sizeof(*st));
    st->streams = n;
    st->open = n;
    st->delivery_samples = n ? 100 : 0;
    st->delivery_p95_us = p95_ms * MS;
    st->cpu_cores = -1;
    st->memory_bytes = -1;
    st->pass = pass;
    st->why = pass ? STREAM_LIMIT_NONE : STREAM_LIMIT_DELIVERY_P95;
}

/* A stream sweep of two shapes: 1@1/512Mi holds 1,200 streams using 480 MiB of its 512Mi (memory
 * binds), delivery p95 20, 30, 40 ms at 400, 800, 1,200 streams (a slope of 25 ms per 1,000) and
 * 350 ms at 1,600; 2@2/1Gi holds 2,000 streams on 1.9 of its 2 cores (CPU binds). */
static void test_stream_findings(void **state)
{
    (void)state;
    static struct advisor_row rows[NSEED];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    seed_opts(&o);
    o.cost.cpu = 1;
    o.cost.memory_gib = 0.13;
    o.planning.buffer = 0.10;
    o.planning.growth = 0.30;
    o.delivery_slo_us = 200 * MS;
    o.target_streams = 5000;
    seed_rows(rows); /* the first two of the seed, respecified and stream-searched */
    assert_int_equal(variant_parse("1@1/512Mi", &rows[0].variant, err), 0);
    assert_int_equal(variant_parse("2@2/1Gi", &rows[1].variant, err), 0);
    struct stream_capacity *m = &rows[0].scap, *c = &rows[1].scap;
    m->searched = c->searched = m->valid = c->valid = true;
    m->streams = 1200;
    m->memory_bytes = 480 * 1024 * 1024;
    m->cpu_cores = 0.4;
    m->memory_per_stream_bytes = 300 * 1024;
    m->base_memory_bytes = 120 * 1024 * 1024;
    m->memory_points = 4;
    m->limited_by = STREAM_LIMIT_DELIVERY_P95;
    sstep(m, 0, 0, true);
    sstep(m, 400, 20, true);
    sstep(m, 800, 30, true);
    sstep(m, 1600, 350, false);
    sstep(m, 1200, 40, true);
    c->streams = 2000;
    c->cpu_cores = 1.9;
    c->memory_bytes = 300 * 1024 * 1024;
    c->memory_per_stream_bytes = -1;
    c->base_memory_bytes = -1;
    c->limited_by = STREAM_LIMIT_DELIVERY_P95;
    sstep(c, 2000, 90, true);

    assert_int_equal(advisor_run(rows, 2, &o, &a, err), 0);
    dump(&a);
    assert_true(a.sizing.streams);
    assert_true(has(&a, "Binding limit at the stream capacity: 1w / 1.0c / 512Mi: memory (480 "
                        "MiB of its 512Mi at 1,200 streams)"));
    assert_true(has(&a, "2w / 2.0c / 1Gi: CPU (1.90 of 2.00 cores, 95%, at 2,000 streams"));
    assert_true(has(&a, "Fan-out cost on 1w / 1.0c / 512Mi: each extra stream costs 300 KiB of "
                        "memory (a line through 4 points above a 120 MiB base) and +25.00 ms of "
                        "delivery p95 per 1,000 streams."));
    assert_true(has(&a, "Delivery latency bends on 1w / 1.0c / 512Mi between 1,200 streams (p95 "
                        "40.0ms) and 1,600 streams (p95 350ms, past the 200ms objective)."));
    assert_false(has(&a, "Fan-out cost on 2w"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_findings),
        cmocka_unit_test(test_seed000_verdicts_users_star),
        cmocka_unit_test(test_seed000_findings),
        cmocka_unit_test(test_seed000_rule),
        cmocka_unit_test(test_target_cheapest_and_replicas),
        cmocka_unit_test(test_marked_rows_never_recommended),
        cmocka_unit_test(test_failed_and_overloaded),
        cmocka_unit_test(test_measured_requests_and_memory_finding),
        cmocka_unit_test(test_classify_boundaries),
        cmocka_unit_test(test_scaling_bands),
        cmocka_unit_test(test_scaling_band_edges),
        cmocka_unit_test(test_scaling_super_linear_names_odd_row),
        cmocka_unit_test(test_oversubscription_bands),
        cmocka_unit_test(test_memory_and_cpu_bands),
        cmocka_unit_test(test_cpu_band_edges_both_signs),
        cmocka_unit_test(test_unmeetable_finding),
        cmocka_unit_test(test_coherent_capacity_row),
        cmocka_unit_test(test_invalid_capacity_no_vote),
        cmocka_unit_test(test_sentences_from_constants),
        cmocka_unit_test(test_oom_by_failure_kind),
        cmocka_unit_test(test_capacity_mode_uses_the_sizing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
