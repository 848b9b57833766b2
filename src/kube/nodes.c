/* The cluster's node types for the cost by packing (nodes.h). */

#include "kube/nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "core/text.h"
#include "kube/objects.h"

#define PODS_PAGE      500
#define PODS_MAX_PAGES 200 /* 100,000 pods: bounded, whatever the cluster */

static int64_t qty(const cJSON *obj, const char *path, bool cpu)
{
    const char *s = kube_path_string(obj, path);
    int64_t v = -1;
    char e[ERR_LEN];

    if (!s || (cpu ? qty_parse_cpu(s, &v, e) : qty_parse_memory(s, &v, e)) != 0)
        return -1;
    return v;
}

static int type_index(struct kube_node_types *nt, const char *name)
{
    for (size_t i = 0; i < nt->n; i++)
        if (strcmp(nt->t[i].name, name) == 0)
            return (int)i;
    if (nt->n >= PROFILE_MAX_NODE_TYPES || strlen(name) >= PROFILE_NODE_NAME_LEN) {
        nt->dropped++;
        return -1;
    }
    struct profile_node_type *t = &nt->t[nt->n];
    memset(t, 0, sizeof(*t));
    memcpy(t->name, name, strlen(name) + 1);
    t->from_cluster = true;
    return (int)nt->n++;
}

int kube_node_types_nodes(struct kube_node_types *nt, const cJSON *list, char *err)
{
    const cJSON *items = cJSON_GetObjectItem(list, "items"), *n;
    size_t count = (size_t)cJSON_GetArraySize(items);

    memset(nt, 0, sizeof(*nt));
    if (!cJSON_IsArray(items) || count == 0)
        return err_set(err, -EINVAL, "the node list holds no nodes");
    nt->nodes = calloc(count, sizeof(*nt->nodes));
    if (!nt->nodes)
        return err_set(err, -ENOMEM, "out of memory");
    cJSON_ArrayForEach(n, items)
    {
        const char *type = kube_label(n, KUBE_NODE_TYPE_LABEL);
        const char *name = kube_path_string(n, "metadata.name");
        int64_t cpu = qty(n, "status.allocatable.cpu", true);
        int64_t mem = qty(n, "status.allocatable.memory", false);
        if (!name || strlen(name) >= sizeof(nt->nodes[0].name))
            continue;
        if (!type || !*type || cpu <= 0 || mem <= 0) {
            nt->unlabelled++;
            continue;
        }
        int k = type_index(nt, type);
        if (k < 0)
            continue;
        struct profile_node_type *t = &nt->t[k];
        if (t->cpu_m == 0 || cpu < t->cpu_m)
            t->cpu_m = cpu;
        if (t->memory == 0 || mem < t->memory)
            t->memory = mem;
        struct kube_node_row *r = &nt->nodes[nt->nnodes++];
        memcpy(r->name, name, strlen(name) + 1);
        r->type = k;
    }
    return 0;
}

static bool daemonset_owned(const cJSON *pod)
{
    const cJSON *ref;
    cJSON_ArrayForEach(ref, kube_path_get(pod, "metadata.ownerReferences"))
    {
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(ref, "kind"));
        if (kind && strcmp(kind, "DaemonSet") == 0)
            return true;
    }
    return false;
}

void kube_node_types_pods(struct kube_node_types *nt, const cJSON *list)
{
    const cJSON *p, *c;

    cJSON_ArrayForEach(p, cJSON_GetObjectItem(list, "items"))
    {
        const char *node = kube_path_string(p, "spec.nodeName");
        const char *phase = kube_path_string(p, "status.phase");
        if (!node || !daemonset_owned(p) ||
            (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)))
            continue;
        struct kube_node_row *r = NULL;
        for (size_t i = 0; i < nt->nnodes && !r; i++)
            if (strcmp(nt->nodes[i].name, node) == 0)
                r = &nt->nodes[i];
        if (!r)
            continue;
        cJSON_ArrayForEach(c, kube_path_get(p, "spec.containers"))
        {
            int64_t cpu = qty(c, "resources.requests.cpu", true);
            int64_t mem = qty(c, "resources.requests.memory", false);
            r->ds_cpu_m += cpu > 0 ? cpu : 0;
            r->ds_memory += mem > 0 ? mem : 0;
        }
    }
}

void kube_node_types_finish(struct kube_node_types *nt)
{
    for (size_t i = 0; i < nt->nnodes; i++) {
        struct profile_node_type *t = &nt->t[nt->nodes[i].type];
        if (nt->nodes[i].ds_cpu_m > t->reserved_cpu_m)
            t->reserved_cpu_m = nt->nodes[i].ds_cpu_m;
        if (nt->nodes[i].ds_memory > t->reserved_memory)
            t->reserved_memory = nt->nodes[i].ds_memory;
    }
}

void kube_node_types_free(struct kube_node_types *nt)
{
    free(nt->nodes);
    nt->nodes = NULL;
    nt->nnodes = 0;
}

