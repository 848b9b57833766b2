/* Tests for src/operator/cache.c: what the operator does for each watch event, and what it
 * keeps in memory while doing it. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/cache.h"

static enum cache_action obs(cache_t *c, const char *name, const char *sweep, const char *last,
                             const char *status)
{
    struct cache_obs o = {"default", name, "uid-1", sweep, last, status};
    int rc = 1;
    enum cache_action a = cache_observe(c, &o, 1, &rc);
    assert_int_equal(rc, 0);
    return a;
}

static void test_unannotated_kept_nothing(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    size_t empty = cache_bytes(c);
    for (int i = 0; i < 10000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "app-%d", i);
        assert_int_equal(obs(c, name, NULL, NULL, NULL), CACHE_NONE);
    }
    assert_int_equal(cache_count(c), 0);
    assert_int_equal(cache_bytes(c), empty);
    cache_free(c);
}

static void test_start_once(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    assert_int_equal(obs(c, "web", "now", NULL, NULL), CACHE_START);
    assert_true(cache_busy(c, "default", "web"));
    /* Repeated events while it runs (our own status patches) start nothing. */
    assert_int_equal(obs(c, "web", "now", NULL, NULL), CACHE_NONE);
    assert_int_equal(obs(c, "web", "now", "now", "running 0/2"), CACHE_NONE);
    assert_int_equal(obs(c, "web", "now", "now", "running 1/2"), CACHE_NONE);
    assert_int_equal(cache_job_done(c, "default", "web", "now"), CACHE_NONE);
    assert_false(cache_busy(c, "default", "web"));
    /* A late event still saying running is not a crashed sweep: this process finished it. */
    assert_int_equal(obs(c, "web", "now", "now", "running 2/2"), CACHE_NONE);
    assert_int_equal(obs(c, "web", "now", NULL, NULL), CACHE_NONE); /* stale, pre-start */
    assert_int_equal(obs(c, "web", "now", "now", "done"), CACHE_NONE);
    /* A new value requests another sweep. */
    assert_int_equal(obs(c, "web", "again", "now", "done"), CACHE_START);
    assert_int_equal(cache_job_done(c, "default", "web", "again"), CACHE_NONE);
    cache_free(c);
}

static void test_restart_finds_finished_and_running(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    /* A fresh operator: a finished sweep is not re-run; a failed one neither. */
    assert_int_equal(obs(c, "done", "v1", "v1", "done"), CACHE_NONE);
    assert_int_equal(obs(c, "failed", "v1", "v1", "failed: mode: \"x\" is unknown"), CACHE_NONE);
    /* One marked running with no sweep of ours: an operator died mid-sweep. */
    assert_int_equal(obs(c, "mid", "v1", "v1", "running 1/2"), CACHE_RECOVER);
    assert_true(cache_busy(c, "default", "mid"));
    /* Its sweep annotation was removed while no operator ran: still restore it. */
    assert_int_equal(obs(c, "gone", NULL, "v1", "running 1/2"), CACHE_RECOVER);
    cache_free(c);
}

static void test_new_value_while_busy(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    assert_int_equal(obs(c, "web", "a", NULL, NULL), CACHE_START);
    assert_int_equal(obs(c, "web", "a", "a", "running 1/2"), CACHE_NONE);
    assert_int_equal(obs(c, "web", "b", "a", "running 1/2"), CACHE_NONE);
    /* When "a" ends, "b" starts at once, the Deployment staying busy. */
    assert_int_equal(cache_job_done(c, "default", "web", "a"), CACHE_START);
    assert_true(cache_busy(c, "default", "web"));
    assert_int_equal(cache_job_done(c, "default", "web", "b"), CACHE_NONE);
    cache_free(c);
}

static void test_cancel(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    assert_int_equal(obs(c, "web", "a", NULL, NULL), CACHE_START);
    /* The annotation removed mid-sweep cancels it. */
    assert_int_equal(obs(c, "web", NULL, "a", "running 1/2"), CACHE_CANCEL);
    assert_int_equal(cache_job_done(c, "default", "web", "a"), CACHE_NONE);
    assert_int_equal(obs(c, "web", NULL, "a", "running 1/2"), CACHE_NONE); /* late event */
    /* Deleted mid-sweep: cancel too. */
    assert_int_equal(obs(c, "api", "x", NULL, NULL), CACHE_START);
    assert_int_equal(cache_delete(c, "default", "api"), CACHE_CANCEL);
    assert_int_equal(cache_job_done(c, "default", "api", NULL), CACHE_NONE);
    assert_int_equal(cache_delete(c, "default", "nothing"), CACHE_NONE);
    cache_free(c);
}

