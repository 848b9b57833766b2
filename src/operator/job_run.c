/* The sweep of one Deployment: the same sweep runner, advisor and output
 * renderers as `sizeup sweep`, on the Kubernetes platform, with the ConfigMap,
 * the status annotation and Events written after every variant. */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/fmt.h"
#include "core/clock.h"
#include "advise/advise.h"
#include "core/log.h"
#include "kube/nodes.h"
#include "kube/objects.h"
#include "kube/platform.h"
#include "operator/job_int.h"
#include "operator/loadjob.h"
#include "output/output_set.h"
#include "sweep/progress_feed.h"
#include "sweep/runner.h"

/* The operator's document over the composed answer (sj->advice): what the cluster knows beside
 * the rows (the Deployment, its container and selector, the command as an annotation), into *d;
 * command (len bytes) holds its command line. */
static void job_doc(const struct sweep_job *sj, const struct sweep *s,
                    const struct advisor_row *rows, size_t n, const char *phase, char *command,
                    size_t len, struct output_doc *d)
{
    d->rows = rows;
    d->n = n;
    d->advice = &sj->advice;
    d->sweep = sj->nprior ? NULL : s; /* a resumed sweep's load details live in two runs */
    d->scale_out_from = s;            /* its scale-out is this run's (prior points copied) */
    d->profile = &sj->profile;
    d->facts = &sj->facts;
    d->platform = "kube";
    snprintf(command, len, "sizeup operator: deployment %s/%s, %s=%s, mode %s", sj->x->j->ns,
             sj->x->j->name, ANNOT_SWEEP, sj->x->j->handled, annot_mode_name(sj->x->req.mode));
    d->command = command;
    d->configs = sj->configs;
    d->started = sj->started;
    d->finished = time(NULL);
    d->cancelled = strcmp(phase, "done") != 0 && strcmp(phase, "running") != 0;
    d->paths = sj->paths;
    d->workload.deployment = sj->x->j->name;
    d->workload.container = sj->container[0] ? sj->container : NULL;
    d->workload.workers_env = sj->x->req.workers_env;
    d->workload.images = sj->images[0] ? sj->images : NULL;
    d->workload.selector = sj->selector[0] ? sj->selector : NULL;
}

/* Composes the answer over rows[0..n) (advise_compose) and writes the ConfigMap: every output of
 * the one output path plus state.json, whatever the verdicts (no recommendation leaves out
 * values.yaml, never the rows or the progress a restarted operator resumes from). */
static int write_outputs(struct sweep_job *sj, const struct sweep *s,
                         const struct advisor_row *rows, size_t n, const char *phase, char *err)
{
    struct output_doc d = {0};
    struct output_set set = {0};
    const char *keys[OUTPUT_SET_MAX], *values[OUTPUT_SET_MAX];
    char command[600], *state = NULL;
    int rc;

    struct advise_input in = {.rows = rows,
                              .n = n,
                              .profile = &sj->profile,
                              .facts = &sj->facts,
                              .scale_out_from = s,
                              .cluster = true,
                              .scale_out_asked = sj->profile.scale_out.ncounts > 1,
                              .note = sj->nodes_note};
    rc = advise_compose(&in, &sj->advice, err);
    if (rc)
        return rc;
    sj->have_advice = 1;

    job_doc(sj, s, rows, n, phase, command, sizeof(command), &d);
    d.previous_results = sj->previous;
    if (sj->previous) {
        /* Capacity against capacity by sizeup compare's test; else throughput and p95. */
        cJSON *cur = output_results_json(&d);
        char *cur_text = cur ? cJSON_PrintUnformatted(cur) : NULL;
        if (resweep_compare_capacity(sj->previous, cur_text, sj->comparison, sizeof(sj->comparison),
                                     &sj->significant) != 0)
            resweep_compare(sj->previous, rows, n, sj->comparison, sizeof(sj->comparison),
                            &sj->significant);
        free(cur_text);
        cJSON_Delete(cur);
        d.comparison = sj->comparison;
    }
    output_no_rec_sentence(&d, sj->no_rec, sizeof(sj->no_rec));

    /* The scale-out's points so far go into state.json (a resumed operator reads them back). */
    if (s && s->scale_out && s->scale_out->run && s->scale_out->variant < s->n) {
        sj->so_state = s->scale_out;
        snprintf(sj->so_spec, sizeof(sj->so_spec), "%s",
                 s->rows[s->scale_out->variant].variant.spec);
    }
    state = job_state_json(sj, rows, n, phase);
    if (!state)
        return err_set(err, -ENOMEM, "out of memory building %s", JOB_STATE_KEY);
    struct output_extra extra = {JOB_STATE_KEY, state};
    rc = output_set_render(&d, &extra, 1, &set, err);
    if (rc)
        goto out;
    if (set.omitted)
        log_warn("sweep.trimmed", "namespace=%s deployment=%s bytes=%zu omitted=0x%x", sj->x->j->ns,
                 sj->x->j->name, set.bytes, set.omitted);
    size_t k = output_set_keys(&set, keys, values, OUTPUT_SET_MAX);
    rc = job_put_sizing(sj->x, keys, values, k, err);
out:
    output_set_free(&set);
    free(state);
    return rc;
}

