/* The Kubernetes platform, resizing in place: a variant that changes only CPU and memory is
 * applied to the running pod through the pods/resize subresource (Kubernetes 1.33 beta, 1.35
 * GA) instead of a rollout, and the sweep waits until the kubelet reports it applied. This file
 * decides whether a variant can be resized, applies it, waits for it (handing over to the
 * rollout applier when the server or the kubelet refuses it), and puts the pod's own resources
 * back at the end in resize mode. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/quantity.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

/* A resize the kubelet keeps in progress with reason Error this long fails the variant: the
 * kubelet retries on every pod sync, so a passing error (a usage spike) gets a few tries. */
#define ERROR_GRACE_MS 5000

/* Template annotation that replaces the pod when its resources cannot be resized back. */
#define ANN_RESTARTED "sizeup.dev/restarted-at"

bool kube__resize_served(kube_client_t *c)
{
    cJSON *d = NULL;
    const cJSON *r, *verb;
    char e2[ERR_LEN];
    bool served = false;

    if (kube_request(c, "GET", "/api/v1", NULL, NULL, 1u << 20, &d, e2) != 0)
        return false;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(d, "resources"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(r, "name"));
        if (!n || strcmp(n, "pods/resize") != 0)
            continue;
        cJSON_ArrayForEach(verb, cJSON_GetObjectItem(r, "verbs"))
        {
            const char *s = cJSON_GetStringValue(verb);
            if (s && strcmp(s, "patch") == 0)
                served = true;
        }
    }
    cJSON_Delete(d);
    return served;
}

/* ---- the pod as it stands ------------------------------------------------------------------ */

static const cJSON *named(const cJSON *arr, const char *name)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, arr)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
        if (n && strcmp(n, name) == 0)
            return c;
    }
    return NULL;
}

/* cpu (millicores) and memory (bytes) of resources[part]; -1 when absent or unparsable. */
static void res_read(const cJSON *res, const char *part, int64_t *cpu, int64_t *mem)
{
    const cJSON *p = cJSON_GetObjectItem(res, part);
    const char *c = cJSON_GetStringValue(cJSON_GetObjectItem(p, "cpu"));
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(p, "memory"));
    if (!c || qty_parse_cpu(c, cpu, NULL) != 0)
        *cpu = -1;
    if (!m || qty_parse_memory(m, mem, NULL) != 0)
        *mem = -1;
}

/* The QoS class the pod's containers give, with container `sized` set to requests = limits =
 * v's (the rules the API server applies: BestEffort when nothing is set, Guaranteed when every
 * container's cpu and memory requests equal their limits, else Burstable). */
static const char *qos_with(const cJSON *spec, const char *sized, const struct variant *v)
{
    static const char *const lists[] = {"containers", "initContainers"};
    bool any = false, guaranteed = true;
    for (int l = 0; l < 2; l++) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(spec, lists[l]))
        {
            const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
            int64_t lc, lm, rc, rm;
            if (l == 0 && n && strcmp(n, sized) == 0) {
                lc = rc = v->cpu_millicores;
                lm = rm = v->memory_bytes;
            } else {
                const cJSON *res = cJSON_GetObjectItem(c, "resources");
                res_read(res, "limits", &lc, &lm);
                res_read(res, "requests", &rc, &rm);
                rc = rc < 0 ? lc : rc; /* requests default to limits */
                rm = rm < 0 ? lm : rm;
            }
            any = any || lc >= 0 || lm >= 0 || rc >= 0 || rm >= 0;
            if (lc < 0 || lm < 0 || rc != lc || rm != lm)
                guaranteed = false;
        }
    }
    return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

