/* report.html's scale-out chart (output_int.h): the capacity within the SLO at each replica
 * count the scale-out measured, each point with its 95% interval as a whisker, the Universal
 * Scalability Law fitted to the usable points, the linear line (N x the 1-replica capacity) the
 * plan would assume without a scale-out, the target as a horizontal line and the curve's peak
 * N* when the fit has one. Points the fit takes (advise_scale_out_point_usable) are dots;
 * those it leaves out are hollow (contended: not the app's; or a figure that did not hold its
 * repeats, which bounds the curve), and points not measured (skipped for the budget, failed)
 * a cross on the axis, with a legend.
 * Every label has its own place (margins, the legend row), so none overlaps another; the
 * integration test sweep_scale_out_html.sh checks that in Chromium. Inline SVG only. */

#include <math.h>
#include <stdio.h>

#include "advise/advise.h"
#include "advise/usl.h"
#include "load/report_html.h"
#include "output/output.h"
#include "output/output_int.h"

#define SW     OUTPUT_HTML_W
#define SPL    72 /* plot area's margins: left (the y ticks and title), right, top (the peak) */
#define SPR    20
#define SPT    30
#define SPH    230 /* plot area's height */
#define SPB    46  /* below the plot: the x ticks and title */
#define SLEG   26  /* the legend row */
#define SH     (SPT + SPH + SPB + SLEG)
#define SLEG_W 120 /* one legend item */
/* The y axis reaches this far above the highest thing drawn, so the target's label (above its
 * line) stays inside the plot, clear of the peak's label in the top margin. */
#define SHEAD 1.15
/* The curve is drawn through this many samples per replica. */
#define SSAMPLES 10

struct so_frame {
    double xr, ymax; /* the x axis spans 0..xr replicas, the y axis 0..ymax req/s */
    int pw;          /* plot area's width */
};

static int so_x(const struct so_frame *fr, double n)
{
    return SPL + (int)lround(n / fr->xr * fr->pw);
}

static int so_y(const struct so_frame *fr, double v)
{
    return SPT + SPH - (int)lround(fmin(fmax(v, 0), fr->ymax) / fr->ymax * SPH);
}

static bool so_measured(const struct sweep_scale_point *pt)
{
    return pt->cap.rps > 0 &&
           (pt->from == SWEEP_POINT_MEASURED || pt->from == SWEEP_POINT_SHAPE_SEARCH);
}

/* The one rule the fit uses, noisy points weighed by their intervals among them. */
static bool so_fitted(const struct sweep_scale_point *pt)
{
    return so_measured(pt) && advise_scale_out_point_usable(pt);
}

/* The largest replica count drawn: the largest measured or listed, and the peak when it falls
 * within twice that (the curve is read no further, advise/sizing.c). */
static unsigned so_nmax(const struct sweep_scale_out *so, const struct usl_fit *fit, bool have)
{
    unsigned n = 1;
    for (size_t i = 0; i < so->npoints; i++)
        if (so->points[i].replicas > n)
            n = so->points[i].replicas;
    if (have && fit->peak_replicas > n && fit->peak_replicas <= 2.0 * n)
        n = (unsigned)ceil(fit->peak_replicas);
    return n;
}

static void so_frame_fill(struct so_frame *fr, const struct sweep_scale_out *so,
                          const struct usl_fit *fit, bool have, double target)
{
    double top = target > 0 ? target : 0;

    fr->xr = so_nmax(so, fit, have) + 0.5;
    fr->pw = SW - SPL - SPR;
    for (size_t i = 0; i < so->npoints; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        if (!so_measured(pt))
            continue;
        struct capacity_shown sh;
        capacity_show(&pt->cap, &sh);
        top = fmax(top, pt->cap.rps);
        if (sh.interval && !sh.unknown)
            top = fmax(top, sh.high);
    }
    for (int k = SSAMPLES; have && k <= (int)(fr->xr * SSAMPLES); k++)
        top = fmax(top, usl_eval(fit, (double)k / SSAMPLES));
    fr->ymax = top > 0 ? top * SHEAD : 1;
}

