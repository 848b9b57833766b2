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

/* Writes DIR/NAME/values.yaml (and hpa.yaml when there is an HPA) and prints one line of the
 * numbers they must carry. */
static int write_set(const char *dir, const char *name, const struct sizing *s)
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
    output_paths_default(&d.paths);
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
    if (s->hpa.enabled) {
        snprintf(path, sizeof(path), "%s/%s/hpa.yaml", dir, name);
        f = fopen(path, "w");
        if (!f)
            goto fail;
        rc = output_hpa_yaml(f, s, "app", err);
        fclose(f);
        if (rc)
            goto fail;
    }
    printf("%s replicas=%u hpa=%d min=%u max=%u util=%u cpu=%lldm memory=%lld\n", name, s->replicas,
           s->hpa.enabled, s->hpa.min_replicas, s->hpa.max_replicas, s->hpa.target_cpu_utilization,
           (long long)s->request_cpu_m, (long long)s->request_memory);
    return 0;
fail:
    fprintf(stderr, "%s: %s\n", path, err[0] ? err : "cannot write");
    return 1;
}

static int write_fixtures(const char *dir)
{
    struct sizing s;

    /* CPU-bound (0.25 -> 0.9 cores over 4x the load): an HPA. */
    if (size_one(0.25, 0.47, 0.9, 5000, &s) || write_set(dir, "hpa", &s))
        return 1;
    /* CPU flat with load (0.30 -> 0.38 cores): replicas only, the chart's HPA off. */
    if (size_one(0.30, 0.33, 0.38, 5000, &s) || write_set(dir, "static", &s))
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0)
        return write_fixtures(argv[2]);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hpa_text),
        cmocka_unit_test(test_no_hpa_no_file),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
