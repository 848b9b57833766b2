/* Tests for src/load/hist.c: every reported percentile within 1% of the exact one computed
 * from the sorted samples, on random and adversarial data; exact min/max/mean; merge equal to
 * one histogram over the union, bucket for bucket. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/hist.h"

static const double qs[] = {0,  0.1, 1,  5,    10,   25,    50,  75,
                            90, 95,  99, 99.5, 99.9, 99.99, 100, 33.333};

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Records vals into a fresh histogram and checks it against the exact statistics of the
 * same samples (clamped to 1 h, as the histogram promises). */
static void check_against_exact(const uint64_t *vals, size_t n, const char *what)
{
    struct hist *h = malloc(sizeof(*h));
    uint64_t *sorted = malloc(n * sizeof(*sorted));
    assert_non_null(h);
    assert_non_null(sorted);
    hist_init(h);
    uint64_t sum = 0, over = 0;
    for (size_t i = 0; i < n; i++) {
        hist_record(h, vals[i]);
        sorted[i] = vals[i] > HIST_MAX_US ? HIST_MAX_US : vals[i];
        over += vals[i] > HIST_MAX_US;
        sum += sorted[i];
    }
    qsort(sorted, n, sizeof(*sorted), cmp_u64);

    assert_int_equal(h->count, n);
    assert_int_equal(h->overflow, over);
    assert_int_equal(h->min_us, sorted[0]);
    assert_int_equal(h->max_us, sorted[n - 1]);
    assert_int_equal(h->sum_us, sum);
    assert_true(fabs(hist_mean(h) - (double)sum / (double)n) < 1e-9 * ((double)sum / n + 1));

    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        double rank = ceil(qs[i] / 100.0 * (double)n);
        size_t r = rank < 1 ? 1 : (size_t)rank;
        if (r > n)
            r = n;
        uint64_t exact = sorted[r - 1];
        uint64_t got = hist_percentile(h, qs[i]);
        double diff = fabs((double)got - (double)exact);
        if (diff > 0.01 * (double)exact)
            fail_msg("%s: p%g = %llu, exact %llu (n=%zu)", what, qs[i], (unsigned long long)got,
                     (unsigned long long)exact, n);
    }
    assert_int_equal(hist_percentile(h, 0), sorted[0]);
    assert_int_equal(hist_percentile(h, 100), sorted[n - 1]);
    free(sorted);
    free(h);
}

static void test_empty(void **state)
{
    (void)state;
    struct hist h;
    hist_init(&h);
    assert_int_equal(h.count, 0);
    assert_int_equal(hist_percentile(&h, 50), 0);
    assert_int_equal(hist_percentile(&h, 100), 0);
    assert_true(hist_mean(&h) == 0);
}

/* The layout itself: buckets tile [0, 1 h] without gaps or overlaps, each at most 1/128 of
 * its values wide, and every bucket_of agrees with bucket_range. */
static void test_bucket_layout(void **state)
{
    (void)state;
    uint64_t prev_hi = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        hist_bucket_range(i, &lo, &hi);
        assert_true(lo <= hi);
        if (i > 0)
            assert_int_equal(lo, prev_hi + 1);
        if (lo > HIST_MAX_US) /* buckets past 1 h exist in the layout but are never used */
            break;
        assert_int_equal(hist_bucket_of(lo), i);
        if (hi <= HIST_MAX_US)
            assert_int_equal(hist_bucket_of(hi), i);
        if (lo >= 256)
            assert_true((hi - lo + 1) * 128 <= lo);
        else
            assert_int_equal(lo, hi); /* below 256 us every value has its own bucket */
        prev_hi = hi;
    }
    assert_true(prev_hi >= HIST_MAX_US);
    assert_int_equal(hist_bucket_of(HIST_MAX_US), hist_bucket_of(UINT64_MAX));
    assert_true(hist_bucket_of(HIST_MAX_US) < HIST_BUCKETS);
}

static void test_random_uniform(void **state)
{
    (void)state;
    uint64_t seed = 42;
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = 1 + rng_next(&seed) % 1000000;
    check_against_exact(v, n, "uniform 1us..1s");
    free(v);
}

/* Log-uniform over the whole range: every octave gets samples. */
static void test_random_log(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (size_t n = 1; n <= 100000; n *= 10) {
        uint64_t *v = malloc(n * sizeof(*v));
        assert_non_null(v);
        for (size_t i = 0; i < n; i++) {
            double e = (double)(rng_next(&seed) % 1000000) / 1e6 * log(3.6e9);
            v[i] = (uint64_t)exp(e);
        }
        check_against_exact(v, n, "log-uniform 1us..1h");
        free(v);
    }
}

