#ifndef SIZEUP_OUTPUT_OUTPUT_H
#define SIZEUP_OUTPUT_OUTPUT_H

/* The advisor's files, the same locally and in the operator's ConfigMap:
 *   results.md        the results table, the findings, setup (date, machine, profile, command)
 *   results.json      inputs + `variants` in sweep order (spec, verdict, usage and the load
 *                     run's fields exactly as `sizeup loadtest --json` names them) + advice
 *   values.yaml       the chart values (libyaml), at configurable paths
 *   auto-sizing.yaml  the fitted rule: expression, constants, each constant's derivation
 *   hpa.yaml          an autoscaling/v2 HPA, when the sizing recommends one (output_hpa.h)
 *   report.html       one self-contained page: inline SVG charts, the table, the findings
 *   deployment-patch.yaml  a strategic-merge patch of the swept Deployment (output_patch.c)
 *   previous-results.json  the results.json of the sweep before (automatic re-sweeps)
 * Each renderer writes one output to a FILE. Which outputs a sweep has, and how they reach a
 * directory or a ConfigMap, is output_set.h's: the one output path of both front-ends. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <cJSON.h>

#include "core/err.h"
#include "profile/profile.h"
#include "advise/advisor.h"
#include "sweep/platform.h"

#define OUTPUT_PATH_MAX  128 /* a values path ("workers.count") */
#define OUTPUT_PATH_SEGS 8

/* Where values.yaml puts the worker count, the resources block and, with a target load, the
 * replica count and the autoscaling block (the keys of a chart made by `helm create`). */
struct output_paths {
    char workers[OUTPUT_PATH_MAX];   /* default "workers.count" */
    char resources[OUTPUT_PATH_MAX]; /* default "resources" */
    char replicas[OUTPUT_PATH_MAX];  /* default "replicaCount" */
    /* default "autoscaling"; "" (autoscaling= in the map): unmapped, the HPA goes to hpa.yaml */
    char autoscaling[OUTPUT_PATH_MAX];
};

struct sweep; /* runner.h */

/* Optional parts a renderer leaves out when output_set_render needs the room (output_doc.omit).
 * The rows themselves are never optional. */
#define OUTPUT_OMIT_HTML_CHARTS   (1u << 0) /* report.html: the three charts */
#define OUTPUT_OMIT_JSON_BY_NAME  (1u << 1) /* results.json: each variant's `by_name` */
#define OUTPUT_OMIT_JSON_BY_STAGE (1u << 2) /* results.json: each variant's `by_stage` */
#define OUTPUT_OMIT_JSON_HIST     (1u << 3) /* results.json: every `latency_hist` */
#define OUTPUT_OMIT_HTML          (1u << 4) /* report.html as a whole */
#define OUTPUT_OMIT_PREVIOUS      (1u << 5) /* previous-results.json, dropped before any other */

/* The Deployment a sweep sized, for deployment-patch.yaml (a strategic-merge patch needs the
 * object's name and the container's, its list's merge key). Borrowed strings; deployment NULL:
 * unknown (a local sweep without --deployment), and no patch is written. */
struct output_workload {
    const char *deployment;  /* metadata.name */
    const char *container;   /* the sized container's name; NULL: the Deployment's name */
    const char *workers_env; /* the env var that carries the worker count */
    const char *images;      /* "container=image ..." as swept; may be NULL */
    /* The pods' labels, "key=value[,key=value]" (the Deployment's spec.selector.matchLabels,
     * or --selector): pdb.yaml's selector and the patch's zone spread. NULL: unknown. */
    const char *selector;
};

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
    time_t started, finished;
    bool cancelled;
    struct output_paths paths;
    struct output_workload workload;
    /* The results.json of the sweep before this one (an automatic re-sweep keeps it), written
     * back as previous-results.json; NULL: none. The sentence comparing the two, for
     * results.md; NULL: none. Both borrowed. */
    const char *previous_results;
    const char *comparison;
    unsigned omit; /* OUTPUT_OMIT_*: parts left out for size (set by output_set_render) */
    /* The sweep whose scale_out the outputs show (its rows[scale_out->variant] names the
     * variant); NULL: sweep's. A resumed operator's run has the scale-out but not every row. */
    const struct sweep *scale_out_from;
};

