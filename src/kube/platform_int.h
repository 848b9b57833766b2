#ifndef SIZEUP_KUBE_PLATFORM_INT_H
#define SIZEUP_KUBE_PLATFORM_INT_H

/* Private to the Kubernetes platform's files, one per job:
 *   platform.c          the ops table, creation, facts, prepare, crash recovery
 *   platform_clone.c    the clone's names, the clone object and the per-variant patch
 *   platform_rollout.c  apply, wait for the rollout, the target URL
 *   platform_replicas.c the scale-out: the clone at n replicas, their URLs and usage
 *   platform_usage.c    usage from the pod status and metrics.k8s.io
 *   platform_restore.c  stop a variant, restore (delete the clone / put the template back)
 *   platform_resize.c   apply a variant to a running pod through pods/resize, and undo it
 *   platform_original.c the saved original template: in an annotation, or a ConfigMap when
 *                       the annotations would pass KUBE_ORIGINAL_INLINE_MAX
 *   platform_util.c     the helpers more than one of them needs
 * Calls run one way: platform.c -> restore -> resize -> rollout -> clone, usage; each of them ->
 * platform_util.c, which calls none of them.
 * A variant is applied by one of two appliers (struct kube__applier): a rollout or a resize;
 * apply picks one per variant (kube__resize_fits), and the resize applier hands over to the
 * rollout applier when the server or the kubelet refuses the resize.
 * Every operation runs on the caller's thread with the borrowed client. */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "kube/platform.h"

/* When the Deployment's annotations with the saved template would total more than this, the
 * template goes to a ConfigMap (the API server's limit on all of an object's annotations
 * together is 256 KiB, kubectl apply's last-applied-configuration is one of them, and sizeup's
 * status annotations need the rest). */
#define KUBE_ORIGINAL_INLINE_MAX (200u << 10)

/* One way to apply a variant: apply and wait_ready as in struct platform_ops (self: the struct
 * kplat). */
struct kube__applier {
    const char *name; /* results.json's applied_by: "rollout", "resize" */
    int (*apply)(void *self, const struct variant *v, struct platform_failure *fail, char *err);
    int (*wait_ready)(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                      struct platform_failure *fail, char *err);
};

/* The platform's state (platform.self). */
struct kplat {
    kube_client_t *c;
    enum kube_sweep_mode mode;
    char ns[64];
    char name[254];
    char clone[KUBE_LABEL_VALUE_MAX + 1];       /* kube_platform_clone_name(name) */
    char clone_label[KUBE_LABEL_VALUE_MAX + 1]; /* kube_platform_clone_label(name) */
    char container[254];                        /* resolved at prepare */
    char workers_env[128];
    char target[PLATFORM_URL_LEN]; /* "" for the pod */
    char run_id[64];
    unsigned port;
    int64_t poll_us;
    int64_t stop_timeout_us;

    cJSON *original;      /* the Deployment as prepare read it */
    cJSON *last_template; /* in-place: spec.template after our last patch */
    bool prepared;
    bool clone_exists;
    bool metrics_checked, metrics_served;
    struct platform_facts facts;
    bool have_facts;

    const struct variant *v;
    char pod[254];
    char pod_ip[64];

    /* The scale-out (platform_replicas.c): the clone's replica count the next apply asks for (1,
     * or a scale-out's n), and the ready pods wait_ready found, pods[0] the one in pod. */
    unsigned replicas;
    size_t nready;
    char pods[PLATFORM_MAX_REPLICAS][254];
    char pod_ips[PLATFORM_MAX_REPLICAS][64];
    struct kube__rep_begin {
        int restarts;
        int64_t mem;
        bool sample;
    } rep_begin[PLATFORM_MAX_REPLICAS]; /* usage_begin's snapshot of each replica */

    long long t_begin_ms;
    struct timespec t_begin_wall; /* the same instant, for metrics.k8s.io's timestamps */
    int restarts_begin;
    double cores_begin;
    int64_t mem_begin;
    bool sample_begin;

    bool drift;
    char drift_msg[ERR_LEN];

    /* In-place resize (platform_resize.c). */
    const struct kube__applier *applier; /* how the current variant is applied */
    bool want_resize;                    /* resize mode, or clone mode without resize_off */
    bool resize_on;                      /* want_resize and the server serves pods/resize */
    bool pod_kept;                       /* clone: the last variant's pod left running */
    bool resources_saved;                /* resize mode: KUBE_ANN_RESOURCES is on the Deployment */
    char rz_pod[254];                    /* the pod a resize applies to: the last ready one */
    cJSON *rz_resources;                 /* its container's resources before our first resize */
    char rz_uid[64];

    /* The original template's copy (platform_original.c). */
    char orig_sha[65]; /* SHA-256 of the template the ConfigMap holds; "" when inline */
    bool orig_in_cm;   /* restore read it from the ConfigMap: delete that after */
};

/* ---- shared helpers (platform_util.c) ---- */

/* The Deployment the variants run in: the clone, or the original in place. */
const char *kube__plat_target(const struct kplat *k);

void kube__plat_sleep_us(int64_t us);

/* "k=v,k2=v2" from Deployment d's spec.selector.matchLabels into buf (len bytes). Returns 0,
 * -ENOSPC, or -EINVAL when there is no label to select by. */
int kube__plat_selector(const cJSON *d, char *buf, size_t len);

