/* Tests for src/advise/usl.c: synthetic curves with known contention and coherency plus a
 * fixed pseudo-random noise, the degenerate inputs (two points, flat, falling, a contended point
 * left out), bad input, and the two public data sets of the R `usl` package (raytracer,
 * specsdm91) for sanity; tests/integration/usl_fit.sh compares those with an independent
 * non-linear fit.
 *
 * Run as `test_usl --fit`, the binary reads points from stdin, one "N X [SE [excluded]]" a
 * line, and prints the fit as one JSON object: the seam the integration test uses. */

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

#include "advise/usl.h"

static void near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.6g, want %.6g (tolerance %g)", got, want, tol);
}

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

/* A deterministic noise in [-1, 1): the same curve every run. */
static double noise(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

static double law(double x1, double s, double k, double n)
{
    return x1 * n / (1 + s * (n - 1) + k * n * (n - 1));
}

/* Points at counts[0..n) from the law with relative noise `rel` (uniform, +/- rel) and a
 * standard error of se_rel x the value (0: none). */
static size_t curve(struct usl_point *p, const unsigned *counts, size_t n, double x1, double s,
                    double k, double rel, double se_rel, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        double x = law(x1, s, k, counts[i]);
        p[i] = (struct usl_point){counts[i], x * (1 + rel * noise(&seed)), se_rel * x, false};
    }
    return n;
}

static struct usl_fit fit_ok(const struct usl_point *p, size_t n)
{
    struct usl_fit f;
    char err[ERR_LEN] = "";
    int rc = usl_fit(p, n, &f, err);
    if (rc)
        fail_msg("usl_fit: %s", err);
    return f;
}

static const unsigned SIXTEEN[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16};
#define NSIXTEEN (sizeof(SIXTEEN) / sizeof(SIXTEEN[0]))

/* s = 0.05, k = 0.002: the peak is at sqrt(0.95 / 0.002) = 21.8 replicas. With 1% noise and
 * standard errors of 1% both coefficients come back within a few errors and both count. */
static void test_known_s_and_k(void **state)
{
    struct usl_point p[USL_MAX_POINTS];
    size_t n = curve(p, SIXTEEN, NSIXTEEN, 100, 0.05, 0.002, 0.01, 0.01, 7);
    struct usl_fit f = fit_ok(p, n);
    char text[512];
    (void)state;

    near(f.s, 0.05, fmax(3 * f.s_err, 0.01));
    near(f.k, 0.002, fmax(3 * f.k_err, 0.0005));
    assert_true(f.s_distinct);
    assert_true(f.k_distinct);
    assert_false(f.linear);
    near(f.peak_replicas, 21.8, 4);
    near(f.peak_x, law(100, 0.05, 0.002, 21.8), 0.08 * law(100, 0.05, 0.002, 21.8));
    assert_true(f.residual < 0.01);
    assert_int_equal(f.used, NSIXTEEN);
    assert_int_equal(f.counts, NSIXTEEN);
    usl_describe(&f, text, sizeof(text));
    contains(text, "peaking near");
}

/* Contention alone (s = 0.2, k = 0): k is not told from 0, there is no peak, and the curve
 * levels off toward X1 / s = 500. */
static void test_contention_only(void **state)
{
    struct usl_point p[USL_MAX_POINTS];
    size_t n = curve(p, SIXTEEN, NSIXTEEN, 100, 0.2, 0, 0.01, 0.01, 11);
    struct usl_fit f = fit_ok(p, n);
    char text[512];
    (void)state;

    near(f.s, 0.2, 0.02);
    assert_true(f.s_distinct);
    assert_false(f.k_distinct);
    assert_true(f.peak_replicas == 0);
    if (f.k == 0)
        near(f.peak_x, 100 / f.s, 1e-9);
    usl_describe(&f, text, sizeof(text));
    contains(text, "slowing");
}

/* A linear curve with 2% noise and 2% errors: neither coefficient counts. */
static void test_linear_within_noise(void **state)
{
    static const unsigned counts[] = {1, 2, 3, 4};
    struct usl_point p[USL_MAX_POINTS];
    size_t n = curve(p, counts, 4, 250, 0, 0, 0.02, 0.02, 3);
    struct usl_fit f = fit_ok(p, n);
    char text[512];
    (void)state;

    assert_true(f.linear);
    assert_false(f.s_distinct);
    assert_false(f.k_distinct);
    assert_true(f.peak_replicas == 0);
    assert_true(f.s >= 0 && f.k >= 0);
    usl_describe(&f, text, sizeof(text));
    contains(text, "linear within the measurement's noise");
}

