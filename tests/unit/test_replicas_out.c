/* Tests for the replica answer through the outputs: a capacity sweep of one shape with a
 * scale-out, advised by advise_sweep (advise_compose, the order of the answer) and rendered by
 * output_set_render. values.yaml (its autoscaling block: the one path of a CPU HPA),
 * deployment-patch.yaml, results.json and results.md must carry the one count the sizing gives:
 * from the curve when it holds the target, nothing at the replica and autoscaling paths (no
 * hpa.yaml) when it cannot, and the linear count, with why, when no scale-out ran. Figures worked
 * in the comments. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "advise/advise.h"
#include "output/compare.h"
#include "output/output.h"
#include "output/output_set.h"
#include "sweep/runner.h"
#include "sweep_fixture.h"

struct fixture {
    struct profile profile;
    struct sweep sweep;
    struct sweep_row row;
    struct sweep_scale_out so;
    struct advisor_row rows[VARIANT_MAX];
    struct advice advice;
    struct output_doc doc;
    struct output_set set;
};

static void contains(const char *text, const char *needle)
{
    if (!text || !strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text ? text : "(null)");
}

static void lacks(const char *text, const char *needle)
{
    if (text && strstr(text, needle))
        fail_msg("\"%s\" found in: %s", needle, text);
}

/* A capacity with three repeats, its interval's lower bound `low`. */
static void capacity(struct capacity_result *c, double rps, double low)
{
    c->searched = true;
    c->valid = true;
    c->rps = rps;
    c->interval.n = 3;
    c->interval.mean = rps;
    c->interval.low = low;
    c->interval.high = 2 * rps - low;
    c->interval.half = rps - low;
}

static void step(struct capacity_result *c, double rps, double cores)
{
    struct capacity_step *s = &c->steps[c->nsteps++];
    memset(s, 0, sizeof(*s));
    s->kind = CAPACITY_STEP_SEARCH;
    s->offered_rps = rps;
    s->achieved_rps = rps;
    s->cpu_cores = cores;
    s->peak_memory_bytes = -1;
    s->gen_cores = -1;
    s->pass = true;
}

/* One CPU-bound shape, 1000 req/s within the SLO (low 970), 0.9 cores at capacity; a target of
 * 1800 req/s: linear ceil(1800 / (970 x 0.9 / 1.3)) = 3. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(profile_init_default(&f->profile), 0);
    f->profile.target_rps = 1800;
    sweep_fixture_row(&f->row, &f->rows[0], "1@1/512Mi", 1000, 30000, &f->profile);
    struct capacity_result *c = &f->row.cap;
    capacity(c, 1000, 970);
    step(c, 250, 0.25);
    step(c, 500, 0.47);
    step(c, 1000, 0.90);
    c->cpu_cores = 0.9;
    c->peak_memory_bytes = 100LL << 20;
    f->sweep.n = 1;
    f->sweep.rows = &f->row;
    f->sweep.facts.host_millicores = 4000;
    f->sweep.facts.limits_enforced = true;
    snprintf(f->sweep.facts.machine, sizeof(f->sweep.facts.machine), "test machine");
    snprintf(f->sweep.platform, sizeof(f->sweep.platform), "local");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    output_set_free(&f->set);
    load_result_free(&f->row.load);
    profile_free(&f->profile);
    free(f);
    return 0;
}

/* The scale-out of the shape at 1..n with these lower bounds (rps 3% above each). */
static void scale_out(struct fixture *f, const double *low, size_t n)
{
    memset(&f->so, 0, sizeof(f->so));
    f->so.run = true;
    f->so.variant = 0;
    f->so.npoints = n;
    for (size_t i = 0; i < n; i++) {
        struct sweep_scale_point *pt = &f->so.points[i];
        pt->replicas = (unsigned)i + 1;
        pt->from = i ? SWEEP_POINT_MEASURED : SWEEP_POINT_SHAPE_SEARCH;
        capacity(&pt->cap, i ? low[i] * 1.03 : 1000, low[i]);
        pt->cap.cpu_cores = 0.9 * (double)(i + 1);
    }
    f->sweep.scale_out = &f->so;
}

