/* The Kubernetes client over HTTP/2, the way libcurl talks to a real API server: through nginx
 * (TLS ended there, h2 by ALPN, the fake behind it over HTTP/1.1). A paged list, patches, a 429
 * with Retry-After, a watch held open for many seconds with events spread over it (each must
 * arrive as it happens, not when the stream ends), and 410 Gone both inside a watch stream and
 * as the HTTP status of a new watch. tests/integration/kube_http2.sh starts the fake and nginx
 * (FAKEAPI_DIR: the fake itself, for faults; FAKEAPI_H2_DIR: its files with nginx's port) and
 * checks nginx's log that every request was HTTP/2. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "fakelib.h"
#include "kube/client.h"
#include "kube/kube_int.h"
#include "kube/objects.h"

static struct fk fake; /* direct, for faults */
static struct fk h2;   /* through nginx */

static kube_client_t *client(kube_config_t **cfg)
{
    char err[ERR_LEN] = "";
    struct kube_client_opts o = {.request_timeout_ms = 10000,
                                 .max_attempts = 4,
                                 .backoff_base_ms = 100,
                                 .backoff_max_ms = 1000};
    kube_client_t *c = fk_admin(&h2, &o, cfg, err);
    if (!c)
        fail_msg("client: %s", err);
    return c;
}

static void fault(const char *rule)
{
    char err[ERR_LEN] = "";
    if (fk_fault(&fake, rule, err))
        fail_msg("fault %s: %s", rule, err);
}

static void cm_create(kube_client_t *c, const char *name)
{
    char body[200], err[ERR_LEN] = "";
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"t\":\"h2\"}}}",
             name);
    cJSON *o = cJSON_Parse(body);
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
    if (kube_create(c, &KUBE_CONFIGMAPS, "default", o, NULL, err))
        fail_msg("create %s: %s", name, err);
    cJSON_Delete(o);
}

static void test_list_patch_429(void **state)
{
    (void)state;
    kube_config_t *cfg;
    kube_client_t *c = client(&cfg);
    char err[ERR_LEN] = "", name[32];
    cJSON *out = NULL;

    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "h2-list-%d", i);
        cm_create(c, name);
    }
    /* A paged list: two items a page, continued to the end. */
    int seen = 0, pages = 0;
    char cont[2048] = "";
    do {
        struct kube_list_opts lo = {.label_selector = "t=h2", .limit = 2, .continue_token = cont};
        assert_int_equal(kube_list(c, &KUBE_CONFIGMAPS, "default", &lo, &out, err), 0);
        seen += cJSON_GetArraySize(cJSON_GetObjectItem(out, "items"));
        const char *next = cJSON_GetStringValue(kube_path_get(out, "metadata.continue"));
        snprintf(cont, sizeof(cont), "%s", next ? next : "");
        cJSON_Delete(out);
        pages++;
    } while (cont[0] && pages < 10);
    assert_int_equal(seen, 5);
    assert_int_equal(pages, 3);

    /* The three patch types. */
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "h2-list-0", KUBE_PATCH_MERGE,
                                "{\"data\":{\"a\":\"1\"}}", NULL, err),
                     0);
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "h2-list-0", KUBE_PATCH_STRATEGIC,
                                "{\"data\":{\"b\":\"2\"}}", NULL, err),
                     0);
    assert_int_equal(kube_patch(c, &KUBE_CONFIGMAPS, "default", "h2-list-0", KUBE_PATCH_JSON,
                                "[{\"op\":\"add\",\"path\":\"/data/c\",\"value\":\"3\"}]", &out,
                                err),
                     0);
    assert_string_equal(cJSON_GetStringValue(kube_path_get(out, "data.a")), "1");
    assert_string_equal(cJSON_GetStringValue(kube_path_get(out, "data.b")), "2");
    assert_string_equal(cJSON_GetStringValue(kube_path_get(out, "data.c")), "3");
    cJSON_Delete(out);

    /* 429 with Retry-After: 2 through nginx: the header survives h2, the wait is honoured. */
    fault("{\"type\":\"error\",\"code\":429,\"retryAfter\":2,\"count\":1,\"match\":"
          "{\"resource\":\"configmaps\",\"verb\":\"get\"}}");
    long long t0 = kube__now_ms();
    assert_int_equal(kube_get(c, &KUBE_CONFIGMAPS, "default", "h2-list-1", NULL, err), 0);
    long long took = kube__now_ms() - t0;
    if (took < 2000 || took > 6000)
        fail_msg("429 Retry-After 2 over h2: took %lld ms", took);
    assert_int_equal(fk_faults_clear(&fake, err), 0);

    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "h2-list-%d", i);
        CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
    }
    kube_client_free(c);
    kube_config_free(cfg);
}

