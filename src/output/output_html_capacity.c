/* report.html's capacity charts (output_int.h): what a capacity search found per variant, drawn
 * so a reader sees both the answer and why it is the answer. The bars give each variant's
 * capacity within the SLO with its 95% interval as a whisker; the small charts give, per
 * variant, p95 and p99 at each offered rate the search tried, with the SLO line and the found
 * capacity marked, so the knee (where latency leaves the SLO) is visible. Inline SVG only. */

#include <math.h>
#include <stdio.h>

#include "core/fmt.h"
#include "load/report_html.h"
#include "output/output.h"
#include "output/output_int.h"

#define CW      OUTPUT_HTML_W
#define CLABEL  OUTPUT_HTML_LABEL_W
#define CVALUE  150 /* value column at the right: "1234 req/s +-5% (n=3) (marked)" */
#define CROW    OUTPUT_HTML_ROW_H
#define KNEE_W  360 /* one knee chart */
#define KNEE_H  200
#define KNEE_PL 52 /* plot area's left and bottom margins (axis labels) */
#define KNEE_PB 34
#define KNEE_PT 24 /* top margin (the title) */
#define KNEE_PR 12
/* Latency above this many times the p95 objective is drawn at the top edge: a step far past the
 * knee (seconds, or timeouts) would otherwise flatten every point below the SLO into the axis. */
#define KNEE_Y_SPAN 4.0

static bool any_searched(const struct output_doc *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].cap.searched)
            return true;
    return false;
}

static void capacity_bars(FILE *f, const struct output_doc *d)
{
    int h = (int)d->n * CROW + 20, span = CW - CLABEL - CVALUE;
    double max = 0;
    char b[OUTPUT_CAPACITY_LEN];
    struct capacity_shown sh;

    for (size_t i = 0; i < d->n; i++) {
        const struct capacity_result *c = &d->rows[i].cap;
        if (!c->searched)
            continue;
        capacity_show(c, &sh);
        if (!sh.unknown && sh.high > max)
            max = sh.high;
    }
    if (max <= 0)
        max = 1;
    fputs("<figure><figcaption>Capacity within the SLO per variant (req/s [95% interval]; the "
          "whisker runs from the low end of the repeats' 95% interval, never below 0, to the "
          "higher of its high end and the search's bracket, the lowest rate above the capacity "
          "that missed the SLO; a variant whose repeats disagreed shows them instead of a bar)"
          "</figcaption>\n",
          f);
    output_html_svg_open(f, "chart-capacity", "chart", CW, h, "Capacity per variant");
    for (size_t i = 0; i < d->n; i++) {
        const struct capacity_result *c = &d->rows[i].cap;
        int y = 10 + (int)i * CROW, mid = y + CROW / 2;
        output_html_row_label(f, d, i, y);
        if (!c->searched) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"val\">not searched</text>\n", CLABEL + 4,
                    mid + 4);
            continue;
        }
        capacity_show(c, &sh);
        if (sh.unknown) {
            /* No bar: there is no figure to draw, only the repeats that disagreed. */
            fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"val unknown\">", CLABEL + 4, mid + 4);
            report_html_esc(f, output_fmt_capacity_figure(c, b));
            fputs("</text>\n", f);
            continue;
        }
        int bw = (int)lround(c->rps / max * span);
        bool marked = !c->valid || !d->advice->rows[i].capacity;
        fprintf(f,
                "<rect class=\"bar cap\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                "fill=\"#1e88e5\"%s><title>",
                CLABEL, y + 3, bw < 1 ? 1 : bw, CROW - 6,
                marked ? " fill-opacity=\"0.35\" stroke=\"#555\" stroke-dasharray=\"3 2\"" : "");
        report_html_esc(f, d->rows[i].variant.label);
        fputs("</title></rect>\n", f);
        if (sh.interval) {
            int x1 = CLABEL + (int)lround(sh.low / max * span);
            int x2 = CLABEL + (int)lround(sh.high / max * span);
            fprintf(f,
                    "<path class=\"whisker\" d=\"M%d %dV%dM%d %dH%dM%d %dV%d\" stroke=\"#212121\" "
                    "stroke-width=\"1.5\" fill=\"none\"/>\n",
                    x1, mid - 6, mid + 6, x1, mid, x2, x2, mid - 6, mid + 6);
        }
        int tx = CLABEL + (sh.interval ? (int)lround(sh.high / max * span) : bw);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"val\">", tx + 6, mid + 4);
        report_html_esc(f, output_fmt_capacity_figure(c, b));
        fprintf(f, "%s</text>\n", marked ? " (marked)" : "");
    }
    fputs("</svg></figure>\n", f);
}

