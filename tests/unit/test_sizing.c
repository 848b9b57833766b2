/* Tests for src/advise/sizing.c: the planned load, replicas, cost and the cheapest total on the
 * published reference sweep's numbers (the advisor's fixture; capacities taken as its
 * throughputs with a 3% interval) and on synthetic rows
 * made to isolate one rule each: cost ties, invalid and marked rows, an app whose CPU does not
 * grow with load, no target. Expected figures are worked by hand in the comments. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advise/sizing.h"

#define MIB (1024LL * 1024LL)

static void near(double got, double want, double tol)
{
    if (fabs(got - want) > tol)
        fail_msg("got %.6f, want %.6f (tolerance %g)", got, want, tol);
}

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

struct fixture {
    size_t n;
    struct variant var[VARIANT_MAX];
    struct capacity_result cap[VARIANT_MAX];
    struct stream_capacity scap[VARIANT_MAX];
    struct sizing_row rows[VARIANT_MAX];
    struct sizing_opts opts;
    struct sizing out;
};

static void default_opts(struct sizing_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->per_user_rps = 0.5;
    o->cost.cpu = 1;
    o->cost.memory_gib = 0.13;
    o->planning.buffer = 0.10;
    o->planning.growth = 0.30;
}

/* A searched, valid row whose capacity is `rps` with three repeats and an interval of
 * [low, 2 x rps - low]; CPU and memory unknown unless set afterwards. */
static size_t add(struct fixture *f, const char *spec, double rps, double low)
{
    char err[ERR_LEN];
    size_t i = f->n++;
    struct capacity_result *c = &f->cap[i];

    assert_int_equal(variant_parse(spec, &f->var[i], err), 0);
    memset(c, 0, sizeof(*c));
    c->searched = true;
    c->valid = true;
    c->rps = rps;
    c->interval.n = 3;
    c->interval.mean = rps;
    c->interval.low = low;
    c->interval.high = 2 * rps - low;
    c->interval.half = rps - low;
    c->cpu_cores = -1;
    c->peak_memory_bytes = -1;
    f->rows[i] = (struct sizing_row){&f->var[i], c, NULL, true, 0};
    return i;
}

/* A passing search step at `rps` using `cores`. */
static void step(struct capacity_result *c, double rps, double cores)
{
    struct capacity_step *s = &c->steps[c->nsteps++];
    memset(s, 0, sizeof(*s));
    s->kind = CAPACITY_STEP_SEARCH;
    s->offered_rps = rps;
    s->achieved_rps = rps;
    s->cpu_cores = cores;
    s->peak_memory_bytes = -1;
    s->gen_cores = -1;
    s->pass = true;
}

static int run(struct fixture *f)
{
    char err[ERR_LEN] = "";
    int rc = sizing_run(f->rows, f->n, &f->opts, &f->out, err);
    if (rc)
        print_message("sizing_run: %s\n", err);
    return rc;
}

static int setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof(*f));
    if (!f)
        return -1;
    default_opts(&f->opts);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    test_free(*state);
    return 0;
}

/* The published reference sweep's six shapes (the advisor's fixture), each with its throughput as
 * capacity and a lower bound 3% below. */
static void reference_sweep(struct fixture *f)
{
    static const struct {
        const char *spec;
        double rps;
    } s[] = {{"1@0.5/512Mi", 300.6}, {"1@1/512Mi", 1111.4}, {"2@1/1Gi", 481.0},
             {"2@2/1Gi", 1637.0},    {"4@2/1Gi", 1011.6},   {"4@4/2Gi", 2995.3}};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        add(f, s[i].spec, s[i].rps, s[i].rps * 0.97);
}

static void test_reference_target(void **state)
{
    struct fixture *f = *state;

    reference_sweep(f);
    f->opts.target_rps = 5000;
    assert_int_equal(run(f), 0);
    /* planned = low x 0.9 / 1.3; replicas = ceil(5000 / planned); cost = replicas x
     * (cores + 0.13 x GiB):
     *   1@0.5/512Mi  291.58 -> 201.86 -> 25 x 0.565 = 14.125
     *   1@1/512Mi   1078.06 -> 746.35 ->  7 x 1.065 =  7.455   <- cheapest
     *   2@1/1Gi      466.57 -> 323.01 -> 16 x 1.13  = 18.08
     *   2@2/1Gi     1587.89 -> 1099.31 -> 5 x 2.13  = 10.65
     *   4@2/1Gi      981.25 -> 679.33 ->  8 x 2.13  = 17.04
     *   4@4/2Gi     2905.44 -> 2011.46 -> 3 x 4.26  = 12.78 */
    static const unsigned reps[] = {25, 7, 16, 5, 8, 3};
    static const double cost[] = {14.125, 7.455, 18.08, 10.65, 17.04, 12.78};
    for (size_t i = 0; i < 6; i++) {
        assert_true(f->out.rows[i].candidate);
        assert_int_equal(f->out.rows[i].replicas, reps[i]);
        near(f->out.rows[i].total_cost, cost[i], 1e-9);
    }
    near(f->out.planned_fraction, 0.9 / 1.3, 1e-12);
    assert_int_equal(f->out.recommended, 1);
    assert_true(f->out.by_target);
    assert_int_equal(f->out.replicas, 7);
    near(f->out.planned_rps_per_pod, 1111.4 * 0.97 * 0.9 / 1.3, 1e-9);
    contains(f->out.why, "7 x 1w / 1.0c / 512Mi at 1.065 each = 7.455");
    contains(f->out.why, "next: 5 x 2w / 2.0c / 1Gi = 10.650");
    contains(f->out.why, "69% of the capacity interval's lower bound (1078 req/s)");
    contains(f->out.why, "keeping 10% in reserve and room for 30% growth");
    contains(f->out.assumption, "the sweep measured one pod of 1w / 1.0c / 512Mi");
    contains(f->out.assumption, "nothing they share");
    /* Neither CPU nor memory measured: requests fall back to fractions of the limits, and no
     * CPU HPA is possible: the HPA is on the request rate, at the planned load per pod. */
    assert_false(f->out.cpu_request_measured);
    assert_int_equal(f->out.request_cpu_m, 200);
    assert_int_equal(f->out.request_memory, 256 * MIB);
    assert_true(f->out.hpa.enabled);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_PODS);
    near(f->out.hpa.target_average_value, floor(f->out.planned_rps_per_pod * 1000) / 1000, 1e-9);
    contains(f->out.hpa.note, "CPU was not measured");
}

