/* Integration tests of the Kubernetes client against the fake API server (tests/fakeapi) over
 * real TLS: CRUD and the three patch types, 409 read-modify-write, injected 429 / 503 / 409,
 * client certificates, token rotation, informer with 410 and dropped watches, leases, events,
 * and refused connections for a wrong CA or host name. tests/integration/kube_client.sh starts
 * the two fakes and runs it; without them it fails (it tests nothing without a fake). */

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

#include <pthread.h>
#include <stdatomic.h>

#include "fakelib.h"
#include "kube/client.h"
#include "kube/kube_int.h"
#include "kube/objects.h"

/* A clean-up whose object may already be gone: its result is looked at and let go. */
#define CLEANUP(call)                                                                              \
    do {                                                                                           \
        int cleanup_rc_ = (call);                                                                  \
        (void)cleanup_rc_;                                                                         \
    } while (0)

static struct fk fake;    /* the fake (FAKEAPI_DIR) */
static struct fk badhost; /* a second fake whose certificate names another host */
static char tmp[256];

static void slurp(const char *dir, const char *name, char *buf, size_t len)
{
    char err[ERR_LEN] = "";
    if (fk_slurp(dir, name, buf, len, err))
        fail_msg("%s", err);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A client for server with CA file ca and either a static token or a token file. */
static kube_client_t *client_for(const char *srv, const char *ca, const char *token,
                                 const char *token_file, kube_config_t **cfg_out)
{
    char err[ERR_LEN] = "";
    struct kube_client_opts o = {.request_timeout_ms = 10000,
                                 .max_attempts = 4,
                                 .backoff_base_ms = 100,
                                 .backoff_max_ms = 1000};
    kube_client_t *c = fk_client(srv, ca, token, token_file, &o, cfg_out, err);
    if (!c)
        fail_msg("client: %s", err);
    return c;
}

/* The control client: the fake's /fake endpoints with its control token. */
static kube_client_t *control(kube_config_t **cfg)
{
    char tok[128], ca[600];
    slurp(fake.dir, "control-token", tok, sizeof(tok));
    snprintf(ca, sizeof(ca), "%s/ca.crt", fake.dir);
    return client_for(fake.server, ca, tok, NULL, cfg);
}

static void fault(const char *rule)
{
    char err[ERR_LEN] = "";
    if (fk_fault(&fake, rule, err))
        fail_msg("fault %s: %s", rule, err);
}

static void faults_clear(void)
{
    char err[ERR_LEN] = "";
    if (fk_faults_clear(&fake, err))
        fail_msg("faults: %s", err);
}

/* Number of API requests (not control calls) the fake has logged. */
static int logged_requests(void)
{
    char err[ERR_LEN] = "";
    cJSON *e = fk_log_since(&fake, 0, err);
    if (!e)
        fail_msg("log: %s", err);
    int n = cJSON_GetArraySize(e);
    cJSON_Delete(e);
    return n;
}

/* The admin client from the fake's own kubeconfig file, as a user's would be loaded. */
static kube_client_t *admin(kube_config_t **cfg)
{
    char err[ERR_LEN] = "", path[600];
    kube_client_t *c = NULL;
    snprintf(path, sizeof(path), "%s/kubeconfig", fake.dir);
    struct kube_config_opts co = {.kubeconfig = path};
    if (kube_config_load(&co, cfg, err))
        fail_msg("load %s: %s", path, err);
    struct kube_client_opts o = {.backoff_base_ms = 100, .backoff_max_ms = 1000};
    assert_int_equal(kube_client_new(*cfg, &o, &c, err), 0);
    return c;
}

static long long now_ms(void)
{
    return kube__now_ms();
}

/* Both fakes must be running: without them this program tests nothing, which is a failure. */
static int group_setup(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    if (fk_open(&fake, "FAKEAPI_DIR", err) || fk_open(&badhost, "FAKEAPI_BADHOST_DIR", err)) {
        fprintf(stderr, "test_kube_fake: %s\n", err);
        return -1;
    }
    snprintf(tmp, sizeof(tmp), "/tmp/test_kube_fake.XXXXXX");
    return mkdtemp(tmp) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[320];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *data_of(const cJSON *cm, const char *k)
{
    return kube_configmap_get_key(cm, k);
}

static void test_crud_and_patches(void **state)
{
    (void)state;
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg);
    char err[ERR_LEN] = "";
    cJSON *out = NULL;

    assert_string_equal(kube_config_namespace(cfg), "default");
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", "crud", NULL, err));
    cJSON *cm =
        cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                    "\"name\":\"crud\",\"labels\":{\"t\":\"crud\"}},\"data\":{\"a\":\"1\"}}");
    cJSON *created = NULL;
    assert_int_equal(kube_create(c, &KUBE_CONFIGMAPS, "default", cm, &created, err), 0);
    struct kube_meta m1;
    assert_int_equal(kube_meta_read(created, &m1), 0);
    assert_true(m1.uid[0] && m1.resource_version[0]);
    assert_int_equal(kube_create(c, &KUBE_CONFIGMAPS, "default", cm, NULL, err), -EEXIST);
    assert_non_null(strstr(err, "409 AlreadyExists"));

    /* An update with the resourceVersion we read succeeds; replaying it is a conflict. */
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "crud", &out, err), 0);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(out, "data"), "a", cJSON_CreateString("2"));
    assert_int_equal(kube_update(c, &KUBE_CONFIGMAPS, "default", "crud", out, NULL, err), 0);
    assert_int_equal(kube_update(c, &KUBE_CONFIGMAPS, "default", "crud", out, NULL, err),
                     KUBE_ECONFLICT);
    assert_non_null(strstr(err, "409 Conflict"));
    cJSON_Delete(out);
    out = NULL;

    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "crud", KUBE_PATCH_MERGE,
                                "{\"data\":{\"b\":\"merge\"}}", &out, err),
                     0);
    assert_string_equal(data_of(out, "a"), "2");
    assert_string_equal(data_of(out, "b"), "merge");
    cJSON_Delete(out);
    out = NULL;
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "crud", KUBE_PATCH_STRATEGIC,
                                "{\"data\":{\"c\":\"smp\"}}", &out, err),
                     0);
    assert_string_equal(data_of(out, "c"), "smp");
    cJSON_Delete(out);
    out = NULL;
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "crud", KUBE_PATCH_JSON,
                                "[{\"op\":\"replace\",\"path\":\"/data/a\",\"value\":\"json\"}]",
                                &out, err),
                     0);
    assert_string_equal(data_of(out, "a"), "json");
    cJSON_Delete(out);
    out = NULL;
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "crud", KUBE_PATCH_JSON,
                                "[{\"op\":\"test\",\"path\":\"/data/a\",\"value\":\"nope\"}]", NULL,
                                err),
                     -EINVAL);

    /* A list with a label selector, in pages of one. */
    struct kube_list_opts lo = {.label_selector = "t=crud", .limit = 1};
    assert_int_equal(kube_list(c, &KUBE_CONFIGMAPS, "default", &lo, &out, err), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(out, "items")), 1);
    cJSON_Delete(out);
    out = NULL;

    /* The ConfigMap helper replaces data exactly and keeps labels; with an owner, it adds an
     * ownerReference the garbage collector follows. */
    static const char *const keys[] = {"results.md", "values.yaml"};
    static const char *const vals[] = {"# table\n", "workers:\n  count: 2\n"};
    cJSON *labels = cJSON_Parse("{\"app.kubernetes.io/managed-by\":\"sizeup\"}");
    assert_int_equal(kube_configmap_put(c, "default", "crud", keys, vals, 2, labels, NULL, err), 0);
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "crud", &out, err), 0);
    assert_null(data_of(out, "a"));
    assert_string_equal(data_of(out, "values.yaml"), "workers:\n  count: 2\n");
    assert_string_equal(kube_label(out, "app.kubernetes.io/managed-by"), "sizeup");
    assert_string_equal(kube_label(out, "t"), "crud");
    cJSON_Delete(out);
    out = NULL;
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", "crud-new", NULL, err));
    assert_int_equal(
        kube_configmap_put(c, "default", "crud-new", keys, vals, 1, labels, created, err), 0);
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "crud-new", &out, err), 0);
    assert_string_equal(data_of(out, "results.md"), "# table\n");
    cJSON_Delete(labels);

    const cJSON *refs = kube_path_get(out, "metadata.ownerReferences");
    assert_int_equal(cJSON_GetArraySize(refs), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(refs, 0), "uid")->valuestring,
                        m1.uid);
    cJSON_Delete(out);
    out = NULL;

    assert_int_equal(kube_delete(c, &KUBE_CONFIGMAPS, "default", "crud", "Background", err), 0);
    assert_int_equal(kube_delete(c, &KUBE_CONFIGMAPS, "default", "crud", NULL, err), -ENOENT);
    /* The owned ConfigMap follows its owner. */
    int rc = 0;
    for (int i = 0; i < 50; i++) {
        rc = kube_get(c, &KUBE_CONFIGMAPS, "default", "crud-new", NULL, err);
        if (rc == -ENOENT)
            break;
        usleep(100000);
    }
    assert_int_equal(rc, -ENOENT);
    cJSON_Delete(created);
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "crud", &out, err), -ENOENT);
    assert_non_null(strstr(err, "404 NotFound"));
    cJSON_Delete(cm);
    kube_client_free(c);
    kube_config_free(cfg);
}

