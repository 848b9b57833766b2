/* Tests for src/output/output*.c: values.yaml and auto-sizing.yaml parse back (libyaml) to what
 * the advisor decided; results.json carries each variant's spec, verdict, usage and the load
 * run's own fields exactly as report_json names them; report.html is self-contained; files are
 * written atomically. */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdbool.h>
#include <unistd.h>

#include <cmocka.h>
#include <yaml.h>

#include "advise/advise.h"
#include "core/quantity.h"
#include "load/report.h"
#include "output/output.h"
#include "output/output_int.h"
#include "output/output_set.h"
#include "advise/rule.h"
#include "sweep/runner.h"
#include "sweep_fixture.h"
#include "advise/sizing.h"
#include "fixtures.h"

#define NV 3

struct fixture {
    struct profile profile;
    struct sweep sweep;
    struct advisor_row rows[NV];
    struct advice advice;
    struct output_doc doc;
};

/* The document over rows[0..n), with the advice the advisor gives for them. */
static void fill_doc(struct output_doc *d, struct sweep *s, struct advisor_row *rows, size_t n,
                     struct advice *a, const struct profile *p, int64_t host_millicores)
{
    char err[ERR_LEN];

    s->facts.host_millicores = host_millicores;
    s->facts.limits_enforced = true;
    s->facts.load_shares_host = true;
    snprintf(s->facts.machine, sizeof(s->facts.machine), "test machine");
    snprintf(s->platform, sizeof(s->platform), "local");
    assert_int_equal(advise_rows(rows, n, p, &s->facts, a, err), 0);
    memset(d, 0, sizeof(*d));
    d->rows = rows;
    d->n = n;
    d->advice = a;
    d->sweep = s;
    d->profile = p;
    d->facts = &s->facts;
    d->platform = "local";
    d->command = "sizeup sweep -- ./app";
    d->started = 1764446400;
    d->finished = 1764446500;
    output_paths_default(&d->paths);
}

/* Three measured variants with real load results: latencies recorded into the histograms, the
 * throughput following the CPU. */
static int setup(void **state)
{
    static const char *specs[NV] = {"1@0.5/256Mi", "1@1/256Mi", "2@2/512Mi"};
    static const double rps[NV] = {200, 420, 800};
    static const uint64_t lat_us[NV] = {150000, 60000, 30000};
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    assert_int_equal(profile_init_default(&f->profile), 0);
    f->sweep.n = NV;
    f->sweep.rows = calloc(NV, sizeof(*f->sweep.rows));
    assert_non_null(f->sweep.rows);
    for (int i = 0; i < NV; i++)
        sweep_fixture_row(&f->sweep.rows[i], &f->rows[i], specs[i], rps[i], lat_us[i], &f->profile);
    fill_doc(&f->doc, &f->sweep, f->rows, NV, &f->advice, &f->profile, 2000);
    f->doc.configs = "1@0.5/256Mi 1@1/256Mi 2@2/512Mi";
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < NV; i++)
        load_result_free(&f->sweep.rows[i].load);
    free(f->sweep.rows);
    profile_free(&f->profile);
    free(f);
    return 0;
}

/* Renders with fn into a malloc'd string. */
static char *render(int (*fn)(FILE *, const struct output_doc *, char *),
                    const struct output_doc *d)
{
    char *buf = NULL, err[ERR_LEN] = "";
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    if (fn(m, d, err) != 0)
        fail_msg("render failed: %s", err);
    fclose(m);
    return buf;
}

static int answer_text(FILE *f, const struct output_doc *d, char *err)
{
    return output_answer(f, d, OUTPUT_ANSWER_TEXT, err);
}

/* Looks up a dotted path in a parsed YAML document; returns the scalar or NULL. */
static const char *yaml_get(yaml_document_t *doc, const char *path)
{
    yaml_node_t *n = yaml_document_get_root_node(doc);
    char buf[256], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
        if (!n || n->type != YAML_MAPPING_NODE)
            return NULL;
        yaml_node_t *next = NULL;
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, seg) == 0)
                next = yaml_document_get_node(doc, p->value);
        }
        n = next;
    }
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static void parse_yaml(const char *text, yaml_document_t *doc)
{
    yaml_parser_t p;
    assert_true(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&p, doc))
        fail_msg("YAML does not parse: %s\n%s", p.problem, text);
    yaml_parser_delete(&p);
}

static void test_values_parse_back(void **state)
{
    struct fixture *f = *state;
    const struct advice *a = &f->advice;
    yaml_document_t doc;
    char want[64];

    assert_int_equal(a->recommended, 2);
    char *text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    snprintf(want, sizeof(want), "%u", a->workers);
    assert_string_equal(yaml_get(&doc, "workers.count"), want);
    assert_string_equal(yaml_get(&doc, "workers.count"), "2");
    assert_string_equal(yaml_get(&doc, "resources.limits.cpu"), "2000m");
    assert_string_equal(yaml_get(&doc, "resources.limits.memory"), "512Mi");
    /* Requests from measured usage: 1.8 cores * 1.25 = 2.25 -> capped at the 2000m limit;
     * 140 MiB * 1.25 = 175 MiB. */
    snprintf(want, sizeof(want), "%lldm", (long long)a->request_cpu_m);
    assert_string_equal(yaml_get(&doc, "resources.requests.cpu"), want);
    assert_string_equal(yaml_get(&doc, "resources.requests.cpu"), "2000m");
    assert_string_equal(yaml_get(&doc, "resources.requests.memory"), "175Mi");
    yaml_document_delete(&doc);
    free(text);
}

static void test_values_custom_paths(void **state)
{
    struct fixture *f = *state;
    yaml_document_t doc;
    char err[ERR_LEN] = "";

    assert_int_equal(output_paths_parse("workers=app.server.workers,resources=app.resources",
                                        &f->doc.paths, err),
                     0);
    char *text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "app.server.workers"), "2");
    assert_string_equal(yaml_get(&doc, "app.resources.limits.cpu"), "2000m");
    assert_null(yaml_get(&doc, "workers.count"));
    yaml_document_delete(&doc);
    free(text);
    output_paths_default(&f->doc.paths);
}

static void test_paths_bad(void **state)
{
    (void)state;
    struct output_paths p;
    char err[ERR_LEN] = "";
    static const char *bad[] = {"workers=",
                                "workers=a..b",
                                "workers=a b",
                                "cpu=x",
                                "workers=res.x,resources=res",
                                "justtext",
                                "workers=a.b.c.d.e.f.g.h.i",
                                "replicas=",
                                "replicas=workers.count.x",
                                "autoscaling=resources.hpa",
                                "replicas=app.hpa.n,autoscaling=app.hpa",
                                "autoscaling=a=b",
                                "workers=a,,resources=b",
                                "workers=a,",
                                "workers=a,workers=b"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (output_paths_parse(bad[i], &p, err) == 0)
            fail_msg("values-paths '%s' accepted", bad[i]);
    assert_int_equal(output_paths_parse("resources=r", &p, err), 0);
    assert_string_equal(p.workers, "workers.count");
    assert_string_equal(p.resources, "r");
    assert_string_equal(p.replicas, "replicaCount");
    assert_string_equal(p.autoscaling, "autoscaling");
    assert_int_equal(output_paths_parse("replicas=app.replicas , autoscaling=app.hpa", &p, err), 0);
    assert_string_equal(p.replicas, "app.replicas");
    assert_string_equal(p.autoscaling, "app.hpa");
    assert_string_equal(p.workers, "workers.count");
}

/* A sizing with a target for the recommended row: 8 replicas, an HPA from 8 to 10 at 69%. */
static void target_sizing(struct sizing *s, bool hpa)
{
    memset(s, 0, sizeof(*s));
    s->recommended = 2;
    s->by_target = true;
    s->target_rps = 5000;
    s->replicas = 8;
    s->hpa.enabled = hpa;
    s->hpa.min_replicas = 8;
    s->hpa.max_replicas = 10;
    s->hpa.target_cpu_utilization = 69;
}

static void test_values_sizing(void **state)
{
    struct fixture *f = *state;
    struct sizing *s = &f->advice.sizing;
    yaml_document_t doc;
    char err[ERR_LEN] = "";

    /* No target: no replica or autoscaling keys at all. */
    char *text = render(output_values_yaml, &f->doc);
    assert_null(strstr(text, "replicaCount"));
    assert_null(strstr(text, "autoscaling"));
    free(text);
    target_sizing(s, true);
    s->by_target = false;
    s->target_rps = 0;
    text = render(output_values_yaml, &f->doc);
    assert_null(strstr(text, "replicaCount"));
    assert_null(strstr(text, "autoscaling"));
    free(text);

    /* A target and an HPA: the keys a chart made by `helm create` reads, as YAML numbers and a
     * boolean, beside the existing values. */
    target_sizing(s, true);
    text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "workers.count"), "2");
    assert_string_equal(yaml_get(&doc, "replicaCount"), "8");
    assert_string_equal(yaml_get(&doc, "autoscaling.enabled"), "true");
    assert_string_equal(yaml_get(&doc, "autoscaling.minReplicas"), "8");
    assert_string_equal(yaml_get(&doc, "autoscaling.maxReplicas"), "10");
    assert_string_equal(yaml_get(&doc, "autoscaling.targetCPUUtilizationPercentage"), "69");
    assert_non_null(strstr(text, "replicaCount: 8\n"));
    assert_non_null(strstr(text, "enabled: true\n"));
    yaml_document_delete(&doc);
    free(text);

    /* A target without an HPA: the replica count, and the chart's HPA switched off (its
     * replicaCount only applies then). */
    target_sizing(s, false);
    text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "replicaCount"), "8");
    assert_string_equal(yaml_get(&doc, "autoscaling.enabled"), "false");
    assert_null(yaml_get(&doc, "autoscaling.minReplicas"));
    yaml_document_delete(&doc);
    free(text);

    /* A stream target (no req/s): the replica count all the same, as deployment-patch.yaml. */
    target_sizing(s, false);
    s->streams = true;
    s->target_rps = 0;
    s->target_streams = 20000;
    text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "replicaCount"), "8");
    assert_string_equal(yaml_get(&doc, "autoscaling.enabled"), "false");
    yaml_document_delete(&doc);
    free(text);

    /* Custom paths. */
    target_sizing(s, true);
    assert_int_equal(
        output_paths_parse("replicas=app.replicas,autoscaling=app.hpa", &f->doc.paths, err), 0);
    text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "app.replicas"), "8");
    assert_string_equal(yaml_get(&doc, "app.hpa.maxReplicas"), "10");
    assert_string_equal(yaml_get(&doc, "workers.count"), "2");
    assert_null(yaml_get(&doc, "replicaCount"));
    yaml_document_delete(&doc);
    free(text);
    output_paths_default(&f->doc.paths);
}

