#ifndef SIZEUP_LOAD_PLAN_H
#define SIZEUP_LOAD_PLAN_H

/* The timeline of one load run: a warm-up segment (load applied, not measured) and then either
 * one flat measured segment (users or rate) or the profile's stages, each ramping linearly from
 * the previous target to its own. For open loop it also answers "when is the k-th request due",
 * by inverting the integral of the rate, so every thread can keep its share of one global
 * schedule without talking to the others. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "profile/profile.h"

struct plan_seg {
    int64_t start_ns; /* from the run's start */
    int64_t dur_ns;
    double from, to; /* users or rate at the segment's start and end */
    int stage;       /* index into the profile's stages, -1 for warm-up or a flat run */
    int measured;    /* 0 for warm-up */
    double cum0;     /* open loop: requests due before this segment */
};

struct plan {
    int open_loop; /* targets are rates (requests/s), else users */
    size_t nsegs;
    struct plan_seg *segs; /* owned */
    int64_t measure_start_ns;
    int64_t end_ns;
    double peak;      /* the highest target anywhere */
    double total_due; /* open loop: requests due over the whole run */
};

/* Builds the plan from p (borrowed). Stages must all target users or all target rate.
 * Returns 0, -EINVAL (err says why) or -ENOMEM. Free with plan_free. */
int plan_build(const struct profile *p, struct plan *pl /* OUT */, char *err);

/* Frees what pl owns and zeroes it; no-op on a zeroed plan. */
void plan_free(struct plan *pl);

/* The segment active at t_ns (from the run's start), or NULL past the end. *hint (may be NULL)
 * remembers the last index to make forward scans O(1). */
const struct plan_seg *plan_seg_at(const struct plan *pl, int64_t t_ns, size_t *hint);

/* The target (users or rate) at t_ns: linear within the segment. 0 past the end. */
double plan_target_at(const struct plan *pl, int64_t t_ns, size_t *hint);

/* Open loop: the time (ns from the run's start) at which the cumulative number of due requests
 * reaches k (k > 0); INT64_MAX when the run ends first. */
int64_t plan_due_ns(const struct plan *pl, double k, size_t *hint);

#endif
