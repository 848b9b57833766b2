#ifndef SIZEUP_SWEEP_SEARCH_H
#define SIZEUP_SWEEP_SEARCH_H

/* The capacity search as pure decisions, without any load or clock: which rate to offer next,
 * and whether one measured step passed, failed, or tells nothing about the app because the load
 * generator was not within its means. The runner (src/sweep/runner.c) measures; this module
 * decides, so the algorithm is tested against synthetic apps (tests/unit/test_search.c).
 *
 *     start (the probe's closed-loop throughput, or a prediction: search_predict)
 *     no failure yet:  double the highest passing rate (capped at max_rps)
 *     no pass yet:     halve the lowest failing rate
 *     (from a prediction the first widening is 1 + SEARCH_PREDICTED_SPAN x precision, squared
 *     after each step that brackets nothing, up to doubling: a good prediction is bracketed
 *     within two steps and bisected to the precision in two more)
 *     bracketed:       bisect until (high - low) / low < precision
 *     every step counts against max_steps; the runner may also end it for time
 *
 * A generator-limited step bounds the search from above like a failure, but what it bounds is
 * the generator: when it is the lowest non-passing rate at the end, the capacity is reported
 * as "at least low (generator-limited)", never as the app's. */

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "sweep/capacity.h"

/* The lowest rate the search offers: below one request a second nothing is measured. */
#define SEARCH_MIN_RPS 1.0
/* A step whose generator sent less than this share of the requests due fell behind its
 * schedule; one whose app completed less than this share of what was sent did not keep up. */
#define SEARCH_KEPT_UP 0.9

/* From a predicted start, the first step up or down is by 1 + SEARCH_PREDICTED_SPAN x the
 * precision: a capacity within that of the prediction is then bracketed by two steps, and the
 * bracket's width (3.6 x the precision) falls under the precision in two bisections. */
#define SEARCH_PREDICTED_SPAN 3.6
/* A prediction further than this factor from the probe's own rate (a variant unlike the ones
 * measured before) is clamped to it. */
#define SEARCH_PREDICT_MAX_RATIO 8.0

enum search_outcome { SEARCH_PASS = 0, SEARCH_FAIL, SEARCH_GEN_LIMITED };

struct search_opts {
    double start_rps; /* the calibrated start; <= 0: SEARCH_MIN_RPS */
    double precision; /* > 0 */
    unsigned max_steps;
    double max_rps; /* 0: no ceiling */
    bool predicted; /* start_rps predicts the capacity: widen from it gently (see above) */
};

/* A variant measured before this one, for search_predict: its cores (limit), its probe's
 * closed-loop throughput (0: no probe) and its capacity within the SLO. */
struct search_known {
    double cores;
    double probe_rps;
    double rps;
};

#define SEARCH_MAX_PASSES 32

struct search {
    struct search_opts o;
    unsigned steps;
    unsigned max_steps; /* o.max_steps plus what search_refute granted */
    /* Every rate that passed, so that a failure at or below the bracket's lower side (noise at
     * the knee, or repeats that did not hold) falls back to the highest pass below it. */
    double passes[SEARCH_MAX_PASSES];
    unsigned npasses;
    double grow;  /* the factor of the next widening step (2, or less from a prediction) */
    bool widened; /* the step offered last widened: the factor grows once it is recorded */
    double low;   /* highest rate that passed; 0: none yet */
    double high;  /* lowest rate that did not pass; 0: none yet */
    enum capacity_limit high_why; /* what that step missed (or GENERATOR) */
    bool done;
    enum capacity_limit limit; /* when done: what ended the search */
    unsigned flags;            /* when done: CAPACITY_FLAG_BUDGET, _NONE_PASSED, _GENERATOR */
};

