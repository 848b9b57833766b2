/* Tests for src/sweep/runner.c's contention rules as the capacity search uses them: a repeat
 * the busy host starved of CPU (the transient rule) is measured again, at most
 * SWEEP_CONTENDED_RERUNS times per variant, so a passing busy moment costs a repeat, not the
 * row; a host busy throughout still marks the row contended. The shared stub platform
 * (stub_platform.h) reports each window's usage, contended on the windows a test picks, and a
 * stub source stands in for the generator, so each decision is exact. */

#include <errno.h>
#include <math.h>
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
#include "sweep/runner_int.h"
#include "stub_platform.h"

/* ---- a 2-core host whose other processes take the CPU in the windows a test picks ------------ */

struct stub_src;

struct stub_host {
    unsigned windows;   /* usage windows measured so far */
    unsigned busy_from; /* the first busy window (1-based); 0: never busy */
    unsigned busy_to;   /* the last busy one */
    /* Non-zero: like a cluster's metrics window, CPU is known only for a window this long
     * (src says how long the last one was); long_windows counts those. */
    int64_t usage_window_us;
    const struct stub_src *src;
    unsigned long_windows;
    int64_t settle_us; /* the profile's search.settle; 0: its default */
};

static double stub_last_dur_s(const struct stub_src *s);

/* A 1-core variant: 0.95 cores used beside 0.2 of other work (its limit, not contended), or in a
 * busy window 0.3 cores beside 1.8 (starved: the transient rule). */
static void host_usage_end(void *ud, struct platform_usage *out)
{
    struct stub_host *h = ud;
    h->windows++;
    bool busy = h->busy_from && h->windows >= h->busy_from && h->windows <= h->busy_to;
    out->window_s = 1;
    out->cpu_s = busy ? 0.3 : 0.95;
    out->host_other_cores = busy ? 1.8 : 0.2;
    out->peak_memory_bytes = FMT_MIB;
    if (h->usage_window_us > 0) {
        double dur = stub_last_dur_s(h->src);
        out->window_s = dur;
        out->usage_window_us = h->usage_window_us;
        out->cpu_s = dur * 1e6 >= (double)h->usage_window_us ? 0.5 * dur : -1;
        h->long_windows += out->cpu_s >= 0;
    }
}

/* ---- the generator -------------------------------------------------------------------------- */

struct stub_src {
    unsigned calls;
    double last_dur_s;   /* the last run's length */
    bool noisy;          /* every third run answers 91% of its rate (within the SLO, noisy) */
    unsigned threads;    /* the generators' threads */
    double gen_share;    /* CPU they used, as a share of their threads */
    double capacity_rps; /* the app: up to this rate every request takes 1 ms, above 300 ms */
    int fail;            /* non-zero: every run fails with this code */
    double last_rate;
    /* Non-zero: an app at its knee from this rate up to capacity_rps: 4% of a run's requests
     * take 300 ms (its p95 passes), and in every third run at one rate 20% do (it fails), so
     * three repeats there pass two of three while their merged p95 is 300 ms. */
    double knee_rps;
    double knee_rate; /* the rate of the runs knee_calls counts */
    unsigned knee_calls;
    /* Non-zero: an app that stays slow after an overload (a run above capacity_rps): for this
     * many seconds of load after it, every request of an open-loop load takes 300 ms, while one
     * user is answered at once as ever. slow_left_s is what remains of it. */
    double slow_after_s;
    double slow_left_s;
};

