/* Tests for src/sweep/contention.c (the transient contention rule) and src/local/schedstat.c
 * (the runnable waits it reads): a variant kept waiting by its own quota is not contended, one
 * kept waiting by other work on a busy host is, one that did not use its limit on a busy host
 * but was not kept waiting is not; without wait figures the host-CPU rule still holds. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "local/schedstat.h"
#include "sweep/contention.h"

/* One 2 s window of a variant on a 2-core host: cores used, cores everything else used, the
 * runnable wait (< 0: not known) and the time throttled by its own quota. */
static struct platform_usage window(double used, double other, double wait_s, double thr_s)
{
    struct platform_usage u;
    memset(&u, 0, sizeof(u));
    u.window_s = 2.0;
    u.cpu_s = used * u.window_s;
    u.host_other_cores = other;
    u.wait_known = wait_s >= 0;
    u.cpu_wait_s = wait_s;
    u.throttle_known = true;
    u.cpu_throttled_s = thr_s;
    return u;
}

static void test_rule(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        double limit, used, other, wait_s, thr_s;
        bool contended, by_wait;
    } cases[] = {
        /* The busy demo's figures, in shape: 1.0-core limit, the app at 0.55 core, a nice-19
         * build taking every CPU left: the old rule fired on "busy host"; the app was hardly
         * kept waiting (2% of its wanted time), so it is not starved. */
        {"idle-ish app on a busy host", 1.0, 0.55, 1.45, 0.02, 0, false, true},
        {"idle app on a quiet host", 1.0, 0.20, 0.30, 0.01, 0, false, true},
        /* Waiting on its own limit: the wait is the throttled time. */
        {"throttled by its own limit", 1.0, 0.80, 1.20, 1.10, 1.05, false, true},
        {"throttled, at its limit", 0.5, 0.49, 1.50, 1.50, 1.50, false, true},
        /* Runnable but queued behind other work on a busy host. */
        {"runnable wait on a busy host", 1.0, 0.55, 1.45, 0.60, 0, true, true},
        {"runnable wait beyond the throttling", 1.0, 0.50, 1.50, 0.90, 0.40, true, true},
        /* Kept waiting, but it got 90% of its limit: measured at its limit. */
        {"waited, yet got its limit", 1.0, 0.95, 1.05, 0.80, 0, false, true},
        /* The threshold: 10% of the wanted time. used 0.5 core = 1.0 s; 0.1 s waiting is
         * 9.1%, 0.12 s is 10.7%. */
        {"just under the starvation share", 1.0, 0.50, 1.50, 0.10, 0, false, true},
        {"just over the starvation share", 1.0, 0.50, 1.50, 0.12, 0, true, true},
        /* A light app (0.05 cores: 0.1 s of CPU) waiting 0.03 s, 23% of its wanted time but
         * 0.015 cores' worth: ordinary wake-up latency, not starvation (a stream server in
         * sweep_streams.sh read contended without this floor). 0.12 s (0.06 cores) is. */
        {"a light app's wake-up waits", 1.0, 0.05, 0.30, 0.03, 0, false, true},
        {"a light app kept waiting", 1.0, 0.05, 1.50, 0.12, 0, true, true},
        /* No wait figures: the host's CPU decides, as before. */
        {"fallback: busy host, under its limit", 1.0, 0.55, 1.45, -1, 0, true, false},
        {"fallback: quiet host", 1.0, 0.55, 0.50, -1, 0, false, false},
        {"fallback: got its limit", 1.0, 0.95, 1.05, -1, 0, false, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct platform_usage u =
            window(cases[i].used, cases[i].other, cases[i].wait_s, cases[i].thr_s);
        struct sweep_contention k;
        bool hit = sweep_contention_judge(2.0, cases[i].limit, &u, &k);
        if (hit != cases[i].contended || k.by_wait != cases[i].by_wait)
            fail_msg("%s: contended %d (want %d), by_wait %d (want %d), starved %.3f",
                     cases[i].what, hit, cases[i].contended, k.by_wait, cases[i].by_wait,
                     k.starved);
        assert_true(hit == k.contended);
    }
}

static void test_rule_unknown(void **state)
{
    (void)state;
    struct sweep_contention k;
    struct platform_usage u = window(0.5, 1.5, 0.9, 0);
    u.cpu_s = -1; /* no CPU figure: nothing to judge */
    assert_false(sweep_contention_judge(2.0, 1.0, &u, &k));
    assert_true(k.used < 0);
    u = window(0.5, 1.5, 0.9, 0);
    assert_false(sweep_contention_judge(0, 1.0, &u, &k)); /* host unknown */
    /* A limit beyond the host is judged against the host. */
    u = window(1.0, 1.0, 0.9, 0);
    assert_true(sweep_contention_judge(2.0, 4.0, &u, &k));
    assert_true(k.got == 2.0);
}

