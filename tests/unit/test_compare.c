/* Tests for src/output/compare.c and compare_render.c: reading results.json (well-formed and
 * malformed), the significance rules (identical runs, a halved capacity, too few repeats,
 * invalid capacities, fixed-mode files), the regression threshold, and the text and JSON
 * renderings users and CI read. */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "output/compare.h"

/* ---- fixtures ---------------------------------------------------------------------------- */

struct fx_variant {
    const char *spec;
    const char *state; /* NULL: "measured" */
    double throughput, p95, p99;
    bool capacity; /* write slo_capacity (else null: fixed mode) */
    double reps[CAPACITY_MAX_REPEATS + 2];
    size_t nreps;
    bool invalid;
    const char *flag; /* one flag, or NULL */
    double bracket;   /* > 0: the search step that failed above the capacity */
};

/* A results.json as a sweep writes it, reduced to what compare reads plus a few fields it
 * must ignore. Returns an owned string. */
static char *fixture(const struct fx_variant *v, size_t n, const char *tool)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool", tool ? tool : "sizeup 0.1.0");
    cJSON_AddStringToObject(root, "started_at", "2026-12-01T03:00:00Z");
    cJSON_AddStringToObject(root, "platform", "local");
    cJSON *arr = cJSON_AddArrayToObject(root, "variants");
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "spec", v[i].spec);
        cJSON_AddStringToObject(o, "state", v[i].state ? v[i].state : "measured");
        cJSON_AddNumberToObject(o, "throughput_rps", v[i].throughput);
        cJSON *lat = cJSON_AddObjectToObject(o, "latency_ms");
        cJSON_AddNumberToObject(lat, "p50", v[i].p95 / 2);
        cJSON_AddNumberToObject(lat, "p95", v[i].p95);
        cJSON_AddNumberToObject(lat, "p99", v[i].p99);
        cJSON_AddBoolToObject(o, "capacity", true);
        if (v[i].capacity) {
            cJSON *c = cJSON_AddObjectToObject(o, "slo_capacity");
            double sum = 0;
            for (size_t k = 0; k < v[i].nreps; k++)
                sum += v[i].reps[k];
            cJSON_AddNumberToObject(c, "rps", v[i].nreps ? sum / (double)v[i].nreps : 0);
            cJSON_AddItemToObject(c, "repeat_rps",
                                  cJSON_CreateDoubleArray(v[i].reps, (int)v[i].nreps));
            cJSON_AddNumberToObject(c, "repeats", (double)v[i].nreps);
            cJSON_AddStringToObject(c, "limited_by", "slo-p95");
            cJSON_AddBoolToObject(c, "valid", !v[i].invalid);
            cJSON *fl = cJSON_AddArrayToObject(c, "flags");
            if (v[i].flag)
                cJSON_AddItemToArray(fl, cJSON_CreateString(v[i].flag));
            cJSON *steps = cJSON_AddArrayToObject(c, "steps");
            if (v[i].bracket > 0) {
                /* What a search leaves: a probe, the passing step at the capacity, and failing
                 * steps above it; only the lowest failing search step the app (not the
                 * generator) missed bounds the capacity. */
                static const struct {
                    const char *kind;
                    double factor;
                    bool at_bracket, pass, gen;
                } fx[] = {
                    {"probe", 1.01, false, false, false},  {"search", 0.99, false, true, false},
                    {"search", 1.0, true, false, false},   {"search", 1.5, true, false, false},
                    {"search", 1.005, false, false, true}, {"repeat", 0.99, false, true, false}};
                for (size_t k = 0; k < sizeof(fx) / sizeof(fx[0]); k++) {
                    cJSON *st = cJSON_CreateObject();
                    double at = fx[k].at_bracket ? v[i].bracket : sum / (double)v[i].nreps;
                    cJSON_AddStringToObject(st, "kind", fx[k].kind);
                    cJSON_AddNumberToObject(st, "offered_rps", at * fx[k].factor);
                    cJSON_AddBoolToObject(st, "pass", fx[k].pass);
                    cJSON_AddBoolToObject(st, "generator_limited", fx[k].gen);
                    cJSON_AddItemToArray(steps, st);
                }
            }
        } else {
            cJSON_AddNullToObject(o, "slo_capacity");
        }
        cJSON_AddItemToArray(arr, o);
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    assert_non_null(s);
    return s;
}

