/* report.html: one self-contained page (inline CSS and SVG, no scripts, no external assets) that
 * opens with the answer (output_answer.c), then the evidence: the setup, the table, throughput
 * and p95 per variant, the latency percentiles, the time series and the findings. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise/rule.h"
#include "core/fmt.h"
#include "core/quantity.h"
#include "load/report_html.h"
#include "output/output.h"
#include "output/output_int.h"
#include "output/output_series.h"
#include "output/output_set.h"

#define W       OUTPUT_HTML_W
#define LABEL_W OUTPUT_HTML_LABEL_W
#define VALUE_W 90 /* value column at the right */
#define ROW_H   OUTPUT_HTML_ROW_H

static const char *verdict_color(const struct output_doc *d, size_t i)
{
    if (!d->rows[i].measured)
        return "#9e9e9e";
    switch (d->advice->rows[i].verdict) {
    case VERDICT_HEALTHY:
        return "#2e7d32";
    case VERDICT_STRESSED:
        return "#f9a825";
    case VERDICT_OVERLOADED:
        return "#c62828";
    }
    return "#9e9e9e";
}

static void bar_chart(FILE *f, const struct output_doc *d, const char *title, const char *id,
                      int is_p95)
{
    const struct profile_thresholds *t = &d->profile->thresholds;
    double max = 0;
    int h = (int)d->n * ROW_H + 40, span = W - LABEL_W - VALUE_W;
    char b[32];

    for (size_t i = 0; i < d->n; i++) {
        if (!d->rows[i].measured)
            continue;
        double v = is_p95 ? (double)d->rows[i].p95_us / 1e3 : d->rows[i].throughput_rps;
        if (v > max)
            max = v;
    }
    if (is_p95 && max < (double)t->overloaded_p95_us / 1e3 * 1.1)
        max = (double)t->overloaded_p95_us / 1e3 * 1.1;
    if (max <= 0)
        max = 1;
    fprintf(f, "<figure><figcaption>%s</figcaption>\n", title);
    output_html_svg_open(f, id, "chart", W, h, title);
    for (size_t i = 0; i < d->n; i++) {
        int y = 10 + (int)i * ROW_H;
        const struct advisor_row *r = &d->rows[i];
        output_html_row_label(f, d, i, y);
        if (!r->measured) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"val\">FAILED</text>\n", LABEL_W + 4,
                    y + ROW_H / 2 + 4);
            continue;
        }
        double v = is_p95 ? (double)r->p95_us / 1e3 : r->throughput_rps;
        int bw = (int)lround(v / max * span);
        if (bw < 1)
            bw = 1;
        bool marked = !d->advice->rows[i].capacity;
        fprintf(f,
                "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"%s>"
                "<title>",
                LABEL_W, y + 3, bw, ROW_H - 6, verdict_color(d, i),
                marked ? " fill-opacity=\"0.35\" stroke=\"#555\" stroke-dasharray=\"3 2\"" : "");
        report_html_esc(f, r->variant.label);
        fprintf(f, "</title></rect>\n");
        if (is_p95)
            fmt_latency(r->p95_us, b);
        else
            snprintf(b, sizeof(b), "%.0f req/s", v);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"val\">%s%s</text>\n", LABEL_W + bw + 6,
                y + ROW_H / 2 + 4, b, marked ? " (marked)" : "");
    }
    if (is_p95) {
        double lines[2] = {(double)t->healthy_p95_us / 1e3, (double)t->overloaded_p95_us / 1e3};
        const char *names[2] = {"healthy", "overloaded"};
        for (int k = 0; k < 2; k++) {
            int x = LABEL_W + (int)lround(lines[k] / max * span);
            fprintf(f,
                    "<line x1=\"%d\" y1=\"4\" x2=\"%d\" y2=\"%d\" class=\"thr\"/>"
                    "<text x=\"%d\" y=\"%d\" class=\"thrl\">%s %.0fms</text>\n",
                    x, x, h - 22, x + 3, h - 8, names[k], lines[k]);
        }
    }
    fputs("</svg></figure>\n", f);
}

