/* The Kubernetes platform, the original pod template in-place and resize modes put back: saved
 * in the Deployment's KUBE_ANN_ORIGINAL annotation, or, when the Deployment's annotations with it
 * would pass KUBE_ORIGINAL_INLINE_MAX bytes, in a ConfigMap "<name>-sizeup-original" (owned by the
 * Deployment, labelled managed-by sizeup) with the annotation holding only "configmap:<name>
 * sha256:<hex>". The API server refuses an object whose annotations total more than 256 KiB, and a
 * Deployment applied with kubectl already carries its last-applied-configuration, so a large
 * template cannot be saved twice over in annotations. Restore refuses a ConfigMap whose content no
 * longer matches the hash. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/log.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

#define REF_PREFIX "configmap:"
#define CM_KEY     "template.json"

static int sha256_hex(const char *s, char out[DIGEST_HEX_LEN])
{
    return digest_sha256_hex(s, strlen(s), out);
}

/* The bytes of d's annotations, keys and values, as the API server counts them. */
static size_t ann_bytes(const cJSON *d)
{
    const cJSON *a;
    size_t n = 0;
    cJSON_ArrayForEach(a, kube_path_get(d, "metadata.annotations"))
    {
        n += a->string ? strlen(a->string) : 0;
        n += cJSON_IsString(a) ? strlen(a->valuestring) : 0;
    }
    return n;
}

/* Whether template JSON json goes to the ConfigMap rather than into d's annotations. */
static bool too_big(const cJSON *d, const char *json)
{
    return strlen(json) + ann_bytes(d) > KUBE_ORIGINAL_INLINE_MAX;
}

int kube__orig_cm_name(const struct kplat *k, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s-sizeup-original", k->name);
    return n < 0 || (size_t)n >= len || n > 253 ? -ENAMETOOLONG : 0;
}

/* The ConfigMap holding json, owned by Deployment d. Owned result or NULL. */
static cJSON *cm_object(const struct kplat *k, const cJSON *d, const char *name, const char *json)
{
    cJSON *cm = cJSON_CreateObject(), *meta, *labels, *owners, *ref, *data;
    const char *uid = cJSON_GetStringValue(kube_path_get(d, "metadata.uid"));
    if (!cm || !(meta = cJSON_AddObjectToObject(cm, "metadata")) ||
        !cJSON_AddStringToObject(meta, "name", name) ||
        !cJSON_AddStringToObject(meta, "namespace", k->ns) ||
        !(labels = cJSON_AddObjectToObject(meta, "labels")) ||
        !cJSON_AddStringToObject(labels, "app.kubernetes.io/managed-by", "sizeup") ||
        !(data = cJSON_AddObjectToObject(cm, "data")) ||
        !cJSON_AddStringToObject(data, CM_KEY, json))
        goto oom;
    if (uid) {
        /* Owned by the Deployment: deleting it deletes the copy too. */
        if (!(owners = cJSON_AddArrayToObject(meta, "ownerReferences")) ||
            !(ref = cJSON_CreateObject()) || !cJSON_AddItemToArray(owners, ref) ||
            !cJSON_AddStringToObject(ref, "apiVersion", "apps/v1") ||
            !cJSON_AddStringToObject(ref, "kind", "Deployment") ||
            !cJSON_AddStringToObject(ref, "name", k->name) ||
            !cJSON_AddStringToObject(ref, "uid", uid))
            goto oom;
    }
    return cm;
oom:
    cJSON_Delete(cm);
    return NULL;
}

static bool cm_is_ours(const cJSON *cm)
{
    const char *by = kube_label(cm, "app.kubernetes.io/managed-by");
    return by && strcmp(by, "sizeup") == 0;
}

