/* `sizeup compare`: the comparison rendered for people (aligned tables, benchstat's `~`) and for
 * machines (JSON). Both read only the compare_report. */

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/jb.h"
#include "output/compare.h"

#define CELL_LEN 96
#define NCOLS    5 /* variant, A, B, change, significance */

static const struct {
    const char *key, *title, *unit;
} metrics[COMPARE_NMETRICS] = {
    [COMPARE_CAPACITY] = {"capacity_rps", "capacity @SLO", "req/s"},
    [COMPARE_THROUGHPUT] = {"throughput_rps", "throughput", "req/s"},
    [COMPARE_P95] = {"p95_ms", "p95", "ms"},
    [COMPARE_P99] = {"p99_ms", "p99", "ms"},
};

const char *compare_metric_key(enum compare_metric m)
{
    return m < COMPARE_NMETRICS ? metrics[m].key : "?";
}

const char *compare_metric_title(enum compare_metric m)
{
    return m < COMPARE_NMETRICS ? metrics[m].title : "?";
}

/* ---- text ---------------------------------------------------------------------------------- */

/* Columns are padded by what a terminal shows: "±" is two bytes and one column. */
static size_t display_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* A table of text cells, laid out once every row is known. */
struct table {
    size_t n, cap;
    char (*cells)[NCOLS][CELL_LEN];
};

/* The next row's NCOLS empty cells. The caller sized the table for every row it adds. */
static char (*table_row(struct table *t))[CELL_LEN]
{
    assert(t->n < t->cap);
    return t->cells[t->n++];
}

static void table_print(FILE *f, const struct table *t)
{
    size_t width[NCOLS] = {0};

    for (size_t i = 0; i < t->n; i++)
        for (int c = 0; c < NCOLS; c++) {
            size_t w = display_width(t->cells[i][c]);
            width[c] = w > width[c] ? w : width[c];
        }
    for (size_t i = 0; i < t->n; i++) {
        int last = NCOLS - 1;
        while (last > 0 && !t->cells[i][last][0])
            last--;
        for (int c = 0; c <= last; c++) {
            fputs(t->cells[i][c], f);
            if (c < last)
                fprintf(f, "%*s", (int)(width[c] - display_width(t->cells[i][c]) + 2), "");
        }
        fputc('\n', f);
    }
}

/* A figure in the metric's unit: whole requests per second, milliseconds to 0.1. */
static void fmt_figure(enum compare_metric m, double v, char *buf, size_t len)
{
    if (m == COMPARE_P95 || m == COMPARE_P99)
        snprintf(buf, len, v < 10 ? "%.2f" : "%.1f", v);
    else
        snprintf(buf, len, "%.0f", v);
}

/* One side of a cell: "1000 ±3% n=3" for repeats, "1000" for a single figure, "FAILED", "-". */
static void fmt_side(enum compare_metric m, const struct compare_variant *v, bool have,
                     const struct stats_summary *s, char *buf, size_t len)
{
    char fig[32];

    if (!v || !v->measured) {
        snprintf(buf, len, "%s", v ? "FAILED" : "-");
        return;
    }
    if (!have) {
        snprintf(buf, len, "-");
        return;
    }
    fmt_figure(m, m == COMPARE_CAPACITY ? v->capacity_rps : s->mean, fig, sizeof(fig));
    if (m == COMPARE_CAPACITY && s->n >= 2)
        snprintf(buf, len, "%s ±%.0f%% n=%zu", fig, stats_rel_half(s) * 100.0, s->n);
    else if (m == COMPARE_CAPACITY)
        snprintf(buf, len, "%s n=%zu", fig, s->n);
    else
        snprintf(buf, len, "%s", fig);
}

static void fmt_change(double pct, char *buf, size_t len)
{
    if (isnan(pct))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%+.1f%%", pct);
}

