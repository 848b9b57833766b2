/* The Universal Scalability Law fit (usl.h). Two coefficients and a handful of points: the
 * non-negative least squares is solved exactly by its faces (both free, k = 0, s = 0, both 0),
 * the cheapest feasible one being the optimum of a convex problem, so no iterative solver and
 * no starting point can go wrong. */

#include "advise/usl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A coefficient whose effect at N = 2 is below this share of one pod's work is taken as 0
 * whatever its error says: a perfect curve has errors of 0, and 1e-12 is not contention. */
#define USL_NEGLIGIBLE 1e-6

/* The weighted normal equations of y = s a + k b over the points above N = 1. */
struct sums {
    double aa, ab, bb, ay, by, yy;
    size_t m; /* rows */
};

static double sse_of(const struct sums *z, double s, double k)
{
    /* sum w (y - s a - k b)^2 expanded, so the faces are compared without a second pass. */
    double v =
        z->yy - 2 * s * z->ay - 2 * k * z->by + s * s * z->aa + 2 * s * k * z->ab + k * k * z->bb;
    return v > 0 ? v : 0;
}

static int check_points(const struct usl_point *pts, size_t n, char *err)
{
    if (n > USL_MAX_POINTS)
        return err_set(err, -EINVAL, "a scale-out fit takes at most %d points, not %zu",
                       USL_MAX_POINTS, n);
    for (size_t i = 0; i < n; i++) {
        if (pts[i].replicas < 1)
            return err_set(err, -EINVAL, "point %zu: a replica count must be 1 or more", i + 1);
        if (pts[i].excluded)
            continue;
        if (!(pts[i].x > 0) || !isfinite(pts[i].x))
            return err_set(err, -EINVAL,
                           "point %zu (%u replicas): the capacity must be a positive number", i + 1,
                           pts[i].replicas);
        if (!(pts[i].se >= 0) || !isfinite(pts[i].se))
            return err_set(err, -EINVAL,
                           "point %zu (%u replicas): the standard error must be 0 or more", i + 1,
                           pts[i].replicas);
    }
    return 0;
}

/* X1 and its standard error (0 when some point at N = 1 has none) from the used points at 1. */
static int one_replica(const struct usl_point *pts, size_t n, double *x1, double *se1, char *err)
{
    double sum = 0, var = 0;
    size_t m = 0;
    bool all_se = true;

    for (size_t i = 0; i < n; i++) {
        if (pts[i].excluded || pts[i].replicas != 1)
            continue;
        sum += pts[i].x;
        var += pts[i].se * pts[i].se;
        all_se = all_se && pts[i].se > 0;
        m++;
    }
    if (m == 0)
        return err_set(err, -EINVAL,
                       "a scale-out fit needs the capacity at 1 replica (a point not excluded)");
    *x1 = sum / (double)m;
    *se1 = all_se ? sqrt(var) / (double)m : 0;
    return 0;
}

static void accumulate(const struct usl_point *pts, size_t n, double x1, double se1, bool has_se,
                       struct sums *z, size_t *counts)
{
    unsigned seen[USL_MAX_POINTS];
    size_t nseen = 0;

    memset(z, 0, sizeof(*z));
    for (size_t i = 0; i < n; i++) {
        const struct usl_point *p = &pts[i];
        double N = p->replicas, a, b, y, w;
        bool dup = false;

        if (p->excluded)
            continue;
        for (size_t j = 0; j < nseen; j++)
            dup = dup || seen[j] == p->replicas;
        if (!dup)
            seen[nseen++] = p->replicas;
        if (p->replicas == 1)
            continue;
        a = N - 1;
        b = N * (N - 1);
        y = N * x1 / p->x - 1;
        /* Var(y) to first order in the errors of X(N) and X1 (taken as independent). Without
         * standard errors every capacity carries the same relative error r, and Var(y) is
         * 2 r^2 (N X1 / X)^2: the weights are the same up to the constant. */
        if (has_se) {
            double g = N / p->x, q = x1 / p->x;
            w = 1 / (g * g * (se1 * se1 + q * q * p->se * p->se));
        } else {
            double r = p->x / (N * x1);
            w = r * r;
        }
        z->aa += w * a * a;
        z->ab += w * a * b;
        z->bb += w * b * b;
        z->ay += w * a * y;
        z->by += w * b * y;
        z->yy += w * y * y;
        z->m++;
    }
    *counts = nseen;
}

/* The non-negative least squares on the faces; *free_s / *free_k say which coefficients the
 * chosen face left free (a coefficient held at 0 by the constraint or by k = 0 is not). */