static void parse_ok(const char *text, const char *name, struct compare_file *f)
{
    char err[ERR_LEN] = "";
    int rc = compare_parse(text, strlen(text), name, f, err);
    if (rc)
        fail_msg("parse %s: %d %s", name, rc, err);
}

/* Parses two fixtures and compares them with the given threshold. */
static void run(const struct fx_variant *va, size_t na, const struct fx_variant *vb, size_t nb,
                double fail_pct, struct compare_file *a, struct compare_file *b,
                struct compare_report *r)
{
    char *ta = fixture(va, na, NULL), *tb = fixture(vb, nb, NULL);
    parse_ok(ta, "A.json", a);
    parse_ok(tb, "B.json", b);
    free(ta);
    free(tb);
    assert_int_equal(compare_run(a, b, fail_pct, r), 0);
}

static char *text_of(const struct compare_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(compare_write_text(f, r), 0);
    fclose(f);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void done(struct compare_file *a, struct compare_file *b, struct compare_report *r)
{
    compare_report_free(r);
    compare_file_free(a);
    compare_file_free(b);
}

static const struct fx_variant base[] = {
    {"1@0.5/512Mi", NULL, 480, 40, 80, true, {1010, 990, 1000}, 3, false, NULL, 0},
    {"2@1/1Gi", NULL, 950, 35, 70, true, {2050, 1950, 2010}, 3, false, NULL, 0},
};

/* ---- significance ------------------------------------------------------------------------ */

static void test_identical_all_tilde(void **state)
{
    (void)state;
    struct compare_file a, b;
    struct compare_report r;
    run(base, 2, base, 2, 0, &a, &b, &r);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++)
        for (int m = 0; m < COMPARE_NMETRICS; m++) {
            assert_false(r.rows[i].cell[m].significant);
            assert_true(r.rows[i].cell[m].have_a && r.rows[i].cell[m].have_b);
            assert_true(fabs(r.rows[i].cell[m].change_pct) < 1e-9);
        }
    /* The capacity was tested (3 repeats each side), and found no difference. */
    assert_int_equal(r.rows[0].cell[COMPARE_CAPACITY].why, COMPARE_WHY_TESTED);
    assert_true(r.rows[0].cell[COMPARE_CAPACITY].welch.p > 0.99);
    assert_int_equal(r.ntestable, 2);
    assert_int_equal(r.nregressions, 0);
    assert_int_equal(r.significant[0] + r.significant[1], 0);
    char *t = text_of(&r);
    assert_non_null(strstr(t, "~ p=1.000 n=3+3"));
    assert_non_null(strstr(t, "significantly lower in 0, higher in 0, ~ in 2"));
    assert_non_null(strstr(t, "no regression: no capacity fell by more than 0% significantly"));
    free(t);
    done(&a, &b, &r);
}

static void test_halved_is_significant_drop(void **state)
{
    (void)state;
    struct fx_variant slow[2];
    memcpy(slow, base, sizeof(slow));
    /* The first variant's repeats fell by half with a small spread; the second did not move
     * beyond its noise. */
    slow[0].reps[0] = 505;
    slow[0].reps[1] = 495;
    slow[0].reps[2] = 498;
    slow[0].throughput = 240;
    slow[1].reps[0] = 1990;
    slow[1].reps[1] = 2060;
    slow[1].reps[2] = 1985;
    struct compare_file a, b;
    struct compare_report r;
    run(base, 2, slow, 2, 10, &a, &b, &r);
    const struct compare_cell *c0 = &r.rows[0].cell[COMPARE_CAPACITY];
    assert_int_equal(c0->why, COMPARE_WHY_TESTED);
    assert_true(c0->significant);
    assert_true(c0->welch.p < 0.001);
    assert_true(fabs(c0->change_pct - (499.333333 - 1000) / 1000 * 100) < 1e-3);
    assert_true(r.rows[0].regression);
    assert_false(r.rows[1].cell[COMPARE_CAPACITY].significant);
    assert_false(r.rows[1].regression);
    assert_int_equal(r.nregressions, 1);
    assert_int_equal(r.significant[0], 1);
    assert_int_equal(r.significant[1], 0);
    /* Throughput halved too, but measured once: shown, never significant. */
    assert_true(r.rows[0].cell[COMPARE_THROUGHPUT].change_pct < -49);
    assert_false(r.rows[0].cell[COMPARE_THROUGHPUT].significant);
    assert_int_equal(r.rows[0].cell[COMPARE_THROUGHPUT].why, COMPARE_WHY_ONE_MEASUREMENT);
    /* Overall: the geometric mean of the capacities. */
    double ga = sqrt(1000.0 * 2003.333333), gb = sqrt(499.333333 * 2011.666667);
    assert_true(fabs(r.overall[COMPARE_CAPACITY].a - ga) < 0.01);
    assert_true(fabs(r.overall[COMPARE_CAPACITY].b - gb) < 0.01);
    char *t = text_of(&r);
    assert_non_null(strstr(t, "-50.1%  p<0.001 n=3+3"));
    assert_non_null(strstr(t, "REGRESSION: capacity fell by more than 10%, significantly, in "
                              "1@0.5/512Mi (-50.1%)"));
    free(t);
    compare_report_free(&r);

    /* A threshold above the drop: significant, but not a regression. */
    assert_int_equal(compare_run(&a, &b, 60, &r), 0);
    assert_true(r.rows[0].cell[COMPARE_CAPACITY].significant);
    assert_int_equal(r.nregressions, 0);
    compare_report_free(&r);
    /* Swapped: a significant rise, never a regression. */
    assert_int_equal(compare_run(&b, &a, 0, &r), 0);
    assert_true(r.rows[0].cell[COMPARE_CAPACITY].significant);
    assert_int_equal(r.significant[1], 1);
    assert_int_equal(r.nregressions, 0);
    done(&a, &b, &r);
}

