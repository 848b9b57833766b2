/* Tests for src/cli/cli.c, the flag layer every command parses with: each handler's accepted and
 * refused values, getopt_long's cases worded (unknown flag, missing value, a value on a switch,
 * an operand), --flag=value, operands after "--", help, and the usage rendered from the table. */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli.h"

struct args {
    const char *name;
    int on;
    unsigned n;
    uint64_t big;
    double rate;
    int64_t dur_us, zero_ok_us;
};

#define A(m) offsetof(struct args, m)

static const struct cli_flag flags[] = {
    {"name", "S", "x", "a non-empty string", cli_set_string, A(name), 1, 0},
    {"on", NULL, NULL, "a switch", cli_set_switch, A(on), 0, 0},
    {"n", "N", "3", "a whole number from 1 to 10", cli_set_uint, A(n), 1, 10},
    {"big", "N", NULL, "any 64-bit number", cli_set_u64, A(big), 0, (double)UINT64_MAX},
    {"rate", "R", NULL, "above 0, at most 100", cli_set_number, A(rate), 0, 100},
    {"dur", "D", CLI_REQUIRED, "longer than 0, at most 1 minute", cli_set_duration, A(dur_us), 1,
     60e6},
    {"zero-ok", "D", NULL, "0 or longer", cli_set_duration, A(zero_ok_us), 0, 60e6},
    CLI_FLAGS_END,
};

static int exec_none(int argc, char **argv)
{
    (void)argc, (void)argv;
    return 0;
}

static const struct cmd plain = {"t",         "test", "[FLAGS]", "Intro.\n", flags,
                                 "Epilog.\n", 0,      exec_none, NULL,       NULL};
static const struct cli_short shorts[] = {{'s', "name"}, {'o', "on"}, {'x', "absent"}, {0, NULL}};
static const struct cmd permuted = {"t",  "test",      "OPERAND [FLAGS]", "Intro.\n", flags,
                                    NULL, CLI_PERMUTE, exec_none,         shorts,     "kubectl t"};
static const struct cmd with_operands = {"t",  "test",       "[FLAGS] -- CMD", "Intro.\n", flags,
                                         NULL, CLI_OPERANDS, exec_none,        NULL,       NULL};

/* Runs cli_parse on a NULL-terminated argument list; stderr goes to a file whose text is
 * returned in msg. */
static int parse(const struct cmd *c, struct args *a, int *operand, char *msg, size_t len, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, len);
    for (const char *s = "t"; s && argc < 31; s = va_arg(ap, const char *))
        argv[argc++] = (char *)s;
    va_end(ap);
    argv[argc] = NULL;

    char path[] = "/tmp/test_cli.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    memset(a, 0, sizeof(*a));
    int rc = cli_parse(c, argc, argv, a, operand);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, msg, len - 1, 0);
    msg[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return rc;
}

static void test_values_land_in_their_fields(void **state)
{
    (void)state;
    struct args a;
    char msg[4096];
    int op = -1;
    assert_int_equal(parse(&plain, &a, &op, msg, sizeof(msg), "--name", "web", "--on", "--n=7",
                           "--big", "18446744073709551615", "--rate", "2.5", "--dur", "1m",
                           "--zero-ok", "0", NULL),
                     0);
    assert_string_equal(a.name, "web");
    assert_int_equal(a.on, 1);
    assert_int_equal(a.n, 7);
    assert_true(a.big == UINT64_MAX);
    assert_true(a.rate == 2.5);
    assert_int_equal(a.dur_us, 60000000);
    assert_int_equal(a.zero_ok_us, 0);
    assert_int_equal(op, 13); /* argc: no operand */
    assert_string_equal(msg, "");
}

