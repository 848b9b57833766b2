/* Tests for src/kube/objects.c: rollout judged as kubectl does, pod status (restarts,
 * OOMKilled), metadata and annotations, container helpers, RFC 3339 times, lease reading. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/objects.h"

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);
    assert_non_null(j);
    return j;
}

static void test_rollout(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        enum kube_rollout want;
        const char *msg_has;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
         "\"status\":{\"observedGeneration\":2,\"replicas\":2,\"updatedReplicas\":2,"
         "\"availableReplicas\":2}}",
         KUBE_ROLLOUT_WAITING, "spec update to be observed"},
        {"{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
         "\"status\":{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":1,"
         "\"availableReplicas\":2}}",
         KUBE_ROLLOUT_WAITING, "1 out of 2 new replicas"},
        {"{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
         "\"status\":{\"observedGeneration\":3,\"replicas\":3,\"updatedReplicas\":2,"
         "\"availableReplicas\":2}}",
         KUBE_ROLLOUT_WAITING, "1 old replicas are pending termination"},
        {"{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
         "\"status\":{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
         "\"availableReplicas\":1}}",
         KUBE_ROLLOUT_WAITING, "1 of 2 updated replicas are available"},
        {"{\"metadata\":{\"name\":\"w\",\"generation\":3},\"spec\":{\"replicas\":2},"
         "\"status\":{\"observedGeneration\":3,\"replicas\":2,\"updatedReplicas\":2,"
         "\"availableReplicas\":2,\"readyReplicas\":2}}",
         KUBE_ROLLOUT_DONE, "successfully rolled out"},
        /* spec.replicas absent means 1. */
        {"{\"metadata\":{\"name\":\"w\",\"generation\":1},\"spec\":{},"
         "\"status\":{\"observedGeneration\":1}}",
         KUBE_ROLLOUT_WAITING, "0 out of 1"},
        {"{\"metadata\":{\"name\":\"w\",\"generation\":5},\"spec\":{\"replicas\":1},"
         "\"status\":{\"observedGeneration\":5,\"replicas\":1,\"updatedReplicas\":0,"
         "\"conditions\":[{\"type\":\"Available\",\"status\":\"True\"},{\"type\":"
         "\"Progressing\",\"status\":\"False\",\"reason\":\"ProgressDeadlineExceeded\"}]}}",
         KUBE_ROLLOUT_FAILED, "exceeded its progress deadline"},
        /* Pods refused at admission: failed at once, with the API server's message. */
        {"{\"metadata\":{\"name\":\"w\",\"generation\":2},\"spec\":{\"replicas\":1},"
         "\"status\":{\"observedGeneration\":2,\"replicas\":0,\"conditions\":[{\"type\":"
         "\"ReplicaFailure\",\"status\":\"True\",\"reason\":\"FailedCreate\",\"message\":"
         "\"pods \\\"w-1\\\" is forbidden: exceeded quota: q, requested: limits.cpu=2\"}]}}",
         KUBE_ROLLOUT_FAILED,
         "cannot create pods: FailedCreate: pods \"w-1\" is forbidden: exceeded quota: q"},
        /* A ReplicaFailure that is over (status False) is no failure. */
        {"{\"metadata\":{\"name\":\"w\",\"generation\":2},\"spec\":{\"replicas\":1},"
         "\"status\":{\"observedGeneration\":2,\"replicas\":0,\"conditions\":[{\"type\":"
         "\"ReplicaFailure\",\"status\":\"False\",\"reason\":\"FailedCreate\"}]}}",
         KUBE_ROLLOUT_WAITING, "0 out of 1"},
        /* Garbage status fields do not crash and do not read as done. */
        {"{\"metadata\":{\"generation\":\"x\"},\"spec\":{\"replicas\":\"3\"},\"status\":7}",
         KUBE_ROLLOUT_WAITING, "0 out of 1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *d = parse(cases[i].json);
        enum kube_rollout r;
        char msg[ERR_LEN] = "";
        assert_int_equal(kube_deploy_rollout(d, &r, msg), 0);
        if (r != cases[i].want || !strstr(msg, cases[i].msg_has))
            fail_msg("case %zu: state %d msg '%s'", i, (int)r, msg);
        cJSON_Delete(d);
    }
}