static int s_run(void *self, const struct load_opts *o, struct load_result *out, char *err)
{
    struct stub_src *s = self;
    const struct profile *p = o->profile;
    double dur = (double)p->duration_us / 1e6;
    double rate = p->rate > 0 ? p->rate : s->capacity_rps * 0.5;

    s->calls++;
    s->last_rate = p->rate;
    s->last_dur_s = dur;
    double answered = s->noisy && s->calls % 3 == 0 ? 0.91 * rate : rate;
    if (s->fail)
        return err_set(err, s->fail, "generator 2 of 3 failed: Error, exit code 137");
    if (load_result_init(out, p) != 0)
        return -ENOMEM;
    uint64_t n = (uint64_t)(answered * dur);
    bool slow = s->slow_left_s > 0 && p->rate > 0;
    uint64_t lat = rate <= s->capacity_rps && !slow ? 1000 : 300000;
    if (s->slow_after_s > 0) {
        s->slow_left_s -= dur;
        if (p->rate > s->capacity_rps)
            s->slow_left_s = s->slow_after_s;
    }
    uint64_t slow_every = 0; /* every slow_every-th request takes 300 ms */
    if (s->knee_rps > 0 && p->rate > s->knee_rps && p->rate <= s->capacity_rps) {
        s->knee_calls = p->rate == s->knee_rate ? s->knee_calls + 1 : 1;
        s->knee_rate = p->rate;
        slow_every = s->knee_calls % 3 == 0 ? 5 : 25;
    }
    out->duration_s = dur;
    out->threads = s->threads;
    out->tool_cpu_s = s->gen_share * s->threads * dur;
    out->target_rate_rps = p->rate;
    out->achieved_rate_rps = p->rate;
    out->peak_concurrency = 4;
    for (uint64_t i = 0; i < n; i++) {
        struct load_stats *st[2] = {&out->total, &out->by_name[0]};
        for (int k = 0; k < 2; k++) {
            st[k]->requests++;
            st[k]->responses++;
            st[k]->status[200]++;
            hist_record(&st[k]->latency, slow_every && i % slow_every == 0 ? 300000 : lat);
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
static double stub_last_dur_s(const struct stub_src *s)
{
    return s->last_dur_s;
}
static const struct load_source_ops stub_src_ops = {"stub", s_run, s_gen, s_free};

static void sweep_with(struct stub_host *h, struct stub_src gen, struct sweep *s)
{
    struct stub_platform sp = {.host_millicores = 2000,
                               .usage_window_us = h->usage_window_us,
                               .usage_end = host_usage_end,
                               .ud = h};
    struct platform pl = {&stub_platform_ops, &sp};
    struct load_source src = {&stub_src_ops, &gen};
    struct variant_list vl;
    struct sweep_opts so = {0};
    struct profile p;
    char err[ERR_LEN] = "";

    assert_int_equal(profile_init_default(&p), 0);
    p.search.mode = PROFILE_SEARCH_CAPACITY;
    p.search.warmup_us = 0;
    p.search.window_us = 100000;
    p.search.repeats = 3;
    p.search.max_steps = 6;
    p.search.max_rps = 4000;
    p.search.budget_us = 60000000;
    if (h->settle_us > 0)
        p.search.settle_us = h->settle_us;
    assert_int_equal(variant_parse_list("1@1/256Mi", &vl, err), 0);
    so.platform = &pl;
    so.profile = &p;
    so.variants = &vl;
    so.load_threads = 1;
    so.load_source = &src;
    h->src = &gen;
    assert_int_equal(sweep_run(&so, s, err), 0);
    h->src = NULL;
    profile_free(&p);
}

static void sweep_on_noisy(struct stub_host *h, bool noisy, struct sweep *s)
{
    sweep_with(
        h, (struct stub_src){.threads = 1, .gen_share = 0.1, .capacity_rps = 1000, .noisy = noisy},
        s);
}

static void sweep_on(struct stub_host *h, struct sweep *s)
{
    sweep_on_noisy(h, false, s);
}

static size_t count_repeats(const struct capacity_result *cap)
{
    size_t n = 0;
    for (size_t i = 0; i < cap->nsteps; i++)
        n += cap->steps[i].kind == CAPACITY_STEP_REPEAT;
    return n;
}

/* The rule itself, at its edges: under 90% of min(limit, host) with the rest of the host taken. */
static void test_transient_rule(void **state)
{
    struct sweep s = {0};
    struct variant v;
    struct platform_usage u = {0};
    char err[ERR_LEN] = "";
    (void)state;

    s.facts.host_millicores = 2000;
    assert_int_equal(variant_parse("1@1/256Mi", &v, err), 0);
    u.window_s = 1;
    u.cpu_s = 0.3;
    u.host_other_cores = 1.8;
    assert_true(sweep__transient_contended(&s, &v, &u));
    u.cpu_s = 0.9; /* got 90% of its limit: measured at its limit however busy */
    assert_false(sweep__transient_contended(&s, &v, &u));
    u.cpu_s = 0.3;
    u.host_other_cores = 1.5; /* 0.3 + 1.5 leaves the host 0.2 cores: not starved */
    assert_false(sweep__transient_contended(&s, &v, &u));
    u.host_other_cores = -1; /* unknown */
    assert_false(sweep__transient_contended(&s, &v, &u));
}

/* A quiet host: every repeat counts, no re-run. A busy moment in one repeat: that repeat is
 * measured again, the row is capacity, not contended. */
static void test_busy_repeat_rerun(void **state)
{
    struct stub_host h = {0};
    struct sweep s;
    (void)state;

    sweep_on(&h, &s);
    unsigned quiet = h.windows;
    const struct capacity_result *cap = &s.rows[0].cap;
    assert_int_equal(cap->interval.n, 3);
    assert_int_equal(cap->contended_reruns, 0);
    assert_int_equal(count_repeats(cap), 3);
    assert_false(s.rows[0].flags & SWEEP_FLAG_CONTENDED);
    sweep_free(&s);

    /* The first repeat is the third window from the end. */
    h = (struct stub_host){.busy_from = quiet - 2, .busy_to = quiet - 2};
    sweep_on(&h, &s);
    cap = &s.rows[0].cap;
    assert_int_equal(h.windows, quiet + 1);
    assert_int_equal(cap->contended_reruns, 1);
    assert_int_equal(cap->interval.n, 3);    /* three repeats counted ... */
    assert_int_equal(count_repeats(cap), 4); /* ... of four measured */
    assert_true(cap->valid);
    assert_false(s.rows[0].flags & SWEEP_FLAG_CONTENDED);
    sweep_free(&s);
}

/* Busy through every repeat: two re-runs, no more, and the row is marked contended (a floor,
 * never presented as capacity). */
static void test_busy_throughout_marked(void **state)
{
    struct stub_host h = {0};
    struct sweep s;
    (void)state;

    sweep_on(&h, &s);
    unsigned quiet = h.windows;
    sweep_free(&s);
    h = (struct stub_host){.busy_from = quiet - 2, .busy_to = 1000};
    sweep_on(&h, &s);
    const struct capacity_result *cap = &s.rows[0].cap;
    assert_int_equal(cap->contended_reruns, SWEEP_CONTENDED_RERUNS);
    assert_int_equal(h.windows, quiet + SWEEP_CONTENDED_RERUNS);
    assert_int_equal(cap->interval.n, 3);
    assert_true(s.rows[0].flags & SWEEP_FLAG_CONTENDED);
    assert_false(cap->valid);
    sweep_free(&s);
}

/* Where CPU is known only for a window as long as the metrics window, the first repeat is held
 * that long; a noisy interval's re-measure at the same rate keeps the CPU the first repeats
 * measured (the same load on the same pod) instead of holding a repeat that long again. */
static void test_remeasure_keeps_cpu(void **state)
{
    struct stub_host h = {.usage_window_us = 300000};
    struct sweep s;
    (void)state;

    sweep_on_noisy(&h, true, &s);
    const struct capacity_result *cap = &s.rows[0].cap;
    assert_int_equal(count_repeats(cap), 6); /* three, noisy, three again */
    assert_int_equal(h.long_windows, 1);
    assert_true(cap->cpu_cores > 0.49 && cap->cpu_cores < 0.51);
    /* The three new repeats join the first three: the interval is of six (Student-t with five
     * degrees of freedom, +/-5% here), where three alone (+/-13%) stayed noisy. */
    assert_int_equal(cap->interval.n, 6);
    assert_true(stats_rel_half(&cap->interval) < CAPACITY_NOISY_REL);
    assert_true(stats_rel_half(&cap->interval) > 0.02);
    assert_false(cap->flags & CAPACITY_FLAG_NOISY);
    assert_true(cap->valid);
    sweep_free(&s);

    /* A steady app: three repeats, one of them long, and its CPU. */
    h = (struct stub_host){.usage_window_us = 300000};
    sweep_on(&h, &s);
    cap = &s.rows[0].cap;
    assert_int_equal(count_repeats(cap), 3);
    assert_false(cap->flags & CAPACITY_FLAG_NOISY);
    assert_int_equal(h.long_windows, 1);
    assert_true(cap->cpu_cores > 0.49 && cap->cpu_cores < 0.51);
    sweep_free(&s);
}

/* Repeats at the knee that pass two of three one by one but miss the SLO merged (the row's
 * P95) do not hold: the search reopens below them, and the capacity the row shows either meets
 * the SLO with its merged repeats or is marked noisy, never a figure its own P95 refutes. */
static void test_merged_repeats_refute(void **state)
{
    struct stub_host h = {0};
    struct sweep s;
    (void)state;

    sweep_with(
        &h,
        (struct stub_src){.threads = 1, .gen_share = 0.1, .capacity_rps = 1000, .knee_rps = 700},
        &s);
    const struct capacity_result *cap = &s.rows[0].cap;
    double first = 0, last = 0; /* the first and the last repeats' rates */
    for (size_t i = 0; i < cap->nsteps; i++) {
        if (cap->steps[i].kind != CAPACITY_STEP_REPEAT)
            continue;
        if (!(first > 0))
            first = cap->steps[i].offered_rps;
        last = cap->steps[i].offered_rps;
    }
    assert_true(first > 700);
    assert_true(last < first); /* refuted: the repeats that count ran below */
    assert_true(cap->merged.have);
    if (cap->valid) {
        assert_true(cap->merged.p95_us < (uint64_t)100000);
        assert_true(cap->rps <= 700);
    } else {
        assert_true(cap->flags & CAPACITY_FLAG_NOISY);
    }
    sweep_free(&s);
}

/* An app that stays slow for 4 s of load after each overload (a collector's storm, a thrashed
 * cache) while one user is answered at once: the settle after a failed step holds the last
 * passing rate's share until the app serves it again, so the next step measures the app, not
 * its recovery. The capacity comes out within 15% of the known 1000 req/s (one user's answer
 * as the test of recovery measured the app while slow, and found far less), and the recovery
 * is recorded: 4 s, none ran out. With search.settle shorter than the recovery the settles run
 * out, and the result says so. */
static void test_recovery_proven(void **state)
{
    struct stub_host h = {0};
    struct sweep s;
    (void)state;

    sweep_with(
        &h,
        (struct stub_src){.threads = 1, .gen_share = 0.1, .capacity_rps = 1000, .slow_after_s = 4},
        &s);
    const struct capacity_result *cap = &s.rows[0].cap;
    const struct capacity_recovery *rec = &cap->recovery;
    printf("capacity %.0f req/s valid %d, settles %u ran_out %u longest %.1f s\n", cap->rps,
           cap->valid, rec->settles, rec->ran_out, rec->longest_s);
    assert_true(cap->valid);
    assert_true(fabs(cap->rps - 1000) <= 150);
    assert_true(rec->settles > 0);
    assert_int_equal(rec->ran_out, 0);
    assert_true(rec->at_rate);
    assert_true(rec->longest_s >= 3.0 && rec->longest_s <= 5.0);
    assert_true(rec->bound_s == 10.0);
    sweep_free(&s);

    /* Recovery longer than search.settle (3 s): every settle runs out, and says so. */
    h = (struct stub_host){.settle_us = 3000000};
    sweep_with(&h,
               (struct stub_src){
                   .threads = 1, .gen_share = 0.1, .capacity_rps = 1000, .slow_after_s = 300},
               &s);
    rec = &s.rows[0].cap.recovery;
    assert_true(rec->settles > 0);
    assert_int_equal(rec->ran_out, rec->settles);
    assert_true(rec->bound_s == 3.0);
    sweep_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transient_rule),         cmocka_unit_test(test_busy_repeat_rerun),
        cmocka_unit_test(test_busy_throughout_marked), cmocka_unit_test(test_remeasure_keeps_cpu),
        cmocka_unit_test(test_merged_repeats_refute),  cmocka_unit_test(test_recovery_proven),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
