/* The Kubernetes platform, undoing: stop a variant (scale the clone to zero and wait for its
 * pods), and restore at the end of a sweep (delete the clone, or put the saved pod template
 * back, keeping what a person changed meanwhile). */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

int kube__plat_stop_variant(void *self, char *err)
{
    struct kplat *k = self;

    bool scaled_out = k->replicas > 1;

    k->pod[0] = k->pod_ip[0] = '\0';
    k->nready = 0;
    k->replicas = 1;
    if (k->mode != KUBE_MODE_CLONE || !k->clone_exists)
        return 0; /* in place: the next apply rolls the Deployment; restore ends it */
    if (scaled_out) {
        /* A scale-out's pods are never kept: a resize changes one pod, not n. */
        k->rz_pod[0] = '\0';
        k->pod_kept = false;
    } else if (k->resize_on && k->rz_pod[0]) {
        /* Kept warm for the next variant's resize; a rollout scales it down first. */
        k->pod_kept = true;
        return 0;
    }
    return kube__plat_scale_down(k, err);
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
                    if (!cJSON_AddItemToObject(cur, keys[q], dup)) {
                        cJSON_Delete(dup);
                        return -ENOMEM;
                    }
                }
            }
        }
    }
    return 0;
}

int kube__plat_restore_template(void *ud, cJSON *obj, char *err)
{
    struct kplat *k = ud;
    const char *saved = kube_annotation(obj, KUBE_ANN_ORIGINAL);
    cJSON *orig = NULL, *spec;
    int rc = 0;

    if (!saved)
        return KUBE_MUTATE_SKIP; /* restored already */
    rc = kube__orig_load(k, saved, &orig, err);
    if (rc)
        return rc;
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

int kube__plat_restore(void *self, char *err)
{
    struct kplat *k = self;
    int rc = 0;

    k->pod[0] = k->pod_ip[0] = '\0';
    k->pod_kept = false;
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
    /* The resized pod first: the template restore below may replace it anyway, but when no
     * rollout happened it is the only thing that puts the pod's resources back. */
    rc = kube__resize_restore(k, NULL, err);
    if (rc)
        return rc;
    rc = kube_update_retry(k->c, &KUBE_DEPLOYMENTS, k->ns, k->name, 8, kube__plat_restore_template,
                           k, NULL, err);
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
        rc = kube__orig_cleanup(k, err);
    }
    return rc;
}
