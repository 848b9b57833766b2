/* Zones and disruption (availability.h). */

#include "advise/availability.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor.h"
#include "advise/advisor_internal.h"

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

void availability_apply(const struct profile_availability *av, struct advice *a)
{
    struct availability_plan grown;
    struct sizing_hpa *h = &a->sizing.hpa;
    char err[ERR_LEN];

    memset(&a->availability, 0, sizeof(a->availability));
    if (!av || !av->given || a->recommended < 0)
        return;
    if (!a->by_target || a->replicas < 1) {
        advisor__finding(a,
                         "availability: %u zone%s, drain %u, but the recommendation is not sized "
                         "for a target (the profile names none, or no variant met it), so no "
                         "replicas are added and no PodDisruptionBudget is written",
                         av->zones, av->zones == 1 ? "" : "s", av->drain);
        return;
    }
    if (availability_plan(a->replicas, av->zones, av->drain, &a->availability, err) != 0) {
        advisor__finding(a, "%s; no replicas are added", err);
        return;
    }
    advisor__finding(a, "%s", a->availability.text);
    a->replicas = a->availability.replicas;
    a->sizing.replicas = a->availability.replicas;
    if (!h->enabled)
        return;
    /* At the grown load the HPA's maxReplicas pods must be up, so they get the same margin. */
    unsigned old_max = h->max_replicas;
    h->min_replicas = a->availability.replicas;
    if (old_max >= 1 && availability_plan(old_max, av->zones, av->drain, &grown, err) == 0)
        h->max_replicas = grown.replicas;
    if (h->max_replicas < h->min_replicas + 1)
        h->max_replicas = h->min_replicas + 1; /* room to scale */
    size_t len = strlen(h->note);
    snprintf(h->note + len, sizeof(h->note) - len,
             " With availability (%u zone%s, drain %u): minReplicas %u, maxReplicas %u (%u pods "
             "up at the grown load).",
             av->zones, av->zones == 1 ? "" : "s", av->drain, h->min_replicas, h->max_replicas,
             old_max);
}