static void test_pod_info(void **state)
{
    (void)state;
    cJSON *p =
        parse("{\"metadata\":{\"name\":\"web-1\"},\"status\":{\"phase\":\"Running\",\"podIP\":"
              "\"127.0.10.3\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
              "\"containerStatuses\":[{\"name\":\"app\",\"restartCount\":2,\"lastState\":{"
              "\"terminated\":{\"reason\":\"OOMKilled\",\"exitCode\":137}}},{\"name\":\"side\","
              "\"restartCount\":1,\"state\":{\"running\":{}}}]}}");
    struct kube_pod_info pi;
    assert_int_equal(kube_pod_info_read(p, "app", &pi), 0);
    assert_string_equal(pi.name, "web-1");
    assert_string_equal(pi.phase, "Running");
    assert_string_equal(pi.pod_ip, "127.0.10.3");
    assert_int_equal(pi.ready, 1);
    assert_int_equal(pi.restarts, 2);
    assert_int_equal(pi.oom_killed, 1);
    assert_int_equal(pi.deleting, 0);
    assert_int_equal(kube_pod_info_read(p, "side", &pi), 0);
    assert_int_equal(pi.restarts, 1);
    assert_int_equal(pi.oom_killed, 0);
    assert_int_equal(kube_pod_info_read(p, NULL, &pi), 0);
    assert_int_equal(pi.restarts, 3);
    assert_int_equal(pi.oom_killed, 1);
    cJSON_Delete(p);

    p = parse("{\"metadata\":{\"name\":\"x\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
              "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"Ready\","
              "\"status\":\"False\"}]}}");
    assert_int_equal(kube_pod_info_read(p, NULL, &pi), 0);
    assert_int_equal(pi.ready, 0);
    assert_int_equal(pi.deleting, 1);
    assert_string_equal(pi.pod_ip, "");
    cJSON_Delete(p);
}

static void test_meta_and_containers(void **state)
{
    (void)state;
    cJSON *d = parse(
        "{\"metadata\":{\"name\":\"web\",\"namespace\":\"ns\",\"uid\":\"u-1\","
        "\"resourceVersion\":\"77\",\"generation\":4,\"annotations\":{\"sizeup.dev/sweep\":"
        "\"now\"}},\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\","
        "\"env\":[{\"name\":\"WORKERS\",\"value\":\"2\"}],\"ports\":[{\"containerPort\":8080}]},"
        "{\"name\":\"side\"}]}}}}");
    struct kube_meta m;
    assert_int_equal(kube_meta_read(d, &m), 0);
    assert_string_equal(m.name, "web");
    assert_string_equal(m.ns, "ns");
    assert_string_equal(m.uid, "u-1");
    assert_string_equal(m.resource_version, "77");
    assert_int_equal(m.generation, 4);
    assert_string_equal(kube_annotation(d, "sizeup.dev/sweep"), "now");
    assert_null(kube_annotation(d, "sizeup.dev/mode"));
    assert_int_equal(kube_set_annotation(d, "sizeup.dev/status", "running 1/6"), 0);
    assert_string_equal(kube_annotation(d, "sizeup.dev/status"), "running 1/6");
    assert_int_equal(kube_set_annotation(d, "sizeup.dev/status", NULL), 0);
    assert_null(kube_annotation(d, "sizeup.dev/status"));
    assert_int_equal(kube_set_label(d, "a", "b"), 0);
    assert_string_equal(kube_label(d, "a"), "b");

    cJSON *c = kube_deploy_container(d, NULL);
    assert_non_null(c);
    assert_int_equal(kube_container_port(c), 8080);
    assert_string_equal(kube_container_env(c, "WORKERS"), "2");
    assert_null(kube_container_env(c, "OTHER"));
    c = kube_deploy_container(d, "side");
    assert_non_null(c);
    assert_int_equal(kube_container_port(c), 0);
    assert_null(kube_deploy_container(d, "nope"));
    cJSON_Delete(d);

    d = parse("{\"metadata\":{}}");
    assert_int_equal(kube_meta_read(d, &m), -EINVAL);
    assert_null(kube_deploy_container(d, NULL));
    cJSON_Delete(d);
}

