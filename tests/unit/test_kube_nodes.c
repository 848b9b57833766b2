/* Tests for src/kube/nodes.c's pure part: nodes grouped by instance type (the smallest
 * allocatable of a type), where each DaemonSet runs worked out from its template against the
 * nodes' labels and taints (nodeSelector, required node affinity with every operator,
 * tolerations and the ones the DaemonSet controller adds), the pod request as the scheduler
 * counts it, the largest sum on one node of a type taken as its reserve, a DaemonSet without
 * requests said to be unknown, and the merge with a profile's nodes: (prices by name, entries
 * not in the cluster marked, unpriced types). */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/nodes.h"
#include "core/text.h"
#include "kube/objects.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

/* The nodes below with a taint on a2 (dedicated=batch:NoSchedule) and b1 (a PreferNoSchedule,
 * which keeps no pod off, and the unschedulable taint every DaemonSet tolerates). */
#define A2_TAINT                                                                                   \
    "\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"batch\",\"effect\":\"NoSchedule\"}]" \
    "},"
#define B1_TAINT                                                                                   \
    "\"spec\":{\"taints\":[{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"},"                    \
    "{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\"}]},"

static const char NODES[] =
    "{\"items\":["
    "{\"metadata\":{\"name\":\"a1\",\"labels\":{\"node.kubernetes.io/"
    "instance-type\":\"m5.large\"}},"
    " \"status\":{\"allocatable\":{\"cpu\":\"1930m\",\"memory\":\"7440Mi\"}}},"
    "{\"metadata\":{\"name\":\"a2\",\"labels\":{\"node.kubernetes.io/"
    "instance-type\":\"m5.large\"}}," A2_TAINT
    " \"status\":{\"allocatable\":{\"cpu\":\"1900m\",\"memory\":\"7500Mi\"}}},"
    "{\"metadata\":{\"name\":\"b1\",\"labels\":{\"node.kubernetes.io/"
    "instance-type\":\"c5.xlarge\"}}," B1_TAINT
    " \"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"7Gi\"}}},"
    "{\"metadata\":{\"name\":\"x\"},\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":"
    "\"256Gi\"}}}"
    "]}";

#define REQ(cpu, mem) "{\"resources\":{\"requests\":{\"cpu\":\"" cpu "\",\"memory\":\"" mem "\"}}}"
#define DSET(name, spec)                                                                           \
    "{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"" name "\"},"                         \
    "\"spec\":{\"template\":{\"spec\":{" spec "}}}}"
static const char DAEMONSETS[] = "{\"items\":["
    /* Everywhere but a2 (its taint is not tolerated): 100m + 50m, 128Mi + 64Mi. */
    DSET("agent", "\"containers\":[" REQ("100m", "128Mi") "," REQ("50m", "64Mi") "]") ","
    /* Tolerates a2's taint by key (Exists) and runs everywhere: a limit stands for the request;
     * its init container (300m) is more than its containers, so it counts. */
    DSET("batch-agent",
         "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}],"
         "\"initContainers\":[" REQ(
             "300m", "16Mi") "],"
                             "\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"200m\","
                             "\"memory\":\"32Mi\"}}}]") ","
    /* Only c5.xlarge by nodeSelector; a sidecar init container adds, and the overhead too. */
    DSET("gpu", "\"nodeSelector\":{\"node.kubernetes.io/instance-type\":\"c5.xlarge\"},"
                "\"overhead\":{\"cpu\":\"10m\",\"memory\":\"1Mi\"},"
                "\"initContainers\":[{\"restartPolicy\":\"Always\",\"resources\":{\"requests\":"
                "{\"cpu\":\"40m\",\"memory\":\"8Mi\"}}}],"
                "\"containers\":[" REQ("250m", "256Mi") "]") ","
    /* Required affinity: a1 by name (matchFields), ORed with a term no node matches. */
    DSET("pinned",
         "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
         "\"operator\":\"In\",\"values\":[\"a1\"]}]},{\"matchExpressions\":[{\"key\":"
         "\"zone\",\"operator\":\"Exists\"}]}]}}},"
         "\"containers\":[" REQ("1m", "1Mi") "]") ","
    /* NotIn and DoesNotExist: every labelled node but the m5.large ones; Gt on a label no node
     * has as an integer keeps it off everywhere. */
    DSET("not-m5",
         "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
         "\"node.kubernetes.io/instance-type\",\"operator\":\"NotIn\",\"values\":"
         "[\"m5.large\"]},{\"key\":\"zone\",\"operator\":\"DoesNotExist\"}]}]}}},"
         "\"containers\":[" REQ(
             "2m",
             "2Mi") "]") "," DSET("gt",
                                  "\"affinity\":{\"nodeAffinity\":{"
                                  "\"requiredDuringSchedulingIgnoredDuringExecution\":"
                                  "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
                                  "\"node.kubernetes.io/"
                                  "instance-type\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}]}}},"
                                  "\"containers\":[" REQ("500m", "1Gi") "]") ","
    /* An empty terms list matches no node. */
    DSET("none",
         "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
         "{\"nodeSelectorTerms\":[]}}},\"containers\":[" REQ("500m", "1Gi") "]") ","
    /* No requests nor limits: runs everywhere untainted, counted 0 and said to be unknown. */
    DSET("logs", "\"containers\":[{\"name\":\"x\"}]") "]}";

static void read_fixture(struct kube_node_types *nt)
{
    char err[ERR_LEN] = "";
    cJSON *n = cJSON_Parse(NODES), *p = cJSON_Parse(DAEMONSETS);
    assert_non_null(n);
    assert_non_null(p);
    assert_int_equal(kube_node_types_nodes(nt, n, err), 0);
    kube_node_types_daemonsets(nt, p);
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
    assert_int_equal(nt.t[0].cpu_m, 1900);       /* the smaller of 1930m and 1900m */
    assert_int_equal(nt.t[0].memory, 7440 * MI); /* the smaller of 7440Mi and 7500Mi */
    /* a1: agent 150m/192Mi + batch-agent 300m/32Mi (its init container's 300m beats the limit's
     * 200m; memory 32Mi beats 16Mi) + pinned 1m/1Mi = 451m/225Mi. a2: only batch-agent, its taint
     * keeps agent off: 300m/32Mi. */
    assert_int_equal(nt.nodes[0].ds_cpu_m, 451);
    assert_int_equal(nt.nodes[0].ds_memory, 225 * MI);
    assert_int_equal(nt.nodes[1].ds_cpu_m, 300);
    assert_int_equal(nt.nodes[1].ds_memory, 32 * MI);
    assert_int_equal(nt.t[0].reserved_cpu_m, 451); /* a1's sum, more than a2's */
    assert_int_equal(nt.t[0].reserved_memory, 225 * MI);
    /* b1 (its taints: PreferNoSchedule keeps nothing off, unschedulable is tolerated by every
     * daemon pod): agent 150m/192Mi + batch-agent 300m/32Mi + gpu (250m + 40m sidecar + 10m
     * overhead, 256Mi + 8Mi + 1Mi) + not-m5 2m/2Mi = 752m/491Mi. */
    assert_string_equal(nt.t[1].name, "c5.xlarge");
    assert_int_equal(nt.t[1].cpu_m, 4000);
    assert_int_equal(nt.t[1].reserved_cpu_m, 752);
    assert_int_equal(nt.t[1].reserved_memory, 491 * MI);
    assert_true(nt.t[0].from_cluster);
    assert_int_equal(nt.ds_unknown, 1);
    assert_string_equal(nt.ds_unknown_name, "kube-system/logs");
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
    contains(note, "m5.large 1900m CPU and 7440Mi allocatable, 451m CPU and 225Mi for DaemonSets");
    contains(note, "1 DaemonSet (kube-system/logs) requests no CPU or memory in a container, so "
                   "what it takes of each node is unknown and counted as 0");
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
    assert_int_equal(p.nodes[0].reserved_cpu_m, 451);
    assert_string_equal(p.nodes[1].name, "r6.large");
    assert_true(p.nodes[1].not_in_cluster);
    contains(note, "1 type the profile does not price left out");
    contains(note, "1 profile type not in this cluster ranked too");
    kube_node_types_free(&nt);
}

/* One placement decision: spec and node given as JSON text. */
static bool runs(const char *spec, const char *node)
{
    cJSON *s = cJSON_Parse(spec), *n = cJSON_Parse(node);
    assert_non_null(s);
    assert_non_null(n);
    bool r =
        kube_node_runs_daemon(s, kube_path_string(n, "metadata.name"),
                              cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metadata"), "labels"),
                              cJSON_GetObjectItem(cJSON_GetObjectItem(n, "spec"), "taints"));
    cJSON_Delete(s);
    cJSON_Delete(n);
    return r;
}

#define NODE(labels, taints)                                                                       \
    "{\"metadata\":{\"name\":\"n1\",\"labels\":{" labels "}},\"spec\":{\"taints\":[" taints "]}}"
#define TAINT(k, v, e) "{\"key\":\"" k "\",\"value\":\"" v "\",\"effect\":\"" e "\"}"
#define AFF(exprs)                                                                                 \
    "{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"         \
    "{\"nodeSelectorTerms\":[{\"matchExpressions\":[" exprs "]}]}}}}"

static void test_placement(void **state)
{
    (void)state;
    /* Tolerations: Equal compares the value, Exists does not, an empty key with Exists tolerates
     * everything, an effect given must be the taint's. */
    const char *t = NODE("", TAINT("k", "v", "NoSchedule"));
    assert_false(runs("{}", t));
    assert_true(runs("{\"tolerations\":[{\"key\":\"k\",\"value\":\"v\"}]}", t));
    assert_false(runs("{\"tolerations\":[{\"key\":\"k\",\"value\":\"w\"}]}", t));
    assert_true(runs("{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}", t));
    assert_true(runs("{\"tolerations\":[{\"operator\":\"Exists\"}]}", t));
    assert_false(runs("{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\","
                      "\"effect\":\"NoExecute\"}]}",
                      t));
    assert_false(runs("{}", NODE("", TAINT("k", "v", "NoExecute"))));
    assert_true(runs("{}", NODE("", TAINT("k", "v", "PreferNoSchedule"))));
    /* What the DaemonSet controller adds: not-ready (NoExecute) for every pod, network-unavailable
     * only on the host network. */
    assert_true(runs("{}", NODE("", TAINT("node.kubernetes.io/not-ready", "", "NoExecute"))));
    assert_false(runs("{}", NODE("", TAINT("node.kubernetes.io/not-ready", "", "NoSchedule"))));
    const char *net = NODE("", TAINT("node.kubernetes.io/network-unavailable", "", "NoSchedule"));
    assert_false(runs("{}", net));
    assert_true(runs("{\"hostNetwork\":true}", net));
    /* nodeSelector and the operators. */
    const char *l = NODE("\"zone\":\"a\",\"gen\":\"5\"", "");
    assert_true(runs("{\"nodeSelector\":{\"zone\":\"a\"}}", l));
    assert_false(runs("{\"nodeSelector\":{\"zone\":\"b\"}}", l));
    assert_false(runs("{\"nodeSelector\":{\"rack\":\"a\"}}", l));
    assert_true(runs(AFF("{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"b\",\"a\"]}"), l));
    assert_false(runs(AFF("{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}"), l));
    assert_true(runs(AFF("{\"key\":\"rack\",\"operator\":\"NotIn\",\"values\":[\"a\"]}"), l));
    assert_true(runs(AFF("{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"4\"]}"), l));
    assert_false(runs(AFF("{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"5\"]}"), l));
    assert_true(runs(AFF("{\"key\":\"gen\",\"operator\":\"Lt\",\"values\":[\"6\"]}"), l));
    assert_false(runs(AFF("{\"key\":\"zone\",\"operator\":\"Lt\",\"values\":[\"6\"]}"), l));
    assert_true(runs(AFF("{\"key\":\"zone\",\"operator\":\"Exists\"}"), l));
    assert_false(runs(AFF("{\"key\":\"zone\",\"operator\":\"DoesNotExist\"}"), l));
    assert_false(runs(AFF("{\"key\":\"zone\",\"operator\":\"Near\"}"), l));
    /* An empty term matches nothing; the terms are ORed, the expressions of one term ANDed. */
    assert_false(runs("{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
                      "Execution\":{\"nodeSelectorTerms\":[{}]}}}}",
                      l));
    assert_false(runs(AFF("{\"key\":\"zone\",\"operator\":\"Exists\"},{\"key\":\"rack\","
                          "\"operator\":\"Exists\"}"),
                      l));
    /* Preferred affinity alone places nothing. */
    assert_true(runs("{\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuring"
                     "Execution\":[]}}}",
                     l));
}

/* The most the note can be asked to hold: 16 types with 63-character names, every closing
 * sentence, a DaemonSet without requests whose namespace and name are as long as allowed. Every
 * type is used, the note ends whole (never cut), and the types it had no room to describe are
 * counted. */
static void test_note_never_cut(void **state)
{
    (void)state;
    static struct kube_node_types nt;
    static struct profile p;
    char note[KUBE_NODES_NOTE_LEN];

    memset(&nt, 0, sizeof(nt));
    nt.n = PROFILE_MAX_NODE_TYPES;
    for (size_t i = 0; i < nt.n; i++) {
        snprintf(nt.t[i].name, sizeof(nt.t[i].name), "%02zu-%0*d", i, 59, 7);
        nt.t[i].cpu_m = 96000 + (int64_t)i;
        nt.t[i].memory = 768 * GI + (int64_t)i * 1234567;
        nt.t[i].reserved_cpu_m = 1234;
        nt.t[i].reserved_memory = 5 * GI + 1;
        nt.t[i].from_cluster = true;
    }
    nt.unlabelled = 999;
    nt.ds_unknown = 77;
    memset(nt.ds_unknown_name, 'x', sizeof(nt.ds_unknown_name) - 1);
    nt.ds_unknown_name[sizeof(nt.ds_unknown_name) - 1] = 0;
    memset(&p, 0, sizeof(p));
    kube_node_types_merge(&nt, &p, note);
    assert_int_equal(p.nnodes, PROFILE_MAX_NODE_TYPES);
    assert_false(text_full(note, sizeof(note)));
    contains(note, "more types");
    contains(note, "999 nodes without the label left out");
    contains(note, "is unknown and counted as 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_and_daemonsets),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_note_never_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
