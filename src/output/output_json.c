/* results.json: the inputs, every variant in sweep order (the load run's fields as
 * `sizeup loadtest --json` names them, then the spec, verdict, usage and capacity), the
 * recommendation, the values, the rule and the findings. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "core/digest.h"
#include "core/jb.h"
#include "core/quantity.h"
#include "load/report.h"
#include "output/output.h"
#include "output/output_capacity.h"
#include "output/output_hpa.h"
#include "output/output_keda.h"
#include "output/output_int.h"
#include "output/output_set.h"
#include "profile/profile_streams.h"
#include "sweep/runner.h"

#ifndef SIZEUP_VERSION
#define SIZEUP_VERSION "0.1.0"
#endif

/* The streams: and producers: inputs under their YAML names; nothing without streams. */
static void json_profile_streams(struct jb *b, cJSON *o, const struct profile_streams *st)
{
    cJSON *x;

    if (!st)
        return;
    x = jb_obj(b, o, "streams");
    if (x) {
        jb_str(b, x, "url", st->url ? st->url : "");
        jb_str(b, x, "protocol", profile_stream_proto_name(st->protocol));
        jb_num(b, x, "count", st->count);
        jb_num(b, x, "ramp_s", (double)st->ramp_us / 1e6);
        if (st->subscribe)
            jb_str(b, x, "subscribe", st->subscribe);
    }
    if (st->producers == 0)
        return;
    x = jb_obj(b, o, "producers");
    if (!x)
        return;
    jb_num(b, x, "count", st->producers);
    jb_num(b, x, "rate", st->rate);
    cJSON *r = jb_obj(b, x, "request");
    jb_str(b, r, "method", st->request.method);
    jb_str(b, r, "path", st->request.path);
    jb_str(b, x, "match", st->match ? st->match : "");
    jb_str(b, x, "fanout", st->fanout_all ? "all" : "none");
}

/* Every input the sizing was judged by, beside json_profile's load fields, under the profile's
 * YAML names (durations with _ms/_s): slo, search, cost, planning, the stream target and the
 * streams, so `sizeup compare` can tell two sweeps judged differently apart. */
static void json_profile_inputs(struct jb *b, cJSON *o, const struct profile *p)
{
    const struct profile_search *se = &p->search;
    cJSON *x;

    if (p->target_streams > 0)
        jb_num(b, o, "target_streams", p->target_streams);
    x = jb_obj(b, o, "slo");
    if (x) {
        jb_num(b, x, "p95_ms", (double)p->slo.p95_us / 1e3);
        if (p->slo.p99_us > 0)
            jb_num(b, x, "p99_ms", (double)p->slo.p99_us / 1e3);
        jb_num(b, x, "errors", p->slo.errors);
        if (p->streams)
            jb_num(b, x, "delivery_p95_ms", (double)p->slo.delivery_p95_us / 1e3);
    }
    x = jb_obj(b, o, "search");
    if (x) {
        jb_str(b, x, "mode", se->mode == PROFILE_SEARCH_FIXED ? "fixed" : "capacity");
        jb_num(b, x, "warmup_s", (double)se->warmup_us / 1e6);
        jb_num(b, x, "window_s", (double)se->window_us / 1e6);
        jb_num(b, x, "precision", se->precision);
        jb_num(b, x, "repeats", se->repeats);
        jb_num(b, x, "max_steps", se->max_steps);
        if (se->max_rps > 0)
            jb_num(b, x, "max_rps", se->max_rps);
        jb_num(b, x, "budget_s", (double)se->budget_us / 1e6);
        jb_num(b, x, "settle_s", (double)se->settle_us / 1e6);
    }
    x = jb_obj(b, o, "cost");
    if (x) {
        jb_num(b, x, "cpu", p->cost.cpu);
        jb_num(b, x, "memory_gib", p->cost.memory_gib);
    }
    x = jb_obj(b, o, "planning");
    if (x) {
        jb_num(b, x, "buffer", p->planning.buffer);
        jb_num(b, x, "growth", p->planning.growth);
        if (p->planning.ramp_given)
            jb_num(b, x, "ramp", p->planning.ramp);
    }
    if (p->autoscaling.given) {
        x = jb_obj(b, o, "autoscaling");
        jb_str(b, x, "metric", p->autoscaling.metric);
        if (p->autoscaling.server_address[0] || p->autoscaling.query[0]) {
            cJSON *k = jb_obj(b, x, "keda");
            if (p->autoscaling.server_address[0])
                jb_str(b, k, "server_address", p->autoscaling.server_address);
            if (p->autoscaling.query[0])
                jb_str(b, k, "query", p->autoscaling.query);
        }
    }
    json_profile_streams(b, o, p->streams);
}

