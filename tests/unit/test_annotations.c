/* Tests for src/operator/annotations.c: the sizeup.dev/ annotations of a Deployment, table-driven,
 * with the malformed values a user (or issue 6's bad-input list) can type. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/annotations.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_defaults(void **state)
{
    (void)state;
    struct annot_kv kv[] = {{"app.kubernetes.io/name", "web"}, {"sizeup.dev/sweep", "now"}};
    struct annot_request r;
    char err[ERR_LEN] = "", warn[ERR_LEN] = "x";

    assert_int_equal(annot_parse(kv, N(kv), &r, warn, err), 0);
    assert_string_equal(warn, "");
    assert_string_equal(r.sweep, "now");
    assert_string_equal(r.configs, ANNOT_DEFAULT_CONFIGS);
    assert_int_equal(r.nvariants, 6);
    assert_string_equal(r.workers_env, "WORKERS");
    assert_null(r.container);
    assert_int_equal(r.port, 0);
    assert_null(r.profile);
    assert_int_equal(r.mode, ANNOT_MODE_CLONE);
    assert_int_equal(r.target, ANNOT_TARGET_POD);
    assert_null(r.target_url);
    assert_string_equal(r.values_paths.workers, "workers.count");
    assert_string_equal(r.values_paths.resources, "resources");
    assert_string_equal(r.values_paths.replicas, "replicaCount");
    assert_string_equal(r.values_paths.autoscaling, "autoscaling");
    assert_true(r.target_rps == 0 && r.target_users == 0);
    assert_int_equal(r.generators, 0);
    assert_false(r.scale_out_set); /* in the cluster a scale-out is asked for, never a default */
    annot_request_free(&r);
    annot_request_free(&r); /* zeroed: a no-op */
}

static void test_every_field(void **state)
{
    (void)state;
    struct annot_kv kv[] = {
        {"sizeup.dev/sweep", "2026-11-29T20:00"},
        {"sizeup.dev/configs", "1@0.5/256Mi  2@1/512Mi\t4@2/1Gi"},
        {"sizeup.dev/workers-env", "WEB_CONCURRENCY"},
        {"sizeup.dev/container", "app"},
        {"sizeup.dev/port", "8080"},
        {"sizeup.dev/profile", "web-load"},
        {"sizeup.dev/mode", "in-place"},
        {"sizeup.dev/target", "http://web.default.svc:8080/healthz"},
        {"sizeup.dev/values-paths", "workers=app.gunicorn.workers,resources=app.resources,"
                                    "replicas=app.replicas,autoscaling=app.hpa"},
        {"sizeup.dev/target-load", "10000users"},
        {"sizeup.dev/generators", "3"},
        {"sizeup.dev/scale-out", "6"},
        {"sizeup.dev/status", "running 1/3"},
        {"sizeup.dev/last-sweep", "yesterday"},
    };
    struct annot_request r;
    char err[ERR_LEN] = "", warn[ERR_LEN] = "";

    assert_int_equal(annot_parse(kv, N(kv), &r, warn, err), 0);
    assert_string_equal(warn, "");
    assert_string_equal(r.sweep, "2026-11-29T20:00");
    assert_int_equal(r.nvariants, 3);
    assert_string_equal(r.workers_env, "WEB_CONCURRENCY");
    assert_string_equal(r.container, "app");
    assert_int_equal(r.port, 8080);
    assert_string_equal(r.profile, "web-load");
    assert_int_equal(r.mode, ANNOT_MODE_IN_PLACE);
    assert_string_equal(annot_mode_name(r.mode), "in-place");
    assert_int_equal(r.target, ANNOT_TARGET_URL);
    assert_string_equal(r.target_url, "http://web.default.svc:8080/healthz");
    assert_string_equal(r.values_paths.workers, "app.gunicorn.workers");
    assert_string_equal(r.values_paths.resources, "app.resources");
    assert_string_equal(r.values_paths.replicas, "app.replicas");
    assert_string_equal(r.values_paths.autoscaling, "app.hpa");
    assert_true(r.target_users == 10000 && r.target_rps == 0);
    assert_int_equal(r.generators, 3);
    assert_true(r.scale_out_set);
    assert_int_equal(r.scale_out, 6);
    annot_request_free(&r);
}

/* A target in open streams is a target like the others, and replaces nothing but itself. */
static void test_target_load_streams(void **state)
{
    (void)state;
    struct annot_kv kv[] = {{"sizeup.dev/sweep", "1"}, {"sizeup.dev/target-load", "20000streams"}};
    struct annot_request r;
    char err[ERR_LEN] = "";
    assert_int_equal(annot_parse(kv, N(kv), &r, NULL, err), 0);
    assert_true(r.target_streams == 20000 && r.target_rps == 0 && r.target_users == 0);
    annot_request_free(&r);
}