static void test_time(void **state)
{
    (void)state;
    struct timespec t = {1795896000, 123456789}, back;
    char buf[48];
    assert_int_equal(kube_time_format(&t, 1, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "2026-11-28T20:00:00.123456Z");
    assert_int_equal(kube_time_format(&t, 0, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "2026-11-28T20:00:00Z");
    assert_int_equal(kube_time_format(&t, 1, buf, 10), -ENOSPC);
    assert_int_equal(kube_time_parse("2026-11-28T20:00:00.123456Z", &back), 0);
    assert_int_equal(back.tv_sec, 1795896000);
    assert_int_equal(back.tv_nsec, 123456000);
    assert_int_equal(kube_time_parse("2026-11-28T22:00:00+02:00", &back), 0);
    assert_int_equal(back.tv_sec, 1795896000);
    assert_int_equal(kube_time_parse("2026-11-28T19:30:00-00:30", &back), 0);
    assert_int_equal(back.tv_sec, 1795896000);
    static const char *const bad[] = {"",
                                      "2026-11-28",
                                      "2026-11-28T20:00:00",
                                      "2026-13-28T16:00:00Z",
                                      "2026-11-28T20:00:00.Z",
                                      "2026-11-28T20:00:00Zx",
                                      "2026-11-28T20:00:00+2:00",
                                      "20x6-11-28T16:00:00Z"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (kube_time_parse(bad[i], &back) != -EINVAL)
            fail_msg("accepted '%s'", bad[i]);
}

static void test_lease_read(void **state)
{
    (void)state;
    cJSON *l = parse("{\"metadata\":{\"resourceVersion\":\"9\"},\"spec\":{\"holderIdentity\":"
                     "\"op-1\",\"leaseDurationSeconds\":15,\"acquireTime\":"
                     "\"2026-11-28T20:00:00.000000Z\",\"renewTime\":\"2026-11-28T20:00:10.5Z\","
                     "\"leaseTransitions\":3}}");
    struct kube_lease ls;
    assert_int_equal(kube_lease_read(l, &ls), 0);
    assert_string_equal(ls.holder, "op-1");
    assert_int_equal(ls.duration_s, 15);
    assert_int_equal(ls.transitions, 3);
    assert_int_equal(ls.acquire_time.tv_sec, 1795896000);
    assert_int_equal(ls.renew_time.tv_sec, 1795896010);
    assert_int_equal(ls.renew_time.tv_nsec, 500000000);
    assert_string_equal(ls.resource_version, "9");
    cJSON_Delete(l);
}

/* The Deployment's matchLabels as "k=v,k2=v2" (the operator's pdb.yaml selector). */
static void test_deploy_selector(void **state)
{
    (void)state;
    char buf[64];
    cJSON *d = cJSON_Parse("{\"spec\": {\"selector\": {\"matchLabels\": "
                           "{\"app\": \"web\", \"tier\": \"front\", \"n\": 3}}}}");
    assert_non_null(d);
    assert_int_equal(kube_deploy_selector(d, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "app=web,tier=front");
    assert_int_equal(kube_deploy_selector(d, buf, 8), -ENOSPC);
    assert_string_equal(buf, "");
    cJSON_Delete(d);
    d = cJSON_Parse("{\"spec\": {\"selector\": {\"matchExpressions\": []}}}");
    assert_int_equal(kube_deploy_selector(d, buf, sizeof(buf)), -EINVAL);
    assert_string_equal(buf, "");
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollout),
        cmocka_unit_test(test_pod_info),
        cmocka_unit_test(test_meta_and_containers),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_lease_read),
        cmocka_unit_test(test_deploy_selector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
