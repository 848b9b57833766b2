#ifndef SIZEUP_KUBE_OBJECTS_H
#define SIZEUP_KUBE_OBJECTS_H

#include "core/err.h"

/* Hand-written helpers for the few objects and fields sizeup uses, working on cJSON trees:
 * Deployments, Pods, ConfigMaps, Events (events.k8s.io/v1) and Leases (coordination.k8s.io/v1).
 * Readers borrow the tree and return borrowed pointers into it (valid while the tree lives);
 * writers that talk to the API take a kube_client_t and follow client.h's error contract. */

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

#include "kube/client.h"
#include "kube/times.h"

/* ---- metadata ----------------------------------------------------------------------------- */

/* The identity fields of any object, copied (so a watch callback can keep them cheaply). */
struct kube_meta {
    char name[254];
    char ns[64];
    char uid[64];
    char resource_version[64];
    long long generation;
};

/* Fills out from obj's metadata. -EINVAL when metadata.name is missing or a field is too long. */
SIZEUP_MUST_USE int kube_meta_read(const cJSON *obj, struct kube_meta *out /* OUT */);

/* Borrowed string value of metadata.annotations[key] / metadata.labels[key], or NULL. */
const char *kube_annotation(const cJSON *obj, const char *key);
const char *kube_label(const cJSON *obj, const char *key);

/* Sets (value non-NULL) or removes (value NULL) an annotation / label in obj, creating the
 * maps as needed. Returns 0 or -ENOMEM. */
SIZEUP_MUST_USE int kube_set_annotation(cJSON *obj, const char *key, const char *value);
SIZEUP_MUST_USE int kube_set_label(cJSON *obj, const char *key, const char *value);

/* Borrowed child by dotted path ("spec.template.spec"), or NULL. No array indexing. */
const cJSON *kube_path_get(const cJSON *obj, const char *dotted);

/* The finite number / the string at a dotted path, else dflt / NULL (borrowed). */
double kube_path_number(const cJSON *obj, const char *dotted, double dflt);
const char *kube_path_string(const cJSON *obj, const char *dotted);

/* ---- Deployments -------------------------------------------------------------------------- */

struct kube_deploy_status {
    long long generation;
    long long observed_generation;
    long replicas; /* spec.replicas (default 1) */
    long status_replicas;
    long updated;
    long ready;
    long available;
    long unavailable;
    int progress_deadline_exceeded; /* Progressing condition reason ProgressDeadlineExceeded */
    /* ReplicaFailure condition True: the ReplicaSet cannot create pods (reason FailedCreate:
     * a ResourceQuota, a LimitRange or Pod Security admission refused them). */
    int replica_failure;
    char replica_failure_msg[200]; /* its message, control characters dropped */
};

/* Reads spec.replicas, metadata.generation and the status block (missing fields are 0). */
SIZEUP_MUST_USE int kube_deploy_status_read(const cJSON *deploy,
                                            struct kube_deploy_status *out /* OUT */);

enum kube_rollout { KUBE_ROLLOUT_WAITING, KUBE_ROLLOUT_DONE, KUBE_ROLLOUT_FAILED };

/* Judges the rollout as `kubectl rollout status` does: FAILED on ProgressDeadlineExceeded, and
 * (sooner than kubectl, which waits for the deadline) on a ReplicaFailure condition;
 * WAITING while observedGeneration < generation, updated < replicas, status.replicas >
 * updated (old replicas left) or available < updated; else DONE. msg (ERR_LEN, may be NULL)
 * receives kubectl's sentence for the state. */
SIZEUP_MUST_USE int kube_deploy_rollout(const cJSON *deploy, enum kube_rollout *out /* OUT */,
                                        char *msg);

/* Borrowed container object in spec.template.spec.containers: by name, or the first when name
 * is NULL or "". NULL when absent. */
cJSON *kube_deploy_container(const cJSON *deploy, const char *name);

/* "k=v,k2=v2" from Deployment deploy's spec.selector.matchLabels (string values only) into buf
 * (len bytes). Returns 0, -ENOSPC, or -EINVAL when there is no label to select by ("" then). */
int kube_deploy_selector(const cJSON *deploy, char *buf, size_t len);

/* First containerPort of container (borrowed), or 0. */
int kube_container_port(const cJSON *container);

