/* Tests for src/core/stats.c against published values of the t distribution and a Welch's test
 * worked by hand, plus the edge cases the sweep meets (one sample, no spread). */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/stats.h"

static void near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.9f, want %.9f (tolerance %g)", got, want, tol);
}

static void test_t_quantiles(void **state)
{
    (void)state;
    /* Two-sided 95% critical values from standard t tables. */
    static const struct {
        double df, want;
    } cases[] = {
        {1, 12.706205}, {2, 4.302653},  {3, 3.182446},  {4, 2.776445},
        {9, 2.262157},  {10, 2.228139}, {30, 2.042272}, {1000, 1.962339},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        near(stats_t_quantile(0.975, cases[i].df), cases[i].want, 1e-5);
        near(stats_t_quantile(0.025, cases[i].df), -cases[i].want, 1e-5);
    }
    near(stats_t_quantile(0.5, 7), 0, 1e-12);
    assert_true(isnan(stats_t_quantile(0, 3)));
    assert_true(isnan(stats_t_quantile(0.9, 0)));
}

static void test_t_cdf(void **state)
{
    (void)state;
    near(stats_t_cdf(0, 4), 0.5, 1e-12);
    near(stats_t_cdf(2.0, 5), 0.9490303, 1e-6);
    near(stats_t_cdf(-2.0, 5), 0.0509697, 1e-6);
    near(stats_t_cdf(1.0, 1), 0.75, 1e-9); /* Cauchy */
    near(stats_t_cdf(INFINITY, 3), 1.0, 0);
}

static void test_summary(void **state)
{
    (void)state;
    struct stats_summary s;
    const double x[] = {1000, 1100, 900};
    assert_int_equal(stats_summarize(x, 3, &s), 0);
    assert_int_equal(s.n, 3);
    near(s.mean, 1000, 1e-9);
    near(s.sd, 100, 1e-9);
    /* 4.302653 * 100 / sqrt(3) */
    near(s.half, 248.413, 1e-3);
    near(s.low, 1000 - 248.413, 1e-3);
    near(stats_rel_half(&s), 0.248413, 1e-6);

    assert_int_equal(stats_summarize(x, 1, &s), 0);
    assert_int_equal(s.n, 1);
    near(s.mean, 1000, 0);
    near(s.half, 0, 0);
    near(s.low, 1000, 0);

    assert_int_equal(stats_summarize(x, 0, &s), 0);
    assert_int_equal(s.n, 0);

    const double bad[] = {1, NAN};
    assert_int_equal(stats_summarize(bad, 2, &s), -EINVAL);
}

static void test_welch(void **state)
{
    (void)state;
    struct stats_summary a, b;
    struct stats_welch w;
    const double xa[] = {10, 11, 12}, xb[] = {13, 14, 15};
    stats_summarize(xa, 3, &a);
    stats_summarize(xb, 3, &b);
    assert_int_equal(stats_welch(&a, &b, &w), 0);
    near(w.t, 3.674235, 1e-5);
    near(w.df, 4.0, 1e-9);
    near(w.p, 0.021312, 1e-5);
    assert_true(w.significant);
    /* The 95% intervals overlap although the test finds a difference: overlap is the more
     * conservative rule, which is why findings use it and compare uses the test. */
    assert_true(stats_overlap(&a, &b));

    /* The same samples: no difference. */
    assert_int_equal(stats_welch(&a, &a, &w), 0);
    near(w.p, 1.0, 1e-12);
    assert_false(w.significant);
    assert_true(stats_overlap(&a, &a));

    /* Unequal spreads: df below n_a + n_b - 2. */
    const double xc[] = {100, 140, 60, 120}, xd[] = {101, 102, 103};
    struct stats_summary c, d;
    stats_summarize(xc, 4, &c);
    stats_summarize(xd, 3, &d);
    assert_int_equal(stats_welch(&c, &d, &w), 0);
    assert_true(w.df < 5.0 && w.df > 1.0);
    assert_false(w.significant);

    /* Too few samples: unknown, never different. */
    struct stats_summary one;
    stats_summarize(xa, 1, &one);
    assert_int_equal(stats_welch(&one, &b, &w), -EDOM);
    assert_true(stats_overlap(&one, &b));

    /* No spread at all. */
    const double same1[] = {5, 5, 5}, same2[] = {6, 6, 6};
    struct stats_summary s1, s2;
    stats_summarize(same1, 3, &s1);
    stats_summarize(same2, 3, &s2);
    assert_int_equal(stats_welch(&s1, &s2, &w), 0);
    assert_true(w.significant);
    assert_int_equal(stats_welch(&s1, &s1, &w), 0);
    assert_false(w.significant);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_quantiles),
        cmocka_unit_test(test_t_cdf),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_welch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
