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
#include "sweep/search.h"

_Static_assert(2 * PROFILE_MAX_REPEATS <= CAPACITY_MAX_REPEATS,
               "the repeats and a re-measure must fit in repeat_rps");

/* The engine's connection cap when descriptors do not bound it. */
#define MAX_CONNS 10000
/* Descriptors kept for everything but connections: the engine's own slack (epoll, stdio) plus
 * the platform's files (cgroup files, logs). */
#define FD_RESERVE 128
/* After a failed step the app may still be working off its backlog; one user (one per replica
 * in a scale-out) sends requests for SETTLE_WINDOW_S, again until they answer within the p95
 * objective, for at most SETTLE_MAX_S, so the next step starts from an app at rest. */
#define SETTLE_WINDOW_S 0.5
#define SETTLE_MAX_S    10.0
/* Search steps granted below a capacity whose repeats did not hold. */
#define REFUTE_STEPS 2

_Static_assert(1 + PROFILE_MAX_SEARCH_STEPS + REFUTE_STEPS + 4 * PROFILE_MAX_REPEATS <=
                   CAPACITY_MAX_STEPS,
               "a variant's steps must fit in capacity_result.steps");

/* One measured step and what it leaves behind. */
struct step_run {
    struct capacity_step st;
    enum search_outcome outcome;
    enum capacity_limit why; /* the objective a failed step missed */
    struct load_result res;  /* owned when have_res */
    bool have_res;
    struct platform_usage usage;
    bool have_usage;
};

struct cap_ctx {
    struct sweep__ctx *c;
    const char *url;
    const struct profile *p;
    unsigned conn_cap;
    struct capacity_result *cap;
    struct step_run keep; /* the representative step so far */
    bool have_keep;
    bool died; /* the variant died or was OOM-killed in a step: measure no more */
    /* Where the load comes from: the sweep's source, until a step is generator-limited and a
     * wider one (sweep_opts.load_source_more) takes over for the rest of the variant. */
    const struct load_source *src;
    int64_t repeat_window_us; /* the next repeat's measured window; 0: search.window */
    /* How long the platform needs a window to be to report CPU: the platform's first guess
     * (facts), then what each step's usage said (a cluster's metrics window as it really is). */
    int64_t usage_window_us;
    /* Where the variant's minutes went, logged at its end (sweep.capacity_time): the load runs'
     * planned warm-ups and windows (window_s), what they took beyond that (starting the
     * generator, its Jobs in a cluster, and merging: start_s), the platform's usage calls
     * (holding a step until its metrics window is covered: hold_s) and the settles after failed
     * steps (settle_s). */
    struct {
        double window_s, start_s, hold_s, settle_s;
        bool settling; /* in settle(): its load runs count as settle_s */
    } t;
    /* The CPU the last repeats measured and the rate they ran at: a re-measure at that rate (a
     * noisy interval) keeps it instead of holding another repeat for a metrics window. */
    struct {
        double rate, sum;
        size_t n;
    } cpu;
    struct load_stats *merged; /* the repeats' histograms added, owned (measure_repeats) */
};

bool sweep__transient_contended(const struct sweep *s, const struct variant *v,
                                const struct platform_usage *u)
{
    struct sweep_contention k;
    return sweep_contention_judge((double)s->facts.host_millicores / 1000.0,
                                  (double)v->cpu_millicores / 1000.0, u, &k);
}

/* Judges a repeat's window by the transient contention rule and logs the figures it read:
 * every repeat at debug, a contended one (or one judged without the wait) at info. */
static bool repeat_contended(struct cap_ctx *x, const struct step_run *r)
{
    const struct variant *v = &sweep__row(x->c)->variant;
    struct sweep_contention k;
    bool hit = sweep_contention_judge((double)x->c->s->facts.host_millicores / 1000.0,
                                      (double)v->cpu_millicores / 1000.0, &r->usage, &k);
    enum log_level lvl = hit || !k.by_wait ? LOG_INFO : LOG_DEBUG;
    if (log_enabled(lvl))
        log_write(lvl, "sweep.contention",
                  "variant=%s step=%u rule=%s contended=%s used=%.2f got=%.2f "
                  "host_other=%.2f wait_s=%.3f throttled_s=%.3f starved=%.3f gen_starved=%.3f "
                  "busy_host=%s%s",
                  v->spec, x->c->step, k.by_wait ? "wait" : "host-cpu", hit ? "yes" : "no", k.used,
                  k.got, k.host_other, k.wait_s, k.throttled_s, k.starved, k.gen_starved,
                  k.busy_host ? "yes" : "no",
                  k.by_wait ? "" : " note=\"no runnable wait figures: judged by the host's CPU\"");
    return hit;
}

