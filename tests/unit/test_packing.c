/* Tests for src/advise/packing.c: pods per node by requests with the binding resource, nodes,
 * cost and stranded share, table-driven (the 1.1-core and 0.9-core shapes on 2-core
 * nodes, memory-bound packings, DaemonSet reservations, a shape that fits no node type), and the
 * cheapest (shape, node type) pair changing with the node types offered. */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advise/advisor.h"
#include "advise/packing.h"
#include "profile/profile.h"

#define GI (1024LL * 1024 * 1024)
#define MI (1024LL * 1024)

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

static void test_fit_table(void **state)
{
    (void)state;
    static const struct packing_node two = {"c2", 2000, 8 * GI, 0, 0, 0.10, false};
    static const struct packing_node m5 = {"m5.xlarge", 4000,  16 * GI, 180,
                                           1126 * MI,   0.192, false};
    static const struct packing_node tight = {"r-small", 8000, 4 * GI, 0, 0, 0.20, false};
    static const struct packing_node ds = {"c4-ds", 4000, 8 * GI, 1100, 512 * MI, 0.15, false};
    static const struct {
        const char *what;
        int64_t cpu_m, memory;
        unsigned replicas;
        const struct packing_node *node;
        bool fits;
        unsigned ppn, nodes;
        enum packing_bind bind;
        int64_t stranded_cpu_m;
    } cases[] = {
        /* The issue's: a 1.1-core pod strands almost half of a 2-core node ... */
        {"1.1 core on 2 cores", 1100, 512 * MI, 6, &two, true, 1, 6, PACKING_BIND_CPU, 900},
        /* ... a 0.9-core one packs 2 per node. */
        {"0.9 core on 2 cores", 900, 512 * MI, 6, &two, true, 2, 3, PACKING_BIND_CPU, 200},
        /* Memory binds: 4 GiB allocatable, 1.5 GiB pods: 2 per node though 8 cores would hold
         * 16. */
        {"memory-bound", 500, 1536 * MI, 5, &tight, true, 2, 3, PACKING_BIND_MEMORY, 7000},
        /* The reserve: 4 cores - 180m = 3820m hold 3 pods of 1.2 cores (3.6), 16 GiB - 1.1 GiB
         * hold many of 1 GiB. */
        {"system reserve", 1200, 1 * GI, 7, &m5, true, 3, 3, PACKING_BIND_CPU, 220},
        /* DaemonSets take 1.1 cores: 2.9 left hold 2 pods of 1.2 cores, not 3. */
        {"DaemonSet reservation", 1200, 1 * GI, 4, &ds, true, 2, 2, PACKING_BIND_CPU, 500},
        /* Too big for the node: a 2.5-core pod on 2 cores. */
        {"fits no node", 2500, 1 * GI, 3, &two, false, 0, 0, PACKING_BIND_CPU, 0},
        /* Memory too big: 5 GiB on 4 GiB. */
        {"memory fits no node", 500, 5 * GI, 3, &tight, false, 0, 0, PACKING_BIND_MEMORY, 0},
        /* A tie binds CPU: 2 by CPU, 2 by memory. */
        {"tie", 1000, 4 * GI, 2, &two, true, 2, 1, PACKING_BIND_CPU, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct packing_fit f;
        char err[ERR_LEN] = "";
        if (packing_fit(cases[i].cpu_m, cases[i].memory, cases[i].replicas, cases[i].node, &f,
                        err) != 0)
            fail_msg("%s: %s", cases[i].what, err);
        if (f.fits != cases[i].fits || f.pods_per_node != cases[i].ppn ||
            f.nodes != cases[i].nodes || f.binding != cases[i].bind ||
            f.stranded_cpu_m != cases[i].stranded_cpu_m)
            fail_msg("%s: fits %d, %u per node, %u nodes, binds %d, strands %lldm; want %d, %u, "
                     "%u, %d, %lldm (%s)",
                     cases[i].what, f.fits, f.pods_per_node, f.nodes, f.binding,
                     (long long)f.stranded_cpu_m, cases[i].fits, cases[i].ppn, cases[i].nodes,
                     cases[i].bind, (long long)cases[i].stranded_cpu_m, f.text);
        if (f.fits)
            assert_true(fabs(f.cost - f.nodes * cases[i].node->price) < 1e-9);
    }
}

static void test_fit_text(void **state)
{
    (void)state;
    static const struct packing_node two = {"c2", 2000, 8 * GI, 0, 0, 0.10, false};
    struct packing_fit f;
    char err[ERR_LEN] = "";

    assert_int_equal(packing_fit(1100, 512 * MI, 6, &two, &f, err), 0);
    contains(f.text, "c2: 2 CPU and 8Gi allocatable hold 1 pod of 1100m CPU and 512Mi (CPU binds)");
    contains(f.text, "6 replicas take 6 nodes, 0.6");
    contains(f.text, "strands 900m CPU (45%)");
    assert_true(fabs(f.stranded_cpu_share - 0.45) < 1e-9);
    assert_int_equal(packing_fit(2500, 512 * MI, 6, &two, &f, err), 0);
    contains(f.text, "fits no c2 (2 CPU and 8Gi allocatable): its CPU does not fit");

    /* Bad input. */
    assert_int_equal(packing_fit(0, 512 * MI, 6, &two, &f, err), -EINVAL);
    assert_int_equal(packing_fit(100, 0, 6, &two, &f, err), -EINVAL);
    assert_int_equal(packing_fit(100, 512 * MI, 0, &two, &f, err), -EINVAL);
    struct packing_node bad = two;
    bad.price = -1;
    assert_int_equal(packing_fit(100, 512 * MI, 1, &bad, &f, err), -EINVAL);
    contains(err, "node type c2");
    bad = two;
    bad.cpu_m = 0;
    assert_int_equal(packing_fit(100, 512 * MI, 1, &bad, &f, err), -EINVAL);
    /* Reserved above capacity: nothing fits, no error. */
    bad = two;
    bad.reserved_cpu_m = 3000;
    assert_int_equal(packing_fit(100, 512 * MI, 1, &bad, &f, err), 0);
    assert_false(f.fits);
}

/* The recommendation changes when the node type changes: on 2-core nodes the 0.9-core shape
 * (more replicas, but 2 per node) is cheaper than the 1.1-core one; on 4-core nodes the 1.1-core
 * shape packs 3 per node and wins. */
static void test_best_changes_with_node_type(void **state)
{
    (void)state;
    static const struct packing_candidate shapes[] = {
        {1100, 512 * MI, 6, "1@1.1/512Mi"},
        {900, 512 * MI, 8, "1@0.9/512Mi"},
    };
    static const struct packing_node two[] = {{"c2", 2000, 8 * GI, 0, 0, 0.10, false}};
    static const struct packing_node four[] = {{"c4", 4000, 16 * GI, 400, 1 * GI, 0.20, false}};
    static const struct packing_node both[] = {{"c2", 2000, 8 * GI, 0, 0, 0.10, false},
                                               {"c4", 4000, 16 * GI, 400, 1 * GI, 0.20, false}};
    struct packing_choice c;
    char err[ERR_LEN] = "";

    assert_int_equal(packing_best(shapes, 2, two, 1, &c, err), 0);
    assert_int_equal(c.best_shape, 1); /* 8 pods, 2 per node: 4 nodes, 0.40 */
    assert_int_equal(c.best.nodes, 4);
    assert_int_equal(c.second_shape, 0); /* 6 pods, 1 per node: 6 nodes, 0.60 */
    assert_int_equal(c.second.nodes, 6);
    contains(c.text, "cheapest: 1@0.9/512Mi on c2:");
    contains(c.text, "runner-up: 1@1.1/512Mi on c2:");

    assert_int_equal(packing_best(shapes, 2, four, 1, &c, err), 0);
    assert_int_equal(c.best_shape, 0); /* 3.6 cores: 3 of 1.1 per node, 6 pods: 2 nodes, 0.40 */
    assert_int_equal(c.best.pods_per_node, 3);
    assert_int_equal(c.best.nodes, 2);
    assert_int_equal(c.second_shape, 1); /* 4 of 0.9 per node, 8 pods: 2 nodes, 0.40: a tie */
    contains(c.text, "cheapest: 1@1.1/512Mi on c4:");

    assert_int_equal(packing_best(shapes, 2, both, 2, &c, err), 0);
    assert_true(c.best.cost <= 0.40 + 1e-9);
    assert_true(c.second_shape >= 0);

    /* Nothing fits. */
    static const struct packing_node small[] = {{"c1", 800, 1 * GI, 0, 0, 0.05, false}};
    assert_int_equal(packing_best(shapes, 2, small, 1, &c, err), 0);
    assert_int_equal(c.best_shape, -1);
    assert_int_equal(c.second_shape, -1);
    contains(c.text, "no shape fits any node type");
}

/* The hook: the recommendation's requests x replicas on the profile's node types, as a
 * finding; nothing without node types or a recommendation. */
static void test_apply(void **state)
{
    (void)state;
    static struct advice a;
    struct profile_node_type nodes[2] = {
        {"c2", 2000, 8 * GI, 0.10, 0, 0, false, false},
        {"c4", 4000, 16 * GI, 0.20, 400, 1 * GI, false, false},
    };

    memset(&a, 0, sizeof(a));
    a.recommended = 0;
    a.replicas = 6;
    a.request_cpu_m = 1100;
    a.request_memory = 512 * MI;
    packing_apply(nodes, 2, &a);
    assert_int_equal(a.nfindings, 1);
    /* c2: 1 per node, 6 nodes, 0.6; c4: 3 per node, 2 nodes, 0.4. */
    contains(a.findings[0], "packing by requests: cheapest: the recommendation on c4:");
    contains(a.findings[0], "6 replicas take 2 nodes, 0.4");
    contains(a.findings[0], "runner-up: the recommendation on c2:");
    contains(a.findings[0], "strands 900m CPU (45%)");

    a.nfindings = 0;
    a.request_cpu_m = 5000;
    packing_apply(nodes, 2, &a);
    assert_int_equal(a.nfindings, 1);
    contains(a.findings[0], "fit none of the 2 node types");

    a.nfindings = 0;
    packing_apply(nodes, 0, &a);
    a.recommended = -1;
    packing_apply(nodes, 2, &a);
    assert_int_equal(a.nfindings, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_table),
        cmocka_unit_test(test_fit_text),
        cmocka_unit_test(test_best_changes_with_node_type),
        cmocka_unit_test(test_apply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
