/* Tests for the load-source seam (src/sweep/load_source.c) as the sweep runner uses it: every
 * load run of a sweep comes from sweep_opts.load_source; a capacity-search step the generator
 * could not deliver is measured again from load_source_more, which the rest of the variant
 * keeps; and a source that reports an incomplete load (a worker lost) fails the variant with
 * the source's reason instead of being measured. A stub platform and stub sources stand in for
 * the app and the generators, so each decision is exact. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/load_source.h"
#include "sweep/runner.h"
#include "stub_platform.h"

/* ---- sources -------------------------------------------------------------------------------- */

struct stub_src {
    unsigned calls;
    unsigned threads;    /* the generators' threads */
    double gen_share;    /* CPU they used, as a share of their threads */
    double capacity_rps; /* the app: up to this rate every request takes 1 ms, above 300 ms */
    int fail;            /* non-zero: every run fails with this code */
    double last_rate;
};

static int s_run(void *self, const struct load_opts *o, struct load_result *out, char *err)
{
    struct stub_src *s = self;
    const struct profile *p = o->profile;
    double dur = (double)p->duration_us / 1e6;
    double rate = p->rate > 0 ? p->rate : s->capacity_rps * 0.5;

    s->calls++;
    s->last_rate = p->rate;
    if (s->fail)
        return err_set(err, s->fail, "generator 2 of 3 failed: Error, exit code 137");
    if (load_result_init(out, p) != 0)
        return -ENOMEM;
    uint64_t n = (uint64_t)(rate * dur);
    uint64_t lat = rate <= s->capacity_rps ? 1000 : 300000;
    out->duration_s = dur;
    out->threads = s->threads;
    out->tool_cpu_s = s->gen_share * s->threads * dur;
    out->target_rate_rps = p->rate;
    out->achieved_rate_rps = p->rate > 0 ? rate : 0;
    out->peak_concurrency = 4;
    for (uint64_t i = 0; i < n; i++) {
        struct load_stats *st[2] = {&out->total, &out->by_name[0]};
        for (int k = 0; k < 2; k++) {
            st[k]->requests++;
            st[k]->responses++;
            st[k]->status[200]++;
            hist_record(&st[k]->latency, lat);
        }
    }
    out->verdict = verdict_classify(&out->total, &p->thresholds);
    return 0;
}
static unsigned s_gen(const void *self)
{
    return ((const struct stub_src *)self)->threads;
}
static void s_free(void *self)
{
    (void)self;
}
static const struct load_source_ops stub_src_ops = {"stub", s_run, s_gen, s_free};

static void sweep_with(struct profile *p, struct stub_src *one, struct stub_src *more,
                       struct sweep *s)
{
    struct stub_platform sp = {.host_millicores = 64000};
    struct platform pl = {&stub_platform_ops, &sp};
    struct load_source a = {&stub_src_ops, one}, b = {&stub_src_ops, more};
    struct variant_list vl;
    struct sweep_opts so = {0};
    char err[ERR_LEN] = "";

    assert_int_equal(variant_parse_list("1@1/256Mi", &vl, err), 0);
    so.platform = &pl;
    so.profile = p;
    so.variants = &vl;
    so.load_threads = 1;
    so.load_source = &a;
    so.load_source_more = more ? &b : NULL;
    assert_int_equal(sweep_run(&so, s, err), 0);
}

static void capacity_profile(struct profile *p)
{
    assert_int_equal(profile_init_default(p), 0);
    p->search.mode = PROFILE_SEARCH_CAPACITY;
    p->search.warmup_us = 0;
    p->search.window_us = 100000;
    p->search.repeats = 2;
    p->search.max_steps = 6;
    p->search.max_rps = 4000;
    p->search.budget_us = 60000000;
}

/* One generator thread at 100% CPU cannot tell the app's limit: the step is measured again from
 * the wider source, which then serves the rest of the search and finds the app's capacity. */
static void test_generator_limited_step_moves_to_more(void **state)
{
    (void)state;
    struct profile p;
    struct sweep s;
    struct stub_src one = {.threads = 1, .gen_share = 1.0, .capacity_rps = 1000};
    struct stub_src more = {.threads = 3, .gen_share = 0.2, .capacity_rps = 1000};

    capacity_profile(&p);
    sweep_with(&p, &one, &more, &s);
    assert_int_equal(one.calls, 1); /* the probe, judged generator-limited */
    assert_true(more.calls > 3);    /* the probe again, the search and the repeats */
    const struct capacity_result *cap = &s.rows[0].cap;
    assert_true(cap->searched);
    for (size_t i = 0; i < cap->nsteps; i++)
        assert_false(cap->steps[i].gen_limited);
    assert_true(cap->rps > 500 && cap->rps <= 1000);
    assert_int_equal(cap->limited_by, CAPACITY_LIMIT_SLO_P95);
    sweep_free(&s);
    profile_free(&p);
}

/* Without a wider source the generator-limited step stays so (the search's "at least"). */
static void test_no_more_source_keeps_generator_limit(void **state)
{
    (void)state;
    struct profile p;
    struct sweep s;
    struct stub_src one = {.threads = 1, .gen_share = 1.0, .capacity_rps = 1000};

    capacity_profile(&p);
    sweep_with(&p, &one, NULL, &s);
    assert_true(one.calls >= 1);
    assert_true(s.rows[0].cap.steps[0].gen_limited);
    sweep_free(&s);
    profile_free(&p);
}

/* A source that lost a worker: the variant is FAILED with the source's reason, not measured. */
static void test_incomplete_load_fails_the_variant(void **state)
{
    (void)state;
    struct profile p;
    struct sweep s;
    struct stub_src one = {.threads = 3, .fail = LOAD_SOURCE_EINCOMPLETE};

    assert_int_equal(profile_init_default(&p), 0);
    p.search.mode = PROFILE_SEARCH_FIXED;
    p.warmup_us = 0;
    p.duration_us = 100000;
    sweep_with(&p, &one, NULL, &s);
    assert_int_equal(one.calls, 1);
    assert_int_equal(s.rows[0].state, SWEEP_ROW_FAILED);
    assert_false(s.rows[0].have_load);
    assert_non_null(strstr(s.rows[0].failure.reason, "generator 2 of 3"));
    sweep_free(&s);
    profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generator_limited_step_moves_to_more),
        cmocka_unit_test(test_no_more_source_keeps_generator_limit),
        cmocka_unit_test(test_incomplete_load_fails_the_variant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
