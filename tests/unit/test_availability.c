/* Tests for src/advise/availability.c: the zone and drain arithmetic, table-driven (the issue's
 * cases among them), its bounds, and the answer's steps (5) and (6) with it: the plan for the
 * count, the HPA's margin, and the sentences. */

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
/* An advice sized for a target as step (6) leaves it with the plan's count: 9 replicas, an HPA
 * from 9 to 10. */
static void sized(struct advice *a, unsigned replicas)
{
    memset(a, 0, sizeof(*a));
    a->recommended = 0;
    a->by_target = true;
    a->replicas = replicas;
    a->sizing.replicas = replicas;
    a->sizing.hpa.enabled = true;
    a->sizing.hpa.min_replicas = replicas;
    a->sizing.hpa.max_replicas = replicas + 1;
}

/* The steps as the answer runs them: (5) the plan for R = 6 (the HPA's max for R alone, 8, kept),
 * (6) the HPA's margin, then the sentences. */
static void test_steps(void **state)
{
    (void)state;
    struct profile_availability av = {true, 3, 1};
    struct availability_step st;
    struct advice a;

    availability_step(&av, 0, true, 6, 8, &st);
    assert_int_equal(st.state, AVAILABILITY_PLANNED);
    assert_int_equal(st.plan.replicas, 9);
    assert_int_equal(st.plan.min_available, 6);
    sized(&a, 9);
    availability_hpa(&av, 0, &st, &a.sizing.hpa);
    assert_true(st.hpa_grown);
    assert_int_equal(a.sizing.hpa.min_replicas, 9);
    assert_int_equal(a.sizing.hpa.max_replicas, 12); /* 8 up at the grown load: 12 - 4 = 8 */
    availability_findings(&av, &st, false, &a);
    assert_true(a.availability.applied);
    assert_int_equal(a.replicas, 9);
    assert_int_equal(a.nfindings, 2);
    contains(a.findings[0], "replicas = max(9, 7) = 9");
    contains(a.findings[1], "minReplicas 9, maxReplicas 12 (8 pods up at the grown load)");

    /* Never past where the scale-out's curve ends. */
    availability_step(&av, 0, true, 6, 8, &st);
    sized(&a, 9);
    availability_hpa(&av, 11, &st, &a.sizing.hpa);
    assert_int_equal(a.sizing.hpa.max_replicas, 11);

    /* One zone: the drain only. */
    av = (struct profile_availability){true, 1, 1};
    availability_step(&av, 0, true, 6, 8, &st);
    assert_int_equal(st.plan.replicas, 7);
    sized(&a, 7);
    availability_hpa(&av, 0, &st, &a.sizing.hpa);
    assert_int_equal(a.sizing.hpa.max_replicas, 9);

    /* A fixed-load sweep: its count is replaced by the plan's with the sentences. */
    av = (struct profile_availability){true, 3, 1};
    availability_step(&av, 0, true, 6, 0, &st);
    sized(&a, 6);
    a.sizing.hpa.enabled = false;
    availability_findings(&av, &st, true, &a);
    assert_int_equal(a.replicas, 9);
    assert_int_equal(a.sizing.replicas, 9);
    assert_int_equal(a.nfindings, 1);
}

static void test_not_applied(void **state)
{
    (void)state;
    struct profile_availability av = {0};
    struct availability_step st;
    struct advice a;

    /* Absent: nothing changes, nothing said. */
    availability_step(&av, 0, true, 6, 8, &st);
    assert_int_equal(st.state, AVAILABILITY_ABSENT);
    sized(&a, 6);
    availability_hpa(&av, 0, &st, &a.sizing.hpa);
    availability_findings(&av, &st, false, &a);
    assert_false(a.availability.applied);
    assert_int_equal(a.replicas, 6);
    assert_int_equal(a.sizing.hpa.max_replicas, 7);
    assert_int_equal(a.nfindings, 0);

    /* No target: a finding, no replicas added. */
    av = (struct profile_availability){true, 3, 1};
    availability_step(&av, 0, false, 1, 0, &st);
    assert_int_equal(st.state, AVAILABILITY_NOT_SIZED);
    sized(&a, 1);
    availability_findings(&av, &st, false, &a);
    assert_false(a.availability.applied);
    assert_int_equal(a.replicas, 1);
    assert_int_equal(a.nfindings, 1);
    contains(a.findings[0], "not sized for a target");

    /* A count the plan refuses: said, nothing added. */
    availability_step(&av, 0, true, AVAILABILITY_MAX_REPLICAS + 1, 0, &st);
    assert_int_equal(st.state, AVAILABILITY_REFUSED);
    sized(&a, 6);
    availability_findings(&av, &st, false, &a);
    assert_false(a.availability.applied);
    assert_int_equal(a.nfindings, 1);
    contains(a.findings[0], "; no replicas are added");

    /* No recommendation: nothing. */
    availability_step(&av, -1, true, 6, 8, &st);
    assert_int_equal(st.state, AVAILABILITY_ABSENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_table),  cmocka_unit_test(test_plan_text),
        cmocka_unit_test(test_plan_bounds), cmocka_unit_test(test_steps),
        cmocka_unit_test(test_not_applied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
