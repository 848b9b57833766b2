/* Tests for src/operator/resweep.c: when an image change starts a sweep, waits for its
 * interval or does nothing; the patch that starts one; the comparison with the previous
 * results and its significance rule. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "operator/resweep.h"

#define NOW 1764560000 /* 2025-12-01T03:33:20Z */

/* A Deployment with image img, the annotations kv (key, value, ..., NULL) and a rollout that is
 * complete when done. */
static cJSON *deploy(const char *img, int done, ...)
{
    char text[4096], ann[2048] = "";
    va_list ap;
    size_t used = 0;

    va_start(ap, done);
    for (const char *k = va_arg(ap, const char *); k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        used += (size_t)snprintf(ann + used, sizeof(ann) - used, "%s\"%s\": \"%s\"",
                                 used ? ", " : "", k, v);
    }
    va_end(ap);
    snprintf(text, sizeof(text),
             "{\"metadata\": {\"name\": \"web\", \"namespace\": \"default\", \"uid\": \"u1\", "
             "\"resourceVersion\": \"42\", \"generation\": 3, \"annotations\": {%s}},"
             " \"spec\": {\"replicas\": 1, \"template\": {\"spec\": {\"containers\": ["
             "{\"name\": \"web\", \"image\": \"%s\"}, {\"name\": \"side\", \"image\": \"s:1\"}]}}},"
             " \"status\": {\"observedGeneration\": %d, \"replicas\": 1, \"updatedReplicas\": 1,"
             " \"readyReplicas\": 1, \"availableReplicas\": 1}}",
             ann, img, done ? 3 : 2);
    cJSON *d = cJSON_Parse(text);
    assert_non_null(d);
    return d;
}

static void test_images(void **state)
{
    (void)state;
    char out[64];
    cJSON *d = deploy("app:2", 1, NULL);
    resweep_images(d, out, sizeof(out));
    assert_string_equal(out, "web=app:2 side=s:1");
    /* Too long: cut at the last whole word, never mid-image. */
    resweep_images(d, out, 14);
    assert_string_equal(out, "web=app:2");
    cJSON_Delete(d);
}

static void test_decide(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *img;
        int done;
        const char *kv[12];
        enum resweep_action want;
        time_t due;
    } cases[] = {
        {"off", "app:2", 1, {NULL}, RESWEEP_NONE, 0},
        {"off explicitly", "app:2", 1, {"sizeup.dev/resweep", "off", NULL}, RESWEEP_NONE, 0},
        {"first look records",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", NULL},
         RESWEEP_BASELINE,
         0},
        {"unchanged",
         "app:1",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-images",
          "web=app:1 side=s:1", NULL},
         RESWEEP_NONE,
         0},
        {"changed, never swept automatically",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-images",
          "web=app:1 side=s:1", NULL},
         RESWEEP_START,
         0},
        {"changed mid-rollout",
         "app:2",
         0,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-images",
          "web=app:1 side=s:1", NULL},
         RESWEEP_NONE,
         0},
        {"changed while a sweep runs",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-images",
          "web=app:1 side=s:1", "sizeup.dev/status", "running 1/2", NULL},
         RESWEEP_NONE,
         0},
        {"changed while a sweep is requested",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-images",
          "web=app:1 side=s:1", "sizeup.dev/sweep", "b", "sizeup.dev/last-sweep", "a", NULL},
         RESWEEP_NONE,
         0},
        {"inside the default 6h",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-images",
          "web=app:1 side=s:1", "sizeup.dev/resweep-last", "2025-12-01T01:33:20Z", NULL},
         RESWEEP_LATER,
         NOW - 7200 + 6 * 3600},
        {"after the interval",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-min-interval", "30m",
          "sizeup.dev/resweep-images", "web=app:1 side=s:1", "sizeup.dev/resweep-last",
          "2025-12-01T01:33:20Z", NULL},
         RESWEEP_START,
         0},
        {"inside a 3h interval",
         "app:2",
         1,
         {"sizeup.dev/resweep", "on-image-change", "sizeup.dev/resweep-min-interval", "3h",
          "sizeup.dev/resweep-images", "web=app:1 side=s:1", "sizeup.dev/resweep-last",
          "2025-12-01T01:33:20Z", NULL},
         RESWEEP_LATER,
         NOW - 7200 + 3 * 3600},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *const *kv = cases[i].kv;
        cJSON *d = deploy(cases[i].img, cases[i].done, kv[0], kv[1], kv[2], kv[3], kv[4], kv[5],
                          kv[6], kv[7], kv[8], kv[9], kv[10], kv[11]);
        struct resweep_decision dec;
        char err[ERR_LEN] = "";
        assert_int_equal(resweep_decide(d, NOW, &dec, err), 0);
        if (dec.action != cases[i].want || dec.due != cases[i].due)
            fail_msg("%s: action %d due %lld, want %d due %lld (%s)", cases[i].name, dec.action,
                     (long long)dec.due, cases[i].want, (long long)cases[i].due, dec.why);
        cJSON_Delete(d);
    }
}

