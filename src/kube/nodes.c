/* The cluster's node types for the cost by packing (nodes.h). */

#include "kube/nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "core/text.h"
#include "kube/objects.h"

#define DS_PAGE      500
#define DS_MAX_PAGES 200 /* 100,000 DaemonSets: bounded, whatever the cluster */

/* Read here only, so named here rather than among the client's resources. */
static const struct kube_resource DAEMONSETS = {"apps", "v1", "daemonsets", 1};

/* What the note's closing sentences take at most (unpriced, absent, unlabelled, the DaemonSets
 * without requests with one name): the types are listed only while this much room is left. */
#define NOTE_TAIL_ROOM 640

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
        const cJSON *labels = kube_path_get(n, "metadata.labels");
        const cJSON *taints = kube_path_get(n, "spec.taints");
        if ((labels && !(r->labels = cJSON_Duplicate(labels, 1))) ||
            (taints && !(r->taints = cJSON_Duplicate(taints, 1)))) {
            kube_node_types_free(nt);
            return err_set(err, -ENOMEM, "out of memory");
        }
    }
    return 0;
}

static bool str_is(const cJSON *obj, const char *key, const char *want)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(obj, key));
    return v && strcmp(v, want) == 0;
}

/* A label's value, or NULL when the node lacks it. */
static const char *label_of(const cJSON *labels, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(labels, key));
}

static bool in_values(const cJSON *values, const char *v)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, values)
    {
        const char *s = cJSON_GetStringValue(x);
        if (s && v && strcmp(s, v) == 0)
            return true;
    }
    return false;
}

/* Gt and Lt compare the label as an integer with the one value given; a label or value that is
 * not an integer does not match, as the scheduler reads them. */
static bool int_compare(const char *label, const cJSON *values, bool greater)
{
    const char *v = cJSON_GetStringValue(cJSON_GetArrayItem(values, 0));
    char *e1, *e2;
    if (!label || !v || cJSON_GetArraySize(values) != 1)
        return false;
    long long a = strtoll(label, &e1, 10), b = strtoll(v, &e2, 10);
    if (!*label || *e1 || !*v || *e2)
        return false;
    return greater ? a > b : a < b;
}

/* One requirement of a node selector term; value is the label's value (matchExpressions) or the
 * node's name (matchFields on metadata.name), NULL when absent. */
static bool requirement_holds(const cJSON *req, const char *value)
{
    const cJSON *values = cJSON_GetObjectItem(req, "values");
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(req, "operator"));

    if (!op)
        return false;
    if (strcmp(op, "In") == 0)
        return value && in_values(values, value);
    if (strcmp(op, "NotIn") == 0)
        return !value || !in_values(values, value);
    if (strcmp(op, "Exists") == 0)
        return value != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return value == NULL;
    if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0)
        return int_compare(value, values, op[0] == 'G');
    return false; /* an operator the API would not have accepted */
}

/* A term matches when all its requirements hold; a term with none matches no node (the API's
 * rule for an empty node selector term). */
static bool term_matches(const cJSON *term, const char *name, const cJSON *labels)
{
    const cJSON *req;
    int n = 0;

    cJSON_ArrayForEach(req, cJSON_GetObjectItem(term, "matchExpressions"))
    {
        const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(req, "key"));
        if (!key || !requirement_holds(req, label_of(labels, key)))
            return false;
        n++;
    }
    cJSON_ArrayForEach(req, cJSON_GetObjectItem(term, "matchFields"))
    {
        if (!str_is(req, "key", "metadata.name") || !requirement_holds(req, name))
            return false;
        n++;
    }
    return n > 0;
}

