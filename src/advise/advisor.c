/* The advisor's entry points: verdicts, the recommendation and the values, then the rule's fit
 * (advisor_rule.c) and the findings (advisor_findings.c). */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor_int.h"
#include "sweep/search.h"
#include "advise/sizing.h"

enum verdict advisor_classify(const struct advisor_row *r, const struct profile_thresholds *t)
{
    if (r->requests == 0 || (int64_t)r->p95_us > t->overloaded_p95_us ||
        r->error_rate > t->overloaded_errors)
        return VERDICT_OVERLOADED;
    if ((int64_t)r->p95_us < t->healthy_p95_us && r->error_rate < t->healthy_errors)
        return VERDICT_HEALTHY;
    return VERDICT_STRESSED;
}

/* ---- recommendation ------------------------------------------------------------------------ */

static int cheaper(const struct advisor_row *x, const struct advisor_row *y)
{
    /* Fewest cores, then least memory, then the higher throughput. */
    if (x->variant.cpu_millicores != y->variant.cpu_millicores)
        return x->variant.cpu_millicores < y->variant.cpu_millicores;
    if (x->variant.memory_bytes != y->variant.memory_bytes)
        return x->variant.memory_bytes < y->variant.memory_bytes;
    return x->throughput_rps > y->throughput_rps;
}

/* Pods of throughput rps that carry target (rps > 0); saturates instead of overflowing, as a
 * hand-edited resume state can hold a tiny throughput. */
static unsigned replicas_for(double target, double rps)
{
    double r = ceil(target / rps);
    return r >= (double)UINT_MAX ? UINT_MAX : (unsigned)r;
}

static void recommend(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                      struct advice *a)
{
    int best = -1;

    a->recommended = -1;
    a->replicas = 1;
    if (o->target_rps > 0) {
        a->target_rps = o->target_rps;
        /* First choice: the cheapest HEALTHY variant that alone carried the target. */
        for (size_t i = 0; i < n; i++) {
            if (!usable(rows, a, i) || a->rows[i].verdict != VERDICT_HEALTHY ||
                rows[i].throughput_rps < o->target_rps)
                continue;
            if (best < 0 || cheaper(&rows[i], &rows[best]))
                best = (int)i;
        }
        if (best >= 0) {
            a->by_target = true;
            a->recommended = best;
            snprintf(a->why, sizeof(a->why),
                     "the cheapest variant (fewest cores, then least memory) that stayed "
                     "HEALTHY while serving the target of %.0f req/s: %.0f req/s measured",
                     o->target_rps, rows[best].throughput_rps);
            return;
        }
        /* Else: the HEALTHY size whose replicas need the fewest cores in total. */
        double best_total = 0;
        for (size_t i = 0; i < n; i++) {
            if (!usable(rows, a, i) || a->rows[i].verdict != VERDICT_HEALTHY ||
                rows[i].throughput_rps <= 0)
                continue;
            double reps = ceil(o->target_rps / rows[i].throughput_rps);
            double total = reps * cores_of(&rows[i]);
            if (best < 0 || total < best_total - 1e-9 ||
                (fabs(total - best_total) < 1e-9 && cheaper(&rows[i], &rows[best]))) {
                best = (int)i;
                best_total = total;
            }
        }
        if (best >= 0) {
            a->by_target = true;
            a->recommended = best;
            a->replicas = replicas_for(o->target_rps, rows[best].throughput_rps);
            snprintf(a->why, sizeof(a->why),
                     "no single variant served the target of %.0f req/s HEALTHY; %u replicas "
                     "of this size (%.0f req/s each, HEALTHY) need the fewest cores in total "
                     "(%.1f)",
                     o->target_rps, a->replicas, rows[best].throughput_rps, best_total);
            return;
        }
        /* No HEALTHY variant at all: fall through to the default rule, and say so. */
    }
    for (size_t i = 0; i < n; i++) {
        /* A row that served nothing is no recommendation, whatever its latency. */
        if (!usable(rows, a, i) || a->rows[i].verdict == VERDICT_OVERLOADED ||
            !(rows[i].throughput_rps > 0))
            continue;
        if (best < 0 || rows[i].throughput_rps > rows[best].throughput_rps)
            best = (int)i;
    }
    a->recommended = best;
    if (best < 0) {
        snprintf(a->why, sizeof(a->why),
                 "no variant qualifies: every measured variant was OVERLOADED, FAILED or "
                 "marked as not showing the app's capacity");
        return;
    }
    snprintf(a->why, sizeof(a->why), "the highest-throughput variant not OVERLOADED%s",
             o->target_rps > 0 ? " (no variant that shows the app's capacity was HEALTHY, so the "
                                 "target is not met)"
                               : "");
    if (o->target_rps > 0)
        a->replicas = replicas_for(o->target_rps, rows[best].throughput_rps);
}

