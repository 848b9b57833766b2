#ifndef SIZEUP_ADVISE_ADVISE_H
#define SIZEUP_ADVISE_ADVISE_H

/* The advisor over what the runner measured: a sweep's rows in the advisor's scalar form, and
 * the advisor's options from a profile and the platform's facts. The one place both front-ends
 * (the local sweep and the operator) turn measurements into advice. */

#include <stddef.h>

#include "advise/advisor.h"
#include "advise/usl.h"
#include "core/err.h"
#include "profile/profile.h"
#include "sweep/platform.h"
#include "sweep/runner.h"

/* Converts row i of s into the advisor's scalar form. Borrows s. */
void advise_row_from_sweep(const struct sweep *s, size_t i, struct advisor_row *out /* OUT */);

/* The advisor's options for a profile and the platform's facts (f may be NULL): thresholds,
 * per-user rate (default 0.5 req/s), the target in req/s (from rps, or users x per-user rate)
 * and in users as given, the cost weights and planning margins, host cores, and why limits are
 * not enforced. The one place both front-ends get them. */
void advise_opts(const struct profile *p, const struct platform_facts *f,
                 struct advisor_opts *out /* OUT */);

/* Runs the advisor over rows[0..n) with advise_opts(p, f). Borrows everything; fills *a.
 * Returns 0 or the advisor's error. */
SIZEUP_MUST_USE int advise_rows(const struct advisor_row *rows, size_t n, const struct profile *p,
                                const struct platform_facts *f, struct advice *a /* OUT */,
                                char *err);

/* The scale-out as the sizing reads it (step 3 of the answer's order): each point's capacity
 * interval's lower bound (the capacity without repeats), usable when measured or the shape
 * search's, valid and not contended; so NULL or not run gives run false and why. Borrows so. */
void advise_scale_out(const struct sweep_scale_out *so, struct sizing_scale_out *out /* OUT */);

/* The scale-out's one curve: the Universal Scalability Law fitted to its usable points'
 * capacities (sizing_curve_fit), the same the sizing reads its replica count from. Returns 0,
 * -EINVAL when there is no fit (no scale-out, too few usable points) or -ENOMEM. */
int advise_scale_out_fit(const struct sweep_scale_out *so, struct usl_fit *f /* OUT */);

/* Whether the scale-out's curve takes the point: measured (or the shape search's), valid or
 * noisy by its interval's width only (an imprecise figure, weighed by its interval), and not
 * contended. */
bool advise_scale_out_point_usable(const struct sweep_scale_point *pt);

/* A point the curve leaves out although it is the app's own measurement: measured (or the
 * shape search's), not contended, marked noisy because its repeats mostly missed the SLO at
 * its figure (a narrow interval). Its capacity is at most that figure: returns it, or 0 for
 * any other point. */
double advise_scale_out_point_bound(const struct sweep_scale_point *pt);

/* The points that curve takes although marked noisy (their interval wider than the noise
 * limit: an imprecise figure, weighed by that interval); 0 without a scale-out. */
size_t advise_scale_out_noisy_used(const struct sweep_scale_out *so);

/* The answer in its order (docs/sweep.md, "The order of the answer"): advise_rows with the
 * scale-out so (may be NULL: none) read for the replica count. The one call the local sweep
 * and the operator make. Borrows everything; fills *a. Returns 0 or the advisor's error. */
SIZEUP_MUST_USE int advise_answer(const struct advisor_row *rows, size_t n, const struct profile *p,
                                  const struct platform_facts *f, const struct sweep_scale_out *so,
                                  struct advice *a /* OUT */, char *err);

/* The advisor's rows for the attempted (not pending) rows of s, the advice over them with
 * advise_rows, into rows[0..*n) (room for VARIANT_MAX) and *a. Returns 0 or the advisor's
 * error (*n is set either way). */
SIZEUP_MUST_USE int advise_sweep(const struct sweep *s, const struct profile *p,
                                 struct advisor_row *rows /* OUT */, size_t *n /* OUT */,
                                 struct advice *a /* OUT */, char *err);

/* sweep_opts.scale_out_choice with ud a const struct profile *: the recommended row and its
 * linear replica count for the target (0 without one); -1 when nothing is recommended. */
int advise_scale_out_choice(void *ud, const struct sweep *s, unsigned *linear /* OUT */);

/* sweep_opts.scale_out_predict: the Universal Scalability Law (advise/usl.h) fitted to the
 * usable points so far, at n replicas; 0 with fewer than two usable points. ud unused. */
double advise_scale_out_predict(void *ud, const struct sweep_scale_out *so, unsigned n);

/* The cluster's findings on the scale-out (so borrowed, may be NULL: none ran) appended to a:
 * that the points loaded what the pods share, or, with a target and none asked for (asked
 * false), that the scale-out is asked for in the cluster, never a default. */
void advise_cluster_scale_out(const struct sweep_scale_out *so, bool asked, struct advice *a);

/* A front-end's finding appended to a as given ("%s"), such as where the node types came from. */
void advise_note(struct advice *a, const char *text);

#endif
