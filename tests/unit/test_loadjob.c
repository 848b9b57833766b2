/* Tests for src/operator/loadjob.c without a cluster: the profile a worker reads back is the
 * load the operator meant (users or rate, stages, requests with headers and bodies), and the Job
 * is what docs/operator.md and docs/safety.md promise (Indexed, no retry, TTL, owner, restricted
 * securityContext, no token, the generators' ServiceAccount, the pull secrets, the share), and a
 * run whose pods the API refuses ends at once with the API's words (a scripted API server). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/clock.h"
#include "kube/objects.h"
#include "load/report.h"
#include "operator/loadjob.h"

#include "mock_http.h"

static const char PROFILE[] = "rate: 120\n"
                              "duration: 7s\n"
                              "warmup: 250ms\n"
                              "timeout: 3s\n"
                              "requests:\n"
                              "  - { name: list, method: GET, path: /api/items?x=1, weight: 36 }\n"
                              "  - name: vote\n"
                              "    method: POST\n"
                              "    path: /api/votes\n"
                              "    weight: 2\n"
                              "    headers: { Authorization: \"Bearer x\", X-A: \"b\" }\n"
                              "    body: '{\"id\":1}'\n";

static const char STAGED[] = "stages:\n"
                             "  - { duration: 2s, users: 10 }\n"
                             "  - { duration: 3s, users: 30 }\n"
                             "  - { duration: 1s, users: 0 }\n";

static void load(const char *text, struct profile *p)
{
    char err[ERR_LEN] = "";
    if (profile_load_buffer(text, strlen(text), "test", p, err) != 0)
        fail_msg("profile: %s", err);
}

/* What the worker parses from the operator's JSON equals the operator's profile. */
static void test_profile_round_trip(void **state)
{
    (void)state;
    const char *texts[] = {PROFILE, STAGED};
    for (size_t t = 0; t < 2; t++) {
        struct profile a, b;
        load(texts[t], &a);
        char *json = loadjob_profile_json(&a);
        assert_non_null(json);
        load(json, &b);
        assert_int_equal(a.users, b.users);
        assert_true(a.rate == b.rate);
        assert_int_equal(a.duration_us, b.duration_us);
        assert_int_equal(a.warmup_us, b.warmup_us);
        assert_int_equal(a.timeout_us, b.timeout_us);
        assert_int_equal(a.nstages, b.nstages);
        for (size_t i = 0; i < a.nstages; i++) {
            assert_int_equal(a.stages[i].duration_us, b.stages[i].duration_us);
            assert_true(a.stages[i].users == b.stages[i].users);
            assert_true(a.stages[i].rate == b.stages[i].rate);
        }
        assert_int_equal(a.nrequests, b.nrequests);
        for (size_t i = 0; i < a.nrequests; i++) {
            const struct profile_request *x = &a.requests[i], *y = &b.requests[i];
            assert_string_equal(x->name, y->name);
            assert_string_equal(x->method, y->method);
            assert_string_equal(x->path, y->path);
            assert_int_equal(x->weight, y->weight);
            assert_int_equal(x->nheaders, y->nheaders);
            for (size_t k = 0; k < x->nheaders; k++) {
                assert_string_equal(x->headers[k].name, y->headers[k].name);
                assert_string_equal(x->headers[k].value, y->headers[k].value);
            }
            if (x->body)
                assert_string_equal(x->body, y->body);
            else
                assert_null(y->body);
        }
        free(json);
        profile_free(&a);
        profile_free(&b);
    }
}

