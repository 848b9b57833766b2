/* Tests for the sizing's ranking by node packing (src/advise/packing.c, step (2) of sizing_run):
 * each shape's requests packed onto each node type, the cheapest (shape, node type) pair
 * recommended with the runner-up and the stranded share in the sentence, table-driven over node
 * types. Figures worked by hand in the comments.
 *
 * The two shapes: A = 1@1.1/1Gi using 1.1 cores and 300Mi at capacity (requests 1100m, 375Mi =
 * 300Mi + 25%), lower bound 210 req/s; B = 1@0.9/1Gi using 0.9 cores (requests 900m, 375Mi),
 * lower bound 155 req/s. Planned fraction 0.9 / 1.3: A plans 145.4 req/s, B 107.3; the target of
 * 840 req/s takes 6 x A or 8 x B. By the cost weights A is cheaper (6 x 1.23 = 7.38 against
 * 8 x 1.03 = 8.24). */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "advise/packing.h"
#include "advise/sizing.h"

#define GI (1024LL * 1024 * 1024)
#define MI (1024LL * 1024)

static void contains(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not found in: %s", needle, text);
}

struct fixture {
    size_t n;
    struct variant var[2];
    struct capacity_result cap[2];
    struct sizing_row rows[2];
    struct sizing_opts opts;
    struct sizing out;
};

static void add(struct fixture *f, const char *spec, double low, double cores)
{
    char err[ERR_LEN];
    size_t i = f->n++;
    struct capacity_result *c = &f->cap[i];

    assert_int_equal(variant_parse(spec, &f->var[i], err), 0);
    memset(c, 0, sizeof(*c));
    c->searched = c->valid = true;
    c->rps = low * 1.03;
    c->interval.n = 3;
    c->interval.mean = c->rps;
    c->interval.low = low;
    c->interval.high = 2 * c->rps - low;
    c->interval.half = c->rps - low;
    c->cpu_cores = cores;
    c->peak_memory_bytes = 300 * MI;
    f->rows[i] =
        (struct sizing_row){.variant = &f->var[i], .cap = c, .usable = true, .ready_s = -1};
}

static void shapes(struct fixture *f, double target)
{
    memset(f, 0, sizeof(*f));
    f->opts.per_user_rps = 0.5;
    f->opts.cost.cpu = 1;
    f->opts.cost.memory_gib = 0.13;
    f->opts.planning.buffer = 0.10;
    f->opts.planning.growth = 0.30;
    f->opts.target_rps = target;
    add(f, "1@1.1/1Gi", 210, 1.1); /* A */
    add(f, "1@0.9/1Gi", 155, 0.9); /* B */
}

static struct sizing *run(struct fixture *f, const struct profile_node_type *nodes, size_t nn)
{
    char err[ERR_LEN] = "";
    f->opts.nodes = nodes;
    f->opts.nnodes = nn;
    if (sizing_run(f->rows, f->n, &f->opts, &f->out, err) != 0)
        fail_msg("sizing_run: %s", err);
    return &f->out;
}

static const struct profile_node_type C2 = {"c2", 2000, 8 * GI, 0.10, 0, 0, false, false};
static const struct profile_node_type C4 = {"c4", 4000, 16 * GI, 0.20, 400, 1 * GI, false, false};
/* 1.1 cores of DaemonSets and system reserve on a 3-core node: 1.9 cores left. */
static const struct profile_node_type C3DS = {"c3-ds", 3000,     8 * GI, 0.12,
                                              1100,    512 * MI, false,  false};
/* Memory binds: 8 cores but 1Gi: 2 pods of 375Mi (750Mi), while CPU would hold 7 of A. */
static const struct profile_node_type MEM = {"m-small", 8000, 1 * GI, 0.05, 0, 0, false, false};
static const struct profile_node_type C1 = {"c1", 1000, 4 * GI, 0.04, 0, 0, false, false};
static const struct profile_node_type TINY = {"t1", 800, 4 * GI, 0.01, 0, 0, false, false};