static void test_long_watch_and_410(void **state)
{
    (void)state;
    kube_config_t *cfg;
    kube_client_t *c = client(&cfg);
    static struct fk_inf s;
    char err[ERR_LEN] = "", name[32];

    /* One watch held 30 s; events 4 s apart within it must each arrive within 2 s. */
    struct kube_informer_opts io = {.res = &KUBE_CONFIGMAPS,
                                    .ns = "default",
                                    .label_selector = "t=h2w",
                                    .watch_timeout_s = 30,
                                    .backoff_base_ms = 200,
                                    .backoff_max_ms = 1000};
    memset(&s, 0, sizeof(s));
    assert_int_equal(fk_inf_start(&s, &h2, &io, err), 0);
    assert_true(fk_wait_for(&s.lists, 1, 5000));
    usleep(500000);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "h2w-%d", i);
        char body[200];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"t\":\"h2w\"}}}",
                 name);
        cJSON *o = cJSON_Parse(body);
        CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
        assert_int_equal(kube_create(c, &KUBE_CONFIGMAPS, "default", o, NULL, err), 0);
        cJSON_Delete(o);
        if (!fk_wait_for(&s.added, i + 1, 2000))
            fail_msg("event %d not seen within 2 s over h2 (%d seen)", i, atomic_load(&s.added));
        sleep(4);
    }
    /* All of it on the first watch: no restart, no re-list. */
    assert_int_equal(atomic_load(&s.lists), 1);
    assert_int_equal(atomic_load(&s.restarts), 0);

    long long t0 = kube__now_ms();
    fk_inf_stop(&s);
    assert_true(kube__now_ms() - t0 < 3000);

    /* 410 Gone inside the stream, then as the HTTP status of a new watch: each a re-list. The
     * fake applies watch faults as a watch starts, so these watches end every 2 s. */
    io.watch_timeout_s = 2;
    memset(&s, 0, sizeof(s));
    assert_int_equal(fk_inf_start(&s, &h2, &io, err), 0);
    assert_true(fk_wait_for(&s.lists, 1, 5000));
    fault("{\"type\":\"watch-expire\",\"mode\":\"event\",\"afterEvents\":0,\"count\":1}");
    assert_true(fk_wait_for(&s.lists, 2, 8000));
    int lists = atomic_load(&s.lists);
    fault("{\"type\":\"watch-expire\",\"mode\":\"http\",\"count\":1}");
    assert_true(fk_wait_for(&s.lists, lists + 1, 8000));
    assert_int_equal(fk_faults_clear(&fake, err), 0);
    t0 = kube__now_ms();
    fk_inf_stop(&s);
    assert_true(kube__now_ms() - t0 < 3000);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "h2w-%d", i);
        CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
    }
    kube_client_free(c);
    kube_config_free(cfg);
}

static int group_setup(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    if (fk_open(&fake, "FAKEAPI_DIR", err) || fk_open(&h2, "FAKEAPI_H2_DIR", err)) {
        fprintf(stderr, "test_kube_h2: %s\n", err);
        return -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_patch_429),
        cmocka_unit_test(test_long_watch_and_410),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