/* The SHA-256 of len bytes at data under key; a digest that cannot be computed fails the
 * document (jb_done) rather than leave the field out. */
static void json_digest(struct jb *b, cJSON *o, const char *key, const char *data, size_t len)
{
    char hex[DIGEST_HEX_LEN];
    if (digest_sha256_hex(data, len, hex) != 0)
        jb_fail(b);
    else
        jb_str(b, o, key, hex);
}

/* Request q's fields: its headers by name with the SHA-256 of each value, and the SHA-256 of its
 * body. Enough to tell two runs' requests apart, never the values: a header can hold a token,
 * and results.json lands in a ConfigMap. */
static void json_request(struct jb *b, cJSON *reqs, const struct profile_request *q)
{
    cJSON *r = jb_obj(b, reqs, NULL);
    jb_str(b, r, "name", q->name);
    jb_str(b, r, "method", q->method);
    jb_str(b, r, "path", q->path);
    jb_num(b, r, "weight", q->weight);
    cJSON *hs = q->nheaders ? jb_arr(b, r, "headers") : NULL;
    for (size_t k = 0; hs && k < q->nheaders; k++) {
        const char *v = q->headers[k].value ? q->headers[k].value : "";
        cJSON *h = jb_obj(b, hs, NULL);
        jb_str(b, h, "name", q->headers[k].name);
        json_digest(b, h, "value_sha256", v, strlen(v));
    }
    if (q->body)
        json_digest(b, r, "body_sha256", q->body, q->body_len);
}

/* The stages themselves, in order: each one's duration and its users or rate. */
static void json_stage_list(struct jb *b, cJSON *o, const struct profile *p)
{
    cJSON *a = p->nstages ? jb_arr(b, o, "stage_list") : NULL;
    for (size_t i = 0; a && i < p->nstages; i++) {
        cJSON *st = jb_obj(b, a, NULL);
        jb_num(b, st, "duration_s", (double)p->stages[i].duration_us / 1e6);
        if (p->stages[i].users >= 0)
            jb_num(b, st, "users", p->stages[i].users);
        else
            jb_num(b, st, "rate", p->stages[i].rate);
    }
}

/* The operator's inputs: the scale-out's counts and variant (null when off) and the generator
 * pods the profile asks for (null when it does not; the annotation wins, and each variant's
 * load_generator says what ran). */
static void json_profile_operator(struct jb *b, cJSON *o, const struct profile *p)
{
    const struct profile_scale_out *so = &p->scale_out;
    if (so->ncounts > 1) {
        cJSON *x = jb_obj(b, o, "scale_out");
        cJSON *c = jb_arr(b, x, "replicas");
        for (size_t i = 0; c && i < so->ncounts; i++)
            jb_num(b, c, NULL, so->counts[i]);
        if (so->variant[0])
            jb_str(b, x, "variant", so->variant);
        else
            jb_null(b, x, "variant");
    } else {
        jb_null(b, o, "scale_out");
    }
    if (p->generators)
        jb_num(b, o, "generators", p->generators);
    else
        jb_null(b, o, "generators");
}