double sweep__capacity_estimate_s(const struct profile *p)
{
    const struct profile_search *s = &p->search;
    double step = (double)(s->warmup_us + s->window_us) / 1e6;
    /* The probe, a typical search (the budget), the repeats, and start-up. */
    return step * (1 + s->max_steps + s->repeats) + 3;
}

/* The generator's connection cap: what its descriptor limit allows, at most MAX_CONNS. Set
 * explicitly so that a generator which runs out of connections is seen doing so (a cap below
 * what the app needs is the generator's limit, not the app's). */
static unsigned conn_cap(unsigned threads)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY)
        return MAX_CONNS;
    rlim_t room = rl.rlim_max > FD_RESERVE + threads ? rl.rlim_max - FD_RESERVE - threads : 1;
    if (room < 1)
        room = 1;
    return room < MAX_CONNS ? (unsigned)room : MAX_CONNS;
}

static void step_free(struct step_run *r)
{
    if (r->have_res)
        load_result_free(&r->res);
    r->have_res = false;
}

/* The cores the generator's threads could use: its threads, capped by the host it shares. */
static double gen_can(const struct sweep *s, unsigned threads)
{
    double can = threads > 0 ? (double)threads : 1.0;
    double host = (double)s->facts.host_millicores / 1000.0;
    if (s->facts.load_shares_host && host > 0 && host < can)
        can = host;
    return can;
}

/* One load run of the profile shaped for a step: open loop at rate, or closed loop with users
 * when rate is 0, flat, for length_us. */
static int load_once(struct cap_ctx *x, double rate, unsigned users, int64_t length_us,
                     struct load_result *res, char *err)
{
    const struct sweep_opts *o = x->c->o;
    struct profile prof = *x->p; /* borrows every pointer of the user's profile */
    struct load_opts lo;

    prof.stages = NULL;
    prof.nstages = 0;
    prof.warmup_us = 0;
    prof.duration_us = length_us;
    prof.rate = rate > 0 ? rate : 0;
    prof.users = rate > 0 ? 0 : users;
    memset(&lo, 0, sizeof(lo));
    lo.url = x->url;
    lo.urls = x->c->urls;
    lo.nurls = x->c->nurls;
    lo.profile = &prof;
    lo.threads = o->load_threads;
    lo.max_connections = x->conn_cap;
    lo.progress = sweep__on_load_progress;
    lo.progress_ud = x->c;
    lo.stop = o->stop;
    double t0 = clock_mono_s();
    int rc = load_source_run(x->src, &lo, res, err);
    if (!x->t.settling) {
        x->t.window_s += (double)length_us / 1e6;
        x->t.start_s += clock_mono_s() - t0 - (double)length_us / 1e6;
    }
    return rc;
}

/* A load step is there for its CPU: it is held at least as long as the platform needs to report
 * CPU at all (a cluster's metrics window). */
static int64_t load_window_us(const struct cap_ctx *x)
{
    int64_t need = x->usage_window_us;
    return need > x->p->search.window_us ? need : x->p->search.window_us;
}

/* Runs one step: its warm-up, then its measured window between usage_begin and usage_end, and
 * judges it against the SLO. */
static int run_step(struct cap_ctx *x, enum capacity_step_kind kind, double rate, unsigned users,
                    struct step_run *out, char *err)
{
    struct sweep__ctx *c = x->c;
    struct platform *pl = c->o->platform;
    const struct profile_search *se = &x->p->search;
    struct sweep_row *row = sweep__row(c);
    struct load_result warm;
    int rc;

    int64_t window_us = kind == CAPACITY_STEP_REPEAT && x->repeat_window_us > 0
                            ? x->repeat_window_us
                        : kind == CAPACITY_STEP_LOAD ? load_window_us(x)
                                                     : se->window_us;

