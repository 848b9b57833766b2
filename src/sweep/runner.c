/* The sweep runner's variant loop: each variant applied, made ready, measured in the profile's
 * mode (fixed load here, capacity in runner_capacity.c, stream capacity in runner_streams.c)
 * and stopped, then the scale-out (runner_scale_out.c). The helpers those files share are in
 * runner_util.c, below them all. */

#include "sweep/runner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/quantity.h"
#include "load/load.h"
#include "sweep/runner_int.h"

#define MAX_PHASES 4

const char *sweep_phase_name(enum sweep_phase p)
{
    switch (p) {
    case SWEEP_PHASE_START:
        return "start";
    case SWEEP_PHASE_READY:
        return "ready";
    case SWEEP_PHASE_WARMUP:
        return "warm-up";
    case SWEEP_PHASE_MEASURE:
        return "measure";
    case SWEEP_PHASE_STOP:
        return "stop";
    case SWEEP_PHASE_DONE:
        return "done";
    }
    return "?";
}

/* One load phase of a variant's plan. The profile is a shallow copy of the user's (it borrows
 * every pointer), with the phase's own length. */
struct phase {
    enum sweep_phase kind;
    struct profile prof;
    bool measured;
};

/* Builds the plan: a warm-up phase (when the profile has one) then the measured phase. They run
 * as separate load runs so that usage_begin/usage_end bracket exactly the measured window. A
 * capacity search would append its step phases here. */
static size_t build_plan(const struct profile *p, struct phase *plan)
{
    size_t n = 0;

    if (p->warmup_us > 0) {
        plan[n].kind = SWEEP_PHASE_WARMUP;
        plan[n].prof = *p;
        plan[n].prof.warmup_us = 0;
        plan[n].prof.duration_us = p->warmup_us;
        plan[n].measured = false;
        if (p->nstages > 0) {
            /* A staged profile warms up at its peak load, flat. */
            double users = 0, rate = 0;
            for (size_t i = 0; i < p->nstages; i++) {
                if (p->stages[i].users > users)
                    users = p->stages[i].users;
                if (p->stages[i].rate > rate)
                    rate = p->stages[i].rate;
            }
            plan[n].prof.stages = NULL;
            plan[n].prof.nstages = 0;
            plan[n].prof.users = users > 0 ? (unsigned)ceil(users) : 0;
            plan[n].prof.rate = users > 0 ? 0 : rate;
            if (plan[n].prof.users == 0 && plan[n].prof.rate <= 0)
                plan[n].prof.users = 1;
        }
        n++;
    }
    plan[n].kind = SWEEP_PHASE_MEASURE;
    plan[n].prof = *p;
    plan[n].prof.warmup_us = 0;
    plan[n].measured = true;
    n++;
    return n;
}

static double plan_length_s(const struct phase *plan, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        if (plan[i].prof.nstages > 0)
            for (size_t k = 0; k < plan[i].prof.nstages; k++)
                s += (double)plan[i].prof.stages[k].duration_us / 1e6;
        else
            s += (double)plan[i].prof.duration_us / 1e6;
    }
    return s;
}

/* Marks that depend on the host: CPU beyond it, unenforced limits, contention with the load
 * generator (structural: limit + generator > host; transient: sweep__transient_contended on the
 * representative window), a saturated generator. */