static void test_too_few_repeats(void **state)
{
    (void)state;
    struct fx_variant two[1] = {base[0]}, halved[1] = {base[0]};
    two[0].nreps = 2;
    halved[0].reps[0] = halved[0].reps[1] = halved[0].reps[2] = 500;
    struct compare_file a, b;
    struct compare_report r;
    run(two, 1, halved, 1, 10, &a, &b, &r);
    const struct compare_cell *c = &r.rows[0].cell[COMPARE_CAPACITY];
    /* Halved, but one side has 2 repeats: `~` with the reason, and no regression. */
    assert_int_equal(c->why, COMPARE_WHY_FEW_REPEATS);
    assert_false(c->significant);
    assert_true(c->change_pct < -49);
    assert_int_equal(r.nregressions, 0);
    assert_int_equal(r.ntestable, 0);
    char *t = text_of(&r);
    assert_non_null(strstr(t, "~ too few repeats (n=2+3)"));
    assert_int_equal(count(t, "a test needs at least 3 repeats"), 1);
    assert_non_null(strstr(t, "no regression can be judged"));
    free(t);
    done(&a, &b, &r);
}

static void test_fixed_mode_always_tilde(void **state)
{
    (void)state;
    struct fx_variant fa[2], fb[2];
    memcpy(fa, base, sizeof(fa));
    fa[0].capacity = fa[1].capacity = false;
    memcpy(fb, fa, sizeof(fb));
    fb[0].throughput = 100; /* a fifth of A's */
    struct compare_file a, b;
    struct compare_report r;
    run(fa, 2, fb, 2, 10, &a, &b, &r);
    assert_false(a.capacity_mode);
    for (size_t i = 0; i < 2; i++) {
        assert_false(r.rows[i].cell[COMPARE_CAPACITY].have_a);
        for (int m = COMPARE_THROUGHPUT; m < COMPARE_NMETRICS; m++) {
            assert_int_equal(r.rows[i].cell[m].why, COMPARE_WHY_ONE_MEASUREMENT);
            assert_false(r.rows[i].cell[m].significant);
        }
    }
    assert_true(r.rows[0].cell[COMPARE_THROUGHPUT].change_pct < -79);
    assert_int_equal(r.nregressions, 0);
    char *t = text_of(&r);
    /* No capacity table, and the reason said once under the tables, not on every row. */
    assert_null(strstr(t, "capacity @SLO"));
    assert_non_null(strstr(t, "fixed load)"));
    assert_int_equal(count(t, "a fixed-load sweep measures each variant once"), 1);
    assert_null(strstr(t, "p: Welch"));
    free(t);
    done(&a, &b, &r);
}

/* Two searches whose brackets both hold the app's capacity can end a few percent apart, with
 * tight repeats at each end: Welch's test alone would call that real. */