static void solve(const struct sums *z, bool two, double *s, double *k, bool *free_s, bool *free_k)
{
    double det = z->aa * z->bb - z->ab * z->ab;
    double best = INFINITY, cs, ck, e;

    *s = 0, *k = 0, *free_s = false, *free_k = false;
    if (two && det > 1e-12 * z->aa * z->bb) {
        cs = (z->bb * z->ay - z->ab * z->by) / det;
        ck = (z->aa * z->by - z->ab * z->ay) / det;
        if (cs >= 0 && ck >= 0) {
            *s = cs, *k = ck, *free_s = true, *free_k = true;
            return;
        }
    }
    if (z->aa > 0 && (cs = z->ay / z->aa) > 0 && (e = sse_of(z, cs, 0)) < best)
        best = e, *s = cs, *k = 0, *free_s = true, *free_k = false;
    if (two && z->bb > 0 && (ck = z->by / z->bb) > 0 && (e = sse_of(z, 0, ck)) < best)
        best = e, *s = 0, *k = ck, *free_s = false, *free_k = true;
    if (sse_of(z, 0, 0) < best)
        *s = 0, *k = 0, *free_s = false, *free_k = false;
}

/* Standard errors: of a free coefficient from the face's covariance, of one held at 0 from the
 * full model's (how far from 0 it could be, were it free). The covariance is scaled by the
 * scatter: with standard errors given, by chi2 / dof when the points scatter more than their
 * errors say (never below their errors); without, by chi2 / dof alone. */
static void errors(const struct sums *z, bool two, bool has_se, double s, double k, bool free_s,
                   bool free_k, struct usl_fit *f)
{
    double det = z->aa * z->bb - z->ab * z->ab, vs, vk, scale;
    size_t p = (size_t)free_s + (size_t)free_k;
    double chi2 = sse_of(z, s, k);

    if (z->m > p)
        scale = chi2 / (double)(z->m - p);
    else
        scale = NAN;
    if (has_se)
        scale = isnan(scale) || scale < 1 ? 1 : scale;

    bool full = two && det > 1e-12 * z->aa * z->bb;
    if (free_s && free_k) {
        vs = z->bb / det, vk = z->aa / det;
    } else {
        vs = free_s ? 1 / z->aa : (full ? z->bb / det : (z->aa > 0 ? 1 / z->aa : NAN));
        vk = free_k ? 1 / z->bb : (full ? z->aa / det : NAN);
    }
    f->s_err = sqrt(vs * scale);
    f->k_err = two ? sqrt(vk * scale) : NAN;
}

/* Distinguishable from 0: above USL_Z standard errors and not negligible. An unknown error
 * (NAN: as many coefficients as points, no standard errors) cannot say the coefficient is
 * noise, so the coefficient counts as what was measured. */
static bool distinct(double c, double se, double effect_at_2)
{
    if (!(effect_at_2 > USL_NEGLIGIBLE))
        return false;
    return isnan(se) || c > USL_Z * se;
}

double usl_eval(const struct usl_fit *f, double n)
{
    return f->x1 * n / (1 + f->s * (n - 1) + f->k * n * (n - 1));
}

static double peak_x(const struct usl_fit *f)
{
    if (f->k > 0) {
        double nstar = f->s < 1 ? sqrt((1 - f->s) / f->k) : 1;
        return usl_eval(f, nstar < 1 ? 1 : nstar);
    }
    if (f->s > 0)
        return f->s >= 1 ? f->x1 : f->x1 / f->s;
    return INFINITY;
}

static double residual(const struct usl_point *pts, size_t n, const struct usl_fit *f)
{
    double sum = 0;
    size_t m = 0;

    for (size_t i = 0; i < n; i++) {
        double fit;
        if (pts[i].excluded)
            continue;
        fit = usl_eval(f, pts[i].replicas);
        sum += ((pts[i].x - fit) / fit) * ((pts[i].x - fit) / fit);
        m++;
    }
    return m ? sqrt(sum / (double)m) : 0;
}

/* The one-sided normal quantile whose tail is alpha: erfc's inverse by bisection (libm has
 * none), to 1e-9 over the range a test can ask for. */
static double normal_quantile(double alpha)
{
    double lo = 0, hi = 12;
    for (int i = 0; i < 60; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / sqrt(2)) > alpha)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The used point above N = 1 whose shortfall from N X1 is largest in standard errors, when it
 * is more than z of them (and not negligible): its index, else -1. Each point is a test of its
 * own, so z is Bonferroni's for as many (USL_Z's 2.5% tail shared among them): a linear app
 * measured at 15 counts is not called short by one point's chance dip. */
