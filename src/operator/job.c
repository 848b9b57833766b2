/* job_run: one job from the Deployment as read to its end. It reads the Deployment, checks it
 * is still the one the event was about, and hands a START to the request's checks and sweep
 * (job_request.c, job_run.c) or a RECOVER to the resume (job_request.c). What those files share
 * with this one (status, Events, the sizing ConfigMap, retries) is in job_util.c, so the calls
 * run one way. */

#include "operator/job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/objects.h"
#include "operator/job_int.h"

#define MAX_SIZEUP_ANNOTATIONS 32

static int stop_client(void *ctx)
{
    const struct job_env *env = ctx;
    return *env->hard_stop != 0;
}

static void on_request(void *ctx, const char *verb, long code, double seconds)
{
    const struct job_env *env = ctx;
    (void)verb;
    (void)seconds;
    metrics_api_request(env->m, (int)code);
}

/* Collects the sizeup.dev/ annotations of the Deployment (borrowed from x->deploy). */
static size_t collect_annotations(const cJSON *deploy, struct annot_kv *kv, size_t max)
{
    const cJSON *ann = kube_path_get(deploy, "metadata.annotations");
    const cJSON *it;
    size_t n = 0;

    cJSON_ArrayForEach(it, ann)
    {
        if (n == max)
            break;
        if (!cJSON_IsString(it) || !it->string ||
            strncmp(it->string, ANNOT_PREFIX, sizeof(ANNOT_PREFIX) - 1) != 0)
            continue;
        kv[n].key = it->string;
        kv[n].value = it->valuestring;
        n++;
    }
    return n;
}

static int run_start(struct jctx *x, char *err)
{
    struct annot_kv kv[MAX_SIZEUP_ANNOTATIONS];
    char reason[ERR_LEN] = "", warn[ERR_LEN] = "";
    const char *sweep = kube_annotation(x->deploy, ANNOT_SWEEP);

    if ((!sweep || !*sweep) && x->j->attempt > 1) {
        /* Withdrawn while waiting for a retry: the status must not keep saying pending. */
        log_info("sweep.cancelled", "namespace=%s deployment=%s while=retry-wait", x->j->ns,
                 x->j->name);
        return job_set_status(x, "failed: cancelled (sizeup.dev/sweep removed)", NULL, err);
    }
    if (!sweep || !*sweep)
        return 0; /* withdrawn before we got to it */
    snprintf(x->j->handled, sizeof(x->j->handled), "%.*s", (int)sizeof(x->j->handled) - 1, sweep);
    size_t n = collect_annotations(x->deploy, kv, MAX_SIZEUP_ANNOTATIONS);
    int rc = annot_parse(kv, n, &x->req, warn, reason);
    if (rc == -ENOENT)
        return 0;
    if (warn[0])
        job_event(x, "Warning", "UnknownAnnotation", "%s", warn);
    if (rc == -EINVAL)
        return job_fail_request(x, reason, err);
    if (rc)
        return err_set(err, rc, "%s", reason);
    return job_sweep(x, err);
}

int job_run(const struct job_env *env, struct job *j, char *err)
{
    struct jctx x = {0};
    struct kube_client_opts co = {0};
    struct kube_meta meta;
    int rc;

    x.env = env;
    x.j = j;
    j->handled[0] = '\0';
    job_sizing_name(j->name, x.cm_name);
    co.stop = stop_client;
    co.stop_ctx = (void *)env;
    co.on_request = on_request;
    co.on_request_ctx = (void *)env;
    co.user_agent = "sizeup-operator";
    rc = kube_client_new(env->cfg, &co, &x.c, err);
    if (rc)
        goto out;
    rc = kube_get(x.c, &KUBE_DEPLOYMENTS, j->ns, j->name, &x.deploy, err);
    if (rc == -ENOENT) {
        log_info("sweep.gone", "namespace=%s deployment=%s", j->ns, j->name);
        rc = 0;
        goto out;
    }
    if (rc)
        goto out;
    if (kube_meta_read(x.deploy, &meta) != 0 || strcmp(meta.uid, j->uid) != 0) {
        /* Re-created under the same name since the event: its own events will come. */
        log_info("sweep.gone", "namespace=%s deployment=%s why=uid-changed", j->ns, j->name);
        goto out;
    }
    if (j->kind == CACHE_RECOVER)
        rc = job_recover(&x, err);
    else
        rc = run_start(&x, err);
out:
    annot_request_free(&x.req);
    cJSON_Delete(x.deploy);
    kube_client_free(x.c);
    return rc;
}
