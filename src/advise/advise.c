/* The advisor over a sweep: the runner's rows converted, the options from the profile. */

#include "advise/advise.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advisor_int.h"
#include "advise/availability.h"
#include "advise/packing.h"
#include "advise/usl.h"

#include "core/text.h"
#include "load/hist.h"
#include "load/result.h"

#define PER_USER_RPS_DEFAULT 0.5 /* the profile's default, for a profile that says 0 */

void advise_row_from_sweep(const struct sweep *s, size_t i, struct advisor_row *out)
{
    const struct sweep_row *r = &s->rows[i];

    memset(out, 0, sizeof(*out));
    out->variant = r->variant;
    out->flags = r->flags;
    out->cpu_cores_used = -1;
    out->peak_memory_bytes = -1;
    out->gen_cores = r->gen_cores;
    out->host_other_cores = r->host_other_cores;
    snprintf(out->applied_by, sizeof(out->applied_by), "%s", r->applied_by);
    out->ready_s = r->ready_s;
    out->measured = r->state == SWEEP_ROW_MEASURED && r->have_load;
    out->cap = r->cap;
    out->scap = r->scap;
    if (r->state == SWEEP_ROW_FAILED) {
        out->fail = r->failure.kind;
        snprintf(out->note, sizeof(out->note), "%s", r->failure.reason);
    } else if (r->state == SWEEP_ROW_PENDING) {
        snprintf(out->note, sizeof(out->note), "not run (sweep cancelled)");
    }
    if (r->have_load) {
        const struct load_stats *t = &r->load.total;
        out->throughput_rps = load_stats_throughput(t, r->load.duration_s);
        out->p50_us = hist_percentile(&t->latency, 50);
        out->p95_us = hist_percentile(&t->latency, 95);
        out->p99_us = hist_percentile(&t->latency, 99);
        out->error_rate = load_stats_error_rate(t);
        out->requests = t->requests;
    }
    /* Capacity mode: one coherent row. Throughput is the capacity within the SLO, and the latency
     * and error columns are the repeats at that capacity merged (histograms add exactly), so the
     * state beside them is judged on what the capacity was measured from, not on one repeat. */
    if (r->have_load && r->cap.searched) {
        out->throughput_rps = r->cap.rps;
        if (r->cap.merged.have) {
            out->p50_us = r->cap.merged.p50_us;
            out->p95_us = r->cap.merged.p95_us;
            out->p99_us = r->cap.merged.p99_us;
            out->error_rate = r->cap.merged.error_rate;
            out->requests = r->cap.merged.requests;
        }
    }
    if (r->have_usage) {
        if (r->usage.cpu_s >= 0 && r->usage.window_s > 0)
            out->cpu_cores_used = r->usage.cpu_s / r->usage.window_s;
        out->peak_memory_bytes = r->usage.peak_memory_bytes;
    }
}

void advise_opts(const struct profile *p, const struct platform_facts *f, struct advisor_opts *out)
{
    memset(out, 0, sizeof(*out));
    out->thresholds = p->thresholds;
    out->per_user_rps = p->per_user_rps > 0 ? p->per_user_rps : PER_USER_RPS_DEFAULT;
    out->target_rps = p->target_rps > 0 ? p->target_rps : p->target_users * out->per_user_rps;
    out->target_users = p->target_rps > 0 ? 0 : p->target_users;
    out->target_streams = p->target_streams;
    out->delivery_slo_us =
        p->slo.delivery_p95_us > 0 ? p->slo.delivery_p95_us : p->thresholds.healthy_p95_us;
    out->slo = p->slo;
    out->cost = p->cost;
    out->nodes = p->nodes;
    out->nnodes = p->nnodes;
    out->planning = p->planning;
    out->autoscaling = &p->autoscaling;
    out->availability = &p->availability;
    out->host_cores = f ? (double)f->host_millicores / 1000.0 : 0;
    out->repeats = p->search.repeats;
    out->limits_note = f && !f->limits_enforced ? f->limits_note : NULL;
}

/* The answer's steps (advisor_run: the verdicts, the sizing's steps 1 to 6 with availability
 * applied once at step 5), then the node types for the recommended pods. */
static int run_answer(const struct advisor_row *rows, size_t n, const struct profile *p,
                      const struct advisor_opts *o, struct advice *a, char *err)
{
    int rc = advisor_run(rows, n, o, a, err);

    if (rc)
        return rc;
    packing_apply(p->nodes, p->nnodes, a);
    return 0;
}