/* prior rows + rows[0..upto] of s, in sweep order. Owned array (free()). */
static struct advisor_row *all_rows(const struct sweep_job *sj, const struct sweep *s, size_t upto,
                                    size_t *n)
{
    if (sj->so_only)
        upto = 0; /* the scale-out's own row is no row of the results */
    size_t k = sj->nprior + upto;
    struct advisor_row *rows = calloc(k ? k : 1, sizeof(*rows));
    if (!rows)
        return NULL;
    for (size_t i = 0; i < sj->nprior; i++)
        rows[i] = sj->prior[i];
    for (size_t i = 0; i < upto; i++)
        advise_row_from_sweep(s, i, &rows[sj->nprior + i]);
    *n = k;
    return rows;
}

const char *job_status_running(size_t k, size_t n, double eta_s, char out[JOB_STATUS_LEN])
{
    long s = eta_s > 0 && eta_s < 1e7 ? (long)ceil(eta_s) : 0;
    if (s <= 0)
        snprintf(out, JOB_STATUS_LEN, "running %zu/%zu", k, n);
    else if (s < 60)
        snprintf(out, JOB_STATUS_LEN, "running %zu/%zu, about %lds left", k, n,
                 s < 10 ? 10 : (s + 5) / 10 * 10);
    else if (s < 3600)
        snprintf(out, JOB_STATUS_LEN, "running %zu/%zu, about %ldm left", k, n, (s + 30) / 60);
    else
        snprintf(out, JOB_STATUS_LEN, "running %zu/%zu, about %ldh%02ldm left", k, n, s / 3600,
                 (s % 3600 + 30) / 60 > 59 ? 59 : (s % 3600 + 30) / 60);
    return out;
}

/* The runner's estimate of the time left, aged by the time since it came; < 0 when none. */
static double eta_now(const struct sweep_job *sj)
{
    if (sj->eta_s < 0)
        return -1;
    double left = sj->eta_s - (clock_mono_s() - sj->eta_at);
    return left > 0 ? left : 0;
}

/* Writes the running status of k finished variants, at most once every
 * JOB_STATUS_MIN_INTERVAL_S unless forced (a variant's end), and never the same text twice. A
 * failed write is logged: progress is not worth stopping a sweep for. */
static void put_running_status(struct sweep_job *sj, size_t k, bool force)
{
    struct jctx *x = sj->x;
    char status[JOB_STATUS_LEN], serr[ERR_LEN] = "";
    double now = clock_mono_s();

    job_status_running(k, sj->all.n, eta_now(sj), status);
    if (strcmp(status, sj->status) == 0 ||
        (!force && now - sj->status_at < JOB_STATUS_MIN_INTERVAL_S))
        return;
    if (job_set_status(x, status, NULL, serr) != 0) {
        log_warn("sweep.status", "namespace=%s deployment=%s error=\"%s\"", x->j->ns, x->j->name,
                 LOGQ(serr));
        return;
    }
    snprintf(sj->status, sizeof(sj->status), "%s", status);
    sj->status_at = now;
}