/* A Ready pod of the Deployment (resize mode, first variant): the one its variants resize. */
static int pick_pod(struct kplat *k, char *err)
{
    char sel[1024];
    cJSON *list = NULL;
    const cJSON *p;
    int rc;

    if (kube__plat_selector(k->original, sel, sizeof(sel)) != 0)
        return err_set(err, -EINVAL, "deployment %s/%s has no usable matchLabels selector", k->ns,
                       k->name);
    struct kube_list_opts lo = {.label_selector = sel};
    rc = kube_list(k->c, &KUBE_PODS, k->ns, &lo, &list, err);
    if (rc)
        return rc;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(list, "items"))
    {
        struct kube_pod_info pi;
        if (kube_pod_info_read(p, k->container, &pi) != 0)
            continue; /* a pod it cannot name is not one to resize */
        if (pi.ready && !pi.deleting && pi.pod_ip[0] && strcmp(pi.phase, "Running") == 0 &&
            kube_copy_field(k->rz_pod, sizeof(k->rz_pod), pi.name) == 0)
            break;
    }
    cJSON_Delete(list);
    return 0;
}

bool kube__resize_fits(struct kplat *k, const struct variant *v, char *why)
{
    char e2[ERR_LEN], w[ERR_LEN] = "";
    cJSON *pod = NULL;
    bool ok = false;

    if (!k->resize_on)
        goto out;
    /* Resize mode after a step that was rolled out (a worker-count change, an infeasible
     * resize): the pod it resized is gone or going. Its successor, started from the rolled-out
     * template, is the one to resize; keeping the old name would roll out every later step. */
    if (k->mode == KUBE_MODE_RESIZE && k->applier == &kube__rollout)
        k->rz_pod[0] = '\0';
    if (!k->rz_pod[0] && k->mode == KUBE_MODE_RESIZE && pick_pod(k, e2) != 0)
        log_warn("kube.platform.resize", "deployment=%s/%s error=\"%s\"", k->ns, k->name, e2);
    if (!k->rz_pod[0]) {
        snprintf(w, sizeof(w), "no running pod to resize");
        goto out;
    }
    if (kube_get(k->c, &KUBE_PODS, k->ns, k->rz_pod, &pod, e2) != 0) {
        snprintf(w, sizeof(w), "pod %s: %s", k->rz_pod, e2);
        goto out;
    }
    struct kube_pod_info pi;
    if (kube_pod_info_read(pod, k->container, &pi) != 0) {
        snprintf(w, sizeof(w), "pod %s: a status field longer than Kubernetes allows", k->rz_pod);
        goto out;
    }
    const char *uid = cJSON_GetStringValue(kube_path_get(pod, "metadata.uid"));
    const cJSON *spec = cJSON_GetObjectItem(pod, "spec");
    const cJSON *ctr = named(cJSON_GetObjectItem(spec, "containers"), k->container);
    const cJSON *res = cJSON_GetObjectItem(ctr, "resources");
    const char *workers = ctr ? kube_container_env(ctr, k->workers_env) : NULL;
    const char *qos = cJSON_GetStringValue(kube_path_get(pod, "status.qosClass"));
    int64_t lc, lm, rc, rm;
    res_read(res, "limits", &lc, &lm);
    res_read(res, "requests", &rc, &rm);
    if (!pi.ready || pi.deleting || strcmp(pi.phase, "Running") != 0) {
        snprintf(w, sizeof(w), "pod %s is not running and ready", k->rz_pod);
    } else if (!ctr) {
        snprintf(w, sizeof(w), "pod %s has no container %s", k->rz_pod, k->container);
    } else if (!workers || strtoul(workers, NULL, 10) != v->workers) {
        snprintf(w, sizeof(w), "the worker count changes (%s=%s, the variant has %u)",
                 k->workers_env, workers ? workers : "unset", v->workers);
    } else if (lc < 0 || lm < 0 || rc < 0 || rm < 0) {
        /* Requests and limits cannot be removed by a resize: one the pod lacks could not be
         * put back as it was. */
        snprintf(w, sizeof(w), "container %s does not set CPU and memory requests and limits",
                 k->container);
    } else if (!qos || strcmp(qos, qos_with(spec, k->container, v)) != 0) {
        snprintf(w, sizeof(w), "the pod's QoS class would change (%s to %s)", qos ? qos : "unknown",
                 qos_with(spec, k->container, v));
    } else {
        ok = true;
        if (uid && strcmp(k->rz_uid, uid) != 0) {
            /* A pod we have not resized yet: what it runs with now is what restore puts back. */
            if (kube_copy_field(k->rz_uid, sizeof(k->rz_uid), uid) != 0) {
                snprintf(w, sizeof(w), "pod %s: uid too long", k->rz_pod);
                ok = false;
                goto out;
            }
            cJSON_Delete(k->rz_resources);
            k->rz_resources = cJSON_Duplicate(res, 1);
            if (!k->rz_resources)
                ok = false;
        }
    }
out:
    cJSON_Delete(pod);
    if (why)
        snprintf(why, ERR_LEN, "%s", w);
    return ok;
}

