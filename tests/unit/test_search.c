/* Tests for src/sweep/search.c: the capacity search against synthetic apps whose capacity is
 * known (a sharp knee, a noisy knee, a generator that gives out first, a ceiling, a budget), and
 * the judgement of one step (who failed: the app or the generator). */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/search.h"

/* A synthetic app: sustains rates up to capacity; near it a step passes with a probability that
 * falls smoothly over +-noise (relative), as a real app's p95 does from window to window; the
 * generator cannot deliver more than gen_max (0: no limit). */
struct app {
    double capacity;
    double noise;
    double gen_max;
    uint64_t rng;
};

static double uniform(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (double)(*x >> 11) / 9007199254740992.0;
}

static enum search_outcome step(struct app *a, double rate)
{
    if (a->gen_max > 0 && rate > a->gen_max)
        return SEARCH_GEN_LIMITED;
    if (a->noise <= 0)
        return rate <= a->capacity ? SEARCH_PASS : SEARCH_FAIL;
    double z = (rate - a->capacity) / (a->noise * a->capacity);
    double p_pass = 1.0 / (1.0 + exp(4 * z));
    return uniform(&a->rng) < p_pass ? SEARCH_PASS : SEARCH_FAIL;
}

/* Runs a whole search; returns the number of steps it took. */
static unsigned run(struct search *s, struct app *a, const struct search_opts *o)
{
    double r, prev_low = 0, prev_high = 0;
    search_init(s, o);
    while (search_next(s, &r)) {
        assert_true(r >= SEARCH_MIN_RPS);
        if (o->max_rps > 0)
            assert_true(r <= o->max_rps);
        /* Every rate offered lies inside the bracket known so far. */
        if (prev_low > 0)
            assert_true(r > prev_low);
        if (prev_high > 0)
            assert_true(r < prev_high);
        search_record(s, r, step(a, r), CAPACITY_LIMIT_SLO_P95);
        prev_low = s->low;
        prev_high = s->high;
        assert_true(s->steps <= o->max_steps);
    }
    assert_true(s->done);
    return s->steps;
}

static void test_known_capacity(void **state)
{
    (void)state;
    /* Starts as a probe would give them: right, too low, too high, far off either way. */
    const double caps[] = {50, 200, 1234, 20000};
    const double starts[] = {1.0, 0.5, 1.3, 0.12, 3.0};
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
            struct app a = {.capacity = caps[i]};
            struct search_opts o = {
                .start_rps = caps[i] * starts[k] * 0.97, .precision = 0.05, .max_steps = 12};
            struct search s;
            unsigned n = run(&s, &a, &o);
            /* The answer never exceeds the capacity and is within the precision below it. */
            if (s.low > caps[i] || s.low < caps[i] * 0.95)
                fail_msg("capacity %g start x%g: found %g in %u steps", caps[i], starts[k], s.low,
                         n);
            assert_int_equal(s.limit, CAPACITY_LIMIT_SLO_P95);
            assert_int_equal(s.flags, 0);
            assert_true((s.high - s.low) / s.low < 0.05);
        }
    }
}

static void test_calibrated_start_fits_eight_steps(void **state)
{
    (void)state;
    /* From a start within a factor of two of the capacity, the default budget (8 steps)
     * brackets and bisects to the default precision (5%). */
    for (double f = 0.5; f <= 2.0; f += 0.05) {
        struct app a = {.capacity = 400};
        struct search_opts o = {.start_rps = 400 * f, .precision = 0.05, .max_steps = 8};
        struct search s;
        run(&s, &a, &o);
        if (s.limit != CAPACITY_LIMIT_SLO_P95 || s.low < 380 || s.low > 400)
            fail_msg("start x%.2f: found %g, limit %s, %u steps", f, s.low,
                     search_limit_name(s.limit), s.steps);
    }
}

/* From a predicted start (search_opts.predicted) within 15% of the capacity, at most 4 search
 * steps bracket and bisect to the precision; from one far off, the search still ends within the
 * precision below the capacity (a worse prediction costs steps, never accuracy). */
