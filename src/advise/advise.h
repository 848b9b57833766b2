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

/* What the answer is composed from: the sweep's rows, the profile, the platform's facts and the
 * scale-out, and what only one platform knows. Borrowed. */
struct advise_input {
    const struct advisor_row *rows; /* rows[0..n): the sweep's, in order (resumed ones first) */
    size_t n;
    const struct profile *profile;
    const struct platform_facts *facts; /* may be NULL */
    const struct sweep *scale_out_from; /* the sweep holding the scale-out; NULL: none */
    /* Platform-specific: the cluster's scale-out findings (the operator), whether the scale-out
     * was asked for, and a front-end's own sentence (where the node types came from). */
    bool cluster;
    bool scale_out_asked;
    const char *note; /* may be NULL */
};

/* The whole answer as data, composed once in the documented order (docs/sweep.md, "The order
 * of the answer"): the verdicts and candidates, the sizing steps 1 to 6 with availability
 * applied once, the autoscaler, the node types, then the findings: the advisor's, the
 * scale-out's shape (the Universal Scalability Law), and the platform's (in->cluster,
 * in->note). The one call both front-ends (the local sweep, the operator) make; every output
 * and the terminal's table render its result. Borrows in; fills *a. Returns 0 or the advisor's
 * error. */
SIZEUP_MUST_USE int advise_compose(const struct advise_input *in, struct advice *a /* OUT */,
                                   char *err);

/* The runner's advise hooks (sweep_opts.scale_out_choice, scale_out_predict and their ud, the
 * profile p, borrowed for the sweep): the one place both front-ends get them. */
void advise_runner_hooks(const struct profile *p, struct sweep_opts *so /* OUT */);

/* advise_compose over rows[0..n) with no scale-out and nothing platform-specific. Borrows
 * everything; fills *a. Returns 0 or the advisor's error. */
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

/* The advisor's rows for the attempted (not pending) rows of s, the advice over them with
 * advise_compose (s's scale-out, nothing platform-specific), into rows[0..*n) (room for
 * VARIANT_MAX) and *a. Returns 0 or the advisor's error (*n is set either way). */
SIZEUP_MUST_USE int advise_sweep(const struct sweep *s, const struct profile *p,
                                 struct advisor_row *rows /* OUT */, size_t *n /* OUT */,
                                 struct advice *a /* OUT */, char *err);

/* sweep_opts.scale_out_choice with ud a const struct profile *: the recommended row and its
 * linear replica count for the target (0 without one); -1 when nothing is recommended. */
int advise_scale_out_choice(void *ud, const struct sweep *s, unsigned *linear /* OUT */);

/* sweep_opts.scale_out_predict: the Universal Scalability Law (advise/usl.h) fitted to the
 * usable points so far, at n replicas; 0 with fewer than two usable points. ud unused. */
double advise_scale_out_predict(void *ud, const struct sweep_scale_out *so, unsigned n);

#endif
