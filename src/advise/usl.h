#ifndef SIZEUP_ADVISE_USL_H
#define SIZEUP_ADVISE_USL_H

/* The Universal Scalability Law fitted to a scale-out's points: the capacity X(N) that N
 * replicas sustain, given the capacity X1 of one,
 *
 *     X(N) = X1 N / (1 + s (N - 1) + k N (N - 1))
 *
 * s (contention: a share of the work that a shared resource serialises) and k (coherency: what
 * the pods pay to stay consistent, which makes more pods serve less) are fitted by
 * non-negative least squares on the linearised form
 *
 *     N X1 / X(N) - 1 = s (N - 1) + k N (N - 1)
 *
 * each point weighted by the inverse variance of its left-hand side (from the point's standard
 * error, and X1's). Pure computation on an array of points: tested without a sweep. */

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

/* Points a fit takes; a scale-out measures at most 16 replica counts. */
#define USL_MAX_POINTS 64
/* A coefficient is distinguishable from 0 when it is more than USL_Z standard errors above it
 * (about 95% one-sided confidence in the normal approximation). */
#define USL_Z 1.96

struct usl_point {
    unsigned replicas; /* N >= 1 */
    double x;          /* the capacity at N replicas, > 0 */
    /* The standard error of x (from its repeats); 0 when unknown. When every point the fit
     * uses has one, the weights and the coefficients' errors come from them; otherwise each
     * point is taken to carry the same relative error, and the errors come from the scatter
     * of the points about the curve. */
    double se;
    bool excluded; /* not the app's (contended, skipped): kept in the list, left out of the fit */
};

struct usl_fit {
    double x1; /* the capacity at 1 replica (the mean of the points at N = 1) */
    double s;  /* contention, >= 0 */
    double k;  /* coherency, >= 0; 0 with fewer than two distinct counts above 1 */
    /* Standard errors of s and k; NAN when the points cannot tell (as many free coefficients
     * as points above N = 1 and no standard errors given). */
    double s_err, k_err;
    bool s_distinct, k_distinct; /* above 0 by more than USL_Z standard errors */
    /* The point furthest below linear, by more standard errors of N X1 - X(N) (from its and
     * X1's standard errors) than USL_Z's one-sided 2.5% shared among the points (Bonferroni),
     * when every used point has one: 0 when none is.
     * Two coefficients fitted to few points can each be within their errors of 0 while a point
     * is clearly short of N times one; such a curve is not linear. */
    unsigned short_at;
    double short_x; /* that point's capacity */
    bool linear;    /* neither coefficient is distinct and no point is short: linear within the
                       measurement's noise */
    /* sqrt((1 - s) / k), the count where the curve peaks, when k is distinguishable from 0 and
     * s < 1; 0 (absent) otherwise. */
    double peak_replicas;
    /* The largest throughput the fitted curve reaches for N >= 1: X at its peak when k > 0,
     * the asymptote X1 / s when only s is above 0, INFINITY when the curve is a straight
     * line (s = k = 0), X1 when the curve never rises (s >= 1). */
    double peak_x;
    double residual; /* RMS of (measured - fitted) / fitted over the points used */
    size_t used;     /* points the fit used (not excluded) */
    size_t counts;   /* distinct replica counts among them */
};

/* Fits the law to pts[0..n) (n <= USL_MAX_POINTS). Borrows pts; fills *out entirely. Needs a
 * point at N = 1 and one above it that are not excluded. Returns 0, or -EINVAL with the reason
 * in err (no point at 1 replica, a count of 0, a capacity that is not a positive number, too
 * few points). */
int usl_fit(const struct usl_point *pts, size_t n, struct usl_fit *out /* OUT */, char *err);

/* The fitted curve at n replicas (n >= 1; any real n). */
double usl_eval(const struct usl_fit *f, double n);

/* One sentence for what the fit means, formatted from its numbers: "linear within the
 * measurement's noise", "slowing: ..." (s dominates) or "peaking near N replicas: ...". Writes
 * at most len bytes into buf (always terminated). */
void usl_describe(const struct usl_fit *f, char *buf /* OUT */, size_t len);

#endif