/* Advises the sweep and renders every output. */
static void render(struct fixture *f)
{
    struct output_doc *d = &f->doc;
    char err[ERR_LEN] = "";
    size_t n = 0;

    output_set_free(&f->set);
    memset(&f->set, 0, sizeof(f->set));
    assert_int_equal(advise_sweep(&f->sweep, &f->profile, f->rows, &n, &f->advice, err), 0);
    assert_int_equal(n, 1);
    memset(d, 0, sizeof(*d));
    d->rows = f->rows;
    d->n = n;
    d->advice = &f->advice;
    d->sweep = &f->sweep;
    d->profile = &f->profile;
    d->facts = &f->sweep.facts;
    d->platform = "local";
    d->command = "sizeup sweep -- ./app";
    d->started = 1764446400;
    d->finished = 1764446500;
    d->workload = (struct output_workload){"app", "app", "WORKERS", NULL, NULL};
    output_paths_default(&d->paths);
    if (output_set_render(d, NULL, 0, &f->set, err) != 0)
        fail_msg("output_set_render: %s", err);
}

static const char *item(const struct fixture *f, const char *name)
{
    for (size_t i = 0; i < f->set.n; i++)
        if (strcmp(f->set.items[i].name, name) == 0)
            return f->set.items[i].data;
    return NULL;
}

static cJSON *recommendation(const struct fixture *f, cJSON **root)
{
    *root = cJSON_Parse(item(f, "results.json"));
    assert_non_null(*root);
    cJSON *r = cJSON_GetObjectItemCaseSensitive(*root, "recommendation");
    assert_non_null(r);
    return r;
}

static void test_reachable_from_curve(void **state)
{
    struct fixture *f = *state;
    static const double low[] = {970, 1700, 2300, 2800};
    cJSON *root;

    /* 1800 req/s needs 1800 / 0.6923 = 2600: 2300 at 3 is short, 2800 at 4 holds it. */
    scale_out(f, low, 4);
    render(f);
    assert_true(f->advice.sizing.from_curve);
    assert_int_equal(f->advice.replicas, 4);
    contains(item(f, "values.yaml"), "replicaCount: 4\n");
    contains(item(f, "values.yaml"), "minReplicas: 4\n");
    /* A CPU HPA with the chart's autoscaling mapped: values.yaml carries it, alone. */
    assert_null(item(f, "hpa.yaml"));
    char want[64];
    snprintf(want, sizeof(want), "maxReplicas: %u\n", f->advice.sizing.hpa.max_replicas);
    contains(item(f, "values.yaml"), want);
    assert_true(f->advice.sizing.hpa.max_replicas <= f->advice.sizing.curve.cap);
    contains(item(f, "deployment-patch.yaml"), "  replicas: 4\n");
    contains(item(f, "results.md"), "takes 4 replicas (from the scale-out's curve)");
    cJSON *r = recommendation(f, &root);
    assert_int_equal(cJSON_GetObjectItem(r, "replicas")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(r, "replicas_linear")->valueint, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "target_reachable")));
    assert_string_equal(cJSON_GetObjectItem(r, "replicas_from")->valuestring, "curve");
    assert_null(cJSON_GetObjectItem(r, "scale_out_skipped"));
    cJSON *so = cJSON_GetObjectItem(root, "scale_out");
    cJSON *sr = cJSON_GetObjectItem(so, "replicas");
    assert_int_equal(cJSON_GetObjectItem(sr, "from_curve")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(sr, "linear")->valueint, 3);
    cJSON_Delete(root);
}