static long short_point(const struct usl_point *pts, size_t n, double x1, double se1)
{
    size_t tests = 0;
    long at = -1;

    for (size_t i = 0; i < n; i++)
        tests += !pts[i].excluded && pts[i].replicas > 1;
    double most = tests > 1 ? normal_quantile(0.5 * erfc(USL_Z / sqrt(2)) / (double)tests) : USL_Z;
    for (size_t i = 0; i < n; i++) {
        const struct usl_point *p = &pts[i];
        double N = p->replicas, gap, sd;
        if (p->excluded || p->replicas == 1)
            continue;
        gap = N * x1 - p->x;
        sd = sqrt(N * N * se1 * se1 + p->se * p->se);
        if (gap > USL_NEGLIGIBLE * N * x1 && sd > 0 && gap / sd > most) {
            most = gap / sd;
            at = (long)i;
        }
    }
    return at;
}

int usl_fit(const struct usl_point *pts, size_t n, struct usl_fit *out, char *err)
{
    struct sums z;
    double se1 = 0;
    bool has_se = true, two, free_s, free_k;
    size_t above = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->s_err = out->k_err = NAN;
    rc = check_points(pts, n, err);
    if (rc)
        return rc;
    rc = one_replica(pts, n, &out->x1, &se1, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].excluded)
            continue;
        out->used++;
        has_se = has_se && pts[i].se > 0;
        above += pts[i].replicas > 1;
    }
    if (above == 0)
        return err_set(err, -EINVAL,
                       "a scale-out fit needs a point above 1 replica (not excluded) besides the "
                       "one at 1");
    if (!has_se)
        se1 = 0;
    accumulate(pts, n, out->x1, se1, has_se, &z, &out->counts);
    /* Two distinct counts (1 and one more) fix one coefficient: k = 0, all of the shortfall is
     * read as contention. */
    two = out->counts >= 3;
    solve(&z, two, &out->s, &out->k, &free_s, &free_k);
    errors(&z, two, has_se, out->s, out->k, free_s, free_k, out);
    out->s_distinct = distinct(out->s, out->s_err, out->s);
    out->k_distinct = distinct(out->k, out->k_err, 2 * out->k);
    long at = has_se ? short_point(pts, n, out->x1, se1) : -1;
    if (at >= 0) {
        out->short_at = pts[at].replicas;
        out->short_x = pts[at].x;
    }
    out->linear = !out->s_distinct && !out->k_distinct && at < 0;
    if (out->k_distinct && out->s < 1)
        out->peak_replicas = sqrt((1 - out->s) / out->k);
    out->peak_x = peak_x(out);
    out->residual = residual(pts, n, out);
    return 0;
}

void usl_describe(const struct usl_fit *f, char *buf, size_t len)
{
    if (len == 0)
        return;
    if (f->linear)
        snprintf(buf, len,
                 "linear within the measurement's noise: N pods serve N times one (contention s "
                 "%.3g +/- %.2g, coherency k %.2g +/- %.2g, neither above 0 by %.3g standard "
                 "errors)",
                 f->s, f->s_err, f->k, f->k_err, USL_Z);
    else if (f->peak_replicas > 0)
        snprintf(buf, len,
                 "peaking near %.1f replicas at %.4g: the pods pay to stay consistent (coherency "
                 "k %.2g +/- %.2g), so more pods than that serve less",
                 f->peak_replicas, f->peak_x, f->k, f->k_err);
    else if (!f->s_distinct && !f->k_distinct && f->short_at > 0)
        snprintf(buf, len,
                 "below linear: %u pods serve %.4g, %.0f%% short of %u times one (%.4g), beyond "
                 "the measurement's noise, though the points cannot yet tell contention from "
                 "coherency (s %.3g +/- %.2g, k %.2g +/- %.2g)",
                 f->short_at, f->short_x, 100 * (1 - f->short_x / (f->short_at * f->x1)),
                 f->short_at, f->short_at * f->x1, f->s, f->s_err, f->k, f->k_err);
    else if (f->s >= 1 || f->peak_x <= f->x1)
        snprintf(buf, len,
                 "not scaling: more pods serve no more than one (%.4g); what they share is the "
                 "limit (contention s %.3g +/- %.2g)",
                 f->x1, f->s, f->s_err);
    else
        snprintf(buf, len,
                 "slowing: a shared resource serialises %.1f%% of the work (contention s %.3g "
                 "+/- %.2g), so capacity levels off toward %.4g",
                 100 * f->s, f->s, f->s_err, f->peak_x);
}