static void on_progress(void *ud, const struct sweep_progress *p)
{
    struct sweep_job *sj = ud;

    if (sj->feed_slot >= 0)
        progress_feed_update(sj->x->env->feed, sj->feed_slot, p);
    sj->eta_s = p->eta_s;
    sj->eta_at = clock_mono_s();
    put_running_status(sj, sj->nprior + p->index, false);
}

static enum metrics_verdict to_metric(const struct advisor_row *r, const struct advice *a, size_t i)
{
    if (!r->measured)
        return METRICS_VERDICT_FAILED;
    switch (a->rows[i].verdict) {
    case VERDICT_HEALTHY:
        return METRICS_VERDICT_HEALTHY;
    case VERDICT_STRESSED:
        return METRICS_VERDICT_STRESSED;
    default:
        return METRICS_VERDICT_OVERLOADED;
    }
}

/* A row that counts as progress: measured to its end, or failed for a reason of
 * its own. A row cut short by a stop (pending, or measured but interrupted) is
 * measured again on resume. */
static bool row_complete(const struct sweep_row *r)
{
    if (r->state == SWEEP_ROW_MEASURED)
        return !(r->flags & SWEEP_FLAG_INTERRUPTED);
    return r->state == SWEEP_ROW_FAILED && r->failure.kind != PLATFORM_FAIL_CANCELLED;
}

static int on_row_done(void *ud, const struct sweep *s, size_t index, char *err)
{
    struct sweep_job *sj = ud;
    struct jctx *x = sj->x;
    size_t n = 0;
    char lat[FMT_LEN], rate[FMT_LEN], pct[FMT_LEN], left[JOB_STATUS_LEN] = "";
    int rc;

    if (!row_complete(&s->rows[index]))
        return 0;
    sj->facts = s->facts;
    struct advisor_row *rows = all_rows(sj, s, index + 1, &n);
    if (!rows)
        return err_set(err, -ENOMEM, "out of memory");
    rc = write_outputs(sj, s, rows, n, "running", err);
    if (rc)
        log_warn("sweep.configmap", "namespace=%s deployment=%s error=\"%s\"", x->j->ns, x->j->name,
                 LOGQ(err));
    const struct advisor_row *r = &rows[n - 1];
    if (sj->have_advice)
        metrics_variant(x->env->m, to_metric(r, &sj->advice, n - 1));
    /* The Events say what the status says: the time left, while variants are left. */
    if (n < sj->all.n && eta_now(sj) > 0) {
        char st[JOB_STATUS_LEN];
        const char *about = strstr(job_status_running(n, sj->all.n, eta_now(sj), st), ", about");
        snprintf(left, sizeof(left), "%s", about ? about : "");
    }
    if (!r->measured)
        job_event(x, "Warning", "VariantFailed", "variant %zu/%zu %s FAILED: %s%s", n, sj->all.n,
                  r->variant.spec, r->note, left);
    else if (sj->have_advice)
        job_event(x, "Normal", "VariantMeasured",
                  "variant %zu/%zu %s: %s, %s req/s, p95 %s, errors %s%s", n, sj->all.n,
                  r->variant.spec, verdict_name(sj->advice.rows[n - 1].verdict),
                  fmt_rate(r->throughput_rps, rate), fmt_latency(r->p95_us, lat),
                  fmt_pct(r->error_rate, pct), left);
    log_info("sweep.result",
             "namespace=%s deployment=%s index=%zu total=%zu spec=%s measured=%d "
             "rps=%.1f p95_us=%llu",
             x->j->ns, x->j->name, n, sj->all.n, r->variant.spec, r->measured ? 1 : 0,
             r->throughput_rps, (unsigned long long)r->p95_us);
    /* A variant finished is progress even when the status write fails: do not
     * stop for it. */
    put_running_status(sj, n, true);
    free(rows);
    return rc;
}