/* One autoscaler path per Deployment: whatever the HPA (CPU or the request rate), the mapping of
 * the autoscaling key and the platform, the answer (results.md, report.html, the terminal) and
 * the files never name the chart's autoscaling block and hpa.yaml together. Mapped (the
 * default) with a CPU HPA: values.yaml enables the chart's HPA, `helm upgrade` applies it, no
 * hpa.yaml is written or offered. Unmapped (autoscaling=): values.yaml has no autoscaling
 * block, hpa.yaml and `kubectl apply` alone. */
static bool set_has(const struct output_set *set, const char *name, const char **data)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->items[i].name, name) == 0) {
            *data = set->items[i].data;
            return true;
        }
    return false;
}

static void test_one_autoscaler_path(void **state)
{
    struct fixture *f = *state;
    struct sizing *s = &f->advice.sizing;
    char err[ERR_LEN] = "";
    const char *paths[] = {"", "autoscaling=", "autoscaling=app.hpa"};

    f->doc.workload = (struct output_workload){"app", "app", "WORKERS", NULL, "app=shop"};
    for (size_t k = 0; k < 3; k++)
        for (int pods = 0; pods <= 1; pods++)
            for (int kube = 0; kube <= 1; kube++) {
                assert_int_equal(output_paths_parse(paths[k], &f->doc.paths, err), 0);
                target_sizing(s, true);
                s->hpa.metric = pods ? SIZING_HPA_PODS : SIZING_HPA_CPU;
                snprintf(s->hpa.metric_name, sizeof(s->hpa.metric_name), "rps");
                s->hpa.target_average_value = 540;
                f->doc.platform = kube ? "kube" : "local";
                struct output_set set = {0};
                if (output_set_render(&f->doc, NULL, 0, &set, err) != 0)
                    fail_msg("output_set_render: %s", err);
                const char *values = NULL, *hpa = NULL, *md = NULL, *html = NULL;
                assert_true(set_has(&set, "values.yaml", &values));
                assert_true(set_has(&set, "results.md", &md));
                assert_true(set_has(&set, "report.html", &html));
                bool has_hpa = set_has(&set, "hpa.yaml", &hpa);
                bool chart_on = strstr(values, "enabled: true") != NULL;
                bool mapped = f->doc.paths.autoscaling[0] != '\0';
                char *text = render(answer_text, &f->doc);
                /* Never both, in the files or in any answer. */
                if (chart_on && has_hpa)
                    fail_msg("paths '%s', %s HPA: values.yaml enables the chart's HPA and hpa.yaml "
                             "is written",
                             paths[k], pods ? "request-rate" : "CPU");
                const char *answers[] = {text, md, html};
                for (size_t i = 0; i < 3; i++)
                    if (chart_on && strstr(answers[i], "hpa.yaml"))
                        fail_msg("paths '%s': the answer offers hpa.yaml beside values.yaml's "
                                 "autoscaler:\n%s",
                                 paths[k], answers[i]);
                if (!pods && mapped) {
                    assert_true(chart_on && !has_hpa);
                    assert_non_null(strstr(text, " block, applied by helm upgrade)"));
                    assert_non_null(strstr(text, "helm upgrade RELEASE CHART"));
                } else {
                    /* hpa.yaml (or keda.yaml) alone, and kubectl apply. */
                    assert_true(has_hpa && !chart_on);
                    assert_non_null(strstr(text, "kubectl apply -f hpa.yaml"));
                    if (!mapped)
                        assert_null(strstr(values, "autoscaling") ? strstr(values, "enabled")
                                                                  : NULL);
                    else
                        assert_non_null(strstr(values, "enabled: false"));
                }
                free(text);
                output_set_free(&set);
            }
    output_paths_default(&f->doc.paths);
    f->doc.platform = "local";
    memset(&f->doc.workload, 0, sizeof(f->doc.workload));
    memset(s, 0, sizeof(*s));
}

/* The answer opens results.md, report.html and the terminal: shape, replicas, autoscaler, the
 * exact bytes values.yaml's renderer writes (custom paths included) and the apply commands,
 * before the evidence; a target out of reach and no recommendation are said, not rendered. */
