#ifndef SIZEUP_SWEEP_CAPACITY_H
#define SIZEUP_SWEEP_CAPACITY_H

/* What a capacity search measured for one variant: the highest arrival rate it sustains within
 * the SLO, the interval of that figure from repeated measurements, what ended the search, and
 * every step. Plain data, shared by the runner (which fills it), the advisor (which sizes from
 * it), the outputs (results.json `slo_capacity`) and `sizeup compare`. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/stats.h"
#include "profile/profile.h"

/* The load generator is "saturated" when its CPU use reached this share of the cores its
 * threads could use: it was then the bottleneck, not the app. One constant for the sweep's
 * saturation mark and the capacity search's generator limit. */
#define SWEEP_GEN_SATURATED_SHARE 0.9

/* The probe's concurrency when the profile is open loop or staged: enough users to saturate an
 * app of a few workers, as the default closed-loop profile does. */
#define CAPACITY_PROBE_USERS 50

/* Steps kept per variant: the probe, max_steps search steps, the repeats and one re-measure, and
 * once more steps and repeats when the repeats did not hold (runner_capacity.c). */
#define CAPACITY_MAX_STEPS 64
/* The repeats a figure can rest on: the profile's and a noisy interval's as many again. */
#define CAPACITY_MAX_REPEATS (2 * PROFILE_MAX_REPEATS)

/* A variant whose interval is wider than this share of its mean is re-measured once; still
 * that wide, it is marked noisy. */
#define CAPACITY_NOISY_REL 0.10

enum capacity_limit {
    CAPACITY_LIMIT_NONE = 0, /* not searched (fixed mode, or the variant FAILED) */
    CAPACITY_LIMIT_SLO_P95,  /* the first rate above capacity missed the p95 objective */
    CAPACITY_LIMIT_SLO_P99,
    CAPACITY_LIMIT_SLO_ERRORS,
    CAPACITY_LIMIT_GENERATOR, /* the generator could not deliver: "at least X" */
    CAPACITY_LIMIT_BUDGET,    /* the step or time budget ended the search first */
    CAPACITY_LIMIT_MAX_RPS,   /* the profile's ceiling was reached while still within the SLO */
};

/* LOAD: with a target, after the repeats, steps well below capacity that measure the CPU the
 * sizing needs (at the planned load per pod, and at a quarter of capacity). */
enum capacity_step_kind {
    CAPACITY_STEP_PROBE = 0,
    CAPACITY_STEP_SEARCH,
    CAPACITY_STEP_REPEAT,
    CAPACITY_STEP_LOAD
};

/* Marks on a capacity figure. Any of them but TOO_FEW_REPEATS and UNMEETABLE makes it invalid:
 * shown, never the recommendation. UNMEETABLE is a valid answer of 0: even one request at a time
 * missed the SLO, so no load meets it (never a candidate either, having no capacity). */
#define CAPACITY_FLAG_GENERATOR       (1u << 0) /* the generator, not the app, set the limit */
#define CAPACITY_FLAG_NOISY           (1u << 1) /* interval wider than CAPACITY_NOISY_REL twice */
#define CAPACITY_FLAG_CONTENDED       (1u << 2) /* the host could not give the variant its CPU */
#define CAPACITY_FLAG_TOO_FEW_REPEATS (1u << 3) /* fewer than STATS_MIN_REPEATS repeats */
#define CAPACITY_FLAG_BUDGET          (1u << 4) /* the search ended on its budget, not bracketed */
#define CAPACITY_FLAG_NONE_PASSED     (1u << 5) /* not even the lowest step met the SLO */
#define CAPACITY_FLAG_UNMEETABLE      (1u << 6) /* one user at a time missed the SLO: 0, valid */
/* Fewer repeats than the runner set out to measure (the profile's search.repeats, and as many
 * again to re-measure a noisy interval): the budget or a stop cut them short. Never the
 * recommendation, whatever the figure: it rests on less than the profile asked for. */
#define CAPACITY_FLAG_REPEATS_CUT (1u << 7)
#define CAPACITY_FLAG_LAST        CAPACITY_FLAG_REPEATS_CUT

struct capacity_throttling {
    bool known;                 /* false: the platform cannot read it (kube: reported unknown) */
    uint64_t periods;           /* CFS enforcement periods elapsed */
    uint64_t throttled_periods; /* periods in which the cgroup was throttled */
    double throttled_s;         /* total time throttled */
};

struct capacity_step {
    enum capacity_step_kind kind;
    double offered_rps;  /* the open-loop rate asked for (probe: the closed-loop throughput) */
    double achieved_rps; /* completed requests per second in the window */
    /* achieved_rps with the requests still in flight at the window's end counted (about one
     * median latency's worth, search_sustained_rps) when the step passed; achieved_rps when it
     * did not. What the capacity figures are made of. */
    double sustained_rps;
    uint64_t p50_us, p95_us, p99_us;
    double error_rate;
    double cpu_cores;          /* the variant's mean cores in the window; < 0 unknown */
    double usage_window_s;     /* the window the platform measured use over; < 0 unknown */
    int64_t peak_memory_bytes; /* < 0 unknown */
    double gen_cores;          /* the generator's mean cores; < 0 unknown */
    bool pass;                 /* within the SLO */
    bool gen_limited;          /* the generator was not within its means */
    struct capacity_throttling throttling;
};

