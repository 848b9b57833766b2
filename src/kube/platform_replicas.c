/* The Kubernetes platform's scale-out: the clone Deployment scaled to n replicas of a variant,
 * rolled out and waited for by the rollout applier's rules (ReplicaFailure, the progress
 * deadline, crash loops, the timeout), the n ready pods' addresses for the load, and their usage
 * summed. Clone mode only: in-place and resize modes would scale the Deployment real users are
 * served by, so they refuse, and the runner records the point as failed with the reason. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "kube/kube_int.h"
#include "kube/platform_int.h"

static int refuse(struct platform_failure *fail, char *err, int rc, const char *why)
{
    fail->kind = PLATFORM_FAIL_APPLY;
    snprintf(fail->reason, sizeof(fail->reason), "%s", why);
    return err_set(err, rc, "%s", why);
}

int kube__plat_apply_replicas(void *self, const struct variant *v, unsigned n,
                              struct platform_failure *fail, char *err)
{
    struct kplat *k = self;
    char why[ERR_LEN];

    memset(fail, 0, sizeof(*fail));
    if (k->mode != KUBE_MODE_CLONE) {
        snprintf(why, sizeof(why),
                 "a scale-out runs only in clone mode: in %s mode it would scale Deployment "
                 "%s/%s, which serves real users (set sizeup.dev/mode: clone)",
                 k->mode == KUBE_MODE_RESIZE ? "resize" : "in-place", k->ns, k->name);
        return refuse(fail, err, -ENOTSUP, why);
    }
    if (k->target[0]) {
        snprintf(why, sizeof(why),
                 "a scale-out loads each clone pod's own address, and sizeup.dev/target names "
                 "one URL (%.200s): remove the target to scale out",
                 k->target);
        return refuse(fail, err, -ENOTSUP, why);
    }
    if (n < 2 || n > PLATFORM_MAX_REPLICAS) {
        snprintf(why, sizeof(why), "a scale-out runs 2 to %d replicas, not %u",
                 PLATFORM_MAX_REPLICAS, n);
        return refuse(fail, err, -EINVAL, why);
    }
    /* Every replica from the rollout (a resize changes one pod); the clone's template is the
     * variant's, its replica count n. */
    k->replicas = n;
    k->applier = &kube__rollout;
    int rc = kube__rollout.apply(k, v, fail, err);
    if (rc == 0)
        log_info("kube.platform.replicas", "deployment=%s/%s variant=%s replicas=%u", k->ns,
                 k->clone, v->spec, n);
    return rc;
}

int kube__plat_target_urls(void *self, char (*urls)[PLATFORM_URL_LEN], size_t max, size_t *n,
                           char *err)
{
    struct kplat *k = self;
    int rc;

    *n = 0;
    if (k->replicas <= 1 || k->target[0]) {
        rc = kube__plat_target_url(k, urls[0], PLATFORM_URL_LEN, err);
        if (rc == 0)
            *n = 1;
        return rc;
    }
    if (k->nready < k->replicas)
        return err_set(err, -ENOENT, "%zu of %u pods ready", k->nready, k->replicas);
    if (max < k->nready)
        return err_set(err, -ENOSPC, "room for %zu URLs, %zu pods run", max, k->nready);
    for (size_t i = 0; i < k->nready; i++) {
        rc = kube__plat_pod_url(k->pod_ips[i], k->port, urls[i], PLATFORM_URL_LEN, err);
        if (rc)
            return rc;
    }
    *n = k->nready;
    char list[PLATFORM_MAX_REPLICAS * 72] = "";
    size_t at = 0;
    for (size_t i = 0; i < k->nready && at < sizeof(list); i++) {
        int w = snprintf(list + at, sizeof(list) - at, "%s%s", i ? "," : "", k->pod_ips[i]);
        at += w > 0 ? (size_t)w : 0;
    }
    log_info("kube.platform.targets", "deployment=%s/%s replicas=%zu pod_ips=%s port=%u", k->ns,
             k->clone, k->nready, list, k->port);
    return 0;
}

/* Points the single-pod operations at replica i. */
static void use_replica(struct kplat *k, size_t i)
{
    snprintf(k->pod, sizeof(k->pod), "%s", k->pods[i]);
    snprintf(k->pod_ip, sizeof(k->pod_ip), "%s", k->pod_ips[i]);
}

int kube__plat_set_usage_begin(void *self, char *err)
{
    struct kplat *k = self;
    long long t0 = 0;
    struct timespec w0 = {0};
    int rc = 0;

    if (k->replicas <= 1 || k->nready < 2)
        return kube__plat_usage_begin(k, err);
    for (size_t i = 0; !rc && i < k->nready; i++) {
        use_replica(k, i);
        rc = kube__plat_usage_begin(k, err);
        if (i == 0) {
            t0 = k->t_begin_ms;
            w0 = k->t_begin_wall;
        }
        k->rep_begin[i] =
            (struct kube__rep_begin){k->restarts_begin, k->mem_begin, k->sample_begin};
    }
    k->t_begin_ms = t0;
    k->t_begin_wall = w0;
    use_replica(k, 0);
    return rc;
}

/* Folds replica u into the set's usage out: CPU and restarts add up, memory is the largest
 * replica's (what one pod needs), unknown anywhere is unknown. */
static void add_usage(struct platform_usage *out, const struct platform_usage *u, const char *pod)
{
    out->cpu_s = out->cpu_s >= 0 && u->cpu_s >= 0 ? out->cpu_s + u->cpu_s : -1;
    if (u->peak_memory_bytes > out->peak_memory_bytes)
        out->peak_memory_bytes = u->peak_memory_bytes;
    if (u->memory_bytes > out->memory_bytes)
        out->memory_bytes = u->memory_bytes;
    out->restarts += u->restarts;
    out->oom_killed = out->oom_killed || u->oom_killed;
    out->died = out->died || u->died;
    if (u->cpu_s < 0 && u->note[0])
        snprintf(out->note, sizeof(out->note), "pod %.100s: %.300s", pod, u->note);
}

int kube__plat_set_usage_end(void *self, struct platform_usage *out, char *err)
{
    struct kplat *k = self;
    int rc = 0;

    if (k->replicas <= 1 || k->nready < 2)
        return kube__plat_usage_end(k, out, err);
    long long t0 = k->t_begin_ms;
    struct timespec w0 = k->t_begin_wall;
    for (size_t i = 0; !rc && i < k->nready; i++) {
        struct platform_usage u;
        use_replica(k, i);
        k->t_begin_ms = t0;
        k->t_begin_wall = w0;
        k->restarts_begin = k->rep_begin[i].restarts;
        k->mem_begin = k->rep_begin[i].mem;
        k->sample_begin = k->rep_begin[i].sample;
        rc = kube__plat_usage_end(k, i ? &u : out, err);
        if (!rc && i)
            add_usage(out, &u, k->pods[i]);
    }
    use_replica(k, 0);
    return rc;
}
