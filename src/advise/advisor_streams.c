/* The advisor's findings on a stream-capacity sweep: which limit bound each variant, what one
 * more stream costs, and where the delivery latency bent past its objective. Every number a
 * sentence compares against is a constant below or in advisor.h, formatted from it. */

#include <stdio.h>
#include <string.h>

#include "core/fmt.h"
#include "advise/advisor_int.h"
#include "sweep/stream_search.h"

/* A resource at least this share of its limit at the stream capacity was the one running out:
 * CPU past it is CPU-bound (delivery waits for the CPU), memory past it memory-bound. */
#define STREAM_BOUND_SHARE 0.90

/* Which limit ended one variant's search, in words, into buf. */
static void binding(const struct advisor_row *r, char *buf, size_t len)
{
    const struct stream_capacity *c = &r->scap;
    char n[FMT_LEN], m[FMT_LEN], lim[QTY_LEN];
    double cpu_share = c->cpu_cores >= 0 ? c->cpu_cores / cores_of(r) : -1;
    double mem_share =
        c->memory_bytes >= 0 ? (double)c->memory_bytes / (double)r->variant.memory_bytes : -1;

    fmt_count(c->streams, n);
    if (c->limited_by == STREAM_LIMIT_MEMORY || mem_share >= STREAM_BOUND_SHARE)
        snprintf(buf, len, "%s: memory (%s of its %s at %s streams%s)", r->variant.label,
                 c->memory_bytes >= 0 ? fmt_bytes((uint64_t)c->memory_bytes, m) : "?",
                 mem_txt(r->variant.memory_bytes, lim), n,
                 c->limited_by == STREAM_LIMIT_MEMORY ? ", OOM-killed above" : "");
    else if (cpu_share >= STREAM_BOUND_SHARE)
        snprintf(buf, len,
                 "%s: CPU (%.2f of %.2f cores, %.0f%%, at %s streams; the search ended on %s)",
                 r->variant.label, c->cpu_cores, cores_of(r), cpu_share * 100, n,
                 stream_limit_name(c->limited_by));
    else
        snprintf(buf, len,
                 "%s: neither CPU nor memory (%.0f%% of its cores, %.0f%% of its memory at %s "
                 "streams, both below %.0f%%); the search ended on %s",
                 r->variant.label, cpu_share * 100, mem_share * 100, n, PCT(STREAM_BOUND_SHARE),
                 stream_limit_name(c->limited_by));
}

/* Least-squares slope of delivery p95 (ms) against streams over the passing steps that hold
 * streams; false with fewer than two distinct counts. */
static bool delivery_slope(const struct stream_capacity *c, double *ms_per_stream)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t k = 0;
    for (size_t i = 0; i < c->nsteps && i < STREAM_CAP_MAX_STEPS; i++) {
        const struct stream_cap_step *st = &c->steps[i];
        if (!st->pass || st->streams == 0 || st->delivery_samples == 0)
            continue;
        double x = st->streams, y = (double)st->delivery_p95_us / 1e3;
        sx += x, sy += y, sxx += x * x, sxy += x * y;
        k++;
    }
    double den = (double)k * sxx - sx * sx;
    if (k < 2 || !(den > 0))
        return false;
    *ms_per_stream = ((double)k * sxy - sx * sy) / den;
    return true;
}

/* The bend: the first step that missed delivery, and the highest passing count below it. */
static void bend(const struct advisor_row *r, int64_t slo_us, struct advice *a)
{
    const struct stream_capacity *c = &r->scap;
    char n1[FMT_LEN], n2[FMT_LEN], l1[FMT_LEN], l2[FMT_LEN], s[FMT_LEN];

    for (size_t i = 0; i < c->nsteps && i < STREAM_CAP_MAX_STEPS; i++) {
        const struct stream_cap_step *f = &c->steps[i];
        if (f->pass || f->why != STREAM_LIMIT_DELIVERY_P95)
            continue;
        const struct stream_cap_step *p = NULL;
        for (size_t j = 0; j < c->nsteps && j < STREAM_CAP_MAX_STEPS; j++)
            if (c->steps[j].pass && c->steps[j].streams > 0 && c->steps[j].streams < f->streams &&
                (!p || c->steps[j].streams > p->streams))
                p = &c->steps[j];
        if (p)
            advisor__finding(a,
                             "Delivery latency bends on %s between %s streams (p95 %s) and %s "
                             "streams (p95 %s, past the %s objective).",
                             r->variant.label, fmt_count(p->streams, n1),
                             fmt_latency(p->delivery_p95_us, l1), fmt_count(f->streams, n2),
                             fmt_latency(f->delivery_p95_us, l2), fmt_latency((uint64_t)slo_us, s));
        else
            advisor__finding(a,
                             "Delivery latency on %s was past the %s objective from the first "
                             "step that missed it, at %s streams (p95 %s).",
                             r->variant.label, fmt_latency((uint64_t)slo_us, s),
                             fmt_count(f->streams, n2), fmt_latency(f->delivery_p95_us, l2));
        return;
    }
}

void advisor__find_streams(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                           struct advice *a)
{
    char text[ADVISOR_TEXT_LEN] = "", one[ADVISOR_TEXT_LEN], b[FMT_LEN], base[FMT_LEN];
    struct advisor_list l = {.sep = "; "};

    for (size_t i = 0; i < n; i++) {
        if (!rows[i].scap.searched || rows[i].scap.streams == 0)
            continue;
        binding(&rows[i], one, sizeof(one));
        advisor__list_add(&l, "%s", one);
    }
    if (l.named + l.more)
        advisor__finding(a, "Binding limit at the stream capacity: %s.", advisor__list_end(&l));
    for (size_t i = 0; i < n; i++) {
        const struct stream_capacity *c = &rows[i].scap;
        double slope;
        if (!c->searched || c->streams == 0)
            continue;
        text[0] = '\0';
        if (c->memory_per_stream_bytes >= 0 && c->base_memory_bytes >= 0)
            text_catf(text, sizeof(text), "%s of memory (a line through %u points above a %s base)",
                      fmt_bytes((uint64_t)c->memory_per_stream_bytes, b), c->memory_points,
                      fmt_bytes((uint64_t)c->base_memory_bytes, base));
        if (delivery_slope(c, &slope))
            text_catf(text, sizeof(text), "%s%+.2f ms of delivery p95 per 1,000 streams",
                      text[0] ? " and " : "", slope * 1000);
        if (text[0])
            advisor__finding(a, "Fan-out cost on %s: each extra stream costs %s.",
                             rows[i].variant.label, text);
        bend(&rows[i], o->delivery_slo_us, a);
    }
}
