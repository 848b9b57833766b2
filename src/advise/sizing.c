/* The sizing answer (sizing.h). The steps mirror what a person would do with the capacity table:
 * plan each pod below its measured capacity, count the pods the target needs, price them, pick
 * the cheapest, then derive the pod's requests and the HPA from the same measurements. */

#include "advise/sizing.h"
#include "advise/sizing_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "core/text.h"
#include "core/fmt.h"
#include "core/err.h"
#include "advise/advisor.h"

/* What capacities, plans and targets count: "req/s" or "streams". */
static const char *unit(const struct sizing *s)
{
    return s->streams ? "streams" : "req/s";
}

/* The target in the unit the pods are planned in (req/s, users converted; or streams). */
static double target_of(const struct sizing *s)
{
    return s->streams ? s->target_streams : s->target_rps;
}

/* ---- options ------------------------------------------------------------------------------- */

static int check_opts(const struct sizing_opts *o, char *err)
{
    if (o->target_rps < 0 || o->target_users < 0 || !isfinite(o->target_rps) ||
        !isfinite(o->target_users))
        return err_set(err, -EINVAL, "the target load must be a positive number");
    if (o->target_streams < 0 || !isfinite(o->target_streams))
        return err_set(err, -EINVAL, "the target stream count must be a positive number");
    if (o->target_streams > 0 && !o->streams)
        return err_set(err, -EINVAL,
                       "a target of %g streams needs a stream-capacity sweep (a profile with "
                       "streams:); give the target in req/s or users",
                       o->target_streams);
    if (o->streams && (o->target_rps > 0 || o->target_users > 0))
        return err_set(err, -EINVAL,
                       "a stream-capacity sweep sizes pods by open streams: give the target in "
                       "streams (target.streams), not in req/s or users");
    if (o->target_rps > 0 && o->target_users > 0)
        return err_set(err, -EINVAL,
                       "the target load is given both in req/s (%g) and in users (%g): give one",
                       o->target_rps, o->target_users);
    if (!(o->per_user_rps > 0))
        return err_set(err, -EINVAL, "per_user_rps must be above 0");
    if (!(o->cost.cpu >= 0) || !(o->cost.memory_gib >= 0) ||
        !(o->cost.cpu + o->cost.memory_gib > 0))
        return err_set(err, -EINVAL,
                       "cost weights must be 0 or more and not both 0 (cpu %g, memory_gib %g)",
                       o->cost.cpu, o->cost.memory_gib);
    if (!(o->planning.buffer >= 0 && o->planning.buffer < 1))
        return err_set(err, -EINVAL, "planning buffer %g is outside [0, 1)", o->planning.buffer);
    if (!(o->planning.growth >= 0) || !isfinite(o->planning.growth))
        return err_set(err, -EINVAL, "planning growth %g is below 0", o->planning.growth);
    return 0;
}

/* ---- per variant --------------------------------------------------------------------------- */

double sizing_stream_capacity_low(const struct stream_capacity *scap)
{
    return scap && scap->searched ? (double)scap->streams : 0;
}

/* A capacity whose only invalidating mark is CAPACITY_FLAG_REPEATS_CUT: a figure, but from
 * fewer repeats than asked. */
static bool cut_short_only(const struct capacity_result *cap)
{
    const unsigned allowed = CAPACITY_FLAG_TOO_FEW_REPEATS | CAPACITY_FLAG_REPEATS_CUT;
    return (cap->flags & CAPACITY_FLAG_REPEATS_CUT) && !(cap->flags & ~allowed) && cap->rps > 0;
}

/* Each row's capacity, cost and replicas; with_cut_short counts a capacity cut short as valid
 * (cut_short_winner). */