static cJSON *json_profile(struct jb *b, const struct profile *p)
{
    cJSON *o = jb_new(b), *th, *reqs;
    if (!o)
        return NULL;
    jb_str(b, o, "source", p->source ? p->source : "");
    if (p->rate > 0)
        jb_num(b, o, "rate", p->rate);
    else
        jb_num(b, o, "users", p->users);
    jb_num(b, o, "stages", (double)p->nstages);
    json_stage_list(b, o, p);
    jb_num(b, o, "duration_s", (double)p->duration_us / 1e6);
    jb_num(b, o, "warmup_s", (double)p->warmup_us / 1e6);
    jb_num(b, o, "timeout_s", (double)p->timeout_us / 1e6);
    jb_num(b, o, "per_user_rps", p->per_user_rps);
    if (p->target_users > 0)
        jb_num(b, o, "target_users", p->target_users);
    if (p->target_rps > 0)
        jb_num(b, o, "target_rps", p->target_rps);
    th = jb_obj(b, o, "thresholds");
    if (th) {
        jb_num(b, th, "healthy_p95_ms", (double)p->thresholds.healthy_p95_us / 1e3);
        jb_num(b, th, "healthy_errors", p->thresholds.healthy_errors);
        jb_num(b, th, "overloaded_p95_ms", (double)p->thresholds.overloaded_p95_us / 1e3);
        jb_num(b, th, "overloaded_errors", p->thresholds.overloaded_errors);
    }
    reqs = jb_arr(b, o, "requests");
    for (size_t i = 0; reqs && i < p->nrequests; i++)
        json_request(b, reqs, &p->requests[i]);
    json_profile_inputs(b, o, p);
    json_profile_operator(b, o, p);
    output_profile_availability_json(b, o, p);
    output_profile_nodes_json(b, o, p);
    return o;
}

/* Takes out of a variant's load fields the parts output_set_render left out for size. */
static void omit_load_parts(cJSON *o, unsigned omit)
{
    if (omit & OUTPUT_OMIT_JSON_BY_NAME)
        cJSON_DeleteItemFromObjectCaseSensitive(o, "by_name");
    if (omit & OUTPUT_OMIT_JSON_BY_STAGE)
        cJSON_DeleteItemFromObjectCaseSensitive(o, "by_stage");
    if (!(omit & OUTPUT_OMIT_JSON_HIST))
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(o, "latency_hist");
    cJSON *scope;
    cJSON_ArrayForEach(scope, cJSON_GetObjectItemCaseSensitive(o, "by_name"))
        cJSON_DeleteItemFromObjectCaseSensitive(scope, "latency_hist");
    cJSON_ArrayForEach(scope, cJSON_GetObjectItemCaseSensitive(o, "by_stage"))
        cJSON_DeleteItemFromObjectCaseSensitive(scope, "latency_hist");
}

/* The row's verdict and users when measured (with its scalar figures when no load result is at
 * hand), else a null verdict and the failure. */
static void json_verdict(struct jb *b, cJSON *o, const struct output_doc *d, size_t i,
                         const struct sweep_row *sr)
{
    const struct advisor_row *r = &d->rows[i];
    const struct advice *a = d->advice;

    if (r->measured) {
        jb_str(b, o, "verdict", verdict_name(a->rows[i].verdict));
        jb_num(b, o, "est_active_users", round(a->rows[i].est_users));
        if (!sr || !sr->have_load) {
            /* No load result at hand (e.g. rows given as figures): the scalar figures. */
            jb_num(b, o, "throughput_rps", r->throughput_rps);
            cJSON *lat = jb_obj(b, o, "latency_ms");
            if (lat) {
                jb_num(b, lat, "p50", (double)r->p50_us / 1e3);
                jb_num(b, lat, "p95", (double)r->p95_us / 1e3);
                jb_num(b, lat, "p99", (double)r->p99_us / 1e3);
            }
            jb_num(b, o, "error_rate", r->error_rate);
        }
    } else {
        jb_null(b, o, "verdict");
        cJSON *fl = jb_obj(b, o, "failure");
        if (fl) {
            jb_str(b, fl, "kind", sr ? platform_fail_name(sr->failure.kind) : "failed");
            jb_str(b, fl, "reason", r->note);
        }
    }
}