static void test_client_certificate(void **state)
{
    (void)state;
    char err[ERR_LEN] = "", path[512];
    kube_config_t *cfg = NULL;
    kube_client_t *c = NULL;
    cJSON *out = NULL;
    snprintf(path, sizeof(path), "%s/kubeconfig", fake.dir);
    struct kube_config_opts co = {.kubeconfig = path, .context = "fake-cert"};
    assert_int_equal(kube_config_load(&co, &cfg, err), 0);
    assert_int_equal(kube_config_token(cfg, err, sizeof(err)), -ENOENT);
    assert_int_equal(kube_client_new(cfg, NULL, &c, err), 0);
    assert_int_equal(kube_request(c, "GET", "/api/v1/namespaces", NULL, NULL, 0, &out, err), 0);
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(out, "items")) >= 4);
    cJSON_Delete(out);
    kube_client_free(c);
    kube_config_free(cfg);
}

static int set_data(void *ud, cJSON *obj, char *err)
{
    int *calls = ud;
    (void)err;
    (*calls)++;
    cJSON *d = cJSON_GetObjectItem(obj, "data");
    cJSON_DeleteItemFromObject(d, "n");
    cJSON_AddStringToObject(d, "n", "set");
    return 0;
}

static void test_injected_faults(void **state)
{
    (void)state;
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg);
    char err[ERR_LEN] = "";
    cJSON *cm = cJSON_Parse("{\"metadata\":{\"name\":\"faulty\"},\"data\":{\"n\":\"0\"}}");
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", "faulty", NULL, err));
    assert_int_equal(kube_create(c, &KUBE_CONFIGMAPS, "default", cm, NULL, err), 0);

    /* 429 with Retry-After: 2 waits at least 2 s. */
    fault("{\"type\":\"error\",\"code\":429,\"retryAfter\":2,\"count\":1,\"match\":"
          "{\"resource\":\"configmaps\",\"verb\":\"get\"}}");
    long long t0 = now_ms();
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "faulty", NULL, err), 0);
    long long took = now_ms() - t0;
    if (took < 2000 || took > 6000)
        fail_msg("429 Retry-After 2: took %lld ms", took);

    /* Two 503s, then success within the budget (4 attempts). */
    fault("{\"type\":\"error\",\"code\":503,\"count\":2,\"match\":{\"resource\":\"configmaps\","
          "\"verb\":\"get\"}}");
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "faulty", NULL, err), 0);
    /* Past the budget: the error surfaces. */
    fault("{\"type\":\"error\",\"code\":500,\"count\":6,\"match\":{\"resource\":\"configmaps\","
          "\"verb\":\"get\"}}");
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "faulty", NULL, err), -EIO);
    assert_non_null(strstr(err, "injected fault"));
    faults_clear();

    /* Three conflicts on update: the read-modify-write helper succeeds on the fourth try. */
    int calls = 0;
    fault("{\"type\":\"error\",\"code\":409,\"count\":3,\"match\":{\"resource\":\"configmaps\","
          "\"verb\":\"update\"}}");
    assert_int_equal(
        kube_update_retry(c, &KUBE_CONFIGMAPS, "default", "faulty", 5, set_data, &calls, NULL, err),
        0);
    assert_int_equal(calls, 4);
    fault("{\"type\":\"error\",\"code\":409,\"count\":9,\"match\":{\"resource\":\"configmaps\","
          "\"verb\":\"update\"}}");
    calls = 0;
    assert_int_equal(
        kube_update_retry(c, &KUBE_CONFIGMAPS, "default", "faulty", 3, set_data, &calls, NULL, err),
        KUBE_ECONFLICT);
    assert_int_equal(calls, 3);
    faults_clear();
    assert_int_equal(kube_delete(c, &KUBE_CONFIGMAPS, "default", "faulty", NULL, err), 0);
    cJSON_Delete(cm);
    kube_client_free(c);
    kube_config_free(cfg);
}

