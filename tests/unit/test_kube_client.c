/* Tests for src/kube/client.c and the watch/informer loop in src/kube/watch.c, against a
 * scripted HTTP server on 127.0.0.1 (tests/unit/mock_http.h): Status decoding, paths, retries
 * (429 Retry-After, 5xx backoff, 401 token re-read), 409 read-modify-write, body caps, watch
 * streams cut into pieces, 410 Gone, the informer's re-list, stop, and no token in logs. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/log.h"
#include "kube/client.h"
#include "mock_http.h"

#define TOKEN1 "tok-one-aaaaaaaaaaaaaaaaaaaaaaaa"
#define TOKEN2 "tok-two-bbbbbbbbbbbbbbbbbbbbbbbb"

static char dir[256];

static void write_token(const char *tok)
{
    char p[320];
    snprintf(p, sizeof(p), "%s/token", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(tok, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_kube_client.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[320];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

struct counts {
    int n;
    long codes[MOCK_MAX];
    char verbs[MOCK_MAX][8];
};

static void on_request(void *ud, const char *verb, long code, double seconds)
{
    struct counts *c = ud;
    (void)seconds;
    if (c->n < MOCK_MAX) {
        c->codes[c->n] = code;
        snprintf(c->verbs[c->n], sizeof(c->verbs[0]), "%s", verb);
    }
    c->n++;
}

struct env {
    struct mock m;
    kube_config_t *cfg;
    kube_client_t *c;
    struct counts counts;
    atomic_int stop;
};

static int stop_fn(void *ud)
{
    return atomic_load((atomic_int *)ud);
}

/* Starts the mock with script and a client whose kubeconfig uses tokenFile. */
static void env_start(struct env *e, const struct mock_resp *script, int n)
{
    char y[1024], err[ERR_LEN] = "";
    memset(e, 0, sizeof(*e));
    assert_int_equal(mock_start(&e->m, script, n), 0);
    write_token(TOKEN1 "\n");
    snprintf(y, sizeof(y),
             "current-context: t\ncontexts: [{name: t, context: {cluster: c, user: u, "
             "namespace: ns1}}]\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:%d'}}]\n"
             "users: [{name: u, user: {tokenFile: token}}]\n",
             e->m.port);
    assert_int_equal(kube_config_parse(y, strlen(y), dir, NULL, 3600, &e->cfg, err), 0);
    struct kube_client_opts o = {.request_timeout_ms = 5000,
                                 .max_attempts = 3,
                                 .backoff_base_ms = 50,
                                 .backoff_max_ms = 200,
                                 .stop = stop_fn,
                                 .stop_ctx = &e->stop,
                                 .on_request = on_request,
                                 .on_request_ctx = &e->counts};
    assert_int_equal(kube_client_new(e->cfg, &o, &e->c, err), 0);
}

