/* Field helpers for the handful of Kubernetes objects sizeup reads and writes. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/kube_int.h"
#include "kube/objects.h"

static const cJSON *child(const cJSON *o, const char *k)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = child(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long long num_of(const cJSON *o, const char *k)
{
    const cJSON *v = child(o, k);
    if (!cJSON_IsNumber(v) || v->valuedouble != v->valuedouble)
        return 0;
    if (v->valuedouble > 9e15)
        return (long long)9e15;
    if (v->valuedouble < -9e15)
        return (long long)-9e15;
    return (long long)v->valuedouble;
}

int kube_copy_field(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= len)
        return -EINVAL;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
    return 0;
}

const cJSON *kube_path_get(const cJSON *obj, const char *dotted)
{
    char key[128];
    const cJSON *cur = obj;
    while (cur && dotted && *dotted) {
        size_t n = strcspn(dotted, ".");
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, dotted, n);
        key[n] = '\0';
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, key) : NULL;
        dotted += n;
        if (*dotted == '.')
            dotted++;
    }
    return cur;
}

double kube_path_number(const cJSON *obj, const char *dotted, double dflt)
{
    const cJSON *v = kube_path_get(obj, dotted);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt;
}

const char *kube_path_string(const cJSON *obj, const char *dotted)
{
    const cJSON *v = kube_path_get(obj, dotted);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kube_meta_read(const cJSON *obj, struct kube_meta *out)
{
    const cJSON *md = child(obj, "metadata");
    memset(out, 0, sizeof(*out));
    const char *name = str_of(md, "name");
    if (!name || !name[0])
        return -EINVAL;
    if (kube_copy_field(out->name, sizeof(out->name), name) ||
        kube_copy_field(out->ns, sizeof(out->ns), str_of(md, "namespace")) ||
        kube_copy_field(out->uid, sizeof(out->uid), str_of(md, "uid")) ||
        kube_copy_field(out->resource_version, sizeof(out->resource_version),
                        str_of(md, "resourceVersion")))
        return -EINVAL;
    out->generation = num_of(md, "generation");
    return 0;
}

const char *kube_annotation(const cJSON *obj, const char *key)
{
    return str_of(child(child(obj, "metadata"), "annotations"), key);
}

const char *kube_label(const cJSON *obj, const char *key)
{
    return str_of(child(child(obj, "metadata"), "labels"), key);
}

/* Returns obj[key] as an object, creating it (or replacing a non-object) when missing. */
static cJSON *ensure_obj(cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(v))
        return v;
    if (v)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    return cJSON_AddObjectToObject(obj, key);
}

static int set_map(cJSON *obj, const char *map, const char *key, const char *value)
{
    cJSON *md = ensure_obj(obj, "metadata");
    cJSON *m = md ? ensure_obj(md, map) : NULL;
    if (!m)
        return -ENOMEM;
    cJSON_DeleteItemFromObjectCaseSensitive(m, key);
    if (value && !cJSON_AddStringToObject(m, key, value))
        return -ENOMEM;
    return 0;
}

int kube_set_annotation(cJSON *obj, const char *key, const char *value)
{
    return set_map(obj, "annotations", key, value);
}

int kube_set_label(cJSON *obj, const char *key, const char *value)
{
    return set_map(obj, "labels", key, value);
}

/* ---- Deployments -------------------------------------------------------------------------- */

