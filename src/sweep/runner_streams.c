/* Stream-capacity mode of the sweep runner, for a profile with streams: one stream session per
 * variant (src/load/stream_session.h). First a window with no stream open (the variant's memory
 * at zero), then the steps the search asks for (src/sweep/search.h, on the stream count), each
 * growing or shrinking the open streams within the one session, holding them through a
 * warm-up, then measuring a window between usage_begin and usage_end. The memory per stream is
 * the slope of the line through the memory at each new highest count of open streams. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "profile/profile_streams.h"
#include "load/stream_session.h"
#include "sweep/runner_int.h"
#include "sweep/stream_search.h"

/* The first step opens streams.count / START_SHARE streams (at least 1); streams.count is the
 * most the search opens. */
#define START_SHARE 16
/* The drain after a window waits at most the profile's timeout, and never longer than this. */
#define DRAIN_MAX_US (10LL * 1000000)
/* The session's producers are scheduled for the variant's time plus this much. */
#define SESSION_SLACK_US (60LL * 1000000)
/* After a failed step the app may still be fanning out its backlog, and the next step would
 * measure the backlog, not the app: the streams go back to the highest count that passed and
 * are held in short windows until one meets the SLO, for at most search.settle. */
#define SETTLE_WINDOW_US (500LL * 1000)

_Static_assert(1 + PROFILE_MAX_SEARCH_STEPS <= STREAM_CAP_MAX_STEPS,
               "a variant's steps must fit in stream_capacity.steps");

struct scap_ctx {
    struct sweep__ctx *c;
    const struct profile *p;
    const struct profile_streams *ps;
    struct stream_capacity *cap;
    stream_session_t *ss;
    unsigned asked;      /* streams asked for now */
    uint64_t high_water; /* the most streams open at any step so far */
    bool died;
    /* The representative step: the last passing one at capacity, else the last one. */
    struct stream_window keep;
    struct platform_usage keep_usage;
    bool have_keep, have_keep_usage, keep_pass;
};

static int64_t drain_us(const struct profile *p)
{
    return p->timeout_us > 0 && p->timeout_us < DRAIN_MAX_US ? p->timeout_us : DRAIN_MAX_US;
}

/* The profile's pace: streams.count streams over streams.ramp. */
static int64_t ramp_us(const struct scap_ctx *x, unsigned from, unsigned to)
{
    unsigned d = to > from ? to - from : 0;
    return x->ps->count ? x->ps->ramp_us * (int64_t)d / (int64_t)x->ps->count : 0;
}

static bool time_for(const struct scap_ctx *x, unsigned n)
{
    const struct profile_search *se = &x->p->search;
    double need =
        (double)(ramp_us(x, x->asked, n) + se->warmup_us + se->window_us + drain_us(x->p)) / 1e6;
    return x->c->variant_deadline <= 0 || clock_mono_s() + need <= x->c->variant_deadline;
}

static void fill_step(struct stream_cap_step *st, unsigned n, const struct stream_window *w,
                      const struct platform_usage *u, bool have_u)
{
    const struct stream_stats *s = &w->r.s;
    memset(st, 0, sizeof(*st));
    st->streams = n;
    st->open = w->open;
    st->opened = s->opened;
    st->failed = s->failed;
    st->dropped = s->dropped;
    st->frames = s->frames;
    if (w->r.fanout_all && w->r.matched) {
        st->missing = s->missing;
        st->expected = w->r.commands * s->whole_window;
    }
    st->delivery_samples = s->delivery.count;
    st->delivery_p50_us = hist_percentile(&s->delivery, 50);
    st->delivery_p95_us = hist_percentile(&s->delivery, 95);
    st->delivery_p99_us = hist_percentile(&s->delivery, 99);
    st->stream_cores = w->stream_cores;
    st->cpu_cores = -1;
    st->memory_bytes = -1;
    if (have_u) {
        if (u->cpu_s >= 0 && u->window_s > 0)
            st->cpu_cores = u->cpu_s / u->window_s;
        st->memory_bytes = u->memory_bytes >= 0 ? u->memory_bytes : u->peak_memory_bytes;
    }
}

/* A judged step of n streams: a memory point when it holds more streams than any before (or is
 * the zero-stream window), and the representative window when it passed or none passed yet. */
static void keep_step(struct scap_ctx *x, unsigned n, struct stream_cap_step *st,
                      const struct stream_window *w, const struct platform_usage *u, bool have_u)
{
    if (st->open > x->high_water || n == 0) {
        st->memory_point = !x->died;
        if (st->open > x->high_water)
            x->high_water = st->open;
    }
    /* Passing steps only grow until the bracket closes from above, so the last pass is the
     * one at capacity. */
    if (st->pass || !x->keep_pass) {
        x->keep_pass = st->pass;
        x->keep = *w;
        x->keep_usage = *u;
        x->have_keep = true;
        x->have_keep_usage = have_u;
    }
}

/* One step: n streams open (a ramp from the count open now), the warm-up, the measured
 * window with the variant's usage around it, judged against the SLO. */