/* ---- apply --------------------------------------------------------------------------------- */

/* {"spec":{"containers":[{"name":C,"resources":RES}]}} where RES is res (borrowed, copied), or
 * v's requests = limits when res is NULL. Owned string (cJSON_free), NULL when out of memory. */
static char *resize_body(const char *container, const cJSON *res, const struct variant *v)
{
    cJSON *p = cJSON_CreateObject(), *spec, *ctrs, *c = cJSON_CreateObject(), *r = NULL;
    char *out = NULL, cpu[QTY_LEN], mem[QTY_LEN];

    spec = p ? cJSON_AddObjectToObject(p, "spec") : NULL;
    ctrs = spec ? cJSON_AddArrayToObject(spec, "containers") : NULL;
    if (!ctrs || !c) {
        cJSON_Delete(c);
        goto out;
    }
    if (!cJSON_AddItemToArray(ctrs, c)) {
        cJSON_Delete(c);
        goto out;
    }
    if (!cJSON_AddStringToObject(c, "name", container))
        goto out;
    if (res) {
        r = cJSON_Duplicate(res, 1);
        if (!r)
            goto out;
        if (!cJSON_AddItemToObject(c, "resources", r)) {
            cJSON_Delete(r);
            goto out;
        }
    } else {
        qty_format_cpu(v->cpu_millicores, cpu);
        qty_format_memory(v->memory_bytes, mem);
        r = cJSON_AddObjectToObject(c, "resources");
        cJSON *lim = r ? cJSON_AddObjectToObject(r, "limits") : NULL;
        cJSON *req = r ? cJSON_AddObjectToObject(r, "requests") : NULL;
        if (!lim || !req || !cJSON_AddStringToObject(lim, "cpu", cpu) ||
            !cJSON_AddStringToObject(lim, "memory", mem) ||
            !cJSON_AddStringToObject(req, "cpu", cpu) ||
            !cJSON_AddStringToObject(req, "memory", mem))
            goto out;
    }
    out = cJSON_PrintUnformatted(p);
out:
    cJSON_Delete(p);
    return out;
}

static int patch_resize(kube_client_t *c, const char *ns, const char *pod, const char *body,
                        char *err)
{
    char path[1024];
    size_t n;
    if (kube_path(&KUBE_PODS, ns, pod, path, sizeof(path)) != 0 ||
        (n = strlen(path)) + sizeof("/resize") > sizeof(path))
        return err_set(err, -EINVAL, "bad pod name %.64s", pod);
    memcpy(path + n, "/resize", sizeof("/resize"));
    return kube_request(c, "PATCH", path, body, "application/strategic-merge-patch+json", 0, NULL,
                        err);
}

struct save_ctx {
    struct kplat *k;
    const char *value;
};

/* Saves what the pod ran with in KUBE_ANN_RESOURCES, unless one is there already (a resumed
 * sweep must not save a resized pod as the original). */
static int save_resources(void *ud, cJSON *obj, char *err)
{
    struct save_ctx *s = ud;
    if (kube_annotation(obj, KUBE_ANN_RESOURCES))
        return KUBE_MUTATE_SKIP;
    return kube_set_annotation(obj, KUBE_ANN_RESOURCES, s->value)
               ? err_set(err, -ENOMEM, "out of memory")
               : 0;
}

