/* libFuzzer target: the progress document (state.json) a restarted operator reads back from a
 * ConfigMap anyone with access could have edited. Whatever is accepted must name only the
 * sweep's own variants, in order, with sane numbers, capacity results included. */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operator/job_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CONFIGS "1@0.5/256Mi 2@1/512Mi 4@2/1Gi"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct variant_list all;
    static int ready;
    struct advisor_row *prior = NULL;
    size_t n = 0;

    if (!ready) {
        if (variant_parse_list(CONFIGS, &all, NULL) != 0)
            abort();
        ready = 1;
    }
    if (size > 65536)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (job_progress_parse(text, "s", "u", CONFIGS, &all, &prior, &n) == 0) {
        if (n > all.n)
            abort();
        for (size_t i = 0; i < n; i++) {
            if (strcmp(prior[i].variant.spec, all.items[i].spec) != 0)
                abort();
            if (!isfinite(prior[i].throughput_rps) || !isfinite(prior[i].error_rate))
                abort();
            const struct capacity_result *c = &prior[i].cap;
            if (c->nsteps > CAPACITY_MAX_STEPS || c->interval.n > CAPACITY_MAX_REPEATS ||
                !isfinite(c->rps) || !isfinite(c->interval.low) || !isfinite(c->interval.high))
                abort();
            /* A marked figure is never valid, whatever the document claims. */
            if (c->valid && (c->flags & ~CAPACITY_FLAG_TOO_FEW_REPEATS))
                abort();
            for (size_t k = 0; k < c->nsteps; k++)
                if (!isfinite(c->steps[k].offered_rps) || c->steps[k].error_rate > 1 ||
                    c->steps[k].kind > CAPACITY_STEP_REPEAT)
                    abort();
        }
    } else if (prior || n) {
        abort();
    }
    /* The scale-out's points: rising replica counts from 1, sane figures, never a contended
     * point read as valid. */
    struct sweep_scale_out so;
    char spec[VARIANT_TOKEN_MAX + 1];
    if (job_progress_scale_out(text, &so, spec, sizeof(spec)) == 0) {
        if (!so.run || so.npoints < 1 || so.npoints > PLATFORM_MAX_REPLICAS ||
            so.points[0].replicas != 1 || !spec[0])
            abort();
        for (size_t i = 0; i < so.npoints; i++) {
            const struct sweep_scale_point *pt = &so.points[i];
            if ((i && pt->replicas <= so.points[i - 1].replicas) ||
                pt->replicas > PLATFORM_MAX_REPLICAS || !isfinite(pt->cap.rps) ||
                pt->from > SWEEP_POINT_FAILED ||
                ((pt->flags & SWEEP_FLAG_CONTENDED) && pt->cap.valid))
                abort();
        }
    } else if (so.run || so.npoints) {
        abort();
    }
    free(prior);
    free(text);
    return 0;
}
