#ifndef SIZEUP_OPERATOR_PLUGIN_H
#define SIZEUP_OPERATOR_PLUGIN_H

/* `kubectl sizeup`: the client side of the operator's contract. It asks for a sweep the way a
 * person does (the sizeup.dev/ annotations, a profile ConfigMap), follows it through the status
 * annotation and the results ConfigMap, lists requests, prints results and cancels. The
 * command table is src/cli/cmd_kubectl.c; everything here is testable without a terminal, and
 * the pure parts (target names, output names, judging a status, progress lines, status lines)
 * without a cluster. */

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "core/err.h"
#include "kube/client.h"
#include "operator/annotations.h"

/* The profile ConfigMap `sweep --profile` makes is NAME plus this suffix. */
#define PLUGIN_PROFILE_SUFFIX "-sizeup-profile"
#define PLUGIN_SWEEP_PREFIX   "kubectl-"   /* sizeup.dev/sweep values the plugin writes */
#define PLUGIN_PROFILE_MAX    (256 * 1024) /* a profile file larger than this is refused */

/* Parses a kubectl-style target: "deploy/NAME", "deployment/NAME", "deployments/NAME",
 * "deployment.apps/NAME" or a bare "NAME", into name (a DNS-1123 subdomain). Returns 0 or
 * -EINVAL with a reason. */
int plugin_parse_target(const char *arg, char name[ANNOT_MAX_NAME + 1], char *err);

/* The ConfigMap key `results -o OUTPUT` prints: md, json, values, hpa, patch (or the key
 * itself). NULL for anything else. */
const char *plugin_output_key(const char *output);

/* Checks a target-load value ("5000rps", "10000users", "20000streams"). 0 or -EINVAL. */
int plugin_check_target_load(const char *v, char *err);

struct plugin_sweep_opts {
    const char *configs;     /* NULL: keep the annotation (or the operator's default) */
    const char *profile;     /* profile YAML text (borrowed), NULL: keep */
    const char *profile_src; /* its file name, for messages */
    const char *target_load; /* NULL: keep */
    int scale_out;           /* sizeup.dev/scale-out, 0-PROFILE_MAX_SCALE_OUT; -1: keep */
};

/* Asks for a sweep of Deployment ns/name: validates the options, creates or replaces the
 * profile ConfigMap <name>-sizeup-profile (owned by the Deployment) when a profile is given,
 * then sets the annotations and a new sizeup.dev/sweep value in one merge patch. Writes the
 * sweep value into sweep (ANNOT_MAX_SWEEP + 1 bytes) and a one-line summary to out. Returns 0,
 * -EINVAL (bad option), or the API's error. */
int plugin_sweep(kube_client_t *c, const char *ns, const char *name,
                 const struct plugin_sweep_opts *o, char *sweep /* OUT */, FILE *out, char *err);

enum plugin_state { PLUGIN_WAITING, PLUGIN_RUNNING, PLUGIN_DONE, PLUGIN_FAILED };

/* Judges the request `sweep` from a Deployment's annotations (borrowed, any may be NULL): the
 * current sweep value, the last handled one and the status. */
enum plugin_state plugin_judge(const char *sweep, const char *current, const char *last,
                               const char *status);

/* Progress of a followed sweep between two looks. */
struct plugin_follow {
    size_t printed;    /* variants already printed */
    char status[256];  /* the status last printed */
    int waiting_noted; /* "waiting for the operator" said */
};

/* Prints to out the variants of results.json (text, borrowed) beyond st->printed, one line
 * each with its verdict, throughput and p95 (or its failure), total being the sweep's size
 * (0: unknown). Returns how many lines it printed. */
size_t plugin_progress_lines(const char *results_json, size_t total, struct plugin_follow *st,
                             FILE *out);

/* One look at the sweep `sweep` of ns/name: prints a changed status and the variants that
 * landed since the last look. *state receives where the sweep is. Returns 0 or the API's
 * error (a transient one is the caller's to retry). */
int plugin_follow_step(kube_client_t *c, const char *ns, const char *name, const char *sweep,
                       struct plugin_follow *st, FILE *out, enum plugin_state *state /* OUT */,
                       char *err);

/* One line for Deployment deploy (borrowed) if it carries a sizing request or state, into
 * line (len bytes): [NAMESPACE] NAME STATUS REQUEST RESWEEP, columns as plugin_status_header.
 * Returns 1 when written, 0 when the Deployment has nothing to do with sizeup. */
int plugin_status_line(const cJSON *deploy, int with_ns, char *line, size_t len);
void plugin_status_header(int with_ns, char *line, size_t len);

/* Prints a line per sizing request in namespace ns (NULL: every namespace) to out, after a
 * header; "No sizing requests found in ..." when there is none. Returns 0 or the API's error. */
int plugin_status(kube_client_t *c, const char *ns, FILE *out, char *err);

/* The key `key` of the results ConfigMap of ns/name into *text (owned, free()). -ENOENT with
 * a reason when there is no such ConfigMap or key. */
int plugin_results(kube_client_t *c, const char *ns, const char *name, const char *key,
                   char **text /* OUT */, char *err);

/* Withdraws the sweep request of ns/name (removes sizeup.dev/sweep; the operator stops the
 * sweep and restores). Writes what it did to out. -ENOENT when nothing was requested. */
int plugin_cancel(kube_client_t *c, const char *ns, const char *name, FILE *out, char *err);

#endif
