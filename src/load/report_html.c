/* The numbers over time as inline SVG: one timeline of one or more segments (a run, or a
 * capacity search's steps one after another), three charts on it, and the table of points.
 * Plain SVG elements with <title> tooltips: no script, so the page shows the same in a mail
 * attachment, a ConfigMap viewer or a headless browser. */

#include "load/report_html.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/fmt.h"

#define CW 760 /* chart width */
#define CH 220 /* chart height */
#define ML 64  /* left margin: the y axis' labels */
#define MR 16
#define MT 26 /* top margin: the legend */
#define MB 32 /* bottom margin: the time axis */
/* A segment label's width is estimated from its length, as wide as the widest characters of
 * the pages' fonts at 12 px (the sweep page's chart font; the loadtest page's labels are 10 px),
 * so an estimate never falls short of the drawn width; LABEL_PAD is the least space between. */
#define LABEL_CHAR_W 7.5
#define LABEL_PAD    6

void report_html_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* ---- what a chart draws ------------------------------------------------------------------ */

typedef double (*point_value_fn)(const struct series_point *p, bool *has /* OUT */);

static double rate_of(uint64_t n, const struct series_point *p)
{
    return p->dur_s > 0 ? (double)n / p->dur_s : 0;
}

static double v_rps(const struct series_point *p, bool *has)
{
    *has = true;
    return rate_of(p->requests, p);
}

static double v_eps(const struct series_point *p, bool *has)
{
    *has = true;
    return rate_of(p->failed, p);
}

/* A latency exists only where something completed: an empty second is a gap, not a zero. */
static double v_p50(const struct series_point *p, bool *has)
{
    *has = p->requests > 0;
    return (double)p->p50_us / 1e3;
}

static double v_p95(const struct series_point *p, bool *has)
{
    *has = p->requests > 0;
    return (double)p->p95_us / 1e3;
}

static double v_p99(const struct series_point *p, bool *has)
{
    *has = p->requests > 0;
    return (double)p->p99_us / 1e3;
}

static double v_d50(const struct series_point *p, bool *has)
{
    *has = p->frames > 0;
    return (double)p->d_p50_us / 1e3;
}

static double v_d95(const struct series_point *p, bool *has)
{
    *has = p->frames > 0;
    return (double)p->d_p95_us / 1e3;
}

static double v_d99(const struct series_point *p, bool *has)
{
    *has = p->frames > 0;
    return (double)p->d_p99_us / 1e3;
}

struct line {
    const char *name, *color;
    point_value_fn get;
};

struct chart {
    const char *id_suffix, *title, *unit;
    struct line lines[3];
    size_t nlines;
};

static const struct chart charts[] = {
    {"-rate",
     "Throughput and errors per second",
     "/s",
     {{"requests/s", "#1e88e5", v_rps}, {"errors/s", "#c62828", v_eps}},
     2},
    {"-latency",
     "Latency per interval",
     "ms",
     {{"p50", "#90caf9", v_p50}, {"p95", "#1e88e5", v_p95}, {"p99", "#0d47a1", v_p99}},
     3},
    {"-delivery",
     "Stream delivery latency per interval (by the command's due time)",
     "ms",
     {{"p50", "#a5d6a7", v_d50}, {"p95", "#43a047", v_d95}, {"p99", "#1b5e20", v_d99}},
     3},
};

/* ---- geometry ---------------------------------------------------------------------------- */

static double seg_length(const struct load_series *s)
{
    return s && s->n ? s->pts[s->n - 1].t_s + s->pts[s->n - 1].dur_s : 0;
}

/* The smallest 1, 2 or 5 x 10^k at or above v (v > 0). */
static double nice_ceil(double v)
{
    double e = pow(10, floor(log10(v)));
    for (int k = 0; k < 3; k++) {
        static const double m[3] = {1, 2, 5};
        if (m[k] * e >= v)
            return m[k] * e;
    }
    return 10 * e;
}

struct frame {
    double total_s, ymax;
};

static double px_x(const struct frame *fr, double t)
{
    return ML + t / fr->total_s * (CW - ML - MR);
}

static double px_y(const struct frame *fr, double v)
{
    return MT + (1 - v / fr->ymax) * (CH - MT - MB);
}