struct ok_case {
    const char *key; /* after sizeup.dev/ */
    const char *value;
};

/* Values that must be accepted. */
static void test_good_values(void **state)
{
    (void)state;
    static const struct ok_case cases[] = {
        {"configs", "2@1/512Mi"},
        {"configs", "1@500m/512Mi"},
        {"configs", " 4@4/2Gi\n"},
        {"configs", "1@0.5/129e6"},
        {"workers-env", "W"},
        {"workers-env", "_x.y-z9"},
        {"container", "a"},
        {"container", "web-1"},
        {"port", "1"},
        {"port", "65535"},
        {"profile", "a.b-c"},
        {"mode", "clone"},
        {"mode", "resize"},
        {"resize", "off"},
        {"resize", "on"},
        {"target", "pod"},
        {"target", "https://example.test"},
        {"target", "http://127.0.0.1:80/x?y=1"},
        {"target", "http://[::1]:8080/"},
        {"target", "http://[::1]"},
        {"values-paths", "workers=w"},
        {"values-paths", "resources=r.s"},
        {"values-paths", "resources=a,workers=b_c.d-e"},
        {"values-paths", "replicas=replicaCount,autoscaling=hpa"},
        {"target-load", "5000rps"},
        {"target-load", "10000users"},
        {"target-load", "0.5rps"},
        {"target-load", "1000000000users"},
        {"generators", "1"},
        {"generators", "3"},
        {"generators", "100"},
        {"scale-out", "off"},
        {"scale-out", "0"},
        {"scale-out", "4"},
        {"scale-out", "16"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        char key[64];
        snprintf(key, sizeof(key), "sizeup.dev/%s", cases[i].key);
        struct annot_kv kv[] = {{"sizeup.dev/sweep", "1"}, {key, cases[i].value}};
        struct annot_request r;
        char err[ERR_LEN] = "";
        int rc = annot_parse(kv, N(kv), &r, NULL, err);
        if (rc != 0)
            fail_msg("%s=%s rejected: %s", cases[i].key, cases[i].value, err);
        annot_request_free(&r);
    }
}

struct bad_case {
    const char *key;
    const char *value;
    const char *msg_has; /* the reason must contain this */
};

/* Every bad value fails with a reason naming the annotation and the problem. */
static void test_bad_values(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"configs", "2@x/512Zi", "configs: bad variant '2@x/512Zi': bad CPU"},
        {"configs", "2@1/512Zi", "memory"},
        {"configs", "2@1/512m", "memory"},
        {"configs", "", "empty variant list"},
        {"configs", "  ,, ", "bad variant"},
        {"configs", "2@1", "expected workers@cpu/memory"},
        {"configs", "2/1@512Mi", "expected workers@cpu/memory"},
        {"configs", "0@1/512Mi", "worker count"},
        {"configs", "x@1/512Mi", "worker count"},
        {"configs", "@1/512Mi", "worker count"},
        {"configs", "99999999999@1/1Gi", "workers"},
        {"configs", "1@0/512Mi", "CPU"},
        {"configs", "1@1/0", "memory"},
        {"configs", "1@-1/1Gi", "CPU"},
        {"configs", "1@1/1Gi 1@1/1Gi", "repeats"},
        {"configs", "1@1/1Gi,2@1/1Gi", "bad variant"},
        {"configs", "1@1/1Gi\"x", "1Gi'x"},
        {"workers-env", "", "workers-env: empty"},
        {"workers-env", "9LIVES", "not an env var name"},
        {"workers-env", "A B", "not an env var name"},
        {"workers-env", "A=B", "not an env var name"},
        {"container", "", "container:"},
        {"container", "Web", "not a container name"},
        {"container", "-web", "not a container name"},
        {"container", "web.app", "not a container name"},
        {"port", "", "not a port number"},
        {"port", "0", "out of range"},
        {"port", "65536", "out of range"},
        {"port", "99999", "out of range"},
        {"port", "123456", "not a port number"},
        {"port", "-1", "not a port number"},
        {"port", "80a", "not a port number"},
        {"port", "http", "not a port number"},
        {"profile", "", "not a ConfigMap name"},
        {"profile", "Bad_Name", "not a ConfigMap name"},
        {"profile", "a..b", "not a ConfigMap name"},
        {"mode", "", "mode: \"\" is unknown"},
        {"mode", "inplace", "mode: \"inplace\" is unknown (expected clone, in-place or resize)"},
        {"resize", "", "resize: \"\" is unknown (expected on or off)"},
        {"resize", "false", "resize: \"false\" is unknown"},
        {"mode", "CLONE", "unknown"},
        {"target", "", "neither 'pod' nor"},
        {"target", "Pod", "neither 'pod' nor"},
        {"target", "ftp://x", "neither 'pod' nor"},
        {"target", "http://", "no host"},
        {"target", "http://:80/", "no host"},
        {"target", "http://a b/", "unprintable"},
        {"target", "http://u:p@host/", "credentials"},
        {"target", "http://h:0/", "out of range"},
        {"target", "http://h:70000/", "out of range"},
        {"target", "http://h:/", "empty port"},
        {"target", "http://h:8x/", "bad port"},
        {"target", "http://[::1/", "IPv6"},
        {"target", "http://[::1]x/", "IPv6"},
        {"values-paths", "", "empty"},
        {"values-paths", "workers", "expected key=path"},
        {"values-paths", "cpu=x", "expected 'workers', 'resources', 'replicas' or 'autoscaling'"},
        {"values-paths", "workers=", "empty"},
        {"values-paths", "workers=a..b", "empty segment"},
        {"values-paths", "workers=.a", "empty segment"},
        {"values-paths", "workers=a b", "not allowed"},
        {"values-paths", "workers=a\nb", "dot-separated"},
        {"values-paths", "workers=a,workers=b", "twice"},
        {"values-paths", "workers=a,", "empty item"},
        {"values-paths", "replicas=resources.n", "overlap"},
        {"target-load", "", "expected a number"},
        {"target-load", "5000", "followed by rps, users or streams"},
        {"target-load", "rps", "expected a number"},
        {"target-load", "0rps", "above 0"},
        {"target-load", "-5rps", "expected a number"},
        {"target-load", "5000 rps", "e.g. 5000rps"},
        {"target-load", "5000RPS", "e.g. 5000rps"},
        {"target-load", "1e12rps", "at most"},
        {"target-load", "nanrps", "expected a number"},
        {"target-load", "20000stream", "e.g. 5000rps, 10000users or 20000streams"},
        {"generators", "", "not a number of load-generator pods (1-100)"},
        {"generators", "0", "not a number of load-generator pods"},
        {"generators", "101", "not a number of load-generator pods"},
        {"generators", "1000", "not a number of load-generator pods"},
        {"generators", "-1", "not a number of load-generator pods"},
        {"generators", "2x", "not a number of load-generator pods"},
        {"generators", " 3", "not a number of load-generator pods"},
        {"scale-out", "17", "scale-out: \"17\" is not a replica count (0-16, or off)"},
        {"scale-out", "", "not a replica count"},
        {"scale-out", "on", "not a replica count"},
        {"scale-out", "-1", "not a replica count"},
        {"scale-out", "4x", "not a replica count"},
        {"scale-out", "100", "not a replica count"},
        {"scale-out", "OFF", "not a replica count"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        char key[64];
        snprintf(key, sizeof(key), "sizeup.dev/%s", cases[i].key);
        struct annot_kv kv[] = {{"sizeup.dev/sweep", "1"}, {key, cases[i].value}};
        struct annot_request r;
        char err[ERR_LEN] = "";
        int rc = annot_parse(kv, N(kv), &r, NULL, err);
        if (rc != -EINVAL)
            fail_msg("%s=\"%s\" gave %d (%s), want -EINVAL", cases[i].key, cases[i].value, rc, err);
        if (!strstr(err, cases[i].msg_has))
            fail_msg("%s=\"%s\": reason \"%s\" lacks \"%s\"", cases[i].key, cases[i].value, err,
                     cases[i].msg_has);
        if (strncmp(err, cases[i].key, strlen(cases[i].key)) != 0)
            fail_msg("reason \"%s\" does not start with the annotation name", err);
        /* A failed parse leaves nothing to free. */
        assert_null(r.sweep);
        assert_null(r.configs);
    }
}