static void test_rule_generator(void **state)
{
    (void)state;
    struct sweep_contention k;
    /* The generator's share is computed for the log, and does not make a window contended:
     * it got its limit, and the generator's wake-ups waited. */
    struct platform_usage u = window(0.95, 1.05, 0.01, 0);
    u.gen_wait_known = true;
    u.gen_cpu_s = 0.30;
    u.gen_wait_s = 0.20;
    assert_false(sweep_contention_judge(2.0, 1.0, &u, &k));
    assert_true(k.gen_starved > 0.39 && k.gen_starved < 0.41);
    u.gen_wait_known = false;
    assert_false(sweep_contention_judge(2.0, 1.0, &u, &k));
    assert_true(k.gen_starved < 0);
}

static void test_schedstat_parse(void **state)
{
    (void)state;
    uint64_t run = 0, wait = 0;
    assert_int_equal(schedstat_parse("1101948227 1918339930 344\n", &run, &wait), 0);
    assert_true(run == 1101948227ULL && wait == 1918339930ULL);
    assert_int_equal(schedstat_parse("5 7", NULL, &wait), 0);
    assert_true(wait == 7);
    assert_int_equal(schedstat_parse("", &run, &wait), -EINVAL);
    assert_int_equal(schedstat_parse("12", &run, &wait), -EINVAL);
    assert_int_equal(schedstat_parse("12 x 3", &run, &wait), -EINVAL);
    assert_int_equal(schedstat_parse("-1 2 3", &run, &wait), -EINVAL);
    assert_int_equal(schedstat_parse("1 2x", &run, &wait), -EINVAL);
    assert_int_equal(schedstat_parse("99999999999999999999999 1 1", &run, &wait), -EINVAL);
    assert_int_equal(schedstat_parse(NULL, &run, &wait), -EINVAL);
}

static void test_waits_delta(void **state)
{
    (void)state;
    static struct sched_waits a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.n = 2;
    a.t[0].tid = 10, a.t[0].wait_ns = 100;
    a.t[1].tid = 11, a.t[1].wait_ns = 500; /* ended before the window's end: left out */
    b.n = 2;
    b.t[0].tid = 10, b.t[0].wait_ns = 350; /* 250 in the window */
    b.t[1].tid = 12, b.t[1].wait_ns = 40;  /* started in the window: all of it */
    assert_true(sched_waits_delta(&a, &b) == 290);
    b.t[0].wait_ns = 50; /* a reused tid reading less than before: counts nothing */
    assert_true(sched_waits_delta(&a, &b) == 40);
}

static void test_waits_merge(void **state)
{
    (void)state;
    static struct sched_waits seen, now;
    memset(&seen, 0, sizeof(seen));
    memset(&now, 0, sizeof(now));
    seen.n = 1;
    seen.t[0].tid = 10, seen.t[0].wait_ns = 100;
    now.ok = true;
    now.n = 2;
    now.t[0].tid = 11, now.t[0].wait_ns = 30; /* a thread that started: added */
    now.t[1].tid = 10, now.t[1].wait_ns = 160;
    sched_waits_merge(&seen, &now);
    assert_true(seen.ok);
    assert_int_equal(seen.n, 2);
    /* Thread 11 ends; its last reading stays. */
    now.n = 1;
    now.t[0].tid = 10, now.t[0].wait_ns = 200;
    sched_waits_merge(&seen, &now);
    static struct sched_waits begin;
    memset(&begin, 0, sizeof(begin));
    begin.n = 1;
    begin.t[0].tid = 10, begin.t[0].wait_ns = 100;
    assert_true(sched_waits_delta(&begin, &seen) == 100 + 30);
}

static void test_waits_read_self(void **state)
{
    (void)state;
    /* This process's own tasks: read where the kernel keeps schedstat, else said by ok. */
    static struct sched_waits w;
    pid_t self = getpid();
    sched_waits_read(&self, 1, &w);
    if (access("/proc/self/schedstat", R_OK) == 0) {
        assert_true(w.ok);
        assert_true(w.n >= 1);
        assert_false(w.full);
    } else {
        assert_false(w.ok);
    }
    pid_t none = 0;
    sched_waits_read(&none, 1, &w);
    assert_false(w.ok);
    assert_int_equal(w.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_rule_unknown),
        cmocka_unit_test(test_rule_generator),
        cmocka_unit_test(test_schedstat_parse),
        cmocka_unit_test(test_waits_delta),
        cmocka_unit_test(test_waits_merge),
        cmocka_unit_test(test_waits_read_self),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