static void test_reference_users_target(void **state)
{
    struct fixture *f = *state;

    reference_sweep(f);
    f->opts.target_users = 10000; /* x 0.5 req/s each = 5000 req/s, as above */
    assert_int_equal(run(f), 0);
    near(f->out.target_rps, 5000, 1e-9);
    assert_int_equal(f->out.recommended, 1);
    assert_int_equal(f->out.replicas, 7);
    contains(f->out.why, "10000 users at 0.5 req/s each = 5000 req/s");
}

static void test_reference_no_target(void **state)
{
    struct fixture *f = *state;

    reference_sweep(f);
    assert_int_equal(run(f), 0);
    /* planned per cost: 1@1/512Mi 746.35 / 1.065 = 700.8 beats 2@2/1Gi 516.1, 4@4/2Gi 472.2,
     * 1@0.5/512Mi 357.3, 2@1/1Gi 285.9, 4@2/1Gi 318.9. */
    assert_int_equal(f->out.recommended, 1);
    assert_false(f->out.by_target);
    assert_int_equal(f->out.replicas, 1);
    near(f->out.rows[1].rps_per_cost, 1111.4 * 0.97 * 0.9 / 1.3 / 1.065, 1e-9);
    assert_int_equal(f->out.rows[1].replicas, 0);
    contains(f->out.why, "the most capacity per unit of cost: 701 planned req/s per unit");
    contains(f->out.why, "next: 2w / 2.0c / 1Gi with 516");
    contains(f->out.why, "No target load was given, so no replica count");
    assert_string_equal(f->out.assumption, "");
    assert_false(f->out.hpa.enabled);
}

static void test_cost_tie_fewer_replicas(void **state)
{
    struct fixture *f = *state;

    /* CPU-only cost. 1 core planned at 100 req/s needs 4 pods (cost 4); 2 cores planned at 200
     * need 2 (cost 4): a tie, and the fewer replicas win although the 1-core row comes first.
     * planned = low x 0.9 / 1.3, so low = planned x 1.3 / 0.9. */
    f->opts.cost.memory_gib = 0;
    f->opts.target_rps = 400;
    add(f, "1@1/512Mi", 150, 100 * 1.3 / 0.9);
    add(f, "2@2/512Mi", 300, 200 * 1.3 / 0.9);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.rows[0].replicas, 4);
    assert_int_equal(f->out.rows[1].replicas, 2);
    near(f->out.rows[0].total_cost, f->out.rows[1].total_cost, 1e-9);
    assert_int_equal(f->out.recommended, 1);
    assert_int_equal(f->out.replicas, 2);
}

static void test_marked_rows_never_recommended(void **state)
{
    struct fixture *f = *state;

    f->opts.target_rps = 1000;
    size_t noisy = add(f, "1@0.5/256Mi", 900, 880);
    f->cap[noisy].valid = false;
    f->cap[noisy].flags = CAPACITY_FLAG_NOISY;
    size_t contended = add(f, "1@1/256Mi", 2000, 1950);
    f->rows[contended].usable = false;
    size_t unsearched = add(f, "1@0.25/256Mi", 0, 0);
    f->cap[unsearched].searched = false;
    size_t ok = add(f, "4@4/1Gi", 1500, 1400);
    assert_int_equal(run(f), 0);
    assert_false(f->out.rows[noisy].candidate);
    assert_false(f->out.rows[contended].candidate);
    assert_false(f->out.rows[unsearched].candidate);
    /* The marked rows are cheaper for the target, and still the only valid row wins. */
    assert_true(f->out.rows[noisy].total_cost < f->out.rows[ok].total_cost);
    assert_true(f->out.rows[contended].total_cost < f->out.rows[ok].total_cost);
    assert_int_equal(f->out.recommended, (int)ok);

    /* With only marked rows there is no recommendation, and it says why. */
    f->cap[ok].valid = false;
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, -1);
    contains(f->out.why, "no variant qualifies");
    assert_false(f->out.hpa.enabled);
    assert_int_equal(f->out.request_cpu_m, 0);
}

/* A CPU-bound app: CPU nearly proportional to load. Capacity 1000 req/s at 0.9 cores, interval
 * low 970; steps at 250, 500 and 1000. */
static size_t cpu_bound_row(struct fixture *f)
{
    size_t i = add(f, "1@1/512Mi", 1000, 970);
    step(&f->cap[i], 250, 0.25);
    step(&f->cap[i], 500, 0.47);
    step(&f->cap[i], 1000, 0.90);
    f->cap[i].cpu_cores = 0.9;
    f->cap[i].peak_memory_bytes = 100 * MIB;
    return i;
}

/* A capacity whose repeats the budget cut short (fewer than the profile asked) is never the
 * recommendation, even when it is the cheapest; cut_short names it so the answer can say it
 * would have been. A cut-short row the ranking would not have chosen is not named. */
static void test_cut_short_never_recommended(void **state)
{
    struct fixture *f = *state;

    f->opts.target_rps = 1000;
    size_t cut = add(f, "1@0.5/256Mi", 900, 880);
    f->cap[cut].interval.n = 2;
    f->cap[cut].flags = CAPACITY_FLAG_REPEATS_CUT | CAPACITY_FLAG_TOO_FEW_REPEATS;
    f->cap[cut].valid = capacity_valid(&f->cap[cut]);
    size_t ok = add(f, "4@4/1Gi", 1500, 1400);
    assert_false(f->cap[cut].valid);
    assert_int_equal(run(f), 0);
    assert_false(f->out.rows[cut].candidate);
    assert_int_equal(f->out.recommended, (int)ok);
    assert_int_equal(f->out.cut_short, (int)cut);

    /* Dearer than the recommendation: nothing to say. */
    f->cap[cut].rps = 90;
    f->cap[cut].interval.low = 88;
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, (int)ok);
    assert_int_equal(f->out.cut_short, -1);
}