    memset(out, 0, sizeof(*out));
    c->step++;
    c->step_what = kind == CAPACITY_STEP_PROBE    ? "probe"
                   : kind == CAPACITY_STEP_SEARCH ? "search"
                   : kind == CAPACITY_STEP_LOAD   ? "load"
                                                  : "repeat";
    c->offered_rps = rate;
    if (se->warmup_us > 0) {
        sweep__progress(c, SWEEP_PHASE_WARMUP, NULL);
        rc = load_once(x, rate, users, se->warmup_us, &warm, err);
        if (rc)
            return rc;
        load_result_free(&warm);
        c->load_s += (double)se->warmup_us / 1e6;
        if (sweep__stopped(c->o))
            return 0;
    }
    sweep__progress(c, SWEEP_PHASE_MEASURE, NULL);
    double t_hold = clock_mono_s();
    if (pl->ops->usage_begin(pl->self, err) != 0)
        log_warn("sweep.usage", "variant=%s phase=begin error=\"%s\"", row->variant.spec, err);
    x->t.hold_s += clock_mono_s() - t_hold;
    rc = load_once(x, rate, users, window_us, &out->res, err);
    if (rc)
        return rc;
    out->have_res = true;
    c->load_s += (double)window_us / 1e6;
    t_hold = clock_mono_s();
    if (pl->ops->usage_end(pl->self, &out->usage, err) == 0) {
        out->have_usage = true;
        if (out->usage.usage_window_us > 0)
            x->usage_window_us = out->usage.usage_window_us;
    } else
        log_warn("sweep.usage", "variant=%s phase=end error=\"%s\"", row->variant.spec, err);
    x->t.hold_s += clock_mono_s() - t_hold;

    const struct load_result *r = &out->res;
    const struct load_stats *t = &r->total;
    struct capacity_step *st = &out->st;
    st->kind = kind;
    st->achieved_rps = load_stats_throughput(t, r->duration_s);
    st->offered_rps = rate > 0 ? rate : st->achieved_rps;
    st->p50_us = hist_percentile(&t->latency, 50);
    st->p95_us = hist_percentile(&t->latency, 95);
    st->p99_us = hist_percentile(&t->latency, 99);
    st->error_rate = load_stats_error_rate(t);
    st->cpu_cores = -1;
    st->usage_window_s = -1;
    st->peak_memory_bytes = -1;
    st->gen_cores = r->duration_s > 0 ? r->tool_cpu_s / r->duration_s : -1;
    st->sustained_rps = search_sustained_rps(st->achieved_rps, rate > 0 ? r->achieved_rate_rps : 0,
                                             st->p50_us, r->duration_s);
    if (out->have_usage) {
        const struct platform_usage *u = &out->usage;
        if (u->window_s > 0) {
            st->usage_window_s = u->window_s;
            if (u->cpu_s >= 0)
                st->cpu_cores = u->cpu_s / u->window_s;
        }
        st->peak_memory_bytes = u->peak_memory_bytes;
        st->throttling.known = u->throttle_known;
        st->throttling.periods = u->cpu_periods;
        st->throttling.throttled_periods = u->cpu_throttled_periods;
        st->throttling.throttled_s = u->cpu_throttled_s;
    }
    struct search_measure m = {
        .offered_rps = rate,
        .sent_rps = rate > 0 ? r->achieved_rate_rps : 0,
        .done_rps = st->achieved_rps,
        .p95_us = st->p95_us,
        .p99_us = st->p99_us,
        .error_rate = st->error_rate,
        .nofile_errors = t->errors[LOAD_ERR_NOFILE],
        .gen_cores = st->gen_cores,
        .gen_can_cores = gen_can(c->s, r->threads),
        .peak_conns = r->peak_concurrency,
        .conn_cap = rate > 0 ? x->conn_cap : 0,
        .p50_us = st->p50_us,
        .window_s = r->duration_s,
    };
    enum capacity_limit why;
    enum search_outcome oc = search_judge(&m, &x->p->slo, &why);
    out->outcome = oc;
    out->why = why;
    if (oc == SEARCH_GEN_LIMITED && c->o->load_source_more && x->src != c->o->load_source_more) {
        /* The generator, not the app, set the limit: the step is measured again from the wider
         * source (several generator pods), which the rest of this variant keeps using. */
        log_info("sweep.generators", "variant=%s step=%u generators=%u", row->variant.spec, c->step,
                 c->o->load_source_more->ops->generators(c->o->load_source_more->self));
        x->src = c->o->load_source_more;
        load_result_free(&out->res);
        c->step--;
        return run_step(x, kind, rate, users, out, err);
    }
    st->pass = oc == SEARCH_PASS;
    st->gen_limited = oc == SEARCH_GEN_LIMITED;
    /* The requests a failed step left in flight were late, not on their way: only a step within
     * the SLO is credited with them. */
    if (!st->pass)
        st->sustained_rps = st->achieved_rps;
    log_info("sweep.step",
             "variant=%s step=%u kind=%s offered_rps=%.1f achieved_rps=%.1f p95_ms=%.1f "
             "errors=%.4f outcome=%s",
             row->variant.spec, c->step, c->step_what, st->offered_rps, st->achieved_rps,
             (double)st->p95_us / 1e3, st->error_rate,
             st->pass          ? "pass"
             : st->gen_limited ? "generator"
                               : search_limit_name(why));
    return 0;
}

