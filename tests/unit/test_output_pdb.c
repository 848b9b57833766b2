/* Tests for src/output/output_pdb.c: pdb.yaml byte for byte (a policy/v1 PodDisruptionBudget
 * with the plan's minAvailable and the Deployment's labels), its fall-backs (no selector, no
 * Deployment name), no file without a plan, the selector's checks, the zone spread it adds to
 * deployment-patch.yaml, results.json's availability objects, and pdb.yaml in the set of outputs
 * (written with a plan, an old one removed without). `--write DIR` writes pdb.yaml and
 * deployment-patch.yaml for tests/integration/pdb_dry_run.sh (kubectl apply --dry-run=client). */

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yaml.h>

#include "advise/advise.h"
#include "advise/availability.h"
#include "output/output.h"
#include "output/output_set.h"

#include "fixtures.h"

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in:\n%s", needle, text);
}

/* An advice recommending row 0 with a plan of 3 zones, drain 1 over R = 6. */
static void planned(struct advice *a, unsigned zones)
{
    char err[ERR_LEN];

    memset(a, 0, sizeof(*a));
    a->recommended = 0;
    a->by_target = true;
    a->workers = 2;
    a->limit_cpu_m = 1000;
    a->limit_memory = 512LL << 20;
    a->request_cpu_m = 800;
    a->request_memory = 300LL << 20;
    assert_int_equal(availability_plan(6, zones, 1, &a->availability, err), 0);
    a->replicas = a->availability.replicas;
}

static char *render(int (*fn)(FILE *, const struct output_doc *, char *),
                    const struct output_doc *d, int *rc, char *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    *rc = fn(f, d, err);
    fclose(f);
    return buf;
}

static void parses(const char *text)
{
    yaml_parser_t p;
    yaml_document_t doc;

    assert_true(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&p, &doc))
        fail_msg("YAML does not parse: %s\n%s", p.problem, text);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
}

static const char want_pdb[] =
    "# The PodDisruptionBudget of the availability plan: a drain keeps 6 pods up, the target's.\n"
    "#   kubectl apply -f pdb.yaml\n"
    "apiVersion: policy/v1\n"
    "kind: PodDisruptionBudget\n"
    "metadata:\n"
    "  name: \"shop-web\"\n"
    "  annotations:\n"
    "    sizeup.dev/derivation: \"availability: the target needs 6 pods up; with 3 zones an "
    "outage takes ceil(N / 3) of N pods, and N = 9 is the smallest with N - ceil(N / 3) = 6 >= "
    "6; a drain of 1 takes 6 + 1 = 7; replicas = max(9, 7) = 9, and the PodDisruptionBudget "
    "keeps minAvailable 6\"\n"
    "spec:\n"
    "  minAvailable: 6\n"
    "  selector:\n"
    "    matchLabels:\n"
    "      \"app.kubernetes.io/name\": \"shop\"\n"
    "      \"tier\": \"web\"\n";

static void test_pdb_text(void **state)
{
    (void)state;
    struct advice a;
    struct output_doc d = {0};
    char err[ERR_LEN] = "";
    int rc;

    planned(&a, 3);
    d.advice = &a;
    d.workload = (struct output_workload){"shop-web", NULL, NULL, NULL, NULL};
    d.workload.selector = "app.kubernetes.io/name=shop,tier=web";
    char *t = render(output_pdb_doc, &d, &rc, err);
    if (rc)
        fail_msg("output_pdb_doc: %s", err);
    assert_string_equal(t, want_pdb);
    parses(t);
    free(t);

    /* No selector, no Deployment: the default name and labels, and a comment to edit them. */
    d.workload = (struct output_workload){0};
    t = render(output_pdb_doc, &d, &rc, err);
    assert_int_equal(rc, 0);
    contains(t, "# Edit matchLabels to the Deployment's spec.selector.matchLabels");
    contains(t, "  name: \"app\"\n");
    contains(t, "    matchLabels:\n      \"app\": \"app\"\n");
    parses(t);
    free(t);

    /* No plan: no file. */
    a.availability.applied = false;
    t = render(output_pdb_doc, &d, &rc, err);
    assert_int_equal(rc, -ENOENT);
    free(t);

    /* A bad selector is refused, not written. */
    planned(&a, 3);
    d.workload.selector = "app=a b";
    t = render(output_pdb_doc, &d, &rc, err);
    assert_int_equal(rc, -EINVAL);
    free(t);
}

