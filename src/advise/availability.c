/* Zones and disruption (availability.h). */

#include "advise/availability.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor.h"
#include "advise/advisor_int.h"
#include "advise/sizing.h"

static unsigned ceil_div(unsigned a, unsigned b)
{
    return a / b + (a % b != 0);
}

int availability_plan(unsigned needed, unsigned zones, unsigned drain,
                      struct availability_plan *out, char *err)
{
    unsigned n;

    memset(out, 0, sizeof(*out));
    if (needed < 1 || needed > AVAILABILITY_MAX_REPLICAS)
        return err_set(err, -EINVAL, "availability: %u pods needed, expected 1 to %u", needed,
                       AVAILABILITY_MAX_REPLICAS);
    if (zones < 1 || zones > PROFILE_MAX_ZONES)
        return err_set(err, -EINVAL, "availability: %u zones, expected 1 to %d", zones,
                       PROFILE_MAX_ZONES);
    if (drain > PROFILE_MAX_DRAIN)
        return err_set(err, -EINVAL, "availability: drain %u, expected 0 to %d", drain,
                       PROFILE_MAX_DRAIN);
    out->zones = zones;
    out->drain = drain;
    out->needed = needed;
    out->min_available = needed;
    /* With one zone an outage takes every pod whatever N is: there is no zone term. With z
     * zones the pods spread evenly lose at most ceil(N / z) to one zone; N - ceil(N / z) only
     * grows with N, and N = 2R always suffices for z >= 2, so the search is bounded. */
    n = needed;
    if (zones > 1)
        while (n - ceil_div(n, zones) < needed)
            n++;
    out->zone_replicas = n;
    out->drain_replicas = needed + drain;
    out->replicas = n > out->drain_replicas ? n : out->drain_replicas;
    out->applied = true;
    if (zones > 1)
        snprintf(out->text, sizeof(out->text),
                 "availability: the target needs %u pod%s up; with %u zones an outage takes "
                 "ceil(N / %u) of N pods, and N = %u is the smallest with N - ceil(N / %u) = %u "
                 ">= %u; a drain of %u takes %u + %u = %u; replicas = max(%u, %u) = %u, and the "
                 "PodDisruptionBudget keeps minAvailable %u",
                 needed, needed == 1 ? "" : "s", zones, zones, n, zones, n - ceil_div(n, zones),
                 needed, drain, needed, drain, out->drain_replicas, n, out->drain_replicas,
                 out->replicas, needed);
    else
        snprintf(out->text, sizeof(out->text),
                 "availability: the target needs %u pod%s up; with one zone an outage takes "
                 "every pod, so no replica count survives it and only the drain is planned for: "
                 "%u + %u = %u replicas, and the PodDisruptionBudget keeps minAvailable %u",
                 needed, needed == 1 ? "" : "s", needed, drain, out->replicas, needed);
    return 0;
}

void availability_step(const struct profile_availability *av, int recommended, bool by_target,
                       unsigned needed, unsigned hpa_max_without, struct availability_step *out)
{
    memset(out, 0, sizeof(*out));
    if (!av || !av->given || recommended < 0)
        return;
    if (!by_target || needed < 1) {
        out->state = AVAILABILITY_NOT_SIZED;
        return;
    }
    if (availability_plan(needed, av->zones, av->drain, &out->plan, out->refused) != 0) {
        out->state = AVAILABILITY_REFUSED;
        return;
    }
    out->state = AVAILABILITY_PLANNED;
    out->hpa_max_without = hpa_max_without;
}

void availability_hpa(const struct profile_availability *av, unsigned curve_cap,
                      struct availability_step *st, struct sizing_hpa *h)
{
    struct availability_plan grown;
    char err[ERR_LEN];

    if (st->state != AVAILABILITY_PLANNED || !h->enabled || st->hpa_max_without < 1 ||
        availability_plan(st->hpa_max_without, av->zones, av->drain, &grown, err) != 0)
        return;
    /* At the grown load the HPA's maxReplicas pods must be up, so they get the same margin. */
    unsigned max = grown.replicas;
    if (curve_cap > 0 && max > curve_cap)
        max = curve_cap; /* never past where the curve ends */
    if (max > h->max_replicas)
        h->max_replicas = max;
    if (h->max_replicas < h->min_replicas + 1)
        h->max_replicas = h->min_replicas + 1; /* room to scale */
    st->hpa_grown = true;
}

void availability_findings(const struct profile_availability *av,
                           const struct availability_step *st, bool fixed, struct advice *a)
{
    const struct sizing_hpa *h = &a->sizing.hpa;

    memset(&a->availability, 0, sizeof(a->availability));
    switch (st->state) {
    case AVAILABILITY_ABSENT:
        return;
    case AVAILABILITY_NOT_SIZED:
        advisor__finding(a,
                         "availability: %u zone%s, drain %u, but the recommendation is not sized "
                         "for a target (the profile names none, or no variant met it), so no "
                         "replicas are added and no PodDisruptionBudget is written",
                         av->zones, av->zones == 1 ? "" : "s", av->drain);
        return;
    case AVAILABILITY_REFUSED:
        advisor__finding(a, "%s; no replicas are added", st->refused);
        return;
    case AVAILABILITY_PLANNED:
        break;
    }
    if (fixed && !a->sizing.unreachable && a->replicas > 0 && a->replicas < st->plan.replicas)
        a->replicas = a->sizing.replicas = st->plan.replicas;
    a->availability = st->plan;
    a->availability.applied = !a->sizing.unreachable && a->replicas > 0;
    advisor__finding(a, "%s", st->plan.text);
    if (st->hpa_grown)
        advisor__finding(a,
                         "Autoscaling with availability (%u zone%s, drain %u): minReplicas %u, "
                         "maxReplicas %u (%u pods up at the grown load).",
                         av->zones, av->zones == 1 ? "" : "s", av->drain, h->min_replicas,
                         h->max_replicas, st->hpa_max_without);
}