static void test_ranking_table(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        const struct profile_node_type *nodes[2];
        size_t nn;
        int recommended; /* 0 = A, 1 = B, -1 none */
        unsigned replicas, nodes_used, per_node;
        double total;
        const char *says[3];
    } cases[] = {
        /* No node types: the cost weights, A. */
        {"weights", {NULL}, 0, 0, 6, 0, 0, 7.38, {"cost per pod = cores x 1", NULL, NULL}},
        /* 2-core nodes: A packs 1 per node (6 nodes, 0.6), B packs 2 (4 nodes, 0.4): B, though
         * the weights prefer A. Each node strands 2000 - 1800 = 200m (10%) and 8Gi - 750Mi =
         * 7442Mi (91%). */
        {"2-core nodes",
         {&C2},
         1,
         1,
         8,
         4,
         2,
         0.4,
         {"8 x 1w / 0.9c / 1Gi (requests 900m CPU, 375Mi) on 4 x c2 at 0.1 = 0.4, 2 pods per node "
          "(CPU binds), each full node stranding 200m CPU (10%) and 7442Mi (91%)",
          "runner-up: 6 x 1w / 1.1c / 1Gi on 6 x c2 = 0.6 (1 per node)",
          "cost: weights are unused"}},
        /* 4-core nodes less 400m: A packs 3 (2 nodes, 0.4), B 4 (2 nodes, 0.4): a tie on cost
         * and nodes, so fewer replicas: A. */
        {"4-core nodes",
         {&C4},
         1,
         0,
         6,
         2,
         3,
         0.4,
         {"6 x 1w / 1.1c / 1Gi (requests 1100m CPU, 375Mi) on 2 x c4 at 0.2 = 0.4, 3 pods per node",
          "stranding 300m CPU (8%)", "runner-up: 8 x 1w / 0.9c / 1Gi on 2 x c4 = 0.4"}},
        /* DaemonSets leave 1.9 cores: B packs only 2 (1.8), A 1: B on 4 nodes (0.48) against
         * A on 6 (0.72). */
        {"DaemonSet reservation",
         {&C3DS},
         1,
         1,
         8,
         4,
         2,
         0.48,
         {"on 4 x c3-ds at 0.12 = 0.48, 2 pods per node (CPU binds)", "stranding 100m CPU (5%)",
          "runner-up: 6 x 1w / 1.1c / 1Gi on 6 x c3-ds = 0.72"}},
        /* Memory binds on m-small: 2 of either per node; A needs 3 nodes, B 4: A. */
        {"memory-bound",
         {&MEM},
         1,
         0,
         6,
         3,
         2,
         0.15,
         {"on 3 x m-small at 0.05 = 0.15, 2 pods per node (memory binds)",
          "stranding 5800m CPU (72%) and 274Mi (27%)", NULL}},
        /* A fits no 1-core node: B, alone (no runner-up). */
        {"A fits no node type",
         {&C1},
         1,
         1,
         8,
         8,
         1,
         0.32,
         {"on 8 x c1 at 0.04 = 0.32", NULL, NULL}},
        /* Neither fits: no recommendation, the shapes named. */
        {"nothing fits",
         {&TINY},
         1,
         -1,
         0,
         0,
         0,
         0,
         {"fit none of the node types: 1w / 1.1c / 1Gi (requests 1100m CPU, 375Mi), 1w / 0.9c / "
          "1Gi "
          "(requests 900m CPU, 375Mi)",
          NULL, NULL}},
        /* Both node types offered: A on c4 (0.4, 2 nodes) against B's best, c4 too (0.4, 2
         * nodes, fewer than c2's 4): A by fewer replicas; the runner-up pair is B on c4. */
        {"c2 and c4",
         {&C2, &C4},
         2,
         0,
         6,
         2,
         3,
         0.4,
         {"on 2 x c4", "runner-up: 8 x 1w / 0.9c / 1Gi on 2 x c4", NULL}},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        static struct fixture f;
        shapes(&f, 840);
        struct profile_node_type nodes[2];
        for (size_t k = 0; k < cases[i].nn; k++)
            nodes[k] = *cases[i].nodes[k];
        struct sizing *s = run(&f, nodes, cases[i].nn);
        if (s->recommended != cases[i].recommended)
            fail_msg("%s: recommended %d, want %d: %s", cases[i].what, s->recommended,
                     cases[i].recommended, s->why);
        assert_int_equal(s->by_packing, cases[i].nn > 0);
        for (size_t k = 0; k < 3; k++)
            if (cases[i].says[k] && !strstr(s->why, cases[i].says[k]))
                fail_msg("%s: \"%s\" not in: %s", cases[i].what, cases[i].says[k], s->why);
        if (s->recommended < 0)
            continue;
        const struct sizing_variant *v = &s->rows[s->recommended];
        if (s->replicas != cases[i].replicas || fabs(v->total_cost - cases[i].total) > 1e-9 ||
            (cases[i].nn &&
             (v->nodes != cases[i].nodes_used || v->pods_per_node != cases[i].per_node)))
            fail_msg("%s: %u replicas, %u nodes, %u per node, total %g; want %u, %u, %u, %g",
                     cases[i].what, s->replicas, v->nodes, v->pods_per_node, v->total_cost,
                     cases[i].replicas, cases[i].nodes_used, cases[i].per_node, cases[i].total);
    }
}