static void size_rows(const struct sizing_row *rows, size_t n, const struct sizing_opts *o,
                      bool with_cut_short, struct sizing *s)
{
    for (size_t i = 0; i < n; i++) {
        struct sizing_variant *v = &s->rows[i];
        const struct capacity_result *cap = rows[i].cap;
        const struct stream_capacity *scap = rows[i].scap;
        bool valid;

        v->pod_cost = variant_cores(rows[i].variant) * o->cost.cpu +
                      (double)rows[i].variant->memory_bytes / (double)FMT_GIB * o->cost.memory_gib;
        if (s->streams) {
            if (!scap || !scap->searched)
                continue;
            v->capacity_low = sizing_stream_capacity_low(scap);
            valid = scap->valid;
        } else {
            if (!cap || !cap->searched)
                continue;
            v->capacity_low = capacity_low(cap);
            valid = cap->valid || (with_cut_short && cut_short_only(cap));
        }
        v->planned_rps = v->capacity_low * s->planned_fraction;
        v->rps_per_cost = v->pod_cost > 0 ? v->planned_rps / v->pod_cost : 0;
        v->candidate = rows[i].usable && valid && v->planned_rps > 0 && v->pod_cost > 0;
        if (target_of(s) > 0 && v->planned_rps > 0) {
            v->replicas = sizing__ceil_count(target_of(s) / v->planned_rps);
            v->total_cost = v->replicas * v->pod_cost;
        }
    }
}

/* ---- the recommendation -------------------------------------------------------------------- */

/* Without a target: the most planned capacity per unit of cost; then the larger pod. */
static bool better_per_cost(const struct sizing_variant *x, const struct sizing_variant *y)
{
    if (!sizing__same(x->rps_per_cost, y->rps_per_cost))
        return x->rps_per_cost > y->rps_per_cost;
    return x->planned_rps > y->planned_rps && !sizing__same(x->planned_rps, y->planned_rps);
}

static void plan_text(const struct sizing_opts *o, const struct sizing *s,
                      const struct sizing_variant *v, char *buf, size_t len)
{
    text_catf(buf, len,
              "each pod is planned at %.0f %s: %.0f%% of %s (%.0f %s), keeping %.0f%% in reserve "
              "and room for %.0f%% growth",
              v->planned_rps, unit(s), s->planned_fraction * 100,
              s->streams ? "its stream capacity" : "the capacity interval's lower bound",
              v->capacity_low, unit(s), o->planning.buffer * 100, o->planning.growth * 100);
}

/* Step (2) again with the capacities cut short counted as valid, on a copy: the row it would
 * have recommended when that is one of them and not s's recommendation, else -1 (also when the
 * copy cannot be allocated: then nothing is said of it). */
static int cut_short_winner(const struct sizing_row *rows, const struct sizing_opts *o,
                            const struct sizing *s)
{
    bool any = false;
    int best = -1, second;

    for (size_t i = 0; !s->streams && i < s->n; i++)
        any = any || (rows[i].cap && rows[i].cap->searched && cut_short_only(rows[i].cap));
    if (!any)
        return -1;
    struct sizing *t = malloc(sizeof(*t));
    if (!t)
        return -1;
    memcpy(t, s, sizeof(*t));
    memset(t->rows, 0, sizeof(t->rows));
    size_rows(rows, s->n, o, true, t);
    sizing__pack_rows(rows, o, t);
    if (target_of(t) > 0)
        sizing__rank_target(t, &best, &second);
    else
        sizing__rank(t, better_per_cost, &best, &second);
    free(t);
    return best >= 0 && best != s->recommended && cut_short_only(rows[best].cap) ? best : -1;
}