static int remember_original(struct kplat *k, char *err)
{
    cJSON *o = cJSON_CreateObject();
    char *value = NULL;
    int rc = -ENOMEM;

    if (!o || !cJSON_AddStringToObject(o, "pod", k->rz_pod) ||
        !cJSON_AddStringToObject(o, "uid", k->rz_uid) ||
        !cJSON_AddStringToObject(o, "container", k->container) || !k->rz_resources)
        goto out;
    if (!cJSON_AddItemReferenceToObject(o, "resources", k->rz_resources))
        goto out;
    value = cJSON_PrintUnformatted(o);
    if (!value)
        goto out;
    struct save_ctx s = {k, value};
    rc = kube_update_retry(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, 5, save_resources, &s, NULL,
                           err);
    if (rc == 0)
        k->resources_saved = true;
out:
    if (rc == -ENOMEM)
        err_set(err, rc, "out of memory");
    cJSON_free(value);
    cJSON_Delete(o);
    return rc;
}

/* A 403 from an admission plugin (a ResourceQuota's "exceeded quota", a LimitRange's maximum),
 * not from RBAC, whose message says who "cannot patch resource". */
static bool refused_at_admission(const char *msg)
{
    return msg && strstr(msg, "is forbidden") &&
           !(strstr(msg, " cannot ") && strstr(msg, "resource"));
}

/* The resize could not be done: the variant is rolled out instead. */
static int fall_back(struct kplat *k, const struct variant *v, const char *why,
                     struct platform_failure *fail, char *err)
{
    log_warn("kube.platform.resize_fallback", "deployment=%s/%s pod=%s variant=%s why=\"%s\"",
             k->ns, kube__plat_target(k), k->rz_pod, v->spec, why);
    k->applier = &kube__rollout;
    return kube__rollout.apply(k, v, fail, err);
}

static int resize_apply(void *self, const struct variant *v, struct platform_failure *fail,
                        char *err)
{
    struct kplat *k = self;
    char *body = NULL, why[ERR_LEN];
    int rc = 0;

    memset(fail, 0, sizeof(fail[0]));
    k->v = v;
    k->pod[0] = k->pod_ip[0] = '\0';
    k->pod_kept = false;
    if (k->mode == KUBE_MODE_RESIZE && !k->resources_saved) {
        rc = remember_original(k, err);
        if (rc)
            goto fail;
    }
    body = resize_body(k->container, NULL, v);
    if (!body) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    rc = patch_resize(k->c, k->ns, k->rz_pod, body, err);
    if (rc == -EPERM && refused_at_admission(err)) {
        /* The namespace's quota or LimitRange forbids the variant: a rollout would be refused
         * the same way (and wait for its ready timeout), so the variant fails now. */
        const char *server = strstr(err, "pods \""); /* the server's sentence, no request line */
        fail->kind = PLATFORM_FAIL_APPLY;
        snprintf(fail->reason, sizeof(fail->reason), "refused at admission: %s",
                 server ? server : err);
        log_warn("kube.platform.resize_refused", "deployment=%s/%s pod=%s variant=%s why=\"%s\"",
                 k->ns, kube__plat_target(k), k->rz_pod, v->spec, err);
        goto out;
    }
    if (rc == -EINVAL || rc == -EPERM || rc == -ENOENT) {
        /* Refused (an older server's rule, a QoS class the server computes otherwise), not
         * allowed by RBAC, or the pod is gone: a rollout does it. Without permission there is
         * no point asking again. */
        if (rc == -EPERM)
            k->resize_on = false;
        snprintf(why, sizeof(why), "resize refused: %s", err);
        rc = fall_back(k, v, why, fail, err);
        goto out;
    }
    if (rc)
        goto fail;
    log_info("kube.platform.resized", "deployment=%s/%s pod=%s variant=%s", k->ns,
             kube__plat_target(k), k->rz_pod, v->spec);
    goto out;
fail:
    fail->kind = rc == -ECANCELED ? PLATFORM_FAIL_CANCELLED : PLATFORM_FAIL_APPLY;
    snprintf(fail->reason, sizeof(fail->reason), "resize: %s", err ? err : "failed");
out:
    cJSON_free(body);
    return rc;
}

