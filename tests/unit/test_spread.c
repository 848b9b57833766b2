/* Tests for src/load/spread.c: the share of a load each of N targets (or generator pods) gets,
 * the spread's refusals, and that a spread run ends with its shares. The spread's load itself is
 * tests/integration/loadtest_spread.sh. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "load/result.h"
#include "load/spread.h"

static void near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.9g, want %.9g", got, want);
}

/* 5 users over 3: 2, 2, 1 (as even as whole users go, the first ones one more). */
static void test_users(void **state)
{
    (void)state;
    unsigned want[] = {2, 2, 1}, sum = 0;
    uint64_t seeds[3];
    for (unsigned k = 0; k < 3; k++) {
        struct profile p;
        char err[ERR_LEN];
        double off = -1;
        uint64_t seed = 7;
        memset(&p, 0, sizeof(p));
        p.users = 5;
        assert_int_equal(load_share_apply(&p, k, 3, &seed, &off, err), 0);
        assert_int_equal(p.users, want[k]);
        near(off, 0, 0); /* a closed loop has no schedule to interleave */
        seeds[k] = seed;
        sum += p.users;
    }
    assert_int_equal(sum, 5);
    assert_true(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2]);

    struct profile p;
    char err[ERR_LEN] = "";
    double off;
    uint64_t seed = 0;
    memset(&p, 0, sizeof(p));
    p.users = 2;
    assert_int_equal(load_share_apply(&p, 2, 3, &seed, &off, err), -EINVAL);
    assert_non_null(strstr(err, "share 2/3 of 2 users holds no user"));
}

/* 300 req/s over 3: 100 each, started 0, 1/300 and 2/300 s after the first, so the three
 * schedules are the one of 300 req/s. One target: the load unchanged. */
static void test_rate_interleaves(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 3; k++) {
        struct profile p;
        char err[ERR_LEN];
        double off;
        uint64_t seed = 0;
        memset(&p, 0, sizeof(p));
        p.rate = 300;
        assert_int_equal(load_share_apply(&p, k, 3, &seed, &off, err), 0);
        near(p.rate, 100, 1e-12);
        near(off, k / 300.0, 1e-15);
    }
    struct profile p;
    char err[ERR_LEN];
    double off;
    uint64_t seed = 0;
    memset(&p, 0, sizeof(p));
    p.rate = 300;
    assert_int_equal(load_share_apply(&p, 0, 1, &seed, &off, err), 0);
    near(p.rate, 300, 0);
    near(off, 0, 0);
}

/* Stages: each stage's target divided, no offset (the ramps add up to the profile's). */
static void test_stages(void **state)
{
    (void)state;
    struct profile_stage st[] = {{1000000, 40, -1}, {1000000, -1, 90}};
    struct profile p;
    char err[ERR_LEN];
    double off;
    uint64_t seed = 0;
    memset(&p, 0, sizeof(p));
    p.stages = st;
    p.nstages = 2;
    assert_int_equal(load_share_apply(&p, 1, 4, &seed, &off, err), 0);
    near(st[0].users, 10, 1e-12);
    near(st[1].rate, 22.5, 1e-12);
    near(st[1].users, -1, 0);
    near(off, 0, 0);
}

static void test_spread_refuses(void **state)
{
    (void)state;
    struct profile p;
    struct load_opts o;
    struct load_result r;
    char err[ERR_LEN] = "";
    const char *urls[LOAD_MAX_URLS + 1];
    for (size_t i = 0; i <= LOAD_MAX_URLS; i++)
        urls[i] = "http://127.0.0.1:1";
    assert_int_equal(profile_init_default(&p), 0);
    memset(&o, 0, sizeof(o));
    o.profile = &p;
    assert_int_equal(load_run_spread(&o, urls, 0, &r, err), -EINVAL);
    assert_non_null(strstr(err, "1 to 16 URLs"));
    assert_int_equal(load_run_spread(&o, urls, LOAD_MAX_URLS + 1, &r, err), -EINVAL);
    /* A bad URL among good ones fails the spread and names it. */
    urls[1] = "ftp://nowhere";
    assert_int_equal(load_run_spread(&o, urls, 2, &r, err), -EINVAL);
    assert_non_null(strstr(err, "ftp://nowhere"));
    profile_free(&p);
}

/* A spread run ends as its shares do, not at the caller's next progress tick (250 ms): a
 * 260 ms load over two targets (a listener that never accepts: the requests wait, none is
 * counted) returns within 150 ms of its length. */
static void test_ends_with_shares(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 64), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/", ntohs(a.sin_port));
    const char *urls[2] = {url, url};
    struct profile p;
    struct load_opts o;
    struct load_result r;
    char err[ERR_LEN] = "";

    assert_int_equal(profile_init_default(&p), 0);
    p.users = 2;
    p.rate = 0;
    p.warmup_us = 0;
    p.duration_us = 260000;
    memset(&o, 0, sizeof(o));
    o.profile = &p;
    o.threads = 1;
    int64_t t0 = clock_mono_ns();
    assert_int_equal(load_run_spread(&o, urls, 2, &r, err), 0);
    double took = (double)(clock_mono_ns() - t0) / 1e9;
    assert_true(took >= 0.26);
    if (took > 0.26 + 0.15)
        fail_msg("a 0.26 s spread took %.3f s", took);
    load_result_free(&r);
    profile_free(&p);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_users),
        cmocka_unit_test(test_rate_interleaves),
        cmocka_unit_test(test_stages),
        cmocka_unit_test(test_spread_refuses),
        cmocka_unit_test(test_ends_with_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