static void test_selector_check(void **state)
{
    (void)state;
    char err[ERR_LEN] = "";
    static const char *good[] = {"app=web", "app.kubernetes.io/name=shop,tier=web",
                                 "a=", "A_b-c.d=X.y_z-1", "example.com/role=api"};
    static const char *bad[] = {"",          "app",     "=web",           "app=web,",
                                "app=-web",  "app=a b", "Ex.com/x=y",     "/x=y",
                                "app=\"x\"", "app=x:y", "app=web,,tier=x"};

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (output_selector_check(good[i], err) != 0)
            fail_msg("'%s' refused: %s", good[i], err);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (output_selector_check(bad[i], err) != -EINVAL)
            fail_msg("'%s' accepted", bad[i]);
    char many[512] = "";
    for (int i = 0; i <= OUTPUT_SELECTOR_MAX_LABELS; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sk%d=v", i ? "," : "", i);
    assert_int_equal(output_selector_check(many, err), -EINVAL);
    contains(err, "more than 16 labels");
    /* The patch's names check carries the selector's. */
    struct output_workload w = {"web", NULL, NULL, NULL, "app=a b"};
    assert_int_equal(output_workload_check(&w, err), -EINVAL);
    w.deployment = NULL;
    assert_int_equal(output_workload_check(&w, err), -EINVAL);
    w.selector = "app=web";
    assert_int_equal(output_workload_check(&w, err), 0);
}

static void test_patch_spread(void **state)
{
    (void)state;
    static struct advisor_row rows[1];
    struct advice a;
    struct output_doc d = {0};
    char err[ERR_LEN] = "";
    int rc;

    fixture_row(&rows[0], "2@1/512Mi", 100, 1000, 2000, 3000, 100);
    planned(&a, 3);
    d.rows = rows;
    d.n = 1;
    d.advice = &a;
    d.workload = (struct output_workload){"web", NULL, NULL, NULL, "app=web"};
    char *t = render(output_deployment_patch, &d, &rc, err);
    if (rc)
        fail_msg("patch: %s", err);
    contains(t, "  replicas: 9\n");
    contains(t, "      # 9 replicas over 3 zones: at most ceil(N / 3) pods in one zone.\n"
                "      topologySpreadConstraints:\n"
                "        - maxSkew: 1\n"
                "          topologyKey: \"topology.kubernetes.io/zone\"\n"
                "          whenUnsatisfiable: \"DoNotSchedule\"\n"
                "          labelSelector:\n"
                "            matchLabels:\n"
                "              \"app\": \"web\"\n");
    parses(t);
    free(t);

    /* No selector: a comment says how to get the spread. */
    d.workload.selector = NULL;
    t = render(output_deployment_patch, &d, &rc, err);
    assert_int_equal(rc, 0);
    assert_null(strstr(t, "topologySpreadConstraints:\n"));
    contains(t, "sizeup sweep --selector KEY=VALUE");
    parses(t);
    free(t);

    /* One zone, or no plan: no spread at all. */
    d.workload.selector = "app=web";
    planned(&a, 1);
    t = render(output_deployment_patch, &d, &rc, err);
    assert_null(strstr(t, "topologySpread"));
    contains(t, "  replicas: 7\n");
    free(t);
    a.availability.applied = false;
    t = render(output_deployment_patch, &d, &rc, err);
    assert_null(strstr(t, "topologySpread"));
    free(t);
}

struct fixture {
    struct profile profile;
    struct advisor_row rows[1];
    struct advice advice;
    struct output_doc doc;
};

static void set_fixture(struct fixture *f)
{
    char err[ERR_LEN];

    memset(f, 0, sizeof(*f));
    assert_int_equal(profile_init_default(&f->profile), 0);
    fixture_row(&f->rows[0], "2@1/512Mi", 100, 1000, 2000, 3000, 100);
    f->profile.target_rps = 600;
    f->profile.availability = (struct profile_availability){true, 3, 1};
    f->profile.nodes[0] = (struct profile_node_type){"m5.xlarge", 4000,      16LL << 30, 0.192,
                                                     180,         1LL << 30, false,      false};
    f->profile.nnodes = 1;
    assert_int_equal(advise_rows(f->rows, 1, &f->profile, NULL, &f->advice, err), 0);
    f->doc.rows = f->rows;
    f->doc.n = 1;
    f->doc.advice = &f->advice;
    f->doc.profile = &f->profile;
    f->doc.platform = "local";
    output_paths_default(&f->doc.paths);
}

static bool set_holds(const struct output_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return true;
    return false;
}

static const char *item(const struct output_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return s->items[i].data;
    return NULL;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];

    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || strchr(e->d_name + 1, '.')) {
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* The advisor's answer for a target of 600 req/s at 100 req/s per pod (a fixed-load sweep: 6
 * pods) with 3 zones, drain 1: 9 replicas, pdb.yaml, the numbers in results.json and its
 * profile object; without availability no pdb.yaml, and the directory sink removes an old one. */
