#include "operator/metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

static const char *const sweep_names[METRICS_SWEEP_RESULT_COUNT] = {"done", "failed", "cancelled"};
static const char *const verdict_names[METRICS_VERDICT_COUNT] = {"HEALTHY", "STRESSED",
                                                                 "OVERLOADED", "FAILED"};

void metrics_init(struct metrics *m)
{
    for (int i = 0; i < METRICS_SWEEP_RESULT_COUNT; i++)
        atomic_init(&m->sweeps[i], 0);
    for (int i = 0; i < METRICS_VERDICT_COUNT; i++)
        atomic_init(&m->variants[i], 0);
    for (int i = 0; i < METRICS_MAX_CODE; i++)
        atomic_init(&m->api_requests[i], 0);
    atomic_init(&m->watch_restarts, 0);
    atomic_init(&m->sweeps_in_progress, 0);
    atomic_init(&m->deployments_tracked, 0);
    atomic_init(&m->ready, 0);
    atomic_init(&m->leader, 0);
    atomic_init(&m->heartbeat_ms, 0);
}

void metrics_api_request(struct metrics *m, int code)
{
    if (code < 0 || code >= METRICS_MAX_CODE)
        code = 0;
    atomic_fetch_add_explicit(&m->api_requests[code], 1, memory_order_relaxed);
}

void metrics_sweep_result(struct metrics *m, enum metrics_sweep_result r)
{
    if ((int)r >= 0 && r < METRICS_SWEEP_RESULT_COUNT)
        atomic_fetch_add_explicit(&m->sweeps[r], 1, memory_order_relaxed);
}

void metrics_variant(struct metrics *m, enum metrics_verdict v)
{
    if ((int)v >= 0 && v < METRICS_VERDICT_COUNT)
        atomic_fetch_add_explicit(&m->variants[v], 1, memory_order_relaxed);
}

void metrics_heartbeat(struct metrics *m)
{
    atomic_store(&m->heartbeat_ms, clock_mono_ms());
}

int64_t metrics_heartbeat_age_ms(const struct metrics *m)
{
    int64_t hb = atomic_load(&((struct metrics *)m)->heartbeat_ms);
    if (hb == 0)
        return INT64_MAX;
    return clock_mono_ms() - hb;
}

int metrics_rss_bytes(uint64_t *bytes)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "re");
    if (!f)
        return -errno;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2)
        return -EIO;
    long page = sysconf(_SC_PAGESIZE);
    *bytes = (uint64_t)resident * (uint64_t)(page > 0 ? page : 4096);
    return 0;
}

/* A bounded growable text buffer: appends fail once METRICS_MAX_OUTPUT would be passed. */
struct tbuf {
    char *s;
    size_t len, cap;
    int rc;
};

__attribute__((format(printf, 2, 3))) static void tb_printf(struct tbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        if (b->rc)
            return;
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->rc = -EINVAL;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t want = b->len + (size_t)n + 1;
        if (want > METRICS_MAX_OUTPUT) {
            b->rc = -EOVERFLOW;
            return;
        }
        size_t ncap = b->cap ? b->cap * 2 : 4096;
        while (ncap < want)
            ncap *= 2;
        if (ncap > METRICS_MAX_OUTPUT)
            ncap = METRICS_MAX_OUTPUT;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->rc = -ENOMEM;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
}

#define LOAD(x) atomic_load_explicit(&((struct metrics *)m)->x, memory_order_relaxed)

int metrics_render(const struct metrics *m, char **out, size_t *len, char *err)
{
    struct tbuf b = {0};
    uint64_t rss = 0;
    struct rusage ru;

    tb_printf(&b, "# HELP sizeup_sweeps_total Sweeps finished, by result.\n"
                  "# TYPE sizeup_sweeps_total counter\n");
    for (int i = 0; i < METRICS_SWEEP_RESULT_COUNT; i++)
        tb_printf(&b, "sizeup_sweeps_total{result=\"%s\"} %llu\n", sweep_names[i],
                  (unsigned long long)LOAD(sweeps[i]));
    tb_printf(&b, "# HELP sizeup_variants_total Variants measured, by verdict.\n"
                  "# TYPE sizeup_variants_total counter\n");
    for (int i = 0; i < METRICS_VERDICT_COUNT; i++)
        tb_printf(&b, "sizeup_variants_total{verdict=\"%s\"} %llu\n", verdict_names[i],
                  (unsigned long long)LOAD(variants[i]));
    tb_printf(&b, "# HELP sizeup_api_requests_total Kubernetes API responses, by HTTP status "
                  "(0: no response).\n"
                  "# TYPE sizeup_api_requests_total counter\n");
    for (int i = 0; i < METRICS_MAX_CODE; i++) {
        uint64_t v = LOAD(api_requests[i]);
        if (v)
            tb_printf(&b, "sizeup_api_requests_total{code=\"%d\"} %llu\n", i,
                      (unsigned long long)v);
    }
    tb_printf(&b,
              "# HELP sizeup_watch_restarts_total Deployment watches re-opened (closed, expired "
              "or failed).\n"
              "# TYPE sizeup_watch_restarts_total counter\n"
              "sizeup_watch_restarts_total %llu\n"
              "# HELP sizeup_sweeps_in_progress Sweeps running now.\n"
              "# TYPE sizeup_sweeps_in_progress gauge\n"
              "sizeup_sweeps_in_progress %lld\n"
              "# HELP sizeup_deployments_tracked Deployments with sizeup.dev annotations held in "
              "the cache.\n"
              "# TYPE sizeup_deployments_tracked gauge\n"
              "sizeup_deployments_tracked %llu\n"
              "# HELP sizeup_leader 1 when this replica is the one acting.\n"
              "# TYPE sizeup_leader gauge\n"
              "sizeup_leader %d\n",
              (unsigned long long)LOAD(watch_restarts), (long long)LOAD(sweeps_in_progress),
              (unsigned long long)LOAD(deployments_tracked), LOAD(leader) ? 1 : 0);
    if (metrics_rss_bytes(&rss) == 0)
        tb_printf(&b,
                  "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                  "# TYPE process_resident_memory_bytes gauge\n"
                  "process_resident_memory_bytes %llu\n",
                  (unsigned long long)rss);
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        tb_printf(&b,
                  "# HELP process_cpu_seconds_total User and system CPU time in seconds.\n"
                  "# TYPE process_cpu_seconds_total counter\n"
                  "process_cpu_seconds_total %.3f\n",
                  (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    if (b.rc) {
        free(b.s);
        return err_set(err, b.rc, "metrics: rendering failed (%s)",
                       b.rc == -EOVERFLOW ? "too large" : "out of memory");
    }
    *out = b.s;
    *len = b.len;
    return 0;
}
