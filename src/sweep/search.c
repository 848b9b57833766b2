#include "sweep/search.h"

#include <math.h>
#include <string.h>

void search_init(struct search *s, const struct search_opts *o)
{
    memset(s, 0, sizeof(*s));
    s->o = *o;
    if (!(s->o.start_rps >= SEARCH_MIN_RPS))
        s->o.start_rps = SEARCH_MIN_RPS;
    if (s->o.max_rps > 0 && s->o.start_rps > s->o.max_rps)
        s->o.start_rps = s->o.max_rps;
    if (!(s->o.precision > 0))
        s->o.precision = 0.05;
    s->max_steps = s->o.max_steps;
    s->grow = s->o.predicted ? fmin(1 + SEARCH_PREDICTED_SPAN * s->o.precision, 2) : 2;
}

double search_predict(const struct search_known *known, size_t n, double cores, double probe_rps,
                      bool probe_passed)
{
    double by_probe = 0, by_core = 0;
    size_t nprobe = 0, ncore = 0;

    for (size_t i = 0; i < n; i++) {
        const struct search_known *k = &known[i];
        if (!(k->rps > 0))
            continue;
        if (k->probe_rps > 0) {
            by_probe += log(k->rps / k->probe_rps);
            nprobe++;
        }
        if (k->cores > 0) {
            by_core += log(k->rps / k->cores);
            ncore++;
        }
    }
    double p = 0, per_core = 0;
    if (cores > 0 && ncore > 0) {
        per_core = cores * exp(by_core / (double)ncore);
        if (probe_rps > 0)
            per_core = fmin(fmax(per_core, probe_rps / SEARCH_PREDICT_MAX_RATIO),
                            probe_rps * SEARCH_PREDICT_MAX_RATIO);
    }
    if (probe_rps > 0 && nprobe > 0) {
        double ratio = exp(by_probe / (double)nprobe);
        ratio = fmin(fmax(ratio, 1 / SEARCH_PREDICT_MAX_RATIO), SEARCH_PREDICT_MAX_RATIO);
        p = probe_rps * ratio;
        /* A probe within the SLO may not have loaded the app at all (a few users' round trips
         * set its rate, not the app): then its ratio says little, and the capacity per core is
         * the better guess when it is the larger. Too high a start costs a few gentle halvings. */
        if (probe_passed)
            p = fmax(p, per_core);
    } else {
        p = per_core;
    }
    if (p > 0 && probe_rps > 0)
        p = probe_passed ? fmax(p, probe_rps) : fmin(p, probe_rps);
    return p;
}

/* The highest recorded pass strictly below rate, 0 when none. */
static double pass_below(const struct search *s, double rate)
{
    double best = 0;
    for (unsigned i = 0; i < s->npasses; i++)
        if (s->passes[i] < rate && s->passes[i] > best)
            best = s->passes[i];
    return best;
}

static bool finish(struct search *s, enum capacity_limit limit, unsigned flags)
{
    s->done = true;
    s->limit = limit;
    s->flags |= flags;
    if (limit == CAPACITY_LIMIT_GENERATOR)
        s->flags |= CAPACITY_FLAG_GENERATOR;
    return false;
}

/* What ends a search that has run out of steps or time: the bracket's upper side when there is
 * one (the capacity is known, if less precisely than asked), else the budget. */
static bool finish_early(struct search *s)
{
    if (s->low <= 0)
        return finish(s, s->high > 0 ? s->high_why : CAPACITY_LIMIT_BUDGET,
                      CAPACITY_FLAG_NONE_PASSED | (s->high > 0 ? 0 : CAPACITY_FLAG_BUDGET));
    if (s->high <= 0)
        return finish(s, CAPACITY_LIMIT_BUDGET, CAPACITY_FLAG_BUDGET);
    return finish(s, s->high_why, 0);
}

bool search_next(struct search *s, double *rate)
{
    if (s->done)
        return false;
    if (s->low > 0 && s->high > 0 && (s->high - s->low) / s->low < s->o.precision)
        return finish(s, s->high_why, 0);
    if (s->high <= 0 && s->o.max_rps > 0 && s->low >= s->o.max_rps)
        return finish(s, CAPACITY_LIMIT_MAX_RPS, 0);
    if (s->steps >= s->max_steps)
        return finish_early(s);

    double r;
    if (s->low <= 0 && s->high <= 0) {
        r = s->o.start_rps;
    } else if (s->high <= 0) {
        r = s->low * s->grow;
        s->widened = true;
        if (s->o.max_rps > 0 && r > s->o.max_rps)
            r = s->o.max_rps;
    } else if (s->low <= 0) {
        r = s->high / s->grow;
        s->widened = true;
        /* Halving below the floor measures nothing: not even the slowest rate passed. */
        if (r < SEARCH_MIN_RPS)
            return finish(s, s->high_why, CAPACITY_FLAG_NONE_PASSED);
    } else {
        r = (s->low + s->high) / 2;
    }
    *rate = r;
    return true;
}

