/* Tests for advise_compose (src/advise/advise.c): one sweep's rows through the local sweep's path
 * (advise_sweep, as `sizeup sweep` composes its document) and through the operator's (the rows
 * converted one by one, advise_compose with the cluster's inputs, as job_run.c's write_outputs
 * does), both rendered by output_set_render. The documents must be identical field by field but
 * for what is platform specific, named here:
 *   results.json  "platform", "command" (each front-end's own), and the findings the cluster
 *                 adds after the shared ones ("The scale-out ran up to N clone pods ...")
 *   results.md,   the same as lines (platform_line), and the operator's commands that fetch
 *   report.html   the files from its ConfigMap ("kubectl sizeup results ...")
 * Every other output (values.yaml, hpa.yaml, keda.yaml, pdb.yaml, auto-sizing.yaml,
 * deployment-patch.yaml) must be byte-identical. The sweep has three shapes, a capacity search,
 * a target, availability over three zones and a scale-out of the winner, so the rates and
 * percentages of the sizing, the HPA and the findings are all compared. */

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
#include "output/output.h"
#include "output/output_set.h"
#include "sweep/runner.h"
#include "fixtures.h"
#include "sweep_fixture.h"

#define NV 3

struct fixture {
    struct profile profile;
    struct sweep sweep;
    struct sweep_row row[NV];
    struct sweep_scale_out so;
    struct advisor_row local_rows[VARIANT_MAX], op_rows[VARIANT_MAX];
    struct advice local, op;
    struct output_set local_set, op_set;
};

static void capacity(struct capacity_result *c, double rps, double low, double cores)
{
    c->searched = true;
    c->valid = true;
    c->rps = rps;
    c->interval.n = 3;
    c->interval.mean = rps;
    c->interval.low = low;
    c->interval.high = 2 * rps - low;
    c->interval.half = rps - low;
    c->cpu_cores = cores;
    c->peak_memory_bytes = 100LL << 20;
    for (int i = 1; i <= 3; i++) {
        struct capacity_step *s = &c->steps[c->nsteps++];
        s->kind = CAPACITY_STEP_SEARCH;
        s->offered_rps = rps * i / 3;
        s->achieved_rps = rps * i / 3;
        s->cpu_cores = cores * i / 3;
        s->peak_memory_bytes = -1;
        s->gen_cores = -1;
        s->pass = true;
    }
}

static int setup(void **state)
{
    static const char *spec[NV] = {"1@1/512Mi", "2@2/1Gi", "4@4/2Gi"};
    static const double rps[NV] = {1000, 1900, 3500};
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    assert_int_equal(profile_init_default(&f->profile), 0);
    f->profile.target_rps = 2400;
    f->profile.availability.given = true;
    f->profile.availability.zones = 3;
    f->profile.availability.drain = 1;
    for (size_t i = 0; i < NV; i++) {
        sweep_fixture_row(&f->row[i], &f->local_rows[i], spec[i], rps[i], 30000, &f->profile);
        capacity(&f->row[i].cap, rps[i], rps[i] * 0.97, 0.9 * (double)(i + 1));
    }
    /* The scale-out of the first shape at 1..4 replicas, slowing (contention). */
    static const double low[] = {970, 1900, 2800, 3650};
    f->so.run = true;
    f->so.variant = 0;
    f->so.npoints = 4;
    for (size_t i = 0; i < 4; i++) {
        struct sweep_scale_point *pt = &f->so.points[i];
        pt->replicas = (unsigned)i + 1;
        pt->from = i ? SWEEP_POINT_MEASURED : SWEEP_POINT_SHAPE_SEARCH;
        capacity(&pt->cap, low[i] * 1.03, low[i], 0.9 * (double)(i + 1));
    }
    f->sweep.scale_out = &f->so;
    f->sweep.n = NV;
    f->sweep.rows = f->row;
    f->sweep.facts.host_millicores = 8000;
    f->sweep.facts.limits_enforced = true;
    snprintf(f->sweep.facts.machine, sizeof(f->sweep.facts.machine), "test machine");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    output_set_free(&f->local_set);
    output_set_free(&f->op_set);
    for (size_t i = 0; i < NV; i++)
        load_result_free(&f->row[i].load);
    profile_free(&f->profile);
    free(f);
    return 0;
}

