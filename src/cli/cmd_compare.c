/* sizeup compare: two sweeps' results side by side, with the change per variant and whether it
 * is significant; --fail-on-regression turns a significant capacity drop into exit 99 for CI. */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sweep/compare.h"

static const char usage[] =
    "usage: sizeup compare [--json] [--fail-on-regression PCT] A B\n"
    "\n"
    "Compares two sweeps: A and B are each a results.json or a sweep's --out directory.\n"
    "Per variant (matched by spec, e.g. 2@1/512Mi) and overall: capacity @SLO, throughput,\n"
    "p95 and p99 side by side, the change from A to B in percent, and whether it is\n"
    "significant (Welch's t-test at p < 0.05 on the capacity repeats; `~` when not, or when\n"
    "either side has fewer than 3 repeats; a fixed-load sweep's figures are always `~`).\n"
    "\n"
    "  --json                    print the comparison as JSON\n"
    "  --fail-on-regression PCT  exit 99 when a capacity fell by more than PCT percent\n"
    "                            (0-100) and the fall is significant\n"
    "\n"
    "exit: 0 compared, 99 a regression beyond PCT, 2 bad flags or input files\n"
    "example: sizeup compare before/ after/ --fail-on-regression 10\n";

struct compare_opts {
    bool help; /* --help: the usage was printed, nothing else to do */
    bool json;
    double fail_pct; /* < 0: no threshold */
    const char *a, *b;
};

/* "10", "10%" or "2.5" -> percent in [0, 100]. */
static int parse_pct(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v))
        return -EINVAL;
    if (*end == '%')
        end++;
    if (*end || v < 0 || v > 100)
        return -EINVAL;
    *out = v;
    return 0;
}

/* The flags of `sizeup compare` into *o. Returns EXIT_OK, or EXIT_USAGE with the reason and
 * the usage printed. */
static int parse_flags(int argc, char **argv, struct compare_opts *o)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"fail-on-regression", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->fail_pct = -1;
    optind = 1;
    opterr = 0;
    /* '+' would stop at the first operand; flags after A and B are allowed, as in the example. */
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            o->json = true;
            break;
        case 'f':
            if (parse_pct(optarg, &o->fail_pct) != 0) {
                fprintf(stderr,
                        "sizeup compare: --fail-on-regression '%s': expected a percentage "
                        "from 0 to 100, e.g. 10\n",
                        optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h':
            fputs(usage, stdout);
            o->help = true;
            return EXIT_OK;
        default:
            fprintf(stderr, "sizeup compare: unknown or incomplete flag '%s'\n\n%s",
                    argv[optind - 1], usage);
            return EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "sizeup compare: expected two results (A B), got %d\n\n%s", argc - optind,
                usage);
        return EXIT_USAGE;
    }
    o->a = argv[optind];
    o->b = argv[optind + 1];
    return EXIT_OK;
}

static int print_report(const struct compare_report *r, bool json)
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

/* A regression names its variants on stderr too, so a CI log shows it next to the exit code. */
static int verdict(const struct compare_report *r)
{
    if (!r->fail_set)
        return EXIT_OK;
    if (r->nregressions == 0) {
        if (r->ntestable == 0)
            fprintf(stderr,
                    "sizeup compare: --fail-on-regression: no variant has %d capacity repeats "
                    "on both sides, so no regression can be judged\n",
                    STATS_MIN_REPEATS);
        return EXIT_OK;
    }
    fprintf(stderr, "sizeup compare: regression beyond %g%%:", r->fail_pct);
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].regression)
            fprintf(stderr, " %s (capacity %+.1f%%)", r->rows[i].spec,
                    r->rows[i].cell[COMPARE_CAPACITY].change_pct);
    fputc('\n', stderr);
    return EXIT_THRESHOLD;
}

static int exec_compare(int argc, char **argv)
{
    struct compare_opts o;
    struct compare_file a = {0}, b = {0};
    struct compare_report r = {0};
    char err[ERR_LEN] = "";
    int rc = parse_flags(argc, argv, &o);

    if (rc || o.help)
        return rc;
    rc = compare_load(o.a, &a, err);
    if (rc == 0)
        rc = compare_load(o.b, &b, err);
    if (rc) {
        fprintf(stderr, "sizeup compare: %s\n", err);
        rc = rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
        goto out;
    }
    if (compare_run(&a, &b, o.fail_pct, &r) != 0) {
        fprintf(stderr, "sizeup compare: out of memory\n");
        rc = EXIT_RUNTIME;
        goto out;
    }
    rc = print_report(&r, o.json);
    if (rc == EXIT_OK)
        rc = verdict(&r);
out:
    compare_report_free(&r);
    compare_file_free(&a);
    compare_file_free(&b);
    return rc;
}

const struct cmd cmd_compare = {"compare", "compare two sweeps' results, with significance", usage,
                                exec_compare};
