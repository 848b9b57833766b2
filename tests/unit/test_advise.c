/* Tests for src/advise/advise.c: a runner row in the advisor's form. In capacity mode the row is
 * one coherent measurement: throughput is the capacity within the SLO, latencies and errors the
 * repeats at capacity merged; in fixed mode the measured phase, as before. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "advise/advise.h"
#include "load/hist.h"

static void one_row(struct sweep *s, struct sweep_row *r, struct profile *p)
{
    char err[ERR_LEN];

    memset(s, 0, sizeof(*s));
    memset(r, 0, sizeof(*r));
    assert_int_equal(profile_init_default(p), 0);
    assert_int_equal(variant_parse("1@1/256Mi", &r->variant, err), 0);
    r->state = SWEEP_ROW_MEASURED;
    r->have_load = true;
    assert_int_equal(load_result_init(&r->load, p), 0);
    r->load.duration_s = 5;
    /* The last repeat: 1210 req/s at 103 ms. */
    for (int i = 0; i < 6050; i++)
        hist_record(&r->load.total.latency, 103000);
    r->load.total.requests = r->load.total.responses = 6050;
    s->n = 1;
    s->rows = r;
}

static void test_capacity_row_is_coherent(void **state)
{
    (void)state;
    struct sweep s;
    struct sweep_row r;
    struct profile p;
    struct advisor_row out;

    one_row(&s, &r, &p);
    advise_row_from_sweep(&s, 0, &out);
    assert_true(out.throughput_rps > 1209 && out.throughput_rps < 1211);
    assert_true(out.p95_us >= 100000);

    r.cap.searched = true;
    r.cap.rps = 1247;
    r.cap.merged.have = true;
    r.cap.merged.requests = 18000;
    r.cap.merged.p50_us = 20000;
    r.cap.merged.p95_us = 61000;
    r.cap.merged.p99_us = 90000;
    r.cap.merged.error_rate = 0.001;
    advise_row_from_sweep(&s, 0, &out);
    assert_true(out.throughput_rps == 1247);
    assert_int_equal(out.p50_us, 20000);
    assert_int_equal(out.p95_us, 61000);
    assert_int_equal(out.p99_us, 90000);
    assert_true(out.error_rate == 0.001);
    assert_int_equal(out.requests, 18000);

    /* Searched without repeats (none passed, unmeetable): the capacity, with the representative
     * step's latencies. */
    memset(&r.cap.merged, 0, sizeof(r.cap.merged));
    r.cap.rps = 0;
    advise_row_from_sweep(&s, 0, &out);
    assert_true(out.throughput_rps == 0);
    assert_true(out.p95_us >= 100000);
    load_result_free(&r.load);
    profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_row_is_coherent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