int advise_rows(const struct advisor_row *rows, size_t n, const struct profile *p,
                const struct platform_facts *f, struct advice *a, char *err)
{
    struct advise_input in = {.rows = rows, .n = n, .profile = p, .facts = f};

    return advise_compose(&in, a, err);
}

/* A noisy point whose mark is its interval's width (wider than CAPACITY_NOISY_REL after the
 * re-measure): an imprecise figure of the app, not a wrong one, so the curve takes it with the
 * small weight its interval gives (a saturated shared backend is noisy by nature, and leaving
 * its points out would read the plateau as linear). One marked noisy because its repeats
 * mostly missed the SLO, with a narrow interval, stays out. */
static bool noisy_by_width(const struct capacity_result *cap)
{
    return (cap->flags & CAPACITY_FLAG_NOISY) && cap->interval.n >= 2 &&
           stats_rel_half(&cap->interval) > CAPACITY_NOISY_REL;
}

/* The app's own point: measured (or the shape search's) and not contended. */
static bool app_point(const struct sweep_scale_point *pt)
{
    return !(pt->flags & SWEEP_FLAG_CONTENDED) &&
           (pt->from == SWEEP_POINT_MEASURED || pt->from == SWEEP_POINT_SHAPE_SEARCH);
}

/* The app's own figure, noisy at most: an app point (above) with a capacity and no flag but
 * noisy, too few repeats or unmeetable. */
static bool app_noisy(const struct sweep_scale_point *pt)
{
    const unsigned allowed =
        CAPACITY_FLAG_TOO_FEW_REPEATS | CAPACITY_FLAG_UNMEETABLE | CAPACITY_FLAG_NOISY;
    return !(pt->cap.flags & ~allowed) && pt->cap.rps > 0 && app_point(pt);
}

/* A scale-out point counts toward the curve when it is the app's, valid or noisy by its
 * interval's width only (above). */
bool advise_scale_out_point_usable(const struct sweep_scale_point *pt)
{
    return (pt->cap.valid || (noisy_by_width(&pt->cap) && app_noisy(pt))) && app_point(pt);
}

/* The search found the figure and its repeats refuted it (runner_capacity.c): the capacity at
 * that count is no more than it, which bounds what the curve may read there. */
double advise_scale_out_point_bound(const struct sweep_scale_point *pt)
{
    return !advise_scale_out_point_usable(pt) && (pt->cap.flags & CAPACITY_FLAG_NOISY) &&
                   app_noisy(pt)
               ? pt->cap.rps
               : 0;
}

size_t advise_scale_out_noisy_used(const struct sweep_scale_out *so)
{
    size_t n = 0;
    for (size_t i = 0; so && i < so->npoints; i++)
        n += advise_scale_out_point_usable(&so->points[i]) && !so->points[i].cap.valid;
    return n;
}

void advise_scale_out(const struct sweep_scale_out *so, struct sizing_scale_out *out)
{
    memset(out, 0, sizeof(*out));
    if (!so) {
        snprintf(out->skipped, sizeof(out->skipped), "no scale-out was measured");
        return;
    }
    if (!so->run) {
        snprintf(out->skipped, sizeof(out->skipped), "%s",
                 so->note[0] ? so->note : "no scale-out was measured");
        return;
    }
    out->run = true;
    out->variant = so->variant;
    for (size_t i = 0; i < so->npoints && i < PLATFORM_MAX_REPLICAS && i < USL_MAX_POINTS; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        const struct stats_summary *iv = &pt->cap.interval;
        /* The interval's lower bound with repeats (0 when it reaches below), the capacity
         * itself without. */
        double low = iv->n >= 2 ? fmax(iv->low, 0) : pt->cap.rps;
        /* The capacity is known to within its interval: the repeats' below, the search's
         * bracket above (capacity_set_interval). Repeats at one offered rate can agree to the
         * request, so their own standard error would weigh a point as if exact; the fit takes
         * the interval's width as 2 x USL_Z standard errors, never less than the repeats'. */
        double se = iv->n >= 2 && iv->sd > 0 ? iv->sd / sqrt((double)iv->n) : 0;
        if (iv->n >= 2 && iv->high > iv->low)
            se = fmax(se, (iv->high - iv->low) / (2 * USL_Z));
        out->pts[out->n++] =
            (struct sizing_curve_point){pt->replicas,
                                        low,
                                        advise_scale_out_point_usable(pt) && pt->cap.rps > 0,
                                        pt->cap.rps > 0 ? pt->cap.rps : 0,
                                        se,
                                        advise_scale_out_point_bound(pt)};
    }
}

