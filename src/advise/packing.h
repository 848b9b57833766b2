#ifndef SIZEUP_ADVISE_PACKING_H
#define SIZEUP_ADVISE_PACKING_H

/* Cost by node packing (docs/sweep.md, "Packing"): how many pods of one shape fit a node type by
 * their requests, which resource binds, how many nodes the replicas take, what they cost and what
 * each full node strands. Pure arithmetic on counts, tested without a sweep:
 *   allocatable   node capacity - reserved (system reserve and DaemonSet pods)
 *   pods per node min(floor(allocatable cpu / request cpu), floor(allocatable memory / request
 *                 memory)); the smaller term names the binding resource (cpu on a tie)
 *   nodes         ceil(replicas / pods per node); cost = nodes x price
 *   stranded      allocatable - pods per node x request, per full node, per resource */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/quantity.h"

#define PACKING_TEXT_LEN 512

enum packing_bind { PACKING_BIND_NONE = 0, PACKING_BIND_CPU, PACKING_BIND_MEMORY };

/* One node type. Borrowed strings. */
struct packing_node {
    const char *name;
    int64_t cpu_m, memory;                   /* capacity */
    int64_t reserved_cpu_m, reserved_memory; /* what the app's pods cannot use */
    double price;                            /* per node-hour, any currency; >= 0 */
    bool not_in_cluster; /* a profile entry naming no type of the cluster: marked in text */
};

/* Memory for sentences in Mi or Gi: "512Mi", "16Gi", a non-round amount as "1.1Gi" or
 * "100.5Mi" (never raw bytes). Returns buf. */
const char *packing_format_memory(int64_t bytes, char buf[QTY_LEN]);

struct profile_node_type; /* profile/profile.h */

/* The packing view of a profile (or cluster) node type; borrows t's name. */
struct packing_node packing_node_of(const struct profile_node_type *t);

struct packing_fit {
    bool fits;                 /* at least one pod fits a node */
    unsigned pods_per_node;    /* 0 when it does not fit */
    enum packing_bind binding; /* the resource that limits pods per node */
    unsigned nodes;            /* for the replicas; 0 when it does not fit */
    double cost;               /* nodes x price */
    int64_t stranded_cpu_m;    /* per full node: allocatable - pods x request */
    int64_t stranded_memory;
    double stranded_cpu_share; /* stranded / allocatable, 0..1 */
    double stranded_memory_share;
    char text[PACKING_TEXT_LEN]; /* the arithmetic as one sentence */
};

/* Packs `replicas` (>= 1) pods requesting req_cpu_m (> 0) and req_memory (> 0) onto node type
 * n; fills *out (fits false, with the reason in text, when no pod fits). Returns 0, or -EINVAL
 * for a bad request, replica count or node (err says which). */
SIZEUP_MUST_USE int packing_fit(int64_t req_cpu_m, int64_t req_memory, unsigned replicas,
                                const struct packing_node *n, struct packing_fit *out /* OUT */,
                                char *err);

/* One candidate pair for packing_best: a shape's requests and replicas, on a node type. */
struct packing_candidate {
    int64_t req_cpu_m, req_memory;
    unsigned replicas;
    const char *shape; /* its name in sentences, borrowed */
};

struct packing_choice {
    int best_shape, best_node;     /* -1 when nothing fits any node type */
    int second_shape, second_node; /* the runner-up; -1 when there is none */
    struct packing_fit best, second;
    char text[PACKING_TEXT_LEN * 2];
};

/* The cheapest (shape, node type) pair over shapes[0..ns) x nodes[0..nn) (ties: fewer nodes,
 * then the earlier shape and node), and the runner-up. Returns 0 or packing_fit's -EINVAL. */
SIZEUP_MUST_USE int packing_best(const struct packing_candidate *shapes, size_t ns,
                                 const struct packing_node *nodes, size_t nn,
                                 struct packing_choice *out /* OUT */, char *err);

struct advice; /* advise/advisor.h */

/* The packing hook of the answer: with node types (nodes[0..nn), nn > 0) and a recommendation,
 * packs the recommended shape's requests x the answer's replicas onto each type and adds a
 * finding naming the cheapest type, the runner-up and the stranded share (or that it fits
 * none). Nothing without node types. Borrows nodes. */
void packing_apply(const struct profile_node_type *nodes, size_t nn, struct advice *a);

#endif