/* Latencies as they look from an overloaded server: mostly fast, a few very slow. */
static void test_bimodal(void **state)
{
    (void)state;
    uint64_t seed = 99;
    size_t n = 50000;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (rng_next(&seed) % 100 < 97) ? 800 + rng_next(&seed) % 400
                                            : 1000000 + rng_next(&seed) % 50000;
    check_against_exact(v, n, "bimodal");
    free(v);
}

static void test_constants(void **state)
{
    (void)state;
    static const uint64_t cs[] = {
        0,          1,    2,     127,    128,    255,       256,
        257,        1000, 99999, 100000, 100001, 123456789, HIST_MAX_US - 1,
        HIST_MAX_US};
    uint64_t v[1000];
    for (size_t c = 0; c < sizeof(cs) / sizeof(cs[0]); c++) {
        for (size_t i = 0; i < 1000; i++)
            v[i] = cs[c];
        check_against_exact(v, 1000, "constant");
        /* A constant is reported exactly: min and max clamp the bucket's midpoint. */
        struct hist h;
        hist_init(&h);
        for (size_t i = 0; i < 10; i++)
            hist_record(&h, cs[c]);
        for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
            assert_int_equal(hist_percentile(&h, qs[i]), cs[c]);
    }
}

static void test_powers_of_two(void **state)
{
    (void)state;
    uint64_t v[3 * 33];
    size_t n = 0;
    for (int k = 0; k <= 32; k++) {
        uint64_t p = (uint64_t)1 << k;
        v[n++] = p - 1;
        v[n++] = p;
        v[n++] = p + 1;
    }
    check_against_exact(v, n, "powers of two");
    /* Each value alone, too: the worst case of a bucket's midpoint is its edge. */
    for (size_t i = 0; i < n; i++) {
        uint64_t two[2] = {v[i], v[i] / 2};
        check_against_exact(two, 2, "power of two pair");
    }
}

/* Samples at both edges of every bucket, mixed with a value far away so min/max clamping
 * cannot hide a bad midpoint. */
static void test_bucket_edges(void **state)
{
    (void)state;
    size_t n = 0;
    uint64_t *v = malloc(3 * HIST_BUCKETS * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        hist_bucket_range(i, &lo, &hi);
        v[n++] = lo;
        v[n++] = hi > HIST_MAX_US ? HIST_MAX_US : hi;
        uint64_t pair[3] = {0, lo, HIST_MAX_US};
        check_against_exact(pair, 3, "bucket low edge");
        pair[1] = hi;
        check_against_exact(pair, 3, "bucket high edge");
    }
    check_against_exact(v, n, "all bucket edges");
    free(v);
}

static void test_extremes(void **state)
{
    (void)state;
    uint64_t one_us[5] = {1, 1, 1, 1, 1};
    check_against_exact(one_us, 5, "1 us");
    uint64_t one_h[3] = {HIST_MAX_US, HIST_MAX_US, 1};
    check_against_exact(one_h, 3, "1 h");
    uint64_t above[6] = {HIST_MAX_US + 1, UINT64_MAX, 10ULL * HIST_MAX_US, 5, 5000, 5000000};
    check_against_exact(above, 6, "above 1 h");

    struct hist h;
    hist_init(&h);
    hist_record(&h, UINT64_MAX);
    hist_record(&h, HIST_MAX_US + 1);
    hist_record(&h, HIST_MAX_US);
    assert_int_equal(h.overflow, 2);
    assert_int_equal(h.max_us, HIST_MAX_US);
    assert_int_equal(h.sum_us, 3 * HIST_MAX_US);
    assert_int_equal(hist_percentile(&h, 50), HIST_MAX_US);
}

