/* The Kubernetes platform: a variant is a Deployment pod template rolled out through the API,
 * in a clone (default) or in place. See platform.h for the contract. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/quantity.h"
#include "kube/internal.h"
#include "kube/objects.h"
#include "kube/platform.h"

struct kplat {
    kube_client_t *c;
    enum kube_sweep_mode mode;
    char ns[64];
    char name[254];
    char clone[264];
    char container[254]; /* resolved at prepare */
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

    long long t_begin_ms;
    int restarts_begin;
    double cores_begin;
    int64_t mem_begin;
    bool sample_begin;

    bool drift;
    char drift_msg[ERR_LEN];
};

/* The Deployment the variants run in. */
static const char *target_name(const struct kplat *k)
{
    return k->mode == KUBE_MODE_CLONE ? k->clone : k->name;
}

static int copy_str(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= len)
        return -EINVAL;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
    return 0;
}

int kube_parse_cores(const char *s, double *cores)
{
    char *end;
    double v;
    if (!s || !*s)
        return -EINVAL;
    v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0)
        return -EINVAL;
    if (strcmp(end, "") == 0)
        *cores = v;
    else if (strcmp(end, "m") == 0)
        *cores = v / 1e3;
    else if (strcmp(end, "u") == 0)
        *cores = v / 1e6;
    else if (strcmp(end, "n") == 0)
        *cores = v / 1e9;
    else if (strcmp(end, "k") == 0)
        *cores = v * 1e3;
    else
        return -EINVAL;
    return 0;
}

static void sleep_us(int64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

/* ---- facts -------------------------------------------------------------------------------- */

static int op_facts(void *self, struct platform_facts *out, char *err)
{
    struct kplat *k = self;
    cJSON *ver = NULL, *nodes = NULL;
    char e2[ERR_LEN];
    (void)err;

    if (k->have_facts) {
        *out = k->facts;
        return 0;
    }
    memset(&k->facts, 0, sizeof(k->facts));
    k->facts.limits_enforced = true;
    snprintf(k->facts.limits_note, sizeof(k->facts.limits_note),
             "limits enforced by the kubelet (requests = limits while measuring)");
    /* The load generator runs in the operator's pod, normally on another node. */
    k->facts.load_shares_host = false;
    const char *gv = NULL;
    if (kube_request(k->c, "GET", "/version", NULL, NULL, 65536, &ver, e2) == 0)
        gv = cJSON_GetStringValue(cJSON_GetObjectItem(ver, "gitVersion"));
    /* Node capacity needs list on nodes; without it the facts stay unknown (0). */
    if (kube_request(k->c, "GET", "/api/v1/nodes", NULL, NULL, KUBE_BODY_MAX_LIST, &nodes, e2) ==
        0) {
        const cJSON *n;
        cJSON_ArrayForEach(n, cJSON_GetObjectItem(nodes, "items"))
        {
            const char *cpu = cJSON_GetStringValue(kube_path_get(n, "status.allocatable.cpu"));
            const char *mem = cJSON_GetStringValue(kube_path_get(n, "status.allocatable.memory"));
            double cores;
            int64_t bytes;
            if (cpu && kube_parse_cores(cpu, &cores) == 0 &&
                (int64_t)(cores * 1000) > k->facts.host_millicores)
                k->facts.host_millicores = (int64_t)(cores * 1000);
            if (mem && qty_parse_memory(mem, &bytes, NULL) == 0 &&
                bytes > k->facts.host_memory_bytes)
                k->facts.host_memory_bytes = bytes;
        }
    }
    snprintf(k->facts.machine, sizeof(k->facts.machine), "Kubernetes %s, Deployment %s/%s (%s)",
             gv ? gv : "(version unknown)", k->ns, k->name,
             k->mode == KUBE_MODE_CLONE ? "clone" : "in-place");
    cJSON_Delete(ver);
    cJSON_Delete(nodes);
    k->have_facts = true;
    *out = k->facts;
    return 0;
}

/* ---- building the variant ----------------------------------------------------------------- */

/* Sets obj[key] to a string, replacing what was there. */
static int put_str(cJSON *obj, const char *key, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    return cJSON_AddStringToObject(obj, key, v) ? 0 : -ENOMEM;
}

static cJSON *obj_child(cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(v))
        return v;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    return cJSON_AddObjectToObject(obj, key);
}

/* Writes the variant's limits = requests into a resources object. */
static int set_resources(cJSON *res, const struct variant *v)
{
    char cpu[QTY_LEN], mem[QTY_LEN];
    qty_format_cpu(v->cpu_millicores, cpu);
    qty_format_memory(v->memory_bytes, mem);
    cJSON *lim = obj_child(res, "limits"), *req = obj_child(res, "requests");
    if (!lim || !req || put_str(lim, "cpu", cpu) || put_str(lim, "memory", mem) ||
        put_str(req, "cpu", cpu) || put_str(req, "memory", mem))
        return -ENOMEM;
    return 0;
}