static void recommend(const struct sizing_row *rows, const struct sizing_opts *o, struct sizing *s)
{
    char target[SIZING_TEXT_LEN] = ""; /* as long as the sentence: a cut clause cuts it */
    int best, second;

    s->replicas = 1;
    if (target_of(s) > 0) {
        s->by_target = true;
        sizing__rank_target(s, &best, &second);
    } else {
        sizing__rank(s, better_per_cost, &best, &second);
    }
    s->recommended = best;
    if (best < 0) {
        snprintf(s->why, sizeof(s->why), "%s",
                 s->streams ? "no variant qualifies: none has a valid stream capacity (searched, "
                              "held its first step within the delivery SLO, not cut short by "
                              "the budget or sizeup's own stream threads)"
                            : "no variant qualifies: none has a valid capacity (searched, met "
                              "the SLO at its lowest step, not marked noisy, contended or "
                              "generator-limited)");
        unsigned searched = 0, unmeetable = 0;
        for (size_t i = 0; !s->streams && i < s->n; i++)
            if (rows[i].cap && rows[i].cap->searched) {
                searched++;
                unmeetable += (rows[i].cap->flags & CAPACITY_FLAG_UNMEETABLE) != 0;
            }
        if (unmeetable)
            text_catf(s->why, sizeof(s->why),
                      "; %u of the %u searched miss the SLO even at one request at a time, so no "
                      "load meets it there",
                      unmeetable, searched);
        sizing__pack_none(rows, o, s);
        return;
    }
    const struct sizing_variant *v = &s->rows[best];
    s->planned_rps_per_pod = v->planned_rps;
    if (s->target_users > 0)
        snprintf(target, sizeof(target), "%.0f users at %g req/s each = %.0f req/s",
                 s->target_users, o->per_user_rps, s->target_rps);
    else
        snprintf(target, sizeof(target), "%.0f %s", target_of(s), unit(s));

    if (s->by_packing) {
        s->replicas = s->by_target ? v->replicas : 1;
        sizing__pack_why(rows, o, s, target);
    } else if (s->by_target) {
        s->replicas = v->replicas;
        snprintf(s->why, sizeof(s->why),
                 "the cheapest total for the target of %s: %u x %s at %.3f each = %.3f "
                 "(cost per pod = cores x %g + GiB x %g)",
                 target, v->replicas, rows[best].variant->label, v->pod_cost, v->total_cost,
                 o->cost.cpu, o->cost.memory_gib);
        if (second >= 0)
            text_catf(s->why, sizeof(s->why), "; next: %u x %s = %.3f", s->rows[second].replicas,
                      rows[second].variant->label, s->rows[second].total_cost);
    } else {
        snprintf(s->why, sizeof(s->why),
                 "the most capacity per unit of cost: %.0f planned %s per unit (cost per pod "
                 "= cores x %g + GiB x %g = %.3f)",
                 v->rps_per_cost, unit(s), o->cost.cpu, o->cost.memory_gib, v->pod_cost);
        if (second >= 0)
            text_catf(s->why, sizeof(s->why), "; next: %s with %.0f", rows[second].variant->label,
                      s->rows[second].rps_per_cost);
    }
    text_catf(s->why, sizeof(s->why), "; ");
    plan_text(o, s, v, s->why, sizeof(s->why));
    if (!s->by_target)
        text_catf(s->why, sizeof(s->why),
                  ". No target load was given, so no replica count: a target (%s) gives one",
                  s->streams ? "in streams" : "in req/s or users");
}

static void assumption(const struct sizing_row *rows, struct sizing *s)
{
    /* A measured curve replaces the assumption (step 4 says what it shows instead). */
    if (s->recommended < 0 || !s->by_target || s->curve_read)
        return;
    const struct sizing_variant *v = &s->rows[s->recommended];
    snprintf(s->assumption, sizeof(s->assumption),
             "%u replicas serve %.0f %s only if pods scale independently: the sweep measured "
             "one pod of %s, and %u of them carry %u times its planned %.0f %s only while "
             "nothing they share (a database, a cache, a lock, the network) saturates first.",
             v->replicas, target_of(s), unit(s), rows[s->recommended].variant->label, v->replicas,
             v->replicas, v->planned_rps, unit(s));
}

/* ---- requests ------------------------------------------------------------------------------ */