static void env_stop(struct env *e)
{
    kube_client_free(e->c);
    kube_config_free(e->cfg);
    mock_stop(&e->m);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- pure functions ----------------------------------------------------------------------- */

static void test_status_decode(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        long http;
        int rc;
        long code;
        const char *reason;
        const char *msg;
    } cases[] = {
        {"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
         "\"deployments.apps \\\"web\\\" not found\",\"reason\":\"NotFound\",\"code\":404}",
         404, -ENOENT, 404, "NotFound", "deployments.apps \"web\" not found"},
        {"{\"kind\":\"Status\",\"reason\":\"Conflict\",\"message\":\"the object has been "
         "modified\",\"code\":409}",
         409, KUBE_ECONFLICT, 409, "Conflict", "the object has been modified"},
        {"{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409}", 409, -EEXIST, 409,
         "AlreadyExists", ""},
        {"{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410}", 410, KUBE_EGONE, 410,
         "Expired", ""},
        {"<html>bad gateway</html>", 502, -EIO, 502, "BadGateway", ""},
        {"", 403, -EPERM, 403, "Forbidden", ""},
        {NULL, 429, -EBUSY, 429, "TooManyRequests", ""},
        {"{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\",\"message\":\"a\\nb\"}", 422,
         -EINVAL, 422, "Invalid", "a b"},
        /* A Status in a 200 watch stream carries the real code. */
        {"{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\"}", 0, -EIO, 500,
         "InternalError", ""},
        /* A Status cannot claim a different code than the HTTP response. */
        {"{\"kind\":\"Status\",\"code\":200}", 500, -EIO, 500, "InternalError", ""},
        {"{\"kind\":\"Status\",\"code\":1e300}", 0, -EPROTO, 0, "", ""},
        {"{\"kind\":\"Pod\"}", 401, -EACCES, 401, "Unauthorized", ""},
        {"{}", 200, 0, 200, "", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kube_status st;
        const char *b = cases[i].body;
        int rc = kube_status_decode(b, b ? strlen(b) : 0, cases[i].http, &st);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d want %d", i, rc, cases[i].rc);
        assert_int_equal(st.code, cases[i].code);
        assert_string_equal(st.reason, cases[i].reason);
        assert_string_equal(st.message, cases[i].msg);
    }
}

static void test_paths(void **state)
{
    (void)state;
    char p[256];
    assert_int_equal(kube_path(&KUBE_DEPLOYMENTS, "default", "web", p, sizeof(p)), 0);
    assert_string_equal(p, "/apis/apps/v1/namespaces/default/deployments/web");
    assert_int_equal(kube_path(&KUBE_PODS, "ns", NULL, p, sizeof(p)), 0);
    assert_string_equal(p, "/api/v1/namespaces/ns/pods");
    assert_int_equal(kube_path(&KUBE_DEPLOYMENTS, NULL, NULL, p, sizeof(p)), 0);
    assert_string_equal(p, "/apis/apps/v1/deployments");
    assert_int_equal(kube_path(&KUBE_LEASES, "kube-system", "sizeup", p, sizeof(p)), 0);
    assert_string_equal(p, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sizeup");
    assert_int_equal(kube_path(&KUBE_POD_METRICS, "a", "b", p, sizeof(p)), 0);
    assert_string_equal(p, "/apis/metrics.k8s.io/v1beta1/namespaces/a/pods/b");
    /* Names that would escape the path are refused. */
    static const char *const bad[] = {"a/b", "..", "a?b", "a b", "a%2f", "", "x\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(kube_path(&KUBE_PODS, "ns", bad[i], p, sizeof(p)), -EINVAL);
        if (bad[i][0]) /* "" as a namespace means all namespaces */
            assert_int_equal(kube_path(&KUBE_PODS, bad[i], "x", p, sizeof(p)), -EINVAL);
    }
    assert_int_equal(kube_path(&KUBE_PODS, "ns", "x", p, 10), -ENOSPC);
    assert_int_equal(kube_code_to_errno(201, NULL), 0);
    assert_int_equal(kube_code_to_errno(409, "Conflict"), KUBE_ECONFLICT);
    assert_int_equal(kube_code_to_errno(504, NULL), -EIO);
}

/* ---- against the scripted server ---------------------------------------------------------- */

static void test_get_reuse_and_auth(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {200, NULL, "{\"metadata\":{\"name\":\"web\"}}", 0, 0},
        {404, NULL,
         "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"message\":\"not found\",\"code\":404}", 0,
         0},
        {201, NULL, "{\"metadata\":{\"name\":\"cm\"}}", 0, 0},
        {200, NULL, "{}", 0, 0},
        {200, NULL, "", 0, 0},
    };
    struct env e;
    char err[ERR_LEN] = "";
    cJSON *obj = NULL;

    env_start(&e, script, 5);
    assert_int_equal(kube_get(e.c, &KUBE_DEPLOYMENTS, "ns1", "web", &obj, err), 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "name")->valuestring, "web");
    cJSON_Delete(obj);
    obj = NULL;
    assert_int_equal(kube_get(e.c, &KUBE_DEPLOYMENTS, "ns1", "gone", &obj, err), -ENOENT);
    assert_null(obj);
    assert_non_null(strstr(err, "404 NotFound: not found"));
    assert_int_equal(kube_client_last_status(e.c)->code, 404);

    cJSON *cm = cJSON_Parse("{\"metadata\":{\"name\":\"cm\"},\"data\":{\"k\":\"v\"}}");
    assert_int_equal(kube_create(e.c, &KUBE_CONFIGMAPS, "ns1", cm, NULL, err), 0);
    assert_int_equal(kube_patch(e.c, &KUBE_DEPLOYMENTS, "ns1", "web", KUBE_PATCH_STRATEGIC,
                                "{\"spec\":{}}", NULL, err),
                     0);
    assert_int_equal(kube_delete(e.c, &KUBE_CONFIGMAPS, "ns1", "cm", "Background", err), 0);
    cJSON_Delete(cm);

    assert_int_equal(e.m.nreq, 5);
    assert_string_equal(e.m.line[0], "GET /apis/apps/v1/namespaces/ns1/deployments/web");
    assert_string_equal(e.m.auth[0], "Bearer " TOKEN1);
    assert_string_equal(e.m.line[2], "POST /api/v1/namespaces/ns1/configmaps");
    assert_string_equal(e.m.ctype[2], "application/json");
    assert_non_null(strstr(e.m.body[2], "\"k\":\"v\""));
    assert_string_equal(e.m.line[3], "PATCH /apis/apps/v1/namespaces/ns1/deployments/web");
    assert_string_equal(e.m.ctype[3], "application/strategic-merge-patch+json");
    assert_string_equal(e.m.line[4], "DELETE /api/v1/namespaces/ns1/configmaps/cm");
    assert_non_null(strstr(e.m.body[4], "\"propagationPolicy\":\"Background\""));
    /* One connection for all five requests. */
    assert_int_equal(e.m.conns, 1);
    assert_int_equal(e.counts.n, 5);
    assert_int_equal(e.counts.codes[1], 404);
    assert_string_equal(e.counts.verbs[3], "PATCH");
    env_stop(&e);
}

