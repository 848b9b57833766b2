/* Tests for src/kube/nodes.c's pure part: nodes grouped by instance type (the smallest
 * allocatable of a type), DaemonSet pods' requests summed per node and the largest sum of a type
 * taken as its reserve, finished pods and other owners ignored, and the merge with a profile's
 * nodes: (prices by name, entries not in the cluster marked, unpriced types). */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/nodes.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

static const char NODES[] =
    "{\"items\":["
    "{\"metadata\":{\"name\":\"a1\",\"labels\":{\"node.kubernetes.io/"
    "instance-type\":\"m5.large\"}},"
    " \"status\":{\"allocatable\":{\"cpu\":\"1930m\",\"memory\":\"7440Mi\"}}},"
    "{\"metadata\":{\"name\":\"a2\",\"labels\":{\"node.kubernetes.io/"
    "instance-type\":\"m5.large\"}},"
    " \"status\":{\"allocatable\":{\"cpu\":\"1900m\",\"memory\":\"7500Mi\"}}},"
    "{\"metadata\":{\"name\":\"b1\",\"labels\":{\"node.kubernetes.io/"
    "instance-type\":\"c5.xlarge\"}},"
    " \"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"7Gi\"}}},"
    "{\"metadata\":{\"name\":\"x\"},\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":"
    "\"256Gi\"}}}"
    "]}";

#define DS "\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"agent\"}]"
static const char PODS[] =
    "{\"items\":["
    /* a1: 150m + 192Mi over two containers; a2: 100m, 128Mi; b1: 250m, 256Mi. */
    "{\"metadata\":{\"name\":\"p1\"," DS "},\"spec\":{\"nodeName\":\"a1\",\"containers\":["
    " {\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}},"
    " {\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}}}]}},"
    "{\"metadata\":{\"name\":\"p2\"," DS "},\"spec\":{\"nodeName\":\"a2\",\"containers\":["
    " {\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}},"
    "{\"metadata\":{\"name\":\"p3\"," DS "},\"spec\":{\"nodeName\":\"b1\",\"containers\":["
    " {\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"256Mi\"}}}]}},"
    /* Not a DaemonSet's: the app's own pod on a2. */
    "{\"metadata\":{\"name\":\"app\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\"}]},"
    " \"spec\":{\"nodeName\":\"a2\",\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]"
    "}},"
    /* A finished DaemonSet pod on a2. */
    "{\"metadata\":{\"name\":\"old\"," DS "},\"spec\":{\"nodeName\":\"a2\",\"containers\":["
    " {\"resources\":{\"requests\":{\"cpu\":\"900m\"}}}]},\"status\":{\"phase\":\"Failed\"}}"
    "]}";

static void read_fixture(struct kube_node_types *nt)
{
    char err[ERR_LEN] = "";
    cJSON *n = cJSON_Parse(NODES), *p = cJSON_Parse(PODS);
    assert_non_null(n);
    assert_non_null(p);
    assert_int_equal(kube_node_types_nodes(nt, n, err), 0);
    kube_node_types_pods(nt, p);
    kube_node_types_finish(nt);
    cJSON_Delete(n);
    cJSON_Delete(p);
}

static void test_group_and_daemonsets(void **state)
{
    (void)state;
    struct kube_node_types nt;

    read_fixture(&nt);
    assert_int_equal(nt.n, 2);
    assert_int_equal(nt.unlabelled, 1);
    assert_string_equal(nt.t[0].name, "m5.large");
    assert_int_equal(nt.t[0].cpu_m, 1900);         /* the smaller of 1930m and 1900m */
    assert_int_equal(nt.t[0].memory, 7440 * MI);   /* the smaller of 7440Mi and 7500Mi */
    assert_int_equal(nt.t[0].reserved_cpu_m, 150); /* a1's 150m, more than a2's 100m */
    assert_int_equal(nt.t[0].reserved_memory, 192 * MI);
    assert_string_equal(nt.t[1].name, "c5.xlarge");
    assert_int_equal(nt.t[1].cpu_m, 4000);
    assert_int_equal(nt.t[1].reserved_cpu_m, 250);
    assert_true(nt.t[0].from_cluster);
    kube_node_types_free(&nt);

    char err[ERR_LEN] = "";
    cJSON *empty = cJSON_Parse("{\"items\":[]}");
    assert_int_equal(kube_node_types_nodes(&nt, empty, err), -EINVAL);
    cJSON_Delete(empty);
}

static void test_merge(void **state)
{
    (void)state;
    struct kube_node_types nt;
    static struct profile p;
    char note[KUBE_NODES_NOTE_LEN];

    /* No nodes: in the profile: every type at 1 per node. */
    read_fixture(&nt);
    memset(&p, 0, sizeof(p));
    kube_node_types_merge(&nt, &p, note);
    assert_int_equal(p.nnodes, 2);
    assert_true(p.nodes[0].price == 1 && p.nodes[1].price == 1);
    contains(note, "m5.large 1900m CPU and 7440Mi allocatable, 150m CPU and 192Mi for DaemonSets");
    contains(note, "prices none of them, so each node counts 1");
    contains(note, "1 node without the label left out");

    /* The profile prices m5.large (its cpu and memory are the cluster's) and names r6.large,
     * which the cluster lacks; c5.xlarge is unpriced, so left out. */
    memset(&p, 0, sizeof(p));
    p.nnodes = 2;
    p.nodes[0] = (struct profile_node_type){"m5.large", 2000, 8 * GI, 0.096, 0, 0, false, false};
    p.nodes[1] =
        (struct profile_node_type){"r6.large", 2000, 16 * GI, 0.126, 100, GI, false, false};
    kube_node_types_merge(&nt, &p, note);
    assert_int_equal(p.nnodes, 2);
    assert_string_equal(p.nodes[0].name, "m5.large");
    assert_int_equal(p.nodes[0].cpu_m, 1900);
    assert_true(p.nodes[0].price == 0.096);
    assert_int_equal(p.nodes[0].reserved_cpu_m, 150);
    assert_string_equal(p.nodes[1].name, "r6.large");
    assert_true(p.nodes[1].not_in_cluster);
    contains(note, "1 type the profile does not price left out");
    contains(note, "1 profile type not in this cluster ranked too");
    kube_node_types_free(&nt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_and_daemonsets),
        cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
