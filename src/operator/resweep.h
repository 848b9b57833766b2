#ifndef SIZEUP_OPERATOR_RESWEEP_H
#define SIZEUP_OPERATOR_RESWEEP_H

/* Sizing that stays current: with `sizeup.dev/resweep: on-image-change` a Deployment is swept
 * again on its own when a container image changes and the rollout completes, at most once per
 * `sizeup.dev/resweep-min-interval`. A change inside the interval is deferred to its end, when
 * the Deployment is read again (so the sweep takes the newest image), never dropped.
 *
 * The operator starts such a sweep the way a person does: it writes a new sizeup.dev/sweep
 * value, in one merge patch with the images it is for and the time, both kept as annotations,
 * so the interval's clock survives an operator restart. The decision is a pure function of
 * the Deployment and the time (resweep_decide), tested without a cluster.
 *
 * The new results are compared with the previous ones (kept as previous-results.json) by
 * throughput and p95 per variant; a change beyond RESWEEP_NOISE is called significant. */

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

#include "core/err.h"
#include "advise/advisor.h"

/* Annotations the operator writes for re-sweeps. */
#define RESWEEP_ANNOT_IMAGES "sizeup.dev/resweep-images" /* the images the last sweep measured */
#define RESWEEP_ANNOT_LAST   "sizeup.dev/resweep-last"   /* when the last automatic one began */

#define RESWEEP_SWEEP_PREFIX "resweep-" /* sizeup.dev/sweep values the operator writes */
#define RESWEEP_IMAGES_MAX   1024       /* "container=image ..." longer than this: cut */
/* A relative change of throughput or p95 above this is significant: larger than the run-to-run
 * spread of a fixed-load measurement of one variant on a quiet node (a few percent). */
#define RESWEEP_NOISE 0.10

enum resweep_action {
    RESWEEP_NONE,     /* nothing to do now; a later event will say when there is */
    RESWEEP_BASELINE, /* re-sweeps are on but no images are recorded yet: record these */
    RESWEEP_START,    /* the images changed and rolled out, the interval has passed: sweep */
    RESWEEP_LATER,    /* the images changed inside the interval: look again at `due` */
};

struct resweep_decision {
    enum resweep_action action;
    time_t due;                      /* RESWEEP_LATER: when the interval ends */
    char images[RESWEEP_IMAGES_MAX]; /* the Deployment's images now */
    char why[ERR_LEN];               /* one phrase for the log */
};

/* The images of deploy's pod template (borrowed) as "container=image" words joined by spaces,
 * in the template's order, into out (len bytes; cut at a word boundary when too long). */
void resweep_images(const cJSON *deploy, char *out, size_t len);

/* Decides what the Deployment deploy (borrowed) calls for at wall-clock time now. Returns 0,
 * or -EINVAL with the reason in err when its resweep annotations are malformed. */
int resweep_decide(const cJSON *deploy, time_t now, struct resweep_decision *out /* OUT */,
                   char *err);

/* The merge patch (owned JSON text, free()) that acts on d for deploy (borrowed): BASELINE
 * records the images; START also sets a new sizeup.dev/sweep value and the start time. It
 * carries deploy's resourceVersion, so a Deployment changed since it was read gets a 409 and
 * is decided again. NULL when out of memory or for another action. */
char *resweep_patch(const cJSON *deploy, const struct resweep_decision *d, time_t now);

/* Compares the current rows[0..n) (borrowed) with previous, a results.json text (borrowed),
 * variant by variant (same spec, measured in both): one sentence into out (len bytes) naming
 * the previous images, how many variants were compared and the variant that moved most (by
 * throughput or p95), and whether any moved beyond RESWEEP_NOISE (*significant, may be NULL).
 * Returns 0, or -ENOENT when nothing is comparable (out then says why). */
int resweep_compare(const char *previous, const struct advisor_row *rows, size_t n, char *out,
                    size_t len, int *significant /* OUT */);

/* The same comparison where both sweeps searched capacity: previous and current are results.json
 * texts (borrowed), compared as `sizeup compare` does (Welch's test on the repeats, src/sweep/
 * compare.c). One sentence into out naming the variant whose capacity moved most and whether any
 * capacity changed significantly (*significant, may be NULL). Returns 0, or -ENOENT when no
 * variant has a capacity on both sides (then resweep_compare's throughput/p95 rule applies). */
int resweep_compare_capacity(const char *previous, const char *current, char *out, size_t len,
                             int *significant /* OUT */);

#endif