static void test_within_search_resolution(void **state)
{
    (void)state;
    struct fx_variant va[1] = {base[0]}, vb[1] = {base[0]};
    va[0].bracket = 1050; /* capacity 1000, bracket width 50 */
    vb[0].reps[0] = 969;
    vb[0].reps[1] = 970;
    vb[0].reps[2] = 971;
    vb[0].bracket = 1010; /* capacity 970, width 40 */
    struct compare_file a, b;
    struct compare_report r;
    run(va, 1, vb, 1, 1, &a, &b, &r);
    assert_true(a.variants[0].bracket_rps == 1050);
    const struct compare_cell *c = &r.rows[0].cell[COMPARE_CAPACITY];
    assert_int_equal(c->why, COMPARE_WHY_RESOLUTION);
    assert_true(c->welch.significant); /* the test alone says "different" */
    assert_false(c->significant);
    assert_int_equal(r.nregressions, 0);
    assert_int_equal(r.ntestable, 1);
    char *t = text_of(&r);
    assert_non_null(strstr(t, "~ within the search's resolution (p"));
    assert_int_equal(count(t, "the width of\n   the searches' final brackets"), 1);
    free(t);
    done(&a, &b, &r);

    /* A drop wider than both brackets is significant again. */
    vb[0].reps[0] = 899;
    vb[0].reps[1] = 900;
    vb[0].reps[2] = 901;
    vb[0].bracket = 950;
    run(va, 1, vb, 1, 5, &a, &b, &r);
    assert_int_equal(r.rows[0].cell[COMPARE_CAPACITY].why, COMPARE_WHY_TESTED);
    assert_true(r.rows[0].cell[COMPARE_CAPACITY].significant);
    assert_int_equal(r.nregressions, 1);
    done(&a, &b, &r);
}

static void test_invalid_capacity_not_judged(void **state)
{
    (void)state;
    struct fx_variant gen[1] = {base[0]};
    gen[0].reps[0] = gen[0].reps[1] = gen[0].reps[2] = 300;
    gen[0].invalid = true;
    gen[0].flag = "generator-limited";
    struct compare_file a, b;
    struct compare_report r;
    run(base, 1, gen, 1, 10, &a, &b, &r);
    const struct compare_cell *c = &r.rows[0].cell[COMPARE_CAPACITY];
    assert_int_equal(c->why, COMPARE_WHY_INVALID);
    assert_false(c->significant);
    assert_int_equal(r.nregressions, 0);
    char *t = text_of(&r);
    assert_non_null(strstr(t, "~ not valid (B: generator-limited)"));
    /* The note under the tables names the real reason, not a blanket "marked". */
    assert_non_null(strstr(t, "   generator-limited: the load generator, not the app, set the "
                              "limit: the app holds at least this much.\n"));
    assert_null(strstr(t, "   contended:"));
    free(t);
    cJSON *j = compare_json(&r);
    const cJSON *cap = cJSON_GetObjectItem(
        cJSON_GetArrayItem(cJSON_GetObjectItem(j, "variants"), 0), "capacity_rps");
    const cJSON *fb = cJSON_GetObjectItem(cJSON_GetObjectItem(cap, "b"), "flags");
    assert_int_equal(cJSON_GetArraySize(fb), 1);
    assert_string_equal(cJSON_GetArrayItem(fb, 0)->valuestring, "generator-limited");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(cap, "b"), "valid")));
    assert_string_equal(cJSON_GetObjectItem(cap, "not_tested")->valuestring, "not_valid");
    cJSON_Delete(j);
    done(&a, &b, &r);
}

static void test_one_sided_and_failed(void **state)
{
    (void)state;
    struct fx_variant va[3] = {base[0], base[1], base[0]};
    va[2].spec = "4@2/1Gi";
    struct fx_variant vb[3] = {base[0], base[1], base[1]};
    vb[0].spec = "1@500m/512Mi"; /* the same shape, spelt another way */
    vb[1].state = "failed";
    vb[2].spec = "8@4/2Gi";
    struct compare_file a, b;
    struct compare_report r;
    run(va, 3, vb, 3, -1, &a, &b, &r);
    assert_int_equal(r.n, 4);
    assert_non_null(r.rows[0].a);
    assert_non_null(r.rows[0].b); /* matched by canonical spec */
    assert_int_equal(r.rows[0].cell[COMPARE_CAPACITY].why, COMPARE_WHY_TESTED);
    assert_false(r.rows[1].b->measured);
    assert_int_equal(r.rows[1].cell[COMPARE_CAPACITY].why, COMPARE_WHY_MISSING);
    assert_null(r.rows[2].b);
    assert_null(r.rows[3].a);
    assert_string_equal(r.rows[3].spec, "8@4/2Gi");
    assert_int_equal(r.overall[COMPARE_CAPACITY].n, 1);
    char *t = text_of(&r);
    assert_non_null(strstr(t, "only in A: 4@2/1Gi\n"));
    assert_non_null(strstr(t, "only in B: 8@4/2Gi\n"));
    assert_non_null(strstr(t, "FAILED"));
    assert_null(strstr(t, "REGRESSION"));
    assert_null(strstr(t, "no regression")); /* no threshold given */
    free(t);
    done(&a, &b, &r);
}