static void test_hpa_cpu_bound(void **state)
{
    struct fixture *f = *state;

    f->opts.target_rps = 5000;
    cpu_bound_row(f);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0);
    /* planned = 970 x 0.9 / 1.3 = 671.54; replicas ceil(5000 / 671.54) = 8; max = ceil(5000 x
     * 1.3 / 671.54) = ceil(9.68) = 10. CPU at 671.54: 0.47 + (171.54 / 500) x 0.43 = 0.6175;
     * requests.cpu = 900m; utilization 100 x 0.6175 / 0.9 = 68.6 -> 69. */
    assert_int_equal(f->out.replicas, 8);
    assert_int_equal(f->out.request_cpu_m, 900);
    assert_true(f->out.cpu_request_measured);
    /* memory: 100 MiB x 1.25 = 125 MiB */
    assert_int_equal(f->out.request_memory, 125 * MIB);
    assert_true(f->out.memory_request_measured);
    contains(f->out.requests_note, "the mean CPU measured at capacity (0.900 cores at 1000 req/s)");
    contains(f->out.requests_note, "+ 25% headroom");
    const struct sizing_hpa *h = &f->out.hpa;
    assert_true(h->cpu_bound);
    assert_true(h->enabled);
    assert_int_equal(h->min_replicas, 8);
    assert_int_equal(h->max_replicas, 10);
    near(h->cpu_at_planned, 0.47 + (970 * 0.9 / 1.3 - 500) / 500 * 0.43, 1e-9);
    assert_int_equal(h->target_cpu_utilization, 69);
    contains(h->note, "CPU grows with load: 0.250 cores at 250 req/s and 0.900 at capacity");
    contains(h->note, "3.60x for 4.0x the load (load-driven CPU shows at least 1.50x)");
    contains(h->note, "The HPA targets 69% CPU");
    contains(h->note, "from 8 replicas (the target of 5000 req/s) to 10 (the target + 30% growth)");
}

static void test_pods_hpa_when_cpu_flat(void **state)
{
    struct fixture *f = *state;

    /* An app that waits: 0.30 cores at a quarter of capacity, 0.38 at capacity (1.27x for 4x). */
    f->opts.target_rps = 2000;
    size_t i = add(f, "2@1/512Mi", 800, 780);
    step(&f->cap[i], 200, 0.30);
    step(&f->cap[i], 400, 0.33);
    step(&f->cap[i], 800, 0.38);
    f->cap[i].cpu_cores = 0.38;
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0);
    assert_int_equal(f->out.replicas, 4); /* ceil(2000 / (780 x 0.9 / 1.3 = 540)) */
    assert_false(f->out.hpa.cpu_bound);
    contains(f->out.hpa.note, "CPU does not grow with load: 0.300 cores at 200 req/s and 0.380");
    contains(f->out.hpa.note, "1.27x for 4.0x the load where load-driven CPU shows at least 1.50x");
    contains(f->out.hpa.note, "CPU does not follow its load, so a CPU HPA would not either");
    /* The HPA on the request rate: a Pods metric at the planned 540 req/s per pod, from the 4
     * the target needs to ceil(2000 x 1.3 / 540) = 5. */
    assert_true(f->out.hpa.enabled);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_PODS);
    assert_string_equal(f->out.hpa.metric_name, "http_requests_per_second");
    near(f->out.hpa.target_average_value, 540, 1e-9);
    assert_int_equal(f->out.hpa.min_replicas, 4);
    assert_int_equal(f->out.hpa.max_replicas, 5);
    assert_int_equal(f->out.hpa.target_cpu_utilization, 0);
    assert_string_equal(f->out.hpa.keda_server, PROFILE_AUTOSCALING_SERVER_DEFAULT);
    assert_string_equal(f->out.hpa.keda_query, "");
    contains(f->out.hpa.note,
             "the Pods metric http_requests_per_second at 540.000 req/s per pod "
             "(the planned load), from 4 replicas (the target of 2000 req/s) to 5");

    /* The profile names the metric and KEDA's server and query. */
    struct profile_autoscaling as = {.given = true};
    snprintf(as.metric, sizeof(as.metric), "rps");
    snprintf(as.server_address, sizeof(as.server_address), "http://prom:9090");
    snprintf(as.query, sizeof(as.query), "sum(rate(x[1m]))");
    f->opts.autoscaling = &as;
    assert_int_equal(run(f), 0);
    assert_string_equal(f->out.hpa.metric_name, "rps");
    assert_string_equal(f->out.hpa.keda_server, "http://prom:9090");
    assert_string_equal(f->out.hpa.keda_query, "sum(rate(x[1m]))");
    f->opts.autoscaling = NULL;
}

/* A CPU-bound app keeps the CPU HPA (and fails here if it gets none, or the request-rate one). */
static void test_cpu_bound_keeps_cpu_hpa(void **state)
{
    struct fixture *f = *state;

    f->opts.target_rps = 5000;
    cpu_bound_row(f);
    assert_int_equal(run(f), 0);
    assert_true(f->out.hpa.cpu_bound);
    assert_true(f->out.hpa.enabled);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_CPU);
    assert_true(f->out.hpa.target_cpu_utilization >= SIZING_HPA_MIN_UTIL);
    assert_true(f->out.hpa.max_replicas >= f->out.hpa.min_replicas + 1);
    assert_string_equal(f->out.hpa.metric_name, "");
}

/* The scale-up lag: metrics window + sync period + the measured time to ready, against the
 * ramp. */
static void test_hpa_lag(void **state)
{
    struct fixture *f = *state;

    f->opts.target_rps = 5000;
    cpu_bound_row(f);
    f->rows[0].ready_s = 10;
    assert_int_equal(run(f), 0);
    near(f->out.hpa.lag_s, 15 + 15 + 10, 1e-9);
    contains(f->out.hpa.lag_note, "15 s (metrics-server's resolution) + 15 s (the HPA's sync "
                                  "period) + 10.0 s (its measured time to ready) = 40.0 s");
    contains(f->out.hpa.lag_note, "names no planning.ramp");
    /* 20%/min over 40 s: 13.3%, within the 30% growth room; 60%/min: 40%, beyond it. */
    f->opts.planning.ramp = 0.2;
    f->opts.planning.ramp_given = true;
    assert_int_equal(run(f), 0);
    contains(f->out.hpa.lag_note, "20% per minute the load grows 13.3% over it, within the 30%");
    f->opts.planning.ramp = 0.6;
    assert_int_equal(run(f), 0);
    contains(f->out.hpa.lag_note, "grows 40.0% over it, beyond the 30% growth room");
    /* Unmeasured time to ready: no figure. */
    f->rows[0].ready_s = 0;
    assert_int_equal(run(f), 0);
    assert_true(f->out.hpa.lag_s < 0);
    contains(f->out.hpa.lag_note, "which was not measured");
}