/* A scale-out point ended: the ConfigMap with every row and the points so far (results.json's
 * scale_out, state.json's record of the points). */
static int on_point_done(void *ud, const struct sweep *s, char *err)
{
    struct sweep_job *sj = ud;
    size_t n = 0;
    int rc;

    sj->facts = s->facts;
    struct advisor_row *rows = all_rows(sj, s, s->n, &n);
    if (!rows)
        return err_set(err, -ENOMEM, "out of memory");
    rc = write_outputs(sj, s, rows, n, "running", err);
    if (rc == 0 && s->scale_out && s->scale_out->npoints) {
        const struct sweep_scale_point *pt = &s->scale_out->points[s->scale_out->npoints - 1];
        log_info("sweep.scale_out.recorded",
                 "namespace=%s deployment=%s replicas=%u rps=%.1f points=%zu", sj->x->j->ns,
                 sj->x->j->name, pt->replicas, pt->cap.rps, s->scale_out->npoints);
    }
    free(rows);
    return rc;
}

static int make_platform(struct sweep_job *sj, enum kube_sweep_mode mode, struct platform *out,
                         char *err)
{
    struct jctx *x = sj->x;
    struct kube_platform_config pc = {0};

    pc.client = x->c;
    pc.ns = x->j->ns;
    pc.deployment = x->j->name;
    pc.container = x->req.container;
    pc.workers_env = x->req.workers_env;
    pc.port = (unsigned)x->req.port;
    pc.target = x->req.target == ANNOT_TARGET_URL ? x->req.target_url : NULL;
    pc.mode = mode;
    pc.resize_off = x->req.resize_off;
    return kube_platform_new(&pc, out, err);
}

static enum kube_sweep_mode req_mode(const struct jctx *x)
{
    return x->req.mode == ANNOT_MODE_IN_PLACE ? KUBE_MODE_IN_PLACE
           : x->req.mode == ANNOT_MODE_RESIZE ? KUBE_MODE_RESIZE
                                              : KUBE_MODE_CLONE;
}

/* Both say "load-generator pods of one sweep"; the profile's bound must not let through what
 * the annotation's refuses. */
_Static_assert(PROFILE_MAX_GENERATORS == ANNOT_MAX_GENERATORS, "one bound on generator pods");

unsigned job_generators(const struct annot_request *req, const struct profile *p, const char **from)
{
    const char *f = NULL;
    unsigned n = 0;

    if (req->generators) {
        n = req->generators;
        f = ANNOT_PREFIX "generators";
    } else if (p && p->generators) {
        n = p->generators;
        f = "profile generators";
    }
    if (from)
        *from = f;
    return n;
}

/* A load source of n generator pods: an Indexed Job of n workers in the operator's namespace,
 * under the chart's generator settings (env). from names who asked for n, for the error.
 * Fills *out and returns 0, or -ENOTSUP when the generators are not configured (err says
 * what is missing). */
static int make_load_source(struct sweep_job *sj, unsigned n, const char *from,
                            struct loadjob_config *gen, struct load_source *out, char *err)
{
    struct jctx *x = sj->x;
    int rc;

    memset(gen, 0, sizeof(*gen));
    rc = loadjob_config_from_env(gen, err);
    if (rc)
        return err_wrap(err, rc, "%s=%u", from, n);
    gen->client = x->c;
    gen->generators = n;
    kube_platform_clone_label(x->j->name, sj->gen_for);
    gen->for_label = sj->gen_for;
    return loadjob_source_new(gen, out, err);
}

/* Runs the sweep with a slot in the live progress feed (none without the operator, as in the
 * tests, or when every slot is taken: only the page misses it). */
