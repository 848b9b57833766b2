#include "load/result.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    memset(r, 0, sizeof(*r));
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
