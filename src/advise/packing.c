/* Cost by node packing (packing.h). */

#include "advise/packing.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor.h"
#include "advise/advisor_internal.h"
#include "core/quantity.h"
#include "profile/profile.h"

static const char *bind_name(enum packing_bind b)
{
    return b == PACKING_BIND_CPU ? "CPU" : b == PACKING_BIND_MEMORY ? "memory" : "none";
}

int packing_fit(int64_t req_cpu_m, int64_t req_memory, unsigned replicas,
                const struct packing_node *n, struct packing_fit *out, char *err)
{
    char a[QTY_LEN], b[QTY_LEN], c[QTY_LEN], d[QTY_LEN];
    const char *name = n && n->name ? n->name : "node";

    memset(out, 0, sizeof(*out));
    if (req_cpu_m <= 0 || req_memory <= 0)
        return err_set(err, -EINVAL, "packing: a pod must request CPU and memory (> 0)");
    if (replicas < 1)
        return err_set(err, -EINVAL, "packing: at least one replica");
    if (!n || n->cpu_m <= 0 || n->memory <= 0 || n->reserved_cpu_m < 0 || n->reserved_memory < 0 ||
        !(n->price >= 0))
        return err_set(err, -EINVAL,
                       "packing: node type %s: capacity > 0, reserved and price "
                       ">= 0",
                       name);
    int64_t alloc_cpu = n->cpu_m - n->reserved_cpu_m, alloc_mem = n->memory - n->reserved_memory;
    int64_t by_cpu = alloc_cpu > 0 ? alloc_cpu / req_cpu_m : 0;
    int64_t by_mem = alloc_mem > 0 ? alloc_mem / req_memory : 0;
    out->binding = by_cpu <= by_mem ? PACKING_BIND_CPU : PACKING_BIND_MEMORY;
    int64_t ppn = by_cpu <= by_mem ? by_cpu : by_mem;
    qty_format_cpu(alloc_cpu > 0 ? alloc_cpu : 0, a);
    qty_format_memory(alloc_mem > 0 ? alloc_mem : 0, b);
    qty_format_cpu(req_cpu_m, c);
    qty_format_memory(req_memory, d);
    if (ppn < 1) {
        snprintf(out->text, sizeof(out->text),
                 "a pod requesting %s CPU and %s fits no %s (%s CPU and %s allocatable): its %s "
                 "does not fit",
                 c, d, name, a, b, bind_name(out->binding));
        return 0;
    }
    if (ppn > UINT32_MAX)
        ppn = UINT32_MAX;
    out->fits = true;
    out->pods_per_node = (unsigned)ppn;
    out->nodes = replicas / out->pods_per_node + (replicas % out->pods_per_node != 0);
    out->cost = out->nodes * n->price;
    out->stranded_cpu_m = alloc_cpu - ppn * req_cpu_m;
    out->stranded_memory = alloc_mem - ppn * req_memory;
    out->stranded_cpu_share = (double)out->stranded_cpu_m / (double)alloc_cpu;
    out->stranded_memory_share = (double)out->stranded_memory / (double)alloc_mem;
    char sc[QTY_LEN], sm[QTY_LEN];
    snprintf(out->text, sizeof(out->text),
             "%s: %s CPU and %s allocatable hold %u pod%s of %s CPU and %s (%s binds); %u "
             "replica%s take %u node%s, %.4g; each full node strands %s CPU (%.0f%%) and %s "
             "(%.0f%%)",
             name, a, b, out->pods_per_node, out->pods_per_node == 1 ? "" : "s", c, d,
             bind_name(out->binding), replicas, replicas == 1 ? "" : "s", out->nodes,
             out->nodes == 1 ? "" : "s", out->cost, qty_format_cpu(out->stranded_cpu_m, sc),
             out->stranded_cpu_share * 100, qty_format_memory(out->stranded_memory, sm),
             out->stranded_memory_share * 100);
    return 0;
}

/* a is a better pick than b: cheaper, then fewer nodes. */
static bool better(const struct packing_fit *a, const struct packing_fit *b)
{
    if (a->cost != b->cost)
        return a->cost < b->cost;
    return a->nodes < b->nodes;
}

int packing_best(const struct packing_candidate *shapes, size_t ns,
                 const struct packing_node *nodes, size_t nn, struct packing_choice *out, char *err)
{
    struct packing_fit f;

    memset(out, 0, sizeof(*out));
    out->best_shape = out->best_node = out->second_shape = out->second_node = -1;
    for (size_t s = 0; s < ns; s++) {
        for (size_t k = 0; k < nn; k++) {
            int rc = packing_fit(shapes[s].req_cpu_m, shapes[s].req_memory, shapes[s].replicas,
                                 &nodes[k], &f, err);
            if (rc)
                return rc;
            if (!f.fits)
                continue;
            if (out->best_shape < 0 || better(&f, &out->best)) {
                out->second = out->best;
                out->second_shape = out->best_shape;
                out->second_node = out->best_node;
                out->best = f;
                out->best_shape = (int)s;
                out->best_node = (int)k;
            } else if (out->second_shape < 0 || better(&f, &out->second)) {
                out->second = f;
                out->second_shape = (int)s;
                out->second_node = (int)k;
            }
        }
    }
    if (out->best_shape < 0) {
        snprintf(out->text, sizeof(out->text), "no shape fits any node type");
        return 0;
    }
    int w = snprintf(out->text, sizeof(out->text), "cheapest: %s on %s",
                     shapes[out->best_shape].shape ? shapes[out->best_shape].shape : "the shape",
                     out->best.text);
    if (out->second_shape >= 0 && w > 0 && (size_t)w < sizeof(out->text))
        snprintf(out->text + w, sizeof(out->text) - (size_t)w, "; runner-up: %s on %s",
                 shapes[out->second_shape].shape ? shapes[out->second_shape].shape : "the shape",
                 out->second.text);
    return 0;
}

void packing_apply(const struct profile_node_type *nodes, size_t nn, struct advice *a)
{
    struct packing_node pn[PROFILE_MAX_NODE_TYPES];
    struct packing_choice c;
    char err[ERR_LEN];

    if (nn == 0 || a->recommended < 0)
        return;
    if (nn > PROFILE_MAX_NODE_TYPES)
        nn = PROFILE_MAX_NODE_TYPES;
    for (size_t i = 0; i < nn; i++)
        pn[i] = (struct packing_node){
            nodes[i].name,           nodes[i].cpu_m,           nodes[i].memory,
            nodes[i].reserved_cpu_m, nodes[i].reserved_memory, nodes[i].price};
    struct packing_candidate shape = {a->request_cpu_m, a->request_memory,
                                      a->replicas ? a->replicas : 1, "the recommendation"};
    if (packing_best(&shape, 1, pn, nn, &c, err) != 0) {
        advisor__finding(a, "packing: %s", err);
        return;
    }
    if (c.best_shape < 0) {
        advisor__finding(a,
                         "packing: the recommendation's pods (requests %lldm CPU, %lld MiB) fit "
                         "none of the profile's %zu node type%s",
                         (long long)a->request_cpu_m, (long long)(a->request_memory >> 20), nn,
                         nn == 1 ? "" : "s");
        return;
    }
    advisor__finding(a, "packing by requests: %s", c.text);
}