static void test_answer_first(void **state)
{
    struct fixture *f = *state;
    struct sizing *s = &f->advice.sizing;
    char err[ERR_LEN] = "";

    target_sizing(s, true);
    assert_int_equal(output_paths_parse("replicas=app.replicas", &f->doc.paths, err), 0);
    char *values = render(output_values_yaml, &f->doc);
    char *md = render(output_results_md, &f->doc);
    const char *ans = strstr(md, "## Answer\n");
    assert_non_null(ans);
    assert_true(ans < strstr(md, "| Setup |"));
    assert_true(ans < strstr(md, "| Config | Workers |"));
    const char *v = strstr(md, values);
    assert_non_null(v);
    assert_true(v < strstr(md, "| Setup |"));
    assert_non_null(strstr(md, "- **Replicas**: 8 for the target 5000 req/s"));
    assert_non_null(strstr(md, "- **Autoscaler**: an HPA from 8 to 10 replicas at 69%"));
    assert_non_null(strstr(md, "- **Shape**: 2w / 2.0c / 512Mi: 2 workers"));
    assert_non_null(strstr(md, "helm upgrade RELEASE CHART --reuse-values -f values.yaml\n"));
    /* The chart's autoscaling is mapped: values.yaml carries the HPA, and nothing else does. */
    assert_null(strstr(md, "hpa.yaml"));
    assert_null(strstr(md, "kubectl patch deployment"));
    /* values.yaml appears once: the answer's is the one copy. */
    assert_null(strstr(v + 1, values));
    free(md);

    char *html = render(output_report_html, &f->doc);
    const char *sec = strstr(html, "<section id=\"answer\">");
    assert_non_null(sec);
    assert_true(sec < strstr(html, "<table id=\"results\">"));
    assert_true(sec < strstr(html, "<svg id=\"chart-throughput\""));
    assert_non_null(strstr(html, "app:\n  replicas: 8\n"));
    assert_non_null(strstr(html, "<pre id=\"answer-apply\">"));
    free(html);

    char *text = render(answer_text, &f->doc);
    assert_non_null(strstr(text, "    app:\n      replicas: 8\n"));
    assert_non_null(strstr(text, "    helm upgrade RELEASE CHART"));
    free(text);

    /* A Deployment named: its patch command too. */
    f->doc.workload.deployment = "web";
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "kubectl patch deployment web --type strategic --patch-file "
                               "deployment-patch.yaml\n"));
    assert_null(strstr(md, "kubectl sizeup results"));
    free(md);
    /* In a cluster (the operator's ConfigMap) the files are fetched first. */
    f->doc.platform = "kube";
    md = render(output_results_md, &f->doc);
    const char *fetch = strstr(md, "kubectl sizeup results deploy/web -o values > values.yaml\n");
    assert_non_null(fetch);
    assert_true(fetch < strstr(md, "helm upgrade RELEASE"));
    assert_null(strstr(md, "-o hpa"));
    free(md);
    /* The chart's autoscaling unmapped: hpa.yaml is fetched and applied instead. */
    assert_int_equal(output_paths_parse("replicas=app.replicas,autoscaling=", &f->doc.paths, err),
                     0);
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "kubectl sizeup results deploy/web -o hpa > hpa.yaml\n"));
    assert_non_null(strstr(md, "kubectl apply -f hpa.yaml\n"));
    free(md);
    f->doc.platform = "local";
    f->doc.workload.deployment = NULL;

    /* A stream target is named in streams. */
    s->streams = true;
    s->target_rps = 0;
    s->target_streams = 20000;
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "- **Replicas**: 8 for the target 20000 streams"));
    /* Under the table too, in streams (not "Target: 0 req/s"). */
    assert_non_null(strstr(md, "\nTarget: 20000 streams; at the recommended size that takes 8 "
                               "replicas.\n"));
    assert_null(strstr(md, "Target: 0 req/s"));
    free(md);

    /* A target out of reach: no replica count, the sizing's reason. */
    target_sizing(s, false);
    s->replicas = 0;
    snprintf(s->why, sizeof(s->why), "no shape reaches 5000 req/s");
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "- **Replicas**: none for the target 5000 req/s: no shape reaches"));
    assert_null(strstr(md, "kubectl apply -f hpa.yaml"));
    free(md);

    /* No target: said, with how to give one. */
    memset(s, 0, sizeof(*s));
    s->recommended = 2;
    s->replicas = 1;
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "- **Replicas**: no target was given"));
    free(md);

    /* No recommendation: why, and nothing to apply. */
    int rec = f->advice.recommended;
    f->advice.recommended = -1;
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "## Answer\n\nNo variant holds the load"));
    assert_non_null(strstr(md, "there is nothing to apply"));
    assert_null(strstr(md, "helm upgrade"));
    free(md);
    html = render(output_report_html, &f->doc);
    assert_non_null(strstr(html, "<p id=\"answer-none\">No variant holds the load"));
    free(html);
    f->advice.recommended = rec;
    free(values);
    output_paths_default(&f->doc.paths);
}

static void test_rule_parse_back(void **state)
{
    struct fixture *f = *state;
    const struct advice *a = &f->advice;
    struct rule r;
    yaml_document_t doc;
    char err[ERR_LEN] = "";

    char *text = render(output_rule_yaml, &f->doc);
    assert_int_equal(rule_load_buffer(text, strlen(text), "auto-sizing.yaml", &r, err), 0);
    assert_true(fabs(r.cores_per_worker - a->rule.cores_per_worker) < 1e-9);
    assert_true(fabs(r.memory_per_worker_mib - a->rule.memory_per_worker_mib) < 1e-9);
    assert_int_equal(r.max_workers, a->rule.max_workers);
    /* 70 MiB per worker measured + 25% = 87.5 -> 96 MiB (16 MiB steps). */
    assert_true(fabs(r.memory_per_worker_mib - 96) < 1e-9);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "derivation.memory_per_worker_mib.source"), "measured");
    assert_string_equal(yaml_get(&doc, "derivation.memory_per_worker_mib.variants"), "3");
    assert_string_equal(yaml_get(&doc, "derivation.max_workers.source"), "fallback (default rule)");
    /* No CPU level of this fixture was measured with two worker counts. */
    assert_string_equal(yaml_get(&doc, "derivation.cores_per_worker.source"),
                        "fallback (default rule)");
    assert_non_null(strstr(yaml_get(&doc, "derivation.cores_per_worker.from"), "cannot decide"));
    assert_non_null(strstr(yaml_get(&doc, "rule"), "min(round(cores / cores_per_worker)"));
    yaml_document_delete(&doc);
    free(text);
}

static void test_results_json(void **state)
{
    struct fixture *f = *state;
    cJSON *j = output_results_json(&f->doc);

    assert_non_null(j);
    cJSON *vs = cJSON_GetObjectItemCaseSensitive(j, "variants");
    assert_true(cJSON_IsArray(vs));
    assert_int_equal(cJSON_GetArraySize(vs), NV);
    for (int i = 0; i < NV; i++) {
        cJSON *v = cJSON_GetArrayItem(vs, i);
        /* Sweep order, spec, verdict, usage. */
        assert_string_equal(cJSON_GetObjectItem(v, "spec")->valuestring,
                            f->sweep.rows[i].variant.spec);
        assert_string_equal(cJSON_GetObjectItem(v, "verdict")->valuestring,
                            verdict_name(f->advice.rows[i].verdict));
        cJSON *u = cJSON_GetObjectItem(v, "usage");
        assert_non_null(u);
        assert_true(fabs(cJSON_GetObjectItem(u, "cpu_s")->valuedouble -
                         f->sweep.rows[i].usage.cpu_s) < 1e-9);
        assert_true(cJSON_GetObjectItem(u, "peak_memory_bytes")->valuedouble ==
                    (double)f->sweep.rows[i].usage.peak_memory_bytes);
        /* Every field report_json gives, under the same name with the same value. */
        cJSON *rep = report_json(&f->sweep.rows[i].load);
        assert_non_null(rep);
        for (cJSON *k = rep->child; k; k = k->next) {
            cJSON *got = cJSON_GetObjectItemCaseSensitive(v, k->string);
            if (!got)
                fail_msg("variant %d lacks report_json field '%s'", i, k->string);
            if (strcmp(k->string, "verdict") != 0 && !cJSON_Compare(got, k, 1))
                fail_msg("variant %d field '%s' differs from report_json", i, k->string);
        }
        cJSON_Delete(rep);
        assert_true(cJSON_IsBool(cJSON_GetObjectItem(v, "recommended")));
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(v, "recommended")),
                         i == f->advice.recommended);
    }
    cJSON *rec = cJSON_GetObjectItem(j, "recommendation");
    assert_string_equal(cJSON_GetObjectItem(rec, "spec")->valuestring, "2@2/512Mi");
    cJSON *prof = cJSON_GetObjectItem(j, "profile");
    assert_int_equal(cJSON_GetObjectItem(prof, "users")->valueint, 50);
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(j, "findings")) > 0);
    cJSON_Delete(j);
}

/* results.json's profile carries every input the sizing was judged by, under the YAML's names
 * with the _ms/_s suffixes, so compare can tell differently judged sweeps apart. */