/* A capacity's flags as "generator, noisy" ("marked" when the file names none). */
static const char *join_flags(const struct compare_variant *v, char *buf, size_t len)
{
    size_t used = 0;

    snprintf(buf, len, "marked");
    for (size_t i = 0; i < v->nflags && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", v->flags[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

/* The significance column: the p-value when the test decided, else `~` and a short reason
 * (the one-measurement case is explained once under the tables instead of on every row). */
/* "p=0.837 n=3+3", or "p<0.001 n=3+3" below what three decimals show. */
static const char *fmt_p(const struct compare_cell *c, char *buf, size_t len)
{
    if (c->welch.p < 0.001)
        snprintf(buf, len, "p<0.001 n=%zu+%zu", c->a.n, c->b.n);
    else
        snprintf(buf, len, "p=%.3f n=%zu+%zu", c->welch.p, c->a.n, c->b.n);
    return buf;
}

static void fmt_sig(const struct compare_row *row, const struct compare_cell *c, char *buf,
                    size_t len)
{
    char p[48];

    switch (c->why) {
    case COMPARE_WHY_TESTED:
        snprintf(buf, len, "%s%s", c->significant ? "" : "~ ", fmt_p(c, p, sizeof(p)));
        break;
    case COMPARE_WHY_ONE_MEASUREMENT:
        snprintf(buf, len, "~");
        break;
    case COMPARE_WHY_RESOLUTION:
        snprintf(buf, len, "~ within the search's resolution (%s)", fmt_p(c, p, sizeof(p)));
        break;
    case COMPARE_WHY_FEW_REPEATS:
        snprintf(buf, len, "~ too few repeats (n=%zu+%zu)", c->a.n, c->b.n);
        break;
    case COMPARE_WHY_INVALID: {
        char fa[128], fb[128];
        snprintf(
            buf, len, "~ not valid (%s%s%s%s%s)",
            row->a->valid ? "" : "A: ", row->a->valid ? "" : join_flags(row->a, fa, sizeof(fa)),
            !row->a->valid && !row->b->valid ? "; " : "",
            row->b->valid ? "" : "B: ", row->b->valid ? "" : join_flags(row->b, fb, sizeof(fb)));
        break;
    }
    default:
        snprintf(buf, len, "~ not in %s", c->have_a ? "B" : "A");
        break;
    }
}

/* Whether a metric has anything to show: some row of both files has it on either side. */
static bool metric_shown(const struct compare_report *r, enum compare_metric m)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].a && r->rows[i].b &&
            (r->rows[i].cell[m].have_a || r->rows[i].cell[m].have_b))
            return true;
    return false;
}

static int write_metric(FILE *f, const struct compare_report *r, enum compare_metric m)
{
    /* The heading, a row per variant in both files, the geometric mean. */
    struct table t = {0, r->n + 2, calloc(r->n + 2, sizeof(*t.cells))};
    char(*cell)[CELL_LEN];

    if (!t.cells)
        return -ENOMEM;
    cell = table_row(&t);
    snprintf(cell[0], CELL_LEN, "%s (%s)", metrics[m].title, metrics[m].unit);
    snprintf(cell[1], CELL_LEN, "A");
    snprintf(cell[2], CELL_LEN, "B");
    snprintf(cell[3], CELL_LEN, "change");
    snprintf(cell[4], CELL_LEN, "significance");
    for (size_t i = 0; i < r->n; i++) {
        const struct compare_row *row = &r->rows[i];
        const struct compare_cell *c = &row->cell[m];
        if (!row->a || !row->b)
            continue;
        cell = table_row(&t);
        snprintf(cell[0], CELL_LEN, "%s", row->spec);
        fmt_side(m, row->a, c->have_a, &c->a, cell[1], CELL_LEN);
        fmt_side(m, row->b, c->have_b, &c->b, cell[2], CELL_LEN);
        fmt_change(c->change_pct, cell[3], CELL_LEN);
        if (row->a->measured && row->b->measured)
            fmt_sig(row, c, cell[4], CELL_LEN);
    }
    const struct compare_geomean *g = &r->overall[m];
    if (g->n > 1) {
        cell = table_row(&t);
        snprintf(cell[0], CELL_LEN, "geomean");
        fmt_figure(m, g->a, cell[1], CELL_LEN);
        fmt_figure(m, g->b, cell[2], CELL_LEN);
        fmt_change(g->change_pct, cell[3], CELL_LEN);
    }
    table_print(f, &t);
    fputc('\n', f);
    free(t.cells);
    return 0;
}

