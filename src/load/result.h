#ifndef SIZEUP_LOAD_RESULT_H
#define SIZEUP_LOAD_RESULT_H

/* What a load run measured, overall, per request name and per stage, and the verdict. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/hist.h"
#include "profile/profile.h"
#include "load/series.h"

enum load_errclass {
    LOAD_ERR_CONNECT_REFUSED = 0,
    LOAD_ERR_CONNECT_TIMEOUT,
    LOAD_ERR_RESET,        /* connection reset or closed before a full response */
    LOAD_ERR_TIMEOUT,      /* request timeout (profile timeout) */
    LOAD_ERR_BAD_RESPONSE, /* unparseable or over-sized response */
    LOAD_ERR_NOFILE,       /* too many open files (EMFILE/ENFILE) */
    LOAD_ERR_TLS,          /* handshake or certificate failure */
    LOAD_ERR_OTHER,
    LOAD_ERR_COUNT
};

#define LOAD_STATUS_MAX 600 /* status[code] for code 100..599 */

/* Counters for one scope (overall, one request name, one stage). A request is "failed" when it
 * ended in a transport error or an HTTP status outside 200-399 (the convention of k6 and
 * vegeta). Latency is recorded for every request that got a response and for every request
 * timeout (at its elapsed time), so an overloaded server cannot hide in the percentiles. */
struct load_stats {
    uint64_t requests;  /* completed: a response or an error */
    uint64_t responses; /* with an HTTP status */
    uint64_t failed;
    uint64_t status[LOAD_STATUS_MAX];
    uint64_t errors[LOAD_ERR_COUNT];
    uint64_t bytes_in;  /* response bytes on the wire, headers included */
    uint64_t bytes_out; /* request bytes on the wire, headers included */
    struct hist latency;
};

enum verdict { VERDICT_HEALTHY = 0, VERDICT_STRESSED, VERDICT_OVERLOADED };

struct stream_result; /* load/streams.h */

struct load_result {
    double duration_s;         /* length of the measured window as actually run */
    double tool_cpu_s;         /* the load generator's own user + system CPU time */
    double target_rate_rps;    /* open loop: the requested rate; 0 for closed loop */
    double achieved_rate_rps;  /* open loop: requests sent / duration */
    unsigned peak_concurrency; /* most connections busy at once */
    unsigned users;            /* closed loop: virtual users (peak, with stages) */
    unsigned threads;
    bool interrupted; /* ended early by a signal: the figures cover what ran */
    struct load_stats total;
    size_t nnames;              /* == the profile's nrequests, same order */
    char **names;               /* owned copies of the request names */
    struct load_stats *by_name; /* owned array of nnames */
    size_t nstages;
    double *stage_duration_s;    /* owned array of nstages */
    struct load_stats *by_stage; /* owned array of nstages */
    /* A load spread over several targets (load/spread.h): each target's own total, in the
     * order given; nurls 0 for a load to one target. */
    size_t nurls;
    char **urls;               /* owned copies */
    struct load_stats *by_url; /* owned array of nurls */
    enum verdict verdict;
    struct stream_result *streams; /* owned; NULL for a run without streams */
    /* The measured window second by second (load/series.h): the rendered points, and the
     * recorder they came from, kept for exact merging (NULL when read back from JSON). */
    struct load_series series;
    struct series_rec *series_rec; /* owned */
};

/* Zeroes s and empties its histogram. */
void load_stats_init(struct load_stats *s);

/* Adds src into dst (counters and histogram). */
void load_stats_merge(struct load_stats *dst, const struct load_stats *src);

/* failed / requests, 0 when there were no requests. */
double load_stats_error_rate(const struct load_stats *s);

/* responses + errors per second over duration_s. */
double load_stats_throughput(const struct load_stats *s, double duration_s);

/* Allocates by_name (names copied from the profile) and by_stage, all empty.
 * Returns 0 or -ENOMEM (r left freed). */
int load_result_init(struct load_result *r /* OUT */, const struct profile *p);

/* Frees what r owns and zeroes it; no-op on a zeroed result. */
void load_result_free(struct load_result *r);

/* Moves src's requests into dst, for two request loads run side by side on one schedule:
 * src's names and per-name figures follow dst's, the totals, tool CPU, threads, peak
 * concurrency and the series (exactly, when both kept their recorders) add up, and dst keeps
 * its own stages, rates and duration. src is freed either way. Returns 0 or -ENOMEM (dst
 * unchanged but for its series). The caller sets the verdict. */
int load_result_append(struct load_result *dst, struct load_result *src);

struct plan;

/* Adds one load thread's statistics into r: by_name (r->nnames entries, the profile's order) into
 * r->by_name and into r->total (the total is the sum over names, so it cannot disagree with
 * them), by_stage (r->nstages entries) into r->by_stage. Borrows both arrays. */
void load_result_add_thread(struct load_result *r, const struct load_stats *by_name,
                            const struct load_stats *by_stage);

/* The figures of the window as it ran, once every thread is added: the measured duration (from
 * the plan's measurement start to end_ns, the plan's end or when a stop cut it short, which
 * sets interrupted), each stage's length as run, for open loop the requested rate (the mean
 * over the measured stages, with stages) and the achieved one (`sent` requests due in the
 * window), and the verdict against p's thresholds. Borrows pl and p. */
void load_result_finish(struct load_result *r, const struct plan *pl, const struct profile *p,
                        int64_t end_ns, uint64_t sent);

/* Renders r->series from r->series_rec (and the streams' delivery recorder, may be NULL) over
 * r's measured duration. Returns 0 or -ENOMEM. */
int load_result_render_series(struct load_result *r, struct series_rec *delivery);

/* The reference load test's rules (docs/sweep.md, "Where the defaults come from"): HEALTHY when p95
 * < healthy_p95 and errors < healthy_errors; OVERLOADED when p95 > overloaded_p95, errors >
 * overloaded_errors, or nothing completed; else STRESSED. */
enum verdict verdict_classify(const struct load_stats *s, const struct profile_thresholds *t);

/* "HEALTHY", "STRESSED", "OVERLOADED". */
const char *verdict_name(enum verdict v);

/* Stable snake_case names for JSON: "connect_refused", "connect_timeout", "reset", "timeout",
 * "bad_response", "too_many_open_files", "tls", "other". */
const char *load_errclass_name(enum load_errclass c);

#endif
