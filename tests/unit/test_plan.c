/* Tests for src/load/plan.c: the run's timeline, ramps, and the open-loop due times. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/plan.h"

#define S  1000000LL /* microseconds per second */
#define NS 1000000000LL

static struct profile flat(unsigned users, double rate, int64_t dur_us, int64_t warm_us)
{
    struct profile p;
    memset(&p, 0, sizeof(p));
    p.users = users;
    p.rate = rate;
    p.duration_us = dur_us;
    p.warmup_us = warm_us;
    return p;
}

static void test_flat_users(void **state)
{
    (void)state;
    struct profile p = flat(50, 0, 20 * S, 5 * S);
    struct plan pl;
    char err[ERR_LEN];
    assert_int_equal(plan_build(&p, &pl, err), 0);
    assert_int_equal(pl.open_loop, 0);
    assert_int_equal(pl.nsegs, 2);
    assert_int_equal(pl.measure_start_ns, 5 * NS);
    assert_int_equal(pl.end_ns, 25 * NS);
    assert_true(fabs(plan_target_at(&pl, 1 * NS, NULL) - 50) < 1e-9);
    assert_true(fabs(plan_target_at(&pl, 24 * NS, NULL) - 50) < 1e-9);
    assert_true(plan_target_at(&pl, 25 * NS, NULL) == 0);
    size_t hint = 0;
    assert_int_equal(plan_seg_at(&pl, 1 * NS, &hint)->measured, 0);
    assert_int_equal(plan_seg_at(&pl, 6 * NS, &hint)->measured, 1);
    assert_null(plan_seg_at(&pl, 25 * NS, &hint));
    plan_free(&pl);
    plan_free(&pl);
}

static void test_flat_rate_due(void **state)
{
    (void)state;
    struct profile p = flat(0, 100, 10 * S, 0);
    struct plan pl;
    size_t hint = 0;
    assert_int_equal(plan_build(&p, &pl, NULL), 0);
    assert_int_equal(pl.open_loop, 1);
    assert_true(fabs(pl.total_due - 1000) < 1e-6);
    /* The k-th request is due at k/100 s. */
    assert_int_equal(plan_due_ns(&pl, 1, &hint), 10000000);
    assert_int_equal(plan_due_ns(&pl, 500, &hint), 5 * NS);
    assert_int_equal(plan_due_ns(&pl, 999.5, &hint), 9995000000LL);
    assert_int_equal(plan_due_ns(&pl, 1000.5, &hint), INT64_MAX);
    /* Count the requests a thread pattern sees: k = j*T + t + 0.5 for T threads. */
    for (unsigned T = 1; T <= 3; T++) {
        unsigned total = 0;
        for (unsigned t = 0; t < T; t++) {
            size_t h = 0;
            for (uint64_t j = 0;; j++) {
                int64_t due = plan_due_ns(&pl, (double)j * T + t + 0.5, &h);
                if (due == INT64_MAX)
                    break;
                total++;
            }
        }
        assert_int_equal(total, 1000);
    }
    plan_free(&pl);
}

static void test_stages_ramp(void **state)
{
    (void)state;
    struct profile_stage st[3] = {
        {10 * S, -1, 100}, /* 0 -> 100/s over 10 s: 500 requests */
        {10 * S, -1, 100}, /* flat: 1000 */
        {10 * S, -1, 0},   /* 100 -> 0: 500 */
    };
    struct profile p = flat(0, 0, 0, 2 * S);
    struct plan pl;
    size_t hint = 0;
    p.stages = st;
    p.nstages = 3;
    assert_int_equal(plan_build(&p, &pl, NULL), 0);
    assert_int_equal(pl.open_loop, 1);
    assert_int_equal(pl.nsegs, 4); /* warm-up at the first stage's target, then 3 stages */
    assert_true(fabs(pl.total_due - (200 + 500 + 1000 + 500)) < 1e-6);
    assert_true(fabs(pl.peak - 100) < 1e-9);
    /* Mid-ramp the rate is half way. */
    assert_true(fabs(plan_target_at(&pl, 7 * NS, &hint) - 50) < 1e-6);
    /* In the 0->100 ramp, N(tau) = 5 tau^2: the 20th request after it starts is due at 2 s. */
    int64_t due = plan_due_ns(&pl, 200 + 20, &hint);
    assert_true(llabs(due - (2 * NS + 2 * NS)) < 1000);
    /* Due times never go backwards. */
    int64_t prev = 0;
    hint = 0;
    for (double k = 0.5; k < pl.total_due; k += 1) {
        int64_t d = plan_due_ns(&pl, k, &hint);
        assert_true(d >= prev);
        assert_true(d < pl.end_ns);
        prev = d;
    }
    const struct plan_seg *s = plan_seg_at(&pl, 15 * NS, NULL);
    assert_int_equal(s->stage, 1);
    plan_free(&pl);
}

static void test_bad(void **state)
{
    (void)state;
    struct plan pl;
    char err[ERR_LEN] = "";
    struct profile p = flat(0, 0, 10 * S, 0);
    assert_int_equal(plan_build(&p, &pl, err), -EINVAL);
    assert_non_null(strstr(err, "users or rate"));
    p = flat(10, 0, 0, 0);
    assert_int_equal(plan_build(&p, &pl, err), -EINVAL);
    struct profile_stage mixed[2] = {{S, 10, -1}, {S, -1, 10}};
    p = flat(0, 0, 0, 0);
    p.stages = mixed;
    p.nstages = 2;
    assert_int_equal(plan_build(&p, &pl, err), -EINVAL);
    assert_non_null(strstr(err, "all give users or all give rate"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_users),
        cmocka_unit_test(test_flat_rate_due),
        cmocka_unit_test(test_stages_ramp),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