/* Files the step in the result, and keeps it as the representative one when it is closer to
 * capacity than the one kept (a repeat always is, being the latest at capacity). */
static void file_step(struct cap_ctx *x, struct step_run *r, bool representative)
{
    struct capacity_result *cap = x->cap;

    if (cap->nsteps < CAPACITY_MAX_STEPS) {
        struct sweep_row *row = sweep__row(x->c);
        /* A copy: the representative step's result keeps its own. Out of memory costs the
         * chart this step, never the measurement. */
        if (r->have_res && load_series_copy(&row->step_series[cap->nsteps], &r->res.series))
            log_warn("sweep.series", "variant=%s step=%zu error=\"out of memory\"",
                     row->variant.spec, cap->nsteps + 1);
        cap->steps[cap->nsteps++] = r->st;
    }
    if (r->st.throttling.known) {
        cap->throttling.known = true;
        cap->throttling.periods += r->st.throttling.periods;
        cap->throttling.throttled_periods += r->st.throttling.throttled_periods;
        cap->throttling.throttled_s += r->st.throttling.throttled_s;
    }
    if (r->have_usage && (r->usage.died || r->usage.oom_killed)) {
        /* Kept so the row shows how it died (the caller marks it FAILED). */
        x->died = true;
        representative = true;
    }
    if (representative || !x->have_keep) {
        step_free(&x->keep);
        x->keep = *r;
        x->have_keep = true;
        r->have_res = false; /* moved */
    }
    step_free(r);
}

/* Lets an app that just failed work off its backlog before the next step (see SETTLE_MAX_S). */
static void settle(struct cap_ctx *x)
{
    double t0 = clock_mono_s(), until = t0 + SETTLE_MAX_S;
    char err[ERR_LEN];
    /* One user per replica: the users are split over a scale-out's addresses, and a share
     * without a user is an error (the settle would end at once, backlog or not). */
    unsigned users = x->c->nurls > 1 ? (unsigned)x->c->nurls : 1;

    x->t.settling = true;
    while (clock_mono_s() < until && !sweep__stopped(x->c->o)) {
        struct load_result r;
        if (load_once(x, 0, users, (int64_t)(SETTLE_WINDOW_S * 1e6), &r, err) != 0) {
            log_warn("sweep.settle", "variant=%s error=\"%s\"", sweep__row(x->c)->variant.spec,
                     err);
            break;
        }
        bool calm = r.total.responses > 0 && r.total.failed == 0 &&
                    hist_percentile(&r.total.latency, 95) < (uint64_t)x->p->slo.p95_us;
        load_result_free(&r);
        if (calm)
            break;
    }
    x->t.settling = false;
    x->t.settle_s += clock_mono_s() - t0;
}

static bool time_for_step(const struct cap_ctx *x, int64_t window_us)
{
    const struct profile_search *se = &x->p->search;
    double need = (double)(se->warmup_us + window_us) / 1e6;
    return x->c->variant_deadline <= 0 || clock_mono_s() + need <= x->c->variant_deadline;
}