static int run_step(struct scap_ctx *x, unsigned n, struct stream_cap_step *st, char *err)
{
    struct sweep__ctx *c = x->c;
    struct platform *pl = c->o->platform;
    const struct profile_search *se = &x->p->search;
    const char *spec = c->s->rows[c->index].variant.spec;
    struct stream_window w;
    struct platform_usage u;
    bool have_u = false;
    int rc;

    c->step++;
    c->step_what = n ? "streams" : "zero";
    c->offered_rps = 0;
    c->stream_step = true;
    c->step_streams = n;
    sweep__progress(c, SWEEP_PHASE_WARMUP, NULL);
    rc = stream_session_resize(x->ss, n, ramp_us(x, x->asked, n), err);
    if (rc)
        return rc;
    x->asked = n;
    for (double until = clock_mono_s() + (double)se->warmup_us / 1e6;
         clock_mono_s() < until && !sweep__stopped(c->o);)
        clock_sleep_us(50 * 1000);
    if (sweep__stopped(c->o))
        return 0;
    /* The live feed shows the streams this step holds. */
    struct load_progress lp = {.phase = LOAD_PHASE_MEASURE,
                               .phase_s = (double)se->window_us / 1e6,
                               .streams_open = stream_session_open(x->ss)};
    sweep__progress(c, SWEEP_PHASE_MEASURE, &lp);
    enum search_outcome oc = SEARCH_PASS;
    c->load_s += (double)se->warmup_us / 1e6;
    /* A window that misses the delivery objective (or loses frames) is measured once more
     * before it is believed: on a shared host one scheduling hiccup in a short window can
     * push a p95 over, and a count the variant holds would be judged beyond its capacity. */
    for (unsigned attempt = 0; attempt < 2; attempt++) {
        if (pl->ops->usage_begin(pl->self, err) != 0)
            log_warn("sweep.usage", "variant=%s phase=begin error=\"%s\"", spec, err);
        rc = stream_session_window(x->ss, 0, se->window_us, drain_us(x->p), &w, err);
        if (rc == -ECANCELED)
            return 0;
        if (rc)
            return rc;
        memset(&u, 0, sizeof(u));
        have_u = pl->ops->usage_end(pl->self, &u, err) == 0;
        if (!have_u)
            log_warn("sweep.usage", "variant=%s phase=end error=\"%s\"", spec, err);
        c->load_s += (double)se->window_us / 1e6;
        fill_step(st, n, &w, &u, have_u);
        oc = stream_search_judge(st, &x->p->slo, &st->why);
        if (have_u && (u.oom_killed || u.died)) {
            oc = SEARCH_FAIL;
            st->why = u.oom_killed ? STREAM_LIMIT_MEMORY : STREAM_LIMIT_DIED;
            x->died = true;
        }
        if (oc != SEARCH_FAIL || x->died || sweep__stopped(c->o) ||
            (st->why != STREAM_LIMIT_DELIVERY_P95 && st->why != STREAM_LIMIT_MISSING))
            break;
        log_info("sweep.stream_confirm", "variant=%s streams=%u missed=%s", spec, n,
                 stream_limit_name(st->why));
    }
    st->pass = oc == SEARCH_PASS;
    keep_step(x, n, st, &w, &u, have_u);
    log_info("sweep.stream_step",
             "variant=%s step=%u streams=%u open=%llu delivery_p95_ms=%.1f dropped=%llu "
             "missing=%llu memory=%lld outcome=%s",
             spec, c->step, n, (unsigned long long)st->open, (double)st->delivery_p95_us / 1e3,
             (unsigned long long)st->dropped, (unsigned long long)st->missing,
             (long long)st->memory_bytes,
             st->pass                   ? "pass"
             : oc == SEARCH_GEN_LIMITED ? "generator"
                                        : stream_limit_name(st->why));
    return 0;
}

static void settle(struct scap_ctx *x, unsigned low)
{
    double bound = (double)x->p->search.settle_us / 1e6, until = clock_mono_s() + bound;
    char err[ERR_LEN];

    if (bound <= 0 || stream_session_resize(x->ss, low, 0, err) != 0)
        return;
    x->asked = low;
    while (clock_mono_s() < until && !sweep__stopped(x->c->o)) {
        struct stream_window w;
        struct stream_cap_step st;
        if (stream_session_window(x->ss, 0, SETTLE_WINDOW_US, drain_us(x->p), &w, err) != 0)
            return;
        fill_step(&st, low, &w, NULL, false);
        if (stream_search_judge(&st, &x->p->slo, NULL) == SEARCH_PASS)
            return;
    }
    log_info("sweep.stream_settle", "variant=%s streams=%u result=\"still behind after %.0f s\"",
             x->c->s->rows[x->c->index].variant.spec, low, bound);
}

static struct stream_cap_step *next_step(struct stream_capacity *cap)
{
    return cap->nsteps < STREAM_CAP_MAX_STEPS ? &cap->steps[cap->nsteps] : NULL;
}

