/* Tests for src/profile/profile_override.c: what each flag changes, and one case per conflict
 * with the message that names the flag and the profile's field. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "profile/profile_override.h"

#define REQ "requests: [{path: /}]\n"

static void load(const char *yaml, struct profile *p)
{
    char err[ERR_LEN] = "";
    if (!yaml) {
        assert_int_equal(profile_init_default(p), 0);
        return;
    }
    if (profile_load_buffer(yaml, strlen(yaml), "p.yaml", p, err) != 0)
        fail_msg("profile: %s", err);
}

static void test_nothing_changes_nothing(void **state)
{
    (void)state;
    struct profile p;
    struct profile_override o = PROFILE_OVERRIDE_NONE;
    char err[ERR_LEN] = "";
    load("users: 7\nduration: 3s\nwarmup: 1s\ntimeout: 2s\n" REQ, &p);
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_int_equal(p.users, 7);
    assert_int_equal(p.duration_us, 3000000);
    assert_int_equal(p.warmup_us, 1000000);
    assert_int_equal(p.timeout_us, 2000000);
    profile_free(&p);
}

static void test_each_flag_sets_its_field(void **state)
{
    (void)state;
    struct profile p;
    struct profile_override o = PROFILE_OVERRIDE_NONE;
    char err[ERR_LEN] = "";
    load("users: 7\n" REQ, &p);
    o.users = 3;
    o.duration_us = 4000000;
    o.warmup_us = 0; /* zero is a value: no warm-up */
    o.timeout_us = 0;
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_int_equal(p.users, 3);
    assert_true(p.rate == 0);
    assert_int_equal(p.duration_us, 4000000);
    assert_int_equal(p.warmup_us, 0);
    assert_int_equal(p.timeout_us, 0);
    profile_free(&p);

    load("rate: 10\n" REQ, &p);
    o = (struct profile_override)PROFILE_OVERRIDE_NONE;
    o.rate = 25;
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_true(p.rate == 25);
    assert_int_equal(p.users, 0);
    profile_free(&p);
}

/* The built-in default and a file that names neither users nor rate choose no loop: either flag
 * sets it. */
static void test_either_loop_on_a_profile_that_chose_none(void **state)
{
    (void)state;
    const char *yamls[] = {NULL, "duration: 2s\n" REQ};
    for (size_t i = 0; i < 2; i++) {
        struct profile p;
        struct profile_override o = PROFILE_OVERRIDE_NONE;
        char err[ERR_LEN] = "";
        load(yamls[i], &p);
        o.rate = 40;
        assert_int_equal(profile_override_apply(&o, &p, err), 0);
        assert_true(p.rate == 40);
        assert_int_equal(p.users, 0);
        profile_free(&p);
        load(yamls[i], &p);
        o = (struct profile_override)PROFILE_OVERRIDE_NONE;
        o.users = 4;
        assert_int_equal(profile_override_apply(&o, &p, err), 0);
        assert_int_equal(p.users, 4);
        profile_free(&p);
    }
}

/* A target flag replaces the profile's whole target, in whichever unit it was given; both flags
 * at once are refused and change nothing. */
static void test_target_replaces_the_profiles(void **state)
{
    (void)state;
    struct profile p;
    struct profile_override o = PROFILE_OVERRIDE_NONE;
    char err[ERR_LEN] = "";

    load("target: { users: 2000 }\n" REQ, &p);
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_true(p.target_users == 2000 && p.target_rps == 0);
    o.target_rps = 5000;
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_true(p.target_rps == 5000 && p.target_users == 0);
    o = (struct profile_override)PROFILE_OVERRIDE_NONE;
    o.target_users = 10000;
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_true(p.target_users == 10000 && p.target_rps == 0);
    o.target_rps = 1;
    assert_int_equal(profile_override_apply(&o, &p, err), -EINVAL);
    assert_non_null(strstr(err, "one of --target-rps, --target-users or --target-streams"));
    assert_true(p.target_users == 10000 && p.target_rps == 0);
    /* Streams are a target only for a profile that opens streams. */
    o = (struct profile_override)PROFILE_OVERRIDE_NONE;
    o.target_streams = 20000;
    assert_int_equal(profile_override_apply(&o, &p, err), -EINVAL);
    assert_non_null(strstr(err, "--target-streams needs a profile with streams:"));
    assert_true(p.target_streams == 0 && p.target_users == 10000);
    profile_free(&p);

    load("streams: { url: 'ws://127.0.0.1:9/live', count: 50 }\ntarget: { users: 2000 }\n", &p);
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_true(p.target_streams == 20000 && p.target_users == 0 && p.target_rps == 0);
    profile_free(&p);
}