static bool selector_matches(const cJSON *spec, const char *name, const cJSON *labels)
{
    const cJSON *kv, *term;

    cJSON_ArrayForEach(kv, cJSON_GetObjectItem(spec, "nodeSelector"))
    {
        const char *want = cJSON_GetStringValue(kv), *have = label_of(labels, kv->string);
        if (!want || !have || strcmp(want, have) != 0)
            return false;
    }
    const cJSON *required =
        kube_path_get(spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    if (!required)
        return true;
    /* The terms are ORed; none at all matches no node. */
    cJSON_ArrayForEach(term, cJSON_GetObjectItem(required, "nodeSelectorTerms"))
    {
        if (term_matches(term, name, labels))
            return true;
    }
    return false;
}

/* Toleration semantics of the API: an empty effect tolerates every effect; Exists with an empty
 * key tolerates every taint; Equal (the default operator) also compares the value. */
static bool tolerates(const cJSON *tol, const cJSON *taint)
{
    const char *tkey = cJSON_GetStringValue(cJSON_GetObjectItem(taint, "key"));
    const char *teffect = cJSON_GetStringValue(cJSON_GetObjectItem(taint, "effect"));
    const char *tvalue = cJSON_GetStringValue(cJSON_GetObjectItem(taint, "value"));
    const char *key = cJSON_GetStringValue(cJSON_GetObjectItem(tol, "key"));
    const char *effect = cJSON_GetStringValue(cJSON_GetObjectItem(tol, "effect"));
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(tol, "operator"));
    const char *value = cJSON_GetStringValue(cJSON_GetObjectItem(tol, "value"));
    bool exists = op && strcmp(op, "Exists") == 0;

    if (effect && *effect && (!teffect || strcmp(effect, teffect) != 0))
        return false;
    if (!key || !*key)
        return exists;
    if (!tkey || strcmp(key, tkey) != 0)
        return false;
    if (exists)
        return true;
    return strcmp(value ? value : "", tvalue ? tvalue : "") == 0;
}

/* What the DaemonSet controller adds to every daemon pod it creates (the DaemonSet docs, "Taints
 * and tolerations"); network-unavailable only for pods on the host network. */
static const struct {
    const char *key, *effect;
    bool host_network_only;
} DAEMON_TOLERATIONS[] = {
    {"node.kubernetes.io/not-ready", "NoExecute", false},
    {"node.kubernetes.io/unreachable", "NoExecute", false},
    {"node.kubernetes.io/disk-pressure", "NoSchedule", false},
    {"node.kubernetes.io/memory-pressure", "NoSchedule", false},
    {"node.kubernetes.io/pid-pressure", "NoSchedule", false},
    {"node.kubernetes.io/unschedulable", "NoSchedule", false},
    {"node.kubernetes.io/network-unavailable", "NoSchedule", true},
};

static bool taint_tolerated(const cJSON *spec, const cJSON *taint)
{
    const cJSON *tol;
    bool host_network = cJSON_IsTrue(cJSON_GetObjectItem(spec, "hostNetwork"));

    for (size_t i = 0; i < sizeof(DAEMON_TOLERATIONS) / sizeof(DAEMON_TOLERATIONS[0]); i++)
        if (str_is(taint, "key", DAEMON_TOLERATIONS[i].key) &&
            str_is(taint, "effect", DAEMON_TOLERATIONS[i].effect) &&
            (host_network || !DAEMON_TOLERATIONS[i].host_network_only))
            return true;
    cJSON_ArrayForEach(tol, cJSON_GetObjectItem(spec, "tolerations"))
    {
        if (tolerates(tol, taint))
            return true;
    }
    return false;
}

bool kube_node_runs_daemon(const cJSON *spec, const char *name, const cJSON *labels,
                           const cJSON *taints)
{
    const cJSON *taint;

    if (!selector_matches(spec, name, labels))
        return false;
    /* PreferNoSchedule only steers the scheduler; NoSchedule and NoExecute keep a pod off. */
    cJSON_ArrayForEach(taint, taints)
    {
        if ((str_is(taint, "effect", "NoSchedule") || str_is(taint, "effect", "NoExecute")) &&
            !taint_tolerated(spec, taint))
            return false;
    }
    return true;
}

/* A container's request of one resource: the request, else the limit (the API defaults a
 * missing request to the limit); -1 when it names neither. */
static int64_t container_request(const cJSON *c, bool cpu)
{
    int64_t v = qty(c, cpu ? "resources.requests.cpu" : "resources.requests.memory", cpu);
    if (v < 0)
        v = qty(c, cpu ? "resources.limits.cpu" : "resources.limits.memory", cpu);
    return v;
}

/* The pod's request of one resource, as the scheduler counts it: the containers and the
 * restartable (sidecar) init containers summed, or the largest other init container when that is
 * more, plus the overhead. *known is cleared when a container names neither request nor limit. */
