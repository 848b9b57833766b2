/* sizeup rule: evaluates an auto-sizing rule for given limits, the value a chart's
 * `workers.count: "auto"` resolves to. */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fmt.h"
#include "core/quantity.h"
#include "advise/rule.h"

struct rule_args {
    const char *rule_path, *cpu, *memory;
    int explain;
};

#define ARG(m) offsetof(struct rule_args, m)

static const struct cli_flag flags[] = {
    {"rule", "FILE", "the built-in rule", "an auto-sizing.yaml written by `sizeup sweep`",
     cli_set_string, ARG(rule_path), 1, 0},
    {"cpu", "C", CLI_REQUIRED, "CPU limit, Kubernetes syntax: 500m, 0.5, 2", cli_set_string,
     ARG(cpu), 1, 0},
    {"memory", "M", CLI_REQUIRED, "memory limit, Kubernetes syntax: 512Mi, 1Gi, 1G", cli_set_string,
     ARG(memory), 1, 0},
    {"explain", NULL, NULL, "also print the rule and each term to stderr", cli_set_switch,
     ARG(explain), 0, 0},
    CLI_FLAGS_END,
};

/* The limits from the flags, both above zero. Returns an exit status. */
static int parse_limits(const struct rule_args *a, int64_t *cpu_m, int64_t *mem)
{
    char err[ERR_LEN] = "";

    if (!a->cpu || !a->memory)
        return cli_usage_error(&cmd_rule, "--cpu and --memory are required");
    if (qty_parse_cpu(a->cpu, cpu_m, err) != 0 || qty_parse_memory(a->memory, mem, err) != 0) {
        fprintf(stderr, "sizeup rule: %s\n", err);
        return EXIT_USAGE;
    }
    if (*cpu_m <= 0 || *mem <= 0) {
        fprintf(stderr, "sizeup rule: --cpu and --memory must be above zero\n");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int exec_rule(int argc, char **argv)
{
    struct rule_args a = {0};
    int64_t cpu_m = 0, mem = 0;
    struct rule r;
    char err[ERR_LEN] = "", expr[RULE_EXPRESSION_LEN];
    int operand, status;

    status = cli_parse(&cmd_rule, argc, argv, &a, &operand);
    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    status = parse_limits(&a, &cpu_m, &mem);
    if (status)
        return status;
    if (!a.rule_path)
        rule_default(&r);
    else if (rule_load_file(a.rule_path, &r, err) != 0) {
        fprintf(stderr, "sizeup rule: %s\n", err);
        return EXIT_USAGE;
    }
    unsigned w = rule_eval(&r, cpu_m, mem);
    if (a.explain)
        fprintf(stderr, "rule: %s\ncores = %g, memory_mib = %g%s\n", rule_format(&r, expr),
                (double)cpu_m / 1000.0, (double)mem / (double)FMT_MIB,
                a.rule_path ? "" : " (the built-in rule)");
    printf("%u\n", w);
    return EXIT_OK;
}

const struct cmd cmd_rule = {
    .name = "rule",
    .summary = "evaluate an auto-sizing rule for a CPU and memory limit",
    .synopsis = "[--rule auto-sizing.yaml] --cpu C --memory M [--explain]",
    .intro =
        "Prints the worker count the auto-sizing rule gives for a CPU limit and a memory limit:\n"
        "  " RULE_EXPRESSION "\n",
    .flags = flags,
    .epilog = "example: sizeup rule --cpu 2 --memory 1Gi   ->  2\n",
    .exec = exec_rule,
};