static void test_results_json_profile(void **state)
{
    struct fixture *f = *state;
    static const char y1[] = "target: { rps: 3000 }\n"
                             "slo: { p95: 80ms, p99: 200ms, errors: 2% }\n"
                             "search: { warmup: 500ms, window: 2s, precision: 10%, repeats: 4, "
                             "max_steps: 6, max_rps: 9000, budget: 2m40s }\n"
                             "cost: { cpu: 2, memory_gib: 0.5 }\n"
                             "planning: { buffer: 20%, growth: 50% }\n";
    static const char y2[] = "target: { streams: 20000 }\n"
                             "streams: { url: /ws, count: 500, ramp: 2s }\n"
                             "producers: { count: 2, rate: 50, request: { method: POST, path: /cmd "
                             "}, match: seq }\n"
                             "slo: { delivery_p95: 150ms }\n";
    struct profile p;
    char err[ERR_LEN] = "";

    assert_int_equal(profile_load_buffer(y1, sizeof(y1) - 1, "t.yaml", &p, err), 0);
    f->doc.profile = &p;
    cJSON *j = output_results_json(&f->doc);
    cJSON *prof = cJSON_GetObjectItem(j, "profile");
#define NUM(o, path) cJSON_GetObjectItem(cJSON_GetObjectItem(prof, o), path)->valuedouble
    assert_true(cJSON_GetObjectItem(prof, "target_rps")->valuedouble == 3000);
    assert_true(NUM("slo", "p95_ms") == 80);
    assert_true(NUM("slo", "p99_ms") == 200);
    assert_true(fabs(NUM("slo", "errors") - 0.02) < 1e-12);
    assert_true(NUM("search", "warmup_s") == 0.5);
    assert_true(NUM("search", "window_s") == 2);
    assert_true(fabs(NUM("search", "precision") - 0.10) < 1e-12);
    assert_true(NUM("search", "repeats") == 4);
    assert_true(NUM("search", "max_steps") == 6);
    assert_true(NUM("search", "max_rps") == 9000);
    assert_true(NUM("search", "budget_s") == 160);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(prof, "search"), "mode")->valuestring, "capacity");
    assert_true(NUM("cost", "cpu") == 2);
    assert_true(NUM("cost", "memory_gib") == 0.5);
    assert_true(fabs(NUM("planning", "buffer") - 0.2) < 1e-12);
    assert_true(fabs(NUM("planning", "growth") - 0.5) < 1e-12);
    assert_null(cJSON_GetObjectItem(prof, "streams"));
    cJSON_Delete(j);
    profile_free(&p);

    assert_int_equal(profile_load_buffer(y2, sizeof(y2) - 1, "t.yaml", &p, err), 0);
    f->doc.profile = &p;
    j = output_results_json(&f->doc);
    prof = cJSON_GetObjectItem(j, "profile");
    assert_true(cJSON_GetObjectItem(prof, "target_streams")->valuedouble == 20000);
    assert_true(NUM("slo", "delivery_p95_ms") == 150);
    assert_true(NUM("streams", "count") == 500);
    assert_true(NUM("streams", "ramp_s") == 2);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(prof, "streams"), "url")->valuestring, "/ws");
    assert_true(NUM("producers", "count") == 2);
    assert_true(NUM("producers", "rate") == 50);
    cJSON *req = cJSON_GetObjectItem(cJSON_GetObjectItem(prof, "producers"), "request");
    assert_string_equal(cJSON_GetObjectItem(req, "method")->valuestring, "POST");
    assert_string_equal(cJSON_GetObjectItem(req, "path")->valuestring, "/cmd");
#undef NUM
    cJSON_Delete(j);
    profile_free(&p);
    f->doc.profile = &f->profile;
}

/* The rest of the inputs: the stages as a list (the count stays), the scale-out and the
 * generators (null when absent), and each request's header names with the SHA-256 of each value
 * and of its body, never the values themselves (a header can hold a token). */
static void test_results_json_every_input(void **state)
{
    struct fixture *f = *state;
    static const char y[] =
        "stages:\n  - { duration: 2s, rate: 10 }\n  - { duration: 3s, rate: 40 }\n"
        "scale_out: { replicas: [1, 2, 4], variant: 1@1/256Mi }\n"
        "generators: 3\n"
        "requests:\n"
        "  - { name: list, path: /items, weight: 3 }\n"
        "  - name: vote\n    method: POST\n    path: /votes\n    weight: 1\n"
        "    headers: { Authorization: \"Bearer s3cret\", X-A: \"b\" }\n"
        "    body: '{\"id\":1}'\n";
    struct profile p;
    char err[ERR_LEN] = "";

    if (profile_load_buffer(y, sizeof(y) - 1, "t.yaml", &p, err) != 0)
        fail_msg("profile: %s", err);
    f->doc.profile = &p;
    cJSON *j = output_results_json(&f->doc);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *prof = cJSON_GetObjectItem(j, "profile");
    assert_int_equal(cJSON_GetObjectItem(prof, "stages")->valueint, 2);
    cJSON *sl = cJSON_GetObjectItem(prof, "stage_list");
    assert_int_equal(cJSON_GetArraySize(sl), 2);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(sl, 0), "duration_s")->valuedouble == 2);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(sl, 0), "rate")->valuedouble == 10);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(sl, 1), "rate")->valuedouble == 40);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(sl, 1), "users"));
    cJSON *so = cJSON_GetObjectItem(prof, "scale_out");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(so, "replicas")), 3);
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(so, "replicas"), 2)->valueint, 4);
    assert_string_equal(cJSON_GetObjectItem(so, "variant")->valuestring, "1@1/256Mi");
    assert_int_equal(cJSON_GetObjectItem(prof, "generators")->valueint, 3);
    cJSON *reqs = cJSON_GetObjectItem(prof, "requests");
    cJSON *r0 = cJSON_GetArrayItem(reqs, 0), *r1 = cJSON_GetArrayItem(reqs, 1);
    assert_null(cJSON_GetObjectItem(r0, "headers"));
    assert_null(cJSON_GetObjectItem(r0, "body_sha256"));
    cJSON *hs = cJSON_GetObjectItem(r1, "headers");
    assert_int_equal(cJSON_GetArraySize(hs), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(hs, 0), "name")->valuestring,
                        "Authorization");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(hs, 0), "value_sha256")->valuestring,
                        "0c9ae6066b41d3711dea4667cfcc513f60cfe047fb1bf4056ca7d1a8d089cf5a");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(hs, 1), "value_sha256")->valuestring,
                        "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d");
    assert_string_equal(cJSON_GetObjectItem(r1, "body_sha256")->valuestring,
                        "037c9214eef74cc3887f3a4f085b4e17d76280dafd273b0ee160c09c4ba1cfd4");
    assert_null(strstr(text, "s3cret"));
    assert_null(strstr(text, "\"id\""));
    free(text);
    cJSON_Delete(j);
    profile_free(&p);

    /* Without them: null, so a reader tells "none" from a file that predates the field. */
    f->doc.profile = &f->profile;
    j = output_results_json(&f->doc);
    prof = cJSON_GetObjectItem(j, "profile");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(prof, "scale_out")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(prof, "generators")));
    assert_null(cJSON_GetObjectItem(prof, "stage_list"));
    cJSON_Delete(j);
}

static void test_md_and_html(void **state)
{
    struct fixture *f = *state;

    char *md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "| Config | Workers | CPU | Memory | Throughput | P50 | P95 | P99 "
                               "| Errors | State | Est. active users |"));
    assert_non_null(strstr(md, "| * 2w / 2.0c / 512Mi | 2 | 2 | 512Mi | 800 req/s |"));
    assert_non_null(strstr(md, "~1600"));
    assert_non_null(strstr(md, "| Command | `sizeup sweep -- ./app` |"));
    assert_non_null(strstr(md, "## What the shape tells you"));
    free(md);

    /* The setup names the load that ran: the fixed load, or the search and its SLO. */
    enum profile_search_mode mode = f->profile.search.mode;
    f->profile.search.mode = PROFILE_SEARCH_FIXED;
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "concurrent users, 20s each after 5s warm-up"));
    free(md);
    f->profile.search.mode = PROFILE_SEARCH_CAPACITY;
    md = render(output_results_md, &f->doc);
    assert_null(strstr(md, "each after"));
    assert_non_null(strstr(md, "capacity search within the SLO (p95 < 100ms, errors < 1%): "
                               "open-loop steps of 5s after 2s warm-up, precision 5%, 3 repeats"));
    /* Beside the table: what its columns are in capacity mode and the SLO they were judged on. */
    assert_non_null(strstr(md, "Capacity search: Throughput is each variant's capacity within "
                               "the SLO (p95 < 100ms, errors < 1%)"));
    free(md);
    char *html = render(output_report_html, &f->doc);
    assert_non_null(strstr(html, "<p class=\"slo\">Capacity search: Throughput is"));
    free(html);
    f->profile.search.mode = mode;

    html = render(output_report_html, &f->doc);
    assert_non_null(strstr(html, "<svg id=\"chart-throughput\""));
    assert_non_null(strstr(html, "<svg id=\"chart-p95\""));
    assert_non_null(strstr(html, "<svg id=\"chart-latency\""));
    assert_non_null(strstr(html, "<table id=\"results\">"));
    assert_non_null(strstr(html, "<tr class=\"rec\"><td>* 2w / 2.0c / 512Mi"));
    /* Self-contained: no scripts, stylesheets or images from anywhere. */
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "src=\""));
    assert_null(strstr(html, "href=\""));
    free(html);
}

/* A capacity search adds two columns to the tables (a fixed-load table stays as it was, above)
 * and two charts to report.html: the capacity bars with their interval whisker, and per variant
 * p95/p99 against the offered rate with the SLO line and the capacity. Every SVG stays well-formed
 * XML (libyaml cannot say so; the integration test parses them): here, the elements are there. */
