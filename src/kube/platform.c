/* The Kubernetes platform: a variant is a Deployment pod template rolled out through the API,
 * in a clone (default) or in place. See platform.h for the contract and platform_int.h for
 * which file does which job; this one holds the ops table, creation, the facts, prepare and
 * crash recovery, and only calls into the others (their shared helpers are platform_util.c's). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/quantity.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

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
    k->facts.usage_window_us = kube__plat_usage_window_us(k);
    static const char *const modes[] = {"clone", "in-place", "resize"};
    snprintf(k->facts.machine, sizeof(k->facts.machine), "Kubernetes %s, Deployment %s/%s (%s)",
             gv ? gv : "(version unknown)", k->ns, k->name, modes[k->mode]);
    cJSON_Delete(ver);
    cJSON_Delete(nodes);
    k->have_facts = true;
    *out = k->facts;
    return 0;
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
    char *value = NULL;
    if (!kube_path_get(obj, "spec.template"))
        return err_set(err, -EINVAL, "deployment %s/%s has no pod template", s->k->ns, s->k->name);
    int rc = kube__orig_value(s->k, obj, &value, err);
    if (rc)
        return rc;
    rc = kube_set_annotation(obj, KUBE_ANN_ORIGINAL, value);
    free(value);
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
    if (kube_copy_field(k->container, sizeof(k->container),
                        cJSON_GetStringValue(cJSON_GetObjectItem(ctr, "name"))) != 0)
        return err_set(err, -EINVAL, "deployment %s/%s: a container name too long", k->ns, k->name);
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
            if (!kube__plat_is_our_clone(k, clone)) {
                rc = err_set(err, -EEXIST,
                             "deployment %s/%s exists and is not a sizeup clone of %s: "
                             "refusing to touch it",
                             k->ns, k->clone, k->name);
                goto out;
            }
            const char *run = kube_label(clone, KUBE_LABEL_RUN);
            if (run && kube_copy_field(k->run_id, sizeof(k->run_id), run) != 0) {
                rc = err_set(err, -EINVAL, "deployment %s/%s: run label too long", k->ns, k->clone);
                goto out;
            }
            k->clone_exists = true;
        } else if (rc != -ENOENT) {
            goto out;
        }
        rc = 0;
    } else {
        struct save_ctx s = {k, false};
        rc = kube__orig_prepare(k, err);
        if (rc)
            goto out;
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
    if (k->want_resize) {
        k->resize_on = kube__resize_served(k->c);
        log_info("kube.platform.resize", "deployment=%s/%s served=%d", k->ns, k->name,
                 k->resize_on);
    }
    k->prepared = true;
out:
    cJSON_Delete(clone);
    cJSON_Delete(cur);
    return rc;
}

static void op_free(void *self)
{
    struct kplat *k = self;
    if (!k)
        return;
    cJSON_Delete(k->original);
    cJSON_Delete(k->last_template);
    cJSON_Delete(k->rz_resources);
    free(k);
}

/* ---- apply: by resize where it fits, else by rollout ------------------------------------- */

static int op_apply(void *self, const struct variant *v, struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    char why[ERR_LEN] = "";

    k->replicas = 1; /* a scale-out's replicas end with the variant after them */
    k->applier = k->prepared && kube__resize_fits(k, v, why) ? &kube__resize : &kube__rollout;
    if (k->applier == &kube__rollout && why[0])
        log_info("kube.platform.rollout", "deployment=%s/%s variant=%s why=\"%s\"", k->ns,
                 kube__plat_target(k), v->spec, why);
    return k->applier->apply(k, v, fail, err);
}

static int op_wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                         struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    const struct kube__applier *a = k->applier ? k->applier : &kube__rollout;
    int rc = a->wait_ready(k, timeout_us, stop, fail, err);
    /* The ready pod is the one the next CPU/memory-only variant resizes. */
    if (rc == 0 && strcmp(k->rz_pod, k->pod) != 0) {
        if (kube_copy_field(k->rz_pod, sizeof(k->rz_pod), k->pod) != 0)
            return err_set(err, -EINVAL, "pod %s: name too long", k->pod);
        k->rz_uid[0] = '\0';
    }
    return rc;
}

static const char *op_applied_by(void *self)
{
    const struct kplat *k = self;
    return k->applier ? k->applier->name : "";
}

