#include "output/output_capacity.h"

#include <math.h>

#include "sweep/search.h"
#include "sweep/stream_search.h"

const char *output_capacity_flag_name(unsigned f)
{
    switch (f) {
    case CAPACITY_FLAG_GENERATOR:
        return "generator-limited";
    case CAPACITY_FLAG_NOISY:
        return "noisy";
    case CAPACITY_FLAG_CONTENDED:
        return "contended";
    case CAPACITY_FLAG_TOO_FEW_REPEATS:
        return "too few repeats";
    case CAPACITY_FLAG_BUDGET:
        return "budget";
    case CAPACITY_FLAG_NONE_PASSED:
        return "none passed";
    case CAPACITY_FLAG_UNMEETABLE:
        return "unmeetable";
    case CAPACITY_FLAG_REPEATS_CUT:
        return "repeats cut short";
    }
    return NULL;
}

void output_capacity_interval(struct jb *b, cJSON *o, const struct capacity_result *cap)
{
    struct capacity_shown sh;

    capacity_show(cap, &sh);
    jb_bool(b, o, "known", !sh.unknown);
    if (sh.unknown) {
        jb_null(b, o, "interval");
        return;
    }
    cJSON *iv = jb_arr(b, o, "interval");
    if (iv) {
        jb_num(b, iv, NULL, sh.low);
        jb_num(b, iv, NULL, sh.high);
    }
}

static void add_num_or_null(struct jb *b, cJSON *o, const char *k, double v, bool known)
{
    if (known && isfinite(v))
        jb_num(b, o, k, v);
    else
        jb_null(b, o, k);
}

static const char *kind_name(enum capacity_step_kind k)
{
    return k == CAPACITY_STEP_PROBE    ? "probe"
           : k == CAPACITY_STEP_SEARCH ? "search"
           : k == CAPACITY_STEP_LOAD   ? "load"
                                       : "repeat";
}

static void add_steps(struct jb *b, cJSON *o, const struct capacity_result *cap)
{
    cJSON *arr = jb_arr(b, o, "steps");
    for (size_t i = 0; arr && i < cap->nsteps; i++) {
        const struct capacity_step *st = &cap->steps[i];
        cJSON *s = jb_obj(b, arr, NULL);
        jb_str(b, s, "kind", kind_name(st->kind));
        jb_num(b, s, "offered_rps", st->offered_rps);
        jb_num(b, s, "achieved_rps", st->achieved_rps);
        jb_num(b, s, "sustained_rps", st->sustained_rps);
        jb_num(b, s, "p50_ms", (double)st->p50_us / 1e3);
        jb_num(b, s, "p95_ms", (double)st->p95_us / 1e3);
        jb_num(b, s, "p99_ms", (double)st->p99_us / 1e3);
        jb_num(b, s, "error_rate", st->error_rate);
        add_num_or_null(b, s, "cpu_cores", st->cpu_cores, st->cpu_cores >= 0);
        add_num_or_null(b, s, "usage_window_s", st->usage_window_s, st->usage_window_s > 0);
        add_num_or_null(b, s, "peak_memory_bytes", (double)st->peak_memory_bytes,
                        st->peak_memory_bytes >= 0);
        add_num_or_null(b, s, "generator_cores", st->gen_cores, st->gen_cores >= 0);
        jb_bool(b, s, "pass", st->pass);
        jb_bool(b, s, "generator_limited", st->gen_limited);
        if (st->throttling.known) {
            cJSON *t = jb_obj(b, s, "throttling");
            if (t) {
                jb_num(b, t, "periods", (double)st->throttling.periods);
                jb_num(b, t, "throttled_periods", (double)st->throttling.throttled_periods);
                jb_num(b, t, "throttled_s", st->throttling.throttled_s);
            }
        } else {
            jb_null(b, s, "throttling");
        }
    }
}