int advise_scale_out_fit(const struct sweep_scale_out *so, struct usl_fit *f)
{
    struct sizing_scale_out *pts = malloc(sizeof(*pts));
    char err[ERR_LEN];
    int rc;

    if (!pts)
        return -ENOMEM;
    advise_scale_out(so, pts);
    rc = pts->run ? sizing_curve_fit(pts->pts, pts->n, f, err) : -EINVAL;
    free(pts);
    return rc;
}

static size_t scale_out_fit(const struct sweep_scale_out *so, struct usl_fit *f /* OUT */);

/* What the scale-out's curve says, as figures: the points' counts, the fit, the noisy points it
 * weighed, and the lowest point left out whose figure, not held, lies below the curve
 * (sizing_curve.c then reads no further than measured). */
struct scale_out_shape {
    const struct sweep_scale_out *so;
    const char *label; /* the variant measured */
    struct usl_fit fit;
    size_t noisy;
    unsigned refuted_at; /* 0: none */
    double refuted_x, refuted_fit;
};

/* The shape of s's scale-out into *out; false when no scale-out ran or its points give no
 * curve. */
static bool scale_out_shape(const struct sweep *s, struct scale_out_shape *out)
{
    const struct sweep_scale_out *so = s ? s->scale_out : NULL;

    memset(out, 0, sizeof(*out));
    if (!so || !so->run || so->variant >= s->n || !scale_out_fit(so, &out->fit))
        return false;
    out->so = so;
    out->label = s->rows[so->variant].variant.label;
    out->noisy = advise_scale_out_noisy_used(so);
    for (size_t i = 0; i < so->npoints; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        double bound = advise_scale_out_point_bound(pt), fitted = usl_eval(&out->fit, pt->replicas);
        if (bound > 0 && fitted > bound * (1 + 1e-9)) {
            out->refuted_at = pt->replicas;
            out->refuted_x = bound;
            out->refuted_fit = fitted;
            break;
        }
    }
    return true;
}

/* What the scale-out's shape means, in plain words, among the findings: linear, slowing
 * (contention: a shared resource serialises part of the work) or peaking (coherency: more pods
 * serve less). Nothing when no scale-out ran or its points give no curve. */
static void scale_out_finding(const struct sweep *s, struct advice *a)
{
    struct scale_out_shape sh;
    /* At most PLATFORM_MAX_REPLICAS counts of at most two digits each, ", " between. */
    char counts[PLATFORM_MAX_REPLICAS * 12] = "", text[512], weighed[ADVISOR_TEXT_LEN] = "",
                                        refuted[ADVISOR_TEXT_LEN] = "";

    if (!scale_out_shape(s, &sh))
        return;
    for (size_t i = 0; i < sh.so->npoints; i++)
        text_catf(counts, sizeof(counts), "%s%u", i ? ", " : "", sh.so->points[i].replicas);
    usl_describe(&sh.fit, text, sizeof(text));
    if (text_full(counts, sizeof(counts)) || text_full(text, sizeof(text)))
        a->findings_cut++; /* a clause cut is a cut finding: the answer's error */
    if (sh.noisy)
        snprintf(weighed, sizeof(weighed), ", %zu of them noisy and weighed by %s", sh.noisy,
                 sh.noisy == 1 ? "its wider interval" : "their wider intervals");
    if (sh.refuted_at)
        snprintf(refuted, sizeof(refuted),
                 " At %u replicas, %.0f req/s did not hold its repeats, below the curve's "
                 "%.0f there: the curve overstates the pods from there on, so the replica "
                 "count is read no further than measured.",
                 sh.refuted_at, sh.refuted_x, sh.refuted_fit);
    advisor__finding(a,
                     "Scale-out of %s at %s replicas: the capacity within the SLO is %s (the "
                     "Universal Scalability Law fitted to %zu points%s, residual %.1f%%).%s",
                     sh.label, counts, text, sh.fit.used, weighed, 100 * sh.fit.residual, refuted);
}