static void fmt_num(double v, char *buf, size_t len)
{
    if (v >= 100 || v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

static void axes(FILE *f, const struct frame *fr, const struct chart *c)
{
    char b[32];
    for (int k = 0; k <= 2; k++) {
        double v = fr->ymax * k / 2;
        double y = px_y(fr, v);
        fmt_num(v, b, sizeof(b));
        fprintf(f,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
                "<text x=\"%d\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%s %s</text>\n",
                ML, y, CW - MR, y, ML - 4, y + 4, b, c->unit);
    }
    for (int k = 0; k <= 4; k++) {
        double t = fr->total_s * k / 4;
        fmt_num(t, b, sizeof(b));
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">%ss</text>\n",
                px_x(fr, t), CH - MB + 16, b);
    }
    for (size_t i = 0; i < c->nlines; i++)
        fprintf(f,
                "<rect x=\"%zu\" y=\"6\" width=\"12\" height=\"10\" fill=\"%s\"/>"
                "<text x=\"%zu\" y=\"15\" class=\"ax\">%s</text>\n",
                ML + i * 96, c->lines[i].color, ML + i * 96 + 16, c->lines[i].name);
}

/* The segments' boundaries: a dashed line where each one after the first begins, and its
 * label where there is room for it: after the end of the last label drawn, never over it. */
static void separators(FILE *f, const struct frame *fr, const struct report_html_segment *seg,
                       size_t nseg)
{
    double off = 0, last_end = -1e9;
    for (size_t i = 0; i < nseg; i++) {
        double x = px_x(fr, off);
        if (i > 0)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"sep\"/>\n", x, MT,
                    x, CH - MB);
        if (seg[i].label && x + 2 >= last_end + LABEL_PAD) {
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"segl\">", x + 2, MT + 10);
            report_html_esc(f, seg[i].label);
            fputs("</text>\n", f);
            last_end = x + 2 + (double)strlen(seg[i].label) * LABEL_CHAR_W;
        }
        off += seg_length(seg[i].s);
    }
}

static void one_line(FILE *f, const struct frame *fr, const struct report_html_segment *seg,
                     size_t nseg, const struct line *ln)
{
    double off = 0;
    char b[32];
    for (size_t i = 0; i < nseg; i++) {
        const struct load_series *s = seg[i].s;
        bool open = false;
        for (size_t k = 0; s && k < s->n; k++) {
            const struct series_point *p = &s->pts[k];
            bool has;
            double v = ln->get(p, &has);
            if (!has) {
                if (open)
                    fputs("\"/>\n", f);
                open = false;
                continue;
            }
            if (!open)
                fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"",
                        ln->color);
            open = true;
            fprintf(f, "%.1f,%.1f ", px_x(fr, off + p->t_s + p->dur_s / 2), px_y(fr, v));
        }
        if (open)
            fputs("\"/>\n", f);
        /* Dots with a tooltip each: the exact figure behind the line. */
        for (size_t k = 0; s && k < s->n; k++) {
            const struct series_point *p = &s->pts[k];
            bool has;
            double v = ln->get(p, &has);
            if (!has)
                continue;
            fmt_num(v, b, sizeof(b));
            fprintf(f,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"><title>%s at %gs: "
                    "%s</title></circle>\n",
                    px_x(fr, off + p->t_s + p->dur_s / 2), px_y(fr, v), ln->color, ln->name,
                    off + p->t_s, b);
        }
        off += seg_length(s);
    }
}

static void chart(FILE *f, const struct chart *c, const struct report_html_segment *seg,
                  size_t nseg, double total_s, const char *id)
{
    struct frame fr = {total_s, 0};
    for (size_t i = 0; i < nseg; i++)
        for (size_t k = 0; seg[i].s && k < seg[i].s->n; k++)
            for (size_t l = 0; l < c->nlines; l++) {
                bool has;
                double v = c->lines[l].get(&seg[i].s->pts[k], &has);
                if (has && v > fr.ymax)
                    fr.ymax = v;
            }
    fr.ymax = fr.ymax > 0 ? nice_ceil(fr.ymax * 1.05) : 1;
    fprintf(f, "<figure><figcaption>%s</figcaption>\n", c->title);
    fprintf(f,
            "<svg id=\"%s%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
            id, c->id_suffix, CW, CH, CW, CH, c->title);
    axes(f, &fr, c);
    separators(f, &fr, seg, nseg);
    for (size_t l = 0; l < c->nlines; l++)
        one_line(f, &fr, seg, nseg, &c->lines[l]);
    fputs("</svg></figure>\n", f);
}

static void points_table(FILE *f, const struct report_html_segment *seg, size_t nseg, bool delivery,
                         const char *id)
{
    char l[6][FMT_LEN], rb[FMT_LEN];
    fprintf(f,
            "<details><summary>The points</summary>\n<table class=\"series\" id=\"%s-points\">"
            "<thead><tr>%s<th>t (s)</th><th>length (s)</th><th>requests</th><th>errors</th>"
            "<th>req/s</th><th>p50</th><th>p95</th><th>p99</th>",
            id, nseg > 1 ? "<th>step</th>" : "");
    if (delivery)
        fputs("<th>frames</th><th>delivery p50</th><th>delivery p95</th><th>delivery p99</th>", f);
    fputs("</tr></thead><tbody>\n", f);
    for (size_t i = 0; i < nseg; i++) {
        const struct load_series *s = seg[i].s;
        for (size_t k = 0; s && k < s->n; k++) {
            const struct series_point *p = &s->pts[k];
            fputs("<tr>", f);
            if (nseg > 1) {
                fputs("<td>", f);
                report_html_esc(f, seg[i].label ? seg[i].label : "");
                fputs("</td>", f);
            }
            fprintf(f,
                    "<td>%g</td><td>%g</td><td>%" PRIu64 "</td><td>%" PRIu64
                    "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
                    p->t_s, p->dur_s, p->requests, p->failed, fmt_rate(rate_of(p->requests, p), rb),
                    fmt_latency(p->p50_us, l[0]), fmt_latency(p->p95_us, l[1]),
                    fmt_latency(p->p99_us, l[2]));
            if (delivery)
                fprintf(f, "<td>%" PRIu64 "</td><td>%s</td><td>%s</td><td>%s</td>", p->frames,
                        fmt_latency(p->d_p50_us, l[3]), fmt_latency(p->d_p95_us, l[4]),
                        fmt_latency(p->d_p99_us, l[5]));
            fputs("</tr>\n", f);
        }
    }
    fputs("</tbody></table></details>\n", f);
}