/* Edits a container in place: the worker env var (replacing any valueFrom) and resources. */
static int set_container(cJSON *ctr, const char *env_name, const struct variant *v)
{
    char workers[16];
    cJSON *env = cJSON_GetObjectItemCaseSensitive(ctr, "env"), *e;
    snprintf(workers, sizeof(workers), "%u", v->workers);
    if (!cJSON_IsArray(env)) {
        cJSON_DeleteItemFromObjectCaseSensitive(ctr, "env");
        env = cJSON_AddArrayToObject(ctr, "env");
        if (!env)
            return -ENOMEM;
    }
    int i = 0;
    cJSON_ArrayForEach(e, env)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
        if (n && strcmp(n, env_name) == 0)
            break;
        i++;
    }
    if (e)
        cJSON_DeleteItemFromArray(env, i);
    e = cJSON_CreateObject();
    if (!e || !cJSON_AddStringToObject(e, "name", env_name) ||
        !cJSON_AddStringToObject(e, "value", workers)) {
        cJSON_Delete(e);
        return -ENOMEM;
    }
    cJSON_AddItemToArray(env, e);
    cJSON *res = obj_child(ctr, "resources");
    return res ? set_resources(res, v) : -ENOMEM;
}

/* The strategic merge patch for a variant: the container's env and resources (merged by name,
 * so other containers and env vars stay), the variant's template annotation, and for the
 * clone one replica. */
static char *variant_patch(const struct kplat *k, const struct variant *v)
{
    cJSON *p = cJSON_CreateObject(), *spec, *tpl, *md, *ann, *pspec, *ctrs, *ctr;
    char *out = NULL;
    if (!p)
        return NULL;
    spec = cJSON_AddObjectToObject(p, "spec");
    tpl = spec ? cJSON_AddObjectToObject(spec, "template") : NULL;
    md = tpl ? cJSON_AddObjectToObject(tpl, "metadata") : NULL;
    ann = md ? cJSON_AddObjectToObject(md, "annotations") : NULL;
    pspec = tpl ? cJSON_AddObjectToObject(tpl, "spec") : NULL;
    ctrs = pspec ? cJSON_AddArrayToObject(pspec, "containers") : NULL;
    ctr = cJSON_CreateObject();
    if (!ann || !ctrs || !ctr) {
        cJSON_Delete(ctr);
        goto out;
    }
    cJSON_AddItemToArray(ctrs, ctr);
    if (!cJSON_AddStringToObject(ann, KUBE_ANN_VARIANT, v->spec) ||
        !cJSON_AddStringToObject(ctr, "name", k->container) ||
        set_container(ctr, k->workers_env, v) != 0)
        goto out;
    if (k->mode == KUBE_MODE_CLONE && !cJSON_AddNumberToObject(spec, "replicas", 1))
        goto out;
    out = cJSON_PrintUnformatted(p);
out:
    cJSON_Delete(p);
    return out;
}