int advise_scale_out_choice(void *ud, const struct sweep *s, unsigned *linear)
{
    const struct profile *p = ud;
    struct advisor_row *rows = calloc(VARIANT_MAX, sizeof(*rows));
    struct advice *a = calloc(1, sizeof(*a));
    char err[ERR_LEN] = "";
    size_t n = 0;
    int idx = -1;

    *linear = 0;
    if (rows && a && advise_sweep(s, p, rows, &n, a, err) == 0 && a->recommended >= 0) {
        idx = a->recommended; /* advise_sweep's rows are the sweep's first n, in order */
        /* The pods the target needs up: availability's extra pods are not measured. */
        if (a->sizing.by_target)
            *linear = a->sizing.replicas_linear;
    }
    free(rows);
    free(a);
    return idx;
}

/* The scale-out's one curve (advise_scale_out_fit). Returns the usable points' count, 0 when
 * there is no fit. */
static size_t scale_out_fit(const struct sweep_scale_out *so, struct usl_fit *f)
{
    return advise_scale_out_fit(so, f) == 0 ? f->used : 0;
}

double advise_scale_out_predict(void *ud, const struct sweep_scale_out *so, unsigned n)
{
    struct usl_fit f;
    (void)ud;

    if (!scale_out_fit(so, &f))
        return 0;
    return usl_eval(&f, n);
}

/* The cluster's findings on the scale-out: that the points loaded what the pods share, or, with
 * a target and none asked for, that the scale-out is asked for in the cluster, never a default. */
static void cluster_scale_out_finding(const struct sweep_scale_out *so, bool asked,
                                      struct advice *a)
{
    if (so && so->run) {
        unsigned most = 0;
        for (size_t i = 0; i < so->npoints; i++)
            if (so->points[i].from == SWEEP_POINT_MEASURED && so->points[i].replicas > most)
                most = so->points[i].replicas;
        advisor__finding(a,
                         "The scale-out ran up to %u clone pods side by side in the cluster: "
                         "a cluster scale-out loads what the pods share (the database, cache or "
                         "downstream API behind them) as production would, so its curve "
                         "includes their limits; it ran because it was asked for "
                         "(sizeup.dev/scale-out or the profile), never by default.",
                         most);
        return;
    }
    if (a->by_target && !asked)
        advisor__finding(a, "No scale-out was measured: in the cluster it runs only when asked for "
                            "(sizeup.dev/scale-out: N, clone mode), because a cluster scale-out "
                            "loads what the pods share (the database behind them).");
}

/* The answer in its documented order (docs/sweep.md, "The order of the answer"): the advisor's
 * verdicts, candidates and sizing steps 1 to 6 with availability (run_answer), then the
 * scale-out's shape in words, then what only the platform knows (the cluster's scale-out, the
 * front-end's note). */
int advise_compose(const struct advise_input *in, struct advice *a, char *err)
{
    const struct sweep_scale_out *so = in->scale_out_from ? in->scale_out_from->scale_out : NULL;
    struct advisor_opts *o = calloc(1, sizeof(*o));
    int rc;

    if (!o)
        return err_set(err, -ENOMEM, "out of memory");
    advise_opts(in->profile, in->facts, o);
    advise_scale_out(so, &o->scale_out);
    rc = run_answer(in->rows, in->n, in->profile, o, a, err);
    free(o);
    if (rc)
        return rc;
    scale_out_finding(in->scale_out_from, a);
    if (in->cluster)
        cluster_scale_out_finding(so, in->scale_out_asked, a);
    if (in->note && *in->note)
        advisor__finding(a, "%s", in->note);
    return advisor__check_text(a, err);
}

int advise_sweep(const struct sweep *s, const struct profile *p, struct advisor_row *rows,
                 size_t *n, struct advice *a, char *err)
{
    size_t k = 0;

    while (k < s->n && k < VARIANT_MAX && s->rows[k].state != SWEEP_ROW_PENDING)
        k++;
    for (size_t i = 0; i < k; i++)
        advise_row_from_sweep(s, i, &rows[i]);
    *n = k;
    struct advise_input in = {
        .rows = rows, .n = k, .profile = p, .facts = &s->facts, .scale_out_from = s};
    return advise_compose(&in, a, err);
}

void advise_runner_hooks(const struct profile *p, struct sweep_opts *so)
{
    so->scale_out_choice = advise_scale_out_choice;
    so->scale_out_predict = advise_scale_out_predict;
    so->scale_out_ud = (void *)p;
}
