#ifndef SIZEUP_SWEEP_RUNNER_STEP_INT_H
#define SIZEUP_SWEEP_RUNNER_STEP_INT_H

/* Private to the sweep runner's capacity mode: one step of load measured and judged
 * (runner_step.c), below the flow that decides which steps to run (runner_capacity.c: the probe,
 * the search, the repeats until they hold). Not part of the sweep layer's interface. */

#include <stdbool.h>
#include <stdint.h>

#include "load/result.h"
#include "sweep/runner_int.h"
#include "sweep/search.h"

/* One measured step and what it leaves behind. */
struct step_run {
    struct capacity_step st;
    enum search_outcome outcome;
    enum capacity_limit why; /* the objective a failed step missed */
    struct load_result res;  /* owned when have_res */
    bool have_res;
    struct platform_usage usage;
    bool have_usage;
};

struct cap_ctx {
    struct sweep__ctx *c;
    const char *url;
    const struct profile *p;
    unsigned conn_cap;
    struct capacity_result *cap;
    struct step_run keep; /* the representative step so far */
    bool have_keep;
    bool died;             /* the variant died or was OOM-killed in a step: measure no more */
    double last_pass_rate; /* the last open-loop rate a step passed at; 0: none yet */
    /* Where the load comes from: the sweep's source, until a step is generator-limited and a
     * wider one (sweep_opts.load_source_more) takes over for the rest of the variant. */
    const struct load_source *src;
    int64_t repeat_window_us; /* the next repeat's measured window; 0: search.window */
    /* How long the platform needs a window to be to report CPU: the platform's first guess
     * (facts), then what each step's usage said (a cluster's metrics window as it really is). */
    int64_t usage_window_us;
    /* Where the variant's minutes went, logged at its end (sweep.capacity_time): the load runs'
     * planned warm-ups and windows (window_s), what they took beyond that (starting the
     * generator, its Jobs in a cluster, and merging: start_s), the platform's usage calls
     * (holding a step until its metrics window is covered: hold_s) and the settles after failed
     * steps (settle_s). */
    struct {
        double window_s, start_s, hold_s, settle_s;
        bool settling; /* in settle(): its load runs count as settle_s */
    } t;
    /* The CPU the last repeats measured and the rate they ran at: a re-measure at that rate (a
     * noisy interval) keeps it instead of holding another repeat for a metrics window. */
    struct {
        double rate, sum;
        size_t n;
    } cpu;
    struct load_stats *merged; /* the repeats' histograms added, owned (measure_repeats) */
};

/* The generator's connection cap: what its descriptor limit allows for threads load threads,
 * at most MAX_CONNS (see runner_step.c). */
unsigned sweep__cap_conn_cap(unsigned threads);

/* Frees the step's load result, if it holds one (a no-op otherwise). */
void sweep__cap_step_free(struct step_run *r);

/* How long a load step's window is: the search's window, or longer when the platform needs
 * more to report CPU at all. */
int64_t sweep__cap_load_window_us(const struct cap_ctx *x);

/* Runs one step: its warm-up, then its measured window between usage_begin and usage_end, and
 * judges it against the SLO into *out (the caller frees it with sweep__cap_step_free or files
 * it). Returns 0, or a load run's error. */
int sweep__cap_run_step(struct cap_ctx *x, enum capacity_step_kind kind, double rate,
                        unsigned users, struct step_run *out /* OUT */, char *err);

/* Files the step in the result (takes its load result), keeping it as the representative one
 * when representative is set or none is kept yet. */
void sweep__cap_file_step(struct cap_ctx *x, struct step_run *r, bool representative);

/* After a failed step, holds the app at a share of the last passing rate until it serves
 * within the SLO again (or search.settle runs out), recording the recovery in x->cap. */
void sweep__cap_settle(struct cap_ctx *x);

/* Whether a step with this window still fits in the variant's share of the time budget. */
bool sweep__cap_time_for_step(const struct cap_ctx *x, int64_t window_us);

/* Judges a repeat's window by the transient contention rule, logging the figures it read. */
bool sweep__cap_repeat_contended(struct cap_ctx *x, const struct step_run *r);

#endif
