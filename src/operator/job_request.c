/* A sweep request checked against the cluster before anything is changed (profile ConfigMap,
 * variant list, values paths, container and port), and the START and RECOVER entry points. The
 * progress document is in job_state.c, the sweep itself in job_run.c. */

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "kube/objects.h"
#include "profile/profile_override.h"
#include "operator/job_int.h"

#define PROFILE_KEY "profile.yaml"

/* Loads the profile named by the request (or the built-in default). A missing ConfigMap, key
 * or malformed YAML is the user's: -EINVAL with the reason. */
static int load_profile(struct sweep_job *sj, char *reason)
{
    struct jctx *x = sj->x;
    cJSON *cm = NULL;
    char src[300], sub[ERR_LEN] = "";
    int rc;

    if (!x->req.profile)
        return profile_init_default(&sj->profile) ? err_set(reason, -ENOMEM, "out of memory") : 0;
    rc = kube_get(x->c, &KUBE_CONFIGMAPS, x->j->ns, x->req.profile, &cm, sub);
    if (rc == -ENOENT)
        return err_set(reason, -EINVAL, "profile: ConfigMap \"%s\" not found in namespace %s",
                       x->req.profile, x->j->ns);
    if (rc)
        return err_set(reason, rc, "profile: reading ConfigMap \"%s\": %s", x->req.profile, sub);
    const char *yaml = kube_configmap_get_key(cm, PROFILE_KEY);
    if (!yaml) {
        rc = err_set(reason, -EINVAL, "profile: ConfigMap \"%s\" has no key %s", x->req.profile,
                     PROFILE_KEY);
        goto out;
    }
    snprintf(src, sizeof(src), "%s/%s", x->req.profile, PROFILE_KEY);
    rc = profile_load_buffer(yaml, strlen(yaml), src, &sj->profile, sub);
    if (rc)
        rc = err_set(reason, rc == -ENOMEM ? rc : -EINVAL, "profile: %s", sub);
out:
    cJSON_Delete(cm);
    return rc;
}

/* Checks everything the request names against the Deployment before anything is changed. */
/* Connects once to the host and port of a target URL (shape already checked by the annotation
 * parser), so an unreachable target fails the request before anything is cloned or patched.
 * Returns 0 or -EINVAL with the reason. */
static int probe_target(const char *url, char *reason)
{
    char host[256], port[8], ebuf[128];
    const char *rest = strncmp(url, "https://", 8) == 0 ? url + 8 : url + 7;
    const char *dflt = rest == url + 8 ? "443" : "80";
    size_t hl = strcspn(rest, "/?#");
    const char *h = rest, *colon;
    struct addrinfo hints, *res = NULL;
    int rc, fd = -1;

    if (h[0] == '[') {
        const char *close = memchr(h, ']', hl);
        if (!close)
            return err_set(reason, -EINVAL, "target: bad host");
        colon = close + 1 < h + hl && close[1] == ':' ? close + 1 : NULL;
        snprintf(host, sizeof(host), "%.*s", (int)(close - h - 1), h + 1);
    } else {
        colon = memchr(h, ':', hl);
        snprintf(host, sizeof(host), "%.*s", (int)(colon ? (size_t)(colon - h) : hl), h);
    }
    if (colon)
        snprintf(port, sizeof(port), "%.*s", (int)(h + hl - colon - 1), colon + 1);
    else
        snprintf(port, sizeof(port), "%s", dflt);
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc)
        return err_set(reason, -EINVAL, "target: cannot resolve %s: %s", host, gai_strerror(rc));
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = err_set(reason, -EINVAL, "target: socket: %s", err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    rc = connect(fd, res->ai_addr, res->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        rc = poll(&pfd, 1, 3000);
        if (rc == 0) {
            errno = ETIMEDOUT;
            rc = -1;
        } else if (rc > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr) {
            errno = soerr;
            rc = -1;
        } else if (rc > 0) {
            rc = 0;
        }
    }
    if (rc < 0)
        rc = err_set(reason, -EINVAL, "target: %s:%s is unreachable: %s", host, port,
                     err_str(errno, ebuf, sizeof(ebuf)));
out:
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}

