/* Tests for src/core/log.c: credentials never survive into a log line. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/log.h"

static void test_scrub(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "event=req header=\"Authorization: Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.abc\"",
        "event=x authorization=Bearer sekrit-token-value-123456",
        "event=y token=abcdefghijklmnop other=1",
        "event=z Bearer short",
    };
    static const char *const secrets[] = {"eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.abc",
                                          "sekrit-token-value-123456", "abcdefghijklmnop", "short"};
    for (size_t i = 0; i < 4; i++) {
        char buf[512];
        snprintf(buf, sizeof(buf), "%s", lines[i]);
        log_scrub(buf);
        if (strstr(buf, secrets[i]))
            fail_msg("secret survived: %s", buf);
    }
    char keep[] = "event=sweep.start deployment=web variants=6";
    log_scrub(keep);
    assert_string_equal(keep, "event=sweep.start deployment=web variants=6");
}

static void test_levels(void **state)
{
    (void)state;
    enum log_level l;
    assert_int_equal(log_parse_level("debug", &l), 0);
    assert_int_equal(l, LOG_DEBUG);
    assert_int_equal(log_parse_level("WARN", &l), 0);
    assert_int_equal(l, LOG_WARN);
    assert_true(log_parse_level("loud", &l) < 0);
    log_set_level(LOG_WARN);
    assert_false(log_enabled(LOG_INFO));
    assert_true(log_enabled(LOG_ERROR));
    log_set_level(LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_scrub), cmocka_unit_test(test_levels)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
