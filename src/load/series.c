#include "load/series.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int series_rec_init(struct series_rec *r, int64_t origin_ns)
{
    memset(r, 0, sizeof(*r));
    /* calloc: the pages of slots never reached are never touched, so a 20-second run costs
     * 20 slots of resident memory, not SERIES_MAX_POINTS. */
    r->slots = calloc(SERIES_MAX_POINTS, sizeof(*r->slots));
    if (!r->slots)
        return -ENOMEM;
    r->origin_ns = origin_ns;
    r->interval_ns = SERIES_BASE_NS;
    /* An empty current interval: the first sample takes the slow path. */
    r->cur_lo = r->cur_hi = origin_ns;
    return 0;
}

void series_rec_reset(struct series_rec *r, int64_t origin_ns)
{
    r->origin_ns = origin_ns;
    r->interval_ns = SERIES_BASE_NS;
    r->n = 0;
    r->cur = NULL;
    r->cur_lo = r->cur_hi = origin_ns;
}

void series_rec_free(struct series_rec *r)
{
    if (!r)
        return;
    free(r->slots);
    memset(r, 0, sizeof(*r));
}

static void slot_init(struct series_slot *s)
{
    s->count = s->failed = 0;
    hist_init(&s->h);
}

static void slot_merge(struct series_slot *dst, const struct series_slot *src)
{
    dst->count += src->count;
    dst->failed += src->failed;
    hist_merge(&dst->h, &src->h);
}

/* Doubles r's interval: slot i becomes slots 2i and 2i+1 merged. */
static void coarsen(struct series_rec *r)
{
    size_t n = (r->n + 1) / 2;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            r->slots[i] = r->slots[2 * i];
        if (2 * i + 1 < r->n)
            slot_merge(&r->slots[i], &r->slots[2 * i + 1]);
    }
    r->n = n;
    r->interval_ns *= 2;
    r->cur = NULL;
    r->cur_lo = r->cur_hi = r->origin_ns;
}

/* Makes slots [n, idx] usable. */
static void extend(struct series_rec *r, size_t idx)
{
    while (r->n <= idx)
        slot_init(&r->slots[r->n++]);
}

struct series_slot *series__slot_slow(struct series_rec *r, int64_t t_ns)
{
    if (!r->slots || t_ns < r->origin_ns)
        return NULL;
    int64_t idx = (t_ns - r->origin_ns) / r->interval_ns;
    while (idx >= SERIES_MAX_POINTS) {
        coarsen(r);
        idx = (t_ns - r->origin_ns) / r->interval_ns;
    }
    extend(r, (size_t)idx);
    /* A time behind the current interval (a timestamp taken before the last rotation) is
     * counted where it belongs without moving the current interval back. */
    if (r->cur && t_ns < r->cur_lo)
        return &r->slots[idx];
    r->cur = &r->slots[idx];
    r->cur_lo = r->origin_ns + idx * r->interval_ns;
    r->cur_hi = r->cur_lo + r->interval_ns;
    return r->cur;
}

int series_rec_merge(struct series_rec *dst, const struct series_rec *src)
{
    if (!src->slots || !dst->slots || src->n == 0)
        return 0;
    while (dst->interval_ns < src->interval_ns)
        coarsen(dst);
    int64_t ratio = dst->interval_ns / src->interval_ns;
    for (size_t i = 0; i < src->n; i++) {
        size_t j = i / (size_t)ratio;
        extend(dst, j);
        slot_merge(&dst->slots[j], &src->slots[i]);
    }
    return 0;
}

int load_series_copy(struct load_series *dst, const struct load_series *src)
{
    *dst = *src;
    dst->pts = NULL;
    if (src->n == 0)
        return 0;
    dst->pts = malloc(src->n * sizeof(*dst->pts));
    if (!dst->pts) {
        memset(dst, 0, sizeof(*dst));
        return -ENOMEM;
    }
    memcpy(dst->pts, src->pts, src->n * sizeof(*dst->pts));
    return 0;
}

void load_series_free(struct load_series *s)
{
    if (!s)
        return;
    free(s->pts);
    memset(s, 0, sizeof(*s));
}

int series_render(struct series_rec *req, struct series_rec *delivery, int64_t duration_ns,
                  struct load_series *out)
{
    int64_t interval = SERIES_BASE_NS;

    memset(out, 0, sizeof(*out));
    if (duration_ns <= 0)
        return 0;
    if (req && req->slots && req->interval_ns > interval)
        interval = req->interval_ns;
    if (delivery && delivery->slots && delivery->interval_ns > interval)
        interval = delivery->interval_ns;
    while ((duration_ns + interval - 1) / interval > SERIES_MAX_POINTS)
        interval *= 2;
    while (req && req->slots && req->interval_ns < interval)
        coarsen(req);
    while (delivery && delivery->slots && delivery->interval_ns < interval)
        coarsen(delivery);

    size_t n = (size_t)((duration_ns + interval - 1) / interval);
    out->pts = calloc(n, sizeof(*out->pts));
    if (!out->pts)
        return -ENOMEM;
    out->n = n;
    out->interval_s = (double)interval / 1e9;
    out->delivery = delivery && delivery->slots;
    for (size_t i = 0; i < n; i++) {
        struct series_point *p = &out->pts[i];
        int64_t lo = (int64_t)i * interval, hi = lo + interval;
        p->t_s = (double)lo / 1e9;
        p->dur_s = (double)((hi < duration_ns ? hi : duration_ns) - lo) / 1e9;
        if (req && req->slots && i < req->n) {
            const struct series_slot *s = &req->slots[i];
            p->requests = s->count;
            p->failed = s->failed;
            p->p50_us = hist_percentile(&s->h, 50);
            p->p95_us = hist_percentile(&s->h, 95);
            p->p99_us = hist_percentile(&s->h, 99);
        }
        if (out->delivery && i < delivery->n) {
            const struct series_slot *s = &delivery->slots[i];
            p->frames = s->h.count;
            p->d_p50_us = hist_percentile(&s->h, 50);
            p->d_p95_us = hist_percentile(&s->h, 95);
            p->d_p99_us = hist_percentile(&s->h, 99);
        }
    }
    return 0;
}
