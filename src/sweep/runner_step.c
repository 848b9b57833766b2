/* One step of the sweep runner's capacity mode (runner_step_int.h): a load at one rate (or one
 * number of users), its warm-up and measured window with usage_begin and usage_end around the
 * window, judged against the SLO and filed in the row's capacity_result; the settle after a
 * failed step; the contention rule on a repeat's window. runner_capacity.c decides which steps
 * to run; nothing here calls back into it. */

#include "sweep/runner_step_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/clock.h"
#include "core/log.h"
#include "load/hist.h"

/* The engine's connection cap when descriptors do not bound it. */
#define MAX_CONNS 10000
/* Descriptors kept for everything but connections: the engine's own slack (epoll, stdio) plus
 * the platform's files (cgroup files, logs). */
#define FD_RESERVE 128

bool sweep__transient_contended(const struct sweep *s, const struct variant *v,
                                const struct platform_usage *u)
{
    struct sweep_contention k;
    return sweep_contention_judge((double)s->facts.host_millicores / 1000.0, variant_cores(v), u,
                                  &k);
}

/* Judges a repeat's window by the transient contention rule and logs the figures it read:
 * every repeat at debug, a contended one (or one judged without the wait) at info. */
bool sweep__cap_repeat_contended(struct cap_ctx *x, const struct step_run *r)
{
    const struct variant *v = &sweep__row(x->c)->variant;
    struct sweep_contention k;
    bool hit = sweep_contention_judge((double)x->c->s->facts.host_millicores / 1000.0,
                                      variant_cores(v), &r->usage, &k);
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

/* The generator's connection cap: what its descriptor limit allows, at most MAX_CONNS. Set
 * explicitly so that a generator which runs out of connections is seen doing so (a cap below
 * what the app needs is the generator's limit, not the app's). */
unsigned sweep__cap_conn_cap(unsigned threads)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY)
        return MAX_CONNS;
    rlim_t room = rl.rlim_max > FD_RESERVE + threads ? rl.rlim_max - FD_RESERVE - threads : 1;
    if (room < 1)
        room = 1;
    return room < MAX_CONNS ? (unsigned)room : MAX_CONNS;
}

void sweep__cap_step_free(struct step_run *r)
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
int64_t sweep__cap_load_window_us(const struct cap_ctx *x)
{
    int64_t need = x->usage_window_us;
    return need > x->p->search.window_us ? need : x->p->search.window_us;
}

/* A step's load: its warm-up, then its measured window between usage_begin and usage_end, into
 * out->res and out->usage. *measured is false when the sweep stopped after the warm-up (out is
 * then empty). Returns 0, or a load run's error. */
static int step_window(struct cap_ctx *x, enum capacity_step_kind kind, double rate, unsigned users,
                       struct step_run *out, bool *measured, char *err)
{
    struct sweep__ctx *c = x->c;
    struct platform *pl = c->o->platform;
    const struct profile_search *se = &x->p->search;
    struct sweep_row *row = sweep__row(c);
    struct load_result warm;
    int rc;

    int64_t window_us = kind == CAPACITY_STEP_REPEAT && x->repeat_window_us > 0
                            ? x->repeat_window_us
                        : kind == CAPACITY_STEP_LOAD ? sweep__cap_load_window_us(x)
                                                     : se->window_us;

    *measured = false;
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
    *measured = true;
    return 0;
}

/* The step's figures from its load result and usage window into out->st, and the search's
 * verdict on them into out->outcome and out->why. */
static void step_figures(struct cap_ctx *x, enum capacity_step_kind kind, double rate,
                         struct step_run *out)
{
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
        .gen_can_cores = gen_can(x->c->s, r->threads),
        .peak_conns = r->peak_concurrency,
        .conn_cap = rate > 0 ? x->conn_cap : 0,
        .p50_us = st->p50_us,
        .window_s = r->duration_s,
    };
    out->outcome = search_judge(&m, &x->p->slo, &out->why);
}

int sweep__cap_run_step(struct cap_ctx *x, enum capacity_step_kind kind, double rate,
                        unsigned users, struct step_run *out, char *err)
{
    struct sweep__ctx *c = x->c;
    struct sweep_row *row = sweep__row(c);
    struct capacity_step *st = &out->st;
    bool measured;
    int rc;

    memset(out, 0, sizeof(*out));
    c->step++;
    c->step_what = kind == CAPACITY_STEP_PROBE    ? "probe"
                   : kind == CAPACITY_STEP_SEARCH ? "search"
                   : kind == CAPACITY_STEP_LOAD   ? "load"
                                                  : "repeat";
    c->offered_rps = rate;
    rc = step_window(x, kind, rate, users, out, &measured, err);
    if (rc || !measured)
        return rc;
    step_figures(x, kind, rate, out);
    if (out->outcome == SEARCH_GEN_LIMITED && c->o->load_source_more &&
        x->src != c->o->load_source_more) {
        /* The generator, not the app, set the limit: the step is measured again from the wider
         * source (several generator pods), which the rest of this variant keeps using. */
        log_info("sweep.generators", "variant=%s step=%u generators=%u", row->variant.spec, c->step,
                 c->o->load_source_more->ops->generators(c->o->load_source_more->self));
        x->src = c->o->load_source_more;
        load_result_free(&out->res);
        c->step--;
        return sweep__cap_run_step(x, kind, rate, users, out, err);
    }
    st->pass = out->outcome == SEARCH_PASS;
    st->gen_limited = out->outcome == SEARCH_GEN_LIMITED;
    if (st->pass && rate > 0)
        x->last_pass_rate = rate; /* what a settle after a failed step holds a share of */
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
                               : search_limit_name(out->why));
    return 0;
}