/* A knee chart's scale: its plot's size, the axes' ends, and the steps in offered-rate order. */
struct knee {
    int pw, ph;
    double xmax, ymax;
    size_t order[CAPACITY_MAX_STEPS], m;
};

static int knee_x(const struct knee *k, double v)
{
    return KNEE_PL + (int)lround(v / k->xmax * k->pw);
}

static int knee_y(const struct knee *k, double v)
{
    return KNEE_PT + k->ph - (int)lround(fmin(v, k->ymax) / k->ymax * k->ph);
}

/* The steps in rate order and the axes: the rate to past the furthest step, latency to past the
 * SLO or the slowest step seen. False when there is nothing to draw. */
static bool knee_scale(const struct capacity_result *c, const struct profile_slo *slo,
                       struct knee *k)
{
    double seen = 0;

    k->pw = KNEE_W - KNEE_PL - KNEE_PR;
    k->ph = KNEE_H - KNEE_PT - KNEE_PB;
    k->xmax = c->rps;
    k->ymax = (double)slo->p95_us / 1e3 * KNEE_Y_SPAN;
    k->m = 0;
    for (size_t n = 0; n < c->nsteps && n < CAPACITY_MAX_STEPS; n++) {
        const struct capacity_step *st = &c->steps[n];
        if (st->kind == CAPACITY_STEP_PROBE || !(st->offered_rps > 0))
            continue;
        k->xmax = fmax(k->xmax, st->offered_rps);
        seen = fmax(seen, (double)st->p99_us / 1e3);
        /* Insertion by offered rate: at most CAPACITY_MAX_STEPS steps. */
        size_t j = k->m++;
        for (; j > 0 && c->steps[k->order[j - 1]].offered_rps > st->offered_rps; j--)
            k->order[j] = k->order[j - 1];
        k->order[j] = n;
    }
    if (seen > 0 && seen < k->ymax)
        k->ymax = fmax(seen, (double)slo->p95_us / 1e3) * 1.15;
    if (slo->p99_us > 0)
        k->ymax = fmax(k->ymax, (double)slo->p99_us / 1e3 * 1.15);
    k->xmax *= 1.05;
    return k->xmax > 0 && k->ymax > 0;
}

/* The chart's frame: the svg, the variant's name, the axes with their ends, the SLO's lines and
 * the found capacity. */
static void knee_frame(FILE *f, const struct output_doc *d, size_t i, const struct knee *k)
{
    const struct capacity_result *c = &d->rows[i].cap;
    const struct profile_slo *slo = &d->profile->slo;
    char id[32], label[VARIANT_LABEL_LEN + 40];

    snprintf(id, sizeof(id), "chart-knee-%zu", i);
    snprintf(label, sizeof(label), "%s: latency against offered rate", d->rows[i].variant.label);
    output_html_svg_open(f, id, "chart knee", KNEE_W, KNEE_H, label);
    fprintf(f, "<text x=\"%d\" y=\"14\" class=\"lbl\">%s", KNEE_PL,
            (int)i == d->advice->recommended ? "* " : "");
    report_html_esc(f, d->rows[i].variant.label);
    fprintf(f,
            "</text>\n<path d=\"M%d %dV%dH%d\" stroke=\"#9e9e9e\" fill=\"none\"/>\n"
            "<text x=\"%d\" y=\"%d\" class=\"thrl\" text-anchor=\"end\">%.0f req/s</text>"
            "<text x=\"%d\" y=\"%d\" class=\"thrl\" text-anchor=\"end\">%.0fms</text>\n",
            KNEE_PL, KNEE_PT, KNEE_PT + k->ph, KNEE_PL + k->pw, KNEE_PL + k->pw, KNEE_H - 6,
            k->xmax, KNEE_PL - 4, KNEE_PT + 8, k->ymax);
    /* The objectives: a dashed line each, labelled. */
    const struct {
        const char *name, *color;
        int64_t us;
    } obj[2] = {{"p95", "#c62828", slo->p95_us}, {"p99", "#6a1b9a", slo->p99_us}};
    for (int n = 0; n < 2; n++)
        if (obj[n].us > 0)
            fprintf(f,
                    "<line class=\"slo\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                    "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%d\" class=\"thrl\">SLO %s "
                    "%.0fms</text>\n",
                    KNEE_PL, knee_y(k, (double)obj[n].us / 1e3), KNEE_PL + k->pw,
                    knee_y(k, (double)obj[n].us / 1e3), obj[n].color, KNEE_PL + 4,
                    knee_y(k, (double)obj[n].us / 1e3) - 3, obj[n].name, (double)obj[n].us / 1e3);
    /* The found capacity. */
    if (c->rps > 0)
        fprintf(
            f,
            "<line class=\"capline\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#2e7d32\" "
            "stroke-width=\"2\"/><text x=\"%d\" y=\"%d\" class=\"thrl\" "
            "text-anchor=\"middle\">capacity %.0f</text>\n",
            knee_x(k, c->rps), KNEE_PT, knee_x(k, c->rps), KNEE_PT + k->ph, knee_x(k, c->rps),
            KNEE_H - 20, c->rps);
}