/* The clone of the original with v applied. Owned result, NULL on allocation failure. */
static cJSON *build_clone(const struct kplat *k, const struct variant *v)
{
    const cJSON *omd = cJSON_GetObjectItem(k->original, "metadata");
    cJSON *d = cJSON_CreateObject(), *md, *labels, *ann, *refs, *ref, *spec, *sel, *ml, *tpl, *tmd,
          *tl, *tann, *pspec, *ctr, *vols, *vol;
    const char *uid = cJSON_GetStringValue(cJSON_GetObjectItem(omd, "uid"));

    if (!d)
        return NULL;
    md = cJSON_AddObjectToObject(d, "metadata");
    if (!md || put_str(d, "apiVersion", "apps/v1") || put_str(d, "kind", "Deployment") ||
        put_str(md, "name", k->clone) || put_str(md, "namespace", k->ns))
        goto fail;
    labels = cJSON_AddObjectToObject(md, "labels");
    ann = cJSON_AddObjectToObject(md, "annotations");
    refs = cJSON_AddArrayToObject(md, "ownerReferences");
    ref = cJSON_CreateObject();
    if (!labels || !ann || !refs || !ref)
        goto fail_ref;
    cJSON_AddItemToArray(refs, ref);
    if (put_str(labels, KUBE_LABEL_CLONE, k->name) || put_str(labels, KUBE_LABEL_RUN, k->run_id) ||
        put_str(labels, "app.kubernetes.io/managed-by", "sizeup") ||
        put_str(ann, "sizeup.dev/clone-of", k->name) || put_str(ref, "apiVersion", "apps/v1") ||
        put_str(ref, "kind", "Deployment") || put_str(ref, "name", k->name) ||
        put_str(ref, "uid", uid ? uid : "") || !cJSON_AddFalseToObject(ref, "controller") ||
        !cJSON_AddFalseToObject(ref, "blockOwnerDeletion"))
        goto fail;

    spec = cJSON_Duplicate(cJSON_GetObjectItem(k->original, "spec"), 1);
    if (!spec || !cJSON_IsObject(spec)) {
        cJSON_Delete(spec);
        goto fail;
    }
    cJSON_AddItemToObject(d, "spec", spec);
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "replicas");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "paused");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "selector");
    if (!cJSON_AddNumberToObject(spec, "replicas", 1))
        goto fail;
    sel = cJSON_AddObjectToObject(spec, "selector");
    ml = sel ? cJSON_AddObjectToObject(sel, "matchLabels") : NULL;
    tpl = obj_child(spec, "template");
    tmd = tpl ? obj_child(tpl, "metadata") : NULL;
    if (!ml || !tmd)
        goto fail;
    /* Pod labels replaced, not extended: no Service selecting the original selects the clone. */
    cJSON_DeleteItemFromObjectCaseSensitive(tmd, "labels");
    tl = cJSON_AddObjectToObject(tmd, "labels");
    tann = obj_child(tmd, "annotations");
    if (!tl || !tann || put_str(ml, KUBE_LABEL_CLONE, k->name) ||
        put_str(ml, KUBE_LABEL_RUN, k->run_id) || put_str(tl, KUBE_LABEL_CLONE, k->name) ||
        put_str(tl, KUBE_LABEL_RUN, k->run_id) || put_str(tann, KUBE_ANN_VARIANT, v->spec))
        goto fail;
    pspec = obj_child(tpl, "spec");
    ctr = pspec ? kube_deploy_container(d, k->container) : NULL;
    if (!ctr || set_container(ctr, k->workers_env, v))
        goto fail;
    /* A load test never writes into real data: claims become empty directories. */
    vols = cJSON_GetObjectItem(pspec, "volumes");
    cJSON_ArrayForEach(vol, vols)
    {
        if (cJSON_GetObjectItem(vol, "persistentVolumeClaim")) {
            cJSON_DeleteItemFromObjectCaseSensitive(vol, "persistentVolumeClaim");
            if (!cJSON_AddObjectToObject(vol, "emptyDir"))
                goto fail;
        }
    }
    return d;
fail_ref:
    cJSON_Delete(ref);
fail:
    cJSON_Delete(d);
    return NULL;
}

/* ---- prepare ------------------------------------------------------------------------------ */

struct save_ctx {
    struct kplat *k;
    bool saved_now;
};

/* Saves the original template in the annotation unless one is there already. */
static int save_original(void *ud, cJSON *obj, char *err)
{
    struct save_ctx *s = ud;
    if (kube_annotation(obj, KUBE_ANN_ORIGINAL))
        return KUBE_MUTATE_SKIP;
    const cJSON *tpl = kube_path_get(obj, "spec.template");
    char *json = tpl ? cJSON_PrintUnformatted(tpl) : NULL;
    if (!json)
        return err_set(err, -EINVAL, "deployment %s/%s has no pod template", s->k->ns, s->k->name);
    int rc = kube_set_annotation(obj, KUBE_ANN_ORIGINAL, json);
    cJSON_free(json);
    s->saved_now = true;
    return rc ? err_set(err, rc, "out of memory") : 0;
}