static void test_hpa_growth_span(void **state)
{
    struct fixture *f = *state;

    /* Lowest step at 500 of 1000: the required growth is 2^(ln 1.5 / ln 4) = 1.22x; 0.5 -> 0.9
     * cores is 1.80x: CPU-bound. */
    f->opts.target_rps = 3000;
    size_t i = add(f, "1@1/512Mi", 1000, 970);
    step(&f->cap[i], 500, 0.5);
    f->cap[i].cpu_cores = 0.9;
    assert_int_equal(run(f), 0);
    assert_true(f->out.hpa.cpu_bound);
    contains(f->out.hpa.note, "1.80x for 2.0x the load (load-driven CPU shows at least 1.22x)");

    /* Lowest step at 510: above half of capacity, too close to tell: no CPU HPA, the
     * request-rate one. */
    f->cap[i].steps[0].offered_rps = 510;
    assert_int_equal(run(f), 0);
    assert_false(f->out.hpa.cpu_bound);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_PODS);
    contains(f->out.hpa.note, "too close to it to tell");

    /* A step over the SLO or limited by the generator is no evidence either. */
    f->cap[i].steps[0].offered_rps = 250;
    f->cap[i].steps[0].pass = false;
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_PODS);
    f->cap[i].steps[0].pass = true;
    f->cap[i].steps[0].gen_limited = true;
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_PODS);
    f->cap[i].steps[0].gen_limited = false;
    assert_int_equal(run(f), 0);
    assert_true(f->out.hpa.enabled);
    assert_int_equal(f->out.hpa.metric, SIZING_HPA_CPU);
}

static void test_hpa_needs_target(void **state)
{
    struct fixture *f = *state;

    cpu_bound_row(f);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0);
    assert_true(f->out.hpa.cpu_bound);
    assert_false(f->out.hpa.enabled);
    contains(f->out.hpa.note, "no target load was given, so no replica bounds and no HPA");
}

static void test_cpu_at(void **state)
{
    struct fixture *f = *state;
    bool ex;

    size_t i = cpu_bound_row(f);
    /* Repeats at capacity are averaged with the capacity point: (0.90 + 0.94 + 0.86) / 3 ... */
    struct capacity_result *c = &f->cap[i];
    step(c, 1000, 0.94);
    step(c, 1000, 0.86);
    near(sizing_cpu_at(c, 1000, &ex), 0.9, 1e-9);
    assert_false(ex);
    near(sizing_cpu_at(c, 375, &ex), 0.36, 1e-9); /* halfway between 0.25 and 0.47 */
    assert_false(ex);
    near(sizing_cpu_at(c, 125, &ex), 0.125, 1e-9); /* proportional below the lowest step */
    assert_true(ex);
    near(sizing_cpu_at(c, 2000, &ex), 0.9, 1e-9); /* the highest above it */
    assert_true(ex);
    /* Nothing measured: unknown. */
    c->nsteps = 0;
    c->cpu_cores = -1;
    assert_true(sizing_cpu_at(c, 500, NULL) < 0);
}

static void test_planning_overrides(void **state)
{
    struct fixture *f = *state;

    /* No buffer, no growth: planned = low, replicas = ceil(target / low); the max would equal
     * the min, an HPA that can never act: room for one more. */
    f->opts.planning.buffer = 0;
    f->opts.planning.growth = 0;
    f->opts.target_rps = 2000;
    cpu_bound_row(f);
    assert_int_equal(run(f), 0);
    near(f->out.planned_rps_per_pod, 970, 1e-9);
    assert_int_equal(f->out.replicas, 3);
    assert_int_equal(f->out.hpa.min_replicas, 3);
    assert_int_equal(f->out.hpa.max_replicas, 4);
    contains(f->out.why, "100% of the capacity interval's lower bound");
}

static void test_bad_options(void **state)
{
    struct fixture *f = *state;
    char err[ERR_LEN];

    add(f, "1@1/512Mi", 1000, 970);
    struct sizing_opts o = f->opts;
    o.target_rps = 100;
    o.target_users = 100;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    contains(err, "give one");
    o = f->opts;
    o.planning.buffer = 1;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    o = f->opts;
    o.planning.growth = -0.1;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    o = f->opts;
    o.cost.cpu = 0;
    o.cost.memory_gib = 0;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    o = f->opts;
    o.cost.cpu = -1;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    o = f->opts;
    o.target_rps = NAN;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    o = f->opts;
    o.per_user_rps = 0;
    assert_int_equal(sizing_run(f->rows, f->n, &o, &f->out, err), -EINVAL);
    assert_int_equal(f->out.recommended, -1);
}

static void test_too_few_repeats_still_valid(void **state)
{
    struct fixture *f = *state;

    /* One repeat: no interval, so the mean is the lower bound; "too few repeats" alone does not
     * invalidate a row. */
    f->opts.target_rps = 1000;
    size_t i = add(f, "1@1/512Mi", 1300, 1300);
    f->cap[i].interval.n = 1;
    f->cap[i].interval.low = 0;
    f->cap[i].flags = CAPACITY_FLAG_TOO_FEW_REPEATS;
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0);
    near(f->out.rows[0].capacity_low, 1300, 1e-9);
    near(f->out.planned_rps_per_pod, 900, 1e-9); /* 1300 x 0.9 / 1.3 */
    assert_int_equal(f->out.replicas, 2);
}

/* ---- stream mode ---------------------------------------------------------------------------- */

#define KIB 1024LL

/* A stream-searched, valid row holding `streams` within the SLO, its memory line `per_stream`
 * bytes per stream above `base`; CPU 0.5 cores at capacity. */
static size_t add_streams(struct fixture *f, const char *spec, unsigned streams, int64_t per_stream,
                          int64_t base)
{
    char err[ERR_LEN];
    size_t i = f->n++;
    struct stream_capacity *c = &f->scap[i];

    assert_int_equal(variant_parse(spec, &f->var[i], err), 0);
    memset(c, 0, sizeof(*c));
    memset(&f->cap[i], 0, sizeof(f->cap[i]));
    c->searched = true;
    c->valid = true;
    c->streams = streams;
    c->memory_per_stream_bytes = per_stream;
    c->base_memory_bytes = base;
    c->memory_points = 3;
    c->cpu_cores = 0.5;
    c->memory_bytes = base + (int64_t)streams * per_stream;
    c->delivery_p95_ms = 40;
    c->limited_by = STREAM_LIMIT_DELIVERY_P95;
    f->rows[i] = (struct sizing_row){&f->var[i], &f->cap[i], c, true, 0};
    f->opts.streams = true;
    return i;
}