/* The same linear curve without standard errors: the scatter about the curve is the noise, and
 * it is still linear; an exact line has s = k = 0 and an unbounded peak. */
static void test_linear_without_errors(void **state)
{
    static const unsigned counts[] = {1, 2, 3, 4, 6};
    struct usl_point p[USL_MAX_POINTS];
    size_t n = curve(p, counts, 5, 250, 0, 0, 0.02, 0, 5);
    struct usl_fit f = fit_ok(p, n);
    (void)state;

    assert_true(f.linear);
    n = curve(p, counts, 5, 250, 0, 0, 0, 0, 5);
    f = fit_ok(p, n);
    near(f.s, 0, 1e-12);
    near(f.k, 0, 1e-12);
    assert_true(f.linear);
    assert_true(isinf(f.peak_x));
    near(f.residual, 0, 1e-12);
}

/* Two points: k is 0 and s = 2 X1 / X2 - 1 exactly (100 and 180: s = 1/9). */
static void test_two_points(void **state)
{
    struct usl_point p[] = {{1, 100, 2, false}, {2, 180, 3, false}};
    struct usl_fit f = fit_ok(p, 2);
    (void)state;

    near(f.s, 1.0 / 9, 1e-12);
    assert_true(f.k == 0);
    assert_false(f.k_distinct);
    assert_true(f.s_distinct); /* 0.111 against an error of about 0.03 */
    assert_true(f.peak_replicas == 0);
    near(f.peak_x, 900, 1e-9);
    near(f.residual, 0, 1e-12);
    assert_int_equal(f.counts, 2);

    /* Repeats at the same two counts still fix only s. */
    struct usl_point q[] = {
        {1, 100, 0, false}, {2, 178, 0, false}, {2, 182, 0, false}, {1, 100, 0, false}};
    f = fit_ok(q, 4);
    assert_true(f.k == 0);
    near(f.s, 0.111, 0.01);
}

/* Flat: more pods serve no more than one. s = 1, and the most the curve reaches is X1. */
static void test_flat(void **state)
{
    struct usl_point p[] = {
        {1, 100, 0, false}, {2, 100, 0, false}, {3, 100, 0, false}, {4, 100, 0, false}};
    struct usl_fit f = fit_ok(p, 4);
    char text[512];
    (void)state;

    near(f.s, 1, 1e-9);
    near(f.k, 0, 1e-9);
    assert_false(f.linear);
    near(f.peak_x, 100, 1e-6);
    usl_describe(&f, text, sizeof(text));
    contains(text, "not scaling");
}

/* Falling: each pod added serves less. The curve never rises above X1 by much, the fitted
 * curve falls, and the peak, if any, is below 2 replicas. */
static void test_falling(void **state)
{
    struct usl_point p[] = {
        {1, 100, 1, false}, {2, 90, 1, false}, {3, 70, 1, false}, {4, 50, 1, false}};
    struct usl_fit f = fit_ok(p, 4);
    (void)state;

    assert_false(f.linear);
    assert_true(f.k_distinct);
    assert_true(usl_eval(&f, 4) < usl_eval(&f, 2));
    assert_true(f.peak_x <= 100 * 1.05);
    assert_true(f.peak_replicas < 2);
}

/* A contended point (here measured far too low) is excluded: the fit is the fit without it. */
static void test_contended_point_excluded(void **state)
{
    static const unsigned counts[] = {1, 2, 3, 4, 6};
    struct usl_point p[USL_MAX_POINTS];
    size_t n = curve(p, counts, 5, 100, 0.05, 0, 0.005, 0.01, 9);
    struct usl_fit without = fit_ok(p, n);
    (void)state;

    p[n++] = (struct usl_point){8, 150, 5, true};
    struct usl_fit with = fit_ok(p, n);
    near(with.s, without.s, 1e-12);
    near(with.k, without.k, 1e-12);
    near(with.residual, without.residual, 1e-12);
    assert_int_equal(with.used, 5);
    assert_int_equal(with.counts, 5);

    /* Included, the same point drags the curve down. */
    p[n - 1].excluded = false;
    struct usl_fit dragged = fit_ok(p, n);
    assert_true(usl_eval(&dragged, 8) < usl_eval(&without, 8));
}