static const struct platform_ops kube_ops = {
    .name = "kube",
    .facts = op_facts,
    .prepare = op_prepare,
    .apply = op_apply,
    .wait_ready = op_wait_ready,
    .target_url = kube__plat_target_url,
    .usage_begin = kube__plat_set_usage_begin,
    .usage_end = kube__plat_set_usage_end,
    .stop_variant = kube__plat_stop_variant,
    .restore = kube__plat_restore,
    .free = op_free,
    .applied_by = op_applied_by,
    .apply_replicas = kube__plat_apply_replicas,
    .target_urls = kube__plat_target_urls,
};

int kube_platform_recover(kube_client_t *c, const char *ns, const char *name, unsigned *done,
                          char *err)
{
    struct kube_platform_config kc = {.client = c, .ns = ns, .deployment = name};
    struct platform p;
    cJSON *clone = NULL, *d = NULL;
    unsigned did = 0;
    int rc;

    if (done)
        *done = 0;
    rc = kube_platform_new(&kc, &p, err);
    if (rc)
        return rc;
    struct kplat *k = p.self;
    rc = kube_get(c, &KUBE_DEPLOYMENTS, ns, k->clone, &clone, err);
    if (rc == 0) {
        if (kube__plat_is_our_clone(k, clone)) {
            rc = kube_delete(c, &KUBE_DEPLOYMENTS, ns, k->clone, "Background", err);
            if (rc == 0 || rc == -ENOENT) {
                rc = 0;
                did |= KUBE_RECOVER_CLONE_DELETED;
                log_info("kube.platform.recovered", "deployment=%s/%s action=clone_deleted", ns,
                         k->clone);
            }
        }
    } else if (rc == -ENOENT) {
        rc = 0;
    }
    if (rc)
        goto out;
    bool resized = false;
    rc = kube__resize_restore(k, &resized, err);
    if (rc)
        goto out;
    if (resized) {
        did |= KUBE_RECOVER_POD_RESIZED;
        log_info("kube.platform.recovered", "deployment=%s/%s action=pod_resized", ns, name);
    }
    rc = kube_get(c, &KUBE_DEPLOYMENTS, ns, name, &d, err);
    if (rc == -ENOENT) {
        rc = 0;
        goto out;
    }
    if (rc || !kube_annotation(d, KUBE_ANN_ORIGINAL))
        goto out;
    /* No record of our last patch survives a crash: the saved template goes back exactly. */
    rc = kube_update_retry(c, &KUBE_DEPLOYMENTS, ns, name, 8, kube__plat_restore_template, k, NULL,
                           err);
    if (rc == -ENOENT)
        rc = 0;
    else if (rc == 0) {
        rc = kube__orig_cleanup(k, err);
        did |= KUBE_RECOVER_TEMPLATE_RESTORED;
        log_info("kube.platform.recovered", "deployment=%s/%s action=template_restored", ns, name);
    }
out:
    cJSON_Delete(clone);
    cJSON_Delete(d);
    p.ops->free(p.self);
    if (done)
        *done = did;
    return rc;
}

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
    k->want_resize =
        cfg->mode == KUBE_MODE_RESIZE || (cfg->mode == KUBE_MODE_CLONE && !cfg->resize_off);
    k->port = cfg->port;
    k->poll_us = cfg->poll_interval_us > 0 ? cfg->poll_interval_us : 500000;
    k->stop_timeout_us = cfg->stop_timeout_us > 0 ? cfg->stop_timeout_us : 60000000;
    if (kube_copy_field(k->ns, sizeof(k->ns), cfg->ns) ||
        kube_copy_field(k->name, sizeof(k->name), cfg->deployment) ||
        kube_copy_field(k->container, sizeof(k->container), cfg->container) ||
        kube_copy_field(k->workers_env, sizeof(k->workers_env),
                        cfg->workers_env && cfg->workers_env[0] ? cfg->workers_env : "WORKERS") ||
        (cfg->target && strcmp(cfg->target, "pod") != 0 &&
         kube_copy_field(k->target, sizeof(k->target), cfg->target))) {
        free(k);
        return err_set(err, -EINVAL, "kube platform: a name or the target is too long");
    }
    kube_platform_clone_name(k->name, k->clone);
    kube_platform_clone_label(k->name, k->clone_label);
    if (cfg->run_id && cfg->run_id[0]) {
        if (kube_copy_field(k->run_id, sizeof(k->run_id), cfg->run_id)) {
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
