/* sizeup compare: two sweeps' results side by side, with the change per variant and whether it
 * is significant; --fail-on-regression turns a significant capacity drop into exit 99 for CI. */

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "output/compare.h"

struct compare_args {
    int json;
    double fail_pct; /* < 0: no threshold */
};

#define ARG(m) offsetof(struct compare_args, m)

/* "10", "10%" or "2.5": a percentage in [f->min, f->max], both included (0 fails on any
 * significant drop). */
static int set_pct(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(val, &end);
    if (end != val && *end == '%')
        end++;
    if (errno || end == val || *end || !isfinite(x) || x < f->min || x > f->max)
        return err_set(err, -EINVAL, "--%s: '%.64s': expected a percentage from %g to %g, e.g. 10",
                       f->name, val, f->min, f->max);
    *(double *)dst = x;
    return 0;
}

static const struct cli_flag flags[] = {
    {"fail-on-regression", "PCT", NULL,
     "exit 99 when a capacity fell by more than PCT percent and the fall is significant", set_pct,
     ARG(fail_pct), 0, 100},
    {"json", NULL, NULL, "print the comparison as JSON", cli_set_switch, ARG(json), 0, 0},
    CLI_FLAGS_END,
};

static int print_report(const struct compare_report *r, int json)
{
    if (!json)
        return compare_write_text(stdout, r) == 0 ? EXIT_OK : EXIT_RUNTIME;
    cJSON *j = compare_json(r);
    char *text = j ? cJSON_Print(j) : NULL;
    int rc = text && puts(text) >= 0 ? EXIT_OK : EXIT_RUNTIME;
    if (rc != EXIT_OK)
        fprintf(stderr, "sizeup compare: out of memory or write error\n");
    free(text);
    cJSON_Delete(j);
    return rc;
}

/* A regression, or a threshold that could judge nothing, is said on stderr too, so a CI log
 * shows it next to the exit code (and --json output stays the JSON alone on stdout). */
static int verdict(const struct compare_report *r)
{
    /* Judged by different inputs: nothing was compared, so no regression check can pass. */
    if (r->ndiffer) {
        if (r->fail_set) {
            fputs("sizeup compare: ", stderr);
            compare_write_verdict(stderr, r);
        }
        return r->fail_set ? EXIT_RUNTIME : EXIT_OK;
    }
    if (!r->fail_set || (r->nregressions == 0 && r->ntestable > 0))
        return EXIT_OK;
    fputs("sizeup compare: ", stderr);
    compare_write_verdict(stderr, r);
    return r->nregressions ? EXIT_THRESHOLD : EXIT_OK;
}

static int exec_compare(int argc, char **argv)
{
    struct compare_args args = {.fail_pct = -1};
    struct compare_file a = {0}, b = {0};
    struct compare_report r = {0};
    char err[ERR_LEN] = "";
    int operand, rc;

    rc = cli_parse(&cmd_compare, argc, argv, &args, &operand);
    if (rc)
        return rc == CLI_HELP ? EXIT_OK : rc;
    if (argc - operand != 2) {
        snprintf(err, sizeof(err), "expected two results (A B), got %d", argc - operand);
        return cli_usage_error(&cmd_compare, err);
    }
    rc = compare_load(argv[operand], &a, err);
    if (rc == 0)
        rc = compare_load(argv[operand + 1], &b, err);
    if (rc) {
        fprintf(stderr, "sizeup compare: %s\n", err);
        rc = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
        goto out;
    }
    if (compare_run(&a, &b, args.fail_pct, &r) != 0) {
        fprintf(stderr, "sizeup compare: out of memory\n");
        rc = EXIT_RUNTIME;
        goto out;
    }
    rc = print_report(&r, args.json);
    if (rc == EXIT_OK)
        rc = verdict(&r);
out:
    compare_report_free(&r);
    compare_file_free(&a);
    compare_file_free(&b);
    return rc;
}

const struct cmd cmd_compare = {
    .name = "compare",
    .summary = "compare two sweeps' results, with the change and its significance",
    .synopsis = "[--json] [--fail-on-regression PCT] A B",
    .intro =
        "Compares two sweeps: A and B are each a results.json or a sweep's --out directory.\n"
        "Per variant (matched by spec, e.g. 2@1/512Mi) and overall: capacity @SLO, throughput,\n"
        "p95 and p99 side by side, the change from A to B in percent, and whether it is\n"
        "significant (Welch's t-test at p < 0.05 on the capacity repeats; `~` when not, or when\n"
        "either side has fewer than 3 repeats; a fixed-load sweep's figures are always `~`).\n",
    .flags = flags,
    .epilog = "example: sizeup compare --fail-on-regression 10 before/ after/\n"
              "\n"
              "A and B judged by different inputs (profile slo, search window/warmup/precision,\n"
              "requests, thresholds) are not compared: the differing fields are printed.\n"
              "\n"
              "Exit status: 0 compared, 99 a capacity regression beyond PCT, 1 not compared\n"
              "(different inputs) with --fail-on-regression, 2 bad flags or input files.\n",
    .opts = CLI_OPERANDS,
    .exec = exec_compare,
};
