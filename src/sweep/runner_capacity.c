/* Capacity mode of the sweep runner: for one ready variant, a short closed-loop probe, then the
 * open-loop steps the search asks for (src/sweep/search.h), then `repeats` measurements at the
 * found capacity for a Student-t interval (re-measured once when it is wider than
 * CAPACITY_NOISY_REL). Every step is its own warm-up and measured window, with usage_begin and
 * usage_end around the window, and lands in the row's capacity_result. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/stats.h"
#include "load/hist.h"
#include "sweep/runner_int.h"
#include "sweep/runner_step_int.h"
#include "sweep/search.h"

_Static_assert(2 * PROFILE_MAX_REPEATS <= CAPACITY_MAX_REPEATS,
               "the repeats and a re-measure must fit in repeat_rps");

/* Search steps granted below a capacity whose repeats did not hold. */
#define REFUTE_STEPS 2

_Static_assert(1 + PROFILE_MAX_SEARCH_STEPS + REFUTE_STEPS + 4 * PROFILE_MAX_REPEATS <=
                   CAPACITY_MAX_STEPS,
               "a variant's steps must fit in capacity_result.steps");

double sweep__capacity_estimate_s(const struct profile *p)
{
    const struct profile_search *s = &p->search;
    double step = (double)(s->warmup_us + s->window_us) / 1e6;
    /* The probe, a typical search (the budget), the repeats, and start-up. */
    return step * (1 + s->max_steps + s->repeats) + 3;
}

/* The search proper. Returns 0 or a load run's error. */
static int search_steps(struct cap_ctx *x, struct search *s, char *err)
{
    double rate;

    while (!sweep__stopped(x->c->o) && search_next(s, &rate)) {
        if (!sweep__cap_time_for_step(x, x->p->search.window_us)) {
            search_out_of_time(s);
            break;
        }
        struct step_run r;
        int rc = sweep__cap_run_step(x, CAPACITY_STEP_SEARCH, rate, 0, &r, err);
        if (rc) {
            sweep__cap_step_free(&r);
            return rc;
        }
        if (sweep__stopped(x->c->o)) {
            sweep__cap_file_step(x, &r, false);
            break;
        }
        search_record(s, rate, r.outcome, r.why);
        bool best = r.st.pass && rate >= s->low;
        bool failed = !r.st.pass;
        sweep__cap_file_step(x, &r, best);
        if (x->died)
            break;
        if (failed && !sweep__stopped(x->c->o))
            sweep__cap_settle(x);
    }
    return 0;
}

/* The n repeats' figures into cap: their interval and mean, the CPU they measured on average
 * (cpu_cores, -1 when none did), and their merged latency and errors (merged may be NULL). */
static void summarize_repeats(struct capacity_result *cap, size_t n, double cpu_cores,
                              const struct load_stats *merged)
{
    if (n > 0) {
        stats_summarize(cap->repeat_rps, n, &cap->interval);
        cap->rps = cap->interval.mean;
        capacity_set_interval(cap, n);
        cap->cpu_cores = cpu_cores;
    }
    if (merged && merged->requests > 0) {
        cap->merged.have = true;
        cap->merged.requests = merged->requests;
        cap->merged.p50_us = hist_percentile(&merged->latency, 50);
        cap->merged.p95_us = hist_percentile(&merged->latency, 95);
        cap->merged.p99_us = hist_percentile(&merged->latency, 99);
        cap->merged.error_rate = load_stats_error_rate(merged);
    }
}

/* The repeats as one measurement, for the row's latency columns (capacity_merged): a fresh
 * one, or with more the one the earlier repeats at this rate filled. Out of memory costs the row
 * those columns' merge (it keeps the last repeat's), never a repeat: NULL then. */
static struct load_stats *repeats_merged(struct cap_ctx *x, bool more)
{
    if (!more || !x->merged) {
        free(x->merged);
        x->merged = malloc(sizeof(*x->merged));
        if (x->merged)
            load_stats_init(x->merged);
    }
    return x->merged;
}

/* repeats measurements at rate into cap->repeat_rps, summarized into cap->interval; *failed
 * counts those that missed the SLO, *why the objective the last of them missed. With more, the
 * new repeats join the ones already there (a noisy interval measured again: more samples of the
 * same rate, so the interval narrows with their number instead of starting over from two).
 * Returns 0 or a load run's error; fewer repeats than asked when time or the stop flag ran out. */
