/* Tests for src/operator/job.c and job_state.c: the progress document a sweep leaves in its
 * ConfigMap (capacity results included) and what a restarted operator accepts from it, and
 * log-field quoting. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operator/job_int.h"
#include "output/output_set.h"

#define CONFIGS "1@0.5/256Mi 2@1/512Mi 4@2/1Gi"

struct fixture {
    struct job j;
    struct jctx x;
    struct sweep_job sj;
    struct advisor_row rows[3];
};

static void setup_fixture(struct fixture *f)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->j.ns, sizeof(f->j.ns), "shop");
    snprintf(f->j.name, sizeof(f->j.name), "web");
    snprintf(f->j.uid, sizeof(f->j.uid), "uid-1");
    snprintf(f->j.handled, sizeof(f->j.handled), "sweep-7");
    f->x.j = &f->j;
    f->x.req.mode = ANNOT_MODE_IN_PLACE;
    f->sj.x = &f->x;
    snprintf(f->sj.configs, sizeof(f->sj.configs), "%s", CONFIGS);
    assert_int_equal(variant_parse_list(CONFIGS, &f->sj.all, NULL), 0);
    for (int i = 0; i < 3; i++) {
        struct advisor_row *r = &f->rows[i];
        r->variant = f->sj.all.items[i];
        r->measured = i != 1;
        if (!r->measured) {
            r->fail = PLATFORM_FAIL_OOM;
            snprintf(r->note, sizeof(r->note), "OOM-killed: \"x\" at 512Mi");
        }
        r->throughput_rps = 100.5 * (i + 1);
        r->p50_us = 1000 + (uint64_t)i;
        r->p95_us = 5000 + (uint64_t)i;
        r->p99_us = 9000 + (uint64_t)i;
        r->error_rate = 0.001 * i;
        r->requests = 12345 + (uint64_t)i;
        r->cpu_cores_used = i == 2 ? -1 : 0.25 * (i + 1);
        r->peak_memory_bytes = i == 2 ? -1 : (int64_t)(100 << 20);
        r->gen_cores = 0.1;
        r->host_other_cores = i == 2 ? -1 : 0.5 * i;
        r->flags = i == 2 ? 5u : 0u;
    }
}

/* state.json records each finished scale-out point; a resumed operator reads them back. */
static void test_scale_out_round_trip(void **state)
{
    (void)state;
    struct fixture f;
    struct sweep_scale_out so, back;
    char spec[VARIANT_TOKEN_MAX + 1];

    setup_fixture(&f);
    memset(&so, 0, sizeof(so));
    so.run = true;
    so.npoints = 3;
    for (unsigned i = 0; i < 3; i++) {
        struct sweep_scale_point *pt = &so.points[i];
        pt->replicas = i == 2 ? 4 : i + 1;
        pt->from = i == 0 ? SWEEP_POINT_SHAPE_SEARCH : SWEEP_POINT_MEASURED;
        pt->cap.searched = true;
        pt->cap.rps = 50.5 * (i + 1);
        pt->cap.interval.n = 3;
        for (size_t k = 0; k < 3; k++)
            pt->cap.repeat_rps[k] = pt->cap.rps + (double)k - 1;
        pt->cap.cpu_cores = -1;
        pt->cap.peak_memory_bytes = -1;
    }
    so.points[2].flags = SWEEP_FLAG_CONTENDED;
    snprintf(so.points[2].note, sizeof(so.points[2].note), "the host was busy");

    /* No scale-out yet: the document has none. */
    char *text = job_state_json(&f.sj, f.rows, 3, "running");
    assert_int_equal(job_progress_scale_out(text, &back, spec, sizeof(spec)), -ENOENT);
    assert_false(back.run);
    free(text);

    f.sj.so_state = &so;
    snprintf(f.sj.so_spec, sizeof(f.sj.so_spec), "%s", f.sj.all.items[0].spec);
    text = job_state_json(&f.sj, f.rows, 3, "running");
    assert_non_null(text);
    assert_int_equal(job_progress_scale_out(text, &back, spec, sizeof(spec)), 0);
    assert_string_equal(spec, f.sj.all.items[0].spec);
    assert_true(back.run);
    assert_int_equal(back.npoints, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(back.points[i].replicas, so.points[i].replicas);
        assert_int_equal(back.points[i].from, so.points[i].from);
        assert_int_equal(back.points[i].flags, so.points[i].flags);
        assert_string_equal(back.points[i].note, so.points[i].note);
        assert_true(fabs(back.points[i].cap.rps - so.points[i].cap.rps) < 1e-9);
        assert_int_equal(back.points[i].cap.interval.n, 3);
    }
    assert_true(back.points[1].cap.valid);
    assert_false(back.points[2].cap.valid); /* contended: never read as the app's */
    free(text);

    /* Counts out of order or not starting at 1 are refused. */
    static const char *const bad[] = {
        "{\"scale_out\":{\"variant\":\"1@0.5/256Mi\",\"points\":[{\"replicas\":2,\"from\":0}]}}",
        "{\"scale_out\":{\"variant\":\"1@0.5/256Mi\",\"points\":[{\"replicas\":1,\"from\":1},"
        "{\"replicas\":1,\"from\":0}]}}",
        "{\"scale_out\":{\"variant\":\"nope\",\"points\":[{\"replicas\":1,\"from\":1}]}}",
        "{\"scale_out\":{\"variant\":\"1@0.5/256Mi\",\"points\":[{\"replicas\":1,\"from\":9}]}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(job_progress_scale_out(bad[i], &back, spec, sizeof(spec)), -EINVAL);
        assert_false(back.run);
    }
}

