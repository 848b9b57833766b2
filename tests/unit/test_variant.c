/* Tests for src/sweep/variant.c: the workers@cpu/memory grammar, table-driven, malformed
 * tokens and lists included. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/variant.h"

#define MI (1LL << 20)
#define GI (1LL << 30)

struct ok_case {
    const char *in;
    unsigned workers;
    int64_t cpu_m;
    int64_t mem;
    const char *spec;
    const char *label;
};

static void test_token_ok(void **state)
{
    (void)state;
    static const struct ok_case cases[] = {
        {"2@1/512Mi", 2, 1000, 512 * MI, "2@1/512Mi", "2w / 1.0c / 512Mi"},
        {"1@500m/512Mi", 1, 500, 512 * MI, "1@0.5/512Mi", "1w / 0.5c / 512Mi"},
        {"1@0.5/512Mi", 1, 500, 512 * MI, "1@0.5/512Mi", "1w / 0.5c / 512Mi"},
        {"4@4/2Gi", 4, 4000, 2 * GI, "4@4/2Gi", "4w / 4.0c / 2Gi"},
        {"8@1.25/1G", 8, 1250, 1000000000LL, "8@1.25/1000000000", "8w / 1.25c / 1000000000"},
        {"16@16/8Gi", 16, 16000, 8 * GI, "16@16/8Gi", "16w / 16.0c / 8Gi"},
        {"1@100m/64Mi", 1, 100, 64 * MI, "1@0.1/64Mi", "1w / 0.1c / 64Mi"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct variant v;
        char err[ERR_LEN] = "";
        if (variant_parse(cases[i].in, &v, err) != 0)
            fail_msg("'%s' rejected: %s", cases[i].in, err);
        assert_int_equal(v.workers, cases[i].workers);
        assert_int_equal(v.cpu_millicores, cases[i].cpu_m);
        assert_int_equal(v.memory_bytes, cases[i].mem);
        assert_string_equal(v.spec, cases[i].spec);
        assert_string_equal(v.label, cases[i].label);
    }
}

struct bad_case {
    const char *in;
    const char *msg_has; /* the error must name the token and say what was wrong */
};

static void test_token_bad(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"", "empty"},
        {"2", "missing '@'"},
        {"2@1", "missing '/'"},
        {"@1/512Mi", "missing worker count"},
        {"0@1/512Mi", "at least 1"},
        {"x@1/512Mi", "'x' is not a whole number"},
        {"+2@1/512Mi", "not a whole number"},
        {"2@/512Mi", "'2@/512Mi'"},
        {"2@1/", "'2@1/'"},
        {"2@0/512Mi", "above zero"},
        {"2@1/0", "above zero"},
        {"2@1cores/512Mi", "suffix"},
        {"2@1/512m", "'2@1/512m'"},
        {"2@1/512", "below 4Mi"},
        {"2@1/1g", "'2@1/1g'"},
        {"99999@1/1Gi", "more than 1024 workers"},
        {"2@-1/512Mi", "'2@-1/512Mi'"},
        {"2@1/512Mi/3", "'2@1/512Mi/3'"},
        {"2@1@2/512Mi", "'2@1@2/512Mi'"},
        {"1@1/1Gi12345678901234567890123456789012345678901234567890", "longer than"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct variant v;
        char err[ERR_LEN] = "";
        if (variant_parse(cases[i].in, &v, err) == 0)
            fail_msg("'%s' accepted", cases[i].in);
        if (!strstr(err, cases[i].msg_has))
            fail_msg("'%s': error '%s' lacks '%s'", cases[i].in, err, cases[i].msg_has);
        if (cases[i].in[0] && !strstr(err, "expected") && !strstr(err, "at least") &&
            !strstr(err, "above zero") && !strstr(err, "more than") && !strstr(err, "4Mi") &&
            !strstr(err, "mean") && !strstr(err, "e.g."))
            fail_msg("'%s': error '%s' does not say what was expected", cases[i].in, err);
    }
}

static void test_default_list(void **state)
{
    (void)state;
    struct variant_list l;
    char err[ERR_LEN] = "";
    static const char *labels[] = {"1w / 0.5c / 512Mi", "1w / 1.0c / 512Mi", "2w / 1.0c / 1Gi",
                                   "2w / 2.0c / 1Gi",   "4w / 2.0c / 1Gi",   "4w / 4.0c / 2Gi"};

    assert_int_equal(variant_parse_list(VARIANT_DEFAULT_LIST, &l, err), 0);
    assert_int_equal(l.n, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(l.items[i].label, labels[i]);
}

static void test_list_whitespace_and_order(void **state)
{
    (void)state;
    struct variant_list l;
    char err[ERR_LEN] = "";

    assert_int_equal(variant_parse_list("  4@4/2Gi\t1@500m/256Mi\n2@1/512Mi  ", &l, err), 0);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.items[0].workers, 4);
    assert_int_equal(l.items[1].cpu_millicores, 500);
    assert_int_equal(l.items[2].memory_bytes, 512 * MI);
}

static void test_list_bad(void **state)
{
    (void)state;
    struct variant_list l;
    char err[ERR_LEN] = "";

    assert_true(variant_parse_list("", &l, err) < 0);
    assert_non_null(strstr(err, "empty"));
    assert_true(variant_parse_list("   ", &l, err) < 0);
    assert_true(variant_parse_list(NULL, &l, err) < 0);

    /* The second token is the bad one, and the error names it, not the first. */
    assert_true(variant_parse_list("2@1/512Mi 2@1/512 4@4/2Gi", &l, err) < 0);
    assert_non_null(strstr(err, "'2@1/512'"));
    assert_int_equal(l.n, 0);

    assert_true(variant_parse_list("2@1/512Mi 2@1000m/512Mi", &l, err) < 0);
    assert_non_null(strstr(err, "repeats"));

    /* A comma-separated list is a common slip: it fails on the token, naming it. */
    assert_true(variant_parse_list("2@1/512Mi,4@4/2Gi", &l, err) < 0);
    assert_non_null(strstr(err, "2@1/512Mi,4@4/2Gi"));
}

static void test_list_caps(void **state)
{
    (void)state;
    static struct variant_list l;
    char err[ERR_LEN] = "";
    char buf[VARIANT_LIST_MAX + 64];
    size_t off = 0;

    /* 64 distinct variants are accepted, the 65th is refused. */
    for (int i = 1; i <= VARIANT_MAX + 1; i++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%d@1/512Mi ", i);
    assert_true(variant_parse_list(buf, &l, err) < 0);
    assert_non_null(strstr(err, "more than 64"));
    off = 0;
    for (int i = 1; i <= VARIANT_MAX; i++)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%d@1/512Mi ", i);
    assert_int_equal(variant_parse_list(buf, &l, err), 0);
    assert_int_equal(l.n, VARIANT_MAX);

    /* An over-long list is refused before any parsing. */
    memset(buf, ' ', sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    assert_true(variant_parse_list(buf, &l, err) < 0);
    assert_non_null(strstr(err, "longer than"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_ok),     cmocka_unit_test(test_token_bad),
        cmocka_unit_test(test_default_list), cmocka_unit_test(test_list_whitespace_and_order),
        cmocka_unit_test(test_list_bad),     cmocka_unit_test(test_list_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