/* ---- informer ----------------------------------------------------------------------------- */

static void test_informer(void **state)
{
    (void)state;
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg);
    static struct fk_inf s;
    char err[ERR_LEN] = "", name[32];

    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "inf-%d", i);
        CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
    }
    for (int i = 0; i < 3; i++) {
        char body[160];
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"inf-%d\",\"labels\":{\"t\":\"inf\"}}}", i);
        cJSON *o = cJSON_Parse(body);
        assert_int_equal(kube_create(c, &KUBE_CONFIGMAPS, "default", o, NULL, err), 0);
        cJSON_Delete(o);
    }
    /* The informer gets its own client on its own thread, as the operator runs it. */
    struct kube_informer_opts io = {.res = &KUBE_CONFIGMAPS,
                                    .ns = "default",
                                    .label_selector = "t=inf",
                                    .list_limit = 2,
                                    .watch_timeout_s = 2, /* faults apply as a watch starts */
                                    .backoff_base_ms = 200,
                                    .backoff_max_ms = 1000};
    memset(&s, 0, sizeof(s));
    assert_int_equal(fk_inf_start(&s, &fake, &io, err), 0);

    assert_true(fk_wait_for(&s.lists, 1, 5000));
    assert_true(fk_wait_for(&s.listed, 3, 5000)); /* three items over two pages */
    usleep(300000);
    cJSON *o3 = cJSON_Parse("{\"metadata\":{\"name\":\"inf-3\",\"labels\":{\"t\":\"inf\"}}}");
    assert_int_equal(kube_create(c, &KUBE_CONFIGMAPS, "default", o3, NULL, err), 0);
    cJSON_Delete(o3);
    assert_true(fk_wait_for(&s.added, 1, 5000));
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "inf-3", KUBE_PATCH_MERGE,
                                "{\"data\":{\"x\":\"1\"}}", NULL, err),
                     0);
    assert_true(fk_wait_for(&s.modified, 1, 5000));

    /* 410 inside a 200 stream as the next watch starts: a re-list. */
    fault("{\"type\":\"watch-expire\",\"mode\":\"event\",\"afterEvents\":0,\"count\":1}");
    assert_true(fk_wait_for(&s.lists, 2, 8000));
    /* A dropped connection: resume from the last resourceVersion, no re-list. */
    int lists = atomic_load(&s.lists), restarts = atomic_load(&s.restarts);
    fault("{\"type\":\"watch-close\",\"afterSeconds\":0.3,\"count\":1}");
    usleep(3000000);
    assert_true(atomic_load(&s.restarts) >= restarts + 1);
    int modified = atomic_load(&s.modified);
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "inf-2", KUBE_PATCH_MERGE,
                                "{\"data\":{\"x\":\"3\"}}", NULL, err),
                     0);
    assert_true(fk_wait_for(&s.modified, modified + 1, 8000));
    assert_int_equal(atomic_load(&s.lists), lists);
    /* 410 as HTTP when the next watch starts: a re-list. */
    fault("{\"type\":\"watch-expire\",\"mode\":\"http\",\"count\":1}");
    assert_true(fk_wait_for(&s.lists, lists + 1, 8000));
    int deleted = atomic_load(&s.deleted);
    assert_int_equal(kube_delete(c, &KUBE_CONFIGMAPS, "default", "inf-0", NULL, err), 0);
    assert_true(fk_wait_for(&s.deleted, deleted + 1, 8000));
    faults_clear();

    /* Stop: the thread returns promptly even while a watch is open. */
    long long t0 = now_ms();
    fk_inf_stop(&s);
    assert_true(now_ms() - t0 < 3000);
    assert_int_equal(s.rc, -ECANCELED);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "inf-%d", i);
        CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
    }
    kube_client_free(c);
    kube_config_free(cfg);
}