/* The scale-out in the cluster: asked for by the annotation or the profile, never a default. */
static void test_scale_out_request(void **state)
{
    (void)state;
    struct annot_request req;
    struct profile_scale_out so;
    char err[ERR_LEN] = "";

    /* No annotation, no profile scale_out (a target or not): off. */
    memset(&req, 0, sizeof(req));
    memset(&so, 0, sizeof(so));
    assert_int_equal(job_scale_out_request(&req, &so, err), 0);
    assert_true(so.given);
    assert_true(so.ncounts <= 1);

    /* The annotation asks for 3: 1, 2, 3. */
    req.scale_out_set = true;
    req.scale_out = 3;
    memset(&so, 0, sizeof(so));
    assert_int_equal(job_scale_out_request(&req, &so, err), 0);
    assert_int_equal(so.ncounts, 3);
    assert_int_equal(so.counts[0], 1);
    assert_int_equal(so.counts[2], 3);

    /* "off" (0) wins over the profile's. */
    req.scale_out = 0;
    assert_int_equal(job_scale_out_request(&req, &so, err), 0);
    assert_true(so.ncounts <= 1);

    /* The profile's own scale_out without the annotation: kept. */
    memset(&req, 0, sizeof(req));
    memset(&so, 0, sizeof(so));
    assert_int_equal(profile_scale_out_set_max(&so, 2, err), 0);
    assert_int_equal(job_scale_out_request(&req, &so, err), 0);
    assert_int_equal(so.ncounts, 2);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = NULL;
    size_t n = 99;

    setup_fixture(&f);
    char *text = job_state_json(&f.sj, f.rows, 2, "running");
    assert_non_null(text);
    assert_non_null(strstr(text, "\"phase\":\"running\""));
    assert_non_null(strstr(text, "\"mode\":\"in-place\""));
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(prior[i].variant.spec, f.rows[i].variant.spec);
        assert_int_equal(prior[i].measured, f.rows[i].measured);
        assert_string_equal(prior[i].note, f.rows[i].note);
        assert_int_equal(prior[i].fail, f.rows[i].fail);
        assert_true(prior[i].throughput_rps == f.rows[i].throughput_rps);
        assert_int_equal(prior[i].p95_us, f.rows[i].p95_us);
        assert_int_equal(prior[i].requests, f.rows[i].requests);
        assert_true(prior[i].cpu_cores_used == f.rows[i].cpu_cores_used);
        assert_int_equal(prior[i].peak_memory_bytes, f.rows[i].peak_memory_bytes);
        assert_true(prior[i].host_other_cores == f.rows[i].host_other_cores);
        assert_int_equal(prior[i].flags, f.rows[i].flags);
    }
    free(prior);
    free(text);

    /* All three, with the unknown usage of the last kept as unknown (-1). */
    text = job_state_json(&f.sj, f.rows, 3, "done");
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 3);
    assert_true(prior[2].cpu_cores_used < 0);
    assert_true(prior[2].peak_memory_bytes < 0);
    assert_true(prior[2].host_other_cores < 0);
    free(prior);
    free(text);

    /* None measured yet is a valid progress too. */
    text = job_state_json(&f.sj, f.rows, 0, "running");
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 0);
    free(prior);
    free(text);
}