static void test_capacity_columns_and_charts(void **state)
{
    struct fixture *f = *state;
    static const double rps[NV] = {200, 420, 800};

    for (size_t i = 0; i < NV; i++) {
        struct capacity_result *c = &f->rows[i].cap;
        memset(c, 0, sizeof(*c));
        c->searched = c->valid = true;
        c->rps = rps[i];
        c->interval =
            (struct stats_summary){3, rps[i], 0, 0.05 * rps[i], 0.95 * rps[i], 1.05 * rps[i]};
        c->per_core = rps[i] / ((double)f->rows[i].variant.cpu_millicores / 1000.0);
        for (int k = 0; k < 3; k++)
            c->steps[c->nsteps++] = (struct capacity_step){.kind = CAPACITY_STEP_SEARCH,
                                                           .offered_rps = rps[i] * (0.5 + 0.5 * k),
                                                           .achieved_rps = rps[i] * (0.5 + 0.5 * k),
                                                           .p95_us = 20000 + 200000 * (uint64_t)k,
                                                           .p99_us = 30000 + 300000 * (uint64_t)k,
                                                           .cpu_cores = -1,
                                                           .pass = k < 2};
    }
    f->rows[0].cap.flags = CAPACITY_FLAG_GENERATOR;
    char *md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "| Est. active users | Capacity @SLO | per core |"));
    assert_non_null(strstr(md, "| 420 req/s [399, 441] | 420 |"));
    assert_non_null(strstr(md, "| >= 200 req/s (generator-limited) | 400 |"));
    free(md);
    /* A figure the tool could not measure properly carries its marks in words. */
    f->rows[1].cap.flags = CAPACITY_FLAG_NOISY | CAPACITY_FLAG_BUDGET;
    f->rows[1].cap.valid = false;
    md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "| 420 req/s [399, 441] (noisy, budget) | 420 |"));
    free(md);
    /* Every mark at once, at the longest figures: the cell holds all of it. */
    struct capacity_result big = f->rows[1].cap;
    char cell[OUTPUT_CAPACITY_LEN];
    big.flags = (CAPACITY_FLAG_LAST << 1) - 1 - CAPACITY_FLAG_GENERATOR;
    big.rps = big.interval.mean = big.interval.high = 1e300;
    big.interval.low = 0.99e300;
    big.recovery = (struct capacity_recovery){
        .settles = UINT_MAX, .ran_out = UINT_MAX, .longest_s = 1e300, .bound_s = 1e300};
    output_fmt_capacity(&big, cell);
    assert_non_null(strstr(cell, "repeats cut short, not recovered within "));
    assert_non_null(strstr(cell, " overloads)"));
    f->rows[1].cap.flags = 0;
    f->rows[1].cap.valid = true;
    char *html = render(output_report_html, &f->doc);
    assert_non_null(strstr(html, "<th>Capacity @SLO</th><th>per core</th>"));
    assert_non_null(strstr(html, "<svg id=\"chart-capacity\""));
    assert_non_null(strstr(html, "class=\"whisker\""));
    for (size_t i = 0; i < NV; i++) {
        char id[40];
        snprintf(id, sizeof(id), "<svg id=\"chart-knee-%zu\"", i);
        assert_non_null(strstr(html, id));
    }
    assert_non_null(strstr(html, "SLO p95 100ms"));
    assert_non_null(strstr(html, "capacity 800"));
    assert_non_null(strstr(html, "class=\"p99\""));
    free(html);
    for (size_t i = 0; i < NV; i++)
        memset(&f->rows[i].cap, 0, sizeof(f->rows[i].cap));
}

/* Two repeats that disagree, 897 and 1114 req/s: their Student-t interval runs from about -373
 * to 2384. No printer shows a bound below 0 or an interval wider than the figure: the table's
 * cell, results.md, report.html (its table, its capacity chart, its scale-out chart), the
 * scale-out's table and results.json all say the capacity is unknown and show the repeats,
 * whether the re-measure was cut short or the profile asked for two repeats. Three repeats that
 * disagree less keep their figure, with an interval inside [0, 2 x figure]. */
static void disagreeing(struct capacity_result *c, size_t n, const double *reps, unsigned flags)
{
    memset(c, 0, sizeof(*c));
    c->searched = true;
    c->cpu_cores = -1;
    c->peak_memory_bytes = -1;
    for (size_t i = 0; i < n; i++)
        c->repeat_rps[i] = reps[i];
    c->rps = 1;
    assert_int_equal(capacity_set_interval(c, n), 0);
    c->rps = c->interval.mean;
    c->limited_by = CAPACITY_LIMIT_SLO_P95;
    c->flags = flags;
    c->valid = capacity_valid(c);
    c->per_core = c->rps;
}

static void no_bad_interval(const char *text, const char *what)
{
    static const char *const bad[] = {"-373", "2384", "[-", "(-3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *at = strstr(text, bad[i]);
        if (at)
            fail_msg("%s shows the interval below 0: ...%.60s...", what,
                     at - text > 30 ? at - 30 : text);
    }
}

static void test_repeats_that_disagree(void **state)
{
    static const double two[] = {897, 1114}, three[] = {900, 1000, 1100};
    static const char *unknown = "unknown: the repeats disagreed (897, 1114 req/s)";
    struct fixture *f = *state;
    struct sweep_scale_out so;
    char cell[OUTPUT_CAPACITY_LEN];
    const unsigned cut = CAPACITY_FLAG_NOISY | CAPACITY_FLAG_TOO_FEW_REPEATS;

    for (int asked_two = 0; asked_two <= 1; asked_two++) {
        /* Cut short by the budget, or all the profile asked for. */
        unsigned flags = cut | (asked_two ? 0 : CAPACITY_FLAG_REPEATS_CUT);
        for (size_t i = 0; i < NV; i++)
            disagreeing(&f->rows[i].cap, 3, three, CAPACITY_FLAG_NOISY);
        disagreeing(&f->rows[1].cap, 2, two, flags);
        f->sweep.rows[1].cap = f->rows[1].cap;
        /* The scale-out of the first variant: 1 replica known, 2 replicas disagreeing. */
        memset(&so, 0, sizeof(so));
        so.run = true;
        so.npoints = 2;
        for (unsigned k = 0; k < 2; k++) {
            so.points[k].replicas = k + 1;
            so.points[k].from = k ? SWEEP_POINT_MEASURED : SWEEP_POINT_SHAPE_SEARCH;
        }
        so.points[0].cap = f->rows[0].cap;
        so.points[1].cap = f->rows[1].cap;
        f->sweep.scale_out = &so;
        char err[ERR_LEN];
        assert_int_equal(advise_rows(f->rows, NV, &f->profile, &f->sweep.facts, &f->advice, err),
                         0);

        /* The table's cell (the terminal's, results.md's and report.html's). */
        assert_string_equal(output_fmt_capacity(&f->rows[1].cap, cell), unknown);
        assert_string_equal(output_fmt_capacity(&f->rows[0].cap, cell),
                            "1000 req/s [752, 1248] (noisy)");
        /* The scale-out's table, as text and as markdown. */
        for (int markdown = 0; markdown <= 1; markdown++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&buf, &len);
            assert_non_null(m);
            output_scale_out_table(m, &f->sweep, markdown);
            fclose(m);
            assert_non_null(strstr(buf, unknown));
            assert_non_null(strstr(buf, "1000 req/s [752, 1248]"));
            no_bad_interval(buf, "the scale-out's table");
            free(buf);
        }
        char *md = render(output_results_md, &f->doc);
        assert_non_null(strstr(md, unknown));
        assert_non_null(strstr(md, "95% interval of the repeats"));
        no_bad_interval(md, "results.md");
        free(md);
        char *html = render(output_report_html, &f->doc);
        assert_non_null(strstr(html, "<td>unknown: the repeats disagreed (897, 1114 req/s)</td>"));
        assert_non_null(strstr(html, "class=\"val unknown\">unknown: the repeats disagreed"));
        no_bad_interval(html, "report.html");
        free(html);
        /* results.json: no interval for the unknown figure, the repeats as measured. */
        cJSON *j = output_results_json(&f->doc);
        assert_non_null(j);
        cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "variants"), 1),
                                       "slo_capacity");
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c, "known")));
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "interval")));
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(c, "repeat_rps")), 2);
        cJSON *k = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "variants"), 0),
                                       "slo_capacity");
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(k, "known")));
        cJSON *iv = cJSON_GetObjectItem(k, "interval");
        double lo = cJSON_GetArrayItem(iv, 0)->valuedouble,
               hi = cJSON_GetArrayItem(iv, 1)->valuedouble;
        assert_true(lo >= 0 && hi - lo <= 1000 && lo <= 1000 && hi >= 1000);
        cJSON *pts = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "scale_out"), "points");
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 1), "interval")));
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(pts, 1), "known")));
        char *text = cJSON_PrintUnformatted(j);
        no_bad_interval(text, "results.json");
        free(text);
        cJSON_Delete(j);
        /* Never the recommendation. */
        assert_true(f->advice.recommended != 1);
    }
    f->sweep.scale_out = NULL;
    for (size_t i = 0; i < NV; i++) {
        memset(&f->rows[i].cap, 0, sizeof(f->rows[i].cap));
        memset(&f->sweep.rows[i].cap, 0, sizeof(f->sweep.rows[i].cap));
    }
}

