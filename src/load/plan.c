#include "load/plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double seg_count(const struct plan_seg *s)
{
    return (s->from + s->to) / 2.0 * ((double)s->dur_ns / 1e9);
}

/* The load's shape: stages that all give users or all give rate, each with a duration, or one
 * flat users or rate with a positive duration. *open_loop: the load is a rate. Returns 0 or
 * -EINVAL (err says what is wrong). */
static int check_shape(const struct profile *p, int *open_loop, char *err)
{
    if (p->nstages > 0) {
        int users = 0, rate = 0;
        for (size_t i = 0; i < p->nstages; i++) {
            if (p->stages[i].users >= 0)
                users = 1;
            if (p->stages[i].rate >= 0)
                rate = 1;
            if (p->stages[i].duration_us <= 0)
                return err_set(err, -EINVAL, "stage %zu has no duration", i + 1);
        }
        if (users == rate)
            return err_set(err, -EINVAL, "stages must all give users or all give rate");
        *open_loop = rate;
    } else {
        if ((p->users > 0) == (p->rate > 0))
            return err_set(err, -EINVAL, "give either users or rate");
        if (p->duration_us <= 0)
            return err_set(err, -EINVAL, "the duration must be positive");
        *open_loop = p->rate > 0;
    }
    return 0;
}

/* Each segment's count of requests (or user-seconds) due before it, the plan's total and its
 * peak target. */
static void totals(struct plan *pl)
{
    double cum = 0;
    for (size_t i = 0; i < pl->nsegs; i++) {
        pl->segs[i].cum0 = cum;
        cum += seg_count(&pl->segs[i]);
        if (pl->segs[i].from > pl->peak)
            pl->peak = pl->segs[i].from;
        if (pl->segs[i].to > pl->peak)
            pl->peak = pl->segs[i].to;
    }
    pl->total_due = cum;
}

int plan_build(const struct profile *p, struct plan *pl, char *err)
{
    size_t n = 0;
    int64_t t = 0;
    int rc = 0;

    memset(pl, 0, sizeof(*pl));
    rc = check_shape(p, &pl->open_loop, err);
    if (rc)
        return rc;
    pl->segs = calloc(p->nstages + 2, sizeof(*pl->segs));
    if (!pl->segs) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* Warm-up holds the first measured target flat: with stages, that is the first stage's
     * target, so a ramp from 0 starts from a warmed-up server. */
    double first;
    if (p->nstages > 0)
        first = pl->open_loop ? p->stages[0].rate : p->stages[0].users;
    else
        first = pl->open_loop ? p->rate : (double)p->users;
    if (p->warmup_us > 0 && first > 0) {
        struct plan_seg *s = &pl->segs[n++];
        s->start_ns = 0;
        s->dur_ns = p->warmup_us * 1000;
        s->from = s->to = first;
        s->stage = -1;
        s->measured = 0;
        t += s->dur_ns;
    }
    pl->measure_start_ns = t;
    if (p->nstages == 0) {
        struct plan_seg *s = &pl->segs[n++];
        s->start_ns = t;
        s->dur_ns = p->duration_us * 1000;
        s->from = s->to = first;
        s->stage = -1;
        s->measured = 1;
        t += s->dur_ns;
    } else {
        double prev = 0;
        for (size_t i = 0; i < p->nstages; i++) {
            struct plan_seg *s = &pl->segs[n++];
            double to = pl->open_loop ? p->stages[i].rate : p->stages[i].users;
            s->start_ns = t;
            s->dur_ns = p->stages[i].duration_us * 1000;
            s->from = prev;
            s->to = to;
            s->stage = (int)i;
            s->measured = 1;
            t += s->dur_ns;
            prev = to;
        }
    }
    pl->nsegs = n;
    pl->end_ns = t;
    totals(pl);
out:
    if (rc)
        plan_free(pl);
    return rc;
}

void plan_free(struct plan *pl)
{
    if (!pl)
        return;
    free(pl->segs);
    memset(pl, 0, sizeof(*pl));
}

const struct plan_seg *plan_seg_at(const struct plan *pl, int64_t t_ns, size_t *hint)
{
    size_t i = hint ? *hint : 0;

    if (t_ns < 0 || t_ns >= pl->end_ns || pl->nsegs == 0)
        return NULL;
    if (i >= pl->nsegs || pl->segs[i].start_ns > t_ns)
        i = 0;
    while (i + 1 < pl->nsegs && pl->segs[i].start_ns + pl->segs[i].dur_ns <= t_ns)
        i++;
    if (hint)
        *hint = i;
    return &pl->segs[i];
}

double plan_target_at(const struct plan *pl, int64_t t_ns, size_t *hint)
{
    const struct plan_seg *s = plan_seg_at(pl, t_ns, hint);
    if (!s)
        return 0;
    double f = (double)(t_ns - s->start_ns) / (double)s->dur_ns;
    return s->from + (s->to - s->from) * f;
}

int64_t plan_due_ns(const struct plan *pl, double k, size_t *hint)
{
    size_t i = hint ? *hint : 0;

    if (k > pl->total_due || pl->nsegs == 0)
        return INT64_MAX;
    if (i >= pl->nsegs || pl->segs[i].cum0 > k)
        i = 0;
    while (i + 1 < pl->nsegs && pl->segs[i + 1].cum0 <= k)
        i++;
    /* Skip segments that add nothing (rate 0 throughout). */
    while (i + 1 < pl->nsegs && seg_count(&pl->segs[i]) <= 0)
        i++;
    if (hint)
        *hint = i;
    const struct plan_seg *s = &pl->segs[i];
    double m = k - s->cum0;
    double d = (double)s->dur_ns / 1e9;
    double r0 = s->from, a = (s->to - s->from) / d;
    /* Solve r0*tau + a*tau^2/2 = m in the cancellation-free form 2m / (r0 + sqrt(r0^2 + 2am)). */
    double disc = r0 * r0 + 2 * a * m;
    if (disc < 0)
        disc = 0;
    double den = r0 + sqrt(disc);
    if (den <= 0)
        return INT64_MAX;
    double tau = 2 * m / den;
    if (tau > d)
        tau = d;
    int64_t due = s->start_ns + (int64_t)(tau * 1e9);
    return due < pl->end_ns ? due : INT64_MAX;
}