/* Planned per pod = capacity x 0.9 / 1.3. 1@1/1Gi: 6500 -> 4500 streams, 18000 / 4500 = 4
 * pods at 1 + 0.13 = 1.13 each, 4.52 in all; 2@2/2Gi: 9100 -> 6300, ceil(2.86) = 3 pods at
 * 2.26, 6.78. Memory for 4500 streams: (4500 x 41 KiB + 180 MiB) x 1.25 = 450.2 MiB -> 451. */
static void test_streams_target(void **state)
{
    struct fixture *f = *state;
    size_t small = add_streams(f, "1@1/1Gi", 6500, 41 * KIB, 180 * MIB);
    add_streams(f, "2@2/2Gi", 9100, 41 * KIB, 180 * MIB);
    f->opts.target_streams = 18000;

    assert_int_equal(run(f), 0);
    assert_true(f->out.streams);
    assert_int_equal(f->out.recommended, (int)small);
    near(f->out.rows[0].planned_rps, 4500, 1e-6);
    near(f->out.rows[1].planned_rps, 6300, 1e-6);
    assert_int_equal(f->out.rows[0].replicas, 4);
    assert_int_equal(f->out.rows[1].replicas, 3);
    near(f->out.rows[0].total_cost, 4.52, 1e-9);
    assert_int_equal(f->out.replicas, 4);
    assert_int_equal(f->out.streams_per_pod, 4500);
    assert_int_equal(f->out.request_memory, 451 * MIB);
    assert_true(f->out.memory_request_measured);
    assert_int_equal(f->out.request_cpu_m, 500);
    contains(f->out.memory_note, "4 pods x 4,500 streams x 41.0 KiB + 180 MiB base + 25% = "
                                 "451 MiB each");
    contains(f->out.why, "the target of 18000 streams: 4 x 1w / 1.0c / 1Gi at 1.130");
    contains(f->out.why, "each pod is planned at 4500 streams");
    contains(f->out.assumption, "4 replicas serve 18000 streams");
    assert_false(f->out.hpa.enabled);
    contains(f->out.hpa.note, "no HPA");
}

/* The memory for a pod's share never exceeds the limit the streams were measured under: 4500 x
 * 200 KiB + 180 MiB is ~1.1 GiB before headroom, above 1@1/512Mi's 512Mi. */
static void test_streams_memory_capped(void **state)
{
    struct fixture *f = *state;
    add_streams(f, "1@1/512Mi", 6500, 200 * KIB, 180 * MIB);

    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0);
    assert_int_equal(f->out.replicas, 1); /* no target */
    assert_int_equal(f->out.streams_per_pod, 4500);
    assert_int_equal(f->out.request_memory, 512 * MIB);
    contains(f->out.memory_note, "1 pod x 4,500 streams x 200 KiB");
    contains(f->out.memory_note, "capped at the 512Mi limit");
    contains(f->out.why, "No target load was given");
}

/* Without a measured slope there is no arithmetic to show: the peak at capacity + headroom. An
 * invalid stream capacity is never recommended. */
static void test_streams_unmeasured_and_invalid(void **state)
{
    struct fixture *f = *state;
    size_t bad = add_streams(f, "2@2/1Gi", 50000, 10 * KIB, 100 * MIB);
    f->scap[bad].valid = false;
    f->scap[bad].flags = STREAM_CAP_FLAG_BUDGET;
    size_t ok = add_streams(f, "1@1/1Gi", 1300, -1, -1);
    f->scap[ok].memory_bytes = 200 * MIB;

    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, (int)ok);
    assert_false(f->out.rows[bad].candidate);
    assert_string_equal(f->out.memory_note, "");
    assert_int_equal(f->out.request_memory, 250 * MIB); /* 200 MiB x 1.25 */
    contains(f->out.requests_note, "the memory per stream was not measured");
    assert_true(sizing_stream_memory(10, -1, 0, MIB) < 0);
}

/* A target in streams needs a stream sweep, and a stream sweep a target in streams. */
static void test_streams_target_units(void **state)
{
    struct fixture *f = *state;
    char err[ERR_LEN] = "";

    add(f, "1@1/512Mi", 150, 140);
    f->opts.target_streams = 1000;
    assert_int_equal(sizing_run(f->rows, f->n, &f->opts, &f->out, err), -EINVAL);
    contains(err, "needs a stream-capacity sweep");

    f->opts.target_streams = 0;
    f->opts.streams = true;
    f->opts.target_rps = 500;
    assert_int_equal(sizing_run(f->rows, f->n, &f->opts, &f->out, err), -EINVAL);
    contains(err, "give the target in streams");
}