/* How a variant came back from its overloads, in every printer of a capacity: the cell (the
 * terminal's table, results.md, report.html) says "recovered in 4 s" or that it did not within
 * search.settle, and results.json's slo_capacity.recovery holds the figures; an app that served
 * again at once adds no words. The recommended variant's slow recovery is a finding. */
static void test_recovery_shown(void **state)
{
    static const double three[] = {900, 1000, 1100};
    struct fixture *f = *state;
    char cell[OUTPUT_CAPACITY_LEN], err[ERR_LEN];

    for (size_t i = 0; i < NV; i++) {
        disagreeing(&f->rows[i].cap, 3, three, 0);
        f->rows[i].cap.recovery = (struct capacity_recovery){.settles = 2, .bound_s = 10};
    }
    assert_string_equal(output_fmt_capacity(&f->rows[0].cap, cell), "1000 req/s [752, 1248]");
    f->rows[1].cap.recovery =
        (struct capacity_recovery){.settles = 3, .longest_s = 4, .bound_s = 10, .at_rate = true};
    f->rows[2].cap.recovery =
        (struct capacity_recovery){.settles = 3, .ran_out = 1, .longest_s = 2, .bound_s = 10};
    assert_string_equal(output_fmt_capacity(&f->rows[1].cap, cell),
                        "1000 req/s [752, 1248] (recovered in 4 s)");
    assert_string_equal(output_fmt_capacity(&f->rows[2].cap, cell),
                        "1000 req/s [752, 1248] (not recovered within 10 s after 1 of 3 "
                        "overloads)");
    for (size_t i = 0; i < NV; i++)
        f->sweep.rows[i].cap = f->rows[i].cap;
    assert_int_equal(advise_rows(f->rows, NV, &f->profile, &f->sweep.facts, &f->advice, err), 0);
    char *md = render(output_results_md, &f->doc);
    assert_non_null(strstr(md, "(recovered in 4 s)"));
    assert_non_null(strstr(md, "(not recovered within 10 s after 1 of 3 overloads)"));
    free(md);
    char *html = render(output_report_html, &f->doc);
    assert_non_null(strstr(html, "(recovered in 4 s)"));
    free(html);
    cJSON *j = output_results_json(&f->doc);
    cJSON *vs = cJSON_GetObjectItem(j, "variants");
    cJSON *r1 = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 1), "slo_capacity"),
                                    "recovery");
    cJSON *r2 = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 2), "slo_capacity"),
                                    "recovery");
    assert_int_equal(cJSON_GetObjectItem(r1, "settles")->valueint, 3);
    assert_int_equal(cJSON_GetObjectItem(r1, "ran_out")->valueint, 0);
    assert_true(cJSON_GetObjectItem(r1, "longest_s")->valuedouble == 4);
    assert_true(cJSON_GetObjectItem(r1, "bound_s")->valuedouble == 10);
    assert_string_equal(cJSON_GetObjectItem(r1, "held")->valuestring, "rate");
    assert_int_equal(cJSON_GetObjectItem(r2, "ran_out")->valueint, 1);
    assert_string_equal(cJSON_GetObjectItem(r2, "held")->valuestring, "one-user");
    cJSON_Delete(j);
    /* The recommended variant's recovery is a finding, said with its figures. */
    int rec = f->advice.recommended;
    assert_true(rec >= 0);
    f->rows[rec].cap.recovery =
        (struct capacity_recovery){.settles = 3, .longest_s = 6, .bound_s = 10, .at_rate = true};
    assert_int_equal(advise_rows(f->rows, NV, &f->profile, &f->sweep.facts, &f->advice, err), 0);
    bool said = false;
    for (size_t i = 0; i < f->advice.nfindings; i++)
        said |= strstr(f->advice.findings[i], "Recovery: after an overload") &&
                strstr(f->advice.findings[i], "needed 6 s of load");
    assert_true(said);
    for (size_t i = 0; i < NV; i++) {
        memset(&f->rows[i].cap, 0, sizeof(f->rows[i].cap));
        memset(&f->sweep.rows[i].cap, 0, sizeof(f->sweep.rows[i].cap));
    }
}

static void test_html_escapes(void **state)
{
    struct fixture *f = *state;
    const char *saved = f->doc.command;
    f->doc.command = "sizeup sweep -- sh -c '<script>alert(1)</script> & x'";
    char *html = render(output_report_html, &f->doc);
    assert_null(strstr(html, "<script>"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; x"));
    free(html);
    f->doc.command = saved;
}

static void test_write_all_atomic(void **state)
{
    struct fixture *f = *state;
    char dir[] = "/tmp/sizeup-test-output-XXXXXX", err[ERR_LEN] = "", sub[128];
    static const char *names[] = {"results.md", "results.json", "values.yaml", "auto-sizing.yaml",
                                  "report.html"};

    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof(sub), "%s/a/b", dir);
    if (output_write_all(sub, &f->doc, err) != 0)
        fail_msg("write_all: %s", err);
    /* Twice: the second run replaces the files in place. */
    assert_int_equal(output_write_all(sub, &f->doc, err), 0);
    DIR *d = opendir(sub);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || strcmp(e->d_name, "..") == 0))
            continue;
        if (e->d_name[0] == '.')
            fail_msg("temporary file left behind: %s", e->d_name);
        n++;
    }
    closedir(d);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < 5; i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s/%s", sub, names[i]);
        assert_int_equal(access(p, R_OK), 0);
        unlink(p);
    }
    rmdir(sub);
    snprintf(sub, sizeof(sub), "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
}

/* ---- the one output path (output_set.c) ------------------------------------------------- */

/* The whole file dir/name as a string, or NULL when it does not exist. */
static char *slurp(const char *dir, const char *name, size_t *len)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&buf, &cap);
    assert_non_null(m);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        assert_int_equal(fwrite(chunk, 1, n, m), n);
    fclose(f);
    fclose(m);
    *len = cap;
    return buf;
}