void output_capacity_add(struct jb *b, cJSON *v, const struct capacity_result *cap)
{
    if (!cap->searched) {
        jb_null(b, v, "slo_capacity");
        return;
    }
    cJSON *o = jb_obj(b, v, "slo_capacity");
    if (!o)
        return;
    jb_num(b, o, "rps", cap->rps);
    output_capacity_interval(b, o, cap);
    jb_num(b, o, "repeats", (double)cap->interval.n);
    cJSON *rr = jb_arr(b, o, "repeat_rps");
    for (size_t i = 0; rr && i < cap->interval.n && i < CAPACITY_MAX_REPEATS; i++)
        jb_num(b, rr, NULL, cap->repeat_rps[i]);
    jb_num(b, o, "per_core", cap->per_core);
    jb_str(b, o, "limited_by", search_limit_name(cap->limited_by));
    jb_num(b, o, "contended_reruns", cap->contended_reruns);
    const struct capacity_recovery *rec = &cap->recovery;
    cJSON *rv = jb_obj(b, o, "recovery");
    jb_num(b, rv, "settles", rec->settles);
    jb_num(b, rv, "ran_out", rec->ran_out);
    add_num_or_null(b, rv, "longest_s", rec->longest_s, rec->settles > rec->ran_out);
    add_num_or_null(b, rv, "bound_s", rec->bound_s, rec->settles > 0);
    jb_str(b, rv, "held", rec->settles == 0 ? NULL : rec->at_rate ? "rate" : "one-user");
    jb_bool(b, o, "valid", cap->valid);
    cJSON *fl = jb_arr(b, o, "flags");
    for (unsigned bit = 1; fl && bit && bit <= CAPACITY_FLAG_LAST; bit <<= 1)
        if ((cap->flags & bit) && output_capacity_flag_name(bit))
            jb_push_str(b, fl, output_capacity_flag_name(bit));
    add_num_or_null(b, o, "cpu_cores", cap->cpu_cores, cap->cpu_cores >= 0);
    add_num_or_null(b, o, "peak_memory_bytes", (double)cap->peak_memory_bytes,
                    cap->peak_memory_bytes >= 0);
    /* The repeats at capacity merged: the row's latency and error columns in capacity mode. */
    if (cap->merged.have) {
        cJSON *m = jb_obj(b, o, "at_capacity");
        if (m) {
            jb_num(b, m, "requests", (double)cap->merged.requests);
            jb_num(b, m, "p50_ms", (double)cap->merged.p50_us / 1e3);
            jb_num(b, m, "p95_ms", (double)cap->merged.p95_us / 1e3);
            jb_num(b, m, "p99_ms", (double)cap->merged.p99_us / 1e3);
            jb_num(b, m, "error_rate", cap->merged.error_rate);
        }
    } else {
        jb_null(b, o, "at_capacity");
    }
    if (cap->throttling.known) {
        cJSON *t = jb_obj(b, o, "throttling");
        if (t) {
            jb_num(b, t, "periods", (double)cap->throttling.periods);
            jb_num(b, t, "throttled_periods", (double)cap->throttling.throttled_periods);
            jb_num(b, t, "throttled_s", cap->throttling.throttled_s);
        }
    } else {
        jb_null(b, o, "throttling");
    }
    add_steps(b, o, cap);
}

static void add_stream_steps(struct jb *b, cJSON *o, const struct stream_capacity *scap)
{
    cJSON *arr = jb_arr(b, o, "steps");
    for (size_t i = 0; arr && i < scap->nsteps && i < STREAM_CAP_MAX_STEPS; i++) {
        const struct stream_cap_step *st = &scap->steps[i];
        cJSON *s = jb_obj(b, arr, NULL);
        jb_num(b, s, "streams", st->streams);
        jb_num(b, s, "open", (double)st->open);
        jb_num(b, s, "failed", (double)st->failed);
        jb_num(b, s, "dropped", (double)st->dropped);
        jb_num(b, s, "missing", (double)st->missing);
        add_num_or_null(b, s, "delivery_p95_ms", (double)st->delivery_p95_us / 1e3,
                        st->delivery_samples > 0);
        add_num_or_null(b, s, "cpu_cores", st->cpu_cores, st->cpu_cores >= 0);
        add_num_or_null(b, s, "memory_bytes", (double)st->memory_bytes, st->memory_bytes >= 0);
        jb_bool(b, s, "pass", st->pass);
        if (st->pass)
            jb_null(b, s, "missed");
        else
            jb_str(b, s, "missed", stream_limit_name(st->why));
    }
}

void output_stream_capacity_add(struct jb *b, cJSON *v, const struct stream_capacity *scap)
{
    if (!scap->searched) {
        jb_null(b, v, "stream_capacity");
        return;
    }
    cJSON *o = jb_obj(b, v, "stream_capacity");
    if (!o)
        return;
    jb_num(b, o, "streams", scap->streams);
    add_num_or_null(b, o, "memory_per_stream_bytes", (double)scap->memory_per_stream_bytes,
                    scap->memory_per_stream_bytes >= 0);
    add_num_or_null(b, o, "base_memory_bytes", (double)scap->base_memory_bytes,
                    scap->base_memory_bytes >= 0);
    jb_num(b, o, "memory_points", scap->memory_points);
    add_num_or_null(b, o, "delivery_p95_ms", scap->delivery_p95_ms, scap->delivery_p95_ms >= 0);
    jb_str(b, o, "limited_by", stream_limit_name(scap->limited_by));
    jb_bool(b, o, "valid", scap->valid);
    add_num_or_null(b, o, "cpu_cores", scap->cpu_cores, scap->cpu_cores >= 0);
    add_num_or_null(b, o, "memory_bytes", (double)scap->memory_bytes, scap->memory_bytes >= 0);
    add_stream_steps(b, o, scap);
}
