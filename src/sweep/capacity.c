/* Figures derived from a capacity search's steps, shared by the runner (which measures them), the
 * operator's state (which restores them after a restart) and the sizing (which plans from them),
 * so all state the same interval. */

#include "sweep/capacity.h"

#include <math.h>

double capacity_bracket_high(const struct capacity_result *cap)
{
    double high = 0;
    for (size_t i = 0; i < cap->nsteps; i++) {
        const struct capacity_step *st = &cap->steps[i];
        if (st->kind == CAPACITY_STEP_SEARCH && !st->pass && !st->gen_limited &&
            st->offered_rps > cap->rps && (high == 0 || st->offered_rps < high))
            high = st->offered_rps;
    }
    return high;
}

int capacity_set_interval(struct capacity_result *cap, size_t nrepeats)
{
    int rc = stats_summarize(nrepeats >= 2 ? cap->repeat_rps : &cap->rps,
                             nrepeats >= 2 ? nrepeats : (cap->rps > 0 ? 1 : 0), &cap->interval);
    if (rc)
        return rc;
    double high = capacity_bracket_high(cap);
    if (high > cap->interval.high)
        cap->interval.high = high;
    return 0;
}

bool capacity_valid(const struct capacity_result *cap)
{
    const unsigned allowed = CAPACITY_FLAG_TOO_FEW_REPEATS | CAPACITY_FLAG_UNMEETABLE;
    if (cap->flags & ~allowed)
        return false;
    return cap->rps > 0 || (cap->flags & CAPACITY_FLAG_UNMEETABLE);
}

double capacity_low(const struct capacity_result *cap)
{
    if (cap->interval.n >= 2)
        return cap->interval.low > 0 ? cap->interval.low : 0;
    return cap->rps > 0 ? cap->rps : 0;
}

void capacity_show(const struct capacity_result *cap, struct capacity_shown *out)
{
    const struct stats_summary *iv = &cap->interval;

    out->interval = iv->n >= 2;
    out->low = out->interval ? fmax(iv->low, 0) : cap->rps;
    out->high = out->interval ? fmax(iv->high, cap->rps) : cap->rps;
    out->low = fmin(out->low, cap->rps);
    bool disagreed = out->interval && stats_rel_half(iv) > CAPACITY_NOISY_REL;
    out->unknown = disagreed && ((cap->flags & CAPACITY_FLAG_REPEATS_CUT) ||
                                 !(out->high - out->low <= cap->rps));
}

double capacity_planned_fraction(const struct profile_planning *p)
{
    return (1.0 - p->buffer) / (1.0 + p->growth);
}
