#include "load/hist.h"

#include <string.h>

/* Bucket layout. With s = max(msb(v), 7) - 7, a value v falls in bucket (s << 7) + (v >> s):
 * for v < 256 that is v itself (exact), and each later octave [2^k, 2^(k+1)) is cut into 128
 * buckets of width 2^(k-7), i.e. at most 1/128 of the values they hold. Reporting a bucket's
 * midpoint therefore errs by at most 1/256 (0.4%), well inside the promised 1%. The layout is
 * one clz, one shift and one add: no branch on the value's size, no table. */

#define SUB_COUNT (1u << HIST_SUB_BITS)

static inline unsigned shift_of(uint64_t us)
{
    /* OR-ing in 2^7 makes the most significant bit at least 7, so s >= 0 and clz never sees 0. */
    return (unsigned)(63 - __builtin_clzll(us | SUB_COUNT)) - HIST_SUB_BITS;
}

size_t hist_bucket_of(uint64_t us)
{
    if (us > HIST_MAX_US)
        us = HIST_MAX_US;
    unsigned s = shift_of(us);
    return ((size_t)s << HIST_SUB_BITS) + (size_t)(us >> s);
}

void hist_bucket_range(size_t idx, uint64_t *lo, uint64_t *hi)
{
    if (idx >= HIST_BUCKETS)
        idx = HIST_BUCKETS - 1;
    if (idx < 2 * SUB_COUNT) {
        *lo = *hi = idx;
        return;
    }
    unsigned s = (unsigned)(idx >> HIST_SUB_BITS) - 1;
    uint64_t sub = idx - ((size_t)s << HIST_SUB_BITS); /* in [128, 256) */
    *lo = sub << s;
    *hi = *lo + ((uint64_t)1 << s) - 1;
}

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_us = UINT64_MAX;
}

void hist_record(struct hist *h, uint64_t us)
{
    if (__builtin_expect(us > HIST_MAX_US, 0)) {
        us = HIST_MAX_US;
        h->overflow++;
    }
    unsigned s = shift_of(us);
    h->buckets[((size_t)s << HIST_SUB_BITS) + (size_t)(us >> s)]++;
    h->count++;
    h->sum_us += us;
    if (us < h->min_us)
        h->min_us = us;
    if (us > h->max_us)
        h->max_us = us;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->count == 0)
        return;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum_us += src->sum_us;
    dst->overflow += src->overflow;
    if (src->min_us < dst->min_us)
        dst->min_us = src->min_us;
    if (src->max_us > dst->max_us)
        dst->max_us = src->max_us;
}

uint64_t hist_percentile(const struct hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (!(q > 0)) /* also catches NaN */
        return h->min_us;
    if (q >= 100)
        return h->max_us;

    /* Rank of the wanted sample, 1-based: ceil(q/100 * count), at least 1. The product is
     * computed in long double so counts near 2^53 do not lose the last rank. */
    long double exact = (long double)q / 100.0L * (long double)h->count;
    uint64_t rank = (uint64_t)exact;
    if ((long double)rank < exact)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;

    uint64_t seen = 0;
    size_t i = hist_bucket_of(h->min_us);
    for (; i < HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank)
            break;
    }
    if (i >= HIST_BUCKETS) /* cannot happen when the counts agree; stay defined anyway */
        return h->max_us;
    uint64_t lo, hi;
    hist_bucket_range(i, &lo, &hi);
    uint64_t v = lo + (hi - lo) / 2;
    if (v < h->min_us)
        v = h->min_us;
    if (v > h->max_us)
        v = h->max_us;
    return v;
}

double hist_mean(const struct hist *h)
{
    if (h->count == 0)
        return 0;
    return (double)h->sum_us / (double)h->count;
}