static int64_t pod_request(const cJSON *spec, bool cpu, bool *known)
{
    const cJSON *c;
    int64_t sum = 0, init_max = 0;

    cJSON_ArrayForEach(c, cJSON_GetObjectItem(spec, "containers"))
    {
        int64_t v = container_request(c, cpu);
        if (v < 0)
            *known = false;
        sum += v > 0 ? v : 0;
    }
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(spec, "initContainers"))
    {
        int64_t v = container_request(c, cpu);
        if (str_is(c, "restartPolicy", "Always"))
            sum += v > 0 ? v : 0;
        else if (v > init_max)
            init_max = v;
    }
    int64_t overhead = qty(spec, cpu ? "overhead.cpu" : "overhead.memory", cpu);
    return (sum > init_max ? sum : init_max) + (overhead > 0 ? overhead : 0);
}

void kube_node_types_daemonsets(struct kube_node_types *nt, const cJSON *list)
{
    const cJSON *ds;

    cJSON_ArrayForEach(ds, cJSON_GetObjectItem(list, "items"))
    {
        const cJSON *spec = kube_path_get(ds, "spec.template.spec");
        if (!cJSON_IsObject(spec))
            continue;
        bool known = true;
        int64_t cpu = pod_request(spec, true, &known), mem = pod_request(spec, false, &known);
        if (!known && nt->ds_unknown++ == 0) {
            const char *ns = kube_path_string(ds, "metadata.namespace");
            const char *name = kube_path_string(ds, "metadata.name");
            snprintf(nt->ds_unknown_name, sizeof(nt->ds_unknown_name), "%s/%s", ns ? ns : "",
                     name ? name : "");
        }
        for (size_t i = 0; i < nt->nnodes; i++) {
            struct kube_node_row *r = &nt->nodes[i];
            if (!kube_node_runs_daemon(spec, r->name, r->labels, r->taints))
                continue;
            r->ds_cpu_m += cpu;
            r->ds_memory += mem;
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
    for (size_t i = 0; nt->nodes && i < nt->nnodes; i++) {
        cJSON_Delete(nt->nodes[i].labels);
        cJSON_Delete(nt->nodes[i].taints);
    }
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
    size_t n = 0, priced = 0, unpriced = 0, absent = 0, unlisted = 0;
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
        char clause[PROFILE_NODE_NAME_LEN + 160];
        snprintf(clause, sizeof(clause),
                 "%s %s %s CPU and %s allocatable, %s CPU and %s for DaemonSets, price %g",
                 n ? ";" : "", out[n].name, qty_format_cpu(out[n].cpu_m, b),
                 qty_format_memory(out[n].memory, m), qty_format_cpu(out[n].reserved_cpu_m, rb),
                 qty_format_memory(out[n].reserved_memory, rm), out[n].price);
        /* Every type is used; the ones past the note's room for the sentences below are counted
         * instead of described. */
        if (strlen(note) + strlen(clause) + NOTE_TAIL_ROOM < KUBE_NODES_NOTE_LEN)
            text_catf(note, KUBE_NODES_NOTE_LEN, "%s", clause);
        else
            unlisted++;
        n++;
    }
    if (unlisted)
        text_catf(note, KUBE_NODES_NOTE_LEN, "; and %zu more type%s", unlisted,
                  unlisted == 1 ? "" : "s");
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
    if (nt->ds_unknown)
        text_catf(note, KUBE_NODES_NOTE_LEN,
                  "; %u DaemonSet%s (%s%s) request%s no CPU or memory in a container, so what %s "
                  "of each node is unknown and counted as 0",
                  nt->ds_unknown, nt->ds_unknown == 1 ? "" : "s", nt->ds_unknown_name,
                  nt->ds_unknown == 1 ? "" : ", ...", nt->ds_unknown == 1 ? "s" : "",
                  nt->ds_unknown == 1 ? "it takes" : "they take");
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
    for (int page = 0; page < DS_MAX_PAGES; page++) {
        struct kube_list_opts o = {NULL, NULL, DS_PAGE, cont[0] ? cont : NULL};
        list = NULL;
        rc = kube_list(c, &DAEMONSETS, NULL, &o, &list, err);
        if (rc) {
            kube_node_types_free(&nt);
            goto unknown;
        }
        kube_node_types_daemonsets(&nt, list);
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
