#ifndef SIZEUP_ADVISE_AVAILABILITY_H
#define SIZEUP_ADVISE_AVAILABILITY_H

/* Zones and disruption (docs/sweep.md, "Availability"): how many replicas keep the target's R
 * pods up through a zone outage and a node drain, and the PodDisruptionBudget that holds R during
 * a drain. Pure arithmetic on counts, tested without a sweep:
 *   zone term   the smallest N with N - ceil(N / zones) >= R (one zone: no zone term, R)
 *   drain term  R + drain
 *   replicas    max(zone term, drain term); minAvailable = R */

#include <stdbool.h>

#include "core/err.h"
#include "profile/profile.h"

#define AVAILABILITY_TEXT_LEN 512
/* R above this is refused: no Deployment runs a million pods. */
#define AVAILABILITY_MAX_REPLICAS 1000000u

struct availability_plan {
    bool applied;            /* availability given and a target sized: the answer's replicas */
    unsigned zones, drain;   /* as the profile gave them */
    unsigned needed;         /* R: the pods the target needs up */
    unsigned zone_replicas;  /* the zone term (R with one zone) */
    unsigned drain_replicas; /* R + drain */
    unsigned replicas;       /* max of the two */
    unsigned min_available;  /* the PodDisruptionBudget's minAvailable: R */
    char text[AVAILABILITY_TEXT_LEN]; /* the arithmetic as one sentence */
};

/* The plan for `needed` pods (1..AVAILABILITY_MAX_REPLICAS) over zones (>= 1) with drain pods
 * down at once; fills *out (applied true). Returns 0 or -EINVAL (err says which count). */
SIZEUP_MUST_USE int availability_plan(unsigned needed, unsigned zones, unsigned drain,
                                      struct availability_plan *out /* OUT */, char *err);

/* Where availability stands after step (5) of the answer. */
enum availability_state {
    AVAILABILITY_ABSENT,    /* not given, or nothing recommended: nothing to say */
    AVAILABILITY_NOT_SIZED, /* given, but the answer is not sized for a target */
    AVAILABILITY_REFUSED,   /* the plan refused the count (refused says why) */
    AVAILABILITY_PLANNED,   /* plan made: its extra pods added to the count */
};

/* Availability as the answer's steps (5) and (6) carry it: figures only, phrased by
 * availability_findings after the advisor's own findings. */
struct availability_step {
    enum availability_state state;
    struct availability_plan plan; /* PLANNED */
    char refused[ERR_LEN];         /* REFUSED: availability_plan's error */
    unsigned hpa_max_without;      /* step (6)'s maxReplicas for the R pods alone (0: no HPA) */
    bool hpa_grown;                /* step (6) gave the HPA the plan's margin */
};

/* Step (5): the plan for the `needed` pods the target needs up (R), when av is given (may be
 * NULL), something is recommended (recommended >= 0) and it is sized for a target (by_target,
 * needed >= 1). hpa_max_without is step (6)'s maxReplicas for R alone, kept for the margin.
 * Fills *out; its plan's extra pods are plan.replicas - plan.needed. Borrows av. */
void availability_step(const struct profile_availability *av, int recommended, bool by_target,
                       unsigned needed, unsigned hpa_max_without,
                       struct availability_step *out /* OUT */);

struct sizing_hpa; /* advise/sizing.h */

/* Step (6)'s margin: with the plan made and an HPA enabled at *h (minReplicas already the
 * plan's count), maxReplicas gets the same margin at the grown load: the plan for
 * st->hpa_max_without pods, never past curve_cap (where the scale-out's curve ends; 0: no
 * curve), and at least minReplicas + 1. Sets st->hpa_grown when applied. Borrows av. */
void availability_hpa(const struct profile_availability *av, unsigned curve_cap,
                      struct availability_step *st, struct sizing_hpa *h);

struct advice; /* advise/advisor.h */

/* The answer's availability, after the advisor's findings: a->availability from st (applied
 * when the plan's count is the answer's: a count, not unreachable), in a fixed-load sweep the
 * plan's count as the answer's replicas (its count is made outside the sizing's steps), and the
 * sentences: the plan's arithmetic and the autoscaler's margin, or why no replicas were added.
 * Borrows av and st. */
void availability_findings(const struct profile_availability *av,
                           const struct availability_step *st, bool fixed, struct advice *a);

#endif