/* A profile entry the cluster does not have is ranked too, marked in the sentence. */
static void test_not_in_cluster(void **state)
{
    (void)state;
    static struct fixture f;
    struct profile_node_type n[2] = {C4, C2};
    n[1].not_in_cluster = true;
    n[0].from_cluster = true;

    shapes(&f, 840);
    struct sizing *s = run(&f, n, 2);
    assert_int_equal(s->recommended, 0);
    contains(s->why, "on 2 x c4 at 0.2");
    /* B on c2 costs 0.4 on 4 nodes: after B on c4 (2 nodes); A on c2 0.6. */
    contains(s->why, "runner-up: 8 x 1w / 0.9c / 1Gi on 2 x c4");
    n[0].price = 0.5; /* c4 dearer: B on c2 (0.4) wins, on the type the cluster lacks */
    s = run(&f, n, 2);
    assert_int_equal(s->recommended, 1);
    contains(s->why, "on 4 x c2 (not in this cluster) at 0.1 = 0.4");
}

/* Without a target: the most planned capacity per node price, per pod slot: B packs 2 per c2
 * at 0.05 a slot (107.3 / 0.05 = 2146 per unit), A 1 at 0.1 (1454). */
static void test_no_target(void **state)
{
    (void)state;
    static struct fixture f;

    shapes(&f, 0);
    struct sizing *s = run(&f, &C2, 1);
    assert_int_equal(s->recommended, 1);
    assert_int_equal(s->replicas, 1);
    contains(s->why,
             "1w / 0.9c / 1Gi (requests 900m CPU, 375Mi) packs 2 per c2 (CPU binds) at 0.1, "
             "2146 planned req/s per unit");
    contains(s->why, "runner-up: 1w / 1.1c / 1Gi at 1 per c2 (0.1 per pod)");
    s = run(&f, NULL, 0);
    assert_int_equal(s->recommended, 0); /* the weights: 145.4 / 1.23 > 107.3 / 1.03 */
}

static void test_format_memory(void **state)
{
    (void)state;
    char b[QTY_LEN];
    static const struct {
        int64_t bytes;
        const char *want;
    } cases[] = {
        {512 * MI, "512Mi"},
        {16 * GI, "16Gi"},
        {(int64_t)(1.1 * GI), "1.1Gi"},
        {8 * GI - 750 * MI, "7442Mi"},
        {8 * GI - 750 * MI - 1, "7.27Gi"},
        {100 * MI + 512 * 1024, "100.5Mi"},
        {0, "0Mi"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (strcmp(packing_format_memory(cases[i].bytes, b), cases[i].want) != 0)
            fail_msg("%lld bytes: %s, want %s", (long long)cases[i].bytes, b, cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranking_table),
        cmocka_unit_test(test_not_in_cluster),
        cmocka_unit_test(test_no_target),
        cmocka_unit_test(test_format_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
