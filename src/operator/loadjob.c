/* Load from several pods: each load run as an Indexed Job of `sizeup loadtest` workers, their
 * results pulled from the pod IPs the API gives and merged exactly (see loadjob.h). */

#include "operator/loadjob.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/jb.h"
#include "core/log.h"
#include "core/quantity.h"
#include "kube/objects.h"
#include "load/merge.h"
#include "load/report.h"
#include "load/spread.h"

static const struct kube_resource JOBS = {"batch", "v1", "jobs", 1};

#define INDEX_KEY "batch.kubernetes.io/job-completion-index"
#define UID_LABEL "batch.kubernetes.io/controller-uid"
#define POLL_NS   250000000L

struct loadjob {
    const struct loadjob_config *c; /* borrowed */
};

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

int loadjob_config_from_env(struct loadjob_config *c, char *err)
{
    const char *delay = env_or("SIZEUP_GENERATOR_START_DELAY", NULL);

    c->image = env_or("SIZEUP_GENERATOR_IMAGE", NULL);
    c->pull_secrets = env_or("SIZEUP_GENERATOR_PULL_SECRETS", NULL);
    c->service_account = env_or("SIZEUP_GENERATOR_SERVICE_ACCOUNT", NULL);
    c->cpu = env_or("SIZEUP_GENERATOR_CPU", "1");
    c->memory = env_or("SIZEUP_GENERATOR_MEMORY", "256Mi");
    c->owner_pod = env_or("POD_NAME", NULL);
    c->owner_uid = env_or("POD_UID", NULL);
    c->ns = env_or("POD_NAMESPACE", NULL);
    if (delay) {
        int64_t us;
        if (qty_parse_duration(delay, &us, err) != 0)
            return err_wrap(err, -EINVAL, "SIZEUP_GENERATOR_START_DELAY");
        c->start_delay_s = (double)us / 1e6;
    }
    if (!c->image)
        return err_set(err, -ENOTSUP,
                       "generator pods need SIZEUP_GENERATOR_IMAGE (the chart "
                       "sets it to the operator's image)");
    if (!c->ns)
        return err_set(err, -ENOTSUP, "generator pods need POD_NAMESPACE (the operator's own)");
    return 0;
}

/* ---- what the workers get ----------------------------------------------------------------- */

static int add_duration(cJSON *o, const char *key, int64_t us)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lldus", (long long)us);
    return cJSON_AddStringToObject(o, key, buf) ? 0 : -ENOMEM;
}

char *loadjob_profile_json(const struct profile *p)
{
    cJSON *o = cJSON_CreateObject(), *reqs, *stages;
    char *out = NULL;
    int rc = 0;

    if (!o)
        return NULL;
    if (p->nstages == 0 && p->rate > 0)
        rc |= !cJSON_AddNumberToObject(o, "rate", p->rate);
    else if (p->nstages == 0)
        rc |= !cJSON_AddNumberToObject(o, "users", p->users);
    if (p->nstages == 0) /* with stages, their lengths add up to the duration */
        rc |= add_duration(o, "duration", p->duration_us);
    rc |= add_duration(o, "warmup", p->warmup_us);
    rc |= add_duration(o, "timeout", p->timeout_us);
    stages = p->nstages ? cJSON_AddArrayToObject(o, "stages") : NULL;
    rc |= p->nstages && !stages;
    for (size_t i = 0; stages && i < p->nstages; i++) {
        cJSON *s = cJSON_CreateObject();
        rc |= !s || !cJSON_AddItemToArray(stages, s);
        if (!s)
            break;
        rc |= add_duration(s, "duration", p->stages[i].duration_us);
        if (p->stages[i].users >= 0)
            rc |= !cJSON_AddNumberToObject(s, "users", p->stages[i].users);
        else
            rc |= !cJSON_AddNumberToObject(s, "rate", p->stages[i].rate);
    }
    reqs = cJSON_AddArrayToObject(o, "requests");
    for (size_t i = 0; reqs && i < p->nrequests; i++) {
        const struct profile_request *r = &p->requests[i];
        cJSON *q = cJSON_CreateObject();
        rc |= !q || !cJSON_AddItemToArray(reqs, q);
        if (!q)
            break;
        rc |= !cJSON_AddStringToObject(q, "name", r->name ? r->name : "");
        rc |= !cJSON_AddStringToObject(q, "method", r->method ? r->method : "GET");
        rc |= !cJSON_AddStringToObject(q, "path", r->path ? r->path : "/");
        rc |= !cJSON_AddNumberToObject(q, "weight", r->weight);
        if (r->body)
            rc |= !cJSON_AddStringToObject(q, "body", r->body);
        cJSON *h = r->nheaders ? cJSON_AddObjectToObject(q, "headers") : NULL;
        rc |= r->nheaders && !h;
        for (size_t k = 0; h && k < r->nheaders; k++)
            rc |= !cJSON_AddStringToObject(h, r->headers[k].name, r->headers[k].value);
    }
    rc |= !reqs;
    if (!rc)
        out = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return out;
}