/* The row's marks by name ("contended", ...), [] when none. */
static void json_marks(struct jb *b, cJSON *o, unsigned flags)
{
    cJSON *marks = jb_arr(b, o, "marks");
    static const struct {
        unsigned flag;
        const char *name;
    } names[] = {{SWEEP_FLAG_CPU_EXCEEDS_HOST, "cpu_exceeds_host"},
                 {SWEEP_FLAG_UNENFORCED, "limits_not_enforced"},
                 {SWEEP_FLAG_CONTENDED, "contended"},
                 {SWEEP_FLAG_GEN_SATURATED, "load_generator_saturated"},
                 {SWEEP_FLAG_INTERRUPTED, "interrupted"}};
    for (size_t k = 0; marks && k < sizeof(names) / sizeof(names[0]); k++)
        if (flags & names[k].flag)
            jb_push_str(b, marks, names[k].name);
}

/* What the row used: the platform's usage figures where measured, CPU cores, peak memory and
 * the host's other load (null where unknown). */
static void json_usage(struct jb *b, cJSON *o, const struct advisor_row *r,
                       const struct sweep_row *sr)
{
    cJSON *u = jb_obj(b, o, "usage");
    if (u) {
        if (sr && sr->have_usage) {
            jb_num(b, u, "window_s", sr->usage.window_s);
            if (sr->usage.cpu_s >= 0)
                jb_num(b, u, "cpu_s", sr->usage.cpu_s);
            else
                jb_null(b, u, "cpu_s");
            jb_num(b, u, "restarts", sr->usage.restarts);
            jb_bool(b, u, "oom_killed", sr->usage.oom_killed);
            jb_bool(b, u, "peak_is_lifetime", sr->usage.peak_is_lifetime);
            if (sr->usage.note[0])
                jb_str(b, u, "note", sr->usage.note);
        }
        if (r->cpu_cores_used >= 0)
            jb_num(b, u, "cpu_cores", r->cpu_cores_used);
        else
            jb_null(b, u, "cpu_cores");
        if (r->peak_memory_bytes >= 0)
            jb_num(b, u, "peak_memory_bytes", (double)r->peak_memory_bytes);
        else
            jb_null(b, u, "peak_memory_bytes");
        if (r->host_other_cores >= 0)
            jb_num(b, u, "host_other_cores", r->host_other_cores);
        else
            jb_null(b, u, "host_other_cores");
    }
}

/* Row i of results.json's variants: the load run's own fields (report_json), then the variant,
 * its verdict (json_verdict), marks, usage, load generator, timing and capacity. */
static cJSON *json_variant(struct jb *b, const struct output_doc *d, size_t i)
{
    const struct advisor_row *r = &d->rows[i];
    const struct advice *a = d->advice;
    const struct sweep_row *sr = d->sweep && i < d->sweep->n ? &d->sweep->rows[i] : NULL;
    cJSON *o = NULL;
    char qb[QTY_LEN], st[320];

    /* The load run's own fields first, exactly as report_json names them. */
    if (sr && sr->have_load) {
        o = report_json(&sr->load);
        if (!o)
            jb_fail(b);
    } else {
        o = jb_new(b);
    }
    if (!o)
        return NULL;
    omit_load_parts(o, d->omit);
    cJSON_DeleteItemFromObject(o, "verdict");
    jb_str(b, o, "spec", r->variant.spec);
    jb_str(b, o, "label", r->variant.label);
    jb_num(b, o, "workers", r->variant.workers);
    jb_str(b, o, "cpu", qty_format_cpu(r->variant.cpu_millicores, qb));
    jb_num(b, o, "cpu_millicores", (double)r->variant.cpu_millicores);
    jb_str(b, o, "memory", qty_format_memory(r->variant.memory_bytes, qb));
    jb_num(b, o, "memory_bytes", (double)r->variant.memory_bytes);
    jb_str(b, o, "state", r->measured ? "measured" : "failed");
    if (r->applied_by[0])
        jb_str(b, o, "applied_by", r->applied_by);
    json_verdict(b, o, d, i, sr);
    jb_str(b, o, "state_text", output_state(d, i, st, sizeof(st)));
    jb_bool(b, o, "recommended", (int)i == a->recommended);
    jb_bool(b, o, "capacity", a->rows[i].capacity);
    json_marks(b, o, r->flags);
    json_usage(b, o, r, sr);
    cJSON *g = jb_obj(b, o, "load_generator");
    if (g) {
        if (r->gen_cores >= 0)
            jb_num(b, g, "cpu_cores", r->gen_cores);
        else
            jb_null(b, g, "cpu_cores");
        jb_bool(b, g, "saturated", (r->flags & SWEEP_FLAG_GEN_SATURATED) != 0);
    }
    if (sr) {
        cJSON *t = jb_obj(b, o, "timing");
        if (t) {
            jb_num(b, t, "ready_s", sr->ready_s);
            jb_num(b, t, "stop_s", sr->stop_s);
            jb_num(b, t, "wall_s", sr->wall_s);
            jb_num(b, t, "overhead_s", sr->overhead_s);
        }
    }
    output_capacity_add(b, o, &r->cap);
    output_stream_capacity_add(b, o, &r->scap);
    return o;
}