int kube_deploy_status_read(const cJSON *d, struct kube_deploy_status *out)
{
    const cJSON *spec = child(d, "spec"), *st = child(d, "status");
    const cJSON *conds = child(st, "conditions"), *c;

    memset(out, 0, sizeof(*out));
    out->generation = num_of(child(d, "metadata"), "generation");
    out->replicas = cJSON_IsNumber(child(spec, "replicas")) ? (long)num_of(spec, "replicas") : 1;
    out->observed_generation = num_of(st, "observedGeneration");
    out->status_replicas = (long)num_of(st, "replicas");
    out->updated = (long)num_of(st, "updatedReplicas");
    out->ready = (long)num_of(st, "readyReplicas");
    out->available = (long)num_of(st, "availableReplicas");
    out->unavailable = (long)num_of(st, "unavailableReplicas");
    if (cJSON_IsArray(conds)) {
        cJSON_ArrayForEach(c, conds)
        {
            const char *type = str_of(c, "type"), *reason = str_of(c, "reason");
            const char *status = str_of(c, "status"), *m = str_of(c, "message");
            if (type && reason && strcmp(type, "Progressing") == 0 &&
                strcmp(reason, "ProgressDeadlineExceeded") == 0)
                out->progress_deadline_exceeded = 1;
            if (type && status && strcmp(type, "ReplicaFailure") == 0 &&
                strcmp(status, "True") == 0) {
                out->replica_failure = 1;
                snprintf(out->replica_failure_msg, sizeof(out->replica_failure_msg), "%s%s%s",
                         reason ? reason : "", reason && m ? ": " : "", m ? m : "");
                for (char *p = out->replica_failure_msg; *p; p++)
                    if ((unsigned char)*p < 0x20)
                        *p = ' ';
            }
        }
    }
    return 0;
}

int kube_deploy_rollout(const cJSON *d, enum kube_rollout *out, char *msg)
{
    struct kube_deploy_status s;
    const char *name = str_of(child(d, "metadata"), "name");

    if (!name)
        name = "?";
    int rc = kube_deploy_status_read(d, &s);
    if (rc)
        return rc;
    if (s.generation > s.observed_generation) {
        *out = KUBE_ROLLOUT_WAITING;
        err_set(msg, 0, "Waiting for deployment spec update to be observed...");
        return 0;
    }
    if (s.progress_deadline_exceeded) {
        *out = KUBE_ROLLOUT_FAILED;
        err_set(msg, 0, "deployment \"%s\" exceeded its progress deadline", name);
        return 0;
    }
    /* Pods refused at admission never appear: waiting for the deadline would only delay the
     * same answer. */
    if (s.replica_failure) {
        *out = KUBE_ROLLOUT_FAILED;
        err_set(msg, 0, "deployment \"%.64s\" cannot create pods: %s", name,
                s.replica_failure_msg[0] ? s.replica_failure_msg : "ReplicaFailure");
        return 0;
    }
    *out = KUBE_ROLLOUT_WAITING;
    if (s.updated < s.replicas)
        err_set(msg, 0,
                "Waiting for deployment \"%s\" rollout to finish: %ld out of %ld new replicas "
                "have been updated...",
                name, s.updated, s.replicas);
    else if (s.status_replicas > s.updated)
        err_set(msg, 0,
                "Waiting for deployment \"%s\" rollout to finish: %ld old replicas are pending "
                "termination...",
                name, s.status_replicas - s.updated);
    else if (s.available < s.updated)
        err_set(msg, 0,
                "Waiting for deployment \"%s\" rollout to finish: %ld of %ld updated replicas "
                "are available...",
                name, s.available, s.updated);
    else {
        *out = KUBE_ROLLOUT_DONE;
        err_set(msg, 0, "deployment \"%s\" successfully rolled out", name);
    }
    return 0;
}

int kube_deploy_selector(const cJSON *deploy, char *buf, size_t len)
{
    const cJSON *ml = kube_path_get(deploy, "spec.selector.matchLabels"), *l;
    size_t n = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(l, ml)
    {
        if (!cJSON_IsString(l))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s=%s", n ? "," : "", l->string, l->valuestring);
        if (w < 0 || (size_t)w >= len - n) {
            buf[0] = '\0';
            return -ENOSPC;
        }
        n += (size_t)w;
    }
    return n ? 0 : -EINVAL;
}

cJSON *kube_deploy_container(const cJSON *d, const char *name)
{
    cJSON *cs = (cJSON *)kube_path_get(d, "spec.template.spec.containers"), *c;
    if (!cJSON_IsArray(cs))
        return NULL;
    cJSON_ArrayForEach(c, cs)
    {
        const char *n = str_of(c, "name");
        if (!name || !name[0] || (n && strcmp(n, name) == 0))
            return cJSON_IsObject(c) ? c : NULL;
    }
    return NULL;
}