static void test_bad_annotations(void **state)
{
    (void)state;
    static const char *const bad[][2] = {{"sometimes", "6h"},
                                         {"on-image-change", "soon"},
                                         {"on-image-change", "0s"},
                                         {"on-image-change", "10000h"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *d = deploy("app:2", 1, "sizeup.dev/resweep", bad[i][0],
                          "sizeup.dev/resweep-min-interval", bad[i][1], NULL);
        struct resweep_decision dec;
        char err[ERR_LEN] = "";
        assert_int_equal(resweep_decide(d, NOW, &dec, err), -EINVAL);
        assert_non_null(strstr(err, "resweep"));
        cJSON_Delete(d);
    }
}

static void test_patch(void **state)
{
    (void)state;
    struct resweep_decision dec;
    char err[ERR_LEN] = "";
    cJSON *d = deploy("app:2", 1, "sizeup.dev/resweep", "on-image-change",
                      "sizeup.dev/resweep-images", "web=app:1 side=s:1", NULL);

    assert_int_equal(resweep_decide(d, NOW, &dec, err), 0);
    assert_int_equal(dec.action, RESWEEP_START);
    char *text = resweep_patch(d, &dec, NOW);
    assert_non_null(text);
    cJSON *p = cJSON_Parse(text);
    cJSON *meta = cJSON_GetObjectItem(p, "metadata");
    cJSON *ann = cJSON_GetObjectItem(meta, "annotations");
    /* The resourceVersion read: a Deployment changed since gets a 409 and is decided again. */
    assert_string_equal(cJSON_GetObjectItem(meta, "resourceVersion")->valuestring, "42");
    assert_string_equal(cJSON_GetObjectItem(ann, RESWEEP_ANNOT_IMAGES)->valuestring,
                        "web=app:2 side=s:1");
    assert_string_equal(cJSON_GetObjectItem(ann, RESWEEP_ANNOT_LAST)->valuestring,
                        "2025-12-01T03:33:20Z");
    assert_string_equal(cJSON_GetObjectItem(ann, "sizeup.dev/sweep")->valuestring,
                        "resweep-20251201T033320Z");
    cJSON_Delete(p);
    free(text);

    dec.action = RESWEEP_BASELINE;
    text = resweep_patch(d, &dec, NOW);
    p = cJSON_Parse(text);
    ann = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "annotations");
    assert_null(cJSON_GetObjectItem(ann, "sizeup.dev/sweep"));
    assert_non_null(cJSON_GetObjectItem(ann, RESWEEP_ANNOT_IMAGES));
    cJSON_Delete(p);
    free(text);

    dec.action = RESWEEP_NONE;
    assert_null(resweep_patch(d, &dec, NOW));
    cJSON_Delete(d);
}

static void row(struct advisor_row *r, const char *spec, double rps, uint64_t p95_us)
{
    fixture_row(r, spec, rps, 0, p95_us, 0, 0);
}