static void write_heading(FILE *f, const char *name, const struct compare_file *x)
{
    fprintf(f, "%s  %s  (%s%s%s, %s)\n", name, x->source, x->tool,
            x->started_at[0] ? ", started " : "", x->started_at,
            x->capacity_mode ? "capacity search" : "fixed load");
}

static bool write_one_sided(FILE *f, const struct compare_report *r)
{
    bool any = false;

    for (int side = 0; side < 2; side++) {
        int listed = 0;
        for (size_t i = 0; i < r->n; i++) {
            const struct compare_variant *only = side ? r->rows[i].b : r->rows[i].a;
            if (!only || (side ? r->rows[i].a : r->rows[i].b))
                continue;
            fprintf(f, "%s%s", listed++ ? " " : side ? "only in B: " : "only in A: ", only->v.spec);
        }
        if (listed)
            fputc('\n', f);
        any |= listed > 0;
    }
    return any;
}

static bool write_overall(FILE *f, const struct compare_report *r)
{
    const struct compare_geomean *g = &r->overall[COMPARE_CAPACITY];
    size_t judged = 0;

    if (metric_shown(r, COMPARE_CAPACITY)) {
        for (size_t i = 0; i < r->n; i++)
            judged += r->rows[i].cell[COMPARE_CAPACITY].have_a &&
                      r->rows[i].cell[COMPARE_CAPACITY].have_b;
        fprintf(f, "overall: capacity");
        if (g->n)
            fprintf(f, " %+.1f%% (geomean of %zu variant%s)", g->change_pct, g->n,
                    g->n == 1 ? "" : "s");
        fprintf(f, "; significantly lower in %zu, higher in %zu, ~ in %zu\n", r->significant[0],
                r->significant[1], judged - r->significant[0] - r->significant[1]);
    }
    return compare_write_verdict(f, r) || judged > 0;
}

bool compare_write_verdict(FILE *f, const struct compare_report *r)
{
    if (!r->fail_set)
        return false;
    if (r->ndiffer) {
        fprintf(f, "not judged: A and B were judged by different inputs (%s%s)\n", r->differ[0],
                r->ndiffer > 1 ? ", ..." : "");
    } else if (r->nregressions) {
        fprintf(f, "REGRESSION: capacity fell by more than %g%%, significantly, in", r->fail_pct);
        for (size_t i = 0; i < r->n; i++)
            if (r->rows[i].regression)
                fprintf(f, " %s (%+.1f%%)", r->rows[i].spec,
                        r->rows[i].cell[COMPARE_CAPACITY].change_pct);
        fputc('\n', f);
    } else if (r->ntestable) {
        fprintf(f, "no regression: no capacity fell by more than %g%% significantly\n",
                r->fail_pct);
    } else {
        fprintf(f,
                "no regression can be judged: no variant has %d capacity repeats on both "
                "sides\n",
                STATS_MIN_REPEATS);
    }
    return true;
}

/* What each capacity flag means for a comparison, in the words the note under the tables uses. */
static const struct {
    const char *flag, *means;
} flag_words[] = {
    {"contended", "the host could not give the variant its CPU: the figure is what the host "
                  "spared, a floor"},
    {"generator-limited", "the load generator, not the app, set the limit: the app holds at "
                          "least this much"},
    {"noisy", "the repeats disagreed too much for one figure"},
    {"too few repeats", "too few repeats for an interval"},
    {"repeats cut short", "the budget ended the repeats before the profile's count"},
    {"budget", "the time budget ended the search before it bracketed the capacity"},
    {"none passed", "not even the lowest step met the SLO"},
    {"marked", "the file says the capacity is not valid without saying why"},
};