/* Progress that is not this sweep's is refused: the sweep starts over rather than mixing
 * results of different requests, Deployments or variant lists. */
static void test_refuses_foreign_progress(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = (struct advisor_row *)1;
    size_t n = 5;

    setup_fixture(&f);
    char *text = job_state_json(&f.sj, f.rows, 2, "running");
    assert_non_null(text);
    assert_int_equal(job_progress_parse(text, "sweep-8", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     -ENOENT);
    assert_null(prior);
    assert_int_equal(n, 0);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-2", CONFIGS, &f.sj.all, &prior, &n),
                     -ENOENT);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", "1@1/1Gi", &f.sj.all, &prior, &n),
                     -ENOENT);

    /* Rows that do not match the variant list in order. */
    struct variant_list other;
    assert_int_equal(variant_parse_list("2@1/512Mi 1@0.5/256Mi 4@2/1Gi", &other, NULL), 0);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &other, &prior, &n),
                     -ENOENT);
    /* More rows than variants. */
    struct variant_list one;
    assert_int_equal(variant_parse_list("1@0.5/256Mi", &one, NULL), 0);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &one, &prior, &n),
                     -ENOENT);
    free(text);

    static const char *const bad[] = {
        "",
        "{",
        "[]",
        "{\"version\":2,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[]}",
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":{}}",
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[{\"spec\":7}]}",
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[{\"spec\":\"9@9/9Gi\"}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(
            job_progress_parse(bad[i], "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
            -ENOENT);
    assert_int_equal(job_progress_parse(NULL, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     -ENOENT);
}

/* Hostile numbers in a hand-edited state do not turn into nonsense rows. */
static void test_sanitises_numbers(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = NULL;
    size_t n = 0;

    setup_fixture(&f);
    const char *text =
        "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS
        "\",\"rows\":[{\"spec\":\"1@0.5/256Mi\",\"measured\":true,"
        "\"p95_us\":-5,\"requests\":\"many\",\"throughput_rps\":1e400,"
        "\"peak_memory_bytes\":1e40,\"p99_us\":1e300,\"flags\":-3,"
        "\"error_rate\":7}]}";
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(prior[0].p95_us, 0);
    assert_int_equal(prior[0].requests, 0);
    assert_true(prior[0].throughput_rps == 0);
    assert_true(prior[0].cpu_cores_used < 0); /* absent: unknown */
    assert_true(prior[0].peak_memory_bytes > 0 && prior[0].peak_memory_bytes <= (int64_t)9e18);
    assert_true(prior[0].p99_us <= (uint64_t)9e18);
    assert_int_equal(prior[0].flags, 0);
    assert_true(prior[0].error_rate == 1);
    free(prior);
}

/* Within the STATE_DIGITS significant digits the document keeps of a measured figure. */
static void assert_close(double got, double want)
{
    if (fabs(got - want) > 1e-5 * fmax(1.0, fabs(want))) {
        fail_msg("%.9g is not %.9g", got, want);
    }
}

static void fill_step(struct capacity_step *st, enum capacity_step_kind kind, double rate,
                      bool pass, bool cpu_known)
{
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    st->offered_rps = rate;
    st->achieved_rps = rate * 0.987654321;
    st->sustained_rps = rate * 0.993;
    st->p50_us = 1234;
    st->p95_us = pass ? 45678 : 345678;
    st->p99_us = 99999;
    st->error_rate = pass ? 0 : 0.0312345;
    st->cpu_cores = cpu_known ? 0.4321987 : -1;
    st->usage_window_s = cpu_known ? 3.2516 : 1.25;
    st->peak_memory_bytes = cpu_known ? 123456789 : -1;
    st->gen_cores = 0.123456789;
    st->pass = pass;
    st->gen_limited = false;
    st->throttling.known = cpu_known;
    st->throttling.periods = cpu_known ? 1000 : 0;
    st->throttling.throttled_periods = cpu_known ? 250 : 0;
    st->throttling.throttled_s = cpu_known ? 1.5 : 0;
}

/* A capacity search's result, as the runner leaves it: probe, search steps, three repeats. */
static void fill_capacity(struct advisor_row *r)
{
    struct capacity_result *cap = &r->cap;
    static const double reps[3] = {100.5, 102.25, 98.75};

    memset(cap, 0, sizeof(*cap));
    cap->searched = true;
    fill_step(&cap->steps[cap->nsteps++], CAPACITY_STEP_PROBE, 80.123, true, false);
    fill_step(&cap->steps[cap->nsteps++], CAPACITY_STEP_SEARCH, 160.25, false, false);
    fill_step(&cap->steps[cap->nsteps++], CAPACITY_STEP_SEARCH, 100.5, true, true);
    for (int i = 0; i < 3; i++) {
        fill_step(&cap->steps[cap->nsteps++], CAPACITY_STEP_REPEAT, 100.5, true, true);
        cap->repeat_rps[i] = reps[i];
    }
    cap->steps[1].gen_limited = true;
    assert_int_equal(stats_summarize(cap->repeat_rps, 3, &cap->interval), 0);
    cap->rps = cap->interval.mean;
    cap->per_core = cap->rps / 0.5;
    cap->limited_by = CAPACITY_LIMIT_SLO_P95;
    cap->valid = true;
    cap->cpu_cores = 0.4321987;
    cap->peak_memory_bytes = 123456789;
    cap->throttling = (struct capacity_throttling){true, 3000, 750, 4.5};
    cap->recovery = (struct capacity_recovery){
        .settles = 2, .ran_out = 1, .longest_s = 4, .bound_s = 10, .at_rate = true};
}

static void assert_capacity_equal(const struct capacity_result *got,
                                  const struct capacity_result *want)
{
    assert_true(got->searched);
    assert_close(got->rps, want->rps);
    assert_int_equal(got->interval.n, want->interval.n);
    assert_close(got->interval.low, want->interval.low);
    assert_close(got->interval.high, want->interval.high);
    for (size_t i = 0; i < want->interval.n; i++)
        assert_close(got->repeat_rps[i], want->repeat_rps[i]);
    assert_close(got->per_core, want->per_core);
    assert_int_equal(got->limited_by, want->limited_by);
    assert_int_equal(got->valid, want->valid);
    assert_int_equal(got->flags, want->flags);
    assert_close(got->cpu_cores, want->cpu_cores);
    assert_int_equal(got->peak_memory_bytes, want->peak_memory_bytes);
    assert_int_equal(got->throttling.known, want->throttling.known);
    assert_int_equal(got->throttling.throttled_periods, want->throttling.throttled_periods);
    assert_close(got->throttling.throttled_s, want->throttling.throttled_s);
    assert_int_equal(got->recovery.settles, want->recovery.settles);
    assert_int_equal(got->recovery.ran_out, want->recovery.ran_out);
    assert_close(got->recovery.longest_s, want->recovery.longest_s);
    assert_close(got->recovery.bound_s, want->recovery.bound_s);
    assert_int_equal(got->recovery.at_rate, want->recovery.at_rate);
    assert_int_equal(got->nsteps, want->nsteps);
    for (size_t i = 0; i < want->nsteps; i++) {
        const struct capacity_step *a = &got->steps[i], *b = &want->steps[i];
        assert_int_equal(a->kind, b->kind);
        assert_close(a->offered_rps, b->offered_rps);
        assert_close(a->achieved_rps, b->achieved_rps);
        assert_close(a->sustained_rps, b->sustained_rps);
        assert_int_equal(a->p50_us, b->p50_us);
        assert_int_equal(a->p95_us, b->p95_us);
        assert_int_equal(a->p99_us, b->p99_us);
        assert_close(a->error_rate, b->error_rate);
        assert_close(a->cpu_cores, b->cpu_cores);
        assert_close(a->usage_window_s, b->usage_window_s);
        assert_int_equal(a->peak_memory_bytes, b->peak_memory_bytes);
        assert_close(a->gen_cores, b->gen_cores);
        assert_int_equal(a->pass, b->pass);
        assert_int_equal(a->gen_limited, b->gen_limited);
        assert_int_equal(a->throttling.known, b->throttling.known);
        assert_int_equal(a->throttling.periods, b->throttling.periods);
        assert_close(a->throttling.throttled_s, b->throttling.throttled_s);
    }
}

/* What a capacity search found survives an operator restart: steps, repeats, interval, what
 * ended it and its marks, so the resumed sweep's results.json still has slo_capacity. */
static void test_capacity_round_trip(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = NULL;
    size_t n = 0;

    setup_fixture(&f);
    fill_capacity(&f.rows[0]);
    /* A search that ran out of budget: one figure from its best step, no repeat, no interval. */
    struct capacity_result *c2 = &f.rows[2].cap;
    memset(c2, 0, sizeof(*c2));
    c2->searched = true;
    fill_step(&c2->steps[c2->nsteps++], CAPACITY_STEP_PROBE, 50, true, false);
    fill_step(&c2->steps[c2->nsteps++], CAPACITY_STEP_SEARCH, 77.5, true, false);
    c2->rps = 77.5;
    assert_int_equal(stats_summarize(&c2->rps, 1, &c2->interval), 0);
    c2->per_core = c2->rps / 2;
    c2->limited_by = CAPACITY_LIMIT_BUDGET;
    c2->flags = CAPACITY_FLAG_BUDGET | CAPACITY_FLAG_TOO_FEW_REPEATS;
    c2->valid = false;
    c2->cpu_cores = -1;
    c2->peak_memory_bytes = -1;

    char *text = job_state_json(&f.sj, f.rows, 3, "running");
    assert_non_null(text);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, 3);
    assert_capacity_equal(&prior[0].cap, &f.rows[0].cap);
    assert_false(prior[1].cap.searched); /* the failed row had no search */
    assert_capacity_equal(&prior[2].cap, c2);
    assert_close(prior[2].cap.interval.mean, 77.5);
    free(prior);
    free(text);
}

/* Step tables of a long sweep are left out before state.json passes the room the output path
 * keeps for it; the capacity figures stay. */
static void test_capacity_state_size(void **state)
{
    (void)state;
    struct fixture f;
    char configs[VARIANT_LIST_MAX + 1] = "";
    size_t len = 0;
    struct advisor_row *rows = calloc(VARIANT_MAX, sizeof(*rows)), *prior = NULL;
    size_t n = 0;

    assert_non_null(rows);
    setup_fixture(&f);
    for (int i = 0; i < VARIANT_MAX; i++)
        len += (size_t)snprintf(configs + len, sizeof(configs) - len, "%s1@%dm/256Mi", i ? " " : "",
                                100 + 10 * i);
    snprintf(f.sj.configs, sizeof(f.sj.configs), "%s", configs);
    assert_int_equal(variant_parse_list(configs, &f.sj.all, NULL), 0);
    for (int i = 0; i < VARIANT_MAX; i++) {
        rows[i].variant = f.sj.all.items[i];
        rows[i].measured = true;
        fill_capacity(&rows[i]);
        while (rows[i].cap.nsteps < CAPACITY_MAX_STEPS)
            fill_step(&rows[i].cap.steps[rows[i].cap.nsteps++], CAPACITY_STEP_SEARCH, 123.456 + i,
                      true, true);
    }
    char *text = job_state_json(&f.sj, rows, VARIANT_MAX, "running");
    assert_non_null(text);
    assert_true(strlen(text) <= OUTPUT_RESERVE);
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", configs, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(n, VARIANT_MAX);
    for (size_t i = 0; i < n; i++) {
        assert_true(prior[i].cap.searched);
        assert_int_equal(prior[i].cap.nsteps, 0);
        assert_int_equal(prior[i].cap.interval.n, 3);
        assert_close(prior[i].cap.rps, rows[i].cap.rps);
    }
    free(prior);
    free(text);

    /* A few rows keep their steps. */
    text = job_state_json(&f.sj, rows, 4, "running");
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", configs, &f.sj.all, &prior, &n),
                     0);
    assert_int_equal(prior[3].cap.nsteps, CAPACITY_MAX_STEPS);
    free(prior);
    free(text);
    free(rows);
}

/* A hand-edited capacity: malformed shapes refuse the document, hostile numbers are clamped and
 * what the figure's validity follows from is derived, not read. */
static void test_capacity_hostile(void **state)
{
    (void)state;
    struct fixture f;
    struct advisor_row *prior = NULL;
    size_t n = 0;
#define ROW0(cap)                                                                                  \
    "{\"version\":1,\"sweep\":\"sweep-7\",\"uid\":\"uid-1\",\"configs\":\"" CONFIGS                \
    "\",\"rows\":[{\"spec\":\"1@0.5/256Mi\",\"measured\":true,\"capacity\":" cap "}]}"

    setup_fixture(&f);
    static const char *const bad[] = {
        ROW0("7"),
        ROW0("{\"rps\":5}"), /* no repeat_rps */
        ROW0("{\"repeat_rps\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]}"), /* more
                                                                                             than
                                                                                             kept */
        ROW0("{\"repeat_rps\":[],\"steps\":{}}"),        /* steps not an array */
        ROW0("{\"repeat_rps\":[],\"steps\":[[0,1,2]]}"), /* a step too short */
        ROW0("{\"repeat_rps\":[],\"steps\":[\"x\"]}"),   /* a step not an array */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(
            job_progress_parse(bad[i], "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
            -ENOENT);

    const char *text =
        ROW0("{\"rps\":1e400,\"repeat_rps\":[1e999,-4,\"x\"],\"flags\":4294967295,"
             "\"valid\":true,\"per_core\":-9,\"limited_by\":\"bogus\",\"cpu_cores\":-50,"
             "\"steps\":[[9,-1,1e300,1,-1,1e30,2,9,1e9,-7,1,255,1e40,-1,1e400]]}");
    assert_int_equal(job_progress_parse(text, "sweep-7", "uid-1", CONFIGS, &f.sj.all, &prior, &n),
                     0);
    const struct capacity_result *c = &prior[0].cap;
    assert_true(c->searched);
    assert_true(c->rps == 0); /* not a finite number: unknown */
    assert_int_equal(c->interval.n, 3);
    assert_true(isfinite(c->interval.low) && isfinite(c->interval.high));
    assert_true(c->repeat_rps[1] == 0);
    assert_int_equal(c->flags & ~(CAPACITY_FLAG_GENERATOR | CAPACITY_FLAG_NOISY |
                                  CAPACITY_FLAG_CONTENDED | CAPACITY_FLAG_TOO_FEW_REPEATS |
                                  CAPACITY_FLAG_BUDGET | CAPACITY_FLAG_NONE_PASSED |
                                  CAPACITY_FLAG_UNMEETABLE | CAPACITY_FLAG_REPEATS_CUT),
                     0);
    assert_false(c->valid); /* marked: never valid, whatever the document says */
    assert_int_equal(c->limited_by, CAPACITY_LIMIT_NONE);
    assert_true(c->cpu_cores == -1);
    assert_int_equal(c->nsteps, 1);
    assert_int_equal(c->steps[0].kind, CAPACITY_STEP_REPEAT);
    assert_true(c->steps[0].offered_rps == 0);
    assert_true(c->steps[0].achieved_rps <= 1e12);
    assert_true(c->steps[0].error_rate == 1);
    assert_true(c->steps[0].peak_memory_bytes == -1);
    assert_true(c->steps[0].pass && c->steps[0].gen_limited && c->steps[0].throttling.known);
    assert_true(c->steps[0].throttling.throttled_s == 0);
    assert_true(c->steps[0].usage_window_s == -1); /* a 15-field step, from before it was kept */
    free(prior);
#undef ROW0
}

/* The running status: "running k/n" first (scripts and kubectl sizeup match it), then the time
 * left, rounded for people. */
static void test_status_running(void **state)
{
    (void)state;
    char out[JOB_STATUS_LEN];
    static const struct {
        size_t k, n;
        double eta;
        const char *want;
    } cases[] = {
        {0, 2, -1, "running 0/2"},
        {1, 2, 0, "running 1/2"},
        {1, 2, 3, "running 1/2, about 10s left"},
        {1, 2, 44, "running 1/2, about 40s left"},
        {2, 4, 59.5, "running 2/4, about 1m left"},
        {2, 4, 170, "running 2/4, about 3m left"},
        {2, 4, 3599, "running 2/4, about 60m left"},
        {12, 64, 4800, "running 12/64, about 1h20m left"},
        {63, 64, 1e30, "running 63/64"}, /* no sensible estimate: none shown */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_string_equal(job_status_running(cases[i].k, cases[i].n, cases[i].eta, out),
                            cases[i].want);
        assert_true(strncmp(out, "running ", 8) == 0);
    }
}

/* Defence in depth: the runner is told when real users share the target, so it refuses a
 * capacity search without a ceiling there whatever the validation let through. */
/* The annotation sizeup.dev/generators wins over the profile's generators:, which is used when
 * the annotation is absent; neither leaves the choice to the operator (0). */
static void test_generators_precedence(void **state)
{
    (void)state;
    static const struct {
        unsigned annot, profile, want;
        const char *from;
    } cases[] = {
        {0, 0, 0, NULL},
        {0, 4, 4, "profile generators"},
        {3, 0, 3, "sizeup.dev/generators"},
        {3, 4, 3, "sizeup.dev/generators"},
        {1, 8, 1, "sizeup.dev/generators"}, /* 1: the operator's pod only, even so */
        {0, 1, 1, "profile generators"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct annot_request req = {0};
        struct profile p = {0};
        const char *from = "unset";
        req.generators = cases[i].annot;
        p.generators = cases[i].profile;
        assert_int_equal(job_generators(&req, &p, &from), cases[i].want);
        if (cases[i].from)
            assert_string_equal(from, cases[i].from);
        else
            assert_null(from);
        assert_int_equal(job_generators(&req, &p, NULL), cases[i].want);
    }
    /* A request with no profile loaded yet falls back to the annotation alone. */
    struct annot_request req = {0};
    req.generators = 2;
    assert_int_equal(job_generators(&req, NULL, NULL), 2);
}

static void test_sweep_opts_shared_target(void **state)
{
    (void)state;
    struct fixture f;
    struct sweep_opts so;
    static const struct {
        enum annot_mode mode;
        enum annot_target target;
        bool shared;
    } cases[] = {
        {ANNOT_MODE_CLONE, ANNOT_TARGET_POD, false},
        {ANNOT_MODE_CLONE, ANNOT_TARGET_URL, true},
        {ANNOT_MODE_IN_PLACE, ANNOT_TARGET_POD, true},
        {ANNOT_MODE_RESIZE, ANNOT_TARGET_POD, true},
    };

    setup_fixture(&f);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        f.x.req.mode = cases[i].mode;
        f.x.req.target = cases[i].target;
        job_sweep_opts(&f.sj, &so);
        assert_int_equal(so.shared_target, cases[i].shared);
        assert_ptr_equal(so.variants, &f.sj.todo);
        assert_ptr_equal(so.stop, &f.j.stop);
        assert_non_null(so.progress);
        assert_non_null(so.row_done);
    }
}

static void test_log_safe(void **state)
{
    (void)state;
    char out[16];
    assert_string_equal(job_log_safe("a \"b\"\n\\c", out, sizeof(out)), "a 'b'?/c");
    assert_string_equal(job_log_safe("0123456789abcdefghij", out, sizeof(out)), "0123456789abcde");
    assert_string_equal(job_log_safe(NULL, out, sizeof(out)), "");
}

/* Past the client's own conflict retries a request is run again after 2, 4, 8, 16 s, then
 * given up; only transient API errors qualify. */
static void test_retry_backoff(void **state)
{
    (void)state;
    assert_int_equal(job_retry_delay_s(0), 0);
    assert_int_equal(job_retry_delay_s(1), 2);
    assert_int_equal(job_retry_delay_s(2), 4);
    assert_int_equal(job_retry_delay_s(3), 8);
    assert_int_equal(job_retry_delay_s(4), 16);
    assert_int_equal(job_retry_delay_s(JOB_MAX_ATTEMPTS), 0);
    assert_int_equal(job_retry_delay_s(1000), 0);
    for (int a = 1; a < JOB_MAX_ATTEMPTS; a++)
        assert_true(job_retry_delay_s(a) <= JOB_RETRY_CAP_S);
    assert_true(job_retryable(KUBE_ECONFLICT));
    assert_true(job_retryable(-EBUSY));
    assert_true(job_retryable(-EIO));
    assert_false(job_retryable(0));
    assert_false(job_retryable(-EINVAL));
    assert_false(job_retryable(-EPERM));
    assert_false(job_retryable(-ENOENT));
    assert_false(job_retryable(-ECANCELED));
}

/* The results ConfigMap's name and label stay within Kubernetes' limits for any valid
 * Deployment name, and stay distinct for two long names that share their first characters. */
static void test_sizing_name(void **state)
{
    (void)state;
    char out[JOB_NAME_MAX + 1], other[JOB_NAME_MAX + 1], name[254];

    job_sizing_name("app", out);
    assert_string_equal(out, "app-sizing");

    memset(name, 'a', 246);
    name[246] = '\0'; /* 246 + 7 = 253: still the plain form */
    job_sizing_name(name, out);
    assert_int_equal(strlen(out), 253);
    assert_string_equal(out + 246, "-sizing");

    memset(name, 'a', 253);
    name[253] = '\0';
    job_sizing_name(name, out);
    assert_true(strlen(out) <= JOB_NAME_MAX);
    assert_true(strlen(out) <= 63 + strlen("-sizing"));
    assert_string_equal(out + strlen(out) - 7, "-sizing");
    name[252] = 'b';
    job_sizing_name(name, other);
    assert_string_not_equal(out, other);
}

/* The Events of a sweep done: TargetUnreachable (Warning) exactly when a shape is recommended
 * for a target that no count of it holds, its note the answer's replicas_why sentence; never for
 * a reachable target, a sweep without a target, or a sweep with no recommendation (that one is
 * NoRecommendation's). */
static void test_done_events_target_unreachable(void **state)
{
    (void)state;
    static const char WHY[] = "The target of 5000 req/s is not reachable with 1@0.5/256Mi: the "
                              "pods reach at most 300 req/s, near 6 replicas.";
    static const struct {
        int recommended;
        bool by_target, unreachable;
        const char *want[3]; /* reasons in order, NULL-ended */
    } cases[] = {
        {0, true, true, {"SweepCompleted", "TargetUnreachable", NULL}},
        {0, true, false, {"SweepCompleted", NULL}},
        {0, false, true, {"SweepCompleted", NULL}},
        {-1, true, true, {"SweepCompleted", "NoRecommendation", NULL}},
    };
    struct fixture f;
    struct job_done_events ev;

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        setup_fixture(&f);
        f.sj.have_advice = 1;
        f.sj.advice.recommended = cases[c].recommended;
        f.sj.advice.by_target = cases[c].by_target;
        f.sj.advice.sizing.unreachable = cases[c].unreachable;
        snprintf(f.sj.advice.sizing.replicas_note, sizeof(f.sj.advice.sizing.replicas_note), "%s",
                 WHY);
        snprintf(f.sj.no_rec, sizeof(f.sj.no_rec), "No variant holds the SLO.");
        job_done_events(&f.sj, f.rows, 3, &ev);
        size_t k = 0;
        while (cases[c].want[k])
            k++;
        if (ev.n != k)
            fail_msg("case %zu: %zu Events, want %zu", c, ev.n, k);
        for (size_t i = 0; i < k; i++)
            assert_string_equal(ev.ev[i].reason, cases[c].want[i]);
        if (k > 1 && strcmp(cases[c].want[1], "TargetUnreachable") == 0) {
            assert_string_equal(ev.ev[1].type, "Warning");
            assert_string_equal(ev.ev[1].note, WHY);
        }
        assert_string_equal(ev.ev[0].note, cases[c].recommended >= 0
                                               ? "sweep sweep-7 done: 3 variants, recommended "
                                                 "1@0.5/256Mi"
                                               : "sweep sweep-7 done: 3 variants, no variant "
                                                 "qualifies");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_scale_out_round_trip),
        cmocka_unit_test(test_scale_out_request),
        cmocka_unit_test(test_done_events_target_unreachable),
        cmocka_unit_test(test_refuses_foreign_progress),
        cmocka_unit_test(test_sanitises_numbers),
        cmocka_unit_test(test_log_safe),
        cmocka_unit_test(test_retry_backoff),
        cmocka_unit_test(test_sizing_name),
        cmocka_unit_test(test_capacity_round_trip),
        cmocka_unit_test(test_capacity_state_size),
        cmocka_unit_test(test_capacity_hostile),
        cmocka_unit_test(test_status_running),
        cmocka_unit_test(test_sweep_opts_shared_target),
        cmocka_unit_test(test_generators_precedence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