/* The standard errors decide: the same 5% shortfall at 2 replicas counts with 0.5% errors and
 * not with 10%. */
static void test_errors_decide(void **state)
{
    struct usl_point tight[] = {{1, 100, 0.5, false}, {2, 190, 0.95, false}, {3, 270, 1.35, false}};
    struct usl_point loose[] = {{1, 100, 10, false}, {2, 190, 19, false}, {3, 270, 27, false}};
    (void)state;

    assert_false(fit_ok(tight, 3).linear);
    assert_true(fit_ok(loose, 3).linear);
}

/* Both coefficients within their errors of 0 (they trade off against each other over four
 * counts), yet 4 pods serve 340 where 4 x 100 = 400 would be linear, 3.3 standard errors of the
 * difference short (sqrt(4^2 x 3^2 + 14^2) = 18.4), beyond the 2.39 three tests at 2.5% ask
 * for: the curve is below linear, and says where. 3 pods at 285 are 1.1 short: no matter. */
static void test_short_point_not_linear(void **state)
{
    struct usl_point p[] = {
        {1, 100, 3, false}, {2, 190, 6, false}, {3, 285, 10, false}, {4, 340, 14, false}};
    char text[512];
    (void)state;

    struct usl_fit f = fit_ok(p, 4);
    assert_false(f.s_distinct);
    assert_false(f.k_distinct);
    assert_false(f.linear);
    assert_int_equal(f.short_at, 4);
    near(f.short_x, 340, 1e-9);
    usl_describe(&f, text, sizeof(text));
    contains(text, "below linear: 4 pods serve 340, 15% short of 4 times one (400)");

    /* The same point with three times the error is within the noise of 400: linear. */
    p[3].se = 42;
    f = fit_ok(p, 4);
    assert_int_equal(f.short_at, 0);
    assert_true(f.linear);

    /* Without standard errors the point test cannot be made; the scatter decides as before. */
    for (size_t i = 0; i < 4; i++)
        p[i].se = 0;
    f = fit_ok(p, 4);
    assert_int_equal(f.short_at, 0);
}

static void test_bad_input(void **state)
{
    struct usl_fit f;
    char err[ERR_LEN];
    struct usl_point no_one[] = {{2, 180, 0, false}, {3, 250, 0, false}};
    struct usl_point only_one[] = {{1, 100, 0, false}, {1, 101, 0, false}};
    struct usl_point one_excluded[] = {{1, 100, 0, true}, {2, 180, 0, false}};
    struct usl_point zero_count[] = {{0, 100, 0, false}, {2, 180, 0, false}};
    struct usl_point zero_x[] = {{1, 100, 0, false}, {2, 0, 0, false}};
    struct usl_point nan_x[] = {{1, 100, 0, false}, {2, NAN, 0, false}};
    struct usl_point neg_se[] = {{1, 100, -1, false}, {2, 180, 0, false}};
    struct usl_point excluded_zero[] = {{1, 100, 0, false}, {2, 180, 0, false}, {3, 0, 0, true}};
    (void)state;

    assert_int_equal(usl_fit(no_one, 2, &f, err), -EINVAL);
    contains(err, "at 1 replica");
    assert_int_equal(usl_fit(only_one, 2, &f, err), -EINVAL);
    contains(err, "above 1 replica");
    assert_int_equal(usl_fit(one_excluded, 2, &f, err), -EINVAL);
    assert_int_equal(usl_fit(zero_count, 2, &f, err), -EINVAL);
    contains(err, "1 or more");
    assert_int_equal(usl_fit(zero_x, 2, &f, err), -EINVAL);
    contains(err, "positive number");
    assert_int_equal(usl_fit(nan_x, 2, &f, err), -EINVAL);
    assert_int_equal(usl_fit(neg_se, 2, &f, err), -EINVAL);
    assert_int_equal(usl_fit(no_one, USL_MAX_POINTS + 1, &f, err), -EINVAL);
    /* An excluded point is not read: a failed measurement can be listed. */
    assert_int_equal(usl_fit(excluded_zero, 3, &f, err), 0);
}