static void json_derivation(struct jb *b, cJSON *parent, const char *name, double value,
                            const struct rule_derivation *dv)
{
    cJSON *o = jb_obj(b, parent, name);
    if (!o)
        return;
    jb_num(b, o, "value", value);
    jb_str(b, o, "source", dv->fallback ? "fallback" : "measured");
    jb_num(b, o, "variants", dv->variants);
    jb_str(b, o, "from", dv->text);
}

/* recommendation.hpa ({min_replicas, max_replicas, applied_by, metric: "cpu",
 * target_cpu_utilization}, or with metric "pods" metric_name and target_average_value instead;
 * null without an HPA) and recommendation.planned_rps_per_pod (null without a capacity search).
 * via is output_autoscaler's answer. */
static void json_sizing(struct jb *b, cJSON *x, const struct sizing *s, enum output_autoscaler via)
{
    /* The sizing's per-pod plan counts streams in a stream sweep, req/s otherwise. */
    if (s->planned_rps_per_pod > 0 && !s->streams)
        jb_num(b, x, "planned_rps_per_pod", s->planned_rps_per_pod);
    else
        jb_null(b, x, "planned_rps_per_pod");
    if (s->streams && s->recommended >= 0) {
        jb_num(b, x, "planned_streams_per_pod", floor(s->planned_rps_per_pod));
        jb_num(b, x, "streams_per_pod", s->streams_per_pod);
        if (s->target_streams > 0)
            jb_num(b, x, "target_streams", s->target_streams);
    }
    if (!s->hpa.enabled) {
        jb_null(b, x, "hpa");
        return;
    }
    cJSON *h = jb_obj(b, x, "hpa");
    if (!h)
        return;
    jb_num(b, h, "min_replicas", s->hpa.min_replicas);
    jb_num(b, h, "max_replicas", s->hpa.max_replicas);
    /* The one file that carries it (output_autoscaler). */
    jb_str(b, h, "applied_by",
           via == OUTPUT_AUTOSCALER_VALUES ? "values.yaml"
           : output_keda_applies(s)        ? "hpa.yaml or keda.yaml"
                                           : "hpa.yaml");
    if (s->hpa.metric == SIZING_HPA_PODS) {
        jb_str(b, h, "metric", "pods");
        jb_str(b, h, "metric_name", s->hpa.metric_name);
        jb_num(b, h, "target_average_value", s->hpa.target_average_value);
    } else {
        jb_str(b, h, "metric", "cpu");
        jb_num(b, h, "target_cpu_utilization", s->hpa.target_cpu_utilization);
    }
}

/* recommendation.keda ({min_replicas, max_replicas, threshold, query, server_address}, or null
 * without a request-rate autoscaler): what keda.yaml holds. */