static int run_with_feed(struct sweep_job *sj, const struct sweep_opts *so, struct sweep *s,
                         char *err)
{
    progress_feed_t *feed = sj->x->env ? sj->x->env->feed : NULL;
    char name[PROGRESS_NAME_MAX];

    snprintf(name, sizeof(name), "%s/%s", sj->x->j->ns, sj->x->j->name);
    sj->feed_slot = feed ? progress_feed_open(feed, name) : -1;
    int rc = sweep_run(so, s, err);
    if (sj->feed_slot >= 0)
        progress_feed_close(feed, sj->feed_slot);
    sj->feed_slot = -1;
    return rc;
}

void job_sweep_opts(struct sweep_job *sj, struct sweep_opts *so)
{
    struct jctx *x = sj->x;

    memset(so, 0, sizeof(*so));
    so->platform = &sj->plat;
    so->profile = &sj->profile;
    so->variants = &sj->todo;
    so->stop = &x->j->stop;
    so->progress = on_progress;
    so->progress_ud = sj;
    so->row_done = on_row_done;
    so->row_done_ud = sj;
    /* Validation refused such a capacity search without a ceiling already; the runner checks
     * again, so no later change of the validation can let one overload production. */
    so->shared_target = annot_shared_target(&x->req);
    /* The scale-out (only when asked for: job_request.c turns the default off) measures the
     * recommendation, each point's search starting from the curve so far. */
    advise_runner_hooks(&sj->profile, so);
    so->scale_out_done = on_point_done;
    so->scale_out_prior = sj->so_prior;
}

/* The platform for the request's mode, the runner's options (so), and the load source: the
 * generator pods asked for (into *src, a failure is the sweep's), or, when none were asked
 * for, the automatic ones a capacity search may go on from (where configured; their absence
 * is no error). */
static int prepare_sweep(struct sweep_job *sj, struct sweep_opts *so /* OUT */,
                         struct loadjob_config *gen, struct load_source *src, char *err)
{
    struct jctx *x = sj->x;
    char serr[ERR_LEN] = "";
    const char *gen_from = NULL;
    unsigned ngen = job_generators(&x->req, &sj->profile, &gen_from);
    int rc;

    rc = make_platform(sj, req_mode(x), &sj->plat, err);
    if (rc)
        return rc;
    /* The cluster's node types for the packing; without the grants the profile's stand. */
    if (kube_node_types_read(x->c, &sj->profile, sj->nodes_note) != 0 && sj->nodes_note[0])
        log_warn("sweep.nodes", "namespace=%s deployment=%s note=\"%s\"", x->j->ns, x->j->name,
                 LOGQ(sj->nodes_note));
    job_sweep_opts(sj, so);
    sj->eta_s = -1;
    if (ngen > 1) {
        rc = make_load_source(sj, ngen, gen_from, gen, src, err);
        if (rc)
            return rc;
        so->load_source = src;
    } else if (ngen == 0 && make_load_source(sj, LOADJOB_AUTO_GENERATORS, "automatic generators",
                                             gen, src, serr) == 0) {
        /* Neither annotated nor in the profile: the operator's own pod sends the load, and a
         * capacity search whose step it cannot deliver goes on from generator pods (where they are
         * configured). */
        so->load_source_more = src;
    }
    return 0;
}

/* A scale-out an earlier operator began and did not finish: fewer points recorded than the
 * request's counts. */
static bool so_unfinished(const struct sweep_job *sj)
{
    const struct profile_scale_out *ps = &sj->profile.scale_out;
    return sj->so_prior && sj->so_prior->npoints >= 1 && ps->ncounts > 1 &&
           sj->so_prior->npoints < ps->ncounts;
}

/* Runs sj->todo through the runner into *s; sj->facts then holds the facts the sweep read.
 * Returns the runner's result. */
