/* The replica answer from a measured scale-out (sizing.h, docs/sweep.md "The order of the
 * answer", steps 3 to 5): the count the curve gives for the target, what the curve makes of the
 * winner against the runner-up's linear plan, and replicas added for availability; and the
 * autoscaler's max read from the curve (step 6's, for sizing.c's HPA). */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise/sizing.h"
#include "advise/sizing_int.h"
#include "core/err.h"
#include "core/text.h"

/* ---- the replicas from the scale-out (steps 3 to 5 of the answer's order) --------------- */

/* X_low(r): the measured lower bound where r was measured, else the lower bounds' curve; never
 * above a bound measured at r (a figure that did not hold its repeats). */
static double curve_low(const struct sizing_curve_point *pts, size_t n,
                        const struct sizing_curve *c, unsigned r)
{
    double x = -1, most = INFINITY;

    for (size_t i = 0; i < n; i++) {
        if (pts[i].replicas != r)
            continue;
        if (pts[i].usable && x < 0)
            x = pts[i].low;
        if (pts[i].bound > 0)
            most = fmin(most, pts[i].bound);
    }
    return fmin(x < 0 ? usl_eval(&c->low_fit, r) : x, most);
}

/* The lowest count whose bound lies below the fitted capacity there: a measurement the fit did
 * not take says the curve overstates the pods from that count on. */
static void find_refuted(const struct sizing_curve_point *pts, size_t n, struct sizing_curve *c)
{
    for (size_t i = 0; i < n; i++) {
        double fitted = usl_eval(&c->fit, pts[i].replicas);
        if (pts[i].bound > 0 && fitted > pts[i].bound * (1 + SIZING_EPS) &&
            (!c->refuted_at || pts[i].replicas < c->refuted_at)) {
            c->refuted_at = pts[i].replicas;
            c->refuted_x = pts[i].bound;
            c->refuted_fit = fitted;
        }
    }
}

/* A point short of linear that neither coefficient explains (usl.h short_at): the curve's
 * shape past the points is unknown. */
static bool short_unexplained(const struct usl_fit *f)
{
    return !f->linear && !f->s_distinct && !f->k_distinct;
}

static double point_rps(const struct sizing_curve_point *pt)
{
    return pt->rps > 0 ? pt->rps : pt->low;
}

int sizing_curve_fit(const struct sizing_curve_point *pts, size_t n, struct usl_fit *f, char *err)
{
    struct usl_point up[USL_MAX_POINTS];
    size_t k = 0;

    for (size_t i = 0; i < n && k < USL_MAX_POINTS; i++) {
        bool use = pts[i].usable && point_rps(&pts[i]) > 0;
        up[k++] = (struct usl_point){pts[i].replicas, use ? point_rps(&pts[i]) : 1,
                                     use && pts[i].se > 0 ? pts[i].se : 0, !use};
    }
    return usl_fit(up, k, f, err);
}

/* Where the curve ends, in words: "its peak N* = 3.2" or "2 x the 4 replicas measured". */
const char *sizing__cap_words(const struct sizing_curve *c, char *buf, size_t len)
{
    if (c->refuted_at)
        snprintf(buf, len, "the %u replicas measured, as %.0f req/s at %u did not hold its repeats",
                 c->nmax, c->refuted_x, c->refuted_at);
    else if (short_unexplained(&c->fit))
        snprintf(buf, len, "the %u replicas measured, as the points cannot tell what they share",
                 c->nmax);
    else if (c->fit.peak_replicas > 0 && c->cap < SIZING_CURVE_MAX_FACTOR * c->nmax)
        snprintf(buf, len, "its peak N* = %.1f", c->fit.peak_replicas);
    else
        snprintf(buf, len, "%d x the %u replicas measured", SIZING_CURVE_MAX_FACTOR, c->nmax);
    return buf;
}

double sizing__curve_rps(const struct sizing_opts *o, const struct sizing *s, unsigned n)
{
    return curve_low(o->scale_out.pts, o->scale_out.n, &s->curve, n);
}

/* Step (6)'s max from the curve: the smallest N from the count to where the curve ends whose
 * planned capacity holds the target x (1 + growth); where the curve ends when none does. */
unsigned sizing__curve_hpa_max(const struct sizing_opts *o, const struct sizing *s)
{
    const struct sizing_scale_out *so = &o->scale_out;
    double need = s->target_rps * (1 + o->planning.growth);

    for (unsigned r = s->replicas; r <= s->curve.cap; r++)
        if (curve_low(so->pts, so->n, &s->curve, r) * s->planned_fraction >=
            need * (1 - SIZING_EPS))
            return r;
    return s->curve.cap;
}

/* The curve against the runner-up's linear plan: when the measured count makes the winner
 * dearer (or out of reach), say so with the figures; the runner-up was not measured at scale. */