static void test_merge_exact(void **state)
{
    (void)state;
    struct hist *parts = malloc(4 * sizeof(*parts));
    struct hist *all = malloc(sizeof(*all));
    struct hist *merged = malloc(sizeof(*merged));
    assert_non_null(parts);
    assert_non_null(all);
    assert_non_null(merged);
    uint64_t seed = 1234;
    hist_init(all);
    hist_init(merged);
    for (int i = 0; i < 4; i++)
        hist_init(&parts[i]);
    for (size_t i = 0; i < 100000; i++) {
        uint64_t v = rng_next(&seed) >> (rng_next(&seed) % 64);
        hist_record(all, v);
        hist_record(&parts[rng_next(&seed) % 3], v); /* parts[3] stays empty */
    }
    for (int i = 0; i < 4; i++)
        hist_merge(merged, &parts[i]);
    assert_int_equal(merged->count, all->count);
    assert_int_equal(merged->sum_us, all->sum_us);
    assert_int_equal(merged->min_us, all->min_us);
    assert_int_equal(merged->max_us, all->max_us);
    assert_int_equal(merged->overflow, all->overflow);
    for (size_t b = 0; b < HIST_BUCKETS; b++) {
        if (merged->buckets[b] != all->buckets[b])
            fail_msg("bucket %zu: merged %llu, one histogram %llu", b,
                     (unsigned long long)merged->buckets[b], (unsigned long long)all->buckets[b]);
    }
    assert_memory_equal(merged, all, sizeof(*all));
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
        assert_int_equal(hist_percentile(merged, qs[i]), hist_percentile(all, qs[i]));

    /* Merging an empty histogram changes nothing, and into an empty one copies. */
    struct hist *empty = &parts[3];
    hist_merge(all, empty);
    assert_memory_equal(merged, all, sizeof(*all));
    hist_merge(empty, all);
    assert_memory_equal(empty, all, sizeof(*all));
    free(parts);
    free(all);
    free(merged);
}

static void assert_hist_equal(const struct hist *a, const struct hist *b)
{
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->sum_us, b->sum_us);
    assert_int_equal(a->min_us, b->min_us);
    assert_int_equal(a->max_us, b->max_us);
    assert_int_equal(a->overflow, b->overflow);
    assert_memory_equal(a->buckets, b->buckets, sizeof(a->buckets));
}

/* Encodes h, decodes it back and checks the copy is h, field for field and bucket for bucket. */
static size_t roundtrip(const struct hist *h)
{
    uint8_t *buf = malloc(HIST_ENCODED_MAX);
    struct hist *back = malloc(sizeof(*back));
    char err[ERR_LEN] = "";
    size_t len = 0;
    assert_non_null(buf);
    assert_non_null(back);
    assert_int_equal(hist_encode(h, buf, HIST_ENCODED_MAX, &len), 0);
    assert_true(len > 0 && len <= HIST_ENCODED_MAX);
    if (hist_decode(buf, len, back, err) != 0)
        fail_msg("decode of a fresh encoding failed: %s", err);
    assert_hist_equal(back, h);
    /* One byte short of the encoding is always refused. */
    size_t short_len;
    assert_int_equal(hist_encode(h, buf, len - 1, &short_len), -ENOSPC);
    free(buf);
    free(back);
    return len;
}

static void test_encode_roundtrip(void **state)
{
    (void)state;
    struct hist *h = malloc(sizeof(*h));
    assert_non_null(h);
    hist_init(h);
    assert_true(roundtrip(h) <= 16); /* empty: a few varints */
    hist_record(h, 0);
    roundtrip(h);
    hist_record(h, UINT64_MAX); /* overflow and the largest bucket */
    roundtrip(h);

    /* A realistic run: 100k latencies between 1 and 100 ms encode to a few kB at most. */
    uint64_t seed = 5;
    hist_init(h);
    for (int i = 0; i < 100000; i++)
        hist_record(h, 1000 + rng_next(&seed) % 99000);
    size_t len = roundtrip(h);
    assert_true(len < 4096);

    /* Every bucket used, with counts that need every varint length. */
    hist_init(h);
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        uint64_t lo, hi;
        hist_bucket_range(i, &lo, &hi);
        if (lo > HIST_MAX_US)
            break;
        hist_record(h, lo);
        h->buckets[i] += (uint64_t)1 << (i % 56);
        h->count += (uint64_t)1 << (i % 56);
        h->sum_us += ((uint64_t)1 << (i % 56)) * lo; /* keep the sum consistent */
    }
    roundtrip(h);
    free(h);
}

/* Per-thread histograms shipped as bytes (the distributed-load path) merge exactly. */
static void test_merge_after_decode(void **state)
{
    (void)state;
    struct hist *parts = malloc(3 * sizeof(*parts));
    struct hist *all = malloc(sizeof(*all)), *merged = malloc(sizeof(*merged));
    struct hist *dec = malloc(sizeof(*dec));
    uint8_t *buf = malloc(HIST_ENCODED_MAX);
    assert_true(parts && all && merged && dec && buf);
    uint64_t seed = 77;
    hist_init(all);
    hist_init(merged);
    for (int i = 0; i < 3; i++)
        hist_init(&parts[i]);
    for (int i = 0; i < 60000; i++) {
        uint64_t v = rng_next(&seed) >> (20 + rng_next(&seed) % 44);
        hist_record(all, v);
        hist_record(&parts[i % 3], v);
    }
    for (int i = 0; i < 3; i++) {
        size_t len;
        char err[ERR_LEN];
        assert_int_equal(hist_encode(&parts[i], buf, HIST_ENCODED_MAX, &len), 0);
        assert_int_equal(hist_decode(buf, len, dec, err), 0);
        hist_merge(merged, dec);
    }
    assert_hist_equal(merged, all);
    free(parts);
    free(all);
    free(merged);
    free(dec);
    free(buf);
}