static int measure(struct sweep_job *sj, const struct sweep_opts *so, struct sweep *s, char *err)
{
    struct jctx *x = sj->x;
    int rc = 0;

    struct variant v;
    if (sj->todo.n) {
        rc = run_with_feed(sj, so, s, err);
    } else if (so_unfinished(sj) && variant_parse(sj->so_spec, &v, NULL) == 0) {
        /* Killed during the scale-out: every row is measured; the points left are measured now,
         * those recorded are kept. */
        sj->so_only = true;
        rc = sweep_run_scale_out(so, &v, s, err);
    } else {
        /* Resumed with every variant already measured (the earlier operator died after the
         * last result but before the final write): nothing to run, but the final ConfigMap
         * (phase done, every key) must still be written before the status says done. The
         * facts only come from the API: without them the advice just says less. */
        char ferr[ERR_LEN] = "";
        if (sj->plat.ops->facts(sj->plat.self, &s->facts, ferr) != 0)
            log_warn("sweep.facts", "namespace=%s deployment=%s error=\"%s\"", x->j->ns, x->j->name,
                     LOGQ(ferr));
    }
    sj->facts = s->facts;
    return rc;
}

static void free_load_source(struct load_source *src)
{
    if (src->ops)
        src->ops->free(src->self);
    src->ops = NULL;
}

/* A Warning Event when someone changed the Deployment's template while the sweep ran. */
static void warn_drift(struct sweep_job *sj)
{
    char drift[ERR_LEN] = "";

    if (kube_platform_drift(&sj->plat, drift))
        job_event(sj->x, "Warning", "TemplateDrift", "%s", drift);
}

/* The rows to write: the prior ones and those of s up to the first not complete (*n of them).
 * Owned array (free()); NULL when out of memory. */
static struct advisor_row *reached_rows(const struct sweep_job *sj, const struct sweep *s,
                                        size_t *n)
{
    size_t reached = 0;

    *n = 0;
    while (reached < s->n && row_complete(&s->rows[reached]))
        reached++;
    return all_rows(sj, s, reached, n);
}

/* The final ConfigMap of a sweep that ran to its end. Measured but not delivered: the user must
 * not read "done" over missing results. The write's own code decides: a transient API error is
 * retried, not failed. */
static int write_final(struct sweep_job *sj, const struct sweep *s, const struct advisor_row *rows,
                       size_t n, char *err)
{
    int rc = !rows ? err_set(err, -ENOMEM, "out of memory")
             : !n  ? err_set(err, -EINVAL, "no variant to write")
                   : write_outputs(sj, s, rows, n, "done", err);
    if (rc)
        rc = err_wrap(err, rc, "writing ConfigMap %s", sj->x->cm_name);
    return rc;
}

/* The ConfigMap of a sweep that did not finish (phase "interrupted", "cancelled", "failed"):
 * what was measured so far, on a best-effort basis. The sweep's own outcome is what the status
 * reports, so a failed write is logged, not returned. */
static void write_partial(struct sweep_job *sj, const struct sweep *s,
                          const struct advisor_row *rows, size_t n, const char *phase)
{
    struct jctx *x = sj->x;
    char werr[ERR_LEN] = "";

    if (!rows || !n)
        return;
    if (write_outputs(sj, s, rows, n, phase, werr) != 0)
        log_warn("sweep.configmap", "namespace=%s deployment=%s phase=%s variants=%zu error=\"%s\"",
                 x->j->ns, x->j->name, phase, n, LOGQ(werr));
}

static void done_event(struct job_done_events *out, const char *type, const char *reason,
                       const char *note)
{
    if (out->n < JOB_DONE_EVENTS_MAX) {
        out->ev[out->n].type = type;
        out->ev[out->n].reason = reason;
        out->ev[out->n].note = note;
        out->n++;
    }
}

void job_done_events(const struct sweep_job *sj, const struct advisor_row *rows, size_t n,
                     struct job_done_events *out)
{
    const struct jctx *x = sj->x;
    char rec[160] = "no variant qualifies";