/* A tick step of 1, 2 or 5 times a power of ten giving at most 5 ticks up to max. */
static double so_tick_step(double max)
{
    double raw = max / 5, mag = pow(10, floor(log10(raw)));
    static const double mult[4] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (mult[i] * mag >= raw)
            return mult[i] * mag;
    return 10 * mag;
}

static void so_axes(FILE *f, const struct so_frame *fr, unsigned nmax)
{
    int x0 = SPL, y0 = SPT + SPH;
    double step = so_tick_step(fr->ymax);

    fprintf(f, "<path class=\"so-axis\" d=\"M%d %dV%dH%d\" stroke=\"#9e9e9e\" fill=\"none\"/>\n",
            x0, SPT, y0, x0 + fr->pw);
    /* Every count up to 12 has its tick label; beyond that every second, so the labels keep
     * apart at this width. */
    unsigned every = nmax > 12 ? 2 : 1;
    for (unsigned n = 1; n <= nmax; n++) {
        int x = so_x(fr, n);
        fprintf(f, "<path d=\"M%d %dv4\" stroke=\"#9e9e9e\"/>", x, y0);
        if (n % every == 0 || n == 1)
            fprintf(f, "<text class=\"so-tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%u</text>",
                    x, y0 + 16, n);
    }
    fputc('\n', f);
    for (double v = 0; v <= fr->ymax * (1 - 1e-9); v += step) {
        int y = so_y(fr, v);
        fprintf(f,
                "<path d=\"M%d %dh-4\" stroke=\"#9e9e9e\"/><text class=\"so-tick\" x=\"%d\" "
                "y=\"%d\" text-anchor=\"end\">%.0f</text>",
                x0, y, x0 - 6, y + 4, v);
    }
    fprintf(f,
            "\n<text class=\"so-axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">replicas"
            "</text><text class=\"so-axis-title\" x=\"14\" y=\"%d\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 14 %d)\">req/s within the SLO</text>\n",
            x0 + fr->pw / 2, y0 + 36, SPT + SPH / 2, SPT + SPH / 2);
}

/* The linear line N x X1 from the origin, cut where it leaves the plot. */
static void so_linear(FILE *f, const struct so_frame *fr, double x1)
{
    double xe = fmin(fr->xr, fr->ymax / x1);
    fprintf(f,
            "<line class=\"so-linear\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#757575\" "
            "stroke-dasharray=\"5 4\"/>\n",
            so_x(fr, 0), so_y(fr, 0), so_x(fr, xe), so_y(fr, xe * x1));
}

static void so_curve(FILE *f, const struct so_frame *fr, const struct usl_fit *fit)
{
    fputs("<polyline class=\"so-usl\" fill=\"none\" stroke=\"#2e7d32\" stroke-width=\"2\" "
          "points=\"",
          f);
    for (int k = SSAMPLES; k <= (int)(fr->xr * SSAMPLES); k++) {
        double n = (double)k / SSAMPLES;
        fprintf(f, "%s%d,%d", k > SSAMPLES ? " " : "", so_x(fr, n), so_y(fr, usl_eval(fit, n)));
    }
    fputs("\"/>\n", f);
}

static void so_target(FILE *f, const struct so_frame *fr, double target)
{
    int y = so_y(fr, target);
    fprintf(f,
            "<line class=\"so-target\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c62828\" "
            "stroke-dasharray=\"6 3\"/><text class=\"thrl so-label\" x=\"%d\" y=\"%d\" "
            "text-anchor=\"end\">target %.0f req/s</text>\n",
            SPL, y, SPL + fr->pw, y, SPL + fr->pw - 4, y - 5, target);
}

static void so_peak(FILE *f, const struct so_frame *fr, const struct usl_fit *fit)
{
    int x = so_x(fr, fit->peak_replicas);
    fprintf(f,
            "<line class=\"so-peak\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#6a1b9a\" "
            "stroke-dasharray=\"2 3\"/><text class=\"thrl so-label\" x=\"%d\" y=\"%d\" "
            "text-anchor=\"middle\">peak N* = %.1f (%.0f req/s)</text>\n",
            x, SPT, x, SPT + SPH, x, SPT - 10, fit->peak_replicas, fit->peak_x);
}