static void mark_row(const struct sweep *s, struct sweep_row *row)
{
    const struct platform_facts *f = &s->facts;
    double host = (double)f->host_millicores / 1000.0;

    if (f->host_millicores > 0 && row->variant.cpu_millicores > f->host_millicores)
        row->flags |= SWEEP_FLAG_CPU_EXCEEDS_HOST;
    if (!f->limits_enforced)
        row->flags |= SWEEP_FLAG_UNENFORCED;
    if (!row->have_load || row->gen_cores < 0)
        return;
    if (row->have_usage && row->usage.host_other_cores >= 0)
        row->host_other_cores = row->usage.host_other_cores;
    double limit = variant_cores(&row->variant);
    if (f->load_shares_host && host > 0 && limit + row->gen_cores > host + 1e-9)
        row->flags |= SWEEP_FLAG_CONTENDED;
    if (row->have_usage && sweep__transient_contended(s, &row->variant, &row->usage))
        row->flags |= SWEEP_FLAG_CONTENDED;
    double can = row->load.threads > 0 ? (double)row->load.threads : 1.0;
    if (f->load_shares_host && host > 0 && host < can)
        can = host;
    if (row->gen_cores >= SWEEP_GEN_SATURATED_SHARE * can)
        row->flags |= SWEEP_FLAG_GEN_SATURATED;
}

/* Fixed-load mode: the plan's phases, usage around the measured one. Returns 0 or a negative
 * errno when a load run could not run at all (err says why). */
static int run_fixed(struct sweep__ctx *c, const char *url, struct phase *plan, size_t nplan,
                     char *err)
{
    const struct sweep_opts *o = c->o;
    struct platform *pl = o->platform;
    struct sweep_row *row = &c->s->rows[c->index];
    int rc;

    for (size_t k = 0; k < nplan && !sweep__stopped(o); k++) {
        struct load_opts lo;
        struct load_result res;

        memset(&lo, 0, sizeof(lo));
        lo.url = url;
        lo.profile = &plan[k].prof;
        lo.threads = o->load_threads;
        lo.progress = sweep__on_load_progress;
        lo.progress_ud = c;
        lo.stop = o->stop;
        sweep__progress(c, plan[k].kind, NULL);
        if (plan[k].measured) {
            rc = pl->ops->usage_begin(pl->self, err);
            if (rc)
                log_warn("sweep.usage", "variant=%s phase=begin error=\"%s\"", row->variant.spec,
                         err);
        }
        rc = load_source_run(o->load_source, &lo, &res, err);
        if (rc)
            return rc;
        if (!plan[k].measured) {
            load_result_free(&res);
            continue;
        }
        memset(&row->usage, 0, sizeof(row->usage));
        if (pl->ops->usage_end(pl->self, &row->usage, err) == 0)
            row->have_usage = true;
        else
            log_warn("sweep.usage", "variant=%s phase=end error=\"%s\"", row->variant.spec, err);
        row->load = res;
        row->have_load = true;
        row->state = SWEEP_ROW_MEASURED;
        if (res.duration_s > 0)
            row->gen_cores = res.tool_cpu_s / res.duration_s;
        if (res.interrupted || sweep__stopped(o))
            row->flags |= SWEEP_FLAG_INTERRUPTED;
    }
    return 0;
}

/* A variant's start: the context's per-variant figures reset, and in capacity mode its share
 * of the time left. Returns false (the row FAILED, DONE reported) when the sweep's budget has
 * already run out. */
static bool begin_variant(struct sweep__ctx *c, struct sweep_row *row)
{
    const struct sweep_opts *o = c->o;

    c->t0 = clock_mono_s();
    c->step = 0;
    c->step_what = NULL;
    c->offered_rps = 0;
    c->stream_step = false;
    c->step_streams = 0;
    c->load_s = 0;
    row->gen_cores = -1;
    row->host_other_cores = -1;
    log_info("sweep.variant", "index=%zu of=%zu variant=%s", c->index + 1, c->s->n,
             row->variant.spec);
    if (o->profile->search.mode != PROFILE_SEARCH_CAPACITY || c->deadline <= 0)
        return true;
    /* Each variant gets an equal share of the time left, so a slow one cannot starve the ones
     * after it; what a fast one leaves over goes to the rest. */
    double left = c->deadline - c->t0;
    if (left <= 0) {
        char b[QTY_LEN], err[ERR_LEN];
        snprintf(err, sizeof(err),
                 "not measured: the sweep's time budget (search.budget %s) "
                 "ran out",
                 qty_format_duration(o->profile->search.budget_us, b));
        sweep__fail_row(row, PLATFORM_FAIL_NONE, err);
        sweep__progress(c, SWEEP_PHASE_DONE, NULL);
        return false;
    }
    /* A planned scale-out is one more share. */
    c->variant_deadline =
        c->t0 + left / (double)(c->s->n - c->index + (c->scale_out_planned ? 1 : 0));
    return true;
}