/* ---- values -------------------------------------------------------------------------------- */

static void values(const struct advisor_row *rows, struct advice *a)
{
    char b1[QTY_LEN], b2[QTY_LEN];

    if (a->recommended < 0)
        return;
    const struct advisor_row *r = &rows[a->recommended];
    a->workers = r->variant.workers;
    a->limit_cpu_m = r->variant.cpu_millicores;
    a->limit_memory = r->variant.memory_bytes;

    /* Measured cores and peak memory plus headroom, within the limits. */
    struct sizing_requests req;
    sizing_requests(r->cpu_cores_used, 1.0 + ADVISOR_HEADROOM, r->peak_memory_bytes, a->limit_cpu_m,
                    a->limit_memory, &req);
    a->request_cpu_m = req.cpu_m;
    a->request_memory = req.memory;
    a->cpu_request_measured = req.cpu_measured;
    a->memory_request_measured = req.memory_measured;
    snprintf(a->requests_note, sizeof(a->requests_note),
             "cpu %s: ", qty_format_cpu(a->request_cpu_m, b1));
    if (a->cpu_request_measured)
        text_catf(a->requests_note, sizeof(a->requests_note),
                  "measured mean CPU during the measured window + %.0f%% headroom",
                  PCT(ADVISOR_HEADROOM));
    else
        text_catf(a->requests_note, sizeof(a->requests_note),
                  "%.0f%% of the limit (CPU use was not measured)", PCT(ADVISOR_REQ_CPU_FRACTION));
    text_catf(a->requests_note, sizeof(a->requests_note),
              "; memory %s: ", mem_txt(a->request_memory, b2));
    if (a->memory_request_measured)
        text_catf(a->requests_note, sizeof(a->requests_note),
                  "measured peak memory + %.0f%% headroom", PCT(ADVISOR_HEADROOM));
    else
        text_catf(a->requests_note, sizeof(a->requests_note),
                  "%.0f%% of the limit (peak memory was not measured)",
                  PCT(ADVISOR_REQ_MEM_FRACTION));
}

/* A fixed-load sweep measures each variant at one load, not its capacity: the sizing answer is the
 * target's replicas from the rule above, and no HPA (no capacity interval, no CPU against load). */
static void fixed_sizing(const struct advisor_opts *o, struct advice *a)
{
    struct sizing *s = &a->sizing;

    s->n = a->n;
    s->recommended = a->recommended;
    s->target_rps = o->target_rps;
    s->target_users = o->target_users;
    s->by_target = o->target_rps > 0;
    s->replicas = a->replicas;
    s->replicas_linear = a->replicas;
    if (s->by_target)
        snprintf(s->curve_skipped, sizeof(s->curve_skipped),
                 "a fixed-load sweep measures no capacity per pod, so no scale-out curve");
    s->limit_cpu_m = a->limit_cpu_m;
    s->limit_memory = a->limit_memory;
    s->request_cpu_m = a->request_cpu_m;
    s->request_memory = a->request_memory;
    s->hpa.cpu_at_planned = -1;
    snprintf(s->hpa.note, sizeof(s->hpa.note),
             "a fixed-load sweep measures no capacity per pod, so no HPA is derived (the capacity "
             "search, the default, derives one)");
}

/* A capacity search ran when any row carries one (fixed mode searches none). */
static bool capacity_mode(const struct advisor_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].cap.searched || rows[i].scap.searched)
            return true;
    return false;
}

/* A profile with streams searches stream capacity instead of request capacity. */
static bool stream_mode(const struct advisor_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].scap.searched)
            return true;
    return false;
}

/* Capacity mode: the recommendation, the replicas and the requests are the sizing answer's
 * (sizing.c): the cheapest total for the target at each pod's planned load, or the most capacity
 * per unit of cost. Returns 0 or sizing_run's error (bad cost or planning options). */
