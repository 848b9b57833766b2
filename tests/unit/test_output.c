/* Tests for src/sweep/output*.c: values.yaml and auto-sizing.yaml parse back (libyaml) to what
 * the advisor decided; results.json carries each variant's spec, verdict, usage and the load
 * run's own fields exactly as report_json names them; report.html is self-contained; files are
 * written atomically. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>
#include <yaml.h>

#include "load/report.h"
#include "sweep/output.h"
#include "sweep/rule.h"
#include "sweep/runner.h"
#include "sweep/sizing.h"

#define NV 3

struct fixture {
    struct profile profile;
    struct sweep sweep;
    struct advisor_row rows[NV];
    struct advice advice;
    struct output_doc doc;
};

/* Three measured variants with real load results: latencies recorded into the histograms, the
 * throughput following the CPU. */
static int setup(void **state)
{
    static const char *specs[NV] = {"1@0.5/256Mi", "1@1/256Mi", "2@2/512Mi"};
    static const double rps[NV] = {200, 420, 800};
    static const uint64_t lat_us[NV] = {150000, 60000, 30000};
    struct fixture *f = calloc(1, sizeof(*f));
    char err[ERR_LEN];

    assert_non_null(f);
    assert_int_equal(profile_init_default(&f->profile), 0);
    f->sweep.n = NV;
    f->sweep.rows = calloc(NV, sizeof(*f->sweep.rows));
    assert_non_null(f->sweep.rows);
    f->sweep.facts.host_millicores = 2000;
    f->sweep.facts.limits_enforced = true;
    f->sweep.facts.load_shares_host = true;
    snprintf(f->sweep.facts.machine, sizeof(f->sweep.facts.machine), "test machine");
    snprintf(f->sweep.platform, sizeof(f->sweep.platform), "local");
    for (int i = 0; i < NV; i++) {
        struct sweep_row *r = &f->sweep.rows[i];
        assert_int_equal(variant_parse(specs[i], &r->variant, err), 0);
        r->state = SWEEP_ROW_MEASURED;
        r->have_load = true;
        assert_int_equal(load_result_init(&r->load, &f->profile), 0);
        r->load.duration_s = 10;
        uint64_t n = (uint64_t)(rps[i] * 10);
        for (uint64_t k = 0; k < n; k++) {
            uint64_t us = lat_us[i] / 2 + (k % 100) * lat_us[i] / 100;
            hist_record(&r->load.total.latency, us);
            hist_record(&r->load.by_name[0].latency, us);
        }
        r->load.total.requests = r->load.total.responses = n;
        r->load.total.status[200] = n;
        r->load.by_name[0] = r->load.total;
        r->load.tool_cpu_s = 1.0;
        r->load.threads = 2;
        r->load.users = 50;
        r->have_usage = true;
        r->usage.window_s = 10;
        r->usage.cpu_s = 10 * (double)r->variant.cpu_millicores / 1000.0 * 0.9;
        r->usage.peak_memory_bytes = (70LL << 20) * r->variant.workers;
        r->gen_cores = 0.1;

        struct advisor_row *a = &f->rows[i];
        a->variant = r->variant;
        a->measured = true;
        a->throughput_rps = load_stats_throughput(&r->load.total, r->load.duration_s);
        a->p50_us = hist_percentile(&r->load.total.latency, 50);
        a->p95_us = hist_percentile(&r->load.total.latency, 95);
        a->p99_us = hist_percentile(&r->load.total.latency, 99);
        a->requests = n;
        a->cpu_cores_used = r->usage.cpu_s / r->usage.window_s;
        a->peak_memory_bytes = r->usage.peak_memory_bytes;
        a->gen_cores = r->gen_cores;
    }
    struct advisor_opts o;
    memset(&o, 0, sizeof(o));
    o.thresholds = f->profile.thresholds;
    o.per_user_rps = f->profile.per_user_rps;
    o.host_cores = 2;
    assert_int_equal(advisor_run(f->rows, NV, &o, &f->advice, err), 0);
    f->doc.rows = f->rows;
    f->doc.n = NV;
    f->doc.advice = &f->advice;
    f->doc.sweep = &f->sweep;
    f->doc.profile = &f->profile;
    f->doc.facts = &f->sweep.facts;
    f->doc.platform = "local";
    f->doc.command = "sizeup sweep -- ./app";
    f->doc.configs = "1@0.5/256Mi 1@1/256Mi 2@2/512Mi";
    f->doc.started = 1764446400;
    f->doc.finished = 1764446500;
    output_paths_default(&f->doc.paths);
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
    struct sizing s;
    yaml_document_t doc;
    char err[ERR_LEN] = "";

    /* No sizing, or a sizing without a target: no replica or autoscaling keys at all. */
    char *text = render(output_values_yaml, &f->doc);
    assert_null(strstr(text, "replicaCount"));
    assert_null(strstr(text, "autoscaling"));
    free(text);
    target_sizing(&s, true);
    s.by_target = false;
    f->doc.sizing = &s;
    text = render(output_values_yaml, &f->doc);
    assert_null(strstr(text, "replicaCount"));
    assert_null(strstr(text, "autoscaling"));
    free(text);

    /* A target and an HPA: the keys a chart made by `helm create` reads, as YAML numbers and a
     * boolean, beside the existing values. */
    target_sizing(&s, true);
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
    target_sizing(&s, false);
    text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "replicaCount"), "8");
    assert_string_equal(yaml_get(&doc, "autoscaling.enabled"), "false");
    assert_null(yaml_get(&doc, "autoscaling.minReplicas"));
    yaml_document_delete(&doc);
    free(text);

    /* Custom paths. */
    target_sizing(&s, true);
    assert_int_equal(output_paths_parse("replicas=app.replicas,autoscaling=app.hpa", &f->doc.paths,
                                        err),
                     0);
    text = render(output_values_yaml, &f->doc);
    parse_yaml(text, &doc);
    assert_string_equal(yaml_get(&doc, "app.replicas"), "8");
    assert_string_equal(yaml_get(&doc, "app.hpa.maxReplicas"), "10");
    assert_string_equal(yaml_get(&doc, "workers.count"), "2");
    assert_null(yaml_get(&doc, "replicaCount"));
    yaml_document_delete(&doc);
    free(text);
    output_paths_default(&f->doc.paths);
    f->doc.sizing = NULL;
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
    assert_string_equal(yaml_get(&doc, "derivation.max_workers.source"), "fallback (seed 000)");
    /* No CPU level of this fixture was measured with two worker counts. */
    assert_string_equal(yaml_get(&doc, "derivation.cores_per_worker.source"),
                        "fallback (seed 000)");
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

    char *html = render(output_report_html, &f->doc);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values_parse_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_values_custom_paths, setup, teardown),
        cmocka_unit_test(test_paths_bad),
        cmocka_unit_test_setup_teardown(test_values_sizing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rule_parse_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_results_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_md_and_html, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html_escapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_all_atomic, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
