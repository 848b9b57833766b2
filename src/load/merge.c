#include "load/merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parts of one load must describe the same requests and stages, or adding them would add
 * unrelated figures: checked before anything is touched, so a refused part leaves dst as it
 * was. */
/* A merge that has taken no part yet (load_result_init'ed, or parts that measured nothing). */
static bool fresh(const struct load_result *r)
{
    return r->total.requests == 0;
}

static int check_same_shape(const struct load_result *dst, const struct load_result *src, char *err)
{
    if (dst->nnames != src->nnames)
        return err_set(err, -EINVAL, "a part has %zu request names, the merge %zu", src->nnames,
                       dst->nnames);
    if (dst->nstages != src->nstages)
        return err_set(err, -EINVAL, "a part has %zu stages, the merge %zu", src->nstages,
                       dst->nstages);
    for (size_t i = 0; i < dst->nnames; i++) {
        const char *a = dst->names && dst->names[i] ? dst->names[i] : "";
        const char *b = src->names && src->names[i] ? src->names[i] : "";
        if (strcmp(a, b) != 0)
            return err_set(err, -EINVAL, "request %zu is '%s' in a part, '%s' in the merge", i + 1,
                           b, a);
    }
    /* Each part of a spread load has the same targets in the same order; a merge that has taken
     * nothing yet takes the first part's. */
    if (fresh(dst) && dst->nurls == 0)
        return 0;
    if (dst->nurls != src->nurls)
        return err_set(err, -EINVAL, "a part has %zu targets (by_url), the merge %zu", src->nurls,
                       dst->nurls);
    for (size_t i = 0; i < dst->nurls; i++)
        if (strcmp(dst->urls[i], src->urls[i]) != 0)
            return err_set(err, -EINVAL, "target %zu is '%.64s' in a part, '%.64s' in the merge",
                           i + 1, src->urls[i], dst->urls[i]);
    return 0;
}

/* dst's by_url becomes a copy of src's (dst has none: the first part merged). */
static int urls_copy(struct load_result *dst, const struct load_result *src)
{
    if (src->nurls == 0)
        return 0;
    dst->urls = calloc(src->nurls, sizeof(*dst->urls));
    dst->by_url = malloc(src->nurls * sizeof(*dst->by_url));
    if (!dst->urls || !dst->by_url)
        goto oom;
    for (size_t i = 0; i < src->nurls; i++)
        if (!(dst->urls[i] = strdup(src->urls[i])))
            goto oom;
    memcpy(dst->by_url, src->by_url, src->nurls * sizeof(*dst->by_url));
    dst->nurls = src->nurls;
    return 0;
oom:
    for (size_t i = 0; dst->urls && i < src->nurls; i++)
        free(dst->urls[i]);
    free(dst->urls);
    free(dst->by_url);
    dst->urls = NULL;
    dst->by_url = NULL;
    return -ENOMEM;
}

static void series_drop(struct load_result *r)
{
    series_rec_free(r->series_rec);
    free(r->series_rec);
    r->series_rec = NULL;
    load_series_free(&r->series);
}

/* The series, point by point: the parts' windows start together (a shared start), so point i
 * of every part covers the same seconds. Recorders at different intervals meet at the coarser
 * (neighbouring histograms add exactly); a point only some parts reached (a shorter series) is
 * the sum of those. Called before the totals are added (fresh() still sees dst as it was).
 * A part that measured requests but carries no histograms per point (an older generator, or
 * a result without a series) leaves the merge without a series: a partial sum would read as
 * the whole load. Returns 0 or -ENOMEM. */
static int series_merge(struct load_result *dst, const struct load_result *src)
{
    bool has = src->series_rec && src->series_rec->slots;
    if (!has) {
        if (src->total.requests > 0)
            series_drop(dst);
        return 0;
    }
    if (!dst->series_rec) {
        if (!fresh(dst))
            return 0; /* an earlier part had no histograms: the merge keeps no series */
        load_series_free(&dst->series);
        dst->series_rec = malloc(sizeof(*dst->series_rec));
        if (!dst->series_rec || series_rec_init(dst->series_rec, src->series_rec->origin_ns)) {
            free(dst->series_rec);
            dst->series_rec = NULL;
            return -ENOMEM;
        }
    }
    return series_rec_merge(dst->series_rec, src->series_rec);
}

int load_result_merge(struct load_result *dst, const struct load_result *src,
                      const struct profile_thresholds *t, char *err)
{
    int rc = check_same_shape(dst, src, err);
    if (rc)
        return rc;
    bool first = fresh(dst) && dst->nurls == 0;
    if ((first && urls_copy(dst, src)) || series_merge(dst, src))
        return err_set(err, -ENOMEM, "out of memory");
    if (!first)
        for (size_t i = 0; i < dst->nurls; i++)
            load_stats_merge(&dst->by_url[i], &src->by_url[i]);
    load_stats_merge(&dst->total, &src->total);
    for (size_t i = 0; i < dst->nnames; i++)
        load_stats_merge(&dst->by_name[i], &src->by_name[i]);
    for (size_t i = 0; i < dst->nstages; i++) {
        load_stats_merge(&dst->by_stage[i], &src->by_stage[i]);
        if (src->stage_duration_s[i] > dst->stage_duration_s[i])
            dst->stage_duration_s[i] = src->stage_duration_s[i];
    }
    /* The parts ran over one shared window: its length is theirs, not their sum, so the merged
     * throughput is all the requests over that window. */
    if (src->duration_s > dst->duration_s)
        dst->duration_s = src->duration_s;
    dst->tool_cpu_s += src->tool_cpu_s;
    dst->target_rate_rps += src->target_rate_rps;
    dst->achieved_rate_rps += src->achieved_rate_rps;
    dst->peak_concurrency += src->peak_concurrency;
    dst->users += src->users;
    dst->threads += src->threads;
    dst->interrupted = dst->interrupted || src->interrupted;
    dst->verdict = verdict_classify(&dst->total, t);
    /* The merged points' percentiles come from the merged histograms, never from the parts'. */
    if (dst->series_rec && load_result_render_series(dst, NULL) != 0)
        return err_set(err, -ENOMEM, "out of memory");
    return 0;
}