/* True when Deployment d is the clone sizeup made of k's Deployment: its clone-of label is
 * k->clone_label and its clone-of annotation, when present, names the Deployment in full (a
 * shortened label alone could in principle be shared by two long names). Borrows d. */
bool kube__plat_is_our_clone(const struct kplat *k, const cJSON *d);

/* Sleeps us in 50 ms slices; 1 when *stop (may be NULL) was raised. */
int kube__plat_nap(int64_t us, volatile sig_atomic_t *stop);

/* Scales the clone to zero and waits for its pods to go (stop_variant without the resize
 * shortcut). */
int kube__plat_scale_down(struct kplat *k, char *err);

/* ---- platform_clone.c ---- */

/* The clone of k->original with v applied. Owned result, NULL on allocation failure. */
cJSON *kube__plat_build_clone(const struct kplat *k, const struct variant *v);

/* The strategic merge patch that applies v: an owned string (free with cJSON_free), NULL on
 * allocation failure. */
char *kube__plat_variant_patch(const struct kplat *k, const struct variant *v);

/* ---- platform_rollout.c: the platform_ops of the same names ---- */

extern const struct kube__applier kube__rollout;

int kube__plat_apply(void *self, const struct variant *v, struct platform_failure *fail, char *err);
int kube__plat_wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                          struct platform_failure *fail, char *err);
int kube__plat_target_url(void *self, char *buf, size_t len, char *err);

/* "http://IP:PORT" (IPv6 in brackets) into buf (len bytes); -ENOSPC when it does not fit. */
int kube__plat_pod_url(const char *ip, unsigned port, char *buf, size_t len, char *err);

/* ---- platform_replicas.c: the scale-out's platform_ops ---- */

int kube__plat_apply_replicas(void *self, const struct variant *v, unsigned n,
                              struct platform_failure *fail, char *err);
int kube__plat_target_urls(void *self, char (*urls)[PLATFORM_URL_LEN], size_t max, size_t *n,
                           char *err);
/* usage_begin / usage_end over every ready replica (one: the single-pod operations). */
int kube__plat_set_usage_begin(void *self, char *err);
int kube__plat_set_usage_end(void *self, struct platform_usage *out, char *err);

/* ---- platform_usage.c ---- */

int kube__plat_usage_begin(void *self, char *err);
/* The shortest measured window that holds a whole metrics.k8s.io window wherever the scrapes
 * fall (struct platform_facts usage_window_us); 0 when metrics.k8s.io is not served. */
int64_t kube__plat_usage_window_us(struct kplat *k);
int kube__plat_usage_end(void *self, struct platform_usage *out, char *err);

/* ---- platform_restore.c ---- */

int kube__plat_stop_variant(void *self, char *err);
int kube__plat_restore(void *self, char *err);

/* A kube_update_retry mutator (ud: the struct kplat) that puts the template saved in
 * KUBE_ANN_ORIGINAL back and drops the annotation; when k->last_template is set and the live
 * template differs from it, only sizeup's own fields go back and k->drift says so. */
int kube__plat_restore_template(void *ud, cJSON *obj, char *err);

/* ---- platform_original.c ---- */

/* "<name>-sizeup-original" into buf. -ENAMETOOLONG past 253 characters. */
int kube__orig_cm_name(const struct kplat *k, char *buf, size_t len);

/* Before the template is saved (in-place and resize): when k->original's annotations with its
 * template would pass KUBE_ORIGINAL_INLINE_MAX and it is not saved yet, writes it to the ConfigMap
 * (created, or replaced when it is sizeup's) and records its hash. */
int kube__orig_prepare(struct kplat *k, char *err);

/* The KUBE_ANN_ORIGINAL value for Deployment d's template (d borrowed): its JSON, or the
 * ConfigMap reference; -EAGAIN when a large template is not the one kube__orig_prepare copied.
 * *value is owned (free with free()). */
int kube__orig_value(struct kplat *k, const cJSON *d, char **value /* OUT */, char *err);

/* The saved template from the annotation's value (borrowed): parsed inline, or read from the
 * ConfigMap, refused when its SHA-256 differs. *tpl owned (cJSON_Delete). */
int kube__orig_load(struct kplat *k, const char *saved, cJSON **tpl /* OUT */, char *err);

/* After a restore that read the ConfigMap: deletes it (gone already is success). */
int kube__orig_cleanup(struct kplat *k, char *err);

/* ---- platform_resize.c ---- */

extern const struct kube__applier kube__resize;

/* True when the API server lists pods/resize with the patch verb in its discovery. */
bool kube__resize_served(kube_client_t *c);

/* True when v can be applied to k->rz_pod by a resize; otherwise why (ERR_LEN, may be NULL)
 * says why not ("" when resizing is not in use at all). */
bool kube__resize_fits(struct kplat *k, const struct variant *v, char *why);

/* Resizes the pod named in the Deployment's KUBE_ANN_RESOURCES back to the resources saved
 * there (when it still runs) and drops the annotation; nothing to do is success. When the
 * server refuses the resize (an older server refusing a memory-limit decrease), the pod is
 * replaced instead: the template gets a restart annotation (and k->last_template follows it,
 * so the template restore that must follow puts the exact original back). *resized (may be
 * NULL) is set when a pod was resized or replaced. */
int kube__resize_restore(struct kplat *k, bool *resized /* OUT */, char *err);

#endif
