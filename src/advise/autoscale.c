/* Step (6) of the answer's order (docs/sweep.md): the autoscaler for the recommended shape.
 * CPU that tracks load gets the autoscaling/v2 HPA on CPU utilization; CPU that does not (flat,
 * or an idle base too large for utilization to move with load) gets one on the request rate,
 * a Pods metric at the planned req/s per pod, with KEDA's ScaledObject beside it (keda.yaml).
 * Either way maxReplicas leaves room to scale, or there is no HPA and the note says why; and the
 * note states the scale-up lag a new pod adds against the profile's expected ramp. */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise/sizing.h"
#include "advise/sizing_int.h"
#include "core/text.h"

/* Does CPU grow with load? Fills h->cpu_bound and h->note. */
static void cpu_growth(const struct capacity_result *cap, struct sizing_hpa *h)
{
    double lowest = sizing__cpu_lowest_rps(cap);

    if (cap->cpu_cores < 0 || lowest < 0) {
        snprintf(h->note, sizeof(h->note),
                 "CPU was not measured at capacity, so whether it tracks load is unknown: no CPU "
                 "HPA");
        return;
    }
    double ref_rps = cap->rps / CAPACITY_CPU_GROWTH_LOAD;
    if (lowest > ref_rps)
        ref_rps = lowest;
    if (ref_rps * SIZING_CPU_GROWTH_MIN_SPAN > cap->rps * (1 + SIZING_EPS)) {
        snprintf(h->note, sizeof(h->note),
                 "CPU was measured only from %.0f req/s, above 1/%g of the capacity (%.0f req/s): "
                 "too close to it to tell whether CPU grows with load, so no CPU HPA",
                 lowest, SIZING_CPU_GROWTH_MIN_SPAN, cap->rps);
        return;
    }
    double ref_cpu = sizing_cpu_at(cap, ref_rps, NULL);
    double load_ratio = cap->rps / ref_rps;
    double want = pow(load_ratio, log(SIZING_CPU_GROWTH) / log(CAPACITY_CPU_GROWTH_LOAD));
    double got = ref_cpu > 0 ? cap->cpu_cores / ref_cpu : INFINITY;
    h->cpu_bound = got >= want;
    if (!h->cpu_bound)
        snprintf(h->note, sizeof(h->note),
                 "CPU does not grow with load: %.3f cores at %.0f req/s and %.3f at capacity "
                 "(%.0f req/s), %.2fx for %.1fx the load where load-driven CPU shows at least "
                 "%.2fx (%gx for %gx the load). The app's CPU does not follow its load, so a CPU "
                 "HPA would not either: no CPU HPA",
                 ref_cpu, ref_rps, cap->cpu_cores, cap->rps, got, load_ratio, want,
                 SIZING_CPU_GROWTH, CAPACITY_CPU_GROWTH_LOAD);
    else
        snprintf(h->note, sizeof(h->note),
                 "CPU grows with load: %.3f cores at %.0f req/s and %.3f at capacity (%.0f "
                 "req/s), %.2fx for %.1fx the load (load-driven CPU shows at least %.2fx)",
                 ref_cpu, ref_rps, cap->cpu_cores, cap->rps, got, load_ratio, want);
}

/* maxReplicas with room: at least minReplicas + 1, and enough pods at capacity (not at the
 * planned load) for the target x (1 + growth); from the curve where it was measured, never past
 * where it ends. Returns 0 when the numbers give no room, with the reason appended to the note. */
static unsigned room(const struct sizing_opts *o, const struct sizing *s,
                     const struct sizing_variant *v, struct sizing_hpa *h)
{
    double need = s->target_rps * (1 + o->planning.growth);
    unsigned min = s->replicas, max;
    char words[SIZING_TEXT_LEN];

    if (!s->from_curve) {
        max = sizing__ceil_count(need / v->planned_rps);
        unsigned at_cap = sizing__ceil_count(need / v->capacity_low);
        if (max < at_cap)
            max = at_cap;
        return max < min + 1 ? min + 1 : max;
    }
    max = sizing__curve_hpa_max(o, s);
    if (max < min + 1)
        max = min + 1;
    if (max > s->curve.cap) {
        text_catf(h->note, sizeof(h->note),
                  "; the target needs %u replicas and the scale-out's curve ends at %u (%s), so "
                  "an HPA would have no room to scale up: no HPA, run the %u replicas",
                  min, s->curve.cap, sizing__cap_words(&s->curve, words, sizeof(words)), min);
        return 0;
    }
    double at = sizing__curve_rps(o, s, max);
    if (at < need * (1 - SIZING_EPS)) {
        text_catf(h->note, sizeof(h->note),
                  "; at %u replicas, where the scale-out's curve ends, the pods hold %.0f req/s "
                  "at capacity, short of the target + %.0f%% growth (%.0f req/s), so an HPA "
                  "would have no room for the growth: no HPA, run the %u replicas",
                  max, at, o->planning.growth * 100, need, min);
        return 0;
    }
    return max;
}