static void percentile_chart(FILE *f, const struct output_doc *d)
{
    static const char *colors[3] = {"#90caf9", "#1e88e5", "#0d47a1"};
    static const char *names[3] = {"P50", "P95", "P99"};
    int sub = 8, rowh = 3 * sub + 10, h = (int)d->n * rowh + 46, span = W - LABEL_W - VALUE_W;
    double max = 0;
    char b[32];

    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].measured && (double)d->rows[i].p99_us / 1e3 > max)
            max = (double)d->rows[i].p99_us / 1e3;
    if (max <= 0)
        max = 1;
    fprintf(f, "<figure><figcaption>Latency percentiles per variant (ms)</figcaption>\n");
    output_html_svg_open(f, "chart-latency", "chart", W, h, "Latency percentiles");
    for (size_t i = 0; i < d->n; i++) {
        const struct advisor_row *r = &d->rows[i];
        int y = 10 + (int)i * rowh;
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lbl\" text-anchor=\"end\">", LABEL_W - 8,
                y + rowh / 2 + 2);
        if ((int)i == d->advice->recommended)
            fputs("* ", f);
        report_html_esc(f, r->variant.label);
        fputs("</text>\n", f);
        if (!r->measured)
            continue;
        uint64_t v[3] = {r->p50_us, r->p95_us, r->p99_us};
        for (int k = 0; k < 3; k++) {
            int bw = (int)lround((double)v[k] / 1e3 / max * span);
            if (bw < 1)
                bw = 1;
            fprintf(f,
                    "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                    "fill=\"%s\"><title>%s %s</title></rect>",
                    LABEL_W, y + k * sub, bw, sub - 1, colors[k], names[k], fmt_latency(v[k], b));
            if (k == 2)
                fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"val\">p99 %s</text>", LABEL_W + bw + 6,
                        y + 3 * sub - 1, b);
            fputc('\n', f);
        }
    }
    for (int k = 0; k < 3; k++)
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%d\" "
                "y=\"%d\" class=\"val\">%s</text>\n",
                LABEL_W + k * 80, h - 18, colors[k], LABEL_W + k * 80 + 16, h - 9, names[k]);
    fputs("</svg></figure>\n", f);
}

/* The page's head: its title and style sheet, and the heading. */
static void html_head(FILE *f)
{
    fputs(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>sizeup: sizing results</title>\n<style>\n"
        "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;"
        "max-width:1000px;padding:0 1em;color:#212121;line-height:1.45}\n"
        "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}\n"
        "table{border-collapse:collapse;font-size:.9em;margin:.6em 0}\n"
        "th,td{border:1px solid #ddd;padding:.3em .55em;text-align:right}\n"
        "th{background:#f5f5f5}td:first-child,th:first-child{text-align:left;white-space:nowrap}\n"
        "tr.rec{background:#e8f5e9;font-weight:600}\n"
        ".HEALTHY{color:#2e7d32}.STRESSED{color:#a66d00}.OVERLOADED,.FAILED{color:#c62828}\n"
        ".warn{background:#fff3e0;border-left:4px solid #ef6c00;padding:.5em 1em}\n"
        "figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}\n"
        ".chart{max-width:100%;height:auto;font-size:12px}.lbl{fill:#212121}"
        ".val{fill:#424242}\n.knees{display:flex;flex-wrap:wrap;gap:.5em}\n.thr{stroke:#616161;"
        "stroke-dasharray:4 3}.thrl{fill:#616161;"
        "font-size:11px}\n"
        "code,pre{background:#f5f5f5;font-size:.9em}pre{padding:.6em;overflow:auto}\n"
        "dl.setup{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}"
        "dl.setup dt{font-weight:600}dl.setup dd{margin:0}\n"
        "</style></head><body>\n<h1>Sizing results</h1>\n",
        f);
}

