/* The Kubernetes platform, usage of a variant over the measured window: restarts and OOMKilled
 * from the pod's status, CPU and memory from metrics.k8s.io when the cluster serves it.
 *
 * metrics-server scrapes each pod every --metric-resolution (15 s by default) and serves the CPU
 * rate between its last two scrapes: `timestamp` is the last one, in whole seconds, and `window`
 * the time between them. A sample is the measured window's CPU only when the interval it
 * averages lies whole inside the measured window; any other sample mixes in the load before
 * it (a warm-up, a settle, another step), so the CPU of a shorter window is unknown, never an
 * estimate. Memory (the working set at a scrape) is taken from any sample. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/quantity.h"
#include "kube/kube_int.h"
#include "kube/objects.h"
#include "kube/platform_int.h"

/* metrics-server's default resolution, assumed until a PodMetrics says otherwise. */
#define METRICS_WINDOW_DEFAULT_S 15.0
/* A PodMetrics timestamp is whole seconds: the scrape it names happened up to this much later. */
#define METRICS_TS_SLACK_S 1.0
/* Beyond the two windows: the scrape's own lag behind the resolution's tick. */
#define METRICS_LAG_S 1.0

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

/* One PodMetrics: the container's cores and working set, and the interval the cores average,
 * [*end_s - *window_s, *end_s] in seconds since the epoch (*window_s <= 0 when the object does
 * not say). */
struct metrics_sample {
    double cores;
    int64_t bytes;
    double end_s, window_s;
};

static double window_of(const cJSON *m)
{
    const char *w = cJSON_GetStringValue(cJSON_GetObjectItem(m, "window"));
    int64_t us = 0;
    return w && qty_parse_duration(w, &us, NULL) == 0 ? (double)us / 1e6 : 0;
}

static int metrics_sample(struct kplat *k, struct metrics_sample *out)
{
    cJSON *m = NULL;
    const cJSON *c;
    char e2[ERR_LEN];
    struct timespec ts;
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
        if (kube_parse_cores(cpu, &out->cores) == 0 &&
            qty_parse_memory(mem, &out->bytes, NULL) == 0)
            rc = 0;
    }
    const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(m, "timestamp"));
    out->window_s = window_of(m);
    if (!t || kube_time_parse(t, &ts) != 0)
        out->window_s = 0;
    else
        out->end_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    cJSON_Delete(m);
    return rc;
}

/* Wherever the scrapes fall, a window this long holds a whole metrics window of w seconds. */
static int64_t hold_us(double w)
{
    return (int64_t)((2 * w + METRICS_TS_SLACK_S + METRICS_LAG_S) * 1e6);
}

int64_t kube__plat_usage_window_us(struct kplat *k)
{
    cJSON *list = NULL;
    const cJSON *it;
    char path[400], e2[ERR_LEN];
    double w = 0;

    if (!metrics_served(k))
        return 0;
    /* The resolution from the namespace's pods (the Deployment's own are running). */
    snprintf(path, sizeof(path), "/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods", k->ns);
    if (kube_request(k->c, "GET", path, NULL, NULL, KUBE_BODY_MAX_LIST, &list, e2) == 0)
        cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items"))
        {
            double x = window_of(it);
            if (x > w)
                w = x;
        }
    cJSON_Delete(list);
    if (w <= 0)
        w = METRICS_WINDOW_DEFAULT_S;
    return hold_us(w);
}

static int pod_now(struct kplat *k, struct kube_pod_info *pi, char *err)
{
    cJSON *p = NULL;
    int rc = kube_get(k->c, &KUBE_PODS, k->ns, k->pod, &p, err);
    if (rc == 0 && (rc = kube_pod_info_read(p, k->container, pi)) != 0)
        err_set(err, rc, "pod %s: a status field longer than Kubernetes allows", k->pod);
    cJSON_Delete(p);
    return rc;
}

static double wall_s(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

int kube__plat_usage_begin(void *self, char *err)
{
    struct kplat *k = self;
    struct kube_pod_info pi;
    struct metrics_sample ms;
    int rc;
    if (!k->pod[0])
        return err_set(err, -ENOENT, "no ready pod");
    k->t_begin_ms = kube__now_ms();
    clock_gettime(CLOCK_REALTIME, &k->t_begin_wall);
    rc = pod_now(k, &pi, err);
    if (rc)
        return rc;
    k->restarts_begin = pi.restarts;
    k->sample_begin = metrics_served(k) && metrics_sample(k, &ms) == 0;
    if (k->sample_begin)
        k->mem_begin = ms.bytes;
    return 0;
}

int kube__plat_usage_end(void *self, struct platform_usage *out, char *err)
{
    struct kplat *k = self;
    struct kube_pod_info pi;
    struct metrics_sample ms = {0};
    int rc;

    memset(out, 0, sizeof(*out));
    out->window_s = (double)(kube__now_ms() - k->t_begin_ms) / 1000.0;
    out->cpu_s = -1;
    out->peak_memory_bytes = -1;
    out->memory_bytes = -1;
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
        return 0;
    }
    if (metrics_sample(k, &ms) != 0) {
        snprintf(out->note, sizeof(out->note),
                 "metrics.k8s.io had no sample for pod %s: CPU and memory use unknown", k->pod);
        return 0;
    }
    if (ms.window_s > 0)
        out->usage_window_us = hold_us(ms.window_s);
    out->peak_memory_bytes = k->sample_begin && k->mem_begin > ms.bytes ? k->mem_begin : ms.bytes;
    out->memory_bytes = ms.bytes; /* the working set at the end sample */
    /* The scrape the sample ends with happened before it was read, just now: within
     * milliseconds of the load's end. It began inside the window when its start, reckoned from
     * the whole-seconds timestamp (the scrape came up to a second later), is not before ours. */
    if (ms.window_s > 0 && ms.end_s - ms.window_s >= wall_s(&k->t_begin_wall)) {
        /* The pod's mean rate over a whole metrics window inside the measured one, at the same
         * load: the window's CPU. */
        out->cpu_s = ms.cores * out->window_s;
        snprintf(out->note, sizeof(out->note),
                 "CPU from a %.1f s metrics.k8s.io window inside the measured window, memory "
                 "from its samples",
                 ms.window_s);
    } else {
        snprintf(out->note, sizeof(out->note),
                 "CPU unknown: no whole metrics.k8s.io window (%.0f s) lay inside this %.1f s "
                 "window; memory from its samples",
                 ms.window_s > 0 ? ms.window_s : METRICS_WINDOW_DEFAULT_S, out->window_s);
    }
    return 0;
}