/* The lag a new pod adds, and whether the growth room covers the ramp over it. */
static void lag(const struct sizing_row *row, const struct sizing_opts *o, struct sizing_hpa *h)
{
    double window =
        h->metric == SIZING_HPA_CPU ? SIZING_HPA_CPU_WINDOW_S : SIZING_HPA_RATE_WINDOW_S;
    const char *what =
        h->metric == SIZING_HPA_CPU ? "metrics-server's resolution" : "the request rate's window";

    h->lag_s = -1;
    if (!(row->ready_s > 0)) {
        snprintf(h->lag_note, sizeof(h->lag_note),
                 "a new pod adds %.0f s (%s) + %.0f s (the HPA's sync period) + its time to "
                 "ready, which was not measured",
                 window, what, SIZING_HPA_SYNC_S);
        return;
    }
    h->lag_s = window + SIZING_HPA_SYNC_S + row->ready_s;
    snprintf(h->lag_note, sizeof(h->lag_note),
             "a new pod takes %.0f s (%s) + %.0f s (the HPA's sync period) + %.1f s (its "
             "measured time to ready) = %.1f s to serve",
             window, what, SIZING_HPA_SYNC_S, row->ready_s, h->lag_s);
    if (!o->planning.ramp_given) {
        text_catf(h->lag_note, sizeof(h->lag_note),
                  "; the profile names no planning.ramp, so whether the %.0f%% growth room "
                  "covers the load's growth over that lag is not judged",
                  o->planning.growth * 100);
        return;
    }
    double grown = o->planning.ramp * h->lag_s / 60.0;
    bool covered = grown <= o->planning.growth * (1 + SIZING_EPS);
    text_catf(h->lag_note, sizeof(h->lag_note),
              "; at the planned ramp of %.0f%% per minute the load grows %.1f%% over it, %s the "
              "%.0f%% growth room%s",
              o->planning.ramp * 100, grown * 100, covered ? "within" : "beyond",
              o->planning.growth * 100,
              covered ? ""
                      : ": pods fall behind a ramp that steep (raise planning.growth, or "
                        "start more replicas before it)");
}

static void pods_metric(const struct sizing_opts *o, const struct sizing *s,
                        const struct sizing_variant *v, struct sizing_hpa *h)
{
    const struct profile_autoscaling *as = o->autoscaling;

    h->metric = SIZING_HPA_PODS;
    snprintf(h->metric_name, sizeof(h->metric_name), "%s",
             as && as->metric[0] ? as->metric : PROFILE_AUTOSCALING_METRIC_DEFAULT);
    snprintf(h->keda_server, sizeof(h->keda_server), "%s",
             as && as->server_address[0] ? as->server_address : PROFILE_AUTOSCALING_SERVER_DEFAULT);
    snprintf(h->keda_query, sizeof(h->keda_query), "%s", as ? as->query : "");
    /* To 0.001 below the plan: the target is never above the load a pod was planned for. */
    h->target_average_value = floor(v->planned_rps * 1000 + SIZING_EPS) / 1000;
    text_catf(h->note, sizeof(h->note),
              ". The HPA scales on the request rate instead: the Pods metric %s at %.3f req/s "
              "per pod (the planned load), from %u replicas (the target of %.0f req/s) to %u "
              "(the target + %.0f%% growth)",
              h->metric_name, h->target_average_value, h->min_replicas, s->target_rps,
              h->max_replicas, o->planning.growth * 100);
}