/* Capacity mode: whether a row's repeats at capacity, merged (its latency and error columns),
 * met the SLO. A row whose merged repeats missed it is never HEALTHY and never the `*`, even
 * when most repeats passed one by one. True where there is nothing to judge (no repeats, no SLO).
 */
static bool repeats_met_slo(const struct advisor_row *r, const struct advisor_opts *o)
{
    if (!r->measured || !r->cap.searched || !r->cap.merged.have || o->slo.p95_us <= 0)
        return true;
    return search_meets_slo(r->p95_us, r->p99_us, r->error_rate, &o->slo, NULL);
}

static int recommend_capacity(const struct advisor_row *rows, size_t n,
                              const struct advisor_opts *o, struct advice *a, char *err)
{
    struct sizing_row sr[VARIANT_MAX];
    struct sizing_opts so = {0};
    struct sizing *s = &a->sizing;
    int rc;

    /* Usable apart from the capacity's own validity, which the sizing judges (a capacity cut
     * short is never a candidate, but the sizing says when it would have won). */
    for (size_t i = 0; i < n; i++)
        sr[i] =
            (struct sizing_row){&rows[i].variant, &rows[i].cap, &rows[i].scap,
                                rows[i].measured && !(rows[i].flags & SWEEP_FLAG_NOT_CAPACITY) &&
                                    repeats_met_slo(&rows[i], o),
                                rows[i].ready_s};
    so.streams = stream_mode(rows, n);
    so.target_streams = o->target_streams;
    /* The target as the user gave it: users keep their unit, so the sentences can say so. */
    so.target_users = o->target_users;
    so.target_rps = o->target_users > 0 ? 0 : o->target_rps;
    so.per_user_rps = o->per_user_rps;
    so.cost = o->cost;
    so.nodes = o->nodes;
    so.nnodes = o->nnodes;
    so.planning = o->planning;
    so.scale_out = o->scale_out;
    so.availability = o->availability;
    so.autoscaling = o->autoscaling;
    rc = sizing_run(sr, n, &so, s, err);
    if (rc)
        return rc;
    a->recommended = s->recommended;
    a->by_target = s->by_target;
    a->target_rps = s->target_rps;
    a->replicas = s->replicas;
    snprintf(a->why, sizeof(a->why), "%s", s->why);
    if (a->recommended < 0)
        return 0;
    a->workers = rows[a->recommended].variant.workers;
    a->limit_cpu_m = s->limit_cpu_m;
    a->limit_memory = s->limit_memory;
    a->request_cpu_m = s->request_cpu_m;
    a->request_memory = s->request_memory;
    a->cpu_request_measured = s->cpu_request_measured;
    a->memory_request_measured = s->memory_request_measured;
    snprintf(a->requests_note, sizeof(a->requests_note), "%s", s->requests_note);
    return 0;
}

/* The sizing answer's own sentences: what replicas assume, and why there is or is not an HPA. */
static void sizing_findings(struct advice *a)
{
    const struct sizing *s = &a->sizing;

    if (s->recommended < 0)
        return;
    if (s->assumption[0])
        advisor__finding(a, "%s", s->assumption);
    if (s->curve_read || s->unreachable)
        advisor__finding(a, "Replicas from the scale-out: %s.", s->replicas_note);
    else if (s->by_target && s->curve_skipped[0])
        advisor__finding(a, "The replica count assumes linear scale-out: %s.", s->curve_skipped);
    if (s->dearer[0])
        advisor__finding(a, "%s.", s->dearer);
    if (s->memory_note[0])
        advisor__finding(a, "Memory per pod from the measured memory per stream: %s.",
                         s->memory_note);
    if (s->hpa.note[0])
        advisor__finding(a, "Autoscaling: %s.", s->hpa.note);
    if (s->hpa.enabled && s->hpa.metric == SIZING_HPA_PODS)
        advisor__finding(a,
                         "Apply one request-rate autoscaler, never both (KEDA makes its own "
                         "HPA): hpa.yaml needs a metrics adapter (such as prometheus-adapter) "
                         "serving the Pods metric %s through the custom metrics API; keda.yaml "
                         "needs KEDA installed and reads the rate from Prometheus at %s. "
                         "values.yaml sets autoscaling.enabled: false: charts made by `helm "
                         "create` template a CPU and memory HPA only.",
                         s->hpa.metric_name, s->hpa.keda_server);
    if (s->hpa.enabled && s->hpa.lag_note[0])
        advisor__finding(a, "Scale-up lag: %s.", s->hpa.lag_note);
}