int64_t sizing_stream_memory(unsigned streams, int64_t per_stream, int64_t base, int64_t limit)
{
    if (per_stream < 0 || base < 0)
        return -1;
    double need = ((double)streams * (double)per_stream + (double)base) * (1.0 + ADVISOR_HEADROOM);
    int64_t b = (int64_t)ceil(need / (double)FMT_MIB - SIZING_EPS) * FMT_MIB;
    return b > limit ? limit : b;
}

/* Stream mode: CPU from what the pod used at its stream capacity, memory from the measured line
 * for the streams each pod holds (its share of the target, or its planned count). */
static void stream_requests(const struct sizing_row *rows, struct sizing *s)
{
    char b1[QTY_LEN], b2[QTY_LEN], n[FMT_LEN], per[FMT_LEN], base[FMT_LEN], each[FMT_LEN];
    const struct stream_capacity *scap = rows[s->recommended].scap;
    const struct sizing_variant *v = &s->rows[s->recommended];
    struct sizing_requests r;

    s->streams_per_pod = s->by_target ? sizing__ceil_count(s->target_streams / s->replicas)
                                      : (unsigned)floor(v->planned_rps + SIZING_EPS);
    sizing_requests(scap->cpu_cores, 1.0, scap->memory_bytes, s->limit_cpu_m, s->limit_memory, &r);
    s->request_cpu_m = r.cpu_m;
    s->cpu_request_measured = r.cpu_measured;
    int64_t mem = sizing_stream_memory(s->streams_per_pod, scap->memory_per_stream_bytes,
                                       scap->base_memory_bytes, s->limit_memory);
    if (mem > 0) {
        s->request_memory = mem;
        s->memory_request_measured = true;
        snprintf(s->memory_note, sizeof(s->memory_note),
                 "%u pod%s x %s streams x %s + %s base + %.0f%% = %s each", s->replicas,
                 s->replicas == 1 ? "" : "s", fmt_count(s->streams_per_pod, n),
                 fmt_bytes((uint64_t)scap->memory_per_stream_bytes, per),
                 fmt_bytes((uint64_t)scap->base_memory_bytes, base), ADVISOR_HEADROOM * 100,
                 fmt_bytes((uint64_t)mem, each));
        if (mem == s->limit_memory)
            text_catf(s->memory_note, sizeof(s->memory_note),
                      " (capped at the %s limit the streams were measured under)",
                      qty_format_memory(s->limit_memory, b2));
    } else {
        s->request_memory = r.memory;
        s->memory_request_measured = r.memory_measured;
    }
    if (s->cpu_request_measured)
        snprintf(s->requests_note, sizeof(s->requests_note),
                 "cpu %s: the mean CPU measured at the stream capacity (%.3f cores at %u streams)",
                 qty_format_cpu(s->request_cpu_m, b1), scap->cpu_cores, scap->streams);
    else
        snprintf(s->requests_note, sizeof(s->requests_note),
                 "cpu %s: %.0f%% of the limit (CPU was not measured at the stream capacity)",
                 qty_format_cpu(s->request_cpu_m, b1), ADVISOR_REQ_CPU_FRACTION * 100);
    if (s->memory_note[0])
        text_catf(s->requests_note, sizeof(s->requests_note), "; memory %s: %s",
                  qty_format_memory(s->request_memory, b2), s->memory_note);
    else
        text_catf(s->requests_note, sizeof(s->requests_note),
                  "; memory %s: %s (the memory per stream was not measured)",
                  qty_format_memory(s->request_memory, b2),
                  s->memory_request_measured ? "the memory at the stream capacity + headroom"
                                             : "a share of the limit");
}