struct conflict {
    const char *yaml; /* NULL: the built-in default */
    struct profile_override o;
    const char *words[3]; /* each must be in the message */
};

#define USER_STAGES "stages: [{duration: 2s, users: 5}]\n" REQ
#define RATE_STAGES "stages: [{duration: 2s, rate: 5}]\n" REQ

static void test_conflicts_are_refused_and_change_nothing(void **state)
{
    (void)state;
    static const struct conflict cases[] = {
        {NULL, {3, 5, -1, -1, -1, 0, 0, 0}, {"--users or --rate, not both"}},
        {"users: 2\n" REQ, {3, 5, -1, -1, -1, 0, 0, 0}, {"not both"}},
        {"users: 2\n" REQ,
         {0, 5, -1, -1, -1, 0, 0, 0},
         {"--rate conflicts with 'users'", "p.yaml"}},
        {"rate: 9\n" REQ, {3, 0, -1, -1, -1, 0, 0, 0}, {"--users conflicts with 'rate'", "p.yaml"}},
        {USER_STAGES,
         {0, 0, 1000000, -1, -1, 0, 0, 0},
         {"--duration conflicts with the stages", "p.yaml"}},
        {RATE_STAGES, {0, 0, 1000000, -1, -1, 0, 0, 0}, {"--duration conflicts with the stages"}},
        {USER_STAGES, {3, 0, -1, -1, -1, 0, 0, 0}, {"--users conflicts with the stages"}},
        {RATE_STAGES, {3, 0, -1, -1, -1, 0, 0, 0}, {"--users conflicts with the stages"}},
        {USER_STAGES, {0, 5, -1, -1, -1, 0, 0, 0}, {"--rate conflicts with the stages"}},
        {RATE_STAGES, {0, 5, -1, -1, -1, 0, 0, 0}, {"--rate conflicts with the stages"}},
        {NULL, {0, 0, -1, -1, -1, 100, 200, 0}, {"one of --target-rps, --target-users or"}},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct conflict *c = &cases[i];
        struct profile p;
        char err[ERR_LEN] = "";
        load(c->yaml, &p);
        unsigned users = p.users;
        double rate = p.rate;
        int64_t dur = p.duration_us;
        size_t nstages = p.nstages;
        assert_int_equal(profile_override_apply(&c->o, &p, err), -EINVAL);
        for (size_t w = 0; w < 3 && c->words[w]; w++)
            if (!strstr(err, c->words[w]))
                fail_msg("case %zu: '%s' lacks '%s'", i, err, c->words[w]);
        assert_int_equal(p.users, users);
        assert_true(p.rate == rate);
        assert_int_equal(p.duration_us, dur);
        assert_int_equal(p.nstages, nstages);
        profile_free(&p);
    }
}

/* Warm-up and timeout never conflict: stages keep their shape and get the new values. */
static void test_warmup_and_timeout_apply_to_stages(void **state)
{
    (void)state;
    struct profile p;
    struct profile_override o = PROFILE_OVERRIDE_NONE;
    char err[ERR_LEN] = "";
    load("stages: [{duration: 2s, users: 5}, {duration: 1s, users: 1}]\n" REQ, &p);
    o.warmup_us = 500000;
    o.timeout_us = 250000;
    assert_int_equal(profile_override_apply(&o, &p, err), 0);
    assert_int_equal(p.nstages, 2);
    assert_int_equal(p.duration_us, 3000000);
    assert_int_equal(p.warmup_us, 500000);
    assert_int_equal(p.timeout_us, 250000);
    profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_changes_nothing),
        cmocka_unit_test(test_target_replaces_the_profiles),
        cmocka_unit_test(test_each_flag_sets_its_field),
        cmocka_unit_test(test_either_loop_on_a_profile_that_chose_none),
        cmocka_unit_test(test_conflicts_are_refused_and_change_nothing),
        cmocka_unit_test(test_warmup_and_timeout_apply_to_stages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