static void test_compare(void **state)
{
    (void)state;
    const char *prev = "{\"images\": \"web=app:1\", \"variants\": ["
                       "{\"spec\": \"1@1/512Mi\", \"state\": \"measured\", \"throughput_rps\": 400,"
                       " \"latency_ms\": {\"p95\": 20}},"
                       "{\"spec\": \"2@2/1Gi\", \"state\": \"measured\", \"throughput_rps\": 800,"
                       " \"latency_ms\": {\"p95\": 10}},"
                       "{\"spec\": \"4@4/2Gi\", \"state\": \"failed\"}]}";
    struct advisor_row rows[3];
    char out[1024];
    int sig = -1;

    /* Within noise: 5% less throughput, p95 the same. */
    row(&rows[0], "1@1/512Mi", 380, 20000);
    row(&rows[1], "2@2/1Gi", 790, 10000);
    row(&rows[2], "4@4/2Gi", 1500, 8000);
    assert_int_equal(resweep_compare(prev, rows, 3, out, sizeof(out), &sig), 0);
    assert_int_equal(sig, 0);
    assert_non_null(strstr(out, "since image web=app:1, 2 variants compared"));
    assert_non_null(strstr(out, "throughput of 1@1/512Mi fell 5% (400.0 -> 380.0 req/s)"));
    assert_non_null(strstr(out, "within noise"));

    /* 23% less throughput on one variant: significant. */
    row(&rows[1], "2@2/1Gi", 616, 13000);
    assert_int_equal(resweep_compare(prev, rows, 3, out, sizeof(out), &sig), 0);
    assert_int_equal(sig, 1);
    assert_non_null(strstr(out, "throughput of 2@2/1Gi fell 23% (800.0 -> 616.0 req/s)"));
    assert_non_null(strstr(out, "p95 10.0ms -> 13.0ms (+30%): significant"));

    /* Only p95 moved beyond the rule: that variant is the one named. */
    row(&rows[1], "2@2/1Gi", 800, 15000);
    assert_int_equal(resweep_compare(prev, rows, 2, out, sizeof(out), &sig), 0);
    assert_int_equal(sig, 1);
    assert_non_null(strstr(out, "throughput of 2@2/1Gi rose 0% (800.0 -> 800.0 req/s), p95 10.0ms "
                                "-> 15.0ms (+50%): significant"));

    /* No variant in common, or nothing readable: said, not guessed. */
    row(&rows[0], "8@8/4Gi", 100, 1000);
    assert_int_equal(resweep_compare(prev, rows, 1, out, sizeof(out), &sig), -ENOENT);
    assert_non_null(strstr(out, "no variant measured in both sweeps"));
    assert_int_equal(resweep_compare("not json", rows, 1, out, sizeof(out), &sig), -ENOENT);
    assert_int_equal(sig, 0);
}

/* A results.json text with one variant whose capacity search repeated reps[0..3). */
static void capacity_json(char *out, size_t len, const char *images, const double reps[3])
{
    double mean = (reps[0] + reps[1] + reps[2]) / 3;
    snprintf(out, len,
             "{\"tool\":\"sizeup 0.1.0\",\"images\":\"%s\",\"variants\":[{\"spec\":\"2@1/1Gi\","
             "\"state\":\"measured\",\"throughput_rps\":%.1f,\"latency_ms\":{\"p95\":20,"
             "\"p99\":40},\"slo_capacity\":{\"rps\":%.3f,\"repeats\":3,\"repeat_rps\":[%.1f,"
             "%.1f,%.1f],\"valid\":true,\"flags\":[],\"limited_by\":\"slo-p95\",\"steps\":[]}}]}",
             images, mean, mean, reps[0], reps[1], reps[2]);
}

/* Both sweeps searched capacity: the comparison is sizeup compare's Welch test on the repeats. */
static void test_compare_capacity(void **state)
{
    (void)state;
    char prev[1024], cur[1024], out[ERR_LEN];
    int sig = -1;
    const double before[3] = {1000, 1010, 990}, same[3] = {1004, 995, 1001},
                 fell[3] = {770, 775, 765};

    capacity_json(prev, sizeof(prev), "web=app:1.4.2", before);
    capacity_json(cur, sizeof(cur), "web=app:1.4.3", fell);
    assert_int_equal(resweep_compare_capacity(prev, cur, out, sizeof(out), &sig), 0);
    assert_int_equal(sig, 1);
    assert_non_null(strstr(out, "since image web=app:1.4.2, 1 variant compared by capacity"));
    assert_non_null(strstr(out, "capacity of 2@1/1Gi fell 23% (1000.0 -> 770.0 req/s"));
    assert_non_null(strstr(out, "): significant."));

    capacity_json(cur, sizeof(cur), "web=app:1.4.3", same);
    assert_int_equal(resweep_compare_capacity(prev, cur, out, sizeof(out), &sig), 0);
    assert_int_equal(sig, 0);
    assert_non_null(strstr(out, "no significant change"));

    /* A fixed-load sweep on either side: not this comparison. */
    assert_int_equal(resweep_compare_capacity(prev, "{\"tool\":\"sizeup 0.1.0\",\"variants\":[]}",
                                              out, sizeof(out), &sig),
                     -ENOENT);
    assert_int_equal(resweep_compare_capacity(prev, "not json", out, sizeof(out), &sig), -ENOENT);
    assert_int_equal(resweep_compare_capacity(NULL, cur, out, sizeof(out), &sig), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_images),          cmocka_unit_test(test_decide),
        cmocka_unit_test(test_bad_annotations), cmocka_unit_test(test_patch),
        cmocka_unit_test(test_compare),         cmocka_unit_test(test_compare_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
