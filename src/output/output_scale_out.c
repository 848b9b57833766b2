/* The scale-out in the outputs: results.json's top-level `scale_out` (null when not run) and
 * the scale-out table of results.md and the terminal: each point's capacity within the SLO
 * with its interval, per pod, and as a share of linear (N x the 1-replica capacity); the
 * Universal Scalability Law fitted to the usable points. */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "advise/advise.h"
#include "advise/sizing.h"
#include "advise/usl.h"
#include "core/jb.h"
#include "output/output_capacity.h"
#include "output/output.h"
#include "output/output_int.h"
#include "sweep/search.h"

static const char *from_name(enum sweep_point_from f)
{
    switch (f) {
    case SWEEP_POINT_SHAPE_SEARCH:
        return "shape-search";
    case SWEEP_POINT_SKIPPED_BUDGET:
        return "skipped: budget";
    case SWEEP_POINT_FAILED:
        return "failed";
    case SWEEP_POINT_MEASURED:
        break;
    }
    return "measured";
}

const char *output_scale_out_limited_by(const struct sweep_scale_out *so, const struct usl_fit *f,
                                        bool have_fit)
{
    unsigned nmax = 0;
    for (size_t i = 0; i < so->npoints; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        if (pt->from == SWEEP_POINT_SKIPPED_BUDGET)
            return "budget";
    }
    for (size_t i = 0; i < so->npoints; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        if (pt->flags & SWEEP_FLAG_CONTENDED)
            return "contended";
        if (pt->flags & SWEEP_FLAG_GEN_SATURATED || pt->cap.limited_by == CAPACITY_LIMIT_GENERATOR)
            return "generator";
        if (pt->cap.limited_by == CAPACITY_LIMIT_MAX_RPS)
            return "max-rps";
        if (pt->replicas > nmax)
            nmax = pt->replicas;
    }
    if (have_fit && f->peak_replicas > 0 && f->peak_replicas <= nmax)
        return "peak";
    return "max-replicas";
}

static void add_num_or_null(struct jb *b, cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        jb_num(b, o, k, v);
    else
        jb_null(b, o, k);
}

/* The replica count the curve gave for the advice's target: the sizing's own (advise/sizing.h,
 * step 4 of the answer's order), the one recommendation.replicas, values.yaml and the HPA
 * carry; absent when the curve was not read (another variant measured, no target, no fit). */
static void json_curve_replicas(struct jb *b, cJSON *o, const struct advice *a)
{
    const struct sizing *s = a ? &a->sizing : NULL;

    if (!s || !s->curve_read)
        return;
    cJSON *r = jb_obj(b, o, "replicas");
    if (!r)
        return;
    if (s->curve.reachable)
        jb_num(b, r, "from_curve", s->curve.replicas);
    else
        jb_null(b, r, "from_curve");
    jb_num(b, r, "linear", s->replicas_linear);
    jb_bool(b, r, "target_reachable", !s->unreachable);
    jb_num(b, r, "most_rps", s->curve.most_rps);
    jb_num(b, r, "most_at", s->curve.most_at);
    jb_num(b, r, "cap", s->curve.cap);
    jb_str(b, r, "why", s->replicas_note);
}

static void json_point(struct jb *b, cJSON *arr, const struct sweep_scale_point *pt)
{
    cJSON *p = jb_obj(b, arr, NULL), *fl;
    if (!p)
        return;
    jb_num(b, p, "replicas", pt->replicas);
    if (pt->cap.rps > 0) {
        jb_num(b, p, "rps", pt->cap.rps);
        output_capacity_interval(b, p, &pt->cap);
    } else {
        jb_null(b, p, "rps");
        jb_null(b, p, "interval");
    }
    jb_num(b, p, "repeats", (double)pt->cap.interval.n);
    fl = jb_arr(b, p, "flags");
    if (fl && (pt->flags & SWEEP_FLAG_CONTENDED))
        jb_push_str(b, fl, "contended");
    if (fl && (pt->flags & SWEEP_FLAG_GEN_SATURATED))
        jb_push_str(b, fl, "generator");
    /* The capacity's own marks (noisy, budget, ...), as a variant's slo_capacity.flags name
     * them; contended is the point's, above. */
    for (unsigned bit = 1; fl && bit && bit <= CAPACITY_FLAG_LAST; bit <<= 1) {
        const char *name = output_capacity_flag_name(bit);
        if ((pt->cap.flags & bit) && name && bit != CAPACITY_FLAG_CONTENDED)
            jb_push_str(b, fl, name);
    }
    jb_bool(b, p, "valid", pt->cap.valid);
    jb_bool(b, p, "in_fit", advise_scale_out_point_usable(pt));
    jb_str(b, p, "from", from_name(pt->from));
    if (pt->cap.cpu_cores >= 0) {
        jb_num(b, p, "cpu_cores", pt->cap.cpu_cores / pt->replicas);
        jb_num(b, p, "cpu_cores_total", pt->cap.cpu_cores);
    } else {
        jb_null(b, p, "cpu_cores");
        jb_null(b, p, "cpu_cores_total");
    }
    if (pt->note[0])
        jb_str(b, p, "note", pt->note);
}