static void test_lease_and_events(void **state)
{
    (void)state;
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg);
    char err[ERR_LEN] = "";
    int leader = -1;
    cJSON *out = NULL;
    struct kube_lease l;

    CLEANUP(kube_delete(c, &KUBE_LEASES, "default", "sizeup-test", NULL, err));
    assert_int_equal(kube_lease_acquire(c, "default", "sizeup-test", "op-a", 15, &leader, err), 0);
    assert_int_equal(leader, 1);
    assert_int_equal(kube_lease_acquire(c, "default", "sizeup-test", "op-b", 15, &leader, err), 0);
    assert_int_equal(leader, 0);
    assert_int_equal(kube_lease_acquire(c, "default", "sizeup-test", "op-a", 15, &leader, err), 0);
    assert_int_equal(leader, 1);
    /* Only the holder can release. */
    assert_int_equal(kube_lease_release(c, "default", "sizeup-test", "op-b", err), 0);
    assert_int_equal(kube_get(c, &KUBE_LEASES, "default", "sizeup-test", &out, err), 0);
    assert_int_equal(kube_lease_read(out, &l), 0);
    assert_string_equal(l.holder, "op-a");
    cJSON_Delete(out);
    out = NULL;
    assert_int_equal(kube_lease_release(c, "default", "sizeup-test", "op-a", err), 0);
    assert_int_equal(kube_lease_acquire(c, "default", "sizeup-test", "op-b", 15, &leader, err), 0);
    assert_int_equal(leader, 1);
    assert_int_equal(kube_get(c, &KUBE_LEASES, "default", "sizeup-test", &out, err), 0);
    assert_int_equal(kube_lease_read(out, &l), 0);
    assert_string_equal(l.holder, "op-b");
    assert_int_equal(l.transitions, 1);
    assert_true(l.renew_time.tv_sec > 0);
    cJSON_Delete(out);
    out = NULL;
    assert_int_equal(kube_delete(c, &KUBE_LEASES, "default", "sizeup-test", NULL, err), 0);

    /* An Event about a ConfigMap. */
    cJSON *cm = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                            "\"name\":\"evt\",\"namespace\":\"default\",\"uid\":\"u-1\"}}");
    struct kube_event_spec sp = {.regarding = cm,
                                 .type = "Warning",
                                 .reason = "SweepFailed",
                                 .action = "Sweep",
                                 .note = "variant 2@1/1Gi was OOM-killed",
                                 .reporting_controller = "sizeup.dev/operator",
                                 .reporting_instance = "test"};
    assert_int_equal(kube_event_emit(c, &sp, err), 0);
    struct kube_list_opts lo = {.field_selector = "regarding.name=evt"};
    assert_int_equal(kube_list(c, &KUBE_EVENTS, "default", &lo, &out, err), 0);
    const cJSON *it, *found = NULL;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(out, "items"))
    {
        const cJSON *r = cJSON_GetObjectItem(it, "reason");
        if (cJSON_IsString(r) && strcmp(r->valuestring, "SweepFailed") == 0)
            found = it;
    }
    assert_non_null(found);
    assert_string_equal(cJSON_GetObjectItem(found, "type")->valuestring, "Warning");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(found, "regarding"), "kind")->valuestring,
        "ConfigMap");
    struct timespec ts;
    assert_int_equal(kube_time_parse(cJSON_GetObjectItem(found, "eventTime")->valuestring, &ts), 0);
    cJSON_Delete(out);
    cJSON_Delete(cm);
    kube_client_free(c);
    kube_config_free(cfg);
}