static int op_prepare(void *self, char *err)
{
    struct kplat *k = self;
    cJSON *clone = NULL, *cur = NULL;
    int rc;

    cJSON_Delete(k->original);
    k->original = NULL;
    rc = kube_get(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, &k->original, err);
    if (rc)
        return rc;
    cJSON *ctr = kube_deploy_container(k->original, k->container);
    if (!ctr)
        return err_set(err, -ENOENT, "deployment %s/%s has no container %s", k->ns, k->name,
                       k->container[0] ? k->container : "at all");
    copy_str(k->container, sizeof(k->container),
             cJSON_GetStringValue(cJSON_GetObjectItem(ctr, "name")));
    if (!k->container[0])
        return err_set(err, -EINVAL, "deployment %s/%s: container without a name", k->ns, k->name);
    if (!k->port)
        k->port = (unsigned)kube_container_port(ctr);
    if (!k->port && !k->target[0])
        return err_set(err, -EINVAL,
                       "container %s declares no containerPort: set the sizeup.dev/port "
                       "annotation",
                       k->container);

    if (k->mode == KUBE_MODE_CLONE) {
        rc = kube_get(k->c, &KUBE_DEPLOYMENTS, k->ns, k->clone, &clone, err);
        if (rc == 0) {
            /* Ours from an earlier run (a restarted operator): adopt it. Anyone else's: never
             * touch it. */
            const char *of = kube_label(clone, KUBE_LABEL_CLONE);
            if (!of || strcmp(of, k->name) != 0) {
                rc = err_set(err, -EEXIST,
                             "deployment %s/%s exists and is not a sizeup clone of %s: "
                             "refusing to touch it",
                             k->ns, k->clone, k->name);
                goto out;
            }
            const char *run = kube_label(clone, KUBE_LABEL_RUN);
            if (run)
                copy_str(k->run_id, sizeof(k->run_id), run);
            k->clone_exists = true;
        } else if (rc != -ENOENT) {
            goto out;
        }
        rc = 0;
    } else {
        struct save_ctx s = {k, false};
        rc = kube_update_retry(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, 5, save_original, &s, &cur,
                               err);
        if (rc)
            goto out;
        /* A sweep resumed after a restart: the template as it stands is ours. */
        if (!s.saved_now &&
            kube_annotation(kube_path_get(cur, "spec.template"), KUBE_ANN_VARIANT)) {
            cJSON_Delete(k->last_template);
            k->last_template = cJSON_Duplicate(kube_path_get(cur, "spec.template"), 1);
        }
        log_info("kube.platform.saved", "deployment=%s/%s resumed=%d", k->ns, k->name,
                 !s.saved_now);
    }
    k->prepared = true;
out:
    cJSON_Delete(clone);
    cJSON_Delete(cur);
    return rc;
}

/* ---- apply and wait ----------------------------------------------------------------------- */