void output_scale_out_json(struct jb *b, cJSON *root, const struct sweep *s, const struct advice *a)
{
    const struct sweep_scale_out *so = s ? s->scale_out : NULL;
    struct usl_fit f;
    cJSON *o, *arr;

    if (!so || !so->run) {
        jb_null(b, root, "scale_out");
        return;
    }
    o = jb_obj(b, root, "scale_out");
    if (!o)
        return;
    jb_str(b, o, "variant", s->rows[so->variant].variant.spec);
    arr = jb_arr(b, o, "points");
    for (size_t i = 0; arr && i < so->npoints; i++)
        json_point(b, arr, &so->points[i]);
    bool fit = advise_scale_out_fit(so, &f) == 0;
    if (fit) {
        cJSON *u = jb_obj(b, o, "usl");
        char text[512];
        if (u) {
            jb_num(b, u, "x1", f.x1);
            jb_num(b, u, "s", f.s);
            jb_num(b, u, "k", f.k);
            add_num_or_null(b, u, "s_err", f.s_err);
            add_num_or_null(b, u, "k_err", f.k_err);
            add_num_or_null(b, u, "peak_replicas", f.peak_replicas > 0 ? f.peak_replicas : NAN);
            add_num_or_null(b, u, "peak_rps", f.peak_x);
            jb_num(b, u, "residual", f.residual);
            jb_bool(b, u, "linear", f.linear);
            usl_describe(&f, text, sizeof(text));
            jb_str(b, u, "meaning", text);
        }
    } else {
        jb_null(b, o, "usl");
    }
    jb_str(b, o, "limited_by", output_scale_out_limited_by(so, &f, fit));
    json_curve_replicas(b, o, a);
}

/* The table's last column: why a point is apart from the curve, or where it came from. */
static const char *point_mark(const struct sweep_scale_point *pt)
{
    if (pt->flags & SWEEP_FLAG_CONTENDED)
        return "contended: left out of the fit";
    if (pt->from != SWEEP_POINT_MEASURED && pt->from != SWEEP_POINT_SHAPE_SEARCH)
        return from_name(pt->from);
    if (!pt->cap.valid) {
        if (advise_scale_out_point_usable(pt))
            return "noisy: weighed by its interval";
        return advise_scale_out_point_bound(pt) > 0
                   ? "did not hold its repeats: left out of the fit, bounds the curve"
                   : "not valid: left out of the fit";
    }
    return pt->from == SWEEP_POINT_SHAPE_SEARCH ? from_name(pt->from) : "";
}

void output_scale_out_table(FILE *f, const struct sweep *s, bool markdown)
{
    const struct sweep_scale_out *so = s ? s->scale_out : NULL;
    struct usl_fit fit;
    char text[512];

    if (!so)
        return;
    if (!so->run) {
        if (so->note[0])
            fprintf(f, markdown ? "\n%s.\n" : "\n  %s.\n", so->note);
        return;
    }
    double x1 = so->points[0].cap.rps;
    /* The capacity column as wide as its widest cell, as the sweep's table. */
    int capw = 28;
    for (size_t i = 0; !markdown && i < so->npoints; i++) {
        char cap[OUTPUT_CAPACITY_LEN];
        int w = (int)strlen(output_fmt_capacity_figure(&so->points[i].cap, cap));
        capw = w > capw ? w : capw;
    }
    if (markdown)
        fprintf(f,
                "\n### Scale-out of %s\n\n| replicas | capacity @SLO [95%% interval] | per pod | "
                "%% of linear | |\n|---|---|---|---|---|\n",
                s->rows[so->variant].variant.spec);
    else
        fprintf(f, "\n  Scale-out of %s\n  %8s %-*s %10s %10s\n",
                s->rows[so->variant].variant.label, "replicas", capw,
                "capacity @SLO [95% interval]", "per pod", "% linear");
    for (size_t i = 0; i < so->npoints; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        char cap[OUTPUT_CAPACITY_LEN] = "-", per[OUTPUT_CAPACITY_LEN] = "-",
             lin[OUTPUT_CAPACITY_LEN] = "-";
        struct capacity_shown sh = {0};
        if (pt->cap.rps > 0) {
            output_fmt_capacity_figure(&pt->cap, cap);
            capacity_show(&pt->cap, &sh);
        }
        if (pt->cap.rps > 0 && !sh.unknown) {
            snprintf(per, sizeof(per), "%.0f", pt->cap.rps / pt->replicas);
            if (x1 > 0)
                snprintf(lin, sizeof(lin), "%.0f%%", 100 * pt->cap.rps / (x1 * pt->replicas));
        }
        const char *mark = point_mark(pt);
        if (markdown)
            fprintf(f, "| %u | %s | %s | %s | %s |\n", pt->replicas, cap, per, lin, mark);
        else
            fprintf(f, "  %8u %-*s %10s %10s  %s\n", pt->replicas, capw, cap, per, lin, mark);
    }
    if (advise_scale_out_fit(so, &fit) == 0) {
        usl_describe(&fit, text, sizeof(text));
        fprintf(f,
                markdown ? "\nThe points are %s (residual %.1f%%).\n"
                         : "\n  The points are %s (residual %.1f%%).\n",
                text, 100 * fit.residual);
    }
}