static void test_decode_malformed(void **state)
{
    (void)state;
    struct hist *h = malloc(sizeof(*h)), *out = malloc(sizeof(*out));
    uint8_t *buf = malloc(HIST_ENCODED_MAX + 16);
    char err[ERR_LEN];
    size_t len;
    assert_true(h && out && buf);
    hist_init(h);
    for (uint64_t v = 1; v < 5000000; v = v * 3 + 1)
        hist_record(h, v);
    assert_int_equal(hist_encode(h, buf, HIST_ENCODED_MAX, &len), 0);

    /* Every truncation fails, and leaves the output empty. */
    for (size_t l = 0; l < len; l++) {
        assert_int_equal(hist_decode(buf, l, out, err), -EINVAL);
        assert_int_equal(out->count, 0);
    }
    /* A trailing byte. */
    buf[len] = 0;
    assert_int_equal(hist_decode(buf, len + 1, out, err), -EINVAL);
    /* Unknown version. */
    buf[0] = 2;
    assert_int_equal(hist_decode(buf, len, out, err), -EINVAL);
    assert_non_null(strstr(err, "version 2"));
    buf[0] = 1;
    /* Any single flipped bit either fails or yields a self-consistent histogram. */
    for (size_t i = 1; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            if (hist_decode(buf, len, out, err) == 0) {
                uint64_t total = 0;
                for (size_t b = 0; b < HIST_BUCKETS; b++)
                    total += out->buckets[b];
                assert_int_equal(total, out->count);
                assert_true(out->min_us <= out->max_us);
            }
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
    assert_int_equal(hist_decode(buf, len, out, err), 0);

    /* Hand-made lies: count that does not match, a zero-count bucket, an index past the end,
     * min outside the first bucket, a non-canonical varint, an 11-byte varint. */
    static const struct {
        uint8_t bytes[24];
        size_t len;
        const char *why;
    } lies[] = {
        {{1, 2, 20, 10, 10, 0, 1, 10, 1}, 9, "count 2, buckets hold 1"},
        {{1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 1, 5, 0},
         18,
         "zero-count bucket"},
        {{1, 1, 5, 5, 5, 0, 1, 0x80, 0x1a, 1}, 10, "bucket index 3328"},
        {{1, 1, 6, 6, 6, 0, 1, 5, 1}, 9, "min 6 in bucket 5"},
        {{1, 1, 5, 5, 5, 0, 1, 0x85, 0x00, 1}, 10, "non-canonical varint"},
        {{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 11, "11-byte varint"},
        {{1, 1, 9, 5, 5, 0, 1, 5, 1}, 9, "sum 9 for one sample of 5"},
        {{1, 1, 5, 5, 5, 1, 1, 5, 1}, 9, "overflow with max below 1 h"},
        {{1, 0, 0, 0, 0, 0, 0}, 7, "empty with min 0"},
    };
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
        if (hist_decode(lies[i].bytes, lies[i].len, out, err) != -EINVAL)
            fail_msg("decode accepted: %s", lies[i].why);
    }
    /* And the same shapes told truthfully are accepted. */
    static const uint8_t truth[] = {1, 1, 5, 5, 5, 0, 1, 5, 1};
    assert_int_equal(hist_decode(truth, sizeof(truth), out, err), 0);
    assert_int_equal(out->count, 1);
    assert_int_equal(out->buckets[5], 1);
    assert_int_equal(hist_percentile(out, 50), 5);
    free(h);
    free(out);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_bucket_layout),
        cmocka_unit_test(test_random_uniform),
        cmocka_unit_test(test_random_log),
        cmocka_unit_test(test_bimodal),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_powers_of_two),
        cmocka_unit_test(test_bucket_edges),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_merge_exact),
        cmocka_unit_test(test_encode_roundtrip),
        cmocka_unit_test(test_merge_after_decode),
        cmocka_unit_test(test_decode_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