/* The replica count from a measured scale-out's lower bounds (planned share 0.69 here). */
static void test_curve_replicas(void **state)
{
    (void)state;
    struct sizing_curve c;
    char err[ERR_LEN] = "";

    /* Linear, 100 / 200 / 300 at 1..3: 300 req/s needs X >= 434.8, the curve gives 500 at 5
     * (400 at 4 is short), within 2 x 3 = 6. */
    struct sizing_curve_point lin[] = {
        {1, 100, true, 0, 0, 0}, {2, 200, true, 0, 0, 0}, {3, 300, true, 0, 0, 0}};
    assert_int_equal(sizing_curve_replicas(lin, 3, 300, 0.69, &c, err), 0);
    assert_true(c.reachable);
    assert_int_equal(c.replicas, 5);
    assert_int_equal(c.cap, 6);
    contains(c.why, "5 replicas");
    /* 150 req/s: 217 needed, measured 300 at 3 (200 at 2 is short). */
    assert_int_equal(sizing_curve_replicas(lin, 3, 150, 0.69, &c, err), 0);
    assert_int_equal(c.replicas, 3);
    /* 500 req/s needs 725: 8 pods by the line, more than 2 x 3 measured: no count. */
    assert_int_equal(sizing_curve_replicas(lin, 3, 500, 0.69, &c, err), 0);
    assert_false(c.reachable);
    assert_true(c.beyond_measured);
    assert_int_equal(c.replicas, 0);
    contains(c.why, "needs more than 6 pods, which was not measured");

    /* A plateau near 200 (a shared backend): 200 req/s needs 290 planned, never reached; the
     * sentence has the most the pods reach. */
    struct sizing_curve_point flat[] = {{1, 100, true, 0, 0, 0},
                                        {2, 170, true, 0, 0, 0},
                                        {3, 190, true, 0, 0, 0},
                                        {4, 196, true, 0, 0, 0}};
    assert_int_equal(sizing_curve_replicas(flat, 4, 200, 0.69, &c, err), 0);
    assert_false(c.reachable);
    assert_false(c.beyond_measured && c.most_rps > 290);
    assert_true(c.most_rps >= 190 && c.most_rps < 260); /* read up to N* = 3.5: 190 at 3 */
    contains(c.why, "is not reachable with this shape: the pods reach at most");
    /* Below the plateau: 100 req/s needs 145, measured 170 at 2. */
    assert_int_equal(sizing_curve_replicas(flat, 4, 100, 0.69, &c, err), 0);
    assert_int_equal(c.replicas, 2);

    /* A peak: the curve is read no further than N*. */
    struct sizing_curve_point peak[] = {{1, 100, true, 0, 0, 0},
                                        {2, 180, true, 0, 0, 0},
                                        {3, 220, true, 0, 0, 0},
                                        {4, 220, true, 0, 0, 0},
                                        {6, 180, true, 0, 0, 0}};
    assert_int_equal(sizing_curve_replicas(peak, 5, 300, 0.69, &c, err), 0);
    assert_true(c.fit.k_distinct);
    assert_true(c.cap < 12 && c.cap >= 3);
    assert_false(c.reachable);
    assert_false(c.beyond_measured);

    /* A contended point is not read; a measured lower bound wins over the curve at its N. */
    struct sizing_curve_point cont[] = {
        {1, 100, true, 0, 0, 0}, {2, 200, true, 0, 0, 0}, {3, 120, false, 0, 0, 0}};
    assert_int_equal(sizing_curve_replicas(cont, 3, 130, 0.69, &c, err), 0);
    assert_int_equal(c.replicas, 2);
    assert_int_equal(c.nmax, 2);

    /* One curve in the words: with capacities and their errors beside the lower bounds, the
     * sentence's s and k and where the count is read to (N*) are the capacities' fit, the one
     * sizing_curve_fit gives the findings and results.json; only X_low comes from the lower
     * bounds. */
    struct sizing_curve_point both[] = {{1, 97, true, 100, 2, 0},
                                        {2, 185, true, 195, 4, 0},
                                        {3, 215, true, 240, 8, 0},
                                        {4, 220, true, 250, 9, 0}};
    struct usl_fit one_fit;
    char words[128];
    assert_int_equal(sizing_curve_fit(both, 4, &one_fit, err), 0);
    assert_int_equal(sizing_curve_replicas(both, 4, 400, 0.69, &c, err), 0);
    assert_true(c.fit.s == one_fit.s && c.fit.k == one_fit.k);
    assert_true(c.fit.x1 == 100 && c.low_fit.x1 == 97);
    assert_true(one_fit.k_distinct && one_fit.peak_replicas > 4);
    assert_int_equal(c.cap, (unsigned)floor(one_fit.peak_replicas));
    assert_false(c.reachable);
    snprintf(words, sizeof(words), "(contention s %.3g, coherency k %.2g)", one_fit.s, one_fit.k);
    contains(c.why, words);
    assert_true(fabs(c.most_rps - 220) < 30); /* the lower bounds' most, near 4 */

    /* A plateau whose last point did not hold its repeats (a shared backend at 250 req/s):
     * left out of the fit, the curve through 1..3 rises past it; the point bounds the read,
     * so the most the pods reach is what was measured, the curve is not read past 4, and the
     * sentence says which point refuted it. */
    struct sizing_curve_point held[] = {{1, 101.7, true, 102.4, 3.2, 0},
                                        {2, 200.7, true, 203.5, 8, 0},
                                        {3, 247.2, true, 247.7, 5.4, 0},
                                        {4, 242.9, false, 244.6, 7.8, 0}};
    assert_int_equal(sizing_curve_replicas(held, 4, 400, 0.69, &c, err), 0);
    assert_int_equal(c.refuted_at, 0); /* without the bound: the curve alone past 3 */
    assert_true(c.most_rps > 270 && c.most_at > 3);
    held[3].bound = 244.6;
    assert_int_equal(sizing_curve_replicas(held, 4, 400, 0.69, &c, err), 0);
    assert_false(c.reachable);
    assert_int_equal(c.refuted_at, 4);
    assert_true(c.refuted_fit > 250 && c.refuted_x == 244.6);
    assert_int_equal(c.nmax, 4);
    assert_int_equal(c.cap, 4);
    assert_int_equal(c.most_at, 3);
    assert_true(fabs(c.most_rps - 247.2) < 1e-9);
    contains(c.why, "at 4 replicas 245 req/s did not hold its repeats");
    contains(c.why, "not reachable within the 4 replicas measured");
    /* Below the plateau the count stands: 120 req/s needs 174, measured 200.7 at 2. */
    assert_int_equal(sizing_curve_replicas(held, 4, 120, 0.69, &c, err), 0);
    assert_int_equal(c.replicas, 2);
    /* A bound above the curve refutes nothing: the line is read as before, never above it. */
    struct sizing_curve_point above[] = {{1, 100, true, 0, 0, 0},
                                         {2, 200, true, 0, 0, 0},
                                         {3, 300, true, 0, 0, 0},
                                         {4, 0, false, 0, 0, 450}};
    assert_int_equal(sizing_curve_replicas(above, 4, 300, 0.69, &c, err), 0);
    assert_int_equal(c.refuted_at, 0);
    assert_int_equal(c.replicas, 5);
    assert_int_equal(c.cap, 8); /* 2 x the 4 measured */

    /* Bad input. */
    assert_int_equal(sizing_curve_replicas(lin, 3, 0, 0.69, &c, err), -EINVAL);
    struct sizing_curve_point one[] = {{1, 100, true, 0, 0, 0}};
    assert_int_equal(sizing_curve_replicas(one, 1, 100, 0.69, &c, err), -EINVAL);
}

/* ---- the answer's order with a scale-out (sizing_run steps 3 to 6) ---------------------- */

/* The scale-out measured row v at pts[0..n) (lower bounds). */
static void scale_out(struct fixture *f, size_t v, const struct sizing_curve_point *pts, size_t n)
{
    struct sizing_scale_out *so = &f->opts.scale_out;
    memset(so, 0, sizeof(*so));
    so->run = true;
    so->variant = v;
    so->n = n;
    memcpy(so->pts, pts, n * sizeof(*pts));
}

