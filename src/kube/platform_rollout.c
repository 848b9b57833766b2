/* The Kubernetes platform, rolling out a variant: apply (create the clone, or patch it or the
 * Deployment in place), wait until the rollout is complete as `kubectl rollout status` judges
 * it and a variant pod is Ready (or say why it never will be), and the target URL. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

int kube__plat_apply(void *self, const struct variant *v, struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    cJSON *out = NULL, *obj = NULL;
    char *patch = NULL;
    int rc = 0;

    memset(fail, 0, sizeof(*fail));
    k->v = v;
    k->pod[0] = k->pod_ip[0] = '\0';
    if (!k->prepared) {
        rc = err_set(err, -EINVAL, "apply before prepare");
        goto fail;
    }
    if (k->pod_kept) {
        /* The last variant's pod was left running for a resize that is not coming: a rollout
         * must not share the node with it. */
        rc = kube__plat_scale_down(k, err);
        if (rc)
            goto fail;
    }
    if (k->mode == KUBE_MODE_CLONE && !k->clone_exists) {
        obj = kube__plat_build_clone(k, v);
        if (!obj) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto fail;
        }
        rc = kube_create(k->c, &KUBE_DEPLOYMENTS, k->ns, obj, NULL, err);
        if (rc == 0) {
            k->clone_exists = true;
            log_info("kube.platform.clone_created", "deployment=%s/%s variant=%s", k->ns, k->clone,
                     v->spec);
            goto out;
        }
        if (rc != -EEXIST)
            goto fail;
        k->clone_exists = true; /* created by a racing attempt: patch it like any other */
    }
    patch = kube__plat_variant_patch(k, v);
    if (!patch) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    rc = kube_patch(k->c, &KUBE_DEPLOYMENTS, k->ns, kube__plat_target(k), KUBE_PATCH_STRATEGIC,
                    patch, &out, err);
    if (rc)
        goto fail;
    if (k->mode != KUBE_MODE_CLONE) {
        cJSON_Delete(k->last_template);
        k->last_template = cJSON_Duplicate(kube_path_get(out, "spec.template"), 1);
    }
    log_info("kube.platform.applied", "deployment=%s/%s variant=%s", k->ns, kube__plat_target(k),
             v->spec);
    goto out;
fail:
    fail->kind = rc == -ECANCELED ? PLATFORM_FAIL_CANCELLED : PLATFORM_FAIL_APPLY;
    snprintf(fail->reason, sizeof(fail->reason), "%s", err ? err : "apply failed");
out:
    cJSON_Delete(obj);
    cJSON_Delete(out);
    cJSON_free(patch);
    return rc;
}

struct pod_scan {
    int variant_pods;
    bool ready;
    char pod[254];
    char ip[64];
    size_t nready; /* ready variant pods with an address, the first PLATFORM_MAX_REPLICAS kept */
    char pods[PLATFORM_MAX_REPLICAS][254];
    char ips[PLATFORM_MAX_REPLICAS][64];
    int restarts; /* most of any variant pod */
    bool oom;
    bool unschedulable;
    char why[160];
};

static int pod_unschedulable(const cJSON *pod, char *why, size_t len)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, kube_path_get(pod, "status.conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(c, "reason"));
        if (t && s && r && strcmp(t, "PodScheduled") == 0 && strcmp(s, "False") == 0 &&
            strcmp(r, "Unschedulable") == 0) {
            const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(c, "message"));
            snprintf(why, len, "%s", m ? m : "unschedulable");
            return 1;
        }
    }
    return 0;
}