static int op_apply(void *self, const struct variant *v, struct platform_failure *fail, char *err)
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
    if (k->mode == KUBE_MODE_CLONE && !k->clone_exists) {
        obj = build_clone(k, v);
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
    patch = variant_patch(k, v);
    if (!patch) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    rc = kube_patch(k->c, &KUBE_DEPLOYMENTS, k->ns, target_name(k), KUBE_PATCH_STRATEGIC, patch,
                    &out, err);
    if (rc)
        goto fail;
    if (k->mode == KUBE_MODE_IN_PLACE) {
        cJSON_Delete(k->last_template);
        k->last_template = cJSON_Duplicate(kube_path_get(out, "spec.template"), 1);
    }
    log_info("kube.platform.applied", "deployment=%s/%s variant=%s", k->ns, target_name(k),
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

/* "k=v,k2=v2" from the Deployment's spec.selector.matchLabels. */
static int selector_of(const cJSON *d, char *buf, size_t len)
{
    const cJSON *ml = kube_path_get(d, "spec.selector.matchLabels"), *l;
    size_t n = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach(l, ml)
    {
        if (!cJSON_IsString(l))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s=%s", n ? "," : "", l->string, l->valuestring);
        if (w < 0 || (size_t)w >= len - n)
            return -ENOSPC;
        n += (size_t)w;
    }
    return n ? 0 : -EINVAL;
}

struct pod_scan {
    int variant_pods;
    bool ready;
    char pod[254];
    char ip[64];
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
    if (selector_of(d, sel, sizeof(sel)) != 0)
        return err_set(err, -EINVAL, "deployment %s/%s has no usable matchLabels selector", k->ns,
                       target_name(k));
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
        kube_pod_info_read(p, k->container, &pi);
        if (pi.deleting)
            continue;
        s->variant_pods++;
        if (pi.restarts > s->restarts)
            s->restarts = pi.restarts;
        if (pi.oom_killed)
            s->oom = true;
        if (pod_unschedulable(p, s->why, sizeof(s->why)))
            s->unschedulable = true;
        if (pi.ready && pi.pod_ip[0] && !s->ready) {
            s->ready = true;
            copy_str(s->pod, sizeof(s->pod), pi.name);
            copy_str(s->ip, sizeof(s->ip), pi.pod_ip);
        }
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

/* Sleeps us in 50 ms slices; 1 when stop was raised. */
static int nap(int64_t us, volatile sig_atomic_t *stop)
{
    for (int64_t t = 0; t < us; t += 50000) {
        if (stop && *stop)
            return 1;
        sleep_us(us - t < 50000 ? us - t : 50000);
    }
    return stop && *stop;
}

static int op_wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                         struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    long long deadline = kube__now_ms() + (timeout_us > 0 ? timeout_us / 1000 : 60000);
    char msg[ERR_LEN] = "rollout did not start";
    struct pod_scan s = {0};
    int rc = 0;

    memset(fail, 0, sizeof(*fail));
    if (!k->v)
        return err_set(err, -EINVAL, "wait_ready before apply");
    for (;;) {
        cJSON *d = NULL;
        enum kube_rollout state = KUBE_ROLLOUT_WAITING;
        if (stop && *stop) {
            fail->kind = PLATFORM_FAIL_CANCELLED;
            snprintf(fail->reason, sizeof(fail->reason), "cancelled while waiting for rollout");
            return err_set(err, -ECANCELED, "cancelled");
        }
        rc = kube_get(k->c, &KUBE_DEPLOYMENTS, k->ns, target_name(k), &d, err);
        if (rc == 0) {
            kube_deploy_rollout(d, &state, msg);
            rc = scan_pods(k, d, &s, err);
        }
        cJSON_Delete(d);
        if (rc == -ECANCELED) {
            fail->kind = PLATFORM_FAIL_CANCELLED;
            snprintf(fail->reason, sizeof(fail->reason), "cancelled while waiting for rollout");
            return rc;
        }
        if (rc == 0) {
            if (state == KUBE_ROLLOUT_DONE && s.ready) {
                copy_str(k->pod, sizeof(k->pod), s.pod);
                copy_str(k->pod_ip, sizeof(k->pod_ip), s.ip);
                log_info("kube.platform.ready", "deployment=%s/%s variant=%s pod=%s ip=%s", k->ns,
                         target_name(k), k->v->spec, k->pod, k->pod_ip);
                return 0;
            }
            if (state == KUBE_ROLLOUT_FAILED) {
                describe_failure(&s, msg, fail);
                return err_set(err, -ETIMEDOUT, "%s", fail->reason);
            }
            /* Not worth waiting out the timeout: a pod that keeps dying will not serve. */
            if ((s.oom && s.restarts >= 2) || s.restarts >= 3) {
                describe_failure(&s, msg, fail);
                return err_set(err, -ECHILD, "%s", fail->reason);
            }
        } else {
            log_warn("kube.platform.poll_failed", "deployment=%s/%s error=\"%s\"", k->ns,
                     target_name(k), err ? err : "");
        }
        if (kube__now_ms() >= deadline) {
            if (rc) {
                /* The API itself failed: a platform failure, not the variant's. */
                return rc;
            }
            describe_failure(&s, msg, fail);
            if (fail->kind == PLATFORM_FAIL_NEVER_READY && state == KUBE_ROLLOUT_DONE)
                snprintf(fail->reason, sizeof(fail->reason), "rolled out, but no pod ready");
            return err_set(err, -ETIMEDOUT, "%s", fail->reason);
        }
        if (nap(k->poll_us, stop)) {
            fail->kind = PLATFORM_FAIL_CANCELLED;
            snprintf(fail->reason, sizeof(fail->reason), "cancelled while waiting for rollout");
            return err_set(err, -ECANCELED, "cancelled");
        }
    }
}

static int op_target_url(void *self, char *buf, size_t len, char *err)
{
    struct kplat *k = self;
    int n;
    if (k->target[0])
        n = snprintf(buf, len, "%s", k->target);
    else if (!k->pod_ip[0])
        return err_set(err, -ENOENT, "no ready pod");
    else if (strchr(k->pod_ip, ':'))
        n = snprintf(buf, len, "http://[%s]:%u", k->pod_ip, k->port);
    else
        n = snprintf(buf, len, "http://%s:%u", k->pod_ip, k->port);
    return n < 0 || (size_t)n >= len ? err_set(err, -ENOSPC, "URL too long") : 0;
}

/* ---- usage -------------------------------------------------------------------------------- */

static bool metrics_served(struct kplat *k)
{
    if (!k->metrics_checked) {
        cJSON *o = NULL;
        char e2[ERR_LEN];
        k->metrics_served = kube_request(k->c, "GET", "/apis/metrics.k8s.io/v1beta1", NULL, NULL,
                                         65536, &o, e2) == 0;
        k->metrics_checked = true;
        cJSON_Delete(o);
    }
    return k->metrics_served;
}

/* One metrics.k8s.io sample of the container. */
static int metrics_sample(struct kplat *k, double *cores, int64_t *bytes)
{
    cJSON *m = NULL;
    const cJSON *c;
    char e2[ERR_LEN];
    int rc = kube_get(k->c, &KUBE_POD_METRICS, k->ns, k->pod, &m, e2);
    if (rc)
        return rc;
    rc = -ENOENT;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "containers"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
        const char *cpu = cJSON_GetStringValue(kube_path_get(c, "usage.cpu"));
        const char *mem = cJSON_GetStringValue(kube_path_get(c, "usage.memory"));
        if (!n || strcmp(n, k->container) != 0 || !cpu || !mem)
            continue;
        if (kube_parse_cores(cpu, cores) == 0 && qty_parse_memory(mem, bytes, NULL) == 0)
            rc = 0;
    }
    cJSON_Delete(m);
    return rc;
}

static int pod_now(struct kplat *k, struct kube_pod_info *pi, char *err)
{
    cJSON *p = NULL;
    int rc = kube_get(k->c, &KUBE_PODS, k->ns, k->pod, &p, err);
    if (rc == 0)
        kube_pod_info_read(p, k->container, pi);
    cJSON_Delete(p);
    return rc;
}

static int op_usage_begin(void *self, char *err)
{
    struct kplat *k = self;
    struct kube_pod_info pi;
    int rc;
    if (!k->pod[0])
        return err_set(err, -ENOENT, "no ready pod");
    k->t_begin_ms = kube__now_ms();
    rc = pod_now(k, &pi, err);
    if (rc)
        return rc;
    k->restarts_begin = pi.restarts;
    k->sample_begin = metrics_served(k) && metrics_sample(k, &k->cores_begin, &k->mem_begin) == 0;
    return 0;
}

static int op_usage_end(void *self, struct platform_usage *out, char *err)
{
    struct kplat *k = self;
    struct kube_pod_info pi;
    double cores = 0;
    int64_t mem = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->window_s = (double)(kube__now_ms() - k->t_begin_ms) / 1000.0;
    out->cpu_s = -1;
    out->peak_memory_bytes = -1;
    rc = pod_now(k, &pi, err);
    if (rc == -ENOENT) {
        out->died = true;
        snprintf(out->note, sizeof(out->note), "pod %s disappeared during the window", k->pod);
        return 0;
    }
    if (rc)
        return rc;
    out->restarts =
        pi.restarts > k->restarts_begin ? (unsigned)(pi.restarts - k->restarts_begin) : 0;
    out->oom_killed = out->restarts > 0 && pi.oom_killed;
    out->died = out->restarts > 0 || strcmp(pi.phase, "Running") != 0 || pi.deleting;
    if (!metrics_served(k)) {
        snprintf(out->note, sizeof(out->note),
                 "metrics.k8s.io is not served by this cluster: CPU and memory use unknown");
    } else if (metrics_sample(k, &cores, &mem) != 0) {
        snprintf(out->note, sizeof(out->note),
                 "metrics.k8s.io had no sample for pod %s: CPU and memory use unknown", k->pod);
    } else {
        /* metrics-server reports a rate over its last scrape window: the end sample covers the
         * end of the measured window, the begin sample (when there is one) its start. */
        double avg = k->sample_begin ? (cores + k->cores_begin) / 2 : cores;
        out->cpu_s = avg * out->window_s;
        out->peak_memory_bytes = k->sample_begin && k->mem_begin > mem ? k->mem_begin : mem;
        snprintf(out->note, sizeof(out->note),
                 "usage from metrics.k8s.io samples (%s), not a continuous measurement",
                 k->sample_begin ? "start and end of the window" : "end of the window");
    }
    return 0;
}

/* ---- stop and restore --------------------------------------------------------------------- */

static int op_stop_variant(void *self, char *err)
{
    struct kplat *k = self;
    cJSON *d = NULL;
    int rc = 0;

    k->pod[0] = k->pod_ip[0] = '\0';
    if (k->mode != KUBE_MODE_CLONE || !k->clone_exists)
        return 0; /* in place: the next apply rolls the Deployment; restore ends it */
    rc = kube_patch(k->c, &KUBE_DEPLOYMENTS, k->ns, k->clone, KUBE_PATCH_MERGE,
                    "{\"spec\":{\"replicas\":0}}", &d, err);
    if (rc == -ENOENT) {
        k->clone_exists = false;
        return 0;
    }
    if (rc)
        return rc;
    /* Wait for the pods to go, so the next variant never shares the node with this one. */
    char sel[1024];
    if (selector_of(d, sel, sizeof(sel)) == 0) {
        long long deadline = kube__now_ms() + k->stop_timeout_us / 1000;
        for (;;) {
            cJSON *list = NULL;
            struct kube_list_opts lo = {.label_selector = sel};
            rc = kube_list(k->c, &KUBE_PODS, k->ns, &lo, &list, err);
            int n = rc ? -1 : cJSON_GetArraySize(cJSON_GetObjectItem(list, "items"));
            cJSON_Delete(list);
            if (rc || n == 0)
                break;
            if (kube__now_ms() >= deadline) {
                rc = err_set(err, -ETIMEDOUT, "clone %s/%s: %d pods still terminating", k->ns,
                             k->clone, n);
                break;
            }
            sleep_us(250000);
        }
    }
    cJSON_Delete(d);
    return rc;
}

/* Puts back only what apply changed in the current template (someone else edited it). */
static int restore_fields(struct kplat *k, cJSON *tpl, const cJSON *orig_tpl)
{
    cJSON *ann = (cJSON *)kube_path_get(tpl, "metadata.annotations");
    if (ann)
        cJSON_DeleteItemFromObjectCaseSensitive(ann, KUBE_ANN_VARIANT);
    cJSON *ctrs = (cJSON *)kube_path_get(tpl, "spec.containers"), *c, *oc = NULL;
    const cJSON *octrs = kube_path_get(orig_tpl, "spec.containers"), *x;
    cJSON_ArrayForEach(x, octrs)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(x, "name"));
        if (n && strcmp(n, k->container) == 0)
            oc = (cJSON *)x;
    }
    cJSON_ArrayForEach(c, ctrs)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
        if (!n || strcmp(n, k->container) != 0)
            continue;
        /* The env var: the original entry back, or none. */
        cJSON *env = cJSON_GetObjectItem(c, "env"), *e;
        int i = 0, found = -1;
        cJSON_ArrayForEach(e, env)
        {
            const char *en = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
            if (en && strcmp(en, k->workers_env) == 0)
                found = i;
            i++;
        }
        const cJSON *oe = NULL;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(oc, "env"))
        {
            const char *en = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
            if (en && strcmp(en, k->workers_env) == 0)
                oe = e;
        }
        if (found >= 0) {
            if (oe) {
                cJSON *dup = cJSON_Duplicate(oe, 1);
                if (!dup)
                    return -ENOMEM;
                cJSON_ReplaceItemInArray(env, found, dup);
            } else {
                cJSON_DeleteItemFromArray(env, found);
            }
        }
        /* cpu and memory limits and requests: the original values back, or none. */
        static const char *const maps[] = {"limits", "requests"};
        static const char *const keys[] = {"cpu", "memory"};
        cJSON *res = cJSON_GetObjectItem(c, "resources");
        for (int m = 0; m < 2 && res; m++) {
            cJSON *cur = cJSON_GetObjectItem(res, maps[m]);
            const cJSON *orig = kube_path_get(cJSON_GetObjectItem(oc, "resources"), maps[m]);
            for (int q = 0; q < 2 && cur; q++) {
                const cJSON *ov = cJSON_GetObjectItem(orig, keys[q]);
                cJSON_DeleteItemFromObjectCaseSensitive(cur, keys[q]);
                if (ov) {
                    cJSON *dup = cJSON_Duplicate(ov, 1);
                    if (!dup)
                        return -ENOMEM;
                    cJSON_AddItemToObject(cur, keys[q], dup);
                }
            }
        }
    }
    return 0;
}

