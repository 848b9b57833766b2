/* Tests for src/output/output_hpa.c: hpa.yaml is, byte for byte, an autoscaling/v2
 * HorizontalPodAutoscaler carrying the sizing's numbers; no file for a sizing without an HPA;
 * object names are checked. `kubectl apply --dry-run=client` of the file and `helm template` with
 * the values are the integration test's job (tests/integration/sizing_charts.sh), which runs this
 * binary with `--write DIR` for the files of two sizings computed by sizing_run. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yaml.h>

#include "output/output.h"
#include "output/output_hpa.h"
#include "output/output_keda.h"

static void cpu_bound_sizing(struct sizing *s)
{
    memset(s, 0, sizeof(*s));
    s->recommended = 0;
    s->by_target = true;
    s->hpa.enabled = true;
    s->hpa.cpu_bound = true;
    s->hpa.min_replicas = 8;
    s->hpa.max_replicas = 10;
    s->hpa.target_cpu_utilization = 69;
    snprintf(s->hpa.note, sizeof(s->hpa.note),
             "CPU grows with load: 0.250 cores at 250 req/s: \"quoted\", a colon and # a hash");
}

/* Renders into an owned string (free()). */
static char *render(const struct sizing *s, const char *name, int *rc)
{
    char *buf = NULL, err[ERR_LEN] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    *rc = output_hpa_yaml(f, s, name, err);
    fclose(f);
    if (*rc)
        print_message("output_hpa_yaml: %s\n", err);
    return buf;
}

/* The whole file, byte for byte: every field autoscaling/v2 needs, numbers as plain scalars
 * (YAML integers), the derivation quoted so its colon, quotes and hash survive. */
static const char want_hpa[] = "apiVersion: autoscaling/v2\n"
                               "kind: HorizontalPodAutoscaler\n"
                               "metadata:\n"
                               "  name: shop-web\n"
                               "  annotations:\n"
                               "    sizeup.dev/derivation: \"CPU grows with load: 0.250 cores at "
                               "250 req/s: \\\"quoted\\\", a colon and # a\n"
                               "      hash\"\n"
                               "spec:\n"
                               "  scaleTargetRef:\n"
                               "    apiVersion: apps/v1\n"
                               "    kind: Deployment\n"
                               "    name: shop-web\n"
                               "  minReplicas: 8\n"
                               "  maxReplicas: 10\n"
                               "  metrics:\n"
                               "  - type: Resource\n"
                               "    resource:\n"
                               "      name: cpu\n"
                               "      target:\n"
                               "        type: Utilization\n"
                               "        averageUtilization: 69\n";

