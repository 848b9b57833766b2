/* The local platform's usage window: CPU, memory, throttling and OOM kills of the variant's
 * cgroup between usage_begin and usage_end, and what the rest of the host used meanwhile. */

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/clock.h"
#include "local/local_int.h"

/* ---- usage --------------------------------------------------------------------------------- */

/* CPU seconds the whole host has been busy (all CPUs, everything but idle and iowait), from the
 * first line of /proc/stat. Returns < 0 when unreadable. */
static double host_busy_s(void)
{
    char buf[512];
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    double s = -1;

    if (!f)
        return -1;
    if (fgets(buf, sizeof(buf), f) &&
        sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) >= 4) {
        long hz = sysconf(_SC_CLK_TCK);
        unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        s = hz > 0 ? (double)busy / (double)hz : -1;
    }
    fclose(f);
    return s;
}

/* The runnable waits of every task in the variant's cgroup now. */
static void read_waits(struct local *l, struct sched_waits *out)
{
    pid_t pids[64];
    size_t n = 0;

    if (cg_pids(&l->cg, pids, sizeof(pids) / sizeof(pids[0]), &n, NULL) != 0)
        n = 0;
    if (n > sizeof(pids) / sizeof(pids[0]))
        n = sizeof(pids) / sizeof(pids[0]);
    sched_waits_read(pids, n, out);
}

/* The load generator's threads (this process's tasks: the generator runs in sizeup) now, merged
 * into what was seen of them since usage_begin: its threads live for one load run, inside the
 * window, so they are sampled while they run. */
static void sample_gen(struct local *l)
{
    struct sched_waits now;
    pid_t self = getpid();
    sched_waits_read(&self, 1, &now);
    sched_waits_merge(&l->gen_seen, &now);
}

static void *sampler_main(void *arg)
{
    struct local *l = arg;
    while (!l->sampler_stop) {
        int64_t cur;
        if (l->sampled_peak >= 0 && cg_mem_current(&l->cg, &cur, NULL) == 0 &&
            cur > l->sampled_peak)
            l->sampled_peak = cur;
        if (l->gen0.ok)
            sample_gen(l);
        clock_sleep_us(SAMPLE_MS * 1000);
    }
    return NULL;
}

static double self_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int local__usage_begin(void *self, char *err)
{
    struct local *l = self;
    (void)err;

    l->t_begin = clock_mono_s();
    l->host_busy0 = host_busy_s();
    l->cpu0_ok = l->oom0_ok = l->thr0_ok = false;
    l->wait0.ok = false;
    l->gen0.ok = false;
    l->sampled_peak = -1;
    if (l->replica == 0) {
        /* The generator's waits: one instance of a replica set follows them. */
        pid_t me = getpid();
        sched_waits_read(&me, 1, &l->gen0);
        l->gen_seen = l->gen0;
        l->gen_cpu0 = self_cpu_s();
    }
    if (l->have_cg) {
        l->cpu0_ok = cg_cpu_ns(&l->cg, &l->cpu0_ns, NULL) == 0;
        l->oom0_ok = cg_oom_kills(&l->cg, &l->oom0, NULL) == 0;
        l->thr0_ok = cg_cpu_throttle(&l->cg, &l->thr0, NULL) == 0;
        read_waits(l, &l->wait0);
        /* No resettable watermark (v2): sample memory.current through the window. */
        if (cg_mem_peak_reset(&l->cg, NULL) != 0)
            l->sampled_peak = 0;
    }
    if (l->sampled_peak >= 0 || l->gen0.ok) {
        l->sampler_stop = 0;
        if (pthread_create(&l->sampler, NULL, sampler_main, l) == 0)
            l->sampling = true;
        else if (l->sampled_peak >= 0)
            l->sampled_peak = -1;
    }
    return 0;
}

void local__stop_sampler(struct local *l)
{
    if (!l->sampling)
        return;
    l->sampler_stop = 1;
    pthread_join(l->sampler, NULL);
    l->sampling = false;
}

int local__usage_end(void *self, struct platform_usage *out, char *err)
{
    struct local *l = self;
    char how[128];
    (void)err;

    memset(out, 0, sizeof(*out));
    out->window_s = clock_mono_s() - l->t_begin;
    out->cpu_s = -1;
    out->peak_memory_bytes = -1;
    out->memory_bytes = -1;
    out->host_other_cores = -1;
    local__stop_sampler(l);
    double busy1 = host_busy_s();
    if (l->gen0.ok) {
        sample_gen(l);
        double cpu = self_cpu_s();
        out->gen_wait_known = l->gen_cpu0 >= 0 && cpu >= l->gen_cpu0;
        out->gen_cpu_s = out->gen_wait_known ? cpu - l->gen_cpu0 : -1;
        out->gen_wait_s = (double)sched_waits_delta(&l->gen0, &l->gen_seen) / 1e9;
    }
    if (!l->have_cg) {
        snprintf(out->note, sizeof(out->note), "no cgroup: CPU and memory use not measured");
    } else {
        uint64_t ns;
        if (l->cpu0_ok && cg_cpu_ns(&l->cg, &ns, NULL) == 0 && ns >= l->cpu0_ns)
            out->cpu_s = (double)(ns - l->cpu0_ns) / 1e9;
        int64_t peak;
        if (l->sampled_peak >= 0) {
            out->peak_memory_bytes = l->sampled_peak;
            snprintf(out->note, sizeof(out->note), "peak memory sampled every %d ms", SAMPLE_MS);
        } else if (cg_mem_peak(&l->cg, &peak, NULL) == 0) {
            out->peak_memory_bytes = peak;
        }
        int64_t cur;
        if (cg_mem_current(&l->cg, &cur, NULL) == 0)
            out->memory_bytes = cur;
        struct cg_throttle thr;
        if (l->thr0_ok && cg_cpu_throttle(&l->cg, &thr, NULL) == 0 &&
            thr.periods >= l->thr0.periods && thr.throttled_ns >= l->thr0.throttled_ns) {
            out->throttle_known = true;
            out->cpu_periods = thr.periods - l->thr0.periods;
            out->cpu_throttled_periods = thr.throttled_periods - l->thr0.throttled_periods;
            out->cpu_throttled_s = (double)(thr.throttled_ns - l->thr0.throttled_ns) / 1e9;
        }
        struct sched_waits w1;
        read_waits(l, &w1);
        if (l->wait0.ok && w1.ok) {
            out->wait_known = true;
            out->cpu_wait_s = (double)sched_waits_delta(&l->wait0, &w1) / 1e9;
        }
        uint64_t ooms;
        if (l->oom0_ok && cg_oom_kills(&l->cg, &ooms, NULL) == 0 && ooms > l->oom0) {
            out->oom_killed = true;
            out->restarts = (unsigned)(ooms - l->oom0);
        }
    }
    if (l->host_busy0 >= 0 && busy1 >= l->host_busy0 && out->cpu_s >= 0 && out->window_s > 0) {
        double other = (busy1 - l->host_busy0 - out->cpu_s) / out->window_s;
        out->host_other_cores = other > 0 ? other : 0;
    }
    if (local__exited(l, how, sizeof(how))) {
        out->died = true;
        snprintf(out->note, sizeof(out->note), "%s during the measured window", how);
    }
    return 0;
}
