#include "load/result.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "load/plan.h"

void load_stats_init(struct load_stats *s)
{
    memset(s, 0, sizeof(*s));
    hist_init(&s->latency);
}

void load_stats_merge(struct load_stats *dst, const struct load_stats *src)
{
    dst->requests += src->requests;
    dst->responses += src->responses;
    dst->failed += src->failed;
    for (size_t i = 0; i < LOAD_STATUS_MAX; i++)
        dst->status[i] += src->status[i];
    for (size_t i = 0; i < LOAD_ERR_COUNT; i++)
        dst->errors[i] += src->errors[i];
    dst->bytes_in += src->bytes_in;
    dst->bytes_out += src->bytes_out;
    hist_merge(&dst->latency, &src->latency);
}

double load_stats_error_rate(const struct load_stats *s)
{
    if (s->requests == 0)
        return 0;
    return (double)s->failed / (double)s->requests;
}

double load_stats_throughput(const struct load_stats *s, double duration_s)
{
    if (!(duration_s > 0))
        return 0;
    return (double)s->requests / duration_s;
}

int load_result_init(struct load_result *r, const struct profile *p)
{
    memset(r, 0, sizeof(*r));
    load_stats_init(&r->total);
    r->verdict = VERDICT_OVERLOADED; /* nothing measured yet: the rule for zero requests */

    if (p->nrequests > 0) {
        r->names = calloc(p->nrequests, sizeof(*r->names));
        r->by_name = malloc(p->nrequests * sizeof(*r->by_name));
        r->nnames = p->nrequests; /* load_result_free copes with either array missing */
        if (!r->names || !r->by_name)
            goto oom;
        for (size_t i = 0; i < p->nrequests; i++) {
            r->names[i] = strdup(p->requests[i].name ? p->requests[i].name : "");
            if (!r->names[i])
                goto oom;
            load_stats_init(&r->by_name[i]);
        }
    }
    if (p->nstages > 0) {
        r->stage_duration_s = calloc(p->nstages, sizeof(*r->stage_duration_s));
        r->by_stage = malloc(p->nstages * sizeof(*r->by_stage));
        r->nstages = p->nstages;
        if (!r->stage_duration_s || !r->by_stage)
            goto oom;
        for (size_t i = 0; i < p->nstages; i++) {
            /* The planned length; the engine overwrites it with what actually ran. */
            r->stage_duration_s[i] = (double)p->stages[i].duration_us / 1e6;
            load_stats_init(&r->by_stage[i]);
        }
    }
    return 0;

oom:
    load_result_free(r);
    return -ENOMEM;
}

void load_result_free(struct load_result *r)
{
    if (!r)
        return;
    if (r->names) {
        for (size_t i = 0; i < r->nnames; i++)
            free(r->names[i]);
    }
    free(r->names);
    free(r->by_name);
    free(r->stage_duration_s);
    free(r->by_stage);
    for (size_t i = 0; r->urls && i < r->nurls; i++)
        free(r->urls[i]);
    free(r->urls);
    free(r->by_url);
    free(r->streams);
    load_series_free(&r->series);
    series_rec_free(r->series_rec);
    free(r->series_rec);
    memset(r, 0, sizeof(*r));
}

void load_result_add_thread(struct load_result *r, const struct load_stats *by_name,
                            const struct load_stats *by_stage)
{
    for (size_t n = 0; n < r->nnames; n++) {
        load_stats_merge(&r->by_name[n], &by_name[n]);
        load_stats_merge(&r->total, &by_name[n]);
    }
    for (size_t s = 0; s < r->nstages; s++)
        load_stats_merge(&r->by_stage[s], &by_stage[s]);
}

int load_result_append(struct load_result *dst, struct load_result *src)
{
    size_t n = dst->nnames + src->nnames;
    char **names = realloc(dst->names, (n ? n : 1) * sizeof(*names));
    if (names)
        dst->names = names;
    struct load_stats *by = names ? realloc(dst->by_name, (n ? n : 1) * sizeof(*by)) : NULL;
    if (!names || !by) {
        load_result_free(src);
        return -ENOMEM;
    }
    dst->by_name = by;
    for (size_t i = 0; i < src->nnames; i++) {
        dst->names[dst->nnames + i] = src->names[i];
        src->names[i] = NULL;
        dst->by_name[dst->nnames + i] = src->by_name[i];
    }
    dst->nnames = n;
    load_stats_merge(&dst->total, &src->total);
    dst->tool_cpu_s += src->tool_cpu_s;
    dst->threads += src->threads;
    dst->peak_concurrency += src->peak_concurrency;
    dst->interrupted = dst->interrupted || src->interrupted;
    int rc = 0;
    if (dst->series_rec && src->series_rec) {
        series_rec_merge(dst->series_rec, src->series_rec);
        rc = load_result_render_series(dst, NULL);
    }
    load_result_free(src);
    return rc;
}