/* sizeup.dev/resize: off in clone mode; on by default; contradicting mode: resize. */
static void test_resize_values(void **state)
{
    (void)state;
    struct annot_kv dflt[] = {{"sizeup.dev/sweep", "1"}};
    struct annot_kv off[] = {{"sizeup.dev/sweep", "1"}, {"sizeup.dev/resize", "off"}};
    struct annot_kv mode[] = {{"sizeup.dev/sweep", "1"}, {"sizeup.dev/mode", "resize"}};
    struct annot_kv both[] = {
        {"sizeup.dev/resize", "off"}, {"sizeup.dev/sweep", "1"}, {"sizeup.dev/mode", "resize"}};
    struct annot_request r;
    char err[ERR_LEN] = "", warn[ERR_LEN] = "";

    assert_int_equal(annot_parse(dflt, N(dflt), &r, warn, err), 0);
    assert_false(r.resize_off);
    assert_int_equal(r.mode, ANNOT_MODE_CLONE);
    annot_request_free(&r);
    assert_int_equal(annot_parse(off, N(off), &r, warn, err), 0);
    assert_true(r.resize_off);
    assert_string_equal(warn, "");
    annot_request_free(&r);
    assert_int_equal(annot_parse(mode, N(mode), &r, warn, err), 0);
    assert_int_equal(r.mode, ANNOT_MODE_RESIZE);
    assert_string_equal(annot_mode_name(r.mode), "resize");
    annot_request_free(&r);
    /* Whatever order the API lists them in. */
    assert_int_equal(annot_parse(both, N(both), &r, warn, err), -EINVAL);
    assert_string_equal(err, "resize: \"off\" contradicts mode: resize");
    assert_true(annot_key_relevant("sizeup.dev/resize"));
    assert_true(annot_key_relevant("sizeup.dev/original-resources"));
}