static void test_json(void **state)
{
    (void)state;
    struct fx_variant slow[1] = {base[0]};
    slow[0].reps[0] = 500;
    slow[0].reps[1] = 505;
    slow[0].reps[2] = 495;
    struct compare_file a, b;
    struct compare_report r;
    run(base, 2, slow, 1, 10, &a, &b, &r);
    cJSON *j = compare_json(&r);
    assert_non_null(j);
    const cJSON *v0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "variants"), 0);
    const cJSON *cap = cJSON_GetObjectItem(v0, "capacity_rps");
    assert_string_equal(cJSON_GetObjectItem(v0, "in")->valuestring, "both");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cap, "significant")));
    assert_true(cJSON_GetObjectItem(cap, "p")->valuedouble < 0.001);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cap, "not_tested")));
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cap, "a"), "n")->valueint, 3);
    assert_true(fabs(cJSON_GetObjectItem(cap, "change_pct")->valuedouble + 50) < 0.01);
    const cJSON *thr = cJSON_GetObjectItem(v0, "throughput_rps");
    assert_string_equal(cJSON_GetObjectItem(thr, "not_tested")->valuestring, "one_measurement");
    const cJSON *v1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "variants"), 1);
    assert_string_equal(cJSON_GetObjectItem(v1, "in")->valuestring, "a");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(v1, "state_b")));
    const cJSON *reg = cJSON_GetObjectItem(j, "regressions");
    assert_int_equal(cJSON_GetArraySize(reg), 1);
    assert_string_equal(cJSON_GetArrayItem(reg, 0)->valuestring, "1@0.5/512Mi");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "significantly_lower")), 1);
    assert_int_equal(cJSON_GetObjectItem(j, "fail_on_regression_pct")->valueint, 10);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "a"), "mode")->valuestring,
                        "capacity");
    cJSON_Delete(j);
    done(&a, &b, &r);
}

/* ---- reading ----------------------------------------------------------------------------- */

/* A fixture with a profile: the SLO's p95, the search window and one request's weight given. */
static char *fixture_profile(double p95_ms, double window_s, double weight, bool with_slo)
{
    char *text = fixture(base, 2, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    cJSON *prof = cJSON_AddObjectToObject(root, "profile");
    cJSON_AddNumberToObject(prof, "users", 20); /* the probe: not an input compare checks */
    if (with_slo) {
        cJSON *slo = cJSON_AddObjectToObject(prof, "slo");
        cJSON_AddNumberToObject(slo, "p95_ms", p95_ms);
        cJSON_AddNumberToObject(slo, "errors", 0.01);
    }
    cJSON *se = cJSON_AddObjectToObject(prof, "search");
    cJSON_AddNumberToObject(se, "window_s", window_s);
    cJSON_AddNumberToObject(se, "warmup_s", 0.5);
    cJSON_AddNumberToObject(se, "precision", 0.1);
    cJSON_AddNumberToObject(se, "budget_s", window_s * 40); /* not an input compare checks */
    cJSON *reqs = cJSON_AddArrayToObject(prof, "requests");
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "path", "/");
    cJSON_AddNumberToObject(r, "weight", weight);
    cJSON_AddItemToArray(reqs, r);
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* Sweeps judged by another SLO, search window or request mix are not compared: the differing
 * fields are named, no row is judged, and a regression threshold cannot pass. The probe's users
 * and the budget do not count; a section an older file lacks does not refuse. */
static void test_different_inputs_refused(void **state)
{
    struct compare_file a, b;
    struct compare_report r;
    (void)state;

    char *ta = fixture_profile(100, 2, 1, true), *tb = fixture_profile(80, 5, 2, true);
    parse_ok(ta, "A.json", &a);
    parse_ok(tb, "B.json", &b);
    assert_int_equal(compare_run(&a, &b, 10, &r), 0);
    assert_int_equal(r.n, 0);
    assert_int_equal(r.nregressions, 0);
    assert_int_equal(r.ndiffer, 3);
    assert_string_equal(r.differ[0], "slo.p95_ms: 100 in A, 80 in B");
    assert_string_equal(r.differ[1], "requests[0].weight: 1 in A, 2 in B");
    assert_string_equal(r.differ[2], "search.window_s: 2 in A, 5 in B");
    char *t = text_of(&r);
    assert_non_null(strstr(t, "Not compared: A and B were judged by different inputs"));
    assert_non_null(strstr(t, "  slo.p95_ms: 100 in A, 80 in B\n"));
    assert_non_null(strstr(t, "not judged: A and B were judged by different inputs"));
    assert_null(strstr(t, "capacity @SLO"));
    free(t);
    cJSON *j = compare_json(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "inputs_differ")), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "variants")), 0);
    cJSON_Delete(j);
    done(&a, &b, &r);
    free(tb);

    /* The same inputs (other budget and probe aside): compared as before. */
    tb = fixture_profile(100, 2, 1, true);
    parse_ok(ta, "A.json", &a);
    parse_ok(tb, "B.json", &b);
    assert_int_equal(compare_run(&a, &b, 10, &r), 0);
    assert_int_equal(r.ndiffer, 0);
    assert_int_equal(r.n, 2);
    done(&a, &b, &r);
    free(tb);

    /* B predates profile.slo: not refused for the section it lacks. */
    tb = fixture_profile(100, 2, 1, false);
    parse_ok(ta, "A.json", &a);
    parse_ok(tb, "B.json", &b);
    assert_int_equal(compare_run(&a, &b, -1, &r), 0);
    assert_int_equal(r.ndiffer, 0);
    assert_int_equal(r.n, 2);
    done(&a, &b, &r);
    free(tb);
    free(ta);
}

