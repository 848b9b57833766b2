#include "sweep/stream_search.h"

#include <math.h>
#include <string.h>

enum search_outcome stream_search_judge(const struct stream_cap_step *st,
                                        const struct profile_slo *slo, enum stream_limit *why)
{
    enum stream_limit dummy;
    if (!why)
        why = &dummy;
    *why = STREAM_LIMIT_GENERATOR;
    if (st->stream_cores >= SWEEP_GEN_SATURATED_SHARE)
        return SEARCH_GEN_LIMITED;
    *why = STREAM_LIMIT_DROPPED;
    if (st->dropped > 0 || st->failed > 0 || st->open < st->streams)
        return SEARCH_FAIL;
    *why = STREAM_LIMIT_DELIVERY_P95;
    if (st->delivery_samples > 0 && st->delivery_p95_us >= (uint64_t)slo->delivery_p95_us)
        return SEARCH_FAIL;
    /* Commands whose frames never came are late beyond the drain: worse than a slow p95. */
    *why = STREAM_LIMIT_MISSING;
    if (st->expected > 0 && st->missing > 0 &&
        (double)st->missing >= slo->errors * (double)st->expected)
        return SEARCH_FAIL;
    *why = STREAM_LIMIT_NONE;
    return SEARCH_PASS;
}

enum capacity_limit stream_search_as_capacity(enum stream_limit l)
{
    switch (l) {
    case STREAM_LIMIT_DELIVERY_P95:
        return CAPACITY_LIMIT_SLO_P95;
    case STREAM_LIMIT_GENERATOR:
        return CAPACITY_LIMIT_GENERATOR;
    case STREAM_LIMIT_BUDGET:
        return CAPACITY_LIMIT_BUDGET;
    case STREAM_LIMIT_MAX_STREAMS:
        return CAPACITY_LIMIT_MAX_RPS;
    case STREAM_LIMIT_NONE:
        return CAPACITY_LIMIT_NONE;
    default:
        return CAPACITY_LIMIT_SLO_ERRORS; /* dropped, missing, memory, died */
    }
}

bool stream_memory_fit(const struct stream_cap_step *steps, size_t n, double *slope, double *base,
                       unsigned *points)
{
    double sx = 0, sy = 0, k = 0;

    *points = 0;
    for (size_t i = 0; i < n; i++)
        if (steps[i].memory_point && steps[i].memory_bytes >= 0) {
            sx += (double)steps[i].open;
            sy += (double)steps[i].memory_bytes;
            k++;
        }
    if (k < 2)
        return false;
    /* Centred sums: memory in bytes squared would lose the slope to rounding otherwise. */
    double mx = sx / k, my = sy / k, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++)
        if (steps[i].memory_point && steps[i].memory_bytes >= 0) {
            double dx = (double)steps[i].open - mx;
            sxx += dx * dx;
            sxy += dx * ((double)steps[i].memory_bytes - my);
        }
    if (!(sxx > 0))
        return false;
    *slope = sxy / sxx;
    *base = my - *slope * mx;
    *points = (unsigned)k;
    return true;
}

/* The last passing step that held `streams` (the figures at capacity). */
static const struct stream_cap_step *step_at(const struct stream_capacity *cap, unsigned streams,
                                             bool pass)
{
    for (size_t i = cap->nsteps; i-- > 0;)
        if (cap->steps[i].streams == streams && cap->steps[i].pass == pass)
            return &cap->steps[i];
    return NULL;
}

static enum stream_limit limit_of(const struct stream_capacity *cap, const struct search *s)
{
    switch (s->limit) {
    case CAPACITY_LIMIT_BUDGET:
        return STREAM_LIMIT_BUDGET;
    case CAPACITY_LIMIT_MAX_RPS:
        return STREAM_LIMIT_MAX_STREAMS;
    case CAPACITY_LIMIT_GENERATOR:
        return STREAM_LIMIT_GENERATOR;
    case CAPACITY_LIMIT_NONE:
        return STREAM_LIMIT_NONE;
    default: {
        const struct stream_cap_step *hi =
            s->high > 0 ? step_at(cap, (unsigned)s->high, false) : NULL;
        return hi ? hi->why : STREAM_LIMIT_DELIVERY_P95;
    }
    }
}

void stream_capacity_finish(struct stream_capacity *cap, const struct search *s)
{
    double slope = 0, base = 0;

    cap->streams = s->low > 0 ? (unsigned)s->low : 0;
    cap->delivery_p95_ms = -1;
    cap->cpu_cores = -1;
    cap->memory_bytes = -1;
    const struct stream_cap_step *at = cap->streams ? step_at(cap, cap->streams, true) : NULL;
    if (at) {
        if (at->delivery_samples > 0)
            cap->delivery_p95_ms = (double)at->delivery_p95_us / 1e3;
        cap->cpu_cores = at->cpu_cores;
        cap->memory_bytes = at->memory_bytes;
    }
    cap->limited_by = limit_of(cap, s);
    if (s->flags & CAPACITY_FLAG_GENERATOR)
        cap->flags |= STREAM_CAP_FLAG_GENERATOR;
    if (s->flags & CAPACITY_FLAG_BUDGET)
        cap->flags |= STREAM_CAP_FLAG_BUDGET;
    if (s->flags & CAPACITY_FLAG_NONE_PASSED || cap->streams == 0)
        cap->flags |= STREAM_CAP_FLAG_NONE_PASSED;
    cap->memory_per_stream_bytes = cap->base_memory_bytes = -1;
    if (stream_memory_fit(cap->steps, cap->nsteps, &slope, &base, &cap->memory_points)) {
        /* A negative slope is noise around a flat line: streams cost nothing measurable. */
        cap->memory_per_stream_bytes = slope > 0 ? (int64_t)llround(slope) : 0;
        cap->base_memory_bytes = base > 0 ? (int64_t)llround(base) : 0;
    }
    cap->valid = cap->flags == 0 && cap->streams > 0;
}

const char *stream_limit_name(enum stream_limit l)
{
    switch (l) {
    case STREAM_LIMIT_NONE:
        return "none";
    case STREAM_LIMIT_DELIVERY_P95:
        return "delivery-p95";
    case STREAM_LIMIT_DROPPED:
        return "dropped";
    case STREAM_LIMIT_MISSING:
        return "missing";
    case STREAM_LIMIT_MEMORY:
        return "memory";
    case STREAM_LIMIT_DIED:
        return "died";
    case STREAM_LIMIT_GENERATOR:
        return "generator";
    case STREAM_LIMIT_BUDGET:
        return "budget";
    case STREAM_LIMIT_MAX_STREAMS:
        return "max-streams";
    }
    return "none";
}