void search_record(struct search *s, double rate, enum search_outcome outcome,
                   enum capacity_limit why)
{
    if (s->done)
        return;
    s->steps++;
    if (s->widened) {
        s->grow = fmin(s->grow * s->grow, 2);
        s->widened = false;
    }
    if (outcome == SEARCH_PASS && s->npasses < SEARCH_MAX_PASSES)
        s->passes[s->npasses++] = rate;
    if (outcome == SEARCH_PASS) {
        /* A pass above a known failure is noise at the knee; the bracket keeps its order, so
         * the lower side may only move up to just below the upper one. */
        if (rate > s->low && (s->high <= 0 || rate < s->high))
            s->low = rate;
        return;
    }
    if (outcome == SEARCH_GEN_LIMITED)
        why = CAPACITY_LIMIT_GENERATOR;
    if (s->high <= 0 || rate < s->high || (rate == s->high && why != CAPACITY_LIMIT_GENERATOR)) {
        s->high = rate;
        s->high_why = why;
    }
    /* A failure at or below the highest pass (noise at the knee): that pass no longer holds;
     * the highest one below the failure does. */
    if (s->low >= s->high)
        s->low = pass_below(s, s->high);
    if (s->high == rate && s->high_why == CAPACITY_LIMIT_GENERATOR && s->low > 0) {
        /* Above the highest pass the generator, not the app, sets the limit: bisecting on
         * would measure the generator. The capacity is "at least low". */
        finish(s, CAPACITY_LIMIT_GENERATOR, 0);
    }
}

void search_refute(struct search *s, double rate, enum capacity_limit why, unsigned extra_steps)
{
    s->done = false;
    s->flags &= ~(CAPACITY_FLAG_BUDGET | CAPACITY_FLAG_NONE_PASSED | CAPACITY_FLAG_GENERATOR);
    s->limit = CAPACITY_LIMIT_NONE;
    if (s->high <= 0 || rate <= s->high) {
        s->high = rate;
        s->high_why = why;
    }
    s->low = pass_below(s, s->high);
    s->max_steps = s->steps + extra_steps;
}

void search_out_of_time(struct search *s)
{
    if (!s->done)
        finish_early(s);
}

bool search_meets_slo(uint64_t p95_us, uint64_t p99_us, double error_rate,
                      const struct profile_slo *slo, enum capacity_limit *why)
{
    enum capacity_limit dummy;
    if (!why)
        why = &dummy;
    if (p95_us >= (uint64_t)slo->p95_us) {
        *why = CAPACITY_LIMIT_SLO_P95;
        return false;
    }
    if (slo->p99_us > 0 && p99_us >= (uint64_t)slo->p99_us) {
        *why = CAPACITY_LIMIT_SLO_P99;
        return false;
    }
    if (error_rate > 0 && error_rate >= slo->errors) {
        *why = CAPACITY_LIMIT_SLO_ERRORS;
        return false;
    }
    return true;
}

enum search_outcome search_judge(const struct search_measure *m, const struct profile_slo *slo,
                                 enum capacity_limit *why)
{
    enum capacity_limit dummy;
    if (!why)
        why = &dummy;
    *why = CAPACITY_LIMIT_GENERATOR;

    if (m->gen_cores >= 0 && m->gen_can_cores > 0 &&
        m->gen_cores >= SWEEP_GEN_SATURATED_SHARE * m->gen_can_cores)
        return SEARCH_GEN_LIMITED;
    if (m->nofile_errors > 0)
        return SEARCH_GEN_LIMITED;
    /* Little's law: an app answering at the p95 objective holds offered x p95 requests at
     * once. A generator whose cap is below that and was reached could not tell a good app from
     * a slow one; with a cap above it, reaching the cap means the app was slow. */
    bool cap_hit = m->conn_cap > 0 && m->peak_conns >= m->conn_cap;
    double needed = m->offered_rps * (double)slo->p95_us / 1e6;
    if (cap_hit && (double)m->conn_cap < needed)
        return SEARCH_GEN_LIMITED;
    if (!cap_hit && m->offered_rps > 0 && m->sent_rps < SEARCH_KEPT_UP * m->offered_rps)
        return SEARCH_GEN_LIMITED;

    if (!search_meets_slo(m->p95_us, m->p99_us, m->error_rate, slo, why))
        return SEARCH_FAIL;
    /* Requests unanswered at the window's end beyond the ones a median latency keeps in flight
     * have no latency yet, but they are late: the app was falling behind. */
    double sent = m->sent_rps > 0 ? m->sent_rps : m->offered_rps;
    double done = search_sustained_rps(m->done_rps, m->sent_rps, m->p50_us, m->window_s);
    if (done <= 0 || done < SEARCH_KEPT_UP * sent) {
        *why = CAPACITY_LIMIT_SLO_P95;
        return SEARCH_FAIL;
    }
    *why = CAPACITY_LIMIT_NONE;
    return SEARCH_PASS;
}

double search_sustained_rps(double done_rps, double sent_rps, uint64_t p50_us, double window_s)
{
    double lat = (double)p50_us / 1e6;
    if (!(window_s > 0) || lat >= window_s / 2)
        return done_rps;
    double r = done_rps * window_s / (window_s - lat);
    return sent_rps > 0 && r > sent_rps ? sent_rps : r;
}

const char *search_limit_name(enum capacity_limit l)
{
    switch (l) {
    case CAPACITY_LIMIT_NONE:
        return "none";
    case CAPACITY_LIMIT_SLO_P95:
        return "slo-p95";
    case CAPACITY_LIMIT_SLO_P99:
        return "slo-p99";
    case CAPACITY_LIMIT_SLO_ERRORS:
        return "slo-errors";
    case CAPACITY_LIMIT_GENERATOR:
        return "generator";
    case CAPACITY_LIMIT_BUDGET:
        return "budget";
    case CAPACITY_LIMIT_MAX_RPS:
        return "max-rps";
    }
    return "none";
}