int kube__orig_prepare(struct kplat *k, char *err)
{
    cJSON *cm = NULL, *cur = NULL;
    char name[254], *json = NULL;
    int rc = 0;

    k->orig_sha[0] = '\0';
    if (kube_annotation(k->original, KUBE_ANN_ORIGINAL))
        return 0; /* saved by an earlier run: a resumed sweep */
    const cJSON *tpl = kube_path_get(k->original, "spec.template");
    if (!tpl || !(json = cJSON_PrintUnformatted(tpl)))
        return err_set(err, -EINVAL, "deployment %s/%s has no pod template", k->ns, k->name);
    if (!too_big(k->original, json))
        goto out;
    if (kube__orig_cm_name(k, name, sizeof(name))) {
        rc = err_set(err, -ENAMETOOLONG, "deployment %s/%s: name too long for its template copy",
                     k->ns, k->name);
        goto out;
    }
    if (!(cm = cm_object(k, k->original, name, json))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    rc = kube_create(k->c, &KUBE_CONFIGMAPS, k->ns, cm, NULL, err);
    if (rc == -EEXIST) {
        /* Ours from a run that stopped before it annotated: replace it. Anyone else's: no. */
        rc = kube_get(k->c, &KUBE_CONFIGMAPS, k->ns, name, &cur, err);
        if (rc == 0 && !cm_is_ours(cur))
            rc = err_set(err, -EEXIST,
                         "configmap %s/%s exists and is not sizeup's: refusing to touch it", k->ns,
                         name);
        if (rc == 0) {
            const char *rv = cJSON_GetStringValue(kube_path_get(cur, "metadata.resourceVersion"));
            cJSON *meta = cJSON_GetObjectItem(cm, "metadata");
            if (rv && !cJSON_AddStringToObject(meta, "resourceVersion", rv))
                rc = err_set(err, -ENOMEM, "out of memory");
            else
                rc = kube_update(k->c, &KUBE_CONFIGMAPS, k->ns, name, cm, NULL, err);
        }
    }
    if (rc)
        goto out;
    rc = sha256_hex(json, k->orig_sha);
    if (rc) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    log_info("kube.platform.original_configmap", "deployment=%s/%s configmap=%s bytes=%zu", k->ns,
             k->name, name, strlen(json));
out:
    cJSON_free(json);
    cJSON_Delete(cm);
    cJSON_Delete(cur);
    return rc;
}

int kube__orig_value(struct kplat *k, const cJSON *d, char **value, char *err)
{
    const cJSON *tpl = kube_path_get(d, "spec.template");
    char *json = tpl ? cJSON_PrintUnformatted(tpl) : NULL;
    char sha[65], name[254];

    *value = NULL;
    if (!json)
        return err_set(err, -EINVAL, "deployment %s/%s has no pod template", k->ns, k->name);
    if (!too_big(d, json)) {
        *value = strdup(json);
        cJSON_free(json);
        return *value ? 0 : err_set(err, -ENOMEM, "out of memory");
    }
    int rc = sha256_hex(json, sha);
    cJSON_free(json);
    if (rc)
        return err_set(err, rc, "out of memory");
    if (!k->orig_sha[0] || strcmp(sha, k->orig_sha) != 0)
        /* The template changed between the copy and this update: prepare again. */
        return err_set(err, -EAGAIN,
                       "deployment %s/%s: its pod template changed while sizeup saved it", k->ns,
                       k->name);
    kube__orig_cm_name(k, name, sizeof(name));
    size_t n = strlen(REF_PREFIX) + strlen(name) + strlen(" sha256:") + 64 + 1;
    if (!(*value = malloc(n)))
        return err_set(err, -ENOMEM, "out of memory");
    snprintf(*value, n, REF_PREFIX "%s sha256:%s", name, sha);
    return 0;
}

int kube__orig_load(struct kplat *k, const char *saved, cJSON **tpl, char *err)
{
    cJSON *cm = NULL;
    char name[254], want[65], got[65];
    int rc = 0;

    *tpl = NULL;
    if (strncmp(saved, REF_PREFIX, strlen(REF_PREFIX)) != 0) {
        *tpl = cJSON_Parse(saved);
        goto check;
    }
    if (sscanf(saved + strlen(REF_PREFIX), "%253s sha256:%64[0-9a-f]", name, want) != 2 ||
        strlen(want) != 64)
        return err_set(err, -EBADMSG,
                       "annotation %s on %s/%s names no ConfigMap and SHA-256: restore by hand",
                       KUBE_ANN_ORIGINAL, k->ns, k->name);
    rc = kube_get(k->c, &KUBE_CONFIGMAPS, k->ns, name, &cm, err);
    if (rc) {
        err_wrap(err, rc, "the saved pod template of %s/%s (configmap %s)", k->ns, k->name, name);
        goto out;
    }
    const char *json =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "data"), CM_KEY));
    if (!json || sha256_hex(json, got) != 0 || strcmp(got, want) != 0) {
        rc = err_set(err, -EBADMSG,
                     "configmap %s/%s does not hold the pod template sizeup saved (its SHA-256 "
                     "differs from the annotation's): refusing to restore it; restore by hand",
                     k->ns, name);
        goto out;
    }
    *tpl = cJSON_Parse(json);
    k->orig_in_cm = true;
check:
    if (!cJSON_IsObject(*tpl)) {
        cJSON_Delete(*tpl);
        *tpl = NULL;
        rc = err_set(err, -EBADMSG, "annotation %s on %s/%s is not a pod template: restore by hand",
                     KUBE_ANN_ORIGINAL, k->ns, k->name);
    }
out:
    cJSON_Delete(cm);
    return rc;
}

int kube__orig_cleanup(struct kplat *k, char *err)
{
    char name[254];
    if (!k->orig_in_cm)
        return 0;
    k->orig_in_cm = false;
    if (kube__orig_cm_name(k, name, sizeof(name)))
        return 0;
    int rc = kube_delete(k->c, &KUBE_CONFIGMAPS, k->ns, name, NULL, err);
    return rc == -ENOENT ? 0 : rc;
}