/* ---- wait ---------------------------------------------------------------------------------- */

struct resize_state {
    char pending[32]; /* PodResizePending's reason ("Infeasible", "Deferred"), "" when none */
    char pending_msg[200];
    bool in_progress;
    char error_msg[200]; /* PodResizeInProgress with reason Error: its message */
    bool applied;        /* the container status reports v's requests and limits */
};

static void resize_state_read(const cJSON *pod, const char *container, const struct variant *v,
                              struct resize_state *s)
{
    const cJSON *c;
    memset(s, 0, sizeof(*s));
    cJSON_ArrayForEach(c, kube_path_get(pod, "status.conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(c, "reason"));
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(c, "message"));
        if (!t || !st || strcmp(st, "True") != 0)
            continue;
        if (strcmp(t, "PodResizePending") == 0) {
            snprintf(s->pending, sizeof(s->pending), "%s", r ? r : "Deferred");
            snprintf(s->pending_msg, sizeof(s->pending_msg), "%s", m ? m : "");
        } else if (strcmp(t, "PodResizeInProgress") == 0) {
            s->in_progress = true;
            if (r && strcmp(r, "Error") == 0)
                snprintf(s->error_msg, sizeof(s->error_msg), "%s", m && *m ? m : "Error");
        }
    }
    const cJSON *cs = named(kube_path_get(pod, "status.containerStatuses"), container);
    int64_t lc, lm, rc, rm;
    res_read(cJSON_GetObjectItem(cs, "resources"), "limits", &lc, &lm);
    res_read(cJSON_GetObjectItem(cs, "resources"), "requests", &rc, &rm);
    s->applied = lc == v->cpu_millicores && lm == v->memory_bytes && rc == v->cpu_millicores &&
                 rm == v->memory_bytes;
}

/* Fills *fail with kind and the formatted reason, err with the same; returns rc. */
__attribute__((format(printf, 5, 6))) static int resize_failed(struct platform_failure *fail,
                                                               enum platform_fail kind, int rc,
                                                               char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail->kind = kind;
    vsnprintf(fail->reason, sizeof(fail->reason), fmt, ap);
    va_end(ap);
    return err_set(err, rc, "%s", fail->reason);
}

/* One look at the pod being resized: its status (*pi) and the resize's state (*s). Returns 0,
 * -ENOENT when the pod is gone, or the API's error. */
static int poll_pod(struct kplat *k, struct kube_pod_info *pi, struct resize_state *s, char *err)
{
    cJSON *pod = NULL;
    int rc = kube_get(k->c, &KUBE_PODS, k->ns, k->rz_pod, &pod, err);

    if (rc == 0) {
        rc = kube_pod_info_read(pod, k->container, pi);
        if (rc)
            err_set(err, rc, "pod %s: a status field longer than Kubernetes allows", k->rz_pod);
        else
            resize_state_read(pod, k->container, k->v, s);
    }
    cJSON_Delete(pod);
    return rc;
}

/* The wait's end without a ready, resized pod: what the resize's last state says. Returns
 * -ETIMEDOUT. */
static int timed_out(const struct kplat *k, const struct resize_state *s,
                     struct platform_failure *fail, char *err)
{
    if (s->pending[0])
        return resize_failed(fail, PLATFORM_FAIL_NEVER_READY, -ETIMEDOUT, err,
                             "resize pending (%s): %s", s->pending, s->pending_msg);
    if (s->in_progress || !s->applied)
        return resize_failed(fail, PLATFORM_FAIL_NEVER_READY, -ETIMEDOUT, err,
                             "resize still in progress when the wait ended%s%s",
                             s->error_msg[0] ? ": " : "", s->error_msg);
    return resize_failed(fail, PLATFORM_FAIL_NEVER_READY, -ETIMEDOUT, err,
                         "pod %s not ready after the resize", k->rz_pod);
}