/* p95 and p99 through the steps in rate order; each step a dot, red when it missed the SLO;
 * the legend, and the svg closed. */
static void knee_lines(FILE *f, const struct capacity_result *c, const struct knee *k)
{
    static const char *const color[2] = {"#1e88e5", "#0d47a1"};

    for (int q = 0; q < 2; q++) {
        fprintf(f,
                "<polyline class=\"p%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                "points=\"",
                q ? 99 : 95, color[q]);
        for (size_t n = 0; n < k->m; n++) {
            const struct capacity_step *st = &c->steps[k->order[n]];
            fprintf(f, "%s%d,%d", n ? " " : "", knee_x(k, st->offered_rps),
                    knee_y(k, (double)(q ? st->p99_us : st->p95_us) / 1e3));
        }
        fputs("\"/>\n", f);
    }
    for (size_t n = 0; n < k->m; n++) {
        const struct capacity_step *st = &c->steps[k->order[n]];
        char l1[32], l2[32];
        fprintf(f,
                "<circle class=\"step\" cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"><title>%.0f req/s "
                "offered, %.0f achieved: p95 %s, p99 %s, errors %.1f%%%s</title></circle>\n",
                knee_x(k, st->offered_rps), knee_y(k, (double)st->p95_us / 1e3),
                st->pass ? "#2e7d32" : "#c62828", st->offered_rps, st->achieved_rps,
                fmt_latency(st->p95_us, l1), fmt_latency(st->p99_us, l2), st->error_rate * 100,
                st->gen_limited ? " (generator-limited)" : "");
    }
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" class=\"thrl\" fill=\"%s\">p95</text><text x=\"%d\" y=\"%d\" "
            "class=\"thrl\" fill=\"%s\">p99</text>\n</svg>\n",
            KNEE_PL + k->pw - 60, KNEE_PT + 10, color[0], KNEE_PL + k->pw - 30, KNEE_PT + 10,
            color[1]);
}

/* One variant's knee: p95 and p99 (ms) against the offered rate of each step, the SLO lines and
 * the capacity. */
static void knee_chart(FILE *f, const struct output_doc *d, size_t i)
{
    struct knee k;

    if (!knee_scale(&d->rows[i].cap, &d->profile->slo, &k))
        return;
    knee_frame(f, d, i, &k);
    knee_lines(f, &d->rows[i].cap, &k);
}

void output_html_capacity(FILE *f, const struct output_doc *d)
{
    if (!any_searched(d))
        return;
    capacity_bars(f, d);
    fputs("<figure><figcaption>Latency against the offered rate per variant: p95 and p99 at each "
          "step of the search (red: missed the SLO), the SLO line and the capacity found"
          "</figcaption>\n<div class=\"knees\">\n",
          f);
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].cap.searched)
            knee_chart(f, d, i);
    fputs("</div></figure>\n", f);
}