/* The warnings above everything: a cancelled sweep, limits not enforced. */
static void html_notices(FILE *f, const struct output_doc *d)
{
    if (d->cancelled)
        fputs("<p class=\"warn\"><b>Cancelled:</b> the sweep was stopped before its end; the "
              "rows below are what was measured until then.</p>\n",
              f);
    if (d->facts && !d->facts->limits_enforced) {
        fputs("<p class=\"warn\"><b>LIMITS NOT ENFORCED:</b> ", f);
        report_html_esc(f, d->facts->limits_note[0] ? d->facts->limits_note : "no writable cgroup");
        fputs(". Every row ran without its CPU and memory limits.</p>\n", f);
    }
}

/* How the sweep ran (date, machine, profile, command), and what was trimmed to fit. */
static void html_setup(FILE *f, const struct output_doc *d)
{
    char t[40], line[1024];

    fputs("<dl class=\"setup\">\n", f);
    fprintf(f, "<dt>Date</dt><dd>%s</dd>\n", output_fmt_time(d->started, t));
    if (d->facts && d->facts->machine[0]) {
        fputs("<dt>Machine</dt><dd>", f);
        report_html_esc(f, d->facts->machine);
        fputs("</dd>\n", f);
    }
    output_fmt_profile(d->profile, line, sizeof(line));
    fputs("<dt>Profile</dt><dd>", f);
    report_html_esc(f, line);
    fputs("</dd>\n", f);
    if (d->command) {
        fputs("<dt>Command</dt><dd><code>", f);
        report_html_esc(f, d->command);
        fputs("</code></dd>\n", f);
    }
    fputs("</dl>\n", f);
    if (d->omit) {
        fputs("<p class=\"warn\"><b>Trimmed to fit:</b> ", f);
        report_html_esc(f, output_omit_note(d->omit, line, sizeof(line)));
        fputs("</p>\n", f);
    }
}

/* The charts: throughput, p95, the percentiles, the capacity steps, the scale-out and the time
 * series. Returns 0 or -EIO. */
static int html_charts(FILE *f, const struct output_doc *d, char *err)
{
    fputs("<h2>Charts</h2>\n", f);
    bar_chart(f, d, "Throughput per variant (req/s)", "chart-throughput", 0);
    bar_chart(f, d, "P95 latency per variant", "chart-p95", 1);
    percentile_chart(f, d);
    output_html_capacity(f, d);
    output_html_scale_out(f, d);
    if (output_html_series(f, d, err) != 0)
        return -EIO;
    return 0;
}

/* Row i of the results table (cap, streams: whether the capacity and stream columns show). */
static void html_result_row(FILE *f, const struct output_doc *d, size_t i, bool cap, bool streams)
{
    const struct advice *a = d->advice;
    char line[1024], capbuf[OUTPUT_CAPACITY_LEN], b1[QTY_LEN], b2[QTY_LEN], l1[32], l2[32], l3[32],
        st[320];
    const struct advisor_row *r = &d->rows[i];
    bool rec = (int)i == a->recommended;

    output_state(d, i, st, sizeof(st));
    fprintf(f, "<tr%s><td>%s", rec ? " class=\"rec\"" : "", rec ? "* " : "");
    report_html_esc(f, r->variant.label);
    fprintf(f, "</td><td>%u</td><td>%s</td><td>%s</td>", r->variant.workers,
            qty_format_cores(r->variant.cpu_millicores, b1),
            qty_format_memory(r->variant.memory_bytes, b2));
    if (r->measured)
        fprintf(f,
                "<td>%.0f req/s</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f%%</td>"
                "<td class=\"%s\">",
                r->throughput_rps, fmt_latency(r->p50_us, l1), fmt_latency(r->p95_us, l2),
                fmt_latency(r->p99_us, l3), r->error_rate * 100, verdict_name(a->rows[i].verdict));
    else
        fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td class=\"FAILED\">", f);
    report_html_esc(f, st);
    if (r->measured && a->rows[i].capacity)
        fprintf(f, "</td><td>~%.0f</td>", round(a->rows[i].est_users));
    else
        fprintf(f, "</td><td>-</td>");
    if (cap) {
        fputs("<td>", f);
        report_html_esc(f, output_fmt_capacity(&r->cap, capbuf));
        fprintf(f, "</td><td>%s</td>", output_fmt_per_core(&r->cap, l1, sizeof(l1)));
    }
    if (streams) {
        fputs("<td>", f);
        report_html_esc(f, output_fmt_streams(&r->scap, line, sizeof(line)));
        fprintf(f, "</td><td>%s</td>", output_fmt_memory_per_stream(&r->scap, l1, sizeof(l1)));
    }
    fputs("</tr>\n", f);
}

