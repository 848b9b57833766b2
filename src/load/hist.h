#ifndef SIZEUP_LOAD_HIST_H
#define SIZEUP_LOAD_HIST_H

/* Log-linear (HDR-style) latency histogram in microseconds, 1 us to 1 h, constant memory.
 * Values below 2^HIST_SUB_BITS are exact; above, each power of two is split into
 * 2^HIST_SUB_BITS equal buckets, so a reported value is within 1% of the true one.
 * Histograms merge exactly (bucket-wise addition): a merge of per-thread histograms equals one
 * histogram that saw every sample. Not thread-safe: each thread records into its own. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define HIST_SUB_BITS 7
#define HIST_MAX_US   3600000000ULL /* 1 h; larger samples are clamped and counted in overflow */
/* 2^7 exact buckets, then 2^7 buckets for each octave [2^k, 2^(k+1)) for k = 7..31. */
#define HIST_BUCKETS ((1u << HIST_SUB_BITS) * (32 - HIST_SUB_BITS + 1))
/* Largest hist_encode output: version, five header varints, the bucket count, and for every
 * bucket a 2-byte index gap and a count of up to 10 bytes. */
#define HIST_ENCODED_MAX (1 + 6 * 10 + HIST_BUCKETS * (2 + 10))

struct hist {
    uint64_t count;    /* samples recorded */
    uint64_t sum_us;   /* exact sum, for the mean */
    uint64_t min_us;   /* exact; UINT64_MAX when empty */
    uint64_t max_us;   /* exact (clamped to HIST_MAX_US) */
    uint64_t overflow; /* samples above HIST_MAX_US */
    uint64_t buckets[HIST_BUCKETS];
};

/* Empties h. */
void hist_init(struct hist *h);

/* Records one sample. Constant time, no allocation. */
void hist_record(struct hist *h, uint64_t us);

/* Adds every sample of src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);

/* Value at percentile q (0..100) in microseconds: the representative value of the bucket that
 * holds the sample of rank ceil(q/100 * count), clamped to [min, max]. 0 when empty. */
uint64_t hist_percentile(const struct hist *h, double q);

/* Exact mean in microseconds; 0 when empty. */
double hist_mean(const struct hist *h);

/* Bucket index of a value and the value range a bucket covers (for tests and serialisation). */
size_t hist_bucket_of(uint64_t us);
void hist_bucket_range(size_t idx, uint64_t *lo /* OUT */, uint64_t *hi /* OUT, inclusive */);

/* Serialises h compactly (version 1: LEB128 varints of count, sum, min, max, overflow, then
 * the non-zero buckets as index gap + count) into buf, at most cap bytes. Fills *len.
 * Returns 0, or -ENOSPC when cap is too small (HIST_ENCODED_MAX always suffices). */
int hist_encode(const struct hist *h, uint8_t *buf, size_t cap, size_t *len /* OUT */);

/* Parses what hist_encode wrote; buf is outside input and fully validated (version, sizes,
 * bucket order, counts adding up, min/max/sum consistent with the buckets, no trailing bytes).
 * Returns 0, or -EINVAL with err filled and h left empty. Borrows buf. */
int hist_decode(const uint8_t *buf, size_t len, struct hist *h /* OUT */, char *err);

/* hist_encode's bytes as an owned base64 string (RFC 4648, padded): the "latency_hist" of the
 * JSON documents. NULL when out of memory. Free with free(). */
char *hist_b64_encode(const struct hist *h);

/* Parses what hist_b64_encode wrote: strict base64 (one spelling per value, no whitespace),
 * then hist_decode. s is outside input (NUL-terminated). Returns 0, -EINVAL with err filled
 * ("not valid base64" or hist_decode's reason), or -ENOMEM; h is left empty on failure. */
int hist_b64_decode(const char *s, struct hist *h /* OUT */, char *err);

#endif