/* Prints flag's line of the invalid note unless seen[] already holds it (*nseen of max). */
static void invalid_flag_line(FILE *f, const char *flag, const char **seen, size_t *nseen,
                              size_t max)
{
    const char *means = "not explained by this version of sizeup compare";

    for (size_t i = 0; i < *nseen; i++)
        if (strcmp(seen[i], flag) == 0)
            return;
    if (*nseen < max)
        seen[(*nseen)++] = flag;
    for (size_t k = 0; k < sizeof(flag_words) / sizeof(flag_words[0]); k++)
        if (strcmp(flag_words[k].flag, flag) == 0)
            means = flag_words[k].means;
    fprintf(f, "   %s: %s.\n", flag, means);
}

/* The invalid capacities' note: each reason the rows carry, said once with what it means. */
static void write_invalid_note(FILE *f, const struct compare_report *r)
{
    const char *seen[2 * COMPARE_MAX_FLAGS + 1];
    size_t nseen = 0, max = sizeof(seen) / sizeof(seen[0]);

    fprintf(f, "~ not valid: a side's capacity is not the app's own figure, so its change is not "
               "judged:\n");
    for (size_t i = 0; i < r->n; i++) {
        const struct compare_row *row = &r->rows[i];
        if (row->cell[COMPARE_CAPACITY].why != COMPARE_WHY_INVALID)
            continue;
        const struct compare_variant *side[2] = {row->a, row->b};
        for (int k = 0; k < 2; k++) {
            if (!side[k] || side[k]->valid)
                continue;
            if (side[k]->nflags == 0)
                invalid_flag_line(f, "marked", seen, &nseen, max);
            for (size_t j = 0; j < side[k]->nflags; j++)
                invalid_flag_line(f, side[k]->flags[j], seen, &nseen, max);
        }
    }
}

/* Each reason for a `~` is explained once, under the tables, not on every row. */
static void write_notes(FILE *f, const struct compare_report *r, bool sep)
{
    if (!r->whys && !r->ntestable)
        return;
    if (sep)
        fputc('\n', f);
    if (r->ntestable)
        fprintf(f,
                "p: Welch's t-test on the capacity repeats; a change is significant when\n"
                "   p < %.2f, and `~` otherwise.\n",
                STATS_ALPHA);
    if (r->whys & (1u << COMPARE_WHY_ONE_MEASUREMENT)) {
        if (r->a->capacity_mode && r->b->capacity_mode)
            fprintf(f, "~: throughput, p95 and p99 are measured once per variant: their change "
                       "is shown,\n   never judged significant.\n");
        else
            fprintf(f, "~: a fixed-load sweep measures each variant once, without repeats: "
                       "the change is\n   shown, never judged significant. A capacity search "
                       "repeats its boundary\n   and can be compared.\n");
    }
    if (r->whys & (1u << COMPARE_WHY_FEW_REPEATS))
        fprintf(f,
                "~ too few repeats: a test needs at least %d repeats of the capacity on each "
                "side\n   (profile search.repeats, --repeat).\n",
                STATS_MIN_REPEATS);
    if (r->whys & (1u << COMPARE_WHY_RESOLUTION))
        fprintf(f, "~ within the search's resolution: the capacities differ by less than the "
                   "width of\n   the searches' final brackets (the lowest failing rate above "
                   "each capacity):\n   the repeats cannot see a difference that small.\n");
    if (r->whys & (1u << COMPARE_WHY_INVALID))
        write_invalid_note(f, r);
    if (r->whys & (1u << COMPARE_WHY_MISSING))
        fprintf(f, "~ not in A / B: that side has no such figure (the variant FAILED there, or "
                   "it was\n   swept in another mode).\n");
}

/* Inputs of the answer only (cost, target, planning, ...): said, as the recommendations of A
 * and B may differ for them, but no figure measured does. */
