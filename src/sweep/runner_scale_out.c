/* The scale-out of the sweep runner: after the shape search, one variant (the profile's or the
 * recommendation) measured at several replica counts with the same capacity search, repeats and
 * interval as one pod. The 1-replica point is the variant's own row; each other point's search
 * starts from the prediction (N x X1, or the Universal Scalability Law fitted to the points so
 * far) and bisects from there, the load spread over the replicas (load/spread.h). */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/quantity.h"
#include "sweep/runner_int.h"

/* The default scale-out: at most this many replicas, and one core left for the generator. */
#define SCALE_OUT_DEFAULT_MAX 4
#define SCALE_OUT_GEN_CORES   1.0

static bool has_target(const struct profile *p)
{
    return p->target_rps > 0 || p->target_users > 0;
}

bool sweep__scale_out_planned(const struct sweep_opts *o)
{
    const struct profile_scale_out *so = &o->profile->scale_out;
    if (!o->platform->ops->apply_replicas || o->profile->streams)
        return false;
    return so->given ? so->ncounts > 1 : has_target(o->profile);
}

/* The row the scale-out measures, or -1 (note says why). */
static int choose_variant(struct sweep__ctx *c, unsigned *linear, char *note, size_t len)
{
    const struct profile_scale_out *so = &c->o->profile->scale_out;
    int idx = -1;

    *linear = 0;
    if (c->scale_out_only)
        return 0; /* the earlier run chose it; its row is the only one */
    if (c->o->scale_out_choice)
        idx = c->o->scale_out_choice(c->o->scale_out_ud, c->s, linear);
    if (so->variant[0]) {
        idx = -1;
        for (size_t i = 0; i < c->s->n; i++)
            if (strcmp(c->s->rows[i].variant.spec, so->variant) == 0)
                idx = (int)i;
        if (idx < 0) {
            snprintf(note, len, "scale-out not run: %s is not among the variants swept",
                     so->variant);
            return -1;
        }
    }
    if (idx < 0) {
        snprintf(note, len, "scale-out not run: no variant to scale (no recommendation)");
        return -1;
    }
    const struct sweep_row *row = &c->s->rows[idx];
    if (row->state != SWEEP_ROW_MEASURED || !row->cap.valid || !(row->cap.rps > 0)) {
        snprintf(note, len,
                 "scale-out not run: %s has no valid capacity at 1 replica to scale from",
                 row->variant.spec);
        return -1;
    }
    return idx;
}

