/* report.html, numbers over time: one timeline per variant. In capacity mode the timeline is the
 * search's measured steps one after another, each labelled with its kind and offered rate, so a
 * step that failed shows where inside its window latency climbed; in fixed mode it is the one
 * measured window. */

#include "output/output_series.h"

#include <errno.h>
#include <stdio.h>

#include "load/report_html.h"
#include "sweep/runner.h"

static const char *step_kind(enum capacity_step_kind k)
{
    return k == CAPACITY_STEP_PROBE ? "probe" : k == CAPACITY_STEP_SEARCH ? "step" : "repeat";
}

/* The segments of row r into seg (labels into labels); returns how many. */
static size_t row_segments(const struct sweep_row *r, struct report_html_segment *seg,
                           char (*labels)[32])
{
    size_t n = 0;
    if (r->cap.searched && r->cap.nsteps > 0) {
        for (size_t k = 0; k < r->cap.nsteps && k < CAPACITY_MAX_STEPS; k++) {
            const struct capacity_step *st = &r->cap.steps[k];
            if (st->kind == CAPACITY_STEP_PROBE)
                snprintf(labels[n], sizeof(labels[n]), "%zu probe", k + 1);
            else
                snprintf(labels[n], sizeof(labels[n]), "%zu %s %.0f/s", k + 1, step_kind(st->kind),
                         st->offered_rps);
            seg[n].s = &r->step_series[k];
            seg[n].label = labels[n];
            n++;
        }
        return n;
    }
    if (r->have_load && r->load.series.n > 0) {
        seg[0].s = &r->load.series;
        seg[0].label = NULL;
        n = 1;
    }
    return n;
}

int output_html_series(FILE *f, const struct output_doc *d, char *err)
{
    struct report_html_segment seg[CAPACITY_MAX_STEPS];
    char labels[CAPACITY_MAX_STEPS][32];
    char id[32];
    int header = 0;

    if (!d->sweep)
        return 0;
    for (size_t i = 0; i < d->sweep->n; i++) {
        const struct sweep_row *r = &d->sweep->rows[i];
        size_t n = row_segments(r, seg, labels);
        if (n == 0)
            continue;
        if (!header) {
            fputs("<h2 id=\"over-time\">Over time</h2>\n<p>Each variant's measured load second by "
                  "second (a capacity search: its steps one after another, dashed lines between "
                  "them).</p>\n",
                  f);
            header = 1;
        }
        fputs("<h3>", f);
        report_html_esc(f, r->variant.label);
        fputs("</h3>\n", f);
        snprintf(id, sizeof(id), "series-%zu", i);
        int rc = report_html_series(f, seg, n, id, err);
        if (rc)
            return rc;
    }
    return ferror(f) ? err_set(err, -EIO, "write error") : 0;
}