static void test_retry_after_and_5xx(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {429, "Retry-After: 1\r\n", "{\"kind\":\"Status\",\"code\":429}", 0, 0},
        {200, NULL, "{\"ok\":1}", 0, 0},
        {503, NULL, "", 0, 0},
        {500, NULL, "", 0, 0},
        {200, NULL, "{\"ok\":2}", 0, 0},
        {500, NULL, "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd down\"}", 0, 0},
        {502, NULL, "", 0, 0},
        {500, NULL, "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd down\"}", 0, 0},
    };
    struct env e;
    char err[ERR_LEN] = "";
    cJSON *obj = NULL;

    env_start(&e, script, 8);
    long long t0 = now_ms();
    assert_int_equal(kube_get(e.c, &KUBE_PODS, "ns1", "p", &obj, err), 0);
    long long took = now_ms() - t0;
    /* Retry-After: 1 is honoured: at least a second between the two attempts. */
    assert_true(took >= 1000);
    assert_true(took < 4000);
    cJSON_Delete(obj);

    t0 = now_ms();
    assert_int_equal(kube_get(e.c, &KUBE_PODS, "ns1", "p", &obj, err), 0);
    took = now_ms() - t0;
    /* Two backoffs of 50 ms base, doubling, jittered into [d/2, d]: between 50 and 150 ms. */
    assert_true(took >= 50);
    assert_true(took < 1500);
    cJSON_Delete(obj);
    obj = NULL;

    /* Past max_attempts (3) the last error is returned with its Status message. */
    assert_int_equal(kube_get(e.c, &KUBE_PODS, "ns1", "p", &obj, err), -EIO);
    assert_non_null(strstr(err, "500"));
    assert_non_null(strstr(err, "etcd down"));
    assert_int_equal(e.m.nreq, 8);
    assert_int_equal(e.counts.codes[0], 429);
    assert_int_equal(e.counts.codes[1], 200);
    env_stop(&e);
}

static void test_401_rereads_token(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {401, NULL, "{\"kind\":\"Status\",\"code\":401,\"reason\":\"Unauthorized\"}", 0, 0},
        {200, NULL, "{}", 0, 0},
        {401, NULL, "{\"kind\":\"Status\",\"code\":401,\"reason\":\"Unauthorized\"}", 0, 0},
    };
    struct env e;
    char err[ERR_LEN] = "";
    char logpath[320];
    int saved = dup(2);

    /* Capture stderr (the log) to check no token is ever written. */
    snprintf(logpath, sizeof(logpath), "%s/log", dir);
    FILE *lf = fopen(logpath, "w");
    assert_non_null(lf);
    dup2(fileno(lf), 2);
    log_set_level(LOG_DEBUG);

    env_start(&e, script, 3);
    write_token(TOKEN2);
    assert_int_equal(kube_get(e.c, &KUBE_PODS, "ns1", "p", NULL, err), 0);
    assert_string_equal(e.m.auth[0], "Bearer " TOKEN1);
    assert_string_equal(e.m.auth[1], "Bearer " TOKEN2);
    /* The token did not change this time: no pointless retry, -EACCES. */
    assert_int_equal(kube_get(e.c, &KUBE_PODS, "ns1", "p", NULL, err), -EACCES);
    assert_int_equal(e.m.nreq, 3);
    assert_null(strstr(err, "tok-"));
    /* A connection failure's error and log line hold no token either. */
    env_stop(&e);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(lf);
    log_set_level(LOG_INFO);
    char *text = NULL;
    FILE *f = fopen(logpath, "r");
    assert_non_null(f);
    text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "kube.token.reloaded"));
    assert_null(strstr(text, "tok-one"));
    assert_null(strstr(text, "tok-two"));
    assert_null(strstr(text, "Authorization"));
    free(text);
}