/* The planned share: (1 - 0.10) / (1 + 0.30). */
#define PF (0.9 / 1.3)

static void test_answer_curve_reachable(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {{1, 970, true, 0, 0, 0},
                                       {2, 1700, true, 0, 0, 0},
                                       {3, 2300, true, 0, 0, 0},
                                       {4, 2800, true, 0, 0, 0}};

    /* 1800 req/s: linear ceil(1800 / 671.5) = 3; the curve needs 1800 / 0.6923 = 2600, and
     * 2300 at 3 is short, 2800 at 4 holds it: 4. */
    f->opts.target_rps = 1800;
    cpu_bound_row(f);
    scale_out(f, 0, pts, 4);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.replicas_linear, 3);
    assert_true(f->out.curve_read);
    assert_true(f->out.from_curve);
    assert_false(f->out.unreachable);
    assert_int_equal(f->out.replicas, 4);
    contains(f->out.replicas_note, "4 replicas: the scale-out's lower bounds give 2800 req/s at 4");
    contains(f->out.why, "measured at scale: 4 replicas");
    /* The curve replaces the linear assumption. */
    assert_string_equal(f->out.assumption, "");
    /* HPA: min 4; max the smallest N whose curve holds 1800 x 1.3 = 2340 planned (3380 req/s),
     * at most where the curve ends. */
    const struct sizing_hpa *h = &f->out.hpa;
    assert_true(h->enabled);
    assert_int_equal(h->min_replicas, 4);
    unsigned want = f->out.curve.cap;
    for (unsigned r = 5; r <= f->out.curve.cap; r++)
        if (usl_eval(&f->out.curve.fit, r) * PF >= 2340) {
            want = r;
            break;
        }
    assert_true(want >= 5);
    assert_int_equal(h->max_replicas, want);
    assert_true(h->max_replicas <= f->out.curve.cap);
    contains(h->note, "read from the scale-out's curve and capped at");
}

static void test_answer_curve_unreachable(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {{1, 970, true, 0, 0, 0},
                                       {2, 1500, true, 0, 0, 0},
                                       {3, 1700, true, 0, 0, 0},
                                       {4, 1750, true, 0, 0, 0}};

    /* A plateau near 1750: 1800 req/s needs 2600, never reached. */
    f->opts.target_rps = 1800;
    cpu_bound_row(f);
    scale_out(f, 0, pts, 4);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0); /* the shape still stands */
    assert_true(f->out.curve_read);
    assert_false(f->out.from_curve);
    assert_true(f->out.unreachable);
    assert_int_equal(f->out.replicas, 0);
    assert_int_equal(f->out.replicas_linear, 3);
    contains(f->out.replicas_note, "the target of 1800 req/s is not reachable with this shape");
    contains(f->out.replicas_note, "the pods reach at most");
    contains(f->out.replicas_note, "contention s");
    assert_false(f->out.hpa.enabled);
    contains(f->out.hpa.note, "not reachable");
    /* The requests are the shape's all the same. */
    assert_int_equal(f->out.request_cpu_m, 900);
}

static void test_answer_above_twice_measured(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {{1, 970, true, 0, 0, 0}, {2, 1940, true, 0, 0, 0}};

    /* Linear, two points: the curve ends at 2 x 2 = 4 (3880 req/s); 5000 req/s needs 7222. */
    f->opts.target_rps = 5000;
    cpu_bound_row(f);
    scale_out(f, 0, pts, 2);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.curve.cap, 4);
    assert_true(f->out.curve.beyond_measured);
    assert_true(f->out.unreachable);
    assert_int_equal(f->out.replicas, 0);
    assert_int_equal(f->out.replicas_linear, 8);
    contains(f->out.replicas_note, "needs more than 4 pods, which was not measured");
    assert_false(f->out.hpa.enabled);
}

static void test_answer_hpa_capped(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {
        {1, 970, true, 0, 0, 0}, {2, 1940, true, 0, 0, 0}, {3, 2910, true, 0, 0, 0}};

    /* Linear to 3: the curve ends at 6. 3200 req/s needs 4622: 4850 at 5. The max wants
     * 3200 x 1.3 / 0.6923 = 6009, more than 5820 at 6: capped at 6 (linear would say 7). */
    f->opts.target_rps = 3200;
    cpu_bound_row(f);
    scale_out(f, 0, pts, 3);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.curve.cap, 6);
    assert_int_equal(f->out.replicas, 5);
    assert_int_equal(f->out.replicas_linear, 5);
    assert_true(f->out.hpa.enabled);
    assert_int_equal(f->out.hpa.min_replicas, 5);
    assert_int_equal(f->out.hpa.max_replicas, 6);
    contains(f->out.hpa.note, "capped at 6, where it ends: 2 x the 3 replicas measured");
}

static void test_answer_availability_cap(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {
        {1, 970, true, 0, 0, 0}, {2, 1940, true, 0, 0, 0}, {3, 2910, true, 0, 0, 0}};

    /* As above (5 from the curve, which ends at 6); one replica for availability: 6. */
    f->opts.target_rps = 3200;
    cpu_bound_row(f);
    scale_out(f, 0, pts, 3);
    /* One zone, a drain of 1: R + 1. */
    struct profile_availability av = {true, 1, 1};
    f->opts.availability = &av;
    assert_int_equal(run(f), 0);
    assert_false(f->out.unreachable);
    assert_int_equal(f->out.replicas, 6);
    /* 6 is where the curve ends: min 6 / max 6 could never scale, so no HPA, and why. */
    assert_false(f->out.hpa.enabled);
    contains(f->out.hpa.note, "the target needs 6 replicas and the scale-out's curve ends at 6");
    contains(f->out.hpa.note, "no room to scale up: no HPA, run the 6 replicas");
    contains(f->out.replicas_note, "5 + 1 for availability = 6 replicas");
    /* Two: 7 passes where the curve ends: unreachable with that availability. */
    av.drain = 2;
    assert_int_equal(run(f), 0);
    assert_true(f->out.unreachable);
    assert_int_equal(f->out.replicas, 0);
    assert_false(f->out.hpa.enabled);
    contains(f->out.replicas_note,
             "not reachable with 2 replicas added for availability: 5 + 2 = 7 passes 6");
    /* Without a curve the count only grows: 5 linear + 2. */
    f->opts.scale_out.run = false;
    assert_int_equal(run(f), 0);
    assert_false(f->out.unreachable);
    assert_int_equal(f->out.replicas, 7);

    /* A point at 4 whose 3000 req/s did not hold, below the line's 3880: the curve ends at the
     * 4 measured, and the words say why (not a peak, not 2 x measured). 1500 req/s: 3 from
     * the curve, + 2 for availability passes 4. */
    struct sizing_curve_point held[] = {{1, 970, true, 0, 0, 0},
                                        {2, 1940, true, 0, 0, 0},
                                        {3, 2910, true, 0, 0, 0},
                                        {4, 0, false, 0, 0, 3000}};
    f->opts.target_rps = 1500;
    scale_out(f, 0, held, 4);
    assert_int_equal(run(f), 0);
    assert_true(f->out.unreachable);
    contains(f->out.replicas_note, "3 + 2 = 5 passes 4, where the curve ends (the 4 replicas "
                                   "measured, as 3000 req/s at 4 did not hold its repeats)");
}

