/* What the sweep runner's files share (runner_int.h): the stop flag, the progress report with
 * its estimate of the time left, the row the current measurement fills, and how a row fails.
 * runner.c (the variant loop), runner_capacity.c, runner_streams.c and runner_scale_out.c all
 * call these; nothing here calls back into them. */

#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "sweep/runner_int.h"

bool sweep__stopped(const struct sweep_opts *o)
{
    return o->stop && *o->stop;
}

/* The estimated time left in the sweep: what this variant still needs and what the ones after
 * it will, each taking as long as the finished ones did (or as planned before any finished),
 * never past the sweep's deadline. */
static double eta_s(const struct sweep__ctx *c)
{
    double now = clock_mono_s();
    double per = c->done_n ? c->done_wall_s / (double)c->done_n : c->variant_estimate_s;
    double cur = per - (now - c->t0);
    double left = (cur > 0 ? cur : 0) + per * (double)(c->s->n - c->index - 1);
    if (c->deadline > 0 && left > c->deadline - now)
        left = c->deadline > now ? c->deadline - now : 0;
    return left;
}

void sweep__progress(struct sweep__ctx *c, enum sweep_phase phase, const struct load_progress *lp)
{
    struct sweep_progress p;

    c->phase = phase;
    if (!c->o->progress)
        return;
    memset(&p, 0, sizeof(p));
    p.index = c->index;
    p.n = c->s->n;
    p.variant = &c->s->rows[c->index].variant;
    p.phase = phase;
    p.elapsed_s = clock_mono_s() - c->t0;
    p.step = c->step;
    p.step_what = c->step_what;
    p.offered_rps = c->offered_rps;
    p.stream_step = c->stream_step;
    p.step_streams = c->step_streams;
    p.eta_s = eta_s(c);
    if (lp) {
        p.phase_elapsed_s = lp->elapsed_s;
        p.phase_s = lp->phase_s;
        p.rps = lp->rps;
        p.p95_us = lp->p95_us;
        p.requests = lp->requests;
        p.failed = lp->failed;
        p.streams_open = lp->streams_open;
    }
    c->o->progress(c->o->progress_ud, &p);
}

void sweep__on_load_progress(void *ud, const struct load_progress *lp)
{
    struct sweep__ctx *c = ud;
    sweep__progress(c, c->phase, lp);
}

void sweep__fail_row(struct sweep_row *row, enum platform_fail kind, const char *reason)
{
    row->state = SWEEP_ROW_FAILED;
    row->failure.kind = kind;
    snprintf(row->failure.reason, sizeof(row->failure.reason), "%s",
             reason && reason[0] ? reason : platform_fail_name(kind));
}

struct sweep_row *sweep__row(struct sweep__ctx *c)
{
    return c->row ? c->row : &c->s->rows[c->index];
}
