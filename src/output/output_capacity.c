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
    }
    return NULL;
}

static void add_num_or_null(cJSON *o, const char *k, double v, bool known)
{
    if (known && isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static const char *kind_name(enum capacity_step_kind k)
{
    return k == CAPACITY_STEP_PROBE    ? "probe"
           : k == CAPACITY_STEP_SEARCH ? "search"
           : k == CAPACITY_STEP_LOAD   ? "load"
                                       : "repeat";
}

static void add_steps(cJSON *o, const struct capacity_result *cap)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "steps");
    for (size_t i = 0; arr && i < cap->nsteps; i++) {
        const struct capacity_step *st = &cap->steps[i];
        cJSON *s = cJSON_CreateObject();
        if (!s)
            return;
        cJSON_AddStringToObject(s, "kind", kind_name(st->kind));
        cJSON_AddNumberToObject(s, "offered_rps", st->offered_rps);
        cJSON_AddNumberToObject(s, "achieved_rps", st->achieved_rps);
        cJSON_AddNumberToObject(s, "sustained_rps", st->sustained_rps);
        cJSON_AddNumberToObject(s, "p50_ms", (double)st->p50_us / 1e3);
        cJSON_AddNumberToObject(s, "p95_ms", (double)st->p95_us / 1e3);
        cJSON_AddNumberToObject(s, "p99_ms", (double)st->p99_us / 1e3);
        cJSON_AddNumberToObject(s, "error_rate", st->error_rate);
        add_num_or_null(s, "cpu_cores", st->cpu_cores, st->cpu_cores >= 0);
        add_num_or_null(s, "peak_memory_bytes", (double)st->peak_memory_bytes,
                        st->peak_memory_bytes >= 0);
        add_num_or_null(s, "generator_cores", st->gen_cores, st->gen_cores >= 0);
        cJSON_AddBoolToObject(s, "pass", st->pass);
        cJSON_AddBoolToObject(s, "generator_limited", st->gen_limited);
        if (st->throttling.known) {
            cJSON *t = cJSON_AddObjectToObject(s, "throttling");
            if (t) {
                cJSON_AddNumberToObject(t, "periods", (double)st->throttling.periods);
                cJSON_AddNumberToObject(t, "throttled_periods",
                                        (double)st->throttling.throttled_periods);
                cJSON_AddNumberToObject(t, "throttled_s", st->throttling.throttled_s);
            }
        } else {
            cJSON_AddNullToObject(s, "throttling");
        }
        cJSON_AddItemToArray(arr, s);
    }
}

void output_capacity_add(cJSON *v, const struct capacity_result *cap)
{
    if (!cap->searched) {
        cJSON_AddNullToObject(v, "slo_capacity");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(v, "slo_capacity");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "rps", cap->rps);
    cJSON *iv = cJSON_AddArrayToObject(o, "interval");
    if (iv) {
        /* With fewer than two repeats there is no interval: both ends are the figure itself. */
        cJSON_AddItemToArray(
            iv, cJSON_CreateNumber(cap->interval.n >= 2 ? cap->interval.low : cap->rps));
        cJSON_AddItemToArray(
            iv, cJSON_CreateNumber(cap->interval.n >= 2 ? cap->interval.high : cap->rps));
    }
    cJSON_AddNumberToObject(o, "repeats", (double)cap->interval.n);
    cJSON *rr = cJSON_AddArrayToObject(o, "repeat_rps");
    for (size_t i = 0; rr && i < cap->interval.n && i < CAPACITY_MAX_REPEATS; i++)
        cJSON_AddItemToArray(rr, cJSON_CreateNumber(cap->repeat_rps[i]));
    cJSON_AddNumberToObject(o, "per_core", cap->per_core);
    cJSON_AddStringToObject(o, "limited_by", search_limit_name(cap->limited_by));
    cJSON_AddBoolToObject(o, "valid", cap->valid);
    cJSON *fl = cJSON_AddArrayToObject(o, "flags");
    for (unsigned b = 1; fl && b && b <= CAPACITY_FLAG_LAST; b <<= 1)
        if ((cap->flags & b) && output_capacity_flag_name(b))
            cJSON_AddItemToArray(fl, cJSON_CreateString(output_capacity_flag_name(b)));
    add_num_or_null(o, "cpu_cores", cap->cpu_cores, cap->cpu_cores >= 0);
    add_num_or_null(o, "peak_memory_bytes", (double)cap->peak_memory_bytes,
                    cap->peak_memory_bytes >= 0);
    if (cap->throttling.known) {
        cJSON *t = cJSON_AddObjectToObject(o, "throttling");
        if (t) {
            cJSON_AddNumberToObject(t, "periods", (double)cap->throttling.periods);
            cJSON_AddNumberToObject(t, "throttled_periods",
                                    (double)cap->throttling.throttled_periods);
            cJSON_AddNumberToObject(t, "throttled_s", cap->throttling.throttled_s);
        }
    } else {
        cJSON_AddNullToObject(o, "throttling");
    }
    add_steps(o, cap);
}

static void add_stream_steps(cJSON *o, const struct stream_capacity *scap)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "steps");
    for (size_t i = 0; arr && i < scap->nsteps && i < STREAM_CAP_MAX_STEPS; i++) {
        const struct stream_cap_step *st = &scap->steps[i];
        cJSON *s = cJSON_CreateObject();
        if (!s)
            return;
        cJSON_AddNumberToObject(s, "streams", st->streams);
        cJSON_AddNumberToObject(s, "open", (double)st->open);
        cJSON_AddNumberToObject(s, "failed", (double)st->failed);
        cJSON_AddNumberToObject(s, "dropped", (double)st->dropped);
        cJSON_AddNumberToObject(s, "missing", (double)st->missing);
        add_num_or_null(s, "delivery_p95_ms", (double)st->delivery_p95_us / 1e3,
                        st->delivery_samples > 0);
        add_num_or_null(s, "cpu_cores", st->cpu_cores, st->cpu_cores >= 0);
        add_num_or_null(s, "memory_bytes", (double)st->memory_bytes, st->memory_bytes >= 0);
        cJSON_AddBoolToObject(s, "pass", st->pass);
        if (st->pass)
            cJSON_AddNullToObject(s, "missed");
        else
            cJSON_AddStringToObject(s, "missed", stream_limit_name(st->why));
        cJSON_AddItemToArray(arr, s);
    }
}

void output_stream_capacity_add(cJSON *v, const struct stream_capacity *scap)
{
    if (!scap->searched) {
        cJSON_AddNullToObject(v, "stream_capacity");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(v, "stream_capacity");
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "streams", scap->streams);
    add_num_or_null(o, "memory_per_stream_bytes", (double)scap->memory_per_stream_bytes,
                    scap->memory_per_stream_bytes >= 0);
    add_num_or_null(o, "base_memory_bytes", (double)scap->base_memory_bytes,
                    scap->base_memory_bytes >= 0);
    cJSON_AddNumberToObject(o, "memory_points", scap->memory_points);
    add_num_or_null(o, "delivery_p95_ms", scap->delivery_p95_ms, scap->delivery_p95_ms >= 0);
    cJSON_AddStringToObject(o, "limited_by", stream_limit_name(scap->limited_by));
    cJSON_AddBoolToObject(o, "valid", scap->valid);
    add_num_or_null(o, "cpu_cores", scap->cpu_cores, scap->cpu_cores >= 0);
    add_num_or_null(o, "memory_bytes", (double)scap->memory_bytes, scap->memory_bytes >= 0);
    add_stream_steps(o, scap);
}