/* Borrowed env value (literal `value` only) of container, or NULL. */
const char *kube_container_env(const cJSON *container, const char *name);

/* ---- Pods --------------------------------------------------------------------------------- */

struct kube_pod_info {
    char name[254];
    char phase[32];  /* Pending, Running, Succeeded, Failed, Unknown */
    char pod_ip[64]; /* "" until assigned */
    int ready;       /* Ready condition True */
    int restarts;    /* restartCount of the container (sum over all when container NULL) */
    int oom_killed;  /* lastState.terminated.reason or state.terminated.reason OOMKilled */
    int deleting;    /* metadata.deletionTimestamp set */
};

/* Reads a Pod; container selects the container status to read (NULL: all containers). */
SIZEUP_MUST_USE int kube_pod_info_read(const cJSON *pod, const char *container,
                                       struct kube_pod_info *out /* OUT */);

/* ---- ConfigMaps --------------------------------------------------------------------------- */

/* Creates or replaces ConfigMap ns/name with exactly the n key/value pairs (borrowed) as its
 * data, and the labels in labels (a cJSON object, borrowed, may be NULL) merged into its
 * labels; owner (borrowed, may be NULL) becomes an ownerReference. Conflicts are retried on a
 * fresh read. */
SIZEUP_MUST_USE int kube_configmap_put(kube_client_t *c, const char *ns, const char *name,
                                       const char *const *keys, const char *const *values, size_t n,
                                       const cJSON *labels, const cJSON *owner, char *err);

/* Borrowed data[key] of a ConfigMap, or NULL. */
const char *kube_configmap_get_key(const cJSON *cm, const char *key);

/* ---- Events ------------------------------------------------------------------------------- */

struct kube_event_spec {
    /* The object the event is about (borrowed): name, namespace, uid, resourceVersion are
     * copied. api_version / kind NULL: its apiVersion / kind fields, else apps/v1 Deployment
     * (list items carry no kind). */
    const cJSON *regarding;
    const char *api_version;
    const char *kind;
    const char *type;                 /* "Normal" or "Warning" */
    const char *reason;               /* CamelCase, e.g. "SweepStarted" */
    const char *action;               /* e.g. "Sweep" */
    const char *note;                 /* human sentence, truncated to 1 KiB */
    const char *reporting_controller; /* e.g. "sizeup.dev/operator" */
    const char *reporting_instance;   /* e.g. the pod name */
};

/* Creates an events.k8s.io/v1 Event in the regarding object's namespace, eventTime now
 * (RFC 3339 with microseconds), name "<regarding>.<unique hex>". */
SIZEUP_MUST_USE int kube_event_emit(kube_client_t *c, const struct kube_event_spec *spec,
                                    char *err);

/* ---- Leases (leader election) ------------------------------------------------------------- */

struct kube_lease {
    char holder[254];
    int duration_s;
    struct timespec acquire_time;
    struct timespec renew_time;
    int transitions;
    char resource_version[64];
};

/* Reads a Lease object. Missing fields are zero / empty. */
SIZEUP_MUST_USE int kube_lease_read(const cJSON *lease, struct kube_lease *out /* OUT */);

/* One leader-election step for identity on Lease ns/name: creates the Lease if missing; renews
 * it when identity holds it; takes it over when it is free (no holder) or expired (renewTime +
 * leaseDurationSeconds in the past, by this machine's clock), bumping leaseTransitions.
 * Writes use the read resourceVersion, so two candidates cannot both win. *leader (OUT) is 1
 * when identity holds the lease after the call. A lost race is not an error (leader = 0). */
SIZEUP_MUST_USE int kube_lease_acquire(kube_client_t *c, const char *ns, const char *name,
                                       const char *identity, int duration_s, int *leader /* OUT */,
                                       char *err);

/* Releases the lease if identity holds it (holderIdentity cleared, so a successor need not wait
 * for expiry). 0 when released or not held. */
SIZEUP_MUST_USE int kube_lease_release(kube_client_t *c, const char *ns, const char *name,
                                       const char *identity, char *err);

/* Copies src (NULL: "") into dst of len bytes. Returns 0, or -EINVAL when it does not fit (dst
 * then unchanged). */
SIZEUP_MUST_USE int kube_copy_field(char *dst, size_t len, const char *src);

#endif
