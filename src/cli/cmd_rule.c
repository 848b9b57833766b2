/* sizeup rule: evaluates an auto-sizing rule for given limits, the value a chart's
 * `workers.count: "auto"` resolves to. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/quantity.h"
#include "sweep/rule.h"

static const char usage[] =
    "usage: sizeup rule [--rule auto-sizing.yaml] --cpu C --memory M [--explain]\n"
    "\n"
    "Prints the worker count the auto-sizing rule gives for a CPU limit and a memory limit:\n"
    "  workers = max(1, min(round(cores / cores_per_worker),\n"
    "                       floor(memory_mib / memory_per_worker_mib), max_workers))\n"
    "Without --rule, seed 000's rule (1 core, 192 MiB, 8 workers per pod).\n"
    "\n"
    "  --rule FILE     an auto-sizing.yaml written by `sizeup sweep`\n"
    "  --cpu C         CPU limit, Kubernetes syntax: 500m, 0.5, 2\n"
    "  --memory M      memory limit, Kubernetes syntax: 512Mi, 1Gi, 1G\n"
    "  --explain       also print the rule and each term to stderr\n"
    "\n"
    "example: sizeup rule --cpu 2 --memory 1Gi   ->  2\n";

static int exec_rule(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rule", required_argument, NULL, 'r'},   {"cpu", required_argument, NULL, 'c'},
        {"memory", required_argument, NULL, 'm'}, {"explain", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *rule_path = NULL, *cpu_s = NULL, *mem_s = NULL;
    int explain = 0, c;
    int64_t cpu_m = 0, mem = 0;
    struct rule r;
    char err[ERR_LEN] = "";

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            rule_path = optarg;
            break;
        case 'c':
            cpu_s = optarg;
            break;
        case 'm':
            mem_s = optarg;
            break;
        case 'x':
            explain = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "sizeup rule: unknown or incomplete flag '%s'\n\n%s", argv[optind - 1],
                    usage);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "sizeup rule: unexpected argument '%s'\n\n%s", argv[optind], usage);
        return EXIT_USAGE;
    }
    if (!cpu_s || !mem_s) {
        fprintf(stderr, "sizeup rule: --cpu and --memory are required\n\n%s", usage);
        return EXIT_USAGE;
    }
    if (qty_parse_cpu(cpu_s, &cpu_m, err) != 0 || qty_parse_memory(mem_s, &mem, err) != 0) {
        fprintf(stderr, "sizeup rule: %s\n", err);
        return EXIT_USAGE;
    }
    if (cpu_m <= 0 || mem <= 0) {
        fprintf(stderr, "sizeup rule: --cpu and --memory must be above zero\n");
        return EXIT_USAGE;
    }
    if (rule_path) {
        if (rule_load_file(rule_path, &r, err) != 0) {
            fprintf(stderr, "sizeup rule: %s\n", err);
            return EXIT_USAGE;
        }
    } else {
        rule_default(&r);
    }
    unsigned w = rule_eval(&r, cpu_m, mem);
    if (explain)
        fprintf(stderr,
                "rule: workers = max(1, min(round(cores / %g), floor(memory_mib / %g), %u))\n"
                "cores = %g, memory_mib = %g%s\n",
                r.cores_per_worker, r.memory_per_worker_mib, r.max_workers, (double)cpu_m / 1000.0,
                (double)mem / 1048576.0, rule_path ? "" : " (seed 000's rule)");
    printf("%u\n", w);
    return EXIT_OK;
}

const struct cmd cmd_rule = {"rule", "evaluate an auto-sizing rule for a CPU and memory limit",
                             usage, exec_rule};