/* One point: a dot (fitted), a hollow square (left out of the fit: contended, or not valid), or
 * a cross on the axis (skipped or failed: nothing measured); the whisker is its interval (the
 * repeats' below, up to the search's bracket). */
static void so_point(FILE *f, const struct so_frame *fr, const struct sweep_scale_point *pt)
{
    const struct capacity_result *c = &pt->cap;
    int x = so_x(fr, pt->replicas);

    if (!so_measured(pt)) {
        int y = so_y(fr, 0);
        fprintf(f,
                "<path class=\"so-skipped\" data-replicas=\"%u\" d=\"M%d %dl8 8m0 -8l-8 8\" "
                "stroke=\"#9e9e9e\" stroke-width=\"2\"><title>%u replicas: ",
                pt->replicas, x - 4, y - 4, pt->replicas);
        report_html_esc(f, pt->note[0] ? pt->note : "not measured");
        fputs("</title></path>\n", f);
        return;
    }
    bool fitted = so_fitted(pt);
    const char *color = fitted ? "#1e88e5" : "#9e9e9e";
    struct capacity_shown sh;
    char text[OUTPUT_CAPACITY_LEN];

    capacity_show(c, &sh);
    if (sh.interval && !sh.unknown) {
        int yl = so_y(fr, sh.low), yh = so_y(fr, sh.high);
        fprintf(f,
                "<path class=\"so-whisker\" data-replicas=\"%u\" d=\"M%d %dh10M%d %dV%dM%d %dh10\" "
                "stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"/>\n",
                pt->replicas, x - 5, yl, x, yl, yh, x - 5, yh, color);
    }
    int y = so_y(fr, c->rps);
    if (fitted)
        fprintf(f,
                "<circle class=\"so-point\" data-replicas=\"%u\" cx=\"%d\" cy=\"%d\" r=\"4\" "
                "fill=\"%s\">",
                pt->replicas, x, y, color);
    else
        fprintf(f,
                "<rect class=\"so-point %s\" data-replicas=\"%u\" x=\"%d\" y=\"%d\" "
                "width=\"8\" height=\"8\" fill=\"#fff\" stroke=\"%s\" stroke-width=\"1.5\">",
                pt->flags & SWEEP_FLAG_CONTENDED ? "so-contended" : "so-apart", pt->replicas, x - 4,
                y - 4, color);
    fprintf(f, "<title>%u replicas: ", pt->replicas);
    report_html_esc(f, output_fmt_capacity_figure(c, text));
    if (!fitted)
        fputs(pt->flags & SWEEP_FLAG_CONTENDED ? ", contended: not the app's, not fitted"
              : advise_scale_out_point_bound(pt) > 0
                  ? ", did not hold its repeats: not fitted, bounds the curve"
                  : ", not valid: not fitted",
              f);
    else if (!c->valid)
        fputs(", noisy: weighed by its interval", f);
    fputs(fitted ? "</title></circle>\n" : "</title></rect>\n", f);
}