/* With re-sweeps on, what the ConfigMap cm (borrowed) holds of the sweep before this one: its
 * results.json when that sweep was done, else the previous-results.json it carried (a sweep
 * interrupted and resumed keeps comparing with the same one). Owned copy, or NULL. */
static char *previous_results(const cJSON *cm)
{
    const char *state = kube_configmap_get_key(cm, JOB_STATE_KEY);
    const char *results = kube_configmap_get_key(cm, "results.json");
    const char *kept = kube_configmap_get_key(cm, "previous-results.json");
    cJSON *st = state ? cJSON_Parse(state) : NULL;
    const cJSON *phase = st ? cJSON_GetObjectItemCaseSensitive(st, "phase") : NULL;
    int done = cJSON_IsString(phase) && strcmp(phase->valuestring, "done") == 0;
    cJSON_Delete(st);
    if (done && results)
        return strdup(results);
    return kept ? strdup(kept) : NULL;
}

/* The results ConfigMap is rewritten whole: one of that name that sizeup did not create is the
 * user's, and is never overwritten. With re-sweeps on, keeps its previous results in sj. */
static int check_sizing_owner(struct sweep_job *sj, char *reason)
{
    struct jctx *x = sj->x;
    cJSON *cm = NULL;
    char sub[ERR_LEN] = "";
    int rc = kube_get(x->c, &KUBE_CONFIGMAPS, x->j->ns, x->cm_name, &cm, sub);

    if (rc == -ENOENT)
        return 0;
    if (rc)
        return err_set(reason, rc, "reading ConfigMap %s: %s", x->cm_name, sub);
    const char *by = kube_label(cm, "app.kubernetes.io/managed-by");
    if (!by || strcmp(by, "sizeup") != 0)
        rc = err_set(reason, -EINVAL,
                     "ConfigMap %s exists and is not managed by sizeup (label "
                     "app.kubernetes.io/managed-by: sizeup): not overwriting it",
                     x->cm_name);
    else if (x->req.resweep && !sj->previous)
        sj->previous = previous_results(cm);
    cJSON_Delete(cm);
    return rc;
}

int job_scale_out_request(const struct annot_request *req, struct profile_scale_out *so, char *err)
{
    if (req->scale_out_set)
        return profile_scale_out_set_max(so, req->scale_out, err);
    /* In the cluster a scale-out loads what the pods share (the database behind them): it runs
     * when the annotation or the profile asks for it, never by default, target or not. */
    return so->given ? 0 : profile_scale_out_set_max(so, 0, err);
}

static int check_request(struct sweep_job *sj, char *reason)
{
    struct jctx *x = sj->x;
    char sub[ERR_LEN] = "";
    int rc;

    snprintf(sj->configs, sizeof(sj->configs), "%s", x->req.configs);
    rc = variant_parse_list(x->req.configs, &sj->all, sub);
    if (rc)
        return err_set(reason, -EINVAL, "configs: %s", sub);
    sj->paths = x->req.values_paths;
    const cJSON *ctr = kube_deploy_container(x->deploy, x->req.container);
    if (!ctr)
        return x->req.container
                   ? err_set(reason, -EINVAL, "container: \"%s\" is not in the pod template",
                             x->req.container)
                   : err_set(reason, -EINVAL, "container: the pod template has no container");
    const cJSON *cname = cJSON_GetObjectItemCaseSensitive(ctr, "name");
    snprintf(sj->container, sizeof(sj->container), "%s",
             cJSON_IsString(cname) ? cname->valuestring : "");
    resweep_images(x->deploy, sj->images, sizeof(sj->images));
    char serr[ERR_LEN];
    if (kube_deploy_selector(x->deploy, sj->selector, sizeof(sj->selector)) != 0 ||
        output_selector_check(sj->selector, serr) != 0)
        sj->selector[0] = '\0'; /* pdb.yaml then selects app: NAME and says to edit it */
    if (!x->req.port && x->req.target == ANNOT_TARGET_POD && !kube_container_port(ctr))
        return err_set(reason, -EINVAL,
                       "port: not annotated and the container declares no containerPort");
    rc = load_profile(sj, reason);
    if (rc)
        return rc;
    /* The target-load annotation overrides the profile as the --target-* flags do. */
    struct profile_override ov = PROFILE_OVERRIDE_NONE;
    ov.target_rps = x->req.target_rps;
    ov.target_users = x->req.target_users;
    ov.target_streams = x->req.target_streams;
    rc = profile_override_apply(&ov, &sj->profile, sub);
    if (rc)
        return err_set(reason, rc, "target-load: %s", sub);
    rc = job_scale_out_request(&x->req, &sj->profile.scale_out, sub);
    if (rc)
        return err_set(reason, rc, "scale-out: %s", sub);
    rc = annot_check_load_ceiling(&x->req, &sj->profile.search, reason);
    if (rc)
        return rc;
    rc = check_sizing_owner(sj, reason);
    if (rc)
        return rc;
    if (x->req.target == ANNOT_TARGET_URL)
        return probe_target(x->req.target_url, reason);
    return 0;
}

