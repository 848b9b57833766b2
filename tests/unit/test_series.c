/* Tests for src/load/series.c and series_json.c: samples land in the interval of their time; a
 * window longer than SERIES_MAX_POINTS intervals doubles the interval and keeps every sample;
 * recorders of two threads merge into exactly what one recorder of every sample holds, even
 * at different intervals; the rendered points add up to the totals and keep the fixed-size
 * rule; the JSON round-trips (with each point's histogram when asked: exactly) and refuses
 * malformed input, histograms included. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "load/series.h"

#define S SERIES_BASE_NS

static void rec(struct series_rec *r, int64_t t, uint64_t us, int failed)
{
    struct series_slot *sl = series_slot(r, t);
    assert_non_null(sl);
    sl->count++;
    sl->failed += (uint64_t)failed;
    hist_record(&sl->h, us);
}

static void test_slots_by_second(void **state)
{
    (void)state;
    struct series_rec r;
    const int64_t origin = 5 * S; /* the window starts 5 s into the clock */
    assert_int_equal(series_rec_init(&r, origin), 0);
    assert_null(series_slot(&r, origin - 1)); /* before the window: not recorded */
    rec(&r, origin, 100, 0);
    rec(&r, origin + S - 1, 200, 1);
    rec(&r, origin + S, 300, 0);
    rec(&r, origin + 3 * S + 5, 400, 0);
    rec(&r, origin + 10, 500, 0); /* a timestamp behind the current interval */
    assert_int_equal(r.interval_ns, S);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.slots[0].count, 3);
    assert_int_equal(r.slots[0].failed, 1);
    assert_int_equal(r.slots[1].count, 1);
    assert_int_equal(r.slots[2].count, 0);
    assert_int_equal(r.slots[3].count, 1);
    assert_int_equal(r.slots[3].h.max_us, 400);
    series_rec_free(&r);
    series_rec_free(&r); /* idempotent */
}

static void test_long_window_coarsens(void **state)
{
    (void)state;
    struct series_rec r;
    assert_int_equal(series_rec_init(&r, 0), 0);
    /* One sample per second for 600 s: 120 points of 1 s cannot hold it; 8 s can (75). */
    for (int64_t s = 0; s < 600; s++)
        rec(&r, s * S + S / 2, (uint64_t)s + 1, s % 2);
    assert_true(r.n <= SERIES_MAX_POINTS);
    assert_int_equal(r.interval_ns, 8 * S);
    uint64_t total = 0, failed = 0;
    for (size_t i = 0; i < r.n; i++) {
        total += r.slots[i].count;
        failed += r.slots[i].failed;
        assert_int_equal(r.slots[i].count, r.slots[i].h.count);
    }
    assert_int_equal(total, 600);
    assert_int_equal(failed, 300);
    /* Slot 2 covers seconds 16..23: samples 17..24 microseconds. */
    assert_int_equal(r.slots[2].count, 8);
    assert_int_equal(r.slots[2].h.min_us, 17);
    assert_int_equal(r.slots[2].h.max_us, 24);

    struct load_series out;
    assert_int_equal(series_render(&r, NULL, 600 * S, &out), 0);
    assert_int_equal(out.n, 75);
    assert_true(out.interval_s == 8);
    assert_true(out.pts[74].t_s == 592);
    assert_true(out.pts[74].dur_s == 8);
    load_series_free(&out);
    series_rec_free(&r);
}

/* Two threads' recorders, one of which reached a coarser interval, merge into what a single
 * recorder of every sample holds, bucket for bucket. */
static void test_merge_exact(void **state)
{
    (void)state;
    struct series_rec a, b, all;
    assert_int_equal(series_rec_init(&a, 0), 0);
    assert_int_equal(series_rec_init(&b, 0), 0);
    assert_int_equal(series_rec_init(&all, 0), 0);
    uint64_t seed = 7;
    for (int i = 0; i < 5000; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t t = (int64_t)((seed >> 20) % (200 * (uint64_t)S)); /* 200 s: 2 s intervals */
        uint64_t us = (seed >> 8) % 100000;
        int f = (int)((seed >> 40) % 7 == 0);
        /* Thread b stops at 100 s: it stays at 1 s intervals. */
        if (i % 2 && t < 100 * S)
            rec(&b, t, us, f);
        else
            rec(&a, t, us, f);
        rec(&all, t, us, f);
    }
    assert_int_equal(b.interval_ns, S);
    assert_int_equal(a.interval_ns, 2 * S);
    assert_int_equal(series_rec_merge(&b, &a), 0); /* finer destination: coarsened first */
    assert_int_equal(b.interval_ns, all.interval_ns);
    assert_int_equal(b.n, all.n);
    for (size_t i = 0; i < all.n; i++) {
        assert_int_equal(b.slots[i].count, all.slots[i].count);
        assert_int_equal(b.slots[i].failed, all.slots[i].failed);
        assert_memory_equal(&b.slots[i].h, &all.slots[i].h, sizeof(struct hist));
    }
    series_rec_free(&a);
    series_rec_free(&b);
    series_rec_free(&all);
}