/* How the app came back after the steps that failed: each such step is followed by a settle
 * that alternates CAPACITY_SETTLE_REST_S at one user per replica with CAPACITY_SETTLE_WINDOW_S
 * at CAPACITY_SETTLE_SHARE of the last rate that passed (one user per replica alone when none
 * has yet), until such a burst meets the SLO, for at most search.settle; the first burst comes
 * at once. The recovery time is the time of the bursts and rests before the one that met the
 * SLO: 0 for an app that serves again at once. The share
 * keeps a recovered app clear of its knee, where a window can miss the SLO by chance; an app
 * still slow from the overload misses it there. */
#define CAPACITY_SETTLE_SHARE    0.9
#define CAPACITY_SETTLE_WINDOW_S 0.5
#define CAPACITY_SETTLE_REST_S   0.5
struct capacity_recovery {
    unsigned settles; /* settles run (one after each failed step) */
    unsigned ran_out; /* of them, those that search.settle ended before a window met the SLO */
    double longest_s; /* the longest recovery among those that ended in time (settles > ran_out) */
    double bound_s;   /* search.settle */
    bool at_rate;     /* some settle held a rate (else all held one user per replica) */
};

/* The repeats at capacity as one measurement: their histograms and counts added (histograms add
 * exactly), for the row's latency columns in capacity mode. */
struct capacity_merged {
    bool have; /* at least one repeat was merged */
    uint64_t requests;
    uint64_t p50_us, p95_us, p99_us;
    double error_rate;
};

struct capacity_result {
    bool searched; /* a capacity search ran for this variant */
    double rps;    /* the sustained rate: the repeats' mean (the best passing step without them) */
    struct stats_summary interval; /* of the repeats' sustained rates (capacity_step) */
    double repeat_rps[CAPACITY_MAX_REPEATS];
    double per_core; /* rps / the variant's CPU limit in cores */
    enum capacity_limit limited_by;
    bool valid;                /* no invalidating flag */
    unsigned flags;            /* CAPACITY_FLAG_* */
    double cpu_cores;          /* mean cores over the repeats at capacity; < 0 unknown */
    int64_t peak_memory_bytes; /* highest peak over the repeats; < 0 unknown */
    struct capacity_throttling throttling; /* summed over the search */
    struct capacity_merged merged;         /* the last set of repeats, merged */
    unsigned contended_reruns;         /* repeats measured again: the host could not give the CPU */
    struct capacity_recovery recovery; /* after the failed steps */
    size_t nsteps;
    struct capacity_step steps[CAPACITY_MAX_STEPS];
};

/* The lowest rate above cap->rps that a search step missed for the app's own reasons (not the
 * generator's): the top of the search's final bracket. 0 when no such step ran. */
double capacity_bracket_high(const struct capacity_result *cap);

/* Sets cap->interval from the repeats (or cap->rps alone) and widens its upper end to the
 * search's bracket: repeats measured at one offered rate can agree to the request, and an
 * interval of zero width would claim a precision the search never had. The lower end, which
 * planning uses, is the repeats'. Returns 0 or -EINVAL (a non-finite figure). */
int capacity_set_interval(struct capacity_result *cap, size_t nrepeats);

/* Whether cap is a figure the sizing may read: no invalidating mark and a capacity above 0, or
 * the unmeetable answer (0, valid). The runner and the operator's restored state both use it. */
bool capacity_valid(const struct capacity_result *cap);

/* The capacity interval's lower bound (the measured capacity when there are fewer than two
 * repeats), never below 0: what a pod is planned from. */
double capacity_low(const struct capacity_result *cap);

/* A capacity as people are shown it (every printer of a capacity reads it: the table's cell,
 * the scale-out's table, results.md, report.html, results.json). The interval is the
 * STATS_CONFIDENCE interval of the repeats, its upper end widened to the search's bracket
 * (capacity_set_interval), with its lower end never below 0. A figure whose repeats disagreed
 * beyond CAPACITY_NOISY_REL (the test that asks for a re-measure) is unknown when the re-measure
 * was cut short (CAPACITY_FLAG_REPEATS_CUT) or when its interval would be wider than the figure
 * itself: no capacity is shown for it then, only its repeats. */
struct capacity_shown {
    bool unknown;     /* the repeats disagreed: show them, not a capacity */
    bool interval;    /* low and high are an interval (two repeats or more) */
    double low, high; /* 0 <= low <= rps <= high when interval; else both rps */
};

/* What cap shows people; cap must have been searched. */
void capacity_show(const struct capacity_result *cap, struct capacity_shown *out /* OUT */);

/* (1 - buffer) / (1 + growth): the share of the lower bound each pod is planned at. */
double capacity_planned_fraction(const struct profile_planning *p);

/* With a target, the runner measures CPU at 1/CAPACITY_CPU_GROWTH_LOAD of capacity (beside the
 * planned load) so the sizing can tell whether CPU grows with load (advise/sizing.h). */
#define CAPACITY_CPU_GROWTH_LOAD 4.0

#endif