static void json_keda(struct jb *b, cJSON *x, const struct sizing *s, const char *deployment)
{
    char q[PROFILE_KEDA_TEXT_MAX + OUTPUT_HPA_NAME_MAX + 64];

    if (!output_keda_applies(s)) {
        jb_null(b, x, "keda");
        return;
    }
    cJSON *k = jb_obj(b, x, "keda");
    if (!k)
        return;
    output_keda_query(s, deployment ? deployment : OUTPUT_HPA_DEFAULT_NAME, q, sizeof(q));
    jb_num(b, k, "min_replicas", s->hpa.min_replicas);
    jb_num(b, k, "max_replicas", s->hpa.max_replicas);
    jb_num(b, k, "threshold", s->hpa.target_average_value);
    jb_str(b, k, "query", q);
    jb_str(b, k, "server_address", s->hpa.keda_server);
}

/* recommendation.replicas (null when the target is unreachable), replicas_linear beside it,
 * target_reachable (null without a target), where the count came from, and why not from the
 * scale-out's curve. One source: the sizing (advise/sizing.h). */
static void json_replicas(struct jb *b, cJSON *x, const struct advice *a)
{
    const struct sizing *s = &a->sizing;
    bool target = a->recommended >= 0 && a->by_target;

    if (target && s->unreachable)
        jb_null(b, x, "replicas");
    else
        jb_num(b, x, "replicas", a->replicas);
    jb_num(b, x, "replicas_linear",
           target && s->replicas_linear ? s->replicas_linear : a->replicas);
    if (target)
        jb_bool(b, x, "target_reachable", !s->unreachable);
    else
        jb_null(b, x, "target_reachable");
    jb_str(b, x, "replicas_from", s->curve_read ? "curve" : "linear");
    if (target && s->replicas_note[0])
        jb_str(b, x, "replicas_why", s->replicas_note);
    if (target && !s->curve_read && s->curve_skipped[0])
        jb_str(b, x, "scale_out_skipped", s->curve_skipped);
}

/* results.json's opening fields: the tool, the times, the command, the platform and its facts. */
static void json_header(struct jb *b, cJSON *root, const struct output_doc *d)
{
    char t[40];

    jb_str(b, root, "tool", "sizeup " SIZEUP_VERSION);
    jb_str(b, root, "started_at", output_fmt_time_iso(d->started, t));
    jb_str(b, root, "finished_at", output_fmt_time_iso(d->finished, t));
    jb_bool(b, root, "cancelled", d->cancelled);
    if (d->command)
        jb_str(b, root, "command", d->command);
    if (d->configs)
        jb_str(b, root, "configs", d->configs);
    if (d->workload.images)
        jb_str(b, root, "images", d->workload.images);
    if (d->platform)
        jb_str(b, root, "platform", d->platform);
    if (d->facts) {
        jb_str(b, root, "machine", d->facts->machine);
        jb_num(b, root, "host_cores", (double)d->facts->host_millicores / 1000.0);
        jb_bool(b, root, "limits_enforced", d->facts->limits_enforced);
        if (!d->facts->limits_enforced)
            jb_str(b, root, "limits_note", d->facts->limits_note);
        jb_bool(b, root, "load_shares_host", d->facts->load_shares_host);
    }
}

/* results.json's recommendation: the variant and why, the target, the replicas, the sizing, KEDA's
 * and availability's parts. */
static void json_recommendation(struct jb *b, cJSON *root, const struct output_doc *d)
{
    const struct advice *a = d->advice;
    cJSON *x;

    x = jb_obj(b, root, "recommendation");
    if (x) {
        if (a->recommended >= 0) {
            jb_num(b, x, "index", a->recommended);
            jb_str(b, x, "spec", d->rows[a->recommended].variant.spec);
            jb_str(b, x, "label", d->rows[a->recommended].variant.label);
        } else {
            jb_null(b, x, "index");
        }
        jb_str(b, x, "why", a->why);
        jb_bool(b, x, "by_target", a->by_target);
        if (a->target_rps > 0)
            jb_num(b, x, "target_rps", a->target_rps);
        json_replicas(b, x, a);
        json_sizing(b, x, &a->sizing, output_autoscaler(d));
        json_keda(b, x, &a->sizing, d->workload.deployment);
        output_availability_json(b, x, a);
    }
}

