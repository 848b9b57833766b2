#ifndef SIZEUP_OPERATOR_JOB_INTERNAL_H
#define SIZEUP_OPERATOR_JOB_INTERNAL_H

/* Shared between job.c (the entry: a job's start), job_request.c (the request's checks, START
 * and RECOVER), job_state.c (the progress document), job_run.c (the sweep itself, through the
 * sweep runner and the Kubernetes platform) and job_util.c (the writes to the API they all
 * make). Not for other modules. */

#include <cjson/cJSON.h>

#include "core/err.h"
#include "kube/client.h"
#include "kube/nodes.h"
#include "profile/profile.h"
#include "advise/advisor.h"
#include "output/output.h"
#include "sweep/platform.h"
#include "sweep/progress_feed.h"
#include "sweep/runner.h"
#include "sweep/variant.h"
#include "operator/annotations.h"
#include "operator/job.h"
#include "operator/resweep.h"

struct jctx {
    const struct job_env *env;
    struct job *j;
    kube_client_t *c;
    cJSON *deploy; /* owned: the Deployment as read when the job started */
    struct annot_request req;
    char cm_name[JOB_NAME_MAX + 1]; /* job_sizing_name */
};

/* Sets sizeup.dev/status (and sizeup.dev/last-sweep when last is non-NULL) with a merge patch.
 * A Deployment deleted meanwhile is not an error. */
SIZEUP_MUST_USE int job_set_status(struct jctx *x, const char *status, const char *last, char *err);

/* Emits an Event about the Deployment (type "Normal" or "Warning"); failures are logged, not
 * returned: an Event lost must not stop a sweep. */