/* A fixture whose profile is the JSON text prof (an object), for the inputs' tests. */
static char *fixture_with(const char *prof)
{
    char *text = fixture(base, 2, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    cJSON *p = cJSON_Parse(prof);
    assert_non_null(p);
    cJSON_AddItemToObject(root, "profile", p);
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

static void compare_texts(const char *ta, const char *tb, struct compare_file *a,
                          struct compare_file *b, struct compare_report *r)
{
    parse_ok(ta, "A.json", a);
    parse_ok(tb, "B.json", b);
    assert_int_equal(compare_run(a, b, 10, r), 0);
}

/* Every measurement input refuses, named down to the field: a header's value (by its digest,
 * the value is never in the file), a body, the timeout, and a fixed load's stages; a capacity
 * search ignores the stages, so there they do not refuse. The answer's inputs (cost, planning,
 * availability, node types, target, scale-out, generators) are shown and the figures compared. */
static void test_inputs_measurement_and_answer(void **state)
{
    struct compare_file a, b;
    struct compare_report r;
    (void)state;
#define REQ(h, body)                                                                               \
    "\"requests\":[{\"path\":\"/\",\"weight\":1,\"headers\":[{\"name\":\"Authorization\","         \
    "\"value_sha256\":\"" h "\"}],\"body_sha256\":\"" body "\"}]"
    static const char fa[] =
        "{\"timeout_s\":5,\"search\":{\"mode\":\"fixed\",\"window_s\":2},"
        "\"stage_list\":[{\"duration_s\":2,\"users\":10}]," REQ("aa", "bb") "}";
    static const char fb[] =
        "{\"timeout_s\":3,\"search\":{\"mode\":\"fixed\",\"window_s\":2},"
        "\"stage_list\":[{\"duration_s\":2,\"users\":20}]," REQ("cc", "dd") "}";
    static const char ca[] =
        "{\"search\":{\"mode\":\"capacity\"},\"stage_list\":[{\"duration_s\":2,"
        "\"users\":10}],\"cost\":{\"cpu\":30,\"memory_gib\":4},"
        "\"planning\":{\"buffer\":0.2},\"availability\":null,"
        "\"scale_out\":null,\"generators\":null,\"target_rps\":500}";
    static const char cb[] =
        "{\"search\":{\"mode\":\"capacity\"},\"stage_list\":[{\"duration_s\":2,"
        "\"users\":20}],\"cost\":{\"cpu\":25,\"memory_gib\":4},"
        "\"planning\":{\"buffer\":0.3},\"availability\":{\"zones\":3},"
        "\"scale_out\":{\"replicas\":[1,2]},\"generators\":3,"
        "\"target_rps\":800}";
#undef REQ
    char *ta = fixture_with(fa), *tb = fixture_with(fb);
    compare_texts(ta, tb, &a, &b, &r);
    assert_int_equal(r.n, 0);
    const char *want[] = {"requests[0].headers[0].value_sha256: another value in B (recorded as "
                          "a digest)",
                          "requests[0].body_sha256: another value in B (recorded as a digest)",
                          "timeout_s: 5 in A, 3 in B", "stage_list[0].users: 10 in A, 20 in B"};
    assert_int_equal(r.ndiffer, 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(r.differ[i], want[i]);
    char *t = text_of(&r);
    assert_null(strstr(t, "aa"));
    free(t);
    done(&a, &b, &r);
    free(ta);
    free(tb);

    ta = fixture_with(ca);
    tb = fixture_with(cb);
    compare_texts(ta, tb, &a, &b, &r);
    assert_int_equal(r.ndiffer, 0);
    assert_int_equal(r.n, 2);
    const char *shown[] = {
        "target_rps: 500 in A, 800 in B",      "cost.cpu: 30 in A, 25 in B",
        "planning.buffer: 0.2 in A, 0.3 in B", "availability: none in A, set in B",
        "scale_out: none in A, set in B",      "generators: none in A, 3 in B"};
    assert_int_equal(r.nanswer_differ, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(r.answer_differ[i], shown[i]);
    t = text_of(&r);
    assert_non_null(strstr(t, "The answers' inputs differ"));
    assert_non_null(strstr(t, "  cost.cpu: 30 in A, 25 in B\n"));
    assert_non_null(strstr(t, "capacity @SLO"));
    free(t);
    cJSON *j = compare_json(&r);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "answer_inputs_differ")), 6);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "inputs_differ")), 0);
    cJSON_Delete(j);
    done(&a, &b, &r);
    free(ta);
    free(tb);
}

