/* `kubectl sizeup`'s logic: requests, following a sweep, listing, results and cancelling. */

#include "operator/plugin.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/fmt.h"
#include "kube/objects.h"
#include "profile/profile.h"
#include "operator/job.h"
#include "operator/resweep.h"

#define STATUS_PAGE 500 /* Deployments per list page */

/* ---- pure parts ---------------------------------------------------------------------------- */

static int valid_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > ANNOT_MAX_NAME || s[0] == '-' || s[0] == '.' || s[n - 1] == '-' ||
        s[n - 1] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
            return 0;
    }
    return 1;
}

int plugin_parse_target(const char *arg, char name[ANNOT_MAX_NAME + 1], char *err)
{
    static const char *const kinds[] = {"deploy", "deployment", "deployments", "deployment.apps",
                                        "deployments.apps"};
    const char *slash = strchr(arg, '/'), *n = arg;

    if (slash) {
        size_t k = (size_t)(slash - arg), i = 0;
        for (; i < sizeof(kinds) / sizeof(kinds[0]); i++)
            if (strlen(kinds[i]) == k && strncmp(arg, kinds[i], k) == 0)
                break;
        if (i == sizeof(kinds) / sizeof(kinds[0]))
            return err_set(err, -EINVAL,
                           "'%.64s': only Deployments are sized (deploy/NAME or deployment/NAME)",
                           arg);
        n = slash + 1;
    }
    if (!valid_subdomain(n))
        return err_set(err, -EINVAL, "'%.64s' is not a Deployment name", n);
    snprintf(name, ANNOT_MAX_NAME + 1, "%s", n);
    return 0;
}