static const char *str_at(const cJSON *o, const char *path)
{
    const cJSON *v = kube_path_get(o, path);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_at(const cJSON *o, const char *path)
{
    const cJSON *v = kube_path_get(o, path);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static bool has_arg(const cJSON *args, const char *a, const char *b)
{
    for (int i = 0; i + 1 < cJSON_GetArraySize(args); i++)
        if (strcmp(cJSON_GetArrayItem(args, i)->valuestring, a) == 0 &&
            strcmp(cJSON_GetArrayItem(args, i + 1)->valuestring, b) == 0)
            return true;
    return false;
}

static void test_job_object(void **state)
{
    (void)state;
    struct profile p;
    struct loadjob_config c = {0};
    struct load_opts o = {0};

    load(PROFILE, &p);
    c.ns = "sizeup";
    c.image = "registry.example/sizeup:1.2";
    c.pull_secrets = "regcred, other";
    c.service_account = "sizeup-generator";
    c.owner_pod = "sizeup-abc";
    c.owner_uid = "uid-1";
    c.cpu = "250m";
    c.memory = "128Mi";
    c.for_label = "web";
    c.generators = 3;
    o.url = "http://10.1.2.3:8080";
    o.profile = &p;
    cJSON *j = loadjob_job_object(&c, &o, 1764559200.5);
    assert_non_null(j);

    assert_string_equal(str_at(j, "apiVersion"), "batch/v1");
    assert_string_equal(str_at(j, "metadata.generateName"), "sizeup-load-");
    assert_string_equal(kube_label(j, "sizeup.dev/component"), "load-generator");
    assert_string_equal(kube_label(j, "app.kubernetes.io/managed-by"), "sizeup");
    assert_string_equal(kube_label(j, "sizeup.dev/generator-for"), "web");
    const cJSON *ref = cJSON_GetArrayItem(kube_path_get(j, "metadata.ownerReferences"), 0);
    assert_string_equal(str_at(ref, "kind"), "Pod");
    assert_string_equal(str_at(ref, "uid"), "uid-1");
    assert_string_equal(str_at(j, "spec.completionMode"), "Indexed");
    assert_true(num_at(j, "spec.completions") == 3 && num_at(j, "spec.parallelism") == 3);
    assert_true(num_at(j, "spec.backoffLimit") == 0);
    assert_true(num_at(j, "spec.ttlSecondsAfterFinished") == LOADJOB_TTL_S);
    assert_true(num_at(j, "spec.activeDeadlineSeconds") > 7);

    const cJSON *ps = kube_path_get(j, "spec.template.spec");
    assert_string_equal(str_at(ps, "restartPolicy"), "Never");
    assert_true(cJSON_IsFalse(kube_path_get(ps, "automountServiceAccountToken")));
    assert_string_equal(str_at(ps, "serviceAccountName"), "sizeup-generator");
    assert_true(cJSON_IsTrue(kube_path_get(ps, "securityContext.runAsNonRoot")));
    assert_string_equal(str_at(ps, "securityContext.seccompProfile.type"), "RuntimeDefault");
    const cJSON *sec = kube_path_get(ps, "imagePullSecrets");
    assert_int_equal(cJSON_GetArraySize(sec), 2);
    assert_string_equal(str_at(cJSON_GetArrayItem(sec, 1), "name"), "other");
    assert_string_equal(kube_label(kube_path_get(j, "spec.template"), "sizeup.dev/component"),
                        "load-generator");

    const cJSON *k = cJSON_GetArrayItem(kube_path_get(ps, "containers"), 0);
    assert_string_equal(str_at(k, "image"), "registry.example/sizeup:1.2");
    assert_string_equal(str_at(k, "resources.limits.cpu"), "250m");
    assert_string_equal(str_at(k, "resources.requests.memory"), "128Mi");
    assert_true(cJSON_IsFalse(kube_path_get(k, "securityContext.allowPrivilegeEscalation")));
    assert_true(cJSON_IsTrue(kube_path_get(k, "securityContext.readOnlyRootFilesystem")));
    assert_string_equal(
        cJSON_GetArrayItem(kube_path_get(k, "securityContext.capabilities.drop"), 0)->valuestring,
        "ALL");
    const cJSON *args = kube_path_get(k, "args");
    assert_string_equal(cJSON_GetArrayItem(args, 0)->valuestring, "loadtest");
    assert_true(has_arg(args, "--url", "http://10.1.2.3:8080"));
    assert_true(has_arg(args, "--share", "$(JOB_COMPLETION_INDEX)/3"));
    assert_true(has_arg(args, "--start-at", "1764559200.500"));
    assert_true(has_arg(args, "--serve-result", ":9090"));
    assert_true(has_arg(args, "--profile-env", LOADJOB_PROFILE_ENV));
    const cJSON *env = cJSON_GetArrayItem(kube_path_get(k, "env"), 0);
    assert_string_equal(str_at(env, "name"), LOADJOB_PROFILE_ENV);
    assert_non_null(strstr(str_at(env, "value"), "/api/votes"));
    cJSON_Delete(j);

    /* Out of the cluster (no owner pod) the Job has no ownerReference, and no pull secrets or
     * ServiceAccount when none are configured. */
    c.owner_pod = c.owner_uid = c.pull_secrets = c.service_account = NULL;
    j = loadjob_job_object(&c, &o, 1764559200.5);
    assert_null(kube_path_get(j, "metadata.ownerReferences"));
    assert_null(kube_path_get(j, "spec.template.spec.imagePullSecrets"));
    assert_null(kube_path_get(j, "spec.template.spec.serviceAccountName"));
    cJSON_Delete(j);
    profile_free(&p);
}

/* The worker's document: accepted when it is worker idx of n, on time and whole; refused with a
 * reason otherwise. */
static void test_result_parse(void **state)
{
    (void)state;
    struct profile p;
    struct load_result r, got;
    char why[ERR_LEN];
    static const struct {
        unsigned worker, workers;
        double late;
        bool interrupted;
        const char *refused; /* NULL: accepted */
    } cases[] = {
        {1, 3, 0.2, false, NULL},
        {2, 3, 0.2, false, "another worker's result"},
        {1, 4, 0.2, false, "another worker's result"},
        {1, 3, 1.5, false, "started 1.50 s after the shared start"},
        {1, 3, 0.2, true, "interrupted"},
    };

    load(PROFILE, &p);
    assert_int_equal(load_result_init(&r, &p), 0);
    r.duration_s = 7;
    r.total.requests = r.by_name[0].requests = 5;
    for (int i = 0; i < 5; i++) {
        hist_record(&r.total.latency, 1000 + i);
        hist_record(&r.by_name[0].latency, 1000 + i);
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        r.interrupted = cases[i].interrupted;
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddNumberToObject(doc, "worker", cases[i].worker);
        cJSON_AddNumberToObject(doc, "workers", cases[i].workers);
        cJSON_AddNumberToObject(doc, "late_s", cases[i].late);
        cJSON_AddItemToObject(doc, "result", report_json(&r));
        char *text = cJSON_PrintUnformatted(doc);
        why[0] = '\0';
        int rc = loadjob_result_parse(text, strlen(text), 1, 3, 1.0, &got, why);
        if (!cases[i].refused) {
            assert_int_equal(rc, 0);
            assert_int_equal(got.total.requests, 5);
            assert_memory_equal(&got.total.latency, &r.total.latency, sizeof(r.total.latency));
            load_result_free(&got);
        } else {
            assert_int_equal(rc, -EINVAL);
            if (!strstr(why, cases[i].refused))
                fail_msg("case %zu: '%s' does not say '%s'", i, why, cases[i].refused);
            assert_null(got.by_name);
        }
        free(text);
        cJSON_Delete(doc);
    }
    assert_int_equal(loadjob_result_parse("{", 1, 1, 3, 1.0, &got, why), -EINVAL);
    assert_non_null(strstr(why, "not JSON"));
    load_result_free(&r);
    profile_free(&p);
}

static void test_source_config(void **state)
{
    (void)state;
    struct loadjob_config c = {0};
    struct load_source s = {0};
    char err[ERR_LEN] = "";
    kube_client_t *fake = (kube_client_t *)&c; /* never called: creation only checks */

    c.client = fake;
    c.ns = "sizeup";
    c.image = "x";
    c.generators = 0;
    assert_int_equal(loadjob_source_new(&c, &s, err), -EINVAL);
    c.generators = LOADJOB_MAX_GENERATORS + 1;
    assert_int_equal(loadjob_source_new(&c, &s, err), -EINVAL);
    c.generators = 3;
    assert_int_equal(loadjob_source_new(&c, &s, err), 0);
    assert_string_equal(s.ops->name, "job");
    assert_int_equal(s.ops->generators(s.self), 3);
    s.ops->free(s.self);
    assert_int_equal(load_source_in_process.ops->generators(NULL), 1);
}

/* A generator run against a scripted API server: the start is delay_s away, so a run that waits
 * for pods that never come takes longer than the test allows. */
struct api_run {
    struct mock m;
    int rc;
    char err[ERR_LEN];
    double took_s;
};

static void run_against(struct api_run *a, const struct mock_resp *script, int n, double delay_s)
{
    static const char STAGE[] = "rate: 10\nduration: 2s\nwarmup: 0s\nrequests:\n"
                                "  - { name: a, method: GET, path: /, weight: 1 }\n";
    char y[512], err[ERR_LEN] = "";
    kube_config_t *cfg = NULL;
    kube_client_t *c = NULL;
    struct kube_client_opts ko = {.max_attempts = 1, .backoff_base_ms = 10};
    struct loadjob_config lc = {0};
    struct load_source src = {0};
    struct load_opts o = {0};
    struct load_result out;
    struct profile p;

    memset(a, 0, sizeof(*a));
    load(STAGE, &p);
    assert_int_equal(mock_start(&a->m, script, n), 0);
    snprintf(y, sizeof(y),
             "current-context: t\ncontexts: [{name: t, context: {cluster: c}}]\n"
             "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:%d'}}]\n",
             a->m.port);
    assert_int_equal(kube_config_parse(y, strlen(y), NULL, NULL, 0, &cfg, err), 0);
    assert_int_equal(kube_client_new(cfg, &ko, &c, err), 0);
    lc.client = c;
    lc.ns = "sizeup";
    lc.image = "example/sizeup:1";
    lc.cpu = "250m";
    lc.memory = "256Mi";
    lc.generators = 2;
    lc.start_delay_s = delay_s;
    assert_int_equal(loadjob_source_new(&lc, &src, err), 0);
    o.url = "http://web.default.svc:8080";
    o.profile = &p;
    int64_t t0 = clock_mono_us();
    a->rc = src.ops->run(src.self, &o, &out, a->err);
    a->took_s = (double)(clock_mono_us() - t0) / 1e6;
    if (a->rc == 0)
        load_result_free(&out);
    src.ops->free(src.self);
    kube_client_free(c);
    kube_config_free(cfg);
    mock_stop(&a->m);
    profile_free(&p);
}

#define JOB_MADE "{\"metadata\":{\"name\":\"sizeup-load-x\",\"uid\":\"u-1\"}}"
#define NO_PODS  "{\"items\":[]}"
#define JOB_LIST(status)                                                                           \
    "{\"items\":[{\"metadata\":{\"name\":\"sizeup-load-x\",\"uid\":\"u-1\"},\"status\":" status    \
    "}]}"
#define REFUSED                                                                                    \
    "Error creating: pods \\\"sizeup-load-x-0-a\\\" is forbidden: maximum cpu usage per "          \
    "Container "                                                                                   \
    "is 100m, but limit is 250m"

/* Pods refused at admission: the Job controller's FailedCreate Event names the LimitRange, and
 * the run fails with those words at its first look, not when the start delay, the run and the
 * report wait are over ("never ran (its pod got no address)"). */
static void test_refused_at_admission(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {201, NULL, JOB_MADE, 0, 0},
        {200, NULL, NO_PODS, 0, 0},
        {200, NULL, JOB_LIST("{}"), 0, 0},
        {200, NULL,
         "{\"items\":[{\"reason\":\"FailedCreate\",\"lastTimestamp\":\"2026-01-01T00:00:01Z\","
         "\"message\":\"an older refusal\"},{\"reason\":\"FailedCreate\",\"lastTimestamp\":"
         "\"2026-01-01T00:00:09Z\",\"message\":\"" REFUSED "\"}]}",
         0, 0},
        {200, NULL, "{}", 0, 0}, /* the Job's delete */
    };
    struct api_run a;

    run_against(&a, script, 5, 20.0);
    assert_int_equal(a.rc, LOAD_SOURCE_EINCOMPLETE);
    if (!strstr(a.err, "generator 0 of 2 was refused by the API server") ||
        !strstr(a.err, "maximum cpu usage per Container is 100m"))
        fail_msg("err: %s", a.err);
    assert_null(strstr(a.err, "never ran"));
    assert_true(a.took_s < 3.0);
    assert_non_null(strstr(a.m.line[2], "/apis/batch/v1/namespaces/sizeup/jobs?"));
    assert_non_null(strstr(a.m.line[2], "metadata.name"));
    assert_non_null(strstr(a.m.line[3], "/api/v1/namespaces/sizeup/events?"));
    assert_non_null(strstr(a.m.line[3], "u-1"));
    assert_non_null(
        strstr(a.m.line[4], "DELETE /apis/batch/v1/namespaces/sizeup/jobs/sizeup-load-x"));
}

/* A Role that may not list Events (403) does not fail the run: the Events are not asked again,
 * and the Job's Failed condition ends the run with its reason and message. */
static void test_job_failed_condition(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {201, NULL, JOB_MADE, 0, 0},
        {200, NULL, NO_PODS, 0, 0},
        {200, NULL, JOB_LIST("{}"), 0, 0},
        {403, NULL,
         "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"events is "
         "forbidden\"}",
         0, 0},
        {200, NULL, NO_PODS, 0, 0},
        {200, NULL, JOB_LIST("{}"), 0, 0},
        {200, NULL, NO_PODS, 0, 0},
        {200, NULL,
         JOB_LIST("{\"conditions\":[{\"type\":\"FailureTarget\",\"status\":\"True\","
                  "\"reason\":\"DeadlineExceeded\",\"message\":\"Job was active longer than "
                  "specified deadline\"},{\"type\":\"Failed\",\"status\":\"True\",\"reason\":"
                  "\"DeadlineExceeded\",\"message\":\"Job was active longer than specified "
                  "deadline\"}]}"),
         0, 0},
        {200, NULL, "{}", 0, 0},
    };
    struct api_run a;

    run_against(&a, script, 9, 20.0);
    assert_int_equal(a.rc, LOAD_SOURCE_EINCOMPLETE);
    if (!strstr(a.err, "was ended by the Job controller (DeadlineExceeded: Job was active longer"))
        fail_msg("err: %s", a.err);
    assert_true(a.took_s < 3.0);
    assert_int_equal(a.m.nreq, 9);
    for (int i = 4; i < 8; i++)
        assert_null(strstr(a.m.line[i], "events"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_round_trip),   cmocka_unit_test(test_job_object),
        cmocka_unit_test(test_result_parse),         cmocka_unit_test(test_source_config),
        cmocka_unit_test(test_refused_at_admission), cmocka_unit_test(test_job_failed_condition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