/* Applies the variant and waits until it is ready, then asks where it serves (into url). Returns
 * 0, or non-zero with the row FAILED (or left pending when the wait was cancelled). */
static int bring_up(struct sweep__ctx *c, struct sweep_row *row, char *url, size_t len)
{
    const struct sweep_opts *o = c->o;
    struct platform *pl = o->platform;
    struct platform_failure fail;
    char err[ERR_LEN] = "";
    int rc;

    memset(&fail, 0, sizeof(fail));
    sweep__progress(c, SWEEP_PHASE_START, NULL);
    rc = pl->ops->apply(pl->self, &row->variant, &fail, err);
    if (rc) {
        sweep__fail_row(row, fail.kind ? fail.kind : PLATFORM_FAIL_APPLY,
                        fail.reason[0] ? fail.reason : err);
        return rc;
    }
    sweep__progress(c, SWEEP_PHASE_READY, NULL);
    rc = pl->ops->wait_ready(pl->self, o->ready_timeout_us > 0 ? o->ready_timeout_us : 60000000,
                             o->stop, &fail, err);
    if (rc) {
        if (rc == -ECANCELED || fail.kind == PLATFORM_FAIL_CANCELLED)
            return rc; /* cancelled: the row stays pending, it was never measured */
        sweep__fail_row(row, fail.kind ? fail.kind : PLATFORM_FAIL_NEVER_READY,
                        fail.reason[0] ? fail.reason : err);
        return rc;
    }
    row->ready_s = clock_mono_s() - c->t0;
    rc = pl->ops->target_url(pl->self, url, len, err);
    if (rc)
        sweep__fail_row(row, PLATFORM_FAIL_NONE, err);
    return rc;
}

/* The measurement in the profile's mode (stream capacity, capacity, or the fixed plan), then
 * the window's verdict: an OOM kill or a death fails the row. */
static void measure(struct sweep__ctx *c, struct sweep_row *row, const char *url)
{
    const struct profile *p = c->o->profile;
    bool capacity = p->search.mode == PROFILE_SEARCH_CAPACITY;
    char err[ERR_LEN] = "";
    int rc;

    if (capacity && p->streams) {
        rc = sweep__streams(c, url, err);
    } else if (capacity) {
        rc = sweep__capacity(c, url, err);
    } else {
        struct phase plan[MAX_PHASES];
        size_t nplan = build_plan(p, plan);
        rc = run_fixed(c, url, plan, nplan, err);
        c->load_s = row->have_load ? plan_length_s(plan, nplan) : 0;
    }
    if (rc)
        sweep__fail_row(row, PLATFORM_FAIL_NONE, err);
    else if (row->have_usage && row->usage.oom_killed)
        sweep__fail_row(row, PLATFORM_FAIL_OOM, "OOM-killed during the measured window");
    else if (row->have_usage && row->usage.died)
        sweep__fail_row(row, PLATFORM_FAIL_DIED,
                        row->usage.note[0] ? row->usage.note : "died during the measured window");
}

/* A variant's end, however it went: the platform stops it, the row gets its times and the
 * host's marks, the log and the progress say how it ended. */