/* Looks at the pods of deployment d that run variant v. */
static int scan_pods(struct kplat *k, const cJSON *d, struct pod_scan *s, char *err)
{
    char sel[1024];
    cJSON *list = NULL;
    const cJSON *p;
    int rc;

    memset(s, 0, sizeof(*s));
    if (kube__plat_selector(d, sel, sizeof(sel)) != 0)
        return err_set(err, -EINVAL, "deployment %s/%s has no usable matchLabels selector", k->ns,
                       kube__plat_target(k));
    struct kube_list_opts lo = {.label_selector = sel};
    rc = kube_list(k->c, &KUBE_PODS, k->ns, &lo, &list, err);
    if (rc)
        return rc;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(list, "items"))
    {
        const char *var = kube_annotation(p, KUBE_ANN_VARIANT);
        struct kube_pod_info pi;
        if (!var || strcmp(var, k->v->spec) != 0)
            continue;
        if (kube_pod_info_read(p, k->container, &pi) != 0 || pi.deleting)
            continue; /* one it cannot name counts as not there */
        s->variant_pods++;
        if (pi.restarts > s->restarts)
            s->restarts = pi.restarts;
        if (pi.oom_killed)
            s->oom = true;
        if (pod_unschedulable(p, s->why, sizeof(s->why)))
            s->unschedulable = true;
        if (pi.ready && pi.pod_ip[0] && !s->ready) {
            s->ready = kube_copy_field(s->pod, sizeof(s->pod), pi.name) == 0 &&
                       kube_copy_field(s->ip, sizeof(s->ip), pi.pod_ip) == 0;
        }
        if (pi.ready && pi.pod_ip[0] && s->nready < PLATFORM_MAX_REPLICAS &&
            kube_copy_field(s->pods[s->nready], sizeof(s->pods[0]), pi.name) == 0 &&
            kube_copy_field(s->ips[s->nready], sizeof(s->ips[0]), pi.pod_ip) == 0)
            s->nready++;
    }
    cJSON_Delete(list);
    return 0;
}

static void describe_failure(const struct pod_scan *s, const char *rollout_msg,
                             struct platform_failure *fail)
{
    if (s->oom) {
        fail->kind = PLATFORM_FAIL_OOM;
        snprintf(fail->reason, sizeof(fail->reason), "OOMKilled at the memory limit (%d restarts)",
                 s->restarts);
    } else if (s->unschedulable) {
        fail->kind = PLATFORM_FAIL_UNSCHEDULABLE;
        snprintf(fail->reason, sizeof(fail->reason), "unschedulable: %s", s->why);
    } else if (s->restarts > 0) {
        fail->kind = PLATFORM_FAIL_DIED;
        snprintf(fail->reason, sizeof(fail->reason), "crash-looping (%d restarts)", s->restarts);
    } else {
        fail->kind = PLATFORM_FAIL_NEVER_READY;
        snprintf(fail->reason, sizeof(fail->reason), "%s", rollout_msg);
    }
}

/* The wait for the rollout ends cancelled: fail says so; returns rc. */
static int cancelled(struct platform_failure *fail, int rc)
{
    fail->kind = PLATFORM_FAIL_CANCELLED;
    snprintf(fail->reason, sizeof(fail->reason), "cancelled while waiting for rollout");
    return rc;
}

/* One look at the Deployment: its status (*ds), the rollout's state (*state, msg saying why
 * when it failed) and its pods (*s). Returns 0 or the API's error. */
static int poll_rollout(struct kplat *k, struct pod_scan *s, struct kube_deploy_status *ds,
                        enum kube_rollout *state, char *msg, char *err)
{
    cJSON *d = NULL;
    int rc = kube_get(k->c, &KUBE_DEPLOYMENTS, k->ns, kube__plat_target(k), &d, err);

    if (rc == 0)
        rc = kube_deploy_status_read(d, ds);
    if (rc == 0) {
        rc = kube_deploy_rollout(d, state, msg);
        if (rc == 0)
            rc = scan_pods(k, d, s, err);
    }
    cJSON_Delete(d);
    return rc;
}

/* What one look says: every one of the want replicas ready (the platform takes their
 * addresses), or a rollout that failed or pods that keep dying, not worth waiting out the
 * timeout. *decided when the wait ends here, with the returned result. */
