/* Tests for src/output/output_html_scale_out.c: report.html's scale-out chart draws every point
 * with its whisker at its replica count, the fitted curve, the linear line, the target and the
 * peak; contended and skipped points apart, with a legend; only a sentence when no scale-out
 * ran. Also a binary with `--write DIR` writing DIR/{peaking,linear,none}/report.html for the
 * Chromium check (tests/integration/scale_out_html.sh). */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "advise/advise.h"
#include "output/output.h"
#include "sweep/runner.h"
#include "sweep_fixture.h"

enum shape { SHAPE_PEAKING, SHAPE_LINEAR, SHAPE_NONE };

struct fx {
    struct profile profile;
    struct sweep sweep;
    struct sweep_row row;
    struct sweep_scale_out so;
    struct advisor_row arow;
    struct advice advice;
    struct output_doc doc;
};

/* One point at n replicas: rps with a +-3% interval of 3 repeats. */
static void point(struct sweep_scale_point *pt, unsigned n, double rps, enum sweep_point_from from)
{
    memset(pt, 0, sizeof(*pt));
    pt->replicas = n;
    pt->from = from;
    pt->cap.searched = pt->cap.valid = true;
    pt->cap.rps = rps;
    pt->cap.cpu_cores = -1;
    pt->cap.interval =
        (struct stats_summary){3, rps, 0.03 * rps, 0.026 * rps, 0.97 * rps, 1.03 * rps};
}

/* X(N) of the law with X1 = 1000. */
static double law(double n, double s, double k)
{
    return 1000 * n / (1 + s * (n - 1) + k * n * (n - 1));
}

/* A one-variant sweep and its document: peaking (s 0.05, k 0.02: N* ~ 6.9) measured at 1, 2, 3,
 * 4, 6, a contended point at 5 and 8 skipped for the budget, target 2500 req/s; linear (1..4,
 * target 3000); or no scale-out. */
static struct fx *fx_new(enum shape shape)
{
    struct fx *f = calloc(1, sizeof(*f));
    char err[ERR_LEN];

    assert_non_null(f);
    assert_int_equal(profile_init_default(&f->profile), 0);
    f->profile.target_rps = shape == SHAPE_LINEAR ? 3000 : 2500;
    sweep_fixture_row(&f->row, &f->arow, "1@1/512Mi", 1000, 20000, &f->profile);
    f->sweep.n = 1;
    f->sweep.rows = &f->row;
    f->sweep.facts.host_millicores = 16000;
    f->sweep.facts.limits_enforced = true;
    snprintf(f->sweep.platform, sizeof(f->sweep.platform), "local");
    if (shape == SHAPE_PEAKING) {
        static const unsigned ns[7] = {1, 2, 3, 4, 5, 6, 8};
        for (size_t i = 0; i < 7; i++)
            point(&f->so.points[i], ns[i], law(ns[i], 0.05, 0.02),
                  i == 0 ? SWEEP_POINT_SHAPE_SEARCH : SWEEP_POINT_MEASURED);
        point(&f->so.points[4], 5, 1900, SWEEP_POINT_MEASURED); /* a contended host's figure */
        f->so.points[4].flags = SWEEP_FLAG_CONTENDED;
        f->so.points[6] =
            (struct sweep_scale_point){.replicas = 8, .from = SWEEP_POINT_SKIPPED_BUDGET};
        snprintf(f->so.points[6].note, sizeof(f->so.points[6].note), "the time budget ran out");
        f->so.npoints = 7;
        f->so.run = true;
    } else if (shape == SHAPE_LINEAR) {
        static const double noise[4] = {1, 1.01, 0.99, 1.005};
        for (size_t i = 0; i < 4; i++)
            point(&f->so.points[i], (unsigned)i + 1, 1000 * (double)(i + 1) * noise[i],
                  i == 0 ? SWEEP_POINT_SHAPE_SEARCH : SWEEP_POINT_MEASURED);
        f->so.npoints = 4;
        f->so.run = true;
    } else {
        snprintf(f->so.note, sizeof(f->so.note),
                 "scale-out not measured: the target needs fewer than 2 pods");
    }
    f->sweep.scale_out = &f->so;
    assert_int_equal(advise_rows(&f->arow, 1, &f->profile, &f->sweep.facts, &f->advice, err), 0);
    f->doc.rows = &f->arow;
    f->doc.n = 1;
    f->doc.advice = &f->advice;
    f->doc.sweep = &f->sweep;
    f->doc.profile = &f->profile;
    f->doc.facts = &f->sweep.facts;
    f->doc.platform = "local";
    f->doc.command = "sizeup sweep --scale-out 8 -- ./app";
    f->doc.started = 1764446400;
    f->doc.finished = 1764446500;
    output_paths_default(&f->doc.paths);
    return f;
}