/* Files the step in the result, and keeps it as the representative one when it is closer to
 * capacity than the one kept (a repeat always is, being the latest at capacity). */
void sweep__cap_file_step(struct cap_ctx *x, struct step_run *r, bool representative)
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
        sweep__cap_step_free(&x->keep);
        x->keep = *r;
        x->have_keep = true;
        r->have_res = false; /* moved */
    }
    sweep__cap_step_free(r);
}

/* Whether a settle window shows the app serving: answers, none failed, and the p95 (and the p99
 * when the SLO has one) within the SLO. */
static bool settle_served(const struct cap_ctx *x, const struct load_result *r)
{
    const struct load_stats *t = &r->total;
    const struct profile_slo *slo = &x->p->slo;

    return t->responses > 0 && load_stats_error_rate(t) <= slo->errors &&
           hist_percentile(&t->latency, 95) <= (uint64_t)slo->p95_us &&
           (slo->p99_us <= 0 || hist_percentile(&t->latency, 99) <= (uint64_t)slo->p99_us);
}

/* After a failed step the app may still be working off a backlog, or stay slow a while after
 * the overload (a collector's storm, a thrashed cache): one user answered within the SLO does
 * not show that it serves load again. So the settle alternates a rest at one user per replica
 * with a burst at a share of the last rate that passed (capacity.h), until a burst meets the
 * SLO, for at most search.settle (the load's time and the wall time both count: a generator that
 * starts slowly cannot stretch it). Bursts, not a steady hold: a hold near the capacity against
 * an app that is still slow is an overload of its own, and would keep it from recovering. Before
 * any rate has passed, one user per replica alone (the users are split over a scale-out's
 * addresses, and a share without a user is an error). The next step is measured either way; the
 * recovery is recorded. */
void sweep__cap_settle(struct cap_ctx *x)
{
    double bound = (double)x->p->search.settle_us / 1e6, t0 = clock_mono_s(), held = 0;
    double rate = x->last_pass_rate * CAPACITY_SETTLE_SHARE;
    unsigned users = x->c->nurls > 1 ? (unsigned)x->c->nurls : 1;
    struct capacity_recovery *rec = &x->cap->recovery;
    const char *spec = sweep__row(x->c)->variant.spec;
    char err[ERR_LEN];
    bool served = false;

    if (bound <= 0)
        return;
    x->t.settling = true;
    rec->bound_s = bound;
    rec->at_rate |= rate > 0;
    /* The first burst comes at once: an app that serves again costs one short load run. */
    for (bool first = true; held < bound && clock_mono_s() < t0 + bound && !sweep__stopped(x->c->o);
         first = false) {
        struct load_result r;
        int rc = 0;
        if (rate > 0 && !first) { /* the rest: its answers are not judged */
            rc = load_once(x, 0, users, (int64_t)(CAPACITY_SETTLE_REST_S * 1e6), &r, err);
            if (rc == 0)
                load_result_free(&r);
            held += CAPACITY_SETTLE_REST_S;
        }
        if (rc == 0)
            rc = load_once(x, rate, users, (int64_t)(CAPACITY_SETTLE_WINDOW_S * 1e6), &r, err);
        if (rc != 0) {
            log_warn("sweep.settle", "variant=%s error=\"%s\"", spec, err);
            break;
        }
        served = settle_served(x, &r);
        load_result_free(&r);
        if (served)
            break;
        held += CAPACITY_SETTLE_WINDOW_S;
    }
    x->t.settling = false;
    x->t.settle_s += clock_mono_s() - t0;
    if (sweep__stopped(x->c->o))
        return;
    rec->settles++;
    if (!served)
        rec->ran_out++;
    else if (held > rec->longest_s)
        rec->longest_s = held;
    if (served)
        log_info("sweep.recovery", "variant=%s rate=%.1f users=%u recovered_s=%.1f", spec, rate,
                 users, held);
    else
        log_warn("sweep.recovery",
                 "variant=%s rate=%.1f users=%u recovered=no held_s=%.1f bound_s=%.1f "
                 "note=\"search.settle ran out: the next step measures an app that may not "
                 "have recovered\"",
                 spec, rate, users, held, bound);
}

bool sweep__cap_time_for_step(const struct cap_ctx *x, int64_t window_us)
{
    const struct profile_search *se = &x->p->search;
    double need = (double)(se->warmup_us + window_us) / 1e6;
    return x->c->variant_deadline <= 0 || clock_mono_s() + need <= x->c->variant_deadline;
}