    memset(out, 0, sizeof(*out));
    if (sj->have_advice && sj->advice.recommended >= 0)
        snprintf(rec, sizeof(rec), "recommended %s", rows[sj->advice.recommended].variant.spec);
    snprintf(out->completed, sizeof(out->completed), "sweep %s done: %zu variants, %s",
             x->j->handled, n, rec);
    done_event(out, "Normal", "SweepCompleted", out->completed);
    /* A sweep that no variant survived is done all the same (its rows are the answer), but
     * the user must see that nothing was recommended. */
    if (sj->have_advice && sj->advice.recommended < 0)
        done_event(out, "Warning", "NoRecommendation", sj->no_rec);
    /* A shape is recommended but no count of it holds the target (the scale-out's curve): the
     * sweep is done all the same, and the user must see that no replica count was written. */
    if (sj->have_advice && sj->advice.recommended >= 0 && sj->advice.by_target &&
        sj->advice.sizing.unreachable)
        done_event(out, "Warning", "TargetUnreachable", sj->advice.sizing.replicas_note);
    /* A re-sweep says what changed since the results it replaced. */
    if (sj->previous && sj->comparison[0])
        done_event(out, sj->significant ? "Warning" : "Normal", "ResultsCompared", sj->comparison);
}

/* A sweep done: its Events (job_done_events), the metric, and the status "done". */
static int report_done(struct sweep_job *sj, const struct advisor_row *rows, size_t n, char *err)
{
    struct jctx *x = sj->x;
    struct job_done_events ev;

    job_done_events(sj, rows, n, &ev);
    for (size_t i = 0; i < ev.n; i++)
        job_event(x, ev.ev[i].type, ev.ev[i].reason, "%s", ev.ev[i].note);
    metrics_sweep_result(x->env->m, METRICS_SWEEP_DONE);
    log_info("sweep.done", "namespace=%s deployment=%s variants=%zu", x->j->ns, x->j->name, n);
    return job_set_status(x, "done", NULL, err);
}

/* A sweep stopped (the runner returned -ECANCELED): by a shutdown or a lost lease it is left
 * for the next leader to resume; by its annotation's removal it ends as cancelled. */
static int report_stopped(struct sweep_job *sj, const struct sweep *s,
                          const struct advisor_row *rows, size_t n, char *err)
{
    struct jctx *x = sj->x;

    if (x->j->stop_reason != JOB_STOP_CANCEL) {
        /* Shutdown or lost lease: the runner restored the original; the progress
         * stays in the ConfigMap and the status stays "running k/n", so the next
         * leader resumes. */
        write_partial(sj, s, rows, n, "interrupted");
        job_event(x, "Normal", "SweepInterrupted",
                  "operator stopping after %zu/%zu variants; original restored; the sweep "
                  "resumes when an operator leads again",
                  n, sj->all.n);
        metrics_sweep_result(x->env->m, METRICS_SWEEP_CANCELLED);
        x->j->handled[0] = '\0'; /* not finished: a successor must pick it up */
        return 0;
    }
    write_partial(sj, s, rows, n, "cancelled");
    job_event(x, "Normal", "SweepCancelled", "sweep cancelled after %zu/%zu variants", n,
              sj->all.n);
    metrics_sweep_result(x->env->m, METRICS_SWEEP_CANCELLED);
    return job_set_status(x, "failed: cancelled (sizeup.dev/sweep removed)", NULL, err);
}

/* A sweep that failed with rc (err says why): a transient API error while attempts are left
 * waits for a retry (status "pending: retrying ..."); anything else ends it (status
 * "failed: ..."), with a Warning Event either way. */
