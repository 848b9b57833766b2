#ifndef SIZEUP_LOAD_REPORT_HTML_H
#define SIZEUP_LOAD_REPORT_HTML_H

/* A run's numbers over time as HTML: inline SVG charts (throughput and errors, p50/p95/p99, and
 * the streams' delivery latency), no script, no external asset. `sizeup loadtest --html` writes
 * a whole page; the sweep's report.html draws each variant's series with the same charts. */

#include <stddef.h>
#include <stdio.h>

#include "core/err.h"
#include "profile/profile.h"
#include "load/result.h"
#include "load/series.h"

/* One stretch of a timeline: a run's series, drawn after the previous stretch with a
 * separator and its label (a capacity search's steps, one after another). */
struct report_html_segment {
    const struct load_series *s; /* borrowed */
    const char *label;           /* borrowed; NULL: none */
};

/* Writes s HTML-escaped. */
void report_html_esc(FILE *f, const char *s);

/* Writes the charts of the segments, one timeline, as <figure> elements whose ids start with
 * id (an HTML id; not escaped), then a table of the points (class "series"). Nothing when no
 * segment has a point. Returns 0 or -EIO. Borrows everything. */
int report_html_series(FILE *f, const struct report_html_segment *seg, size_t nseg, const char *id,
                       char *err);

/* Writes a whole self-contained page for one run: what ran, the totals, the charts and the
 * table of points. p may be NULL. Returns 0 or -EIO with err. Borrows everything. */
int report_html(FILE *f, const struct load_result *r, const struct profile *p, char *err);

#endif