/* How the recommended variant came back from its overloads (capacity.h), when it took a while
 * or did not within search.settle: an app slow to recover is one an autoscaler must never let
 * overload, and the scale-up lag says how long an overload lasts before new pods serve. */
static void recovery_finding(const struct advisor_row *rows, struct advice *a)
{
    const struct capacity_recovery *rec = &rows[a->recommended].cap.recovery;
    const struct sizing_hpa *h = &a->sizing.hpa;
    const char *spec = rows[a->recommended].variant.spec;
    char lag[160] = "";

    if (!rec->ran_out && !(rec->settles && rec->longest_s >= RECOVERY_NOTABLE_S))
        return;
    if (h->enabled && h->lag_s >= 0)
        snprintf(lag, sizeof(lag), ", while the autoscaler's scale-up lag is about %.0f s",
                 h->lag_s);
    if (rec->ran_out)
        advisor__finding(a,
                         "Recovery: %s did not serve load within the SLO again within "
                         "search.settle (%.0f s) after %u of its %u overloads%s. Its capacity "
                         "was measured next to an overload it had not recovered from, and an "
                         "overload costs it longer than that: never let it overload (keep the "
                         "planning buffer), and raise search.settle to measure the recovery.",
                         spec, rec->bound_s, rec->ran_out, rec->settles, lag);
    else
        advisor__finding(a,
                         "Recovery: after an overload %s needed %.0f s of load before it served "
                         "%s within the SLO again%s. An overload costs it that long on top of "
                         "the overload itself: never let it overload (keep the planning buffer; "
                         "an autoscaler that reacts late does not prevent one).",
                         spec, rec->longest_s,
                         rec->at_rate ? "a share of the last rate that passed" : "one user", lag);
}

int advisor_run(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                struct advice *out, char *err)
{
    bool capacity = capacity_mode(rows, n);
    int rc;

    memset(out, 0, sizeof(*out));
    out->recommended = -1;
    out->sizing.cut_short = -1;
    if (n > VARIANT_MAX)
        return err_set(err, -EINVAL, "more than %d variants", VARIANT_MAX);
    if (!(o->per_user_rps > 0))
        return err_set(err, -EINVAL, "per_user_rps must be above 0");
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        out->rows[i].verdict =
            rows[i].measured ? advisor_classify(&rows[i], &o->thresholds) : VERDICT_OVERLOADED;
        /* Users from what the variant sustains within the SLO where that was searched, else
         * from what it served at the profile's load. */
        double rps = rows[i].cap.searched ? rows[i].cap.rps : rows[i].throughput_rps;
        out->rows[i].est_users = rows[i].measured ? rps / o->per_user_rps : 0;
        /* A searched capacity the sweep could not measure properly (noisy, budget, contended,
         * none passed) is shown flagged but votes in no finding and no rule. */
        out->rows[i].capacity = rows[i].measured && !(rows[i].flags & SWEEP_FLAG_NOT_CAPACITY) &&
                                (!rows[i].cap.searched || rows[i].cap.valid);
        if (out->rows[i].verdict == VERDICT_HEALTHY && !repeats_met_slo(&rows[i], o))
            out->rows[i].verdict = VERDICT_STRESSED;
    }
    if (capacity) {
        rc = recommend_capacity(rows, n, o, out, err);
        if (rc)
            return rc;
    } else {
        recommend(rows, n, o, out);
        values(rows, out);
        fixed_sizing(o, out);
        /* Step (5) of a fixed-load sweep: its count is the rule's, made outside the sizing's
         * steps, so the plan's count replaces it with the findings below. */
        availability_step(o->availability, out->recommended, out->by_target, out->replicas, 0,
                          &out->sizing.availability);
    }
    rule_default(&out->rule);
    advisor__fit_rule(rows, n, out);
    advisor__find(rows, n, o, out);
    if (capacity)
        sizing_findings(out);
    if (capacity && out->recommended >= 0)
        recovery_finding(rows, out);
    if (stream_mode(rows, n))
        advisor__find_streams(rows, n, o, out);
    availability_findings(o->availability, &out->sizing.availability, !capacity, out);
    return 0;
}
