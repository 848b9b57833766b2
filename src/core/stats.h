#ifndef SIZEUP_CORE_STATS_H
#define SIZEUP_CORE_STATS_H

/* Small-sample statistics for repeated measurements: the mean with a Student-t confidence
 * interval, and Welch's unequal-variance t-test for "is this difference real". Repeats of a load
 * step are few (3 by default) and their spread is unknown, which is exactly the case the t
 * distribution is for; a normal approximation would claim intervals about 2.2x too narrow at
 * n = 3. Pure functions on doubles, no allocation. */

#include <stdbool.h>
#include <stddef.h>

/* The confidence level of every interval and the significance level of every test. */
#define STATS_CONFIDENCE 0.95
#define STATS_ALPHA      0.05
/* Below this many samples a mean is reported with the words "too few repeats". */
#define STATS_MIN_REPEATS 3

struct stats_summary {
    size_t n;
    double mean;
    double sd;        /* sample standard deviation (n - 1); 0 when n < 2 */
    double half;      /* half-width of the STATS_CONFIDENCE interval; 0 when n < 2 */
    double low, high; /* mean -/+ half */
};

struct stats_welch {
    double t;         /* (mean_b - mean_a) / standard error */
    double df;        /* Welch-Satterthwaite degrees of freedom */
    double p;         /* two-sided p-value */
    bool significant; /* p < STATS_ALPHA */
};

/* Summarises x[0..n). n may be 0 (all zero) or 1 (mean only, no interval). Non-finite samples
 * are a caller bug and return -EINVAL. Returns 0 or -EINVAL. */
int stats_summarize(const double *x, size_t n, struct stats_summary *out /* OUT */);

/* Cumulative distribution function of Student's t with df > 0 degrees of freedom. */
double stats_t_cdf(double t, double df);

/* The q-quantile (0 < q < 1) of Student's t with df > 0 degrees of freedom. */
double stats_t_quantile(double q, double df);

/* Welch's two-sided t-test of a against b. Needs n >= 2 on both sides; returns -EDOM when either
 * has fewer (the comparison is then "unknown", never "different"). Two samples with zero spread
 * and equal means give p = 1; with zero spread and different means, p = 0. */
int stats_welch(const struct stats_summary *a, const struct stats_summary *b,
                struct stats_welch *out /* OUT */);

/* True when the two intervals overlap (either has n < 2: true, the difference is not shown). */
bool stats_overlap(const struct stats_summary *a, const struct stats_summary *b);

/* Relative half-width of the interval: half / mean (0 when mean is 0 or n < 2). */
double stats_rel_half(const struct stats_summary *s);

#endif