static void dearer(const struct sizing_row *rows, struct sizing *s)
{
    int best, second;
    sizing__rank_target(s, &best, &second);
    if (second < 0)
        return;
    const struct sizing_variant *w = &s->rows[s->recommended], *r = &s->rows[second];
    const char *wl = rows[s->recommended].variant->label, *rl = rows[second].variant->label;
    if (s->from_curve && s->replicas * w->pod_cost > r->total_cost * (1 + SIZING_EPS))
        snprintf(s->dearer, sizeof(s->dearer),
                 "Measured at scale, %s is dearer than the runner-up's linear plan: %u x %s at "
                 "%.3f = %.3f from the curve (%u on the linear plan), against %u x %s = %.3f; "
                 "the runner-up was not measured at scale, so its count assumes its pods scale "
                 "independently",
                 wl, s->replicas, wl, w->pod_cost, s->replicas * w->pod_cost, w->replicas,
                 r->replicas, rl, r->total_cost);
    else if (!s->from_curve && s->curve_read)
        snprintf(s->dearer, sizeof(s->dearer),
                 "Measured at scale, %s cannot hold the target; the runner-up's linear plan is "
                 "%u x %s = %.3f, but the runner-up was not measured at scale, so that count "
                 "assumes its pods scale independently",
                 wl, r->replicas, rl, r->total_cost);
}

/* Steps (3) and (4): the replicas from the scale-out's curve when it measured the recommended
 * variant; else the linear count, and why. */
void sizing__curve_step(const struct sizing_row *rows, const struct sizing_opts *o,
                        struct sizing *s)
{
    const struct sizing_scale_out *so = &o->scale_out;
    char err[ERR_LEN] = "";

    if (s->recommended < 0 || !s->by_target)
        return;
    s->replicas_linear = s->replicas;
    if (s->streams) {
        snprintf(s->curve_skipped, sizeof(s->curve_skipped),
                 "pods are sized by open streams, and a scale-out measures req/s");
    } else if (!so->run) {
        snprintf(s->curve_skipped, sizeof(s->curve_skipped), "%s",
                 so->skipped[0] ? so->skipped : "no scale-out was measured");
    } else if (so->variant != (size_t)s->recommended || so->variant >= s->n) {
        snprintf(s->curve_skipped, sizeof(s->curve_skipped),
                 "the scale-out measured %s, not the recommended %s",
                 so->variant < s->n ? rows[so->variant].variant->label : "another variant",
                 rows[s->recommended].variant->label);
    } else if (sizing_curve_replicas(so->pts, so->n, s->target_rps, s->planned_fraction, &s->curve,
                                     err) != 0) {
        snprintf(s->curve_skipped, sizeof(s->curve_skipped),
                 "the scale-out gave no curve to read (%s)", err);
    } else {
        s->curve_read = true;
        s->from_curve = s->curve.reachable;
        s->unreachable = !s->curve.reachable;
        s->replicas = s->curve.reachable ? s->curve.replicas : 0;
        snprintf(s->replicas_note, sizeof(s->replicas_note), "%s", s->curve.why);
        text_catf(s->why, sizeof(s->why), "; measured at scale: %s", s->curve.why);
        dearer(rows, s);
        return;
    }
    snprintf(s->replicas_note, sizeof(s->replicas_note),
             "%u replicas from the linear plan (%.0f req/s / %.0f planned per pod), which "
             "assumes pods scale independently: %s",
             s->replicas, s->target_rps, s->rows[s->recommended].planned_rps, s->curve_skipped);
}

/* Step (5): availability's plan for the count so far (availability_step); its extra pods add to
 * the count, and past where the curve ends the target is unreachable with that availability. */
void sizing__availability_step(const struct sizing_opts *o, unsigned hpa_max_without,
                               struct sizing *s)
{
    struct availability_step *st = &s->availability;
    unsigned add, adj;
    char words[SIZING_TEXT_LEN];

    availability_step(o->availability, s->recommended, s->by_target && !s->unreachable, s->replicas,
                      hpa_max_without, st);
    if (st->state != AVAILABILITY_PLANNED)
        return;
    add = st->plan.replicas - st->plan.needed;
    if (!add)
        return;
    adj = s->replicas + add;
    if (s->from_curve && adj > s->curve.cap) {
        snprintf(s->replicas_note, sizeof(s->replicas_note),
                 "the target of %.0f req/s is not reachable with %u replica%s added for "
                 "availability: %u + %u = %u passes %u, where the curve ends (%s)",
                 s->target_rps, add, add == 1 ? "" : "s", s->replicas, add, adj, s->curve.cap,
                 sizing__cap_words(&s->curve, words, sizeof(words)));
        s->replicas = 0;
        s->from_curve = false;
        s->unreachable = true;
        return;
    }
    text_catf(s->replicas_note, sizeof(s->replicas_note),
              "; %u + %u for availability = %u replicas", s->replicas, add, adj);
    s->replicas = adj;
}

/* ---- the replica count from a measured scale-out ---------------------------------------- */

/* The curve's reading in one sentence, into out->why, from the figures sizing_curve_replicas
 * found: the count and its capacity, or why the target is out of reach (the points cannot tell
 * what they share, a point refuted the fit, more pods than measured, or what the pods share). */