int report_html_series(FILE *f, const struct report_html_segment *seg, size_t nseg, const char *id,
                       char *err)
{
    double total = 0;
    bool delivery = false, any = false;
    for (size_t i = 0; i < nseg; i++) {
        total += seg_length(seg[i].s);
        any = any || (seg[i].s && seg[i].s->n > 0);
        delivery = delivery || (seg[i].s && seg[i].s->delivery);
    }
    if (!any || total <= 0)
        return 0;
    for (size_t c = 0; c < sizeof(charts) / sizeof(charts[0]); c++) {
        if (c == 2 && !delivery)
            continue;
        chart(f, &charts[c], seg, nseg, total, id);
    }
    points_table(f, seg, nseg, delivery, id);
    return ferror(f) ? err_set(err, -EIO, "write error") : 0;
}

/* The style both pages share with report.html's look. */
static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;"
    "max-width:1000px;padding:0 1em;color:#212121;line-height:1.45}\n"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:.85em;margin:.6em 0}\n"
    "th,td{border:1px solid #ddd;padding:.25em .5em;text-align:right}th{background:#f5f5f5}\n"
    "figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}\n"
    ".chart{max-width:100%;height:auto;font-size:11px}.ax{fill:#424242}.segl{fill:#616161;"
    "font-size:10px}\n.grid{stroke:#e0e0e0}.sep{stroke:#9e9e9e;stroke-dasharray:3 3}\n"
    "dl.setup{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}"
    "dl.setup dt{font-weight:600}dl.setup dd{margin:0}\n"
    ".HEALTHY{color:#2e7d32}.STRESSED{color:#a66d00}.OVERLOADED{color:#c62828}\n";

int report_html(FILE *f, const struct load_result *r, const struct profile *p, char *err)
{
    const struct load_stats *t = &r->total;
    char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];

    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>sizeup: load test</title>\n<style>\n%s</style></head><body>\n"
            "<h1>Load test</h1>\n<dl class=\"setup\">\n",
            style);
    if (p && p->source) {
        fputs("<dt>Profile</dt><dd>", f);
        report_html_esc(f, p->source);
        fputs("</dd>\n", f);
    }
    if (r->target_rate_rps > 0)
        fprintf(f, "<dt>Load</dt><dd>open loop at %s req/s (achieved %s)</dd>\n",
                fmt_rate(r->target_rate_rps, a), fmt_rate(r->achieved_rate_rps, b));
    else
        fprintf(f, "<dt>Load</dt><dd>closed loop, %u users</dd>\n", r->users);
    fprintf(f, "<dt>Measured</dt><dd>%.1f s%s</dd>\n", r->duration_s,
            r->interrupted ? " (interrupted: what ran before the signal)" : "");
    fprintf(f, "<dt>Requests</dt><dd id=\"total-requests\">%" PRIu64 "</dd>\n", t->requests);
    fprintf(f, "<dt>Failed</dt><dd id=\"total-failed\">%" PRIu64 "</dd>\n", t->failed);
    fprintf(f, "<dt>Throughput</dt><dd>%s req/s</dd>\n",
            fmt_rate(load_stats_throughput(t, r->duration_s), a));
    fprintf(f, "<dt>Latency</dt><dd>p50 %s, p95 %s, p99 %s</dd>\n",
            fmt_latency(hist_percentile(&t->latency, 50), a),
            fmt_latency(hist_percentile(&t->latency, 95), b),
            fmt_latency(hist_percentile(&t->latency, 99), c));
    fprintf(f, "<dt>Verdict</dt><dd class=\"%s\">%s</dd>\n</dl>\n", verdict_name(r->verdict),
            verdict_name(r->verdict));
    fprintf(f, "<h2>Over time</h2>\n<p>One point per %g s of the measured window",
            r->series.interval_s);
    fprintf(f, " (at most %d points: a longer window doubles the interval).</p>\n",
            SERIES_MAX_POINTS);
    struct report_html_segment seg = {&r->series, NULL};
    int rc = report_html_series(f, &seg, 1, "series", err);
    if (rc)
        return rc;
    fputs("</body></html>\n", f);
    return ferror(f) ? err_set(err, -EIO, "write error") : 0;
}