static void test_predicted_start(void **state)
{
    (void)state;
    unsigned worst_near = 0, worst_far = 0;
    for (double f = 0.85; f <= 1.151; f += 0.01) {
        struct app a = {.capacity = 400};
        struct search_opts o = {
            .start_rps = 400 * f, .precision = 0.05, .max_steps = 8, .predicted = true};
        struct search s;
        unsigned n = run(&s, &a, &o);
        if (n > 4 || s.limit != CAPACITY_LIMIT_SLO_P95 || s.low < 380 || s.low > 400)
            fail_msg("predicted x%.2f: found %g in %u steps, limit %s", f, s.low, n,
                     search_limit_name(s.limit));
        worst_near = n > worst_near ? n : worst_near;
    }
    for (double f = 0.2; f <= 5.01; f *= 1.1) {
        struct app a = {.capacity = 400};
        struct search_opts o = {
            .start_rps = 400 * f, .precision = 0.05, .max_steps = 12, .predicted = true};
        struct search s;
        unsigned n = run(&s, &a, &o);
        if (s.limit != CAPACITY_LIMIT_SLO_P95 || s.low < 380 || s.low > 400)
            fail_msg("predicted x%.2f: found %g in %u steps", f, s.low, n);
        worst_far = n > worst_far ? n : worst_far;
    }
    assert_true(worst_near <= 4);
    assert_true(worst_far <= 10);
    /* Without the prediction the same starts near the capacity take more steps: the doubling
     * overshoots by up to 2x and the bisection pays for it. */
    unsigned blind = 0;
    for (double f = 0.85; f <= 1.151; f += 0.01) {
        struct app a = {.capacity = 400};
        struct search_opts o = {.start_rps = 400 * f, .precision = 0.05, .max_steps = 12};
        struct search s;
        blind = run(&s, &a, &o) > blind ? s.steps : blind;
    }
    assert_true(blind > worst_near);
}

/* search_predict: the probe times the others' capacity-to-probe ratio; else capacity per core;
 * the probe a floor when it passed, a ceiling when it missed; nothing known, 0. */
static void test_predict(void **state)
{
    (void)state;
    /* Two variants whose capacities were 0.8 and 0.5 of their probes: the ratio's geometric
     * mean, sqrt(0.4) = 0.632, times this probe's 1000. */
    struct search_known k[3] = {{1, 500, 400}, {2, 2000, 1000}, {0.5, 0, 0}};
    assert_true(fabs(search_predict(k, 3, 4, 1000, false) - 1000 * sqrt(0.4)) < 1e-6);
    /* A probe that passed the SLO (cpu_server.py at users: 8: ~180 req/s whatever the CPU) may
     * not have loaded the app: the capacity per core, here sqrt(400 x 500) x 4 = 1789, when it is
     * the larger. */
    assert_true(fabs(search_predict(k, 3, 4, 1000, true) - 4 * sqrt(400.0 * 500)) < 1e-6);
    struct search_known cpu[1] = {{0.25, 180, 117}};
    assert_true(fabs(search_predict(cpu, 1, 1, 184, true) - 468) < 1e-6);
    /* Workers differ at the same cores (sweep_capacity.sh's 2@1 and 4@1): the probe carries the
     * difference that the capacity per core cannot. */
    struct search_known w[1] = {{1, 205, 200}};
    assert_true(fabs(search_predict(w, 1, 1, 410, true) - 410) < 1e-6); /* the floor */
    assert_true(fabs(search_predict(w, 1, 1, 410, false) - 410 * 200.0 / 205) < 1e-6);
    /* No probe here (or none before): per core, the geometric mean, times the cores. */
    struct search_known c[2] = {{1, 0, 100}, {2, 0, 800}};
    assert_true(fabs(search_predict(c, 2, 2, 0, false) - 2 * 200) < 1e-6);
    /* ... clamped to a factor of SEARCH_PREDICT_MAX_RATIO from a probe, and the probe that passed
     * a floor. */
    assert_true(fabs(search_predict(c, 2, 2, 20, false) - 20) < 1e-6); /* missed: the ceiling */
    assert_true(fabs(search_predict(c, 2, 64, 100, true) - 100 * SEARCH_PREDICT_MAX_RATIO) < 1e-6);
    /* A far-off ratio is clamped too. */
    struct search_known r[1] = {{1, 1, 1000}};
    assert_true(fabs(search_predict(r, 1, 1, 50, true) - 50 * SEARCH_PREDICT_MAX_RATIO) < 1e-6);
    /* Nothing known, or nothing with a capacity: 0 (the probe's rate is the start). */
    assert_true(search_predict(NULL, 0, 1, 300, true) == 0);
    struct search_known z[1] = {{1, 300, 0}};
    assert_true(search_predict(z, 1, 1, 300, true) == 0);
}