static int measure_repeats(struct cap_ctx *x, double rate, bool more, unsigned *failed_n,
                           enum capacity_limit *why, char *err)
{
    struct capacity_result *cap = x->cap;
    size_t n = more ? cap->interval.n : 0;
    /* At the rate the last repeats ran, their CPU stands (the same load on the same pod). */
    bool same = x->cpu.n > 0 && x->cpu.rate == rate;
    double cpu = same ? x->cpu.sum : 0;
    size_t ncpu = same ? x->cpu.n : 0;
    struct load_stats *merged = repeats_merged(x, more);

    unsigned i;

    if (!more) {
        *failed_n = 0;
        memset(&cap->interval, 0, sizeof(cap->interval));
        cap->flags &= ~CAPACITY_FLAG_REPEATS_CUT;
    }
    memset(&cap->merged, 0, sizeof(cap->merged));
    for (i = 0; i < x->p->search.repeats && n < CAPACITY_MAX_REPEATS; i++) {
        /* Until a repeat gave the CPU at capacity, a repeat is held as long as the platform
         * needs to report CPU at all (a cluster's metrics window): one long repeat, not all. */
        int64_t need = x->usage_window_us;
        x->repeat_window_us = ncpu == 0 && need > x->p->search.window_us ? need : 0;
        if (sweep__stopped(x->c->o) || x->died ||
            !sweep__cap_time_for_step(x, x->repeat_window_us ? x->repeat_window_us
                                                             : x->p->search.window_us))
            break;
        struct step_run r;
        int rc = sweep__cap_run_step(x, CAPACITY_STEP_REPEAT, rate, 0, &r, err);
        if (rc) {
            sweep__cap_step_free(&r);
            return rc;
        }
        if (r.have_res && r.res.interrupted) {
            sweep__cap_file_step(x, &r, false);
            break;
        }
        /* A repeat the busy host starved is the host's figure: measured again, at most
         * SWEEP_CONTENDED_RERUNS times per variant, and kept in the steps but not the repeats. */
        bool starved = r.have_usage && !r.usage.died && !r.usage.oom_killed &&
                       sweep__cap_repeat_contended(x, &r);
        if (starved && x->cap->contended_reruns < SWEEP_CONTENDED_RERUNS) {
            x->cap->contended_reruns++;
            log_info("sweep.rerun", "variant=%s step=%u reason=contended rerun=%u of %d",
                     sweep__row(x->c)->variant.spec, x->c->step, x->cap->contended_reruns,
                     SWEEP_CONTENDED_RERUNS);
            sweep__cap_file_step(x, &r, false);
            i--; /* unsigned: from 0 it wraps, and the loop's ++ brings it back */
            continue;
        }
        cap->repeat_rps[n++] = r.st.sustained_rps;
        if (merged && r.have_res)
            load_stats_merge(merged, &r.res.total);
        if (r.st.cpu_cores >= 0) {
            cpu += r.st.cpu_cores;
            ncpu++;
        }
        if (r.st.peak_memory_bytes > cap->peak_memory_bytes)
            cap->peak_memory_bytes = r.st.peak_memory_bytes;
        bool failed = !r.st.pass;
        if (failed) {
            (*failed_n)++;
            *why = r.outcome == SEARCH_GEN_LIMITED ? CAPACITY_LIMIT_GENERATOR : r.why;
        }
        sweep__cap_file_step(x, &r, true);
        /* A repeat that missed the SLO left a backlog like any failed step; the next repeat
         * must measure the app, not the backlog. Its figure stays in the interval. */
        if (failed && !x->died && !sweep__stopped(x->c->o))
            sweep__cap_settle(x);
    }
    /* Left before its count: time, the stop flag or the variant ran out. */
    if (i < x->p->search.repeats && n < CAPACITY_MAX_REPEATS)
        cap->flags |= CAPACITY_FLAG_REPEATS_CUT;
    x->cpu.rate = rate;
    x->cpu.sum = cpu;
    x->cpu.n = ncpu;
    summarize_repeats(cap, n, ncpu ? cpu / (double)ncpu : -1, merged);
    return 0;
}

/* Repeats measure an app's capacity found by the search, or the ceiling that held. */
static bool should_repeat(const struct search *s)
{
    return s->low > 0 &&
           (s->limit == CAPACITY_LIMIT_SLO_P95 || s->limit == CAPACITY_LIMIT_SLO_P99 ||
            s->limit == CAPACITY_LIMIT_SLO_ERRORS || s->limit == CAPACITY_LIMIT_MAX_RPS);
}

