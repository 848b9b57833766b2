#ifndef SIZEUP_KUBE_NODES_H
#define SIZEUP_KUBE_NODES_H

/* The cluster's node types for the cost by packing (docs/sweep.md, "Packing"; docs/safety.md for
 * the two read-only grants): nodes grouped by the node.kubernetes.io/instance-type label, each
 * type's allocatable the smallest of its nodes', and what its DaemonSets take the largest sum of
 * DaemonSet pods' requests on one node of that type. A profile's nodes: entry naming a type
 * prices it; one naming no type of the cluster is ranked too, marked not in this cluster. */

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/err.h"
#include "kube/client.h"
#include "profile/profile.h"

#define KUBE_NODES_NOTE_LEN 512

/* The node label that groups nodes into types. */
#define KUBE_NODE_TYPE_LABEL "node.kubernetes.io/instance-type"

/* The accumulation, pure (tested without a server): feed the node list once, then every page of
 * the cluster's pods. */
struct kube_node_types {
    size_t n;
    struct profile_node_type t[PROFILE_MAX_NODE_TYPES];
    unsigned unlabelled; /* nodes without the label, left out */
    unsigned dropped;    /* types past PROFILE_MAX_NODE_TYPES, left out */
    /* Per node: its name and type index, and the DaemonSet pods' requests summed on it. */
    size_t nnodes;
    struct kube_node_row {
        char name[254];
        int type;
        int64_t ds_cpu_m, ds_memory;
    } * nodes; /* owned (kube_node_types_free) */
};

/* Reads the node list (a v1 NodeList). Returns 0, -ENOMEM, or -EINVAL when it holds no items. */
SIZEUP_MUST_USE int kube_node_types_nodes(struct kube_node_types *nt, const cJSON *list, char *err);
/* Adds one page of a v1 PodList: each pod a DaemonSet owns, bound to a node of a known type and
 * not finished, adds its containers' requests to its node. */
void kube_node_types_pods(struct kube_node_types *nt, const cJSON *list);
/* Sets each type's reserved to the largest DaemonSet sum on one of its nodes. */
void kube_node_types_finish(struct kube_node_types *nt);
void kube_node_types_free(struct kube_node_types *nt);

/* p->nodes becomes the cluster's types (each priced by the profile's entry of that name; when the
 * profile prices none, every type at 1 per node, so the fewest nodes win; when it prices some,
 * the unpriced types are left out) then the profile's entries naming no type of the cluster,
 * marked not_in_cluster. note says what was done, in one sentence. */
void kube_node_types_merge(const struct kube_node_types *nt, struct profile *p,
                           char note[KUBE_NODES_NOTE_LEN]);

/* Lists the nodes and every pod (read-only: list on nodes and on pods cluster-wide) and merges
 * them into p. On failure (a 403 without the grants) p is unchanged and note says node types are
 * unknown and what the sizing falls back to; an empty node list (no node at all) leaves note "".
 * Returns 0 when merged, else the error. */
int kube_node_types_read(kube_client_t *c, struct profile *p, char note[KUBE_NODES_NOTE_LEN]);

#endif