static void test_noisy_knee(void **state)
{
    (void)state;
    /* A knee blurred by +-3%: over many seeds the answer stays within 10% of the capacity. */
    unsigned within = 0, runs = 500;
    for (unsigned seed = 1; seed <= runs; seed++) {
        struct app a = {.capacity = 1000, .noise = 0.03, .rng = 0x9E3779B97F4A7C15ULL * seed};
        struct search_opts o = {.start_rps = 900, .precision = 0.05, .max_steps = 8};
        struct search s;
        run(&s, &a, &o);
        if (s.low > 0 && fabs(s.low - 1000) <= 100)
            within++;
        assert_true(s.low == 0 || s.high == 0 || s.low < s.high);
    }
    if (within < runs * 97 / 100)
        fail_msg("only %u of %u noisy searches within 10%%", within, runs);
}

static void test_generator_limit(void **state)
{
    (void)state;
    /* The generator gives out at 300 req/s, the app at 1000: the search never reports the
     * generator's limit as the app's. */
    struct app a = {.capacity = 1000, .gen_max = 300};
    struct search_opts o = {.start_rps = 100, .precision = 0.05, .max_steps = 8};
    struct search s;
    run(&s, &a, &o);
    assert_int_equal(s.limit, CAPACITY_LIMIT_GENERATOR);
    assert_true(s.flags & CAPACITY_FLAG_GENERATOR);
    assert_true(s.low > 0 && s.low <= 300);

    /* The first step is already beyond the generator: it halves until it can deliver, then
     * stops at the first generator-limited step above a pass. */
    struct app b = {.capacity = 1000, .gen_max = 300};
    o.start_rps = 2000;
    run(&s, &b, &o);
    assert_int_equal(s.limit, CAPACITY_LIMIT_GENERATOR);
    assert_true(s.low > 0 && s.low <= 300);

    /* The app fails below the generator's limit: that is the app's capacity, valid. */
    struct app c = {.capacity = 200, .gen_max = 300};
    o.start_rps = 150;
    run(&s, &c, &o);
    assert_int_equal(s.limit, CAPACITY_LIMIT_SLO_P95);
    assert_false(s.flags & CAPACITY_FLAG_GENERATOR);
    assert_true(s.low >= 190 && s.low <= 200);
}

static void test_max_rps(void **state)
{
    (void)state;
    struct app a = {.capacity = 5000};
    struct search_opts o = {.start_rps = 300, .precision = 0.05, .max_steps = 8, .max_rps = 1000};
    struct search s;
    unsigned n = run(&s, &a, &o);
    assert_int_equal(s.limit, CAPACITY_LIMIT_MAX_RPS);
    assert_true(s.low == 1000);
    assert_int_equal(n, 3); /* 300, 600, 1000 */

    /* A start above the ceiling starts at the ceiling. */
    o.start_rps = 4000;
    n = run(&s, &a, &o);
    assert_int_equal(n, 1);
    assert_int_equal(s.limit, CAPACITY_LIMIT_MAX_RPS);

    /* The ceiling above the capacity: the app's limit is found as usual. */
    struct app b = {.capacity = 700};
    o.start_rps = 300;
    run(&s, &b, &o);
    assert_int_equal(s.limit, CAPACITY_LIMIT_SLO_P95);
    assert_true(s.low >= 665 && s.low <= 700);
}