struct seen {
    int start, recover;
};

static void fn(void *ctx, enum cache_action act, const char *ns, const char *name, const char *uid)
{
    struct seen *s = ctx;
    assert_string_equal(name, "web");
    if (act == CACHE_START) {
        assert_string_equal(ns, "ns1");
        assert_string_equal(uid, "u1");
        s->start++;
    } else {
        assert_string_equal(ns, "ns2");
        s->recover++;
    }
}

static void test_not_leader(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    struct cache_obs a = {"ns1", "web", "u1", "now", NULL, NULL};
    struct cache_obs b = {"ns2", "web", "u2", "v", "v", "running 2/6"};
    struct cache_obs d = {"ns3", "web", "u3", "v", "v", "done"};
    assert_int_equal(cache_observe(c, &a, 0, NULL), CACHE_NONE);
    assert_int_equal(cache_observe(c, &b, 0, NULL), CACHE_NONE);
    assert_int_equal(cache_observe(c, &d, 0, NULL), CACHE_NONE);
    assert_int_equal(cache_count(c), 3);

    /* On becoming the leader, the scan finds what to do. */
    struct seen s = {0, 0};
    cache_scan(c, fn, &s);
    assert_int_equal(s.start, 1);
    assert_int_equal(s.recover, 1);
    /* A second scan finds them busy. */
    cache_scan(c, fn, &s);
    assert_int_equal(s.start, 1);
    cache_clear_busy(c);
    cache_scan(c, fn, &s);
    assert_int_equal(s.start, 2);
    cache_free(c);
}

static void test_relist_drops_gone(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    assert_int_equal(obs(c, "a", "v", "v", "done"), CACHE_NONE);
    assert_int_equal(obs(c, "b", "v", "v", "done"), CACHE_NONE);
    assert_int_equal(obs(c, "busy", "v", NULL, NULL), CACHE_START);
    assert_int_equal(cache_count(c), 3);
    struct cache_obs other = {"other", "x", "u9", "v", "v", "done"};
    assert_int_equal(cache_observe(c, &other, 1, NULL), CACHE_NONE);
    assert_int_equal(cache_count(c), 4);
    /* A re-list of namespace "default" leaves other namespaces' entries alone. */
    cache_list_begin(c, "default");
    assert_int_equal(obs(c, "a", "v", "v", "done"), CACHE_NONE);
    cache_list_end(c, "default");
    assert_int_equal(cache_count(c), 3);
    cache_list_begin(c, NULL);
    assert_int_equal(obs(c, "a", "v", "v", "done"), CACHE_NONE);
    cache_list_end(c, NULL);
    /* b vanished while the watch was down; the busy one stays until its sweep ends. */
    assert_int_equal(cache_count(c), 2);
    assert_true(cache_busy(c, "default", "busy"));
    /* Annotations removed entirely: forgotten. */
    assert_int_equal(obs(c, "a", NULL, NULL, NULL), CACHE_NONE);
    assert_int_equal(cache_count(c), 1);
    cache_free(c);
}

static void test_recreated_same_name(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    assert_int_equal(obs(c, "web", "v", NULL, NULL), CACHE_START);
    assert_int_equal(cache_job_done(c, "default", "web", "v"), CACHE_NONE);
    /* Same name, new uid, same sweep value: a different Deployment asking for its sweep. */
    struct cache_obs o = {"default", "web", "uid-2", "v", NULL, NULL};
    assert_int_equal(cache_observe(c, &o, 1, NULL), CACHE_START);
    cache_free(c);
}

static void test_many_tracked(void **state)
{
    (void)state;
    cache_t *c;
    assert_int_equal(cache_new(&c), 0);
    for (int i = 0; i < 5000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "app-%d", i);
        assert_int_equal(obs(c, name, "v", "v", "done"), CACHE_NONE);
    }
    assert_int_equal(cache_count(c), 5000);
    for (int i = 0; i < 5000; i += 2) {
        char name[32];
        snprintf(name, sizeof(name), "app-%d", i);
        assert_int_equal(cache_delete(c, "default", name), CACHE_NONE);
    }
    assert_int_equal(cache_count(c), 2500);
    /* Small per entry: well under 200 bytes each for these names. */
    assert_true(cache_bytes(c) < 2500 * 200 + 64 * 1024);
    cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unannotated_kept_nothing),
        cmocka_unit_test(test_start_once),
        cmocka_unit_test(test_restart_finds_finished_and_running),
        cmocka_unit_test(test_new_value_while_busy),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_not_leader),
        cmocka_unit_test(test_relist_drops_gone),
        cmocka_unit_test(test_recreated_same_name),
        cmocka_unit_test(test_many_tracked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