static void finish_variant(struct sweep__ctx *c, struct sweep_row *row)
{
    struct platform *pl = c->o->platform;
    char err[ERR_LEN] = "";

    if (pl->ops->applied_by)
        snprintf(row->applied_by, sizeof(row->applied_by), "%s", pl->ops->applied_by(pl->self));
    sweep__progress(c, SWEEP_PHASE_STOP, NULL);
    double t_stop = clock_mono_s();
    if (pl->ops->stop_variant(pl->self, err) != 0)
        log_warn("sweep.stop", "variant=%s error=\"%s\"", row->variant.spec, err);
    row->stop_s = clock_mono_s() - t_stop;
    row->wall_s = clock_mono_s() - c->t0;
    row->overhead_s = row->wall_s - c->load_s;
    mark_row(c->s, row);
    if (row->cap.flags & CAPACITY_FLAG_GENERATOR)
        row->flags |= SWEEP_FLAG_GEN_SATURATED; /* "at least X": never the app's capacity */
    if (row->cap.searched && (row->flags & SWEEP_FLAG_CONTENDED)) {
        /* The host could not give the variant its CPU at the representative step: the figure
         * is the host's, not the variant's. */
        row->cap.flags |= CAPACITY_FLAG_CONTENDED;
        row->cap.valid = false;
    }
    if (row->state == SWEEP_ROW_FAILED)
        log_warn("sweep.failed", "variant=%s reason=\"%s\"", row->variant.spec,
                 row->failure.reason);
    else if (row->state == SWEEP_ROW_MEASURED)
        log_info("sweep.measured", "variant=%s wall_s=%.2f overhead_s=%.2f", row->variant.spec,
                 row->wall_s, row->overhead_s);
    c->done_wall_s += row->wall_s;
    c->done_n++;
    sweep__progress(c, SWEEP_PHASE_DONE, NULL);
}

/* One variant of the shape search, start to stop. */
static void run_variant(struct sweep__ctx *c)
{
    struct sweep_row *row = &c->s->rows[c->index];
    char url[PLATFORM_URL_LEN];

    if (!begin_variant(c, row))
        return;
    if (bring_up(c, row, url, sizeof(url)) == 0)
        measure(c, row, url);
    finish_variant(c, row);
}

static void init_row(struct sweep_row *r, const struct variant *v)
{
    r->variant = *v;
    r->gen_cores = -1;
    r->host_other_cores = -1;
}

/* The platform's facts, then its preparation, then its facts again (they may be sharper once
 * prepared, e.g. whether the cgroup was writable). */
static int open_platform(struct platform *pl, struct sweep *s, char *err)
{
    char e[ERR_LEN] = "";
    int rc;

    snprintf(s->platform, sizeof(s->platform), "%s", pl->ops->name);
    rc = pl->ops->facts(pl->self, &s->facts, err);
    if (rc)
        return rc;
    rc = pl->ops->prepare(pl->self, err);
    if (rc) {
        snprintf(s->abort_reason, sizeof(s->abort_reason), "%s", err ? err : "prepare failed");
        return rc;
    }
    pl->ops->facts(pl->self, &s->facts, e);
    return 0;
}

/* Restores the platform whatever happened, and says a stop as a cancellation. */
static int close_sweep(const struct sweep_opts *o, struct sweep *s, int rc, char *err)
{
    char e[ERR_LEN] = "";

    if (o->platform->ops->restore(o->platform->self, e) != 0)
        log_error("sweep.restore", "error=\"%s\"", e);
    s->finished = time(NULL);
    if (!rc && sweep__stopped(o)) {
        s->cancelled = true;
        rc = err_set(err, -ECANCELED, "sweep cancelled");
    }
    return rc;
}