static void test_unreachable(void **state)
{
    struct fixture *f = *state;
    static const double low[] = {970, 1500, 1700, 1750};
    cJSON *root;

    /* A plateau near 1750: 2600 is never reached. */
    scale_out(f, low, 4);
    render(f);
    assert_true(f->advice.sizing.unreachable);
    const char *v = item(f, "values.yaml");
    contains(v, "workers:");
    contains(v, "resources:");
    lacks(v, "replicaCount");
    lacks(v, "autoscaling");
    assert_null(item(f, "hpa.yaml"));
    const char *p = item(f, "deployment-patch.yaml");
    contains(p, "resources:");
    lacks(p, "replicas:");
    contains(item(f, "results.md"), "Target: 1800 req/s; the target of 1800 req/s is not reachable "
                                    "with this shape: the pods reach at most");
    cJSON *r = recommendation(f, &root);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "replicas")));
    assert_int_equal(cJSON_GetObjectItem(r, "replicas_linear")->valueint, 3);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "target_reachable")));
    assert_string_equal(cJSON_GetObjectItem(r, "replicas_from")->valuestring, "curve");
    contains(cJSON_GetObjectItem(r, "replicas_why")->valuestring, "not reachable");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "hpa")));
    assert_int_equal(cJSON_GetObjectItem(r, "index")->valueint, 0); /* the shape stands */
    cJSON *so = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "scale_out"), "replicas");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(so, "from_curve")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(so, "target_reachable")));
    cJSON_Delete(root);

    /* The results reader (sizeup compare, the operator's re-sweep) takes the new fields. */
    struct compare_file cf;
    char err[ERR_LEN] = "";
    const char *json = item(f, "results.json");
    if (compare_parse(json, strlen(json), "results.json", &cf, err) != 0)
        fail_msg("compare_parse: %s", err);
    assert_int_equal(cf.n, 1);
    compare_file_free(&cf);
}

static void test_no_scale_out(void **state)
{
    struct fixture *f = *state;
    cJSON *root;

    /* The runner's note: the count is linear, and results.json says why. */
    memset(&f->so, 0, sizeof(f->so));
    snprintf(f->so.note, sizeof(f->so.note), "scale-out off");
    f->sweep.scale_out = &f->so;
    render(f);
    contains(item(f, "values.yaml"), "replicaCount: 3\n");
    contains(item(f, "values.yaml"), "minReplicas: 3\n");
    contains(item(f, "deployment-patch.yaml"), "  replicas: 3\n");
    cJSON *r = recommendation(f, &root);
    assert_int_equal(cJSON_GetObjectItem(r, "replicas")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(r, "replicas_linear")->valueint, 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "target_reachable")));
    assert_string_equal(cJSON_GetObjectItem(r, "replicas_from")->valuestring, "linear");
    assert_string_equal(cJSON_GetObjectItem(r, "scale_out_skipped")->valuestring, "scale-out off");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "scale_out")));
    cJSON_Delete(root);

    /* No sweep scale-out at all (a fixed sweep, a resumed operator sweep): the same, with the
     * generic reason. */
    f->sweep.scale_out = NULL;
    render(f);
    r = recommendation(f, &root);
    assert_string_equal(cJSON_GetObjectItem(r, "scale_out_skipped")->valuestring,
                        "no scale-out was measured");
    cJSON_Delete(root);

    /* No target: target_reachable null, nothing skipped. */
    f->profile.target_rps = 0;
    render(f);
    r = recommendation(f, &root);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "target_reachable")));
    assert_null(cJSON_GetObjectItem(r, "scale_out_skipped"));
    cJSON_Delete(root);
}

static void test_first_point_failed(void **state)
{
    struct fixture *f = *state;
    static const double low[] = {970, 0};
    cJSON *root;

    /* The point at 2 failed (the app never became ready): flagged, not fitted; the count falls
     * back to linear with a finding, and every file is written. */
    scale_out(f, low, 2);
    f->so.points[1].from = SWEEP_POINT_FAILED;
    memset(&f->so.points[1].cap, 0, sizeof(f->so.points[1].cap));
    snprintf(f->so.points[1].note, sizeof(f->so.points[1].note), "replica 1 never became ready");
    render(f);
    assert_false(f->advice.sizing.curve_read);
    contains(item(f, "values.yaml"), "replicaCount: 3\n");
    contains(item(f, "values.yaml"), "enabled: true\n");
    contains(item(f, "deployment-patch.yaml"), "  replicas: 3\n");
    bool said = false;
    for (size_t i = 0; i < f->advice.nfindings; i++)
        said = said || (strstr(f->advice.findings[i], "assumes linear scale-out") &&
                        strstr(f->advice.findings[i], "no curve to read"));
    assert_true(said);
    cJSON *r = recommendation(f, &root);
    assert_string_equal(cJSON_GetObjectItem(r, "replicas_from")->valuestring, "linear");
    contains(cJSON_GetObjectItem(r, "scale_out_skipped")->valuestring, "no curve to read");
    cJSON *pts = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "scale_out"), "points");
    assert_int_equal(cJSON_GetArraySize(pts), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 1), "from")->valuestring,
                        "failed");
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reachable_from_curve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_scale_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_point_failed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
