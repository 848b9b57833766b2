/* What the job files share (job.h, job_int.h): the job's writes to the API (the status
 * annotation, Events, the sizing ConfigMap, a refused request), the retry policy, and log-safe
 * text. job.c, job_request.c and job_run.c call these; nothing here calls back into them. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/objects.h"
#include "kube/platform.h"
#include "operator/job_int.h"

const char *job_log_safe(const char *s, char *out, size_t len)
{
    size_t i = 0;
    if (!len)
        return out;
    for (; s && s[i] && i + 1 < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[i] = ch == '"' ? '\'' : ch == '\\' ? '/' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    out[i] = '\0';
    return out;
}

int job_retryable(int rc)
{
    /* Conflicts outlasting the client's own retries, throttling and server errors pass;
     * anything else (a bad request, a refusal, a missing object) would fail again. */
    return rc == KUBE_ECONFLICT || rc == -EBUSY || rc == -EIO;
}

int job_retry_delay_s(int attempt)
{
    int d = JOB_RETRY_BASE_S;

    if (attempt < 1 || attempt >= JOB_MAX_ATTEMPTS)
        return 0;
    for (int i = 1; i < attempt && d < JOB_RETRY_CAP_S; i++)
        d *= 2;
    return d < JOB_RETRY_CAP_S ? d : JOB_RETRY_CAP_S;
}

int job_set_status(struct jctx *x, const char *status, const char *last, char *err)
{
    int rc = -ENOMEM;
    cJSON *patch = cJSON_CreateObject();
    cJSON *meta = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
    cJSON *ann = meta ? cJSON_AddObjectToObject(meta, "annotations") : NULL;
    char *text = NULL;

    if (!ann || !cJSON_AddStringToObject(ann, ANNOT_STATUS, status) ||
        (last && !cJSON_AddStringToObject(ann, ANNOT_LAST_SWEEP, last)))
        goto out;
    text = cJSON_PrintUnformatted(patch);
    if (!text)
        goto out;
    rc = kube_patch(x->c, &KUBE_DEPLOYMENTS, x->j->ns, x->j->name, KUBE_PATCH_MERGE, text, NULL,
                    err);
    if (rc == -ENOENT)
        rc = 0;
    if (rc == 0)
        log_info("sweep.status", "namespace=%s deployment=%s status=\"%s\"", x->j->ns, x->j->name,
                 LOGQ(status));
out:
    if (rc == -ENOMEM)
        err_set(err, rc, "out of memory");
    free(text);
    cJSON_Delete(patch);
    return rc;
}

void job_event(struct jctx *x, const char *type, const char *reason, const char *fmt, ...)
{
    char note[1024], err[ERR_LEN] = "";
    va_list ap;
    struct kube_event_spec spec = {0};

    va_start(ap, fmt);
    vsnprintf(note, sizeof(note), fmt, ap);
    va_end(ap);
    if (!x->deploy)
        return;
    spec.regarding = x->deploy;
    spec.type = type;
    spec.reason = reason;
    spec.action = "Sweep";
    spec.note = note;
    spec.reporting_controller = JOB_REPORTER;
    spec.reporting_instance = x->env->identity;
    if (kube_event_emit(x->c, &spec, err) != 0)
        log_warn("sweep.event", "namespace=%s deployment=%s reason=%s error=\"%s\"", x->j->ns,
                 x->j->name, reason, LOGQ(err));
}

void job_sizing_name(const char *deployment, char out[JOB_NAME_MAX + 1])
{
    size_t n = strlen(deployment), suffix = strlen(JOB_SIZING_SUFFIX);
    if (n + suffix <= JOB_NAME_MAX) {
        snprintf(out, JOB_NAME_MAX + 1, "%s%s", deployment, JOB_SIZING_SUFFIX);
        return;
    }
    char label[KUBE_LABEL_VALUE_MAX + 1];
    kube_platform_clone_label(deployment, label);
    snprintf(out, JOB_NAME_MAX + 1, "%s%s", label, JOB_SIZING_SUFFIX);
}

int job_put_sizing(struct jctx *x, const char *const *keys, const char *const *values, size_t n,
                   char *err)
{
    cJSON *labels = cJSON_CreateObject();
    /* A label value has at most 63 characters; a Deployment name up to 253. */
    char label[KUBE_LABEL_VALUE_MAX + 1];
    int rc;

    kube_platform_clone_label(x->j->name, label);
    if (!labels || !cJSON_AddStringToObject(labels, "app.kubernetes.io/managed-by", "sizeup") ||
        !cJSON_AddStringToObject(labels, "sizeup.dev/deployment", label)) {
        cJSON_Delete(labels);
        return err_set(err, -ENOMEM, "out of memory");
    }
    rc = kube_configmap_put(x->c, x->j->ns, x->cm_name, keys, values, n, labels, x->deploy, err);
    cJSON_Delete(labels);
    return rc;
}

int job_fail_request(struct jctx *x, const char *reason, char *err)
{
    char status[ERR_LEN + 16];

    snprintf(status, sizeof(status), "failed: %s", reason);
    log_warn("sweep.rejected", "namespace=%s deployment=%s reason=\"%s\"", x->j->ns, x->j->name,
             LOGQ(reason));
    job_event(x, "Warning", "BadAnnotation", "sweep not started: %s", reason);
    metrics_sweep_result(x->env->m, METRICS_SWEEP_FAILED);
    return job_set_status(x, status, x->j->handled[0] ? x->j->handled : NULL, err);
}