/* The profile's planned length in seconds (what one worker runs after its start). */
static double planned_s(const struct profile *p)
{
    double s = (double)p->warmup_us / 1e6;
    if (p->nstages == 0)
        return s + (double)p->duration_us / 1e6;
    for (size_t i = 0; i < p->nstages; i++)
        s += (double)p->stages[i].duration_us / 1e6;
    return s;
}

static cJSON *str_array(const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateString(v[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

/* The container's restricted-standard securityContext: non-root, no escalation, no
 * capabilities, RuntimeDefault seccomp, read-only root (the worker writes nothing). */
static const char SECURITY_CONTEXT[] =
    "{\"runAsNonRoot\":true,\"runAsUser\":65532,\"runAsGroup\":65532,"
    "\"allowPrivilegeEscalation\":false,\"privileged\":false,\"readOnlyRootFilesystem\":true,"
    "\"capabilities\":{\"drop\":[\"ALL\"]},\"seccompProfile\":{\"type\":\"RuntimeDefault\"}}";

static cJSON *labels(const struct loadjob_config *c)
{
    cJSON *l = cJSON_CreateObject();
    if (!l || !cJSON_AddStringToObject(l, "app.kubernetes.io/managed-by", "sizeup") ||
        !cJSON_AddStringToObject(l, LOADJOB_LABEL_COMPONENT, LOADJOB_COMPONENT) ||
        (c->for_label && !cJSON_AddStringToObject(l, LOADJOB_LABEL_FOR, c->for_label))) {
        cJSON_Delete(l);
        return NULL;
    }
    return l;
}

static cJSON *container(const struct loadjob_config *c, const struct load_opts *o, double start_at,
                        const char *profile)
{
    char share[32], start[32], threads[16], serve[16], limits[160];
    const char *args[16 + 2 * LOAD_MAX_URLS];
    size_t n = 0;

    snprintf(share, sizeof(share), "$(JOB_COMPLETION_INDEX)/%u", c->generators);
    snprintf(start, sizeof(start), "%.3f", start_at);
    snprintf(serve, sizeof(serve), ":%d", LOADJOB_RESULT_PORT);
    args[n++] = "loadtest";
    /* A scale-out's replicas: every generator spreads its share over all of them, as the local
     * generator does (--url repeated). */
    for (size_t i = 0; o->nurls > 1 && i < o->nurls && i < LOAD_MAX_URLS; i++) {
        args[n++] = "--url";
        args[n++] = o->urls[i];
    }
    if (o->nurls <= 1) {
        args[n++] = "--url";
        args[n++] = o->url;
    }
    args[n++] = "--profile-env";
    args[n++] = LOADJOB_PROFILE_ENV;
    args[n++] = "--share";
    args[n++] = share;
    args[n++] = "--start-at";
    args[n++] = start;
    args[n++] = "--serve-result";
    args[n++] = serve;
    if (o->threads) {
        snprintf(threads, sizeof(threads), "%u", o->threads);
        args[n++] = "--threads";
        args[n++] = threads;
    }
    if (o->insecure)
        args[n++] = "--insecure";
    snprintf(limits, sizeof(limits), "{\"cpu\":\"%s\",\"memory\":\"%s\"}", c->cpu, c->memory);

    cJSON *k = cJSON_CreateObject(), *env, *e, *ports, *port, *res;
    if (!k)
        return NULL;
    int bad = !cJSON_AddStringToObject(k, "name", "load") ||
              !cJSON_AddStringToObject(k, "image", c->image) ||
              !jb_attach(k, "args", str_array(args, n));
    env = cJSON_AddArrayToObject(k, "env");
    e = cJSON_CreateObject();
    bad |= !jb_attach(env, NULL, e) || !cJSON_AddStringToObject(e, "name", LOADJOB_PROFILE_ENV) ||
           !cJSON_AddStringToObject(e, "value", profile);
    ports = cJSON_AddArrayToObject(k, "ports");
    port = cJSON_CreateObject();
    bad |= !jb_attach(ports, NULL, port) || !cJSON_AddStringToObject(port, "name", "result") ||
           !cJSON_AddNumberToObject(port, "containerPort", LOADJOB_RESULT_PORT);
    res = cJSON_AddObjectToObject(k, "resources");
    bad |= !res || !jb_attach(res, "limits", cJSON_Parse(limits)) ||
           !jb_attach(res, "requests", cJSON_Parse(limits)) ||
           !jb_attach(k, "securityContext", cJSON_Parse(SECURITY_CONTEXT));
    if (bad) {
        cJSON_Delete(k);
        return NULL;
    }
    return k;
}

static int add_pull_secrets(cJSON *spec, const char *list)
{
    char buf[1024], *save = NULL;
    cJSON *a;

    if (!list || !*list)
        return 0;
    a = cJSON_AddArrayToObject(spec, "imagePullSecrets");
    if (!a)
        return -ENOMEM;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        cJSON *s = cJSON_CreateObject();
        if (!s || !cJSON_AddItemToArray(a, s) || !cJSON_AddStringToObject(s, "name", t))
            return -ENOMEM;
    }
    return 0;
}

cJSON *loadjob_job_object(const struct loadjob_config *c, const struct load_opts *o,
                          double start_at)
{
    char *profile = loadjob_profile_json(o->profile);
    cJSON *job = cJSON_CreateObject(), *meta, *spec, *tpl, *tmeta, *pspec, *cs, *k;
    double run_s = planned_s(o->profile);
    /* Past the shared start, the run and the time to report twice over, the Job is ended by
     * Kubernetes itself should nobody be left to delete it. */
    double active_s = fmax(0, start_at - wall_now()) + run_s + LOADJOB_REPORT_WAIT_S * 2.0;
    int bad;

    if (!job || !profile)
        goto fail;
    bad = !cJSON_AddStringToObject(job, "apiVersion", "batch/v1") ||
          !cJSON_AddStringToObject(job, "kind", "Job");
    meta = cJSON_AddObjectToObject(job, "metadata");
    bad |= !meta || !cJSON_AddStringToObject(meta, "generateName", "sizeup-load-") ||
           !jb_attach(meta, "labels", labels(c));
    if (!bad && c->owner_pod && c->owner_uid) {
        /* The operator's pod owns the Job: should the operator vanish for good, the garbage
         * collector removes the Job and its pods with it. */
        cJSON *refs = cJSON_AddArrayToObject(meta, "ownerReferences");
        cJSON *r = cJSON_CreateObject();
        bad |= !jb_attach(refs, NULL, r) || !cJSON_AddStringToObject(r, "apiVersion", "v1") ||
               !cJSON_AddStringToObject(r, "kind", "Pod") ||
               !cJSON_AddStringToObject(r, "name", c->owner_pod) ||
               !cJSON_AddStringToObject(r, "uid", c->owner_uid);
    }
    spec = cJSON_AddObjectToObject(job, "spec");
    bad |= !spec || !cJSON_AddStringToObject(spec, "completionMode", "Indexed") ||
           !cJSON_AddNumberToObject(spec, "completions", c->generators) ||
           !cJSON_AddNumberToObject(spec, "parallelism", c->generators) ||
           /* A worker that fails is not retried: its share would start late. */
           !cJSON_AddNumberToObject(spec, "backoffLimit", 0) ||
           !cJSON_AddNumberToObject(spec, "ttlSecondsAfterFinished", LOADJOB_TTL_S) ||
           !cJSON_AddNumberToObject(spec, "activeDeadlineSeconds", ceil(active_s));
    tpl = spec ? cJSON_AddObjectToObject(spec, "template") : NULL;
    tmeta = tpl ? cJSON_AddObjectToObject(tpl, "metadata") : NULL;
    bad |= !tmeta || !jb_attach(tmeta, "labels", labels(c));
    pspec = tpl ? cJSON_AddObjectToObject(tpl, "spec") : NULL;
    bad |= !pspec || !cJSON_AddStringToObject(pspec, "restartPolicy", "Never") ||
           /* The workers talk to the target and to nobody else: no API token at all. */
           !cJSON_AddFalseToObject(pspec, "automountServiceAccountToken") ||
           !cJSON_AddFalseToObject(pspec, "enableServiceLinks") ||
           !cJSON_AddNumberToObject(pspec, "terminationGracePeriodSeconds", 5) ||
           !jb_attach(pspec, "securityContext",
                      cJSON_Parse("{\"runAsNonRoot\":true,\"runAsUser\":65532,"
                                  "\"seccompProfile\":{\"type\":"
                                  "\"RuntimeDefault\"}}"));
    if (!bad && c->service_account)
        bad |= !cJSON_AddStringToObject(pspec, "serviceAccountName", c->service_account);
    if (!bad)
        bad |= add_pull_secrets(pspec, c->pull_secrets) != 0;
    cs = pspec ? cJSON_AddArrayToObject(pspec, "containers") : NULL;
    k = cs ? container(c, o, start_at, profile) : NULL;
    bad |= !jb_attach(cs, NULL, k);
    if (bad)
        goto fail;
    free(profile);
    return job;
fail:
    free(profile);
    cJSON_Delete(job);
    return NULL;
}

/* ---- one run ------------------------------------------------------------------------------ */

struct gen {
    char pod_uid[64];
    char ip[64];
    bool fetched;
};

struct run {
    struct loadjob *lj;
    const struct load_opts *o;
    char job[254];
    char uid[64];
    double start_at, end_at, deadline, late_max;
    unsigned n;
    bool no_events;            /* the Events of our namespace cannot be listed */
    struct gen *g;             /* owned array of n */
    struct load_result merged; /* the parts so far */
};

static int incomplete(struct run *r, unsigned idx, char *err, const char *fmt, const char *what)
{
    char msg[ERR_LEN];
    snprintf(msg, sizeof(msg), fmt, what);
    log_warn("loadjob.incomplete", "job=%s generator=%u of=%u reason=\"%s\"", r->job, idx, r->n,
             msg);
    return err_set(err, LOAD_SOURCE_EINCOMPLETE, "generator %u of %u %s", idx, r->n, msg);
}

/* Checks and merges worker idx's document. */
static int take(struct run *r, unsigned idx, const char *body, char *err)
{
    struct load_result part;
    char why[ERR_LEN] = "";
    int rc = loadjob_result_parse(body, strlen(body), idx, r->n, r->late_max, &part, why);

    if (rc)
        return incomplete(r, idx, err, "%s", why);
    rc = load_result_merge(&r->merged, &part, &r->o->profile->thresholds, why);
    if (rc) {
        load_result_free(&part);
        return incomplete(r, idx, err, "%s", why);
    }
    /* Each part's histogram in the log: anyone can check the merge against its parts. */
    cJSON *pj = report_json(&part);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(pj, "latency_hist");
    log_info("loadjob.part", "job=%s generator=%u of=%u requests=%llu latency_hist=%s", r->job, idx,
             r->n, (unsigned long long)part.total.requests,
             cJSON_IsString(h) && strlen(h->valuestring) < 1500 ? h->valuestring : "-");
    cJSON_Delete(pj);
    if (r->lj->c->on_part)
        r->lj->c->on_part(r->lj->c->on_part_ud, idx, &part);
    load_result_free(&part);
    return 0;
}

/* Why a pod of ours ended without handing its result over, from its container status. */
static void pod_end_reason(const cJSON *pod, char *out, size_t len)
{
    const cJSON *cs = kube_path_get(pod, "status.containerStatuses");
    const cJSON *c0 = cJSON_IsArray(cs) ? cJSON_GetArrayItem(cs, 0) : NULL;
    const cJSON *t = c0 ? kube_path_get(c0, "state.terminated") : NULL;
    const cJSON *reason = t ? cJSON_GetObjectItemCaseSensitive(t, "reason") : NULL;
    const cJSON *code = t ? cJSON_GetObjectItemCaseSensitive(t, "exitCode") : NULL;
    const cJSON *sr = kube_path_get(pod, "status.reason");

    if (cJSON_IsString(sr))
        snprintf(out, len, "failed: %s", sr->valuestring); /* Evicted, DeadlineExceeded */
    else if (cJSON_IsString(reason) && cJSON_IsNumber(code))
        snprintf(out, len, "failed: %s, exit code %d", reason->valuestring, code->valueint);
    else
        snprintf(out, len, "failed");
}

static bool owned_by(const cJSON *pod, const char *uid)
{
    const cJSON *refs = kube_path_get(pod, "metadata.ownerReferences"), *ref;
    cJSON_ArrayForEach(ref, refs)
    {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(ref, "uid");
        if (cJSON_IsString(u) && strcmp(u->valuestring, uid) == 0)
            return true;
    }
    return false;
}

/* One look at the Job's pods: records their IPs, and fails the run for a pod that failed, was
 * deleted, or was replaced. A pod that failed is named before one being deleted: when a worker
 * fails, the Job controller deletes the others, and the cause is the failed one. */
static int watch_pods(struct run *r, char *err)
{
    kube_client_t *c = r->lj->c->client;
    char sel[128], why[ERR_LEN] = "";
    struct kube_list_opts lo = {0};
    cJSON *list = NULL, *pod;
    bool *seen = calloc(r->n, sizeof(*seen));
    int rc, failed = -1, gone = -1;
    const char *gone_why = "";

    if (!seen)
        return err_set(err, -ENOMEM, "out of memory");
    snprintf(sel, sizeof(sel), UID_LABEL "=%s", r->uid);
    lo.label_selector = sel;
    rc = kube_list(c, &KUBE_PODS, r->lj->c->ns, &lo, &list, err);
    if (rc)
        goto out;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *ix = kube_annotation(pod, INDEX_KEY);
        const cJSON *puid = kube_path_get(pod, "metadata.uid");
        struct kube_pod_info info;
        char *end = NULL;

        /* Only pods our Job owns count: a pod that merely carries the label is not ours. */
        if (!ix || !owned_by(pod, r->uid) || !cJSON_IsString(puid) ||
            kube_pod_info_read(pod, NULL, &info) != 0)
            continue;
        unsigned long k = strtoul(ix, &end, 10);
        if (*end || k >= r->n)
            continue;
        struct gen *g = &r->g[k];
        seen[k] = true;
        if (g->fetched)
            continue;
        if (strcmp(info.phase, "Failed") == 0 && failed < 0) {
            failed = (int)k;
            pod_end_reason(pod, why, sizeof(why));
        } else if (g->pod_uid[0] && strcmp(g->pod_uid, puid->valuestring) != 0 && gone < 0) {
            gone = (int)k;
            gone_why = "was replaced by another pod";
        } else if (info.deleting && gone < 0) {
            gone = (int)k;
            gone_why = "was evicted (its pod is being deleted)";
        }
        snprintf(g->pod_uid, sizeof(g->pod_uid), "%s", puid->valuestring);
        snprintf(g->ip, sizeof(g->ip), "%s", info.pod_ip);
    }
    for (unsigned k = 0; k < r->n && gone < 0; k++)
        if (r->g[k].pod_uid[0] && !seen[k] && !r->g[k].fetched) {
            gone = (int)k;
            gone_why = "was evicted (its pod is gone)";
        }
    if (failed >= 0)
        rc = incomplete(r, (unsigned)failed, err, "%s", why);
    else if (gone >= 0)
        rc = incomplete(r, (unsigned)gone, err, "%s", gone_why);
out:
    cJSON_Delete(list);
    free(seen);
    return rc;
}

/* Pulls every result that is ready; 0 when the pass went well (some may still be running). */
static int pull_results(struct run *r, unsigned *left, char *err)
{
    *left = 0;
    for (unsigned k = 0; k < r->n; k++) {
        struct gen *g = &r->g[k];
        char *body = NULL, e[ERR_LEN] = "";
        if (g->fetched)
            continue;
        if (!g->ip[0]) {
            (*left)++;
            continue;
        }
        int rc = loadjob_result_fetch(g->ip, &body, e);
        if (rc == -EAGAIN || rc == -EPROTO) {
            (*left)++; /* still running; a broken answer is retried until the deadline */
            continue;
        }
        if (rc)
            return err_set(err, rc, "%s", e);
        rc = take(r, k, body, err);
        free(body);
        if (rc)
            return rc;
        g->fetched = true;
    }
    return 0;
}

/* While a generator has no pod yet, the API may already say why it never will (admission
 * refused its pods, or the Job controller ended the Job): the run fails at once with those
 * words rather than waiting out the deadline for pods that will never come. */
static int refused(struct run *r, char *err)
{
    char why[ERR_LEN] = "";
    unsigned missing = r->n;

    for (unsigned k = 0; k < r->n; k++)
        if (!r->g[k].pod_uid[0]) {
            missing = k;
            break;
        }
    if (missing == r->n)
        return 0;
    int rc =
        loadjob_refusal(r->lj->c->client, r->lj->c->ns, r->job, r->uid, &r->no_events, why, err);
    if (rc || !why[0])
        return rc;
    return incomplete(r, missing, err, "%s", why);
}

static int sleep_poll(const struct load_opts *o)
{
    clock_sleep_us(POLL_NS / 1000);
    return o->stop && *o->stop ? -ECANCELED : 0;
}

static int follow(struct run *r, char *err)
{
    unsigned left = r->n;
    int rc;

    while (left > 0) {
        if (sleep_poll(r->o))
            return err_set(err, -ECANCELED, "load cancelled");
        rc = watch_pods(r, err);
        if (rc == 0)
            rc = refused(r, err);
        if (rc)
            return rc;
        if (wall_now() < r->end_at)
            continue; /* no worker can be done before the run's planned end */
        rc = pull_results(r, &left, err);
        if (rc)
            return rc;
        if (left > 0 && wall_now() > r->deadline) {
            for (unsigned k = 0; k < r->n; k++)
                if (!r->g[k].fetched)
                    return incomplete(r, k, err, "%s",
                                      r->g[k].ip[0] ? "did not report its result in time"
                                                    : "never ran (its pod got no address)");
        }
    }
    return 0;
}

static int create_job(struct run *r, char *err)
{
    cJSON *obj = loadjob_job_object(r->lj->c, r->o, r->start_at), *made = NULL;
    int rc;

    if (!obj)
        return err_set(err, -ENOMEM, "out of memory building the generator Job");
    rc = kube_create(r->lj->c->client, &JOBS, r->lj->c->ns, obj, &made, err);
    cJSON_Delete(obj);
    if (rc)
        return err_wrap(err, rc, "creating the generator Job");
    const cJSON *name = kube_path_get(made, "metadata.name");
    const cJSON *uid = kube_path_get(made, "metadata.uid");
    if (!cJSON_IsString(name) || !cJSON_IsString(uid)) {
        cJSON_Delete(made);
        return err_set(err, -EBADMSG, "the created Job has no name or uid");
    }
    snprintf(r->job, sizeof(r->job), "%s", name->valuestring);
    snprintf(r->uid, sizeof(r->uid), "%s", uid->valuestring);
    cJSON_Delete(made);
    log_info("loadjob.created", "namespace=%s job=%s generators=%u start_in_s=%.1f", r->lj->c->ns,
             r->job, r->n, r->start_at - wall_now());
    return 0;
}

static void delete_job(struct run *r)
{
    char e[ERR_LEN] = "";
    if (!r->job[0])
        return;
    /* Background: the Job's pods go with it (a Job's own default would orphan them). */
    int rc = kube_delete(r->lj->c->client, &JOBS, r->lj->c->ns, r->job, "Background", e);
    if (rc && rc != -ENOENT)
        log_warn("loadjob.delete", "namespace=%s job=%s error=\"%s\" ttl_s=%d", r->lj->c->ns,
                 r->job, e, LOADJOB_TTL_S);
}

static int loadjob_run(void *self, const struct load_opts *o, struct load_result *out, char *err)
{
    struct run r;
    int rc;

    memset(&r, 0, sizeof(r));
    memset(out, 0, sizeof(*out));
    r.lj = self;
    r.o = o;
    r.n = r.lj->c->generators;
    r.g = calloc(r.n, sizeof(*r.g));
    if (!r.g)
        return err_set(err, -ENOMEM, "out of memory");
    rc = load_result_init(&r.merged, o->profile);
    if (rc) {
        free(r.g);
        return err_set(err, rc, "out of memory");
    }
    double run_s = planned_s(o->profile);
    r.start_at =
        wall_now() + (r.lj->c->start_delay_s > 0 ? r.lj->c->start_delay_s : LOADJOB_START_DELAY_S);
    r.late_max = fmax(LOADJOB_LATE_MIN_S, 0.05 * run_s);
    /* The last open-loop share starts (n-1)/rate after the first: under a second in practice. */
    r.end_at = r.start_at + run_s + (o->profile->rate > 0 ? 1.0 / o->profile->rate * r.n : 0);
    r.deadline = r.end_at + LOADJOB_REPORT_WAIT_S;

    rc = create_job(&r, err);
    if (rc == 0)
        rc = follow(&r, err);
    delete_job(&r);
    if (rc == 0) {
        *out = r.merged;
        log_info("loadjob.merged", "job=%s generators=%u requests=%llu", r.job, r.n,
                 (unsigned long long)out->total.requests);
    } else {
        load_result_free(&r.merged);
    }
    free(r.g);
    return rc;
}

static unsigned loadjob_generators(const void *self)
{
    const struct loadjob *lj = self;
    return lj->c->generators;
}

static void loadjob_free(void *self)
{
    free(self);
}

static const struct load_source_ops loadjob_ops = {
    .name = "job",
    .run = loadjob_run,
    .generators = loadjob_generators,
    .free = loadjob_free,
};

int loadjob_source_new(const struct loadjob_config *c, struct load_source *out, char *err)
{
    if (!c->client || !c->ns || !c->image)
        return err_set(err, -EINVAL, "a generator Job needs a client, a namespace and an image");
    if (c->generators < 1 || c->generators > LOADJOB_MAX_GENERATORS)
        return err_set(err, -EINVAL, "generators: %u is not between 1 and %d", c->generators,
                       LOADJOB_MAX_GENERATORS);
    struct loadjob *lj = calloc(1, sizeof(*lj));
    if (!lj)
        return err_set(err, -ENOMEM, "out of memory");
    lj->c = c;
    out->ops = &loadjob_ops;
    out->self = lj;
    return 0;
}

int loadjob_delete_leftovers(kube_client_t *client, const char *ns, unsigned *deleted, char *err)
{
    struct kube_list_opts lo = {0};
    cJSON *list = NULL, *job;
    unsigned n = 0;
    int rc, first = 0;

    lo.label_selector =
        "app.kubernetes.io/managed-by=sizeup," LOADJOB_LABEL_COMPONENT "=" LOADJOB_COMPONENT;
    rc = kube_list(client, &JOBS, ns, &lo, &list, err);
    if (rc)
        return err_wrap(err, rc, "listing leftover generator Jobs");
    cJSON_ArrayForEach(job, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *name = kube_path_get(job, "metadata.name");
        char e[ERR_LEN] = "";
        if (!cJSON_IsString(name))
            continue;
        rc = kube_delete(client, &JOBS, ns, name->valuestring, "Background", e);
        if (rc == 0 || rc == -ENOENT) {
            n++;
            log_info("loadjob.leftover", "namespace=%s job=%s deleted=1", ns, name->valuestring);
        } else if (!first) {
            first = err_set(err, rc, "deleting leftover Job %s: %s", name->valuestring, e);
        }
    }
    cJSON_Delete(list);
    if (deleted)
        *deleted = n;
    return first;
}