void job_sweep_job_free(struct sweep_job *sj)
{
    if (sj->plat.ops)
        sj->plat.ops->free(sj->plat.self);
    profile_free(&sj->profile);
    free(sj->prior);
    free(sj->previous);
    free(sj->so_prior);
}

int job_sweep(struct jctx *x, char *err)
{
    struct sweep_job sj = {0};
    char reason[ERR_LEN] = "", status[64];
    int rc;

    sj.x = x;
    sj.feed_slot = -1;
    sj.started = time(NULL);
    rc = check_request(&sj, reason);
    if (rc == -EINVAL) {
        rc = job_fail_request(x, reason, err);
        goto out;
    }
    if (rc) {
        err_set(err, rc, "%s", reason);
        goto out;
    }
    sj.todo = sj.all;
    snprintf(status, sizeof(status), "running 0/%zu", sj.all.n);
    rc = job_set_status(x, status, x->j->handled, err);
    if (rc)
        goto out;
    log_info("sweep.start", "namespace=%s deployment=%s mode=%s variants=%zu profile=%s", x->j->ns,
             x->j->name, annot_mode_name(x->req.mode), sj.all.n,
             x->req.profile ? x->req.profile : "built-in");
    job_event(x, "Normal", "SweepStarted",
              "sweep %s started: %zu variants (%s), %s mode, profile %s", x->j->handled, sj.all.n,
              sj.configs, annot_mode_name(x->req.mode),
              x->req.profile ? x->req.profile : "built-in default");
    /* Progress from the start, so an operator killed before the first variant ends resumes
     * instead of starting over (the previous sweep's results are replaced as of now). */
    char *state = job_state_json(&sj, NULL, 0, "running");
    /* The previous results go along, so a resumed sweep still compares with them. */
    const char *keys[2] = {JOB_STATE_KEY, "previous-results.json"};
    const char *vals[2] = {state, sj.previous};
    char werr[ERR_LEN] = "";
    if (!state || job_put_sizing(x, keys, vals, sj.previous ? 2 : 1, werr) != 0)
        log_warn("sweep.configmap", "namespace=%s deployment=%s error=\"%s\"", x->j->ns, x->j->name,
                 LOGQ(state ? werr : "out of memory"));
    free(state);
    rc = job_run_sweep(&sj, err);
out:
    job_sweep_job_free(&sj);
    return rc;
}

/* Reads the progress an earlier operator left for sweep `sweep` of this Deployment. Fills the
 * prior rows and the remaining variants of sj; returns -ENOENT when nothing usable is there. */
static int load_progress(struct sweep_job *sj, const char *sweep)
{
    struct jctx *x = sj->x;
    cJSON *cm = NULL;
    int rc = -ENOENT;

    if (kube_get(x->c, &KUBE_CONFIGMAPS, x->j->ns, x->cm_name, &cm, NULL) != 0)
        goto out;
    rc = job_progress_parse(kube_configmap_get_key(cm, JOB_STATE_KEY), sweep, x->j->uid,
                            sj->configs, &sj->all, &sj->prior, &sj->nprior);
    if (rc)
        goto out;
    sj->todo.n = sj->all.n - sj->nprior;
    for (size_t i = 0; i < sj->todo.n; i++)
        sj->todo.items[i] = sj->all.items[sj->nprior + i];
    /* The scale-out's points so far: none is measured twice. */
    sj->so_prior = calloc(1, sizeof(*sj->so_prior));
    if (sj->so_prior &&
        job_progress_scale_out(kube_configmap_get_key(cm, JOB_STATE_KEY), sj->so_prior, sj->so_spec,
                               sizeof(sj->so_spec)) != 0) {
        free(sj->so_prior);
        sj->so_prior = NULL;
    }
out:
    cJSON_Delete(cm);
    return rc;
}

