#ifndef SIZEUP_KUBE_NODES_H
#define SIZEUP_KUBE_NODES_H

/* The cluster's node types for the cost by packing (docs/sweep.md, "Packing"; docs/safety.md for
 * the two read-only grants): nodes grouped by the node.kubernetes.io/instance-type label, each
 * type's allocatable the smallest of its nodes', and what its DaemonSets take the largest sum, on
 * one node of that type, of the requests of the DaemonSets that would run there. Where a
 * DaemonSet runs is worked out from its pod template (nodeSelector, required node affinity,
 * tolerations against the node's taints, as the DaemonSet controller decides), never by listing
 * the cluster's pods: a pods list would read every pod's spec, env values included. A profile's
 * nodes: entry naming a type prices it; one naming no type of the cluster is ranked too, marked
 * not in this cluster. */

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/err.h"
#include "kube/client.h"
#include "profile/profile.h"

/* The note: one sentence, a finding of its own (within the advisor's finding length). Types
 * that would not fit are counted ("and 3 more types") rather than cut. */
#define KUBE_NODES_NOTE_LEN 1024

/* The node label that groups nodes into types. */
#define KUBE_NODE_TYPE_LABEL "node.kubernetes.io/instance-type"

/* The accumulation, pure (tested without a server): feed the node list once, then every page of
 * the cluster's DaemonSets. */
struct kube_node_types {
    size_t n;
    struct profile_node_type t[PROFILE_MAX_NODE_TYPES];
    unsigned unlabelled; /* nodes without the label, left out */
    unsigned dropped;    /* types past PROFILE_MAX_NODE_TYPES, left out */
    /* Per node: its name, type index, labels and taints (what a DaemonSet's placement is
     * decided by), and the requests of the DaemonSets that would run on it, summed. */
    size_t nnodes;
    struct kube_node_row {
        char name[254];
        int type;
        int64_t ds_cpu_m, ds_memory;
        cJSON *labels; /* owned: a copy of metadata.labels, or NULL */
        cJSON *taints; /* owned: a copy of spec.taints, or NULL */
    } * nodes;         /* owned (kube_node_types_free) */
    /* DaemonSets whose template requests no CPU or no memory in some container (a LimitRange of
     * their namespace may set one, which is not read): their share is unknown, counted as 0. */
    unsigned ds_unknown;
    char ds_unknown_name[254]; /* the first of them, "namespace/name" */
};

/* Reads the node list (a v1 NodeList). Returns 0, -ENOMEM, or -EINVAL when it holds no items. */
SIZEUP_MUST_USE int kube_node_types_nodes(struct kube_node_types *nt, const cJSON *list, char *err);
/* Adds one page of an apps/v1 DaemonSetList: each DaemonSet's pod request (its containers' and
 * restartable init containers' requests, or the largest init container's when that is more,
 * plus the pod overhead; a limit stands for a missing request, as the API defaults it) is added
 * to every node of a known type that the DaemonSet would run on. */
void kube_node_types_daemonsets(struct kube_node_types *nt, const cJSON *list);
/* True when a pod with this spec (a DaemonSet's template spec, borrowed) would be placed on a node
 * with these labels and taints (borrowed, either may be NULL) named name: the nodeSelector and the
 * required node affinity match, and every NoSchedule or NoExecute taint is tolerated by the
 * spec's tolerations or by those the DaemonSet controller adds to every daemon pod. */
bool kube_node_runs_daemon(const cJSON *spec, const char *name, const cJSON *labels,
                           const cJSON *taints);
/* Sets each type's reserved to the largest DaemonSet sum on one of its nodes. */
void kube_node_types_finish(struct kube_node_types *nt);
void kube_node_types_free(struct kube_node_types *nt);

/* p->nodes becomes the cluster's types (each priced by the profile's entry of that name; when the
 * profile prices none, every type at 1 per node, so the fewest nodes win; when it prices some,
 * the unpriced types are left out) then the profile's entries naming no type of the cluster,
 * marked not_in_cluster. note says what was done, in one sentence. */
void kube_node_types_merge(const struct kube_node_types *nt, struct profile *p,
                           char note[KUBE_NODES_NOTE_LEN]);

/* Lists the nodes and the DaemonSets (read-only: list on nodes, and on daemonsets cluster-wide)
 * and merges them into p. On failure (a 403 without the grants) p is unchanged and note says node
 * types are unknown and what the sizing falls back to; an empty node list (no node at all) leaves
 * note "". Returns 0 when merged, else the error. */
int kube_node_types_read(kube_client_t *c, struct profile *p, char note[KUBE_NODES_NOTE_LEN]);

#endif