/* The recommendation (or why there is none) and the results table. */
static void html_results(FILE *f, const struct output_doc *d)
{
    const struct advice *a = d->advice;
    char line[1024];

    fputs("<h2>Results</h2>\n<p>", f);
    if (a->recommended >= 0) {
        fputs("<b>*</b> marks the recommendation: ", f);
        report_html_esc(f, a->why);
        fputc('.', f);
    } else {
        report_html_esc(f, output_no_rec_sentence(d, line, sizeof(line)));
        fputs(" No <code>values.yaml</code> is written.", f);
    }
    bool cap = output_has_capacity(d), streams = output_has_streams(d);
    fprintf(f,
            "</p>\n<table id=\"results\"><thead><tr><th>Config</th><th>Workers</th><th>CPU</th>"
            "<th>Memory</th><th>Throughput</th><th>P50</th><th>P95</th><th>P99</th><th>Errors</th>"
            "<th>State</th><th>Est. active users</th>%s%s</tr></thead><tbody>\n",
            cap ? "<th>Capacity @SLO</th><th>per core</th>" : "",
            streams ? "<th>Streams @SLO</th><th>Memory/stream</th>" : "");
    for (size_t i = 0; i < d->n; i++)
        html_result_row(f, d, i, cap, streams);
    fputs("</tbody></table>\n", f);
    if (output_fmt_capacity_note(d->profile, line, sizeof(line))[0]) {
        fputs("<p class=\"slo\">", f);
        report_html_esc(f, line);
        fputs("</p>\n", f);
    }
}

/* What the shape tells you: the advisor's findings. */
static void html_findings(FILE *f, const struct advice *a)
{
    fputs("<h2>What the shape tells you</h2>\n<ol id=\"findings\">\n", f);
    for (size_t i = 0; i < a->nfindings; i++) {
        fputs("<li>", f);
        report_html_esc(f, a->findings[i]);
        fputs("</li>\n", f);
    }
    fputs("</ol>\n", f);
}

/* The auto-sizing rule and where each of its three numbers came from. */
static void html_rule(FILE *f, const struct advice *a)
{
    char expr[RULE_EXPRESSION_LEN];

    fputs("<h2>Auto-sizing rule</h2>\n<p><code>", f);
    report_html_esc(f, rule_format(&a->rule, expr));
    fputs("</code></p>\n<ul>\n", f);
    fprintf(f, "<li>cores_per_worker = %g: ", a->rule.cores_per_worker);
    report_html_esc(f, a->cores_per_worker.text);
    fprintf(f, "</li>\n<li>memory_per_worker_mib = %g: ", a->rule.memory_per_worker_mib);
    report_html_esc(f, a->memory_per_worker.text);
    fprintf(f, "</li>\n<li>max_workers = %u: ", a->rule.max_workers);
    report_html_esc(f, a->max_workers.text);
    fputs("</li>\n</ul>\n</body></html>\n", f);
}

int output_report_html(FILE *f, const struct output_doc *d, char *err)
{
    int rc;

    html_head(f);
    html_notices(f, d);
    rc = output_answer(f, d, OUTPUT_ANSWER_HTML, err);
    if (rc)
        return rc;
    fputs("<h2>Evidence</h2>\n", f);
    html_setup(f, d);
    html_results(f, d);
    if (!(d->omit & OUTPUT_OMIT_HTML_CHARTS) && html_charts(f, d, err) != 0)
        return -EIO;
    html_findings(f, d->advice);
    html_rule(f, d->advice);
    if (ferror(f))
        return err_set(err, -EIO, "write error");
    return 0;
}
