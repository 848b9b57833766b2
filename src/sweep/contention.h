#ifndef SIZEUP_SWEEP_CONTENTION_H
#define SIZEUP_SWEEP_CONTENTION_H

/* The transient contention rule: whether one measured window of a variant shows the variant
 * starved of CPU by other work on its host (a busy moment), so that its figure is the host's
 * and not the variant's. The structural rule (limit + generator > host) is the runner's.
 *
 * With the variant's runnable wait known (local: schedstat), the rule measures starvation:
 * the wait less the time throttled by its own quota (the limit doing its job, not contention)
 * is the time it waited for other work; the window is contended when that is more than
 * SWEEP_STARVED_SHARE of the time the variant wanted a CPU (on CPU + waiting for others) and
 * the variant got under SWEEP_CONTENDED_GOT of min(its limit, the host), and that wait is at
 * least SWEEP_STARVED_MIN_CORES over the window. A variant that did not
 * use its limit on a busy host, but was not kept waiting, is not contended: it was not
 * CPU-bound. The load generator's own share (where it shares the host and its wait is known)
 * is reported beside it, not judged (see contention.c). Without the wait (kube,
 * no schedstat) the rule falls back to the host's CPU: under SWEEP_CONTENDED_GOT of min(limit,
 * host) while the rest of the host left no CPU. */

#include <stdbool.h>

#include "sweep/platform.h"

#define SWEEP_CONTENDED_GOT 0.9
#define SWEEP_STARVED_SHARE 0.10
/* ... and the wait for other work, averaged over the window, is at least this many cores: a
 * light app (a stream server at 0.05 cores) spends a large share of its tiny CPU time in
 * ordinary wake-up latency without being slowed measurably. The busy demo's starved repeats
 * waited 0.18-0.5 cores' worth; quiet ones under 0.01. */
#define SWEEP_STARVED_MIN_CORES 0.05

/* The figures the rule read and what it found, for the log. Values < 0 are unknown. */
struct sweep_contention {
    double used;       /* cores the variant used over the window */
    double got;        /* min(its limit, the host), cores */
    double host_other; /* cores everything else on the host used */
    double wait_s;     /* its tasks' runnable wait, throttling included */
    double throttled_s;
    double starved;     /* share of its wanted CPU time spent waiting for other work */
    double gen_starved; /* the same share for the load generator (shown only); < 0 unknown */
    bool by_wait;       /* judged by the wait (else the fallback on the host's CPU) */
    bool busy_host;     /* the fallback's test: the rest of the host left no CPU */
    bool contended;
};

/* Judges the window u of a variant with limit_cores on a host of host_cores into *out (which
 * says everything; the result is out->contended). Windows without CPU figures are not
 * contended. */
bool sweep_contention_judge(double host_cores, double limit_cores, const struct platform_usage *u,
                            struct sweep_contention *out /* OUT */);

#endif