/* Fills p with the defaults. */
void output_paths_default(struct output_paths *p /* OUT */);

/* The one path that carries the answer's autoscaler, so no Deployment is ever told to apply two:
 * NONE without an HPA; VALUES for a CPU HPA when the autoscaling key is mapped (values.yaml's
 * autoscaling block, applied by `helm upgrade`: no hpa.yaml is written or offered); FILE for a
 * CPU HPA with the key unmapped, and for every request-rate HPA, which charts made by `helm
 * create` cannot template (hpa.yaml, or keda.yaml instead; values.yaml then turns the chart's
 * own HPA off where the key is mapped). */
enum output_autoscaler {
    OUTPUT_AUTOSCALER_NONE = 0,
    OUTPUT_AUTOSCALER_VALUES,
    OUTPUT_AUTOSCALER_FILE,
};
enum output_autoscaler output_autoscaler(const struct output_doc *d);

/* Parses "workers=workers.count,resources=resources,replicas=replicaCount,
 * autoscaling=autoscaling" (any key may be omitted and keeps its default; none twice). Paths are
 * dotted names of [A-Za-z0-9_-] segments, at most OUTPUT_PATH_SEGS deep, and none may be a prefix
 * of another; "autoscaling=" with no path unmaps the chart's autoscaling block (the autoscaler
 * then goes to hpa.yaml: output_autoscaler). NULL or "" gives the defaults. Returns 0 or
 * -EINVAL. */
SIZEUP_MUST_USE int output_paths_parse(const char *s, struct output_paths *p /* OUT */, char *err);

/* The answer that results.md, report.html and the terminal open with (output_answer.c): the
 * recommended shape, replicas and autoscaler for the target, values.yaml's exact bytes (rendered
 * by output_values_yaml) and the commands that apply the files written; without a
 * recommendation, why not and that nothing is to be applied. Returns 0, -EIO or -ENOMEM. */
enum output_answer_style { OUTPUT_ANSWER_MD, OUTPUT_ANSWER_HTML, OUTPUT_ANSWER_TEXT };
SIZEUP_MUST_USE int output_answer(FILE *f, const struct output_doc *d,
                                  enum output_answer_style style, char *err);

/* The sizing's target for people: "5000 req/s", "200 users (1000 req/s)", "20000 streams",
 * "none". Returns buf. */
struct sizing;
const char *output_answer_target(const struct sizing *s, char *buf, size_t len);

SIZEUP_MUST_USE int output_results_md(FILE *f, const struct output_doc *d, char *err);

/* Returns an owned object (cJSON_Delete), or NULL when out of memory. */
cJSON *output_results_json(const struct output_doc *d);

SIZEUP_MUST_USE int output_values_yaml(FILE *f, const struct output_doc *d, char *err);
SIZEUP_MUST_USE int output_rule_yaml(FILE *f, const struct output_doc *d, char *err);
SIZEUP_MUST_USE int output_report_html(FILE *f, const struct output_doc *d, char *err);

/* deployment-patch.yaml: a strategic-merge patch of the Deployment d->workload names with the
 * recommended container resources, the workers env and (with a target) the replicas, accepted
 * unchanged by `kubectl patch --type strategic --patch-file` and a kustomize `patches:` entry.
 * -EINVAL without a recommendation, a workload, or with a name YAML could misread. */
SIZEUP_MUST_USE int output_deployment_patch(FILE *f, const struct output_doc *d, char *err);

/* Kubernetes' rule for env var names: letters, digits, '_', '-', '.', not starting with a digit,
 * at most 256 bytes. Returns non-zero when s is one. */
int output_env_name_valid(const char *s);

/* Checks that w's names are ones deployment-patch.yaml can carry (a Deployment name, a
 * container name, an env var name, the selector's labels); a NULL deployment passes. Returns 0
 * or -EINVAL. */
SIZEUP_MUST_USE int output_workload_check(const struct output_workload *w, char *err);

/* pdb.yaml (output_pdb.c): the policy/v1 PodDisruptionBudget of d->advice->availability,
 * minAvailable its R, selecting d->workload.selector (else app: NAME, with a comment to edit
 * it), named after the Deployment (else OUTPUT_PDB_DEFAULT_NAME). -ENOENT without a plan. */