int load_result_render_series(struct load_result *r, struct series_rec *delivery)
{
    struct load_series s;
    int64_t dur = (int64_t)(r->duration_s * 1e9 + 0.5);
    int rc = series_render(r->series_rec, delivery, dur, &s);
    if (rc)
        return rc;
    load_series_free(&r->series);
    r->series = s;
    return 0;
}

/* The length of stage s up to end_ns: a stop can cut it short or leave it unrun (0). */
static double stage_seconds(const struct plan *pl, size_t s, int64_t end_ns)
{
    const struct plan_seg *seg = NULL;
    for (size_t k = 0; k < pl->nsegs; k++)
        if (pl->segs[k].stage == (int)s)
            seg = &pl->segs[k];
    if (!seg)
        return -1;
    int64_t a = seg->start_ns, b = seg->start_ns + seg->dur_ns;
    if (b > end_ns)
        b = end_ns;
    return b > a ? (double)(b - a) / 1e9 : 0;
}

/* Open loop: the rate the profile asked for over the measured window. With stages that is the
 * number of requests due in the measured segments (each ramps linearly, so its mean is the
 * mean of its ends) over the window's planned length. */
static double requested_rate(const struct plan *pl, const struct profile *p)
{
    if (!p->nstages)
        return p->rate;
    if (pl->end_ns <= pl->measure_start_ns)
        return 0;
    double due = 0;
    for (size_t k = 0; k < pl->nsegs; k++)
        if (pl->segs[k].measured)
            due += (pl->segs[k].from + pl->segs[k].to) / 2 * ((double)pl->segs[k].dur_ns / 1e9);
    return due / ((double)(pl->end_ns - pl->measure_start_ns) / 1e9);
}

void load_result_finish(struct load_result *r, const struct plan *pl, const struct profile *p,
                        int64_t end_ns, uint64_t sent)
{
    if (end_ns < pl->end_ns)
        r->interrupted = true;
    else
        end_ns = pl->end_ns;
    double dur = (double)(end_ns - pl->measure_start_ns) / 1e9;
    r->duration_s = dur > 0 ? dur : 0;
    for (size_t s = 0; s < r->nstages && r->stage_duration_s; s++) {
        double len = stage_seconds(pl, s, end_ns);
        if (len >= 0)
            r->stage_duration_s[s] = len;
    }
    if (pl->open_loop) {
        r->target_rate_rps = requested_rate(pl, p);
        r->achieved_rate_rps = r->duration_s > 0 ? (double)sent / r->duration_s : 0;
    }
    r->verdict = verdict_classify(&r->total, &p->thresholds);
}

enum verdict verdict_classify(const struct load_stats *s, const struct profile_thresholds *t)
{
    if (s->requests == 0)
        return VERDICT_OVERLOADED;
    double errors = load_stats_error_rate(s);
    /* Compare in integer microseconds: the p95 is a histogram value and the thresholds are
     * parsed durations, so a boundary case (p95 exactly 100 ms) is decided exactly. */
    int64_t p95 = (int64_t)hist_percentile(&s->latency, 95);
    if (p95 > t->overloaded_p95_us || errors > t->overloaded_errors)
        return VERDICT_OVERLOADED;
    if (p95 < t->healthy_p95_us && errors < t->healthy_errors)
        return VERDICT_HEALTHY;
    return VERDICT_STRESSED;
}

const char *verdict_name(enum verdict v)
{
    switch (v) {
    case VERDICT_HEALTHY:
        return "HEALTHY";
    case VERDICT_STRESSED:
        return "STRESSED";
    case VERDICT_OVERLOADED:
        return "OVERLOADED";
    }
    return "UNKNOWN";
}

const char *load_errclass_name(enum load_errclass c)
{
    switch (c) {
    case LOAD_ERR_CONNECT_REFUSED:
        return "connect_refused";
    case LOAD_ERR_CONNECT_TIMEOUT:
        return "connect_timeout";
    case LOAD_ERR_RESET:
        return "reset";
    case LOAD_ERR_TIMEOUT:
        return "timeout";
    case LOAD_ERR_BAD_RESPONSE:
        return "bad_response";
    case LOAD_ERR_NOFILE:
        return "too_many_open_files";
    case LOAD_ERR_TLS:
        return "tls";
    case LOAD_ERR_OTHER:
    case LOAD_ERR_COUNT:
        break;
    }
    return "other";
}
