/* Tests for src/advise/availability.c: the zone and drain arithmetic, table-driven (the issue's
 * cases among them), its bounds, and the hook on an advice: the replicas, the HPA's bounds and
 * the finding. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advise/advisor.h"
#include "advise/availability.h"

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

static void test_plan_table(void **state)
{
    (void)state;
    static const struct {
        unsigned needed, zones, drain;
        unsigned zone_replicas, replicas;
    } cases[] = {
        {6, 3, 1, 9, 9},    /* the issue's: 9 - 3 = 6 */
        {6, 1, 1, 6, 7},    /* the issue's: one zone, the drain decides */
        {6, 1, 0, 6, 6},    /* nothing to plan for */
        {5, 3, 1, 8, 8},    /* 8 - 3 = 5; 7 - 3 = 4 is short */
        {1, 3, 1, 2, 2},    /* 2 - 1 = 1 */
        {1, 2, 0, 2, 2},    /* 2 - 1 = 1 */
        {4, 2, 1, 8, 8},    /* two zones: double */
        {10, 5, 1, 13, 13}, /* 13 - 3 = 10; 12 - 3 = 9 */
        {2, 3, 5, 3, 7},    /* a large drain wins over the zones */
        {9, 3, 0, 14, 14},  /* 14 - 5 = 9; 13 - 5 = 8 */
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct availability_plan p;
        char err[ERR_LEN] = "";
        if (availability_plan(cases[i].needed, cases[i].zones, cases[i].drain, &p, err) != 0)
            fail_msg("case %zu: %s", i, err);
        if (p.zone_replicas != cases[i].zone_replicas || p.replicas != cases[i].replicas)
            fail_msg("case %zu (R %u, %u zones, drain %u): zone term %u, replicas %u; want %u, "
                     "%u",
                     i, cases[i].needed, cases[i].zones, cases[i].drain, p.zone_replicas,
                     p.replicas, cases[i].zone_replicas, cases[i].replicas);
        assert_true(p.applied);
        assert_int_equal(p.min_available, cases[i].needed);
        assert_int_equal(p.drain_replicas, cases[i].needed + cases[i].drain);
    }
}

static void test_plan_text(void **state)
{
    (void)state;
    struct availability_plan p;
    char err[ERR_LEN] = "";

    assert_int_equal(availability_plan(6, 3, 1, &p, err), 0);
    contains(p.text, "N = 9 is the smallest with N - ceil(N / 3) = 6 >= 6");
    contains(p.text, "6 + 1 = 7");
    contains(p.text, "replicas = max(9, 7) = 9");
    contains(p.text, "minAvailable 6");
    assert_int_equal(availability_plan(6, 1, 1, &p, err), 0);
    contains(p.text, "with one zone an outage takes every pod");
    contains(p.text, "6 + 1 = 7 replicas");
}

static void test_plan_bounds(void **state)
{
    (void)state;
    struct availability_plan p;
    char err[ERR_LEN] = "";

    assert_int_equal(availability_plan(0, 3, 1, &p, err), -EINVAL);
    contains(err, "0 pods needed");
    assert_int_equal(availability_plan(AVAILABILITY_MAX_REPLICAS + 1, 3, 1, &p, err), -EINVAL);
    assert_int_equal(availability_plan(6, 0, 1, &p, err), -EINVAL);
    contains(err, "0 zones");
    assert_int_equal(availability_plan(6, PROFILE_MAX_ZONES + 1, 1, &p, err), -EINVAL);
    assert_int_equal(availability_plan(6, 3, PROFILE_MAX_DRAIN + 1, &p, err), -EINVAL);
    /* The largest counts stay exact: 2 zones double R. */
    assert_int_equal(availability_plan(AVAILABILITY_MAX_REPLICAS, 2, PROFILE_MAX_DRAIN, &p, err),
                     0);
    assert_int_equal(p.replicas, 2 * AVAILABILITY_MAX_REPLICAS);
}

/* An advice as sizing leaves it: a recommendation for a target of 6 pods and a CPU HPA. */
static void sized(struct advice *a)
{
    memset(a, 0, sizeof(*a));
    a->recommended = 0;
    a->by_target = true;
    a->replicas = 6;
    a->sizing.replicas = 6;
    a->sizing.hpa.enabled = true;
    a->sizing.hpa.min_replicas = 6;
    a->sizing.hpa.max_replicas = 8;
    snprintf(a->sizing.hpa.note, sizeof(a->sizing.hpa.note), "CPU tracks load.");
}

static void test_apply(void **state)
{
    (void)state;
    struct profile_availability av = {true, 3, 1};
    struct advice a;

    sized(&a);
    availability_apply(&av, &a);
    assert_true(a.availability.applied);
    assert_int_equal(a.replicas, 9);
    assert_int_equal(a.sizing.replicas, 9);
    assert_int_equal(a.availability.min_available, 6);
    assert_int_equal(a.sizing.hpa.min_replicas, 9);
    assert_int_equal(a.sizing.hpa.max_replicas, 12); /* 8 up at the grown load: 12 - 4 = 8 */
    contains(a.sizing.hpa.note, "minReplicas 9, maxReplicas 12");
    assert_int_equal(a.nfindings, 1);
    contains(a.findings[0], "replicas = max(9, 7) = 9");

    /* One zone: the drain only. */
    av = (struct profile_availability){true, 1, 1};
    sized(&a);
    availability_apply(&av, &a);
    assert_int_equal(a.replicas, 7);
    assert_int_equal(a.availability.min_available, 6);
    assert_int_equal(a.sizing.hpa.max_replicas, 9);

    /* Absent: nothing changes. */
    av = (struct profile_availability){0};
    sized(&a);
    availability_apply(&av, &a);
    assert_false(a.availability.applied);
    assert_int_equal(a.replicas, 6);
    assert_int_equal(a.sizing.hpa.min_replicas, 6);
    assert_int_equal(a.nfindings, 0);

    /* No target: a finding, no replicas added. */
    av = (struct profile_availability){true, 3, 1};
    sized(&a);
    a.by_target = false;
    a.replicas = 1;
    availability_apply(&av, &a);
    assert_false(a.availability.applied);
    assert_int_equal(a.replicas, 1);
    assert_int_equal(a.nfindings, 1);
    contains(a.findings[0], "not sized for a target");

    /* No recommendation: nothing. */
    sized(&a);
    a.recommended = -1;
    availability_apply(&av, &a);
    assert_false(a.availability.applied);
    assert_int_equal(a.nfindings, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_table),
        cmocka_unit_test(test_plan_text),
        cmocka_unit_test(test_plan_bounds),
        cmocka_unit_test(test_apply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