static int judge_rollout(struct kplat *k, const struct pod_scan *s,
                         const struct kube_deploy_status *ds, enum kube_rollout state,
                         const char *msg, size_t want, struct platform_failure *fail, bool *decided,
                         char *err)
{
    *decided = true;
    /* A scale-out's n replicas: every one of them ready, each with its address. */
    if (state == KUBE_ROLLOUT_DONE && s->ready && s->nready >= want) {
        if (kube_copy_field(k->pod, sizeof(k->pod), s->pod) ||
            kube_copy_field(k->pod_ip, sizeof(k->pod_ip), s->ip))
            return err_set(err, -EINVAL, "pod %s: name or IP too long", s->pod);
        /* pods[0] is pod: both are the first ready pod the scan met. */
        memcpy(k->pods, s->pods, sizeof(k->pods));
        memcpy(k->pod_ips, s->ips, sizeof(k->pod_ips));
        k->nready = want;
        log_info("kube.platform.ready", "deployment=%s/%s variant=%s pod=%s ip=%s replicas=%zu",
                 k->ns, kube__plat_target(k), k->v->spec, k->pod, k->pod_ip, want);
        return 0;
    }
    if (state == KUBE_ROLLOUT_FAILED) {
        describe_failure(s, msg, fail);
        /* Pods refused at admission (quota, LimitRange, Pod Security): never started. */
        if (ds->replica_failure)
            fail->kind = PLATFORM_FAIL_APPLY;
        return err_set(err, -ETIMEDOUT, "%s", fail->reason);
    }
    /* Not worth waiting out the timeout: a pod that keeps dying will not serve. */
    if ((s->oom && s->restarts >= 2) || s->restarts >= 3) {
        describe_failure(s, msg, fail);
        return err_set(err, -ECHILD, "%s", fail->reason);
    }
    *decided = false;
    return 0;
}

int kube__plat_wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                          struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    long long deadline = kube__now_ms() + (timeout_us > 0 ? timeout_us / 1000 : 60000);
    char msg[ERR_LEN] = "rollout did not start";
    struct pod_scan s = {0};
    int rc = 0;

    size_t want = k->replicas > 1 ? k->replicas : 1;

    memset(fail, 0, sizeof(*fail));
    k->nready = 0;
    if (!k->v)
        return err_set(err, -EINVAL, "wait_ready before apply");
    for (;;) {
        enum kube_rollout state = KUBE_ROLLOUT_WAITING;
        struct kube_deploy_status ds = {0};
        bool decided = false;
        if (stop && *stop)
            return cancelled(fail, err_set(err, -ECANCELED, "cancelled"));
        rc = poll_rollout(k, &s, &ds, &state, msg, err);
        if (rc == -ECANCELED)
            return cancelled(fail, rc);
        if (rc == 0) {
            int r = judge_rollout(k, &s, &ds, state, msg, want, fail, &decided, err);
            if (decided)
                return r;
        } else {
            log_warn("kube.platform.poll_failed", "deployment=%s/%s error=\"%s\"", k->ns,
                     kube__plat_target(k), err ? err : "");
        }
        if (kube__now_ms() >= deadline) {
            if (rc) {
                /* The API itself failed: a platform failure, not the variant's. */
                return rc;
            }
            describe_failure(&s, msg, fail);
            if (fail->kind == PLATFORM_FAIL_NEVER_READY && state == KUBE_ROLLOUT_DONE)
                snprintf(fail->reason, sizeof(fail->reason),
                         want > 1 ? "rolled out, but %zu of %zu pods ready"
                                  : "rolled out, but no pod ready",
                         s.nready, want);
            return err_set(err, -ETIMEDOUT, "%s", fail->reason);
        }
        if (kube__plat_nap(k->poll_us, stop))
            return cancelled(fail, err_set(err, -ECANCELED, "cancelled"));
    }
}

int kube__plat_pod_url(const char *ip, unsigned port, char *buf, size_t len, char *err)
{
    int n = snprintf(buf, len, strchr(ip, ':') ? "http://[%s]:%u" : "http://%s:%u", ip, port);
    return n < 0 || (size_t)n >= len ? err_set(err, -ENOSPC, "URL too long") : 0;
}

int kube__plat_target_url(void *self, char *buf, size_t len, char *err)
{
    struct kplat *k = self;
    int n;
    if (!k->target[0])
        return k->pod_ip[0] ? kube__plat_pod_url(k->pod_ip, k->port, buf, len, err)
                            : err_set(err, -ENOENT, "no ready pod");
    n = snprintf(buf, len, "%s", k->target);
    return n < 0 || (size_t)n >= len ? err_set(err, -ENOSPC, "URL too long") : 0;
}

const struct kube__applier kube__rollout = {"rollout", kube__plat_apply, kube__plat_wait_ready};