/* The search proper. Returns 0 or a load run's error. */
static int search_steps(struct cap_ctx *x, struct search *s, char *err)
{
    double rate;

    while (!sweep__stopped(x->c->o) && search_next(s, &rate)) {
        if (!time_for_step(x, x->p->search.window_us)) {
            search_out_of_time(s);
            break;
        }
        struct step_run r;
        int rc = run_step(x, CAPACITY_STEP_SEARCH, rate, 0, &r, err);
        if (rc) {
            step_free(&r);
            return rc;
        }
        if (sweep__stopped(x->c->o)) {
            file_step(x, &r, false);
            break;
        }
        search_record(s, rate, r.outcome, r.why);
        bool best = r.st.pass && rate >= s->low;
        bool failed = !r.st.pass;
        file_step(x, &r, best);
        if (x->died)
            break;
        if (failed && !sweep__stopped(x->c->o))
            settle(x);
    }
    return 0;
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
    /* The repeats as one measurement, for the row's latency columns (capacity_merged). Out of
     * memory costs the row those columns' merge (it keeps the last repeat's), never a repeat. */
    if (!more || !x->merged) {
        free(x->merged);
        x->merged = malloc(sizeof(*x->merged));
        if (x->merged)
            load_stats_init(x->merged);
    }
    struct load_stats *merged = x->merged;

    if (!more) {
        *failed_n = 0;
        memset(&cap->interval, 0, sizeof(cap->interval));
    }
    memset(&cap->merged, 0, sizeof(cap->merged));
    for (unsigned i = 0; i < x->p->search.repeats && n < CAPACITY_MAX_REPEATS; i++) {
        /* Until a repeat gave the CPU at capacity, a repeat is held as long as the platform
         * needs to report CPU at all (a cluster's metrics window): one long repeat, not all. */
        int64_t need = x->usage_window_us;
        x->repeat_window_us = ncpu == 0 && need > x->p->search.window_us ? need : 0;
        if (sweep__stopped(x->c->o) || x->died ||
            !time_for_step(x, x->repeat_window_us ? x->repeat_window_us : x->p->search.window_us))
            break;
        struct step_run r;
        int rc = run_step(x, CAPACITY_STEP_REPEAT, rate, 0, &r, err);
        if (rc) {
            step_free(&r);
            return rc;
        }
        if (r.have_res && r.res.interrupted) {
            file_step(x, &r, false);
            break;
        }
        /* A repeat the busy host starved is the host's figure: measured again, at most
         * SWEEP_CONTENDED_RERUNS times per variant, and kept in the steps but not the repeats. */
        bool starved =
            r.have_usage && !r.usage.died && !r.usage.oom_killed && repeat_contended(x, &r);
        if (starved && x->cap->contended_reruns < SWEEP_CONTENDED_RERUNS) {
            x->cap->contended_reruns++;
            log_info("sweep.rerun", "variant=%s step=%u reason=contended rerun=%u of %d",
                     sweep__row(x->c)->variant.spec, x->c->step, x->cap->contended_reruns,
                     SWEEP_CONTENDED_RERUNS);
            file_step(x, &r, false);
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
        file_step(x, &r, true);
        /* A repeat that missed the SLO left a backlog like any failed step; the next repeat
         * must measure the app, not the backlog. Its figure stays in the interval. */
        if (failed && !x->died && !sweep__stopped(x->c->o))
            settle(x);
    }
    x->cpu.rate = rate;
    x->cpu.sum = cpu;
    x->cpu.n = ncpu;
    if (n > 0) {
        stats_summarize(cap->repeat_rps, n, &cap->interval);
        cap->rps = cap->interval.mean;
        capacity_set_interval(cap, n);
        cap->cpu_cores = ncpu ? cpu / (double)ncpu : -1;
    }
    if (merged && merged->requests > 0) {
        cap->merged.have = true;
        cap->merged.requests = merged->requests;
        cap->merged.p50_us = hist_percentile(&merged->latency, 50);
        cap->merged.p95_us = hist_percentile(&merged->latency, 95);
        cap->merged.p99_us = hist_percentile(&merged->latency, 99);
        cap->merged.error_rate = load_stats_error_rate(merged);
    }
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
            !time_for_step(x, load_window_us(x)))
            break;
        struct step_run r;
        int rc = run_step(x, CAPACITY_STEP_LOAD, rates[i], 0, &r, err);
        if (rc) {
            step_free(&r);
            return rc;
        }
        file_step(x, &r, false);
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
    int rc = run_step(x, CAPACITY_STEP_PROBE, 0, 1, &one, err);
    if (rc) {
        step_free(&one);
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
    file_step(x, &one, *unmeetable);
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
        known[n++] = (struct search_known){(double)r->variant.cpu_millicores / 1000.0,
                                           k->nsteps > 0 && k->steps[0].kind == CAPACITY_STEP_PROBE
                                               ? k->steps[0].sustained_rps
                                               : 0,
                                           k->rps};
    }
    return search_predict(known, n, (double)v->cpu_millicores / 1000.0, probe_rps, passed);
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
    struct step_run probe;
    int rc;

    memset(cap, 0, sizeof(*cap));
    cap->searched = true;
    cap->cpu_cores = -1;
    cap->peak_memory_bytes = -1;
    x.conn_cap = conn_cap(c->o->load_threads);

    /* The probe: closed loop, the profile's users, to calibrate where the search starts. A
     * scale-out point starts from its prediction instead. */
    double start = c->start_rps;
    bool predicted = start > 0;
    if (!(start > 0)) {
        unsigned users = p->users > 0 ? p->users : CAPACITY_PROBE_USERS;
        if (users > x.conn_cap)
            users = x.conn_cap;
        rc = run_step(&x, CAPACITY_STEP_PROBE, 0, users, &probe, err);
        if (rc) {
            step_free(&probe);
            goto out;
        }
        start = probe.st.sustained_rps;
        bool probe_missed = probe.outcome == SEARCH_FAIL;
        double guess = predict_start(c, &row->variant, start, !probe_missed);
        if (guess > 0) {
            log_info("sweep.predict", "variant=%s probe_rps=%.1f start_rps=%.1f", row->variant.spec,
                     start, guess);
            start = guess;
            predicted = true;
        }
        file_step(&x, &probe, false);
        if (x.died || sweep__stopped(c->o))
            goto out;
        if (probe_missed) {
            bool unmeetable = false;
            rc = unloaded_step(&x, &unmeetable, err);
            if (rc || unmeetable || x.died || sweep__stopped(c->o))
                goto out;
        }
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

    /* The repeats, where the search found an app's capacity (or the ceiling): never at a
     * generator's limit or a budget's guess, which are flagged and invalid anyway. Repeats that
     * mostly miss the SLO refute the answer (a lucky step at the knee): the search reopens below
     * it once; still not holding, the figure is marked noisy. */
    for (unsigned refuted = 0; should_repeat(&s);) {
        unsigned failed = 0;
        enum capacity_limit why = CAPACITY_LIMIT_SLO_P95;
        rc = measure_repeats(&x, s.low, false, &failed, &why, err);
        if (rc)
            goto out;
        if (cap->interval.n >= 2 && stats_rel_half(&cap->interval) > CAPACITY_NOISY_REL) {
            log_info("sweep.noisy", "variant=%s rel_half=%.3f action=re-measure", row->variant.spec,
                     stats_rel_half(&cap->interval));
            rc = measure_repeats(&x, s.low, true, &failed, &why, err);
            if (rc)
                goto out;
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
        if (!holds && refuted == 0 && why != CAPACITY_LIMIT_GENERATOR && !x.died &&
            !sweep__stopped(c->o) && time_for_step(&x, p->search.window_us)) {
            log_info("sweep.refuted",
                     "variant=%s rps=%.1f failed=%u of=%zu merged_p95_ms=%.1f action=search-below",
                     row->variant.spec, s.low, failed, cap->interval.n,
                     (double)cap->merged.p95_us / 1e3);
            refuted++;
            search_refute(&s, s.low, why, REFUTE_STEPS);
            memset(&cap->interval, 0, sizeof(cap->interval));
            rc = search_steps(&x, &s, err);
            if (rc)
                goto out;
            if (!s.done)
                search_out_of_time(&s);
            continue;
        }
        if (!holds)
            cap->flags |= CAPACITY_FLAG_NOISY; /* the boundary does not hold from run to run */
        break;
    }
    cap->limited_by = s.limit;
    cap->flags |= s.flags;
    if (cap->interval.n == 0 && s.low > 0)
        from_best_step(cap, s.low);
    if (cap->interval.n < STATS_MIN_REPEATS)
        cap->flags |= CAPACITY_FLAG_TOO_FEW_REPEATS;
    if (row->variant.cpu_millicores > 0)
        cap->per_core = cap->rps / ((double)row->variant.cpu_millicores / 1000.0);
    cap->valid = capacity_valid(cap);
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
    log_info("sweep.capacity_time",
             "variant=%s ready_s=%.2f window_s=%.2f start_s=%.2f hold_s=%.2f settle_s=%.2f "
             "steps=%zu",
             row->variant.spec, row->ready_s, x.t.window_s, x.t.start_s, x.t.hold_s, x.t.settle_s,
             cap->nsteps);
    free(x.merged);
    if (x.have_keep) {
        /* The row's own figures: the representative step, so every fixed-mode column and
         * results.json field keeps its meaning. */
        row->load = x.keep.res;
        row->have_load = x.keep.have_res;
        row->usage = x.keep.usage;
        row->have_usage = x.keep.have_usage;
        row->state = SWEEP_ROW_MEASURED;
        row->gen_cores = x.keep.st.gen_cores;
        if (row->load.interrupted || sweep__stopped(c->o))
            row->flags |= SWEEP_FLAG_INTERRUPTED;
    }
    return rc;
}
