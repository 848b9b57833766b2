/* The profile's nodes: section: the node types the app's pods may run on, each with its
 * capacity, its price per node-hour and what the app's pods cannot use of it (system reserve and
 * DaemonSets). The packing itself is the advisor's (advise/packing.c). */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/quantity.h"
#include "profile/profile_int.h"

enum { ND_NAME, ND_CPU, ND_MEMORY, ND_PRICE, ND_RESERVED, ND_N };
static const char *const nd_keys[ND_N] = {"name", "cpu", "memory", "price", "reserved"};
enum { RS_CPU, RS_MEMORY, RS_N };
static const char *const rs_keys[RS_N] = {"cpu", "memory"};

/* A CPU ("4", "3500m") or memory ("16Gi") quantity at path, > 0 unless zero_ok, at most max. */
static int get_qty(struct profile__ctx *c, const yaml_node_t *n, const char *path, bool cpu,
                   bool zero_ok, int64_t max, int64_t *out)
{
    char gotbuf[64], qerr[ERR_LEN];
    const char *t = profile__text_cstr(n);

    if (!t)
        return profile__fail(c, n, path, "expected %s, got %s",
                             cpu ? "CPU such as 4 or 3500m" : "memory such as 16Gi", GOT(n));
    if ((cpu ? qty_parse_cpu(t, out, qerr) : qty_parse_memory(t, out, qerr)) < 0)
        return profile__fail(c, n, path, "%s", qerr);
    if (!zero_ok && *out == 0)
        return profile__fail(c, n, path, "must be more than 0, got %s", GOT(n));
    if (*out > max)
        return profile__fail(c, n, path, "%s is too large", GOT(n));
    return 0;
}

static int load_reserved(struct profile__ctx *c, const yaml_node_t *map, const char *prefix,
                         struct profile_node_type *nt)
{
    char gotbuf[64], path[64];
    yaml_node_t *v[RS_N];
    int rc;

    if (!profile__is_mapping(map))
        return profile__fail(c, map, prefix,
                             "expected a mapping such as { cpu: 180m, memory: 1.1Gi }, got %s",
                             GOT(map));
    rc = profile__fields(c, map, prefix, rs_keys, RS_N, v);
    if (rc)
        return rc;
    snprintf(path, sizeof(path), "%s.cpu", prefix);
    if (v[RS_CPU] &&
        (rc = get_qty(c, v[RS_CPU], path, true, true, nt->cpu_m - 1, &nt->reserved_cpu_m)))
        return rc;
    snprintf(path, sizeof(path), "%s.memory", prefix);
    if (v[RS_MEMORY] &&
        (rc = get_qty(c, v[RS_MEMORY], path, false, true, nt->memory - 1, &nt->reserved_memory)))
        return rc;
    return 0;
}

static int load_node(struct profile__ctx *c, const yaml_node_t *map, size_t i,
                     struct profile_node_type *nt)
{
    char gotbuf[64], prefix[32], path[64];
    yaml_node_t *v[ND_N];
    int rc;

    snprintf(prefix, sizeof(prefix), "nodes[%zu]", i);
    if (!profile__is_mapping(map))
        return profile__fail(c, map, prefix,
                             "expected a mapping such as { name: m5.xlarge, cpu: 4, memory: 16Gi, "
                             "price: 0.192 }, got %s",
                             GOT(map));
    rc = profile__fields(c, map, prefix, nd_keys, ND_N, v);
    if (rc)
        return rc;
    for (int k = ND_NAME; k <= ND_PRICE; k++)
        if (!v[k])
            return profile__fail(c, map, prefix, "'%s' is required", nd_keys[k]);
    const char *name = profile__text_cstr(v[ND_NAME]);
    bool token = name && *name && strlen(name) < sizeof(nt->name);
    for (const char *q = name; token && *q; q++)
        token = *q > ' ' && *q < 0x7f && *q != '"' && *q != '\\';
    snprintf(path, sizeof(path), "%s.name", prefix);
    if (!token)
        return profile__fail(c, v[ND_NAME], path,
                             "expected a node type such as m5.xlarge (at most %d printable "
                             "characters), got %s",
                             PROFILE_NODE_NAME_LEN - 1, GOT(v[ND_NAME]));
    memcpy(nt->name, name, strlen(name) + 1);
    snprintf(path, sizeof(path), "%s.cpu", prefix);
    if ((rc = get_qty(c, v[ND_CPU], path, true, false, PROFILE_MAX_NODE_CPU_M, &nt->cpu_m)))
        return rc;
    snprintf(path, sizeof(path), "%s.memory", prefix);
    if ((rc = get_qty(c, v[ND_MEMORY], path, false, false, PROFILE_MAX_NODE_MEM, &nt->memory)))
        return rc;
    snprintf(path, sizeof(path), "%s.price", prefix);
    if ((rc = profile__get_number(c, v[ND_PRICE], path, true, PROFILE_MAX_NODE_PRICE, &nt->price)))
        return rc;
    snprintf(path, sizeof(path), "%s.reserved", prefix);
    if (v[ND_RESERVED] && (rc = load_reserved(c, v[ND_RESERVED], path, nt)))
        return rc;
    return 0;
}

int profile__load_nodes(struct profile__ctx *c, const yaml_node_t *seq, struct profile *p)
{
    char gotbuf[64];
    size_t n;

    if (profile__is_null(seq))
        return 0;
    if (seq->type != YAML_SEQUENCE_NODE)
        return profile__fail(c, seq, "nodes",
                             "expected a list of node types such as [{ name: m5.xlarge, cpu: 4, "
                             "memory: 16Gi, price: 0.192 }], got %s",
                             GOT(seq));
    n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return profile__fail(c, seq, "nodes", "empty (list the node types, or leave nodes out)");
    if (n > PROFILE_MAX_NODE_TYPES)
        return profile__fail(c, seq, "nodes", "%zu node types: at most %d", n,
                             PROFILE_MAX_NODE_TYPES);
    for (size_t i = 0; i < n; i++) {
        struct profile_node_type *nt = &p->nodes[i];
        yaml_node_t *item = profile__node(c, seq->data.sequence.items.start[i]);
        memset(nt, 0, sizeof(*nt));
        int rc = load_node(c, item, i, nt);
        if (rc) {
            p->nnodes = 0;
            return rc;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(p->nodes[k].name, nt->name) == 0) {
                p->nnodes = 0;
                return profile__fail(c, item, "nodes", "node type '%s' is listed twice", nt->name);
            }
    }
    p->nnodes = n;
    return 0;
}
