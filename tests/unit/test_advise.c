/* Tests for src/advise/advise.c: a runner row in the advisor's form. In capacity mode the row is
 * one coherent measurement: throughput is the capacity within the SLO, latencies and errors the
 * repeats at capacity merged; in fixed mode the measured phase, as before. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "advise/advise.h"
#include "advise/advisor.h"
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

/* The last finding that holds words; NULL when none does. */
static const char *finding_with(const struct advice *a, const char *words)
{
    const char *hit = NULL;
    for (size_t i = 0; i < a->nfindings; i++)
        if (strstr(a->findings[i], words))
            hit = a->findings[i];
    return hit;
}

/* The scale-out's shape among the findings, in plain words: points of the law with X1 = 1000 at
 * 1..6 replicas (+-2%, 3 repeats) for each (s, k) and the words the finding must hold. */
static void test_scale_out_finding(void **state)
{
    (void)state;
    static const struct {
        double s, k;
        const char *words;
    } cases[] = {
        {0, 0, "is linear within the measurement's noise"},
        {0.25, 0, "is slowing: a shared resource serialises 25."},
        {0.02, 0.05, "is peaking near 4.4 replicas"},
    };
    struct sweep s;
    struct sweep_row r;
    struct profile p;
    struct sweep_scale_out so;
    struct advisor_row rows[1];
    struct advice *a = calloc(1, sizeof(*a));
    char err[ERR_LEN];
    size_t n;

    assert_non_null(a);
    one_row(&s, &r, &p);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        memset(&so, 0, sizeof(so));
        so.run = true;
        for (unsigned i = 0; i < 6; i++) {
            struct sweep_scale_point *pt = &so.points[so.npoints++];
            double nn = i + 1;
            double x = 1000 * nn / (1 + cases[c].s * (nn - 1) + cases[c].k * nn * (nn - 1));
            pt->replicas = i + 1;
            pt->from = i ? SWEEP_POINT_MEASURED : SWEEP_POINT_SHAPE_SEARCH;
            pt->cap.valid = true;
            pt->cap.rps = x;
            pt->cap.interval =
                (struct stats_summary){3, x, 0.02 * x, 0.017 * x, 0.98 * x, 1.02 * x};
        }
        s.scale_out = &so;
        assert_int_equal(advise_sweep(&s, &p, rows, &n, a, err), 0);
        const char *hit =
            finding_with(a, "Scale-out of 1w / 1.0c / 256Mi at 1, 2, 3, 4, 5, 6 replicas");
        if (!hit || !strstr(hit, cases[c].words))
            fail_msg("case %zu: no finding with \"%s\": %s", c, cases[c].words, hit ? hit : "-");
    }
    /* Points noisy by their intervals' width join the fit, and the finding counts them. */
    const char *counted[] = {"1 of them noisy and weighed by its wider interval,",
                             "2 of them noisy and weighed by their wider intervals,"};
    for (unsigned k = 0; k < 2; k++) {
        struct capacity_result *c = &so.points[2 + k].cap;
        c->valid = false;
        c->flags = CAPACITY_FLAG_NOISY; /* +/-15%: noisy by its interval's width */
        c->interval = (struct stats_summary){
            3, c->rps, 0.06 * c->rps, 0.15 * c->rps, 0.85 * c->rps, 1.15 * c->rps};
        assert_int_equal(advise_sweep(&s, &p, rows, &n, a, err), 0);
        const char *hit = finding_with(a, "Scale-out of");
        if (!hit || !strstr(hit, counted[k]))
            fail_msg("%u noisy: no \"%s\": %s", k + 1, counted[k], hit ? hit : "-");
    }
    /* A point whose figure did not hold its repeats (noisy, narrow interval) is left out; below
     * the curve, the finding says so with both figures; above it, nothing is said. */
    for (unsigned k = 0; k < 2; k++) {
        struct capacity_result *c = &so.points[5].cap;
        double fitted = 1000 * 6.0 / (1 + 0.02 * 5 + 0.05 * 30); /* the case's curve at 6 */
        c->valid = false;
        c->flags = CAPACITY_FLAG_NOISY;
        c->rps = (k ? 1.5 : 0.6) * fitted;
        c->interval = (struct stats_summary){
            3, c->rps, 0.01 * c->rps, 0.02 * c->rps, 0.98 * c->rps, 1.02 * c->rps};
        assert_int_equal(advise_sweep(&s, &p, rows, &n, a, err), 0);
        const char *hit = finding_with(a, "Scale-out of");
        assert_non_null(hit);
        char words[96];
        snprintf(words, sizeof(words), "At 6 replicas, %.0f req/s did not hold its repeats",
                 c->rps);
        if (k == 0 && (!strstr(hit, words) || !strstr(hit, "read no further than measured")))
            fail_msg("below the curve: no \"%s\": %s", words, hit);
        if (k == 1 && strstr(hit, "did not hold"))
            fail_msg("above the curve, still said: %s", hit);
    }
    /* No scale-out, no such finding. */
    s.scale_out = NULL;
    assert_int_equal(advise_sweep(&s, &p, rows, &n, a, err), 0);
    assert_null(finding_with(a, "Scale-out of"));
    free(a);
    load_result_free(&r.load);
    profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_row_is_coherent),
        cmocka_unit_test(test_scale_out_finding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
