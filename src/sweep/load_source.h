#ifndef SIZEUP_SWEEP_LOAD_SOURCE_H
#define SIZEUP_SWEEP_LOAD_SOURCE_H

/* The load-source seam: where a load run of the sweep comes from. The runner asks its load
 * source for every load run (a warm-up, a measured window, a step of the capacity search) and
 * never learns whether the load came from this process or from N generator pods:
 *
 *   in-process   load_run here, on this machine (sizeup sweep, and the operator's own pod)
 *   job          an Indexed Job of N `sizeup loadtest` workers, their results merged exactly
 *                (src/operator/loadjob.c)
 *
 * Rules every implementation keeps:
 * - run has load_run's contract: the same options, a result with the same shape (the profile's
 *   names and stages) covering the whole load the profile asked for, freed by the caller with
 *   load_result_free; the stop flag in the options ends it early.
 * - A load that could not be delivered whole (a generator failed, was evicted, started or
 *   reported late) is never returned as if complete: run returns LOAD_SOURCE_EINCOMPLETE with
 *   err naming the generator ("generator 2 of 3: ..."), *out left freed, and the step is invalid.
 * - run cleans up what it started for a run before returning (pods, Jobs), on every path. */

#include "core/err.h"
#include "load/load.h"
#include "load/result.h"

/* The load was not delivered by every generator: the step cannot be judged. */
#define LOAD_SOURCE_EINCOMPLETE (-EREMOTEIO)

struct load_source_ops {
    const char *name; /* "in-process", "job" */

    /* One load run, as load_run (see above). Borrows o. */
    int (*run)(void *self, const struct load_opts *o, struct load_result *out /* OUT */, char *err);

    /* How many generators send the load (1 in-process). */
    unsigned (*generators)(const void *self);

    /* Frees self; removes nothing the runs have not removed already. NULL-safe. */
    void (*free)(void *self);
};

/* A load source is its operations and its opaque state, owned by whoever made it. */
struct load_source {
    const struct load_source_ops *ops;
    void *self;
};

/* The in-process source: load_run on this machine. Never freed (static). */
extern const struct load_source load_source_in_process;

/* Runs one load from src, or in-process when src is NULL. Borrows both. */
int load_source_run(const struct load_source *src, const struct load_opts *o,
                    struct load_result *out /* OUT */, char *err);

#endif
