#ifndef SIZEUP_LOAD_LOAD_H
#define SIZEUP_LOAD_LOAD_H

/* The load generator: runs one load profile against one base URL and fills a load_result.
 * One epoll loop per thread; threads share nothing mutable until the results are merged. */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/err.h"
#include "profile/profile.h"
#include "load/result.h"

enum load_phase { LOAD_PHASE_WARMUP = 0, LOAD_PHASE_MEASURE, LOAD_PHASE_DONE };

/* A snapshot for progress displays. Figures cover the current phase so far. */
struct load_progress {
    enum load_phase phase;
    double elapsed_s; /* since the phase began */
    double phase_s;   /* the phase's planned length */
    uint64_t requests;
    uint64_t failed;
    double rps;            /* over the last interval */
    uint64_t p95_us;       /* over the phase so far */
    uint64_t streams_open; /* a run with streams: open now */
};

/* Called on the thread that called load_run, about four times a second. Borrows p. */
typedef void (*load_progress_fn)(void *ud, const struct load_progress *p);

struct load_opts {
    const char *url;               /* borrowed: http:// or https:// base URL; paths append */
    const struct profile *profile; /* borrowed */
    unsigned threads;              /* 0: one per CPU it may use (load/cpus.h) */
    unsigned max_connections;      /* open loop cap on connections; 0: 10000 */
    int insecure;                  /* skip TLS certificate verification */
    uint64_t seed;                 /* request-mix random seed; 0: fixed default */
    load_progress_fn progress;     /* may be NULL */
    void *progress_ud;
    volatile sig_atomic_t *stop; /* may be NULL; when it becomes non-zero the run ends early */
    struct timespec start;       /* monotonic time zero of the plan (clock_mono_ts); zero: when
                                  * the threads start. Runs given one start share a schedule. */
    /* Several targets (borrowed; nurls > 1): the load is spread over them (load/spread.h) and
     * url is ignored. 0 or 1: url alone. */
    const char *const *urls;
    size_t nurls;
};

/* Runs warm-up then the measured window (or the stages) and fills *out. A target that refuses
 * or never answers is not a failure: its errors are counted in *out. Returns 0, or a negative
 * errno for what prevents a run at all (bad URL, name resolution, no memory, thread start);
 * err says which. On success the caller frees *out with load_result_free. */
int load_run(const struct load_opts *o, struct load_result *out /* OUT */, char *err);

#endif