static void test_tls_refused(void **state)
{
    (void)state;
    char err[ERR_LEN] = "", tok[256], ca[512], bad_ca[512], bad_srv[128], port[32];
    kube_config_t *cfg;
    kube_client_t *c;
    slurp(fake.dir, "token", tok, sizeof(tok));
    snprintf(ca, sizeof(ca), "%s/ca.crt", fake.dir);
    snprintf(bad_ca, sizeof(bad_ca), "%s/ca.crt", badhost.dir);
    slurp(badhost.dir, "ready", port, sizeof(port));
    snprintf(bad_srv, sizeof(bad_srv), "https://127.0.0.1:%s", port);
    int before = logged_requests();

    /* The right server, another CA: no connection. */
    c = client_for(fake.server, bad_ca, tok, NULL, &cfg);
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "x", NULL, err), -EPROTO);
    kube_client_free(c);
    kube_config_free(cfg);
    /* A certificate for another host name, its own CA: no connection. */
    slurp(badhost.dir, "token", tok, sizeof(tok));
    c = client_for(bad_srv, bad_ca, tok, NULL, &cfg);
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "x", NULL, err), -EPROTO);
    kube_client_free(c);
    kube_config_free(cfg);
    /* Neither reached the API: the fake logged no request. */
    assert_int_equal(logged_requests(), before);
    (void)ca;
}