/* What both front-ends put in the document alike. */
static void doc(struct output_doc *d, const struct fixture *f, const struct advisor_row *rows,
                size_t n, const struct advice *a)
{
    memset(d, 0, sizeof(*d));
    d->rows = rows;
    d->n = n;
    d->advice = a;
    d->sweep = &f->sweep;
    d->profile = &f->profile;
    d->facts = &f->sweep.facts;
    d->started = 1764446400;
    d->finished = 1764446500;
    d->workload = (struct output_workload){"app", "app", "WORKERS", NULL, "app=shop"};
    output_paths_default(&d->paths);
}

/* The local sweep's path: advise_sweep (cmd_sweep.c's sweep_doc). */
static void render_local(struct fixture *f)
{
    struct output_doc d;
    char err[ERR_LEN] = "";
    size_t n = 0;

    assert_int_equal(advise_sweep(&f->sweep, &f->profile, f->local_rows, &n, &f->local, err), 0);
    assert_int_equal(n, NV);
    doc(&d, f, f->local_rows, n, &f->local);
    d.platform = "local";
    d.command = "sizeup sweep -- ./app";
    if (output_set_render(&d, NULL, 0, &f->local_set, err) != 0)
        fail_msg("local output_set_render: %s", err);
}

/* The operator's path: the rows one by one (job_run.c's all_rows), advise_compose with the
 * cluster's inputs (write_outputs). */
static void render_operator(struct fixture *f)
{
    struct output_doc d;
    char err[ERR_LEN] = "";

    for (size_t i = 0; i < NV; i++)
        advise_row_from_sweep(&f->sweep, i, &f->op_rows[i]);
    struct advise_input in = {.rows = f->op_rows,
                              .n = NV,
                              .profile = &f->profile,
                              .facts = &f->sweep.facts,
                              .scale_out_from = &f->sweep,
                              .cluster = true,
                              .scale_out_asked = true};
    assert_int_equal(advise_compose(&in, &f->op, err), 0);
    doc(&d, f, f->op_rows, NV, &f->op);
    d.scale_out_from = &f->sweep;
    d.platform = "kube";
    d.command = "sizeup operator: deployment shop/app, sizeup.dev/sweep=1, mode clone";
    if (output_set_render(&d, NULL, 0, &f->op_set, err) != 0)
        fail_msg("operator output_set_render: %s", err);
}

static const char *item(const struct output_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return s->items[i].data;
    return NULL;
}

static bool platform_specific(const char *path)
{
    return strcmp(path, "/platform") == 0 || strcmp(path, "/command") == 0 ||
           strcmp(path, "/findings") == 0;
}

/* a and b equal at every path but the platform-specific ones; fails naming the first path that
 * differs. */