static void test_budget(void **state)
{
    (void)state;
    /* Still doubling when the steps run out: not bracketed, flagged. */
    struct app a = {.capacity = 100000};
    struct search_opts o = {.start_rps = 10, .precision = 0.05, .max_steps = 4};
    struct search s;
    unsigned n = run(&s, &a, &o);
    assert_int_equal(n, 4);
    assert_int_equal(s.limit, CAPACITY_LIMIT_BUDGET);
    assert_true(s.flags & CAPACITY_FLAG_BUDGET);
    assert_true(s.low == 80);

    /* Bracketed but not yet precise when the steps run out: the app's limit, less precisely. */
    struct app b = {.capacity = 130};
    o.start_rps = 100;
    o.max_steps = 3; /* 100 pass, 200 fail, 150 fail */
    run(&s, &b, &o);
    assert_int_equal(s.limit, CAPACITY_LIMIT_SLO_P95);
    assert_false(s.flags & CAPACITY_FLAG_BUDGET);
    assert_true(s.low == 100 && s.high == 150);

    /* Out of time before the first step. */
    search_init(&s, &o);
    search_out_of_time(&s);
    double r;
    assert_false(search_next(&s, &r));
    assert_int_equal(s.limit, CAPACITY_LIMIT_BUDGET);
    assert_true(s.flags & CAPACITY_FLAG_NONE_PASSED);
}

static void test_none_passed(void **state)
{
    (void)state;
    /* An app that misses the SLO at any rate: halving stops at the floor or the budget. */
    struct app a = {.capacity = 0.5};
    struct search_opts o = {.start_rps = 40, .precision = 0.05, .max_steps = 20};
    struct search s;
    run(&s, &a, &o);
    assert_true(s.flags & CAPACITY_FLAG_NONE_PASSED);
    assert_int_equal(s.limit, CAPACITY_LIMIT_SLO_P95);
    assert_true(s.low == 0);
    assert_true(s.steps <= 7); /* 40, 20, 10, 5, 2.5, 1.25, then below the floor */
}