int job_recover(struct jctx *x, char *err)
{
    struct annot_kv kv[32];
    struct sweep_job sj = {0};
    char reason[ERR_LEN] = "", status[ERR_LEN + 16];
    const char *last = kube_annotation(x->deploy, ANNOT_LAST_SWEEP);
    const cJSON *ann = kube_path_get(x->deploy, "metadata.annotations");
    const cJSON *it;
    size_t n = 0;
    int rc;

    sj.x = x;
    sj.feed_slot = -1;
    sj.started = time(NULL);
    snprintf(x->j->handled, sizeof(x->j->handled), "%s", last ? last : "");
    cJSON_ArrayForEach(it, ann)
    {
        if (n < 32 && cJSON_IsString(it) && it->string &&
            strncmp(it->string, ANNOT_PREFIX, sizeof(ANNOT_PREFIX) - 1) == 0) {
            kv[n].key = it->string;
            kv[n].value = it->valuestring;
            n++;
        }
    }
    const char *sweep = kube_annotation(x->deploy, ANNOT_SWEEP);
    int resumable = sweep && last && strcmp(sweep, last) == 0 &&
                    annot_parse(kv, n, &x->req, NULL, reason) == 0 &&
                    check_request(&sj, reason) == 0 && load_progress(&sj, sweep) == 0;
    if (!x->req.sweep) {
        /* The request is gone or no longer parses: clean up with what the annotations say the
         * sweep ran as (mode, container), defaults otherwise. */
        struct annot_kv only[33];
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(kv[i].key, ANNOT_SWEEP) != 0)
                only[m++] = kv[i];
        only[m].key = ANNOT_SWEEP;
        only[m].value = last && *last ? last : "recover";
        m++;
        if (annot_parse(only, m, &x->req, NULL, NULL) != 0) {
            struct annot_kv minimal = {ANNOT_SWEEP, "recover"};
            if (annot_parse(&minimal, 1, &x->req, NULL, NULL) != 0)
                log_warn("sweep.recover", "namespace=%s deployment=%s request=unparsable", x->j->ns,
                         x->j->name);
        }
    }
    if (resumable) {
        log_info("sweep.resume", "namespace=%s deployment=%s done=%zu total=%zu", x->j->ns,
                 x->j->name, sj.nprior, sj.all.n);
        job_event(x, "Normal", "SweepResumed",
                  "sweep %s resumed after an operator restart: %zu/%zu variants already measured",
                  x->j->handled, sj.nprior, sj.all.n);
        /* Whatever the dead operator left applied goes first, then the rest is measured. */
        rc = job_restore_leftovers(&sj, err);
        /* With nothing left to measure job_run_sweep still writes the final ConfigMap. */
        if (rc == 0)
            rc = job_run_sweep(&sj, err);
        goto out;
    }
    rc = job_restore_leftovers(&sj, err);
    if (rc) {
        snprintf(status, sizeof(status), "failed: interrupted, and restoring failed: %s", err);
        job_event(x, "Warning", "SweepFailed", "%s", status);
        metrics_sweep_result(x->env->m, METRICS_SWEEP_FAILED);
        if (job_set_status(x, status, NULL, reason) != 0)
            log_warn("sweep.status", "namespace=%s deployment=%s write=failed reason=\"%s\"",
                     x->j->ns, x->j->name, reason);
        goto out;
    }
    snprintf(status, sizeof(status),
             "failed: interrupted (operator restarted); original restored%s%s",
             reason[0] ? "; cannot resume: " : "", reason);
    job_event(x, "Warning", "SweepFailed", "%s", status);
    metrics_sweep_result(x->env->m, METRICS_SWEEP_FAILED);
    log_warn("sweep.recovered", "namespace=%s deployment=%s action=restored", x->j->ns, x->j->name);
    rc = job_set_status(x, status, NULL, err);
out:
    job_sweep_job_free(&sj);
    return rc;
}