/* What the search alone says when no repeat ran: the best passing step's achieved rate. */
static void from_best_step(struct capacity_result *cap, double low)
{
    for (size_t i = 0; i < cap->nsteps; i++) {
        const struct capacity_step *st = &cap->steps[i];
        if (st->kind == CAPACITY_STEP_SEARCH && st->pass && st->offered_rps == low) {
            cap->rps = st->sustained_rps;
            cap->cpu_cores = st->cpu_cores;
            cap->peak_memory_bytes = st->peak_memory_bytes;
            capacity_set_interval(cap, 1);
            return;
        }
    }
}

/* With a target, the sizing wants CPU measured well below capacity: at the load each pod is
 * planned at (what the HPA's utilization target is computed from) and at 1/CAPACITY_CPU_GROWTH_LOAD
 * of capacity (does CPU grow with load?). The search's own steps start near capacity (from the
 * probe) and rarely go that low. Returns 0 or a load run's error. */
static int cpu_load_steps(struct cap_ctx *x, char *err)
{
    const struct capacity_result *cap = x->cap;
    double rates[2] = {capacity_low(cap) * capacity_planned_fraction(&x->p->planning),
                       cap->rps / CAPACITY_CPU_GROWTH_LOAD};

    for (int i = 0; i < 2; i++) {
        if (!(rates[i] > 0) || sweep__stopped(x->c->o) || x->died ||
            !sweep__cap_time_for_step(x, sweep__cap_load_window_us(x)))
            break;
        struct step_run r;
        int rc = sweep__cap_run_step(x, CAPACITY_STEP_LOAD, rates[i], 0, &r, err);
        if (rc) {
            sweep__cap_step_free(&r);
            return rc;
        }
        sweep__cap_file_step(x, &r, false);
    }
    return 0;
}

/* "No" is a quick answer: after a probe that missed the SLO, one closed-loop step at a single
 * user. When even that misses it (the app's own service time is above the p95 objective, or it
 * fails requests unloaded), no rate can meet the SLO: the search ends at once with capacity 0,
 * limited by what was missed and marked unmeetable, a valid answer (capacity_valid), instead of
 * halving the rate step after step to the floor. The step is the row's representative one, so
 * the row shows the unloaded latency. A probe within the SLO skips this step: one user would
 * be within it too. */
static int unloaded_step(struct cap_ctx *x, bool *unmeetable, char *err)
{
    struct capacity_result *cap = x->cap;
    struct step_run one;

    *unmeetable = false;
    int rc = sweep__cap_run_step(x, CAPACITY_STEP_PROBE, 0, 1, &one, err);
    if (rc) {
        sweep__cap_step_free(&one);
        return rc;
    }
    if (one.outcome == SEARCH_FAIL) {
        *unmeetable = true;
        cap->rps = 0;
        memset(&cap->interval, 0, sizeof(cap->interval));
        cap->limited_by = one.why;
        cap->flags |= CAPACITY_FLAG_UNMEETABLE;
        cap->valid = true;
        if (one.st.cpu_cores >= 0)
            cap->cpu_cores = one.st.cpu_cores;
        if (one.st.peak_memory_bytes >= 0)
            cap->peak_memory_bytes = one.st.peak_memory_bytes;
        log_info("sweep.capacity",
                 "variant=%s rps=0 limited_by=%s p95_ms=%.1f errors=%.4f unmeetable=1",
                 x->c->s->rows[x->c->index].variant.spec, search_limit_name(one.why),
                 (double)one.st.p95_us / 1e3, one.st.error_rate);
    }
    sweep__cap_file_step(x, &one, *unmeetable);
    return 0;
}

/* Where the search of variant v (the row at c->index) starts, learned from the variants whose
 * capacity was searched before it (search_predict): the probe's rate probe_rps (passed: within
 * the SLO) times what the others' probes fell short of their capacities, else their capacity per
 * core. A start only decides how many steps the bisection takes, never what it finds, so rows
 * marked contended or noisy still teach it; rows without an app's figure (generator-limited, out
 * of budget, none passed) do not. 0: nothing to learn from, the probe's rate is the start. */
static double predict_start(const struct sweep__ctx *c, const struct variant *v, double probe_rps,
                            bool passed)
{
    const unsigned unusable = CAPACITY_FLAG_GENERATOR | CAPACITY_FLAG_BUDGET |
                              CAPACITY_FLAG_NONE_PASSED | CAPACITY_FLAG_UNMEETABLE;
    struct search_known known[VARIANT_MAX];
    size_t n = 0;

    for (size_t i = 0; i < c->index && i < c->s->n && n < VARIANT_MAX; i++) {
        const struct sweep_row *r = &c->s->rows[i];
        const struct capacity_result *k = &r->cap;
        if (r->state != SWEEP_ROW_MEASURED || !k->searched || !(k->rps > 0) ||
            (k->flags & unusable))
            continue;
        known[n++] = (struct search_known){variant_cores(&r->variant),
                                           k->nsteps > 0 && k->steps[0].kind == CAPACITY_STEP_PROBE
                                               ? k->steps[0].sustained_rps
                                               : 0,
                                           k->rps};
    }
    return search_predict(known, n, variant_cores(v), probe_rps, passed);
}

