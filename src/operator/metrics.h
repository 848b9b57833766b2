#ifndef SIZEUP_OPERATOR_METRICS_H
#define SIZEUP_OPERATOR_METRICS_H

/* The operator's counters and gauges, rendered as Prometheus text for /metrics. Every field is
 * an atomic: this struct is the only mutable state the operator's threads share with the admin
 * thread, so writers never take a lock and a scrape never blocks a sweep. */

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define METRICS_MAX_CODE   600         /* api_requests[code] for code 0..599; 0 = no response */
#define METRICS_MAX_OUTPUT (64 * 1024) /* a rendering larger than this is an error */

enum metrics_sweep_result {
    METRICS_SWEEP_DONE = 0,
    METRICS_SWEEP_FAILED,    /* bad annotations, or the sweep could not finish */
    METRICS_SWEEP_CANCELLED, /* the operator stopped mid-sweep and restored the original */
    METRICS_SWEEP_RESULT_COUNT
};

enum metrics_verdict {
    METRICS_VERDICT_HEALTHY = 0,
    METRICS_VERDICT_STRESSED,
    METRICS_VERDICT_OVERLOADED,
    METRICS_VERDICT_FAILED, /* the variant never became ready (rollout, OOMKilled ...) */
    METRICS_VERDICT_COUNT
};

struct metrics {
    atomic_uint_fast64_t sweeps[METRICS_SWEEP_RESULT_COUNT];
    atomic_uint_fast64_t variants[METRICS_VERDICT_COUNT];
    atomic_uint_fast64_t api_requests[METRICS_MAX_CODE];
    atomic_uint_fast64_t watch_restarts;
    atomic_int_fast64_t sweeps_in_progress;
    atomic_uint_fast64_t deployments_tracked; /* gauge: annotated Deployments in the cache */
    atomic_int ready;                         /* the initial list is in the cache */
    atomic_int leader;                        /* 1 when this replica acts (always, unelected) */
    atomic_int_fast64_t heartbeat_ms;         /* monotonic ms of the watch loop's last turn */
};

/* Zeroes every counter. */
void metrics_init(struct metrics *m /* OUT */);

/* Counts one API response with HTTP status code (0 or out of range: no response). */
void metrics_api_request(struct metrics *m, int code);

/* Adds one to a sweep result or a variant verdict counter. */
void metrics_sweep_result(struct metrics *m, enum metrics_sweep_result r);
void metrics_variant(struct metrics *m, enum metrics_verdict v);

/* Records that the watch loop is alive now (for /healthz). */
void metrics_heartbeat(struct metrics *m);

/* Milliseconds since the last heartbeat; a large value when there was none. */
int64_t metrics_heartbeat_age_ms(const struct metrics *m);

/* Renders the Prometheus text exposition (version 0.0.4) of m plus the process's resident
 * memory and CPU time. Returns 0 with *out an owned NUL-terminated string (free with free())
 * and *len its length, -ENOMEM, or -EOVERFLOW past METRICS_MAX_OUTPUT. Borrows m. */
int metrics_render(const struct metrics *m, char **out /* OUT */, size_t *len /* OUT */, char *err);

/* Reads this process's resident set size in bytes from /proc/self/statm. */
int metrics_rss_bytes(uint64_t *bytes /* OUT */);

#endif