#define OUTPUT_PDB_DEFAULT_NAME    "app"
#define OUTPUT_SELECTOR_MAX_LABELS 16
SIZEUP_MUST_USE int output_pdb_doc(FILE *f, const struct output_doc *d, char *err);

/* Checks a selector "key=value[,key=value]" (Kubernetes label keys and values, at most
 * OUTPUT_SELECTOR_MAX_LABELS). Returns 0 or -EINVAL (err names the bad label). */
SIZEUP_MUST_USE int output_selector_check(const char *sel, char *err);

/* deployment-patch.yaml's topologySpreadConstraints (under the pod template's spec) for an
 * availability plan over two or more zones: maxSkew 1 on topology.kubernetes.io/zone, the
 * selector's labels; a comment when the selector is unknown; nothing otherwise. */
void output_patch_spread(FILE *f, const struct output_doc *d);

/* previous-results.json: d->previous_results as it was kept. */
SIZEUP_MUST_USE int output_previous_results(FILE *f, const struct output_doc *d, char *err);

/* Renders d through the one output path (output_set_render) and writes it into dir (created if
 * missing), each file atomically. Returns 0 or the first error. */
SIZEUP_MUST_USE int output_write_all(const char *dir, const struct output_doc *d, char *err);

/* Creates dir and its missing parents (mode 0755). Returns 0 or a negative errno. */
SIZEUP_MUST_USE int output_mkdir_p(const char *dir, char *err);

/* A capacity's text: at most four figures ("%.0f" of a double is at most 310 characters), the
 * words around them and every mark's name fit, so nothing is ever cut. */
#define OUTPUT_CAPACITY_LEN 1536

/* A capacity as people read it (capacity_show): "1111 req/s [1078, 1145]" (the 95% interval
 * of the repeats, widened to the search's bracket, never below 0), "1111 req/s" without
 * repeats, ">= 900 req/s (generator-limited)", "unknown: the repeats disagreed (897, 1114
 * req/s)" when they disagreed and could not be measured again, "-" when not searched. The
 * table's cell, the scale-out's table, results.md and report.html print this. Returns buf. */
const char *output_fmt_capacity_figure(const struct capacity_result *c,
                                       char buf[OUTPUT_CAPACITY_LEN]);

/* The Capacity @SLO cell: output_fmt_capacity_figure and the figure's marks in words ("
 * (noisy, budget)"). Returns buf. */
const char *output_fmt_capacity(const struct capacity_result *c, char buf[OUTPUT_CAPACITY_LEN]);

/* The per core column: capacity / CPU limit, "-" when not searched. Returns buf. */
const char *output_fmt_per_core(const struct capacity_result *c, char *buf, size_t len);

/* In capacity mode, what the table's columns are and the SLO they were judged against, one
 * sentence for results.md, report.html and the terminal: "" in fixed mode. Returns buf. */
const char *output_fmt_capacity_note(const struct profile *p, char *buf, size_t len);

/* True when any row of d carries a capacity search: the tables then add the two columns. */
bool output_has_capacity(const struct output_doc *d);

/* The Streams @SLO column: "6,500 streams", ">= 6,500 streams (budget)" when the search did not
 * bracket it (the budget, sizeup's stream threads, streams.count), "none passed", "-" when not
 * searched. Returns buf. */
const char *output_fmt_streams(const struct stream_capacity *c, char *buf, size_t len);

/* The Memory/stream column: "41.0 KiB", "-" when not searched or fewer than two points. */
const char *output_fmt_memory_per_stream(const struct stream_capacity *c, char *buf, size_t len);

/* True when any row of d carries a stream-capacity search: the tables then add its columns. */
bool output_has_streams(const struct output_doc *d);

struct sweep;
/* The scale-out table (replicas, capacity @SLO, interval, per pod, % of linear) and what the
 * fitted curve says, as markdown (results.md) or for the terminal; or the sentence saying why
 * no scale-out ran. Nothing when s has no scale-out. Borrows s. */
void output_scale_out_table(FILE *f, const struct sweep *s, bool markdown);

#endif