static int report_failed(struct sweep_job *sj, int rc, char *err)
{
    struct jctx *x = sj->x;
    char status[ERR_LEN + 16], serr[ERR_LEN] = "";

    if (job_retryable(rc) && !x->j->stop) {
        int attempt = x->j->attempt > 0 ? x->j->attempt : 1;
        int delay = job_retry_delay_s(attempt);
        if (delay > 0) {
            /* The runner restored the template or deleted the clone before returning: nothing
             * is left applied while the request waits for its next run. */
            const char *what = rc == KUBE_ECONFLICT ? "conflicts" : "API errors";
            snprintf(status, sizeof(status), "pending: retrying after %s in %ds (attempt %d/%d)",
                     what, delay, attempt + 1, JOB_MAX_ATTEMPTS);
            job_event(x, "Warning", "SweepRetrying",
                      "sweep %s attempt %d/%d failed: %s; original left untouched; retrying in "
                      "%d s",
                      x->j->handled, attempt, JOB_MAX_ATTEMPTS, err[0] ? err : "API error", delay);
            log_warn("sweep.retry", "namespace=%s deployment=%s attempt=%d delay_s=%d error=\"%s\"",
                     x->j->ns, x->j->name, attempt, delay, LOGQ(err));
            x->j->retry_in_s = delay;
            return job_set_status(x, status, NULL, serr);
        }
    }
    snprintf(status, sizeof(status), "failed: %s", err[0] ? err : "sweep failed");
    job_event(x, "Warning", "SweepFailed", "%s", status);
    metrics_sweep_result(x->env->m, METRICS_SWEEP_FAILED);
    log_warn("sweep.failed", "namespace=%s deployment=%s error=\"%s\"", x->j->ns, x->j->name,
             LOGQ(err));
    return job_set_status(x, status, NULL, serr);
}

int job_run_sweep(struct sweep_job *sj, char *err)
{
    struct sweep s = {0};
    struct sweep_opts so = {0};
    struct loadjob_config gen;
    struct load_source src = {0};
    struct advisor_row *rows = NULL;
    size_t n = 0;
    int rc;

    rc = prepare_sweep(sj, &so, &gen, &src, err);
    if (rc)
        goto failed;
    rc = measure(sj, &so, &s, err);
    free_load_source(&src);
    warn_drift(sj);
    rows = reached_rows(sj, &s, &n);
    if (rc == 0 && (rc = write_final(sj, &s, rows, n, err)) != 0)
        goto failed;
    if (rc == 0)
        rc = report_done(sj, rows, n, err);
    else if (rc == -ECANCELED)
        rc = report_stopped(sj, &s, rows, n, err);
    else {
        write_partial(sj, &s, rows, n, "failed");
        goto failed;
    }
    free(rows);
    sweep_free(&s);
    return rc;
failed:
    free_load_source(&src);
    free(rows);
    sweep_free(&s);
    return report_failed(sj, rc, err);
}

/* One mode's clean-up on a fresh platform: prepare adopts what an earlier run
 * of ours left (a clone labelled as ours; a saved original template, kept as
 * the original) and refuses what is not ours; restore then deletes the clone or
 * puts the saved template back. */
static int cleanup_mode(struct sweep_job *sj, enum kube_sweep_mode mode, char *err)
{
    struct platform p = {0};
    int rc = make_platform(sj, mode, &p, err);
    if (rc)
        return rc;
    rc = p.ops->prepare(p.self, err);
    if (rc == 0)
        rc = p.ops->restore(p.self, err);
    p.ops->free(p.self);
    return rc;
}

int job_restore_leftovers(struct sweep_job *sj, char *err)
{
    struct jctx *x = sj->x;
    int rc = 0;

    /* Both modes, whatever the annotation says now: the mode may have been
     * changed while no operator ran. In place only when a saved template shows a
     * patch may be on (or saved resources a resize: resize mode saves both, and the
     * in-place restore resizes the pod back first). */
    if (kube_annotation(x->deploy, KUBE_ANN_ORIGINAL) ||
        kube_annotation(x->deploy, KUBE_ANN_RESOURCES))
        rc = cleanup_mode(sj, KUBE_MODE_IN_PLACE, err);
    if (rc == 0)
        rc = cleanup_mode(sj, KUBE_MODE_CLONE, err);
    if (rc == 0)
        log_info("sweep.cleaned-up", "namespace=%s deployment=%s", x->j->ns, x->j->name);
    return rc;
}