static void test_judge(void **state)
{
    (void)state;
    static const struct profile_slo slo = {.p95_us = 100000, .p99_us = 0, .errors = 0.01};
    static const struct profile_slo slo99 = {.p95_us = 100000, .p99_us = 250000, .errors = 0.001};
    /* A healthy step at 500 req/s, one thread of two cores, cap 10000. */
    const struct search_measure ok = {.offered_rps = 500,
                                      .sent_rps = 500,
                                      .done_rps = 499,
                                      .p95_us = 20000,
                                      .p99_us = 40000,
                                      .gen_cores = 0.1,
                                      .gen_can_cores = 1,
                                      .peak_conns = 12,
                                      .conn_cap = 10000};
    static const struct {
        const char *what;
        int field; /* which change */
        double value;
        const struct profile_slo *slo;
        enum search_outcome want;
        enum capacity_limit why;
    } cases[] = {
        {"healthy", 0, 0, &slo, SEARCH_PASS, CAPACITY_LIMIT_NONE},
        {"p95 at the objective", 1, 100000, &slo, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P95},
        {"p99 over its objective", 2, 300000, &slo99, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P99},
        {"p99 without objective", 2, 300000, &slo, SEARCH_PASS, CAPACITY_LIMIT_NONE},
        {"errors 2%", 3, 0.02, &slo, SEARCH_FAIL, CAPACITY_LIMIT_SLO_ERRORS},
        {"errors 0.5%", 3, 0.005, &slo, SEARCH_PASS, CAPACITY_LIMIT_NONE},
        {"errors 0.5% against 0.1%", 3, 0.005, &slo99, SEARCH_FAIL, CAPACITY_LIMIT_SLO_ERRORS},
        {"generator CPU at 95%", 4, 0.95, &slo, SEARCH_GEN_LIMITED, CAPACITY_LIMIT_GENERATOR},
        {"generator CPU at 85%", 4, 0.85, &slo, SEARCH_PASS, CAPACITY_LIMIT_NONE},
        {"out of descriptors", 5, 3, &slo, SEARCH_GEN_LIMITED, CAPACITY_LIMIT_GENERATOR},
        {"sent 80% of due", 6, 400, &slo, SEARCH_GEN_LIMITED, CAPACITY_LIMIT_GENERATOR},
        {"app completed 70% of sent", 7, 350, &slo, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P95},
        {"app completed nothing", 7, 0, &slo, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P95},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct search_measure m = ok;
        switch (cases[i].field) {
        case 1:
            m.p95_us = (uint64_t)cases[i].value;
            break;
        case 2:
            m.p99_us = (uint64_t)cases[i].value;
            break;
        case 3:
            m.error_rate = cases[i].value;
            break;
        case 4:
            m.gen_cores = cases[i].value;
            break;
        case 5:
            m.nofile_errors = (uint64_t)cases[i].value;
            break;
        case 6:
            m.sent_rps = cases[i].value;
            break;
        case 7:
            m.done_rps = cases[i].value;
            break;
        }
        enum capacity_limit why = CAPACITY_LIMIT_BUDGET;
        enum search_outcome got = search_judge(&m, cases[i].slo, &why);
        if (got != cases[i].want || why != cases[i].why)
            fail_msg("%s: got outcome %d (%s), want %d (%s)", cases[i].what, got,
                     search_limit_name(why), cases[i].want, search_limit_name(cases[i].why));
    }

    /* The connection cap: 100 connections at 2000 req/s. An app within a 100 ms p95 needs up to
     * 200 at once, so hitting the cap says nothing about the app: the generator's limit. */
    struct search_measure m = ok;
    m.offered_rps = 2000;
    m.sent_rps = 1200;
    m.done_rps = 1190;
    m.peak_conns = 100;
    m.conn_cap = 100;
    m.p95_us = 400000; /* latency from the due time, inflated by the wait for a connection */
    assert_int_equal(search_judge(&m, &slo, NULL), SEARCH_GEN_LIMITED);
    /* With a cap of 10000 reached at 2000 req/s, the app held requests for 5 s: its failure. */
    m.peak_conns = m.conn_cap = 10000;
    enum capacity_limit why;
    assert_int_equal(search_judge(&m, &slo, &why), SEARCH_FAIL);
    assert_int_equal(why, CAPACITY_LIMIT_SLO_P95);
}

static void test_sustained(void **state)
{
    (void)state;
    /* 100 req/s answered in 400 ms, a 1.5 s window: the last 0.4 s of requests are still in
     * flight at its end, so 73 of every 100 completed in it; the app sustained 100. */
    assert_true(fabs(search_sustained_rps(73.33, 100, 400000, 1.5) - 100) < 0.1);
    /* Never above what was sent; no correction for a median over half the window. */
    assert_true(search_sustained_rps(99, 100, 50000, 1.0) == 100);
    assert_true(search_sustained_rps(30, 100, 800000, 1.5) == 30);
    assert_true(search_sustained_rps(30, 0, 100000, 0) == 30);
    /* Closed loop (nothing sent at a rate): scaled, uncapped. */
    assert_true(fabs(search_sustained_rps(45, 0, 100000, 1.0) - 50) < 1e-9);

    /* The judgement uses it: slow answers within a 1 s objective are not an app falling
     * behind, but an app that answered half of what it was sent is. */
    static const struct profile_slo slo = {.p95_us = 1000000, .errors = 0.01};
    struct search_measure m = {.offered_rps = 100,
                               .sent_rps = 100,
                               .done_rps = 73,
                               .p50_us = 400000,
                               .p95_us = 410000,
                               .p99_us = 420000,
                               .window_s = 1.5,
                               .gen_cores = 0.01,
                               .gen_can_cores = 2,
                               .peak_conns = 41,
                               .conn_cap = 10000};
    assert_int_equal(search_judge(&m, &slo, NULL), SEARCH_PASS);
    m.done_rps = 50;
    enum capacity_limit why;
    assert_int_equal(search_judge(&m, &slo, &why), SEARCH_FAIL);
    assert_int_equal(why, CAPACITY_LIMIT_SLO_P95);
}

