#ifndef SIZEUP_SWEEP_OUTPUT_H
#define SIZEUP_SWEEP_OUTPUT_H

/* The advisor's files, the same locally and in the operator's ConfigMap:
 *   results.md        the results table, the findings, setup (date, machine, profile, command)
 *   results.json      inputs + `variants` in sweep order (spec, verdict, usage and the load
 *                     run's fields exactly as `sizeup loadtest --json` names them) + advice
 *   values.yaml       the chart values (libyaml), at configurable paths
 *   auto-sizing.yaml  the fitted rule: expression, constants, each constant's derivation
 *   hpa.yaml          an autoscaling/v2 HPA, when the sizing recommends one (output_hpa.h)
 *   report.html       one self-contained page: inline SVG charts, the table, the findings
 * Each renderer writes one output to a FILE. Which outputs a sweep has, and how they reach a
 * directory or a ConfigMap, is output_set.h's: the one output path of both front-ends. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <cJSON.h>

#include "core/err.h"
#include "load/profile.h"
#include "sweep/advisor.h"
#include "sweep/platform.h"

#define OUTPUT_PATH_MAX  128 /* a values path ("workers.count") */
#define OUTPUT_PATH_SEGS 8

/* Where values.yaml puts the worker count, the resources block and, with a target load, the
 * replica count and the autoscaling block (the keys of a chart made by `helm create`). */
struct output_paths {
    char workers[OUTPUT_PATH_MAX];     /* default "workers.count" */
    char resources[OUTPUT_PATH_MAX];   /* default "resources" */
    char replicas[OUTPUT_PATH_MAX];    /* default "replicaCount" */
    char autoscaling[OUTPUT_PATH_MAX]; /* default "autoscaling" */
};

struct sweep; /* runner.h */

/* Optional parts a renderer leaves out when output_set_render needs the room (output_doc.omit).
 * The rows themselves are never optional. */
#define OUTPUT_OMIT_HTML_CHARTS   (1u << 0) /* report.html: the three charts */
#define OUTPUT_OMIT_JSON_BY_NAME  (1u << 1) /* results.json: each variant's `by_name` */
#define OUTPUT_OMIT_JSON_BY_STAGE (1u << 2) /* results.json: each variant's `by_stage` */
#define OUTPUT_OMIT_JSON_HIST     (1u << 3) /* results.json: every `latency_hist` */
#define OUTPUT_OMIT_HTML          (1u << 4) /* report.html as a whole */

/* Everything a document shows. All pointers borrowed for the duration of a call. */
struct output_doc {
    const struct advisor_row *rows; /* n rows, sweep order */
    size_t n;
    const struct advice *advice;
    const struct sweep *sweep; /* may be NULL: results.json then carries no load fields */
    const struct profile *profile;
    const struct platform_facts *facts; /* may be NULL */
    const char *platform;               /* "local", "kube"; may be NULL */
    const char *command;                /* the command line as run; may be NULL */
    const char *configs;                /* the variant list as given */
    const char *deployment;             /* the Deployment sized (operator); NULL locally */
    time_t started, finished;
    bool cancelled;
    struct output_paths paths;
    unsigned omit; /* OUTPUT_OMIT_*: parts left out for size (set by output_set_render) */
};

/* Fills p with the defaults. */
void output_paths_default(struct output_paths *p /* OUT */);

/* Parses "workers=workers.count,resources=resources,replicas=replicaCount,
 * autoscaling=autoscaling" (any key may be omitted and keeps its default; none twice). Paths are
 * dotted names of [A-Za-z0-9_-] segments, at most OUTPUT_PATH_SEGS deep, and none may be a prefix
 * of another. NULL or "" gives the defaults. Returns 0 or -EINVAL. */
int output_paths_parse(const char *s, struct output_paths *p /* OUT */, char *err);

int output_results_md(FILE *f, const struct output_doc *d, char *err);

/* Returns an owned object (cJSON_Delete), or NULL when out of memory. */
cJSON *output_results_json(const struct output_doc *d);

int output_values_yaml(FILE *f, const struct output_doc *d, char *err);
int output_rule_yaml(FILE *f, const struct output_doc *d, char *err);
int output_report_html(FILE *f, const struct output_doc *d, char *err);

/* Renders d through the one output path (output_set_render) and writes it into dir (created if
 * missing), each file atomically. Returns 0 or the first error. */
int output_write_all(const char *dir, const struct output_doc *d, char *err);

/* Creates dir and its missing parents (mode 0755). Returns 0 or a negative errno. */
int output_mkdir_p(const char *dir, char *err);

/* Latency for tables: "114ms", "0.8ms", "1.25s". Returns buf. */
const char *output_fmt_latency(uint64_t us, char buf[32]);

#endif
