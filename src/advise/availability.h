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

struct advice; /* advise/advisor.h */

/* The availability hook of the answer: with av given and a target sized, plans a->replicas,
 * makes the plan the answer's replica count (a->replicas, a->sizing.replicas), the HPA's
 * minReplicas and, for the grown load, its maxReplicas, and adds the arithmetic as a finding.
 * Without a recommendation sized for a target it adds a finding that says nothing was added. av
 * absent: a unchanged but a->availability zeroed. Borrows av. */
void availability_apply(const struct profile_availability *av, struct advice *a);

#endif
