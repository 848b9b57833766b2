/* libFuzzer target: the cluster's node types (src/kube/nodes.c) from arbitrary JSON, read as the
 * node list and as a page of DaemonSets, then merged with a profile's nodes: entry. Any input is
 * read or refused, never a crash, and what comes out stays within the profile's bounds. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/nodes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct profile p;
    struct kube_node_types nt;
    char err[ERR_LEN], note[KUBE_NODES_NOTE_LEN];

    cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
    if (!obj)
        return 0;
    if (kube_node_types_nodes(&nt, obj, err) == 0) {
        kube_node_types_daemonsets(&nt, obj);
        kube_node_types_finish(&nt);
        memset(&p, 0, sizeof(p));
        p.nnodes = 1;
        p.nodes[0] = (struct profile_node_type){"m5.large", 2000, 8LL << 30, 0.1, 0, 0, 0, 0};
        kube_node_types_merge(&nt, &p, note);
        if (p.nnodes > PROFILE_MAX_NODE_TYPES || !memchr(note, '\0', sizeof(note)))
            abort();
        for (size_t i = 0; i < p.nnodes; i++)
            if (!memchr(p.nodes[i].name, '\0', sizeof(p.nodes[i].name)) || p.nodes[i].cpu_m <= 0 ||
                p.nodes[i].memory <= 0 || p.nodes[i].reserved_cpu_m < 0)
                abort();
        kube_node_types_free(&nt);
    }
    cJSON_Delete(obj);
    return 0;
}