static void cpu_metric(const struct sizing_row *row, const struct sizing_opts *o,
                       const struct sizing *s, const struct sizing_variant *v, struct sizing_hpa *h)
{
    char words[SIZING_TEXT_LEN];
    bool ex;

    h->metric = SIZING_HPA_CPU;
    h->cpu_at_planned = sizing_cpu_at(row->cap, v->planned_rps, &ex);
    double util = 100.0 * h->cpu_at_planned / ((double)s->request_cpu_m / 1000.0);
    long u = lround(util);
    h->target_cpu_utilization = (unsigned)(u < SIZING_HPA_MIN_UTIL   ? SIZING_HPA_MIN_UTIL
                                           : u > SIZING_HPA_MAX_UTIL ? SIZING_HPA_MAX_UTIL
                                                                     : u);
    text_catf(
        h->note, sizeof(h->note),
        ". The HPA targets %u%% CPU: at the planned %.0f req/s per pod a pod used %.3f cores%s "
        "of its %.3f-core request; from %u replicas (the target of %.0f req/s) to %u (the "
        "target + %.0f%% growth",
        h->target_cpu_utilization, v->planned_rps, h->cpu_at_planned,
        ex ? " (extrapolated proportionally below the lowest measured step)" : "",
        (double)s->request_cpu_m / 1000.0, h->min_replicas, s->target_rps, h->max_replicas,
        o->planning.growth * 100);
    if (s->from_curve)
        text_catf(h->note, sizeof(h->note),
                  ", read from the scale-out's curve and capped at %u, where it ends: %s)",
                  s->curve.cap, sizing__cap_words(&s->curve, words, sizeof(words)));
    else
        text_catf(h->note, sizeof(h->note), ")");
    if (lround(util) != (long)h->target_cpu_utilization)
        text_catf(h->note, sizeof(h->note), " (%.0f%% computed, kept within %d-%d%%)", util,
                  SIZING_HPA_MIN_UTIL, SIZING_HPA_MAX_UTIL);
}

unsigned sizing__hpa_max(const struct sizing_opts *o, const struct sizing *s)
{
    struct sizing_hpa scratch = {0};

    if (s->recommended < 0 || s->streams || !s->by_target || s->unreachable)
        return 0;
    return room(o, s, &s->rows[s->recommended], &scratch);
}

void sizing__autoscale(const struct sizing_row *rows, const struct sizing_opts *o, struct sizing *s)
{
    struct sizing_hpa *h = &s->hpa;

    h->cpu_at_planned = -1;
    h->lag_s = -1;
    if (s->recommended < 0)
        return;
    if (s->streams) {
        /* A CPU HPA needs CPU against load, and a stream search measures CPU against open
         * streams, whose count an HPA cannot move: each pod keeps the streams it accepted. */
        snprintf(h->note, sizeof(h->note),
                 "pods are sized by open streams, which stay on the pod that accepted them "
                 "while new pods start empty, so a CPU HPA would not spread them: no HPA; keep "
                 "the replica count, or scale on open streams per pod");
        return;
    }
    const struct sizing_row *row = &rows[s->recommended];
    const struct sizing_variant *v = &s->rows[s->recommended];
    cpu_growth(row->cap, h);
    if (!s->by_target) {
        text_catf(h->note, sizeof(h->note),
                  "; no target load was given, so no replica bounds and no HPA");
        if (h->cpu_bound) {
            h->cpu_at_planned = sizing_cpu_at(row->cap, v->planned_rps, NULL);
            text_catf(h->note, sizeof(h->note),
                      " (at the planned %.0f req/s a pod used %.3f cores, %.0f%% of its CPU "
                      "request)",
                      v->planned_rps, h->cpu_at_planned,
                      100.0 * h->cpu_at_planned / ((double)s->request_cpu_m / 1000.0));
        }
        return;
    }
    if (s->unreachable) {
        text_catf(h->note, sizeof(h->note),
                  "; the target is not reachable with this shape (%s), so no replica bounds and "
                  "no HPA",
                  s->from_curve || s->curve_read ? "the scale-out's curve" : "with availability");
        return;
    }
    unsigned max = room(o, s, v, h);
    if (max == 0)
        return;
    h->enabled = true;
    h->min_replicas = s->replicas;
    h->max_replicas = max;
    if (h->cpu_bound)
        cpu_metric(row, o, s, v, h);
    else
        pods_metric(o, s, v, h);
    lag(row, o, h);
    availability_hpa(o->availability, s->from_curve ? s->curve.cap : 0, &s->availability, h);
}