static void same_json(const cJSON *a, const cJSON *b, const char *path)
{
    char sub[512];

    if (platform_specific(path))
        return;
    if (!a || !b)
        fail_msg("%s: present in one document only", path);
    if (a->type != b->type)
        fail_msg("%s: types differ", path);
    if (cJSON_IsObject(a)) {
        const cJSON *x;
        cJSON_ArrayForEach(x, a)
        {
            snprintf(sub, sizeof(sub), "%s/%s", path, x->string);
            same_json(x, cJSON_GetObjectItemCaseSensitive(b, x->string), sub);
        }
        cJSON_ArrayForEach(x, b)
        {
            snprintf(sub, sizeof(sub), "%s/%s", path, x->string);
            if (!platform_specific(sub) && !cJSON_GetObjectItemCaseSensitive(a, x->string))
                fail_msg("%s: present in the operator's document only", sub);
        }
        return;
    }
    if (cJSON_IsArray(a)) {
        int n = cJSON_GetArraySize(a);
        if (n != cJSON_GetArraySize(b))
            fail_msg("%s: %d against %d items", path, n, cJSON_GetArraySize(b));
        for (int i = 0; i < n; i++) {
            snprintf(sub, sizeof(sub), "%s/%d", path, i);
            same_json(cJSON_GetArrayItem(a, i), cJSON_GetArrayItem(b, i), sub);
        }
        return;
    }
    if (cJSON_IsString(a)) {
        if (strcmp(a->valuestring, b->valuestring) != 0)
            fail_msg("%s: \"%s\" against \"%s\"", path, a->valuestring, b->valuestring);
        return;
    }
    if (cJSON_IsNumber(a) && a->valuedouble != b->valuedouble)
        fail_msg("%s: %.17g against %.17g", path, a->valuedouble, b->valuedouble);
}

/* The lines of results.md and report.html that are platform specific: the platform and the
 * command, the operator's commands that fetch the files from the ConfigMap, and the cluster's
 * finding on its scale-out. */
static bool platform_line(const char *line, size_t len)
{
    static const char *const marks[] = {
        "| Platform |",           "| Command |",
        "<dt>Command</dt>",       "<dt>Platform</dt>",
        "kubectl sizeup results", "clone pods side by side in the cluster"};
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
        if (memmem(line, len, marks[i], strlen(marks[i])))
            return true;
    return false;
}

/* The next line of *p that is not platform specific, its length in *len; NULL at the end. */
static const char *next_line(const char **p, size_t *len)
{
    while (**p) {
        const char *line = *p, *nl = strchr(line, '\n');
        *len = nl ? (size_t)(nl - line) : strlen(line);
        *p = line + *len + (nl ? 1 : 0);
        if (platform_line(line, *len))
            continue;
        /* The block of commands opens on its first line, which may be the operator's own. */
        static const char pre[] = "<pre id=\"answer-apply\">";
        if (*len >= sizeof(pre) - 1 && memcmp(line, pre, sizeof(pre) - 1) == 0) {
            line += sizeof(pre) - 1;
            *len -= sizeof(pre) - 1;
        }
        return line;
    }
    return NULL;
}

/* a and b hold the same lines but for the platform-specific ones; fails naming the first line
 * that differs. */
static void same_lines(const char *a, const char *b, const char *name)
{
    const char *la, *lb;
    size_t na = 0, nb = 0, k = 0;

    assert_non_null(a);
    assert_non_null(b);
    for (;; k++) {
        la = next_line(&a, &na);
        lb = next_line(&b, &nb);
        if (!la || !lb)
            break;
        if (na != nb || memcmp(la, lb, na) != 0)
            fail_msg("%s, line %zu:\n  local    %.*s\n  operator %.*s", name, k + 1, (int)na, la,
                     (int)nb, lb);
    }
    if (la || lb)
        fail_msg("%s: %s has lines the other has not", name,
                 la ? "the local one" : "the operator's");
}