/* results.json's values (with a recommendation): workers, limits, requests and why. */
static void json_values(struct jb *b, cJSON *root, const struct advice *a)
{
    char qb[QTY_LEN];
    cJSON *x;

    if (a->recommended >= 0) {
        x = jb_obj(b, root, "values");
        if (x) {
            jb_num(b, x, "workers", a->workers);
            cJSON *l = jb_obj(b, x, "limits");
            if (l) {
                snprintf(qb, sizeof(qb), "%lldm", (long long)a->limit_cpu_m);
                jb_str(b, l, "cpu", qb);
                jb_str(b, l, "memory", qty_format_memory(a->limit_memory, qb));
            }
            cJSON *r = jb_obj(b, x, "requests");
            if (r) {
                snprintf(qb, sizeof(qb), "%lldm", (long long)a->request_cpu_m);
                jb_str(b, r, "cpu", qb);
                jb_str(b, r, "memory", qty_format_memory(a->request_memory, qb));
            }
            jb_str(b, x, "requests_note", a->requests_note);
        }
    }
}

/* results.json's rule: the expression, its fitted constants and their derivations. */
static void json_rule(struct jb *b, cJSON *root, const struct advice *a)
{
    cJSON *x;

    x = jb_obj(b, root, "rule");
    if (x) {
        jb_str(b, x, "expression", RULE_EXPRESSION);
        cJSON *c = jb_obj(b, x, "constants");
        if (c) {
            jb_num(b, c, "cores_per_worker", a->rule.cores_per_worker);
            jb_num(b, c, "memory_per_worker_mib", a->rule.memory_per_worker_mib);
            jb_num(b, c, "max_workers", a->rule.max_workers);
        }
        cJSON *dv = jb_obj(b, x, "derivation");
        if (dv) {
            json_derivation(b, dv, "cores_per_worker", a->rule.cores_per_worker,
                            &a->cores_per_worker);
            json_derivation(b, dv, "memory_per_worker_mib", a->rule.memory_per_worker_mib,
                            &a->memory_per_worker);
            json_derivation(b, dv, "max_workers", a->rule.max_workers, &a->max_workers);
        }
    }
}

cJSON *output_results_json(const struct output_doc *d)
{
    const struct advice *a = d->advice;
    struct jb jb = JB_INIT, *b = &jb;
    cJSON *root = jb_new(b), *arr;

    if (!root)
        return NULL;
    json_header(b, root, d);
    jb_put(b, root, "profile", json_profile(b, d->profile));
    arr = jb_arr(b, root, "omitted");
    for (unsigned bit = 1; arr && bit <= OUTPUT_OMIT_HTML; bit <<= 1)
        if (d->omit & bit)
            jb_push_str(b, arr, output_omit_id(bit));
    arr = jb_arr(b, root, "variants");
    for (size_t i = 0; arr && i < d->n; i++) {
        jb_put(b, arr, NULL, json_variant(b, d, i));
    }
    json_recommendation(b, root, d);
    json_values(b, root, a);
    json_rule(b, root, a);
    output_scale_out_json(b, root, d->scale_out_from ? d->scale_out_from : d->sweep, a);
    arr = jb_arr(b, root, "findings");
    for (size_t i = 0; arr && i < a->nfindings; i++)
        jb_push_str(b, arr, a->findings[i]);
    if (jb_done(b, &root, "results.json", NULL) != 0)
        return NULL;
    return root;
}

/* results.json as text: the object of output_results_json, printed, with a final newline. */
int output_results_json_print(FILE *f, const struct output_doc *d, char *err)
{
    cJSON *j = output_results_json(d);
    char *s = NULL;
    int rc = 0;

    if (!j)
        return err_set(err, -ENOMEM, "out of memory building results.json");
    s = cJSON_Print(j);
    if (!s) {
        rc = err_set(err, -ENOMEM, "out of memory printing results.json");
        goto out;
    }
    if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
        rc = err_set(err, -EIO, "write error");
out:
    free(s);
    cJSON_Delete(j);
    return rc;
}