/* The legend row under the x axis: what each mark is, only the marks drawn. */
static void so_legend(FILE *f, bool curve, bool linear, bool contended, bool apart, bool skipped,
                      bool target)
{
    int x = 10, y = SPT + SPH + SPB + 14;

    fprintf(f,
            "<g class=\"so-legend\"><circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"#1e88e5\"/>"
            "<text class=\"so-label\" x=\"%d\" y=\"%d\">measured, 95%%</text>",
            x + 6, y - 4, x + 16, y);
    x += SLEG_W;
    /* One hollow square for every point left out (six items at most fit the width). */
    if (contended || apart) {
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"8\" fill=\"#fff\" stroke=\"#9e9e9e\" "
                "stroke-width=\"1.5\"/><text class=\"so-label\" x=\"%d\" y=\"%d\">%s</text>",
                x + 2, y - 8, x + 16, y, apart ? "not fitted" : "contended");
        x += SLEG_W;
    }
    if (skipped) {
        fprintf(f,
                "<path d=\"M%d %dl8 8m0 -8l-8 8\" stroke=\"#9e9e9e\" stroke-width=\"2\"/>"
                "<text class=\"so-label\" x=\"%d\" y=\"%d\">not measured</text>",
                x + 2, y - 8, x + 16, y);
        x += SLEG_W;
    }
    static const struct {
        const char *name, *color, *dash;
    } lines[3] = {{"USL fit", "#2e7d32", "none"},
                  {"linear N x X1", "#757575", "5 4"},
                  {"target", "#c62828", "6 3"}};
    bool on[3] = {curve, linear, target};
    for (int k = 0; k < 3; k++) {
        if (!on[k])
            continue;
        fprintf(f,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\" "
                "stroke-dasharray=\"%s\"/><text class=\"so-label\" x=\"%d\" y=\"%d\">%s</text>",
                x, y - 4, x + 12, y - 4, lines[k].color, lines[k].dash, x + 16, y, lines[k].name);
        x += SLEG_W;
    }
    fputs("</g>\n", f);
}

void output_html_scale_out(FILE *f, const struct output_doc *d)
{
    const struct sweep_scale_out *so = d->sweep ? d->sweep->scale_out : NULL;
    double target = d->advice && d->advice->by_target ? d->advice->target_rps : 0;
    struct usl_fit fit;
    struct so_frame fr;

    if (!so || !so->run || so->npoints == 0) {
        fputs("<p id=\"scale-out-none\">No scale-out chart: ", f);
        report_html_esc(f, so && so->note[0] ? so->note
                                             : "no scale-out ran, so the replica count assumes "
                                               "that N pods serve N times one");
        fputs(".</p>\n", f);
        return;
    }
    bool have = advise_scale_out_fit(so, &fit) == 0;
    const struct sweep_scale_point *p1 = &so->points[0];
    double x1 = have ? fit.x1 : (so_measured(p1) ? p1->cap.rps : 0);
    bool contended = false, apart = false, skipped = false;
    for (size_t i = 0; i < so->npoints; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        bool out = so_measured(pt) && !so_fitted(pt);
        contended |= out && (pt->flags & SWEEP_FLAG_CONTENDED);
        apart |= out && !(pt->flags & SWEEP_FLAG_CONTENDED);
        skipped |= !so_measured(pt);
    }
    so_frame_fill(&fr, so, &fit, have, target);
    fputs("<figure><figcaption>Scale-out of ", f);
    report_html_esc(f, d->sweep->rows[so->variant].variant.label);
    fputs(": capacity within the SLO against the replica count (the whisker runs from the low "
          "end of the repeats' 95% interval to the higher of its high end and the search's "
          "bracket), the Universal Scalability Law fitted to the points, and the linear "
          "line the plan assumes without a scale-out</figcaption>\n",
          f);
    output_html_svg_open(f, "chart-scale-out", "chart", SW, SH, "Scale-out: capacity by replicas");
    so_axes(f, &fr, so_nmax(so, &fit, have));
    if (x1 > 0)
        so_linear(f, &fr, x1);
    if (have)
        so_curve(f, &fr, &fit);
    if (target > 0)
        so_target(f, &fr, target);
    if (have && fit.peak_replicas > 0 && fit.peak_replicas < fr.xr)
        so_peak(f, &fr, &fit);
    for (size_t i = 0; i < so->npoints; i++)
        so_point(f, &fr, &so->points[i]);
    so_legend(f, have, x1 > 0, contended, apart, skipped, target > 0);
    fputs("</svg>\n<p class=\"so-meaning\">", f);
    if (have) {
        char text[512], line[600];
        usl_describe(&fit, text, sizeof(text));
        snprintf(line, sizeof(line), "The points are %s (residual %.1f%%).", text,
                 100 * fit.residual);
        report_html_esc(f, line);
    } else {
        report_html_esc(f, "Too few usable points for a curve: the fit needs the 1-replica point "
                           "and one more that is the app's.");
    }
    fputs("</p></figure>\n", f);
}