/* The counts to measure into counts[] (counts[0] = 1); 0 with the reason in note. */
static size_t choose_counts(struct sweep__ctx *c, const struct variant *v, unsigned linear,
                            unsigned *counts, char *note, size_t len)
{
    const struct profile_scale_out *so = &c->o->profile->scale_out;
    double host = (double)c->s->facts.host_millicores / 1000.0;
    double cores = variant_cores(v);

    if (so->given) {
        memcpy(counts, so->counts, so->ncounts * sizeof(*counts));
        return so->ncounts;
    }
    /* The default: with a target, up to min(4, the linear count), where that many pods and a
     * core for the generator fit the host. */
    unsigned n = linear < SCALE_OUT_DEFAULT_MAX ? linear : SCALE_OUT_DEFAULT_MAX;
    while (n >= 2 && host > 0 && n * cores + SCALE_OUT_GEN_CORES > host + 1e-9)
        n--;
    if (n < 2) {
        snprintf(note, len,
                 "scale-out not measured: %s, so the replica count assumes that N pods serve N "
                 "times one (nothing they share saturates first)",
                 linear < 2 ? "the target needs fewer than 2 pods"
                            : "this host cannot run 2 such pods and the load generator");
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        counts[i] = i + 1;
    return n;
}

/* Where point n's search starts: the front-end's curve through the points so far (the fit is
 * the advisor's, a layer above), else n x X1. */
static double predict(const struct sweep__ctx *c, const struct sweep_scale_out *so, unsigned n)
{
    double x = c->o->scale_out_predict ? c->o->scale_out_predict(c->o->scale_out_ud, so, n) : 0;
    return x > 0 ? x : so->points[0].cap.rps * n;
}

/* Measures one point at n replicas into pt. */
static void measure_point(struct sweep__ctx *c, const struct sweep_row *base, unsigned n,
                          double start_rps, struct sweep_scale_point *pt)
{
    struct platform *pl = c->o->platform;
    struct platform_failure fail;
    struct sweep_row *row = calloc(1, sizeof(*row));
    char urls[PLATFORM_MAX_REPLICAS][PLATFORM_URL_LEN];
    const char *up[PLATFORM_MAX_REPLICAS];
    char err[ERR_LEN] = "";
    size_t nurls = 0;
    int rc;

    pt->replicas = n;
    pt->from = SWEEP_POINT_FAILED;
    if (!row) {
        snprintf(pt->note, sizeof(pt->note), "out of memory");
        return;
    }
    row->variant = base->variant;
    row->gen_cores = -1;
    row->host_other_cores = -1;
    memset(&fail, 0, sizeof(fail));
    log_info("sweep.scale_out", "variant=%s replicas=%u start_rps=%.1f", base->variant.spec, n,
             start_rps);
    rc = pl->ops->apply_replicas(pl->self, &row->variant, n, &fail, err);
    if (!rc)
        rc = pl->ops->wait_ready(pl->self,
                                 c->o->ready_timeout_us > 0 ? c->o->ready_timeout_us : 60000000,
                                 c->o->stop, &fail, err);
    if (!rc)
        rc = pl->ops->target_urls(pl->self, urls, PLATFORM_MAX_REPLICAS, &nurls, err);
    if (rc) {
        snprintf(pt->note, sizeof(pt->note), "%s", fail.reason[0] ? fail.reason : err);
        goto stop;
    }
    for (size_t i = 0; i < nurls; i++)
        up[i] = urls[i];
    c->row = row;
    c->urls = up;
    c->nurls = nurls;
    c->start_rps = start_rps;
    rc = sweep__capacity(c, up[0], err);
    c->row = NULL;
    c->urls = NULL;
    c->nurls = 0;
    c->start_rps = 0;
    if (rc) {
        snprintf(pt->note, sizeof(pt->note), "%s", err);
        goto stop;
    }
    pt->from = SWEEP_POINT_MEASURED;
    pt->cap = row->cap;
    double host = (double)c->s->facts.host_millicores / 1000.0;
    double limit = variant_cores(&row->variant) * n;
    if (c->s->facts.load_shares_host && host > 0 && row->gen_cores >= 0 &&
        limit + row->gen_cores > host + 1e-9) {
        /* The same rule and word as a row: the host could not give every replica its limit
         * beside the generator; the figure is the host's, never read as the app's. */
        pt->flags |= SWEEP_FLAG_CONTENDED;
        pt->cap.flags |= CAPACITY_FLAG_CONTENDED;
        pt->cap.valid = false;
    }
    if (row->cap.flags & CAPACITY_FLAG_GENERATOR)
        pt->flags |= SWEEP_FLAG_GEN_SATURATED;
stop:
    if (pl->ops->stop_variant(pl->self, err) != 0)
        log_warn("sweep.stop", "variant=%s replicas=%u error=\"%s\"", base->variant.spec, n, err);
    if (row->have_load)
        load_result_free(&row->load);
    for (size_t k = 0; k < CAPACITY_MAX_STEPS; k++)
        load_series_free(&row->step_series[k]);
    free(row);
    log_info("sweep.scale_out.point", "replicas=%u rps=%.1f valid=%d flags=%u note=\"%s\"", n,
             pt->cap.rps, pt->cap.valid, pt->flags, pt->note);
}

/* Tells the caller a point ended (the operator records it in its ConfigMap). */
static void point_done(struct sweep__ctx *c)
{
    char e[ERR_LEN] = "";
    if (c->o->scale_out_done && c->o->scale_out_done(c->o->row_done_ud, c->s, e) != 0)
        log_warn("sweep.scale_out_done", "points=%zu error=\"%s\"", c->s->scale_out->npoints, e);
}

void sweep__scale_out(struct sweep__ctx *c)
{
    struct sweep_scale_out *so = calloc(1, sizeof(*so));
    unsigned counts[PLATFORM_MAX_REPLICAS], linear = 0;
    size_t ncounts;
    int idx;

    if (!so)
        return;
    c->s->scale_out = so;
    const struct profile_scale_out *ps = &c->o->profile->scale_out;
    if (ps->given && ps->ncounts <= 1) {
        snprintf(so->note, sizeof(so->note), "scale-out off");
        return;
    }
    if (!ps->given && !has_target(c->o->profile)) {
        snprintf(so->note, sizeof(so->note),
                 "scale-out not measured (no target): a replica count would assume that N pods "
                 "serve N times one");
        return;
    }
    if (!c->o->platform->ops->apply_replicas) {
        snprintf(so->note, sizeof(so->note),
                 "scale-out not measured: the %s platform cannot run replicas yet, so the replica "
                 "count assumes that N pods serve N times one",
                 c->o->platform->ops->name);
        return;
    }
    idx = choose_variant(c, &linear, so->note, sizeof(so->note));
    if (idx < 0)
        return;
    const struct sweep_row *base = &c->s->rows[idx];
    ncounts = choose_counts(c, &base->variant, linear, counts, so->note, sizeof(so->note));
    if (ncounts < 2)
        return;
    so->run = true;
    so->variant = (size_t)idx;
    so->points[0].replicas = 1;
    so->points[0].from = SWEEP_POINT_SHAPE_SEARCH;
    so->points[0].cap = base->cap;
    so->points[0].flags = base->flags & SWEEP_FLAG_CONTENDED;
    so->npoints = 1;
    c->index = (size_t)idx; /* the progress line names the variant */
    for (size_t i = 1; i < ncounts; i++) {
        struct sweep_scale_point *pt = &so->points[so->npoints++];
        double now = clock_mono_s();
        pt->replicas = counts[i];
        if (sweep__stopped(c->o)) {
            so->npoints--;
            break;
        }
        if (c->deadline > 0 && now >= c->deadline) {
            char b[QTY_LEN];
            pt->from = SWEEP_POINT_SKIPPED_BUDGET;
            snprintf(pt->note, sizeof(pt->note), "skipped: budget (search.budget %s ran out)",
                     qty_format_duration(c->o->profile->search.budget_us, b));
            point_done(c);
            continue;
        }
        /* Measured by an earlier run of this sweep (a restarted operator): kept as it was. */
        const struct sweep_scale_out *prior = c->o->scale_out_prior;
        bool copied = false;
        for (size_t k = 1; prior && k < prior->npoints && !copied; k++)
            if (prior->points[k].replicas == counts[i] &&
                prior->points[k].from == SWEEP_POINT_MEASURED) {
                *pt = prior->points[k];
                copied = true;
            }
        if (copied) {
            log_info("sweep.scale_out.resumed", "variant=%s replicas=%u rps=%.1f",
                     base->variant.spec, pt->replicas, pt->cap.rps);
            continue;
        }
        /* Each point an equal share of what is left, as the variants had. */
        if (c->deadline > 0)
            c->variant_deadline = now + (c->deadline - now) / (double)(ncounts - i);
        measure_point(c, base, counts[i], predict(c, so, counts[i]), pt);
        point_done(c);
    }
}