int kube_container_port(const cJSON *container)
{
    const cJSON *ports = child(container, "ports"), *p;
    cJSON_ArrayForEach(p, ports)
    {
        long long v = num_of(p, "containerPort");
        if (v > 0 && v < 65536)
            return (int)v;
    }
    return 0;
}

const char *kube_container_env(const cJSON *container, const char *name)
{
    const cJSON *env = child(container, "env"), *e;
    cJSON_ArrayForEach(e, env)
    {
        const char *n = str_of(e, "name");
        if (n && strcmp(n, name) == 0)
            return str_of(e, "value");
    }
    return NULL;
}

/* ---- Pods --------------------------------------------------------------------------------- */

static int terminated_oom(const cJSON *state)
{
    const char *r = str_of(child(state, "terminated"), "reason");
    return r && strcmp(r, "OOMKilled") == 0;
}

int kube_pod_info_read(const cJSON *pod, const char *container, struct kube_pod_info *out)
{
    const cJSON *st = child(pod, "status"), *md = child(pod, "metadata"), *c;

    memset(out, 0, sizeof(*out));
    /* A name, phase or IP longer than Kubernetes allows is not a pod this code can name. */
    if (kube_copy_field(out->name, sizeof(out->name), str_of(md, "name")) ||
        kube_copy_field(out->phase, sizeof(out->phase), str_of(st, "phase")) ||
        kube_copy_field(out->pod_ip, sizeof(out->pod_ip), str_of(st, "podIP")))
        return -EINVAL;
    out->deleting = child(md, "deletionTimestamp") && !cJSON_IsNull(child(md, "deletionTimestamp"));
    cJSON_ArrayForEach(c, child(st, "conditions"))
    {
        const char *t = str_of(c, "type"), *v = str_of(c, "status");
        if (t && v && strcmp(t, "Ready") == 0)
            out->ready = strcmp(v, "True") == 0;
    }
    cJSON_ArrayForEach(c, child(st, "containerStatuses"))
    {
        const char *n = str_of(c, "name");
        if (container && container[0] && (!n || strcmp(n, container) != 0))
            continue;
        long long r = num_of(c, "restartCount");
        if (r > 0 && r < 1000000000)
            out->restarts += (int)r;
        if (terminated_oom(child(c, "lastState")) || terminated_oom(child(c, "state")))
            out->oom_killed = 1;
    }
    return 0;
}

/* ---- ConfigMaps --------------------------------------------------------------------------- */

struct cm_ctx {
    const char *const *keys;
    const char *const *values;
    size_t n;
    const cJSON *labels;
    const cJSON *owner;
};

static int owner_ref(const cJSON *owner, cJSON **out)
{
    const cJSON *md = child(owner, "metadata");
    const char *api = str_of(owner, "apiVersion"), *kind = str_of(owner, "kind");
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return -ENOMEM;
    if (!cJSON_AddStringToObject(r, "apiVersion", api ? api : "apps/v1") ||
        !cJSON_AddStringToObject(r, "kind", kind ? kind : "Deployment") ||
        !cJSON_AddStringToObject(r, "name", str_of(md, "name") ? str_of(md, "name") : "") ||
        !cJSON_AddStringToObject(r, "uid", str_of(md, "uid") ? str_of(md, "uid") : "") ||
        !cJSON_AddFalseToObject(r, "controller") ||
        !cJSON_AddFalseToObject(r, "blockOwnerDeletion")) {
        cJSON_Delete(r);
        return -ENOMEM;
    }
    *out = r;
    return 0;
}