/* The probe: closed loop, the profile's users, to calibrate where the search starts (*start,
 * *predicted when learned from the variants before), then the unloaded step when the probe
 * missed the SLO. *done when the variant needs no search (died, stopped, or no rate can meet
 * the SLO). Returns 0 or a load run's error. */
static int probe(struct cap_ctx *x, double *start, bool *predicted, bool *done, char *err)
{
    struct sweep__ctx *c = x->c;
    const struct profile *p = x->p;
    struct sweep_row *row = sweep__row(c);
    unsigned users = p->users > 0 ? p->users : CAPACITY_PROBE_USERS;
    struct step_run r;
    int rc;

    *done = false;
    if (users > x->conn_cap)
        users = x->conn_cap;
    rc = sweep__cap_run_step(x, CAPACITY_STEP_PROBE, 0, users, &r, err);
    if (rc) {
        sweep__cap_step_free(&r);
        return rc;
    }
    *start = r.st.sustained_rps;
    bool probe_missed = r.outcome == SEARCH_FAIL;
    double guess = predict_start(c, &row->variant, *start, !probe_missed);
    if (guess > 0) {
        log_info("sweep.predict", "variant=%s probe_rps=%.1f start_rps=%.1f", row->variant.spec,
                 *start, guess);
        *start = guess;
        *predicted = true;
    }
    sweep__cap_file_step(x, &r, false);
    if (x->died || sweep__stopped(c->o)) {
        *done = true;
        return 0;
    }
    if (probe_missed) {
        bool unmeetable = false;
        rc = unloaded_step(x, &unmeetable, err);
        *done = rc || unmeetable || x->died || sweep__stopped(c->o);
    }
    return rc;
}

/* The repeats, where the search found an app's capacity (or the ceiling): never at a
 * generator's limit or a budget's guess, which are flagged and invalid anyway. Repeats that
 * mostly miss the SLO refute the answer (a lucky step at the knee): the search reopens below it
 * once; still not holding, the figure is marked noisy. Returns 0 or a load run's error. */
static int repeat_until_holds(struct cap_ctx *x, struct search *s, char *err)
{
    const struct profile *p = x->p;
    struct capacity_result *cap = x->cap;
    const char *spec = sweep__row(x->c)->variant.spec;
    int rc;

    for (unsigned refuted = 0; should_repeat(s);) {
        unsigned failed = 0;
        enum capacity_limit why = CAPACITY_LIMIT_SLO_P95;
        rc = measure_repeats(x, s->low, false, &failed, &why, err);
        if (rc)
            return rc;
        if (cap->interval.n >= 2 && stats_rel_half(&cap->interval) > CAPACITY_NOISY_REL) {
            log_info("sweep.noisy", "variant=%s rel_half=%.3f action=re-measure", spec,
                     stats_rel_half(&cap->interval));
            rc = measure_repeats(x, s->low, true, &failed, &why, err);
            if (rc)
                return rc;
            if (cap->interval.n >= 2 && stats_rel_half(&cap->interval) > CAPACITY_NOISY_REL)
                cap->flags |= CAPACITY_FLAG_NOISY;
        }
        /* The repeats hold when most passed one by one and, merged (the row's latency and
         * error columns), they meet the SLO too: a row must never show a capacity its own
         * figures say missed it. */
        enum capacity_limit merged_why = why;
        bool most_passed = failed * 2 <= cap->interval.n;
        bool holds =
            most_passed &&
            (!cap->merged.have || search_meets_slo(cap->merged.p95_us, cap->merged.p99_us,
                                                   cap->merged.error_rate, &p->slo, &merged_why));
        if (!holds && most_passed)
            why = merged_why;
        if (!holds && refuted == 0 && why != CAPACITY_LIMIT_GENERATOR && !x->died &&
            !sweep__stopped(x->c->o) && sweep__cap_time_for_step(x, p->search.window_us)) {
            log_info("sweep.refuted",
                     "variant=%s rps=%.1f failed=%u of=%zu merged_p95_ms=%.1f action=search-below",
                     spec, s->low, failed, cap->interval.n, (double)cap->merged.p95_us / 1e3);
            refuted++;
            search_refute(s, s->low, why, REFUTE_STEPS);
            memset(&cap->interval, 0, sizeof(cap->interval));
            rc = search_steps(x, s, err);
            if (rc)
                return rc;
            if (!s->done)
                search_out_of_time(s);
            continue;
        }
        if (!holds)
            cap->flags |= CAPACITY_FLAG_NOISY; /* the boundary does not hold from run to run */
        break;
    }
    return 0;
}