static void test_body_cap(void **state)
{
    (void)state;
    static char big[3000];
    memset(big, ' ', sizeof(big) - 1);
    big[0] = '[';
    big[sizeof(big) - 2] = ']';
    static const struct mock_resp script[] = {
        {200, NULL, big, 0, 0},
        {200, NULL, "{\"x\":1}", 0, 0},
        {200, NULL, "not json", 0, 0},
    };
    struct env e;
    char err[ERR_LEN] = "";
    cJSON *obj = NULL;
    env_start(&e, script, 3);
    assert_int_equal(kube_request(e.c, "GET", "/version", NULL, NULL, 1024, &obj, err), -EFBIG);
    assert_null(obj);
    assert_non_null(strstr(err, "larger than 1024"));
    /* The client still works after an over-cap body. */
    assert_int_equal(kube_request(e.c, "GET", "/version", NULL, NULL, 1024, &obj, err), 0);
    cJSON_Delete(obj);
    obj = NULL;
    assert_int_equal(kube_request(e.c, "GET", "/version", NULL, NULL, 1024, &obj, err), -EBADMSG);
    env_stop(&e);
}

static int bump_replicas(void *ud, cJSON *obj, char *err)
{
    int *calls = ud;
    (void)err;
    (*calls)++;
    cJSON *spec = cJSON_GetObjectItem(obj, "spec");
    cJSON_DeleteItemFromObject(spec, "replicas");
    cJSON_AddNumberToObject(spec, "replicas", 3);
    return 0;
}

static void test_update_retry_on_conflict(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {200, NULL, "{\"metadata\":{\"name\":\"web\",\"resourceVersion\":\"1\"},\"spec\":{}}", 0,
         0},
        {409, NULL,
         "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409,\"message\":\"modified\"}", 0,
         0},
        {200, NULL, "{\"metadata\":{\"name\":\"web\",\"resourceVersion\":\"2\"},\"spec\":{}}", 0,
         0},
        {200, NULL, "{\"metadata\":{\"name\":\"web\",\"resourceVersion\":\"3\"}}", 0, 0},
        /* A second call: conflicts until the budget (2) is spent. */
        {200, NULL, "{\"metadata\":{\"name\":\"web\",\"resourceVersion\":\"3\"},\"spec\":{}}", 0,
         0},
        {409, NULL, "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}", 0, 0},
        {200, NULL, "{\"metadata\":{\"name\":\"web\",\"resourceVersion\":\"4\"},\"spec\":{}}", 0,
         0},
        {409, NULL, "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}", 0, 0},
    };
    struct env e;
    char err[ERR_LEN] = "";
    cJSON *out = NULL;
    int calls = 0;
    env_start(&e, script, 8);
    assert_int_equal(kube_update_retry(e.c, &KUBE_DEPLOYMENTS, "ns1", "web", 3, bump_replicas,
                                       &calls, &out, err),
                     0);
    assert_int_equal(calls, 2);
    assert_string_equal(e.m.line[1], "PUT /apis/apps/v1/namespaces/ns1/deployments/web");
    /* The second PUT carries the fresh resourceVersion. */
    assert_non_null(strstr(e.m.body[3], "\"resourceVersion\":\"2\""));
    assert_non_null(strstr(e.m.body[3], "\"replicas\":3"));
    cJSON_Delete(out);
    out = NULL;
    assert_int_equal(kube_update_retry(e.c, &KUBE_DEPLOYMENTS, "ns1", "web", 2, bump_replicas,
                                       &calls, &out, err),
                     KUBE_ECONFLICT);
    assert_null(out);
    assert_non_null(strstr(err, "gave up after 2"));
    env_stop(&e);
}