static void test_render_sums_and_partial_last(void **state)
{
    (void)state;
    struct series_rec r, d;
    assert_int_equal(series_rec_init(&r, 0), 0);
    assert_int_equal(series_rec_init(&d, 1000), 0);
    for (int i = 0; i < 350; i++)
        rec(&r, (int64_t)i * S / 100, 1000 + (uint64_t)i, i % 10 == 0);
    rec(&d, 1000 + S + 1, 42000, 0);
    struct load_series out;
    /* 3.5 s: points at 0, 1, 2 and a half-second one at 3. */
    assert_int_equal(series_render(&r, &d, 3 * S + S / 2, &out), 0);
    assert_int_equal(out.n, 4);
    assert_true(out.delivery);
    uint64_t sum = 0, failed = 0;
    for (size_t i = 0; i < out.n; i++) {
        sum += out.pts[i].requests;
        failed += out.pts[i].failed;
    }
    assert_int_equal(sum, 350);
    assert_int_equal(failed, 35);
    assert_true(fabs(out.pts[3].dur_s - 0.5) < 1e-9);
    assert_int_equal(out.pts[3].requests, 50);
    assert_int_equal(out.pts[1].frames, 1);
    assert_true(out.pts[1].d_p95_us >= 41800 && out.pts[1].d_p95_us <= 42200);
    assert_true(out.pts[0].p50_us >= 1045 && out.pts[0].p50_us <= 1055);

    /* JSON round trip. */
    cJSON *o = cJSON_CreateObject();
    assert_true(series_json_add(o, &out, NULL));
    struct load_series back;
    char err[ERR_LEN] = "";
    assert_int_equal(series_json_parse(o, &back, NULL, err), 0);
    assert_int_equal(back.n, out.n);
    assert_true(back.delivery);
    for (size_t i = 0; i < out.n; i++) {
        assert_int_equal(back.pts[i].requests, out.pts[i].requests);
        assert_int_equal(back.pts[i].failed, out.pts[i].failed);
        assert_int_equal(back.pts[i].p95_us, out.pts[i].p95_us);
        assert_int_equal(back.pts[i].d_p99_us, out.pts[i].d_p99_us);
        assert_true(fabs(back.pts[i].dur_s - out.pts[i].dur_s) < 1e-3);
    }
    load_series_free(&back);
    cJSON_Delete(o);
    load_series_free(&out);
    series_rec_free(&r);
    series_rec_free(&d);
}

static void test_json_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"series\": 3, \"series_interval_s\": 1}",
        "{\"series\": [], \"series_interval_s\": 3}",
        "{\"series\": [], \"series_interval_s\": 0.5}",
        "{\"series\": []}",
        "{\"series\": [1], \"series_interval_s\": 1}",
        "{\"series\": [{\"t\":0,\"requests\":1,\"errors\":2,\"rps\":1,\"p50_ms\":1,"
        "\"p95_ms\":1,\"p99_ms\":1}], \"series_interval_s\": 1}",
        "{\"series\": [{\"t\":1,\"requests\":1,\"errors\":0,\"rps\":1,\"p50_ms\":1,"
        "\"p95_ms\":1,\"p99_ms\":1}], \"series_interval_s\": 1}",
        "{\"series\": [{\"t\":0,\"requests\":1.5,\"errors\":0,\"rps\":1,\"p50_ms\":1,"
        "\"p95_ms\":1,\"p99_ms\":1}], \"series_interval_s\": 1}",
        "{\"series\": [{\"t\":0,\"requests\":1,\"errors\":0,\"rps\":1,\"p50_ms\":-1,"
        "\"p95_ms\":1,\"p99_ms\":1}], \"series_interval_s\": 1}",
        "{\"series\": [{\"t\":0,\"requests\":1,\"errors\":0,\"rps\":1,\"p50_ms\":1,"
        "\"p95_ms\":1,\"p99_ms\":1,\"frames\":1}], \"series_interval_s\": 1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *o = cJSON_Parse(bad[i]);
        struct load_series s;
        char err[ERR_LEN] = "";
        assert_non_null(o);
        assert_int_equal(series_json_parse(o, &s, NULL, err), -EINVAL);
        assert_true(strncmp(err, "series", 6) == 0);
        assert_int_equal(s.n, 0);
        assert_null(s.pts);
        cJSON_Delete(o);
    }
    /* Absent: an empty series, not an error (results written before series existed). */
    cJSON *o = cJSON_Parse("{}");
    struct load_series s;
    char err[ERR_LEN] = "";
    assert_int_equal(series_json_parse(o, &s, NULL, err), 0);
    assert_int_equal(s.n, 0);
    cJSON_Delete(o);
}

/* A recorder of 3 s rendered, written with its histograms, read back: the same points, and a
 * recorder whose slots are the original's bucket for bucket. */