/* The R package's data sets (Gunther, Guerrilla Capacity Planning): the ray tracer scales with
 * contention and no visible coherency within 64 processors; SPEC SDM91 peaks near 100 users.
 * The figures are checked against scipy in tests/integration/usl_fit.sh; here, the shape. */
static void test_public_data_sets(void **state)
{
    struct usl_point ray[] = {{1, 20, 0, false},   {4, 78, 0, false},   {8, 130, 0, false},
                              {12, 170, 0, false}, {16, 190, 0, false}, {20, 210, 0, false},
                              {24, 220, 0, false}, {28, 245, 0, false}, {32, 255, 0, false},
                              {48, 280, 0, false}, {64, 310, 0, false}};
    struct usl_point sdm[] = {{1, 64.9, 0, false},     {18, 995.9, 0, false},
                              {36, 1652.4, 0, false},  {72, 1853.2, 0, false},
                              {108, 1828.9, 0, false}, {144, 1775.0, 0, false},
                              {216, 1702.2, 0, false}};
    (void)state;

    struct usl_fit r = fit_ok(ray, 11);
    assert_true(r.s > 0.02 && r.s < 0.08);
    assert_true(r.s_distinct);
    assert_true(r.residual < 0.1);

    struct usl_fit d = fit_ok(sdm, 7);
    assert_true(d.k_distinct);
    assert_true(d.peak_replicas > 70 && d.peak_replicas < 150);
    assert_true(d.peak_x > 1700 && d.peak_x < 2000);
}

/* ---- the JSON seam --------------------------------------------------------------------- */

static void json_num(const char *key, double v, const char *sep)
{
    if (isfinite(v))
        printf("\"%s\": %.17g%s", key, v, sep);
    else
        printf("\"%s\": null%s", key, sep);
}

static int fit_stdin(void)
{
    struct usl_point p[USL_MAX_POINTS];
    struct usl_fit f;
    char line[256], err[ERR_LEN] = "", text[512];
    size_t n = 0;

    while (fgets(line, sizeof(line), stdin)) {
        unsigned nrep;
        double x, se = 0;
        char word[32] = "";
        int got = sscanf(line, "%u %lf %lf %31s", &nrep, &x, &se, word);
        if (got < 2)
            continue;
        if (n == USL_MAX_POINTS) {
            fprintf(stderr, "test_usl: more than %d points\n", USL_MAX_POINTS);
            return 2;
        }
        p[n++] = (struct usl_point){nrep, x, got >= 3 ? se : 0, strcmp(word, "excluded") == 0};
    }
    if (usl_fit(p, n, &f, err) != 0) {
        printf("{\"error\": \"%s\"}\n", err);
        return 1;
    }
    usl_describe(&f, text, sizeof(text));
    printf("{");
    json_num("x1", f.x1, ", ");
    json_num("s", f.s, ", ");
    json_num("k", f.k, ", ");
    json_num("s_err", f.s_err, ", ");
    json_num("k_err", f.k_err, ", ");
    json_num("peak_replicas", f.peak_replicas > 0 ? f.peak_replicas : NAN, ", ");
    json_num("peak_x", f.peak_x, ", ");
    json_num("residual", f.residual, ", ");
    printf("\"linear\": %s, \"s_distinct\": %s, \"k_distinct\": %s, \"used\": %zu, ",
           f.linear ? "true" : "false", f.s_distinct ? "true" : "false",
           f.k_distinct ? "true" : "false", f.used);
    printf("\"text\": \"%s\"}\n", text);
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_s_and_k),
        cmocka_unit_test(test_contention_only),
        cmocka_unit_test(test_linear_within_noise),
        cmocka_unit_test(test_linear_without_errors),
        cmocka_unit_test(test_two_points),
        cmocka_unit_test(test_flat),
        cmocka_unit_test(test_falling),
        cmocka_unit_test(test_contended_point_excluded),
        cmocka_unit_test(test_errors_decide),
        cmocka_unit_test(test_short_point_not_linear),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_public_data_sets),
    };
    if (argc == 2 && strcmp(argv[1], "--fit") == 0)
        return fit_stdin();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
