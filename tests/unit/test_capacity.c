/* Tests for src/sweep/capacity.c: the search's bracket read from its steps, and the interval
 * that never claims more precision than the bracket. */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/capacity.h"

static void step(struct capacity_result *c, enum capacity_step_kind kind, double offered, bool pass,
                 bool gen)
{
    struct capacity_step *s = &c->steps[c->nsteps++];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    s->offered_rps = offered;
    s->pass = pass;
    s->gen_limited = gen;
}

static void test_bracket_and_interval(void **state)
{
    (void)state;
    struct capacity_result c;
    memset(&c, 0, sizeof(c));
    step(&c, CAPACITY_STEP_PROBE, 400, true, false);
    step(&c, CAPACITY_STEP_SEARCH, 400, true, false);
    step(&c, CAPACITY_STEP_SEARCH, 800, false, false);
    step(&c, CAPACITY_STEP_SEARCH, 600, false, true); /* the generator's failure: no bound */
    step(&c, CAPACITY_STEP_SEARCH, 500, true, false);
    step(&c, CAPACITY_STEP_SEARCH, 550, false, false);
    step(&c, CAPACITY_STEP_REPEAT, 500, false, false); /* a repeat is not the bracket */
    /* Three repeats that agree to the request: alone, an interval of zero width. */
    c.repeat_rps[0] = c.repeat_rps[1] = c.repeat_rps[2] = 500;
    c.rps = 500;
    assert_true(fabs(capacity_bracket_high(&c) - 550) < 1e-9);
    assert_int_equal(capacity_set_interval(&c, 3), 0);
    assert_true(fabs(c.interval.low - 500) < 1e-9);  /* planning's end: the repeats' */
    assert_true(fabs(c.interval.high - 550) < 1e-9); /* the bracket's top */
    assert_true(fabs(c.interval.mean - 500) < 1e-9);

    /* Repeats that spread wider than the bracket keep their own interval. */
    c.repeat_rps[0] = 400, c.repeat_rps[1] = 500, c.repeat_rps[2] = 600;
    assert_int_equal(capacity_set_interval(&c, 3), 0);
    assert_true(c.interval.high > 550 && c.interval.low < 500);

    /* No failing step above: the repeats alone; one figure: its mean. */
    struct capacity_result d;
    memset(&d, 0, sizeof(d));
    step(&d, CAPACITY_STEP_SEARCH, 100, true, false);
    d.rps = 100;
    assert_true(capacity_bracket_high(&d) == 0);
    assert_int_equal(capacity_set_interval(&d, 0), 0);
    assert_int_equal(d.interval.n, 1);
    assert_true(d.interval.low == 100 && d.interval.high == 100);
}

/* Which figures the sizing may read: no invalidating mark and a capacity above 0, or the
 * unmeetable answer, which is 0 and valid; a contended unmeetable one is not. */
static void test_valid(void **state)
{
    (void)state;
    const struct {
        double rps;
        unsigned flags;
        bool valid;
    } cases[] = {
        {100, 0, true},
        {100, CAPACITY_FLAG_TOO_FEW_REPEATS, true},
        {0, 0, false},
        {0, CAPACITY_FLAG_UNMEETABLE, true},
        {0, CAPACITY_FLAG_UNMEETABLE | CAPACITY_FLAG_CONTENDED, false},
        {100, CAPACITY_FLAG_NOISY, false},
        {100, CAPACITY_FLAG_GENERATOR, false},
        {0, CAPACITY_FLAG_NONE_PASSED, false},
        {100, CAPACITY_FLAG_BUDGET, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct capacity_result cap;
        memset(&cap, 0, sizeof(cap));
        cap.searched = true;
        cap.rps = cases[i].rps;
        cap.flags = cases[i].flags;
        assert_int_equal(capacity_valid(&cap), cases[i].valid);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bracket_and_interval),
        cmocka_unit_test(test_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