static void test_local_and_operator_documents_agree(void **state)
{
    struct fixture *f = *state;

    render_local(f);
    render_operator(f);
    cJSON *l = cJSON_Parse(item(&f->local_set, "results.json"));
    cJSON *o = cJSON_Parse(item(&f->op_set, "results.json"));
    assert_non_null(l);
    assert_non_null(o);
    same_json(l, o, "");

    /* The findings: the local ones, then what only the cluster says. */
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(l, "findings");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(o, "findings");
    int nl = cJSON_GetArraySize(lf), no = cJSON_GetArraySize(of);
    assert_int_equal(no, nl + 1);
    for (int i = 0; i < nl; i++)
        assert_string_equal(cJSON_GetArrayItem(lf, i)->valuestring,
                            cJSON_GetArrayItem(of, i)->valuestring);
    assert_non_null(strstr(cJSON_GetArrayItem(of, nl)->valuestring,
                           "The scale-out ran up to 4 clone pods side by side in the cluster"));
    /* Both carry the scale-out's shape in words (the Universal Scalability Law). */
    bool usl = false;
    for (int i = 0; i < nl; i++)
        usl = usl || strstr(cJSON_GetArrayItem(lf, i)->valuestring,
                            "Universal Scalability Law fitted to 4 points");
    assert_true(usl);
    cJSON_Delete(l);
    cJSON_Delete(o);

    /* The answer's files, byte for byte. */
    static const char *same[] = {"values.yaml", "hpa.yaml",         "keda.yaml",
                                 "pdb.yaml",    "auto-sizing.yaml", "deployment-patch.yaml"};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        const char *a = item(&f->local_set, same[i]), *b = item(&f->op_set, same[i]);
        if (!a != !b)
            fail_msg("%s: written by one front-end only", same[i]);
        if (a && strcmp(a, b) != 0)
            fail_msg("%s differs:\n--- local\n%s\n--- operator\n%s", same[i], a, b);
    }
    /* The documents for people, line by line but for the platform's own lines. */
    same_lines(item(&f->local_set, "results.md"), item(&f->op_set, "results.md"), "results.md");
    same_lines(item(&f->local_set, "report.html"), item(&f->op_set, "report.html"), "report.html");

    /* The fixture reaches what the comparison is for: a recommendation with availability and
     * an autoscaler. */
    assert_true(f->local.recommended >= 0);
    assert_true(f->local.availability.applied);
    assert_non_null(item(&f->local_set, "pdb.yaml"));
    assert_non_null(item(&f->local_set, "values.yaml"));
}

/* Every finding with extreme figures: eight shapes under long labels at 7-digit rates, a
 * scale-out of eight points, 64 zones and a drain of 1000, node types with long names, the
 * cluster's findings and a long note, at several targets. The answer is composed whole (a cut
 * sentence is advise_compose's -ENOSPC) and no finding ends cut. */