static void requests(const struct sizing_row *rows, struct sizing *s)
{
    char b1[QTY_LEN], b2[QTY_LEN], b3[QTY_LEN];

    if (s->recommended < 0)
        return;
    const struct variant *var = rows[s->recommended].variant;
    const struct capacity_result *cap = rows[s->recommended].cap;
    s->limit_cpu_m = var->cpu_millicores;
    s->limit_memory = var->memory_bytes;
    if (s->streams) {
        stream_requests(rows, s);
        return;
    }

    /* What a pod uses at its SLO boundary is what it needs reserved to reach it: no headroom on
     * CPU (the limit above it is the burst room). Memory is not compressible, an OOM kill is
     * worse than a throttle, so its peak gets the advisor's headroom. */
    struct sizing_requests r;
    sizing_requests(cap->cpu_cores, 1.0, cap->peak_memory_bytes, s->limit_cpu_m, s->limit_memory,
                    &r);
    s->request_cpu_m = r.cpu_m;
    s->request_memory = r.memory;
    s->cpu_request_measured = r.cpu_measured;
    s->memory_request_measured = r.memory_measured;
    if (s->cpu_request_measured)
        snprintf(s->requests_note, sizeof(s->requests_note),
                 "cpu %s: the mean CPU measured at capacity (%.3f cores at %.0f req/s)",
                 qty_format_cpu(s->request_cpu_m, b1), cap->cpu_cores, cap->rps);
    else
        snprintf(s->requests_note, sizeof(s->requests_note),
                 "cpu %s: %.0f%% of the limit (CPU was not measured at capacity)",
                 qty_format_cpu(s->request_cpu_m, b1), ADVISOR_REQ_CPU_FRACTION * 100);
    if (s->memory_request_measured)
        text_catf(s->requests_note, sizeof(s->requests_note),
                  "; memory %s: the peak at capacity (%s) + %.0f%% headroom",
                  qty_format_memory(s->request_memory, b2),
                  qty_format_memory(cap->peak_memory_bytes - cap->peak_memory_bytes % FMT_MIB, b3),
                  ADVISOR_HEADROOM * 100);
    else
        text_catf(s->requests_note, sizeof(s->requests_note),
                  "; memory %s: %.0f%% of the limit (peak memory was not measured)",
                  qty_format_memory(s->request_memory, b2), ADVISOR_REQ_MEM_FRACTION * 100);
}

/* ---- entry --------------------------------------------------------------------------------- */

int sizing_run(const struct sizing_row *rows, size_t n, const struct sizing_opts *o,
               struct sizing *out, char *err)
{
    int rc;

    memset(out, 0, sizeof(*out));
    out->recommended = -1;
    out->cut_short = -1;
    out->replicas = 1;
    out->hpa.cpu_at_planned = -1;
    if (n > VARIANT_MAX)
        return err_set(err, -EINVAL, "more than %d variants", VARIANT_MAX);
    rc = check_opts(o, err);
    if (rc)
        return rc;
    out->n = n;
    out->streams = o->streams;
    out->target_streams = o->streams ? o->target_streams : 0;
    out->target_users = o->target_users;
    out->target_rps = o->target_users > 0 ? o->target_users * o->per_user_rps : o->target_rps;
    out->planned_fraction = capacity_planned_fraction(&o->planning);
    /* The order of the answer (docs/sweep.md, "The order of the answer"): (1) each shape's
     * linear replica count; (2) the cost ranking; (3) the scale-out, measured on the winner
     * before this runs (o->scale_out); (4) the replicas from its curve; (5) replicas added for
     * availability; (6) the autoscaler from that count, its max from the curve and capped where
     * the curve ends. The requests come between: the HPA's utilisation is of the request. */
    size_rows(rows, n, o, false, out);
    sizing__pack_rows(rows, o, out);
    recommend(rows, o, out);
    out->cut_short = cut_short_winner(rows, o, out);
    out->replicas_linear = out->replicas;
    sizing__curve_step(rows, o, out);
    sizing__availability_step(o, sizing__hpa_max(o, out), out);
    assumption(rows, out);
    requests(rows, out);
    sizing__autoscale(rows, o, out);
    return 0;
}