static void test_json_hists_round_trip(void **state)
{
    (void)state;
    struct series_rec r;
    assert_int_equal(series_rec_init(&r, 0), 0);
    for (int i = 0; i < 300; i++)
        rec(&r, (int64_t)i * S / 100, i < 100 ? 500 + (uint64_t)i : 90000 + (uint64_t)i * 7,
            i % 17 == 0);
    struct load_series out, back;
    assert_int_equal(series_render(&r, NULL, 4 * S, &out), 0); /* the 4th point is empty */
    assert_int_equal(out.n, 4);
    cJSON *o = cJSON_CreateObject();
    assert_true(series_json_add(o, &out, &r));
    const cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "series"), 3);
    assert_true(cJSON_IsString(cJSON_GetObjectItem(pt, "latency_hist")));

    struct series_rec *got = NULL;
    char err[ERR_LEN] = "";
    assert_int_equal(series_json_parse(o, &back, &got, err), 0);
    assert_non_null(got);
    assert_int_equal(got->n, 4);
    assert_int_equal(got->interval_ns, S);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(got->slots[i].count, r.slots[i].count);
        assert_int_equal(got->slots[i].failed, r.slots[i].failed);
        assert_memory_equal(&got->slots[i].h, &r.slots[i].h, sizeof(struct hist));
        assert_int_equal(back.pts[i].p99_us, out.pts[i].p99_us);
    }
    assert_int_equal(got->slots[3].h.count, 0);
    series_rec_free(got);
    free(got);
    load_series_free(&back);

    /* Without a place to put it, the recorder is not built; the points still parse. */
    assert_int_equal(series_json_parse(o, &back, NULL, err), 0);
    assert_int_equal(back.n, 4);
    load_series_free(&back);

    /* Without the recorder (results.json), no histogram is written, and none comes back. */
    cJSON *plain = cJSON_CreateObject();
    assert_true(series_json_add(plain, &out, NULL));
    pt = cJSON_GetArrayItem(cJSON_GetObjectItem(plain, "series"), 0);
    assert_null(cJSON_GetObjectItem(pt, "latency_hist"));
    got = (struct series_rec *)&r; /* must be reset to NULL */
    assert_int_equal(series_json_parse(plain, &back, &got, err), 0);
    assert_null(got);
    load_series_free(&back);
    cJSON_Delete(plain);
    cJSON_Delete(o);
    load_series_free(&out);
    series_rec_free(&r);
}

/* A point's histogram that is not base64, not a histogram, holds more samples than the point's
 * requests, gives other percentiles than the point states, or is missing on a later point, is
 * refused with the point named, and nothing is left allocated. */
static void test_json_hists_malformed(void **state)
{
    (void)state;
    struct series_rec r;
    assert_int_equal(series_rec_init(&r, 0), 0);
    for (int i = 0; i < 20; i++)
        rec(&r, (int64_t)i * S / 10, 1000 + (uint64_t)i * 100, 0);
    struct load_series out;
    assert_int_equal(series_render(&r, NULL, 2 * S, &out), 0);
    char *good = hist_b64_encode(&r.slots[1].h);
    assert_non_null(good);

    enum { NOT_B64, NOT_HIST, TOO_MANY, OTHER_P95, MISSING, NOT_STRING, CASES };
    for (int c = 0; c < CASES; c++) {
        cJSON *o = cJSON_CreateObject();
        assert_true(series_json_add(o, &out, &r));
        cJSON *pt = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "series"), 1);
        const char *bad = NULL;
        if (c == NOT_B64)
            bad = "not*base64";
        else if (c == NOT_HIST)
            bad = "AAAA"; /* decodes to 3 zero bytes: version 0 */
        if (bad)
            cJSON_ReplaceItemInObject(pt, "latency_hist", cJSON_CreateString(bad));
        if (c == TOO_MANY)
            cJSON_ReplaceItemInObject(pt, "requests", cJSON_CreateNumber(3));
        if (c == OTHER_P95)
            cJSON_ReplaceItemInObject(pt, "p95_ms", cJSON_CreateNumber(1.001));
        if (c == MISSING)
            cJSON_DeleteItemFromObject(pt, "latency_hist");
        if (c == NOT_STRING)
            cJSON_ReplaceItemInObject(pt, "latency_hist", cJSON_CreateNumber(7));

        struct load_series s;
        struct series_rec *got = NULL;
        char err[ERR_LEN] = "";
        assert_int_equal(series_json_parse(o, &s, &got, err), -EINVAL);
        assert_non_null(strstr(err, "series[1]"));
        assert_null(got);
        assert_null(s.pts);
        cJSON_Delete(o);
    }
    free(good);
    load_series_free(&out);
    series_rec_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots_by_second),
        cmocka_unit_test(test_long_window_coarsens),
        cmocka_unit_test(test_merge_exact),
        cmocka_unit_test(test_render_sums_and_partial_last),
        cmocka_unit_test(test_json_malformed),
        cmocka_unit_test(test_json_hists_round_trip),
        cmocka_unit_test(test_json_hists_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