/* ---- watch and informer ------------------------------------------------------------------- */

struct seen {
    char log[4096];
    int events;
    int stop_after; /* 0: never */
};

static int on_event(void *ud, const struct kube_event *ev)
{
    struct seen *s = ud;
    static const char *const names[] = {"ADDED", "MODIFIED",   "DELETED",  "BOOKMARK",
                                        "ERROR", "LIST_BEGIN", "LIST_END", "RESTART"};
    const cJSON *md = ev->object ? cJSON_GetObjectItem(ev->object, "metadata") : NULL;
    const cJSON *name = md ? cJSON_GetObjectItem(md, "name") : NULL;
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof(s->log) - n, "%s%s%s%s ", names[ev->type],
             ev->from_list ? "(list)" : "", cJSON_IsString(name) ? ":" : "",
             cJSON_IsString(name) ? name->valuestring : "");
    s->events++;
    return s->stop_after && s->events >= s->stop_after ? 42 : 0;
}

#define EV(t, name, rv)                                                                            \
    "{\"type\":\"" t "\",\"object\":{\"metadata\":{\"name\":\"" name                               \
    "\",\"resourceVersion\":\"" rv "\"}}}\n"

static void test_watch_once(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        /* Events cut into 7-byte pieces arriving 20 ms apart. */
        {200, NULL,
         EV("ADDED", "a", "11") "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{"
                                "\"resourceVersion\":\"15\"}}}\n" EV("DELETED", "a", "16"),
         7, 0},
        {200, NULL,
         EV("MODIFIED", "b", "17") "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
                                   "\"code\":410,\"reason\":\"Expired\",\"message\":\"too old\"}}"
                                   "\n",
         50, 0},
        {410, NULL, "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Gone\"}", 0, 0},
        {200, NULL, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}}\nnot json\n",
         0 + 100, 0},
    };
    struct env e;
    struct seen s = {0};
    char err[ERR_LEN] = "", rv[64] = "10";
    struct kube_informer_opts o = {.res = &KUBE_DEPLOYMENTS,
                                   .ns = "ns1",
                                   .label_selector = "app=web,tier in (a,b)",
                                   .on_event = on_event,
                                   .ctx = &s};
    env_start(&e, script, 4);
    assert_int_equal(kube_watch_once(e.c, &o, rv, 30, rv, sizeof(rv), err), 0);
    assert_string_equal(s.log, "ADDED:a DELETED:a ");
    assert_string_equal(rv, "16");
    assert_string_equal(e.m.line[0], "GET /apis/apps/v1/namespaces/ns1/deployments?watch=1&"
                                     "resourceVersion=10&allowWatchBookmarks=true&"
                                     "timeoutSeconds=30&labelSelector=app%3Dweb%2Ctier%20in%20%"
                                     "28a%2Cb%29");
    assert_string_equal(e.counts.verbs[0], "WATCH");

    s.log[0] = '\0';
    assert_int_equal(kube_watch_once(e.c, &o, rv, 30, rv, sizeof(rv), err), KUBE_EGONE);
    assert_string_equal(s.log, "MODIFIED:b ");
    assert_string_equal(rv, "17");
    assert_int_equal(kube_watch_once(e.c, &o, rv, 30, rv, sizeof(rv), err), KUBE_EGONE);
    assert_non_null(strstr(err, "410"));
    assert_int_equal(kube_watch_once(e.c, &o, rv, 30, rv, sizeof(rv), err), -EBADMSG);
    env_stop(&e);
}