static void test_hpa_text(void **state)
{
    struct sizing s;
    yaml_parser_t p;
    yaml_document_t doc;
    int rc;

    (void)state;
    cpu_bound_sizing(&s);
    char *text = render(&s, "shop-web", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(text, want_hpa);
    /* And it is one well-formed YAML document. */
    assert_true(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    assert_true(yaml_parser_load(&p, &doc));
    assert_non_null(yaml_document_get_root_node(&doc));
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    free(text);
}

/* CPU that does not track load: the Pods metric at the planned req/s per pod, as a quoted
 * quantity. */
static const char want_pods[] = "  minReplicas: 4\n"
                                "  maxReplicas: 6\n"
                                "  metrics:\n"
                                "  - type: Pods\n"
                                "    pods:\n"
                                "      metric:\n"
                                "        name: http_requests_per_second\n"
                                "      target:\n"
                                "        type: AverageValue\n"
                                "        averageValue: \"538.5\"\n";

static void pods_sizing(struct sizing *s)
{
    cpu_bound_sizing(s);
    s->hpa.cpu_bound = false;
    s->hpa.metric = SIZING_HPA_PODS;
    s->hpa.min_replicas = 4;
    s->hpa.max_replicas = 6;
    s->hpa.target_cpu_utilization = 0;
    s->hpa.target_average_value = 538.5;
    snprintf(s->hpa.metric_name, sizeof(s->hpa.metric_name), "http_requests_per_second");
    snprintf(s->hpa.keda_server, sizeof(s->hpa.keda_server), "http://prometheus:9090");
    snprintf(s->hpa.note, sizeof(s->hpa.note), "CPU does not grow with load");
}

static void test_hpa_pods(void **state)
{
    struct sizing s;
    int rc;

    (void)state;
    pods_sizing(&s);
    char *text = render(&s, "app", &rc);
    assert_int_equal(rc, 0);
    const char *spec = strstr(text, "  minReplicas:");
    assert_non_null(spec);
    assert_string_equal(spec, want_pods);
    assert_null(strstr(text, "Utilization"));
    free(text);
}

static const char want_keda[] =
    "apiVersion: keda.sh/v1alpha1\n"
    "kind: ScaledObject\n"
    "metadata:\n"
    "  name: shop\n"
    "  annotations:\n"
    "    sizeup.dev/derivation: \"CPU does not grow with load\"\n"
    "spec:\n"
    "  scaleTargetRef:\n"
    "    apiVersion: apps/v1\n"
    "    kind: Deployment\n"
    "    name: shop\n"
    "  minReplicaCount: 4\n"
    "  maxReplicaCount: 6\n"
    "  triggers:\n"
    "  - type: prometheus\n"
    "    metricType: AverageValue\n"
    "    metadata:\n"
    "      serverAddress: \"http://prometheus:9090\"\n"
    "      query: \"sum(rate(http_requests_total{deployment=\\\"shop\\\"}[1m]))\"\n"
    "      threshold: \"538.5\"\n";

/* keda.yaml: the threshold is the HPA's averageValue, the bounds its bounds; the default query
 * names the Deployment; none for a CPU HPA. */
static void test_keda(void **state)
{
    static struct advice a;
    struct output_doc d;
    char *buf = NULL, err[ERR_LEN] = "";
    size_t len = 0;

    (void)state;
    memset(&a, 0, sizeof(a));
    memset(&d, 0, sizeof(d));
    pods_sizing(&a.sizing);
    d.advice = &a;
    d.workload.deployment = "shop";
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(output_keda_doc(f, &d, err), 0);
    fclose(f);
    assert_string_equal(buf, want_keda);
    free(buf);
    /* The profile's query verbatim. */
    snprintf(a.sizing.hpa.keda_query, sizeof(a.sizing.hpa.keda_query), "sum(rate(x[2m]))");
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(output_keda_doc(f, &d, err), 0);
    fclose(f);
    assert_non_null(strstr(buf, "      query: \"sum(rate(x[2m]))\"\n"));
    free(buf);
    /* A CPU HPA: no keda.yaml. */
    cpu_bound_sizing(&a.sizing);
    assert_false(output_keda_applies(&a.sizing));
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(output_keda_doc(f, &d, err), -ENOENT);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
}

static void test_no_hpa_no_file(void **state)
{
    struct sizing s;
    char err[ERR_LEN] = "";
    char *buf = NULL;
    size_t len = 0;

    (void)state;
    cpu_bound_sizing(&s);
    s.hpa.enabled = false;
    snprintf(s.hpa.note, sizeof(s.hpa.note), "CPU does not grow with load");
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(output_hpa_yaml(f, &s, "app", err), -ENOENT);
    fclose(f);
    assert_int_equal(len, 0);
    assert_non_null(strstr(err, "CPU does not grow with load"));
    free(buf);
}

static void test_names(void **state)
{
    static const char *bad[] = {"", "App", "-app", "app-", "a_b", "a b", "app/x", NULL};
    static const char *good[] = {"a", "app", "shop-web", "web.v2", "0app9"};
    struct sizing s;
    char long_name[OUTPUT_HPA_NAME_MAX + 2];
    int rc;

    (void)state;
    cpu_bound_sizing(&s);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        free(render(&s, bad[i], &rc));
        if (rc != -EINVAL)
            fail_msg("name '%s' accepted", bad[i] ? bad[i] : "(null)");
    }
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        free(render(&s, good[i], &rc));
        if (rc != 0)
            fail_msg("name '%s' refused", good[i]);
    }
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[OUTPUT_HPA_NAME_MAX] = '\0';
    free(render(&s, long_name, &rc));
    assert_int_equal(rc, 0);
    long_name[OUTPUT_HPA_NAME_MAX] = 'a';
    long_name[OUTPUT_HPA_NAME_MAX + 1] = '\0';
    free(render(&s, long_name, &rc));
    assert_int_equal(rc, -EINVAL);
}

/* ---- --write DIR: files for the integration test ------------------------------------------ */

/* One searched 1@1/512Mi row: capacity 1000 req/s (interval low 970) at `cores_at_cap`, with
 * passing steps at 250 and 500 req/s. */
static int size_one(double cpu250, double cpu500, double cores_at_cap, double target,
                    struct sizing *s)
{
    static struct variant v;
    static struct capacity_result c;
    char err[ERR_LEN];
    double rates[2] = {250, 500}, cpu[2] = {cpu250, cpu500};

