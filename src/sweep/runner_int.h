#ifndef SIZEUP_SWEEP_RUNNER_INT_H
#define SIZEUP_SWEEP_RUNNER_INT_H

/* The sweep runner's internals shared by its files (runner.c: the variant loop and fixed-load
 * mode; runner_capacity.c: capacity mode; runner_streams.c: stream capacity; runner_scale_out.c:
 * the scale-out; runner_util.c: the helpers they all call, below every one of them); not part of
 * the sweep layer's interface. */

#include <stdbool.h>
#include <stddef.h>

#include "load/load.h"
#include "sweep/contention.h"
#include "sweep/runner.h"

/* The loop's state, passed to every callback. Times are monotonic seconds. */
struct sweep__ctx {
    const struct sweep_opts *o;
    struct sweep *s;
    size_t index;
    double t0; /* this variant's start */
    enum sweep_phase phase;
    /* What the progress line shows in capacity mode. */
    unsigned step;
    const char *step_what;
    double offered_rps;
    bool stream_step;      /* the step is a stream-capacity step ... */
    unsigned step_streams; /* ... holding this many streams */
    /* For the estimate of the time left. */
    double deadline;           /* the sweep's (capacity mode: search.budget); 0: none */
    double variant_deadline;   /* this variant's share of what is left; 0: none */
    double variant_estimate_s; /* planned wall time of one variant */
    double done_wall_s;        /* wall time of the variants finished so far ... */
    size_t done_n;             /* ... and how many */
    double load_s;             /* planned length of this variant's load runs (for overhead_s) */
    /* A scale-out point (runner_scale_out.c): the row the capacity search fills instead of
     * rows[index], the replicas' URLs the load is spread over, and where the search starts
     * (the prediction; no probe). All NULL / 0 for a variant of the shape search. */
    struct sweep_row *row;
    const char *const *urls;
    size_t nurls;
    double start_rps;
    bool scale_out_planned; /* the scale-out takes one more share of the time budget */
    bool scale_out_only;    /* sweep_run_scale_out: row 0 is the variant, from the prior points */
};

/* The row the current measurement fills: a scale-out point's, else the variant's. */
struct sweep_row *sweep__row(struct sweep__ctx *c);

/* The scale-out, after the shape search (runner_scale_out.c): measures the chosen variant at
 * its replica counts into c->s->scale_out, or says there why it did not. */
void sweep__scale_out(struct sweep__ctx *c);

/* Whether the profile and the platform ask for a scale-out, so that the budget keeps it a
 * share; the final decision (the variant, the default's host check) is sweep__scale_out's. */
bool sweep__scale_out_planned(const struct sweep_opts *o);

/* Whether the sweep was asked to stop (o->stop set). */
bool sweep__stopped(const struct sweep_opts *o);

/* The transient contention rule (sweep/contention.h) on one measured window u of variant v.
 * Such a capacity repeat is measured again (at most SWEEP_CONTENDED_RERUNS times per variant);
 * the structural rule (limit + generator > host) is never re-measured. */
#define SWEEP_CONTENDED_RERUNS 2
bool sweep__transient_contended(const struct sweep *s, const struct variant *v,
                                const struct platform_usage *u);

/* Reports phase (and the load run's live figures, lp may be NULL) to the progress callback. */
void sweep__progress(struct sweep__ctx *c, enum sweep_phase phase, const struct load_progress *lp);

/* A load_progress_fn whose ud is the sweep__ctx: live figures in the current phase. */
void sweep__on_load_progress(void *ud, const struct load_progress *lp);

/* Marks the row FAILED with kind and reason (the kind's name when reason is empty). */
void sweep__fail_row(struct sweep_row *row, enum platform_fail kind, const char *reason);

/* Capacity mode for the current variant, which is ready and serves at url: the probe, the
 * search, the repeats at the found capacity. Fills the row's cap, and its load and usage with
 * the representative step (the last repeat, or the measured step closest to capacity). Returns
 * 0, or a negative errno when a load run could not run at all (err says why; the row is then
 * FAILED by the caller). */
int sweep__capacity(struct sweep__ctx *c, const char *url, char *err);

/* Stream-capacity mode for the current variant (a profile with streams, capacity mode): a
 * window at zero streams, then the stream search's steps within one stream session. Fills the
 * row's scap, and its load and usage with the representative window. Returns 0, or a negative
 * errno when the session could not run at all (err says why). */
int sweep__streams(struct sweep__ctx *c, const char *url, char *err);

/* The planned wall time of one variant in capacity mode (for the estimate before any variant
 * finished). */
double sweep__capacity_estimate_s(const struct profile *p);

#endif