static void test_parse_rejects(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "not JSON"},
        {"{\"tool\": \"sizeup 0.1.0\", ", "not JSON"},
        {"[1, 2]", "not a JSON object"},
        {"{\"variants\": []}", "not a sizeup results file"},
        {"{\"tool\": \"k6 0.50\", \"variants\": []}", "not a sizeup results file"},
        {"{\"tool\": \"sizeup x\", \"variants\": []}", "unreadable version"},
        {"{\"tool\": \"sizeup 1.0.0\", \"variants\": []}", "reads the results of sizeup 0.x"},
        {"{\"tool\": \"sizeup 0.1.0\"}", "no \"variants\" array"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": {}}", "no \"variants\" array"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [7]}", "variant 1 is not an object"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"state\": \"measured\"}]}", "no spec"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@x/1Gi\", \"state\": "
         "\"measured\"}]}",
         "2@x/1Gi"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\"}]}", "state"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\"}, {\"spec\": \"2@1000m/1Gi\", \"state\": \"failed\"}]}",
         "appears twice"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"throughput_rps\": -3}]}",
         "throughput_rps is not a number between 0"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"throughput_rps\": \"fast\"}]}",
         "throughput_rps"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"latency_ms\": 3}]}",
         "latency_ms is not an object"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"latency_ms\": {\"p95\": 1e300}}]}",
         "p95"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": 5}]}",
         "slo_capacity is neither"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {}}]}",
         "slo_capacity has no rps"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"repeat_rps\": [1, \"x\"]}}]}",
         "repeat_rps holds"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"repeat_rps\": "
         "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}}]}",
         "more than 20 repeats"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"valid\": \"yes\"}}]}",
         "valid is not a boolean"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"flags\": [1]}}]}",
         "flags holds a non-string"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"steps\": {}}}]}",
         "steps is not an array"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"steps\": [{\"offered_rps\": -1}]}}]}",
         "offered_rps is not a number"},
        {"{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"2@1/1Gi\", \"state\": "
         "\"measured\", \"slo_capacity\": {\"rps\": 5, \"steps\": [{\"pass\": 1}]}}]}",
         "kind, pass or generator_limited of the wrong type"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct compare_file f;
        char err[ERR_LEN] = "";
        int rc = compare_parse(cases[i].text, strlen(cases[i].text), "x.json", &f, err);
        if (rc != -EINVAL || !strstr(err, cases[i].want) || strncmp(err, "x.json: ", 8))
            fail_msg("case %zu: rc %d, err \"%s\", want -EINVAL and \"%s\"", i, rc, err,
                     cases[i].want);
        assert_null(f.variants);
        assert_int_equal(f.n, 0);
    }
}

/* Capacity mode: the p95 compared is the repeats' at capacity merged (slo_capacity.at_capacity),
 * what the row's columns show, not the representative step's latency_ms. */