static void test_extreme_figures_never_cut(void **state)
{
    static const char *spec[8] = {"1@1/512Mi", "2@2/1Gi",    "4@4/2Gi",        "8@8/4Gi",
                                  "16@16/8Gi", "64@64/32Gi", "512@512/1024Gi", "1024@1024/65536Gi"};
    static const double targets[][2] = {{9999999, 0}, {0, 99999999}, {0, 0}, {2500000, 0}};
    struct fixture *f = *state;
    struct profile *p = &f->profile;
    struct sweep_row *rows = calloc(8, sizeof(*rows));
    struct advisor_row *ar = calloc(VARIANT_MAX, sizeof(*ar));
    struct advice *a = calloc(1, sizeof(*a));
    char note[700], err[ERR_LEN];

    assert_non_null(rows);
    assert_non_null(ar);
    assert_non_null(a);
    memset(note, 'n', sizeof(note) - 1);
    note[sizeof(note) - 1] = '\0';
    for (size_t i = 0; i < 8; i++) {
        sweep_fixture_row(&rows[i], &ar[i], spec[i], 50, 30000, p);
        double rps = 1234567.0 * (double)(i + 1);
        capacity(&rows[i].cap, rps, rps * 0.97, 0.9 * (double)(i + 1));
        rows[i].cap.flags = i % 2 ? CAPACITY_FLAG_NOISY : 0;
        /* The longest label a variant holds. */
        snprintf(rows[i].variant.label, sizeof(rows[i].variant.label),
                 "%s-shape-with-a-name-as-long-as-the-label-holds-%zu", spec[i], i);
    }
    f->sweep.rows = rows;
    f->sweep.n = 8;
    f->so.npoints = 8;
    for (size_t i = 0; i < 8; i++) {
        struct sweep_scale_point *pt = &f->so.points[i];
        pt->replicas = (unsigned)i + 1;
        pt->from = i ? SWEEP_POINT_MEASURED : SWEEP_POINT_SHAPE_SEARCH;
        double low = 1234567.0 * (double)(i + 1) * (1 - 0.03 * (double)i);
        capacity(&pt->cap, low * 1.03, low, 0.9 * (double)(i + 1));
    }
    p->availability = (struct profile_availability){true, PROFILE_MAX_ZONES, PROFILE_MAX_DRAIN};
    for (size_t k = 0; k < 2; k++) {
        struct profile_node_type *n = &p->nodes[k];
        memset(n->name, 'm', sizeof(n->name) - 1);
        n->name[sizeof(n->name) - 1] = '\0';
        n->name[0] = (char)('a' + k);
        n->cpu_m = 2048000;
        n->memory = 131072LL << 30;
        n->price = 12345.678;
        n->reserved_cpu_m = 1000;
        n->reserved_memory = 1LL << 30;
    }
    for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
        for (size_t nodes = 0; nodes <= 2; nodes += 2)
            for (size_t v = 0; v < 8; v += 7) {
                p->target_rps = targets[t][0];
                p->target_users = targets[t][1];
                p->nnodes = nodes;
                f->so.variant = v;
                for (size_t i = 0; i < 8; i++)
                    advise_row_from_sweep(&f->sweep, i, &ar[i]);
                struct advise_input in = {.rows = ar,
                                          .n = 8,
                                          .profile = p,
                                          .facts = &f->sweep.facts,
                                          .scale_out_from = &f->sweep,
                                          .cluster = true,
                                          .scale_out_asked = true,
                                          .note = note};
                if (advise_compose(&in, a, err) != 0)
                    fail_msg("target %zu, %zu node types, scale-out of %zu: %s", t, nodes, v, err);
                assert_true(a->nfindings > 3);
                for (size_t i = 0; i < a->nfindings; i++) {
                    size_t len = strlen(a->findings[i]);
                    assert_true(len + 1 < ADVISOR_TEXT_LEN);
                    if (len >= 3 && strcmp(a->findings[i] + len - 3, "...") == 0)
                        fail_msg("cut: %s", a->findings[i]);
                }
            }
    f->sweep.rows = f->row;
    f->sweep.n = NV;
    p->nnodes = 0;
    for (size_t i = 0; i < 8; i++)
        load_result_free(&rows[i].load);
    free(rows);
    free(ar);
    free(a);
}

/* The findings that list variants (the FAILED ones with their reasons, the rows the host could not
 * give their CPU, more CPU than the host has, an SLO no load meets, workers beyond the cores, the
 * scaling steps), each over a full list of variants with the longest labels and reasons at 7-digit
 * rates: the answer is composed whole (never -ENOSPC, never "..."), and each list names every
 * variant or says how many it has no room for. */
static void long_label(struct advisor_row *r, const char *kind, size_t i)
{
    char label[VARIANT_LABEL_LEN];
    int w = snprintf(label, sizeof(label), "%s-%zu-", kind, i);
    memset(label + w, 'l', sizeof(label) - (size_t)w - 1);
    label[sizeof(label) - 1] = '\0';
    memcpy(r->variant.label, label, sizeof(label));
}

static void assert_whole(const struct advice *a, const char *what)
{
    for (size_t i = 0; i < a->nfindings; i++) {
        size_t len = strlen(a->findings[i]);
        if (len + 1 >= ADVISOR_TEXT_LEN ||
            (len >= 3 && strcmp(a->findings[i] + len - 3, "...") == 0))
            fail_msg("%s: cut: %s", what, a->findings[i]);
    }
}

/* The finding that starts with head names every one of n variants of kind, or the ones it
 * names and "N more" add up to n. */