static void test_refusals_name_the_flag_and_the_token(void **state)
{
    (void)state;
    static const struct {
        const char *flag, *val, *want;
    } cases[] = {
        {"--name", "", "--name: the value is empty"},
        {"--n", "0", "--n: '0' is not from 1 to 10"},
        {"--n", "11", "--n: '11' is not from 1 to 10"},
        {"--n", "-1", "--n: '-1' is not a whole number"},
        {"--n", "2x", "--n: '2x' is not a whole number"},
        {"--n", "1.5", "--n: '1.5' is not a whole number"},
        {"--big", "18446744073709551616", "--big: '18446744073709551616' is not a whole number"},
        {"--rate", "0", "--rate: '0' must be above 0"},
        {"--rate", "101", "--rate: '101' must be above 0 and at most 100"},
        {"--rate", "nan", "--rate: 'nan' is not a number"},
        {"--rate", "fast", "--rate: 'fast' is not a number"},
        {"--dur", "0", "--dur: '0' must be longer than 0"},
        {"--dur", "2m", "--dur: '2m' is longer than 1m"},
        {"--dur", "5parsecs", "--dur: bad duration '5parsecs'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct args a;
        char msg[4096];
        int op;
        int rc = parse(&plain, &a, &op, msg, sizeof(msg), cases[i].flag, cases[i].val, NULL);
        if (rc != EXIT_USAGE || !strstr(msg, cases[i].want))
            fail_msg("%s %s: rc %d, message '%.200s', want '%s'", cases[i].flag, cases[i].val, rc,
                     msg, cases[i].want);
        /* The usage follows the message, so the user sees the flags at once. */
        assert_non_null(strstr(msg, "usage: sizeup t [FLAGS]"));
    }
}

static void test_getopt_cases_worded(void **state)
{
    (void)state;
    struct args a;
    char msg[4096];
    int op;
    assert_int_equal(parse(&plain, &a, &op, msg, sizeof(msg), "--bogus", NULL), EXIT_USAGE);
    assert_non_null(strstr(msg, "sizeup t: unknown flag '--bogus'"));
    assert_int_equal(parse(&plain, &a, &op, msg, sizeof(msg), "--n", NULL), EXIT_USAGE);
    assert_non_null(strstr(msg, "--n needs a value (N)"));
    assert_int_equal(parse(&plain, &a, &op, msg, sizeof(msg), "--on=yes", NULL), EXIT_USAGE);
    assert_non_null(strstr(msg, "--on takes no value"));
    assert_int_equal(parse(&plain, &a, &op, msg, sizeof(msg), "stray", NULL), EXIT_USAGE);
    assert_non_null(strstr(msg, "unexpected argument 'stray'"));
}

/* With operands, flags stop at the first one: the operand's own flags are not ours. */
static void test_operands_keep_their_flags(void **state)
{
    (void)state;
    struct args a;
    char msg[4096];
    int op = -1;
    assert_int_equal(
        parse(&with_operands, &a, &op, msg, sizeof(msg), "--n", "2", "--", "app", "--n", "9", NULL),
        0);
    assert_int_equal(a.n, 2);
    assert_int_equal(op, 4);
    assert_int_equal(parse(&with_operands, &a, &op, msg, sizeof(msg), "app", "--bogus", NULL), 0);
    assert_int_equal(op, 1);
}

/* kubectl's way: one-letter forms, flags before and after the operand, the usage naming both
 * forms; a letter whose row this command lacks is ignored (the table is shared). */
static void test_short_flags_and_permuted_operands(void **state)
{
    (void)state;
    struct args a;
    char msg[4096];
    int op = -1;
    assert_int_equal(
        parse(&permuted, &a, &op, msg, sizeof(msg), "-s", "v", "deploy/web", "-o", "--n=4", NULL),
        0);
    assert_string_equal(a.name, "v");
    assert_int_equal(a.on, 1);
    assert_int_equal(a.n, 4);
    assert_int_equal(op, 5);
    assert_int_equal(parse(&permuted, &a, &op, msg, sizeof(msg), "deploy/web", "-s", NULL),
                     EXIT_USAGE);
    assert_non_null(strstr(msg, "-s needs a value (S)"));
    assert_int_equal(parse(&permuted, &a, &op, msg, sizeof(msg), "-x", NULL), EXIT_USAGE);
    assert_non_null(strstr(msg, "kubectl t t: unknown flag '-x'"));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_usage(&permuted, f);
    fclose(f);
    assert_non_null(strstr(buf, "usage: kubectl t t OPERAND [FLAGS]"));
    assert_non_null(strstr(buf, "\n  -s, --name S "));
    assert_non_null(strstr(buf, "\n  -o, --on "));
    free(buf);
}

static void test_help_and_usage(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    cli_usage(&plain, f);
    fclose(f);
    assert_non_null(strstr(text, "usage: sizeup t [FLAGS]\n\nIntro.\n"));
    assert_non_null(strstr(text, "  --n N"));
    assert_non_null(strstr(text, "a whole number from 1 to 10 (default: 3)"));
    assert_non_null(strstr(text, "longer than 0, at most 1 minute (required)"));
    assert_non_null(strstr(text, "  --on                  a switch\n"));
    assert_non_null(strstr(text, "\nEpilog.\n"));
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t w = nl ? (size_t)(nl - line) : strlen(line);
        if (w > 100)
            fail_msg("usage line over 100 columns: %.*s", (int)w, line);
        line = nl ? nl + 1 : NULL;
    }
    free(text);

    struct args a;
    char msg[64];
    int op;
    /* --help prints to stdout and asks the command to exit 0. */
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    int rc = parse(&plain, &a, &op, msg, sizeof(msg), "--help", NULL);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(null);
    assert_int_equal(rc, CLI_HELP);
}

/* Every command's table renders, and every row the usage shows is one the parser accepts. */
static void test_every_command_table(void **state)
{
    (void)state;
    const struct cmd *cmds[] = {&cmd_loadtest, &cmd_sweep,   &cmd_rule,     &cmd_operator,
                                &kcmd_sweep,   &kcmd_status, &kcmd_results, &kcmd_cancel};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        size_t n = 0;
        for (const struct cli_flag *r = cmds[i]->flags; r->name; r++, n++) {
            assert_non_null(r->set);
            assert_non_null(r->help);
            assert_null(strstr(r->help, "(default"));
        }
        assert_true(n > 0 && n <= CLI_MAX_FLAGS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_land_in_their_fields),
        cmocka_unit_test(test_refusals_name_the_flag_and_the_token),
        cmocka_unit_test(test_getopt_cases_worded),
        cmocka_unit_test(test_operands_keep_their_flags),
        cmocka_unit_test(test_short_flags_and_permuted_operands),
        cmocka_unit_test(test_help_and_usage),
        cmocka_unit_test(test_every_command_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
