#ifndef SIZEUP_OPERATOR_JOB_H
#define SIZEUP_OPERATOR_JOB_H

/* One unit of operator work on one Deployment, run on a worker thread with its own Kubernetes
 * client: a sweep requested by a new sizeup.dev/sweep value (START), or the clean-up of a sweep
 * an earlier operator left marked running (RECOVER). A job owns every write it makes to the
 * Deployment, its clone, its ConfigMap and its Events; it never touches another Deployment. */

#include <signal.h>
#include <stddef.h>

#include "core/err.h"
#include "kube/client.h"
#include "operator/annotations.h"
#include "operator/cache.h"
#include "operator/metrics.h"

#define JOB_REPORTER      "sizeup.dev/operator" /* reportingController of our Events */
#define JOB_SIZING_SUFFIX "-sizing"
#define JOB_STATE_KEY     "state.json" /* the ConfigMap key that carries progress */

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
};

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