/* The capacity figure from what the search and the repeats found: its limit and flags, the
 * best step's figure when no repeat ran, the rate per core, and whether it is valid. */
static void conclude(struct cap_ctx *x, const struct search *s)
{
    struct capacity_result *cap = x->cap;
    const struct variant *v = &sweep__row(x->c)->variant;

    cap->limited_by = s->limit;
    cap->flags |= s->flags;
    if (cap->interval.n == 0 && s->low > 0)
        from_best_step(cap, s->low);
    if (cap->interval.n < STATS_MIN_REPEATS)
        cap->flags |= CAPACITY_FLAG_TOO_FEW_REPEATS;
    if (v->cpu_millicores > 0)
        cap->per_core = cap->rps / (variant_cores(v));
    cap->valid = capacity_valid(cap);
}

/* The row's own figures, however the search ended: the representative step, so every
 * fixed-mode column and results.json field keeps its meaning. Logs where the time went. */
static void finish_row(struct cap_ctx *x)
{
    struct sweep_row *row = sweep__row(x->c);

    log_info("sweep.capacity_time",
             "variant=%s ready_s=%.2f window_s=%.2f start_s=%.2f hold_s=%.2f settle_s=%.2f "
             "steps=%zu",
             row->variant.spec, row->ready_s, x->t.window_s, x->t.start_s, x->t.hold_s,
             x->t.settle_s, x->cap->nsteps);
    free(x->merged);
    if (!x->have_keep)
        return;
    row->load = x->keep.res;
    row->have_load = x->keep.have_res;
    row->usage = x->keep.usage;
    row->have_usage = x->keep.have_usage;
    row->state = SWEEP_ROW_MEASURED;
    row->gen_cores = x->keep.st.gen_cores;
    if (row->load.interrupted || sweep__stopped(x->c->o))
        row->flags |= SWEEP_FLAG_INTERRUPTED;
}

int sweep__capacity(struct sweep__ctx *c, const char *url, char *err)
{
    const struct profile *p = c->o->profile;
    struct sweep_row *row = sweep__row(c);
    struct capacity_result *cap = &row->cap;
    struct cap_ctx x = {.c = c,
                        .url = url,
                        .p = p,
                        .cap = cap,
                        .src = c->o->load_source,
                        .usage_window_us = c->s->facts.usage_window_us};
    struct search s;
    bool done = false;
    int rc = 0;

    memset(cap, 0, sizeof(*cap));
    cap->searched = true;
    cap->cpu_cores = -1;
    cap->peak_memory_bytes = -1;
    x.conn_cap = sweep__cap_conn_cap(c->o->load_threads);

    /* A scale-out point starts from its prediction instead of a probe. */
    double start = c->start_rps;
    bool predicted = start > 0;
    if (!(start > 0)) {
        rc = probe(&x, &start, &predicted, &done, err);
        if (rc || done)
            goto out;
    }
    struct search_opts so = {.start_rps = start,
                             .precision = p->search.precision,
                             .max_steps = p->search.max_steps,
                             .max_rps = p->search.max_rps,
                             .predicted = predicted};
    search_init(&s, &so);
    rc = search_steps(&x, &s, err);
    if (rc)
        goto out;
    if (!s.done)
        search_out_of_time(&s); /* stopped (cancelled) or the variant died */
    rc = repeat_until_holds(&x, &s, err);
    if (rc)
        goto out;
    conclude(&x, &s);
    if (cap->valid && (p->target_rps > 0 || p->target_users > 0)) {
        rc = cpu_load_steps(&x, err);
        if (rc)
            goto out;
    }
    log_info("sweep.capacity",
             "variant=%s rps=%.1f low=%.1f high=%.1f repeats=%zu limited_by=%s "
             "valid=%d steps=%zu",
             row->variant.spec, cap->rps, cap->interval.low, cap->interval.high, cap->interval.n,
             search_limit_name(cap->limited_by), cap->valid, cap->nsteps);
out:
    finish_row(&x);
    return rc;
}