static int restore_template(void *ud, cJSON *obj, char *err)
{
    struct kplat *k = ud;
    const char *saved = kube_annotation(obj, KUBE_ANN_ORIGINAL);
    cJSON *orig = NULL, *spec;
    int rc = 0;

    if (!saved)
        return KUBE_MUTATE_SKIP; /* restored already */
    orig = cJSON_Parse(saved);
    if (!cJSON_IsObject(orig)) {
        cJSON_Delete(orig);
        return err_set(err, -EBADMSG,
                       "annotation %s on %s/%s is not a pod template: restore by hand",
                       KUBE_ANN_ORIGINAL, k->ns, k->name);
    }
    spec = cJSON_GetObjectItem(obj, "spec");
    cJSON *cur = cJSON_GetObjectItem(spec, "template");
    if (k->last_template && cur && !cJSON_Compare(cur, k->last_template, 1)) {
        /* Edited since our last patch: keep the edit, undo only our fields. */
        k->drift = true;
        snprintf(k->drift_msg, sizeof(k->drift_msg),
                 "the pod template of %s/%s was edited during the sweep: kept the edit and "
                 "put back only %s and the CPU/memory resources of container %s",
                 k->ns, k->name, k->workers_env, k->container);
        rc = restore_fields(k, cur, orig);
        cJSON_Delete(orig);
    } else {
        k->drift = false;
        if (!spec || !cJSON_IsObject(spec) ||
            !cJSON_ReplaceItemInObjectCaseSensitive(spec, "template", orig)) {
            cJSON_Delete(orig);
            return err_set(err, -EBADMSG, "deployment %s/%s has no spec", k->ns, k->name);
        }
    }
    if (rc)
        return err_set(err, rc, "out of memory");
    return kube_set_annotation(obj, KUBE_ANN_ORIGINAL, NULL) ? err_set(err, -ENOMEM, "oom") : 0;
}