int sweep_run(const struct sweep_opts *o, struct sweep *s, char *err)
{
    struct platform *pl = o->platform;
    struct sweep__ctx c;
    char e[ERR_LEN] = "";
    int rc = 0;

    memset(s, 0, sizeof(*s));
    s->started = time(NULL);
    if (!o->variants || o->variants->n == 0 || o->variants->n > VARIANT_MAX)
        return err_set(err, -EINVAL, "no variants to sweep");
    /* Real users share a URL target or an in-place app: a search that does not know where to
     * stop would knowingly overload production. */
    if (o->shared_target && o->profile->search.mode == PROFILE_SEARCH_CAPACITY &&
        !(o->profile->search.max_rps > 0))
        return err_set(err, -EINVAL,
                       "a capacity search against a target real users share needs a ceiling: "
                       "set search.max_rps in the profile (or --max-rps), or use --load fixed");
    s->rows = calloc(o->variants->n, sizeof(*s->rows));
    if (!s->rows)
        return err_set(err, -ENOMEM, "out of memory");
    s->n = o->variants->n;
    for (size_t i = 0; i < s->n; i++)
        init_row(&s->rows[i], &o->variants->items[i]);
    rc = open_platform(pl, s, err);
    if (rc)
        goto out;
    memset(&c, 0, sizeof(c));
    c.o = o;
    c.s = s;
    if (o->profile->search.mode == PROFILE_SEARCH_CAPACITY) {
        c.deadline = clock_mono_s() + (double)o->profile->search.budget_us / 1e6;
        c.variant_estimate_s = sweep__capacity_estimate_s(o->profile);
        c.scale_out_planned = sweep__scale_out_planned(o);
    } else {
        struct phase plan[MAX_PHASES];
        c.variant_estimate_s = plan_length_s(plan, build_plan(o->profile, plan)) + 3;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (sweep__stopped(o))
            break;
        c.index = i;
        run_variant(&c);
        if (o->row_done && o->row_done(o->row_done_ud, s, i, e) != 0)
            log_warn("sweep.row_done", "index=%zu error=\"%s\"", i + 1, e);
    }
    if (o->profile->search.mode == PROFILE_SEARCH_CAPACITY && !o->profile->streams &&
        !sweep__stopped(o))
        sweep__scale_out(&c);
out:
    return close_sweep(o, s, rc, err);
}

int sweep_run_scale_out(const struct sweep_opts *o, const struct variant *v, struct sweep *s,
                        char *err)
{
    struct platform *pl = o->platform;
    const struct sweep_scale_out *prior = o->scale_out_prior;
    struct sweep__ctx c;
    int rc = 0;

    memset(s, 0, sizeof(*s));
    s->started = time(NULL);
    if (!prior || prior->npoints < 1 || prior->points[0].replicas != 1 ||
        o->profile->search.mode != PROFILE_SEARCH_CAPACITY)
        return err_set(err, -EINVAL, "no scale-out to resume");
    s->rows = calloc(1, sizeof(*s->rows));
    if (!s->rows)
        return err_set(err, -ENOMEM, "out of memory");
    s->n = 1;
    /* The variant's row as the shape search left it, as far as the scale-out needs it. */
    init_row(&s->rows[0], v);
    s->rows[0].state = SWEEP_ROW_MEASURED;
    s->rows[0].cap = prior->points[0].cap;
    s->rows[0].flags = prior->points[0].flags;
    rc = open_platform(pl, s, err);
    if (rc)
        goto out;
    memset(&c, 0, sizeof(c));
    c.o = o;
    c.s = s;
    c.scale_out_only = true;
    c.deadline = clock_mono_s() + (double)o->profile->search.budget_us / 1e6;
    c.variant_estimate_s = sweep__capacity_estimate_s(o->profile);
    log_info("sweep.scale_out.resume", "variant=%s points=%zu", v->spec, prior->npoints);
    if (!sweep__stopped(o))
        sweep__scale_out(&c);
out:
    return close_sweep(o, s, rc, err);
}

void sweep_free(struct sweep *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->rows && i < s->n; i++) {
        if (s->rows[i].have_load)
            load_result_free(&s->rows[i].load);
        for (size_t k = 0; k < CAPACITY_MAX_STEPS; k++)
            load_series_free(&s->rows[i].step_series[k]);
    }
    free(s->rows);
    free(s->scale_out);
    memset(s, 0, sizeof(*s));
}