static void test_token_rotation(void **state)
{
    (void)state;
    char err[ERR_LEN] = "", tokfile[320], ca[512], body[512], tok1[256], tok2[256];
    kube_config_t *cfg, *ccfg;
    kube_client_t *ctl = control(&ccfg), *c;
    cJSON *out = NULL;

    /* A user of its own, so other tests' admin token stays valid. */
    snprintf(tokfile, sizeof(tokfile), "%s/rot-token", tmp);
    snprintf(body, sizeof(body),
             "{\"user\":\"rot\",\"groups\":[\"system:masters\"],\"file\":\"%s\"}", tokfile);
    assert_int_equal(kube_request(ctl, "POST", "/fake/tokens", body, NULL, 0, NULL, err), 0);
    slurp(tmp, "rot-token", tok1, sizeof(tok1));
    snprintf(ca, sizeof(ca), "%s/ca.crt", fake.dir);
    c = client_for(fake.server, ca, NULL, tokfile, &cfg);
    assert_int_equal(kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err), -ENOENT);

    /* The fake rotates: the old token is rejected from now on, the file holds the new one. */
    snprintf(body, sizeof(body), "{\"user\":\"rot\",\"file\":\"%s\"}", tokfile);
    assert_int_equal(kube_request(ctl, "POST", "/fake/tokens/rotate", body, NULL, 0, NULL, err), 0);
    slurp(tmp, "rot-token", tok2, sizeof(tok2));
    assert_string_not_equal(tok1, tok2);
    int before = logged_requests();
    assert_int_equal(kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err), -ENOENT);
    /* One 401 with the old token, then the new token works. */
    assert_int_equal(kube_request(ctl, "GET", "/fake/log", NULL, NULL, 16u << 20, &out, err), 0);
    cJSON *entries = cJSON_GetObjectItem(out, "entries");
    int n = cJSON_GetArraySize(entries);
    assert_int_equal(n - before, 2);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(entries, n - 2), "code")->valueint,
                     401);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(entries, n - 1), "code")->valueint,
                     404);
    cJSON_Delete(out);
    out = NULL;

    /* An empty token file: the old (still valid) token is kept and requests go on. */
    write_text(tokfile, "");
    int changed = 0;
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, err), -ENODATA);
    assert_null(strstr(err, tok2));
    assert_int_equal(kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err), -ENOENT);
    /* A revoked token and no new one: 401 surfaces as -EACCES, token not in err. */
    snprintf(body, sizeof(body), "{\"user\":\"rot\"}");
    assert_int_equal(kube_request(ctl, "DELETE", "/fake/tokens", body, NULL, 0, NULL, err), 0);
    assert_int_equal(kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err), -EACCES);
    assert_null(strstr(err, tok2));
    kube_client_free(c);
    kube_config_free(cfg);
    kube_client_free(ctl);
    kube_config_free(ccfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud_and_patches), cmocka_unit_test(test_client_certificate),
        cmocka_unit_test(test_injected_faults),  cmocka_unit_test(test_informer),
        cmocka_unit_test(test_lease_and_events), cmocka_unit_test(test_tls_refused),
        cmocka_unit_test(test_token_rotation),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