static void test_refute(void **state)
{
    (void)state;
    /* Noise at the knee made 1000 pass; its repeats do not hold. The search falls back to the
     * highest earlier pass and bisects below the refuted rate with the steps it is granted. */
    struct search s;
    struct search_opts o = {.start_rps = 500, .precision = 0.05, .max_steps = 8};
    double r;
    search_init(&s, &o);
    assert_true(search_next(&s, &r) && r == 500);
    search_record(&s, r, SEARCH_PASS, CAPACITY_LIMIT_NONE);
    assert_true(search_next(&s, &r) && r == 1000);
    search_record(&s, r, SEARCH_PASS, CAPACITY_LIMIT_NONE); /* lucky */
    assert_true(search_next(&s, &r) && r == 2000);
    search_record(&s, r, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P95);
    for (unsigned i = 0; i < 5 && search_next(&s, &r); i++)
        search_record(&s, r, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P95); /* 1500, 1250, ... */
    assert_false(search_next(&s, &r));
    assert_true(s.low == 1000);
    search_refute(&s, 1000, CAPACITY_LIMIT_SLO_P99, 2);
    assert_false(s.done);
    assert_true(s.low == 500 && s.high == 1000);
    assert_true(search_next(&s, &r) && r == 750);
    search_record(&s, r, SEARCH_PASS, CAPACITY_LIMIT_NONE);
    assert_true(search_next(&s, &r) && r == 875);
    search_record(&s, r, SEARCH_FAIL, CAPACITY_LIMIT_SLO_P95);
    assert_false(search_next(&s, &r)); /* the two granted steps are spent */
    assert_true(s.low == 750 && s.high == 875);
    assert_int_equal(s.limit, CAPACITY_LIMIT_SLO_P95);

    /* A failure below the highest pass during bisection falls back the same way. */
    search_init(&s, &o);
    search_record(&s, 100, SEARCH_PASS, CAPACITY_LIMIT_NONE);
    search_record(&s, 200, SEARCH_PASS, CAPACITY_LIMIT_NONE);
    search_record(&s, 150, SEARCH_FAIL, CAPACITY_LIMIT_SLO_ERRORS);
    assert_true(s.low == 100 && s.high == 150);
    assert_int_equal(s.high_why, CAPACITY_LIMIT_SLO_ERRORS);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(search_limit_name(CAPACITY_LIMIT_SLO_P95), "slo-p95");
    assert_string_equal(search_limit_name(CAPACITY_LIMIT_SLO_P99), "slo-p99");
    assert_string_equal(search_limit_name(CAPACITY_LIMIT_SLO_ERRORS), "slo-errors");
    assert_string_equal(search_limit_name(CAPACITY_LIMIT_GENERATOR), "generator");
    assert_string_equal(search_limit_name(CAPACITY_LIMIT_BUDGET), "budget");
    assert_string_equal(search_limit_name(CAPACITY_LIMIT_MAX_RPS), "max-rps");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_capacity),
        cmocka_unit_test(test_calibrated_start_fits_eight_steps),
        cmocka_unit_test(test_predicted_start),
        cmocka_unit_test(test_predict),
        cmocka_unit_test(test_noisy_knee),
        cmocka_unit_test(test_generator_limit),
        cmocka_unit_test(test_max_rps),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_none_passed),
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_sustained),
        cmocka_unit_test(test_refute),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