static void fx_free(struct fx *f)
{
    load_result_free(&f->row.load);
    profile_free(&f->profile);
    free(f);
}

static char *render(const struct fx *f)
{
    char *buf = NULL, err[ERR_LEN] = "";
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);

    assert_non_null(m);
    if (output_report_html(m, &f->doc, err) != 0)
        fail_msg("render failed: %s", err);
    fclose(m);
    return buf;
}

/* The chart's own text: from its <svg to the </svg> after it. */
static char *chart_of(const char *html)
{
    const char *a = strstr(html, "<svg id=\"chart-scale-out\"");
    assert_non_null(a);
    const char *b = strstr(a, "</svg>");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* The integer attribute name="..." in the element starting at el. */
static int attr(const char *el, const char *name)
{
    char key[32];
    snprintf(key, sizeof(key), " %s=\"", name);
    const char *p = strstr(el, key);
    const char *end = strchr(el, '>');
    assert_non_null(p);
    assert_true(p < end);
    return (int)strtol(p + strlen(key), NULL, 10);
}

static void test_peaking(void **state)
{
    (void)state;
    struct fx *f = fx_new(SHAPE_PEAKING);
    char *html = render(f), *svg = chart_of(html);

    /* Six measured points (one contended), each with a whisker; 8 skipped: a cross. */
    assert_int_equal(count(svg, "class=\"so-point"), 6);
    assert_int_equal(count(svg, "class=\"so-point so-contended\""), 1);
    assert_int_equal(count(svg, "class=\"so-whisker\""), 6);
    assert_int_equal(count(svg, "class=\"so-skipped\" data-replicas=\"8\""), 1);
    assert_non_null(strstr(svg, "the time budget ran out"));
    /* The fitted points left to right and upwards: x grows with N, y shrinks as rps rises. */
    int lastx = -1, lasty = 1 << 30;
    for (const char *p = strstr(svg, "<circle class=\"so-point\""); p;
         p = strstr(p + 1, "<circle class=\"so-point\"")) {
        int x = attr(p, "cx"), y = attr(p, "cy");
        assert_true(x > lastx);
        assert_true(y < lasty);
        lastx = x;
        lasty = y;
    }
    /* Each whisker spans its point: low below (larger y), high above. */
    for (const char *p = strstr(svg, "<circle class=\"so-point\""); p;
         p = strstr(p + 1, "<circle class=\"so-point\"")) {
        char key[48];
        snprintf(key, sizeof(key), "class=\"so-whisker\" data-replicas=\"%d\"",
                 attr(p, "data-replicas"));
        const char *w = strstr(svg, key);
        assert_non_null(w);
        int x0, yl, x1, yh, yl2, x2, yh2;
        const char *d = strstr(w, " d=\"M");
        assert_non_null(d);
        assert_int_equal(
            sscanf(d, " d=\"M%d %dh10M%d %dV%dM%d %dh10", &x0, &yl, &x1, &yl2, &yh, &x2, &yh2), 7);
        assert_int_equal(x1, attr(p, "cx"));
        assert_true(yl > attr(p, "cy") && yh < attr(p, "cy"));
    }
    /* The curve: x strictly increasing; it rises to the peak then falls. */
    const char *pl = strstr(svg, "<polyline class=\"so-usl\"");
    assert_non_null(pl);
    const char *pts = strstr(pl, "points=\"") + 8;
    int px, py, prev = -1, n = 0, miny = 1 << 30, minat = 0;
    while (sscanf(pts, "%d,%d", &px, &py) == 2) {
        assert_true(px > prev);
        prev = px;
        if (py < miny) {
            miny = py;
            minat = n;
        }
        n++;
        pts = strchr(pts, ' ');
        if (!pts)
            break;
        pts++;
    }
    assert_true(n > 60);
    assert_true(minat > 0 && minat < n - 1); /* the peak is inside the drawn range */
    assert_non_null(strstr(svg, "class=\"so-linear\""));
    assert_non_null(strstr(svg, "target 2500 req/s"));
    assert_non_null(strstr(svg, "class=\"so-peak\""));
    assert_non_null(strstr(svg, "peak N* = 6."));
    /* The legend names the contended and skipped marks. */
    assert_non_null(strstr(svg, ">contended</text>"));
    assert_non_null(strstr(svg, ">not measured</text>"));
    assert_non_null(strstr(html, "The points are peaking near"));
    free(svg);
    free(html);
    fx_free(f);
}

static void test_linear(void **state)
{
    (void)state;
    struct fx *f = fx_new(SHAPE_LINEAR);
    char *html = render(f), *svg = chart_of(html);

    assert_int_equal(count(svg, "<circle class=\"so-point\""), 4);
    assert_null(strstr(svg, "so-contended"));
    assert_null(strstr(svg, "class=\"so-skipped\""));
    assert_null(strstr(svg, "class=\"so-peak\""));
    assert_null(strstr(svg, ">contended</text>"));
    assert_non_null(strstr(svg, "class=\"so-usl\""));
    assert_non_null(strstr(svg, "target 3000 req/s"));
    assert_non_null(strstr(html, "The points are linear within the measurement&#39;s noise"));
    free(svg);
    free(html);
    fx_free(f);
}

static void test_none(void **state)
{
    (void)state;
    struct fx *f = fx_new(SHAPE_NONE);
    char *html = render(f);

    assert_null(strstr(html, "chart-scale-out"));
    assert_non_null(strstr(html, "<p id=\"scale-out-none\">No scale-out chart: scale-out not "
                                 "measured: the target needs fewer than 2 pods.</p>"));
    free(html);
    f->sweep.scale_out = NULL;
    html = render(f);
    assert_non_null(strstr(html, "<p id=\"scale-out-none\">No scale-out chart: no scale-out ran"));
    free(html);
    fx_free(f);
}

/* A plateau behind a shared backend: 1 and 2 replicas precise, 3 and 4 at the plateau marked
 * noisy by their intervals' width (four repeats, +/-13%), 5 marked noisy with a narrow interval
 * (its repeats mostly missed the SLO). The wide ones join the fit with their small weight, so
 * the plateau is not read as linear; the narrow one stays out; the table says which is which. */
static void test_noisy_plateau(void **state)
{
    (void)state;
    struct fx *f = fx_new(SHAPE_LINEAR);
    struct sweep_scale_out *so = &f->so;
    struct usl_fit fit;
    char *buf = NULL;
    size_t len = 0;

    point(&so->points[0], 1, 1000, SWEEP_POINT_SHAPE_SEARCH);
    point(&so->points[1], 2, 2000, SWEEP_POINT_MEASURED);
    for (unsigned i = 2; i < 5; i++) {
        double rps = i < 4 ? 2350 : 2900;
        point(&so->points[i], i + 1, rps, SWEEP_POINT_MEASURED);
        so->points[i].cap.valid = false;
        so->points[i].cap.flags = CAPACITY_FLAG_NOISY;
        if (i < 4) /* sd 200 of 4 repeats: t(3) 3.18 x 200 / 2 = 318, +/-13.5% */
            so->points[i].cap.interval =
                (struct stats_summary){4, rps, 200, 318, rps - 318, rps + 318};
    }
    so->npoints = 5;
    assert_true(advise_scale_out_point_usable(&so->points[1]));
    assert_true(advise_scale_out_point_usable(&so->points[2]));
    assert_true(advise_scale_out_point_usable(&so->points[3]));
    assert_false(advise_scale_out_point_usable(&so->points[4]));
    assert_int_equal(advise_scale_out_noisy_used(so), 2);
    /* The narrow one is the app's figure that did not hold: it bounds the curve at 5; the
     * points the fit takes bound nothing, nor does a contended one. */
    assert_true(advise_scale_out_point_bound(&so->points[4]) == 2900);
    assert_true(advise_scale_out_point_bound(&so->points[2]) == 0);
    assert_true(advise_scale_out_point_bound(&so->points[1]) == 0);
    so->points[4].flags |= SWEEP_FLAG_CONTENDED;
    assert_true(advise_scale_out_point_bound(&so->points[4]) == 0);
    so->points[4].flags &= ~SWEEP_FLAG_CONTENDED;

    assert_int_equal(advise_scale_out_fit(so, &fit), 0);
    assert_int_equal(fit.used, 4);
    assert_false(fit.linear);
    /* Without the noisy points, 1 and 2 alone read linear: what leaving them out did. */
    so->points[2].cap.interval.n = so->points[3].cap.interval.n = 1;
    assert_int_equal(advise_scale_out_fit(so, &fit), 0);
    assert_int_equal(fit.used, 2);
    assert_true(fit.linear);
    so->points[2].cap.interval.n = so->points[3].cap.interval.n = 4;

    /* Two repeats that agree to the request, the interval's top the search's bracket: the fit
     * weighs the point by that interval (width / 2 x 1.96), not by the repeats' 0.35. */
    so->points[1].cap.interval = (struct stats_summary){2, 2010, 0.5, 4.5, 2005.5, 2100};
    so->points[1].cap.rps = 2010;
    struct sizing_scale_out *sso = calloc(1, sizeof(*sso));
    assert_non_null(sso);
    advise_scale_out(so, sso);
    assert_true(fabs(sso->pts[1].se - (2100 - 2005.5) / (2 * USL_Z)) < 1e-9);
    assert_true(fabs(sso->pts[1].low - 2005.5) < 1e-9);
    assert_true(fabs(sso->pts[1].rps - 2010) < 1e-9);
    assert_false(sso->pts[4].usable);
    assert_true(sso->pts[4].bound == 2900 && sso->pts[2].bound == 0);
    free(sso);

    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    output_scale_out_table(m, &f->sweep, true);
    fclose(m);
    assert_int_equal(count(buf, "| noisy: weighed by its interval |"), 2);
    assert_int_equal(
        count(buf, "| did not hold its repeats: left out of the fit, bounds the curve |"), 1);
    assert_non_null(strstr(buf, "| 1 | 1000 req/s [970, 1030] | 1000 | 100% | shape-search |"));
    assert_null(strstr(buf, "linear within"));
    free(buf);

    /* The chart draws what the fit took: the wide noisy points as dots, the one that did not
     * hold as a hollow square that says why, under a "not fitted" legend. */
    char *html = render(f), *svg = chart_of(html);
    assert_int_equal(count(svg, "<circle class=\"so-point\""), 4);
    assert_int_equal(count(svg, "class=\"so-point so-apart\""), 1);
    assert_int_equal(count(svg, "so-contended"), 0);
    assert_int_equal(count(svg, ", noisy: weighed by its interval</title>"), 2);
    assert_non_null(strstr(svg, "did not hold its repeats: not fitted, bounds the curve</title>"));
    assert_non_null(strstr(svg, "<title>5 replicas: 2900 req/s ["));
    assert_non_null(strstr(svg, ">not fitted</text>"));
    assert_null(strstr(svg, ">contended</text>"));
    free(svg);
    free(html);
    fx_free(f);
}

/* --write DIR: DIR/<shape>/report.html for each fixture. */
static int write_all(const char *dir)
{
    static const char *const names[3] = {"peaking", "linear", "none"};
    char path[4096], err[ERR_LEN] = "";

    for (int s = 0; s < 3; s++) {
        struct fx *f = fx_new((enum shape)s);
        snprintf(path, sizeof(path), "%s/%s", dir, names[s]);
        mkdir(dir, 0755);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%s/report.html", dir, names[s]);
        FILE *o = fopen(path, "w");
        int rc = o ? output_report_html(o, &f->doc, err) : -errno;
        if (o && fclose(o) != 0 && rc == 0)
            rc = -EIO;
        fx_free(f);
        if (rc) {
            fprintf(stderr, "%s: %s\n", path, err);
            return 1;
        }
        printf("%s\n", path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0)
        return write_all(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peaking),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_noisy_plateau),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
