#include "load/hist.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
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

/* ---- serialisation ----------------------------------------------------------------------- */

#define HIST_FORMAT_V1 1

static int put_varint(uint8_t *buf, size_t cap, size_t *pos, uint64_t v)
{
    do {
        if (*pos >= cap)
            return -ENOSPC;
        uint8_t b = v & 0x7f;
        v >>= 7;
        buf[(*pos)++] = b | (v ? 0x80 : 0);
    } while (v);
    return 0;
}

static int get_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*pos >= len)
            return -EINVAL;
        uint8_t b = buf[(*pos)++];
        /* The tenth byte may only carry the top bit of a 64-bit value, and a last byte of 0
         * after the first would be a second spelling of a shorter number: one value, one
         * encoding, so decode and encode are exact inverses. */
        if ((shift == 63 && b > 1) || (shift > 0 && b == 0))
            return -EINVAL;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -EINVAL;
}

int hist_encode(const struct hist *h, uint8_t *buf, size_t cap, size_t *len)
{
    size_t pos = 0, nnz = 0;
    int rc;

    for (size_t i = 0; i < HIST_BUCKETS; i++)
        nnz += h->buckets[i] != 0;
    if (cap < 1)
        return -ENOSPC;
    buf[pos++] = HIST_FORMAT_V1;
    if ((rc = put_varint(buf, cap, &pos, h->count)) ||
        (rc = put_varint(buf, cap, &pos, h->sum_us)) ||
        (rc = put_varint(buf, cap, &pos, h->min_us)) ||
        (rc = put_varint(buf, cap, &pos, h->max_us)) ||
        (rc = put_varint(buf, cap, &pos, h->overflow)) || (rc = put_varint(buf, cap, &pos, nnz)))
        return rc;
    size_t next = 0; /* the first index the next gap counts from */
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        if (!h->buckets[i])
            continue;
        if ((rc = put_varint(buf, cap, &pos, i - next)) ||
            (rc = put_varint(buf, cap, &pos, h->buckets[i])))
            return rc;
        next = i + 1;
    }
    *len = pos;
    return 0;
}

int hist_decode(const uint8_t *buf, size_t len, struct hist *h, char *err)
{
    uint64_t count, sum, min, max, overflow, nnz, total = 0;
    size_t pos = 0, next = 0, first = HIST_BUCKETS, last = 0;

    hist_init(h);
    if (len < 1)
        return err_set(err, -EINVAL, "histogram: empty");
    if (buf[pos++] != HIST_FORMAT_V1)
        return err_set(err, -EINVAL, "histogram: unknown format version %u", buf[0]);
    if (get_varint(buf, len, &pos, &count) || get_varint(buf, len, &pos, &sum) ||
        get_varint(buf, len, &pos, &min) || get_varint(buf, len, &pos, &max) ||
        get_varint(buf, len, &pos, &overflow) || get_varint(buf, len, &pos, &nnz))
        return err_set(err, -EINVAL, "histogram: truncated or malformed header");
    if (nnz > HIST_BUCKETS)
        return err_set(err, -EINVAL, "histogram: %llu buckets, at most %u", (unsigned long long)nnz,
                       HIST_BUCKETS);
    for (uint64_t k = 0; k < nnz; k++) {
        uint64_t gap, n;
        if (get_varint(buf, len, &pos, &gap) || get_varint(buf, len, &pos, &n))
            goto bad_bucket;
        if (gap >= HIST_BUCKETS - next || n == 0 || n > UINT64_MAX - total)
            goto bad_bucket;
        size_t idx = next + (size_t)gap;
        h->buckets[idx] = n;
        total += n;
        if (first == HIST_BUCKETS)
            first = idx;
        last = idx;
        next = idx + 1;
    }
    if (pos != len)
        goto bad;
    if (total != count || overflow > count)
        goto bad;
    if (count == 0) {
        if (sum || min != UINT64_MAX || max)
            goto bad;
        return 0;
    }
    /* min and max must lie in the first and last used buckets, and the sum between
     * count * min and count * max (compared by division, so nothing overflows). */
    if (max > HIST_MAX_US || min > max || hist_bucket_of(min) != first ||
        hist_bucket_of(max) != last || (overflow && max != HIST_MAX_US))
        goto bad;
    uint64_t mean_floor = sum / count, mean_ceil = mean_floor + (sum % count != 0);
    if (mean_floor < min || mean_ceil > max)
        goto bad;
    h->count = count;
    h->sum_us = sum;
    h->min_us = min;
    h->max_us = max;
    h->overflow = overflow;
    return 0;

bad_bucket:
    hist_init(h);
    return err_set(err, -EINVAL, "histogram: malformed bucket list");
bad:
    hist_init(h);
    return err_set(err, -EINVAL, "histogram: inconsistent counts, bounds or sum");
}

/* ---- base64 (RFC 4648, with padding): how JSON carries an encoded histogram ---------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Returns an owned NUL-terminated base64 string, or NULL when out of memory. */
static char *b64_encode(const uint8_t *in, size_t len)
{
    char *out = malloc((len + 2) / 3 * 4 + 1);
    size_t o = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        out[o++] = b64[(v >> 18) & 63];
        out[o++] = b64[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static int b64_val(char ch)
{
    const char *p = ch ? strchr(b64, ch) : NULL;
    return p ? (int)(p - b64) : -1;
}

/* Strict decoding (padding only at the end, no whitespace) of n characters into out (cap
 * bytes). */
static int b64_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *len)
{
    size_t o = 0;
    if (n % 4)
        return -EINVAL;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++)
            v[k] = b64_val(in[i + k]);
        bool last = i + 4 == n;
        int pad = (in[i + 3] == '=') + (in[i + 2] == '=');
        if (v[0] < 0 || v[1] < 0 || (pad && !last) || (pad == 1 && in[i + 2] == '=') ||
            (pad < 2 && v[2] < 0) || (pad < 1 && v[3] < 0))
            return -EINVAL;
        uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
                     (uint32_t)(pad < 2 ? v[2] : 0) << 6 | (uint32_t)(pad < 1 ? v[3] : 0);
        /* Bits a shorter encoding would leave zero must be zero: one spelling per value. */
        if ((pad == 1 && (x & 0xff)) || (pad == 2 && (x & 0xffff)))
            return -EINVAL;
        if (o + 3 - (size_t)pad > cap)
            return -EINVAL;
        out[o++] = (uint8_t)(x >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(x >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)x;
    }
    *len = o;
    return 0;
}

char *hist_b64_encode(const struct hist *h)
{
    uint8_t *buf = malloc(HIST_ENCODED_MAX);
    size_t len;
    char *enc = NULL;
    if (buf && hist_encode(h, buf, HIST_ENCODED_MAX, &len) == 0)
        enc = b64_encode(buf, len);
    free(buf);
    return enc;
}

int hist_b64_decode(const char *s, struct hist *h, char *err)
{
    size_t n = strlen(s), len;
    int rc;

    hist_init(h);
    if (n > (HIST_ENCODED_MAX + 2) / 3 * 4)
        return err_set(err, -EINVAL, "not valid base64");
    uint8_t *buf = malloc(HIST_ENCODED_MAX);
    if (!buf)
        return err_set(err, -ENOMEM, "out of memory");
    if (b64_decode(s, n, buf, HIST_ENCODED_MAX, &len) != 0)
        rc = err_set(err, -EINVAL, "not valid base64");
    else
        rc = hist_decode(buf, len, h, err);
    free(buf);
    return rc;
}