static void test_parse_at_capacity_latency(void **state)
{
    (void)state;
    const char *text = "{\"tool\": \"sizeup 0.1.0\", \"variants\": [{\"spec\": \"1@1/256Mi\", "
                       "\"state\": \"measured\", \"throughput_rps\": 1210, \"latency_ms\": "
                       "{\"p95\": 103, \"p99\": 140}, \"slo_capacity\": {\"rps\": 1247, "
                       "\"repeat_rps\": [1240, 1247, 1254], \"repeats\": 3, \"limited_by\": "
                       "\"slo-p95\", \"valid\": true, \"flags\": [], \"steps\": [], "
                       "\"at_capacity\": {\"requests\": 18000, \"p50_ms\": 20, \"p95_ms\": 61, "
                       "\"p99_ms\": 90, \"error_rate\": 0}}}]}";
    struct compare_file f;
    parse_ok(text, "f.json", &f);
    assert_true(f.variants[0].p95_ms == 61);
    assert_true(f.variants[0].p99_ms == 90);
    compare_file_free(&f);
}

static void test_parse_accepts_fixed_and_unknown_fields(void **state)
{
    (void)state;
    /* A fixed-mode variant (slo_capacity null, p99 absent), a FAILED one without figures, and
     * fields compare does not know: accepted. */
    const char *text = "{\"tool\": \"sizeup 0.9.3\", \"future\": {\"x\": 1}, \"variants\": ["
                       "{\"spec\": \"1@500m/256Mi\", \"state\": \"measured\", \"throughput_rps\":"
                       " 12.5, \"latency_ms\": {\"p95\": 3}, \"slo_capacity\": null, \"new\": 1},"
                       "{\"spec\": \"2@1/1Gi\", \"state\": \"failed\", \"throughput_rps\": null}"
                       "]}";
    struct compare_file f;
    parse_ok(text, "f.json", &f);
    assert_int_equal(f.n, 2);
    assert_false(f.capacity_mode);
    assert_string_equal(f.variants[0].v.spec, "1@0.5/256Mi");
    assert_true(f.variants[0].measured);
    assert_true(f.variants[0].throughput_rps == 12.5);
    assert_true(f.variants[0].p95_ms == 3);
    assert_true(f.variants[0].p99_ms < 0);
    assert_false(f.variants[1].measured);
    assert_string_equal(f.started_at, "");
    compare_file_free(&f);
    compare_file_free(&f); /* freeing twice is a no-op */
}

static void test_load_paths(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_compare_XXXXXX", path[128], err[ERR_LEN];
    struct compare_file f;
    assert_non_null(mkdtemp(dir));

    /* A directory without results.json. */
    assert_int_equal(compare_load(dir, &f, err), -ENOENT);
    assert_non_null(strstr(err, "is a directory without results.json"));
    /* With one: read through the directory, named by its file. */
    snprintf(path, sizeof(path), "%s/results.json", dir);
    char *text = fixture(base, 2, NULL);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    free(text);
    assert_int_equal(compare_load(dir, &f, err), 0);
    assert_int_equal(f.n, 2);
    assert_string_equal(f.source, path);
    compare_file_free(&f);
    /* A missing file, and one over the size cap (sparse: nothing is written). */
    snprintf(path, sizeof(path), "%s/none.json", dir);
    assert_int_equal(compare_load(path, &f, err), -ENOENT);
    snprintf(path, sizeof(path), "%s/big.json", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)COMPARE_MAX_BYTES + 1), 0);
    close(fd);
    assert_int_equal(compare_load(path, &f, err), -EFBIG);
    assert_non_null(strstr(err, "larger than"));
    unlink(path);
    snprintf(path, sizeof(path), "%s/results.json", dir);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_all_tilde),
        cmocka_unit_test(test_halved_is_significant_drop),
        cmocka_unit_test(test_too_few_repeats),
        cmocka_unit_test(test_fixed_mode_always_tilde),
        cmocka_unit_test(test_within_search_resolution),
        cmocka_unit_test(test_invalid_capacity_not_judged),
        cmocka_unit_test(test_one_sided_and_failed),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_different_inputs_refused),
        cmocka_unit_test(test_inputs_measurement_and_answer),
        cmocka_unit_test(test_parse_rejects),
        cmocka_unit_test(test_parse_accepts_fixed_and_unknown_fields),
        cmocka_unit_test(test_parse_at_capacity_latency),
        cmocka_unit_test(test_load_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
