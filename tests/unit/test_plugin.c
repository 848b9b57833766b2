/* Tests for the pure parts of src/operator/plugin.c (`kubectl sizeup`): target names, output
 * names, target loads, judging a followed request, progress and status lines. The parts that
 * talk to the API are tested against the fake by tests/integration/e2e_plugin.sh. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/plugin.h"

static void test_targets(void **state)
{
    (void)state;
    static const char *const ok[][2] = {
        {"deploy/web", "web"},
        {"deployment/web", "web"},
        {"deployments/a.b-c", "a.b-c"},
        {"deployment.apps/web", "web"},
        {"web", "web"},
    };
    static const char *const bad[] = {"pod/web", "deploy/", "deploy/Web", "svc/web",
                                      "",        "a/b/c",   "deploy/-x"};
    char name[ANNOT_MAX_NAME + 1], err[ERR_LEN];

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(plugin_parse_target(ok[i][0], name, err), 0);
        assert_string_equal(name, ok[i][1]);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (plugin_parse_target(bad[i], name, err) != -EINVAL)
            fail_msg("'%s' accepted", bad[i]);
}

static void test_outputs_and_loads(void **state)
{
    (void)state;
    char err[ERR_LEN];
    assert_string_equal(plugin_output_key("md"), "results.md");
    assert_string_equal(plugin_output_key("json"), "results.json");
    assert_string_equal(plugin_output_key("values"), "values.yaml");
    assert_string_equal(plugin_output_key("hpa"), "hpa.yaml");
    assert_string_equal(plugin_output_key("patch"), "deployment-patch.yaml");
    assert_string_equal(plugin_output_key("pdb"), "pdb.yaml");
    assert_string_equal(plugin_output_key("keda"), "keda.yaml");
    assert_string_equal(plugin_output_key("keda.yaml"), "keda.yaml");
    assert_string_equal(plugin_output_key("values.yaml"), "values.yaml");
    assert_null(plugin_output_key("xml"));
    assert_int_equal(plugin_check_target_load("5000rps", err), 0);
    assert_int_equal(plugin_check_target_load("10000users", err), 0);
    assert_int_equal(plugin_check_target_load("20000streams", err), 0);
    static const char *const bad[] = {"5000", "rps", "0rps", "5000 rps", "-5rps", "5e3rps"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(plugin_check_target_load(bad[i], err), -EINVAL);
}

static void test_judge(void **state)
{
    (void)state;
    static const struct {
        const char *current, *last, *status;
        enum plugin_state want;
    } cases[] = {
        /* Not taken up yet: the status is still the sweep before's. */
        {"s2", "s1", "done", PLUGIN_WAITING},
        {"s2", NULL, NULL, PLUGIN_WAITING},
        {"s2", "s2", "running 1/3", PLUGIN_RUNNING},
        {"s2", "s2", "pending: retrying after conflicts in 4s (attempt 2/5)", PLUGIN_RUNNING},
        {"s2", "s2", "done", PLUGIN_DONE},
        {"s2", "s2", "failed: container: \"x\" is not in the pod template", PLUGIN_FAILED},
        /* Cancelled while it ran, or withdrawn before the operator took it up. */
        {NULL, "s2", "failed: cancelled (sizeup.dev/sweep removed)", PLUGIN_FAILED},
        {NULL, "s1", "done", PLUGIN_FAILED},
        {"s3", "s1", "done", PLUGIN_FAILED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (plugin_judge("s2", cases[i].current, cases[i].last, cases[i].status) != cases[i].want)
            fail_msg("case %zu", i);
}

static void test_progress_lines(void **state)
{
    (void)state;
    const char *two = "{\"variants\": [{\"spec\": \"1@0.2/128Mi\", \"state\": \"measured\", "
                      "\"verdict\": \"HEALTHY\", \"throughput_rps\": 27.25, \"error_rate\": 0, "
                      "\"latency_ms\": {\"p95\": 212.5}}, {\"spec\": \"1@0.1/8Mi\", \"state\": "
                      "\"failed\", \"failure\": {\"reason\": \"OOMKilled\"}}]}";
    const char *one = "{\"variants\": [{\"spec\": \"1@0.2/128Mi\", \"state\": \"measured\", "
                      "\"verdict\": \"HEALTHY\", \"throughput_rps\": 27.25, \"error_rate\": 0, "
                      "\"latency_ms\": {\"p95\": 212.5}}]}";
    struct plugin_follow st;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    memset(&st, 0, sizeof(st));
    assert_int_equal(plugin_progress_lines(one, 3, &st, f), 1);
    /* Seen again with one more: only the new one is printed. */
    assert_int_equal(plugin_progress_lines(two, 3, &st, f), 1);
    assert_int_equal(plugin_progress_lines(two, 3, &st, f), 0);
    assert_int_equal(plugin_progress_lines("garbage", 3, &st, f), 0);
    fclose(f);
    assert_string_equal(buf, "variant 1/3 1@0.2/128Mi: HEALTHY, 27.25 req/s, p95 212ms, errors "
                             "0%\nvariant 2/3 1@0.1/8Mi: FAILED: OOMKilled\n");
    free(buf);
}

static void test_status_lines(void **state)
{
    (void)state;
    char line[768], head[256];
    cJSON *none = cJSON_Parse("{\"metadata\": {\"name\": \"plain\", \"namespace\": \"default\"}}");
    cJSON *done = cJSON_Parse(
        "{\"metadata\": {\"name\": \"web\", \"namespace\": \"shop\", \"annotations\": {"
        "\"sizeup.dev/sweep\": \"s1\", \"sizeup.dev/last-sweep\": \"s1\", \"sizeup.dev/status\": "
        "\"done\", \"sizeup.dev/resweep\": \"on-image-change\"}}}");
    cJSON *req = cJSON_Parse(
        "{\"metadata\": {\"name\": \"api\", \"namespace\": \"shop\", \"annotations\": {"
        "\"sizeup.dev/sweep\": \"s2\", \"sizeup.dev/last-sweep\": \"s1\", \"sizeup.dev/status\": "
        "\"done\"}}}");

    assert_int_equal(plugin_status_line(none, 0, line, sizeof(line)), 0);
    assert_int_equal(plugin_status_line(done, 1, line, sizeof(line)), 1);
    plugin_status_header(1, head, sizeof(head));
    /* Columns line up with the header. */
    assert_int_equal(strstr(line, "web") - line, strstr(head, "DEPLOYMENT") - head);
    assert_int_equal(strstr(line, "done") - line, strstr(head, "STATUS") - head);
    assert_non_null(strstr(line, "on-image-change/6h"));
    assert_int_equal(plugin_status_line(req, 0, line, sizeof(line)), 1);
    assert_non_null(strstr(line, "requested (was: done)"));
    assert_non_null(strstr(line, " s2 "));
    cJSON_Delete(none);
    cJSON_Delete(done);
    cJSON_Delete(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets),      cmocka_unit_test(test_outputs_and_loads),
        cmocka_unit_test(test_judge),        cmocka_unit_test(test_progress_lines),
        cmocka_unit_test(test_status_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