static void assert_counted(const struct advice *a, const char *head, const char *kind, size_t n)
{
    for (size_t i = 0; i < a->nfindings; i++) {
        const char *f = a->findings[i];
        if (strncmp(f, head, strlen(head)) != 0)
            continue;
        size_t named = 0;
        char key[32];
        for (size_t k = 0; k < n; k++) {
            snprintf(key, sizeof(key), "%s-%zu-", kind, k);
            named += strstr(f, key) != NULL;
        }
        if (named == n)
            return;
        char more[64];
        snprintf(more, sizeof(more), "and %zu more", n - named);
        if (!strstr(f, more))
            fail_msg("%s names %zu of %zu variants and does not count the rest: %s", head, named, n,
                     f);
        return;
    }
    fail_msg("no finding starts with \"%s\"", head);
}

static void test_long_lists_never_cut(void **state)
{
    struct fixture *f = *state;
    struct advisor_row *rows = calloc(VARIANT_MAX, sizeof(*rows));
    struct advice *a = calloc(1, sizeof(*a));
    struct platform_facts facts = {.host_millicores = 4000, .limits_enforced = true};
    char note[ERR_LEN], err[ERR_LEN] = "", spec[32];
    size_t n = 0;

    assert_non_null(rows);
    assert_non_null(a);
    memset(note, 'r', sizeof(note) - 1);
    note[sizeof(note) - 1] = '\0';
    /* 16 FAILED, with the longest reasons. */
    for (size_t i = 0; i < 16; i++, n++) {
        snprintf(spec, sizeof(spec), "%zu@%zu/%zuMi", i + 1, i + 1, 256 * (i + 1));
        fixture_failed_row(&rows[n], spec, PLATFORM_FAIL_DIED, note);
        long_label(&rows[n], "failed", i);
    }
    /* 16 over the host's CPU and contended, workers beyond their cores. */
    for (size_t i = 0; i < 16; i++, n++) {
        snprintf(spec, sizeof(spec), "%zu@%zu/%zuMi", 4 * (i + 8), i + 8, 512 * (i + 1));
        fixture_row(&rows[n], spec, 1234567.0 * (double)(i + 1), 20000, 40000, 60000, 9999999);
        rows[n].flags = SWEEP_FLAG_CPU_EXCEEDS_HOST | SWEEP_FLAG_CONTENDED;
        rows[n].gen_cores = 1234.5;
        rows[n].host_other_cores = 2345.6;
        long_label(&rows[n], "host", i);
    }
    /* 16 whose SLO no load meets. */
    for (size_t i = 0; i < 16; i++, n++) {
        snprintf(spec, sizeof(spec), "%zu@%zu/%zuMi", i + 1, i + 1, 1024 * (i + 1));
        fixture_row(&rows[n], spec, 1.0, 2000000, 9000000, 9900000, 100);
        rows[n].cap.searched = true;
        rows[n].cap.valid = true;
        rows[n].cap.flags = CAPACITY_FLAG_UNMEETABLE;
        rows[n].cap.limited_by = CAPACITY_LIMIT_SLO_P95;
        rows[n].cap.nsteps = 1;
        rows[n].cap.steps[0].p95_us = 9000000;
        long_label(&rows[n], "slo", i);
    }
    /* 16 matched pairs that scale, and workers beyond the cores beside each. */
    for (size_t i = 0; i < 16; i++, n++) {
        snprintf(spec, sizeof(spec), "%zu@%zu/%zuMi", i + 1 + (i % 2) * (i + 1), i + 1,
                 (size_t)2048);
        fixture_row(&rows[n], spec, 1234567.0 * (double)(i + 1), 2000, 4000, 6000, 9999999);
        long_label(&rows[n], "scale", i);
    }
    assert_int_equal(n, (size_t)VARIANT_MAX);
    if (advise_rows(rows, n, &f->profile, &facts, a, err) != 0)
        fail_msg("advise_rows: %s", err);
    assert_whole(a, "64 variants");
    assert_counted(a, "16 variants FAILED", "failed", 16);
    assert_counted(a, "16 variants asked for more CPU", "host", 16);
    assert_counted(a, "The host could not give 16 variants", "host", 16);
    assert_counted(a, "Even one request at a time misses the SLO", "slo", 16);
    free(rows);
    free(a);
}