/* What one measured open-loop step showed, as search_judge needs it. */
struct search_measure {
    double offered_rps; /* the rate asked for */
    double sent_rps;    /* requests the generator sent per second (engine's achieved rate) */
    double done_rps;    /* requests completed (responses and errors) per second */
    uint64_t p95_us, p99_us;
    double error_rate;      /* 0..1 */
    uint64_t nofile_errors; /* "too many open files" on the generator's side */
    double gen_cores;       /* the generator's mean cores; < 0 unknown */
    double gen_can_cores;   /* the cores its threads could use (threads, capped by the host) */
    unsigned peak_conns;    /* most connections busy at once */
    unsigned conn_cap;      /* the generator's connection cap; 0 unknown */
    uint64_t p50_us;
    double window_s; /* the measured window's length */
};

/* The capacity predicted for a variant of `cores` cores whose probe gave probe_rps (0: no probe;
 * probe_passed: within the SLO) from the variants known[0..n) measured before it (borrowed):
 * the probe times the others' capacity-to-probe ratio when this variant and some of the others
 * have a probe (the probe measured this variant, the ratio how the others' probes compare with
 * their capacities, which holds across workers and cores), else the others' capacity per core
 * times cores; both ratios are geometric means. A probe within the SLO is a floor (that rate
 * held), and may not have loaded the app (a few users' round trips set its rate), so then the
 * larger of the two predictions is taken; a probe that missed the SLO is a ceiling. 0 when
 * known holds nothing usable. */
double search_predict(const struct search_known *known, size_t n, double cores, double probe_rps,
                      bool probe_passed);

/* Starts a search with o (copied). */
void search_init(struct search *s /* OUT */, const struct search_opts *o);

/* The next rate to offer in *rate, or false when the search is over (s->limit and s->flags
 * then say why). Calling it again after false keeps returning false. */
bool search_next(struct search *s, double *rate /* OUT */);

/* Records the outcome of the step offered at rate; why says which objective a failure missed
 * (ignored for a pass; GENERATOR is implied for SEARCH_GEN_LIMITED). Counts one step. */
void search_record(struct search *s, double rate, enum search_outcome outcome,
                   enum capacity_limit why);

/* The repeats at rate (the search's answer) mostly missed the SLO (why): rate becomes the upper
 * side, the lower side falls back to the highest earlier pass below it, and the search reopens
 * with extra_steps more steps. */
void search_refute(struct search *s, double rate, enum capacity_limit why, unsigned extra_steps);

/* Ends the search because the time budget cannot hold another step. */
void search_out_of_time(struct search *s);

/* Judges one step against the SLO: generator-limited when the generator's CPU passed
 * SWEEP_GEN_SATURATED_SHARE of what its threads could use, it ran out of descriptors, it hit
 * its connection cap while an app within the SLO would have needed more connections than that
 * (offered x p95 objective), or it sent less than SEARCH_KEPT_UP of what was due for its own
 * reasons; else a pass when p95 (and p99, when set) are below the objectives, errors below
 * theirs, and the app answered (search_sustained_rps) at least SEARCH_KEPT_UP of what was sent.
 * *why (may be NULL)
 * gets the objective a failure missed. */
enum search_outcome search_judge(const struct search_measure *m, const struct profile_slo *slo,
                                 enum capacity_limit *why /* OUT */);

/* Whether latencies and an error rate meet the SLO's objectives (p95, p99 when set, errors):
 * the part of search_judge that is about the app alone, also used on the repeats merged. Sets
 * *why (may be NULL) to the objective missed. */
bool search_meets_slo(uint64_t p95_us, uint64_t p99_us, double error_rate,
                      const struct profile_slo *slo, enum capacity_limit *why /* OUT */);

/* The rate the app answered in a window of window_s seconds: requests due in the window that are
 * still in flight at its end are not counted by the load engine, about one median latency's
 * worth (Little's law), so done_rps is scaled by window / (window - p50), never above what was
 * sent (sent_rps > 0). A median above half the window is too long to correct: done_rps as is. */
double search_sustained_rps(double done_rps, double sent_rps, uint64_t p50_us, double window_s);

/* "slo-p95", "slo-p99", "slo-errors", "generator", "budget", "max-rps", "none". */
const char *search_limit_name(enum capacity_limit l);

#endif
