#include "load/merge.h"

#include <errno.h>
#include <string.h>

/* Parts of one load must describe the same requests and stages, or adding them would add
 * unrelated figures: checked before anything is touched, so a refused part leaves dst as it
 * was. */
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
    return 0;
}

int load_result_merge(struct load_result *dst, const struct load_result *src,
                      const struct profile_thresholds *t, char *err)
{
    int rc = check_same_shape(dst, src, err);
    if (rc)
        return rc;
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
    return 0;
}