static int cm_fill(void *ud, cJSON *cm, char *err)
{
    struct cm_ctx *x = ud;
    cJSON *data = cJSON_CreateObject(), *md, *l;
    if (!data)
        return err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < x->n; i++) {
        if (!cJSON_AddStringToObject(data, x->keys[i], x->values[i] ? x->values[i] : "")) {
            cJSON_Delete(data);
            return err_set(err, -ENOMEM, "out of memory");
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cm, "data");
    if (!cJSON_AddItemToObject(cm, "data", data)) {
        cJSON_Delete(data);
        return err_set(err, -ENOMEM, "out of memory");
    }
    cJSON_ArrayForEach(l, x->labels)
    {
        if (cJSON_IsString(l) && kube_set_label(cm, l->string, l->valuestring))
            return err_set(err, -ENOMEM, "out of memory");
    }
    md = ensure_obj(cm, "metadata");
    if (!md)
        return err_set(err, -ENOMEM, "out of memory");
    if (x->owner && !child(md, "ownerReferences")) {
        cJSON *refs = cJSON_AddArrayToObject(md, "ownerReferences"), *r = NULL;
        if (!refs || owner_ref(x->owner, &r))
            return err_set(err, -ENOMEM, "out of memory");
        if (!cJSON_AddItemToArray(refs, r)) {
            cJSON_Delete(r);
            return err_set(err, -ENOMEM, "out of memory");
        }
    }
    return 0;
}

int kube_configmap_put(kube_client_t *c, const char *ns, const char *name, const char *const *keys,
                       const char *const *values, size_t n, const cJSON *labels, const cJSON *owner,
                       char *err)
{
    struct cm_ctx x = {keys, values, n, labels, owner};
    int rc = 0;

    for (int attempt = 0; attempt < 3; attempt++) {
        rc = kube_update_retry(c, &KUBE_CONFIGMAPS, ns, name, 5, cm_fill, &x, NULL, err);
        if (rc != -ENOENT)
            return rc;
        cJSON *cm = cJSON_CreateObject();
        cJSON *md = cm ? cJSON_AddObjectToObject(cm, "metadata") : NULL;
        if (!md || !cJSON_AddStringToObject(cm, "apiVersion", "v1") ||
            !cJSON_AddStringToObject(cm, "kind", "ConfigMap") ||
            !cJSON_AddStringToObject(md, "name", name) ||
            !cJSON_AddStringToObject(md, "namespace", ns)) {
            cJSON_Delete(cm);
            return err_set(err, -ENOMEM, "out of memory");
        }
        rc = cm_fill(&x, cm, err);
        if (!rc)
            rc = kube_create(c, &KUBE_CONFIGMAPS, ns, cm, NULL, err);
        cJSON_Delete(cm);
        /* Created by someone else in between: go round and update it. */
        if (rc != -EEXIST)
            return rc;
    }
    return rc;
}

const char *kube_configmap_get_key(const cJSON *cm, const char *key)
{
    return str_of(child(cm, "data"), key);
}

/* ---- Events ------------------------------------------------------------------------------- */