static void curve_why(const struct sizing_curve_point *pts, size_t n, double target,
                      double planned_fraction, struct sizing_curve *out)
{
    if (out->reachable)
        snprintf(out->why, sizeof(out->why),
                 "%u replicas: the scale-out's lower bounds give %.0f req/s at %u (%.0f planned, "
                 "the target %.0f)",
                 out->replicas, curve_low(pts, n, out, out->replicas), out->replicas,
                 curve_low(pts, n, out, out->replicas) * planned_fraction, target);
    else if (short_unexplained(&out->fit))
        snprintf(out->why, sizeof(out->why),
                 "the target of %.0f req/s is not reachable within the %u replicas measured: "
                 "the pods reach at most %.0f req/s (%.0f planned), near %u, short of linear "
                 "beyond the noise, and the points cannot yet tell what they share (contention "
                 "or coherency), so the curve is not read past them; no replica count is written",
                 target, out->nmax, out->most_rps, out->most_rps * planned_fraction, out->most_at);
    else if (out->refuted_at)
        snprintf(out->why, sizeof(out->why),
                 "the target of %.0f req/s is not reachable within the %u replicas measured: "
                 "the pods reach at most %.0f req/s at their lower bounds (%.0f planned), near "
                 "%u; at %u replicas %.0f req/s did not hold its repeats, below the curve's %.0f "
                 "there, so the curve is not read past the points; no replica count is written",
                 target, out->nmax, out->most_rps, out->most_rps * planned_fraction, out->most_at,
                 out->refuted_at, out->refuted_x, out->refuted_fit);
    else if (out->beyond_measured)
        snprintf(out->why, sizeof(out->why),
                 "the target of %.0f req/s needs more than %u pods, which was not measured (the "
                 "curve gives %.0f req/s at %u, %.0f planned); no replica count is written",
                 target, out->cap, out->most_rps, out->cap, out->most_rps * planned_fraction);
    else
        snprintf(out->why, sizeof(out->why),
                 "the target of %.0f req/s is not reachable with this shape: the pods reach at "
                 "most %.0f req/s at their lower bounds (%.0f planned), near %u replicas; what "
                 "they share %s "
                 "(contention s %.3g, coherency k %.2g)",
                 target, out->most_rps, out->most_rps * planned_fraction, out->most_at,
                 out->fit.k_distinct ? "costs more with every pod added" : "serialises the work",
                 out->fit.s, out->fit.k);
}

int sizing_curve_replicas(const struct sizing_curve_point *pts, size_t n, double target,
                          double planned_fraction, struct sizing_curve *out, char *err)
{
    struct usl_point up[USL_MAX_POINTS];
    size_t k = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!(target > 0) || !(planned_fraction > 0) || planned_fraction > 1)
        return err_set(err, -EINVAL, "a curve's replica count needs a target and a planned share");
    for (size_t i = 0; i < n && k < USL_MAX_POINTS; i++) {
        bool use = pts[i].usable && pts[i].low > 0;
        up[k++] = (struct usl_point){pts[i].replicas, use ? pts[i].low : 1, 0, !use};
        if (((pts[i].usable && point_rps(&pts[i]) > 0) || pts[i].bound > 0) &&
            pts[i].replicas > out->nmax)
            out->nmax = pts[i].replicas;
    }
    /* The lower bounds without a second point above 0 leave X_low to the measured points. */
    if (usl_fit(up, k, &out->low_fit, err) != 0)
        memset(&out->low_fit, 0, sizeof(out->low_fit));
    rc = sizing_curve_fit(pts, n, &out->fit, err);
    if (rc)
        return rc;
    out->cap = SIZING_CURVE_MAX_FACTOR * out->nmax;
    /* Read no further than measured where the shape past the points is unknown, or where a
     * point the fit left out measured less than it gives. */
    find_refuted(pts, n, out);
    if (short_unexplained(&out->fit) || out->refuted_at)
        out->cap = out->nmax;
    if (out->fit.peak_replicas > 0 && out->fit.peak_replicas < out->cap)
        out->cap = out->fit.peak_replicas < 1 ? 1 : (unsigned)floor(out->fit.peak_replicas);
    for (unsigned r = 1; r <= out->cap; r++) {
        double x = curve_low(pts, n, out, r);
        if (x > out->most_rps) {
            out->most_rps = x;
            out->most_at = r;
        }
        if (!out->replicas && x * planned_fraction >= target * (1 - SIZING_EPS))
            out->replicas = r;
    }
    out->reachable = out->replicas > 0;
    /* Still rising at the end of what may be read from the curve: more pods might hold it,
     * but that many were never measured. */
    out->beyond_measured = !out->reachable && out->cap == SIZING_CURVE_MAX_FACTOR * out->nmax &&
                           out->most_at == out->cap;
    curve_why(pts, n, target, planned_fraction, out);
    return 0;
}