static bool exists(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* Removes dir and the files in it. */
static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        char p[512];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Files in dir that are not in s (temporary files included). */
static int foreign_files(const char *dir, const struct output_set *s)
{
    DIR *d = opendir(dir);
    int n = 0;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        bool known = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        for (size_t i = 0; i < s->n && !known; i++)
            known = strcmp(s->items[i].name, e->d_name) == 0;
        if (!known) {
            print_message("unexpected file %s\n", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Writes s through both sinks and checks they hold the same bytes: the directory read back,
 * and the ConfigMap keys carried through JSON the way the operator sends them. */
static void check_sinks_agree(const struct output_set *s)
{
    char dir[] = "/tmp/sizeup-test-sinks-XXXXXX", err[ERR_LEN] = "";
    const char *keys[OUTPUT_SET_MAX], *values[OUTPUT_SET_MAX];

    assert_non_null(mkdtemp(dir));
    if (output_set_write_dir(dir, s, err) != 0)
        fail_msg("directory sink: %s", err);
    size_t n = output_set_keys(s, keys, values, OUTPUT_SET_MAX);
    assert_int_equal(n, s->n);
    cJSON *data = cJSON_CreateObject();
    for (size_t i = 0; i < n; i++)
        assert_non_null(cJSON_AddStringToObject(data, keys[i], values[i]));
    char *wire = cJSON_PrintUnformatted(data);
    cJSON *back = cJSON_Parse(wire);
    assert_non_null(back);
    assert_int_equal(cJSON_GetArraySize(back), (int)n);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *file = slurp(dir, keys[i], &len);
        if (!file)
            fail_msg("%s: not written to the directory", keys[i]);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(back, keys[i]);
        assert_true(cJSON_IsString(v));
        assert_int_equal(len, strlen(v->valuestring));
        assert_int_equal(len, s->items[i].len);
        if (memcmp(file, v->valuestring, len) != 0)
            fail_msg("%s: the file and the ConfigMap key differ", keys[i]);
        free(file);
    }
    assert_int_equal(foreign_files(dir, s), 0);
    cJSON_Delete(back);
    cJSON_Delete(data);
    free(wire);
    rm_dir(dir);
}

static bool set_holds(const struct output_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return true;
    return false;
}

static void test_sinks_identical(void **state)
{
    struct fixture *f = *state;
    struct output_set s;
    struct output_extra extra = {"state.json", "{\"phase\": \"running\", \"rows\": []}\n"};
    char err[ERR_LEN] = "";

    assert_int_equal(output_set_render(&f->doc, &extra, 1, &s, err), 0);
    static const char *want[] = {"results.md",       "results.json", "values.yaml",
                                 "auto-sizing.yaml", "report.html",  "state.json"};
    assert_int_equal(s.n, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(s.items[i].name, want[i]);
    assert_int_equal(s.omitted, 0);
    assert_string_equal(s.items[5].data, extra.data);
    /* The same renderers as the per-file functions: results.md is output_results_md's text. */
    char *md = render(output_results_md, &f->doc);
    assert_string_equal(s.items[0].data, md);
    free(md);
    check_sinks_agree(&s);
    output_set_free(&s);
}

/* Every variant OVERLOADED: thresholds no row meets. */
static void overload_all(struct fixture *f)
{
    char err[ERR_LEN];
    f->profile.thresholds.healthy_p95_us = 1000;
    f->profile.thresholds.overloaded_p95_us = 10000;
    assert_int_equal(advise_rows(f->rows, NV, &f->profile, f->doc.facts, &f->advice, err), 0);
    for (int i = 0; i < NV; i++)
        assert_int_equal(f->advice.rows[i].verdict, VERDICT_OVERLOADED);
    assert_int_equal(f->advice.recommended, -1);
}

static void test_no_recommendation_keeps_rows(void **state)
{
    struct fixture *f = *state;
    char dir[] = "/tmp/sizeup-test-norec-XXXXXX", err[ERR_LEN] = "", p[512];
    size_t len;

    /* A values.yaml from an earlier sweep with a recommendation, and the rest of its files. */
    assert_non_null(mkdtemp(dir));
    assert_int_equal(output_write_all(dir, &f->doc, err), 0);
    assert_true(exists(dir, "values.yaml"));

    overload_all(f);
    struct output_set s;
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_false(set_holds(&s, "values.yaml"));
    assert_int_equal(s.n, 4);
    check_sinks_agree(&s);
    output_set_free(&s);

    assert_int_equal(output_write_all(dir, &f->doc, err), 0);
    assert_false(exists(dir, "values.yaml"));
    char *md = slurp(dir, "results.md", &len);
    char *html = slurp(dir, "report.html", &len);
    char *json = slurp(dir, "results.json", &len);
    assert_non_null(md);
    assert_non_null(html);
    assert_non_null(json);
    /* One sentence: nothing holds the load, and the closest row (lowest P95 of three
     * OVERLOADED rows). */
    assert_non_null(strstr(md, "No variant holds the load ("));
    assert_non_null(strstr(md, "); the closest was 2@2/512Mi: OVERLOADED, P95 "));
    assert_non_null(strstr(md, "No `values.yaml` is written."));
    assert_null(strstr(md, "## Recommended values"));
    assert_non_null(strstr(html, "the closest was 2@2/512Mi: OVERLOADED"));
    for (int i = 0; i < NV; i++) {
        snprintf(p, sizeof(p), "| %s |", f->rows[i].variant.label);
        if (!strstr(md, p))
            fail_msg("results.md lacks row %s", f->rows[i].variant.label);
        if (!strstr(html, f->rows[i].variant.label))
            fail_msg("report.html lacks row %s", f->rows[i].variant.label);
    }
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "variants")), NV);
    assert_true(
        cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "recommendation"), "index")));
    assert_null(cJSON_GetObjectItem(j, "values"));
    cJSON_Delete(j);
    free(md);
    free(html);
    free(json);
    rm_dir(dir);
}

/* Closest: by the advisor's verdict first (a STRESSED row beats an OVERLOADED one with a lower
 * P95), then P95; every row FAILED says so. */
static void test_closest_row(void **state)
{
    struct fixture *f = *state;
    char err[ERR_LEN] = "", buf[1024];

    f->profile.thresholds.healthy_p95_us = 1000;
    f->profile.thresholds.overloaded_p95_us = 100000;
    f->rows[1].flags = SWEEP_FLAG_CONTENDED; /* STRESSED, but not the app's capacity */
    f->rows[2].error_rate = 0.5;             /* lowest P95, OVERLOADED by its errors */
    assert_int_equal(advise_rows(f->rows, NV, &f->profile, f->doc.facts, &f->advice, err), 0);
    assert_int_equal(f->advice.recommended, -1);
    assert_int_equal(f->advice.rows[1].verdict, VERDICT_STRESSED);
    assert_int_equal(f->advice.rows[2].verdict, VERDICT_OVERLOADED);
    output_no_rec_sentence(&f->doc, buf, sizeof(buf));
    assert_non_null(strstr(buf, "the closest was 1@1/256Mi: STRESSED (contended), P95 "));

    for (int i = 0; i < NV; i++) {
        f->rows[i].measured = false;
        snprintf(f->rows[i].note, sizeof(f->rows[i].note), "OOM-killed");
    }
    assert_int_equal(advise_rows(f->rows, NV, &f->profile, f->doc.facts, &f->advice, err), 0);
    output_no_rec_sentence(&f->doc, buf, sizeof(buf));
    assert_non_null(strstr(buf, "No variant holds the load ("));
    assert_non_null(strstr(buf, "): every variant FAILED."));

    overload_all(f); /* rows still FAILED: no verdicts */
    f->advice.recommended = 2;
    assert_string_equal(output_no_rec_sentence(&f->doc, buf, sizeof(buf)), "");
}

static void test_advisor_opts(void **state)
{
    (void)state;
    struct profile p;
    struct platform_facts facts;
    struct advisor_opts o;

    assert_int_equal(profile_init_default(&p), 0);
    memset(&facts, 0, sizeof(facts));
    p.per_user_rps = 0;
    p.target_users = 1000;
    facts.host_millicores = 4500;
    facts.limits_enforced = true;
    snprintf(facts.limits_note, sizeof(facts.limits_note), "stale");
    advise_opts(&p, &facts, &o);
    assert_true(o.per_user_rps == 0.5);
    assert_true(o.target_rps == 500);
    assert_true(o.host_cores == 4.5);
    assert_null(o.limits_note); /* enforced: nothing to say */
    assert_int_equal(o.thresholds.healthy_p95_us, p.thresholds.healthy_p95_us);
    facts.limits_enforced = false;
    p.target_rps = 42;
    advise_opts(&p, &facts, &o);
    assert_string_equal(o.limits_note, "stale");
    assert_true(o.target_rps == 42);
    advise_opts(&p, NULL, &o);
    assert_true(o.host_cores == 0);
    assert_null(o.limits_note);
    profile_free(&p);
}

#define BIG_VARIANTS 16
#define BIG_NAMES    128

/* Many variants x many request names: results.json's per-name detail alone passes 1 MiB. The
 * outputs still fit, with room for state.json, keep every row, and say what was left out. */
/* deployment-patch.yaml: the recommendation as a strategic-merge patch that parses back, names
 * the Deployment and container (quoted, so "yes" stays a string), carries the workers env and
 * the resources, and leaves replicas alone without a target. */
