/* Student-t intervals and Welch's test. The t distribution's CDF is computed from the
 * regularised incomplete beta function, I_x(a, b), evaluated by its continued fraction (modified
 * Lentz's method), which converges quickly for x below the distribution's mean and is used through
 * the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) above it. The quantile is found by bisection on the
 * CDF: this runs a handful of times per sweep, so robustness beats speed. */

#include "core/stats.h"

#include <errno.h>
#include <math.h>

#define CF_MAX_ITER 300
#define CF_EPS      1e-14
#define CF_TINY     1e-300

/* One step of the modified Lentz method: folds the term num into the running c and d and
 * returns the factor the fraction's value is multiplied by. */
static double lentz_step(double num, double *c, double *d)
{
    *d = 1.0 + num * *d;
    *c = 1.0 + num / *c;
    if (fabs(*d) < CF_TINY)
        *d = CF_TINY;
    if (fabs(*c) < CF_TINY)
        *c = CF_TINY;
    *d = 1.0 / *d;
    return *d * *c;
}

/* The continued fraction of I_x(a, b) without its prefactor. */
static double beta_cf(double a, double b, double x)
{
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < CF_TINY)
        d = CF_TINY;
    d = 1.0 / d;
    double f = d;
    for (int m = 1; m <= CF_MAX_ITER; m++) {
        double m2 = 2.0 * m;
        /* Even step: m (b - m) x / ((a + 2m - 1)(a + 2m)); odd step:
         * -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)). */
        f *= lentz_step(m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)), &c, &d);
        double step = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)), &c, &d);
        f *= step;
        if (fabs(step - 1.0) < CF_EPS)
            break;
    }
    return f;
}

/* Regularised incomplete beta I_x(a, b) for a, b > 0 and 0 <= x <= 1. */
static double beta_inc(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double lnpre = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1.0) / (a + b + 2.0))
        return exp(lnpre) * beta_cf(a, b, x) / a;
    return 1.0 - exp(lnpre) * beta_cf(b, a, 1.0 - x) / b;
}

double stats_t_cdf(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1.0 : 0.0;
    /* P(|T| > |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2). */
    double tail = 0.5 * beta_inc(df / 2.0, 0.5, df / (df + t * t));
    return t > 0 ? 1.0 - tail : tail;
}

double stats_t_quantile(double q, double df)
{
    if (!(q > 0.0 && q < 1.0) || !(df > 0))
        return NAN;
    if (q == 0.5)
        return 0.0;
    /* The quantile for q > 0.5 lies in (0, hi) for a hi that doubles until the CDF passes q. */
    double p = q > 0.5 ? q : 1.0 - q;
    double lo = 0.0, hi = 1.0;
    while (stats_t_cdf(hi, df) < p && hi < 1e12)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * (1.0 + hi); i++) {
        double mid = 0.5 * (lo + hi);
        if (stats_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    double x = 0.5 * (lo + hi);
    return q > 0.5 ? x : -x;
}

int stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
    *out = (struct stats_summary){0};
    out->n = n;
    if (n == 0)
        return 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            return -EINVAL;
        sum += x[i];
    }
    out->mean = sum / (double)n;
    out->low = out->high = out->mean;
    if (n < 2)
        return 0;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - out->mean) * (x[i] - out->mean);
    out->sd = sqrt(ss / (double)(n - 1));
    double tq = stats_t_quantile(1.0 - (1.0 - STATS_CONFIDENCE) / 2.0, (double)(n - 1));
    out->half = tq * out->sd / sqrt((double)n);
    out->low = out->mean - out->half;
    out->high = out->mean + out->half;
    return 0;
}

int stats_welch(const struct stats_summary *a, const struct stats_summary *b,
                struct stats_welch *out)
{
    *out = (struct stats_welch){0};
    if (a->n < 2 || b->n < 2)
        return -EDOM;
    double va = a->sd * a->sd / (double)a->n, vb = b->sd * b->sd / (double)b->n;
    double se2 = va + vb;
    if (se2 <= 0) {
        /* No spread on either side: equal means are the same, different means differ. */
        out->p = a->mean == b->mean ? 1.0 : 0.0;
        out->t = a->mean == b->mean ? 0.0 : (b->mean > a->mean ? INFINITY : -INFINITY);
        out->df = (double)(a->n + b->n - 2);
        out->significant = out->p < STATS_ALPHA;
        return 0;
    }
    out->t = (b->mean - a->mean) / sqrt(se2);
    double den = 0;
    if (va > 0)
        den += va * va / (double)(a->n - 1);
    if (vb > 0)
        den += vb * vb / (double)(b->n - 1);
    out->df = se2 * se2 / den;
    out->p = 2.0 * stats_t_cdf(-fabs(out->t), out->df);
    if (out->p > 1.0)
        out->p = 1.0;
    out->significant = out->p < STATS_ALPHA;
    return 0;
}

bool stats_overlap(const struct stats_summary *a, const struct stats_summary *b)
{
    if (a->n < 2 || b->n < 2)
        return true;
    return a->low <= b->high && b->low <= a->high;
}

double stats_rel_half(const struct stats_summary *s)
{
    if (s->n < 2 || s->mean == 0)
        return 0;
    return s->half / fabs(s->mean);
}