static int resize_wait(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                       struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    long long t0 = kube__now_ms();
    long long deadline = t0 + (timeout_us > 0 ? timeout_us / 1000 : 60000), error_since = 0;
    struct resize_state s = {0};
    struct kube_pod_info pi = {0};
    int rc = 0;

    memset(fail, 0, sizeof(*fail));
    if (!k->v)
        return err_set(err, -EINVAL, "wait_ready before apply");
    for (;;) {
        if (stop && *stop)
            return resize_failed(fail, PLATFORM_FAIL_CANCELLED, -ECANCELED, err, "%s",
                                 "cancelled while waiting for the resize");
        rc = poll_pod(k, &pi, &s, err);
        if (rc == -ENOENT)
            return resize_failed(fail, PLATFORM_FAIL_DIED, -ECHILD, err,
                                 "pod %s disappeared during the resize", k->rz_pod);
        if (rc == -ECANCELED)
            return resize_failed(fail, PLATFORM_FAIL_CANCELLED, rc, err, "%s",
                                 "cancelled while waiting for the resize");
        if (rc == 0) {
            if (pi.deleting)
                return resize_failed(fail, PLATFORM_FAIL_DIED, -ECHILD, err,
                                     "pod %s deleted during the resize", k->rz_pod);
            if (strcmp(s.pending, "Infeasible") == 0) {
                char why[ERR_LEN];
                snprintf(why, sizeof(why), "resize infeasible: %s", s.pending_msg);
                rc = fall_back(k, k->v, why, fail, err);
                if (rc)
                    return rc;
                long long left = deadline - kube__now_ms();
                return kube__rollout.wait_ready(k, (left > 1000 ? left : 1000) * 1000, stop, fail,
                                                err);
            }
            if (s.error_msg[0] && !error_since)
                error_since = kube__now_ms();
            else if (!s.error_msg[0])
                error_since = 0;
            if (error_since && kube__now_ms() - error_since >= ERROR_GRACE_MS)
                return resize_failed(fail, PLATFORM_FAIL_APPLY, -EIO, err,
                                     "resize not applied by the kubelet: %s", s.error_msg);
            if (!s.pending[0] && !s.in_progress && s.applied && pi.ready && pi.pod_ip[0]) {
                if (kube_copy_field(k->pod, sizeof(k->pod), k->rz_pod) ||
                    kube_copy_field(k->pod_ip, sizeof(k->pod_ip), pi.pod_ip))
                    return resize_failed(fail, PLATFORM_FAIL_APPLY, -EINVAL, err,
                                         "pod %s: name or IP too long", k->rz_pod);
                log_info("kube.platform.ready",
                         "deployment=%s/%s variant=%s pod=%s ip=%s "
                         "resized_ms=%lld",
                         k->ns, kube__plat_target(k), k->v->spec, k->pod, k->pod_ip,
                         kube__now_ms() - t0);
                return 0;
            }
        } else {
            log_warn("kube.platform.poll_failed", "pod=%s/%s error=\"%s\"", k->ns, k->rz_pod,
                     err ? err : "");
        }
        if (kube__now_ms() >= deadline) {
            if (rc)
                return rc; /* the API itself failed: a platform failure, not the variant's */
            return timed_out(k, &s, fail, err);
        }
        if (kube__plat_nap(k->poll_us < 250000 ? k->poll_us : 250000, stop))
            return resize_failed(fail, PLATFORM_FAIL_CANCELLED, -ECANCELED, err, "%s",
                                 "cancelled while waiting for the resize");
    }
}

const struct kube__applier kube__resize = {"resize", resize_apply, resize_wait};