int kube_event_emit(kube_client_t *c, const struct kube_event_spec *sp, char *err)
{
    const cJSON *rmd = child(sp->regarding, "metadata");
    const char *rname = str_of(rmd, "name"), *rns = str_of(rmd, "namespace");
    char name[300], when[48], note[1024];
    struct timespec now;
    cJSON *ev = NULL, *md, *reg;
    int rc = 0;

    if (!rname || !rns)
        return err_set(err, -EINVAL, "event: the regarding object has no name or namespace");
    clock_gettime(CLOCK_REALTIME, &now);
    if (kube_time_format(&now, 1, when, sizeof(when)) != 0)
        return err_set(err, -ENOSPC, "event: the time does not fit");
    snprintf(name, sizeof(name), "%.200s.%llx%04x", rname,
             (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec,
             (unsigned)(kube__seed(&now) & 0xffff));
    snprintf(note, sizeof(note), "%s", sp->note ? sp->note : "");
    const char *api = sp->api_version ? sp->api_version : str_of(sp->regarding, "apiVersion");
    const char *kind = sp->kind ? sp->kind : str_of(sp->regarding, "kind");

    ev = cJSON_CreateObject();
    if (!ev)
        goto oom;
    md = cJSON_AddObjectToObject(ev, "metadata");
    reg = cJSON_AddObjectToObject(ev, "regarding");
    if (!md || !reg || !cJSON_AddStringToObject(ev, "apiVersion", "events.k8s.io/v1") ||
        !cJSON_AddStringToObject(ev, "kind", "Event") ||
        !cJSON_AddStringToObject(md, "name", name) ||
        !cJSON_AddStringToObject(md, "namespace", rns) ||
        !cJSON_AddStringToObject(ev, "eventTime", when) ||
        !cJSON_AddStringToObject(ev, "reportingController",
                                 sp->reporting_controller ? sp->reporting_controller
                                                          : "sizeup.dev/operator") ||
        !cJSON_AddStringToObject(ev, "reportingInstance",
                                 sp->reporting_instance ? sp->reporting_instance : "sizeup") ||
        !cJSON_AddStringToObject(ev, "action", sp->action ? sp->action : "Sweep") ||
        !cJSON_AddStringToObject(ev, "reason", sp->reason ? sp->reason : "Unknown") ||
        !cJSON_AddStringToObject(ev, "note", note) ||
        !cJSON_AddStringToObject(ev, "type", sp->type ? sp->type : "Normal") ||
        !cJSON_AddStringToObject(reg, "apiVersion", api ? api : "apps/v1") ||
        !cJSON_AddStringToObject(reg, "kind", kind ? kind : "Deployment") ||
        !cJSON_AddStringToObject(reg, "name", rname) ||
        !cJSON_AddStringToObject(reg, "namespace", rns))
        goto oom;
    if (str_of(rmd, "uid") && !cJSON_AddStringToObject(reg, "uid", str_of(rmd, "uid")))
        goto oom;
    if (str_of(rmd, "resourceVersion") &&
        !cJSON_AddStringToObject(reg, "resourceVersion", str_of(rmd, "resourceVersion")))
        goto oom;
    rc = kube_create(c, &KUBE_EVENTS, rns, ev, NULL, err);
    goto out;
oom:
    rc = err_set(err, -ENOMEM, "out of memory");
out:
    cJSON_Delete(ev);
    return rc;
}

/* ---- Leases ------------------------------------------------------------------------------- */

int kube_lease_read(const cJSON *lease, struct kube_lease *out)
{
    const cJSON *spec = child(lease, "spec");
    const char *s;
    memset(out, 0, sizeof(*out));
    if (kube_copy_field(out->holder, sizeof(out->holder), str_of(spec, "holderIdentity")) ||
        kube_copy_field(out->resource_version, sizeof(out->resource_version),
                        str_of(child(lease, "metadata"), "resourceVersion")))
        return -EINVAL;
    out->duration_s = (int)num_of(spec, "leaseDurationSeconds");
    out->transitions = (int)num_of(spec, "leaseTransitions");
    /* A time that does not parse reads as never (zero): a lease nobody renewed. */
    if ((s = str_of(spec, "acquireTime")) != NULL && kube_time_parse(s, &out->acquire_time) != 0)
        out->acquire_time = (struct timespec){0};
    if ((s = str_of(spec, "renewTime")) != NULL && kube_time_parse(s, &out->renew_time) != 0)
        out->renew_time = (struct timespec){0};
    return 0;
}

/* Replaces spec[key] with a string (or removes it when v is NULL). */
static int spec_set_str(cJSON *spec, const char *key, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(spec, key);
    if (v && !cJSON_AddStringToObject(spec, key, v))
        return -ENOMEM;
    return 0;
}

static int spec_set_num(cJSON *spec, const char *key, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(spec, key);
    return cJSON_AddNumberToObject(spec, key, v) ? 0 : -ENOMEM;
}

int kube_lease_acquire(kube_client_t *c, const char *ns, const char *name, const char *identity,
                       int duration_s, int *leader, char *err)
{
    cJSON *lease = NULL, *spec, *md;
    struct kube_lease l;
    struct timespec now;
    char when[48];
    int rc;

    *leader = 0;
    if (duration_s <= 0)
        duration_s = 15;
    clock_gettime(CLOCK_REALTIME, &now);
    if (kube_time_format(&now, 1, when, sizeof(when)) != 0)
        return err_set(err, -ENOSPC, "lease: the time does not fit");
    rc = kube_get(c, &KUBE_LEASES, ns, name, &lease, err);
    if (rc == -ENOENT) {
        cJSON_Delete(lease);
        lease = cJSON_CreateObject();
        md = lease ? cJSON_AddObjectToObject(lease, "metadata") : NULL;
        spec = lease ? cJSON_AddObjectToObject(lease, "spec") : NULL;
        if (!md || !spec ||
            !cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1") ||
            !cJSON_AddStringToObject(lease, "kind", "Lease") ||
            !cJSON_AddStringToObject(md, "name", name) ||
            !cJSON_AddStringToObject(md, "namespace", ns) ||
            spec_set_str(spec, "holderIdentity", identity) ||
            spec_set_num(spec, "leaseDurationSeconds", duration_s) ||
            spec_set_str(spec, "acquireTime", when) || spec_set_str(spec, "renewTime", when) ||
            spec_set_num(spec, "leaseTransitions", 0)) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        rc = kube_create(c, &KUBE_LEASES, ns, lease, NULL, err);
        if (rc == -EEXIST)
            rc = 0; /* another candidate created it first */
        else if (rc == 0)
            *leader = 1;
        goto out;
    }
    if (rc)
        goto out;
    if (!lease || kube_lease_read(lease, &l) != 0) {
        rc = err_set(err, -EBADMSG, "lease %s/%s: unreadable", ns, name);
        goto out;
    }
    int mine = strcmp(l.holder, identity) == 0;
    int expired = l.holder[0] == '\0' ||
                  l.renew_time.tv_sec + (l.duration_s > 0 ? l.duration_s : duration_s) < now.tv_sec;
    if (!mine && !expired)
        goto out;
    spec = ensure_obj(lease, "spec");
    if (!spec || spec_set_str(spec, "renewTime", when) ||
        spec_set_num(spec, "leaseDurationSeconds", duration_s)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (!mine && (spec_set_str(spec, "holderIdentity", identity) ||
                  spec_set_str(spec, "acquireTime", when) ||
                  spec_set_num(spec, "leaseTransitions", l.transitions + 1))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* The PUT carries the resourceVersion we read: of two candidates, one gets 409. */
    rc = kube_update(c, &KUBE_LEASES, ns, name, lease, NULL, err);
    if (rc == KUBE_ECONFLICT)
        rc = 0;
    else if (rc == 0) {
        *leader = 1;
        if (!mine)
            log_info("kube.lease.acquired", "lease=%s/%s identity=%s previous=%s", ns, name,
                     identity, l.holder[0] ? l.holder : "none");
    }
out:
    cJSON_Delete(lease);
    return rc;
}

int kube_lease_release(kube_client_t *c, const char *ns, const char *name, const char *identity,
                       char *err)
{
    cJSON *lease = NULL, *spec;
    struct kube_lease l;
    struct timespec now;
    char when[48];
    int rc = kube_get(c, &KUBE_LEASES, ns, name, &lease, err);

    if (rc == -ENOENT) {
        rc = 0;
        goto out;
    }
    if (rc)
        goto out;
    if (!lease || kube_lease_read(lease, &l) != 0 || strcmp(l.holder, identity) != 0)
        goto out;
    clock_gettime(CLOCK_REALTIME, &now);
    if (kube_time_format(&now, 1, when, sizeof(when)) != 0) {
        rc = err_set(err, -ENOSPC, "lease: the time does not fit");
        goto out;
    }
    spec = ensure_obj(lease, "spec");
    /* As client-go does: no holder, a one-second duration, so a successor takes it at once. */
    if (!spec || spec_set_str(spec, "holderIdentity", NULL) ||
        spec_set_num(spec, "leaseDurationSeconds", 1) || spec_set_str(spec, "renewTime", when)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    rc = kube_update(c, &KUBE_LEASES, ns, name, lease, NULL, err);
out:
    cJSON_Delete(lease);
    return rc;
}
