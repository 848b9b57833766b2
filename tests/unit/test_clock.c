/* Tests for src/core/clock.c and clock.h: the units agree with each other, conversions between
 * nanoseconds and timespecs round-trip, the clock never goes back, a sleep lasts at least what
 * it was asked, and a signal ends a sleep early (the stop flags of every loop rely on it). */

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>

#include "core/clock.h"

static void test_units_agree(void **state)
{
    (void)state;
    int64_t ns = clock_mono_ns(), us = clock_mono_us(), ms = clock_mono_ms();
    double s = clock_mono_s();

    /* Read within a millisecond of each other, later readers are never earlier. */
    assert_true(us >= ns / 1000 && us - ns / 1000 < 1000);
    assert_true(ms >= ns / 1000000 && ms - ns / 1000000 <= 1);
    assert_true(s >= (double)ns / 1e9 && s - (double)ns / 1e9 < 0.001);
}

static void test_conversions(void **state)
{
    (void)state;
    static const int64_t cases[] = {0, 1, 999999999, 1000000000, 1234567890123LL};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct timespec ts = clock_ns_ts(cases[i]);
        assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
        assert_int_equal(clock_ts_ns(&ts), cases[i]);
    }
    struct timespec now = clock_mono_ts();
    assert_true(clock_ts_ns(&now) <= clock_mono_ns());
}

static void test_never_back(void **state)
{
    (void)state;
    int64_t last = clock_mono_ns();

    for (int i = 0; i < 10000; i++) {
        int64_t now = clock_mono_ns();
        assert_true(now >= last);
        last = now;
    }
}

static void test_sleep(void **state)
{
    (void)state;
    int64_t t0 = clock_mono_us();

    clock_sleep_us(20000);
    int64_t slept = clock_mono_us() - t0;
    assert_true(slept >= 20000);
    t0 = clock_mono_us();
    clock_sleep_us(0);
    clock_sleep_us(-5);
    assert_true(clock_mono_us() - t0 < 20000);
}

static void on_alarm(int sig)
{
    (void)sig;
}

static void test_signal_ends_sleep(void **state)
{
    (void)state;
    struct sigaction sa, old;
    struct itimerval it = {{0, 0}, {0, 50000}};

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm; /* no SA_RESTART: the sleep must see EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    int64_t t0 = clock_mono_us();
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
    clock_sleep_us(5 * 1000000);
    int64_t slept = clock_mono_us() - t0;
    sigaction(SIGALRM, &old, NULL);
    /* The alarm after 50 ms ended a 5 s sleep; allow a loaded machine a whole second. */
    assert_true(slept >= 40000 && slept < 1000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_agree),       cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_never_back),        cmocka_unit_test(test_sleep),
        cmocka_unit_test(test_signal_ends_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