/* ---- restore ------------------------------------------------------------------------------- */

static int drop_saved(void *ud, cJSON *obj, char *err)
{
    (void)ud;
    if (!kube_annotation(obj, KUBE_ANN_RESOURCES))
        return KUBE_MUTATE_SKIP;
    return kube_set_annotation(obj, KUBE_ANN_RESOURCES, NULL) ? err_set(err, -ENOMEM, "oom") : 0;
}

/* The pod could not be resized back: roll the Deployment so that new pods start from its
 * template, which holds the original resources. */
static int replace_pod(struct kplat *k, char *err)
{
    char ts[40], patch[256];
    struct timespec now;
    cJSON *out = NULL;

    clock_gettime(CLOCK_REALTIME, &now);
    if (kube_time_format(&now, 0, ts, sizeof(ts)) != 0)
        return err_set(err, -ENOSPC, "restartedAt: the time does not fit");
    snprintf(patch, sizeof(patch),
             "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"%s\":\"%s\"}}}}}",
             ANN_RESTARTED, ts);
    int rc =
        kube_patch(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, KUBE_PATCH_STRATEGIC, patch, &out, err);
    if (rc == 0) {
        cJSON_Delete(k->last_template);
        k->last_template = cJSON_Duplicate(kube_path_get(out, "spec.template"), 1);
    }
    cJSON_Delete(out);
    return rc;
}

int kube__resize_restore(struct kplat *k, bool *resized, char *err)
{
    cJSON *d = NULL, *saved = NULL, *pod = NULL;
    char *body = NULL;
    int rc;

    if (resized)
        *resized = false;
    rc = kube_get(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, &d, err);
    if (rc == -ENOENT)
        return 0;
    const char *text = rc ? NULL : kube_annotation(d, KUBE_ANN_RESOURCES);
    if (!text)
        goto out;
    saved = cJSON_Parse(text);
    const char *pname = cJSON_GetStringValue(cJSON_GetObjectItem(saved, "pod"));
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItem(saved, "uid"));
    const char *ctr = cJSON_GetStringValue(cJSON_GetObjectItem(saved, "container"));
    const cJSON *res = cJSON_GetObjectItem(saved, "resources");
    if (!pname || !uid || !ctr || !cJSON_IsObject(res)) {
        rc = err_set(err, -EBADMSG,
                     "annotation %s on %s/%s is not what sizeup wrote: check the "
                     "pod's resources by hand",
                     KUBE_ANN_RESOURCES, k->ns, k->name);
        goto out;
    }
    rc = kube_get(k->c, &KUBE_PODS, k->ns, pname, &pod, err);
    const char *puid = rc ? NULL : cJSON_GetStringValue(kube_path_get(pod, "metadata.uid"));
    if (rc == -ENOENT || (rc == 0 && (!puid || strcmp(puid, uid) != 0))) {
        rc = 0; /* replaced since: its successor started from the template */
    } else if (rc == 0) {
        body = resize_body(ctr, res, NULL);
        rc = body ? patch_resize(k->c, k->ns, pname, body, err) : -ENOMEM;
        if (rc == -EINVAL) {
            log_warn("kube.platform.resize_undo_refused", "pod=%s/%s error=\"%s\" action=replace",
                     k->ns, pname, err);
            rc = replace_pod(k, err);
        }
        if (rc == 0 && resized)
            *resized = true;
        if (rc == 0)
            log_info("kube.platform.resized_back", "pod=%s/%s", k->ns, pname);
    }
    if (rc == 0)
        rc = kube_update_retry(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, 8, drop_saved, NULL, NULL,
                               err);
    if (rc == 0)
        k->resources_saved = false;
out:
    if (rc == -ENOMEM)
        err_set(err, rc, "out of memory");
    cJSON_free(body);
    cJSON_Delete(pod);
    cJSON_Delete(saved);
    cJSON_Delete(d);
    return rc == -ENOENT ? 0 : rc;
}