static int op_restore(void *self, char *err)
{
    struct kplat *k = self;
    int rc = 0;

    k->pod[0] = k->pod_ip[0] = '\0';
    if (k->mode == KUBE_MODE_CLONE) {
        rc = kube_delete(k->c, &KUBE_DEPLOYMENTS, k->ns, k->clone, "Background", err);
        if (rc == 0)
            log_info("kube.platform.clone_deleted", "deployment=%s/%s", k->ns, k->clone);
        if (rc == -ENOENT)
            rc = 0;
        if (rc == 0)
            k->clone_exists = false;
        return rc;
    }
    if (!k->prepared)
        return 0; /* nothing was saved by us; a saved annotation from a crash stays for later */
    rc = kube_update_retry(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, 8, restore_template, k, NULL,
                           err);
    if (rc == -ENOENT)
        rc = 0; /* the Deployment is gone: nothing to restore */
    if (rc == 0 && k->drift)
        log_warn("kube.platform.drift", "deployment=%s/%s note=\"%s\"", k->ns, k->name,
                 k->drift_msg);
    else if (rc == 0)
        log_info("kube.platform.restored", "deployment=%s/%s", k->ns, k->name);
    if (rc == 0) {
        cJSON_Delete(k->last_template);
        k->last_template = NULL;
    }
    return rc;
}