static void test_in_the_set(void **state)
{
    (void)state;
    struct fixture *f = calloc(1, sizeof(*f));
    struct output_set s;
    char err[ERR_LEN] = "", dir[] = "/tmp/sizeup-test-pdb-XXXXXX", path[600];

    assert_non_null(f);
    set_fixture(f);
    assert_true(f->advice.availability.applied);
    assert_int_equal(f->advice.availability.needed, 6);
    assert_int_equal(f->advice.replicas, 9);
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_true(set_holds(&s, "pdb.yaml"));
    contains(item(&s, "pdb.yaml"), "  minAvailable: 6\n");
    contains(item(&s, "values.yaml"), "replicaCount: 9");
    const char *json = item(&s, "results.json");
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    cJSON *av = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "recommendation"), "availability");
    assert_int_equal(cJSON_GetObjectItem(av, "replicas")->valuedouble, 9);
    assert_int_equal(cJSON_GetObjectItem(av, "min_available")->valuedouble, 6);
    assert_int_equal(cJSON_GetObjectItem(av, "zone_replicas")->valuedouble, 9);
    assert_int_equal(cJSON_GetObjectItem(av, "drain_replicas")->valuedouble, 7);
    cJSON *pav = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "profile"), "availability");
    assert_int_equal(cJSON_GetObjectItem(pav, "zones")->valuedouble, 3);
    assert_int_equal(cJSON_GetObjectItem(pav, "drain")->valuedouble, 1);
    cJSON *pn =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "profile"), "nodes"), 0);
    assert_string_equal(cJSON_GetObjectItem(pn, "name")->valuestring, "m5.xlarge");
    assert_string_equal(cJSON_GetObjectItem(pn, "memory")->valuestring, "16Gi");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(pn, "reserved"), "cpu")->valuestring, "180m");
    assert_true(cJSON_GetObjectItem(pn, "price")->valuedouble == 0.192);
    cJSON_Delete(root);
    contains(item(&s, "results.md"), "replicas = max(9, 7) = 9");
    contains(item(&s, "results.md"),
             "packing by requests: cheapest: the recommendation on m5.xlarge");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(output_set_write_dir(dir, &s, err), 0);
    output_set_free(&s);
    snprintf(path, sizeof(path), "%s/pdb.yaml", dir);
    assert_int_equal(access(path, F_OK), 0);

    /* The profile without availability: no pdb.yaml, results.json's availability null. */
    profile_free(&f->profile);
    set_fixture(f);
    f->profile.availability.given = false;
    assert_int_equal(advise_rows(f->rows, 1, &f->profile, NULL, &f->advice, err), 0);
    assert_int_equal(f->advice.replicas, 6);
    assert_int_equal(output_set_render(&f->doc, NULL, 0, &s, err), 0);
    assert_false(set_holds(&s, "pdb.yaml"));
    root = cJSON_Parse(item(&s, "results.json"));
    assert_true(cJSON_IsNull(
        cJSON_GetObjectItem(cJSON_GetObjectItem(root, "recommendation"), "availability")));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "profile"), "availability"));
    cJSON_Delete(root);
    assert_int_equal(output_set_write_dir(dir, &s, err), 0);
    assert_int_equal(access(path, F_OK), -1);
    output_set_free(&s);
    rm_dir(dir);
    profile_free(&f->profile);
    free(f);
}

/* pdb.yaml and deployment-patch.yaml of the case (3 zones, drain 1, R 6) into dir, for
 * kubectl apply --dry-run=client. */
static int write_fixtures(const char *dir)
{
    static struct advisor_row rows[1];
    struct advice a;
    struct output_doc d = {0};
    char err[ERR_LEN] = "", path[512];
    static const char *const names[] = {"pdb.yaml", "deployment-patch.yaml"};
    int (*const fns[])(FILE *, const struct output_doc *, char *) = {output_pdb_doc,
                                                                     output_deployment_patch};

    fixture_row(&rows[0], "2@1/512Mi", 100, 1000, 2000, 3000, 100);
    planned(&a, 3);
    d.rows = rows;
    d.n = 1;
    d.advice = &a;
    d.workload = (struct output_workload){"web", NULL, NULL, NULL, "app.kubernetes.io/name=web"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        if (!f || fns[i](f, &d, err) != 0) {
            fprintf(stderr, "%s: %s\n", path, err[0] ? err : "cannot write");
            if (f)
                fclose(f);
            return 1;
        }
        fclose(f);
    }
    printf("replicas=%u min_available=%u\n", a.availability.replicas, a.availability.min_available);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0)
        return write_fixtures(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdb_text),
        cmocka_unit_test(test_selector_check),
        cmocka_unit_test(test_patch_spread),
        cmocka_unit_test(test_in_the_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