static void test_answer_dearer_than_runner_up(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {{1, 970, true, 0, 0, 0},
                                       {2, 1400, true, 0, 0, 0},
                                       {3, 1900, true, 0, 0, 0},
                                       {4, 2300, true, 0, 0, 0},
                                       {5, 2700, true, 0, 0, 0}};

    /* A: 1@1/512Mi at 1.065 a pod, 3 linear = 3.195; B: 2@2/1Gi, low 1746, planned 1208.8,
     * 2 x 2.13 = 4.26. A wins on the linear plan; measured, A needs 2600 req/s: 2700 at 5, so
     * 5 x 1.065 = 5.325, dearer than B's 4.26. */
    f->opts.target_rps = 1800;
    cpu_bound_row(f);
    add(f, "2@2/1Gi", 1800, 1746);
    scale_out(f, 0, pts, 5);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.recommended, 0);
    assert_int_equal(f->out.replicas, 5);
    contains(f->out.dearer, "Measured at scale, 1w / 1.0c / 512Mi is dearer than the runner-up's "
                            "linear plan: 5 x 1w / 1.0c / 512Mi at 1.065 = 5.325 from the curve "
                            "(3 on the linear plan), against 2 x 2w / 2.0c / 1Gi = 4.260");
    contains(f->out.dearer, "the runner-up was not measured at scale");
    /* Out of reach: the runner-up's linear plan is named, with the same caveat. */
    struct sizing_curve_point flat[] = {{1, 970, true, 0, 0, 0},
                                        {2, 1500, true, 0, 0, 0},
                                        {3, 1700, true, 0, 0, 0},
                                        {4, 1750, true, 0, 0, 0}};
    scale_out(f, 0, flat, 4);
    assert_int_equal(run(f), 0);
    assert_true(f->out.unreachable);
    contains(f->out.dearer, "cannot hold the target; the runner-up's linear plan is 2 x 2w / 2.0c "
                            "/ 1Gi = 4.260");
    /* Cheaper at scale than the runner-up: nothing to say. */
    struct sizing_curve_point lin[] = {
        {1, 970, true, 0, 0, 0}, {2, 1940, true, 0, 0, 0}, {3, 2910, true, 0, 0, 0}};
    scale_out(f, 0, lin, 3);
    assert_int_equal(run(f), 0);
    assert_int_equal(f->out.replicas, 3);
    assert_string_equal(f->out.dearer, "");
}

static void test_answer_linear_and_why(void **state)
{
    struct fixture *f = *state;
    struct sizing_curve_point pts[] = {{1, 970, true, 0, 0, 0}, {2, 1900, true, 0, 0, 0}};

    f->opts.target_rps = 1800;
    cpu_bound_row(f);
    add(f, "2@2/1Gi", 1800, 1746);
    /* No scale-out: the runner's reason, the linear count and its assumption. */
    snprintf(f->opts.scale_out.skipped, sizeof(f->opts.scale_out.skipped), "scale-out off");
    assert_int_equal(run(f), 0);
    assert_false(f->out.curve_read);
    assert_int_equal(f->out.replicas, 3);
    assert_int_equal(f->out.replicas_linear, 3);
    assert_string_equal(f->out.curve_skipped, "scale-out off");
    contains(f->out.replicas_note, "3 replicas from the linear plan");
    contains(f->out.assumption, "only if pods scale independently");
    /* The scale-out measured the runner-up: not this shape's curve. */
    scale_out(f, 1, pts, 2);
    assert_int_equal(run(f), 0);
    assert_false(f->out.curve_read);
    assert_int_equal(f->out.replicas, 3);
    contains(f->out.curve_skipped, "the scale-out measured 2w / 2.0c / 1Gi, not the recommended");
    /* Its first point above 1 failed: no curve from one point; linear, and why. */
    struct sizing_curve_point failed[] = {{1, 970, true, 0, 0, 0}, {2, 0, false, 0, 0, 0}};
    scale_out(f, 0, failed, 2);
    assert_int_equal(run(f), 0);
    assert_false(f->out.curve_read);
    assert_false(f->out.unreachable);
    assert_int_equal(f->out.replicas, 3);
    assert_true(f->out.hpa.enabled);
    assert_int_equal(f->out.hpa.min_replicas, 3);
    contains(f->out.curve_skipped, "the scale-out gave no curve to read");
    /* No target: nothing about replicas. */
    f->opts.target_rps = 0;
    scale_out(f, 0, pts, 2);
    assert_int_equal(run(f), 0);
    assert_false(f->out.curve_read);
    assert_int_equal(f->out.replicas, 1);
    assert_string_equal(f->out.replicas_note, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reference_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_short_never_recommended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_users_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_no_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cost_tie_fewer_replicas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_marked_rows_never_recommended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpa_cpu_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pods_hpa_when_cpu_flat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_bound_keeps_cpu_hpa, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpa_lag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpa_growth_span, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hpa_needs_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_at, setup, teardown),
        cmocka_unit_test_setup_teardown(test_planning_overrides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_few_repeats_still_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_memory_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_unmeasured_and_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_target_units, setup, teardown),
        cmocka_unit_test(test_curve_replicas),
        cmocka_unit_test_setup_teardown(test_answer_curve_reachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_curve_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_above_twice_measured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_hpa_capped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_availability_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_dearer_than_runner_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_linear_and_why, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