/* The search proper. Returns 0 or a session's error. */
static int search_streams(struct scap_ctx *x, struct search *s, char *err)
{
    double rate;

    while (!sweep__stopped(x->c->o) && !x->died && search_next(s, &rate)) {
        long long r = llround(rate);
        unsigned n = r < 1 ? 1 : r > (long long)x->ps->count ? x->ps->count : (unsigned)r;
        /* Bisection cannot split a bracket one stream wide: the capacity is known. */
        if (s->low > 0 && s->high > 0 && (n <= (unsigned)s->low || n >= (unsigned)s->high)) {
            search_out_of_time(s);
            break;
        }
        struct stream_cap_step *st = next_step(x->cap);
        if (!st || !time_for(x, n)) {
            search_out_of_time(s);
            break;
        }
        int rc = run_step(x, n, st, err);
        if (rc)
            return rc;
        if (sweep__stopped(x->c->o))
            break;
        x->cap->nsteps++;
        enum search_outcome oc =
            st->pass ? SEARCH_PASS
                     : (st->why == STREAM_LIMIT_GENERATOR ? SEARCH_GEN_LIMITED : SEARCH_FAIL);
        search_record(s, (double)n, oc, stream_search_as_capacity(st->why));
        if (!st->pass && !x->died && !sweep__stopped(x->c->o))
            settle(x, s->low > 0 ? (unsigned)s->low : 0);
    }
    if (!s->done)
        search_out_of_time(s);
    return 0;
}

/* The row's own figures: the representative window as a load result of its own (no request
 * figures: the producers' requests run for the whole session), so the table keeps its columns. */
static int keep_row(struct scap_ctx *x, char *err)
{
    struct sweep_row *row = &x->c->s->rows[x->c->index];
    struct profile none = *x->p;
    struct load_result r;

    none.streams = NULL;
    none.nrequests = 0;
    none.nstages = 0;
    if (load_result_init(&r, &none) != 0)
        return err_set(err, -ENOMEM, "out of memory");
    r.streams = malloc(sizeof(*r.streams));
    if (!r.streams) {
        load_result_free(&r);
        return err_set(err, -ENOMEM, "out of memory");
    }
    *r.streams = x->keep.r;
    r.duration_s = x->keep.window_s;
    r.tool_cpu_s = x->keep.r.tool_cpu_s;
    r.verdict = stream_verdict(r.streams, &x->p->thresholds);
    row->load = r;
    row->have_load = true;
    row->usage = x->keep_usage;
    row->have_usage = x->have_keep_usage;
    row->state = SWEEP_ROW_MEASURED;
    row->gen_cores = r.duration_s > 0 ? r.tool_cpu_s / r.duration_s : -1;
    if (sweep__stopped(x->c->o))
        row->flags |= SWEEP_FLAG_INTERRUPTED;
    return 0;
}

int sweep__streams(struct sweep__ctx *c, const char *url, char *err)
{
    const struct profile *p = c->o->profile;
    struct sweep_row *row = &c->s->rows[c->index];
    struct stream_capacity *cap = &row->scap;
    struct scap_ctx x = {.c = c, .p = p, .ps = p->streams, .cap = cap};
    struct search s;
    int rc;

    memset(cap, 0, sizeof(*cap));
    cap->searched = true;
    double left = c->variant_deadline > 0 ? c->variant_deadline - clock_mono_s()
                                          : (double)p->search.budget_us / 1e6;
    struct stream_session_opts so = {
        .url = url,
        .profile = p,
        .max_streams = x.ps->count,
        .length_us = (int64_t)(left * 1e6) + SESSION_SLACK_US,
        .threads = c->o->load_threads,
        .stop = c->o->stop,
    };
    if ((rc = stream_session_start(&so, &x.ss, err)))
        goto out;

    /* The variant's memory with no stream open: the line's first point. */
    rc = run_step(&x, 0, &cap->steps[0], err);
    if (rc || sweep__stopped(c->o))
        goto out;
    cap->nsteps = 1;
    if (!x.died) {
        unsigned start = x.ps->count / START_SHARE;
        struct search_opts sopts = {.start_rps = start ? start : 1,
                                    .precision = p->search.precision,
                                    .max_steps = p->search.max_steps,
                                    .max_rps = x.ps->count};
        search_init(&s, &sopts);
        if ((rc = search_streams(&x, &s, err)))
            goto out;
    } else {
        search_init(&s, &(struct search_opts){.max_steps = 0});
        search_out_of_time(&s);
    }
    stream_capacity_finish(cap, &s);
    if (x.died && cap->limited_by != STREAM_LIMIT_MEMORY)
        cap->limited_by = cap->steps[cap->nsteps - 1].why;
    log_info("sweep.stream_capacity",
             "variant=%s streams=%u memory_per_stream=%lld base=%lld points=%u limited_by=%s "
             "valid=%d steps=%zu",
             row->variant.spec, cap->streams, (long long)cap->memory_per_stream_bytes,
             (long long)cap->base_memory_bytes, cap->memory_points,
             stream_limit_name(cap->limited_by), cap->valid, cap->nsteps);
out:
    stream_session_free(x.ss);
    if (x.have_keep && !rc)
        rc = keep_row(&x, err);
    return rc;
}
