#ifndef SIZEUP_OPERATOR_LOADJOB_H
#define SIZEUP_OPERATOR_LOADJOB_H

/* Load from several pods: a load source (src/sweep/load_source.h) that runs each load run as
 * a Kubernetes Indexed Job of N `sizeup loadtest` workers (src/cli/loadtest_worker.h) in the
 * operator's own namespace, each sending its share to the same target from one shared start,
 * and merges their results exactly (src/load/merge.h).
 *
 * Per load run:
 *     create the Job (completionMode Indexed, parallelism = completions = N, backoffLimit 0,
 *     ownerReference to the operator's pod, ttlSecondsAfterFinished, restricted securityContext)
 *     -> follow its pods by the Job's controller-uid label and ownerReference
 *     -> from the shared start's end on, GET http://<pod IP read from the API>:PORT/result
 *     -> merge the N results -> delete the Job (Background: its pods with it)
 * A worker that fails, is evicted (its pod deleted), starts late or does not report in time
 * makes the run return LOAD_SOURCE_EINCOMPLETE naming its index; nothing partial is merged. */

#include <signal.h>
#include <stdbool.h>

#include "core/err.h"
#include <cjson/cJSON.h>

#include "kube/client.h"
#include "sweep/load_source.h"

#define LOADJOB_MAX_GENERATORS  100
#define LOADJOB_AUTO_GENERATORS 3 /* when a step is generator-limited and none were asked for */
#define LOADJOB_RESULT_PORT     9090
/* One worker's result document: its scopes and up to 120 series points, each with its encoded
 * histogram (a few KiB each for a wide spread of latencies). */
#define LOADJOB_RESULT_MAX      (16u << 20)
#define LOADJOB_TTL_S           300  /* a Job we could not delete goes by itself */
#define LOADJOB_LATE_MIN_S      1.0  /* a worker may start this late (or 5% of the run) */
#define LOADJOB_REPORT_WAIT_S   30   /* after the planned end, for every result */
#define LOADJOB_START_DELAY_S   15.0 /* default: creation to the shared start */
#define LOADJOB_PROFILE_ENV     "SIZEUP_PROFILE"
#define LOADJOB_LABEL_COMPONENT "sizeup.dev/component"
#define LOADJOB_COMPONENT       "load-generator"
#define LOADJOB_LABEL_FOR       "sizeup.dev/generator-for" /* the swept Deployment's label value */

/* Where the generator pods come from: the chart passes these to the operator. */
struct loadjob_config {
    kube_client_t *client;       /* borrowed; the sweep's own client */
    const char *ns;              /* the operator's namespace: the Jobs live there */
    const char *image;           /* the operator's own image */
    const char *pull_secrets;    /* comma-separated Secret names, or NULL */
    const char *service_account; /* the generators' ServiceAccount (no token, no RBAC) */
    const char *owner_pod;       /* the operator's pod: owner of every Job; NULL: none */
    const char *owner_uid;
    const char *cpu, *memory; /* each generator pod's limits (= requests) */
    const char *for_label;    /* LOADJOB_LABEL_FOR value; may be NULL */
    unsigned generators;      /* N, 1..LOADJOB_MAX_GENERATORS */
    double start_delay_s;     /* 0: LOADJOB_START_DELAY_S */
    /* Called with each worker's result as it is merged (may be NULL): an observer, e.g. a test
     * that checks the merge against its parts. Borrows part for the call. */
    void (*on_part)(void *ud, unsigned index, const struct load_result *part);
    void *on_part_ud;
};

/* Fills the environment-given fields of c (image, pull secrets, service account, owner, limits,
 * start delay, namespace) from SIZEUP_GENERATOR_IMAGE, SIZEUP_GENERATOR_PULL_SECRETS,
 * SIZEUP_GENERATOR_SERVICE_ACCOUNT, SIZEUP_GENERATOR_CPU, SIZEUP_GENERATOR_MEMORY,
 * SIZEUP_GENERATOR_START_DELAY, POD_NAME, POD_UID and POD_NAMESPACE (the strings are borrowed
 * from the environment). Returns 0, or -ENOTSUP when no image or namespace is configured (the
 * operator then cannot run generator pods; err says which variable is missing). */
int loadjob_config_from_env(struct loadjob_config *c, char *err);

/* A Job load source for c (borrowed; must outlive the source). Returns 0 and fills *out (free
 * with out->ops->free(out->self)), -EINVAL for a bad configuration, -ENOMEM. */
int loadjob_source_new(const struct loadjob_config *c, struct load_source *out /* OUT */,
                       char *err);

/* Deletes every Job the operator's generators left in c->ns (by label), e.g. after the operator
 * was killed mid-run. Returns 0 or the first error; *deleted (may be NULL) counts them. */
int loadjob_delete_leftovers(kube_client_t *client, const char *ns, unsigned *deleted /* OUT */,
                             char *err);

/* GETs worker's result from http://IP:LOADJOB_RESULT_PORT/result (at most LOADJOB_RESULT_MAX
 * bytes). Returns 0 with *body owned (free with free()), -EAGAIN when the worker does not answer
 * yet (still running), another negative errno with err otherwise. */
int loadjob_result_fetch(const char *ip, char **body, char *err);

/* Parses worker idx's result document (len bytes of outside input, from its pod): it must name
 * worker idx of n, have started at most late_max s late, carry a result report_json_parse
 * accepts, and not be interrupted. Returns 0 with *out filled (free with load_result_free), or
 * -EINVAL with why (ERR_LEN) saying what is wrong and *out left freed. Borrows body. */
int loadjob_result_parse(const char *body, size_t len, unsigned idx, unsigned n, double late_max,
                         struct load_result *out /* OUT */, char *why);

/* Why generator Job job (uid) in ns cannot run its pods, as the API says: a FailureTarget or
 * Failed condition that holds on the Job (its reason and message), else the latest Warning
 * FailedCreate Event the Job controller wrote on it ("Error creating: <the API server's
 * message>": Pod Security, a ResourceQuota, a LimitRange refused the pod). Returns 0 with why
 * (ERR_LEN) set, "" when nothing says so, or a negative error with err. Events the operator may
 * not list (403) are skipped and *no_events (in and out) set, so they are not asked again. */
int loadjob_refusal(kube_client_t *c, const char *ns, const char *job, const char *uid,
                    bool *no_events, char *why /* OUT */, char *err);

/* The profile's load as the JSON a worker reads from LOADJOB_PROFILE_ENV (users or rate,
 * stages, duration, warm-up, timeout, requests). Owned string (free()), NULL on no memory.
 * Borrows p. */
char *loadjob_profile_json(const struct profile *p);

/* The Job object for one run (for tests): the shared start at start_at (Unix seconds).
 * Owned cJSON (cJSON_Delete), NULL on no memory. Borrows everything. */
cJSON *loadjob_job_object(const struct loadjob_config *c, const struct load_opts *o,
                          double start_at);

#endif
