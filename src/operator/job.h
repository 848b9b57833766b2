#ifndef SIZEUP_OPERATOR_JOB_H
#define SIZEUP_OPERATOR_JOB_H

/* One unit of operator work on one Deployment, run on a worker thread with its own Kubernetes
 * client: a sweep requested by a new sizeup.dev/sweep value (START), or the clean-up of a sweep
 * an earlier operator left marked running (RECOVER). A job owns every write it makes to the
 * Deployment, its clone, its ConfigMap and its Events; it never touches another Deployment. */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "kube/client.h"
#include "operator/annotations.h"
#include "operator/cache.h"
#include "operator/metrics.h"

#define JOB_REPORTER      "sizeup.dev/operator" /* reportingController of our Events */
#define JOB_SIZING_SUFFIX "-sizing"
#define JOB_STATE_KEY     "state.json" /* the ConfigMap key that carries progress */

/* A ConfigMap name has at most this many characters (a DNS subdomain). */
#define JOB_NAME_MAX 253

/* The results ConfigMap's name for Deployment `deployment` into out: `<deployment>-sizing` when
 * that fits JOB_NAME_MAX; else the Deployment's shortened label value (kube_platform_clone_label:
 * cut, plus a hash of the whole name) followed by "-sizing", so it stays unique and stable. */
void job_sizing_name(const char *deployment, char out[JOB_NAME_MAX + 1]);

/* Why a job was asked to stop early. */
enum job_stop {
    JOB_RUN = 0,
    JOB_STOP_CANCEL,   /* the sweep annotation was removed or the Deployment deleted */
    JOB_STOP_SHUTDOWN, /* the operator is shutting down: persist progress, restore, resume later */
    JOB_STOP_LEASE,    /* this replica lost the lease: restore, the new leader resumes */
};

/* What a job borrows from the operator for its whole run. */
struct job_env {
    kube_config_t *cfg;               /* shared, thread-safe */
    struct metrics *m;                /* atomics */
    const char *identity;             /* reportingInstance of our Events */
    volatile sig_atomic_t *hard_stop; /* set at the shutdown deadline: abort API calls */
    struct progress_feed *feed;       /* live progress (thread-safe); may be NULL */
};

struct job {
    struct job *next; /* the operator's queue link */
    enum cache_action kind;
    char ns[64];
    char name[254];
    char uid[64];
    /* Set by the operator from another thread; the sweep runner polls it. */
    volatile sig_atomic_t stop;
    volatile sig_atomic_t stop_reason; /* enum job_stop */
    /* OUT: the sweep value the job handled (written to last-sweep), "" when none. */
    char handled[ANNOT_MAX_SWEEP + 1];
    /* Which run of the same request this is (1 the first; set by the operator on a requeue). */
    int attempt;
    /* OUT: > 0 when the sweep failed on a transient API error (409 Conflict past the client's
     * retry budget, 429, 5xx) and asks to be run again after that many seconds; the status then
     * reads "pending: retrying ..." and nothing is left applied. */
    int retry_in_s;
    int64_t due_ms; /* the operator's: when a requeued job may run (monotonic ms) */
};

#define JOB_MAX_ATTEMPTS 5  /* runs of one request before a transient error is "failed:" */
#define JOB_RETRY_BASE_S 2  /* the wait after the first transient failure, doubled after each */
#define JOB_RETRY_CAP_S  60 /* the longest wait between two runs */

/* Whether rc (a negative errno from a sweep) is a transient API error worth a requeue. */
int job_retryable(int rc);

/* The wait in seconds before run attempt + 1 after run `attempt` (1-based) failed on a
 * transient error: 2, 4, 8, ... capped at JOB_RETRY_CAP_S; 0 when no attempt is left. */
int job_retry_delay_s(int attempt);

/* Runs j to its end: validates, sweeps, writes results and status, restores. Returns 0 when the
 * job ended as it should (a sweep done, a bad annotation reported, a recovery made), or a
 * negative errno when it could not even report (the API unreachable); err says why. */
int job_run(const struct job_env *env, struct job *j, char *err);

/* Copies s into out (len bytes, truncating) fit for a quoted key="value" log field: double
 * quotes become single quotes, backslashes '/', control characters '?'. Returns out. */
const char *job_log_safe(const char *s, char *out, size_t len);

/* job_log_safe into a temporary buffer that lives until the end of the enclosing block, for
 * log calls: log_warn("x", "error=\"%s\"", LOGQ(err)). */
#define JOB_LOGQ_LEN (ERR_LEN + 64)
#define LOGQ(s)      job_log_safe((s), (char[JOB_LOGQ_LEN]){0}, JOB_LOGQ_LEN)

#endif