const char *plugin_output_key(const char *output)
{
    static const char *const map[][2] = {
        {"md", "results.md"},
        {"json", "results.json"},
        {"values", "values.yaml"},
        {"hpa", "hpa.yaml"},
        {"patch", "deployment-patch.yaml"},
        {"rule", "auto-sizing.yaml"},
        {"html", "report.html"},
        {"pdb", "pdb.yaml"},
        {"keda", "keda.yaml"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(output, map[i][0]) == 0 || strcmp(output, map[i][1]) == 0)
            return map[i][1];
    return NULL;
}

int plugin_check_target_load(const char *v, char *err)
{
    static const char *const units[] = {"rps", "users", "streams"};
    size_t digits = strspn(v, "0123456789");

    if (digits == 0 || digits > 12 || v[0] == '0')
        goto bad;
    for (size_t i = 0; i < 3; i++)
        if (strcmp(v + digits, units[i]) == 0)
            return 0;
bad:
    return err_set(err, -EINVAL,
                   "--target-load: '%.64s' is not a load (a whole number and rps, users or "
                   "streams: 5000rps, 10000users)",
                   v);
}

enum plugin_state plugin_judge(const char *sweep, const char *current, const char *last,
                               const char *status)
{
    if (last && strcmp(last, sweep) == 0) {
        if (status && strcmp(status, "done") == 0)
            return PLUGIN_DONE;
        if (status && strncmp(status, "failed", 6) == 0)
            return PLUGIN_FAILED;
        return PLUGIN_RUNNING;
    }
    /* Withdrawn (cancelled) or replaced before the operator took it up. */
    if (!current || strcmp(current, sweep) != 0)
        return PLUGIN_FAILED;
    return PLUGIN_WAITING;
}

/* results.json's milliseconds (a double, -1 when absent) as whole microseconds for fmt_latency. */
static uint64_t ms_to_us(double ms)
{
    return ms > 0 ? (uint64_t)llround(ms * 1000) : 0;
}

size_t plugin_progress_lines(const char *results_json, size_t total, struct plugin_follow *st,
                             FILE *out)
{
    cJSON *root = results_json ? cJSON_Parse(results_json) : NULL;
    const cJSON *vars = root ? cJSON_GetObjectItemCaseSensitive(root, "variants") : NULL;
    size_t n = (size_t)cJSON_GetArraySize(vars), lines = 0;
    char tot[24] = "?", rate[FMT_LEN], lat[FMT_LEN], pct[FMT_LEN];

    if (total)
        snprintf(tot, sizeof(tot), "%zu", total);
    for (size_t i = st->printed; cJSON_IsArray(vars) && i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(vars, (int)i);
        const char *spec = kube_path_string(v, "spec"), *state = kube_path_string(v, "state");
        if (!spec || !state)
            break;
        if (strcmp(state, "measured") == 0)
            fprintf(out, "variant %zu/%s %s: %s, %s req/s, p95 %s, errors %s\n", i + 1, tot, spec,
                    kube_path_string(v, "verdict") ? kube_path_string(v, "verdict") : "?",
                    fmt_rate(kube_path_number(v, "throughput_rps", -1), rate),
                    fmt_latency(ms_to_us(kube_path_number(v, "latency_ms.p95", -1)), lat),
                    fmt_pct(fmax(0, kube_path_number(v, "error_rate", -1)), pct));
        else
            fprintf(out, "variant %zu/%s %s: FAILED: %s\n", i + 1, tot, spec,
                    kube_path_string(v, "failure.reason") ? kube_path_string(v, "failure.reason")
                                                          : "?");
        st->printed = i + 1;
        lines++;
    }
    fflush(out);
    cJSON_Delete(root);
    return lines;
}

void plugin_status_header(int with_ns, char *line, size_t len)
{
    snprintf(line, len, "%s%-32s %-28s %-26s %s", with_ns ? "NAMESPACE            " : "",
             "DEPLOYMENT", "STATUS", "REQUEST", "RESWEEP");
}

int plugin_status_line(const cJSON *deploy, int with_ns, char *line, size_t len)
{
    struct kube_meta m;
    const char *sweep = kube_annotation(deploy, ANNOT_SWEEP);
    const char *status = kube_annotation(deploy, ANNOT_STATUS);
    const char *last = kube_annotation(deploy, ANNOT_LAST_SWEEP);
    const char *rs = kube_annotation(deploy, ANNOT_RESWEEP);
    const char *iv = kube_annotation(deploy, ANNOT_RESWEEP_INTERVAL);
    char st[256], resweep[64];

    if (kube_meta_read(deploy, &m) != 0 || (!sweep && !status && !last && !rs))
        return 0;
    if (!status)
        snprintf(st, sizeof(st), "%s", sweep && *sweep ? "requested" : "-");
    else if (sweep && *sweep && (!last || strcmp(sweep, last) != 0) &&
             strncmp(status, "running", 7) != 0)
        snprintf(st, sizeof(st), "requested (was: %.200s)", status);
    else
        snprintf(st, sizeof(st), "%.250s", status);
    if (rs && strcmp(rs, "off") != 0)
        snprintf(resweep, sizeof(resweep), "%s/%s", rs, iv ? iv : ANNOT_RESWEEP_DEFAULT);
    else
        snprintf(resweep, sizeof(resweep), "-");
    char nscol[80] = "";
    if (with_ns)
        snprintf(nscol, sizeof(nscol), "%-20s ", m.ns);
    snprintf(line, len, "%s%-32s %-28s %-26s %s", nscol, m.name, st,
             sweep && *sweep ? sweep : (last ? last : "-"), resweep);
    return 1;
}

/* ---- with the API -------------------------------------------------------------------------- */

static int put_profile(kube_client_t *c, const char *ns, const char *name, const cJSON *deploy,
                       const struct plugin_sweep_opts *o, char *cm, char *err)
{
    struct profile p;
    char sub[ERR_LEN] = "";
    const char *key = "profile.yaml";
    int rc;

    if (strlen(o->profile) > PLUGIN_PROFILE_MAX)
        return err_set(err, -EINVAL, "--profile: %s is larger than %d bytes", o->profile_src,
                       PLUGIN_PROFILE_MAX);
    /* Refused here, with the file's line, rather than as a failed status a minute later. */
    memset(&p, 0, sizeof(p));
    rc = profile_load_buffer(o->profile, strlen(o->profile), o->profile_src, &p, sub);
    profile_free(&p);
    if (rc)
        return err_set(err, rc == -ENOMEM ? rc : -EINVAL, "--profile: %s", sub);
    if (strlen(name) + strlen(PLUGIN_PROFILE_SUFFIX) > ANNOT_MAX_NAME)
        return err_set(err, -EINVAL, "--profile: the ConfigMap name %s%s is too long", name,
                       PLUGIN_PROFILE_SUFFIX);
    snprintf(cm, ANNOT_MAX_NAME + 1, "%s%s", name, PLUGIN_PROFILE_SUFFIX);
    cJSON *labels = cJSON_CreateObject();
    if (!labels || !cJSON_AddStringToObject(labels, "app.kubernetes.io/managed-by", "sizeup")) {
        cJSON_Delete(labels);
        return err_set(err, -ENOMEM, "out of memory");
    }
    rc = kube_configmap_put(c, ns, cm, &key, &o->profile, 1, labels, deploy, err);
    cJSON_Delete(labels);
    return rc;
}

int plugin_sweep(kube_client_t *c, const char *ns, const char *name,
                 const struct plugin_sweep_opts *o, char *sweep, FILE *out, char *err)
{
    cJSON *deploy = NULL, *patch = NULL, *ann;
    char cm[ANNOT_MAX_NAME + 1] = "", ts[40], *text = NULL, scale[16];
    struct timespec now;
    size_t nvariants = 0, k = 0;
    int rc;

    if (o->configs && (rc = annot_check_configs(o->configs, &nvariants, err)) != 0)
        return err_wrap(err, rc, "--configs");
    if (o->target_load && (rc = plugin_check_target_load(o->target_load, err)) != 0)
        return rc;
    if (o->scale_out > PROFILE_MAX_SCALE_OUT)
        return err_set(err, -EINVAL, "--scale-out: %d is not from 0 to %d", o->scale_out,
                       PROFILE_MAX_SCALE_OUT);
    snprintf(scale, sizeof(scale), "%d", o->scale_out);
    rc = kube_get(c, &KUBE_DEPLOYMENTS, ns, name, &deploy, err);
    if (rc == -ENOENT) {
        rc = err_set(err, rc, "deployment %s not found in namespace %s", name, ns);
        goto out;
    }
    if (rc)
        goto out;
    if (o->profile && (rc = put_profile(c, ns, name, deploy, o, cm, err)) != 0)
        goto out;

    clock_gettime(CLOCK_REALTIME, &now);
    if ((rc = kube_time_format(&now, 0, ts, sizeof(ts))) != 0) {
        err_set(err, rc, "the time does not fit");
        goto out;
    }
    k = (size_t)snprintf(sweep, ANNOT_MAX_SWEEP + 1, "%s", PLUGIN_SWEEP_PREFIX);
    for (const char *p = ts; *p && k < ANNOT_MAX_SWEEP; p++)
        if (*p != '-' && *p != ':')
            sweep[k++] = *p;
    sweep[k] = '\0';
    rc = -ENOMEM;
    patch = cJSON_CreateObject();
    cJSON *meta = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
    ann = meta ? cJSON_AddObjectToObject(meta, "annotations") : NULL;
    if (!ann || !cJSON_AddStringToObject(ann, ANNOT_SWEEP, sweep) ||
        (o->configs && !cJSON_AddStringToObject(ann, ANNOT_PREFIX "configs", o->configs)) ||
        (cm[0] && !cJSON_AddStringToObject(ann, ANNOT_PREFIX "profile", cm)) ||
        (o->target_load &&
         !cJSON_AddStringToObject(ann, ANNOT_PREFIX "target-load", o->target_load)) ||
        (o->scale_out >= 0 && !cJSON_AddStringToObject(ann, ANNOT_PREFIX "scale-out", scale)) ||
        !(text = cJSON_PrintUnformatted(patch))) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    rc = kube_patch(c, &KUBE_DEPLOYMENTS, ns, name, KUBE_PATCH_MERGE, text, NULL, err);
    if (rc)
        goto out;
    fprintf(out, "deployment/%s: sweep %s requested", name, sweep);
    if (o->configs)
        fprintf(out, ", %zu variant%s", nvariants, nvariants == 1 ? "" : "s");
    if (cm[0])
        fprintf(out, ", profile ConfigMap %s from %s", cm, o->profile_src);
    fprintf(out, "\n");
out:
    free(text);
    cJSON_Delete(patch);
    cJSON_Delete(deploy);
    return rc;
}

int plugin_follow_step(kube_client_t *c, const char *ns, const char *name, const char *sweep,
                       struct plugin_follow *st, FILE *out, enum plugin_state *state, char *err)
{
    cJSON *deploy = NULL, *cm = NULL, *prog = NULL;
    char sizing[JOB_NAME_MAX + 1];
    int rc;

    rc = kube_get(c, &KUBE_DEPLOYMENTS, ns, name, &deploy, err);
    if (rc)
        goto out;
    const char *status = kube_annotation(deploy, ANNOT_STATUS);
    *state = plugin_judge(sweep, kube_annotation(deploy, ANNOT_SWEEP),
                          kube_annotation(deploy, ANNOT_LAST_SWEEP), status);
    if (*state == PLUGIN_WAITING) {
        if (!st->waiting_noted)
            fprintf(out, "waiting for the operator to take the request up\n");
        st->waiting_noted = 1;
        goto out;
    }
    /* The rows first, so the last status line comes after the last variant's. */
    job_sizing_name(name, sizing);
    if (*state != PLUGIN_FAILED || (status && strcmp(status, st->status) != 0)) {
        if (kube_get(c, &KUBE_CONFIGMAPS, ns, sizing, &cm, NULL) == 0) {
            const char *pj = kube_configmap_get_key(cm, JOB_STATE_KEY);
            prog = pj ? cJSON_Parse(pj) : NULL;
            const char *of = kube_path_string(prog, "sweep");
            /* Until the operator's first write, the ConfigMap holds the sweep before. */
            if (of && strcmp(of, sweep) == 0) {
                double total = kube_path_number(prog, "total", -1);
                plugin_progress_lines(kube_configmap_get_key(cm, "results.json"),
                                      total > 0 ? (size_t)total : 0, st, out);
            }
        }
    }
    if (*state == PLUGIN_FAILED && !status)
        status = "failed: the request was withdrawn (sizeup.dev/sweep removed or replaced)";
    if (status && strcmp(status, st->status) != 0) {
        fprintf(out, "status: %s\n", status);
        snprintf(st->status, sizeof(st->status), "%s", status);
    }
    fflush(out);
out:
    cJSON_Delete(prog);
    cJSON_Delete(cm);
    cJSON_Delete(deploy);
    return rc;
}

int plugin_status(kube_client_t *c, const char *ns, FILE *out, char *err)
{
    struct kube_list_opts lo = {0};
    char line[768], cont[1024] = "";
    size_t found = 0;
    int rc = 0;

    lo.limit = STATUS_PAGE;
    do {
        cJSON *list = NULL;
        const cJSON *it;
        lo.continue_token = cont[0] ? cont : NULL;
        rc = kube_list(c, &KUBE_DEPLOYMENTS, ns, &lo, &list, err);
        if (rc)
            return rc;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
        {
            if (!plugin_status_line(it, ns == NULL, line, sizeof(line)))
                continue;
            if (found++ == 0) {
                char head[256];
                plugin_status_header(ns == NULL, head, sizeof(head));
                fprintf(out, "%s\n", head);
            }
            fprintf(out, "%s\n", line);
        }
        const char *next = kube_path_string(list, "metadata.continue");
        snprintf(cont, sizeof(cont), "%s", next ? next : "");
        cJSON_Delete(list);
    } while (cont[0]);
    if (!found)
        fprintf(out, "No sizing requests found in %s.\n", ns ? "this namespace" : "any namespace");
    return 0;
}

int plugin_results(kube_client_t *c, const char *ns, const char *name, const char *key, char **text,
                   char *err)
{
    char sizing[JOB_NAME_MAX + 1];
    cJSON *cm = NULL;
    int rc;

    *text = NULL;
    job_sizing_name(name, sizing);
    rc = kube_get(c, &KUBE_CONFIGMAPS, ns, sizing, &cm, err);
    if (rc == -ENOENT)
        return err_set(err, rc,
                       "no results for deployment/%s: ConfigMap %s not found (has it "
                       "been swept? kubectl sizeup sweep deploy/%s)",
                       name, sizing, name);
    if (rc)
        return rc;
    const char *v = kube_configmap_get_key(cm, key);
    if (!v)
        rc = err_set(err, -ENOENT, "ConfigMap %s has no %s%s", sizing, key,
                     strcmp(key, "values.yaml") == 0 || strcmp(key, "deployment-patch.yaml") == 0
                         ? " (no variant was recommended: see -o md)"
                         : "");
    else if (!(*text = strdup(v)))
        rc = err_set(err, -ENOMEM, "out of memory");
    cJSON_Delete(cm);
    return rc;
}

int plugin_cancel(kube_client_t *c, const char *ns, const char *name, FILE *out, char *err)
{
    cJSON *deploy = NULL;
    char patch[128];
    int rc = kube_get(c, &KUBE_DEPLOYMENTS, ns, name, &deploy, err);

    if (rc == -ENOENT)
        return err_set(err, rc, "deployment %s not found in namespace %s", name, ns);
    if (rc)
        return rc;
    const char *sweep = kube_annotation(deploy, ANNOT_SWEEP);
    const char *status = kube_annotation(deploy, ANNOT_STATUS);
    if (!sweep || !*sweep) {
        rc = err_set(err, -ENOENT, "deployment/%s has no sweep request to cancel", name);
        goto out;
    }
    snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"%s\":null}}}", ANNOT_SWEEP);
    rc = kube_patch(c, &KUBE_DEPLOYMENTS, ns, name, KUBE_PATCH_MERGE, patch, NULL, err);
    if (rc == 0)
        fprintf(out,
                "deployment/%s: sweep %s cancelled (status was: %s); the operator stops it "
                "and restores what it changed\n",
                name, sweep, status ? status : "none");
out:
    cJSON_Delete(deploy);
    return rc;
}