static void write_answer_inputs(FILE *f, const struct compare_report *r)
{
    if (!r->nanswer_differ)
        return;
    fprintf(f, "The answers' inputs differ (the measurements are compared all the same; the "
               "recommendations\nmay differ for these):\n");
    for (size_t i = 0; i < r->nanswer_differ; i++)
        fprintf(f, "  %s\n", r->answer_differ[i]);
    fputc('\n', f);
}

/* Two sweeps judged differently: which inputs differ, and that nothing is compared. */
static void write_refusal(FILE *f, const struct compare_report *r)
{
    fprintf(f, "Not compared: A and B were judged by different inputs, so a change between them "
               "would\nnot be the app's:\n");
    for (size_t i = 0; i < r->ndiffer; i++)
        fprintf(f, "  %s\n", r->differ[i]);
    fprintf(f, "Sweep both with the same profile's slo, search (window, warmup, precision), "
               "requests\n(headers and bodies too), thresholds and timeout, and for a fixed "
               "load the same load.\n");
    compare_write_verdict(f, r);
}

int compare_write_text(FILE *f, const struct compare_report *r)
{
    write_heading(f, "A", r->a);
    write_heading(f, "B", r->b);
    fputc('\n', f);
    write_answer_inputs(f, r);
    if (r->ndiffer) {
        write_refusal(f, r);
        return ferror(f) ? -EIO : 0;
    }
    size_t both = 0;
    for (size_t i = 0; i < r->n; i++)
        both += r->rows[i].a && r->rows[i].b;
    if (!both)
        fprintf(f, "No variant is in both files.\n\n");
    for (int m = 0; m < COMPARE_NMETRICS; m++)
        if (metric_shown(r, (enum compare_metric)m) &&
            write_metric(f, r, (enum compare_metric)m) != 0)
            return -ENOMEM;
    bool sep = write_one_sided(f, r);
    sep |= write_overall(f, r);
    write_notes(f, r, sep);
    return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static const char *const why_names[COMPARE_NWHY] = {
    [COMPARE_WHY_TESTED] = NULL,
    [COMPARE_WHY_ONE_MEASUREMENT] = "one_measurement",
    [COMPARE_WHY_FEW_REPEATS] = "too_few_repeats",
    [COMPARE_WHY_INVALID] = "not_valid",
    [COMPARE_WHY_MISSING] = "missing",
    [COMPARE_WHY_RESOLUTION] = "within_resolution",
};

static void add_num_or_null(struct jb *b, cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        jb_num(b, o, key, v);
    else
        jb_null(b, o, key);
}

static void json_side(struct jb *b, cJSON *cell, const char *key, enum compare_metric m,
                      const struct compare_variant *v, bool have, const struct stats_summary *s)
{
    if (!have) {
        jb_null(b, cell, key);
        return;
    }
    cJSON *o = jb_obj(b, cell, key);
    if (!o)
        return;
    jb_num(b, o, "value", m == COMPARE_CAPACITY ? v->capacity_rps : s->mean);
    jb_num(b, o, "n", (double)s->n);
    if (s->n >= 2) {
        jb_num(b, o, "mean", s->mean);
        jb_num(b, o, "low", s->low);
        jb_num(b, o, "high", s->high);
    }
    if (m == COMPARE_CAPACITY) {
        jb_bool(b, o, "valid", v->valid);
        cJSON *fl = jb_arr(b, o, "flags");
        for (size_t i = 0; fl && i < v->nflags; i++)
            jb_push_str(b, fl, v->flags[i]);
    }
}

static void json_cell(struct jb *b, cJSON *parent, const struct compare_row *row,
                      enum compare_metric m)
{
    const struct compare_cell *c = &row->cell[m];
    cJSON *o = jb_obj(b, parent, metrics[m].key);

    if (!o)
        return;
    json_side(b, o, "a", m, row->a, c->have_a, &c->a);
    json_side(b, o, "b", m, row->b, c->have_b, &c->b);
    add_num_or_null(b, o, "change_pct", c->change_pct);
    jb_bool(b, o, "significant", c->significant);
    add_num_or_null(b, o, "p",
                    c->why == COMPARE_WHY_TESTED || c->why == COMPARE_WHY_RESOLUTION ? c->welch.p
                                                                                     : NAN);
    if (why_names[c->why])
        jb_str(b, o, "not_tested", why_names[c->why]);
    else
        jb_null(b, o, "not_tested");
}

static void json_file(struct jb *b, cJSON *root, const char *key, const struct compare_file *x)
{
    cJSON *o = jb_obj(b, root, key);
    if (!o)
        return;
    jb_str(b, o, "source", x->source);
    jb_str(b, o, "tool", x->tool);
    jb_str(b, o, "started_at", x->started_at);
    jb_str(b, o, "mode", x->capacity_mode ? "capacity" : "fixed");
}

static const char *state_name(const struct compare_variant *v)
{
    return !v ? NULL : v->measured ? "measured" : "failed";
}

cJSON *compare_json(const struct compare_report *r)
{
    struct jb jb = JB_INIT, *b = &jb;
    cJSON *root = jb_new(b), *arr, *o, *lower, *higher, *reg;

    if (!root)
        return NULL;
    json_file(b, root, "a", r->a);
    json_file(b, root, "b", r->b);
    jb_num(b, root, "alpha", STATS_ALPHA);
    jb_num(b, root, "min_repeats", STATS_MIN_REPEATS);
    arr = jb_arr(b, root, "variants");
    lower = jb_arr(b, root, "significantly_lower");
    higher = jb_arr(b, root, "significantly_higher");
    for (size_t i = 0; arr && i < r->n; i++) {
        const struct compare_row *row = &r->rows[i];
        if (!(o = jb_obj(b, arr, NULL)))
            break;
        jb_str(b, o, "spec", row->spec);
        jb_str(b, o, "in", row->a && row->b ? "both" : row->a ? "a" : "b");
        if (row->a)
            jb_str(b, o, "state_a", state_name(row->a));
        else
            jb_null(b, o, "state_a");
        if (row->b)
            jb_str(b, o, "state_b", state_name(row->b));
        else
            jb_null(b, o, "state_b");
        for (int m = 0; m < COMPARE_NMETRICS; m++)
            json_cell(b, o, row, (enum compare_metric)m);
        jb_bool(b, o, "regression", row->regression);
        const struct compare_cell *cap = &row->cell[COMPARE_CAPACITY];
        if (cap->significant)
            jb_push_str(b, cap->change_pct > 0 ? higher : lower, row->spec);
    }
    o = jb_obj(b, root, "overall");
    for (int m = 0; o && m < COMPARE_NMETRICS; m++) {
        const struct compare_geomean *g = &r->overall[m];
        cJSON *x = jb_obj(b, o, metrics[m].key);
        if (!x)
            continue;
        jb_num(b, x, "variants", (double)g->n);
        add_num_or_null(b, x, "geomean_a", g->n ? g->a : NAN);
        add_num_or_null(b, x, "geomean_b", g->n ? g->b : NAN);
        add_num_or_null(b, x, "change_pct", g->change_pct);
    }
    arr = jb_arr(b, root, "inputs_differ");
    for (size_t i = 0; arr && i < r->ndiffer; i++)
        jb_push_str(b, arr, r->differ[i]);
    arr = jb_arr(b, root, "answer_inputs_differ");
    for (size_t i = 0; arr && i < r->nanswer_differ; i++)
        jb_push_str(b, arr, r->answer_differ[i]);
    add_num_or_null(b, root, "fail_on_regression_pct", r->fail_set ? r->fail_pct : NAN);
    reg = jb_arr(b, root, "regressions");
    for (size_t i = 0; reg && i < r->n; i++)
        if (r->rows[i].regression)
            jb_push_str(b, reg, r->rows[i].spec);
    if (jb_done(b, &root, "the comparison", NULL) != 0)
        return NULL;
    return root;
}