static void op_free(void *self)
{
    struct kplat *k = self;
    if (!k)
        return;
    cJSON_Delete(k->original);
    cJSON_Delete(k->last_template);
    free(k);
}

static const struct platform_ops kube_ops = {
    .name = "kube",
    .facts = op_facts,
    .prepare = op_prepare,
    .apply = op_apply,
    .wait_ready = op_wait_ready,
    .target_url = op_target_url,
    .usage_begin = op_usage_begin,
    .usage_end = op_usage_end,
    .stop_variant = op_stop_variant,
    .restore = op_restore,
    .free = op_free,
};

bool kube_platform_drift(const struct platform *p, char *msg)
{
    const struct kplat *k = p && p->ops == &kube_ops ? p->self : NULL;
    if (!k || !k->drift)
        return false;
    if (msg)
        snprintf(msg, ERR_LEN, "%s", k->drift_msg);
    return true;
}

int kube_platform_new(const struct kube_platform_config *cfg, struct platform *out, char *err)
{
    struct kplat *k;
    char path[1024];

    out->ops = NULL;
    out->self = NULL;
    if (!cfg->client || !cfg->ns || !cfg->deployment)
        return err_set(err, -EINVAL, "kube platform: client, namespace and deployment needed");
    if (kube_path(&KUBE_DEPLOYMENTS, cfg->ns, cfg->deployment, path, sizeof(path)) != 0)
        return err_set(err, -EINVAL, "kube platform: invalid name '%.64s/%.64s'", cfg->ns,
                       cfg->deployment);
    k = calloc(1, sizeof(*k));
    if (!k)
        return err_set(err, -ENOMEM, "out of memory");
    k->c = cfg->client;
    k->mode = cfg->mode;
    k->port = cfg->port;
    k->poll_us = cfg->poll_interval_us > 0 ? cfg->poll_interval_us : 500000;
    k->stop_timeout_us = cfg->stop_timeout_us > 0 ? cfg->stop_timeout_us : 60000000;
    if (copy_str(k->ns, sizeof(k->ns), cfg->ns) ||
        copy_str(k->name, sizeof(k->name), cfg->deployment) ||
        copy_str(k->container, sizeof(k->container), cfg->container) ||
        copy_str(k->workers_env, sizeof(k->workers_env),
                 cfg->workers_env && cfg->workers_env[0] ? cfg->workers_env : "WORKERS") ||
        (cfg->target && strcmp(cfg->target, "pod") != 0 &&
         copy_str(k->target, sizeof(k->target), cfg->target))) {
        free(k);
        return err_set(err, -EINVAL, "kube platform: a name or the target is too long");
    }
    snprintf(k->clone, sizeof(k->clone), "%s-sizeup", k->name);
    if (cfg->run_id && cfg->run_id[0]) {
        if (copy_str(k->run_id, sizeof(k->run_id), cfg->run_id)) {
            free(k);
            return err_set(err, -EINVAL, "kube platform: run id too long");
        }
    } else {
        snprintf(k->run_id, sizeof(k->run_id), "%llx", (unsigned long long)time(NULL));
    }
    out->ops = &kube_ops;
    out->self = k;
    return 0;
}
