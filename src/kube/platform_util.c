/* The Kubernetes platform's shared helpers: what more than one of its files needs (the target
 * Deployment's name, sleeping, the pod selector, recognising our clone, scaling the clone down,
 * CPU quantities). Everything here calls only the client and the object helpers, never another
 * platform file, so the platform's calls run one way: platform.c -> its job files -> this one. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube_int.h"
#include "kube/objects.h"
#include "core/clock.h"
#include "kube/platform_int.h"

const char *kube__plat_target(const struct kplat *k)
{
    return k->mode == KUBE_MODE_CLONE ? k->clone : k->name;
}

void kube__plat_sleep_us(int64_t us)
{
    clock_sleep_us(us);
}

int kube__plat_selector(const cJSON *d, char *buf, size_t len)
{
    return kube_deploy_selector(d, buf, len);
}

bool kube__plat_is_our_clone(const struct kplat *k, const cJSON *d)
{
    const char *of = kube_label(d, KUBE_LABEL_CLONE);
    const char *full = kube_annotation(d, KUBE_ANN_CLONE_OF);
    return of && strcmp(of, k->clone_label) == 0 && (!full || strcmp(full, k->name) == 0);
}

int kube_parse_cores(const char *s, double *cores)
{
    char *end;
    double v;
    if (!s || !*s)
        return -EINVAL;
    v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0)
        return -EINVAL;
    if (strcmp(end, "") == 0)
        *cores = v;
    else if (strcmp(end, "m") == 0)
        *cores = v / 1e3;
    else if (strcmp(end, "u") == 0)
        *cores = v / 1e6;
    else if (strcmp(end, "n") == 0)
        *cores = v / 1e9;
    else if (strcmp(end, "k") == 0)
        *cores = v * 1e3;
    else
        return -EINVAL;
    return 0;
}

int kube__plat_nap(int64_t us, volatile sig_atomic_t *stop)
{
    for (int64_t t = 0; t < us; t += 50000) {
        if (stop && *stop)
            return 1;
        kube__plat_sleep_us(us - t < 50000 ? us - t : 50000);
    }
    return stop && *stop;
}

int kube__plat_scale_down(struct kplat *k, char *err)
{
    cJSON *d = NULL;
    int rc = 0;

    k->pod_kept = false;
    k->rz_pod[0] = '\0';
    rc = kube_patch(k->c, &KUBE_DEPLOYMENTS, k->ns, k->clone, KUBE_PATCH_MERGE,
                    "{\"spec\":{\"replicas\":0}}", &d, err);
    if (rc == -ENOENT) {
        k->clone_exists = false;
        return 0;
    }
    if (rc)
        return rc;
    /* Wait for the pods to go, so the next variant never shares the node with this one. */
    char sel[1024];
    if (kube__plat_selector(d, sel, sizeof(sel)) == 0) {
        long long deadline = kube__now_ms() + k->stop_timeout_us / 1000;
        for (;;) {
            cJSON *list = NULL;
            struct kube_list_opts lo = {.label_selector = sel};
            rc = kube_list(k->c, &KUBE_PODS, k->ns, &lo, &list, err);
            int n = rc ? -1 : cJSON_GetArraySize(cJSON_GetObjectItem(list, "items"));
            cJSON_Delete(list);
            if (rc || n == 0)
                break;
            if (kube__now_ms() >= deadline) {
                rc = err_set(err, -ETIMEDOUT, "clone %s/%s: %d pods still terminating", k->ns,
                             k->clone, n);
                break;
            }
            kube__plat_sleep_us(250000);
        }
    }
    cJSON_Delete(d);
    return rc;
}
