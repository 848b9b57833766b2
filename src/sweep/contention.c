/* The transient contention rule (contracts in contention.h). */

#include "sweep/contention.h"

#include <string.h>

bool sweep_contention_judge(double host, double limit, const struct platform_usage *u,
                            struct sweep_contention *out)
{
    memset(out, 0, sizeof(*out));
    out->used = out->got = out->host_other = out->wait_s = out->throttled_s = out->starved = -1;
    out->gen_starved = -1;
    if (u->cpu_s < 0 || u->window_s <= 0 || host <= 0)
        return false;
    out->used = u->cpu_s / u->window_s;
    out->got = limit > 0 && limit < host ? limit : host;
    out->host_other = u->host_other_cores;
    bool under = out->used < SWEEP_CONTENDED_GOT * out->got;
    out->busy_host = u->host_other_cores >= 0 && out->used + u->host_other_cores > host - 0.1;
    if (u->wait_known && u->cpu_wait_s >= 0) {
        /* schedstat's wait holds the time throttled by the variant's own quota: that is the
         * limit, not other work. What is left it waited behind other tasks. */
        double thr = u->throttle_known && u->cpu_throttled_s > 0 ? u->cpu_throttled_s : 0;
        double other = u->cpu_wait_s > thr ? u->cpu_wait_s - thr : 0;
        out->by_wait = true;
        out->wait_s = u->cpu_wait_s;
        out->throttled_s = u->throttle_known ? u->cpu_throttled_s : -1;
        out->starved = u->cpu_s + other > 0 ? other / (u->cpu_s + other) : 0;
        out->contended = under && out->starved > SWEEP_STARVED_SHARE &&
                         other / u->window_s >= SWEEP_STARVED_MIN_CORES;
        /* The generator's share is shown, not judged: at the demo's 0.06 cores it is made of
         * wake-up latency (read 0.45-0.76 beside a busy host: about 0.3 ms per request, against
         * a p95 objective of 100 ms); a generator starved enough to matter
         * falls behind its schedule, which the search marks generator-limited. */
        if (u->gen_wait_known && u->gen_cpu_s >= 0 && u->gen_wait_s >= 0) {
            double want = u->gen_cpu_s + u->gen_wait_s;
            out->gen_starved = want > 0 ? u->gen_wait_s / want : 0;
        }
    } else {
        /* No wait figures: the window shows what the host could spare when the variant used
         * clearly less than its limit while the host had no CPU left. */
        out->contended = under && out->busy_host;
    }
    return out->contended;
}
