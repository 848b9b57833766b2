/* Tests for src/core/quantity.c: the units users type, table-driven, malformed cases included. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/quantity.h"

struct ok_case {
    const char *in;
    int64_t want;
};

struct bad_case {
    const char *in;
    const char *msg_has; /* a substring the error must contain */
};

static void test_cpu_ok(void **state)
{
    (void)state;
    static const struct ok_case cases[] = {
        {"500m", 500}, {"0.5", 500}, {"2", 2000},   {"1.25", 1250}, {"1", 1000},
        {".5", 500},   {"0", 0},     {"100m", 100}, {"0.001", 1},   {"16", 16000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -1;
        char err[ERR_LEN] = "";
        assert_int_equal(qty_parse_cpu(cases[i].in, &v, err), 0);
        assert_int_equal(v, cases[i].want);
    }
}

static void test_cpu_bad(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"", "empty"},        {"x", "'x'"},        {"-1", "'-1'"},
        {"2cores", "suffix"}, {"0.0005", "finer"}, {"1.5m", "whole"},
        {"500M", "suffix"},   {"1e3", "suffix"},   {"99999999999999999999", "too large"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = 0;
        char err[ERR_LEN] = "";
        assert_true(qty_parse_cpu(cases[i].in, &v, err) < 0);
        if (!strstr(err, cases[i].msg_has))
            fail_msg("cpu '%s': error '%s' lacks '%s'", cases[i].in, err, cases[i].msg_has);
    }
}

static void test_memory_ok(void **state)
{
    (void)state;
    static const struct ok_case cases[] = {
        {"512Mi", 512LL << 20}, {"1Gi", 1LL << 30},
        {"1G", 1000000000LL},   {"256Ki", 256LL << 10},
        {"1024", 1024},         {"129e6", 129000000LL},
        {"1.5Gi", 3LL << 29},   {"2Ti", 2LL << 40},
        {"100k", 100000},       {"0", 0},
        {"0.5Mi", 512LL << 10},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -1;
        char err[ERR_LEN] = "";
        assert_int_equal(qty_parse_memory(cases[i].in, &v, err), 0);
        assert_int_equal(v, cases[i].want);
    }
}

static void test_memory_bad(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"512m", "did you mean 512Mi"},
        {"1g", "did you mean 1Gi"},
        {"512Zi", "unknown suffix"},
        {"", "empty"},
        {"Mi", "'Mi'"},
        {"-1Gi", "'-1Gi'"},
        {"8Ei", "too large"},
        {"1e99", "exponent"},
        {"1 Gi", "unknown suffix"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = 0;
        char err[ERR_LEN] = "";
        assert_true(qty_parse_memory(cases[i].in, &v, err) < 0);
        if (!strstr(err, cases[i].msg_has))
            fail_msg("memory '%s': error '%s' lacks '%s'", cases[i].in, err, cases[i].msg_has);
    }
}

static void test_duration(void **state)
{
    (void)state;
    static const struct ok_case ok[] = {
        {"250ms", 250000}, {"20s", 20000000},           {"1m30s", 90000000}, {"1.5s", 1500000},
        {"0", 0},          {"2h", 7200000000LL},        {"100us", 100},      {"1500ns", 2},
        {"1m", 60000000},  {"1h1m1s1ms", 3661001000LL},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t v = -1;
        char err[ERR_LEN] = "";
        assert_int_equal(qty_parse_duration(ok[i].in, &v, err), 0);
        assert_int_equal(v, ok[i].want);
    }
    static const struct bad_case bad[] = {
        {"20", "unit"}, {"s", "number"},   {"", "empty"},    {"5 s", "unit"},
        {"1d", "unit"}, {"-5s", "number"}, {"1m30", "unit"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v = 0;
        char err[ERR_LEN] = "";
        assert_true(qty_parse_duration(bad[i].in, &v, err) < 0);
        if (!strstr(err, bad[i].msg_has))
            fail_msg("duration '%s': error '%s' lacks '%s'", bad[i].in, err, bad[i].msg_has);
    }
}

static void test_percent(void **state)
{
    (void)state;
    double f;
    char err[ERR_LEN];
    assert_int_equal(qty_parse_percent("1%", &f, err), 0);
    assert_float_equal(f, 0.01, 1e-12);
    assert_int_equal(qty_parse_percent("0.5%", &f, err), 0);
    assert_float_equal(f, 0.005, 1e-12);
    assert_int_equal(qty_parse_percent("0.02", &f, err), 0);
    assert_float_equal(f, 0.02, 1e-12);
    assert_true(qty_parse_percent("150%", &f, err) < 0);
    assert_true(qty_parse_percent("abc", &f, err) < 0);
    assert_true(qty_parse_percent("2", &f, err) < 0);
    assert_true(qty_parse_percent("1%%", &f, err) < 0);
}

static void test_format(void **state)
{
    (void)state;
    char b[QTY_LEN];
    assert_string_equal(qty_format_cpu(500, b), "500m");
    assert_string_equal(qty_format_cpu(2000, b), "2");
    assert_string_equal(qty_format_cores(500, b), "0.5");
    assert_string_equal(qty_format_cores(1250, b), "1.25");
    assert_string_equal(qty_format_cores(4000, b), "4");
    assert_string_equal(qty_format_memory(512LL << 20, b), "512Mi");
    assert_string_equal(qty_format_memory(1LL << 30, b), "1Gi");
    assert_string_equal(qty_format_memory(1000, b), "1000");
    assert_string_equal(qty_format_duration(850, b), "850us");
    assert_string_equal(qty_format_duration(12300, b), "12.3ms");
    assert_string_equal(qty_format_duration(150000000, b), "2m30s");
    assert_string_equal(qty_format_duration(999700, b), "1s");
    assert_string_equal(qty_format_duration(999400, b), "999ms");
    assert_string_equal(qty_format_duration(59970000, b), "1m0s");
    /* No unit boundary prints in exponent notation. */
    for (int64_t us = 1; us < 4000000000LL; us = us * 11 / 10 + 1)
        if (strchr(qty_format_duration(us, b), 'e'))
            fail_msg("%lld us formats as %s", (long long)us, b);
    /* Round trip: what we format, we parse back to the same value. */
    int64_t v;
    for (int64_t m = 1; m < 70000; m += 37) {
        assert_int_equal(qty_parse_cpu(qty_format_cpu(m, b), &v, NULL), 0);
        assert_int_equal(v, m);
    }
    for (int64_t bytes = 1024; bytes < (1LL << 40); bytes = bytes * 3 + 1024) {
        assert_int_equal(qty_parse_memory(qty_format_memory(bytes, b), &v, NULL), 0);
        assert_int_equal(v, bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_ok),    cmocka_unit_test(test_cpu_bad),
        cmocka_unit_test(test_memory_ok), cmocka_unit_test(test_memory_bad),
        cmocka_unit_test(test_duration),  cmocka_unit_test(test_percent),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