static void test_informer(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        /* List in two pages. */
        {200, NULL,
         "{\"kind\":\"DeploymentList\",\"metadata\":{\"resourceVersion\":\"100\",\"continue\":"
         "\"tok1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}",
         0, 0},
        {200, NULL,
         "{\"metadata\":{\"resourceVersion\":\"101\"},\"items\":[{\"metadata\":{\"name\":\"c\"}}]"
         "}",
         0, 0},
        /* A watch that delivers one event, then the server closes it at once. */
        {200, NULL, EV("MODIFIED", "a", "102"), 0, 0},
        /* The resumed watch: 410 inside the stream. */
        {200, NULL,
         "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":"
         "\"Expired\"}}\n",
         0, 0},
        /* Re-list, then a watch whose second event stops the informer. */
        {200, NULL, "{\"metadata\":{\"resourceVersion\":\"200\"},\"items\":[]}", 0, 0},
        {200, NULL, EV("ADDED", "d", "201") EV("DELETED", "d", "202"), 0, 0},
    };
    struct env e;
    struct seen s = {0};
    char err[ERR_LEN] = "";
    struct kube_informer_opts o = {.res = &KUBE_DEPLOYMENTS,
                                   .ns = "ns1",
                                   .list_limit = 2,
                                   .watch_timeout_s = 60,
                                   .backoff_base_ms = 100,
                                   .backoff_max_ms = 400,
                                   .on_event = on_event,
                                   .ctx = &s};
    env_start(&e, script, 6);
    s.stop_after = 12;
    long long t0 = now_ms();
    assert_int_equal(kube_informer_run(e.c, &o, err), 42);
    long long took = now_ms() - t0;
    assert_string_equal(s.log, "LIST_BEGIN ADDED(list):a ADDED(list):b ADDED(list):c LIST_END "
                               "MODIFIED:a RESTART RESTART LIST_BEGIN LIST_END ADDED:d "
                               "DELETED:d ");
    assert_string_equal(e.m.line[0], "GET /apis/apps/v1/namespaces/ns1/deployments?limit=2");
    assert_string_equal(e.m.line[1],
                        "GET /apis/apps/v1/namespaces/ns1/deployments?limit=2&continue=tok1");
    /* The watch starts from the list's first-page resourceVersion, resumes from the last
     * event's, and after the 410 the re-list carries no resourceVersion. */
    assert_non_null(strstr(e.m.line[2], "watch=1&resourceVersion=100&"));
    assert_non_null(strstr(e.m.line[3], "watch=1&resourceVersion=102&"));
    assert_string_equal(e.m.line[4], "GET /apis/apps/v1/namespaces/ns1/deployments?limit=2");
    assert_non_null(strstr(e.m.line[5], "resourceVersion=200&"));
    /* Both watches closed in well under a second: each was followed by a backoff
     * (>= 50 ms each), not a hot loop. */
    assert_true(took >= 100);
    env_stop(&e);
}

static void *set_stop(void *ud)
{
    mock_sleep_ms(300);
    atomic_store((atomic_int *)ud, 1);
    return NULL;
}

static void test_stop_interrupts(void **state)
{
    (void)state;
    static const struct mock_resp script[] = {
        {200, NULL, "{}", 0, 20000},
    };
    struct env e;
    char err[ERR_LEN] = "";
    pthread_t th;
    env_start(&e, script, 1);
    pthread_create(&th, NULL, set_stop, &e.stop);
    long long t0 = now_ms();
    assert_int_equal(kube_get(e.c, &KUBE_PODS, "ns1", "p", NULL, err), -ECANCELED);
    long long took = now_ms() - t0;
    pthread_join(th, NULL);
    assert_true(took < 2500);
    env_stop(&e);
}

static void test_connection_refused(void **state)
{
    (void)state;
    static const char y[] = "current-context: t\ncontexts: [{name: t, context: {cluster: c}}]\n"
                            "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n";
    kube_config_t *cfg = NULL;
    kube_client_t *c = NULL;
    char err[ERR_LEN] = "";
    struct kube_client_opts o = {.max_attempts = 2, .backoff_base_ms = 10};
    assert_int_equal(kube_config_parse(y, strlen(y), NULL, NULL, 0, &cfg, err), 0);
    assert_int_equal(kube_client_new(cfg, &o, &c, err), 0);
    assert_int_equal(kube_get(c, &KUBE_PODS, "a", "b", NULL, err), -ECONNREFUSED);
    assert_non_null(strstr(err, "GET /api/v1/namespaces/a/pods/b"));
    kube_client_free(c);
    kube_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_decode),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_get_reuse_and_auth),
        cmocka_unit_test(test_retry_after_and_5xx),
        cmocka_unit_test(test_401_rereads_token),
        cmocka_unit_test(test_body_cap),
        cmocka_unit_test(test_update_retry_on_conflict),
        cmocka_unit_test(test_watch_once),
        cmocka_unit_test(test_informer),
        cmocka_unit_test(test_stop_interrupts),
        cmocka_unit_test(test_connection_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