/* The answer says when a capacity cut short would have been the recommendation: the row, its
 * figure and how many of the profile's repeats it rests on. */
static void test_cut_short_said(void **state)
{
    struct fixture *f = *state;
    struct advice *a = calloc(1, sizeof(*a));
    char err[ERR_LEN] = "";

    assert_non_null(a);
    for (size_t i = 0; i < NV; i++)
        advise_row_from_sweep(&f->sweep, i, &f->op_rows[i]);
    /* The most capacity per cost without a target, measured on 2 of the 3 repeats. */
    f->profile.target_rps = 0;
    struct capacity_result *c = &f->op_rows[0].cap;
    c->interval.n = 2;
    c->flags = CAPACITY_FLAG_REPEATS_CUT | CAPACITY_FLAG_TOO_FEW_REPEATS;
    c->valid = capacity_valid(c);
    struct advise_input in = {.rows = f->op_rows, .n = NV, .profile = &f->profile};
    assert_int_equal(advise_compose(&in, a, err), 0);
    assert_true(a->recommended != 0);
    bool said = false;
    for (size_t i = 0; i < a->nfindings; i++)
        said = said || (strstr(a->findings[i], "1w / 1.0c / 512Mi would have been recommended") &&
                        strstr(a->findings[i], "rests on 2 of the 3 repeats the profile asks for"));
    assert_true(said);
    free(a);
}

/* A sentence that does not fit is the answer's error, never a silent cut. */
static void test_cut_is_an_error(void **state)
{
    struct fixture *f = *state;
    char note[ADVISOR_TEXT_LEN + 10], err[ERR_LEN] = "";

    memset(note, 'x', sizeof(note) - 1);
    note[sizeof(note) - 1] = '\0';
    for (size_t i = 0; i < NV; i++)
        advise_row_from_sweep(&f->sweep, i, &f->op_rows[i]);
    struct advise_input in = {.rows = f->op_rows, .n = NV, .profile = &f->profile, .note = note};
    assert_int_equal(advise_compose(&in, &f->op, err), -ENOSPC);
    assert_non_null(strstr(err, "1 finding did not fit"));
}

/* ADVISE_COMPOSE_DUMP=dir: both documents' outputs at several targets, for comparing bytes
 * across builds. */
static int dump(const char *dir)
{
    static const double targets[] = {900, 1500, 2400, 3000, 4200, 0};
    char path[4096];

    for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
        void *state = NULL;
        setup(&state);
        struct fixture *f = state;
        f->profile.target_rps = targets[t];
        f->so.variant = t % 2; /* the scale-out of the first shape, or the second's */
        render_local(f);
        render_operator(f);
        const struct output_set *sets[] = {&f->local_set, &f->op_set};
        for (size_t k = 0; k < 2; k++)
            for (size_t i = 0; i < sets[k]->n; i++) {
                snprintf(path, sizeof(path), "%s/%zu-%s-%s", dir, t, k ? "op" : "local",
                         sets[k]->items[i].name);
                FILE *out = fopen(path, "w");
                if (!out)
                    return 1;
                fputs(sets[k]->items[i].data, out);
                fclose(out);
            }
        teardown(&state);
    }
    return 0;
}

int main(void)
{
    if (getenv("ADVISE_COMPOSE_DUMP"))
        return dump(getenv("ADVISE_COMPOSE_DUMP"));

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_local_and_operator_documents_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extreme_figures_never_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_lists_never_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_short_said, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_is_an_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