    if (variant_parse("1@1/512Mi", &v, err))
        return -1;
    memset(&c, 0, sizeof(c));
    c.searched = c.valid = true;
    c.rps = 1000;
    c.interval = (struct stats_summary){3, 1000, 20, 30, 970, 1030};
    c.cpu_cores = cores_at_cap;
    c.peak_memory_bytes = 100LL << 20;
    for (int i = 0; i < 2; i++) {
        struct capacity_step *st = &c.steps[c.nsteps++];
        st->kind = CAPACITY_STEP_SEARCH;
        st->offered_rps = st->achieved_rps = rates[i];
        st->cpu_cores = cpu[i];
        st->pass = true;
    }
    struct sizing_row row = {&v, &c, NULL, true, 0};
    struct sizing_opts o = {.target_rps = target, .per_user_rps = 0.5};
    o.cost.cpu = 1;
    o.cost.memory_gib = 0.13;
    o.planning.buffer = 0.10;
    o.planning.growth = 0.30;
    if (sizing_run(&row, 1, &o, s, err)) {
        fprintf(stderr, "sizing_run: %s\n", err);
        return -1;
    }
    return 0;
}

/* Writes DIR/NAME/values.yaml (and hpa.yaml when values.yaml does not carry the HPA:
 * output_autoscaler; paths the values-paths map) and prints one line of the numbers they must
 * carry. */
static int write_set(const char *dir, const char *name, const char *paths, const struct sizing *s)
{
    static struct advice a;
    struct output_doc d;
    char path[512], err[ERR_LEN] = "";
    int rc = 0;

    memset(&a, 0, sizeof(a));
    a.sizing = *s;
    a.recommended = s->recommended;
    a.workers = 1;
    a.limit_cpu_m = s->limit_cpu_m;
    a.limit_memory = s->limit_memory;
    a.request_cpu_m = s->request_cpu_m;
    a.request_memory = s->request_memory;
    memset(&d, 0, sizeof(d));
    d.advice = &a;
    if (output_paths_parse(paths, &d.paths, err))
        goto fail;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (output_mkdir_p(path, err))
        goto fail;
    snprintf(path, sizeof(path), "%s/%s/values.yaml", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        goto fail;
    rc = output_values_yaml(f, &d, err);
    fclose(f);
    if (rc)
        goto fail;
    if (output_autoscaler(&d) == OUTPUT_AUTOSCALER_FILE) {
        snprintf(path, sizeof(path), "%s/%s/hpa.yaml", dir, name);
        f = fopen(path, "w");
        if (!f)
            goto fail;
        rc = output_hpa_yaml(f, s, "app", err);
        fclose(f);
        if (rc)
            goto fail;
    }
    if (output_keda_applies(s)) {
        snprintf(path, sizeof(path), "%s/%s/keda.yaml", dir, name);
        f = fopen(path, "w");
        if (!f)
            goto fail;
        rc = output_keda_doc(f, &d, err);
        fclose(f);
        if (rc)
            goto fail;
    }
    printf("%s replicas=%u hpa=%d pods=%d min=%u max=%u util=%u cpu=%lldm memory=%lld avg=%.3f\n",
           name, s->replicas, s->hpa.enabled, s->hpa.metric == SIZING_HPA_PODS, s->hpa.min_replicas,
           s->hpa.max_replicas, s->hpa.target_cpu_utilization, (long long)s->request_cpu_m,
           (long long)s->request_memory, s->hpa.target_average_value);
    return 0;
fail:
    fprintf(stderr, "%s: %s\n", path, err[0] ? err : "cannot write");
    return 1;
}

static int write_fixtures(const char *dir)
{
    struct sizing s;

    /* CPU-bound (0.25 -> 0.9 cores over 4x the load): an HPA, in values.yaml's autoscaling block
     * (no hpa.yaml), or with that key unmapped in hpa.yaml (no autoscaling block). */
    if (size_one(0.25, 0.47, 0.9, 5000, &s) || write_set(dir, "hpa", "", &s) ||
        write_set(dir, "hpa-file", "autoscaling=", &s))
        return 1;
    /* CPU flat with load (0.30 -> 0.38 cores): the chart's HPA off, hpa.yaml on the request
     * rate and keda.yaml. */
    if (size_one(0.30, 0.33, 0.38, 5000, &s) || write_set(dir, "static", "", &s))
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0)
        return write_fixtures(argv[2]);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hpa_text), cmocka_unit_test(test_hpa_pods),
        cmocka_unit_test(test_keda),     cmocka_unit_test(test_no_hpa_no_file),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