void job_event(struct jctx *x, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the ConfigMap <deployment>-sizing with keys[0..n) = values[0..n) (all borrowed),
 * labelled app.kubernetes.io/managed-by: sizeup and owned by the Deployment. */
SIZEUP_MUST_USE int job_put_sizing(struct jctx *x, const char *const *keys,
                                   const char *const *values, size_t n, char *err);

/* Reports a request that cannot run: a Warning Event and status "failed: <reason>", nothing
 * else changed. Returns 0 when reported. */
SIZEUP_MUST_USE int job_fail_request(struct jctx *x, const char *reason, char *err);

/* Runs the validated request x->req (START) to its end. */
SIZEUP_MUST_USE int job_sweep(struct jctx *x, char *err);

/* Handles a sweep left running by an earlier operator (RECOVER): resumes it from the
 * ConfigMap's progress, or restores the original and marks it failed. */
SIZEUP_MUST_USE int job_recover(struct jctx *x, char *err);

#define JOB_STATUS_LEN 64 /* "running 12/64, about 1h20m left" */

/* The status of a running sweep into out: "running k/n" (k variants finished of n), then, when
 * an estimate is known (eta_s > 0), ", about X left" with X rounded for people: 10 s steps below
 * a minute, minutes below an hour, then hours and minutes. Scripts match the "running k/n"
 * prefix. Returns out. */
const char *job_status_running(size_t k, size_t n, double eta_s, char out[JOB_STATUS_LEN]);

/* Everything one sweep carries between the runner's callbacks. */
struct sweep_job {
    struct jctx *x;
    struct profile profile;
    struct variant_list all;   /* the whole list, as annotated */
    struct variant_list todo;  /* what this run measures: all, or the rest after a resume */
    struct advisor_row *prior; /* owned: rows measured by an earlier operator (resume) */
    size_t nprior;
    struct output_paths paths;
    struct platform plat;
    struct platform_facts facts;
    time_t started;
    char configs[VARIANT_LIST_MAX + 1];
    struct advice advice; /* the last advice computed */
    int have_advice;
    char no_rec[ADVISOR_TEXT_LEN + 256]; /* output_no_rec_sentence of the last advice */
    /* Re-sweeps (x->req.resweep): the results.json of the sweep before (owned), written back as
     * previous-results.json, and the sentence comparing the rows so far with it. */
    char *previous;
    char comparison[RESWEEP_IMAGES_MAX + 512];
    int significant;
    char images[RESWEEP_IMAGES_MAX]; /* the images swept, from the Deployment as read */
    char container[64];              /* the sized container's name */
    char gen_for[64];                /* the generator Jobs' label naming the Deployment */
    /* The Deployment's spec.selector.matchLabels, "k=v,k2=v2", for pdb.yaml and the zone
     * spread; "" when it has none that output_selector_check accepts. */
    char selector[512];
    /* Where the node types for the packing came from (kube_node_types_read): a finding. */
    char nodes_note[KUBE_NODES_NOTE_LEN];
    /* The sweep's slot in the live progress feed (x->env->feed) while it runs; < 0: none. */
    int feed_slot;
    /* The status while it runs: the runner's last estimate of the time left (eta_s < 0: none
     * yet) and when it came (monotonic s), and the last status written and when. */
    double eta_s, eta_at;
    char status[JOB_STATUS_LEN];
    double status_at;
    /* The scale-out so far (borrowed from the running sweep, NULL before it runs) and its
     * variant's spec, for state.json: each finished point is recorded there. */
    const struct sweep_scale_out *so_state;
    char so_spec[VARIANT_TOKEN_MAX + 1];
    /* Resumed: the scale-out points an earlier operator recorded (owned, NULL: none), their
     * variant in so_spec; so_only when this run measures only the rest of that scale-out (its
     * sweep's one row is the variant's, not a row of the results). */
    struct sweep_scale_out *so_prior;
    bool so_only;
};

/* Status writes while a sweep runs are at most one every this many seconds (a variant's end is
 * always written): each is a write to the Deployment every watcher of it sees. */
#define JOB_STATUS_MIN_INTERVAL_S 5.0

/* Frees what sj owns (not sj->x). */
void job_sweep_job_free(struct sweep_job *sj);

/* The progress document (state.json) for rows[0..n) of sj, phase "running", "done", ...: each
 * row's figures and, after a capacity search, its capacity result in compact form (the step
 * tables left out when the document would pass the room the output path keeps for it). Owned
 * string (free()), NULL when out of memory. */
char *job_state_json(const struct sweep_job *sj, const struct advisor_row *rows, size_t n,
                     const char *phase);

/* Parses the progress document text (borrowed, may be NULL) of a sweep: when it belongs to
 * this sweep value, Deployment uid and variant list, and its rows match the first variants of
 * all, returns 0 with *prior an owned array (free()) of *nprior measured rows, capacity results
 * included. -ENOENT when the document is missing, malformed or not this sweep's; -ENOMEM. */
SIZEUP_MUST_USE int job_progress_parse(const char *text, const char *sweep, const char *uid,
                                       const char *configs, const struct variant_list *all,
                                       struct advisor_row **prior /* OUT */,
                                       size_t *nprior /* OUT */);

/* The scale-out points a progress document (text, borrowed) records, into *so (points[0] the
 * 1-replica point, each point's capacity without its steps, so->run set) and its variant's spec
 * into spec (len bytes). Call it after job_progress_parse accepted text as this sweep's. Returns 0,
 * -ENOENT when the document has no scale-out, -EINVAL for one that is malformed. */
SIZEUP_MUST_USE int job_progress_scale_out(const char *text, struct sweep_scale_out *so /* OUT */,
                                           char *spec /* OUT */, size_t len);

/* The scale-out a request measures, into so (the profile's, borrowed and changed): the
 * annotation's count when given (as --scale-out), else the profile's scale_out when it has one,
 * else off: in the cluster a scale-out is asked for, never a default, even with a target. */
SIZEUP_MUST_USE int job_scale_out_request(const struct annot_request *req,
                                          struct profile_scale_out *so, char *err);

/* The sweep runner's options for sj (sj->todo on sj->plat, the job's stop flag, the progress and
 * row callbacks). shared_target is set for a URL target, in-place and resize modes, so the runner
 * refuses a capacity search there without search.max_rps even if validation let one through. */
void job_sweep_opts(struct sweep_job *sj, struct sweep_opts *so /* OUT */);

/* The load-generator pods a sweep asks for: the annotation sizeup.dev/generators when given (it
 * wins), else the profile's generators:, else 0 (the operator's own pod, with generator pods for
 * a step it cannot deliver). *from (may be NULL) names where the number came from, for errors. */
unsigned job_generators(const struct annot_request *req, const struct profile *p,
                        const char **from /* OUT */);

/* The Events a finished sweep records, in order: SweepCompleted; NoRecommendation when no
 * variant was recommended; TargetUnreachable when a shape is recommended but no count of it holds
 * the target (the scale-out's curve); ResultsCompared after a re-sweep. Each note is borrowed
 * from sj or held in completed; valid while sj and the struct live. */
#define JOB_DONE_EVENTS_MAX 4
struct job_done_events {
    char completed[256]; /* SweepCompleted's note */
    struct {
        const char *type, *reason, *note;
    } ev[JOB_DONE_EVENTS_MAX];
    size_t n;
};
void job_done_events(const struct sweep_job *sj, const struct advisor_row *rows, size_t n,
                     struct job_done_events *out /* OUT */);

/* Runs sj->todo (validated, status already "running 0/n" or resumed) through the sweep runner
 * on the Kubernetes platform and reports the end: ConfigMap, status, Events, metrics. */
SIZEUP_MUST_USE int job_run_sweep(struct sweep_job *sj, char *err);

/* Cleans up what an earlier operator left for this Deployment: deletes a leftover clone and
 * puts a saved pod template back. */
SIZEUP_MUST_USE int job_restore_leftovers(struct sweep_job *sj, char *err);

#endif