static const struct profile_node_type *named(const struct profile_node_type *a, size_t n,
                                             const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].name, name) == 0)
            return &a[i];
    return NULL;
}

void kube_node_types_merge(const struct kube_node_types *nt, struct profile *p,
                           char note[KUBE_NODES_NOTE_LEN])
{
    struct profile_node_type out[PROFILE_MAX_NODE_TYPES];
    size_t n = 0, priced = 0, unpriced = 0, absent = 0;
    char b[QTY_LEN], m[QTY_LEN], rb[QTY_LEN], rm[QTY_LEN];

    for (size_t i = 0; i < nt->n; i++)
        priced += named(p->nodes, p->nnodes, nt->t[i].name) != NULL;
    note[0] = 0;
    text_catf(note, KUBE_NODES_NOTE_LEN,
              "node types from the cluster (by %s):", KUBE_NODE_TYPE_LABEL);
    for (size_t i = 0; i < nt->n && n < PROFILE_MAX_NODE_TYPES; i++) {
        const struct profile_node_type *pe = named(p->nodes, p->nnodes, nt->t[i].name);
        if (priced && !pe) {
            unpriced++;
            continue;
        }
        out[n] = nt->t[i];
        out[n].price = pe ? pe->price : 1;
        text_catf(note, KUBE_NODES_NOTE_LEN,
                  "%s %s %s CPU and %s allocatable, %s CPU and %s for "
                  "DaemonSets, price %g",
                  n ? ";" : "", out[n].name, qty_format_cpu(out[n].cpu_m, b),
                  qty_format_memory(out[n].memory, m), qty_format_cpu(out[n].reserved_cpu_m, rb),
                  qty_format_memory(out[n].reserved_memory, rm), out[n].price);
        n++;
    }
    for (size_t i = 0; i < p->nnodes && n < PROFILE_MAX_NODE_TYPES; i++) {
        bool present = false;
        for (size_t k = 0; k < nt->n; k++)
            present = present || strcmp(nt->t[k].name, p->nodes[i].name) == 0;
        if (present)
            continue;
        out[n] = p->nodes[i];
        out[n].not_in_cluster = true;
        out[n].from_cluster = false;
        absent++;
        n++;
    }
    if (!priced)
        text_catf(note, KUBE_NODES_NOTE_LEN,
                  "; the profile prices none of them, so each node counts 1 and the fewest "
                  "nodes win");
    if (unpriced)
        text_catf(note, KUBE_NODES_NOTE_LEN, "; %zu type%s the profile does not price left out",
                  unpriced, unpriced == 1 ? "" : "s");
    if (absent)
        text_catf(note, KUBE_NODES_NOTE_LEN, "; %zu profile type%s not in this cluster ranked too",
                  absent, absent == 1 ? "" : "s");
    if (nt->unlabelled)
        text_catf(note, KUBE_NODES_NOTE_LEN, "; %u node%s without the label left out",
                  nt->unlabelled, nt->unlabelled == 1 ? "" : "s");
    if (n == 0)
        return;
    memcpy(p->nodes, out, n * sizeof(out[0]));
    p->nnodes = n;
}

int kube_node_types_read(kube_client_t *c, struct profile *p, char note[KUBE_NODES_NOTE_LEN])
{
    struct kube_node_types nt;
    cJSON *list = NULL;
    char err[ERR_LEN] = "", cont[1024] = "";
    int rc;

    rc = kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, KUBE_BODY_MAX_LIST, &list, err);
    bool listed = rc == 0;
    if (rc == 0)
        rc = kube_node_types_nodes(&nt, list, err);
    cJSON_Delete(list);
    if (listed && rc == -EINVAL) {
        note[0] = 0; /* no node at all (a test server): nothing to say */
        return rc;
    }
    if (rc)
        goto unknown;
    for (int page = 0; page < PODS_MAX_PAGES; page++) {
        struct kube_list_opts o = {NULL, NULL, PODS_PAGE, cont[0] ? cont : NULL};
        list = NULL;
        rc = kube_list(c, &KUBE_PODS, NULL, &o, &list, err);
        if (rc) {
            kube_node_types_free(&nt);
            goto unknown;
        }
        kube_node_types_pods(&nt, list);
        const char *next = kube_path_string(list, "metadata.continue");
        snprintf(cont, sizeof(cont), "%s", next && strlen(next) < sizeof(cont) ? next : "");
        cJSON_Delete(list);
        if (!cont[0])
            break;
    }
    kube_node_types_finish(&nt);
    if (nt.n == 0) {
        snprintf(err, sizeof(err), "no node carries the %s label", KUBE_NODE_TYPE_LABEL);
        kube_node_types_free(&nt);
        rc = -ENOENT;
        goto unknown;
    }
    kube_node_types_merge(&nt, p, note);
    kube_node_types_free(&nt);
    return 0;
unknown:
    snprintf(note, KUBE_NODES_NOTE_LEN, "node types unknown (%s), so %s", err,
             p->nnodes ? "the profile's nodes: are used as given"
                       : "pods are priced by the cost: weights");
    return rc;
}
