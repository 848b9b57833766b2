/* The Kubernetes platform, usage of a variant over the measured window: restarts and OOMKilled
 * from the pod's status, CPU and memory from a metrics.k8s.io sample at each end of the window
 * when the cluster serves it. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/quantity.h"
#include "kube/internal.h"
#include "kube/objects.h"
#include "kube/platform_internal.h"

static bool metrics_served(struct kplat *k)
{
    if (!k->metrics_checked) {
        cJSON *o = NULL;
        char e2[ERR_LEN];
        k->metrics_served = kube_request(k->c, "GET", "/apis/metrics.k8s.io/v1beta1", NULL, NULL,
                                         65536, &o, e2) == 0;
        k->metrics_checked = true;
        cJSON_Delete(o);
    }
    return k->metrics_served;
}

/* One metrics.k8s.io sample of the container. */
static int metrics_sample(struct kplat *k, double *cores, int64_t *bytes)
{
    cJSON *m = NULL;
    const cJSON *c;
    char e2[ERR_LEN];
    int rc = kube_get(k->c, &KUBE_POD_METRICS, k->ns, k->pod, &m, e2);
    if (rc)
        return rc;
    rc = -ENOENT;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "containers"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
        const char *cpu = cJSON_GetStringValue(kube_path_get(c, "usage.cpu"));
        const char *mem = cJSON_GetStringValue(kube_path_get(c, "usage.memory"));
        if (!n || strcmp(n, k->container) != 0 || !cpu || !mem)
            continue;
        if (kube_parse_cores(cpu, cores) == 0 && qty_parse_memory(mem, bytes, NULL) == 0)
            rc = 0;
    }
    cJSON_Delete(m);
    return rc;
}

static int pod_now(struct kplat *k, struct kube_pod_info *pi, char *err)
{
    cJSON *p = NULL;
    int rc = kube_get(k->c, &KUBE_PODS, k->ns, k->pod, &p, err);
    if (rc == 0)
        kube_pod_info_read(p, k->container, pi);
    cJSON_Delete(p);
    return rc;
}

int kube__plat_usage_begin(void *self, char *err)
{
    struct kplat *k = self;
    struct kube_pod_info pi;
    int rc;
    if (!k->pod[0])
        return err_set(err, -ENOENT, "no ready pod");
    k->t_begin_ms = kube__now_ms();
    rc = pod_now(k, &pi, err);
    if (rc)
        return rc;
    k->restarts_begin = pi.restarts;
    k->sample_begin = metrics_served(k) && metrics_sample(k, &k->cores_begin, &k->mem_begin) == 0;
    return 0;
}

int kube__plat_usage_end(void *self, struct platform_usage *out, char *err)
{
    struct kplat *k = self;
    struct kube_pod_info pi;
    double cores = 0;
    int64_t mem = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->window_s = (double)(kube__now_ms() - k->t_begin_ms) / 1000.0;
    out->cpu_s = -1;
    out->peak_memory_bytes = -1;
    rc = pod_now(k, &pi, err);
    if (rc == -ENOENT) {
        out->died = true;
        snprintf(out->note, sizeof(out->note), "pod %s disappeared during the window", k->pod);
        return 0;
    }
    if (rc)
        return rc;
    out->restarts =
        pi.restarts > k->restarts_begin ? (unsigned)(pi.restarts - k->restarts_begin) : 0;
    out->oom_killed = out->restarts > 0 && pi.oom_killed;
    out->died = out->restarts > 0 || strcmp(pi.phase, "Running") != 0 || pi.deleting;
    if (!metrics_served(k)) {
        snprintf(out->note, sizeof(out->note),
                 "metrics.k8s.io is not served by this cluster: CPU and memory use unknown");
    } else if (metrics_sample(k, &cores, &mem) != 0) {
        snprintf(out->note, sizeof(out->note),
                 "metrics.k8s.io had no sample for pod %s: CPU and memory use unknown", k->pod);
    } else {
        /* metrics-server reports a rate over its last scrape window: the end sample covers the
         * end of the measured window, the begin sample (when there is one) its start. */
        double avg = k->sample_begin ? (cores + k->cores_begin) / 2 : cores;
        out->cpu_s = avg * out->window_s;
        out->peak_memory_bytes = k->sample_begin && k->mem_begin > mem ? k->mem_begin : mem;
        snprintf(out->note, sizeof(out->note),
                 "usage from metrics.k8s.io samples (%s), not a continuous measurement",
                 k->sample_begin ? "start and end of the window" : "end of the window");
    }
    return 0;
}