static void test_no_sweep(void **state)
{
    (void)state;
    struct annot_kv none[] = {{"sizeup.dev/configs", "2@1/1Gi"}};
    struct annot_kv empty[] = {{"sizeup.dev/sweep", ""}};
    struct annot_request r;
    char err[ERR_LEN] = "";

    assert_int_equal(annot_parse(NULL, 0, &r, NULL, err), -ENOENT);
    assert_int_equal(annot_parse(none, 1, &r, NULL, err), -ENOENT);
    assert_non_null(strstr(err, "no sizeup.dev/sweep"));
    assert_int_equal(annot_parse(empty, 1, &r, NULL, err), -ENOENT);
}

/* Reasons quote hostile values as one printable, bounded line. */
static void test_reason_is_safe(void **state)
{
    (void)state;
    char big[6000];
    memset(big, 'A', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    big[3] = '\n';
    big[5] = '"';
    struct annot_kv kv[] = {{"sizeup.dev/sweep", "1"}, {"sizeup.dev/mode", big}};
    struct annot_request r;
    char err[ERR_LEN] = "";

    assert_int_equal(annot_parse(kv, N(kv), &r, NULL, err), -EINVAL);
    assert_null(strchr(err, '\n'));
    assert_non_null(strstr(err, "AAA?A?AA"));
    assert_non_null(strstr(err, "...\""));
    assert_true(strlen(err) < 200);

    struct annot_kv kv2[] = {{"sizeup.dev/sweep", big}};
    assert_int_equal(annot_parse(kv2, 1, &r, NULL, err), -EINVAL);
    assert_non_null(strstr(err, "sweep: longer than"));
    struct annot_kv kv3[] = {{"sizeup.dev/sweep", "1"}, {"sizeup.dev/configs", big}};
    assert_int_equal(annot_parse(kv3, 2, &r, NULL, err), -EINVAL);
    assert_non_null(strstr(err, "configs: longer than"));
}

/* With several bad values the first in the documented order is reported, whatever the order
 * the API lists them in. */
static void test_first_reason_is_stable(void **state)
{
    (void)state;
    struct annot_kv a[] = {
        {"sizeup.dev/mode", "x"}, {"sizeup.dev/port", "0"}, {"sizeup.dev/sweep", "1"}};
    struct annot_kv b[] = {
        {"sizeup.dev/sweep", "1"}, {"sizeup.dev/port", "0"}, {"sizeup.dev/mode", "x"}};
    struct annot_request r;
    char e1[ERR_LEN] = "", e2[ERR_LEN] = "";

    assert_int_equal(annot_parse(a, N(a), &r, NULL, e1), -EINVAL);
    assert_int_equal(annot_parse(b, N(b), &r, NULL, e2), -EINVAL);
    assert_string_equal(e1, e2);
    assert_non_null(strstr(e1, "port"));
}

static void test_unknown_key_warns(void **state)
{
    (void)state;
    struct annot_kv kv[] = {{"sizeup.dev/sweep", "1"}, {"sizeup.dev/confgs", "2@1/1Gi"}};
    struct annot_request r;
    char err[ERR_LEN] = "", warn[ERR_LEN] = "";

    assert_int_equal(annot_parse(kv, N(kv), &r, warn, err), 0);
    assert_non_null(strstr(warn, "sizeup.dev/confgs"));
    assert_int_equal(r.nvariants, 6); /* the typo did not take effect */
    annot_request_free(&r);
}

static void test_relevant_keys(void **state)
{
    (void)state;
    assert_true(annot_key_relevant("sizeup.dev/sweep"));
    assert_true(annot_key_relevant("sizeup.dev/status"));
    assert_true(annot_key_relevant("sizeup.dev/last-sweep"));
    assert_false(annot_key_relevant("sizeup.dev/"));
    assert_false(annot_key_relevant("sizeup.dev/sweepx"));
    assert_false(annot_key_relevant("kubectl.kubernetes.io/last-applied-configuration"));
    assert_false(annot_key_relevant(NULL));
}

/* The load ceiling: a capacity search that reaches real users (a target URL, in-place mode)
 * needs search.max_rps, and so does resize mode; a clone against its pod, a fixed load, or a
 * ceiling is allowed. */
static void test_load_ceiling(void **state)
{
    (void)state;
    static const struct {
        const char *mode, *target, *profile;
        enum profile_search_mode search;
        double max_rps;
        const char *want; /* NULL: allowed */
    } cases[] = {
        {"clone", "pod", NULL, PROFILE_SEARCH_CAPACITY, 0, NULL},
        {"clone", "pod", "web-load", PROFILE_SEARCH_FIXED, 0, NULL},
        {"in-place", "pod", "web-load", PROFILE_SEARCH_CAPACITY, 0,
         "load ceiling: a capacity search in in-place mode reaches real users and needs a "
         "ceiling: set search: { max_rps: N } in the profile (ConfigMap web-load, key "
         "profile.yaml), or search: { mode: fixed }"},
        {"in-place", "pod", NULL, PROFILE_SEARCH_CAPACITY, 0,
         "load ceiling: a capacity search in in-place mode reaches real users and needs a "
         "ceiling: set search: { max_rps: N } in a profile (sizeup.dev/profile), or "
         "search: { mode: fixed }"},
        {"clone", "http://web.default.svc:8080/", NULL, PROFILE_SEARCH_CAPACITY, 0,
         "load ceiling: a capacity search against a target URL reaches real users"},
        {"in-place", "https://shop.example/", "p", PROFILE_SEARCH_CAPACITY, 0,
         "against a target URL"},
        {"in-place", "pod", "web-load", PROFILE_SEARCH_CAPACITY, 200, NULL},
        {"clone", "http://web:8080/", "p", PROFILE_SEARCH_CAPACITY, 0.5, NULL},
        {"in-place", "http://web:8080/", "p", PROFILE_SEARCH_FIXED, 0, NULL},
        /* Resize mode loads a pod of the Deployment itself: real users share it. */
        {"resize", "pod", "p", PROFILE_SEARCH_CAPACITY, 0,
         "load ceiling: a capacity search in resize mode (on a pod of the Deployment) reaches "
         "real users"},
        {"resize", "pod", "p", PROFILE_SEARCH_CAPACITY, 300, NULL},
        {"resize", "pod", "p", PROFILE_SEARCH_FIXED, 0, NULL},
    };
    for (size_t i = 0; i < N(cases); i++) {
        struct annot_kv kv[] = {{"sizeup.dev/sweep", "1"},
                                {"sizeup.dev/mode", cases[i].mode},
                                {"sizeup.dev/target", cases[i].target},
                                {"sizeup.dev/profile", cases[i].profile}};
        struct annot_request r;
        struct profile_search s = {.mode = cases[i].search, .max_rps = cases[i].max_rps};
        char err[ERR_LEN] = "";
        assert_int_equal(annot_parse(kv, cases[i].profile ? 4 : 3, &r, NULL, err), 0);
        int rc = annot_check_load_ceiling(&r, &s, err);
        if (!cases[i].want && rc != 0)
            fail_msg("case %zu: refused: %s", i, err);
        if (cases[i].want && (rc != -EINVAL || !strstr(err, cases[i].want)))
            fail_msg("case %zu: rc %d, reason \"%s\", want \"%s\"", i, rc, err, cases[i].want);
        /* The reason becomes "failed: <reason>" in full: it must not be cut. */
        assert_true(strlen(err) + 1 < ERR_LEN);
        annot_request_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_load_streams),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_good_values),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_no_sweep),
        cmocka_unit_test(test_resize_values),
        cmocka_unit_test(test_reason_is_safe),
        cmocka_unit_test(test_first_reason_is_stable),
        cmocka_unit_test(test_unknown_key_warns),
        cmocka_unit_test(test_relevant_keys),
        cmocka_unit_test(test_load_ceiling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
