/* The Kubernetes platform, building the clone: its name and label value within Kubernetes'
 * 63-character limit, the clone object made from the original, and the strategic merge patch
 * that applies each variant. */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/quantity.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

#define CLONE_SUFFIX "-sizeup"
#define HASH_HEX     16 /* hex digits of the whole name's hash in a shortened name */

/* FNV-1a, 64 bits (Kubernetes names ReplicaSets with FNV too). Each step is a bijection of the
 * state, so two names of one length that differ in one character never share a hash; others
 * share one with a chance of 2^-64. */
static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* name + suffix when that fits in a label value; else the longest prefix of name that leaves
 * room for "-", the whole name's hash and the suffix, cut back to an alphanumeric character so
 * that the result is still a valid object name and label value. */
static void fit(const char *name, const char *suffix, char out[KUBE_LABEL_VALUE_MAX + 1])
{
    size_t n = strlen(name), s = strlen(suffix);
    if (n + s <= KUBE_LABEL_VALUE_MAX) {
        snprintf(out, KUBE_LABEL_VALUE_MAX + 1, "%s%s", name, suffix);
        return;
    }
    size_t keep = KUBE_LABEL_VALUE_MAX - s - 1 - HASH_HEX;
    while (keep > 0 && !isalnum((unsigned char)name[keep - 1]))
        keep--;
    snprintf(out, KUBE_LABEL_VALUE_MAX + 1, "%.*s%s%0*llx%s", (int)keep, name, keep ? "-" : "",
             HASH_HEX, (unsigned long long)fnv1a64(name), suffix);
}

void kube_platform_clone_name(const char *deployment, char out[KUBE_LABEL_VALUE_MAX + 1])
{
    fit(deployment, CLONE_SUFFIX, out);
}

void kube_platform_clone_label(const char *deployment, char out[KUBE_LABEL_VALUE_MAX + 1])
{
    fit(deployment, "", out);
}

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

/* Edits a container in place: the worker env var (replacing any valueFrom) and resources.
 * for_patch: the entry is part of a strategic merge patch, where it merges with the stored one
 * by name, so a stored valueFrom must be deleted explicitly (null). */
static int set_container(cJSON *ctr, const char *env_name, const struct variant *v, bool for_patch)
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
        !cJSON_AddStringToObject(e, "value", workers) ||
        (for_patch && !cJSON_AddNullToObject(e, "valueFrom"))) {
        cJSON_Delete(e);
        return -ENOMEM;
    }
    if (!cJSON_AddItemToArray(env, e)) {
        cJSON_Delete(e);
        return -ENOMEM;
    }
    cJSON *res = obj_child(ctr, "resources");
    return res ? set_resources(res, v) : -ENOMEM;
}

/* The strategic merge patch for a variant: the container's env and resources (merged by name,
 * so other containers and env vars stay), the variant's template annotation, and for the
 * clone its replica count (one, or a scale-out's). */
char *kube__plat_variant_patch(const struct kplat *k, const struct variant *v)
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
    if (!cJSON_AddItemToArray(ctrs, ctr)) {
        cJSON_Delete(ctr);
        goto out;
    }
    if (!cJSON_AddStringToObject(ann, KUBE_ANN_VARIANT, v->spec) ||
        !cJSON_AddStringToObject(ctr, "name", k->container) ||
        set_container(ctr, k->workers_env, v, true) != 0)
        goto out;
    if (k->mode == KUBE_MODE_CLONE &&
        !cJSON_AddNumberToObject(spec, "replicas", k->replicas > 1 ? k->replicas : 1))
        goto out;
    out = cJSON_PrintUnformatted(p);
out:
    cJSON_Delete(p);
    return out;
}

cJSON *kube__plat_build_clone(const struct kplat *k, const struct variant *v)
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
    if (!cJSON_AddItemToArray(refs, ref))
        goto fail_ref;
    if (put_str(labels, KUBE_LABEL_CLONE, k->clone_label) ||
        put_str(labels, KUBE_LABEL_RUN, k->run_id) ||
        put_str(labels, "app.kubernetes.io/managed-by", "sizeup") ||
        put_str(ann, KUBE_ANN_CLONE_OF, k->name) || put_str(ref, "apiVersion", "apps/v1") ||
        put_str(ref, "kind", "Deployment") || put_str(ref, "name", k->name) ||
        put_str(ref, "uid", uid ? uid : "") || !cJSON_AddFalseToObject(ref, "controller") ||
        !cJSON_AddFalseToObject(ref, "blockOwnerDeletion"))
        goto fail;

    spec = cJSON_Duplicate(cJSON_GetObjectItem(k->original, "spec"), 1);
    if (!spec || !cJSON_IsObject(spec)) {
        cJSON_Delete(spec);
        goto fail;
    }
    if (!cJSON_AddItemToObject(d, "spec", spec)) {
        cJSON_Delete(spec);
        goto fail;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "replicas");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "paused");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "selector");
    if (!cJSON_AddNumberToObject(spec, "replicas", k->replicas > 1 ? k->replicas : 1))
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
    if (!tl || !tann || put_str(ml, KUBE_LABEL_CLONE, k->clone_label) ||
        put_str(ml, KUBE_LABEL_RUN, k->run_id) || put_str(tl, KUBE_LABEL_CLONE, k->clone_label) ||
        put_str(tl, KUBE_LABEL_RUN, k->run_id) || put_str(tann, KUBE_ANN_VARIANT, v->spec))
        goto fail;
    pspec = obj_child(tpl, "spec");
    ctr = pspec ? kube_deploy_container(d, k->container) : NULL;
    if (!ctr || set_container(ctr, k->workers_env, v, false))
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
