/* Tests for src/advise/rule.c: evaluating the auto-sizing rule (table-driven, the default rule and
 * fitted ones) and reading it back from an auto-sizing.yaml. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advise/rule.h"

#define MI (1LL << 20)
#define GI (1LL << 30)

struct eval_case {
    double cpw, mpw;
    unsigned maxw;
    int64_t cpu_m, mem;
    unsigned want;
};

static void test_eval_table(void **state)
{
    (void)state;
    static const struct eval_case cases[] = {
        /* the default rule: the three examples, then the edges */
        {1, 192, 8, 2000, 1 * GI, 2},
        {1, 192, 8, 500, 512 * MI, 1},
        {1, 192, 8, 16000, 8 * GI, 8},
        {1, 192, 8, 4000, 2 * GI, 4},
        {1, 192, 8, 4000, 512 * MI, 2}, /* memory-bound: floor(512/192) = 2 */
        {1, 192, 8, 1499, 4 * GI, 1},   /* 1.499 rounds down */
        {1, 192, 8, 1500, 4 * GI, 2},   /* 1.5 rounds half away from zero */
        {1, 192, 8, 100, 4 * GI, 1},    /* round(0.1) = 0, floored to one worker */
        {1, 192, 8, 4000, 100 * MI, 1}, /* floor(100/192) = 0, floored to one worker */
        {1, 192, 8, 3000, 575 * MI, 2}, /* 575/192 = 2.99 */
        {1, 192, 8, 3000, 576 * MI, 3}, /* exactly 3 * 192 */
        /* fitted rules */
        {0.5, 128, 16, 2000, 1 * GI, 4},
        {2, 256, 4, 8000, 4 * GI, 4},
        {2, 256, 3, 8000, 4 * GI, 3},
        {0.25, 64, 64, 1000, 192 * MI, 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rule r = {cases[i].cpw, cases[i].mpw, cases[i].maxw};
        char err[ERR_LEN] = "";
        assert_int_equal(rule_check(&r, err), 0);
        unsigned got = rule_eval(&r, cases[i].cpu_m, cases[i].mem);
        if (got != cases[i].want)
            fail_msg("case %zu: cpu %lldm mem %lld -> %u, want %u", i, (long long)cases[i].cpu_m,
                     (long long)cases[i].mem, got, cases[i].want);
    }
}

static void test_default_is_seed000(void **state)
{
    (void)state;
    struct rule r;
    rule_default(&r);
    assert_true(r.cores_per_worker == 1.0);
    assert_true(r.memory_per_worker_mib == 192.0);
    assert_int_equal(r.max_workers, 8);
}

static void test_check_bad(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    struct rule r = {0, 192, 8};
    assert_true(rule_check(&r, err) < 0);
    assert_non_null(strstr(err, "cores_per_worker"));
    r = (struct rule){1, -1, 8};
    assert_true(rule_check(&r, err) < 0);
    assert_non_null(strstr(err, "memory_per_worker_mib"));
    r = (struct rule){1, 192, 0};
    assert_true(rule_check(&r, err) < 0);
    assert_non_null(strstr(err, "max_workers"));
}

static void test_load_buffer(void **state)
{
    (void)state;
    static const char ok[] = "expression: \"min(round(cores / 0.5), floor(memory_mib / 160), 6)\"\n"
                             "constants:\n"
                             "  cores_per_worker: 0.5\n"
                             "  memory_per_worker_mib: 160\n"
                             "  max_workers: 6\n";
    struct rule r;
    char err[ERR_LEN] = "";

    assert_int_equal(rule_load_buffer(ok, strlen(ok), "a.yaml", &r, err), 0);
    assert_true(r.cores_per_worker == 0.5);
    assert_true(r.memory_per_worker_mib == 160);
    assert_int_equal(r.max_workers, 6);
    assert_int_equal(rule_eval(&r, 2000, 1 * GI), 4);
}

struct bad_yaml {
    const char *doc;
    const char *msg_has;
};

static void test_load_bad(void **state)
{
    (void)state;
    static const struct bad_yaml cases[] = {
        {"constants: [1, 2]\n", "no 'constants'"},
        {"foo: 1\n", "no 'constants'"},
        {"constants:\n  cores_per_worker: 1\n  max_workers: 8\n",
         "memory_per_worker_mib is missing"},
        {"constants:\n  cores_per_worker: x\n  memory_per_worker_mib: 1\n  max_workers: 8\n",
         "'x' is not a number"},
        {"constants:\n  cores_per_worker: 1\n  memory_per_worker_mib: 1\n  max_workers: 2.5\n",
         "whole number"},
        {"constants:\n  cores_per_worker: -1\n  memory_per_worker_mib: 1\n  max_workers: 2\n",
         "cores_per_worker must be"},
        {"constants: {cores_per_worker: 1\n", "a.yaml:"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rule r;
        char err[ERR_LEN] = "";
        if (rule_load_buffer(cases[i].doc, strlen(cases[i].doc), "a.yaml", &r, err) == 0)
            fail_msg("case %zu accepted", i);
        if (!strstr(err, cases[i].msg_has))
            fail_msg("case %zu: error '%s' lacks '%s'", i, err, cases[i].msg_has);
    }
    /* Over the size cap: refused before parsing. */
    static char big[RULE_MAX_BYTES + 2];
    memset(big, '#', sizeof(big) - 1);
    struct rule r;
    char err[ERR_LEN] = "";
    assert_int_equal(rule_load_buffer(big, sizeof(big) - 1, "big.yaml", &r, err), -EFBIG);
}

/* One text of the rule wherever it is printed, always with the floor of one worker that
 * rule_eval applies; with the constants written in, it reads back as the same rule. */
static void test_format(void **state)
{
    (void)state;
    char buf[RULE_EXPRESSION_LEN], doc[512], err[ERR_LEN] = "";
    struct rule r = {0.5, 160, 6}, back;

    assert_string_equal(rule_format(NULL, buf), RULE_EXPRESSION);
    assert_non_null(strstr(RULE_EXPRESSION, "workers = max(1, min("));
    rule_default(&back);
    assert_string_equal(rule_format(&back, buf),
                        "workers = max(1, min(round(cores / 1), floor(memory_mib / 192), 8))");
    assert_string_equal(rule_format(&r, buf),
                        "workers = max(1, min(round(cores / 0.5), floor(memory_mib / 160), 6))");
    /* The floor is real: a tiny limit still gets one worker. */
    assert_int_equal(rule_eval(&r, 100, 64 * MI), 1);
    /* The longest constants still fit. */
    struct rule wide = {1023.123456, 1023.123456, RULE_MAX_WORKERS};
    assert_true(strlen(rule_format(&wide, buf)) < sizeof(buf) - 1);
    /* As auto-sizing.yaml writes it, it reads back as the same constants. */
    snprintf(doc, sizeof(doc),
             "expression: \"%s\"\nconstants:\n  cores_per_worker: 0.5\n"
             "  memory_per_worker_mib: 160\n  max_workers: 6\n",
             rule_format(&r, buf));
    assert_int_equal(rule_load_buffer(doc, strlen(doc), "a.yaml", &back, err), 0);
    assert_true(back.cores_per_worker == 0.5 && back.memory_per_worker_mib == 160 &&
                back.max_workers == 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_table), cmocka_unit_test(test_default_is_seed000),
        cmocka_unit_test(test_check_bad),  cmocka_unit_test(test_load_buffer),
        cmocka_unit_test(test_load_bad),   cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