static void test_deployment_patch(void **state)
{
    struct fixture *f = *state;
    struct output_set s;
    char err[ERR_LEN] = "";
    yaml_parser_t parser;
    yaml_document_t doc;

    /* No Deployment named (a local sweep without --deployment): no patch in the set. */
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_false(set_holds(&s, "deployment-patch.yaml"));
    output_set_free(&s);

    f->doc.workload = (struct output_workload){"yes", "app", "GUNICORN_WORKERS", NULL, NULL};
    char *p = render(output_deployment_patch, &f->doc);
    assert_true(yaml_parser_initialize(&parser));
    yaml_parser_set_input_string(&parser, (const unsigned char *)p, strlen(p));
    assert_true(yaml_parser_load(&parser, &doc));
    assert_string_equal(yaml_get(&doc, "apiVersion"), "apps/v1");
    assert_string_equal(yaml_get(&doc, "kind"), "Deployment");
    assert_string_equal(yaml_get(&doc, "metadata.name"), "yes");
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    assert_non_null(strstr(p, "  name: \"yes\"\n"));
    assert_non_null(strstr(p, "        - name: \"app\"\n"));
    char want[256], b[QTY_LEN];
    snprintf(want, sizeof(want),
             "            - name: \"GUNICORN_WORKERS\"\n              value: \"%u\"\n",
             f->advice.workers);
    assert_non_null(strstr(p, want));
    snprintf(want, sizeof(want),
             "            limits:\n              cpu: \"%lldm\"\n"
             "              memory: \"%s\"\n",
             (long long)f->advice.limit_cpu_m, qty_format_memory(f->advice.limit_memory, b));
    assert_non_null(strstr(p, want));
    assert_null(strstr(p, "replicas"));
    free(p);

    /* With a target the replicas it takes are part of the patch. */
    f->advice.by_target = true;
    f->advice.replicas = 3;
    p = render(output_deployment_patch, &f->doc);
    assert_non_null(strstr(p, "spec:\n  replicas: 3\n  template:\n"));
    free(p);
    f->advice.by_target = false;

    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_true(set_holds(&s, "deployment-patch.yaml"));
    output_set_free(&s);

    /* Names YAML or Kubernetes would take differently are refused, never written. */
    struct output_workload bad[] = {{"Web", NULL, NULL, NULL, NULL},
                                    {"web", "a.b", NULL, NULL, NULL},
                                    {"web", NULL, "1WORKERS", NULL, NULL},
                                    {"web\"x", NULL, NULL, NULL, NULL}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(output_workload_check(&bad[i], err), -EINVAL);

    /* No recommendation: no patch, like values.yaml. */
    overload_all(f);
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_false(set_holds(&s, "deployment-patch.yaml"));
    assert_false(set_holds(&s, "values.yaml"));
    output_set_free(&s);
}

/* previous-results.json is written back when there is one, and is the first part to go when
 * the outputs would not fit: before any detail of this sweep's own results. */
static void test_previous_dropped_first(void **state)
{
    struct fixture *f = *state;
    struct output_set s;
    char err[ERR_LEN] = "";
    size_t big = OUTPUT_BUDGET - 1000;
    char *prev = malloc(big + 1);

    assert_non_null(prev);
    f->doc.previous_results = "{\"variants\": []}\n";
    f->doc.comparison = "since image web=app:1, 1 variant compared";
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_true(set_holds(&s, "previous-results.json"));
    assert_int_equal(s.omitted, 0);
    assert_non_null(strstr(s.items[0].data, "**Since the previous sweep**: since image web=app:1"));
    output_set_free(&s);

    memset(prev, ' ', big);
    prev[big] = '\0';
    f->doc.previous_results = prev;
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_int_equal(s.omitted, OUTPUT_OMIT_PREVIOUS);
    assert_false(set_holds(&s, "previous-results.json"));
    assert_true(set_holds(&s, "report.html"));
    assert_non_null(strstr(s.items[0].data, "the previous sweep's results (previous-results.json) "
                                            "was left out"));
    output_set_free(&s);
    free(prev);
}

static void test_big_document_fits(void **state)
{
    (void)state;
    struct profile p;
    struct sweep sw = {0};
    struct advisor_row rows[BIG_VARIANTS];
    struct advice *a = calloc(1, sizeof(*a));
    struct output_doc d;
    struct output_set s;
    char err[ERR_LEN] = "", spec[64], *yaml = NULL;
    size_t ylen = 0;

    FILE *y = open_memstream(&yaml, &ylen);
    assert_non_null(y);
    fprintf(y, "users: 50\nduration: 10s\nrequests:\n");
    for (int i = 0; i < BIG_NAMES; i++)
        fprintf(y, "  - { name: endpoint.number.%03d, path: /api/%03d, weight: 1 }\n", i, i);
    fclose(y);
    if (profile_load_buffer(yaml, ylen, "big.yaml", &p, err) != 0)
        fail_msg("profile: %s", err);
    sw.n = BIG_VARIANTS;
    sw.rows = calloc(BIG_VARIANTS, sizeof(*sw.rows));
    assert_non_null(sw.rows);
    memset(rows, 0, sizeof(rows));
    for (int i = 0; i < BIG_VARIANTS; i++) {
        snprintf(spec, sizeof(spec), "%d@%dm/%dMi", 1 + i % 4, 250 * (1 + i / 4), 256 + 64 * i);
        sweep_fixture_row(&sw.rows[i], &rows[i], spec, 50 + 20 * i, 200000 - 5000 * (uint64_t)i,
                          &p);
    }
    fill_doc(&d, &sw, rows, BIG_VARIANTS, a, &p, 64000);
    d.configs = "many";

    /* Untrimmed, results.json alone would not fit a ConfigMap. */
    char *full = render(output_results_json_print, &d);
    size_t full_len = strlen(full);
    assert_true(full_len > OUTPUT_DATA_MAX);
    free(full);

    char state_json[8192];
    memset(state_json, 'x', sizeof(state_json) - 1);
    state_json[sizeof(state_json) - 1] = '\0';
    struct output_extra extra = {"state.json", state_json};
    assert_int_equal(output_set_render(&d, &extra, 1, &s, err), 0);
    print_message("untrimmed results.json %zu bytes; the set %zu bytes, omitted 0x%x\n", full_len,
                  s.bytes, s.omitted);
    assert_true(s.bytes <= OUTPUT_DATA_MAX);
    assert_true(s.bytes - strlen(state_json) <= OUTPUT_BUDGET);
    assert_true(s.omitted & OUTPUT_OMIT_JSON_BY_NAME);
    assert_true(set_holds(&s, "report.html")); /* small: not worth leaving out */
    assert_true(set_holds(&s, "state.json"));

    const char *md = s.items[0].data, *js = s.items[1].data;
    assert_string_equal(s.items[0].name, "results.md");
    assert_non_null(strstr(md, "**Trimmed to fit**: a ConfigMap holds at most 1048576 bytes, so "));
    assert_non_null(strstr(md, "results.json's per-request-name detail (by_name)"));
    assert_non_null(strstr(md, "every row is still here."));
    cJSON *j = cJSON_Parse(js);
    assert_non_null(j);
    cJSON *vs = cJSON_GetObjectItem(j, "variants");
    assert_int_equal(cJSON_GetArraySize(vs), BIG_VARIANTS);
    for (int i = 0; i < BIG_VARIANTS; i++) {
        cJSON *v = cJSON_GetArrayItem(vs, i);
        assert_string_equal(cJSON_GetObjectItem(v, "spec")->valuestring, rows[i].variant.spec);
        assert_non_null(cJSON_GetObjectItem(v, "throughput_rps"));
        assert_non_null(cJSON_GetObjectItem(v, "latency_ms"));
        assert_null(cJSON_GetObjectItem(v, "by_name"));
        char line[128];
        snprintf(line, sizeof(line), "| %s%s |", i == a->recommended ? "* " : "",
                 rows[i].variant.label);
        if (!strstr(md, line))
            fail_msg("results.md lacks row %s", rows[i].variant.label);
    }
    bool said = false;
    cJSON *om;
    cJSON_ArrayForEach(om, cJSON_GetObjectItem(j, "omitted"))
    {
        said = said || strcmp(om->valuestring, "results.json#by_name") == 0;
    }
    assert_true(said);
    cJSON_Delete(j);
    check_sinks_agree(&s);
    output_set_free(&s);

    for (int i = 0; i < BIG_VARIANTS; i++)
        load_result_free(&sw.rows[i].load);
    free(sw.rows);
    free(a);
    free(yaml);
    profile_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values_parse_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_custom_paths, setup, teardown),
        cmocka_unit_test(test_paths_bad),
        cmocka_unit_test_setup_teardown(test_values_sizing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_answer_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_autoscaler_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_parse_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_json_every_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_json_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_md_and_html, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity_columns_and_charts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeats_that_disagree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_shown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_all_atomic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sinks_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_recommendation_keeps_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closest_row, setup, teardown),
        cmocka_unit_test(test_advisor_opts),
        cmocka_unit_test(test_big_document_fits),
        cmocka_unit_test_setup_teardown(test_deployment_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_previous_dropped_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
